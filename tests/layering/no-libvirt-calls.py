#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon holds libvirt's handles but calls libvirt only through the adapters (lib/host/virt-*.c):
fails, naming file and line, when one of the given sources calls a libvirt function (vir...( outside
comments and string literals)."""
import re
import sys

CALL = re.compile(r"\bvir[A-Z]\w*\s*\(")


def code_only(text):
    # comments and string/char literals become spaces, newlines kept (line numbers stay right)
    pattern = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def main(paths):
    found = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = code_only(f.read()).split("\n")
        for number, line in enumerate(lines, 1):
            for call in CALL.finditer(line):
                print(f"{path}:{number}: calls {call.group(0).rstrip('( ')} itself, not through an adapter")
                found += 1
    if not paths:
        print("no sources given")
        return 2
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
