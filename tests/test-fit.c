/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How well a domain fits where it lands, on hosts made with hwloc's own tools (tests/topologies): the L3
 * decides between equally near sets, cores beside reserved threads come after wholly free ones, and
 * without a distance matrix a socket's nodes are nearer than another socket's.
 */
#include "decision-text.h"
#include "nodesets.h"
#include "policy-internal.h"
#include "test-util.h"
#include "test-policy-util.h"
#include "topology-load.h"

static Topology *load_fixture(const char *name)
{
        g_autofree char *path = test_topology_path(name);
        g_autofree char *error = NULL;
        Topology *t = NULL;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s: %s", path, error ? error : "");
        return t;
}

/* Commits a domain of one vCPU on each of the given cores (first thread), no memory. */
static void occupy(const Topology *t, Ledger *l, const char *name, const unsigned *cores, unsigned n)
{
        Plan *plan = plan_new(name, n, 0, t->nnodes);

        plan->result = PLAN_PLACED;
        for (unsigned i = 0; i < n; i++) {
                const TopoCore *c = &t->cores[cores[i]];
                plan->vcpu_pu[i] = (int)c->pu_first;
                cpuset_add(plan->vcpu_pins[i], t->pus[c->pu_first].os_index);
                cpuset_add(plan->nodes, c->node);
        }
        ck_assert_int_eq(ledger_commit(l, name, plan), 0);
}

/* The L3 groups (TopoCore.l3) the plan's vCPUs run in, as a set. */
static CpuSet *plan_l3s(const Topology *t, const Plan *plan)
{
        CpuSet *s = cpuset_new();
        for (unsigned v = 0; v < plan->nvcpus; v++)
                cpuset_add(s, t->cores[t->pus[plan->vcpu_pu[v]].core].l3);
        return s;
}

/* Occupies every core of node n's L3 groups except `leave` cores in each group (leave[g] of group g). */
static void occupy_node(const Topology *t, Ledger *l, const char *name, unsigned n, const unsigned *leave)
{
        const TopoNode *node = &t->nodes[n];
        g_autofree unsigned *cores = g_new(unsigned, node->ncores);
        g_autofree unsigned *seen = g_new0(unsigned, t->nl3);
        unsigned first_l3 = t->cores[node->core_first].l3, k = 0;

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                unsigned g = t->cores[c].l3;
                if (seen[g]++ >= leave[g - first_l3])
                        cores[k++] = c;
        }
        if (k)
                occupy(t, l, name, cores, k);
}

START_TEST(test_l3_fit_four_nodes)
{
        /* 4 nodes of 4 L3 x 6 cores. Node 0 has a busy core in every L3 (20 free cores, 5 at most in one
         * L3); node 1 has one whole free L3 (6 free cores); nodes 2 and 3 a free core per L3. A 6-vCPU
         * domain goes to node 1's free L3, not 5+1 over two of node 0's. */
        g_autoptr(Topology) t = load_fixture("four-l3-per-node.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const unsigned five[4] = {5, 5, 5, 5}, one_l3[4] = {0, 6, 0, 0}, ones[4] = {1, 1, 1, 1};

        ck_assert_uint_eq(t->nnodes, 4);
        ck_assert_uint_eq(t->nl3, 16);
        occupy_node(t, l, "a", 0, five);
        occupy_node(t, l, "b", 1, one_l3);
        occupy_node(t, l, "c", 2, ones);
        occupy_node(t, l, "d", 3, ones);
        const Plan *plan = test_place(t, l, &p, "vm", 6, 8 * GiB);
        g_autoptr(CpuSet) l3s = plan_l3s(t, plan);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_has(plan->nodes, 1) && test_plan_node_count(plan) == 1, "%s", plan->reason);
        ck_assert_uint_eq(cpuset_count(l3s), 1);
        ck_assert_msg(strstr(plan->reason, "fits one L3") != NULL, "%s", plan->reason);
}
END_TEST

/* Two nodes of 2 packages of 2 single-thread cores, no L3 known. Node 0 has one free core in each of its
 * packages, node 1 both of package 2: a 2-vCPU domain goes to package 2, and the reason and the rule
 * line say a package's cores decided, not an L3 cache the host does not have. */
