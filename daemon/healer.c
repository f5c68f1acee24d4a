/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Healing in the daemon: after departures (debounced), one pure heal pass (policies/heal.h) over the
 * domains placementd placed, then each move applied like any placement: pins, numatune, emulator,
 * metadata, the decision and its signal. A moved domain cools down before it may move again; a pass
 * that held one back that could gain, or moved one that could still gain, arms the next pass for when
 * its cool-down ends.
 * The operator's Rebalance is the same pass run at once: its own move limit, no cool-down.
 *
 * A pass plans each domain that could gain with its request as a re-placement would ask it, read from
 * libvirt: a pass of healing's own reuses what an earlier pass read (until the domain's decision, its
 * definition or the configuration changes) and reads at most HEAL_READS_PER_PASS domains, those never
 * read first, then those read longer than HEAL_REQUEST_MAX_AGE_SEC ago (planned on that older read when
 * the pass has read its share); Rebalance reads every one. Before a move is applied the domain is read
 * again, and a request that no longer asks the same is not moved: a move is never made on what the user
 * changed since. The moves planned after it were planned on its move, so the pass plans the rest again
 * with it where it is (at most HEAL_PLANS_PER_PASS plans a pass).
 */
#include <math.h>
#include <time.h>

#include "decision-json.h"
#include "heal.h"
#include "log.h"
#include "manager-internal.h"
#include "size.h"
#include "text-safe.h"
#include "virt-cleanup.h"
#include "virt-conn.h"
#include "virt-domain.h"

/* Domains one pass of healing's own reads from libvirt at most (a read is the lookup and two
 * definitions, a round trip each); candidates never read that are left over stay where they are in this
 * pass, and the next pass comes one HealInterval= later. */
#define HEAL_READS_PER_PASS 64u
/* A request read longer ago than this is read again when the pass has reads to spare: libvirt sends no
 * event for some changes (a live numatune, an I/O thread added live), and a looser constraint would
 * otherwise wait for the next event. Until then the pass plans on it (the read before a move checks it). */
#define HEAL_REQUEST_MAX_AGE_SEC 300u
/* Added to a pass armed for the end of a cool-down, which must not find it still running: libevent's
 * coarse clock may wake it a few ms early. */
#define HEAL_TIMER_SLACK_USEC 20000u
/* Plans one pass makes at most: a move refused because its domain changed since it was read leaves the
 * moves planned after it to a new plan, with that domain where it is. Bounded, so that domains changed in
 * a loop (without events) cost a pass a few policy passes, not one per domain; the rest waits for the next
 * pass, one HealInterval= later. */
#define HEAL_PLANS_PER_PASS 3u

/* What a heal pass read of one domain. Reference-counted: a pass's entries hold it while a move may
 * drop it from m->heal_requests. */
typedef struct HealRead {
        PlacerRequest *pr; /* NULL: not placementd's to move (gone, unreadable, opted out) */
        uint64_t usec;     /* CLOCK_MONOTONIC when read */
} HealRead;

static void heal_read_clear(HealRead *r)
{
        placer_request_free(r->pr);
}

static void heal_read_unref(HealRead *r)
{
        g_rc_box_release_full(r, (GDestroyNotify)heal_read_clear);
}

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
        m->heal_requests =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)heal_read_unref);
        m->heal_read_max_age_usec = (uint64_t)HEAL_REQUEST_MAX_AGE_SEC * G_USEC_PER_SEC;
}

void healer_done(Manager *m)
{
        if (m->heal_ev)
                event_free(m->heal_ev);
        if (m->heal_moved)
                g_hash_table_destroy(m->heal_moved);
        if (m->heal_requests)
                g_hash_table_destroy(m->heal_requests);
}

void healer_forget_request(Manager *m, const char *uuid)
{
        if (!m->heal_requests)
                return;
        if (uuid)
                g_hash_table_remove(m->heal_requests, uuid);
        else
                g_hash_table_remove_all(m->heal_requests);
}

