#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# placementctl simulate on small traces whose figures are worked out by hand (each trace says its host):
#   heal.trace (2x2x2): 0-20 s a, b, c resident, c's 2 busy vCPUs on a's cores: 4 of 6 vCPUs share and
#     contend, 2 cores x 0.8 lost; b stops at 20 s, which arms a heal pass HealInterval=5 s later: at 25 s
#     the healer moves c's vCPUs onto b's node; 25-60 s nothing shares. vCPU-seconds 6x20 + 4x40 = 280,
#     shared 4x20 + 4x5 = 100: 5/14; lost 1.6 x 25/60; bound: 6 busy on 4 cores 0-20 s: 1.6 x 20/60;
#     largest fit 2 vCPUs from 20 to 25 s, else 0: 1/6. c's memory was bound at start (MemoryBinding=yes,
#     once, as libvirt allows): it stays on a's node, 0 bytes moved, and c's 2 vCPUs run 20 away from it
#     for 35 s: distance (280 x 10 + 2 x 35 x 10) / 280 = 12.5. With MemoryBinding=no the move takes the
#     memory along: 1 GiB moved, distance 10.
#   contended.trace (1x2x2): 4 busy vCPUs on 2 cores for 10 s: all contend, 1.6 cores lost, the bound too;
#     --sibling-loss=0.75: a pair delivers one core, 2 lost.
#   empty.trace (1x2x2): nothing runs; the largest fit is 2 vCPUs (2 GiB each), 1 with ReservedCPUs=0 or
#     MemoryReserve=14G: the host keeps them as the engine keeps them. On tests/topologies/hybrid-small-v3.xml
#     (4 P-cores and 4 E-cores, 14.9 GiB) 7 by memory, 4 with CoreKinds=performance-only: the E-cores are
#     the host's then, as ReservedCPUs= are.
#   idle.trace (1x2x2): the idle domain shares with the busy one (2/3 of vCPU-seconds shared) and no busy
#     vCPU contends: an idle neighbour costs nothing.
#   bound.trace (2x4x2): w (4 vCPUs) spans both nodes, its memory bound there at its start (1 + 3 GiB);
#     when x leaves node 0, moving w's vCPUs there would run them farther from memory that stays: no
#     move. Distance: w's vCPUs 17.5 and 3 x 12.5 (13.75), x and y 10: (160 vCPU-s: 600 + 200 + 1100;
#     500: 1000 + 5500) / 660 = 140/11. With MemoryBinding=no heal moves w at 25 s and 3 GiB with it:
#     (1900 + 50 + 275 + 950 + 3800) / 660.
#   threads.trace (1x2x2): a's 0.26 cores of host-side threads leave its vCPU's sibling for the free core
#     once known (10 s); b then runs beside them with 0.3 of its own: 0.56 cores beside two busy vCPUs
#     wherever they go, so nothing moves again: (0.26 x 0.8 x 10 + 0.56 x 0.8 x 120) / 150 lost, 1 move.
#   stays.trace (2x2x2, 8 GiB nodes): d (memory bound on node 0) is re-pinned to node 1's freed cores at
#     65 s; its busy host-side threads then have no CPU in the view of its memory's node, and stay where
#     they run: 1 move, no threads-only "move" to an empty pin (which left them there unsaid).
#   cheaper.trace (2x4x2, MemoryBinding=no): c was overcommitted onto a's cores, a stops, idle e (1 GiB)
#     is overcommitted onto c's core, b stops: of the two sharing, heal moves the one with less memory to
#     copy, e, whatever the names: 1 GiB moved, not c's 2 GiB (the order fell to the names).
#   nearer.trace (2x2x2): idle w takes a free core on each node, its memory bound on both; a stops and
#     node 0 has two free cores: moving w there leaves its memory on both nodes, no nearer, so no move.
#   spare.trace (1x2x2): c (45% busy) shares a's core until b stops at 30 s; with half the cores free
#     heal moves it at 35 s however idle: shared 2 x 30 + 2 x 5 of 1290 vCPU-seconds.
#   unplaceable.trace (1x2x2): b's memory does not fit beside a's; a departure's heal pass places it, as
#     the daemon places its unplaceable domains then (with Heal=no nothing does): 55/60 vCPUs resident.
#   quarter.trace (1x8x2): two idle vCPUs share until 2 of 8 cores free up; heal moves one, and the
#     other stays once fewer than a quarter are free: 2530/9900 shared.
#   heal.trace with Heal=no in --config: c stays beside a, 1.6 cores lost over the whole 60 s, 6/7 shared.
#   learn.trace (1x2x1): load is learned as the daemon learns it. The measurement at 5 s only reads the
#     counters (a fraction needs two readings); with LoadWarmup=0 the one at 10 s makes i known idle and
#     heal moves b2 onto i's core at once: b1 and b2 contend 7-10 s, 2 x 3 of 33 busy vCPU-seconds. The
#     warm-up counts from the start: the default LoadWarmup=5 is over at the first reading, the same;
#     LoadWarmup=8 has 3 s of the 5-10 s sample, set it aside: known at 15 s, 2 x 8 of 33.
#   host.trace (1x8x2): one core of host-side load spread over the siblings of 4 busy vCPUs' cores costs
#     what one busy thread beside one of them does (0.8 cores) until the load is known at 10 s and heal
#     moves the emulator to a core of its own: 0.8 x 10/120; no busy vCPU has a half busy PU beside it.
#     With Heal=no it stays: 0.8 all 120 s.
#   over.trace (1x8x2): an idle 1-vCPU guest's 1.5 cores of host-side load on its core's other thread is
#     0.5 over one thread's worth, a busy thread beside it: 0.8 x 0.5 lost until the load is known at 10 s
#     and heal re-pins the threads alone onto more cores (1 move, no memory): 0.4 x 10/120. Heal=no: 0.4.
#   thin.trace (1x8x2): 0.3 cores of host-side load beside 4 busy vCPUs, under half a core, cost 0.3 x 0.8
#     until the load is known at 10 s; then the threads alone move to a core of their own (a quarter of a
#     core or more beside busy vCPUs is worth it): 0.24 x 10/120, 1 move. Heal=no: 0.24 all 120 s.
#   nothing.trace (1x4x2, MemoryBinding=no, Fit=pack): host-side load summed past half a core beside busy
#     vCPUs; a move that only splits the sum lowers the count "contending", not the loss: no move.
#   worse.trace (4x2x2, MemoryBinding=no, Fit=pack): a move that stops one busy vCPU contending but puts
#     1.6 cores of host-side threads beside another 1.6 loses more than it wins: no memory moved for it.
#   warmup.trace (2x4x2, MemoryBinding=no): an idle guest starting while heal works is not moved with its
#     memory before its load is known: no memory moved.
#   tie.trace (4x2x2, Fit=pack): a's vCPU (memory bound on node 0) contends with 1.6 cores of its own
#     host-side threads, 1.4 cores lost from 60 s until heal moves it at 85 s (its smoothed load busy).
#     Re-pinned inside node 0 its threads keep one core, 1.6 cores on two threads (0.48 lost), beside
#     its vCPU b's 0.2 (0.16): 0.64; the re-pin that spreads them over a core of node 0 and one of an
#     empty node loses 0.16. Since a binding confines memory, not vCPUs, heal places a's vCPU anew past
#     node 0, its memory left there, and a second move follows in that pass: nothing lost after 85 s,
#     no memory moved: 1.4 x 25 / 660 (until 2026-12-04 one move and 0.16 cores lost for the rest).
#   remote.trace (spr-snc2.xml): idle y shares idle x's cores on node 0, its memory bound there; when a
#     quarter of the cores free up in the other package, an idle guest's sharing alone is no reason to
#     run it 21 from all its memory: no move, distance 10; shared (2 + 2) x 660 of 34 x 60 + 26 x 600
#     vCPU-seconds (until 2026-12-07 heal moved it there at 65 s: distance 10.74).
#   follow.trace (4x2x2, Fit=pack): a's busy vCPU, re-pinned at 70 s beside b's 0.3-busy one with 6 of 8
#     cores free, is looked at again when its 60 s cool-down ends and gets a core of its own at 130 s:
#     2 of 2 vCPUs shared for 60 of 660 s; 0.48 cores lost 60-70 s, beside its own host-side threads.
#   flap.trace (2x3x2): n's load turns busy for 30 s and idle for 60 s, forty times; each turn moves b's busy
#     vCPU off its node or back beside its memory. b moves at 10 s (its first measurement), then at 310,
#     460, 700, 1180, 1780, 2440, 3040 and 3700 s (each within 20 minutes of the last: 60, 120, 240, 480,
#     then 600 s apart at least), and a's host-side threads once at 10 s: 10 moves, where a cool-down of
#     60 s after every re-pin moved b twice every 90 s cycle it could (43).
# Every trace above whose host-side threads begin on their cores' siblings runs with HousekeepingCPUs=
# set (host.trace, over.trace, thin.trace, threads.trace, worse.trace, tie.trace, flap.trace,
# quarter.trace): without CPUs kept for the host, a domain's host-side load counts as a core busy until
# it is measured and they start on cores of its nodes no vCPU uses; host, over and thin then lose
# nothing and move nothing, with or without heal.
# Also: every --json key the documentation names, errors naming the trace's line, and the example trace.
#   bash tests/simulate/run.sh PLACEMENTCTL
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