START_TEST(test_no_l3_package_fit_said)
{
        g_autoptr(Topology) t = NULL;
        g_autofree char *error = NULL;
        g_autofree char *text = NULL;
        g_autoptr(Ledger) l = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const unsigned busy[4] = {0, 2, 6, 7};

        ck_assert_msg(topology_load("synthetic:numa:2(memory=16GB) pack:2 core:2 pu:1", &t, &error) == 0,
                      "%s", error);
        ck_assert(t->l3_unknown);
        l = ledger_new(t);
        occupy(t, l, "a", busy, 4);
        const Plan *plan = test_place(t, l, &p, "vm", 2, 1 * GiB);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        for (unsigned v = 0; v < 2; v++)
                ck_assert_uint_eq(t->cores[t->pus[plan->vcpu_pu[v]].core].package, 2);
        ck_assert_msg(strstr(plan->reason, "where each node's share fits one package's cores") != NULL, "%s",
                      plan->reason);
        ck_assert_msg(strstr(plan->reason, "L3") == NULL, "%s", plan->reason);
        ck_assert(plan->l3_by_package);
}
END_TEST

START_TEST(test_no_l3_node_over_packages)
{
        /* One node over 4 packages of 2 single-thread cores, no L3 and no shared L2 known (an 8-socket
         * Opteron of hwloc's tests, 16amd64-8n2c-cpusets, reads so once its offline nodes leave their CPUs
         * to none): with core 0 busy, a 2-vCPU domain takes one package's two free cores, not core 1 of
         * package 0 and core 2 of package 1. */
        g_autoptr(Topology) t = NULL;
        g_autofree char *error = NULL;
        g_autoptr(Ledger) l = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const unsigned busy[1] = {0};

        ck_assert_msg(topology_load("synthetic:numa:1(memory=16GB) pack:4 core:2 pu:1", &t, &error) == 0,
                      "%s", error);
        l = ledger_new(t);
        ck_assert_uint_eq(t->npackages, 4);
        occupy(t, l, "a", busy, 1);
        const Plan *plan = test_place(t, l, &p, "vm", 2, 1 * GiB);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(t->cores[t->pus[plan->vcpu_pu[0]].core].package,
                          t->cores[t->pus[plan->vcpu_pu[1]].core].package);
        ck_assert_uint_ne(t->cores[t->pus[plan->vcpu_pu[0]].core].package, 0);
}
END_TEST

START_TEST(test_l3_fit_epyc)
{
        /* 2x EPYC 9654 in NPS1: 2 nodes of 12 CCDs x 8 cores. Node 0 has a busy core in every CCD (84 free
         * cores, 7 at most in one CCD), node 1 only one idle CCD: 8 vCPUs take that CCD, not 7+1. */
        g_autoptr(Topology) t = load_fixture("epyc-9654-nps1.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned seven[12], one_ccd[12] = {0};

        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->nl3, 24);
        for (unsigned g = 0; g < 12; g++)
                seven[g] = 7;
        one_ccd[5] = 8;
        occupy_node(t, l, "a", 0, seven);
        occupy_node(t, l, "b", 1, one_ccd);
        const Plan *plan = test_place(t, l, &p, "vm", 8, 16 * GiB);
        g_autoptr(CpuSet) l3s = plan_l3s(t, plan);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_has(plan->nodes, 1), "%s", plan->reason);
        ck_assert_uint_eq(cpuset_count(l3s), 1);
        ck_assert_uint_eq(cpuset_next(l3s, 0), 12 + 5);
        /* with a free core back in every CCD of node 0, both fit: the least loaded wins again */
        ck_assert_int_eq(ledger_release(l, "vm"), 0);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        plan = test_place(t, l, &p, "vm", 8, 16 * GiB);
        ck_assert_msg(cpuset_has(plan->nodes, 0), "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "L3") == NULL, "%s", plan->reason);
}
END_TEST

