/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The NUMA locality of the host's PCI devices, from hwloc's PCI objects (on this host hwloc reads
 * sysfs; an XML export made by lstopo carries them too): what a domain that passes a device through is
 * placed near (Topology.pci).
 */

#include <hwloc.h>

#include "topology.h"

/* What hwloc must keep for topology_load_pci(): PCI devices (no bridges, no OS devices). Before load. */
void topology_pci_filter(hwloc_topology_t topo);
/* Fills t->pci from topo's PCI devices; t's nodes must be built. A device whose nodes have no usable
 * CPU gets its locality from topology_pci_nearest(). sysfs_root: the live host's file system root ("" for
 * "/"), whose sysfs names the node of a device hwloc hangs off the whole machine; NULL for a file or a
 * synthetic description. */
void topology_load_pci(Topology *t, hwloc_topology_t topo, const char *sysfs_root);
/* Once t's distances are set (topology_finish()): a device whose own nodes have no usable CPU is local to
 * the nodes with usable CPUs nearest to them, by the distance matrix; it has no locality when the
 * distances are only assumed or when every node with CPUs is as near. */
void topology_pci_nearest(Topology *t);
