#!/bin/bash
# Installs what building placementd and running its unit tests and format checks need on Debian 12.
# Idempotent.
set -euo pipefail

packages=(meson ninja-build pkg-config gcc libvirt-dev libhwloc-dev libevent-dev libglib2.0-dev
          libjson-glib-dev libsystemd-dev check hwloc dbus libvirt-clients systemd valgrind clang-format
          shellcheck)

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
