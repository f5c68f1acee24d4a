/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "emulator-follow.h"

#include <math.h>

#include "cpuset.h"

/* Whether l counts another domain's vCPU on core c, or holds one of its CPUs for another domain: what
 * there is of it less what p has there. */
static bool others_on(const Topology *t, const Ledger *l, const Plan *p, unsigned c)
{
        const TopoCore *core = &t->cores[c];
        unsigned own = 0, own_held = 0;

        for (unsigned i = 0; i < p->nvcpus; i++)
                own += p->vcpu_pu[i] >= 0 && (unsigned)p->vcpu_pu[i] < t->npus &&
                       t->pus[p->vcpu_pu[i]].core == c;
        for (unsigned q = core->pu_first; q < core->pu_first + core->npus; q++)
                own_held += p->held_pus && cpuset_has(p->held_pus, q);
        return ledger_core_load(l, c) > own || ledger_core_held(l, c) > own_held;
}

/* Whether plan a counts a vCPU on core c. */
static bool vcpu_on(const Topology *t, const Plan *a, unsigned c)
{
        for (unsigned i = 0; i < a->nvcpus; i++)
                if (a->vcpu_pu[i] >= 0 && (unsigned)a->vcpu_pu[i] < t->npus &&
                    t->pus[a->vcpu_pu[i]].core == c)
                        return true;
        return false;
}

bool emulator_follow_leaves(const Topology *t, const Ledger *l, const Plan *p, const Plan *arriving)
{
        if (!p->emulator_pin || cpuset_is_empty(p->emulator_pin) ||
            (p->iothread_pin && !cpuset_is_empty(p->iothread_pin) &&
             !cpuset_equal(p->iothread_pin, p->emulator_pin)))
                return false;
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0 && !others_on(t, l, p, t->pus[pu].core) &&
                    !vcpu_on(t, arriving, t->pus[pu].core))
                        return true;
        }
        return false;
}

Plan *policy_emulator_follow(const Topology *t, const Ledger *l, const Plan *p, double host_busy)
{
        g_autoptr(CpuSet) rest = NULL;
        g_autoptr(CpuSet) cores = NULL;
        g_autoptr(Plan) next = NULL;
        double need = isfinite(host_busy) && host_busy > 1.0 ? ceil(host_busy) : 1.0;

        if ((p->result != PLAN_PLACED && p->result != PLAN_OVERCOMMITTED) || !p->emulator_pin ||
            cpuset_is_empty(p->emulator_pin))
                return NULL;
        rest = cpuset_new();
        cores = cpuset_new();
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu < 0 || others_on(t, l, p, t->pus[pu].core))
                        continue;
                cpuset_add(rest, (unsigned)os);
                cpuset_add(cores, t->pus[pu].core);
        }
        if (cpuset_is_empty(rest) || cpuset_equal(rest, p->emulator_pin) || cpuset_count(cores) < need)
                return NULL;
        next = plan_copy(p);
        if (next->iothread_pin && cpuset_equal(next->iothread_pin, next->emulator_pin)) {
                cpuset_clear(next->iothread_pin);
                cpuset_union(next->iothread_pin, rest);
        }
        cpuset_clear(next->emulator_pin);
        cpuset_union(next->emulator_pin, rest);
        return g_steal_pointer(&next);
}

CpuSet *emulator_follow_taken(const Topology *t, const Plan *p)
{
        CpuSet *cpus = cpuset_new();

        for (unsigned i = 0; i < p->nvcpus; i++) {
                const TopoCore *core;
                if (p->vcpu_pu[i] < 0 || (unsigned)p->vcpu_pu[i] >= t->npus)
                        continue;
                core = &t->cores[t->pus[p->vcpu_pu[i]].core];
                for (unsigned q = core->pu_first; q < core->pu_first + core->npus; q++)
                        cpuset_add(cpus, t->pus[q].os_index);
        }
        return cpus;
}
