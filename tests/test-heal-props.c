/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy_heal() on seeded random hosts as the repository's real machines shape them: domains placed (some
 * with a <vcpu cpuset>, hugepages where the host has pools, memory bound live by placementd or by someone
 * else), some gone, load changed, then one pass. Every move keeps what heal.h promises: at most max_moves,
 * memory moved within the budget, the domain's size, its cpuset, no CPU the configuration keeps from vCPUs,
 * bound memory where it is, no cooling or fixed domain moved, no node or hugepage pool over what it holds,
 * never more of the domain's own busy vCPUs contending (heal's count); the same moves twice; and the
 * ledger empty once every domain stops.
 */
#include "test-util.h"
#include "heal.h"
#include "test-policy-util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAXD 40
/* seeds per host and configuration; HEAL_PROPS_SEEDS= fewer (the valgrind run: the same checks, a tenth
 * of the cases) */
#define SEEDS 100u

typedef struct Dom {
        char name[16];
        unsigned vcpus;
        uint64_t memory, hugepage_size;
        double busy[8];
        double host;
        CpuSet *allowed, *memory_nodes;
        bool own, live;
} Dom;

/* What each core runs: busy vCPUs (LOAD_BUSY_THRESHOLD or more) and host-side load, as heal counts. */
static void core_load(const Topology *t, const Ledger *l, const Dom *ds, unsigned n, unsigned *nb,
                      double *hb)
{
        memset(nb, 0, t->ncores * sizeof(*nb));
        memset(hb, 0, t->ncores * sizeof(*hb));
        for (unsigned i = 0; i < n; i++) {
                const Plan *p = ds[i].live ? ledger_lookup(l, ds[i].name) : NULL;
                unsigned ne = p && p->emulator_pin ? cpuset_count(p->emulator_pin) : 0;
                if (!p)
                        continue;
                for (unsigned v = 0; v < p->nvcpus; v++)
                        if (p->vcpu_pu[v] >= 0 && ds[i].busy[v] >= LOAD_BUSY_THRESHOLD)
                                nb[t->pus[p->vcpu_pu[v]].core]++;
                if (ne)
                        CPUSET_FOREACH (os, p->emulator_pin) {
                                int pu = topology_pu_by_os(t, (unsigned)os);
                                if (pu >= 0)
                                        hb[t->pus[pu].core] += ds[i].host / ne;
                        }
        }
}

static double *pu_busy_of(const Topology *t, const Ledger *l, const Dom *ds, unsigned n)
{
        double *b = g_new0(double, t->npus);

        for (unsigned i = 0; i < n; i++) {
                const Plan *p = ds[i].live ? ledger_lookup(l, ds[i].name) : NULL;
                unsigned ne = p && p->emulator_pin ? cpuset_count(p->emulator_pin) : 0;
                if (!p)
                        continue;
                for (unsigned v = 0; v < p->nvcpus; v++)
                        if (p->vcpu_pu[v] >= 0)
                                b[p->vcpu_pu[v]] += ds[i].busy[v];
                if (ne)
                        CPUSET_FOREACH (os, p->emulator_pin) {
                                int pu = topology_pu_by_os(t, (unsigned)os);
                                if (pu >= 0)
                                        b[pu] += ds[i].host / ne;
                        }
        }
        return b;
}

/* The busy vCPUs of d (plan p, in l) that contend as heal counts it. */
static unsigned own_contended(const Topology *t, const Ledger *l, const Plan *p, const Dom *ds, unsigned n,
                              const Dom *d)
{
        g_autofree unsigned *nb = g_new(unsigned, t->ncores);
        g_autofree double *hb = g_new(double, t->ncores);
        unsigned k = 0;

        core_load(t, l, ds, n, nb, hb);
        for (unsigned v = 0; v < p->nvcpus; v++) {
                unsigned c;
                if (p->vcpu_pu[v] < 0 || d->busy[v] < LOAD_BUSY_THRESHOLD)
                        continue;
                c = t->pus[p->vcpu_pu[v]].core;
                k += nb[c] >= 2 || (nb[c] >= 1 && hb[c] >= LOAD_BUSY_THRESHOLD);
        }
        return k;
}

