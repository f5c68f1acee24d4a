#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# Integration test of placementd's D-Bus API with real clients (busctl, gdbus, placementctl) on a private
# dbus-daemon, the daemon connected to libvirt's in-process test driver (test:///default). Run as root:
#   bash tests/dbus/run.sh [BUILD_DIR]        (default: build; DBUS_TEST_KEEP=1 keeps the temp dir)
# One line per check ("ok N - ..." / "not ok N - ..."); the last line is "dbus: N passed, M failed".
set -u

# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
tap_build "${1:-}"
CTL=$PLACEMENTCTL
TOPOLOGY="synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"
NAME=org.placementd1
OPATH=/org/placementd1
IFACE=org.placementd1.Manager
E=org.placementd1.Error
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
BIN_USER=(setpriv --reuid=bin --regid=bin --clear-groups)
SYS_USER=(setpriv --reuid=sys --regid=sys --clear-groups)

tap_begin dbus
tap_tmpdir dbus "${DBUS_TEST_KEEP:-}"
TMP=$TAP_TMP
chmod 755 "$TMP" # the non-root client must reach the bus socket
MON_PIDS=()
ADDR=unix:path=$TMP/bus
LOG=$TMP/placementd.log
# the per-URI instance locks of the daemons started here, not the host's /run/placementd
export RUNTIME_DIRECTORY=$TMP/run
PD_LOG=$LOG
CONF=$TMP/placementd.conf
OUT=$TMP/out
ERR=$TMP/err
RC=0
RUN_TIMEOUT=10

# note TEXT: detail under the last check, TAP comment style, one line.
note() { echo "#   $(printf '%s' "$*" | head -c 600 | tr '\n' ';')"; }

tap_cleanup() {
    local p
    for p in "${MON_PIDS[@]}"; do stop_pid "$p"; done
    stop_pid "$PD_PID"
    stop_pid "${ROGUE_PID:-}"
    stop_pid "${HOLDER:-}"
    bus_stop
}

