/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: the plan's memory per node, spread by its vCPUs or counted where the request binds it, spilled
 * where the kernel falls back, and in whole hugepages. */
#include "finish-internal.h"
#include "size.h"

#include <string.h>

/* order[0..n) (node indexes) by key[node], lowest first; equals keep their order (a stable insertion
 * sort: n is a host's node count). */
static void order_by_key(unsigned *order, unsigned n, const uint64_t *key)
{
        for (unsigned i = 1; i < n; i++)
                for (unsigned j = i; j > 0 && key[order[j]] < key[order[j - 1]]; j--) {
                        unsigned x = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = x;
                }
}

/* order[0..n) nearest to node first first, then by node number. */
static void order_nearest(const Topology *t, unsigned first, unsigned *order, unsigned n)
{
        g_autofree uint64_t *distance = g_new(uint64_t, MAX(t->nnodes, 1));

        for (unsigned k = 0; k < t->nnodes; k++)
                distance[k] = topology_distance(t, first, k);
        order_by_key(order, n, distance);
}

/*
 * A plan's memory comes in two kinds when it is hugepage-backed but some guest cells are not
 * (Plan.node_ordinary): what the functions below count is of one kind, ordinary (true) or the plan's own
 * (false: hugepages of its size, or ordinary memory when it has none), and each kind finds its own room.
 */

/* What the plan counts on node n of that kind. */
static uint64_t counted(const Plan *plan, unsigned n, bool ordinary)
{
        if (!plan->node_ordinary)
                return plan->node_memory[n];
        return ordinary ? plan_node_ordinary(plan, n) : plan_node_pages(plan, n);
}

/* Counts bytes of that kind on node n. */
static void charge(Plan *plan, unsigned n, uint64_t bytes, bool ordinary)
{
        plan->node_memory[n] += bytes;
        if (ordinary && plan->node_ordinary)
                plan->node_ordinary[n] += bytes;
}

/* What the plan takes of node n's room of that kind: what it counts there, hugepages in whole pages (the
 * guest cells counted whole on the node each in its own, plan_node_whole_cells(), the rest rounded up):
 * two 33 MiB cells of 2 MiB pages leave a node of 33 free pages 32 MiB after the first, not 33. */
static uint64_t counted_room(const Plan *plan, unsigned n, bool ordinary)
{
        bool second = ordinary && plan->node_ordinary;
        uint64_t page = second ? plan->second_page_size : plan->hugepage_size, whole;

        if (!page || (ordinary && !second))
                return counted(plan, n, ordinary);
        whole = plan_node_whole_cells(plan, n, second, false);
        return plan_node_whole_cells(plan, n, second, true) +
               plan_whole_pages(counted(plan, n, ordinary) - whole, page);
}

/* What node n's free memory of that kind (HostView.node_free_pages, node_free_ordinary) still holds
 * beside what plan counts there (0 when bound memory, which is where it is bound, already takes more). */
static uint64_t room_left(const HostView *v, const Plan *plan, unsigned n, bool ordinary)
{
        uint64_t free = v->node_free_memory[n];

        if (plan->node_ordinary && v->node_free_pages)
                free = ordinary ? v->node_free_ordinary[n] : v->node_free_pages[n];
        return free > counted_room(plan, n, ordinary) ? free - counted_room(plan, n, ordinary) : 0;
}

/* Charges up to amount on the set's nodes in proportion to vcpus_on, within their free memory. */
static uint64_t charge_by_vcpus(const HostView *v, Plan *plan, const unsigned *vcpus_on, unsigned placed,
                                uint64_t amount, bool ordinary)
{
        uint64_t charged = 0;

        CPUSET_FOREACH (n, plan->nodes) {
                uint64_t share = placed ? (uint64_t)((unsigned __int128)amount * vcpus_on[n] / placed) : 0;
                share = MIN(MIN(share, room_left(v, plan, (unsigned)n, ordinary)), amount - charged);
                charge(plan, (unsigned)n, share, ordinary);
                charged += share;
        }
        return charged;
}

