/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Baselines: what operators do without placementd, reimplemented here ONLY to be scored next to the
 * engine. Each returns a Plan (vcpu_pu, nodes, node_memory, result) like policy_place() does, so the
 * same metrics score every policy. They read the host from an Occupancy, never from the engine.
 *
 *  first-fit   vCPU i on the lowest-numbered PU no vCPU holds (a pinning script's counter, reusing holes);
 *              when none is left, the least loaded PU. No numatune: memory is first-touch, on the vCPUs'
 *              nodes in proportion, spilling to the nearest nodes with room.
 *  numad       the node with most free memory (more nodes, by free memory, until the domain's memory
 *              and vCPU count fit in free memory and logical CPUs); vCPUs float over those nodes
 *              (VCPU_PIN_NODESET, scored as an ideal scheduler would run them); memory bound there.
 *  nova-prefer Nova's dedicated CPUs with cpu_thread_policy=prefer: the first node (in index order)
 *              with enough free PUs and memory, vCPUs packed on sibling threads (cores with most free
 *              threads first); a domain too big for one node is split evenly over 2, 4, 8... nodes (as
 *              hw:numa_nodes would), the first combination in index order that fits. Memory strict on
 *              those nodes. No overcommit of dedicated CPUs: when nothing fits it is unplaceable
 *              ("No valid host").
 * All three call a domain unplaceable when the host's free memory cannot hold it.
 */

#include "occupancy.h"
#include "plan.h"

typedef enum BaselineKind {
        BASELINE_FIRST_FIT,
        BASELINE_NUMAD,
        BASELINE_NOVA_PREFER,
        _BASELINE_MAX,
} BaselineKind;

Plan *baseline_place(BaselineKind k, const Occupancy *o, const PlacementRequest *req);
