/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guest NUMA cells on host nodes, and the split of a domain's vCPUs over its set (see cells.h). */
#include "cells.h"

#include <stdlib.h>
#include <string.h>

#include "size.h"

void cells_init_plan(const PlacementRequest *req, Plan *plan)
{
        plan_set_cells(plan, req->ncells);
        for (unsigned i = 0; i < req->ncells; i++) {
                plan->cells[i].id = req->cells[i].id;
                plan->cells[i].device = req->cells[i].device;
                plan->cells[i].device_target = req->cells[i].device_target;
                plan->cells[i].device_nodemask = req->cells[i].device_nodemask;
                plan->cells[i].memory = req->cells[i].memory;
                if (req->cells[i].memory_nodes)
                        cpuset_union(plan->cells[i].memory_nodes, req->cells[i].memory_nodes);
                CPUSET_FOREACH (id, req->cells[i].vcpus) {
                        int vcpu = vcpu_id_index(req->vcpu_ids, plan->nvcpus, (unsigned)id);
                        if (vcpu >= 0)
                                cpuset_add(plan->cells[i].vcpus, (unsigned)vcpu);
                }
        }
}

bool cells_memory_bound(const HostView *v)
{
        return v->req && v->req->memory_source != MEMORY_SOURCE_NONE && v->req->memory_nodes;
}

/* Whether a node the cell's <memnode> binds its memory to has a core its vCPUs may use: not a memory-only
 * node, not one the request's <vcpu cpuset> leaves out or whose CPUs the configuration keeps. */
static bool cell_memory_has_cores(const HostView *v, const PlanCell *c)
{
        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (v->node_usable_cores[n] > 0 && cpuset_has(c->memory_nodes, v->t->nodes[n].os_index))
                        return true;
        return false;
}

/* Whether the cell may go to node n: any node, or one its <memnode> binds its memory to when one of those
 * has cores it may use, else one of the nodes nearest that memory with free cores for it (its memory
 * remote, HostView.cell_homes; any node when none has them). */
static bool cell_may_use(const HostView *v, const PlanCell *c, unsigned n)
{
        const CpuSet *home = host_view_cell_home(v, c->id);

        if (home)
                return cpuset_has(home, n);
        return cpuset_is_empty(c->memory_nodes) || cpuset_has(c->memory_nodes, v->t->nodes[n].os_index) ||
               !cell_memory_has_cores(v, c);
}

/*
 * The room for the cell's memory of the node whose free memory is mem (pages and ordinary memory together
 * when the request has both) and free pages pages (NULL: its memory of one kind): a hugepage-backed cell
 * takes only pages, a cell of ordinary memory (PlanCell.ordinary) only the rest. What the cell needs of it
 * is plan_cell_pool_bytes(): QEMU backs each cell apart, in whole pages.
 */
static uint64_t cell_room(const PlanCell *c, uint64_t mem, const uint64_t *pages)
{
        uint64_t in_pages;

        if (!pages)
                return mem;
        in_pages = MIN(*pages, mem);
        return c->ordinary ? mem - in_pages : in_pages;
}

/* Takes the cell's memory of plan from that room (mem and pages as for cell_room()), in the whole pages
 * QEMU backs it in: two 33 MiB cells of 2 MiB pages take 34 pages of a node, not 33. */
static void cell_take(const Plan *plan, const PlanCell *c, uint64_t *mem, uint64_t *pages)
{
        uint64_t need = plan_cell_pool_bytes(plan, c);

        *mem -= MIN(*mem, need);
        if (pages && !c->ordinary)
                *pages -= MIN(*pages, need);
}

/* Whether some node of the host could hold the cell of plan whole: its vCPUs and its memory. */
static bool cell_fits_a_node(const HostView *v, const Plan *plan, const PlanCell *c, bool count_memory)
{
        unsigned k = cpuset_count(c->vcpus);

        /* a cell its <memnode> binds has its memory where it is bound, room or not */
        count_memory = count_memory && cpuset_is_empty(c->memory_nodes);
        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (cell_may_use(v, c, n) && v->node_size[n] >= k &&
                    (!count_memory || cell_room(c, v->node_free_memory[n],
                                                v->node_free_pages ? &v->node_free_pages[n] : NULL) >=
                                          plan_cell_pool_bytes(plan, c)))
                        return true;
        return false;
}

typedef struct {
        const Plan *plan;
        unsigned cell;
        unsigned rank; /* cells of a lower rank first (cell_rank()), then by size */
} CellOrder;

static int compare_cells(const void *pa, const void *pb)
{
        const CellOrder *a = pa, *b = pb;
        const PlanCell *x = &a->plan->cells[a->cell], *y = &b->plan->cells[b->cell];
        unsigned kx = cpuset_count(x->vcpus), ky = cpuset_count(y->vcpus);

        if (a->rank != b->rank)
                return a->rank < b->rank ? -1 : 1;
        if (kx != ky)
                return kx > ky ? -1 : 1;
        if (x->memory != y->memory)
                return x->memory > y->memory ? -1 : 1;
        return a->cell < b->cell ? -1 : a->cell > b->cell;
}

/* When a cell takes its room: first those its <memnode> binds to nodes with cores it may use (nowhere else
 * to go), then those given the nodes nearest their memory instead (HostView.cell_homes; one of those may be
 * another cell's node, whose room cells_set_homes() left to it), then the rest. */
static unsigned cell_rank(const HostView *v, const PlanCell *c)
{
        if (cpuset_is_empty(c->memory_nodes))
                return 2;
        if (cell_memory_has_cores(v, c))
                return 0;
        return host_view_cell_home(v, c->id) ? 1 : 2;
}

/* The cells of plan with vCPUs into order[] (returns how many), in the order they take room
 * (compare_cells()), of their rank (cell_rank()) when v is not NULL. The others (a memory device's, a cell
 * of memory only) have no vCPU to place: they take no room, and a guest may have hundreds of them, whose
 * order every set the search weighs would otherwise pay for. */
static unsigned cells_order(const HostView *v, const Plan *plan, CellOrder *order)
{
        unsigned k = 0;

        for (unsigned c = 0; c < plan->ncells; c++)
                if (!cpuset_is_empty(plan->cells[c].vcpus))
                        order[k++] = (CellOrder){plan, c, v ? cell_rank(v, &plan->cells[c]) : 0};
        qsort(order, k, sizeof(*order), compare_cells);
        return k;
}

/* The distance from node n to the memory of a cell bound to nodes (OS indexes): summed over them, as the
 * kernel spreads it over them, so that it orders as their mean does; UINT32_MAX when none is reachable. */
static uint32_t cell_memory_distance(const Topology *t, const CpuSet *nodes, unsigned n)
{
        uint32_t sum = 0;
        bool reachable = false;

        CPUSET_FOREACH (os, nodes) {
                int m = topology_node_by_os(t, (unsigned)os);
                uint32_t d;
                if (m < 0)
                        continue;
                d = topology_distance(t, (unsigned)m, n);
                reachable = reachable || d < TOPOLOGY_UNREACHABLE;
                sum += MIN(d, 255u);
        }
        return reachable ? sum : UINT32_MAX;
}

/*
 * The cells of plan with vCPUs a <memnode> binds, into order[] (returns how many), in the order
 * cells_set_homes() gives them room (cell_rank()): those bound to nodes with cores first (by id), then those
 * it gives the nodes nearest their memory (biggest first), then the rest (by id). A cell given such nodes
 * may have another cell's own node among them; taking that node's room first would leave the other cell
 * none. One without vCPUs takes no room (cells_order()).
 */
