#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Promises of docs/algorithm.md held against `placementctl plan|explain --json --topology=` on seeded random
small hosts (synthetic strings, or lstopo's XML of one edited for a distance matrix, memory per node,
2 MiB hugepage pools and disallowed CPUs; ReservedCPUs=, MemoryReserve=, Fit=, both policies) and random
traces of starts and stops, some of libvirt domain XML (<vcpu cpuset>, guest cells, hugepages, strict
<numatune>, <emulatorpin>, <vcpupin>, sizes that are not whole pages). Per decision: explain's equals
plan's and the same input gives the same output; explicit pins each vCPU of a placed domain to a free core
of its own (the allowed threads of it), its emulator off other domains' vCPUs, and places (not
overcommits) while the host has a free core per vCPU and the memory; unplaceable exactly when the memory is
short; an overcommitted domain leaves no free core it may use and puts its vCPUs on the least loaded cores
of its set; its shared_vcpus is what its pins show; the chosen set is as near (max, then mean distance) as
the nearest qualifying one by a brute force over node subsets, one node when one holds it, and Fit= picks
inside the group as section 3 says; candidates' distances are the SLIT's (10/11/20 without one); pins stay
inside <vcpu cpuset>, memory inside a strict nodeset, no emulator pin beside <emulatorpin>; guest cells
whole unless the reason says split. Per trace: no node holds more than it has, the pools hold what the
hugepage guests take, stopping everything leaves the empty host's map, a start and stop inserted anywhere
changes no other decision, compat shares no less than explicit, and Fit= changes neither the first
decision's result nor its group.
  plan-props.py PLACEMENTCTL [--seed S] [--cases N] [--keep DIR]     exit 1 naming each failing seed
