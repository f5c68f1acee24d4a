/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared between the files that finish a plan (finish*.c): finish.c runs the steps in order, and each
 * other file does one of them. Nothing outside them includes this.
 */

#include "finish.h"
#include "policy-internal.h"

/* Where the emulator and I/O threads of a plan went (the last resort is said in the reason). */
typedef enum HousekeepingPlace {
        HOUSEKEEPING_NONE,       /* not pinned */
        HOUSEKEEPING_ELSEWHERE,  /* siblings, housekeeping CPUs, free cores or the node set */
        HOUSEKEEPING_OWN_CORES,  /* nothing else: the domain's own vCPU cores */
        HOUSEKEEPING_PLAIN_CORE, /* realtime, nothing in its set: the nearest core without a realtime vCPU */
} HousekeepingPlace;

/* finish.c: adds core's usable PUs to out. */
void finish_add_core_pus(const HostView *v, unsigned core, CpuSet *out);

/* finish-memory.c */
/* Counts bytes on os_nodes (OS indexes) as mode places them for vCPUs running on runs_on; false, counting
 * nothing, when they cannot hold it. */
bool finish_charge_bound(const HostView *v, const CpuSet *os_nodes, uint64_t bytes, MemoryMode mode,
                         const CpuSet *runs_on, Plan *plan);
/* Each node's share of hugepage-backed memory in whole pages. */
void finish_whole_pages(const HostView *v, Plan *plan);
/* The memory of a domain its <vcpu cpuset> keeps to nodes that cannot hold it, counted from there on as
 * the kernel falls back; false, counting nothing, when the whole host lacks it (or either kind of it). */
bool finish_spill_from_allowed(const HostView *v, const PlacementRequest *req, Plan *plan);
/* The room of the whole host (every node, inside the cpuset or not) for plan's memory of one kind: its
 * hugepages of the plan's size, or (ordinary) its other kind. */
uint64_t finish_host_room(const HostView *v, const Plan *plan, bool ordinary);

/* finish-housekeeping.c: pins the emulator and I/O threads of plan by EmulatorPin=; where they went. */
HousekeepingPlace finish_pin_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan);

/* finish-constraints.c */
/* "nodes 0-1", and the CPUs local to no NUMA node by their CPUs. */
char *finish_format_nodes(const Topology *t, const CpuSet *node_indexes);
/* What binds the request's memory, as the reason names it. */
const char *finish_memory_source_text(const PlacementRequest *req);
/* The nodes (OS indexes) of the guest cells' <memnode> elements that do not fall back to other nodes. */
CpuSet *finish_cells_binding_nodes(const PlacementRequest *req);
/* Appends to s that bound memory is beyond what its nodes have free, if it is; only: the nodes (OS
 * indexes) to look at, NULL for all. */
void finish_memory_short_note(const HostView *v, const PlacementRequest *req, const Plan *plan,
                              const CpuSet *only, GString *s);
/* Whether nodes (OS indexes) name nodes the host lacks, added to missing; whether all of them are. */
bool finish_memory_nodes_missing(const Topology *t, const CpuSet *nodes, CpuSet *missing);
bool finish_memory_nodes_all_missing(const Topology *t, const CpuSet *nodes);
/* What the request's own constraints did to the plan, for its reason ("" when nothing). */
char *finish_constraint_note(const HostView *v, const PlacementRequest *req, const Plan *plan);

/* finish-sharing.c: whom the plan's vCPUs that share a core share it with ("" when none do). */
char *finish_sharing_note(const HostView *v, const Plan *plan);

/* finish-reason.c */
/* What node n has free for the plan's memory before the plan (MemoryReserve= and hugepages counted). */
uint64_t finish_node_free_bytes(const HostView *v, const Plan *plan, unsigned n);
/* Whether the L3 fit ranked the chosen set above others of its group (a set of that group with room has
 * a node whose share of the vCPUs fits none of its L3 groups): the reason and explain's rule say so. */
bool finish_l3_decided(const SetChoice *choice);
/* The reason of a placed or overcommitted plan. */
char *finish_placed_reason(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                           const SetChoice *choice, const Plan *plan);
/* Says in the reason when the memory ends wholly on nodes none of the plan's vCPUs run on. */
void finish_remote_memory_note(const HostView *v, const PlacementRequest *req, Plan *plan);
/* What finish_spill() will count beside the plan's vCPUs, past every node's room, of the memory its set's
 * nodes have no room for (0 when the other nodes have room for it all): the reason, written before it,
 * counts it there too. */
uint64_t finish_spill_stuck(const HostView *v, const Plan *plan);

/* finish-caches.c: vCPUs moved under the caches of their guest cores, and the note that says so. */
void finish_match_cache_vcpus(const HostView *v, const PlacementRequest *req, Plan *plan);
/* The index in plan->cells of the guest cell of vCPU i, or -1 when the guest has no cells. */
int finish_vcpu_cell(const Plan *plan, unsigned i);
/* vCPUs i and j of the plan trade their PUs and pins. */
void finish_swap_vcpus(Plan *plan, unsigned i, unsigned j);
void finish_cache_note(const Topology *t, const PlacementRequest *req, Plan *plan);

/* finish-realtime.c */
/* Says when a realtime domain's emulator left its nodes for the nearest core without a realtime vCPU. */
void finish_realtime_emulator_note(const HostView *v, HousekeepingPlace where, Plan *plan);
/* Says when the plan's realtime vCPUs take cores another domain's QEMU threads are pinned to. */
void finish_realtime_over_others_threads(const HostView *v, Plan *plan);
/* Whether the emulator or I/O threads run on the plan's own realtime vCPUs' cores. */
bool finish_on_own_realtime_cores(const HostView *v, const Plan *plan);
/* Says which vCPUs and QEMU threads of the plan share cores with another domain's realtime vCPUs. */
void finish_beside_others_realtime(const HostView *v, Plan *plan);
/* reason (taken) without what finish_beside_others_realtime() added to it. */
char *finish_without_beside_realtime_note(char *reason);
/* Trades the PUs of a realtime vCPU on a core of the CPUs the user keeps for QEMU's threads and an ordinary
 * vCPU off them. */
void finish_realtime_off_user_threads(const HostView *v, const PlacementRequest *req, Plan *plan);
/* Says when QEMU's threads that run FIFO/RR themselves are pinned only where vCPUs run, ordinary ones among
 * them. */
void finish_realtime_threads_note(const HostView *v, const PlacementRequest *req, Plan *plan);
/* reason (taken) without what finish_realtime_threads_note() added to it. */
char *finish_without_realtime_threads_note(char *reason);
/* Says when the user pins the emulator or an I/O thread only where the plan's realtime vCPUs run. */
void finish_realtime_user_threads_note(const PlacementRequest *req, Plan *plan);

/* finish-kinds.c: says when the plan's vCPUs run on a less performant CPU kind (hybrid hosts), and why. */
void finish_kind_note(const HostView *v, Plan *plan);
