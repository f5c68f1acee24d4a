/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guest NUMA cells and the packages: a guest with cells stays inside one package, each cell whole with
 * part of its memory on a node 12 away, where the only sets that hold each cell's memory on its own node
 * cross the socket interconnect (21); unless its <distances> or sockets hold those cells apart, a nearer
 * set would split a cell, or none has the room. The reason says which.
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <string.h>

static const PolicyKind kinds[] = {POLICY_EXPLICIT, POLICY_COMPAT};
/* The shapes below are counted in free cores: under compat, which counts free threads, one node holds both
 * cells of most of them. */
static const PolicyKind by_cores[] = {POLICY_EXPLICIT};

/*
 * Sapphire Rapids in SNC2 (nodes 0-1 and 2-3 12 apart, 21 across): node 0 with 8 free cores and 6 GiB
 * free, node 1 with 7 free cores, node 2 with 4, node 3 with 2. A guest of two 4-vCPU 16 GiB cells has
 * room in package 0 (as one without cells takes nodes 0-1), but a cell whole with all its memory on its
 * node only on nodes 1 and 2.
 */
static Ledger *spr_busy(const Topology *t)
{
        Ledger *l = ledger_new(t);

        test_hold(t, l, "memory0", 1, 1, 0, 97 * GiB + GiB / 4);
        test_hold(t, l, "cores2", 2, 4, 2, 8 * GiB);
        test_hold(t, l, "cores3", 3, 6, 3, 8 * GiB);
        return l;
}

typedef struct {
        PlacementCell cells[4];
        CpuSet *sets[4];
        uint8_t distances[4][4];
        unsigned n;
} Cells;

/* n cells of vcpus vCPUs and memory each; apart > 0: <distances> 10 to itself, apart to the others. */
static void cells_make(Cells *c, unsigned n, unsigned vcpus, uint64_t memory, uint8_t apart)
{
        *c = (Cells){.n = n};
        for (unsigned i = 0; i < n; i++) {
                c->sets[i] = cpuset_new();
                for (unsigned v = 0; v < vcpus; v++)
                        cpuset_add(c->sets[i], i * vcpus + v);
                c->cells[i] = (PlacementCell){.id = i, .vcpus = c->sets[i], .memory = memory};
                if (!apart)
                        continue;
                for (unsigned j = 0; j < n; j++)
                        c->distances[i][j] = i == j ? 10 : apart;
                c->cells[i].distances = c->distances[i];
                c->cells[i].ndistances = n;
        }
}

static void cells_clear(Cells *c)
{
        for (unsigned i = 0; i < c->n; i++)
                cpuset_free(c->sets[i]);
}

static Plan *place(const Topology *t, const Ledger *l, PolicyKind k, const Cells *c, unsigned vcpus,
                   uint64_t memory, unsigned socket_vcpus)
{
        PlacementParams params = test_params(k);
        PlacementRequest req = {.name = "vm",
                                .vcpus = vcpus,
                                .memory = memory,
                                .cells = c ? c->cells : NULL,
                                .ncells = c ? c->n : 0,
                                .guest_socket_vcpus = socket_vcpus};
        return policy_place(t, l, &req, &params);
}

static int node_of(const Topology *t, const Plan *p, unsigned vcpu)
{
        ck_assert_int_ge(p->vcpu_pu[vcpu], 0);
        return (int)t->cores[t->pus[p->vcpu_pu[vcpu]].core].node;
}

/* The node of each cell, asserting it whole. */
static void cell_nodes(const Topology *t, const Plan *p, const Cells *c, int *node)
{
        for (unsigned i = 0; i < c->n; i++) {
                node[i] = -1;
                CPUSET_FOREACH (v, c->sets[i]) {
                        int here = node_of(t, p, (unsigned)v);
                        ck_assert_msg(node[i] < 0 || here == node[i], "cell %u split: %s", i, p->reason);
                        node[i] = here;
                }
        }
}

static unsigned packages_of(const Topology *t, const Plan *p)
{
        g_autoptr(CpuSet) packages = cpuset_new();

        for (unsigned v = 0; v < p->nvcpus; v++)
                cpuset_add(packages, t->cores[t->pus[p->vcpu_pu[v]].core].package);
        return cpuset_count(packages);
}

/* Without <distances>, and with the guest's own saying its cells are 11 apart: package 0, each cell whole,
 * its memory at most 12 from its vCPUs, as the same guest without cells; they went to nodes 1 and 2. */
