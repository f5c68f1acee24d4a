/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-caches.h"

/* Whether caches already has one of this level and id (a broken export may repeat an id: the first
 * stands). */
static bool known(const GArray *caches, unsigned level, unsigned id)
{
        for (unsigned i = 0; i < caches->len; i++)
                if (g_array_index(caches, TopoCache, i).level == level &&
                    g_array_index(caches, TopoCache, i).id == id)
                        return true;
        return false;
}

void topology_load_caches(Topology *t, hwloc_topology_t topo)
{
        static const hwloc_obj_type_t types[] = {HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE};
        g_autoptr(GArray) caches = g_array_new(FALSE, FALSE, sizeof(TopoCache));

        for (unsigned k = 0; k < G_N_ELEMENTS(types); k++) {
                hwloc_obj_t obj = NULL;
                while ((obj = hwloc_get_next_obj_by_type(topo, types[k], obj))) {
                        TopoCache c = {.level = k + 2, .id = obj->os_index};
                        int os;

                        /* unified or data caches: resctrl's L2/L3 allocation is per such cache */
                        if (obj->os_index == HWLOC_UNKNOWN_INDEX || !obj->cpuset ||
                            obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
                                continue;
                        c.cpus = cpuset_new();
                        hwloc_bitmap_foreach_begin(os, obj->cpuset)
                        {
                                if (cpuset_has(t->all_pus, (unsigned)os))
                                        cpuset_add(c.cpus, (unsigned)os);
                        }
                        hwloc_bitmap_foreach_end();
                        if (cpuset_is_empty(c.cpus) || known(caches, c.level, c.id)) {
                                cpuset_free(c.cpus);
                                continue;
                        }
                        g_array_append_val(caches, c);
                }
        }
        t->ncaches = caches->len;
        if (t->ncaches)
                t->caches = (TopoCache *)(void *)g_array_free(g_steal_pointer(&caches), FALSE);
}
