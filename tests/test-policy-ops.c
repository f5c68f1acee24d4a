/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PolicyOps table is open: a third policy is one PolicyOps (here a test-only one) and the driver, the
 * set search, overcommit and finishing follow it without knowing which policy runs.
 */
#include "test-util.h"
#include "test-policy-util.h"
#include "policy-internal.h"

#include <string.h>

/* "odd-reverse": only odd nodes offer room, a free thread each; vCPUs take the highest free PUs first. */
static unsigned odd_capacity(const HostView *v, unsigned node)
{
        return node % 2 ? v->node_free_pus[node] : 0;
}

static unsigned odd_size(const HostView *v, unsigned node)
{
        return v->node_usable_pus[node];
}

static void odd_assign(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        unsigned vcpu = 0;

        for (unsigned i = 0; i < n && vcpu < plan->nvcpus; i++) {
                const TopoNode *node = &v->t->nodes[nodes[i]];
                unsigned first = v->t->cores[node->core_first].pu_first;
                unsigned last = v->t->cores[node->core_first + node->ncores - 1].pu_first +
                                v->t->cores[node->core_first + node->ncores - 1].npus;
                for (unsigned p = last; p-- > first && vcpu < plan->nvcpus;)
                        if (v->pu_usable[p] && !ledger_pu_load(v->l, p))
                                plan->vcpu_pu[vcpu++] = (int)p;
        }
}

static const PolicyOps odd_ops = {
    .kind = POLICY_COMPAT,
    .unit = "free odd threads",
    .capacity = odd_capacity,
    .size = odd_size,
    .assign = odd_assign,
    .overcommit_by_core = false,
};

static Plan *place_odd(const Topology *t, const Ledger *l, unsigned vcpus, uint64_t memory)
{
        PlacementParams p = test_params(POLICY_COMPAT);
        PlacementRequest req = {.name = "vm", .vcpus = vcpus, .memory = memory};
        return policy_place_ops(&odd_ops, t, l, &req, &p);
}

START_TEST(test_third_policy_placed)
{
        /* 2 nodes x 4 cores x 2 threads: PUs 0-7 on node 0, 8-15 on node 1 */
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) plan = place_odd(t, l, 3, GiB);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert(cpuset_has(plan->nodes, 1) && cpuset_count(plan->nodes) == 1);
        ck_assert_int_eq(plan->vcpu_pu[0], 15);
        ck_assert_int_eq(plan->vcpu_pu[1], 14);
        ck_assert_int_eq(plan->vcpu_pu[2], 13);
        ck_assert_uint_eq(plan->shared_vcpus, 2); /* 14 and 15 are one core */
        ck_assert_ptr_nonnull(strstr(plan->reason, "node 1: 8 free odd threads for 3 vCPUs"));
        ck_assert_uint_eq(plan->node_memory[1], GiB);
}
END_TEST

START_TEST(test_third_policy_overcommitted)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) plan = place_odd(t, l, 10, GiB);

        /* node 1 offers 8: no set has room for 10, both nodes together hold a thread per vCPU */
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(cpuset_count(plan->nodes), 2);
        ck_assert_ptr_nonnull(strstr(plan->reason, "no node set has 10 free odd threads"));
        ck_assert_ptr_nonnull(strstr(plan->reason, "(8 free odd threads there)"));
        for (unsigned i = 0; i < plan->nvcpus; i++)
                ck_assert_int_ge(plan->vcpu_pu[i], 0);
}
END_TEST

START_TEST(test_table_rows)
{
        ck_assert_ptr_eq(policy_ops(POLICY_EXPLICIT), &policy_explicit_ops);
        ck_assert_ptr_eq(policy_ops(POLICY_COMPAT), &policy_compat_ops);
        ck_assert_ptr_eq(policy_ops(_POLICY_MAX), &policy_explicit_ops);
        for (PolicyKind k = POLICY_EXPLICIT; k < _POLICY_MAX; k++) {
                const PolicyOps *ops = policy_ops(k);
                ck_assert_int_eq(ops->kind, k);
                ck_assert(ops->unit && ops->capacity && ops->size && ops->assign);
        }
}
END_TEST

static Suite *policy_ops_suite(void)
{
        Suite *s = suite_create("policy: ops table");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_third_policy_placed);
        tcase_add_test(tc, test_third_policy_overcommitted);
        tcase_add_test(tc, test_table_rows);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(policy_ops_suite)
