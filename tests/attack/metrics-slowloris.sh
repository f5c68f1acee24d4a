#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# 2,000 slow HTTP clients hold connections to placementd's metrics port while the daemon runs under
# `ulimit -n 1024` (systemd's default) on libvirt's in-process test driver, starting test domains from a
# trace (--demo). Checks, under the attack: GetStatus p99 < 100 ms, every domain started is placed, SIGHUP
# reload and root's Reload() succeed, a fresh scrape is answered (within three tries), a restarted bus is
# rejoined, the log is not flooded; and after it: metrics answer at once. Prints descriptors in use and
# RSS. Run as root:
#   bash tests/attack/metrics-slowloris.sh [BUILD_DIR]   (ATTACK_SECONDS=N, default 10; SLOW_CLIENTS=N)
# Ends with "metrics-slowloris: N passed, M failed"; exit 77 when a tool it needs is missing.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"
# shellcheck source=demo.sh
. "$HERE/demo.sh"
tap_build "${1:-}"
CLIENT=$BUILD/tests/bus-client
ATTACK=${ATTACK_SECONDS:-10}
SLOW=${SLOW_CLIENTS:-2000}
TOPOLOGY="synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:2 pu:2"
P99_BOUND_MS=100
SCRAPE_BOUND_S=5
SLOW_PID=''

need_root "to raise the clients' descriptor limit"
need dbus-daemon busctl curl python3
{ [ -x "$PLACEMENTD" ] && [ -x "$CLIENT" ]; } || { echo "not built: $PLACEMENTD $CLIENT" >&2; exit 2; }

tap_begin metrics-slowloris
tap_tmpdir slowloris "${KEEP:-}"
TMP=$TAP_TMP
PD_LOG=$TMP/log
tap_cleanup() {
        stop_pid "$SLOW_PID"
        stop_pid "$PD_PID"
        bus_stop
}

bus_start "$TMP"
ADDR=$BUS_ADDR

PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
printf '[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$TMP/conf"
# the trace outlasts the attack: a start or stop every 300 ms
for ((i = 0; i < (ATTACK * 10 / 3 + 30) / 2; i++)); do
        printf 'start d%d 1 1G\nstop d%d\n' "$i" "$i"