/* Counts on vcpus_on[node] the placed vCPUs of plan in vcpus (NULL: those of no guest cell); returns them.
 */
static unsigned count_vcpus(const Topology *t, const Plan *plan, const CpuSet *vcpus, unsigned *vcpus_on)
{
        unsigned placed = 0;

        memset(vcpus_on, 0, sizeof(*vcpus_on) * MAX(t->nnodes, 1));
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                bool in_cell = false;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                for (unsigned c = 0; !vcpus && c < plan->ncells && !in_cell; c++)
                        in_cell = cpuset_has(plan->cells[c].vcpus, i);
                if (vcpus ? !cpuset_has(vcpus, i) : in_cell)
                        continue;
                vcpus_on[t->cores[t->pus[plan->vcpu_pu[i]].core].node]++;
                placed++;
        }
        return placed;
}

/* Charges up to amount on the plan's nodes with room left (memory-only nodes included), nearest the
 * vCPUs counted in vcpus_on first: the kernel falls back to the nearest node with room. */
static uint64_t charge_nearest(const HostView *v, Plan *plan, const unsigned *vcpus_on, uint64_t amount,
                               bool ordinary)
{
        const Topology *t = v->t;
        g_autofree unsigned *order = NULL, *with_vcpus = NULL;
        g_autofree uint64_t *far = NULL;
        unsigned n_order = 0, n_with = 0;
        uint64_t charged = 0;

        if (!amount) /* nothing left over: nothing to order */
                return 0;
        order = g_new(unsigned, MAX(t->nnodes, 1));
        with_vcpus = g_new(unsigned, MAX(t->nnodes, 1));
        far = g_new0(uint64_t, MAX(t->nnodes, 1));
        for (unsigned m = 0; m < t->nnodes; m++)
                if (vcpus_on[m])
                        with_vcpus[n_with++] = m;
        CPUSET_FOREACH (n, plan->nodes) {
                if (!room_left(v, plan, (unsigned)n, ordinary)) /* takes nothing: needs no place */
                        continue;
                for (unsigned i = 0; i < n_with; i++)
                        far[n] += (uint64_t)vcpus_on[with_vcpus[i]] *
                                  topology_distance(t, with_vcpus[i], (unsigned)n);
                order[n_order++] = (unsigned)n;
        }
        order_by_key(order, n_order, far);
        for (unsigned i = 0; i < n_order && charged < amount; i++) {
                uint64_t take = MIN(room_left(v, plan, order[i], ordinary), amount - charged);
                charge(plan, order[i], take, ordinary);
                charged += take;
        }
        return charged;
}

/* The mode of the <memnode> that binds the request's cell c (the plan's cells are the request's, in its
 * order): the kernel puts an interleaved cell's pages evenly on its nodes and a preferred one's on its
 * first node while it has room, wherever the cell's vCPUs run; strict when not known. */
static MemoryMode memnode_mode(const PlacementRequest *req, unsigned c)
{
        return req && c < req->ncells ? req->cells[c].memory_mode : MEMORY_MODE_STRICT;
}

/* Adds to the cell's counted nodes those whose count grew since before[] was taken. */
static void record_counted(const Plan *plan, uint64_t *before, PlanCell *cell)
{
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n] > before[n])
                        cpuset_add(cell->counted_nodes, n);
}

static bool charge_bound(const HostView *v, const CpuSet *os_nodes, uint64_t bytes, MemoryMode mode,
                         const CpuSet *runs_on, Plan *plan, bool ordinary);

/* The vCPUs of the guest cell of the plan's cell c when c is a memory device's, else NULL. */
static const CpuSet *device_target_vcpus(const Plan *plan, unsigned c)
{
        if (!plan->cells[c].device)
                return NULL;
        for (unsigned i = 0; i < plan->ncells; i++)
                if (!plan->cells[i].device && plan->cells[i].id == plan->cells[c].device_target)
                        return plan->cells[i].vcpus;
        return NULL;
}