# ---- clients -----------------------------------------------------------------------------------------
# Each runs with a time limit, leaves stdout in $OUT, stderr in $ERR and the exit status in $RC.
bcall() { run busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" "$@"; }
nb_bcall() { run "${NOBODY[@]}" busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" "$@"; }
gcall() { # METHOD ARGS...
    local m=$1
    shift
    run gdbus call --address "$ADDR" --dest "$NAME" --object-path "$OPATH" --method "$IFACE.$m" "$@"
}
ctl() { run "$CTL" --bus-address="$ADDR" "$@"; }
nb_ctl() { run "${NOBODY[@]}" "$CTL" --bus-address="$ADDR" "$@"; }
bprop() { run busctl --address="$ADDR" get-property "$NAME" "$OPATH" "$IFACE" "$1"; }
gprop() {
    run gdbus call --address "$ADDR" --dest "$NAME" --object-path "$OPATH" \
        --method org.freedesktop.DBus.Properties.Get "$IFACE" "$1"
}

# The D-Bus error name of a failed busctl call (busctl prints only the message; its debug log has the name).
# Usage: berr [nobody|daemon] ARGS-TO-CALL... ; prints the name (empty when the call did not fail).
berr() {
    local pre=()
    if [ "$1" = nobody ]; then pre=("${NOBODY[@]}"); shift; fi
    if [ "$1" = daemon ]; then pre=(setpriv --reuid=daemon --regid=daemon --clear-groups); shift; fi
    SYSTEMD_LOG_LEVEL=debug timeout 10 "${pre[@]}" busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" "$@" \
        >"$OUT" 2>"$ERR"
    RC=$?
    [ "$RC" -ne 0 ] && sed -n 's/.*type=error .*error-name=\([^ ]*\).*/\1/p' "$ERR" | head -n 1
}
json_ok() { python3 -m json.tool "$1" >/dev/null 2>&1; }
alive() { placementd_alive; }
name_on_bus() { bus_has "$NAME"; }
start_placementd() {
    placementd_start --config="$CONF" --connect=test:///default --topology="$TOPOLOGY" --bus-address="$ADDR" \
        --log-level=debug
    wait_for 10 name_or_dead && alive && name_on_bus
}
name_or_dead() { name_on_bus || ! alive; }
# dead_within SECONDS PID: the child PID ended within SECONDS; its exit status in $WAIT_RC
dead_within() {
    local n=$(($1 * 10)) i
    for ((i = 0; i < n; i++)); do
        kill -0 "$2" 2>/dev/null || { wait "$2" 2>/dev/null; WAIT_RC=$?; return 0; }
        sleep 0.1
    done
    return 1
}

# ---- setup -------------------------------------------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
    not_ok "running as root (needed for setpriv and for the root-only methods)"
    exit 1
fi
for tool in busctl gdbus dbus-daemon setpriv python3 timeout; do
    command -v "$tool" >/dev/null || { not_ok "$tool is installed"; exit 1; }
done
if [ ! -x "$PLACEMENTD" ] || [ ! -x "$CTL" ]; then not_ok "built binaries in $BUILD"; exit 1; fi

: >"$CONF"

bus_start "$TMP"
must "private dbus-daemon started (pid ${BUS_PID:-none}, $ADDR)" kill -0 "${BUS_PID:-0}"
must "placementd started and owns $NAME within 10 s" start_placementd
VERSION=$("$PLACEMENTD" --version | awk '{print $2}')

# A second placementd on the same bus would be a second engine pinning the same domains: it exits 1
# naming the name it found taken, and the first one goes on serving.
run "$PLACEMENTD" --foreground --config="$CONF" --connect=test:///default --topology="$TOPOLOGY" \
    --bus-address="$ADDR"
result "a second placementd on the bus exits 1: $NAME is already served (rc $RC)" \
    "$([ $RC -eq 1 ] && grep -q "$NAME is already served on the .* bus: another placementd runs there" "$ERR" &&
        ! grep -q 'placed' "$ERR"; echo $?)"
result "  the first one still serves it" "$(alive && name_on_bus; echo $?)"

# ---- methods, through busctl and gdbus ---------------------------------------------------------------
run busctl --address="$ADDR" introspect "$NAME" "$OPATH" "$IFACE"
missing=
for m in .ListDecisions .GetDecision .GetDecisionsJSON .Explain .Plan .GetCpuAdviceJSON .GetHostMap .GetHostMapJSON \
    .GetStatus \
    .Replace .Rebalance .Reload .DecisionChanged .Version .Policy .Apply .Connected .URI .Nodes .Packages .Cores .PUs \
    .ThreadsPerCore .ReloadError .MetricsError; do
    grep -q "^\\$m " "$OUT" || missing="$missing $m"
done
result "introspection lists every method, property and the signal${missing:+ (missing:$missing)}" \
    "$([ -z "$missing" ] && echo 0 || echo 1)"

# The published interface file must be what the daemon exports: methods, arguments, properties, signals
# and annotations of $IFACE, compared tag by tag (comments, layout and attribute order do not count).
manager_iface() { # XML file -> one normalised tag a line
    perl -0777 -ne 's/<!--.*?-->//gs;
        /<interface\s+name="\Q'"$IFACE"'\E"\s*>(.*?)<\/interface>/s or exit 1;
        my $b = $1;
        while ($b =~ /<(\/?)(\w+)([^>]*?)(\/?)>/g) {
            my ($close, $tag, $self) = ($1, $2, $4);
            my @attrs = sort($3 =~ /(\w+="[^"]*")/g);
            print "<$close$tag", (map { " $_" } @attrs), ">\n";
            print "</$tag>\n" if $self;
        }' "$1"
}
run busctl --address="$ADDR" introspect --xml-interface "$NAME" "$OPATH"
cp "$OUT" "$TMP/live.xml"
if manager_iface "$TMP/live.xml" >"$TMP/live.iface" &&
    manager_iface "$ROOT/docs/org.placementd1.xml" >"$TMP/doc.iface"; then
    # on failure the detail is the drift: lines only in the docs (-) or only in the daemon (+)
    diff -U0 "$TMP/doc.iface" "$TMP/live.iface" | grep '^[-+]<' >"$OUT"
    drift=$((!PIPESTATUS[0] ? 0 : 1))
else
    echo "no $IFACE interface in the daemon's or the docs' introspection XML" >"$ERR"
    drift=2
fi
result "docs/org.placementd1.xml describes $IFACE exactly as the daemon exports it" "$drift"
# every error name the daemon sets (lib/core/bus-api.h) has a row in docs/dbus-api.md's Errors table
undocumented=$(sed -n 's/^#define BUS_ERROR_[A-Z_]* *"\(.*\)"$/\1/p' "$ROOT/lib/core/bus-api.h" |
    while read -r e; do grep -q "^| \`$e\` |" "$ROOT/docs/dbus-api.md" || echo "$e"; done)
expect "docs/dbus-api.md's Errors table names every error the daemon returns" "" "$undocumented"

bcall ListDecisions
result "busctl ListDecisions contains test placed" "$(grep -q '"test" "[0-9a-f-]*" "explicit" "placed"' "$OUT"; echo $?)"
UUID=$(sed -n 's/.*"test" "\([0-9a-f-]\{36\}\)".*/\1/p' "$OUT")
[ -n "$UUID" ] || UUID=unknown-uuid
gcall ListDecisions
result "gdbus ListDecisions contains test placed" "$(grep -q "'test', '$UUID', 'explicit', 'placed'" "$OUT"; echo $?)"

bcall GetDecision s test
result "busctl GetDecision test" "$(grep -q "^(sssssasssb) \"test\" \"$UUID\" \"explicit\" \"placed\"" "$OUT"; echo $?)"
bcall GetDecision s "$UUID"
result "busctl GetDecision by UUID $UUID" "$(grep -q "^(sssssasssb) \"test\" \"$UUID\" " "$OUT"; echo $?)"
gcall GetDecision test
result "gdbus GetDecision test" "$(grep -q "^(('test', '$UUID', 'explicit', 'placed'" "$OUT"; echo $?)"
gcall GetDecision "$UUID"
result "gdbus GetDecision by UUID" "$(grep -q "^(('test', '$UUID', " "$OUT"; echo $?)"
[ "$(berr GetDecision s nope)" = "$E.NoSuchDomain" ]
result "busctl GetDecision nope -> NoSuchDomain" $?
gcall GetDecision nope
result "gdbus GetDecision nope -> NoSuchDomain" "$(grep -q "$E.NoSuchDomain" "$ERR"; echo $?)"
# The error quotes the caller's text escaped, as names are everywhere: not an escape sequence for a terminal.
gcall GetDecision $'nope\e[2J\rx'
result "the NoSuchDomain error escapes the argument (nope\\x1b[2J\\x0dx)" \
    "$(grep -qF "No running domain 'nope\x1b[2J\x0dx' is known" "$ERR" && ! grep -q $'[\e\r]' "$ERR"; echo $?)"

# GetDecisionsJSON: the reply is one string; gdbus is the reliable way to get it unescaped.
json_reply() { # ARG FILE: GetDecisionsJSON(ARG) through gdbus, the JSON text into FILE
    gcall GetDecisionsJSON "$1" && python3 -c '
import ast, sys
print(ast.literal_eval(sys.stdin.read().strip())[0])' <"$OUT" >"$2"
}
json_reply "" "$TMP/all.json"
result "gdbus GetDecisionsJSON '' is valid JSON with test in decisions" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["decisions"], list) and any(x["domain"] == "test" and x["result"] == "placed" for x in d["decisions"])
assert d["topology"]["nodes"] == 2' "$TMP/all.json" 2>"$ERR"; echo $?)"
json_reply test "$TMP/test.json"
result "gdbus GetDecisionsJSON test is valid JSON with exactly test" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["domain"] for x in d["decisions"]] == ["test"] and d["decisions"][0]["uuid"] == sys.argv[2]
assert d["decisions"][0]["load"] is None  # the test driver reports no CPU time: load not measured' \
    "$TMP/test.json" "$UUID" 2>"$ERR"; echo $?)"
bcall GetDecisionsJSON s ""
result "busctl GetDecisionsJSON '' answers a string with decisions" "$(grep -q '^s "{.*decisions.*test' "$OUT"; echo $?)"
bcall GetDecisionsJSON s test
result "busctl GetDecisionsJSON test answers a string" "$(grep -q '^s "{.*\\"domain\\":\\"test\\"' "$OUT"; echo $?)"
[ "$(berr GetDecisionsJSON s nope)" = "$E.NoSuchDomain" ]
result "busctl GetDecisionsJSON nope -> NoSuchDomain" $?

bcall Explain s test
result "busctl Explain test" "$(grep -q '^s "test (2 vCPUs.*candidate.*chosen' "$OUT"; echo $?)"
gcall Explain test
result "gdbus Explain test" "$(grep -q "^('test (2 vCPUs.*chosen" "$OUT"; echo $?)"

bcall Plan ut 2 1073741824
result "busctl Plan 2 vCPUs 1 GiB -> placed" "$(grep -q '^ssasssss "placed" "[0-9]" 2 ' "$OUT"; echo $?)"
gcall Plan 2 1073741824
result "gdbus Plan 2 vCPUs 1 GiB -> placed" "$(grep -q "^('placed', '[0-9]', \['[0-9,-]*', '[0-9,-]*'\]" "$OUT"; echo $?)"
for bad in "0 1073741824:vcpus 0" "5000 1073741824:vcpus 5000" "4097 1073741824:vcpus 4097" "2 0:memory 0" \
    "2 17179869185:memory one byte beyond the host's 16 GiB" "2 18446744073709551615:memory 2^64-1"; do
    args=${bad%%:*}
    # shellcheck disable=SC2086 # two numbers
    got=$(berr Plan ut $args)
    [ "$got" = "$E.InvalidArgument" ]
    result "busctl Plan ${bad#*:} -> InvalidArgument${got:+ (got $got)}" $?
    result "  daemon alive after it" "$(alive; echo $?)"
done
gcall Plan 0 1073741824
result "gdbus Plan vcpus 0 -> InvalidArgument" "$(grep -q "$E.InvalidArgument" "$ERR"; echo $?)"
bcall Plan ut 4 17179869184
result "busctl Plan 4 vCPUs, all 16 GiB of the host -> answered (not an error)" $RC

# Wrong argument types and counts: an error reply, never a crash.
for bad in "Plan ss a b" "Plan u 2" "Plan utu 2 1 1" "GetDecision u 5" "GetDecision" "Explain as 1 x" \
    "Replace" "Replace i 1" "ListDecisions s x" "GetHostMap u 1" "GetHostMapJSON s x" "Rebalance s x" "Reload b true" "NoSuchMethod"; do
    # shellcheck disable=SC2086 # split on purpose
    got=$(berr $bad)
    [ -n "$got" ] && [ "${got#org.placementd1.}" = "$got" ]
    result "busctl $bad -> D-Bus error (${got:-none})" $?
    result "  daemon alive after it" "$(alive; echo $?)"
done

bcall GetHostMap
result "busctl GetHostMap" "$(grep -q '^s "package 0.*node 0.*package 1.*node 1.*A test' "$OUT"; echo $?)"
gcall GetHostMap
result "gdbus GetHostMap" "$(grep -q "^('package 0" "$OUT"; echo $?)"
run busctl --address="$ADDR" --json=short call "$NAME" "$OPATH" "$IFACE" GetHostMapJSON
result "busctl GetHostMapJSON: the map as data, the test domain on a CPU of node 0 or 1" \
    "$(python3 -c 'import json, sys
d = json.loads(json.load(open(sys.argv[1]))["data"][0])
assert d["text"].startswith("package 0") and d["failed"] == []
assert [n["node"] for n in d["nodes"]] == [0, 1]
used = [c for c in d["cpus"] if c["domains"] == ["test"]]
assert used and all(c["state"] == "domain" and c["node"] in (0, 1) for c in used)' "$OUT" 2>&1; echo $?)"
bcall GetStatus
result "busctl GetStatus" "$(grep -q '^s "Connected to test:///default, policy explicit; 1 domain, 1 placed"' "$OUT"; echo $?)"
gcall GetStatus
result "gdbus GetStatus" "$(grep -q "^('Connected to test:///default" "$OUT"; echo $?)"

bcall Replace s test
result "busctl Replace test as root -> ok" "$([ $RC -eq 0 ] && [ "$(cat "$OUT")" = "" ]; echo $?)"
bcall GetDecision s test
result "  test is still placed after Replace" "$(grep -q '"test" "[0-9a-f-]*" "explicit" "placed"' "$OUT"; echo $?)"
[ "$(berr Replace s nope)" = "$E.NoSuchDomain" ]
result "busctl Replace nope -> NoSuchDomain" $?
bcall Rebalance
result "busctl Rebalance as root returns a report" "$(grep -q '^us [0-9][0-9]* "..*"' "$OUT"; echo $?)"
gcall Rebalance
result "gdbus Rebalance as root returns a report" "$(grep -q "^(uint32 [0-9]*, '..*')" "$OUT"; echo $?)"
bcall Reload
result "busctl Reload as root -> ok" $RC

HUGE=$(head -c 100000 /dev/zero | tr '\0' x)
for m in GetDecision GetDecisionsJSON Explain Replace; do
    got=$(berr "$m" s "$HUGE")
    [ "$got" = "$E.InvalidArgument" ]
    result "busctl $m with a 100000-character domain -> InvalidArgument${got:+ (got $got)}" $?
done
for m in GetDecision Explain Replace; do
    got=$(berr "$m" s "")
    [ "$got" = "$E.InvalidArgument" ]
    result "busctl $m with an empty domain -> InvalidArgument${got:+ (got $got)}" $?
done
got=$(berr GetDecision s "$(head -c 1024 /dev/zero | tr '\0' y)")
[ "$got" = "$E.NoSuchDomain" ]
result "busctl GetDecision with a 1024-character domain (the limit) -> NoSuchDomain${got:+ (got $got)}" $?
got=$(berr GetDecision s "$(head -c 1025 /dev/zero | tr '\0' y)")
[ "$got" = "$E.InvalidArgument" ]
result "busctl GetDecision with a 1025-character domain -> InvalidArgument${got:+ (got $got)}" $?
gcall Explain ""
result "gdbus Explain '' -> InvalidArgument" "$(grep -q "$E.InvalidArgument" "$ERR"; echo $?)"
result "daemon alive after the bad arguments" "$(alive; echo $?)"

# ---- properties -------------------------------------------------------------------------------------
check_prop() { # NAME BUSCTL-EXPECTED GDBUS-EXPECTED
    bprop "$1"
    result "busctl get-property $1 = $2" "$([ "$(cat "$OUT")" = "$2" ]; echo $?)"
    gprop "$1"
    result "gdbus Properties.Get $1 = $3" "$([ "$(cat "$OUT")" = "$3" ]; echo $?)"
}
check_prop Version "s \"$VERSION\"" "(<'$VERSION'>,)"
check_prop Policy 's "explicit"' "(<'explicit'>,)"
check_prop Apply 'b true' '(<true>,)'
check_prop Connected 'b true' '(<true>,)'
check_prop URI 's "test:///default"' "(<'test:///default'>,)"
check_prop Nodes 'u 2' '(<uint32 2>,)'
check_prop Packages 'u 2' '(<uint32 2>,)'
check_prop Cores 'u 4' '(<uint32 4>,)'
check_prop PUs 'u 8' '(<uint32 8>,)'
check_prop ThreadsPerCore 'u 2' '(<uint32 2>,)'
check_prop Heal 'b true' '(<true>,)'
check_prop HealMoves 't 0' '(<uint64 0>,)'
check_prop ReloadError 's ""' "(<''>,)" # the reloads so far worked
check_prop MetricsError 's ""' "(<''>,)" # metrics are off
run gdbus call --address "$ADDR" --dest "$NAME" --object-path "$OPATH" --method org.freedesktop.DBus.Properties.GetAll "$IFACE"
result "gdbus Properties.GetAll has all 13 properties (HealMoves is read by name)" "$(
    for p in Version Policy Apply Connected URI Nodes Packages Cores PUs ThreadsPerCore Heal ReloadError MetricsError; do grep -q "'$p'" "$OUT" || exit 1; done; echo 0)"

# ---- signals ----------------------------------------------------------------------------------------
busctl --address="$ADDR" monitor "$NAME" >"$TMP/busctl-monitor.txt" 2>&1 &
MON_PIDS+=($!)
gdbus monitor --address "$ADDR" --dest "$NAME" >"$TMP/gdbus-monitor.txt" 2>&1 &
MON_PIDS+=($!)
wait_for 5 grep -q "is owned by" "$TMP/gdbus-monitor.txt"
wait_for 5 grep -q "Monitoring bus message stream" "$TMP/busctl-monitor.txt"
bcall Replace s test
result "busctl Replace test (for the signal)" $RC
wait_for 3 grep -q "DecisionChanged ('$UUID', 'test', 'placed')" "$TMP/gdbus-monitor.txt"
result "gdbus monitor saw DecisionChanged($UUID, test, placed)" $?
wait_for 3 grep -A4 -q "Member=DecisionChanged" "$TMP/busctl-monitor.txt"
result "busctl monitor saw DecisionChanged with test" \
    "$(grep -A4 "Member=DecisionChanged" "$TMP/busctl-monitor.txt" | grep -q 'STRING "test";'; echo $?)"

printf '[Placement]\nPolicy=compat\n' >"$CONF"
bcall Reload
result "busctl Reload with Policy=compat -> ok" $RC
wait_for 3 grep -q "PropertiesChanged ('$IFACE', {.*'Policy': <'compat'>" "$TMP/gdbus-monitor.txt"
result "gdbus monitor saw PropertiesChanged Policy=compat" $?
wait_for 3 grep -A8 -q "Member=PropertiesChanged" "$TMP/busctl-monitor.txt"
result "busctl monitor saw PropertiesChanged Policy=compat" \
    "$(grep -A8 "Member=PropertiesChanged" "$TMP/busctl-monitor.txt" | grep -A2 'STRING "Policy";' | grep -q 'STRING "compat";'; echo $?)"
bprop Policy
result "busctl get-property Policy now = compat" "$([ "$(cat "$OUT")" = 's "compat"' ]; echo $?)"
gprop Policy
result "gdbus Policy now = compat" "$([ "$(cat "$OUT")" = "(<'compat'>,)" ]; echo $?)"

printf '[Placement]\nPolicy=bogus\n' >"$CONF"
got=$(berr Reload)
result "busctl Reload with Policy=bogus fails (${got:-no error}) naming Policy" \
    "$([ -n "$got" ] && grep -q "Policy" "$ERR"; echo $?)"
note "error: $(grep -v '^Bus \|^Got message\|^Sent message\|^ *$' "$ERR" | tail -n 1)"
gcall Reload
result "gdbus Reload with Policy=bogus fails naming Policy" "$([ $RC -ne 0 ] && grep -q "Policy" "$ERR"; echo $?)"
ctl reload
result "placementctl reload with Policy=bogus fails (rc $RC) naming Policy" \
    "$([ $RC -ne 0 ] && grep -q "Policy" "$ERR"; echo $?)"
# a configuration the daemon refuses is an input error: exit 2, as the man page's EXIT STATUS says
result "  it exits 2 and says the old configuration still runs, naming the problem on that line" \
    "$([ $RC -eq 2 ] && grep -q '^placementctl reload: failed, the old configuration still runs: .*Policy: invalid value' "$ERR"; echo $?)"
note "stderr: $(cat "$ERR")"
bprop Policy
result "Policy still compat (the old config is kept)" "$([ "$(cat "$OUT")" = 's "compat"' ]; echo $?)"
result "daemon alive after the broken config" "$(alive; echo $?)"

# The failure stays readable after the call that met it: ReloadError, and placementctl status (which is
# all an operator who ran `systemctl reload` has), until a reload works.
bprop ReloadError
result "ReloadError names the problem (Policy: invalid value)" "$(grep -q '^s ".*Policy: invalid value' "$OUT"; echo $?)"
wait_for 3 grep -q "PropertiesChanged ('$IFACE', {'ReloadError': <'.*Policy: invalid value" "$TMP/gdbus-monitor.txt"
result "gdbus monitor saw PropertiesChanged ReloadError naming Policy" $?
ctl status
result "placementctl status says the last reload failed and the old configuration runs (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^placementd ' "$OUT" &&
        grep -q '^Last reload: failed, the old configuration runs: .*Policy: invalid value' "$OUT"; echo $?)"
ctl status --json
result "placementctl status --json: \"reload_error\" names the problem, the other keys unchanged (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "Policy: invalid value" in d["reload_error"], d["reload_error"]
assert set(d) == {"status", "version", "policy", "apply", "connected", "uri", "topology", "decisions", "reload_error", "metrics_error"}, d.keys()
assert d["metrics_error"] is None, d["metrics_error"]
assert d["policy"] == "compat" and d["topology"]["pus"] == 8' "$OUT" 2>&1; echo $?)"
printf '[Placement]\nPolicy=compat\n' >"$CONF"
bcall Reload
result "busctl Reload with the file fixed -> ok" $RC
bprop ReloadError
result "  ReloadError is empty again" "$([ "$(cat "$OUT")" = 's ""' ]; echo $?)"
wait_for 3 grep -q "PropertiesChanged ('$IFACE', {'ReloadError': <''>}" "$TMP/gdbus-monitor.txt"
result "  gdbus monitor saw PropertiesChanged ReloadError=''" $?
ctl status
result "  placementctl status has no \"Last reload\" line (rc $RC)" \
    "$([ $RC -eq 0 ] && ! grep -q 'Last reload' "$OUT"; echo $?)"
ctl status --json
result "  placementctl status --json: \"reload_error\" is null (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["reload_error"] is None' "$OUT" 2>&1; echo $?)"

# SIGHUP (systemctl reload) answers nobody: status is where its failure shows, the first problem of several
# on the status line, every one in the JSON.
printf '[Placement]\nPolicy=bogus\nFit=nonsense\n' >"$CONF"
kill -HUP "$PD_PID"
reload_error_set() { bprop ReloadError && ! grep -q '^s ""$' "$OUT"; }
wait_for 10 reload_error_set
ctl status
result "after a failed SIGHUP reload placementctl status says so, the first problem only (rc $RC)" \
    "$([ $RC -eq 0 ] && [ "$(grep -c '^Last reload: failed, the old configuration runs: .*Policy: invalid value' "$OUT")" = 1 ] &&
        ! grep -q 'Fit:' "$OUT"; echo $?)"
note "status: $(cat "$OUT")"
ctl status --json
result "  placementctl status --json names both problems (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["reload_error"]
assert "Policy: invalid value" in e and "Fit: invalid value" in e, e' "$OUT" 2>&1; echo $?)"
printf '[Placement]\nPolicy=compat\n' >"$CONF"
kill -HUP "$PD_PID"
wait_for 10 sh -c "busctl --address='$ADDR' get-property $NAME $OPATH $IFACE ReloadError | grep -qx 's \"\"'"
ctl status
result "  a SIGHUP reload that works clears it (rc $RC)" "$([ $RC -eq 0 ] && ! grep -q 'Last reload' "$OUT"; echo $?)"
# Every local user reads ReloadError: a 0600 file's secrets in it (a URI with a password before any
# section, or read as a key name, a value that does not parse) are not shown, only the lines and keys.
printf 'URI=qemu+ssh://admin:S3cretPass@kvm1/system?keyfile=/root/.ssh/id\n[Libvirt]\nqemu+ssh://admin:S3cretPass@kvm1/system?keyfile=/root/.ssh/id\n[Placement]\nReservedCPUs=S3cretPass\n' >"$CONF"
chmod 600 "$CONF"
kill -HUP "$PD_PID"
wait_for 10 reload_error_set
run "${NOBODY[@]}" busctl --address="$ADDR" get-property "$NAME" "$OPATH" "$IFACE" ReloadError
result "ReloadError of a file with a password, read by nobody: lines and keys named, no secret (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q ':1: a Key=value before any \[Section\]' "$OUT" && grep -q ':3: an unknown key in \[Libvirt\]' "$OUT" &&
        grep -q ':5: \[Placement\] ReservedCPUs: not a CPU list' "$OUT" && ! grep -q 'S3cret' "$OUT"; echo $?)"
note "$(cat "$OUT")"
bcall Reload
result "  Reload's error names no secret either (rc $RC)" "$([ $RC -ne 0 ] && grep -q 'ReservedCPUs' "$ERR" && ! grep -q 'S3cret' "$ERR"; echo $?)"
result "  the log, the administrator's, shows the value refused" \
    "$(grep -q 'ReservedCPUs=S3cretPass: not a CPU list' "$LOG"; echo $?)"
printf '[Placement]\nPolicy=compat\n' >"$CONF"
chmod 644 "$CONF"
kill -HUP "$PD_PID"
wait_for 10 sh -c "busctl --address='$ADDR' get-property $NAME $OPATH $IFACE ReloadError | grep -qx 's \"\"'"
# The error quotes the file, whose bytes need not be UTF-8, and a D-Bus string must be: Reload still
# answers, and ReloadError can still be read.
printf '[Placement]\nPolicy=\xff\xfebogus\n' >"$CONF"
ctl reload
result "placementctl reload of a file that is not UTF-8 answers: exit 2, the old configuration still runs (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q '^placementctl reload: failed, the old configuration still runs: .*Policy: invalid value' "$ERR"; echo $?)"
ctl status
result "  placementctl status shows it (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^Last reload: failed, the old configuration runs: .*Policy: invalid value' "$OUT"; echo $?)"
printf '[Placement]\nPolicy=compat\n' >"$CONF"
bcall Reload
result "  a Reload that works clears it (rc $RC)" "$([ $RC -eq 0 ] && bprop ReloadError && [ "$(cat "$OUT")" = 's ""' ]; echo $?)"
for p in "${MON_PIDS[@]}"; do stop_pid "$p"; done
MON_PIDS=()

# ---- a reload is atomic -----------------------------------------------------------------------------
# A free loopback port (asked of the kernel, so no fixed port is bound); fe80::1 (link-local) names no
# interface, so binding it fails whenever it is tried: the reload is refused. A port another process holds
# may be freed: the rest of the file is applied and the port bound once it is.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
metrics_up() {
    python3 -c 'import sys, urllib.request
sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).status == 200 else 1)'         "$1" 2>/dev/null
}
printf '[Placement]\nPolicy=compat\n[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$CONF"
bcall Reload
result "Reload turning metrics on (127.0.0.1:$PORT) -> ok" "$([ $RC -eq 0 ] && metrics_up "$PORT"; echo $?)"
printf '[Placement]\nPolicy=explicit\n[Metrics]\nListen=[fe80::1]:%s\n' "$PORT" >"$CONF"
chmod 600 "$CONF"
got=$(berr Reload)
result "Reload with an unbindable Listen=[fe80::1]:$PORT fails (${got:-no error}) naming Listen, not its value" \
    "$([ -n "$got" ] && grep -qF "[Metrics] Listen: cannot bind the address" "$ERR" && ! grep -qF "fe80" "$ERR"; echo $?)"
note "error: $(grep -v '^Bus \|^Got message\|^Sent message\|^ *$' "$ERR" | tail -n 1)"
# What every local user reads of it names the key, not the value (a secret typed into the wrong key of a
# file only root reads): ReloadError and placementctl status; the log has the value.
run "${NOBODY[@]}" busctl --address="$ADDR" get-property "$NAME" "$OPATH" "$IFACE" ReloadError
result "  ReloadError, read by nobody, names [Metrics] Listen without the address (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qF '[Metrics] Listen: cannot bind the address' "$OUT" && ! grep -qF 'fe80' "$OUT"; echo $?)"
note "$(cat "$OUT")"
nb_ctl status
result "  placementctl status, run by nobody, neither (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qF 'Last reload: failed, the old configuration runs: [Metrics] Listen: cannot bind' "$OUT" &&
        ! grep -qF 'fe80' "$OUT"; echo $?)"
result "  the log, the administrator's, has the address" \
    "$(grep -qF "Listen=[fe80::1]:$PORT: cannot listen on fe80::1" "$LOG"; echo $?)"
# A value that names no address at all: refused, or (a name server not reached) taken and retried; either
# way no local user reads it.
printf '[Placement]\nPolicy=explicit\n[Metrics]\nListen=Tr0ub4dor-s3cret:%s\n' "$PORT" >"$CONF"
bcall Reload
run "${NOBODY[@]}" busctl --address="$ADDR" get-property "$NAME" "$OPATH" "$IFACE" ReloadError
leaked=$(grep -c 'Tr0ub4dor' "$OUT")
run "${NOBODY[@]}" busctl --address="$ADDR" get-property "$NAME" "$OPATH" "$IFACE" MetricsError
leaked=$((leaked + $(grep -c 'Tr0ub4dor' "$OUT")))
nb_ctl status
leaked=$((leaked + $(grep -c 'Tr0ub4dor' "$OUT")))
result "Reload with Listen=Tr0ub4dor-s3cret:$PORT: ReloadError, MetricsError and status name no value ($leaked)" \
    "$([ "$leaked" = 0 ] && grep -q 'Listen: cannot resolve the address' "$OUT"; echo $?)"
note "$(cat "$OUT")"
result "  the log has it" "$(grep -qF "Listen=Tr0ub4dor-s3cret:$PORT: cannot resolve Tr0ub4dor-s3cret" "$LOG"; echo $?)"
printf '[Placement]\nPolicy=compat\n[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$CONF"
bcall Reload
chmod 644 "$CONF"
metrics_up "$PORT"
result "  the old metrics listener still answers on 127.0.0.1:$PORT" $?
bprop Policy
result "  and nothing else of the file was applied (Policy still compat)" \
    "$([ "$(cat "$OUT")" = 's "compat"' ]; echo $?)"
HELD=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); time.sleep(60)' "$HELD" &
HOLDER=$!
wait_for 5 python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$HELD"
printf '[Placement]\nPolicy=explicit\n[Metrics]\nListen=127.0.0.1:%s\n' "$HELD" >"$CONF"
bcall Reload
bprop Policy
result "Reload with Listen= on a port another process holds -> ok (rc $RC), the file applied (Policy explicit)" \
    "$([ $RC -eq 0 ] && [ "$(cat "$OUT")" = 's "explicit"' ]; echo $?)"
