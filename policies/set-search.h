/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The set search: one request's walk over the topology's ranked node sets (nodesets.h), with each set's
 * sums taken in O(1) and the first candidates kept on the plan for explain.
 */

#include "cells.h"
#include "nodesets.h"
#include "policy-internal.h"

/* How many ranked candidates a plan keeps for explain. */
#define POLICY_KEEP_CANDIDATES 24u
/* How many of a set's least busy cores an overcommit by load compares sets on (SetSearch.node_busy): the
 * busy vCPUs beyond the calm cores, up to this many; enough to tell one quiet core among busy ones from
 * several half-busy ones, and a bound on the cost per set. */
#define SET_BUSY_CORES_COMPARED 8u

/* Per node, the loads of its cores that are not calm (load-rules.h). */
typedef struct NodeBusyCores NodeBusyCores;

/* What a candidate set offers, summed over its nodes. */
typedef struct SetLoad {
        unsigned capacity, free_cores, free_pus, usable_pus, size;
        uint64_t free_memory, load;
        unsigned own_thread_cores; /* HostView.node_own_thread_cores */
} SetLoad;

/*
 * Set sums. Summing node by node costs |S| per set, and a walk over all 65,535 sets of a 16-node host
 * would cost ~0.5M node visits. With node masks (at most 16 nodes) a set's sums are the sums of its
 * low 8 nodes plus those of its high 8 nodes, both from 256-entry tables built once per request: one
 * addition per field. Sets too big for the request's own size can also be ruled out before summing:
 * no k nodes hold more than the k best nodes together.
 */
typedef struct SetSums {
        const HostView *v;
        const NodeSetTable *table;
        SetLoad *lo, *hi;        /* [256] each, when the table is big enough to be worth them */
        unsigned *best_capacity; /* [k] the most capacity any k reachable nodes have */
        uint64_t *best_memory;   /* [k] the most free memory any k reachable nodes have */
        unsigned *best_size;     /* [k] the most size (PolicyOps.size) any k nodes have */
        unsigned nreachable; /* the best_* arrays hold k = 0..nreachable (a node unreachable from itself is
                              * in no set, so the host may have more nodes than that) */
} SetSums;

/*
 * Walks candidate ranks from `from` on, in rank order, skipping sets of fewer than kmin nodes. When
 * those are most of the table (a request only the biggest sets can hold), it merges the per-size rank
 * lists instead of touching every set.
 */
typedef struct RankIter {
        const NodeSetTable *t;
        unsigned kmin, r;
        unsigned *pos; /* [nnodes + 1] next index into by_size per size, when merged */
} RankIter;

/* One request's search: the host view with the policy's capacity and size filled in, and its sums. */
typedef struct SetSearch {
        const HostView *v;
        const PolicyOps *ops;
        const NodeSetTable *table;
        SetSums sums;
        SetLoad host;          /* every reachable node together */
        uint32_t allowed_mask; /* nodes inside the request's constraints (the first 32) */
        unsigned vcpus;
        unsigned wanted; /* overcommit: the capacity a set should offer (vCPUs, or busy vCPUs by load) */
        uint64_t memory; /* the free memory a set must hold (0 when the request binds its own) */
        /* L3 fit: the most room one L3 group of each node offers (PolicyOps.core_room), and whether any
         * node offers less in its best group than in all (otherwise every share fits and it is not asked) */
        unsigned *node_l3_room; /* [nnodes] */
        bool l3_matters;
        bool cells_whole;    /* a set qualifies only with room for each guest cell on one node */
        CellsPacking *cells; /* the plan's cells in the orders they take room (NULL: the plan has none) */
        /* overcommit by measured load with too few calm cores for the busy vCPUs: per node, the loads of
         * its cores that are not calm; inside the nearest group the set whose least busy such cores, one
         * per busy vCPU beyond its calm cores (at most SET_BUSY_CORES_COMPARED), run least wins. NULL
         * otherwise. */
        const NodeBusyCores *node_busy;
        /* node indexes a set must have one of to qualify (PlacementRequest.device_nodes); NULL: none */
        const CpuSet *near;
        /* the walk stops past this group (NodeSet.group): no set further than the one a walk without
         * near chose; -1: no limit */
        int max_group;
} SetSearch;

