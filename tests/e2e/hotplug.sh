#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# End-to-end test of a guest whose online vCPUs are not 0..n-1, against a real libvirtd + QEMU (TCG). Run
# as root:
#   bash tests/e2e/hotplug.sh [BUILD_DIR]
# A guest of 3 hot-pluggable vCPUs with vCPU 1 unplugged (what `virsh setvcpu --disable 1` leaves): vCPUs 0
# and 2 run. The daemon sees a fake host of two nodes whose CPUs are the real ones, so every pin is real.
# Checked against /proc (QEMU's "CPU N/TCG" threads carry libvirt's vCPU ids), libvirt and the record:
#   1. vCPUs 0 and 2 each run on a CPU of their own, as the record says; the record names vCPU 2, not 1;
#      vCPU 1's pin is left as it was.
#      Measured load names vCPUs 0 and 2 (metrics).
#   2. A restarted daemon adopts the record (the pins it names are the ones that run).
#   Each stage ends with the four views (views.sh: placementctl, the record, libvirt --live, /proc) equal.
#   3. vCPU 1 plugged live (virsh setvcpu --enable 1; libvirt sends no event for it, the periodic reconcile
#      sees it): the guest is placed again and all three run as the new record says.
#   4. A guest whose only <vcpupin> is of its unplugged vCPU 2 (cpuset 1): its online vCPUs 0 and 1 are
#      placed, vCPU 2's pin left as the definition has it; plugged in, vCPU 2 runs on CPU 1 and the guest
#      is the user's (skipped, its pins counted as they run).
# Prints "ok N - ..." / "not ok N - ...", and last "e2e-hotplug: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=domains.sh
. "$HERE/domains.sh"
# shellcheck source=views.sh
. "$HERE/views.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"
TOPOLOGY='synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1'
D=${E2E_DOMAIN_PREFIX}sparse

e2e_suite_begin e2e-hotplug
LOG=$PD_LOG

# The record's vCPU pins as "ID CPUSET" lines, sorted by id.
record_pins() {
    pd_meta "$1" | grep -oE "<([A-Za-z0-9_]+:)?vcpu [^>]*>" |
        sed -nE "s/.*id=[\"']([0-9]+)[\"'].*cpuset=[\"']([^\"']*)[\"'].*/\1 \2/p" | sort -n -k1,1
}
# /proc's view of the vCPU threads that run, in the same shape.
proc_pins() { e2e_vcpu_affinity "$1" | sort -n -k1,1; }
# libvirt's live pin of vCPU ID.
virsh_pin() { e2e_virsh vcpupin "$1" --live | awk -v id="$2" '$1 == id":" || $1 == id { print $2 }'; }

tap_cleanup() {
    stop_pid "$PD_PID"
    bus_stop
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
}

must "built binaries in $BUILD" test -x "$PLACEMENTD" -a -x "$PLACEMENTCTL"
must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
must "private dbus-daemon" bus_start "$WORK"
METRICS_PORT=$(free_port)
printf '[Placement]\nReconcileSec=1\nLoadInterval=1\nLoadWarmup=1\n\n[Libvirt]\nURI=%s\n\n[Metrics]\nListen=127.0.0.1:%s\n' \
    "$E2E_LIBVIRT_URI" "$METRICS_PORT" >"$WORK/placementd.conf"
run_daemon() {
    placementd_start --config="$WORK/placementd.conf" --topology="$TOPOLOGY" --bus-address="$BUS_ADDR" \
        --log-level=debug
}
# the four views (placementctl, the record, libvirt --live, /proc) by libvirt's vCPU ids: views.sh
PD_CTL=$PLACEMENTCTL PD_ADDR=$BUS_ADDR
must "views_init" views_init "$TOPOLOGY"
run_daemon
must "placementd connects" wait_for 30 grep -q "Connected to" "$LOG"

# 1. vCPUs 0 and 2 run, vCPU 1 is unplugged.
VCPUS="<vcpu placement='static' current='2'>3</vcpu>
  <vcpus>
    <vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>
    <vcpu id='1' enabled='no' hotpluggable='yes'/>
    <vcpu id='2' enabled='yes' hotpluggable='yes' order='2'/>
  </vcpus>"
must "start $D with vCPU 1 of 0-2 unplugged" dom_create "$D" "$VCPUS"
check "$D: decision recorded" wait_for 10 pd_decided "$D"
expect "$D: placed" "placed" "$(pd_attr result "$(pd_decision "$D")")"
expect "$D: the record names vCPUs 0 and 2" "0 2" "$(record_pins "$D" | awk '{ print $1 }' | paste -sd' ')"
expect "$D: vCPUs 0 and 2 run as recorded (/proc)" "$(record_pins "$D")" "$(proc_pins "$D")"
expect "$D: vCPUs 0 and 2 each on one CPU, not the same" "2" \
    "$(proc_pins "$D" | awk '$2 ~ /^[0-9]+$/ { print $2 }' | sort -u | wc -l)"
