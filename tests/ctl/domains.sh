#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# placementctl plan/explain --topology on libvirt domain XML (tests/ctl/domains/*.xml): the offline
# planner reads a definition with the daemon's parser and applies the daemon's rules: <vcpu cpuset>,
# <numatune><memory nodeset>, <emulatorpin>/<iothreadpin> standing, the other I/O threads pinned, guest
# cells each on one node, hugepage-backed memory counted in hugepages, placement='auto' or
# skip='yes' skipped, <vcpupin> skipped with its pins held. --domain repeats and mixes with NAME:VCPUS:MEMORY
# in the order given; a trace takes
# 'domain FILE.xml' lines (relative to the trace). The files are untrusted: a directory, a device, a file
# over 4 MiB, bad XML and a bad constraint are refused with exit 2 and the file named.
#   bash tests/ctl/domains.sh PLACEMENTCTL        TAP; the last line is the plan
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CTL=$(realpath "${1:?usage: domains.sh PLACEMENTCTL}") || exit 1
D=$HERE/domains
HOST="synthetic:pack:2 numa:1(memory=4GiB) core:2 pu:2" # node 0 = CPUs 0-3, node 1 = CPUs 4-7
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"
N=0 PASS=0 FAIL=0
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is not installed"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/placementd-domains.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out ERR=$TMP/err RC=0

run() { "$CTL" "$@" >"$OUT" 2>"$ERR"; RC=$?; }
# json DESC PYTHON: PYTHON (an expression over d, the JSON output, and dec(NAME), its decision) holds
json() {
    local why
    if [ "$RC" -eq 0 ] && why=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def dec(name):
    return [x for x in d["decisions"] if x.get("domain") == name and x["event"] == "start"][-1]
assert eval("(" + sys.argv[2] + ")"), sys.argv[2]
' "$OUT" "$2" 2>&1); then
        ok "$1"
    else
        not_ok "$1"
        diag "rc=$RC" "$why" "$(head -c 800 "$OUT")" "$(cat "$ERR")"
    fi
}
# refused DESC NEEDLE: exit 2 and stderr holds NEEDLE
refused() {
    if [ "$RC" -eq 2 ] && grep -qF -- "$2" "$ERR"; then ok "$1"; else not_ok "$1"; diag "rc=$RC" "$(cat "$ERR")"; fi
}

run plan --topology="$HOST" --json --domain="$D/cpuset.xml"
json "<vcpu cpuset='4-7'>: node 1, every pin inside 4-7, the reason says so" \
    'dec("cpuset")["nodes"] == [1] and all(p in ("4-5", "6-7") for p in dec("cpuset")["vcpu_pins"]) and
     "kept inside <vcpu cpuset='"'"'4-7'"'"'>" in dec("cpuset")["reason"] and dec("cpuset")["vcpus"] == 2 and
     dec("cpuset")["memory"] == 1 << 30'

run plan --topology="$HOST" --json --domain="$D/numatune.xml"
json "<numatune><memory mode='strict' nodeset='1'>: cores on node 1, the binding kept" \
    'dec("numatune")["nodes"] == [1] and dec("numatune")["memory_nodes"] == "1" and
     "its <numatune><memory> binds its memory to node 1 (strict)" in dec("numatune")["reason"]'

run plan --topology="$HOST" --json --domain="$D/compat.xml" --domain="$D/bogus-policy.xml" one:1:1G
json "<placementd:domain policy='compat'> is placed under compat, as the daemon places it; the others explicit" \
    'dec("compat")["policy"] == "compat" and dec("one")["policy"] == "explicit" and dec("bogus")["policy"] == "explicit"'
if grep -qF "bogus: unknown policy 'bogus' in its metadata" "$ERR"; then ok "an unknown policy in the metadata is said"; else not_ok "an unknown policy in the metadata is said"; diag "$(cat "$ERR")"; fi
# a policy its owner wrote with terminal escapes and a newline: said escaped, no line forged
run plan --topology="$HOST" --domain="$D/escape-policy.xml"
if [ "$RC" -eq 0 ] && ! grep -q $'\x1b' "$ERR" && grep -qF "unknown policy '\x1b]0;owned\x07\x1b[2J\x0astart y: placed'" "$ERR" &&
    [ "$(wc -l <"$ERR")" -eq 1 ]; then
    ok "an unknown policy with escapes is said escaped, on one line"
else
    not_ok "an unknown policy with escapes is said escaped, on one line"
    diag "rc=$RC" "$(od -c "$ERR" | head -n 5)"
