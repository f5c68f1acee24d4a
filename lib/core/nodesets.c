/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "nodesets.h"
#include "topology.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Builder {
        unsigned nnodes;
        const uint32_t *distance;
        GArray *sets;     /* NodeSet */
        GArray *members;  /* unsigned */
        GHashTable *seen; /* key: member list as string, for deduplication above the exhaustive limit */
        const uint32_t *to_memory; /* [nnodes] distance to memory held elsewhere, or NULL */
} Builder;

static uint32_t dist(const Builder *b, unsigned i, unsigned j)
{
        return b->distance[i * b->nnodes + j];
}

/* Adds the set of nodes[0..n) (ascending) unless it contains an unreachable pair. */
static void builder_add(Builder *b, const unsigned *nodes, unsigned n)
{
        uint32_t max = 0, memory_max = 0;
        uint64_t sum = 0, memory_sum = 0;
        NodeSet s;

        for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++) {
                        uint32_t d = dist(b, nodes[i], nodes[j]);
                        if (d == TOPOLOGY_UNREACHABLE)
                                return;
                        max = MAX(max, d);
                        sum += d;
                }
        if (b->seen) {
                GString *key = g_string_new(NULL);
                for (unsigned i = 0; i < n; i++)
                        g_string_append_printf(key, "%u,", nodes[i]);
                if (g_hash_table_contains(b->seen, key->str)) {
                        g_string_free(key, TRUE);
                        return;
                }
                g_hash_table_add(b->seen, g_string_free(key, FALSE));
        }
        for (unsigned i = 0; b->to_memory && i < n; i++) {
                memory_max = MAX(memory_max, b->to_memory[nodes[i]]);
                memory_sum += b->to_memory[nodes[i]];
        }
        s = (NodeSet){
            .memory_distance = memory_max,
            .memory_mean = (double)memory_sum / n,
            .max_distance = max,
            .mean_distance = (double)sum / ((double)n * n),
            .first = b->members->len,
            .nnodes = n,
        };
        g_array_append_vals(b->members, nodes, n);
        g_array_append_val(b->sets, s);
}

/* mean_first (a non-NULL pointer): the mean distance to the memory before the set's own key */
static int compare_sets(const void *pa, const void *pb, void *mean_first)
{
        const NodeSet *a = pa, *b = pb;

        if (a->memory_distance != b->memory_distance)
                return a->memory_distance < b->memory_distance ? -1 : 1;
        if (mean_first && fabs(a->memory_mean - b->memory_mean) > NODESETS_MEAN_EPSILON)
                return a->memory_mean < b->memory_mean ? -1 : 1;
        if (a->max_distance != b->max_distance)
                return a->max_distance < b->max_distance ? -1 : 1;
        if (fabs(a->mean_distance - b->mean_distance) > NODESETS_MEAN_EPSILON)
                return a->mean_distance < b->mean_distance ? -1 : 1;
        if (fabs(a->memory_mean - b->memory_mean) > NODESETS_MEAN_EPSILON)
                return a->memory_mean < b->memory_mean ? -1 : 1;
        /* Stable: keep enumeration order (first is unique per set). */
        return a->first < b->first ? -1 : a->first > b->first;
}

static void enumerate_all(Builder *b)
{
        unsigned nodes[NODESETS_EXHAUSTIVE_MAX];

        /* By size, then by mask value (the highest node lowest first: nodes 1-2 before 0,3): a natural
         * stable order, the last tie-break of the set search. */
        for (unsigned size = 1; size <= b->nnodes; size++)
                for (uint32_t mask = 1; mask < (UINT32_C(1) << b->nnodes); mask++) {
                        unsigned n = 0;
                        if ((unsigned)__builtin_popcount(mask) != size)
                                continue;
                        for (unsigned i = 0; i < b->nnodes; i++)
                                if (mask & (UINT32_C(1) << i))
                                        nodes[n++] = i;
                        builder_add(b, nodes, n);
                }
}

typedef struct {
        uint32_t d;
        unsigned after; /* how far the node comes after the seed, counting on from it (wrapping) */
        unsigned node;
} ByDistance;

