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
/* Fills t->pci from topo's PCI devices; t's nodes must be built. */
void topology_load_pci(Topology *t, hwloc_topology_t topo);
