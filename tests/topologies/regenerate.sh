#!/bin/sh
# Regenerates the hwloc XML fixtures of tests/test-topology.c (hwloc 2.x: lstopo, hwloc-annotate).
# Run from this directory: sh regenerate.sh
set -eu

synthetic() { lstopo -i "$1" --of xml -f "$2"; }

# name kind n objects... values...: adds a NUMALatency matrix (kind 5 = from OS, means latency).
annotate() {
        in=$1 out=$2 n=$3
        shift 3
        f=$(mktemp)
        { echo name=NUMALatency; echo 5; echo "$n"; for arg in "$@"; do echo "$arg"; done; } >"$f"
        hwloc-annotate "$in" "$out" -- none -- distances "$f"
        rm -f "$f"
}
nodes() { i=0; while [ "$i" -lt "$1" ]; do echo "numa:$i"; i=$((i + 1)); done; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The design's 2 x 16 x 2 host, as XML (must load exactly like the synthetic string).
synthetic "pack:2 numa:1(memory=64GB) l3:1 core:16 pu:2" two-node-smt.xml

# Opteron 6272-like: 8 nodes of 2 cores x 2 threads, with the SLIT of the XenServer planner's tests.
synthetic "pack:4 numa:2(memory=4GB) l3:1 core:2 pu:2" "$tmp/opteron.xml"
# shellcheck disable=SC2046 # nodes prints one argument per node
annotate "$tmp/opteron.xml" opteron-6272.xml 8 $(nodes 8) \
        10 16 16 22 16 22 16 22  16 10 22 16 16 22 22 16  16 22 10 16 16 16 16 16  22 16 16 10 16 16 22 22 \
        16 16 16 16 10 16 16 22  22 22 16 16 16 10 22 16  16 22 16 22 16 22 10 16  22 16 16 22 22 16 16 10

# Two nodes of one single-thread core, with broken matrices.
synthetic "pack:2 numa:1(memory=1GB) core:1 pu:1" "$tmp/two.xml"
E=4294967295
annotate "$tmp/two.xml" distances-self12.xml 2 numa:0 numa:1 12 20 20 10
annotate "$tmp/two.xml" distances-below10.xml 2 numa:0 numa:1 10 5 5 10
annotate "$tmp/two.xml" distances-unreachable.xml 2 numa:0 numa:1 $E $E $E $E
annotate "$tmp/two.xml" distances-node1-unreachable.xml 2 numa:0 numa:1 10 $E $E $E
# A matrix that leaves node P#2 out.
synthetic "pack:3 numa:1(memory=1GB) core:1 pu:1" "$tmp/three.xml"
annotate "$tmp/three.xml" distances-partial.xml 2 numa:0 numa:1 10 20 20 10
# A matrix naming a node that does not exist (P#9): hwloc drops it silently on load.
sed 's|<indexes length="4">0 1 </indexes>|<indexes length="4">0 9 </indexes>|' \
        distances-self12.xml >distances-unknown-node.xml
# Too few values: hwloc refuses the whole file.
sed 's|<u64values length="12">12 20 20 10 </u64values>|<u64values length="9">12 20 20 </u64values>|' \
        distances-self12.xml >distances-truncated.xml

# A CPU-less NUMA node (CXL-like, P#2, 8 GB) with an empty cpuset, attached to the machine.
synthetic "pack:2 numa:1(memory=2GB) core:2 pu:2" "$tmp/base.xml"
sed -e '4s/nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003"/nodeset="0x00000007" complete_nodeset="0x00000007" allowed_nodeset="0x00000007"/' \
    -e '/<object type="Package" os_index="0"/i\    <object type="NUMANode" os_index="2" cpuset="0x0" complete_cpuset="0x0" nodeset="0x00000004" complete_nodeset="0x00000004" gp_index="100" local_memory="8000000000"/>' \
        "$tmp/base.xml" >memory-only.xml

# Hybrid-like: 4 cores, the last two lost their second thread (PUs 5 and 7 do not exist).
synthetic "pack:1 numa:1(memory=8GB) l3:1 core:4 pu:2" "$tmp/four.xml"
sed -e '/<object type="PU" os_index="[57]"/d' -e 's/"0x000000ff"/"0x0000005f"/g' \
    -e 's/"0x00000030"/"0x00000010"/g' -e 's/"0x000000c0"/"0x00000040"/g' "$tmp/four.xml" >mixed-smt.xml

# PUs 1, 3, 6, 7 not allowed (so core P#3 has no usable PU), PUs 8-9 offline.
synthetic "pack:2 numa:1(memory=1GB) core:2 pu:2" "$tmp/small.xml"
sed -e '4s/allowed_cpuset="0x000000ff"/allowed_cpuset="0x00000035"/' \
    -e '4s/complete_cpuset="0x000000ff"/complete_cpuset="0x000003ff"/' "$tmp/small.xml" >disallowed.xml
# NUMA node P#1 not allowed (its memory cannot be used).
sed -e '4s/allowed_nodeset="0x00000003"/allowed_nodeset="0x00000001"/' "$tmp/small.xml" >disallowed-node.xml
# Package P#1, its CPUs and its node, outside the allowed sets (a cgroup that keeps the guests to one socket).
sed -e '4s/allowed_cpuset="0x000000ff"/allowed_cpuset="0x0000000f"/' \
    -e '4s/allowed_nodeset="0x00000003"/allowed_nodeset="0x00000001"/' "$tmp/small.xml" >disallowed-socket.xml
# Package P#1 has no NUMA node: its PUs 4-7 are local to none.
awk '/<object type="NUMANode" os_index="1"/ { skip = 1 } !skip { print } skip && /<\/object>/ { skip = 0 }' \
        "$tmp/small.xml" >no-local-node.xml

# Big hosts: hwloc writes an all-zero 32-bit word of a bitmap as nothing ("0x00000003,,0x0").
# 192 PUs (CPU numbers up to 191) and 68 NUMA nodes (node numbers up to 67).
synthetic "pack:2 numa:2(memory=16GB) l3:1 core:24 pu:2" big-192-pus.xml
synthetic "pack:2 numa:34(memory=1GB) core:1 pu:1" big-68-nodes.xml

# Two sockets of two NUMA nodes each, no distance matrix: nodes of one package must count as nearer.
synthetic "pack:2 numa:2(memory=16GB) core:12 pu:2" two-sockets-no-slit.xml
# One socket split in two clusters, each with its DRAM and its HBM beside it (a Xeon Max in SNC2, flat
# mode), no distance matrix: only hwloc's locality says which HBM node serves which cores.
synthetic "pack:1 group:2 [numa(memory=2GB)] [numa(memory=1GB)] core:2 pu:1" hbm-no-slit.xml
hwloc-annotate hbm-no-slit.xml hbm-no-slit.xml numa:1 subtype HBM
hwloc-annotate hbm-no-slit.xml hbm-no-slit.xml numa:3 subtype HBM
# Several L3 groups per NUMA node: 4 nodes of 4 L3 x 6 cores (a Xeon with sub-NUMA L3 slices), and the
# shape of 2x EPYC 9654 in NPS1 (one node per socket, 12 CCDs of 8 cores each).
synthetic "pack:4 numa:1(memory=64GB) l3:4 core:6 pu:2" four-l3-per-node.xml
synthetic "pack:2 numa:1(memory=384GB) l3:12 core:8 pu:2" epyc-9654-nps1.xml
# 2x EPYC 7763 in NPS4: 4 nodes per socket of 2 CCDs x 8 cores, an L3 each, numbered as Linux numbers them
# (every core's first thread, then the second threads: core 0 is CPUs 0 and 128), and the SLIT of such a
# host: 11 between the two nodes of a quadrant pair, 12 across the socket, 32 across the sockets.
i=0 idx=
while [ "$i" -lt 128 ]; do idx="$idx${idx:+,}$i,$((i + 128))"; i=$((i + 1)); done
synthetic "pack:2 group:4 [numa(memory=64GB)] l3:2 core:8 pu:2(indexes=$idx)" "$tmp/nps4.xml"
# shellcheck disable=SC2046 # nodes prints one argument per node
annotate "$tmp/nps4.xml" epyc-7763-nps4.xml 8 $(nodes 8) \
        10 11 12 12 32 32 32 32  11 10 12 12 32 32 32 32  12 12 10 11 32 32 32 32  12 12 11 10 32 32 32 32 \
        32 32 32 32 10 11 12 12  32 32 32 32 11 10 12 12  32 32 32 32 12 12 10 11  32 32 32 32 12 12 11 10
# Hugepage pools (hwloc's page types; synthetic descriptions have none): two nodes of 1 GiB and 4 cores,
# node 0 with 32 x 2 MiB pages, node 1 with 64, the base 4 KiB page count lowered to match, as the Linux
# backend writes them (local_memory still counts the pools).
synthetic "pack:1 numa:2(memory=1GiB) core:4 pu:1" "$tmp/pages.xml"
awk '/<page_type size="4096" count="262144"\/>/ {
        n++
        sub(/count="262144"/, n == 1 ? "count=\"245760\"" : "count=\"229376\"")
        print
        sub(/size="4096" count="[0-9]*"/, n == 1 ? "size=\"2097152\" count=\"32\"" : "size=\"2097152\" count=\"64\"")
}
{ print }' "$tmp/pages.xml" >two-node-hugepages.xml

