#!/bin/bash
# Installs what building placementd and running its unit tests and format checks need on Debian 12.
# Idempotent.
set -euo pipefail

packages=(meson ninja-build pkg-config gcc libvirt-dev libhwloc-dev libevent-dev libglib2.0-dev
          libjson-glib-dev libsystemd-dev check hwloc dbus libvirt-clients systemd valgrind clang-format
          shellcheck)

# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-deps "${packages[@]}"