fi

run plan --topology="$HOST" --json first:1:1G --domain="$D/skip-bound.xml" next:1:2G
json "a skipped domain whose vCPUs float still holds the memory its <numatune> binds: node 1 has 1 GiB left" \
    '"its memory is counted where its definition binds it" in dec("skip-bound")["reason"] and
     dec("first")["nodes"] == [0] and dec("next")["nodes"] == [0]'

run plan --topology="$HOST" --json --domain="$D/pinned-threads.xml"
json "<emulatorpin> and <iothreadpin iothread='2'> stand, and draw the guest to their node; I/O thread 1 is pinned beside the vCPU" \
    'dec("pinned-threads")["emulator_pin"] == "" and dec("pinned-threads")["iothreads"] == "1" and
     dec("pinned-threads")["nodes"] == [1] and dec("pinned-threads")["vcpu_pins"] == ["4-5"] and
     dec("pinned-threads")["iothread_pin"] == "5" and
     "near the CPUs its definition pins QEMU'"'"'s threads to (node 1)" in dec("pinned-threads")["reason"] and
     "<cputune><emulatorpin>" in dec("pinned-threads")["reason"] and
     "I/O thread 2 stays where <cputune><iothreadpin> puts it" in dec("pinned-threads")["reason"]'

run plan --topology="$HOST" --json --domain="$D/iothreads.xml"
json "<iothreads>2</iothreads>: both I/O threads go where the emulator goes" \
    'dec("iothreads")["iothreads"] == "1-2" and dec("iothreads")["iothread_pin"] == dec("iothreads")["emulator_pin"] != ""'

run plan --topology="$HOST" --json --domain="$D/cells.xml"
json "guest cells 0,2 and 1,3: each cell's vCPUs on one node, as the daemon places them" \
    '[(c["id"], c["vcpus"], c["nodes"]) for c in dec("cells")["cells"]] == [(0, "0,2", [0]), (1, "1,3", [1])] and
     all(dec("cells")["vcpu_pins"][v] in (("0-1", "2-3") if v % 2 == 0 else ("4-5", "6-7")) for v in range(4))'

run plan --topology="$HOST" --json --domain="$D/hugepages.xml"
json "<hugepages/> on a host without pools: unplaceable, never counted in general memory" \
    'dec("hugepages")["result"] == "unplaceable" and dec("hugepages")["hugepage_size"] == 2 << 20 and
     "hugepage-backed memory never takes general memory" in dec("hugepages")["reason"]'

run plan --topology="$HOST" --json --domain="$D/auto.xml" --domain="$D/skip.xml" web:4:1G
json "placement='auto' and skip='yes' are skipped and hold nothing: web still gets all 4 cores" \
    'dec("auto")["result"] == "skipped" and "placement='"'"'auto'"'"'" in dec("auto")["reason"] and
     dec("skip")["result"] == "skipped" and "skip='"'"'yes'"'"'" in dec("skip")["reason"] and
     dec("web")["result"] == "placed"'

run plan --topology="$HOST" --json --domain="$D/vcpupin.xml" web:2:512M
json "<vcpupin> is skipped, but its CPUs and memory are held: web goes to node 1, not onto them" \
    'dec("vcpupin")["result"] == "skipped" and "counted as they run" in dec("vcpupin")["reason"] and
     dec("web")["result"] == "placed" and dec("web")["nodes"] == [1]'

run plan --topology="$HOST" --json --domain="$D/vcpupin-unplugged.xml"
json "a <vcpupin> only of a vCPU not plugged in pins nothing that runs: its 2 online vCPUs are placed, as the daemon places them" \
    'dec("vcpupin-unplugged")["result"] == "placed" and len(dec("vcpupin-unplugged")["vcpu_pins"]) == 2 and
     "counted as they run" not in dec("vcpupin-unplugged")["reason"]'

run plan --topology="$HOST" --json --domain="$D/vcpupin.xml" --domain="$D/auto.xml" web:2:512M
json "a skipped decision has every key a placed one has, as the daemon's list --json: its held pins, or none" \
    'all(set(dec("web")) - {"candidates"} <= set(dec(n)) for n in ("vcpupin", "auto")) and
     dec("vcpupin")["vcpu_pins"] == ["0", "2"] and dec("vcpupin")["nodes"] == [0] and
     dec("vcpupin")["memory_nodes"] == "0" and dec("vcpupin")["held_cpus"] == "1,3" and
     dec("vcpupin")["result"] == "skipped" and dec("auto")["vcpu_pins"] == [] and dec("auto")["nodes"] == [] and
     dec("auto")["policy"] == "" and dec("auto")["result"] == "skipped"'

