/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guest NUMA cells in the engine: each cell's vCPUs on one host node, its memory counted there, whole
 * even when the domain overcommits; and without cells, a domain's vCPUs go where its memory goes.
 */
#include "test-util.h"
#include "domain-request.h"
#include "test-policy-util.h"

#include <string.h>

#include "decision-json.h"
#include "decision-text.h"
#include "definition-snippet.h"

static const PolicyKind kinds[] = {POLICY_EXPLICIT, POLICY_COMPAT};

static CpuSet *set_of(const char *list)
{
        CpuSet *s = NULL;
        ck_assert_int_eq(cpuset_parse(list, &s, NULL), 0);
        return s;
}

/* Cells from lists of vCPUs ("0-3", "4-7", ...), each with memory bytes. */
typedef struct {
        PlacementCell cells[8];
        CpuSet *sets[8];
        unsigned n;
} Cells;

static void cells_make(Cells *c, const char *const *lists, unsigned n, uint64_t memory)
{
        *c = (Cells){.n = n};
        for (unsigned i = 0; i < n; i++) {
                c->sets[i] = set_of(lists[i]);
                c->cells[i] = (PlacementCell){.id = i, .vcpus = c->sets[i], .memory = memory};
        }
}

static void cells_clear(Cells *c)
{
        for (unsigned i = 0; i < c->n; i++)
                cpuset_free(c->sets[i]);
}

static int node_of(const Topology *t, const Plan *p, unsigned vcpu)
{
        ck_assert_int_ge(p->vcpu_pu[vcpu], 0);
        return (int)t->cores[t->pus[p->vcpu_pu[vcpu]].core].node;
}

/* Every cell's vCPUs on one node; returns that node per cell in nodes_out. */
static void assert_cells_whole(const Topology *t, const Plan *p, const Cells *c, int *nodes_out)
{
        for (unsigned i = 0; i < c->n; i++) {
                int node = -1;
                CPUSET_FOREACH (v, c->sets[i]) {
                        int here = node_of(t, p, (unsigned)v);
                        if (node < 0)
                                node = here;
                        ck_assert_msg(here == node, "cell %u split: vCPU %d on node %d, others on %d (%s)",
                                      i, v, here, node, p->reason);
                }
                nodes_out[i] = node;
        }
}

static Plan *place(const Topology *t, const Ledger *l, PolicyKind k, unsigned vcpus, uint64_t memory,
                   const Cells *c)
{
        PlacementParams params = test_params(k);
        PlacementRequest req = {.name = "vm",
                                .vcpus = vcpus,
                                .memory = memory,
                                .cells = c ? c->cells : NULL,
                                .ncells = c ? c->n : 0};
        return policy_place(t, l, &req, &params);
}

/* A guest of two cells whose whole memory a live binding holds on one node (placementd bound it at the
 * start; a replace plans again under it): each cell's memory is known to be on that node, as it was
 * before the replace, not "memory nodes not known". */
START_TEST(test_cells_under_one_node_binding_known)
{
        static const char *const lists[] = {"0-1", "2-3"};
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) bound = set_of("1");
                g_autoptr(Plan) plan = NULL;
                PlacementParams params = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm", .vcpus = 4, .memory = 2 * GiB};
                Cells c;

                cells_make(&c, lists, 2, GiB);
                req.cells = c.cells;
                req.ncells = c.n;
                req.memory_nodes = bound;
                req.memory_source = MEMORY_SOURCE_BOUND;
                plan = policy_place(t, l, &req, &params);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                ck_assert_uint_eq(plan->node_memory[1], 2 * GiB);
                for (unsigned i = 0; i < plan->ncells; i++)
                        ck_assert_msg(cpuset_count(plan->cells[i].counted_nodes) == 1 &&
                                          cpuset_has(plan->cells[i].counted_nodes, 1),
                                      "cell %u: its memory's nodes not known (%s)", i, plan->reason);
                cells_clear(&c);
        }
}
END_TEST

/* 12 vCPUs in cells 0-3/4-7/8-11 with 8 free cores per node: came out 0-5 / 6-11, cell 1 split. */
START_TEST(test_three_cells_not_split)
{
        static const char *const lists[] = {"0-3", "4-7", "8-11"};
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t =
                    topology_new_uniform(2, 8, kinds[k] == POLICY_COMPAT ? 1 : 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                Cells c;
                int nodes[3];
                cells_make(&c, lists, 3, 2 * GiB);
                g_autoptr(Plan) p = place(t, l, kinds[k], 12, 6 * GiB, &c);

                ck_assert_int_eq(p->result, PLAN_PLACED);
                assert_cells_whole(t, p, &c, nodes);
                ck_assert_int_ne(nodes[0], nodes[1]);
                /* each cell's memory on its node */
                ck_assert_uint_eq(p->node_memory[0] + p->node_memory[1], 6 * GiB);
                ck_assert_uint_eq(p->node_memory[nodes[1]], 2 * GiB);
                ck_assert_uint_eq(p->node_memory[nodes[0]], nodes[0] == nodes[2] ? 4 * GiB : 2 * GiB);
                ck_assert_uint_eq(p->ncells, 3);
                ck_assert(cpuset_has(p->cells[1].nodes, (unsigned)nodes[1]));
                ck_assert_msg(strstr(p->reason, "guest cells: 0 on node"), "%s", p->reason);
                ck_assert_msg(strstr(p->reason,
                                     "<numatune><memnode> per cell in the definition: placementctl "
                                     "snippet"),
                              "%s", p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* Interleaved cells 0,2,4,6 / 1,3,5,7 on two 4-core nodes: both used to be split. */
START_TEST(test_interleaved_cells)
{
        static const char *const lists[] = {"0,2,4,6", "1,3,5,7"};
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                Cells c;
                int nodes[2];
                cells_make(&c, lists, 2, 4 * GiB);
                g_autoptr(Plan) p = place(t, l, kinds[k], 8, 8 * GiB, &c);

                ck_assert_int_eq(p->result, PLAN_PLACED);
                assert_cells_whole(t, p, &c, nodes);
                ck_assert_int_ne(nodes[0], nodes[1]);
                ck_assert_uint_eq(p->node_memory[0], 4 * GiB);
                ck_assert_uint_eq(p->node_memory[1], 4 * GiB);
                cells_clear(&c);
        }
}

END_TEST

/* Overcommitted (12 vCPUs on 8 cores): vCPUs share, but each cell stays on one node. */
START_TEST(test_overcommit_keeps_cells_whole)
{
        static const char *const lists[] = {"0-3", "4-7", "8-11"};
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                Cells c;
                int nodes[3];
                cells_make(&c, lists, 3, 1 * GiB);
                g_autoptr(Plan) p = place(t, l, kinds[k], 12, 3 * GiB, &c);

                ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
                assert_cells_whole(t, p, &c, nodes);
                cells_clear(&c);
        }
}
END_TEST

/* With measured load too: busy vCPUs go first and idle ones share, and still each cell stays on one node
 * (the assignment by load once ignored cells). */
START_TEST(test_overcommit_by_load_keeps_cells_whole)
{
        static const char *const lists[] = {"0-3", "4-7", "8-11"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        double busy[12];
        Cells c;
        int nodes[3];

        for (unsigned i = 0; i < 12; i++)
                busy[i] = i % 2 ? 0.1 : 0.9;
        cells_make(&c, lists, 3, 1 * GiB);
        PlacementRequest req = {.name = "vm",
                                .vcpus = 12,
                                .memory = 3 * GiB,
                                .cells = c.cells,
                                .ncells = c.n,
                                .vcpu_busy = busy,
                                .pu_busy = pu_busy};
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
        ck_assert_ptr_nonnull(strstr(p->reason, "by measured load: "));
        assert_cells_whole(t, p, &c, nodes);
        cells_clear(&c);
}
END_TEST

/* Cells of 2 vCPUs on nodes of one core (the real-libvirtd e2e host): 4 vCPUs on 2 cores share anyway,
 * so each cell stays whole on its node rather than split to share with the other cell. */
START_TEST(test_overcommit_small_nodes_keep_cells_whole)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 1, 1, 1 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;
        int nodes[2];
        cells_make(&c, lists, 2, 32 << 20);
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 4, 64 << 20, &c);

        ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
        assert_cells_whole(t, p, &c, nodes);
        ck_assert_int_eq(nodes[0], 0);
        ck_assert_int_eq(nodes[1], 1);
        cells_clear(&c);
}
END_TEST

/* ... but a cell that would crowd one node's cores beyond what the domain must share is split. */
START_TEST(test_overcommit_splits_a_crowding_cell)
{
        static const char *const lists[] = {"0-15"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;
        cells_make(&c, lists, 1, 2 * GiB);
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 16, 2 * GiB, &c);

        ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(test_max_per_core(t, p), 2);
        cells_clear(&c);
}
END_TEST

/* Three 5-vCPU cells on two 8-core nodes: 16 free cores hold 15 vCPUs, so the domain is placed, not
 * overcommitted; two cells stay whole and one is split, and the reason says so. */
START_TEST(test_cells_split_rather_than_overcommit)
{
        static const char *const lists[] = {"0-4", "5-9", "10-14"};
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;
        unsigned whole = 0;
        cells_make(&c, lists, 3, 1 * GiB);
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 15, 3 * GiB, &c);

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(test_max_per_core(t, p), 1);
        for (unsigned i = 0; i < 3; i++)
                whole += cpuset_count(p->cells[i].nodes) == 1;
        ck_assert_uint_eq(whole, 2);
        ck_assert_msg(strstr(p->reason, "(split: no node had room for it)"), "%s", p->reason);
        cells_clear(&c);
}
END_TEST

/* A cell bigger than any node (6 vCPUs, 4-core nodes) goes over the nearest set that holds it. */
START_TEST(test_cell_too_big_for_a_node)
{
        static const char *const lists[] = {"0-5", "6-7"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;
        cells_make(&c, lists, 2, 1 * GiB);
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 8, 2 * GiB, &c);

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(test_max_per_core(t, p), 1);
        ck_assert_uint_eq(cpuset_count(p->cells[0].nodes), 2);
        ck_assert_uint_eq(cpuset_count(p->cells[1].nodes), 1);
        cells_clear(&c);
}
END_TEST

/* Without cells, vCPUs follow the memory: node 0 has 1 GiB free, node 1 4 GiB; a 6-vCPU 4.5 GiB domain
 * puts 3.5 GiB on node 1, so 4 of its vCPUs go there, not an even 3 + 3. */
START_TEST(test_vcpus_follow_memory)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 4 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                Plan *held = plan_new("held", 0, 3 * GiB, t->nnodes);
                unsigned on[2] = {0, 0};

                held->node_memory[0] = 3 * GiB;
                ck_assert_int_eq(ledger_commit(l, "held", held), 0);
                g_autoptr(Plan) p = place(t, l, kinds[k], 6, 4 * GiB + GiB / 2, NULL);

                ck_assert_int_eq(p->result, PLAN_PLACED);
                for (unsigned v = 0; v < p->nvcpus; v++)
                        on[node_of(t, p, v)]++;
                ck_assert_uint_eq(on[0], 2);
                ck_assert_uint_eq(on[1], 4);
                ck_assert_uint_eq(p->node_memory[0], 1 * GiB);
                ck_assert_uint_eq(p->node_memory[1], 3 * GiB + GiB / 2);
        }
}
END_TEST

/* With room for an even split of the memory, the split stays even. */
START_TEST(test_vcpus_even_when_memory_is)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned on[2] = {0, 0};
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 6, 12 * GiB, NULL);

        ck_assert_int_eq(p->result, PLAN_PLACED);
        for (unsigned v = 0; v < p->nvcpus; v++)
                on[node_of(t, p, v)]++;
        ck_assert_uint_eq(on[0], 3);
        ck_assert_uint_eq(on[1], 3);
}
END_TEST