ctl=$(realpath "${1:?usage: run.sh PLACEMENTCTL}") || exit 2
here=$ROOT/tests/simulate
need python3
tap_begin '' # no summary line: meson reads TAP
tap_tmpdir simulate
tmp=$TAP_TMP
H222="synthetic:pack:2 numa:1(memory=4GiB) core:2 pu:2"
H122="synthetic:numa:1(memory=16GiB) core:2 pu:2"
H121="synthetic:numa:1(memory=16GiB) core:2 pu:1"

report() { # DESC STATUS
        if [ "$2" -eq 0 ]; then ok "$1"; else not_ok "$1"; fi
}
# figures DESC TOPOLOGY TRACE EXPECTED-PYTHON-DICT [OPTIONS...]: the --json keys hold these values
# shellcheck disable=SC2016 # python source
check_py='
import json, sys
got = json.load(sys.stdin)
want = eval(sys.argv[1])
bad = [f"{k}: {got.get(k)!r}, expected {v!r}" for k, v in want.items()
       if not (k in got and (abs(got[k] - v) < 1e-9 if isinstance(v, float) else got[k] == v))]
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
'
figures() {
        local desc=$1 topology=$2 trace=$3 expected=$4 out
        shift 4
        [ "${trace#/}" = "$trace" ] && trace=$here/$trace
        if ! out=$("$ctl" simulate --topology="$topology" --trace="$trace" --json "$@" 2>&1); then
                report "$desc: placementctl failed: $out" 1
                return
        fi
        python3 -c "$check_py" "$expected" <<<"$out" 2>&1 | sed 's/^/# /'
        report "$desc" "${PIPESTATUS[0]}"
}

