/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decision-json.h"

#include "json-get.h"
#include "json-number.h"
#include "text-safe.h"

CpuSet *topology_nodes_to_os(const Topology *t, const CpuSet *node_indexes)
{
        CpuSet *s = cpuset_new();
        CPUSET_FOREACH (n, node_indexes) {
                if ((unsigned)n < t->nnodes)
                        cpuset_add(s, t->nodes[n].os_index);
        }
        return s;
}

static void add_cpuset(JsonBuilder *b, const char *key, const CpuSet *s)
{
        g_autofree char *text = cpuset_format(s);
        json_builder_set_member_name(b, key);
        json_builder_add_string_value(b, text);
}

static void add_node_array(JsonBuilder *b, const char *key, const CpuSet *os)
{
        json_builder_set_member_name(b, key);
        json_builder_begin_array(b);
        CPUSET_FOREACH (n, os)
                json_builder_add_int_value(b, n);
        json_builder_end_array(b);
}

/* "hugepage_size" and "cells": [{"id", "vcpus", "nodes": [os...], "memory_nodes": [os...], "memory",
 * "ordinary_memory", "hugepage_size"}], only when the plan has them ("memory_nodes": where its memory is
 * counted, when known; "ordinary_memory": true for a cell of a hugepage-backed plan that no <page> backs;
 * a cell's "hugepage_size": its pages' size when it is not the plan's, the smaller of two;
 * "memory_device": true for a memory device its own <source> backs, counted apart: its id is no <cell>'s;
 * its "device_cell": the id of its guest cell, "device_nodemask": whether its own <source><nodemask> binds
 * it, else that cell's <memnode> does). */
static void add_guest_shape(JsonBuilder *b, const Topology *t, const Plan *p)
{
        if (p->hugepage_size) {
                json_builder_set_member_name(b, "hugepage_size");
                json_builder_add_int_value(b, (gint64)p->hugepage_size);
        }
        if (!p->ncells)
                return;
        json_builder_set_member_name(b, "cells");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < p->ncells; i++) {
                g_autoptr(CpuSet) nodes = topology_nodes_to_os(t, p->cells[i].nodes);
                g_autoptr(CpuSet) ids = cpuset_new(); /* libvirt's vCPU ids, as the definition names them */
                CPUSET_FOREACH (v, p->cells[i].vcpus)
                        cpuset_add(ids, plan_vcpu_id(p, (unsigned)v));
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "id");
                json_builder_add_int_value(b, p->cells[i].id);
                add_cpuset(b, "vcpus", ids);
                add_node_array(b, "nodes", nodes);
                if (!cpuset_is_empty(p->cells[i].counted_nodes)) {
                        g_autoptr(CpuSet) counted = topology_nodes_to_os(t, p->cells[i].counted_nodes);
                        add_node_array(b, "memory_nodes", counted);
                }
                json_builder_set_member_name(b, "memory");
                json_builder_add_int_value(b, (gint64)p->cells[i].memory);
                /* a cell of the smaller of two page sizes: its own size */
                if (p->hugepage_size && p->cells[i].ordinary && p->second_page_size) {
                        json_builder_set_member_name(b, "hugepage_size");
                        json_builder_add_int_value(b, (gint64)p->second_page_size);
                } else if (p->hugepage_size && p->cells[i].ordinary) {
                        /* a cell no <page> backs, of a hugepage-backed domain */
                        json_builder_set_member_name(b, "ordinary_memory");
                        json_builder_add_boolean_value(b, TRUE);
                }
                if (p->cells[i].device) {
                        json_builder_set_member_name(b, "memory_device");
                        json_builder_add_boolean_value(b, TRUE);
                        /* its guest cell, whose <memnode> binds it unless its own nodemask does */
                        json_builder_set_member_name(b, "device_cell");
                        json_builder_add_int_value(b, p->cells[i].device_target);
                        json_builder_set_member_name(b, "device_nodemask");
                        json_builder_add_boolean_value(b, p->cells[i].device_nodemask);
                }
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
}