START_TEST(test_cells_stay_in_a_package_with_memory_spilled)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = spr_busy(t);
        static const uint8_t apart[] = {0, 11};

        for (unsigned k = 0; k < G_N_ELEMENTS(by_cores); k++) {
                g_autoptr(Plan) plain = place(t, l, by_cores[k], NULL, 8, 32 * GiB, 0);

                ck_assert_msg(plain->result == PLAN_PLACED && packages_of(t, plain) == 1, "%s",
                              plain->reason);
                for (unsigned a = 0; a < G_N_ELEMENTS(apart); a++) {
                        Cells c;
                        int node[2];

                        cells_make(&c, 2, 4, 16 * GiB, apart[a]);
                        g_autoptr(Plan) p = place(t, l, by_cores[k], &c, 8, 32 * GiB, 0);
                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        cell_nodes(t, p, &c, node);
                        ck_assert_msg(packages_of(t, p) == 1, "%s, distances %u: %s",
                                      policy_kind_to_string(by_cores[k]), apart[a], p->reason);
                        for (unsigned i = 0; i < 2; i++)
                                CPUSET_FOREACH (m, p->cells[i].counted_nodes)
                                        ck_assert_msg(topology_distance(t, (unsigned)node[i], (unsigned)m) <=
                                                          12,
                                                      "cell %u memory on node %d: %s", i, m, p->reason);
                        ck_assert_msg(strstr(p->reason,
                                             "nearer than any set that holds each guest cell with "
                                             "all its memory on its node (max distance 21, "
                                             "across the packages)"),
                                      "%s", p->reason);
                        cells_clear(&c);
                }
        }
}
END_TEST

/* Cells the guest's own <distances> hold 21 apart, or on two of its sockets, may run 21 apart: they keep
 * nodes 1 and 2, each cell's memory on its node, and the reason says why they cross the packages. */
START_TEST(test_cells_held_apart_by_the_guest_may_cross)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = spr_busy(t);

        for (unsigned k = 0; k < G_N_ELEMENTS(by_cores); k++)
                for (unsigned how = 0; how < 2; how++) {
                        Cells c;
                        int node[2];

                        cells_make(&c, 2, 4, 16 * GiB, how == 0 ? 21 : 0);
                        g_autoptr(Plan) p = place(t, l, by_cores[k], &c, 8, 32 * GiB, how == 1 ? 4 : 0);
                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        cell_nodes(t, p, &c, node);
                        ck_assert_msg(packages_of(t, p) == 2, "%s: %s", policy_kind_to_string(by_cores[k]),
                                      p->reason);
                        ck_assert_msg(strstr(p->reason, how == 0 ? "its guest cells cross the packages, "
                                                                   "as its <distances> hold cells 0 and 1 "
                                                                   "apart (21)"
                                                                 : "its guest cells cross the packages, "
                                                                   "as its <topology> puts cells 0 and 1 "
                                                                   "on two sockets"),
                                      "%s", p->reason);
                        cells_clear(&c);
                }
}
END_TEST

