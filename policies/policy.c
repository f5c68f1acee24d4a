/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy driver. For one request it:
 *   1. takes the host as the ledger leaves it (host-view.c), counted the policy's way (PolicyOps);
 *   2. walks the topology's ranked node sets and finds the first group (equal max and mean distance)
 *      holding a set that qualifies for the policy; inside that group the least loaded set wins
 *      (set-search.c);
 *   3. if none qualifies but memory fits somewhere, overcommits on the memory-fitting set that offers
 *      most capacity, using the least loaded cores; if memory fits nowhere, pins nothing (overcommit.c);
 *   4. turns the chosen PUs into pins, spreads the memory over the set, picks the emulator's CPUs and
 *      writes the reason (finish.c).
 */
#include "policy.h"
#include "finish.h"
#include "cells.h"
#include "load-rules.h"
#include "memory-tiers.h"
#include "overcommit.h"

#include <string.h>

/*
 * The walk for a set with room, first with guest cells whole, then split. With PCI devices, of the sets as
 * near as the one chosen without them (their group), one with a node local to a device wins (without
 * any, one with the node of the CPUs its definition pins QEMU's threads to, alike, unless that loses the
 * L3 fit the first choice had): a device's
 * node never costs a vCPU its core, nor the guest a wider or further set, nor its housekeeping the free
 * core the first choice left it (when the emulator needs a core of its own,
 * policy_housekeeping_needs_core(), and that one had a core to spare, so must the near one). The candidates
 * kept are the first walk's (explain shows what was passed over); plan->device_near says the device chose.
 * Leaves s walking anywhere with cells allowed to split (what overcommit looks at).
 */
static bool search_room(SetSearch *s, const PlacementRequest *req, Plan *plan, SetChoice *out)
{
        bool cells = s->cells_whole, found = false;
        g_autoptr(CpuSet) threads = policy_user_thread_nodes(s->v);
        const CpuSet *near_nodes = req->device_nodes ? req->device_nodes : threads;

        for (unsigned pass = 0; pass < (cells ? 2u : 1u) && !found; pass++) {
                g_autoptr(GPtrArray) kept = NULL;
                unsigned vcpus = s->vcpus;
                SetChoice near;

                s->cells_whole = cells && pass == 0;
                g_ptr_array_set_size(plan->candidates, 0);
                found = set_search_room(s, plan, out);
                if (!found || !near_nodes ||
                    set_near(s->table, &s->table->candidates[out->rank], near_nodes))
                        continue;
                s->near = near_nodes;
                s->max_group = (int)s->table->candidates[out->rank].group;
                if (out->load.capacity > vcpus && policy_housekeeping_needs_core(s->v))
                        s->vcpus = vcpus + 1;
                kept = plan->candidates; /* the near walk's own are dropped */
                plan->candidates = g_ptr_array_new_with_free_func((GDestroyNotify)plan_candidate_free);
                /* a thread pin's node draws less than a device's: never at the cost of the L3 fit the
                 * first choice had */
                if (set_search_room(s, plan, &near) && (req->device_nodes || near.l3_fit || !out->l3_fit)) {
                        *out = near;
                        plan->device_near = req->device_nodes != NULL;
                        plan->threads_near = !req->device_nodes;
                }
                g_ptr_array_unref(plan->candidates);
                plan->candidates = g_steal_pointer(&kept);
                s->vcpus = vcpus;
                s->near = NULL;
                s->max_group = -1;
        }
        s->cells_whole = false;
        return found;
}

/* One row per policy: what it decides, by kind. */
static const PolicyOps *const policy_table[_POLICY_MAX] = {
    [POLICY_EXPLICIT] = &policy_explicit_ops,
    [POLICY_COMPAT] = &policy_compat_ops,
};

const PolicyOps *policy_ops(PolicyKind k)
{
        if ((unsigned)k >= G_N_ELEMENTS(policy_table) || !policy_table[k])
                return &policy_explicit_ops;
        return policy_table[k];
}

