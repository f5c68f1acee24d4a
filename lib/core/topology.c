/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology.h"
#include "topology-build.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "distances.h"
#include "nodesets.h"
#include "size.h"
#include "string-table.h"

static const char *const node_kind_table[_NODE_KIND_MAX] = {
    [NODE_KIND_DRAM] = "dram", [NODE_KIND_HBM] = "hbm", [NODE_KIND_NVM] = "nvm",
    [NODE_KIND_CXL] = "cxl",   [NODE_KIND_GPU] = "gpu",
};
DEFINE_STRING_TABLE_LOOKUP(node_kind, NodeKind, _NODE_KIND_MAX)

void topology_note(Topology *t, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        g_ptr_array_add(t->notes, g_strdup_vprintf(fmt, ap));
        va_end(ap);
}

Topology *topology_alloc(const char *source)
{
        Topology *t = g_new0(Topology, 1);

        t->source = g_strdup(source);
        t->notes = g_ptr_array_new_with_free_func(g_free);
        t->all_pus = cpuset_new();
        return t;
}

void topology_free(Topology *t)
{
        if (!t)
                return;
        if (t->nodes)
                for (unsigned i = 0; i < t->nnodes; i++) {
                        cpuset_free(t->nodes[i].cpus);
                        cpuset_free(t->nodes[i].local_cpus);
                        g_free(t->nodes[i].hugepages);
                }
        if (t->packages)
                for (unsigned i = 0; i < t->npackages; i++)
                        cpuset_free(t->packages[i].nodes);
        g_free(t->nodes);
        g_free(t->packages);
        g_free(t->cores);
        g_free(t->pus);
        g_free(t->distance);
        cpuset_free(t->all_pus);
        if (t->notes)
                g_ptr_array_unref(t->notes);
        if (t->nodesets)
                nodeset_table_free(t->nodesets);
        g_free(t->pu_index_by_os);
        g_free(t->node_index_by_os);
        if (t->core_kind_names)
                for (unsigned i = 0; i < t->ncore_kinds; i++)
                        g_free(t->core_kind_names[i]);
        g_free(t->core_kind_names);
        g_free(t->core_kind_max_mhz);
        for (unsigned i = 0; t->pci && i < t->npci; i++) {
                cpuset_free(t->pci[i].nodes);
                cpuset_free(t->pci[i].sits_on);
        }
        g_free(t->pci);
        for (unsigned i = 0; t->caches && i < t->ncaches; i++)
                cpuset_free(t->caches[i].cpus);
        g_free(t->caches);
        g_free(t->source);
        g_free(t);
}

const CpuSet *topology_cache_cpus(const Topology *t, unsigned level, unsigned id)
{
        for (unsigned i = 0; t->caches && i < t->ncaches; i++)
                if (t->caches[i].level == level && t->caches[i].id == id)
                        return t->caches[i].cpus;
        return NULL;
}

int topology_pu_by_os(const Topology *t, unsigned os_index)
{
        if (t->pu_index_by_os)
                return os_index < t->pu_index_by_os_len ? t->pu_index_by_os[os_index] : -1;
        for (unsigned i = 0; i < t->npus; i++) /* built by hand, without the lookup table */
                if (t->pus[i].os_index == os_index)
                        return (int)i;
        return -1;
}

int topology_node_by_os(const Topology *t, unsigned os_index)
{
        if (t->node_index_by_os)
                return os_index < t->node_index_by_os_len ? t->node_index_by_os[os_index] : -1;
        for (unsigned i = 0; i < t->nnodes; i++)
                if (t->nodes[i].os_index == os_index)
                        return (int)i;
        return -1;
}

CpuSet *topology_bindable_nodes(const Topology *t, const CpuSet *node_indexes)
{
        CpuSet *s = cpuset_new();

        CPUSET_FOREACH (n, node_indexes)
                if ((unsigned)n < t->nnodes && !t->nodes[n].no_local_memory)
                        cpuset_add(s, t->nodes[n].os_index);
        return s;
}

/* Fills the OS index lookup tables; the OS indexes were checked to be at most CPUSET_MAX and unique. */
static void topology_index(Topology *t)
{
        unsigned len = 0;

        for (unsigned i = 0; i < t->npus; i++)
                len = MAX(len, t->pus[i].os_index + 1);
        t->pu_index_by_os_len = len;
        t->pu_index_by_os = g_new(int, MAX(len, 1u));
        for (unsigned i = 0; i < len; i++)
                t->pu_index_by_os[i] = -1;
        for (unsigned i = 0; i < t->npus; i++)
                t->pu_index_by_os[t->pus[i].os_index] = (int)i;

        len = 0;
        for (unsigned i = 0; i < t->nnodes; i++)
                len = MAX(len, t->nodes[i].os_index + 1);
        t->node_index_by_os_len = len;
        t->node_index_by_os = g_new(int, MAX(len, 1u));
        for (unsigned i = 0; i < len; i++)
                t->node_index_by_os[i] = -1;
        for (unsigned i = 0; i < t->nnodes; i++)
                t->node_index_by_os[t->nodes[i].os_index] = (int)i;
}