unsigned decision_json_vcpu_id(JsonObject *d, unsigned i)
{
        JsonArray *ids = json_get_array(d, "vcpu_ids"), *pins = json_get_array(d, "vcpu_pins");
        gint64 id;

        if (!ids || !pins || json_length(ids) != json_length(pins) || i >= json_length(ids))
                return i;
        id = json_elem_int(ids, i, -1);
        return id >= 0 && id <= G_MAXUINT ? (unsigned)id : i;
}

void decision_json_add_members(JsonBuilder *b, const Topology *t, const Plan *p, gboolean with_candidates)
{
        g_autoptr(CpuSet) nodes = topology_nodes_to_os(t, p->nodes);
        g_autoptr(CpuSet) mem_idx = plan_memory_nodes(p);
        g_autoptr(CpuSet) mem = topology_nodes_to_os(t, mem_idx);

        json_builder_set_member_name(b, "domain");
        json_builder_add_string_value(b, p->name);
        json_builder_set_member_name(b, "vcpus");
        json_builder_add_int_value(b, p->requested_vcpus);
        json_builder_set_member_name(b, "memory");
        json_builder_add_int_value(b, (gint64)p->memory);
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, policy_kind_to_string(p->policy));
        json_builder_set_member_name(b, "result");
        json_builder_add_string_value(b, plan_result_to_string(p->result));
        add_node_array(b, "nodes", nodes);
        json_builder_set_member_name(b, "vcpu_pins");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *s = cpuset_format(p->vcpu_pins[i]);
                json_builder_add_string_value(b, s);
        }
        json_builder_end_array(b);
        if (p->vcpu_ids) {
                json_builder_set_member_name(b, "vcpu_ids");
                json_builder_begin_array(b);
                for (unsigned i = 0; i < p->nvcpus; i++)
                        json_builder_add_int_value(b, p->vcpu_ids[i]);
                json_builder_end_array(b);
        }
        if (p->result == PLAN_UNPLACEABLE)
                cpuset_clear(mem);
        add_cpuset(b, "memory_nodes", mem);
        add_cpuset(b, "emulator_pin", p->emulator_pin);
        {
                /* CPUs the ledger holds for its QEMU threads (its definition's own pins, the core placementd
                 * pins its realtime ones to: plan_held_thread_pus()): the map's too */
                g_autoptr(CpuSet) pus = plan_held_thread_pus(t, p);
                g_autoptr(CpuSet) held = cpuset_new();
                CPUSET_FOREACH (pu, pus)
                        cpuset_add(held, t->pus[pu].os_index);
                if (!cpuset_is_empty(held))
                        add_cpuset(b, "held_cpus", held);
        }
        if (!cpuset_is_empty(p->iothreads)) {
                add_cpuset(b, "iothreads", p->iothreads);
                add_cpuset(b, "iothread_pin", p->iothread_pin);
        }
        json_builder_set_member_name(b, "shared_vcpus");
        json_builder_add_int_value(b, p->shared_vcpus);
        json_builder_set_member_name(b, "reason");
        json_builder_add_string_value(b, p->reason ? p->reason : "");
        add_guest_shape(b, t, p);
        if (!with_candidates)
                return;
        json_builder_set_member_name(b, "candidates");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < p->candidates->len; i++) {
                const PlanCandidate *c = g_ptr_array_index(p->candidates, i);
                json_builder_begin_object(b);
                add_node_array(b, "nodes", c->nodes);
                json_builder_set_member_name(b, "max_distance");
                json_builder_add_int_value(b, c->max_distance);
                json_builder_set_member_name(b, "mean_distance");
                json_builder_add_double_value(b, c->mean_distance);
                json_builder_set_member_name(b, "free_cores");
                json_builder_add_int_value(b, c->free_cores);
                json_builder_set_member_name(b, "free_pus");
                json_builder_add_int_value(b, c->free_pus);
                json_builder_set_member_name(b, "free_memory");
                if (t && t->memory_sizes_unknown) /* no size known: nothing free to tell */
                        json_builder_add_null_value(b);
                else
                        json_builder_add_int_value(b, (gint64)c->free_memory);
                json_builder_set_member_name(b, "qualifies");
                json_builder_add_boolean_value(b, c->qualifies);
                json_builder_set_member_name(b, "chosen");
                json_builder_add_boolean_value(b, c->chosen);
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
}

