#!/bin/bash
# What the metrics test needs: curl as the scraper, Prometheus's promtool to validate the text, and ip
# (iproute2) to bring up an address and a network namespace of its own (without it those checks are left
# out, not failed).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-metrics-deps curl prometheus iproute2
