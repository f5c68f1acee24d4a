/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The guest shape of a domain definition, read beside domain-xml.c's parser: guest NUMA cells
 * (<cpu><numa><cell id cpus memory unit>) and hugepage backing (<memoryBacking><hugepages><page size
 * unit nodeset>). Elements are collected as the parser meets them; domain_xml_numa_check() then
 * validates them against the whole definition (the <vcpu> count may come after <cpu>).
 */

#include <glib.h>
#include <stdint.h>

#include "domain-xml.h"

/* More guest cells than QEMU accepts (MAX_NODES 128) with room to spare. */
#define DOMAIN_XML_MAX_CELLS 256u
/* Most <page> elements read from one <hugepages>: libvirt takes one per guest cell (their nodesets may not
 * overlap, and name cells the guest has) and one without a nodeset. */
#define DOMAIN_XML_MAX_PAGES (DOMAIN_XML_MAX_CELLS + 1u)

/* The value of attribute name among an element's names/values (GMarkup's arrays), or NULL. */
const char *domain_xml_attr(const char **names, const char **values, const char *name);
/* Bytes per unit of libvirt's memory unit names; NULL means KiB. Returns 0 or -EINVAL. */
int domain_xml_unit_multiplier(const char *unit, uint64_t *ret);

/* <cpu><numa><cell>: one guest cell. Sets *error when it is malformed. */
void domain_xml_numa_cell(DomainSpec *s, const char **names, const char **values, GError **error);
/*
 * <cpu><numa><cell><distances><sibling id= value=>: the guest's distance from the cell being read (the
 * last one) to cell id. Sets *error as libvirt refuses one: an id not below DOMAIN_XML_MAX_CELLS, a value
 * outside 10-255, a cell's distance to itself other than 10 or to another cell of 10. That the id names a
 * cell of the guest is domain_xml_numa_check()'s.
 */
void domain_xml_numa_sibling(DomainSpec *s, const char **names, const char **values, GError **error);
/* <memoryBacking><hugepages> (page == false) and its <page> children (page == true). */
void domain_xml_numa_hugepages(DomainSpec *s, bool page, const char **names, const char **values,
                               GError **error);
/*
 * After the whole definition is read: each guest cell's backing (DomainCell.hugepages/hugepage_size) as
 * libvirt resolves it from the <page> elements, and the domain's hugepage fields from those of its cells;
 * pages of the base size (4 KiB) are ordinary memory. Without cells, one size for the whole domain.
 */
void domain_xml_numa_pages(DomainSpec *s);
/* A <memory model='dimm|virtio-mem'> device of a guest cell: <target><size> (what it counts) and <node>,
 * its <source><pagesize> (bytes, 0: none) and <source><nodemask> (OS indexes, NULL: none). */
typedef struct DomainMemoryDevice {
        unsigned node;
        uint64_t bytes;
        uint64_t pagesize;
        CpuSet *nodemask;
} DomainMemoryDevice;
/*
 * After domain_xml_numa_pages(): each memory device's memory, backed as libvirt backs it
 * (qemuBuildMemoryBackendProps(): its own <source><pagesize>, else its cell's page; its own
 * <source><nodemask>, else its cell's <memnode>). A device its cell's backing covers (same kind, no
 * nodemask) is part of that cell; any other is a cell of its own (DomainCell.device), unless the guest
 * would then hold more kinds than two: then every device is part of its cell, and devices_in_cells says
 * so. The domain's hugepage fields follow.
 */
void domain_xml_numa_devices(DomainSpec *s, const GArray *devices);
/* Cross-checks cells against the vCPU count: vCPUs inside it, no vCPU in two cells, ids unique, the
 * ids their <distances> name those of cells. */
int domain_xml_numa_check(const DomainSpec *s, GError **error);
void domain_xml_numa_free(DomainSpec *s);