/* Why a guest's cells run in several packages (SetChoice.cells_across). */
typedef enum CellsAcross {
        CELLS_ACROSS_NONE,    /* they do not, or nothing nearer was passed over */
        CELLS_ACROSS_GUEST,   /* the guest holds the cells across them apart (cells_guest_apart()) */
        CELLS_ACROSS_NO_ROOM, /* no nearer set has the room for them, whole or with memory spilled */
        CELLS_ACROSS_SPLIT,   /* a nearer set would split a cell's vCPUs over its nodes */
        CELLS_ACROSS_BOUND,   /* their own <memnode> bindings lie in packages no one of which has them all */
} CellsAcross;

/* The set a search settled on. */
typedef struct SetChoice {
        int rank; /* -1: none */
        SetLoad load;
        unsigned group_size; /* qualifying sets in its group of equally near sets */
        bool l3_fit;         /* each node's share of the vCPUs fits the room of one of its L3 groups */
        unsigned l3_unfit;   /* qualifying sets of its group where some node's share does not */
        bool least_busy;     /* overcommit: chosen in its group by its least busy cores (node_busy) */
        unsigned busy_cores; /* how many of them were compared, when least_busy */
        /* guest cells too big for one node: the farthest apart two nodes one cell's vCPUs are split over
         * (TOPOLOGY_LOCAL when none is split), and whether a set past the nearest group, as near by its
         * farthest nodes, won by splitting them over nearer nodes */
        uint32_t cell_spread;
        bool cells_nearer;
        /* when cells_nearer: the two parts of cell_spread, the farthest apart two nodes of one split cell
         * (TOPOLOGY_LOCAL when none is split) and the farthest a cell's memory spills from its vCPUs */
        uint32_t cell_split, cell_reach;
        /* narrowed (narrow_uneven()): the set the walk chose, whose vCPUs would split unevenly, and the
         * mean distance between the nodes the vCPUs go to, each node weighted by how many go there (the
         * memory follows them), of that set and of the chosen one; wider_rank -1 when not narrowed */
        int wider_rank;
        double wider_mean, split_mean;
        /* guest cells kept nearer (cells_keep_near()): the max distance of the nearest set that holds
         * each cell whole with all its memory on its node, passed over for this one, which keeps each cell
         * whole with its memory at most cell_reach from its vCPUs; whether that set's cells ran in several
         * packages. 0 when not so. */
        uint32_t cells_whole_distance;
        bool cells_whole_across;
        /* guest cells whole with their memory on nodes of several packages: why (the guest's own pair in
         * cells_apart_a/b and its distance cells_apart_g, by how cells_apart says) */
        CellsAcross cells_across;
        CellsApart cells_apart;
        unsigned cells_apart_a, cells_apart_b, cells_apart_g;
} SetChoice;

/* plan: the one the search's walks are given (set_search_room()), whose guest cells it packs in each set in
 * the orders cells_packing_new() works out once here; NULL for a search that walks no sets. */
void set_search_init(SetSearch *s, const HostView *v, const PolicyOps *ops, const Plan *plan, unsigned vcpus,
                     uint64_t memory);
void set_search_done(SetSearch *s);

/*
 * The nearest group holding a set with room (capacity for every vCPU and the memory); inside it a set
 * that splits a guest cell too big for one node over nearer nodes first, then one where each node's
 * share fits one L3 group before one where it does not, then the least loaded set (Fit=spread) or the
 * fullest (Fit=pack). When the chosen set still splits a cell over nodes farther apart than the nearest,
 * later groups whose farthest nodes are as near are looked at too, for a set that splits it over nearer
 * ones (two 12-vCPU cells on four 8-core nodes of two packages: one cell per package on four nodes, not
 * one across both packages on three). Then, when the set's vCPUs would split unevenly over its nodes
 * (a node with a sliver of free cores near some of the others lowers the ranking's mean, which assumes
 * an even split), a set of one node fewer that has room and whose split lies nearer its memory wins, and
 * again from there. With guest cells held whole (cells_whole), a set of several nodes gives way to a nearer
 * one where each cell's vCPUs stay whole and its memory spills to nearer nodes, unless the guest holds the
 * cells it ran farther apart (docs/algorithm.md, section 5a); out->cells_across says why cells that still
 * run in several packages do. Keeps the first candidates on plan (the walk's whose set won). False
 * (out->rank -1) when no set has room.
 */
bool set_search_room(const SetSearch *s, Plan *plan, SetChoice *out);

