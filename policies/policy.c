/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy driver. For one request it:
 *   1. takes the host as the ledger leaves it (free cores, free PUs, free memory per node);
 *   2. walks the topology's ranked node sets and finds the first group (equal max and mean distance)
 *      holding a set that qualifies for the policy; inside that group the least loaded set wins;
 *   3. if none qualifies but memory fits somewhere, overcommits on the memory-fitting set that offers
 *      most capacity, using the least loaded cores; if memory fits nowhere, pins nothing;
 *   4. turns the chosen PUs into pins, spreads the memory over the set, picks the emulator's CPUs and
 *      writes the reason.
 */
#include "policy.h"
#include "policy-internal.h"
#include "nodesets.h"
#include "size.h"

#include <stdio.h>
#include <string.h>

/* Requests above this are answered with an unplaceable plan instead of allocating for them. */
#define POLICY_MAX_VCPUS 4096u
/* How many ranked candidates a plan keeps for explain. */
#define POLICY_KEEP_CANDIDATES 24u

static const PolicyOps *policy_ops(PolicyKind k)
{
        return k == POLICY_COMPAT ? &policy_compat_ops : &policy_explicit_ops;
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

int policy_core_first_usable_pu(const HostView *v, unsigned core)
{
        const TopoCore *c = &v->t->cores[core];
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (v->pu_usable[p])
                        return (int)p;
        return -1;
}

/* A node is allowed unless the request's memory nodes leave it out, or it has CPUs and none is allowed. */
static bool node_allowed(const Topology *t, const PlacementRequest *req, unsigned n)
{
        const TopoNode *node = &t->nodes[n];

        if (!req)
                return true;
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes &&
            !cpuset_has(req->memory_nodes, node->os_index))
                return false;
        if (!req->allowed_cpus || node->ncores == 0)
                return true;
        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (cpuset_has(req->allowed_cpus, t->pus[p].os_index))
                                return true;
        return false;
}

static bool pu_allowed(const HostView *v, unsigned pu)
{
        const Topology *t = v->t;
        const PlacementRequest *req = v->req;

        if (!v->node_allowed[t->cores[t->pus[pu].core].node])
                return false;
        return !req || !req->allowed_cpus || cpuset_has(req->allowed_cpus, t->pus[pu].os_index);
}

void host_view_init(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params)
{
        host_view_init_for(v, t, l, params, NULL);
}

void host_view_init_for(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params,
                        const PlacementRequest *req)
{
        g_autofree bool *reserved = g_new0(bool, MAX(t->npus, 1));

        *v = (HostView){.t = t, .l = l, .params = params, .req = req};
        v->node_allowed = g_new0(bool, MAX(t->nnodes, 1));
        v->pu_usable = g_new0(bool, MAX(t->npus, 1));
        v->core_free = g_new0(bool, MAX(t->ncores, 1));
        v->node_free_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_free_pus = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_free_memory = g_new0(uint64_t, MAX(t->nnodes, 1));
        v->node_usable_pus = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_usable_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_capacity = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_load = g_new0(uint64_t, MAX(t->nnodes, 1));

        for (unsigned n = 0; n < t->nnodes; n++)
                v->node_allowed[n] = node_allowed(t, req, n);
        for (unsigned p = 0; p < t->npus; p++) {
                reserved[p] = params->reserved_cpus && cpuset_has(params->reserved_cpus, t->pus[p].os_index);
                v->pu_usable[p] = !reserved[p] && pu_allowed(v, p);
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                /* a sibling the host keeps makes the core not whole; one the request may not use does not */
                bool whole = ledger_core_free(l, c);
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                        if (reserved[p])
                                whole = false;
                        if (!v->pu_usable[p])
                                continue;
                        v->node_usable_pus[core->node]++;
                        v->node_load[core->node] += ledger_pu_load(l, p);
                        if (!ledger_pu_load(l, p))
                                v->node_free_pus[core->node]++;
                }
                whole = whole && policy_core_first_usable_pu(v, c) >= 0;
                v->core_free[c] = whole;
                if (whole)
                        v->node_free_cores[core->node]++;
                if (policy_core_first_usable_pu(v, c) >= 0)
                        v->node_usable_cores[core->node]++;
        }
        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t used = ledger_node_memory(l, n) + params->memory_reserve;
                v->node_free_memory[n] = t->nodes[n].memory > used ? t->nodes[n].memory - used : 0;
                if (!v->node_allowed[n])
                        v->node_free_memory[n] = 0;
        }
}