unsigned policy_spread(const unsigned *capacity, unsigned n, unsigned count, unsigned *quota)
{
        g_autofree unsigned *order = g_new(unsigned, MAX(n, 1));
        unsigned norder = 0;

        for (unsigned i = 0; i < n; i++) {
                quota[i] = 0;
                if (capacity[i])
                        order[norder++] = i;
        }
        /* nodes with more room first; insertion sort keeps equal ones in node order */
        for (unsigned i = 1; i < norder; i++)
                for (unsigned j = i; j > 0 && capacity[order[j]] > capacity[order[j - 1]]; j--) {
                        unsigned tmp = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = tmp;
                }
        while (count) {
                bool gave = false;
                for (unsigned k = 0; k < norder && count; k++) {
                        unsigned i = order[k];
                        if (quota[i] < capacity[i]) {
                                quota[i]++;
                                count--;
                                gave = true;
                        }
                }
                if (!gave)
                        break;
        }
        return count;
}

unsigned policy_core_class(const HostView *v, unsigned c)
{
        const TopoCore *core = &v->t->cores[c];
        unsigned rank = v->params->core_kinds == CORE_KINDS_ANY ? 0 : MIN(core->kind_rank, 0xffffu);

        return (core->no_l3 ? 1u << 16 : 0) | rank;
}

bool policy_core_reserved(const HostView *v, unsigned core)
{
        const TopoCore *c = &v->t->cores[core];

        if (c->host_thread)
                return true;
        if (!v->params->reserved_cpus)
                return false;
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (cpuset_has(v->params->reserved_cpus, v->t->pus[p].os_index))
                        return true;
        return false;
}

bool policy_core_wholly_held(const HostView *v, unsigned core)
{
        const TopoCore *c = &v->t->cores[core];

        if (!ledger_core_held(v->l, core))
                return false;
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (v->pu_usable[p] && !ledger_pu_held(v->l, p))
                        return false;
        return true;
}

bool policy_own_core(const HostView *v, const Plan *plan, unsigned c)
{
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && v->t->pus[plan->vcpu_pu[i]].core == c)
                        return true;
        return false;
}

bool policy_own_realtime_core(const HostView *v, const Plan *plan, unsigned c)
{
        for (unsigned i = 0; plan->realtime && i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && v->t->pus[plan->vcpu_pu[i]].core == c &&
                    plan_vcpu_realtime(plan, i))
                        return true;
        return false;
}

bool policy_keeps_pu(const Topology *t, const PlacementParams *params, unsigned pu)
{
        return (params->reserved_cpus && cpuset_has(params->reserved_cpus, t->pus[pu].os_index)) ||
               (params->core_kinds == CORE_KINDS_PERFORMANCE_ONLY &&
                t->cores[t->pus[pu].core].kind_rank > 0);
}

bool policy_pu_vacant(const HostView *v, const Plan *plan, unsigned p)
{
        if (!v->pu_usable[p] || ledger_pu_load(v->l, p) > 0 || ledger_pu_held(v->l, p))
                return false;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] == (int)p)
                        return false;
        return true;
}

/* Gives plan the nodes of the chosen set and its vCPUs PUs there: the policy's way when the set has room. */
static void take_set(const HostView *v, const PolicyOps *ops, const SetChoice *choice, Plan *plan)
{
        const NodeSetTable *table = v->t->nodesets;
        const NodeSet *set = &table->candidates[choice->rank];
        const unsigned *members = nodeset_members(table, set);
        bool placed = plan->result == PLAN_PLACED;

        for (unsigned i = 0; i < set->nnodes; i++)
                cpuset_add(plan->nodes, members[i]);
        if (placed)
                ops->assign(v, members, set->nnodes, plan);
        else
                overcommit_assign(v, ops, members, set->nnodes, plan);
        /* past a binding, a node of the set near the memory may have had no room: it holds no vCPU, and
         * is none of the plan's nodes (heal would take the domain for one that spans them) */
        if (v->req && v->req->vcpus_beyond_binding) {
                g_autoptr(CpuSet) unused = cpuset_copy(plan->nodes);
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        if (plan->vcpu_pu[i] >= 0)
                                cpuset_remove(unused, v->t->cores[v->t->pus[plan->vcpu_pu[i]].core].node);
                if (!cpuset_equal(unused, plan->nodes))
                        cpuset_subtract(plan->nodes, unused);
        }
        mark_chosen(v, plan, (unsigned)choice->rank, &choice->load, placed);
}

