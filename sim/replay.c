/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "replay.h"
#include "contention.h"
#include "heal.h"
#include "ledger.h"
#include "policy.h"
#include "setscan.h"
#include "text-safe.h"
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* The state's figures, recomputed when it changes and weighted by the seconds it holds. */
typedef struct StateFigures {
        ContentionSample c;
        double bound_lost;
        unsigned bound_contended;
        unsigned bound_paired;
        double distance_sum; /* over placed vCPUs */
        unsigned distance_vcpus;
        unsigned fit;
} StateFigures;

typedef struct Sim {
        const Topology *t;
        const SimParams *p;
        Ledger *ledger;     /* the engine's */
        GPtrArray *domains; /* SimDomain*, in start order */
        GHashTable *index;  /* a running domain's name -> its index in domains + 1 */
        GPtrArray *plans;   /* their plans, same order (for Occupancy) */
        Occupancy *occ;
        Occupancy *fit_occ; /* the free cores as the engine's ledger counts them (the largest fit's) */
        SetScan *scan;
        double now, next_sample, next_rebalance;
        double heal_at;         /* when the armed heal pass runs; negative: none armed */
        bool unplaceable_retry; /* a departure since the last pass: the unplaceable are placed again */
        bool dirty;
        StateFigures fig;
        /* integrals */
        double t_total, t_vcpus, t_shared, t_busy, t_contended, t_lost, t_bound_lost, t_bound_contended;
        double t_distance_sum, t_distance_vcpus, t_fit;
        double t_host_lost, t_bound_paired, t_calm_node_lost, t_calm_elsewhere_lost;
        SimReport *r;
} Sim;

void sim_params_from_config(SimParams *p, const Config *c)
{
        *p = (SimParams){
            .placement = &c->placement,
            .heal = c->heal && c->apply && c->heal_max_moves > 0,
            .use_load = c->load_interval_sec > 0,
            .interval_sec = c->load_interval_sec,
            .load_warmup_sec = c->load_warmup_sec,
            .heal_interval_sec = c->heal_interval_sec,
            .heal_max_moves = c->heal_max_moves,
            .heal_memory_budget = c->heal_memory_budget,
            .memory_binding = c->memory_binding && c->apply,
            .sibling_loss = CONTENTION_SIBLING_LOSS,
        };
}

/* Whether counts (starts, moves) count yet: after the warm-up. */
static bool measuring(const Sim *s)
{
        return s->now >= s->p->measure_from;
}

static void sim_domain_free(SimDomain *d)
{
        if (!d)
                return;
        g_free(d->name);
        domain_load_free(d->load);
        plan_free(d->plan);
        cpuset_free(d->bound_nodes);
        g_free(d);
}

/* By name, not by a scan: heal passes and starts look every ledger key up (load_pu_busy()), which made
 * a replay cubic in the domains running. */
static int find_domain(const Sim *s, const char *name)
{
        return (int)GPOINTER_TO_UINT(g_hash_table_lookup(s->index, name)) - 1;
}

static const DomainLoad *lookup_load(const char *key, void *userdata)
{
        const Sim *s = userdata;
        int i = find_domain(s, key);
        return i < 0 ? NULL : ((SimDomain *)g_ptr_array_index(s->domains, i))->load;
}

/* The request a placement or a heal pass makes for d, with what was measured when load is used. */
static PlacementRequest request_for(const Sim *s, const SimDomain *d, const double *pu_busy)
{
        PlacementRequest req = {.name = d->name, .vcpus = d->vcpus, .memory = d->memory};

        if (d->bound_nodes) {
                /* the daemon's own binding, as a re-placement reads it from the live definition */
                req.memory_nodes = d->bound_nodes;
                req.memory_source = MEMORY_SOURCE_BOUND;
                req.memory_mode = MEMORY_MODE_STRICT;
                req.memory_own = true;
        }
        if (s->p->use_load) {
                req.vcpu_busy = domain_load_vcpu_busy(d->load);
                req.host_busy = d->load->host_busy;
                req.host_unmeasured = !req.vcpu_busy;
                req.pu_busy = pu_busy;
        }
        return req;
}

