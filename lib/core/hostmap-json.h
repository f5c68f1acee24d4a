/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The host map as data, for `placementctl map --json` and the offline `plan --json`: the facts of the text
 * map (lib/core/hostmap.h) in a shape a script reads without parsing brackets.
 */

#include <json-glib/json-glib.h>

#include "ledger.h"
#include "topology.h"

/* Adds to an object the builder has open (domains by their ledger key's order):
 *  "nodes": [{"node", "memory", "memory_reserved", "cpus": "0-15"}] (every node, memory-only ones with
 *           "cpus": ""),
 *  "cpus":  [{"cpu", "node", "package", "core_cpus": "0-1", "state", "domains": [name...]}], one per usable
 *           PU in topology order; state is "free", "reserved" (ReservedCPUs=, no domain on it), "domain"
 *           (one domain's vCPU or held emulator CPU) or "shared" (several domains),
 *  "hugepages" as hugepages_json_add() has it, when the host has pools.
 * reserved may be NULL. */
void hostmap_json_add(JsonBuilder *b, const Topology *t, const Ledger *l, const CpuSet *reserved);