static Plan *unplaceable_request(const PlacementRequest *req, Plan *plan)
{
        plan->result = PLAN_UNPLACEABLE;
        plan->reason = req->vcpus == 0
                           ? g_strdup("the domain has no vCPUs; nothing pinned")
                           : g_strdup_printf("%u vCPUs is more than the %u a plan can hold; nothing pinned",
                                             req->vcpus, PLAN_MAX_VCPUS);
        return plan;
}

/*
 * Overcommit by measured load: the set is the nearest with a calm core per busy vCPU
 * (load_calm_capacity()) instead of a free core per vCPU; when the host has fewer calm cores than busy
 * vCPUs, of the nearest sets with as many as the host keeps alone (a calm core the busy vCPUs beyond them
 * would double up on counts for nothing: alone_capacity(), overcommit.c), the one whose least busy other
 * cores, one per busy vCPU beyond its calm cores, run least (load_node_busy_cores()). v's capacities are
 * restored, and the choice reports the set's free capacity the policy's way.
 */
static bool overcommit_search_by_load(HostView *v, const PolicyOps *ops, unsigned vcpus, uint64_t memory,
                                      Plan *plan, SetChoice *out)
{
        const NodeSetTable *table = v->t->nodesets;
        g_autofree unsigned *saved = g_memdup2(v->node_capacity, sizeof(unsigned) * MAX(v->t->nnodes, 1));
        unsigned busy = load_calm_capacity(v);
        NodeBusyCores node_busy = {0};
        SetSearch s;
        bool found;

        set_search_init(&s, v, ops, plan, vcpus, memory); /* its sums over the calm cores */
        s.wanted = busy;
        if (busy > s.host.capacity) { /* some busy vCPU shares a busy core: where it runs least */
                load_node_busy_cores(v, &node_busy);
                s.node_busy = &node_busy;
        }
        found = overcommit_search(&s, plan, out);
        set_search_done(&s);
        load_node_busy_cores_clear(&node_busy);
        memcpy(v->node_capacity, saved, sizeof(unsigned) * MAX(v->t->nnodes, 1));
        if (found) {
                const NodeSet *set = &table->candidates[out->rank];
                out->load = (SetLoad){0};
                for (unsigned i = 0; i < set->nnodes; i++)
                        set_load_add(&out->load, v, nodeset_members(table, set)[i]);
        }
        return found;
}

/* Overcommit by counted vCPUs; a policy that shares by core takes, of the nearest sets with the most free
 * cores, the one whose least loaded other cores, one per vCPU beyond its free cores, hold the fewest vCPUs
 * (what measured load does with every vCPU busy). */
static bool overcommit_search_counted(const HostView *v, const PolicyOps *ops, SetSearch *s, Plan *plan,
                                      SetChoice *out)
{
        NodeBusyCores node_busy = {0};
        bool found;

        if (ops->overcommit_by_core && v->req && s->wanted > s->host.capacity) {
                load_node_busy_cores(v, &node_busy);
                s->node_busy = &node_busy;
        }
        found = overcommit_search(s, plan, out);
        s->node_busy = NULL;
        load_node_busy_cores_clear(&node_busy);
        return found;
}

bool policy_housekeeping_needs_core(const HostView *v)
{
        const PlacementRequest *req = v->req;

        if (!req || req->keep_emulator || v->params->emulator_pin != EMULATOR_PIN_SIBLINGS)
                return false;
        if (v->params->housekeeping_cpus && !cpuset_is_empty(v->params->housekeeping_cpus))
                return false;
        return v->t->max_threads < 2 || placement_request_all_realtime(req);
}

