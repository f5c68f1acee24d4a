#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# End-to-end test of placementd against a real libvirtd + QEMU (TCG). Run as root from anywhere:
#   bash tests/e2e/run.sh [BUILD_DIR]          (BUILD_DIR: default "build", relative to the cwd or the repo)
# Prints "ok N - ..." / "not ok N - ..." per check, diagnostics as "# ...", and last exactly
# "e2e: N passed, M failed"; exits non-zero when a check failed. Logs are kept on failure (or with E2E_KEEP=1).
# The reference for every pin is the decision placementd recorded in the domain's metadata: nothing expected
# is hard-coded. See tests/e2e/README.md.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"

NS=https://placementd.org/xmlns/domain/1
URI=$E2E_LIBVIRT_URI
A=${E2E_DOMAIN_PREFIX}a
B=${E2E_DOMAIN_PREFIX}b
C=${E2E_DOMAIN_PREFIX}c

tap_begin e2e
tap_tmpdir e2e "${E2E_KEEP:-}"
TAP_KEEP_FAILED=1
WORK=$TAP_TMP
CONF=$WORK/placementd.conf
LOG=$WORK/placementd.log
PD_LOG=$LOG
: >"$LOG"

# ------------------------------------------------------------------------------------------ helpers

# cpuset_norm LIST: "0-2,5" -> "0,1,2,5" (sorted, unique), so that lists compare whatever their spelling.
cpuset_norm() {
    local part a b out=()
    local IFS=,
    for part in $1; do
        part=${part//[[:space:]]/}
        [ -n "$part" ] || continue
        if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
            a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]}
            while [ "$a" -le "$b" ]; do out+=("$a"); a=$((a + 1)); done
        elif [[ $part =~ ^[0-9]+$ ]]; then
            out+=("$part")
        else
            out+=("?$part")
        fi
    done
    [ "${#out[@]}" -gt 0 ] || return 0
    printf '%s\n' "${out[@]}" | sort -n -u | paste -sd,
}

# pins_norm: stdin "INDEX LIST" lines -> same with normalized lists, sorted by index.
pins_norm() {
    local idx list
    while read -r idx list; do
        [ -n "$idx" ] && echo "$idx $(cpuset_norm "$list")"
    done | sort -n -k1,1
}

# attr NAME ELEMENT: the value of attribute NAME in the element text.
attr() { sed -nE "s/.*[[:space:]]$1=[\"']([^\"']*)[\"'].*/\1/p" <<<"$2"; }

meta() { e2e_virsh metadata "$1" --uri "$NS" --live 2>/dev/null; }
decision_elem() { grep -oE "<([A-Za-z0-9_]+:)?decision[[:space:]][^>]*>" <<<"$1" | head -n 1; }
decision_result() { attr result "$(decision_elem "$1")"; }
decision_emulator() { attr emulator "$(decision_elem "$1")"; }
# decision_pins XML: "ID CPULIST" per <vcpu> of the recorded decision, normalized.
decision_pins() {
    local el
    grep -oE "<([A-Za-z0-9_]+:)?vcpu[[:space:]][^>]*>" <<<"$1" | while IFS= read -r el; do
        echo "$(attr id "$el") $(attr cpuset "$el")"
    done | pins_norm
}
affinity() { e2e_vcpu_affinity "$1" | pins_norm; }
pins_text() { awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $1, $2 }' <<<"$1"; }   # "0 1\n1 2" -> "0:1 1:2"
emulator_affinity() { cpuset_norm "$(e2e_emulator_affinity "$1")"; }

# The daemon's log from line MARK+1 on (MARK from log_mark).
log_mark() { wc -l <"$LOG"; }
log_since() { tail -n +"$(($1 + 1))" "$LOG"; }
log_has() { log_since "$1" | grep -qE -- "$2"; }          # MARK ERE
log_count() { log_since "$1" | grep -cE -- "$2"; }        # MARK ERE

# has_decision NAME [RESULT]: NAME's live metadata holds a decision (with that result); sets META.
META=
has_decision() {
    META=$(meta "$1") || return 1
    [ -n "$(decision_elem "$META")" ] || return 1
    [ -z "${2:-}" ] || [ "$(decision_result "$META")" = "$2" ]
}

