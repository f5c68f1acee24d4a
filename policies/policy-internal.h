/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared between the policy driver and the policies: the PolicyOps table. Everything a policy decides is
 * a member here; the driver (policy.c), the set search, overcommit and finishing ask it and never test
 * which policy runs. A new policy is one file defining its PolicyOps and one row in policy_table
 * (policy.c); docs/algorithm.md lists what each member must do.
 */

#include "host-view.h"

typedef struct PolicyOps {
        PolicyKind kind;
        /* What capacity counts, as the reason names it ("free cores"), and one of it ("free core"). */
        const char *unit, *unit_one;
        /* What a node offers this policy as room: free whole cores (explicit) or free PUs (compat). */
        unsigned (*capacity)(const HostView *v, unsigned node);
        /* What a node physically holds for it, busy or not: usable cores (explicit) or PUs (compat). */
        unsigned (*size)(const HostView *v, unsigned node);
        /* Gives each vCPU of plan a PU (plan->vcpu_pu) inside nodes[0..n), whose capacity suffices. */
        void (*assign)(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan);
        /* Overcommitted, vCPUs go to the least loaded core first (true) or the least loaded PU (false). */
        bool overcommit_by_core;
        /* The room one core offers, in capacity's unit (1 for a free core, or its free PUs), so that the set
         * search can tell whether a node's share fits one L3 group. NULL: the L3 does not choose sets. */
        unsigned (*core_room)(const HostView *v, unsigned core);
} PolicyOps;

extern const PolicyOps policy_explicit_ops;
extern const PolicyOps policy_compat_ops;

/* The ops of policy k (explicit for a kind no row holds). */
const PolicyOps *policy_ops(PolicyKind k);

/* policy_place() with the given ops instead of params->policy's. */
Plan *policy_place_ops(const PolicyOps *ops, const Topology *t, const Ledger *l, const PlacementRequest *req,
                       const PlacementParams *params);

/*
 * Splits count over nodes[0..n) as evenly as their capacities allow (round robin over nodes with room,
 * nodes with more room first). quota[i] receives node i's share. Returns how many could not be given.
 */
unsigned policy_spread(const unsigned *capacity, unsigned n, unsigned count, unsigned *quota);

/* Spreads plan->memory over plan->nodes: in proportion to the vCPUs on each, then wherever room is left. */
void policy_spread_memory(const HostView *v, Plan *plan);
/* Memory the request binds (memory_source not NONE) counted where it is bound: a cell's on its <memnode>
 * nodes, the rest on the first node under preferred, an even share of each node otherwise. */
void policy_charge_bound_memory(const HostView *v, const PlacementRequest *req, Plan *plan);
/* Hugepage-backed memory counted on a node without a pool of its size cannot be held there (QEMU cannot
 * back it, the ledger refuses it): dropped from the plan. */
void policy_drop_poolless_memory(const Topology *t, Plan *plan);
/* The memory a set must hold for req: bound memory is where it is and does not choose the set (the
 * request's binding: 0; its cells' <memnode> elements: their memory taken out). */
uint64_t policy_set_memory(const PlacementRequest *req);
/* The same as the room it takes: hugepage-backed memory in the whole pages QEMU backs it in, each guest
 * cell apart (placement_request_cell_pool_bytes()), without cells the whole guest's; two 33 MiB cells of
 * 2 MiB pages need 68 MiB of a set's pools, not 66. policy_set_memory() for a guest without hugepages. */
uint64_t policy_set_need(const PlacementRequest *req);
/* Whether the request's emulator (EmulatorPin=siblings) needs a free core of its set: no idle sibling can
 * take it (a host without SMT, or every vCPU realtime, whose siblings stay empty) and no HousekeepingCPUs=.
 */
bool policy_housekeeping_needs_core(const HostView *v);
/* Pins vCPU i of plan by plan->vcpu_pin: its core's usable PUs, its PU, or (the set) left as it is. */
void policy_pin_vcpu(const HostView *v, Plan *plan, unsigned i);
/* Sets plan->shared_vcpus from the ledger and the plan's own vCPUs. */
void policy_count_shared(const HostView *v, Plan *plan);
/* Whether a PU of core is kept for the host (ReservedCPUs=, or outside the guests' cpuset:
 * TopoCore.host_thread): its other PUs share the core with host work. */
bool policy_core_reserved(const HostView *v, unsigned core);
/* Whether every usable PU of core is held for another domain's QEMU threads (Plan.held_pus): on a host
 * without SMT, an isolated emulator's CPU is its core whole, and a vCPU there would run on that CPU. */
bool policy_core_wholly_held(const HostView *v, unsigned core);
/* The order cores are used in: cores under an L3 before those under none, then the most performant kind
 * first (CoreKinds=any: kinds alike). Lower is used first. */
unsigned policy_core_class(const HostView *v, unsigned c);
/* Whether core c holds a vCPU of plan. */
bool policy_own_core(const HostView *v, const Plan *plan, unsigned c);
/* Whether core c holds one of the plan's realtime vCPUs (plan_vcpu_realtime()): the core is that vCPU's,
 * SMT sibling included. */
bool policy_own_realtime_core(const HostView *v, const Plan *plan, unsigned c);
/* Whether PU p is usable and no vCPU runs on it, neither another domain's (the ledger) nor plan's. */
bool policy_pu_vacant(const HostView *v, const Plan *plan, unsigned p);
/* Whether CPU os (OS index) is one the user keeps for QEMU's own threads: in its <emulatorpin>, or in the
 * cpuset of an <iothreadpin> of its own (req->kept_iothreads). */
bool policy_user_thread_cpu(const PlacementRequest *req, unsigned os);
/* The nodes (indexes) of those CPUs of v's request that are its own (a core or two, none of the host's
 * ReservedCPUs=/HousekeepingCPUs=, none on a core another domain runs or holds a thread on), NULL when
 * there are none or they lie on every node: among equally near sets with room, one with such a node wins
 * (no PCI device of a known node deciding). Caller frees. */
CpuSet *policy_user_thread_nodes(const HostView *v);
/* Whether core c has such a CPU (policy_user_thread_cpu()): vCPUs take it last. */
bool policy_core_user_thread(const HostView *v, unsigned c);
