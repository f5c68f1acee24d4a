/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Ranking of candidate node sets, with the published cases of the XenServer planner's tests. */
#include "distances.h"
#include "nodesets.h"
#include "test-util.h"
#include "topology.h"

#define E TOPOLOGY_UNREACHABLE

const uint32_t opteron[64] = {
    10, 16, 16, 22, 16, 22, 16, 22, /**/ 16, 10, 22, 16, 16, 22, 22, 16, /**/
    16, 22, 10, 16, 16, 16, 16, 16, /**/ 22, 16, 16, 10, 16, 16, 22, 22, /**/
    16, 16, 16, 16, 10, 16, 16, 22, /**/ 22, 22, 16, 16, 16, 10, 22, 16, /**/
    16, 22, 16, 22, 16, 22, 10, 16, /**/ 22, 16, 16, 22, 22, 16, 16, 10,
};

/* Rank of the set with exactly these members, or -1. */
static int rank_of(const NodeSetTable *t, const unsigned *nodes, unsigned n)
{
        for (unsigned r = 0; r < t->ncandidates; r++) {
                const NodeSet *s = &t->candidates[r];
                if (s->nnodes == n && memcmp(nodeset_members(t, s), nodes, n * sizeof(unsigned)) == 0)
                        return (int)r;
        }
        return -1;
}

