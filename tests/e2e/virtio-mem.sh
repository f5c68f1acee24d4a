#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# A virtio-mem device whose guest really plugs and unplugs memory, on a real libvirtd + QEMU (TCG). Run as
# root:
#   flock /tmp/placementd-e2e.lock bash tests/e2e/virtio-mem.sh [BUILD_DIR]
# QEMU reports a virtio-mem device's new size only when the guest's driver plugs or unplugs blocks, so the
# guest boots Debian's cloud kernel with a busybox initramfs that loads the virtio-mem driver (a module of
# that kernel) and onlines what it plugs as movable memory (memhp_default_state=online_movable), so that it
# can be unplugged again. The guest: 1 vCPU, 256 MiB of boot memory in guest cell 0 and a virtio-mem device
# of 512 MiB in that cell, nothing requested. placementd counts a virtio-mem device at the larger of its
# <requested> and <current> size, and is told of a plug or an unplug by libvirt's memory-device size-change
# event (ReconcileSec=0 here: no periodic reconcile would catch it instead). The daemon sees a fake host of one
# node of two cores whose CPUs are the machine's, so its pins and its memory binding are real.
#   1. at its start the guest is counted at its boot memory, 256 MiB (placementctl and the record);
#   2. virsh update-memory-device --requested-size 256MiB: the guest plugs it (the live XML's <current>),
#      the daemon reads the event (log "device ... added or removed"), places the guest again ("... KiB of
#      memory, its decision counts ... KiB: placing it again") and counts 512 MiB;
#   3. --requested-size 0: the guest unplugs it, the count falls back to 256 MiB the same way;
#   4. the guest plugs 256 MiB while placementd is stopped: started again, it counts 512 MiB (its record,
#      of 256 MiB, is not adopted as it stands);
#   5. restarted again, it adopts that record (512 MiB) and places nothing again.
# After each step the four views (views.sh: placementctl, the record, libvirt --live, /proc) agree, and after
# 2 and 3 the guest keeps what it was asked for (a re-placement does not undo the plug). About 30 s; prints
# how long the checks took.
# Exits 77 (skip) when the guest kernel, its virtio-mem modules (.ci/install-e2e-deps.sh unpacks both) or a
# static busybox is missing, or when this is not root. Last line: "e2e-virtio-mem: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=views.sh
. "$HERE/views.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"
KERNEL=${VMEM_GUEST_KERNEL:-/var/cache/placementd-e2e/vmlinuz}
MODULES=${VMEM_GUEST_MODULES:-/var/cache/placementd-e2e/modules}
BUSYBOX=${VMEM_BUSYBOX:-/bin/busybox}
WAIT_BOOT=${VMEM_WAIT_BOOT:-60} # seconds for the guest to boot and load the driver (TCG on a shared machine)
WAIT_PLUG=${VMEM_WAIT_PLUG:-30} # seconds for the guest to plug or unplug what it is asked
TOPO='synthetic:pack:1 numa:1(memory=2GiB) core:2 pu:1' # node 0 (the machine's), CPUs 0 and 1
D=${E2E_DOMAIN_PREFIX}vmem
MIB=1048576
BOOT_MIB=256 DEVICE_MIB=512 PLUG_MIB=256

need_root "a real libvirtd"
RELEASE=$(cat "$MODULES/release" 2>/dev/null)
if [ ! -s "$KERNEL" ] || ! "$BUSYBOX" true 2>/dev/null; then
    tap_skip "no guest kernel at $KERNEL or no static busybox at $BUSYBOX (.ci/install-e2e-deps.sh)"
fi
if [ ! -s "$MODULES/order" ] || [ ! -s "$MODULES/virtio_mem.ko" ] || [ -z "$RELEASE" ]; then
    tap_skip "no virtio-mem modules for the guest kernel in $MODULES (.ci/install-e2e-deps.sh)"
fi
if ! grep -aqF "$RELEASE (" "$KERNEL"; then
    tap_skip "the modules in $MODULES are of $RELEASE, not of the kernel $KERNEL (.ci/install-e2e-deps.sh)"
fi

