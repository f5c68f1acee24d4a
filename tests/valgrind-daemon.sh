#!/bin/bash
# The daemon releases what it allocates on its one way out: the demo run (libvirt's test driver, no bus,
# no metrics) under valgrind, then every block still allocated at exit (lost or reachable) whose
# allocation was made by daemon/ code is a failure. Memory libvirt and GLib keep for the process (their
# type and class registries, the test driver) is theirs, not the daemon's, and is not counted.
#   tests/valgrind-daemon.sh [BUILDDIR]     (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

command -v valgrind >/dev/null || { echo "valgrind-daemon: valgrind not installed, skipped"; exit 77; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT

valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=all --num-callers=40 --log-file="$log" \
        "$build/daemon/placementd" --config=conf/placementd.conf --log-level=warning --bus=none \
        --connect="test://$PWD/docs/examples/test-host.xml" \
        --topology="synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:2 pu:2" \
        --demo=docs/examples/workload.trace >/dev/null

# A loss record's allocation site is its first frame with a source line; the daemon's own are daemon/*.c.
python3 - "$log" daemon/*.c <<'PY'
import os, re, sys

log, sources = sys.argv[1], {os.path.basename(p) for p in sys.argv[2:]}
held = []
for record in re.split(r"\n==\d+== \n", open(log).read()):
    if not re.search(r"in loss record \d+ of \d+", record):
        continue
    for fn, where in re.findall(r"(?:at|by) 0x[0-9A-F]+: (\S+) \(([^()]*\.c):\d+\)", record):
        if where in sources:
            held.append(f"{fn} ({where}): {record.splitlines()[0].split('== ', 1)[-1]}")
        break
for h in held:
    print(f"valgrind-daemon: still allocated at exit, by {h}")
if held:
    sys.exit(1)
print("valgrind-daemon: nothing the daemon allocated is left at exit")
PY
