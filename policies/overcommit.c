/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Overcommit: the set a request with no room goes to, and the least loaded cores it shares there. */
#include "overcommit.h"
#include "cells.h"
#include "load-rules.h"
#include "load.h"

#include <limits.h>
#include <stdlib.h>

/* For overcommit: does a come closer than b to the target of capacity, then to the size of a vCPU each? */
static bool closer_fit(const SetLoad *a, const SetLoad *b, unsigned target, unsigned vcpus)
{
        unsigned ca = MIN(a->capacity, target), cb = MIN(b->capacity, target);
        if (ca != cb)
                return ca > cb;
        return MIN(a->size, vcpus) > MIN(b->size, vcpus);
}

/* Four counts as one number that orders like them, most significant first (each saturates at 65535). */
static uint64_t pack_key(unsigned a, unsigned b, unsigned c, unsigned d)
{
        return (uint64_t)MIN(a, 0xffffu) << 48 | (uint64_t)MIN(b, 0xffffu) << 32 |
               (uint64_t)MIN(c, 0xffffu) << 16 | MIN(d, 0xffffu);
}

/*
 * The choice below, made fast. A PU's key has four parts, (load, own vCPUs on its core, the other load,
 * own vCPUs on its node); the first three change only for the PUs of the core a vCPU lands on, the last
 * for every PU of that node. So the set's usable PUs sit in one array, node by node, under a min
 * segment tree over (first three parts, position); each node's best PU is one range query, and a vCPU
 * takes the best of the nodes' bests by (full key, position). A vCPU then costs O(threads x log PUs +
 * nodes) instead of O(PUs), and the choice is the same PU as a scan of all PUs in array order would make.
 */
typedef struct KeyTree {
        unsigned n, size; /* leaves, and the power of two above them */
        uint64_t *key;    /* [n] each leaf's first three parts, packed */
        unsigned *best;   /* [2 * size] leaf index of each subtree's minimum; UINT_MAX for none */
} KeyTree;

static unsigned key_min(const KeyTree *k, unsigned a, unsigned b)
{
        if (a == UINT_MAX)
                return b;
        if (b == UINT_MAX)
                return a;
        return k->key[b] < k->key[a] ? b : a; /* equal keys: the lower position, a's side is lower */
}

static void key_tree_init(KeyTree *k, unsigned n)
{
        k->n = n;
        for (k->size = 1; k->size < MAX(n, 1); k->size *= 2)
                ;
        k->key = g_new0(uint64_t, MAX(n, 1));
        k->best = g_new(unsigned, 2 * k->size);
        for (unsigned i = 0; i < 2 * k->size; i++)
                k->best[i] = UINT_MAX;
}

static void key_tree_build(KeyTree *k)
{
        for (unsigned i = 0; i < k->n; i++)
                k->best[k->size + i] = i;
        for (unsigned i = k->size - 1; i >= 1; i--)
                k->best[i] = key_min(k, k->best[2 * i], k->best[2 * i + 1]);
}

static void key_tree_set(KeyTree *k, unsigned leaf, uint64_t key)
{
        k->key[leaf] = key;
        for (unsigned i = (k->size + leaf) / 2; i >= 1; i /= 2)
                k->best[i] = key_min(k, k->best[2 * i], k->best[2 * i + 1]);
}

/* The leaf with the least key in [lo, hi), lowest position on ties; UINT_MAX when empty. */
static unsigned key_tree_query(const KeyTree *k, unsigned lo, unsigned hi)
{
        unsigned left = UINT_MAX, right = UINT_MAX;

        for (lo += k->size, hi += k->size; lo < hi; lo /= 2, hi /= 2) {
                if (lo & 1)
                        left = key_min(k, left, k->best[lo++]);
                if (hi & 1)
                        right = key_min(k, k->best[--hi], right);
        }
        return key_min(k, left, right);
}

