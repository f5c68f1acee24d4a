/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Ledger: who holds what on one host. It keeps the plan of every domain it was given and derives from
 * them, per PU, how many vCPUs are counted there; per core, whether it is free; per node, how much
 * memory is reserved. Releasing a domain subtracts exactly what committing it added, so a later plan
 * sees the host as if the domain never ran. Keys are opaque strings (the daemon uses UUIDs, the
 * offline planner domain names).
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "plan.h"
#include "topology.h"

typedef struct Ledger Ledger;

Ledger *ledger_new(const Topology *t);
/*
 * A ledger to try plans on that starts as base holds the host, at the cost of its counts, not of its
 * plans: base's domains are looked up in base until released here; what is committed here is this
 * ledger's own. base must outlive it and not change while it lives. Changing it never changes base.
 */
Ledger *ledger_new_over(const Ledger *base);
void ledger_free(Ledger *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Ledger, ledger_free)

const Topology *ledger_topology(const Ledger *l);

/* Takes ownership of plan. Returns 0, -EEXIST when key is already held (plan is then freed), or
 * -EINVAL when the plan does not fit this topology (a PU or node index out of range). */
int ledger_commit(Ledger *l, const char *key, Plan *plan);
/* Returns 0 or -ENOENT. */
int ledger_release(Ledger *l, const char *key);
/* NULL when unknown. */
const Plan *ledger_lookup(const Ledger *l, const char *key);
unsigned ledger_count(const Ledger *l);
/* Keys in a stable (sorted) order; free the array with g_ptr_array_unref. */
GPtrArray *ledger_keys(const Ledger *l);
/* Calls fn for each domain, in no particular order (cheaper than ledger_keys() when order does not
 * matter). l must not change meanwhile. */
void ledger_foreach(const Ledger *l, void (*fn)(const char *key, const Plan *p, void *userdata),
                    void *userdata);

unsigned ledger_pu_load(const Ledger *l, unsigned pu);
unsigned ledger_core_load(const Ledger *l, unsigned core);
/* Realtime vCPUs (Plan.realtime) counted on core, and one for each domain whose realtime emulator or I/O
 * threads are pinned there, to a core or two none of its vCPUs runs on, by placementd
 * (Plan.realtime_emulator, realtime_iothreads) or by its definition (Plan.held_realtime_pus):
 * plan_realtime_thread_pus(). Such a thread preempts any vCPU beside it. */
unsigned ledger_core_realtime(const Ledger *l, unsigned core);
/* vCPUs of adopted plans (PLAN_ADOPTED: pinned by hand) counted on core: their owner chose those CPUs,
 * and the free siblings beside them are shared last. */
unsigned ledger_core_adopted(const Ledger *l, unsigned core);
/* vCPUs of plans placed under explicit (PLAN_PLACED, POLICY_EXPLICIT) counted on core: each was given a core
 * to itself, and the free siblings beside them are shared last too. */
unsigned ledger_core_whole(const Ledger *l, unsigned core);
/* No vCPU counted on core and none of its CPUs held. */
bool ledger_core_free(const Ledger *l, unsigned core);
/* CPUs held for a domain's host-side threads (plan_held_thread_pus(), as every view shows them:
 * Plan.held_pus, its definition's isolated emulator; and the core or two placementd pins a realtime emulator
 * or I/O threads to, ledger_core_realtime()): no vCPU counts there, so no sharing is counted, but the core
 * is not free for another domain. */
unsigned ledger_pu_held(const Ledger *l, unsigned pu);
unsigned ledger_core_held(const Ledger *l, unsigned core);
/* Domains whose emulator or I/O threads placementd pins to core, a core or two none of their vCPUs runs on
 * (Plan.emulator_pin, iothread_pin): still free for a vCPU, but one beside QEMU threads that work. */
unsigned ledger_core_threads(const Ledger *l, unsigned core);
/* Domains with at least one vCPU counted on core (ledger_core_load() counts their vCPUs). */
unsigned ledger_core_domains(const Ledger *l, unsigned core);
uint64_t ledger_node_memory(const Ledger *l, unsigned node);
/* Bytes domains hold in node's pool of hugepages of size (never part of ledger_node_memory). */
uint64_t ledger_node_hugepages(const Ledger *l, unsigned node, uint64_t size);
/* Free bytes in node's pool of hugepages of size: the pool less what domains hold there. */
uint64_t ledger_node_free_hugepages(const Ledger *l, unsigned node, uint64_t size);
/* True when no PU is counted and no memory reserved. */
bool ledger_is_empty(const Ledger *l);
