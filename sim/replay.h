/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Replay: a trace (lib/core/trace.h) run through the engine and the healer the daemon runs, on a
 * topology, with time. What `placementctl simulate` prints and what bench/ scores.
 *
 * Starts, stops and load changes happen at the current time; `tick S` lets S seconds pass (a trace with
 * no tick at all is replayed as if one second passed after each event). The replay follows the daemon's
 * configuration and timing ([Placement] LoadInterval=, Heal=, HealInterval=, HealMaxMoves=,
 * HealMemoryBudget=, MemoryBinding=): every LoadInterval seconds each domain's load is measured (its mean
 * over the interval, one raw sample) and smoothed by lib/core/load.h with the daemon's half-lives and
 * LoadWarmup=; the engine sees only what was measured. As in the daemon, a domain's first measurement
 * after its start only reads its counters (a fraction needs two readings), and it is unknown, so all
 * busy, until its first sample after the warm-up. A departure
 * arms one heal pass (policies/heal.h) HealInterval seconds later (later departures join it), which first
 * places the unplaceable domains again, as the daemon does (manager_place_unplaceable()); a measurement
 * that changes a domain's load class (its busy vCPUs, busy host-side threads) runs one right after it
 * (bringing forward one armed for later); a pass that used all its moves arms another; a
 * moved domain is left alone for its cool-down (heal_cooling_note(), policies/heal.h: 600 s after a move
 * of memory, 60 s after one that moved none, doubling for a re-pin that follows the last soon). With
 * MemoryBinding=yes a domain's memory is bound once, to the nodes of its first plan, and later requests
 * carry that binding (MEMORY_SOURCE_BOUND, placementd's own), as the daemon's do on a running domain.
 *
 * Every figure is weighted by time: the state between two events counts for the seconds it held. They
 * are scored from the domains' TRUE load (sim/contention.h), and against the bound no placement could
 * beat at each instant.
 *
 * The engine is the default placer; bench/ plugs in baselines (SimPlacer) to be scored the same way.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "heal.h"
#include "load.h"
#include "occupancy.h"
#include "ledger.h"
#include "plan.h"
#include "setscan.h"
#include "topology.h"
#include "trace.h"

/* The largest fit is asked in domains of this much memory per vCPU. */
#define SIM_FIT_MEMORY_PER_VCPU (UINT64_C(2) << 30)

/* One running domain. */
typedef struct SimDomain {
        char *name;
        unsigned vcpus;
        uint64_t memory;
        double busy, host;                   /* its true load now (the trace's) */
        double busy_sum, host_sum, sum_time; /* integrals since its last sample */
        bool read;                           /* its counters were read once (a first measurement) */
        DomainLoad *load;                    /* what was measured, smoothed */
        Plan *plan;                          /* its current plan (the sim's copy) */
        HealCooling cooling;                 /* a heal pass leaves it alone until cooling.until (heal.h) */
        CpuSet *bound_nodes; /* node OS indexes its memory was bound to when placed (MemoryBinding=yes);
                              * NULL: unbound. Bound once, as libvirt allows on a running domain */
} SimDomain;

/* A placer other than the engine (bench baselines). */
typedef struct SimPlacer {
        /* A new domain's plan, on the host as o (the running plans) leaves it. Never NULL. */
        Plan *(*place)(void *data, const Occupancy *o, const PlacementRequest *req);
        /* Called after each measurement, when not NULL: a new plan for at most one running domain
         * (*ret_index into domains), or NULL. o counts every running plan. */
        Plan *(*rebalance)(void *data, const Occupancy *o, SimDomain *const *domains, unsigned n,
                           unsigned *ret_index);
        /* How often rebalance runs (seconds); 0: after every measurement. */
        double rebalance_sec;
        void *data;
} SimPlacer;

/* The host as the replay holds it, for an observer: every figure up to date. */
typedef struct SimView {
        const Topology *t;
        const Ledger *ledger; /* the engine's; NULL with a placer */
        const Occupancy *occ;
        GPtrArray *plans; /* Plan*, the running domains' in start order */
        const SetScan *scan;
        unsigned largest_fit; /* setscan_largest_fit() at SIM_FIT_MEMORY_PER_VCPU */
        double now;
} SimView;

/* Sees the replay as it goes (bench/ scores its own figures this way); any member may be NULL. */
typedef struct SimObserver {
        /* A start is about to be placed on the host as it is. */
        void (*before_start)(void *data, const SimView *v, const TraceEvent *e);
        /* An event was applied; started is the new plan of a start, NULL otherwise. */
        void (*after_event)(void *data, const SimView *v, const TraceEvent *e, const Plan *started);
        /* The state held from `from` for dt seconds (warm-up included). */
        void (*state)(void *data, const SimView *v, double from, double dt);
        void *data;
} SimObserver;

typedef struct SimParams {
        const PlacementParams *placement; /* the engine's settings (Policy=, Fit=, ...) */
        bool heal;                        /* Heal= (and Apply=yes, HealMaxMoves= above 0) */
        bool use_load;                    /* LoadInterval= above 0: load is measured and used */
        double interval_sec;              /* LoadInterval= */
        double load_warmup_sec;           /* LoadWarmup=: a domain's first samples set aside */
        double heal_interval_sec;         /* HealInterval= */
        unsigned heal_max_moves;          /* HealMaxMoves= */
        uint64_t heal_memory_budget;      /* HealMemoryBudget= */
        bool memory_binding;              /* MemoryBinding= (with Apply=yes): memory bound once, at start */
        double sibling_loss;              /* what a busy pair on siblings loses (0.4) */
        const SimPlacer *placer;          /* NULL: the engine */
        double measure_from;              /* figures count from this time on (a warm-up before it) */
        const SimObserver *observer;      /* NULL: none */
        const char *source;               /* the trace's file, for messages (FILE:LINE: ...); NULL: none */
        /* Diagnosis only (bench/ breaks the gap to the bound down by cause; the daemon has none of them): */
        bool oracle_load;         /* the engine and healer see the true load at once, unsmoothed */
        bool heal_every_interval; /* a heal pass at every measurement, armed or not */
        bool heal_unbounded;      /* no move cap, memory budget or cool-down */
        bool step_every_sample;   /* a measurement at a time even once nothing changes (sim_replay()) */
} SimParams;

/* What the daemon would do with configuration c (which must outlive p). */
void sim_params_from_config(SimParams *p, const Config *c);

typedef struct SimReport {
        double seconds; /* time the trace covers */
        unsigned starts, stops, overcommitted, unplaceable;
        double shared_vcpu_fraction;    /* vCPUs on a core with another vCPU / resident vCPUs */
        double busy_contended_fraction; /* busy vCPUs on a core with another busy thread / busy vCPUs */
        double capacity_lost;           /* cores, time mean */
        double bound_capacity_lost;     /* what no placement could beat, time mean */
        double bound_busy_contended_fraction;   /* the fewest busy vCPUs any placement has contending */
        double bound_paired_contended_fraction; /* those contending where the bound loses least */
        unsigned moves;
        unsigned host_thread_moves; /* of moves: heal's re-pins of host-side threads alone */
        uint64_t memory_moved_bytes;
        double mean_memory_distance; /* vCPU to its memory, by bytes; local = 10 */
        unsigned largest_fit_min;
        double largest_fit_mean;
        double busy_vcpus_mean;    /* busy vCPUs resident, time mean */
        double vcpus_mean;         /* resident vCPUs, time mean */
        double host_capacity_lost; /* of capacity_lost: what busy host-side threads add, time mean */
        /* of capacity_lost: while a calm core was on the losing core's node, and while one was on another
         * node only (ContentionSample), time means; the rest was lost with no calm core anywhere */
        double calm_node_capacity_lost, calm_elsewhere_capacity_lost;
} SimReport;

/*
 * Replays trace (TraceEvent*) on t. Returns 0 and fills *ret, or -EINVAL with *ret_error naming the
 * line as the trace parser does, "SOURCE:LINE: EVENT NAME: problem" (a start of a running name, a stop or
 * load of one not running; "line LINE: ..." without p->source).
 */
int sim_replay(const Topology *t, const SimParams *p, const GPtrArray *trace, SimReport *ret,
               char **ret_error);