/* What the configuration allows, whether or not libvirt is connected. */
static bool heal_configured(const Manager *m)
{
        return m->config->heal && m->config->apply && m->config->heal_max_moves > 0;
}

static bool heal_enabled(const Manager *m)
{
        return heal_configured(m) && m->conn;
}

bool healer_configured(const Manager *m)
{
        return heal_configured(m);
}

/* Arms the heal pass usec from now, unless one is armed as soon or sooner (it runs for both); a later
 * one is brought forward: a measured load that changed is not kept waiting for departures' debounce. */
static void heal_in(Manager *m, uint64_t usec, const char *why)
{
        struct timeval tv = {.tv_sec = (time_t)(usec / G_USEC_PER_SEC),
                             .tv_usec = (suseconds_t)(usec % G_USEC_PER_SEC)};
        uint64_t due = monotonic_usec() + usec;

        if (!heal_enabled(m) || (evtimer_pending(m->heal_ev, NULL) && m->heal_due_usec <= due))
                return;
        log_debug("Healing in %.1f s (%s)", (double)usec / G_USEC_PER_SEC, why);
        m->heal_due_usec = due;
        evtimer_add(m->heal_ev, &tv); /* a pending one is moved */
}

void manager_heal_soon(Manager *m, const char *why)
{
        heal_in(m, (uint64_t)m->config->heal_interval_sec * G_USEC_PER_SEC, why);
}

void manager_heal_now(Manager *m, const char *why)
{
        heal_in(m, 0, why);
}

void healer_connected(Manager *m)
{
        if (!m->heal_owed)
                return;
        m->heal_owed = false;
        manager_heal_soon(m, "a pass came due while libvirt was away");
}

void healer_reloaded(Manager *m, bool was_configured, bool gave_back)
{
        if (!heal_configured(m) || (was_configured && !gave_back))
                return;
        if (m->conn)
                manager_heal_soon(m, was_configured ? "the reload gave CPUs or memory back"
                                                    : "healing turned on by the reload");
        else
                m->heal_owed = true; /* runs after the reconnect */
}

/* Whether a pass has a domain's request: a candidate the pass may move needs one. */
typedef enum HealNeed {
        NEED_NONE,    /* not a candidate (or cooling): counted where it is */
        NEED_READ,    /* never read, or dropped since (healer_forget_request()) */
        NEED_REFRESH, /* read longer than HEAL_REQUEST_MAX_AGE_SEC ago */
        NEED_HELD,    /* read recently enough */
} HealNeed;

/* One domain of the pass: what policy_heal sees, and what it was planned with. */
typedef struct HealEntry {
        HealDomain hd;
        char *key, *name; /* copies: applying a move replaces the decision they came from */
        unsigned nvcpus;  /* as the ledger counts them */
        HealNeed need;
        HealRead *read; /* a reference; NULL while not read */
        bool moved;     /* the pass moved it */
} HealEntry;

static void heal_entry_clear(HealEntry *e)
{
        g_free(e->key);
        g_free(e->name);
        if (e->read)
                heal_read_unref(e->read);
}

/* When the domain with uuid may move again (CLOCK_MONOTONIC usec); 0: it never moved. */
static uint64_t cool_until(const Manager *m, const char *uuid)
{
        const HealCooling *c = g_hash_table_lookup(m->heal_moved, uuid);
        return c ? (uint64_t)(c->until * (double)G_USEC_PER_SEC) : 0;
}

/* One pass: healing's own (cool-down kept, moves reported as healed) or the operator's Rebalance. */
typedef struct HealPass {
        HealParams params;
        bool manual; /* asked for: no cool-down, every candidate read, the report says where each went */
        uint64_t now;
        GString *report;
        unsigned reads;        /* domains read to plan them */
        unsigned unread;       /* candidates never read and left so (HEAL_READS_PER_PASS) */
        unsigned refused;      /* moves not made: the domain changed since it was read */
        unsigned plans;        /* policy passes made (HEAL_PLANS_PER_PASS) */
        uint64_t memory_moved; /* bytes the pass's moves took to other nodes */
        uint64_t cooled;       /* the first end of a cool-down that held back one that could gain; 0: none */
} HealPass;