figures "heal.trace: figures worked out by hand, one heal move, the bound memory left" "$H222" heal.trace \
        '{"shared_vcpu_fraction": 5/14, "busy_contended_fraction": 5/14, "capacity_lost": 1.6 * 25/60,
          "bound_capacity_lost": 1.6/3, "moves": 1, "host_thread_moves": 0, "memory_moved_bytes": 0,
          "mean_memory_distance": 12.5, "largest_fit_min": 0, "largest_fit_mean": 1/6, "seconds": 60.0,
          "starts": 3, "stops": 1, "overcommitted": 1}'
printf '[Placement]\nMemoryBinding=no\n' >"$tmp/unbound.conf"
figures "heal.trace --config with MemoryBinding=no: the move takes c's 1 GiB along" "$H222" heal.trace \
        '{"capacity_lost": 1.6 * 25/60, "moves": 1, "memory_moved_bytes": 1 << 30, "mean_memory_distance": 10.0}' \
        --config="$tmp/unbound.conf"
figures "contended.trace: every busy vCPU contends, 1.6 cores lost, equal to the bound" "$H122" contended.trace \
        '{"shared_vcpu_fraction": 1.0, "busy_contended_fraction": 1.0, "capacity_lost": 1.6,
          "bound_capacity_lost": 1.6, "bound_busy_contended_fraction": 0.75,
          "bound_paired_contended_fraction": 1.0, "moves": 0}'
figures "contended.trace --sibling-loss=0.75: a busy pair delivers one core, 2 lost" "$H122" contended.trace \
        '{"capacity_lost": 2.0, "bound_capacity_lost": 2.0, "sibling_loss": 0.75}' --sibling-loss=0.75
