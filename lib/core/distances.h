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
 */

#include <glib.h>
#include <stdint.h>

typedef enum DistanceVerdict {
        DISTANCES_OK,      /* used as given (unreachable entries kept) */
        DISTANCES_MISSING, /* none given: defaults filled in */
        DISTANCES_INVALID, /* rejected: defaults filled in */
        DISTANCES_FLAT,    /* all unreachable: filled with 10, nodes form one flat set */
} DistanceVerdict;

/*
 * Checks matrix (n*n, may be NULL) and returns a new matrix to use in *ret (caller frees with g_free).
 * When the verdict is not DISTANCES_OK and ret_note is not NULL, *ret_note says why (caller frees).
 */
DistanceVerdict distances_sanitize(unsigned n, const uint32_t *matrix, uint32_t **ret, char **ret_note);