void policy_spread_memory(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *vcpus_on = g_new0(unsigned, MAX(t->nnodes, 1));
        g_autofree uint64_t *before = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        g_autofree uint64_t *short_of = g_new0(uint64_t, MAX(plan->ncells, 1));
        g_autofree bool *memory_only = g_new0(bool, MAX(plan->ncells, 1));
        size_t counts = sizeof(uint64_t) * plan->nnode_memory;
        unsigned placed;
        uint64_t left = plan->memory, left_kind[2] = {0, 0};

        /* First: each guest cell's memory where its <memnode> binds it, or else where its vCPUs run; then
         * what their nodes lack the room for, each cell's on the nodes nearest its own vCPUs (a cell is
         * bound as a whole: what it needs is where its own memory lies, not the domain's); then the rest
         * in proportion to the vCPUs of no cell (of all of them when every vCPU has a cell). Each cell's
         * memory is of its own kind (hugepages, or ordinary memory no <page> backs it with) */
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t bytes = MIN(plan->cells[c].memory, left);
                bool ordinary = plan->cells[c].ordinary;
                cpuset_clear(plan->cells[c].counted_nodes);
                if (counts)
                        memcpy(before, plan->node_memory, counts);
                if (!cpuset_is_empty(plan->cells[c].memory_nodes) &&
                    charge_bound(v, plan->cells[c].memory_nodes, bytes, memnode_mode(v->req, c),
                                 plan->cells[c].nodes, plan, ordinary)) {
                        left -= bytes;
                        record_counted(plan, before, &plan->cells[c]);
                        continue;
                }
                placed = count_vcpus(t, plan, plan->cells[c].vcpus, vcpus_on);
                if (placed) {
                        uint64_t charged = charge_by_vcpus(v, plan, vcpus_on, placed, bytes, ordinary);
                        left -= charged;
                        short_of[c] = bytes - charged;
                } else {
                        memory_only[c] = true;
                }
                record_counted(plan, before, &plan->cells[c]);
        }
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t charged;
                if (!short_of[c])
                        continue;
                if (counts)
                        memcpy(before, plan->node_memory, counts);
                count_vcpus(t, plan, plan->cells[c].vcpus, vcpus_on);
                charged = charge_nearest(v, plan, vcpus_on, short_of[c], plan->cells[c].ordinary);
                left -= charged;
                left_kind[plan->cells[c].ordinary] += short_of[c] - charged;
                record_counted(plan, before, &plan->cells[c]);
        }
        placed = count_vcpus(t, plan, NULL, vcpus_on);
        if (!placed) {
                g_autoptr(CpuSet) all = cpuset_new();
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        cpuset_add(all, i);
                placed = count_vcpus(t, plan, all, vcpus_on);
        }
        /* a cell without vCPUs (nor a <memnode>) as the memory beyond the cells, each on its own so that
         * the plan says where it went; a memory device nothing binds as its guest cell's memory, where
         * that cell's vCPUs run: the guest uses it as that cell's, and the kernel puts a page where the
         * vCPU touching it runs */
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t bytes = MIN(plan->cells[c].memory, left), charged;
                bool ordinary = plan->cells[c].ordinary;
                const CpuSet *target = device_target_vcpus(plan, c);
                g_autofree unsigned *own_on = NULL;
                unsigned own = 0;
                if (!memory_only[c] || !bytes)
                        continue;
                if (target) {
                        own_on = g_new0(unsigned, MAX(t->nnodes, 1));
                        own = count_vcpus(t, plan, target, own_on);
                }
                if (counts)
                        memcpy(before, plan->node_memory, counts);
                charged =
                    charge_by_vcpus(v, plan, own ? own_on : vcpus_on, own ? own : placed, bytes, ordinary);
                charged += charge_nearest(v, plan, own ? own_on : vcpus_on, bytes - charged, ordinary);
                left -= charged;
                left_kind[ordinary] += bytes - charged;
                record_counted(plan, before, &plan->cells[c]);
        }
        /* what no cell holds is of the plan's own kind: by the vCPUs, then whatever did not fit nearest
         * the vCPUs first */
        left -= MIN(left, left_kind[0] + left_kind[1]);
        left_kind[0] += left;
        for (unsigned k = 0; k < 2; k++) {
                uint64_t rest = left_kind[k];
                rest -= charge_by_vcpus(v, plan, vcpus_on, placed, rest, k);
                rest -= charge_nearest(v, plan, vcpus_on, rest, k);
                /* a kind that lacks the room where the vCPUs run (its set had room for the two kinds
                 * together): counted on the node running most of them, not nowhere */
                if (rest && plan->node_ordinary) {
                        unsigned most = (unsigned)MAX(cpuset_next(plan->nodes, 0), 0);
                        CPUSET_FOREACH (n, plan->nodes)
                                if (vcpus_on[n] > vcpus_on[most])
                                        most = (unsigned)n;
                        charge(plan, most, rest, k);
                }
        }
}