static unsigned bound_cells_order(const HostView *v, const Plan *plan, CellOrder *order)
{
        g_autofree CellOrder *bound = g_new(CellOrder, MAX(plan->ncells, 1));
        unsigned k = 0, nbound = 0;

        for (unsigned c = 0; c < plan->ncells; c++)
                if (!cpuset_is_empty(plan->cells[c].vcpus) && !cpuset_is_empty(plan->cells[c].memory_nodes))
                        bound[nbound++] = (CellOrder){plan, c, cell_rank(v, &plan->cells[c])};
        for (unsigned rank = 0; rank <= 2; rank++) {
                unsigned first = k;
                for (unsigned b = 0; b < nbound; b++)
                        if (bound[b].rank == rank)
                                order[k++] = bound[b];
                if (rank == 1)
                        qsort(order + first, k - first, sizeof(*order), compare_cells);
        }
        return k;
}

struct CellsPacking {
        unsigned ncells;    /* the plan's cells with vCPUs */
        CellOrder *by_rank; /* [ncells] in the order they take room, of their rank (cells_order()) */
        CellOrder *by_size; /* [ncells] the same, rank aside (cells_order() without a view) */
        unsigned *cells;    /* [ncells] by_size's cells */
        unsigned nbound;    /* those a <memnode> binds */
        CellOrder *bound;   /* [nbound] bound_cells_order() */
};

CellsPacking *cells_packing_new(const HostView *v, const Plan *plan)
{
        CellsPacking *p = g_new0(CellsPacking, 1);

        p->by_rank = g_new(CellOrder, MAX(plan->ncells, 1));
        p->by_size = g_new(CellOrder, MAX(plan->ncells, 1));
        p->cells = g_new(unsigned, MAX(plan->ncells, 1));
        p->bound = g_new(CellOrder, MAX(plan->ncells, 1));
        p->ncells = cells_order(v, plan, p->by_rank);
        cells_order(NULL, plan, p->by_size);
        for (unsigned o = 0; o < p->ncells; o++)
                p->cells[o] = p->by_size[o].cell;
        p->nbound = bound_cells_order(v, plan, p->bound);
        return p;
}

void cells_packing_free(CellsPacking *p)
{
        if (!p)
                return;
        g_free(p->by_rank);
        g_free(p->by_size);
        g_free(p->cells);
        g_free(p->bound);
        g_free(p);
}

const unsigned *cells_packing_cells(const CellsPacking *p, unsigned *n)
{
        *n = p->ncells;
        return p->cells;
}

/* packing, or (NULL) one worked out into *own. */
static const CellsPacking *packing_of(const HostView *v, const Plan *plan, const CellsPacking *packing,
                                      CellsPacking **own)
{
        if (packing)
                return packing;
        *own = cells_packing_new(v, plan);
        return *own;
}

/* A cell its <memnode> binds (of rank max_rank at most, cell_rank()) that no node of its own had room for
 * whole: its vCPUs still go to its nodes as far as their room goes, never beyond it, filling the node
 * nearest its memory first (then the one with the most room), so that it spans as few nodes as it can and
 * leaves the others' room whole for the cells after it; what is left goes with the other vCPUs. */
static void keep_bound_cells(const HostView *v, const unsigned *nodes, unsigned n, unsigned *room,
                             const Plan *plan, const CellsPacking *p, int *vcpu_node, unsigned max_rank)
{
        g_autofree uint32_t *distance = g_new(uint32_t, MAX(n, 1));
        const CellOrder *order = p->bound;
        unsigned nbound = p->nbound;

        for (unsigned o = 0; o < nbound && order[o].rank <= max_rank; o++) {
                const PlanCell *cell = &plan->cells[order[o].cell];
                int best = -1;

                for (unsigned i = 0; i < n; i++)
                        distance[i] = cell_memory_distance(v->t, cell->memory_nodes, nodes[i]);
                CPUSET_FOREACH (vcpu, cell->vcpus) {
                        if (vcpu_node[vcpu] >= 0)
                                continue;
                        if (best < 0 || room[best] == 0) {
                                best = -1;
                                for (unsigned i = 0; i < n; i++)
                                        if (cell_may_use(v, cell, nodes[i]) && room[i] > 0 &&
                                            (best < 0 || distance[i] < distance[best] ||
                                             (distance[i] == distance[best] && room[i] > room[best])))
                                                best = (int)i;
                        }
                        if (best < 0)
                                break;
                        room[best]--;
                        vcpu_node[vcpu] = (int)nodes[best];
                }
        }
}

/* One packing pass: worst fit (most room left) or best fit (least room that holds it). */
static bool pack_pass(const HostView *v, const unsigned *nodes, unsigned n, unsigned *room,
                      uint64_t *mem_room, uint64_t *page_room, const Plan *plan, const CellsPacking *p,
                      bool worst, int *vcpu_node)
{
        const CellOrder *order = p->by_rank;
        unsigned ncells = p->ncells;
        bool whole = true, kept = false;

        for (unsigned i = 0; i < plan->nvcpus; i++)
                vcpu_node[i] = -1;
        for (unsigned o = 0; o < ncells; o++) {
                const PlanCell *c = &plan->cells[order[o].cell];
                unsigned k = cpuset_count(c->vcpus);
                /* a cell its <memnode> binds has its memory where it is bound, room or not */
                bool count_memory = mem_room && cpuset_is_empty(c->memory_nodes);
                int best = -1;

                /* the cells bound to their nodes that none holds whole take those nodes' room before the
                 * others may */
                if (!kept && order[o].rank > 1) {
                        keep_bound_cells(v, nodes, n, room, plan, p, vcpu_node, 1);
                        kept = true;
                }
                if (k == 0)
                        continue;
                for (unsigned i = 0; i < n; i++) {
                        if (!cell_may_use(v, c, nodes[i]) || room[i] < k ||
                            (count_memory && cell_room(c, mem_room[i], page_room ? &page_room[i] : NULL) <
                                                 plan_cell_pool_bytes(plan, c)))
                                continue;
                        if (best < 0 || (worst ? room[i] > room[best] : room[i] < room[best]))
                                best = (int)i;
                }
                if (best < 0) {
                        whole = whole && !cell_fits_a_node(v, plan, c, mem_room != NULL);
                        continue;
                }
                room[best] -= k;
                if (count_memory)
                        cell_take(plan, c, &mem_room[best], page_room ? &page_room[best] : NULL);
                CPUSET_FOREACH (vcpu, c->vcpus)
                        vcpu_node[vcpu] = (int)nodes[best];
        }
        if (!kept)
                keep_bound_cells(v, nodes, n, room, plan, p, vcpu_node, 1);
        return whole;
}

/* cells_pack() with the free pages of the nodes (page_room, NULL when the request's memory is of one kind)
 * taken as mem_room is: each cell fits a node by its own kind's room, never the other's. */