figures "idle.trace: the idle domain shares, no busy vCPU contends" "$H122" idle.trace \
        '{"shared_vcpu_fraction": 2/3, "busy_contended_fraction": 0.0, "capacity_lost": 0.0, "moves": 0}'

figures "empty.trace: an empty host fits 2 vCPUs" "$H122" empty.trace '{"largest_fit_min": 2, "largest_fit_mean": 2.0}'
printf '[Placement]\nReservedCPUs=0\n' >"$tmp/reserved.conf"
figures "empty.trace with ReservedCPUs=0: core 0 is the host's, 1 vCPU fits" "$H122" empty.trace \
        '{"largest_fit_min": 1, "largest_fit_mean": 1.0}' --config="$tmp/reserved.conf"
HYBRID=$ROOT/tests/topologies/hybrid-small-v3.xml
figures "empty.trace on 4 P-cores and 4 E-cores: 7 vCPUs fit, by memory" "$HYBRID" empty.trace \
        '{"largest_fit_min": 7, "largest_fit_mean": 7.0}'
printf '[Placement]\nCoreKinds=performance-only\n' >"$tmp/performance-only.conf"
figures "empty.trace with CoreKinds=performance-only: the 4 P-cores, as explicit places" "$HYBRID" empty.trace \
        '{"largest_fit_min": 4, "largest_fit_mean": 4.0}' --config="$tmp/performance-only.conf"
printf '[Placement]\nMemoryReserve=14G\n' >"$tmp/memory-reserve.conf"
figures "empty.trace with MemoryReserve=14G: 2 GiB free, 1 vCPU at 2 GiB fits" "$H122" empty.trace \
        '{"largest_fit_min": 1, "largest_fit_mean": 1.0}' --config="$tmp/memory-reserve.conf"

H242="synthetic:pack:2 numa:1(memory=16GiB) core:4 pu:2"
figures "bound.trace: no move that runs the vCPUs farther from memory that cannot follow" "$H242" bound.trace \
        '{"moves": 0, "memory_moved_bytes": 0, "mean_memory_distance": 140/11}'
figures "bound.trace with MemoryBinding=no: w moves to node 0, its 3 GiB along" "$H242" bound.trace \
        '{"moves": 1, "memory_moved_bytes": 3 << 30, "mean_memory_distance": 6975/660}' --config="$tmp/unbound.conf"
# HousekeepingCPUs= (used only without idle siblings) keeps host-side load from counting as a core busy
# before it is measured: the emulators of the traces run with it start on their own cores' siblings, as
# the figures worked out for them assume (the last CPU of each host)
printf '[Placement]\nHousekeepingCPUs=3\n' >"$tmp/siblings-122.conf"
figures "threads.trace: host-side threads moved once, not back and forth between two guests" "$H122" \
        threads.trace '{"moves": 1, "host_thread_moves": 1, "capacity_lost": (0.26 * 0.8 * 10 + 0.56 * 0.8 * 120) / 150}' \
        --config="$tmp/siblings-122.conf"
figures "stays.trace: no threads-only move to an empty pin, where nothing would move" \
        "synthetic:pack:2 numa:1(memory=8GiB) core:2 pu:2" stays.trace '{"moves": 1, "host_thread_moves": 0}'
printf '[Placement]\nMemoryBinding=no\n' >"$tmp/no-binding.conf"
figures "cheaper.trace: of two domains sharing, heal moves the one with less memory to copy" "$H242" \
        cheaper.trace '{"moves": 1, "memory_moved_bytes": 1 << 30}' --config="$tmp/no-binding.conf"
sed 's/\bc\b/zc/' "$here/cheaper.trace" >"$tmp/cheaper-renamed.trace"
figures "cheaper.trace with c renamed zc: the same move" "$H242" "$tmp/cheaper-renamed.trace" \
        '{"moves": 1, "memory_moved_bytes": 1 << 30}' --config="$tmp/no-binding.conf"
printf '[Placement]\nMemoryBinding=no\nFit=pack\n' >"$tmp/unbound-pack.conf"
printf '[Placement]\nMemoryBinding=no\nFit=pack\nHousekeepingCPUs=15\n' >"$tmp/unbound-pack-siblings.conf"
figures "nothing.trace: a move that only splits a sum of host-side load is not made" \
        "synthetic:pack:1 numa:1(memory=16GiB) core:4 pu:2" nothing.trace '{"moves": 0}' --config="$tmp/unbound-pack.conf"
