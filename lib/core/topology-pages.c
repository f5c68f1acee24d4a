/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hugepage pools of a topology's nodes: kept apart from the nodes' memory, by page size. */
#include "topology.h"

#include <string.h>

#define DEFAULT_HUGEPAGE_SIZE (UINT64_C(2) << 20)

void topology_node_set_hugepages(Topology *t, unsigned node, uint64_t size, uint64_t count)
{
        TopoNode *n = &t->nodes[node];
        unsigned i = 0;

        while (i < n->nhugepages && n->hugepages[i].size < size)
                i++;
        if (i == n->nhugepages || n->hugepages[i].size != size) {
                n->hugepages = g_renew(TopoPages, n->hugepages, n->nhugepages + 1);
                memmove(&n->hugepages[i + 1], &n->hugepages[i], sizeof(TopoPages) * (n->nhugepages - i));
                n->nhugepages++;
                n->hugepages[i].size = size;
        }
        n->hugepages[i].count = count;
}

uint64_t topology_node_hugepage_bytes(const Topology *t, unsigned node, uint64_t size)
{
        const TopoNode *n = &t->nodes[node];

        for (unsigned i = 0; i < n->nhugepages; i++)
                if (n->hugepages[i].size == size)
                        return n->hugepages[i].count > UINT64_MAX / size ? UINT64_MAX
                                                                         : n->hugepages[i].count * size;
        return 0;
}

uint64_t topology_default_hugepage_size(const Topology *t)
{
        uint64_t best = 0;

        if (t->default_hugepage_size)
                return t->default_hugepage_size;
        for (unsigned n = 0; n < t->nnodes; n++)
                if (t->nodes[n].nhugepages && (!best || t->nodes[n].hugepages[0].size < best))
                        best = t->nodes[n].hugepages[0].size;
        return best ? best : DEFAULT_HUGEPAGE_SIZE;
}

uint64_t topology_meminfo_hugepage_size(const char *meminfo)
{
        const char *line = meminfo ? strstr(meminfo, "Hugepagesize:") : NULL;
        guint64 kib;
        char *end;

        if (!line || (line != meminfo && line[-1] != '\n'))
                return 0;
        line += strlen("Hugepagesize:");
        while (*line == ' ' || *line == '\t')
                line++;
        if (!g_ascii_isdigit(*line))
                return 0;
        kib = g_ascii_strtoull(line, &end, 10);
        if (strncmp(end, " kB", 3) != 0 || kib == 0 || kib > UINT64_MAX / 1024)
                return 0;
        return kib * 1024;
}
