/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* Small helpers for the policy tests: place and commit, look at cores. */

#include "ledger.h"
#include "policy.h"
#include "topology.h"

#define GiB (UINT64_C(1) << 30)

static inline PlacementParams test_params(PolicyKind k)
{
        return (PlacementParams){
            .policy = k, .vcpu_pin = VCPU_PIN_CORE, .emulator_pin = EMULATOR_PIN_SIBLINGS};
}

/* 3 nodes of 2 cores x 2 threads, 8 GiB each, in a line: node 1 nearer to node 0 than node 2 is. */
static inline Topology *test_three_nodes_in_line(void)
{
        static const uint32_t distance[] = {10, 20, 30, 20, 10, 20, 30, 20, 10};

        return topology_new_uniform(3, 2, 2, 8 * GiB, distance);
}

/* Places and commits; returns the committed plan (owned by the ledger). */
static inline const Plan *test_place(const Topology *t, Ledger *l, const PlacementParams *p,
                                     const char *name, unsigned vcpus, uint64_t memory)
{
        PlacementRequest req = {.name = name, .vcpus = vcpus, .memory = memory};
        Plan *plan = policy_place(t, l, &req, p);
        ck_assert_int_eq(ledger_commit(l, name, plan), 0);
        return ledger_lookup(l, name);
}

/* The memory the plan counts on its own nodes (Plan.nodes), summed. */
static inline uint64_t test_memory_on_own_nodes(const Plan *plan)
{
        uint64_t sum = 0;

        CPUSET_FOREACH (n, plan->nodes)
                if ((unsigned)n < plan->nnode_memory)
                        sum += plan->node_memory[n];
        return sum;
}

static inline unsigned test_plan_node_count(const Plan *p)
{
        return cpuset_count(p->nodes);
}

/* Largest number of this plan's vCPUs counted on one core. */
static inline unsigned test_max_per_core(const Topology *t, const Plan *p)
{
        g_autofree unsigned *n = g_new0(unsigned, t->ncores);
        unsigned max = 0;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned core;
                if (p->vcpu_pu[i] < 0)
                        continue;
                core = t->pus[p->vcpu_pu[i]].core;
                n[core]++;
                if (n[core] > max)
                        max = n[core];
        }
        return max;
}

/* A domain of its own with cores cores of node core_node (from its first) and memory on mem_node. */
static inline void test_hold(const Topology *t, Ledger *l, const char *name, unsigned core_node,
                             unsigned cores, unsigned mem_node, uint64_t memory)
{
        g_autoptr(Plan) f = plan_new(name, cores, memory, t->nnodes);

        f->result = PLAN_PLACED;
        for (unsigned i = 0; i < cores; i++)
                f->vcpu_pu[i] = (int)t->cores[t->nodes[core_node].core_first + i].pu_first;
        f->node_memory[mem_node] = memory;
        cpuset_add(f->nodes, core_node);
        ck_assert_int_eq(ledger_commit(l, name, plan_copy(f)), 0);
}
