#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# shellcheck source-path=SCRIPTDIR
# placementctl fed a hostile daemon's answers (a remote host's over -H, or any owner of the name on a
# session bus): tests/ctl/fake-daemon answers GetDecisionsJSON with JSON of the wrong shape or with
# control characters in its text. list, show and snippet must neither crash nor print a critical, and
# must never hand the terminal a control character or XML that is not a CPU list; nor must status, which
# shows the daemon's ReloadError. show's text of well-formed answers (guest cells: where their vCPUs and
# their memory went) is held to tests/golden/show/.
#   bash tests/ctl/hostile.sh [BUILD_DIR]
# TAP-like lines; the last line is "ctl-hostile: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"
tap_build "${1:-}"
CTL=$PLACEMENTCTL
FAKE=$BUILD/tests/fake-daemon

need dbus-daemon timeout lstopo # lstopo: map --svg against hosts that change while it is read
tap_begin ctl-hostile
tap_tmpdir ctl-hostile
TMP=$TAP_TMP
OUT=$TMP/out ERR=$TMP/err RC=0 FAKE_PID=
tap_cleanup() {
    stop_pid "$FAKE_PID"
    bus_stop
}

must "the stand-in daemon is built" test -x "$FAKE"
must "a private bus" bus_start "$TMP"
ANSWER=$TMP/answer.json
echo '{"decisions": []}' >"$ANSWER"
"$FAKE" "$BUS_ADDR" "$ANSWER" >"$TMP/fake.out" 2>&1 &
FAKE_PID=$!
must "the stand-in owns org.placementd1" wait_for 10 grep -q '^ready' "$TMP/fake.out"

# snippet_clean FILE: no element from the answer outside comments, no "--" inside one (it would end it);
# with --json, in the "xml" members (the names are JSON strings there)
snippet_clean() {
    python3 - "$1" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
try:
    xmls = [s["xml"] or "" for s in json.loads(text)["snippets"]]
except (ValueError, KeyError, TypeError):
    xmls = [text]
for x in xmls:
    comments = re.findall(r"<!--(.*?)-->", x, re.S)
    if any("--" in c for c in comments) or "<evil" in re.sub(r"<!--.*?-->", "", x, flags=re.S):
        sys.exit(1)
PY
}

# raw_controls FILE...: true (RAW says which) when a file holds a control character other than newline
# and tab, a C1 control or a bidi override
raw_controls() {
    RAW=
    LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$@" && RAW="a control character in its output"
    LC_ALL=C grep -q $'\xc2[\x80-\x9f]\|\xe2\x80[\xaa-\xae]' "$@" &&
        RAW="${RAW:+$RAW; }a C1 control or bidi override in its output"
    [ -n "$RAW" ]
}

# answer NAME JSON: every reading verb on this answer; no signal, no critical, no raw control character
answer() {
    local name=$1 verb bad
    printf '%s\n' "$2" >"$ANSWER"
    for verb in list "show web1" "--json show web1" "snippet web1" "--json snippet web1" "explain web1" map \
        "--json map" status rebalance "--json rebalance"; do
        # shellcheck disable=SC2086 # the verb's words
        run "$CTL" --bus-address="$BUS_ADDR" $verb
        bad=
        ((RC >= 128)) && bad="killed by signal $((RC - 128))"
        grep -q 'CRITICAL\|WARNING' "$ERR" && bad="${bad:+$bad; }$(head -c 200 "$ERR")"
        raw_controls "$OUT" "$ERR" && bad="${bad:+$bad; }$RAW"
        [[ $verb == *snippet* ]] && ! snippet_clean "$OUT" && bad="${bad:+$bad; }XML from the answer in a snippet"
        result "$name: placementctl $verb (rc $RC)${bad:+: $bad}" "$([ -z "$bad" ]; echo $?)"
    done
}

answer "a pin that is a number" '{"decisions":[{"domain":"web1","uuid":"u","result":"placed","vcpu_pins":[1]}]}'
answer "memory_nodes that is a number" \
    '{"decisions":[{"domain":"web1","uuid":"u","result":"placed","vcpu_pins":["0"],"memory_nodes":7}]}'
answer "a cell without nodes, cells of the wrong type" \
    '{"decisions":[{"domain":"web1","uuid":"u","result":"placed","vcpu_pins":["0"],"cells":[{"id":0},7,"x"],
      "load":{"vcpu_busy":"x","busy_vcpus":"2"},"cpu_seconds":[],"vcpu_ids":["a"],"hugepage_size":"big"}]}'
