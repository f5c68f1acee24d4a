/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* instance-lock: one holder per URI, the holder's pid for the one refused, the directory chosen. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instance-lock.h"
#include "test-util.h"

/* A directory that does not exist yet (taking the lock creates it), under a fresh one. */
static char *tmpdir(void)
{
        g_autofree char *base = g_dir_make_tmp("instance-lock-XXXXXX", NULL);
        ck_assert_ptr_nonnull(base);
        return g_build_filename(base, "run", "placementd", NULL);
}

/* Removes what tmpdir() made: the lock files, the directory and its two parents. */
static void tmpdir_remove(const char *dir)
{
        g_autofree char *run = g_path_get_dirname(dir);
        g_autofree char *base = g_path_get_dirname(run);

        test_remove_dir(dir);
        g_rmdir(run);
        g_rmdir(base);
}

START_TEST(test_second_is_refused)
{
        g_autofree char *dir = tmpdir();
        g_autofree char *path = instance_lock_path(dir, "qemu:///system");
        g_autofree char *error = NULL, *text = NULL;
        pid_t pid = -1;
        int fd = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);
        int again;

        ck_assert_msg(fd >= 0, "%s", error);
        ck_assert(g_file_get_contents(path, &text, NULL, NULL));
        {
                g_autofree char *want = g_strdup_printf("%ld\nqemu:///system\n", (long)getpid());
                ck_assert_str_eq(text, want);
        }
        /* another open file description, as another process has: refused, naming the holder */
        again = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);
        ck_assert_int_eq(again, -EBUSY);
        ck_assert_int_eq(pid, getpid());
        /* another URI is another lock */
        again = instance_lock_take(dir, "qemu+ssh://host/system", "qemu+ssh://host/system", &pid, &error);
        ck_assert_int_ge(again, 0);
        instance_lock_release(again);
        /* released: taken again */
        instance_lock_release(fd);
        fd = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);
        ck_assert_msg(fd >= 0, "%s", error);
        instance_lock_release(fd);
        tmpdir_remove(dir);
}
END_TEST

/* A holder that exits, however, leaves the lock free; one that runs keeps it from a child process. */
START_TEST(test_holder_process)
{
        g_autofree char *dir = tmpdir();
        g_autofree char *error = NULL;
        int ready[2], done[2], status = 0;
        pid_t child, pid = 0;
        char c;
        int fd;

        ck_assert_int_eq(pipe(ready), 0);
        ck_assert_int_eq(pipe(done), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                g_autofree char *e = NULL;
                pid_t p;
                int l = instance_lock_take(dir, "qemu:///system", "qemu:///system", &p, &e);
                if (write(ready[1], l >= 0 ? "y" : "n", 1) != 1 || read(done[0], &c, 1) != 1)
                        _exit(2);
                _exit(l >= 0 ? 0 : 1);
        }
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        ck_assert_int_eq(c, 'y');
        ck_assert_int_eq(instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error), -EBUSY);
        ck_assert_int_eq(pid, child);
        ck_assert_int_eq(write(done[1], "x", 1), 1);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        fd = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);
        ck_assert_msg(fd >= 0, "%s", error);
        instance_lock_release(fd);
        tmpdir_remove(dir);
}
END_TEST

/* flock() works on a descriptor opened only to read: the file is the daemon's alone (0600, in a 0700
 * directory), also one an older daemon made 0644; one another user owns is not used. */
START_TEST(test_only_the_owner_opens_it)
{
        g_autofree char *dir = tmpdir();
        g_autofree char *path = instance_lock_path(dir, "qemu:///system");
        g_autofree char *error = NULL;
        struct stat st;
        pid_t pid = 0;
        int fd = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);

        ck_assert_msg(fd >= 0, "%s", error);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(stat(dir, &st), 0);
        ck_assert_uint_eq(st.st_mode & 0077, 0);
        instance_lock_release(fd);
        /* left 0644 by an older daemon: made 0600 */
        ck_assert_int_eq(chmod(path, 0644), 0);
        fd = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);
        ck_assert_msg(fd >= 0, "%s", error);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        instance_lock_release(fd);
        if (geteuid() == 0) { /* one another user owns */
                ck_assert_int_eq(chown(path, 65534, 65534), 0);
                fd = instance_lock_take(dir, "qemu:///system", "qemu:///system", &pid, &error);
                ck_assert_int_eq(fd, -EPERM);
                ck_assert_msg(strstr(error, "belongs to uid 65534"), "%s", error);
        }
        tmpdir_remove(dir);
}
END_TEST

/* Spellings of one libvirtd share a lock; another server, path or socket is another lock. */
START_TEST(test_key)
{
        static const char *const same[] = {"qemu:///system", "QEMU:///system", "qemu+unix:///system",
                                           "qemu:///system?", "qemu:///system#x"};
        g_autofree char *first = instance_lock_key(same[0]);

        for (unsigned i = 1; i < G_N_ELEMENTS(same); i++) {
                g_autofree char *k = instance_lock_key(same[i]);
                ck_assert_msg(g_str_equal(k, first), "%s: %s, not %s", same[i], k, first);
        }
        {
                g_autofree char *a = instance_lock_key("qemu+ssh://alice@KVM1/system");
                g_autofree char *b = instance_lock_key("qemu+ssh://bob@kvm1/system");
                g_autofree char *c = instance_lock_key("qemu+ssh://kvm2/system");
                g_autofree char *d = instance_lock_key("qemu:///system?socket=/x/sock");
                g_autofree char *e = instance_lock_key("qemu:///session");
                ck_assert_str_eq(a, b);
                ck_assert_str_ne(a, c);
                ck_assert_str_ne(d, first);
                ck_assert_str_ne(e, first);
        }
}
END_TEST

START_TEST(test_unusable_directory)
{
        g_autofree char *error = NULL;
        pid_t pid = 0;
        int fd;

        if (geteuid() == 0)
                return; /* root writes anywhere */
        fd =
            instance_lock_take("/proc/instance-lock-test", "qemu:///system", "qemu:///system", &pid, &error);
        ck_assert_int_lt(fd, 0);
        ck_assert_int_ne(fd, -EBUSY);
        ck_assert_ptr_nonnull(error);
}
END_TEST

START_TEST(test_dir)
{
        g_autofree char *a = NULL, *b = NULL, *c = NULL;

        g_setenv("RUNTIME_DIRECTORY", "/run/placementd:/run/other", TRUE);
        a = instance_lock_dir();
        ck_assert_str_eq(a, "/run/placementd");
        g_unsetenv("RUNTIME_DIRECTORY");
        g_setenv("XDG_RUNTIME_DIR", "/run/user/1000", TRUE);
        b = instance_lock_dir();
        ck_assert_str_eq(b, geteuid() == 0 ? "/run/placementd" : "/run/user/1000/placementd");
        g_unsetenv("XDG_RUNTIME_DIR");
        c = instance_lock_dir();
        if (geteuid() == 0)
                ck_assert_str_eq(c, "/run/placementd");
        else
                ck_assert_ptr_null(c);
}
END_TEST

static Suite *make_suite(void)
{
        Suite *s = suite_create("instance lock");
        TCase *tc = tcase_create("lock");

        tcase_add_test(tc, test_second_is_refused);
        tcase_add_test(tc, test_holder_process);
        tcase_add_test(tc, test_unusable_directory);
        tcase_add_test(tc, test_only_the_owner_opens_it);
        tcase_add_test(tc, test_key);
        tcase_add_test(tc, test_dir);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(make_suite)