START_TEST(test_l3_fit_epyc_nps4)
{
        /* 2x EPYC 7763 in NPS4: 8 nodes of 2 CCDs x 8 cores, 11 within a quadrant pair, 12 across the
         * socket, 32 across the sockets. Nodes 0 and 1 have a busy core in each CCD (7 + 7 free each), nodes
         * 2 and 3 one idle CCD each, the other socket nothing free. 16 vCPUs need two nodes: of the pairs at
         * 11, nodes 2-3 give each node's 8 a CCD of its own, where nodes 0-1 (28 free cores) would split
         * both. The reason says so, and so does explain's rule, which must not say free cores chose. */
        g_autoptr(Topology) t = load_fixture("epyc-7763-nps4.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const unsigned seven[2] = {7, 7}, one_ccd[2] = {8, 0}, none[2] = {0, 0};

        ck_assert_uint_eq(t->nnodes, 8);
        ck_assert_uint_eq(t->nl3, 16);
        ck_assert_uint_eq(topology_distance(t, 0, 1), 11);
        ck_assert_uint_eq(topology_distance(t, 0, 2), 12);
        ck_assert_uint_eq(topology_distance(t, 0, 4), 32);
        occupy_node(t, l, "a", 0, seven);
        occupy_node(t, l, "b", 1, seven);
        occupy_node(t, l, "c", 2, one_ccd);
        occupy_node(t, l, "d", 3, one_ccd);
        for (unsigned n = 4; n < 8; n++) {
                char name[8];
                g_snprintf(name, sizeof(name), "f%u", n);
                occupy_node(t, l, name, n, none);
        }
        const Plan *plan = test_place(t, l, &p, "vm", 16, 16 * GiB);
        g_autoptr(CpuSet) l3s = plan_l3s(t, plan);
        g_autofree char *explain = plan_explain(t, plan);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_has(plan->nodes, 2) && cpuset_has(plan->nodes, 3) &&
                          test_plan_node_count(plan) == 2,
                      "%s", plan->reason);
        ck_assert_uint_eq(cpuset_count(l3s), 2);
        ck_assert_msg(strstr(plan->reason, "where each node's share fits one L3 cache") != NULL, "%s",
                      plan->reason);
        ck_assert_msg(strstr(explain, "rule: the nearest group of sets with room wins; among equally near "
                                      "sets, one where each node's share fits one L3 cache first, then the "
                                      "one with most free cores") != NULL,
                      "%s", explain);
}
END_TEST

/* Free cores of node n in its best L3 group, from the ledger alone. */
static unsigned oracle_l3_room(const Topology *t, const Ledger *l, unsigned n)
{
        g_autofree unsigned *room = g_new0(unsigned, t->nl3);
        unsigned best = 0;

        for (unsigned c = t->nodes[n].core_first; c < t->nodes[n].core_first + t->nodes[n].ncores; c++) {
                room[t->cores[c].l3] += ledger_core_free(l, c);
                best = MAX(best, room[t->cores[c].l3]);
        }
        return best;
}

/* Whether each node's share of vcpus (split by free cores, as explicit splits) fits its best L3 group. */
static bool oracle_fits(const Topology *t, const Ledger *l, const NodeSet *set, unsigned vcpus)
{
        const unsigned *members = nodeset_members(t->nodesets, set);
        g_autofree unsigned *free = g_new0(unsigned, set->nnodes);
        g_autofree unsigned *share = g_new0(unsigned, set->nnodes);

        for (unsigned i = 0; i < set->nnodes; i++)
                for (unsigned c = 0; c < t->ncores; c++)
                        free[i] += t->cores[c].node == members[i] && ledger_core_free(l, c);
        policy_spread(free, set->nnodes, vcpus, share);
        for (unsigned i = 0; i < set->nnodes; i++)
                if (share[i] > oracle_l3_room(t, l, members[i]))
                        return false;
        return true;
}

static unsigned oracle_free_cores(const Topology *t, const Ledger *l, const NodeSet *set)
{
        unsigned n = 0;
        for (unsigned c = 0; c < t->ncores; c++)
                for (unsigned i = 0; i < set->nnodes; i++)
                        n += t->cores[c].node == nodeset_members(t->nodesets, set)[i] &&
                             ledger_core_free(l, c);
        return n;
}