/*
 * Runs the distance matrix through distances_sanitize() and sets the verdict flags; frees matrix. Defaults
 * put nodes of one package nearer than nodes of different packages.
 */
static void topology_set_distances(Topology *t, uint32_t *matrix)
{
        g_autofree char *note = NULL;
        g_autofree unsigned *os = g_new(unsigned, MAX(t->nnodes, 1));
        DistanceVerdict v;

        for (unsigned i = 0; i < t->nnodes; i++)
                os[i] = t->nodes[i].os_index;
        v = distances_sanitize(t->nnodes, matrix, os, &t->distance, &note);
        g_free(matrix);
        t->distances_known = v == DISTANCES_OK;
        t->flat = v == DISTANCES_FLAT;
        if (v == DISTANCES_MISSING || v == DISTANCES_INVALID) {
                bool packages =
                    distances_assume_packages(t->nnodes, t->distance, t->packages, t->npackages) > 0;
                bool away = packages && distances_assume_locality(t, t->distance) > 0;
                if (packages && note) {
                        g_autofree char *memory_away =
                            away ? g_strdup_printf(
                                       ", %u from its memory-only nodes to those whose CPUs they do "
                                       "not serve",
                                       DISTANCES_MEMORY_AWAY)
                                 : NULL;
                        char *more = g_strdup_printf("%s, %u between nodes of one package%s", note,
                                                     TOPOLOGY_SAME_PACKAGE, memory_away ? memory_away : "");
                        g_free(note);
                        note = more;
                }
        }
        if (note)
                g_ptr_array_add(t->notes, g_steal_pointer(&note));
        if (v != DISTANCES_OK)
                return;
        for (unsigned i = 0; i < t->nnodes; i++)
                if (topology_distance(t, i, i) == TOPOLOGY_UNREACHABLE)
                        topology_note(t, "NUMA node %u is unreachable from itself: it is never offered",
                                      t->nodes[i].os_index);
}

/*
 * The stand-in node for CPUs local to no NUMA node is farther from every node, itself included, than
 * any two real nodes are: every set of real nodes ranks before any set holding it, and it is never a
 * set's nearest node.
 */
static void topology_push_no_local_node(Topology *t)
{
        uint32_t far = TOPOLOGY_REMOTE;

        if (t->flat)
                return;
        for (unsigned i = 0; i < t->nnodes; i++)
                for (unsigned j = 0; j < t->nnodes; j++) {
                        uint32_t d = topology_distance(t, i, j);
                        if (!t->nodes[i].no_local_memory && !t->nodes[j].no_local_memory &&
                            d != TOPOLOGY_UNREACHABLE)
                                far = MAX(far, d);
                }
        far += TOPOLOGY_LOCAL;
        for (unsigned i = 0; i < t->nnodes; i++)
                for (unsigned j = 0; j < t->nnodes; j++)
                        if (t->nodes[i].no_local_memory || t->nodes[j].no_local_memory)
                                t->distance[i * t->nnodes + j] = far;
}

/*
 * A memory-only node runs no vCPU: between it and a node with CPUs only the distance from the CPUs to it
 * counts (the initiator's row, the order the kernel's fallback for the CPUs' node follows), and its own
 * row takes those values. Ranked over both directions, an asymmetric table made {0,1} and {0,2} equal
 * when node 0 reaches node 2 at 20 and node 1 at 30, and the memory went to node 1.
 */
static void topology_memory_only_rows(Topology *t)
{
        g_autoptr(CpuSet) changed = cpuset_new();
        g_autofree char *list = NULL;

        if (!t->distances_known)
                return;
        for (unsigned m = 0; m < t->nnodes; m++) {
                if (t->nodes[m].ncores > 0)
                        continue;
                for (unsigned c = 0; c < t->nnodes; c++) {
                        uint32_t *back = &t->distance[m * t->nnodes + c];
                        if (t->nodes[c].ncores == 0 || *back == topology_distance(t, c, m))
                                continue;
                        cpuset_add(changed, t->nodes[m].os_index);
                        *back = topology_distance(t, c, m);
                }
        }
        if (cpuset_is_empty(changed))
                return;
        list = cpuset_format(changed);
        topology_note(t,
                      "distances from memory-only %s %s to the nodes with CPUs differ from those to %s: the "
                      "distances from the CPUs are used both ways",
                      cpuset_count(changed) > 1 ? "nodes" : "node", list,
                      cpuset_count(changed) > 1 ? "them" : "it");
}

