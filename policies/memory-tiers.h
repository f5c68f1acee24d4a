/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Memory tiers: DRAM (and the kinds MemoryTiers= names) first; HBM, NVM and CXL memory only when no set
 * of those has room; GPU memory never. The policy driver places a request once with the first tiers;
 * when that leaves it without room it places it again with the lower tiers too, and keeps the better.
 */

#include "plan.h"
#include "topology.h"

/* Lower-tier kinds holding memory on t that params does not use first (1 << NodeKind bits). */
unsigned memory_tiers_held_back(const Topology *t, const PlacementParams *params);

/* Appends to plan's reason where memory of a lower tier went (and why), and that GPU memory was left
 * out when the plan is unplaceable on a host that has some. last_resort: the lower tiers were opened
 * because no set of the first tiers had room. */
void memory_tiers_note(const Topology *t, bool last_resort, Plan *plan);
