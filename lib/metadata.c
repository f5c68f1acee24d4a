/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metadata.h"

#include <errno.h>

static void append_set(GString *s, const char *name, const CpuSet *set)
{
        g_autofree char *text = cpuset_format(set);
        g_string_append_printf(s, " %s=\"%s\"", name, text);
}

char *metadata_format(const Topology *t, const Plan *p, const char *result, const char *memory_binding,
                      const DomainSpec *spec)
{
        GString *s = g_string_new("<domain");
        g_autoptr(CpuSet) nodes = cpuset_new();
        g_autofree char *reason = g_markup_escape_text(p->reason ? p->reason : "", -1);

        if (spec && spec->meta_skip)
                g_string_append(s, " skip=\"yes\"");
        if (spec && spec->meta_policy) {
                g_autofree char *policy = g_markup_escape_text(spec->meta_policy, -1);
                g_string_append_printf(s, " policy=\"%s\"", policy);
        }
        g_string_append(s, ">");
        if (spec && spec->user_xml) {
                g_autofree char *definition = g_markup_escape_text(spec->user_xml, -1);
                g_string_append_printf(s, "<definition>%s</definition>", definition);
        }
        CPUSET_FOREACH (n, p->nodes)
                cpuset_add(nodes, t->nodes[n].os_index);
        g_string_append_printf(
            s, "<decision result=\"%s\" policy=\"%s\" vcpu-pin=\"%s\" memory-binding=\"%s\"", result,
            policy_kind_to_string(p->policy), vcpu_pin_mode_to_string(p->vcpu_pin), memory_binding);
        append_set(s, "nodes", nodes);
        append_set(s, "emulator", p->emulator_pin);
        g_string_append(s, ">");
        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *pins = cpuset_format(p->vcpu_pins[i]);
                if (p->vcpu_pu[i] < 0)
                        continue;
                g_string_append_printf(s, "<vcpu id=\"%u\" cpu=\"%u\" cpuset=\"%s\"/>", i,
                                       t->pus[p->vcpu_pu[i]].os_index, pins);
        }
        for (unsigned n = 0; n < p->nnode_memory; n++)
                if (p->node_memory[n])
                        g_string_append_printf(s, "<memory node=\"%u\" bytes=\"%llu\"/>",
                                               t->nodes[n].os_index, (unsigned long long)p->node_memory[n]);
        g_string_append_printf(s, "<reason>%s</reason></decision></domain>", reason);
        return g_string_free(s, FALSE);
}

int metadata_to_plan(const Topology *t, const MetaDecision *d, const char *name, unsigned nvcpus,
                     uint64_t memory, Plan **ret, char **ret_error)
{
        g_autoptr(Plan) p = plan_new(name, nvcpus, memory, t->nnodes);
        int k;

#define FAIL(...)                                                                                           \
        do {                                                                                                \
                if (ret_error)                                                                              \
                        *ret_error = g_strdup_printf(__VA_ARGS__);                                          \
                return -EINVAL;                                                                             \
        } while (0)

        if ((k = policy_kind_from_string(d->policy)) < 0)
                FAIL("recorded policy '%s' is unknown", d->policy ? d->policy : "");
        p->policy = (PolicyKind)k;
        k = vcpu_pin_mode_from_string(d->vcpu_pin);
        p->vcpu_pin = k < 0 ? VCPU_PIN_CORE : (VcpuPinMode)k;
        if (!d->vcpus || d->vcpus->len != nvcpus)
                FAIL("recorded decision has %u vCPUs, the domain runs %u", d->vcpus ? d->vcpus->len : 0,
                     nvcpus);
        for (unsigned i = 0; i < d->vcpus->len; i++) {
                const MetaVcpu *v = &g_array_index(d->vcpus, MetaVcpu, i);
                int pu = topology_pu_by_os(t, v->cpu);
                if (v->id >= nvcpus || p->vcpu_pu[v->id] >= 0)
                        FAIL("recorded vCPU %u is out of range or repeated", v->id);
                if (pu < 0)
                        FAIL("recorded CPU %u of vCPU %u is not on this host", v->cpu, v->id);
                p->vcpu_pu[v->id] = pu;
                cpuset_union(p->vcpu_pins[v->id], v->cpuset);
        }
        CPUSET_FOREACH (n, d->nodes) {
                int idx = topology_node_by_os(t, (unsigned)n);
                if (idx < 0)
                        FAIL("recorded node %d is not on this host", n);
                cpuset_add(p->nodes, (unsigned)idx);
        }
        for (unsigned i = 0; d->memory && i + 1 < d->memory->len; i += 2) {
                guint64 node = g_array_index(d->memory, guint64, i),
                        bytes = g_array_index(d->memory, guint64, i + 1);
                int idx = topology_node_by_os(t, (unsigned)node);
                if (idx < 0)
                        FAIL("recorded memory node %u is not on this host", (unsigned)node);
                p->node_memory[idx] += bytes;
        }
        if (d->emulator)
                cpuset_union(p->emulator_pin, d->emulator);
        p->result = d->result && g_str_equal(d->result, "overcommitted") ? PLAN_OVERCOMMITTED : PLAN_PLACED;
        p->reason = g_strdup(d->reason ? d->reason : "adopted from the domain's recorded decision");
        *ret = g_steal_pointer(&p);
        return 0;
#undef FAIL
}
