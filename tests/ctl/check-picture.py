#!/usr/bin/python3
"""check-picture.py COLOURS DECISIONS_JSON RESERVED_OS...
COLOURS is svg-colours.py's output for a host map drawn by placementctl --svg; DECISIONS_JSON is the
same state as placementctl --json prints it (a "decisions" array with domain, vcpus, vcpu_pins).
Checks that every placed domain has a legend box of its own colour, that exactly as many PUs as it has
vCPUs carry that colour and all of them are among its pins, that the reserved PUs (given by OS index)
carry the colour of the "reserved for the host" box, and that every other PU is white. Prints each
problem; exits 1 when there is one."""
import json
import sys

WHITE = "rgb(255,255,255)"


def cpus(text):
    out = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def main(colours_path, json_path, reserved):
    pus, boxes, problems = {}, {}, []
    for line in open(colours_path):
        kind, _, rest = line.rstrip("\n").partition(" ")
        if kind == "pu":
            os_index, fill = rest.split(" ")
            pus[int(os_index)] = fill
        elif kind == "box":
            name, _, fill = rest.rpartition(" ")
            boxes[name] = fill
    decisions = [d for d in json.load(open(json_path))["decisions"] if d.get("vcpu_pins")]
    if not decisions:
        problems.append("no placed domain to look for")
    fills = [boxes.get(d["domain"]) for d in decisions]
    if len(set(fills)) != len(fills) or WHITE in fills:
        problems.append("domains do not have distinct colours: %s" % fills)
    explained = set(reserved)
    for d in decisions:
        fill = boxes.get(d["domain"])
        if fill is None:
            problems.append("no legend box names %s" % d["domain"])
            continue
        mine = {pu for pu, f in pus.items() if f == fill}
        pins = set().union(*(cpus(p) for p in d["vcpu_pins"]))
        if len(mine) != d["vcpus"] or not mine <= pins:
            problems.append("%s: PUs %s in its colour %s, expected %d of its pins %s"
                            % (d["domain"], sorted(mine), fill, d["vcpus"], sorted(pins)))
        explained |= mine
    for pu in reserved:
        if pus.get(pu) != boxes.get("reserved for the host", "none"):
            problems.append("reserved PU %d is %s, not the reserved box's %s"
                            % (pu, pus.get(pu), boxes.get("reserved for the host")))
    for pu, fill in sorted(pus.items()):
        if pu not in explained and fill != WHITE:
            problems.append("free PU %d is %s, not white" % (pu, fill))
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], [int(a) for a in sys.argv[3:]])
