/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Overcommit's PU choice against the plain scan it replaced: every vCPU on the PU with the least key
 * (load, own vCPUs on the core, the other load, own vCPUs on the node; by core for explicit, by PU for
 * compat; a core with a reserved thread half a vCPU busier), the first in node-then-PU order on ties.
 * Random ledgers, reserved CPUs and hosts, both policies.
 */
#include "test-util.h"
#include "topology-load.h"
#include "test-policy-util.h"

static bool key_less(const unsigned *a, const unsigned *b)
{
        for (unsigned i = 0; i < 4; i++)
                if (a[i] != b[i])
                        return a[i] < b[i];
        return false;
}

/* Whether core c has a PU in reserved (OS indexes). */
static bool core_reserved(const Topology *t, const CpuSet *reserved, unsigned c)
{
        for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                if (cpuset_has(reserved, t->pus[p].os_index))
                        return true;
        return false;
}

/* The reference: one scan over every usable PU of plan's nodes per vCPU, the ledger as it was; a core
 * with a reserved thread counts half a vCPU busier. */
static void reference(const Topology *t, const Ledger *l, const CpuSet *reserved, bool by_core,
                      const Plan *plan, int *out)
{
        g_autofree unsigned *pu_load = g_new0(unsigned, t->npus), *core_load = g_new0(unsigned, t->ncores);
        g_autofree unsigned *own = g_new0(unsigned, t->ncores), *on_node = g_new0(unsigned, t->nnodes);

        for (unsigned p = 0; p < t->npus; p++)
                pu_load[p] = ledger_pu_load(l, p);
        for (unsigned c = 0; c < t->ncores; c++)
                core_load[c] = 2 * ledger_core_load(l, c) + core_reserved(t, reserved, c);
        for (unsigned v = 0; v < plan->nvcpus; v++) {
                int best = -1;
                unsigned best_key[4] = {0};
                CPUSET_FOREACH (n, plan->nodes) {
                        const TopoNode *node = &t->nodes[n];
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                for (unsigned p = t->cores[c].pu_first;
                                     p < t->cores[c].pu_first + t->cores[c].npus; p++) {
                                        if (cpuset_has(reserved, t->pus[p].os_index))
                                                continue;
                                        unsigned key[4] = {by_core ? core_load[c] : pu_load[p], own[c],
                                                           by_core ? pu_load[p] : core_load[c], on_node[n]};
                                        if (best < 0 || key_less(key, best_key)) {
                                                best = (int)p;
                                                memcpy(best_key, key, sizeof(key));
                                        }
                                }
                }
                out[v] = best;
                pu_load[best]++;
                core_load[t->pus[best].core] += 2;
                own[t->pus[best].core]++;
                on_node[t->cores[t->pus[best].core].node]++;
        }
}

START_TEST(test_same_pus_as_the_scan)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(11);
        unsigned compared = 0;

        for (unsigned round = 0; round < 300; round++) {
                unsigned nodes = (unsigned)g_rand_int_range(r, 1, 7),
                         cores = (unsigned)g_rand_int_range(r, 1, 6);
                unsigned threads = (unsigned)g_rand_int_range(r, 1, 3);
                PolicyKind kind = g_rand_boolean(r) ? POLICY_EXPLICIT : POLICY_COMPAT;
                g_autoptr(Topology) t = topology_new_uniform(nodes, cores, threads, 64 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(kind);
                g_autoptr(CpuSet) reserved = cpuset_new();
                unsigned fill = (unsigned)g_rand_int_range(r, 0, (gint32)(2 * t->npus));
                PlacementRequest req = {.name = "probe", .memory = GiB};
                g_autoptr(Plan) plan = NULL;
                g_autofree int *want = NULL;

                for (unsigned pu = 0; pu < t->npus; pu++)
                        if (g_rand_int_range(r, 0, 8) == 0)
                                cpuset_add(reserved, t->pus[pu].os_index);
                p.reserved_cpus = reserved;
                for (unsigned i = 0; i < fill; i++) {
                        g_autofree char *name = g_strdup_printf("d%u", i);
                        test_place(t, l, &p, name, (unsigned)g_rand_int_range(r, 1, 4), GiB);
                }
                req.vcpus = (unsigned)g_rand_int_range(r, 1, (gint32)(2 * t->npus + 2));
                plan = policy_place(t, l, &req, &p);
                if (plan->result != PLAN_OVERCOMMITTED)
                        continue;
                want = g_new(int, plan->nvcpus);
                reference(t, l, reserved, kind == POLICY_EXPLICIT, plan, want);
                for (unsigned v = 0; v < plan->nvcpus; v++)
                        ck_assert_msg(plan->vcpu_pu[v] == want[v],
                                      "round %u (%ux%ux%u, %s): vCPU %u on PU %d, the scan %d", round, nodes,
                                      cores, threads, policy_kind_to_string(kind), v, plan->vcpu_pu[v],
                                      want[v]);
                compared++;
        }
        ck_assert_uint_ge(compared, 50); /* enough overcommitted plans were compared */
}
END_TEST

