#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# A libvirtd that stops answering while placementd is connected (SIGSTOP, as one deadlocked or stuck in the
# kernel), on a real libvirtd + QEMU (TCG). The next libvirt call (the load sample, LoadInterval=1) waits in
# the daemon's loop; libvirt's keepalive (a ping every 5 s, 3 unanswered) must end it, although it is that
# loop's timeout, so the daemon answers again within about 25 s and waits for libvirtd as for one that went
# away, instead of holding D-Bus, metrics, SIGTERM and the watchdog until libvirtd answers. Run as root:
#   flock /tmp/placementd-e2e.lock bash tests/e2e/silent.sh [BUILD_DIR]
#   1. s-a placed, then libvirtd stopped: the log says the connection was lost (keepalive timeout) within
#      40 s; status answers within 3 s ("Waiting for"), three times 2 s apart;
#   2. libvirtd runs again: connected again within 40 s, s-a still placed where it was;
#   3. libvirtd stopped again, then SIGTERM: placementd exits within 40 s.
# Last line: "e2e-silent: N passed, M failed".
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
P=${E2E_DOMAIN_PREFIX}silent-
need_root "a real libvirtd"

e2e_suite_begin e2e-silent
LIBVIRTD_PID= # stopped here: let run again whatever happens

tap_cleanup() {
    [ -n "$LIBVIRTD_PID" ] && kill -CONT "$LIBVIRTD_PID" 2>/dev/null
    pd_stop
    pd_reap_strays 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    pd_bus_stop
}

cpu_of() { e2e_vcpu_affinity "$1" | awk '$1 == 0 {print $2}'; }
# status_within SECONDS WANT: placementctl status answers within SECONDS and its first line has WANT
status_within() {
    local out
    out=$(timeout "$1" "$PD_CTL" --bus-address="$PD_ADDR" status 2>&1 | head -n 1)
    grep -q "$2" <<<"$out" || { diag "status: ${out:-<no answer within $1 s>}"; return 1; }
}
waits_through() {
    local i
    for ((i = 0; i < $1; i++)); do
        status_within 3 "Waiting for" || return 1
        sleep 2
    done
}
pd_gone() { ! pd_alive; }
log_since_has() { pd_log_since "$1" | grep -q "$2"; }

must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
must "pd_env_init" pd_env_init "$BUILD" "$WORK"
must "private bus" pd_bus_start
must "start ${P}a" e2e_domain_start "${P}a" 1
must "placementd connects (LoadInterval=1)" pd_start "$TOPO" LoadInterval=1
check "${P}a: decision recorded" wait_for 10 pd_decided "${P}a"
A_CPU=$(cpu_of "${P}a")
diag "${P}a runs on CPU $A_CPU"
LIBVIRTD_PID=$(cat "$WORK/libvirtd.pid")

# 1. libvirtd stops answering: the keepalive ends the waiting call, the daemon waits for libvirtd
mark=$(pd_log_mark)
must "libvirtd stopped (SIGSTOP)" kill -STOP "$LIBVIRTD_PID"
start=$EPOCHSECONDS
if wait_for 40 log_since_has "$mark" "Lost the connection to .*(keepalive timeout)"; then
    ok "the connection is given up within 40 s (log: keepalive timeout; after $((EPOCHSECONDS - start)) s)"
else
    not_ok "the connection is given up within 40 s (log: keepalive timeout)"
fi
check "status answers within 3 s, waiting for libvirtd, three times" waits_through 3
check "placementd still runs" pd_alive

# 2. libvirtd answers again: connected, nothing moved
mark=$(pd_log_mark)
must "libvirtd runs again (SIGCONT)" kill -CONT "$LIBVIRTD_PID"
check "connected again within 40 s" wait_for 40 log_since_has "$mark" "Connected to"
check "status says connected" status_within 10 "Connected to"
expect "${P}a still runs on CPU $A_CPU (/proc)" "$A_CPU" "$(cpu_of "${P}a")"
check "${P}a: its record says placed" test "$(pd_attr result "$(pd_decision "${P}a")")" = placed

# 3. SIGTERM while libvirtd is silent
must "libvirtd stopped again" kill -STOP "$LIBVIRTD_PID"
sleep 3
start=$EPOCHSECONDS
kill -TERM "$PD_PID"
if wait_for 40 pd_gone; then
    ok "placementd exits within 40 s of SIGTERM (after $((EPOCHSECONDS - start)) s)"
else
    not_ok "placementd exits within 40 s of SIGTERM"
fi
kill -CONT "$LIBVIRTD_PID"