uint64_t policy_set_memory(const PlacementRequest *req)
{
        uint64_t memory = req->memory;

        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes)
                return 0;
        for (unsigned c = 0; c < req->ncells; c++)
                if (req->cells[c].memory_nodes && !cpuset_is_empty(req->cells[c].memory_nodes))
                        memory -= MIN(memory, req->cells[c].memory);
        return memory;
}

uint64_t policy_set_need(const PlacementRequest *req)
{
        uint64_t need = 0, in_cells = 0;

        if (!req->hugepage_size)
                return policy_set_memory(req);
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes)
                return 0;
        for (unsigned c = 0; c < req->ncells; c++) {
                const PlacementCell *cell = &req->cells[c];
                uint64_t bytes = placement_request_cell_pool_bytes(req, cell);
                in_cells = cell->memory > UINT64_MAX - in_cells ? UINT64_MAX : in_cells + cell->memory;
                if (cell->memory_nodes && !cpuset_is_empty(cell->memory_nodes))
                        continue;
                need = bytes > UINT64_MAX - need ? UINT64_MAX : need + bytes;
        }
        /* what no cell holds (all of it without cells): one backend of the request's page size */
        if (in_cells < req->memory) {
                uint64_t rest = plan_whole_pages(req->memory - in_cells, req->hugepage_size);
                need = rest > UINT64_MAX - need ? UINT64_MAX : need + rest;
        }
        return need;
}

/*
 * Above the exhaustive limit the host's table holds the sets each node grows by distance, not every
 * subset: when the request's constraints leave only some nodes, the sets of just those may be missing
 * (a cpuset over nodes 5 and 7 of 24, with 6 nearer to 5 than 7 is). The walk then runs on a table of
 * the allowed nodes, through a copy of the topology that points to it. When the memory is bound to nodes
 * the vCPUs cannot run on (HostView.memory_remote), the table holds the allowed nodes with a usable core,
 * the sets nearest the memory first (nodeset_table_toward()), at any size of host: the host's own key
 * knows nothing of where the memory is, and ranks every node alike. NULL when the host's table will do.
 */
static NodeSetTable *narrowed_sets(const HostView *v)
{
        const Topology *t = v->t;
        g_autofree unsigned *nodes = g_new(unsigned, MAX(t->nnodes, 1));
        g_autofree uint32_t *to_memory = g_new(uint32_t, MAX(t->nnodes, 1));
        unsigned k = 0;

        if (v->memory_remote) {
                for (unsigned n = 0; n < t->nnodes; n++)
                        if (v->node_allowed[n] && v->node_usable_cores[n] > 0 &&
                            v->node_to_memory[n] < TOPOLOGY_UNREACHABLE) {
                                to_memory[k] = v->node_to_memory[n];
                                nodes[k++] = n;
                        }
                if (k)
                        return nodeset_table_toward(t->nnodes, t->distance, nodes, k, to_memory,
                                                    v->req && v->req->vcpus_beyond_binding);
        }
        if (t->nodesets->exhaustive)
                return NULL;
        for (unsigned n = 0; n < t->nnodes; n++)
                if (v->node_allowed[n])
                        nodes[k++] = n;
        if (k == 0 || k == t->nnodes)
                return NULL;
        return nodeset_table_within(t->nnodes, t->distance, nodes, k);
}

/* The set for req's vCPUs and memory bytes (the memory the set must hold): placed, overcommitted or
 * unplaceable; host: what every reachable node offers together. */
