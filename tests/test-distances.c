/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "distances.h"
#include "test-util.h"
#include "topology.h"

#define E TOPOLOGY_UNREACHABLE

START_TEST(test_missing)
{
        g_autofree uint32_t *d = NULL;
        g_autofree char *note = NULL;
        ck_assert_int_eq(distances_sanitize(3, NULL, NULL, &d, &note), DISTANCES_MISSING);
        ck_assert_uint_eq(d[0], 10);
        ck_assert_uint_eq(d[1], 20);
        ck_assert_uint_eq(d[4], 10);
        ck_assert_ptr_nonnull(note);
}
END_TEST

START_TEST(test_valid_kept)
{
        const uint32_t m[] = {10, 21, E, 21, 10, 31, E, 31, 10};
        g_autofree uint32_t *d = NULL;
        g_autofree char *note = NULL;
        ck_assert_int_eq(distances_sanitize(3, m, NULL, &d, &note), DISTANCES_OK);
        ck_assert_mem_eq(d, m, sizeof(m));
        ck_assert_ptr_null(note);
}
END_TEST

START_TEST(test_invalid)
{
        const uint32_t self12[] = {12, 20, 20, 10};
        const uint32_t below[] = {10, 5, 5, 10};
        const uint32_t zero[] = {10, 0, 0, 10};
        const uint32_t *cases[] = {self12, below, zero};
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree uint32_t *d = NULL;
                g_autofree char *note = NULL;
                ck_assert_int_eq(distances_sanitize(2, cases[i], NULL, &d, &note), DISTANCES_INVALID);
                ck_assert_uint_eq(d[0], 10);
                ck_assert_uint_eq(d[1], 20);
                ck_assert_ptr_nonnull(strstr(note, "invalid NUMA distance"));
        }
        {
                /* the note names the OS's node numbers (nodes 0, 2 and 16 here), not matrix indexes */
                const uint32_t m[] = {10, 20, 20, 20, 17, 20, 20, 20, 10};
                const unsigned os[] = {0, 2, 16};
                g_autofree uint32_t *d = NULL;
                g_autofree char *note = NULL;
                ck_assert_int_eq(distances_sanitize(3, m, os, &d, &note), DISTANCES_INVALID);
                ck_assert_msg(strstr(note, "invalid NUMA distance 17 from node 2 to node 2"), "%s", note);
        }
}
END_TEST

START_TEST(test_flat)
{
        const uint32_t m[] = {E, E, E, E};
        g_autofree uint32_t *d = NULL;
        g_autofree char *note = NULL;
        ck_assert_int_eq(distances_sanitize(2, m, NULL, &d, &note), DISTANCES_FLAT);
        ck_assert_uint_eq(d[1], 10);
        ck_assert_ptr_nonnull(note);
}
END_TEST

START_TEST(test_assume_packages)
{
        /* nodes 0-1 on package 0, nodes 2-3 on package 1: 11 inside a package, 20 across */
        g_autoptr(CpuSet) a = cpuset_new();
        g_autoptr(CpuSet) b = cpuset_new();
        TopoPackage packages[2] = {{.os_index = 0, .nodes = a}, {.os_index = 1, .nodes = b}};
        g_autofree uint32_t *d = NULL;

        cpuset_add(a, 0);
        cpuset_add(a, 1);
        cpuset_add(b, 2);
        cpuset_add(b, 3);
        ck_assert_int_eq(distances_sanitize(4, NULL, NULL, &d, NULL), DISTANCES_MISSING);
        ck_assert_uint_eq(distances_assume_packages(4, d, packages, 2), 4);
        for (unsigned i = 0; i < 4; i++)
                for (unsigned j = 0; j < 4; j++)
                        ck_assert_uint_eq(d[i * 4 + j], i == j ? 10 : i / 2 == j / 2 ? 11 : 20);
        /* one node per package: nothing to assume */
        cpuset_remove(a, 1);
        cpuset_remove(b, 3);
        g_clear_pointer(&d, g_free);
        distances_sanitize(4, NULL, NULL, &d, NULL);
        ck_assert_uint_eq(distances_assume_packages(4, d, packages, 2), 0);
        ck_assert_uint_eq(d[1], 20);
}
END_TEST

static Suite *distances_suite(void)
{
        Suite *s = suite_create("distances");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_missing);
        tcase_add_test(tc, test_valid_kept);
        tcase_add_test(tc, test_invalid);
        tcase_add_test(tc, test_flat);
        tcase_add_test(tc, test_assume_packages);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(distances_suite)
