/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement under real load: seeded workloads with busy and idle domains (bench/load-workload.h) replayed
 * by sim/replay.h on the benchmark hosts, under explicit with and without heal and measured load, compat,
 * a numad that acts on measured load and a Nova-like baseline, each beside the bound no placement can
 * beat. Prints one Markdown table per host and load and the goals; writes load.csv into --csv DIR.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "contention.h"
#include "hosts.h"
#include "load-workload.h"
#include "numad-load.h"
#include "replay.h"
#include "util.h"
#include "workload.h"

typedef struct Options {
        BenchRunOptions run;
        unsigned lifetime_sec;
        unsigned seeds;
        bool breakdown;
        bool thin_host;
} Options;

typedef enum Row {
        ROW_EXPLICIT,
        ROW_EXPLICIT_LOAD,
        ROW_EXPLICIT_HEAL,
        ROW_EXPLICIT_HEAL_LOAD,
        ROW_EXPLICIT_HEAL_LOAD_PACK,
        ROW_COMPAT,
        ROW_NUMAD,
        ROW_NOVA,
        _ROW_MAX,
} Row;

static const char *const row_names[_ROW_MAX] = {
    [ROW_EXPLICIT] = "explicit",
    [ROW_EXPLICIT_LOAD] = "explicit + load",
    [ROW_EXPLICIT_HEAL] = "explicit + heal",
    [ROW_EXPLICIT_HEAL_LOAD] = "explicit + heal + load",
    [ROW_EXPLICIT_HEAL_LOAD_PACK] = "explicit + heal + load (Fit=pack)",
    [ROW_COMPAT] = "compat",
    [ROW_NUMAD] = "baseline: numad on measured load",
    [ROW_NOVA] = "baseline: nova-prefer",
};

static void usage(FILE *f)
{
        fprintf(
            f,
            "Usage: bench-load [--arrivals=N] [--seed=N] [--load=PCT]... [--host=NAME]\n"
            "                  [--lifetime-sec=N] [--csv=DIR] [--breakdown] [--seeds=N] [--thin-host]\n"
            "Defaults: 1000 arrivals per run (3000 with BENCH_SIZE=big), seed 42, loads 50 90 120,\n"
            "mean lifetime 600 s. --breakdown: also where explicit + heal + load loses against the\n"
            "bound, by cause (load known at once, a heal pass every interval, no move cap or cool-down).\n"
            "--seeds=N: also N-1 more workloads (seeds seed+1...), tables for the first only, the goals\n"
            "over all of them. --thin-host: also thin host-side load (0.25-0.5 cores) for 30%% of the\n"
            "domains without busy host-side threads; every other draw as without.\n");
}

static void parse_options(int argc, char **argv, Options *o)
{
        static const struct option options[] = {
            BENCH_RUN_OPTIONS,
            {"lifetime-sec", required_argument, NULL, 'L'},
            {"breakdown", no_argument, NULL, 'b'},
            {"seeds", required_argument, NULL, 'S'},
            {"thin-host", no_argument, NULL, 'T'},
            {"help", no_argument, NULL, 'h'},
            {},
        };
        int c;

        *o = (Options){
            .run.arrivals = bench_env_big() ? 3000 : 1000, .run.seed = 42, .lifetime_sec = 600, .seeds = 1};
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                if (bench_run_option(&o->run, "bench-load", c, optarg))
                        continue;
                switch (c) {
                case 'L':
                        o->lifetime_sec = bench_parse_unsigned("--lifetime-sec", optarg);
                        break;
                case 'b':
                        o->breakdown = true;
                        break;
                case 'S':
                        o->seeds = bench_parse_unsigned("--seeds", optarg);
                        break;
                case 'T':
                        o->thin_host = true;
                        break;
                default:
                        bench_usage_exit(usage, c == 'h');
                }
        }
        if (optind < argc || o->run.arrivals == 0 || o->lifetime_sec == 0 || o->seeds == 0)
                bench_usage_exit(usage, false);
        bench_loads_default(&o->run.loads);
}