/* Reads the domain with uuid as a re-placement would ask it; NULL when gone, unreadable or opted out. */
static PlacerRequest *read_request(Manager *m, const char *uuid, virDomainPtr *ret_dom)
{
        g_autoptr(virDomain) dom = NULL;
        PlacerRequest *pr;

        m->stats.heal_reads++;
        if (virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0 || !(pr = placer_request(m, dom)))
                return NULL;
        if (ret_dom)
                *ret_dom = g_steal_pointer(&dom);
        return pr;
}

/* Keeps pr (taken; NULL: not placementd's to move) as what later passes plan the domain with key on, read
 * at usec; returns the table's reference. */
static HealRead *keep_read(Manager *m, const char *key, PlacerRequest *pr, uint64_t usec)
{
        HealRead *r = g_rc_box_new0(HealRead);

        r->usec = usec;
        r->pr = pr;
        if (r->pr) { /* load is the monitor's at each pass, not what it was at the read */
                r->pr->req.vcpu_busy = NULL;
                r->pr->req.host_busy = 0;
                r->pr->req.host_unmeasured = false;
        }
        g_hash_table_replace(m->heal_requests, g_strdup(key), r);
        return r;
}

/* Reads e's domain now, keeps the read for later passes and plans e on it. */
static void entry_read(Manager *m, HealEntry *e, HealPass *pass)
{
        HealRead *r;

        pass->reads++;
        r = keep_read(m, e->key, read_request(m, e->key, NULL), pass->now);
        if (e->read)
                heal_read_unref(e->read);
        e->read = g_rc_box_acquire(r);
}

/*
 * Fills e for decision d, fixed (counted where it is, with its load), and says whether the pass would
 * move it and has its request: a candidate (placed or overcommitted, one that could gain, not cooling)
 * takes what an earlier pass read when it holds (e->read).
 */
static void entry_init(Manager *m, HealEntry *e, const Decision *d, const double *pu_busy, HealPass *pass)
{
        const Plan *p = ledger_lookup(m->ledger, d->uuid);
        const DomainLoad *l = load_monitor_lookup(m->load, d->uuid);
        const double *vcpu_busy = NULL;
        double host_busy = 0;
        bool host_unmeasured;
        HealRead *r;

        if (l && l->nvcpus == p->nvcpus) {
                vcpu_busy = domain_load_vcpu_busy(l);
                host_busy = l->host_busy;
        }
        host_unmeasured = manager_host_unmeasured(m, l);
        e->key = g_strdup(d->uuid);
        e->name = g_strdup(d->name);
        e->nvcpus = p->nvcpus;
        e->hd = (HealDomain){.key = e->key,
                             .request = {.name = e->name,
                                         .vcpus = p->nvcpus,
                                         .memory = p->memory,
                                         .vcpu_busy = vcpu_busy,
                                         .host_busy = host_busy,
                                         .host_unmeasured = host_unmeasured},
                             .policy = p->policy,
                             .fixed = true};
        e->need = NEED_NONE;
        /* the pass's own test is dearer: only those that could gain are planned with their request; a
         * domain being measured whose load is not known yet (its warm-up) waits for its first reading,
         * which runs a pass: all-busy until then, it would move for a load it may not have; but not one
         * that shares a core while a core is free, which counts alone say it should leave */
        if ((d->result != DECISION_PLACED && d->result != DECISION_OVERCOMMITTED) ||
            (load_monitor_warming(m->load, d->uuid) && !pass->manual &&
             !heal_shares_while_free(m->topology, m->ledger, &m->config->placement, p)) ||
            !heal_may_gain(m->topology, m->ledger, p, vcpu_busy, host_busy, pu_busy))
                return;
        e->hd.cooling = !pass->manual && pass->now < cool_until(m, d->uuid);
        if (e->hd.cooling) { /* looked at again when its cool-down ends */
                if (!pass->cooled || cool_until(m, d->uuid) < pass->cooled)
                        pass->cooled = cool_until(m, d->uuid);
                return;
        }
        r = pass->manual ? NULL : g_hash_table_lookup(m->heal_requests, d->uuid);
        if (!r) {
                e->need = NEED_READ;
                return;
        }
        e->read = g_rc_box_acquire(r);
        e->need = pass->now - r->usec < m->heal_read_max_age_usec ? NEED_HELD : NEED_REFRESH;
}