/* Takes leaf out of the tree: no query returns it. */
static void key_tree_remove(KeyTree *k, unsigned leaf)
{
        k->best[k->size + leaf] = UINT_MAX;
        for (unsigned i = (k->size + leaf) / 2; i >= 1; i /= 2)
                k->best[i] = key_min(k, k->best[2 * i], k->best[2 * i + 1]);
}

static void key_tree_done(KeyTree *k)
{
        g_free(k->key);
        g_free(k->best);
}

/* What a PU's key weighs: counts (load unknown or not used), or measured load. */
typedef enum KeyMode { KEY_COUNT, KEY_BUSY } KeyMode;

/* What a core with a realtime vCPU weighs in overcommit_assign(): as if 32 more vCPUs ran there (count),
 * or 16 more busy ones (load), so that any other core is shared first. */
#define OVERCOMMIT_REALTIME_LOAD 64u

/* The loads overcommit_assign() follows, counted as vCPUs land. */
typedef struct AssignState {
        const Topology *t;
        bool by_core;
        KeyMode mode;
        unsigned *pu_load, *core_load, *own_core, *on_node; /* by index */
        double *busy;                                       /* [ncores] busy threads' load (by load) */
        unsigned *pus;                                      /* [n] the set's usable PUs, node by node */
        unsigned *pos;                                      /* [npus] position in pus, UINT_MAX if absent */
} AssignState;

/* Four key parts of 12 bits each (saturating), most significant first, in 48 bits. */
static uint64_t pack12(unsigned a, unsigned b, unsigned c, unsigned d)
{
        return (uint64_t)MIN(a, 0xfffu) << 36 | (uint64_t)MIN(b, 0xfffu) << 24 |
               (uint64_t)MIN(c, 0xfffu) << 12 | MIN(d, 0xfffu);
}

/* The first parts of PU p's key, packed to compare once into 48 bits (the node's part goes below them). */
static uint64_t leaf_key(const AssignState *a, unsigned p)
{
        unsigned c = a->t->pus[p].core;

        switch (a->mode) {
        case KEY_BUSY: /* the core least busy with other threads, then the least loaded */
                return pack12(load_busy_key(a->busy[c]), a->core_load[c], a->own_core[c], a->pu_load[p]);
        case KEY_COUNT:
        default:
                return pack_key(a->by_core ? a->core_load[c] : a->pu_load[p], a->own_core[c],
                                a->by_core ? a->pu_load[p] : a->core_load[c], 0) >>
                       16;
        }
}

static double vcpu_busy(const PlacementRequest *req, unsigned i)
{
        return req && req->vcpu_busy ? req->vcpu_busy[i] : 1.0;
}

/* The guest's SMT threads per core when it declares more than one and its sharing follows them (by core). */
static unsigned guest_threads(const PlacementRequest *req, bool by_core)
{
        return by_core && req && req->guest_threads > 1 ? req->guest_threads : 1;
}

/*
 * What another domain's CPUs held on core c (its isolated emulator or I/O threads: Plan.held_pus) add to
 * its load for an overcommitted vCPU: one while a usable thread of the core is not held, where the vCPU
 * runs beside them; when every usable thread is held (a host without SMT), three, more than a core with
 * one vCPU: a vCPU there would run on that emulator's own CPU, the isolation its owner asked for undone,
 * so it shares a core with another vCPU first.
 */
static unsigned held_load(const HostView *v, unsigned c)
{
        if (!ledger_core_held(v->l, c))
                return 0;
        return policy_core_wholly_held(v, c) ? 3 : 1;
}

/*
 * The order vCPUs are assigned in: by number; by load the busy ones first, each group by number. A guest
 * that declares SMT threads has, in each group, the first thread of every guest core before the second:
 * its cores spread over the host's cores before any of them doubles up.
 */
