/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "cpuset.h"
#include "test-util.h"

static char *roundtrip(const char *in)
{
        g_autoptr(CpuSet) s = NULL;
        g_autofree char *err = NULL;
        ck_assert_int_eq(cpuset_parse(in, &s, &err), 0);
        return cpuset_format(s);
}

START_TEST(test_parse_format)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"", ""},
            {"0", "0"},
            {"0-3", "0-3"},
            {"0-3,8", "0-3,8"},
            {"0-3,^2", "0-1,3"},
            {"3,1,2", "1-3"},
            {" 0 - 1", "0-1"},
            {"0-1, 4", "0-1,4"},
            {"8192", "8192"},
            {"0,0,0", "0"},
            {"0-7,^0,^7", "1-6"},
            {"63-65", "63-65"},
            /* as libvirt reads an attribute: any white space around items and dashes, a trailing comma */
            {"0-3,\n5 - 6,", "0-3,5-6"},
            {"\t1\r\n", "1"},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(CpuSet) s = NULL;
                int r = cpuset_parse(cases[i].in, &s, NULL);
                if (!cases[i].out) {
                        ck_assert_int_lt(r, 0);
                        continue;
                }
                ck_assert_msg(r == 0, "parse '%s' failed", cases[i].in);
                g_autofree char *out = cpuset_format(s);
                ck_assert_str_eq(out, cases[i].out);
        }
}
END_TEST

START_TEST(test_errors)
{
        static const char *const bad[] = {"a",   "1-",   "-1",    "3-1",  "1,,2",
                                          "1;2", "^1-3", "1-2-3", "0x10", ","};
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autoptr(CpuSet) s = NULL;
                g_autofree char *err = NULL;
                ck_assert_msg(cpuset_parse(bad[i], &s, &err) == -EINVAL, "'%s' accepted", bad[i]);
                ck_assert_ptr_nonnull(err);
                ck_assert_ptr_null(s);
        }
        {
                g_autoptr(CpuSet) s = NULL;
                g_autofree char *err = NULL;
                ck_assert_int_eq(cpuset_parse("0-99999999999", &s, &err), -ERANGE);
                ck_assert_ptr_nonnull(strstr(err, "8192"));
        }
}
END_TEST

/* Ranges are filled a word at a time: every edge of a 64-bit word, and a list as long as allowed. */
START_TEST(test_ranges_and_length)
{
        static const struct {
                const char *in;
                unsigned count, first, last;
        } cases[] = {
            {"0-63", 64, 0, 63},       {"0-64", 65, 0, 64},      {"63-64", 2, 63, 64},
            {"1-62", 62, 1, 62},       {"64-127", 64, 64, 127},  {"5-200,^100", 195, 5, 200},
            {"0-8192", 8193, 0, 8192}, {"127-128,0", 3, 0, 128}, {"8191-8192", 2, 8191, 8192},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(CpuSet) s = NULL;
                int last = -1;
                ck_assert_msg(cpuset_parse(cases[i].in, &s, NULL) == 0, "'%s' refused", cases[i].in);
                ck_assert_uint_eq(cpuset_count(s), cases[i].count);
                ck_assert_int_eq(cpuset_next(s, 0), (int)cases[i].first);
                CPUSET_FOREACH (n, s)
                        last = n;
                ck_assert_int_eq(last, (int)cases[i].last);
                ck_assert(!cpuset_has(s, cases[i].first ? cases[i].first - 1 : cases[i].last + 1));
        }
        {
                g_autoptr(GString) text = g_string_new(NULL);
                g_autoptr(CpuSet) s = NULL;
                g_autofree char *err = NULL;
                while (text->len + 7 <= CPUSET_MAX_TEXT)
                        g_string_append(text, "0-8192,");
                g_string_append(text, "1");
                ck_assert_int_eq(cpuset_parse(text->str, &s, NULL), 0);
                ck_assert_uint_eq(cpuset_count(s), 8193);
                g_clear_pointer(&s, cpuset_free);
                g_string_append(text, ",2");
                ck_assert_int_eq(cpuset_parse(text->str, &s, &err), -E2BIG);
                ck_assert_ptr_null(s);
                ck_assert_ptr_nonnull(strstr(err, "longer than 65536 characters"));
        }
}
END_TEST

/* A list of ids libvirt numbers past CPUSET_MAX (I/O threads): those above it left out, a range cut there,
 * and said; the syntax and a number past 32 bits still refused. */
START_TEST(test_parse_ids)
{
        static const struct {
                const char *in, *out;
                bool beyond;
        } cases[] = {
            {"1,9000", "1", true},         {"8190-16383", "8190-8192", true}, {"9000", "", true},
            {"1-3,^2,^9000", "1,3", true}, {"0-8192,^8192", "0-8191", false}, {"5", "5", false},
            {"4294967295", "", true},
        };
        static const char *const bad[] = {"4294967296", "1-x", "^1-9000"};
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(CpuSet) s = NULL;
                g_autofree char *out = NULL;
                bool beyond = !cases[i].beyond;
                ck_assert_msg(cpuset_parse_ids(cases[i].in, &s, &beyond, NULL) == 0, "'%s' refused",
                              cases[i].in);
                out = cpuset_format(s);
                ck_assert_msg(strcmp(out, cases[i].out) == 0, "'%s' read as '%s'", cases[i].in, out);
                ck_assert_msg(beyond == cases[i].beyond, "'%s'", cases[i].in);
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autoptr(CpuSet) s = NULL;
                g_autofree char *err = NULL;
                ck_assert_msg(cpuset_parse_ids(bad[i], &s, NULL, &err) < 0, "'%s' accepted", bad[i]);
                ck_assert_ptr_nonnull(err);
                ck_assert_ptr_null(s);
        }
}
END_TEST

START_TEST(test_operations)
{
        g_autoptr(CpuSet) a = cpuset_new();
        g_autoptr(CpuSet) b = cpuset_new();
        g_autofree char *text = NULL;

        ck_assert(cpuset_is_empty(a));
        cpuset_add(a, 1);
        cpuset_add(a, 200);
        cpuset_add(b, 200);
        ck_assert_uint_eq(cpuset_count(a), 2);
        ck_assert(cpuset_intersects(a, b));
        ck_assert(!cpuset_equal(a, b));
        cpuset_subtract(a, b);
        ck_assert(!cpuset_intersects(a, b));
        cpuset_union(a, b);
        text = cpuset_format(a);
        ck_assert_str_eq(text, "1,200");
        ck_assert_int_eq(cpuset_next(a, 2), 200);
        ck_assert_int_eq(cpuset_next(a, 201), -1);
        cpuset_remove(a, 5000); /* beyond the end: no effect, no crash */
        g_autoptr(CpuSet) c = cpuset_copy(a);
        ck_assert(cpuset_equal(a, c));
        cpuset_clear(c);
        ck_assert(cpuset_is_empty(c));
}
END_TEST

START_TEST(test_equal_sizes)
{
        g_autoptr(CpuSet) a = cpuset_new();
        g_autoptr(CpuSet) b = cpuset_new();
        cpuset_add(b, 300);
        cpuset_remove(b, 300);
        ck_assert(cpuset_equal(a, b));
        g_autofree char *s = roundtrip("0-3,8");
        ck_assert_str_eq(s, "0-3,8");
}
END_TEST

static Suite *cpuset_suite(void)
{
        Suite *s = suite_create("cpuset");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_parse_format);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_ranges_and_length);
        tcase_add_test(tc, test_parse_ids);
        tcase_add_test(tc, test_operations);
        tcase_add_test(tc, test_equal_sizes);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(cpuset_suite)