result "  the log names the address: running without metrics" \
    "$(grep -q "Listen=127.0.0.1:$HELD: cannot listen .*Address already in use; running without metrics" "$LOG"; echo $?)"
stop_pid "$HOLDER"
HOLDER=
wait_for 10 metrics_up "$HELD"
result "  the port freed, metrics answer on it" $?
printf '[Placement]\nPolicy=compat\n[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$CONF"
bcall Reload
result "Reload back to 127.0.0.1:$PORT -> ok, answering" "$([ $RC -eq 0 ] && metrics_up "$PORT"; echo $?)"
# The same port on another address: the running listener holds the port, so it closes first.
printf '[Placement]\nPolicy=compat\n[Metrics]\nListen=0.0.0.0:%s\n' "$PORT" >"$CONF"
bcall Reload
result "Reload moving metrics to 0.0.0.0:$PORT (the same port) -> ok, answering" \
    "$([ $RC -eq 0 ] && metrics_up "$PORT" && grep -q "Serving metrics on http://0.0.0.0:$PORT/" "$LOG"; echo $?)"
printf '[Placement]\nPolicy=compat\n[DBus]\nBus=session\n' >"$CONF"
bcall Reload
result "Reload changing [DBus] Bus= -> ok, metrics off" "$([ $RC -eq 0 ] && ! metrics_up "$PORT"; echo $?)"
result "  the log says Bus= is not used: --bus-address chose the bus (not 'running with system')" \
    "$(grep -q 'Reload: \[DBus\] Bus= is not used: --bus-address chose the bus' "$LOG" &&
        ! grep -q 'running with system' "$LOG"; echo $?)"
