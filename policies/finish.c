/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: pins from the chosen PUs, memory per node, the emulator's CPUs, and the reason. */
#include "finish.h"
#include "cells.h"
#include "load-rules.h"

#include <string.h>
#include "size.h"

static void add_core_pus(const HostView *v, unsigned core, CpuSet *out)
{
        const TopoCore *c = &v->t->cores[core];
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (v->pu_usable[p])
                        cpuset_add(out, v->t->pus[p].os_index);
}

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

static void make_pins(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) set_pus = cpuset_new();

        CPUSET_FOREACH (n, plan->nodes) {
                const TopoNode *node = &t->nodes[n];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                        add_core_pus(v, c, set_pus);
        }
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                if (plan->vcpu_pu[i] < 0)
                        continue;
                if (plan->vcpu_pin == VCPU_PIN_CORE || plan->vcpu_pin == VCPU_PIN_THREAD)
                        policy_pin_vcpu(v, plan, i);
                else
                        cpuset_union(plan->vcpu_pins[i], set_pus);
        }
}

void policy_pin_vcpu(const HostView *v, Plan *plan, unsigned i)
{
        int pu = plan->vcpu_pu[i];

        if (pu < 0)
                return;
        switch (plan->vcpu_pin) {
        case VCPU_PIN_CORE: {
                /* the core's threads; under compat, which places a vCPU on a free thread beside another
                 * domain's as if nothing were shared, less that domain's vCPU or held CPU (a Nova guest's
                 * dedicated CPU is not this vCPU's to float on); overcommitted, the whole core, less CPUs
                 * held for another domain's isolated emulator when the vCPU runs beside them */
                const TopoCore *c = &v->t->cores[v->t->pus[pu].core];
                bool own_free =
                    (plan->policy == POLICY_COMPAT || ledger_core_held(v->l, v->t->pus[pu].core)) &&
                    !ledger_pu_load(v->l, (unsigned)pu) && !ledger_pu_held(v->l, (unsigned)pu);
                cpuset_clear(plan->vcpu_pins[i]);
                for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                        if (v->pu_usable[p] && (p == (unsigned)pu || !own_free ||
                                                (!ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p))))
                                cpuset_add(plan->vcpu_pins[i], v->t->pus[p].os_index);
                break;
        }
        case VCPU_PIN_THREAD:
                cpuset_clear(plan->vcpu_pins[i]);
                cpuset_add(plan->vcpu_pins[i], v->t->pus[pu].os_index);
                break;
        default:
                break; /* the whole set: moving inside it changes no pin */
        }
}

/* Charges up to amount on the set's nodes in proportion to vcpus_on, within their free memory. */
/* What node n's free memory still holds beside what plan counts there (0 when bound memory, which is
 * where it is bound, already takes more). */
static uint64_t room_left(const HostView *v, const Plan *plan, unsigned n)
{
        return v->node_free_memory[n] > plan->node_memory[n] ? v->node_free_memory[n] - plan->node_memory[n]
                                                             : 0;
}

static uint64_t charge_by_vcpus(const HostView *v, Plan *plan, const unsigned *vcpus_on, unsigned placed,
                                uint64_t amount)
{
        uint64_t charged = 0;

        CPUSET_FOREACH (n, plan->nodes) {
                uint64_t share = placed ? (uint64_t)((unsigned __int128)amount * vcpus_on[n] / placed) : 0;
                share = MIN(MIN(share, room_left(v, plan, (unsigned)n)), amount - charged);
                plan->node_memory[n] += share;
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

static bool charge_bound(const HostView *v, const CpuSet *os_nodes, uint64_t bytes, MemoryMode mode,
                         const CpuSet *runs_on, Plan *plan);

/* Charges up to amount on the plan's nodes with room left (memory-only nodes included), nearest the
 * vCPUs counted in vcpus_on first: the kernel falls back to the nearest node with room. */
static uint64_t charge_nearest(const HostView *v, Plan *plan, const unsigned *vcpus_on, uint64_t amount)
{
        const Topology *t = v->t;
        g_autofree unsigned *order = g_new(unsigned, MAX(t->nnodes, 1));
        g_autofree uint64_t *far = g_new0(uint64_t, MAX(t->nnodes, 1));
        unsigned n_order = 0;
        uint64_t charged = 0;

        CPUSET_FOREACH (n, plan->nodes) {
                for (unsigned m = 0; m < t->nnodes; m++)
                        far[n] += (uint64_t)vcpus_on[m] * topology_distance(t, m, (unsigned)n);
                order[n_order++] = (unsigned)n;
        }
        order_by_key(order, n_order, far);
        for (unsigned i = 0; i < n_order && charged < amount; i++) {
                uint64_t take = MIN(room_left(v, plan, order[i]), amount - charged);
                plan->node_memory[order[i]] += take;
                charged += take;
        }
        return charged;
}

/* Adds to the cell's counted nodes those whose count grew since before[] was taken. */
static void record_counted(const Plan *plan, uint64_t *before, PlanCell *cell)
{
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n] > before[n])
                        cpuset_add(cell->counted_nodes, n);
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
        uint64_t left = plan->memory;

        /* First: each guest cell's memory where its <memnode> binds it, or else where its vCPUs run; then
         * what their nodes lack the room for, each cell's on the nodes nearest its own vCPUs (a cell is
         * bound as a whole: what it needs is where its own memory lies, not the domain's); then the rest
         * in proportion to the vCPUs of no cell (of all of them when every vCPU has a cell). */
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t bytes = MIN(plan->cells[c].memory, left);
                cpuset_clear(plan->cells[c].counted_nodes);
                if (counts)
                        memcpy(before, plan->node_memory, counts);
                if (!cpuset_is_empty(plan->cells[c].memory_nodes) &&
                    charge_bound(v, plan->cells[c].memory_nodes, bytes, MEMORY_MODE_STRICT,
                                 plan->cells[c].nodes, plan)) {
                        left -= bytes;
                        record_counted(plan, before, &plan->cells[c]);
                        continue;
                }
                placed = count_vcpus(t, plan, plan->cells[c].vcpus, vcpus_on);
                if (placed) {
                        uint64_t charged = charge_by_vcpus(v, plan, vcpus_on, placed, bytes);
                        left -= charged;
                        short_of[c] = bytes - charged;
                } else {
                        memory_only[c] = true;
                }
                record_counted(plan, before, &plan->cells[c]);
        }
        for (unsigned c = 0; c < plan->ncells; c++) {
                if (!short_of[c])
                        continue;
                if (counts)
                        memcpy(before, plan->node_memory, counts);
                count_vcpus(t, plan, plan->cells[c].vcpus, vcpus_on);
                left -= charge_nearest(v, plan, vcpus_on, short_of[c]);
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
         * the plan says where it went */
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t bytes = MIN(plan->cells[c].memory, left), charged;
                if (!memory_only[c] || !bytes)
                        continue;
                if (counts)
                        memcpy(before, plan->node_memory, counts);
                charged = charge_by_vcpus(v, plan, vcpus_on, placed, bytes);
                charged += charge_nearest(v, plan, vcpus_on, bytes - charged);
                left -= charged;
                record_counted(plan, before, &plan->cells[c]);
        }
        left -= charge_by_vcpus(v, plan, vcpus_on, placed, left);
        /* Then whatever did not fit, nearest the vCPUs first */
        charge_nearest(v, plan, vcpus_on, left);
}

/* Where the emulator and I/O threads of a plan went (the last resort is said in the reason). */
typedef enum HousekeepingPlace {
        HOUSEKEEPING_NONE,       /* not pinned */
        HOUSEKEEPING_ELSEWHERE,  /* siblings, housekeeping CPUs, free cores or the node set */
        HOUSEKEEPING_OWN_CORES,  /* nothing else: the domain's own vCPU cores */
        HOUSEKEEPING_PLAIN_CORE, /* realtime, nothing in its set: the nearest core without a realtime vCPU */
} HousekeepingPlace;

/* The vacant siblings of the plan's own cores that hold no realtime vCPU of it. */
static void add_idle_siblings(const HostView *v, const Plan *plan, CpuSet *out)
{
        const Topology *t = v->t;

        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                if (!policy_own_core(v, plan, c) || policy_own_realtime_core(v, plan, c))
                        continue;
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                        if (policy_pu_vacant(v, plan, p))
                                cpuset_add(out, t->pus[p].os_index);
        }
}

/*
 * The housekeeping CPUs (HousekeepingCPUs=, else ReservedCPUs=) inside the request's CPUs on cores
 * without vCPUs: those on the plan's nodes, else every one (their work is small, a core of its own is
 * not).
 */
static void add_housekeeping(const HostView *v, const PlacementRequest *req, const Plan *plan, CpuSet *out)
{
        const Topology *t = v->t;
        const CpuSet *hk =
            v->params->housekeeping_cpus ? v->params->housekeeping_cpus : v->params->reserved_cpus;

        for (unsigned pass = 0; pass < 2 && hk && cpuset_is_empty(out); pass++)
                for (unsigned p = 0; p < t->npus; p++) {
                        unsigned c = t->pus[p].core, os = t->pus[p].os_index;
                        if (!cpuset_has(hk, os) ||
                            (v->params->unavailable_cpus && cpuset_has(v->params->unavailable_cpus, os)) ||
                            (req->allowed_cpus && !cpuset_has(req->allowed_cpus, os)) ||
                            ledger_core_load(v->l, c) > 0 || policy_own_core(v, plan, c) ||
                            (pass == 0 && !cpuset_has(plan->nodes, t->cores[c].node)))
                                continue;
                        cpuset_add(out, os);
                }
}

/*
 * The set's cores no vCPU holds (with_own: and the plan's own cores), PUs QEMU's threads may use. Of its
 * own cores only the PUs that carry no other domain's vCPU and that no other domain holds: under compat
 * (or overcommitted) a core of its own may be another domain's too, and its thread there is that
 * domain's.
 */
static void add_set_cores(const HostView *v, const Plan *plan, bool with_own, CpuSet *out)
{
        const Topology *t = v->t;

        CPUSET_FOREACH (n, plan->nodes) {
                const TopoNode *node = &t->nodes[n];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        bool own = policy_own_core(v, plan, c);
                        if (!(own && with_own) && !(!own && ledger_core_free(v->l, c)))
                                continue;
                        for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus;
                             p++)
                                if (v->pu_thread_usable[p] &&
                                    (!own || (!ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p))))
                                        cpuset_add(out, t->pus[p].os_index);
                }
        }
}

/* For a realtime domain with no free core in its set: a core that holds no realtime vCPU, a free one first
 * (the nearest to its nodes), else the one with fewest vCPUs (QEMU's threads beside ordinary vCPUs, never
 * beside a FIFO vCPU, which would starve them). */
static void add_nearest_plain_core(const HostView *v, const Plan *plan, CpuSet *out)
{
        const Topology *t = v->t;
        int first = cpuset_next(plan->nodes, 0), best = -1;
        uint64_t best_key = 0;

        if (first < 0)
                return;
        for (unsigned c = 0; c < t->ncores; c++) {
                uint64_t key;
                if (policy_own_core(v, plan, c) || ledger_core_realtime(v->l, c) ||
                    policy_core_first_usable_pu(v, c) < 0 || policy_core_reserved(v, c))
                        continue;
                /* a free core anywhere before another domain's vCPU nearby, then the nearest */
                key = (uint64_t)(ledger_core_free(v->l, c) ? 0 : 1) << 63 |
                      (uint64_t)MIN(ledger_core_load(v->l, c), 0x7fffu) << 48 |
                      (uint64_t)topology_distance(t, (unsigned)first, t->cores[c].node);
                if (best < 0 || key < best_key) {
                        best = (int)c;
                        best_key = key;
                }
        }
        if (best >= 0)
                add_core_pus(v, (unsigned)best, out);
}

