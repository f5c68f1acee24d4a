/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decision-json.h"
#include "decision-text.h"
#include "hostmap-json.h"
#include "hostmap.h"
#include "test-util.h"
#include "topology-load.h"
#include "test-policy-util.h"

START_TEST(test_decision_shape)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 16, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *plan = test_place(t, l, &p, "web1", 4, 4 * GiB);
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        decision_json_add_members(b, t, plan, TRUE);
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        JsonObject *o = json_node_get_object(root);
        ck_assert_str_eq(json_object_get_string_member(o, "domain"), "web1");
        ck_assert_int_eq(json_object_get_int_member(o, "vcpus"), 4);
        ck_assert_int_eq(json_object_get_int_member(o, "memory"), 4294967296);
        ck_assert_str_eq(json_object_get_string_member(o, "policy"), "explicit");
        ck_assert_str_eq(json_object_get_string_member(o, "result"), "placed");
        JsonArray *nodes = json_object_get_array_member(o, "nodes");
        ck_assert_uint_eq(json_array_get_length(nodes), 1);
        ck_assert_int_eq(json_array_get_int_element(nodes, 0), 0);
        JsonArray *pins = json_object_get_array_member(o, "vcpu_pins");
        ck_assert_uint_eq(json_array_get_length(pins), 4);
        ck_assert_str_eq(json_array_get_string_element(pins, 0), "0-1");
        ck_assert_str_eq(json_array_get_string_element(pins, 3), "6-7");
        ck_assert_str_eq(json_object_get_string_member(o, "memory_nodes"), "0");
        ck_assert(strlen(json_object_get_string_member(o, "reason")) > 10);
        ck_assert_uint_gt(json_array_get_length(json_object_get_array_member(o, "candidates")), 0);
}
END_TEST

START_TEST(test_iothreads_only_when_pinned)
{
        /* "iothreads" and "iothread_pin" appear when the plan pins I/O threads, and only then */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) ids = cpuset_new();
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "io", .vcpus = 1, .memory = GiB, .iothreads = ids};
        g_autoptr(Plan) with = NULL;
        const Plan *without = test_place(t, l, &p, "plain", 1, GiB);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        JsonObject *o;

        cpuset_add(ids, 1);
        cpuset_add(ids, 2);
        with = policy_place(t, l, &req, &p);
        json_builder_begin_array(b);
        json_builder_begin_object(b);
        decision_json_add_members(b, t, with, FALSE);
        json_builder_end_object(b);
        json_builder_begin_object(b);
        decision_json_add_members(b, t, without, FALSE);
        json_builder_end_object(b);
        json_builder_end_array(b);
        root = json_builder_get_root(b);
        o = json_array_get_object_element(json_node_get_array(root), 0);
        ck_assert_str_eq(json_object_get_string_member(o, "iothreads"), "1-2");
        ck_assert_str_eq(json_object_get_string_member(o, "iothread_pin"),
                         json_object_get_string_member(o, "emulator_pin"));
        o = json_array_get_object_element(json_node_get_array(root), 1);
        ck_assert(!json_object_has_member(o, "iothreads") && !json_object_has_member(o, "iothread_pin"));
}
END_TEST

START_TEST(test_map)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        test_place(t, l, &p, "alpha", 2, GiB);
        test_place(t, l, &p, "beta", 5, GiB);
        g_autoptr(CpuSet) reserved = cpuset_new();
        cpuset_add(reserved, 15);
        g_autofree char *map = hostmap_render(t, l, reserved);
        ck_assert_ptr_nonnull(strstr(map, "node 0"));
        ck_assert_ptr_nonnull(strstr(map, "[A.][A.]"));
        ck_assert_ptr_nonnull(strstr(map, "A alpha"));
        ck_assert_ptr_nonnull(strstr(map, "B beta"));
        ck_assert_ptr_nonnull(strstr(map, "#]"));
}
END_TEST

/* The map as data says of each CPU what the text map's character says: whose it is (a vCPU, a held
 * emulator CPU), free, reserved for the host, or several domains' */
