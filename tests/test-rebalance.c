/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy_improves(): when moving a running domain is worth a live re-pin. */
#include "test-util.h"
#include "test-policy-util.h"

/* A plan of nvcpus vCPUs, vCPU i counted on PU pus[i], its node set made of those PUs' nodes. */
static Plan *plan_on(const Topology *t, const char *name, unsigned nvcpus, const unsigned *pus)
{
        Plan *p = plan_new(name, nvcpus, GiB, t->nnodes);
        for (unsigned i = 0; i < nvcpus; i++) {
                p->vcpu_pu[i] = (int)pus[i];
                cpuset_add(p->vcpu_pins[i], t->pus[pus[i]].os_index);
                cpuset_add(p->nodes, t->cores[t->pus[pus[i]].core].node);
        }
        return p;
}

START_TEST(test_fewer_shared_cores)
{
        /* one node, 2 cores of one PU: a and b share core 0, core 1 is free */
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned zero = 0, one = 1;
        g_autoptr(Plan) b = plan_on(t, "b", 1, &zero);
        g_autoptr(Plan) better = plan_on(t, "b", 1, &one);
        g_autoptr(Plan) worse = plan_on(t, "b", 1, &zero);
        g_autofree char *why = NULL;

        ck_assert_int_eq(ledger_commit(l, "a", plan_on(t, "a", 1, &zero)), 0);
        ck_assert_int_eq(ledger_commit(l, "b", plan_copy(b)), 0);
        ck_assert(policy_improves(t, l, b, better, &why));
        ck_assert_str_eq(why, "1 vCPU shared a core, now 0");
        worse->shared_vcpus = 2;
        ck_assert(!policy_improves(t, l, b, worse, &why));
        /* alone on its core, the same place is no improvement */
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        ck_assert(!policy_improves(t, l, b, better, &why));
}
END_TEST

START_TEST(test_fewer_nodes)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned spread[] = {0, 2}, packed[] = {0, 1};
        g_autoptr(Plan) current = plan_on(t, "vm", 2, spread);
        g_autoptr(Plan) candidate = plan_on(t, "vm", 2, packed);
        g_autofree char *why = NULL;

        ck_assert_int_eq(ledger_commit(l, "vm", plan_copy(current)), 0);
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(why, "spread over 2 nodes, now 1");
        ck_assert(!policy_improves(t, l, candidate, current, &why));
}
END_TEST

START_TEST(test_fewer_nodes_memory_stays)
{
        /* vCPUs on both nodes, 1 GiB of memory on each; the candidate packs them on node 0 and leaves the
         * memory where it is (a binding libvirt cannot change): the domain still spans two nodes */
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned spread[] = {0, 2}, packed[] = {0, 1};
        g_autoptr(Plan) current = plan_on(t, "vm", 2, spread);
        g_autoptr(Plan) candidate = plan_on(t, "vm", 2, packed);
        g_autofree char *why = NULL;

        current->memory = candidate->memory = 2 * GiB;
        current->node_memory[0] = current->node_memory[1] = GiB;
        candidate->node_memory[0] = candidate->node_memory[1] = GiB;
        candidate->keep_memory = true;
        ck_assert_int_eq(ledger_commit(l, "vm", plan_copy(current)), 0);
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(why, "its vCPUs on 2 nodes, now 1; its memory stays on 2");
        g_clear_pointer(&why, g_free);
        /* all of it on node 0: the domain leaves node 1 */
        current->node_memory[0] = candidate->node_memory[0] = 2 * GiB;
        current->node_memory[1] = candidate->node_memory[1] = 0;
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(why, "spread over 2 nodes, now 1");
}
END_TEST

START_TEST(test_fewer_nodes_vcpus_move)
{
        /* its vCPU on node 0, its memory on both nodes (the first plan's set holds both); the candidate
         * moves the vCPU to node 1 and leaves the memory where it is: its vCPUs are on one node as
         * before, which it is is what changed ("its vCPUs on 1 node, now 1" said nothing) */
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned zero = 0, two = 2;
        g_autoptr(Plan) current = plan_on(t, "vm", 1, &zero);
        g_autoptr(Plan) candidate = plan_on(t, "vm", 1, &two);
        g_autofree char *why = NULL;

        cpuset_add(current->nodes, 1);
        current->node_memory[0] = candidate->node_memory[0] = GiB / 2;
        current->node_memory[1] = candidate->node_memory[1] = GiB / 2;
        candidate->keep_memory = true;
        ck_assert_int_eq(ledger_commit(l, "vm", plan_copy(current)), 0);
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(why, "its vCPUs on node 0, now node 1; its memory stays on nodes 0-1");
}
END_TEST