void host_view_done(HostView *v)
{
        g_free(v->node_allowed);
        g_free(v->pu_usable);
        g_free(v->core_free);
        g_free(v->node_free_cores);
        g_free(v->node_free_pus);
        g_free(v->node_free_memory);
        g_free(v->node_usable_pus);
        g_free(v->node_usable_cores);
        g_free(v->node_capacity);
        g_free(v->node_load);
}

/* What a candidate set offers, summed over its nodes. */
typedef struct SetLoad {
        unsigned capacity, free_cores, free_pus, usable_pus, usable_cores;
        uint64_t free_memory, load;
} SetLoad;

static void set_load_add(SetLoad *s, const HostView *v, unsigned node)
{
        s->capacity += v->node_capacity[node];
        s->free_cores += v->node_free_cores[node];
        s->free_pus += v->node_free_pus[node];
        s->usable_pus += v->node_usable_pus[node];
        s->usable_cores += v->node_usable_cores[node];
        s->free_memory += v->node_free_memory[node];
        s->load += v->node_load[node];
}

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
        unsigned *best_size;     /* [k] the most cores (explicit) or threads (compat) any k nodes have */
} SetSums;

static void set_load_sum(SetLoad *a, const SetLoad *b)
{
        a->capacity += b->capacity;
        a->free_cores += b->free_cores;
        a->free_pus += b->free_pus;
        a->usable_pus += b->usable_pus;
        a->usable_cores += b->usable_cores;
        a->free_memory += b->free_memory;
        a->load += b->load;
}

static int compare_unsigned_desc(const void *a, const void *b)
{
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? 1 : x > y ? -1 : 0;
}

static int compare_u64_desc(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? 1 : x > y ? -1 : 0;
}

/* Below this many candidates, summing node by node is cheaper than building the half tables. */
#define SUMS_HALVES_MIN_CANDIDATES 256u