run plan --topology="$HOST" --json --domain="$D/vcpupin-hugepages.xml" web:2:512M
json "<vcpupin> with hugepages bound to a node without a pool: skipped, its pin held, the others planned" \
    'dec("vcpupin-hugepages")["result"] == "skipped" and dec("web")["result"] == "placed" and
     dec("web")["nodes"] == [0]'

run plan --topology="$HOST" --json --domain="$D/strict-beyond.xml" --domain="$D/memnode-preferred.xml"
json "a strict binding beyond its node is said; preferred <memnode> cells fall back, nothing said" \
    '"node 1 has 4.0 GiB free for the 6.0 GiB bound there: the guest cannot get all its memory" in
     dec("strict-beyond")["reason"] and "cannot get all" not in dec("memnode-preferred")["reason"]'

run plan --topology="$HOST" --json web:1:512M --domain="$D/cpuset.xml" db:1:512M --domain "$D/iothreads.xml"
json "--domain repeats and mixes with NAME:VCPUS:MEMORY, placed in the order given" \
    '[x["domain"] for x in d["decisions"]] == ["web", "cpuset", "db", "iothreads"]'

run plan --topology="$HOST" --domain="$D/cpuset.xml" --domain="$D/auto.xml"
if [ "$RC" -eq 0 ] && grep -q '^start cpuset (2 vCPUs, 1.0 GiB): placed on node 1' "$OUT" &&
    grep -q '^start auto (2 vCPUs, 512.0 MiB): skipped' "$OUT" && grep -q '^legend:' "$OUT"; then
    ok "text: decisions, the skipped one and the map"
else
    not_ok "text: decisions, the skipped one and the map"
    diag "$(cat "$OUT" "$ERR")"
fi

run plan --topology="$HOST" --json --trace="$D/workload.trace"
json "trace: 'domain FILE.xml' lines beside the trace, stopped by name, the skipped one too" \
    '[(x["event"], x["domain"]) for x in d["decisions"]] == [("start", "cpuset"), ("start", "web"),
     ("start", "auto"), ("stop", "auto"), ("stop", "cpuset"), ("start", "cpuset")] and
     dec("cpuset")["nodes"] == [1]'

printf 'domain %s\nstop vcpupin\nstart web 4 1G\n' "$D/vcpupin.xml" >"$TMP/pinned.trace"
run plan --topology="$HOST" --json --trace="$TMP/pinned.trace"
json "trace: stopping a skipped domain gives back the pins and memory it held: web gets all 4 cores" \
    'dec("vcpupin")["result"] == "skipped" and dec("web")["result"] == "placed" and
     all(c["domains"] in ([], ["web"]) for c in d["map"]["cpus"]) and
     sum(n["memory_reserved"] for n in d["map"]["nodes"]) == 1 << 30'

run explain --topology="$HOST" --json --domain="$D/cpuset.xml"
json "explain --topology --domain: the candidates, node 0 left out by the cpuset" \
    'len(dec("cpuset")["candidates"]) > 0 and all(0 not in c["nodes"] for c in dec("cpuset")["candidates"])'
run explain --topology="$HOST" --domain="$D/cpuset.xml"
if [ "$RC" -eq 0 ] && grep -q '^candidate node sets' "$OUT" && grep -q '^outcome: node 1' "$OUT"; then
    ok "explain text: candidates and outcome"
else
    not_ok "explain text: candidates and outcome"
    diag "$(cat "$OUT" "$ERR")"
fi