static unsigned core_of(const Topology *t, const Plan *plan, unsigned vcpu)
{
        ck_assert_int_ge(plan->vcpu_pu[vcpu], 0);
        return t->pus[plan->vcpu_pu[vcpu]].core;
}

/* Every core with more than one of the plan's vCPUs holds threads of one guest core only (ids / threads). */
static void assert_sharing_follows_guest(const Topology *t, const Plan *plan, const unsigned *ids,
                                         unsigned threads, const char *what)
{
        for (unsigned i = 0; i < plan->nvcpus; i++)
                for (unsigned j = i + 1; j < plan->nvcpus; j++)
                        if (core_of(t, plan, i) == core_of(t, plan, j))
                                ck_assert_msg((ids ? ids[i] : i) / threads == (ids ? ids[j] : j) / threads,
                                              "%s: vCPUs %u and %u, of different guest cores, share core %u",
                                              what, ids ? ids[i] : i, ids ? ids[j] : j, core_of(t, plan, i));
}

/* A guest that declares SMT threads (<cpu><topology threads='2'>) and must double up shares a host core
 * between the threads of one guest core, not between vCPUs it schedules as separate cores */
START_TEST(test_guest_threads_share_their_core)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 64 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const unsigned sparse[] = {0, 1, 4, 5, 6, 7}; /* vCPUs 2-3 unplugged */
        static const double busy[] = {1, 0, 1, 0, 1, 0, 1, 0};
        static const struct {
                unsigned vcpus;
                const unsigned *ids;
                const double *busy;
                const char *what;
        } cases[] = {
            {8, NULL, NULL, "8 vCPUs on 4 cores"},
            {6, NULL, NULL, "6 vCPUs on 4 cores"},
            {6, sparse, NULL, "vCPUs 0-1,4-7 on 4 cores"},
            {8, NULL, busy, "8 vCPUs, the first thread of each guest core busy"},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementRequest req = {.name = "smt",
                                        .vcpus = cases[i].vcpus,
                                        .memory = GiB,
                                        .vcpu_ids = cases[i].ids,
                                        .vcpu_busy = cases[i].busy,
                                        .guest_threads = 2};
                g_autoptr(Plan) plan = policy_place(t, l, &req, &p);
                g_autoptr(CpuSet) cores = cpuset_new();

                ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
                assert_sharing_follows_guest(t, plan, cases[i].ids, 2, cases[i].what);
                for (unsigned v = 0; v < plan->nvcpus; v++)
                        cpuset_add(cores, core_of(t, plan, v));
                ck_assert_msg(cpuset_count(cores) == 4, "%s: %u cores used of 4", cases[i].what,
                              cpuset_count(cores));
        }
}
END_TEST

/* A guest SMT core whose second thread cannot join the first one's core (that core is more loaded than
 * the best) goes to the nearest node to it of the equally loaded ones, not to the node holding fewest of
 * the domain's vCPUs: a pair the guest schedules as siblings never straddles two nodes needlessly */
