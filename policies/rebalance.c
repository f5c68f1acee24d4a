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

char *policy_fewer_nodes_why(const Topology *t, const Plan *current, const Plan *candidate)
{
        g_autoptr(CpuSet) span_old = plan_memory_nodes(current);
        g_autoptr(CpuSet) span_new = plan_memory_nodes(candidate);
        g_autoptr(CpuSet) memory = plan_memory_nodes(candidate);
        g_autoptr(CpuSet) vcpus_old = vcpu_nodes(t, current);
        g_autoptr(CpuSet) vcpus_new = vcpu_nodes(t, candidate);

        cpuset_union(span_old, current->nodes);
        cpuset_union(span_new, candidate->nodes);
        if (cpuset_count(span_new) < cpuset_count(span_old))
                return g_strdup_printf("spread over %u nodes, now %u", cpuset_count(span_old),
                                       cpuset_count(span_new));
        return g_strdup_printf("its vCPUs on %u node%s, now %u; its memory stays on %u",
                               cpuset_count(vcpus_old), cpuset_count(vcpus_old) == 1 ? "" : "s",
                               cpuset_count(vcpus_new), cpuset_count(memory));
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
                *ret_why = g_strdup_printf("mean node distance %.2f, now %.2f", dist_old, dist_new);
                return true;
        }
        return false;
}