static unsigned *assign_order(const PlacementRequest *req, const Plan *plan, bool by_load, unsigned threads)
{
        unsigned nvcpus = plan->nvcpus, nkeys = 2 * threads;
        g_autofree unsigned *key = g_new(unsigned, MAX(nvcpus, 1));
        g_autofree unsigned *start = g_new0(unsigned, nkeys + 1);
        unsigned *order = g_new(unsigned, MAX(nvcpus, 1));

        /* a counting sort by (group, thread): stable, so by number within each */
        for (unsigned i = 0; i < nvcpus; i++) {
                unsigned group = by_load && vcpu_busy(req, i) < LOAD_BUSY_THRESHOLD;
                key[i] = group * threads + plan_vcpu_id(plan, i) % threads;
                start[key[i] + 1]++;
        }
        for (unsigned k = 0; k < nkeys; k++)
                start[k + 1] += start[k];
        for (unsigned i = 0; i < nvcpus; i++)
                order[start[key[i]]++] = i;
        return order;
}

/* The parts of a key that weigh load, not the domain's own vCPUs: core or PU load by count; by load the
 * busy part and the core's load. */
static uint64_t load_part(const AssignState *a, uint64_t key)
{
        return a->mode == KEY_BUSY ? key >> 24 : key >> 32;
}

/*
 * A guest core's threads together: when the vCPU's guest sibling already runs on a core of the set that
 * is as lightly loaded as the best one found, its best PU there instead (the guest then sees its own
 * sharing: vCPUs it takes for separate cores do not run on one). node_index: the node of the result, as
 * an index into nodes; restricted to cell_node when that is not -1.
 */
static unsigned sibling_pu(const AssignState *a, const KeyTree *k, const unsigned *nodes, unsigned n,
                           int cell_node, int sibling_core, unsigned best, unsigned *node_index)
{
        const TopoCore *core;
        unsigned found = UINT_MAX, pick = UINT_MAX;

        if (sibling_core < 0 || (unsigned)sibling_core == a->t->pus[best].core)
                return best;
        core = &a->t->cores[sibling_core];
        if (cell_node >= 0 && core->node != (unsigned)cell_node)
                return best;
        for (unsigned i = 0; i < n; i++)
                if (nodes[i] == core->node)
                        found = i;
        if (found == UINT_MAX)
                return best;
        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (a->pos[p] != UINT_MAX && (pick == UINT_MAX || k->key[a->pos[p]] < k->key[a->pos[pick]]))
                        pick = p;
        if (pick == UINT_MAX || load_part(a, k->key[a->pos[pick]]) != load_part(a, k->key[a->pos[best]]))
                return best;
        *node_index = found;
        return pick;
}

/* Every leaf's key, and each node's best. */
static void rekey(const AssignState *a, KeyTree *k, const unsigned *range, unsigned n, unsigned *node_best)
{
        for (unsigned i = 0; i < k->n; i++)
                k->key[i] = leaf_key(a, a->pus[i]);
        key_tree_build(k);
        for (unsigned i = 0; i < n; i++)
                node_best[i] = key_tree_query(k, range[i], range[i + 1]);
}

/* Node i's key among the set's nodes: its best PU's key, then the node's own vCPUs so far. */
static uint64_t node_key(const AssignState *a, const KeyTree *k, const unsigned *nodes,
                         const unsigned *node_best, unsigned i)
{
        return k->key[node_best[i]] << 16 | MIN(a->on_node[nodes[i]], 0xffffu);
}

/*
 * Each vCPU on the least loaded core (by core: explicit) or PU (compat) of the set, this plan's own
 * vCPUs counted as they land. A core with a reserved thread (ReservedCPUs=) ranks after cores as loaded
 * without one: its free thread shares the core with host work, so it comes after wholly free cores and
 * before cores with one more vCPU. Ties go to the core holding fewest of the domain's own vCPUs (a domain
 * should not halve itself on one core while another is as busy), then to the node holding fewest of
 * them (for the second thread of a guest SMT core: the node nearest its first thread's), then to the
 * lower index. With measured load (load_overcommit_applies()) the keys are load-rules.h's:
 * busy vCPUs first, each on the core least busy with other threads; idle ones after them the same way,
 * so they take the free cores the busy ones left before they share.
 */