# PCI devices and their NUMA locality (synthetic descriptions have none): a dual-socket host of 8 cores
# per socket, each socket with a host bridge as lstopo exports them. Socket 0 holds a NIC's two PFs
# (0000:17:00.0-1) and one of its VFs (0000:17:02.0); socket 1 a GPU (0000:3b:00.0), a NIC (0000:af:00.0)
# and an NVMe drive (0000:d8:00.0); the machine itself a SATA controller local to both (0000:00:17.0).
bridge() { # BUS DEVICE... (DEVICE: BUSID:CLASS)
        bus=$1
        shift
        printf '<object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[%s-%s]">' "$bus" "$bus"
        for d in "$@"; do
                printf '<object type="PCIDev" pci_busid="%s" pci_type="%s [8086:0000] [8086:0000] 01" pci_link_speed="0.000000"/>' \
                        "${d%%/*}" "${d##*/}"
        done
        printf '</object>'
}
# pci_host DESCRIPTION OUT PACKAGE0 PACKAGE1: the host of DESCRIPTION (two packages) with the bridges
# PACKAGE0 and PACKAGE1 in its packages and the SATA controller at machine level.
pci_host() {
        synthetic "$1" "$tmp/pci.xml"
        sed -e "/<object type=\"Package\" os_index=\"0\"/a\\
$3" -e "/<object type=\"Package\" os_index=\"1\"/a\\
$4" "$tmp/pci.xml" >"$tmp/pci2.xml"
        awk -v dev="$(bridge 00 0000:00:17.0/0106)" '
                { lines[NR] = $0 }
                /^  <\/object>$/ { last = NR }
                END { for (i = 1; i <= NR; i++) { if (i == last) print "    " dev; print lines[i] } }' \
                "$tmp/pci2.xml" >"$2"
}
pci_host "pack:2 numa:1(memory=64GB) l3:1 core:8 pu:2" xeon-2s-pci.xml \
        "$(bridge 17 0000:17:00.0/0200 0000:17:00.1/0200 0000:17:02.0/0200)" \
        "$(bridge 3b 0000:3b:00.0/0302)$(bridge af 0000:af:00.0/0200)$(bridge d8 0000:d8:00.0/0108)"
