#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# A host CPU taken offline and brought back while guests run, on a real libvirtd + QEMU (TCG). Run as root:
#   flock /tmp/placementd-e2e.lock bash tests/e2e/cpu-offline.sh [BUILD_DIR]
# The daemon sees a fake host of two one-core nodes whose CPUs are the machine's 0 and 1, so every pin is
# real; ReconcileSec=1. Two 1-vCPU guests, one on each CPU. Then:
#   1. CPU 1 goes offline (echo 0 > /sys/devices/system/cpu/cpu1/online): the daemon says so, and the guest
#      it had put on CPU 1 is placed again on CPU 0, overcommitted; the four views (placementctl, the
#      record, libvirt --live, /proc) agree, for both guests.
#   2. A guest started while CPU 1 is offline runs on libvirt's default pin, every CPU online: it is
#      placed (not taken for one pinned by hand), on CPU 0, and the views agree.
#   3. CPU 1 comes back. Under cgroup v1 the guests' cgroup lost it for good (the kernel drops an offline
#      CPU from every cpuset): the daemon says so and places nothing there, and no decision fails; under
#      cgroup v2 it is offered again. Either way the views agree.
# CPU 1 is put back online at the end whatever happens (a trap). Exits 77 (skip) when this is not root or
# CPU 1 cannot be taken offline. Last line: "e2e-cpu-offline: N passed, M failed".
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
TOPO='synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1' # node 0: CPU 0, node 1: CPU 1
ONLINE=/sys/devices/system/cpu/cpu1/online
P=$E2E_DOMAIN_PREFIX

need_root "CPU hotplug and a real libvirtd"
[ -w "$ONLINE" ] || tap_skip "CPU 1 cannot be taken offline here ($ONLINE)"
[ "$(cat "$ONLINE")" = 1 ] || tap_skip "CPU 1 is offline already"

e2e_suite_begin e2e-cpu-offline

cpu1() { echo "$1" >"$ONLINE"; }
tap_cleanup() {
    cpu1 1 2>/dev/null
    pd_stop
    pd_reap_strays 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    pd_bus_stop
}

# cpu_of NAME: the CPUs vCPU 0 of NAME may run on (/proc).
cpu_of() { e2e_vcpu_affinity "$1" 2>/dev/null | awk '$1 == 0 { print $2 }'; }
result_of() { pd_attr result "$(pd_decision "$1")"; }
views_agree() {
    local out
    if out=$(views_settle 40 views); then # the sharing check counts an offline CPU as free
        ok "$1: placementctl, the record, libvirt and /proc agree"
    else
        not_ok "$1: placementctl, the record, libvirt and /proc agree"
    fi
    [ -z "$out" ] || diag "$out"
}
no_failed() { ! pdctl list 2>/dev/null | grep -qw failed; }

if ! e2e_libvirt_start "$WORK" >"$WORK/start.out" 2>&1; then
    not_ok "libvirtd starts"
    diag "$(cat "$WORK/start.out")"
    exit 1
fi
ok "libvirtd starts"
if ! pd_env_init "$BUILD" "$WORK" || ! pd_bus_start; then
    not_ok "private bus"
    exit 1
fi
must "placementd starts on $TOPO" pd_start "$TOPO" ReconcileSec=1
must "views_init $TOPO" views_init "$TOPO"

must "${P}a starts (1 vCPU)" e2e_domain_start "${P}a" 1
check "${P}a: decision recorded" wait_for 10 pd_decided "${P}a"
must "${P}b starts (1 vCPU)" e2e_domain_start "${P}b" 1
check "${P}b: decision recorded" wait_for 10 pd_decided "${P}b"
ON1=
for d in "${P}a" "${P}b"; do [ "$(cpu_of "$d")" = 1 ] && ON1=$d; done
check "one guest runs on CPU 1 (/proc: a on $(cpu_of "${P}a"), b on $(cpu_of "${P}b"))" test -n "$ON1"
views_agree "0. both placed"

# 1. CPU 1 goes offline
mark=$(pd_log_mark)
must "CPU 1 goes offline" cpu1 0
check "the daemon says CPU 1 went offline (log)" \
    wait_for 10 sh -c "tail -n +$((mark + 1)) '$PD_LOG' | grep -q 'CPU 1 went offline'"
on_cpu0() { [ "$(cpu_of "$1")" = 0 ]; }
check "${ON1:-?}: placed again, on CPU 0 (/proc)" wait_for 10 on_cpu0 "${ON1:-none}"
expect "${ON1:-?}: overcommitted" overcommitted "$(result_of "${ON1:-none}")"
views_agree "1. CPU 1 offline"

# 2. a guest started while CPU 1 is offline
mark=$(pd_log_mark)
must "${P}c starts (1 vCPU) while CPU 1 is offline" e2e_domain_start "${P}c" 1
check "${P}c: decision recorded" wait_for 10 pd_decided "${P}c"
expect "${P}c: placed by placementd, not taken for one pinned by hand" overcommitted "$(result_of "${P}c")"
check "${P}c: not said pinned by someone else (log)" \
    sh -c "! tail -n +$((mark + 1)) '$PD_LOG' | grep -E '${P}c: .*(by someone else|already pinned)'"
expect "${P}c: on CPU 0 (/proc)" 0 "$(cpu_of "${P}c")"
views_agree "2. started while offline"

# 3. CPU 1 comes back
mark=$(pd_log_mark)
must "CPU 1 comes back online" cpu1 1
said_back() {
    pd_log_since "$mark" | grep -qE 'CPU 1 (usable again|online again but not in the guests. cgroup)'
}
check "the daemon says what CPU 1 is now (log)" wait_for 10 said_back
diag "$(pd_log_since "$mark" | grep -E 'CPU 1 ' | sed 's/^/log: /')"
sleep 2 # a few reconciles (and heal passes) on the new state
check "no decision failed" no_failed
views_agree "3. CPU 1 back"
diag "$(pdctl list 2>&1 | sed 's/^/list: /')"

check "placementd still runs" pd_alive
exit 0