figures "worse.trace: no move that loses more than it wins, no memory copied for one" \
        "synthetic:pack:4 numa:1(memory=8GiB) core:2 pu:2" worse.trace '{"memory_moved_bytes": 0}' \
        --config="$tmp/unbound-pack-siblings.conf"
figures "warmup.trace: a guest whose load is not known yet is not moved with its memory" \
        "synthetic:pack:2 numa:1(memory=8GiB) core:4 pu:2" warmup.trace '{"memory_moved_bytes": 0}' \
        --config="$tmp/unbound.conf"
printf '[Placement]\nFit=pack\n' >"$tmp/pack.conf"
printf '[Placement]\nFit=pack\nHousekeepingCPUs=15\n' >"$tmp/pack-siblings.conf"
H422="synthetic:pack:4 numa:1(memory=8GiB) core:2 pu:2"
figures "tie.trace: of plans as good by the count, the one that loses less" "$H422" tie.trace \
        '{"capacity_lost": 1.4 * 25 / 660, "moves": 2, "memory_moved_bytes": 0}' \
        --config="$tmp/pack-siblings.conf"
figures "remote.trace: idle sharing alone does not run a guest away from its bound memory" \
        "$ROOT/tests/topologies/spr-snc2.xml" remote.trace \
        '{"shared_vcpu_fraction": 4 * 660 / (34 * 60 + 26 * 600), "capacity_lost": 0.0, "moves": 0,
          "memory_moved_bytes": 0, "mean_memory_distance": 10.0}'
figures "follow.trace: a moved domain that still shares is looked at again when its cool-down ends" \
        "$H422" follow.trace \
        '{"shared_vcpu_fraction": 60 / 660, "capacity_lost": 0.48 * 10 / 660, "moves": 2, "memory_moved_bytes": 0}' \
        --config="$tmp/pack.conf"
printf '[Placement]\nHousekeepingCPUs=11\n' >"$tmp/siblings-232.conf"
figures "flap.trace: a neighbour turning busy and idle does not move a domain at every cool-down" \
        "synthetic:pack:2 numa:1(memory=32GiB) core:3 pu:2" flap.trace '{"moves": 10, "memory_moved_bytes": 0}' \
        --config="$tmp/siblings-232.conf"
figures "nearer.trace: fewer nodes with the memory staying on them buy nothing: no move" "$H222" \
        nearer.trace '{"moves": 0, "capacity_lost": 0.0, "shared_vcpu_fraction": 0.0}'
figures "spare.trace: with cores to spare, heal gives a vCPU under half busy a core of its own" "$H122" \
        spare.trace '{"moves": 1, "shared_vcpu_fraction": 70/1290, "busy_contended_fraction": 0.0}'
figures "unplaceable.trace: a departure's heal pass places the domain that did not fit, as the daemon does" \
        "$H122" unplaceable.trace '{"unplaceable": 1, "moves": 0, "vcpus_mean": 55/60, "largest_fit_min": 1,
          "largest_fit_mean": 65/60}'
# VCPUPin=nodeset: floating vCPUs run on the CPUs of their pin, not on a reserved core of their node: both
# busy vCPUs of a 2-vCPU domain on CPU 1 (CPU 0 reserved) share it, one core lost, as with VCPUPin=core
printf '[Placement]\nReservedCPUs=0\nVCPUPin=nodeset\nHeal=no\n' >"$tmp/nodeset-reserved.conf"
printf 'start a 2 1G\ntick 100\n' >"$tmp/two.trace"
figures "VCPUPin=nodeset with CPU 0 reserved: two busy vCPUs pinned to CPU 1 share it" "$H121" "$tmp/two.trace" \
        '{"shared_vcpu_fraction": 1.0, "busy_contended_fraction": 1.0, "capacity_lost": 1.0}' \
        --config="$tmp/nodeset-reserved.conf"