# The same on the 8 CPUs libvirt's test driver pins to (tests/test-manager-constraints.c): 2 nodes of 2
# cores x 2 threads, a NIC on each.
pci_host "pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2" two-node-pci.xml \
        "$(bridge 17 0000:17:00.0/0200)" "$(bridge af 0000:af:00.0/0200)"

# An SGI UV2000-like export, trimmed: 8 sockets of one node and 2 cores, nodes 10 apart from themselves,
# 20 within a blade pair, 50 within a group of four, 65 beyond; the guests' cgroup allows only nodes 0,
# 1 and 6 (CPUs 0-3, 12-13). A NIC on node 1 (0000:17:00.0) and one on node 5 (0000:85:00.0), which has
# no usable CPU: 50 from node 6, 65 from nodes 0-1.
synthetic "pack:8 numa:1(memory=8GiB) l3:1 core:2 pu:1" "$tmp/uv.xml"
sed -e '4s/allowed_cpuset="0x0000ffff"/allowed_cpuset="0x0000300f"/' \
    -e '4s/allowed_nodeset="0x000000ff"/allowed_nodeset="0x00000043"/' \
    -e "/<object type=\"Package\" os_index=\"1\"/a\\
$(bridge 17 0000:17:00.0/0200)" -e "/<object type=\"Package\" os_index=\"5\"/a\\
$(bridge 85 0000:85:00.0/0200)" "$tmp/uv.xml" >"$tmp/uv-pci.xml"
uv=$(for i in 0 1 2 3 4 5 6 7; do for j in 0 1 2 3 4 5 6 7; do
        if [ "$i" = "$j" ]; then echo 10; elif [ $((i / 2)) = $((j / 2)) ]; then echo 20;
        elif [ $((i / 4)) = $((j / 4)) ]; then echo 50; else echo 65; fi; done; done)
