#!/bin/bash
# What the polkit test needs: polkitd (the authority, with its D-Bus service policy) and dbus-daemon with the
# system bus configuration it is started with. No systemd: the test starts both itself.
set -euo pipefail
missing=()
for p in polkitd dbus-daemon dbus-system-bus-common util-linux; do
        dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
if ((${#missing[@]})); then
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
                { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