expect "$D: vCPU 1, unplugged, keeps libvirt's pin (every CPU)" "0-1" "$(virsh_pin "$D" 1)"
check "placementd did not take the pins for someone else's" sh -c "! grep -q 'by someone else' '$LOG'"
check "$D: placementctl, the record, libvirt and /proc agree" views_domain "$D"
# measured load names the same vCPUs (libvirt's statistics leave vCPU 1 out)
busy_labels() {
    curl -fsS --max-time 3 "http://127.0.0.1:$METRICS_PORT/metrics" |
        sed -nE "s/^placementd_domain_vcpu_busy_ratio\{domain=\"$D\".*vcpu=\"([0-9]+)\"\}.*/\1/p" | paste -sd' '
}
load_measured() { [ -n "$(busy_labels)" ]; }
check "$D: its load measured (metrics)" wait_for 20 load_measured
expect "$D: the load's vCPU labels are libvirt's ids" "0 2" "$(busy_labels)"

# 2. a restarted daemon adopts the record.
stop_pid "$PD_PID"
mark=$(wc -l <"$LOG")
run_daemon
check "placementd connects again" wait_for 30 sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q 'Connected to'"
check "$D: its record adopted" wait_for 10 sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q '$D: .*adopted'"
check "$D: not placed anew" sh -c "! tail -n +$((mark + 1)) '$LOG' | grep -q 'recorded decision not adopted'"
expect "$D: vCPUs 0 and 2 still run as recorded (/proc)" "$(record_pins "$D")" "$(proc_pins "$D")"
check "$D: the four views agree after the restart" views_domain "$D"

# 3. vCPU 1 plugged live: placed again, the three as recorded.
mark=$(wc -l <"$LOG")
must "virsh setvcpu $D --enable 1 --live" e2e_virsh setvcpu "$D" 1 --enable --live
check "$D: placed again after the hot-plug" wait_for 15 sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q '3 vCPUs online'"
record_has_three() { [ "$(record_pins "$D" | wc -l)" -eq 3 ]; }
check "$D: the record names three vCPUs" wait_for 10 record_has_three
expect "$D: vCPUs 0-2 run as recorded (/proc)" "$(record_pins "$D")" "$(proc_pins "$D")"
check "$D: the four views agree after the hot-plug" views_domain "$D"

# 4. a <vcpupin> only of the unplugged vCPU 2 pins nothing that runs: vCPUs 0 and 1 are placed.
P=${E2E_DOMAIN_PREFIX}pinoff
e2e_virsh destroy "$D" >/dev/null 2>&1
PINOFF="<vcpu placement='static' current='2'>3</vcpu>
  <vcpus>
    <vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>
    <vcpu id='1' enabled='yes' hotpluggable='yes' order='2'/>
    <vcpu id='2' enabled='no' hotpluggable='yes'/>
  </vcpus>"
must "start $P with a <vcpupin> only of its unplugged vCPU 2" dom_create "$P" "$PINOFF" \
    "<cputune><vcpupin vcpu='2' cpuset='1'/></cputune>"
check "$P: decision recorded" wait_for 10 pd_decided "$P"
expect "$P: placed" "placed" "$(pd_attr result "$(pd_decision "$P")")"
expect "$P: vCPUs 0 and 1 run as recorded (/proc)" "$(record_pins "$P")" "$(proc_pins "$P")"
expect "$P: the record names vCPUs 0 and 1" "0 1" "$(record_pins "$P" | awk '{ print $1 }' | paste -sd' ')"
expect "$P: vCPU 2, unplugged, keeps the user's pin" "1" "$(virsh_pin "$P" 2)"
check "$P: the four views agree" views_domain "$P"
mark=$(wc -l <"$LOG")
must "virsh setvcpu $P --enable 2 --live" e2e_virsh setvcpu "$P" 2 --enable --live
check "$P: the user's from then on" wait_for 15 sh -c "tail -n +$((mark + 1)) '$LOG' | grep -q '$P: .*pins vCPUs itself'"
# placementctl's result (the record of a transient domain keeps placed: it tells its pins from its user's)
ctl_result() {
    pdctl list --json | python3 -c '
import json, sys
print(*[d["result"] for d in json.load(sys.stdin)["decisions"] if d["domain"] == sys.argv[1]])' "$P"
}
skipped_now() { [ "$(ctl_result)" = skipped ]; }
check "$P: placementctl shows it skipped" wait_for 10 skipped_now
expect "$P: vCPU 2 runs on the user's CPU 1 (/proc)" "1" "$(proc_pins "$P" | awk '$1 == 2 { print $2 }')"

check "placementd still runs" kill -0 "$PD_PID"
exit 0
