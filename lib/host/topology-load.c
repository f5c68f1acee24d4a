/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-load.h"
#include "guest-cgroup.h"
#include "kernel-tiers.h"
#include "ret-error.h"
#include "topology-build.h"
#include "topology-kinds.h"
#include "topology-caches.h"
#include "topology-pci.h"
#include "topology-xml-trial.h"
#include "topology-xml-v3.h"
#include "topology-xml.h"

#include <errno.h>
#include <hwloc.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "file-read.h"

#define SYNTHETIC_PREFIX "synthetic:"
#define XML_MAX_BYTES    TOPOLOGY_XML_MAX_BYTES

typedef struct hwloc_topology HwlocTopology;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwlocTopology, hwloc_topology_destroy)
typedef struct hwloc_bitmap_s HwlocBitmap;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwlocBitmap, hwloc_bitmap_free)

/* A core as found in hwloc, before cores are grouped by node. */
typedef struct PreCore {
        hwloc_obj_t obj; /* the Core, or the PU itself when hwloc knows no cores */
        unsigned node;
        unsigned npus;
        bool orphan; /* not local to any NUMA node */
} PreCore;

/*
 * Number of PUs an hwloc synthetic description asks for (the product of its level arities, memory
 * children in brackets skipped), saturated; 0 when it cannot be read that simply (hwloc judges it then).
 * Lets absurd sizes be refused before hwloc builds millions of objects.
 */
static uint64_t synthetic_count_pus(const char *desc)
{
        uint64_t total = 1;
        const char *p = desc;
        bool any = false;

        for (;;) {
                const char *start, *end, *num, *paren = NULL;
                uint64_t v = 0;
                int depth = 0;

                while (g_ascii_isspace(*p))
                        p++;
                if (*p == '\0')
                        break;
                if (*p == '[') {
                        for (; *p; p++) {
                                if (*p == '[')
                                        depth++;
                                else if (*p == ']' && --depth == 0) {
                                        p++;
                                        break;
                                }
                        }
                        continue;
                }
                start = p;
                for (; *p && (depth > 0 || !g_ascii_isspace(*p)); p++) {
                        if (*p == '(') {
                                if (!paren)
                                        paren = p;
                                depth++;
                        } else if (*p == ')') {
                                depth--;
                        }
                }
                end = paren ? paren : p;
                num = memchr(start, ':', (size_t)(end - start));
                num = num ? num + 1 : start;
                if (num == end)
                        return 0;
                for (const char *q = num; q < end; q++) {
                        if (!g_ascii_isdigit(*q))
                                return 0;
                        v = MIN(v * 10 + (uint64_t)(*q - '0'), (uint64_t)UINT32_MAX);
                }
                total = v && total > UINT64_MAX / v ? UINT64_MAX : total * v;
                any = true;
        }
        return any ? total : 0;
}

/* Reads a whole XML file into a NUL-terminated buffer. */
static int read_xml(const char *path, char **ret, gsize *ret_len, char **ret_error)
{
        g_autofree char *buf = NULL, *why = NULL;
        size_t len = 0;
        int r = file_read_bounded(path, XML_MAX_BYTES, &buf, &len, &why);

        if (r < 0)
                return ret_error_set(ret_error, r, "%s: cannot read hwloc XML: %s%s", path, why,
                                     r == -EFBIG ? ", not a topology" : "");
        if (len == 0)
                return ret_error_set(ret_error, -EINVAL, "%s: invalid hwloc XML: the file is empty", path);
        *ret = g_steal_pointer(&buf);
        *ret_len = len;
        return 0;
}

/* The object a NUMA node is attached to (its first non-memory ancestor). */
static hwloc_obj_t numa_attachment(hwloc_obj_t numa)
{
        hwloc_obj_t a = numa->parent;

        while (a && hwloc_obj_type_is_memory(a->type))
                a = a->parent;
        return a;
}

/*
 * The object whose CPUs a NUMA node is local to: the one hwloc attaches it to or, when that has no CPUs
 * (hwloc 1.x exported a KNL's MCDRAM node in a Group of its own, of an empty cpuset, inside its cluster),
 * the first object above it that has some.
 */
static hwloc_obj_t numa_locality(hwloc_obj_t numa)
{
        hwloc_obj_t a = numa_attachment(numa);

        while (a && a->parent && (!a->cpuset || hwloc_bitmap_iszero(a->cpuset)))
                a = a->parent;
        return a;
}

/* Node index of the nearest NUMA node attached to obj or one of its ancestors, or -1. */
static int numa_local(GHashTable *attached, hwloc_obj_t obj)
{
        for (hwloc_obj_t a = obj; a; a = a->parent) {
                gpointer v;

                if (g_hash_table_lookup_extended(attached, a, NULL, &v))
                        return GPOINTER_TO_INT(v);
        }
        return -1;
}

/*
 * The node's hugepage pools: every page size hwloc lists above the smallest (the base page). hwloc's
 * local memory includes the pools, which general memory cannot use: they are taken out of it.
 */
static void load_hugepages(Topology *t, unsigned node, hwloc_obj_t obj)
{
        const struct hwloc_numanode_attr_s *a = &obj->attr->numanode;
        TopoNode *n = &t->nodes[node];
        uint64_t base = UINT64_MAX;

        for (unsigned k = 0; k < a->page_types_len; k++)
                base = MIN(base, a->page_types[k].size);
        for (unsigned k = 0; k < a->page_types_len; k++)
                if (a->page_types[k].size > base && a->page_types[k].count) {
                        const struct hwloc_memory_page_type_s *pt = &a->page_types[k];
                        uint64_t bytes;
                        topology_node_set_hugepages(t, node, pt->size, pt->count);
                        bytes = topology_node_hugepage_bytes(t, node, pt->size);
                        n->memory = n->memory > bytes ? n->memory - bytes : 0;
                }
}

