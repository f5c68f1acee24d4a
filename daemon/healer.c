/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Healing in the daemon: after departures (debounced), one pure heal pass (policies/heal.h) over the
 * domains placementd placed, then each move applied like any placement: pins, numatune, emulator,
 * metadata, the decision and its signal. A moved domain cools down before it may move again.
 * The operator's Rebalance is the same pass run at once: its own move limit, no cool-down.
 */
#include <time.h>

#include "heal.h"
#include "log.h"
#include "manager-internal.h"
#include "size.h"
#include "virt-cleanup.h"
#include "virt-conn.h"
#include "virt-domain.h"

static uint64_t monotonic_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void on_heal(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        manager_heal(arg, NULL);
}

void healer_init(Manager *m)
{
        m->heal_ev = evtimer_new(m->base, on_heal, m);
        m->heal_moved = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

void healer_done(Manager *m)
{
        if (m->heal_ev)
                event_free(m->heal_ev);
        if (m->heal_moved)
                g_hash_table_destroy(m->heal_moved);
}

static bool heal_enabled(const Manager *m)
{
        return m->config->heal && m->config->apply && m->conn && m->config->heal_max_moves > 0;
}

/* Arms the heal pass seconds from now, unless one is armed already (it runs first, for both). */
static void heal_in(Manager *m, unsigned seconds, const char *why)
{
        struct timeval tv = {.tv_sec = seconds};

        if (!heal_enabled(m) || evtimer_pending(m->heal_ev, NULL))
                return;
        log_debug("Healing in %u s (%s)", seconds, why);
        evtimer_add(m->heal_ev, &tv);
}

void manager_heal_soon(Manager *m, const char *why)
{
        heal_in(m, m->config->heal_interval_sec, why);
}

void manager_heal_now(Manager *m, const char *why)
{
        heal_in(m, 0, why);
}

/* One domain of the pass: what policy_heal sees, and what applying its move needs. */
typedef struct HealEntry {
        HealDomain hd;
        char *key, *name;  /* copies: applying a move replaces the decision they came from */
        PlacerRequest *pr; /* NULL: fixed */
        virDomainPtr dom;
} HealEntry;

static void heal_entry_clear(HealEntry *e)
{
        g_autoptr(virDomain) dom = g_steal_pointer(&e->dom); /* released on return */

        g_free(e->key);
        g_free(e->name);
        placer_request_free(e->pr);
}

static bool cooling(const Manager *m, const char *uuid, uint64_t now)
{
        const uint64_t *until = g_hash_table_lookup(m->heal_moved, uuid);
        return until && now < *until;
}

/* One pass: healing's own (cool-down kept, moves reported as healed) or the operator's Rebalance. */
typedef struct HealPass {
        HealParams params;
        bool manual; /* asked for: no cool-down, and the report says where each domain went */
        uint64_t now;
        GString *report;
} HealPass;

/* Fills e for decision d: movable (with its request read from libvirt) or fixed (counted with its load). */
static void entry_init(Manager *m, HealEntry *e, const Decision *d, const double *pu_busy,
                       const HealPass *pass)
{
        const Plan *p = ledger_lookup(m->ledger, d->uuid);
        const DomainLoad *l = load_monitor_lookup(m->load, d->uuid);

        e->key = g_strdup(d->uuid);
        e->name = g_strdup(d->name);
        e->hd = (HealDomain){.key = e->key,
                             .request = {.name = e->name, .vcpus = p->nvcpus, .memory = p->memory},
                             .policy = p->policy,
                             .fixed = true};
        if (l && l->nvcpus == p->nvcpus) {
                e->hd.request.vcpu_busy = domain_load_vcpu_busy(l);
                e->hd.request.host_busy = l->host_busy;
        }
        /* the pass's own test is dearer: only those that could gain are read from libvirt */
        if ((d->result != DECISION_PLACED && d->result != DECISION_OVERCOMMITTED) ||
            !heal_may_gain(m->topology, m->ledger, p, e->hd.request.vcpu_busy, pu_busy))
                return;
        e->hd.cooling = !pass->manual && cooling(m, d->uuid, pass->now);
        if (e->hd.cooling || virt_conn_lookup_uuid(m->conn, e->key, &e->dom, NULL) < 0 ||
            !(e->pr = placer_request(m, e->dom)) || e->pr->req.vcpus != p->nvcpus)
                return; /* gone, opted out since, or resized: reconcile and placement see to it */
        e->hd.request = e->pr->req;
        e->hd.policy = e->pr->params.policy;
        e->hd.fixed = false;
}

/* Applies one move; says so in the log and in the pass's report. */
static void apply_move(Manager *m, HealEntry *e, HealMove *mv, const HealPass *pass)
{
        g_autofree char *note = g_strdup_printf("%s: %s", pass->manual ? "rebalanced" : "healed", mv->why);
        g_autofree char *name = g_strdup(mv->name);
        const Decision *after;
        uint64_t until;
        char a[32];

        placer_apply_plan(m, e->dom, e->pr, g_steal_pointer(&mv->plan), note);
        after = g_hash_table_lookup(m->decisions, mv->key);
        if (!after) {
                g_string_append_printf(pass->report, "%s: not moved: gone\n", name);
                return;
        }
        size_format(mv->memory_moved, a, sizeof(a));
        if (pass->manual) {
                unsigned nodes = after->plan ? cpuset_count(after->plan->nodes) : 0;
                log_info("%s: rebalanced: %s; %s of memory changed nodes", name, mv->why, a);
                g_string_append_printf(pass->report, "%s: moved to %u node%s: %s\n", name, nodes,
                                       nodes == 1 ? "" : "s", mv->why);
        } else {
                log_info("%s: healed without a request: %s; %s of memory changed nodes", name, mv->why, a);
                g_string_append_printf(pass->report, "%s: moved: %s (%s of memory changed nodes)\n", name,
                                       mv->why, a);
        }
        /* healing leaves it alone for a while either way (heal_move_cooldown_sec()): it would not move it
         * back at once */
        until = pass->now + (uint64_t)heal_move_cooldown_sec(mv) * G_USEC_PER_SEC;
        g_hash_table_replace(m->heal_moved, g_strdup(mv->key), g_memdup2(&until, sizeof(until)));
        m->stats.heal_moves++;
        m->stats.heal_memory_moved += mv->memory_moved;
}

/* Runs one pass: plans every domain placementd placed with its real request, applies the moves. */
static unsigned heal_pass(Manager *m, const HealPass *pass)
{
        g_autoptr(GPtrArray) all = manager_list(m);
        g_autoptr(GPtrArray) moves = NULL;
        g_autofree HealEntry *entries = g_new0(HealEntry, MAX(all->len, 1));
        g_autofree HealDomain **ptrs = g_new0(HealDomain *, MAX(all->len, 1));
        g_autofree char *error = NULL;
        g_autofree double *pu_busy = NULL;
        unsigned n = 0, moved = 0;

        m->stats.heal_passes++;
        if (load_monitor_known(m->load)) /* what busy threads run where, as placement sees it */
                pu_busy = load_pu_busy(m->ledger, load_monitor_lookup_cb, m->load);
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                if (!d->plan || !ledger_lookup(m->ledger, d->uuid))
                        continue;
                entry_init(m, &entries[n], d, pu_busy, pass);
                ptrs[n] = &entries[n].hd;
                n++;
        }
        if (policy_heal(m->topology, m->ledger, &m->config->placement, &pass->params, ptrs, n, &moves,
                        &error) < 0) {
                log_warning("%s failed: %s, ignoring", pass->manual ? "Rebalancing" : "Healing", error);
                g_string_append_printf(pass->report, "%s failed: %s\n",
                                       pass->manual ? "rebalancing" : "healing", error);
        }
        for (unsigned i = 0; moves && i < moves->len; i++) {
                HealMove *mv = g_ptr_array_index(moves, i);
                for (unsigned k = 0; k < n; k++)
                        if (!entries[k].hd.fixed && strcmp(entries[k].hd.key, mv->key) == 0) {
                                apply_move(m, &entries[k], mv, pass);
                                moved++;
                                break;
                        }
        }
        for (unsigned k = 0; k < n; k++)
                heal_entry_clear(&entries[k]);
        return moved;
}

