/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Topology: a read-only snapshot of the host, taken from hwloc once and then plain data. Loading it
 * (hwloc, XML files, synthetic descriptions) is the host layer's job: lib/host/topology-load.h.
 *
 * Everything is addressed by dense logical indexes (node i, core c, PU p) that count only what can
 * run vCPUs or hold memory; OS indexes (what libvirt and /sys speak) are kept beside them. Cores are
 * stored grouped by NUMA node, and the PUs of a core (its SMT siblings) are contiguous, so a node's
 * cores are cores[node.core_first .. core_first+ncores) and a core's PUs pus[core.pu_first .. +npus).
 *
 * Distances are by node index, distance[i * nnodes + j]; TOPOLOGY_UNREACHABLE marks a pair with no
 * path. A node whose own distance is unreachable is never offered to a domain.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"

#define TOPOLOGY_UNREACHABLE UINT32_MAX
#define TOPOLOGY_LOCAL       10u
#define TOPOLOGY_REMOTE      20u
/* Assumed between two nodes of one package when the host reports no usable distances. */
#define TOPOLOGY_SAME_PACKAGE 11u
/* Linux's MAX_NUMNODES (NODES_SHIFT 10). */
#define TOPOLOGY_NODES_MAX 1024u
/* The OS index of the stand-in node for CPUs local to no NUMA node: no Linux node has it. */
#define TOPOLOGY_NO_LOCAL_NODE TOPOLOGY_NODES_MAX

/* What a node with CPUs is taken to hold when the source gives no memory sizes (Topology.
 * memory_sizes_unknown): more than any guest asks for, and 1024 of them still sum below 2^64. */
#define TOPOLOGY_MEMORY_UNKNOWN (UINT64_C(1) << 50)

typedef struct NodeSetTable NodeSetTable;

/*
 * What a NUMA node's memory is, from hwloc's subtype of the node ("GPUMemory", "MCDRAM", "HBM", "NVM",
 * "SPM", "CXL-DRAM"...). DRAM is the first tier. GPU memory is never given to guests. HBM, NVM and CXL
 * are lower tiers: used first only when PlacementParams.memory_tiers names them, otherwise only when no
 * set of first-tier nodes has room.
 */
typedef enum NodeKind {
        NODE_KIND_DRAM,
        NODE_KIND_HBM,
        NODE_KIND_NVM,
        NODE_KIND_CXL,
        NODE_KIND_GPU,
        _NODE_KIND_MAX,
} NodeKind;

const char *node_kind_to_string(NodeKind k);
int node_kind_from_string(const char *s); /* -EINVAL when unknown */

typedef struct TopoPu {
        unsigned os_index;
        unsigned core; /* index into cores[] */
} TopoPu;

typedef struct TopoCore {
        unsigned node;    /* index into nodes[] */
        unsigned package; /* index into packages[] */
        unsigned l3; /* index of its L3 group (dense, host-wide); per node and package when it has no L3 */
        unsigned os_index; /* hwloc core OS index (informational) */
        unsigned pu_first; /* index into pus[] */
        unsigned npus;     /* SMT siblings: 1, 2, 4... */
        /* Added for hybrid CPUs (hwloc cpukinds) and cache clusters: */
        unsigned kind_rank; /* 0 = the most performant core kind of the host, 1 the next... */
        bool no_l3;         /* hwloc knows L3 caches on this host, and this core is under none */
        unsigned l2; /* index of its L2 cluster (dense, host-wide); a core of its own when none is known */
        /* added: one of its online threads is outside the guests' cpuset (the host keeps it: machine.slice,
         * an XML's allowed set), so it is not among pus[]: like a reserved sibling, the core is never
         * a whole free core for a domain */
        bool host_thread;
} TopoCore;

/* A pool of hugepages of one size on one node (what the kernel has set aside: nr_hugepages). */
typedef struct TopoPages {
        uint64_t size;  /* bytes per page */
        uint64_t count; /* pages in the pool */
} TopoPages;