/* The definition snippet of a cell plan: a vcpupin per vCPU, the memory nodes and a memnode per cell. */
START_TEST(test_definition_snippet)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *xml = NULL, *error = NULL;
        Cells c;
        cells_make(&c, lists, 2, 1 * GiB);
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 4, 2 * GiB, &c);

        json_builder_begin_object(b);
        decision_json_add_members(b, t, p, FALSE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        xml = definition_snippet(json_node_get_object(root), &error);
        ck_assert_msg(xml, "%s", error);
        ck_assert_str_eq(xml, "<cputune>\n"
                              "  <vcpupin vcpu='0' cpuset='0'/>\n"
                              "  <vcpupin vcpu='1' cpuset='1'/>\n"
                              "  <vcpupin vcpu='2' cpuset='2'/>\n"
                              "  <vcpupin vcpu='3' cpuset='3'/>\n"
                              "  <emulatorpin cpuset='0-3'/>\n"
                              "</cputune>\n"
                              "<numatune>\n"
                              "  <memory mode='strict' nodeset='0-1'/>\n"
                              "  <memnode cellid='0' mode='strict' nodeset='0'/>\n"
                              "  <memnode cellid='1' mode='strict' nodeset='1'/>\n"
                              "</numatune>\n");
        /* a binding placementd did not make (the definition's own, e.g. interleave) is not written over
         * with a strict one, and a skipped decision (pinned by hand) gives no snippet at all */
        {
                JsonObject *o = json_node_get_object(root);
                g_autofree char *kept = NULL, *skipped = NULL, *why = NULL;
                json_object_set_string_member(o, "memory_binding", "kept");
                kept = definition_snippet(o, &why);
                ck_assert_msg(kept && !strstr(kept, "<numatune>") && strstr(kept, "<vcpupin vcpu='3'"), "%s",
                              kept ? kept : why);
                json_object_set_string_member(o, "result", "skipped");
                skipped = definition_snippet(o, &why);
                ck_assert_ptr_null(skipped);
                ck_assert_msg(why && strstr(why, "skipped"), "%s", why);
        }
        cells_clear(&c);
}
END_TEST

/* A cell whose vCPUs' node lacks the room for its memory: its memory is counted on the nearest nodes
 * with room, the reason says where, and the snippet's <memnode> names them too (a strict binding to the
 * vCPUs' node alone would leave it no room: hugepages fail, the guest is killed when it fills the node). */
START_TEST(test_cell_memory_beyond_its_node)
{
        static const char *const lists[] = {"0", "1"};
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 4 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *xml = NULL, *error = NULL;
        g_autoptr(Plan) filler = place(t, l, POLICY_EXPLICIT, 1, 3 * GiB, NULL);
        g_autoptr(Plan) p = NULL;
        int small = -1;
        Cells c;

        ck_assert_int_eq(filler->result, PLAN_PLACED);
        ck_assert_int_eq(ledger_commit(l, "filler", plan_copy(filler)), 0);
        /* 1 GiB free on the filler's node, 4 GiB on the other: 2.5 GiB cells cannot both go whole */
        cells_make(&c, lists, 2, 5 * GiB / 2);
        p = place(t, l, POLICY_EXPLICIT, 2, 5 * GiB, &c);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        for (unsigned i = 0; i < 2; i++) {
                int node = node_of(t, p, i);
                /* every cell's memory is counted on its own vCPU's node and, when short, beyond it */
                ck_assert(cpuset_has(p->cells[i].counted_nodes, (unsigned)node));
                if (cpuset_count(p->cells[i].counted_nodes) == 2)
                        small = (int)i;
        }
        /* 5 GiB on nodes of 1 and 4 GiB free: one cell at least is counted on both */
        ck_assert_msg(small >= 0, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "(its memory also on node "), "%s", p->reason);
        json_builder_begin_object(b);
        decision_json_add_members(b, t, p, FALSE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        xml = definition_snippet(json_node_get_object(root), &error);
        ck_assert_msg(xml, "%s", error);
        {
                g_autofree char *want =
                    g_strdup_printf("<memnode cellid='%d' mode='strict' nodeset='0-1'/>", small);
                ck_assert_msg(strstr(xml, want), "%s", xml);
        }
        cells_clear(&c);
}
END_TEST

/* Two 12-vCPU cells on Sapphire Rapids in SNC2 (two packages of two 8-core nodes, 12 apart inside a
 * package, 21 across): on the nearest three nodes one cell would span both packages; on all four, as
 * near by their farthest nodes, each cell stays inside one package. */
START_TEST(test_split_cells_stay_in_a_package)
{
        static const char *const lists[] = {"0-11", "12-23"};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 2, 8 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Plan) p = place(t, l, kinds[k], 24, 16 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned i = 0; i < 2; i++) {
                        int package = -1;
                        CPUSET_FOREACH (v, c.sets[i]) {
                                int here = (int)t->cores[t->pus[p->vcpu_pu[v]].core].package;
                                ck_assert_msg(package < 0 || here == package,
                                              "%s: cell %u spans packages: %s",
                                              policy_kind_to_string(kinds[k]), i, p->reason);
                                package = here;
                        }
                }
                if (kinds[k] == POLICY_EXPLICIT)
                        ck_assert_msg(
                            strstr(p->reason, "splits each guest cell over nodes at most 12 apart"), "%s",
                            p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* The same two packages with 5 of node 0's 8 cores taken, two 10-vCPU cells: each cell still fits one
 * package (3 + 8 free cores in package 0, 16 in package 1), so neither spans both. The vCPUs no node
 * holds whole were split evenly over all four nodes (3, 6, 6, 5) and handed out in vCPU order, so cell 0
 * took node 2's first core across the packages, on every set as near by its farthest nodes, and the
 * plan put it on nodes 1-2. */
START_TEST(test_split_cells_stay_in_a_package_when_a_node_is_busy)
{
        static const char *const lists[] = {"0-9", "10-19"};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) f = plan_new("filler", 5, 1 * GiB, t->nnodes);
        Cells c;

        f->result = PLAN_PLACED;
        for (unsigned v = 0; v < 5; v++)
                f->vcpu_pu[v] = (int)t->cores[t->nodes[0].core_first + v].pu_first;
        f->node_memory[0] = 1 * GiB;
        cpuset_add(f->nodes, 0);
        ck_assert_int_eq(ledger_commit(l, "filler", plan_copy(f)), 0);
        cells_make(&c, lists, 2, 4 * GiB);
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 20, 8 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned i = 0; i < 2; i++) {
                        int package = -1;
                        CPUSET_FOREACH (v, c.sets[i]) {
                                int here = (int)t->cores[t->pus[p->vcpu_pu[v]].core].package;
                                ck_assert_msg(package < 0 || here == package, "cell %u spans packages: %s",
                                              i, p->reason);
                                package = here;
                        }
                }
        }
        cells_clear(&c);
}
END_TEST

/* Two packages of three 8-core nodes of 64 GiB (12 apart inside a package, 21 across), two 12-vCPU cells
 * of 150 GiB: each cell's vCPUs fit two nodes, its memory three, of one package. The nearer five-node sets
 * hold every cell's vCPUs inside a package but one cell's memory only across it; the split of a cell
 * weighs its memory too, so all six nodes win, each cell with its memory inside its package. */
START_TEST(test_split_cells_memory_stays_in_a_package)
{
        static const char *const lists[] = {"0-11", "12-23"};
        uint32_t d[36];
        Cells c;

        for (unsigned i = 0; i < 6; i++)
                for (unsigned j = 0; j < 6; j++)
                        d[i * 6 + j] = i == j ? 10 : i / 3 == j / 3 ? 12 : 21;
        g_autoptr(Topology) t = topology_new_uniform(6, 8, 1, 64 * GiB, d);
        g_autoptr(Ledger) l = ledger_new(t);

        cells_make(&c, lists, 2, 150 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Plan) p = place(t, l, kinds[k], 24, 300 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned i = 0; i < 2; i++) {
                        int node = node_of(t, p, cpuset_next(c.sets[i], 0));
                        CPUSET_FOREACH (v, c.sets[i])
                                ck_assert_msg(topology_distance(t, (unsigned)node_of(t, p, (unsigned)v),
                                                                (unsigned)node) <= 12,
                                              "%s: cell %u spans packages: %s",
                                              policy_kind_to_string(kinds[k]), i, p->reason);
                        CPUSET_FOREACH (m, p->cells[i].counted_nodes)
                                ck_assert_msg(topology_distance(t, (unsigned)node, (unsigned)m) <= 12,
                                              "%s: cell %u memory on node %d, its vCPUs on %d: %s",
                                              policy_kind_to_string(kinds[k]), i, m, node, p->reason);
                }
        }
        cells_clear(&c);
}
END_TEST

/* Overcommitted: two packages of two 4-core nodes (12 apart inside a package, 21 across), 6 vCPUs of
 * another domain on package 0, two 6-vCPU cells: 10 free cores for 12 vCPUs, so 2 must share. Package 1's
 * 8 free cores hold a whole cell; the other takes their last 2 and package 0's, and shares there. The
 * vCPUs of cells no node held went one by one to the least loaded core of the whole set, so both cells
 * ran on all four nodes, across the packages, for no fewer sharing. */
START_TEST(test_overcommitted_split_cell_stays_in_a_package)
{
        static const char *const lists[] = {"0-5", "6-11"};
        uint32_t d[16];
        Cells c;

        for (unsigned i = 0; i < 4; i++)
                for (unsigned j = 0; j < 4; j++)
                        d[i * 4 + j] = i == j ? 10 : i / 2 == j / 2 ? 12 : 21;
        g_autoptr(Topology) t = topology_new_uniform(4, 4, 1, 16 * GiB, d);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) filler = place(t, l, POLICY_EXPLICIT, 6, 1 * GiB, NULL);

        ck_assert_int_eq(filler->result, PLAN_PLACED);
        ck_assert_int_eq(ledger_commit(l, "filler", plan_copy(filler)), 0);
        cells_make(&c, lists, 2, 2 * GiB);
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 12, 4 * GiB, &c);
                unsigned whole = 0;

                ck_assert_msg(p->result == PLAN_OVERCOMMITTED, "%s", p->reason);
                ck_assert_msg(p->shared_vcpus == 2, "%u vCPUs share: %s", p->shared_vcpus, p->reason);
                for (unsigned i = 0; i < 2; i++) {
                        int node = node_of(t, p, cpuset_next(c.sets[i], 0));
                        bool inside = true;
                        CPUSET_FOREACH (v, c.sets[i])
                                inside = inside && topology_distance(t, (unsigned)node_of(t, p, (unsigned)v),
                                                                     (unsigned)node) <= 12;
                        whole += inside;
                }
                ck_assert_msg(whole >= 1, "both cells span packages: %s", p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* Two cells of 2 vCPUs and 150 GiB each on Sapphire Rapids in SNC2 (nodes of 103 GiB, 12 apart inside a
 * package, 21 across): no node holds a cell's memory, but two nodes of one package do. Each cell's vCPUs
 * run on one node and its memory is counted on that node and the other of its package; the nearest set
 * by mean (three nodes) would leave one cell's memory across the packages. */
START_TEST(test_cell_memory_spills_inside_its_package)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 2, 150 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Plan) p = place(t, l, kinds[k], 4, 300 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned i = 0; i < 2; i++) {
                        int node = node_of(t, p, cpuset_next(c.sets[i], 0));
                        CPUSET_FOREACH (v, c.sets[i])
                                ck_assert_msg(node_of(t, p, (unsigned)v) == node, "%s: cell %u split: %s",
                                              policy_kind_to_string(kinds[k]), i, p->reason);
                        ck_assert_msg(cpuset_count(p->cells[i].counted_nodes) == 2, "%s: cell %u: %s",
                                      policy_kind_to_string(kinds[k]), i, p->reason);
                        CPUSET_FOREACH (m, p->cells[i].counted_nodes)
                                ck_assert_msg(topology_distance(t, (unsigned)node, (unsigned)m) <= 12,
                                              "%s: cell %u memory on node %d, its vCPUs on %d: %s",
                                              policy_kind_to_string(kinds[k]), i, m, node, p->reason);
                }
                /* no cell is split: the reason says what made the set nearer (it said "splits") */
                ck_assert_msg(strstr(p->reason,
                                     "the one that keeps each guest cell whole with its memory at "
                                     "most 12 from its vCPUs") &&
                                  !strstr(p->reason, "splits"),
                              "%s: %s", policy_kind_to_string(kinds[k]), p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* A guest cell without vCPUs (nor a <memnode>): its memory is counted as the memory beyond the cells, and
 * the plan says where (the reason and cells[].counted_nodes); it was counted, but named nowhere. */
START_TEST(test_memory_only_cell_says_where)
{
        static const char *const lists[] = {"0-1", "2-3", ""};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 3, 2 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Plan) p = place(t, l, kinds[k], 4, 6 * GiB, &c);
                g_autoptr(CpuSet) vcpu_nodes = cpuset_new();
                g_autofree char *expect = NULL, *list = NULL;
                uint64_t counted = 0;

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned v = 0; v < 4; v++)
                        cpuset_add(vcpu_nodes, (unsigned)node_of(t, p, v));
                ck_assert_msg(cpuset_equal(p->cells[2].counted_nodes, vcpu_nodes), "%s: %s",
                              policy_kind_to_string(kinds[k]), p->reason);
                for (unsigned n = 0; n < p->nnode_memory; n++)
                        counted += p->node_memory[n];
                ck_assert_uint_eq(counted, 6 * GiB);
                list = cpuset_format(vcpu_nodes);
                expect = g_strdup_printf("2 (no vCPUs) with its memory on node%s %s",
                                         cpuset_count(vcpu_nodes) > 1 ? "s" : "", list);
                ck_assert_msg(strstr(p->reason, expect), "%s: %s", policy_kind_to_string(kinds[k]),
                              p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* The same with the pools short: 6 of 16 pages of 1 GiB free on each node, two cells of one vCPU and 10
 * pages each. Each cell's memory fits two nodes of one package; its vCPU goes to one of them. */
START_TEST(test_hugepage_cells_spill_inside_their_package)
{
        static const char *const lists[] = {"0", "1"};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        Cells c;

        for (unsigned n = 0; n < t->nnodes; n++) {
                g_autoptr(Plan) f = plan_new("filler", 1, 10 * GiB, t->nnodes);
                f->hugepage_size = 1 * GiB;
                f->result = PLAN_PLACED;
                f->vcpu_pu[0] = (int)t->cores[t->nodes[n].core_first].pu_first;
                f->node_memory[n] = 10 * GiB;
                cpuset_add(f->nodes, n);
                {
                        g_autofree char *name = g_strdup_printf("filler%u", n);
                        ck_assert_int_eq(ledger_commit(l, name, plan_copy(f)), 0);
                }
        }
        cells_make(&c, lists, 2, 10 * GiB);
        {
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 2,
                                        .memory = 20 * GiB,
                                        .hugepage_size = 1 * GiB,
                                        .cells = c.cells,
                                        .ncells = c.n};
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned i = 0; i < 2; i++) {
                        int node = node_of(t, p, i);
                        ck_assert_msg(cpuset_count(p->cells[i].counted_nodes) == 2, "cell %u: %s", i,
                                      p->reason);
                        CPUSET_FOREACH (m, p->cells[i].counted_nodes)
                                ck_assert_msg(topology_distance(t, (unsigned)node, (unsigned)m) <= 12,
                                              "cell %u memory on node %d, its vCPU on %d: %s", i, m, node,
                                              p->reason);
                }
        }
        cells_clear(&c);
}
END_TEST

