/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Workloads for the simulator: domains arriving and leaving. Generated from a seed (Poisson arrivals,
 * exponential lifetimes, a cloud-like size mix) so that the offered load is a chosen fraction of the
 * host's cores, or read from a trace file (lib/core/trace.h), one event per time unit.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct SimEvent {
        double time;
        bool start;
        unsigned id; /* domain number, unique in the workload */
        unsigned vcpus;
        uint64_t memory;
} SimEvent;

typedef struct Workload {
        GArray *events; /* SimEvent, by time; at equal times stops come first */
        unsigned ndomains;
        double warmup;     /* metrics count from here ... */
        double end;        /* ... to here */
        double mean_vcpus; /* of the size mix as drawn (after capping at the host) */
} Workload;

typedef struct WorkloadSpec {
        guint32 seed;
        unsigned host_cores; /* sizes above this are drawn again */
        double load;         /* mean vCPUs resident / host cores, e.g. 0.9 */
        unsigned arrivals;
        double mean_lifetime;    /* time units */
        double warmup_lifetimes; /* how many mean lifetimes to skip before measuring */
} WorkloadSpec;

Workload *workload_generate(const WorkloadSpec *spec);
/* From a parsed trace (GPtrArray of TraceEvent*): event i happens at time i; no warm-up. Stops of
 * unknown names are dropped. */
Workload *workload_from_trace(const GPtrArray *trace);
void workload_free(Workload *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Workload, workload_free)

/* One draw from the size mix: vCPUs (none above cap), and memory for that many vCPUs. */
unsigned workload_draw_vcpus(GRand *r, unsigned cap);
uint64_t workload_draw_memory(GRand *r, unsigned vcpus);

/* The size mix (for the documentation): vCPU counts, their weights, and GiB per vCPU with weights. */
extern const unsigned workload_vcpu_sizes[], workload_vcpu_weights[], workload_nsizes;
extern const unsigned workload_gib_per_vcpu[], workload_gib_weights[], workload_ngib;