static int build_nodes(Topology *t, hwloc_topology_t topo, GHashTable *attached,
                       hwloc_const_nodeset_t allowed, const char *guest, char **ret_error)
{
        g_autoptr(CpuSet) seen = cpuset_new();
        int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

        if (n <= 0)
                return ret_error_set(ret_error, -ENODEV, "%s: hwloc reports no NUMA node", t->source);
        if ((unsigned)n > TOPOLOGY_NODES_MAX)
                return ret_error_set(ret_error, -E2BIG, "%s: %d NUMA nodes, more than the %u supported",
                                     t->source, n, TOPOLOGY_NODES_MAX);
        t->nodes = g_new0(TopoNode, n);
        t->nnodes = (unsigned)n;
        for (unsigned i = 0; i < t->nnodes; i++) {
                hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
                hwloc_obj_t at = numa_attachment(obj), near;
                hwloc_const_cpuset_t local;
                TopoNode *node = &t->nodes[i];
                bool unknown;
                gpointer v;

                node->cpus = cpuset_new();
                if (obj->os_index == HWLOC_UNKNOWN_INDEX)
                        return ret_error_set(ret_error, -EINVAL, "%s: NUMA node L#%u has no OS index",
                                             t->source, i);
                /* Linux numbers nodes up to 1023; TOPOLOGY_NO_LOCAL_NODE, the stand-in for CPUs local to
                 * none, is the number above, and a real node of that number would be two nodes of one */
                if (obj->os_index >= TOPOLOGY_NODES_MAX)
                        return ret_error_set(
                            ret_error, -ERANGE,
                            "%s: NUMA node %u: OS index above %u, the highest Linux numbers", t->source,
                            obj->os_index, TOPOLOGY_NODES_MAX - 1);
                if (cpuset_has(seen, obj->os_index))
                        return ret_error_set(ret_error, -EINVAL, "%s: two NUMA nodes have OS index %u",
                                             t->source, obj->os_index);
                cpuset_add(seen, obj->os_index);
                node->os_index = obj->os_index;
                node->memory = obj->attr->numanode.local_memory;
                load_hugepages(t, i, obj);
                if (allowed && !hwloc_bitmap_isset(allowed, obj->os_index)) {
                        topology_note(t,
                                      "NUMA node %u is not in the allowed memory nodes%s%s: its memory "
                                      "is not counted",
                                      node->os_index, guest ? " of " : "", guest ? guest : "");
                        node->memory = 0;
                        node->nhugepages = 0;
                }
                /* an empty cpuset (a node of an hwloc 1.x export, read back) says nothing: the object it
                 * lies in does, unless that is the whole machine */
                local = obj->cpuset && !hwloc_bitmap_iszero(obj->cpuset) ? obj->cpuset : NULL;
                if (!local && (near = numa_locality(obj)) && near->parent)
                        local = near->cpuset;
                if (local && !hwloc_bitmap_iszero(local)) {
                        int os;
                        node->local_cpus = cpuset_new();
                        hwloc_bitmap_foreach_begin(os, local) cpuset_add(node->local_cpus, (unsigned)os);
                        hwloc_bitmap_foreach_end();
                }
                node->kind = topology_node_kind(obj, &unknown);
                if (unknown)
                        topology_note(t, "NUMA node %u has memory of unknown kind \"%s\": counted as DRAM",
                                      node->os_index, obj->subtype);
                if (node->kind == NODE_KIND_GPU)
                        topology_note(t, "NUMA node %u is GPU memory: never given to domains",
                                      node->os_index);
                /* The first DRAM node (by hwloc logical index) attached to an object gets its cores; the
                 * first node of another kind only when no DRAM node is attached there. */
                if (at &&
                    (!g_hash_table_lookup_extended(attached, at, NULL, &v) ||
                     (node->kind == NODE_KIND_DRAM && t->nodes[GPOINTER_TO_INT(v)].kind != NODE_KIND_DRAM)))
                        g_hash_table_insert(attached, at, GINT_TO_POINTER((int)i));
        }
        return 0;
}

/*
 * Appends the stand-in node for CPUs local to no NUMA node (their node is offline, or the export was
 * restricted): no memory, OS index TOPOLOGY_NO_LOCAL_NODE (above any Linux node number), never local to
 * anything; topology_finish() puts it farther than every real node so that sets use it last.
 */
static void add_no_local_node(Topology *t)
{
        TopoNode *node;

        t->nodes = g_renew(TopoNode, t->nodes, t->nnodes + 1);
        node = &t->nodes[t->nnodes++];
        *node = (TopoNode){
            .os_index = TOPOLOGY_NO_LOCAL_NODE,
            .cpus = cpuset_new(),
            .kind = NODE_KIND_DRAM,
            .no_local_memory = true,
        };
}

static void note_cpus(Topology *t, const CpuSet *cpus, const char *what)
{
        g_autofree char *list = NULL;
        unsigned n = cpuset_count(cpus);

        if (n == 0)
                return;
        list = cpuset_format(cpus);
        topology_note(t, "%u PU%s %s: %s", n, n == 1 ? "" : "s", what, list);
}

/*
 * Collects the usable PUs (allowed and online) in hwloc logical order and the cores they belong to,
 * in order of first appearance. pu_os[k] and pu_pre[k] describe the k-th usable PU.
 */
