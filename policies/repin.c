/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Re-pinning inside a domain's own nodes by measured load (policy.h): the smallest move that stops a
 * busy vCPU from sharing a core with another busy thread, when its own node has a core that runs
 * nothing busy. No memory moves, so heal tries it before placing the domain anew.
 */
#include "policy.h"
#include "load-rules.h"
#include "load.h"
#include "policy-internal.h"

/* The least busy core of node, other than from, that runs nothing busy and has a usable PU and no
 * reserved one; ties: the fewest vCPUs, then the lowest index. -1 when none. */
static int calm_core(const HostView *v, const double *busy, const unsigned *load, unsigned node,
                     unsigned from)
{
        const TopoNode *n = &v->t->nodes[node];
        int best = -1;

        for (unsigned c = n->core_first; c < n->core_first + n->ncores; c++) {
                if (c == from || busy[c] >= LOAD_BUSY_THRESHOLD || policy_core_reserved(v, c) ||
                    policy_core_first_usable_pu(v, c) < 0)
                        continue;
                if (best < 0 || load_busy_key(busy[c]) < load_busy_key(busy[best]) ||
                    (load_busy_key(busy[c]) == load_busy_key(busy[best]) && load[c] < load[best]))
                        best = (int)c;
        }
        return best;
}

/* The usable PU of core c with the fewest vCPUs (pu_load), the first on ties. */
static unsigned calm_pu(const HostView *v, const unsigned *pu_load, unsigned c)
{
        const TopoCore *core = &v->t->cores[c];
        int best = -1;

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (v->pu_usable[p] && (best < 0 || pu_load[p] < pu_load[best]))
                        best = (int)p;
        return (unsigned)best;
}

Plan *policy_repin_local(const Topology *t, const Ledger *l, const PlacementRequest *req,
                         const PlacementParams *params, const Plan *current)
{
        g_autoptr(Plan) plan = NULL;
        g_autofree double *busy = NULL;
        g_autofree unsigned *load = NULL, *pu_load = NULL;
        unsigned moved = 0;
        HostView v;

        if (!req->vcpu_busy || !req->pu_busy || req->vcpus != current->nvcpus ||
            (current->result != PLAN_PLACED && current->result != PLAN_OVERCOMMITTED))
                return NULL;
        host_view_init_for(&v, t, l, params, req);
        plan = plan_copy(current);
        busy = g_new0(double, MAX(t->ncores, 1));
        load = g_new0(unsigned, MAX(t->ncores, 1));
        pu_load = g_new0(unsigned, MAX(t->npus, 1));
        for (unsigned c = 0; c < t->ncores; c++) {
                busy[c] = load_core_busy(&v, c);
                load[c] = ledger_core_load(l, c);
        }
        for (unsigned p = 0; p < t->npus; p++)
                pu_load[p] = ledger_pu_load(l, p);
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0) {
                        busy[t->pus[plan->vcpu_pu[i]].core] += req->vcpu_busy[i];
                        load[t->pus[plan->vcpu_pu[i]].core]++;
                        pu_load[plan->vcpu_pu[i]]++;
                }
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                double b = req->vcpu_busy[i];
                int pu = plan->vcpu_pu[i], to;
                unsigned from, p;

                if (pu < 0 || b < LOAD_BUSY_THRESHOLD)
                        continue;
                from = t->pus[pu].core;
                if (busy[from] - b < LOAD_BUSY_THRESHOLD)
                        continue; /* nothing else busy beside it */
                to = calm_core(&v, busy, load, t->cores[from].node, from);
                if (to < 0)
                        continue;
                p = calm_pu(&v, pu_load, (unsigned)to);
                busy[from] -= b;
                load[from]--;
                pu_load[pu]--;
                busy[to] += b;
                load[to]++;
                pu_load[p]++;
                plan->vcpu_pu[i] = (int)p;
                policy_pin_vcpu(&v, plan, i);
                moved++;
        }
        if (moved) {
                plan->keep_memory = true; /* where it is: no binding to make again */
                policy_count_shared(&v, plan);
                if (!plan->shared_vcpus)
                        plan->result = PLAN_PLACED;
                g_free(plan->reason);
                plan->reason =
                    g_strdup_printf("re-pinned inside its nodes by measured load: %u busy vCPU%s moved "
                                    "to cores that run nothing busy; memory and nodes as they were",
                                    moved, moved == 1 ? "" : "s");
        }
        host_view_done(&v);
        return moved ? g_steal_pointer(&plan) : NULL;
}
