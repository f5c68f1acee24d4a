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
            {"start a 4\n", "t:1: expected 'start NAME VCPUS MEMORY [busy=F] [host=F]'"},
            {"\nstart a x 4G\n", "t:2: vCPU count"},
            {"start a 4 4Q\n", "t:1: memory"},
            {"stop\n", "t:1: expected 'stop NAME'"},
            {"launch a 1 1G\n", "t:1: unknown event"},
            {"start a -1 1G\n", "vCPU count"},
            {"start a 99999999999 1G\n", "vCPU count"},
            {"start a 1 99999999999T\n", "memory"},
            /* a domain has a vCPU, and no more than a libvirt definition holds (DOMAIN_XML_MAX_VCPUS) */
            {"start a 0 1G\n", "t:1: vCPU count must be a whole number from 1 to 16384"},
            {"start a 16385 1G\n", "t:1: vCPU count must be a whole number from 1 to 16384"},
            {"start a 4294967295 1G\n", "vCPU count"},
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
        g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL, *err4 = NULL, *err5 = NULL;
        ck_assert_int_eq(trace_parse_spec("web:4:512M", &e, &err), 0);
        ck_assert_str_eq(e->name, "web");
        ck_assert_uint_eq(e->vcpus, 4);
        ck_assert_uint_eq(e->memory, UINT64_C(512) << 20);
        trace_event_free(e);
        ck_assert_int_eq(trace_parse_spec("web:4", &e, &err2), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err2, "NAME:VCPUS:MEMORY"));
        ck_assert_int_eq(trace_parse_spec(":4:1G", &e, &err3), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err3, "empty domain name"));
        ck_assert_int_eq(trace_parse_spec("web:0:1G", &e, &err4), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err4, "from 1 to 16384"));
        {
                /* a domain of no memory is no domain (it was planned "for 0 B") */
                g_autofree char *err6 = NULL;
                ck_assert_int_eq(trace_parse_spec("web:2:0", &e, &err6), -EINVAL);
                ck_assert_ptr_nonnull(strstr(err6, "memory must be a size"));
        }
        /* more than a plan holds is the engine's to refuse, as the daemon does with such a definition */
        ck_assert_int_eq(trace_parse_spec("web:16384:1G", &e, &err5), 0);
        ck_assert_uint_eq(e->vcpus, 16384);
        trace_event_free(e);
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

START_TEST(test_load_and_tick)
{
        g_autoptr(GPtrArray) ev = NULL;
        g_autofree char *err = NULL;
        TraceEvent *e;

        ck_assert_int_eq(trace_parse("start idle 2 1G busy=0.05\n"
                                     "start web 4 4G host=0.5 busy=0.75\n"
                                     "start full 1 1G\n"
                                     "tick 5\n"
                                     "load web busy=1\n"
                                     "load idle busy=0 host=1.25\n"
                                     "tick 0.5\n",
                                     "t", &ev, &err),
                         0);
        ck_assert_uint_eq(ev->len, 7);
        e = g_ptr_array_index(ev, 0);
        ck_assert_int_eq(e->op, TRACE_START);
        ck_assert_double_eq(e->busy, 0.05);
        ck_assert(!e->has_host);
        e = g_ptr_array_index(ev, 1);
        ck_assert_double_eq(e->busy, 0.75);
        ck_assert_double_eq(e->host, 0.5);
        ck_assert(e->has_host);
        e = g_ptr_array_index(ev, 2);
        ck_assert_double_eq(e->busy, 1.0); /* a start without busy= is busy */
        ck_assert_double_eq(e->host, 0.0);
        e = g_ptr_array_index(ev, 3);
        ck_assert_int_eq(e->op, TRACE_TICK);
        ck_assert_double_eq(e->seconds, 5.0);
        ck_assert_uint_eq(e->line, 4);
        e = g_ptr_array_index(ev, 4);
        ck_assert_int_eq(e->op, TRACE_LOAD);
        ck_assert_str_eq(e->name, "web");
        ck_assert_double_eq(e->busy, 1.0);
        ck_assert(!e->has_host);
        e = g_ptr_array_index(ev, 5);
        ck_assert_double_eq(e->busy, 0.0);
        ck_assert_double_eq(e->host, 1.25);
        e = g_ptr_array_index(ev, 6);
        ck_assert_double_eq(e->seconds, 0.5);
}
END_TEST