/* Granite Rapids-like SNC3 (two packages of three 8-core nodes, 12 apart inside a package, 21 across),
 * one vCPU already on node 0, two 14-vCPU cells: the sets that keep each cell inside a package all lie
 * past the nearest group, as near by their farthest nodes; among them, as among the nearest group's, the
 * least loaded wins (Fit=spread), not merely the first seen, which held node 0. */
START_TEST(test_split_cells_past_the_group_least_loaded)
{
        static const char *const lists[] = {"0-13", "14-27"};
        uint32_t d[36];
        Cells c;

        for (unsigned i = 0; i < 6; i++)
                for (unsigned j = 0; j < 6; j++)
                        d[i * 6 + j] = i == j ? 10 : i / 3 == j / 3 ? 12 : 21;
        g_autoptr(Topology) t = topology_new_uniform(6, 8, 1, 64 * GiB, d);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) filler = place(t, l, POLICY_EXPLICIT, 1, 1 * GiB, NULL);

        ck_assert_int_eq(filler->result, PLAN_PLACED);
        ck_assert_int_eq(node_of(t, filler, 0), 0);
        ck_assert_int_eq(ledger_commit(l, "filler", plan_copy(filler)), 0);
        cells_make(&c, lists, 2, 4 * GiB);
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 28, 8 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "splits each guest cell over nodes at most 12 apart"), "%s",
                              p->reason);
                ck_assert_msg(!cpuset_has(p->nodes, 0), "node 0 holds the filler: %s", p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* Takes count cores of node n for a domain of its own, named after it. */
static void occupy(const Topology *t, Ledger *l, unsigned n, unsigned count)
{
        g_autoptr(Plan) f = plan_new("filler", count, 1 * GiB, t->nnodes);
        g_autofree char *name = g_strdup_printf("filler%u", n);

        f->result = PLAN_PLACED;
        for (unsigned i = 0; i < count; i++)
                f->vcpu_pu[i] = (int)t->cores[t->nodes[n].core_first + i].pu_first;
        f->node_memory[n] = 1 * GiB;
        cpuset_add(f->nodes, n);
        ck_assert_int_eq(ledger_commit(l, name, plan_copy(f)), 0);
}

/* Three 4-vCPU cells on two 8-core nodes, node 0 full of another domain: the domain must share, but two
 * cells take node 1's free cores and one shares node 0's (4 vCPUs shared), not one cell on node 1 and two
 * sharing node 0 (8) as when the cells went by the nodes' size alone. */
START_TEST(test_overcommit_cells_take_free_cores_first)
{
        static const char *const lists[] = {"0-3", "4-7", "8-11"};
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;
        int nodes[3];

        occupy(t, l, 0, 8);
        cells_make(&c, lists, 3, 4 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Plan) p = place(t, l, kinds[k], 12, 12 * GiB, &c);
                unsigned on_1 = 0;

                ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
                assert_cells_whole(t, p, &c, nodes);
                for (unsigned i = 0; i < 3; i++)
                        on_1 += nodes[i] == 1;
                ck_assert_msg(on_1 == 2, "%s: %u cells on the free node: %s",
                              policy_kind_to_string(kinds[k]), on_1, p->reason);
                ck_assert_msg(p->shared_vcpus == 4, "%s: %u vCPUs share: %s",
                              policy_kind_to_string(kinds[k]), p->shared_vcpus, p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* Three 4-core nodes, CPUs 0-1 of node 0 reserved (2 cores left), node 1 full of another domain: two
 * 4-vCPU cells have 6 free cores, so 2 vCPUs must share. One cell takes node 2; the other, which no node
 * holds with a free core per vCPU, is split over node 0's 2 free cores and node 1 (2 vCPUs share), not
 * put whole on node 1, where all 4 shared while node 0's cores stood idle. */
START_TEST(test_overcommit_cell_split_onto_free_cores)
{
        static const char *const lists[] = {"0-3", "4-7"};
        g_autoptr(Topology) t = topology_new_uniform(3, 4, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) reserved = set_of("0-1");
        Cells c;

        occupy(t, l, 1, 4);
        cells_make(&c, lists, 2, 1 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                PlacementParams params = test_params(kinds[k]);
                PlacementRequest req = {
                    .name = "vm", .vcpus = 8, .memory = 2 * GiB, .cells = c.cells, .ncells = c.n};
                params.reserved_cpus = reserved;
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);
                unsigned on_0 = 0;

                ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
                for (unsigned i = 0; i < p->nvcpus; i++)
                        on_0 += node_of(t, p, i) == 0;
                ck_assert_msg(on_0 == 2, "%s: %u vCPUs on node 0's free cores: %s",
                              policy_kind_to_string(kinds[k]), on_0, p->reason);
                ck_assert_msg(p->shared_vcpus == 2, "%s: %u vCPUs share: %s",
                              policy_kind_to_string(kinds[k]), p->shared_vcpus, p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* Sapphire Rapids-like SNC4 (two sockets of four 8-core nodes, 12 apart inside a socket, 21 across) with
 * 7, 4, 0, 0, 2, 2, 6, 6 free cores: four 4-vCPU cells go to nodes 0, 1, 6 and 7. Nodes 4 and 5, near
 * nodes 6-7, lower the mean of a set that holds them too, but have room for no cell: that set is not the
 * domain's (its nodes, its free cores and VCPUPin=nodeset would name nodes it has nothing on). */
START_TEST(test_cells_set_without_idle_nodes)
{
        static const char *const lists[] = {"0-3", "4-7", "8-11", "12-15"};
        static const unsigned used[] = {1, 4, 8, 8, 6, 6, 2, 2};
        uint32_t d[64];
        Cells c;

        for (unsigned i = 0; i < 8; i++)
                for (unsigned j = 0; j < 8; j++)
                        d[i * 8 + j] = i == j ? 10 : i / 4 == j / 4 ? 12 : 21;
        g_autoptr(Topology) t = topology_new_uniform(8, 8, 1, 64 * GiB, d);
        g_autoptr(Ledger) l = ledger_new(t);

        for (unsigned n = 0; n < 8; n++)
                occupy(t, l, n, used[n]);
        cells_make(&c, lists, 4, 4 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Plan) p = place(t, l, kinds[k], 16, 16 * GiB, &c);
                g_autoptr(CpuSet) holds = cpuset_new();

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned i = 0; i < p->nvcpus; i++)
                        cpuset_add(holds, (unsigned)node_of(t, p, i));
                for (unsigned n = 0; n < t->nnodes; n++)
                        if (p->node_memory[n])
                                cpuset_add(holds, n);
                ck_assert_msg(cpuset_equal(p->nodes, holds), "%s: nodes with nothing of it: %s",
                              policy_kind_to_string(kinds[k]), p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* Two 1-vCPU cells on a host whose CPU nodes have no memory left, only the memory-only node: each cell's
 * memory is all there, and the reason says so, not that it is "also" there. */
START_TEST(test_cell_memory_none_on_its_node)
{
        static const char *const lists[] = {"0", "1"};
        g_autoptr(Topology) t = test_topology_load("memory-only.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) f = plan_new("filler", 1, t->nodes[0].memory + t->nodes[1].memory, t->nnodes);
        Cells c;

        f->result = PLAN_PLACED;
        f->vcpu_pu[0] = -1;
        f->node_memory[0] = t->nodes[0].memory;
        f->node_memory[1] = t->nodes[1].memory;
        ck_assert_int_eq(ledger_commit(l, "filler", plan_copy(f)), 0);
        cells_make(&c, lists, 2, 1 * GiB);
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 2, 2 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                ck_assert_msg(!strstr(p->reason, "also on"), "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "(its memory on node 2: "), "%s", p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* How far apart cells a and b of plan p (each whole on a node) run: 0 on one node, else the SLIT's. */
static uint32_t cells_apart(const Topology *t, const Plan *p, unsigned a, unsigned b)
{
        ck_assert_msg(cpuset_count(p->cells[a].nodes) == 1 && cpuset_count(p->cells[b].nodes) == 1,
                      "a cell split: %s", p->reason);
        if (cpuset_equal(p->cells[a].nodes, p->cells[b].nodes))
                return 0;
        return topology_distance(t, (unsigned)cpuset_next(p->cells[a].nodes, 0),
                                 (unsigned)cpuset_next(p->cells[b].nodes, 0));
}

/* Whether the two pairs of cells near[] of a four-cell plan run nearer than each of its other four pairs. */
static bool near_pairs_nearer(const Topology *t, const Plan *p, const unsigned near[2][2])
{
        uint32_t nearest_far = UINT32_MAX, farthest_near = 0;

        for (unsigned a = 0; a < 4; a++)
                for (unsigned b = a + 1; b < 4; b++) {
                        bool is_near = false;
                        for (unsigned k = 0; k < 2; k++)
                                is_near = is_near || (near[k][0] == a && near[k][1] == b);
                        if (is_near)
                                farthest_near = MAX(farthest_near, cells_apart(t, p, a, b));
                        else
                                nearest_far = MIN(nearest_far, cells_apart(t, p, a, b));
                }
        return farthest_near < nearest_far;
}

/* A 24-vCPU guest of four 6-vCPU cells whose <distances> mirror Sapphire Rapids in SNC2 (cells 0-1 and
 * 2-3 at 12, the rest at 21), on that host after a 2-vCPU guest took two of node 0's cores. The cells
 * went by free cores alone, node 0 last: 0, 1, 2, 3 on nodes 1, 2, 3, 0, so both of the guest's near pairs
 * ran across the packages and its far pairs 1-2 and 3-0 inside them, every distance its kernel balances
 * by turned over. */
START_TEST(test_cells_follow_guest_distances)
{
        static const char xml[] =
            "<domain type='kvm'><name>mirror</name><memory unit='GiB'>48</memory><vcpu>24</vcpu>"
            "<cpu mode='host-passthrough'><numa>"
            "<cell id='0' cpus='0-5' memory='12' unit='GiB'><distances><sibling id='0' value='10'/>"
            "<sibling id='1' value='12'/><sibling id='2' value='21'/><sibling id='3' value='21'/>"
            "</distances></cell>"
            "<cell id='1' cpus='6-11' memory='12' unit='GiB'><distances><sibling id='0' value='12'/>"
            "<sibling id='1' value='10'/><sibling id='2' value='21'/><sibling id='3' value='21'/>"
            "</distances></cell>"
            "<cell id='2' cpus='12-17' memory='12' unit='GiB'><distances><sibling id='0' value='21'/>"
            "<sibling id='1' value='21'/><sibling id='2' value='10'/><sibling id='3' value='12'/>"
            "</distances></cell>"
            "<cell id='3' cpus='18-23' memory='12' unit='GiB'><distances><sibling id='0' value='21'/>"
            "<sibling id='1' value='21'/><sibling id='2' value='12'/><sibling id='3' value='10'/>"
            "</distances></cell>"
            "</numa></cpu></domain>";
        static const unsigned near[2][2] = {{0, 1}, {2, 3}};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");

        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(DomainSpec) spec = NULL;
                g_auto(RequestShape) shape = {0};
                g_autofree char *error = NULL;
                PlacementParams params = test_params(kinds[k]);
                PlacementRequest req;

                test_place(t, l, &params, "small", 2, 4 * GiB);
                ck_assert_msg(domain_xml_parse(xml, &spec, &error) == 0, "%s", error);
                req = domain_request(spec, spec);
                domain_request_shape(spec, t, &req, &shape);
                {
                        g_autoptr(Plan) p = policy_place(t, l, &req, &params);
                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        ck_assert_msg(near_pairs_nearer(t, p, near), "%s: %s",
                                      policy_kind_to_string(kinds[k]), p->reason);
                        ck_assert_msg(
                            strstr(p->reason, "(the cells its <distances> hold nearer run on nearer nodes)"),
                            "%s", p->reason);
                }
        }
}
END_TEST

/* The node cell runs on (whole on one node). */
static int cell_node_of(const Topology *t, const Plan *p, const Cells *c, unsigned cell)
{
        return node_of(t, p, (unsigned)cpuset_next(c->cells[cell].vcpus, 0));
}

/* The guest's near pairs are 0-2 and 1-3 (distances 12), the rest 21: on an empty Sapphire Rapids in SNC2
 * the cells went 0, 1, 2, 3 to nodes 0, 1, 2, 3, so cells 0 and 2 ran across the packages and 0 and 1,
 * far in the guest, inside one. Cells of as many vCPUs and different memory (18, 16, 14 and 16 GiB) trade
 * places too when the nodes' free memory holds them (until 2026-12-06 only cells 1 and 3, of one size,
 * could, which put neither pair right), each node then holding the memory of the cells it runs. */
START_TEST(test_cells_follow_inverted_distances)
{
        static const char *const lists[] = {"0-7", "8-15", "16-23", "24-31"};
        static const uint64_t gib[2][4] = {{16, 16, 16, 16}, {18, 16, 14, 16}};
        static const uint8_t d[4][4] = {
            {10, 21, 12, 21}, {21, 10, 21, 12}, {12, 21, 10, 21}, {21, 12, 21, 10}};
        static const unsigned near[2][2] = {{0, 2}, {1, 3}};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 4, 0);
        for (unsigned i = 0; i < 4; i++) {
                c.cells[i].distances = d[i];
                c.cells[i].ndistances = 4;
        }
        for (unsigned m = 0; m < G_N_ELEMENTS(gib); m++)
                for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                        g_autoptr(Plan) p = NULL;

                        for (unsigned i = 0; i < 4; i++)
                                c.cells[i].memory = gib[m][i] * GiB;
                        p = place(t, l, kinds[k], 32, 64 * GiB, &c);
                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        ck_assert_msg(near_pairs_nearer(t, p, near), "%s: %s",
                                      policy_kind_to_string(kinds[k]), p->reason);
                        for (unsigned n = 0; n < p->nnode_memory; n++) {
                                uint64_t cells = 0;
                                for (unsigned i = 0; i < 4; i++)
                                        cells += cell_node_of(t, p, &c, i) == (int)n ? gib[m][i] * GiB : 0;
                                ck_assert_msg(p->node_memory[n] == cells, "node %u: %s", n, p->reason);
                        }
                }
        cells_clear(&c);
}
END_TEST

/* No <distances>, but <topology sockets='2' cores='12'>: cells 0-1 are the guest's socket 0, 2-3 its
 * socket 1. After a 2-vCPU guest on node 0 of Sapphire Rapids in SNC2, cells 0 and 1 ran on nodes 1 and
 * 2, guest socket 0 across both host packages. */
START_TEST(test_cells_follow_guest_sockets)
{
        static const char *const lists[] = {"0-5", "6-11", "12-17", "18-23"};
        static const unsigned near[2][2] = {{0, 1}, {2, 3}};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        Cells c;

        cells_make(&c, lists, 4, 12 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams params = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 24,
                                        .memory = 48 * GiB,
                                        .cells = c.cells,
                                        .ncells = 4,
                                        .guest_socket_vcpus = 12};

                test_place(t, l, &params, "small", 2, 4 * GiB);
                {
                        g_autoptr(Plan) p = policy_place(t, l, &req, &params);
                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        ck_assert_msg(near_pairs_nearer(t, p, near), "%s: %s",
                                      policy_kind_to_string(kinds[k]), p->reason);
                        ck_assert_msg(strstr(p->reason,
                                             "(the cells of one guest socket (<topology>) run on nearer "
                                             "nodes than cells of two)"),
                                      "%s", p->reason);
                }
        }
        cells_clear(&c);
}
END_TEST

/* Sixteen cells, as Cells holds eight. */
typedef struct {
        PlacementCell cells[16];
        CpuSet *sets[16];
} Cells16;

static void cells16_make(Cells16 *c, const char *const *lists, uint64_t memory)
{
        for (unsigned i = 0; i < 16; i++) {
                c->sets[i] = set_of(lists[i]);
                c->cells[i] = (PlacementCell){.id = i, .vcpus = c->sets[i], .memory = memory};
        }
}

/* Sixteen 2-vCPU cells whose <distances> hold the even ones near one another and the odd ones near one
 * another: too many for every mapping to be tried. Packed by free cores, cells 0-3 went to nodes 0-3 and
 * so on, every node holding cells of one parity and nodes 0 and 2 (21 apart) the even ones; the odd and
 * even cells now each keep to one package (one node each under compat, which fills threads). */
START_TEST(test_cells_follow_guest_distances_many)
{
        static const char *const lists[] = {"0-1",   "2-3",   "4-5",   "6-7",   "8-9",   "10-11",
                                            "12-13", "14-15", "16-17", "18-19", "20-21", "22-23",
                                            "24-25", "26-27", "28-29", "30-31"};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        uint8_t d[16][16];
        Cells16 c;

        for (unsigned i = 0; i < 16; i++)
                for (unsigned j = 0; j < 16; j++)
                        d[i][j] = i == j ? 10 : i % 2 == j % 2 ? 12 : 21;
        cells16_make(&c, lists, 1 * GiB);
        for (unsigned i = 0; i < 16; i++) {
                c.cells[i].distances = d[i];
                c.cells[i].ndistances = 16;
        }
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                PlacementParams params = test_params(kinds[k]);
                PlacementRequest req = {
                    .name = "vm", .vcpus = 32, .memory = 16 * GiB, .cells = c.cells, .ncells = 16};
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);
                uint32_t farthest_near = 0, nearest_far = UINT32_MAX;

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                for (unsigned a = 0; a < 16; a++)
                        for (unsigned b = a + 1; b < 16; b++) {
                                uint32_t apart = cells_apart(t, p, a, b);
                                if (a % 2 == b % 2)
                                        farthest_near = MAX(farthest_near, apart);
                                else
                                        nearest_far = MIN(nearest_far, apart);
                        }
                ck_assert_msg(farthest_near < nearest_far, "%s: %s", policy_kind_to_string(kinds[k]),
                              p->reason);
        }
        for (unsigned i = 0; i < 16; i++)
                cpuset_free(c.sets[i]);
}
END_TEST

/* Three nodes all 20 apart hold no pair nearer than another: a guest that holds cells 0-1 at 12 and the
 * rest at 21 cannot have that here, and the reason says so rather than nothing. */
START_TEST(test_cells_guest_distances_cannot_hold)
{
        static const char *const lists[] = {"0-1", "2-3", "4-5"};
        static const uint32_t host[] = {10, 20, 20, 20, 10, 20, 20, 20, 10};
        static const uint8_t d[3][3] = {{10, 12, 21}, {12, 10, 21}, {21, 21, 10}};
        g_autoptr(Topology) t = topology_new_uniform(3, 2, 2, 8 * GiB, host);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 3, 1 * GiB);
        for (unsigned i = 0; i < 3; i++) {
                c.cells[i].distances = d[i];
                c.cells[i].ndistances = 3;
        }
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 6, 3 * GiB, &c);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                ck_assert_msg(strstr(p->reason,
                                     "(its <distances> do not all hold on these nodes as its cells were "
                                     "packed: cells 0 and 1 "
                                     "(12 apart in the guest) run 20 apart, as far as cells 0 and 2 "
                                     "(21 apart in the guest))"),
                              "%s", p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* Cells of different vCPU counts never trade places: what each node takes stays what the packing gave it.
 * Two nodes of 4 cores, a 4-vCPU cell 0 and two 2-vCPU cells whose <distances> hold 0 near 2 only: cell 0
 * fills one node and cells 1-2 the other, as without distances, and the reason says it cannot hold. */
START_TEST(test_cells_of_other_sizes_stay)
{
        static const char *const lists[] = {"0-3", "4-5", "6-7"};
        static const uint32_t host[] = {10, 20, 20, 10};
        static const uint8_t d[3][3] = {{10, 21, 12}, {21, 10, 21}, {12, 21, 10}};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, host);
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;
        int nodes[3];

        cells_make(&c, lists, 3, 1 * GiB);
        for (unsigned i = 0; i < 3; i++) {
                c.cells[i].distances = d[i];
                c.cells[i].ndistances = 3;
        }
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 8, 3 * GiB, &c);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                assert_cells_whole(t, p, &c, nodes);
                ck_assert_msg(nodes[0] != nodes[1] && nodes[1] == nodes[2], "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "do not all hold"), "%s", p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* ... never onto a node whose free memory does not hold the cell: with 10 GiB left on nodes 0 and 1 of
 * four 16 GiB nodes (0-1 and 2-3 near), the 12 GiB cells 0 and 1 of a guest whose near pairs are 0-2 and
 * 1-3 stay on nodes 2 and 3, though the guest's order would put one of them beside cell 2 or 3 there,
 * and no node is given more than it has free. */
START_TEST(test_cells_trade_within_free_memory)
{
        static const char *const lists[] = {"0-1", "2-3", "4-5", "6-7"};
        static const uint64_t gib[4] = {12, 12, 8, 8};
        static const uint32_t host[] = {10, 12, 21, 21, 12, 10, 21, 21, 21, 21, 10, 12, 21, 21, 12, 10};
        static const uint8_t d[4][4] = {
            {10, 21, 12, 21}, {21, 10, 21, 12}, {12, 21, 10, 21}, {21, 12, 21, 10}};

        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = topology_new_uniform(4, 4, 2, 16 * GiB, host);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams params = test_params(kinds[k]);
                Cells c;

                test_place(t, l, &params, "fat0", 1, 6 * GiB);
                test_place(t, l, &params, "fat1", 1, 6 * GiB);
                ck_assert_uint_eq(ledger_lookup(l, "fat0")->node_memory[0], 6 * GiB);
                ck_assert_uint_eq(ledger_lookup(l, "fat1")->node_memory[1], 6 * GiB);
                cells_make(&c, lists, 4, 0);
                for (unsigned i = 0; i < 4; i++) {
                        c.cells[i].memory = gib[i] * GiB;
                        c.cells[i].distances = d[i];
                        c.cells[i].ndistances = 4;
                }
                {
                        g_autoptr(Plan) p = place(t, l, kinds[k], 8, 40 * GiB, &c);

                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        ck_assert_msg(cell_node_of(t, p, &c, 0) >= 2 && cell_node_of(t, p, &c, 1) >= 2, "%s",
                                      p->reason);
                        for (unsigned n = 0; n < 4; n++)
                                ck_assert_msg(p->node_memory[n] <= (n < 2 ? 10 : 16) * GiB, "node %u: %s", n,
                                              p->reason);
                }
                cells_clear(&c);
        }
}
END_TEST

/* A property of the trades, on 300 seeded guests of 2-4 cells (of as many vCPUs in half of them, memory of
 * 1-12 GiB each, random distances) after 0-3 small guests on four 12 GiB nodes (0-1 and 2-3 near): planned
 * with their <distances> and without, the result, the node set and the vCPUs each node takes are the
 * same (but where the cells without distances stay nearer than a set that holds each whole with its memory,
 * and the guest's distances hold those cells remote: section 5a), no node is given more memory than it has
 * free, and no cell whose memory stayed whole on its node without distances has it spread over more. */
START_TEST(test_cells_trade_property)
{
        static const uint32_t host[] = {10, 12, 21, 21, 12, 10, 21, 21, 21, 21, 10, 12, 21, 21, 12, 10};
        static const uint8_t far[] = {12, 21, 31};
        g_autoptr(GRand) r = g_rand_new_with_seed(20261206);

        for (unsigned round = 0; round < 300; round++) {
                PolicyKind kind = kinds[round % G_N_ELEMENTS(kinds)];
                g_autoptr(Topology) t = topology_new_uniform(4, 4, 2, 12 * GiB, host);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams params = test_params(kind);
                unsigned ncells = (unsigned)g_rand_int_range(r, 2, 5), vcpus = 0, per = 0;
                uint64_t memory = 0;
                uint8_t d[4][4];
                char lists[4][16];
                const char *names[4];
                Cells c;

                for (unsigned k = 0, n = (unsigned)g_rand_int_range(r, 0, 4); k < n; k++) {
                        g_autofree char *name = g_strdup_printf("small%u", k);
                        test_place(t, l, &params, name, (unsigned)g_rand_int_range(r, 1, 3),
                                   (uint64_t)g_rand_int_range(r, 1, 9) * GiB);
                }
                for (unsigned i = 0; i < ncells; i++) {
                        unsigned n = round % 2 ? (per ? per : (per = (unsigned)g_rand_int_range(r, 1, 5)))
                                               : (unsigned)g_rand_int_range(r, 1, 5);
                        g_snprintf(lists[i], sizeof(lists[i]), "%u-%u", vcpus, vcpus + n - 1);
                        names[i] = lists[i];
                        vcpus += n;
                        d[i][i] = 10;
                        for (unsigned j = 0; j < i; j++)
                                d[i][j] = d[j][i] = far[g_rand_int_range(r, 0, 3)];
                }
                cells_make(&c, names, ncells, 0);
                for (unsigned i = 0; i < ncells; i++) {
                        c.cells[i].memory = (uint64_t)g_rand_int_range(r, 1, 13) * GiB;
                        memory += c.cells[i].memory;
                }
                {
                        g_autoptr(Plan) plain = place(t, l, kind, vcpus, memory, &c);
                        g_autoptr(Plan) p = NULL;

                        for (unsigned i = 0; i < ncells; i++) {
                                c.cells[i].distances = d[i];
                                c.cells[i].ndistances = ncells;
                        }
                        p = place(t, l, kind, vcpus, memory, &c);
                        ck_assert_int_eq(p->result, plain->result);
                        /* the one set distances choose: without them the cells stay nearer than the
                         * set that holds each whole with its memory, which cells the guest holds
                         * remote (21 or 31) may keep, and say so */
                        if (strstr(plain->reason, "nearer than any set that holds each guest cell") &&
                            !cpuset_equal(p->nodes, plain->nodes)) {
                                ck_assert_msg(strstr(p->reason, "as its <distances> hold cells"),
                                              "round %u: %s", round, p->reason);
                                cells_clear(&c);
                                continue;
                        }
                        ck_assert_msg(cpuset_equal(p->nodes, plain->nodes), "round %u: %s", round,
                                      p->reason);
                        for (unsigned n = 0; n < 4 && p->result != PLAN_UNPLACEABLE; n++) {
                                unsigned on = 0, plain_on = 0;
                                for (unsigned v = 0; v < vcpus; v++) {
                                        on += p->vcpu_pu[v] >= 0 && node_of(t, p, v) == (int)n;
                                        plain_on += plain->vcpu_pu[v] >= 0 && node_of(t, plain, v) == (int)n;
                                }
                                ck_assert_msg(on == plain_on, "round %u node %u: %s", round, n, p->reason);
                                ck_assert_msg(p->node_memory[n] <= MAX(12 * GiB - ledger_node_memory(l, n),
                                                                       plain->node_memory[n]),
                                              "round %u node %u: %s", round, n, p->reason);
                        }
                        /* a node's room is checked however the memory is counted (what does not fit is
                         * counted on the nearest others): a trade the nodes' memory does not hold shows as
                         * a cell whose memory no longer stays whole with its vCPUs */
                        for (unsigned i = 0; i < ncells && p->result != PLAN_UNPLACEABLE; i++)
                                ck_assert_msg(cpuset_count(plain->cells[i].counted_nodes) > 1 ||
                                                  cpuset_count(p->cells[i].counted_nodes) == 1,
                                              "round %u cell %u: %s", round, i, p->reason);
                }
                cells_clear(&c);
        }
}
END_TEST

/* A PowerVM LPAR's node 1 has cores and no memory at all: the cell on it has its memory on node 0, and the
 * reason says node 1 has no memory (as it does without cells), not that it has no room for it, which sent
 * one looking for the domain that filled it. */
START_TEST(test_cell_on_memoryless_node_said)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = test_topology_load("lpar-memoryless.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 2, 1 * GiB);
        {
                g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 4, 2 * GiB, &c);

                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "1 on node 1 (its memory on node 0: node 1 has no memory)"),
                              "%s", p->reason);
                ck_assert_msg(!strstr(p->reason, "no room"), "%s", p->reason);
        }
        cells_clear(&c);
}
END_TEST

