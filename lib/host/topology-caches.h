/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The host's L2 and L3 caches by the kernel's cache id (Topology.caches): resctrl allocates cache ways
 * and memory bandwidth per cache id, and a domain's <cachetune>/<memorytune> name those ids, so its
 * vCPUs are kept on the CPUs under them. hwloc reads the id from sysfs into each cache's os_index; an
 * lstopo export carries it.
 */

#include <hwloc.h>

#include "topology.h"

/* Fills t->caches from topo's L2 and L3 caches that have an id and a usable PU; t->all_pus must be
 * built. */
void topology_load_caches(Topology *t, hwloc_topology_t topo);
