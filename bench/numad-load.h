/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * baseline: numad acting on measured load, for the load benchmark ONLY. Placement at start is
 * bench/baselines.c's numad (nodes by free memory, vCPUs floating there, memory bound). Then, like numad's
 * scan every 5-15 s, after each measurement it looks at the domains by measured CPU use (busy vCPUs plus
 * host-side cores, as smoothed by lib/core/load.h; unknown counts every vCPU), most first: for the first one
 * using at least half a CPU whose nodes are not the best, it picks nodes by numad's magnitude (idle CPUs
 * x free memory, the domain's own use counted as its own) until they hold its measured use at 85% and its
 * memory, and moves it there (one move per scan, as numad does). Scored, like every baseline, through
 * sim/occupancy.h's ideal scheduler for floating vCPUs.
 */

#include "replay.h"

/* The SimPlacer of this baseline (static; no data). */
const SimPlacer *numad_load_placer(void);
/* The SimPlacer of bench/baselines.c's kind k, placing at start only. */
const SimPlacer *baseline_placer(unsigned kind);
