/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * NodeSetTable: the candidate node sets of a host, ranked once per topology.
 *
 * Key = (max distance over all ordered pairs of the set, itself included; mean distance over all |S|^2
 * pairs), ascending, stable (ties keep enumeration order: smaller sets first, then lower node numbers).
 * Consecutive candidates with the same max and a mean within 1e-3 form a group; a policy picks the
 * first group holding a set that qualifies and, inside it, a set whose node shares fit one L3 group each
 * before the others, then the least loaded set.
 *
 * Up to NODESETS_EXHAUSTIVE_MAX nodes every subset is a candidate. Above that, each node grows a set
 * by adding the remaining nodes in order of distance (ties: the nodes after the seed first, wrapping):
 * n sets of each size up to
 * NODESETS_GROWN_MAX_NODES, deduplicated, and the whole host, so multi-node sets are still offered on
 * big hosts. Sets containing an unreachable pair, or a node
 * unreachable from itself, are never candidates. On a flat topology the only candidate is all nodes.
 */

#include <stdbool.h>
#include <stdint.h>

#define NODESETS_EXHAUSTIVE_MAX 16u
/* Above the exhaustive limit, grown sets have at most this many nodes (plus the whole host): a domain
 * that needs more than 32 nodes' worth of cores or memory is rare, and the table stays small. */
#define NODESETS_GROWN_MAX_NODES 32u
#define NODESETS_MEAN_EPSILON    1e-3
/* nodeset_table_within(), made for each constrained request: every subset up to this many nodes */
#define NODESETS_WITHIN_EXHAUSTIVE_MAX 10u

typedef struct NodeSet {
        /* nodeset_table_toward() only (0 elsewhere): the largest and the mean distance from the set's nodes
         * to memory held on other nodes; the key's first and last parts */
        uint32_t memory_distance;
        double memory_mean;
        uint32_t max_distance;
        double mean_distance;
        unsigned group;  /* equal (max, mean) rank share a group number */
        uint32_t mask;   /* bit i = node i, when the table has masks (at most 16 nodes), else 0 */
        unsigned first;  /* into members[] */
        unsigned nnodes; /* members[first .. first+nnodes) ascending node indexes */
} NodeSet;

typedef struct NodeSetTable {
        unsigned nnodes;
        unsigned ncandidates;
        NodeSet *candidates;
        unsigned *members;
        bool exhaustive;
        bool has_masks; /* every candidate's mask is set (nnodes <= NODESETS_EXHAUSTIVE_MAX) */
        /* Ranks grouped by set size: the sets of k nodes are ranks by_size[size_start[k] ..
         * size_start[k + 1]), ascending; size_start has nnodes + 2 entries. */
        unsigned *by_size;
        unsigned *size_start;
        /* added: when has_masks, [1 << nnodes]: the rank of the candidate with that mask, UINT_MAX for a
         * mask that is no candidate; NULL otherwise */
        unsigned *rank_of_mask;
} NodeSetTable;

NodeSetTable *nodeset_table_new(unsigned nnodes, const uint32_t *distance, bool flat);
/* The candidate sets made of the k given nodes only (ascending host node indexes), ranked by the same
 * key: every subset up to NODESETS_WITHIN_EXHAUSTIVE_MAX of them, grown sets (and all k) beyond. Members are
 * host node indexes; the table has no mask index. For a request whose constraints leave a few nodes of a
 * host above the exhaustive limit, where the host's own table may not hold the sets of just those. */
NodeSetTable *nodeset_table_within(unsigned nnodes, const uint32_t *distance, const unsigned *nodes,
                                   unsigned k);
/* The same for a domain whose memory lies on other nodes than its vCPUs can run on (memory-only nodes):
 * to_memory[i] is the distance from nodes[i] to that memory. The key puts the largest distance from a
 * set's nodes to the memory first, then the set's own key, then their mean distance to the memory: the
 * sets nearest the memory first, the tightest of those first. mean_first: the mean distance to the
 * memory before the set's own key, for memory on some of the nodes (bound to nodes with too few free
 * cores): a set with the memory's own node comes before a node as far from it alone. */
NodeSetTable *nodeset_table_toward(unsigned nnodes, const uint32_t *distance, const unsigned *nodes,
                                   unsigned k, const uint32_t *to_memory, bool mean_first);
void nodeset_table_free(NodeSetTable *t);

static inline const unsigned *nodeset_members(const NodeSetTable *t, const NodeSet *s)
{
        return t->members + s->first;
}
