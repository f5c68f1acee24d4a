/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Timing single decisions of the engine, and filling a ledger to a given load first. */

#include <glib.h>

#include "ledger.h"
#include "plan.h"
#include "topology.h"

#define FILL_FULL 0.9
/* Fewest decisions timed per cell, whatever the budget: p99 is then at worst the 3rd largest. */
#define DECISIONS_MIN 200u

typedef struct DecisionTiming {
        double p50, p99, max; /* microseconds */
        unsigned samples;
        PlanResult result; /* the verdict on the first ledger */
        unsigned nodes;    /* nodes holding its vCPUs */
} DecisionTiming;

/* Fills l with domains that explicit places until `target` of the cores hold a vCPU (at most 200
 * refusals on the way). size 0 draws from the cloud mix (and its memory); otherwise every domain has
 * size vCPUs and 2 GiB each. Returns how many domains it holds. */
unsigned fill_ledger(Ledger *l, const Topology *t, double target, guint32 seed, unsigned size);

/* Times policy_place() of `vcpus` vCPUs (4 GiB each) under policy, rotating over states[0..nstates):
 * up to reps decisions within budget_ms, never fewer than DECISIONS_MIN (or reps). */
DecisionTiming time_decisions(const Topology *t, Ledger **states, unsigned nstates, PolicyKind policy,
                              unsigned vcpus, unsigned reps, unsigned budget_ms);

/* The same with measured load, as the daemon decides once it has measured: every other resident
 * domain busy (0.8 per vCPU), the rest idle (0.1), and the request's vCPUs alternately busy and idle.
 * On a full host that is the overcommit by load (policies/load-rules.h). */
DecisionTiming time_decisions_loaded(const Topology *t, Ledger **states, unsigned nstates, PolicyKind policy,
                                     unsigned vcpus, unsigned reps, unsigned budget_ms);