printf '[Placement]\nCoreKinds=performance-only\nVCPUPin=nodeset\nHeal=no\n' >"$tmp/nodeset-kinds.conf"
printf 'start a 6 4G\ntick 100\n' >"$tmp/six.trace"
figures "VCPUPin=nodeset under CoreKinds=performance-only: 6 busy vCPUs on 4 P-cores, none on an E-core" \
        "$ROOT/tests/topologies/hybrid-small-v3.xml" "$tmp/six.trace" \
        '{"shared_vcpu_fraction": 4/6, "busy_contended_fraction": 4/6, "capacity_lost": 2.0}' \
        --config="$tmp/nodeset-kinds.conf"
# the largest fit is explicit's: d1's floating vCPU is scored beside the reserved CPU 0, on the idle core
# 0, but explicit counts it on core 3 of node 0, and has one free core left (core 7), not two
printf 'start d0 5 1G\nstart d1 1 1G\ntick 10\n' >"$tmp/fit-floating.trace"
figures "VCPUPin=nodeset: the largest fit is the free cores explicit counts, not where floating vCPUs run" \
        "synthetic:pack:2 numa:1(memory=64GiB) core:4 pu:2" "$tmp/fit-floating.trace" \
        '{"largest_fit_min": 1, "largest_fit_mean": 1.0}' --config="$tmp/nodeset-reserved.conf"
# a domain's first known sample runs a heal pass, busy or not: compat gives a busy 2-vCPU domain one core's
# two threads, and heal gives them a core each once its load is known, at 10 s, with nothing leaving
printf 'start d 2 1G\ntick 100\n' >"$tmp/known.trace"
figures "compat: the first known sample of a busy domain on its siblings runs a pass that separates them" \
        "synthetic:numa:1(memory=8GiB) core:2 pu:2" "$tmp/known.trace" \
        '{"moves": 1, "capacity_lost": 0.8 * 10 / 100, "stops": 0}' --policy=compat
printf '[Placement]\nHeal=no\n' >"$tmp/no-heal-unplaceable.conf"
figures "unplaceable.trace with Heal=no: no pass, the domain stays unplaceable" "$H122" unplaceable.trace \
        '{"unplaceable": 1, "vcpus_mean": 10/60, "largest_fit_mean": 110/60}' --config="$tmp/no-heal-unplaceable.conf"
# as above, on the 1 x 8 x 2 hosts below
printf '[Placement]\nHousekeepingCPUs=15\n' >"$tmp/siblings.conf"
figures "quarter.trace: heal keeps a quarter of the cores free, move by move" \
        "synthetic:pack:1 numa:1(memory=16GiB) core:8 pu:2" quarter.trace \
        '{"moves": 1, "shared_vcpu_fraction": 2530/9900}' --config="$tmp/siblings.conf"
printf '[Placement]\nLoadWarmup=0\n' >"$tmp/no-warmup.conf"
figures "learn.trace: the first reading is no sample, i known at 10 s, b2 healed then" "$H121" learn.trace \
        '{"busy_contended_fraction": 6/33, "moves": 1}' --config="$tmp/no-warmup.conf"
figures "learn.trace: the default warm-up counts from the start, over by the first reading" "$H121" \
        learn.trace '{"busy_contended_fraction": 6/33, "moves": 1}'
printf '[Placement]\nLoadWarmup=8\n' >"$tmp/warmup-8.conf"
figures "learn.trace: an 8 s warm-up sets the 5-10 s sample aside, i known at 15 s" "$H121" learn.trace \
        '{"busy_contended_fraction": 16/33, "moves": 1}' --config="$tmp/warmup-8.conf"

printf '[Placement]\nHeal=no\n' >"$tmp/no-heal.conf"
figures "heal.trace --config with Heal=no: c stays on a's cores, 1.6 cores lost all 60 s, no move" "$H222" \
        heal.trace '{"moves": 0, "capacity_lost": 1.6, "shared_vcpu_fraction": 6/7}' --config="$tmp/no-heal.conf"
H182="synthetic:numa:1(memory=16GiB) core:8 pu:2"
printf '[Placement]\nHousekeepingCPUs=15\nHeal=no\n' >"$tmp/siblings-no-heal.conf"
figures "host.trace: host-side load spread thin beside busy vCPUs is healed once known" "$H182" host.trace \
        '{"capacity_lost": 0.8 * 10/120, "busy_contended_fraction": 0.0, "moves": 1, "host_thread_moves": 1,
          "memory_moved_bytes": 0}' --config="$tmp/siblings.conf"