/*
 * The CPUs of the emulator and I/O threads. EmulatorPin=nodeset: the set minus other domains' cores.
 * siblings: the idle siblings of its own cores, else the housekeeping CPUs, else the set's free cores
 * (realtime: else the nearest core without a realtime vCPU); the domain's own cores only when nothing
 * else is left.
 */
static HousekeepingPlace pick_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan,
                                           CpuSet *out)
{
        bool narrow = false;

        if (v->params->emulator_pin == EMULATOR_PIN_NONE)
                return HOUSEKEEPING_NONE;
        if (load_pick_emulator(v, plan)) {
                /* busy host-side threads: a core of their own (it fills the plan's emulator pin) */
                cpuset_union(out, plan->emulator_pin);
                cpuset_clear(plan->emulator_pin);
                return HOUSEKEEPING_ELSEWHERE;
        }
        switch (v->params->emulator_pin) {
        case EMULATOR_PIN_NODESET:
                add_set_cores(v, plan, true, out);
                break;
        default:
                add_idle_siblings(v, plan, out); /* a realtime vCPU's core is its own, sibling included */
                narrow = true;
                if (cpuset_is_empty(out)) {
                        add_housekeeping(v, req, plan, out);
                        narrow = cpuset_is_empty(out); /* the housekeeping CPUs are theirs to share */
                }
                if (cpuset_is_empty(out))
                        add_set_cores(v, plan, false, out);
                /* only some vCPUs realtime (Nova's realtime mask): beside the others, as Nova puts it */
                for (unsigned c = 0; c < v->t->ncores && cpuset_is_empty(out) && req->realtime &&
                                     !placement_request_all_realtime(req);
                     c++)
                        if (policy_own_core(v, plan, c) && !policy_own_realtime_core(v, plan, c))
                                add_core_pus(v, c, out);
                if (cpuset_is_empty(out) && req->realtime) {
                        add_nearest_plain_core(v, plan, out);
                        if (!cpuset_is_empty(out))
                                return HOUSEKEEPING_PLAIN_CORE;
                }
                break;
        }
        /* measured busy host-side threads: cores that carry them */
        load_spread_idle_host(v, plan, out, narrow);
        if (!cpuset_is_empty(out))
                return HOUSEKEEPING_ELSEWHERE;
        for (unsigned c = 0; c < v->t->ncores; c++)
                if (policy_own_core(v, plan, c))
                        add_core_pus(v, c, out);
        return cpuset_is_empty(out) ? HOUSEKEEPING_NONE : HOUSEKEEPING_OWN_CORES;
}

/* The emulator (unless the user pins it) and the I/O threads the user does not pin go to the CPUs
 * pick_housekeeping() chooses. Returns where they went. */
static HousekeepingPlace pin_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) cpus = cpuset_new();
        HousekeepingPlace where;

        if (req->iothreads) {
                cpuset_union(plan->iothreads, req->iothreads);
                if (req->kept_iothreads)
                        cpuset_subtract(plan->iothreads, req->kept_iothreads);
        }
        if (req->keep_emulator && cpuset_is_empty(plan->iothreads))
                return HOUSEKEEPING_NONE;
        where = pick_housekeeping(v, req, plan, cpus);
        if (!req->keep_emulator)
                cpuset_union(plan->emulator_pin, cpus);
        if (cpuset_is_empty(cpus))
                cpuset_clear(plan->iothreads);
        else if (!cpuset_is_empty(plan->iothreads))
                cpuset_union(plan->iothread_pin, cpus);
        return where;
}

void finish_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        if (!req->keep_emulator)
                cpuset_clear(plan->emulator_pin);
        cpuset_clear(plan->iothreads);
        cpuset_clear(plan->iothread_pin);
        pin_housekeeping(v, req, plan);
}

void policy_count_shared(const HostView *v, Plan *plan)
{
        g_autofree unsigned *own = g_new0(unsigned, MAX(v->t->ncores, 1));

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        own[v->t->pus[plan->vcpu_pu[i]].core]++;
        plan->shared_vcpus = 0;
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                unsigned core;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                core = v->t->pus[plan->vcpu_pu[i]].core;
                if (own[core] + ledger_core_load(v->l, core) >= 2)
                        plan->shared_vcpus++;
        }
}

/* "nodes 0-1", and the CPUs local to no NUMA node by their CPUs: they are no node's, never local. */
static char *format_nodes(const Topology *t, const CpuSet *node_indexes)
{
        g_autoptr(CpuSet) os = cpuset_new();
        g_autoptr(CpuSet) orphans = cpuset_new();
        g_autofree char *list = NULL, *cpus = NULL;

        CPUSET_FOREACH (n, node_indexes) {
                if (t->nodes[n].no_local_memory)
                        cpuset_union(orphans, t->nodes[n].cpus);
                else
                        cpuset_add(os, t->nodes[n].os_index);
        }
        list = cpuset_format(os);
        if (cpuset_is_empty(orphans))
                return g_strdup_printf("%s %s", cpuset_count(os) == 1 ? "node" : "nodes", list);
        cpus = cpuset_format(orphans);
        return g_strdup_printf("%s%s%s%sCPUs %s (local to no NUMA node)",
                               cpuset_count(os) == 1 ? "node " : "", cpuset_count(os) > 1 ? "nodes " : "",
                               list, *list ? " with " : "", cpus);
}

/* What node n can still take of this plan's memory, whatever the request's binding: its free memory (or
 * free hugepages of the plan's size) less what the plan already counts there. GPU memory takes none
 * unless chosen (the node the binding names). */
static uint64_t spill_room(const HostView *v, const Plan *plan, unsigned n, bool chosen)
{
        const TopoNode *node = &v->t->nodes[n];
        uint64_t used = ledger_node_memory(v->l, n), reserve = v->params->memory_reserve, free;

        /* the node the user chose holds memory whatever its kind; the kernel falls back to no GPU's */
        if (node->kind == NODE_KIND_GPU && !chosen)
                return 0;
        if (plan->hugepage_size)
                free = ledger_node_free_hugepages(v->l, n, plan->hugepage_size);
        else
                free =
                    node->memory > used && node->memory - used > reserve ? node->memory - used - reserve : 0;
        return free > plan->node_memory[n] ? free - plan->node_memory[n] : 0;
}

/* mode='preferred': the first node takes what it has room for, and the kernel falls back to the nearest
 * nodes for the rest (what a full node cannot hold is not there); anything no node has room for is
 * counted on the first. */
static void charge_preferred(const HostView *v, unsigned first, uint64_t bytes, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *order = g_new(unsigned, MAX(t->nnodes, 1));
        unsigned n = 0;
        uint64_t take = MIN(bytes, spill_room(v, plan, first, true));

        plan->node_memory[first] += take;
        bytes -= take;
        for (unsigned k = 0; k < t->nnodes; k++)
                if (k != first && t->nodes[k].memory > 0)
                        order[n++] = k;
        order_nearest(t, first, order, n);
        for (unsigned i = 0; i < n && bytes; i++) {
                take = MIN(bytes, spill_room(v, plan, order[i], false));
                plan->node_memory[order[i]] += take;
                bytes -= take;
        }
        plan->node_memory[first] += bytes;
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
                         const CpuSet *runs_on, Plan *plan)
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
                charge_preferred(v, (unsigned)cpuset_next(nodes, 0), bytes, plan);
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
                uint64_t take = MIN(share, spill_room(v, plan, (unsigned)n, true));
                plan->node_memory[n] += take;
                left -= take;
        }
        /* the rest: the bound nodes nearest the first, the first itself before them */
        CPUSET_FOREACH (n, nodes)
                order[n_order++] = (unsigned)n;
        order_nearest(t, first, order, n_order);
        for (unsigned i = 0; i < n_order && left; i++) {
                uint64_t take = MIN(left, spill_room(v, plan, order[i], true));
                plan->node_memory[order[i]] += take;
                left -= take;
        }
        plan->node_memory[first] += left;
        return true;
}

/*
 * Memory the request binds itself is counted where it is bound (charge_bound()): a cell's memory on the
 * nodes its <memnode> names (its own mode is not kept: as strict), the rest as its <numatune><memory>
 * mode puts it.
 */
void policy_drop_poolless_memory(const Topology *t, Plan *plan)
{
        for (unsigned n = 0; plan->hugepage_size && n < plan->nnode_memory; n++)
                if (!topology_node_hugepage_bytes(t, n, plan->hugepage_size))
                        plan->node_memory[n] = 0;
}

void policy_charge_bound_memory(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        g_autofree uint64_t *before = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        uint64_t rest = plan->memory;

        memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
        /* each bound cell records where it is counted (its memory_nodes in the decision), so that the
         * snippet's <memnode> keeps it there rather than on its vCPUs' nodes */
        for (unsigned c = 0; c < plan->ncells; c++) {
                uint64_t bytes = MIN(plan->cells[c].memory, rest);
                cpuset_clear(plan->cells[c].counted_nodes);
                if (plan->nnode_memory)
                        memcpy(before, plan->node_memory, sizeof(uint64_t) * plan->nnode_memory);
                if (!cpuset_is_empty(plan->cells[c].memory_nodes) &&
                    charge_bound(v, plan->cells[c].memory_nodes, bytes, MEMORY_MODE_STRICT,
                                 plan->cells[c].nodes, plan)) {
                        rest -= bytes;
                        record_counted(plan, before, &plan->cells[c]);
                }
        }
        if (rest && !charge_bound(v, req->memory_nodes, rest,
                                  req->memory_source == MEMORY_SOURCE_MEMNODE ? MEMORY_MODE_STRICT
                                                                              : req->memory_mode,
                                  plan->nodes, plan))
                memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
}

static const char *memory_source_text(const PlacementRequest *req)
{
        switch (req->memory_source) {
        case MEMORY_SOURCE_USER:
                return "its <numatune><memory> binds";
        case MEMORY_SOURCE_MEMNODE:
                return "its <numatune><memnode> elements bind";
        default:
                return "a live binding libvirt cannot change on a running domain binds";
        }
}

/* The I/O threads the user pins, for the reason. */
static void iothread_note(const PlacementRequest *req, GString *s)
{
        g_autofree char *ids = NULL;
        bool one;

        if (!req->kept_iothreads || cpuset_is_empty(req->kept_iothreads))
                return;
        ids = cpuset_format(req->kept_iothreads);
        one = cpuset_count(req->kept_iothreads) == 1;
        g_string_append_printf(s, "; I/O thread%s %s stay%s where <cputune><iothreadpin> puts %s",
                               one ? "" : "s", ids, one ? "s" : "", one ? "it" : "them");
}

/* The nodes (OS indexes) of the guest cells' <memnode> elements that do not fall back to other nodes:
 * strict (libvirt's default) or restrictive; with hugepages, every one (QEMU preallocates them there). */
static CpuSet *cells_binding_nodes(const PlacementRequest *req)
{
        CpuSet *nodes = cpuset_new();

        for (unsigned c = 0; c < req->ncells; c++)
                if (req->cells[c].memory_nodes &&
                    (req->hugepage_size || req->cells[c].memory_mode == MEMORY_MODE_STRICT ||
                     req->cells[c].memory_mode == MEMORY_MODE_RESTRICTIVE))
                        cpuset_union(nodes, req->cells[c].memory_nodes);
        return nodes;
}

/* Bound memory beyond what its nodes have free: said, as QEMU will not find the hugepages, and the
 * kernel cannot give more than a node has under a binding that does not fall back: a <numatune><memory>
 * in any mode but preferred, and a <memnode> strict or restrictive (cells_binding_nodes()). only: the
 * nodes (OS indexes) to look at, NULL for all. */
