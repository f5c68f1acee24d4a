/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "setscan.h"
#include "nodesets.h"
#include "policy.h"

struct SetScan {
        const Topology *t;
        unsigned n;           /* candidates */
        unsigned *size;       /* [n] nodes in the set */
        unsigned *all_cores;  /* [n] cores in the set */
        unsigned *free_cores; /* [n] */
        uint64_t *free_mem;   /* [n] */
        uint32_t *mask;       /* [n] node mask when the table is exhaustive */
        unsigned *node_free_cores;
        uint64_t *node_free_mem;
        unsigned *mask_cores; /* [2^nnodes] when exhaustive */
        uint64_t *mask_mem;
        bool *core_kept;         /* [ncores] the host keeps a thread of it (setscan_set_host()) */
        uint64_t memory_reserve; /* bytes of each node the host keeps */
};

SetScan *setscan_new(const Topology *t)
{
        const NodeSetTable *table = t->nodesets;
        SetScan *s = g_new0(SetScan, 1);
        bool by_mask = t->nnodes <= NODESETS_EXHAUSTIVE_MAX;

        s->t = t;
        s->n = table->ncandidates;
        s->size = g_new0(unsigned, MAX(s->n, 1));
        s->all_cores = g_new0(unsigned, MAX(s->n, 1));
        s->free_cores = g_new0(unsigned, MAX(s->n, 1));
        s->free_mem = g_new0(uint64_t, MAX(s->n, 1));
        s->node_free_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        s->node_free_mem = g_new0(uint64_t, MAX(t->nnodes, 1));
        s->core_kept = g_new0(bool, MAX(t->ncores, 1));
        for (unsigned c = 0; c < t->ncores; c++)
                s->core_kept[c] = t->cores[c].host_thread;
        if (by_mask) {
                s->mask = g_new0(uint32_t, MAX(s->n, 1));
                s->mask_cores = g_new0(unsigned, (gsize)1 << t->nnodes);
                s->mask_mem = g_new0(uint64_t, (gsize)1 << t->nnodes);
        }
        for (unsigned c = 0; c < s->n; c++) {
                const NodeSet *set = &table->candidates[c];
                const unsigned *m = nodeset_members(table, set);
                s->size[c] = set->nnodes;
                for (unsigned i = 0; i < set->nnodes; i++) {
                        s->all_cores[c] += t->nodes[m[i]].ncores;
                        if (by_mask)
                                s->mask[c] |= UINT32_C(1) << m[i];
                }
        }
        return s;
}

void setscan_free(SetScan *s)
{
        if (!s)
                return;
        g_free(s->size);
        g_free(s->all_cores);
        g_free(s->free_cores);
        g_free(s->free_mem);
        g_free(s->mask);
        g_free(s->node_free_cores);
        g_free(s->node_free_mem);
        g_free(s->mask_cores);
        g_free(s->mask_mem);
        g_free(s->core_kept);
        g_free(s);
}

void setscan_set_host(SetScan *s, const PlacementParams *params)
{
        const Topology *t = s->t;

        for (unsigned c = 0; c < t->ncores; c++) {
                s->core_kept[c] = t->cores[c].host_thread;
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (policy_keeps_pu(t, params, p) ||
                            (params->unavailable_cpus &&
                             cpuset_has(params->unavailable_cpus, t->pus[p].os_index)))
                                s->core_kept[c] = true;
        }
        s->memory_reserve = params->memory_reserve;
}

void setscan_update(SetScan *s, const Occupancy *o)
{
        const Topology *t = s->t;
        const NodeSetTable *table = t->nodesets;

        for (unsigned n = 0; n < t->nnodes; n++) {
                const TopoNode *node = &t->nodes[n];
                s->node_free_cores[n] = 0;
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                        s->node_free_cores[n] += o->core_load[c] == 0 && !s->core_kept[c];
                s->node_free_mem[n] = occupancy_node_free_memory(o, n);
                s->node_free_mem[n] =
                    s->node_free_mem[n] > s->memory_reserve ? s->node_free_mem[n] - s->memory_reserve : 0;
        }
        if (s->mask) {
                for (uint32_t m = 1; m < (UINT32_C(1) << t->nnodes); m++) {
                        unsigned low = (unsigned)__builtin_ctz(m);
                        s->mask_cores[m] = s->mask_cores[m & (m - 1)] + s->node_free_cores[low];
                        s->mask_mem[m] = s->mask_mem[m & (m - 1)] + s->node_free_mem[low];
                }
                for (unsigned c = 0; c < s->n; c++) {
                        s->free_cores[c] = s->mask_cores[s->mask[c]];
                        s->free_mem[c] = s->mask_mem[s->mask[c]];
                }
                return;
        }
        for (unsigned c = 0; c < s->n; c++) {
                const NodeSet *set = &table->candidates[c];
                const unsigned *m = nodeset_members(table, set);
                s->free_cores[c] = 0;
                s->free_mem[c] = 0;
                for (unsigned i = 0; i < set->nnodes; i++) {
                        s->free_cores[c] += s->node_free_cores[m[i]];
                        s->free_mem[c] += s->node_free_mem[m[i]];
                }
        }
}

unsigned setscan_min_nodes_free(const SetScan *s, unsigned vcpus, uint64_t memory)
{
        unsigned best = 0;

        for (unsigned c = 0; c < s->n; c++)
                if (s->free_cores[c] >= vcpus && s->free_mem[c] >= memory && (!best || s->size[c] < best))
                        best = s->size[c];
        return best;
}

unsigned setscan_min_nodes_capacity(const SetScan *s, unsigned vcpus, uint64_t memory)
{
        unsigned best = 0;

        for (unsigned c = 0; c < s->n; c++)
                if (s->all_cores[c] >= vcpus && s->free_mem[c] >= memory && (!best || s->size[c] < best))
                        best = s->size[c];
        return best;
}

unsigned setscan_largest_fit(const SetScan *s, uint64_t memory_per_vcpu)
{
        unsigned best = 0;

        for (unsigned c = 0; c < s->n; c++) {
                uint64_t by_mem = s->free_mem[c] / memory_per_vcpu;
                unsigned fit = (unsigned)MIN((uint64_t)s->free_cores[c], by_mem);
                best = MAX(best, fit);
        }
        return best;
}