/* The daemon's defaults (heal on, load every 5 s), then what the row turns off or changes. */
static void row_params(Row row, const Config *spread, const Config *pack, const Config *compat, SimParams *p)
{
        sim_params_from_config(p, row == ROW_EXPLICIT_HEAL_LOAD_PACK ? pack
                                  : row == ROW_COMPAT                ? compat
                                                                     : spread);
        p->heal =
            row == ROW_EXPLICIT_HEAL || row == ROW_EXPLICIT_HEAL_LOAD || row == ROW_EXPLICIT_HEAL_LOAD_PACK;
        p->use_load =
            row == ROW_EXPLICIT_LOAD || row == ROW_EXPLICIT_HEAL_LOAD || row == ROW_EXPLICIT_HEAL_LOAD_PACK;
        if (row == ROW_NUMAD) {
                p->placer = numad_load_placer();
                p->use_load = true;     /* numad measures; it rebalances every scan (numad-load.h) */
                p->load_warmup_sec = 0; /* and takes a process's second scan as its load */
        }
        if (row == ROW_NOVA)
                p->placer = baseline_placer(BASELINE_NOVA_PREFER);
}

/* The figures the goals are checked on, per host and load. */
typedef struct Cell {
        SimReport r[_ROW_MAX];
} Cell;

typedef struct Goals {
        unsigned cells_pressed, lost_within, lost_below_baselines, contended_halved;
        unsigned contended_conflict; /* cells where half of today's is below the least-loss placement's */
        double worst_ratio, worst_contended_ratio, moves_per_domain_max;
        double thread_moves_per_domain_max; /* of them, re-pins of host-side threads alone */
        unsigned lost_over_zero;            /* cells with a bound of 0 that lost capacity */
        unsigned cells_50;
        double shared_50_max;
} Goals;

