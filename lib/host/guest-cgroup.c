/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where domains may run: the guest cgroup's cpuset (guest-cgroup.h). */
#include "guest-cgroup.h"
#include "guest-cpus.h"

#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "file-read.h"

/* A cpuset file's list ("0-3,8\n"; an empty file is the empty set) as a new bitmap, or NULL. */
static hwloc_bitmap_t read_list(const char *path)
{
        g_autofree char *text = NULL;
        hwloc_bitmap_t set;

        if (file_read_bounded(path, 65536, &text, NULL, NULL) < 0)
                return NULL;
        g_strstrip(text);
        set = hwloc_bitmap_alloc();
        if (!set)
                return NULL;
        if (*text && hwloc_bitmap_list_sscanf(set, text) < 0) {
                hwloc_bitmap_free(set);
                return NULL;
        }
        return set;
}

int guest_cgroup_sets(const char *root, hwloc_bitmap_t *ret_cpus, hwloc_bitmap_t *ret_mems,
                      const char **ret_where)
{
        static const char *const layouts[][4] = {
            /* directory under root, CPUs file, memory nodes file, the cgroup's name */
            {"/sys/fs/cgroup/machine.slice", "cpuset.cpus.effective", "cpuset.mems.effective",
             "machine.slice"},
            {"/sys/fs/cgroup/cpuset/machine.slice", "cpuset.effective_cpus", "cpuset.effective_mems",
             "machine.slice"},
            {"/sys/fs/cgroup/machine", "cpuset.cpus.effective", "cpuset.mems.effective", "machine"},
            {"/sys/fs/cgroup/cpuset/machine", "cpuset.effective_cpus", "cpuset.effective_mems", "machine"},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(layouts); i++) {
                g_autofree char *dir = g_strconcat(root ? root : "", layouts[i][0], NULL);
                g_autofree char *cpus_path = g_build_filename(dir, layouts[i][1], NULL);
                g_autofree char *mems_path = g_build_filename(dir, layouts[i][2], NULL);
                hwloc_bitmap_t cpus, mems;
                bool empty;

                if (!g_file_test(cpus_path, G_FILE_TEST_EXISTS))
                        continue;
                *ret_where = layouts[i][3];
                cpus = read_list(cpus_path);
                mems = read_list(mems_path);
                if (!cpus || !mems) {
                        hwloc_bitmap_free(cpus);
                        hwloc_bitmap_free(mems);
                        return -EINVAL;
                }
                empty = hwloc_bitmap_iszero(cpus) || hwloc_bitmap_iszero(mems);
                if (empty) {
                        hwloc_bitmap_free(cpus);
                        hwloc_bitmap_free(mems);
                        return -ENOENT;
                }
                *ret_cpus = cpus;
                *ret_mems = mems;
                return 0;
        }
        return -ENOENT;
}

int guest_cgroup_cpus(CpuSet **ret, const char **ret_where)
{
        const char *root = g_getenv("HWLOC_FSROOT");
        hwloc_bitmap_t cpus = NULL, mems = NULL;
        unsigned cpu;
        int r = guest_cgroup_sets(root && strcmp(root, "/") != 0 ? root : "", &cpus, &mems, ret_where);

        if (r < 0)
                return r;
        *ret = cpuset_new();
        hwloc_bitmap_foreach_begin(cpu, cpus)
        {
                if (cpu < CPUSET_MAX)
                        cpuset_add(*ret, cpu);
        }
        hwloc_bitmap_foreach_end();
        hwloc_bitmap_free(cpus);
        hwloc_bitmap_free(mems);
        return 0;
}
