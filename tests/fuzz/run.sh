#!/bin/bash
# Builds the fuzz targets (build.sh) and runs them.
#   tests/fuzz/run.sh [SECONDS_PER_TARGET]   fuzz each target that long (default 20) on a copy of its
#                                            seed corpus; the repository is never written to
#   tests/fuzz/run.sh --regress              replay tests/fuzz/corpus/<name>/* and
#                                            tests/fuzz/regressions/<name>-* once through each target
# The build goes to $FUZZ_BUILD_DIR (default build-fuzz); crash inputs are kept in its artifacts/.
# Fuzzing starts from libFuzzer's seed $FUZZ_SEED (default: a random one); the seed is printed first, and
# the same seed with the same corpus repeats the same inputs.
# Prints "ok N - <name> (...)" or "not ok N - <name> ..." and the crash per target, then
# "fuzz: N passed, M failed"; exits non-zero when a target failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
root=$ROOT
out=${FUZZ_BUILD_DIR:-$root/build-fuzz}
case $out in /*) ;; *) out=$root/$out ;; esac

mode=fuzz
seconds=20
case ${1:-} in
--regress) mode=regress ;;
'') ;;
*[!0-9]* | 0)
        echo "usage: $0 [SECONDS_PER_TARGET] | --regress" >&2
        exit 2
        ;;
*) seconds=$1 ;;
esac

if ! build_log=$("$here/build.sh" "$out" 2>&1); then
        echo "$build_log" >&2
        echo "fuzz: build failed"
        exit 1
fi

# GLib criticals abort (fuzz_setup); undefined behaviour stops the target; leaks are reported (LeakSanitizer).
export G_SLICE=always-malloc
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=0}
export HWLOC_HIDE_ERRORS=2

tap_begin fuzz
tap_tmpdir fuzz
work=$TAP_TMP
mkdir -p "$out/artifacts"
common=(-timeout=10 -rss_limit_mb=2048)
seed=${FUZZ_SEED:-$(((RANDOM << 15 | RANDOM) + 1))}
[ "$mode" = regress ] || diag "seed $seed (FUZZ_SEED=$seed repeats this run)"

# Prints the sanitizer, libFuzzer or fuzz check report of a log (at most $2 lines), indented.
report() {
        awk -v max="$2" '!found && /^==[0-9]+==|runtime error:|^fuzz check failed|ERROR: libFuzzer|Assertion .* failed/ {
                                 found = 1 }
                         found && !/^(stat::|MS: |Base64: |NOTE: |      Combine libFuzzer|artifact_prefix=)/ && n++ < max' "$1" |
                sed 's/^/    /'
}

for src in "$here"/fuzz-*.c; do
        target=$(basename "$src" .c)
        name=${target#fuzz-}
        log=$work/$name.log
        shopt -s nullglob
        seeds=("$here/corpus/$name"/* "$here/regressions/$name"-*)
        shopt -u nullglob

        if [ "$mode" = regress ]; then
                # All inputs in one run (a process each took 0.2 s under the sanitizers: 16 s for the
                # corpus); when it fails, one run per input, so that every failing one is reported.
                bad=0
                : >"$log"
                if [ ${#seeds[@]} -gt 0 ] && "$out/$target" "${common[@]}" "${seeds[@]}" >"$work/input.log" 2>&1; then
                        ok "$name (${#seeds[@]} inputs)"
                        continue
                fi
                for input in "${seeds[@]}"; do
                        if ! "$out/$target" "${common[@]}" "$input" >"$work/input.log" 2>&1; then
                                bad=$((bad + 1))
                                { echo "    input ${input#"$root"/}:"; report "$work/input.log" 30; } >>"$log"
                        fi
                done
                if [ $bad -eq 0 ]; then
                        ok "$name (${#seeds[@]} inputs)"
                else
                        not_ok "$name: $bad of ${#seeds[@]} inputs failed"
                        sed 's/^/#/' "$log"
                fi
                continue
        fi

        mkdir -p "$work/$name"
        [ ${#seeds[@]} -eq 0 ] || cp "${seeds[@]}" "$work/$name/"
        "$out/$target" "${common[@]}" -seed="$seed" -max_total_time="$seconds" -print_final_stats=1 \
                -artifact_prefix="$out/artifacts/$name-" "$work/$name" >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
                runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
                ok "$name (${runs:-?} runs)"
        else
                not_ok "$name (exit $rc)"
                {
                        report "$log" 60
                        grep -h -m1 "Test unit written to" "$log" | sed 's/^.*Test unit written to/    input saved to/'
                } | sed 's/^/#/'
        fi
done
