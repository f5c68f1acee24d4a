/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metadata.h"
#include "text-safe.h"

#include <errno.h>
#include <string.h>

static void append_set(GString *s, const char *name, const CpuSet *set)
{
        g_autofree char *text = cpuset_format(set);
        g_string_append_printf(s, " %s=\"%s\"", name, text);
}

/* The reason as recorded: at most METADATA_MAX_REASON bytes, which a restart adopts (a longer one would
 * make the record unreadable), cut at a character boundary and marked with "..." when longer. */
static char *reason_cut(const char *reason)
{
        const char *end;

        if (strlen(reason) <= METADATA_MAX_REASON)
                return g_strdup(reason);
        end = g_utf8_find_prev_char(reason, reason + METADATA_MAX_REASON - 3 + 1);
        return g_strdup_printf("%.*s...", (int)(end ? end - reason : 0), reason);
}

char *metadata_format(const Topology *t, const Plan *p, const char *result, MemoryBinding memory_binding,
                      const DomainSpec *spec)
{
        return metadata_format_run(t, p, result, memory_binding, spec, NULL);
}

char *metadata_format_run(const Topology *t, const Plan *p, const char *result, MemoryBinding memory_binding,
                          const DomainSpec *spec, const MetaRun *run)
{
        GString *s = g_string_new("<domain");
        g_autoptr(CpuSet) nodes = cpuset_new();
        g_autofree char *cut = reason_cut(p->reason ? p->reason : "");
        g_autofree char *reason = g_markup_escape_text(cut, -1);

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
            policy_kind_to_string(p->policy), vcpu_pin_mode_to_string(p->vcpu_pin),
            memory_binding_to_string(memory_binding));
        if (spec && spec->uuid) {
                g_autofree char *uuid = g_markup_escape_text(spec->uuid, -1);
                g_string_append_printf(s, " uuid=\"%s\"", uuid);
        }
        if (run && run->domain_id)
                g_string_append_printf(s, " domain-id=\"%u\"", run->domain_id);
        if (run && run->boot_id && uuid_text_valid(run->boot_id))
                g_string_append_printf(s, " boot-id=\"%s\"", run->boot_id);
        if (run && run->threads && !cpuset_is_empty(run->threads))
                append_set(s, "threads", run->threads);
        append_set(s, "nodes", nodes);
        append_set(s, "emulator", p->emulator_pin);
        if (!cpuset_is_empty(p->iothreads)) {
                append_set(s, "iothreads", p->iothreads);
                append_set(s, "iothread-pin", p->iothread_pin);
        }
        if (!cpuset_is_empty(p->user_iothreads))
                append_set(s, "user-iothreads", p->user_iothreads);
        if (p->user_emulator_floating)
                g_string_append(s, " user-emulator=\"floating\"");
        g_string_append(s, ">");
        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *pins = cpuset_format(p->vcpu_pins[i]);
                if (p->vcpu_pu[i] < 0)
                        continue;
                g_string_append_printf(s, "<vcpu id=\"%u\" cpu=\"%u\" cpuset=\"%s\"/>", plan_vcpu_id(p, i),
                                       t->pus[p->vcpu_pu[i]].os_index, pins);
        }
        for (unsigned n = 0; n < p->nnode_memory; n++)
                if (p->node_memory[n])
                        g_string_append_printf(s, "<memory node=\"%u\" bytes=\"%llu\"/>",
                                               t->nodes[n].os_index, (unsigned long long)p->node_memory[n]);
        g_string_append_printf(s, "<reason>%s</reason></decision></domain>", reason);
        return g_string_free(s, FALSE);
}

#define FAIL(...)                                                                                           \
        do {                                                                                                \
                if (ret_error)                                                                              \
                        *ret_error = g_strdup_printf(__VA_ARGS__);                                          \
                return -EINVAL;                                                                             \
        } while (0)

/* Free text placementd wrote: bounded, and no control characters, C1 ones included, nor bidi overrides
 * (they would forge lines or reorder what a terminal shows: text-safe.h). A backslash may be there: a
 * reason can quote libvirt's error, and is no name. */
static bool text_ok(const char *s)
{
        if (!s)
                return true;
        return strlen(s) <= METADATA_MAX_REASON && text_is_terminal_safe(s);
}

static int plan_result(const char *result, PlanResult *ret)
{
        if (g_strcmp0(result, "placed") == 0)
                *ret = PLAN_PLACED;
        else if (g_strcmp0(result, "overcommitted") == 0)
                *ret = PLAN_OVERCOMMITTED;
        else if (g_strcmp0(result, "skipped") == 0)
                *ret = PLAN_ADOPTED;
        else
                return -EINVAL;
        return 0;
}

