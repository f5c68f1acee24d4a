#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Holds the placement engine to its checked-in decisions, byte for byte, with both policies for every case
# of tests/golden/cases:
#   check.sh plan PLACEMENTCTL       `placementctl plan --json` against tests/golden/NAME-POLICY.json
#   check.sh explain GOLDEN-EXPLAIN  what `explain` says of each decision (build/tests/golden-explain) against
#                                    tests/golden/explain/NAME-POLICY.txt, for the cases marked explain
# UPDATE_GOLDEN=1 (or --update as the third argument) rewrites the golden files after an intended change.
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

mode=${1:-}
[[ $mode == plan || $mode == explain ]] || { echo "usage: check.sh plan|explain PROGRAM [--update]" >&2; exit 2; }
prog=$(realpath "${2:?usage: check.sh plan|explain PROGRAM [--update]}") || exit 2
[[ ${3:-} != --update ]] || UPDATE_GOLDEN=1
here=$ROOT/tests/golden

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# golden FILE DESC CMD...: CMD's standard output is FILE's content (or becomes it, under UPDATE_GOLDEN=1);
# its warnings on standard error (a CPU list naming CPUs a host lacks) are not part of it.
golden() {
        local file=$1 desc=$2 out
        shift 2
        if ! out=$(cd "$ROOT" && "$@" 2>"$errors"); then
                not_ok "$desc: ${prog##*/} failed: $out $(cat "$errors")"
        elif [[ -n ${UPDATE_GOLDEN:-} ]]; then
                printf '%s\n' "$out" >"$file"
                ok "$desc (written)"
        elif diff -u "$file" <(printf '%s\n' "$out") | sed 's/^/# /'; ((!PIPESTATUS[0])); then
                ok "$desc"
        else
                not_ok "$desc: differs from ${file#"$ROOT"/}"
        fi
}

tap_begin '' # no summary line: meson reads TAP
tap_tmpdir golden
errors=$TAP_TMP/stderr
[[ -z ${UPDATE_GOLDEN:-} ]] || mkdir -p "$here/explain"
while IFS='|' read -r name topology trace config explain; do
        name=$(trim "$name")
        [[ -z $name || $name == \#* ]] && continue
        topology=$(trim "$topology") trace=$ROOT/$(trim "$trace") config=$(trim "$config")
        [[ $topology == synthetic:* ]] || topology=$ROOT/$topology
        [[ $config == - ]] || config=$ROOT/$config
        [[ $mode == plan || $(trim "${explain:-}") == explain ]] || continue
        for policy in explicit compat; do
                if [[ $mode == plan ]]; then
                        args=(plan "--topology=$topology" "--trace=$trace" --json "--policy=$policy")
                        [[ $config == - ]] || args+=("--config=$config")
                        golden "$here/$name-$policy.json" "$name $policy" "$prog" "${args[@]}"
                else
                        golden "$here/explain/$name-$policy.txt" "$name $policy" \
                                "$prog" "$topology" "$trace" "$config" "$policy"
                fi
        done
done <"$here/cases"