unsigned manager_heal(Manager *m, char **ret_report)
{
        HealPass pass = {.params = {.max_moves = m->config->heal_max_moves,
                                    .memory_budget = m->config->heal_memory_budget,
                                    .min_gain = HEAL_DEFAULT_MIN_GAIN,
                                    .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN},
                         .now = monotonic_usec(),
                         .report = g_string_new(NULL)};
        unsigned moved = 0;

        if (!heal_enabled(m)) {
                g_string_append(pass.report,
                                "healing is off (Heal=no, HealMaxMoves=0, advisory mode or no libvirt)\n");
                goto out;
        }
        moved = heal_pass(m, &pass);
        if (!pass.report->len)
                g_string_append(pass.report, "nothing to heal: no move would be worth it\n");
        log_debug("Heal pass: %u move%s", moved, moved == 1 ? "" : "s");
        /* more may be left: the next pass one interval later */
        if (moved && moved >= pass.params.max_moves)
                manager_heal_soon(m, "moves left over");
out:
        if (ret_report)
                *ret_report = g_string_free(pass.report, FALSE);
        else
                g_string_free(pass.report, TRUE);
        return moved;
}

unsigned manager_rebalance(Manager *m, unsigned max_moves, char **ret_report)
{
        HealPass pass = {.params = {.max_moves = max_moves,
                                    .memory_budget = m->config->heal_memory_budget,
                                    .min_gain = HEAL_DEFAULT_MIN_GAIN,
                                    .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN},
                         .manual = true,
                         .now = monotonic_usec(),
                         .report = g_string_new(NULL)};
        unsigned moved = 0;

        if (!m->conn || !m->config->apply)
                g_string_append(pass.report, !m->conn ? "not connected to libvirt: nothing moved"
                                                      : "advisory mode (Apply=no): nothing moved");
        else
                moved = heal_pass(m, &pass);
        if (!pass.report->len)
                g_string_append(pass.report, "every domain already has its best placement: nothing moved\n");
        log_debug("Rebalance: %u move%s", moved, moved == 1 ? "" : "s");
        *ret_report = g_string_free(pass.report, FALSE);
        return moved;
}
