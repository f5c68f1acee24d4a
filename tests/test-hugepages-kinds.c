/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A guest whose <hugepages><page nodeset> backs some of its cells, the others in ordinary memory: each
 * cell is held on a node by the room of its own kind, never by the other kind's (spr-snc2: 8 cores, a
 * pool of sixteen 1 GiB pages and 103.2 GiB of ordinary memory per node).
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <string.h>

#include "decision-json.h"
#include "decision-text.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* 12 of node 0's 16 pages taken, and 95 GiB of node 1's ordinary memory (a core of each). */
static void fill(const Topology *t, Ledger *l)
{
        test_commit_xml(t, l, "fill0",
                        "<domain type='kvm'><name>fill0</name><memory unit='GiB'>12</memory><vcpu>1</vcpu>"
                        "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                        "<numatune><memory mode='strict' nodeset='0'/></numatune></domain>");
        test_commit_xml(t, l, "fill1",
                        "<domain type='kvm'><name>fill1</name><memory unit='GiB'>95</memory><vcpu>1</vcpu>"
                        "<numatune><memory mode='strict' nodeset='1'/></numatune></domain>");
}

/* Node 0's pool has 4 pages left, node 1's ordinary memory 8 GiB; the guest, kept to package 0, has a cell
 * of 12 GiB in 1 GiB pages and one of 2 GiB of ordinary memory, 4 vCPUs each. Node 0 and its 103 GiB of
 * ordinary memory "held" the hugepage cell when a node's room was the two kinds together, so that cell ran
 * on node 0 with 8 of its pages on node 1; node 1's pool holds it whole, node 0 the ordinary cell. */
START_TEST(test_cell_held_by_its_own_kind)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan;

        fill(t, l);
        plan = test_commit_xml(
            t, l, "mixfit",
            "<domain type='kvm'><name>mixfit</name><memory unit='GiB'>14</memory>"
            "<vcpu cpuset='0-31'>8</vcpu><memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/>"
            "</hugepages></memoryBacking><cpu><numa><cell id='0' cpus='0-3' memory='12' unit='GiB'/>"
            "<cell id='1' cpus='4-7' memory='2' unit='GiB'/></numa></cpu></domain>");
        ck_assert_msg(cpuset_count(plan->cells[0].nodes) == 1 && cpuset_has(plan->cells[0].nodes, 1) &&
                          cpuset_count(plan->cells[0].counted_nodes) == 1 &&
                          cpuset_has(plan->cells[0].counted_nodes, 1),
                      "%s", plan->reason);
        ck_assert_msg(cpuset_count(plan->cells[1].nodes) == 1 && cpuset_has(plan->cells[1].nodes, 0), "%s",
                      plan->reason);
        ck_assert_uint_eq(ledger_node_hugepages(l, 1, GiB), 12 * GiB);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, GiB), 12 * GiB);
        ck_assert_msg(!strstr(plan->reason, "lacks the room"), "%s", plan->reason);
}
END_TEST

/* The same host; a guest of 4 vCPUs, its hugepage cell 12 GiB: node 0 has the cores and 107 GiB of pages and
 * ordinary memory together, but 4 free pages. explain said "too small" of it as of a set without the
 * room; it names the kind that is short, and so for a node without the ordinary memory. */