static void distance_of(const Topology *t, const Plan *p, StateFigures *f)
{
        if (!p->memory)
                return;
        for (unsigned v = 0; v < p->nvcpus; v++) {
                double sum = 0;
                unsigned node;
                if (p->vcpu_pu[v] < 0)
                        continue;
                node = t->cores[t->pus[p->vcpu_pu[v]].core].node;
                for (unsigned n = 0; n < p->nnode_memory && n < t->nnodes; n++)
                        sum += (double)p->node_memory[n] * topology_distance(t, node, n);
                f->distance_sum += sum / (double)p->memory;
                f->distance_vcpus++;
        }
}

/* The host as the largest fit sees it: what explicit would still place, so the cores its ledger counts
 * free, not where occupancy.h runs floating vCPUs (VCPUPin=nodeset: on an idle core beside a reserved CPU,
 * say, where the engine counted them on another); the memory as the plans hold it. A placer's plans have
 * no ledger: their occupancy. */
static const Occupancy *fit_occupancy(Sim *s)
{
        if (!s->ledger)
                return s->occ;
        for (unsigned c = 0; c < s->t->ncores; c++)
                s->fit_occ->core_load[c] = !ledger_core_free(s->ledger, c);
        memcpy(s->fit_occ->node_used, s->occ->node_used, sizeof(uint64_t) * s->t->nnodes);
        return s->fit_occ;
}

/* Recomputes the figures of the state as it stands now. */
static void refresh(Sim *s)
{
        g_autofree ContentionDomain *cd = g_new0(ContentionDomain, MAX(s->domains->len, 1));
        if (!s->dirty)
                return;
        occupancy_rebuild(s->occ, s->plans);
        setscan_update(s->scan, fit_occupancy(s));
        s->fig = (StateFigures){.fit = setscan_largest_fit(s->scan, SIM_FIT_MEMORY_PER_VCPU)};
        for (unsigned i = 0; i < s->domains->len; i++) {
                const SimDomain *d = g_ptr_array_index(s->domains, i);
                cd[i] = (ContentionDomain){.plan = d->plan, .busy = d->busy, .host = d->host};
                distance_of(s->t, d->plan, &s->fig);
        }
        s->fig.c = contention_measure(s->t, cd, s->domains->len, s->p->sibling_loss);
        /* the busy vCPUs this run placed: a domain nothing could hold (memory) holds no core either */
        s->fig.bound_lost =
            contention_bound(s->t, s->fig.c.busy_vcpus, s->fig.c.host_load, s->p->sibling_loss,
                             &s->fig.bound_contended, &s->fig.bound_paired);
        s->dirty = false;
}

static SimView view(Sim *s)
{
        refresh(s);
        return (SimView){.t = s->t,
                         .ledger = s->ledger,
                         .occ = s->occ,
                         .plans = s->plans,
                         .scan = s->scan,
                         .largest_fit = s->fig.fit,
                         .now = s->now};
}

/* Domains' load integrals, for their next sample. */
static void integrate_load(Sim *s, double dt)
{
        for (unsigned i = 0; i < s->domains->len; i++) {
                SimDomain *d = g_ptr_array_index(s->domains, i);
                d->busy_sum += d->busy * dt;
                d->host_sum += d->host * dt;
                d->sum_time += dt;
        }
}

/* The state holds for dt seconds. */
static void record(Sim *s, double dt)
{
        const StateFigures *f = &s->fig;

        integrate_load(s, dt);
        if (s->p->observer && s->p->observer->state) {
                SimView v = view(s);
                s->p->observer->state(s->p->observer->data, &v, s->now, dt);
        }
        if (s->now + dt <= s->p->measure_from)
                return;
        if (s->now < s->p->measure_from)
                dt = s->now + dt - s->p->measure_from;
        refresh(s);
        s->t_total += dt;
        s->t_vcpus += f->c.vcpus * dt;
        s->t_shared += f->c.shared_vcpus * dt;
        s->t_busy += f->c.busy_vcpus * dt;
        s->t_contended += f->c.busy_contended * dt;
        s->t_lost += f->c.capacity_lost * dt;
        s->t_host_lost += f->c.host_lost * dt;
        s->t_calm_node_lost += f->c.lost_calm_node * dt;
        s->t_calm_elsewhere_lost += f->c.lost_calm_elsewhere * dt;
        s->t_bound_lost += f->bound_lost * dt;
        s->t_bound_contended += f->bound_contended * dt;
        s->t_bound_paired += f->bound_paired * dt;
        s->t_distance_sum += f->distance_sum * dt;
        s->t_distance_vcpus += f->distance_vcpus * dt;
        s->t_fit += f->fit * dt;
        s->r->largest_fit_min = MIN(s->r->largest_fit_min, f->fit);
}

