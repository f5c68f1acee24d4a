/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Emulator pins that follow arrivals (policies/emulator-follow.h). */
#include "test-util.h"
#include "emulator-follow.h"
#include "test-policy-util.h"

static void assert_pin(const CpuSet *s, const char *want)
{
        g_autofree char *got = cpuset_format(s);
        ck_assert_str_eq(got, want);
}

/* Without SMT the emulator gets the node's free cores; arrivals take them one domain after another */
START_TEST(test_narrowed_as_cores_are_taken)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *a = test_place(t, l, &p, "a", 2, GiB);
        g_autoptr(Plan) after_b = NULL;
        g_autoptr(Plan) after_c = NULL;

        assert_pin(a->emulator_pin, "2-7");                     /* the cores of its node that hold no vCPU */
        ck_assert_ptr_null(policy_emulator_follow(t, l, a, 0)); /* nobody else there yet */
        test_place(t, l, &p, "b", 2, GiB);
        after_b = policy_emulator_follow(t, l, a, 0);
        ck_assert_ptr_nonnull(after_b);
        assert_pin(after_b->emulator_pin, "4-7");
        /* only the emulator: its vCPUs and memory stay */
        ck_assert_int_eq(after_b->vcpu_pu[0], a->vcpu_pu[0]);
        ck_assert_int_eq(after_b->vcpu_pu[1], a->vcpu_pu[1]);
        ck_assert(cpuset_equal(after_b->nodes, a->nodes));
        ck_assert_uint_eq(after_b->node_memory[0], a->node_memory[0]);
        /* host-side threads that keep more cores busy than would be left: kept as it is */
        ck_assert_ptr_null(policy_emulator_follow(t, l, a, 4.5));
        ck_assert_ptr_nonnull(policy_emulator_follow(t, l, a, 4.0));
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        ck_assert_int_eq(ledger_commit(l, "a", g_steal_pointer(&after_b)), 0);
        a = ledger_lookup(l, "a");
        test_place(t, l, &p, "c", 2, GiB);
        after_c = policy_emulator_follow(t, l, a, 0.3);
        ck_assert_ptr_nonnull(after_c);
        assert_pin(after_c->emulator_pin, "6-7");
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        ck_assert_int_eq(ledger_commit(l, "a", g_steal_pointer(&after_c)), 0);
        a = ledger_lookup(l, "a");
        /* the last free cores taken: nothing would be left, the pin stays */
        test_place(t, l, &p, "d", 2, GiB);
        ck_assert_ptr_null(policy_emulator_follow(t, l, a, 0));
}
END_TEST

/* The I/O threads pinned with the emulator follow with it; ones pinned elsewhere stay */
START_TEST(test_iothreads_with_it)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *a = test_place(t, l, &p, "a", 2, GiB);
        g_autoptr(Plan) own = plan_copy(a);
        g_autoptr(Plan) with = NULL;
        g_autoptr(Plan) apart = NULL;

        cpuset_add(own->iothreads, 1);
        cpuset_union(own->iothread_pin, own->emulator_pin);
        test_place(t, l, &p, "b", 2, GiB);
        with = policy_emulator_follow(t, l, own, 0);
        ck_assert_ptr_nonnull(with);
        assert_pin(with->iothread_pin, "4-7");
        cpuset_clear(own->iothread_pin);
        cpuset_add(own->iothread_pin, 2);
        apart = policy_emulator_follow(t, l, own, 0);
        ck_assert_ptr_nonnull(apart);
        assert_pin(apart->emulator_pin, "4-7");
        assert_pin(apart->iothread_pin, "2");
}
END_TEST

/* With SMT the emulator takes its own cores' idle siblings: no arrival takes those under explicit */
START_TEST(test_siblings_stay)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *a = test_place(t, l, &p, "a", 2, GiB);
        g_autoptr(CpuSet) was = cpuset_copy(a->emulator_pin);

        for (unsigned i = 0; i < 3; i++) {
                char name[8];
                g_snprintf(name, sizeof(name), "b%u", i);
                test_place(t, l, &p, name, 2, GiB);
        }
        ck_assert(cpuset_equal(a->emulator_pin, was));
        ck_assert_ptr_null(policy_emulator_follow(t, l, a, 0));
}
END_TEST

/* A plan that pins nothing is left alone */
START_TEST(test_nothing_pinned)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) adopted = plan_copy(test_place(t, l, &p, "a", 2, GiB));

        test_place(t, l, &p, "b", 2, GiB);
        adopted->result = PLAN_ADOPTED;
        ck_assert_ptr_null(policy_emulator_follow(t, l, adopted, 0));
        adopted->result = PLAN_PLACED;
        cpuset_clear(adopted->emulator_pin);
        ck_assert_ptr_null(policy_emulator_follow(t, l, adopted, 0));
}
END_TEST

static Suite *follow_suite(void)
{
        Suite *s = suite_create("emulator follow");
        TCase *tc = tcase_create("follow");
        tcase_add_test(tc, test_narrowed_as_cores_are_taken);
        tcase_add_test(tc, test_iothreads_with_it);
        tcase_add_test(tc, test_siblings_stay);
        tcase_add_test(tc, test_nothing_pinned);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(follow_suite)
