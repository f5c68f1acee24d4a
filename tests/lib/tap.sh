# shellcheck shell=bash
# The TAP reporting and the harness every shell suite under tests/ shares. Sourced; it sets no shell
# options and runs nothing on load but setting ROOT (the source tree) and the counters.
#
# Reporting: "ok N - DESC" / "not ok N - DESC", diagnostics as "# ...", and at the end the plan "1..N" and
# one summary line "NAME: P passed, F failed". A suite that cannot run here exits 77 (tap_skip).
#   tap_begin [NAME]            counters to zero, the clock started, exit and interrupt traps set: at exit
#                               tap_cleanup (when the suite defines it) runs, then the log and the temporary
#                               directory are dealt with, the plan and summary printed (no summary without
#                               NAME: pure TAP, for meson); exit status 0 when no check failed, 77 for a
#                               skip, 1 otherwise; TAP_COUNT_TODO=1 adds the TODO counts to the summary,
#                               TAP_SUFFIX is appended to it
#   ok DESC / not_ok DESC       one result; while TAP_TODO holds a reason they are "# TODO" (TODO, BONUS)
#   check DESC CMD...           ok when CMD succeeds (TAP_CAPTURE=1: its output is shown only on failure)
#   result DESC STATUS          ok when STATUS is 0; else not ok with the last `run`'s RC, $OUT and $ERR
#                               (when the suite set them)
#   expect DESC EXPECTED ACTUAL exact comparison of (multi-line) text
#   must DESC CMD...            a step without which the rest is meaningless: its failure ends the run
#   diag TEXT...                one "# " line per line of TEXT
#   tap_skip REASON / need_root REASON / need TOOL...   exit 77, saying why
# Harness:
#   tap_build [DIR]             BUILD (absolute; default build, relative to the cwd or ROOT), PLACEMENTD,
#                               PLACEMENTCTL
#   tap_tmpdir NAME [KEEP]      TAP_TMP, a fresh directory removed at exit unless KEEP is non-empty (or
#                               TAP_KEEP_FAILED=1 and the suite failed)
#   run CMD...                  CMD with a time limit (RUN_TIMEOUT, default 30 s): stdout in the file $OUT,
#                               stderr in $ERR (the suite sets both), exit status in $RC (and returned)
#   wait_for SECONDS CMD...     poll CMD every 0.1 s until it succeeds, for SECONDS of wall time in all
#                               (a CMD that blocks counts its time: no try starts after the deadline)
#   pid_alive PID / stop_pid PID [SIGNAL]   a live process (not a zombie); stop one, reaped, KILL after 5 s
#   free_port                   a free TCP port on 127.0.0.1, asked of the kernel
#   bus_start DIR [CONFIG]      a private dbus-daemon, our child, on unix:path=DIR/bus (BUS_ADDR, BUS_PID);
#                               CONFIG defaults to a session bus anyone may use (DIR/bus.conf)
#   bus_stop / bus_has NAME [ADDR]   stop it; NAME is owned on the bus
#   placementd_start ARGS...    $PLACEMENTD ARGS --foreground, our child (PD_PID), output appended to $PD_LOG
#                               after a marker line; the last TAP_LOG_LINES lines of PD_LOG (and of each file
#                               given to tap_log) are printed when the suite fails
#   tap_log FILE...             more logs to print the tail of when the suite fails
#   placementd_alive            the daemon still runs
#   placementd_stop             SIGTERM, SIGKILL after 10 s; its exit status in PD_RC
#   elapsed                     seconds since tap_begin, as "S.mmm"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=0 PASS=0 FAIL=0 TODO=0 BONUS=0
T0=$(date +%s%N)
TAP_NAME=
TAP_TODO=
TAP_CAPTURE=
TAP_COUNT_TODO=
TAP_SUFFIX=
TAP_TMP=
TAP_KEEP=
TAP_KEEP_FAILED=
TAP_LOG_LINES=30
TAP_LOGS=()
PD_PID=
PD_LOG=
PD_RC=
BUS_PID=
BUS_ADDR=
OUT='' ERR='' RC=0

