/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How well a domain fits where it lands, on hosts made with hwloc's own tools (tests/topologies): the L3
 * decides between equally near sets, cores beside reserved threads come after wholly free ones, and
 * without a distance matrix a socket's nodes are nearer than another socket's.
 */
#include "test-util.h"
#include "test-policy-util.h"
#include "topology-load.h"

static Topology *load_fixture(const char *name)
{
        g_autofree char *path = test_topology_path(name);
        g_autofree char *error = NULL;
        Topology *t = NULL;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s: %s", path, error ? error : "");
        return t;
}

START_TEST(test_sockets_without_slit)
{
        /* 2 sockets x 2 nodes x 12 cores, no matrix. A small domain on node 0, then 20 vCPUs: nodes 2 and
         * 3 (one socket, both free) are nearer than nodes 1 and 2 (two sockets), though as free. */
        g_autoptr(Topology) t = load_fixture("two-sockets-no-slit.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        ck_assert_int_eq(test_place(t, l, &p, "small", 2, GiB)->result, PLAN_PLACED);
        const Plan *plan = test_place(t, l, &p, "big", 20, 4 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(test_plan_node_count(plan), 2);
        ck_assert_msg(cpuset_has(plan->nodes, 2) && cpuset_has(plan->nodes, 3), "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "max distance 11") != NULL, "%s", plan->reason);
}
END_TEST

static Suite *fit_suite(void)
{
        Suite *s = suite_create("policy: fit");
        TCase *tc = tcase_create("fit");
        tcase_add_test(tc, test_sockets_without_slit);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(fit_suite)
