/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guest NUMA cells in the guest's own order: which host node takes which of its interchangeable cells
 * (cells.h: cells_follow_guest(), cells_order_note()). */
#include "cells.h"

#include <stdlib.h>
#include <string.h>

/* A cell of plan that may trade places (cells_follow_guest()). */
typedef struct {
        const Plan *plan;
        unsigned cell;
} CellOrder;

/*
 * How near the guest holds its cells to one another, and which host node takes which cell. Once the set
 * and what each of its nodes takes are chosen, cells of one size (vCPUs and memory) are interchangeable:
 * each could take any of the others' places. The guest's kernel builds its scheduling domains and NUMA
 * balancing on its own SLIT (<distances>), else on its sockets (<topology>): a mapping that puts the cells
 * it holds near on nodes far apart, and those it holds far on nodes near, turns them upside down.
 */
typedef enum GuestOrder {
        GUEST_ORDER_NONE,      /* the guest says nothing of how near its cells are */
        GUEST_ORDER_DISTANCES, /* its cells' <distances> */
        GUEST_ORDER_SOCKETS,   /* its <topology> sockets: cells of one socket near, of two far */
} GuestOrder;

/* Every mapping is tried for up to GUEST_ORDER_MAX_EXHAUSTIVE interchangeable cells (of at most twice as
 * many placed whole: each mapping weighs every pair of them); beyond, trades of two nodes' cells and swaps
 * of two cells improve the mapping as packed, up to GUEST_ORDER_MAX_SWAP cells placed whole. A guest with
 * more is left as packed. */
#define GUEST_ORDER_MAX_EXHAUSTIVE 5u
#define GUEST_ORDER_MAX_SWAP       16u

static GuestOrder guest_order(const PlacementRequest *req, const Plan *plan)
{
        if (!req || req->ncells != plan->ncells || plan->ncells < 2)
                return GUEST_ORDER_NONE;
        for (unsigned c = 0; c < req->ncells; c++)
                if (req->cells[c].distances)
                        return GUEST_ORDER_DISTANCES;
        return req->guest_socket_vcpus ? GUEST_ORDER_SOCKETS : GUEST_ORDER_NONE;
}

/* The guest socket every vCPU of cell c is in (libvirt id / vCPUs per socket), -1 when they are in
 * several or it has none. */
static int cell_socket(const PlacementRequest *req, unsigned c)
{
        int socket = -1;

        CPUSET_FOREACH (id, req->cells[c].vcpus) {
                int s = (int)((unsigned)id / req->guest_socket_vcpus);
                if (socket >= 0 && s != socket)
                        return -1;
                socket = s;
        }
        return socket;
}

/* One distance of a cell's <distances> to the cell of id, 0 when it names none. */
static unsigned sibling_distance(const PlacementCell *cell, unsigned id)
{
        return cell->distances && id < cell->ndistances ? cell->distances[id] : 0;
}

/* The guest's distance between cells a and b (indexes of req->cells): a's <distances> to b, else b's to a
 * (QEMU completes a one-sided matrix so); by sockets 1 within one and 2 across (only the order counts); 0
 * when the guest says nothing of them. */
static unsigned guest_distance(const PlacementRequest *req, GuestOrder order, const int *socket, unsigned a,
                               unsigned b)
{
        unsigned d;

        if (order == GUEST_ORDER_SOCKETS)
                return socket[a] < 0 || socket[b] < 0 ? 0 : socket[a] == socket[b] ? 1 : 2;
        d = sibling_distance(&req->cells[a], req->cells[b].id);
        return d ? d : sibling_distance(&req->cells[b], req->cells[a].id);
}

/* How far apart nodes a and b are for the cells on them: 0 on one node (nearer than any two nodes), else
 * the SLIT's distance (256 when unreachable, farther than any). */
static unsigned host_distance(const Topology *t, unsigned a, unsigned b)
{
        return a == b ? 0 : MIN(topology_distance(t, a, b), 256u);
}

/* Two cells the guest gives a distance, g. */
typedef struct CellPair {
        unsigned a, b, g;
} CellPair;

static int compare_pairs(const void *pa, const void *pb)
{
        const CellPair *x = pa, *y = pb;

        if (x->g != y->g)
                return x->g < y->g ? -1 : 1;
        if (x->a != y->a)
                return x->a < y->a ? -1 : 1;
        return x->b < y->b ? -1 : x->b > y->b;
}