static PlacementRequest request_of(const Dom *d, const double *pu_busy)
{
        return (PlacementRequest){.name = d->name,
                                  .vcpus = d->vcpus,
                                  .memory = d->memory,
                                  .allowed_cpus = d->allowed,
                                  .memory_nodes = d->memory_nodes,
                                  .memory_source =
                                      d->memory_nodes ? MEMORY_SOURCE_BOUND : MEMORY_SOURCE_NONE,
                                  .memory_mode = MEMORY_MODE_STRICT,
                                  .hugepage_size = d->hugepage_size,
                                  .vcpu_busy = pu_busy ? d->busy : NULL,
                                  .host_busy = d->host,
                                  .pu_busy = pu_busy,
                                  .memory_own = d->own};
}

/* Starts the domains of one seed on l; some leave and some change load. Returns how many. */
static unsigned populate(const Topology *t, Ledger *l, const PlacementParams *p, GRand *r, Dom *ds,
                         bool use_load)
{
        static const unsigned sizes[] = {1, 1, 2, 2, 3, 4, 8};
        unsigned n = (unsigned)g_rand_int_range(r, 2, MAXD);
        uint64_t pool = 0;

        for (unsigned k = 0; k < t->nnodes; k++)
                if (t->nodes[k].nhugepages)
                        pool = t->nodes[k].hugepages[0].size;
        for (unsigned i = 0; i < n; i++) {
                Dom *d = &ds[i];
                g_autofree double *pu_busy = NULL;
                PlacementRequest q;
                Plan *plan;
                int bound;

                snprintf(d->name, sizeof(d->name), "d%u", i);
                d->vcpus = sizes[g_rand_int_range(r, 0, G_N_ELEMENTS(sizes))];
                d->memory = (UINT64_C(512) << g_rand_int_range(r, 0, 5)) << 20;
                d->hugepage_size = pool && g_rand_int_range(r, 0, 3) == 0 ? pool : 0;
                for (unsigned v = 0; v < d->vcpus; v++)
                        d->busy[v] = g_rand_int_range(r, 0, 4) / 3.0;
                d->host = g_rand_int_range(r, 0, 4) * 0.4;
                if (g_rand_int_range(r, 0, 5) == 0) {
                        d->allowed = cpuset_new();
                        for (unsigned u = 0; u < t->npus; u++)
                                if (g_rand_int_range(r, 0, 3))
                                        cpuset_add(d->allowed, t->pus[u].os_index);
                }
                pu_busy = use_load ? pu_busy_of(t, l, ds, i) : NULL;
                q = request_of(d, pu_busy);
                plan = policy_place(t, l, &q, p);
                bound = g_rand_int_range(r, 0, 3);
                if ((plan->result == PLAN_PLACED || plan->result == PLAN_OVERCOMMITTED) && bound) {
                        g_autoptr(CpuSet) idx = plan_memory_nodes(plan);
                        d->memory_nodes = cpuset_new();
                        CPUSET_FOREACH (k, idx)
                                cpuset_add(d->memory_nodes, t->nodes[k].os_index);
                        d->own = bound == 1; /* bound live by placementd, else by someone else */
                }
                ck_assert_int_eq(ledger_commit(l, d->name, plan), 0);
                d->live = true;
        }
        for (unsigned i = 0; i < n; i++)
                if (g_rand_int_range(r, 0, 3) == 0) {
                        ck_assert_int_eq(ledger_release(l, ds[i].name), 0);
                        ds[i].live = false;
                }
        for (unsigned i = 0; i < n; i++)
                if (g_rand_int_range(r, 0, 3) == 0)
                        for (unsigned v = 0; v < ds[i].vcpus; v++)
                                ds[i].busy[v] = g_rand_int_range(r, 0, 4) / 3.0;
        return n;
}