START_TEST(test_explain_names_short_kind)
{
        static const char *const cells[] = {
            "<cell id='0' cpus='0-1' memory='12' unit='GiB'/><cell id='1' cpus='2-3' memory='2' "
            "unit='GiB'/>",
            "<cell id='0' cpus='0-1' memory='2' unit='GiB'/><cell id='1' cpus='2-3' memory='12' "
            "unit='GiB'/>",
        };
        static const char *const verdict[] = {"0              10   10.00          7        15    107.2 GiB  "
                                              "too few free hugepages\n",
                                              "1              10   10.00          7        15     24.2 GiB  "
                                              "too little ordinary memory\n"};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");

        for (unsigned k = 0; k < G_N_ELEMENTS(cells); k++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams params = test_params(POLICY_EXPLICIT);
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='kvm'><name>mix4</name><memory unit='GiB'>14</memory>"
                    "<vcpu cpuset='0-31'>4</vcpu><memoryBacking><hugepages><page size='1' unit='G' "
                    "nodeset='0'/></hugepages></memoryBacking><cpu><numa>%s</numa></cpu></domain>",
                    cells[k]);
                g_autoptr(Plan) plan = NULL;
                g_autofree char *text = NULL;

                fill(t, l);
                plan = test_place_xml(t, l, xml, &params);
                text = plan_explain(t, plan);
                ck_assert_msg(plan->result == PLAN_PLACED && strstr(text, verdict[k]) &&
                                  !strstr(text, "too small"),
                              "%s", text);
        }
}
END_TEST

/* spr-snc2 with a pool of 4096 pages of 2 MiB (8 GiB) on each node beside its sixteen 1 GiB pages. */
static Topology *two_sizes(void)
{
        Topology *t = test_topology_load("spr-snc2.xml");

        for (unsigned n = 0; n < t->nnodes; n++) {
                TopoNode *node = &t->nodes[n];
                node->hugepages = g_renew(TopoPages, node->hugepages, node->nhugepages + 1);
                memmove(&node->hugepages[1], &node->hugepages[0], sizeof(TopoPages) * node->nhugepages);
                node->hugepages[0] = (TopoPages){.size = 2 * MiB, .count = 4096};
                node->nhugepages++;
        }
        return t;
}

/* A DPDK guest of 8 vCPUs: cell 0 12 GiB in 1 GiB pages, cell 1 6 GiB in 2 MiB pages (libvirt backs each
 * cell with the <page> naming it). Both fit one node, each in its own size's pool; counted all in 1 GiB
 * pages (18 GiB, more than a node's 16) it was spread over two nodes, 6 GiB of 1 GiB pages held that the
 * guest never takes and the 2 MiB pools it does take shown free. */
START_TEST(test_cells_in_own_page_size)
{
        static const char *const orders[] = {
            "<page size='2' unit='M' nodeset='1'/><page size='1' unit='G' nodeset='0'/>",
            "<page size='1' unit='G' nodeset='0'/><page size='2' unit='M' nodeset='1'/>",
            "<page size='1' unit='G'/><page size='2' unit='M' nodeset='1'/>",
        };
        g_autoptr(Topology) t = two_sizes();

        for (unsigned k = 0; k < G_N_ELEMENTS(orders); k++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams params = test_params(POLICY_EXPLICIT);
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='kvm'><name>dpdk</name><memory unit='GiB'>18</memory><vcpu>8</vcpu>"
                    "<memoryBacking><hugepages>%s</hugepages></memoryBacking><cpu><numa>"
                    "<cell id='0' cpus='0-3' memory='12' unit='GiB'/><cell id='1' cpus='4-7' memory='6' "
                    "unit='GiB'/></numa></cpu></domain>",
                    orders[k]);
                Plan *plan = test_place_xml(t, l, xml, &params);
                unsigned n;

                ck_assert_msg(plan->result == PLAN_PLACED && cpuset_count(plan->nodes) == 1, "%u: %s", k,
                              plan->reason);
                n = (unsigned)cpuset_next(plan->nodes, 0);
                ck_assert_uint_eq(plan->hugepage_size, GiB);
                ck_assert_uint_eq(plan->second_page_size, 2 * MiB);
                ck_assert(!plan->cells[0].ordinary && plan->cells[1].ordinary);
                ck_assert_msg(strstr(plan->reason,
                                     "free for 18.0 GiB (12.0 GiB in 1.0 GiB hugepages, 6.0 GiB "
                                     "in 2.0 MiB hugepages)") &&
                                  !strstr(plan->reason, "differ") && !strstr(plan->reason, "ordinary"),
                              "%s", plan->reason);
                /* a decision's cells give the cell of the smaller size its own */
                {
                        g_autoptr(JsonBuilder) b = json_builder_new();
                        g_autoptr(JsonNode) root = NULL;
                        JsonArray *cells;
                        json_builder_begin_object(b);
                        decision_json_add_members(b, t, plan, FALSE);
                        json_builder_end_object(b);
                        root = json_builder_get_root(b);
                        cells = json_object_get_array_member(json_node_get_object(root), "cells");
                        ck_assert(!json_object_has_member(json_array_get_object_element(cells, 0),
                                                          "hugepage_size"));
                        ck_assert_int_eq(json_object_get_int_member(json_array_get_object_element(cells, 1),
                                                                    "hugepage_size"),
                                         2 * MiB);
                        ck_assert(!json_object_has_member(json_array_get_object_element(cells, 1),
                                                          "ordinary_memory"));
                }
                ck_assert_int_eq(ledger_commit(l, "dpdk", plan), 0);
                ck_assert_uint_eq(ledger_node_hugepages(l, n, GiB), 12 * GiB);
                ck_assert_uint_eq(ledger_node_hugepages(l, n, 2 * MiB), 6 * GiB);
                ck_assert_uint_eq(ledger_node_memory(l, n), 0);
                ck_assert_int_eq(ledger_release(l, "dpdk"), 0);
                ck_assert_uint_eq(ledger_node_hugepages(l, n, 2 * MiB), 0);
        }
}
END_TEST

