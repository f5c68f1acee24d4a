#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# tests/run-all.sh's counting (tests/lib/stages.sh): a stage passes, fails, or is skipped when its script
# exits 77; a stage of several scripts is skipped only when all of them are, and a script of it that
# skipped while the others ran is named on the stage's line and counted as skipped, not passed over.
#   bash tests/stages.sh        TAP
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/tap.sh
. "$HERE/lib/tap.sh"
# shellcheck source=lib/stages.sh
. "$HERE/lib/stages.sh"
tap_begin stages
tap_tmpdir stages
OUT=$TAP_TMP/out ERR='' RC=0

# a stage of its own counters, as run-all.sh runs it: STAGE-FUNCTION; its lines in OUT
counted() {
        passed=0 failed=0 skipped=0 failures=() partial=()
        stage "$1" "$1" >"$OUT" 2>&1
}
script() { # NAME EXIT: a script that exits EXIT
        printf 'exit %s\n' "$2" >"$TAP_TMP/$1"
}
script pass.sh 0
script skip.sh 77
script also-skip.sh 77
script fail.sh 1

one() { bash "$TAP_TMP/pass.sh"; }
counted one
result "a stage that passes: ok, counted passed" \
        "$( ((passed == 1 && failed == 0 && skipped == 0)) && grep -q '^=== one: ok (' "$OUT"; echo $?)"

all_ran() {
        local bad=0 ran=0
        part bash "$TAP_TMP/pass.sh"
        part bash "$TAP_TMP/pass.sh"
        outcome
}
counted all_ran
result "parts that all pass: ok, nothing skipped" \
        "$( ((passed == 1 && skipped == 0 && ${#partial[@]} == 0)) && grep -q '^=== all_ran: ok ([0-9]* s)$' "$OUT"
        echo $?)"

some_skipped() {
        local bad=0 ran=0
        part bash "$TAP_TMP/pass.sh"
        part env X=1 bash "$TAP_TMP/skip.sh"
        part bash "$TAP_TMP/pass.sh"
        outcome
}
counted some_skipped
result "a part skipped while the others ran: the stage is ok and the skip is counted" \
        "$( ((passed == 1 && failed == 0 && skipped == 1)); echo $?)"
result "  its line names the script that skipped" \
        "$(grep -q "^=== some_skipped: ok ([0-9]* s; skipped: $TAP_TMP/skip.sh)\$" "$OUT"; echo $?)"
result "  and the run's summary will too" \
        "$([ "${partial[*]}" = "some_skipped: $TAP_TMP/skip.sh" ]; echo $?)"

all_skipped() {
        local bad=0 ran=0
        part bash "$TAP_TMP/skip.sh"
        part bash "$TAP_TMP/also-skip.sh"
        outcome
}
counted all_skipped
result "every part skipped: the stage is skipped, counted once" \
        "$( ((passed == 0 && skipped == 1 && ${#partial[@]} == 0)) && grep -q '^=== all_skipped: skipped (' "$OUT"
        echo $?)"

one_failed() {
        local bad=0 ran=0
        part bash "$TAP_TMP/fail.sh"
        part bash "$TAP_TMP/skip.sh"
        part bash "$TAP_TMP/pass.sh"
        outcome
}
counted one_failed
result "a part failed: the stage failed, and the one skipped beside it is counted" \
        "$( ((failed == 1 && passed == 0 && skipped == 1)) && [ "${failures[*]}" = one_failed ] &&
                grep -q "^=== one_failed: FAILED ([0-9]* s; skipped: $TAP_TMP/skip.sh)\$" "$OUT"
        echo $?)"

# the next stage starts with no skipped part of the one before
counted all_ran
result "a stage's skipped parts are its own" "$( ((skipped == 0)); echo $?)"