/* The pairs of cells with a node in cell_node[] (>= 0) the guest gives a distance, nearest in the guest
 * first, into *ret (returns how many); whether the guest holds some of them nearer than others. */
static unsigned guest_pairs(const PlacementRequest *req, GuestOrder order, const int *cell_node, unsigned n,
                            CellPair **ret, bool *ordered)
{
        g_autofree int *socket = g_new(int, MAX(n, 1));
        CellPair *pairs = g_new(CellPair, MAX(n * (n - 1) / 2, 1));
        unsigned k = 0;

        for (unsigned c = 0; c < n; c++)
                socket[c] = order == GUEST_ORDER_SOCKETS ? cell_socket(req, c) : -1;
        for (unsigned a = 0; a < n; a++)
                for (unsigned b = a + 1; b < n; b++) {
                        unsigned g;
                        if (cell_node[a] < 0 || cell_node[b] < 0)
                                continue;
                        g = guest_distance(req, order, socket, a, b);
                        if (g)
                                pairs[k++] = (CellPair){a, b, g};
                }
        qsort(pairs, k, sizeof(*pairs), compare_pairs);
        *ordered = k > 1 && pairs[0].g != pairs[k - 1].g;
        *ret = pairs;
        return k;
}

/*
 * How far the mapping cell_node[] is from the guest's order: for every two pairs of cells the guest holds
 * one nearer than the other, 2 when the host holds the nearer one farther, 1 when as far (but on two
 * nodes: on one it is as near as the host can make it). host_rank[] maps a host distance (0-256) to its
 * rank among those of the set, count[] has a slot per rank (nranks).
 */
static uint64_t guest_mismatch(const Topology *t, const CellPair *pairs, unsigned npairs,
                               const int *cell_node, const unsigned *host_rank, unsigned nranks,
                               uint64_t *count)
{
        uint64_t cost = 0;

        memset(count, 0, sizeof(*count) * nranks);
        for (unsigned i = 0; i < npairs;) {
                unsigned j = i;
                for (; j < npairs && pairs[j].g == pairs[i].g; j++) {
                        unsigned h = host_distance(t, (unsigned)cell_node[pairs[j].a],
                                                   (unsigned)cell_node[pairs[j].b]);
                        unsigned r = host_rank[h];
                        /* the pairs the guest holds nearer (counted so far) that run farther, or as far */
                        for (unsigned x = r + 1; x < nranks; x++)
                                cost += 2 * count[x];
                        if (h)
                                cost += count[r];
                }
                /* the guest holds the pairs after these farther */
                for (unsigned q = i; q < j; q++)
                        count[host_rank[host_distance(t, (unsigned)cell_node[pairs[q].a],
                                                      (unsigned)cell_node[pairs[q].b])]]++;
                i = j;
        }
        return cost;
}

/* The search for the mapping of the interchangeable cells nearest the guest's order. */
typedef struct OrderSearch {
        const Topology *t;
        const CellPair *pairs;
        unsigned npairs;
        const unsigned *host_rank;
        unsigned nranks;
        uint64_t *count;
        unsigned ncells;
        unsigned m;               /* interchangeable cells */
        const unsigned *cell;     /* [m] their indexes, by class (cells of one size together) */
        const unsigned *class_of; /* [m] the first index into cell[] of each one's class */
        const int *slot;          /* [m] the nodes they had, the places their class shares */
        const int *nodes;         /* [nnodes] those nodes, each once */
        unsigned nnodes;
        const uint64_t *memory; /* [m] each one's memory */
        const uint64_t *room;   /* [nnodes] what those on each node may take of its free memory, NULL:
                                 * their memory is not counted where they run */
        /* when some cells are hugepage-backed and some not: room is of the pages alone, room_ordinary
         * [nnodes] of the other kind, ordinary [m] which of the cells are of that kind; NULL otherwise */
        const uint64_t *room_ordinary;
        const bool *ordinary;
        bool *used;     /* [m] slots taken on the way */
        int *cell_node; /* the mapping being tried */
        int *best;      /* the best mapping found */
        uint64_t best_cost;
} OrderSearch;

