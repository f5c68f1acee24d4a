#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# A guest whose libvirt job is held, on a real libvirtd + QEMU (TCG): its QEMU is stopped (SIGSTOP) while a
# monitor command waits on it, so libvirt keeps the job until QEMU answers and any call that needs it (a
# pin, numatune, a metadata write, reading the live I/O threads) waits 30 s before it fails. placementd
# must not wait: one such call a reconcile round would leave D-Bus, metrics and every other guest's
# placement 30 s behind, and two would let systemd's watchdog (WatchdogSec=60s) kill it. Run as root:
#   flock /tmp/placementd-e2e.lock bash tests/e2e/wedged.sh [BUILD_DIR]
# The fake topology's two nodes of one core each are the machine's CPUs 0 and 1 (the pins are real).
#   1. w-a placed; then wedged: libvirt says "occupied" (virsh domcontrol), and through six reconcile
#      rounds (ReconcileSec=2) the daemon answers on D-Bus within 3 s each time;
#   2. `placementctl replace w-a` answers within 5 s: the plan waits for the job, w-a's pin stands as it
#      runs (/proc), and show says why;
#   3. w-b started meanwhile is placed on the other CPU, within 10 s;
#   4. QEMU runs again: w-a is placed again without a request (log), its decision placed;
#   5. placementd restarted while w-b is wedged: it answers within 10 s and adopts w-b from its record.
#   6. w-c made what libvirt 9.0 keeps of a start its SIGKILL cut (paused "starting up", no QEMU, a job
#      libvirt never ends and does not report: control "ok", every pin would wait 30 s and fail): it does
#      not run, the daemon forgets it at once, answers within 3 s for 20 s, `placementctl replace` within
#      5 s, and no call waits for the job.
# Last line: "e2e-wedged: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"
TOPO="synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1" # node 0 = CPU 0, node 1 = CPU 1
P=${E2E_DOMAIN_PREFIX}wedged-
need_root "a real libvirtd"

e2e_suite_begin e2e-wedged
STOPPED=() # QEMU PIDs stopped here: let run again whatever happens

tap_cleanup() {
    local p
    for p in "${STOPPED[@]}"; do kill -CONT "$p" 2>/dev/null; done
    pd_stop
    pd_reap_strays 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    pd_bus_stop
}

# wedge NAME: stop its QEMU, then have a monitor command wait on it (libvirt holds the job meanwhile).
wedge() {
    local pid
    pid=$(e2e_qemu_pid "$1") || return 1
    kill -STOP "$pid" || return 1
    STOPPED+=("$pid")
    (E2E_VIRSH_TIMEOUT=300 e2e_virsh qemu-monitor-command "$1" '{"execute":"query-status"}' >/dev/null 2>&1 &)
    wait_for 10 occupied "$1"
}
occupied() { e2e_virsh domcontrol "$1" 2>/dev/null | grep -q '^occupied'; }
unwedge() {
    local pid
    pid=$(e2e_qemu_pid "$1") || return 1
    kill -CONT "$pid"
    wait_for 30 sh -c "! virsh -c '$E2E_LIBVIRT_URI' domcontrol '$1' 2>/dev/null | grep -q '^occupied'"
}
cpu_of() { e2e_vcpu_affinity "$1" | awk '$1 == 0 {print $2}'; }
recorded_placed() { [ "$(pd_attr result "$(pd_decision "$1")")" = placed ]; }
answers() { timeout 3 "$PD_CTL" --bus-address="$PD_ADDR" status >/dev/null 2>&1; }
# answers_through N: the daemon answers every 2 s, N times
answers_through() {
    local i
    for ((i = 0; i < $1; i++)); do
        answers || { diag "no answer within 3 s at try $((i + 1))"; return 1; }
        sleep 2
    done
}

# replace_timed NAME: `placementctl replace NAME`, its answer in diag, the seconds it took in took
replace_timed() {
    local start out
    start=$EPOCHSECONDS
    out=$(timeout 40 "$PD_CTL" --bus-address="$PD_ADDR" replace "$1" 2>&1)
    took=$((EPOCHSECONDS - start))
    diag "replace: $(head -c 300 <<<"$out")"
}

