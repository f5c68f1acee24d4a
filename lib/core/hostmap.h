/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A text map of the host: per package and node, every core as a bracket with one character per PU,
 * the letter of the domain counted on it ('.' free, '#' reserved for the host, '+' several domains),
 * under each node's line of memory held by domains, followed by a legend: the letters the map shows, and
 * the domains on '+' CPUs. Used by `placementctl plan` and `placementctl map`.
 */

#include "ledger.h"
#include "topology.h"

/* Caller frees. reserved may be NULL. */
char *hostmap_render(const Topology *t, const Ledger *l, const CpuSet *reserved);
/* Whether node n has cores in package pkg (a node may span packages: interleaved sockets, a VM). */
bool hostmap_node_in_package(const Topology *t, unsigned n, unsigned pkg);
