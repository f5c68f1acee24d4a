/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The placement engine's entry point: a pure function from (topology, ledger, request, params) to a
 * plan. No I/O, no logging, no globals. It always returns a plan, whatever the request: when nothing
 * qualifies the plan says overcommitted or unplaceable and why.
 */

#include "ledger.h"
#include "plan.h"
#include "topology.h"

/* Returns a new plan (never NULL) made with params->policy. The ledger is not changed. */
Plan *policy_place(const Topology *t, const Ledger *l, const PlacementRequest *req, const PlacementParams *params);