void overcommit_assign(const HostView *v, const PolicyOps *ops, const unsigned *nodes, unsigned n,
                       Plan *plan)
{
        const Topology *t = v->t;
        bool by_load = load_overcommit_applies(v, ops->overcommit_by_core);
        AssignState a = {
            .t = t,
            .by_core = ops->overcommit_by_core,
            .mode = by_load ? KEY_BUSY : KEY_COUNT,
            .pu_load = g_new0(unsigned, MAX(t->npus, 1)),
            .core_load = g_new0(unsigned, MAX(t->ncores, 1)),
            .own_core = g_new0(unsigned, MAX(t->ncores, 1)),
            .on_node = g_new0(unsigned, MAX(t->nnodes, 1)),
            .busy = g_new0(double, MAX(t->ncores, 1)),
            .pus = g_new(unsigned, MAX(t->npus, 1)),
            .pos = g_new(unsigned, MAX(t->npus, 1)),
        };
        g_autofree unsigned *range = g_new0(unsigned, n + 1); /* node i's PUs: pus[range[i]..range[i+1]) */
        g_autofree unsigned *node_best = g_new(unsigned, MAX(n, 1));
        g_autofree int *vcpu_node = g_new(int, MAX(plan->nvcpus, 1));
        unsigned threads = guest_threads(v->req, ops->overcommit_by_core);
        g_autofree unsigned *order = assign_order(v->req, plan, by_load, threads);
        /* the host core of each guest core's first placed thread, by guest core (libvirt id / threads) */
        g_autofree int *guest_core_at = NULL;
        unsigned npus = 0;
        KeyTree k, by_node; /* by_node: the nodes by node_key(), for vCPUs free to go to any of them */

        for (unsigned p = 0; p < t->npus; p++)
                a.pos[p] = UINT_MAX;

        /* a guest cell stays on one node that is big enough for it, busy or not */
        cells_pack_shared(v, nodes, n, plan, NULL, vcpu_node);
        cells_follow_guest(v, plan, vcpu_node);
        for (unsigned i = 0; i < n; i++) {
                const TopoNode *node = &t->nodes[nodes[i]];
                range[i] = npus;
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        const TopoCore *core = &t->cores[c];
                        /* twice the vCPUs on the core, plus one when it has a reserved thread, one when
                         * another domain holds a CPU of it (three when it holds every CPU a vCPU could
                         * take: held_load()), one when it runs vCPUs pinned by hand (their owner
                         * chose those CPUs: placementd's own domains' cores are shared first), one when
                         * the user keeps a CPU of it for this domain's own QEMU threads (<emulatorpin>,
                         * <iothreadpin>) */
                        a.core_load[c] = 2 * ledger_core_load(v->l, c) + policy_core_reserved(v, c) +
                                         held_load(v, c) + (ledger_core_adopted(v->l, c) ? 1 : 0) +
                                         policy_core_user_thread(v, c);
                        if (by_load)
                                a.busy[c] = load_core_busy(v, c) +
                                            (policy_core_wholly_held(v, c) ? LOAD_HELD_CORE : 0);
                        /* a realtime vCPU's core is its own: shared last, after any other */
                        if (ledger_core_realtime(v->l, c)) {
                                a.core_load[c] += OVERCOMMIT_REALTIME_LOAD;
                                a.busy[c] += OVERCOMMIT_REALTIME_LOAD / 2.0;
                        }
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                /* a CPU held for another domain's emulator is its thread's: the
                                 * core's other thread first */
                                a.pu_load[p] = ledger_pu_load(v->l, p) + (ledger_pu_held(v->l, p) ? 1 : 0);
                                if (v->pu_usable[p]) {
                                        a.pos[p] = npus;
                                        a.pus[npus++] = p;
                                }
                        }
                }
        }
        range[n] = npus;
        key_tree_init(&k, npus);
        rekey(&a, &k, range, n, node_best);
        key_tree_init(&by_node, n);
        for (unsigned i = 0; i < n; i++)
                by_node.key[i] =
                    node_best[i] == UINT_MAX ? UINT64_MAX : node_key(&a, &k, nodes, node_best, i);
        key_tree_build(&by_node);
        for (unsigned i = 0; i < n; i++)
                if (node_best[i] == UINT_MAX) /* no usable PU */
                        key_tree_remove(&by_node, i);
        if (threads > 1) {
                unsigned guest_cores = 0;
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        guest_cores = MAX(guest_cores, plan_vcpu_id(plan, i) / threads + 1);
                guest_core_at = g_new(int, MAX(guest_cores, 1));
                for (unsigned i = 0; i < guest_cores; i++)
                        guest_core_at[i] = -1;
        }

        for (unsigned j = 0; j < plan->nvcpus && npus; j++) {
                unsigned vcpu = order[j], best_node = UINT_MAX, best, c, node;
                uint64_t best_key = UINT64_MAX;
                /* the node of the guest core's thread placed first: of equally loaded nodes the nearest
                 * to it, so a guest SMT pair that must share stays under one L3, not across sockets */
                int sibling_node =
                    guest_core_at && guest_core_at[plan_vcpu_id(plan, vcpu) / threads] >= 0
                        ? (int)t->cores[guest_core_at[plan_vcpu_id(plan, vcpu) / threads]].node
                        : -1;

                /* the vCPU's cell's node when it has one with a usable PU, else any node of the set (the
                 * least key of by_node when nothing nearer a guest sibling decides: the same node the
                 * scan below finds) */
                for (unsigned i = 0; vcpu_node[vcpu] >= 0 && i < n; i++)
                        if (nodes[i] == (unsigned)vcpu_node[vcpu] && node_best[i] != UINT_MAX)
                                best_node = i;
                if (best_node == UINT_MAX && sibling_node < 0)
                        best_node = by_node.best[1];
                for (int restrict_to_cell = vcpu_node[vcpu] >= 0;
                     restrict_to_cell >= 0 && best_node == UINT_MAX; restrict_to_cell--)
                        for (unsigned i = 0; i < n; i++) {
                                uint64_t key;
                                if (node_best[i] == UINT_MAX ||
                                    (restrict_to_cell && nodes[i] != (unsigned)vcpu_node[vcpu]))
                                        continue;
                                key = k.key[node_best[i]] << 16 |
                                      (sibling_node >= 0
                                           ? MIN(topology_distance(t, (unsigned)sibling_node, nodes[i]),
                                                 0xffffu)
                                           : MIN(a.on_node[nodes[i]], 0xffffu));
                                if (best_node == UINT_MAX || key < best_key) { /* ties: the earlier node */
                                        best_node = i;
                                        best_key = key;
                                }
                        }
                best = a.pus[node_best[best_node]];
                if (guest_core_at)
                        best =
                            sibling_pu(&a, &k, nodes, n, vcpu_node[vcpu],
                                       guest_core_at[plan_vcpu_id(plan, vcpu) / threads], best, &best_node);
                c = t->pus[best].core;
                if (guest_core_at && guest_core_at[plan_vcpu_id(plan, vcpu) / threads] < 0)
                        guest_core_at[plan_vcpu_id(plan, vcpu) / threads] = (int)c;
                node = t->cores[c].node;
                plan->vcpu_pu[vcpu] = (int)best;
                a.pu_load[best]++;
                a.core_load[c] += 2;
                a.own_core[c]++;
                a.on_node[node]++;
                if (by_load)
                        a.busy[c] += vcpu_busy(v->req, vcpu);
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (a.pos[p] != UINT_MAX)
                                key_tree_set(&k, a.pos[p], leaf_key(&a, p));
                node_best[best_node] = key_tree_query(&k, range[best_node], range[best_node + 1]);
                key_tree_set(&by_node, best_node, node_key(&a, &k, nodes, node_best, best_node));
        }
        key_tree_done(&k);
        key_tree_done(&by_node);
        g_free(a.pu_load);
        g_free(a.core_load);
        g_free(a.own_core);
        g_free(a.on_node);
        g_free(a.busy);
        g_free(a.pus);
        g_free(a.pos);
}