elapsed() { local ms=$((($(date +%s%N) - T0) / 1000000)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

# TAP TODO: while TAP_TODO is set (to the reason), checks are reported with "# TODO $TAP_TODO": a failure
# counts in TODO (not FAIL), a pass in BONUS (a known failure that no longer fails: take it off the list).
ok() { _tap_line 1 "$@"; }
not_ok() { _tap_line 0 "$@"; }
_tap_line() { # PASSED DESC...
    local passed=$1 word=ok todo=
    shift
    N=$((N + 1))
    ((passed)) || word="not ok"
    if [ -n "$TAP_TODO" ]; then
        todo=" # TODO $TAP_TODO"
        if ((passed)); then BONUS=$((BONUS + 1)); else TODO=$((TODO + 1)); fi
    elif ((passed)); then
        PASS=$((PASS + 1))
    else
        FAIL=$((FAIL + 1))
    fi
    echo "$word $N - $*$todo"
}

check() {
    local desc=$1 out
    shift
    if [ -z "$TAP_CAPTURE" ]; then
        if "$@"; then ok "$desc"; else not_ok "$desc"; fi
        return 0
    fi
    out=${TAP_TMP:-/tmp}/check.out.$$
    if "$@" >"$out" 2>&1; then
        ok "$desc"
    else
        not_ok "$desc"
        tail -n 20 "$out" | sed 's/^/#   /'
    fi
    rm -f "$out"
}

result() {
    if [ "$2" -eq 0 ]; then
        ok "$1"
    else
        not_ok "$1"
        [ -z "$OUT" ] || echo "#   rc=$RC stdout: $(head -c 600 "$OUT" 2>/dev/null | tr '\n' ';')"
        [ -z "$ERR" ] || echo "#   stderr: $(tail -c 600 "$ERR" 2>/dev/null | tr '\n' ';')"
    fi
}

expect() {
    if [ "$2" = "$3" ]; then
        ok "$1"
    else
        not_ok "$1"
        diag "  expected: $(printf '%s' "$2" | tr '\n' ';')" "  actual:   $(printf '%s' "$3" | tr '\n' ';')"
    fi
}

must() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; exit 1; fi
}

tap_skip() {
    if [ "$N" -eq 0 ]; then echo "1..0 # SKIP $*"; else echo "# skip: $*"; fi
    exit 77
}
need_root() { [ "$(id -u)" -eq 0 ] || tap_skip "needs root ($*)"; }
need() {
    local tool
    for tool in "$@"; do
        PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null || tap_skip "$tool is not installed"
    done
}

tap_begin() {
    TAP_NAME=${1:-}
    N=0 PASS=0 FAIL=0 TODO=0 BONUS=0
    T0=$(date +%s%N)
    trap _tap_exit EXIT
    trap 'diag interrupted; FAIL=$((FAIL + 1)); exit 130' INT TERM
}

tap_log() { TAP_LOGS+=("$@"); }

_tap_dump_logs() {
    local f
    for f in "${PD_LOG:+$PD_LOG}" "${TAP_LOGS[@]}"; do
        [ -s "$f" ] || continue
        echo "# ---- last $TAP_LOG_LINES lines of $f ----"
        tail -n "$TAP_LOG_LINES" "$f" | cut -c1-300 | sed 's/^/# /'
    done
}

_tap_exit() {
    local rc=$? failed=0
    trap - EXIT INT TERM
    if declare -F tap_cleanup >/dev/null; then tap_cleanup "$rc"; fi
    if [ "$rc" -eq 77 ] && [ "$FAIL" -eq 0 ]; then
        [ -z "$TAP_TMP" ] || rm -rf "$TAP_TMP"
        exit 77
    fi
    if [ "$rc" -ne 0 ] && [ "$FAIL" -eq 0 ]; then FAIL=1; fi
    [ "$FAIL" -eq 0 ] || failed=1
    [ "$failed" -eq 0 ] || _tap_dump_logs
    if [ -n "$TAP_TMP" ]; then
        if [ -n "$TAP_KEEP" ] || { [ "$failed" -eq 1 ] && [ -n "$TAP_KEEP_FAILED" ]; }; then
            diag "kept $TAP_TMP"
        else
            rm -rf "$TAP_TMP"
        fi
    fi
    echo "# time: $(elapsed) s"
    echo "1..$N"
    if [ -z "$TAP_NAME" ]; then
        :
    elif [ -n "$TAP_COUNT_TODO" ]; then
        echo "$TAP_NAME: $PASS passed, $FAIL failed, $TODO todo, $BONUS todo passed$TAP_SUFFIX"
    else
        echo "$TAP_NAME: $PASS passed, $FAIL failed$TAP_SUFFIX"
    fi
    exit "$failed"
}

# shellcheck disable=SC2034 # PLACEMENTD and PLACEMENTCTL are for the suites
tap_build() {
    BUILD=${1:-build}
    [ -d "$BUILD" ] || BUILD=$ROOT/$BUILD
    BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "Bail out! no build directory ${1:-build}"; exit 2; }
    PLACEMENTD=$BUILD/daemon/placementd
    PLACEMENTCTL=$BUILD/tools/placementctl
}