/* The words and free text of the record: known values, bounded text. */
static int check_words(const MetaDecision *d, Plan *p, char **ret_error)
{
        int k;

        if (plan_result(d->result, &p->result) < 0)
                FAIL("recorded result '%.32s' cannot be adopted", d->result ? d->result : "");
        if ((k = policy_kind_from_string(d->policy)) < 0)
                FAIL("recorded policy '%.32s' is unknown", d->policy ? d->policy : "");
        p->policy = (PolicyKind)k;
        if ((k = vcpu_pin_mode_from_string(d->vcpu_pin)) < 0)
                FAIL("recorded vcpu-pin '%.32s' is unknown", d->vcpu_pin ? d->vcpu_pin : "");
        p->vcpu_pin = (VcpuPinMode)k;
        if (d->memory_binding && memory_binding_from_string(d->memory_binding) < 0)
                FAIL("recorded memory-binding '%.32s' is unknown", d->memory_binding);
        if (!text_ok(d->reason))
                FAIL("recorded reason is longer than %u bytes or holds control characters",
                     METADATA_MAX_REASON);
        return 0;
}

static bool within(const CpuSet *s, const CpuSet *outer)
{
        g_autoptr(CpuSet) outside = cpuset_copy(s);
        cpuset_subtract(outside, outer);
        return cpuset_is_empty(outside);
}

/* The PUs of the node indexes in nodes, as OS indexes. */
static CpuSet *node_pus(const Topology *t, const CpuSet *nodes)
{
        CpuSet *pus = cpuset_new();
        CPUSET_FOREACH (n, nodes)
                cpuset_union(pus, t->nodes[n].cpus);
        return pus;
}

/* Whether pin has the shape placementd gives a vCPU on PU pu under mode: the CPUs of pu's core (core), pu
 * alone (thread); under nodeset any CPUs of its nodes (checked against them by the caller). */
static bool pin_shaped(const Topology *t, VcpuPinMode mode, unsigned pu, const CpuSet *pin)
{
        const TopoCore *core = &t->cores[t->pus[pu].core];
        g_autoptr(CpuSet) outside = cpuset_copy(pin);

        switch (mode) {
        case VCPU_PIN_CORE:
                for (unsigned q = core->pu_first; q < core->pu_first + core->npus; q++)
                        cpuset_remove(outside, t->pus[q].os_index);
                return cpuset_is_empty(outside);
        case VCPU_PIN_THREAD:
                return cpuset_count(pin) == 1;
        default:
                return true;
        }
}

/* vCPUs: every one once, counted on a PU of its pin set, pins inside allowed (OS indexes); a decision of
 * placementd's own (placed, overcommitted) pins each as its recorded vcpu-pin says, so a record cannot
 * claim a core for a vCPU that floats over several. */
static int check_vcpus(const Topology *t, const MetaDecision *d, const CpuSet *allowed, Plan *p,
                       char **ret_error)
{
        /* a skipped record leaves out the vCPUs that float over the whole host */
        if (!d->vcpus || d->vcpus->len > p->nvcpus ||
            (p->result != PLAN_ADOPTED && d->vcpus->len != p->nvcpus))
                FAIL("recorded decision has %u vCPU%s, the domain runs %u", d->vcpus ? d->vcpus->len : 0,
                     d->vcpus && d->vcpus->len == 1 ? "" : "s", p->nvcpus);
        for (unsigned r = 0; r < d->vcpus->len; r++) {
                const MetaVcpu *v = &g_array_index(d->vcpus, MetaVcpu, r);
                int pu = topology_pu_by_os(t, v->cpu), i = vcpu_id_index(p->vcpu_ids, p->nvcpus, v->id);
                if (i < 0 || p->vcpu_pu[i] >= 0)
                        FAIL("recorded vCPU %u is not online or repeated", v->id);
                if (pu < 0)
                        FAIL("recorded CPU %u of vCPU %u is not on this host", v->cpu, v->id);
                if (!cpuset_has(v->cpuset, v->cpu) || !within(v->cpuset, allowed))
                        FAIL("recorded pins of vCPU %u are not within its CPU and %s", v->id,
                             p->result == PLAN_ADOPTED ? "the host" : "its nodes");
                if (p->result != PLAN_ADOPTED && !pin_shaped(t, p->vcpu_pin, (unsigned)pu, v->cpuset))
                        FAIL("recorded pins of vCPU %u are wider than vcpu-pin='%s' pins it", v->id,
                             vcpu_pin_mode_to_string(p->vcpu_pin));
                p->vcpu_pu[i] = pu;
                cpuset_union(p->vcpu_pins[i], v->cpuset);
        }
        return 0;
}

/* Memory of a placement (placed, overcommitted): where libvirt binds all of it (bound_all), else on the
 * recorded nodes or where a binding of part of it puts that part (bound); within each node's size, its
 * hugepage pools included (a hugepage-backed domain's pool is checked when it is adopted); no more than
 * the domain has, and all of it (less would leave the rest counted nowhere). A skipped record's memory
 * (pins counted as they run) is not its owner's to say: it is counted again as the domain runs, and
 * what the record holds is neither checked nor taken. */