START_TEST(test_map_json)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 8 * GiB, NULL); /* node 1: PUs 4-7 */
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) reserved = cpuset_new();
        g_autoptr(CpuSet) emulator = cpuset_new();
        g_autoptr(CpuSet) pin = cpuset_new();
        g_autoptr(JsonBuilder) b = json_builder_new();
        CpuSet *pins[1] = {pin};
        PlacementRequest iso = {.name = "iso", .vcpus = 1, .memory = GiB, .emulator_cpus = emulator};
        static const char *const want[8][3] = {
            {"free", NULL},         {"free", NULL}, {"free", NULL},    {"reserved", NULL},
            {"shared", "b", "iso"}, {"free", NULL}, {"domain", "iso"}, {"domain", "iso"},
        };

        cpuset_add(reserved, 3);
        cpuset_add(emulator, 6);
        cpuset_add(emulator, 7);
        cpuset_add(pin, 4);
        ck_assert_int_eq(ledger_commit(l, "iso", policy_adopt(t, l, &iso, pins, &p)), 0);
        g_autoptr(Plan) b_plan = plan_new("b", 1, GiB, t->nnodes);
        b_plan->vcpu_pu[0] = 4;
        b_plan->node_memory[1] = GiB;
        cpuset_add(b_plan->nodes, 1);
        ck_assert_int_eq(ledger_commit(l, "b", g_steal_pointer(&b_plan)), 0);

        json_builder_begin_object(b);
        hostmap_json_add(b, t, l, reserved);
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        JsonObject *o = json_node_get_object(root);
        JsonArray *cpus = json_object_get_array_member(o, "cpus");
        JsonArray *nodes = json_object_get_array_member(o, "nodes");

        ck_assert_uint_eq(json_array_get_length(nodes), 2);
        ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(nodes, 1), "cpus"),
                         "4-7");
        ck_assert_int_eq(
            json_object_get_int_member(json_array_get_object_element(nodes, 1), "memory_reserved"), 2 * GiB);
        ck_assert_uint_eq(json_array_get_length(cpus), 8);
        for (unsigned i = 0; i < 8; i++) {
                JsonObject *c = json_array_get_object_element(cpus, i);
                JsonArray *doms = json_object_get_array_member(c, "domains");
                unsigned n = want[i][2] ? 2 : want[i][1] ? 1 : 0;
                ck_assert_int_eq(json_object_get_int_member(c, "cpu"), i);
                ck_assert_int_eq(json_object_get_int_member(c, "node"), i / 4);
                g_autofree char *core = g_strdup_printf("%u-%u", i & ~1u, i | 1u);
                ck_assert_str_eq(json_object_get_string_member(c, "core_cpus"), core);
                ck_assert_msg(!strcmp(json_object_get_string_member(c, "state"), want[i][0]), "cpu %u: %s",
                              i, json_object_get_string_member(c, "state"));
                ck_assert_uint_eq(json_array_get_length(doms), n);
                for (unsigned k = 0; k < n; k++)
                        ck_assert_str_eq(json_array_get_string_element(doms, k), want[i][k + 1]);
        }
}
END_TEST

/* One node over two packages (sockets interleaved into one NUMA node): each package shows its own cores,
 * the node's memory once */
START_TEST(test_host_map_node_over_packages)
{
        g_autoptr(Topology) t = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(topology_load("synthetic:[numa(memory=64GiB)] pack:2 l3:1 core:4 pu:2", &t, &error) ==
                          0,
                      "%s", error);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        test_place(t, l, &p, "a", 4, GiB);
        test_place(t, l, &p, "b", 4, GiB);
        g_autofree char *map = hostmap_render(t, l, NULL);
        ck_assert_msg(strstr(map, "package 0\n  node 0  64.0 GiB, 2.0 GiB held by domains\n    cpu    0 "
                                  "[A.][A.][A.][A.]\n") &&
                          strstr(map, "package 1\n  node 0  (continued)\n    cpu    8 [B.][B.][B.][B.]\n"),
                      "%s", map);
}
END_TEST

/* The daemon keys its domains by UUID, which libvirt's test driver draws at random: the letters follow
 * the domains' names, as in the offline planner (keyed by name), not the keys, so the same domains show
 * the same letters whatever their UUIDs. */
