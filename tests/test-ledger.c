/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "test-util.h"
#include "test-policy-util.h"

START_TEST(test_commit_release_exact)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        const Plan *a = test_place(t, l, &p, "a", 3, 2 * GiB);
        ck_assert_int_eq(a->result, PLAN_PLACED);
        ck_assert_uint_eq(ledger_count(l), 1);
        ck_assert(!ledger_is_empty(l));
        ck_assert_uint_eq(ledger_node_memory(l, 0) + ledger_node_memory(l, 1), 2 * GiB);
        for (unsigned i = 0; i < a->nvcpus; i++) {
                unsigned core = t->pus[a->vcpu_pu[i]].core;
                ck_assert(!ledger_core_free(l, core));
                ck_assert_uint_eq(ledger_pu_load(l, (unsigned)a->vcpu_pu[i]), 1);
        }
        test_place(t, l, &p, "b", 2, 1 * GiB);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        ck_assert_int_eq(ledger_release(l, "a"), -ENOENT);
        ck_assert_int_eq(ledger_release(l, "b"), 0);
        ck_assert(ledger_is_empty(l));
        ck_assert_uint_eq(ledger_count(l), 0);
}
END_TEST

START_TEST(test_duplicate_and_foreign)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, GiB, NULL);
        g_autoptr(Topology) big = topology_new_uniform(2, 2, 1, GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "x", .vcpus = 1, .memory = 1};

        test_place(t, l, &p, "x", 1, 1);
        ck_assert_int_eq(ledger_commit(l, "x", policy_place(t, l, &req, &p)), -EEXIST);
        /* a plan made for another topology is refused */
        g_autoptr(Ledger) other = ledger_new(big);
        ck_assert_int_eq(ledger_commit(l, "y", policy_place(big, other, &req, &p)), -EINVAL);
        ck_assert_uint_eq(ledger_count(l), 1);
}
END_TEST

START_TEST(test_release_restores_placement)
{
        /* A later plan sees the host as if the released domain never ran. */
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "probe", .vcpus = 6, .memory = 3 * GiB};
        g_autoptr(Plan) before = policy_place(t, l, &req, &p);

        test_place(t, l, &p, "a", 4, 4 * GiB);
        test_place(t, l, &p, "b", 8, 8 * GiB);
        ledger_release(l, "a");
        ledger_release(l, "b");
        g_autoptr(Plan) after = policy_place(t, l, &req, &p);
        ck_assert(cpuset_equal(before->nodes, after->nodes));
        for (unsigned i = 0; i < req.vcpus; i++)
                ck_assert_int_eq(before->vcpu_pu[i], after->vcpu_pu[i]);
}
END_TEST

START_TEST(test_keys_sorted)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        test_place(t, l, &p, "zeta", 1, 1);
        test_place(t, l, &p, "alpha", 1, 1);
        g_autoptr(GPtrArray) keys = ledger_keys(l);
        ck_assert_uint_eq(keys->len, 2);
        ck_assert_str_eq(g_ptr_array_index(keys, 0), "alpha");
        ck_assert_str_eq(g_ptr_array_index(keys, 1), "zeta");
}
END_TEST

/* The counts of two ledgers on t agree PU by PU and node by node. */
static void assert_same_counts(const Topology *t, const Ledger *a, const Ledger *b)
{
        for (unsigned pu = 0; pu < t->npus; pu++)
                ck_assert_uint_eq(ledger_pu_load(a, pu), ledger_pu_load(b, pu));
        for (unsigned c = 0; c < t->ncores; c++) {
                ck_assert_uint_eq(ledger_core_load(a, c), ledger_core_load(b, c));
                ck_assert_uint_eq(ledger_core_domains(a, c), ledger_core_domains(b, c));
        }
        for (unsigned n = 0; n < t->nnodes; n++)
                ck_assert_uint_eq(ledger_node_memory(a, n), ledger_node_memory(b, n));
        ck_assert_uint_eq(ledger_count(a), ledger_count(b));
}

