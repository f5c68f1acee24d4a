/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Human-readable decisions, shared by placementctl and the daemon's demo output. */

#include "decision.h"
#include "plan.h"
#include "topology.h"

/* "node 0" or "nodes 0-1,3": a set of node OS indexes in the words the decision texts (plan, explain,
 * placementctl show) use for where vCPUs and memory went. Caller frees. */
char *decision_nodes_text(const CpuSet *os_nodes);

/* "start NAME (4 vCPUs, 4.0 GiB): placed on node 0 [explicit]" plus pins, memory, emulator and why,
 * each line ending in '\n'. Caller frees. */
char *plan_to_text(const Topology *t, const Plan *p);

/* What every human view of an advisory decision says of its pins, which nothing applied. */
#define DECISION_ADVISED_TEXT "advised (Apply=no): not applied"

/* The same for a daemon decision (its result, memory binding, errors; an advisory one says
 * DECISION_ADVISED_TEXT before its pins). Caller frees. */
char *decision_to_text(const Topology *t, const Decision *d);

/* The reasoning behind a plan: the ranked candidate node sets with their distances, free cores and
 * memory, which one won and by which rule, and any fallback. Caller frees. */
char *plan_explain(const Topology *t, const Plan *p);

/* decision_to_text() followed by plan_explain() of its plan (when it has one): the daemon's Explain().
 * Caller frees. */
char *decision_explain(const Topology *t, const Decision *d);