static void add_int(JsonBuilder *b, const char *key, gint64 v)
{
        json_builder_set_member_name(b, key);
        json_builder_add_int_value(b, v);
}

/* "core_kinds": the host's CPU kinds, most performant first (empty when it has one kind). */
static void add_core_kinds(JsonBuilder *b, const Topology *t)
{
        json_builder_set_member_name(b, "core_kinds");
        json_builder_begin_array(b);
        for (unsigned k = 0; k < t->ncore_kinds; k++) {
                g_autoptr(CpuSet) cpus = cpuset_new();

                for (unsigned c = 0; c < t->ncores; c++)
                        for (unsigned p = t->cores[c].pu_first;
                             t->cores[c].kind_rank == k && p < t->cores[c].pu_first + t->cores[c].npus; p++)
                                cpuset_add(cpus, t->pus[p].os_index);
                json_builder_begin_object(b);
                add_int(b, "rank", k);
                /* null: the export does not say (no CoreType, no FrequencyMaxMHz) */
                json_builder_set_member_name(b, "name");
                if (t->core_kind_names[k] && *t->core_kind_names[k])
                        json_builder_add_string_value(b, t->core_kind_names[k]);
                else
                        json_builder_add_null_value(b);
                json_builder_set_member_name(b, "max_mhz");
                if (t->core_kind_max_mhz[k])
                        json_builder_add_int_value(b, t->core_kind_max_mhz[k]);
                else
                        json_builder_add_null_value(b);
                add_cpuset(b, "cpus", cpus);
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
}

/* "hugepages": [{"size", "count"}] of a node that has pools (outside its "memory"). */
static void add_node_pools(JsonBuilder *b, const TopoNode *node)
{
        if (!node->nhugepages)
                return;
        json_builder_set_member_name(b, "hugepages");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < node->nhugepages; i++) {
                json_builder_begin_object(b);
                add_int(b, "size", (gint64)node->hugepages[i].size);
                add_int(b, "count", (gint64)node->hugepages[i].count);
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
}

void hugepages_json_add(JsonBuilder *b, const Topology *t, const Ledger *l)
{
        bool any = false;

        for (unsigned n = 0; n < t->nnodes; n++)
                any |= t->nodes[n].nhugepages > 0;
        if (!any)
                return;
        json_builder_set_member_name(b, "hugepages");
        json_builder_begin_array(b);
        for (unsigned n = 0; n < t->nnodes; n++)
                for (unsigned i = 0; i < t->nodes[n].nhugepages; i++) {
                        uint64_t size = t->nodes[n].hugepages[i].size;
                        json_builder_begin_object(b);
                        add_int(b, "node", t->nodes[n].os_index);
                        add_int(b, "page_size", (gint64)size);
                        add_int(b, "pages", (gint64)t->nodes[n].hugepages[i].count);
                        add_int(b, "free_bytes", (gint64)ledger_node_free_hugepages(l, n, size));
                        json_builder_end_object(b);
                }
        json_builder_end_array(b);
}

JsonNode *topology_to_json(const Topology *t, gboolean detailed)
{
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        add_int(b, "nodes", t->nnodes);
        add_int(b, "packages", t->npackages);
        add_int(b, "cores", t->ncores);
        add_int(b, "pus", t->npus);
        if (detailed) {
                json_builder_set_member_name(b, "source");
                json_builder_add_string_value(b, t->source ? t->source : "");
                add_int(b, "threads_per_core", t->max_threads);
                json_builder_set_member_name(b, "distances_known");
                json_builder_add_boolean_value(b, t->distances_known);
                json_builder_set_member_name(b, "notes");
                json_builder_begin_array(b);
                for (unsigned i = 0; t->notes && i < t->notes->len; i++)
                        json_builder_add_string_value(b, g_ptr_array_index(t->notes, i));
                json_builder_end_array(b);
                json_builder_set_member_name(b, "node_list");
                json_builder_begin_array(b);
                for (unsigned n = 0; n < t->nnodes; n++) {
                        json_builder_begin_object(b);
                        add_int(b, "node", t->nodes[n].os_index);
                        /* null when the topology gives no size */
                        json_builder_set_member_name(b, "memory");
                        if (topology_node_memory_known(t, n))
                                json_builder_add_int_value(b, (gint64)t->nodes[n].memory);
                        else
                                json_builder_add_null_value(b);
                        add_int(b, "cores", t->nodes[n].ncores);
                        add_int(b, "pus", t->nodes[n].npus);
                        add_cpuset(b, "cpus", t->nodes[n].cpus);
                        json_builder_set_member_name(b, "kind");
                        json_builder_add_string_value(b, node_kind_to_string(t->nodes[n].kind));
                        json_builder_set_member_name(b, "no_local_memory");
                        json_builder_add_boolean_value(b, t->nodes[n].no_local_memory);
                        add_node_pools(b, &t->nodes[n]);
                        json_builder_end_object(b);
                }
                json_builder_end_array(b);
                add_core_kinds(b, t);
                json_builder_set_member_name(b, "distances");
                json_builder_begin_array(b);
                for (unsigned i = 0; i < t->nnodes; i++) {
                        json_builder_begin_array(b);
                        for (unsigned j = 0; j < t->nnodes; j++) {
                                uint32_t d = topology_distance(t, i, j);
                                json_builder_add_int_value(b, d == TOPOLOGY_UNREACHABLE ? -1 : (gint64)d);
                        }
                        json_builder_end_array(b);
                }
                json_builder_end_array(b);
        }
        json_builder_end_object(b);
        return json_builder_get_root(b);
}

char *json_to_text(JsonNode *node, gboolean pretty)
{
        g_autoptr(JsonGenerator) g = json_generator_new();
        g_autofree char *raw = NULL, *shortest = NULL;

        json_generator_set_root(g, node);
        json_generator_set_pretty(g, pretty);
        raw = json_generator_to_data(g, NULL);
        /* "0.4", not the 17 digits json-glib writes ("0.40000000000000002") */
        shortest = json_numbers_shortest(raw);
        /* owners' names may hold C1 controls or bidi marks: escaped, as a terminal may show this */
        return text_json_safe(shortest);
}

void decision_json_add_unplanned(JsonBuilder *b, const char *name, unsigned vcpus, uint64_t memory,
                                 const char *result, const char *reason)
{
        /* the keys of every decision object, with nothing placed: no policy chose */
        json_builder_set_member_name(b, "domain");
        json_builder_add_string_value(b, name);
        add_int(b, "vcpus", vcpus);
        add_int(b, "memory", (gint64)memory);
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, "");
        if (result) {
                json_builder_set_member_name(b, "result");
                json_builder_add_string_value(b, result);
        }
        json_builder_set_member_name(b, "nodes");
        json_builder_begin_array(b);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "vcpu_pins");
        json_builder_begin_array(b);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "memory_nodes");
        json_builder_add_string_value(b, "");
        json_builder_set_member_name(b, "emulator_pin");
        json_builder_add_string_value(b, "");
        add_int(b, "shared_vcpus", 0);
        if (reason) {
                json_builder_set_member_name(b, "reason");
                json_builder_add_string_value(b, reason);
        }
}

