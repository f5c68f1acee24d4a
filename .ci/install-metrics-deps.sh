#!/bin/bash
# What the metrics test needs: curl as the scraper, and Prometheus's promtool to validate the text.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-metrics-deps curl prometheus
