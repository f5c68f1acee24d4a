#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# placementd's privileged methods through a real polkit: a dbus-daemon with the system configuration on a
# private socket, polkitd on that bus, a rules file that allows one user (daemon) org.placementd1.manage, and
# placementd serving on that bus. Checks: root may, the allowed user may, another user (nobody) gets
# NotPermitted; with polkitd stopped only root may and the log says so once; polkitd back, the user may again.
# Run as root: bash tests/polkit/run.sh [BUILD_DIR]  (POLKIT_TEST_KEEP=1 keeps the temp dir). Exits 77 when
# polkitd or dbus-daemon is missing. The last line is "polkit: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:-build}
[ -d "$BUILD" ] || BUILD=$ROOT/$BUILD
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "no build directory ${1:-build}" >&2; exit 2; }
PLACEMENTD=$BUILD/daemon/placementd
POLKITD=/usr/lib/polkit-1/polkitd
ACTIONS=/usr/share/polkit-1/actions
RULES_DIR=/etc/polkit-1/rules.d
NAME=org.placementd1
OPATH=/org/placementd1
IFACE=org.placementd1.Manager
ALLOWED=daemon # an existing system user the rules file allows; nobody is not allowed
AS_ALLOWED=(setpriv --reuid="$ALLOWED" --regid="$ALLOWED" --clear-groups)
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

if [ "$(id -u)" -ne 0 ]; then echo "polkit: needs root (skipped)"; exit 77; fi
for f in "$POLKITD" /usr/bin/dbus-daemon /usr/share/dbus-1/system.conf; do
    [ -e "$f" ] || { echo "polkit: $f is missing (skipped)"; exit 77; }
done
for tool in busctl setpriv timeout; do
    command -v "$tool" >/dev/null || { echo "polkit: $tool is missing (skipped)"; exit 77; }
done
if ! id "$ALLOWED" >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
    echo "polkit: users $ALLOWED and nobody are needed (skipped)"
    exit 77
fi

PASS=0 FAIL=0 N=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/placementd-polkit.XXXXXX") || exit 1
chmod 755 "$TMP" # the bus (messagebus) and the non-root clients must reach the socket
ADDR=unix:path=$TMP/bus
LOG=$TMP/placementd.log
OUT=$TMP/out ERR=$TMP/err RC=0
BUS_PID='' PK_PID='' PD_PID='' MON_PID=''
RULES=$RULES_DIR/49-placementd-test-$$.rules
POLICY=$ACTIONS/org.placementd1.policy
POLICY_SAVED='' POLICY_INSTALLED=''

ok() { N=$((N + 1)); PASS=$((PASS + 1)); echo "ok $N - $*"; }
not_ok() {
    N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N - $*"
    echo "#   rc=$RC stdout: $(head -c 300 "$OUT" 2>/dev/null | tr '\n' ';')"
    echo "#   stderr: $(tail -n 2 "$ERR" 2>/dev/null | head -c 300 | tr '\n' ';')"
}
check() { if [ "$2" -eq 0 ]; then ok "$1"; else not_ok "$1"; fi; }
must() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; exit 1; fi; }

stop_pid() {
    local pid=$1 i
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$MON_PID"
    stop_pid "$PD_PID"
    [ -z "$PK_PID" ] || kill -CONT "$PK_PID" 2>/dev/null
    stop_pid "$PK_PID"
    stop_pid "$BUS_PID"
    rm -f "$RULES"
    if [ -n "$POLICY_SAVED" ]; then cp "$POLICY_SAVED" "$POLICY"; elif [ -n "$POLICY_INSTALLED" ]; then rm -f "$POLICY"; fi
    if [ "$FAIL" -gt 0 ] || [ "$rc" -ne 0 ]; then
        echo "# ---- placementd log ----"; tail -n 30 "$LOG" 2>/dev/null | sed 's/^/# /'
        echo "# ---- polkitd log ----"; tail -n 30 "$TMP/polkitd.log" 2>/dev/null | sed 's/^/# /'
    fi
    if [ -n "${POLKIT_TEST_KEEP:-}" ]; then echo "# kept $TMP"; else rm -rf "$TMP"; fi
    echo "polkit: $PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ] && [ "$rc" -eq 0 ] && exit 0
    exit 1
}
trap cleanup EXIT
trap 'echo "# interrupted"; FAIL=$((FAIL + 1)); exit 130' INT TERM

