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

/* Sets cores[].kind_rank and the kind table from hwloc's cpukinds; core_obj[c] is core c's object. */
void topology_load_core_kinds(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj);

/* Sets cores[].l2 to dense L2 cluster numbers (a core with no L2 known is a cluster of its own). */
void topology_load_l2(Topology *t, hwloc_topology_t topo, hwloc_obj_t *core_obj);