static void memory_short_note(const HostView *v, const PlacementRequest *req, const Plan *plan,
                              const CpuSet *only, GString *s)
{
        g_autoptr(CpuSet) cells_nodes = NULL;
        char a[32], b[32], c[32];

        if (!req->hugepage_size && req->memory_mode == MEMORY_MODE_PREFERRED &&
            (req->memory_source == MEMORY_SOURCE_USER || req->memory_source == MEMORY_SOURCE_BOUND))
                return;
        /* bound per cell: the nodes of the cells that do not fall back */
        if (req->memory_source == MEMORY_SOURCE_MEMNODE && !only)
                only = cells_nodes = cells_binding_nodes(req);
        for (unsigned n = 0; n < plan->nnode_memory; n++) {
                if (only && !cpuset_has(only, v->t->nodes[n].os_index))
                        continue;
                uint64_t held = ledger_node_memory(v->l, n), size = v->t->nodes[n].memory;
                uint64_t free_bytes = req->hugepage_size
                                          ? ledger_node_free_hugepages(v->l, n, req->hugepage_size)
                                      : size > held ? size - held
                                                    : 0;
                if (plan->node_memory[n] <= free_bytes)
                        continue;
                if (req->hugepage_size && !topology_node_hugepage_bytes(v->t, n, req->hugepage_size))
                        g_string_append_printf(s,
                                               "; node %u has no pool of %s hugepages for the %s bound "
                                               "there: the guest's memory cannot all be backed (the ledger "
                                               "holds none of it there)",
                                               v->t->nodes[n].os_index,
                                               size_format(req->hugepage_size, b, sizeof(b)),
                                               size_format(plan->node_memory[n], c, sizeof(c)));
                else if (req->hugepage_size)
                        g_string_append_printf(s,
                                               "; node %u has %s free in hugepages of %s for the %s bound "
                                               "there: the guest's memory cannot all be backed",
                                               v->t->nodes[n].os_index,
                                               size_format(free_bytes, a, sizeof(a)),
                                               size_format(req->hugepage_size, b, sizeof(b)),
                                               size_format(plan->node_memory[n], c, sizeof(c)));
                else
                        g_string_append_printf(s,
                                               "; node %u has %s free for the %s bound there: the guest "
                                               "cannot get all its memory (the kernel reclaims, swaps or "
                                               "kills)",
                                               v->t->nodes[n].os_index,
                                               size_format(free_bytes, a, sizeof(a)),
                                               size_format(plan->node_memory[n], c, sizeof(c)));
        }
}

/* Where the plan stands to the PCI devices the domain passes through: their nodes (one device may be
 * local to several), those of them in the plan's set, and why not when none is. */
static void device_note(const HostView *v, const PlacementRequest *req, const Plan *plan, GString *s)
{
        g_autoptr(CpuSet) all = cpuset_new(), near = cpuset_new();
        g_autofree char *all_list = NULL, *near_list = NULL;
        bool constrained;

        if (!req->device_nodes || plan->result == PLAN_UNPLACEABLE)
                return;
        CPUSET_FOREACH (n, req->device_nodes) {
                cpuset_add(all, v->t->nodes[n].os_index);
                if (cpuset_has(plan->nodes, (unsigned)n))
                        cpuset_add(near, v->t->nodes[n].os_index);
        }
        all_list = cpuset_format(all);
        near_list = cpuset_format(near);
        /* the constraints kept it away when they leave it none of the devices' nodes */
        constrained = true;
        CPUSET_FOREACH (n, req->device_nodes)
                constrained = constrained && !v->node_allowed[n];
        if (cpuset_equal(all, near))
                g_string_append_printf(s, "; near its PCI devices (node%s %s)",
                                       cpuset_count(all) == 1 ? "" : "s", all_list);
        else if (!cpuset_is_empty(near))
                g_string_append_printf(s, "; near its PCI devices (local to nodes %s; the set has %s)",
                                       all_list, near_list);
        else
                g_string_append_printf(
                    s, "; away from its PCI devices (node%s %s)%s", cpuset_count(all) == 1 ? "" : "s",
                    all_list,
                    plan->result != PLAN_PLACED ? ""
                    : constrained               ? ": its constraints rule out their nodes"
                    : policy_housekeeping_needs_core(v)
                        ? ": no equally near set with them has a core per vCPU and one to "
                          "spare for its emulator"
                        : ": no equally near set with them has room");
}

/*
 * For memory bound to nodes the vCPUs cannot run on (HostView.memory_remote): where the cores were taken
 * and why, "cores taken on node 1, the nearest to them with free cores for every vCPU (nearer ones have
 * too few)"; with_cpus names what the nearest nodes have ("with CPUs", "with one").
 */
static char *remote_cores_text(const HostView *v, const Plan *plan, const char *with_cpus)
{
        const PolicyOps *ops = policy_ops(plan->policy);
        g_autofree char *where = format_nodes(v->t, plan->nodes);
        uint32_t nearest = TOPOLOGY_UNREACHABLE, farthest = 0;

        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (v->node_allowed[n] && v->node_usable_cores[n] > 0)
                        nearest = MIN(nearest, v->node_to_memory[n]);
        CPUSET_FOREACH (n, plan->nodes)
                if (v->node_usable_cores[n] > 0)
                        farthest = MAX(farthest, v->node_to_memory[n]);
        if (farthest <= nearest)
                return g_strdup_printf("cores taken on %s, the nearest to them %s", where, with_cpus);
        if (plan->result == PLAN_PLACED)
                return g_strdup_printf(
                    "cores taken on %s, the nearest to them with %s for every vCPU (nearer "
                    "ones have too few)",
                    where, ops->unit);
        return g_strdup_printf("cores taken on %s, the nearest to them of the sets with the most %s", where,
                               ops->unit);
}

/* How much of a plural unit ("free cores") to print for count of it: "1 free core". */
static int unit_len(const char *unit, unsigned count)
{
        size_t n = strlen(unit);

        return (int)(count == 1 && n > 1 && unit[n - 1] == 's' ? n - 1 : n);
}

/* The room (PolicyOps.capacity) the nodes the request binds its memory to offer its vCPUs. */
static unsigned bound_room(const HostView *v, const PlacementRequest *req)
{
        unsigned room = 0;

        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (cpuset_has(req->memory_nodes, v->t->nodes[n].os_index))
                        room += v->node_capacity[n];
        return room;
}

/* Whether nodes (OS indexes) names a node this host does not have; those into missing when not NULL. */
static bool memory_nodes_missing(const Topology *t, const CpuSet *nodes, CpuSet *missing)
{
        bool any = false;

        CPUSET_FOREACH (n, nodes) {
                int idx = topology_node_by_os(t, (unsigned)n);
                if (idx >= 0 && !t->nodes[idx].no_local_memory)
                        continue;
                any = true;
                if (missing)
                        cpuset_add(missing, (unsigned)n);
        }
        return any;
}

/* Whether nodes (OS indexes) names no node of this host at all. */
static bool memory_nodes_all_missing(const Topology *t, const CpuSet *nodes)
{
        CPUSET_FOREACH (n, nodes) {
                int idx = topology_node_by_os(t, (unsigned)n);
                if (idx >= 0 && !t->nodes[idx].no_local_memory)
                        return false;
        }
        return true;
}

/* Why no CPU of a <vcpu cpuset> can take a vCPU on this host whatever else the request says ("CPUs 100-103
 * are not online and allowed on this host (offline, disallowed or absent), CPU 0 is in ReservedCPUs="),
 * NULL when one can. */
static char *cpuset_unusable_text(const HostView *v, const CpuSet *cpus)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) absent = cpuset_new(), reserved = cpuset_new(), kinds = cpuset_new();
        GString *s;

        CPUSET_FOREACH (cpu, cpus) {
                int pu = topology_pu_by_os(t, (unsigned)cpu);
                if (pu < 0)
                        cpuset_add(absent, (unsigned)cpu);
                else if (v->params->reserved_cpus && cpuset_has(v->params->reserved_cpus, (unsigned)cpu))
                        cpuset_add(reserved, (unsigned)cpu);
                else if (v->params->core_kinds == CORE_KINDS_PERFORMANCE_ONLY &&
                         t->cores[t->pus[pu].core].kind_rank > 0)
                        cpuset_add(kinds, (unsigned)cpu);
                else
                        return NULL;
        }
        s = g_string_new(NULL);
        if (!cpuset_is_empty(absent)) {
                g_autofree char *list = cpuset_format(absent);
                g_string_append_printf(
                    s,
                    "CPU%s %s %s not online and allowed on this host (offline, disallowed "
                    "or absent)",
                    cpuset_count(absent) == 1 ? "" : "s", list, cpuset_count(absent) == 1 ? "is" : "are");
        }
        if (!cpuset_is_empty(reserved)) {
                g_autofree char *list = cpuset_format(reserved);
                g_string_append_printf(s, "%sCPU%s %s %s in ReservedCPUs=", s->len ? ", " : "",
                                       cpuset_count(reserved) == 1 ? "" : "s", list,
                                       cpuset_count(reserved) == 1 ? "is" : "are");
        }
        if (!cpuset_is_empty(kinds)) {
                g_autofree char *list = cpuset_format(kinds);
                g_string_append_printf(s,
                                       "%sCPU%s %s %s of a kind CoreKinds=performance-only keeps from vCPUs",
                                       s->len ? ", " : "", cpuset_count(kinds) == 1 ? "" : "s", list,
                                       cpuset_count(kinds) == 1 ? "is" : "are");
        }
        return g_string_free(s, FALSE);
}

