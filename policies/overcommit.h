/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Overcommit: where a request goes when no node set has room for it, and how its vCPUs share. */

#include "set-search.h"

/*
 * Cores first: the fewest vCPUs should share, so the set needs as much capacity as the host can offer
 * (the target: SetSearch.wanted, every vCPU unless measured load says fewer are busy); then locality: the
 * nearest such set that holds the memory and, busy or not, the size of a vCPU each. On a full host that is a
 * near set, not the whole host. Failing that, the memory-fitting set that comes closest. Keeps the
 * candidates it looks at on plan. False (out->rank -1) when memory fits nowhere.
 */
bool overcommit_search(const SetSearch *s, Plan *plan, SetChoice *out);

/* Each vCPU of plan on the least loaded core or PU (ops->overcommit_by_core) of nodes[0..n). */
void overcommit_assign(const HostView *v, const PolicyOps *ops, const unsigned *nodes, unsigned n,
                       Plan *plan);
