#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# shellcheck source-path=SCRIPTDIR
# placementctl's command line and its pictures of the host:
#  - the verb table: --help names every verb and option, each verb it names is one placementctl knows,
#    options go before or after the verb, an option a verb does not take and a wrong argument count are
#    usage errors (exit 2) found before anything is asked of a daemon;
#  - --svg: offline (plan --topology) and from a daemon on a private bus (map), on a 2x2x2 synthetic
#    host with two domains and a reserved CPU, the SVG lstopo drew is read back with xml.etree
#    (svg-colours.py) and checked against the decisions' JSON (check-picture.py), a domain name that
#    holds the legend's separator included.
#  - topology on corpus shapes (tests/topologies/make.sh): memory kinds, CPU kinds, CPUs local to no
#    NUMA node; plan --config with MemoryTiers=.
#  - a restart (placementd on the test driver, no bus): records adopted are said to be, their reasons
#    marked as the records', and two records on one core while a core is free are warned about once.
#   bash tests/ctl/run.sh [BUILD_DIR]        (default: build; CTL_TEST_KEEP=1 keeps the temp dir)
# TAP-like lines; the last line is "ctl: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"
tap_build "${1:-}"
CTL=$PLACEMENTCTL
HOST222="synthetic:pack:2 numa:1(memory=4GiB) core:2 pu:2" # 2 packages x 2 cores x 2 threads

need lstopo python3 dbus-daemon busctl timeout
tap_begin ctl
tap_tmpdir ctl "${CTL_TEST_KEEP:-}"
TMP=$TAP_TMP
ADDR=unix:path=$TMP/bus
OUT=$TMP/out ERR=$TMP/err RC=0
PD_LOG=$TMP/placementd.log
tap_cleanup() {
    stop_pid "$PD_PID"
    bus_stop
}

# picture DESC SVG JSON RESERVED...: the SVG's PUs carry the colours the decisions in JSON ask for
picture() {
    local desc=$1 svg=$2 json=$3 problems
    shift 3
    if problems=$(python3 "$HERE/svg-colours.py" "$svg" 2>&1 >"$svg.colours" &&
        python3 "$HERE/check-picture.py" "$svg.colours" "$json" "$@" 2>&1); then
        ok "$desc"
    else
        not_ok "$desc"
        diag "$problems" "$(cat "$svg.colours" 2>/dev/null)"
    fi
}

must "placementctl is built in $BUILD" test -x "$CTL"

# ---- the verb table ----------------------------------------------------------------------------------
VERBS=(status list show explain map plan reload rebalance replace topology simulate cpu-advice cpu-baseline help)
OPTIONS=(json bus bus-address host vcpus memory topology config policy trace connect map-only virttype svg
    help version sibling-loss domain)
run "$CTL" --help
missing=
for v in "${VERBS[@]}"; do grep -Eq "^ +$v( |$)" "$OUT" || missing="$missing $v"; done
result "--help starts an indented line with every verb${missing:+ (missing:$missing)}" "$([ -z "$missing" ]; echo $?)"
missing=
for o in "${OPTIONS[@]}"; do grep -Eq -- "--$o([= ]|$)" "$OUT" || missing="$missing --$o"; done
result "--help names every long option${missing:+ (missing:$missing)}" "$([ -z "$missing" ]; echo $?)"
# the offline heading lists only commands that run the engine on a topology
offline_heading=$(sed -n '/^Offline/,/^$/p' "$OUT")
result "--help lists under Offline only commands that take --topology" \
    "$(printf '%s\n' "$offline_heading" | grep -E '^  [a-z]' | grep -vq -- '--topology'; [ $? -eq 1 ]; echo $?)"
unknown=
while read -r v; do
    run "$CTL" "$v" a b c d
    grep -q "unknown command" "$ERR" && unknown="$unknown $v"
done < <(sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p' "$OUT")
result "every verb --help lists is one placementctl runs${unknown:+ (unknown:$unknown)}" "$([ -z "$unknown" ]; echo $?)"
run "$CTL" plan --help
result "plan --help shows both plans and their options, not the others' (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^  plan --vcpus=N --memory=SIZE' "$OUT" && grep -q '^  plan --topology=SOURCE' "$OUT" &&
        ! grep -q -- '--sibling-loss\|--connect\|--map-only' "$OUT" &&
        grep -q -- '--vcpus=N ' "$OUT" && grep -q -- '--domain=FILE.xml ' "$OUT"; echo $?)"
help_plan=$(cat "$OUT")
# what --help says of a command agrees with the man pages: reload, rebalance and replace are root's or
# polkit's (placementd(8), PERMISSIONS), and simulate's and explain's --help say their options are theirs
unsaid=
for v in reload rebalance replace; do
    run "$CTL" "$v" --help
    grep -Eq "^  $v .*\(root, or polkit org\.placementd1\.manage\)$" "$OUT" || unsaid="$unsaid $v"
done
for v in simulate explain; do
    run "$CTL" "$v" --help
    for o in config policy trace; do
        grep -Eq -- "--$o=[^ ]+ +[^:]*\b$v\b[^:]*:" "$OUT" || unsaid="$unsaid $v--$o"
    done
done
result "--help names polkit beside root, and the commands each offline option is for${unsaid:+ (not:$unsaid)}" \
    "$([ -z "$unsaid" ]; echo $?)"
run "$CTL" help plan
result "help plan is plan --help (rc $RC)" "$([ $RC -eq 0 ] && [ "$(cat "$OUT")" = "$help_plan" ]; echo $?)"
# each command's help shows its own synopsis: none for those that take no arguments (they refuse any)
wrong=
for v in status list reload rebalance; do
    run "$CTL" help "$v"
    [ "$(head -n1 "$OUT")" = "Usage: placementctl [OPTIONS...] $v" ] || wrong="$wrong $v"
done
for v in "${VERBS[@]}"; do
    run "$CTL" help "$v"
    grep -q 'ARGUMENTS' "$OUT" && wrong="$wrong $v"
done
run "$CTL" help show
grep -qx 'Usage: placementctl \[OPTIONS...\] show DOMAIN' "$OUT" || wrong="$wrong show"
result "help COMMAND shows the command's synopsis, no arguments where it takes none${wrong:+ (not:$wrong)}" \
    "$([ -z "$wrong" ]; echo $?)"
run "$CTL" help bogus
result "help of an unknown command exits 2 naming it (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q "unknown command 'bogus'" "$ERR"; echo $?)"
run "$CTL" bogus --help
result "--help of an unknown command exits 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
# every option a command's --help lists is one that command takes
foreign=
for v in "${VERBS[@]}"; do
    run "$CTL" "$v" --help
    [ $RC -eq 0 ] || foreign="$foreign $v(rc $RC)"
    while read -r o; do
        [ "$o" = help ] && continue
        # plan and explain: the offline form's options apply with --topology
        for extra in --json --topology="$HOST222"; do
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TMP/nothing-here" timeout 10 "$CTL" "$v" "--$o=x" "$extra" \
                </dev/null 2>&1 >/dev/null | grep -q "does not apply" || continue 2
        done
        foreign="$foreign $v--$o"
    done < <(sed -n '/^Options:/,$s/^ *\(-., \)\{0,1\}--\([a-z][a-z-]*\).*/\2/p' "$OUT")
done
result "each command's --help lists only the options it takes${foreign:+ (not:$foreign)}" \
    "$([ -z "$foreign" ]; echo $?)"