/* Whether the nodes' free memory holds the interchangeable cells as cell_node maps them. */
static bool memory_holds(const OrderSearch *s, const int *cell_node)
{
        for (unsigned k = 0; s->room && k < s->nnodes; k++) {
                uint64_t taken = 0, taken_ordinary = 0;
                for (unsigned i = 0; i < s->m; i++) {
                        uint64_t bytes = cell_node[s->cell[i]] == s->nodes[k] ? s->memory[i] : 0;
                        if (s->ordinary && s->ordinary[i])
                                taken_ordinary += bytes;
                        else
                                taken += bytes;
                }
                if (taken > s->room[k] || (s->room_ordinary && taken_ordinary > s->room_ordinary[k]))
                        return false;
        }
        return true;
}

/* Every mapping of the cells from cell[i] on, each to a slot of its class no cell before it took (of
 * slots on one node, the first), keeping the first that misses the guest's order least. */
static void order_walk(OrderSearch *s, unsigned i)
{
        unsigned first, end;

        if (s->best_cost == 0)
                return;
        if (i == s->m) {
                uint64_t cost = guest_mismatch(s->t, s->pairs, s->npairs, s->cell_node, s->host_rank,
                                               s->nranks, s->count);
                if (cost < s->best_cost && memory_holds(s, s->cell_node)) {
                        s->best_cost = cost;
                        memcpy(s->best, s->cell_node, sizeof(*s->best) * s->ncells);
                }
                return;
        }
        first = s->class_of[i];
        for (end = first; end < s->m && s->class_of[end] == first; end++)
                ;
        for (unsigned k = first; k < end; k++) {
                bool seen = false;
                if (s->used[k])
                        continue;
                for (unsigned q = first; q < k && !seen; q++)
                        seen = !s->used[q] && s->slot[q] == s->slot[k];
                if (seen)
                        continue;
                s->used[k] = true;
                s->cell_node[s->cell[i]] = s->slot[k];
                order_walk(s, i + 1);
                s->used[k] = false;
        }
}

/* Whether the interchangeable cells on nodes a and b of s->best could trade nodes as a whole: as many of
 * each class on both (their memory is checked after the trade). */
static bool nodes_alike(const OrderSearch *s, int a, int b)
{
        for (unsigned i = 0; i < s->m; i++) {
                long n = 0;
                if (s->class_of[i] != i)
                        continue;
                for (unsigned k = i; k < s->m && s->class_of[k] == i; k++)
                        n += (s->best[s->cell[k]] == a) - (s->best[s->cell[k]] == b);
                if (n)
                        return false;
        }
        return true;
}

/* Moves the interchangeable cells of s->best on node a to node b and those on b to a. */
static void trade_nodes(OrderSearch *s, int a, int b)
{
        for (unsigned i = 0; i < s->m; i++) {
                int *node = &s->best[s->cell[i]];
                *node = *node == a ? b : *node == b ? a : *node;
        }
}

/* Whether s->best as changed misses the guest's order less than before: then it is kept (best_cost and
 * *better set), else the caller undoes the change. */
static bool kept_if_nearer(OrderSearch *s, bool *better)
{
        uint64_t cost =
            guest_mismatch(s->t, s->pairs, s->npairs, s->best, s->host_rank, s->nranks, s->count);

        if (cost >= s->best_cost || !memory_holds(s, s->best))
                return false;
        s->best_cost = cost;
        *better = true;
        return true;
}

/* For more cells than every mapping of them can be tried: from s->best, the cells of two nodes alike
 * trading nodes as a whole (the cells grouped on a node may belong on another: a single swap then gains
 * nothing), then two cells of one size on two nodes trading places, while one of them brings it nearer
 * the guest's order. */
static void order_swaps(OrderSearch *s)
{
        bool better = true;

        for (unsigned pass = 0; better && pass < 8; pass++) {
                better = false;
                for (unsigned i = 0; i < s->nnodes; i++)
                        for (unsigned j = i + 1; j < s->nnodes; j++) {
                                int a = s->nodes[i], b = s->nodes[j];
                                if (!nodes_alike(s, a, b))
                                        continue;
                                trade_nodes(s, a, b);
                                if (!kept_if_nearer(s, &better))
                                        trade_nodes(s, a, b);
                        }
                for (unsigned i = 0; i < s->m; i++)
                        for (unsigned j = i + 1; j < s->m && s->class_of[j] == s->class_of[i]; j++) {
                                int a = s->best[s->cell[i]], b = s->best[s->cell[j]];
                                if (a == b)
                                        continue;
                                s->best[s->cell[i]] = b;
                                s->best[s->cell[j]] = a;
                                if (!kept_if_nearer(s, &better)) {
                                        s->best[s->cell[i]] = a;
                                        s->best[s->cell[j]] = b;
                                }
                        }
        }
}

