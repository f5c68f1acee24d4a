#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# placementd --demo starts and destroys domains, so it must never touch anything but what it started on
# libvirt's test driver: it refuses a URI that is not test: (with the shipped config that is
# qemu:///system), refuses trace lines other than start and stop (a load or tick line was taken for a
# stop) with one message naming the line, before any file a domain line names is read, and leaves alone
# a stop of a domain it did not start (test:///default's own "test").
#   bash tests/demo-guards.sh PLACEMENTD        TAP
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PD=$(realpath "${1:?usage: demo-guards.sh PLACEMENTD}") || exit 1
# shellcheck source=lib/tap.sh
. "$HERE/lib/tap.sh"
TOPO="synthetic:pack:2 numa:1(memory=16GiB) core:2 pu:2"
# tap_begin's exit trap removes the directory: a trap of the suite's own would be replaced by it
tap_begin demo-guards
tap_tmpdir demo
TMP=$TAP_TMP OUT=$TAP_TMP/out ERR=$TAP_TMP/err RC=0

demo() { # TRACE-TEXT [OPTION...]
        printf '%s' "$1" >"$TMP/trace"
        shift
        "$PD" --config="$HERE/../conf/placementd.conf" --topology="$TOPO" --foreground --bus=none \
                --log-level=notice --demo="$TMP/trace" "$@" </dev/null >"$OUT" 2>"$ERR"
        RC=$?
}

demo $'start a 1 1G\nstop a\n'
((RC == 2)) && grep -q "runs only on libvirt's test driver (--connect=test:///default), not on qemu:///system" "$ERR"
result "the shipped config's qemu:///system is refused (exit 2)" $?

demo $'start a 1 1G\nload a busy=0.1\nstop a\n' --connect=test:///default
((RC == 2)) && grep -q "trace:2: --demo takes start NAME VCPUS MEMORY and stop NAME lines only" "$ERR"
result "a load line is refused, with its line (exit 2)" $?

demo $'start a 1 1023\n' --connect=test:///default
((RC == 2)) && grep -q "trace:1: start a: 1023 bytes is less than the 1 KiB" "$ERR"
result "a start of less than 1 KiB is refused, with its line (exit 2)" $?

demo $'tick 5\n' --connect=test:///default
((RC == 2)) && grep -q "trace:1: --demo takes start NAME VCPUS MEMORY and stop NAME lines only, not 'tick 5'$" "$ERR"
result "a tick line is refused, naming it (exit 2)" $?

# one message for every line that is not a start or a stop, an unknown one too (it was told the
# simulator's list of events, which --demo then refused)
demo $'start a 1 1G\nfoo bar\n' --connect=test:///default
((RC == 2)) && grep -q "trace:2: --demo takes start NAME VCPUS MEMORY and stop NAME lines only, not 'foo bar'$" "$ERR" &&
        [ "$(grep -c '^<3>' "$ERR")" -eq 1 ]
result "an unknown line is refused as a tick line is, in one message naming it (exit 2)" $?

# a long line is quoted to 80 bytes, "..." only when it was longer
L80="tick $(printf '%075d' 0)"
demo "$L80"$'\n' --connect=test:///default
((RC == 2)) && grep -q "not '$L80'$" "$ERR"
result "a refused line of exactly 80 bytes is quoted whole, without '...' (exit 2)" $?
demo "$L80"$'1\n' --connect=test:///default
((RC == 2)) && grep -q "not '$L80'\.\.\.$" "$ERR"
result "a refused line of 81 bytes is quoted to 80 and '...' (exit 2)" $?

# a domain FILE.xml line is refused before the file it names is read
printf '<domain' >"$TMP/half.xml"
demo $'# the demo\n\ndomain half.xml\n' --connect=test:///default
((RC == 2)) && grep -q "trace:3: --demo takes start NAME VCPUS MEMORY and stop NAME lines only, not 'domain half.xml'$" "$ERR" &&
        ! grep -q "half.xml:" "$ERR"
result "a domain FILE.xml line is refused without reading the file (exit 2)" $?

demo $'start a 1 1G\nstop test\nstop a\n' --connect=test:///default
((RC == 1)) && grep -q "demo: stop test: the demo did not start it, left alone" "$ERR" &&
        ! grep -q "^test: stopped" "$OUT" && grep -q "^a: stopped" "$OUT"
result "a stop of a domain it did not start leaves it alone (exit 1); its own stop goes on" $?

demo $'start a 1 1G\nstop a\n' --connect=test:///default
((RC == 0))
result "start and stop of its own domain on the test driver (exit 0)" $?

# a topology with CPUs the test driver's host lacks (test:///default maps CPUs 0-7): every pin to them fails
# ("runs on no CPU"), so the demo says so before it starts anything
demo $'start a 1 1G\nstop a\n' --connect=test:///default --topology="synthetic:pack:2 numa:1(memory=16GiB) core:8 pu:2"
((RC == 1)) && grep -q "demo: the topology's CPUs 8-31 are not on the host of test:///default (CPUs 0-7)" "$ERR" &&
        ! grep -q "^--- start" "$OUT" && ! grep -q "runs on" "$ERR"
result "a topology larger than the test driver's host is refused before any start (exit 1)" $?

# the topology line counts in words that agree with the numbers
demo $'start a 1 1G\nstop a\n' --connect=test:///default --topology="synthetic:pack:1 numa:1(memory=16GiB) core:1 pu:1" \
        --log-level=info
((RC == 0)) && grep -q ": 1 node, 1 package, 1 core, 1 PU$" "$ERR"
result "a one-CPU host is 1 node, 1 package, 1 core, 1 PU" $?
