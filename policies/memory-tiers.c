/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "memory-tiers.h"
#include "host-view.h"
#include "size.h"

unsigned memory_tiers_held_back(const Topology *t, const PlacementParams *params)
{
        unsigned held = 0;

        for (unsigned n = 0; n < t->nnodes; n++) {
                NodeKind k = t->nodes[n].kind;

                if (t->nodes[n].memory && k != NODE_KIND_GPU && !host_view_memory_usable(params, k))
                        held |= 1u << k;
        }
        return held;
}

static void append(Plan *plan, const char *text)
{
        g_autofree char *old = plan->reason;

        plan->reason = g_strconcat(old ? old : "", text, NULL);
}

/* Whether a guest cell's <memnode> binds memory to node n (the user put it there, not a tier rule). */
static bool cell_bound(const Topology *t, const Plan *plan, unsigned n)
{
        for (unsigned c = 0; c < plan->ncells; c++)
                if (plan->cells[c].memory_nodes &&
                    cpuset_has(plan->cells[c].memory_nodes, t->nodes[n].os_index))
                        return true;
        return false;
}

/* The package of node n: of its cores, else (a memory-only node) of the CPUs it serves (its hwloc
 * locality); -1 when not known or they lie in several. */
static int node_package(const Topology *t, unsigned n)
{
        const TopoNode *node = &t->nodes[n];
        int package = -1;

        if (node->ncores)
                return (int)t->cores[node->core_first].package;
        if (!node->local_cpus)
                return -1;
        for (unsigned p = 0; p < t->npus; p++) {
                int k;
                if (!cpuset_has(node->local_cpus, t->pus[p].os_index))
                        continue;
                k = (int)t->cores[t->pus[p].core].package;
                if (package >= 0 && k != package)
                        return -1;
                package = k;
        }
        return package;
}

/* How far node n is from the nodes plan's vCPUs run on, nearest and farthest into *lo and *hi, and into
 * *away whether none of them runs in n's package (known, on a host of several); false when no vCPU is
 * placed. */
static bool vcpu_reach(const Topology *t, const Plan *plan, unsigned n, uint32_t *lo, uint32_t *hi,
                       bool *away)
{
        int package = t->npackages > 1 ? node_package(t, n) : -1;
        bool any = false;

        *lo = UINT32_MAX;
        *hi = 0;
        *away = package >= 0;
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                const TopoCore *core;
                uint32_t d;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                core = &t->cores[t->pus[plan->vcpu_pu[i]].core];
                d = topology_distance(t, core->node, n);
                *lo = MIN(*lo, d);
                *hi = MAX(*hi, d);
                *away = *away && (int)core->package != package;
                any = true;
        }
        return any;
}

void memory_tiers_note(const Topology *t, bool last_resort, Plan *plan)
{
        g_autoptr(GString) s = g_string_new(NULL);
        g_autoptr(CpuSet) gpu = cpuset_new();

        for (unsigned n = 0; n < t->nnodes && n < plan->nnode_memory; n++) {
                const TopoNode *node = &t->nodes[n];
                uint32_t lo, hi;
                bool away;
                char a[32];

                if (node->kind == NODE_KIND_GPU)
                        cpuset_add(gpu, node->os_index);
                if (node->kind == NODE_KIND_DRAM || !plan->node_memory[n] || plan->keep_memory ||
                    cell_bound(t, plan, n))
                        continue;
                g_string_append_printf(s, "%s%s on node %u (%s", s->len ? ", " : "; ",
                                       size_format(plan->node_memory[n], a, sizeof(a)), node->os_index,
                                       node_kind_to_string(node->kind));
                /* local HBM and the other package's read alike without how far they are, and a
                 * distance alone does not say it lies across the interconnect */
                if (vcpu_reach(t, plan, n, &lo, &hi, &away)) {
                        g_string_append_printf(
                            s, lo == hi ? ", %u from its vCPUs" : ", %u to %u from its vCPUs", lo, hi);
                        if (away)
                                g_string_append(s, t->npackages == 2 ? ", in the other package"
                                                                     : ", in another package");
                }
                g_string_append_c(s, ')');
        }
        if (s->len)
                g_string_append(s, last_resort ? ": a lower tier of memory, used since no set of DRAM nodes "
                                                 "has room"
                                               : ": a first tier by MemoryTiers=");
        if (plan->result == PLAN_UNPLACEABLE && !cpuset_is_empty(gpu)) {
                g_autofree char *list = cpuset_format(gpu);
                g_string_append_printf(s, "; GPU memory (node%s %s) is never given to domains",
                                       cpuset_count(gpu) == 1 ? "" : "s", list);
        }
        if (s->len)
                append(plan, s->str);
}
