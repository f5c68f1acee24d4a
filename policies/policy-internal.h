/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared between the policy driver and the policies: the host as one request sees it. */

#include "ledger.h"
#include "plan.h"
#include "topology.h"

typedef struct HostView {
        const Topology *t;
        const Ledger *l;
        const PlacementParams *params;
        const PlacementRequest *req; /* its constraints shape the view; NULL = none */
        bool *node_allowed;          /* [nnodes] inside the request's node and CPU constraints */
        bool *pu_usable;             /* [npus] not reserved for the host, allowed for the request */
        bool *core_free;             /* [ncores] no vCPU counted, none of its PUs reserved, one usable */
        unsigned *node_free_cores;   /* [nnodes] */
        unsigned *node_free_pus;     /* [nnodes] usable PUs with no vCPU */
        uint64_t *node_free_memory;  /* [nnodes] after MemoryReserve and what the ledger holds */
        unsigned *node_usable_pus;   /* [nnodes] PUs not reserved */
        unsigned *node_usable_cores; /* [nnodes] cores with at least one PU not reserved */
        unsigned *node_capacity;     /* [nnodes] what the policy counts: free cores or free PUs */
        uint64_t *node_load;         /* [nnodes] vCPUs counted on its PUs */
} HostView;

typedef struct PolicyOps {
        PolicyKind kind;
        /* What a node offers this policy: free whole cores (explicit) or free PUs (compat). */
        unsigned (*capacity)(const HostView *v, unsigned node);
        /* Gives each vCPU of plan a PU (plan->vcpu_pu) inside nodes[0..n), whose capacity suffices. */
        void (*assign)(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan);
} PolicyOps;

extern const PolicyOps policy_explicit_ops;
extern const PolicyOps policy_compat_ops;

/*
 * Splits count over nodes[0..n) as evenly as their capacities allow (round robin over nodes with room,
 * nodes with more room first). quota[i] receives node i's share. Returns how many could not be given.
 */
unsigned policy_spread(const unsigned *capacity, unsigned n, unsigned count, unsigned *quota);

/* First PU of core c that is usable (not reserved), or -1. */
int policy_core_first_usable_pu(const HostView *v, unsigned core);

void host_view_init(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params);
/*
 * The host as one request sees it: nodes outside its memory nodes, or whose CPUs its allowed CPUs all
 * leave out, offer nothing (no PU, no core, no memory); inside them a core counts through its allowed
 * PUs only. req may be NULL (no constraints).
 */
void host_view_init_for(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params,
                        const PlacementRequest *req);
void host_view_done(HostView *v);

/* Spreads plan->memory over plan->nodes: in proportion to the vCPUs on each, then wherever room is left. */
void policy_spread_memory(const HostView *v, Plan *plan);
/* Sets plan->shared_vcpus from the ledger and the plan's own vCPUs. */
void policy_count_shared(const HostView *v, Plan *plan);
