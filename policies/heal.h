/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Healing: after cores or memory free up, move running domains onto them without being asked. One
 * pass is pure: it takes the host as the ledger holds it and the domains it may move, and returns the
 * moves in the order to apply them, each planned on the ledger as the moves before it leave it.
 *
 * A move is taken only when it is worth a live re-pin, judged on the whole host and on the domain:
 *   - the domain improves (policy_improves(): fewer of its vCPUs share a core, fewer nodes, nearer
 *     nodes) or fewer of its busy vCPUs (LOAD_BUSY_THRESHOLD) contend with another busy thread;
 *     or its busy host-side threads (a PU where its share is LOAD_BUSY_THRESHOLD or more) run beside
 *     fewer busy threads; or as many contend with at least a tenth of a core less load beside its
 *     busy vCPUs (a busy neighbour traded for host-side threads each under half busy);
 *   - and the host gains past the hysteresis: at least min_gain fewer busy vCPUs contending on the host
 *     (idle vCPUs may then share more: that is the point); or, with that unchanged and no more vCPUs
 *     sharing a core, at least min_gain fewer busy host-side threads contending; or, with those
 *     unchanged, at least half a core less work lost to sharing (more busy vCPUs on a core than it has
 *     threads: four on two made two pairs); or, with neither more, one node fewer, or the mean node
 *     distance lower by min_distance_gain. With load unknown every vCPU
 *     is busy, so "busy vCPUs contending" is "vCPUs sharing".
 * Never one after which the cores it touches lose more work to sharing (HealScore.lost, the simulator's
 * measure: load_core_lost_with_host()), and one for fewer busy vCPUs contending wins back a twentieth of
 * a core of it at least.
 * The host's (contended, host threads contended, work lost, nodes, distance) therefore falls strictly
 * with every move, so repeated passes over unchanged load settle and never ping-pong; a per-domain
 * cool-down (the caller's clock) keeps changing load from moving one domain back and forth.
 *
 * A pass that was asked for (HealParams.undo_sharing: Rebalance) also undoes sharing that arose when
 * cores were short, however idle the vCPUs: a domain with a vCPU on a shared core moves while a core is
 * free when fewer of its vCPUs share one (policy_improves(), with it counted) or fewer share one with
 * another domain's vCPU (its vCPUs may then share the free core with each other) and, with busy vCPUs
 * and host-side threads contending no more, at least min_gain fewer vCPUs share a core on the host (the
 * tuple then has "shared" after the host threads), or as many and fewer of its own share one with another
 * domain's (four idle vCPUs of two guests on one core, another free, made two pairs: then "shared with
 * another domain's" after "shared"); never one after which more of its own busy vCPUs contend, nor one
 * after which its vCPUs run farther from their memory when none of its busy vCPUs shares a core and it
 * wins back less than HEAL_MIN_LOST_GAIN of the work lost to sharing (an idle guest's sharing alone buys
 * no remote memory: one whose bound memory cannot follow would run away from all of it for good; once
 * its load makes it contend, the move for that may take it there). Passes not
 * asked for do the same (but for sharing with another domain's vCPU, which they do not count apart from
 * sharing at all) while a quarter of the host's cores hold no vCPU (HEAL_SPARE_CORES_SHARE); with fewer free
 * they leave idle sharing alone: it costs little, and the free cores it would take serve busy arrivals
 * better (the simulator's figures, docs/performance.md).
 *
 * Constraints are the request's: a move is a policy_place() of the domain's own PlacementRequest or a
 * re-pin of it (policy_repin_local(), policy_repin_near()), so it stays inside <vcpu cpuset>, bound
 * memory stays where it is bound (the vCPUs stay on its nodes, except that a re-pin may run a busy one
 * on another node's calm core when placementd made the binding itself: PlacementRequest.memory_own)
 * and nothing outside them is ever proposed.
 */

#include "ledger.h"
#include "load.h"
#include "plan.h"
#include "topology.h"

typedef struct HealParams {
        unsigned max_moves;       /* at most this many moves per pass */
        uint64_t memory_budget;   /* bytes of memory that may change nodes per pass, all moves together */
        unsigned min_gain;        /* fewest busy vCPUs a move must stop contending (>= 1) ... */
        double min_distance_gain; /* ... or the least fall of the mean node distance, for nearness alone */
        bool undo_sharing;        /* an asked-for pass (Rebalance): see below */
} HealParams;

/* Defaults: what [Placement] Heal=yes takes when HealMaxMoves= and HealMemoryBudget= are not given. */
#define HEAL_DEFAULT_MAX_MOVES         2u
#define HEAL_DEFAULT_MEMORY_BUDGET     (UINT64_C(8) << 30)
#define HEAL_DEFAULT_MIN_GAIN          1u
#define HEAL_DEFAULT_MIN_DISTANCE_GAIN 1.0
/* A pass not asked for undoes sharing as an asked-for one does while at least 1 in this many of the
 * host's cores (those not wholly in ReservedCPUs=) hold no vCPU. */
#define HEAL_SPARE_CORES_SHARE 4u

/* One domain a pass may move. The ledger holds its current plan under key. */
typedef struct HealDomain {
        const char *key;          /* its ledger key */
        PlacementRequest request; /* its size, constraints and load, as a re-placement would ask */
        PolicyKind policy;        /* the policy it is placed with */
        bool cooling;             /* moved too recently (the caller's cool-down): not moved now */
        bool fixed; /* counted with its load but never moved (e.g. the caller has no request for it) */
} HealDomain;

/* One move a pass proposes. */
typedef struct HealMove {
        char *key;
        char *name;
        Plan *plan;            /* the new plan, made on the ledger the moves before it leave */
        char *why;             /* what improves, for the log and the report */
        uint64_t memory_moved; /* bytes of its memory that change nodes */
        bool threads_only;     /* only its host-side threads move: vCPU pins, nodes and memory stay */
} HealMove;

void heal_move_free(HealMove *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HealMove, heal_move_free)

/* How long a moved domain is left alone by later passes (the caller's clock, HealDomain.cooling): long
 * after a move that changed nodes for memory (moving it back would copy it again), short after one that
 * moved no memory (a re-pin, a few pin calls): it keeps changing load from moving either back and forth. */
#define HEAL_COOLDOWN_SEC       600u
#define HEAL_REPIN_COOLDOWN_SEC 60u
/* A re-pin this soon after the domain's last move doubles its cool-down (heal_cooling_note()); a quiet
 * spell this long starts over. */
#define HEAL_REPIN_SPELL_SEC (2u * HEAL_COOLDOWN_SEC)

/* A domain's cool-down as its caller keeps it (seconds on the caller's clock). */
typedef struct HealCooling {
        double until;     /* moved: left alone until then */
        double last_move; /* when it last moved; negative: never */
        unsigned repins;  /* re-pins (no memory moved) in a row, each soon after the last */
} HealCooling;

/*
 * The cool-down after move m of the domain whose cooling c is, at now; updates c. A re-pin (no memory
 * moved: its vCPUs, or its host-side threads alone) that follows the domain's last move within
 * HEAL_REPIN_SPELL_SEC doubles it (60, 120, 240, 480 s, then HEAL_COOLDOWN_SEC): thin host-side threads
 * on a calm core that a busy vCPU then takes were otherwise re-pinned after it every minute, and a busy
 * vCPU beside a neighbour whose load turns busy and idle every minute or two was moved off its node and
 * back again at every cool-down, for as long as the neighbour kept it up. The spell is fixed, not twice
 * the cool-down reached: with that, a neighbour busy for 100 s and idle for 150 s kept the moves just
 * over twice 60 s apart, and the cool-down at 60 s: 32 moves an hour.
 */
static inline void heal_cooling_note(HealCooling *c, const HealMove *m, double now)
{
        unsigned sec;

        if (m->memory_moved) {
                sec = HEAL_COOLDOWN_SEC;
                c->repins = 0;
        } else {
                c->repins =
                    c->last_move >= 0 && now - c->last_move < HEAL_REPIN_SPELL_SEC ? c->repins + 1 : 1;
                sec = MIN(HEAL_REPIN_COOLDOWN_SEC << MIN(c->repins - 1, 4u), HEAL_COOLDOWN_SEC);
        }
        c->last_move = now;
        c->until = now + sec;
}

/*
 * Whether the domain with plan p (in l) could gain from a move at all, cheaply, before a caller builds
 * its request: it is placed or overcommitted and spans nodes, or one of its vCPUs shares a core with
 * another vCPU, or (with measured load: vcpu_busy its vCPUs', NULL when unknown = all busy; pu_busy as
 * PlacementRequest.pu_busy takes it, NULL when nothing is measured) a busy vCPU's core also runs busy
 * host-side threads, its own or another domain's, or its emulator pin puts LOAD_HOST_REPIN_GAIN cores or
 * more of its own host_busy beside busy threads (on the cores of its busy vCPUs, or where other threads
 * are half busy in all: spread over siblings, a quarter on each, it still runs beside them), or over one
 * thread's worth of it on one core by as much (its host-side threads a busy pair themselves), or of it and
 * other domains' together on a core of its emulator pin (by pu_busy, less its own vCPUs there). A pass
 * judges the rest.
 */
bool heal_may_gain(const Topology *t, const Ledger *l, const Plan *p, const double *vcpu_busy,
                   double host_busy, const double *pu_busy);

/*
 * Whether a vCPU of the domain with plan p (in l) shares a core with another vCPU while a whole core vCPUs
 * may use (params: not reserved, kept by CoreKinds=, offline or the host's) runs nothing: the count alone
 * says it could gain, whatever its load, so a pass may move it before its load is known, and a pass that
 * undoes sharing looks at it.
 */
bool heal_shares_while_free(const Topology *t, const Ledger *l, const PlacementParams *params,
                            const Plan *p);

/*
 * When the next pass is to look again at domains a pass just moved (keys[0..n), each cooling until
 * until[i], heal_cooling_note()): the earliest until[i] of those that could still gain where the moves
 * left them (heal_may_gain() on l as it is after the moves; their load and pu_busy as lookup gives it,
 * NULL: nothing measured), or INFINITY when none. A domain held back by its cool-down is looked at again
 * when it ends; one the pass moved is cooling from now on too, and its new plan may still qualify (a busy
 * vCPU re-pinned beside an idle one while most cores are free): nothing else might look at it again (no
 * departure or load change need follow). The daemon and the simulator arm a pass for then alike.
 */
double heal_moved_look_again(const Topology *t, const Ledger *l, LoadLookup lookup, void *userdata,
                             const char *const *keys, const double *until, unsigned n);

/*
 * One heal pass over domains[0..n). Returns 0 and, in *ret_moves, a new array of HealMove* (possibly
 * empty; it frees them), at most hp->max_moves, with at most hp->memory_budget bytes moved in all; the
 * ledger is not changed. Returns -EINVAL with *ret_error when a domain's key is not in the ledger, is
 * given twice, or hp->min_gain is 0.
 */
int policy_heal(const Topology *t, const Ledger *l, const PlacementParams *p, const HealParams *hp,
                HealDomain *const *domains, unsigned n, GPtrArray **ret_moves, char **ret_error);
