/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The corpus of host shapes (tests/topologies/make.sh): each loads with the counts hwloc's own tools
 * report for it (corpus.expected, written by make.sh from hwloc-calc and lstopo), and the engine keeps
 * its promises on it over a sequence of domains: no vCPU shares a core while the host has a free one,
 * pins stay inside the plan's nodes, memory stays within each node's capacity and off GPU memory, and
 * the same sequence gives the same plans.
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <stdlib.h>
#include <string.h>

typedef struct Expected {
        char *file;
        unsigned nodes, cores, pus, kinds;
        char *subtypes; /* "GPUMemory=4,..." or "-" */
} Expected;

static void expected_free(Expected *e)
{
        g_free(e->file);
        g_free(e->subtypes);
        g_free(e);
}

static GPtrArray *load_expected(void)
{
        g_autofree char *path = test_topology_path("corpus.expected");
        g_autofree char *text = NULL;
        g_auto(GStrv) lines = NULL;
        GPtrArray *all = g_ptr_array_new_with_free_func((GDestroyNotify)expected_free);

        ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
        lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                g_auto(GStrv) f = NULL;
                Expected *e;

                if (!**l || **l == '#')
                        continue;
                f = g_strsplit(*l, " ", -1);
                ck_assert_uint_eq(g_strv_length(f), 6);
                e = g_new0(Expected, 1);
                e->file = g_strdup(f[0]);
                e->nodes = (unsigned)atoi(f[1]);
                e->cores = (unsigned)atoi(f[2]);
                e->pus = (unsigned)atoi(f[3]);
                e->kinds = (unsigned)atoi(f[4]);
                e->subtypes = g_strdup(f[5]);
                g_ptr_array_add(all, e);
        }
        ck_assert_uint_ge(all->len, 10);
        return all;
}

/* The memory kind placementd gives an hwloc subtype that make.sh uses. */
static NodeKind subtype_kind(const char *subtype)
{
        if (strcmp(subtype, "GPUMemory") == 0)
                return NODE_KIND_GPU;
        if (strcmp(subtype, "MCDRAM") == 0)
                return NODE_KIND_HBM;
        if (strcmp(subtype, "CXL-DRAM") == 0)
                return NODE_KIND_CXL;
        if (strcmp(subtype, "NVM") == 0)
                return NODE_KIND_NVM;
        ck_abort_msg("subtype %s: add it to subtype_kind()", subtype);
        return NODE_KIND_DRAM;
}

START_TEST(test_counts_match_hwloc)
{
        g_autoptr(GPtrArray) all = load_expected();

        for (unsigned i = 0; i < all->len; i++) {
                const Expected *e = g_ptr_array_index(all, i);
                g_autoptr(Topology) t = test_topology_load(e->file);
                unsigned real = 0, by_kind[_NODE_KIND_MAX] = {0}, want[_NODE_KIND_MAX] = {0};

                for (unsigned n = 0; n < t->nnodes; n++)
                        if (!t->nodes[n].no_local_memory) {
                                real++;
                                by_kind[t->nodes[n].kind]++;
                        }
                ck_assert_msg(real == e->nodes, "%s: %u nodes, hwloc %u", e->file, real, e->nodes);
                ck_assert_msg(t->ncores == e->cores, "%s: %u cores, hwloc %u", e->file, t->ncores, e->cores);
                ck_assert_msg(t->npus == e->pus, "%s: %u PUs, hwloc %u", e->file, t->npus, e->pus);
                /* one kind (or none) is no kind to placementd */
                ck_assert_msg(t->ncore_kinds == (e->kinds > 1 ? e->kinds : 0), "%s: %u CPU kinds, hwloc %u",
                              e->file, t->ncore_kinds, e->kinds);
                if (strcmp(e->subtypes, "-") != 0) {
                        g_auto(GStrv) pairs = g_strsplit(e->subtypes, ",", -1);
                        unsigned others = e->nodes;
                        for (char **p = pairs; *p; p++) {
                                g_auto(GStrv) kv = g_strsplit(*p, "=", 2);
                                unsigned count = (unsigned)atoi(kv[1]);
                                want[subtype_kind(kv[0])] += count;
                                others -= count;
                        }
                        want[NODE_KIND_DRAM] += others;
                } else {
                        want[NODE_KIND_DRAM] = e->nodes;
                }
                for (unsigned k = 0; k < _NODE_KIND_MAX; k++)
                        ck_assert_msg(by_kind[k] == want[k], "%s: %u %s nodes, hwloc %u", e->file,
                                      by_kind[k], node_kind_to_string(k), want[k]);
        }
}
END_TEST

/*
 * Domain i of the sequence: sizes that mix small and large, with the host's memory per PU each; every
 * fifth asks for six times that, so that DRAM runs out and lower tiers (and GPU memory) are tempted.
 */
