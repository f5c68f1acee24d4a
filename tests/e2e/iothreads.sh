#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# End-to-end test of I/O thread pins and the housekeeping CPUs against a real libvirtd + QEMU (TCG). Run as
# root, under the e2e lock:   flock /tmp/placementd-e2e.lock bash tests/e2e/iothreads.sh [BUILD_DIR]
# The daemon sees a host of two cores without SMT whose CPUs are the real ones (CPU 0, CPU 1) and keeps
# CPU 0 for the host (ReservedCPUs=0, so HousekeepingCPUs= is CPU 0 too). Checked against /proc (the
# Cpus_allowed_list of QEMU's "IO iothreadN" threads), libvirt (virsh iothreadinfo) and the decision:
#   1. a guest with <iothreads>2</iothreads>: its vCPU on CPU 1, the emulator and both I/O threads on the
#      housekeeping CPU 0, never on the vCPU's own core; the decision records iothreads="1-2".
#   2. a guest with <cputune><iothreadpin iothread='1' cpuset='1'/>: I/O thread 1 stays on CPU 1, I/O
#      thread 2 is pinned to CPU 0, and the decision leaves I/O thread 1 out.
#   3. placementd restarted: it adopts the first guest from its record and moves no I/O thread.
#   4. I/O threads changed live (libvirt 9.0 sends no event for iothreadadd or iothreaddel): one added is
#      pinned by the decision's rule at the next reconcile; one the user pins is left where they put it,
#      and never pinned back; one removed leaves the decision.
# Prints "ok N - ..." / "not ok N - ...", and last "e2e-iothreads: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"
TOPOLOGY='synthetic:pack:1 numa:1(memory=2GiB) core:2 pu:1'
P=${E2E_DOMAIN_PREFIX}

e2e_suite_begin e2e-iothreads
LOG=$PD_LOG

vcpu0() { e2e_vcpu_affinity "$1" | awk '$1 == 0 { print $2 }'; }
iothread() { e2e_iothread_affinity "$@"; }
# libvirt's view: "ID CPULIST" per I/O thread
iothreadinfo() { e2e_virsh iothreadinfo "$1" --live | awk '$1 ~ /^[0-9]+$/ { print $1, $2 }' | sort -n | tr '\n' ';'; }

# start NAME SNIPPET: a 1-vCPU transient domain from the e2e template, SNIPPET before <os>
start() { e2e_domain_start "$1" 1 "$2"; }
start_placementd() {
    placementd_start --config="$WORK/placementd.conf" --topology="$TOPOLOGY" --log-level=debug
    wait_for 30 grep -q "Connected to" "$LOG"
}

tap_cleanup() {
    placementd_stop
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
}

must "built daemon in $BUILD" test -x "$PLACEMENTD"
must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
printf '[Placement]\nReservedCPUs=0\nReconcileSec=2\n\n[Libvirt]\nURI=%s\n\n[DBus]\nBus=none\n' \
    "$E2E_LIBVIRT_URI" >"$WORK/placementd.conf"
must "placementd connects" start_placementd

# 1. two I/O threads: with no sibling on this host they go with the emulator to the housekeeping CPU 0.
must "start ${P}io with <iothreads>2</iothreads>" start "${P}io" "<iothreads>2</iothreads>"
check "${P}io: decision recorded" wait_for 10 pd_decided "${P}io"
D=$(pd_decision "${P}io")
expect "${P}io: placed, I/O threads 1-2 and the emulator on CPU 0 (decision)" "placed 1-2 0 0" \
    "$(pd_attr result "$D") $(pd_attr iothreads "$D") $(pd_attr iothread-pin "$D") $(pd_attr emulator "$D")"
expect "${P}io: vCPU 0 on CPU 1 (/proc), its own core left to it" "1" "$(vcpu0 "${P}io")"
expect "${P}io: I/O threads 1 and 2 run where the decision says (/proc)" \
    "$(pd_attr iothread-pin "$D") $(pd_attr iothread-pin "$D")" "$(iothread "${P}io" 1) $(iothread "${P}io" 2)"