static int collect_pus(Topology *t, hwloc_topology_t topo, GHashTable *attached,
                       hwloc_const_cpuset_t allowed, const char *guest, GArray *pre, unsigned *pu_os,
                       unsigned *pu_pre, unsigned *ret_npus, char **ret_error)
{
        hwloc_const_cpuset_t online = hwloc_topology_get_topology_cpuset(topo);
        hwloc_const_cpuset_t complete = hwloc_topology_get_complete_cpuset(topo);
        g_autoptr(GHashTable) core_index = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autoptr(CpuSet) seen = cpuset_new();
        g_autoptr(CpuSet) disallowed = cpuset_new();
        g_autoptr(CpuSet) offline = cpuset_new();
        g_autoptr(CpuSet) orphans = cpuset_new();
        g_autoptr(HwlocBitmap) usable = hwloc_bitmap_alloc();
        unsigned n = 0, without_core = 0, dropped = 0;
        hwloc_obj_t obj = NULL;

        while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, obj))) {
                unsigned os = obj->os_index;
                hwloc_obj_t core;
                gpointer v;
                unsigned k;

                if (os == HWLOC_UNKNOWN_INDEX)
                        return ret_error_set(ret_error, -EINVAL, "%s: PU L#%u has no OS index", t->source,
                                             obj->logical_index);
                if (os > CPUSET_MAX)
                        return ret_error_set(ret_error, -ERANGE,
                                             "%s: PU %u: OS index above the %u supported", t->source, os,
                                             CPUSET_MAX);
                if (cpuset_has(seen, os))
                        return ret_error_set(ret_error, -EINVAL, "%s: two PUs have OS index %u", t->source,
                                             os);
                cpuset_add(seen, os);
                if (allowed && !hwloc_bitmap_isset(allowed, os)) {
                        cpuset_add(disallowed, os);
                        continue;
                }
                if (online && !hwloc_bitmap_isset(online, os)) {
                        cpuset_add(offline, os);
                        continue;
                }
                hwloc_bitmap_set(usable, os);

                core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, obj);
                if (!core) {
                        core = obj;
                        without_core++;
                }
                if (g_hash_table_lookup_extended(core_index, core, NULL, &v)) {
                        k = GPOINTER_TO_UINT(v);
                } else {
                        PreCore c = {.obj = core};
                        int node = numa_local(attached, core);

                        if (node < 0) {
                                c.orphan = true;
                                node = (int)t->nnodes; /* the stand-in node add_no_local_node() adds */
                        }
                        c.node = (unsigned)node;
                        k = pre->len;
                        g_array_append_val(pre, c);
                        g_hash_table_insert(core_index, core, GUINT_TO_POINTER(k));
                }
                g_array_index(pre, PreCore, k).npus++;
                if (g_array_index(pre, PreCore, k).orphan)
                        cpuset_add(orphans, os);
                pu_os[n] = os;
                pu_pre[n] = k;
                n++;
        }

        /* Offline PUs are not objects at all in hwloc 2: they are in the complete cpuset only. */
        if (complete && online) {
                int os;

                for (os = hwloc_bitmap_next(complete, -1); os >= 0 && (unsigned)os <= CPUSET_MAX;
                     os = hwloc_bitmap_next(complete, os))
                        if (!hwloc_bitmap_isset(online, (unsigned)os))
                                cpuset_add(offline, (unsigned)os);
        }
        obj = NULL;
        while ((obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, obj)))
                if (obj->cpuset && !hwloc_bitmap_intersects(obj->cpuset, usable))
                        dropped++;

        {
                g_autofree char *what = g_strdup_printf("not in %s%s cpuset, excluded",
                                                        guest ? guest : "the allowed", guest ? "'s" : "");
                note_cpus(t, disallowed, what);
        }
        /* the live host knows offline CPUs; an export also leaves out what its cgroup did not allow */
        note_cpus(t, offline,
                  g_strcmp0(t->source, "host") == 0 ? "offline, excluded"
                                                    : "offline or outside the exported cpuset, excluded");
        if (dropped)
                topology_note(t, "%u core%s without any usable PU dropped", dropped,
                              dropped == 1 ? "" : "s");
        if (without_core)
                topology_note(t, "no core information for %u PU%s: each counts as a core of its own",
                              without_core, without_core == 1 ? "" : "s");
        if (!cpuset_is_empty(orphans)) {
                g_autofree char *list = cpuset_format(orphans);
                topology_note(t,
                              "PUs %s are not local to any NUMA node: kept apart as node %u (no local "
                              "memory), used last",
                              list, TOPOLOGY_NO_LOCAL_NODE);
                add_no_local_node(t);
        }
        if (n == 0)
                return ret_error_set(ret_error, -ENODEV, "%s: no usable CPU (%u offline, %u not allowed)",
                                     t->source, cpuset_count(offline), cpuset_count(disallowed));
        *ret_npus = n;
        return 0;
}

static gint compare_logical(gconstpointer a, gconstpointer b)
{
        hwloc_obj_t x = *(hwloc_obj_t const *)a, y = *(hwloc_obj_t const *)b;

        return x->logical_index < y->logical_index ? -1 : x->logical_index > y->logical_index;
}

/* Packages in hwloc logical order, only those holding a usable core; one stand-in when hwloc has none. */
static void build_packages(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj)
{
        g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autoptr(GPtrArray) found = g_ptr_array_new();
        unsigned without = 0;

        for (unsigned c = 0; c < t->ncores; c++) {
                hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, core_obj[c]);

                if (!pkg)
                        without++;
                else if (!g_hash_table_contains(index, pkg)) {
                        g_hash_table_add(index, pkg);
                        g_ptr_array_add(found, pkg);
                }
        }
        g_ptr_array_sort(found, compare_logical);
        t->npackages = found->len + (without ? 1 : 0);
        t->packages = g_new0(TopoPackage, t->npackages);
        for (unsigned i = 0; i < t->npackages; i++) {
                t->packages[i].nodes = cpuset_new();
                if (i < found->len) {
                        hwloc_obj_t pkg = g_ptr_array_index(found, i);
                        t->packages[i].os_index = pkg->os_index;
                        g_hash_table_insert(index, pkg, GUINT_TO_POINTER(i));
                } else {
                        t->packages[i].os_index = found->len ? HWLOC_UNKNOWN_INDEX : 0;
                }
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, core_obj[c]);
                unsigned p = pkg ? GPOINTER_TO_UINT(g_hash_table_lookup(index, pkg)) : found->len;

                t->cores[c].package = p;
                cpuset_add(t->packages[p].nodes, t->cores[c].node);
        }
        /* a memory-only node hwloc attaches inside a package (KNL's MCDRAM, HBM beside its socket) is of
         * that package: without a distance table it is assumed near the package's other nodes */
        for (unsigned n = 0; n < t->nnodes; n++) {
                hwloc_obj_t numa = t->nodes[n].ncores
                                       ? NULL
                                       : hwloc_get_numanode_obj_by_os_index(topo, t->nodes[n].os_index);
                hwloc_obj_t pkg =
                    numa ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, numa) : NULL;
                gpointer v;
                if (pkg && g_hash_table_lookup_extended(index, pkg, NULL, &v))
                        cpuset_add(t->packages[GPOINTER_TO_UINT(v)].nodes, n);
        }
        if (without)
                topology_note(t, "no package information for %u core%s: counted as one package", without,
                              without == 1 ? "" : "s");
}

