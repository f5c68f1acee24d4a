/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-kinds.h"
#include "topology-build.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct hwloc_bitmap_s HwlocBitmap;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwlocBitmap, hwloc_bitmap_free)

/* hwloc's subtypes (its memory tiers, the KNL and POWER backends) and the CXL names of later releases. */
static const struct {
        const char *prefix;
        NodeKind kind;
} subtype_kinds[] = {
    {"DRAM", NODE_KIND_DRAM}, {"GPU", NODE_KIND_GPU}, {"MCDRAM", NODE_KIND_HBM}, {"HBM", NODE_KIND_HBM},
    {"NVM", NODE_KIND_NVM},   {"SPM", NODE_KIND_NVM}, {"CXL", NODE_KIND_CXL},
};

NodeKind topology_node_kind(hwloc_obj_t numa, bool *ret_unknown)
{
        const char *subtype = numa->subtype;

        *ret_unknown = false;
        if (!subtype || !*subtype)
                return NODE_KIND_DRAM;
        for (unsigned i = 0; i < G_N_ELEMENTS(subtype_kinds); i++)
                if (g_ascii_strncasecmp(subtype, subtype_kinds[i].prefix, strlen(subtype_kinds[i].prefix)) ==
                    0)
                        return subtype_kinds[i].kind;
        *ret_unknown = true;
        return NODE_KIND_DRAM;
}

void topology_far_memory_kinds(Topology *t)
{
        if (!t->distances_known)
                return;
        for (unsigned n = 0; n < t->nnodes; n++) {
                TopoNode *node = &t->nodes[n];
                uint32_t nearest = TOPOLOGY_UNREACHABLE, local = TOPOLOGY_LOCAL;
                bool far = true, any = false;

                if (node->ncores > 0 || node->no_local_memory || node->kind != NODE_KIND_DRAM ||
                    (node->memory == 0 && node->nhugepages == 0))
                        continue;
                for (unsigned c = 0; c < t->nnodes && far; c++) {
                        uint32_t own = topology_distance(t, c, c);
                        /* the nearer way: a one-way slow link does not make the memory far */
                        uint32_t d = MIN(topology_distance(t, c, n), topology_distance(t, n, c));

                        if (t->nodes[c].ncores == 0 || t->nodes[c].no_local_memory ||
                            own == TOPOLOGY_UNREACHABLE)
                                continue;
                        any = true;
                        if (d != TOPOLOGY_UNREACHABLE &&
                            (uint64_t)d <= (uint64_t)own * TOPOLOGY_FAR_MEMORY_FACTOR)
                                far = false;
                        if (d < nearest) {
                                nearest = d;
                                local = own;
                        }
                }
                if (!any || !far)
                        continue;
                node->kind = NODE_KIND_CXL;
                if (nearest == TOPOLOGY_UNREACHABLE)
                        topology_note(
                            t,
                            "NUMA node %u has no CPU and its memory counts as DRAM, but no node with "
                            "CPUs reaches it: counted as a lower tier (cxl), used only when nearer "
                            "memory has no room",
                            node->os_index);
                else
                        topology_note(
                            t,
                            "NUMA node %u has no CPU and its memory counts as DRAM, but lies %" PRIu32
                            " from the nearest node with CPUs (local %" PRIu32 "): that far, it is "
                            "not first-tier memory (an NVIDIA Grace Hopper's GPU memory looks like "
                            "this when hwloc does not name it GPUMemory), so it is counted as a "
                            "lower tier (cxl), used only when nearer memory has no room",
                            node->os_index, nearest, local);
        }
}

typedef struct KindInfo {
        unsigned index; /* hwloc's kind index */
        int efficiency; /* -1 when unknown */
        unsigned mhz;   /* FrequencyMaxMHz, 0 when unknown */
        const char *name;
        unsigned rank;
} KindInfo;

/* Most performant first: higher efficiency, then higher maximum frequency; hwloc's order otherwise. */
static int compare_kinds(const void *pa, const void *pb)
{
        const KindInfo *a = pa, *b = pb;

        if (a->efficiency != b->efficiency)
                return a->efficiency > b->efficiency ? -1 : 1;
        if (a->mhz != b->mhz)
                return a->mhz > b->mhz ? -1 : 1;
        return a->index < b->index ? -1 : a->index > b->index;
}