/* The rank of each host distance (0-256, host_distance()) among those between the nodes of nodes[0..n)
 * and on one node, into host_rank[257]; returns how many there are. */
static unsigned host_ranks(const Topology *t, const unsigned *nodes, unsigned n, unsigned *host_rank)
{
        bool present[257] = {false};
        unsigned nranks = 0;

        present[0] = true;
        for (unsigned i = 0; i < n; i++)
                for (unsigned j = i + 1; j < n; j++)
                        present[host_distance(t, nodes[i], nodes[j])] = true;
        for (unsigned h = 0; h <= 256; h++)
                host_rank[h] = present[h] ? nranks++ : 0;
        return nranks;
}

/* Cells of one size (vCPUs, then memory) together, in the definition's order: those of one class
 * (interchangeable()) are then next to one another. */
static int compare_by_size(const void *pa, const void *pb)
{
        const CellOrder *a = pa, *b = pb;
        const PlanCell *x = &a->plan->cells[a->cell], *y = &b->plan->cells[b->cell];
        unsigned kx = cpuset_count(x->vcpus), ky = cpuset_count(y->vcpus);

        if (kx != ky)
                return kx < ky ? -1 : 1;
        if (x->memory != y->memory)
                return x->memory < y->memory ? -1 : 1;
        return a->cell < b->cell ? -1 : a->cell > b->cell;
}

/* Whether cells x and y may take each other's places: as many vCPUs, and as much memory unless the nodes'
 * free memory is checked for each mapping (by_memory false: memory_holds()). */
static bool interchangeable(const PlanCell *x, const PlanCell *y, bool by_memory)
{
        return cpuset_count(x->vcpus) == cpuset_count(y->vcpus) && (!by_memory || x->memory == y->memory);
}

/* Whether a vCPU of cell c of plan must run under the caches its <cachetune> reserves (vcpu_cache_cpus). */
static bool cell_cache_bound(const PlacementRequest *req, const Plan *plan, unsigned c)
{
        if (!req || !req->vcpu_cache_cpus)
                return false;
        CPUSET_FOREACH (vcpu, plan->cells[c].vcpus)
                if ((unsigned)vcpu < req->vcpus && req->vcpu_cache_cpus[vcpu])
                        return true;
        return false;
}

/* The node every vCPU of each cell of plan runs on by vcpu_node[] into cell_node[], -1 for a cell without
 * vCPUs or whose vCPUs are not all on one node. */
static void whole_cells(const Plan *plan, const int *vcpu_node, int *cell_node)
{
        for (unsigned c = 0; c < plan->ncells; c++) {
                cell_node[c] = -1;
                CPUSET_FOREACH (vcpu, plan->cells[c].vcpus) {
                        int node = (unsigned)vcpu < plan->nvcpus ? vcpu_node[vcpu] : -1;
                        if (node < 0 || (cell_node[c] >= 0 && node != cell_node[c])) {
                                cell_node[c] = -1;
                                break;
                        }
                        cell_node[c] = node;
                }
        }
}

/* Whether where the plan's memory goes is not known cell by cell: a cell with vCPUs split over nodes
 * (its memory follows them), or memory in no cell. Then only cells of one size trade places. */
static bool memory_unknown(const HostView *v, const Plan *plan, const int *cell_node)
{
        uint64_t in_cells = 0;

        if (cells_memory_bound(v) || v->memory_remote)
                return false; /* counted where it is bound, wherever the cells run */
        for (unsigned c = 0; c < plan->ncells; c++) {
                if (cell_node[c] < 0 && !cpuset_is_empty(plan->cells[c].vcpus) &&
                    cpuset_is_empty(plan->cells[c].memory_nodes))
                        return true;
                in_cells += plan->cells[c].memory;
        }
        return in_cells < plan->memory;
}

