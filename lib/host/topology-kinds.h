/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What hwloc knows of the kinds of a host's parts, read into a Topology being built: the kind of each
 * NUMA node's memory (its subtype), the kind of each core (cpukinds, ranked most performant first) and
 * the L2 cluster each core shares (E-core modules).
 */

#include <hwloc.h>

#include "topology.h"

/* The kind of a NUMA node from its hwloc subtype; *ret_unknown is set when a subtype was not understood. */
NodeKind topology_node_kind(hwloc_obj_t numa, bool *ret_unknown);

/*
 * A node with memory and no CPU whose kind is DRAM (no subtype, or one that says DRAM) but that lies more
 * than TOPOLOGY_FAR_MEMORY_FACTOR times the local distance from every node with CPUs is not first-tier
 * memory: counted as a lower tier (NODE_KIND_CXL), with a note. An NVIDIA Grace Hopper's GPU memory, at 80
 * from the CPUs, looks so when hwloc cannot name it GPUMemory; a POWER drawer's memory-only node at 40 (4x)
 * and CXL expanders (under 3x) stay DRAM. Needs the distances (topology_finish()); does nothing when they
 * are assumed.
 */
#define TOPOLOGY_FAR_MEMORY_FACTOR 4u
void topology_far_memory_kinds(Topology *t);

/* Sets cores[].kind_rank and the kind table from hwloc's cpukinds; core_obj[c] is core c's object. */
void topology_load_core_kinds(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj);

/* Sets cores[].l2 to dense L2 cluster numbers (a core with no L2 known is a cluster of its own). */
void topology_load_l2(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj);