/*
 * Dense L3 group numbers in core order; cores without an L3 cache are grouped by node and package (the
 * cores of one node in two packages share no cache: a node that spans packages keeps them apart).
 */
static void build_l3(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj)
{
        g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autofree int *node_group = g_new(int, (gsize)t->nnodes * t->npackages);
        unsigned without = 0, with = 0;

        for (unsigned i = 0; i < t->nnodes * t->npackages; i++)
                node_group[i] = -1;
        for (unsigned c = 0; c < t->ncores; c++) {
                hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L3CACHE, core_obj[c]);
                gpointer v;

                if (l3) {
                        with++;
                        if (!g_hash_table_lookup_extended(index, l3, NULL, &v)) {
                                v = GUINT_TO_POINTER(t->nl3++);
                                g_hash_table_insert(index, l3, v);
                        }
                        t->cores[c].l3 = GPOINTER_TO_UINT(v);
                } else {
                        unsigned g = t->cores[c].node * t->npackages + t->cores[c].package;

                        without++;
                        if (node_group[g] < 0)
                                node_group[g] = (int)t->nl3++;
                        t->cores[c].l3 = (unsigned)node_group[g];
                }
        }
        for (unsigned c = 0; with && c < t->ncores; c++)
                t->cores[c].no_l3 = !hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L3CACHE, core_obj[c]);
        t->l3_unknown = without && !with;
        if (without && !with)
                topology_note(t, "no L3 cache information: one L3 group per NUMA node and package");
        else if (without)
                topology_note(t,
                              "%u core%s without an L3 cache: grouped by NUMA node and package, used last",
                              without, without == 1 ? "" : "s");
}

/* The n x n matrix m grown by a last row and column (local 10, remote 20 until topology_finish()). */
static uint32_t *with_no_local_node(uint32_t *m, unsigned n)
{
        uint32_t *big = g_new(uint32_t, (gsize)(n + 1) * (n + 1));

        for (unsigned i = 0; i <= n; i++)
                for (unsigned j = 0; j <= n; j++)
                        big[i * (n + 1) + j] = i < n && j < n ? m[i * n + j]
                                               : i == j       ? TOPOLOGY_LOCAL
                                                              : TOPOLOGY_REMOTE;
        g_free(m);
        return big;
}

/*
 * The NUMA latency matrix by our node indexes, or NULL (with a note when it is unusable or when the XML
 * file held a matrix that hwloc dropped). Values >= UINT32_MAX become TOPOLOGY_UNREACHABLE.
 */
static uint32_t *read_distances(Topology *t, hwloc_topology_t topo, const char *xml)
{
        struct hwloc_distances_s *d = NULL;
        g_autofree bool *covered = NULL;
        uint32_t *m = NULL;
        /* hwloc's matrix covers the real nodes; the stand-in for CPUs without one (last) gets a row later */
        unsigned nr = 1, n = t->nnodes - (t->nodes[t->nnodes - 1].no_local_memory ? 1 : 0), ncovered = 0;
        bool bad = false;

        if (hwloc_distances_get_by_name(topo, "NUMALatency", &nr, &d, 0) < 0 || nr == 0) {
                nr = 1;
                if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &d,
                                                HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0 ||
                    nr == 0) {
                        unsigned all = 0;

                        if (xml && strstr(xml, "<distances") &&
                            hwloc_distances_get(topo, &all, NULL, 0, 0) == 0 && all == 0)
                                topology_note(t,
                                              "hwloc ignored the distance matrix in %s (it names objects "
                                              "that do not exist, or is malformed)",
                                              t->source);
                        return NULL;
                }
        }

        covered = g_new0(bool, n);
        m = g_new(uint32_t, (gsize)n * n);
        for (unsigned i = 0; i < d->nbobjs && !bad; i++) {
                hwloc_obj_t o = d->objs[i];

                if (!o || o->type != HWLOC_OBJ_NUMANODE || o->logical_index >= n ||
                    covered[o->logical_index])
                        bad = true;
                else {
                        covered[o->logical_index] = true;
                        ncovered++;
                }
        }
        if (bad) {
                topology_note(t, "the NUMA latency matrix holds objects other than distinct NUMA nodes: "
                                 "ignoring it");
                g_clear_pointer(&m, g_free);
        } else if (ncovered != n) {
                topology_note(t, "the NUMA latency matrix covers %u of %u NUMA nodes: ignoring it", ncovered,
                              n);
                g_clear_pointer(&m, g_free);
        } else {
                for (unsigned i = 0; i < n; i++)
                        for (unsigned j = 0; j < n; j++) {
                                hwloc_uint64_t v = d->values[i * n + j];
                                unsigned a = d->objs[i]->logical_index, b = d->objs[j]->logical_index;

                                m[a * n + b] = v >= UINT32_MAX ? TOPOLOGY_UNREACHABLE : (uint32_t)v;
                        }
        }
        hwloc_distances_release(topo, d);
        return m && n < t->nnodes ? with_no_local_node(m, n) : m;
}

/* The file system root the live host's own files are read under: hwloc's HWLOC_FSROOT, as hwloc reads
 * its sysfs (a fake tree in tests), else "" for "/". */