answer "decisions that are not objects" '{"decisions":[7,"web1",null,[]]}'
answer "decisions that are not an array" '{"decisions":{"domain":"web1"}}'
answer "control characters in the daemon's text" \
    '{"decisions":[{"domain":"web1","uuid":"u\u001b[2J","vcpu_pins":["0-1\r\nforged"],"memory_nodes":"0",
      "memory_binding":"applied\u0085","result":"placed\u001b[2J\r\nforged line","policy":"\u009b2J",
      "reason":"x\nwhy: approved by root\u202e","apply_error":"\u0007"}]}'
answer "XML in pins" \
    '{"decisions":[{"domain":"web1","uuid":"u","result":"placed","vcpu_pins":["0'"'"'/><evil/>"],
      "memory_nodes":"0'"'"'/><evil/>","emulator_pin":"1'"'"'/><evil/>","iothreads":"1","iothread_pin":"<evil/>",
      "memory_binding":"applied"}]}'
answer "a name that would close the snippet's comment" \
    '{"decisions":[{"domain":"web1 --><evil/><!--","uuid":"u","result":"placed","vcpu_pins":["0"],
      "memory_nodes":"0","memory_binding":"applied"}]}'
answer "raw control bytes in text answers (explain, map, status, rebalance)" $'node 0\e[2J\rforged\xc2\x9b2J\nnext line'
answer "not JSON" 'this is not JSON'
answer "control characters in a D-Bus error's message" $'error:no such domain \e]0;PWNED\a\e[2J\xc2\x9b31m\xe2\x80\xae'
# a D-Bus error of several lines (a reload's configuration problems) is printed one problem a line
printf 'error:/etc/placementd.conf:3: [Placement] Policy=foo: invalid value\n/etc/placementd.conf:5: [Placement] Fit=bar: invalid value' >"$ANSWER"
run "$CTL" --bus-address="$BUS_ADDR" list
result "a D-Bus error of two lines is printed on two lines, not joined by \\x0a (rc $RC)" \
    "$([ "$(grep -c 'invalid value$' "$ERR")" = 2 ] && ! grep -qF '\x0a' "$ERR"; echo $?)"
# The last reload's failure (ReloadError) quotes the configuration: status shows its first line escaped,
# --json all of it as a JSON string, and neither hands the terminal a control character.
printf '/etc/placementd.conf:2: [Placement] Policy=\e]0;PWNED\a\e[2J\xc2\x9b31m\xe2\x80\xae: invalid value\nsecond problem' \
    >"$ANSWER"
run "$CTL" --bus-address="$BUS_ADDR" status
result "a ReloadError with escapes: status shows its first line, escaped (rc $RC)" \
    "$([ $RC -eq 0 ] && ! raw_controls "$OUT" "$ERR" && [ "$(grep -c '^Last reload' "$OUT")" = 1 ] &&
        grep -q '^Last reload: failed, the old configuration runs: /etc/placementd.conf:2: \[Placement\] Policy=\\x1b\]0;PWNED\\x07' "$OUT" &&
        ! grep '^Last reload' "$OUT" | grep -q 'second problem'; echo $?)"
run "$CTL" --bus-address="$BUS_ADDR" --json status
result "  status --json: \"reload_error\" holds all of it, escaped as JSON (rc $RC)" \
    "$([ $RC -eq 0 ] && ! raw_controls "$OUT" "$ERR" && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reload_error"].startswith("/etc/placementd.conf:2: [Placement] Policy=\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202e")
assert d["reload_error"].endswith("invalid value\nsecond problem")' "$OUT"; echo $?)"
: >"$ANSWER"
run "$CTL" --bus-address="$BUS_ADDR" status
result "an empty ReloadError: status has no \"Last reload\" line (rc $RC)" \
    "$([ $RC -eq 0 ] && ! grep -q 'Last reload' "$OUT"; echo $?)"
run "$CTL" --bus-address="$BUS_ADDR" --json status
result "  status --json: \"reload_error\" is null (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["reload_error"] is None' "$OUT"; echo $?)"