/* Each cell fits a node of one package (nodes 2 and 3 with 4 free cores each): nothing changes, no note. */
START_TEST(test_cells_that_fit_one_package_unchanged)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);

        test_hold(t, l, "memory0", 1, 1, 0, 97 * GiB + GiB / 4);
        test_hold(t, l, "cores2", 2, 4, 2, 8 * GiB);
        test_hold(t, l, "cores3", 3, 4, 3, 8 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(by_cores); k++) {
                Cells c;
                int node[2];

                cells_make(&c, 2, 4, 16 * GiB, 0);
                g_autoptr(Plan) p = place(t, l, by_cores[k], &c, 8, 32 * GiB, 0);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                cell_nodes(t, p, &c, node);
                ck_assert_msg(node[0] != node[1] && node[0] >= 2 && node[1] >= 2, "%s", p->reason);
                for (unsigned i = 0; i < 2; i++)
                        ck_assert_msg(cpuset_count(p->cells[i].counted_nodes) == 1, "%s", p->reason);
                ck_assert_msg(!strstr(p->reason, "package"), "%s", p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* No package has the cores for the guest (4 free on node 0, 4 on node 2, the others full): the cells
 * cross, as the guest without cells does, and the reason says no nearer set has the room. */
START_TEST(test_cells_cross_when_no_package_has_room)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);

        test_hold(t, l, "cores0", 0, 4, 0, 8 * GiB);
        test_hold(t, l, "cores1", 1, 8, 1, 8 * GiB);
        test_hold(t, l, "cores2", 2, 4, 2, 8 * GiB);
        test_hold(t, l, "cores3", 3, 8, 3, 8 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(by_cores); k++) {
                Cells c;
                int node[2];

                cells_make(&c, 2, 4, 16 * GiB, 0);
                g_autoptr(Plan) p = place(t, l, by_cores[k], &c, 8, 32 * GiB, 0);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                cell_nodes(t, p, &c, node);
                ck_assert_msg(packages_of(t, p) == 2, "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "its guest cells cross the packages: no nearer set has "
                                                "the room for them"),
                              "%s", p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* A cell its <memnode> binds to node 2 stays there (its memory is there): the guest crosses the packages
 * as its definition asks, the other cell whole on node 1. */
START_TEST(test_cells_bound_by_memnode_keep_their_node)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = spr_busy(t);
        g_autoptr(CpuSet) on2 = cpuset_new();

        cpuset_add(on2, 2);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                Cells c;
                int node[2];

                cells_make(&c, 2, 4, 16 * GiB, 0);
                c.cells[1].memory_nodes = on2;
                g_autoptr(Plan) p = place(t, l, kinds[k], &c, 8, 32 * GiB, 0);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                cell_nodes(t, p, &c, node);
                ck_assert_msg(node[1] == 2, "%s", p->reason);
                ck_assert_msg(!strstr(p->reason, "nearer than any set"), "%s", p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* Both cells bound by their <memnode>, to node 1 and node 2: the definition puts them in two packages,
 * on an idle host with room in either, and the reason says so rather than that no nearer set has room. */
START_TEST(test_cells_bound_across_said)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) on1 = cpuset_new(), on2 = cpuset_new();

        cpuset_add(on1, 1);
        cpuset_add(on2, 2);
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                Cells c;
                int node[2];

                cells_make(&c, 2, 2, 4 * GiB, 0);
                c.cells[0].memory_nodes = on1;
                c.cells[1].memory_nodes = on2;
                g_autoptr(Plan) p = place(t, l, kinds[k], &c, 4, 8 * GiB, 0);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                cell_nodes(t, p, &c, node);
                ck_assert_msg(node[0] == 1 && node[1] == 2, "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "its guest cells cross the packages, as its "
                                                "<numatune><memnode> elements bind them there") &&
                                  !strstr(p->reason, "no nearer set has the room"),
                              "%s", p->reason);
                cells_clear(&c);
        }
}
END_TEST

/* Package 0 has the cores (5 + 5 free) but no node of it holds a 6-vCPU cell: rather than split that cell
 * across nodes 0-1, the cells keep their nodes across the packages (6 on node 2, 2 on node 1), and the
 * reason says why. */
START_TEST(test_cells_not_split_to_stay_in_a_package)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);

        test_hold(t, l, "memory0", 0, 3, 0, 97 * GiB + GiB / 4);
        test_hold(t, l, "cores1", 1, 3, 1, 8 * GiB);
        test_hold(t, l, "cores2", 2, 2, 2, 8 * GiB);
        test_hold(t, l, "cores3", 3, 8, 3, 8 * GiB);
        for (unsigned k = 0; k < G_N_ELEMENTS(by_cores); k++) {
                static const char *const lists[] = {"0-5", "6-7"};
                Cells c;
                int node[2];

                cells_make(&c, 2, 1, 8 * GiB, 0);
                for (unsigned i = 0; i < 2; i++) {
                        cpuset_free(c.sets[i]);
                        ck_assert_int_eq(cpuset_parse(lists[i], &c.sets[i], NULL), 0);
                        c.cells[i].vcpus = c.sets[i];
                }
                g_autoptr(Plan) p = place(t, l, by_cores[k], &c, 8, 16 * GiB, 0);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                cell_nodes(t, p, &c, node);
                ck_assert_msg(node[0] == 2 && node[1] == 1, "%s", p->reason);
                ck_assert_msg(strstr(p->reason, "its guest cells cross the packages: a nearer set would "
                                                "split a cell"),
                              "%s", p->reason);
                cells_clear(&c);
        }
}
END_TEST

static Suite *cells_package_suite(void)
{
        Suite *s = suite_create("cells-package");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_cells_stay_in_a_package_with_memory_spilled);
        tcase_add_test(tc, test_cells_held_apart_by_the_guest_may_cross);
        tcase_add_test(tc, test_cells_that_fit_one_package_unchanged);
        tcase_add_test(tc, test_cells_cross_when_no_package_has_room);
        tcase_add_test(tc, test_cells_bound_by_memnode_keep_their_node);
        tcase_add_test(tc, test_cells_bound_across_said);
        tcase_add_test(tc, test_cells_not_split_to_stay_in_a_package);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(cells_package_suite)
