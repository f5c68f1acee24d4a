/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's memory tiers (kernel-tiers.h). */
#include "kernel-tiers.h"

#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "file-read.h"

#define TIER_PREFIX "memory_tier"

unsigned *kernel_memory_tiers(const char *root, unsigned *ret_len)
{
        g_autofree char *dir_path =
            g_strconcat(root ? root : "", "/sys/devices/virtual/memory_tiering", NULL);
        g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
        g_autofree unsigned *tier = NULL;
        const char *entry;
        bool any = false;

        if (!dir)
                return NULL;
        tier = g_new(unsigned, CPUSET_MAX + 1);
        for (unsigned i = 0; i <= CPUSET_MAX; i++)
                tier[i] = G_MAXUINT;
        while ((entry = g_dir_read_name(dir))) {
                g_autofree char *path = NULL, *text = NULL;
                g_autoptr(CpuSet) nodes = NULL;
                char *end;
                guint64 id;

                if (!g_str_has_prefix(entry, TIER_PREFIX) || !g_ascii_isdigit(entry[strlen(TIER_PREFIX)]))
                        continue;
                id = g_ascii_strtoull(entry + strlen(TIER_PREFIX), &end, 10);
                if (*end || id >= G_MAXUINT)
                        continue;
                path = g_build_filename(dir_path, entry, "nodelist", NULL);
                if (file_read_bounded(path, 65536, &text, NULL, NULL) < 0 ||
                    cpuset_parse(g_strstrip(text), &nodes, NULL) < 0)
                        return NULL;
                CPUSET_FOREACH (n, nodes) {
                        tier[n] = (unsigned)id;
                        any = true;
                }
        }
        if (!any)
                return NULL;
        *ret_len = CPUSET_MAX + 1;
        return g_steal_pointer(&tier);
}