# shellcheck disable=SC2046,SC2086 # nodes and uv print one argument per node and value
annotate "$tmp/uv-pci.xml" uv-pci-disallowed.xml 8 $(nodes 8) $uv
# Two nodes of 2 cores x 2 threads and a CXL memory expander (node 2, 8 GiB) in a Group of its own with
# the NIC behind its root port (0000:c0:00.0): 26 from node 0, 14 from node 1.
synthetic "pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2" "$tmp/cxl.xml"
awk -v grp='    <object type="Group" cpuset="0x0" complete_cpuset="0x0" nodeset="0x00000004" complete_nodeset="0x00000004" gp_index="200"><object type="NUMANode" os_index="2" cpuset="0x0" complete_cpuset="0x0" nodeset="0x00000004" complete_nodeset="0x00000004" gp_index="201" local_memory="8589934592" subtype="CXL-DRAM"/>'"$(bridge c0 0000:c0:00.0/0200)"'</object>' '
        { lines[NR] = $0 }
        /^  <\/object>$/ { last = NR }
        END { for (i = 1; i <= NR; i++) { if (i == last) print grp; print lines[i] } }' "$tmp/cxl.xml" |
        sed -e '4s/nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003"/nodeset="0x00000007" complete_nodeset="0x00000007" allowed_nodeset="0x00000007"/' \
                >"$tmp/cxl-pci.xml"
annotate "$tmp/cxl-pci.xml" cxl-pci.xml 3 numa:0 numa:1 numa:2 10 20 26  20 10 14  26 14 10

# An NVIDIA GH200, trimmed: node 0 with 4 cores and 64 GiB, the GPU's HBM as CPU-less node 1 (16 GiB) and two
# of the firmware's GPU partition placeholder nodes with 0 B (nodes 2-3; a real GH200 has eight), every node
# 80 from every other. In gh200-placeholders.xml hwloc names node 1 GPUMemory (hwloc 2.11 and later, from the
# NVIDIA driver's /proc/driver/nvidia/gpus/*/numa_status); gh200-nosub.xml is what is left when it cannot.
synthetic "[numa(memory=16GiB)] [numa(memory=0)] [numa(memory=0)] pack:1 [numa(memory=64GiB)] l3:1 core:4 pu:1" \
        "$tmp/gh200.xml"
# shellcheck disable=SC2046 # nodes prints one argument per node
annotate "$tmp/gh200.xml" gh200-nosub.xml 4 $(nodes 4) \
        10 80 80 80  80 10 80 80  80 80 10 80  80 80 80 10
hwloc-annotate gh200-nosub.xml gh200-placeholders.xml numa:1 subtype GPUMemory

# A PowerVM LPAR, trimmed: CPU nodes 0 and 1 of 2 cores x 2 threads in one drawer (20 apart), node 1 with
# CPUs and no memory at all, and memory-only node 2 in the next drawer (40 from both). hwloc's synthetic
# descriptions give every node of a level the same memory: node 1's is set to 0 B afterwards.
synthetic "[numa(memory=128GiB)] pack:2 [numa(memory=64GiB)] l3:1 core:2 pu:2" "$tmp/lpar.xml"
sed -e '/<object type="NUMANode" os_index="1" /{s/local_memory="[0-9]*"/local_memory="0"/;n;/<page_type /d;}' \
        "$tmp/lpar.xml" >"$tmp/lpar0.xml"
# shellcheck disable=SC2046 # nodes prints one argument per node
annotate "$tmp/lpar0.xml" lpar-memoryless.xml 3 $(nodes 3) 10 20 40  20 10 40  40 40 10

# An hwloc v1 export that gives no memory sizes, as hwloc's own test XMLs of old machines do: 2 sockets,
# a node each, of 4 cores x 2 threads. The same with allowed memory nodes that name no node (0x0).
lstopo -i "pack:2 [numa(memory=64GB)] l3:1 core:4 pu:2" --of xml --export-xml-flags v1 -f "$tmp/v1.xml"
sed -e 's/ local_memory="[0-9]*"//' -e '/<page_type /d' "$tmp/v1.xml" >v1-no-memory.xml
sed -e 's/ allowed_nodeset="0x[0-9a-f]*"/ allowed_nodeset="0x0"/g' v1-no-memory.xml >v1-no-memory-allowed.xml

