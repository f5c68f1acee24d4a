#!/bin/bash
# shellcheck disable=SC2317 # functions reached through check/trap
# Self-test of tests/e2e/libvirt-env.sh against a real libvirtd + QEMU (TCG). Run as root:
#   bash tests/e2e/smoke.sh            (keeps DIR with the daemons' logs on failure, or with E2E_KEEP=1)
# Exits 0 only if every check passed; the last line is "e2e smoke: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

A=${E2E_DOMAIN_PREFIX}smoke-a
B=${E2E_DOMAIN_PREFIX}smoke-b
EVPID=
tap_begin "e2e smoke"
tap_tmpdir e2e-smoke "${E2E_KEEP:-}"
TAP_KEEP_FAILED=1
WORK=$TAP_TMP

tap_cleanup() {
    stop_pid "$EVPID"
    e2e_libvirt_stop "$WORK" || not_ok "e2e_libvirt_stop during cleanup"
    if [ -n "$(_e2e_live_pids libvirtd)$(_e2e_live_pids virtlogd)" ]; then
        not_ok "daemons still running after cleanup: libvirtd=[$(_e2e_live_pids libvirtd)] virtlogd=[$(_e2e_live_pids virtlogd)]"
    fi
    tap_log "$WORK/libvirtd.log" "$WORK/virtlogd.log"
}

not() { ! "$@"; }
quietly() { "$@" >/dev/null 2>&1; }

machine_cgroups() { find /sys/fs/cgroup -maxdepth 5 -type d -name machine 2>/dev/null | sort; }
CG_BEFORE=$(machine_cgroups)

must "e2e_libvirt_start (conf mode $E2E_LIBVIRT_CONF_MODE)" e2e_libvirt_start "$WORK"
diag "libvirtd pid $(cat "$WORK/libvirtd.pid"), virtlogd pid $(cat "$WORK/virtlogd.pid"), conf mode $(cat "$WORK/conf-mode")"
check "qemu:///system reports a QEMU hypervisor" grep -q "Running hypervisor: QEMU" <<<"$(e2e_virsh version 2>&1)"

must "e2e_domain_start $A 2" e2e_domain_start "$A" 2
must "e2e_domain_start $B 2" e2e_domain_start "$B" 2
check "e2e_domain_start refuses a duplicate name" quietly not e2e_domain_start "$A" 2
check "e2e_domain_start refuses 0 vCPUs" quietly not e2e_domain_start "${E2E_DOMAIN_PREFIX}smoke-c" 0

# libvirt gives new QEMU threads every online host CPU (not libvirtd's own affinity).
ALL=$(cat /sys/devices/system/cpu/online)
expect "$A: fresh vCPU threads may use all CPUs" "0 $ALL
1 $ALL" "$(e2e_vcpu_affinity "$A")"

# vCPU thread <-> index mapping straight from QEMU (QMP query-cpus-fast gives each cpu-index's thread id).
qmp_map=$(e2e_virsh qemu-monitor-command "$A" '{"execute":"query-cpus-fast"}' 2>/dev/null |
    sed 's/"props":{[^}]*}//g' | grep -o '"cpu-index": *[0-9]*\|"thread-id": *[0-9]*' | tr -d ' "' | paste -d' ' - - |
    sed -E 's/^(cpu-index:([0-9]+) thread-id:([0-9]+)|thread-id:([0-9]+) cpu-index:([0-9]+))$/\2\5 \3\4/' | sort -n)
comm_map=$(pid=$(e2e_qemu_pid "$A") && for t in /proc/"$pid"/task/*; do
    c=$(cat "$t/comm"); [[ $c =~ ^CPU\ ([0-9]+)/ ]] && echo "${BASH_REMATCH[1]} ${t##*/}"; done | sort -n)
expect "thread 'CPU n/TCG' is QEMU's cpu-index n (QMP query-cpus-fast)" "$qmp_map" "$comm_map"

# Watch libvirt events while pinning: real QEMU domains emit TUNABLE events for vcpupin/emulatorpin.
stdbuf -oL virsh -c "$E2E_LIBVIRT_URI" event --all --loop --timeout 30 >"$WORK/events.txt" 2>&1 &
EVPID=$!
sleep 0.3