static const char *info_value(const struct hwloc_info_s *infos, unsigned n, const char *name)
{
        for (unsigned i = 0; i < n; i++)
                if (infos[i].name && strcmp(infos[i].name, name) == 0)
                        return infos[i].value;
        return NULL;
}

void topology_load_core_kinds(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj)
{
        int nr = hwloc_cpukinds_get_nr(topo, 0);
        g_autofree KindInfo *kinds = NULL;
        g_autofree int *rank_of = NULL;
        unsigned nranks = 0;

        if (nr <= 1)
                return;
        kinds = g_new0(KindInfo, nr);
        rank_of = g_new(int, nr);
        for (int i = 0; i < nr; i++) {
                struct hwloc_info_s *infos = NULL;
                unsigned ninfos = 0;
                const char *mhz;

                kinds[i] = (KindInfo){.index = (unsigned)i, .efficiency = -1};
                if (hwloc_cpukinds_get_info(topo, (unsigned)i, NULL, &kinds[i].efficiency, &ninfos, &infos,
                                            0) < 0)
                        continue;
                mhz = info_value(infos, ninfos, "FrequencyMaxMHz");
                kinds[i].mhz = mhz ? (unsigned)strtoul(mhz, NULL, 10) : 0;
                kinds[i].name = info_value(infos, ninfos, "CoreType");
        }
        qsort(kinds, (size_t)nr, sizeof(*kinds), compare_kinds);
        /* kinds hwloc cannot tell apart (same efficiency and frequency) share a rank */
        for (int i = 0; i < nr; i++) {
                if (i > 0 && kinds[i].efficiency == kinds[i - 1].efficiency &&
                    kinds[i].mhz == kinds[i - 1].mhz)
                        kinds[i].rank = kinds[i - 1].rank;
                else
                        kinds[i].rank = nranks++;
                rank_of[kinds[i].index] = (int)kinds[i].rank;
        }
        if (nranks <= 1) {
                topology_note(t, "%d CPU kinds that hwloc does not rank: cores treated alike", nr);
                return;
        }
        t->ncore_kinds = nranks;
        t->core_kind_names = g_new0(char *, nranks);
        t->core_kind_max_mhz = g_new0(unsigned, nranks);
        for (int i = nr - 1; i >= 0; i--) { /* the first kind of a rank names it */
                t->core_kind_names[kinds[i].rank] = g_strdup(kinds[i].name);
                t->core_kind_max_mhz[kinds[i].rank] = kinds[i].mhz;
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                hwloc_const_cpuset_t cpus = core_obj[c]->cpuset;
                int k = cpus ? hwloc_cpukinds_get_by_cpuset(topo, cpus, 0) : -1;

                /* a core in no kind (or split over two) counts as the least performant */
                t->cores[c].kind_rank = k >= 0 && k < nr ? (unsigned)rank_of[k] : nranks - 1;
        }
}

/* The cluster core belongs to, as hwloc shows one (a Group of subtype Cluster: ARM's Kunpeng and
 * Ampere, whose cores have an L2 each), or NULL. */
static hwloc_obj_t cluster_of(hwloc_obj_t core)
{
        for (hwloc_obj_t o = core->parent; o && o->type != HWLOC_OBJ_PACKAGE && o->type != HWLOC_OBJ_MACHINE;
             o = o->parent)
                if (o->type == HWLOC_OBJ_GROUP && o->subtype && strcmp(o->subtype, "Cluster") == 0)
                        return o;
        return NULL;
}

void topology_load_l2(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj)
{
        g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
        unsigned n = 0;

        for (unsigned c = 0; c < t->ncores; c++) {
                hwloc_obj_t l2 = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L2CACHE, core_obj[c]);
                hwloc_obj_t cluster = cluster_of(core_obj[c]);
                /* an L2 of its own says nothing of its neighbours: the cluster does */
                bool own_l2 = l2 && l2->cpuset && core_obj[c]->cpuset &&
                              hwloc_bitmap_isequal(l2->cpuset, core_obj[c]->cpuset);
                gpointer key = l2 && !(own_l2 && cluster) ? (gpointer)l2
                               : cluster                  ? (gpointer)cluster
                                                          : (gpointer)core_obj[c],
                         v;

                if (!g_hash_table_lookup_extended(index, key, NULL, &v)) {
                        v = GUINT_TO_POINTER(n++);
                        g_hash_table_insert(index, key, v);
                }
                t->cores[c].l2 = GPOINTER_TO_UINT(v);
        }
}
