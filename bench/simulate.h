/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The quality benchmark's simulator: replays a workload on a topology under one policy through
 * sim/replay.c (no load, no heal). explicit and compat run the real engine (policy_place() on a Ledger);
 * the baselines run bench/baselines.c. Every policy is scored by bench/metrics.c from the same Occupancy
 * model, through the replay's observer.
 */

#include <glib.h>

#include "metrics.h"
#include "topology.h"
#include "workload.h"

typedef enum SimPolicy {
        SIM_EXPLICIT,
        SIM_COMPAT,
        SIM_FIRST_FIT,
        SIM_NUMAD,
        SIM_NOVA_PREFER,
        _SIM_POLICY_MAX,
} SimPolicy;

typedef struct SimPoint {
        double time;
        unsigned largest_fit;
} SimPoint;

typedef struct SimResult {
        QualityMetrics m;
        GArray *series;  /* SimPoint: the largest fit sampled at regular times (SimSeries) */
        unsigned checks; /* engine policies: largest fit cross-checked against policy_place() */
        unsigned mismatches;
        double seconds; /* wall time of the replay */
} SimResult;

const char *sim_policy_name(SimPolicy p);
bool sim_policy_is_engine(SimPolicy p);

/* Which samples of the largest fit to keep: points samples evenly over the first `window` time units
 * after the warm-up (the whole measured window when 0). points 0 keeps none. */
typedef struct SimSeries {
        unsigned points;
        double window;
} SimSeries;

/* Replays w on t under p into *out (free with sim_result_clear). */
void simulate(const Topology *t, const Workload *w, SimPolicy p, const SimSeries *series, SimResult *out);
void sim_result_clear(SimResult *r);
