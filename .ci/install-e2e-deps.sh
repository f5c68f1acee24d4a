#!/bin/bash
# Install what the end-to-end tests need to run a real libvirtd + QEMU (TCG) as root
# on Debian 12: no systemd as PID 1, no /dev/kvm. Idempotent and quiet; safe to rerun.
set -euo pipefail

PKGS=(libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86 libvirt-clients)

if [ "$(id -u)" -ne 0 ]; then
    echo "install-e2e-deps: must run as root" >&2
    exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = installed ] || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt_get() { apt-get -qq -o=Dpkg::Use-Pty=0 "$@"; }
    # Refresh the package lists only when they are absent or cannot resolve a package we need.
    need_update=0
    ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || need_update=1   # may be .lz4-compressed
    if [ "$need_update" = 0 ]; then
        for p in "${missing[@]}"; do
            apt-cache show "$p" >/dev/null 2>&1 || { need_update=1; break; }
        done
    fi
    if [ "$need_update" = 1 ]; then
        apt_get update
    fi
    # A stale list can point at files the mirror has dropped: retry once after an update.
    if ! apt_get install -y --no-install-recommends "${missing[@]}" >/dev/null; then
        apt_get update
        apt_get install -y --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

# libvirtd (9.0) resolves its compiled-in QEMU user "libvirt-qemu" at start-up, before qemu.conf is read,
# and refuses to start the QEMU driver without it, even with user = "root" in qemu.conf.
# libvirt-daemon-system would create it; we do not install that package (it pulls in systemd units etc.).
if ! getent passwd libvirt-qemu >/dev/null; then
    if getent group libvirt-qemu >/dev/null; then
        useradd -r -M -d /var/lib/libvirt -s /usr/sbin/nologin -g libvirt-qemu libvirt-qemu
    else
        useradd -r -M -d /var/lib/libvirt -s /usr/sbin/nologin -U libvirt-qemu
    fi
fi