static bool pack_kinds(const HostView *v, const unsigned *nodes, unsigned n, unsigned *room,
                       uint64_t *mem_room, uint64_t *page_room, const Plan *plan, const CellsPacking *p,
                       int *vcpu_node)
{
        g_autofree unsigned *room1 = g_memdup2(room, sizeof(*room) * MAX(n, 1));
        g_autofree unsigned *room2 = g_memdup2(room, sizeof(*room) * MAX(n, 1));
        g_autofree uint64_t *mem1 = mem_room ? g_memdup2(mem_room, sizeof(*mem_room) * MAX(n, 1)) : NULL;
        g_autofree uint64_t *mem2 = mem_room ? g_memdup2(mem_room, sizeof(*mem_room) * MAX(n, 1)) : NULL;
        g_autofree uint64_t *pages1 =
            mem_room && page_room ? g_memdup2(page_room, sizeof(*page_room) * MAX(n, 1)) : NULL;
        g_autofree uint64_t *pages2 =
            mem_room && page_room ? g_memdup2(page_room, sizeof(*page_room) * MAX(n, 1)) : NULL;
        g_autofree int *best_fit = g_new(int, MAX(plan->nvcpus, 1));
        bool whole;

        /* worst fit spreads the load; best fit packs tighter when worst fit leaves a cell out */
        whole = pack_pass(v, nodes, n, room1, mem1, pages1, plan, p, true, vcpu_node);
        if (!whole && pack_pass(v, nodes, n, room2, mem2, pages2, plan, p, false, best_fit)) {
                memcpy(vcpu_node, best_fit, sizeof(*vcpu_node) * plan->nvcpus);
                memcpy(room, room2, sizeof(*room) * n);
                if (mem_room)
                        memcpy(mem_room, mem2, sizeof(*mem_room) * n);
                if (pages2)
                        memcpy(page_room, pages2, sizeof(*page_room) * n);
                return true;
        }
        memcpy(room, room1, sizeof(*room) * n);
        if (mem_room)
                memcpy(mem_room, mem1, sizeof(*mem_room) * n);
        if (pages1)
                memcpy(page_room, pages1, sizeof(*page_room) * n);
        return whole;
}

/* The free pages of the nodes (indexes) when some cells are hugepage-backed and some not, else NULL. */
static uint64_t *nodes_free_pages(const HostView *v, const unsigned *nodes, unsigned n)
{
        uint64_t *pages;

        if (!v->node_free_pages)
                return NULL;
        pages = g_new(uint64_t, MAX(n, 1));
        for (unsigned i = 0; i < n; i++)
                pages[i] = v->node_free_pages[nodes[i]];
        return pages;
}

bool cells_pack(const HostView *v, const unsigned *nodes, unsigned n, unsigned *room, uint64_t *mem_room,
                const Plan *plan, const CellsPacking *packing, int *vcpu_node)
{
        g_autofree uint64_t *page_room = mem_room ? nodes_free_pages(v, nodes, n) : NULL;
        g_autoptr(CellsPacking) own = NULL;

        return pack_kinds(v, nodes, n, room, mem_room, page_room, plan, packing_of(v, plan, packing, &own),
                          vcpu_node);
}

/* How many of a cell's k vCPUs node i of cells_pack_shared() gives a free core of their own. */
static unsigned own_cores(unsigned k, long free_left)
{
        return free_left > 0 ? MIN(k, (unsigned)free_left) : 0;
}

static void order_from(const Topology *t, const unsigned *nodes, unsigned n, unsigned from, unsigned *order);

/* The nodes a split cell takes (indexes into the set's nodes), nearest first, and how far apart they are. */
typedef struct NearNodes {
        int from;       /* the node of the set they are nearest to; -1: none found yet */
        uint32_t reach; /* the farthest apart two of them */
        unsigned len;
        unsigned *near; /* [n] */
} NearNodes;

/* reach with node nodes[i] added to the nodes nodes[near[0..len)]. */
static uint32_t reach_with(const Topology *t, const unsigned *nodes, const unsigned *near, unsigned len,
                           unsigned i, uint32_t reach)
{
        for (unsigned q = 0; q < len; q++)
                reach = MAX(reach, topology_distance(t, nodes[near[q]], nodes[i]));
        return reach;
}

/* Keeps near[0..len), nearest node from, when they are nearer one another than best's (more_room: from
 * has more room than best's, which breaks a tie). */
static void near_offer(NearNodes *best, unsigned from, uint32_t reach, bool more_room, const unsigned *near,
                       unsigned len)
{
        if (best->from >= 0 && (reach > best->reach || (reach == best->reach && !more_room)))
                return;
        best->from = (int)from;
        best->reach = reach;
        best->len = len;
        memcpy(best->near, near, sizeof(*near) * len);
}

/* The vCPUs of c handed out in order, quota[q] of them to nodes[best->near[q]] (counted off room[] when
 * not NULL). */
static void hand_out(const PlanCell *c, const unsigned *nodes, const NearNodes *best, unsigned *quota,
                     unsigned *room, int *vcpu_node)
{
        unsigned j = 0;

        CPUSET_FOREACH (vcpu, c->vcpus) {
                while (j < best->len && quota[j] == 0)
                        j++;
                if (j == best->len)
                        break;
                vcpu_node[vcpu] = (int)nodes[best->near[j]];
                if (room)
                        room[best->near[j]]--;
                quota[j]--;
        }
}

/* How many of cell c's vCPUs the set's free cores left can give a core of their own, split over its nodes.
 */
static unsigned split_target(const HostView *v, const unsigned *nodes, unsigned n, const PlanCell *c,
                             const uint64_t *left, const long *free_left)
{
        unsigned k = cpuset_count(c->vcpus), target = 0;

        for (unsigned i = 0; i < n; i++)
                if (cell_may_use(v, c, nodes[i]) && left[i])
                        target += own_cores(k, free_left[i]);
        return MIN(target, k);
}

/*
 * A cell no node of cells_pack_shared() has the room for, when every vCPU of the domain is in a cell (so
 * that none walks the set one by one onto the free cores this one is given): as many of its vCPUs as the
 * set's free cores left hold take free cores, the others share, on the nodes nearest one node of the set
 * that together have that (the node whose farthest such node is nearest winning, then the one with most
 * free cores), the nearest nodes first. Walking, one cell of two ran on every node of the set, across the
 * packages, while one package held it, for no fewer vCPUs sharing. Returns whether it went somewhere;
 * *ret_own: how many of its vCPUs got a free core.
 */
static bool split_shared(const HostView *v, const unsigned *nodes, unsigned n, const PlanCell *c,
                         uint64_t *left, long *free_left, int *vcpu_node, unsigned *ret_own)
{
        g_autofree unsigned *near = g_new(unsigned, MAX(n, 1));
        g_autofree unsigned *best_near = g_new(unsigned, MAX(n, 1));
        g_autofree unsigned *quota = g_new0(unsigned, MAX(n, 1));
        unsigned k = cpuset_count(c->vcpus), target = split_target(v, nodes, n, c, left, free_left), rest;
        NearNodes best = {.from = -1, .near = best_near};

        for (unsigned s = 0; s < n; s++) {
                unsigned len = 0, own = 0;
                uint64_t room = 0;
                uint32_t reach = TOPOLOGY_LOCAL;
                if (!cell_may_use(v, c, nodes[s]) || !left[s])
                        continue;
                order_from(v->t, nodes, n, s, near);
                for (unsigned m = 0; m < n && (own < target || room < k); m++) {
                        unsigned i = near[m];
                        if (!cell_may_use(v, c, nodes[i]) || !left[i] ||
                            (room >= k && own_cores(k, free_left[i]) == 0))
                                continue;
                        reach = reach_with(v->t, nodes, near, len, i, reach);
                        near[len++] = i;
                        own += own_cores(k, free_left[i]);
                        room += left[i];
                }
                if (own >= target && room >= k)
                        near_offer(&best, s, reach, best.from >= 0 && free_left[s] > free_left[best.from],
                                   near, len);
        }
        if (best.from < 0)
                return false;
        rest = target;
        for (unsigned q = 0; q < best.len && rest; q++) {
                unsigned i = best_near[q];
                quota[q] = (unsigned)MIN(MIN((uint64_t)own_cores(rest, free_left[i]), left[i]), rest);
                rest -= quota[q];
        }
        *ret_own = target - rest;
        rest = k - (target - rest);
        for (unsigned q = 0; q < best.len && rest; q++) {
                unsigned more = (unsigned)MIN(left[best_near[q]] - quota[q], rest);
                quota[q] += more;
                rest -= more;
        }
        for (unsigned q = 0; q < best.len; q++) {
                left[best_near[q]] -= quota[q];
                free_left[best_near[q]] -= (long)quota[q];
        }
        hand_out(c, nodes, &best, quota, NULL, vcpu_node);
        return true;
}

