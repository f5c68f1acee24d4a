#!/bin/sh
# Generates the corpus of host shapes that tests/test-corpus.c runs the engine on, with hwloc's own tools
# (lstopo from a synthetic description, --restrict for uneven shapes, hwloc-annotate for memory subtypes,
# CPU kinds and distance matrices), and records what hwloc itself counts in each (corpus.expected).
# Run from this directory: sh make.sh
set -eu

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# distances OUT IN N VALUES...: adds a NUMALatency matrix over numa:0..N-1 (kind 5: from OS, latency).
distances() {
        out=$1 in=$2 n=$3
        shift 3
        f=$tmp/matrix
        { echo name=NUMALatency; echo 5; echo "$n"; i=0; while [ "$i" -lt "$n" ]; do echo "numa:$i"; i=$((i + 1)); done
          for v in "$@"; do echo "$v"; done; } >"$f"
        hwloc-annotate "$in" "$out" -- none -- distances "$f"
}
# subtype FILE SUBTYPE NUMA...: sets the memory subtype of the NUMA nodes (logical indexes), in place.
subtype() {
        f=$1 st=$2
        shift 2
        for n in "$@"; do
                hwloc-annotate "$f" "$f" "numa:$n" subtype "$st"
        done
}
# cpukind FILE CPUSET EFFICIENCY CORETYPE MHZ: registers a CPU kind, in place.
cpukind() {
        hwloc-annotate "$1" "$1" root cpukind "$2" "$3" 0 CoreType "$4"
        hwloc-annotate "$1" "$1" root cpukind "$2" "$3" 0 FrequencyMaxMHz "$5"
}
# linear N NEAR FAR GROUP: an N-node matrix, NEAR inside a group of GROUP consecutive nodes, FAR across.
linear() {
        i=0
        while [ "$i" -lt "$1" ]; do
                j=0
                while [ "$j" -lt "$1" ]; do
                        if [ "$i" -eq "$j" ]; then echo 10
                        elif [ $((i / $4)) -eq $((j / $4)) ]; then echo "$2"
                        else echo "$3"; fi
                        j=$((j + 1))
                done
                i=$((i + 1))
        done
}

# Dual-socket Xeon with SMT: 2 x 8 cores x 2 threads, one L3 per socket.
lstopo -i "pack:2 [numa(memory=64GB)] l3:1 core:8 pu:2" --of xml -f "$tmp/xeon.xml"
distances xeon-2s-smt.xml "$tmp/xeon.xml" 2 10 21 21 10
# The same host numbered as Intel's BIOSes number it: every core's first thread first (socket 0's cores
# 0-7, socket 1's 8-15), then their second threads (16-31), so core 0 is CPUs 0 and 16.
lstopo -i "pack:2 [numa(memory=64GB)] l3:1 core:8 pu:2(indexes=2*8:16*2:1*2)" --of xml -f "$tmp/xeon-intel.xml"
distances xeon-2s-intel.xml "$tmp/xeon-intel.xml" 2 10 21 21 10

# 2 x EPYC in NPS1: one node per socket, 12 CCDs (an L3 each) of 4 cores x 2 threads.
lstopo -i "pack:2 [numa(memory=96GB)] l3:12 core:4 pu:2" --of xml -f "$tmp/epyc.xml"
distances epyc-2s-nps1.xml "$tmp/epyc.xml" 2 10 32 32 10

# POWER9 with NVLink GPUs: 2 sockets of 4 cores x 4 threads, and 4 GPUs' memory as CPU-less NUMA nodes
# attached to the machine (logical 2-5), far from everything.
lstopo -i "[numa(memory=16GB)] [numa(memory=16GB)] [numa(memory=16GB)] [numa(memory=16GB)] pack:2 [numa(memory=256GB)] l3:1 core:4 pu:4" \
        --of xml -f "$tmp/p9.xml"
subtype "$tmp/p9.xml" GPUMemory 2 3 4 5
distances power9-gpu.xml "$tmp/p9.xml" 6 \
        10 40 80 80 80 80  40 10 80 80 80 80  80 80 10 80 80 80 \
        80 80 80 10 80 80  80 80 80 80 10 80  80 80 80 80 80 10

# Knights Landing in SNC4 flat mode: 4 clusters, each a DRAM node with the cores and a CPU-less MCDRAM node.
lstopo -i "group:4 [numa(memory=24GB)] [numa(memory=4GB)] core:4 pu:4" --of xml -f "$tmp/knl.xml"
subtype "$tmp/knl.xml" MCDRAM 1 3 5 7
# shellcheck disable=SC2046 # one value per argument
distances knl-snc4-flat.xml "$tmp/knl.xml" 8 $(
        i=0
        while [ "$i" -lt 8 ]; do
                j=0
                while [ "$j" -lt 8 ]; do
                        if [ "$i" -eq "$j" ]; then echo 10
                        elif [ $((i / 2)) -eq $((j / 2)) ]; then echo 31
                        elif [ $((i % 2)) -eq 0 ] && [ $((j % 2)) -eq 0 ]; then echo 21
                        else echo 41; fi
                        j=$((j + 1))
                done
                i=$((i + 1))
        done)

