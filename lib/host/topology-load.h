/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "topology.h"

/*
 * Loads a topology through hwloc. source is "host" (this machine), "synthetic:DESC" (an hwloc synthetic
 * string), or a path to an hwloc XML file. Returns 0, or a negative errno with *ret_error set to a
 * message that names the source and the problem (caller frees).
 */
int topology_load(const char *source, Topology **ret, char **ret_error);
