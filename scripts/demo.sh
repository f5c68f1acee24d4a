#!/bin/bash
# Sets up what is missing, builds, and runs placementd's main job on an embedded default: the daemon,
# connected to libvirt's in-process test driver, places a short scripted workload of domain starts and
# stops on an example host (2 sockets x 2 cores x 2 threads), printing each decision as it happens and
# the host map at the end. No hypervisor and no root needed (beyond installing packages).
set -euo pipefail
cd "$(dirname "$0")/.."

# As root it installs what is missing. A user needs neither sudo nor a password while nothing is
# missing (a machine without sudo included), and sudo only to install what is; without sudo,
# install-deps.sh names what root must install.
if [ "$(id -u)" -eq 0 ]; then
        bash .ci/install-deps.sh
elif command -v sudo >/dev/null; then
        bash .ci/install-deps.sh 2>/dev/null || sudo bash .ci/install-deps.sh
else
        bash .ci/install-deps.sh
fi
# the options tests/run-all.sh builds with, so that either command reuses the other's build directory
[ -f build/build.ninja ] || meson setup build -Dwerror=true -Dbuildtype=debugoptimized >/dev/null
ninja -C build >/dev/null
exec ./build/daemon/placementd --config=conf/placementd.conf --log-level=warning \
        --connect="test://$PWD/docs/examples/test-host.xml" \
        --topology="synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:2 pu:2" \
        --demo=docs/examples/workload.trace "$@"