e2e_suite_begin e2e-virtio-mem
CONSOLE=$WORK/console.log
tap_log "$CONSOLE"

tap_cleanup() {
    pd_stop
    pd_reap_strays 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    pd_bus_stop
}

# The guest: busybox, the modules and an init that loads them, says whether the driver took the device,
# and then says the guest's memory each time it changes.
make_guest() {
    local root=$WORK/initramfs m
    mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/modules" || return 1
    cp "$BUSYBOX" "$root/bin/busybox" || return 1
    while IFS= read -r m; do cp "$MODULES/$m.ko" "$root/modules/" || return 1; done <"$MODULES/order"
    cp "$MODULES/order" "$root/modules/order" || return 1
    cat >"$root/init" <<'EOF'
#!/bin/busybox sh
b=/bin/busybox
$b mount -t proc proc /proc
$b mount -t sysfs sysfs /sys
for m in $($b cat /modules/order); do
        $b insmod "/modules/$m.ko" || echo "init: insmod $m failed"
done
if $b ls /sys/bus/virtio/drivers/virtio_mem/ | $b grep -q '^virtio'; then
        echo "init: the virtio_mem driver has its device"
else
        echo "init: no virtio_mem device"
fi
last=
while :; do
        t=$($b grep MemTotal /proc/meminfo)
        [ "$t" = "$last" ] || echo "init: $t"
        last=$t
        $b sleep 1
done
EOF
    chmod 755 "$root/init"
    (cd "$root" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) >"$WORK/guest.cpio" || return 1
    # the template of e2e_domain_start: a guest cell (virtio-mem plugs into one) and <maxMemory>, which
    # a memory device needs; libvirt's <memory> becomes the cell's plus the device's whole size
    cat >"$WORK/guest.xml.in" <<EOF
<domain type='qemu'>
  <name>@NAME@</name>
  <maxMemory slots='1' unit='MiB'>$((BOOT_MIB + DEVICE_MIB))</maxMemory>
  <memory unit='MiB'>$BOOT_MIB</memory>
  <currentMemory unit='MiB'>$BOOT_MIB</currentMemory>
  <vcpu placement='static'>@VCPUS@</vcpu>
  <os>
    <type arch='x86_64'>hvm</type>
    <kernel>$KERNEL</kernel>
    <initrd>$WORK/guest.cpio</initrd>
    <cmdline>console=ttyS0 quiet panic=-1 memhp_default_state=online_movable</cmdline>
  </os>
  <features><acpi/></features>
  <cpu><numa><cell id='0' cpus='0' memory='$BOOT_MIB' unit='MiB'/></numa></cpu>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <serial type='file'><source path='$CONSOLE'/><target port='0'/></serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
    <memory model='virtio-mem'>
      <target>
        <size unit='MiB'>$DEVICE_MIB</size>
        <node>0</node>
        <block unit='MiB'>2</block>
        <requested unit='MiB'>0</requested>
      </target>
    </memory>
  </devices>
</domain>
EOF
}

# vmem_field FIELD: the virtio-mem device's <target><FIELD> (requested, current) in the live XML, in KiB
# (libvirt writes sizes there in KiB); vmem_field alias: its alias.
vmem_field() {
    local xml
    xml=$(e2e_virsh dumpxml "$D" 2>/dev/null) || return 1
    if [ "$1" = alias ]; then
        grep -oE "<alias name='virtiomem[0-9]+'" <<<"$xml" | head -n 1 | cut -d"'" -f2
    else
        sed -nE "s|.*<$1 unit='KiB'>([0-9]+)</$1>.*|\1|p" <<<"$xml" | head -n 1
    fi
}
current_is() { [ "$(vmem_field current)" = "$1" ]; } # KIB