/* What the constraints did, appended to the reason ("" when there are none). */
static char *constraint_note(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        const Topology *t = v->t;
        GString *s = g_string_new(NULL);

        if (req->allowed_cpus) {
                g_autofree char *list = cpuset_format(req->allowed_cpus);
                g_autofree char *why = cpuset_unusable_text(v, req->allowed_cpus);
                if (why)
                        g_string_append_printf(
                            s, "; none of the CPUs of its <vcpu cpuset='%s'> is usable: %s", list, why);
                else
                        g_string_append_printf(s, "; kept inside <vcpu cpuset='%s'>", list);
        }
        if (req->caches_outside_cpuset)
                g_string_append(s, "; the caches its <cachetune>/<memorytune> reserve lie outside its <vcpu "
                                   "cpuset>, which libvirt applies: kept inside the cpuset");
        if (req->cache_cpus) {
                g_autofree char *list = cpuset_format(req->cache_cpus);
                g_string_append_printf(s,
                                       "; kept on CPUs %s, under the caches its <cachetune>/<memorytune> "
                                       "reserve",
                                       list);
        }
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) {
                g_autofree char *list = cpuset_format(req->memory_nodes);
                g_autoptr(CpuSet) charged = cpuset_new();
                g_autofree char *where = NULL, *remote = NULL, *few = NULL;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        if (plan->node_memory[n])
                                cpuset_add(charged, t->nodes[n].os_index);
                /* memory-only nodes, or nodes its cpuset leaves out: the vCPUs run on the nearest others */
                bool cores_elsewhere = false, memory_has_cpus = false, memory_cpus_allowed = false;
                CPUSET_FOREACH (n, plan->nodes)
                        cores_elsewhere =
                            cores_elsewhere || !cpuset_has(req->memory_nodes, t->nodes[n].os_index);
                for (unsigned n = 0; n < t->nnodes; n++) {
                        const TopoNode *node = &t->nodes[n];
                        if (!cpuset_has(req->memory_nodes, node->os_index))
                                continue;
                        memory_has_cpus = memory_has_cpus || node->ncores > 0;
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                for (unsigned p = t->cores[c].pu_first;
                                     p < t->cores[c].pu_first + t->cores[c].npus; p++)
                                        memory_cpus_allowed =
                                            memory_cpus_allowed ||
                                            placement_request_allows_cpu(req, t->pus[p].os_index);
                }
                where = cpuset_format(charged);
                /* cells bound one by one, some to nodes with cores and some to nodes without a core
                 * they may use: those go to the nearest nodes with free cores (cells_set_homes()) */
                bool cells_elsewhere =
                    cores_elsewhere && req->memory_source == MEMORY_SOURCE_MEMNODE && !v->memory_remote;
                g_autofree char *cells_text = NULL;
                if (cells_elsewhere) {
                        /* the bound nodes where cores were taken: not every one of them need have a core
                         * the cells may use (ReservedCPUs=, memory-only nodes) */
                        g_autoptr(CpuSet) taken = cpuset_new();
                        g_autofree char *taken_list = NULL, *head = NULL;
                        CPUSET_FOREACH (n, plan->nodes)
                                if (cpuset_has(req->memory_nodes, t->nodes[n].os_index))
                                        cpuset_add(taken, t->nodes[n].os_index);
                        taken_list = cpuset_format(taken);
                        if (cpuset_is_empty(taken))
                                head = g_strdup("cores taken on");
                        else if (cpuset_equal(taken, req->memory_nodes))
                                head = g_strdup("cores taken there, and on");
                        else
                                head = g_strdup_printf("cores taken on node%s %s of them, and on",
                                                       cpuset_count(taken) == 1 ? "" : "s", taken_list);
                        cells_text = g_strconcat(head,
                                                 " the nearest nodes with free cores for a cell whose nodes "
                                                 "have no core it may use (its memory remote)",
                                                 NULL);
                }
                /* where the cores are instead, and why (the nearest nodes with a CPU it may use first) */
                if (cores_elsewhere && !cells_elsewhere)
                        remote = v->memory_remote
                                     ? remote_cores_text(v, plan, memory_has_cpus ? "with one" : "with CPUs")
                                     : g_strdup(memory_has_cpus ? "cores taken on the nearest nodes with one"
                                                                : "cores taken on the nearest with CPUs");
                g_string_append_printf(
                    s, "; %s its memory to node%s %s (%s): %s%s%s%s%sthe binding left as it is",
                    memory_source_text(req), cpuset_count(req->memory_nodes) == 1 ? "" : "s", list,
                    req->memory_source == MEMORY_SOURCE_MEMNODE ? "per cell"
                                                                : memory_mode_to_string(req->memory_mode),
                    /* unplaceable: no core was taken anywhere */
                    !cores_elsewhere  ? (plan->result == PLAN_UNPLACEABLE ? "" : "cores taken there")
                    : cells_elsewhere ? cells_text
                    : req->vcpus_beyond_binding
                        ? (few = g_strdup_printf(
                               "%s %u %.*s for %u vCPU%s (a binding confines memory, "
                               "not vCPUs)",
                               cpuset_count(req->memory_nodes) == 1 ? "it has" : "they have",
                               bound_room(v, req),
                               unit_len(policy_ops(plan->policy)->unit, bound_room(v, req)),
                               policy_ops(plan->policy)->unit, plan->nvcpus, plan->nvcpus == 1 ? "" : "s"))
                    : memory_cpus_allowed
                        ? "the configuration keeps their CPUs from vCPUs (ReservedCPUs=, CoreKinds=)"
                    : memory_has_cpus ? (req->allowed_cpus ? "no CPU of its <vcpu cpuset> lies there"
                                                           : "no CPU under the caches its "
                                                             "<cachetune>/<memorytune> reserve lies there")
                                      : "memory-only nodes",
                    remote ? ", " : "", remote ? remote : "",
                    cores_elsewhere && memory_has_cpus && !cells_elsewhere
                        ? (req->vcpus_beyond_binding ? " (its memory is remote to the vCPUs off them)"
                                                     : " (its memory is remote)")
                        : "",
                    !cores_elsewhere && plan->result == PLAN_UNPLACEABLE ? "" : ", ");
                if (*where)
                        g_string_append_printf(
                            s, ", memory counted on node%s %s%s", cpuset_count(charged) == 1 ? "" : "s",
                            where,
                            req->memory_source != MEMORY_SOURCE_MEMNODE &&
                                    req->memory_mode == MEMORY_MODE_PREFERRED
                                ? " (preferred: its first node, the rest on the nearest with room)"
                                : "");
                memory_short_note(v, req, plan, NULL, s);
                /* some nodes of the binding are not this host's (none at all: finish_unplaceable()) */
                if (memory_nodes_missing(t, req->memory_nodes, NULL)) {
                        g_autoptr(CpuSet) missing = cpuset_new();
                        g_autofree char *gone = NULL;
                        memory_nodes_missing(t, req->memory_nodes, missing);
                        gone = cpuset_format(missing);
                        g_string_append_printf(s,
                                               "; node%s %s of that binding %s not on this host: libvirt "
                                               "refuses to start such a guest",
                                               cpuset_count(missing) == 1 ? "" : "s", gone,
                                               cpuset_count(missing) == 1 ? "is" : "are");
                }
        }
        if (req->keep_emulator)
                g_string_append(s,
                                req->emulator_pinned_live
                                    ? "; the emulator stays where it was pinned outside placementd (virsh "
                                      "emulatorpin)"
                                    : "; the emulator stays where <cputune><emulatorpin> puts it");
        iothread_note(req, s);
        device_note(v, req, plan, s);
        return g_string_free(s, FALSE);
}

/* The reason's name for n of what capacity counts: "1 free core", "2 free cores". */
static const char *unit_of(const PolicyOps *ops, unsigned n)
{
        return n == 1 ? ops->unit_one : ops->unit;
}

/* Whom the plan's vCPUs that share a core share it with, core by core; the counts add up to
 * plan->shared_vcpus (policy_count_shared()). */
typedef struct Sharing {
        unsigned siblings;   /* only with the other threads of their own guest core (<topology threads='N'>:
                                overcommit_assign() pairs them) */
        unsigned own;        /* only with other vCPUs of the plan */
        unsigned own_cores;  /* the cores of own */
        unsigned others;     /* alone of the plan, beside other domains' vCPUs */
        unsigned both;       /* with other vCPUs of the plan and other domains' */
        unsigned both_cores; /* the cores of both */
        const char *others_whose, *both_whose; /* whose vCPUs: "another domain's vCPU"... (whose_vcpus()) */
} Sharing;

/* How many domains the ledger counts vCPUs of on each core (ledger_foreach()). */
typedef struct DomainsOnCores {
        const Topology *t;
        unsigned *domains; /* by core */
        unsigned *last;    /* by core: the number of the last domain counted there */
        unsigned n;        /* domains seen so far */
} DomainsOnCores;

static void count_domain_cores(const char *key, const Plan *p, void *userdata)
{
        DomainsOnCores *d = userdata;
        (void)key;

        d->n++;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned c;
                if (p->vcpu_pu[i] < 0 || (unsigned)p->vcpu_pu[i] >= d->t->npus)
                        continue;
                c = d->t->pus[p->vcpu_pu[i]].core;
                if (d->last[c] != d->n) {
                        d->last[c] = d->n;
                        d->domains[c]++;
                }
        }
}

/* Whose vCPUs the plan's vCPUs on cores (a set of core indexes) run beside: "another domain's vCPU" when
 * each such core holds one, "another domain's vCPUs" when it holds more of one domain, "other domains'
 * vCPUs" when a core holds vCPUs of several. domains: by core, NULL until counted (then freed by the
 * caller). */
static const char *whose_vcpus(const HostView *v, const CpuSet *cores, unsigned **domains)
{
        bool many = false;

        CPUSET_FOREACH (c, cores)
                many |= ledger_core_load(v->l, (unsigned)c) > 1;
        if (!many)
                return "another domain's vCPU";
        if (!*domains) {
                g_autofree unsigned *last = g_new0(unsigned, MAX(v->t->ncores, 1));
                DomainsOnCores d = {v->t, g_new0(unsigned, MAX(v->t->ncores, 1)), last, 0};
                ledger_foreach(v->l, count_domain_cores, &d);
                *domains = d.domains;
        }
        CPUSET_FOREACH (c, cores)
                if ((*domains)[c] > 1)
                        return "other domains' vCPUs";
        return "another domain's vCPUs";
}

static Sharing sharing_count(const HostView *v, const Plan *plan, const unsigned *own)
{
        unsigned threads = v->req ? v->req->guest_threads : 0;
        g_autofree int *guest_core = g_new(int, MAX(v->t->ncores, 1)); /* -1: several; -2: none yet */
        g_autofree unsigned *domains = NULL;
        g_autoptr(CpuSet) others = cpuset_new();
        g_autoptr(CpuSet) both = cpuset_new();
        Sharing s = {0};

        for (unsigned c = 0; c < v->t->ncores; c++)
                guest_core[c] = -2;
        for (unsigned i = 0; i < plan->nvcpus && threads >= 2; i++) {
                unsigned c, g = plan_vcpu_id(plan, i) / threads;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                c = v->t->pus[plan->vcpu_pu[i]].core;
                guest_core[c] = guest_core[c] == -2 || guest_core[c] == (int)g ? (int)g : -1;
        }
        for (unsigned c = 0; c < v->t->ncores; c++) {
                unsigned load = ledger_core_load(v->l, c);
                if (!own[c] || own[c] + load < 2)
                        continue;
                if (!load && guest_core[c] >= 0) {
                        s.siblings += own[c];
                } else if (!load) {
                        s.own += own[c];
                        s.own_cores++;
                } else if (own[c] == 1) {
                        s.others++;
                        cpuset_add(others, c);
                } else {
                        s.both += own[c];
                        s.both_cores++;
                        cpuset_add(both, c);
                }
        }
        s.others_whose = whose_vcpus(v, others, &domains);
        s.both_whose = whose_vcpus(v, both, &domains);
        return s;
}

/*
 * Whom the plan's shared vCPUs share a core with, exactly: "2 vCPUs share a core with each other", "1 vCPU
 * shares a core with another domain's vCPU", "2 vCPUs each share a core with another domain's vCPU", "2
 * vCPUs share a core with each other and another domain's vCPU", and where they share in more than one
 * way, "3 vCPUs share cores: 2 with each other, 1 with another domain's vCPU".
 */
static void append_sharing(GString *out, const HostView *v, const Sharing *s)
{
        unsigned total = s->siblings + s->own + s->others + s->both;
        bool mixed = (s->siblings > 0) + (s->own > 0) + (s->others > 0) + (s->both > 0) > 1;
        const char *other = s->others_whose, *both_other = s->both_whose;
        const char *sep = "";

        if (mixed) {
                g_string_append_printf(out, "%u vCPUs share cores: ", total);
                if (s->siblings) {
                        g_string_append_printf(out,
                                               "%u only with the other threads of their guest core "
                                               "(<topology threads='%u'>)",
                                               s->siblings, v->req->guest_threads);
                        sep = ", ";
                }
                if (s->own) {
                        g_string_append_printf(out, "%s%u with each other", sep, s->own);
                        sep = ", ";
                }
                if (s->others) {
                        g_string_append_printf(out, "%s%u %swith %s", sep, s->others,
                                               s->others > 1 ? "each " : "", other);
                        sep = ", ";
                }
                if (s->both)
                        g_string_append_printf(out, "%s%u with each other and %s", sep, s->both, both_other);
                return;
        }
        if (s->siblings)
                g_string_append_printf(
                    out,
                    "%u vCPUs share a core only with the other threads of their guest core "
                    "(<topology threads='%u'>)",
                    s->siblings, v->req->guest_threads);
        else if (s->own)
                g_string_append_printf(out, "%u vCPUs share %s with each other", s->own,
                                       s->own_cores == 1 ? "a core" : "cores");
        else if (s->others == 1)
                g_string_append_printf(out, "1 vCPU shares a core with %s", other);
        else if (s->others)
                g_string_append_printf(out, "%u vCPUs each share a core with %s", s->others, other);
        else if (s->both)
                g_string_append_printf(out, "%u vCPUs share %s with each other and %s", s->both,
                                       s->both_cores == 1 ? "a core" : "cores", both_other);
        else
                g_string_append(out, "no vCPU shares a core with another");
}