static void set_sums_init(SetSums *ss, const HostView *v, const NodeSetTable *table, const CpuSet *reachable,
                          bool explicit_cores)
{
        unsigned n = cpuset_count(reachable), k = 0;
        g_autofree unsigned *cap = g_new0(unsigned, MAX(n, 1));
        g_autofree unsigned *size = g_new0(unsigned, MAX(n, 1));
        g_autofree uint64_t *mem = g_new0(uint64_t, MAX(n, 1));

        *ss = (SetSums){.v = v, .table = table};
        if (table->has_masks && table->ncandidates >= SUMS_HALVES_MIN_CANDIDATES) {
                ss->lo = g_new0(SetLoad, 256);
                ss->hi = g_new0(SetLoad, 256);
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
                size[k] = explicit_cores ? v->node_usable_cores[node] : v->node_usable_pus[node];
                mem[k++] = v->node_free_memory[node];
        }
        qsort(cap, n, sizeof(*cap), compare_unsigned_desc);
        qsort(size, n, sizeof(*size), compare_unsigned_desc);
        qsort(mem, n, sizeof(*mem), compare_u64_desc);
        ss->best_capacity = g_new0(unsigned, n + 1);
        ss->best_size = g_new0(unsigned, n + 1);
        ss->best_memory = g_new0(uint64_t, n + 1);
        for (k = 0; k < n; k++) {
                ss->best_capacity[k + 1] = ss->best_capacity[k] + cap[k];
                ss->best_size[k + 1] = ss->best_size[k] + size[k];
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

/* False when no set of this many nodes can hold the request (checked in O(1)). */
static bool set_sums_may_fit(const SetSums *ss, const NodeSet *set, unsigned capacity, uint64_t memory)
{
        return ss->best_capacity[set->nnodes] >= capacity && ss->best_memory[set->nnodes] >= memory;
}

/* False when no set of this many nodes has the free memory, the free capacity and the size asked. */
static bool set_sums_may_hold(const SetSums *ss, const NodeSet *set, unsigned capacity, unsigned size,
                              uint64_t memory)
{
        return set_sums_may_fit(ss, set, capacity, memory) && ss->best_size[set->nnodes] >= size;
}

/* The fewest nodes a set needs to hold capacity, size and memory; nnodes + 1 when no set can. */
static unsigned set_sums_min_nodes(const SetSums *ss, unsigned capacity, unsigned size, uint64_t memory)
{
        for (unsigned k = 1; k <= ss->table->nnodes; k++)
                if (ss->best_capacity[k] >= capacity && ss->best_size[k] >= size &&
                    ss->best_memory[k] >= memory)
                        return k;
        return ss->table->nnodes + 1;
}

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

static void rank_iter_init(RankIter *it, const NodeSetTable *t, unsigned from, unsigned kmin)
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

/* The next rank, or -1. */
static int rank_iter_next(RankIter *it)
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

static void rank_iter_done(RankIter *it)
{
        g_free(it->pos);
}

static SetLoad set_sums_get(const SetSums *ss, const NodeSet *set)
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

/* What a set physically holds for this policy: cores (explicit) or threads (compat), busy or not. */
static unsigned set_size(const PolicyOps *ops, const SetLoad *s)
{
        return ops->kind == POLICY_EXPLICIT ? s->usable_cores : s->usable_pus;
}

/* Least loaded first: most free cores, then most free memory (lowest node numbers: enumeration order). */
static bool less_loaded(const SetLoad *a, const SetLoad *b)
{
        if (a->free_cores != b->free_cores)
                return a->free_cores > b->free_cores;
        return a->free_memory > b->free_memory;
}

/* For overcommit: does a come closer than b to the target of free cores, then to a core per vCPU? */
static bool closer_fit(const PolicyOps *ops, const SetLoad *a, const SetLoad *b, unsigned target,
                       unsigned vcpus)
{
        unsigned ca = MIN(a->capacity, target), cb = MIN(b->capacity, target);
        if (ca != cb)
                return ca > cb;
        return MIN(set_size(ops, a), vcpus) > MIN(set_size(ops, b), vcpus);
}

static CpuSet *nodes_os(const Topology *t, const unsigned *nodes, unsigned n)
{
        CpuSet *s = cpuset_new();
        for (unsigned i = 0; i < n; i++)
                cpuset_add(s, t->nodes[nodes[i]].os_index);
        return s;
}

static void keep_candidate(const HostView *v, Plan *plan, unsigned rank, const NodeSet *set,
                           const SetLoad *load, bool qualifies, bool always)
{
        PlanCandidate *c;

        if (plan->candidates->len >= POLICY_KEEP_CANDIDATES && !always)
                return;
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

/* Marks the chosen candidate, adding it when it ranked beyond what the plan keeps. */
static void mark_chosen(const HostView *v, Plan *plan, unsigned rank, const SetLoad *load, bool qualifies)
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

/* Four counts as one number that orders like them, most significant first (each saturates at 65535). */
static uint64_t pack_key(unsigned a, unsigned b, unsigned c, unsigned d)
{
        return (uint64_t)MIN(a, 0xffffu) << 48 | (uint64_t)MIN(b, 0xffffu) << 32 |
               (uint64_t)MIN(c, 0xffffu) << 16 | MIN(d, 0xffffu);
}

/*
 * Overcommit: each vCPU on the least loaded core (explicit) or PU (compat) of the set, this plan's own
 * vCPUs counted as they land. Ties go to the core holding fewest of the domain's own vCPUs (a domain
 * should not halve itself on one core while another is as busy), then to the node holding fewest of
 * them, then to the lower index.
 */
static void assign_overcommit(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *pu_load = g_new0(unsigned, MAX(t->npus, 1));
        g_autofree unsigned *core_load = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree unsigned *own_core = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree unsigned *on_node = g_new0(unsigned, MAX(t->nnodes, 1));
        GArray *pus = g_array_new(FALSE, FALSE, sizeof(unsigned)); /* the set's usable PUs */
        bool by_core = plan->policy == POLICY_EXPLICIT;

        for (unsigned i = 0; i < n; i++) {
                const TopoNode *node = &t->nodes[nodes[i]];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        const TopoCore *core = &t->cores[c];
                        core_load[c] = ledger_core_load(v->l, c);
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                pu_load[p] = ledger_pu_load(v->l, p);
                                if (v->pu_usable[p])
                                        g_array_append_val(pus, p);
                        }
                }
        }
        for (unsigned vcpu = 0; vcpu < plan->nvcpus && pus->len; vcpu++) {
                int best = -1;
                uint64_t best_key = UINT64_MAX;

                for (unsigned k = 0; k < pus->len; k++) {
                        unsigned p = g_array_index(pus, unsigned, k), c = t->pus[p].core;
                        /* the four keys of the rule above, most significant first, packed to compare once */
                        uint64_t key =
                            pack_key(by_core ? core_load[c] : pu_load[p], own_core[c],
                                     by_core ? pu_load[p] : core_load[c], on_node[t->cores[c].node]);
                        if (best < 0 || key < best_key) {
                                best = (int)p;
                                best_key = key;
                        }
                }
                plan->vcpu_pu[vcpu] = best;
                pu_load[best]++;
                core_load[t->pus[best].core]++;
                own_core[t->pus[best].core]++;
                on_node[t->cores[t->pus[best].core].node]++;
        }
        g_array_unref(pus);
}

static void add_core_pus(const HostView *v, unsigned core, CpuSet *out)
{
        const TopoCore *c = &v->t->cores[core];
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (v->pu_usable[p])
                        cpuset_add(out, v->t->pus[p].os_index);
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
                int pu = plan->vcpu_pu[i];
                if (pu < 0)
                        continue;
                switch (plan->vcpu_pin) {
                case VCPU_PIN_CORE:
                        add_core_pus(v, t->pus[pu].core, plan->vcpu_pins[i]);
                        break;
                case VCPU_PIN_THREAD:
                        cpuset_add(plan->vcpu_pins[i], t->pus[pu].os_index);
                        break;
                default:
                        cpuset_union(plan->vcpu_pins[i], set_pus);
                        break;
                }
        }
}

