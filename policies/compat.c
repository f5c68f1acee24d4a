/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compat: the memory-first behaviour of older planners. A node set qualifies by free memory and free
 * logical CPUs; vCPUs fill every free thread of a core before moving to the next core, so hyperthread
 * siblings are shared, and an odd vCPU takes a thread beside a busy one before it breaks a whole core
 * (as kubelet's static policy does). Kept as the escape hatch if explicit misbehaves.
 */
#include "cells.h"
#include "policy-internal.h"

/* A free thread beside a realtime vCPU is no free CPU: a FIFO vCPU that spins starves what shares its
 * core. */
static bool pu_free(const HostView *v, unsigned p)
{
        return v->pu_usable[p] && !ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p) &&
               !ledger_core_realtime(v->l, v->t->pus[p].core);
}

static unsigned compat_capacity(const HostView *v, unsigned node)
{
        const TopoNode *n = &v->t->nodes[node];
        unsigned free_pus = v->node_free_pus[node];

        for (unsigned c = n->core_first; c < n->core_first + n->ncores; c++)
                if (ledger_core_realtime(v->l, c))
                        for (unsigned p = v->t->cores[c].pu_first;
                             p < v->t->cores[c].pu_first + v->t->cores[c].npus; p++)
                                free_pus -=
                                    v->pu_usable[p] && !ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p);
        return free_pus;
}

static unsigned compat_size(const HostView *v, unsigned node)
{
        return v->node_usable_pus[node] - v->node_realtime_pus[node];
}

/* Free PUs of core c not in skip (counted up to the core's size). */
static unsigned core_free_pus(const HostView *v, const bool *skip, unsigned c)
{
        const TopoCore *core = &v->t->cores[c];
        unsigned n = 0;

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                n += pu_free(v, p) && !skip[p];
        return n;
}

/* Appends the free PUs of core c not in skip to out[*got..), up to want in all, and skips them after. */
static void take_core(const HostView *v, bool *skip, unsigned c, unsigned want, unsigned *got, unsigned *out)
{
        const TopoCore *core = &v->t->cores[c];

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus && *got < want; p++)
                if (pu_free(v, p) && !skip[p]) {
                        out[(*got)++] = p;
                        skip[p] = true;
                }
}

/* Whether a domain pinned by hand runs a vCPU on core c or holds a CPU of it for its emulator, or a domain
 * placed under explicit runs one there (it was given the core to itself: its owner's policy="compat" beside
 * it must not put another tenant on its sibling while a core is free). */
static bool hand_chosen(const HostView *v, unsigned c)
{
        return ledger_core_adopted(v->l, c) || ledger_core_held(v->l, c) || ledger_core_whole(v->l, c);
}

/*
 * want free PUs of a node's cores of class cls not in skip into out (from *got on), as kubelet's static
 * policy takes CPUs:
 * whole free cores while want holds all of a core's threads; then free threads of cores already in use
 * (by a vCPU or a reserved thread), those with fewest free threads first; then part of a whole core;
 * only last the free threads beside vCPUs (or an emulator) pinned by hand (a guest whose owner chose its
 * CPUs, as Nova's or KubeVirt's dedicated vCPUs: its siblings are not placementd's to hand out while a
 * core is free), and beside vCPUs placed under explicit (each given a core to itself).
 */