# A memory-only HBM node (a flat-mode Xeon Max's, say) whose memory is all in 2 MiB hugepages, kept for
# hugepage-backed guests: no general memory, 1024 pages, beside a DRAM node of 2 single-thread cores.
synthetic "pack:1 [numa(memory=4GiB)] [numa(memory=2GiB)] core:2 pu:1" "$tmp/hbm-pages.xml"
sed -e '/<object type="NUMANode" os_index="1" /{n;s|<page_type size="4096" count="[0-9]*"/>|<page_type size="4096" count="0"/>\n        <page_type size="2097152" count="1024"/>|;}' \
        "$tmp/hbm-pages.xml" >"$tmp/hbm-pages2.xml"
hwloc-annotate "$tmp/hbm-pages2.xml" hbm-all-hugepages.xml numa:1 subtype HBM

# A KNL in SNC-2 hybrid mode as hwloc 1.x exported it, read back by hwloc 2.x: each cluster's HBM
# (MCDRAM) node sits in a Group of an empty cpuset inside the cluster, not beside its DRAM node, and the
# export has no distance matrix. hwloc's v1 export of the hbm-no-slit.xml shape gives that layout.
lstopo -i "pack:1 group:2 [numa(memory=2GB)] [numa(memory=1GB)] core:2 pu:1" --of xml \
        --export-xml-flags v1 -f "$tmp/hbm-v1.xml"
hwloc-annotate "$tmp/hbm-v1.xml" hbm-v1-export.xml numa:0 subtype HBM
hwloc-annotate hbm-v1-export.xml hbm-v1-export.xml numa:2 subtype HBM

# hwloc 1.x's layout (the package and cores inside the NUMA node) under a 2.0 header: hwloc refuses it
# ("normal object Package cannot be child of non-normal parent NUMANode"), after warnings about the v1
# attribute online_cpuset that it ignores.
lstopo -i "pack:1 numa:1(memory=1GB) core:2 pu:1" --of xml --export-xml-flags v1 -f "$tmp/v1-small.xml"
sed -e 's|hwloc.dtd|hwloc2.dtd|' -e 's|<topology>|<topology version="2.0">|' "$tmp/v1-small.xml" \
        >v1-layout-as-v2.xml

# hwloc warns about this one (an empty group before the package: "out-of-order XML topology load") and
# loads it: 1 node of 2 single-thread cores.
synthetic "pack:1 numa:1(memory=1GB) core:2 pu:1" "$tmp/ooo.xml"
sed -e '/<object type="Package" /i\    <object type="Group" cpuset="0x0" complete_cpuset="0x0" gp_index="99"/>' \
        "$tmp/ooo.xml" >out-of-order.xml

# hwloc 3.0's XML of hosts above (to-v3.sh: what lstopo of hwloc 3 writes for them), each to load exactly
# like its 2.x twin: the 2 x 16 x 2 host; the Opteron's distances; the HBM nodes with memory attributes
# (bandwidth, with an info hwloc 3 ignores); the hybrid CPU kinds (hybrid-small.xml comes from make.sh);
# the two-node PCI host with OS devices under its devices (a NIC, an InfiniBand port, a disk: 3.0's
# network, OpenFabrics and storage bits).
sh to-v3.sh two-node-smt.xml >hwloc-3.0.xml
sh to-v3.sh opteron-6272.xml >opteron-6272-v3.xml
sed -e '/^<\/topology>/i\
  <memattr name="Bandwidth" flags="5">\
    <info name="Source" value="HMAT"/>\
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="7" value="20000" initiator_cpuset="0x00000003"/>\
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="8" value="80000" initiator_cpuset="0x00000003"/>\
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="14" value="20000" initiator_cpuset="0x0000000c"/>\
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="15" value="80000" initiator_cpuset="0x0000000c"/>\
  </memattr>' hbm-no-slit.xml >"$tmp/hbm.xml"
sh to-v3.sh "$tmp/hbm.xml" >hbm-no-slit-v3.xml
sh to-v3.sh hybrid-small.xml >hybrid-small-v3.xml
sed -e 's|\(pci_busid="0000:17:00.0" [^/]*\)/>|\1><object type="OSDev" name="ens1f0" osdev_type="2"/></object>|' \
    -e 's|\(pci_busid="0000:af:00.0" [^/]*\)/>|\1><object type="OSDev" name="mlx5_0" osdev_type="3"/><object type="OSDev" name="ib0" osdev_type="2"/></object>|' \
    -e 's|\(pci_busid="0000:00:17.0" [^/]*\)/>|\1><object type="OSDev" name="sda" subtype="Disk" osdev_type="0"/></object>|' \
    two-node-pci.xml >"$tmp/pci-osdev.xml"
sh to-v3.sh "$tmp/pci-osdev.xml" >two-node-pci-v3.xml