# log_pins MARK NAME: the pins of NAME's last decision line after MARK ("<6>NAME: RESULT, vCPU pins 0:1 1:2-3 (...",
# "<6>NAME: adopted from its record ...: RESULT, vCPU pins 0:1 (recorded reason: ...").
log_pins() {
    local line
    line=$(log_since "$1" | grep -F -- ">$2: " | grep -F ', vCPU pins ' | tail -n 1)
    [ -n "$line" ] || return 1
    line=${line#*, vCPU pins }
    line=${line%% (*}
    tr ' ' '\n' <<<"$line" | tr ':' ' ' | pins_norm
}

start_placementd() {
    placementd_start --config="$CONF" --connect="$URI" --topology=host --log-level=debug
    diag "placementd pid $PD_PID"
    sleep 0.2
    placementd_alive
}

# check_placed NAME VCPUS MARK: the recorded decision, the QEMU threads and the daemon's log agree.
# Sets DEC_PINS and DEC_RESULT from the decision.
check_placed() {
    local name=$1 mark=$3 dec aff emu res lp
    DEC_PINS='' DEC_RESULT=''
    if ! wait_for 10 has_decision "$name"; then
        not_ok "$name: decision recorded in its live metadata within 10 s"
        diag "  virsh metadata $name: $(meta "$name" | tr '\n' ' ')"
        not_ok "$name: vCPU thread affinity equals the decision"
        return 1
    fi
    res=$(decision_result "$META")
    ok "$name: decision recorded in its live metadata (result $res)"
    dec=$(decision_pins "$META")
    aff=$(affinity "$name")
    expect "$name: vCPU thread affinity equals the decision (vCPU:CPUs $(pins_text "$dec"))" "$dec" "$aff"
    [ "$(wc -l <<<"$dec")" -eq "$2" ] || diag "  the decision lists $(grep -c . <<<"$dec") vCPUs, the domain has $2"
    emu=$(decision_emulator "$META")
    if [ -n "$emu" ]; then
        expect "$name: emulator thread affinity equals the decision ($emu)" "$(cpuset_norm "$emu")" "$(emulator_affinity "$name")"
    else
        diag "$name: the decision has no emulator pin"
    fi
    wait_for 2 log_pins "$mark" "$name" >/dev/null
    lp=$(log_pins "$mark" "$name")
    expect "$name: the daemon's log line names the same pins" "$dec" "$lp"
    log_since "$mark" | grep -F -- ">$name: " | sed "s/^/#   /"
    DEC_PINS=$dec
    DEC_RESULT=$res
}

# ------------------------------------------------------------------------------------------ cleanup

tap_cleanup() {
    if placementd_alive; then
        placementd_stop
    fi
    PD_PID=
    if ! e2e_libvirt_stop "$WORK"; then
        not_ok "cleanup: e2e_libvirt_stop (libvirtd, virtlogd and the domains stopped by PID)"
    fi
}

# ------------------------------------------------------------------------------------------ 1. libvirtd

must "placementd and placementctl are built in $BUILD" test -x "$PLACEMENTD" -a -x "$PLACEMENTCTL"
must "e2e_libvirt_start: libvirtd + virtlogd answer on $URI" e2e_libvirt_start "$WORK"
diag "libvirtd pid $(cat "$WORK/libvirtd.pid"), conf mode $(cat "$WORK/conf-mode"), work dir $WORK"

# ------------------------------------------------------------------------------------------ 2. placementd

TOPO=$("$PLACEMENTCTL" topology --topology=host 2>&1)
check "placementctl topology --topology=host" test $? -eq 0
diag "$TOPO"
NCORES=$(sed -nE 's/^host: .* ([0-9]+) cores?, .*/\1/p' <<<"$TOPO")
ONLINE=$(cpuset_norm "$(cat /sys/devices/system/cpu/online)")
diag "online CPUs: $ONLINE; cores per placementctl: ${NCORES:-?}"
[ "${NCORES:-0}" -ge 2 ] || diag "WARNING: fewer than 2 cores; two 1-vCPU domains cannot get a core each"

METRICS_PORT=$(free_port)
printf '[Placement]\nReconcileSec=0\n\n[Libvirt]\nURI=%s\n\n[DBus]\nBus=none\n\n[Metrics]\nListen=127.0.0.1:%s\n' \
    "$URI" "$METRICS_PORT" >"$CONF"
MARK=$(log_mark)
must "placementd starts (--topology=host, config $CONF)" start_placementd
check "placementd connects to $URI" wait_for 10 log_has "$MARK" "Connected to $URI"

# ------------------------------------------------------------------------------------------ 3. placement

MARK=$(log_mark)
must "e2e_domain_start $A 1" e2e_domain_start "$A" 1
check_placed "$A" 1 "$MARK"
A_PINS=$DEC_PINS A_RESULT=$DEC_RESULT
MARK=$(log_mark)
must "e2e_domain_start $B 1" e2e_domain_start "$B" 1
check_placed "$B" 1 "$MARK"
B_PINS=$DEC_PINS B_RESULT=$DEC_RESULT
expect "$A and $B are both placed (a free core each)" "placed placed" "$A_RESULT $B_RESULT"
A0=$(awk '$1 == 0 { print $2 }' <<<"$A_PINS")
B0=$(awk '$1 == 0 { print $2 }' <<<"$B_PINS")
disjoint() { [ -n "$A0" ] && [ -n "$B0" ] && [ -z "$(comm -12 <(tr , '\n' <<<"$A0" | sort) <(tr , '\n' <<<"$B0" | sort))" ]; }
check "$A and $B are pinned to disjoint CPUs ($A0 / $B0)" disjoint

# ------------------------------------------------------------------------------------------ 4. hand pin

# Another online CPU than the one the daemon chose for vCPU 0 of $A.
OTHER=
for cpu in ${ONLINE//,/ }; do
    case ",$A0," in *",$cpu,"*) ;; *) OTHER=$cpu; break ;; esac
done

# A pin undone before its events are read (as two moves in a row are): the daemon is stopped while
# vCPU 0 of $A goes to $OTHER and back; the events it reads then are not what runs, and nothing is adopted.
# The events of one burst are judged together, by the last pin of each vCPU: here the decision's own.
MARK=$(log_mark)
if [ -n "$OTHER" ] && kill -STOP "$PD_PID"; then
    e2e_virsh -q vcpupin "$A" 0 "$OTHER" --live >/dev/null
    e2e_virsh -q vcpupin "$A" 0 "$A0" --live >/dev/null
    kill -CONT "$PD_PID"
    check "daemon log: the burst's last pin of vCPU 0 read as the echo of the decision's own" \
        wait_for 5 log_has "$MARK" ">$A: cputune.vcpupin0=$A0 is the echo of our own pin"
    not_adopted() { ! log_has "$MARK" ">$A: skipped"; }
    check "$A: still placed, nothing adopted" not_adopted
    expect "$A: vCPU 0 runs where the decision says" "0 $A0" "$(affinity "$A" | awk '$1 == 0')"
fi

MARK=$(log_mark)
if [ -n "$OTHER" ]; then
    check "virsh vcpupin $A 0 $OTHER --live (by hand)" e2e_virsh -q vcpupin "$A" 0 "$OTHER" --live
else
    not_ok "virsh vcpupin $A 0 <another CPU> --live: no CPU other than '$A0' is online"
    OTHER=$A0
fi
check "daemon log: $A's vCPU 0 pinned to $OTHER by someone else, adopted" \
    wait_for 5 log_has "$MARK" ">$A: skipped.*vCPU 0 was pinned to $OTHER by someone else"
if wait_for 5 has_decision "$A" skipped; then
    ok "$A: metadata decision result becomes \"skipped\""
    expect "$A: the recorded decision now holds the hand pin" "0 $OTHER" "$(decision_pins "$META")"
else
    not_ok "$A: metadata decision result becomes \"skipped\" (is: $(decision_result "$(meta "$A")"))"
    not_ok "$A: the recorded decision now holds the hand pin"
fi
sleep 2
expect "$A: 2 s later vCPU 0 is still where the user pinned it (not fought)" "0 $OTHER" "$(affinity "$A")"
log_since "$MARK" | grep -F -- ">$A: " | sed "s/^/#   /"

# ------------------------------------------------------------------------------------------ 5. restart

BEFORE=
snapshot() {
    local d
    for d in "$A" "$B"; do
        echo "$d vcpus $(affinity "$d" | tr '\n' ';') emulator $(emulator_affinity "$d")"
    done
}
BEFORE=$(snapshot)
placementd_stop
expect "placementd exits with status 0 on SIGTERM" 0 "$PD_RC"
MARK=$(log_mark)
must "placementd starts again" start_placementd
check "placementd connects to $URI again" wait_for 10 log_has "$MARK" "Connected to $URI"
for d in "$A" "$B"; do
    check "daemon log: running $d adopted from its recorded decision" wait_for 10 log_has "$MARK" ">$d: adopted from its record .*\(recorded reason: "
done
log_since "$MARK" | grep -E -- ">($A|$B): " | sed "s/^/#   /"
sleep 1
expect "vCPU and emulator affinity of $A and $B unchanged by the restart" "$BEFORE" "$(snapshot)"

# ------------------------------------------------------------------------------------------ 6. libvirtd loss

MARK=$(log_mark)
must "e2e_libvirt_kill9 (SIGKILL libvirtd)" e2e_libvirt_kill9 "$WORK"
sleep 2
T_UP=$(date +%s%N)
must "e2e_libvirt_restart (libvirtd re-adopts the QEMUs)" e2e_libvirt_restart "$WORK"
if wait_for 20 log_has "$MARK" "Connected to $URI"; then
    ok "placementd reconnects by itself ($((($(date +%s%N) - T_UP) / 1000000)) ms after libvirtd was restarted)"
else
    not_ok "placementd reconnects by itself within 20 s"
fi
log_since "$MARK" | grep -vE '^<7>' | sed "s/^/#   /"
check "placementd still runs after losing libvirtd" placementd_alive
expect "vCPU and emulator affinity of $A and $B unchanged by the libvirtd loss" "$BEFORE" "$(snapshot)"
MARK=$(log_mark)
must "e2e_domain_start $C 1" e2e_domain_start "$C" 1
check_placed "$C" 1 "$MARK"
check "placementd still runs (kill -0)" kill -0 "$PD_PID"

# ------------------------------------------------------------------------------------------ 7. release

MARK=$(log_mark)
check "e2e_domain_destroy $B" e2e_domain_destroy "$B"
check "daemon log: $B stopped, its cores and memory are free again" \
    wait_for 5 log_has "$MARK" ">$B: stopped; its cores and memory are free again"

# ------------------------------------------------------------------------------------------ 8. SIGHUP

MARK=$(log_mark)
printf '[Placement]\nPolicy=bogus\n' >"$CONF"
kill -HUP "$PD_PID"
check "SIGHUP with Policy=bogus: 'Reloading the configuration failed, keeping the old one' naming Policy" \
    wait_for 5 log_has "$MARK" "Reloading the configuration failed, keeping the old one.*Policy"
log_since "$MARK" | sed "s/^/#   /"
sleep 0.5
check "placementd still runs after the failed reload" placementd_alive

# ------------------------------------------------------------------------------------------ burst + SIGKILL
# libvirtd killed with SIGKILL in the middle of a burst of starts, then restarted: every running domain
# ends up placed exactly once, and what the daemon counts (metrics) matches what runs.
BURST_MARK=$(log_mark)
(
    for i in 1 2 3 4 5 6; do e2e_domain_start "${E2E_DOMAIN_PREFIX}burst$i" 1 >/dev/null 2>&1; done
) &
BURST_PID=$!
sleep 0.8
check "e2e_libvirt_kill9 in the middle of the burst" e2e_libvirt_kill9 "$WORK"
wait "$BURST_PID" 2>/dev/null
check "e2e_libvirt_restart after the burst" e2e_libvirt_restart "$WORK"
check "placementd reconnects after the burst" wait_for 20 log_has "$BURST_MARK" "Connected to $URI"
burst_running() { e2e_virsh list --name 2>/dev/null | grep -E "^${E2E_DOMAIN_PREFIX}burst" || true; }
# A start the SIGKILL cut during QEMU's handshake is kept by libvirt 9.0 with no QEMU and a job it never
# ends nor reports (wedged.sh holds the daemon to that case): such domains are dropped here.
GHOSTS=$(for d in $(burst_running); do e2e_qemu_pid "$d" >/dev/null 2>&1 || echo "$d"; done)
if [ -n "$GHOSTS" ]; then
    diag "libvirt keeps starts the SIGKILL cut with no QEMU: $(echo "$GHOSTS" | tr '\n' ' ')"
    GHOST_MARK=$(log_mark)
    check "libvirtd restarted without them" e2e_libvirt_drop_ghosts "$WORK"
    check "placementd reconnects after that" wait_for 20 log_has "$GHOST_MARK" "Connected to $URI"
fi
all_burst_decided() {
    local d
    for d in $(burst_running); do has_decision "$d" || return 1; done
}
check "every running burst domain has a recorded decision" wait_for 10 all_burst_decided
# A heal move later (its reason starts "healed:") is a new decision, not the start's again; so is the one at
# the start event of a domain libvirt came back with as still starting (killed before it saved that the
# start had ended): counted from the line that says so.
once_each() {
    local d c from
    for d in $(burst_running); do
        from=$(log_since "$BURST_MARK" | grep -n -- "^<6>$d: its start has not ended" | tail -n 1 | cut -d: -f1)
        c=$(log_since "$BURST_MARK" | tail -n +"${from:-1}" |
            grep -E -- "<[456]>$d: (placed|overcommitted|unplaceable|skipped)" | grep -cv -- "(healed: ")
        [ "$c" -eq 1 ] || { diag "$d decided $c times at start"; return 1; }
    done
}
check "each of the $(burst_running | wc -l) running burst domains was decided exactly once" once_each
ledger_matches() {
    local counted running
    counted=$(curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" | awk '/^placementd_domains\{/ { n += $NF } END { print n + 0 }')
    running=$(e2e_virsh list --name 2>/dev/null | grep -c .)
    diag "daemon counts $counted domains, libvirt runs $running"
    [ "$counted" -eq "$running" ]
}
check "the daemon's domains match what runs after the SIGKILL" wait_for 5 ledger_matches

# ------------------------------------------------------------------------------------------ metrics
# Host-side CPU time per domain from real QEMU: guest vCPU time and the host's own work for it.
cpu_metric_positive() { # domain kind
    curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" |
        awk -v d="domain=\"$1\"" -v k="kind=\"$2\"" 'index($0, "placementd_domain_cpu_seconds_total{") == 1 &&
            index($0, d) && index($0, k) { found = 1; if ($NF > 0) ok = 1 } END { exit !(found && ok) }'
}
# (a page is rendered at most once a second: each check scrapes again until it shows)
check "metrics: $A has guest vCPU time above 0" wait_for 3 cpu_metric_positive "$A" vcpu
check "metrics: $A has host (emulator) time above 0" wait_for 3 cpu_metric_positive "$A" host
check "metrics: $C has system time reported" wait_for 3 sh -c "curl -fsS http://127.0.0.1:$METRICS_PORT/metrics | grep -q 'domain=\"$C\".*kind=\"system\"'"

# ------------------------------------------------------------------------------------------ a wedged domain
# $C's QEMU stopped (SIGSTOP) while a monitor command holds its job: libvirt keeps the job until QEMU
# answers, and any call that needs it waits 30 s. The daemon's load sample (every 5 s) must not: its
# metrics answer within 3 s through two samples. Then QEMU runs again and the job ends.
C_PID=$(e2e_qemu_pid "$C")
metrics_quick() { curl -fsS --max-time 3 "http://127.0.0.1:$METRICS_PORT/metrics" >/dev/null; }
if [ -n "$C_PID" ] && kill -STOP "$C_PID"; then
    (e2e_virsh qemu-monitor-command "$C" '{"execute":"query-status"}' >/dev/null 2>&1 &)
    sleep 6
    check "metrics answer while $C's job is held" metrics_quick
    sleep 6
    check "metrics still answer a sample later" metrics_quick
    kill -CONT "$C_PID"
    check "placementd still runs with $C wedged and released" placementd_alive
else
    check "stop $C's QEMU (pid ${C_PID:-none})" false
fi

exit 0