static PlanResult search_sets(HostView *v, const PolicyOps *ops, const PlacementRequest *req, Plan *plan,
                              uint64_t memory, SetChoice *choice, SetLoad *host)
{
        SetSearch search;
        PlanResult result;
        g_autofree unsigned *all = g_new(unsigned, MAX(v->t->nnodes, 1));

        for (unsigned n = 0; n < v->t->nnodes; n++)
                all[n] = n;
        set_search_init(&search, v, ops, plan, req->vcpus, memory);
        search.cells_whole = plan->ncells > 0;
        if (search_room(&search, req, plan, choice))
                result = PLAN_PLACED;
        /* the host's pools lack its hugepage-backed cells, or its memory the cells no <page> backs: no
         * sharing of cores makes room for them */
        else if (memory && !host_view_kinds_fit(v, all, v->t->nnodes))
                result = PLAN_UNPLACEABLE;
        else if (load_overcommit_applies(v, ops->overcommit_by_core)
                     ? overcommit_search_by_load(v, ops, req->vcpus, memory, plan, choice)
                     : overcommit_search_counted(v, ops, &search, plan, choice))
                result = PLAN_OVERCOMMITTED;
        else
                result = PLAN_UNPLACEABLE;
        *host = search.host;
        set_search_done(&search);
        return result;
}

/* What node n holds for the request, busy or not, its cores with realtime vCPUs counted too. */
static unsigned size_with_realtime(HostView *v, const PolicyOps *ops, unsigned n)
{
        unsigned cores = v->node_realtime_cores[n], pus = v->node_realtime_pus[n], size;

        v->node_realtime_cores[n] = v->node_realtime_pus[n] = 0;
        size = ops->size(v, n);
        v->node_realtime_cores[n] = cores;
        v->node_realtime_pus[n] = pus;
        return size;
}

static Plan *place_once(const PolicyOps *ops, const Topology *t, const Ledger *l,
                        const PlacementRequest *req, const PlacementParams *params)
{
        bool absurd = req->vcpus > PLAN_MAX_VCPUS;
        Plan *plan = plan_new(req->name, absurd ? 0 : req->vcpus, req->memory, t->nnodes);
        HostView v;
        SetChoice choice;
        SetLoad host;
        Topology view;
        NodeSetTable *narrowed = NULL;
        g_autofree uint64_t *bound_free = NULL;
        bool spills = false;
        unsigned host_size = 0;

        plan->policy = ops->kind;
        plan->vcpu_pin = params->vcpu_pin;
        plan->requested_vcpus = req->vcpus;
        if (req->vcpus == 0 || absurd)
                return unplaceable_request(req, plan);
        plan_set_vcpu_ids(plan, req->vcpu_ids, req->vcpus);
        cells_init_plan(req, plan);
        if (finish_cell_memory_missing(t, req, plan))
                return plan;
        plan->hugepage_size = req->hugepage_size;
        plan->second_page_size = req->second_page_size;
        for (unsigned c = 0; c < plan->ncells && c < req->ncells; c++)
                plan->cells[c].ordinary = req->cells[c].ordinary;
        plan_set_ordinary(plan);
        plan_set_realtime(plan, req->realtime, req->realtime_vcpus);
        plan_set_realtime_threads(plan, req->realtime_emulator, req->realtime_iothreads);
        host_view_init_for(&v, t, l, params, req);
        if ((narrowed = narrowed_sets(&v))) {
                view = *t;
                view.nodesets = narrowed;
                v.t = &view;
        }
        for (unsigned n = 0; n < t->nnodes; n++) {
                v.node_capacity[n] = ops->capacity(&v, n);
                v.node_size[n] = ops->size(&v, n);
                host_size += v.node_size[n];
        }
        /* every core it may use holds a realtime vCPU: it must share them, and shares fewest a core over
         * the most of them (counted as none, every set held as few and the nearest node took it all) */
        for (unsigned n = 0; host_size == 0 && n < t->nnodes; n++)
                v.node_size[n] = size_with_realtime(&v, ops, n);
        cells_set_homes(&v, plan);
        bound_free = cells_hold_bound_memory(&v, plan);
        plan->result = search_sets(&v, ops, req, plan, policy_set_need(req), &choice, &host);
        /* <vcpu cpuset> alone binds no memory: what its nodes lack comes from others as the kernel falls
         * back, and its vCPUs still take cores inside it (left floating, they would share the cores of
         * every guest placed there after them) */
        if (plan->result == PLAN_UNPLACEABLE && finish_memory_spills(&v, req, plan)) {
                plan->result = search_sets(&v, ops, req, plan, 0, &choice, &host);
                spills = plan->result != PLAN_UNPLACEABLE;
        }

        if (plan->result == PLAN_UNPLACEABLE) {
                cells_free_bound_memory(&v, bound_free);
                /* the whole host's free memory as it is, not less what the bound cells would hold */
                if (bound_free) {
                        SetSearch whole;
                        set_search_init(&whole, &v, ops, NULL, req->vcpus, 0);
                        host.free_memory = whole.host.free_memory;
                        set_search_done(&whole);
                }
                finish_unplaceable(&v, req, &host, plan);
        } else {
                take_set(&v, ops, &choice, plan);
                /* finishing counts the cells' bound memory itself */
                cells_free_bound_memory(&v, bound_free);
                finish_plan(&v, ops, req, &choice, plan);
                /* what nothing binds and the set has no room for: where the kernel falls back */
                if (spills || !(req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes))
                        finish_spill(&v, plan, spills ? SPILL_CPUSET : SPILL_MEMNODE);
                /* the CPUs its definition keeps for QEMU's threads stay its own */
                policy_hold_thread_cpus(t, req, plan);
        }
        host_view_done(&v);
        nodeset_table_free(narrowed);
        return plan;
}

