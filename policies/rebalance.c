/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether moving a running domain to a new plan is worth a live re-pin. */
#include "policy.h"

/* vCPUs of p (committed in l) that sit on a core with another vCPU, as the ledger stands now. */
static unsigned shared_now(const Topology *t, const Ledger *l, const Plan *p)
{
        unsigned n = 0;
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && ledger_core_load(l, t->pus[p->vcpu_pu[i]].core) >= 2)
                        n++;
        return n;
}

static double mean_distance(const Topology *t, const CpuSet *nodes)
{
        double mean;

        topology_nodes_distance(t, nodes, NULL, &mean);
        return mean;
}

/* Node indexes p runs a vCPU on. */
static CpuSet *vcpu_nodes(const Topology *t, const Plan *p)
{
        CpuSet *s = cpuset_new();

        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0)
                        cpuset_add(s, t->cores[t->pus[p->vcpu_pu[i]].core].node);
        return s;
}

/* "node 1" or "nodes 0-1": the node indexes in nodes, by their OS indexes; into a new string. */
static char *nodes_text(const Topology *t, const CpuSet *nodes)
{
        g_autoptr(CpuSet) os = cpuset_new();
        g_autofree char *list = NULL;

        CPUSET_FOREACH (n, nodes)
                cpuset_add(os, t->nodes[n].os_index);
        list = cpuset_format(os);
        return g_strdup_printf("node%s %s", cpuset_count(os) == 1 ? "" : "s", list);
}

/* The nodes the domain of p spans (indexes): its vCPUs' and its memory's. */
static CpuSet *span(const Plan *p)
{
        CpuSet *s = plan_memory_nodes(p);

        cpuset_union(s, p->nodes);
        return s;
}

/* "its vCPUs on node 0, now node 1; its memory stays on nodes 0-1": where they run moved, as many
 * nodes as before (or more), the memory where it was. */
static char *vcpus_moved_why(const Topology *t, const CpuSet *vcpus_old, const CpuSet *vcpus_new,
                             const CpuSet *memory)
{
        g_autofree char *from = nodes_text(t, vcpus_old), *to = nodes_text(t, vcpus_new);
        g_autofree char *stays = nodes_text(t, memory);

        return g_strdup_printf("its vCPUs on %s, now %s; its memory stays on %s", from, to, stays);
}

char *policy_fewer_nodes_why(const Topology *t, const Plan *current, const Plan *candidate)
{
        g_autoptr(CpuSet) span_old = span(current);
        g_autoptr(CpuSet) span_new = span(candidate);
        g_autoptr(CpuSet) memory = plan_memory_nodes(candidate);
        g_autoptr(CpuSet) vcpus_old = vcpu_nodes(t, current);
        g_autoptr(CpuSet) vcpus_new = vcpu_nodes(t, candidate);

        if (cpuset_count(span_new) < cpuset_count(span_old))
                return g_strdup_printf("spread over %u nodes, now %u", cpuset_count(span_old),
                                       cpuset_count(span_new));
        /* as many nodes of its vCPUs as before: which they are is what changed */
        if (cpuset_count(vcpus_new) >= cpuset_count(vcpus_old))
                return vcpus_moved_why(t, vcpus_old, vcpus_new, memory);
        return g_strdup_printf("its vCPUs on %u node%s, now %u; its memory stays on %u",
                               cpuset_count(vcpus_old), cpuset_count(vcpus_old) == 1 ? "" : "s",
                               cpuset_count(vcpus_new), cpuset_count(memory));
}

char *policy_nearer_nodes_why(const Topology *t, const Plan *current, const Plan *candidate)
{
        g_autoptr(CpuSet) span_old = span(current);
        g_autoptr(CpuSet) span_new = span(candidate);
        g_autoptr(CpuSet) memory = plan_memory_nodes(candidate);
        g_autoptr(CpuSet) vcpus_old = vcpu_nodes(t, current);
        g_autoptr(CpuSet) vcpus_new = vcpu_nodes(t, candidate);
        double old = mean_distance(t, span_old), new = mean_distance(t, span_new);

        if (new + 1e-3 < old)
                return g_strdup_printf("mean node distance %.2f, now %.2f", old, new);
        /* the nodes it spans are no nearer (its memory stays where it is): its vCPUs' nodes are */
        old = mean_distance(t, vcpus_old);
        new = mean_distance(t, vcpus_new);
        if (new + 1e-3 < old) {
                g_autofree char *stays = nodes_text(t, memory);
                return g_strdup_printf(
                    "mean distance of its vCPUs' nodes %.2f, now %.2f; its memory stays on %s", old, new,
                    stays);
        }
        return vcpus_moved_why(t, vcpus_old, vcpus_new, memory);
}

bool policy_improves(const Topology *t, const Ledger *l, const Plan *current, const Plan *candidate,
                     char **ret_why)
{
        unsigned shared_old = shared_now(t, l, current), shared_new = candidate->shared_vcpus;
        unsigned nodes_old = cpuset_count(current->nodes), nodes_new = cpuset_count(candidate->nodes);
        double dist_old = mean_distance(t, current->nodes), dist_new = mean_distance(t, candidate->nodes);

        if (candidate->result == PLAN_UNPLACEABLE || candidate->nvcpus != current->nvcpus)
                return false;
        if (shared_new != shared_old) {
                if (shared_new > shared_old)
                        return false;
                *ret_why = g_strdup_printf("%u vCPU%s shared a core, now %u", shared_old,
                                           shared_old == 1 ? "" : "s", shared_new);
                return true;
        }
        if (nodes_new != nodes_old) {
                if (nodes_new > nodes_old)
                        return false;
                *ret_why = policy_fewer_nodes_why(t, current, candidate);
                return true;
        }
        if (dist_new + 1e-3 < dist_old) {
                *ret_why = policy_nearer_nodes_why(t, current, candidate);
                return true;
        }
        return false;
}
