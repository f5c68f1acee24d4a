/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * explicit: one free physical core per vCPU. Within a node, cores of one kind (hybrid CPUs: the most
 * performant kind that has enough free cores; cores outside any L3 last) are taken from one L3 group
 * when one can hold the node's share (the tightest such group, to keep larger groups whole for larger
 * domains), otherwise from the groups with most free cores first, so neighbouring vCPU numbers share an
 * L3; inside an L3 group the same rule picks L2 clusters (E-core modules).
 */
#include "cells.h"
#include "policy-internal.h"

#include <stdlib.h>
#include <string.h>

static unsigned explicit_capacity(const HostView *v, unsigned node)
{
        return v->node_free_cores[node];
}

static unsigned explicit_core_room(const HostView *v, unsigned core)
{
        return v->core_free[core];
}

static unsigned explicit_size(const HostView *v, unsigned node)
{
        return v->node_usable_cores[node] - v->node_realtime_cores[node];
}

typedef struct {
        unsigned id;
        unsigned nfree;
} GroupCount;

static int compare_groups_desc(const void *pa, const void *pb)
{
        const GroupCount *a = pa, *b = pb;
        if (a->nfree != b->nfree)
                return a->nfree > b->nfree ? -1 : 1;
        return a->id < b->id ? -1 : a->id > b->id;
}

/* Cache levels cores are grouped by, outermost first; past the last, cores go in index order. */
enum { LEVEL_L3, LEVEL_L2, _LEVEL_MAX };

static unsigned group_of(const TopoCore *c, unsigned level)
{
        return level == LEVEL_L3 ? c->l3 : c->l2;
}

/*
 * Takes want of the free cores cand[0..n) (ascending) into out, by cache level: all from the tightest
 * group that holds them (keeping larger groups whole for larger domains), else from the groups with most
 * free cores first; inside a group, the same by the next level. Returns how many were taken.
 */
static unsigned take_grouped(const Topology *t, const unsigned *cand, unsigned n, unsigned want,
                             unsigned level, unsigned *out)
{
        g_autofree GroupCount *groups = NULL;
        g_autofree unsigned *sub = NULL;
        unsigned ngroups = 0, got = 0;
        int best = -1;

        want = MIN(want, n);
        if (level == _LEVEL_MAX || want == 0) {
                memcpy(out, cand, sizeof(*out) * want);
                return want;
        }
        groups = g_new0(GroupCount, n);
        sub = g_new(unsigned, n);
        for (unsigned i = 0; i < n; i++) {
                unsigned id = group_of(&t->cores[cand[i]], level), g;
                for (g = 0; g < ngroups && groups[g].id != id; g++)
                        ;
                if (g == ngroups)
                        groups[ngroups++] = (GroupCount){id, 0};
                groups[g].nfree++;
        }
        for (unsigned g = 0; g < ngroups; g++)
                if (groups[g].nfree >= want && (best < 0 || groups[g].nfree < groups[best].nfree))
                        best = (int)g;
        if (best < 0)
                qsort(groups, ngroups, sizeof(*groups), compare_groups_desc);
        for (unsigned g = best < 0 ? 0 : (unsigned)best; g < ngroups && got < want; g++) {
                unsigned nsub = 0;
                for (unsigned i = 0; i < n; i++)
                        if (group_of(&t->cores[cand[i]], level) == groups[g].id)
                                sub[nsub++] = cand[i];
                got += take_grouped(t, sub, nsub, want - got, level + 1, out + got);
        }
        return got;
}

/* Of the n cores in sub, keeps those without the user's own emulator CPUs when they are enough for want
 * (the user keeps those CPUs for QEMU's threads); the class was chosen without looking at them. */
static unsigned keep_off_emulator(const HostView *v, unsigned *sub, unsigned n, unsigned want)
{
        unsigned plain = 0;

        for (unsigned i = 0; i < n; i++)
                plain += !policy_core_user_thread(v, sub[i]);
        if (plain == n || plain < want)
                return n;
        plain = 0;
        for (unsigned i = 0; i < n; i++)
                if (!policy_core_user_thread(v, sub[i]))
                        sub[plain++] = sub[i];
        return plain;
}

/* Of the n cores in sub, keeps those where placementd pins no other domain's emulator or I/O threads
 * (ledger_core_threads()) when they are enough for want: a vCPU there shares its core with those threads,
 * and goes there only when no truly free core is left. */
static unsigned keep_off_others_threads(const HostView *v, unsigned *sub, unsigned n, unsigned want)
{
        unsigned plain = 0;

        for (unsigned i = 0; i < n; i++)
                plain += !ledger_core_threads(v->l, sub[i]);
        if (plain == n || plain < want)
                return n;
        plain = 0;
        for (unsigned i = 0; i < n; i++)
                if (!ledger_core_threads(v->l, sub[i]))
                        sub[plain++] = sub[i];
        return plain;
}

/* The first class (kind) of a node with want free cores not taken; UINT_MAX when none has that many. */
static unsigned fitting_class(const HostView *v, unsigned node_index, unsigned want, const bool *taken)
{
        const TopoNode *node = &v->t->nodes[node_index];
        unsigned fits = UINT_MAX;

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                unsigned cls, count = 0;
                if (!v->core_free[c] || taken[c] || (cls = policy_core_class(v, c)) >= fits)
                        continue;
                for (unsigned d = node->core_first; d < node->core_first + node->ncores; d++)
                        count += v->core_free[d] && !taken[d] && policy_core_class(v, d) == cls;
                if (count >= want)
                        fits = cls;
        }
        return fits;
}