/* Arms a heal pass seconds from now, unless one is armed as soon or sooner (daemon/healer.c's heal_in()). */
static void heal_in(Sim *s, double seconds)
{
        if (s->p->heal && !s->p->placer && (s->heal_at < 0 || s->heal_at > s->now + seconds))
                s->heal_at = s->now + seconds;
}

/* After departures: HealInterval from now (the daemon's debounce, manager_heal_soon()). */
static void heal_soon(Sim *s)
{
        heal_in(s, s->p->heal_interval_sec);
}

/* Diagnosis (oracle_load): what was measured becomes the true load itself, at once. */
static void oracle_learn(const Sim *s, SimDomain *d)
{
        g_autofree double *busy = g_new(double, MAX(d->vcpus, 1));

        if (!s->p->oracle_load)
                return;
        for (unsigned v = 0; v < d->vcpus; v++)
                busy[v] = d->busy;
        d->load->known = false; /* a first sample is taken as it is, unsmoothed */
        domain_load_update(d->load, busy, d->vcpus, d->host, 1.0, LOAD_SMOOTHING(0), NULL);
}

/* One measurement: every domain's mean load since its last sample goes into its smoothed load. A class
 * that changed arms a heal pass, as in the daemon. */
static void measure(Sim *s)
{
        for (unsigned i = 0; i < s->domains->len; i++) {
                SimDomain *d = g_ptr_array_index(s->domains, i);
                g_autofree double *busy = NULL;
                unsigned before = domain_load_class(d->load);
                if (!(d->sum_time > 0))
                        continue;
                if (s->p->oracle_load || !d->read) {
                        /* the daemon's first bulk call after a start reads counters, not a fraction;
                         * its warm-up counts from the start event it saw */
                        d->read = true;
                        d->load->warmup_sec = d->sum_time;
                        d->busy_sum = d->host_sum = d->sum_time = 0;
                        continue; /* with oracle_load: known from the start (oracle_learn) */
                }
                busy = g_new(double, d->vcpus);
                for (unsigned v = 0; v < d->vcpus; v++)
                        busy[v] = d->busy_sum / d->sum_time;
                /* values are the trace's, validated: the update cannot fail */
                domain_load_update(d->load, busy, d->vcpus, d->host_sum / d->sum_time, d->sum_time,
                                   LOAD_SMOOTHING(s->p->load_warmup_sec), NULL);
                d->busy_sum = d->host_sum = d->sum_time = 0;
                if (domain_load_class(d->load) != before)
                        heal_in(s, 0); /* a load class changed: at once (manager_heal_now()) */
        }
}

static uint64_t memory_moved(const Plan *from, const Plan *to)
{
        uint64_t moved = 0;

        for (unsigned n = 0; n < from->nnode_memory && n < to->nnode_memory; n++)
                if (from->node_memory[n] > to->node_memory[n])
                        moved += from->node_memory[n] - to->node_memory[n];
        return moved;
}

/* d takes plan (owned) instead of its current one. */
static void move_domain(Sim *s, unsigned i, Plan *plan, uint64_t moved)
{
        SimDomain *d = g_ptr_array_index(s->domains, i);

        if (s->ledger) {
                ledger_release(s->ledger, d->name);
                ledger_commit(s->ledger, d->name, plan_copy(plan));
        }
        plan_free(d->plan);
        d->plan = plan;
        s->plans->pdata[i] = plan;
        if (measuring(s)) {
                s->r->moves++;
                s->r->memory_moved_bytes += moved;
        }
        s->dirty = true;
}

/* The engine's plan for d on the host as the ledger holds it, d's memory bound to its nodes when placed,
 * as the daemon binds it: the nodes libvirt knows (not a stand-in). */
