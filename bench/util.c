/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_doubles(const void *pa, const void *pb)
{
        double a = *(const double *)pa, b = *(const double *)pb;
        return a < b ? -1 : a > b;
}

double bench_percentile(double *values, unsigned n, double p)
{
        unsigned rank;

        if (n == 0)
                return 0;
        qsort(values, n, sizeof(*values), compare_doubles);
        /* nearest rank: the smallest value with at least p% of the samples at or below it */
        rank = (unsigned)((p / 100.0) * n + 0.999999);
        rank = CLAMP(rank, 1u, n);
        return values[rank - 1];
}

unsigned bench_parse_unsigned(const char *option, const char *text)
{
        char *end = NULL;
        unsigned long v;

        errno = 0;
        v = strtoul(text, &end, 10);
        if (errno || !end || *end || end == text || v > UINT32_MAX || text[0] == '-') {
                fprintf(stderr, "bench: %s wants a whole number, not '%s'\n", option, text);
                exit(2);
        }
        return (unsigned)v;
}

void bench_loads_add(BenchLoads *l, const char *prog, const char *text)
{
        if (l->n == G_N_ELEMENTS(l->pct)) {
                fprintf(stderr, "%s: at most %zu --load\n", prog, G_N_ELEMENTS(l->pct));
                exit(2);
        }
        l->pct[l->n++] = bench_parse_unsigned("--load", text);
}

void bench_loads_default(BenchLoads *l)
{
        if (l->n)
                return;
        *l = (BenchLoads){.pct = {50, 90, 120}, .n = 3};
}

bool bench_run_option(BenchRunOptions *o, const char *prog, int c, const char *arg)
{
        switch (c) {
        case 'a':
                o->arrivals = bench_parse_unsigned("--arrivals", arg);
                return true;
        case 's':
                o->seed = bench_parse_unsigned("--seed", arg);
                return true;
        case 'l':
                bench_loads_add(&o->loads, prog, arg);
                return true;
        case 'H':
                o->host_filter = arg;
                return true;
        case 'c':
                o->csv_dir = arg;
                return true;
        default:
                return false;
        }
}

void bench_usage_exit(void (*usage)(FILE *f), bool asked)
{
        usage(asked ? stdout : stderr);
        exit(asked ? 0 : 2);
}

bool bench_env_big(void)
{
        const char *s = g_getenv("BENCH_SIZE");
        return s && strcmp(s, "big") == 0;
}

FILE *bench_open_csv(const char *dir, const char *name)
{
        g_autofree char *path = NULL;
        FILE *f;

        if (!dir)
                return NULL;
        if (g_mkdir_with_parents(dir, 0755) < 0) {
                fprintf(stderr, "bench: cannot create %s: %s\n", dir, strerror(errno));
                exit(1);
        }
        path = g_build_filename(dir, name, NULL);
        f = fopen(path, "w");
        if (!f) {
                fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
                exit(1);
        }
        return f;
}
