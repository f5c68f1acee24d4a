/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's log lines: what a domain's owner chose (its name, its metadata) cannot forge or hide a line.
 * A newline, a carriage return, an escape, a C1 control and a bidi override are written as escapes
 * (text-safe.h), as placementctl writes them.
 */
#include "test-util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* What log_printf() (lines false) or log_lines() (lines true) writes for text, read back from stderr. */
static char *logged_as(const char *text, bool lines)
{
        FILE *f = tmpfile();
        int saved = dup(STDERR_FILENO);
        char *out = NULL;
        gsize len = 0;

        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(saved, 0);
        fflush(stderr);
        ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
        log_set_max_level(LOG_DEBUG);
        if (lines)
                log_lines(LOG_ERR, NULL, text);
        else
                log_printf(LOG_WARNING, "%s: unknown policy", text);
        fflush(stderr);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        rewind(f);
        out = g_malloc0(65536);
        len = fread(out, 1, 65535, f);
        out[len] = '\0';
        fclose(f);
        return out;
}

static char *logged(const char *text)
{
        return logged_as(text, false);
}

START_TEST(test_owner_text_cannot_forge_a_line)
{
        g_autofree char *a = logged("evil\rfake: placed");
        g_autofree char *b = logged("x\x1b[2J\xc2\x85y\xe2\x80\xaez");
        g_autofree char *c = logged("one\ntwo");
        g_autofree char *e = logged("one two");
        g_autofree char *d = logged("evil\\x0dfake: placed"); /* the text: not logged as a would be */

        ck_assert_str_eq(a, "<4>evil\\x0dfake: placed: unknown policy\n");
        ck_assert_str_eq(b, "<4>x\\x1b[2J\\x85y\\u{202e}z: unknown policy\n");
        ck_assert_str_eq(c, "<4>one\\x0atwo: unknown policy\n");
        ck_assert_str_ne(c, e); /* two domains' names read as two */
        ck_assert_str_eq(d, "<4>evil\\x5cx0dfake: placed: unknown policy\n");
}
END_TEST

/* A long name does not cut off what follows it: the line holds the name and the rest, and one beyond what
 * a journal line holds keeps its start and its end */
START_TEST(test_long_name_keeps_its_line)
{
        g_autofree char *name = g_strnfill(3000, 'n');
        g_autofree char *huge = g_strnfill(40000, 'h');
        g_autofree char *a = logged(name);
        g_autofree char *b = logged(huge);

        ck_assert_uint_eq(strlen(a), 3 + 3000 + strlen(": unknown policy\n"));
        ck_assert(g_str_has_suffix(a, "n: unknown policy\n"));
        ck_assert(g_str_has_prefix(b, "<4>hhh") && g_str_has_suffix(b, "hhh: unknown policy\n"));
        ck_assert_ptr_nonnull(strstr(b, " bytes left out) ... "));
        ck_assert_uint_lt(strlen(b), 33000);
}
END_TEST

/* Several problems (a configuration's errors at startup or on reload): one log line each, the first as it
 * is, the others indented; blank lines dropped */
START_TEST(test_lines_one_a_line)
{
        g_autofree char *a = logged_as("p.conf:2: unknown key Foo=\np.conf:3: unknown key Bar=\n", true);
        g_autofree char *b = logged_as("one problem", true);
        g_autofree char *c = logged_as("cr\rx\nnext", true);

        ck_assert_str_eq(a, "<3>p.conf:2: unknown key Foo=\n<3>  p.conf:3: unknown key Bar=\n");
        ck_assert_str_eq(b, "<3>one problem\n");
        ck_assert_str_eq(c, "<3>cr\\x0dx\n<3>  next\n");
}
END_TEST

static Suite *log_suite(void)
{
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("lines");
        tcase_add_test(tc, test_owner_text_cannot_forge_a_line);
        tcase_add_test(tc, test_long_name_keeps_its_line);
        tcase_add_test(tc, test_lines_one_a_line);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(log_suite)