START_TEST(test_guest_threads_stay_near_each_other)
{
        g_autoptr(Topology) t = NULL;
        g_autofree char *error = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Ledger) l = NULL;
        /* 2 sockets x 4 nodes x 14 cores x 2 threads: 64 vCPUs, then 128 in 64 guest cores on 48 cores */
        PlacementRequest first = {.name = "first", .vcpus = 64, .memory = 64 * GiB},
                         smt = {.name = "smt", .vcpus = 128, .memory = 64 * GiB, .guest_threads = 2};
        Plan *a;
        g_autoptr(Plan) b = NULL;
        unsigned apart = 0;

        ck_assert_msg(topology_load("synthetic:pack:2 numa:4(memory=64GiB) l3:1 core:14 pu:2", &t, &error) ==
                          0,
                      "%s", error);
        l = ledger_new(t);
        a = policy_place(t, l, &first, &p);
        ck_assert_int_eq(ledger_commit(l, "first", a), 0);
        b = policy_place(t, l, &smt, &p);
        ck_assert_int_eq(b->result, PLAN_OVERCOMMITTED);
        for (unsigned v = 0; v + 1 < b->nvcpus; v += 2)
                apart += t->cores[core_of(t, b, v)].node != t->cores[core_of(t, b, v + 1)].node;
        ck_assert_msg(apart == 0, "%u guest cores split over two nodes: %s", apart, b->reason);
}
END_TEST

/* Without declared threads, and with free cores, nothing changes: each vCPU its own core first */
START_TEST(test_guest_threads_only_when_doubling_up)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 64 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementRequest fits = {.name = "fits", .vcpus = 4, .memory = GiB, .guest_threads = 2},
                         plain = {.name = "plain", .vcpus = 8, .memory = GiB};
        g_autoptr(Plan) a = policy_place(t, l, &fits, &p), b = policy_place(t, l, &plain, &p);

        ck_assert_int_eq(a->result, PLAN_PLACED);
        ck_assert_uint_eq(test_max_per_core(t, a), 1);
        ck_assert_int_eq(b->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_ne(core_of(t, b, 0), core_of(t, b, 1)); /* the guest sees no siblings to pair */
}
END_TEST

/* An overcommitted plan's reason says whom its vCPUs share a core with: one another (two vCPUs on one core
 * read as sharing it together), each another domain's vCPU (each on a core of its own beside someone
 * else), or both; an odd count splits, and one vCPU is singular. 2 cores x 2 threads. */
START_TEST(test_sharing_reason_says_with_whom)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 64 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const struct {
                unsigned before[4]; /* vCPUs of the domains placed first, 0-ended */
                unsigned vcpus;
                unsigned shared;
                const char *says;
        } cases[] = {
            {{0}, 3, 2, "2 vCPUs share a core with each other"},
            {{0}, 4, 4, "4 vCPUs share cores with each other"},
            {{2}, 2, 2, "2 vCPUs each share a core with another domain's vCPU"},
            {{2}, 1, 1, "1 vCPU shares a core with another domain's vCPU"},
            {{1}, 3, 3, "3 vCPUs share cores: 2 with each other, 1 with another domain's vCPU"},
            {{3}, 2, 2, "2 vCPUs each share a core with another domain's vCPUs"}, /* two of one domain */
            {{1, 1, 1, 1}, 1, 1, "1 vCPU shares a core with other domains' vCPUs"},
            {{3},
             3,
             3,
             "3 vCPUs share cores: 1 with another domain's vCPUs, 2 with each other and another domain's "
             "vCPU"},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Ledger) l = ledger_new(t);
                const Plan *plan;
                g_autofree char *said = NULL;

                for (unsigned b = 0; b < G_N_ELEMENTS(cases[i].before) && cases[i].before[b]; b++) {
                        g_autofree char *name = g_strdup_printf("before%u", b);
                        test_place(t, l, &p, name, cases[i].before[b], GiB);
                }
                plan = test_place(t, l, &p, "vm", cases[i].vcpus, GiB);
                said = g_strdup_printf(": %s", cases[i].says);
                ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
                ck_assert_msg(plan->shared_vcpus == cases[i].shared, "case %u: %u shared: %s", i,
                              plan->shared_vcpus, plan->reason);
                /* the whole phrase: it ends the sentence (the emulator's note follows) */
                ck_assert_msg(strstr(plan->reason, said) &&
                                  (strchr(";", strstr(plan->reason, said)[strlen(said)]) ||
                                   !strstr(plan->reason, said)[strlen(said)]),
                              "case %u: not \"%s\": %s", i, cases[i].says, plan->reason);
        }
}
END_TEST

