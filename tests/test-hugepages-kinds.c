/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A guest whose <hugepages><page nodeset> backs some of its cells, the others in ordinary memory: each
 * cell is held on a node by the room of its own kind, never by the other kind's (spr-snc2: 8 cores, a
 * pool of sixteen 1 GiB pages and 103.2 GiB of ordinary memory per node).
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <string.h>

#include "decision-text.h"

#define GiB (UINT64_C(1) << 30)

/* Commits a domain from its XML; returns the committed plan. */
static const Plan *commit_xml(const Topology *t, Ledger *l, const char *name, const char *xml)
{
        PlacementParams params = test_params(POLICY_EXPLICIT);
        Plan *plan = test_place_xml(t, l, xml, &params);

        ck_assert_msg(plan->result == PLAN_PLACED, "%s: %s", name, plan->reason);
        ck_assert_int_eq(ledger_commit(l, name, plan), 0);
        return ledger_lookup(l, name);
}

/* 12 of node 0's 16 pages taken, and 95 GiB of node 1's ordinary memory (a core of each). */
static void fill(const Topology *t, Ledger *l)
{
        commit_xml(t, l, "fill0",
                   "<domain type='kvm'><name>fill0</name><memory unit='GiB'>12</memory><vcpu>1</vcpu>"
                   "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages></memoryBacking>"
                   "<numatune><memory mode='strict' nodeset='0'/></numatune></domain>");
        commit_xml(t, l, "fill1",
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
        plan = commit_xml(
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

static Suite *hugepages_kinds_suite(void)
{
        Suite *s = suite_create("hugepages kinds");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_cell_held_by_its_own_kind);
        tcase_add_test(tc, test_explain_names_short_kind);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(hugepages_kinds_suite)
