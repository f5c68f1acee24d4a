/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the live host's own files say beside hwloc, read from file trees laid out as the kernel's are:
 * the guest cgroup's cpuset (guest-cgroup.h, cgroup v2 and v1) and the memory tiers (kernel-tiers.h). */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "guest-cgroup.h"
#include "kernel-tiers.h"
#include "test-util.h"

/* Writes root/dir/name = text, making the directories. */
static void put(const char *root, const char *dir, const char *name, const char *text)
{
        g_autofree char *d = g_build_filename(root, dir, NULL);
        g_autofree char *path = g_build_filename(d, name, NULL);
        ck_assert_int_eq(g_mkdir_with_parents(d, 0755), 0);
        ck_assert(g_file_set_contents(path, text, -1, NULL));
}

static char *lists(const char *root, int *ret, const char **ret_where)
{
        hwloc_bitmap_t cpus = NULL, mems = NULL;
        char *c = NULL, *m = NULL, *out;

        *ret = guest_cgroup_sets(root, &cpus, &mems, ret_where);
        if (*ret < 0)
                return NULL;
        hwloc_bitmap_list_asprintf(&c, cpus);
        hwloc_bitmap_list_asprintf(&m, mems);
        out = g_strdup_printf("%s / %s", c, m);
        free(c);
        free(m);
        hwloc_bitmap_free(cpus);
        hwloc_bitmap_free(mems);
        return out;
}

START_TEST(test_layouts)
{
        g_autofree char *v2 = g_dir_make_tmp("guest-cgroup-XXXXXX", NULL);
        g_autofree char *v1 = g_dir_make_tmp("guest-cgroup-XXXXXX", NULL);
        g_autofree char *plain = g_dir_make_tmp("guest-cgroup-XXXXXX", NULL);
        g_autofree char *none = g_dir_make_tmp("guest-cgroup-XXXXXX", NULL);
        g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        const char *where = NULL;
        int r;

        /* cgroup v2, systemd: machine.slice's effective sets */
        put(v2, "sys/fs/cgroup/machine.slice", "cpuset.cpus.effective", "2-7,10-15\n");
        put(v2, "sys/fs/cgroup/machine.slice", "cpuset.mems.effective", "0-1\n");
        a = lists(v2, &r, &where);
        ck_assert_int_eq(r, 0);
        ck_assert_str_eq(a, "2-7,10-15 / 0-1");
        ck_assert_str_eq(where, "machine.slice");
        /* cgroup v1, libvirt without systemd: /machine in the cpuset hierarchy */
        put(v1, "sys/fs/cgroup/cpuset/machine", "cpuset.effective_cpus", "1\n");
        put(v1, "sys/fs/cgroup/cpuset/machine", "cpuset.effective_mems", "0\n");
        b = lists(v1, &r, &where);
        ck_assert_int_eq(r, 0);
        ck_assert_str_eq(b, "1 / 0");
        ck_assert_str_eq(where, "machine");
        /* a v1 cpuset not set up yet (empty) is no answer, nor is a missing cgroup */
        put(plain, "sys/fs/cgroup/cpuset/machine.slice", "cpuset.effective_cpus", "\n");
        put(plain, "sys/fs/cgroup/cpuset/machine.slice", "cpuset.effective_mems", "\n");
        c = lists(plain, &r, &where);
        ck_assert_int_eq(r, -ENOENT);
        d = lists(none, &r, &where);
        ck_assert_int_eq(r, -ENOENT);
        /* unreadable as a list */
        put(none, "sys/fs/cgroup/machine.slice", "cpuset.cpus.effective", "all of them\n");
        put(none, "sys/fs/cgroup/machine.slice", "cpuset.mems.effective", "0\n");
        g_clear_pointer(&d, g_free);
        d = lists(none, &r, &where);
        ck_assert_int_eq(r, -EINVAL);
        for (const char *const *root = (const char *const[]){v2, v1, plain, none, NULL}; *root; root++) {
                g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", *root);
                ck_assert_int_eq(system(cmd), 0);
        }
}
END_TEST

START_TEST(test_memory_tiers)
{
        g_autofree char *root = g_dir_make_tmp("kernel-tiers-XXXXXX", NULL);
        g_autofree char *none = g_dir_make_tmp("kernel-tiers-XXXXXX", NULL);
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s' '%s'", root, none);
        g_autofree unsigned *tier = NULL;
        unsigned len = 0;

        /* DRAM nodes 0-1 in the default tier, a CXL expander (node 2) in a slower one */
        put(root, "sys/devices/virtual/memory_tiering/memory_tier4", "nodelist", "0-1\n");
        put(root, "sys/devices/virtual/memory_tiering/memory_tier22", "nodelist", "2\n");
        put(root, "sys/devices/virtual/memory_tiering", "uevent", "");
        tier = kernel_memory_tiers(root, &len);
        ck_assert_ptr_nonnull(tier);
        ck_assert_uint_gt(len, 2);
        ck_assert_uint_eq(tier[0], 4);
        ck_assert_uint_eq(tier[1], 4);
        ck_assert_uint_eq(tier[2], 22);
        ck_assert_uint_eq(tier[3], G_MAXUINT);
        /* a kernel without tiers */
        ck_assert_ptr_null(kernel_memory_tiers(none, &len));
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *guest_cgroup_suite(void)
{
        Suite *s = suite_create("guest cgroup");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_layouts);
        tcase_add_test(tc, test_memory_tiers);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(guest_cgroup_suite)
