/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-pci.h"
#include "pci.h"

#include <stdlib.h>

void topology_pci_filter(hwloc_topology_t topo)
{
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
}

static int compare_address(const void *pa, const void *pb)
{
        const TopoPciDevice *a = pa, *b = pb;
        return a->address < b->address ? -1 : a->address > b->address;
}

/* The indexes of the nodes with CPUs in nodeset (OS indexes), where vCPUs near the device can run; NULL
 * when there is none. */
static CpuSet *local_nodes(const Topology *t, hwloc_const_nodeset_t nodeset)
{
        g_autoptr(CpuSet) nodes = cpuset_new();
        int os;

        hwloc_bitmap_foreach_begin(os, nodeset)
        {
                int n = topology_node_by_os(t, (unsigned)os);
                if (n >= 0 && t->nodes[n].ncores > 0 && !t->nodes[n].no_local_memory)
                        cpuset_add(nodes, (unsigned)n);
        }
        hwloc_bitmap_foreach_end();
        return cpuset_is_empty(nodes) ? NULL : g_steal_pointer(&nodes);
}

void topology_load_pci(Topology *t, hwloc_topology_t topo)
{
        g_autoptr(GArray) devices = g_array_new(FALSE, FALSE, sizeof(TopoPciDevice));
        unsigned cpu_nodes = 0;
        hwloc_obj_t obj = NULL;

        for (unsigned i = 0; i < t->nnodes; i++)
                cpu_nodes += t->nodes[i].ncores > 0 && !t->nodes[i].no_local_memory;
        if (cpu_nodes < 2)
                return; /* one node: every device is as near as any other */
        while ((obj = hwloc_get_next_pcidev(topo, obj))) {
                const struct hwloc_pcidev_attr_s *a = &obj->attr->pcidev;
                hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(topo, obj);
                TopoPciDevice d;

                if (!parent || !parent->nodeset || a->dev > PCI_SLOT_MAX || a->func > PCI_FUNCTION_MAX)
                        continue;
                d.nodes = local_nodes(t, parent->nodeset);
                if (!d.nodes)
                        continue;
                if (cpuset_count(d.nodes) == cpu_nodes) { /* local to all: no locality */
                        cpuset_free(d.nodes);
                        continue;
                }
                d.address = pci_address(a->domain, a->bus, a->dev, a->func);
                g_array_append_val(devices, d);
        }
        g_array_sort(devices, compare_address);
        t->npci = devices->len;
        t->pci = (TopoPciDevice *)(void *)g_array_free(g_steal_pointer(&devices), t->npci == 0);
}
