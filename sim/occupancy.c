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

/* Whether vCPU v of p may run on pu: its pin holds it (a plan without pins, a baseline's, floats over all of
 * its nodes' PUs). */
static bool pu_in_pin(const Topology *t, const Plan *p, unsigned v, unsigned pu)
{
        const CpuSet *pin = p->vcpu_pins ? p->vcpu_pins[v] : NULL;

        return !pin || cpuset_is_empty(pin) || cpuset_has(pin, t->pus[pu].os_index);
}

/* How much of core c vCPU v of p may run on: 0 none of its PUs, 1 some (the others reserved for the host,
 * say), 2 all. */
static unsigned core_in_pin(const Topology *t, const Plan *p, unsigned v, unsigned c)
{
        unsigned in = 0;

        for (unsigned pu = t->cores[c].pu_first; pu < t->cores[c].pu_first + t->cores[c].npus; pu++)
                in += pu_in_pin(t, p, v, pu);
        return in == 0 ? 0 : in < t->cores[c].npus ? 1 : 2;
}

/* Keeps core c in *best when vCPU v of p may run there and it is less loaded than *best, or as loaded and
 * more of it is in the pin. */
static void consider_core(const Occupancy *o, const Plan *p, unsigned v, unsigned c, int *best,
                          unsigned *best_in)
{
        unsigned in = core_in_pin(o->t, p, v, c);

        if (in && (*best < 0 || o->core_load[c] < o->core_load[*best] ||
                   (o->core_load[c] == o->core_load[*best] && in > *best_in))) {
                *best = (int)c;
                *best_in = in;
        }
}

/* The least loaded core of the plan's nodes that vCPU v's pin holds a PU of (never a core the
 * configuration keeps whole, nor another kind under CoreKinds=performance-only; of the whole host when
 * the pin holds none of its nodes'), a core wholly in the pin before one the host keeps a thread of (as
 * the engine takes those last), then its least loaded PU of the pin; lowest index on ties. */
static int least_loaded_pu(const Occupancy *o, const Plan *p, unsigned v)
{
        const Topology *t = o->t;
        int best_core = -1, best_pu = -1;
        unsigned best_in = 0;

        CPUSET_FOREACH (n, p->nodes) {
                const TopoNode *node = &t->nodes[n];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                        consider_core(o, p, v, c, &best_core, &best_in);
        }
        for (unsigned c = 0; best_core < 0 && c < t->ncores; c++)
                consider_core(o, p, v, c, &best_core, &best_in);
        if (best_core < 0)
                return -1;
        for (unsigned pu = t->cores[best_core].pu_first;
             pu < t->cores[best_core].pu_first + t->cores[best_core].npus; pu++)
                if (pu_in_pin(t, p, v, pu) && (best_pu < 0 || o->pu_load[pu] < o->pu_load[best_pu]))
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
                        p->vcpu_pu[v] = least_loaded_pu(o, p, v);
                        count(o, p->vcpu_pu[v]);
                }
        }
}

uint64_t occupancy_node_free_memory(const Occupancy *o, unsigned node)
{
        uint64_t total = o->t->nodes[node].memory;
        return total > o->node_used[node] ? total - o->node_used[node] : 0;
}
