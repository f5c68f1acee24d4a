/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement quality: replays seeded workloads (or a trace file) on the benchmark hosts under explicit,
 * compat and the baselines, and prints one Markdown table per host and load. Optionally writes
 * quality.csv and fragmentation.csv into --csv DIR.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"
#include "nodesets.h"
#include "simulate.h"
#include "trace.h"
#include "util.h"
#include "workload.h"

typedef struct Options {
        BenchRunOptions run;
        SimSeries series;
        const char *trace_path;
} Options;

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: bench-quality [--arrivals=N] [--seed=N] [--load=PCT]... [--host=NAME]\n"
                "                     [--trace=FILE] [--series-points=N] [--series-window=T]\n"
                "                     [--csv=DIR]\n"
                "Defaults: 2000 arrivals per run (10000 with BENCH_SIZE=big), seed 42, loads 50 90 120;\n"
                "the largest fit sampled 100 times over the first 25 mean lifetimes measured (0: all).\n");
}

static void parse_options(int argc, char **argv, Options *o)
{
        static const struct option options[] = {
            BENCH_RUN_OPTIONS,
            {"trace", required_argument, NULL, 't'},
            {"series-points", required_argument, NULL, 'p'},
            {"series-window", required_argument, NULL, 'w'},
            {"help", no_argument, NULL, 'h'},
            {},
        };
        int c;

        *o = (Options){.run.arrivals = bench_env_big() ? 10000 : 2000, .run.seed = 42, .series = {100, 25}};
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                if (bench_run_option(&o->run, "bench-quality", c, optarg))
                        continue;
                switch (c) {
                case 't':
                        o->trace_path = optarg;
                        break;
                case 'p':
                        o->series.points = bench_parse_unsigned("--series-points", optarg);
                        break;
                case 'w':
                        o->series.window = bench_parse_unsigned("--series-window", optarg);
                        break;
                default:
                        bench_usage_exit(usage, c == 'h');
                }
        }
        if (optind < argc || o->run.arrivals == 0)
                bench_usage_exit(usage, false);
        bench_loads_default(&o->run.loads);
}

/* Time mean of the vCPUs the workload asks to be resident, over its window, as % of the host's cores. */
static double offered_load(const Workload *w, unsigned cores)
{
        double vcpus = 0, integral = 0, prev = 0;

        for (unsigned i = 0; i < w->events->len; i++) {
                const SimEvent *e = &g_array_index(w->events, SimEvent, i);
                double from = MAX(prev, w->warmup), to = MIN(e->time, w->end);
                if (to > from)
                        integral += vcpus * (to - from);
                prev = e->time;
                vcpus += e->start ? e->vcpus : -(double)e->vcpus;
        }
        return w->end > w->warmup ? 100.0 * integral / (w->end - w->warmup) / cores : 0;
}

static Workload *load_trace(const char *path)
{
        g_autofree char *text = NULL, *error = NULL;
        g_autoptr(GError) gerror = NULL;
        g_autoptr(GPtrArray) events = NULL;

        if (!g_file_get_contents(path, &text, NULL, &gerror)) {
                fprintf(stderr, "bench-quality: %s\n", gerror->message);
                exit(2);
        }
        if (trace_parse(text, path, &events, &error) < 0) {
                fprintf(stderr, "bench-quality: %s\n", error);
                exit(2);
        }
        return workload_from_trace(events);
}

typedef struct Totals {
        uint64_t explicit_avoidable;
        unsigned checks, mismatches;
} Totals;