START_TEST(test_load_and_tick_errors)
{
        static const struct {
                const char *text, *needle;
        } cases[] = {
            {"start a 1 1G busy=1.5\n", "t:1: busy= must be a fraction from 0 to 1"},
            {"start a 1 1G busy=-0.5\n", "t:1: busy= must be a fraction"},
            {"start a 1 1G busy=nan\n", "t:1: busy= must be a fraction"},
            {"start a 1 1G busy=1e-1\n", "t:1: busy= must be a fraction"},
            {"start a 1 1G busy=\n", "t:1: busy= must be a fraction"},
            {"start a 1 1G busy=0.5 busy=0.5\n", "t:1: busy= or host= given twice"},
            {"start a 1 1G host=5000\n", "t:1: host= must be a number of cores"},
            /* above what the daemon counts a domain with: the run would score less than the trace says */
            {"start a 1 1G host=1025\n", "t:1: host= must be a number of cores from 0 to 1024"},
            {"load a busy=0 host=2000\n", "t:1: host= must be a number of cores from 0 to 1024"},
            {"start a 1 1G fast\n", "t:1: expected busy=F or host=F"},
            {"start a 1 1G busy=1 host=1 x\n", "t:1: expected 'start NAME VCPUS MEMORY [busy=F] [host=F]'"},
            {"\nload a\n", "t:2: expected 'load NAME busy=F [host=F]'"},
            {"load a host=1\n", "t:1: expected 'load NAME busy=F [host=F]'"},
            {"load a:b busy=1\n", "t:1: domain name with a blank"},
            {"load a busy=0.1 host=0.1 busy=0.2\n", "t:1: expected 'load NAME busy=F [host=F]'"},
            {"tick\n", "t:1: expected 'tick SECONDS'"},
            {"tick 0\n", "t:1: tick takes seconds, more than 0"},
            {"tick -5\n", "t:1: tick takes seconds"},
            {"tick inf\n", "t:1: tick takes seconds"},
            {"tick 99999999999\n", "t:1: tick takes seconds"},
            {"tick 5 5\n", "t:1: expected 'tick SECONDS'"},
            {"sleep 5\n", "t:1: unknown event (expected start, domain, stop, load or tick)"},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(GPtrArray) ev = NULL;
                g_autofree char *err = NULL;
                ck_assert_int_eq(trace_parse(cases[i].text, "t", &ev, &err), -EINVAL);
                ck_assert_msg(strstr(err, cases[i].needle), "'%s' gave '%s'", cases[i].text, err);
        }
        {
                g_autoptr(GPtrArray) ev = NULL;
                ck_assert_int_eq(trace_parse("start a 1 1G host=1024\n", "t", &ev, NULL), 0);
                ck_assert_double_eq_tol(((TraceEvent *)g_ptr_array_index(ev, 0))->host, 1024, 1e-9);
        }
}
END_TEST

/* A line longer than TRACE_LINE_MAX is refused, naming its line, before it is split into words. */
START_TEST(test_long_line)
{
        g_autofree char *pad = g_strnfill(TRACE_LINE_MAX - 2, 'x');
        g_autofree char *fits = g_strdup_printf("start a 1 1G\n# %s\ntick 1\n", pad); /* 4096 bytes */
        g_autofree char *over = g_strdup_printf("start a 1 1G\n#x %s\ntick 1\n", pad);
        g_autofree char *words = g_strnfill(TRACE_LINE_MAX + 1, ' ');
        g_autoptr(GPtrArray) ev = NULL;
        g_autoptr(GPtrArray) none = NULL;
        g_autofree char *err = NULL;

        ck_assert_int_eq(trace_parse(fits, "t", &ev, NULL), 0);
        ck_assert_uint_eq(ev->len, 2);
        ck_assert_int_eq(trace_parse(over, "t", &none, &err), -EINVAL);
        ck_assert_str_eq(err, "t:2: line longer than 4096 bytes");
        g_clear_pointer(&err, g_free);
        words[0] = 's';
        ck_assert_int_eq(trace_parse(words, "t", &none, &err), -EINVAL);
        ck_assert_str_eq(err, "t:1: line longer than 4096 bytes");
}
END_TEST

/* 'domain FILE.xml': the domain a definition file defines, the path taken from the trace's directory. */
START_TEST(test_domain_lines)
{
        g_autofree char *dir = g_dir_make_tmp("test-trace-XXXXXX", NULL);
        g_autofree char *xml = g_build_filename(dir, "db.xml", NULL);
        g_autofree char *bad = g_build_filename(dir, "bad.xml", NULL);
        g_autofree char *trace = g_build_filename(dir, "t.trace", NULL);
        g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;
        g_autoptr(GPtrArray) ev = NULL;
        TraceEvent *e;

        ck_assert(g_file_set_contents(xml,
                                      "<domain><name>db</name><vcpu cpuset='4-7'>3</vcpu>"
                                      "<memory unit='GiB'>2</memory><iothreads>1</iothreads></domain>",
                                      -1, NULL));
        ck_assert(g_file_set_contents(bad, "<domain><name>db</name><vcpu>x</vcpu></domain>", -1, NULL));
        ck_assert(g_file_set_contents(trace, "start web 1 1G\ndomain db.xml\nstop db\n", -1, NULL));
        ck_assert_msg(trace_load_file(trace, &ev, &err) == 0, "%s", err);
        ck_assert_uint_eq(ev->len, 3);
        e = g_ptr_array_index(ev, 1);
        ck_assert_int_eq(e->op, TRACE_START);
        ck_assert_str_eq(e->name, "db");
        ck_assert_uint_eq(e->vcpus, 3);
        ck_assert_uint_eq(e->memory, UINT64_C(2) << 30);
        ck_assert_uint_eq(e->line, 2);
        ck_assert_ptr_nonnull(e->domain);
        ck_assert(e->domain->vcpu_cpuset && cpuset_has(e->domain->vcpu_cpuset, 4));
        ck_assert(e->domain->iothreads && cpuset_has(e->domain->iothreads, 1));
        ck_assert_ptr_null(((TraceEvent *)g_ptr_array_index(ev, 0))->domain);

        g_clear_pointer(&ev, g_ptr_array_unref);
        ck_assert(g_file_set_contents(trace, "domain bad.xml\n", -1, NULL));
        ck_assert_int_eq(trace_load_file(trace, &ev, &err2), -EINVAL);
        ck_assert_msg(strstr(err2, "t.trace:1: ") && strstr(err2, "bad.xml: invalid domain XML"), "%s",
                      err2);
        ck_assert_int_eq(trace_parse("domain a.xml b.xml\n", "t", &ev, &err3), -EINVAL);
        ck_assert_msg(strstr(err3, "t:1: expected 'domain FILE.xml'"), "%s", err3);
        g_unlink(xml);
        g_unlink(bad);
        g_unlink(trace);
        g_rmdir(dir);
}
END_TEST