static void count_one(const char *key, const Plan *p, void *userdata)
{
        (void)key;
        (void)p;
        (*(unsigned *)userdata)++;
}

/* A ledger over another: the same host to start with; releases, commits and a domain released and
 * committed again there change its counts and lookups, never the base's; a plain ledger that makes the
 * same changes agrees with it count for count. */
START_TEST(test_over_leaves_base)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) base = ledger_new(t);
        g_autoptr(Ledger) twin = ledger_new(t);
        g_autoptr(Ledger) over = NULL;
        g_autoptr(GPtrArray) keys = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *a;
        Plan *moved;
        unsigned n = 0;

        test_place(t, base, &p, "a", 3, 2 * GiB);
        test_place(t, base, &p, "b", 4, GiB);
        test_place(t, twin, &p, "a", 3, 2 * GiB);
        test_place(t, twin, &p, "b", 4, GiB);
        over = ledger_new_over(base);
        assert_same_counts(t, over, base);
        a = ledger_lookup(base, "a");
        ck_assert_ptr_eq(ledger_lookup(over, "a"), a); /* looked up in base, not copied */
        ck_assert_int_eq(ledger_commit(over, "a", plan_copy(a)), -EEXIST);

        /* a moves: released, then committed again on other PUs; c arrives; b leaves */
        moved = plan_copy(a);
        for (unsigned i = 0; i < moved->nvcpus; i++)
                moved->vcpu_pu[i] = (int)t->npus - 1 - (int)i;
        ck_assert_int_eq(ledger_release(over, "a"), 0);
        ck_assert_ptr_null(ledger_lookup(over, "a"));
        ck_assert_int_eq(ledger_release(over, "a"), -ENOENT);
        ck_assert_int_eq(ledger_commit(over, "a", plan_copy(moved)), 0);
        ck_assert_int_eq(ledger_release(twin, "a"), 0);
        ck_assert_int_eq(ledger_commit(twin, "a", moved), 0);
        test_place(t, over, &p, "c", 2, GiB);
        test_place(t, twin, &p, "c", 2, GiB);
        ck_assert_int_eq(ledger_release(over, "b"), 0);
        ck_assert_int_eq(ledger_release(twin, "b"), 0);
        assert_same_counts(t, over, twin);
        ck_assert_uint_eq(ledger_count(over), 2);
        ledger_foreach(over, count_one, &n);
        ck_assert_uint_eq(n, 2);
        keys = ledger_keys(over);
        ck_assert_uint_eq(keys->len, 2);
        ck_assert_str_eq(g_ptr_array_index(keys, 0), "a");
        ck_assert_str_eq(g_ptr_array_index(keys, 1), "c");
        ck_assert_int_eq(ledger_lookup(over, "a")->vcpu_pu[0], (int)t->npus - 1);

        /* the base is as it was */
        ck_assert_ptr_eq(ledger_lookup(base, "a"), a);
        ck_assert_ptr_nonnull(ledger_lookup(base, "b"));
        ck_assert_ptr_null(ledger_lookup(base, "c"));
        ck_assert_uint_eq(ledger_count(base), 2);
        g_clear_pointer(&over, ledger_free);
        g_clear_pointer(&twin, ledger_free);
        twin = ledger_new(t);
        test_place(t, twin, &p, "a", 3, 2 * GiB);
        test_place(t, twin, &p, "b", 4, GiB);
        assert_same_counts(t, base, twin);
}
END_TEST

/* A plan's vCPUs on chosen PUs of t (-1: none). */
static Plan *plan_on(const Topology *t, const char *name, const int *pus, unsigned n)
{
        Plan *p = plan_new(name, n, GiB, t->nnodes);

        for (unsigned i = 0; i < n; i++)
                p->vcpu_pu[i] = pus[i];
        return p;
}

/* Domains counted per core: a domain with two vCPUs on one core counts once there, a vCPU without a PU
 * nowhere; a release takes back exactly its own, and a ledger over another starts from its counts. */