void policy_spread_memory(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *vcpus_on = g_new0(unsigned, MAX(t->nnodes, 1));
        unsigned placed = 0;
        uint64_t left = plan->memory;

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0) {
                        vcpus_on[t->cores[t->pus[plan->vcpu_pu[i]].core].node]++;
                        placed++;
                }
        /* First pass: in proportion to the vCPUs each node runs. */
        CPUSET_FOREACH (n, plan->nodes) {
                uint64_t share =
                    placed ? (uint64_t)((unsigned __int128)plan->memory * vcpus_on[n] / placed) : 0;
                share = MIN(MIN(share, v->node_free_memory[n]), left);
                plan->node_memory[n] = share;
                left -= share;
        }
        /* Then whatever did not fit, on the set's nodes with room left (memory-only nodes included). */
        CPUSET_FOREACH (n, plan->nodes) {
                uint64_t room = v->node_free_memory[n] - plan->node_memory[n];
                uint64_t take = MIN(room, left);
                plan->node_memory[n] += take;
                left -= take;
        }
}

static void pick_emulator(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) own_cores = cpuset_new();

        if (plan->result == PLAN_UNPLACEABLE || v->params->emulator_pin == EMULATOR_PIN_NONE)
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        cpuset_add(own_cores, t->pus[plan->vcpu_pu[i]].core);

        if (v->params->emulator_pin == EMULATOR_PIN_NODESET) {
                CPUSET_FOREACH (n, plan->nodes) {
                        const TopoNode *node = &t->nodes[n];
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                if (cpuset_has(own_cores, c) || ledger_core_free(v->l, c))
                                        add_core_pus(v, c, plan->emulator_pin);
                }
        } else {
                CPUSET_FOREACH (c, own_cores) {
                        const TopoCore *core = &t->cores[c];
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                bool busy = ledger_pu_load(v->l, p) > 0;
                                for (unsigned i = 0; i < plan->nvcpus && !busy; i++)
                                        busy = plan->vcpu_pu[i] == (int)p;
                                if (v->pu_usable[p] && !busy)
                                        cpuset_add(plan->emulator_pin, t->pus[p].os_index);
                        }
                }
        }
        if (cpuset_is_empty(plan->emulator_pin)) {
                CPUSET_FOREACH (c, own_cores) {
                        add_core_pus(v, (unsigned)c, plan->emulator_pin);
                }
        }
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

static char *format_nodes(const Topology *t, const CpuSet *node_indexes)
{
        g_autoptr(CpuSet) os = cpuset_new();
        g_autofree char *list = NULL;

        CPUSET_FOREACH (n, node_indexes)
                cpuset_add(os, t->nodes[n].os_index);
        list = cpuset_format(os);
        return g_strdup_printf("%s %s", cpuset_count(os) == 1 ? "node" : "nodes", list);
}