void decision_json_add_decision(JsonBuilder *b, const Topology *t, const Decision *d,
                                gboolean with_candidates)
{
        const Plan *shown = decision_shown_plan(d);

        if (shown) {
                decision_json_add_members(b, t, shown, with_candidates);
                json_builder_set_member_name(b, "plan_result");
                json_builder_add_string_value(b, plan_result_to_string(shown->result));
        } else {
                decision_json_add_unplanned(b, d->name, d->vcpus, d->memory, NULL, NULL);
                json_builder_set_member_name(b, "plan_result");
                json_builder_add_string_value(b, "");
        }
        /* the decision's own words win over the plan's */
        json_builder_set_member_name(b, "uuid");
        json_builder_add_string_value(b, d->uuid);
        json_builder_set_member_name(b, "result");
        json_builder_add_string_value(b, decision_result_to_string(d->result));
        /* whether the pins and binding shown are the domain's: an advice under Apply=no is not applied */
        json_builder_set_member_name(b, "applied");
        json_builder_add_boolean_value(b, d->result != DECISION_ADVISORY);
        json_builder_set_member_name(b, "reason");
        json_builder_add_string_value(b, d->reason ? d->reason : "");
        json_builder_set_member_name(b, "memory_binding");
        json_builder_add_string_value(b, memory_binding_to_string(d->memory_binding));
        json_builder_set_member_name(b, "apply_error");
        if (d->apply_error)
                json_builder_add_string_value(b, d->apply_error);
        else
                json_builder_add_null_value(b);
        json_builder_set_member_name(b, "adopted");
        json_builder_add_boolean_value(b, d->adopted);
        json_builder_set_member_name(b, "pinned_by_hand");
        json_builder_add_boolean_value(b, d->pinned_by_hand);
        json_builder_set_member_name(b, "decided_usec");
        json_builder_add_int_value(b, d->decided_usec);
        json_builder_set_member_name(b, "latency_usec");
        json_builder_add_int_value(b, (gint64)d->latency_usec);
}