/* What node n can still take of this plan's memory, whatever the request's binding: its free memory (or
 * free hugepages of the plan's size) less what the plan already counts there. GPU memory takes none
 * unless chosen (the node the binding names). */
static uint64_t spill_room(const HostView *v, const Plan *plan, unsigned n, bool chosen, bool ordinary)
{
        const TopoNode *node = &v->t->nodes[n];
        uint64_t used = ledger_node_memory(v->l, n), reserve = v->params->memory_reserve, free;

        /* the node the user chose holds memory whatever its kind; the kernel falls back to no GPU's */
        if (node->kind == NODE_KIND_GPU && !chosen)
                return 0;
        if (plan->hugepage_size && !(ordinary && plan->node_ordinary))
                free = ledger_node_free_hugepages(v->l, n, plan->hugepage_size);
        else if (plan->hugepage_size && plan->second_page_size)
                free = ledger_node_free_hugepages(v->l, n, plan->second_page_size);
        else
                free =
                    node->memory > used && node->memory - used > reserve ? node->memory - used - reserve : 0;
        return free > counted(plan, n, ordinary) ? free - counted(plan, n, ordinary) : 0;
}

/* spill_room() of both kinds. */
static uint64_t spill_room_all(const HostView *v, const Plan *plan, unsigned n, bool chosen)
{
        return spill_room(v, plan, n, chosen, false) +
               (plan->node_ordinary ? spill_room(v, plan, n, chosen, true) : 0);
}

/* mode='preferred': the first node takes what it has room for, and the kernel falls back to the nearest
 * nodes for the rest (what a full node cannot hold is not there); anything no node has room for is
 * counted on the first. */
static void charge_preferred(const HostView *v, unsigned first, uint64_t bytes, Plan *plan, bool ordinary)
{
        const Topology *t = v->t;
        g_autofree unsigned *order = g_new(unsigned, MAX(t->nnodes, 1));
        unsigned n = 0;
        uint64_t take = MIN(bytes, spill_room(v, plan, first, true, ordinary));

        charge(plan, first, take, ordinary);
        bytes -= take;
        for (unsigned k = 0; k < t->nnodes; k++)
                if (k != first && t->nodes[k].memory > 0)
                        order[n++] = k;
        order_nearest(t, first, order, n);
        for (unsigned i = 0; i < n && bytes; i++) {
                take = MIN(bytes, spill_room(v, plan, order[i], false, ordinary));
                charge(plan, order[i], take, ordinary);
                bytes -= take;
        }
        charge(plan, first, bytes, ordinary);
}

/*
 * bytes bound to the nodes whose OS indexes are in os_nodes, counted where the kernel puts them; false
 * when none of them is on this host. preferred: see charge_preferred(), from the first. interleave: an
 * even share of each. strict and restrictive (MPOL_BIND: a page on the faulting thread's node when the
 * binding has it): an even share of the bound nodes among runs_on (node indexes: the plan's, or a guest
 * cell's, where its vCPUs run), of all of them when none is. No node takes more than it has room for
 * (spill_room(): free memory, or free hugepages of the plan's size, a node without that pool none); the rest
 * falls back to the binding's other nodes, nearest first, as the kernel falls back inside it, and what none
 * has room for is counted on the first.
 */
