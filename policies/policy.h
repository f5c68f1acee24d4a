/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The placement engine's entry point: a pure function from (topology, ledger, request, params) to a
 * plan. No I/O, no logging, no globals. It always returns a plan, whatever the request: when nothing
 * qualifies the plan says overcommitted or unplaceable and why.
 */

#include "ledger.h"
#include "plan.h"
#include "topology.h"

/* Returns a new plan (never NULL) made with params->policy. The ledger is not changed. */
Plan *policy_place(const Topology *t, const Ledger *l, const PlacementRequest *req,
                   const PlacementParams *params);

/*
 * Records pins someone else made (by hand, or the domain's own configuration) as a plan the ledger can
 * hold, so later placements avoid those CPUs. pins[i] holds vCPU i's CPUs (OS indexes). Each vCPU is
 * counted on the least loaded PU of its pins; a vCPU allowed on every host CPU floats and is not
 * counted. Memory is counted on the nodes the counted vCPUs run on, as far as it fits. Never NULL.
 */
Plan *policy_adopt(const Topology *t, const Ledger *l, const PlacementRequest *req, CpuSet *const *pins,
                   const PlacementParams *params);
/* The CPUs the definition keeps for QEMU's threads (req->emulator_cpus, its own <iothreadpin> cpusets)
 * that a core or two make and none of the plan's vCPUs runs on, added to plan->held_pus while those held
 * stay a core or two in all (the emulator's first, then the I/O threads' in order): what a placed or
 * adopted plan holds, for a plan adopted from a record too. Those of a thread that runs realtime itself
 * (req->realtime_emulator, realtime_iothreads) are added to plan->held_realtime_pus as well. */
void policy_hold_thread_cpus(const Topology *t, const PlacementRequest *req, Plan *plan);

/* reason (a plan's) without the I/O threads gone (deleted live) among those it says stay where the user
 * pins them ("I/O threads 2-3 stay where they were pinned outside placementd ..."): a newly allocated copy,
 * NULL when it names none of them. */
char *policy_reason_without_iothreads(const char *reason, const CpuSet *gone);

/*
 * Re-pinning inside the domain's own nodes, by measured load (req->vcpu_busy and req->pu_busy, the
 * ledger l without the domain): each busy vCPU of current on a core where other busy threads run moves
 * to the least busy core of its own node that runs nothing busy, inside the request's constraints.
 * Memory, nodes, emulator and I/O thread pins stay as they are. Returns the new plan, or NULL when the
 * load is not measured or no busy vCPU can move.
 */
Plan *policy_repin_local(const Topology *t, const Ledger *l, const PlacementRequest *req,
                         const PlacementParams *params, const Plan *current);

/*
 * policy_repin_local(), and a busy vCPU that finds no such core in its nodes moves to one on the node
 * nearest to its memory that has one (cores first, then locality); its memory stays where it is and the
 * node joins the plan's nodes. Never for a domain with guest NUMA cells or pinned by VcpuPin=nodeset
 * (its pins are the whole set), never outside the request's constraints (bound memory keeps its vCPUs
 * on its nodes, unless PlacementRequest.memory_own says placementd bound it). vCPUs away from the memory go
 * back to a free core of its nodes in both. Returns NULL when nothing moves.
 */
Plan *policy_repin_near(const Topology *t, const Ledger *l, const PlacementRequest *req,
                        const PlacementParams *params, const Plan *current);

/*
 * The emulator and I/O threads of current (a placed or overcommitted plan of req; neither realtime nor
 * with measured busy host-side threads) chosen again for the vCPUs where they run, on l (the ledger
 * without the domain): where EmulatorPin= puts them once other domains moved (a domain placed again
 * before others it shared CPUs with, after a reload). vCPUs, nodes and memory stay; the reason says anew
 * whether they share its own cores, or cores with other domains' realtime vCPUs. Returns the new plan, or
 * NULL when they would stay where they are.
 */
Plan *policy_rehouse(const Topology *t, const Ledger *l, const PlacementRequest *req,
                     const PlacementParams *params, const Plan *current);

/*
 * The reason of plan (committed to l under key) with what it says of other domains' realtime vCPUs and
 * threads beside its own, and of other domains' QEMU threads under its realtime vCPUs, said anew for l as
 * it is now: the domains named there may have left, others may have come. The notes stay where they were
 * in the reason, word for word while nothing changed, and go when no such domain is left; a note the
 * reason did not have (such a domain came after it was placed) goes at its end. A new string, never NULL.
 */
char *policy_realtime_neighbours_anew(const Topology *t, const Ledger *l, const PlacementParams *params,
                                      const char *key, const Plan *plan);
/* Whether policy_realtime_neighbours_anew() may have something to say of plan (committed to l): it runs a
 * vCPU or QEMU thread on a core where the ledger counts a realtime vCPU or thread, its own included. */
bool policy_may_name_realtime_neighbours(const Topology *t, const Ledger *l, const Plan *plan);
/* Whether reason has a note policy_realtime_neighbours_anew() says anew (a test of its words, no more). */
bool policy_reason_names_realtime_neighbours(const char *reason);

/*
 * Rebalancing: is candidate (planned with the domain's own plan released) better than current (the
 * plan the ledger holds for it now)? Better means, in order: fewer vCPUs sharing a core, fewer
 * nodes, a lower mean distance between its nodes. Returns true and a short human reason in *ret_why.
 */
bool policy_improves(const Topology *t, const Ledger *l, const Plan *current, const Plan *candidate,
                     char **ret_why);

/* The reason for a move to candidate's fewer nodes (a new string): the nodes the domain spans, its
 * memory's included, "spread over 3 nodes, now 2"; or, where they are as many (a plan that keeps a
 * binding names only its vCPUs' nodes, its memory staying on the others), the nodes of its vCPUs and
 * those of its memory, "its vCPUs on 3 nodes, now 1; its memory stays on 4"; or, its vCPUs on as many
 * nodes as before, which those are, "its vCPUs on node 0, now node 1; its memory stays on nodes 0-1". */
char *policy_fewer_nodes_why(const Topology *t, const Plan *current, const Plan *candidate);
/* The reason for a move to candidate's nearer nodes (a new string), its nodes counted as
 * policy_fewer_nodes_why() counts them: the mean distance of the nodes the domain spans, its memory's
 * included, "mean node distance 20.00, now 11.00"; where those are no nearer (its memory stays on its
 * nodes), that of its vCPUs' nodes, "mean distance of its vCPUs' nodes 20.00, now 11.00; its memory
 * stays on nodes 0,2"; else which nodes its vCPUs moved from and to. */
char *policy_nearer_nodes_why(const Topology *t, const Plan *current, const Plan *candidate);

/* Whether the configuration keeps PU pu (an index) from vCPUs: its CPU is in ReservedCPUs=, or its core is
 * of another kind than the fastest under CoreKinds=performance-only. */
bool policy_keeps_pu(const Topology *t, const PlacementParams *params, unsigned pu);