expect "${P}io: libvirt shows the same I/O thread pins" "1 0;2 0;" "$(iothreadinfo "${P}io")"

# 2. the user's pin of I/O thread 1 stands; I/O thread 2 is placementd's.
must "start ${P}iopin with <iothreadpin iothread='1' cpuset='1'/>" \
    start "${P}iopin" "<iothreads>2</iothreads><cputune><iothreadpin iothread='1' cpuset='1'/></cputune>"
check "${P}iopin: decision recorded" wait_for 10 pd_decided "${P}iopin"
D=$(pd_decision "${P}iopin")
expect "${P}iopin: the decision pins I/O thread 2 only, to CPU 0" "2 0" \
    "$(pd_attr iothreads "$D") $(pd_attr iothread-pin "$D")"
expect "${P}iopin: I/O thread 1 stays on CPU 1, I/O thread 2 on CPU 0 (/proc)" "1 0" \
    "$(iothread "${P}iopin" 1) $(iothread "${P}iopin" 2)"
check "${P}iopin: the reason names the user's pin" \
    grep -q "I/O thread 1 stays where <cputune><iothreadpin> puts it" "$LOG"

# 3. a restarted daemon adopts ${P}io from its record (alone: an overcommitted neighbour on its core would
#    make the adoption depend on which record is read first) and moves nothing.
must "destroy ${P}iopin" e2e_domain_destroy "${P}iopin"
BEFORE="$(iothread "${P}io" 1) $(iothread "${P}io" 2)"
placementd_stop
mark=$(wc -l <"$LOG")
must "placementd starts again" start_placementd
check "${P}io adopted" wait_for 10 sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q '^<6>${P}io: adopted from its record .*: placed, .*(recorded reason: '"
expect "no I/O thread moved by the restart (/proc)" "$BEFORE" "$(iothread "${P}io" 1) $(iothread "${P}io" 2)"
check "placementd still runs" kill -0 "$PD_PID"

# 4. I/O threads changed live, seen by the reconcile (every 2 s here).
iothreads_recorded() { pd_attr iothreads "$(pd_decision "$1")"; }
recorded_is() { [ "$(iothreads_recorded "$1")" = "$2" ]; }
must "virsh iothreadadd ${P}io 3" e2e_virsh iothreadadd "${P}io" 3 --live
check "I/O thread 3 pinned by the decision's rule (log)" \
    wait_for 15 grep -q "^<6>${P}io: I/O thread 3 added live: pinned to 0," "$LOG"
expect "I/O thread 3 runs on CPU 0 (/proc)" "0" "$(iothread "${P}io" 3)"
check "the decision records I/O threads 1-3" wait_for 10 recorded_is "${P}io" 1-3
must "virsh iothreadpin ${P}io 2 1 (the user's)" e2e_virsh iothreadpin "${P}io" 2 1 --live
check "the user's pin of I/O thread 2 is noticed (log)" \
    wait_for 15 grep -q "^<6>${P}io: I/O thread 2 was pinned to 1 by someone else: left there" "$LOG"
sleep 5 # two more reconcile rounds
expect "I/O thread 2 stays where the user put it (/proc)" "1" "$(iothread "${P}io" 2)"
check "the decision keeps I/O threads 1 and 3" wait_for 10 recorded_is "${P}io" 1,3
must "virsh iothreaddel ${P}io 3" e2e_virsh iothreaddel "${P}io" 3 --live
check "I/O thread 3 leaves the decision (log)" wait_for 15 grep -q "^<6>${P}io: I/O thread 3 is gone" "$LOG"
check "the decision keeps I/O thread 1" wait_for 10 recorded_is "${P}io" 1
expect "no vCPU moved meanwhile (/proc)" "1" "$(vcpu0 "${P}io")"
exit 0
