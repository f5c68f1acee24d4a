#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The promises of docs/algorithm.md held by `placementctl plan|explain --topology=` on seeded random small
# hosts and traces (tests/props/plan-props.py says which), and those of docs/simulate.md by `placementctl
# simulate` (tests/props/simulate-props.py: every figure worked out again from its definition, on the
# plan's placement): CASES cases (default 50) of each from seed 1, the same every run, in about 10 s each;
# a failing seed is named with what broke, and
#   python3 tests/props/plan-props.py PLACEMENTCTL --seed S --cases 1 --keep DIR
# writes its host, configuration and trace to DIR/seedS (simulate-props.py the same).
#   bash tests/props/run.sh PLACEMENTCTL [CASES]        TAP
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

CTL=$(realpath "${1:?usage: run.sh PLACEMENTCTL [CASES]}") || exit 2
CASES=${2:-50}
command -v python3 >/dev/null || tap_skip "python3 is not installed"
tap_begin '' # no summary line: meson reads TAP

if out=$(python3 "$ROOT/tests/props/plan-props.py" "$CTL" --seed 1 --cases "$CASES" 2>&1); then
        ok "$CASES random hosts and traces keep the promises of docs/algorithm.md"
else
        not_ok "random hosts and traces: a promise of docs/algorithm.md broken"
fi
diag "$out"

if out=$(python3 "$ROOT/tests/props/simulate-props.py" "$CTL" --seed 1 --cases "$CASES" 2>&1); then
        ok "$CASES random hosts and traces: simulate's figures as docs/simulate.md defines them"
else
        not_ok "random hosts and traces: a figure of simulate not as docs/simulate.md defines it"
fi
diag "$out"
