# shellcheck shell=bash
# TAP-like reporting shared by the end-to-end scripts: "ok N - ..." / "not ok N - ...", diagnostics as
# "# ...". The caller sets N=0 PASS=0 FAIL=0 and T0=$(date +%s%N), and prints its own summary line.

elapsed() { local ms=$((($(date +%s%N) - T0) / 1000000)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
# TAP TODO: while TAP_TODO is set (to the reason), checks are reported with "# TODO $TAP_TODO": a failure
# counts in TODO (not FAIL), a pass in BONUS (a known failure that no longer fails: take it off the list).
TAP_TODO=
TODO=0
BONUS=0
ok() {
    N=$((N + 1))
    if [ -n "$TAP_TODO" ]; then
        BONUS=$((BONUS + 1))
        echo "ok $N - $* # TODO $TAP_TODO"
    else
        PASS=$((PASS + 1))
        echo "ok $N - $*"
    fi
}
not_ok() {
    N=$((N + 1))
    if [ -n "$TAP_TODO" ]; then
        TODO=$((TODO + 1))
        echo "not ok $N - $* # TODO $TAP_TODO"
    else
        FAIL=$((FAIL + 1))
        echo "not ok $N - $*"
    fi
}

# check DESC CMD...: the command must succeed.
check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# expect DESC EXPECTED ACTUAL: exact comparison of (multi-line) text.
expect() {
    if [ "$2" = "$3" ]; then
        ok "$1"
    else
        not_ok "$1"
        diag "  expected: $(printf '%s' "$2" | tr '\n' ';')" "  actual:   $(printf '%s' "$3" | tr '\n' ';')"
    fi
}

# must DESC CMD...: a step without which the rest is meaningless; its failure ends the run.
must() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; exit 1; fi
}