static void check_move(const Topology *t, const PlacementParams *p, Ledger *w, const HealMove *m,
                       const Dom *ds, unsigned n, bool use_load, unsigned seed)
{
        const Dom *d = NULL;
        const Plan *old = ledger_lookup(w, m->key), *np = m->plan;
        unsigned before = 0;

        for (unsigned i = 0; i < n; i++)
                if (!strcmp(ds[i].name, m->key))
                        d = &ds[i];
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(old);
        ck_assert_msg(np->nvcpus == d->vcpus && np->memory == d->memory &&
                          np->hugepage_size == d->hugepage_size,
                      "seed %u: %s changed size", seed, m->key);
        for (unsigned v = 0; v < np->nvcpus; v++) {
                ck_assert_msg(np->vcpu_pu[v] >= 0 && !policy_keeps_pu(t, p, (unsigned)np->vcpu_pu[v]),
                              "seed %u: %s vCPU %u on PU %d", seed, m->key, v, np->vcpu_pu[v]);
                CPUSET_FOREACH (os, np->vcpu_pins[v]) {
                        int pu = topology_pu_by_os(t, (unsigned)os);
                        ck_assert_msg(pu >= 0 && !policy_keeps_pu(t, p, (unsigned)pu),
                                      "seed %u: %s vCPU %u pinned to kept CPU %d", seed, m->key, v, os);
                        ck_assert_msg(!d->allowed || cpuset_has(d->allowed, (unsigned)os),
                                      "seed %u: %s vCPU %u pinned outside its cpuset: %d", seed, m->key, v,
                                      os);
                }
        }
        if (d->memory_nodes)
                for (unsigned k = 0; k < np->nnode_memory; k++)
                        ck_assert_msg(np->node_memory[k] == old->node_memory[k],
                                      "seed %u: %s bound memory moved on node %u (%s)", seed, m->key, k,
                                      m->why);
        if (use_load)
                before = own_contended(t, w, old, ds, n, d);
        ck_assert_int_eq(ledger_release(w, m->key), 0);
        ck_assert_int_eq(ledger_commit(w, m->key, plan_copy(np)), 0);
        if (use_load)
                ck_assert_msg(own_contended(t, w, np, ds, n, d) <= before,
                              "seed %u: %s has more busy vCPUs contending after its move (%s)", seed, m->key,
                              m->why);
        for (unsigned k = 0; k < t->nnodes; k++) {
                ck_assert_msg(ledger_node_memory(w, k) <= t->nodes[k].memory ||
                                  np->node_memory[k] <= old->node_memory[k],
                              "seed %u: node %u over after moving %s", seed, k, m->key);
                for (unsigned h = 0; h < t->nodes[k].nhugepages; h++) {
                        uint64_t size = t->nodes[k].hugepages[h].size;
                        ck_assert_msg(
                            ledger_node_hugepages(w, k, size) <= topology_node_hugepage_bytes(t, k, size) ||
                                np->hugepage_size != size || np->node_memory[k] <= old->node_memory[k],
                            "seed %u: node %u's hugepages over after moving %s", seed, k, m->key);
                }
        }
}