/*
 * One pass of cells_pack_shared() over the cells in order[]: each whole on the node that gives most of its
 * vCPUs a free core; split_short: also split one whose best node gives fewer of them a free core than the
 * set's free cores left could, split. Returns how many of the domain's vCPUs got a free core.
 */
static unsigned pack_shared_pass(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
                                 const CellOrder *order, unsigned ncells, uint64_t per_core,
                                 bool all_in_cells, bool split_short, int *vcpu_node)
{
        g_autofree uint64_t *left = g_new(uint64_t, MAX(n, 1));
        g_autofree long *free_left = g_new(long, MAX(n, 1));
        unsigned own_all = 0;

        for (unsigned i = 0; i < n; i++) {
                left[i] = v->node_size[nodes[i]] * per_core;
                free_left[i] = (long)v->node_capacity[nodes[i]];
        }
        for (unsigned i = 0; i < plan->nvcpus; i++)
                vcpu_node[i] = -1;
        for (unsigned o = 0; o < ncells; o++) {
                const PlanCell *c = &plan->cells[order[o].cell];
                unsigned k = cpuset_count(c->vcpus), own;
                bool may_split = k && cpuset_is_empty(c->memory_nodes) && all_in_cells;
                int best = -1;

                /* the node that gives most of its vCPUs a free core of their own (other domains fill
                 * the set's nodes unevenly), then the one with most free cores left, then most room */
                for (unsigned i = 0; i < n && k; i++) {
                        unsigned best_own;
                        if (!cell_may_use(v, c, nodes[i]) || left[i] < k)
                                continue;
                        if (best < 0) {
                                best = (int)i;
                                continue;
                        }
                        own = own_cores(k, free_left[i]);
                        best_own = own_cores(k, free_left[best]);
                        if (own > best_own ||
                            (own == best_own && (free_left[i] > free_left[best] ||
                                                 (free_left[i] == free_left[best] && left[i] > left[best]))))
                                best = (int)i;
                }
                /* a cell bound by its <memnode> stays on its nodes, shared more there */
                for (unsigned i = 0; i < n && k && best < 0 && !cpuset_is_empty(c->memory_nodes); i++)
                        if (cell_may_use(v, c, nodes[i]))
                                best = (int)i;
                /* one too big for every node goes to the nearest nodes that hold it together; so does one
                 * whose node would leave free cores of the set idle while its vCPUs share */
                if (may_split &&
                    (best < 0 || (split_short && own_cores(k, free_left[best]) <
                                                     split_target(v, nodes, n, c, left, free_left))) &&
                    split_shared(v, nodes, n, c, left, free_left, vcpu_node, &own)) {
                        own_all += own;
                        continue;
                }
                if (best < 0)
                        continue;
                own_all += own_cores(k, free_left[best]);
                left[best] -= MIN(left[best], k);
                free_left[best] -= (long)k;
                CPUSET_FOREACH (vcpu, c->vcpus)
                        vcpu_node[vcpu] = (int)nodes[best];
        }
        return own_all;
}

void cells_pack_shared(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
                       const CellsPacking *packing, int *vcpu_node)
{
        g_autoptr(CellsPacking) mine = NULL;
        const CellsPacking *p = packing_of(v, plan, packing, &mine);
        const CellOrder *order = p->by_size;
        g_autofree int *split = g_new(int, MAX(plan->nvcpus, 1));
        uint64_t size = 0, per_core;
        unsigned in_cells = 0, own, ncells = p->ncells;
        bool all_in_cells;

        /* the domain shares anyway: a cell may share a node's cores as much as the domain must share the
         * set's */
        for (unsigned i = 0; i < n; i++)
                size += v->node_size[nodes[i]];
        per_core = size ? MAX((plan->nvcpus + size - 1) / size, 1) : 1;
        for (unsigned o = 0; o < ncells; o++)
                in_cells += cpuset_count(plan->cells[order[o].cell].vcpus);
        all_in_cells = in_cells == plan->nvcpus;
        own = pack_shared_pass(v, nodes, n, plan, order, ncells, per_core, all_in_cells, false, vcpu_node);
        /* cells whole, unless splitting the ones whose node leaves free cores idle gives more vCPUs a free
         * core in all: a cell kept whole on a full node had all its vCPUs share while another node's free
         * cores, too few for it, stood idle */
        if (all_in_cells &&
            pack_shared_pass(v, nodes, n, plan, order, ncells, per_core, all_in_cells, true, split) > own)
                memcpy(vcpu_node, split, sizeof(*vcpu_node) * plan->nvcpus);
}

bool cells_fit(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
               const CellsPacking *packing)
{
        g_autofree unsigned *room = g_new(unsigned, MAX(n, 1));
        g_autofree uint64_t *mem_room = g_new(uint64_t, MAX(n, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));

        for (unsigned i = 0; i < n; i++) {
                room[i] = v->node_capacity[nodes[i]];
                mem_room[i] = v->node_free_memory[nodes[i]];
        }
        return cells_pack(v, nodes, n, room, cells_memory_bound(v) ? NULL : mem_room, plan, packing,
                          vcpu_node);
}

/* Whether the cell's <memnode> binds it to a node of this host with cores it may use, or gives it the
 * nodes nearest its memory (HostView.cell_homes): its vCPUs belong there. */
static bool cell_bound_to_cpus(const HostView *v, const PlanCell *c)
{
        return !cpuset_is_empty(c->memory_nodes) && !cpuset_is_empty(c->vcpus) &&
               (cell_memory_has_cores(v, c) || host_view_cell_home(v, c->id));
}

/* Whether the cell has vCPUs and a <memnode> none of whose nodes has a core they may use: it gets the nodes
 * nearest its memory (cells_set_homes()). */
static bool cell_needs_home(const HostView *v, const PlanCell *c)
{
        return !cpuset_is_empty(c->vcpus) && !cpuset_is_empty(c->memory_nodes) &&
               !cell_memory_has_cores(v, c);
}

/* The distance from each node with a core the cell may use to its memory into distance[] (cell_memory_
 * distance()), UINT32_MAX for the others. */
static void cell_distances(const HostView *v, const PlanCell *c, uint32_t *distance)
{
        for (unsigned n = 0; n < v->t->nnodes; n++)
                distance[n] = v->node_usable_cores[n] > 0 ? cell_memory_distance(v->t, c->memory_nodes, n)
                                                          : UINT32_MAX;
}

/*
 * For the nodes of near with room that lie at distance level from the memory of the cell order[o] (by
 * distance[]), how many of the cells after it that get nodes near their memory too have that node nearer
 * their own memory than another of those nodes, into need[]: the cell takes the room of the nodes fewest
 * of them need first, so that, as near as it is either way, it leaves them their nearer room.
 */
static void later_needs(const HostView *v, const Plan *plan, const CellOrder *order, unsigned o,
                        const CpuSet *near, const unsigned *room, const uint32_t *distance, uint32_t level,
                        uint32_t *other, unsigned *need)
{
        const Topology *t = v->t;

        memset(need, 0, sizeof(*need) * MAX(t->nnodes, 1));
        for (unsigned p = o + 1; p < plan->ncells; p++) {
                const PlanCell *later = &plan->cells[order[p].cell];
                uint32_t farthest = 0;

                if (!cell_needs_home(v, later))
                        continue;
                cell_distances(v, later, other);
                CPUSET_FOREACH (n, near)
                        if (distance[n] == level && room[n] > 0)
                                farthest = MAX(farthest, other[n]);
                CPUSET_FOREACH (n, near)
                        if (distance[n] == level && room[n] > 0 && other[n] < farthest)
                                need[n]++;
        }
}

