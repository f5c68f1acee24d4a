/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * explicit: one free physical core per vCPU. Within a node, cores are taken from one L3 group when one
 * can hold the node's share (the tightest such group, to keep larger groups whole for larger domains),
 * otherwise from the groups with most free cores first, so neighbouring vCPU numbers share an L3.
 */
#include "cells.h"
#include "policy-internal.h"

#include <stdlib.h>

static unsigned explicit_capacity(const HostView *v, unsigned node)
{
        return v->node_free_cores[node];
}

static unsigned explicit_size(const HostView *v, unsigned node)
{
        return v->node_usable_cores[node];
}

typedef struct {
        unsigned l3;
        unsigned nfree;
} L3Count;

static int compare_l3_desc(const void *pa, const void *pb)
{
        const L3Count *a = pa, *b = pb;
        if (a->nfree != b->nfree)
                return a->nfree > b->nfree ? -1 : 1;
        return a->l3 < b->l3 ? -1 : a->l3 > b->l3;
}

/* Appends up to want free cores of l3 group on node to out; returns how many. */
static unsigned take_group(const HostView *v, const TopoNode *node, unsigned l3, unsigned want,
                           unsigned *out)
{
        unsigned got = 0;
        for (unsigned c = node->core_first; c < node->core_first + node->ncores && got < want; c++)
                if (v->core_free[c] && v->t->cores[c].l3 == l3)
                        out[got++] = c;
        return got;
}

static void pick_cores(const HostView *v, unsigned node_index, unsigned want, unsigned *out)
{
        const TopoNode *node = &v->t->nodes[node_index];
        g_autofree L3Count *groups = g_new0(L3Count, node->ncores + 1);
        unsigned ngroups = 0, got = 0;
        int best = -1;

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                unsigned g;
                if (!v->core_free[c])
                        continue;
                for (g = 0; g < ngroups && groups[g].l3 != v->t->cores[c].l3; g++)
                        ;
                if (g == ngroups)
                        groups[ngroups++] = (L3Count){v->t->cores[c].l3, 0};
                groups[g].nfree++;
        }
        for (unsigned g = 0; g < ngroups; g++)
                if (groups[g].nfree >= want && (best < 0 || groups[g].nfree < groups[best].nfree))
                        best = (int)g;
        if (best >= 0) {
                take_group(v, node, groups[best].l3, want, out);
                return;
        }
        qsort(groups, ngroups, sizeof(*groups), compare_l3_desc);
        for (unsigned g = 0; g < ngroups && got < want; g++)
                got += take_group(v, node, groups[g].l3, want - got, out + got);
}

static void explicit_assign(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        g_autofree unsigned *capacity = g_new(unsigned, MAX(n, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        g_autofree unsigned *cores = g_new(unsigned, MAX(plan->nvcpus, 1));

        for (unsigned i = 0; i < n; i++)
                capacity[i] = v->node_free_cores[nodes[i]];
        cells_vcpu_nodes(v, nodes, n, capacity, plan, vcpu_node);
        for (unsigned i = 0; i < n; i++) {
                unsigned want = 0, k = 0;
                for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                        want += vcpu_node[vcpu] == (int)nodes[i];
                if (!want)
                        continue;
                pick_cores(v, nodes[i], want, cores);
                for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                        if (vcpu_node[vcpu] == (int)nodes[i])
                                plan->vcpu_pu[vcpu] = policy_core_first_usable_pu(v, cores[k++]);
        }
}

const PolicyOps policy_explicit_ops = {
    .kind = POLICY_EXPLICIT,
    .unit = "free cores",
    .capacity = explicit_capacity,
    .size = explicit_size,
    .assign = explicit_assign,
    .overcommit_by_core = true,
};