/* A guest whose vCPUs double up only as the threads of their guest cores says so */
START_TEST(test_sharing_reason_guest_threads)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "smt", .vcpus = 8, .memory = GiB, .guest_threads = 2};
        g_autoptr(Plan) plan = policy_place(t, l, &req, &p);

        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_msg(strstr(plan->reason,
                             ": 8 vCPUs share a core only with the other threads of their guest "
                             "core (<topology threads='2'>)"),
                      "%s", plan->reason);
}
END_TEST

/* Cores with a reserved thread rank between free cores and cores another vCPU holds in the set choice too:
 * with node 0 full and every core of node 1 partly reserved, a guest goes beside node 1's reserved CPUs,
 * not onto node 0's vCPUs. */
START_TEST(test_partly_reserved_node_before_shared_cores)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) reserved = cpuset_new();
        g_autoptr(Ledger) l = NULL;
        PlacementRequest first = {.name = "first", .vcpus = 8, .memory = 4 * GiB},
                         second = {.name = "second", .vcpus = 4, .memory = 4 * GiB};
        Plan *a;
        g_autoptr(Plan) b = NULL;

        for (unsigned c = 0; c < t->ncores; c++)
                if (t->cores[c].node == 1)
                        cpuset_add(reserved, t->pus[t->cores[c].pu_first + 1].os_index);
        p.reserved_cpus = reserved;
        l = ledger_new(t);
        a = policy_place(t, l, &first, &p);
        ck_assert_int_eq(a->result, PLAN_PLACED);
        ck_assert_int_eq(ledger_commit(l, "first", a), 0);
        b = policy_place(t, l, &second, &p);
        for (unsigned v = 0; v < b->nvcpus; v++)
                ck_assert_msg(t->cores[core_of(t, b, v)].node == 1, "vCPU %u on node %u: %s", v,
                              t->cores[core_of(t, b, v)].node, b->reason);
        ck_assert_uint_eq(test_max_per_core(t, b), 1);
}
END_TEST

/* Overcommitted, the cores of placementd's own domains are shared before those of a guest pinned by hand
 * (its owner chose those CPUs, as Nova's dedicated vCPUs): with one vCPU on each core, the next goes
 * beside placementd's own. */
START_TEST(test_own_cores_before_hand_pinned)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest nova = {.name = "nova", .vcpus = 1, .memory = GiB};
        g_autoptr(CpuSet) pin = cpuset_new();
        CpuSet *pins[] = {pin};
        const Plan *own, *late;

        cpuset_add(pin, t->pus[0].os_index);
        ck_assert_int_eq(ledger_commit(l, "nova", policy_adopt(t, l, &nova, pins, &p)), 0);
        own = test_place(t, l, &p, "own", 1, GiB);
        ck_assert_int_eq(own->result, PLAN_PLACED);
        ck_assert_int_eq(core_of(t, own, 0), 1);
        late = test_place(t, l, &p, "late", 1, GiB);
        ck_assert_int_eq(late->result, PLAN_OVERCOMMITTED);
        ck_assert_msg(core_of(t, late, 0) == 1, "late on core %u: %s", core_of(t, late, 0), late->reason);
}
END_TEST

/* Cores first means vCPUs that run alone: a set whose few free cores the fill would double up on keeps
 * none of them alone. Node 0 has one free core and three cores of two vCPUs each, node 1 four cores of one
 * vCPU each: four more vCPUs on node 0 alone would pair on its free core and make two of its cores run
 * three, where over both nodes one runs alone and three go beside a single vCPU. */
START_TEST(test_free_cores_kept_alone_or_not_counted)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) node0 = cpuset_new(), node1 = cpuset_new();
        PlacementRequest dense = {.name = "dense", .vcpus = 6, .memory = GiB, .allowed_cpus = node0},
                         sparse = {.name = "sparse", .vcpus = 4, .memory = GiB, .allowed_cpus = node1};
        g_autoptr(Plan) late = NULL;
        unsigned before[8];

        for (unsigned c = 1; c < 4; c++) /* cores 1-3 of node 0: two vCPUs each */
                cpuset_add(node0, t->pus[t->cores[c].pu_first].os_index);
        for (unsigned c = 4; c < 8; c++) /* node 1: one vCPU a core */
                cpuset_add(node1, t->pus[t->cores[c].pu_first].os_index);
        ck_assert_int_eq(ledger_commit(l, "dense", policy_place(t, l, &dense, &p)), 0);
        ck_assert_int_eq(ledger_commit(l, "sparse", policy_place(t, l, &sparse, &p)), 0);
        for (unsigned c = 0; c < t->ncores; c++)
                before[c] = ledger_core_load(l, c);
        ck_assert_uint_eq(before[0], 0);
        ck_assert_uint_eq(before[1], 2);
        ck_assert_uint_eq(before[4], 1);
        late = policy_place(t, l, &(PlacementRequest){.name = "late", .vcpus = 4, .memory = GiB}, &p);
        ck_assert_int_eq(late->result, PLAN_OVERCOMMITTED);
        for (unsigned v = 0; v < late->nvcpus; v++)
                ck_assert_msg(before[core_of(t, late, v)] <= 1, "vCPU %u on core %u beside %u vCPUs: %s", v,
                              core_of(t, late, v), before[core_of(t, late, v)], late->reason);
        ck_assert_uint_eq(test_max_per_core(t, late), 1);
}
END_TEST