/* Nearest first; among equally far nodes, the ones after the seed first: with ties broken by node
 * number every seed would reach across a distance class into the same lowest nodes, and sets such as
 * {12-19} or {4-8} would never be offered. */
static int compare_by_distance(const void *pa, const void *pb)
{
        const ByDistance *a = pa, *b = pb;
        if (a->d != b->d)
                return a->d < b->d ? -1 : 1;
        return a->after < b->after ? -1 : a->after > b->after;
}

static int compare_unsigned(const void *pa, const void *pb)
{
        unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
        return a < b ? -1 : a > b;
}

static void enumerate_grown(Builder *b)
{
        unsigned n = b->nnodes, keep = MIN(n, NODESETS_GROWN_MAX_NODES);
        g_autofree ByDistance *order = g_new(ByDistance, n);
        g_autofree unsigned *nearest = g_new(unsigned, (gsize)n *keep); /* per seed, its keep nearest */
        g_autofree unsigned *set = g_new(unsigned, n);

        for (unsigned seed = 0; seed < n; seed++) {
                /* nodes in distance order from seed; the seed itself comes first */
                for (unsigned j = 0; j < n; j++)
                        order[j] = (ByDistance){j == seed ? 0 : dist(b, seed, j), (j + n - seed) % n, j};
                qsort(order, n, sizeof(*order), compare_by_distance);
                for (unsigned j = 0; j < keep; j++)
                        nearest[(gsize)seed * keep + j] = order[j].node;
        }
        b->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (unsigned size = 1; size <= keep; size++)
                for (unsigned seed = 0; seed < n; seed++) {
                        memcpy(set, nearest + (gsize)seed * keep, sizeof(unsigned) * size);
                        qsort(set, size, sizeof(*set), compare_unsigned);
                        builder_add(b, set, size);
                }
        /* and the whole host, whatever its size */
        if (keep < n) {
                for (unsigned j = 0; j < n; j++)
                        set[j] = j;
                builder_add(b, set, n);
        }
        g_hash_table_destroy(b->seen);
        b->seen = NULL;
}

static NodeSetTable *table_new(unsigned nnodes, const uint32_t *distance, bool flat, unsigned exhaustive_max,
                               const uint32_t *to_memory, bool mean_first)
{
        NodeSetTable *t = g_new0(NodeSetTable, 1);
        Builder b = {
            .nnodes = nnodes,
            .distance = distance,
            .to_memory = to_memory,
            .sets = g_array_new(FALSE, FALSE, sizeof(NodeSet)),
            .members = g_array_new(FALSE, FALSE, sizeof(unsigned)),
        };

        t->nnodes = nnodes;
        if (flat || nnodes == 0) {
                g_autofree unsigned *all = g_new(unsigned, MAX(nnodes, 1));
                for (unsigned i = 0; i < nnodes; i++)
                        all[i] = i;
                if (nnodes) {
                        NodeSet s = {.max_distance = TOPOLOGY_LOCAL,
                                     .mean_distance = TOPOLOGY_LOCAL,
                                     .nnodes = nnodes};
                        g_array_append_vals(b.members, all, nnodes);
                        g_array_append_val(b.sets, s);
                }
                t->exhaustive = true;
        } else if (nnodes <= exhaustive_max) {
                enumerate_all(&b);
                t->exhaustive = true;
        } else {
                enumerate_grown(&b);
        }

        g_array_sort_with_data(b.sets, compare_sets, mean_first ? &b : NULL);
        t->ncandidates = b.sets->len;
        t->candidates = (NodeSet *)(void *)g_array_free(b.sets, FALSE);
        t->members = (unsigned *)(void *)g_array_free(b.members, FALSE);
        t->size_start = g_new0(unsigned, nnodes + 2);
        t->by_size = g_new0(unsigned, MAX(t->ncandidates, 1));
        for (unsigned i = 0; i < t->ncandidates; i++)
                t->size_start[t->candidates[i].nnodes + 1]++;
        for (unsigned k = 1; k < nnodes + 2; k++)
                t->size_start[k] += t->size_start[k - 1];
        {
                g_autofree unsigned *fill = g_memdup2(t->size_start, sizeof(unsigned) * (nnodes + 2));
                for (unsigned i = 0; i < t->ncandidates; i++)
                        t->by_size[fill[t->candidates[i].nnodes]++] = i;
        }
        t->has_masks = nnodes <= NODESETS_EXHAUSTIVE_MAX;
        for (unsigned i = 0; t->has_masks && i < t->ncandidates; i++) {
                NodeSet *s = &t->candidates[i];
                for (unsigned k = 0; k < s->nnodes; k++)
                        s->mask |= UINT32_C(1) << t->members[s->first + k];
        }
        if (t->has_masks) {
                t->rank_of_mask = g_new(unsigned, (gsize)1 << nnodes);
                memset(t->rank_of_mask, 0xff, sizeof(unsigned) << nnodes); /* UINT_MAX: no candidate */
                for (unsigned i = 0; i < t->ncandidates; i++)
                        t->rank_of_mask[t->candidates[i].mask] = i;
        }
        for (unsigned i = 0; i < t->ncandidates; i++) {
                NodeSet *s = &t->candidates[i], *prev = i ? &t->candidates[i - 1] : NULL;
                s->group = !prev ? 0
                           : (prev->memory_distance == s->memory_distance &&
                              prev->max_distance == s->max_distance &&
                              fabs(prev->mean_distance - s->mean_distance) <= NODESETS_MEAN_EPSILON &&
                              fabs(prev->memory_mean - s->memory_mean) <= NODESETS_MEAN_EPSILON)
                               ? prev->group
                               : prev->group + 1;
        }
        return t;
}