# map --svg prints the text map of the state it draws, though the daemon answers the two in two calls: a
# domain that goes and another that comes between them (answers queued in $ANSWER.d, one per call) must
# not leave the text showing one and the picture the other; a host that never holds still is said to.
TWO='synthetic:pack:1 core:2 pu:1'
map_json() { printf '{"cpus":[{"cpu":0,"state":"%s","domains":[%s]},{"cpu":1,"state":"%s","domains":[%s]}]}' "$@"; }
mkdir -p "$ANSWER.d"
map_json domain '"gone"' free '' >"$ANSWER.d/1"
echo 'text map: came on CPU 1' >"$ANSWER.d/2"
map_json free '' domain '"came"' >"$ANSWER.d/3"
echo 'text map: came on CPU 1' >"$ANSWER.d/4"
map_json free '' domain '"came"' >"$ANSWER.d/5"
run "$CTL" --bus-address="$BUS_ADDR" map --topology="$TWO" --svg="$TMP/moved.svg"
python3 "$HERE/svg-colours.py" "$TMP/moved.svg" >"$TMP/moved.colours" 2>&1
result "map --svg while a domain goes and another comes: the text and the picture show one state (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^text map: came' "$OUT" && grep -q '^box came ' "$TMP/moved.colours" &&
        ! grep -q '^box gone ' "$TMP/moved.colours" && ! grep -q 'changed while' "$ERR"; echo $?)"
for i in 1 5; do map_json domain '"gone"' free '' >"$ANSWER.d/$i"; done
for i in 3 7; do map_json free '' domain '"came"' >"$ANSWER.d/$i"; done
for i in 2 4 6; do echo "text map $i" >"$ANSWER.d/$i"; done
run "$CTL" --bus-address="$BUS_ADDR" map --topology="$TWO" --svg="$TMP/moving.svg"
result "  on a host that changes at every call it says the picture may differ from the text (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^text map 6' "$OUT" &&
        grep -q 'changed while the map was read: the picture may differ from the text' "$ERR"; echo $?)"
# the daemon's map as data holds its text map ("text", what GetHostMap answers), read in the same call:
# that is the text printed, with no further call, each of which costs a non-root caller tokens (one more
# per 100 domains for the data): on a host of 900 domains a second read of the data was refused with
# LimitExceeded and the map not printed
map_json domain '"gone"' free '' | sed 's/^{/{"text":"text map: from the data",/' >"$ANSWER.d/1"
echo 'error:Too many calls' >"$ANSWER.d/2"
echo 'error:Too many calls' >"$ANSWER.d/3"
run "$CTL" --bus-address="$BUS_ADDR" map --topology="$TWO" --svg="$TMP/once.svg"
python3 "$HERE/svg-colours.py" "$TMP/once.svg" >"$TMP/once.colours" 2>&1
result "  map --svg prints the text of the data it draws, read once (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^text map: from the data' "$OUT" && grep -q '^box gone ' "$TMP/once.colours" &&
        [ -e "$ANSWER.d/2" ] && [ -e "$ANSWER.d/3" ]; echo $?)"
rm -rf "$ANSWER.d"

# show's text of well-formed answers, held to tests/golden/show/NAME.txt (UPDATE_GOLDEN=1 rewrites them):
# each guest cell with the nodes of its vCPUs and those its memory is counted on, the CPUs held for the
# emulator and I/O threads. The answers are the
# engine's own decisions (a golden plan, and plans made here of tests/ctl/domains/) and, for what only a
# running daemon answers (pins adopted as they run: where a cell's memory is is not known), one written here.
GOLDEN_SHOW=$ROOT/tests/golden/show
# show_golden NAME: show's text of the answer in $ANSWER is $GOLDEN_SHOW/NAME.txt
show_golden() {
    local file=$GOLDEN_SHOW/$1.txt
    run "$CTL" --bus-address="$BUS_ADDR" show web1
    if [ "$RC" -ne 0 ]; then
        result "show, $1: placementctl failed" 1
    elif [ -n "${UPDATE_GOLDEN:-}" ]; then
        mkdir -p "$GOLDEN_SHOW" && cp "$OUT" "$file"
        result "show, $1 (written)" $?
    elif diff -u "$file" "$OUT" | sed 's/^/# /'; ((!PIPESTATUS[0])); then
        ok "show, $1: as tests/golden/show/$1.txt"
    else
        not_ok "show, $1: differs from tests/golden/show/$1.txt"
    fi
}
cp "$ROOT/tests/golden/virtio-mem-unplugged-explicit.json" "$ANSWER"
show_golden virtio-mem-unplugged-explicit
run "$CTL" --json plan --topology="synthetic:pack:2 numa:1(memory=4GiB) core:2 pu:2" \
    --domain="$HERE/domains/cell-beyond.xml" --domain="$HERE/domains/cells.xml"