/* Enumerating the sets that hold every needed node, and sorting them, beats the walk up to this many other
 * nodes (256 sets); with more, sorting them costs more than the walk spends reaching a set that holds all.
 */
#define SUPERSETS_MAX_OTHER_NODES 8

static int compare_unsigned(const void *a, const void *b)
{
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? -1 : x > y;
}

/*
 * When a set must hold every node of need_mask, the walk in rank order rejects every other set untouched;
 * on a 16-node host with the free cores on 9 nodes it passes over thousands of them to reach the 128 that
 * qualify. Those are the supersets of need_mask: their ranks (of kmin nodes or more), ascending, straight
 * from the table's mask index, so the caller sees the same sets in the same order. NULL when there are
 * too many of them or the table has no mask index (the walk is then as cheap).
 */
static GArray *superset_ranks(const NodeSetTable *table, uint32_t need_mask, unsigned kmin)
{
        uint32_t others = (uint32_t)((UINT64_C(1) << table->nnodes) - 1) & ~need_mask;
        GArray *ranks;

        if (!table->rank_of_mask || __builtin_popcount(others) > SUPERSETS_MAX_OTHER_NODES)
                return NULL;
        ranks = g_array_new(FALSE, FALSE, sizeof(unsigned));
        for (uint32_t sub = others;; sub = (sub - 1) & others) {
                unsigned r = table->rank_of_mask[need_mask | sub];
                if (r != UINT_MAX && table->candidates[r].nnodes >= kmin)
                        g_array_append_val(ranks, r);
                if (!sub)
                        break;
        }
        if (ranks->len > 1)
                qsort(ranks->data, ranks->len, sizeof(unsigned), compare_unsigned);
        return ranks;
}

