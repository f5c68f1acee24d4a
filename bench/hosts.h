/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The hosts the benchmarks run on, built with topology_new_uniform() and a distance matrix made here:
 * nodes are grouped into packages; same node 10, same package `same_package`, another package
 * `remote` plus `hop_step` for each further hop on a ring of packages. The Opteron 6272 host takes the
 * SLIT of the XenServer planner's tests instead.
 */

#include <stdint.h>

#include "topology.h"

typedef struct BenchHost {
        const char *name; /* short id used in tables and CSV */
        const char *description;
        unsigned nnodes, cores_per_node, threads_per_core;
        uint64_t memory_per_node;
        bool opteron; /* use the Opteron 6272 SLIT (8 nodes) */
        unsigned nodes_per_package;
        uint32_t same_package, remote, hop_step;
} BenchHost;

/* Hosts of the placement-quality simulator. */
extern const BenchHost bench_quality_hosts[];
extern const unsigned bench_nquality_hosts;

/* True when h is one of the hosts --host=NAME asks for (NAME a part of its name; every host when NULL).
 * With no quality host matching, prints the names to stderr for prog and exits with 2. */
bool bench_quality_host_selected(const BenchHost *h, const char *filter);
void bench_quality_hosts_check(const char *prog, const char *filter);

/* Hosts of the decision-speed benchmark (16 to 1024 PUs, 2 to 64 nodes). */
extern const BenchHost bench_speed_hosts[];
extern const unsigned bench_nspeed_hosts;

/* The distance matrix of h (nnodes * nnodes); g_free it. */
uint32_t *bench_host_distances(const BenchHost *h);
/* Builds the topology (candidate table included). Exits when the engine refuses it. */
Topology *bench_host_build(const BenchHost *h);
/* The same host as an hwloc synthetic source ("synthetic:pack:... numa:...(memory=...) core:... pu:..."),
 * for timing topology_load(); hwloc carries no distances there, so 10/11/20 by package is assumed.
 * g_free it. */
char *bench_host_synthetic(const BenchHost *h);
unsigned bench_host_pus(const BenchHost *h);
unsigned bench_host_cores(const BenchHost *h);