/* The 2 MiB cell bigger than any node's 2 MiB pool: the guest is spread so that each size's pools hold
 * their cells, never a cell in another size's pages; the whole host short of 2 MiB pages, unplaceable, the
 * reason giving each size's room. */
START_TEST(test_second_size_short)
{
        g_autoptr(Topology) t = two_sizes();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) spread = test_place_xml(
            t, l,
            "<domain type='kvm'><name>big2m</name><memory unit='GiB'>14</memory><vcpu>4</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/><page size='2' unit='M' "
            "nodeset='1'/></hugepages></memoryBacking><cpu><numa><cell id='0' cpus='0-1' memory='2' "
            "unit='GiB'/><cell id='1' cpus='2-3' memory='12' unit='GiB'/></numa></cpu></domain>",
            &params);
        g_autoptr(Plan) none = test_place_xml(
            t, l,
            "<domain type='kvm'><name>huge2m</name><memory unit='GiB'>34</memory><vcpu>4</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/><page size='2' unit='M' "
            "nodeset='1'/></hugepages></memoryBacking><cpu><numa><cell id='0' cpus='0-1' memory='1' "
            "unit='GiB'/><cell id='1' cpus='2-3' memory='33' unit='GiB'/></numa></cpu></domain>",
            &params);
        uint64_t second = 0;

        ck_assert_msg(spread->result == PLAN_PLACED && cpuset_count(spread->nodes) == 2, "%s",
                      spread->reason);
        for (unsigned n = 0; n < t->nnodes; n++) {
                ck_assert_uint_le(plan_node_ordinary(spread, n), 8 * GiB);
                second += plan_node_ordinary(spread, n);
        }
        ck_assert_uint_eq(second, 12 * GiB);
        /* explain names the size a single node is short of */
        {
                g_autofree char *text = plan_explain(t, spread);
                ck_assert_msg(strstr(text, "too few free 2.0 MiB hugepages\n"), "%s", text);
        }
        ck_assert_msg(none->result == PLAN_UNPLACEABLE &&
                          strstr(none->reason,
                                 "(64.0 GiB in 1.0 GiB hugepages and 32.0 GiB in 2.0 MiB "
                                 "hugepages free on the whole host; each guest cell takes only "
                                 "the pages of its own size)"),
                      "%s: %s", plan_result_to_string(none->result), none->reason);
}
END_TEST

