/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "simulate.h"
#include "baselines.h"
#include "config.h"
#include "ledger.h"
#include "policy.h"
#include "setscan.h"
#include "util.h"

#include <stdio.h>

/* Every how many measured events the largest fit is checked against the engine itself. */
#define CROSSCHECK_EVERY 37u

static const char *const names[_SIM_POLICY_MAX] = {
    [SIM_EXPLICIT] = "explicit",
    [SIM_COMPAT] = "compat",
    [SIM_FIRST_FIT] = "baseline: first-fit",
    [SIM_NUMAD] = "baseline: numad",
    [SIM_NOVA_PREFER] = "baseline: nova-prefer",
};

const char *sim_policy_name(SimPolicy p)
{
        return p < _SIM_POLICY_MAX ? names[p] : "?";
}

bool sim_policy_is_engine(SimPolicy p)
{
        return p == SIM_EXPLICIT || p == SIM_COMPAT;
}

typedef struct Sim {
        const Topology *t;
        SimPolicy policy;
        Config *config;    /* defaults; placement.policy set per run */
        Ledger *ledger;    /* engine policies */
        GPtrArray *plans;  /* Plan*, residents, oldest first (owned) */
        GHashTable *by_id; /* domain id -> Plan* */
        Occupancy *occ;
        SetScan *scan;
} Sim;

static Plan *place(Sim *s, const SimEvent *e, const char *name)
{
        PlacementRequest req = {.name = name, .vcpus = e->vcpus, .memory = e->memory};

        if (sim_policy_is_engine(s->policy))
                return policy_place(s->t, s->ledger, &req, &s->config->placement);
        return baseline_place(s->policy == SIM_FIRST_FIT ? BASELINE_FIRST_FIT
                              : s->policy == SIM_NUMAD   ? BASELINE_NUMAD
                                                         : BASELINE_NOVA_PREFER,
                              s->occ, &req);
}

/* Does explicit itself agree with setscan's largest fit on this ledger? */
static bool crosscheck(const Sim *s, unsigned fit)
{
        g_autoptr(Config) c = config_new_default();
        PlacementRequest req = {.name = "probe"};
        bool ok = true;

        c->placement.policy = POLICY_EXPLICIT;
        for (unsigned v = fit ? fit : 1; v <= fit + 1; v++) {
                g_autoptr(Plan) p = NULL;
                req.vcpus = v;
                req.memory = v * METRICS_FIT_MEMORY_PER_VCPU;
                p = policy_place(s->t, s->ledger, &req, &c->placement);
                ok &= (p->result == PLAN_PLACED) == (v <= fit);
        }
        return ok;
}

static void start(Sim *s, const SimEvent *e, bool measure, SimResult *out)
{
        g_autofree char *name = g_strdup_printf("d%u", e->id);
        StartContext ctx = {0};
        uint64_t t0;
        Plan *p;

        if (measure) {
                ctx.min_nodes_free = setscan_min_nodes_free(s->scan, e->vcpus, e->memory);
                if (!ctx.min_nodes_free)
                        ctx.min_nodes_capacity = setscan_min_nodes_capacity(s->scan, e->vcpus, e->memory);
        }
        t0 = bench_now_ns();
        p = place(s, e, name);
        out->place_seconds += (double)(bench_now_ns() - t0) / 1e9;
        if (s->ledger && ledger_commit(s->ledger, name, plan_copy(p)) < 0) {
                fprintf(stderr, "bench: the ledger refused the plan of %s\n", name);
                exit(1);
        }
        g_ptr_array_add(s->plans, p);
        g_hash_table_insert(s->by_id, GUINT_TO_POINTER(e->id), p);
        occupancy_rebuild(s->occ, s->plans);
        if (measure)
                metrics_record_start(&out->m, s->occ, p, &ctx);
}

static void stop(Sim *s, const SimEvent *e)
{
        Plan *p = g_hash_table_lookup(s->by_id, GUINT_TO_POINTER(e->id));
        g_autofree char *name = g_strdup_printf("d%u", e->id);

        if (!p)
                return;
        if (s->ledger)
                ledger_release(s->ledger, name);
        g_hash_table_remove(s->by_id, GUINT_TO_POINTER(e->id));
        g_ptr_array_remove(s->plans, p); /* frees it */
        occupancy_rebuild(s->occ, s->plans);
}

void simulate(const Topology *t, const Workload *w, SimPolicy policy, const SimSeries *series,
              SimResult *out)
{
        Sim s = {
            .t = t,
            .policy = policy,
            .config = config_new_default(),
            .ledger = sim_policy_is_engine(policy) ? ledger_new(t) : NULL,
            .plans = g_ptr_array_new_with_free_func((GDestroyNotify)plan_free),
            .by_id = g_hash_table_new(g_direct_hash, g_direct_equal),
            .occ = occupancy_new(t),
            .scan = setscan_new(t),
        };
        double span = series->window > 0 ? MIN(series->window, w->end - w->warmup) : w->end - w->warmup;
        double step = series->points ? span / series->points : 0, next_point = w->warmup;
        unsigned npoints = 0;
        double prev_time = 0;
        unsigned fit = 0, measured = 0;
        uint64_t t0 = bench_now_ns();

        *out = (SimResult){.series = g_array_new(FALSE, FALSE, sizeof(SimPoint))};
        metrics_init(&out->m);
        s.config->placement.policy = policy == SIM_COMPAT ? POLICY_COMPAT : POLICY_EXPLICIT;
        setscan_update(s.scan, s.occ);
        fit = setscan_largest_fit(s.scan, METRICS_FIT_MEMORY_PER_VCPU);

        for (unsigned i = 0; i < w->events->len; i++) {
                const SimEvent *e = &g_array_index(w->events, SimEvent, i);
                double from = MAX(prev_time, w->warmup), to = MIN(e->time, w->end);
                bool measure = e->time >= w->warmup && e->time <= w->end;

                /* the state since the previous event held until now */
                if (to > from)
                        metrics_record_state(&out->m, s.occ, s.plans, fit, to - from);
                prev_time = e->time;
                while (npoints < series->points && next_point < e->time) {
                        SimPoint pt = {next_point, fit};
                        g_array_append_val(out->series, pt);
                        next_point = w->warmup + step * ++npoints;
                }

                if (e->start)
                        start(&s, e, measure, out);
                else
                        stop(&s, e);
                setscan_update(s.scan, s.occ);
                fit = setscan_largest_fit(s.scan, METRICS_FIT_MEMORY_PER_VCPU);

                if (!measure)
                        continue;
                if (s.ledger && measured++ % CROSSCHECK_EVERY == 0) {
                        out->checks++;
                        out->mismatches += !crosscheck(&s, fit);
                }
        }
        if (w->end > MAX(prev_time, w->warmup))
                metrics_record_state(&out->m, s.occ, s.plans, fit, w->end - MAX(prev_time, w->warmup));
        out->seconds = (double)(bench_now_ns() - t0) / 1e9;

        ledger_free(s.ledger);
        g_ptr_array_unref(s.plans);
        g_hash_table_destroy(s.by_id);
        occupancy_free(s.occ);
        setscan_free(s.scan);
        config_free(s.config);
}

void sim_result_clear(SimResult *r)
{
        if (r->series)
                g_array_unref(r->series);
        r->series = NULL;
}