/* vCPUs 1 and 3 of cells 0-1 / 2-3 unplugged: ids 0 and 2 run, one per cell, and the JSON and the snippet
 * name them by those ids */
START_TEST(test_cells_with_unplugged_vcpus)
{
        static const char *const lists[] = {"0-1", "2-3"};
        static const unsigned ids[] = {0, 2};
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *xml = NULL, *error = NULL, *json = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req;
        Cells c;
        cells_make(&c, lists, 2, 1 * GiB);
        req = (PlacementRequest){
            .name = "vm", .vcpus = 2, .memory = 2 * GiB, .cells = c.cells, .ncells = c.n, .vcpu_ids = ids};
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(plan_vcpu_id(p, 1), 2);
        ck_assert_msg(cpuset_count(p->cells[0].vcpus) == 1 && cpuset_has(p->cells[0].vcpus, 0), "cell 0");
        ck_assert_msg(cpuset_count(p->cells[1].vcpus) == 1 && cpuset_has(p->cells[1].vcpus, 1), "cell 1");
        ck_assert(cpuset_has(p->cells[1].nodes, (unsigned)node_of(t, p, 1)));
        json_builder_begin_object(b);
        decision_json_add_members(b, t, p, FALSE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        json = json_to_text(root, FALSE);
        ck_assert_msg(strstr(json, "\"vcpu_ids\":[0,2]") && strstr(json, "\"vcpus\":\"2\""), "%s", json);
        xml = definition_snippet(json_node_get_object(root), &error);
        ck_assert_msg(xml && strstr(xml, "<vcpupin vcpu='2'") && !strstr(xml, "<vcpupin vcpu='1'"), "%s",
                      xml ? xml : error);
        cells_clear(&c);
}
END_TEST

/* Places a domain of these cells, each bound by its own <memnode> (Cells.cells[i].memory_nodes), on
 * nodes 0-1. */
static Plan *place_memnodes(const Topology *t, const Ledger *l, const Cells *c, unsigned vcpus,
                            uint64_t memory)
{
        g_autoptr(CpuSet) both = set_of("0-1");
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm",
                                .vcpus = vcpus,
                                .memory = memory,
                                .cells = c->cells,
                                .ncells = c->n,
                                .memory_nodes = both,
                                .memory_source = MEMORY_SOURCE_MEMNODE};
        return policy_place(t, l, &req, &params);
}