wait_for() { # SECONDS CMD...: poll every 0.1 s
    local n=$(($1 * 10)) i
    shift
    for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
    return 1
}
on_bus() { timeout 5 busctl --address="$ADDR" status "$1" >/dev/null 2>&1; }
# call [USER-PREFIX...] -- METHOD: busctl call; the D-Bus error name of a failure in $ENAME
call() {
    local pre=()
    while [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    SYSTEMD_LOG_LEVEL=debug timeout 30 "${pre[@]}" busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" "$@" \
        >"$OUT" 2>"$ERR"
    RC=$?
    ENAME=$(sed -n 's/.*type=error .*error-name=\([^ ]*\).*/\1/p' "$ERR" | head -n 1)
    return $RC
}
fallback_lines() { grep -c "polkit is not available" "$LOG"; }

start_polkitd() {
    DBUS_SYSTEM_BUS_ADDRESS=$ADDR "$POLKITD" </dev/null >>"$TMP/polkitd.log" 2>&1 &
    PK_PID=$!
    wait_for 10 on_bus org.freedesktop.PolicyKit1
}

# ---- setup: the system bus, the action, the rules, polkitd, placementd ------------------------------------
# The system configuration with placementd's bus policy from this tree. No service helper: polkit must not be
# activated behind the test's back when it is stopped on purpose.
cat >"$TMP/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/system.conf</include>
  <servicehelper>/bin/false</servicehelper>
  <include>$ROOT/systemd/org.placementd1.conf</include>
</busconfig>
CONF
: >"$TMP/bus.addr"
dbus-daemon --config-file="$TMP/bus.conf" --address="$ADDR" --nofork --nopidfile --nosyslog --print-address=3 \
    3>"$TMP/bus.addr" </dev/null >"$TMP/dbus-daemon.log" 2>&1 &
BUS_PID=$!
must "system-configuration dbus-daemon on $ADDR (pid $BUS_PID)" wait_for 10 grep -q "^$ADDR" "$TMP/bus.addr"

if [ -e "$POLICY" ]; then
    cmp -s "$POLICY" "$ROOT/systemd/org.placementd1.policy" || { POLICY_SAVED=$TMP/saved.policy; cp "$POLICY" "$POLICY_SAVED"; }
else
    POLICY_INSTALLED=1
fi
cp "$ROOT/systemd/org.placementd1.policy" "$POLICY"
cat >"$RULES" <<RULES
// placementd's polkit test: $ALLOWED may manage placement (removed when the test ends)
polkit.addRule(function(action, subject) {
        if (action.id == "org.placementd1.manage" && subject.user == "$ALLOWED")
                return polkit.Result.YES;
});
RULES
must "polkitd owns org.freedesktop.PolicyKit1" start_polkitd

"$PLACEMENTD" --connect=test:///default --topology="synthetic:pack:1 numa:1(memory=4GiB) core:2 pu:2" \
    --bus-address="$ADDR" --foreground --log-level=debug </dev/null >"$LOG" 2>&1 &
PD_PID=$!
must "placementd serves $NAME on that bus (pid $PD_PID)" wait_for 10 on_bus "$NAME"

# ---- polkit running ------------------------------------------------------------------------------------
call -- Rebalance
check "root may Rebalance" $?
call "${AS_ALLOWED[@]}" -- Rebalance
check "$ALLOWED (allowed by the rules file) may Rebalance" "$(grep -q '^us [0-9]' "$OUT"; echo $?)"
call "${AS_ALLOWED[@]}" -- Reload
check "$ALLOWED may Reload" $?
call "${AS_NOBODY[@]}" -- Rebalance
check "nobody gets NotPermitted for Rebalance ($ENAME)" "$([ "$ENAME" = org.placementd1.Error.NotPermitted ]; echo $?)"
check "the refusal names the polkit action" "$(grep -q 'polkit action org.placementd1.manage' "$ERR"; echo $?)"
call "${AS_NOBODY[@]}" -- Replace s nosuch
check "nobody gets NotPermitted for Replace ($ENAME)" "$([ "$ENAME" = org.placementd1.Error.NotPermitted ]; echo $?)"
check "no fallback while polkit answers" "$([ "$(fallback_lines)" -eq 0 ]; echo $?)"

# Each refusal costs a question to polkit, so privileged calls count against the caller's rate limit like
# any other: one connection's burst of Rebalance calls ends in LimitExceeded, and polkit is not flooded.
run_client() { timeout 60 "$@" >"$OUT" 2>"$ERR"; RC=$?; }
run_client "${AS_NOBODY[@]}" "$BUILD/tests/bus-client" "$ADDR" rebalance 40
echo "# figure: nobody, one connection: $(cat "$OUT")"
check "a burst of Rebalance calls from nobody: refused by polkit, then rate limited" "$(
    grep -q 'NotPermitted' "$OUT" && grep -q 'LimitExceeded' "$OUT"; echo $?)"

