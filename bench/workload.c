/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "workload.h"
#include "trace.h"

#include <math.h>

#define GiB (UINT64_C(1) << 30)

/* Cloud-like: many small domains, a few large ones; 2, 4 or 8 GiB per vCPU (compute, general, memory). */
const unsigned workload_vcpu_sizes[] = {1, 2, 4, 8, 16, 32};
const unsigned workload_vcpu_weights[] = {30, 30, 20, 12, 5, 3};
const unsigned workload_nsizes = G_N_ELEMENTS(workload_vcpu_sizes);
const unsigned workload_gib_per_vcpu[] = {2, 4, 8};
const unsigned workload_gib_weights[] = {1, 2, 1};
const unsigned workload_ngib = G_N_ELEMENTS(workload_gib_per_vcpu);

static unsigned pick(GRand *r, const unsigned *values, const unsigned *weights, unsigned n, unsigned cap)
{
        unsigned total = 0, x;

        for (unsigned i = 0; i < n; i++)
                if (values[i] <= cap)
                        total += weights[i];
        x = (unsigned)g_rand_int_range(r, 0, (gint32)total);
        for (unsigned i = 0; i < n; i++) {
                if (values[i] > cap)
                        continue;
                if (x < weights[i])
                        return values[i];
                x -= weights[i];
        }
        return values[0];
}

unsigned workload_draw_vcpus(GRand *r, unsigned cap)
{
        return pick(r, workload_vcpu_sizes, workload_vcpu_weights, workload_nsizes, MAX(cap, 1));
}

uint64_t workload_draw_memory(GRand *r, unsigned vcpus)
{
        return (uint64_t)vcpus * GiB *
               pick(r, workload_gib_per_vcpu, workload_gib_weights, workload_ngib, UINT32_MAX);
}

static double mean_size(unsigned cap)
{
        double sum = 0, weight = 0;

        for (unsigned i = 0; i < workload_nsizes; i++)
                if (workload_vcpu_sizes[i] <= cap) {
                        sum += (double)workload_vcpu_sizes[i] * workload_vcpu_weights[i];
                        weight += workload_vcpu_weights[i];
                }
        return weight > 0 ? sum / weight : 1;
}

static double exponential(GRand *r, double mean)
{
        /* 1 - U is in (0, 1], so the log is finite */
        return -mean * log(1.0 - g_rand_double(r));
}

static gint compare_events(gconstpointer pa, gconstpointer pb)
{
        const SimEvent *a = pa, *b = pb;

        if (a->time < b->time)
                return -1;
        if (a->time > b->time)
                return 1;
        if (a->start != b->start)
                return a->start ? 1 : -1;
        return a->id < b->id ? -1 : a->id > b->id;
}

static Workload *workload_alloc(void)
{
        Workload *w = g_new0(Workload, 1);
        w->events = g_array_new(FALSE, FALSE, sizeof(SimEvent));
        return w;
}

Workload *workload_generate(const WorkloadSpec *spec)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(spec->seed);
        Workload *w = workload_alloc();
        unsigned cap = MAX(spec->host_cores, 1);
        double mean_vcpus = mean_size(cap);
        /* Little's law: resident vCPUs = arrival rate * lifetime * vCPUs per domain */
        double rate = spec->load * spec->host_cores / (spec->mean_lifetime * mean_vcpus);
        double now = 0;

        w->mean_vcpus = mean_vcpus;
        for (unsigned id = 0; id < spec->arrivals; id++) {
                SimEvent start = {.start = true, .id = id};
                SimEvent stop;

                now += exponential(r, 1.0 / rate);
                start.time = now;
                start.vcpus = workload_draw_vcpus(r, cap);
                start.memory = workload_draw_memory(r, start.vcpus);
                stop = start;
                stop.start = false;
                stop.time = now + exponential(r, spec->mean_lifetime);
                g_array_append_val(w->events, start);
                g_array_append_val(w->events, stop);
        }
        w->ndomains = spec->arrivals;
        w->end = now;
        w->warmup = MIN(spec->warmup_lifetimes * spec->mean_lifetime, now / 2);
        g_array_sort(w->events, compare_events);
        /* the run ends at the last arrival; later stops change nothing that is measured */
        while (w->events->len && g_array_index(w->events, SimEvent, w->events->len - 1).time > w->end)
                g_array_set_size(w->events, w->events->len - 1);
        return w;
}

Workload *workload_from_trace(const GPtrArray *trace)
{
        Workload *w = workload_alloc();
        g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
        double vcpus = 0;
        unsigned starts = 0;

        for (unsigned i = 0; i < trace->len; i++) {
                const TraceEvent *e = g_ptr_array_index(trace, i);
                SimEvent ev = {
                    .time = i, .start = e->op == TRACE_START, .vcpus = e->vcpus, .memory = e->memory};
                gpointer id;

                if (e->op != TRACE_START && e->op != TRACE_STOP)
                        continue; /* loads and ticks: one event per time unit here */
                if (ev.start) {
                        ev.id = w->ndomains++;
                        /* a name may come back after it stopped: the newest start owns it */
                        g_hash_table_insert(ids, e->name, GUINT_TO_POINTER(ev.id + 1));
                        vcpus += e->vcpus;
                        starts++;
                } else {
                        id = g_hash_table_lookup(ids, e->name);
                        if (!id)
                                continue;
                        ev.id = GPOINTER_TO_UINT(id) - 1;
                        g_hash_table_remove(ids, e->name);
                }
                g_array_append_val(w->events, ev);
        }
        w->warmup = 0;
        w->end = trace->len;
        w->mean_vcpus = starts ? vcpus / starts : 0;
        return w;
}

void workload_free(Workload *w)
{
        if (!w)
                return;
        g_array_unref(w->events);
        g_free(w);
}