"""
import argparse
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

PCTL = None
EVENTS = 10
GiB = 1 << 30
MiB = 1 << 20


def parse_list(s):
    out = set()
    if not s:
        return out
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return out


def fmt_list(xs):
    xs = sorted(xs)
    out, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else "%d-%d" % (xs[i], xs[j]))
        i = j + 1
    return ",".join(out)


class Host:
    """What the generator knows of the host it made."""

    def __init__(self, rng, feats):
        self.npack = rng.choice([1, 1, 2])
        self.npn = rng.choice([1, 2]) if self.npack == 2 else rng.choice([1, 2, 3, 4])
        self.nodes = self.npack * self.npn
        self.cores = rng.choice([1, 2, 3, 4])
        self.pus = rng.choice([1, 2, 2])
        self.mem_gib = rng.choice([1, 2, 4, 8])
        self.xml = "xml" in feats and rng.random() < 0.6
        n = self.nodes
        self.mem = [self.mem_gib * GiB] * n
        self.pools = [0] * n  # 2 MiB pages per node
        self.dist = None
        self.disallowed = set()
        if self.xml:
            if rng.random() < 0.5:
                self.mem = [rng.choice([1, 2, 4, 8]) * GiB for _ in range(n)]
            if "huge" in feats and rng.random() < 0.5:
                self.pools = [rng.choice([0, 256, 512, 1024]) for _ in range(n)]
                for i in range(n):
                    while self.pools[i] * 2 * MiB >= self.mem[i]:
                        self.pools[i] //= 2
            if n > 1 and rng.random() < 0.8:
                d = [[10] * n for _ in range(n)]
                for i in range(n):
                    for j in range(i + 1, n):
                        same = i // self.npn == j // self.npn
                        v = rng.choice([11, 12, 16, 20]) if same else rng.choice([16, 20, 21, 22, 32])
                        d[i][j] = d[j][i] = v
                self.dist = d
            if "disallow" in feats and rng.random() < 0.3:
                npu = n * self.cores * self.pus
                self.disallowed = {p for p in range(npu) if rng.random() < 0.15}
                if len(self.disallowed) >= npu:
                    self.disallowed = set()
        if self.dist is None:
            # docs/algorithm.md section 1: 10 local, 11 inside a package, 20 across
            self.dist = [[10 if i == j else (11 if i // self.npn == j // self.npn else 20)
                          for j in range(n)] for i in range(n)]
        # PU numbering of a synthetic host: node-major, core-major
        self.pu_node = {}
        self.pu_core = {}
        k = 0
        for nd in range(n):
            for c in range(self.cores):
                for t in range(self.pus):
                    self.pu_node[k] = nd
                    self.pu_core[k] = nd * self.cores + c
                    k += 1
        self.npu = k

    def synth(self):
        pack = "pack:%d " % self.npack if self.npack > 1 else ""
        return "%snuma:%d(memory=%dGiB) core:%d pu:%d" % (pack, self.npn, self.mem_gib, self.cores,
                                                          self.pus)

    def source(self, d):
        if not self.xml:
            return "synthetic:" + self.synth()
        x = subprocess.run(["lstopo", "-i", self.synth(), "--of", "xml", "-"], check=True,
                           capture_output=True, text=True).stdout
        idx = [0]

        def node(m):
            i = int(m.group(2))
            s = m.group(0)
            s = re.sub(r'local_memory="\d+"', 'local_memory="%d"' % self.mem[i], s)
            s = re.sub(r'<page_type size="4096" count="\d+"/>',
                       '<page_type size="4096" count="%d"/>' % ((self.mem[i] - self.pools[i] * 2 * MiB) // 4096)
                       + ('\n        <page_type size="2097152" count="%d"/>' % self.pools[i]
                          if self.pools[i] else ""), s)
            return s

        x = re.sub(r'(<object type="NUMANode" os_index="(\d+)"[^>]*>.*?</object>)', node, x, flags=re.S)
        if self.disallowed:
            mask = 0
            for p in range(self.npu):
                if p not in self.disallowed:
                    mask |= 1 << p
            x = re.sub(r'(<object type="Machine"[^>]*?allowed_cpuset=")0x[0-9a-f]+', r'\g<1>0x%08x' % mask, x,
                       count=1)
        n = self.nodes
        if n > 1:
            vals = [v for row in self.dist for v in row]
            dx = ('  <distances2 type="NUMANode" nbobjs="%d" kind="5" name="NUMALatency" indexing="os">\n'
                  '    <indexes length="%d">%s </indexes>\n'
                  '    <u64values length="%d">%s </u64values>\n  </distances2>\n') % (
                n, 2 * n, " ".join(str(i) for i in range(n)), 3 * len(vals), " ".join(map(str, vals)))
            x = x.replace("  <support", dx + "  <support", 1)
        path = os.path.join(d, "host.xml")
        with open(path, "w") as f:
            f.write(x)
        return path


def gen_domain_xml(rng, host, name, vcpus, mem, feats):
    """A libvirt domain with some constraints; returns (xml, constraints dict)."""
    c = {}
    cpuset_attr = ""
    allowed_pus = [p for p in range(host.npu) if p not in host.disallowed]
    if "cpuset" in feats and rng.random() < 0.4 and allowed_pus:
        k = rng.randint(1, len(allowed_pus))
        cs = set(rng.sample(allowed_pus, k))
        c["cpuset"] = cs
        cpuset_attr = " cpuset='%s'" % fmt_list(cs)
    parts = ["<domain type='kvm'>", "  <name>%s</name>" % name,
             "  <memory unit='KiB'>%d</memory>" % (mem // 1024),
             "  <vcpu placement='static'%s>%d</vcpu>" % (cpuset_attr, vcpus)]
    if "cells" in feats and vcpus >= 2 and rng.random() < 0.4:
        ncell = rng.choice([2, 2, 3]) if vcpus >= 3 else 2
        ncell = min(ncell, vcpus)
        cuts = sorted(rng.sample(range(1, vcpus), ncell - 1))
        bounds = [0] + cuts + [vcpus]
        cmem = mem // ncell // MiB * MiB
        parts.append("  <cpu><numa>")
        cells = []
        for i in range(ncell):
            m = cmem if i < ncell - 1 else mem - cmem * (ncell - 1)
            parts.append("    <cell id='%d' cpus='%d-%d' memory='%d' unit='KiB'/>" % (
                i, bounds[i], bounds[i + 1] - 1, m // 1024))
            cells.append((bounds[i], bounds[i + 1] - 1))
        parts.append("  </numa></cpu>")
        c["cells"] = cells
    if "huge" in feats and any(host.pools) and rng.random() < 0.3:
        parts.append("  <memoryBacking><hugepages><page size='2048' unit='KiB'/></hugepages></memoryBacking>")
        c["huge"] = True
    if "numatune" in feats and host.nodes > 1 and rng.random() < 0.3:
        ns = set(rng.sample(range(host.nodes), rng.randint(1, host.nodes)))
        c["nodeset"] = ns
        parts.append("  <numatune><memory mode='strict' nodeset='%s'/></numatune>" % fmt_list(ns))
    if "vcpupin" in feats and rng.random() < 0.15 and allowed_pus:
        pool = sorted(c.get("cpuset", set(allowed_pus))) or allowed_pus
        pins = [rng.choice(pool) for _ in range(vcpus)]
        c["vcpupin"] = pins
        parts.append("  <cputune>" + "".join("<vcpupin vcpu='%d' cpuset='%d'/>" % (i, p) for i, p in
                                             enumerate(pins)) + "</cputune>")
    elif "emupin" in feats and rng.random() < 0.2:
        pool = sorted(c.get("cpuset", set(allowed_pus))) or allowed_pus
        e = rng.choice(pool)
        c["emupin"] = {e}
        parts.append("  <cputune><emulatorpin cpuset='%d'/></cputune>" % e)
    parts.append("</domain>")
    return "\n".join(parts) + "\n", c


class Case:
    def __init__(self, seed, feats):
        rng = random.Random(seed)
        self.seed = seed
        self.feats = feats
        self.host = h = Host(rng, feats)
        self.reserved = set()
        if "reserved" in feats and rng.random() < 0.3:
            self.reserved = {rng.randrange(h.npu) for _ in range(rng.randint(1, 2))}
        self.fit = rng.choice(["spread", "pack"]) if "fit" in feats else "spread"
        self.mreserve = rng.choice([0, 0, 256 * MiB, 1 * GiB]) if "mreserve" in feats else 0
        self.policy = "compat" if "compat" in feats and rng.random() < 0.25 else "explicit"
        totcores = h.nodes * h.cores
        self.events = []  # ("start", name, vcpus, mem, xml|None, constraints) / ("stop", name)
        active = []
        n = rng.randint(1, EVENTS)
        for i in range(n):
            if active and rng.random() < 0.25:
                nm = rng.choice(active)
                active.remove(nm)
                self.events.append(("stop", nm))
                continue
            nm = "d%d" % i
            v = rng.randint(1, max(1, totcores + (2 if rng.random() < 0.3 else 0)))
            v = min(v, rng.choice([v, rng.randint(1, 4)]))
            m = rng.choice([256, 512, 1024, 1536, 2048, 4096]) * MiB
            xml, c = None, {}
            if rng.random() < 0.5 and ("xmldom" in feats):
                if "odd" in feats and rng.random() < 0.3:
                    m += rng.choice([1, 3]) * MiB
                xml, c = gen_domain_xml(rng, h, nm, v, m, feats)
            self.events.append(("start", nm, v, m, xml, c))
            active.append(nm)

    def write(self, d, events=None, policy=None, fit=None):
        events = self.events if events is None else events
        src = self.host.source(d)
        conf = os.path.join(d, "p.conf")
        with open(conf, "w") as f:
            f.write("[Placement]\n")
            if self.reserved:
                f.write("ReservedCPUs=%s\n" % fmt_list(self.reserved))
            f.write("Fit=%s\n" % (fit or self.fit))
            if self.mreserve:
                f.write("MemoryReserve=%dM\n" % (self.mreserve // MiB))
        lines = []
        for e in events:
            if e[0] == "stop":
                lines.append("stop %s" % e[1])
            elif e[4]:
                fn = "%s.xml" % e[1]
                with open(os.path.join(d, fn), "w") as f:
                    f.write(e[4])
                lines.append("domain %s" % fn)
            else:
                lines.append("start %s %d %dM" % (e[1], e[2], e[3] // MiB))
        tr = os.path.join(d, "t.trace")
        with open(tr, "w") as f:
            f.write("\n".join(lines) + "\n")
        return ["--topology=" + src, "--config=" + conf, "--policy=" + (policy or self.policy),
                "--trace=" + tr]


def run(cmd, args):
    p = subprocess.run([PCTL, cmd, "--json"] + args, capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


class Fail(Exception):
    pass


STATS = {}


def stat(k):
    STATS[k] = STATS.get(k, 0) + 1


def key_of(dist, s):
    s = sorted(s)
    mx = max(dist[i][j] for i in s for j in s)
    mean = sum(dist[i][j] for i in s for j in s) / (len(s) ** 2)
    return mx, mean


def check_case(case, d):
    h = case.host
    args = case.write(d)
    rc, out, err = run("explain", args)
    if rc not in (0, 1):
        raise Fail("explain exit %d: %s" % (rc, err.strip()))
    rc2, out2, err2 = run("explain", args)
    if (rc, out) != (rc2, out2):
        raise Fail("determinism: explain differs between two runs")
    ex = json.loads(out)
    prc, pout, perr = run("plan", args)
    pl = json.loads(pout)
    ed = ex["decisions"]
    pd = pl["decisions"]
    if len(ed) != len(pd):
        raise Fail("explain and plan give %d and %d decisions" % (len(ed), len(pd)))
    usable = set(range(h.npu)) - h.disallowed
    core_pus = {}
    for p in usable:
        core_pus.setdefault(h.pu_core[p], set()).add(p)
    core_node = {c: h.pu_node[min(ps)] for c, ps in core_pus.items()}
    # section 1: a core with a disallowed thread is never a whole free core, unless every core of its
    # node has one
    part = {c for c in core_pus if len(core_pus[c]) < h.pus}
    whole_node = {n for n in range(h.nodes) if any(core_node[c] == n and c not in part for c in core_pus)}
    partial_bad = {c for c in part if core_node[c] in whole_node}
    case.bound_seen = False
    active = {}  # name -> dict(pins=[set], held=set, mem)
    evs = [e for e in case.events]
    for i, (x, y) in enumerate(zip(ed, pd)):
        e = evs[i]
        if x["event"] == "stop":
            active.pop(x["domain"], None)
            continue
        xc = {k: v for k, v in x.items() if k != "candidates"}
        if xc != y:
            raise Fail("event %d (%s): explain's decision differs from plan's:\n%s\n%s" % (i, x["domain"], xc, y))
        cons = e[5] if len(e) > 5 else {}
        name, v, mem = e[1], e[2], e[3]
        for c in x.get("candidates", []):
            if "across" in x["reason"] or not c["nodes"] or max(c["nodes"]) >= h.nodes:
                continue
            mx, mean = key_of(h.dist, c["nodes"])
            if "ranked toward" not in x["reason"] and (c["max_distance"] != mx or
                                                        abs(c["mean_distance"] - mean) > 0.006):
                raise Fail("event %d (%s): candidate %s says max %s mean %s, the SLIT gives %s %.3f" % (
                    i, e[1], c["nodes"], c["max_distance"], c["mean_distance"], mx, mean))
        # state before
        busy_pu = {}
        for nm, a in active.items():
            for ps in a["pins"]:
                for p in ps:
                    busy_pu.setdefault(p, set()).add(nm)
        held = set()
        for a in active.values():
            held |= a["held"]
        reserved = case.reserved & usable
        allowed = cons.get("cpuset", usable) & usable
        # a core is free when no PU carries a vCPU and none is reserved (section 3); held by others too
        free_cores = {c for c, ps in core_pus.items()
                      if not (ps & set(busy_pu)) and not (ps & reserved) and not (ps & held)
                      and c not in partial_bad}
        pins = [parse_list(s) for s in x.get("vcpu_pins", [])]
        res = x["result"]
        stat("decision " + res + (" constrained" if cons else ""))
        x_held = parse_list(x.get("held_cpus", ""))
        if res in ("placed", "overcommitted"):
            if len(pins) != v:
                raise Fail("event %d (%s): %d pins for %d vCPUs" % (i, name, len(pins), v))
            for ps in pins:
                if not ps or not ps <= usable:
                    raise Fail("event %d (%s): pin %s outside usable CPUs" % (i, name, fmt_list(ps)))
                if "cpuset" in cons and not ps <= cons["cpuset"]:
                    raise Fail("event %d (%s): pin %s outside <vcpu cpuset=%s>" % (
                        i, name, fmt_list(ps), fmt_list(cons["cpuset"])))
            emu = parse_list(x.get("emulator_pin", ""))
            if "cpuset" in cons and "emupin" not in cons and emu and not emu <= cons["cpuset"]:
                raise Fail("event %d (%s): emulator pin %s outside <vcpu cpuset=%s>" % (
                    i, name, fmt_list(emu), fmt_list(cons["cpuset"])))
            if "emupin" in cons and emu:
                raise Fail("event %d (%s): emulator pin %s despite <emulatorpin>" % (i, name, fmt_list(emu)))
            if "nodeset" in cons:
                mn = parse_list(x.get("memory_nodes", ""))
                if not mn <= cons["nodeset"]:
                    raise Fail("event %d (%s): memory nodes %s outside strict nodeset %s" % (
                        i, name, fmt_list(mn), fmt_list(cons["nodeset"])))
            if case.policy == "explicit":
                pin_cores = [{h.pu_core[p] for p in ps} for ps in pins]
                # the emulator never goes onto another domain's vCPU thread while placed (section 4)
                if res == "placed" and emu & set(busy_pu):
                    raise Fail("event %d (%s): emulator pin %s on CPUs %s of other domains' vCPUs" % (
                        i, name, fmt_list(emu), fmt_list(emu & set(busy_pu))))
                # VCPUPin=core: a vCPU pinned to the usable, allowed threads of its core
                for ps, pc in zip(pins, pin_cores):
                    if len(pc) == 1:
                        c0 = next(iter(pc))
                        want = core_pus[c0] & allowed
                        if ps != want and not (ps < want):
                            raise Fail("event %d (%s): pin %s, its core's allowed threads %s" % (
                                i, name, fmt_list(ps), fmt_list(want)))
                # shared_vcpus counts the vCPUs on a core with another vCPU (its own or another's)
                if not cons.get("emupin") and not x_held:
                    cnt = {}
                    for pc in pin_cores:
                        for c0 in pc:
                            cnt[c0] = cnt.get(c0, 0) + 1
                    other = {h.pu_core[p] for p in busy_pu}
                    mine = sum(1 for pc in pin_cores if any(cnt[c0] > 1 or c0 in other for c0 in pc))
                    if mine != x.get("shared_vcpus", 0) and res in ("placed", "overcommitted"):
                        raise Fail("event %d (%s): shared_vcpus %d, the pins show %d" % (
                            i, name, x.get("shared_vcpus", 0), mine))
                if res == "placed":
                    if x.get("shared_vcpus", 0):
                        raise Fail("event %d (%s): placed with shared_vcpus %d" % (i, name, x["shared_vcpus"]))
                    seen = set()
                    for pc in pin_cores:
                        if len(pc) != 1 or pc & seen or not pc <= free_cores:
                            # with emulatorpin the domain's own held core counts free for it
                            if not (pc - free_cores) <= {h.pu_core[p] for p in cons.get("emupin", set())}:
                                raise Fail("event %d (%s): placed but vCPU on core(s) %s not a free core of its "
                                           "own (free before: %s)" % (i, name, sorted(pc), sorted(free_cores)))
                        seen |= pc
                # light load: host has a free allowed core per vCPU and the memory -> placed
                afc = {c for c in free_cores if core_pus[c] & allowed}
                only_cpuset = set(cons) <= {"cpuset"}
                if only_cpuset and not any(h.pools) and not any(a["bound"] for a in active.values()):
                    freemem = sum(max(0, m - case.mreserve) for m in h.mem) - sum(a["mem"] for a in active.values())
                    if not cons and (res == "unplaceable") != (freemem < mem) and v <= 4096:
                        raise Fail("event %d (%s): %s with %d bytes free on the host for %d" % (
                            i, name, res, freemem, mem))
                    if len(afc) >= v and freemem >= mem and res != "placed" and v <= 4096:
                        raise Fail("event %d (%s): %s although the host has %d free cores for %d vCPUs and "
                                   "memory" % (i, name, res, len(afc), v))
                    if res == "overcommitted":
                        used = set()
                        for pc in pin_cores:
                            used |= pc
                        left = afc - used
                        if left and x.get("shared_vcpus", 0):
                            raise Fail("event %d (%s): %d vCPUs share a core while free cores %s stay free" % (
                                i, name, x["shared_vcpus"], sorted(left)))
                        # section 5: each vCPU goes to the least loaded core of the set
                        if not cons and not reserved and not held:
                            after = {}
                            for a in list(active.values()) + [{"pins": pins}]:
                                for ps in a["pins"]:
                                    for c0 in {h.pu_core[p] for p in ps}:
                                        after[c0] = after.get(c0, 0) + 1
                            stat("least-loaded check")
                            setc = [c0 for c0 in core_pus if core_node[c0] in set(x["nodes"])]
                            lo = min(after.get(c0, 0) for c0 in setc)
                            hi = max(after.get(c0, 0) for pc in pin_cores for c0 in pc)
                            if hi - 1 > lo:
                                raise Fail("event %d (%s): a vCPU on a core of %d vCPUs while a core of its set "
                                           "has %d" % (i, name, hi, lo))
                # one node when one node holds it (unconstrained, no hugepages)
                if res == "placed" and not cons and not any(h.pools) and \
                        not any(a["bound"] for a in active.values()):
                    check_sets(case, i, x, v, mem, active, free_cores, core_node)
            for cell in x.get("cells", []) or []:
                if len(cell["nodes"]) != 1 and "split" not in x["reason"]:
                    raise Fail("event %d (%s): guest cell %d on nodes %s, the reason says no split: %s" % (
                        i, name, cell["id"], cell["nodes"], x["reason"]))
                cpus_of = set()
                for vid in parse_list(cell["vcpus"]):
                    cpus_of |= pins[vid]
                if res == "placed" and not {h.pu_node[p] for p in cpus_of} <= set(cell["nodes"]):
                    raise Fail("event %d (%s): guest cell %d's vCPUs run on nodes %s, its nodes %s" % (
                        i, name, cell["id"], sorted({h.pu_node[p] for p in cpus_of}), cell["nodes"]))
            chosen_c = [c for c in x.get("candidates", []) if c.get("chosen")]
            if res == "placed" and chosen_c and not set(x["nodes"]) <= set(chosen_c[0]["nodes"]):
                raise Fail("event %d (%s): explain's chosen set %s is not plan's nodes %s" % (
                    i, name, chosen_c[0]["nodes"], x["nodes"]))
            active[name] = {"pins": pins, "held": x_held, "mem": mem, "bound": bool(cons),
                            "huge": bool(cons.get("huge"))}
        elif res == "skipped":
            # its own pins and memory are held (man placementctl), until it stops
            # a pin over every usable CPU floats: counted on no CPU (docs/running.md)
            active[name] = {"pins": [ps for ps in (parse_list(p) for p in x.get("vcpu_pins", []))
                                     if not usable <= ps], "held": x_held,
                            "mem": mem, "bound": True, "huge": bool(cons.get("huge"))}
        else:
            if not cons and not any(h.pools) and not any(a["bound"] for a in active.values()) and v <= 4096:
                freemem = sum(max(0, m - case.mreserve) for m in h.mem) - sum(a["mem"] for a in active.values())
                if freemem >= mem and any(ps - reserved for ps in core_pus.values()):
                    raise Fail("event %d (%s): unplaceable with %d bytes free on the host for %d" % (
                        i, name, freemem, mem))
            # an unplaceable domain with constraints still runs: its memory is counted (docs/running.md)
            active[name] = {"pins": [], "held": set(), "mem": mem if cons else 0, "bound": bool(cons),
                            "huge": bool(cons.get("huge")) and bool(cons.get("cpuset") or cons.get("nodeset"))}
    # the final map: memory never over a node, pools never over
    mp = pl.get("map", {})
    for nd in (mp.get("nodes", []) if not any(e[5] for e in evs if e[0] == "start") else []):
        if nd.get("memory") is not None and nd.get("memory_reserved", 0) > max(0, nd["memory"] - case.mreserve):
            raise Fail("map: node %d holds %d of %d bytes" % (nd["node"], nd["memory_reserved"], nd["memory"]))
    hps = mp.get("hugepages", []) or []
    if hps and not any(e[5].get("nodeset") or e[5].get("cpuset") for e in evs if e[0] == "start"):
        held_pages = sum(hp["pages"] * hp["page_size"] - hp["free_bytes"] for hp in hps)
        want = sum(a["mem"] for nm, a in active.items() if a.get("huge"))
        # a guest pinned by its definition runs as it is, with more pages than the pools placementd
        # knows (one resized since it started); the pools then count full, not past it
        want = min(want, sum(hp["pages"] * hp["page_size"] for hp in hps))
        if held_pages != want:
            raise Fail("map: pools hold %d bytes, the running hugepage domains %d" % (held_pages, want))
    for hp in hps:
        if hp.get("free", 0) < 0 or hp.get("free", 0) > hp.get("total", hp.get("free", 0)):
            raise Fail("map: hugepages %s" % hp)
    return pl, ex


def idle_node(h, s, fc, fm, mem):
    useful = {n for n in s if fc[n] > 0}
    m = sum(fm[n] for n in useful)
    while useful and m < mem:
        best, bd = None, None
        for n in s:
            if n in useful or not fm[n]:
                continue
            for j in s:
                if j in useful and (bd is None or h.dist[j][n] < bd):
                    bd, best = h.dist[j][n], n
        if best is None:
            return False
        useful.add(best)
        m += fm[best]
    return bool(useful) and useful != set(s) and m >= mem


def check_sets(case, i, x, v, mem, active, free_cores, core_node):
    """Brute force over node subsets: the chosen set is as near (max, then mean) as the nearest
    qualifying one, as section 2-3 rank them; a domain that fits one node takes one node."""
    h = case.host
    cands = x.get("candidates", [])
    one = {}
    for c in cands:
        if len(c["nodes"]) == 1:
            one[c["nodes"][0]] = c
    if len(one) != h.nodes:
        return
    fc = {n: sum(1 for c in free_cores if core_node[c] == n) for n in range(h.nodes)}
    for n in range(h.nodes):
        if one[n]["free_cores"] != fc[n]:
            raise Fail("event %d (%s): explain says node %d has %d free cores, the pins before say %d" % (
                i, x["domain"], n, one[n]["free_cores"], fc[n]))
    fm = {n: one[n]["free_memory"] for n in range(h.nodes)}
    # total free memory must match what the earlier domains took
    tot = sum(max(0, m - case.mreserve) for m in h.mem) - sum(a["mem"] for a in active.values())
    if None not in fm.values() and sum(fm.values()) != tot:
        raise Fail("event %d (%s): free memory over nodes %d, expected %d" % (i, x["domain"], sum(fm.values()), tot))
    stat("brute-force set check")
    quals = []
    for r in range(1, h.nodes + 1):
        for s in itertools.combinations(range(h.nodes), r):
            if sum(fc[n] for n in s) >= v and sum(fm[n] for n in s) >= mem:
                # section 3: a node that would take nothing (no free core, and the nodes with one, with
                # the nearest of the others that have memory, hold the memory: set_has_idle_node())
                if len(s) > 1 and idle_node(h, s, fc, fm, mem):
                    continue
                quals.append((key_of(h.dist, s), s))
    chosen = tuple(sorted(x["nodes"]))
    if "of which it takes" in x["reason"]:
        chosen = tuple(sorted(next(c["nodes"] for c in cands if c.get("chosen"))))
        if not set(x["nodes"]) <= set(chosen):
            raise Fail("event %d (%s): nodes %s outside the chosen set %s" % (i, x["domain"], x["nodes"], chosen))
    if not quals:
        raise Fail("event %d (%s): placed but no subset qualifies by my count" % (i, x["domain"]))
    best = min(k for k, s in quals)
    ck = key_of(h.dist, chosen)
    if any(len(s) == 1 for k, s in quals) and len(chosen) != 1:
        raise Fail("event %d (%s): one node holds it but it spans nodes %s" % (i, x["domain"], list(chosen)))
    if ck[0] != best[0] or abs(ck[1] - best[1]) > 0.001:
        # section 3's narrowing of an uneven split takes fewer nodes of a farther key; flag others
        if "fewer nodes than" not in x["reason"] and "takes no part" not in x["reason"]:
            raise Fail("event %d (%s): chosen nodes %s key %s, nearest qualifying key %s (%s)" % (
                i, x["domain"], list(chosen), ck, best, [s for k, s in quals if k == best]))
    else:
        # Fit inside the group: spread most free cores, pack fewest (section 3), unless L3/emulator rules
        grp = [s for k, s in quals if k[0] == best[0] and abs(k[1] - best[1]) <= 0.001]
        cores = lambda s: sum(fc[n] for n in s)
        mask = lambda s: sum(1 << n for n in s)  # enumeration order (lib/core/nodesets.c)
        memf = lambda s: sum(fm[n] for n in s)
        if case.fit == "spread":
            want = min(grp, key=lambda s: (-cores(s), -memf(s), len(s), mask(s)))
        else:
            want = min(grp, key=lambda s: (cores(s), memf(s), len(s), mask(s)))
        if want != chosen and "takes no part" not in x["reason"]:
            raise Fail("event %d (%s): Fit=%s should take %s of group %s, took %s (free cores %s, mem %s)" % (
                i, x["domain"], case.fit, list(want), grp, list(chosen), fc, fm))


def check_stop_gives_back(case, d, pl):
    """Each start that is later stopped: the trace without it (start and stop) gives the same later
    decisions when it stopped right after starting; and starting then stopping everything leaves the
    map as the empty host's."""
    starts = [e for e in case.events if e[0] == "start"]
    # all started then all stopped: empty map
    evs = list(case.events)
    act = []
    for e in evs:
        if e[0] == "start":
            act.append(e[1])
        else:
            act.remove(e[1])
    evs2 = evs + [("stop", nm) for nm in act]
    a = case.write(d, evs2)
    rc, out, err = run("plan", a)
    m1 = json.loads(out)["map"]
    a0 = case.write(d, [])
    rc, out0, err = run("plan", a0)
    m0 = json.loads(out0)["map"]
    if m1 != m0:
        raise Fail("stop all: map differs from the empty host's")
    # insert start X / stop X at a random point: the rest must be unchanged
    rng = random.Random(case.seed * 7 + 1)
    if not starts:
        return
    src = rng.choice(starts)
    xml = src[4].replace("<name>%s</name>" % src[1], "<name>zz</name>") if src[4] else None
    ins = ("start", "zz", src[2], src[3], xml, src[5])
    pos = rng.randint(0, len(evs))
    evs3 = evs[:pos] + [ins, ("stop", "zz")] + evs[pos:]
    a = case.write(d, evs3)
    rc, out3, err = run("plan", a)
    a = case.write(d, evs)
    rc, outb, err = run("plan", a)
    p3 = [x for x in json.loads(out3)["decisions"] if x["domain"] != "zz"]
    pb = json.loads(outb)["decisions"]
    strip = lambda x: {k: v for k, v in x.items() if k != "reason"}
    for a_, b_ in zip(p3, pb):
        if strip(a_) != strip(b_):
            raise Fail("start+stop of zz (%d vCPUs) at %d changed %s:\n%s\n%s" % (ins[2], pos, b_["domain"],
                                                                                 strip(a_), strip(b_)))
    if json.loads(out3)["map"] != json.loads(outb)["map"]:
        raise Fail("start+stop of zz changed the final map")


