#!/bin/bash
# Event to pin on a real libvirtd with QEMU (TCG), beside its floor. Not run in CI; run as root:
#
#   bash bench/event-to-pin-qemu.sh [BUILD_DIR]     (default: build; needs daemon/placementd, bench/pin-floor)
#
# 1. Starts virtlogd + libvirtd with tests/e2e/libvirt-env.sh (waits up to 20 minutes, trying every 60 s,
#    while another libvirtd runs: that one is never touched), then placementd --connect=qemu:///system
#    --topology=host --bus=none with [Metrics] Listen=127.0.0.1:PORT.
# 2. Starts E2P_DOMAINS (20) domains of E2P_VCPUS (2) vCPUs one after another (tests/e2e/domain.xml.in:
#    64 MiB, no disk), each once the previous one is placed. Each domain's event-to-pin latency is the
#    growth of placementd_event_to_pin_seconds_sum (GET /metrics) while its _count grows by one: the
#    daemon's own clock, from its lifecycle callback to the end of applying the plan (vCPU pins,
#    numatune, emulator pin, then the metadata write). Checks that every vCPU thread's affinity equals
#    the pins the daemon logged.
#    placementd runs with libvirt's client log on for its public API calls (LIBVIRT_LOG_FILTERS=
#    "1:libvirt.*", a line per call, millisecond timestamps) to split its time by call.
# 3. Stops placementd, then runs bench/pin-floor: the same number of virDomainPinVcpuFlags(LIVE) calls
#    (one per vCPU of those domains) back to back from a minimal client, E2P_ROUNDS (5) rounds: the
#    floor of the benchmark issue. Then, as a second floor, starts E2P_DOMAINS more domains the same way
#    and runs pin-floor on each as soon as its start returns (one round): the same calls at the moment
#    placementd makes them, while the new QEMU boots.
# 4. Prints both, and the ratio of the daemon's total to the floor's median round (goal: within 1.25x).
# Everything it started is stopped by PID; the domains are destroyed (prefix bench-e2p-).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=tests/e2e/libvirt-env.sh source-path=SCRIPTDIR/..
. "$ROOT/tests/e2e/libvirt-env.sh"
E2E_DOMAIN_PREFIX=bench-e2p-

BUILD=${1:-build}
[ -d "$BUILD" ] || BUILD=$ROOT/$BUILD
BUILD=$(cd "$BUILD" && pwd) || exit 2
PD=$BUILD/daemon/placementd
FLOOR=$BUILD/bench/pin-floor
for b in "$PD" "$FLOOR"; do
        [ -x "$b" ] || { echo "e2p: $b not built (ninja -C $BUILD)" >&2; exit 2; }
