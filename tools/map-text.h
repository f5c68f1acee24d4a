/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reads back the text host map (lib/hostmap.h, what GetHostMap returns and `placementctl map` prints)
 * of the host t into one owner per PU index of t, as host-svg.h takes it, and the domain names of its
 * legend. The map lists PUs by package, then node, core and thread; t says which PU each one is.
 */

#include <glib.h>

#include "topology.h"

/* known: the domain names the daemon lists (a name may hold the legend's ", B "). Returns 0, or
 * -EINVAL with *ret_error set when the text is not such a map of t. Caller frees *ret_owner (t->npus
 * entries) and unrefs *ret_names. */
int map_text_owners(const char *text, const Topology *t, const GPtrArray *known, int **ret_owner,
                    GPtrArray **ret_names, char **ret_error);
