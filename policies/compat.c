/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compat: the memory-first behaviour of older planners. A node set qualifies by free memory and free
 * logical CPUs; vCPUs fill every free thread of a core before moving to the next core, so hyperthread
 * siblings are shared. Kept as the escape hatch if explicit misbehaves.
 */
#include "cells.h"
#include "policy-internal.h"

static unsigned compat_capacity(const HostView *v, unsigned node)
{
        return v->node_free_pus[node];
}

static unsigned compat_size(const HostView *v, unsigned node)
{
        return v->node_usable_pus[node];
}

static void compat_assign(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        g_autofree unsigned *capacity = g_new(unsigned, MAX(n, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));

        for (unsigned i = 0; i < n; i++)
                capacity[i] = v->node_free_pus[nodes[i]];
        cells_vcpu_nodes(v, nodes, n, capacity, plan, vcpu_node);
        for (unsigned i = 0; i < n; i++) {
                const TopoNode *node = &v->t->nodes[nodes[i]];
                unsigned vcpu = 0;
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        const TopoCore *core = &v->t->cores[c];
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                if (!v->pu_usable[p] || ledger_pu_load(v->l, p))
                                        continue;
                                while (vcpu < plan->nvcpus && vcpu_node[vcpu] != (int)nodes[i])
                                        vcpu++;
                                if (vcpu == plan->nvcpus)
                                        break;
                                plan->vcpu_pu[vcpu++] = (int)p;
                        }
                }
        }
}

const PolicyOps policy_compat_ops = {
    .kind = POLICY_COMPAT,
    .unit = "free CPUs",
    .capacity = compat_capacity,
    .size = compat_size,
    .assign = compat_assign,
    .overcommit_by_core = false,
};