figures "host.trace --config with Heal=no: it stays beside them, 0.8 cores lost all 120 s" "$H182" host.trace \
        '{"capacity_lost": 0.8, "moves": 0}' --config="$tmp/siblings-no-heal.conf"
figures "over.trace: over a core's worth of host-side load on one thread is spread once known" "$H182" \
        over.trace '{"capacity_lost": 0.4 * 10/120, "moves": 1, "host_thread_moves": 1, "memory_moved_bytes": 0}' \
        --config="$tmp/siblings.conf"
figures "over.trace --config with Heal=no: it stays on the one thread, 0.4 cores lost all 120 s" "$H182" \
        over.trace '{"capacity_lost": 0.4, "moves": 0}' --config="$tmp/siblings-no-heal.conf"
figures "thin.trace: 0.3 cores of host-side load beside busy vCPUs get a core once known" "$H182" \
        thin.trace '{"capacity_lost": 0.3 * 0.8 * 10/120, "moves": 1, "host_thread_moves": 1, "memory_moved_bytes": 0}' \
        --config="$tmp/siblings.conf"
figures "thin.trace --config with Heal=no: they stay beside them, 0.24 cores lost all 120 s" "$H182" \
        thin.trace '{"capacity_lost": 0.3 * 0.8, "moves": 0}' --config="$tmp/siblings-no-heal.conf"
# without CPUs kept for the host the same threads start on cores no vCPU uses, counted as a core busy
# until measured: nothing lost, nothing moved, with or without heal
for tr in host over thin; do
        figures "$tr.trace, no CPUs kept for the host: its host-side threads start apart, nothing lost or moved" \
                "$H182" "$tr.trace" '{"capacity_lost": 0.0, "moves": 0}'
        figures "$tr.trace, no CPUs kept for the host, Heal=no: the same" "$H182" "$tr.trace" \
                '{"capacity_lost": 0.0, "moves": 0}' --config="$tmp/no-heal.conf"
done

# 3000 domains started, loaded and stopped by name, in no sorted order: the figures of the replay that
# looked each name up by a scan of every running domain (which took 25 s here, now 1 s)
python3 -c '
n = 3000
for i in range(n):
    print(f"start g{i * 7919 % n} {1 + i % 3} 1M busy={i * 37 % 100 / 100} host={i % 5 / 10}")
    if i % 50 == 49:
        print("tick 7")
    if i % 9 == 8:
        print(f"load g{(i - 4) * 7919 % n} busy={i * 53 % 100 / 100}")
    if i % 11 == 10:
        print(f"stop g{(i - 10) * 7919 % n}")
print("tick 60")' >"$tmp/many.trace"
figures "many.trace: 3000 domains found by name as by a scan" "synthetic:pack:2 numa:1(memory=64GiB) core:8 pu:2" \
        "$tmp/many.trace" '{"capacity_lost": 1854.6148333333338, "bound_capacity_lost": 1854.6139583333338,
          "busy_vcpus_mean": 1562.6895833333333, "vcpus_mean": 3108.76875, "starts": 3000, "stops": 272,
          "busy_contended_fraction": 0.9999906677989737, "seconds": 480.0}' --config="$tmp/no-heal.conf"

out=$("$ctl" simulate --topology="$H222" --trace="$here/heal.trace" --json)
python3 -c '
import json, sys
keys = {"shared_vcpu_fraction", "busy_contended_fraction", "capacity_lost", "moves", "memory_moved_bytes",
        "mean_memory_distance", "largest_fit_min", "largest_fit_mean"}
missing = keys - json.load(sys.stdin).keys()
if missing:
    print(" ".join(sorted(missing)))
sys.exit(1 if missing else 0)' <<<"$out" | sed 's/^/# missing: /'
report "--json holds every documented key" "${PIPESTATUS[0]}"

out=$("$ctl" simulate --topology="$H222" --trace="$here/heal.trace")
report "the text output is a table with the same figures" \
        "$(grep -Eq '^capacity lost \(cores\) +0\.67 +0\.53$' <<<"$out" && grep -Eq '^moves +1 ' <<<"$out" &&
            grep -Eq '^  host-side threads alone +0 ' <<<"$out"; echo $?)"

