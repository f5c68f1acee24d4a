#!/bin/bash
# Installs what building, checking and installing the Debian package needs on Debian 12 (debhelper,
# dpkg-dev, lintian and the package's Build-Depends), and bash-completion for the completion test.
# Idempotent and quiet; apt-get update runs only when a package is missing.
set -euo pipefail

packages=(debhelper dpkg-dev fakeroot lintian build-essential bash-completion
          meson ninja-build pkg-config systemd libvirt-dev libhwloc-dev libevent-dev libglib2.0-dev
          libjson-glib-dev libsystemd-dev check)

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
        if [ "$(id -u)" -ne 0 ]; then
                echo "install-package-deps: must run as root to install: ${missing[*]}" >&2
                exit 1
        fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