static Plan *engine_place(Sim *s, SimDomain *d, const PlacementRequest *req)
{
        Plan *plan = policy_place(s->t, s->ledger, req, s->p->placement);

        if (s->p->memory_binding && (plan->result == PLAN_PLACED || plan->result == PLAN_OVERCOMMITTED)) {
                g_autoptr(CpuSet) idx = plan_memory_nodes(plan);
                d->bound_nodes = topology_bindable_nodes(s->t, idx);
                if (cpuset_is_empty(d->bound_nodes))
                        g_clear_pointer(&d->bound_nodes, cpuset_free);
        }
        return plan;
}

/* As the daemon's pass after a departure begins (manager_place_unplaceable()): each unplaceable domain is
 * placed again, in start order, on the host as those before it leave it. Not a heal move. */
static void place_unplaceable(Sim *s)
{
        for (unsigned i = 0; i < s->domains->len; i++) {
                SimDomain *d = g_ptr_array_index(s->domains, i);
                g_autofree double *pu_busy = NULL;
                PlacementRequest req;
                Plan *plan;

                if (d->plan->result != PLAN_UNPLACEABLE)
                        continue;
                ledger_release(s->ledger, d->name);
                if (s->p->use_load)
                        pu_busy = load_pu_busy(s->ledger, lookup_load, s);
                req = request_for(s, d, pu_busy);
                plan = engine_place(s, d, &req);
                ledger_commit(s->ledger, d->name, plan_copy(plan));
                plan_free(d->plan);
                d->plan = plan;
                s->plans->pdata[i] = plan;
                s->dirty = true;
        }
}

static void heal_pass(Sim *s)
{
        g_autofree double *pu_busy = s->p->use_load ? load_pu_busy(s->ledger, lookup_load, s) : NULL;
        g_autofree HealDomain *hd = g_new0(HealDomain, MAX(s->domains->len, 1));
        g_autofree HealDomain **hdp = g_new0(HealDomain *, MAX(s->domains->len, 1));
        HealParams hp = {
            .max_moves = s->p->heal_unbounded ? UINT_MAX : s->p->heal_max_moves,
            .memory_budget = s->p->heal_unbounded ? UINT64_MAX : s->p->heal_memory_budget,
            .min_gain = HEAL_DEFAULT_MIN_GAIN,
            .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN,
        };
        g_autoptr(GPtrArray) moves = NULL;
        double cooled = INFINITY;

        for (unsigned i = 0; i < s->domains->len; i++) {
                const SimDomain *d = g_ptr_array_index(s->domains, i);
                hd[i] = (HealDomain){
                    .key = d->name,
                    .request = request_for(s, d, pu_busy),
                    .policy = s->p->placement->policy,
                    .cooling = !s->p->heal_unbounded && s->now < d->cooling.until,
                    /* as the daemon: only what it placed or overcommitted moves, once its load is
                     * known when it is measured, or before when it shares a core while one is free */
                    .fixed = (d->plan->result != PLAN_PLACED && d->plan->result != PLAN_OVERCOMMITTED) ||
                             (s->p->use_load && !d->load->known &&
                              !heal_shares_while_free(s->t, s->ledger, s->p->placement, d->plan)),
                };
                hdp[i] = &hd[i];
                /* as the daemon: a cooling domain that could gain is looked at again when it ends */
                if (hd[i].cooling && !hd[i].fixed && d->cooling.until < cooled &&
                    heal_may_gain(s->t, s->ledger, d->plan, hd[i].request.vcpu_busy, hd[i].request.host_busy,
                                  pu_busy))
                        cooled = d->cooling.until;
        }
        /* the domains are the ledger's and the parameters valid: a pass cannot fail */
        if (policy_heal(s->t, s->ledger, s->p->placement, &hp, hdp, s->domains->len, &moves, NULL) < 0)
                return;
        for (unsigned m = 0; m < moves->len; m++) {
                const HealMove *mv = g_ptr_array_index(moves, m);
                int i = find_domain(s, mv->key);
                if (i < 0)
                        continue;
                move_domain(s, (unsigned)i, plan_copy(mv->plan), mv->memory_moved);
                if (measuring(s) && mv->threads_only)
                        s->r->host_thread_moves++;
                heal_cooling_note(&((SimDomain *)g_ptr_array_index(s->domains, i))->cooling, mv, s->now);
        }
        if (!s->p->heal_unbounded && moves->len) { /* as the daemon: a moved one that could still gain */
                g_autofree const char **keys = g_new(const char *, moves->len);
                g_autofree double *until = g_new(double, moves->len);
                unsigned k = 0;
                for (unsigned m = 0; m < moves->len; m++) {
                        int i = find_domain(s, ((const HealMove *)g_ptr_array_index(moves, m))->key);
                        const SimDomain *d = i < 0 ? NULL : g_ptr_array_index(s->domains, i);
                        if (!d)
                                continue;
                        keys[k] = d->name;
                        until[k++] = d->cooling.until;
                }
                cooled =
                    MIN(cooled, heal_moved_look_again(s->t, s->ledger, s->p->use_load ? lookup_load : NULL,
                                                      s, keys, until, k));
        }
        if (moves->len && moves->len >= hp.max_moves)
                heal_soon(s); /* moves left over */
        else if (isfinite(cooled))
                heal_in(s, cooled - s->now); /* when the first cool-down that held one back ends */
}