void cells_set_homes(HostView *v, const Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *room = g_new0(unsigned, MAX(t->nnodes, 1));
        g_autofree uint32_t *distance = g_new(uint32_t, MAX(t->nnodes, 1));
        g_autofree uint32_t *other = g_new(uint32_t, MAX(t->nnodes, 1));
        g_autofree unsigned *need = g_new0(unsigned, MAX(t->nnodes, 1));
        g_autofree CellOrder *order = g_new(CellOrder, MAX(plan->ncells, 1));
        g_autofree uint32_t *reach_of = g_new(uint32_t, MAX(plan->ncells, 1));
        unsigned first = v->ncell_homes;

        for (unsigned n = 0; n < t->nnodes; n++)
                room[n] = v->node_allowed[n] ? v->node_capacity[n] : 0;
        /* the cells bound to nodes with cores take their room first (the one with most room first) */
        for (unsigned c = 0; c < plan->ncells; c++) {
                const PlanCell *cell = &plan->cells[c];
                if (cpuset_is_empty(cell->memory_nodes) || !cell_memory_has_cores(v, cell))
                        continue;
                CPUSET_FOREACH (vcpu, cell->vcpus) {
                        int best = -1;
                        (void)vcpu;
                        for (unsigned n = 0; n < t->nnodes; n++)
                                if (cpuset_has(cell->memory_nodes, t->nodes[n].os_index) && room[n] > 0 &&
                                    (best < 0 || room[n] > room[best]))
                                        best = (int)n;
                        if (best < 0)
                                break;
                        room[best]--;
                }
        }
        for (unsigned i = 0; i < plan->ncells; i++)
                order[i] = (CellOrder){plan, i};
        qsort(order, plan->ncells, sizeof(*order), compare_cells);
        /* then the others, biggest first: the nearest nodes to their memory whose room holds them */
        for (unsigned o = 0; o < plan->ncells; o++) {
                const PlanCell *cell = &plan->cells[order[o].cell];
                unsigned k = cpuset_count(cell->vcpus), sum = 0;
                uint32_t reach = UINT32_MAX;
                g_autoptr(CpuSet) near = NULL;
                CpuSet *home;

                if (!cell_needs_home(v, cell))
                        continue;
                cell_distances(v, cell, distance);
                /* the nearest distance within which the nodes have room for all of its vCPUs */
                while (sum < k) {
                        uint32_t next = UINT32_MAX;
                        for (unsigned n = 0; n < t->nnodes; n++)
                                if (distance[n] < next && (reach == UINT32_MAX || distance[n] > reach))
                                        next = distance[n];
                        if (next == UINT32_MAX)
                                break;
                        reach = next;
                        for (unsigned n = 0; n < t->nnodes; n++)
                                sum += distance[n] == reach ? room[n] : 0;
                }
                if (sum < k)
                        continue; /* no room anywhere: any node, shared where it must */
                near = cpuset_new();
                for (unsigned n = 0; n < t->nnodes; n++)
                        if (distance[n] <= reach && room[n] > 0)
                                cpuset_add(near, n);
                /* its vCPUs take that room, the nearest nodes first; of nodes as near, those the cells
                 * still to come need least first */
                home = cpuset_new();
                for (uint32_t d = 0; k > 0;) {
                        uint32_t next = UINT32_MAX;
                        CPUSET_FOREACH (n, near)
                                if (distance[n] >= d && distance[n] < next)
                                        next = distance[n];
                        if (next == UINT32_MAX)
                                break;
                        later_needs(v, plan, order, o, near, room, distance, next, other, need);
                        for (unsigned fewest = 0; k > 0 && fewest < plan->ncells; fewest++)
                                CPUSET_FOREACH (n, near)
                                        if (distance[n] == next && need[n] == fewest && room[n] > 0 &&
                                            k > 0) {
                                                unsigned take = MIN(room[n], k);
                                                room[n] -= take;
                                                k -= take;
                                                cpuset_add(home, n);
                                        }
                        d = next + 1;
                }
                reach_of[v->ncell_homes - first] = reach;
                v->cell_home_ids = g_renew(unsigned, v->cell_home_ids, v->ncell_homes + 1);
                v->cell_homes = g_renew(CpuSet *, v->cell_homes, v->ncell_homes + 1);
                v->cell_home_ids[v->ncell_homes] = cell->id;
                v->cell_homes[v->ncell_homes++] = home;
        }
        /* each may also use the nodes as near whose room no cell took (where the set search and the packing
         * may prefer it), not a node whose room another took */
        for (unsigned h = first; h < v->ncell_homes; h++) {
                for (unsigned c = 0; c < plan->ncells; c++)
                        if (plan->cells[c].id == v->cell_home_ids[h])
                                cell_distances(v, &plan->cells[c], distance);
                for (unsigned n = 0; n < t->nnodes; n++)
                        if (distance[n] <= reach_of[h - first] && room[n] > 0)
                                cpuset_add(v->cell_homes[h], n);
        }
}

bool cells_bound_fit(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
                     const CellsPacking *packing, bool room)
{
        g_autoptr(CellsPacking) own = NULL;
        const CellsPacking *p = packing_of(v, plan, packing, &own);
        const CellOrder *order = p->bound;
        g_autofree unsigned *left = NULL;
        unsigned nbound = p->nbound;

        if (room) {
                left = g_new(unsigned, MAX(n, 1));
                for (unsigned i = 0; i < n; i++)
                        left[i] = v->node_capacity[nodes[i]];
        }
        for (unsigned o = 0; o < nbound; o++) {
                const PlanCell *cell = &plan->cells[order[o].cell];
                unsigned want = cpuset_count(cell->vcpus);
                bool reached = false;

                if (!cell_bound_to_cpus(v, cell))
                        continue;
                for (unsigned i = 0; i < n; i++) {
                        unsigned take;
                        if (!cell_may_use(v, cell, nodes[i]))
                                continue;
                        reached = true;
                        if (!room)
                                break;
                        take = MIN(left[i], want);
                        left[i] -= take;
                        want -= take;
                }
                if (!reached || (room && want > 0))
                        return false;
        }
        return true;
}

/*
 * Splits count vCPUs over nodes[0..n) evenly over their room, as policy_spread does, unless the memory
 * cannot follow that split (a node lacks the free memory for its share, so the rest lands elsewhere):
 * then in proportion to where the memory lands, as far as the room allows.
 */
static void split_with_memory(const unsigned *room, const uint64_t *mem_room, unsigned n, unsigned count,
                              uint64_t memory, unsigned *quota)
{
        g_autofree uint64_t *mem = g_new0(uint64_t, MAX(n, 1));
        uint64_t left = memory;
        unsigned given = 0;
        bool moved = false;

        policy_spread(room, n, count, quota);
        if (!mem_room || !count || !memory)
                return;
        for (unsigned i = 0; i < n; i++) {
                uint64_t share = (uint64_t)((unsigned __int128)memory * quota[i] / count);
                moved |= share > mem_room[i];
                mem[i] = MIN(MIN(share, mem_room[i]), left);
                left -= mem[i];
        }
        if (!moved)
                return;
        for (unsigned i = 0; i < n; i++) {
                uint64_t take = MIN(mem_room[i] - mem[i], left);
                mem[i] += take;
                left -= take;
        }
        for (unsigned i = 0; i < n; i++) {
                quota[i] = MIN(room[i], (unsigned)((unsigned __int128)count * mem[i] / memory));
                given += quota[i];
        }
        /* the remainder to the nodes furthest below their proportional share */
        while (given < count) {
                int best = -1;
                __int128 best_gap = 0;
                for (unsigned i = 0; i < n; i++) {
                        __int128 gap = (__int128)count * mem[i] - (__int128)quota[i] * memory;
                        if (quota[i] < room[i] && (best < 0 || gap > best_gap)) {
                                best = (int)i;
                                best_gap = gap;
                        }
                }
                if (best < 0)
                        break;
                quota[best]++;
                given++;
        }
}