static bool charge_bound(const HostView *v, const CpuSet *os_nodes, uint64_t bytes, MemoryMode mode,
                         const CpuSet *runs_on, Plan *plan, bool ordinary)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) nodes = cpuset_new();
        g_autoptr(CpuSet) local = cpuset_new();
        g_autofree unsigned *order = g_new(unsigned, MAX(t->nnodes, 1));
        unsigned n_order = 0, first;
        uint64_t share, left = bytes;

        for (unsigned n = 0; n < t->nnodes; n++)
                if (cpuset_has(os_nodes, t->nodes[n].os_index))
                        cpuset_add(nodes, n);
        if (cpuset_is_empty(nodes))
                return false;
        if (mode == MEMORY_MODE_PREFERRED) {
                charge_preferred(v, (unsigned)cpuset_next(nodes, 0), bytes, plan, ordinary);
                return true;
        }
        CPUSET_FOREACH (n, nodes)
                if (mode == MEMORY_MODE_INTERLEAVE || (runs_on && cpuset_has(runs_on, (unsigned)n)))
                        cpuset_add(local, n);
        if (cpuset_is_empty(local))
                cpuset_union(local, nodes);
        first = (unsigned)cpuset_next(local, 0);
        share = bytes / cpuset_count(local);
        CPUSET_FOREACH (n, local) {
                uint64_t take = MIN(share, spill_room(v, plan, (unsigned)n, true, ordinary));
                charge(plan, (unsigned)n, take, ordinary);
                left -= take;
        }
        /* the rest: the bound nodes nearest the first, the first itself before them */
        CPUSET_FOREACH (n, nodes)
                order[n_order++] = (unsigned)n;
        order_nearest(t, first, order, n_order);
        for (unsigned i = 0; i < n_order && left; i++) {
                uint64_t take = MIN(left, spill_room(v, plan, order[i], true, ordinary));
                charge(plan, order[i], take, ordinary);
                left -= take;
        }
        charge(plan, first, left, ordinary);
        return true;
}

bool finish_charge_bound(const HostView *v, const CpuSet *os_nodes, uint64_t bytes, MemoryMode mode,
                         const CpuSet *runs_on, Plan *plan)
{
        return charge_bound(v, os_nodes, bytes, mode, runs_on, plan, false);
}

/*
 * Memory the request binds itself is counted where it is bound (finish_charge_bound()): a cell's memory on
 * the nodes its <memnode> names, as that memnode's mode puts it, the rest as its <numatune><memory> mode
 * puts it.
 */
void policy_drop_poolless_memory(const Topology *t, Plan *plan)
{
        for (unsigned n = 0; plan->hugepage_size && n < plan->nnode_memory; n++) {
                if (!topology_node_hugepage_bytes(t, n, plan->hugepage_size))
                        plan->node_memory[n] -= plan_node_pages(plan, n);
                /* and the cells of a second page size on a node without a pool of it */
                if (plan->node_ordinary && plan->second_page_size &&
                    !topology_node_hugepage_bytes(t, n, plan->second_page_size)) {
                        plan->node_memory[n] -= plan->node_ordinary[n];
                        plan->node_ordinary[n] = 0;
                }
        }
}