tap_tmpdir() {
    TAP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/placementd-$1.XXXXXX") || { echo "Bail out! mktemp"; exit 2; }
    TAP_KEEP=${2:-}
}

run() {
    timeout "${RUN_TIMEOUT:-30}" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    return $RC
}

wait_for() {
    local end=$((${EPOCHREALTIME//[!0-9]/} + $1 * 1000000))
    shift
    until "$@"; do
        ((${EPOCHREALTIME//[!0-9]/} < end)) || return 1
        sleep 0.1
    done
}

# pid_alive PID: the process exists and is not a zombie (kill -0 succeeds on a child not yet reaped).
pid_alive() {
    local stat
    case "${1:-}" in '' | *[!0-9]*) return 1 ;; esac
    IFS= read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    [ "${stat:0:1}" != Z ] && [ "${stat:0:1}" != X ]
}

stop_pid() {
    local pid=$1 sig=${2:-TERM} i
    [ -n "$pid" ] || return 0
    kill -"$sig" "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do
        pid_alive "$pid" || break
        sleep 0.1
    done
    pid_alive "$pid" && kill -KILL "$pid"
    wait "$pid"
    return 0
} 2>/dev/null # also bash's "Killed" notice when it reaps a child killed by a signal

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

bus_start() {
    local dir=$1 conf=${2:-$1/bus.conf}
    BUS_ADDR=unix:path=$dir/bus # no guid=: a restarted bus has a new one, and sd-bus refuses a mismatch
    [ -n "${2:-}" ] || cat >"$conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>$BUS_ADDR</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
EOF
    : >"$dir/bus.addr"
    dbus-daemon --config-file="$conf" --address="$BUS_ADDR" --nofork --nopidfile --nosyslog --print-address=3 \
        3>"$dir/bus.addr" </dev/null >>"$dir/dbus-daemon.log" 2>&1 &
    BUS_PID=$!
    wait_for 10 grep -q "^$BUS_ADDR," "$dir/bus.addr" && pid_alive "$BUS_PID"
}
bus_stop() {
    stop_pid "$BUS_PID"
    BUS_PID=
}
bus_has() { timeout 5 busctl --address="${2:-$BUS_ADDR}" status "$1" >/dev/null 2>&1; }

placementd_start() {
    echo "==== placementd started at $(date +%T.%N): $*" >>"$PD_LOG"
    env -u NOTIFY_SOCKET -u WATCHDOG_USEC "$PLACEMENTD" "$@" --foreground </dev/null >>"$PD_LOG" 2>&1 &
    PD_PID=$!
}
placementd_alive() { pid_alive "$PD_PID"; }
# shellcheck disable=SC2034 # PD_RC is for the suites
placementd_stop() {
    local pid=$PD_PID i
    PD_RC=
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        pid_alive "$pid" || break
        sleep 0.1
    done
    if pid_alive "$pid"; then
        diag "placementd (pid $pid) ignored SIGTERM for 10 s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    PD_RC=$?
    PD_PID=
}
