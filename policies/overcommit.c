/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Overcommit: the set a request with no room goes to, and the least loaded cores it shares there. */
#include "overcommit.h"
#include "cells.h"

/* For overcommit: does a come closer than b to the target of capacity, then to the size of a vCPU each? */
static bool closer_fit(const SetLoad *a, const SetLoad *b, unsigned target, unsigned vcpus)
{
        unsigned ca = MIN(a->capacity, target), cb = MIN(b->capacity, target);
        if (ca != cb)
                return ca > cb;
        return MIN(a->size, vcpus) > MIN(b->size, vcpus);
}

/* Four counts as one number that orders like them, most significant first (each saturates at 65535). */
static uint64_t pack_key(unsigned a, unsigned b, unsigned c, unsigned d)
{
        return (uint64_t)MIN(a, 0xffffu) << 48 | (uint64_t)MIN(b, 0xffffu) << 32 |
               (uint64_t)MIN(c, 0xffffu) << 16 | MIN(d, 0xffffu);
}

/*
 * Each vCPU on the least loaded core (by core: explicit) or PU (compat) of the set, this plan's own
 * vCPUs counted as they land. A core with a reserved thread (ReservedCPUs=) ranks after cores as loaded
 * without one: its free thread shares the core with host work, so it comes after wholly free cores and
 * before cores with one more vCPU. Ties go to the core holding fewest of the domain's own vCPUs (a domain
 * should not halve itself on one core while another is as busy), then to the node holding fewest of
 * them, then to the lower index.
 */
void overcommit_assign(const HostView *v, const PolicyOps *ops, const unsigned *nodes, unsigned n,
                       Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *pu_load = g_new0(unsigned, MAX(t->npus, 1));
        /* twice the vCPUs on the core, plus one when it has a reserved thread */
        g_autofree unsigned *core_load = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree unsigned *own_core = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree unsigned *on_node = g_new0(unsigned, MAX(t->nnodes, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        GArray *pus = g_array_new(FALSE, FALSE, sizeof(unsigned)); /* the set's usable PUs */
        bool by_core = ops->overcommit_by_core;

        /* a guest cell stays on one node that is big enough for it, busy or not */
        cells_pack_shared(v, nodes, n, plan, vcpu_node);

        for (unsigned i = 0; i < n; i++) {
                const TopoNode *node = &t->nodes[nodes[i]];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        const TopoCore *core = &t->cores[c];
                        core_load[c] = 2 * ledger_core_load(v->l, c) + policy_core_reserved(v, c);
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                pu_load[p] = ledger_pu_load(v->l, p);
                                if (v->pu_usable[p])
                                        g_array_append_val(pus, p);
                        }
                }
        }
        for (unsigned vcpu = 0; vcpu < plan->nvcpus && pus->len; vcpu++) {
                int best = -1;
                uint64_t best_key = UINT64_MAX;

                for (unsigned k = 0; k < pus->len; k++) {
                        unsigned p = g_array_index(pus, unsigned, k), c = t->pus[p].core;
                        if (vcpu_node[vcpu] >= 0 && t->cores[c].node != (unsigned)vcpu_node[vcpu])
                                continue;
                        /* the four keys of the rule above, most significant first, packed to compare once */
                        uint64_t key =
                            pack_key(by_core ? core_load[c] : pu_load[p], own_core[c],
                                     by_core ? pu_load[p] : core_load[c], on_node[t->cores[c].node]);
                        if (best < 0 || key < best_key) {
                                best = (int)p;
                                best_key = key;
                        }
                }
                plan->vcpu_pu[vcpu] = best;
                pu_load[best]++;
                core_load[t->pus[best].core] += 2;
                own_core[t->pus[best].core]++;
                on_node[t->cores[t->pus[best].core].node]++;
        }
        g_array_unref(pus);
}

/*
 * One pass over the ranked sets: the first that holds target, size_goal and the memory (passes 0 and 1,
 * which skip smaller sets untouched), or the closest fit among all that hold the memory (pass 2).
 */
static bool search_pass(const SetSearch *s, Plan *plan, unsigned pass, unsigned target, unsigned size_goal,
                        uint32_t need_mask, SetChoice *out)
{
        const NodeSetTable *table = s->table;
        bool need_all = need_mask != 0;
        RankIter it;
        int rank;

        rank_iter_init(&it, table, 0,
                       pass < 2 ? set_sums_min_nodes(&s->sums, target, size_goal, s->memory) : 1);
        while ((rank = rank_iter_next(&it)) >= 0) {
                unsigned r = (unsigned)rank;
                const NodeSet *set = &table->candidates[r];
                SetLoad load;

                if (pass < 2 ? !set_sums_may_hold(&s->sums, set, target, size_goal, s->memory)
                             : !set_sums_may_fit(&s->sums, set, 0, s->memory))
                        continue;
                if (!set_inside(s->v, set, s->allowed_mask))
                        continue;
                /* when every free core is wanted, a set must hold every node that has one */
                if (pass < 2 && need_all && (set->mask & need_mask) != need_mask)
                        continue;
                load = set_sums_get(&s->sums, set);
                if (load.free_memory < s->memory || load.usable_pus == 0)
                        continue;
                if (plan->candidates->len < POLICY_KEEP_CANDIDATES)
                        keep_candidate(s->v, plan, r, set, &load, false, false);
                if (load.capacity >= target && load.size >= size_goal) {
                        out->rank = (int)r;
                        out->load = load;
                        break;
                }
                if (pass == 2 && (out->rank < 0 || closer_fit(&load, &out->load, target, s->vcpus))) {
                        out->rank = (int)r;
                        out->load = load;
                }
        }
        rank_iter_done(&it);
        return out->rank >= 0;
}

bool overcommit_search(const SetSearch *s, Plan *plan, SetChoice *out)
{
        const HostView *v = s->v;
        unsigned target = MIN(s->vcpus, s->host.capacity);
        bool need_all = s->table->has_masks && target == s->host.capacity && s->host.capacity > 0;
        uint32_t need_mask = 0;

        *out = (SetChoice){.rank = -1};
        for (unsigned n = 0; need_all && n < v->t->nnodes; n++)
                if (v->node_capacity[n] > 0)
                        need_mask |= UINT32_C(1) << n;
        if (s->host.free_memory < s->memory)
                return false;
        /* pass 0: the nearest set with the target and a vCPU's size each; pass 1, when the host is smaller
         * than that: the nearest set with the target and all the host has; pass 2 (only when unreachable
         * nodes keep the whole host from being a set): the closest fit among all that hold the memory. */
        for (unsigned pass = 0; pass < 3; pass++) {
                unsigned size_goal =
                    pass == 0 ? s->vcpus : MIN(s->vcpus, s->sums.best_size[s->table->nnodes]);

                if (pass == 1 && size_goal == s->vcpus)
                        continue; /* pass 0 looked for exactly this */
                if (search_pass(s, plan, pass, target, size_goal, need_mask, out))
                        return true;
        }
        return false;
}