/* Whether every node of set lies inside the request's constraints (a mask test when the table has masks). */
static bool set_inside(const HostView *v, const NodeSet *set, uint32_t allowed_mask)
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

/*
 * Memory the request binds itself is counted where it is bound: the first node under preferred, an even
 * share of every node otherwise (strict, interleave and restrictive let it use all of them).
 */
static void charge_bound_memory(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) nodes = cpuset_new();
        uint64_t share, left = plan->memory;

        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (cpuset_has(req->memory_nodes, v->t->nodes[n].os_index))
                        cpuset_add(nodes, n);
        if (cpuset_is_empty(nodes))
                return;
        if (req->memory_source != MEMORY_SOURCE_MEMNODE && req->memory_mode == MEMORY_MODE_PREFERRED) {
                plan->node_memory[cpuset_next(nodes, 0)] = plan->memory;
                return;
        }
        share = plan->memory / cpuset_count(nodes);
        CPUSET_FOREACH (n, nodes) {
                plan->node_memory[n] = share;
                left -= share;
        }
        plan->node_memory[cpuset_next(nodes, 0)] += left;
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

/* What the constraints did, appended to the reason ("" when there are none). */
static char *constraint_note(const Topology *t, const PlacementRequest *req, const Plan *plan)
{
        GString *s = g_string_new(NULL);

        if (req->allowed_cpus) {
                g_autofree char *list = cpuset_format(req->allowed_cpus);
                g_string_append_printf(s, "; kept inside <vcpu cpuset='%s'>", list);
        }
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) {
                g_autofree char *list = cpuset_format(req->memory_nodes);
                g_autoptr(CpuSet) charged = cpuset_new();
                g_autofree char *where = NULL;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        if (plan->node_memory[n])
                                cpuset_add(charged, t->nodes[n].os_index);
                where = cpuset_format(charged);
                g_string_append_printf(s,
                                       "; %s its memory to nodes %s (%s): cores taken there, the binding "
                                       "left as it is",
                                       memory_source_text(req), list,
                                       req->memory_source == MEMORY_SOURCE_MEMNODE
                                           ? "per cell"
                                           : memory_mode_to_string(req->memory_mode));
                if (*where)
                        g_string_append_printf(s, ", memory counted on %s%s", where,
                                               req->memory_source != MEMORY_SOURCE_MEMNODE &&
                                                       req->memory_mode == MEMORY_MODE_PREFERRED
                                                   ? " (preferred: its first node)"
                                                   : "");
        }
        if (req->keep_emulator)
                g_string_append(s, "; the emulator stays where <cputune><emulatorpin> puts it");
        return g_string_free(s, FALSE);
}