/* Memory held on nodes the set's vCPUs do not all run beside (HostView.memory_remote): the nodes nearest
 * it take all they have room for first (the memory's own node, when it has CPUs, as many as it can), the
 * next nearest the rest; nodes as near share evenly over their room (policy_spread()). */
static void split_toward_memory(const HostView *v, const unsigned *nodes, unsigned n, const unsigned *room,
                                unsigned count, unsigned *quota)
{
        g_autofree bool *done = g_new0(bool, MAX(n, 1));
        g_autofree unsigned *group_room = g_new0(unsigned, MAX(n, 1));
        g_autofree unsigned *group_quota = g_new0(unsigned, MAX(n, 1));
        g_autofree unsigned *members = g_new0(unsigned, MAX(n, 1));

        memset(quota, 0, sizeof(*quota) * MAX(n, 1));
        while (count > 0) {
                uint32_t nearest = UINT32_MAX;
                unsigned k = 0, sum = 0;
                for (unsigned i = 0; i < n; i++)
                        if (!done[i])
                                nearest = MIN(nearest, v->node_to_memory[nodes[i]]);
                if (nearest == UINT32_MAX)
                        break;
                for (unsigned i = 0; i < n; i++)
                        if (!done[i] && v->node_to_memory[nodes[i]] == nearest) {
                                done[i] = true;
                                members[k] = i;
                                group_room[k] = room[i];
                                sum += room[i];
                                k++;
                        }
                policy_spread(group_room, k, MIN(count, sum), group_quota);
                for (unsigned j = 0; j < k; j++) {
                        quota[members[j]] = group_quota[j];
                        count -= MIN(count, group_quota[j]);
                }
        }
}

/* Whether nodes[a] is nearer nodes[from] than nodes[b]: itself first, then by distance, then in set
 * order. */
static bool nearer_to(const Topology *t, const unsigned *nodes, unsigned from, unsigned a, unsigned b)
{
        uint32_t da = a == from ? 0 : topology_distance(t, nodes[from], nodes[a]);
        uint32_t db = b == from ? 0 : topology_distance(t, nodes[from], nodes[b]);

        return da < db || (da == db && a < b);
}

/* The indexes of nodes[0..n), nearest nodes[from] first, into order[0..n). */
static void order_from(const Topology *t, const unsigned *nodes, unsigned n, unsigned from, unsigned *order)
{
        for (unsigned i = 0; i < n; i++) {
                unsigned j = i;
                while (j > 0 && nearer_to(t, nodes, from, i, order[j - 1])) {
                        order[j] = order[j - 1];
                        j--;
                }
                order[j] = i;
        }
}

/* How far from nodes[from] the memory of a cell reaches when it fills mem_room from there outward, nearest
 * first (UINT32_MAX when the set lacks the room); takes it from mem_room, adding the nodes to taken, when
 * taken is not NULL. */
static uint32_t spill_reach(const Topology *t, const unsigned *nodes, unsigned n, uint64_t *mem_room,
                            unsigned from, uint64_t memory, CpuSet *taken)
{
        g_autofree unsigned *order = g_new(unsigned, MAX(n, 1));
        uint32_t reach = TOPOLOGY_LOCAL;

        order_from(t, nodes, n, from, order);
        for (unsigned k = 0; k < n && memory > 0; k++) {
                unsigned i = order[k];
                uint64_t part = MIN(mem_room[i], memory);
                if (!part)
                        continue;
                reach = MAX(reach, topology_distance(t, nodes[from], nodes[i]));
                memory -= part;
                if (taken) {
                        mem_room[i] -= part;
                        cpuset_add(taken, nodes[i]);
                }
        }
        return memory ? UINT32_MAX : reach;
}

/*
 * The cells cells_pack() left out whose vCPUs one node still has room for, only their memory too big for
 * any: each goes whole to the node from which its memory, filling the nearest nodes' room first, reaches
 * least far (then the one holding most of it itself, then the one with most room), the biggest cells
 * first. Returns the farthest such a cell's memory reaches (TOPOLOGY_LOCAL when none spills); adds the
 * nodes their memory takes to spilled (when not NULL).
 */
static uint32_t spill_cells(const HostView *v, const unsigned *nodes, unsigned n, unsigned *room,
                            uint64_t *mem_room, uint64_t *page_room, const Plan *plan, const CellsPacking *p,
                            int *vcpu_node, CpuSet *spilled)
{
        const CellOrder *order = p->by_size;
        g_autoptr(CpuSet) taken = cpuset_new();
        /* the room of each node for the cell's own kind of memory (cell_room()) */
        g_autofree uint64_t *kind = g_new(uint64_t, MAX(n, 1));
        uint32_t farthest = TOPOLOGY_LOCAL;
        unsigned ncells = p->ncells;

        for (unsigned o = 0; o < ncells; o++) {
                const PlanCell *c = &plan->cells[order[o].cell];
                unsigned k = cpuset_count(c->vcpus);
                int first = cpuset_next(c->vcpus, 0), best = -1;
                uint32_t best_reach = UINT32_MAX;
                uint64_t need = plan_cell_pool_bytes(plan, c); /* in whole pages, as cell_take() */

                if (k == 0 || first < 0 || vcpu_node[first] >= 0 || !cpuset_is_empty(c->memory_nodes))
                        continue;
                for (unsigned i = 0; i < n; i++)
                        kind[i] = cell_room(c, mem_room[i], page_room ? &page_room[i] : NULL);
                for (unsigned i = 0; i < n; i++) {
                        uint32_t reach;
                        if (room[i] < k)
                                continue;
                        reach = spill_reach(v->t, nodes, n, kind, i, need, NULL);
                        if (reach == UINT32_MAX)
                                continue;
                        if (best < 0 || reach < best_reach ||
                            (reach == best_reach &&
                             (kind[i] > kind[best] || (kind[i] == kind[best] && room[i] > room[best])))) {
                                best = (int)i;
                                best_reach = reach;
                        }
                }
                if (best < 0)
                        continue;
                spill_reach(v->t, nodes, n, kind, (unsigned)best, need, taken);
                /* what it took of its kind, from the nodes' room */
                for (unsigned i = 0; i < n; i++) {
                        uint64_t took =
                            cell_room(c, mem_room[i], page_room ? &page_room[i] : NULL) - kind[i];
                        mem_room[i] -= MIN(took, mem_room[i]);
                        if (page_room && !c->ordinary)
                                page_room[i] -= MIN(took, page_room[i]);
                }
                room[best] -= k;
                farthest = MAX(farthest, best_reach);
                CPUSET_FOREACH (vcpu, c->vcpus)
                        vcpu_node[vcpu] = (int)nodes[best];
        }
        if (spilled)
                cpuset_union(spilled, taken);
        return farthest;
}

/*
 * The cells no node holds whole (nor a <memnode> binds), the biggest first: each goes to the nodes nearest
 * one node of the set that together have the room for its vCPUs and its memory (mem_room, when not NULL),
 * nearest first, the node whose farthest such node is nearest (then the one with most room) winning, its
 * vCPUs evenly over those nodes' room; so a cell stays inside the nodes near each other (a package) when
 * the set has the room there. Split evenly over the set and handed out in vCPU order, one cell of two
 * could straddle two packages while each fitted one. Returns the farthest apart two nodes such a cell
 * takes (TOPOLOGY_LOCAL when none), adding those only its memory takes to spilled (when not NULL). A cell
 * the set lacks the room for is left to that even split.
 */
