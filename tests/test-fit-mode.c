/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [Placement] Fit=spread|pack: which qualifying set of the nearest group a domain takes. */
#include "test-util.h"
#include "test-policy-util.h"

#include "decision-text.h"

static PlacementParams params_fit(FitMode fit)
{
        PlacementParams p = test_params(POLICY_EXPLICIT);
        p.fit = fit;
        return p;
}

/* The node index holding plan's vCPUs (its only node). */
static unsigned only_node(const Plan *plan)
{
        ck_assert_uint_eq(test_plan_node_count(plan), 1);
        return (unsigned)cpuset_next(plan->nodes, 0);
}

/* Eight 1-vCPU domains on 2 nodes of 4 cores: spread alternates and leaves a 2+2 hole that a 4-vCPU
 * domain must span; pack fills node 0 first and the 4-vCPU domain gets node 1 whole. */
START_TEST(test_pack_keeps_big_holes)
{
        for (unsigned f = 0; f < _FIT_MAX; f++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = params_fit((FitMode)f);
                const Plan *big;

                for (unsigned i = 0; i < 4; i++) {
                        g_autofree char *name = g_strdup_printf("small%u", i);
                        const Plan *plan = test_place(t, l, &p, name, 1, 1 * GiB);
                        ck_assert_int_eq(plan->result, PLAN_PLACED);
                        ck_assert_uint_eq(only_node(plan), f == FIT_PACK ? 0 : i % 2);
                }
                big = test_place(t, l, &p, "big", 4, 4 * GiB);
                ck_assert_int_eq(big->result, PLAN_PLACED);
                ck_assert_uint_eq(test_plan_node_count(big), f == FIT_PACK ? 1 : 2);
                if (f == FIT_PACK)
                        ck_assert_msg(strstr(big->reason, "nearest qualifying set"), "%s", big->reason);
        }
}
END_TEST

/* Pack takes the fullest set that qualifies, not the fullest set: with 1 and 3 free cores, a 2-vCPU
 * domain goes to the node with 3 (the only one that holds it alone), a 1-vCPU domain to the node with 1. */
START_TEST(test_pack_fullest_qualifying)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams spread = params_fit(FIT_SPREAD), pack = params_fit(FIT_PACK);
        const Plan *plan;

        /* node 0: 3 cores busy, node 1: 1 core busy (spread puts 3 on node 0 then 1 on node 1) */
        ck_assert_uint_eq(only_node(test_place(t, l, &spread, "a", 3, 4 * GiB)), 0);
        ck_assert_uint_eq(only_node(test_place(t, l, &spread, "b", 1, 1 * GiB)), 1);

        plan = test_place(t, l, &pack, "two", 2, 1 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(only_node(plan), 1);

        /* 1 free core on each node now; node 0 has less free memory (12 GiB against 14): pack takes it */
        plan = test_place(t, l, &pack, "one", 1, 1 * GiB);
        ck_assert_uint_eq(only_node(plan), 0);
        ck_assert_uint_eq(plan->shared_vcpus, 0);
        ck_assert_msg(strstr(plan->reason, "fullest of its equally near sets (Fit=pack)"), "%s",
                      plan->reason);
}
END_TEST

/* explain's rule line says what Fit= took: under pack it read "the one with most free cores, then most
 * free memory", the opposite of what chose the set. */
START_TEST(test_explain_rule_follows_fit)
{
        for (unsigned f = 0; f < _FIT_MAX; f++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = params_fit((FitMode)f);
                g_autofree char *text = NULL;
                const Plan *plan;

                test_place(t, l, &p, "a", 1, 1 * GiB);
                plan = test_place(t, l, &p, "b", 1, 1 * GiB);
                ck_assert_uint_eq(only_node(plan), f == FIT_PACK ? 0 : 1);
                text = plan_explain(t, plan);
                ck_assert_msg(strstr(text, f == FIT_PACK
                                               ? "the fullest of them (Fit=pack): fewest free cores, "
                                                 "then least free memory"
                                               : "the one with most free cores, then most free memory"),
                              "%s", text);
                if (f == FIT_PACK)
                        ck_assert_msg(!strstr(text, "most free cores"), "%s", text);
        }
}
END_TEST

/* Spread is what it was: the least loaded set of the group, and the reason says so. */
START_TEST(test_spread_unchanged)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams spread = params_fit(FIT_SPREAD);
        const Plan *plan;

        ck_assert_uint_eq(only_node(test_place(t, l, &spread, "a", 3, 1 * GiB)), 0);
        plan = test_place(t, l, &spread, "b", 1, 1 * GiB);
        ck_assert_uint_eq(only_node(plan), 1);
        ck_assert_msg(strstr(plan->reason, "least loaded of its equally near sets"), "%s", plan->reason);
        ck_assert_int_eq(spread.fit, FIT_SPREAD); /* the zero value is spread */
}
END_TEST

static Suite *fit_mode_suite(void)
{
        Suite *s = suite_create("fit mode");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_pack_keeps_big_holes);
        tcase_add_test(tc, test_pack_fullest_qualifying);
        tcase_add_test(tc, test_spread_unchanged);
        tcase_add_test(tc, test_explain_rule_follows_fit);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(fit_mode_suite)