static void one_seed(const Topology *t, const PlacementParams *p, unsigned seed)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(seed);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Ledger) w = NULL;
        g_autoptr(GPtrArray) moves = NULL, again = NULL;
        g_autofree double *pu_busy = NULL;
        HealDomain hd[MAXD];
        HealDomain *hdp[MAXD];
        Dom ds[MAXD] = {0};
        bool use_load = g_rand_boolean(r);
        unsigned n = populate(t, l, p, r, ds, use_load), nh = 0;
        HealParams hp = {.max_moves = (unsigned)g_rand_int_range(r, 1, 4),
                         .memory_budget = (uint64_t)g_rand_int_range(r, 0, 5) << 30,
                         .min_gain = HEAL_DEFAULT_MIN_GAIN,
                         .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN,
                         .undo_sharing = g_rand_int_range(r, 0, 4) == 0};
        uint64_t moved = 0;

        pu_busy = use_load ? pu_busy_of(t, l, ds, n) : NULL;
        for (unsigned i = 0; i < n; i++) {
                const Plan *cur = ds[i].live ? ledger_lookup(l, ds[i].name) : NULL;
                if (!cur)
                        continue;
                hd[nh] =
                    (HealDomain){.key = ds[i].name,
                                 .request = request_of(&ds[i], pu_busy),
                                 .policy = p->policy,
                                 .cooling = g_rand_int_range(r, 0, 8) == 0,
                                 .fixed = cur->result != PLAN_PLACED && cur->result != PLAN_OVERCOMMITTED};
                hdp[nh] = &hd[nh];
                nh++;
        }
        ck_assert_int_eq(policy_heal(t, l, p, &hp, hdp, nh, &moves, NULL), 0);
        ck_assert_int_eq(policy_heal(t, l, p, &hp, hdp, nh, &again, NULL), 0);
        ck_assert_msg(moves->len <= hp.max_moves, "seed %u: %u moves", seed, moves->len);
        ck_assert_msg(again->len == moves->len, "seed %u: %u moves, then %u", seed, moves->len, again->len);
        w = ledger_new_over(l);
        for (unsigned m = 0; m < moves->len; m++) {
                const HealMove *mv = g_ptr_array_index(moves, m);
                ck_assert_str_eq(mv->key, ((const HealMove *)g_ptr_array_index(again, m))->key);
                for (unsigned k = 0; k < nh; k++)
                        ck_assert_msg(strcmp(hd[k].key, mv->key) || !(hd[k].cooling || hd[k].fixed),
                                      "seed %u: %s moved while cooling or fixed", seed, mv->key);
                moved += mv->memory_moved;
                check_move(t, p, w, mv, ds, n, use_load, seed);
        }
        ck_assert_msg(moved <= hp.memory_budget, "seed %u: %" PRIu64 " bytes moved", seed, moved);
        for (unsigned i = 0; i < n; i++) {
                if (ds[i].live)
                        ck_assert_int_eq(ledger_release(w, ds[i].name), 0);
                g_clear_pointer(&ds[i].allowed, cpuset_free);
                g_clear_pointer(&ds[i].memory_nodes, cpuset_free);
        }
        ck_assert(ledger_is_empty(w));
        for (unsigned k = 0; k < t->nnodes; k++)
                ck_assert_uint_eq(ledger_node_memory(w, k), 0);
}

static const char *const hosts[] = {
    "hybrid-small-v3.xml", "spr-snc2.xml",     "two-node-hugepages.xml", "hbm-all-hugepages.xml",
    "knl-snc4-flat.xml",   "xeon-2s-smt.xml",  "disallowed-node.xml",    "power9-gpu.xml",
    "memory-only.xml",     "opteron-6272.xml", "twenty-nodes.xml",       "epyc-2s-nps1.xml",
};

/* Each host under a few configurations: the defaults, CPU 0-1 reserved, the performance cores only, and
 * compat. */
START_TEST(test_heal_props)
{
        g_autoptr(Topology) t = test_topology_load(hosts[_i]);

        const char *env = g_getenv("HEAL_PROPS_SEEDS");
        unsigned seeds = env ? (unsigned)CLAMP(g_ascii_strtoull(env, NULL, 10), 1, SEEDS) : SEEDS;

        for (unsigned c = 0; c < 4; c++) {
                PlacementParams p = test_params(c == 3 ? POLICY_COMPAT : POLICY_EXPLICIT);
                g_autoptr(CpuSet) reserved = cpuset_new();
                if (c == 1) {
                        cpuset_add(reserved, t->pus[0].os_index);
                        cpuset_add(reserved, t->pus[t->npus > 1].os_index);
                        p.reserved_cpus = reserved;
                }
                if (c == 2)
                        p.core_kinds = CORE_KINDS_PERFORMANCE_ONLY;
                for (unsigned seed = 1; seed <= seeds; seed++)
                        one_seed(t, &p, seed);
        }
}
END_TEST

int main(void)
{
        Suite *s = suite_create("heal properties");
        TCase *tc = tcase_create("pass");

        tcase_add_loop_test(tc, test_heal_props, 0, G_N_ELEMENTS(hosts));
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
