#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# End-to-end test of the domain's own constraints against a real libvirtd + QEMU (TCG). Run as root:
#   bash tests/e2e/constraints.sh [BUILD_DIR]
# The daemon sees a fake host of two nodes whose CPUs are the real ones (CPU 0 on node 0, CPU 1 on node 1),
# so every pin is real. Checked against /proc, libvirt and the recorded decision:
#   1. <vcpu cpuset='1'>: placed on CPU 1 although node 0 is idle.
#   2. <numatune><memory mode='strict' nodeset='0'>: vCPUs on node 0 although node 1 is idle; the binding is
#      left as it is ("kept") and the memory counted on node 0.
#   3. <cputune><emulatorpin cpuset='1'>: the emulator stays on CPU 1.
#   4. Memory bound by placementd's first placement cannot follow (libvirt refuses a second nodeset change in
#      strict mode): placementctl replace keeps the vCPUs on the node that holds the memory.
# Prints "ok N - ..." / "not ok N - ...", and last "e2e-constraints: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"

BUILD=${1:-build}
if [ ! -d "$BUILD" ] && [ -d "$ROOT/$BUILD" ]; then
    BUILD=$ROOT/$BUILD
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "e2e-constraints: 0 passed, 1 failed"; exit 1; }
PLACEMENTD=$BUILD/daemon/placementd
PLACEMENTCTL=$BUILD/tools/placementctl
TOPOLOGY='synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1'
NS=https://placementd.org/xmlns/domain/1
P=${E2E_DOMAIN_PREFIX}

T0=$(date +%s%N)
N=0 PASS=0 FAIL=0 PD_PID='' BUS_PID=''
WORK=$(mktemp -d "${TMPDIR:-/tmp}/placementd-e2e-constraints.XXXXXX") || exit 1
LOG=$WORK/placementd.log
: >"$LOG"
# shellcheck source=tap.sh
. "$HERE/tap.sh"

wait_for() { # TENTHS CMD...
    local n=$1 i=0
    shift
    while ! "$@"; do
        [ "$i" -ge "$n" ] && return 1
        sleep 0.1
        i=$((i + 1))
    done
}
meta() { e2e_virsh metadata "$1" --uri "$NS" --live 2>/dev/null; }
decision() { grep -oE "<([A-Za-z0-9_]+:)?decision[[:space:]][^>]*>" <<<"$(meta "$1")" | head -n 1; }
attr() { sed -nE "s/.*[[:space:]]$1=[\"']([^\"']*)[\"'].*/\1/p" <<<"$2"; }
decided() { [ -n "$(decision "$1")" ]; }
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

finish() {
    local rc=$? d
    trap - EXIT INT TERM
    [ -n "$PD_PID" ] && kill -TERM "$PD_PID" 2>/dev/null && wait "$PD_PID" 2>/dev/null
    [ -n "$BUS_PID" ] && kill -TERM "$BUS_PID" 2>/dev/null && wait "$BUS_PID" 2>/dev/null
    for d in $DEFINED; do e2e_virsh undefine "$d" >/dev/null 2>&1; done
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    if [ "$FAIL" -gt 0 ] || [ "$rc" -ne 0 ]; then
        tail -n 30 "$LOG" | sed 's/^/#   /'
        echo "# logs kept in $WORK"
        [ "$FAIL" -gt 0 ] || FAIL=1
    else
        rm -rf "$WORK"
    fi
    echo "# time: $(elapsed) s"
    echo "e2e-constraints: $PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ] && exit 0
    exit 1
}
trap finish EXIT
trap 'not_ok "run interrupted"; exit 130' INT TERM

[ "$(nproc)" -ge 2 ] || { echo "# needs 2 CPUs"; trap - EXIT; exit 77; }
must "built binaries in $BUILD" test -x "$PLACEMENTD" -a -x "$PLACEMENTCTL"
must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
cat >"$WORK/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$WORK/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$WORK/bus.conf" --nofork </dev/null >>"$WORK/dbus.log" 2>&1 &
BUS_PID=$!
must "private dbus-daemon" wait_for 50 test -S "$WORK/bus"
printf '[Placement]\nReconcileSec=0\n\n[Libvirt]\nURI=%s\n' "$E2E_LIBVIRT_URI" >"$WORK/placementd.conf"
env -u NOTIFY_SOCKET "$PLACEMENTD" --config="$WORK/placementd.conf" --topology="$TOPOLOGY" \
    --bus-address="unix:path=$WORK/bus" --foreground --log-level=debug </dev/null >>"$LOG" 2>&1 &