static const char *fs_root(void)
{
        const char *root = g_getenv("HWLOC_FSROOT");
        return root && strcmp(root, "/") != 0 ? root : "";
}

/*
 * The host as placementd runs on it: domains run in the guest cgroup (guest-cgroup.h), not in placementd's
 * own, so its cpuset decides (*ret_cpus, *ret_mems; NULL, every online CPU and node, while there is none)
 * and placementd's own allowed sets only earn a note when they are narrower. *ret_where names the cgroup
 * read, or is NULL.
 */
static void this_host_allowed(Topology *t, hwloc_topology_t topo, HwlocBitmap **ret_cpus,
                              HwlocBitmap **ret_mems, const char **ret_where)
{
        hwloc_const_cpuset_t own = hwloc_topology_get_allowed_cpuset(topo);
        hwloc_const_cpuset_t online = hwloc_topology_get_topology_cpuset(topo);
        const char *where = NULL;
        hwloc_bitmap_t cpus = NULL, mems = NULL;
        int r = guest_cgroup_sets(fs_root(), &cpus, &mems, &where);

        if (r == -EINVAL)
                topology_note(t, "the cpuset of %s cannot be read: every online CPU and node counts", where);
        if (own && online && !hwloc_bitmap_isincluded(online, own)) {
                char *list = NULL;
                if (hwloc_bitmap_list_asprintf(&list, own) >= 0)
                        topology_note(t, "placementd's own cgroup allows CPUs %s only: domains run in %s",
                                      list, r == 0 ? where : "the guest cgroup, which has every online CPU");
                free(list);
        }
        *ret_cpus = r == 0 ? cpus : NULL;
        *ret_mems = r == 0 ? mems : NULL;
        *ret_where = r == 0 ? where : NULL;
}

/* A node without CPUs that hwloc names no kind of (hwloc 2.9 names none for a CXL expander onlined
 * as system RAM) but the kernel puts in a slower memory tier than the nodes with CPUs is slower memory:
 * counted as CXL, a lower tier that MemoryTiers= decides on, not as first-tier DRAM. */
static void this_host_memory_tiers(Topology *t)
{
        unsigned len = 0, cpu_tier = G_MAXUINT;
        g_autofree unsigned *tier = kernel_memory_tiers(fs_root(), &len);

        if (!tier)
                return;
        for (unsigned i = 0; i < t->nnodes; i++)
                if (t->nodes[i].ncores > 0 && t->nodes[i].os_index < len)
                        cpu_tier = MIN(cpu_tier, tier[t->nodes[i].os_index]);
        if (cpu_tier == G_MAXUINT)
                return;
        for (unsigned i = 0; i < t->nnodes; i++) {
                TopoNode *n = &t->nodes[i];
                if (n->ncores > 0 || n->kind != NODE_KIND_DRAM || n->os_index >= len ||
                    tier[n->os_index] == G_MAXUINT || tier[n->os_index] <= cpu_tier)
                        continue;
                n->kind = NODE_KIND_CXL;
                topology_note(
                    t,
                    "NUMA node %u is in a slower memory tier than the CPUs' memory (memory_tier%u, "
                    "theirs memory_tier%u) and hwloc names no kind: counted as CXL memory",
                    n->os_index, tier[n->os_index], cpu_tier);
        }
}

/* The kernel's default hugepage size, as libvirt takes it for <hugepages/> without a size. */
static void this_host_hugepage_size(Topology *t)
{
        g_autofree char *path = g_strconcat(fs_root(), "/proc/meminfo", NULL);
        g_autofree char *text = NULL;

        if (file_read_bounded(path, 1 << 20, &text, NULL, NULL) == 0)
                t->default_hugepage_size = topology_meminfo_hugepage_size(text);
}

/* Whether an online thread of core lies outside allowed (the host keeps it from guests). */
static bool keeps_a_thread(hwloc_topology_t topo, hwloc_obj_t core, hwloc_const_cpuset_t allowed)
{
        g_autoptr(HwlocBitmap) kept = NULL;

        if (!allowed || !core->cpuset || core->type != HWLOC_OBJ_CORE)
                return false;
        kept = hwloc_bitmap_alloc();
        hwloc_bitmap_and(kept, core->cpuset, hwloc_topology_get_topology_cpuset(topo));
        hwloc_bitmap_andnot(kept, kept, allowed);
        return !hwloc_bitmap_iszero(kept);
}

/* The bytes of memory hwloc reports on the node with this OS index, before any of it is set aside
 * (hugepages) or left out (not in the allowed nodes). */
static uint64_t hwloc_node_memory(hwloc_topology_t topo, unsigned os_index)
{
        hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(topo, os_index);
        return obj ? obj->attr->numanode.local_memory : 0;
}

/* Whether node i has neither a usable CPU nor any memory at all (not merely memory it may not use). */
static bool node_is_empty(const Topology *t, hwloc_topology_t topo, unsigned i)
{
        const TopoNode *n = &t->nodes[i];

        return n->ncores == 0 && !n->no_local_memory && n->memory == 0 && n->nhugepages == 0 &&
               hwloc_node_memory(topo, n->os_index) == 0;
}

/*
 * Leaves out the nodes with neither a usable CPU nor memory: firmware declares them for memory that may
 * come later (an NVIDIA Grace Hopper's eight GPU partition nodes, hot-plug slots), and until it does they
 * can hold nothing. Kept, each would be a memory-only node of 0 B in every set the search builds. One note
 * names them; a domain binding one of them meets it as a node this host does not have. The node indexes
 * close up: cores, packages, PCI devices and the distance matrix (by node index, freed) follow. Returns the
 * matrix to use, or NULL when there is none.
 */
