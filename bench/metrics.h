/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Placement-quality metrics, the same code for every policy. Counted over the measurement window of a
 * workload (after its warm-up):
 *   - sibling contention: the share of resident vCPUs on a core that holds another vCPU, averaged over
 *     time; and at each start, the new domain's vCPUs that landed on such a core, and how many of those
 *     were avoidable (some candidate node set had enough free whole cores and memory for the domain);
 *   - over-spread: domains whose vCPUs and memory span more nodes than the smallest candidate set that
 *     could hold them (free whole cores and free memory; when no set has the free cores, enough cores in
 *     all and free memory);
 *   - the mean NUMA distance from each started vCPU to its memory (by bytes per node; local = 10);
 *   - the policy's verdicts (placed, overcommitted, unplaceable);
 *   - fragmentation: the largest domain (2 GiB per vCPU) explicit would still place, min and time mean.
 */

#include <stdint.h>

#include "occupancy.h"
#include "plan.h"

#define METRICS_FIT_MEMORY_PER_VCPU (UINT64_C(2) << 30)

typedef struct QualityMetrics {
        unsigned starts, placed, overcommitted, unplaceable;
        uint64_t vcpus_started, shared_at_start, avoidable;
        unsigned judged, overspread; /* domains with vCPUs or memory somewhere, and those over-spread */
        unsigned overspread_overcommitted; /* of which the policy called overcommitted */
        double distance_sum;               /* over started vCPUs with memory */
        uint64_t distance_vcpus;
        double distance_placed_sum; /* the same over domains the policy called placed */
        uint64_t distance_placed_vcpus;
        double shared_time, vcpu_time; /* integrals of shared and resident vCPUs over time */
        double fit_time, window;       /* integral of the largest fit; time measured */
        unsigned fit_min;
        bool fit_seen;
} QualityMetrics;

/* What the host offered just before a domain started, from setscan. */
typedef struct StartContext {
        unsigned min_nodes_free;     /* 0: no set had the free whole cores and memory */
        unsigned min_nodes_capacity; /* fallback need when min_nodes_free is 0 */
} StartContext;

void metrics_init(QualityMetrics *m);

/* vCPUs of p on a core that holds at least one other vCPU (its own or another domain's). */
unsigned metrics_shared_vcpus(const Occupancy *o, const Plan *p);
/* Nodes holding p's vCPUs (its node set for floating vCPUs) or memory. */
unsigned metrics_nodes_used(const Topology *t, const Plan *p);

/* A domain started: p is its plan, o the occupancy with it in place. */
void metrics_record_start(QualityMetrics *m, const Occupancy *o, const Plan *p, const StartContext *ctx);
/* The host stayed as o (plans, oldest first) for dt time units, with largest_fit from setscan. */
void metrics_record_state(QualityMetrics *m, const Occupancy *o, GPtrArray *plans, unsigned largest_fit,
                          double dt);

/* Derived figures. */
double metrics_shared_share(const QualityMetrics *m);       /* % of resident vCPUs, time mean */
double metrics_start_shared_share(const QualityMetrics *m); /* % of started vCPUs */
double metrics_overspread_share(const QualityMetrics *m);   /* % of judged domains */
double metrics_mean_distance(const QualityMetrics *m);
double metrics_mean_distance_placed(const QualityMetrics *m);
double metrics_fit_mean(const QualityMetrics *m);
