/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor for event-to-pin on real libvirtd (bench/event-to-pin-qemu.sh): a minimal client, linked
 * with libvirt only, that makes virDomainPinVcpuFlags(VIR_DOMAIN_AFFECT_LIVE) calls back to back, one
 * per vCPU of every running domain whose name starts with PREFIX: as many calls as placementd makes to
 * pin those domains. Each round pins every vCPU to a set other than the one it has (one CPU, then all
 * CPUs, alternately), so that every call really changes the affinity. Prints one line per round and a
 * summary line "floor: ..." (times in microseconds), then puts back the pins it found.
 */
#include <getopt.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct Call {
        virDomainPtr dom;
        unsigned vcpu;
        unsigned char *saved; /* the pin found before the first round */
} Call;

static double now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y ? 1 : 0;
}

/* Nearest rank; sorts v. */
static double percentile(double *v, size_t n, double p)
{
        size_t rank;

        if (n == 0)
                return 0;
        qsort(v, n, sizeof(*v), compare_double);
        rank = (size_t)(p / 100.0 * (double)n + 0.999999);
        rank = rank < 1 ? 1 : rank > n ? n : rank;
        return v[rank - 1];
}

static int compare_name(const void *a, const void *b)
{
        return strcmp(virDomainGetName(*(virDomainPtr const *)a),
                      virDomainGetName(*(virDomainPtr const *)b));
}

static void usage(FILE *f)
{
        fprintf(f, "Usage: pin-floor [--connect=URI] [--prefix=PREFIX] [--rounds=N]\n"
                   "Defaults: qemu:///system, every running domain, 5 rounds.\n");
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
            {"connect", required_argument, NULL, 'c'},
            {"prefix", required_argument, NULL, 'p'},
            {"rounds", required_argument, NULL, 'r'},
            {"help", no_argument, NULL, 'h'},
            {},
        };
        const char *uri = "qemu:///system", *prefix = "";
        unsigned rounds = 5, ncalls = 0, ndoms = 0;
        virConnectPtr conn;
        virDomainPtr *all = NULL;
        Call *calls;
        double *per_call, *per_round;
        int ncpus, n, c, maplen;
        unsigned char *one, *every;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        uri = optarg;
                        break;
                case 'p':
                        prefix = optarg;
                        break;
                case 'r':
                        rounds = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc || rounds == 0) {
                usage(stderr);
                return 2;
        }
        conn = virConnectOpen(uri);
        if (!conn)
                return 1;
        ncpus = virNodeGetCPUMap(conn, NULL, NULL, 0);
        n = virConnectListAllDomains(conn, &all, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
        if (ncpus <= 0 || n < 0) {
                fprintf(stderr, "pin-floor: %s\n", virGetLastErrorMessage());
                return 1;
        }
        qsort(all, (size_t)n, sizeof(*all), compare_name);
        maplen = VIR_CPU_MAPLEN(ncpus);
        calls = calloc((size_t)n * 64 + 1, sizeof(*calls));
        for (int i = 0; i < n; i++) {
                int nv;
                if (strncmp(virDomainGetName(all[i]), prefix, strlen(prefix)) != 0)
                        continue;
                nv = virDomainGetVcpusFlags(all[i], VIR_DOMAIN_AFFECT_LIVE);
                if (nv <= 0 || nv > 64) {
                        fprintf(stderr, "pin-floor: %s: %s\n", virDomainGetName(all[i]),
                                virGetLastErrorMessage());
                        return 1;
                }
                ndoms++;
                for (int v = 0; v < nv; v++) {
                        Call *k = &calls[ncalls++];
                        k->dom = all[i];
                        k->vcpu = (unsigned)v;
                        k->saved = calloc(1, (size_t)maplen * (size_t)nv);
                        /* the pins of all vCPUs come back at once: keep row v */
                        if (virDomainGetVcpuPinInfo(all[i], nv, k->saved, maplen, VIR_DOMAIN_AFFECT_LIVE) <
                            0)
                                return 1;
                        memmove(k->saved, VIR_GET_CPUMAP(k->saved, maplen, v), (size_t)maplen);
                }
        }
        if (ncalls == 0) {
                fprintf(stderr, "pin-floor: no running domain whose name starts with '%s'\n", prefix);
                return 1;
        }
        one = calloc(1, (size_t)maplen);
        every = calloc(1, (size_t)maplen);
        for (int cpu = 0; cpu < ncpus; cpu++)
                VIR_USE_CPU(every, cpu);
        per_call = calloc((size_t)ncalls * rounds, sizeof(double));
        per_round = calloc(rounds, sizeof(double));
        for (unsigned r = 0; r < rounds; r++) {
                double t0 = now_us();
                for (unsigned i = 0; i < ncalls; i++) {
                        double t = now_us();
                        const unsigned char *map = every;
                        if (r % 2 == 0) {
                                memset(one, 0, (size_t)maplen);
                                VIR_USE_CPU(one, (int)(i % (unsigned)ncpus));
                                map = one;
                        }
                        if (virDomainPinVcpuFlags(calls[i].dom, calls[i].vcpu, (unsigned char *)map, maplen,
                                                  VIR_DOMAIN_AFFECT_LIVE) < 0) {
                                fprintf(stderr, "pin-floor: %s vCPU %u: %s\n",
                                        virDomainGetName(calls[i].dom), calls[i].vcpu,
                                        virGetLastErrorMessage());
                                return 1;
                        }
                        per_call[r * ncalls + i] = now_us() - t;
                }
                per_round[r] = now_us() - t0;
                printf("round %u: %u calls in %.0f us (%.0f us per call)\n", r + 1, ncalls, per_round[r],
                       per_round[r] / ncalls);
        }
        for (unsigned i = 0; i < ncalls; i++)
                virDomainPinVcpuFlags(calls[i].dom, calls[i].vcpu, calls[i].saved, maplen,
                                      VIR_DOMAIN_AFFECT_LIVE);
        {
                double mean = 0;
                for (unsigned r = 0; r < rounds; r++)
                        mean += per_round[r] / rounds;
                printf("floor: domains=%u calls=%u rounds=%u round_us_median=%.0f round_us_mean=%.0f "
                       "round_us_min=%.0f call_us_p50=%.0f call_us_p99=%.0f\n",
                       ndoms, ncalls, rounds, percentile(per_round, rounds, 50), mean,
                       percentile(per_round, rounds, 0), percentile(per_call, (size_t)ncalls * rounds, 50),
                       percentile(per_call, (size_t)ncalls * rounds, 99));
        }
        for (int i = 0; i < n; i++)
                virDomainFree(all[i]);
        free(all);
        for (unsigned i = 0; i < ncalls; i++)
                free(calls[i].saved);
        free(calls);
        free(one);
        free(every);
        free(per_call);
        free(per_round);
        virConnectClose(conn);
        return 0;
}