/* Two sizes, node 0's 2 MiB pool taken and 12 of node 1's 1 GiB pages (a core of each): a guest kept to
 * package 0 with a 2-vCPU cell of 12 GiB in 1 GiB pages and a 6-vCPU cell of 6 GiB in 2 MiB pages. The 2
 * MiB cell's room on a node was its general memory (the free memory beside the 1 GiB pages was general
 * memory, not the 2 MiB pages), so it ran on node 0, all its pages on node 1, and the 1 GiB cell on node
 * 1 with 8 of its pages on node 0; each node holds one cell whole in its own pool. explain's free memory
 * is that of the two sizes. */
START_TEST(test_second_size_cell_held_by_its_pages)
{
        g_autoptr(Topology) t = two_sizes();
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan;

        test_commit_xml(t, l, "s2m0",
                        "<domain type='kvm'><name>s2m0</name><memory unit='GiB'>8</memory><vcpu>1</vcpu>"
                        "<memoryBacking><hugepages><page size='2' unit='M'/></hugepages></memoryBacking>"
                        "<numatune><memory mode='strict' nodeset='0'/></numatune></domain>");
        test_commit_xml(t, l, "g1g1",
                        "<domain type='kvm'><name>g1g1</name><memory unit='GiB'>12</memory><vcpu>1</vcpu>"
                        "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                        "<numatune><memory mode='strict' nodeset='1'/></numatune></domain>");
        plan = test_commit_xml(
            t, l, "dp3",
            "<domain type='kvm'><name>dp3</name><memory unit='GiB'>18</memory><vcpu cpuset='0-31'>8</vcpu>"
            "<memoryBacking><hugepages><page size='2' unit='M' nodeset='1'/><page size='1' unit='G' "
            "nodeset='0'/></hugepages></memoryBacking><cpu><numa><cell id='0' cpus='0-1' memory='12' "
            "unit='GiB'/><cell id='1' cpus='2-7' memory='6' unit='GiB'/></numa></cpu></domain>");
        ck_assert_msg(cpuset_count(plan->cells[0].nodes) == 1 && cpuset_has(plan->cells[0].nodes, 0) &&
                          cpuset_count(plan->cells[1].nodes) == 1 && cpuset_has(plan->cells[1].nodes, 1),
                      "%s", plan->reason);
        ck_assert_msg(!strstr(plan->reason, "room"), "%s", plan->reason);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, GiB), 12 * GiB);
        ck_assert_uint_eq(ledger_node_hugepages(l, 1, 2 * MiB), 6 * GiB);
        {
                PlacementParams params = test_params(POLICY_EXPLICIT);
                g_autoptr(Ledger) empty = ledger_new(t);
                g_autoptr(Plan) one = test_place_xml(
                    t, empty,
                    "<domain type='kvm'><name>dpdk</name><memory unit='GiB'>18</memory><vcpu>8</vcpu>"
                    "<memoryBacking><hugepages><page size='2' unit='M' nodeset='1'/><page size='1' "
                    "unit='G' nodeset='0'/></hugepages></memoryBacking><cpu><numa><cell id='0' "
                    "cpus='0-3' memory='12' unit='GiB'/><cell id='1' cpus='4-7' memory='6' unit='GiB'/>"
                    "</numa></cpu></domain>",
                    &params);
                g_autofree char *text = plan_explain(t, one);
                ck_assert_msg(strstr(text, "   24.0 GiB  chosen\n"), "%s", text);
        }
}
END_TEST

/* A guest kept to node 0 by its <vcpu cpuset> alone, whose cpuset's nodes lack its memory: it runs all the
 * same, its memory counted on other nodes, only while the whole host has room for each kind of it. The
 * two kinds were summed: a DPDK guest on spr-snc2, which has no 2 MiB pool, and a guest with a 20 GiB cell
 * in 1 GiB pages on a host with 16 free, were said to run all the same, what the cpuset's nodes had free
 * named as hugepages of the plan's size alone. */
