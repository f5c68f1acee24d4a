/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * NUMA distance matrices (ACPI SLIT style) as firmware and hwloc report them, checked before use.
 *
 * Rules: an entry of 0xFFFFFFFF (or -1 read as unsigned) is unreachable and stays so; a node whose own
 * distance is unreachable is dropped from placement by the ranking. Any other entry below 10, or a
 * reachable self distance other than 10, makes the whole matrix untrustworthy: it is replaced by the
 * defaults (10 local, 20 remote). A matrix of nothing but unreachable entries carries no NUMA
 * information: all nodes are treated as one flat set.
 *
 * Where the defaults stand in for a missing or untrustworthy matrix, the host's packages still say
 * something: nodes of one package are nearer than nodes of different packages (every multi-socket host
 * whose firmware reports distances shows it, e.g. 10-12 inside a socket, 20-32 across), so such pairs
 * are assumed TOPOLOGY_SAME_PACKAGE apart (distances_assume_packages()).
 */

#include <glib.h>
#include <stdint.h>

#include "topology.h"

typedef enum DistanceVerdict {
        DISTANCES_OK,      /* used as given (unreachable entries kept) */
        DISTANCES_MISSING, /* none given: defaults filled in */
        DISTANCES_INVALID, /* rejected: defaults filled in */
        DISTANCES_FLAT,    /* all unreachable: filled with 10, nodes form one flat set */
} DistanceVerdict;

/*
 * Checks matrix (n*n, may be NULL) and returns a new matrix to use in *ret (caller frees with g_free).
 * When the verdict is not DISTANCES_OK and ret_note is not NULL, *ret_note says why (caller frees),
 * naming nodes by os_index[i] (the OS's node numbers, as numactl shows them; NULL: by matrix index).
 */
DistanceVerdict distances_sanitize(unsigned n, const uint32_t *matrix, const unsigned *os_index,
                                   uint32_t **ret, char **ret_note);

/*
 * For a matrix distances_sanitize() filled with defaults (MISSING or INVALID): sets every two distinct
 * nodes that share one of packages[0..npackages) (TopoPackage.nodes, node indexes below n) to
 * TOPOLOGY_SAME_PACKAGE. Returns how many ordered pairs it set (0: the packages say nothing).
 */
unsigned distances_assume_packages(unsigned n, uint32_t *matrix, const TopoPackage *packages,
                                   unsigned npackages);

/* A memory-only node of a package that serves only some of its nodes' CPUs (HBM beside one cluster
 * of a socket split in four, hwloc's locality: TopoNode.local_cpus) is farther from the others. */
#define DISTANCES_MEMORY_AWAY (TOPOLOGY_SAME_PACKAGE + 1u)

/*
 * After distances_assume_packages(): for every memory-only node whose locality takes in the CPUs of some
 * nodes of t, sets its distance to and from each other node with CPUs that distances_assume_packages()
 * put TOPOLOGY_SAME_PACKAGE from it to DISTANCES_MEMORY_AWAY. A locality that takes in no node's CPUs
 * (or none known) says nothing. Returns how many ordered pairs it set.
 */
unsigned distances_assume_locality(const Topology *t, uint32_t *matrix);