void policy_charge_bound_memory(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        g_autofree uint64_t *before = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        uint64_t rest = plan->memory, rest_ordinary = 0;
        MemoryMode mode =
            req->memory_source == MEMORY_SOURCE_MEMNODE ? MEMORY_MODE_STRICT : req->memory_mode;

        memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
        if (plan->node_ordinary)
                memset(plan->node_ordinary, 0, sizeof(uint64_t) * plan->nnode_memory);
        /* each bound cell records where it is counted (its memory_nodes in the decision), so that the
         * snippet's <memnode> keeps it there rather than on its vCPUs' nodes */
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t bytes = MIN(plan->cells[c].memory, rest);
                cpuset_clear(plan->cells[c].counted_nodes);
                if (plan->nnode_memory)
                        memcpy(before, plan->node_memory, sizeof(uint64_t) * plan->nnode_memory);
                if (!cpuset_is_empty(plan->cells[c].memory_nodes) &&
                    charge_bound(v, plan->cells[c].memory_nodes, bytes, memnode_mode(req, c),
                                 plan->cells[c].nodes, plan, plan->cells[c].ordinary)) {
                        rest -= bytes;
                        record_counted(plan, before, &plan->cells[c]);
                } else if (plan->cells[c].ordinary && plan->node_ordinary) {
                        rest_ordinary += bytes;
                }
        }
        /* the rest under the domain's binding, each kind in its own room */
        rest_ordinary = MIN(rest_ordinary, rest);
        if (plan->nnode_memory)
                memcpy(before, plan->node_memory, sizeof(uint64_t) * plan->nnode_memory);
        if (rest &&
            (!charge_bound(v, req->memory_nodes, rest - rest_ordinary, mode, plan->nodes, plan, false) ||
             (rest_ordinary &&
              !charge_bound(v, req->memory_nodes, rest_ordinary, mode, plan->nodes, plan, true)))) {
                memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
                if (plan->node_ordinary)
                        memset(plan->node_ordinary, 0, sizeof(uint64_t) * plan->nnode_memory);
                return;
        }
        /* the cells its own <memnode> does not hold are in that rest: where the binding puts it all on one
         * node (the one placementd bound a guest to at its start, say), that is where each of them is;
         * over several nodes, which pages of which cell lie where is the kernel's, not known */
        {
                g_autoptr(CpuSet) grew = cpuset_new();
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        if (plan->node_memory[n] > before[n])
                                cpuset_add(grew, n);
                for (unsigned c = 0; cpuset_count(grew) == 1 && c < plan->ncells; c++)
                        if (cpuset_is_empty(plan->cells[c].counted_nodes))
                                cpuset_union(plan->cells[c].counted_nodes, grew);
        }
}

/* Hugepage-backed memory comes in whole pages: each node's share rounded down to its pages, and the pages
 * that frees go to the nodes already counting some, those with the most free pages left first (a share
 * of 2.5 one-GiB pages on each of two nodes is 3 + 2, not half pages no guest can use). A guest cell
 * counted whole on one node stays there as it is: QEMU backs it apart, in whole pages of its own
 * (plan_node_whole_cells(); a 1536 MiB cell beside a 1 GiB one on each of two nodes is two pages and one
 * on each, not 3 GiB on one and 2 on the other). What is less than
 * a page takes a whole one there (QEMU rounds the size up): it goes to the node counting the most of those
 * with a page left for it, and only when none has one to the node counting the most. The plan keeps the
 * part's bytes (its memory is the guest's size); the ledger holds the whole page (plan_node_pool_bytes()).
 */
/* The same for one kind of the plan's memory: its own pages (second: false), or its cells of a second
 * page size (Plan.second_page_size). */
static void whole_pages_of(const HostView *v, Plan *plan, bool second)
{
        uint64_t page = second ? plan->second_page_size : plan->hugepage_size, left = 0;
        g_autofree bool *had = g_new0(bool, MAX(plan->nnode_memory, 1));
        g_autofree uint64_t *pages = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        g_autofree uint64_t *whole = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        unsigned most = 0;

        for (unsigned n = 0; n < plan->nnode_memory; n++) {
                pages[n] = second ? plan_node_ordinary(plan, n) : plan_node_pages(plan, n);
                /* a guest cell counted whole on the node is a backend of its own there: it stays */
                whole[n] = plan_node_whole_cells(plan, n, second, false);
                pages[n] -= whole[n];
                had[n] = pages[n] > 0;
                left += pages[n] % page;
                pages[n] -= pages[n] % page;
        }
        while (left >= page) {
                int best = -1;
                uint64_t best_room = 0;
                for (unsigned n = 0; n < plan->nnode_memory; n++) {
                        uint64_t free_pages = ledger_node_free_hugepages(v->l, n, page);
                        uint64_t held = pages[n] + plan_node_whole_cells(plan, n, second, true);
                        uint64_t room = free_pages > held ? free_pages - held : 0;
                        if (had[n] && (best < 0 || room > best_room)) {
                                best = (int)n;
                                best_room = room;
                        }
                }
                if (best < 0)
                        break;
                pages[best] += page;
                left -= page;
        }
        for (unsigned n = 1; n < plan->nnode_memory; n++)
                if (pages[n] > pages[most])
                        most = n;
        if (left) {
                int rest = -1;
                for (unsigned n = 0; n < plan->nnode_memory; n++) {
                        uint64_t free_pages = ledger_node_free_hugepages(v->l, n, page);
                        uint64_t held = pages[n] + plan_node_whole_cells(plan, n, second, true);
                        if (had[n] && free_pages >= held + page && (rest < 0 || pages[n] > pages[rest]))
                                rest = (int)n;
                }
                if (rest >= 0)
                        most = (unsigned)rest;
        }
        if (plan->nnode_memory)
                pages[most] += left;
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                pages[n] += whole[n];
        for (unsigned n = 0; n < plan->nnode_memory; n++) {
                if (second) {
                        plan->node_memory[n] = plan_node_pages(plan, n) + pages[n];
                        plan->node_ordinary[n] = pages[n];
                } else {
                        plan->node_memory[n] = plan_node_ordinary(plan, n) + pages[n];
                }
        }
}