static void print_header(void)
{
        printf("| policy | shared vCPUs (time mean) | shared at start | avoidable | over-spread domains "
               "(of which overcommitted) | vCPU->memory distance (placed only) | placed / overcommitted / "
               "unplaceable "
               "| largest fit min / mean |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
}

static void print_row(SimPolicy p, const SimResult *r)
{
        const QualityMetrics *m = &r->m;

        printf("| %s | %.1f%% | %.1f%% (%" G_GUINT64_FORMAT ") | %" G_GUINT64_FORMAT
               " | %.1f%% (%u/%u; %u) | %.2f (%.2f) | %u / %u / %u | %u / %.1f |\n",
               sim_policy_name(p), metrics_shared_share(m), metrics_start_shared_share(m),
               m->shared_at_start, m->avoidable, metrics_overspread_share(m), m->overspread, m->judged,
               m->overspread_overcommitted, metrics_mean_distance(m), metrics_mean_distance_placed(m),
               m->placed, m->overcommitted, m->unplaceable, m->fit_min, metrics_fit_mean(m));
}

static void write_csv_row(FILE *f, const char *host, const char *load, SimPolicy p, const SimResult *r)
{
        const QualityMetrics *m = &r->m;

        if (!f)
                return;
        fprintf(f,
                "%s,%s,%s,%u,%" G_GUINT64_FORMAT ",%.3f,%" G_GUINT64_FORMAT ",%.3f,%" G_GUINT64_FORMAT
                ",%.3f,%u,%u,%u,%.4f,%.4f,%u,%u,%u,%u,%.3f,%u,%u,%.3f\n",
                host, load, sim_policy_name(p), m->starts, m->vcpus_started, metrics_shared_share(m),
                m->shared_at_start, metrics_start_shared_share(m), m->avoidable, metrics_overspread_share(m),
                m->overspread, m->overspread_overcommitted, m->judged, metrics_mean_distance(m),
                metrics_mean_distance_placed(m), m->placed, m->overcommitted, m->unplaceable, m->fit_min,
                metrics_fit_mean(m), r->checks, r->mismatches, r->seconds);
}

static void run_one(const BenchHost *h, const Topology *t, const Workload *w, const char *load,
                    const Options *o, FILE *csv, FILE *series, Totals *totals)
{
        double seconds = 0;

        printf("\n#### %s, load %s%s (offered %.0f%% of %u cores; %u domains, mean %.1f vCPUs)\n\n", h->name,
               load, o->trace_path ? "" : "%", offered_load(w, t->ncores), t->ncores, w->ndomains,
               w->mean_vcpus);
        print_header();
        for (SimPolicy p = 0; p < _SIM_POLICY_MAX; p++) {
                SimResult r;
                simulate(t, w, p, &o->series, &r);
                print_row(p, &r);
                write_csv_row(csv, h->name, load, p, &r);
                for (unsigned i = 0; series && i < r.series->len; i++) {
                        const SimPoint *pt = &g_array_index(r.series, SimPoint, i);
                        fprintf(series, "%s,%s,%s,%.4f,%u\n", h->name, load, sim_policy_name(p), pt->time,
                                pt->largest_fit);
                }
                if (p == SIM_EXPLICIT)
                        totals->explicit_avoidable += r.m.avoidable;
                totals->checks += r.checks;
                totals->mismatches += r.mismatches;
                seconds += r.seconds;
                sim_result_clear(&r);
        }
        printf("\n(%.1f s for the five replays)\n", seconds);
        fflush(stdout);
}

int main(int argc, char **argv)
{
        Options o;
        g_autoptr(Workload) trace = NULL;
        FILE *csv, *series;
        Totals totals = {0};

        parse_options(argc, argv, &o);
        bench_quality_hosts_check("bench-quality", o.run.host_filter);
        if (o.trace_path)
                trace = load_trace(o.trace_path);
        csv = bench_open_csv(o.run.csv_dir, "quality.csv");
        series = bench_open_csv(o.run.csv_dir, "fragmentation.csv");
        if (csv)
                fprintf(csv, "host,load_pct,policy,starts,vcpus_started,shared_pct,shared_at_start,"
                             "shared_at_start_pct,avoidable,overspread_pct,overspread,overspread_"
                             "overcommitted,judged,"
                             "mean_distance,mean_distance_placed,"
                             "placed,overcommitted,unplaceable,fit_min,fit_mean,crosscheck_checks,"
                             "crosscheck_mismatches,sim_seconds\n");
        if (series)
                fprintf(series, "host,load_pct,policy,time,largest_fit\n");

        printf("### Placement quality\n\n");
        if (o.trace_path)
                printf("Trace %s replayed on each host (one event per time unit).\n", o.trace_path);
        else
                printf("Seed %u, %u arrivals per run, Poisson arrivals, exponential lifetimes (mean 1), the "
                       "first "
                       "3 lifetimes not measured. Sizes 1/2/4/8/16/32 vCPUs (weights 30/30/20/12/5/3, none "
                       "above the host's cores), 2/4/8 GiB per vCPU (weights 1/2/1).\n",
                       o.run.seed, o.run.arrivals);
        printf(
            "Shared: a vCPU on a core holding another vCPU. Avoidable: shared at start although a candidate "
            "node set had free whole cores and memory for the whole domain. Over-spread: vCPUs and memory "
            "on "
            "more nodes than the smallest set that could hold them. Largest fit: the most vCPUs (2 GiB "
            "each) "
            "explicit would still place.\n");

        for (unsigned hi = 0; hi < bench_nquality_hosts; hi++) {
                const BenchHost *h = &bench_quality_hosts[hi];
                g_autoptr(Topology) t = NULL;

                if (!bench_quality_host_selected(h, o.run.host_filter))
                        continue;
                t = bench_host_build(h);
                printf("\n### Host %s: %s (%u PUs, %u candidate node sets)\n", h->name, h->description,
                       t->npus, t->nodesets->ncandidates);
                if (trace) {
                        run_one(h, t, trace, "trace", &o, csv, series, &totals);
                        continue;
                }
                for (unsigned li = 0; li < o.run.loads.n; li++) {
                        WorkloadSpec spec = {
                            .seed = o.run.seed + hi * 1000 + o.run.loads.pct[li],
                            .host_cores = t->ncores,
                            .load = o.run.loads.pct[li] / 100.0,
                            .arrivals = o.run.arrivals,
                            .mean_lifetime = 1.0,
                            .warmup_lifetimes = 3.0,
                        };
                        g_autoptr(Workload) w = workload_generate(&spec);
                        g_autofree char *load = g_strdup_printf("%u", o.run.loads.pct[li]);
                        run_one(h, t, w, load, &o, csv, series, &totals);
                }
        }
        printf("\nChecks: explicit avoidable contention %" G_GUINT64_FORMAT
               " (0 by construction): %s; largest fit "
               "cross-checked against policy_place() %u times, %u mismatches: %s\n",
               totals.explicit_avoidable, totals.explicit_avoidable ? "VIOLATED" : "ok", totals.checks,
               totals.mismatches, totals.mismatches ? "VIOLATED" : "ok");
        if (csv)
                fclose(csv);
        if (series)
                fclose(series);
        /* figures never fail a benchmark; a broken invariant of the engine does */
        return totals.explicit_avoidable || totals.mismatches ? 1 : 0;
}