static void domain(const Topology *t, unsigned i, unsigned *vcpus, uint64_t *memory)
{
        static const unsigned sizes[] = {1, 2, 4, 3, 8, 1, 6, 2, 12, 1, 16, 4, 2, 5, 1, 24};
        uint64_t all = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                all += t->nodes[n].memory;
        *vcpus = sizes[i % G_N_ELEMENTS(sizes)];
        *memory = (uint64_t)*vcpus * (all / t->npus) * (i % 5 == 4 ? 6 : 1);
}

static void check_plan(const Topology *t, const Ledger *before, const Plan *p, const char *file)
{
        g_autoptr(CpuSet) set_pus = cpuset_new();
        unsigned free_cores = 0;
        uint64_t total = 0;

        for (unsigned c = 0; c < t->ncores; c++)
                free_cores += ledger_core_free(before, c);
        CPUSET_FOREACH (n, p->nodes)
                cpuset_union(set_pus, t->nodes[n].cpus);
        /* no avoidable sharing */
        if (p->result == PLAN_PLACED) {
                ck_assert_msg(p->shared_vcpus == 0, "%s %s: %s", file, p->name, p->reason);
                for (unsigned v = 0; v < p->nvcpus; v++)
                        ck_assert(ledger_core_free(before, t->pus[p->vcpu_pu[v]].core));
                ck_assert_uint_le(test_max_per_core(t, p), 1);
        } else if (p->result == PLAN_OVERCOMMITTED) {
                ck_assert_msg(free_cores < p->nvcpus, "%s %s overcommitted with %u free cores: %s", file,
                              p->name, free_cores, p->reason);
        }
        /* pins inside their nodes */
        for (unsigned v = 0; v < p->nvcpus && p->result != PLAN_UNPLACEABLE; v++) {
                ck_assert_int_ge(p->vcpu_pu[v], 0);
                ck_assert(cpuset_has(p->nodes, t->cores[t->pus[p->vcpu_pu[v]].core].node));
                ck_assert(!cpuset_is_empty(p->vcpu_pins[v]));
                CPUSET_FOREACH (cpu, p->vcpu_pins[v])
                        ck_assert_msg(cpuset_has(set_pus, cpu), "%s %s: CPU %u outside its nodes", file,
                                      p->name, cpu);
        }
        /* memory: all of it, off GPU memory and off CPUs without a node */
        for (unsigned n = 0; n < t->nnodes; n++) {
                total += p->node_memory[n];
                if (t->nodes[n].kind == NODE_KIND_GPU || t->nodes[n].no_local_memory)
                        ck_assert_uint_eq(p->node_memory[n], 0);
        }
        if (p->result != PLAN_UNPLACEABLE)
                ck_assert_uint_eq(total, p->memory);
}

/* Places the sequence on a fresh ledger, checking each plan; returns the ledger. */
static Ledger *run_sequence(const Topology *t, const char *file, unsigned count)
{
        Ledger *l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);

        for (unsigned i = 0; i < count; i++) {
                g_autofree char *name = g_strdup_printf("d%02u", i);
                PlacementRequest req = {.name = name};
                Plan *plan;

                domain(t, i, &req.vcpus, &req.memory);
                plan = policy_place(t, l, &req, &params);
                check_plan(t, l, plan, file);
                ck_assert_int_eq(ledger_commit(l, name, plan), 0);
                /* memory within every node's capacity */
                for (unsigned n = 0; n < t->nnodes; n++)
                        ck_assert_msg(ledger_node_memory(l, n) <= t->nodes[n].memory,
                                      "%s: node %u over capacity", file, t->nodes[n].os_index);
        }
        return l;
}

START_TEST(test_engine_invariants)
{
        g_autoptr(GPtrArray) all = load_expected();

        for (unsigned i = 0; i < all->len; i++) {
                const Expected *e = g_ptr_array_index(all, i);
                g_autoptr(Topology) t = test_topology_load(e->file);
                g_autoptr(Ledger) a = run_sequence(t, e->file, 24);
                g_autoptr(Ledger) b = run_sequence(t, e->file, 24);

                /* determinism: the same sequence, the same plans */
                for (unsigned d = 0; d < 24; d++) {
                        g_autofree char *name = g_strdup_printf("d%02u", d);
                        const Plan *x = ledger_lookup(a, name), *y = ledger_lookup(b, name);

                        ck_assert_str_eq(x->reason, y->reason);
                        ck_assert_int_eq(x->result, y->result);
                        ck_assert_int_eq(memcmp(x->vcpu_pu, y->vcpu_pu, sizeof(int) * x->nvcpus), 0);
                        ck_assert_int_eq(
                            memcmp(x->node_memory, y->node_memory, sizeof(uint64_t) * x->nnode_memory), 0);
                }
        }
}
END_TEST

static Suite *corpus_suite(void)
{
        Suite *s = suite_create("corpus");
        TCase *tc = tcase_create("shapes");

        tcase_add_test(tc, test_counts_match_hwloc);
        tcase_add_test(tc, test_engine_invariants);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(corpus_suite)