/* Reads what the pass needs, within its share (every one for Rebalance): never-read candidates first,
 * then those read long ago (planned on that read when none are left). */
static void entries_read(Manager *m, HealEntry *entries, unsigned n, HealPass *pass)
{
        for (unsigned k = 0; k < n; k++) {
                if (entries[k].need != NEED_READ)
                        continue;
                if (pass->manual || pass->reads < HEAL_READS_PER_PASS)
                        entry_read(m, &entries[k], pass);
                else
                        pass->unread++;
        }
        for (unsigned k = 0; k < n; k++)
                if (entries[k].need == NEED_REFRESH && pass->reads < HEAL_READS_PER_PASS)
                        entry_read(m, &entries[k], pass);
}

/* Makes e movable, with its request as libvirt gave it (and the load measured now), once it has one. */
static void entry_movable(HealEntry *e)
{
        const double *vcpu_busy = e->hd.request.vcpu_busy;
        double host_busy = e->hd.request.host_busy;
        bool host_unmeasured = e->hd.request.host_unmeasured;

        if (e->need == NEED_NONE || !e->read || !e->read->pr || e->read->pr->req.vcpus != e->nvcpus)
                return; /* unread, gone, opted out since, or resized: reconcile and placement see to it */
        e->hd.request = e->read->pr->req;
        e->hd.request.vcpu_busy = vcpu_busy;
        e->hd.request.host_busy = host_busy;
        e->hd.request.host_unmeasured = host_unmeasured;
        e->hd.policy = e->read->pr->params.policy;
        e->hd.fixed = false;
}

/* "node 1", "nodes 0-1": node indexes idx as their OS numbers. */
static char *nodes_text(const Topology *t, const CpuSet *idx)
{
        g_autoptr(CpuSet) os = topology_nodes_to_os(t, idx);
        g_autofree char *list = cpuset_format(os);

        return g_strdup_printf("%s %s", cpuset_count(os) == 1 ? "node" : "nodes", list);
}

/* Which vCPUs a move re-pins, from where to where ("vCPU 0 from CPU 1 to 0"): the first
 * HEAL_PINS_SHOWN, then how many more; NULL when no vCPU pin changes (the host-side threads alone). */
#define HEAL_PINS_SHOWN 4
static char *pins_moved_text(const Plan *before, const Plan *after)
{
        g_autoptr(GString) s = g_string_new(NULL);
        unsigned shown = 0, more = 0;

        if (!before || !after || before->nvcpus != after->nvcpus)
                return NULL;
        for (unsigned i = 0; i < after->nvcpus; i++) {
                g_autofree char *from = NULL, *to = NULL;
                if (cpuset_equal(before->vcpu_pins[i], after->vcpu_pins[i]))
                        continue;
                if (shown == HEAL_PINS_SHOWN) {
                        more++;
                        continue;
                }
                from = cpuset_format(before->vcpu_pins[i]);
                to = cpuset_format(after->vcpu_pins[i]);
                g_string_append_printf(s, "%svCPU %u from CPU%s %s to %s", shown ? ", " : "",
                                       plan_vcpu_id(before, i),
                                       cpuset_count(before->vcpu_pins[i]) == 1 ? "" : "s", from, to);
                shown++;
        }
        if (more)
                g_string_append_printf(s, " and %u more", more);
        return shown ? g_string_free(g_steal_pointer(&s), FALSE) : NULL;
}

/*
 * Applies one move, once the domain read now asks what it was planned with; says so in the log and in
 * the pass's report. False when it does not (gone, opted out, a constraint changed): what was read now is
 * kept for the next pass, and the moves after it, planned on this one, are planned again; also when its
 * apply failed (the domain `failed`, counted where it runs): no move is claimed.
 */