static inline void set_load_add(SetLoad *s, const HostView *v, unsigned node)
{
        s->capacity += v->node_capacity[node];
        s->free_cores += v->node_free_cores[node];
        s->own_thread_cores += v->node_own_thread_cores[node];
        s->free_pus += v->node_free_pus[node];
        s->usable_pus += v->node_usable_pus[node];
        s->size += v->node_size[node];
        s->free_memory += v->node_free_memory[node];
        s->load += v->node_load[node];
}

static inline void set_load_sum(SetLoad *a, const SetLoad *b)
{
        a->capacity += b->capacity;
        a->free_cores += b->free_cores;
        a->own_thread_cores += b->own_thread_cores;
        a->free_pus += b->free_pus;
        a->usable_pus += b->usable_pus;
        a->size += b->size;
        a->free_memory += b->free_memory;
        a->load += b->load;
}

static inline SetLoad set_sums_get(const SetSums *ss, const NodeSet *set)
{
        SetLoad s = {0};

        if (ss->lo) {
                s = ss->lo[set->mask & 0xff];
                set_load_sum(&s, &ss->hi[set->mask >> 8]);
                return s;
        }
        for (unsigned i = 0; i < set->nnodes; i++)
                set_load_add(&s, ss->v, nodeset_members(ss->table, set)[i]);
        return s;
}

/* False when no set of this many nodes can hold the request (checked in O(1)). */
static inline bool set_sums_may_fit(const SetSums *ss, const NodeSet *set, unsigned capacity,
                                    uint64_t memory)
{
        return set->nnodes <= ss->nreachable && ss->best_capacity[set->nnodes] >= capacity &&
               ss->best_memory[set->nnodes] >= memory;
}

/* False when no set of this many nodes has the free memory, the free capacity and the size asked. */
static inline bool set_sums_may_hold(const SetSums *ss, const NodeSet *set, unsigned capacity, unsigned size,
                                     uint64_t memory)
{
        return set_sums_may_fit(ss, set, capacity, memory) && ss->best_size[set->nnodes] >= size;
}

/* The fewest nodes a set needs to hold capacity, size and memory; nnodes + 1 when no set can. */
unsigned set_sums_min_nodes(const SetSums *ss, unsigned capacity, unsigned size, uint64_t memory);

void rank_iter_init(RankIter *it, const NodeSetTable *t, unsigned from, unsigned kmin);
/* The next rank, or -1. */
static inline int rank_iter_next(RankIter *it)
{
        const NodeSetTable *t = it->t;
        int best = -1;
        unsigned best_k = 0;

        if (!it->pos) {
                while (it->r < t->ncandidates && t->candidates[it->r].nnodes < it->kmin)
                        it->r++;
                return it->r < t->ncandidates ? (int)it->r++ : -1;
        }
        for (unsigned k = it->kmin; k <= t->nnodes; k++)
                if (it->pos[k] < t->size_start[k + 1] &&
                    (best < 0 || t->by_size[it->pos[k]] < (unsigned)best)) {
                        best = (int)t->by_size[it->pos[k]];
                        best_k = k;
                }
        if (best >= 0)
                it->pos[best_k]++;
        return best;
}
void rank_iter_done(RankIter *it);

/* Whether every node of set lies inside the request's constraints (a mask test when the table has masks). */
static inline bool set_inside(const HostView *v, const NodeSet *set, uint32_t allowed_mask)
{
        const unsigned *members;

        if (v->t->nodesets->has_masks)
                return (set->mask & ~allowed_mask) == 0;
        members = nodeset_members(v->t->nodesets, set);
        for (unsigned i = 0; i < set->nnodes; i++)
                if (!v->node_allowed[members[i]])
                        return false;
        return true;
}

/* Whether set has one of the nodes in near (node indexes). */
bool set_near(const NodeSetTable *table, const NodeSet *set, const CpuSet *near);

/* Keeps set on plan for explain, unless plan keeps enough already and always is false. */
/* The row plan keeps for the candidate of that rank, NULL when it keeps none. */
PlanCandidate *plan_candidate_of(const Plan *plan, unsigned rank);
void keep_candidate(const HostView *v, Plan *plan, unsigned rank, const NodeSet *set, const SetLoad *load,
                    bool qualifies, bool always);
/* Marks the chosen candidate, adding it when it ranked beyond what the plan keeps. */
void mark_chosen(const HostView *v, Plan *plan, unsigned rank, const SetLoad *load, bool qualifies);