void topology_finish(Topology *t, uint32_t *distance)
{
        topology_set_distances(t, distance);
        topology_memory_only_rows(t);
        topology_push_no_local_node(t);
        topology_index(t);
        t->nodesets = nodeset_table_new(t->nnodes, t->distance, t->flat);
}

Topology *topology_new_uniform(unsigned nnodes, unsigned cores_per_node, unsigned threads_per_core,
                               uint64_t memory_per_node, const uint32_t *distance)
{
        g_autoptr(Topology) t = NULL;
        g_autofree char *source = NULL;
        uint64_t npus = (uint64_t)nnodes * cores_per_node * threads_per_core;

        if (nnodes == 0 || nnodes > TOPOLOGY_NODES_MAX || cores_per_node == 0 || threads_per_core == 0 ||
            cores_per_node > CPUSET_MAX || threads_per_core > CPUSET_MAX || npus > CPUSET_MAX)
                return NULL;

        source = g_strdup_printf("uniform:%ux%ux%u", nnodes, cores_per_node, threads_per_core);
        t = topology_alloc(source);
        t->nnodes = t->npackages = t->nl3 = nnodes;
        t->ncores = nnodes * cores_per_node;
        t->npus = (unsigned)npus;
        t->max_threads = threads_per_core;
        t->nodes = g_new0(TopoNode, nnodes);
        t->packages = g_new0(TopoPackage, nnodes);
        t->cores = g_new0(TopoCore, t->ncores);
        t->pus = g_new0(TopoPu, t->npus);

        for (unsigned n = 0; n < nnodes; n++) {
                TopoNode *node = &t->nodes[n];

                node->os_index = n;
                node->memory = memory_per_node;
                node->core_first = n * cores_per_node;
                node->ncores = cores_per_node;
                node->npus = cores_per_node * threads_per_core;
                node->cpus = cpuset_new();
                t->packages[n].os_index = n;
                t->packages[n].nodes = cpuset_new();
                cpuset_add(t->packages[n].nodes, n);
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                TopoCore *core = &t->cores[c];

                core->node = core->package = core->l3 = c / cores_per_node;
                core->os_index = c;
                core->pu_first = c * threads_per_core;
                core->l2 = c;
                core->npus = threads_per_core;
                for (unsigned k = 0; k < threads_per_core; k++) {
                        unsigned p = c * threads_per_core + k;

                        t->pus[p].os_index = p;
                        t->pus[p].core = c;
                        cpuset_add(t->nodes[core->node].cpus, p);
                        cpuset_add(t->all_pus, p);
                }
        }
        topology_finish(t, distance ? g_memdup2(distance, sizeof(uint32_t) * nnodes * nnodes) : NULL);
        return g_steal_pointer(&t);
}

const TopoPciDevice *topology_pci_device(const Topology *t, uint64_t address)
{
        unsigned lo = 0, hi = t->npci;

        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;
                if (t->pci[mid].address == address)
                        return &t->pci[mid];
                if (t->pci[mid].address < address)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

const CpuSet *topology_pci_nodes(const Topology *t, uint64_t address)
{
        const TopoPciDevice *d = topology_pci_device(t, address);
        return d ? d->nodes : NULL;
}

void topology_nodes_distance(const Topology *t, const CpuSet *nodes, uint32_t *ret_max, double *ret_mean)
{
        uint64_t sum = 0, n = 0;
        uint32_t max = 0;

        CPUSET_FOREACH (a, nodes)
                CPUSET_FOREACH (b, nodes) {
                        uint32_t d = topology_distance(t, (unsigned)a, (unsigned)b);
                        max = MAX(max, d);
                        sum += d;
                        n++;
                }
        if (ret_max)
                *ret_max = max;
        if (ret_mean)
                *ret_mean = n ? (double)sum / (double)n : 0;
}

const char *topology_node_memory_text(const Topology *t, unsigned n, char *buf, unsigned len)
{
        if (!topology_node_memory_known(t, n)) {
                g_strlcpy(buf, "unknown", len);
                return buf;
        }
        return size_format(t->nodes[n].memory, buf, len);
}