result "  still on the bus it started on" "$(name_on_bus; echo $?)"
printf '[Placement]\nPolicy=compat\n[Libvirt]\nURI=qemu:///session\n' >"$CONF"
bcall Reload
result "Reload changing [Libvirt] URI= under --connect -> ok, and the log says --connect chose it" \
    "$([ $RC -eq 0 ] && grep -q 'Reload: \[Libvirt\] URI= is not used: --connect chose the connection' "$LOG"; echo $?)"
printf '[Placement]\nPolicy=compat\n' >"$CONF"

# ---- permissions ------------------------------------------------------------------------------------
nb_bcall ListDecisions
result "as nobody: busctl ListDecisions works" "$(grep -q '"test"' "$OUT"; echo $?)"
nb_bcall GetStatus
result "as nobody: busctl GetStatus works" $RC
nb_ctl list
result "as nobody: placementctl list (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^test ' "$OUT"; echo $?)"
nb_ctl status
result "as nobody: placementctl status (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^placementd ' "$OUT"; echo $?)"
for c in "Replace s test" Rebalance Reload; do
    # shellcheck disable=SC2086
    got=$(berr nobody $c)
    [ "$got" = "$E.NotPermitted" ]
    result "as nobody: busctl $c -> NotPermitted${got:+ (got $got)}" $?
done
nb_ctl reload
result "as nobody: placementctl reload exits 5 (rc $RC)" "$([ $RC -eq 5 ]; echo $?)"
nb_ctl rebalance
result "as nobody: placementctl rebalance exits 5 (rc $RC)" "$([ $RC -eq 5 ]; echo $?)"
nb_ctl replace test
result "as nobody: placementctl replace test exits 5 (rc $RC)" "$([ $RC -eq 5 ]; echo $?)"
# This bus lets anyone own any name: a user who takes polkit's name and says yes to everything gets nothing.
"${NOBODY[@]}" "$BUILD/tests/rogue-polkit" "$ADDR" >"$TMP/rogue.out" 2>&1 &
ROGUE_PID=$!
if wait_for 10 grep -q '^ready' "$TMP/rogue.out"; then
    for c in Rebalance Reload; do
        got=$(berr nobody $c)
        [ "$got" = "$E.NotPermitted" ] && grep -q 'not root or polkitd' "$ERR"
        result "as nobody, polkit's name held by nobody: busctl $c -> NotPermitted${got:+ (got $got)}" $?
    done
    result "  the impostor was asked, and the log says once that its answers are not taken" "$(
        grep -q 'answered yes' "$TMP/rogue.out" && [ "$(grep -c 'not root or polkitd: its answers' "$PD_LOG")" -eq 1 ]
        echo $?)"
    run busctl --address="$ADDR" call "$NAME" "$OPATH" "$IFACE" Rebalance
    result "  root still may Rebalance (rc $RC)" $RC
else
    result "a user may own polkit's name on this bus ($(cat "$TMP/rogue.out"))" 1
fi
stop_pid "$ROGUE_PID"
ROGUE_PID=
bprop Policy
result "  Policy unchanged by the refused calls (compat)" "$([ "$(cat "$OUT")" = 's "compat"' ]; echo $?)"

# ---- calls that wait for the bus to name their sender -----------------------------------------------
# A charged call from a sender the daemon has not met waits while the bus is asked for the sender's uid
# (without the daemon waiting): the first 4 of each connection (while fewer than 2048 wait in all), and 128
# more of all connections together. Root sends 200 GetHostMap on two new connections while the daemon is
# stopped (SIGSTOP), and the daemon reads them while the bus is stopped, so that the bus cannot answer
# before all 200 are read: 4 of each connection and 128 more wait and are answered, 64 are refused at once
# with LimitExceeded. Once the bus has named the connections, another 200 on them are all answered: root
# is not limited.
kill -STOP "$PD_PID"
timeout 60 "$BUILD/tests/bus-client" "$ADDR" burst 200 >"$TMP/burst" 2>&1 &
BURST_PID=$!
sleep 1 # the bus has passed the calls on to the daemon's socket
kill -STOP "$BUS_PID"
kill -CONT "$PD_PID"
sleep 1 # the daemon has read them, and asked the bus
kill -CONT "$BUS_PID"
wait "$BURST_PID"
RC=$?
first=$(sed -n 's/^burst 1: \(.*\)/\1/p' "$TMP/burst")
second=$(sed -n 's/^burst 2: \(.*\)/\1/p' "$TMP/burst")
result "200 calls queued from 2 new connections: 8 + 128 wait for the bus, 64 refused at once (rc $RC: $first)" \
    "$(grep -q '^burst 1: 200 calls on 2 connections, 136 answered, 64 LimitExceeded (64 while waiting for the bus), 0 other' \
        "$TMP/burst"; echo $?)"