static uint32_t split_cells_near(const Topology *t, const unsigned *nodes, unsigned n, unsigned *room,
                                 uint64_t *mem_room, uint64_t *page_room, const Plan *plan,
                                 const CellsPacking *p, int *vcpu_node, CpuSet *spilled)
{
        const CellOrder *order = p->by_size;
        /* the room of each node for the cell's own kind of memory (cell_room()) */
        g_autofree uint64_t *kind = g_new0(uint64_t, MAX(n, 1));
        g_autofree unsigned *near = g_new(unsigned, MAX(n, 1));
        g_autofree unsigned *best_near = g_new(unsigned, MAX(n, 1));
        g_autofree unsigned *quota = g_new(unsigned, MAX(n, 1));
        uint32_t farthest = TOPOLOGY_LOCAL;
        unsigned ncells = p->ncells;

        for (unsigned o = 0; o < ncells; o++) {
                const PlanCell *c = &plan->cells[order[o].cell];
                unsigned k = cpuset_count(c->vcpus);
                int first = cpuset_next(c->vcpus, 0);
                NearNodes best = {.from = -1, .near = best_near};
                uint64_t need = plan_cell_pool_bytes(plan, c), left; /* in whole pages, as cell_take() */

                if (k == 0 || first < 0 || vcpu_node[first] >= 0 || !cpuset_is_empty(c->memory_nodes))
                        continue;
                for (unsigned i = 0; mem_room && i < n; i++)
                        kind[i] = cell_room(c, mem_room[i], page_room ? &page_room[i] : NULL);
                /* with its memory first; when no node's neighbours hold that too, by the cores alone */
                for (int with_memory = mem_room != NULL; best.from < 0 && with_memory >= 0; with_memory--)
                        for (unsigned s = 0; s < n; s++) {
                                unsigned sum = 0, len = 0;
                                uint64_t mem = with_memory ? 0 : need;
                                uint32_t reach = TOPOLOGY_LOCAL;
                                if (!room[s])
                                        continue;
                                order_from(t, nodes, n, s, near);
                                for (unsigned m = 0; m < n && (sum < k || mem < need); m++) {
                                        unsigned i = near[m];
                                        bool cores = sum < k && room[i], memory = mem < need && kind[i];
                                        if (!cores && !memory)
                                                continue;
                                        reach = reach_with(t, nodes, near, len, i, reach);
                                        near[len++] = i;
                                        sum += room[i];
                                        if (with_memory)
                                                mem += kind[i];
                                }
                                if (sum >= k && mem >= need)
                                        near_offer(&best, s, reach,
                                                   best.from >= 0 && room[s] > room[best.from], near, len);
                        }
                if (best.from < 0)
                        continue;
                farthest = MAX(farthest, best.reach);
                for (unsigned q = 0; q < best.len; q++)
                        near[q] = room[best_near[q]];
                policy_spread(near, best.len, k, quota);
                left = need;
                for (unsigned q = 0; q < best.len; q++) {
                        uint64_t part = mem_room ? MIN(kind[best_near[q]], left) : 0;
                        if (mem_room)
                                mem_room[best_near[q]] -= MIN(part, mem_room[best_near[q]]);
                        if (page_room && !c->ordinary)
                                page_room[best_near[q]] -= MIN(part, page_room[best_near[q]]);
                        left -= part;
                        if (spilled && part && !quota[q])
                                cpuset_add(spilled, nodes[best_near[q]]);
                }
                hand_out(c, nodes, &best, quota, room, vcpu_node);
        }
        return farthest;
}

uint32_t cells_vcpu_nodes(const HostView *v, const unsigned *nodes, unsigned n, const unsigned *capacity,
                          const Plan *plan, const CellsPacking *packing, int *vcpu_node, CpuSet *spilled)
{
        g_autoptr(CellsPacking) own = NULL;
        const CellsPacking *p = packing_of(v, plan, packing, &own);
        g_autofree unsigned *room = g_memdup2(capacity, sizeof(*capacity) * MAX(n, 1));
        g_autofree uint64_t *mem_room = g_new(uint64_t, MAX(n, 1));
        g_autofree unsigned *quota = g_new0(unsigned, MAX(n, 1));
        g_autofree uint64_t *page_room = nodes_free_pages(v, nodes, n);
        bool bound = cells_memory_bound(v);
        uint64_t memory = plan->memory;
        unsigned rest = 0, i = 0;
        uint32_t reach = TOPOLOGY_LOCAL;

        for (unsigned k = 0; k < n; k++)
                mem_room[k] = v->node_free_memory[nodes[k]];
        pack_kinds(v, nodes, n, room, bound ? NULL : mem_room, page_room, plan, p, vcpu_node);
        keep_bound_cells(v, nodes, n, room, plan, p, vcpu_node, 2);
        if (!bound && !v->memory_remote)
                reach = spill_cells(v, nodes, n, room, mem_room, page_room, plan, p, vcpu_node, spilled);
        if (!bound && !v->memory_remote) {
                uint32_t split =
                    split_cells_near(v->t, nodes, n, room, mem_room, page_room, plan, p, vcpu_node, spilled);
                reach = MAX(reach, split);
        }
        /* a cell without vCPUs has none placed */
        for (unsigned o = 0; o < p->ncells; o++) {
                const PlanCell *c = &plan->cells[p->cells[o]];
                if (vcpu_node[cpuset_next(c->vcpus, 0)] >= 0)
                        memory -= MIN(memory, c->memory);
        }
        for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++)
                rest += vcpu_node[vcpu] < 0;
        if (v->memory_remote)
                split_toward_memory(v, nodes, n, room, rest, quota);
        else
                split_with_memory(room, bound ? NULL : mem_room, n, rest, memory, quota);
        for (unsigned vcpu = 0; vcpu < plan->nvcpus; vcpu++) {
                if (vcpu_node[vcpu] >= 0)
                        continue;
                while (i < n && quota[i] == 0)
                        i++;
                if (i == n)
                        break;
                vcpu_node[vcpu] = (int)nodes[i];
                quota[i]--;
        }
        return reach;
}

uint64_t *cells_hold_bound_memory(HostView *v, const Plan *plan)
{
        const Topology *t = v->t;
        size_t nodes = MAX(t->nnodes, 1);
        uint64_t *saved = NULL;

        if (!v->req || v->req->memory_source != MEMORY_SOURCE_NONE)
                return NULL;
        for (unsigned c = 0; c < plan->ncells; c++) {
                /* of a request with both kinds, the bound cell's own kind too: a hugepage cell bound to a
                 * node takes its pages there, not its ordinary memory */
                uint64_t *kind = !v->node_free_pages       ? NULL
                                 : plan->cells[c].ordinary ? v->node_free_ordinary
                                                           : v->node_free_pages;
                uint64_t left = plan_cell_pool_bytes(plan, &plan->cells[c]); /* its whole pages */
                if (cpuset_is_empty(plan->cells[c].memory_nodes))
                        continue;
                if (!saved) {
                        saved = g_new(uint64_t, nodes * (v->node_free_pages ? 3 : 1));
                        memcpy(saved, v->node_free_memory, sizeof(uint64_t) * nodes);
                        if (v->node_free_pages) {
                                memcpy(saved + nodes, v->node_free_pages, sizeof(uint64_t) * nodes);
                                memcpy(saved + 2 * nodes, v->node_free_ordinary, sizeof(uint64_t) * nodes);
                        }
                }
                for (unsigned n = 0; n < t->nnodes && left; n++) {
                        uint64_t take;
                        if (!cpuset_has(plan->cells[c].memory_nodes, t->nodes[n].os_index))
                                continue;
                        take = MIN(left, kind ? kind[n] : v->node_free_memory[n]);
                        v->node_free_memory[n] -= MIN(take, v->node_free_memory[n]);
                        if (kind)
                                kind[n] -= take;
                        left -= take;
                }
        }
        return saved;
}