# ctl_memory: the memory placementctl says the guest's decision counts, in bytes.
ctl_memory() {
    pdctl show "$D" --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
for d in (j.get("decisions", []) if isinstance(j, dict) else j):
    if d.get("domain") == sys.argv[1]:
        print(d.get("memory"))' "$D"
}
# record_memory: the memory the record in its metadata counts, in bytes (the sum of its <memory bytes=>).
record_memory() {
    pd_meta "$D" | grep -oE "<([A-Za-z0-9_]+:)?memory [^>]*>" |
        sed -nE "s/.*bytes=[\"']([0-9]+)[\"'].*/\1/p" | awk '{ n += $1 } END { print n + 0 }'
}
counted_is() { [ "$(ctl_memory)" = "$1" ] && [ "$(record_memory)" = "$1" ]; } # BYTES

guest_says() { grep -qF -- "$1" "$CONSOLE" 2>/dev/null; }
guest_memtotal() { sed -n 's/^init: MemTotal: *//p' "$CONSOLE" 2>/dev/null | tail -n 1; }

# views_agree STEP: the four views agree (views_settle: polled up to 4 s), the disagreement said if not.
views_agree() {
    local out
    if out=$(views_settle 40 views); then # one domain: no sharing to count
        ok "$1: placementctl, the record, libvirt and /proc agree"
    else
        not_ok "$1: placementctl, the record, libvirt and /proc agree"
    fi
    [ -z "$out" ] || diag "$out"
}

# resize STEP KIB: ask the guest for KIB of its device and check that it plugs them and that placementd
# follows: the event in its log, the guest placed again, BOOT + KIB counted, the views equal.
resize() {
    local step=$1 kib=$2 mark t0 ms want
    want=$((BOOT_MIB * MIB + kib * 1024))
    mark=$(pd_log_mark)
    t0=$(date +%s%N)
    diag "$step at $(elapsed) s"
    check "$step: virsh update-memory-device $D --live --requested-size ${kib}KiB" \
        e2e_virsh -q update-memory-device "$D" --live --requested-size "${kib}KiB"
    if wait_for "$WAIT_PLUG" current_is "$kib"; then
        ms=$((($(date +%s%N) - t0) / 1000000))
        ok "$step: the guest holds ${kib} KiB of the device within $ms ms (the live XML's <current>)"
    else
        not_ok "$step: the guest holds ${kib} KiB of the device (the live XML's <current> is $(vmem_field current))"
    fi
    check "$step: placementd read libvirt's size-change event (log \"$D: device $ALIAS added or removed\")" \
        wait_for 5 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -qF '$D: device $ALIAS added or removed'"
    check "$step: placementd placed $D again for its new memory (log \"its decision counts\")" \
        wait_for 5 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -qE '$D: [0-9]+ KiB of memory, its decision counts [0-9]+ KiB: placing it again'"
    if wait_for 10 counted_is "$want"; then
        ok "$step: placementctl and the record count $((want / MIB)) MiB"
    else
        not_ok "$step: placementctl and the record count $((want / MIB)) MiB (placementctl $(ctl_memory), record $(record_memory) bytes)"
    fi
    views_agree "$step"
    check "$step: the guest still holds what it was asked for (requested $(vmem_field requested), current $(vmem_field current) KiB)" \
        test "$(vmem_field requested)" = "$kib" -a "$(vmem_field current)" = "$kib"
    diag "$step: the guest's own MemTotal is now $(guest_memtotal)"
    diag "$(pd_log_since "$mark" | grep -F -- "$D" | sed 's/^/log: /')"
}

# ------------------------------------------------------------------------------------------------ the run

must "the guest's initramfs (busybox, $(paste -sd' ' "$MODULES/order") of $RELEASE) and domain template" make_guest
if ! e2e_libvirt_start "$WORK" >"$WORK/start.out" 2>&1; then
    not_ok "libvirtd starts ($(elapsed) s)"
    diag "$(cat "$WORK/start.out")"
    exit 1
fi
ok "libvirtd starts ($(elapsed) s)"
if ! pd_env_init "$BUILD" "$WORK" || ! pd_bus_start; then
    not_ok "private bus"
    exit 1
fi
must "placementd starts on $TOPO (ReconcileSec=0: events only)" pd_start "$TOPO"
must "views_init $TOPO" views_init "$TOPO"

