/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "occupancy.h"

#include <string.h>

Occupancy *occupancy_new(const Topology *t)
{
        Occupancy *o = g_new0(Occupancy, 1);

        o->t = t;
        o->pu_load = g_new0(unsigned, MAX(t->npus, 1));
        o->core_load = g_new0(unsigned, MAX(t->ncores, 1));
        o->node_used = g_new0(uint64_t, MAX(t->nnodes, 1));
        return o;
}

void occupancy_free(Occupancy *o)
{
        if (!o)
                return;
        g_free(o->pu_load);
        g_free(o->core_load);
        g_free(o->node_used);
        g_free(o);
}

static void count(Occupancy *o, int pu)
{
        if (pu < 0)
                return;
        o->pu_load[pu]++;
        o->core_load[o->t->pus[pu].core]++;
}

/* The least loaded core of the plan's nodes, then its least loaded PU; lowest index on ties. */
static int least_loaded_pu(const Occupancy *o, const Plan *p)
{
        const Topology *t = o->t;
        int best_core = -1, best_pu = -1;

        CPUSET_FOREACH (n, p->nodes) {
                const TopoNode *node = &t->nodes[n];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                        if (best_core < 0 || o->core_load[c] < o->core_load[best_core])
                                best_core = (int)c;
        }
        if (best_core < 0)
                return -1;
        for (unsigned pu = t->cores[best_core].pu_first;
             pu < t->cores[best_core].pu_first + t->cores[best_core].npus; pu++)
                if (best_pu < 0 || o->pu_load[pu] < o->pu_load[best_pu])
                        best_pu = (int)pu;
        return best_pu;
}

void occupancy_rebuild(Occupancy *o, GPtrArray *plans)
{
        const Topology *t = o->t;

        memset(o->pu_load, 0, sizeof(unsigned) * t->npus);
        memset(o->core_load, 0, sizeof(unsigned) * t->ncores);
        memset(o->node_used, 0, sizeof(uint64_t) * t->nnodes);
        for (unsigned i = 0; i < plans->len; i++) {
                const Plan *p = g_ptr_array_index(plans, i);
                for (unsigned n = 0; n < t->nnodes && n < p->nnode_memory; n++)
                        o->node_used[n] += p->node_memory[n];
                if (p->vcpu_pin == VCPU_PIN_NODESET)
                        continue;
                for (unsigned v = 0; v < p->nvcpus; v++)
                        count(o, p->vcpu_pu[v]);
        }
        for (unsigned i = 0; i < plans->len; i++) {
                Plan *p = g_ptr_array_index(plans, i);
                if (p->vcpu_pin != VCPU_PIN_NODESET || p->result == PLAN_UNPLACEABLE)
                        continue;
                for (unsigned v = 0; v < p->nvcpus; v++) {
                        p->vcpu_pu[v] = least_loaded_pu(o, p);
                        count(o, p->vcpu_pu[v]);
                }
        }
}

uint64_t occupancy_node_free_memory(const Occupancy *o, unsigned node)
{
        uint64_t total = o->t->nodes[node].memory;
        return total > o->node_used[node] ? total - o->node_used[node] : 0;
}