/*
 * Who the vCPUs of an overcommitted plan share cores with: other vCPUs (plan->shared_vcpus), and the
 * host's reserved threads (the other vCPUs, alone on a core beside ReservedCPUs=).
 */
static char *sharing_note(const HostView *v, const Plan *plan)
{
        g_autofree unsigned *own = g_new0(unsigned, MAX(v->t->ncores, 1));
        g_autoptr(CpuSet) held = cpuset_new();
        g_autofree char *reserved = NULL;
        unsigned beside = 0, beside_held = 0, shared;
        Sharing sharing;
        GString *s;

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        own[v->t->pus[plan->vcpu_pu[i]].core]++;
        for (unsigned c = 0; c < v->t->ncores; c++) {
                const TopoCore *core = &v->t->cores[c];
                if (own[c] != 1 || ledger_core_load(v->l, c) != 0)
                        continue;
                if (policy_core_reserved(v, c))
                        beside++;
                else if (ledger_core_held(v->l, c)) {
                        /* another domain's emulator or I/O threads, held apart (a guest pinned by hand) */
                        beside_held++;
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                                if (ledger_pu_held(v->l, p))
                                        cpuset_add(held, v->t->pus[p].os_index);
                }
        }
        sharing = sharing_count(v, plan, own);
        shared = sharing.siblings + sharing.own + sharing.others + sharing.both;
        s = g_string_new(NULL);
        append_sharing(s, v, &sharing);
        if (beside) {
                /* ReservedCPUs=, or a thread outside the guests' cpuset (TopoCore.host_thread) */
                if (v->params->reserved_cpus && !cpuset_is_empty(v->params->reserved_cpus)) {
                        g_autofree char *list = cpuset_format(v->params->reserved_cpus);
                        reserved = g_strdup_printf("reserved CPUs (ReservedCPUs=%s)", list);
                } else {
                        reserved = g_strdup("CPUs the host keeps (outside the guests' cpuset)");
                }
                g_string_append_printf(s, ", %u %s%s beside %s", beside, shared ? "more " : "",
                                       beside == 1 ? "runs" : "run", reserved);
        }
        if (beside_held) {
                g_autofree char *list = cpuset_format(held);
                g_string_append_printf(
                    s,
                    ", %u %s%s beside CPU%s %s, held for another domain's emulator or I/O "
                    "threads",
                    beside_held, shared || beside ? "more " : "", beside_held == 1 ? "runs" : "run",
                    cpuset_count(held) == 1 ? "" : "s", list);
        }
        return g_string_free(s, FALSE);
}

/* How the set was chosen among its equally near sets (L3 fit, then Fit=), for the reason ("" when it was
 * the only one). */
static const char *group_note(const HostView *v, const SetChoice *choice)
{
        bool pack = v->params->fit == FIT_PACK;

        if (choice->group_size <= 1)
                return "";
        if (choice->l3_fit && choice->l3_unfit > 0)
                return pack ? ", fullest of its equally near sets where each node's share fits one L3 cache "
                              "(Fit=pack)"
                            : ", least loaded of its equally near sets where each node's share fits one L3 "
                              "cache";
        return pack ? ", fullest of its equally near sets (Fit=pack)"
                    : ", least loaded of its equally near sets";
}

/* "4.0 GiB", or "96.0 MiB in 2.0 MiB hugepages" for hugepage-backed memory; into buf. */
static const char *memory_text(const PlacementRequest *req, uint64_t bytes, char *buf, size_t len)
{
        char a[32], b[32];

        if (!req->hugepage_size)
                return size_format(bytes, buf, len);
        g_snprintf(buf, len, "%s in %s hugepages", size_format(bytes, a, sizeof(a)),
                   size_format(req->hugepage_size, b, sizeof(b)));
        return buf;
}

/* What node n has free for the plan's memory before the plan: its free memory less MemoryReserve=, or its
 * free hugepages of the plan's size. */
static uint64_t node_free_bytes(const HostView *v, const Plan *plan, unsigned n)
{
        uint64_t used = ledger_node_memory(v->l, n), reserve = v->params->memory_reserve;
        uint64_t size = v->t->nodes[n].memory;

        if (plan->hugepage_size)
                return ledger_node_free_hugepages(v->l, n, plan->hugepage_size);
        return size > used && size - used > reserve ? size - used - reserve : 0;
}

/* Whether the plan counts memory on a node outside its set. */
static bool counted_outside_set(const Topology *t, const Plan *plan)
{
        for (unsigned n = 0; n < plan->nnode_memory && n < t->nnodes; n++)
                if (plan->node_memory[n] && !cpuset_has(plan->nodes, n))
                        return true;
        return false;
}

/* A guest whose <page> elements give its cells different sizes is counted in the largest
 * (domain-xml-numa.c): said, since libvirt backs each cell from its own size's pool. "" when the sizes do
 * not differ. */
static char *hugepage_sizes_note(const PlacementRequest *req)
{
        char a[32];

        if (!req->hugepage_size || !req->hugepage_sizes_differ)
                return g_strdup("");
        return g_strdup_printf("; its <hugepages><page> sizes differ per guest cell: all its memory counted "
                               "in %s hugepages, the largest (libvirt backs each cell from its own size's "
                               "pool; not counted per cell)",
                               size_format(req->hugepage_size, a, sizeof(a)));
}

/* The largest and the mean distance between the nodes a plan took: past a binding, the set's nodes that
 * got no vCPU are none of the plan's (take_set()), and the set's figures would describe nodes the domain
 * does not run on. */
static void taken_distances(const Topology *t, const NodeSet *set, const CpuSet *nodes, uint32_t *ret_max,
                            double *ret_mean)
{
        *ret_max = set->max_distance;
        *ret_mean = set->mean_distance;
        if (cpuset_count(nodes) != set->nnodes && !cpuset_is_empty(nodes))
                topology_nodes_distance(t, nodes, ret_max, ret_mean);
}

/* The set's nodes, as the reason names them with the free cores and memory they have: with "of which it
 * takes ..." when the domain is on fewer of them (drop_unused_nodes()). */
static char *set_nodes_text(const Topology *t, const NodeSet *set, const CpuSet *taken)
{
        g_autoptr(CpuSet) all = cpuset_new();
        const unsigned *members = nodeset_members(t->nodesets, set);
        g_autofree char *set_text = NULL, *taken_text = NULL;

        for (unsigned i = 0; i < set->nnodes; i++)
                cpuset_add(all, members[i]);
        if (cpuset_equal(all, taken))
                return format_nodes(t, taken);
        set_text = format_nodes(t, all);
        taken_text = format_nodes(t, taken);
        return g_strdup_printf("%s, of which it takes %s", set_text,
                               g_str_has_prefix(taken_text, "nodes ")  ? taken_text + 6
                               : g_str_has_prefix(taken_text, "node ") ? taken_text + 5
                                                                       : taken_text);
}

/* For a domain not bound as a whole whose cells' <memnode> elements bind memory: the bound nodes whose
 * free memory (or pools) lack what is counted there, as for a domain's binding ("" when none). */
static char *cells_short_note(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        g_autoptr(CpuSet) bound = cells_binding_nodes(req);
        GString *s = g_string_new(NULL);

        if (req->memory_source == MEMORY_SOURCE_NONE && !cpuset_is_empty(bound))
                memory_short_note(v, req, plan, bound, s);
        return g_string_free(s, FALSE);
}

/* For a domain not bound as a whole: the nodes of each cell's <memnode> this host does not have (libvirt
 * checks every nodeset and refuses to start the guest), as for a domain's binding ("" when none). */
static char *cells_missing_note(const Topology *t, const PlacementRequest *req)
{
        GString *s = g_string_new(NULL);

        for (unsigned c = 0; req->memory_source == MEMORY_SOURCE_NONE && c < req->ncells; c++) {
                g_autoptr(CpuSet) missing = cpuset_new();
                g_autofree char *gone = NULL;
                if (!req->cells[c].memory_nodes ||
                    !memory_nodes_missing(t, req->cells[c].memory_nodes, missing))
                        continue;
                gone = cpuset_format(missing);
                g_string_append_printf(s,
                                       "; node%s %s of the <memnode> of guest cell %u %s not on this host: "
                                       "libvirt refuses to start such a guest",
                                       cpuset_count(missing) == 1 ? "" : "s", gone, req->cells[c].id,
                                       cpuset_count(missing) == 1 ? "is" : "are");
        }
        return g_string_free(s, FALSE);
}

/* The reason of a placed or overcommitted plan. */
static char *placed_reason(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                           const SetChoice *choice, const Plan *plan)
{
        const NodeSet *set = &v->t->nodesets->candidates[choice->rank];
        g_autofree char *where = set_nodes_text(v->t, set, plan->nodes);
        g_autofree char *constraints = constraint_note(v, req, plan);
        bool memnodes = req->memory_source == MEMORY_SOURCE_MEMNODE, bound_cells = false,
             constrained = false;
        for (unsigned c = 0; c < plan->ncells; c++)
                bound_cells = bound_cells || !cpuset_is_empty(plan->cells[c].memory_nodes);
        memnodes = memnodes || bound_cells;
        g_autofree char *cells = cells_note(v->t, plan, memnodes);
        g_autofree char *pages = hugepage_sizes_note(req);
        g_autofree char *short_pools = cells_short_note(v, req, plan);
        g_autofree char *cells_missing = cells_missing_note(v->t, req);
        g_autofree char *note = g_strconcat(cells, constraints, pages, short_pools, cells_missing, NULL);
        g_autofree char *sharing = NULL;
        char a[32], b[64], busiest[96] = "", held[96] = "";

        if (plan->result == PLAN_PLACED) {
                uint64_t set_memory = policy_set_memory(req);
                char c[32], part[96] = "", memory[160];
                bool bound_elsewhere = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;

                /* none of it counted where the cores are (a <memnode> may bind a cell away from them) */
                CPUSET_FOREACH (n, plan->nodes)
                        bound_elsewhere =
                            bound_elsewhere && ((unsigned)n >= plan->nnode_memory || !plan->node_memory[n]);
                /* memory its cells' <memnode> elements bind elsewhere is not the set's to hold */
                if (set_memory != req->memory &&
                    (req->memory_source == MEMORY_SOURCE_NONE || !req->memory_nodes))
                        g_snprintf(part, sizeof(part), " of its %s (the rest bound by its cells' <memnode>)",
                                   size_format(req->memory, c, sizeof(c)));
                if (bound_elsewhere) /* what the set has free does not hold it: the note says where */
                        g_snprintf(memory, sizeof(memory), "its %s bound to other nodes",
                                   memory_text(req, req->memory, b, sizeof(b)));
                else if (counted_outside_set(v->t, plan)) {
                        /* bound memory partly counted off the set (preferred falls back): where it is */
                        g_autoptr(CpuSet) counted = cpuset_new();
                        g_autofree char *list = NULL;
                        uint64_t free_bytes = 0;
                        for (unsigned n = 0; n < plan->nnode_memory; n++)
                                if (plan->node_memory[n]) {
                                        cpuset_add(counted, v->t->nodes[n].os_index);
                                        free_bytes += node_free_bytes(v, plan, n);
                                }
                        list = cpuset_format(counted);
                        g_snprintf(
                            memory, sizeof(memory), "%s free on node%s %s, where it is counted, for %s",
                            size_format(free_bytes, a, sizeof(a)), cpuset_count(counted) == 1 ? "" : "s",
                            list, memory_text(req, req->memory, b, sizeof(b)));
                } else if (v->t->memory_sizes_unknown) /* nothing free to tell */
                        g_snprintf(memory, sizeof(memory), "%s%s not counted (no memory sizes known)",
                                   memory_text(req, part[0] ? set_memory : req->memory, b, sizeof(b)), part);
                else
                        g_snprintf(memory, sizeof(memory), "%s free for %s%s",
                                   size_format(choice->load.free_memory, a, sizeof(a)),
                                   memory_text(req, part[0] ? set_memory : req->memory, b, sizeof(b)), part);
                uint32_t max_distance;
                double mean_distance;
                char cells_nearer[160] = "";

                taken_distances(v->t, set, plan->nodes, &max_distance, &mean_distance);
                /* what made it nearer: cells split over nearer nodes, or memory spilled to nearer ones */
                if (choice->cells_nearer && choice->cell_split > TOPOLOGY_LOCAL &&
                    choice->cell_reach > TOPOLOGY_LOCAL)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", of the sets as near by their farthest nodes the one that splits each "
                                   "guest cell over nodes at most %u apart, its memory at most %u from its "
                                   "vCPUs",
                                   choice->cell_split, choice->cell_reach);
                else if (choice->cells_nearer && choice->cell_split > TOPOLOGY_LOCAL)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", of the sets as near by their farthest nodes the one that splits each "
                                   "guest cell over nodes at most %u apart",
                                   choice->cell_split);
                else if (choice->cells_nearer)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", of the sets as near by their farthest nodes the one that keeps each "
                                   "guest cell whole with its memory at most %u from its vCPUs",
                                   choice->cell_reach);
                return g_strdup_printf("%s: %u %s for %u %s, %s; %s qualifying set "
                                       "(max distance %u, mean %.2f)%s%s%s",
                                       where, choice->load.capacity, unit_of(ops, choice->load.capacity),
                                       req->vcpus, req->vcpus == 1 ? "vCPU" : "vCPUs", memory,
                                       choice->cells_nearer ? "a" : "nearest", max_distance, mean_distance,
                                       cells_nearer, group_note(v, choice), note);
        }
        sharing = sharing_note(v, plan);
        if (choice->busy_cores > 1)
                g_snprintf(busiest, sizeof(busiest),
                           ", of its equally near sets the one whose %u least busy cores run least",
                           choice->busy_cores);
        else if (choice->least_busy)
                g_strlcpy(busiest, ", of its equally near sets the one whose least busy core runs least",
                          sizeof(busiest));
        /* the user's constraints leave only some nodes: the sets they allow lack the room, not the host */
        for (unsigned n = 0; n < v->t->nnodes && !constrained; n++)
                constrained = !v->node_allowed[n] && v->t->nodes[n].ncores > 0;
        /* with no memory sizes known, memory took no part in the choice: the reason names cores alone */
        if (!v->t->memory_sizes_unknown)
                g_snprintf(held, sizeof(held), " and %s free", memory_text(req, req->memory, b, sizeof(b)));
        return g_strdup_printf("no node set %shas %u %s%s%s; %s is the nearest%s%s (%u %s there): %s%s",
                               constrained ? "inside its constraints " : "", req->vcpus,
                               unit_of(ops, req->vcpus), held,
                               bound_cells ? " with each <memnode> cell on its own nodes" : "", where,
                               v->t->memory_sizes_unknown ? "" : " that holds the memory", busiest,
                               choice->load.capacity, unit_of(ops, choice->load.capacity), sharing, note);
}