done
NDOM=${E2P_DOMAINS:-20}
VCPUS=${E2P_VCPUS:-2}
ROUNDS=${E2P_ROUNDS:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/placementd-e2p.XXXXXX") || exit 2
LOG=$WORK/placementd.log
PD_PID=
LIBVIRT_STARTED=

cleanup() {
        if [ -n "$PD_PID" ]; then
                kill -TERM "$PD_PID" 2>/dev/null
                wait "$PD_PID" 2>/dev/null
        fi
        [ -z "$LIBVIRT_STARTED" ] || e2e_libvirt_stop "$WORK" || echo "e2p: e2e_libvirt_stop failed" >&2
        if [ -n "${E2P_KEEP:-}" ]; then
                echo "e2p: logs kept in $WORK" >&2
        else
                rm -rf "$WORK"
        fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((try = 1; try <= 20; try++)); do
        others=$(_e2e_live_pids libvirtd)
        [ -z "$others" ] && ! E2E_VIRSH_TIMEOUT=5 e2e_virsh version >/dev/null 2>&1 && break
        echo "e2p: another libvirtd runs (pids: ${others:-?}); waiting 60 s (try $try of 20)" >&2
        sleep 60
done
e2e_libvirt_start "$WORK" || exit 1
LIBVIRT_STARTED=1

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[Placement]\nReconcileSec=0\n\n[Libvirt]\nURI=qemu:///system\n\n[DBus]\nBus=none\n\n[Metrics]\nListen=127.0.0.1:%s\n' \
        "$PORT" >"$WORK/placementd.conf"
env -u NOTIFY_SOCKET -u WATCHDOG_USEC LIBVIRT_LOG_OUTPUTS="1:file:$WORK/api.log" LIBVIRT_LOG_FILTERS="1:libvirt.* 4:*" \
        "$PD" --config="$WORK/placementd.conf" --connect=qemu:///system \
        --topology=host --bus=none --foreground --log-level=info </dev/null >"$LOG" 2>&1 &
PD_PID=$!

metric() { curl -fsS "http://127.0.0.1:$PORT/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
for ((i = 0; i < 100; i++)); do
        grep -q 'Connected to qemu:///system' "$LOG" && metric placementd_event_to_pin_seconds_count >/dev/null 2>&1 && break
        sleep 0.1
done
grep -q 'Connected to qemu:///system' "$LOG" || { echo "e2p: placementd did not connect" >&2; tail "$LOG" >&2; exit 1; }

echo "## Event to pin on libvirtd + QEMU (TCG)"
echo
echo "- $(virsh -c qemu:///system version 2>/dev/null | sed -n 's/^Running hypervisor: *//p') (TCG)," \
        "$(virsh -c qemu:///system version 2>/dev/null | sed -n 's/^Using library: *//p');" \
        "$NDOM domains of $VCPUS vCPUs and 64 MiB, started one after another"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
echo
lat=()
create=()
bad=0
for ((i = 0; i < NDOM; i++)); do
        name=$(printf '%s%02d' "$E2E_DOMAIN_PREFIX" "$i")
        c0=$(metric placementd_event_to_pin_seconds_count)
        s0=$(metric placementd_event_to_pin_seconds_sum)
        t0=$(date +%s%N)
        e2e_domain_start "$name" "$VCPUS" || exit 1
        t1=$(date +%s%N)
        for ((w = 0; w < 300; w++)); do
                [ "$(metric placementd_event_to_pin_seconds_count)" -gt "$c0" ] && break
                sleep 0.02
        done
        c1=$(metric placementd_event_to_pin_seconds_count)
        s1=$(metric placementd_event_to_pin_seconds_sum)
        if [ "$c1" -ne $((c0 + 1)) ]; then
                echo "e2p: $name: the histogram counted $((c1 - c0)) decisions, expected 1" >&2
                bad=$((bad + 1))
        fi
        lat+=("$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f", (b - a) * 1e6 }')")
        create+=("$(((t1 - t0) / 1000))")
        # the threads' affinity equals the pins the daemon logged ("NAME: RESULT, vCPU pins 0:1 1:0 (...")
        logged=$(grep -F ">$name: " "$LOG" | grep -F ', vCPU pins ' | tail -n 1 | sed 's/.*, vCPU pins //; s/ (.*//' |
                tr ' ' '\n' | tr ':' ' ' | sort -n)
        actual=$(e2e_vcpu_affinity "$name" | sort -n)
        if [ "$logged" != "$actual" ]; then
                echo "e2p: $name: affinity '${actual//$'\n'/; }' differs from the logged pins '${logged//$'\n'/; }'" >&2
                bad=$((bad + 1))
        fi
done
summary=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{ v[NR] = $1; s += $1 } END {
        p50 = v[int((NR + 1) / 2)]; p99 = v[NR - int(NR / 100)]
        printf "%d %.1f %.1f %.1f %.1f %.1f", NR, s, s / NR, p50, p99, v[NR] }')
read -r n total mean p50 p99 max <<<"$summary"
echo "Daemon (placementd_event_to_pin_seconds, per domain, microseconds): ${lat[*]}"
echo "virsh create, per domain (microseconds, includes QEMU start): ${create[*]}"
echo
kill -TERM "$PD_PID" 2>/dev/null
wait "$PD_PID" 2>/dev/null
PD_PID=

# placementd's time by libvirt call: from a call's entry to the next call's entry (the daemon is one
# thread), for every call it makes to libvirtd on one of our domains (named in the line); millisecond
# timestamps. The domains are counted by name: the daemon reads a domain more than once per start.
echo "placementd's time by libvirt call (mean per domain, ms; from libvirt's client log):"
awk -v prefix="$E2E_DOMAIN_PREFIX" '
        function ms(t,   a) { split(t, a, ":"); return (a[1] * 3600 + a[2] * 60 + a[3]) * 1000 }
        match($0, / debug : vir[A-Za-z]+:[0-9]+ : (dom|conn)=/) {
                fn = substr($0, RSTART + 9); sub(/:.*/, "", fn)
                now = ms(substr($2, 1, 12))
                if (pending != "") dur[pending] += now - since
                pending = ""
                at = index($0, "name=" prefix)
                # calls answered in the client (no round trip to libvirtd) only end the one before them
                if (at && fn ~ /^virDomain[A-Z]/ && fn !~ /^virDomain(GetUUIDString|GetID|GetName|GetConnect|Free|Ref)$/) {
                        pending = fn; since = now
                        if (!(fn in calls)) order[++k] = fn
                        calls[fn]++
                        name = substr($0, at + 5); sub(/[,) ].*/, "", name)
                        if (!(name in seen)) { seen[name] = 1; n++ }
                }
        }
        END {
                for (i = 1; i <= k; i++) {
                        total += dur[order[i]]
                        printf "    %-28s %3d calls, %6.2f ms per domain\n", order[i], calls[order[i]], dur[order[i]] / (n ? n : 1)
                }
                printf "    %-28s %3d domains, %6.2f ms per domain\n", "all of them", n, total / (n ? n : 1)
        }' "$WORK/api.log"
echo

echo "Floor: bench/pin-floor --prefix=$E2E_DOMAIN_PREFIX --rounds=$ROUNDS (placementd stopped first)"
floor_out=$("$FLOOR" --connect=qemu:///system --prefix="$E2E_DOMAIN_PREFIX" --rounds="$ROUNDS") || exit 1
printf '%s\n' "$floor_out" | sed 's/^/    /'
fl=$(printf '%s\n' "$floor_out" | sed -n 's/^floor: //p')
get() { printf '%s\n' "$fl" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
calls=$(get calls)
round=$(get round_us_median)

# The second floor: the same pins made as soon as a new domain's start returns.
at_start=()
for ((i = 0; i < NDOM; i++)); do
        name=$(printf '%ss%02d' "$E2E_DOMAIN_PREFIX" "$i")
        e2e_domain_start "$name" "$VCPUS" || exit 1
        out=$("$FLOOR" --connect=qemu:///system --prefix="$name" --rounds=1) || exit 1
        at_start+=("$(printf '%s\n' "$out" | sed -n 's/^floor: .*round_us_median=\([0-9]*\).*/\1/p')")
done
echo
echo "Floor at start, per domain (microseconds, $VCPUS calls each): ${at_start[*]}"
start_total=$(printf '%s\n' "${at_start[@]}" | awk '{ s += $1 } END { print s }')
echo
echo "| | domains | pin calls | total (ms) | per domain mean (ms) | per domain p50 / p99 / max (ms) |"
echo "|---|---:|---:|---:|---:|---:|"
awk -v n="$n" -v c="$calls" -v t="$total" -v m="$mean" -v a="$p50" -v b="$p99" -v x="$max" 'BEGIN {
        printf "| placementd: lifecycle callback to end of apply | %d | %d | %.1f | %.2f | %.2f / %.2f / %.2f |\n",
                n, c, t / 1000, m / 1000, a / 1000, b / 1000, x / 1000 }'
awk -v n="$n" -v c="$calls" -v r="$round" -v p="$(get call_us_p50)" -v q="$(get call_us_p99)" 'BEGIN {
        printf "| floor: virDomainPinVcpuFlags back to back on running domains (median of rounds) | %d | %d | %.1f | %.2f | per call p50 %.2f, p99 %.2f |\n",
                n, c, r / 1000, r / 1000 / n, p / 1000, q / 1000 }'
awk -v n="$NDOM" -v c="$((NDOM * VCPUS))" -v t="$start_total" 'BEGIN {
        printf "| floor at start: the same calls as soon as each start returns | %d | %d | %.1f | %.2f | |\n",
                n, c, t / 1000, t / 1000 / n }'
echo
awk -v t="$total" -v r="$round" -v s="$start_total" 'BEGIN {
        printf "Ratio placementd / floor: %.2fx (goal: within 1.25x); placementd / floor at start: %.2fx\n", t / r, t / s }'
echo "Checks: $([ "$bad" -eq 0 ] && echo "every domain placed once, thread affinity = logged pins: ok" || echo "$bad FAILED")"
[ "$bad" -eq 0 ]