START_TEST(test_cpuset_spill_by_kind)
{
        static const char *const mix =
            "<domain type='kvm'><name>mixc</name><memory unit='GiB'>22</memory><vcpu cpuset='0-15'>4</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/></hugepages></memoryBacking>"
            "<cpu><numa><cell id='0' cpus='0-1' memory='20' unit='GiB'/><cell id='1' cpus='2-3' "
            "memory='2' unit='GiB'/></numa></cpu></domain>";
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Ledger) pools = ledger_new(t);
        g_autoptr(Ledger) node0 = ledger_new(t);
        g_autoptr(Plan) dpdk = test_place_xml(
            t, l,
            "<domain type='kvm'><name>dpdkc</name><memory unit='GiB'>18</memory><vcpu cpuset='0-15'>8"
            "</vcpu><memoryBacking><hugepages><page size='2' unit='M' nodeset='1'/><page size='1' unit='G' "
            "nodeset='0'/></hugepages></memoryBacking><cpu><numa><cell id='0' cpus='0-3' memory='12' "
            "unit='GiB'/><cell id='1' cpus='4-7' memory='6' unit='GiB'/></numa></cpu></domain>",
            &params);
        g_autoptr(Plan) short_pages = NULL, spills = NULL;

        ck_assert_msg(dpdk->result == PLAN_UNPLACEABLE && !strstr(dpdk->reason, "all the same") &&
                          strstr(dpdk->reason, "(64.0 GiB in 1.0 GiB hugepages and 0 B in 2.0 MiB hugepages "
                                               "free on the whole host;"),
                      "%s", dpdk->reason);
        ck_assert_uint_eq(plan_node_pages(dpdk, 0), 0);
        /* 48 of the other nodes' pages taken: 16 on the host for its 20 GiB cell */
        test_commit_xml(t, pools, "fillp",
                        "<domain type='kvm'><name>fillp</name><memory unit='GiB'>48</memory><vcpu>1</vcpu>"
                        "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                        "<numatune><memory mode='strict' nodeset='1-3'/></numatune></domain>");
        short_pages = test_place_xml(t, pools, mix, &params);
        ck_assert_msg(short_pages->result == PLAN_UNPLACEABLE &&
                          !strstr(short_pages->reason, "all the same") &&
                          strstr(short_pages->reason, "(16.0 GiB in 1.0 GiB hugepages and 412.8 GiB of "
                                                      "ordinary memory free on the whole host;"),
                      "%s", short_pages->reason);
        /* 12 of node 0's pages taken: the host has the pages, node 0 4 of them */
        test_commit_xml(t, node0, "fill0",
                        "<domain type='kvm'><name>fill0</name><memory unit='GiB'>12</memory><vcpu>1</vcpu>"
                        "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                        "<numatune><memory mode='strict' nodeset='0'/></numatune></domain>");
        spills = test_place_xml(t, node0, mix, &params);
        ck_assert_msg(strstr(spills->reason,
                             "(107.2 GiB in 1.0 GiB hugepages and ordinary memory there); "
                             "its memory is not bound, so it runs all the same with 16.0 GiB"),
                      "%s", spills->reason);
}
END_TEST

/* spr-snc2: cell 0 (12 GiB in 1 GiB pages) bound to node 0 by a strict <memnode>, cell 1 (8 GiB in 1 GiB
 * pages) free to go anywhere, cell 2 (2 GiB) in ordinary memory. The bound cell takes 12 of node 0's 16
 * pages: cell 1 finds 4 there, and goes to node 1. The bound cell's pages were taken from node 0's pages
 * and ordinary memory together, its pool still seen whole: all three cells went to node 0, 20 GiB of pages
 * counted in its 16 GiB pool, and the reason said the bound memory could not all be backed. */
START_TEST(test_bound_cell_takes_its_pages)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan = test_commit_xml(
            t, l, "boundmix",
            "<domain type='kvm'><name>boundmix</name><memory unit='GiB'>22</memory><vcpu>6</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0-1'/></hugepages></memoryBacking>"
            "<numatune><memnode cellid='0' mode='strict' nodeset='0'/></numatune><cpu><numa>"
            "<cell id='0' cpus='0-1' memory='12' unit='GiB'/><cell id='1' cpus='2-3' memory='8' unit='GiB'/>"
            "<cell id='2' cpus='4-5' memory='2' unit='GiB'/></numa></cpu></domain>");

        ck_assert_msg(!cpuset_has(plan->cells[1].nodes, 0) && !strstr(plan->reason, "cannot all be backed"),
                      "%s", plan->reason);
        for (unsigned n = 0; n < t->nnodes; n++)
                ck_assert_uint_le(ledger_node_hugepages(l, n, GiB), 16 * GiB);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, GiB), 12 * GiB);
}
END_TEST