# groff renders an unescaped "--" as two Unicode hyphens, which a copied option then is not
bare=$(grep -Hn '\(^\|[^\\]\)--' "$ROOT"/docs/man/*.[0-9] | grep -v '^[^:]*:[0-9]*:\.\\"')
result "the man pages write every -- as \\-\\-${bare:+ (not: $(printf '%s' "$bare" | tr '\n' ';'))}" \
    "$([ -z "$bare" ]; echo $?)"
# placementctl(1) explains under OPTIONS the options no command's entry explains: what --map-only and
# --virttype do, --policy's values and that it overrides Policy=, and what of --config's file applies
opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$ROOT/docs/man/placementctl.1")
undocumented=
for o in map-only virttype policy config; do
    m=$(printf '%s' "--$o" | sed 's/-/\\-/g') # as the page writes it: \-\-map\-only
    # the lines from the option's own entry to the next: its heading, and for --policy and --config the
    # words that must be there
    entry=$(printf '%s\n' "$opts" | M=$m awk 'index($0, ENVIRON["M"]) && /^\.B/ { on = 1; print; next } on && /^\.TP/ { exit } on')
    case $o in
    policy) printf '%s' "$entry" | grep -q 'Policy=' && printf '%s' "$entry" | grep -q compat ;;
    config) printf '%s' "$entry" | grep -q '\[Placement\]' ;;
    *) [ -n "$entry" ] ;;
    esac || undocumented="$undocumented --$o"
done
result "placementctl(1) OPTIONS explains --map-only, --virttype, --policy and --config${undocumented:+ (not:$undocumented)}" \
    "$([ -z "$undocumented" ]; echo $?)"
run "$CTL" --json plan --topology="$HOST222" a:2:1G b:1:512M
before=$(cat "$OUT")
run "$CTL" plan a:2:1G b:1:512M --topology="$HOST222" --json
result "options before and after the verb give the same plan (rc $RC)" \
    "$([ $RC -eq 0 ] && [ -n "$before" ] && [ "$before" = "$(cat "$OUT")" ]; echo $?)"
run "$CTL" status --vcpus=2 --bus-address="unix:path=$TMP/nothing-here"
result "an option the verb does not take is a usage error, exit 2, before connecting (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q -- '--vcpus does not apply' "$ERR"; echo $?)"
run "$CTL" --bus-address="unix:path=$TMP/nothing-here" help
result "help answers with the options an alias adds (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^Usage: placementctl' "$OUT"; echo $?)"
run "$CTL" show --bus-address="unix:path=$TMP/nothing-here"
result "show without DOMAIN exits 2 before connecting (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
# a DOMAIN that is not UTF-8 names no domain libvirt holds (names are XML text): a usage error said
# before any bus is opened, as the offline plan says it, not the "Invalid argument" sd-bus gives
bad=
for v in show snippet explain replace; do
    run "$CTL" "$v" $'we\xff' --bus-address="unix:path=$TMP/nothing-here"
    [ $RC -eq 2 ] && grep -qxF "placementctl $v: 'we\xff': domain name is not valid UTF-8" "$ERR" ||
        bad="$bad [$v: rc $RC]"
done
result "a DOMAIN that is not valid UTF-8 exits 2 naming the problem, before connecting${bad:+ (not:$bad)}" \
    "$([ -z "$bad" ]; echo $?)"
run "$CTL" list extra --bus-address="unix:path=$TMP/nothing-here"
result "list with an argument exits 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
run "$CTL" plan --topology="$HOST222" --vcpus=2 --memory=1G
result "plan --topology with --vcpus: exit 2, saying offline plan takes NAME:VCPUS:MEMORY arguments (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -qF -- '--vcpus does not apply with --topology=: offline, plan takes each domain as a NAME:VCPUS:MEMORY argument' "$ERR" &&
        grep -qF -- 'without --topology=, it asks the running daemon and takes --vcpus=N --memory=SIZE' "$ERR"; echo $?)"
run "$CTL" plan --vcpus=2 --memory=1G --config="$TMP/none.conf" --bus-address="unix:path=$TMP/nothing-here"
result "plan on the daemon with --config: exit 2 before connecting, saying --config is for plan offline (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -qF -- '--config does not apply on the running daemon: it is for plan offline, with --topology=SOURCE; on the daemon, plan takes --vcpus=N --memory=SIZE' "$ERR"; echo $?)"
run "$CTL" --bus-address="unix:path=$TMP/nothing-here" status
result "status with no bus there exits 3 (rc $RC)" "$([ $RC -eq 3 ]; echo $?)"
printf '[Placement]\nMemoryReserve=1000T\n' >"$TMP/reserve.conf"
run "$CTL" plan --topology="$HOST222" --config="$TMP/reserve.conf" a:1:1G
result "a MemoryReserve= beyond every node is warned about and named in the reason (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q "MemoryReserve=1000.0 TiB is at least every node's memory" "$ERR" &&
        grep -q "MemoryReserve=1000.0 TiB kept on each node" "$OUT"; echo $?)"
printf '[Placement]\nReservedCPUs=0-7\n' >"$TMP/allreserved.conf"
run "$CTL" plan --topology="$HOST222" --config="$TMP/allreserved.conf" a:1:1G
result "ReservedCPUs= over every CPU is warned about; the domain is unplaceable (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q "ReservedCPUs= covers every CPU of this host" "$ERR" &&
        grep -q "unplaceable" "$OUT"; echo $?)"
run "$CTL" --bus-address=garbage status
result "a malformed --bus-address is a usage error naming it, exit 2 (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q "invalid D-Bus address 'garbage'" "$ERR"; echo $?)"
# well formed, but sd-bus cannot use it: an unknown key, a TCP address without its port
for a in unix:foo=1 tcp:host=127.0.0.1 unix:path=/x,path=/y; do
    run "$CTL" --bus-address="$a" status
    result "--bus-address=$a sd-bus refuses is a usage error naming it, exit 2 (rc $RC)" \
        "$([ $RC -eq 2 ] && grep -qF "invalid D-Bus address '$a'" "$ERR"; echo $?)"
done
for h in root@ @host -oProxyCommand=x 'root@:22' 'kvm7:' 'kvm7:0' 'kvm7:65536' '[::1]:99999' 'root@kvm7@x'; do
    run "$CTL" -H "$h" status
    result "-H '$h' is a usage error naming it, exit 2, nothing run (rc $RC)" \
        "$([ $RC -eq 2 ] && grep -qF -- "--host takes [USER@]HOST[:PORT], not '$h'" "$ERR"; echo $?)"
done
# an ssh that fails at once (a host key refused, a name that does not resolve in a cached lookup): sd-bus
# may meet its end while it writes its greeting, before any call; either way it is ssh that failed, said
# as such, exit 3 (here `false`, which exits before sd-bus writes in about one run in ten)
mkdir -p "$TMP/false-ssh"
ln -sf "$(type -P false)" "$TMP/false-ssh/ssh"
said=0
for ((i = 0; i < 100; i++)); do
    run env PATH="$TMP/false-ssh:$PATH" "$CTL" -H kvm7 status
    [ $RC -eq 3 ] && grep -qF "cannot reach kvm7 over ssh (ssh's own message is above)" "$ERR" &&
        said=$((said + 1))
done
result "-H to a host whose ssh fails at once: exit 3 saying ssh could not reach it, 100 runs in 100 ($said)" \
    "$([ $said -eq 100 ]; echo $?)"
# no ssh at all: sd-bus's child cannot run it and says nothing, so placementctl says it
mkdir -p "$TMP/no-ssh"
run env PATH="$TMP/no-ssh" "$CTL" -H kvm7 status
result "-H without ssh in PATH: exit 3 saying so (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -qxF "placementctl: --host runs ssh, which is not in PATH" "$ERR"; echo $?)"
# a TCP bus connects when first used: nothing listening there is "not running", exit 3, the bus named
run "$CTL" --bus-address=tcp:host=127.0.0.1,port=1 status
result "a TCP bus address nothing listens on: exit 3 naming the bus (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -q "cannot connect to the tcp:host=127.0.0.1,port=1 bus" "$ERR"; echo $?)"
# a local bus that cannot be opened: what it lacks, in words one can act on
run env -u DBUS_SESSION_BUS_ADDRESS -u XDG_RUNTIME_DIR "$CTL" --bus=session status
result "no session bus in the environment: exit 3, says which variables and --bus-address (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -q "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set" "$ERR"; echo $?)"
run env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TMP/nothing-here" "$CTL" status
result "no system bus at its address: exit 3, says where it looked (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -q "at DBUS_SYSTEM_BUS_ADDRESS: is a dbus-daemon listening there" "$ERR"; echo $?)"
run "$CTL" --bus=session --bus-address="unix:path=$TMP/nothing-here" status
result "--bus with --bus-address: exit 2 (rc $RC)" "$([ $RC -eq 2 ] && grep -q "give one" "$ERR"; echo $?)"
run "$PLACEMENTD" --bus-address=garbage
result "placementd: a malformed --bus-address exits 2 naming it, no retries (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q "invalid D-Bus address 'garbage'" "$ERR"; echo $?)"
: >"$TMP/empty.conf"
run timeout 10 "$PLACEMENTD" --foreground --config="$TMP/empty.conf" --connect=test:///default \
    --topology="$HOST222" --bus-address=unix:foo=1
result "placementd: a --bus-address sd-bus refuses as invalid exits 2 naming it, no retries (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -qF "unix:foo=1" "$ERR" && ! grep -q "retrying" "$ERR"; echo $?)"
run "$PLACEMENTD" --connect= --bus=none
result "placementd: an empty --connect exits 2 (rc $RC)" "$([ $RC -eq 2 ] && grep -q "connect is empty" "$ERR"; echo $?)"
run "$PLACEMENTD" --config= --bus=none
result "placementd: an empty --config exits 2 naming it (rc $RC)" "$([ $RC -eq 2 ] && grep -q "config is empty" "$ERR"; echo $?)"
printf '[Placement]\nPolicy=fast\nFoo=1\n' >"$TMP/two-errors.conf"
run "$PLACEMENTD" --config="$TMP/two-errors.conf" --bus=none
result "placementd: a config's errors at startup are logged one a line, as on reload, exit 2 (rc $RC)" \
    "$([ $RC -eq 2 ] && [ "$(grep -c '^<3>' "$ERR")" -eq 2 ] &&
        grep -q '^<3>/.*/two-errors.conf:2: \[Placement\] Policy=fast: invalid value' "$ERR" &&
        grep -q '^<3>  /.*/two-errors.conf:3: unknown key Foo=' "$ERR"; echo $?)"