/*
 * want free cores of a node: all of class fits when it is not UINT_MAX (fitting_class() of the node's
 * whole share: the domain's vCPUs there, each guest cell's part of it picked apart, stay on one kind);
 * otherwise the classes in order, each as far as it goes. Within a class, by L3 then L2 (take_grouped).
 */
static unsigned pick_cores(const HostView *v, unsigned node_index, unsigned want, unsigned fits,
                           const bool *taken, unsigned *out)
{
        const TopoNode *node = &v->t->nodes[node_index];
        g_autofree unsigned *cand = g_new(unsigned, node->ncores + 1);
        g_autofree unsigned *cls = g_new(unsigned, node->ncores + 1);
        g_autofree unsigned *sub = g_new(unsigned, node->ncores + 1);
        unsigned n = 0, got = 0, next = 0;

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                if (v->core_free[c] && !taken[c]) {
                        cls[n] = policy_core_class(v, c);
                        cand[n++] = c;
                }
        while (got < want) {
                unsigned k = fits, nsub = 0;

                if (fits == UINT_MAX) { /* the next class up from `next` */
                        k = UINT_MAX;
                        for (unsigned i = 0; i < n; i++)
                                if (cls[i] >= next && cls[i] < k)
                                        k = cls[i];
                        if (k == UINT_MAX)
                                break;
                        next = k + 1;
                }
                for (unsigned i = 0; i < n; i++)
                        if (cls[i] == k)
                                sub[nsub++] = cand[i];
                nsub = keep_off_emulator(v, sub, nsub, want - got);
                nsub = keep_off_others_threads(v, sub, nsub, want - got);
                got += take_grouped(v->t, sub, nsub, want - got, LEVEL_L3, out + got);
                if (fits != UINT_MAX)
                        break;
        }
        return got;
}

/* vCPUs the real nodes could not take go to the CPUs local to no NUMA node in nodes[0..n), if any. */
static void give_rest_to_nodeless(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
                                  int *vcpu_node)
{
        unsigned vcpu = 0;

        for (unsigned i = 0; i < n; i++) {
                unsigned room = v->t->nodes[nodes[i]].no_local_memory ? v->node_free_cores[nodes[i]] : 0;

                for (; vcpu < plan->nvcpus && room; vcpu++)
                        if (vcpu_node[vcpu] < 0) {
                                vcpu_node[vcpu] = (int)nodes[i];
                                room--;
                        }
        }
}

static void explicit_assign(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        g_autofree unsigned *capacity = g_new(unsigned, MAX(n, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        g_autofree unsigned *cores = g_new(unsigned, MAX(plan->nvcpus, 1));
        g_autofree bool *taken = g_new0(bool, MAX(v->t->ncores, 1));
        g_autofree int *cell_of = g_new(int, MAX(plan->nvcpus, 1)); /* ncells: in no cell */

        for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                cell_of[vcpu] = (int)plan->ncells;
        for (unsigned c = 0; c < plan->ncells; c++)
                CPUSET_FOREACH (vcpu, plan->cells[c].vcpus)
                        if ((unsigned)vcpu < plan->nvcpus)
                                cell_of[vcpu] = (int)c;
        /* CPUs local to no NUMA node take only what the real nodes cannot */
        for (unsigned i = 0; i < n; i++)
                capacity[i] = v->t->nodes[nodes[i]].no_local_memory ? 0 : v->node_free_cores[nodes[i]];
        cells_vcpu_nodes(v, nodes, n, capacity, plan, NULL, vcpu_node, NULL);
        cells_follow_guest(v, plan, vcpu_node);
        give_rest_to_nodeless(v, nodes, n, plan, vcpu_node);
        /* each guest cell's share of a node is picked on its own, so that it takes one L3 group of its
         * own when one holds it (the guest schedules each cell as a node); the vCPUs of no cell last. The
         * kind is the node's share's, as without cells: one kind for all of them when one has room (else
         * each cell's own, one kind for it when one has room for it). */
        for (unsigned i = 0; i < n; i++) {
                unsigned share = 0, fits;
                for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                        share += vcpu_node[vcpu] == (int)nodes[i];
                fits = fitting_class(v, nodes[i], share, taken);
                for (unsigned c = 0; c <= plan->ncells; c++) {
                        unsigned want = 0, got, k = 0;
                        for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                                want += vcpu_node[vcpu] == (int)nodes[i] && cell_of[vcpu] == (int)c;
                        if (!want)
                                continue;
                        /* a node gives at most its free cores; a vCPU beyond them stays unplaced (never a
                         * core read past what was picked) */
                        got = pick_cores(v, nodes[i], want,
                                         fits != UINT_MAX ? fits : fitting_class(v, nodes[i], want, taken),
                                         taken, cores);
                        for (unsigned j = 0; j < got; j++)
                                taken[cores[j]] = true;
                        for (unsigned vcpu = 0; vcpu < plan->nvcpus && k < got; vcpu++)
                                if (vcpu_node[vcpu] == (int)nodes[i] && cell_of[vcpu] == (int)c)
                                        plan->vcpu_pu[vcpu] = policy_core_first_usable_pu(v, cores[k++]);
                }
        }
}

const PolicyOps policy_explicit_ops = {
    .kind = POLICY_EXPLICIT,
    .unit = "free cores",
    .unit_one = "free core",
    .capacity = explicit_capacity,
    .size = explicit_size,
    .assign = explicit_assign,
    .overcommit_by_core = true,
    .core_room = explicit_core_room,
};