result "  the same connections, once named: 200 of root's calls answered ($second)" \
    "$(grep -q '^burst 2: 200 calls on 2 connections, 200 answered, 0 LimitExceeded' "$TMP/burst"; echo $?)"
alive
result "  placementd alive" $?

# One user's new connections cannot crowd out root's: user nobody sends 50 GetHostMap on each of 4 new
# connections (200 calls, more than the 128 that once were all that could wait in all), then root one on a
# new connection, all read by the daemon before the bus can answer (as above). 4 of each of nobody's
# connections and 128 more wait (144), 56 are refused at once, and root's call, the first of its
# connection, waits and is answered.
kill -STOP "$PD_PID"
"${NOBODY[@]}" timeout 60 "$BUILD/tests/bus-client" "$ADDR" spread 4 50 >"$TMP/spread" 2>&1 &
SPREAD_PID=$!
wait_for 10 grep -q "^spread: .* sent" "$TMP/spread"
timeout 60 "$BUILD/tests/bus-client" "$ADDR" burst 1 >"$TMP/root-burst" 2>&1 &
BURST_PID=$!
sleep 1 # the bus has passed the calls on to the daemon's socket
kill -STOP "$BUS_PID"
kill -CONT "$PD_PID"
sleep 1 # the daemon has read them, and asked the bus
kill -CONT "$BUS_PID"
wait "$SPREAD_PID"
wait "$BURST_PID"
note "nobody: $(tr '\n' ' ' <"$TMP/spread"); root: $(head -n 1 "$TMP/root-burst")"
result "200 calls of one user on 4 new connections: 16 + 128 wait for the bus, 56 refused at once" \
    "$(grep -q '^spread: .*LimitExceeded (56 while waiting for the bus), 0 other errors, 0 unanswered' \
        "$TMP/spread"; echo $?)"
result "  root's call on a new connection read after them waits and is answered" \
    "$(grep -q '^burst 1: 1 calls on 1 connections, 1 answered, 0 LimitExceeded' "$TMP/root-burst"; echo $?)"

# A call far larger than any of the interface's (4 KiB at most; the largest, a domain name of 1024 bytes,
# takes about 1.2 KiB, and is served above) is refused before it can wait for the bus, naming its size.
BIG=$(head -c 5000 /dev/zero | tr '\0' a)
for m in GetDecision GetDecisionsJSON; do
    [ "$(berr nobody "$m" s "$BIG")" = "$E.InvalidArgument" ] && grep -q "A call of 5[0-9][0-9][0-9] bytes is refused" "$ERR"
    result "a 5000-byte $m of nobody's new connection: InvalidArgument, naming its size" $?
    [ "$(berr "$m" s "$BIG")" = "$E.InvalidArgument" ] && grep -q "A call of 5[0-9][0-9][0-9] bytes is refused" "$ERR"
    result "  root's too" $?
done
# A large call is charged like any other, its token taken before its argument is read, and then costs
# every token its user has left: user daemon (a bucket of its own) sending 40 of 5000 bytes one at a time on
# one connection has the first refused with InvalidArgument (read while the bus names the connection) and
# nearly all the rest with LimitExceeded, their strings left unread; a call of the same user on a new
# connection finds the tokens gone.
DAEMON_USER=(setpriv --reuid=daemon --regid=daemon --clear-groups)
"${DAEMON_USER[@]}" timeout 30 "$BUILD/tests/bus-client" "$ADDR" large 40 5000 >"$TMP/large" 2>&1
note "$(cat "$TMP/large")"
read -r invalid limited < <(sed -n 's/^large: .* 0 answered, \([0-9]*\) InvalidArgument, \([0-9]*\) LimitExceeded, 0 other$/\1 \2/p' "$TMP/large")
result "40 large calls of one connection: at most 5 InvalidArgument, the rest LimitExceeded (${invalid:-?}, ${limited:-?})" \
    "$([ -n "${invalid:-}" ] && [ "$invalid" -le 5 ] && [ $((invalid + limited)) -eq 40 ]; echo $?)"
[ "$(berr daemon GetDecision s nope)" = "$E.LimitExceeded" ]
result "  the user's next call, on a new connection: LimitExceeded" $?
# The calls sd-bus answers for the daemon cost no token, but a named non-root uid may make only 100 of them
# at once and 50 a second: nobody keeping 100 Introspect, GetAll and Ping in flight for 2 s (thousands)
# has most refused with LimitExceeded; root's are all answered; once its share has refilled, nobody's
# busctl and gdbus introspect work as before.
"${NOBODY[@]}" timeout 30 "$BUILD/tests/bus-client" "$ADDR" free 2 >"$TMP/free-nobody" 2>&1
timeout 30 "$BUILD/tests/bus-client" "$ADDR" free 1 >"$TMP/free-root" 2>&1
note "nobody: $(cat "$TMP/free-nobody"); root: $(cat "$TMP/free-root")"
grep -q " refused with org.placementd1.Error.LimitExceeded" "$TMP/free-nobody"
result "a flood of nobody's Introspect, GetAll and Ping is refused with LimitExceeded" $?
grep -q "^free: [0-9]* sent, [0-9]* answered, 0 refused" "$TMP/free-root"
result "  root's are all answered" $?
sleep 2.5 # nobody's share refills
run "${NOBODY[@]}" busctl --address="$ADDR" introspect "$NAME" "$OPATH"
result "  as nobody: busctl introspect lists GetStatus and Policy (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^\.GetStatus' "$OUT" && grep -q '^\.Policy' "$OUT"; echo $?)"
run "${NOBODY[@]}" gdbus introspect --address "$ADDR" --dest "$NAME" --object-path "$OPATH"
result "  as nobody: gdbus introspect shows org.placementd1.Manager (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q 'interface org.placementd1.Manager' "$OUT"; echo $?)"
# The daemon's second connection only asks the bus who senders are: it serves nothing, so a call to it
# gets no answer at all (sd-bus answered Peer.Ping and Introspect there, outside every user's share: about
# 52,000 Pings of one client in 12 s). Its unique name is the daemon's PID's other one.
OWNER=$(busctl --address="$ADDR" call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
    GetNameOwner s "$NAME" 2>/dev/null | awk '{ gsub(/"/, "", $2); print $2 }')
ASKER=$(busctl --address="$ADDR" list --unique --no-legend 2>/dev/null |
    awk -v pid="$PD_PID" -v owner="$OWNER" '$2 == pid && $1 != owner { print $1; exit }')
result "the daemon has a second connection on the bus (${ASKER:-none}, besides $OWNER)" "$([ -n "$ASKER" ]; echo $?)"
run "${NOBODY[@]}" busctl --address="$ADDR" --timeout=1 call "${ASKER:-:1.0}" / org.freedesktop.DBus.Peer Ping
result "  as nobody: Peer.Ping to it gets no answer (rc $RC: $(head -c 80 "$ERR"))" \
    "$([ $RC -ne 0 ] && grep -qi 'timed out' "$ERR"; echo $?)"
run "${NOBODY[@]}" busctl --address="$ADDR" --timeout=1 call "${ASKER:-:1.0}" / \
    org.freedesktop.DBus.Introspectable Introspect
result "  as nobody: Introspect of it gets no answer (rc $RC: $(head -c 80 "$ERR"))" \
    "$([ $RC -ne 0 ] && grep -qi 'timed out' "$ERR"; echo $?)"
# Every call a non-root user makes counts: a member or a path the daemon does not have, and GetStatus,
# share the same 100 at once and 50 a second. User bin keeping 100 of them in flight for 2 s has all but
# about 200 refused with LimitExceeded (before, all of some 10,000 were answered).
"${BIN_USER[@]}" timeout 30 "$BUILD/tests/bus-client" "$ADDR" stray 2 >"$TMP/stray" 2>&1
note "$(tr '\n' ' ' <"$TMP/stray")"
read -r answered limited < <(sed -n 's/^stray: \([0-9]*\) answered or refused by sd-bus, \([0-9]*\) LimitExceeded$/\1 \2/p' "$TMP/stray")
result "a flood of unknown members, unknown paths and GetStatus: at most 300 answered, the rest LimitExceeded (${answered:-?}, ${limited:-?})" \
    "$([ -n "${answered:-}" ] && [ "$answered" -le 300 ] && [ "$limited" -gt 0 ]; echo $?)"
# A new connection's calls count too: they wait while the bus names it, then are counted. User sys opening
# a connection for each 200 Introspect calls for 3 s gets at most what 100 at once and 50 a second allow
# (before: every call of a connection not yet named was answered, about 2,600 in 5 s).
"${SYS_USER[@]}" timeout 30 "$BUILD/tests/bus-client" "$ADDR" fresh 3 200 >"$TMP/fresh" 2>&1
note "$(cat "$TMP/fresh")"
answered=$(sed -n 's/^fresh: [0-9]* connections, \([0-9]*\) answered, .*/\1/p' "$TMP/fresh")
result "new connections of 200 Introspect each for 3 s: at most 300 answered (${answered:-?})" \
    "$([ -n "${answered:-}" ] && [ "$answered" -le 300 ] && [ "$answered" -gt 0 ]; echo $?)"
sleep 2.5 # sys's share refills
run "${SYS_USER[@]}" busctl --address="$ADDR" get-property "$NAME" "$OPATH" "$IFACE" Version
result "  once its share has refilled, sys's busctl get-property on a new connection works (rc $RC)" "$RC"
alive
result "  placementd alive" $?

