/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "test-util.h"
#include "trace.h"

START_TEST(test_parse)
{
        g_autoptr(GPtrArray) ev = NULL;
        g_autofree char *err = NULL;
        ck_assert_int_eq(
            trace_parse("# a trace\n\nstart web1 4 4G\n  start db\t8 16384M\nstop web1\n", "t", &ev, &err),
            0);
        ck_assert_uint_eq(ev->len, 3);
        TraceEvent *e = g_ptr_array_index(ev, 1);
        ck_assert_int_eq(e->op, TRACE_START);
        ck_assert_str_eq(e->name, "db");
        ck_assert_uint_eq(e->vcpus, 8);
        ck_assert_uint_eq(e->memory, UINT64_C(16) << 30);
        ck_assert_uint_eq(e->line, 4);
        e = g_ptr_array_index(ev, 2);
        ck_assert_int_eq(e->op, TRACE_STOP);
        ck_assert_uint_eq(e->line, 5);
}
END_TEST

START_TEST(test_errors_name_line)
{
        static const struct {
                const char *text, *needle;
        } cases[] = {
            {"start a 4\n", "t:1: expected 'start NAME VCPUS MEMORY'"},
            {"\nstart a x 4G\n", "t:2: vCPU count"},
            {"start a 4 4Q\n", "t:1: memory"},
            {"stop\n", "t:1: expected 'stop NAME'"},
            {"launch a 1 1G\n", "t:1: unknown event"},
            {"start a -1 1G\n", "vCPU count"},
            {"start a 99999999999 1G\n", "vCPU count"},
            {"start a 1 99999999999T\n", "memory"},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(GPtrArray) ev = NULL;
                g_autofree char *err = NULL;
                ck_assert_int_eq(trace_parse(cases[i].text, "t", &ev, &err), -EINVAL);
                ck_assert_msg(strstr(err, cases[i].needle), "'%s' gave '%s'", cases[i].text, err);
        }
}
END_TEST

START_TEST(test_spec)
{
        TraceEvent *e = NULL;
        g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;
        ck_assert_int_eq(trace_parse_spec("web:4:512M", &e, &err), 0);
        ck_assert_str_eq(e->name, "web");
        ck_assert_uint_eq(e->vcpus, 4);
        ck_assert_uint_eq(e->memory, UINT64_C(512) << 20);
        trace_event_free(e);
        ck_assert_int_eq(trace_parse_spec("web:4", &e, &err2), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err2, "NAME:VCPUS:MEMORY"));
        ck_assert_int_eq(trace_parse_spec(":4:1G", &e, &err3), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err3, "empty domain name"));
}
END_TEST

START_TEST(test_load_file)
{
        g_autofree char *dir = g_dir_make_tmp("test-trace-XXXXXX", NULL);
        g_autofree char *ok = g_build_filename(dir, "ok.trace", NULL);
        g_autofree char *nul = g_build_filename(dir, "nul.trace", NULL);
        g_autofree char *fifo = g_build_filename(dir, "fifo.trace", NULL);
        static const char with_nul[] = "start a 1 1G\nstart b 1 1G\0\nstart c 1 1G\n";
        static const struct {
                const char *path, *needle;
                int r;
        } bad[] = {{"/dev/zero", "a character device", -EINVAL}, {"/nonexistent", "No such file", -ENOENT}};
        g_autoptr(GPtrArray) ev = NULL;
        g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;

        ck_assert(g_file_set_contents(ok, "start a 1 1G\nstop a\n", -1, NULL));
        ck_assert(g_file_set_contents(nul, with_nul, sizeof(with_nul) - 1, NULL));
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(trace_load_file(ok, &ev, &err), 0);
        ck_assert_uint_eq(ev->len, 2);
        ck_assert_int_eq(trace_load_file(nul, &ev, &err2), -EINVAL);
        ck_assert_msg(strstr(err2, nul) && strstr(err2, "a NUL byte on line 2"), "%s", err2);
        ck_assert_int_eq(trace_load_file(fifo, &ev, &err3), -EINVAL);
        ck_assert_msg(strstr(err3, "a FIFO, not a regular file"), "%s", err3);
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *e = NULL;
                ck_assert_int_eq(trace_load_file(bad[i].path, &ev, &e), bad[i].r);
                ck_assert_msg(strstr(e, bad[i].needle), "%s", e);
        }
        g_unlink(ok);
        g_unlink(nul);
        g_unlink(fifo);
        g_rmdir(dir);
}
END_TEST

static Suite *trace_suite(void)
{
        Suite *s = suite_create("trace");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_errors_name_line);
        tcase_add_test(tc, test_spec);
        tcase_add_test(tc, test_load_file);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(trace_suite)
