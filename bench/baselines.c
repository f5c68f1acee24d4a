/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "baselines.h"

#include <stdlib.h>
#include <string.h>

static uint64_t host_free_memory(const Occupancy *o)
{
        uint64_t sum = 0;
        for (unsigned n = 0; n < o->t->nnodes; n++)
                sum += occupancy_node_free_memory(o, n);
        return sum;
}

/* Adds what is left of memory to the nodes nearest to `from` that have room (free minus what the plan
 * already put there). Returns what could not be placed. */
static uint64_t spill_memory(const Occupancy *o, Plan *p, unsigned from, uint64_t left)
{
        const Topology *t = o->t;
        g_autofree bool *done = g_new0(bool, t->nnodes);

        while (left) {
                int best = -1;
                for (unsigned n = 0; n < t->nnodes; n++) {
                        uint64_t free = occupancy_node_free_memory(o, n);
                        if (done[n] || free <= p->node_memory[n])
                                continue;
                        if (best < 0 ||
                            topology_distance(t, from, n) < topology_distance(t, from, (unsigned)best))
                                best = (int)n;
                }
                if (best < 0)
                        break;
                done[best] = true;
                uint64_t take =
                    MIN(left, occupancy_node_free_memory(o, (unsigned)best) - p->node_memory[best]);
                p->node_memory[best] += take;
                left -= take;
        }
        return left;
}

/* ---- first-fit linear pinning ---- */

static void first_fit(const Occupancy *o, Plan *p)
{
        const Topology *t = o->t;
        g_autofree unsigned *extra = g_new0(unsigned, t->npus);
        g_autofree unsigned *on_node = g_new0(unsigned, t->nnodes);
        unsigned busiest = 0;
        uint64_t left = p->memory;
        bool stacked = false;

        for (unsigned v = 0; v < p->nvcpus; v++) {
                int pick = -1;
                for (unsigned pu = 0; pu < t->npus && pick < 0; pu++)
                        if (o->pu_load[pu] + extra[pu] == 0)
                                pick = (int)pu;
                if (pick < 0) {
                        stacked = true;
                        for (unsigned pu = 0; pu < t->npus; pu++)
                                if (pick < 0 || o->pu_load[pu] + extra[pu] < o->pu_load[pick] + extra[pick])
                                        pick = (int)pu;
                }
                p->vcpu_pu[v] = pick;
                extra[pick]++;
                on_node[occupancy_pu_node(t, (unsigned)pick)]++;
                cpuset_add(p->nodes, occupancy_pu_node(t, (unsigned)pick));
        }
        /* first touch: each vCPU's node takes its share, as far as it has room */
        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t share = p->memory / p->nvcpus * on_node[n];
                share = MIN(MIN(share, occupancy_node_free_memory(o, n)), left);
                p->node_memory[n] = share;
                left -= share;
                if (on_node[n] > on_node[busiest])
                        busiest = n;
        }
        spill_memory(o, p, busiest, left);
        p->vcpu_pin = VCPU_PIN_THREAD;
        p->result = stacked ? PLAN_OVERCOMMITTED : PLAN_PLACED;
}

/* ---- numad-like node placement ---- */

static void numad(const Occupancy *o, Plan *p)
{
        const Topology *t = o->t;
        g_autofree bool *taken = g_new0(bool, t->nnodes);
        unsigned pus = 0, free_pus = 0;
        uint64_t mem = 0, left = p->memory;

        while (mem < p->memory || pus < p->nvcpus) {
                int best = -1;
                for (unsigned n = 0; n < t->nnodes; n++)
                        if (!taken[n] && t->nodes[n].ncores &&
                            (best < 0 || occupancy_node_free_memory(o, n) >
                                             occupancy_node_free_memory(o, (unsigned)best)))
                                best = (int)n;
                if (best < 0)
                        break;
                taken[best] = true;
                cpuset_add(p->nodes, (unsigned)best);
                mem += occupancy_node_free_memory(o, (unsigned)best);
                pus += t->nodes[best].npus;
                for (unsigned c = t->nodes[best].core_first;
                     c < t->nodes[best].core_first + t->nodes[best].ncores; c++)
                        for (unsigned pu = t->cores[c].pu_first;
                             pu < t->cores[c].pu_first + t->cores[c].npus; pu++)
                                free_pus += o->pu_load[pu] == 0;
        }
        /* memory bound to the chosen nodes, most free first, evenly as far as room allows */
        for (unsigned round = 0; round < 2 && left; round++)
                CPUSET_FOREACH (n, p->nodes) {
                        uint64_t room = occupancy_node_free_memory(o, (unsigned)n) - p->node_memory[n];
                        uint64_t want = round == 0 ? p->memory / cpuset_count(p->nodes) : left;
                        uint64_t take = MIN(MIN(room, want), left);
                        p->node_memory[n] += take;
                        left -= take;
                }
        /* the vCPUs float; occupancy_rebuild() gives them the PUs the scheduler would */
        p->vcpu_pin = VCPU_PIN_NODESET;
        p->result = free_pus >= p->nvcpus ? PLAN_PLACED : PLAN_OVERCOMMITTED;
}