# ---- placementctl -----------------------------------------------------------------------------------
ctl status
result "placementctl status (rc $RC)" "$([ $RC -eq 0 ] && grep -q "^placementd $VERSION: Connected to test:///default, policy compat" "$OUT" &&
    grep -q '^host: 2 NUMA nodes, 2 packages, 4 cores, 8 PUs (2 threads per core)' "$OUT"; echo $?)"
ctl status --json
result "placementctl status --json (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["policy"] == "compat" and d["connected"] is True and d["topology"]["pus"] == 8
assert d["decisions"].get("placed", 0) >= 1, d.get("decisions")' "$OUT"; echo $?)"
ctl list
result "placementctl list (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^DOMAIN ' "$OUT" && grep -q '^test  *placed  *explicit ' "$OUT"; echo $?)"
ctl list --json
result "placementctl list --json: valid JSON with a decisions array (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["decisions"], list) and d["decisions"][0]["domain"] == "test"' "$OUT"; echo $?)"
ctl show test
result "placementctl show test (rc $RC)" "$([ $RC -eq 0 ] && grep -q "^test ($UUID)" "$OUT" && grep -q 'result: *placed' "$OUT"; echo $?)"
ctl show --json test
result "placementctl show --json test (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["domain"] for x in d["decisions"]] == ["test"]' "$OUT"; echo $?)"
ctl show "$UUID"
result "placementctl show UUID (rc $RC)" "$([ $RC -eq 0 ] && grep -q "^test ($UUID)" "$OUT"; echo $?)"
ctl explain test
result "placementctl explain test (rc $RC)" "$([ $RC -eq 0 ] && grep -q 'candidate node sets' "$OUT"; echo $?)"
ctl explain --json test
result "placementctl explain --json test is valid JSON (rc $RC)" "$([ $RC -eq 0 ] && json_ok "$OUT"; echo $?)"
ctl map
result "placementctl map (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^package 0' "$OUT" && grep -q 'A test' "$OUT"; echo $?)"
ctl map --json
result "placementctl map --json is valid JSON (rc $RC)" "$([ $RC -eq 0 ] && json_ok "$OUT"; echo $?)"
ctl plan --vcpus=2 --memory=1G
result "placementctl plan --vcpus=2 --memory=1G (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^2 vCPUs, 1.0 GiB: placed on node' "$OUT"; echo $?)"
ctl plan --vcpus=2 --memory=1G --json
result "placementctl plan --json is valid JSON (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["vcpus"] == 2 and d["memory"] == 1 << 30 and d["result"] == "placed"' "$OUT"; echo $?)"
ctl rebalance
result "placementctl rebalance (rc $RC)" "$([ $RC -eq 0 ] && [ -s "$OUT" ]; echo $?)"
ctl rebalance --json
result "placementctl rebalance --json is valid JSON (rc $RC)" "$([ $RC -eq 0 ] && json_ok "$OUT"; echo $?)"
ctl replace test
result "placementctl replace test (rc $RC)" "$([ $RC -eq 0 ]; echo $?)"
ctl reload
result "placementctl reload (rc $RC)" "$([ $RC -eq 0 ]; echo $?)"
# every verb's --json is one JSON object (reload, replace and snippet printed nothing or XML)
for verb in reload "replace test" "snippet test"; do
    # shellcheck disable=SC2086 # the verb and its argument
    ctl $verb --json
    result "placementctl $verb --json is valid JSON (rc $RC)" "$([ $RC -eq 0 ] && json_ok "$OUT"; echo $?)"
done
ctl replace test --json
result "placementctl replace test --json prints the new decision, as show does" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["decisions"][0]
assert d["domain"] == "test" and "vcpu_pins" in d, d' "$OUT"; echo $?)"
ctl snippet test --json
result "placementctl snippet test --json holds its <cputune>" "$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["snippets"]
assert len(s) == 1 and s[0]["domain"] == "test" and "<cputune>" in s[0]["xml"] and s[0]["error"] is None' "$OUT"; echo $?)"
ctl show nope
result "placementctl show nope exits 4 (rc $RC)" "$([ $RC -eq 4 ]; echo $?)"
ctl replace nope
result "placementctl replace nope exits 4 (rc $RC)" "$([ $RC -eq 4 ]; echo $?)"
for verb in show explain replace; do
    ctl $verb ""
    result "placementctl $verb \"\" is a usage error, exit 2 (rc $RC), printing nothing" \
        "$([ $RC -eq 2 ] && [ ! -s "$OUT" ]; echo $?)"
done
run "$CTL" cpu-advice --connect=test:///default ""
result "placementctl cpu-advice \"\" is a usage error, exit 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
CRASHER=$ROOT/tests/fuzz/regressions/topology-hwloc-v1-numa-without-cpuset # crashes hwloc 2.9
HWLOC_HIDE_ERRORS=2 run "$CTL" topology --topology="$CRASHER"
result "placementctl topology on XML that crashes hwloc exits 2 (rc $RC) saying so" \
    "$([ $RC -eq 2 ] && grep -q "hwloc crashed reading $CRASHER (signal" "$ERR"; echo $?)"
HWLOC_HIDE_ERRORS=2 run "$PLACEMENTD" --topology="$CRASHER" --connect=test:///default --bus=none --foreground
result "placementd --topology= on XML that crashes hwloc exits 2 (rc $RC) saying so" \
    "$([ $RC -eq 2 ] && grep -q "hwloc crashed reading $CRASHER (signal" "$ERR"; echo $?)"
ctl plan --vcpus=0 --memory=1G
result "placementctl plan --vcpus=0 exits 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
ctl plan --vcpus=2 --memory=64G
result "placementctl plan --memory beyond the host exits 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
ctl frobnicate
result "placementctl unknown command exits 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
run "$CTL" --bus-address "$ADDR" status
result "placementctl --bus-address ADDR status (option value as its own word, before the command) (rc $RC)" \
    "$([ $RC -eq 0 ]; echo $?)"
result "daemon alive after the placementctl calls" "$(alive; echo $?)"

# ---- restart under a client -------------------------------------------------------------------------
OLD=$PD_PID
WAIT_RC=
kill -TERM "$PD_PID"
dead_within 5 "$OLD"
result "placementd exits within 5 s of SIGTERM, status 0 (status ${WAIT_RC:-none})" "$([ "$WAIT_RC" = 0 ]; echo $?)"
PD_PID=
ctl status
result "placementctl status while placementd is down exits 3 (rc $RC) saying it is not running" \
    "$([ $RC -eq 3 ] && grep -q 'placementd is not running' "$ERR"; echo $?)"
ctl list
result "placementctl list while placementd is down exits 3 (rc $RC)" "$([ $RC -eq 3 ]; echo $?)"
must "placementd started again and owns $NAME within 10 s" start_placementd
ctl status
result "placementctl status after the restart (rc $RC)" "$([ $RC -eq 0 ] && grep -q 'policy compat' "$OUT"; echo $?)"
bcall GetDecision s test
result "test placed again after the restart" "$(grep -q '"test" "[0-9a-f-]*" "[a-z]*" "placed"' "$OUT"; echo $?)"

# ---- bus restart ------------------------------------------------------------------------------------
OLD=$BUS_PID
{ kill -KILL "$BUS_PID"; dead_within 5 "$OLD"; } 2>/dev/null # no "Killed" job notice
result "dbus-daemon killed with SIGKILL" $?
BUS_PID=
ctl status
result "placementctl status without a bus exits 3 (rc $RC)" "$([ $RC -eq 3 ]; echo $?)"
bus_start "$TMP"
result "new dbus-daemon on the same path $TMP/bus (pid $BUS_PID)" $?
result "placementd still running after losing the bus" "$(alive; echo $?)"
T1=$(date +%s%N)
wait_for 12 name_on_bus
r=$?
result "placementd back on the new bus by itself within 12 s (took $((($(date +%s%N) - T1) / 1000000)) ms)" $r
ctl status
result "placementctl status works again (rc $RC)" "$([ $RC -eq 0 ] && grep -q 'Connected to test:///default' "$OUT"; echo $?)"
bprop Connected
result "Connected still true after the bus restart" "$([ "$(cat "$OUT")" = 'b true' ]; echo $?)"
nb_ctl list
result "as nobody: placementctl list on the new bus (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^test ' "$OUT"; echo $?)"
bcall Replace s test
result "busctl Replace test as root on the new bus" $RC
result "daemon alive at the end" "$(alive; echo $?)"

# ---- systemd's view of a reload ----------------------------------------------------------------------
# `systemctl reload` only sends SIGHUP: a failed reload must show in STATUS= (systemctl status) until one
# works. A daemon of its own without a bus, its notifications read from a socket as systemd would.
NOTIFY=$TMP/notify.sock NOTIFY_LOG=$TMP/notify.log NCONF=$TMP/notify.conf
: >"$NCONF"
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(65536).decode(errors="replace").replace("\n", "|") + "\n")' "$NOTIFY" "$NOTIFY_LOG" &
NOTIFY_PID=$!
MON_PIDS+=("$NOTIFY_PID")
wait_for 5 test -S "$NOTIFY"
NOTIFY_SOCKET=$NOTIFY "$PLACEMENTD" --config="$NCONF" --connect=test:///default --topology="$TOPOLOGY" \
    --bus=none >>"$PD_LOG" 2>&1 &
NPD=$!
MON_PIDS+=("$NPD")
wait_for 10 grep -q 'READY=1' "$NOTIFY_LOG"
result "a daemon under systemd says READY=1 and its STATUS=" "$(grep -q '^STATUS=.*Connected' "$NOTIFY_LOG"; echo $?)"
printf '[Placement]\nPolicy=bogus\n' >"$NCONF"
kill -HUP "$NPD"
wait_for 10 grep -q 'the last reload failed' "$NOTIFY_LOG"
result "after a failed SIGHUP reload STATUS= says so, naming the problem" \
    "$(grep -q '^STATUS=.*the last reload failed, the old configuration runs: .*Policy: invalid value' "$NOTIFY_LOG"; echo $?)"
: >"$NCONF"
: >"$NOTIFY_LOG"
kill -HUP "$NPD"
wait_for 10 grep -q '^STATUS=' "$NOTIFY_LOG"
result "after a reload that works STATUS= no longer does" \
    "$(grep -q '^STATUS=' "$NOTIFY_LOG" && ! grep -q 'reload failed' "$NOTIFY_LOG"; echo $?)"

# No --config and no file at the default path: the built-in defaults, and the log says so at start and on
# a reload rather than naming a file it never read (an install with no /etc/placementd.conf).
stop_pid "$NPD"
DEFAULT_CONF=$("$PLACEMENTD" --help | sed -n 's/.*--config=FILE.*(default \(.*\))$/\1/p')
if [ -z "$DEFAULT_CONF" ] || [ -e "$DEFAULT_CONF" ]; then
    echo "# skip: the default configuration ${DEFAULT_CONF:-(not in --help)} exists here"
else
    DLOG=$TMP/default.log
    NOTIFY_SOCKET=$NOTIFY "$PLACEMENTD" --connect=test:///default --topology="$TOPOLOGY" --bus=none \
        >"$DLOG" 2>&1 &
    NPD=$!
    MON_PIDS+=("$NPD")
    wait_for 10 grep -q 'Connected to' "$DLOG"
    result "no default configuration file: one notice at start, \"$DEFAULT_CONF not found: built-in defaults\"" \
        "$([ "$(grep -c "^<5>$DEFAULT_CONF not found: built-in defaults\$" "$DLOG")" = 1 ]; echo $?)"
    kill -HUP "$NPD"
    wait_for 10 grep -q 'Configuration reloaded' "$DLOG"
    result "no default configuration file: a reload says so, not that it read the file" \
        "$(grep -q "Configuration reloaded: $DEFAULT_CONF not found: built-in defaults (policy " "$DLOG" &&
            ! grep -q 'reloaded from' "$DLOG"; echo $?)"
fi

# A libvirtd that accepts the connection and never answers (a hung virtqemud): the open runs in a thread
# of its own, so the daemon still says READY=1 ("Waiting for ..."), answers on D-Bus and stops on SIGTERM.
stop_pid "$NPD"
TARPIT=$TMP/tarpit.sock
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16); held = []
while True: held.append(s.accept()[0])' "$TARPIT" &
MON_PIDS+=("$!")
wait_for 5 test -S "$TARPIT"
: >"$NOTIFY_LOG"
# a bus of its own: the first daemon may still own the name on this one
MAIN_BUS_PID=$BUS_PID MAIN_BUS_ADDR=$BUS_ADDR
mkdir "$TMP/tarpit"
bus_start "$TMP/tarpit"
TBUS=$BUS_ADDR
MON_PIDS+=("$BUS_PID")
BUS_PID=$MAIN_BUS_PID BUS_ADDR=$MAIN_BUS_ADDR
NOTIFY_SOCKET=$NOTIFY "$PLACEMENTD" --config="$NCONF" --connect="qemu:///system?socket=$TARPIT" \
    --topology="$TOPOLOGY" --bus-address="$TBUS" >>"$PD_LOG" 2>&1 &