typedef struct TopoNode {
        unsigned os_index;
        uint64_t memory; /* bytes of local memory */
        unsigned core_first;
        unsigned ncores; /* 0 for memory-only nodes (CXL, HBM) */
        unsigned npus;
        CpuSet *cpus; /* OS indexes of its PUs */
        /* Added for memory kinds and CPUs without a local node: */
        NodeKind kind;
        bool no_local_memory; /* a stand-in for CPUs local to no NUMA node: no memory, OS index not a node */
        /* Hugepage pools (added after the fields above); never counted in memory */
        TopoPages *hugepages; /* [nhugepages], sizes ascending */
        unsigned nhugepages;
        /* OS indexes of the CPUs hwloc puts the node beside (its locality: the CPUs of the object it is
         * attached to); for a memory-only node, which CPUs it serves. NULL: not known. */
        CpuSet *local_cpus;
} TopoNode;

/* A host PCI device and the NUMA nodes local to it (hwloc's locality: the nodes with usable CPUs of the
 * first CPU-side object above it). When that object's nodes have no usable CPU at load (memory-only
 * nodes, nodes outside the allowed ones, nodes whose CPUs are offline), the device is local to the nodes
 * with usable CPUs nearest to them by a known distance matrix. Devices local to every node with CPUs (or
 * to none) are not listed. */
typedef struct TopoPciDevice {
        uint64_t address; /* pci.h */
        CpuSet *nodes;    /* node indexes */
        /* added: OS indexes of the nodes it sits on when none of them has a usable CPU (nodes are then
         * the nearest that have), else NULL */
        CpuSet *sits_on;
} TopoPciDevice;

/* A cache with the kernel's id for it (/sys/devices/system/cpu/cpuN/cache/indexK/id, hwloc's os_index). */
typedef struct TopoCache {
        unsigned level; /* 2 or 3 */
        unsigned id;
        CpuSet *cpus; /* OS indexes of the usable PUs under it */
} TopoCache;

typedef struct TopoPackage {
        unsigned os_index;
        CpuSet *nodes; /* node indexes that hold its cores */
} TopoPackage;

typedef struct Topology {
        char *source; /* "host", a path, or "synthetic:..." */
        unsigned nnodes, npackages, ncores, npus, nl3;
        TopoNode *nodes;
        TopoPackage *packages;
        TopoCore *cores;
        TopoPu *pus;
        uint32_t *distance;   /* nnodes * nnodes */
        bool distances_known; /* false: defaults assumed (10 local, 11 in one package, 20 across) */
        bool flat;            /* no NUMA information at all: the nodes form one set */
        bool l3_unknown; /* hwloc knows no L3 cache here: an L3 group is a node's cores in one package */
        unsigned max_threads; /* most PUs in one core */
        CpuSet *all_pus;      /* OS indexes of every usable PU */
        GPtrArray *notes;     /* char*: what was odd about the source and how it was handled */
        NodeSetTable *nodesets;

        /* Private to topology.c: OS index -> pu/node index (-1 when absent), for the lookups below.
         * A Topology built by hand may leave them NULL; the lookups then search linearly. */
        int *pu_index_by_os;
        unsigned pu_index_by_os_len;
        int *node_index_by_os;
        unsigned node_index_by_os_len;

        /* Added for hybrid CPUs: hwloc cpukinds, ranked most performant first. 0 kinds when none is known
         * (every core then has kind_rank 0). */
        unsigned ncore_kinds;
        char **core_kind_names;      /* [ncore_kinds] hwloc's CoreType info, or NULL */
        unsigned *core_kind_max_mhz; /* [ncore_kinds] hwloc's FrequencyMaxMHz info, 0 when unknown */

        /* Added: the kernel's default hugepage size (Hugepagesize: in /proc/meminfo, what libvirt gives a
         * domain asking for hugepages without a size), bytes; 0 when not known (not the live host). */
        uint64_t default_hugepage_size;

        /* Added: the PCI devices with a NUMA locality, by ascending address (topology_pci_nodes()). */
        TopoPciDevice *pci;
        unsigned npci;

        /* Added: the L2 and L3 caches the kernel numbers (their sysfs cache id, which resctrl and a
         * domain's <cachetune>/<memorytune> name), for topology_cache_cpus(). */
        TopoCache *caches;
        unsigned ncaches;

        /* Added: the source gives no node's memory size (an hwloc export made without them): each node
         * with CPUs is taken to hold TOPOLOGY_MEMORY_UNKNOWN, so memory never decides, and views say
         * "unknown" rather than a size. */
        bool memory_sizes_unknown;
} Topology;