static bool apply_move(Manager *m, HealEntry *e, HealMove *mv, HealPass *pass)
{
        const Decision *before = g_hash_table_lookup(m->decisions, mv->key), *after;
        g_autofree char *pins = pins_moved_text(before ? before->plan : NULL, mv->plan);
        g_autofree char *note = g_strdup_printf("%s: %s%s%s", pass->manual ? "rebalanced" : "healed",
                                                mv->why, pins ? "; " : "", pins ? pins : "");
        g_autofree char *name = g_strdup(mv->name);
        /* the report names it as every text of placementd's does (escaped: text_safe()) */
        g_autofree char *shown = text_safe(mv->name);
        g_autofree char *error = NULL;
        g_autoptr(virDomain) dom = NULL;
        g_autoptr(PlacerRequest) now = read_request(m, e->key, &dom);
        const PlacerRequest *then = e->read->pr;
        g_autoptr(CpuSet) was = before && before->plan ? cpuset_copy(before->plan->nodes) : NULL;
        HealCooling *cooling;
        char a[32];

        if (!now || now->params.policy != then->params.policy ||
            !placement_request_same_asks(&now->req, &then->req)) {
                const char *what = now ? "its definition changed" : "gone or opted out";
                log_info("%s: not %s: %s since it was read; left where it is", name,
                         pass->manual ? "rebalanced" : "healed", what);
                g_string_append_printf(pass->report, "%s: not moved: %s since it was read\n", shown, what);
                keep_read(m, e->key, g_steal_pointer(&now), pass->now);
                return false;
        }
        if (held_job_busy(m, dom, &error) < 0) { /* each pin would wait for the job */
                log_info("%s: not %s: %s; left where it is", name, pass->manual ? "rebalanced" : "healed",
                         error);
                g_string_append_printf(pass->report, "%s: not moved: %s\n", shown, error);
                keep_read(m, e->key, g_steal_pointer(&now), pass->now);
                return false;
        }
        placer_apply_plan(m, dom, now, g_steal_pointer(&mv->plan), note);
        after = g_hash_table_lookup(m->decisions, mv->key);
        if (!after) {
                g_string_append_printf(pass->report, "%s: not moved: gone\n", shown);
                return true;
        }
        if (after->result == DECISION_FAILED) {
                /* not where it was planned: counted where it runs, and the moves planned on this one are
                 * planned again without it */
                g_autofree char *why = text_safe(after->apply_error ? after->apply_error : "");
                /* a memory binding that went through moves the pages all the same: within the budget */
                if (after->memory_binding == MEMORY_BINDING_APPLIED)
                        pass->memory_moved += mv->memory_moved;
                log_info("%s: not %s: applying the plan failed", name,
                         pass->manual ? "rebalanced" : "healed");
                g_string_append_printf(pass->report, "%s: not moved: applying the plan failed: %s\n", shown,
                                       why);
                return false;
        }
        size_format(mv->memory_moved, a, sizeof(a));
        if (pass->manual) {
                g_autofree char *where = after->plan ? nodes_text(m->topology, after->plan->nodes) : NULL;
                bool stayed = was && after->plan && cpuset_equal(was, after->plan->nodes);
                log_info("%s: rebalanced: %s; %s of memory changed nodes%s%s", name, mv->why, a,
                         pins ? "; " : "", pins ? pins : "");
                /* a re-pin inside its nodes is not a move to them */
                g_string_append_printf(pass->report, "%s: %s %s: %s\n", shown,
                                       stayed ? "re-pinned inside" : "moved to", where ? where : "no node",
                                       mv->why);
        } else {
                log_info("%s: healed without a request: %s; %s of memory changed nodes%s%s", name, mv->why,
                         a, pins ? "; " : "", pins ? pins : "");
                g_string_append_printf(pass->report, "%s: moved: %s (%s of memory changed nodes)\n", shown,
                                       mv->why, a);
        }
        /* healing leaves it alone for a while either way (heal_cooling_note()): it would not move it
         * back at once */
        cooling = g_hash_table_lookup(m->heal_moved, mv->key);
        if (!cooling) {
                cooling = g_new(HealCooling, 1);
                *cooling = (HealCooling){.until = -1, .last_move = -1};
                g_hash_table_insert(m->heal_moved, g_strdup(mv->key), cooling);
        }
        heal_cooling_note(cooling, mv, (double)pass->now / (double)G_USEC_PER_SEC);
        m->stats.heal_moves++;
        m->stats.heal_thread_moves += mv->threads_only;
        m->stats.heal_memory_moved += mv->memory_moved;
        pass->memory_moved += mv->memory_moved;
        return true;
}