# --check-config: the file checked as a start reads it, nothing started (no bus, no libvirt, no lock):
# every problem on stderr and exit 2, or one line on stdout and exit 0; what the host makes useless warned
run "$PLACEMENTD" --check-config --config="$TMP/two-errors.conf"
result "placementd --check-config: every problem of a bad file on stderr, the value shown, exit 2 (rc $RC)" \
    "$([ $RC -eq 2 ] && [ ! -s "$OUT" ] && [ "$(wc -l <"$ERR")" -eq 2 ] &&
        grep -qx "$TMP/two-errors.conf:2: \[Placement\] Policy=fast: invalid value; expected explicit, compat" "$ERR" &&
        grep -q "^$TMP/two-errors.conf:3: unknown key Foo= in \[Placement\]" "$ERR"; echo $?)"
printf '[Placement]\nPolicy=compat\nReservedCPUs=0-1,64\n' >"$TMP/good.conf"
run "$PLACEMENTD" --check-config --config="$TMP/good.conf" --topology="$HOST222" --bus-address="unix:path=$TMP/nothing-here"
result "placementd --check-config: a good file, one line on stdout, the host's warning on stderr, exit 0 (rc $RC)" \
    "$([ $RC -eq 0 ] && [ "$(cat "$OUT")" = "$TMP/good.conf: configuration OK (policy compat)" ] &&
        [ "$(cat "$ERR")" = "$TMP/good.conf: warning: ReservedCPUs= names CPUs this host does not have (64), ignoring those" ]; echo $?)"
(cd "$TMP" && exec "$PLACEMENTD" --check-config --config=good.conf --topology="$HOST222") >"$OUT" 2>"$ERR"
RC=$?
result "placementd --check-config: a relative --config is named as a start reads it, absolute (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qx "$TMP/good.conf: configuration OK (policy compat)" "$OUT"; echo $?)"
printf '[Placement]\nFit=\e]0;PWNED\a%s\n' "$(printf 'x%.0s' {1..100})" >"$TMP/escape.conf"
run "$PLACEMENTD" --check-config --config="$TMP/escape.conf"
result "placementd --check-config: a value's controls escaped, cut after 64 bytes (rc $RC)" \
    "$([ $RC -eq 2 ] && ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$ERR" &&
        grep -qF "Fit=\x1b]0;PWNED\x07$(printf 'x%.0s' {1..54})...: invalid value" "$ERR"; echo $?)"
printf '[Libvirt]\nURI=qemu+ssh://admin:S3cretPass@kvm1/sytem\n' >"$TMP/uri.conf"
run "$PLACEMENTD" --check-config --config="$TMP/uri.conf"
result "placementd --check-config: a refused URI= is named, its value not shown (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q "uri.conf:2: \[Libvirt\] URI: invalid value" "$ERR" && ! grep -q 'S3cret' "$ERR"; echo $?)"
run "$PLACEMENTD" --check-config --config="$TMP/no-such.conf"
result "placementd --check-config: a named file that does not exist, exit 2 (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -qx "$TMP/no-such.conf: No such file or directory" "$ERR"; echo $?)"
# stdout on a full disk: a write that fails is said on stderr and fails the command, as coreutils do
# (full CMD...: CMD with its standard output on /dev/full, stderr in $ERR, status in $RC)
full() {
    timeout "${RUN_TIMEOUT:-30}" "$@" >/dev/full 2>"$ERR"
    RC=$?
}
full "$PLACEMENTD" --check-config --config="$TMP/good.conf" --topology="$HOST222"
result "placementd --check-config onto a full disk: exit 1, the write error on stderr (rc $RC)" \
    "$([ $RC -eq 1 ] && grep -qx 'placementd: write error: No space left on device' "$ERR"; echo $?)"
bad=
# full_ctl ARGS...: placementctl ARGS onto /dev/full, failing as said or noted in $bad
full_ctl() {
    full "$CTL" "$@"
    [ $RC -eq 1 ] && grep -qx 'placementctl: write error: No space left on device' "$ERR" || bad="$bad [$*: rc $RC]"
}
full_ctl topology --topology="$HOST222"
full_ctl --json topology --topology="$HOST222"
full_ctl plan --topology="$HOST222" a:1:1G
full_ctl --json plan --topology="$HOST222" a:1:1G
full_ctl --help
full_ctl --version
full_ctl help plan
result "placementctl onto a full disk: exit 1 and the write error on stderr${bad:+ (not:$bad)}" "$([ -z "$bad" ]; echo $?)"
run "$CTL" cpu-advice --connect= some-domain
result "placementctl: an empty --connect exits 2 naming it (rc $RC)" "$([ $RC -eq 2 ] && grep -q "connect is empty" "$ERR"; echo $?)"
# an empty --config= or --trace= names the option, as an empty --domain= or --svg= does (it said
# "placementctl plan: : No such file or directory", and an empty --trace= beside domains "not both")
bad=
for o in config trace; do
    run "$CTL" plan --topology="$HOST222" --$o= a:1:1G
    [ $RC -eq 2 ] && grep -qx "placementctl: --$o is empty (give a [a-z ]*file)" "$ERR" || bad="$bad [--$o=: rc $RC $(head -c 200 "$ERR")]"
done
run "$CTL" simulate --topology="$HOST222" --trace=
[ $RC -eq 2 ] && grep -q "trace is empty" "$ERR" || bad="$bad [simulate --trace=: rc $RC]"
result "placementctl: an empty --config or --trace exits 2 naming it${bad:+ (not:$bad)}" "$([ -z "$bad" ]; echo $?)"
run "$CTL" plan --topology="$ROOT/tests/topologies/two-node-hugepages.xml" vm:1:1G
result "the map shows each node's hugepage pool apart from its memory (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^  node 0  960.0 MiB' "$OUT" && grep -q '^    hugepages 2.0 MiB: 128.0 MiB free of 128.0 MiB$' "$OUT"; echo $?)"
# unplaceable on a host with a CXL memory-only node: the free memory said counts every tier, not DRAM alone
run "$CTL" plan --topology="$ROOT/tests/topologies/cxl-expander.xml" a:2:29G b:2:29G c:2:200G
result "an unplaceable guest's reason counts the CXL node's free memory too (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qF 'no node set has 200.0 GiB of free memory (120.8 GiB free on the whole host)' "$OUT"; echo $?)"
run "$CTL" topology --topology="$ROOT/tests/topologies/two-node-hugepages.xml"
result "topology lists each node's hugepage pools (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^hugepages node 1: 64 x 2.0 MiB (128.0 MiB)$' "$OUT"; echo $?)"
run "$CTL" snippet --bus-address="unix:path=$TMP/nothing-here"
result "snippet without DOMAIN exits 2 before connecting (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
run "$CTL" plan --vcpus=2 --bus-address="unix:path=$TMP/nothing-here"
result "online plan without --memory exits 2 before connecting (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q 'give --vcpus=N and --memory=SIZE' "$ERR"; echo $?)"
run "$CTL" map --topology=host --bus-address="unix:path=$TMP/nothing-here"
result "map --topology= without --svg exits 2 before connecting (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"

# ---- kinds: memory kinds per node, CPU kinds, CPUs local to no node, MemoryTiers= -----------------------
TOPOS=$ROOT/tests/topologies
run "$CTL" topology --topology="$TOPOS/power9-gpu.xml"
result "topology names each node's memory kind (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -Eq '^node 0 .* dram ' "$OUT" && [ "$(grep -Ec '^node [2-5] .* gpu ' "$OUT")" -eq 4 ]; echo $?)"
run "$CTL" --json topology --topology="$TOPOS/alder-lake.xml"
result "topology --json lists the CPU kinds, most performant first, and each node's kind (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
k=d["core_kinds"]; assert [x["name"] for x in k]==["IntelCore","IntelAtom"] and k[0]["max_mhz"]==5400
assert d["node_list"][0]["kind"]=="dram" and d["node_list"][0]["no_local_memory"] is False' "$OUT"; echo $?)"
# a CPU kind the export names no type nor frequency for: said unknown, not "0 MHz" or an empty name
sed -e '/name="CoreType" value="IntelAtom"/d' -e '/name="FrequencyMaxMHz" value="3800"/d' \
    "$TOPOS/hybrid-small.xml" >"$TMP/unnamed-kind.xml"