static uint32_t *drop_empty_nodes(Topology *t, hwloc_topology_t topo, uint32_t *matrix)
{
        g_autoptr(CpuSet) dropped = cpuset_new();
        g_autofree int *map = g_new(int, t->nnodes);
        g_autofree char *list = NULL;
        unsigned kept = 0, old = t->nnodes;
        uint32_t *m = NULL;

        for (unsigned i = 0; i < old; i++) {
                bool empty = node_is_empty(t, topo, i);
                map[i] = empty ? -1 : (int)kept++;
                if (empty)
                        cpuset_add(dropped, t->nodes[i].os_index);
        }
        if (kept == old)
                return matrix;
        for (unsigned i = 0; i < old; i++) {
                if (map[i] < 0) {
                        cpuset_free(t->nodes[i].cpus);
                        cpuset_free(t->nodes[i].local_cpus);
                        g_free(t->nodes[i].hugepages);
                } else {
                        t->nodes[map[i]] = t->nodes[i];
                }
        }
        t->nnodes = kept;
        for (unsigned c = 0; c < t->ncores; c++)
                t->cores[c].node = (unsigned)map[t->cores[c].node];
        for (unsigned p = 0; p < t->npackages; p++) {
                CpuSet *nodes = cpuset_new();
                CPUSET_FOREACH (n, t->packages[p].nodes)
                        if (map[n] >= 0)
                                cpuset_add(nodes, (unsigned)map[n]);
                cpuset_free(t->packages[p].nodes);
                t->packages[p].nodes = nodes;
        }
        for (unsigned d = 0; t->pci && d < t->npci; d++) {
                CpuSet *nodes;
                if (!t->pci[d].nodes) /* its own nodes have no CPU: by OS index (sits_on) */
                        continue;
                nodes = cpuset_new();
                CPUSET_FOREACH (n, t->pci[d].nodes)
                        if (map[n] >= 0)
                                cpuset_add(nodes, (unsigned)map[n]);
                cpuset_free(t->pci[d].nodes);
                t->pci[d].nodes = nodes;
        }
        if (matrix) {
                m = g_new(uint32_t, (gsize)kept * kept);
                for (unsigned i = 0; i < old; i++)
                        for (unsigned j = 0; j < old; j++)
                                if (map[i] >= 0 && map[j] >= 0)
                                        m[map[i] * kept + map[j]] = matrix[i * old + j];
                g_free(matrix);
        }
        list = cpuset_format(dropped);
        /* with no sizes at all, their memory is not known to be none: they are left out all the same,
         * since no size can be counted there (unknown_memory_sizes()) */
        topology_note(t, "NUMA node%s %s %s no usable CPU and %s: left out", kept + 1 == old ? "" : "s",
                      list, kept + 1 == old ? "has" : "have",
                      t->memory_sizes_unknown ? "no memory size" : "no memory");
        return m;
}

/* A node with CPUs and no memory at all (a PowerVM LPAR's memoryless node) gives its vCPUs only remote
 * memory: the note names the nearest node that has some. */
static void note_memoryless_nodes(Topology *t, hwloc_topology_t topo)
{
        for (unsigned i = 0; i < t->nnodes; i++) {
                const TopoNode *n = &t->nodes[i];
                uint32_t best = TOPOLOGY_UNREACHABLE;
                int nearest = -1;

                if (n->ncores == 0 || n->no_local_memory || n->memory || n->nhugepages ||
                    hwloc_node_memory(topo, n->os_index))
                        continue;
                for (unsigned j = 0; j < t->nnodes; j++) {
                        const TopoNode *o = &t->nodes[j];
                        uint32_t d = topology_distance(t, i, j);

                        if (j == i || o->no_local_memory || o->kind == NODE_KIND_GPU ||
                            (o->memory == 0 && o->nhugepages == 0) || d == TOPOLOGY_UNREACHABLE)
                                continue;
                        if (nearest < 0 || d < best) {
                                best = d;
                                nearest = (int)j;
                        }
                }
                if (nearest >= 0 && !t->distances_known)
                        topology_note(
                            t,
                            "NUMA node %u has CPUs but no memory: its vCPUs' memory is always remote "
                            "(on node %u, by the assumed distances)",
                            n->os_index, t->nodes[nearest].os_index);
                else if (nearest < 0)
                        topology_note(
                            t, "NUMA node %u has CPUs but no memory: its vCPUs' memory is always remote",
                            n->os_index);
                else
                        topology_note(
                            t,
                            "NUMA node %u has CPUs but no memory: its vCPUs' memory is always remote "
                            "(the nearest node with memory is node %u, at %" PRIu32 ")",
                            n->os_index, t->nodes[nearest].os_index, best);
        }
}

/* An export's allowed memory nodes that name none of its nodes (hwloc leaves them so when the exporting
 * process's set was never filled in): no process runs with no memory node, so the set says nothing. */
static hwloc_const_nodeset_t export_allowed_mems(Topology *t, hwloc_topology_t topo,
                                                 hwloc_const_nodeset_t allowed)
{
        if (!allowed || hwloc_bitmap_intersects(allowed, hwloc_topology_get_complete_nodeset(topo)))
                return allowed;
        topology_note(t, "the export's allowed memory nodes name none of its NUMA nodes (no process runs "
                         "so): ignored");
        return NULL;
}

/* An export that gives no node a memory size (hwloc's total for the machine is 0: made where the memory
 * could not be read, or with the sizes cut out) cannot say where memory fits: each node with CPUs, and
 * that the export allows, is taken to hold TOPOLOGY_MEMORY_UNKNOWN, so placements follow the CPUs alone
 * and memory is bound to their nodes. */
static void unknown_memory_sizes(Topology *t, hwloc_topology_t topo, hwloc_const_nodeset_t allowed)
{
        if (hwloc_get_root_obj(topo)->total_memory != 0)
                return;
        t->memory_sizes_unknown = true;
        for (unsigned n = 0; n < t->nnodes; n++) {
                TopoNode *node = &t->nodes[n];
                if (node->ncores > 0 && !node->no_local_memory && node->kind != NODE_KIND_GPU &&
                    (!allowed || hwloc_bitmap_isset(allowed, node->os_index)))
                        node->memory = TOPOLOGY_MEMORY_UNKNOWN;
        }
        topology_note(t,
                      "no NUMA node has a memory size in %s: memory is not counted, and each domain's "
                      "memory goes to the nodes of its vCPUs",
                      g_str_has_prefix(t->source, SYNTHETIC_PREFIX) ? "the description" : "the export");
}

