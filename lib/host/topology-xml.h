/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A check of an hwloc XML topology before hwloc itself reads it. hwloc 2.9's XML import trusts its
 * input: fuzzing found documents that crash it (an unterminated root element; an object with a cpuset
 * but no complete_cpuset; an empty complete_cpuset; a cpuset outside its complete_cpuset) or make it
 * size a bitmap to a PU's or NUMA node's OS index (missing, or huge: gigabytes). Well-formed XML whose
 * objects carry the sets hwloc's own exports always carry, as hwloc writes them, and PUs and NUMA nodes
 * with an os_index of at most CPUSET_MAX, passes; anything else
 * is refused with a message naming the problem. Bitmaps are read by hwloc's own rules (hwloc_bitmap_sscanf):
 * an all-zero 32-bit word is written as nothing, so big hosts' sets read "0x00000003,,0x0".
 */

#include <glib.h>

/* An hwloc XML export of an 8192-PU host is a few MiB: anything far above is not a topology. */
#define TOPOLOGY_XML_MAX_BYTES (64u << 20)

/* Returns 0; -EPROTONOSUPPORT for XML of hwloc 4.0 or later, with a message that says how to export it
 * for 2.x; or -EINVAL. *ret_error is set on failure (caller frees). hwloc 2.x refuses 3.x XML too: the
 * caller rewrites that as 2.0 XML first (topology_xml_v3_to_v2()), and checks the rewrite. */
int topology_xml_precheck(const char *xml, gsize len, char **ret_error);