/* The entry mv moves; NULL when none (a plan moves only entries not fixed). */
static HealEntry *entry_of(HealEntry *entries, unsigned n, const HealMove *mv)
{
        for (unsigned k = 0; k < n; k++)
                if (!entries[k].hd.fixed && strcmp(entries[k].hd.key, mv->key) == 0)
                        return &entries[k];
        return NULL;
}

/*
 * Plans the pass's domains on the ledger as it is and applies the moves in order, within what is left of
 * the pass's moves and memory. True when a move was refused (its domain changed since it was read): the
 * moves after it were planned on it and are left for a new plan. A domain moved or refused is fixed
 * where it is for the rest of the pass.
 */
static bool plan_and_apply(Manager *m, HealEntry *entries, unsigned n, HealPass *pass, unsigned *moved)
{
        HealParams params = pass->params;
        g_autoptr(GPtrArray) moves = NULL;
        g_autofree HealDomain **ptrs = g_new0(HealDomain *, MAX(n, 1));
        g_autofree char *error = NULL;
        unsigned np = 0;

        params.max_moves -= *moved;
        params.memory_budget -= MIN(pass->memory_moved, params.memory_budget);
        for (unsigned k = 0; k < n; k++)
                if (ledger_lookup(m->ledger, entries[k].key)) /* a move may have found one gone */
                        ptrs[np++] = &entries[k].hd;
        pass->plans++;
        if (policy_heal(m->topology, m->ledger, &m->config->placement, &params, ptrs, np, &moves, &error) <
            0) {
                log_warning("%s failed: %s, ignoring", pass->manual ? "Rebalancing" : "Healing", error);
                g_string_append_printf(pass->report, "%s failed: %s\n",
                                       pass->manual ? "rebalancing" : "healing", error);
                return false;
        }
        for (unsigned i = 0; i < moves->len; i++) {
                HealMove *mv = g_ptr_array_index(moves, i);
                HealEntry *e = entry_of(entries, n, mv);
                bool made;

                if (!e)
                        continue;
                made = apply_move(m, e, mv, pass);
                e->hd.fixed = true;
                if (!made) {
                        pass->refused++;
                        return true;
                }
                e->moved = true;
                (*moved)++;
        }
        return false;
}

/* A domain the pass moved that could still gain where it went is looked at again when its cool-down ends,
 * as one the pass held back is (heal_moved_look_again(), the simulator's rule). */
static void moved_look_again(Manager *m, const HealEntry *entries, unsigned n, HealPass *pass)
{
        g_autofree const char **keys = g_new(const char *, MAX(n, 1));
        g_autofree double *until = g_new(double, MAX(n, 1));
        unsigned k = 0;
        double at;

        for (unsigned i = 0; i < n; i++) {
                const HealCooling *c =
                    entries[i].moved ? g_hash_table_lookup(m->heal_moved, entries[i].key) : NULL;
                if (!c)
                        continue;
                keys[k] = entries[i].key;
                until[k++] = c->until;
        }
        at = heal_moved_look_again(m->topology, m->ledger,
                                   load_monitor_any_known(m->load) ? load_monitor_lookup_cb : NULL, m->load,
                                   keys, until, k);
        if (isfinite(at) && (!pass->cooled || (uint64_t)(at * (double)G_USEC_PER_SEC) < pass->cooled))
                pass->cooled = (uint64_t)(at * (double)G_USEC_PER_SEC);
}