START_TEST(test_map_letters_by_name)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 8 * GiB, NULL); /* PUs 0-3 */
        static const char *const keys[2][2] = {{"1b-uuid", "2a-uuid"}, {"2a-uuid", "1b-uuid"}};

        for (unsigned order = 0; order < 2; order++) {
                g_autoptr(Ledger) l = ledger_new(t);
                static const char *const names[2] = {"web", "db"};
                for (unsigned d = 0; d < 2; d++) {
                        g_autoptr(Plan) plan = plan_new(names[d], 1, GiB, t->nnodes);
                        plan->vcpu_pu[0] = d == 0 ? 0 : 2; /* web on core 0, db on core 1 */
                        plan->node_memory[0] = GiB;
                        cpuset_add(plan->nodes, 0);
                        ck_assert_int_eq(ledger_commit(l, keys[order][d], g_steal_pointer(&plan)), 0);
                }
                g_autofree char *map = hostmap_render(t, l, NULL);
                ck_assert_msg(strstr(map, "    cpu    0 [B.][A.]\n") &&
                                  g_str_has_suffix(map, "+ several domains\n  A db, B web\n"),
                              "keys %s, %s: %s", keys[order][0], keys[order][1], map);
        }
}
END_TEST

/* A map whose every CPU several domains share: no letter in the legend that no CPU shows, and the
 * domains '+' stands for named; a domain with a CPU of its own keeps its letter and is named under '+'
 * too when it also shares one. The node line says whose its memory is in words '#' does not use. */
START_TEST(test_map_shared_legend)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 8 * GiB, NULL); /* PUs 0-3 */
        g_autoptr(Ledger) l = ledger_new(t);
        static const int pus[3][4] = {{0, 1, 2, 3}, {0, 1, 2, 3}, {3, -1, -1, -1}};
        static const char *const names[3] = {"e2e-db", "e2e-web1", "e2e-web2"};
        g_autofree char *map = NULL, *more = NULL;

        for (unsigned d = 0; d < 2; d++) {
                g_autoptr(Plan) plan = plan_new(names[d], 4, GiB, t->nnodes);
                for (unsigned i = 0; i < 4; i++)
                        plan->vcpu_pu[i] = pus[d][i];
                plan->node_memory[0] = GiB;
                cpuset_add(plan->nodes, 0);
                ck_assert_int_eq(ledger_commit(l, names[d], g_steal_pointer(&plan)), 0);
        }
        map = hostmap_render(t, l, NULL);
        ck_assert_msg(strstr(map, "  node 0  8.0 GiB, 2.0 GiB held by domains\n    cpu    0 [++][++]\n") &&
                          !strstr(map, "reserved by domains"),
                      "%s", map);
        ck_assert_msg(g_str_has_suffix(map, "+ several domains\n  + shared by e2e-db, e2e-web1\n"), "%s",
                      map);

        /* one domain alone on CPUs 4-5 of a second map, sharing CPU 3 with the others: its letter is A */
        g_autoptr(Topology) t2 = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l2 = ledger_new(t2);
        static const int alone[4] = {4, 5, 3, -1};
        for (unsigned d = 0; d < 3; d++) {
                g_autoptr(Plan) plan = plan_new(names[d], d == 2 ? 3 : 4, GiB, t2->nnodes);
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        plan->vcpu_pu[i] = d == 2 ? alone[i] : pus[d][i];
                plan->node_memory[0] = GiB;
                cpuset_add(plan->nodes, 0);
                ck_assert_int_eq(ledger_commit(l2, names[d], g_steal_pointer(&plan)), 0);
        }
        more = hostmap_render(t2, l2, NULL);
        ck_assert_msg(strstr(more, "    cpu    0 [++][++][AA]\n") &&
                          g_str_has_suffix(more, "+ several domains\n  A e2e-web2\n"
                                                 "  + shared by e2e-db, e2e-web1, e2e-web2\n"),
                      "%s", more);
}
END_TEST