def check_fit(case, d):
    other = "pack" if case.fit == "spread" else "spread"
    outs = []
    for f in (case.fit, other):
        rc, out, err = run("explain", case.write(d, fit=f))
        outs.append(json.loads(out)["decisions"][0])
    a, b = outs
    if a["event"] != "start":
        return
    ka = [(c["max_distance"], round(c["mean_distance"], 3)) for c in a.get("candidates", []) if c.get("chosen")]
    kb = [(c["max_distance"], round(c["mean_distance"], 3)) for c in b.get("candidates", []) if c.get("chosen")]
    if a["result"] != b["result"] or \
            (a["policy"] == "explicit" and a.get("shared_vcpus") != b.get("shared_vcpus")) or \
            (a["result"] == "placed" and ka != kb and "fewer nodes" not in a["reason"] + b["reason"]):
        raise Fail("Fit changes the first decision's group or result: %s %s %s / %s %s %s" % (
            case.fit, a["result"], ka, other, b["result"], kb))


def check_compat(case, d):
    if case.policy != "explicit":
        return
    a = case.write(d, policy="compat")
    rc, out, err = run("plan", a)
    c = json.loads(out)["decisions"]
    a = case.write(d)
    rc, out, err = run("plan", a)
    e = json.loads(out)["decisions"]
    for x, y in zip(e, c):
        if x["event"] != "start":
            continue
        # only the first start: later ones see different hosts
        if x.get("shared_vcpus", 0) > y.get("shared_vcpus", 0) and x["result"] == "placed":
            raise Fail("compat shares fewer than explicit on %s" % x["domain"])
        break


