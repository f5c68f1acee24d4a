#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Maps CPU numbers between two hwloc XML exports of one host shape numbered two ways.

The n-th PU of one file (in document order, which is hwloc's logical order) is the n-th PU of the other.
  renumber.py cpuset FROM.xml TO.xml LIST          LIST (a cpuset list such as 0-3,8) in TO's numbers
  renumber.py compare FROM.xml TO.xml A.json B.json
      `placementctl plan --json` on FROM (A) and on TO (B): every CPU list of A (values and lists in its
      text alike), put in TO's numbers, and every other value must equal B's; prints each difference, exits 1 when there is one.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

# the keys whose values are CPU lists in placementctl's JSON
CPU_KEYS = {"vcpu_pins", "emulator_pin", "iothread_pin", "cpus", "cpuset", "held_cpus", "core_cpus"}


def pus(path):
    return [int(o.get("os_index")) for o in ET.parse(path).iter("object") if o.get("type") == "PU"]


def parse(text):
    out = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def fmt(cpus):
    cpus, res, i = sorted(cpus), [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        res.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(res)


def mapping(src, dst):
    a, b = pus(src), pus(dst)
    if len(a) != len(b):
        sys.exit(f"renumber.py: {src} has {len(a)} PUs, {dst} {len(b)}")
    return dict(zip(a, b))


# CPU lists inside text: "CPUs 0-3", "CPU 5", "cpuset='0-7'"
CPU_TEXT = re.compile(r"(\bCPUs? |cpuset=')([0-9][0-9,-]*[0-9]|[0-9])")


def remap(value, key, m):
    if isinstance(value, dict):
        return {k: remap(v, k, m) for k, v in value.items()}
    if isinstance(value, list):
        return [remap(v, key, m) for v in value]
    if isinstance(value, int) and key == "cpu":
        return m[value]
    if isinstance(value, str) and key in CPU_KEYS and re.fullmatch(r"[0-9,-]*", value):
        return fmt(m[c] for c in parse(value))
    if isinstance(value, str):
        return CPU_TEXT.sub(lambda x: x.group(1) + fmt(m[c] for c in parse(x.group(2))), value)
    return value


def differences(a, b, where=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from differences(a.get(k), b.get(k), f"{where}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{where}[{i}]")
    elif a != b:
        yield f"{where}: {json.dumps(a)} renumbered, {json.dumps(b)} on the other host"


def main(argv):
    if len(argv) == 5 and argv[1] == "cpuset":
        print(fmt(mapping(argv[2], argv[3])[c] for c in parse(argv[4])))
        return 0
    if len(argv) == 6 and argv[1] == "compare":
        m = mapping(argv[2], argv[3])
        with open(argv[4]) as fa, open(argv[5]) as fb:
            a, b = remap(json.load(fa), None, m), json.load(fb)
        diff = list(differences(a, b))
        print("\n".join(diff[:20]))
        return 1 if diff else 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