/*
 * The notes for the nodes kept as memory-only nodes, once their kinds are final. A node hwloc attaches to
 * the same object as another (a package, a cluster) is local to the same CPUs, which the first DRAM node
 * there runs (build_nodes()): HBM or MCDRAM beside its cores, or, when both are DRAM, a source that does
 * not say which CPUs each serves (a Cluster-on-Die export without its groups, a memory expander hwloc
 * cannot name). A node of an hwloc 1.x export in a group of its own, with no CPUs, is local to the object
 * that group lies in (numa_locality()).
 */
static void note_memory_only_nodes(Topology *t, hwloc_topology_t topo)
{
        for (unsigned i = 0; i < t->nnodes; i++) {
                const TopoNode *node = &t->nodes[i], *runs = NULL;
                hwloc_obj_t numa, at, other = NULL;
                g_autofree char *cpus = NULL;

                if (node->ncores || node->no_local_memory)
                        continue;
                numa = hwloc_get_numanode_obj_by_os_index(topo, node->os_index);
                at = numa ? numa_locality(numa) : NULL;
                while (at && !runs &&
                       (other = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, other))) {
                        int j = other != numa && numa_attachment(other) == at
                                    ? topology_node_by_os(t, other->os_index)
                                    : -1;
                        if (j >= 0 && t->nodes[j].ncores)
                                runs = &t->nodes[j];
                }
                if (!runs) {
                        topology_note(t, "NUMA node %u has no usable CPU: kept as a memory-only node",
                                      node->os_index);
                        continue;
                }
                cpus = cpuset_format(runs->cpus);
                if (node->kind == NODE_KIND_DRAM && runs->kind == NODE_KIND_DRAM)
                        topology_note(
                            t,
                            "NUMA nodes %u and %u are both DRAM local to CPUs %s, and the source does "
                            "not say which of those CPUs each serves: node %u runs them, node %u is "
                            "kept as a memory-only node",
                            runs->os_index, node->os_index, cpus, runs->os_index, node->os_index);
                else
                        topology_note(
                            t,
                            "NUMA node %u (%s) is local to CPUs %s of node %u, which runs them: kept as "
                            "a memory-only node",
                            node->os_index, node_kind_to_string(node->kind), cpus, runs->os_index);
        }
}

static int topology_build(const char *source, hwloc_topology_t topo, const char *xml, Topology **ret,
                          char **ret_error)
{
        g_autoptr(Topology) t = topology_alloc(source);
        g_autoptr(GHashTable) attached = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autoptr(GArray) pre = g_array_new(FALSE, TRUE, sizeof(PreCore));
        g_autofree unsigned *pu_os = NULL, *pu_pre = NULL, *order = NULL, *filled = NULL, *next = NULL;
        g_autofree hwloc_obj_t *core_obj = NULL;
        unsigned npus = 0, min_threads = UINT_MAX;
        g_autoptr(HwlocBitmap) guest_cpus = NULL, guest_mems = NULL;
        hwloc_const_cpuset_t allowed_cpus = hwloc_topology_get_allowed_cpuset(topo);
        hwloc_const_nodeset_t allowed_mems = hwloc_topology_get_allowed_nodeset(topo);
        const char *guest = NULL;
        uint32_t *distance;
        int nall, r;

        if (g_str_equal(source, "host")) {
                this_host_allowed(t, topo, &guest_cpus, &guest_mems, &guest);
                this_host_hugepage_size(t);
                allowed_cpus = guest_cpus;
                allowed_mems = guest_mems;
        } else {
                allowed_mems = export_allowed_mems(t, topo, allowed_mems);
        }
        r = build_nodes(t, topo, attached, allowed_mems, guest, ret_error);
        if (r < 0)
                return r;

        nall = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        if (nall <= 0)
                return ret_error_set(ret_error, -ENODEV, "%s: hwloc reports no PU", source);
        if ((unsigned)nall > CPUSET_MAX)
                return ret_error_set(ret_error, -E2BIG, "%s: %d PUs, more than the %u supported", source,
                                     nall, CPUSET_MAX);
        pu_os = g_new(unsigned, nall);
        pu_pre = g_new(unsigned, nall);
        r = collect_pus(t, topo, attached, allowed_cpus, guest, pre, pu_os, pu_pre, &npus, ret_error);
        if (r < 0)
                return r;

        /* Cores grouped by node (stable: hwloc logical order inside a node), PUs of a core contiguous. */
        t->ncores = pre->len;
        t->npus = npus;
        t->cores = g_new0(TopoCore, t->ncores);
        t->pus = g_new0(TopoPu, t->npus);
        order = g_new(unsigned, t->ncores);
        core_obj = g_new(hwloc_obj_t, t->ncores);
        next = g_new0(unsigned, t->nnodes + 1);
        for (unsigned k = 0; k < pre->len; k++)
                next[g_array_index(pre, PreCore, k).node + 1]++;
        for (unsigned i = 0; i < t->nnodes; i++) {
                next[i + 1] += next[i];
                t->nodes[i].core_first = next[i];
                t->nodes[i].ncores = next[i + 1] - next[i];
        }
        for (unsigned k = 0; k < pre->len; k++) {
                const PreCore *p = &g_array_index(pre, PreCore, k);
                unsigned c = next[p->node]++;

                order[k] = c;
                core_obj[c] = p->obj;
                t->cores[c].node = p->node;
                t->cores[c].os_index = p->obj->os_index;
                t->cores[c].npus = p->npus;
                t->cores[c].host_thread = keeps_a_thread(topo, p->obj, allowed_cpus);
        }
        /* a node all of whose cores give the guests one thread (the host keeps every sibling) is made
         * that way: its cores are the guests' cores, not cores beside host work to use last */
        for (unsigned n = 0; n < t->nnodes; n++) {
                bool all = t->nodes[n].ncores > 0;
                for (unsigned c = t->nodes[n].core_first; c < t->nodes[n].core_first + t->nodes[n].ncores;
                     c++)
                        all = all && t->cores[c].host_thread;
                for (unsigned c = t->nodes[n].core_first;
                     all && c < t->nodes[n].core_first + t->nodes[n].ncores; c++)
                        t->cores[c].host_thread = false;
        }
        for (unsigned c = 0, first = 0; c < t->ncores; c++) {
                t->cores[c].pu_first = first;
                first += t->cores[c].npus;
                t->max_threads = MAX(t->max_threads, t->cores[c].npus);
                min_threads = MIN(min_threads, t->cores[c].npus);
        }
        filled = g_new0(unsigned, t->ncores);
        for (unsigned k = 0; k < npus; k++) {
                unsigned c = order[pu_pre[k]];
                unsigned p = t->cores[c].pu_first + filled[c]++;

                t->pus[p].os_index = pu_os[k];
                t->pus[p].core = c;
                t->nodes[t->cores[c].node].npus++;
                cpuset_add(t->nodes[t->cores[c].node].cpus, pu_os[k]);
                cpuset_add(t->all_pus, pu_os[k]);
        }

        build_packages(t, topo, core_obj);
        build_l3(t, topo, core_obj);
        topology_load_l2(t, topo, core_obj);
        topology_load_core_kinds(t, topo, core_obj);
        topology_load_pci(t, topo, g_str_equal(source, "host") ? fs_root() : NULL);
        topology_load_caches(t, topo);

        if (min_threads != t->max_threads)
                topology_note(t, "cores have %u to %u threads", min_threads, t->max_threads);
        if (g_str_equal(source, "host"))
                this_host_memory_tiers(t);
        else
                unknown_memory_sizes(t, topo, allowed_mems);

        distance = drop_empty_nodes(t, topo, read_distances(t, topo, xml));
        topology_finish(t, distance);
        topology_pci_nearest(t);
        topology_far_memory_kinds(t);
        note_memory_only_nodes(t, topo);
        note_memoryless_nodes(t, topo);
        *ret = g_steal_pointer(&t);
        return 0;
}