/* ---- Nova, dedicated CPUs, cpu_thread_policy=prefer ---- */

static unsigned node_free_pus(const Occupancy *o, unsigned n)
{
        const TopoNode *node = &o->t->nodes[n];
        unsigned free = 0;
        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                for (unsigned pu = o->t->cores[c].pu_first;
                     pu < o->t->cores[c].pu_first + o->t->cores[c].npus; pu++)
                        free += o->pu_load[pu] == 0;
        return free;
}

/* Does the split of the plan over nodes[0..k) fit? Node i takes vcpus/k (the first ones one more). */
static bool nova_fits(const Occupancy *o, const Plan *p, const unsigned *nodes, unsigned k)
{
        for (unsigned i = 0; i < k; i++) {
                unsigned v = p->nvcpus / k + (i < p->nvcpus % k);
                uint64_t m = p->memory / k + (i == 0 ? p->memory % k : 0);
                if (node_free_pus(o, nodes[i]) < v || occupancy_node_free_memory(o, nodes[i]) < m)
                        return false;
        }
        return true;
}

/* vCPUs [first, first+v) on node n: cores with most free threads first, every free thread of one core
 * before the next. */
static void nova_pack(const Occupancy *o, Plan *p, unsigned n, unsigned first, unsigned v)
{
        const Topology *t = o->t;
        const TopoNode *node = &t->nodes[n];
        g_autofree bool *used = g_new0(bool, node->ncores);

        while (v) {
                int best = -1;
                unsigned best_free = 0;
                for (unsigned i = 0; i < node->ncores; i++) {
                        const TopoCore *core = &t->cores[node->core_first + i];
                        unsigned free = 0;
                        if (used[i])
                                continue;
                        for (unsigned pu = core->pu_first; pu < core->pu_first + core->npus; pu++)
                                free += o->pu_load[pu] == 0;
                        if (free > best_free) {
                                best = (int)i;
                                best_free = free;
                        }
                }
                if (best < 0)
                        return;
                used[best] = true;
                const TopoCore *core = &t->cores[node->core_first + (unsigned)best];
                for (unsigned pu = core->pu_first; pu < core->pu_first + core->npus && v; pu++)
                        if (o->pu_load[pu] == 0) {
                                p->vcpu_pu[first++] = (int)pu;
                                v--;
                        }
        }
}

/* Next combination of k out of n in lexicographic order; false after the last. */
static bool next_combination(unsigned *c, unsigned k, unsigned n)
{
        int i = (int)k - 1;
        while (i >= 0 && c[i] == n - k + (unsigned)i)
                i--;
        if (i < 0)
                return false;
        c[i]++;
        for (unsigned j = (unsigned)i + 1; j < k; j++)
                c[j] = c[j - 1] + 1;
        return true;
}

static void nova_prefer(const Occupancy *o, Plan *p)
{
        const Topology *t = o->t;
        g_autofree unsigned *c = g_new0(unsigned, t->nnodes);

        p->vcpu_pin = VCPU_PIN_THREAD;
        p->result = PLAN_UNPLACEABLE;
        for (unsigned k = 1; k <= t->nnodes && k <= p->nvcpus; k *= 2) {
                for (unsigned i = 0; i < k; i++)
                        c[i] = i;
                do {
                        unsigned first = 0;
                        if (!nova_fits(o, p, c, k))
                                continue;
                        for (unsigned i = 0; i < k; i++) {
                                unsigned v = p->nvcpus / k + (i < p->nvcpus % k);
                                nova_pack(o, p, c[i], first, v);
                                first += v;
                                p->node_memory[c[i]] = p->memory / k + (i == 0 ? p->memory % k : 0);
                                cpuset_add(p->nodes, c[i]);
                        }
                        p->result = PLAN_PLACED;
                        return;
                } while (next_combination(c, k, t->nnodes));
        }
}

Plan *baseline_place(BaselineKind k, const Occupancy *o, const PlacementRequest *req)
{
        Plan *p = plan_new(req->name, req->vcpus, req->memory, o->t->nnodes);

        p->requested_vcpus = req->vcpus;
        if (req->vcpus == 0 || host_free_memory(o) < req->memory) {
                p->result = PLAN_UNPLACEABLE;
                p->vcpu_pin = k == BASELINE_NUMAD ? VCPU_PIN_NODESET : VCPU_PIN_THREAD;
                return p;
        }
        switch (k) {
        case BASELINE_FIRST_FIT:
                first_fit(o, p);
                break;
        case BASELINE_NUMAD:
                numad(o, p);
                break;
        default:
                nova_prefer(o, p);
                break;
        }
        return p;
}