void cells_free_bound_memory(HostView *v, const uint64_t *saved)
{
        size_t nodes = MAX(v->t->nnodes, 1);

        if (!saved)
                return;
        memcpy(v->node_free_memory, saved, sizeof(uint64_t) * nodes);
        if (v->node_free_pages) {
                memcpy(v->node_free_pages, saved + nodes, sizeof(uint64_t) * nodes);
                memcpy(v->node_free_ordinary, saved + 2 * nodes, sizeof(uint64_t) * nodes);
        }
}

void cells_record_nodes(const Topology *t, Plan *plan)
{
        for (unsigned c = 0; c < plan->ncells; c++) {
                PlanCell *cell = &plan->cells[c];
                cpuset_clear(cell->nodes);
                CPUSET_FOREACH (vcpu, cell->vcpus)
                        if (plan->vcpu_pu[vcpu] >= 0)
                                cpuset_add(cell->nodes, t->cores[t->pus[plan->vcpu_pu[vcpu]].core].node);
                /* a cell without vCPUs is where its <memnode> binds its memory */
                if (cpuset_is_empty(cell->nodes) && cell->memory_nodes)
                        CPUSET_FOREACH (os, cell->memory_nodes) {
                                int n = topology_node_by_os(t, (unsigned)os);
                                if (n >= 0)
                                        cpuset_add(cell->nodes, (unsigned)n);
                        }
        }
}

/* The nodes (OS indexes) a memory device's cell is counted on, else those it went to, into os. */
static void device_os_nodes(const Topology *t, const PlanCell *cell, CpuSet *os)
{
        CPUSET_FOREACH (node, cpuset_is_empty(cell->counted_nodes) ? cell->nodes : cell->counted_nodes)
                cpuset_add(os, t->nodes[node].os_index);
}

char *cells_note(const Topology *t, const PlacementRequest *req, const Plan *plan, bool memnodes)
{
        GString *s = g_string_new(NULL);

        for (unsigned c = 0; c < plan->ncells; c++) {
                const PlanCell *cell = &plan->cells[c];
                g_autoptr(CpuSet) os = cpuset_new();
                g_autofree char *list = NULL;

                if (cell->device) {
                        /* a memory device its own <source> backs: no guest cell of the definition. The
                         * devices of one kind on the same nodes are said once, together (a guest may have
                         * hundreds) */
                        char size[32];
                        uint64_t bytes = 0;
                        unsigned count = 0;
                        bool said = false;
                        device_os_nodes(t, cell, os);
                        for (unsigned o = 0; o < plan->ncells && !said; o++) {
                                g_autoptr(CpuSet) other = cpuset_new();
                                if (!plan->cells[o].device || plan->cells[o].ordinary != cell->ordinary)
                                        continue;
                                device_os_nodes(t, &plan->cells[o], other);
                                if (!cpuset_equal(other, os))
                                        continue;
                                said = o < c;
                                count++;
                                bytes = bytes > G_MAXUINT64 - plan->cells[o].memory
                                            ? G_MAXUINT64
                                            : bytes + plan->cells[o].memory;
                        }
                        if (said)
                                continue;
                        list = cpuset_format(os);
                        size_format(bytes, size, sizeof(size));
                        if (count == 1)
                                g_string_append_printf(s,
                                                       "%sa memory device of %s (its own <source>) on %s %s",
                                                       s->len ? ", " : "; guest cells: ", size,
                                                       cpuset_count(os) > 1 ? "nodes" : "node", list);
                        else
                                g_string_append_printf(
                                    s, "%s%u memory devices of %s in all (their own <source>) on %s %s",
                                    s->len ? ", " : "; guest cells: ", count, size,
                                    cpuset_count(os) > 1 ? "nodes" : "node", list);
                        continue;
                }
                if (cpuset_is_empty(cell->vcpus) && !cpuset_is_empty(cell->counted_nodes)) {
                        /* a cell without vCPUs: where its memory is counted (its <memnode>'s nodes when
                         * it has one) */
                        CPUSET_FOREACH (node, cell->counted_nodes)
                                cpuset_add(os, t->nodes[node].os_index);
                        list = cpuset_format(os);
                        g_string_append_printf(s, "%s%u (no vCPUs) with its memory on %s %s",
                                               s->len ? ", " : "; guest cells: ", cell->id,
                                               cpuset_count(os) > 1 ? "nodes" : "node", list);
                        continue;
                }
                if (cpuset_is_empty(cell->nodes))
                        continue;
                CPUSET_FOREACH (node, cell->nodes)
                        cpuset_add(os, t->nodes[node].os_index);
                list = cpuset_format(os);
                g_string_append_printf(s, "%s%u on %s %s%s", s->len ? ", " : "; guest cells: ", cell->id,
                                       cpuset_count(os) > 1 ? "nodes" : "node", list,
                                       cpuset_count(os) > 1 && !cpuset_is_empty(cell->vcpus)
                                           ? " (split: no node had room for it)"
                                           : "");
                /* its memory counted beyond its vCPUs' nodes (they lack the room): where, since its
                 * <memnode> must name those nodes too */
                if (cpuset_is_empty(cell->memory_nodes)) {
                        g_autoptr(CpuSet) beyond = cpuset_new();
                        CPUSET_FOREACH (node, cell->counted_nodes)
                                if (!cpuset_has(cell->nodes, (unsigned)node))
                                        cpuset_add(beyond, t->nodes[node].os_index);
                        /* "also" only when some of it is on the cell's own nodes */
                        bool also = cpuset_intersects(cell->counted_nodes, cell->nodes), memoryless = true;
                        /* nodes with CPUs and no memory at all (a PowerVM LPAR's) have no room to run out
                         * of */
                        CPUSET_FOREACH (node, cell->nodes)
                                memoryless = memoryless && t->nodes[node].memory == 0 &&
                                             t->nodes[node].nhugepages == 0;
                        if (!cpuset_is_empty(beyond)) {
                                g_autofree char *more = cpuset_format(beyond);
                                bool several = cpuset_count(os) > 1;
                                g_string_append_printf(
                                    s, " (its memory %s %s %s: %s %s %s)", also ? "also on" : "on",
                                    cpuset_count(beyond) > 1 ? "nodes" : "node", more,
                                    several ? "nodes" : "node", list,
                                    also         ? (several ? "lack the room for all of it"
                                                            : "lacks the room for all of it")
                                    : memoryless ? (several ? "have no memory" : "has no memory")
                                                 : (several ? "have no room for it" : "has no room for it"));
                        }
                }
                /* bound where its vCPUs may not run (cell_may_use()) */
                if (!cpuset_is_empty(cell->memory_nodes) && !cpuset_intersects(cell->memory_nodes, os)) {
                        g_autofree char *bound = cpuset_format(cell->memory_nodes);
                        g_string_append_printf(s, " (its memory remote, bound to %s %s)",
                                               cpuset_count(cell->memory_nodes) > 1 ? "nodes" : "node",
                                               bound);
                }
        }
        /* how near one another the cells run, against the guest's own distances */
        if (s->len)
                cells_order_note(t, req, plan, s);
        /* libvirt binds a cell's memory to a node only from the definition: say what it needs */
        if (s->len && !memnodes)
                g_string_append(s, " (each cell's memory follows only a <numatune><memnode> per cell in the "
                                   "definition: placementctl snippet)");
        return g_string_free(s, FALSE);
}
