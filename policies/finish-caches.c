/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: vCPUs matched to the caches of their guest cores (<cache> in the guest topology), and the note.
 */
#include "finish-internal.h"

int finish_vcpu_cell(const Plan *plan, unsigned i)
{
        unsigned id = plan_vcpu_id(plan, i);

        for (unsigned k = 0; k < plan->ncells; k++)
                if (cpuset_has(plan->cells[k].vcpus, id))
                        return (int)k;
        return -1;
}

void finish_swap_vcpus(Plan *plan, unsigned i, unsigned j)
{
        int pu = plan->vcpu_pu[i];
        CpuSet *pins = plan->vcpu_pins[i];

        plan->vcpu_pu[i] = plan->vcpu_pu[j];
        plan->vcpu_pu[j] = pu;
        plan->vcpu_pins[i] = plan->vcpu_pins[j];
        plan->vcpu_pins[j] = pins;
}

/* Whether vCPU i of the request may run on the PU with index pu as its reserved caches go (no
 * reservation: anywhere). */
static bool under_own_caches(const Topology *t, const PlacementRequest *req, unsigned i, int pu)
{
        return pu >= 0 &&
               (!req->vcpu_cache_cpus[i] || cpuset_has(req->vcpu_cache_cpus[i], t->pus[pu].os_index));
}

/* A usable PU under vCPU i's reserved caches on a free core the plan does not hold: on the node it runs
 * on (own_node), or on any node of the plan's set; -1 when none. */
static int free_pu_under_caches(const HostView *v, const PlacementRequest *req, const Plan *plan, unsigned i,
                                bool own_node)
{
        const Topology *t = v->t;
        unsigned node = t->cores[t->pus[plan->vcpu_pu[i]].core].node;

        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                if ((own_node ? core->node != node : !cpuset_has(plan->nodes, core->node)) ||
                    !ledger_core_free(v->l, c) || policy_own_core(v, plan, c) || policy_core_reserved(v, c))
                        continue;
                for (unsigned k = core->pu_first; k < core->pu_first + core->npus; k++)
                        if (v->pu_usable[k] && under_own_caches(t, req, i, (int)k))
                                return (int)k;
        }
        return -1;
}

/*
 * Each vCPU with reserved caches (<cachetune vcpus=>) onto a PU of the plan under them: the plan's PUs
 * stay the same, two vCPUs trade them when that puts one under its caches and leaves the other no worse
 * (in one guest cell; not when the guest pairs its vCPUs as SMT siblings, whose pairs share a core).
 * One left off its caches then takes a free core under them on the node it runs on, when there is one,
 * else on another node of the set (without guest cells): the vCPUs' shares of the nodes are the set
 * search's, not the user's, and the memory is spread over them after this.
 */
void finish_match_cache_vcpus(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        const Topology *t = v->t;

        if (!req->vcpu_cache_cpus)
                return;
        for (unsigned i = 0; i < plan->nvcpus && i < req->vcpus; i++) {
                if (plan->vcpu_pu[i] < 0 || under_own_caches(t, req, i, plan->vcpu_pu[i]) ||
                    req->guest_threads)
                        continue;
                for (unsigned j = 0; j < plan->nvcpus && j < req->vcpus; j++) {
                        int pu_i = plan->vcpu_pu[i], pu_j = plan->vcpu_pu[j];
                        if (j == i || pu_j < 0 || finish_vcpu_cell(plan, i) != finish_vcpu_cell(plan, j) ||
                            !under_own_caches(t, req, i, pu_j) ||
                            (under_own_caches(t, req, j, pu_j) && !under_own_caches(t, req, j, pu_i)))
                                continue;
                        finish_swap_vcpus(plan, i, j);
                        break;
                }
        }
        /* one still off its caches: a free core under them on the node it runs on, else (without guest
         * cells, whose vCPUs keep to their cell's node) on another node of the set */
        for (unsigned i = 0; i < plan->nvcpus && i < req->vcpus; i++) {
                int pu = plan->vcpu_pu[i], q;
                if (pu < 0 || under_own_caches(t, req, i, pu) || req->guest_threads)
                        continue;
                q = free_pu_under_caches(v, req, plan, i, true);
                if (q < 0 && !plan->ncells)
                        q = free_pu_under_caches(v, req, plan, i, false);
                if (q < 0)
                        continue;
                plan->vcpu_pu[i] = q;
                if (plan->vcpu_pin == VCPU_PIN_CORE || plan->vcpu_pin == VCPU_PIN_THREAD)
                        policy_pin_vcpu(v, plan, i);
        }
}

/* Appends to the reason which vCPUs with reserved caches run under them and which do not (no PU of the
 * plan serves them); nothing when the constraint note says it all. */
void finish_cache_note(const Topology *t, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) off = cpuset_new(), on = cpuset_new();
        g_autofree char *off_list = NULL, *on_list = NULL, *reason = NULL;

        if (!req->vcpu_cache_cpus)
                return;
        (void)t;
        for (unsigned i = 0; i < plan->nvcpus && i < req->vcpus; i++) {
                g_autoptr(CpuSet) outside = NULL;
                if (!req->vcpu_cache_cpus[i] || plan->vcpu_pu[i] < 0)
                        continue;
                /* its pins, not the PU it is counted on: VCPUPin=nodeset pins it to the whole set */
                outside = cpuset_copy(plan->vcpu_pins[i]);
                cpuset_subtract(outside, req->vcpu_cache_cpus[i]);
                cpuset_add(cpuset_is_empty(outside) ? on : off, plan_vcpu_id(plan, i));
        }
        if (req->cache_cpus && cpuset_is_empty(off))
                return; /* the constraint note says it */
        on_list = cpuset_format(on);
        off_list = cpuset_format(off);
        reason = g_strdup_printf(
            "%s%s%s%s%s%s%s", plan->reason ? plan->reason : "",
            !*on_list ? "" : (cpuset_count(on) == 1 ? "; vCPU " : "; vCPUs "), on_list,
            *on_list ? " under the caches reserved for it" : "",
            !*off_list ? "" : (cpuset_count(off) == 1 ? "; vCPU " : "; vCPUs "), off_list,
            *off_list ? " not kept under the caches its <cachetune>/<memorytune> reserves for it (no core "
                        "of this placement, and no free one on its node, lies under them, or VCPUPin= pins "
                        "it wider)"
                      : "");
        g_free(plan->reason);
        plan->reason = g_steal_pointer(&reason);
}