/* A heal pass falls due: after a departure, the unplaceable first, as in the daemon (manager_heal()). */
static void heal(Sim *s)
{
        if (s->unplaceable_retry) {
                s->unplaceable_retry = false;
                place_unplaceable(s);
        }
        heal_pass(s);
}

static void rebalance(Sim *s)
{
        const SimPlacer *pl = s->p->placer;
        unsigned index = 0;
        Plan *plan;

        refresh(s);
        plan =
            pl->rebalance(pl->data, s->occ, (SimDomain *const *)s->domains->pdata, s->domains->len, &index);
        if (plan && index < s->domains->len)
                move_domain(s, index, plan,
                            memory_moved(((SimDomain *)g_ptr_array_index(s->domains, index))->plan, plan));
        else
                plan_free(plan);
}

/* A measurement falls due: load, then the placer's own periodic work (a baseline's). */
static void periodic(Sim *s)
{
        const SimPlacer *pl = s->p->placer;

        measure(s);
        if (s->p->heal_every_interval)
                heal_soon(s);
        if (pl && pl->rebalance && s->now >= s->next_rebalance - 1e-9) {
                rebalance(s);
                s->next_rebalance = s->now + MAX(pl->rebalance_sec, s->p->interval_sec);
        }
}

/* Whether the measurements to come change nothing while the trace's loads hold: every domain read once
 * and its smoothed load at what it runs (a rounding error aside), no heal pass armed, and nothing else
 * that runs with a measurement (a placer's rebalance, heal_every_interval) or sees each state (an
 * observer). */
static bool settled(const Sim *s)
{
        if (s->p->step_every_sample || s->p->placer || s->p->heal_every_interval || s->heal_at >= 0 ||
            (s->p->observer && s->p->observer->state))
                return false;
        for (unsigned i = 0; i < s->domains->len; i++) {
                const SimDomain *d = g_ptr_array_index(s->domains, i);
                const DomainLoad *l = d->load;
                if (!d->read)
                        return false;
                if (s->p->oracle_load)
                        continue; /* measurements leave it as oracle_learn() set it */
                if (!l->known || l->nvcpus != d->vcpus ||
                    fabs(l->host_busy - MIN(d->host, LOAD_HOST_BUSY_MAX)) > 1e-12)
                        return false;
                for (unsigned v = 0; v < l->nvcpus; v++)
                        if (fabs(l->vcpu_busy[v] - MIN(d->busy, 1.0)) > 1e-12)
                                return false;
        }
        return true;
}

/* Lets seconds pass: the state holds, and measurements and heal passes fall due on the way. */
static void advance(Sim *s, double seconds)
{
        double end = s->now + seconds;

        for (;;) {
                double next = MIN(end, s->next_sample);
                if (s->heal_at >= 0 && s->heal_at <= s->now + 1e-9) {
                        s->heal_at = -1;
                        heal(s);
                }
                if (s->p->interval_sec > 0 && end - s->next_sample > 2 * s->p->interval_sec && settled(s)) {
                        /* up to the last measurement but one before the end at once: those between would
                         * find each load where it is, and the state holds (a year's tick of 100 domains
                         * took 40 s a measurement at a time) */
                        double skip = floor((end - s->next_sample) / s->p->interval_sec) - 1;
                        next = s->next_sample + skip * s->p->interval_sec;
                        record(s, next - s->now);
                        s->now = next;
                        s->next_sample = next;
                }
                if (s->heal_at >= 0)
                        next = MIN(next, s->heal_at);
                if (next > s->now) {
                        record(s, next - s->now);
                        s->now = next;
                }
                if (s->now >= s->next_sample - 1e-9) {
                        s->next_sample += s->p->interval_sec;
                        periodic(s);
                        continue;
                }
                if (s->heal_at >= 0 && s->heal_at <= s->now + 1e-9)
                        continue;
                if (s->now >= end - 1e-12)
                        break;
        }
}