void finish_whole_pages(const HostView *v, Plan *plan)
{
        if (!plan->hugepage_size)
                return;
        /* of a plan with cells of ordinary memory, its hugepage part alone */
        whole_pages_of(v, plan, false);
        if (plan->node_ordinary && plan->second_page_size)
                whole_pages_of(v, plan, true);
}

/* A domain kept to some nodes by its <vcpu cpuset> alone, whose memory they cannot hold while the host
 * can: its memory counted from the allowed node with the most room on, spilling to the nearest nodes as
 * the kernel falls back (nothing binds it). False, counting nothing, when the whole host lacks it (either
 * kind of it, when it has two). */
uint64_t finish_host_room(const HostView *v, const Plan *plan, bool ordinary)
{
        uint64_t room = 0;

        for (unsigned n = 0; n < v->t->nnodes; n++)
                room += spill_room(v, plan, n, false, ordinary);
        return room;
}

bool finish_spill_from_allowed(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        uint64_t best_room = 0;
        uint64_t ordinary = plan->node_ordinary ? req->memory - placement_request_page_memory(req) : 0;
        int best = -1;

        for (unsigned n = 0; n < v->t->nnodes; n++) {
                uint64_t r = spill_room_all(v, plan, n, false);
                if (v->node_allowed[n] && v->t->nodes[n].ncores > 0 && (best < 0 || r > best_room)) {
                        best = (int)n;
                        best_room = r;
                }
        }
        /* each kind in its own room: the host's pages hold none of its ordinary memory, nor one page
         * size's the other's */
        if (best < 0 || finish_host_room(v, plan, false) < req->memory - ordinary ||
            (ordinary && finish_host_room(v, plan, true) < ordinary))
                return false;
        charge_preferred(v, (unsigned)best, req->memory - ordinary, plan, false);
        if (ordinary)
                charge_preferred(v, (unsigned)best, ordinary, plan, true);
        return true;
}

bool finish_memory_spills(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        uint64_t room = 0, allowed_room = 0;

        if (!req->allowed_cpus || (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) ||
            policy_set_memory(req) != req->memory)
                return false;
        /* the allowed nodes' room the search may use, not a lower tier it holds back (MemoryTiers=):
         * memory-only nodes are allowed whatever the cpuset, and counting theirs sent the memory onto
         * the lower tier, no nearer than the first tier the kernel falls back to */
        for (unsigned n = 0; n < v->t->nnodes; n++) {
                uint64_t r = spill_room_all(v, plan, n, false);
                room += r;
                if (v->node_allowed[n] && host_view_memory_usable(v->params, v->t->nodes[n].kind))
                        allowed_room += r;
        }
        return room >= req->memory && allowed_room < req->memory;
}

