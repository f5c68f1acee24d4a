/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-pci.h"
#include "file-read.h"
#include "pci.h"

#include <errno.h>
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

/* The OS indexes of the nodes in nodeset that the topology holds: those a device sits on when none of
 * them has a usable CPU. NULL when there is none. */
static CpuSet *own_nodes(const Topology *t, hwloc_const_nodeset_t nodeset)
{
        g_autoptr(CpuSet) nodes = cpuset_new();
        int os;

        hwloc_bitmap_foreach_begin(os, nodeset)
        {
                if (topology_node_by_os(t, (unsigned)os) >= 0)
                        cpuset_add(nodes, (unsigned)os);
        }
        hwloc_bitmap_foreach_end();
        return cpuset_is_empty(nodes) ? NULL : g_steal_pointer(&nodes);
}

static unsigned count_cpu_nodes(const Topology *t)
{
        unsigned n = 0;

        for (unsigned i = 0; i < t->nnodes; i++)
                n += t->nodes[i].ncores > 0 && !t->nodes[i].no_local_memory;
        return n;
}

/* The node the live host's sysfs gives the device (its numa_node), or -1 when it gives none. */
static int sysfs_numa_node(const char *root, const struct hwloc_pcidev_attr_s *a)
{
        g_autofree char *path = g_strdup_printf("%s/sys/bus/pci/devices/%04x:%02x:%02x.%x/numa_node", root,
                                                a->domain, a->bus, a->dev, a->func);
        g_autofree char *text = NULL, *why = NULL;
        size_t len = 0;
        char *end;
        long v;

        if (file_read_bounded(path, 64, &text, &len, &why) < 0)
                return -1;
        errno = 0;
        v = strtol(text, &end, 10);
        if (errno || end == text || v < 0 || v >= (long)TOPOLOGY_NODES_MAX)
                return -1;
        return (int)v;
}

/*
 * On the live host hwloc hangs a device off the whole machine when sysfs names no CPUs local to it, which
 * is what the kernel shows for a device on a node without CPUs (a CXL expander's, an HBM node's) or
 * whose CPUs are all offline: its numa_node still names the node. Sets d->sits_on to it when that node
 * has no usable CPU.
 */
static void machine_device_node(const Topology *t, const char *root, const struct hwloc_pcidev_attr_s *a,
                                TopoPciDevice *d)
{
        int os = sysfs_numa_node(root, a);
        int n = os >= 0 ? topology_node_by_os(t, (unsigned)os) : -1;

        if (n < 0 || t->nodes[n].ncores > 0 || t->nodes[n].no_local_memory)
                return;
        g_clear_pointer(&d->nodes, cpuset_free);
        g_clear_pointer(&d->sits_on, cpuset_free);
        d->sits_on = cpuset_new();
        cpuset_add(d->sits_on, (unsigned)os);
}

void topology_load_pci(Topology *t, hwloc_topology_t topo, const char *sysfs_root)
{
        g_autoptr(GArray) devices = g_array_new(FALSE, FALSE, sizeof(TopoPciDevice));
        unsigned cpu_nodes = count_cpu_nodes(t);
        hwloc_obj_t obj = NULL;

        if (cpu_nodes < 2)
                return; /* one node: every device is as near as any other */
        while ((obj = hwloc_get_next_pcidev(topo, obj))) {
                const struct hwloc_pcidev_attr_s *a = &obj->attr->pcidev;
                hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(topo, obj);
                TopoPciDevice d;

                if (!parent || !parent->nodeset || a->dev > PCI_SLOT_MAX || a->func > PCI_FUNCTION_MAX)
                        continue;
                d.nodes = local_nodes(t, parent->nodeset);
                /* its nodes have no usable CPU: topology_pci_nearest() finds the nearest that have */
                d.sits_on = d.nodes ? NULL : own_nodes(t, parent->nodeset);
                if (sysfs_root && !parent->parent)
                        machine_device_node(t, sysfs_root, a, &d);
                if (!d.nodes && !d.sits_on)
                        continue;
                if (d.nodes && cpuset_count(d.nodes) == cpu_nodes) { /* local to all: no locality */
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

/* The nodes with usable CPUs nearest to the nodes (OS indexes) in sits_on, node indexes; NULL when no
 * node of sits_on is left, or no node with CPUs is reachable from them. */
static CpuSet *nearest_cpu_nodes(const Topology *t, const CpuSet *sits_on)
{
        g_autoptr(CpuSet) nodes = cpuset_new();
        uint32_t best = TOPOLOGY_UNREACHABLE;

        for (unsigned c = 0; c < t->nnodes; c++) {
                uint32_t d = TOPOLOGY_UNREACHABLE;

                if (t->nodes[c].ncores == 0 || t->nodes[c].no_local_memory ||
                    topology_distance(t, c, c) == TOPOLOGY_UNREACHABLE)
                        continue;
                /* from the CPUs to the device's node, as for memory-only nodes (topology_finish()) */
                CPUSET_FOREACH (os, sits_on) {
                        int m = topology_node_by_os(t, (unsigned)os);
                        if (m >= 0)
                                d = MIN(d, topology_distance(t, c, (unsigned)m));
                }
                if (d == TOPOLOGY_UNREACHABLE || d > best)
                        continue;
                if (d < best)
                        cpuset_clear(nodes);
                best = d;
                cpuset_add(nodes, c);
        }
        return cpuset_is_empty(nodes) ? NULL : g_steal_pointer(&nodes);
}

void topology_pci_nearest(Topology *t)
{
        unsigned cpu_nodes = count_cpu_nodes(t), kept = 0;

        for (unsigned i = 0; i < t->npci; i++) {
                TopoPciDevice *d = &t->pci[i];

                if (d->sits_on) {
                        /* assumed distances say nothing of which node is nearest */
                        d->nodes = t->distances_known ? nearest_cpu_nodes(t, d->sits_on) : NULL;
                        if (!d->nodes || cpuset_count(d->nodes) == cpu_nodes) { /* no locality */
                                cpuset_free(d->nodes);
                                cpuset_free(d->sits_on);
                                continue;
                        }
                }
                t->pci[kept++] = *d;
        }
        t->npci = kept;
        if (kept == 0)
                g_clear_pointer(&t->pci, g_free);
}