done >"$TMP/trace"
(
        ulimit -n 1024
        exec "$PLACEMENTD" --config="$TMP/conf" --connect=test:///default --topology="$TOPOLOGY" \
                --bus-address="$ADDR" --foreground --demo="$TMP/trace" </dev/null 2>"$TMP/log"
) > >(stamp >"$TMP/out") &
PD_PID=$!
for ((i = 0; i < 100; i++)); do curl -fsS -o /dev/null "$URL" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$URL"
result "metrics answer before the attack" $?
FDS_BEFORE=$(find "/proc/$PD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
LOG_BEFORE=$(wc -l <"$TMP/log")

cpu_ticks() { awk '{print $14 + $15}' "/proc/$PD_PID/stat"; }
CPU_BEFORE=$(cpu_ticks)
python3 "$HERE/slow-http.py" "$PORT" "$SLOW" "$ATTACK" >"$TMP/slow" 2>&1 &
SLOW_PID=$!
ATTACK_START=${EPOCHREALTIME/./}
sleep 2 # the clients are connected

FDS=$(find "/proc/$PD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
RSS=$(awk '/VmRSS/ {print $2}' "/proc/$PD_PID/status")
echo "# under attack: placementd holds $FDS descriptors (before: $FDS_BEFORE, limit 1024), RSS $RSS KiB"

"$CLIENT" "$ADDR" probe 3 >"$TMP/probe" 2>&1
PROBE_RC=$?
probe_figures
echo "# GetStatus under attack: p50 ${P50:-?} ms, p99 ${P99:-?} ms, max ${MAX:-?} ms"
p99_below "$P99_BOUND_MS"
result "GetStatus p99 ${P99:-?} ms < $P99_BOUND_MS ms under attack" $?

kill -HUP "$PD_PID"
for ((i = 0; i < 30; i++)); do grep -q "Configuration reloaded\|Reloading the configuration failed" "$TMP/log" && break; sleep 0.1; done
grep -q "Configuration reloaded" "$TMP/log"
RC=$?
result "SIGHUP reload succeeds under attack$(grep -m1 -o "Reloading the configuration failed.*" "$TMP/log" | head -c 200 | sed 's/^/ (/; s/$/)/')" $RC

timeout 10 busctl --address="$ADDR" call org.placementd1 /org/placementd1 org.placementd1.Manager Reload \
        >"$TMP/reload" 2>&1
RC=$?
result "root's Reload() succeeds under attack$( ((RC)) && echo " ($(head -c 200 "$TMP/reload"))")" $RC

# the bus restarts: the daemon must connect again (a descriptor for the socket, one for credentials)
stop_pid "$BUS_PID" KILL
bus_start "$TMP"
t0=${EPOCHREALTIME/./}
for ((i = 0; i < 120; i++)); do
        timeout 5 busctl --address="$ADDR" status org.placementd1 >/dev/null 2>&1 && break
        sleep 0.1
done
timeout 5 busctl --address="$ADDR" status org.placementd1 >/dev/null 2>&1
RC=$?
REJOIN_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
kill -0 "$SLOW_PID" 2>/dev/null
DURING=$?
echo "# dbus-daemon restarted under attack: placementd back on the bus after $REJOIN_MS ms"
WHY="$REJOIN_MS ms"
((RC)) && WHY="not back after $REJOIN_MS ms"
((DURING)) && WHY="$WHY, but the attack had ended"
((RC == 0 && DURING == 0))
result "placementd rejoins a restarted bus while the attack goes on ($WHY)" $?

# A scraper comes back at its next interval: a connection closed before its request was read (at full
# capacity the oldest unfinished request is closed for each new connection, and the flood opens thousands
# a second) is tried again, up to three times.
t0=${EPOCHREALTIME/./}
for ((try = 1; try <= 3; try++)); do
        curl -fsS --max-time 20 -o /dev/null "$URL" 2>"$TMP/curl"
        SCRAPE_RC=$?
        SCRAPE_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
        echo "# a fresh scrape under attack, try $try: exit $SCRAPE_RC after $SCRAPE_MS ms $(head -c 200 "$TMP/curl")"
        ((SCRAPE_RC == 0)) && break
done
result "a fresh scrape is answered under attack ($SCRAPE_MS ms, try $((try > 3 ? 3 : try)) of 3)" "$SCRAPE_RC"

wait "$SLOW_PID"
SLOW_PID=
ATTACK_END=${EPOCHREALTIME/./}
CPU_S=$(awk -v t=$(($(cpu_ticks) - CPU_BEFORE)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }')
echo "# $(cat "$TMP/slow")"
echo "# placementd used $CPU_S s of CPU during the $ATTACK s attack"
t0=${EPOCHREALTIME/./}
curl -fsS --max-time "$SCRAPE_BOUND_S" -o /dev/null "$URL"
RC=$?
echo "# the first scrape after the attack took $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
result "metrics answer within $SCRAPE_BOUND_S s once the attack ends" $RC

placements "$ATTACK_START" "$ATTACK_END"
echo "# domains started during the attack: $STARTED, placed: $PLACED, slowest placement ${WORST} ms"
((STARTED > 0 && PLACED == STARTED))
result "every domain started during the attack is placed ($PLACED of $STARTED)" $?

LOG_LINES=$(($(wc -l <"$TMP/log") - LOG_BEFORE))
LOG_BYTES=$(wc -c <"$TMP/log")
echo "# the log grew by $LOG_LINES lines ($LOG_BYTES bytes in all)"
((LOG_LINES < 50))
result "the log is not flooded ($LOG_LINES lines)" $?
kill -0 "$PD_PID" 2>/dev/null
result "placementd still runs" $?
