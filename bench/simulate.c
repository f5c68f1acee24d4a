/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The quality benchmark's replay: the workload as a trace through sim/replay.c (the replay `placementctl
 * simulate` and bench-load run), without load or heal, scored by bench/metrics.c through its observer.
 */
#include "simulate.h"
#include "baselines.h"
#include "config.h"
#include "load-workload.h"
#include "numad-load.h"
#include "policy.h"
#include "replay.h"
#include "setscan.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

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

/* What the observer keeps between calls. */
typedef struct Score {
        const Workload *w;
        const SimSeries *series;
        SimResult *out;
        bool engine;
        StartContext ctx;
        unsigned measured, npoints;
        double step, next_point;
} Score;

static bool in_window(const Score *sc, double time)
{
        return time >= sc->w->warmup && time <= sc->w->end;
}

/* Does explicit itself agree with setscan's largest fit on this ledger? */
static bool crosscheck(const Topology *t, const Ledger *l, unsigned fit)
{
        g_autoptr(Config) c = config_new_default();
        PlacementRequest req = {.name = "probe"};
        bool ok = true;

        c->placement.policy = POLICY_EXPLICIT;
        for (unsigned v = fit ? fit : 1; v <= fit + 1; v++) {
                g_autoptr(Plan) p = NULL;
                req.vcpus = v;
                req.memory = v * METRICS_FIT_MEMORY_PER_VCPU;
                p = policy_place(t, l, &req, &c->placement);
                ok &= (p->result == PLAN_PLACED) == (v <= fit);
        }
        return ok;
}

static void before_start(void *data, const SimView *v, const TraceEvent *e)
{
        Score *sc = data;

        sc->ctx = (StartContext){0};
        if (!in_window(sc, v->now))
                return;
        sc->ctx.min_nodes_free = setscan_min_nodes_free(v->scan, e->vcpus, e->memory);
        if (!sc->ctx.min_nodes_free)
                sc->ctx.min_nodes_capacity = setscan_min_nodes_capacity(v->scan, e->vcpus, e->memory);
}

static void after_event(void *data, const SimView *v, const TraceEvent *e, const Plan *started)
{
        Score *sc = data;

        (void)e;
        if (!in_window(sc, v->now))
                return;
        if (started)
                metrics_record_start(&sc->out->m, v->occ, started, &sc->ctx);
        if (sc->engine && sc->measured++ % CROSSCHECK_EVERY == 0) {
                sc->out->checks++;
                sc->out->mismatches += !crosscheck(v->t, v->ledger, v->largest_fit);
        }
}

static void state(void *data, const SimView *v, double from, double dt)
{
        Score *sc = data;
        double lo = MAX(from, sc->w->warmup), hi = MIN(from + dt, sc->w->end);

        if (hi > lo)
                metrics_record_state(&sc->out->m, v->occ, v->plans, v->largest_fit, hi - lo);
        while (sc->npoints < sc->series->points && sc->next_point < from + dt) {
                SimPoint pt = {sc->next_point, v->largest_fit};
                g_array_append_val(sc->out->series, pt);
                sc->next_point = sc->w->warmup + sc->step * ++sc->npoints;
        }
}

static const SimPlacer *placer_of(SimPolicy p)
{
        switch (p) {
        case SIM_FIRST_FIT:
                return baseline_placer(BASELINE_FIRST_FIT);
        case SIM_NUMAD:
                return baseline_placer(BASELINE_NUMAD);
        case SIM_NOVA_PREFER:
                return baseline_placer(BASELINE_NOVA_PREFER);
        default:
                return NULL;
        }
}

void simulate(const Topology *t, const Workload *w, SimPolicy policy, const SimSeries *series,
              SimResult *out)
{
        g_autoptr(Config) config = config_new_default();
        g_autoptr(GPtrArray) trace = workload_trace(w);
        double span = series->window > 0 ? MIN(series->window, w->end - w->warmup) : w->end - w->warmup;
        Score sc = {
            .w = w,
            .series = series,
            .out = out,
            .engine = sim_policy_is_engine(policy),
            .step = series->points ? span / series->points : 0,
            .next_point = w->warmup,
        };
        SimObserver observer = {
            .before_start = before_start, .after_event = after_event, .state = state, .data = &sc};
        g_autofree char *error = NULL;
        SimReport report;
        SimParams p;
        uint64_t t0 = bench_now_ns();

        *out = (SimResult){.series = g_array_new(FALSE, FALSE, sizeof(SimPoint))};
        metrics_init(&out->m);
        config->placement.policy = policy == SIM_COMPAT ? POLICY_COMPAT : POLICY_EXPLICIT;
        sim_params_from_config(&p, config);
        p.heal = false;
        p.use_load = false;
        p.placer = placer_of(policy);
        p.observer = &observer;
        if (sim_replay(t, &p, trace, &report, &error) < 0) {
                fprintf(stderr, "bench: %s\n", error);
                exit(1);
        }
        out->seconds = (double)(bench_now_ns() - t0) / 1e9;
}

void sim_result_clear(SimResult *r)
{
        if (r->series)
                g_array_unref(r->series);
        r->series = NULL;
}