/* Each cell bound by its own <memnode>, crosswise (cell 0 on node 1, cell 1 on node 0): each cell's vCPUs
 * go where its memory is, and its memory is counted there, not spread evenly over both */
START_TEST(test_memnode_per_cell)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) on0 = set_of("0");
        g_autoptr(CpuSet) on1 = set_of("1");
        Cells c;
        cells_make(&c, lists, 2, 0);
        c.cells[0].memory = 2 * GiB;
        c.cells[0].memory_nodes = on1;
        c.cells[1].memory = 12 * GiB;
        c.cells[1].memory_nodes = on0;
        g_autoptr(Plan) p = place_memnodes(t, l, &c, 4, 14 * GiB);
        g_autofree char *text = plan_explain(t, p);

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_int_eq(node_of(t, p, 0), 1);
        ck_assert_int_eq(node_of(t, p, 1), 1);
        ck_assert_int_eq(node_of(t, p, 2), 0);
        ck_assert_int_eq(node_of(t, p, 3), 0);
        ck_assert_uint_eq(p->node_memory[1], 2 * GiB);
        ck_assert_uint_eq(p->node_memory[0], 12 * GiB);
        ck_assert_msg(!strstr(p->reason, "placementctl snippet"), "%s", p->reason);
        /* a single node has room for the whole guest but is no home for the cell bound to the other:
         * explain says that rather than calling it too small */
        ck_assert_msg(!strstr(text, "too small"), "%s", text);
        ck_assert_msg(strstr(text, "a <memnode> cell's node missing"), "%s", text);
        cells_clear(&c);
}
END_TEST

/* Both cells bound by their <memnode> to nodes 0-1, each cell's vCPUs on one node: the kernel puts a cell's
 * pages on its own vCPUs' node while it has room (MPOL_BIND), so each cell's memory is counted there, not
 * spread over both by where the whole guest's vCPUs run */
START_TEST(test_memnode_over_both_counted_by_cell)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) both = set_of("0-1");
        Cells c;
        cells_make(&c, lists, 2, 0);
        c.cells[0].memory = 12 * GiB;
        c.cells[0].memory_nodes = both;
        c.cells[1].memory = 2 * GiB;
        c.cells[1].memory_nodes = both;
        g_autoptr(Plan) p = place_memnodes(t, l, &c, 4, 14 * GiB);
        int n0, n1;

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        n0 = node_of(t, p, 0);
        n1 = node_of(t, p, 2);
        ck_assert_int_ne(n0, n1); /* 2 cores a node: one cell each */
        ck_assert_uint_eq(p->node_memory[n0], 12 * GiB);
        ck_assert_uint_eq(p->node_memory[n1], 2 * GiB);
        cells_clear(&c);
}
END_TEST

/* A cell whose <memnode> interleaves it over nodes 0-1 (oVirt writes each cell's memnode in the guest's
 * NUMA tune mode): the kernel spreads its pages evenly over both whatever node its vCPUs run on, so half of
 * it is counted on each, not all beside its vCPUs as a strict cell's is */
START_TEST(test_memnode_interleave_counted_on_each)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 32 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) on0 = set_of("0");
        g_autoptr(CpuSet) both = set_of("0-1");
        Cells c;
        cells_make(&c, lists, 2, 0);
        c.cells[0].memory = 4 * GiB;
        c.cells[0].memory_nodes = on0;
        c.cells[1].memory = 12 * GiB;
        c.cells[1].memory_nodes = both;
        c.cells[1].memory_mode = MEMORY_MODE_INTERLEAVE;
        g_autoptr(Plan) p = place_memnodes(t, l, &c, 4, 16 * GiB);

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_int_eq(node_of(t, p, 0), 0);
        ck_assert_uint_eq(p->node_memory[0], 10 * GiB);
        ck_assert_uint_eq(p->node_memory[1], 6 * GiB);
        ck_assert_msg(cpuset_count(p->cells[1].counted_nodes) == 2, "%s", p->reason);
        cells_clear(&c);
}
END_TEST

/* A cell bound by its <memnode> to a node whose CPUs its vCPUs may not use (all in ReservedCPUs=, or
 * outside its <vcpu cpuset>; libvirt runs it): its vCPUs run on free cores elsewhere, its memory remote,
 * placed, not "overcommitted" with nothing shared nor "unplaceable" for memory the host has */