PD_PID=$!
must "placementd connects" wait_for 300 grep -q "Connected to" "$LOG"
on_bus() { timeout 5 busctl --address="unix:path=$WORK/bus" status org.placementd1 >/dev/null 2>&1; }
must "placementd serves org.placementd1 on the private bus" wait_for 200 on_bus

# 1. <vcpu cpuset>: node 0 is idle, yet the domain may only run on CPU 1 (node 1).
must "start ${P}cpuset with <vcpu cpuset='1'>" start "${P}cpuset" "" " cpuset='1'"
check "${P}cpuset: decision recorded" wait_for 100 decided "${P}cpuset"
expect "${P}cpuset: placed on node 1" "placed 1" "$(attr result "$(decision "${P}cpuset")") $(attr nodes "$(decision "${P}cpuset")")"
expect "${P}cpuset: vCPU 0 runs on CPU 1 (/proc)" "1" "$(vcpu0 "${P}cpuset")"
check "${P}cpuset: the reason names the cpuset" sh -c "grep -q \"kept inside <vcpu cpuset='1'>\" '$LOG'"
must "destroy ${P}cpuset" e2e_domain_destroy "${P}cpuset"

# 2. placementd's own first binding: ${P}bound lands on node 0 (first node) and binds its memory there.
#    Persistent: its definition, unlike a transient domain's live XML, does not show placementd's own pins.
must "define and start ${P}bound" start "${P}bound" "" "" persistent
check "${P}bound: decision recorded" wait_for 100 decided "${P}bound"
expect "${P}bound: on node 0, memory bound live by placementd" "0 applied 0" \
    "$(attr nodes "$(decision "${P}bound")") $(attr memory-binding "$(decision "${P}bound")") $(live_nodeset "${P}bound")"

# 3. the user's strict nodeset 0: node 1 is idle, yet cores come from node 0 where the memory is.
must "start ${P}strict with <numatune><memory mode='strict' nodeset='0'>" \
    start "${P}strict" "<numatune><memory mode='strict' nodeset='0'/></numatune>" ""
check "${P}strict: decision recorded" wait_for 100 decided "${P}strict"
expect "${P}strict: overcommitted on node 0, binding kept" "overcommitted 0 kept" \
    "$(attr result "$(decision "${P}strict")") $(attr nodes "$(decision "${P}strict")") $(attr memory-binding "$(decision "${P}strict")")"
expect "${P}strict: vCPU 0 on CPU 0, memory on node 0 (/proc)" "0 0" "$(vcpu0 "${P}strict") $(mems "${P}strict")"
expect "${P}strict: libvirt's nodeset unchanged" "0" "$(live_nodeset "${P}strict")"

# 4. the user's emulator pin stands.
must "start ${P}emu with <cputune><emulatorpin cpuset='1'>" \
    start "${P}emu" "<cputune><emulatorpin cpuset='1'/></cputune>" ""
check "${P}emu: decision recorded" wait_for 100 decided "${P}emu"
expect "${P}emu: no emulator pin in the decision, QEMU's main thread still on CPU 1" " 1" \
    "$(attr emulator "$(decision "${P}emu")") $(e2e_emulator_affinity "${P}emu")"
must "destroy ${P}emu" e2e_domain_destroy "${P}emu"

# 5. node 1 is idle now and node 0 holds ${P}bound and ${P}strict: a replace of ${P}bound would move it to
#    node 1, but its memory is bound strict to node 0 and libvirt will not change that.
mark=$(wc -l <"$LOG")
check "placementctl replace ${P}bound" ctl replace "${P}bound"
sleep 0.5
expect "${P}bound: still on node 0 with its memory (decision, /proc vCPU and memory)" "0 kept 0 0" \
    "$(attr nodes "$(decision "${P}bound")") $(attr memory-binding "$(decision "${P}bound")") $(vcpu0 "${P}bound") $(mems "${P}bound")"
check "${P}bound: the reason says the memory cannot follow" \
    sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q 'a live binding libvirt cannot change'"
check "placementd still runs" kill -0 "$PD_PID"
exit 0