/* The index in plan->cells of the guest cell of vCPU i, or -1 when the guest has no cells. */
static int vcpu_cell(const Plan *plan, unsigned i)
{
        unsigned id = plan_vcpu_id(plan, i);

        for (unsigned k = 0; k < plan->ncells; k++)
                if (cpuset_has(plan->cells[k].vcpus, id))
                        return (int)k;
        return -1;
}

/* Whether vCPU i of the request may run on the PU with index pu as its reserved caches go (no
 * reservation: anywhere). */
static bool under_own_caches(const Topology *t, const PlacementRequest *req, unsigned i, int pu)
{
        return pu >= 0 &&
               (!req->vcpu_cache_cpus[i] || cpuset_has(req->vcpu_cache_cpus[i], t->pus[pu].os_index));
}

/*
 * Each vCPU with reserved caches (<cachetune vcpus=>) onto a PU of the plan under them: the plan's PUs
 * stay the same, two vCPUs trade them when that puts one under its caches and leaves the other no worse
 * (in one guest cell; not when the guest pairs its vCPUs as SMT siblings, whose pairs share a core).
 * One left off its caches then takes a free core under them on the node it runs on, when there is one.
 */
static void match_cache_vcpus(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        const Topology *t = v->t;

        if (!req->vcpu_cache_cpus)
                return;
        for (unsigned i = 0; i < plan->nvcpus && i < req->vcpus; i++) {
                if (plan->vcpu_pu[i] < 0 || under_own_caches(t, req, i, plan->vcpu_pu[i]) ||
                    req->guest_threads)
                        continue;
                for (unsigned j = 0; j < plan->nvcpus && j < req->vcpus; j++) {
                        int pu_i = plan->vcpu_pu[i], pu_j = plan->vcpu_pu[j];
                        CpuSet *pins;
                        if (j == i || pu_j < 0 || vcpu_cell(plan, i) != vcpu_cell(plan, j) ||
                            !under_own_caches(t, req, i, pu_j) ||
                            (under_own_caches(t, req, j, pu_j) && !under_own_caches(t, req, j, pu_i)))
                                continue;
                        plan->vcpu_pu[i] = pu_j;
                        plan->vcpu_pu[j] = pu_i;
                        pins = plan->vcpu_pins[i];
                        plan->vcpu_pins[i] = plan->vcpu_pins[j];
                        plan->vcpu_pins[j] = pins;
                        break;
                }
        }
        /* one still off its caches: a free core under them on the node it runs on, when there is one */
        for (unsigned i = 0; i < plan->nvcpus && i < req->vcpus; i++) {
                int pu = plan->vcpu_pu[i];
                if (pu < 0 || under_own_caches(t, req, i, pu) || req->guest_threads)
                        continue;
                for (unsigned c = 0; c < t->ncores; c++) {
                        const TopoCore *core = &t->cores[c];
                        int q = -1;
                        if (core->node != t->cores[t->pus[pu].core].node || !ledger_core_free(v->l, c) ||
                            policy_own_core(v, plan, c) || policy_core_reserved(v, c))
                                continue;
                        for (unsigned k = core->pu_first; k < core->pu_first + core->npus && q < 0; k++)
                                if (v->pu_usable[k] && under_own_caches(t, req, i, (int)k))
                                        q = (int)k;
                        if (q < 0)
                                continue;
                        plan->vcpu_pu[i] = q;
                        if (plan->vcpu_pin == VCPU_PIN_CORE || plan->vcpu_pin == VCPU_PIN_THREAD)
                                policy_pin_vcpu(v, plan, i);
                        break;
                }
        }
}

/* Appends to the reason which vCPUs with reserved caches run under them and which do not (no PU of the
 * plan serves them); nothing when the constraint note says it all. */
static void cache_note(const Topology *t, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) off = cpuset_new(), on = cpuset_new();
        g_autofree char *off_list = NULL, *on_list = NULL, *reason = NULL;

        if (!req->vcpu_cache_cpus)
                return;
        (void)t;
        for (unsigned i = 0; i < plan->nvcpus && i < req->vcpus; i++) {
                g_autoptr(CpuSet) outside = NULL;
                if (!req->vcpu_cache_cpus[i] || plan->vcpu_pu[i] < 0)
                        continue;
                /* its pins, not the PU it is counted on: VCPUPin=nodeset pins it to the whole set */
                outside = cpuset_copy(plan->vcpu_pins[i]);
                cpuset_subtract(outside, req->vcpu_cache_cpus[i]);
                cpuset_add(cpuset_is_empty(outside) ? on : off, plan_vcpu_id(plan, i));
        }
        if (req->cache_cpus && cpuset_is_empty(off))
                return; /* the constraint note says it */
        on_list = cpuset_format(on);
        off_list = cpuset_format(off);
        reason = g_strdup_printf(
            "%s%s%s%s%s%s%s", plan->reason ? plan->reason : "",
            !*on_list ? "" : (cpuset_count(on) == 1 ? "; vCPU " : "; vCPUs "), on_list,
            *on_list ? " under the caches reserved for it" : "",
            !*off_list ? "" : (cpuset_count(off) == 1 ? "; vCPU " : "; vCPUs "), off_list,
            *off_list ? " not kept under the caches its <cachetune>/<memorytune> reserves for it (no core "
                        "of this placement, and no free one on its node, lies under them, or VCPUPin= pins "
                        "it wider)"
                      : "");
        g_free(plan->reason);
        plan->reason = g_steal_pointer(&reason);
}

/* A realtime domain's emulator and I/O threads sent to the nearest core without a realtime vCPU
 * (add_nearest_plain_core()), off its nodes: said, since they run farther from the memory they serve. */
static void realtime_emulator_note(const HostView *v, HousekeepingPlace where, Plan *plan)
{
        const CpuSet *cpus_of =
            cpuset_is_empty(plan->emulator_pin) ? plan->iothread_pin : plan->emulator_pin;
        g_autoptr(CpuSet) nodes = cpuset_new();
        g_autofree char *cpus = NULL, *list = NULL;
        bool away = false, beside = false;
        char *old = plan->reason;

        if (where != HOUSEKEEPING_PLAIN_CORE || cpuset_is_empty(cpus_of))
                return;
        CPUSET_FOREACH (cpu, cpus_of) {
                int pu = topology_pu_by_os(v->t, (unsigned)cpu);
                unsigned n;
                if (pu < 0)
                        return;
                n = v->t->cores[v->t->pus[pu].core].node;
                away = away || !cpuset_has(plan->nodes, n);
                beside = beside || !ledger_core_free(v->l, v->t->pus[pu].core);
                cpuset_add(nodes, v->t->nodes[n].os_index);
        }
        if (!away && !beside)
                return;
        cpus = cpuset_format(cpus_of);
        list = cpuset_format(nodes);
        plan->reason = g_strdup_printf(
            "%s; %s on CPU%s %s of node%s %s%s: its set has no core left without a realtime vCPU",
            old ? old : "", cpuset_is_empty(plan->emulator_pin) ? "its I/O threads" : "the emulator",
            cpuset_count(cpus_of) == 1 ? "" : "s", cpus, cpuset_count(nodes) > 1 ? "s" : "", list,
            beside ? ", beside another domain's vCPUs" : "");
        g_free(old);
}

/* Memory nothing binds that ends wholly on nodes none of the plan's vCPUs run on (their nodes have no
 * room left): a trade of locality for a free core, said in the reason. */
static void remote_memory_note(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) vcpu_nodes = cpuset_new(), memory_nodes = cpuset_new();
        g_autofree char *vn = NULL, *mn = NULL;
        char *old = plan->reason;

        if ((req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) || !plan->memory)
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        cpuset_add(vcpu_nodes,
                                   t->nodes[t->cores[t->pus[plan->vcpu_pu[i]].core].node].os_index);
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n]) {
                        if (cpuset_has(vcpu_nodes, t->nodes[n].os_index))
                                return;
                        cpuset_add(memory_nodes, t->nodes[n].os_index);
                }
        if (cpuset_is_empty(vcpu_nodes) || cpuset_is_empty(memory_nodes))
                return;
        vn = cpuset_format(vcpu_nodes);
        mn = cpuset_format(memory_nodes);
        plan->reason = g_strdup_printf(
            "%s; its memory is all on node%s %s, none where its vCPUs run (node%s %s "
            "%s no room for it)",
            old ? old : "", cpuset_count(memory_nodes) == 1 ? "" : "s", mn,
            cpuset_count(vcpu_nodes) == 1 ? "" : "s", vn, cpuset_count(vcpu_nodes) == 1 ? "has" : "have");
        g_free(old);
}

