/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Finishing a plan once its vCPUs have PUs: pins, memory, emulator and the reason. */

#include "set-search.h"

/*
 * Pins, memory (spread, or counted where the request binds it), shared vCPUs, the emulator's CPUs and
 * the reason of plan, PLAN_PLACED or PLAN_OVERCOMMITTED on choice, its vCPUs already given PUs.
 */
void finish_plan(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                 const SetChoice *choice, Plan *plan);

/* The emulator and I/O threads of plan chosen again for where its vCPUs are now (a re-pin moved them):
 * what EmulatorPin= and measured load would give them, the user's own pins left alone. */
void finish_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan);

/* The reason of a PLAN_UNPLACEABLE plan; host: what every reachable node offers together. */
void finish_unplaceable(const HostView *v, const PlacementRequest *req, const SetLoad *host, Plan *plan);
