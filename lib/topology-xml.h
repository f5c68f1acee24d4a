/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A check of an hwloc XML topology before hwloc itself reads it. hwloc 2.9's XML import trusts its
 * input: fuzzing found documents that crash it (an unterminated root element; an object with a cpuset
 * but no complete_cpuset; an empty complete_cpuset; a cpuset outside its complete_cpuset). Well-formed XML
 * whose objects carry the sets hwloc's own exports always carry, as hwloc writes them, passes; anything else
 * is refused with a message naming the problem.
 */

#include <glib.h>

/* Returns 0, or -EINVAL with *ret_error set (caller frees). */
int topology_xml_precheck(const char *xml, gsize len, char **ret_error);