# A CXL memory expander: 2 sockets of 4 cores x 2 threads and a CPU-less CXL node (logical 2) behind
# socket 0: nearer to it (14) than the other socket's DRAM (21), as Linux reports such expanders.
lstopo -i "[numa(memory=128GB)] pack:2 [numa(memory=32GB)] l3:1 core:4 pu:2" --of xml -f "$tmp/cxl.xml"
subtype "$tmp/cxl.xml" CXL-DRAM 2
distances cxl-expander.xml "$tmp/cxl.xml" 3 10 21 14 21 10 26 14 26 10

# An asymmetric table with two CPU-less nodes: node 0 (the cores) reaches node 1 at 30 and node 2 at 20,
# while the memory-only nodes' own rows say otherwise (20 and 30 back to node 0).
lstopo -i "[numa(memory=64GB)] [numa(memory=64GB)] pack:1 [numa(memory=16GB)] l3:1 core:4 pu:1" --of xml -f "$tmp/asym.xml"
distances asym-memory-only.xml "$tmp/asym.xml" 3 10 30 20 20 10 30 30 30 10

# Persistent memory (Optane PMem in App Direct, onlined with kmem): each socket a DRAM node with the cores
# and a CPU-less DAX node marked with a DAXType info (from which hwloc's memory tiers make the NVM subtype).
lstopo -i "pack:2 [numa(memory=32GB)] [numa(memory=128GB)] l3:1 core:4 pu:2" --of xml -f pmem-dax.xml
hwloc-annotate pmem-dax.xml pmem-dax.xml numa:1 info DAXType NVM
hwloc-annotate pmem-dax.xml pmem-dax.xml numa:3 info DAXType NVM
distances pmem-dax.xml pmem-dax.xml 4 10 17 21 28 17 10 28 21 21 28 10 17 28 21 17 10

# Alder/Raptor Lake: 4 P-cores with 2 threads and an L2 each, 8 E-cores in 2 modules sharing an L2,
# one L3. Built from 6 L2s of 4 cores x 2 threads, keeping one core of each of the first four.
d="pack:1 [numa(memory=32GB)] l3:1 l2:6 core:4 pu:2"
p=$(hwloc-calc -i "$d" l2:0-3.core:0)
e=$(hwloc-calc -i "$d" l2:4-5.core:all.pu:0)
lstopo -i "$d" --restrict "$(hwloc-calc -i "$d" "$p" "$e")" --of xml -f alder-lake.xml
cpukind alder-lake.xml "$e" 0 IntelAtom 3900
cpukind alder-lake.xml "$p" 1 IntelCore 5400

# A small hybrid host whose CPUs the libvirt test driver has (0-7): 4 P-cores (0-3), 4 E-cores (4-7).
lstopo -i "pack:1 numa:1(memory=16GB) core:8 pu:1" --of xml -f hybrid-small.xml
cpukind hybrid-small.xml 0xf0 0 IntelAtom 3800
cpukind hybrid-small.xml 0x0f 1 IntelCore 5000

# Arrow Lake (H): 4 P-cores, 8 E-cores in 2 modules, one L3; 2 low-power E-cores outside the L3 (the
# second L3 of the description is turned into a plain group).
d="pack:1 [numa(memory=32GB)] l3:2 l2:6 core:4 pu:1"
p=$(hwloc-calc -i "$d" l3:0.l2:0-3.core:0)
e=$(hwloc-calc -i "$d" l3:0.l2:4-5.core:all)
lp=$(hwloc-calc -i "$d" l3:1.l2:0.core:0-1)
lstopo -i "$d" --restrict "$(hwloc-calc -i "$d" "$p" "$e" "$lp")" --of xml -f "$tmp/arrow.xml"
awk '/type="L3Cache"/ { n++ } n == 2 && /type="L3Cache"/ && !done {
        sub(/type="L3Cache"/, "type=\"Group\""); sub(/ cache_size="[0-9]*" depth="3" cache_linesize="[0-9]*" cache_associativity="[0-9-]*" cache_type="[0-9]*"/, ""); done = 1 } { print }' \
        "$tmp/arrow.xml" >arrow-lake.xml
