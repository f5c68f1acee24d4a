#!/bin/bash
# What the polkit test needs: polkitd (the authority, with its D-Bus service policy) and dbus-daemon with the
# system bus configuration it is started with. No systemd: the test starts both itself.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-polkit-deps polkitd dbus-daemon dbus-system-bus-common util-linux
