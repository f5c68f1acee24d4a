#!/bin/bash
# What the remote test needs: an sshd to reach and the ssh client placementctl -H runs (sd-bus starts
# "ssh -xT HOST systemd-stdio-bridge"; the bridge comes with systemd).
set -euo pipefail
missing=()
for p in openssh-server openssh-client; do
        dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
if ((${#missing[@]})); then
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
                { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