cpukind arrow-lake.xml "$lp" 0 IntelAtom 2500
cpukind arrow-lake.xml "$e" 1 IntelAtom 4600
cpukind arrow-lake.xml "$p" 2 IntelCore 5700

# NVIDIA GB10 (ARM big.LITTLE): 2 clusters with an L3 each, 5 Cortex-A725 then 5 Cortex-X925 in each.
d="pack:1 [numa(memory=128GB)] l3:2 core:10 pu:1"
lstopo -i "$d" --of xml -f gb10.xml
cpukind gb10.xml "$(hwloc-calc -i "$d" l3:all.core:0-4)" 0 ARM-Cortex-A725 2800
cpukind gb10.xml "$(hwloc-calc -i "$d" l3:all.core:5-9)" 1 ARM-Cortex-X925 3900

# ARM clusters (Kunpeng 920, Ampere): cores with an L2 each, four to a cluster that hwloc shows as a
# Group of subtype Cluster; two clusters under one L3.
lstopo -i "pack:1 [numa(memory=64GB)] l3:1 group:2 l2:4 core:1 pu:1" --of xml -f clusters.xml
hwloc-annotate clusters.xml clusters.xml group:0 subtype Cluster
hwloc-annotate clusters.xml clusters.xml group:1 subtype Cluster

# A host whose third socket's node is offline: its PUs are local to no NUMA node.
lstopo -i "pack:3 [numa(memory=32GB)] l3:1 core:8 pu:2" --of xml -f "$tmp/three.xml"
awk '/<object type="NUMANode" os_index="2"/ { skip = 1 } !skip { print } skip && /<\/object>/ { skip = 0 }' \
        "$tmp/three.xml" >"$tmp/offline.xml"
distances no-local-node-3s.xml "$tmp/offline.xml" 2 10 21 21 10

# 20 nodes: 2 sockets of 10 nodes (sub-NUMA clusters) of 2 cores x 2 threads, 12 inside a socket, 32 across.
lstopo -i "pack:2 numa:10(memory=8GB) core:2 pu:2" --of xml -f "$tmp/twenty.xml"
# shellcheck disable=SC2046 # one value per argument
distances twenty-nodes.xml "$tmp/twenty.xml" 20 $(linear 20 12 32 10)

# The kernel's cache ids, as lstopo exports them on a live host (a synthetic description has none): 2
# packages of one node and 2 L3 caches (CCXs) of 4 cores x 2 threads; L3 ids 0-3 in order, L2 ids are
# the first CPU of each core. A domain's <cachetune>/<memorytune> names these ids.
lstopo -i "pack:2 [numa(memory=32GB)] l3:2 l2:4 core:1 pu:2" --of xml -f "$tmp/cache-ids.xml"
awk '/type="L3Cache"/ { sub(/type="L3Cache"/, "type=\"L3Cache\" os_index=\"" l3++ "\"") }
     /type="L2Cache"/ { sub(/type="L2Cache"/, "type=\"L2Cache\" os_index=\"" 2 * l2++ "\"") } { print }' \
        "$tmp/cache-ids.xml" >cache-ids.xml

# Alder Lake with the kernel's ids of its L3 and of P-core 0's L2 (both 0), for a reservation there.
awk '/type="L3Cache"/ && !l3 { sub(/type="L3Cache"/, "type=\"L3Cache\" os_index=\"0\""); l3 = 1 }
     /type="L2Cache"/ && !l2 { sub(/type="L2Cache"/, "type=\"L2Cache\" os_index=\"0\""); l2 = 1 } { print }' \
        alder-lake.xml >alder-lake-cache-ids.xml

# What hwloc counts in each: file, NUMA nodes, cores, PUs, CPU kinds, then NUMA nodes per subtype.
{
        echo "# file nodes cores pus cpukinds subtypes(name=count,...) -- written by make.sh from hwloc-calc and lstopo"
        for f in xeon-2s-smt epyc-2s-nps1 power9-gpu knl-snc4-flat cxl-expander pmem-dax alder-lake \
                arrow-lake gb10 no-local-node-3s twenty-nodes; do
                x=$f.xml
                kinds=$(lstopo -i "$x" --cpukinds --of console 2>/dev/null | grep -c '^CPU kind' || true)
                subtypes=$(lstopo -i "$x" --of console --only numa -v 2>/dev/null |
                        sed -n 's/.*NUMANode(\([^)]*\)).*/\1/p' | sort | uniq -c | awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $2, $1 }')
                echo "$x $(hwloc-calc -i "$x" --number-of numa all) $(hwloc-calc -i "$x" --number-of core all)" \
                        "$(hwloc-calc -i "$x" --number-of pu all) $kinds ${subtypes:--}"
        done
} >corpus.expected