START_TEST(test_memnode_cell_on_unusable_node)
{
        static const char *const lists[] = {"0-1", "2-3"};
        for (unsigned way = 0; way < 2; way++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) on0 = set_of("0");
                g_autoptr(CpuSet) on1 = set_of("1");
                g_autoptr(CpuSet) both = set_of("0-1");
                g_autoptr(CpuSet) node0_cpus = set_of("0-7");
                PlacementParams params = test_params(POLICY_EXPLICIT);
                Cells c;
                cells_make(&c, lists, 2, 0);
                c.cells[0].memory = 2 * GiB;
                c.cells[0].memory_nodes = way ? on1 : on0;
                c.cells[1].memory = 2 * GiB;
                c.cells[1].memory_nodes = on1;
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 4,
                                        .memory = 4 * GiB,
                                        .cells = c.cells,
                                        .ncells = c.n,
                                        .memory_nodes = both,
                                        .memory_source = MEMORY_SOURCE_MEMNODE,
                                        .allowed_cpus = way ? node0_cpus : NULL};
                if (!way)
                        params.reserved_cpus = set_of("8-15");
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);

                ck_assert_msg(p->result == PLAN_PLACED && p->shared_vcpus == 0, "%u: %s", way, p->reason);
                for (unsigned v = 0; v < 4; v++)
                        ck_assert_int_eq(node_of(t, p, v), 0);
                ck_assert_uint_eq(p->node_memory[1], way ? 4 * GiB : 2 * GiB);
                ck_assert_msg(strstr(p->reason, "1 on node 0 (its memory remote, bound to node 1)"), "%s",
                              p->reason);
                cpuset_free(params.reserved_cpus);
                cells_clear(&c);
        }
}
END_TEST

/* Two 4-vCPU cells, each bound by its own <memnode> (0 to nodes0, 1 to nodes1), vCPUs inside allowed
 * (NULL: anywhere). */
static Plan *place_two_bound_cells(const Topology *t, const char *nodes0, const char *nodes1,
                                   const char *allowed)
{
        static const char *const lists[] = {"0-3", "4-7"};
        g_autoptr(CpuSet) on0 = set_of(nodes0);
        g_autoptr(CpuSet) on1 = set_of(nodes1);
        g_autoptr(CpuSet) both = set_of(nodes0);
        g_autoptr(CpuSet) cpus = allowed ? set_of(allowed) : NULL;
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        Plan *p;
        Cells c;

        cpuset_union(both, on1);
        cells_make(&c, lists, 2, 2 * GiB);
        c.cells[0].memory_nodes = on0;
        c.cells[1].memory_nodes = on1;
        PlacementRequest req = {.name = "vm",
                                .vcpus = 8,
                                .memory = 4 * GiB,
                                .cells = c.cells,
                                .ncells = c.n,
                                .memory_nodes = both,
                                .memory_source = MEMORY_SOURCE_MEMNODE,
                                .allowed_cpus = cpus};
        p = policy_place(t, l, &req, &params);
        cells_clear(&c);
        return p;
}

/* A cell bound by its <memnode> to a node without a core it may use (HBM, CXL, a node its <vcpu cpuset>
 * leaves out) while the other cell is bound to a node with cores: it runs on the nearest node with free
 * cores by the SLIT, not crowded onto the other cell's node (the only one of the <memnode> nodes with
 * cores) nor on a node farther from its memory */
START_TEST(test_memnode_cell_on_memory_only_node_runs_nearest)
{
        /* KNL SNC4 flat: node 5 is the MCDRAM of node 4 (31), every other node 41 from it; came out
         * overcommitted on node 0, 8 vCPUs on its 4 cores */
        g_autoptr(Topology) knl = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Plan) p = place_two_bound_cells(knl, "5", "0", NULL);
        ck_assert_msg(p->result == PLAN_PLACED && p->shared_vcpus == 0, "%s", p->reason);
        ck_assert_int_eq(node_of(knl, p, 0), 4);
        ck_assert_int_eq(node_of(knl, p, 4), 0);
        ck_assert_uint_eq(p->node_memory[5], 2 * GiB);
        ck_assert_uint_eq(p->node_memory[0], 2 * GiB);
        ck_assert_msg(strstr(p->reason, "0 on node 4 (its memory remote, bound to node 5), 1 on node 0"),
                      "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "cores taken on node 0 of them, and on the nearest nodes with free "
                                        "cores for a cell whose nodes have no core it may use"),
                      "%s", p->reason);

        /* cell 0 bound to node 0, outside its <vcpu cpuset> (nodes 2, 4 and 6), cell 1 to node 2: cell 0
         * on another node of the cpuset, all 21 from node 0; came out overcommitted on node 2 */
        g_autoptr(Plan) q = place_two_bound_cells(knl, "0", "2", "16-63");
        ck_assert_msg(q->result == PLAN_PLACED && q->shared_vcpus == 0, "%s", q->reason);
        ck_assert_int_eq(node_of(knl, q, 4), 2);
        ck_assert_int_ne(node_of(knl, q, 0), 2);

        /* CXL expander node 2: 14 from node 0, 26 from node 1; cell 1 bound to node 1. Cell 0 came out on
         * node 1 beside cell 1, 26 from its memory */
        g_autoptr(Topology) cxl = test_topology_load("cxl-expander.xml");
        g_autoptr(Plan) r = place_two_bound_cells(cxl, "2", "1", NULL);
        ck_assert_msg(r->result == PLAN_PLACED && r->shared_vcpus == 0, "%s", r->reason);
        ck_assert_int_eq(node_of(cxl, r, 0), 0);
        ck_assert_int_eq(node_of(cxl, r, 4), 1);
}
END_TEST

/* Both cells bound by their <memnode> to the memory-only node 5 (KNL MCDRAM): each cell's memory_nodes in
 * the decision is node 5, and the snippet's <memnode> keeps each cell there; the decision had no
 * memory_nodes and the snippet bound each cell to its vCPUs' DRAM node instead */
START_TEST(test_memnode_memory_only_cells_snippet_keeps_them)
{
        g_autoptr(Topology) knl = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Plan) p = place_two_bound_cells(knl, "5", "5", NULL);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *json = NULL, *xml = NULL, *error = NULL;

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[5], 4 * GiB);
        json_builder_begin_object(b);
        decision_json_add_members(b, knl, p, FALSE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        json = json_to_text(root, FALSE);
        ck_assert_msg(strstr(json, "\"id\":0,\"vcpus\":\"0-3\"") && strstr(json, "\"memory_nodes\":[5]"),
                      "%s", json);
        xml = definition_snippet(json_node_get_object(root), &error);
        ck_assert_msg(xml, "%s", error);
        ck_assert_msg(strstr(xml, "<memnode cellid='0' mode='strict' nodeset='5'/>") &&
                          strstr(xml, "<memnode cellid='1' mode='strict' nodeset='5'/>"),
                      "%s", xml);
}
END_TEST

/* Places cells of k[i] vCPUs each (in vCPU order), cell i bound by its own <memnode> to nodes[i] (NULL:
 * unbound), 1 GiB each, under params; l holds what the host runs already. As domain_request() makes it:
 * the union of the <memnode> nodes binds the domain only when every cell has one. */
static Plan *place_cells_bound(const Topology *t, const Ledger *l, const PlacementParams *params,
                               const unsigned *k, const char *const *nodes, unsigned n)
{
        g_autoptr(CpuSet) all = cpuset_new();
        CpuSet *bound[8] = {NULL};
        unsigned vcpus = 0, nbound = 0;
        Plan *p;
        Cells c = {.n = n};

        for (unsigned i = 0; i < n; i++) {
                c.sets[i] = cpuset_new();
                for (unsigned v = 0; v < k[i]; v++)
                        cpuset_add(c.sets[i], vcpus++);
                c.cells[i] = (PlacementCell){.id = i, .vcpus = c.sets[i], .memory = 1 * GiB};
                if (nodes[i]) {
                        bound[i] = set_of(nodes[i]);
                        cpuset_union(all, bound[i]);
                        c.cells[i].memory_nodes = bound[i];
                        nbound++;
                }
        }
        PlacementRequest req = {.name = "vm",
                                .vcpus = vcpus,
                                .memory = n * GiB,
                                .cells = c.cells,
                                .ncells = c.n,
                                .memory_nodes = nbound == n ? all : NULL,
                                .memory_source = nbound == n ? MEMORY_SOURCE_MEMNODE : MEMORY_SOURCE_NONE};
        p = policy_place(t, l, &req, params);
        for (unsigned i = 0; i < n; i++)
                cpuset_free(bound[i]);
        cells_clear(&c);
        return p;
}

/* How many of vCPUs [first, first + k) run on node n. */
static unsigned vcpus_on(const Topology *t, const Plan *p, unsigned first, unsigned k, int n)
{
        unsigned on = 0;
        for (unsigned v = first; v < first + k; v++)
                on += node_of(t, p, v) == n;
        return on;
}

/* A cell bound to a memory-only node whose nearest node with cores is another cell's bound node (KNL SNC4
 * flat: node 1 is node 0's MCDRAM; 4 cores of 4 threads a node): cells_set_homes() leaves that cell its
 * node's room first, and the fit and the split of the cells take their room in that order too. Cell 0 took
 * node 0 first and the domain came out overcommitted on node 0 on an empty host (8 vCPUs on its 4 cores,
 * 14 and 7 on 4 cores, 28 on 16 threads under compat). */
START_TEST(test_memnode_homed_cell_leaves_bound_cell_its_node)
{
        static const struct {
                PolicyKind kind;
                unsigned k[2];
        } cases[] = {
            {POLICY_EXPLICIT, {6, 2}},
            {POLICY_EXPLICIT, {12, 2}},
            {POLICY_EXPLICIT, {4, 3}},
            {POLICY_COMPAT, {20, 8}},
        };
        static const char *const nodes[] = {"1", "0"};
        g_autoptr(Topology) t = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Ledger) l = ledger_new(t);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                PlacementParams params = test_params(cases[i].kind);
                const unsigned *k = cases[i].k;
                g_autoptr(Plan) p = place_cells_bound(t, l, &params, k, nodes, 2);

                /* compat gives each vCPU a thread of its own, siblings beside it */
                ck_assert_msg(p->result == PLAN_PLACED &&
                                  (cases[i].kind == POLICY_COMPAT || p->shared_vcpus == 0),
                              "%u: %s", i, p->reason);
                ck_assert_msg(vcpus_on(t, p, k[0], k[1], 0) == k[1], "%u: cell 1 off node 0: %s", i,
                              p->reason);
                ck_assert_uint_eq(p->node_memory[1], 1 * GiB);
                ck_assert_uint_eq(p->node_memory[0], 1 * GiB);
        }
}
END_TEST

/* Two packages of four 4-core nodes (12 apart inside one, 21 across), nodes 1 and 3 all in ReservedCPUs=,
 * 2 cores free on nodes 0 and 2 and 4 on node 4: cell 1 (4 vCPUs, bound to node 1) gets nodes 0 and 2,
 * the nearest with room, cell 0 (2, bound to node 3) node 4, cell 2 (unbound) what is left of node 4. The
 * unbound cell took node 0 first (the cells near their memory then only had their nodes' room left) and
 * cell 1 ran on nodes 2 and 4, half of it across the packages. */