/* What finish_spill() has to place of each kind: the plan's memory of that kind it counts nowhere yet. */
static void spill_left(const Plan *plan, uint64_t kind[2])
{
        kind[0] = plan->memory;
        kind[1] = 0;
        /* each kind of memory (plan_node_pages(), plan_node_ordinary()) spills in its own room */
        for (unsigned c = 0; plan->node_ordinary && c < plan->ncells; c++)
                if (plan->cells[c].ordinary)
                        kind[1] += plan->cells[c].memory;
        kind[1] = MIN(kind[1], kind[0]);
        kind[0] -= kind[1];
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                for (unsigned k = 0; k < 2; k++)
                        kind[k] -= MIN(kind[k], counted(plan, n, k));
}

uint64_t finish_spill_stuck(const HostView *v, const Plan *plan)
{
        uint64_t kind[2], stuck = 0;

        spill_left(plan, kind);
        for (unsigned k = 0; k < 2; k++) {
                uint64_t room = 0;
                /* the nodes finish_spill() spills to: each takes what it has room for, whatever the order */
                for (unsigned n = 0; n < v->t->nnodes; n++)
                        if (!cpuset_has(plan->nodes, n) && v->t->nodes[n].memory > 0)
                                room += spill_room(v, plan, n, false, k);
                stuck += kind[k] > room ? kind[k] - room : 0;
        }
        return stuck;
}

void finish_spill(const HostView *v, Plan *plan, SpillWhy why)
{
        const Topology *t = v->t;
        g_autofree unsigned *order = g_new(unsigned, MAX(t->nnodes, 1));
        g_autofree unsigned *vcpus_on = g_new0(unsigned, MAX(t->nnodes, 1));
        g_autoptr(CpuSet) spilled = cpuset_new();
        g_autofree char *list = NULL;
        uint64_t kind[2], moved = 0, stuck = 0;
        unsigned n_order = 0, first = 0;
        char a[32], b[32];

        spill_left(plan, kind);
        if (!kind[0] && !kind[1])
                return;
        /* from the node that runs most of its vCPUs, nearest first */
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        vcpus_on[t->cores[t->pus[plan->vcpu_pu[i]].core].node]++;
        for (unsigned n = 1; n < t->nnodes; n++)
                if (vcpus_on[n] > vcpus_on[first])
                        first = n;
        for (unsigned n = 0; n < t->nnodes; n++)
                if (!cpuset_has(plan->nodes, n) && t->nodes[n].memory > 0)
                        order[n_order++] = n;
        order_nearest(t, first, order, n_order);
        for (unsigned k = 0; k < 2; k++) {
                uint64_t left = kind[k];
                for (unsigned i = 0; i < n_order && left; i++) {
                        uint64_t take = MIN(left, spill_room(v, plan, order[i], false, k));
                        if (take)
                                cpuset_add(spilled, t->nodes[order[i]].os_index);
                        charge(plan, order[i], take, k);
                        left -= take;
                }
                charge(plan, first, left, k);
                moved += kind[k] - left;
                stuck += left;
        }
        list = cpuset_format(spilled);
        {
                g_autofree char *reason = plan->reason;
                g_autofree char *where = moved ? g_strdup_printf(": counted on node%s %s, nearest its vCPUs",
                                                                 cpuset_count(spilled) == 1 ? "" : "s", list)
                                               : g_strdup("");
                g_autofree char *rest =
                    stuck ? g_strdup_printf("%s%s counted on node %u, beside its vCPUs: no node has the "
                                            "room, the guest's memory cannot all be backed",
                                            moved ? "; " : ": ", size_format(stuck, b, sizeof(b)),
                                            t->nodes[first].os_index)
                          : g_strdup("");
                const char *size = size_format(moved + stuck, a, sizeof(a));
                g_autofree char *what =
                    why == SPILL_CPUSET
                        ? g_strdup_printf(
                              "its <vcpu cpuset> binds no memory and its nodes lack room for %s of it", size)
                    : why == SPILL_PINS
                        ? g_strdup_printf(
                              "the nodes of its pins lack room for %s of its memory, which nothing binds",
                              size)
                        : g_strdup_printf(
                              "its nodes lack room for %s of its memory that nothing binds (a cell's "
                              "<memnode> took it)",
                              size);
                plan->reason = g_strdup_printf("%s; %s%s%s", reason, what, where, rest);
        }
}
