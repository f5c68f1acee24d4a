#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Holds the placement engine to its checked-in decisions: runs `placementctl plan --json` for every case of
# tests/golden/cases with both policies and compares the output byte for byte with tests/golden/*.json.
# Usage: check.sh PLACEMENTCTL [--update]   (--update rewrites the golden files after an intended change)
set -u
ctl=$(realpath "${1:?usage: check.sh PLACEMENTCTL [--update]}") || exit 1
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
failed=0 n=0

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

while IFS='|' read -r name topology trace config; do
        name=$(trim "$name")
        [[ -z $name || $name == \#* ]] && continue
        topology=$(trim "$topology") trace=$(trim "$trace") config=$(trim "$config")
        [[ $topology == synthetic:* ]] || topology=$root/$topology
        args=(plan "--topology=$topology" "--trace=$root/$trace" --json)
        [[ $config == - ]] || args+=("--config=$root/$config")
        for policy in explicit compat; do
                golden=$here/$name-$policy.json
                n=$((n + 1))
                if ! out=$(cd "$root" && "$ctl" "${args[@]}" "--policy=$policy" 2>&1); then
                        echo "not ok $n - $name $policy: placementctl failed: $out"
                        failed=1
                        continue
                fi
                if [[ $update == --update ]]; then
                        printf '%s\n' "$out" >"$golden"
                        echo "ok $n - $name $policy (written)"
                elif diff -u "$golden" <(printf '%s\n' "$out"); then
                        echo "ok $n - $name $policy"
                else
                        echo "not ok $n - $name $policy: differs from ${golden#"$root"/}"
                        failed=1
                fi
        done
done <"$here/cases"
echo "1..$n"
exit "$failed"
