/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plan.h"

#include <errno.h>
#include <string.h>

static const char *const policy_names[_POLICY_MAX] = {
    [POLICY_EXPLICIT] = "explicit",
    [POLICY_COMPAT] = "compat",
};
static const char *const vcpu_pin_names[_VCPU_PIN_MAX] = {
    [VCPU_PIN_CORE] = "core",
    [VCPU_PIN_THREAD] = "thread",
    [VCPU_PIN_NODESET] = "nodeset",
};
static const char *const emulator_pin_names[_EMULATOR_PIN_MAX] = {
    [EMULATOR_PIN_SIBLINGS] = "siblings",
    [EMULATOR_PIN_NODESET] = "nodeset",
    [EMULATOR_PIN_NONE] = "none",
};
static const char *const result_names[_PLAN_RESULT_MAX] = {
    [PLAN_PLACED] = "placed",
    [PLAN_OVERCOMMITTED] = "overcommitted",
    [PLAN_UNPLACEABLE] = "unplaceable",
    [PLAN_ADOPTED] = "adopted",
};

static const char *const memory_mode_names[_MEMORY_MODE_MAX] = {
    [MEMORY_MODE_STRICT] = "strict",
    [MEMORY_MODE_INTERLEAVE] = "interleave",
    [MEMORY_MODE_PREFERRED] = "preferred",
    [MEMORY_MODE_RESTRICTIVE] = "restrictive",
};

static int lookup(const char *const *names, int n, const char *s)
{
        for (int i = 0; s && i < n; i++)
                if (strcmp(names[i], s) == 0)
                        return i;
        return -EINVAL;
}

const char *policy_kind_to_string(PolicyKind k)
{
        return k < _POLICY_MAX ? policy_names[k] : NULL;
}

int policy_kind_from_string(const char *s)
{
        return lookup(policy_names, _POLICY_MAX, s);
}

const char *vcpu_pin_mode_to_string(VcpuPinMode m)
{
        return m < _VCPU_PIN_MAX ? vcpu_pin_names[m] : NULL;
}

int vcpu_pin_mode_from_string(const char *s)
{
        return lookup(vcpu_pin_names, _VCPU_PIN_MAX, s);
}

const char *emulator_pin_mode_to_string(EmulatorPinMode m)
{
        return m < _EMULATOR_PIN_MAX ? emulator_pin_names[m] : NULL;
}

int emulator_pin_mode_from_string(const char *s)
{
        return lookup(emulator_pin_names, _EMULATOR_PIN_MAX, s);
}

const char *plan_result_to_string(PlanResult r)
{
        return r < _PLAN_RESULT_MAX ? result_names[r] : NULL;
}

const char *memory_mode_to_string(MemoryMode m)
{
        return m < _MEMORY_MODE_MAX ? memory_mode_names[m] : NULL;
}

int memory_mode_from_string(const char *s)
{
        return lookup(memory_mode_names, _MEMORY_MODE_MAX, s);
}

void plan_candidate_free(PlanCandidate *c)
{
        if (!c)
                return;
        cpuset_free(c->nodes);
        g_free(c);
}

Plan *plan_new(const char *name, unsigned nvcpus, uint64_t memory, unsigned nnodes)
{
        Plan *p = g_new0(Plan, 1);

        p->name = g_strdup(name ? name : "");
        p->nvcpus = nvcpus;
        p->requested_vcpus = nvcpus;
        p->memory = memory;
        p->nodes = cpuset_new();
        p->vcpu_pu = g_new(int, MAX(nvcpus, 1));
        p->vcpu_pins = g_new0(CpuSet *, MAX(nvcpus, 1));
        for (unsigned i = 0; i < nvcpus; i++) {
                p->vcpu_pu[i] = -1;
                p->vcpu_pins[i] = cpuset_new();
        }
        p->nnode_memory = nnodes;
        p->node_memory = g_new0(uint64_t, MAX(nnodes, 1));
        p->emulator_pin = cpuset_new();
        p->candidates = g_ptr_array_new_with_free_func((GDestroyNotify)plan_candidate_free);
        return p;
}

void plan_free(Plan *p)
{
        if (!p)
                return;
        for (unsigned i = 0; i < p->nvcpus; i++)
                cpuset_free(p->vcpu_pins[i]);
        g_free(p->vcpu_pins);
        g_free(p->vcpu_pu);
        g_free(p->node_memory);
        cpuset_free(p->nodes);
        cpuset_free(p->emulator_pin);
        g_ptr_array_unref(p->candidates);
        g_free(p->reason);
        g_free(p->name);
        g_free(p);
}

Plan *plan_copy(const Plan *p)
{
        Plan *c = plan_new(p->name, p->nvcpus, p->memory, p->nnode_memory);

        c->policy = p->policy;
        c->vcpu_pin = p->vcpu_pin;
        c->result = p->result;
        c->requested_vcpus = p->requested_vcpus;
        cpuset_union(c->nodes, p->nodes);
        for (unsigned i = 0; i < p->nvcpus; i++) {
                c->vcpu_pu[i] = p->vcpu_pu[i];
                cpuset_union(c->vcpu_pins[i], p->vcpu_pins[i]);
        }
        memcpy(c->node_memory, p->node_memory, sizeof(uint64_t) * p->nnode_memory);
        cpuset_union(c->emulator_pin, p->emulator_pin);
        c->keep_memory = p->keep_memory;
        c->shared_vcpus = p->shared_vcpus;
        c->reason = g_strdup(p->reason);
        for (unsigned i = 0; i < p->candidates->len; i++) {
                const PlanCandidate *pc = g_ptr_array_index(p->candidates, i);
                PlanCandidate *cc = g_memdup2(pc, sizeof(*pc));
                cc->nodes = cpuset_copy(pc->nodes);
                g_ptr_array_add(c->candidates, cc);
        }
        return c;
}

CpuSet *plan_memory_nodes(const Plan *p)
{
        CpuSet *s = cpuset_new();

        for (unsigned i = 0; i < p->nnode_memory; i++)
                if (p->node_memory[i] > 0)
                        cpuset_add(s, i);
        if (cpuset_is_empty(s))
                cpuset_union(s, p->nodes);
        return s;
}
