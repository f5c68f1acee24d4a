/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JSON shapes shared by the offline planner, the daemon's D-Bus answers and placementctl --json: one
 * decision object per domain and one topology summary, so scripts read the same keys everywhere.
 */

#include <json-glib/json-glib.h>

#include "cpu-stats.h"
#include "decision.h"
#include "ledger.h"
#include "load.h"
#include "plan.h"
#include "topology.h"

/* {"domain", "vcpus", "memory", "policy", "result", "nodes": [os...], "vcpu_pins": ["0-1",...],
 *  "memory_nodes": "0", "emulator_pin": "1", "shared_vcpus", "reason"}, and "iothreads": "1-2" (ids),
 *  "iothread_pin": "1" when the plan pins I/O threads, "held_cpus": "8-9" when the ledger holds CPUs for
 *  its QEMU threads (plan_held_thread_pus()), "vcpu_ids": [0, 2, ...] (libvirt's
 * id of each pin's vCPU) when they are not 0..n-1; with_candidates adds "candidates": [{"nodes",
 * "max_distance", "mean_distance", "free_cores", "free_pus", "free_memory", "qualifies", "chosen"}]. Adds
 * the members to an object the builder has open. A hugepage-backed plan adds "hugepage_size" (bytes per
 * page), one with guest cells "cells": [{"id", "vcpus": "0-3", "nodes": [os...], "memory_nodes": [os...],
 * "memory"}] ("memory_nodes": where its memory is counted, when known). */
void decision_json_add_members(JsonBuilder *b, const Topology *t, const Plan *p, gboolean with_candidates);
/* The members of a decision object no plan stands behind (a skipped domain that holds nothing): the
 * keys decision_json_add_members() writes, empty: "policy": "", "nodes": [], "vcpu_pins": [], ... */
void decision_json_add_unplanned(JsonBuilder *b, const char *name, unsigned vcpus, uint64_t memory,
                                 const char *result, const char *reason);
/* libvirt's id of the vCPU a decision object's "vcpu_pins"[i] pins: "vcpu_ids"[i] when the object has
 * one id per pin (a domain whose online vCPUs are not 0..n-1), else i. */
unsigned decision_json_vcpu_id(JsonObject *d, unsigned i);

/* {"source", "nodes", "packages", "cores", "pus", "threads_per_core", "distances_known", "notes": [...],
 *  "node_list": [{"node", "memory", "cpus", "cores", "package"...}], "distances": [[...]]} */
JsonNode *topology_to_json(const Topology *t, gboolean detailed);

/* "hugepages": [{"node", "page_size", "pages", "free_bytes"}], one per node and page size, when the host has
 * hugepage pools (nothing otherwise). Adds the member to an object the builder has open. */
void hugepages_json_add(JsonBuilder *b, const Topology *t, const Ledger *l);

/* Pretty or compact text of a node; caller frees. */
char *json_to_text(JsonNode *node, gboolean pretty);

/* Node OS indexes of a set of node indexes, as a new CpuSet. */
CpuSet *topology_nodes_to_os(const Topology *t, const CpuSet *node_indexes);

/* A daemon decision: the plan's members (when it has a plan) plus "uuid", "result" (the decision's),
 * "applied" (false for an advisory one: its pins, emulator pin and memory nodes are advice nothing
 * applied; true when they are what the domain runs on), "plan_result", "memory_binding", "apply_error",
 * "adopted", "pinned_by_hand", "decided_usec", "latency_usec". Adds the members to an object the
 * builder has open. */
void decision_json_add_decision(JsonBuilder *b, const Topology *t, const Decision *d,
                                gboolean with_candidates);

/* Adds "load": the domain's measured load (per-vCPU busy fractions, busy vCPUs, host-side cores busy,
 * seconds sampled), or null while it is unknown. */
void decision_json_add_load(JsonBuilder *b, const DomainLoad *l);
/* {"topology": {...}, "hugepages": ..., "decisions": [{decision members, "cpu_seconds": {"vcpu", "host",
 * "user", "system"}}]}: the daemon's GetDecisionsJSON. "hugepages" (hugepages_json_add()) is l's pools;
 * cpu_seconds is there for a decision whose UUID cpu (UUID -> DomainCpuStats, may be NULL) holds;
 * "load" (decision_json_add_load()) is loads[i], null when loads is NULL or loads[i] is.
 * with_candidates for one domain's answer. Compact; caller frees. */
char *decisions_to_json(const Topology *t, const Ledger *l, const Decision *const *ds, unsigned n,
                        gboolean with_candidates, GHashTable *cpu, const DomainLoad *const *loads);

/* One plan's members (decision_json_add_members() with candidates) as a compact object; caller frees. */
char *plan_to_json(const Topology *t, const Plan *p);
