#!/bin/bash
# Installs what tests/fuzz needs on Debian 12: clang 14 and its compiler-rt (libFuzzer, ASan, UBSan runtimes),
# on top of the build dependencies (.ci/install-deps.sh). Idempotent and quiet; apt-get update runs only
# when a package is missing.
set -euo pipefail

packages=(clang libclang-rt-14-dev pkg-config libvirt-dev libhwloc-dev libevent-dev libglib2.0-dev
          libjson-glib-dev libsystemd-dev)

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
        if [ "$(id -u)" -ne 0 ]; then
                echo "install-fuzz-deps: missing ${missing[*]}; run as root to install them" >&2
                exit 1
        fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# clang 14 finds libFuzzer in compiler-rt: fail here, not in the middle of the build.
rt=$(clang -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a
if [ ! -e "$rt" ]; then
        echo "install-fuzz-deps: $rt is missing (libclang-rt-14-dev)" >&2
        exit 1
fi