static int check_memory(const Topology *t, const MetaDecision *d, const CpuSet *bound, bool bound_all,
                        Plan *p, char **ret_error)
{
        uint64_t total = 0;

        if (p->result == PLAN_ADOPTED)
                return 0;
        for (unsigned i = 0; d->memory && i + 1 < d->memory->len; i += 2) {
                guint64 node = g_array_index(d->memory, guint64, i),
                        bytes = g_array_index(d->memory, guint64, i + 1);
                int idx = topology_node_by_os(t, (unsigned)node);
                bool in_bound = bound && cpuset_has(bound, (unsigned)node);
                uint64_t capacity = 0;

                if (idx < 0 || (bound_all ? !in_bound : !in_bound && !cpuset_has(p->nodes, (unsigned)idx)))
                        FAIL("recorded memory node %u is not one of its nodes here", (unsigned)node);
                capacity = t->nodes[idx].memory;
                for (unsigned k = 0; k < t->nodes[idx].nhugepages; k++)
                        capacity += t->nodes[idx].hugepages[k].size * t->nodes[idx].hugepages[k].count;
                if (bytes > p->memory - total || p->node_memory[idx] + bytes > capacity)
                        FAIL("recorded memory on node %u is more than the domain or the node has",
                             (unsigned)node);
                p->node_memory[idx] += bytes;
                total += bytes;
        }
        if (total != p->memory)
                FAIL("recorded memory (%" G_GUINT64_FORMAT " bytes) is not the domain's %" G_GUINT64_FORMAT,
                     (guint64)total, (guint64)p->memory);
        return 0;
}

/* I/O threads: pinned within the host; ids placementd pinned, as many as libvirt allows. */
static int check_iothreads(const Topology *t, const MetaDecision *d, Plan *p, char **ret_error)
{
        if (d->user_iothreads)
                cpuset_union(p->user_iothreads, d->user_iothreads);
        if (!d->iothreads || cpuset_is_empty(d->iothreads))
                return 0;
        if (!d->iothread_pin || cpuset_is_empty(d->iothread_pin) || !within(d->iothread_pin, t->all_pus))
                FAIL("recorded I/O thread pin is empty or not within the host");
        cpuset_union(p->iothreads, d->iothreads);
        cpuset_union(p->iothread_pin, d->iothread_pin);
        return 0;
}

int metadata_to_plan(const Topology *t, const MetaDecision *d, const char *name, unsigned nvcpus,
                     const unsigned *vcpu_ids, uint64_t memory, Plan **ret, char **ret_error)
{
        return metadata_to_plan_bound(t, d, name, nvcpus, vcpu_ids, memory, NULL, false, ret, ret_error);
}

int metadata_to_plan_bound(const Topology *t, const MetaDecision *d, const char *name, unsigned nvcpus,
                           const unsigned *vcpu_ids, uint64_t memory, const CpuSet *bound, bool bound_all,
                           Plan **ret, char **ret_error)
{
        g_autoptr(Plan) p = plan_new(name, nvcpus, memory, t->nnodes);
        g_autoptr(CpuSet) allowed = NULL;
        int r;

        plan_set_vcpu_ids(p, vcpu_ids, nvcpus);
        if ((r = check_words(d, p, ret_error)) < 0)
                return r;
        CPUSET_FOREACH (n, d->nodes) {
                int idx = topology_node_by_os(t, (unsigned)n);
                if (idx < 0)
                        FAIL("recorded node %d is not on this host", n);
                cpuset_add(p->nodes, (unsigned)idx);
        }
        if (p->result != PLAN_ADOPTED && cpuset_is_empty(p->nodes))
                FAIL("recorded decision names no node");
        /* pins made by hand may be anywhere on the host; placementd's own stay on its nodes */
        allowed = p->result == PLAN_ADOPTED ? cpuset_copy(t->all_pus) : node_pus(t, p->nodes);
        if ((r = check_vcpus(t, d, allowed, p, ret_error)) < 0 ||
            (r = check_memory(t, d, bound, bound_all, p, ret_error)) < 0)
                return r;
        if (d->emulator && !within(d->emulator, t->all_pus))
                FAIL("recorded emulator pin is not within the host");
        if (d->emulator)
                cpuset_union(p->emulator_pin, d->emulator);
        /* a claim only: the daemon keeps it where the emulator runs unpinned in the run it names */
        p->user_emulator_floating = d->user_emulator_floating && cpuset_is_empty(p->emulator_pin);
        if ((r = check_iothreads(t, d, p, ret_error)) < 0)
                return r;
        p->reason = g_strdup(d->reason ? d->reason : "adopted from the domain's recorded decision");
        *ret = g_steal_pointer(&p);
        return 0;
}
#undef FAIL
