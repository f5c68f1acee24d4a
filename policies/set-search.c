/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The set search: set sums, rank iteration, candidate keeping, and the walk that finds the nearest set
 * with room for a request.
 */
#include "set-search.h"
#include "cells.h"

#include <stdlib.h>

static int compare_u64_desc(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? 1 : x > y ? -1 : 0;
}

/* Up to this many nodes an insertion sort beats qsort() (which calls back for every comparison). */
#define SORT_INSERTION_MAX 64u

/* a[0..n) largest first. */
static void sort_desc(uint64_t *a, unsigned n)
{
        if (n > SORT_INSERTION_MAX) {
                qsort(a, n, sizeof(*a), compare_u64_desc);
                return;
        }
        for (unsigned i = 1; i < n; i++) {
                uint64_t x = a[i];
                unsigned j = i;
                for (; j > 0 && a[j - 1] < x; j--)
                        a[j] = a[j - 1];
                a[j] = x;
        }
}

/* Below this many candidates, summing node by node is cheaper than building the half tables. */
#define SUMS_HALVES_MIN_CANDIDATES 256u

static void set_sums_init(SetSums *ss, const HostView *v, const NodeSetTable *table, const CpuSet *reachable)
{
        unsigned n = cpuset_count(reachable), k = 0;
        g_autofree uint64_t *cap = g_new0(uint64_t, MAX(n, 1));
        g_autofree uint64_t *size = g_new0(uint64_t, MAX(n, 1));
        g_autofree uint64_t *mem = g_new0(uint64_t, MAX(n, 1));

        *ss = (SetSums){.v = v, .table = table};
        if (table->has_masks && table->ncandidates >= SUMS_HALVES_MIN_CANDIDATES) {
                /* every entry is written below (each from one already written), none needs zeroing */
                ss->lo = g_new(SetLoad, 256);
                ss->hi = g_new(SetLoad, 256);
                ss->lo[0] = ss->hi[0] = (SetLoad){0};
                for (unsigned m = 1; m < 256; m++) {
                        unsigned low = (unsigned)__builtin_ctz(m);
                        ss->lo[m] = ss->lo[m & (m - 1)];
                        ss->hi[m] = ss->hi[m & (m - 1)];
                        if (low < table->nnodes)
                                set_load_add(&ss->lo[m], v, low);
                        if (low + 8 < table->nnodes)
                                set_load_add(&ss->hi[m], v, low + 8);
                }
        }
        CPUSET_FOREACH (node, reachable) {
                cap[k] = v->node_capacity[node];
                size[k] = v->node_size[node];
                mem[k++] = v->node_free_memory[node];
        }
        sort_desc(cap, n);
        sort_desc(size, n);
        sort_desc(mem, n);
        ss->best_capacity = g_new0(unsigned, n + 1);
        ss->best_size = g_new0(unsigned, n + 1);
        ss->best_memory = g_new0(uint64_t, n + 1);
        ss->nreachable = n;
        for (k = 0; k < n; k++) {
                ss->best_capacity[k + 1] = ss->best_capacity[k] + (unsigned)cap[k];
                ss->best_size[k + 1] = ss->best_size[k] + (unsigned)size[k];
                ss->best_memory[k + 1] = ss->best_memory[k] + mem[k];
        }
}

static void set_sums_done(SetSums *ss)
{
        g_free(ss->best_capacity);
        g_free(ss->best_size);
        g_free(ss->best_memory);
        g_free(ss->lo);
        g_free(ss->hi);
}

unsigned set_sums_min_nodes(const SetSums *ss, unsigned capacity, unsigned size, uint64_t memory)
{
        for (unsigned k = 1; k <= ss->nreachable; k++)
                if (ss->best_capacity[k] >= capacity && ss->best_size[k] >= size &&
                    ss->best_memory[k] >= memory)
                        return k;
        return ss->table->nnodes + 1;
}

