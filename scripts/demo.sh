#!/bin/bash
# Sets up what is missing, builds, and runs placementd's main job on an embedded default:
# the example workload placed on the example host, printing each decision and the host map.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO bash .ci/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
exec ./build/tools/placementctl plan --topology="synthetic:pack:2 numa:1(memory=32GiB) l3:1 core:8 pu:2" \
        --trace=docs/examples/workload.trace "$@"
