/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bounded file reader: regular files only, a size limit, no NUL bytes, never blocking. */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-read.h"
#include "test-util.h"

static char *dir;

static void setup(void)
{
        dir = g_dir_make_tmp("test-file-read-XXXXXX", NULL);
        ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
        test_remove_dir(dir);
        g_clear_pointer(&dir, g_free);
}

static char *write_file(const char *name, const char *data, size_t len)
{
        char *path = g_build_filename(dir, name, NULL);
        ck_assert(g_file_set_contents(path, data, (gssize)len, NULL));
        return path;
}

/* Reads path with limit max, expects r and, on failure, an error containing needle. */
static void expect(const char *path, size_t max, int r, const char *needle)
{
        g_autofree char *text = NULL, *error = NULL;
        size_t len = 0;
        int got = file_read_bounded(path, max, &text, &len, &error);

        ck_assert_msg(got == r, "%s: expected %d, got %d (%s)", path, r, got, error ? error : "");
        if (r < 0) {
                ck_assert_ptr_null(text);
                ck_assert_msg(error && strstr(error, needle), "%s: '%s' lacks '%s'", path, error, needle);
        } else {
                ck_assert_ptr_nonnull(text);
                ck_assert_uint_eq(strlen(text), len);
        }
}

START_TEST(test_regular)
{
        g_autofree char *path = write_file("ok", "a=1\nb=2\n", 8), *empty = write_file("empty", "", 0);
        g_autofree char *text = NULL, *error = NULL;
        size_t len = 0;

        ck_assert_int_eq(file_read_bounded(path, 8, &text, &len, &error), 0);
        ck_assert_str_eq(text, "a=1\nb=2\n");
        ck_assert_uint_eq(len, 8);
        expect(empty, 8, 0, NULL);
        expect("/nonexistent/file", 8, -ENOENT, "No such file");
}
END_TEST

START_TEST(test_nul_names_line)
{
        static const char zeros[64] = {0};
        g_autofree char *third = write_file("third", "[A]\nx=1\ny\0=2\n", 14);
        g_autofree char *all = write_file("zeros", zeros, sizeof(zeros));

        expect(third, 1024, -EINVAL, "a NUL byte on line 3");
        expect(all, 1024, -EINVAL, "a NUL byte on line 1");
}
END_TEST

START_TEST(test_fifo_does_not_block)
{
        g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);

        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        /* no writer: a blocking open would hang here (the test's timeout would fail it) */
        expect(fifo, 1024, -EINVAL, "a FIFO, not a regular file");
}
END_TEST

START_TEST(test_devices)
{
        expect("/dev/zero", 1024, -EINVAL, "a character device, not a regular file");
        expect("/dev/null", 1024, -EINVAL, "a character device");
}
END_TEST

START_TEST(test_oversize)
{
        g_autofree char *big = g_strnfill(4097, 'x');
        g_autofree char *path = write_file("big", big, 4097);

        expect(path, 4097, 0, NULL);
        expect(path, 4096, -EFBIG, "larger than the limit of 4 KiB");
        expect(path, 100, -EFBIG, "larger than the limit of 100 bytes");
}
END_TEST

START_TEST(test_directory)
{
        expect(dir, 1024, -EISDIR, "Is a directory");
}
END_TEST

START_TEST(test_limit_format)
{
        g_autofree char *a = file_limit_format(1u << 20), *b = file_limit_format(64u << 10),
                        *c = file_limit_format(1000);
        ck_assert_str_eq(a, "1 MiB");
        ck_assert_str_eq(b, "64 KiB");
        ck_assert_str_eq(c, "1000 bytes");
}
END_TEST

static Suite *file_read_suite(void)
{
        Suite *s = suite_create("file read");
        TCase *tc = tcase_create("bounded");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 10);
        tcase_add_test(tc, test_regular);
        tcase_add_test(tc, test_nul_names_line);
        tcase_add_test(tc, test_fifo_does_not_block);
        tcase_add_test(tc, test_devices);
        tcase_add_test(tc, test_oversize);
        tcase_add_test(tc, test_directory);
        tcase_add_test(tc, test_limit_format);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(file_read_suite)