/* An overcommitted plan's reason says its nodes hold the memory only when they do: a <vcpu cpuset>, which
 * binds none, lets what its nodes lack spill to others, and a <numatune> binding may put it all on nodes
 * the vCPUs are not on. 2 nodes of 4 cores x 2 threads, 8 GiB each; node 0 full of another domain's vCPUs
 * first. */
START_TEST(test_reason_says_where_the_memory_is)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) node0 = cpuset_new(), os1 = cpuset_new();
        static const struct {
                uint64_t first_memory; /* the domain on node 0 before it */
                bool bound;            /* <numatune><memory mode='strict' nodeset='1'> */
                const char *says;
        } cases[] = {
            {6 * GiB, false,
             "node 0 is the nearest (0 free cores there, 2.0 GiB of its 6.0 GiB counted there)"},
            {8 * GiB, false,
             "node 0 is the nearest (0 free cores there, none of its 6.0 GiB counted there)"},
            {2 * GiB, true, "node 0 is the nearest (0 free cores there, none of its 6.0 GiB counted there)"},
        };

        for (unsigned i = 0; i < t->nodes[0].ncores * 2; i++)
                cpuset_add(node0, t->pus[i].os_index);
        cpuset_add(os1, t->nodes[1].os_index);
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementRequest first = {
                    .name = "first", .vcpus = 4, .memory = cases[i].first_memory, .allowed_cpus = node0};
                PlacementRequest req = {.name = "vm", .vcpus = 4, .memory = 6 * GiB, .allowed_cpus = node0};
                g_autoptr(Plan) plan = NULL;

                if (cases[i].bound) {
                        req.memory_nodes = os1;
                        req.memory_source = MEMORY_SOURCE_USER;
                        req.memory_mode = MEMORY_MODE_STRICT;
                }
                ck_assert_int_eq(ledger_commit(l, "first", policy_place(t, l, &first, &p)), 0);
                plan = policy_place(t, l, &req, &p);
                ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
                ck_assert_msg(cpuset_has(plan->nodes, 0) && cpuset_count(plan->nodes) == 1, "case %u: %s", i,
                              plan->reason);
                ck_assert_msg(test_memory_on_own_nodes(plan) < req.memory,
                              "case %u: all its memory on node 0", i);
                ck_assert_msg(!strstr(plan->reason, "holds the memory"), "case %u: %s", i, plan->reason);
                ck_assert_msg(strstr(plan->reason, cases[i].says), "case %u: not \"%s\": %s", i,
                              cases[i].says, plan->reason);
        }
}
END_TEST

static Suite *overcommit_suite(void)
{
        Suite *s = suite_create("overcommit");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_same_pus_as_the_scan);
        tcase_add_test(tc, test_guest_threads_share_their_core);
        tcase_add_test(tc, test_guest_threads_stay_near_each_other);
        tcase_add_test(tc, test_guest_threads_only_when_doubling_up);
        tcase_add_test(tc, test_partly_reserved_node_before_shared_cores);
        tcase_add_test(tc, test_sharing_reason_says_with_whom);
        tcase_add_test(tc, test_sharing_reason_guest_threads);
        tcase_add_test(tc, test_own_cores_before_hand_pinned);
        tcase_add_test(tc, test_free_cores_kept_alone_or_not_counted);
        tcase_add_test(tc, test_reason_says_where_the_memory_is);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(overcommit_suite)