/* A random host of 1-5 nodes with 1-3 L3 groups each, cores taken at random. */
static Topology *random_l3_host(GRand *r, Ledger **ret_ledger)
{
        unsigned nodes = (unsigned)g_rand_int_range(r, 1, 6), cores = (unsigned)g_rand_int_range(r, 2, 10);
        unsigned groups = (unsigned)g_rand_int_range(r, 1, 4), nbusy = 0;
        g_autofree uint32_t *d = g_new(uint32_t, nodes * nodes);
        g_autofree unsigned *busy = NULL;
        Topology *t;

        for (unsigned i = 0; i < nodes; i++)
                for (unsigned j = i; j < nodes; j++)
                        d[i * nodes + j] = d[j * nodes + i] =
                            i == j ? 10 : (uint32_t)g_rand_int_range(r, 11, 14);
        t = topology_new_uniform(nodes, cores, (unsigned)g_rand_int_range(r, 1, 3), 16 * GiB, d);
        t->nl3 = nodes * groups;
        for (unsigned c = 0; c < t->ncores; c++)
                t->cores[c].l3 = t->cores[c].node * groups + (c % cores) * groups / cores;
        *ret_ledger = ledger_new(t);
        busy = g_new(unsigned, t->ncores);
        for (unsigned c = 0; c < t->ncores; c++)
                if (g_rand_int_range(r, 0, 5) < 2)
                        busy[nbusy++] = c;
        if (nbusy)
                occupy(t, *ret_ledger, "busy", busy, nbusy);
        return t;
}

START_TEST(test_l3_fit_oracle)
{
        /* On random hosts: when a qualifying set of the chosen group has every node's share in one L3
         * group, the chosen set has too; and a node's share that fits one L3 group runs in one. */
        unsigned decided = 0;

        for (guint32 seed = 1; seed <= 400; seed++) {
                g_autoptr(GRand) r = g_rand_new_with_seed(seed);
                g_autoptr(Ledger) l = NULL;
                g_autoptr(Topology) t = random_l3_host(r, &l);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                unsigned vcpus = (unsigned)g_rand_int_range(r, 1, 9);
                PlacementRequest req = {.name = "vm", .vcpus = vcpus, .memory = GiB};
                g_autoptr(Plan) plan = policy_place(t, l, &req, &p);
                const NodeSet *chosen = NULL;
                bool any_fits = false;

                if (plan->result != PLAN_PLACED)
                        continue;
                for (unsigned i = 0; i < plan->candidates->len; i++) {
                        const PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                        if (c->chosen)
                                chosen = &t->nodesets->candidates[c->rank];
                }
                ck_assert_ptr_nonnull(chosen);
                for (unsigned k = 0; k < t->nodesets->ncandidates; k++) {
                        const NodeSet *set = &t->nodesets->candidates[k];
                        if (set->group == chosen->group && oracle_free_cores(t, l, set) >= vcpus)
                                any_fits |= oracle_fits(t, l, set, vcpus);
                }
                ck_assert_msg(!any_fits || oracle_fits(t, l, chosen, vcpus), "seed %u: %s", seed,
                              plan->reason);
                decided += any_fits && strstr(plan->reason, "fits one L3") != NULL;
                for (unsigned i = 0; i < chosen->nnodes; i++) {
                        unsigned n = nodeset_members(t->nodesets, chosen)[i], share = 0;
                        g_autoptr(CpuSet) l3s = cpuset_new();
                        for (unsigned v = 0; v < plan->nvcpus; v++) {
                                const TopoCore *core = &t->cores[t->pus[plan->vcpu_pu[v]].core];
                                if (core->node == n) {
                                        share++;
                                        cpuset_add(l3s, core->l3);
                                }
                        }
                        if (share && share <= oracle_l3_room(t, l, n))
                                ck_assert_msg(cpuset_count(l3s) == 1, "seed %u node %u: %s", seed, n,
                                              plan->reason);
                }
        }
        /* the L3 decided some of them (the check above is not vacuous) */
        ck_assert_uint_gt(decided, 0);
}
END_TEST

