#!/usr/bin/python3
"""Reads an SVG drawn by lstopo --of nativesvg and prints, one per line:
  pu OS_INDEX FILL        every PU box (OS index from its "P#N" label) and its fill colour
  box NAME FILL           every Misc box (placementctl's legend entries) and its fill colour
  legend TEXT             every free text line (lstopo's legend)
Exits 1 when the file is not such an SVG."""
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main(path):
    root = ET.parse(path).getroot()
    if root.tag != NS + "svg":
        sys.exit("not an SVG: " + root.tag)
    by_id = {e.get("id"): e for e in root.iter() if e.get("id")}
    for e in root.iter(NS + "rect"):
        m = re.fullmatch(r"(PU|Misc)_(\d+)_rect", e.get("id", ""))
        if not m:
            continue
        kind, n = m.groups()
        fill = e.get("fill", "").replace(" ", "")
        if kind == "PU":
            label = by_id.get("PU_%s_text_1" % n)
            os_index = re.fullmatch(r"P#(\d+)", label.text.strip()).group(1) if label is not None else "?"
            print("pu", os_index, fill)
        else:
            print("box", by_id["Misc_%s_text" % n].text, fill)
    for e in root.iter(NS + "text"):
        if e.get("id", "").startswith("anon_text"):
            print("legend", e.text)


if __name__ == "__main__":
    main(sys.argv[1])