run "$CTL" topology --topology="$TMP/unnamed-kind.xml"
result "topology gives an unnamed CPU kind's unknown frequency as '?' (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -Eq '^core kind 1  \(unnamed\) +\? MHz +4 cores  cpus 4-7$' "$OUT" &&
        ! grep -q ' 0 MHz' "$OUT"; echo $?)"
run "$CTL" --json topology --topology="$TMP/unnamed-kind.xml"
result "topology --json gives them as null (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
k=d["core_kinds"][1]; assert k["name"] is None and k["max_mhz"] is None, k' "$OUT"; echo $?)"
# an empty CoreType names nothing either: the text says so as the JSON does (it printed a blank name)
sed -e 's/name="CoreType" value="IntelAtom"/name="CoreType" value=""/' "$TOPOS/hybrid-small.xml" >"$TMP/empty-kind.xml"
run "$CTL" topology --topology="$TMP/empty-kind.xml"
result "topology gives an empty CPU kind name as '(unnamed)' (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -Eq '^core kind 1  \(unnamed\) +3800 MHz +4 cores  cpus 4-7$' "$OUT"; echo $?)"
# an export with no memory sizes: the vCPUs decide, memory goes with them, the views say "unknown"
run "$CTL" plan --topology="$TOPOS/v1-no-memory.xml" a:4:2G b:4:64G
result "an export without memory sizes places by cores, memory with the vCPUs (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^start a (4 vCPUs, 2.0 GiB): placed on node 0 ' "$OUT" &&
        grep -q '^start b (4 vCPUs, 64.0 GiB): placed on node 1 ' "$OUT" &&
        grep -qF '2.0 GiB not counted (no memory sizes known)' "$OUT" && ! grep -q 'PiB' "$OUT" &&
        grep -q '^  node 0  unknown, 2.0 GiB held by domains$' "$OUT"; echo $?)"
run "$CTL" explain --topology="$TOPOS/v1-no-memory.xml" a:4:2G
result "explain gives the candidates' free memory as unknown (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -Eq '^  1 +0 +10 +10.00 +4 +8 +unknown  chosen$' "$OUT" && ! grep -q 'PiB' "$OUT"; echo $?)"
run "$CTL" --json explain --topology="$TOPOS/v1-no-memory.xml" a:4:2G
result "explain --json gives the candidates' free memory as null (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
c=d["decisions"][0]["candidates"]; assert len(c)==2 and all(x["free_memory"] is None for x in c)' "$OUT"; echo $?)"
# a guest larger than what each node is taken to hold: no free figure the export never gave
run "$CTL" plan --topology="$TOPOS/v1-no-memory.xml" a:4:3000T
result "an export without memory sizes tells no invented free memory to a guest beyond it (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^start a (4 vCPUs, 2.9 PiB): unplaceable ' "$OUT" &&
        grep -qF 'no memory sizes known' "$OUT" && ! grep -q 'free on the whole host' "$OUT"; echo $?)"
run "$CTL" --json topology --topology="$TOPOS/v1-no-memory.xml"
result "topology --json gives an unknown memory size as null (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert [n["memory"] for n in d["node_list"]]==[None,None]' "$OUT"; echo $?)"
run "$CTL" topology --topology="$TOPOS/no-local-node-3s.xml"
result "topology shows CPUs local to no NUMA node apart (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^host: *2 NUMA nodes (and CPUs local to none)' "$OUT" &&
        grep -Eq '^node 1024 .* none .*cpus 32-47  \(local to no NUMA node: used last\)' "$OUT"; echo $?)"
printf '[Placement]\nMemoryTiers=cxl\n' >"$TMP/tiers.conf"
run "$CTL" --json plan --topology="$TOPOS/cxl-expander.xml" big:4:40G
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["decisions"][0]["memory_nodes"])' "$OUT" 2>&1)
run "$CTL" --json plan --topology="$TOPOS/cxl-expander.xml" --config="$TMP/tiers.conf" big:4:40G
tiered=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["decisions"][0]["memory_nodes"])' "$OUT" 2>&1)
result "MemoryTiers=cxl lets the nearer CXL node hold memory DRAM would otherwise hold ($first, then $tiered)" \
    "$([ "$first" = "0-1" ] && [ "$tiered" = "0,2" ]; echo $?)"

printf '[Placement]\nReservedCPUs=8-15\nHousekeepingCPUs=99\n' >"$TMP/beyond.conf"
run "$CTL" plan --topology="$HOST222" --config="$TMP/beyond.conf" a:1:1G
result "plan --config warns of CPU lists naming CPUs the host lacks, each by its key (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q 'warning: .*beyond.conf: ReservedCPUs= names CPUs this host does not have (8-15)' "$ERR" &&
        grep -q 'HousekeepingCPUs= names CPUs this host does not have (99)' "$ERR"; echo $?)"

# ---- the offline picture -----------------------------------------------------------------------------
printf '[Placement]\nReservedCPUs=7\n' >"$TMP/reserved.conf"
PLAN=(plan --topology="$HOST222" --config="$TMP/reserved.conf" web1:2:1G db:2:1G)
run "$CTL" --json "${PLAN[@]}"
cp "$OUT" "$TMP/plan.json"
result "plan --json ends with the map as data: CPU 7 reserved, web1 and db on two CPUs each (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["map"]
state = {c["cpu"]: c["state"] for c in m["cpus"]}
owners = sorted(n for c in m["cpus"] for n in c["domains"])
assert state[7] == "reserved" and owners == ["db", "db", "web1", "web1"], (state, owners)
assert sum(n["memory_reserved"] for n in m["nodes"]) == 2 << 30' "$OUT" 2>"$ERR"; echo $?)"
run "$CTL" "${PLAN[@]}" --svg="$TMP/plan.svg"
result "plan --topology --svg=FILE on a 2x2x2 host (rc $RC) prints the plan and writes the SVG" \
    "$([ $RC -eq 0 ] && grep -q '^start web1' "$OUT" && [ -s "$TMP/plan.svg" ]; echo $?)"
picture "offline: web1's and db's PUs in their legend colours, CPU 7 reserved, the rest white" \
    "$TMP/plan.svg" "$TMP/plan.json" 7
result "offline: the legend names web1 and db and carries placementd's line" \
    "$(grep -q '^box web1 ' "$TMP/plan.svg.colours" && grep -q '^box db ' "$TMP/plan.svg.colours" &&
        grep -q '^legend placementd: each PU in the colour' "$TMP/plan.svg.colours"; echo $?)"
# hwloc 3.0's XML is planned and drawn as its 2.x twin is (the SVG reloads the same rewrite); the two
# files have paths of one length, which the picture's legend shows
mkdir -p "$TMP/v3" "$TMP/v2"
cp "$ROOT/tests/topologies/two-node-pci-v3.xml" "$TMP/v3/host.xml"
cp "$ROOT/tests/topologies/two-node-pci.xml" "$TMP/v2/host.xml"
for v in v3 v2; do
        run "$CTL" plan --topology="$TMP/$v/host.xml" web1:4:4G db:2:2G --svg="$TMP/$v/host.svg"
        sed "s|$TMP/$v/||" "$OUT" >"$TMP/$v/out"
        sed "s|$TMP/$v/||" "$TMP/$v/host.svg" >"$TMP/$v/svg"
done
result "plan --svg on hwloc 3.0 XML: the plan and the picture of its 2.x twin (rc $RC)" \
    "$(cmp -s "$TMP/v3/out" "$TMP/v2/out" && [ -s "$TMP/v3/host.svg" ] && cmp -s "$TMP/v3/svg" "$TMP/v2/svg"
        echo $?)"
BIG="synthetic:pack:2 numa:1(memory=64GiB) l3:1 core:8 pu:2"
printf '[Placement]\nReservedCPUs=0,16\n' >"$TMP/big.conf"
# 31 vCPUs on the 30 PUs left: one PU holds vCPUs of two domains
BIGPLAN=(plan --topology="$BIG" --config="$TMP/big.conf" web1:4:8G db:8:32G cache:2:4G build:6:8G ci:11:4G)
run "$CTL" --json "${BIGPLAN[@]}"
cp "$OUT" "$TMP/big.json"
run "$CTL" "${BIGPLAN[@]}" --svg="$TMP/big.svg"
result "plan --svg on a 2x8x2 host with five domains, two sharing a PU (rc $RC)" "$([ $RC -eq 0 ]; echo $?)"
python3 "$HERE/svg-colours.py" "$TMP/big.svg" >"$TMP/big.svg.colours" 2>&1
result "all 32 PUs drawn, none folded into lstopo's '8x total' ($(grep -c '^pu ' "$TMP/big.svg.colours") drawn)" \
    "$([ "$(grep -c '^pu ' "$TMP/big.svg.colours")" -eq 32 ]; echo $?)"