printf 'start a 1 1G\ntick 5\nstop b\n' >"$tmp/unknown.trace"
out=$("$ctl" simulate --topology="$H222" --trace="$tmp/unknown.trace" 2>&1)
rc=$?
report "a stop of a domain not running: exit 2 naming the file and line 3 (rc $rc)" \
        "$([ $rc -eq 2 ] && grep -q "unknown.trace:3: stop b: no such running domain" <<<"$out"; echo $?)"
out=$("$ctl" plan --topology="$H222" --trace="$tmp/unknown.trace" 2>&1)
rc=$?
report "plan says the same of it, as the parser names a line: FILE:LINE (rc $rc)" \
        "$([ $rc -eq 2 ] && grep -q "^placementctl plan: $tmp/unknown.trace:3: stop b: no such running domain" <<<"$out"; echo $?)"
printf 'start a 1 1G\nload b busy=0.5\n' >"$tmp/load-unknown.trace"
for verb in simulate plan explain; do
        out=$("$ctl" "$verb" --topology="$H222" --trace="$tmp/load-unknown.trace" 2>&1)
        rc=$?
        report "$verb: a load of a domain not running: exit 2 naming line 2, as simulate refuses it (rc $rc)" \
                "$([ $rc -eq 2 ] && grep -q "load-unknown.trace:2: load b: no such running domain" <<<"$out"; echo $?)"
done
printf 'start a 1 1G busy=2\n' >"$tmp/bad.trace"
out=$("$ctl" simulate --topology="$H222" --trace="$tmp/bad.trace" 2>&1)
rc=$?
report "busy=2: exit 2 naming line 1 (rc $rc)" \
        "$([ $rc -eq 2 ] && grep -q "bad.trace:1: busy= must be a fraction" <<<"$out"; echo $?)"
printf '<domain><name>x</name><memory unit="GiB">1</memory><vcpu>1</vcpu></domain>\n' >"$tmp/x.xml"
printf 'start a 1 1G\ndomain x.xml\n' >"$tmp/xml.trace"
out=$("$ctl" simulate --topology="$H222" --trace="$tmp/xml.trace" 2>&1)
rc=$?
report "a domain FILE.xml line: exit 2 naming line 2, not dropped without a word (rc $rc)" \
        "$([ $rc -eq 2 ] && grep -q "xml.trace:2: 'domain FILE.xml' lines are for plan and explain" <<<"$out"; echo $?)"
printf 'start a 1 1G\ndomain missing.xml\n' >"$tmp/missing.trace"
out=$("$ctl" simulate --topology="$H222" --trace="$tmp/missing.trace" 2>&1)
rc=$?
report "a domain line is refused as one whatever its file, not read first: exit 2 naming line 2 (rc $rc)" \
        "$([ $rc -eq 2 ] && grep -q "missing.trace:2: 'domain FILE.xml' lines are for plan and explain" <<<"$out" &&
                ! grep -q 'No such file' <<<"$out"; echo $?)"
out=$("$ctl" simulate --topology="$H222" 2>&1)
rc=$?
report "no --trace: exit 2 (rc $rc)" "$([ $rc -eq 2 ] && grep -q -- "--trace=FILE" <<<"$out"; echo $?)"
out=$("$ctl" simulate --topology="$H222" --trace="$here/heal.trace" --sibling-loss=1.5 2>&1)
rc=$?
report "--sibling-loss=1.5: exit 2 (rc $rc)" "$([ $rc -eq 2 ] && grep -q "fraction from 0 to 1" <<<"$out"; echo $?)"

# the documented example, bounded: both policies run to the end and report sane fractions
for policy in explicit compat; do
        out=$("$ctl" simulate --topology="synthetic:pack:2 numa:1(memory=16GiB) core:4 pu:2" \
                --trace="$ROOT/docs/examples/load.trace" --policy=$policy --json 2>&1)
        python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = r["seconds"] == 780 and 0 <= r["shared_vcpu_fraction"] <= 1 and r["capacity_lost"] >= r["bound_capacity_lost"] - 1e-9
sys.exit(0 if ok else 1)' <<<"$out"
        report "docs/examples/load.trace with $policy: 780 s replayed, capacity lost not below the bound" $?
done