NPD=$!
MON_PIDS+=("$NPD")
# READY=1 waits for libvirt (or 5 s): a reload meanwhile does not send it early
wait_for 5 grep -q '^STATUS=' "$NOTIFY_LOG"
kill -HUP "$NPD"
sleep 1
result "libvirt never answering: a reload within its first 5 s sends no READY=1 (nor RELOADING=1)" \
    "$(! grep -q '^READY=1\|^RELOADING=1' "$NOTIFY_LOG"; echo $?)"
wait_for 10 grep -q 'READY=1' "$NOTIFY_LOG"
result "libvirt never answering: READY=1 all the same, STATUS= says it waits" \
    "$(grep -q '^READY=1' "$NOTIFY_LOG" && grep -q '^STATUS=Waiting for qemu:///system' "$NOTIFY_LOG"; echo $?)"
wait_for 10 busctl --address="$TBUS" status "$NAME"
run busctl --address="$TBUS" call "$NAME" "$OPATH" "$IFACE" GetStatus
result "libvirt never answering: GetStatus answers (rc $RC)" "$([ "$RC" -eq 0 ] && grep -q Waiting "$OUT"; echo $?)"
kill -TERM "$NPD"
wait_for 5 sh -c "! kill -0 $NPD 2>/dev/null"
result "libvirt never answering: SIGTERM stops the daemon within 5 s" "$(! kill -0 "$NPD" 2>/dev/null; echo $?)"

# ---- a reload to another libvirt URI -------------------------------------------------------------------
# The new URI is opened before anything lets go of the running connection: one libvirt refuses, or that
# never answers, is refused as a broken file is (Reload fails naming it, the whole old configuration
# runs on, its domains placed as they were); one that opens is switched to. A daemon of its own on the
# tarpit's bus, its URI from the file (no --connect).
UCONF=$TMP/uri.conf ULOG=$TMP/uri.log
OTHER_HOST=$TMP/other-host.xml
printf '%s\n' "<node><cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>2</threads>" \
    "<active>8</active><mhz>2000</mhz><model>i686</model></cpu><memory>8388608</memory>" \
    "<domain type='test'><name>elsewhere</name><memory>524288</memory><vcpu>1</vcpu>" \
    "<os><type>hvm</type></os></domain></node>" >"$OTHER_HOST"
printf '[Libvirt]\nURI=test:///default\n' >"$UCONF"
"$PLACEMENTD" --config="$UCONF" --topology="$TOPOLOGY" --bus-address="$TBUS" --foreground >"$ULOG" 2>&1 &
UPD=$!
MON_PIDS+=("$UPD")
ucall() { run busctl --address="$TBUS" call "$NAME" "$OPATH" "$IFACE" "$@"; }
uprop() { run busctl --address="$TBUS" get-property "$NAME" "$OPATH" "$IFACE" "$1"; }
ulist_has() { ucall ListDecisions && grep -q "\"$1\"" "$OUT"; }
wait_for 10 ulist_has test
result "a daemon on [Libvirt] URI=test:///default places its domain" $?
printf '[Placement]\nPolicy=compat\n[Libvirt]\nURI=test:///nonexistent.xml\n' >"$UCONF"
ucall Reload
result "Reload to test:///nonexistent.xml fails naming the URI and libvirt's message (rc $RC)" \
    "$([ $RC -ne 0 ] && grep -qF '[Libvirt] URI=: Cannot connect to test:///nonexistent.xml: ' "$ERR" &&
        grep -qF 'keeping test:///default' "$ERR"; echo $?)"
note "$(cat "$ERR")"
result "  the log says so as for a broken file" \
    "$(grep -qF 'Reloading the configuration failed, keeping the old one: [Libvirt] URI=: Cannot connect to test:///nonexistent.xml' "$ULOG"; echo $?)"
uprop Policy
result "  the whole old configuration runs (Policy still explicit)" "$([ "$(cat "$OUT")" = 's "explicit"' ]; echo $?)"
ucall GetStatus
result "  still connected to test:///default, its domain still placed" \
    "$(grep -q 'Connected to test:///default' "$OUT" && ulist_has test &&
        ! grep -q 'Libvirt URI changed' "$ULOG" && ! grep -q 'its cores and memory are free again' "$ULOG"; echo $?)"
# libvirt's message may quote what the URI names (here a line of a root-only file the test driver tried to
# read): Reload()'s caller (root) gets it, ReloadError and placementctl status, every local user's, not
printf 'root:SECRETMARK:19000:0:99999:7:::\n' >"$TMP/secret-file"
chmod 600 "$TMP/secret-file"
printf '[Libvirt]\nURI=test://%s\n' "$TMP/secret-file" >"$UCONF"
ucall Reload
result "Reload to a URI whose libvirt message quotes a file: the caller's answer has libvirt's words (rc $RC)" \
    "$([ $RC -ne 0 ] && grep -qF 'SECRETMARK' "$ERR"; echo $?)"
uprop ReloadError
result "  ReloadError names the URI, not libvirt's words" \
    "$(grep -qF "Cannot connect to test://$TMP/secret-file (libvirt" "$OUT" && grep -qF 'message is in the log)' "$OUT" &&
        ! grep -q SECRETMARK "$OUT"; echo $?)"
note "$(cat "$OUT")"
run "${NOBODY[@]}" "$CTL" --bus-address="$TBUS" status --json
result "  placementctl status as nobody: no libvirt words either (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q 'reload_error' "$OUT" && ! grep -q SECRETMARK "$OUT"; echo $?)"
# a libvirtd that never answers: the reload waits in the background (the daemon answers meanwhile) and is
# refused after 20 s, before a D-Bus client gives up on Reload (busctl 25 s, placementctl 30 s)
printf '[Placement]\nPolicy=compat\n[Libvirt]\nURI=qemu:///system?socket=%s\n' "$TARPIT" >"$UCONF"
T1=$(date +%s%N)
timeout 40 "$CTL" --bus-address="$TBUS" reload >"$TMP/uri-reload.out" 2>"$TMP/uri-reload.err" &
RELOADER=$!
wait_for 5 grep -qF 'Reload: opening qemu:///system?... before switching to it' "$ULOG"
ucall GetStatus
T2=$(date +%s%N)
result "Reload to a URI that never answers: the daemon answers meanwhile (GetStatus after $(((T2 - T1) / 1000000)) ms, rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q 'Connected to test:///default' "$OUT" && pid_alive "$RELOADER"; echo $?)"
# reloads of the same URI meanwhile (SIGHUP, Reload() again) join the open under way and its deadline:
# no second open, and the first caller is answered 20 s after its call, not after the last reload's; a
# file that does not load meanwhile is refused alone, the waiting reload goes on
cp "$UCONF" "$TMP/uri-good.conf"
kill -HUP "$UPD"
sleep 1
printf '[Placement]\nPolicy=bogus\n[Libvirt]\nURI=qemu:///system?socket=%s\n' "$TARPIT" >"$UCONF"
kill -HUP "$UPD"
wait_for 5 grep -qF 'Reload: the reload waiting for qemu:///system?... to open goes on' "$ULOG"
result "  a broken file meanwhile is refused alone: the waiting reload goes on" $?
cp "$TMP/uri-good.conf" "$UCONF"
kill -HUP "$UPD"
wait_for 5 sh -c "[ \"\$(grep -c 'Reload: still opening qemu:///system?...' '$ULOG')\" = 2 ]"
result "  two SIGHUPs meanwhile join it: one open, not three" \
    "$([ "$(grep -c 'Reload: opening qemu:///system?... before' "$ULOG")" = 1 ]; echo $?)"