# the PUs drawn in the 'several domains' colour, each one that vCPUs of two domains or more are pinned to
# An hwloc v1 export whose allowed memory nodes name none of its nodes (hwloc's own test files of old
# machines): the plan ignores them, and so must the picture (lstopo refused it: "no NUMA node")
V1=$HERE/../topologies/v1-no-memory-allowed.xml
run "$CTL" plan --topology="$V1" --svg="$TMP/v1.svg" web1:2:1G
result "plan --svg on a v1 export with allowed nodes 0x0 draws it (rc $RC): $(head -c 160 "$ERR")" \
    "$([ $RC -eq 0 ] && grep -q '^start web1' "$OUT" && grep -q '</svg>' "$TMP/v1.svg"; echo $?)"
python3 "$HERE/svg-colours.py" "$TMP/v1.svg" >"$TMP/v1.svg.colours" 2>&1
result "the v1 export's 16 PUs all drawn ($(grep -c '^pu ' "$TMP/v1.svg.colours") drawn)" \
    "$([ "$(grep -c '^pu ' "$TMP/v1.svg.colours")" -eq 16 ]; echo $?)"
SEVERAL=$(sed -n 's/^box several domains //p' "$TMP/big.svg.colours")
SHARED_PUS=$(sed -n "s/^pu \([0-9]*\) ${SEVERAL:-none}\$/\1/p" "$TMP/big.svg.colours" | xargs)
UNSHARED=$(python3 -c '
import json, sys
owners = {}
for d in json.load(open(sys.argv[1]))["decisions"]:
    for pins in d["vcpu_pins"]:
        for part in pins.split(","):
            lo, _, hi = part.partition("-")
            for pu in range(int(lo), int(hi or lo) + 1):
                owners.setdefault(pu, set()).add(d["domain"])
print(" ".join(pu for pu in sys.argv[2].split() if len(owners.get(int(pu), ())) < 2))' "$TMP/big.json" "$SHARED_PUS" 2>&1)
result "a PU two domains share is in the 'several domains' colour (${SHARED_PUS:-none})${UNSHARED:+ (pinned for one domain only: $UNSHARED)}" \
    "$([ -n "$SEVERAL" ] && [ -n "$SHARED_PUS" ] && [ -z "$UNSHARED" ]; echo $?)"
# lstopo writes names into the SVG as they are: a domain name that is markup must stay text
EVIL='x"</text><script>alert(1)</script>&'
run "$CTL" plan --topology="$HOST222" --svg="$TMP/evil.svg" "$EVIL:1:1G"
result "a domain named like markup: the SVG parses and its legend box holds the name as text (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 "$HERE/svg-colours.py" "$TMP/evil.svg" | grep -qxF "box $EVIL rgb(141,211,199)" &&
        ! grep -q '<script>' "$TMP/evil.svg"; echo $?)"
# what can be checked before the plan is printed is: a command that fails prints no plan
run "$CTL" "${PLAN[@]}" --svg="$TMP/no-such-dir/plan.svg"
result "--svg into a directory that does not exist exits 1 saying so, no plan printed (rc $RC)" \
    "$([ $RC -eq 1 ] && grep -q 'no-such-dir/plan.svg' "$ERR" && [ ! -s "$OUT" ]; echo $?)"
run "$CTL" --json "${PLAN[@]}" --svg="$TMP/no-such-dir/plan.svg"
result "  with --json, the error object alone (rc $RC)" \
    "$([ $RC -eq 1 ] && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"error", "exit_code"} and "no-such-dir/plan.svg" in d["error"], d' "$OUT"; echo $?)"
# FILE is written as it is, never replaced: a file keeps its mode and owner, a FIFO stays a FIFO
mkdir "$TMP/files"
printf 'old\n' >"$TMP/files/private.svg"
chmod 0600 "$TMP/files/private.svg"
[ "$(id -u)" -ne 0 ] || chown 65534 "$TMP/files/private.svg"
before=$(stat -c '%a %u %i' "$TMP/files/private.svg")
run "$CTL" "${PLAN[@]}" --svg="$TMP/files/private.svg"
result "--svg=FILE on an existing 0600 file: the SVG in it, mode, owner and inode kept ($before -> $(stat -c '%a %u %i' "$TMP/files/private.svg"), rc $RC)" \
    "$([ $RC -eq 0 ] && [ "$(stat -c '%a %u %i' "$TMP/files/private.svg")" = "$before" ] &&
        grep -q '<svg' "$TMP/files/private.svg" && ! grep -q '^old' "$TMP/files/private.svg"; echo $?)"
mkfifo "$TMP/files/fifo"
timeout 30 cat "$TMP/files/fifo" >"$TMP/files/from-fifo" &
run "$CTL" "${PLAN[@]}" --svg="$TMP/files/fifo"
wait $!
result "--svg=FIFO: the reader gets the SVG and the FIFO stays one (rc $RC)" \
    "$([ $RC -eq 0 ] && [ -p "$TMP/files/fifo" ] && grep -q '</svg>' "$TMP/files/from-fifo"; echo $?)"
ln -s "$TMP/files/through.svg" "$TMP/files/mine.svg"
run "$CTL" "${PLAN[@]}" --svg="$TMP/files/mine.svg"
result "--svg=FILE where FILE is a symlink the caller owns: written through, the link kept (rc $RC)" \
    "$([ $RC -eq 0 ] && [ -L "$TMP/files/mine.svg" ] && grep -q '</svg>' "$TMP/files/through.svg"; echo $?)"
mkdir "$TMP/files/dir.svg"
run "$CTL" "${PLAN[@]}" --svg="$TMP/files/dir.svg"
result "--svg=FILE where FILE is a directory exits 1 and leaves nothing beside it (rc $RC)" \
    "$([ $RC -eq 1 ] && grep -q 'files/dir.svg' "$ERR" &&
        [ "$(find "$TMP/files" -mindepth 1 -maxdepth 1 | wc -l)" -eq 6 ]; echo $?)"
if [ "$(id -u)" -eq 0 ]; then
    # lstopo does not check its writes: onto a full device it exited 0 with nothing written
    mknod "$TMP/full" c 1 7
    run "$CTL" "${PLAN[@]}" --svg="$TMP/full"
    result "--svg onto a full device (a copy of /dev/full) exits 1 saying it cannot write (rc $RC)" \
        "$([ $RC -eq 1 ] && grep -q "cannot write $TMP/full: No space left on device" "$ERR"; echo $?)"
    rm -f "$TMP/full"
