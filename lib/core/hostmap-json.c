/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hostmap-json.h"
#include "decision-json.h"

static void add_int(JsonBuilder *b, const char *key, gint64 v)
{
        json_builder_set_member_name(b, key);
        json_builder_add_int_value(b, v);
}

static void add_string(JsonBuilder *b, const char *key, const char *v)
{
        json_builder_set_member_name(b, key);
        json_builder_add_string_value(b, v);
}

/* Each PU's domains, as the text map counts them: a vCPU's PU and the CPUs the ledger holds for a domain's
 * emulator and I/O threads (plan_held_thread_pus()).
 * owners[pu] is an array of key indexes, without repeats. */
static GPtrArray *pu_owners(const Topology *t, const Ledger *l, GPtrArray *keys)
{
        GPtrArray *owners = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);

        for (unsigned p = 0; p < t->npus; p++)
                g_ptr_array_add(owners, g_array_new(FALSE, FALSE, sizeof(unsigned)));
        for (unsigned k = 0; k < keys->len; k++) {
                const Plan *plan = ledger_lookup(l, g_ptr_array_index(keys, k));
                g_autoptr(CpuSet) pus = plan_held_thread_pus(t, plan); /* held for its QEMU threads */
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        if (plan->vcpu_pu[i] >= 0 && (unsigned)plan->vcpu_pu[i] < t->npus)
                                cpuset_add(pus, (unsigned)plan->vcpu_pu[i]);
                CPUSET_FOREACH (pu, pus)
                        g_array_append_val((GArray *)g_ptr_array_index(owners, (unsigned)pu), k);
        }
        return owners;
}

static const char *domain_name(const Ledger *l, GPtrArray *keys, unsigned k)
{
        const char *key = g_ptr_array_index(keys, k);
        const Plan *plan = ledger_lookup(l, key);
        return plan->name && *plan->name ? plan->name : key;
}

static void add_nodes(JsonBuilder *b, const Topology *t, const Ledger *l)
{
        json_builder_set_member_name(b, "nodes");
        json_builder_begin_array(b);
        for (unsigned n = 0; n < t->nnodes; n++) {
                g_autofree char *cpus = cpuset_format(t->nodes[n].cpus);
                json_builder_begin_object(b);
                add_int(b, "node", t->nodes[n].os_index);
                /* null when the topology gives no size (topology_node_memory_known()) */
                json_builder_set_member_name(b, "memory");
                if (topology_node_memory_known(t, n))
                        json_builder_add_int_value(b, (gint64)t->nodes[n].memory);
                else
                        json_builder_add_null_value(b);
                add_int(b, "memory_reserved", (gint64)ledger_node_memory(l, n));
                add_string(b, "cpus", cpus);
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
}

void hostmap_json_add(JsonBuilder *b, const Topology *t, const Ledger *l, const CpuSet *reserved)
{
        g_autoptr(GPtrArray) keys = ledger_keys(l);
        g_autoptr(GPtrArray) owners = pu_owners(t, l, keys);

        add_nodes(b, t, l);
        json_builder_set_member_name(b, "cpus");
        json_builder_begin_array(b);
        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                g_autoptr(CpuSet) siblings = cpuset_new();
                g_autofree char *core_cpus = NULL;
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                        cpuset_add(siblings, t->pus[p].os_index);
                core_cpus = cpuset_format(siblings);
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                        GArray *own = g_ptr_array_index(owners, p);
                        unsigned os = t->pus[p].os_index;
                        const char *state = own->len > 1                           ? "shared"
                                            : own->len                             ? "domain"
                                            : reserved && cpuset_has(reserved, os) ? "reserved"
                                                                                   : "free";
                        json_builder_begin_object(b);
                        add_int(b, "cpu", os);
                        add_int(b, "node", t->nodes[core->node].os_index);
                        add_int(b, "package", t->packages[core->package].os_index);
                        add_string(b, "core_cpus", core_cpus);
                        add_string(b, "state", state);
                        json_builder_set_member_name(b, "domains");
                        json_builder_begin_array(b);
                        for (unsigned i = 0; i < own->len; i++)
                                json_builder_add_string_value(
                                    b, domain_name(l, keys, g_array_index(own, unsigned, i)));
                        json_builder_end_array(b);
                        json_builder_end_object(b);
                }
        }
        json_builder_end_array(b);
        hugepages_json_add(b, t, l);
}
