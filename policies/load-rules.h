/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where measured load decides (PlacementRequest.vcpu_busy, host_busy, pu_busy). Only when it matters:
 * a request with room for every vCPU is placed as without load (a core each). When cores are short,
 * the set is the nearest with a calm core (free, or running only idle vCPUs) per busy vCPU, and there
 * the busy vCPUs (LOAD_BUSY_THRESHOLD) go first, each to the core least busy with other threads, and
 * the idle ones after them the same way: the free cores left first, then they share, beside idle vCPUs
 * before busy ones. Busy host-side threads get a free core of their own on the domain's nodes (more,
 * then the domain's own idle siblings, until none of their threads is half busy), and such a core stays
 * theirs: no vCPU counts it as free while they keep it busy.
 */

#include "policy-internal.h"
#include "set-search.h"

/* Whether core c, which no vCPU holds, is kept busy by some domain's host-side threads (the request's
 * pu_busy sums to LOAD_BUSY_THRESHOLD or more on it): not a free core then. False without pu_busy. */
bool load_core_held(const HostView *v, unsigned c);

/* A busy fraction in hundredths: how the rules compare loads (exact to 0.01, no float equality). */
unsigned load_busy_key(double b);

/* Whether the request brings load the overcommit assignment should follow (by-core policies only). */
bool load_overcommit_applies(const HostView *v, bool by_core);

/*
 * Room as an overcommit by load counts it (load_overcommit_applies()): fills v->node_capacity with each
 * node's calm cores, the free ones and those whose vCPUs are all idle (measured), with a usable PU and no
 * reserved thread, and returns the request's busy vCPUs (every vCPU while its load is unknown). A busy
 * vCPU beside idle ones loses nothing, so the set for an overcommitted domain is the nearest with a calm
 * core per busy vCPU, not the nearest with memory. With every vCPU busy the calm cores are the free ones.
 */
unsigned load_calm_capacity(HostView *v);

/* What a busy vCPU beyond the cores of a set that are not calm counts: one more than any core can run. */
#define LOAD_NO_CORE 1e9
/* What a realtime vCPU's core (ledger_core_realtime()) counts on top of its load when sets are compared:
 * more than any core of ordinary vCPUs runs, so a set where the shared vCPUs would sit beside a FIFO vCPU
 * comes after one where they would not (overcommit_assign() takes such cores last too). */
#define LOAD_REALTIME_CORE 32.0
/* What a core with a reserved thread counts on top of its load when sets are compared: half a vCPU, as
 * overcommit_assign() ranks it (after a free core, before one another vCPU holds). */
#define LOAD_RESERVED_CORE 0.5
/* What a core whose every usable thread is held for another domain's QEMU threads counts on top of its
 * load (policy_core_wholly_held(): an isolated emulator's CPU on a host without SMT, where a vCPU would run
 * on that CPU): a busy vCPU's worth, when sets are compared and when overcommit_assign() ranks cores by
 * load; by count it ranks after a core of one vCPU. */
#define LOAD_HELD_CORE 1.0

/*
 * Per node, the loads of its allowed usable cores that are not calm, least busy first, a realtime vCPU's
 * core with LOAD_REALTIME_CORE more (load_node_busy_cores()).
 */
struct NodeBusyCores {
        double *load;    /* node by node, each node's in ascending order */
        unsigned *first; /* [nnodes + 1]: node n's are load[first[n]] to load[first[n + 1] - 1] */
};

/*
 * For an overcommit by load whose busy vCPUs outnumber the calm cores: fills out with the load
 * (load_core_busy()) of each allowed node's usable cores that are not calm. The busy vCPUs beyond the calm
 * cores share such cores, the least busy first, so among equally near sets the one whose least busy such
 * cores run least is where they lose least (SetSearch.node_busy). Free with load_node_busy_cores_clear().
 */
void load_node_busy_cores(const HostView *v, NodeBusyCores *out);
void load_node_busy_cores_clear(NodeBusyCores *c);

/* What the ledger's domains keep busy on core c: the request's measured pu_busy summed over the core's
 * PUs, or, without measurements, one busy vCPU per counted vCPU. The assignment by load
 * (overcommit_assign(), overcommit.h) ranks cores by it. */
double load_core_busy(const HostView *v, unsigned c);

/* When the request's host-side threads are busy (LOAD_HOST_REPIN_GAIN cores or more) and a vCPU of plan
 * is, pins the emulator to cores of plan's nodes that run nothing busy (a free core, else one whose vCPUs
 * are idle, its own or others'), free ones first, until no thread's worth their cores deliver (two on a core
 * of four or eight threads) is half busy; never a busy vCPU's sibling. When plan's nodes have no such core,
 * the first is one of the nearest node that has one among those the request allows (cores first, then
 * locality). Host-side threads not measured yet (PlacementRequest.host_unmeasured, under
 * EmulatorPin=siblings without CPUs kept for the host, not realtime) count as LOAD_HOST_UNMEASURED cores
 * busy and take cores of plan's nodes only. Returns true. False (plan unchanged) when no such core is left
 * or the rule does not apply. */
bool load_pick_emulator(const HostView *v, Plan *plan);

/*
 * A domain none of whose vCPUs is busy keeps its host-side threads where EmulatorPin= put them (out, OS
 * indexes; may be empty), with measured busy host-side load (LOAD_HOST_REPIN_GAIN cores or more) and
 * narrow (out is the siblings of its own cores or free cores, or empty), less the PUs of cores where
 * other domains' threads are half busy in all, and of the rest only as many cores, the first in order
 * with all their threads left, as carry that load without a busy thread's worth beyond the first thread
 * on any: a thin share makes every core it touches look calm to the next busy vCPU. Without narrow
 * (EmulatorPin=nodeset, or the housekeeping CPUs, which host-side threads share by design) out keeps all
 * it has. While their load would still put a busy thread's worth on some core beyond its first thread
 * (1.4 cores of vhost on the two threads of one core are a busy pair; 1.8 on one thread alone are nearly
 * two busy threads time-sharing it), or (narrow) nothing is left, they spread onto further cores of
 * plan's nodes that run nothing busy, cores of idle vCPUs before free ones; when none is left there for
 * threads that have no calm core at all, onto one of the nearest allowed node that has one
 * (nearest_host_core(), as for a busy domain's threads: an idle guest whose cores another guest's busy
 * vCPUs came to share had its vCPUs moved off its memory instead).
 * When no such core is left at all, out is left as it was.
 * Without measured busy host-side threads, or with a busy vCPU (load_pick_emulator()), out is left alone.
 */
void load_spread_idle_host(const HostView *v, const Plan *plan, CpuSet *out, bool narrow);

/* Says in plan's reason where load decided (an overcommit by load, a core of their own for busy
 * host-side threads). */
void load_note_reason(const HostView *v, bool by_core, Plan *plan);
