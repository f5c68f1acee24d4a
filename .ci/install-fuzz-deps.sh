#!/bin/bash
# Installs what tests/fuzz needs on Debian 12: clang 14 and its compiler-rt (libFuzzer, ASan, UBSan runtimes),
# on top of the build dependencies (.ci/install-deps.sh). Idempotent and quiet; apt-get update runs only
# when a package is missing.
set -euo pipefail

packages=(clang libclang-rt-14-dev pkg-config libvirt-dev libhwloc-dev libevent-dev libglib2.0-dev
          libjson-glib-dev libsystemd-dev)

# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-fuzz-deps "${packages[@]}"

# clang 14 finds libFuzzer in compiler-rt: fail here, not in the middle of the build.
rt=$(clang -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a
if [ ! -e "$rt" ]; then
        echo "install-fuzz-deps: $rt is missing (libclang-rt-14-dev)" >&2
        exit 1
fi