fi
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    # a link another user planted in a directory they may write to (not sticky) is refused: followed as
    # root it would overwrite what it points to
    NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 0711 "$TMP"
    mkdir -m 0777 "$TMP/links"
    printf 'precious\n' >"$TMP/links/victim"
    "${NOBODY[@]}" ln -s "$TMP/links/victim" "$TMP/links/link.svg"
    run "$CTL" "${PLAN[@]}" --svg="$TMP/links/link.svg"
    result "--svg=FILE where FILE is a symlink uid 65534 planted: refused naming FILE and the uid, its target untouched, no plan printed (rc $RC)" \
        "$([ $RC -eq 1 ] && grep -q 'links/link.svg.*uid 65534' "$ERR" && [ -L "$TMP/links/link.svg" ] && [ ! -s "$OUT" ] &&
            [ "$(cat "$TMP/links/victim")" = precious ] &&
            [ "$(find "$TMP/links" -mindepth 1 -maxdepth 1 | wc -l)" -eq 2 ]; echo $?)"
    # run as 65534: its own link and root's (as /dev/stdout is) are written through, another's is not
    mkdir -m 0777 "$TMP/links/out"
    "${NOBODY[@]}" ln -s "$TMP/links/out/own.svg" "$TMP/links/out/own-link.svg"
    "${NOBODY[@]}" touch "$TMP/links/out/stdout"
    ln -s "$TMP/links/out/stdout" "$TMP/links/out/root-link.svg"
    ln -s "$TMP/links/out/planted" "$TMP/links/out/other-link.svg"
    chown -h 65533 "$TMP/links/out/other-link.svg"
    chmod 0644 "$TMP/reserved.conf"
    run "${NOBODY[@]}" "$CTL" "${PLAN[@]}" --svg="$TMP/links/out/own-link.svg"
    result "as uid 65534, --svg=FILE where FILE is its own symlink: written through (rc $RC)" \
        "$([ $RC -eq 0 ] && [ -L "$TMP/links/out/own-link.svg" ] && grep -q '</svg>' "$TMP/links/out/own.svg"; echo $?)"
    run "${NOBODY[@]}" "$CTL" "${PLAN[@]}" --svg="$TMP/links/out/root-link.svg"
    result "as uid 65534, --svg=FILE where FILE is root's symlink (as /dev/stdout): written through (rc $RC)" \
        "$([ $RC -eq 0 ] && [ -L "$TMP/links/out/root-link.svg" ] && grep -q '</svg>' "$TMP/links/out/stdout"; echo $?)"
    run "${NOBODY[@]}" "$CTL" "${PLAN[@]}" --svg="$TMP/links/out/other-link.svg"
    result "as uid 65534, --svg=FILE where FILE is uid 65533's symlink: refused, nothing made (rc $RC)" \
        "$([ $RC -eq 1 ] && grep -q 'uid 65533' "$ERR" && [ ! -e "$TMP/links/out/planted" ] &&
            [ "$(find "$TMP/links/out" -mindepth 1 -maxdepth 1 | wc -l)" -eq 5 ]; echo $?)"
    # a FIFO or file another user put in a sticky directory anyone writes to (/tmp), as
    # fs.protected_fifos and fs.protected_regular refuse them: root waited on the FIFO until its owner
    # read the picture, or wrote into the file its owner keeps
    mkdir -m 1777 "$TMP/links/sticky"
    "${NOBODY[@]}" mkfifo -m 0600 "$TMP/links/sticky/map.svg"
    # shellcheck disable=SC2016 # $1 is the inner shell's
    "${NOBODY[@]}" sh -c 'printf "mine\n" >"$1"' sh "$TMP/links/sticky/kept.svg"
    run timeout 10 "$CTL" "${PLAN[@]}" --svg="$TMP/links/sticky/map.svg"
    result "--svg=FILE where FILE is a FIFO uid 65534 put in a sticky directory: refused at once naming FILE and the uid, no plan printed (rc $RC)" \
        "$([ $RC -eq 1 ] && grep -q 'sticky/map.svg.*FIFO.*uid 65534' "$ERR" && [ -p "$TMP/links/sticky/map.svg" ] &&
            [ ! -s "$OUT" ]; echo $?)"
    run timeout 10 "$CTL" "${PLAN[@]}" --svg="$TMP/links/sticky/kept.svg"
    result "--svg=FILE where FILE is a file uid 65534 put in a sticky directory: refused, the file as it was (rc $RC)" \
        "$([ $RC -eq 1 ] && grep -q 'sticky/kept.svg.*uid 65534' "$ERR" && [ "$(cat "$TMP/links/sticky/kept.svg")" = mine ]; echo $?)"
    run timeout 10 "$CTL" "${PLAN[@]}" --svg="$TMP/links/sticky/new.svg"
    result "--svg=FILE new in a sticky directory: made, root's (rc $RC)" \
        "$([ $RC -eq 0 ] && [ "$(stat -c %u "$TMP/links/sticky/new.svg")" = 0 ] && grep -q '</svg>' "$TMP/links/sticky/new.svg"; echo $?)"
    chmod 0700 "$TMP"
else
    echo "# skip: the planted-link checks need root and setpriv"
fi

# ---- a restart: records adopted, and said to be ----------------------------------------------------
# Two running domains whose live metadata records placementd's decisions (as a daemon before the restart
# wrote them), both on core 0 while node 1 is free: the log line of each says it was adopted from its
# record and that the reason is the record's, and one warning names both domains, the core's CPUs and
# what to run; heal then ends the sharing.
# record NAME UUID PIN...: a test-driver domain pinned as its record says (vCPU i on PIN i, memory on node 0)
record() {
    local name=$1 uuid=$2 i=0 pin vcpupins='' recorded='' def
    shift 2
    for pin in "$@"; do
        vcpupins="$vcpupins<vcpupin vcpu='$i' cpuset='$pin'/>"
        recorded="$recorded<placementd:vcpu id=\"$i\" cpu=\"${pin%%-*}\" cpuset=\"$pin\"/>"
        i=$((i + 1))
    done
    def="&lt;domain type=\"test\"&gt;&lt;name&gt;$name&lt;/name&gt;&lt;uuid&gt;$uuid&lt;/uuid&gt;&lt;memory&gt;1048576&lt;/memory&gt;"
    def="$def&lt;vcpu&gt;$#&lt;/vcpu&gt;&lt;os&gt;&lt;type&gt;hvm&lt;/type&gt;&lt;/os&gt;&lt;/domain&gt;"
    cat <<EOF
  <domain type="test"><name>$name</name><uuid>$uuid</uuid><memory>1048576</memory><vcpu>$#</vcpu><os><type>hvm</type></os>
    <cputune>$vcpupins</cputune><numatune><memory mode='strict' nodeset='0'/></numatune>
    <metadata><placementd:domain xmlns:placementd="https://placementd.org/xmlns/domain/1">
      <placementd:definition>$def</placementd:definition>
      <placementd:decision result="placed" policy="explicit" vcpu-pin="core" memory-binding="applied" nodes="0" emulator="">
        <placementd:memory node="0" bytes="1073741824"/>$recorded<placementd:reason>node 0: as placed at its start</placementd:reason>
      </placementd:decision></placementd:domain></metadata>
  </domain>
EOF
}
{
    echo '<node>'
    record rec-a 11111111-2222-3333-4444-555555555555 0-1 2-3
    record rec-b 11111111-2222-3333-4444-666666666666 0-1
    echo '</node>'
} >"$TMP/records.xml"
ADOPT_LOG=$TMP/adopt.log
env -u NOTIFY_SOCKET -u WATCHDOG_USEC "$PLACEMENTD" --connect="test://$TMP/records.xml" --topology="$HOST222" \
    --bus=none --foreground </dev/null >"$ADOPT_LOG" 2>&1 &
ADOPT_PID=$!
wait_for 15 grep -q 'both claim core' "$ADOPT_LOG"
wait_for 10 grep -q 'healed without a request' "$ADOPT_LOG"
stop_pid "$ADOPT_PID"
OUT=$ADOPT_LOG
result "adopted after a restart: the log line says so, then the result and pins, the reason marked as the record's" \
    "$(grep -qxF '<6>rec-a: adopted from its record after checking its pins run as recorded: placed, vCPU pins 0:0-1 1:2-3 (recorded reason: node 0: as placed at its start)' "$ADOPT_LOG"; echo $?)"
result "  one line each, and none gives the recorded reason as a decision made now" \
    "$([ "$(grep -c '^<6>rec-[ab]: adopted from its record' "$ADOPT_LOG")" -eq 2 ] &&
        ! grep '^<6>rec-[ab]: placed' "$ADOPT_LOG" | grep -qv '(healed: '; echo $?)"
result "two records on one core while a core is free: one warning names both, the core's CPUs and what to run" \
    "$([ "$(grep -c 'both claim core' "$ADOPT_LOG")" -eq 1 ] &&
        grep -qF '<4>rec-a and rec-b: their recorded decisions both claim core 0 (CPUs 0-1) while a core is free, so both domains run vCPUs there; both are adopted as they run (placementctl replace rec-b moves the later one;' "$ADOPT_LOG"; echo $?)"
# the test driver reads statistics: both domains are measured and their load not known yet, but sharing a
# core while one is free is a count, and heal ends it at once
result "  heal ends the sharing at once, though neither domain's load is known yet" \
    "$(grep -q '^<6>rec-[ab]: healed without a request: .*shared a core, now 0' "$ADOPT_LOG"; echo $?)"
OUT=$TMP/out

# ---- the daemon's picture ----------------------------------------------------------------------------
must "private dbus-daemon on $ADDR" bus_start "$TMP"
# libvirt's test driver with three domains, one named like the text map's legend ("A web, B db, B db"):
# the legend is read with the daemon's domain names; one named beyond ASCII, for --json
cat >"$TMP/node.xml" <<EOF
<node>
  <domain type="test"><name>web, B db</name><memory>1048576</memory><vcpu>2</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>db</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>café</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
</node>
EOF
placementd_start --config="$TMP/reserved.conf" --connect="test://$TMP/node.xml" --topology="$HOST222" \
    --bus-address="$ADDR"
must "placementd owns org.placementd1" wait_for 10 bus_has org.placementd1
bad=
full_ctl --bus-address="$ADDR" list
full_ctl --bus-address="$ADDR" --json list
full_ctl --bus-address="$ADDR" status
full_ctl --bus-address="$ADDR" show db
result "placementctl's online commands onto a full disk: exit 1 and the write error on stderr${bad:+ (not:$bad)}" \
    "$([ -z "$bad" ]; echo $?)"
