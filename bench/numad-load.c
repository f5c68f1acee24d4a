/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "numad-load.h"
#include "baselines.h"

#include <math.h>

/* numad's target: a process's nodes should have its measured CPU use at this utilisation. */
#define NUMAD_TARGET_UTILISATION 0.85
/* numad's scan interval lies between 5 and 15 s; the replay measures every 10 s. */
#define NUMAD_SCAN_SEC 10.0

static Plan *place_kind(void *data, const Occupancy *o, const PlacementRequest *req)
{
        return baseline_place((BaselineKind)GPOINTER_TO_UINT(data), o, req);
}

/* Measured CPU use of d, in CPUs: busy vCPUs plus host-side cores; every vCPU busy while unknown. */
static double measured_use(const SimDomain *d)
{
        const double *busy = domain_load_vcpu_busy(d->load);
        double sum = d->load->known ? d->load->host_busy : 0;

        for (unsigned v = 0; v < d->vcpus; v++)
                sum += busy && v < d->load->nvcpus ? busy[v] : 1.0;
        return sum;
}

/* Each node's idle CPUs, by what the domains measured use, spread over their nodes. */
static void node_idle(const Occupancy *o, SimDomain *const *domains, unsigned n, double *idle)
{
        const Topology *t = o->t;

        for (unsigned i = 0; i < t->nnodes; i++)
                idle[i] = t->nodes[i].npus;
        for (unsigned i = 0; i < n; i++) {
                unsigned nn = cpuset_count(domains[i]->plan->nodes);
                double use = measured_use(domains[i]);
                CPUSET_FOREACH (node, domains[i]->plan->nodes)
                        idle[node] -= use / nn;
        }
}

/* The nodes numad would choose for d, by magnitude, its own use and memory counted as free. */
static CpuSet *best_nodes(const Occupancy *o, const SimDomain *d, const double *idle)
{
        const Topology *t = o->t;
        const Plan *p = d->plan;
        g_autofree double *cpu = g_new(double, t->nnodes);
        g_autofree uint64_t *mem = g_new(uint64_t, t->nnodes);
        double use = measured_use(d), have_cpu = 0;
        uint64_t have_mem = 0;
        CpuSet *nodes = cpuset_new();

        for (unsigned n = 0; n < t->nnodes; n++) {
                bool own = cpuset_has(p->nodes, n);
                cpu[n] = idle[n] + (own ? use / cpuset_count(p->nodes) : 0);
                mem[n] = occupancy_node_free_memory(o, n) + (n < p->nnode_memory ? p->node_memory[n] : 0);
        }
        while (have_cpu < use / NUMAD_TARGET_UTILISATION || have_mem < p->memory) {
                int best = -1;
                double best_mag = -INFINITY;
                for (unsigned n = 0; n < t->nnodes; n++) {
                        double mag = MAX(cpu[n], 0) * (double)mem[n];
                        if (!cpuset_has(nodes, n) && t->nodes[n].ncores && mag > best_mag) {
                                best = (int)n;
                                best_mag = mag;
                        }
                }
                if (best < 0)
                        break;
                cpuset_add(nodes, (unsigned)best);
                have_cpu += MAX(cpu[best], 0);
                have_mem += mem[best];
        }
        return nodes;
}

/* d's plan on nodes: vCPUs floating there, memory spread evenly as far as room allows. */
static Plan *numad_plan(const Occupancy *o, const SimDomain *d, const CpuSet *nodes)
{
        Plan *p = plan_copy(d->plan);
        uint64_t left = p->memory;

        cpuset_clear(p->nodes);
        cpuset_union(p->nodes, nodes);
        for (unsigned n = 0; n < p->nnode_memory; n++)
                p->node_memory[n] = 0;
        for (unsigned round = 0; round < 2 && left; round++)
                CPUSET_FOREACH (n, nodes) {
                        uint64_t free = occupancy_node_free_memory(o, (unsigned)n) +
                                        d->plan->node_memory[n] - p->node_memory[n];
                        uint64_t want = round == 0 ? p->memory / cpuset_count(nodes) : left;
                        uint64_t take = MIN(MIN(free, want), left);
                        p->node_memory[n] += take;
                        left -= take;
                }
        return p;
}

static gint by_use_desc(gconstpointer a, gconstpointer b)
{
        double x = measured_use(*(SimDomain *const *)a), y = measured_use(*(SimDomain *const *)b);
        return x < y ? 1 : x > y ? -1 : 0;
}

static Plan *numad_rebalance(void *data, const Occupancy *o, SimDomain *const *domains, unsigned n,
                             unsigned *ret_index)
{
        g_autofree double *idle = g_new(double, o->t->nnodes);
        g_autoptr(GPtrArray) order = g_ptr_array_new();

        (void)data;
        node_idle(o, domains, n, idle);
        for (unsigned i = 0; i < n; i++)
                if (domains[i]->plan->vcpu_pin == VCPU_PIN_NODESET &&
                    domains[i]->plan->result != PLAN_UNPLACEABLE)
                        g_ptr_array_add(order, domains[i]);
        g_ptr_array_sort(order, by_use_desc);
        for (unsigned k = 0; k < order->len; k++) {
                const SimDomain *d = g_ptr_array_index(order, k);
                g_autoptr(CpuSet) nodes = NULL;
                if (measured_use(d) < 0.5)
                        break;
                nodes = best_nodes(o, d, idle);
                if (cpuset_is_empty(nodes) || cpuset_equal(nodes, d->plan->nodes))
                        continue;
                for (unsigned i = 0; i < n; i++)
                        if (domains[i] == d)
                                *ret_index = i;
                return numad_plan(o, d, nodes);
        }
        return NULL;
}

const SimPlacer *numad_load_placer(void)
{
        static const SimPlacer p = {
            .place = place_kind,
            .rebalance = numad_rebalance,
            .rebalance_sec = NUMAD_SCAN_SEC,
            .data = GUINT_TO_POINTER(BASELINE_NUMAD),
        };
        return &p;
}

const SimPlacer *baseline_placer(unsigned kind)
{
        static SimPlacer placers[_BASELINE_MAX];

        placers[kind] = (SimPlacer){.place = place_kind, .data = GUINT_TO_POINTER(kind)};
        return &placers[kind];
}