START_TEST(test_nearer_vcpu_nodes_memory_stays)
{
        /* 3 nodes: 0-1 at 12, 0-2 at 30, 1-2 at 40. vCPUs on nodes 0 and 2 with their memory; the
         * candidate runs them on 0 and 1, the memory staying on 0 and 2: the domain spans all three
         * (mean 21.56, farther than 20.00), its vCPUs' nodes are nearer */
        uint32_t dist[] = {10, 12, 30, 12, 10, 40, 30, 40, 10};
        g_autoptr(Topology) t = topology_new_uniform(3, 1, 1, 8 * GiB, dist);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned far[] = {0, 2}, near[] = {0, 1};
        g_autoptr(Plan) current = plan_on(t, "vm", 2, far);
        g_autoptr(Plan) candidate = plan_on(t, "vm", 2, near);
        g_autofree char *why = NULL;

        current->node_memory[0] = candidate->node_memory[0] = GiB / 2;
        current->node_memory[2] = candidate->node_memory[2] = GiB / 2;
        candidate->keep_memory = true;
        ck_assert_int_eq(ledger_commit(l, "vm", plan_copy(current)), 0);
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(
            why, "mean distance of its vCPUs' nodes 20.00, now 11.00; its memory stays on nodes 0,2");
        g_clear_pointer(&why, g_free);
        /* its memory moved with it: the nodes it spans are nearer */
        candidate->node_memory[1] = GiB / 2;
        candidate->node_memory[2] = 0;
        candidate->keep_memory = false;
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(why, "mean node distance 20.00, now 11.00");
}
END_TEST

START_TEST(test_nearer_nodes)
{
        /* 3 nodes: 0-1 at 12, 0-2 and 1-2 at 30 */
        uint32_t dist[] = {10, 12, 30, 12, 10, 30, 30, 30, 10};
        g_autoptr(Topology) t = topology_new_uniform(3, 1, 1, 8 * GiB, dist);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned far[] = {0, 2}, near[] = {0, 1};
        g_autoptr(Plan) current = plan_on(t, "vm", 2, far);
        g_autoptr(Plan) candidate = plan_on(t, "vm", 2, near);
        g_autofree char *why = NULL;

        ck_assert_int_eq(ledger_commit(l, "vm", plan_copy(current)), 0);
        ck_assert(policy_improves(t, l, current, candidate, &why));
        ck_assert_str_eq(why, "mean node distance 20.00, now 11.00");
        ck_assert(!policy_improves(t, l, candidate, candidate, &why));
}
END_TEST

START_TEST(test_never_worse_or_different)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        unsigned zero = 0, one = 1, both[] = {0, 1};
        g_autoptr(Plan) b = plan_on(t, "b", 1, &zero);
        g_autoptr(Plan) unplaceable = plan_on(t, "b", 1, &one);
        g_autoptr(Plan) bigger = plan_on(t, "b", 2, both);
        g_autofree char *why = NULL;

        ck_assert_int_eq(ledger_commit(l, "a", plan_on(t, "a", 1, &zero)), 0);
        ck_assert_int_eq(ledger_commit(l, "b", plan_copy(b)), 0);
        unplaceable->result = PLAN_UNPLACEABLE;
        ck_assert(!policy_improves(t, l, b, unplaceable, &why));
        ck_assert(!policy_improves(t, l, b, bigger, &why));
        ck_assert_ptr_null(why);
}
END_TEST

static Suite *rebalance_suite(void)
{
        Suite *s = suite_create("rebalance");
        TCase *tc = tcase_create("improves");
        tcase_add_test(tc, test_fewer_shared_cores);
        tcase_add_test(tc, test_fewer_nodes);
        tcase_add_test(tc, test_fewer_nodes_memory_stays);
        tcase_add_test(tc, test_fewer_nodes_vcpus_move);
        tcase_add_test(tc, test_nearer_vcpu_nodes_memory_stays);
        tcase_add_test(tc, test_nearer_nodes);
        tcase_add_test(tc, test_never_worse_or_different);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(rebalance_suite)