/* spr-snc2, kept to package 0: cells 0 and 1 (10 GiB of 1 GiB pages each) the guest holds near (11),
 * cells 2 and 3 (2 GiB of ordinary memory each) likewise, each pair far from the other (21). Cells 0 and 1
 * on one node would take 20 of its 16 pages: they stay one per node, each whole with its pages. Taking
 * the guest's order with each node's pages and ordinary memory as one room, both went to node 1, 4 GiB of
 * cell 1's pages on node 0. */
START_TEST(test_cells_trade_by_own_kind)
{
        static const unsigned distance[4][4] = {
            {10, 11, 21, 21}, {11, 10, 21, 21}, {21, 21, 10, 11}, {21, 21, 11, 10}};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(GString) xml = g_string_new(
            "<domain type='kvm'><name>trade</name><memory unit='GiB'>24</memory><vcpu cpuset='0-31'>8</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0-1'/></hugepages></memoryBacking>"
            "<cpu><numa>");
        const Plan *plan;

        for (unsigned c = 0; c < 4; c++)
                g_string_append_printf(xml,
                                       "<cell id='%u' cpus='%u-%u' memory='%u' unit='GiB'><distances>"
                                       "<sibling id='0' value='%u'/><sibling id='1' value='%u'/>"
                                       "<sibling id='2' value='%u'/><sibling id='3' value='%u'/>"
                                       "</distances></cell>",
                                       c, 2 * c, 2 * c + 1, c < 2 ? 10 : 2, distance[c][0], distance[c][1],
                                       distance[c][2], distance[c][3]);
        g_string_append(xml, "</numa></cpu></domain>");
        plan = test_commit_xml(t, l, "trade", xml->str);
        ck_assert_msg(!cpuset_equal(plan->cells[0].nodes, plan->cells[1].nodes) &&
                          !strstr(plan->reason, "lacks the room"),
                      "%s", plan->reason);
        for (unsigned n = 0; n < t->nnodes; n++)
                ck_assert_uint_le(ledger_node_hugepages(l, n, GiB), 10 * GiB);
}
END_TEST

/* After fill(), kept to package 0: a hugepage cell of 20 GiB that no node's pool holds whole (node 0 has
 * 4 free pages, node 1 16) beside a 2 GiB ordinary cell. The big cell runs where most of its pages are,
 * node 1, 4 of them on node 0; with the two kinds as one room node 0 (107 GiB) "held" it all, and it ran
 * there with 16 of its 20 pages on node 1. */
START_TEST(test_spilled_cell_nearest_its_pages)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan;

        fill(t, l);
        plan = test_commit_xml(
            t, l, "spill",
            "<domain type='kvm'><name>spill</name><memory unit='GiB'>22</memory><vcpu cpuset='0-31'>4</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/></hugepages></memoryBacking>"
            "<cpu><numa><cell id='0' cpus='0-1' memory='20' unit='GiB'/><cell id='1' cpus='2-3' memory='2' "
            "unit='GiB'/></numa></cpu></domain>");
        ck_assert_msg(cpuset_count(plan->cells[0].nodes) == 1 && cpuset_has(plan->cells[0].nodes, 1), "%s",
                      plan->reason);
        ck_assert_uint_eq(plan_node_pages(plan, 1), 16 * GiB);
}
END_TEST