run "$CTL" --bus-address="$ADDR" --json list
cp "$OUT" "$TMP/daemon.json"
run "$CTL" --bus-address="$ADDR" list
result "list: each column starts where its heading does, 'café' counted in characters (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
head = lines[0]
cols = [head.index(w) for w in ("RESULT", "POLICY", "NODES", "MEM", "VCPU PINS")]
assert len(lines) == 4
for l in lines[1:]:
    for c in cols:
        assert l[c - 1] == " " and l[c] != " ", (l, c)' "$OUT" 2>"$ERR"; echo $?)"
# the online plan's layout is the offline plan's: an unplaceable answer's "why" follows its heading, no
# blank line between
run "$CTL" --bus-address="$ADDR" plan --vcpus=1 --memory=8G
result "online plan of an unplaceable domain: the heading, then why, no blank line (rc $RC)" \
    "$([ $RC -eq 0 ] && [ "$(wc -l <"$OUT")" -eq 2 ] && grep -qx '1 vCPU, 8.0 GiB: unplaceable' "$OUT" &&
        sed -n 2p "$OUT" | grep -q '^  why: no node set has 8.0 GiB of free memory'; echo $?)"
run "$CTL" --bus-address="$ADDR" plan --vcpus=2 --memory=1G
result "online plan of a placeable domain: heading, pins, memory, why, one a line (rc $RC)" \
    "$([ $RC -eq 0 ] && [ "$(wc -l <"$OUT")" -eq 4 ] && ! grep -q '^$' "$OUT" && sed -n 2p "$OUT" | grep -q '^  vCPU 0 -> ' &&
        sed -n 3p "$OUT" | grep -q '^  memory on node' && sed -n 4p "$OUT" | grep -q '^  why: '; echo $?)"
run "$CTL" --bus-address="$ADDR" map --svg="$TMP/daemon.svg" --topology="$HOST222"
result "map --svg=FILE --topology= the daemon's (rc $RC) prints the map and writes the SVG" \
    "$([ $RC -eq 0 ] && grep -q '^package 0' "$OUT" && [ -s "$TMP/daemon.svg" ]; echo $?)"
picture "daemon: 'web, B db' and db's PUs in their legend colours, CPU 7 reserved, the rest white" \
    "$TMP/daemon.svg" "$TMP/daemon.json" 7
run "$CTL" --bus-address="$ADDR" map --svg="$TMP/none.svg" --topology="$TMP/no-such.xml"
result "map --svg with a --topology file that does not exist: exit 2, no map printed, no SVG made (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q 'no-such.xml' "$ERR" && [ ! -s "$OUT" ] && [ ! -e "$TMP/none.svg" ]; echo $?)"
run "$CTL" --bus-address="$ADDR" map --svg="$TMP/no-such-dir/map.svg" --topology="$HOST222"
result "map --svg into a directory that does not exist: exit 1, no map printed (rc $RC)" \
    "$([ $RC -eq 1 ] && grep -q 'no-such-dir/map.svg' "$ERR" && [ ! -s "$OUT" ]; echo $?)"
HOST_PUS=$("$CTL" --json topology --topology=host 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["pus"])')
if [ "${HOST_PUS:-0}" != 8 ]; then
    run "$CTL" --bus-address="$ADDR" map --svg="$TMP/wrong.svg"
    result "map --svg drawing this $HOST_PUS-PU host for the daemon's 8-PU one exits 1 asking for --topology= (rc $RC)" \
        "$([ $RC -eq 1 ] && grep -q 'give --topology=' "$ERR" && [ ! -e "$TMP/wrong.svg" ]; echo $?)"
else
    diag "skip: this host has 8 PUs like the daemon's, so a mismatch cannot be shown"
fi
run "$CTL" --bus-address="$ADDR" map --topology="$HOST222"
result "map --topology= without --svg is a usage error (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"

# --json prints JSON whatever the daemon's text holds: a domain name beyond ASCII is a JSON string
run "$CTL" --bus-address="$ADDR" --json map
result "--json map with a domain named 'café' prints JSON holding the name (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json, sys; assert "café" in json.load(open(sys.argv[1]))["text"]' \
        "$OUT" 2>"$ERR"; echo $?)"
result "--json map says of each CPU whose it is: the reserved CPU 7, the three domains' own (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
state = {c["cpu"]: c["state"] for c in d["cpus"]}
owners = sorted(n for c in d["cpus"] for n in c["domains"])
assert len(d["cpus"]) == 8 and state[7] == "reserved", state
assert owners == sorted(["web, B db", "web, B db", "db", "café"]), owners' "$OUT" 2>"$ERR"; echo $?)"
run "$CTL" --bus-address="$ADDR" --json rebalance
result "--json rebalance prints JSON, its report also line by line (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["lines"] == [l for l in r["report"].split("\n") if l] and isinstance(r["moved"], int)' "$OUT" 2>"$ERR"; echo $?)"

# --json: a command that fails prints one JSON object too, {"error", "exit_code"}, the error's text still
# on stderr and the exit status as it was
json_error() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"error", "exit_code"} and d["exit_code"] == int(sys.argv[3]), d
assert d["error"] and d["error"] in open(sys.argv[2]).read(), d' "$OUT" "$ERR" "$1" 2>&1
}
run "$CTL" --bus-address="$ADDR" show nosuch --json
result "--json show of no such domain: exit 4, the error as JSON on stdout and as text on stderr (rc $RC)" \
    "$([ $RC -eq 4 ] && grep -q 'nosuch' "$ERR" && json_error 4 >&2; echo $?)"