static void start(Sim *s, const TraceEvent *e)
{
        SimDomain *d = g_new0(SimDomain, 1);
        g_autofree double *pu_busy = NULL;
        PlacementRequest req;

        *d = (SimDomain){.name = g_strdup(e->name),
                         .vcpus = e->vcpus,
                         .memory = e->memory,
                         .busy = e->busy,
                         .host = e->host,
                         .load = domain_load_new(),
                         .cooling = {.until = -1, .last_move = -1}};
        oracle_learn(s, d);
        if (s->ledger && s->p->use_load)
                pu_busy = load_pu_busy(s->ledger, lookup_load, s);
        req = request_for(s, d, pu_busy);
        if (s->p->observer && s->p->observer->before_start) {
                SimView v = view(s);
                s->p->observer->before_start(s->p->observer->data, &v, e);
        }
        if (s->p->placer) {
                refresh(s);
                d->plan = s->p->placer->place(s->p->placer->data, s->occ, &req);
        } else {
                d->plan = engine_place(s, d, &req);
        }
        if (s->ledger)
                ledger_commit(s->ledger, d->name, plan_copy(d->plan));
        if (measuring(s)) {
                s->r->starts++;
                s->r->overcommitted += d->plan->result == PLAN_OVERCOMMITTED;
                s->r->unplaceable += d->plan->result == PLAN_UNPLACEABLE;
        }
        g_ptr_array_add(s->domains, d);
        g_ptr_array_add(s->plans, d->plan);
        g_hash_table_insert(s->index, d->name, GUINT_TO_POINTER(s->domains->len));
        s->dirty = true;
}

static void stop(Sim *s, unsigned i)
{
        SimDomain *d = g_ptr_array_index(s->domains, i);

        if (s->ledger)
                ledger_release(s->ledger, d->name);
        g_hash_table_remove(s->index, d->name);
        g_ptr_array_remove_index(s->plans, i);
        g_ptr_array_remove_index(s->domains, i); /* frees d and its plan */
        /* those after it move down by one */
        for (unsigned k = i; k < s->domains->len; k++)
                g_hash_table_insert(s->index, ((SimDomain *)g_ptr_array_index(s->domains, k))->name,
                                    GUINT_TO_POINTER(k + 1));
        s->r->stops += measuring(s);
        s->dirty = true;
        s->unplaceable_retry = true;
        heal_soon(s);
}

static int event(Sim *s, const TraceEvent *e, char **ret_error)
{
        int i = e->op == TRACE_TICK ? -1 : find_domain(s, e->name);
        const char *bad = NULL;

        switch (e->op) {
        case TRACE_START:
                if (i >= 0)
                        bad = "already running";
                else
                        start(s, e);
                break;
        case TRACE_STOP:
                if (i < 0)
                        bad = "no such running domain";
                else
                        stop(s, (unsigned)i);
                break;
        case TRACE_LOAD:
                if (i < 0) {
                        bad = "no such running domain";
                } else {
                        SimDomain *d = g_ptr_array_index(s->domains, i);
                        unsigned before = domain_load_class(d->load);
                        d->busy = e->busy;
                        if (e->has_host)
                                d->host = e->host;
                        oracle_learn(s, d);
                        if (s->p->oracle_load && domain_load_class(d->load) != before)
                                heal_in(s, 0); /* a load class changed: at once (manager_heal_now()) */
                        s->dirty = true;
                }
                break;
        case TRACE_TICK:
                advance(s, e->seconds);
                break;
        }
        if (!bad && e->op != TRACE_TICK && s->p->observer && s->p->observer->after_event) {
                SimView v = view(s);
                const Plan *started =
                    e->op == TRACE_START
                        ? ((SimDomain *)g_ptr_array_index(s->domains, s->domains->len - 1))->plan
                        : NULL;
                s->p->observer->after_event(s->p->observer->data, &v, e, started);
        }
        if (bad) {
                const char *op = e->op == TRACE_START ? "start" : e->op == TRACE_STOP ? "stop" : "load";
                g_autofree char *name = text_safe(e->name); /* a trace's name, as plan writes it */
                if (ret_error && s->p->source)
                        *ret_error =
                            g_strdup_printf("%s:%u: %s %s: %s", s->p->source, e->line, op, name, bad);
                else if (ret_error)
                        *ret_error = g_strdup_printf("line %u: %s %s: %s", e->line, op, name, bad);
                return -EINVAL;
        }
        return 0;
}

