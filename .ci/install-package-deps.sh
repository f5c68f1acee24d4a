#!/bin/bash
# Installs what building, checking and installing the Debian package needs on Debian 12 (debhelper,
# dpkg-dev, lintian and the package's Build-Depends), bash-completion for the completion test, and man
# (man-db), with which systemd-analyze verify checks that the unit's Documentation=man: pages are installed
# (without it the package test verifies the unit with --man=no).
# Idempotent and quiet; apt-get update runs only when a package is missing.
set -euo pipefail

packages=(debhelper dpkg-dev fakeroot lintian build-essential bash-completion man-db
          meson ninja-build pkg-config systemd libvirt-dev libhwloc-dev libevent-dev libglib2.0-dev
          libjson-glib-dev libsystemd-dev check)

# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-package-deps "${packages[@]}"