static void print_header(void)
{
        printf(
            "| policy | capacity lost (cores) | / bound | busy vCPUs contended | vCPUs on a shared core "
            "| moves per domain | memory moved | vCPU->memory distance | largest fit mean | overcommitted / "
            "unplaceable |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

static void print_row(const char *name, const SimReport *r)
{
        char ratio[32];

        if (r->bound_capacity_lost > 1e-9)
                g_snprintf(ratio, sizeof(ratio), "%.2fx", r->capacity_lost / r->bound_capacity_lost);
        else
                g_snprintf(ratio, sizeof(ratio), "%s", r->capacity_lost > 1e-9 ? "(bound 0)" : "=");
        printf("| %s | %.2f | %s | %.1f%% | %.1f%% | %.2f | %.1f GiB | %.2f | %.1f | %u / %u |\n", name,
               r->capacity_lost, ratio, 100 * r->busy_contended_fraction, 100 * r->shared_vcpu_fraction,
               r->starts ? (double)r->moves / r->starts : 0, (double)r->memory_moved_bytes / GiB,
               r->mean_memory_distance, r->largest_fit_mean, r->overcommitted, r->unplaceable);
}

static void check_goals(const Cell *c, unsigned load, Goals *g)
{
        const SimReport *best = &c->r[ROW_EXPLICIT_HEAL_LOAD], *today = &c->r[ROW_EXPLICIT];
        double bound = best->bound_capacity_lost;

        for (unsigned row = ROW_EXPLICIT_HEAL; row <= ROW_EXPLICIT_HEAL_LOAD_PACK; row++)
                if (c->r[row].starts) {
                        g->moves_per_domain_max =
                            MAX(g->moves_per_domain_max, (double)c->r[row].moves / c->r[row].starts);
                        g->thread_moves_per_domain_max =
                            MAX(g->thread_moves_per_domain_max,
                                (double)c->r[row].host_thread_moves / c->r[row].starts);
                }
        if (load < 90) {
                g->cells_50++;
                g->shared_50_max = MAX(g->shared_50_max, best->shared_vcpu_fraction);
                return;
        }
        g->cells_pressed++;
        if (best->capacity_lost <= 1.25 * bound + 1e-9)
                g->lost_within++;
        if (bound > 1e-9)
                g->worst_ratio = MAX(g->worst_ratio, best->capacity_lost / bound);
        else if (best->capacity_lost > 1e-9)
                g->lost_over_zero++; /* any loss is over a bound of 0: no ratio */
        if (best->capacity_lost < c->r[ROW_COMPAT].capacity_lost &&
            best->capacity_lost < c->r[ROW_NUMAD].capacity_lost &&
            best->capacity_lost < c->r[ROW_NOVA].capacity_lost)
                g->lost_below_baselines++;
        if (best->busy_contended_fraction <= 0.5 * today->busy_contended_fraction + 1e-12)
                g->contended_halved++;
        if (0.5 * today->busy_contended_fraction < best->bound_paired_contended_fraction)
                g->contended_conflict++;
        if (today->busy_contended_fraction > 0)
                g->worst_contended_ratio = MAX(g->worst_contended_ratio, best->busy_contended_fraction /
                                                                             today->busy_contended_fraction);
}

/*
 * Where explicit + heal + load loses against the bound: the same replay with each limit lifted in turn
 * (cumulatively), so each step's drop is what that cause costs; and of each, what busy host-side threads
 * add, and what was lost while a calm core was on the losing core's node or only on another node (the
 * bound counts every core of the host as near; the rest was lost with no calm core anywhere). What is
 * left after the last step is what placing whole domains, with memory, one at a time costs.
 */
static void run_breakdown(const Topology *t, const Config *spread, const GPtrArray *trace, double from,
                          const SimReport *base)
{
        static const char *const steps[] = {"explicit + heal + load (the daemon)", "+ load known at once",
                                            "+ a heal pass every interval", "+ no move cap, no cool-down"};
        double prev = base->capacity_lost;

        printf("\nWhere it loses (explicit + heal + load, each limit lifted in turn; bound %.2f):\n\n"
               "| step | capacity lost | of it, busy host threads | calm core on its node | only on "
               "another node | step's gain | / bound | busy vCPUs contended | moves per domain |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
               base->bound_capacity_lost);
        for (unsigned k = 0; k < G_N_ELEMENTS(steps); k++) {
                SimReport r = *base;
                SimParams p;
                g_autofree char *error = NULL;
                char ratio[32] = "(bound 0)";

                if (k > 0) {
                        sim_params_from_config(&p, spread);
                        p.measure_from = from;
                        p.oracle_load = k >= 1;
                        p.heal_every_interval = k >= 2;
                        p.heal_unbounded = k >= 3;
                        if (sim_replay(t, &p, trace, &r, &error) < 0) {
                                fprintf(stderr, "bench-load: breakdown: %s\n", error);
                                exit(1);
                        }
                }
                if (r.bound_capacity_lost > 1e-9)
                        g_snprintf(ratio, sizeof(ratio), "%.2fx", r.capacity_lost / r.bound_capacity_lost);
                printf("| %s | %.2f | %.2f | %.2f | %.2f | %+.2f | %s | %.1f%% | %.2f |\n", steps[k],
                       r.capacity_lost, r.host_capacity_lost, r.calm_node_capacity_lost,
                       r.calm_elsewhere_capacity_lost, k ? prev - r.capacity_lost : 0.0, ratio,
                       100 * r.busy_contended_fraction, r.starts ? (double)r.moves / r.starts : 0);
                prev = r.capacity_lost;
        }
}

/* One host and load on the workload of seed: every row replayed into *cell; printed (tables, CSV and the
 * breakdown) when print. */
static void run_cell(const BenchHost *h, const Topology *t, unsigned load, unsigned seed, bool print,
                     const Options *o, FILE *csv, Cell *cell)
{
        WorkloadSpec spec = {.seed = seed + load,
                             .host_cores = t->ncores,
                             .load = load / 100.0,
                             .arrivals = o->run.arrivals,
                             .mean_lifetime = 1,
                             .warmup_lifetimes = 3};
        g_autoptr(Workload) w = workload_generate(&spec);
        g_autoptr(GPtrArray) trace = load_trace_generate(w, o->lifetime_sec, seed + 7 * load, o->thin_host);
        g_autoptr(Config) spread = config_new_default(), pack = config_new_default(),
                          compat = config_new_default();
        double wall = 0;

        *cell = (Cell){0};
        pack->placement.fit = FIT_PACK;
        compat->placement.policy = POLICY_COMPAT;
        if (print) {
                printf("\n#### %s, load %u%% (%u domains, measured after %.0f s)\n\n", h->name, load,
                       w->ndomains, w->warmup * o->lifetime_sec);
                print_header();
        }
        for (unsigned row = 0; row < _ROW_MAX; row++) {
                SimParams p;
                g_autofree char *error = NULL;
                uint64_t t0 = bench_now_ns();

                row_params((Row)row, spread, pack, compat, &p);
                p.measure_from = w->warmup * o->lifetime_sec;
                if (sim_replay(t, &p, trace, &cell->r[row], &error) < 0) {
                        fprintf(stderr, "bench-load: %s: %s\n", h->name, error);
                        exit(1);
                }
                wall += (double)(bench_now_ns() - t0) / 1e9;
                if (!print)
                        continue;
                print_row(row_names[row], &cell->r[row]);
                if (csv) {
                        const SimReport *r = &cell->r[row];
                        fprintf(csv,
                                "%s,%u,%s,%.4f,%.4f,%.5f,%.5f,%.5f,%.5f,%u,%u,%" G_GUINT64_FORMAT
                                ",%.3f,%.2f,%u,%u,%u,%.2f,%.2f,%.5f\n",
                                h->name, load, row_names[row], r->capacity_lost, r->bound_capacity_lost,
                                r->busy_contended_fraction, r->bound_busy_contended_fraction,
                                r->shared_vcpu_fraction, r->busy_vcpus_mean, r->starts, r->moves,
                                r->memory_moved_bytes, r->mean_memory_distance, r->largest_fit_mean,
                                r->largest_fit_min, r->overcommitted, r->unplaceable, r->vcpus_mean,
                                r->seconds, r->bound_paired_contended_fraction);
                }
        }
        if (!print)
                return;
        /* Each run's bound is over the domains it ran: a policy that leaves other domains unplaceable, or
         * places them again after a departure (heal), runs a different set. The row shown is the daemon's.
         */
        const SimReport *d = &cell->r[ROW_EXPLICIT_HEAL_LOAD];
        printf(
            "| **bound** of explicit + heal + load's run (no placement can beat) | %.2f | | %.1f%% (%.1f%% "
            "where it loses least) | | | | | | |\n",
            d->bound_capacity_lost, 100 * d->bound_busy_contended_fraction,
            100 * d->bound_paired_contended_fraction);
        printf(
            "\nEach row's / bound is against the bound of its own run, over the domains that run placed "
            "(explicit's: %.2f cores). In explicit + heal + load's run: %.1f vCPUs resident, of them %.1f "
            "busy, on %u cores (time means); %.0f s simulated; replays took %.2f s.\n",
            cell->r[ROW_EXPLICIT].bound_capacity_lost, d->vcpus_mean, d->busy_vcpus_mean, t->ncores,
            d->seconds, wall);
        if (o->breakdown)
                run_breakdown(t, spread, trace, w->warmup * o->lifetime_sec,
                              &cell->r[ROW_EXPLICIT_HEAL_LOAD]);
}

/* One host and load over every seed: what the goals are checked on, summed for the means. */
typedef struct SeedSum {
        unsigned n, lost_within, halved;
        double lost, lost_min, lost_max, bound, contended, today, paired;
} SeedSum;

static void seed_sum_add(SeedSum *s, const Cell *c)
{
        const SimReport *best = &c->r[ROW_EXPLICIT_HEAL_LOAD], *today = &c->r[ROW_EXPLICIT];

        s->lost_min = s->n ? MIN(s->lost_min, best->capacity_lost) : best->capacity_lost;
        s->lost_max = s->n ? MAX(s->lost_max, best->capacity_lost) : best->capacity_lost;
        s->n++;
        s->lost += best->capacity_lost;
        s->bound += best->bound_capacity_lost;
        s->contended += best->busy_contended_fraction;
        s->today += today->busy_contended_fraction;
        s->paired += best->bound_paired_contended_fraction;
        s->lost_within += best->capacity_lost <= 1.25 * best->bound_capacity_lost + 1e-9;
        s->halved += best->busy_contended_fraction <= 0.5 * today->busy_contended_fraction + 1e-12;
}

static void print_seed_sum(const char *host, unsigned load, const SeedSum *s)
{
        char ratio[32] = "(bound 0)";

        if (s->bound > 1e-9)
                g_snprintf(ratio, sizeof(ratio), "%.2fx", s->lost / s->bound);
        printf("| %s %u%% | %.2f (%.2f-%.2f) | %.2f | %s | %u of %u | %.1f%% | %.1f%% | %.2fx | %.1f%% | %u "
               "of %u "
               "|\n",
               host, load, s->lost / s->n, s->lost_min, s->lost_max, s->bound / s->n, ratio, s->lost_within,
               s->n, 100 * s->contended / s->n, 100 * s->today / s->n,
               s->today > 0 ? s->contended / s->today : 0, 100 * s->paired / s->n, s->halved, s->n);
}

static void print_goals(const Goals *g, unsigned seeds)
{
        printf(
            "\n### Goals (explicit + heal + load, against the same run; cells of %u workload%s)\n\n| goal | "
            "measured | verdict |\n|---|---|---|\n",
            seeds, seeds == 1 ? "" : "s");
        printf(
            "| 90%%/120%%: capacity lost within 1.25x of the bound | %u of %u cells; worst %.2fx where the "
            "bound is above 0, and %u cell%s lost capacity where it is 0 | %s |\n",
            g->lost_within, g->cells_pressed, g->worst_ratio, g->lost_over_zero,
            g->lost_over_zero == 1 ? "" : "s", g->lost_within == g->cells_pressed ? "met" : "**not met**");
        printf("| 90%%/120%%: capacity lost below every baseline's | %u of %u cells | %s |\n",
               g->lost_below_baselines, g->cells_pressed,
               g->lost_below_baselines == g->cells_pressed ? "met" : "**not met**");
        printf("| 90%%/120%%: busy vCPUs contended at most half of today's explicit | %u of %u cells; worst "
               "%.2fx of today's; in %u cells half of today's is below what the placement that loses least "
               "has contending (the bound's paired share) | %s |\n",
               g->contended_halved, g->cells_pressed, g->worst_contended_ratio, g->contended_conflict,
               g->contended_halved == g->cells_pressed ? "met" : "**not met**");
        printf(
            "| 50%%: no vCPU shares a core a free core could have taken | up to %.1f%% of vCPUs on a shared "
            "core (time mean, %u cells), when big domains outgrow the free cores; the placements "
            "themselves: "
            "bench-quality's avoidable count | see section 1 |\n",
            100 * g->shared_50_max, g->cells_50);
        printf("| moves: at most one per domain lifetime on average | at most %.2f per domain (heal rows; "
               "re-pins of host-side threads alone at most %.2f) | %s |\n",
               g->moves_per_domain_max, g->thread_moves_per_domain_max,
               g->moves_per_domain_max <= 1 ? "met" : "**not met**");
}

int main(int argc, char **argv)
{
        Options o;
        FILE *csv;
        Goals goals = {0};
        g_autoptr(Config) defaults = config_new_default();
        g_autofree SeedSum *sums = NULL;
        g_autofree const char **sum_host = NULL;
        g_autofree unsigned *sum_load = NULL;
        unsigned nsums = 0;

        parse_options(argc, argv, &o);
        bench_quality_hosts_check("bench-load", o.run.host_filter);
        sums = g_new0(SeedSum, bench_nquality_hosts * o.run.loads.n);
        sum_host = g_new0(const char *, bench_nquality_hosts *o.run.loads.n);
        sum_load = g_new0(unsigned, bench_nquality_hosts *o.run.loads.n);
        csv = bench_open_csv(o.run.csv_dir, "load.csv");
        if (csv)
                fprintf(csv,
                        "host,load,policy,capacity_lost,bound_capacity_lost,busy_contended_fraction,"
                        "bound_busy_contended_fraction,shared_vcpu_fraction,busy_vcpus_mean,starts,moves,"
                        "memory_moved_bytes,mean_memory_distance,largest_fit_mean,largest_fit_min,"
                        "overcommitted,unplaceable,vcpus_mean,seconds,bound_paired_contended_fraction\n");
        printf("## Placement under load\n\n%u arrivals per run, seed %u, mean lifetime %u s; the daemon's "
               "defaults: load measured every %u s (half-life %.0f s rising, %.0f s falling, a domain's "
               "first %u s set aside), "
               "a heal pass %u s after a departure and right after a load change, at most %u moves; "
               "a busy pair on siblings loses %.0f%% each.\n",
               o.run.arrivals, o.run.seed, o.lifetime_sec, defaults->load_interval_sec,
               LOAD_RISE_HALF_LIFE_SEC, LOAD_FALL_HALF_LIFE_SEC, defaults->load_warmup_sec,
               defaults->heal_interval_sec, defaults->heal_max_moves, 100 * CONTENTION_SIBLING_LOSS);
        if (o.thin_host)
                printf(
                    "With --thin-host: %.0f%% of the domains without busy host-side threads have thin ones "
                    "(0.25-0.5 cores).\n",
                    100 * LOAD_THIN_HOST_SHARE);
        for (unsigned i = 0; i < bench_nquality_hosts; i++) {
                const BenchHost *h = &bench_quality_hosts[i];
                g_autoptr(Topology) t = NULL;
                if (!bench_quality_host_selected(h, o.run.host_filter))
                        continue;
                t = bench_host_build(h);
                for (unsigned l = 0; l < o.run.loads.n; l++) {
                        SeedSum *sum = &sums[nsums++];
                        for (unsigned k = 0; k < o.seeds; k++) {
                                Cell cell;
                                run_cell(h, t, o.run.loads.pct[l], o.run.seed + k, k == 0, &o, csv, &cell);
                                check_goals(&cell, o.run.loads.pct[l], &goals);
                                seed_sum_add(sum, &cell);
                                sum_host[nsums - 1] = h->name;
                                sum_load[nsums - 1] = o.run.loads.pct[l];
                        }
                }
        }
        if (o.seeds > 1) {
                printf(
                    "\n### Over %u workloads (seeds %u-%u): explicit + heal + load\n\n"
                    "Means over the seeds; capacity lost (cores) with its least and most; / bound is the "
                    "ratio of the means; \"within 1.25x\" and \"halved\" count the seeds where each goal "
                    "holds; \"least-loss\" is the share of busy vCPUs contending in the placement that "
                    "loses least (the bound's paired share).\n\n"
                    "| host, load | capacity lost | bound | / bound | within 1.25x | busy vCPUs contended | "
                    "today's explicit | / today's | least-loss | halved |\n"
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                    o.seeds, o.run.seed, o.run.seed + o.seeds - 1);
                for (unsigned i = 0; i < nsums; i++)
                        print_seed_sum(sum_host[i], sum_load[i], &sums[i]);
        }
        print_goals(&goals, o.seeds);
        if (csv)
                fclose(csv);
        return 0;
}