cp "$OUT" "$ANSWER"
show_golden cell-beyond
result "  show: cell 0's memory is on nodes 0-1, beyond its vCPUs' node 1" \
    "$(grep -qx '  guest cell 0   vCPUs 0-1 on node 1, memory on nodes 0-1' "$OUT"; echo $?)"
run "$CTL" --json plan --topology="synthetic:pack:1 numa:4(memory=16GiB) l3:1 core:4 pu:2" \
    --domain="$HERE/domains/cell-memory-only.xml"
cp "$OUT" "$ANSWER"
show_golden cell-memory-only
result "  show: a cell without vCPUs is named by its memory's nodes" \
    "$(grep -qx '  guest cell 1   no vCPUs, memory on nodes 2-3' "$OUT"; echo $?)"
run "$CTL" --json plan --topology="synthetic:pack:1 numa:4(memory=16GiB) l3:1 core:4 pu:2" \
    --domain="$HERE/domains/memory-device.xml"
cp "$OUT" "$ANSWER"
show_golden memory-device
result "  show: a DIMM its own <source><nodemask> binds is a memory device on its node" \
    "$(grep -qx '  memory device (its own <source>) no vCPUs, memory on node 3' "$OUT"; echo $?)"
run "$CTL" --json plan --topology="synthetic:pack:1 numa:1(memory=4GiB) core:4 pu:2" \
    --domain="$HERE/domains/pinned-threads.xml"
cp "$OUT" "$ANSWER"
show_golden held-threads
result "  show: the CPUs held for the emulator and I/O threads its definition pins" \
    "$(grep -qx '  held for its emulator and I/O threads: 7' "$OUT"; echo $?)"
printf '%s\n' '{"decisions":[{"domain":"web1","uuid":"u","result":"skipped","plan_result":"adopted","policy":"explicit",
  "vcpus":2,"memory":2147483648,"vcpu_pins":["0","4"],"memory_nodes":"0-1","emulator_pin":"",
  "memory_binding":"not-applied","apply_error":null,"adopted":false,"pinned_by_hand":true,
  "reason":"its pins were made outside placementd","cells":[{"id":0,"vcpus":"0","nodes":[0],"memory":1073741824},
  {"id":1,"vcpus":"1","nodes":[1],"memory":1073741824}]},
 {"domain":"big","uuid":"v","result":"unplaceable","plan_result":"unplaceable","policy":"explicit","vcpus":2,
  "memory":1099511627776,"vcpu_pins":["",""],"memory_nodes":"","emulator_pin":"","memory_binding":"not-applied",
  "apply_error":null,"adopted":false,"pinned_by_hand":false,"reason":"memory fits nowhere",
  "cells":[{"id":0,"vcpus":"0-1","nodes":[],"memory":1099511627776}]}]}' >"$ANSWER"
show_golden adopted-and-unplaceable
result "  show: a cell whose pins were adopted as they run: where its memory is, not known" \
    "$(grep -qx '  guest cell 1   vCPUs 1 on node 1, memory nodes not known' "$OUT"; echo $?)"
# an advice under Apply=no: show and list say its pins are advised, not applied (they are not the domain's)
printf '%s\n' '{"decisions":[{"domain":"web1","uuid":"u","result":"advisory","applied":false,"plan_result":"placed",
  "policy":"explicit","vcpus":2,"memory":2147483648,"vcpu_pins":["0-1","2-3"],"memory_nodes":"0","emulator_pin":"1",
  "iothreads":"1","iothread_pin":"3","memory_binding":"advisory","apply_error":null,"adopted":false,
  "pinned_by_hand":false,"reason":"node 0: 4 free cores for 2 vCPUs","cells":[{"id":0,"vcpus":"0-1","nodes":[0],
  "memory_nodes":[0],"memory":2147483648}]}]}' >"$ANSWER"
show_golden advisory
result "  show: an advice says it is not applied, on its result and each pin" \
    "$(grep -qx '  result:         advisory \[explicit\]; advised (Apply=no): not applied' "$OUT" &&
        grep -qx '  vCPU 1          2-3 (advised)' "$OUT" && grep -qx '  emulator:       1 (advised)' "$OUT"; echo $?)"
