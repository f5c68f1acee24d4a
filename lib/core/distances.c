/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "distances.h"
#include "topology.h"

static uint32_t *defaults(unsigned n, uint32_t local, uint32_t remote)
{
        uint32_t *d = g_new(uint32_t, (gsize)n * n);
        for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++)
                        d[i * n + j] = i == j ? local : remote;
        return d;
}

DistanceVerdict distances_sanitize(unsigned n, const uint32_t *matrix, const unsigned *os_index,
                                   uint32_t **ret, char **ret_note)
{
        bool any_reachable = false;

        if (!matrix) {
                *ret = defaults(n, TOPOLOGY_LOCAL, TOPOLOGY_REMOTE);
                if (ret_note && n > 1)
                        *ret_note = g_strdup("no NUMA distances reported: assuming 10 local, 20 remote");
                return DISTANCES_MISSING;
        }
        for (unsigned i = 0; i < n; i++) {
                for (unsigned j = 0; j < n; j++) {
                        uint32_t v = matrix[i * n + j];
                        if (v == TOPOLOGY_UNREACHABLE)
                                continue;
                        any_reachable = true;
                        if (v < TOPOLOGY_LOCAL || (i == j && v != TOPOLOGY_LOCAL)) {
                                if (ret_note)
                                        *ret_note = g_strdup_printf(
                                            "invalid NUMA distance %u from node %u to node %u (%s): "
                                            "ignoring the matrix, assuming 10 local, 20 remote",
                                            v, os_index ? os_index[i] : i, os_index ? os_index[j] : j,
                                            i == j ? "self distance must be 10" : "must be at least 10");
                                *ret = defaults(n, TOPOLOGY_LOCAL, TOPOLOGY_REMOTE);
                                return DISTANCES_INVALID;
                        }
                }
        }
        if (!any_reachable) {
                if (ret_note)
                        *ret_note = g_strdup("every NUMA distance is unreachable: no NUMA information, "
                                             "treating all nodes as one");
                *ret = defaults(n, TOPOLOGY_LOCAL, TOPOLOGY_LOCAL);
                return DISTANCES_FLAT;
        }
        *ret = g_memdup2(matrix, sizeof(uint32_t) * n * n);
        return DISTANCES_OK;
}

static bool has_cpus(const TopoNode *node)
{
        return node->ncores && !node->no_local_memory;
}

unsigned distances_assume_locality(const Topology *t, uint32_t *matrix)
{
        unsigned n = t->nnodes, set = 0;

        for (unsigned m = 0; m < n; m++) {
                const TopoNode *mem = &t->nodes[m];
                bool any = false;
                if (has_cpus(mem) || mem->no_local_memory || !mem->local_cpus)
                        continue;
                for (unsigned x = 0; x < n && !any; x++)
                        any = has_cpus(&t->nodes[x]) && cpuset_intersects(t->nodes[x].cpus, mem->local_cpus);
                if (!any)
                        continue;
                for (unsigned x = 0; x < n; x++) {
                        if (!has_cpus(&t->nodes[x]) ||
                            cpuset_intersects(t->nodes[x].cpus, mem->local_cpus) ||
                            matrix[(gsize)x * n + m] != TOPOLOGY_SAME_PACKAGE)
                                continue;
                        matrix[(gsize)x * n + m] = DISTANCES_MEMORY_AWAY;
                        matrix[(gsize)m * n + x] = DISTANCES_MEMORY_AWAY;
                        set += 2;
                }
        }
        return set;
}

unsigned distances_assume_packages(unsigned n, uint32_t *matrix, const TopoPackage *packages,
                                   unsigned npackages)
{
        unsigned set = 0;

        for (unsigned k = 0; k < npackages; k++) {
                CPUSET_FOREACH (i, packages[k].nodes) {
                        CPUSET_FOREACH (j, packages[k].nodes) {
                                gsize at = (gsize)i * n + (unsigned)j;
                                if (i == j || (unsigned)i >= n || (unsigned)j >= n ||
                                    matrix[at] == TOPOLOGY_SAME_PACKAGE)
                                        continue;
                                matrix[at] = TOPOLOGY_SAME_PACKAGE;
                                set++;
                        }
                }
        }
        return set;
}