START_TEST(test_reserved_threads_rank_last)
{
        /* ReservedCPUs=1,3,5 on 1 node x 8 cores x 2 threads: cores 0-2 keep a thread for the host, 5 cores
         * are wholly free. 7 vCPUs: the 5 free cores first, then 2 beside reserved threads; no vCPU beside
         * another while a core is idle, and the reason says where they share. */
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) reserved = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned beside = 0;

        ck_assert_int_eq(cpuset_parse("1,3,5", &reserved, NULL), 0);
        p.reserved_cpus = reserved;
        const Plan *plan = test_place(t, l, &p, "vm", 7, 8 * GiB);
        g_autofree unsigned *on = g_new0(unsigned, t->ncores);

        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        for (unsigned v = 0; v < plan->nvcpus; v++) {
                unsigned c = t->pus[plan->vcpu_pu[v]].core;
                on[c]++;
                beside += c < 3;
                ck_assert(!cpuset_intersects(plan->vcpu_pins[v], reserved));
        }
        for (unsigned c = 3; c < 8; c++)
                ck_assert_msg(on[c] == 1, "core %u holds %u vCPUs: %s", c, on[c], plan->reason);
        ck_assert_uint_eq(beside, 2);
        ck_assert_uint_eq(plan->shared_vcpus, 0);
        ck_assert_msg(strstr(plan->reason, "0 vCPUs share") == NULL, "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "2 run beside reserved CPUs (ReservedCPUs=1,3,5)") != NULL, "%s",
                      plan->reason);
        /* 2 more: the last core beside a reserved thread, then one beside another vCPU */
        plan = test_place(t, l, &p, "vm2", 2, GiB);
        ck_assert_uint_eq(t->pus[plan->vcpu_pu[0]].core, 2);
        ck_assert_uint_eq(plan->shared_vcpus, 1);
        ck_assert_msg(
            strstr(plan->reason,
                   "1 vCPU shares a core with another domain's vCPU, 1 more runs beside reserved CPUs") !=
                NULL,
            "%s", plan->reason);
}
END_TEST

START_TEST(test_sockets_without_slit)
{
        /* 2 sockets x 2 nodes x 12 cores, no matrix. A small domain on node 0, then 20 vCPUs: nodes 2 and
         * 3 (one socket, both free) are nearer than nodes 1 and 2 (two sockets), though as free. */
        g_autoptr(Topology) t = load_fixture("two-sockets-no-slit.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        ck_assert_int_eq(test_place(t, l, &p, "small", 2, GiB)->result, PLAN_PLACED);
        const Plan *plan = test_place(t, l, &p, "big", 20, 4 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(test_plan_node_count(plan), 2);
        ck_assert_msg(cpuset_has(plan->nodes, 2) && cpuset_has(plan->nodes, 3), "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "max distance 11") != NULL, "%s", plan->reason);
}
END_TEST

/* Memory the vCPUs' own node cannot hold goes to the set's node nearest them, as the kernel falls back,
 * not to the lowest-numbered one: vCPUs on node 2 of a line 0-1-2, 12 GiB on 8 GiB nodes, 4 on node 1. */
START_TEST(test_spread_memory_overflow_nearest_first)
{
        g_autoptr(Topology) t = test_three_nodes_in_line();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = 12 * GiB};
        g_autoptr(Plan) plan = plan_new("vm", 2, 12 * GiB, t->nnodes);
        HostView v;

        for (unsigned i = 0; i < 2; i++)
                plan->vcpu_pu[i] = (int)t->cores[t->nodes[2].core_first + i].pu_first;
        for (unsigned n = 0; n < 3; n++)
                cpuset_add(plan->nodes, n);
        host_view_init_for(&v, t, l, &p, &req);
        policy_spread_memory(&v, plan);
        host_view_done(&v);
        ck_assert_uint_eq(plan->node_memory[2], 8 * GiB);
        ck_assert_uint_eq(plan->node_memory[1], 4 * GiB);
        ck_assert_uint_eq(plan->node_memory[0], 0);
}
END_TEST

static Suite *fit_suite(void)
{
        Suite *s = suite_create("policy: fit");
        TCase *tc = tcase_create("fit");
        tcase_add_test(tc, test_l3_fit_four_nodes);
        tcase_add_test(tc, test_l3_fit_epyc);
        tcase_add_test(tc, test_no_l3_node_over_packages);
        tcase_add_test(tc, test_no_l3_package_fit_said);
        tcase_add_test(tc, test_l3_fit_epyc_nps4);
        tcase_add_test(tc, test_l3_fit_oracle);
        tcase_add_test(tc, test_reserved_threads_rank_last);
        tcase_add_test(tc, test_sockets_without_slit);
        tcase_add_test(tc, test_spread_memory_overflow_nearest_first);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(fit_suite)
