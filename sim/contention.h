/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Contention: what the host as the plans leave it costs the domains' real load, and what no placement
 * could beat. Scored from each plan's vcpu_pu (floating vCPUs: where occupancy.h's ideal scheduler put
 * them) and the domains' TRUE load (not what the daemon measured), identically for every policy.
 *
 * A "busy thread" is a busy vCPU (busy >= LOAD_BUSY_THRESHOLD). A core with b >= 2 busy threads
 * delivers max(1, min(b, PUs) * (1 - loss)) cores of work instead of b: each busy pair on two siblings
 * loses `loss` (0.4, the XenServer measurement) of each one's throughput, 0.8 cores; two busy threads
 * time-sharing one PU lose one core. A domain's host= load is spread evenly over its emulator pin (over
 * its vCPUs' PUs when it has none), and each core of it on a core costs what a busy thread there would,
 * pro rata: how the host-side work is cut into threads is not known, and this way spreading it thinner
 * beside busy vCPUs saves nothing (1.0 core of it beside four busy vCPUs, a quarter each, loses what one
 * busy thread beside one of them does). For busy_contended a PU the host-side load keeps busy counts as a
 * busy thread.
 */

#include <glib.h>

#include "load.h"
#include "plan.h"
#include "topology.h"

/* The loss of two busy siblings when the caller does not choose (load.h). */
#define CONTENTION_SIBLING_LOSS LOAD_SIBLING_LOSS

/* One domain as the scorer sees it. */
typedef struct ContentionDomain {
        const Plan *plan;
        double busy; /* true fraction of each vCPU busy, 0..1 */
        double host; /* true host-side busy cores */
} ContentionDomain;

typedef struct ContentionSample {
        unsigned vcpus;          /* placed vCPUs */
        unsigned shared_vcpus;   /* on a core with another vCPU */
        unsigned busy_vcpus;     /* busy >= LOAD_BUSY_THRESHOLD */
        unsigned busy_contended; /* busy vCPUs on a core with another busy thread */
        double capacity_lost;    /* cores */
        double host_lost;        /* of capacity_lost: what the host-side load on the cores adds */
        /* of capacity_lost: lost on cores whose node had a calm core (no busy vCPU, host-side load under
         * LOAD_HOST_REPIN_GAIN), and on cores whose node had none while another node had one */
        double lost_calm_node, lost_calm_elsewhere;
        double host_load; /* host-side load of the domains scored, in cores */
} ContentionSample;

/* Scores domains[0..n) on t with the given sibling loss (0..1). */
ContentionSample contention_measure(const Topology *t, const ContentionDomain *domains, unsigned n,
                                    double loss);

/* What a core with busy busy threads on npus PUs loses, in cores (load_core_lost()). */
double contention_core_lost(unsigned busy, unsigned npus, double loss);

/*
 * The bound: the least capacity any placement of busy_threads busy threads and host cores of host-side
 * load loses on t, whatever the domains' sizes, memory and nodes: while there is more busy work than
 * usable cores, the excess must double up (then triple up) on cores, the cheapest cores first. The
 * host-side load is taken as divisible, as contention_measure() charges it pro rata, so any placement
 * of it (and of the vCPUs, which do not divide) loses at least this much. Also the fewest busy vCPUs
 * that must contend (*ret_contended): busy - cores + 1 when busy exceeds the cores (the extra ones
 * stacked on one core; a different placement from the one that loses least), and how many contend in
 * the placement of the busy vCPUs alone that loses least (*ret_paired: every busy thread on a core with
 * two or more; with two-thread cores and a loss up to 0.5, twice the excess while it is at most the
 * cores). Fewer contending than *ret_paired costs capacity. Either pointer may be NULL.
 */
double contention_bound(const Topology *t, unsigned busy_threads, double host, double loss,
                        unsigned *ret_contended, unsigned *ret_paired);
