#!/bin/bash
# Install what the end-to-end tests need to run a real libvirtd + QEMU (TCG) as root
# on Debian 12: no systemd as PID 1, no /dev/kvm. Idempotent and quiet; safe to rerun.
set -euo pipefail

# busybox-static: the shell of the busy guests' initramfs (tests/e2e/heal.sh); it also writes the cpio.
# gdb: stops placementd between a domain's pins and its record (tests/e2e/ledger.sh, scenario 15).
PKGS=(libvirt-daemon libvirt-daemon-driver-qemu qemu-system-x86 libvirt-clients busybox-static gdb)
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
# is reported and not fatal. From the same package, since a module loads only into the kernel it was built
# with: the virtio-mem driver and the modules it needs, which tests/e2e/virtio-mem.sh's guest loads (the
# cloud kernel builds them as modules, CONFIG_VIRTIO_MEM=m and CONFIG_VIRTIO_PCI=m). Without them only that
# test skips.
GUEST_MODULES=(virtio_mem virtio_pci) # virtio_pci: the transport of QEMU's virtio-mem-pci
GUEST_MODULE_DIR=$GUEST_KERNEL_DIR/modules

# ko_depends FILE: the modules FILE needs, one a line: its .modinfo "depends=" (what `modinfo -F depends`
# prints; read without kmod, which is not installed here).
ko_depends() { tr '\0' '\n' <"$1" | sed -n 's/^depends=//p' | tr ',' '\n' | sed '/^$/d'; }

# add_module NAME: NAME after the modules it depends on, into the caller's ORDER (SEEN, KO: of guest_modules).
add_module() {
    local dep
    [ -z "${SEEN[$1]:-}" ] || return 0
    [ -n "${KO[$1]:-}" ] || { echo "install-e2e-deps: guest module $1 is not in the package" >&2; return 1; }
    SEEN[$1]=1
    for dep in $(ko_depends "${KO[$1]}"); do add_module "$dep" || return 1; done
    ORDER+=("$1")
}

# guest_modules DEB: GUEST_MODULES and what they depend on, from DEB into GUEST_MODULE_DIR: the .ko files,
# "order" (their load order, dependencies first) and "release" (the kernel release they were built for).
guest_modules() {
    local tmp rel f m rc=1
    local -A KO=() SEEN=()
    local -a ORDER=() files=()
    tmp=$(mktemp -d) || return 1
    if dpkg-deb --fsys-tarfile "$1" | tar -x -C "$tmp" --wildcards './lib/modules/*/kernel/drivers/virtio/*'; then
        for rel in "$tmp"/lib/modules/*; do
            while IFS= read -r f; do KO[$(basename "$f" .ko)]=$f; done < <(find "$rel/kernel" -name '*.ko')
            rel=${rel##*/}
            break
        done
        for m in "${GUEST_MODULES[@]}"; do add_module "$m" || { ORDER=(); break; }; done
        for m in "${ORDER[@]}"; do files+=("${KO[$m]}"); done
        if [ "${#files[@]}" -gt 0 ]; then
            rm -rf "$GUEST_MODULE_DIR.new" && mkdir -p "$GUEST_MODULE_DIR.new" &&
                cp "${files[@]}" "$GUEST_MODULE_DIR.new/" &&
                printf '%s\n' "${ORDER[@]}" >"$GUEST_MODULE_DIR.new/order" &&
                echo "$rel" >"$GUEST_MODULE_DIR.new/release" &&
                rm -rf "$GUEST_MODULE_DIR" && mv "$GUEST_MODULE_DIR.new" "$GUEST_MODULE_DIR" && rc=0
        fi
    fi
    rm -rf "$tmp" "$GUEST_MODULE_DIR.new"
    return $rc
}

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
    if [ "$rc" -eq 0 ] && ! guest_modules "$tmp"/"$pkg"_*.deb; then
        rm -rf "$GUEST_MODULE_DIR" # none rather than another release's
        echo "install-e2e-deps: no virtio-mem modules for the guest kernel in $GUEST_MODULE_DIR" >&2
    fi
    rm -rf "$tmp"
    return $rc
}
# A cache from before the modules were unpacked is fetched again, the kernel too: both of one release.
if [ ! -s "$GUEST_KERNEL_DIR/vmlinuz" ] || [ ! -s "$GUEST_MODULE_DIR/order" ]; then
    mkdir -p "$GUEST_KERNEL_DIR"
    guest_kernel || echo "install-e2e-deps: no guest kernel in $GUEST_KERNEL_DIR (linux-image-cloud-amd64 not downloadable)" >&2
fi