/* Runs one pass: plans every domain placementd placed with its real request, applies the moves. */
static unsigned heal_pass(Manager *m, HealPass *pass)
{
        unsigned count = g_hash_table_size(m->decisions), n = 0, moved = 0;
        g_autofree HealEntry *entries = g_new0(HealEntry, MAX(count, 1));
        g_autofree double *pu_busy = NULL;
        GHashTableIter it;
        gpointer value;

        m->stats.heal_passes++;
        if (load_monitor_any_known(m->load)) /* what busy threads run where, as placement sees it */
                pu_busy = load_pu_busy(m->ledger, load_monitor_lookup_cb, m->load);
        /* in no particular order: the pass orders them itself */
        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value)) {
                const Decision *d = value;
                if (!d->plan || !ledger_lookup(m->ledger, d->uuid))
                        continue;
                entry_init(m, &entries[n++], d, pu_busy, pass);
        }
        entries_read(m, entries, n, pass); /* once every candidate is known: never-read ones first */
        for (unsigned k = 0; k < n; k++)
                entry_movable(&entries[k]);
        while (plan_and_apply(m, entries, n, pass, &moved) && moved < pass->params.max_moves)
                if (pass->plans == HEAL_PLANS_PER_PASS) {
                        log_info(
                            "%s: %u domains changed since they were read; the rest waits for the next pass",
                            pass->manual ? "Rebalancing" : "Healing", pass->refused);
                        break;
                }
        if (!pass->manual)
                moved_look_again(m, entries, n, pass);
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
                /* the departures that armed it freed cores all the same: the pass waits for libvirt */
                m->heal_owed |= heal_configured(m) && !m->conn;
                g_string_append(pass.report,
                                "healing is off (Heal=no, HealMaxMoves=0, advisory mode or no libvirt)\n");
                goto out;
        }
        /* a departure freed what they lacked, maybe */
        if (m->unplaceable_retry)
                manager_place_unplaceable(m, "a domain left", pass.report);
        moved = heal_pass(m, &pass);
        if (!pass.report->len)
                g_string_append(pass.report, "nothing to heal: no move would be worth it\n");
        log_debug("Heal pass: %u move%s, %u domain%s read, %u left unread, %u refused, %u plan%s", moved,
                  moved == 1 ? "" : "s", pass.reads, pass.reads == 1 ? "" : "s", pass.unread, pass.refused,
                  pass.plans, pass.plans == 1 ? "" : "s");
        /* more may be left: the next pass one interval later */
        if (moved && moved >= pass.params.max_moves)
                manager_heal_soon(m, "moves left over");
        else if (pass.unread)
                manager_heal_soon(m, "domains left unread");
        else if (pass.refused) /* planned now with what it asks now */
                manager_heal_soon(m, "a domain changed since it was read");
        else if (pass.cooled) /* nothing else would look at it again */
                heal_in(m, pass.cooled - pass.now + HEAL_TIMER_SLACK_USEC, "a cool-down ends");
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
                                    .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN,
                                    .undo_sharing = true},
                         .manual = true,
                         .now = monotonic_usec(),
                         .report = g_string_new(NULL)};
        unsigned moved = 0;

        if (!m->conn || !m->config->apply)
                g_string_append(pass.report, !m->conn ? "not connected to libvirt: nothing moved"
                                                      : "advisory mode (Apply=no): nothing moved");
        else {
                /* the domains placed now first: the pass plans the moves on the host they leave */
                moved = manager_place_unplaceable(m, "rebalance", pass.report);
                moved += heal_pass(m, &pass);
        }
        if (!pass.report->len)
                g_string_append(pass.report, "every domain already has its best placement: nothing moved\n");
        log_debug("Rebalance: %u move%s", moved, moved == 1 ? "" : "s");
        *ret_report = g_string_free(pass.report, FALSE);
        return moved;
}