/* Places with the first tiers of memory; without room there, again with the lower tiers too
 * (memory-tiers.h). */
static Plan *place_tiers(const PolicyOps *ops, const Topology *t, const Ledger *l,
                         const PlacementRequest *req, const PlacementParams *params)
{
        g_autoptr(Plan) plan = place_once(ops, t, l, req, params);
        unsigned held = memory_tiers_held_back(t, params);

        if (plan->result != PLAN_PLACED && held && req->vcpus && req->vcpus <= PLAN_MAX_VCPUS) {
                PlacementParams wide = *params;
                g_autoptr(Plan) lower = NULL;

                wide.memory_tiers |= held;
                lower = place_once(ops, t, l, req, &wide);
                if (lower->result == PLAN_PLACED ||
                    (plan->result == PLAN_UNPLACEABLE && lower->result == PLAN_OVERCOMMITTED)) {
                        memory_tiers_note(t, true, lower);
                        return g_steal_pointer(&lower);
                }
                /* unplaceable either way: the reason of the wider try, whose free memory counts every
                 * tier (the first's said "free on the whole host" of its first tiers alone) */
                if (plan->result == PLAN_UNPLACEABLE && lower->result == PLAN_UNPLACEABLE) {
                        memory_tiers_note(t, false, lower);
                        return g_steal_pointer(&lower);
                }
        }
        memory_tiers_note(t, false, plan);
        return g_steal_pointer(&plan);
}

/* How many of plan's vCPUs are counted on a thread with another vCPU, another domain's (the ledger) or its
 * own: under compat, which fills siblings, plans that share as many cores differ in this. */
static unsigned vcpus_stacked(const Topology *t, const Ledger *l, const Plan *plan)
{
        g_autofree unsigned *on = g_new0(unsigned, MAX(t->npus, 1));
        unsigned n = 0;

        for (unsigned v = 0; v < plan->nvcpus; v++)
                if (plan->vcpu_pu[v] >= 0 && (unsigned)plan->vcpu_pu[v] < t->npus)
                        on[plan->vcpu_pu[v]]++;
        for (unsigned v = 0; v < plan->nvcpus; v++) {
                int pu = plan->vcpu_pu[v];
                n +=
                    pu >= 0 && (unsigned)pu < t->npus && (on[pu] > 1 || ledger_pu_load(l, (unsigned)pu) > 0);
        }
        return n;
}

/* How many of plan's vCPUs run on a core where another domain's vCPU is counted (the ledger): of two
 * plans that share as many cores, the one whose vCPUs pair with their own leaves the other domains'
 * cores as they were. */