ALL = ["vcpupin", "mreserve", "odd", "xml", "huge", "disallow", "reserved", "fit", "compat", "xmldom", "cells", "cpuset", "numatune",
       "emupin"]


def one(seed, feats, keep=None):
    case = Case(seed, feats)
    with tempfile.TemporaryDirectory() as d:
        try:
            pl, ex = check_case(case, d)
            check_stop_gives_back(case, d, pl)
            check_compat(case, d)
            check_fit(case, d)
            return None, case
        except Fail as err:
            if keep:
                kd = os.path.join(keep, "seed%d" % seed)
                os.makedirs(kd, exist_ok=True)
                a = case.write(kd)
                with open(os.path.join(kd, "cmd"), "w") as f:
                    f.write("placementctl explain " + " ".join("'%s'" % x for x in a) + "\n")
            return str(err), case


def main():
    global PCTL
    ap = argparse.ArgumentParser()
    ap.add_argument("placementctl")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--feats", default=",".join(ALL))
    ap.add_argument("--keep")
    a = ap.parse_args()
    PCTL = a.placementctl
    feats = set(a.feats.split(",")) if a.feats else set()
    if not shutil.which("lstopo"):
        feats.discard("xml")  # the XML hosts are lstopo's export of a synthetic one
    fails = 0
    for s in range(a.seed, a.seed + a.cases):
        msg, case = one(s, feats, a.keep)
        if msg:
            fails += 1
            print("seed %d: %s" % (s, msg))
    print("%d cases, %d failed" % (a.cases, fails))
    print(" ".join("%s=%d" % kv for kv in sorted(STATS.items())))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
