/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Finishing a plan once its vCPUs have PUs: pins, memory, emulator and the reason. */

#include "set-search.h"

/*
 * Pins, memory (spread, or counted where the request binds it), shared vCPUs, the emulator's CPUs and
 * the reason of plan, PLAN_PLACED or PLAN_OVERCOMMITTED on choice, its vCPUs already given PUs.
 */
void finish_plan(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                 const SetChoice *choice, Plan *plan);

/* The emulator and I/O threads of plan chosen again for where its vCPUs are now (a re-pin moved them):
 * what EmulatorPin= and measured load would give them, the user's own pins left alone. */
void finish_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan);
/* The same for a plan whose vCPUs stay where they are while other domains moved (policy_rehouse()): its
 * reason says anew whether they share its own cores and whether they (or its vCPUs) share cores with other
 * domains' realtime vCPUs, the rest of it stands. */
void finish_rehouse(const HostView *v, const PlacementRequest *req, Plan *plan);

/* Whether req, kept to some nodes by its <vcpu cpuset> alone (nothing binds its memory), wants more memory
 * than those nodes have room for while the host has it: its vCPUs take cores inside the cpuset all the
 * same, and the rest of its memory goes where the kernel falls back (finish_spill()). */
bool finish_memory_spills(const HostView *v, const PlacementRequest *req, const Plan *plan);
/* Why a plan's nodes lack the room for memory nothing binds (finish_spill()'s reason says which). */
typedef enum SpillWhy {
        SPILL_MEMNODE, /* a guest cell's <memnode> took the room from the set's nodes */
        SPILL_CPUSET,  /* the set is the <vcpu cpuset>'s */
        SPILL_PINS,    /* the nodes are those of pins made outside placementd (policy_adopt()) */
} SpillWhy;
/* The memory of plan its set's nodes have no room for, counted on the other nodes nearest its vCPUs, where
 * the kernel falls back, and said in the reason (why). */
void finish_spill(const HostView *v, Plan *plan, SpillWhy why);

/* The reason of a PLAN_UNPLACEABLE plan; host: what every reachable node offers together. */
void finish_unplaceable(const HostView *v, const PlacementRequest *req, const SetLoad *host, Plan *plan);
/* Whether a guest cell's <memnode> names only nodes this host does not have: libvirt refuses to start such
 * a guest (it checks every <memnode> nodeset), so the plan is unplaceable, its reason naming the cells and
 * the nodes, nothing counted. */
bool finish_cell_memory_missing(const Topology *t, const PlacementRequest *req, Plan *plan);