void rank_iter_init(RankIter *it, const NodeSetTable *t, unsigned from, unsigned kmin)
{
        unsigned big = kmin <= t->nnodes ? t->ncandidates - t->size_start[kmin] : 0;

        *it = (RankIter){.t = t, .kmin = kmin, .r = from};
        if (kmin <= 1 || big >= t->ncandidates / 4)
                return;
        it->pos = g_new0(unsigned, t->nnodes + 2);
        for (unsigned k = kmin; k <= t->nnodes; k++) {
                unsigned lo = t->size_start[k], hi = t->size_start[k + 1];
                while (lo < hi) { /* first rank >= from */
                        unsigned mid = lo + (hi - lo) / 2;
                        if (t->by_size[mid] < from)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                it->pos[k] = lo;
        }
}

void rank_iter_done(RankIter *it)
{
        g_free(it->pos);
}

/* Least loaded first (Fit=spread): most free cores, then most free memory (then enumeration order:
 * smaller sets first, then by their highest node). */
/* The free cores a set's load is judged by: a core the user keeps for this domain's own emulator or I/O
 * thread is the domain's, not load (else a guest is sent away from the thread it pinned). */
static unsigned unloaded_cores(const SetLoad *a)
{
        return a->free_cores + a->own_thread_cores;
}

static bool less_loaded(const SetLoad *a, const SetLoad *b)
{
        if (unloaded_cores(a) != unloaded_cores(b))
                return unloaded_cores(a) > unloaded_cores(b);
        return a->free_memory > b->free_memory;
}

/* Fullest first (Fit=pack): fewest free cores, then least free memory, so that big holes stay whole. */
static bool more_full(const SetLoad *a, const SetLoad *b)
{
        if (unloaded_cores(a) != unloaded_cores(b))
                return unloaded_cores(a) < unloaded_cores(b);
        return a->free_memory < b->free_memory;
}

/* Whether a qualifying set should win over b, the best so far in the group, by the params' Fit=. */
static bool fits_better(const PlacementParams *params, const SetLoad *a, const SetLoad *b)
{
        return params->fit == FIT_PACK ? more_full(a, b) : less_loaded(a, b);
}

static CpuSet *nodes_os(const Topology *t, const unsigned *nodes, unsigned n)
{
        CpuSet *s = cpuset_new();
        for (unsigned i = 0; i < n; i++)
                cpuset_add(s, t->nodes[nodes[i]].os_index);
        return s;
}

bool set_near(const NodeSetTable *table, const NodeSet *set, const CpuSet *near)
{
        const unsigned *members = nodeset_members(table, set);

        for (unsigned i = 0; i < set->nnodes; i++)
                if (cpuset_has(near, members[i]))
                        return true;
        return false;
}

PlanCandidate *plan_candidate_of(const Plan *plan, unsigned rank)
{
        for (unsigned i = 0; i < plan->candidates->len; i++) {
                PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                if (c->rank == rank)
                        return c;
        }
        return NULL;
}

void keep_candidate(const HostView *v, Plan *plan, unsigned rank, const NodeSet *set, const SetLoad *load,
                    bool qualifies, bool always)
{
        PlanCandidate *c;

        if (plan->candidates->len >= POLICY_KEEP_CANDIDATES && !always)
                return;
        /* a set seen by two walks (the room walk, then the overcommit search) is listed once, as last
         * seen */
        if ((c = plan_candidate_of(plan, rank))) {
                c->free_cores = load->free_cores;
                c->free_pus = load->free_pus;
                c->free_memory = load->free_memory;
                c->qualifies = qualifies;
                return;
        }
        c = g_new0(PlanCandidate, 1);
        *c = (PlanCandidate){
            .rank = rank,
            .nodes = nodes_os(v->t, nodeset_members(v->t->nodesets, set), set->nnodes),
            .max_distance = set->max_distance,
            .mean_distance = set->mean_distance,
            .free_cores = load->free_cores,
            .free_pus = load->free_pus,
            .free_memory = load->free_memory,
            .qualifies = qualifies,
        };
        g_ptr_array_add(plan->candidates, c);
}

void mark_chosen(const HostView *v, Plan *plan, unsigned rank, const SetLoad *load, bool qualifies)
{
        bool found = false;

        for (unsigned i = 0; i < plan->candidates->len; i++) {
                PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                c->chosen = c->rank == rank;
                found |= c->chosen;
        }
        if (!found) {
                PlanCandidate *c;
                keep_candidate(v, plan, rank, &v->t->nodesets->candidates[rank], load, qualifies, true);
                c = g_ptr_array_index(plan->candidates, plan->candidates->len - 1);
                c->chosen = true;
        }
}

/* The most room one L3 group of each node offers (its cores on that node), from the room per core. */
static void l3_room_init(SetSearch *s)
{
        const Topology *t = s->v->t;
        unsigned nl3 = 0;
        g_autofree unsigned *room = NULL;

        s->node_l3_room = g_new0(unsigned, MAX(t->nnodes, 1));
        for (unsigned c = 0; c < t->ncores; c++)
                nl3 = MAX(nl3, t->cores[c].l3 + 1);
        room = g_new0(unsigned, MAX(nl3, 1));
        for (unsigned n = 0; n < t->nnodes; n++) {
                const TopoNode *node = &t->nodes[n];
                unsigned end = node->core_first + node->ncores, best = 0;

                if (!s->ops->core_room) {
                        s->node_l3_room[n] = s->v->node_capacity[n];
                        continue;
                }
                for (unsigned c = node->core_first; c < end; c++)
                        room[t->cores[c].l3] += s->ops->core_room(s->v, c);
                for (unsigned c = node->core_first; c < end; c++)
                        best = MAX(best, room[t->cores[c].l3]);
                for (unsigned c = node->core_first; c < end; c++)
                        room[t->cores[c].l3] = 0;
                s->node_l3_room[n] = best;
                s->l3_matters |= best < s->v->node_capacity[n];
        }
}

/* The node index each vCPU of plan goes to inside set, split as PolicyOps.assign splits them (cells whole,
 * the rest where the memory goes: cells_vcpu_nodes()), and in *reach how far a cell's memory spills from
 * its vCPUs' node (the nodes it spills to added to spilled, when not NULL); NULL (*reach TOPOLOGY_LOCAL)
 * when neither the L3 fit nor a guest cell split over several nodes asks. */
static int *set_vcpu_nodes(const SetSearch *s, const NodeSet *set, const Plan *plan, uint32_t *reach,
                           CpuSet *spilled)
{
        const unsigned *members = nodeset_members(s->table, set);
        g_autofree unsigned *capacity = NULL;
        int *vcpu_node;

        *reach = TOPOLOGY_LOCAL;
        if (!s->l3_matters && (!plan->ncells || set->nnodes < 2))
                return NULL;
        capacity = g_new(unsigned, set->nnodes);
        vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        for (unsigned i = 0; i < set->nnodes; i++)
                capacity[i] = s->v->node_capacity[members[i]];
        *reach = cells_vcpu_nodes(s->v, members, set->nnodes, capacity, plan, s->cells, vcpu_node, spilled);
        return vcpu_node;
}

/* Whether each node's share of the vCPUs (vcpu_node, set_vcpu_nodes()) fits one L3 group. */
static bool set_fits_l3(const SetSearch *s, const NodeSet *set, const Plan *plan, const int *vcpu_node)
{
        const unsigned *members = nodeset_members(s->table, set);

        if (!s->l3_matters || !vcpu_node)
                return true;
        for (unsigned i = 0; i < set->nnodes; i++) {
                unsigned share = 0;

                for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                        share += vcpu_node[vcpu] == (int)members[i];
                if (share > s->node_l3_room[members[i]])
                        return false;
        }
        return true;
}

/* The farthest apart two nodes one guest cell's vCPUs go to (vcpu_node, set_vcpu_nodes()); TOPOLOGY_LOCAL
 * when every cell goes whole to one node, or the plan has none. */
static uint32_t cell_split(const SetSearch *s, const Plan *plan, const int *vcpu_node)
{
        uint32_t spread = TOPOLOGY_LOCAL;
        unsigned ncells = 0;
        /* a cell without vCPUs (a memory device's; a guest may have hundreds) spans no nodes */
        const unsigned *cells = s->cells ? cells_packing_cells(s->cells, &ncells) : NULL;

        for (unsigned o = 0; vcpu_node && o < ncells; o++) {
                g_autoptr(CpuSet) on = cpuset_new();
                uint32_t max;

                CPUSET_FOREACH (vcpu, plan->cells[cells[o]].vcpus)
                        if ((unsigned)vcpu < plan->nvcpus && vcpu_node[vcpu] >= 0)
                                cpuset_add(on, (unsigned)vcpu_node[vcpu]);
                topology_nodes_distance(s->v->t, on, &max, NULL);
                spread = MAX(spread, max);
        }
        return spread;
}

/* cell_split(), or how far a cell's memory reaches from its vCPUs (reach), whichever is farther. */
static uint32_t cell_spread(const SetSearch *s, const Plan *plan, const int *vcpu_node, uint32_t reach)
{
        return MAX(reach, cell_split(s, plan, vcpu_node));
}

/* Of the sets past the nearest group, how many as near by their farthest nodes are looked at for one that
 * splits a guest cell over nearer nodes. */
#define CELL_SPREAD_SCAN_MAX 4096u

void set_search_init(SetSearch *s, const HostView *v, const PolicyOps *ops, const Plan *plan, unsigned vcpus,
                     uint64_t memory)
{
        const Topology *t = v->t;
        const NodeSetTable *table = t->nodesets;
        g_autoptr(CpuSet) reachable = cpuset_new();

        *s = (SetSearch){.v = v,
                         .ops = ops,
                         .table = table,
                         .vcpus = vcpus,
                         .wanted = vcpus,
                         .memory = memory,
                         .max_group = -1};
        for (unsigned n = 0; n < t->nnodes && n < 32; n++)
                if (v->node_allowed[n])
                        s->allowed_mask |= UINT32_C(1) << n;
        for (unsigned r = 0; r < table->ncandidates; r++) {
                const NodeSet *set = &table->candidates[r];
                for (unsigned i = 0; i < set->nnodes; i++)
                        cpuset_add(reachable, nodeset_members(table, set)[i]);
                if (cpuset_count(reachable) == t->nnodes)
                        break;
        }
        CPUSET_FOREACH (n, reachable)
                set_load_add(&s->host, v, (unsigned)n);
        set_sums_init(&s->sums, v, table, reachable);
        l3_room_init(s);
        if (plan && plan->ncells)
                s->cells = cells_packing_new(v, plan);
}

void set_search_done(SetSearch *s)
{
        set_sums_done(&s->sums);
        g_free(s->node_l3_room);
        cells_packing_free(s->cells);
}

/*
 * When the whole host lacks the room, no set has it: the walk is skipped. The first sets are all looked
 * at (for explain); after them, sets too small for the request are skipped without being touched.
 */
/*
 * Whether a set of several nodes holds one that takes nothing: no free core for a vCPU while the nodes that
 * have one hold the memory too. The ranking's mean distance counts every node as if the domain spread
 * evenly over all of them, so such a node, near the others, lowers the mean of a set it takes no part
 * in: {0,1,3,4} ranked above {0,3} with node 4 full, and the domain was said to span four nodes. The set
 * without those nodes is a candidate of its own (checked through the mask index: without one, as above
 * 16 nodes, the set is kept).
 */
/* host_view_kinds_fit() of the nodes of a mask of node indexes. */
static bool mask_kinds_fit(const SetSearch *s, uint32_t mask)
{
        unsigned nodes[32], n = 0;

        for (unsigned i = 0; i < 32; i++)
                if (mask >> i & 1)
                        nodes[n++] = i;
        return host_view_kinds_fit(s->v, nodes, n);
}

static bool set_has_idle_node(const SetSearch *s, const NodeSet *set, const Plan *plan)
{
        const NodeSetTable *table = s->table;
        const unsigned *members = nodeset_members(table, set);
        g_autofree int *vcpu_node = NULL;
        g_autoptr(CpuSet) spilled = cpuset_new();
        uint32_t useful = 0, reach;
        uint64_t memory = 0;

        if (set->nnodes < 2 || !table->rank_of_mask || s->vcpus == 0)
                return false;
        /* with guest cells, a node with free cores may still have room for no cell: the nodes the vCPUs
         * go to, and those a cell's memory spills to, are the useful ones */
        if (plan->ncells && (vcpu_node = set_vcpu_nodes(s, set, plan, &reach, spilled))) {
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        if (vcpu_node[i] >= 0)
                                useful |= UINT32_C(1) << vcpu_node[i];
                CPUSET_FOREACH (n, spilled)
                        useful |= UINT32_C(1) << n;
        }
        for (unsigned i = 0; i < set->nnodes; i++)
                if (vcpu_node ? (useful >> members[i] & 1) : s->v->node_capacity[members[i]] > 0) {
                        useful |= UINT32_C(1) << members[i];
                        memory += s->v->node_free_memory[members[i]];
                }
        /* nodes with free cores but short of memory (CPUs local to no node, a full node): the members
         * nearest them that have memory are useful too, the nearest first, until it fits (each kind of
         * it, when some guest cells have ordinary memory beside hugepages: one node's ordinary memory
         * holds none of another's pages) */
        while (useful && (memory < s->memory || !mask_kinds_fit(s, useful))) {
                int best = -1;
                uint32_t best_distance = UINT32_MAX;
                for (unsigned i = 0; i < set->nnodes; i++) {
                        unsigned n = members[i];
                        if ((useful >> n & 1) || !s->v->node_free_memory[n])
                                continue;
                        for (unsigned j = 0; j < set->nnodes; j++)
                                if ((useful >> members[j] & 1) &&
                                    topology_distance(s->v->t, members[j], n) < best_distance) {
                                        best_distance = topology_distance(s->v->t, members[j], n);
                                        best = (int)n;
                                }
                }
                if (best < 0)
                        return false;
                useful |= UINT32_C(1) << best;
                memory += s->v->node_free_memory[best];
        }
        return useful && useful != set->mask && memory >= s->memory &&
               table->rank_of_mask[useful] != UINT_MAX;
}

/* The mean distance between the nodes of set its vCPUs go to (as PolicyOps.assign splits them), each
 * pair weighted by how many go to each of the two: where the memory follows the vCPUs, how far a vCPU is
 * from its memory on average. Equals the set's mean when the split is even. */
static double split_mean(const SetSearch *s, const NodeSet *set, const Plan *plan)
{
        const unsigned *members = nodeset_members(s->table, set);
        g_autofree unsigned *capacity = g_new(unsigned, set->nnodes);
        g_autofree unsigned *count = g_new0(unsigned, set->nnodes);
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        double sum = 0, total = 0;

        for (unsigned i = 0; i < set->nnodes; i++)
                capacity[i] = s->v->node_capacity[members[i]];
        cells_vcpu_nodes(s->v, members, set->nnodes, capacity, plan, s->cells, vcpu_node, NULL);
        for (unsigned v = 0; v < plan->nvcpus; v++)
                for (unsigned i = 0; i < set->nnodes; i++)
                        count[i] += vcpu_node[v] == (int)members[i];
        for (unsigned i = 0; i < set->nnodes; i++) {
                total += count[i];
                for (unsigned j = 0; j < set->nnodes; j++)
                        sum +=
                            (double)count[i] * count[j] * topology_distance(s->v->t, members[i], members[j]);
        }
        return total > 0 ? sum / (total * total) : set->mean_distance;
}

/* How much nearer its memory a set of fewer nodes must put the vCPUs to replace the one chosen: a gain
 * under it is less than what the nodes it leaves free can cost the next domain (8 vCPUs narrowed from
 * 2 + 3 + 3 to 4 + 4 for 0.03 left three free cores in each package's far corner, and a 4-vCPU domain then
 * crossed the packages). */
#define NARROW_MIN_GAIN 0.1

/*
 * The ranking's mean distance counts each node of a set as if the domain spread evenly over all of them,
 * so a node near some of the others lowers it even when it has a sliver of free cores: on two sockets of
 * two nodes (12 inside, 21 across) with 8, 2, 8 and 2 free cores, {0,1,2} (mean 15.33) ranks above {0,2}
 * (15.50), and 16 vCPUs split 7 + 2 + 7 there, 15.63 from their memory on average, taking node 1's last
 * cores. Of the sets of one node fewer that have room (and nothing else against them: allowed, near the
 * devices when those chose, the L3 fit kept, the free core for its emulator kept when the chosen set had
 * one and the host has no idle sibling for it), the one whose split lies nearest its memory wins when it
 * lies nearer than the chosen set's by NARROW_MIN_GAIN, and again from there. Not for guest cells (their
 * split has its own rule) nor above 16 nodes (no mask index); a set whose split is even is never narrowed,
 * so the sets of several nodes of one socket and one of the other, which the mean prefers across sockets,
 * stand.
 */
static void narrow_uneven(const SetSearch *s, Plan *plan, SetChoice *out)
{
        const NodeSetTable *table = s->table;
        const NodeSet *chosen;
        double best, first;
        unsigned need;

        if (plan->ncells || !table->rank_of_mask || s->vcpus == 0 || table->candidates[out->rank].nnodes < 3)
                return;
        /* the core to spare its housekeeping had (no idle sibling for the emulator), kept */
        need = s->vcpus + (out->load.capacity > s->vcpus && policy_housekeeping_needs_core(s->v));
        chosen = &table->candidates[out->rank];
        best = first = split_mean(s, chosen, plan);
        if (best <= chosen->mean_distance + NODESETS_MEAN_EPSILON)
                return; /* split evenly: the ranking's mean is its own */
        for (;;) {
                const NodeSet *set = &table->candidates[out->rank];
                const unsigned *members = nodeset_members(table, set);
                int pick = -1;
                SetLoad pick_load = {0};
                bool pick_fits = false;
                double bar;

                if (set->nnodes < 3)
                        return;
                bar = best - NARROW_MIN_GAIN;
                for (unsigned i = 0; i < set->nnodes; i++) {
                        unsigned r = table->rank_of_mask[set->mask & ~(UINT32_C(1) << members[i])];
                        const NodeSet *sub;
                        SetLoad load;
                        double mean;
                        bool fits;

                        if (r == UINT_MAX)
                                continue;
                        sub = &table->candidates[r];
                        if (!set_inside(s->v, sub, s->allowed_mask) ||
                            (s->near && !set_near(table, sub, s->near)))
                                continue;
                        load = set_sums_get(&s->sums, sub);
                        if (load.free_memory < s->memory || load.capacity < need ||
                            !host_view_kinds_fit(s->v, nodeset_members(table, sub), sub->nnodes) ||
                            set_has_idle_node(s, sub, plan))
                                continue;
                        fits = true;
                        if (s->l3_matters) {
                                uint32_t reach;
                                g_autofree int *vcpu_node = set_vcpu_nodes(s, sub, plan, &reach, NULL);
                                fits = set_fits_l3(s, sub, plan, vcpu_node);
                        }
                        if (out->l3_fit && !fits)
                                continue;
                        mean = split_mean(s, sub, plan);
                        if (mean <= bar && (pick < 0 || mean < best)) {
                                best = mean;
                                pick = (int)r;
                                pick_load = load;
                                pick_fits = fits;
                        }
                }
                if (pick < 0)
                        return;
                if (out->wider_rank < 0) {
                        out->wider_rank = out->rank;
                        out->wider_mean = first;
                }
                out->rank = pick;
                out->load = pick_load;
                out->l3_fit = pick_fits;
                out->split_mean = best;
                out->group_size = 1;
                out->l3_unfit = 0;
        }
}

/* How many packages the nodes vcpu_node[] puts the plan's vCPUs on span. */
static unsigned vcpu_packages(const Topology *t, const Plan *plan, const int *vcpu_node)
{
        g_autoptr(CpuSet) packages = cpuset_new();

        for (unsigned v = 0; v < plan->nvcpus; v++) {
                const TopoNode *node = vcpu_node[v] >= 0 ? &t->nodes[vcpu_node[v]] : NULL;
                if (node && node->ncores)
                        cpuset_add(packages, t->cores[node->core_first].package);
        }
        return cpuset_count(packages);
}

/* Whether the guest cells' own <memnode> bindings (those to nodes with cores, where the cells' vCPUs go)
 * leave no package with a node of each: the definition itself puts its cells in several packages. */
static bool cells_bound_across(const SetSearch *s)
{
        const Topology *t = s->v->t;
        const PlacementRequest *req = s->v->req;

        if (!req || t->npackages < 2)
                return false;
        for (unsigned p = 0; p < t->npackages; p++) {
                bool all = true, any = false;
                for (unsigned c = 0; all && c < req->ncells; c++) {
                        bool here = false, cores = false;
                        for (unsigned n = 0; req->cells[c].memory_nodes && n < t->nnodes; n++) {
                                if (!t->nodes[n].ncores ||
                                    !cpuset_has(req->cells[c].memory_nodes, t->nodes[n].os_index))
                                        continue;
                                cores = true;
                                here = here || t->cores[t->nodes[n].core_first].package == p;
                        }
                        any = any || cores;
                        all = !cores || here;
                }
                if (!any || all)
                        return false;
        }
        return true;
}

/*
 * A set that holds each guest cell whole with all its memory on its node (out, the cells_whole walk) may
 * lie farther than one that has the room for the domain as the same guest without cells would take it:
 * on Sapphire Rapids in SNC2 with node 0's memory taken, two 4-vCPU 16 GiB cells ran on nodes 1 and 2,
 * 21 apart across the sockets, where the guest without cells took nodes 0-1. Cells that talk to each
 * other then pay 21 on every access to the other's memory, and the interconnect's bandwidth; a cell whose
 * memory spills 12 away inside its package pays 12 on the part that spilled. So the walk with cells
 * allowed to spill is made too, and its set wins when it lies nearer by its farthest nodes and keeps every
 * cell's vCPUs whole on one node (a split cell costs its guest what the spill would save), unless the
 * guest itself holds apart the cells out runs farther than that set's farthest nodes (its <distances>
 * remote, or two of its sockets: its stated layout). The walk honours each <memnode> as the first did.
 * When out's cells still run in several packages, out->cells_across says why.
 */
static void cells_keep_near(const SetSearch *s, Plan *plan, SetChoice *out)
{
        const NodeSetTable *table = s->table;
        const NodeSet *whole = &table->candidates[out->rank], *near_set;
        SetSearch spill = *s;
        g_autoptr(GPtrArray) kept = NULL;
        g_autofree int *whole_nodes = NULL, *near_nodes = NULL;
        SetChoice near;
        CellsApart apart;
        uint32_t reach;
        unsigned a = 0, b = 0, g = 0;
        bool across;

        if (whole->nnodes < 2 || plan->ncells < 2 || s->vcpus == 0 ||
            !(whole_nodes = set_vcpu_nodes(s, whole, plan, &reach, NULL)))
                return;
        cells_follow_guest(s->v, plan, whole_nodes);
        across = vcpu_packages(s->v->t, plan, whole_nodes) > 1;
        spill.cells_whole = false;
        if (spill.max_group < 0 || (unsigned)spill.max_group > whole->group)
                spill.max_group = (int)whole->group;
        kept = plan->candidates; /* the spill walk's candidates are kept only when its set wins */
        plan->candidates = g_ptr_array_new_with_free_func((GDestroyNotify)plan_candidate_free);
        if (!set_search_room(&spill, plan, &near) ||
            table->candidates[near.rank].max_distance >= whole->max_distance) {
                if (across)
                        out->cells_across =
                            cells_bound_across(s) ? CELLS_ACROSS_BOUND : CELLS_ACROSS_NO_ROOM;
                goto keep;
        }
        near_set = &table->candidates[near.rank];
        near_nodes = set_vcpu_nodes(s, near_set, plan, &reach, NULL);
        if (cell_split(s, plan, near_nodes) > TOPOLOGY_LOCAL) {
                if (across)
                        out->cells_across = CELLS_ACROSS_SPLIT;
                goto keep;
        }
        apart = cells_guest_apart(s->v, plan, whole_nodes, near_set->max_distance, &a, &b, &g);
        if (apart != CELLS_APART_NONE) {
                if (across) {
                        out->cells_across = CELLS_ACROSS_GUEST;
                        out->cells_apart = apart;
                        out->cells_apart_a = a;
                        out->cells_apart_b = b;
                        out->cells_apart_g = g;
                }
                goto keep;
        }
        near.cells_whole_distance = whole->max_distance;
        near.cells_whole_across = across;
        near.cell_reach = reach;
        *out = near;
        return; /* the spill walk's candidates stay: its set qualifies there */
keep:
        g_ptr_array_unref(plan->candidates);
        plan->candidates = g_steal_pointer(&kept);
}

bool set_search_room(const SetSearch *s, Plan *plan, SetChoice *out)
{
        const NodeSetTable *table = s->table;
        int group = -1;
        RankIter it;
        int rank;

        *out = (SetChoice){.rank = -1, .cell_spread = UINT32_MAX, .wider_rank = -1};
        if (s->host.capacity < s->vcpus || s->host.free_memory < s->memory) {
                /* explain still shows the nearest sets, each too small as the whole host is */
                for (unsigned r = 0;
                     r < table->ncandidates && plan->candidates->len < POLICY_KEEP_CANDIDATES; r++) {
                        const NodeSet *set = &table->candidates[r];
                        SetLoad load;
                        if (!set_inside(s->v, set, s->allowed_mask))
                                continue;
                        load = set_sums_get(&s->sums, set);
                        keep_candidate(s->v, plan, r, set, &load, false, false);
                }
                return false;
        }
        rank_iter_init(&it, table, 0, 1);
        for (unsigned seen = 0, past = 0; (rank = rank_iter_next(&it)) >= 0; seen++) {
                const NodeSet *set = &table->candidates[rank];
                SetLoad load;
                unsigned kinds_short;
                bool qualifies, idle, node_missing = false, misfit = false,
                                      beyond = group >= 0 && set->group != (unsigned)group;

                if (s->max_group >= 0 && set->group > (unsigned)s->max_group)
                        break;
                /* past the nearest group only for a set as near by its farthest nodes that splits a
                 * guest cell over nearer ones */
                if (beyond && (out->cell_spread <= TOPOLOGY_LOCAL ||
                               set->max_distance != table->candidates[out->rank].max_distance ||
                               ++past > CELL_SPREAD_SCAN_MAX))
                        break;
                if (seen == POLICY_KEEP_CANDIDATES) {
                        rank_iter_done(&it);
                        rank_iter_init(&it, table, (unsigned)rank + 1,
                                       set_sums_min_nodes(&s->sums, s->vcpus, 0, s->memory));
                        if (!set_sums_may_fit(&s->sums, set, s->vcpus, s->memory))
                                continue;
                }
                if (!set_inside(s->v, set, s->allowed_mask) || (s->near && !set_near(table, set, s->near)))
                        continue;
                load = set_sums_get(&s->sums, set);
                qualifies = load.free_memory >= s->memory && load.capacity >= s->vcpus;
                kinds_short =
                    qualifies ? host_view_kinds_short(s->v, nodeset_members(table, set), set->nnodes) : 0;
                qualifies = qualifies && !kinds_short;
                idle = qualifies && set_has_idle_node(s, set, plan);
                qualifies = qualifies && !idle;
                /* whole or split, a cell never runs away from its bound memory */
                if (qualifies && plan->ncells &&
                    !cells_bound_fit(s->v, nodeset_members(table, set), set->nnodes, plan, s->cells, true)) {
                        qualifies = false;
                        node_missing = !cells_bound_fit(s->v, nodeset_members(table, set), set->nnodes, plan,
                                                        s->cells, false);
                        misfit = !node_missing;
                }
                if (qualifies && s->cells_whole) {
                        qualifies =
                            cells_fit(s->v, nodeset_members(table, set), set->nnodes, plan, s->cells);
                        misfit = !qualifies;
                }
                if (plan->candidates->len < POLICY_KEEP_CANDIDATES) {
                        PlanCandidate *kept;
                        keep_candidate(s->v, plan, (unsigned)rank, set, &load, qualifies, false);
                        kept = plan_candidate_of(plan, (unsigned)rank);
                        kept->idle_node = idle;
                        kept->cell_node_missing = node_missing;
                        kept->cells_misfit = misfit;
                        kept->pages_short = kinds_short & HOST_VIEW_PAGES_SHORT;
                        kept->ordinary_short = kinds_short & HOST_VIEW_ORDINARY_SHORT;
                }
                if (qualifies && beyond) {
                        uint32_t reach;
                        g_autofree int *vcpu_node = set_vcpu_nodes(s, set, plan, &reach, NULL);
                        uint32_t spread = cell_spread(s, plan, vcpu_node, reach);
                        bool fits = set_fits_l3(s, set, plan, vcpu_node);
                        /* as near as the best past the group so far: the L3 fit and Fit= decide, as
                         * inside the nearest group */
                        bool tie = out->cells_nearer && spread == out->cell_spread &&
                                   set->group == table->candidates[out->rank].group;
                        if (spread < out->cell_spread ||
                            (tie &&
                             ((fits && !out->l3_fit) ||
                              (fits == out->l3_fit && fits_better(s->v->params, &load, &out->load))))) {
                                out->rank = rank;
                                out->load = load;
                                out->l3_fit = fits;
                                out->cell_spread = spread;
                                out->cell_split = cell_split(s, plan, vcpu_node);
                                out->cell_reach = reach;
                                out->cells_nearer = true;
                                out->group_size = 1;
                                out->l3_unfit = 0;
                        }
                } else if (qualifies) {
                        uint32_t reach;
                        g_autofree int *vcpu_node = set_vcpu_nodes(s, set, plan, &reach, NULL);
                        bool fits = set_fits_l3(s, set, plan, vcpu_node);
                        uint32_t spread = cell_spread(s, plan, vcpu_node, reach);

                        group = (int)set->group;
                        out->group_size++;
                        out->l3_unfit += !fits;
                        if (out->rank < 0 || spread < out->cell_spread ||
                            (spread == out->cell_spread &&
                             ((fits && !out->l3_fit) ||
                              (fits == out->l3_fit && fits_better(s->v->params, &load, &out->load))))) {
                                out->rank = rank;
                                out->load = load;
                                out->l3_fit = fits;
                                out->cell_spread = spread;
                        }
                }
        }
        rank_iter_done(&it);
        if (out->rank >= 0)
                narrow_uneven(s, plan, out);
        if (out->rank >= 0 && s->cells_whole)
                cells_keep_near(s, plan, out);
        return out->rank >= 0;
}
