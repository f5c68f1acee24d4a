/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * hwloc 3.0's XML (<topology version="3.x">, what `lstopo --of xml` of hwloc 3 writes) rewritten as the
 * 2.0 XML hwloc 2.x reads, with the same meaning for everything placementd reads: objects and their sets,
 * OS indexes, memory and page types, caches, groups, the I/O tree (bridges, PCI devices, OS devices),
 * distances, memory attributes, CPU kinds and info attributes. What 3.0 changed:
 *  - the root is <topology version="3.0"> (hwloc 2.x refuses any version above 2);
 *  - objects carry id="objN" beside gp_index="N" (gp_index is taken from the id when it is missing);
 *  - an OS device's osdev_type is a bitmask (storage 1, memory 2, GPU 4, coprocessor 8, network 16,
 *    OpenFabrics 32, DMA 64) where 2.x wrote one number (block 0, GPU 1, network 2, OpenFabrics 3,
 *    DMA 4, coprocessor 5); storage and memory (DAX, CXL memory) devices become 2.x block devices;
 *  - the topology's own infos (Backend, OSName, HostName, ...) are <info> elements after the root object,
 *    where 2.x had them in the root object;
 *  - new object attributes 2.x does not know (cache_inclusive) are dropped, as is anything else 2.x
 *    does not read, and <info> inside <distances2>, <distances2hetero> and <memattr>, which hwloc 3
 *    ignores too.
 * Whitespace, distance matrices and every other element are kept as they are, so the sizes hwloc reads
 * from <indexes length="N"> still match. XML of other versions is left alone.
 */

#include <glib.h>

/* When *xml (*len bytes, NUL-terminated) is hwloc 3.x XML, replaces it with the 2.0 rewrite (freeing the
 * old text) and returns 1; returns 0 and leaves it when it is not (or its root cannot be found: the
 * pre-check says why); -EINVAL with *ret_error set (caller frees) when 3.x XML is malformed. */
int topology_xml_v3_to_v2(char **xml, gsize *len, char **ret_error);