static unsigned vcpus_beside_others(const Topology *t, const Ledger *l, const Plan *plan)
{
        unsigned n = 0;

        for (unsigned v = 0; v < plan->nvcpus; v++) {
                int pu = plan->vcpu_pu[v];
                n += pu >= 0 && (unsigned)pu < t->npus && ledger_core_load(l, t->pus[pu].core) > 0;
        }
        return n;
}

/*
 * A binding confines memory, not vCPUs: when the nodes its memory is bound to (by the definition, or a
 * live binding that stays) have too few free cores for a core per vCPU, the vCPUs take cores on the
 * nodes nearest that memory too before any shares one (the memory stays bound where it is), and when
 * the host has too few free cores for them all, fewer share than inside the binding's nodes. Not for
 * guest cells bound one by one (<memnode>): each cell keeps to its own nodes.
 */
static Plan *place_ops(const PolicyOps *ops, const Topology *t, const Ledger *l, const PlacementRequest *req,
                       const PlacementParams *params)
{
        g_autoptr(Plan) plan = place_tiers(ops, t, l, req, params);
        PlacementRequest wide;
        g_autoptr(Plan) beyond = NULL;

        /* the CPUs its definition gives QEMU's own threads: another set, where no vCPU runs beside them,
         * wins when it spans no more nodes (not past a memory binding, nor over more nodes: those cost
         * more than the emulator's neighbour); inside the same nodes, the cores are chosen as ever
         * (outside those CPUs first, never at the cost of the core kind) */
        if ((req->emulator_cpus || req->iothread_cpus) && !req->vcpus_off_user_threads &&
            !req->vcpus_beyond_binding) {
                PlacementRequest apart = *req;
                g_autoptr(Plan) off = NULL;
                apart.vcpus_off_user_threads = true;
                off = place_tiers(ops, t, l, &apart, params);
                if (off->result == PLAN_PLACED &&
                    (plan->result != PLAN_PLACED || (cpuset_count(off->nodes) <= cpuset_count(plan->nodes) &&
                                                     !cpuset_equal(off->nodes, plan->nodes))))
                        return g_steal_pointer(&off);
        }
        if (plan->result != PLAN_OVERCOMMITTED || req->vcpus_beyond_binding || !req->memory_nodes ||
            (req->memory_source != MEMORY_SOURCE_USER && req->memory_source != MEMORY_SOURCE_BOUND))
                return g_steal_pointer(&plan);
        wide = *req;
        wide.vcpus_beyond_binding = true;
        beyond = place_tiers(ops, t, l, &wide, params);
        /* placed, or overcommitted with fewer of its vCPUs sharing a core (as many, fewer sharing a
         * thread: compat fills siblings; as many, fewer beside another domain's vCPUs: by measured load
         * busy vCPUs pair on the free core beyond the binding, where inside it they stacked three to a
         * core beside a busy neighbour): the free cores beyond the binding are taken before any vCPU
         * shares, on a host with too few free cores as on one with enough */
        if (beyond->result == PLAN_PLACED ||
            (beyond->result == PLAN_OVERCOMMITTED &&
             (beyond->shared_vcpus < plan->shared_vcpus ||
              (beyond->shared_vcpus == plan->shared_vcpus &&
               (vcpus_stacked(t, l, beyond) < vcpus_stacked(t, l, plan) ||
                (vcpus_stacked(t, l, beyond) == vcpus_stacked(t, l, plan) &&
                 vcpus_beside_others(t, l, beyond) < vcpus_beside_others(t, l, plan)))))))
                return g_steal_pointer(&beyond);
        return g_steal_pointer(&plan);
}

Plan *policy_place_ops(const PolicyOps *ops, const Topology *t, const Ledger *l, const PlacementRequest *req,
                       const PlacementParams *params)
{
        Plan *plan = place_ops(ops, t, l, req, params);

        plan->packed = params->fit == FIT_PACK;
        return plan;
}

Plan *policy_place(const Topology *t, const Ledger *l, const PlacementRequest *req,
                   const PlacementParams *params)
{
        return policy_place_ops(policy_ops(params->policy), t, l, req, params);
}