# untrusted files
run plan --topology="$HOST" --domain="$D"
refused "a directory is refused, named" "$D: "
run plan --topology="$HOST" --domain=/dev/zero
refused "a device is refused without reading it" "/dev/zero: a character device, not a regular file"
head -c $((4 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$TMP/big.xml"
run plan --topology="$HOST" --domain="$TMP/big.xml"
refused "a file over 4 MiB is refused" "larger than the limit of 4 MiB"
printf '<domain><name>x</name><vcpu>1</vcpu>' >"$TMP/cut.xml"
run plan --topology="$HOST" --domain="$TMP/cut.xml"
refused "XML cut short is refused" "$TMP/cut.xml: invalid domain XML"
run plan --topology="$HOST" --domain="$D/bad-cpuset.xml"
refused "a bad <vcpu cpuset> is refused, the element named" "invalid <vcpu cpuset='0-x'>"
# what libvirt refuses to define ("Memory size must be specified", "maximum vCPU count must not be less
# than current vCPU count") is refused, not planned with 0 bytes or fewer vCPUs
printf "<domain type='kvm'><name>x</name><vcpu>2</vcpu></domain>" >"$TMP/no-memory.xml"
run plan --topology="$HOST" --domain="$TMP/no-memory.xml"
refused "a definition without memory is refused" "$TMP/no-memory.xml: no memory"
printf "<domain type='kvm'><name>x</name><memory unit='GiB'>0</memory><vcpu>2</vcpu></domain>" >"$TMP/zero.xml"
run plan --topology="$HOST" --domain="$TMP/zero.xml"
refused "<memory> of 0 is refused" "$TMP/zero.xml: no memory"
printf "<domain type='kvm'><name>x</name><memory unit='GiB'>1</memory><vcpu current='4'>2</vcpu></domain>" \
    >"$TMP/current.xml"
run plan --topology="$HOST" --domain="$TMP/current.xml"
refused "<vcpu current> above the maximum is refused" "$TMP/current.xml: <vcpu current=...> is above"
run plan --topology="$HOST" --domain="$TMP/none.xml"
refused "a missing file is refused" "$TMP/none.xml: "
printf 'domain %s\n' "$TMP/cut.xml" >"$TMP/t.trace"
run plan --topology="$HOST" --trace="$TMP/t.trace"
refused "a bad file in a trace names the trace line" "t.trace:1: $TMP/cut.xml: invalid domain XML"
run plan --topology="$HOST" --domain="$D/cpuset.xml" --domain="$D/cpuset.xml"
refused "the same domain twice is already running" "start cpuset: already running"
# a cell the user binds to a high-bandwidth node (KNL flat, MCDRAM node 1) is there by its <memnode>, not
# by a MemoryTiers= rule
run plan --json --topology="$HERE/../topologies/knl-snc4-flat.xml" --domain="$D/cell-on-hbm.xml"
json "a cell bound to an MCDRAM node by <memnode>: counted there, not called a MemoryTiers= tier" \
    'dec("cell-on-hbm")["result"] == "placed" and "MemoryTiers" not in dec("cell-on-hbm")["reason"] and
     any(c["nodes"] == [1] for c in dec("cell-on-hbm")["cells"])'
# a cell without vCPUs, interleaved over two nodes by its <memnode>: bound there, not "split"
run plan --json --topology="synthetic:pack:1 numa:4(memory=16GiB) l3:1 core:4 pu:2" --domain="$D/cell-memory-only.xml"
json "a vCPU-less cell interleaved by its <memnode> is on its nodes, not called split" \
    '"1 (no vCPUs) with its memory on nodes 2-3" in dec("cell-memory-only")["reason"] and "split" not in dec("cell-memory-only")["reason"]'
printf 'start a 1 1G\nstart a 1 1G\n' >"$TMP/twice.trace"
run plan --topology="$HOST" --trace="$TMP/twice.trace"
refused "a domain started twice in a trace: FILE:LINE, as simulate says it" "twice.trace:2: start a: already running"
# a <cachetune> that keeps the vCPUs off the node its <numatune> binds: the reason names the caches, not a
# <vcpu cpuset> it does not have
run plan --json --topology="$HERE/../topologies/cache-ids.xml" --domain="$D/cachetune-remote.xml"
json "memory bound where no reserved cache's CPU lies: the reason names the <cachetune>" \
    '"no CPU under the caches its <cachetune>/<memorytune> reserve lies there" in dec("cachetune-remote")["reason"]
     and "<vcpu cpuset>" not in dec("cachetune-remote")["reason"]'
# guest cells whose vCPUs' <cachetune> keeps them under the caches of a node stay there: the guest's
# sockets (cells 0-1 one, 2-3 the other) do not move them off the caches reserved for them
run plan --json --topology="$HERE/../topologies/cache-ids.xml" --domain="$D/cachetune-cells.xml"
json "guest cells stay under the caches their <cachetune> reserves, whatever the guest's sockets ask" \
    'dec("cachetune-cells")["vcpu_pins"] == ["0-1", "2-3", "16-17", "18-19", "4-5", "6-7", "20-21", "22-23"]
     and [c["nodes"] for c in dec("cachetune-cells")["cells"]] == [[0], [1], [0], [1]]
     and "not kept under the caches" not in dec("cachetune-cells")["reason"]'
# a refused list prints no decision, not those before the bad one (text and JSON alike): nothing, or with
# <emulatorsched scheduler='fifo'> on one node of two cores without SMT: the vCPU on CPU 0, the FIFO
# emulator on CPU 1, which the ledger holds for it (web shares CPU 0 rather than take it). Every view says
# CPU 1 is fifo-emulator's: held_cpus, the text, the map as data and as text, the SVG's colours.
NOSMT="synthetic:pack:1 numa:1(memory=4GiB) core:2 pu:1"
run plan --topology="$NOSMT" --json --domain="$D/fifo-emulator.xml" web:1:512M
json "a FIFO emulator's core is held, and shown held in the JSON and the map as data" \
    'dec("fifo-emulator")["emulator_pin"] == "1" and dec("fifo-emulator")["held_cpus"] == "1" and
     dec("web")["vcpu_pins"] == ["0"] and
     [(c["state"], c["domains"]) for c in d["map"]["cpus"]] == [("shared", ["fifo-emulator", "web"]),
                                                              ("domain", ["fifo-emulator"])]'
run plan --topology="$NOSMT" --domain="$D/fifo-emulator.xml" web:1:512M --svg="$TMP/fifo.svg"
if [ "$RC" -eq 0 ] && grep -qx '  held for its emulator and I/O threads: 1' "$OUT" &&
    grep -qx '    cpu    0 \[+\]\[A\]' "$OUT" && python3 "$HERE/svg-colours.py" "$TMP/fifo.svg" >"$TMP/fifo.colours" &&
    [ "$(sed -n 's/^pu 1 //p' "$TMP/fifo.colours")" = "$(sed -n 's/^box fifo-emulator //p' "$TMP/fifo.colours")" ]; then
    ok "the text, the text map and the SVG show the FIFO emulator's CPU 1 as fifo-emulator's"
else
    not_ok "the text, the text map and the SVG show the FIFO emulator's CPU 1 as fifo-emulator's"
    diag "rc=$RC" "$(cat "$OUT" "$ERR" "$TMP/fifo.colours" 2>/dev/null)"
fi

# a NIC on node 5, outside the nodes the export's guests may use (0, 1, 6): the nearest node with usable
# CPUs by the distance matrix (node 6, 50 away; nodes 0-1 are 65), and the reason names both
run plan --topology="$HERE/../topologies/uv-pci-disallowed.xml" --json --domain="$D/hostdev-cpuless.xml"
json "<hostdev> on a node without usable CPU: node 6, the nearest with some, the reason says so" \
    'dec("hostdev-cpuless")["nodes"] == [6] and
     "near its PCI devices (node 6, the nearest with usable CPUs to node 5 they sit on)" in dec("hostdev-cpuless")["reason"]'

# the cgroup allows nodes 0, 1, 6 and 7: nodes 6 and 7 are both 50 from node 5, the device is local to both
sed -e '4s/allowed_nodeset="0x00000043"/allowed_nodeset="0x000000c3"/' \
    -e '4s/allowed_cpuset="0x0000300f"/allowed_cpuset="0x0000f00f"/' \
    "$HERE/../topologies/uv-pci-disallowed.xml" >"$TMP/uv-67.xml"
run plan --topology="$TMP/uv-67.xml" --json --domain="$D/hostdev-cpuless.xml"
json "<hostdev> on a node without usable CPU, two nodes as near: one of them, the reason names both" \
    'dec("hostdev-cpuless")["nodes"] in ([6], [7]) and
     "near its PCI devices (local to nodes 6-7, the nearest with usable CPUs to node 5 they sit on; the set has " in dec("hostdev-cpuless")["reason"]'

for form in "" --json; do
    run plan $form --topology="$HOST" a:1:1G b:1:1G a:1:1G
    refused "a name given twice${form:+ ($form)} is refused before any decision" "argument 3: start a: already running"
    if { [ -z "$form" ] && [ ! -s "$OUT" ]; } || { [ -n "$form" ] && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d == {"error": "placementctl plan: argument 3: start a: already running", "exit_code": 2}, d' "$OUT"; }; then
        ok "no decision printed for the refused list${form:+ ($form: the error alone)}"; else
        not_ok "no decision printed for the refused list${form:+ ($form: the error alone)}"; diag "$(head -c 400 "$OUT")"; fi
done
run plan --topology="$HOST" --trace="$D/workload.trace" --domain="$D/cpuset.xml"
refused "--trace and --domain together are a usage error" "not both"

echo "1..$N"
[ "$FAIL" -eq 0 ]
