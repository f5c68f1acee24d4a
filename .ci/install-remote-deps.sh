#!/bin/bash
# What the remote test needs: an sshd to reach and the ssh client placementctl -H runs (sd-bus starts
# "ssh -xT HOST systemd-stdio-bridge"; the bridge comes with systemd).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-remote-deps openssh-server openssh-client