/* GetDecisionsJSON's document: the topology, every decision, and CPU time where statistics have it. */
START_TEST(test_decisions_document)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 16, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Decision) a = decision_new("uuid-a", "a");
        g_autoptr(Decision) b = decision_new("uuid-b", "b");
        g_autoptr(GHashTable) cpu = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
        DomainCpuStats *st = g_new0(DomainCpuStats, 1);
        const Decision *both[] = {a, b};
        g_autofree char *all = NULL, *one = NULL;
        g_autoptr(JsonNode) root = NULL, single = NULL;
        JsonArray *ds;

        a->plan = plan_copy(test_place(t, l, &p, "a", 2, GiB));
        b->result = DECISION_SKIPPED;
        b->vcpus = 3;
        b->memory = GiB;
        a->memory_binding = MEMORY_BINDING_APPLIED;
        *st = (DomainCpuStats){.vcpu_ns = 1500000000, .host_ns = 250000000, .user_ns = 1, .system_ns = 2};
        g_hash_table_insert(cpu, (gpointer) "uuid-a", st);

        all = decisions_to_json(t, l, both, 2, FALSE, cpu, NULL);
        root = json_from_string(all, NULL);
        ck_assert_ptr_nonnull(root);
        ck_assert(json_object_has_member(
            json_object_get_object_member(json_node_get_object(root), "topology"), "nodes"));
        ds = json_object_get_array_member(json_node_get_object(root), "decisions");
        ck_assert_uint_eq(json_array_get_length(ds), 2);
        JsonObject *first = json_array_get_object_element(ds, 0);
        ck_assert_str_eq(json_object_get_string_member(first, "uuid"), "uuid-a");
        ck_assert_str_eq(json_object_get_string_member(first, "memory_binding"), "applied");
        ck_assert(!json_object_has_member(first, "candidates"));
        JsonObject *secs = json_object_get_object_member(first, "cpu_seconds");
        ck_assert_double_eq(json_object_get_double_member(secs, "vcpu"), 1.5);
        ck_assert_double_eq(json_object_get_double_member(secs, "host"), 0.25);
        ck_assert(!json_object_has_member(json_array_get_object_element(ds, 1), "cpu_seconds"));
        ck_assert_str_eq(
            json_object_get_string_member(json_array_get_object_element(ds, 1), "memory_binding"), "none");
        /* a decision without a plan (skipped, no pins) has every key a placed one has: its size, no policy
         */
        JsonObject *second = json_array_get_object_element(ds, 1);
        g_autoptr(GList) keys = json_object_get_members(first);
        for (GList *k = keys; k; k = k->next)
                ck_assert_msg(json_object_has_member(second, k->data) || !strcmp(k->data, "cpu_seconds"),
                              "no %s", (const char *)k->data);
        ck_assert_str_eq(json_object_get_string_member(second, "plan_result"), "");
        ck_assert_int_eq(json_object_get_int_member(second, "vcpus"), 3);
        ck_assert_int_eq(json_object_get_int_member(second, "memory"), GiB);
        ck_assert_str_eq(json_object_get_string_member(second, "policy"), "");
        ck_assert_str_eq(json_object_get_string_member(second, "result"), "skipped");

        one = decisions_to_json(t, l, both, 1, TRUE, NULL, NULL);
        single = json_from_string(one, NULL);
        ds = json_object_get_array_member(json_node_get_object(single), "decisions");
        ck_assert_uint_eq(json_array_get_length(ds), 1);
        ck_assert(json_object_has_member(json_array_get_object_element(ds, 0), "candidates"));
        ck_assert(!json_object_has_member(json_array_get_object_element(ds, 0), "cpu_seconds"));
}
END_TEST

/* Plan()'s JSON: the plan's members with its candidates; Explain(): the decision, then the reasoning. */
START_TEST(test_plan_and_explain)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 16, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *plan = test_place(t, l, &p, "web1", 4, 4 * GiB);
        g_autofree char *json = plan_to_json(t, plan);
        g_autoptr(JsonNode) root = json_from_string(json, NULL);
        g_autoptr(Decision) d = decision_new("uuid-w", "web1");
        g_autofree char *text = NULL, *head = NULL, *why = NULL;

        ck_assert_ptr_nonnull(root);
        ck_assert_str_eq(json_object_get_string_member(json_node_get_object(root), "domain"), "web1");
        ck_assert(json_object_has_member(json_node_get_object(root), "candidates"));
        ck_assert_ptr_null(strchr(json, '\n'));

        d->plan = plan_copy(plan);
        d->result = DECISION_PLACED;
        text = decision_explain(t, d);
        head = decision_to_text(t, d);
        why = plan_explain(t, plan);
        ck_assert(g_str_has_prefix(text, head));
        ck_assert(g_str_has_suffix(text, why));
        ck_assert_uint_eq(strlen(text), strlen(head) + strlen(why));
        ck_assert_ptr_null(strstr(text, "candidates: not kept"));

        /* adopted from its record after a restart: no candidates were kept, and explain says so */
        g_ptr_array_set_size(d->plan->candidates, 0);
        d->adopted = true;
        g_free(text);
        text = decision_explain(t, d);
        ck_assert_msg(strstr(text,
                             "candidates: not kept (adopted from its record after checking its pins run "
                             "as recorded; placementctl replace web1 decides anew and lists them)"),
                      "%s", text);
}
END_TEST