/* The next rank of the walk: from list when there is one (*next its position), else from it. */
static int next_rank(RankIter *it, const GArray *list, unsigned *next)
{
        if (!list)
                return rank_iter_next(it);
        return *next < list->len ? (int)g_array_index(list, unsigned, (*next)++) : -1;
}

/* How many cores set_busy_sum() sums for a set of capacity calm cores: one per busy vCPU beyond them, at
 * most SET_BUSY_CORES_COMPARED. */
static unsigned busy_cores_compared(const SetSearch *s, unsigned capacity)
{
        return s->wanted > capacity ? MIN(s->wanted - capacity, SET_BUSY_CORES_COMPARED) : 1;
}

/*
 * What the busy vCPUs beyond set's calm cores (capacity) would run beside: the summed load of its least
 * busy cores that are not calm, busy_cores_compared() of them (SetSearch.node_busy); LOAD_NO_CORE for each
 * the set has no such core for. O(nodes x SET_BUSY_CORES_COMPARED) at most.
 */
static double set_busy_sum(const SetSearch *s, const NodeSet *set, unsigned capacity)
{
        const NodeBusyCores *b = s->node_busy;
        const unsigned *members = nodeset_members(s->table, set);
        unsigned extra = busy_cores_compared(s, capacity);
        double least[SET_BUSY_CORES_COMPARED]; /* the least busy so far, ascending */
        unsigned n = 0;
        double sum = 0;

        for (unsigned i = 0; i < set->nnodes; i++)
                for (unsigned j = b->first[members[i]]; j < b->first[members[i] + 1]; j++) {
                        double x = b->load[j];
                        unsigned k;
                        if (n == extra && x >= least[n - 1])
                                break; /* the node's others run as much or more */
                        k = n < extra ? n++ : n - 1;
                        for (; k > 0 && least[k - 1] > x; k--)
                                least[k] = least[k - 1];
                        least[k] = x;
                }
        for (unsigned k = 0; k < n; k++)
                sum += least[k];
        return sum + (extra - n) * LOAD_NO_CORE;
}

