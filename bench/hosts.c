/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hosts.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The Opteron 6272-like host of the XenServer planner's tests. */
static const uint32_t opteron_slit[64] = {
    10, 16, 16, 22, 16, 22, 16, 22, /**/ 16, 10, 22, 16, 16, 22, 22, 16, /**/
    16, 22, 10, 16, 16, 16, 16, 16, /**/ 22, 16, 16, 10, 16, 16, 22, 22, /**/
    16, 16, 16, 16, 10, 16, 16, 22, /**/ 22, 22, 16, 16, 16, 10, 22, 16, /**/
    16, 22, 16, 22, 16, 22, 10, 16, /**/ 22, 16, 16, 22, 22, 16, 16, 10,
};

#define HOST(n, c, th, mem)                                                                                 \
        .nnodes = (n), .cores_per_node = (c), .threads_per_core = (th), .memory_per_node = (mem)

const BenchHost bench_quality_hosts[] = {
    {"2x16x2", "2 nodes x 16 cores x 2 threads, 128 GiB/node, SLIT 10/21", HOST(2, 16, 2, 128 * GiB),
     .nodes_per_package = 1, .same_package = 21, .remote = 21},
    {"epyc-2x4x10x2", "2 sockets x 4 nodes x 10 cores x 2 threads, 80 GiB/node, SLIT 10/12/32",
     HOST(8, 10, 2, 80 * GiB), .nodes_per_package = 4, .same_package = 12, .remote = 32},
    {"opteron-8x4x2", "8 nodes x 4 modules x 2 cores (as siblings), 32 GiB/node, Opteron 6272 SLIT",
     HOST(8, 4, 2, 32 * GiB), .opteron = true},
    {"16node-16x8x2", "4 sockets x 4 nodes x 8 cores x 2 threads, 64 GiB/node, SLIT 10/12/22/32 (ring)",
     HOST(16, 8, 2, 64 * GiB), .nodes_per_package = 4, .same_package = 12, .remote = 22, .hop_step = 10},
};
const unsigned bench_nquality_hosts = G_N_ELEMENTS(bench_quality_hosts);

/* 8 GiB of memory per core throughout; packages of 4 nodes up to 16 nodes, of 8 above. */
#define SPEED(n, c, th, per_pkg)                                                                            \
        {                                                                                                   \
                NULL, NULL, HOST(n, c, th, (uint64_t)(c)*8 * GiB),                                          \
                    .nodes_per_package = (per_pkg), .same_package = 12, .remote = 22, .hop_step = 10        \
        }

const BenchHost bench_speed_hosts[] = {
    SPEED(2, 4, 2, 1),  SPEED(16, 1, 1, 4), SPEED(2, 16, 2, 1), SPEED(16, 2, 2, 4),  SPEED(64, 1, 1, 8),
    SPEED(8, 16, 2, 4), SPEED(16, 8, 2, 4), SPEED(64, 2, 2, 8), SPEED(16, 32, 2, 4), SPEED(64, 8, 2, 8),
};
const unsigned bench_nspeed_hosts = G_N_ELEMENTS(bench_speed_hosts);

unsigned bench_host_pus(const BenchHost *h)
{
        return h->nnodes * h->cores_per_node * h->threads_per_core;
}

unsigned bench_host_cores(const BenchHost *h)
{
        return h->nnodes * h->cores_per_node;
}

uint32_t *bench_host_distances(const BenchHost *h)
{
        unsigned n = h->nnodes, per = MAX(h->nodes_per_package, 1), npkg = (n + per - 1) / per;
        uint32_t *d = g_new(uint32_t, (gsize)n * n);

        if (h->opteron && n == 8) {
                memcpy(d, opteron_slit, sizeof(opteron_slit));
                return d;
        }
        for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++) {
                        unsigned pi = i / per, pj = j / per;
                        unsigned hops = MIN((pi + npkg - pj) % npkg, (pj + npkg - pi) % npkg);
                        if (i == j)
                                d[i * n + j] = TOPOLOGY_LOCAL;
                        else if (pi == pj)
                                d[i * n + j] = h->same_package;
                        else
                                d[i * n + j] = h->remote + h->hop_step * (hops - 1);
                }
        return d;
}

Topology *bench_host_build(const BenchHost *h)
{
        g_autofree uint32_t *d = bench_host_distances(h);
        Topology *t =
            topology_new_uniform(h->nnodes, h->cores_per_node, h->threads_per_core, h->memory_per_node, d);

        if (!t) {
                fprintf(stderr, "bench: the engine refused host %ux%ux%u\n", h->nnodes, h->cores_per_node,
                        h->threads_per_core);
                exit(1);
        }
        return t;
}

char *bench_host_synthetic(const BenchHost *h)
{
        unsigned per = MAX(h->nodes_per_package, 1), npkg = (h->nnodes + per - 1) / per;

        if (h->opteron || h->nnodes % per)
                per = 1, npkg = h->nnodes;
        return g_strdup_printf("synthetic:pack:%u numa:%u(memory=%" G_GUINT64_FORMAT "GiB) core:%u pu:%u",
                               npkg, per, h->memory_per_node / GiB, h->cores_per_node, h->threads_per_core);
}

bool bench_quality_host_selected(const BenchHost *h, const char *filter)
{
        return !filter || strstr(h->name, filter);
}

void bench_quality_hosts_check(const char *prog, const char *filter)
{
        for (unsigned i = 0; i < bench_nquality_hosts; i++)
                if (bench_quality_host_selected(&bench_quality_hosts[i], filter))
                        return;
        fprintf(stderr, "%s: no host matches '%s'; the hosts are:", prog, filter);
        for (unsigned i = 0; i < bench_nquality_hosts; i++)
                fprintf(stderr, " %s", bench_quality_hosts[i].name);
        fputc('\n', stderr);
        exit(2);
}