/* The CPUs a domain's own <emulatorpin>/<iothreadpin> keep are held for it: the text says which, as the
 * JSON's held_cpus does. */
START_TEST(test_held_cpus_in_text)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) plan = plan_copy(test_place(t, l, &p, "vm", 4, 4 * GiB));
        g_autoptr(Decision) d = decision_new("uuid-vm", "vm");
        g_autofree char *text = NULL, *shown = NULL, *json = NULL;

        for (unsigned cpu = 16; cpu <= 19; cpu++)
                cpuset_add(plan->held_pus, (unsigned)topology_pu_by_os(t, cpu));
        text = plan_to_text(t, plan);
        ck_assert_msg(strstr(text, "\n  held for its emulator and I/O threads: 16-19\n"), "%s", text);
        json = plan_to_json(t, plan);
        ck_assert_msg(strstr(json, "\"held_cpus\":\"16-19\""), "%s", json);
        d->plan = plan_copy(plan);
        d->result = DECISION_PLACED;
        shown = decision_to_text(t, d);
        ck_assert_msg(strstr(shown, "held for its emulator and I/O threads: 16-19"), "%s", shown);
}
END_TEST

/* The core placementd pins a realtime (FIFO/RR) emulator or I/O thread to, beside none of the domain's
 * vCPUs, is held by the ledger as the CPUs of its own <emulatorpin> are: its text, its JSON's held_cpus and
 * both maps show it as the domain's (they showed it free while the ledger gave it to no one). One node of
 * two cores without SMT: the vCPU on CPU 0, the FIFO thread on CPU 1. An ordinary emulator there holds
 * nothing, and none is shown. */
START_TEST(test_realtime_threads_held_in_every_view)
{
        for (unsigned kind = 0; kind < 3; kind++) {
                g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) iothreads = NULL;
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autofree char *text = NULL, *json = NULL, *map = NULL;
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest req = {
                    .name = "rt1", .vcpus = 1, .memory = GiB, .realtime_emulator = kind == 1};
                const Plan *plan;
                JsonObject *cpu;

                ck_assert_int_eq(cpuset_parse("1", &iothreads, NULL), 0);
                req.iothreads = kind == 2 ? iothreads : NULL;
                req.realtime_iothreads = kind == 2 ? iothreads : NULL;
                ck_assert_int_eq(ledger_commit(l, "rt1", policy_place(t, l, &req, &p)), 0);
                plan = ledger_lookup(l, "rt1");
                ck_assert_uint_eq(plan->vcpu_pu[0], 0);
                ck_assert_uint_eq(ledger_pu_held(l, 1), kind ? 1 : 0);
                text = plan_to_text(t, plan);
                json = plan_to_json(t, plan);
                map = hostmap_render(t, l, NULL);
                json_builder_begin_object(b);
                hostmap_json_add(b, t, l, NULL);
                json_builder_end_object(b);
                g_autoptr(JsonNode) root = json_builder_get_root(b);
                cpu = json_array_get_object_element(
                    json_object_get_array_member(json_node_get_object(root), "cpus"), 1);
                if (kind) {
                        ck_assert_msg(strstr(text, "\n  held for its emulator and I/O threads: 1\n"), "%s",
                                      text);
                        ck_assert_msg(strstr(json, "\"held_cpus\":\"1\""), "%s", json);
                        ck_assert_msg(strstr(map, "    cpu    0 [A][A]\n"), "%s", map);
                        ck_assert_str_eq(json_object_get_string_member(cpu, "state"), "domain");
                } else {
                        ck_assert_msg(!strstr(text, "held for") && !strstr(json, "held_cpus"), "%s", json);
                        ck_assert_msg(strstr(map, "    cpu    0 [A][.]\n"), "%s", map);
                        ck_assert_str_eq(json_object_get_string_member(cpu, "state"), "free");
                }
        }
}
END_TEST

/* An advisory decision (Apply=no) publishes pins nothing applied: its JSON says "applied": false, and its
 * text says so before the pins, which otherwise read as the domain's. */