/* A core that is not calm but runs at most one vCPU's worth (load_node_busy_cores()): a vCPU put there
 * shares with that one alone, as one put on a calm core some other vCPU of the domain joins would. */
#define ALONE_LOAD_BELOW 1.5

/* Per node, how many of its cores that are not calm run at most one vCPU's worth; NULL without
 * SetSearch.node_busy. */
static unsigned *node_single_cores(const SetSearch *s)
{
        const NodeBusyCores *b = s->node_busy;
        unsigned nnodes = s->v->t->nnodes, *single;

        if (!b)
                return NULL;
        single = g_new0(unsigned, MAX(nnodes, 1));
        for (unsigned n = 0; n < nnodes; n++)
                for (unsigned j = b->first[n]; j < b->first[n + 1] && b->load[j] < ALONE_LOAD_BELOW; j++)
                        single[n]++;
        return single;
}

/*
 * How many of the calm cores of the nodes (members[0..n), capacity of them) keep the vCPU they take to
 * itself: the vCPUs beyond them go to the least busy cores first, so once the cores with at most one
 * vCPU's worth (single[], ALONE_LOAD_BELOW) are taken, each further vCPU joins one on a calm core. A set
 * whose few calm cores would all be doubled up offers no vCPU a core of its own, however many it has.
 */
static unsigned alone_capacity(const SetSearch *s, const unsigned *single, const unsigned *members,
                               unsigned n, unsigned capacity)
{
        unsigned one = 0;

        for (unsigned i = 0; i < n; i++)
                one += single[members[i]];
        if (s->wanted <= capacity + one)
                return capacity;
        return capacity - MIN(capacity, s->wanted - capacity - one);
}

/*
 * One pass over the ranked sets: the first that holds target, size_goal and the memory (passes 0 and 1,
 * which skip smaller sets untouched), or the closest fit among all that hold the memory (pass 2). With
 * SetSearch.node_busy, passes 0 and 1 go on through the first qualifying set's group of equally near sets
 * and take the one whose least busy cores run least (set_busy_sum(); the first of equals); the others
 * kept for explain are marked busier, or as busy when their least busy cores run as much.
 */