START_TEST(test_core_domains)
{
        g_autoptr(Topology) t =
            topology_new_uniform(1, 3, 2, 8 * GiB, NULL); /* cores 0-2: PUs 0-1, 2-3, 4-5 */
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Ledger) over = NULL;
        const int a[] = {0, 1, 2}, b[] = {0, -1}, c[] = {3};

        ck_assert_int_eq(ledger_commit(l, "a", plan_on(t, "a", a, 3)), 0);
        ck_assert_uint_eq(ledger_core_load(l, 0), 2);
        ck_assert_uint_eq(ledger_core_domains(l, 0), 1);
        ck_assert_uint_eq(ledger_core_domains(l, 1), 1);
        ck_assert_int_eq(ledger_commit(l, "b", plan_on(t, "b", b, 2)), 0);
        ck_assert_uint_eq(ledger_core_load(l, 0), 3);
        ck_assert_uint_eq(ledger_core_domains(l, 0), 2);
        ck_assert_uint_eq(ledger_core_domains(l, 2), 0);
        over = ledger_new_over(l);
        ck_assert_int_eq(ledger_commit(over, "c", plan_on(t, "c", c, 1)), 0);
        ck_assert_uint_eq(ledger_core_domains(over, 1), 2);
        ck_assert_uint_eq(ledger_core_domains(l, 1), 1);
        ck_assert_int_eq(ledger_release(over, "a"), 0);
        ck_assert_uint_eq(ledger_core_domains(over, 0), 1);
        ck_assert_uint_eq(ledger_core_domains(over, 1), 1);
        ck_assert_uint_eq(ledger_core_domains(l, 0), 2);
        g_clear_pointer(&over, ledger_free); /* the base may change once nothing is over it */
        ck_assert_int_eq(ledger_release(l, "b"), 0);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        for (unsigned core = 0; core < t->ncores; core++)
                ck_assert_uint_eq(ledger_core_domains(l, core), 0);
}
END_TEST

/* Hand-bound domains of 4 EiB (the test driver runs them): the node's held memory sums past 2^64. It
 * reads as full, not as the few bytes left after a wrap, and every release takes back what it added. */
START_TEST(test_memory_sums_never_wrap)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const uint64_t huge = UINT64_C(1) << 62;
        const Plan *small;

        for (unsigned i = 0; i < 4; i++) {
                g_autofree char *key = g_strdup_printf("huge%u", i);
                Plan *h = plan_new(key, 1, huge, t->nnodes);
                h->node_memory[0] = huge;
                ck_assert_int_eq(ledger_commit(l, key, h), 0);
        }
        ck_assert_uint_eq(ledger_node_memory(l, 0), UINT64_MAX);
        small = test_place(t, l, &p, "small", 1, GiB);
        ck_assert_int_eq(small->result, PLAN_PLACED);
        ck_assert_uint_eq(small->node_memory[0], 0);
        ck_assert_uint_eq(small->node_memory[1], GiB);
        ck_assert_int_eq(ledger_release(l, "huge0"), 0);
        ck_assert_uint_eq(ledger_node_memory(l, 0), 3 * huge);
        for (unsigned i = 1; i < 4; i++) {
                g_autofree char *key = g_strdup_printf("huge%u", i);
                ck_assert_int_eq(ledger_release(l, key), 0);
        }
        ck_assert_int_eq(ledger_release(l, "small"), 0);
        ck_assert(ledger_is_empty(l));
}
END_TEST

static Suite *ledger_suite(void)
{
        Suite *s = suite_create("ledger");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_commit_release_exact);
        tcase_add_test(tc, test_duplicate_and_foreign);
        tcase_add_test(tc, test_release_restores_placement);
        tcase_add_test(tc, test_keys_sorted);
        tcase_add_test(tc, test_over_leaves_base);
        tcase_add_test(tc, test_core_domains);
        tcase_add_test(tc, test_memory_sums_never_wrap);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(ledger_suite)
