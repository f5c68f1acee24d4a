/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The pieces that build a Topology, for its loaders (lib/host/topology-load.c) and
 * topology_new_uniform(): not for readers of a finished one.
 */

#include <stdint.h>

#include "topology.h"

/* An empty topology named source, with no notes yet. */
Topology *topology_alloc(const char *source);

/* Adds a note (what was odd about the source and how it was handled). */
void topology_note(Topology *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/*
 * Completes a topology whose nodes, cores and PUs are filled: sanitizes the distance matrix by node
 * index (NULL: defaults; taken over and freed), builds the OS index lookups and the node set table.
 */
void topology_finish(Topology *t, uint32_t *distance);