START_TEST(test_memnode_split_homed_cell_before_unbound)
{
        static const unsigned k[] = {2, 4, 2};
        static const char *const nodes[] = {"3", "1", NULL};
        static const unsigned used[] = {2, 0, 2, 0, 0, 4, 4, 4};
        uint32_t d[64];

        for (unsigned i = 0; i < 8; i++)
                for (unsigned j = 0; j < 8; j++)
                        d[i * 8 + j] = i == j ? 10 : i / 4 == j / 4 ? 12 : 21;
        g_autoptr(Topology) t = topology_new_uniform(8, 4, 1, 16 * GiB, d);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);

        for (unsigned n = 0; n < 8; n++)
                if (used[n])
                        occupy(t, l, n, used[n]);
        params.reserved_cpus = set_of("4-7,12-15");
        g_autoptr(Plan) p = place_cells_bound(t, l, &params, k, nodes, 3);

        ck_assert_msg(p->result == PLAN_PLACED && p->shared_vcpus == 0, "%s", p->reason);
        ck_assert_msg(vcpus_on(t, p, 2, 4, 0) == 2 && vcpus_on(t, p, 2, 4, 2) == 2, "cell 1: %s", p->reason);
        ck_assert_msg(vcpus_on(t, p, 0, 2, 4) == 2 && vcpus_on(t, p, 6, 2, 4) == 2, "cells 0, 2: %s",
                      p->reason);
        ck_assert_msg(strstr(p->reason,
                             "1 on nodes 0,2 (split: no node had room for it) (its memory remote, "
                             "bound to node 1), 2 on node 4"),
                      "%s", p->reason);
        cpuset_free(params.reserved_cpus);

        /* on the empty host with node 1 alone reserved, cell 0 (8 vCPUs, bound to node 1) fills nodes 0
         * and 2 rather than spread thin over 0, 2 and 3, which would leave the unbound 4-vCPU cell no
         * node of the package */
        static const unsigned k2[] = {8, 4};
        static const char *const nodes2[] = {"1", NULL};
        g_autoptr(Ledger) empty = ledger_new(t);
        params.reserved_cpus = set_of("4-7");
        g_autoptr(Plan) q = place_cells_bound(t, empty, &params, k2, nodes2, 2);
        ck_assert_msg(q->result == PLAN_PLACED && q->shared_vcpus == 0, "%s", q->reason);
        ck_assert_msg(vcpus_on(t, q, 8, 4, 3) == 4, "cell 1 off node 3: %s", q->reason);
        ck_assert_msg(vcpus_on(t, q, 0, 8, 0) == 4 && vcpus_on(t, q, 0, 8, 2) == 4, "cell 0: %s", q->reason);
        cpuset_free(params.reserved_cpus);
}
END_TEST

/* KNL SNC4 flat with node 0's CPUs all in ReservedCPUs=: cell 0 bound to node 1 (node 0's MCDRAM) has
 * nodes 2, 4 and 6 as near (41), while cell 1, bound to node 3, has node 2 at 31 and the others at 41.
 * Cell 0 takes node 4 or 6 and leaves node 2 to cell 1; it took node 2 (the first of its nearest), and
 * cell 1 ran on node 4, 41 from its memory where 31 was free. With an unbound third cell, too. */
START_TEST(test_memnode_homes_leave_a_nearer_node_to_the_next)
{
        static const unsigned k[] = {4, 4, 4};
        static const char *const nodes[] = {"1", "3", NULL};
        g_autoptr(Topology) t = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);

        params.reserved_cpus = set_of("0-15");
        for (unsigned n = 2; n <= 3; n++) {
                g_autoptr(Plan) p = place_cells_bound(t, l, &params, k, nodes, n);
                int at = node_of(t, p, 0);

                ck_assert_msg(p->result == PLAN_PLACED && p->shared_vcpus == 0, "%u: %s", n, p->reason);
                ck_assert_msg(vcpus_on(t, p, 4, 4, 2) == 4, "%u: cell 1 off node 2: %s", n, p->reason);
                ck_assert_msg((at == 4 || at == 6) && vcpus_on(t, p, 0, 4, at) == 4, "%u: cell 0: %s", n,
                              p->reason);
                ck_assert_msg(strstr(p->reason, "1 on node 2 (its memory remote, bound to node 3)"),
                              "%u: %s", n, p->reason);
        }
        cpuset_free(params.reserved_cpus);
}
END_TEST

/* A cell whose <memnode> names only a node this host does not have: libvirt refuses to start the guest
 * (it checks every <memnode> nodeset), so the plan is unplaceable, naming the cell and the node, nothing
 * counted; it came out placed, "bound to node 20", its memory counted on node 0. Whether the other cell
 * is bound too (all memnodes: their union binds the domain) or not. */
START_TEST(test_memnode_missing_node_unplaceable)
{
        static const char *const lists[] = {"0-1", "2-3"};
        for (unsigned all = 0; all < 2; all++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) missing = set_of("20");
                g_autoptr(CpuSet) on1 = set_of("1");
                g_autoptr(CpuSet) both = set_of("1,20");
                PlacementParams params = test_params(POLICY_EXPLICIT);
                Cells c;
                cells_make(&c, lists, 2, 2 * GiB);
                c.cells[0].memory_nodes = missing;
                c.cells[1].memory_nodes = all ? on1 : NULL;
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 4,
                                        .memory = 4 * GiB,
                                        .cells = c.cells,
                                        .ncells = c.n,
                                        .memory_nodes = all ? both : NULL,
                                        .memory_source = all ? MEMORY_SOURCE_MEMNODE : MEMORY_SOURCE_NONE};
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);

                ck_assert_msg(p->result == PLAN_UNPLACEABLE, "%u: %s", all, p->reason);
                ck_assert_msg(strstr(p->reason, "guest cell 0 binds its memory to node 20, which this host "
                                                "does not have: libvirt refuses to start such a guest"),
                              "%s", p->reason);
                for (unsigned n = 0; n < p->nnode_memory; n++)
                        ck_assert_uint_eq(p->node_memory[n], 0);
                for (unsigned v = 0; v < 4; v++)
                        ck_assert_int_lt(p->vcpu_pu[v], 0);
                cells_clear(&c);
        }
}
END_TEST

/* A cell whose <memnode> names node 20, which the host lacks, beside node 1, which it has, the other cell
 * unbound: placed, as a domain's binding naming a missing node beside present ones is, and the reason
 * names node 20, which libvirt refuses; it was placed silently, "bound to nodes 1,20" */
START_TEST(test_memnode_partly_missing_said)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) partly = set_of("1,20");
        Cells c;
        cells_make(&c, lists, 2, 2 * GiB);
        c.cells[0].memory_nodes = partly;
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 4, 4 * GiB, &c);

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "; node 20 of the <memnode> of guest cell 0 is not on this host: "
                                        "libvirt refuses to start such a guest"),
                      "%s", p->reason);
        cells_clear(&c);
}
END_TEST

/* Cells bound to nodes 0 and 2, node 0's CPUs all in ReservedCPUs=: cell 0 runs on node 1, cell 1 on
 * node 2, and the reason says cores were taken on node 2 of the bound nodes; it said "cores taken there"
 * of nodes 0,2, none taken on node 0 */
START_TEST(test_memnode_cores_taken_on_named_nodes)
{
        static const char *const lists[] = {"0-3", "4-7"};
        g_autoptr(Topology) t = topology_new_uniform(3, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) on0 = set_of("0");
        g_autoptr(CpuSet) on2 = set_of("2");
        g_autoptr(CpuSet) both = set_of("0,2");
        PlacementParams params = test_params(POLICY_EXPLICIT);
        Cells c;
        cells_make(&c, lists, 2, 2 * GiB);
        c.cells[0].memory_nodes = on0;
        c.cells[1].memory_nodes = on2;
        params.reserved_cpus = set_of("0-7");
        PlacementRequest req = {.name = "vm",
                                .vcpus = 8,
                                .memory = 4 * GiB,
                                .cells = c.cells,
                                .ncells = c.n,
                                .memory_nodes = both,
                                .memory_source = MEMORY_SOURCE_MEMNODE};
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        ck_assert_msg(p->result == PLAN_PLACED && p->shared_vcpus == 0, "%s", p->reason);
        ck_assert_int_eq(node_of(t, p, 0), 1);
        ck_assert_int_eq(node_of(t, p, 4), 2);
        ck_assert_msg(strstr(p->reason,
                             "(per cell): cores taken on node 2 of them, and on the nearest nodes "
                             "with free cores for a cell whose nodes have no core it may use"),
                      "%s", p->reason);
        cpuset_free(params.reserved_cpus);
        cells_clear(&c);
}
END_TEST

/* Cells whose <memnode> elements bind more to node 1 (16 GiB) than it has free: libvirt binds a memnode
 * strict when its mode is not given, so the reason says it, as for a domain's strict binding, whether
 * every cell is bound (two of 10 GiB) or one of 20 GiB beside a cell not bound; it said nothing. A
 * preferred <memnode> falls back to other nodes: nothing said. */
START_TEST(test_memnode_overfilled_node_said)
{
        static const char *const lists[] = {"0-1", "2-3"};
        for (unsigned way = 0; way < 4; way++) {
                bool all = way & 1, preferred = way & 2;
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) on1 = set_of("1");
                PlacementParams params = test_params(POLICY_EXPLICIT);
                Cells c;
                cells_make(&c, lists, 2, 10 * GiB);
                c.cells[0].memory = all ? 10 * GiB : 20 * GiB;
                c.cells[0].memory_nodes = on1;
                c.cells[1].memory_nodes = all ? on1 : NULL;
                for (unsigned i = 0; preferred && i < 2; i++)
                        c.cells[i].memory_mode = MEMORY_MODE_PREFERRED;
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 4,
                                        .memory = all ? 20 * GiB : 30 * GiB,
                                        .cells = c.cells,
                                        .ncells = c.n,
                                        .memory_nodes = all ? on1 : NULL,
                                        .memory_source = all ? MEMORY_SOURCE_MEMNODE : MEMORY_SOURCE_NONE};
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);

                ck_assert_msg(p->result != PLAN_UNPLACEABLE, "%u: %s", way, p->reason);
                ck_assert_msg(!strstr(p->reason, "cannot get all its memory") == preferred, "%u: %s", way,
                              p->reason);
                if (!preferred)
                        ck_assert_msg(strstr(p->reason, "; node 1 has 16.0 GiB free for the 20.0 GiB bound "
                                                        "there: the guest cannot get all its memory"),
                                      "%u: %s", way, p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* A cell without vCPUs bound by its <memnode> to node 1, whether the other is bound too or not: the reason
 * says "1 (no vCPUs) with its memory on node 1", as for an unbound one; it said "1 on node 1", as if
 * vCPUs ran there */
START_TEST(test_memnode_cell_without_vcpus_says_memory)
{
        static const char *const lists[] = {"0-3", ""};
        for (unsigned all = 0; all < 2; all++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) on0 = set_of("0");
                g_autoptr(CpuSet) on1 = set_of("1");
                g_autoptr(CpuSet) both = set_of("0-1");
                PlacementParams params = test_params(POLICY_EXPLICIT);
                Cells c;
                cells_make(&c, lists, 2, 2 * GiB);
                c.cells[0].memory_nodes = all ? on0 : NULL;
                c.cells[1].memory_nodes = on1;
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 4,
                                        .memory = 4 * GiB,
                                        .cells = c.cells,
                                        .ncells = c.n,
                                        .memory_nodes = all ? both : NULL,
                                        .memory_source = all ? MEMORY_SOURCE_MEMNODE : MEMORY_SOURCE_NONE};
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);

                ck_assert_msg(p->result == PLAN_PLACED, "%u: %s", all, p->reason);
                ck_assert_uint_eq(p->node_memory[1], 2 * GiB);
                ck_assert_msg(strstr(p->reason, ", 1 (no vCPUs) with its memory on node 1"), "%u: %s", all,
                              p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* A cell whose <memnode> node has no room left: shared there, never moved away from its memory */
START_TEST(test_memnode_cell_stays_with_memory)
{
        static const char *const lists[] = {"0-3", "4-5"};
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) on0 = set_of("0");
        g_autoptr(CpuSet) on1 = set_of("1");
        Cells c;
        cells_make(&c, lists, 2, 1 * GiB);
        c.cells[0].memory_nodes = on0;
        c.cells[1].memory_nodes = on1;
        g_autoptr(Plan) p = place_memnodes(t, l, &c, 6, 2 * GiB);

        for (unsigned v = 0; v < 4; v++)
                ck_assert_msg(node_of(t, p, v) == 0, "vCPU %u of cell 0 on node %d: %s", v, node_of(t, p, v),
                              p->reason);
        for (unsigned v = 4; v < 6; v++)
                ck_assert_msg(node_of(t, p, v) == 1, "vCPU %u of cell 1 on node %d: %s", v, node_of(t, p, v),
                              p->reason);
        cells_clear(&c);
}
END_TEST

/* A cell whose <memnode> node is full while the other cell's node has room for the whole domain: the cell
 * shares its own node's cores; it was placed with the other cell, a node away from its memory */
START_TEST(test_memnode_cell_full_node)
{
        static const char *const lists[] = {"0-1", "2-3"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) on0 = set_of("0");
        g_autoptr(CpuSet) on1 = set_of("1");
        Cells c;

        test_place(t, l, &params, "fill", 4, 1 * GiB); /* node 0's cores */
        cells_make(&c, lists, 2, 4 * GiB);
        c.cells[0].memory_nodes = on0;
        c.cells[1].memory_nodes = on1;
        g_autoptr(Plan) p = place_memnodes(t, l, &c, 4, 8 * GiB);

        for (unsigned v = 0; v < 4; v++)
                ck_assert_msg(node_of(t, p, v) == (v < 2 ? 0 : 1), "vCPU %u of cell %u on node %d: %s", v,
                              v / 2, node_of(t, p, v), p->reason);
        ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(p->node_memory[0], 4 * GiB);
        ck_assert_uint_eq(p->node_memory[1], 4 * GiB);
        cells_clear(&c);
}
END_TEST