/*
 * For each node of nodes[0..n), what the interchangeable cells (cell[0..m)) may take of its memory: its
 * free memory less that of the cells on it that stay (whole, their memory not bound elsewhere), and never
 * less than those on it as packed take (the packing's mapping always holds).
 */
static uint64_t *movable_room(const HostView *v, const Plan *plan, const int *cell_node,
                              const unsigned *cell, unsigned m, const int *nodes, unsigned n, int kind)
{
        uint64_t *room = g_new(uint64_t, MAX(n, 1));
        const uint64_t *free = kind < 0 ? v->node_free_memory
                               : kind   ? v->node_free_ordinary
                                        : v->node_free_pages;

        for (unsigned k = 0; k < n; k++) {
                uint64_t staying = 0, packed = 0;
                for (unsigned c = 0; c < plan->ncells; c++) {
                        bool moves = false;
                        if (cell_node[c] != nodes[k] ||
                            (kind >= 0 && plan->cells[c].ordinary != (kind == 1)))
                                continue;
                        for (unsigned i = 0; i < m && !moves; i++)
                                moves = cell[i] == c;
                        if (moves)
                                packed += plan_cell_pool_bytes(plan, &plan->cells[c]);
                        else if (cpuset_is_empty(plan->cells[c].memory_nodes))
                                staying += plan_cell_pool_bytes(plan, &plan->cells[c]);
                }
                room[k] = free[nodes[k]] - MIN(staying, free[nodes[k]]);
                room[k] = MAX(room[k], packed);
        }
        return room;
}