must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
must "pd_env_init" pd_env_init "$BUILD" "$WORK"
must "private bus" pd_bus_start
must "start ${P}a" e2e_domain_start "${P}a" 1
must "placementd connects (ReconcileSec=2)" pd_start "$TOPO" ReconcileSec=2
check "${P}a: decision recorded" wait_for 10 pd_decided "${P}a"
A_CPU=$(cpu_of "${P}a")
diag "${P}a runs on CPU $A_CPU"

# 1. wedged: the reconcile rounds do not wait for its job
must "wedge ${P}a (libvirt: occupied)" wedge "${P}a"
check "the daemon answers within 3 s through six reconcile rounds" answers_through 6

# 2. a request on the wedged guest answers at once and changes nothing
replace_timed "${P}a"
check "replace ${P}a answers within 5 s (took ${took} s)" test "$took" -le 5
show=$(pdctl show "${P}a" 2>&1)
check "show ${P}a says its plan waits for libvirt's job" grep -q "libvirt holds a job on the domain: the plan waits" <<<"$show"
expect "${P}a still runs on CPU $A_CPU (/proc)" "$A_CPU" "$(cpu_of "${P}a")"

# 3. another guest is placed meanwhile
must "start ${P}b" e2e_domain_start "${P}b" 1
check "${P}b: decision recorded within 10 s" wait_for 10 pd_decided "${P}b"
B_CPU=$(cpu_of "${P}b")
check "${P}b runs on the other CPU ($B_CPU, ${P}a on $A_CPU)" test "$B_CPU" != "$A_CPU"
check "the daemon still answers" answers

# 4. released: placed again without a request
mark=$(pd_log_mark)
must "QEMU of ${P}a runs again" unwedge "${P}a"
check "${P}a placed again once libvirt released its job (log)" \
    wait_for 15 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -q '${P}a: libvirt released the domain.s job: placing it again'"
check "${P}a: its record says placed" wait_for 10 recorded_placed "${P}a"
check "placementd still runs" pd_alive

# 5. restarted while a guest is wedged: up at once, the guest adopted as it runs
must "placementd stops" pd_stop
must "wedge ${P}b" wedge "${P}b"
start=$EPOCHSECONDS
must "placementd starts again" pd_start "$TOPO" ReconcileSec=2
took=$((EPOCHSECONDS - start))
check "it answers within 10 s of its start (took ${took} s)" test "$took" -le 10
check "${P}b adopted from its record (log)" wait_for 10 grep -q "^<6>${P}b: adopted from its record .*: placed, .*(recorded reason: " "$PD_LOG"
check "the daemon answers within 3 s through three reconcile rounds" answers_through 3
expect "${P}b still runs on CPU $B_CPU (/proc)" "$B_CPU" "$(cpu_of "${P}b")"
must "QEMU of ${P}b runs again" unwedge "${P}b"
check "placementd still runs" pd_alive

# 6. a start libvirt never ends: not running, forgotten, nothing waits for its job
must "start ${P}c" e2e_domain_start "${P}c" 1
check "${P}c: decision recorded" wait_for 10 pd_decided "${P}c"
mark=$(pd_log_mark)
must "${P}c made a start libvirt never ends (libvirtd restarted)" e2e_domain_ghost "$WORK" "${P}c"
check "placementd reconnects" wait_for 20 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -q 'Connected to'"
check "libvirt says ${P}c is paused starting up, its control ok" \
    sh -c "virsh -c '$E2E_LIBVIRT_URI' domstate --reason '${P}c' | grep -q 'starting up' &&
        virsh -c '$E2E_LIBVIRT_URI' domcontrol '${P}c' | grep -q '^ok'"
check "placementd forgets ${P}c: it does not run" \
    wait_for 10 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -q '^<6>${P}c: its start has not ended, libvirt says .*; its cores and memory are free again'"
check "the daemon answers within 3 s, every 2 s, for 20 s (ten reconcile rounds)" answers_through 10
replace_timed "${P}c"
check "replace ${P}c answers within 5 s (took ${took} s)" test "$took" -le 5
timeouts=$(tail -n +$((mark + 1)) "$PD_LOG" | grep -c "cannot acquire state change lock")
check "no call waited for its job (got $timeouts)" test "$timeouts" -eq 0
must "libvirtd restarted without ${P}c" e2e_libvirt_drop_ghosts "$WORK"
check "placementd still runs" pd_alive