START_TEST(test_advisory_not_applied)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Decision) d = decision_new("uuid-a", "adv");
        const Decision *one = d;
        g_autofree char *json = NULL, *text = NULL, *placed_json = NULL, *placed_text = NULL;
        g_autoptr(JsonNode) root = NULL, placed_root = NULL;
        JsonObject *o;

        d->plan = plan_copy(test_place(t, l, &p, "adv", 2, 2 * GiB));
        d->result = DECISION_ADVISORY;
        d->memory_binding = MEMORY_BINDING_ADVISORY;
        json = decisions_to_json(t, l, &one, 1, FALSE, NULL, NULL);
        root = json_from_string(json, NULL);
        o = json_array_get_object_element(
            json_object_get_array_member(json_node_get_object(root), "decisions"), 0);
        ck_assert_str_eq(json_object_get_string_member(o, "result"), "advisory");
        ck_assert_msg(json_object_has_member(o, "applied") && !json_object_get_boolean_member(o, "applied"),
                      "%s", json);
        text = decision_to_text(t, d);
        ck_assert_msg(
            strstr(text, "\n  advised (Apply=no): not applied; the domain runs as it did\n  vCPU 0 -> "),
            "%s", text);

        /* the pins of any other decision are the domain's */
        d->result = DECISION_PLACED;
        d->memory_binding = MEMORY_BINDING_APPLIED;
        placed_json = decisions_to_json(t, l, &one, 1, FALSE, NULL, NULL);
        placed_root = json_from_string(placed_json, NULL);
        o = json_array_get_object_element(
            json_object_get_array_member(json_node_get_object(placed_root), "decisions"), 0);
        ck_assert_msg(json_object_get_boolean_member(o, "applied"), "%s", placed_json);
        placed_text = decision_to_text(t, d);
        ck_assert_msg(!strstr(placed_text, "not applied"), "%s", placed_text);
}
END_TEST

/* An advice that would not place the domain as asked is not hidden by "advisory": its verdict is the
 * plan's (what the log level and status go by) and the text says it beside the result. */
START_TEST(test_advisory_verdict)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Decision) huge = decision_new("uuid-h", "huge"), fits = decision_new("uuid-f", "fits");
        g_autofree char *huge_text = NULL, *fits_text = NULL;

        huge->plan = plan_copy(test_place(t, l, &p, "huge", 2, 1024 * GiB));
        huge->result = DECISION_ADVISORY;
        fits->plan = plan_copy(test_place(t, l, &p, "fits", 2, 2 * GiB));
        fits->result = DECISION_ADVISORY;
        ck_assert_int_eq(huge->plan->result, PLAN_UNPLACEABLE);
        ck_assert_int_eq(decision_verdict(huge), DECISION_UNPLACEABLE);
        ck_assert_int_eq(decision_verdict(fits), DECISION_ADVISORY);
        huge_text = decision_to_text(t, huge);
        fits_text = decision_to_text(t, fits);
        ck_assert_msg(strstr(huge_text, "): advisory (unplaceable) [explicit]\n"), "%s", huge_text);
        ck_assert_msg(strstr(fits_text, "): advisory on ") && !strstr(fits_text, "advisory ("), "%s",
                      fits_text);
        /* any other decision is its own verdict */
        huge->result = DECISION_UNPLACEABLE;
        ck_assert_int_eq(decision_verdict(huge), DECISION_UNPLACEABLE);
        fits->result = DECISION_PLACED;
        ck_assert_int_eq(decision_verdict(fits), DECISION_PLACED);
}
END_TEST

static Suite *json_suite(void)
{
        Suite *s = suite_create("decision json");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_decision_shape);
        tcase_add_test(tc, test_iothreads_only_when_pinned);
        tcase_add_test(tc, test_map);
        tcase_add_test(tc, test_map_json);
        tcase_add_test(tc, test_host_map_node_over_packages);
        tcase_add_test(tc, test_map_shared_legend);
        tcase_add_test(tc, test_map_letters_by_name);
        tcase_add_test(tc, test_decisions_document);
        tcase_add_test(tc, test_plan_and_explain);
        tcase_add_test(tc, test_held_cpus_in_text);
        tcase_add_test(tc, test_realtime_threads_held_in_every_view);
        tcase_add_test(tc, test_advisory_not_applied);
        tcase_add_test(tc, test_advisory_verdict);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(json_suite)