run "$CTL" --bus-address="$BUS_ADDR" list
result "  list: an advice's pins are followed by \"advised (Apply=no): not applied\" (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^web1 .* 0:0-1 1:2-3; advised (Apply=no): not applied$' "$OUT"; echo $?)"

# Offline: the files placementctl reads are quoted in its errors and notes; their text must not reach the
# terminal raw either, and what it held is shown escaped.
ESC='&#27;]0;PWNED&#7;&#27;[2J'
SYN='synthetic:pack:2 core:2 pu:2'
# offline NAME CMD...: runs placementctl CMD; neither output holds a raw control, and \x1b is shown
offline() {
    local name=$1 bad=
    shift
    run "$CTL" "$@"
    ((RC >= 128)) && bad="killed by signal $((RC - 128))"
    raw_controls "$OUT" "$ERR" && bad="${bad:+$bad; }$RAW"
    grep -qF '\x1b' "$OUT" "$ERR" || bad="${bad:+$bad; }the escape is not shown as \\x1b"
    result "$name: placementctl $1 (rc $RC)${bad:+: $bad}" "$([ -z "$bad" ]; echo $?)"
}
printf "<domain><name>x</name><vcpu cpuset='%s'>2</vcpu><memory>1048576</memory></domain>\n" "$ESC" >"$TMP/esc.xml"
offline "an escape in <vcpu cpuset>" plan --topology="$SYN" --domain="$TMP/esc.xml"
printf "<domain><name>x</name><vcpu>2</vcpu><memory>1048576</memory><cputune><emulatorpin cpuset='%s'/></cputune></domain>\n" \
    "$ESC" >"$TMP/emu.xml"
offline "an escape in <emulatorpin cpuset>" plan --topology="$SYN" --domain="$TMP/emu.xml"
printf 'domain esc.xml\n' >"$TMP/esc.trace"
offline "an escape in a trace's domain file" explain --topology="$SYN" --trace="$TMP/esc.trace"
ROOT_DIR=$(cd "$HERE/../.." && pwd)
# hwloc's parser takes no character reference to a control: the bytes themselves
RAW_ESC=$'\e]0;PWNED\a\e[2J'
sed "s/subtype=\"CXL-DRAM\"/subtype=\"Odd$RAW_ESC\"/" "$ROOT_DIR/tests/topologies/cxl-expander.xml" >"$TMP/kind.xml"
offline "an escape in a NUMA node's subtype (a note)" topology --topology="$TMP/kind.xml"
sed "s/value=\"IntelAtom\"/value=\"Atom$RAW_ESC\"/" "$ROOT_DIR/tests/topologies/hybrid-small.xml" >"$TMP/core.xml"
offline "an escape in a CoreType (a core kind)" topology --topology="$TMP/core.xml"
sed "s/<topology version=\"2.0\">/<topology version=\"3.0$RAW_ESC\">/" "$ROOT_DIR/tests/topologies/cxl-expander.xml" \
    >"$TMP/version.xml"
offline "an escape in the topology's version" topology --topology="$TMP/version.xml"
sed "s/cpuset=\"0x0000ffff\"/cpuset=\"0x0000ffff$RAW_ESC\"/" "$ROOT_DIR/tests/topologies/cxl-expander.xml" >"$TMP/cpuset.xml"
offline "an escape in an object's cpuset" topology --topology="$TMP/cpuset.xml"
# a configuration's errors show a refused value escaped (placementd.conf(5)): no raw control
printf '[Placement]\nPolicy=\e]0;PWNED\a\e[2J\n' >"$TMP/bad.conf"
run "$CTL" plan --topology="$SYN" --config="$TMP/bad.conf" a:1:1G
bad=
raw_controls "$OUT" "$ERR" && bad=$RAW
grep -qF 'bad.conf:2: [Placement] Policy=\x1b]0;PWNED\x07\x1b[2J: invalid value' "$ERR" ||
    bad="${bad:+$bad; }the line, key and escaped value are not named"
result "an escape in a config value: placementctl plan (rc $RC) names line, key and the value escaped${bad:+: $bad}" \
    "$([ $RC -eq 2 ] && [ -z "$bad" ]; echo $?)"
printf "<cpu><arch>x86_64</arch><model>Sky%s</model></cpu>\n" "$ESC" >"$TMP/cpu.xml"
offline "an escape in a CPU model" cpu-baseline --connect=test:///default "$TMP/cpu.xml"