void cells_follow_guest(const HostView *v, const Plan *plan, int *vcpu_node)
{
        GuestOrder order = guest_order(v->req, plan);
        g_autofree int *cell_node = NULL, *best = NULL, *work = NULL, *slot = NULL, *slot_nodes = NULL;
        g_autofree unsigned *cell = NULL, *class_of = NULL, *nodes = NULL;
        g_autofree CellOrder *movable = NULL;
        g_autofree CellPair *pairs = NULL;
        g_autofree uint64_t *count = NULL, *memory = NULL, *room = NULL, *room_ordinary = NULL;
        g_autofree bool *ordinary = NULL;
        g_autofree bool *used = NULL;
        unsigned host_rank[257], npairs, nranks, m = 0, placed = 0, nnodes = 0, nslot_nodes = 0;
        bool ordered, by_memory;
        OrderSearch s;

        if (order == GUEST_ORDER_NONE)
                return;
        cell_node = g_new(int, plan->ncells);
        whole_cells(plan, vcpu_node, cell_node);
        for (unsigned c = 0; c < plan->ncells; c++)
                placed += cell_node[c] >= 0;
        if (placed < 2 || placed > GUEST_ORDER_MAX_SWAP)
                return;
        npairs = guest_pairs(v->req, order, cell_node, plan->ncells, &pairs, &ordered);
        if (!ordered)
                return;
        /* the cells that may take one another's places: whole on a node, bound by no <memnode> (nor given
         * the nodes nearest such memory), none of whose vCPUs must run under the caches a <cachetune>
         * reserves for it (as binding as <vcpu cpuset>: the packing put them there), by size */
        movable = g_new(CellOrder, plan->ncells);
        for (unsigned c = 0; c < plan->ncells; c++)
                if (cell_node[c] >= 0 && cpuset_is_empty(plan->cells[c].memory_nodes) &&
                    !host_view_cell_home(v, plan->cells[c].id) && !cell_cache_bound(v->req, plan, c))
                        movable[m++] = (CellOrder){plan, c};
        if (m < 2)
                return;
        qsort(movable, m, sizeof(*movable), compare_by_size);
        by_memory = memory_unknown(v, plan, cell_node);
        cell = g_new(unsigned, m);
        class_of = g_new(unsigned, m);
        slot = g_new(int, m);
        memory = g_new(uint64_t, m);
        for (unsigned i = 0; i < m; i++) {
                cell[i] = movable[i].cell;
                slot[i] = cell_node[cell[i]];
                /* in the whole pages QEMU backs a hugepage-backed cell in, as the packing took them */
                memory[i] = plan_cell_pool_bytes(plan, &plan->cells[cell[i]]);
                class_of[i] =
                    i > 0 && interchangeable(&plan->cells[cell[i - 1]], &plan->cells[cell[i]], by_memory)
                        ? class_of[i - 1]
                        : i;
        }
        nodes = g_new(unsigned, plan->ncells);
        for (unsigned c = 0; c < plan->ncells; c++)
                if (cell_node[c] >= 0)
                        nodes[nnodes++] = (unsigned)cell_node[c];
        slot_nodes = g_new(int, m);
        for (unsigned i = 0; i < m; i++) {
                bool seen = false;
                for (unsigned k = 0; k < nslot_nodes && !seen; k++)
                        seen = slot_nodes[k] == slot[i];
                if (!seen)
                        slot_nodes[nslot_nodes++] = slot[i];
        }
        /* each kind of memory in its own room, when the cells have two */
        if (!by_memory && !cells_memory_bound(v) && !v->memory_remote && v->node_free_pages) {
                room = movable_room(v, plan, cell_node, cell, m, slot_nodes, nslot_nodes, 0);
                room_ordinary = movable_room(v, plan, cell_node, cell, m, slot_nodes, nslot_nodes, 1);
                ordinary = g_new(bool, m);
                for (unsigned i = 0; i < m; i++)
                        ordinary[i] = plan->cells[cell[i]].ordinary;
        } else if (!by_memory && !cells_memory_bound(v) && !v->memory_remote) {
                room = movable_room(v, plan, cell_node, cell, m, slot_nodes, nslot_nodes, -1);
        }
        nranks = host_ranks(v->t, nodes, nnodes, host_rank);
        count = g_new(uint64_t, nranks);
        best = g_memdup2(cell_node, sizeof(*cell_node) * plan->ncells);
        work = g_memdup2(cell_node, sizeof(*cell_node) * plan->ncells);
        used = g_new0(bool, m);
        s = (OrderSearch){.t = v->t,
                          .pairs = pairs,
                          .npairs = npairs,
                          .host_rank = host_rank,
                          .nranks = nranks,
                          .count = count,
                          .ncells = plan->ncells,
                          .m = m,
                          .cell = cell,
                          .class_of = class_of,
                          .slot = slot,
                          .nodes = slot_nodes,
                          .nnodes = nslot_nodes,
                          .memory = memory,
                          .room = room,
                          .room_ordinary = room_ordinary,
                          .ordinary = ordinary,
                          .used = used,
                          .cell_node = work,
                          .best = best};
        s.best_cost = guest_mismatch(v->t, pairs, npairs, cell_node, host_rank, nranks, count);
        if (m <= GUEST_ORDER_MAX_EXHAUSTIVE && placed <= 2 * GUEST_ORDER_MAX_EXHAUSTIVE) {
                /* only a better mapping replaces the one packed: it wins a tie */
                order_walk(&s, 0);
        } else {
                order_swaps(&s);
        }
        for (unsigned c = 0; c < plan->ncells; c++)
                if (cell_node[c] >= 0)
                        CPUSET_FOREACH (vcpu, plan->cells[c].vcpus)
                                if ((unsigned)vcpu < plan->nvcpus)
                                        vcpu_node[vcpu] = best[c];
}

/* The text of how cells a and b run: on one node, or how far apart. */
static void host_apart(GString *s, unsigned h)
{
        if (h)
                g_string_append_printf(s, "%u apart", h);
        else
                g_string_append(s, "on one node");
}