static bool search_pass(const SetSearch *s, const unsigned *single, Plan *plan, unsigned pass,
                        unsigned target, unsigned size_goal, uint32_t need_mask, SetChoice *out)
{
        const NodeSetTable *table = s->table;
        bool need_all = need_mask != 0;
        unsigned kmin = pass < 2 ? set_sums_min_nodes(&s->sums, target, size_goal, s->memory) : 1, next = 0;
        g_autoptr(GArray) supersets = pass < 2 && need_all ? superset_ranks(table, need_mask, kmin) : NULL;
        double best_busy = 0;
        int group = -1, first = -1;
        RankIter it;
        int rank;

        rank_iter_init(&it, table, 0, kmin);
        while ((rank = next_rank(&it, supersets, &next)) >= 0) {
                unsigned r = (unsigned)rank;
                const NodeSet *set = &table->candidates[r];
                SetLoad load;

                if (group >= 0 && set->group != (unsigned)group)
                        break;
                if (pass < 2 ? !set_sums_may_hold(&s->sums, set, target, size_goal, s->memory)
                             : !set_sums_may_fit(&s->sums, set, 0, s->memory))
                        continue;
                if (!set_inside(s->v, set, s->allowed_mask) ||
                    (plan->ncells && !cells_bound_fit(s->v, nodeset_members(table, set), set->nnodes, plan,
                                                      s->cells, false)))
                        continue;
                /* when every free core is wanted, a set must hold every node that has one */
                if (pass < 2 && need_all && (set->mask & need_mask) != need_mask)
                        continue;
                load = set_sums_get(&s->sums, set);
                /* each kind of its memory in its own room (hugepages in the pools) */
                if (load.free_memory < s->memory || load.usable_pus == 0 ||
                    !host_view_kinds_fit(s->v, nodeset_members(table, set), set->nnodes))
                        continue;
                if (plan->candidates->len < POLICY_KEEP_CANDIDATES)
                        keep_candidate(s->v, plan, r, set, &load, false, false);
                if ((pass < 2 && single
                         ? alone_capacity(s, single, nodeset_members(table, set), set->nnodes, load.capacity)
                         : load.capacity) >= target &&
                    load.size >= size_goal) {
                        PlanCandidate *kept = plan_candidate_of(plan, r); /* its row, when kept */
                        double busy;

                        if (!s->node_busy || pass == 2) {
                                out->rank = (int)r;
                                out->load = load;
                                break;
                        }
                        busy = set_busy_sum(s, set, load.capacity);
                        if (kept && kept->rank == r)
                                kept->busier = true; /* unless chosen: mark_chosen() says so */
                        if (out->rank < 0) {
                                group = (int)set->group;
                                first = (int)r;
                        }
                        if (out->rank < 0 || busy < best_busy) {
                                out->rank = (int)r;
                                out->load = load;
                                best_busy = busy;
                        }
                        continue;
                }
                if (pass == 2 && (out->rank < 0 || closer_fit(&load, &out->load, target, s->vcpus))) {
                        out->rank = (int)r;
                        out->load = load;
                }
        }
        rank_iter_done(&it);
        out->least_busy = first >= 0 && out->rank != first;
        out->busy_cores = out->least_busy ? busy_cores_compared(s, out->load.capacity) : 0;
        for (unsigned i = 0; first >= 0 && i < plan->candidates->len; i++) {
                PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                const NodeSet *set = &table->candidates[c->rank];
                if (c->busier && (c->rank == (unsigned)out->rank ||
                                  set_busy_sum(s, set, set_sums_get(&s->sums, set).capacity) <= best_busy)) {
                        c->busier = false;
                        c->as_busy = c->rank != (unsigned)out->rank; /* as calm, further in rank order */
                }
        }
        return out->rank >= 0;
}

bool overcommit_search(const SetSearch *s, Plan *plan, SetChoice *out)
{
        const HostView *v = s->v;
        unsigned target = MIN(s->wanted, s->host.capacity);
        g_autofree unsigned *single = node_single_cores(s);
        bool need_all;
        uint32_t need_mask = 0;

        /* cores first counts the calm cores that keep a vCPU alone: as many as the whole host can */
        if (single) {
                g_autofree unsigned *all = g_new(unsigned, MAX(v->t->nnodes, 1));
                for (unsigned n = 0; n < v->t->nnodes; n++)
                        all[n] = n;
                target = MIN(target, alone_capacity(s, single, all, v->t->nnodes, s->host.capacity));
        }
        need_all = s->table->has_masks && target == s->host.capacity && s->host.capacity > 0;
        *out = (SetChoice){.rank = -1};
        for (unsigned n = 0; need_all && n < v->t->nnodes; n++)
                if (v->node_capacity[n] > 0)
                        need_mask |= UINT32_C(1) << n;
        if (s->host.free_memory < s->memory)
                return false;
        /* pass 0: the nearest set with the target and a vCPU's size each; pass 1, when the host is smaller
         * than that: the nearest set with the target and all the host has; pass 2 (only when unreachable
         * nodes keep the whole host from being a set): the closest fit among all that hold the memory. */
        for (unsigned pass = 0; pass < 3; pass++) {
                unsigned size_goal =
                    pass == 0 ? s->vcpus : MIN(s->vcpus, s->sums.best_size[s->sums.nreachable]);

                if (pass == 1 && size_goal == s->vcpus)
                        continue; /* pass 0 looked for exactly this */
                if (search_pass(s, single, plan, pass, target, size_goal, need_mask, out))
                        return true;
        }
        return false;
}