static void pick_round(const HostView *v, unsigned node_index, unsigned cls, unsigned want, bool *skip,
                       unsigned *got, unsigned *out)
{
        const TopoNode *node = &v->t->nodes[node_index];
        unsigned end = node->core_first + node->ncores;
        g_autofree bool *taken = g_new0(bool, MAX(node->ncores, 1));

        for (unsigned c = node->core_first; c < end && *got < want; c++)
                if (policy_core_class(v, c) == cls && v->core_free[c] &&
                    core_free_pus(v, skip, c) <= want - *got) {
                        take_core(v, skip, c, want, got, out);
                        taken[c - node->core_first] = true;
                }
        for (unsigned k = 1; k <= v->t->max_threads && *got < want; k++)
                for (unsigned c = node->core_first; c < end && *got < want; c++)
                        if (policy_core_class(v, c) == cls && !v->core_free[c] && !hand_chosen(v, c) &&
                            core_free_pus(v, skip, c) == k)
                                take_core(v, skip, c, want, got, out);
        for (unsigned c = node->core_first; c < end && *got < want; c++)
                if (policy_core_class(v, c) == cls && v->core_free[c] && !taken[c - node->core_first])
                        take_core(v, skip, c, want, got, out);
        for (unsigned k = 1; k <= v->t->max_threads && *got < want; k++)
                for (unsigned c = node->core_first; c < end && *got < want; c++)
                        if (policy_core_class(v, c) == cls && !v->core_free[c] && hand_chosen(v, c) &&
                            core_free_pus(v, skip, c) == k)
                                take_core(v, skip, c, want, got, out);
}

/* pick_round() over the node's core classes (policy_core_class()), the most performant first. */
static void pick_classes(const HostView *v, unsigned node_index, unsigned want, bool *skip, unsigned *got,
                         unsigned *out)
{
        const TopoNode *node = &v->t->nodes[node_index];
        unsigned next = 0;

        while (*got < want) {
                unsigned cls = UINT_MAX;
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                        if (policy_core_class(v, c) >= next && policy_core_class(v, c) < cls)
                                cls = policy_core_class(v, c);
                if (cls == UINT_MAX)
                        return;
                pick_round(v, node_index, cls, want, skip, got, out);
                next = cls + 1;
        }
}

/*
 * want free PUs of a node into out (pick_round()), those the user keeps for the domain's own QEMU threads
 * (<emulatorpin>, <iothreadpin>) only when the others are too few. Returns how many it found (want, when
 * the node's free PUs were counted into the quota).
 */
static unsigned pick_pus(const HostView *v, unsigned node_index, unsigned want, unsigned *out)
{
        const Topology *t = v->t;
        const TopoNode *node = &t->nodes[node_index];
        g_autofree bool *skip = g_new0(bool, MAX(t->npus, 1));
        bool kept = false;
        unsigned got = 0;

        /* only the node's PUs are looked at (a request's user-kept CPUs checked once per node) */
        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        kept |= skip[p] = policy_user_thread_cpu(v->req, t->pus[p].os_index);
        pick_classes(v, node_index, want, skip, &got, out);
        if (got < want && kept) {
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                        for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus;
                             p++)
                                skip[p] &= !policy_user_thread_cpu(v->req, t->pus[p].os_index);
                pick_classes(v, node_index, want, skip, &got, out);
        }
        return got;
}

static void compat_assign(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        g_autofree unsigned *capacity = g_new(unsigned, MAX(n, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        g_autofree unsigned *pus = g_new(unsigned, MAX(plan->nvcpus, 1));

        for (unsigned i = 0; i < n; i++)
                capacity[i] = compat_capacity(v, nodes[i]);
        cells_vcpu_nodes(v, nodes, n, capacity, plan, NULL, vcpu_node, NULL);
        cells_follow_guest(v, plan, vcpu_node);
        for (unsigned i = 0; i < n; i++) {
                unsigned want = 0, got, k = 0;

                for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                        want += vcpu_node[vcpu] == (int)nodes[i];
                if (!want)
                        continue;
                got = pick_pus(v, nodes[i], want, pus);
                for (unsigned vcpu = 0; vcpu < plan->nvcpus && k < got; vcpu++)
                        if (vcpu_node[vcpu] == (int)nodes[i])
                                plan->vcpu_pu[vcpu] = (int)pus[k++];
        }
}

const PolicyOps policy_compat_ops = {
    .kind = POLICY_COMPAT,
    .unit = "free CPUs",
    .unit_one = "free CPU",
    .capacity = compat_capacity,
    .size = compat_size,
    .assign = compat_assign,
    .overcommit_by_core = false,
};