void cells_order_note(const Topology *t, const PlacementRequest *req, const Plan *plan, GString *s)
{
        GuestOrder order = guest_order(req, plan);
        g_autofree int *cell_node = NULL;
        g_autofree CellPair *pairs = NULL;
        const CellPair *near = NULL, *far = NULL;
        unsigned npairs, placed = 0, near_h = 0, far_h = 0;
        long gap = 0;
        bool ordered;

        if (order == GUEST_ORDER_NONE)
                return;
        cell_node = g_new(int, plan->ncells);
        for (unsigned c = 0; c < plan->ncells; c++) {
                cell_node[c] =
                    cpuset_count(plan->cells[c].nodes) == 1 && !cpuset_is_empty(plan->cells[c].vcpus)
                        ? cpuset_next(plan->cells[c].nodes, 0)
                        : -1;
                placed += cell_node[c] >= 0;
        }
        if (placed < 2 || placed > GUEST_ORDER_MAX_SWAP)
                return;
        npairs = guest_pairs(req, order, cell_node, plan->ncells, &pairs, &ordered);
        if (!ordered)
                return;
        /* of the pairs the guest holds nearer than others that run as far or farther, the one that runs
         * farthest beyond the other */
        for (unsigned p = 0; p < npairs; p++)
                for (unsigned q = p + 1; q < npairs; q++) {
                        unsigned hp = host_distance(t, (unsigned)cell_node[pairs[p].a],
                                                    (unsigned)cell_node[pairs[p].b]),
                                 hq = host_distance(t, (unsigned)cell_node[pairs[q].a],
                                                    (unsigned)cell_node[pairs[q].b]);
                        if (pairs[p].g == pairs[q].g || hp < hq || hp == 0)
                                continue;
                        if (!near || (long)hp - (long)hq > gap) {
                                near = &pairs[p];
                                far = &pairs[q];
                                near_h = hp;
                                far_h = hq;
                                gap = (long)hp - (long)hq;
                        }
                }
        if (!near) {
                g_string_append(
                    s, order == GUEST_ORDER_DISTANCES
                           ? " (the cells its <distances> hold nearer run on nearer nodes)"
                           : " (the cells of one guest socket (<topology>) run on nearer nodes than "
                             "cells of two)");
                return;
        }
        if (order == GUEST_ORDER_DISTANCES)
                g_string_append_printf(
                    s,
                    " (its <distances> do not all hold on these nodes as its cells were packed: "
                    "cells %u and %u (%u apart in the guest) run ",
                    plan->cells[near->a].id, plan->cells[near->b].id, near->g);
        else
                g_string_append_printf(
                    s,
                    " (its sockets (<topology>) do not all hold on these nodes as its cells were "
                    "packed: cells %u and %u (of one guest socket) run ",
                    plan->cells[near->a].id, plan->cells[near->b].id);
        host_apart(s, near_h);
        g_string_append_printf(s, ", %s cells %u and %u (", gap ? "farther than" : "as far as",
                               plan->cells[far->a].id, plan->cells[far->b].id);
        if (order == GUEST_ORDER_DISTANCES)
                g_string_append_printf(s, "%u apart in the guest", far->g);
        else
                g_string_append(s, "of two");
        if (gap) {
                g_string_append(s, ", ");
                host_apart(s, far_h);
                g_string_append(s, " here");
        }
        g_string_append(s, "))");
}

CellsApart cells_guest_apart(const HostView *v, const Plan *plan, const int *vcpu_node, uint32_t distance,
                             unsigned *a, unsigned *b, unsigned *g)
{
        GuestOrder order = guest_order(v->req, plan);
        g_autofree int *cell_node = g_new(int, MAX(plan->ncells, 1));
        g_autofree int *socket = g_new(int, MAX(plan->ncells, 1));
        CellsApart apart = CELLS_APART_NONE;

        whole_cells(plan, vcpu_node, cell_node);
        for (unsigned c = 0; c < plan->ncells; c++)
                socket[c] = order == GUEST_ORDER_SOCKETS ? cell_socket(v->req, c) : -1;
        for (unsigned x = 0; x < plan->ncells; x++)
                for (unsigned y = x + 1; y < plan->ncells; y++) {
                        unsigned d;

                        if (cell_node[x] < 0 || cell_node[y] < 0 ||
                            host_distance(v->t, (unsigned)cell_node[x], (unsigned)cell_node[y]) <= distance)
                                continue;
                        d = order == GUEST_ORDER_NONE ? 0 : guest_distance(v->req, order, socket, x, y);
                        if (order == GUEST_ORDER_SOCKETS ? d != 2 : d < CELLS_GUEST_REMOTE)
                                return CELLS_APART_NONE; /* farther than the guest holds them */
                        if (apart == CELLS_APART_NONE) {
                                *a = plan->cells[x].id;
                                *b = plan->cells[y].id;
                                *g = d;
                                apart = order == GUEST_ORDER_SOCKETS ? CELLS_APART_SOCKETS
                                                                     : CELLS_APART_DISTANCES;
                        }
                }
        return apart;
}