static bool has_ticks(const GPtrArray *trace)
{
        for (unsigned i = 0; i < trace->len; i++)
                if (((const TraceEvent *)g_ptr_array_index(trace, i))->op == TRACE_TICK)
                        return true;
        return false;
}

static void report(Sim *s)
{
        SimReport *r = s->r;
        double t = s->t_total;

        r->seconds = t;
        r->shared_vcpu_fraction = s->t_vcpus > 0 ? s->t_shared / s->t_vcpus : 0;
        r->busy_contended_fraction = s->t_busy > 0 ? s->t_contended / s->t_busy : 0;
        r->bound_busy_contended_fraction = s->t_busy > 0 ? s->t_bound_contended / s->t_busy : 0;
        r->bound_paired_contended_fraction = s->t_busy > 0 ? s->t_bound_paired / s->t_busy : 0;
        r->capacity_lost = t > 0 ? s->t_lost / t : 0;
        r->bound_capacity_lost = t > 0 ? s->t_bound_lost / t : 0;
        r->host_capacity_lost = t > 0 ? s->t_host_lost / t : 0;
        r->calm_node_capacity_lost = t > 0 ? s->t_calm_node_lost / t : 0;
        r->calm_elsewhere_capacity_lost = t > 0 ? s->t_calm_elsewhere_lost / t : 0;
        r->mean_memory_distance = s->t_distance_vcpus > 0 ? s->t_distance_sum / s->t_distance_vcpus : 0;
        r->largest_fit_mean = t > 0 ? s->t_fit / t : 0;
        r->busy_vcpus_mean = t > 0 ? s->t_busy / t : 0;
        r->vcpus_mean = t > 0 ? s->t_vcpus / t : 0;
        if (r->largest_fit_min == UINT_MAX)
                r->largest_fit_min = 0;
}

int sim_replay(const Topology *t, const SimParams *p, const GPtrArray *trace, SimReport *ret,
               char **ret_error)
{
        Sim s = {
            .t = t,
            .p = p,
            .ledger = p->placer ? NULL : ledger_new(t),
            .domains = g_ptr_array_new_with_free_func((GDestroyNotify)sim_domain_free),
            .index = g_hash_table_new(g_str_hash, g_str_equal), /* keys: the domains' names */
            .plans = g_ptr_array_new(),
            .occ = occupancy_new(t),
            .fit_occ = p->placer ? NULL : occupancy_new(t),
            .scan = setscan_new(t),
            /* no measurements without an interval (LoadInterval=0), as in the daemon */
            .next_sample = (p->use_load || p->placer) && p->interval_sec > 0 ? p->interval_sec : INFINITY,
            .heal_at = -1,
            .dirty = true,
            .r = ret,
        };
        bool implicit_ticks = !has_ticks(trace);
        int r = 0;

        *ret = (SimReport){.largest_fit_min = UINT_MAX};
        if (p->placement)
                setscan_set_host(s.scan, p->placement);
        for (unsigned i = 0; i < trace->len && r == 0; i++) {
                r = event(&s, g_ptr_array_index(trace, i), ret_error);
                if (r == 0 && implicit_ticks)
                        advance(&s, 1.0);
        }
        if (r == 0)
                report(&s);
        ledger_free(s.ledger);
        g_ptr_array_unref(s.plans);
        g_hash_table_unref(s.index);
        g_ptr_array_unref(s.domains);
        occupancy_free(s.occ);
        occupancy_free(s.fit_occ);
        setscan_free(s.scan);
        return r;
}