/* Builds a topology from plain arrays: for tests and the ranking fixtures. distance may be NULL
 * (defaults). Each node gets cores_per_node cores of threads_per_core PUs, numbered consecutively. */
/* Returns NULL when a count is 0 or the host would exceed the limits (CPUSET_MAX PUs, 1024 nodes). */
Topology *topology_new_uniform(unsigned nnodes, unsigned cores_per_node, unsigned threads_per_core,
                               uint64_t memory_per_node, const uint32_t *distance);

void topology_free(Topology *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Topology, topology_free)

static inline uint32_t topology_distance(const Topology *t, unsigned a, unsigned b)
{
        return t->distance[a * t->nnodes + b];
}

/* The largest and the mean distance between the nodes (indexes) in nodes, over every ordered pair, a node
 * with itself included (as the set table counts them); 0 for none. Either pointer may be NULL. */
void topology_nodes_distance(const Topology *t, const CpuSet *nodes, uint32_t *ret_max, double *ret_mean);

/* Sets node's pool of pages of size to count pages (adds the size when new, keeping sizes ascending). */
void topology_node_set_hugepages(Topology *t, unsigned node, uint64_t size, uint64_t count);
/* Bytes in node's pool of pages of size (0 when it has none). */
uint64_t topology_node_hugepage_bytes(const Topology *t, unsigned node, uint64_t size);
/* The page size a domain asking for hugepages without a size gets: the kernel's default when known
 * (Topology.default_hugepage_size), else the smallest pool size any node has, else 2 MiB (the x86-64
 * default). */
uint64_t topology_default_hugepage_size(const Topology *t);
/* The kernel's default hugepage size in /proc/meminfo text ("Hugepagesize:    2048 kB"), in bytes; 0
 * when it has none or cannot be read. */
uint64_t topology_meminfo_hugepage_size(const char *meminfo);

/* The node indexes local to the PCI device at address (pci.h), or NULL when the topology knows no
 * locality for it. */
const CpuSet *topology_pci_nodes(const Topology *t, uint64_t address);
/* The PCI device at address with its locality, or NULL when the topology knows none. */
const TopoPciDevice *topology_pci_device(const Topology *t, uint64_t address);

/* The usable CPUs (OS indexes) under the level-2 or level-3 cache with this kernel id, or NULL when the
 * topology knows no such cache. */
const CpuSet *topology_cache_cpus(const Topology *t, unsigned level, unsigned id);

/* Whether node n's memory size is known: false for the nodes given TOPOLOGY_MEMORY_UNKNOWN. */
static inline bool topology_node_memory_known(const Topology *t, unsigned n)
{
        return !t->memory_sizes_unknown || t->nodes[n].memory != TOPOLOGY_MEMORY_UNKNOWN;
}
/* Node n's memory as views print it: its size, or "unknown" (topology_node_memory_known()). */
const char *topology_node_memory_text(const Topology *t, unsigned n, char *buf, unsigned len);

/* Index of the PU with this OS index, or -1. */
int topology_pu_by_os(const Topology *t, unsigned os_index);
/* Index of the node with this OS index, or -1. */
int topology_node_by_os(const Topology *t, unsigned os_index);
/* The OS indexes of node_indexes that libvirt can bind memory to: a stand-in (no_local_memory) is not a
 * node libvirt knows. A new set. */
CpuSet *topology_bindable_nodes(const Topology *t, const CpuSet *node_indexes);
