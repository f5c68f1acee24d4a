/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * SetScan: what every candidate node set of the topology's table offers under an occupancy, in explicit's
 * terms (free whole cores, free memory), and the questions the quality metrics ask of it. Up to 16 nodes
 * the sums are built over all node masks at once, so one update costs about 2^nnodes additions.
 */

#include <glib.h>
#include <stdint.h>

#include "occupancy.h"
#include "plan.h"

typedef struct SetScan SetScan;

SetScan *setscan_new(const Topology *t);
void setscan_free(SetScan *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SetScan, setscan_free)

/* What the host keeps from the guests, as the engine keeps it: a core with a thread the configuration
 * keeps from vCPUs (ReservedCPUs=, another kind under CoreKinds=performance-only: policy_keeps_pu()), that
 * no domain can run on now (unavailable_cpus) or outside the guests' cpuset (TopoCore.host_thread) is never
 * a free whole core, and MemoryReserve= of every node is never free. Before the next setscan_update(). */
void setscan_set_host(SetScan *s, const PlacementParams *params);

void setscan_update(SetScan *s, const Occupancy *o);

/* Nodes in the smallest candidate with at least vcpus free whole cores and memory free; 0 when none
 * (then no valid plan can give the domain a core of its own per vCPU). */
unsigned setscan_min_nodes_free(const SetScan *s, unsigned vcpus, uint64_t memory);
/* Nodes in the smallest candidate with memory free and at least vcpus cores in all (busy or not);
 * 0 when none. What a domain needs when the host has no free cores left for it. */
unsigned setscan_min_nodes_capacity(const SetScan *s, unsigned vcpus, uint64_t memory);
/* The most vCPUs, at memory_per_vcpu each, that some candidate holds on free whole cores and free memory:
 * the largest domain explicit would still place. */
unsigned setscan_largest_fit(const SetScan *s, uint64_t memory_per_vcpu);