START_TEST(test_opteron)
{
        NodeSetTable *t = nodeset_table_new(8, opteron, false);
        const unsigned a[] = {0, 1, 4}, b[] = {0, 1, 2};
        int ra = rank_of(t, a, 3), rb = rank_of(t, b, 3);

        ck_assert_uint_eq(t->ncandidates, 255);
        ck_assert(t->exhaustive);
        ck_assert_int_ge(ra, 0);
        ck_assert_int_ge(rb, 0);
        ck_assert_int_lt(ra, rb);
        ck_assert_uint_eq(t->candidates[ra].max_distance, 16);
        ck_assert_double_eq_tol(t->candidates[ra].mean_distance, 14.0, 1e-9);
        ck_assert_uint_eq(t->candidates[rb].max_distance, 22);
        /* singles first, all in one group */
        for (unsigned r = 0; r < 8; r++) {
                ck_assert_uint_eq(t->candidates[r].nnodes, 1);
                ck_assert_uint_eq(t->candidates[r].group, 0);
                ck_assert_uint_eq(nodeset_members(t, &t->candidates[r])[0], r);
        }
        /* ranking is sorted by (max, mean) */
        for (unsigned r = 1; r < t->ncandidates; r++) {
                const NodeSet *p = &t->candidates[r - 1], *s = &t->candidates[r];
                ck_assert(
                    p->max_distance < s->max_distance ||
                    (p->max_distance == s->max_distance && p->mean_distance <= s->mean_distance + 1e-3));
                ck_assert_uint_ge(s->group, p->group);
        }
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_unreachable_self)
{
        const uint32_t m[] = {10, E, E, E};
        NodeSetTable *t = nodeset_table_new(2, m, false);
        ck_assert_uint_eq(t->ncandidates, 1);
        ck_assert_uint_eq(nodeset_members(t, &t->candidates[0])[0], 0);
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_unreachable_middle)
{
        const uint32_t m[] = {10, E, 20, E, E, E, 20, E, 10};
        NodeSetTable *t = nodeset_table_new(3, m, false);
        const unsigned s0[] = {0}, s2[] = {2}, s02[] = {0, 2};

        ck_assert_uint_eq(t->ncandidates, 3);
        ck_assert_int_eq(rank_of(t, s0, 1), 0);
        ck_assert_int_eq(rank_of(t, s2, 1), 1);
        ck_assert_int_eq(rank_of(t, s02, 2), 2);
        ck_assert_double_eq_tol(t->candidates[2].mean_distance, 15.0, 1e-9);
        ck_assert_uint_eq(t->candidates[2].max_distance, 20);
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_all_unreachable_is_flat)
{
        const uint32_t m[] = {E, E, E, E};
        g_autofree uint32_t *d = NULL;
        DistanceVerdict v = distances_sanitize(2, m, NULL, &d, NULL);
        NodeSetTable *t = nodeset_table_new(2, d, v == DISTANCES_FLAT);

        ck_assert_int_eq(v, DISTANCES_FLAT);
        ck_assert_uint_eq(t->ncandidates, 1);
        ck_assert_uint_eq(t->candidates[0].nnodes, 2);
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_linear)
{
        uint32_t m[16];
        for (unsigned i = 0; i < 4; i++)
                for (unsigned j = 0; j < 4; j++)
                        m[i * 4 + j] = 10 + 11 * (i > j ? i - j : j - i);
        NodeSetTable *t = nodeset_table_new(4, m, false);
        const unsigned adj[] = {1, 2}, far[] = {0, 3};
        ck_assert_uint_eq(t->ncandidates, 15);
        ck_assert_int_lt(rank_of(t, adj, 2), rank_of(t, far, 2));
        /* pairs of neighbours share one group (max 21, mean 15.5) */
        const unsigned a01[] = {0, 1}, a23[] = {2, 3};
        ck_assert_uint_eq(t->candidates[rank_of(t, a01, 2)].group, t->candidates[rank_of(t, a23, 2)].group);
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_big_host_grows_sets)
{
        const unsigned n = 64;
        g_autofree uint32_t *m = g_new(uint32_t, n * n);
        unsigned multi = 0, full = 0;

        for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++)
                        m[i * n + j] = i == j ? 10 : (i / 8 == j / 8 ? 16 : 32);
        NodeSetTable *t = nodeset_table_new(n, m, false);
        ck_assert(!t->exhaustive);
        for (unsigned r = 0; r < t->ncandidates; r++) {
                multi += t->candidates[r].nnodes > 1;
                full += t->candidates[r].nnodes == n;
        }
        ck_assert_uint_gt(multi, n);
        ck_assert_uint_eq(full, 1);
        /* the 8 nodes of one socket form a set of max distance 16 */
        const unsigned sock[] = {0, 1, 2, 3, 4, 5, 6, 7};
        int r = rank_of(t, sock, 8);
        ck_assert_int_ge(r, 0);
        ck_assert_uint_eq(t->candidates[r].max_distance, 16);
        /* no duplicates: at most n sets of each size */
        ck_assert_uint_le(t->ncandidates, n * n);
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_grown_sets_cross_classes_from_the_seed)
{
        /* 24 nodes: pairs (13), groups of four (20), 40 across groups, as two EPYC sockets with an L3
         * per node. Sets that reach across a distance class take the nodes after their seed, not the
         * lowest ones: {4-8} and {12-19} are offered (every such set held nodes 0-3 before) */
        const unsigned n = 24;
        g_autofree uint32_t *m = g_new(uint32_t, n * n);

        for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++)
                        m[i * n + j] = i == j ? 10 : i / 2 == j / 2 ? 13 : i / 4 == j / 4 ? 20 : 40;
        NodeSetTable *t = nodeset_table_new(n, m, false);
        ck_assert(!t->exhaustive);
        const unsigned five[] = {4, 5, 6, 7, 8}, eight[] = {12, 13, 14, 15, 16, 17, 18, 19};
        ck_assert_int_ge(rank_of(t, five, 5), 0);
        ck_assert_int_ge(rank_of(t, eight, 8), 0);
        nodeset_table_free(t);
}
END_TEST

START_TEST(test_sixteen_nodes_exhaustive)
{
        const unsigned n = 16;
        g_autofree uint32_t *d = NULL;
        distances_sanitize(n, NULL, NULL, &d, NULL);
        NodeSetTable *t = nodeset_table_new(n, d, false);
        ck_assert(t->exhaustive);
        ck_assert_uint_eq(t->ncandidates, 65535);
        nodeset_table_free(t);
}
END_TEST

static Suite *nodesets_suite(void)
{
        Suite *s = suite_create("nodesets");
        TCase *tc = tcase_create("ranking");
        tcase_add_test(tc, test_opteron);
        tcase_add_test(tc, test_unreachable_self);
        tcase_add_test(tc, test_unreachable_middle);
        tcase_add_test(tc, test_all_unreachable_is_flat);
        tcase_add_test(tc, test_linear);
        tcase_add_test(tc, test_big_host_grows_sets);
        tcase_add_test(tc, test_grown_sets_cross_classes_from_the_seed);
        tcase_add_test(tc, test_sixteen_nodes_exhaustive);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(nodesets_suite)
