#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Promises of docs/simulate.md held by `placementctl simulate --json` on seeded random small hosts and traces.
With Heal=no and LoadInterval=0 the placement is the plan's: the vCPU pins, emulator pin and nodes of each
start are taken from `placementctl plan --trace --json` on the same trace, and every figure is worked out
again from the definitions of docs/simulate.md, weighted by time (one second after each event in a trace
without ticks): vCPUs on a shared core, busy vCPUs (busy >= 0.5) on a core with another busy vCPU or a PU
the host-side load (spread evenly over the emulator pin, or the vCPUs' PUs without one) keeps half busy, the
capacity lost (max(1, min(b, PUs, 2) x (1 - L)) delivered by b >= 2 busy threads, host-side load pro rata)
for any --sibling-loss, the bound (busy threads and divisible host-side load on the cheapest cores; the
fewest contending; those paired where it loses least), the vCPU-to-memory distance (memory split by the
vCPUs on each node as the engine charges it), the largest fit (2 GiB a vCPU on free cores and free memory of
any set of nodes; with floating vCPUs only against explicit, below, as the engine counts their cores), the
counts, and no moves; floating vCPUs (VCPUPin=nodeset) as sim/occupancy.h runs them, on the CPUs of their
pin. Per case also: the largest fit is what explicit places (that many vCPUs at 2 GiB
each placed, one more not; under explicit), the same input gives the same bytes, and with healing and load
on (the defaults) Heal=no, Apply=no and HealMaxMoves=0 move nothing and MemoryBinding=yes moves no memory.
  simulate-props.py PLACEMENTCTL [--seed S] [--cases N] [--keep DIR]     exit 1 naming each failing seed
"""
import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

GiB = 1 << 30
HOSTS = [  # (synthetic string, GiB a node)
    ("pack:1 numa:1(memory=4GiB) core:2 pu:2", 4),
    ("pack:1 numa:2(memory=4GiB) core:2 pu:2", 4),
    ("pack:2 numa:1(memory=4GiB) core:2 pu:2", 4),
    ("pack:1 numa:1(memory=8GiB) core:3 pu:1", 8),
    ("pack:2 numa:1(memory=6GiB) core:2 pu:1", 6),
    ("pack:1 numa:1(memory=8GiB) core:2 pu:4", 8),
]
FIGURES = ("shared_vcpu_fraction", "busy_contended_fraction", "capacity_lost", "mean_memory_distance",
           "largest_fit_min", "largest_fit_mean", "bound_capacity_lost", "bound_busy_contended_fraction",
           "bound_paired_contended_fraction", "vcpus_mean", "busy_vcpus_mean", "seconds", "moves",
           "memory_moved_bytes", "host_thread_moves", "starts", "stops", "overcommitted", "unplaceable")
CTL = None


def ctl(args):
    p = subprocess.run([CTL] + args, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("placementctl %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def cpulist(s):
    out = []
    for part in filter(None, (s or "").split(",")):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def core_lost(b, npus, loss):
    return 0.0 if b < 2 else b - max(1.0, min(b, npus, 2) * (1 - loss))


def lost_with_host(b, host, npus, loss):
    whole = math.floor(host)
    lower = core_lost(b + whole, npus, loss)
    return lower + (host - whole) * (core_lost(b + whole + 1, npus, loss) - lower)


def bound(npus, busy, host, loss):
    """Least loss of busy threads and divisible host load on the cores: the cheapest layers first; the fewest
    contending; the busy threads paired where the busy threads alone lose least (spread on ties)."""
    amount = busy + max(host, 0.0)
    layers = sorted(core_lost(k + 1, n, loss) - core_lost(k, n, loss)
                    for n in npus for k in range(int(math.ceil(amount)) + 1))
    lost, left = 0.0, amount
    for cost in layers:
        if left <= 1e-12:
            break
        lost += min(1.0, left) * cost
        left -= min(1.0, left)
    count = [0] * len(npus)
    for _ in range(busy):
        c = min(range(len(npus)), key=lambda c: (round(core_lost(count[c] + 1, npus[c], loss) -
                                                       core_lost(count[c], npus[c], loss), 9), count[c], c))
        count[c] += 1
    return lost, (0 if busy <= len(npus) else busy - len(npus) + 1), sum(n for n in count if n >= 2)


class Host:
    def __init__(self, topo, plan_map):
        self.dist = topo["distances"]
        self.node_mem = [n["memory"] for n in topo["node_list"]]
        cpus = {c["cpu"]: c for c in plan_map["cpus"]}
        self.cpu_node = {k: v["node"] for k, v in cpus.items()}
        self.cores = sorted({tuple(cpulist(c["core_cpus"])) for c in cpus.values()})
        self.core_of = {pu: i for i, cc in enumerate(self.cores) for pu in cc}
        self.npus = [len(cc) for cc in self.cores]


def expected(h, lines, decisions, loss, conf):
    """The figures of docs/simulate.md for this trace, placed as the plan's decisions say."""
    floating = conf.get("VCPUPin") == "nodeset"
    reserve = conf.get("reserve", 0)
    nnodes = len(h.node_mem)
    starts = iter(d for d in decisions if d["event"] == "start")
    running, unknown = [], set()
    T = dict.fromkeys(("t", "vcpus", "shared", "busy", "cont", "lost", "dsum", "dvcpus", "fit", "blost",
                       "bcont", "bpaired"), 0.0)
    n = dict(starts=0, stops=0, overcommitted=0, unplaceable=0, fit_min=None)

    def split(d, dec):
        """The memory per node: by the vCPUs on the plan's nodes within each node's room, then nearest."""
        used = [0] * nnodes
        for o in running:
            for node, b in o.get("split", {}).items():
                used[node] += b
        room = [max(0, h.node_mem[i] - used[i] - reserve) for i in range(nnodes)]
        on = [0] * nnodes
        for pin in d["pins"]:
            on[h.cpu_node[pin[0]]] += 1
        sp, charged = {}, 0
        for node in dec["nodes"]:
            share = min(d["memory"] * on[node] // len(d["pins"]), room[node], d["memory"] - charged)
            sp[node] = share
            charged += share
        far = {node: sum(on[m] * h.dist[m][node] for m in range(nnodes)) for node in dec["nodes"]}
        for node in sorted(dec["nodes"], key=lambda x: far[x]):
            take = max(0, min(room[node] - sp[node], d["memory"] - charged))
            sp[node] += take
            charged += take
        if charged < d["memory"] or (floating and len(dec["nodes"]) > 1):
            unknown.add("memory")  # spilled beyond the plan's nodes, or split by PUs no plan shows
        return sp

    def state():
        placed = [d for d in running if d["result"] != "unplaceable"]
        core_v, core_b = [0] * len(h.cores), [0] * len(h.cores)
        pu_load = dict.fromkeys(h.core_of, 0)
        for d in placed:  # where each vCPU runs: its pin, or as sim/occupancy.h floats it
            d["pos"] = []
            for pin in d["pins"]:
                if floating:  # the least loaded core of its nodes its pin holds a PU of, a whole one first
                    c = min((c for c in range(len(h.cores))
                             if h.cpu_node[h.cores[c][0]] in d["nodes"] and set(h.cores[c]) & set(pin)),
                            key=lambda c: (core_v[c], not set(h.cores[c]) <= set(pin), c))
                    pu = min(set(h.cores[c]) & set(pin), key=lambda p: (pu_load[p], p))
                    pu_load[pu] += 1
                else:
                    pu = pin[0]
                d["pos"].append(pu)
                core_v[h.core_of[pu]] += 1
                core_b[h.core_of[pu]] += d["busy"] >= 0.5
        pu_host = dict.fromkeys(h.core_of, 0.0)
        host_load = 0.0
        for d in placed:
            if d["host"] > 0:
                spread = d["emulator"] or (d["pos"] if floating or all(len(p) == 1 for p in d["pins"]) else None)
                if spread is None:
                    unknown.add("host")  # a core pin's PU is the engine's choice, not in the plan
                    continue
                for pu in spread:
                    pu_host[pu] += d["host"] / len(spread)
                host_load += d["host"]
        core_h, core_hb = [0.0] * len(h.cores), [0] * len(h.cores)
        for pu, load in pu_host.items():
            core_h[h.core_of[pu]] += load
            core_hb[h.core_of[pu]] += load >= 0.5
        f = dict.fromkeys(("vcpus", "shared", "busy", "cont", "dsum", "dvcpus"), 0.0)
        for d in placed:
            busy = d["busy"] >= 0.5
            total = sum(d["split"].values())
            for pu in d["pos"]:
                c = h.core_of[pu]
                f["vcpus"] += 1
                f["shared"] += core_v[c] >= 2
                f["busy"] += busy
                f["cont"] += busy and core_b[c] + core_hb[c] >= 2
                if total:
                    f["dsum"] += sum(b / total * h.dist[h.cpu_node[pu]][m] for m, b in d["split"].items())
                    f["dvcpus"] += 1
        f["lost"] = sum(lost_with_host(core_b[c], core_h[c], h.npus[c], loss) for c in range(len(h.cores)))
        used, free_cores = [0] * nnodes, [0] * nnodes
        for d in placed:
            for node, b in d["split"].items():
                used[node] += b
        for c, cc in enumerate(h.cores):
            free_cores[h.cpu_node[cc[0]]] += core_v[c] == 0 and not any(p in conf.get("reserved", ()) for p in cc)
        f["fit"] = max([0] + [min(sum(free_cores[i] for i in range(nnodes) if m >> i & 1),
                                  sum(max(0, h.node_mem[i] - used[i] - reserve) for i in range(nnodes)
                                      if m >> i & 1) // (2 * GiB)) for m in range(1, 1 << nnodes)])
        f["blost"], f["bcont"], f["bpaired"] = bound(h.npus, int(f["busy"]), host_load, loss)
        return f

    def hold(dt):
        f = state()
        T["t"] += dt
        for k in f:
            T[k] += f[k] * dt
        n["fit_min"] = f["fit"] if n["fit_min"] is None else min(n["fit_min"], f["fit"])

    ticks = any(line.startswith("tick") for line in lines)
    for line in lines:
        w = line.split()
        kv = dict(x.split("=") for x in w if "=" in x)
        if w[0] == "start":
            dec = next(starts)
            d = dict(name=w[1], busy=float(kv.get("busy", 1)), host=float(kv.get("host", 0)),
                     result=dec["result"], memory=dec["memory"])
            if d["result"] != "unplaceable":
                d.update(pins=[cpulist(p) for p in dec["vcpu_pins"]], emulator=cpulist(dec.get("emulator_pin")),
                         nodes=dec["nodes"])
                d["split"] = split(d, dec)
            running.append(d)
            n["starts"] += 1
            n[d["result"]] = n.get(d["result"], 0) + 1
        elif w[0] == "stop":
            running[:] = [d for d in running if d["name"] != w[1]]
            n["stops"] += 1
        elif w[0] == "load":
            d = next(d for d in running if d["name"] == w[1])
            d["busy"] = float(kv["busy"])
            d["host"] = float(kv.get("host", d["host"]))
        elif w[0] == "tick":
            hold(float(w[1]))
        if not ticks:
            hold(1.0)

    def ratio(a, b):
        return T[a] / T[b] if T[b] else 0.0
    want = dict(seconds=T["t"], shared_vcpu_fraction=ratio("shared", "vcpus"),
                busy_contended_fraction=ratio("cont", "busy"), capacity_lost=ratio("lost", "t"),
                mean_memory_distance=ratio("dsum", "dvcpus"), largest_fit_min=n["fit_min"] or 0,
                largest_fit_mean=ratio("fit", "t"), bound_capacity_lost=ratio("blost", "t"),
                bound_busy_contended_fraction=ratio("bcont", "busy"),
                bound_paired_contended_fraction=ratio("bpaired", "busy"), vcpus_mean=ratio("vcpus", "t"),
                busy_vcpus_mean=ratio("busy", "t"), moves=0, memory_moved_bytes=0, host_thread_moves=0,
                starts=n["starts"], stops=n["stops"], overcommitted=n.get("overcommitted", 0),
                unplaceable=n.get("unplaceable", 0))
    if "memory" in unknown:
        for k in ("mean_memory_distance", "largest_fit_min", "largest_fit_mean"):
            want.pop(k)
    elif floating:  # the largest fit counts the cores as explicit does, where no plan shows floating vCPUs
        for k in ("largest_fit_min", "largest_fit_mean"):
            want.pop(k)
    if "host" in unknown:
        for k in ("busy_contended_fraction", "capacity_lost", "bound_capacity_lost"):
            want.pop(k)
    return want


def gen_trace(rng, node_gib):
    lines, running, names = [], [], iter("abcdefghijkl")
    ticks = rng.random() < 0.8
    for _ in range(rng.randint(0, 12)):
        r = rng.random()
        if r < 0.4 or not running:
            name = next(names, None)
            if not name:
                break
            words = ["start", name, str(rng.choice([1, 1, 2, 2, 3, 4, 5])),
                     rng.choice(["512M", "1G", "1G", "1536M", "2G", "3G", "%dG" % (node_gib + 1)])]
            if rng.random() < 0.7:
                words.append("busy=" + rng.choice(["0", "0.2", "0.49", "0.5", "0.7", "1"]))
            if rng.random() < 0.4:
                words.append("host=" + rng.choice(["0", "0.25", "0.4", "0.5", "0.6", "1", "1.2", "2.5", "3"]))
            lines.append(" ".join(words))
            running.append(name)
        elif r < 0.6:
            lines.append("stop " + running.pop(rng.randrange(len(running))))
        elif r < 0.8:
            lines.append("load %s busy=%s%s" % (rng.choice(running), rng.choice(["0", "0.3", "0.5", "0.9"]),
                                                 " host=" + rng.choice(["0", "0.3", "0.5", "1.5"])
                                                 if rng.random() < 0.4 else ""))
        if ticks and rng.random() < 0.6:
            lines.append("tick " + rng.choice(["0.5", "1", "2.5", "10", "33", "100"]))
    return lines


def one(seed, keep=None):
    """The failures of one seeded case (an empty list when it holds)."""
    rng = random.Random(seed)
    synth, node_gib = rng.choice(HOSTS)
    src = "synthetic:" + synth
    lines = gen_trace(rng, node_gib)
    policy = rng.choice(["explicit", "explicit", "compat"])
    loss = rng.choice([None, None, "0.25", "0.5", "0.75", "0", "1"])
    conf = {"VCPUPin": rng.choice(["core", "core", "thread", "nodeset"])}
    text = "[Placement]\nHeal=no\nLoadInterval=0\nPolicy=%s\nVCPUPin=%s\nEmulatorPin=%s\nFit=%s\n" % (
        policy, conf["VCPUPin"], rng.choice(["siblings", "siblings", "nodeset", "none"]),
        rng.choice(["spread", "pack"]))
    if rng.random() < 0.2:
        conf["reserved"] = (0,)
        text += "ReservedCPUs=0\n"
    if rng.random() < 0.2:
        conf["reserve"] = GiB
        text += "MemoryReserve=1G\n"
    d = keep or tempfile.mkdtemp(prefix="simulate-props-")
    os.makedirs(d, exist_ok=True)
    trace, config = os.path.join(d, "case.trace"), os.path.join(d, "case.conf")
    with open(trace, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(config, "w") as f:
        f.write(text)
    fails = []
    try:
        base = ["--topology=" + src, "--trace=" + trace]
        plan = json.loads(ctl(["plan", "--json", "--config=" + config] + base))
        args = ["simulate", "--json", "--config=" + config] + base + (["--sibling-loss=" + loss] if loss else [])
        out = ctl(args)
        got = json.loads(out)
        host = Host(json.loads(ctl(["topology", "--json", "--topology=" + src])), plan["map"])
        want = expected(host, lines, plan["decisions"], float(loss or 0.4), conf)
        for k, v in want.items():
            if k not in got or abs(got[k] - v) > 1e-6 * max(1.0, abs(v)):
                fails.append("%s: %r, expected %r" % (k, got.get(k), v))
        fails += ["--json lacks " + k for k in FIGURES if k not in got]
        if ctl(args) != out:
            fails.append("the same input gave other bytes")
        # the largest fit is what explicit places: a final state alone (its one tick) holds the minimum
        events = [line for line in lines if not line.startswith(("tick", "load"))]
        with open(trace, "w") as f:
            f.write("\n".join(events + ["tick 1"]) + "\n")
        fit = json.loads(ctl(["simulate", "--json", "--config=" + config] + base))["largest_fit_min"]
        for vcpus, placed in ((fit, True), (fit + 1, False)):
            if vcpus and policy == "explicit":  # --policy would place the others under explicit too
                with open(trace, "w") as f:
                    f.write("\n".join(events + ["start Z %d %dG" % (vcpus, 2 * vcpus)]) + "\n")
                z = json.loads(ctl(["plan", "--json", "--config=" + config] + base))
                result = z["decisions"][-1]["result"]
                if (result == "placed") != placed:
                    fails.append("largest fit %d, but explicit says %s for %d vCPUs" % (fit, result, vcpus))
        # healing and load on: what turns healing off moves nothing, a binding keeps the memory where it is
        with open(trace, "w") as f:
            f.write("\n".join(lines + ["tick 700"]) + "\n")
        for extra, key in (("", "memory_moved_bytes"), ("Heal=no\n", "moves"), ("Apply=no\n", "moves"),
                           ("HealMaxMoves=0\n", "moves")):
            with open(config, "w") as f:
                f.write("[Placement]\nPolicy=%s\n%s" % (policy, extra))
            r = json.loads(ctl(["simulate", "--json", "--config=" + config] + base))
            if r[key]:
                fails.append("%s: %s %d" % (extra.strip() or "MemoryBinding=yes", key, r[key]))
        with open(trace, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(config, "w") as f:
            f.write(text)
    except (RuntimeError, ValueError, StopIteration) as e:
        fails.append(str(e))
    if not keep:
        shutil.rmtree(d, ignore_errors=True)
    return ["seed %d (%s, %s): %s\n  trace: %s" % (seed, src, policy, f, " | ".join(lines)) for f in fails]


def main():
    global CTL
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("placementctl")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--keep", help="write the host's configuration and trace of each case to DIR/seedS")
    a = ap.parse_args()
    CTL = a.placementctl
    fails = []
    for seed in range(a.seed, a.seed + a.cases):
        fails += one(seed, os.path.join(a.keep, "seed%d" % seed) if a.keep else None)
    print("\n".join(fails) or "%d cases from seed %d: every figure as docs/simulate.md defines it" % (a.cases, a.seed))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
