#!/bin/bash
# Install what the end-to-end tests need to run a real libvirtd + QEMU (TCG) as root
# on Debian 12: no systemd as PID 1, no /dev/kvm. Idempotent and quiet; safe to rerun.
set -euo pipefail

# busybox-static: the shell of the busy guests' initramfs (tests/e2e/heal.sh); it also writes the cpio.
PKGS=(libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86 libvirt-clients busybox-static)
# A kernel for guests that really run (tests/e2e/heal.sh): Debian's cloud kernel, unpacked into this cache
# rather than installed, so that no initramfs is generated for this machine and /boot stays as it is.
GUEST_KERNEL_DIR=/var/cache/placementd-e2e

if [ "$(id -u)" -ne 0 ]; then
    echo "install-e2e-deps: must run as root" >&2
    exit 1
fi
# shellcheck source-path=SCRIPTDIR source=apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install_missing install-e2e-deps "${PKGS[@]}"

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

# The guest kernel: the image package linux-image-cloud-amd64 points at, downloaded and unpacked. Without
# it only the busy-guest part of tests/e2e/heal.sh cannot run (it skips, saying why), so a failure here
# is reported and not fatal.
guest_kernel() {
    local pkg tmp
    pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ && !p {print $2; p = 1}')
    if [ -z "$pkg" ]; then
        apt-get -qq update || return 1
        pkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-[0-9]/ && !p {print $2; p = 1}')
    fi
    [ -n "$pkg" ] || return 1
    tmp=$(mktemp -d) || return 1
    chmod 755 "$tmp" # apt's download user writes there
    (cd "$tmp" && apt-get -qq download "$pkg" >/dev/null 2>&1) &&
        dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$tmp" --wildcards './boot/vmlinuz-*' &&
        mv "$tmp"/boot/vmlinuz-* "$GUEST_KERNEL_DIR/vmlinuz.new" &&
        mv "$GUEST_KERNEL_DIR/vmlinuz.new" "$GUEST_KERNEL_DIR/vmlinuz"
    local rc=$?
    rm -rf "$tmp"
    return $rc
}
if [ ! -s "$GUEST_KERNEL_DIR/vmlinuz" ]; then
    mkdir -p "$GUEST_KERNEL_DIR"
    guest_kernel || echo "install-e2e-deps: no guest kernel in $GUEST_KERNEL_DIR (linux-image-cloud-amd64 not downloadable)" >&2
fi