check "virsh vcpupin $A 0 1 --live" e2e_virsh -q vcpupin "$A" 0 1 --live
check "virsh emulatorpin $A 0 --live" e2e_virsh -q emulatorpin "$A" 0 --live
check "virsh vcpupin $B 0 1 --live" e2e_virsh -q vcpupin "$B" 0 1 --live
check "virsh vcpupin $B 1 0 --live" e2e_virsh -q vcpupin "$B" 1 0 --live
check "virsh emulatorpin $B 0 --live" e2e_virsh -q emulatorpin "$B" 0 --live

expect "e2e_vcpu_affinity $A" "0 1
1 $ALL" "$(e2e_vcpu_affinity "$A")"
expect "e2e_vcpu_affinity $B" "0 1
1 0" "$(e2e_vcpu_affinity "$B")"
expect "e2e_emulator_affinity $A" "0" "$(e2e_emulator_affinity "$A")"
expect "e2e_emulator_affinity $B" "0" "$(e2e_emulator_affinity "$B")"
expect "$A: /proc agrees with virsh vcpupin" "$(e2e_virsh_vcpupin "$A")" "$(e2e_vcpu_affinity "$A")"
expect "$B: /proc agrees with virsh vcpupin" "$(e2e_virsh_vcpupin "$B")" "$(e2e_vcpu_affinity "$B")"

for _ in $(seq 50); do
    [ "$(grep -c "event 'tunable'" "$WORK/events.txt")" -ge 5 ] && break
    sleep 0.1
done
kill "$EVPID" 2>/dev/null
wait "$EVPID" 2>/dev/null
EVPID=
check "TUNABLE event cputune.vcpupin0 for $A" grep -q 'cputune.vcpupin0: 1' "$WORK/events.txt"
check "TUNABLE event cputune.emulatorpin" grep -q 'cputune.emulatorpin: 0' "$WORK/events.txt"

QA=$(e2e_qemu_pid "$A")
QB=$(e2e_qemu_pid "$B")
must "e2e_libvirt_kill9" e2e_libvirt_kill9 "$WORK"
check "QEMU of $A survives libvirtd's death" _e2e_pid_alive "$QA"
check "QEMU of $B survives libvirtd's death" _e2e_pid_alive "$QB"
check "nobody answers on $E2E_LIBVIRT_URI" quietly not timeout 5 virsh -c "$E2E_LIBVIRT_URI" version
must "e2e_libvirt_restart re-adopts both domains" e2e_libvirt_restart "$WORK"
expect "both domains listed as running after restart" "$A
$B" "$(e2e_virsh list --name --state-running | grep -v '^$' | sort)"
expect "same QEMU processes after restart" "$QA $QB" "$(e2e_qemu_pid "$A") $(e2e_qemu_pid "$B")"
expect "$B: pins survive the restart (/proc)" "0 1
1 0" "$(e2e_vcpu_affinity "$B")"
expect "$B: libvirt still knows the pins" "0 1
1 0" "$(e2e_virsh_vcpupin "$B")"
check "re-adopted $A can be pinned: vcpupin $A 1 1" e2e_virsh -q vcpupin "$A" 1 1 --live
expect "e2e_vcpu_affinity $A after re-pin" "0 1
1 1" "$(e2e_vcpu_affinity "$A")"

check "e2e_domain_destroy $A" e2e_domain_destroy "$A"
check "QEMU of $A is gone" not _e2e_pid_alive "$QA"
check "e2e_vcpu_affinity fails for a destroyed domain" quietly not e2e_vcpu_affinity "$A"
# $B is left running on purpose: e2e_libvirt_stop must destroy it.
check "e2e_libvirt_stop (destroys $B)" e2e_libvirt_stop "$WORK"
check "QEMU of $B is gone" not _e2e_pid_alive "$QB"
check "libvirtd and virtlogd are gone" test -z "$(_e2e_live_pids libvirtd)$(_e2e_live_pids virtlogd)"
expect "no machine cgroup left behind" "$CG_BEFORE" "$(machine_cgroups)"
check "e2e_libvirt_stop is idempotent" e2e_libvirt_stop "$WORK"
exit 0
