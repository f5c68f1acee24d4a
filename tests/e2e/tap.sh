# shellcheck shell=bash
# TAP-like reporting shared by the end-to-end scripts: "ok N - ..." / "not ok N - ...", diagnostics as
# "# ...". The caller sets N=0 PASS=0 FAIL=0 and T0=$(date +%s%N), and prints its own summary line.

elapsed() { local ms=$((($(date +%s%N) - T0) / 1000000)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
ok() { N=$((N + 1)); PASS=$((PASS + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N - $*"; }

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
