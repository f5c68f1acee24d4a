#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# End-to-end test of the domain's own constraints against a real libvirtd + QEMU (TCG). Run as root:
#   bash tests/e2e/constraints.sh [BUILD_DIR]
# The daemon sees a fake host of two nodes whose CPUs are the real ones (CPU 0 on node 0, CPU 1 on node 1),
# so every pin is real. Checked against /proc, libvirt and the recorded decision:
#   1. <vcpu cpuset='1'>: placed on CPU 1 although node 0 is idle.
#   2. <numatune><memory mode='strict' nodeset='0'> while node 0's core is taken: the vCPU takes node 1's free
#      core rather than share (a binding confines memory, not vCPUs); the binding is left as it is ("kept")
#      and the memory stays on node 0.
#   3. <cputune><emulatorpin cpuset='1'>: the emulator stays on CPU 1.
#   4. Memory bound by placementd's first placement cannot follow (libvirt refuses a second nodeset change in
#      strict mode): placementctl replace keeps the vCPUs on the node that holds the memory, which has a
#      core for them.
#   5. A domain whose XML placementd cannot read (an I/O thread id above 8192) is counted as it runs: the next
#      domain does not take its CPU.
# Prints "ok N - ..." / "not ok N - ...", and last "e2e-constraints: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"
TOPOLOGY='synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1'
P=${E2E_DOMAIN_PREFIX}

e2e_suite_begin e2e-constraints
LOG=$PD_LOG

vcpu0() { e2e_vcpu_affinity "$1" | awk '$1 == 0 { print $2 }'; }
mems() { awk '/^Mems_allowed_list/ { print $2 }' "/proc/$(e2e_qemu_pid "$1")/status"; }
live_nodeset() { e2e_virsh numatune "$1" --live | awk '/numa_nodeset/ { print $3 }'; }
ctl() { "$PLACEMENTCTL" --bus-address="unix:path=$WORK/bus" "$@"; }

# start NAME SNIPPET VCPU_ATTRS [persistent]: a 1-vCPU domain from the e2e template, SNIPPET before <os>;
# transient unless the fourth argument is given (then defined first, and undefined again by finish).
start() {
    sed -e "s/@NAME@/$1/g" -e "s/@VCPUS@/1/g" -e "s|<vcpu placement='static'>|<vcpu placement='static'$3>|" \
        -e "s|<os>|$2<os>|" "$E2E_DOMAIN_TEMPLATE" >"$WORK/$1.xml"
    if [ -n "${4:-}" ]; then
        DEFINED="$DEFINED $1"
        e2e_virsh define "$WORK/$1.xml" >/dev/null && e2e_virsh start "$1" >/dev/null
    else
        e2e_virsh create "$WORK/$1.xml" >/dev/null
    fi
}
DEFINED=

tap_cleanup() {
    local d
    stop_pid "$PD_PID"
    bus_stop
    for d in $DEFINED; do e2e_virsh undefine "$d" >/dev/null 2>&1; done
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
}

must "built binaries in $BUILD" test -x "$PLACEMENTD" -a -x "$PLACEMENTCTL"
must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
must "private dbus-daemon" bus_start "$WORK"
printf '[Placement]\nReconcileSec=0\n\n[Libvirt]\nURI=%s\n' "$E2E_LIBVIRT_URI" >"$WORK/placementd.conf"
placementd_start --config="$WORK/placementd.conf" --topology="$TOPOLOGY" --bus-address="$BUS_ADDR" \
    --log-level=debug
must "placementd connects" wait_for 30 grep -q "Connected to" "$LOG"
must "placementd serves org.placementd1 on the private bus" wait_for 20 bus_has org.placementd1

# 1. <vcpu cpuset>: node 0 is idle, yet the domain may only run on CPU 1 (node 1).
must "start ${P}cpuset with <vcpu cpuset='1'>" start "${P}cpuset" "" " cpuset='1'"
check "${P}cpuset: decision recorded" wait_for 10 pd_decided "${P}cpuset"
expect "${P}cpuset: placed on node 1" "placed 1" "$(pd_attr result "$(pd_decision "${P}cpuset")") $(pd_attr nodes "$(pd_decision "${P}cpuset")")"
expect "${P}cpuset: vCPU 0 runs on CPU 1 (/proc)" "1" "$(vcpu0 "${P}cpuset")"
check "${P}cpuset: the reason names the cpuset" sh -c "grep -q \"kept inside <vcpu cpuset='1'>\" '$LOG'"
must "destroy ${P}cpuset" e2e_domain_destroy "${P}cpuset"