typedef struct OthersThreads {
        const Plan *plan;
        const Topology *t;
        CpuSet *cpus;   /* the realtime vCPUs' CPUs that another domain's QEMU threads are pinned to */
        GString *names; /* those domains */
} OthersThreads;

static void add_others_threads(const char *key, const Plan *p, void *userdata)
{
        OthersThreads *o = userdata;
        bool named = false;

        if (p == o->plan)
                return;
        for (unsigned i = 0; i < o->plan->nvcpus; i++) {
                const TopoCore *core;
                if (!plan_vcpu_realtime(o->plan, i) || o->plan->vcpu_pu[i] < 0)
                        continue;
                core = &o->t->cores[o->t->pus[o->plan->vcpu_pu[i]].core];
                for (unsigned pu = core->pu_first; pu < core->pu_first + core->npus; pu++) {
                        unsigned os = o->t->pus[pu].os_index;
                        if (!cpuset_has(p->emulator_pin, os) && !cpuset_has(p->iothread_pin, os))
                                continue;
                        cpuset_add(o->cpus, os);
                        if (!named && o->names->len < 256)
                                g_string_append_printf(o->names, "%s%s", o->names->len ? ", " : "",
                                                       p->name ? p->name : key);
                        named = true;
                }
        }
}

/* Realtime vCPUs on cores that another domain's emulator or I/O threads are pinned to (free cores when
 * that domain was placed, the last a realtime guest could have): a FIFO vCPU may starve those threads.
 * Said in the reason. */
static void realtime_over_others_threads(const HostView *v, Plan *plan)
{
        OthersThreads o = {.plan = plan, .t = v->t, .cpus = cpuset_new(), .names = g_string_new(NULL)};
        char *old = plan->reason;

        if (plan->realtime)
                ledger_foreach(v->l, add_others_threads, &o);
        if (!cpuset_is_empty(o.cpus)) {
                g_autofree char *cpus = cpuset_format(o.cpus);
                plan->reason = g_strdup_printf("%s; realtime vCPUs on CPU%s %s, where %s's emulator or I/O "
                                               "threads are pinned too: they may be starved "
                                               "(HousekeepingCPUs= keeps QEMU's threads apart)",
                                               old ? old : "", cpuset_count(o.cpus) == 1 ? "" : "s", cpus,
                                               o.names->str);
                g_free(old);
        }
        cpuset_free(o.cpus);
        g_string_free(o.names, TRUE);
}

/* Whether the emulator or I/O thread pin of the plan lies on a core of one of its own realtime vCPUs. */
static bool on_own_realtime_cores(const HostView *v, const Plan *plan)
{
        const CpuSet *pins[] = {plan->emulator_pin, plan->iothread_pin};

        if (!plan->realtime)
                return false;
        for (unsigned k = 0; k < G_N_ELEMENTS(pins); k++)
                CPUSET_FOREACH (cpu, pins[k]) {
                        int pu = topology_pu_by_os(v->t, (unsigned)cpu);
                        if (pu >= 0 && policy_own_realtime_core(v, plan, v->t->pus[pu].core))
                                return true;
                }
        return false;
}

typedef struct OthersRealtime {
        const Plan *plan;
        const Topology *t;
        bool *core;     /* [ncores]: holds another domain's realtime vCPU */
        GString *names; /* those domains, of the cores the plan uses */
} OthersRealtime;

/* Whether the plan runs a vCPU, or pins its emulator or I/O threads, on core c. */
static bool plan_uses_core(const Topology *t, const Plan *plan, unsigned c)
{
        const TopoCore *core = &t->cores[c];

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && t->pus[plan->vcpu_pu[i]].core == c)
                        return true;
        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (cpuset_has(plan->emulator_pin, t->pus[p].os_index) ||
                    cpuset_has(plan->iothread_pin, t->pus[p].os_index))
                        return true;
        return false;
}

static void add_others_realtime(const char *key, const Plan *p, void *userdata)
{
        OthersRealtime *o = userdata;
        bool named = false;

        if (p == o->plan || !p->realtime)
                return;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned c;
                if (!plan_vcpu_realtime(p, i) || p->vcpu_pu[i] < 0 || (unsigned)p->vcpu_pu[i] >= o->t->npus)
                        continue;
                c = o->t->pus[p->vcpu_pu[i]].core;
                o->core[c] = true;
                if (!named && o->names->len < 256 && plan_uses_core(o->t, o->plan, c)) {
                        g_string_append_printf(o->names, "%s%s", o->names->len ? ", " : "",
                                               p->name ? p->name : key);
                        named = true;
                }
        }
}

/* vCPUs, emulator or I/O threads on cores where another domain's realtime (FIFO/RR) vCPUs run (the host
 * had no other core left for them): a realtime vCPU that spins may starve them. Said in the reason. */
static void beside_others_realtime(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree bool *core = g_new0(bool, MAX(t->ncores, 1));
        OthersRealtime o = {.plan = plan, .t = t, .core = core, .names = g_string_new(NULL)};
        unsigned vcpus = 0;
        bool emulator = false, iothreads = false, one;
        char *old = plan->reason;

        ledger_foreach(v->l, add_others_realtime, &o);
        for (unsigned i = 0; o.names->len && i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && core[t->pus[plan->vcpu_pu[i]].core])
                        vcpus++;
        CPUSET_FOREACH (cpu, plan->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)cpu);
                emulator = emulator || (pu >= 0 && core[t->pus[pu].core]);
        }
        CPUSET_FOREACH (cpu, plan->iothread_pin) {
                int pu = topology_pu_by_os(t, (unsigned)cpu);
                iothreads = iothreads || (pu >= 0 && core[t->pus[pu].core]);
        }
        if (o.names->len && (vcpus || emulator || iothreads)) {
                GString *who = g_string_new(NULL);
                if (vcpus)
                        g_string_append_printf(who, "%u vCPU%s", vcpus, vcpus == 1 ? "" : "s");
                if (emulator)
                        g_string_append_printf(who, "%sthe emulator",
                                               who->len ? (iothreads ? ", " : " and ") : "");
                if (iothreads)
                        g_string_append_printf(who, "%sits I/O threads", who->len ? " and " : "");
                one = !iothreads && (vcpus == 1) != emulator && vcpus <= 1;
                plan->reason = g_strdup_printf(
                    "%s; %s share%s cores with realtime (FIFO/RR) vCPUs of another "
                    "domain (%s): a realtime vCPU that spins may starve %s",
                    old ? old : "", who->str, one ? "s" : "", o.names->str, one ? "it" : "them");
                g_string_free(who, TRUE);
                g_free(old);
        }
        g_string_free(o.names, TRUE);
}

/* Hugepage-backed memory comes in whole pages: each node's share rounded down to its pages, and the pages
 * that frees go to the nodes already counting some, those with the most free pages left first (a share
 * of 2.5 one-GiB pages on each of two nodes is 3 + 2, not half pages no guest can use). What is less than
 * a page stays with the node counting the most. */
static void whole_pages(const HostView *v, Plan *plan)
{
        uint64_t page = plan->hugepage_size, left = 0;
        g_autofree bool *had = NULL;
        unsigned most = 0;

        if (!page)
                return;
        had = g_new0(bool, MAX(plan->nnode_memory, 1));
        for (unsigned n = 0; n < plan->nnode_memory; n++) {
                had[n] = plan->node_memory[n] > 0;
                left += plan->node_memory[n] % page;
                plan->node_memory[n] -= plan->node_memory[n] % page;
        }
        while (left >= page) {
                int best = -1;
                uint64_t best_room = 0;
                for (unsigned n = 0; n < plan->nnode_memory; n++) {
                        uint64_t free_pages = ledger_node_free_hugepages(v->l, n, page);
                        uint64_t room =
                            free_pages > plan->node_memory[n] ? free_pages - plan->node_memory[n] : 0;
                        if (had[n] && (best < 0 || room > best_room)) {
                                best = (int)n;
                                best_room = room;
                        }
                }
                if (best < 0)
                        break;
                plan->node_memory[best] += page;
                left -= page;
        }
        for (unsigned n = 1; n < plan->nnode_memory; n++)
                if (plan->node_memory[n] > plan->node_memory[most])
                        most = n;
        if (plan->nnode_memory)
                plan->node_memory[most] += left;
}

/*
 * Drops from plan's nodes those that hold neither a vCPU nor memory of it: a set kept whole (above 16
 * nodes there is no mask index to find the set without them, and a binding or the memory may pull one
 * in that takes nothing in the end) names only the nodes the domain is on, and VCPUPin=nodeset pins its
 * vCPUs to those alone, not to busy nodes it has nothing on.
 */
static void drop_unused_nodes(const HostView *v, Plan *plan)
{
        g_autoptr(CpuSet) unused = cpuset_copy(plan->nodes);

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        cpuset_remove(unused, v->t->cores[v->t->pus[plan->vcpu_pu[i]].core].node);
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n])
                        cpuset_remove(unused, n);
        if (cpuset_is_empty(unused) || cpuset_equal(unused, plan->nodes))
                return;
        cpuset_subtract(plan->nodes, unused);
        if (plan->vcpu_pin == VCPU_PIN_NODESET) {
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        cpuset_clear(plan->vcpu_pins[i]);
                make_pins(v, plan);
        }
}

/* Who shares the domain's own cores when QEMU's threads went there, as the reason says it: "the emulator
 * shares", "its I/O threads share", "the emulator and I/O threads share". */
static const char *own_cores_who(const Plan *plan)
{
        return cpuset_is_empty(plan->emulator_pin)
                   ? "its I/O threads share"
                   : (cpuset_is_empty(plan->iothreads) ? "the emulator shares"
                                                       : "the emulator and I/O threads share");
}

/* reason (taken), with what it says when QEMU's threads went to the domain's own cores (where). */
static char *own_cores_note(const HostView *v, HousekeepingPlace where, const Plan *plan, char *reason)
{
        char *out;

        if (where != HOUSEKEEPING_OWN_CORES)
                return reason;
        if (on_own_realtime_cores(v, plan))
                /* every core it may use runs a realtime vCPU (an all-realtime guest filling its host) */
                out = g_strdup_printf(
                    "%s; %s its own cores, where its realtime (FIFO/RR) vCPUs run: no core without a "
                    "realtime vCPU is left that %s may use, and a realtime vCPU that spins may starve %s "
                    "(HousekeepingCPUs= keeps QEMU's threads apart)",
                    reason, own_cores_who(plan),
                    cpuset_is_empty(plan->emulator_pin) || !cpuset_is_empty(plan->iothreads) ? "they" : "it",
                    cpuset_is_empty(plan->emulator_pin) || !cpuset_is_empty(plan->iothreads) ? "them"
                                                                                             : "it");
        else
                out = g_strdup_printf("%s; %s its own cores: %s", reason, own_cores_who(plan),
                                      v->params->emulator_pin == EMULATOR_PIN_NODESET
                                          ? "its nodes have no free core, and every thread of its own cores "
                                            "is another domain's too"
                                          : "no idle sibling, housekeeping CPU or free core of its nodes is "
                                            "left");
        g_free(reason);
        return out;
}

/* reason without what own_cores_note() added to it, as a new string. */
static char *without_own_cores_note(const char *reason)
{
        static const char *const whos[] = {"; the emulator shares its own cores",
                                           "; its I/O threads share its own cores",
                                           "; the emulator and I/O threads share its own cores"};
        GString *s = g_string_new(reason ? reason : "");

        for (unsigned i = 0; i < G_N_ELEMENTS(whos); i++) {
                const char *at = strstr(s->str, whos[i]);
                const char *end;
                if (!at)
                        continue;
                end = strstr(at + 1, "; ");
                g_string_erase(s, at - s->str, end ? end - at : -1);
        }
        return g_string_free(s, FALSE);
}

