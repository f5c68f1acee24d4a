#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One host, numbered two ways: tests/topologies/xeon-2s-smt.xml numbers a core's threads next to each other
# (core 0 is CPUs 0-1), xeon-2s-intel.xml as Intel's BIOSes do (core 0 is CPUs 0 and 16). CPU numbers are
# names, so every decision on one must be the other's with its CPUs renamed (tests/golden/renumber.py):
# `placementctl plan` on guests with SMT, partial realtime, cells, a <vcpu cpuset>, I/O threads and a host
# filled past its cores, with both policies, and `placementctl simulate` on every trace of tests/simulate.
#   bash tests/golden/renumbered.sh PLACEMENTCTL        TAP
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

CTL=$(realpath "${1:?usage: renumbered.sh PLACEMENTCTL}") || exit 2
command -v python3 >/dev/null || tap_skip "python3 is not installed"
tap_begin '' # no summary line: meson reads TAP
tap_tmpdir renumbered
SEQ=$ROOT/tests/topologies/xeon-2s-smt.xml
INTEL=$ROOT/tests/topologies/xeon-2s-intel.xml
MAP=$ROOT/tests/golden/renumber.py

# guest NAME VCPUS XML-IN-DOMAIN: a 4 GiB guest of VCPUS vCPUs, XML-IN-DOMAIN inside its <domain>
guest() {
        printf "<domain type='kvm'><name>%s</name><memory unit='GiB'>4</memory>%s</domain>\n" "$1" "$3" \
                >"$TAP_TMP/$1.xml"
        [[ $3 == *"<vcpu>"* || $3 == *"<vcpu "* ]] || sed -i "s|</name>|</name><vcpu>$2</vcpu>|" "$TAP_TMP/$1.xml"
}
guest smt 12 "<cpu><topology sockets='1' cores='6' threads='2'/></cpu>"
guest rt 8 "<cputune><vcpusched vcpus='1-7' scheduler='fifo' priority='1'/></cputune>"
guest cells 8 "<cpu><numa><cell id='0' cpus='0-3' memory='2' unit='GiB'/><cell id='1' cpus='4-7' memory='2' unit='GiB'/></numa></cpu>"
guest io 4 "<iothreads>2</iothreads>"
# node 0's first four cores, both threads, in each host's numbers
cp "$TAP_TMP/io.xml" "$TAP_TMP/seq-cpuset.xml"
sed -i "s|<vcpu>4</vcpu>|<vcpu cpuset='0-7'>4</vcpu>|; s|<name>io|<name>cpuset|" "$TAP_TMP/seq-cpuset.xml"
intel_cpus=$(python3 "$MAP" cpuset "$SEQ" "$INTEL" 0-7)
sed "s|cpuset='0-7'|cpuset='$intel_cpus'|" "$TAP_TMP/seq-cpuset.xml" >"$TAP_TMP/intel-cpuset.xml"
expect "node 0's first four cores are CPUs 0-3,16-19 in Intel's numbers" "0-3,16-19" "$intel_cpus"

for host in seq intel; do
        cat >"$TAP_TMP/$host.trace" <<EOF
start a 8 16G
domain smt.xml
domain rt.xml
start b 6 8G
domain cells.xml
stop a
domain $host-cpuset.xml
start c 20 8G
domain io.xml
start d 3 2G
EOF
done

# same DESC SEQ.json INTEL.json: the decisions agree once renumbered
same() {
        local diff
        if diff=$(python3 "$MAP" compare "$SEQ" "$INTEL" "$2" "$3" 2>&1); then
                ok "$1"
        else
                not_ok "$1"
                diag "$diff"
        fi
}

for policy in explicit compat; do
        for host in seq intel; do
                topo=$SEQ
                [[ $host == intel ]] && topo=$INTEL
                "$CTL" plan --topology="$topo" --trace="$TAP_TMP/$host.trace" --policy=$policy --json \
                        >"$TAP_TMP/$host-$policy.json" 2>"$TAP_TMP/err" ||
                        not_ok "plan --policy=$policy on $host: $(cat "$TAP_TMP/err")"
        done
        same "plan --policy=$policy: the same decisions on both numberings" \
                "$TAP_TMP/seq-$policy.json" "$TAP_TMP/intel-$policy.json"
done
# the comparison sees a difference: the sequential host's decisions do not hold on Intel's numbers as they are
apart=$(python3 "$MAP" compare "$SEQ" "$SEQ" "$TAP_TMP/seq-explicit.json" "$TAP_TMP/intel-explicit.json")
[[ $apart == *".decisions["*renumbered* ]]
result "the comparison tells the numberings apart" $?
grep -q '"shared_vcpus" : [1-9]' "$TAP_TMP/seq-explicit.json" &&
        grep -q '"result" : "overcommitted"' "$TAP_TMP/seq-explicit.json"
result "the trace fills the host past its cores (vCPUs share)" $?

for trace in "$ROOT"/tests/simulate/*.trace; do
        name=${trace##*/}
        "$CTL" simulate --topology="$SEQ" --trace="$trace" --json >"$TAP_TMP/seq-sim.json" 2>&1
        "$CTL" simulate --topology="$INTEL" --trace="$trace" --json >"$TAP_TMP/intel-sim.json" 2>&1
        sed -i '/"topology" :/d' "$TAP_TMP/seq-sim.json" "$TAP_TMP/intel-sim.json"
        same "simulate $name: the same figures on both numberings" "$TAP_TMP/seq-sim.json" "$TAP_TMP/intel-sim.json"
done