# 2. placementd's own first binding: ${P}bound lands on node 0 (first node) and binds its memory there.
#    Persistent: its definition, unlike a transient domain's live XML, does not show placementd's own pins.
must "define and start ${P}bound" start "${P}bound" "" "" persistent
check "${P}bound: decision recorded" wait_for 10 pd_decided "${P}bound"
expect "${P}bound: on node 0, memory bound live by placementd" "0 applied 0" \
    "$(pd_attr nodes "$(pd_decision "${P}bound")") $(pd_attr memory-binding "$(pd_decision "${P}bound")") $(live_nodeset "${P}bound")"

# 3. the user's strict nodeset 0 while ${P}bound holds node 0's one core: the vCPU takes node 1's free core
#    rather than share it, the memory left on node 0 (a binding confines memory, not vCPUs).
must "start ${P}strict with <numatune><memory mode='strict' nodeset='0'>" \
    start "${P}strict" "<numatune><memory mode='strict' nodeset='0'/></numatune>" ""
check "${P}strict: decision recorded" wait_for 10 pd_decided "${P}strict"
expect "${P}strict: placed, binding kept" "placed kept" \
    "$(pd_attr result "$(pd_decision "${P}strict")") $(pd_attr memory-binding "$(pd_decision "${P}strict")")"
expect "${P}strict: vCPU 0 on CPU 1, memory on node 0 (/proc)" "1 0" "$(vcpu0 "${P}strict") $(mems "${P}strict")"
check "${P}strict: the reason says why the vCPU left the memory's node" \
    sh -c "grep -q 'a binding confines memory, not vCPUs' '$LOG'"
expect "${P}strict: libvirt's nodeset unchanged" "0" "$(live_nodeset "${P}strict")"

# 4. the user's emulator pin stands.
must "start ${P}emu with <cputune><emulatorpin cpuset='1'>" \
    start "${P}emu" "<cputune><emulatorpin cpuset='1'/></cputune>" ""
check "${P}emu: decision recorded" wait_for 10 pd_decided "${P}emu"
expect "${P}emu: no emulator pin in the decision, QEMU's main thread still on CPU 1" " 1" \
    "$(pd_attr emulator "$(pd_decision "${P}emu")") $(e2e_emulator_affinity "${P}emu")"
must "destroy ${P}emu" e2e_domain_destroy "${P}emu"

# 5. a replace of ${P}bound: its memory is bound strict to node 0 and libvirt will not change that; node 0's
#    core is its own, so it stays there with its memory.
mark=$(wc -l <"$LOG")
check "placementctl replace ${P}bound" ctl replace "${P}bound"
sleep 0.5
expect "${P}bound: still on node 0 with its memory (decision, /proc vCPU and memory)" "0 kept 0 0" \
    "$(pd_attr nodes "$(pd_decision "${P}bound")") $(pd_attr memory-binding "$(pd_decision "${P}bound")") $(vcpu0 "${P}bound") $(mems "${P}bound")"
check "${P}bound: the reason says the memory cannot follow" \
    sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q 'a live binding libvirt cannot change'"

# 6. a domain with an I/O thread id above 8192 (libvirt takes it; placementd leaves that thread out and reads
#    the rest), its vCPU pinned to CPU 0 by its definition: skipped as its definition pins its vCPUs, not
#    as unreadable, and counted as it runs; the next domain takes CPU 1, not CPU 0.
must "destroy ${P}strict" e2e_domain_destroy "${P}strict"
must "destroy ${P}bound" e2e_domain_destroy "${P}bound"
must "start ${P}unread with <iothread id='9000'> and <vcpupin cpuset='0'>" start "${P}unread" \
    "<iothreads>1</iothreads><iothreadids><iothread id='9000'/></iothreadids><cputune><vcpupin vcpu='0' cpuset='0'/></cputune>" ""
shows_unread() { local out; out=$(ctl show "$1") && grep -q skipped <<<"$out" && grep -q 'definition pins vCPUs itself' <<<"$out"; }
check "${P}unread: placementctl shows it skipped, its definition pinning its vCPUs (read past I/O thread 9000)" wait_for 10 shows_unread "${P}unread"
must "start ${P}next" start "${P}next" "" ""
check "${P}next: decision recorded" wait_for 10 pd_decided "${P}next"
expect "${P}unread on CPU 0, ${P}next on CPU 1 (/proc)" "0 1" "$(vcpu0 "${P}unread") $(vcpu0 "${P}next")"
check "placementd still runs" kill -0 "$PD_PID"
exit 0
