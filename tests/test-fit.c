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

/* Commits a domain of one vCPU on each of the given cores (first thread), no memory. */
static void occupy(const Topology *t, Ledger *l, const char *name, const unsigned *cores, unsigned n)
{
        Plan *plan = plan_new(name, n, 0, t->nnodes);

        plan->result = PLAN_PLACED;
        for (unsigned i = 0; i < n; i++) {
                const TopoCore *c = &t->cores[cores[i]];
                plan->vcpu_pu[i] = (int)c->pu_first;
                cpuset_add(plan->vcpu_pins[i], t->pus[c->pu_first].os_index);
                cpuset_add(plan->nodes, c->node);
        }
        ck_assert_int_eq(ledger_commit(l, name, plan), 0);
}

/* The L3 groups (TopoCore.l3) the plan's vCPUs run in, as a set. */
static CpuSet *plan_l3s(const Topology *t, const Plan *plan)
{
        CpuSet *s = cpuset_new();
        for (unsigned v = 0; v < plan->nvcpus; v++)
                cpuset_add(s, t->cores[t->pus[plan->vcpu_pu[v]].core].l3);
        return s;
}

/* Occupies every core of node n's L3 groups except `leave` cores in each group (leave[g] of group g). */
static void occupy_node(const Topology *t, Ledger *l, const char *name, unsigned n, const unsigned *leave)
{
        const TopoNode *node = &t->nodes[n];
        g_autofree unsigned *cores = g_new(unsigned, node->ncores);
        g_autofree unsigned *seen = g_new0(unsigned, t->nl3);
        unsigned first_l3 = t->cores[node->core_first].l3, k = 0;

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                unsigned g = t->cores[c].l3;
                if (seen[g]++ >= leave[g - first_l3])
                        cores[k++] = c;
        }
        if (k)
                occupy(t, l, name, cores, k);
}

START_TEST(test_l3_fit_four_nodes)
{
        /* 4 nodes of 4 L3 x 6 cores. Node 0 has a busy core in every L3 (20 free cores, 5 at most in one
         * L3); node 1 has one whole free L3 (6 free cores); nodes 2 and 3 a free core per L3. A 6-vCPU
         * domain goes to node 1's free L3, not 5+1 over two of node 0's. */
        g_autoptr(Topology) t = load_fixture("four-l3-per-node.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const unsigned five[4] = {5, 5, 5, 5}, one_l3[4] = {0, 6, 0, 0}, ones[4] = {1, 1, 1, 1};

        ck_assert_uint_eq(t->nnodes, 4);
        ck_assert_uint_eq(t->nl3, 16);
        occupy_node(t, l, "a", 0, five);
        occupy_node(t, l, "b", 1, one_l3);
        occupy_node(t, l, "c", 2, ones);
        occupy_node(t, l, "d", 3, ones);
        const Plan *plan = test_place(t, l, &p, "vm", 6, 8 * GiB);
        g_autoptr(CpuSet) l3s = plan_l3s(t, plan);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_has(plan->nodes, 1) && test_plan_node_count(plan) == 1, "%s", plan->reason);
        ck_assert_uint_eq(cpuset_count(l3s), 1);
        ck_assert_msg(strstr(plan->reason, "fits one L3") != NULL, "%s", plan->reason);
}
END_TEST

START_TEST(test_l3_fit_epyc)
{
        /* 2x EPYC 9654 in NPS1: 2 nodes of 12 CCDs x 8 cores. Node 0 has a busy core in every CCD (84 free
         * cores, 7 at most in one CCD), node 1 only one idle CCD: 8 vCPUs take that CCD, not 7+1. */
        g_autoptr(Topology) t = load_fixture("epyc-9654-nps1.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned seven[12], one_ccd[12] = {0};

        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->nl3, 24);
        for (unsigned g = 0; g < 12; g++)
                seven[g] = 7;
        one_ccd[5] = 8;
        occupy_node(t, l, "a", 0, seven);
        occupy_node(t, l, "b", 1, one_ccd);
        const Plan *plan = test_place(t, l, &p, "vm", 8, 16 * GiB);
        g_autoptr(CpuSet) l3s = plan_l3s(t, plan);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_has(plan->nodes, 1), "%s", plan->reason);
        ck_assert_uint_eq(cpuset_count(l3s), 1);
        ck_assert_uint_eq(cpuset_next(l3s, 0), 12 + 5);
        /* with a free core back in every CCD of node 0, both fit: the least loaded wins again */
        ck_assert_int_eq(ledger_release(l, "vm"), 0);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        plan = test_place(t, l, &p, "vm", 8, 16 * GiB);
        ck_assert_msg(cpuset_has(plan->nodes, 0), "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "L3") == NULL, "%s", plan->reason);
}
END_TEST

START_TEST(test_reserved_threads_rank_last)
{
        /* ReservedCPUs=1,3,5 on 1 node x 8 cores x 2 threads: cores 0-2 keep a thread for the host, 5 cores
         * are wholly free. 7 vCPUs: the 5 free cores first, then 2 beside reserved threads; no vCPU beside
         * another while a core is idle, and the reason says where they share. */
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) reserved = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned beside = 0;

        ck_assert_int_eq(cpuset_parse("1,3,5", &reserved, NULL), 0);
        p.reserved_cpus = reserved;
        const Plan *plan = test_place(t, l, &p, "vm", 7, 8 * GiB);
        g_autofree unsigned *on = g_new0(unsigned, t->ncores);

        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        for (unsigned v = 0; v < plan->nvcpus; v++) {
                unsigned c = t->pus[plan->vcpu_pu[v]].core;
                on[c]++;
                beside += c < 3;
                ck_assert(!cpuset_intersects(plan->vcpu_pins[v], reserved));
        }
        for (unsigned c = 3; c < 8; c++)
                ck_assert_msg(on[c] == 1, "core %u holds %u vCPUs: %s", c, on[c], plan->reason);
        ck_assert_uint_eq(beside, 2);
        ck_assert_uint_eq(plan->shared_vcpus, 0);
        ck_assert_msg(strstr(plan->reason, "0 vCPUs share") == NULL, "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "2 run beside reserved CPUs (ReservedCPUs=1,3,5)") != NULL, "%s",
                      plan->reason);
        /* 2 more: the last core beside a reserved thread, then one beside another vCPU */
        plan = test_place(t, l, &p, "vm2", 2, GiB);
        ck_assert_uint_eq(t->pus[plan->vcpu_pu[0]].core, 2);
        ck_assert_uint_eq(plan->shared_vcpus, 1);
        ck_assert_msg(strstr(plan->reason, "1 vCPUs share a core, 1 more runs beside reserved CPUs") != NULL,
                      "%s", plan->reason);
}
END_TEST

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
        tcase_add_test(tc, test_l3_fit_four_nodes);
        tcase_add_test(tc, test_l3_fit_epyc);
        tcase_add_test(tc, test_reserved_threads_rank_last);
        tcase_add_test(tc, test_sockets_without_slit);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(fit_suite)
