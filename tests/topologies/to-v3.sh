#!/bin/sh
# Writes the hwloc 2.x XML fixture IN as hwloc 3.0 writes the same host (lstopo of hwloc 3):
# <topology version="3.0">, id="objN" beside each gp_index="N", an OS device's type as 3.0's bits
# (storage 1, memory 2, GPU 4, coprocessor 8, network 16, OpenFabrics 32, DMA 64; a 2.x block device
# named dax* or of subtype CXLMem is memory), a PCI device's class with its prog-if ("0200 [...] 01 00"),
# and the topology's own infos (Backend, SyntheticDescription, ...) after everything else instead of in
# the root object. Usage: sh to-v3.sh IN >OUT
set -eu

sed -E 's/(pci_type="[0-9a-f]{4} \[[0-9a-f]{4}:[0-9a-f]{4}\] \[[0-9a-f]{4}:[0-9a-f]{4}\] [0-9a-f]{2})"/\1 00"/g' "$1" |
        awk '
BEGIN {
        v3["0"] = 1; v3["1"] = 4; v3["2"] = 16; v3["3"] = 32; v3["4"] = 64; v3["5"] = 8
        topo = "^    <info name=\"(Backend|SyntheticDescription|hwlocVersion|ProcessName|OSName|OSRelease|" \
               "OSVersion|HostName|Architecture|LinuxCgroup)\""
}
{ sub(/<topology version="2.0">/, "<topology version=\"3.0\">"); sub(/name="hwlocVersion" value="2[.0-9]*"/, "name=\"hwlocVersion\" value=\"3.0.0\"") }
$0 ~ topo { sub(/^    /, "  "); moved = moved $0 "\n"; next }
/^<\/topology>/ { printf "%s", moved }
{
        # every gp_index="N" gets id="objN"; every osdev_type its 3.0 bits (a line may hold several objects)
        out = ""
        rest = $0
        while (match(rest, / gp_index="[0-9]+"|osdev_type="[0-9]+"/)) {
                tok = substr(rest, RSTART, RLENGTH)
                out = out substr(rest, 1, RSTART - 1)
                if (tok ~ /^ gp_index/) {
                        n = substr(tok, 12, length(tok) - 12)
                        out = out tok " id=\"obj" n "\""
                } else {
                        t = substr(tok, 13, length(tok) - 13)
                        b = v3[t]
                        obj = out # its object: from the last "<object" before it
                        sub(/.*<object /, "", obj)
                        if (t == "0" && (obj ~ /name="dax/ || obj ~ /subtype="CXLMem"/))
                                b = 2
                        out = out "osdev_type=\"" b "\""
                }
                rest = substr(rest, RSTART + RLENGTH)
        }
        $0 = out rest
}
{ print }
'