NodeSetTable *nodeset_table_new(unsigned nnodes, const uint32_t *distance, bool flat)
{
        return table_new(nnodes, distance, flat, NODESETS_EXHAUSTIVE_MAX, NULL, false);
}

NodeSetTable *nodeset_table_toward(unsigned nnodes, const uint32_t *distance, const unsigned *nodes,
                                   unsigned k, const uint32_t *to_memory, bool mean_first)
{
        g_autofree uint32_t *sub = g_new(uint32_t, MAX((gsize)k * k, 1));
        NodeSetTable *t;

        for (unsigned i = 0; i < k; i++)
                for (unsigned j = 0; j < k; j++)
                        sub[i * k + j] = distance[nodes[i] * nnodes + nodes[j]];
        /* built for one request: every subset only while that is cheap (1023 sets of 10 nodes, against
         * 65,535 of 16: 30 ms a placement), grown sets beyond */
        t = table_new(k, sub, false, NODESETS_WITHIN_EXHAUSTIVE_MAX, to_memory, mean_first);
        /* the host's node indexes: no mask index (bit i would be the i-th of nodes, not node i) */
        for (unsigned i = 0; i < t->ncandidates; i++) {
                NodeSet *set = &t->candidates[i];
                for (unsigned m = 0; m < set->nnodes; m++)
                        t->members[set->first + m] = nodes[t->members[set->first + m]];
                set->mask = 0;
        }
        g_clear_pointer(&t->rank_of_mask, g_free);
        t->has_masks = false;
        /* sizes up to the host's node count, as the walks ask: none beyond k */
        t->size_start = g_renew(unsigned, t->size_start, nnodes + 2);
        for (unsigned size = k + 2; size < nnodes + 2; size++)
                t->size_start[size] = t->ncandidates;
        t->nnodes = nnodes;
        return t;
}

NodeSetTable *nodeset_table_within(unsigned nnodes, const uint32_t *distance, const unsigned *nodes,
                                   unsigned k)
{
        return nodeset_table_toward(nnodes, distance, nodes, k, NULL, false);
}

void nodeset_table_free(NodeSetTable *t)
{
        if (!t)
                return;
        g_free(t->candidates);
        g_free(t->members);
        g_free(t->by_size);
        g_free(t->size_start);
        g_free(t->rank_of_mask);
        g_free(t);
}
