/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "load-workload.h"
#include "trace.h"

#include <math.h>

typedef struct Timed {
        double time;
        unsigned order; /* stops, then load changes, then starts at equal times; then input order */
        TraceEvent *e;
} Timed;

static gint compare_timed(gconstpointer pa, gconstpointer pb)
{
        const Timed *a = pa, *b = pb;

        if (a->time < b->time)
                return -1;
        if (a->time > b->time)
                return 1;
        return a->order < b->order ? -1 : a->order > b->order;
}

static TraceEvent *event_new(TraceOp op, unsigned id)
{
        TraceEvent *e = g_new0(TraceEvent, 1);
        *e = (TraceEvent){.op = op, .name = g_strdup_printf("d%u", id)};
        return e;
}

static double draw_busy(GRand *r, bool busy)
{
        return busy ? g_rand_double_range(r, 0.6, 1.0) : g_rand_double_range(r, 0.0, 0.15);
}

static void add(GArray *timed, double time, unsigned rank, TraceEvent *e)
{
        Timed t = {.time = time, .order = rank * 1000000u + timed->len, .e = e};
        g_array_append_val(timed, t);
}

/* w as a trace, a time unit lasting unit_sec; loads drawn from r, or none (every vCPU busy) without r;
 * thin host-side loads from thin (NULL: none). */
static GPtrArray *build_trace(const Workload *w, double unit_sec, GRand *r, GRand *thin)
{
        double lifetime_sec = unit_sec;
        g_autoptr(GArray) timed = g_array_new(FALSE, FALSE, sizeof(Timed));
        g_autofree double *stop_at = g_new(double, MAX(w->ndomains, 1));
        GPtrArray *trace = g_ptr_array_new_with_free_func((GDestroyNotify)trace_event_free);
        double now = 0;

        for (unsigned i = 0; i < w->ndomains; i++)
                stop_at[i] = INFINITY;
        for (unsigned i = 0; i < w->events->len; i++) {
                const SimEvent *ev = &g_array_index(w->events, SimEvent, i);
                if (!ev->start)
                        stop_at[ev->id] = ev->time * lifetime_sec;
        }
        for (unsigned i = 0; i < w->events->len; i++) {
                const SimEvent *ev = &g_array_index(w->events, SimEvent, i);
                double t = ev->time * lifetime_sec;
                TraceEvent *e;
                bool busy;

                if (!ev->start) {
                        add(timed, t, 0, event_new(TRACE_STOP, ev->id));
                        continue;
                }
                e = event_new(TRACE_START, ev->id);
                e->vcpus = ev->vcpus;
                e->memory = ev->memory;
                e->busy = 1;
                if (!r) {
                        add(timed, t, 2, e);
                        continue;
                }
                busy = g_rand_double(r) < LOAD_BUSY_SHARE;
                e->busy = draw_busy(r, busy);
                if (g_rand_double(r) < LOAD_HOST_SHARE) {
                        e->host = g_rand_double_range(r, 0.5, 1.5);
                        e->has_host = true;
                } else if (thin && g_rand_double(thin) < LOAD_THIN_HOST_SHARE) {
                        e->host = g_rand_double_range(thin, 0.25, 0.5);
                        e->has_host = true;
                }
                add(timed, t, 2, e);
                if (g_rand_double(r) < LOAD_FLIP_SHARE) {
                        double flip = t - lifetime_sec / 2 * log(1.0 - g_rand_double(r));
                        if (flip < stop_at[ev->id] && flip < w->end * lifetime_sec) {
                                TraceEvent *l = event_new(TRACE_LOAD, ev->id);
                                l->busy = draw_busy(r, !busy);
                                add(timed, flip, 1, l);
                        }
                }
        }
        g_array_sort(timed, compare_timed);
        for (unsigned i = 0; i < timed->len; i++) {
                Timed *t = &g_array_index(timed, Timed, i);
                if (t->time > now) {
                        TraceEvent *tick = g_new0(TraceEvent, 1);
                        *tick = (TraceEvent){.op = TRACE_TICK, .seconds = t->time - now};
                        g_ptr_array_add(trace, tick);
                        now = t->time;
                }
                g_ptr_array_add(trace, t->e);
        }
        if (w->end * lifetime_sec > now) {
                TraceEvent *tick = g_new0(TraceEvent, 1);
                *tick = (TraceEvent){.op = TRACE_TICK, .seconds = w->end * lifetime_sec - now};
                g_ptr_array_add(trace, tick);
        }
        return trace;
}

GPtrArray *load_trace_generate(const Workload *w, double lifetime_sec, guint32 seed, bool thin_host)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(seed);
        g_autoptr(GRand) thin = thin_host ? g_rand_new_with_seed(seed ^ 0x5a5a5a5au) : NULL;
        return build_trace(w, lifetime_sec, r, thin);
}

GPtrArray *workload_trace(const Workload *w)
{
        return build_trace(w, 1.0, NULL, NULL);
}