int topology_load(const char *source, Topology **ret, char **ret_error)
{
        g_autoptr(HwlocTopology) topo = NULL;
        g_autofree char *xml = NULL;
        const char *desc = NULL;
        gsize xml_len = 0;
        int r, e;

        if (!source || !*source)
                return ret_error_set(
                    ret_error, -EINVAL,
                    "empty topology source: expected \"host\", \"synthetic:DESC\" or an hwloc XML file");
        if (g_str_has_prefix(source, SYNTHETIC_PREFIX)) {
                uint64_t n;

                desc = source + strlen(SYNTHETIC_PREFIX);
                if (!*desc)
                        return ret_error_set(ret_error, -EINVAL, "%s: empty hwloc synthetic description",
                                             source);
                n = synthetic_count_pus(desc);
                if (n == UINT64_MAX)
                        return ret_error_set(ret_error, -E2BIG,
                                             "%s: describes too many PUs, more than the %u supported",
                                             source, CPUSET_MAX);
                if (n > CPUSET_MAX)
                        return ret_error_set(ret_error, -E2BIG,
                                             "%s: describes %" PRIu64 " PUs, more than the %u supported",
                                             source, n, CPUSET_MAX);
        } else if (!g_str_equal(source, "host")) {
                g_autofree char *why = NULL;
                r = read_xml(source, &xml, &xml_len, ret_error);
                if (r < 0)
                        return r;
                r = topology_xml_v3_to_v2(&xml, &xml_len, &why);
                if (r < 0)
                        return ret_error_set(ret_error, r, "%s: invalid hwloc XML: %s", source, why);
                r = topology_xml_precheck(xml, xml_len, &why);
                if (r == -EPROTONOSUPPORT)
                        return ret_error_set(ret_error, r, "%s: %s", source, why);
                if (r < 0)
                        return ret_error_set(ret_error, r, "%s: invalid hwloc XML: %s", source, why);
                g_clear_pointer(&why, g_free);
                r = topology_xml_trial_load(xml, xml_len, source, &why);
                if (r < 0)
                        return ret_error_set(ret_error, r, "%s", why);
        }

        if (hwloc_topology_init(&topo) < 0)
                return ret_error_set(ret_error, -ENOMEM, "%s: cannot initialize hwloc", source);
        /* Keep disallowed PUs so that what gets excluded can be told; they are filtered here. */
        hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
        topology_pci_filter(topo);
        /* An explicit backend also keeps HWLOC_XMLFILE / HWLOC_SYNTHETIC from replacing the source. */
        if (desc) {
                if (hwloc_topology_set_synthetic(topo, desc) < 0)
                        return ret_error_set(ret_error, -EINVAL, "%s: invalid hwloc synthetic description",
                                             source);
        } else if (xml) {
                errno = 0;
                if (hwloc_topology_set_xmlbuffer(topo, xml, (int)xml_len + 1) < 0) {
                        e = errno > 0 ? errno : EINVAL;
                        return ret_error_set(ret_error, -e, "%s: invalid hwloc XML: %s", source,
                                             g_strerror(e));
                }
        }
        errno = 0;
        if (hwloc_topology_load(topo) < 0) {
                e = errno > 0 ? errno : EINVAL;
                if (desc)
                        return ret_error_set(ret_error, -e, "%s: invalid hwloc synthetic description: %s",
                                             source, g_strerror(e));
                if (xml)
                        return ret_error_set(ret_error, -e, "%s: invalid hwloc XML: %s", source,
                                             g_strerror(e));
                return ret_error_set(ret_error, -e, "%s: hwloc cannot discover this machine: %s", source,
                                     g_strerror(e));
        }
        return topology_build(source, topo, xml, ret, ret_error);
}