Plan *policy_place(const Topology *t, const Ledger *l, const PlacementRequest *req,
                   const PlacementParams *params)
{
        const PolicyOps *ops = policy_ops(params->policy);
        const NodeSetTable *table = t->nodesets;
        const char *unit = params->policy == POLICY_EXPLICIT ? "free cores" : "free CPUs";
        bool absurd = req->vcpus > POLICY_MAX_VCPUS;
        Plan *plan = plan_new(req->name, absurd ? 0 : req->vcpus, req->memory, t->nnodes);
        HostView v;
        SetSums sums;
        SetLoad host = {0};
        g_autoptr(CpuSet) reachable = cpuset_new();
        int chosen = -1, fallback = -1, group = -1;
        SetLoad chosen_load = {0}, fallback_load = {0};
        unsigned group_size = 0, target;
        uint32_t need_mask = 0, allowed_mask = 0;
        bool need_all, bound = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;
        /* bound memory is where it is: it does not choose the set, it is counted where it is bound */
        uint64_t memory = bound ? 0 : req->memory;
        g_autofree char *note = NULL;
        char a[32], b[32];

        plan->policy = ops->kind;
        plan->vcpu_pin = params->vcpu_pin;
        plan->requested_vcpus = req->vcpus;
        if (req->vcpus == 0 || absurd) {
                plan->result = PLAN_UNPLACEABLE;
                plan->reason =
                    req->vcpus == 0
                        ? g_strdup("the domain has no vCPUs; nothing pinned")
                        : g_strdup_printf("%u vCPUs is more than the %u a plan can hold; nothing pinned",
                                          req->vcpus, POLICY_MAX_VCPUS);
                return plan;
        }
        host_view_init_for(&v, t, l, params, req);
        for (unsigned n = 0; n < t->nnodes; n++) {
                v.node_capacity[n] = ops->capacity(&v, n);
                if (v.node_allowed[n] && n < 32)
                        allowed_mask |= UINT32_C(1) << n;
        }
        for (unsigned r = 0; r < table->ncandidates; r++) {
                const NodeSet *set = &table->candidates[r];
                for (unsigned i = 0; i < set->nnodes; i++)
                        cpuset_add(reachable, nodeset_members(table, set)[i]);
                if (cpuset_count(reachable) == t->nnodes)
                        break;
        }
        CPUSET_FOREACH (n, reachable)
                set_load_add(&host, &v, (unsigned)n);
        set_sums_init(&sums, &v, table, reachable, ops->kind == POLICY_EXPLICIT);

        /* 1. The nearest group holding a set with room; inside it the least loaded set. When the whole
         *    host lacks the room, no set has it: skip the walk. The first sets are all looked at (for
         *    explain); after them, sets too small for the request are skipped without being touched. */
        if (host.capacity >= req->vcpus && host.free_memory >= memory) {
                RankIter it;
                int rank;

                rank_iter_init(&it, table, 0, 1);
                for (unsigned seen = 0; (rank = rank_iter_next(&it)) >= 0; seen++) {
                        const NodeSet *set = &table->candidates[rank];
                        SetLoad load;
                        bool qualifies;

                        if (group >= 0 && set->group != (unsigned)group)
                                break;
                        if (seen == POLICY_KEEP_CANDIDATES) {
                                rank_iter_done(&it);
                                rank_iter_init(&it, table, (unsigned)rank + 1,
                                               set_sums_min_nodes(&sums, req->vcpus, 0, memory));
                                if (!set_sums_may_fit(&sums, set, req->vcpus, memory))
                                        continue;
                        }
                        if (!set_inside(&v, set, allowed_mask))
                                continue;
                        load = set_sums_get(&sums, set);
                        qualifies = load.free_memory >= memory && load.capacity >= req->vcpus;
                        if (plan->candidates->len < POLICY_KEEP_CANDIDATES)
                                keep_candidate(&v, plan, (unsigned)rank, set, &load, qualifies, false);
                        if (qualifies) {
                                group = (int)set->group;
                                group_size++;
                                if (chosen < 0 || less_loaded(&load, &chosen_load)) {
                                        chosen = rank;
                                        chosen_load = load;
                                }
                        }
                }
                rank_iter_done(&it);
        }
        /* 2. Nothing has room. Cores first: the fewest vCPUs should share, so the set needs as many free
         *    cores as the host can offer (target); then locality: the nearest such set that holds the
         *    memory and, busy or not, a core (a thread under compat) per vCPU. On a full host that is a
         *    near set, not the whole host. Failing that, the memory-fitting set that comes closest. */
        target = MIN(req->vcpus, host.capacity);
        need_all = table->has_masks && target == host.capacity && host.capacity > 0;
        for (unsigned n = 0; need_all && n < t->nnodes; n++)
                if (v.node_capacity[n] > 0)
                        need_mask |= UINT32_C(1) << n;
        for (unsigned pass = 0; pass < 3 && chosen < 0 && fallback < 0 && host.free_memory >= memory;
             pass++) {
                /* pass 0: the nearest set with the target's free cores and a core per vCPU; pass 1, when the
                 * host has fewer cores than vCPUs: the nearest set with the target and every core the host
                 * has; pass 2 (only when unreachable nodes keep the whole host from being a set): the
                 * closest fit among all that hold the memory. Passes 0 and 1 skip smaller sets untouched. */
                unsigned size_goal =
                    pass == 0 ? req->vcpus : MIN(req->vcpus, sums.best_size[sums.table->nnodes]);
                RankIter it;
                int rank;

                if (pass == 1 && size_goal == req->vcpus)
                        continue; /* pass 0 looked for exactly this */
                rank_iter_init(&it, table, 0,
                               pass < 2 ? set_sums_min_nodes(&sums, target, size_goal, memory) : 1);
                while ((rank = rank_iter_next(&it)) >= 0) {
                        unsigned r = (unsigned)rank;
                        const NodeSet *set = &table->candidates[r];
                        SetLoad load;

                        if (pass < 2 ? !set_sums_may_hold(&sums, set, target, size_goal, memory)
                                     : !set_sums_may_fit(&sums, set, 0, memory))
                                continue;
                        if (!set_inside(&v, set, allowed_mask))
                                continue;
                        /* when every free core is wanted, a set must hold every node that has one */
                        if (pass < 2 && need_all && (set->mask & need_mask) != need_mask)
                                continue;
                        load = set_sums_get(&sums, set);
                        if (load.free_memory < memory || load.usable_pus == 0)
                                continue;
                        if (plan->candidates->len < POLICY_KEEP_CANDIDATES)
                                keep_candidate(&v, plan, r, set, &load, false, false);
                        if (load.capacity >= target && set_size(ops, &load) >= size_goal) {
                                fallback = (int)r;
                                fallback_load = load;
                                break;
                        }
                        if (pass == 2 &&
                            (fallback < 0 || closer_fit(ops, &load, &fallback_load, target, req->vcpus))) {
                                fallback = (int)r;
                                fallback_load = load;
                        }
                }
                rank_iter_done(&it);
        }
        set_sums_done(&sums);

        if (chosen >= 0) {
                const NodeSet *set = &table->candidates[chosen];
                const unsigned *members = nodeset_members(table, set);
                for (unsigned i = 0; i < set->nnodes; i++)
                        cpuset_add(plan->nodes, members[i]);
                ops->assign(&v, members, set->nnodes, plan);
                plan->result = PLAN_PLACED;
                mark_chosen(&v, plan, (unsigned)chosen, &chosen_load, true);
        } else if (fallback >= 0) {
                const NodeSet *set = &table->candidates[fallback];
                const unsigned *members = nodeset_members(table, set);
                for (unsigned i = 0; i < set->nnodes; i++)
                        cpuset_add(plan->nodes, members[i]);
                assign_overcommit(&v, members, set->nnodes, plan);
                plan->result = PLAN_OVERCOMMITTED;
                mark_chosen(&v, plan, (unsigned)fallback, &fallback_load, false);
        } else {
                plan->result = PLAN_UNPLACEABLE;
        }

        if (plan->result != PLAN_UNPLACEABLE) {
                g_autofree char *where = format_nodes(t, plan->nodes);
                make_pins(&v, plan);
                if (bound)
                        charge_bound_memory(&v, req, plan);
                else
                        policy_spread_memory(&v, plan);
                plan->keep_memory = bound;
                policy_count_shared(&v, plan);
                if (!req->keep_emulator)
                        pick_emulator(&v, plan);
                note = constraint_note(t, req, plan);
                if (plan->result == PLAN_PLACED) {
                        const NodeSet *set = &table->candidates[chosen];
                        plan->reason = g_strdup_printf(
                            "%s: %u %s for %u vCPUs, %s free for %s; nearest qualifying set "
                            "(max distance %u, mean %.2f)%s%s",
                            where, chosen_load.capacity, unit, req->vcpus,
                            size_format(chosen_load.free_memory, a, sizeof(a)),
                            size_format(req->memory, b, sizeof(b)), set->max_distance, set->mean_distance,
                            group_size > 1 ? ", least loaded of its equally near sets" : "", note);
                } else {
                        plan->reason = g_strdup_printf(
                            "no node set has %u %s and %s free; %s is the nearest that holds the memory "
                            "(%u %s there): %u vCPUs share a core%s",
                            req->vcpus, unit, size_format(req->memory, b, sizeof(b)), where,
                            fallback_load.capacity, unit, plan->shared_vcpus, note);
                }
        } else if (host.usable_pus == 0 && (req->allowed_cpus || bound)) {
                note = constraint_note(t, req, plan);
                plan->reason = g_strdup_printf(
                    "no usable CPU of this host lies inside its constraints%s; nothing pinned", note);
        } else if (host.usable_pus == 0 && host.free_memory >= req->memory && params->reserved_cpus) {
                g_autofree char *reserved = cpuset_format(params->reserved_cpus);
                plan->reason = g_strdup_printf(
                    "no CPU is left for vCPUs: ReservedCPUs=%s holds them all; nothing pinned", reserved);
        } else {
                plan->reason = g_strdup_printf(
                    "no node set has %s of free memory (%s free on the whole host); nothing pinned",
                    size_format(req->memory, b, sizeof(b)), size_format(host.free_memory, a, sizeof(a)));
        }
        host_view_done(&v);
        return plan;
}