# The question is asynchronous: with polkitd frozen, a pending check must not stop the daemon from answering.
busctl --address="$ADDR" monitor org.freedesktop.PolicyKit1 >"$TMP/monitor.out" 2>&1 &
MON_PID=$!
wait_for 10 grep -q . "$TMP/monitor.out" # the monitor is listening
kill -STOP "$PK_PID"
"${AS_ALLOWED[@]}" timeout 60 busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" Rebalance >"$TMP/pending.out" 2>&1 &
PENDING=$!
# placementd has asked once the question is on the bus (the monitor started before the call)
wait_for 10 grep -q 'Member=CheckAuthorization' "$TMP/monitor.out"
check "placementd asked polkit CheckAuthorization" $?
stop_pid "$MON_PID"
# answered, and the Rebalance still waiting: a daemon that blocked on polkit would answer only after its
# own call to polkit gave up, and the Rebalance would have ended with it
call -- GetStatus
check "while polkit has not answered, placementd answers GetStatus" "$(
    [ "$RC" -eq 0 ] && kill -0 "$PENDING" 2>/dev/null; echo $?)"
kill -CONT "$PK_PID"
wait "$PENDING"
check "once polkit answers, the waiting Rebalance succeeds" "$(grep -q '^us [0-9]' "$TMP/pending.out"; echo $?)"

# within one user's burst (20 calls at once, 5 per second), so every call is timed through polkit
CALLS=10 ANSWERED=0
T0=$(date +%s%N)
for ((i = 0; i < CALLS; i++)); do
    "${AS_ALLOWED[@]}" busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" Rebalance >/dev/null 2>&1 &&
        ANSWERED=$((ANSWERED + 1))
done
echo "# figure: $(( ($(date +%s%N) - T0) / 1000 / CALLS )) us per Rebalance through polkit (busctl as $ALLOWED, $CALLS calls)"
check "$CALLS Rebalance calls as $ALLOWED through polkit all answered" "$([ "$ANSWERED" -eq "$CALLS" ]; echo $?)"
# the per-user bucket refills (20 tokens at 5 per second) so the calls below are judged by polkit alone
sleep 4

# ---- polkit stopped: root only, said once ---------------------------------------------------------------
stop_pid "$PK_PID"
PK_PID=''
must "polkitd stopped" wait_for 10 eval '! on_bus org.freedesktop.PolicyKit1'
call "${AS_ALLOWED[@]}" -- Rebalance
check "without polkit $ALLOWED gets NotPermitted ($ENAME)" "$([ "$ENAME" = org.placementd1.Error.NotPermitted ]; echo $?)"
check "the refusal says polkit is not available" "$(grep -q 'polkit is not available' "$ERR"; echo $?)"
call "${AS_ALLOWED[@]}" -- Reload
call -- Rebalance
check "without polkit root may Rebalance" $?
check "the log says root-only once for two refusals" "$([ "$(fallback_lines)" -eq 1 ]; echo $?)"
check "placementd is still running" "$(kill -0 "$PD_PID"; echo $?)"

# ---- polkit back ----------------------------------------------------------------------------------------
must "polkitd started again" start_polkitd
call "${AS_ALLOWED[@]}" -- Rebalance
check "with polkit back $ALLOWED may Rebalance again" $?