/* spr-snc2: 12 of the 16 pages of nodes 0 and 1 taken, 95 GiB of the ordinary memory of nodes 2 and 3 (a
 * core of each node). A 24-vCPU guest: cell 0 (12 vCPUs, 24 GiB of 1 GiB pages) and cell 1 (12 vCPUs,
 * 2 GiB of ordinary memory) each split over two nodes. Cell 0 goes to nodes 2-3, whose 32 free pages hold
 * it inside their package, cell 1 to nodes 0-1. With each node's two kinds as one room cell 0 took nodes
 * 0-1 (8 free pages) and 16 GiB of its pages were counted across the packages on node 2. */
START_TEST(test_split_cell_over_its_pages)
{
        static const char *const fills[][2] = {
            {"p0", "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                   "<numatune><memory mode='strict' nodeset='0'/></numatune>"},
            {"p1", "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                   "<numatune><memory mode='strict' nodeset='1'/></numatune>"},
            {"o2", "<numatune><memory mode='strict' nodeset='2'/></numatune>"},
            {"o3", "<numatune><memory mode='strict' nodeset='3'/></numatune>"},
        };
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan;

        for (unsigned i = 0; i < G_N_ELEMENTS(fills); i++) {
                g_autofree char *xml = g_strdup_printf("<domain type='kvm'><name>%s</name><memory "
                                                       "unit='GiB'>%u</memory><vcpu>1</vcpu>%s</domain>",
                                                       fills[i][0], i < 2 ? 12 : 95, fills[i][1]);
                test_commit_xml(t, l, fills[i][0], xml);
        }
        plan = test_commit_xml(
            t, l, "split",
            "<domain type='kvm'><name>split</name><memory unit='GiB'>26</memory><vcpu>24</vcpu>"
            "<memoryBacking><hugepages><page size='1' unit='G' nodeset='0'/></hugepages></memoryBacking>"
            "<cpu><numa><cell id='0' cpus='0-11' memory='24' unit='GiB'/><cell id='1' cpus='12-23' "
            "memory='2' unit='GiB'/></numa></cpu></domain>");
        ck_assert_msg(cpuset_has(plan->cells[0].nodes, 2) && cpuset_has(plan->cells[0].nodes, 3) &&
                          cpuset_count(plan->cells[0].nodes) == 2,
                      "%s", plan->reason);
        ck_assert_uint_eq(plan_node_pages(plan, 0) + plan_node_pages(plan, 1), 0);
}
END_TEST

/* Cell 0 bound strict by <memnode> to nodes 2-3, cell 1 unbound, one vCPU each, on spr-snc2: the set search
 * held cell 0 on node 2, the lowest of its nodes, and chose node 3 for the rest, but cell 0 is counted where
 * its vCPU runs, node 3 (the kernel binds to the nearest node of the mask), and cell 1's memory found no
 * room left there: counted nowhere, while the kernel takes it from node 2. Hugepages (16 of 20 GiB counted)
 * and ordinary memory (103.2 of 110 GiB) alike; each is now counted whole, the rest on node 2. */
START_TEST(test_unbound_rest_past_a_bound_cell_counted)
{
        static const struct {
                const char *backing;
                unsigned cell0, cell1;
                uint64_t page;
        } cases[] = {
            {"<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>", 16, 4, GiB},
            {"", 100, 10, 0},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
                g_autoptr(Ledger) l = ledger_new(t);
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='kvm'><name>mb</name><memory unit='GiB'>%u</memory><vcpu>2</vcpu>%s"
                    "<cpu><numa><cell id='0' cpus='0' memory='%u' unit='GiB'/><cell id='1' cpus='1' "
                    "memory='%u' unit='GiB'/></numa></cpu><numatune><memnode cellid='0' mode='strict' "
                    "nodeset='2-3'/></numatune></domain>",
                    cases[i].cell0 + cases[i].cell1, cases[i].backing, cases[i].cell0, cases[i].cell1);
                const Plan *plan = test_commit_xml(t, l, "mb", xml);
                uint64_t held = 0;

                for (unsigned n = 0; n < t->nnodes; n++)
                        held += cases[i].page ? ledger_node_hugepages(l, n, cases[i].page)
                                              : ledger_node_memory(l, n);
                ck_assert_msg(held == (uint64_t)(cases[i].cell0 + cases[i].cell1) * GiB,
                              "case %u: %llu bytes held: %s", i, (unsigned long long)held, plan->reason);
                ck_assert_msg(cases[i].page ? ledger_node_hugepages(l, 2, cases[i].page) > 0
                                            : ledger_node_memory(l, 2) > 0,
                              "case %u: nothing on node 2: %s", i, plan->reason);
                ck_assert_msg(strstr(plan->reason, "of its memory that nothing binds"), "case %u: %s", i,
                              plan->reason);
        }
}
END_TEST

/* spr-snc2 with 3, 0, 1 and 1 free 1 GiB pages on nodes 0-3 and a guest of 6 GiB of them: cell 0 (2 GiB)
 * unbound, cell 1 (4 GiB) under a preferred <memnode> on nodes 0-1. It was placed with 1 GiB counted
 * nowhere and nothing said; the 1 GiB no node holds is counted beside its vCPUs and the reason says the
 * memory cannot all be backed. */
START_TEST(test_memory_no_node_holds_counted_and_said)
{
        static const unsigned used[4] = {13, 16, 15, 15};
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan;
        uint64_t held = 0;

        for (unsigned n = 0; n < 4; n++) {
                g_autofree char *name = g_strdup_printf("fill%u", n);
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='kvm'><name>%s</name><memory unit='GiB'>%u</memory><vcpu>1</vcpu>"
                    "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                    "<numatune><memory mode='strict' nodeset='%u'/></numatune></domain>",
                    name, used[n], n);
                test_commit_xml(t, l, name, xml);
        }
        plan =
            test_commit_xml(t, l, "pref",
                            "<domain type='kvm'><name>pref</name><memory unit='GiB'>6</memory><vcpu>2</vcpu>"
                            "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                            "<cpu><numa><cell id='0' cpus='0' memory='2' unit='GiB'/><cell id='1' cpus='1' "
                            "memory='4' unit='GiB'/></numa></cpu><numatune><memnode cellid='1' "
                            "mode='preferred' nodeset='0-1'/></numatune></domain>");
        for (unsigned n = 0; n < t->nnodes; n++)
                held += plan_node_pages(plan, n);
        ck_assert_msg(held == 6 * GiB, "%llu bytes counted: %s", (unsigned long long)held, plan->reason);
        ck_assert_msg(strstr(plan->reason, "the guest's memory cannot all be backed"), "%s", plan->reason);
}
END_TEST

static Suite *hugepages_kinds_suite(void)
{
        Suite *s = suite_create("hugepages kinds");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_cell_held_by_its_own_kind);
        tcase_add_test(tc, test_explain_names_short_kind);
        tcase_add_test(tc, test_cells_in_own_page_size);
        tcase_add_test(tc, test_second_size_short);
        tcase_add_test(tc, test_second_size_cell_held_by_its_pages);
        tcase_add_test(tc, test_cpuset_spill_by_kind);
        tcase_add_test(tc, test_bound_cell_takes_its_pages);
        tcase_add_test(tc, test_cells_trade_by_own_kind);
        tcase_add_test(tc, test_spilled_cell_nearest_its_pages);
        tcase_add_test(tc, test_split_cell_over_its_pages);
        tcase_add_test(tc, test_unbound_rest_past_a_bound_cell_counted);
        tcase_add_test(tc, test_memory_no_node_holds_counted_and_said);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(hugepages_kinds_suite)