void decision_json_add_load(JsonBuilder *b, const DomainLoad *l)
{
        json_builder_set_member_name(b, "load");
        if (!l || !l->known) {
                json_builder_add_null_value(b);
                return;
        }
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "vcpu_busy");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < l->nvcpus; i++)
                json_builder_add_double_value(b, l->vcpu_busy[i]);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "busy_vcpus");
        json_builder_add_int_value(b, domain_load_busy_vcpus(l, l->nvcpus));
        json_builder_set_member_name(b, "host_busy");
        json_builder_add_double_value(b, l->host_busy);
        json_builder_set_member_name(b, "sampled_sec");
        json_builder_add_double_value(b, l->sampled_sec);
        json_builder_set_member_name(b, "paused");
        json_builder_add_boolean_value(b, l->paused);
        json_builder_end_object(b);
}

/* Host-side CPU time: the guest's vCPUs and the host's own work for it, in seconds. */
static void add_cpu_seconds(JsonBuilder *b, const DomainCpuStats *st)
{
        json_builder_set_member_name(b, "cpu_seconds");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "vcpu");
        json_builder_add_double_value(b, (double)st->vcpu_ns / 1e9);
        json_builder_set_member_name(b, "host");
        json_builder_add_double_value(b, (double)st->host_ns / 1e9);
        json_builder_set_member_name(b, "user");
        json_builder_add_double_value(b, (double)st->user_ns / 1e9);
        json_builder_set_member_name(b, "system");
        json_builder_add_double_value(b, (double)st->system_ns / 1e9);
        json_builder_end_object(b);
}

char *decisions_to_json(const Topology *t, const Ledger *l, const Decision *const *ds, unsigned n,
                        gboolean with_candidates, GHashTable *cpu, const DomainLoad *const *loads)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "topology");
        json_builder_add_value(b, topology_to_json(t, FALSE));
        hugepages_json_add(b, t, l);
        json_builder_set_member_name(b, "decisions");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < n; i++) {
                const DomainCpuStats *st = cpu ? g_hash_table_lookup(cpu, ds[i]->uuid) : NULL;
                json_builder_begin_object(b);
                decision_json_add_decision(b, t, ds[i], with_candidates);
                if (st)
                        add_cpu_seconds(b, st);
                decision_json_add_load(b, loads ? loads[i] : NULL);
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        return json_to_text(root, FALSE);
}

char *plan_to_json(const Topology *t, const Plan *p)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;

        json_builder_begin_object(b);
        decision_json_add_members(b, t, p, TRUE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        return json_to_text(root, FALSE);
}