# 1. the guest starts: counted at its boot memory, nothing of the device plugged
mark=$(pd_log_mark)
start_guest() { E2E_DOMAIN_TEMPLATE=$WORK/guest.xml.in e2e_domain_start "$D" 1; }
must "$D starts (1 vCPU, ${BOOT_MIB} MiB in cell 0, a ${DEVICE_MIB} MiB virtio-mem device, nothing requested)" start_guest
ALIAS=$(vmem_field alias)
check "$D: decision recorded" wait_for 10 pd_decided "$D"
diag "$D: $(pd_decision "$D")"
if wait_for "$WAIT_BOOT" guest_says "init: the virtio_mem driver has its device"; then
    ok "the guest booted and its virtio_mem driver took the device (alias ${ALIAS:-?}) in $(elapsed) s"
else
    not_ok "the guest booted and its virtio_mem driver took the device (alias ${ALIAS:-?})"
    diag "$(tail -n 20 "$CONSOLE" 2>/dev/null)"
fi
diag "the guest's MemTotal at boot: $(guest_memtotal)"
expect "$D: nothing plugged at the start (live XML <requested> <current>, KiB)" "0 0" \
    "$(vmem_field requested) $(vmem_field current)"
if wait_for 5 counted_is $((BOOT_MIB * MIB)); then
    ok "1. placementctl and the record count its boot memory, $BOOT_MIB MiB"
else
    not_ok "1. placementctl and the record count its boot memory, $BOOT_MIB MiB (placementctl $(ctl_memory), record $(record_memory) bytes)"
fi
views_agree "1. start"
diag "$(pd_log_since "$mark" | grep -F -- "$D" | sed 's/^/log: /')"

# 2. plug, 3. unplug
resize "2. plug" $((PLUG_MIB * 1024))
resize "3. unplug" 0

# 4. the guest plugs while placementd is down: started again, it counts what the guest holds now, not what
#    its record says (the record is of 256 MiB; it is placed anew or adopted and placed again, either way)
diag "4. plug while placementd is down at $(elapsed) s"
pd_stop
expect "4. placementd stops (SIGTERM)" 0 "$PD_RC"
check "4. virsh update-memory-device $D --live --requested-size $((PLUG_MIB * 1024))KiB" \
    e2e_virsh -q update-memory-device "$D" --live --requested-size "$((PLUG_MIB * 1024))KiB"
check "4. the guest holds $((PLUG_MIB * 1024)) KiB of the device (the live XML's <current>)" \
    wait_for "$WAIT_PLUG" current_is $((PLUG_MIB * 1024))
mark=$(pd_log_mark)
must "4. placementd starts again" pd_start "$TOPO"
if wait_for 10 counted_is $(((BOOT_MIB + PLUG_MIB) * MIB)); then
    ok "4. placementctl and the record count $((BOOT_MIB + PLUG_MIB)) MiB, what the guest holds"
else
    not_ok "4. placementctl and the record count $((BOOT_MIB + PLUG_MIB)) MiB, what the guest holds (placementctl $(ctl_memory), record $(record_memory) bytes)"
fi
views_agree "4. restart after a plug"
diag "$(pd_log_since "$mark" | grep -F -- "$D" | sed 's/^/log: /')"

# 5. restarted again while the memory is plugged: the record (of 512 MiB) is adopted as it stands
diag "5. restart at $(elapsed) s"
pd_stop
mark=$(pd_log_mark)
must "5. placementd starts again" pd_start "$TOPO"
check "5. $D: its record adopted (log \"$D: adopted from its record ...\")" \
    wait_for 10 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -F '$D: ' | grep -qF ': adopted from its record '"
check "5. $D: not placed again" sh -c "! tail -n +$((mark + 1)) '$PD_LOG' | grep -qE '$D: .*(placing it again|placing it anew)'"
check "5. placementctl and the record still count $((BOOT_MIB + PLUG_MIB)) MiB" counted_is $(((BOOT_MIB + PLUG_MIB) * MIB))
views_agree "5. restart"
diag "$(pd_log_since "$mark" | grep -F -- "$D" | sed 's/^/log: /')"

check "placementd still runs" pd_alive
diag "the checks took $(elapsed) s; stopping the guest, placementd and libvirtd"
exit 0
