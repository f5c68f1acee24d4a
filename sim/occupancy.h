/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Occupancy: the host as the resident plans leave it, for every policy alike (engine or baseline):
 * vCPUs counted per PU and per core, memory held per node.
 *
 * Pinned vCPUs (VCPU_PIN_CORE, VCPU_PIN_THREAD) count on their plan's vcpu_pu. vCPUs of a
 * VCPU_PIN_NODESET plan float over the CPUs of their pin (the plan's nodes less what the configuration
 * keeps from vCPUs; a plan without pins, a baseline's, over all of its nodes' PUs): they are scored as an
 * ideal scheduler would run them if they are all busy, each on the least loaded core of those nodes its
 * pin holds a PU of (then its least loaded PU of the pin), plans in arrival order; their vcpu_pu is
 * rewritten to that PU on every rebuild.
 */

#include <glib.h>

#include "plan.h"
#include "topology.h"

typedef struct Occupancy {
        const Topology *t;
        unsigned *pu_load;   /* [npus] */
        unsigned *core_load; /* [ncores] */
        uint64_t *node_used; /* [nnodes] bytes */
} Occupancy;

Occupancy *occupancy_new(const Topology *t);
void occupancy_free(Occupancy *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Occupancy, occupancy_free)

/* Recomputes everything from plans (Plan*, oldest first). */
void occupancy_rebuild(Occupancy *o, GPtrArray *plans);

uint64_t occupancy_node_free_memory(const Occupancy *o, unsigned node);
static inline unsigned occupancy_pu_node(const Topology *t, unsigned pu)
{
        return t->cores[t->pus[pu].core].node;
}
