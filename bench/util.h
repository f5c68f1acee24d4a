/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers shared by the benchmarks: a clock, percentiles, option parsing, output files. */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GiB (UINT64_C(1) << 30)

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/* The p-th percentile (0..100, nearest rank) of values[0..n); sorts values. 0 when n is 0. */
double bench_percentile(double *values, unsigned n, double p);

/* Parses a whole unsigned number; exits with a usage error naming the option when it is not one. */
unsigned bench_parse_unsigned(const char *option, const char *text);

/* The --load=PCT values of a benchmark run, in the order given. */
typedef struct BenchLoads {
        unsigned pct[8];
        unsigned n;
} BenchLoads;

/* Adds one --load=PCT; exits with a usage error naming prog past the eighth. */
void bench_loads_add(BenchLoads *l, const char *prog, const char *text);
/* When no --load was given: 50, 90 and 120%. */
void bench_loads_default(BenchLoads *l);

/* The options of the replaying benchmarks (bench-quality, bench-load): --arrivals=N, --seed=N,
 * --load=PCT..., --host=NAME and --csv=DIR. */
typedef struct BenchRunOptions {
        unsigned arrivals, seed;
        BenchLoads loads;
        const char *host_filter, *csv_dir;
} BenchRunOptions;

/* Their rows of a getopt_long() table (the caller includes <getopt.h>), one a line. */
/* clang-format off */
#define BENCH_RUN_OPTIONS                               \
        {"arrivals", required_argument, NULL, 'a'},     \
        {"seed", required_argument, NULL, 's'},         \
        {"load", required_argument, NULL, 'l'},         \
        {"host", required_argument, NULL, 'H'},         \
        {"csv", required_argument, NULL, 'c'}
/* clang-format on */

/* Takes getopt_long()'s c with its arg into o when it is one of BENCH_RUN_OPTIONS; false when it is not.
 * Exits with a usage error naming prog on a bad value. */
bool bench_run_option(BenchRunOptions *o, const char *prog, int c, const char *arg);

/* Prints usage and exits: to stdout with 0 when asked for (--help), else to stderr with 2. */
G_GNUC_NORETURN void bench_usage_exit(void (*usage)(FILE *f), bool asked);

/* True when BENCH_SIZE=big is set in the environment (the long runs of bench/run --big). */
bool bench_env_big(void);

/* Opens DIR/NAME for writing (creating DIR); NULL when dir is NULL. Exits on failure. */
FILE *bench_open_csv(const char *dir, const char *name);