/* One cell bound by its <memnode> to two nodes, too big for either: split over both, a core each (it
 * crashed the engine: more vCPUs were sent to one node than it had free cores) */
START_TEST(test_memnode_cell_over_two_nodes)
{
        static const char *const lists[] = {"0-19"};
        g_autoptr(Topology) t = topology_new_uniform(2, 16, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) both = set_of("0-1");
        Cells c;
        cells_make(&c, lists, 1, 8 * GiB);
        c.cells[0].memory_nodes = both;
        g_autoptr(Plan) p = place_memnodes(t, l, &c, 20, 8 * GiB);

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_uint_eq(p->shared_vcpus, 0);
        for (unsigned v = 0; v < 20; v++)
                ck_assert_int_ge(p->vcpu_pu[v], 0);
        cells_clear(&c);
}
END_TEST

/* A domain whose pins are adopted (its definition pins it, or it was pinned by hand) with uneven cells,
 * each bound by its <memnode>: each cell's memory is counted on its own node, not the domain's spread
 * evenly over both */
START_TEST(test_adopted_cells_memory_per_cell)
{
        static const char *const lists[] = {"0-1", "2-5"};
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) on0 = set_of("0");
        g_autoptr(CpuSet) on1 = set_of("1");
        g_autoptr(CpuSet) both = set_of("0-1");
        CpuSet *pins[6];
        Cells c;

        cells_make(&c, lists, 2, 0);
        c.cells[0].memory = 2 * GiB;
        c.cells[0].memory_nodes = on0;
        c.cells[1].memory = 6 * GiB;
        c.cells[1].memory_nodes = on1;
        PlacementRequest req = {.name = "vm",
                                .vcpus = 6,
                                .memory = 8 * GiB,
                                .cells = c.cells,
                                .ncells = 2,
                                .memory_nodes = both,
                                .memory_source = MEMORY_SOURCE_USER};
        static const char *const cpus[] = {"0", "2", "8", "10", "12", "14"}; /* cell 0 on node 0, 1 on 1 */
        for (unsigned i = 0; i < 6; i++)
                pins[i] = set_of(cpus[i]);
        g_autoptr(Plan) p = policy_adopt(t, l, &req, pins, &params);

        ck_assert_uint_eq(p->node_memory[0], 2 * GiB);
        ck_assert_uint_eq(p->node_memory[1], 6 * GiB);
        for (unsigned i = 0; i < 6; i++)
                cpuset_free(pins[i]);
        cells_clear(&c);
}
END_TEST

/* <memnode> for cell 0 only: libvirt binds cell 0's memory and leaves cell 1 (and the domain) unbound, so
 * cell 1 goes whole to the node with room, not with cell 0 onto the full node 0 (all 8 vCPUs were kept
 * on node 0, 6 of them sharing, with node 1 idle) */
START_TEST(test_partial_memnodes_bind_only_their_cells)
{
        static const char xml[] =
            "<domain type='kvm'><name>vm</name><memory unit='GiB'>16</memory><vcpu>8</vcpu>"
            "<numatune><memnode cellid='0' mode='strict' nodeset='0'/></numatune><os><type>hvm</type></os>"
            "<cpu><numa><cell id='0' cpus='0-3' memory='8' unit='GiB'/>"
            "<cell id='1' cpus='4-7' memory='8' unit='GiB'/></numa></cpu></domain>";
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(DomainSpec) spec = NULL;
        g_autofree char *error = NULL;
        g_auto(RequestShape) shape = {0};
        PlacementRequest req;

        test_place(t, l, &params, "first", 6, 4 * GiB);
        ck_assert_msg(domain_xml_parse(xml, &spec, &error) == 0, "%s", error);
        req = domain_request(spec, spec);
        domain_request_shape(spec, t, &req, &shape);
        ck_assert_int_eq(req.memory_source, MEMORY_SOURCE_NONE);
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        for (unsigned v = 0; v < 8; v++)
                ck_assert_msg(node_of(t, p, v) == (v < 4 ? 0 : 1), "vCPU %u of cell %u on node %d: %s", v,
                              v / 4, node_of(t, p, v), p->reason);
        ck_assert_uint_eq(p->shared_vcpus, 2);
        ck_assert_uint_eq(p->node_memory[0], 8 * GiB);
        ck_assert_uint_eq(p->node_memory[1], 8 * GiB);
}
END_TEST

/* A partial memnode whose node has no free memory left: its cell still runs there (it was put on node 1
 * with the other cell, its memory strict on node 0), and the unbound cell's memory goes where there is
 * room, none of it onto the over-full node */
START_TEST(test_partial_memnode_on_a_full_node)
{
        static const char *const lists[] = {"0-3", "4-7"};
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) on0 = set_of("0");
        Cells c;

        test_place(t, l, &params, "filler", 1, 15 * GiB); /* node 0's memory */
        cells_make(&c, lists, 2, 4 * GiB);
        c.cells[0].memory_nodes = on0;
        PlacementRequest req = {.name = "vm", .vcpus = 8, .memory = 8 * GiB, .cells = c.cells, .ncells = 2};
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        for (unsigned v = 0; v < 4; v++)
                ck_assert_msg(node_of(t, p, v) == 0, "vCPU %u of bound cell 0 on node %d: %s", v,
                              node_of(t, p, v), p->reason);
        ck_assert_uint_eq(p->node_memory[0], 4 * GiB);
        ck_assert_uint_eq(p->node_memory[1], 4 * GiB);
        cells_clear(&c);
}
END_TEST

/* <memnode> for every cell: the domain is bound to their union, as before */
START_TEST(test_all_memnodes_bind_the_domain)
{
        static const char xml[] =
            "<domain type='kvm'><name>vm</name><memory unit='GiB'>16</memory><vcpu>8</vcpu>"
            "<numatune><memnode cellid='0' mode='strict' nodeset='0'/><memnode cellid='1' nodeset='1'/>"
            "</numatune><os><type>hvm</type></os>"
            "<cpu><numa><cell id='0' cpus='0-3' memory='8' unit='GiB'/>"
            "<cell id='1' cpus='4-7' memory='8' unit='GiB'/></numa></cpu></domain>";
        g_autoptr(DomainSpec) spec = NULL;
        g_autofree char *error = NULL;
        PlacementRequest req;

        ck_assert_msg(domain_xml_parse(xml, &spec, &error) == 0, "%s", error);
        req = domain_request(spec, spec);
        ck_assert_int_eq(req.memory_source, MEMORY_SOURCE_MEMNODE);
}
END_TEST

/* Two interleaved cells of 8 vCPUs on one node of 8-core L3 groups (EPYC 9654): each cell takes an L3
 * group of its own; picked together in vCPU order, both cells spread over both L3 groups */
START_TEST(test_cells_on_one_node_take_their_own_l3)
{
        static const char *const lists[] = {"0,2,4,6,8,10,12,14", "1,3,5,7,9,11,13,15"};
        g_autoptr(Topology) t = test_topology_load("epyc-9654-nps1.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        Cells c;

        cells_make(&c, lists, 2, 4 * GiB);
        g_autoptr(Plan) p = place(t, l, POLICY_EXPLICIT, 16, 8 * GiB, &c);

        ck_assert_int_eq(p->result, PLAN_PLACED);
        for (unsigned i = 0; i < 2; i++) {
                int l3 = -1;
                CPUSET_FOREACH (v, c.sets[i]) {
                        unsigned here = t->cores[t->pus[p->vcpu_pu[v]].core].l3;
                        if (l3 < 0)
                                l3 = (int)here;
                        ck_assert_msg(here == (unsigned)l3, "cell %u over two L3 groups (vCPU %d): %s", i, v,
                                      p->reason);
                }
        }
        cells_clear(&c);
}
END_TEST

static Suite *cells_suite(void)
{
        Suite *s = suite_create("cells");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_three_cells_not_split);
        tcase_add_test(tc, test_cell_memory_beyond_its_node);
        tcase_add_test(tc, test_split_cells_stay_in_a_package);
        tcase_add_test(tc, test_split_cells_stay_in_a_package_when_a_node_is_busy);
        tcase_add_test(tc, test_split_cells_memory_stays_in_a_package);
        tcase_add_test(tc, test_overcommitted_split_cell_stays_in_a_package);
        tcase_add_test(tc, test_cell_memory_spills_inside_its_package);
        tcase_add_test(tc, test_hugepage_cells_spill_inside_their_package);
        tcase_add_test(tc, test_memory_only_cell_says_where);
        tcase_add_test(tc, test_split_cells_past_the_group_least_loaded);
        tcase_add_test(tc, test_cells_set_without_idle_nodes);
        tcase_add_test(tc, test_cell_memory_none_on_its_node);
        tcase_add_test(tc, test_cell_on_memoryless_node_said);
        tcase_add_test(tc, test_cells_follow_guest_distances);
        tcase_add_test(tc, test_cells_follow_inverted_distances);
        tcase_add_test(tc, test_cells_follow_guest_sockets);
        tcase_add_test(tc, test_cells_follow_guest_distances_many);
        tcase_add_test(tc, test_cells_guest_distances_cannot_hold);
        tcase_add_test(tc, test_cells_of_other_sizes_stay);
        tcase_add_test(tc, test_cells_trade_within_free_memory);
        tcase_add_test(tc, test_cells_trade_property);
        tcase_add_test(tc, test_interleaved_cells);
        tcase_add_test(tc, test_overcommit_keeps_cells_whole);
        tcase_add_test(tc, test_overcommit_by_load_keeps_cells_whole);
        tcase_add_test(tc, test_overcommit_small_nodes_keep_cells_whole);
        tcase_add_test(tc, test_overcommit_splits_a_crowding_cell);
        tcase_add_test(tc, test_overcommit_cells_take_free_cores_first);
        tcase_add_test(tc, test_overcommit_cell_split_onto_free_cores);
        tcase_add_test(tc, test_cells_split_rather_than_overcommit);
        tcase_add_test(tc, test_cell_too_big_for_a_node);
        tcase_add_test(tc, test_vcpus_follow_memory);
        tcase_add_test(tc, test_vcpus_even_when_memory_is);
        tcase_add_test(tc, test_definition_snippet);
        tcase_add_test(tc, test_cells_with_unplugged_vcpus);
        tcase_add_test(tc, test_memnode_per_cell);
        tcase_add_test(tc, test_memnode_over_both_counted_by_cell);
        tcase_add_test(tc, test_memnode_cell_on_unusable_node);
        tcase_add_test(tc, test_memnode_cell_on_memory_only_node_runs_nearest);
        tcase_add_test(tc, test_memnode_homed_cell_leaves_bound_cell_its_node);
        tcase_add_test(tc, test_memnode_split_homed_cell_before_unbound);
        tcase_add_test(tc, test_memnode_homes_leave_a_nearer_node_to_the_next);
        tcase_add_test(tc, test_memnode_missing_node_unplaceable);
        tcase_add_test(tc, test_memnode_partly_missing_said);
        tcase_add_test(tc, test_memnode_overfilled_node_said);
        tcase_add_test(tc, test_memnode_cell_without_vcpus_says_memory);
        tcase_add_test(tc, test_memnode_cores_taken_on_named_nodes);
        tcase_add_test(tc, test_memnode_memory_only_cells_snippet_keeps_them);
        tcase_add_test(tc, test_memnode_cell_stays_with_memory);
        tcase_add_test(tc, test_memnode_cell_over_two_nodes);
        tcase_add_test(tc, test_memnode_cell_full_node);
        tcase_add_test(tc, test_adopted_cells_memory_per_cell);
        tcase_add_test(tc, test_partial_memnodes_bind_only_their_cells);
        tcase_add_test(tc, test_all_memnodes_bind_the_domain);
        tcase_add_test(tc, test_cells_on_one_node_take_their_own_l3);
        tcase_add_test(tc, test_partial_memnode_on_a_full_node);
        tcase_add_test(tc, test_memnode_interleave_counted_on_each);
        tcase_add_test(tc, test_cells_under_one_node_binding_known);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(cells_suite)
