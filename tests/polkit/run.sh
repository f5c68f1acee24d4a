#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# placementd's privileged methods through a real polkit: a dbus-daemon with the system configuration on a
# private socket, polkitd on that bus, a rules file that allows one user (daemon) org.placementd1.manage, and
# placementd serving on that bus. Checks: root may, the allowed user may, another user (nobody) gets
# NotPermitted; with polkitd stopped only root may and the log says so once; polkitd back, the user may again.
# Run as root: bash tests/polkit/run.sh [BUILD_DIR]  (POLKIT_TEST_KEEP=1 keeps the temp dir). Exits 77 when
# polkitd or dbus-daemon is missing. The last line is "polkit: N passed, M failed".
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
tap_build "${1:-}"
POLKITD=/usr/lib/polkit-1/polkitd
ACTIONS=/usr/share/polkit-1/actions
RULES_DIR=/etc/polkit-1/rules.d
NAME=org.placementd1
OPATH=/org/placementd1
IFACE=org.placementd1.Manager
ALLOWED=daemon # an existing system user the rules file allows; nobody is not allowed
AS_ALLOWED=(setpriv --reuid="$ALLOWED" --regid="$ALLOWED" --clear-groups)
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)

need_root "polkit"
for f in "$POLKITD" /usr/bin/dbus-daemon /usr/share/dbus-1/system.conf; do
    [ -e "$f" ] || tap_skip "$f is missing"
done
need busctl setpriv timeout
if ! id "$ALLOWED" >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
    tap_skip "users $ALLOWED and nobody are needed"
fi

tap_begin polkit
tap_tmpdir polkit "${POLKIT_TEST_KEEP:-}"
TMP=$TAP_TMP
chmod 755 "$TMP" # the bus (messagebus) and the non-root clients must reach the socket
ADDR=unix:path=$TMP/bus
LOG=$TMP/placementd.log
PD_LOG=$LOG
OUT=$TMP/out ERR=$TMP/err RC=0
PK_PID='' MON_PID=''
RULES=$RULES_DIR/49-placementd-test-$$.rules
POLICY=$ACTIONS/org.placementd1.policy
POLICY_SAVED='' POLICY_INSTALLED=''
tap_log "$TMP/polkitd.log"

tap_cleanup() {
    stop_pid "$MON_PID"
    stop_pid "$PD_PID"
    [ -z "$PK_PID" ] || kill -CONT "$PK_PID" 2>/dev/null
    stop_pid "$PK_PID"
    bus_stop
    rm -f "$RULES"
    if [ -n "$POLICY_SAVED" ]; then cp "$POLICY_SAVED" "$POLICY"; elif [ -n "$POLICY_INSTALLED" ]; then rm -f "$POLICY"; fi
}

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
    wait_for 10 bus_has org.freedesktop.PolicyKit1
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
bus_start "$TMP" "$TMP/bus.conf"
must "system-configuration dbus-daemon on $ADDR (pid $BUS_PID)" grep -q "^$ADDR," "$TMP/bus.addr"

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

placementd_start --connect=test:///default --topology="synthetic:pack:1 numa:1(memory=4GiB) core:2 pu:2" \
    --bus-address="$ADDR" --log-level=debug
must "placementd serves $NAME on that bus (pid $PD_PID)" wait_for 10 bus_has "$NAME"

# ---- polkit running ------------------------------------------------------------------------------------
call -- Rebalance
result "root may Rebalance" $?
call "${AS_ALLOWED[@]}" -- Rebalance
result "$ALLOWED (allowed by the rules file) may Rebalance" "$(grep -q '^us [0-9]' "$OUT"; echo $?)"
call "${AS_ALLOWED[@]}" -- Reload
result "$ALLOWED may Reload" $?
call "${AS_NOBODY[@]}" -- Rebalance
result "nobody gets NotPermitted for Rebalance ($ENAME)" "$([ "$ENAME" = org.placementd1.Error.NotPermitted ]; echo $?)"
result "the refusal names the polkit action" "$(grep -q 'polkit action org.placementd1.manage' "$ERR"; echo $?)"
call "${AS_NOBODY[@]}" -- Replace s nosuch
result "nobody gets NotPermitted for Replace ($ENAME)" "$([ "$ENAME" = org.placementd1.Error.NotPermitted ]; echo $?)"
result "no fallback while polkit answers" "$([ "$(fallback_lines)" -eq 0 ]; echo $?)"

# Each refusal costs a question to polkit, so privileged calls count against the caller's rate limit like
# any other: one connection's burst of Rebalance calls ends in LimitExceeded, and polkit is not flooded.
run_client() { timeout 60 "$@" >"$OUT" 2>"$ERR"; RC=$?; }
run_client "${AS_NOBODY[@]}" "$BUILD/tests/bus-client" "$ADDR" rebalance 40
echo "# figure: nobody, one connection: $(cat "$OUT")"
result "a burst of Rebalance calls from nobody: refused by polkit, then rate limited" "$(
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
result "placementd asked polkit CheckAuthorization" $?
stop_pid "$MON_PID"
# answered, and the Rebalance still waiting: a daemon that blocked on polkit would answer only after its
# own call to polkit gave up, and the Rebalance would have ended with it
call -- GetStatus
result "while polkit has not answered, placementd answers GetStatus" "$(
    [ "$RC" -eq 0 ] && kill -0 "$PENDING" 2>/dev/null; echo $?)"
kill -CONT "$PK_PID"
wait "$PENDING"
result "once polkit answers, the waiting Rebalance succeeds" "$(grep -q '^us [0-9]' "$TMP/pending.out"; echo $?)"

# within one user's burst (20 calls at once, 5 per second), so every call is timed through polkit
CALLS=10 ANSWERED=0
T1=$(date +%s%N)
for ((i = 0; i < CALLS; i++)); do
    "${AS_ALLOWED[@]}" busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" Rebalance >/dev/null 2>&1 &&
        ANSWERED=$((ANSWERED + 1))
done
echo "# figure: $(( ($(date +%s%N) - T1) / 1000 / CALLS )) us per Rebalance through polkit (busctl as $ALLOWED, $CALLS calls)"
result "$CALLS Rebalance calls as $ALLOWED through polkit all answered" "$([ "$ANSWERED" -eq "$CALLS" ]; echo $?)"
# the per-user bucket refills (20 tokens at 5 per second) so the calls below are judged by polkit alone
sleep 4

# ---- polkit stopped: root only, said once ---------------------------------------------------------------
stop_pid "$PK_PID"
PK_PID=''
must "polkitd stopped" wait_for 10 eval '! bus_has org.freedesktop.PolicyKit1'
call "${AS_ALLOWED[@]}" -- Rebalance
result "without polkit $ALLOWED gets NotPermitted ($ENAME)" "$([ "$ENAME" = org.placementd1.Error.NotPermitted ]; echo $?)"
result "the refusal says polkit is not available" "$(grep -q 'polkit is not available' "$ERR"; echo $?)"
call "${AS_ALLOWED[@]}" -- Reload
call -- Rebalance
result "without polkit root may Rebalance" $?
result "the log says root-only once for two refusals" "$([ "$(fallback_lines)" -eq 1 ]; echo $?)"
result "placementd is still running" "$(kill -0 "$PD_PID"; echo $?)"

# ---- polkit back ----------------------------------------------------------------------------------------
must "polkitd started again" start_polkitd
call "${AS_ALLOWED[@]}" -- Rebalance
result "with polkit back $ALLOWED may Rebalance again" $?
