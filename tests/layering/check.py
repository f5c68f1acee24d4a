#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compiles one source with the exact flags the build gives a layer's own file, and checks the outcome.

    check.py BUILDDIR LAYERFILE SOURCE ok              SOURCE must compile
    check.py BUILDDIR LAYERFILE SOURCE fail PATTERN    it must not, with PATTERN in the message

LAYERFILE is a source of the layer (e.g. policies/policy.c): its command is taken from meson's
compile_commands.json, so the check follows whatever include path meson.build gives that layer.
Exits 77 (skip) when the build has no compile_commands.json.
"""
import json
import os
import re
import shlex
import subprocess
import sys

DROP_WITH_VALUE = {"-o", "-MQ", "-MF", "-MT", "-c"}


def layer_command(builddir, layerfile):
    path = os.path.join(builddir, "compile_commands.json")
    if not os.path.exists(path):
        sys.exit(77)
    with open(path) as f:
        entries = json.load(f)
    for e in entries:
        if os.path.normpath(os.path.join(e["directory"], e["file"])).endswith(os.sep + layerfile):
            return e["directory"], shlex.split(e["command"])
    print(f"layering: {layerfile} is not compiled by this build", file=sys.stderr)
    sys.exit(1)


def syntax_only(argv, source):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in DROP_WITH_VALUE:
            skip = True
        elif a not in ("-MD", "-MMD"):
            out.append(a)
    return out + ["-fdiagnostics-color=never", "-fsyntax-only", source]


def main():
    builddir, layerfile, source, want = sys.argv[1:5]
    pattern = sys.argv[5] if len(sys.argv) > 5 else None
    directory, argv = layer_command(builddir, layerfile)
    r = subprocess.run(syntax_only(argv, os.path.abspath(source)), cwd=directory, capture_output=True, text=True)
    if want == "ok":
        if r.returncode != 0:
            print(f"layering: {source} should compile with the flags of {layerfile}:\n{r.stderr}", file=sys.stderr)
            return 1
        return 0
    if r.returncode == 0:
        print(f"layering: {source} compiled with the flags of {layerfile}: the layering rule is not enforced",
              file=sys.stderr)
        return 1
    hit = [line for line in r.stderr.splitlines() if re.search(re.escape(pattern), line)]
    if not hit:
        print(f'layering: {source} failed, but not with "{pattern}":\n{r.stderr}', file=sys.stderr)
        return 1
    print(f"layering: {source} refused: {hit[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