void finish_plan(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                 const SetChoice *choice, Plan *plan)
{
        bool bound = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;
        HousekeepingPlace where;

        make_pins(v, plan);
        match_cache_vcpus(v, req, plan);
        cells_record_nodes(v->t, plan);
        if (bound)
                policy_charge_bound_memory(v, req, plan);
        else
                policy_spread_memory(v, plan);
        whole_pages(v, plan);
        drop_unused_nodes(v, plan);
        plan->keep_memory = bound;
        policy_count_shared(v, plan);
        if (v->memory_remote) {
                /* memory bound elsewhere (memory-only nodes) or also elsewhere (past a binding): each
                 * candidate's free memory is that of the nodes where it is counted (the same for every
                 * set), not what its own nodes hold of it */
                uint64_t free_bytes = 0;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        free_bytes += plan->node_memory[n] ? node_free_bytes(v, plan, n) : 0;
                for (unsigned i = 0; i < plan->candidates->len; i++)
                        ((PlanCandidate *)g_ptr_array_index(plan->candidates, i))->free_memory = free_bytes;
        }
        where = pin_housekeeping(v, req, plan);
        plan->reason = own_cores_note(v, where, plan, placed_reason(v, ops, req, choice, plan));
        realtime_emulator_note(v, where, plan);
        realtime_over_others_threads(v, plan);
        beside_others_realtime(v, plan);
        remote_memory_note(v, req, plan);
        load_note_reason(v, ops->overcommit_by_core, plan);
        cache_note(v->t, req, plan);
}

/* reason (taken) without what beside_others_realtime() added to it: it names where the emulator and I/O
 * threads were. The note runs from the "; " before its words to the last "may starve it/them" (domain names
 * come between: a name that reads like either end does not cut it short). */
static char *without_beside_realtime_note(char *reason)
{
        static const char marker[] = " cores with realtime (FIFO/RR) vCPUs of another domain (";
        static const char tail[] = "): a realtime vCPU that spins may starve ";
        const char *at = reason ? strstr(reason, marker) : NULL;
        const char *start = at ? g_strrstr_len(reason, at - reason, "; ") : NULL;
        const char *end = start ? g_strrstr(at, tail) : NULL;
        GString *s;

        if (!end)
                return reason;
        end += strlen(tail);
        end += g_str_has_prefix(end, "them") ? strlen("them")
               : g_str_has_prefix(end, "it") ? strlen("it")
                                             : 0;
        s = g_string_new_len(reason, start - reason);
        g_string_append(s, end);
        g_free(reason);
        return g_string_free(s, FALSE);
}

void finish_rehouse(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        char *reason = without_beside_realtime_note(without_own_cores_note(plan->reason));

        if (!req->keep_emulator)
                cpuset_clear(plan->emulator_pin);
        cpuset_clear(plan->iothreads);
        cpuset_clear(plan->iothread_pin);
        g_free(plan->reason);
        plan->reason = own_cores_note(v, pin_housekeeping(v, req, plan), plan, reason);
        /* said anew for where the emulator and I/O threads are now, and the others' realtime vCPUs */
        beside_others_realtime(v, plan);
}

/* A domain kept to some nodes by its <vcpu cpuset> alone, whose memory they cannot hold while the host
 * can: its memory counted from the allowed node with the most room on, spilling to the nearest nodes as
 * the kernel falls back (nothing binds it). False, counting nothing, when the whole host lacks it. */
static bool spill_from_allowed(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        uint64_t room = 0, best_room = 0;
        int best = -1;

        for (unsigned n = 0; n < v->t->nnodes; n++) {
                uint64_t r = spill_room(v, plan, n, false);
                room += r;
                if (v->node_allowed[n] && v->t->nodes[n].ncores > 0 && (best < 0 || r > best_room)) {
                        best = (int)n;
                        best_room = r;
                }
        }
        if (best < 0 || room < req->memory)
                return false;
        charge_preferred(v, (unsigned)best, req->memory, plan);
        return true;
}

bool finish_memory_spills(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        uint64_t room = 0, allowed_room = 0;

        if (!req->allowed_cpus || (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) ||
            policy_set_memory(req) != req->memory)
                return false;
        for (unsigned n = 0; n < v->t->nnodes; n++) {
                uint64_t r = spill_room(v, plan, n, false);
                room += r;
                allowed_room += v->node_allowed[n] ? r : 0;
        }
        return room >= req->memory && allowed_room < req->memory;
}

void finish_spill(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *order = g_new(unsigned, MAX(t->nnodes, 1));
        g_autofree unsigned *vcpus_on = g_new0(unsigned, MAX(t->nnodes, 1));
        g_autoptr(CpuSet) spilled = cpuset_new();
        g_autofree char *list = NULL;
        uint64_t left = plan->memory, moved;
        unsigned n_order = 0, first = 0;
        char a[32], b[32];

        for (unsigned n = 0; n < plan->nnode_memory; n++)
                left -= MIN(left, plan->node_memory[n]);
        if (!left)
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
        moved = left;
        for (unsigned i = 0; i < n_order && left; i++) {
                uint64_t take = MIN(left, spill_room(v, plan, order[i], false));
                if (take)
                        cpuset_add(spilled, t->nodes[order[i]].os_index);
                plan->node_memory[order[i]] += take;
                left -= take;
        }
        plan->node_memory[first] += left;
        list = cpuset_format(spilled);
        {
                g_autofree char *reason = plan->reason;
                plan->reason = g_strdup_printf(
                    "%s; its <vcpu cpuset> binds no memory and its nodes lack room for %s of it: counted on "
                    "node%s %s, nearest its vCPUs",
                    reason, size_format(moved - left, a, sizeof(a)), cpuset_count(spilled) == 1 ? "" : "s",
                    cpuset_is_empty(spilled) ? size_format(0, b, sizeof(b)) : list);
        }
}

void finish_unplaceable(const HostView *v, const PlacementRequest *req, const SetLoad *host, Plan *plan)
{
        const PlacementParams *params = v->params;
        bool bound = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;
        char a[64], b[64];

        if (bound && memory_nodes_all_missing(v->t, req->memory_nodes)) {
                /* libvirt refuses to start a guest bound to nodes the host lacks: no memory counted */
                g_autofree char *list = cpuset_format(req->memory_nodes);
                memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
                plan->reason = g_strdup_printf(
                    "%s its memory to node%s %s (%s), which this host does not have: libvirt refuses to "
                    "start "
                    "such a guest; nothing pinned",
                    memory_source_text(req), cpuset_count(req->memory_nodes) == 1 ? "" : "s", list,
                    req->memory_source == MEMORY_SOURCE_MEMNODE ? "per cell"
                                                                : memory_mode_to_string(req->memory_mode));
        } else if (host->usable_pus == 0 && (req->allowed_cpus || req->cache_cpus || bound)) {
                g_autofree char *note = NULL, *counted = NULL;
                /* it runs all the same (on CPUs the host keeps, ReservedCPUs=): its memory is where it is
                 * bound, or on the nodes of its CPUs */
                g_autoptr(CpuSet) nodes = cpuset_new();
                for (unsigned n = 0; !bound && n < v->t->nnodes; n++)
                        if (v->t->nodes[n].ncores > 0 &&
                            (!req->allowed_cpus ||
                             cpuset_intersects(v->t->nodes[n].cpus, req->allowed_cpus)) &&
                            (!req->cache_cpus || cpuset_intersects(v->t->nodes[n].cpus, req->cache_cpus)))
                                cpuset_add(nodes, v->t->nodes[n].os_index);
                if (bound)
                        policy_charge_bound_memory(v, req, plan);
                else if (!cpuset_is_empty(nodes))
                        charge_bound(v, nodes, req->memory, MEMORY_MODE_INTERLEAVE, NULL, plan);
                policy_drop_poolless_memory(v->t, plan);
                note = constraint_note(v, req, plan);
                if (!bound && !cpuset_is_empty(nodes)) {
                        g_autofree char *list = cpuset_format(nodes);
                        counted = g_strdup_printf("; its memory counted on node%s %s, where its CPUs are",
                                                  cpuset_count(nodes) == 1 ? "" : "s", list);
                }
                plan->reason = g_strdup_printf("no usable CPU of this host lies inside its constraints%s%s; "
                                               "nothing pinned",
                                               note, counted ? counted : "");
        } else if (host->usable_pus == 0 && host->free_memory >= req->memory && params->reserved_cpus) {
                g_autofree char *reserved = cpuset_format(params->reserved_cpus);
                plan->reason = g_strdup_printf(
                    "no CPU is left for vCPUs: ReservedCPUs=%s holds them all; nothing pinned", reserved);
        } else if (req->allowed_cpus && !bound && spill_from_allowed(v, req, plan)) {
                /* <vcpu cpuset> binds no memory: the guest runs, what its nodes lack comes from others */
                char c[64];
                uint64_t remote = 0;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        remote += v->node_allowed[n] ? 0 : plan->node_memory[n];
                plan->reason = g_strdup_printf(
                    "no node set inside its <vcpu cpuset> has %s free (%s there); its memory is not bound, "
                    "so it runs all the same with %s of it on other nodes, counted nearest its CPUs; "
                    "nothing pinned",
                    memory_text(req, req->memory, b, sizeof(b)),
                    memory_text(req, host->free_memory, a, sizeof(a)),
                    memory_text(req, remote, c, sizeof(c)));
        } else if (req->hugepage_size) {
                g_autofree char *pages = hugepage_sizes_note(req);
                plan->reason = g_strdup_printf(
                    "no node set has %s free (%s free on the whole host; hugepage-backed memory never "
                    "takes general memory)%s; nothing pinned",
                    memory_text(req, req->memory, b, sizeof(b)),
                    memory_text(req, host->free_memory, a, sizeof(a)), pages);
        } else if (v->t->memory_sizes_unknown) {
                /* no size known: what is free is not known either, only the figure each node is taken to
                 * hold (TOPOLOGY_MEMORY_UNKNOWN), which the guest goes beyond */
                plan->reason = g_strdup_printf(
                    "no node set holds %s: with no memory sizes known, each node with CPUs is taken to "
                    "hold %s; nothing pinned",
                    size_format(req->memory, b, sizeof(b)),
                    size_format(TOPOLOGY_MEMORY_UNKNOWN, a, sizeof(a)));
        } else {
                char c[64] = "";
                if (params->memory_reserve)
                        g_snprintf(c, sizeof(c), ", MemoryReserve=%s kept on each node",
                                   size_format(params->memory_reserve, a, sizeof(a)));
                plan->reason = g_strdup_printf(
                    "no node set has %s of free memory (%s free on the whole host%s); nothing pinned",
                    size_format(req->memory, b, sizeof(b)), size_format(host->free_memory, a, sizeof(a)), c);
        }
}

bool finish_cell_memory_missing(const Topology *t, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) cells = cpuset_new(), nodes = cpuset_new();
        g_autofree char *cell_list = NULL, *node_list = NULL;

        for (unsigned c = 0; c < req->ncells; c++)
                if (req->cells[c].memory_nodes && !cpuset_is_empty(req->cells[c].memory_nodes) &&
                    memory_nodes_all_missing(t, req->cells[c].memory_nodes)) {
                        cpuset_add(cells, req->cells[c].id);
                        cpuset_union(nodes, req->cells[c].memory_nodes);
                }
        if (cpuset_is_empty(cells))
                return false;
        cell_list = cpuset_format(cells);
        node_list = cpuset_format(nodes);
        plan->result = PLAN_UNPLACEABLE;
        memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
        plan->reason = g_strdup_printf(
            "the <numatune><memnode> of guest cell%s %s binds %s memory to node%s %s, "
            "which this host does not have: libvirt refuses to start such a guest; "
            "nothing pinned",
            cpuset_count(cells) == 1 ? "" : "s", cell_list, cpuset_count(cells) == 1 ? "its" : "their",
            cpuset_count(nodes) == 1 ? "" : "s", node_list);
        return true;
}