wait "$RELOADER"
RRC=$?
T2=$(date +%s%N)
result "  refused after $(((T2 - T1) / 1000000)) ms: placementctl reload exits 2 naming the URI (rc $RRC)" \
    "$([ $RRC -eq 2 ] && [ $(((T2 - T1) / 1000000)) -ge 19000 ] && [ $(((T2 - T1) / 1000000)) -lt 23000 ] &&
        grep -qF 'failed, the old configuration still runs: [Libvirt] URI=: Cannot connect to qemu:///system?...: no answer within 20 s; keeping test:///default' "$TMP/uri-reload.err"; echo $?)"
note "$(cat "$TMP/uri-reload.err")"
result "  still connected to test:///default, its domain placed" \
    "$(ucall GetStatus && grep -q 'Connected to test:///default' "$OUT" && ulist_has test; echo $?)"
# the open given up on is still blocked in libvirt: another reload to that libvirtd is refused at once,
# not a second thread and socket beside it (each reload had added one)
T1=$(date +%s%N)
run timeout 40 "$CTL" --bus-address="$TBUS" reload
T2=$(date +%s%N)
result "  a reload to it again is refused in $(((T2 - T1) / 1000000)) ms: its earlier open has not returned (rc $RC)" \
    "$([ $RC -eq 2 ] && [ $(((T2 - T1) / 1000000)) -lt 5000 ] &&
        grep -qF 'Cannot try qemu:///system?... now: an earlier open of that libvirtd has not returned' "$ERR"; echo $?)"
# more libvirtds that never answer, each its own: a second socket is another libvirtd
for n in 2 3; do
    python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16); held = []
while True: held.append(s.accept()[0])' "$TMP/tarpit$n.sock" &
    MON_PIDS+=("$!")
    wait_for 5 test -S "$TMP/tarpit$n.sock"
done
# a reload to another URI that comes while one waits replaces it: the waiting caller is answered at once
# (replaced, exit 1), not when the newer one ends; a URI that opens is switched to
printf '[Placement]\nPolicy=compat\n[Libvirt]\nURI=qemu:///system?socket=%s\n' "$TMP/tarpit2.sock" >"$UCONF"
timeout 40 "$CTL" --bus-address="$TBUS" reload >"$TMP/uri-reload.out" 2>"$TMP/uri-reload.err" &
RELOADER=$!
wait_for 5 sh -c "[ \"\$(grep -c 'Reload: opening qemu:///system?... before' '$ULOG')\" = 2 ]"
printf '[Placement]\nPolicy=compat\n[Libvirt]\nURI=test://%s\n' "$OTHER_HOST" >"$UCONF"
T1=$(date +%s%N)
ucall Reload
result "Reload to a second test URI while one waits: ok (rc $RC), the waiting one given up" \
    "$([ $RC -eq 0 ] && grep -q 'Reload: no longer waiting for qemu:///system?... to open' "$ULOG"; echo $?)"
wait "$RELOADER"
RRC=$?
T2=$(date +%s%N)
result "  the replaced caller answered in $(((T2 - T1) / 1000000)) ms: exit 1, replaced (rc $RRC)" \
    "$([ $RRC -eq 1 ] && [ $(((T2 - T1) / 1000000)) -lt 5000 ] &&
        grep -qF 'replaced by a newer reload before qemu:///system?... opened' "$TMP/uri-reload.err"; echo $?)"
note "$(cat "$TMP/uri-reload.err")"
uprop Policy
result "  switched: Policy compat, the other host's domain placed, the old one's forgotten" \
    "$([ "$(cat "$OUT")" = 's "compat"' ] && ulist_has elsewhere && ! ulist_has test; echo $?)"
uprop ReloadError
result "  ReloadError cleared" "$([ "$(cat "$OUT")" = 's ""' ]; echo $?)"
# a stop while a reload waits tells its caller so, not "placementd is not running"
printf '[Libvirt]\nURI=qemu:///system?socket=%s\n' "$TMP/tarpit3.sock" >"$UCONF"
timeout 40 "$CTL" --bus-address="$TBUS" reload >"$TMP/uri-reload.out" 2>"$TMP/uri-reload.err" &
RELOADER=$!
wait_for 5 sh -c "[ \"\$(grep -c 'Reload: opening qemu:///system?... before' '$ULOG')\" = 3 ]"
kill -TERM "$UPD"
wait "$RELOADER"
RRC=$?
result "SIGTERM while a reload waits: its caller is told the daemon stops (rc $RRC)" \
    "$([ $RRC -eq 1 ] && grep -qF 'placementd is stopping: the reload was not applied' "$TMP/uri-reload.err"; echo $?)"
note "$(cat "$TMP/uri-reload.err")"
stop_pid "$UPD"

# ---- one placementd per libvirt URI --------------------------------------------------------------------
# The bus name keeps out only a second daemon on the same bus: two daemons on one URI with other buses (or
# none) would undo each other's pins. The lock is taken before connecting, so a URI to a socket that is not
# there shows it without a libvirtd.
LURI="qemu:///system?socket=$TMP/no-libvirt-sock"
OTHER="qemu:///session?socket=$TMP/no-libvirt-sock"
: >"$TMP/first.log"
"$PLACEMENTD" --connect="$LURI" --topology="$TOPOLOGY" --bus=none --foreground >>"$TMP/first.log" 2>&1 &
FIRST=$!
MON_PIDS+=("$FIRST")
wait_for 10 grep -q "Cannot connect to $LURI" "$TMP/first.log"
run "$PLACEMENTD" --connect="$LURI" --topology="$TOPOLOGY" --bus-address="unix:path=$TMP/no-bus" --foreground
result "a second placementd on the same URI, another bus: exit 1 (rc $RC) naming the first one's pid" \
    "$([ "$RC" -eq 1 ] &&
        grep -qF "another placementd (pid $FIRST) already places the domains of qemu:///system; not starting a second one" "$ERR"; echo $?)"
note "$(grep -F 'another placementd' "$ERR")"
result "  it never connected to libvirt" "$(! grep -q 'Cannot connect' "$ERR"; echo $?)"
result "  the first one runs on" "$(pid_alive "$FIRST"; echo $?)"
# another URI is another lock: a daemon on it runs
printf '[Libvirt]\nURI=%s\n[DBus]\nBus=none\n' "$OTHER" >"$TMP/other.conf"
: >"$TMP/other.log"
"$PLACEMENTD" --config="$TMP/other.conf" --topology="$TOPOLOGY" --foreground >>"$TMP/other.log" 2>&1 &
SECOND=$!
MON_PIDS+=("$SECOND")
wait_for 10 grep -q "Cannot connect to $OTHER" "$TMP/other.log"
result "a placementd on another URI runs beside it" "$(pid_alive "$SECOND"; echo $?)"
# its libvirtd away (retrying): a reload to a URI that does not open either is refused, naming it and
# libvirt's message (the held URI's lock is not asked for: only a URI that opens is)
printf '[Libvirt]\nURI=%s\n[DBus]\nBus=none\n' "$LURI" >"$TMP/other.conf"
kill -HUP "$SECOND"
wait_for 5 grep -q 'Reloading the configuration failed' "$TMP/other.log"
result "  its reload to a URI libvirt refuses is refused, its own libvirtd away" \
    "$(grep -qF "[Libvirt] URI=: Cannot connect to qemu:///system?...: Failed to connect socket to '$TMP/no-libvirt-sock'" "$TMP/other.log" &&
        grep -qF "; keeping qemu:///session?..." "$TMP/other.log"; echo $?)"
note "$(grep -F 'Reloading the configuration failed' "$TMP/other.log")"
retried_after() { sed -n '/Reloading the configuration failed/,$p' "$TMP/other.log" | grep -qF "Connecting to $OTHER again"; }
wait_for 10 retried_after
result "  it still connects to its own URI" \
    "$(retried_after && ! grep -q "Libvirt URI changed" "$TMP/other.log" && pid_alive "$SECOND"; echo $?)"
# the same libvirtd spelled another way is the lock it holds: a reload to it is no second daemon
SPELLED="QEMU+unix:///session?socket=$TMP/no-libvirt-sock"
printf '[Libvirt]\nURI=%s\n[DBus]\nBus=none\n' "$SPELLED" >"$TMP/other.conf"
kill -HUP "$SECOND"
wait_for 5 grep -qF "Libvirt URI changed to $SPELLED" "$TMP/other.log"
result "  a reload to its URI spelled another way keeps its own lock" \
    "$(grep -qF "Libvirt URI changed to $SPELLED" "$TMP/other.log"; echo $?)"
run "$PLACEMENTD" --connect="$OTHER" --topology="$TOPOLOGY" --bus=none --foreground
result "  and still keeps out another daemon on it (rc $RC)" \
    "$([ "$RC" -eq 1 ] && grep -qF "another placementd (pid $SECOND)" "$ERR"; echo $?)"
stop_pid "$FIRST"
stop_pid "$SECOND"
timeout 3 "$PLACEMENTD" --connect=test:///default --topology="$TOPOLOGY" --bus=none --foreground \
    >"$TMP/test-a.log" 2>&1 &
TEST_A=$!
run timeout 3 "$PLACEMENTD" --connect=test:///default --topology="$TOPOLOGY" --bus=none --foreground
wait "$TEST_A"
result "two daemons on the test driver (each its own host) both run (rc $RC and $?)" \
    "$([ "$RC" -eq 124 ] && grep -q 'test: placed' "$TMP/test-a.log" && grep -q 'test: placed' "$ERR"; echo $?)"
