#!/bin/bash
# What the metrics test needs: curl as the scraper, and Prometheus's promtool to validate the text.
set -euo pipefail
missing=()
for p in curl prometheus; do
        dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
if ((${#missing[@]})); then
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
                { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