/* A trace that names one file on many lines reads and parses it once: every event of it shares the one
 * domain (a small trace of repeated lines took memory without bound, a parsed copy for each). */
START_TEST(test_domain_lines_shared)
{
        g_autofree char *dir = g_dir_make_tmp("test-trace-XXXXXX", NULL);
        g_autofree char *xml = g_build_filename(dir, "a.xml", NULL);
        g_autofree char *trace = g_build_filename(dir, "t.trace", NULL);
        g_autofree char *err = NULL;
        g_autoptr(GPtrArray) ev = NULL;
        g_autoptr(GString) text = g_string_new(NULL);
        const TraceEvent *first;

        ck_assert(g_file_set_contents(
            xml, "<domain><name>a</name><vcpu>2</vcpu><memory unit='GiB'>1</memory></domain>", -1, NULL));
        for (unsigned i = 0; i < 2000; i++)
                g_string_append(text, i % 3 == 0   ? "domain a.xml\n"
                                      : i % 3 == 1 ? "domain ./a.xml\n"
                                                   : "stop a\n");
        ck_assert(g_file_set_contents(trace, text->str, -1, NULL));
        ck_assert_msg(trace_load_file(trace, &ev, &err) == 0, "%s", err);
        ck_assert_uint_eq(ev->len, 2000);
        first = g_ptr_array_index(ev, 0);
        ck_assert_ptr_nonnull(first->domain);
        for (unsigned i = 0; i < ev->len; i++) {
                const TraceEvent *e = g_ptr_array_index(ev, i);
                if (e->op != TRACE_START)
                        continue;
                ck_assert_ptr_eq(e->domain, first->domain);
                ck_assert_str_eq(e->name, "a");
                ck_assert_uint_eq(e->line, i + 1);
        }
        g_unlink(xml);
        g_unlink(trace);
        g_rmdir(dir);
}
END_TEST

/* The domain files of one trace are read up to TRACE_DOMAIN_FILES_MAX bytes in all, and the error names
 * the limit. */
START_TEST(test_domain_files_limit)
{
        g_autofree char *dir = g_dir_make_tmp("test-trace-XXXXXX", NULL);
        g_autofree char *trace = g_build_filename(dir, "t.trace", NULL);
        g_autofree char *err = NULL, *padding = g_strnfill(TRACE_DOMAIN_FILES_MAX / 4 - 4096, ' ');
        g_autoptr(GPtrArray) ev = NULL;
        g_autoptr(GString) text = g_string_new(NULL);

        for (unsigned i = 0; i < 5; i++) {
                g_autofree char *name = g_strdup_printf("d%u.xml", i);
                g_autofree char *path = g_build_filename(dir, name, NULL);
                g_autofree char *xml = g_strdup_printf(
                    "<domain><name>d%u</name><vcpu>1</vcpu><memory>1048576</memory></domain>%s", i, padding);
                ck_assert(g_file_set_contents(path, xml, -1, NULL));
                g_string_append_printf(text, "domain %s\n", name);
        }
        ck_assert(g_file_set_contents(trace, text->str, -1, NULL));
        ck_assert_int_eq(trace_load_file(trace, &ev, &err), -EINVAL);
        ck_assert_msg(strstr(err, "t.trace:5: ") && strstr(err, "d4.xml") && strstr(err, "16 MiB"), "%s",
                      err);
        for (unsigned i = 0; i < 5; i++) {
                g_autofree char *name = g_strdup_printf("d%u.xml", i);
                g_autofree char *path = g_build_filename(dir, name, NULL);
                g_unlink(path);
        }
        g_unlink(trace);
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
        tcase_add_test(tc, test_load_and_tick);
        tcase_add_test(tc, test_load_and_tick_errors);
        tcase_add_test(tc, test_long_line);
        tcase_add_test(tc, test_domain_lines);
        tcase_add_test(tc, test_domain_lines_shared);
        tcase_add_test(tc, test_domain_files_limit);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(trace_suite)
