/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A picture of the host drawn by hwloc's own lstopo: the topology is loaded again with hwloc, every PU
 * gets an lstopoStyle info attribute (its domain's colour, reserved or shared), one Misc object per
 * domain in its colour names it (the legend), the result is exported as hwloc XML and drawn with
 * `lstopo --if xml -i XML --of nativesvg FILE`.
 */

#include <glib.h>

#include "topology.h"

/* What runs on one PU: a domain index (0 and up) or one of these. */
#define HOST_PU_FREE     (-1)
#define HOST_PU_SHARED   (-2) /* vCPUs of several domains */
#define HOST_PU_RESERVED (-3) /* free, and reserved for the host */

/*
 * owner has t->npus entries, by PU index; names the domain names by domain index. Writes the SVG to
 * path. Returns 0 or a negative errno with *ret_error set (caller frees).
 */
int host_svg_write(const Topology *t, const int *owner, const GPtrArray *names, const char *path,
                   char **ret_error);
