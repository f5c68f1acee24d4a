/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CpuSet: a growable bitmap of CPU (or NUMA node) numbers, and the one place that parses and prints
 * libvirt's list syntax: "0-3,8,^2" (ranges, single numbers, ^N excludes N from what came before).
 * Printing always gives the canonical form, ranges ascending, no exclusions ("0-1,3,8").
 */

#include <glib.h>
#include <stdbool.h>

/* Largest CPU number accepted by the parser; Linux's own NR_CPUS limit is 8192. */
#define CPUSET_MAX 8192u

typedef struct CpuSet CpuSet;

CpuSet *cpuset_new(void);
CpuSet *cpuset_copy(const CpuSet *s);
void cpuset_free(CpuSet *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CpuSet, cpuset_free)

void cpuset_add(CpuSet *s, unsigned n);
void cpuset_remove(CpuSet *s, unsigned n);
bool cpuset_has(const CpuSet *s, unsigned n);
unsigned cpuset_count(const CpuSet *s);
bool cpuset_is_empty(const CpuSet *s);
bool cpuset_equal(const CpuSet *a, const CpuSet *b);
void cpuset_union(CpuSet *s, const CpuSet *other);
void cpuset_subtract(CpuSet *s, const CpuSet *other);
bool cpuset_intersects(const CpuSet *a, const CpuSet *b);
void cpuset_clear(CpuSet *s);

/* Iterate: returns the first member >= from, or -1 when there is none. */
int cpuset_next(const CpuSet *s, unsigned from);
#define CPUSET_FOREACH(n, s) for (int n = cpuset_next((s), 0); n >= 0; n = cpuset_next((s), (unsigned)n + 1))

/* The longest list text parsed: far above any canonical list up to CPUSET_MAX (every other CPU is
 * about 20 KB), far below what would make parsing one cost more than reading it. */
#define CPUSET_MAX_TEXT 65536u

/*
 * Parses a list. Returns 0 and sets *ret, or -EINVAL (syntax), -ERANGE (a number above CPUSET_MAX),
 * -E2BIG (text longer than CPUSET_MAX_TEXT).
 * An empty or all-blank string is the empty set. On error, *ret_error (if not NULL) receives a message
 * naming the offending part; the caller frees it.
 */
int cpuset_parse(const char *text, CpuSet **ret, char **ret_error);
/* The same for a list of ids libvirt numbers past CPUSET_MAX (I/O threads): numbers up to G_MAXUINT32, those
 * above CPUSET_MAX left out of *ret (a range cut there; *ret_beyond, if not NULL, says whether one named
 * some), -ERANGE only past G_MAXUINT32. */
int cpuset_parse_ids(const char *text, CpuSet **ret, bool *ret_beyond, char **ret_error);

/* Canonical list form; "" for the empty set. Caller frees. */
char *cpuset_format(const CpuSet *s);