cp "$TMP/reserved.conf" "$TMP/reserved.conf.good"
printf '[Placement]\nPolicy=compat # the old one\n' >"$TMP/reserved.conf"
run "$CTL" --bus-address="$ADDR" --json reload
result "--json reload of a configuration that does not load: exit 2 and the error as JSON (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q 'comments go on a line of their own' "$ERR" && json_error 2 >&2; echo $?)"
cp "$TMP/reserved.conf.good" "$TMP/reserved.conf"
run "$CTL" --bus-address="$ADDR" --json reload
result "--json reload of a good one prints {} (rc $RC)" "$([ $RC -eq 0 ] && [ "$(cat "$OUT")" = "{}" ]; echo $?)"
bad=
for call in "show --json" "--json bogus" "--json --bogus list" "--json list extra" "--json map --topology=$HOST222" \
    "--json --vcpus=0 plan"; do
    # shellcheck disable=SC2086 # each call is words
    run "$CTL" --bus-address="$ADDR" $call
    [ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [$call]"
done
run "$CTL" --bus-address="unix:path=$TMP/nothing-here" --json status
[ $RC -eq 3 ] && json_error 3 >/dev/null || bad="$bad [status, no bus]"
run "$CTL" --json plan --topology="$TMP/no-such.xml" a:1:1G
[ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [offline plan, no topology]"
run "$CTL" --bus-address="$ADDR" --json map --svg="$TMP/none.svg" --topology="$TMP/no-such.xml"
[ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [map --svg, no topology]"
result "--json usage errors, an unknown option, no bus, an offline failure, map's --topology: each one JSON object${bad:+ (not:$bad)}" \
    "$([ -z "$bad" ]; echo $?)"
# a name, a file or an option holding bytes that are not UTF-8: the error object is JSON all the same,
# its text escaped as stderr's is
bad=
run "$CTL" --json plan --topology="$HOST222" $'a\xffb:1:1G'
[ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [domain name: rc $RC]"
cp "$OUT" "$TMP/name-error.json"
run "$CTL" --json plan --topology=$'/tmp/\xff.xml' a:1:1G
[ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [topology file: rc $RC]"
run "$CTL" --json simulate --topology="$HOST222" --trace="$TMP/"$'\xff'
[ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [trace file: rc $RC]"
run "$CTL" --json $'--b\xffogus' list
[ $RC -eq 2 ] && json_error 2 >/dev/null || bad="$bad [option: rc $RC]"
result "--json errors quoting bytes that are not UTF-8 are valid JSON, escaped as on stderr${bad:+ (not:$bad)}" \
    "$([ -z "$bad" ] && python3 -c 'import json, sys
assert sys.argv[2] in json.load(open(sys.argv[1]))["error"]' "$TMP/name-error.json" 'a\xffb:1:1G'; echo $?)"
run "$CTL" --bus-address="$ADDR" --json snippet nosuch
result "--json snippet of no such domain: one JSON object, exit 4 (rc $RC)" \
    "$([ $RC -eq 4 ] && json_error 4 >&2; echo $?)"

# ---- a name that is one domain's and, escaped, another's ------------------------------------------------
# One domain named amb-cr<CR>x, which text output shows as amb-cr\x0dx, and one named literally amb-cr\x0dx
# (shown as amb-cr\x5cx0dx): the text amb-cr\x0dx names both, so it is refused naming both by UUID.
stop_pid "$PD_PID"
UUID_CR=6695eb01-f6a4-8304-79aa-97f2502e193f
UUID_LIT=7795eb01-f6a4-8304-79aa-97f2502e193f
cat >"$TMP/amb.xml" <<EOF
<node>
  <domain type="test"><name>amb-cr&#13;x</name><uuid>$UUID_CR</uuid><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>amb-cr\x0dx</name><uuid>$UUID_LIT</uuid><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
</node>
EOF
placementd_start --connect="test://$TMP/amb.xml" --topology="$HOST222" --bus-address="$ADDR"
must "placementd on the two look-alike names owns org.placementd1" wait_for 10 bus_has org.placementd1
wait_for 10 sh -c "'$CTL' --bus-address='$ADDR' list | grep -c amb-cr | grep -qx 2"
run "$CTL" --bus-address="$ADDR" list
result "list shows amb-cr<CR>x as amb-cr\\x0dx and amb-cr\\x0dx as amb-cr\\x5cx0dx (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qF 'amb-cr\x0dx ' "$OUT" && grep -qF 'amb-cr\x5cx0dx ' "$OUT"; echo $?)"
run "$CTL" --bus-address="$ADDR" show 'amb-cr\x0dx'
result "show amb-cr\\x0dx, one's name and the other's escaped name: refused as ambiguous naming both UUIDs (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -qF "'amb-cr\x0dx' is ambiguous" "$ERR" && grep -q "$UUID_CR" "$ERR" && grep -q "$UUID_LIT" "$ERR"; echo $?)"
run "$CTL" --bus-address="$ADDR" show 'amb-cr\x5cx0dx'
result "show amb-cr\\x5cx0dx, one name's escaped form only: that domain (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q "$UUID_LIT" "$OUT"; echo $?)"
run "$CTL" --bus-address="$ADDR" show "$UUID_CR"
result "show by UUID: the other (rc $RC)" "$([ $RC -eq 0 ] && grep -q "$UUID_CR" "$OUT"; echo $?)"

# ---- a name with a Unicode noncharacter ----------------------------------------------------------------
# U+FDD0 and U+1FFFF are valid UTF-8 and XML, so libvirt takes them in a name, but sd-bus refuses a string
# that holds one: every list of all domains (list, map, --json) failed with "Invalid argument" for everyone
# while such a domain ran. Text output escapes them; the D-Bus tuple and DecisionChanged carry that
# escaped form, by which the domain is reached.
stop_pid "$PD_PID"
UUID_NC=8895eb01-f6a4-8304-79aa-97f2502e193f
cat >"$TMP/nonchar.xml" <<EOX
<node>
  <domain type="test"><name>nc&#xFDD0;x&#x1FFFF;</name><uuid>$UUID_NC</uuid><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>nc-plain</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
</node>
EOX
placementd_start --connect="test://$TMP/nonchar.xml" --topology="$HOST222" --bus-address="$ADDR"
must "placementd beside a name with noncharacters owns org.placementd1" wait_for 10 bus_has org.placementd1
wait_for 10 sh -c "'$CTL' --bus-address='$ADDR' list 2>/dev/null | grep -q nc-plain"
run "$CTL" --bus-address="$ADDR" list
result "list shows nc<U+FDD0>x<U+1FFFF> as nc\\u{fdd0}x\\u{1ffff} beside nc-plain (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qF 'nc\u{fdd0}x\u{1ffff} ' "$OUT" && grep -q '^nc-plain ' "$OUT"; echo $?)"
bad=
for call in map "--json list" "--json map"; do
    # shellcheck disable=SC2086 # each call is words
    run "$CTL" --bus-address="$ADDR" $call
    [ $RC -eq 0 ] && grep -q nc-plain "$OUT" || bad="$bad [$call: rc $RC $(head -c 100 "$ERR")]"
done
result "map, --json list and --json map answer beside it${bad:+ (not:$bad)}" "$([ -z "$bad" ]; echo $?)"
run busctl --address="$ADDR" call org.placementd1 /org/placementd1 org.placementd1.Manager ListDecisions
result "ListDecisions answers, the name escaped in its tuple (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qF 'nc\\u{fdd0}x\\u{1ffff}' "$OUT"; echo $?)"
run "$CTL" --bus-address="$ADDR" show 'nc\u{fdd0}x\u{1ffff}'
result "show by the escaped name: that domain (rc $RC)" "$([ $RC -eq 0 ] && grep -q "$UUID_NC" "$OUT"; echo $?)"

# ---- advisory mode: the plan's verdict is not hidden ---------------------------------------------------
# Under Apply=no every decision is "advisory", but one whose plan is unplaceable or overcommitted needs a
# look as much as under Apply=yes: the log line has the level the plan's result would get (placementd(8),
# --log-level), and list and status say the plan's verdict beside "advisory".
stop_pid "$PD_PID"
printf '[Placement]\nApply=no\n' >"$TMP/advisory.conf"
cat >"$TMP/advisory.xml" <<EOX
<node>
  <domain type="test"><name>adv-fits</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>adv-huge</name><memory>67108864</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>adv-over</name><memory>1048576</memory><vcpu>12</vcpu><os><type>hvm</type></os></domain>
</node>
EOX
placementd_start --config="$TMP/advisory.conf" --connect="test://$TMP/advisory.xml" --topology="$HOST222" \
    --bus-address="$ADDR"
must "placementd in advisory mode owns org.placementd1" wait_for 10 bus_has org.placementd1
wait_for 10 sh -c "'$CTL' --bus-address='$ADDR' list 2>/dev/null | grep -c '^adv-' | grep -qx 3"
result "advisory: an unplaceable plan logs at warning, an overcommitted one at notice, a placed one at info" \
    "$(grep -q '^<4>adv-huge: advisory (unplaceable) ' "$PD_LOG" && grep -q '^<5>adv-over: advisory (overcommitted), ' "$PD_LOG" &&
        grep -q '^<6>adv-fits: advisory, ' "$PD_LOG"; echo $?)"
run "$CTL" --bus-address="$ADDR" list
result "advisory: list's result says the plan's verdict where it is not placed (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -Eq '^adv-huge +advisory \(unplaceable\) ' "$OUT" &&
        grep -Eq '^adv-over +advisory \(overcommitted\) ' "$OUT" && grep -Eq '^adv-fits +advisory +explicit ' "$OUT"; echo $?)"
run "$CTL" --bus-address="$ADDR" show adv-huge
result "advisory: show's result says it too (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -qx '  result:         advisory (unplaceable) \[explicit\]; advised (Apply=no): not applied' "$OUT"; echo $?)"
run "$CTL" --bus-address="$ADDR" status
result "advisory: status counts the advisory decisions' verdicts (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '3 domains, 3 advisory (1 overcommitted, 1 unplaceable)$' "$OUT"; echo $?)"
run "$CTL" --bus-address="$ADDR" --json list
result "advisory: --json keeps result \"advisory\" and the plan's verdict in plan_result (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import json, sys
d = {x["domain"]: x for x in json.load(open(sys.argv[1]))["decisions"]}
assert all(x["result"] == "advisory" and x["applied"] is False for x in d.values()), d
assert [d[n]["plan_result"] for n in ("adv-fits", "adv-huge", "adv-over")] == ["placed", "unplaceable", "overcommitted"]' "$OUT"; echo $?)"

# ---- names wider or narrower than their characters ------------------------------------------------------
# A CJK character takes two columns of a terminal, a combining mark none: list pads by display width, so
# each column starts under its heading whatever the names hold.
stop_pid "$PD_PID"
cat >"$TMP/wide.xml" <<EOX
<node>
  <domain type="test"><name>数据库</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>wéb-ünï</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>cafe&#x301;-x</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
  <domain type="test"><name>plain</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>
</node>
EOX
placementd_start --connect="test://$TMP/wide.xml" --topology="$HOST222" --bus-address="$ADDR"
must "placementd on wide names owns org.placementd1" wait_for 10 bus_has org.placementd1
wait_for 10 sh -c "'$CTL' --bus-address='$ADDR' list 2>/dev/null | grep -q '^plain'"
run "$CTL" --bus-address="$ADDR" list
result "list: each column starts at its heading's display column, wide and combining names too (rc $RC)" \
    "$([ $RC -eq 0 ] && python3 -c 'import sys, unicodedata
def width(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
def column(line, i):
    return width(line[:i])
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
head = lines[0]
cols = [width(head[:head.index(w)]) for w in ("RESULT", "POLICY", "NODES", "MEM", "VCPU PINS")]
assert len(lines) == 5, lines
for l in lines[1:]:
    starts = [column(l, i) for i in range(1, len(l)) if l[i - 1] == " " and l[i] != " "]
    assert all(c in starts for c in cols), (l, cols, starts)' "$OUT" 2>"$ERR"; echo $?)"
