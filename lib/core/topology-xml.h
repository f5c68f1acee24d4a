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

/* Returns 0; -EPROTONOSUPPORT for XML of hwloc 3.0 or later (which hwloc 2.x refuses), with a message
 * that says how to export it for 2.x; or -EINVAL. *ret_error is set on failure (caller frees). */
int topology_xml_precheck(const char *xml, gsize len, char **ret_error);

/* How long hwloc may take to read an XML file in topology_xml_trial_load(). */
#define TOPOLOGY_XML_TRIAL_SEC 30u

/*
 * hwloc crashes on malformed XML that the pre-check cannot know of. Before the caller loads XML that is
 * not this host's own, hwloc reads it in a child process (fork; the child loads and exits), so that a
 * crash or a hang ends the child, not the daemon or placementctl. The child runs hwloc (malloc and
 * all) after fork(), which is safe only while the caller has one thread: placementd and placementctl
 * load their topology before libvirt, D-Bus or anything else starts a thread; keep it so (a threaded
 * caller would need posix_spawn of a helper instead). Returns 0 when the child ended
 * normally (hwloc read the file, or refused it: the caller's own load says why); -EINVAL with
 * "hwloc crashed reading NAME (signal N, ...)" when it died by a signal; -ETIMEDOUT when it ran
 * longer than TOPOLOGY_XML_TRIAL_SEC; another negative errno when no child could be made.
 * *ret_error is set on failure (caller frees).
 */
int topology_xml_trial_load(const char *xml, gsize len, const char *name, char **ret_error);
