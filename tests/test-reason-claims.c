/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a reason says against what its plan does. Random constrained requests (<vcpu cpuset>, <numatune>
 * bindings of each mode, realtime vCPUs) fill random hosts one after another, and each clause that names
 * nodes or counts in the reason is checked against the plan: the nodes it says hold the memory hold it,
 * the vCPUs it counts are the plan's.
 */
#include "test-util.h"
#include "test-policy-util.h"
#include "size.h"

#include <stdlib.h>

#include <stdlib.h>

/* The nodes (OS indexes) holding some of the plan's memory. */
static CpuSet *memory_nodes(const Topology *t, const Plan *plan)
{
        CpuSet *s = cpuset_new();

        for (unsigned n = 0; n < plan->nnode_memory && n < t->nnodes; n++)
                if (plan->node_memory[n])
                        cpuset_add(s, t->nodes[n].os_index);
        return s;
}

static uint64_t memory_total(const Plan *plan)
{
        uint64_t sum = 0;

        for (unsigned n = 0; n < plan->nnode_memory; n++)
                sum += plan->node_memory[n];
        return sum;
}

/* The node list after "node " or "nodes " at the start of text, parsed; NULL when none is there. */
static CpuSet *nodes_at(const char *text)
{
        g_autofree char *list = NULL;
        CpuSet *set = NULL;
        size_t len;

        if (g_str_has_prefix(text, "nodes "))
                text += 6;
        else if (g_str_has_prefix(text, "node "))
                text += 5;
        else
                return NULL;
        len = strspn(text, "0123456789,-");
        list = g_strndup(text, len);
        if (cpuset_parse(list, &set, NULL) < 0)
                return NULL;
        return set;
}

/* Whether every member of a is in b. */
static bool subset(const CpuSet *a, const CpuSet *b)
{
        CPUSET_FOREACH (n, a)
                if (!cpuset_has(b, (unsigned)n))
                        return false;
        return true;
}

/* Checks every claim found in the reason; the message on failure names the request. */
static void check_claims(const Topology *t, const Plan *plan, const char *what)
{
        const char *r = plan->reason, *p;
        g_autoptr(CpuSet) held = memory_nodes(t, plan), on = cpuset_new();

        for (unsigned v = 0; v < plan->nvcpus; v++)
                if (plan->vcpu_pu[v] >= 0)
                        cpuset_add(on, t->nodes[t->cores[t->pus[plan->vcpu_pu[v]].core].node].os_index);

        if (!r || plan->result == PLAN_UNPLACEABLE)
                return;
        /* the set said to hold the memory holds all the plan counts */
        if (strstr(r, " is the nearest that holds the memory"))
                ck_assert_msg(test_memory_on_own_nodes(plan) == memory_total(plan),
                              "%s: memory off its nodes: %s", what, r);
        /* "(N free cores there, X of its Y counted there)": X is what its nodes hold */
        if ((p = strstr(r, " free cores there, ")) || (p = strstr(r, " free core there, "))) {
                char a[32];
                p = strchr(p, ',') + 2;
                if (g_str_has_prefix(p, "none of its "))
                        ck_assert_msg(test_memory_on_own_nodes(plan) == 0, "%s: memory on its nodes: %s",
                                      what, r);
                else
                        ck_assert_msg(
                            g_str_has_prefix(p, size_format(test_memory_on_own_nodes(plan), a, sizeof(a))),
                            "%s: not %s on its nodes: %s", what, a, r);
        }
        /* placed: "node(s) X[, of which it takes Y]: C free cores for V vCPUs" */
        if (plan->result == PLAN_PLACED && (g_str_has_prefix(r, "node ") || g_str_has_prefix(r, "nodes "))) {
                const char *taken = strstr(r, ", of which it takes ");
                const char *colon = strchr(r, ':');
                g_autoptr(CpuSet) said = NULL;
                g_autofree char *vcpus = g_strdup_printf(" for %u vCPU", plan->requested_vcpus);
                if (taken && taken < colon) {
                        g_autofree char *n = g_strdup_printf("nodes %s", taken + 20);
                        said = nodes_at(n);
                } else
                        said = nodes_at(r);
                ck_assert_msg(said && cpuset_equal(said, plan->nodes), "%s: not its nodes: %s", what, r);
                ck_assert_msg(strstr(r, vcpus) && strstr(r, vcpus) < strchr(r, ';'), "%s: not %u vCPUs: %s",
                              what, plan->requested_vcpus, r);
        }
        /* "counted on node(s) L, nearest its vCPUs" and "where it is counted": those nodes hold memory */
        for (p = r; (p = strstr(p, "counted on node")); p++) {
                g_autoptr(CpuSet) said = nodes_at(p + 11);
                ck_assert_msg(said, "%s: %s", what, r);
                CPUSET_FOREACH (n, said)
                        ck_assert_msg(cpuset_has(held, (unsigned)n), "%s: node %d said to hold memory: %s",
                                      what, n, r);
        }
        for (p = r; (p = strstr(p, " free on node")); p++) {
                g_autoptr(CpuSet) said = nodes_at(p + 9);
                if (!said || !strstr(p, ", where it is counted"))
                        continue;
                /* all of them, or (a note after it says where) some where the rest spilled to others */
                ck_assert_msg(cpuset_equal(said, held) || (subset(said, held) && strstr(r, "lack room for")),
                              "%s: not where it is counted: %s", what, r);
        }
        /* a binding's note: "binds its memory to node(s) B (mode): cores taken there" puts every vCPU on
         * B, "cores taken on node(s) L" on L, and "memory counted on node(s) M" counts it all on M */
        if ((p = strstr(r, "binds its memory to node"))) {
                g_autoptr(CpuSet) bound = nodes_at(p + 20);
                const char *end = strchr(p, ';') ? strchr(p, ';') : p + strlen(p);
                const char *there = strstr(p, "cores taken there"),
                           *taken = strstr(p, "cores taken on node");
                const char *counted = strstr(p, "memory counted on node");

                ck_assert_msg(bound, "%s: %s", what, r);
                if (there && there < end)
                        ck_assert_msg(subset(on, bound), "%s: vCPUs off its binding: %s", what, r);
                if (taken && taken < end) {
                        g_autoptr(CpuSet) said = nodes_at(taken + 15);
                        ck_assert_msg(said && subset(on, said), "%s: vCPUs elsewhere: %s", what, r);
                }
                if (counted && counted < end) {
                        g_autoptr(CpuSet) said = nodes_at(counted + 18);
                        ck_assert_msg(said && cpuset_equal(said, held), "%s: memory elsewhere: %s", what, r);
                }
        }
        /* "X of its Y is on node(s) L, where none of its vCPUs runs" */
        if ((p = strstr(r, " is on node")) && strstr(p, ", where none of its vCPUs runs")) {
                g_autoptr(CpuSet) said = nodes_at(p + 7);
                ck_assert_msg(said && subset(said, held) && !cpuset_intersects(said, on),
                              "%s: not there: %s", what, r);
        }
        /* "its memory is all on node(s) L, none where its vCPUs run" */
        if ((p = strstr(r, "its memory is all on node"))) {
                g_autoptr(CpuSet) said = nodes_at(p + 21);
                ck_assert_msg(said && cpuset_equal(said, held), "%s: not all its memory there: %s", what, r);
        }
        /* "N vCPUs ... share": the plan's count */
        if (plan->result == PLAN_OVERCOMMITTED && (p = strstr(r, " there): ")) && plan->shared_vcpus) {
                unsigned n = (unsigned)strtoul(p + 9, NULL, 10);
                ck_assert_msg(n == plan->shared_vcpus, "%s: %u shared, said %u: %s", what,
                              plan->shared_vcpus, n, r);
        }
}

START_TEST(test_reasons_say_what_plans_do)
{
        g_autoptr(GRand) rnd =
            g_rand_new_with_seed(g_getenv("SEED") ? (guint32)atoi(g_getenv("SEED")) : 2026);
        unsigned checked = 0, overcommitted = 0;

        for (unsigned round = 0; round < 3000; round++) {
                unsigned nodes = (unsigned)g_rand_int_range(rnd, 1, 5),
                         cores = (unsigned)g_rand_int_range(rnd, 2, 5);
                unsigned threads = (unsigned)g_rand_int_range(rnd, 1, 3);
                uint64_t node_memory = (uint64_t)g_rand_int_range(rnd, 2, 17) * GiB;
                g_autoptr(Topology) t = topology_new_uniform(nodes, cores, threads, node_memory, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams params = test_params(g_rand_boolean(rnd) ? POLICY_EXPLICIT : POLICY_COMPAT);
                unsigned domains = (unsigned)g_rand_int_range(rnd, 1, 2 + (int)(nodes * 2));

                for (unsigned d = 0; d < domains; d++) {
                        g_autoptr(CpuSet) allowed = NULL, bound = NULL, rt = NULL;
                        g_autofree char *name = g_strdup_printf("vm%u", d);
                        g_autofree char *what = NULL;
                        PlacementRequest req = {
                            .name = name,
                            .vcpus = (unsigned)g_rand_int_range(rnd, 1, (int)(cores * threads * 2) + 1),
                            .memory =
                                (uint64_t)g_rand_int_range(rnd, 1, (int)(node_memory / GiB) * 2 + 1) * GiB,
                        };
                        Plan *plan;
                        if (g_rand_int_range(rnd, 0, 3) == 0) { /* <vcpu cpuset>: a node's CPUs, or some */
                                unsigned n = (unsigned)g_rand_int_range(rnd, 0, (int)nodes);
                                allowed = cpuset_new();
                                CPUSET_FOREACH (c, t->nodes[n].cpus)
                                        if (g_rand_int_range(rnd, 0, 4))
                                                cpuset_add(allowed, (unsigned)c);
                                if (cpuset_is_empty(allowed))
                                        cpuset_add(
                                            allowed,
                                            t->pus[t->cores[t->nodes[n].core_first].pu_first].os_index);
                                req.allowed_cpus = allowed;
                        }
                        if (g_rand_int_range(rnd, 0, 3) == 0) { /* <numatune><memory nodeset> */
                                bound = cpuset_new();
                                for (unsigned n = 0; n < nodes; n++)
                                        if (g_rand_boolean(rnd))
                                                cpuset_add(bound, t->nodes[n].os_index);
                                if (cpuset_is_empty(bound))
                                        cpuset_add(bound, t->nodes[nodes - 1].os_index);
                                req.memory_nodes = bound;
                                req.memory_source = MEMORY_SOURCE_USER;
                                req.memory_mode = (MemoryMode)g_rand_int_range(rnd, MEMORY_MODE_STRICT,
                                                                               MEMORY_MODE_RESTRICTIVE + 1);
                        }
                        if (g_rand_int_range(rnd, 0, 4) == 0) { /* realtime vCPUs, all or the first half */
                                req.realtime = true;
                                if (req.vcpus > 1 && g_rand_boolean(rnd)) {
                                        rt = cpuset_new();
                                        for (unsigned v = 0; v < req.vcpus / 2; v++)
                                                cpuset_add(rt, v);
                                        req.realtime_vcpus = rt;
                                }
                        }
                        plan = policy_place(t, l, &req, &params);
                        what = g_strdup_printf(
                            "round %u %s (%u nodes x %u x %u, %u vCPUs, %" G_GUINT64_FORMAT " GiB%s%s%s)",
                            round, name, nodes, cores, threads, req.vcpus, req.memory / GiB,
                            allowed ? ", cpuset" : "", bound ? ", bound" : "",
                            req.realtime ? ", realtime" : "");
                        check_claims(t, plan, what);
                        checked++;
                        overcommitted += plan->result == PLAN_OVERCOMMITTED;
                        if (plan->result == PLAN_UNPLACEABLE)
                                plan_free(plan);
                        else
                                ck_assert_int_eq(ledger_commit(l, name, plan), 0);
                }
        }
        ck_assert_uint_gt(checked, 10000);
        ck_assert_uint_gt(overcommitted, 1000);
}
END_TEST

/* A random domain's XML on a host of nodes nodes of cpus CPUs each: a <vcpu cpuset>, a <numatune>
 * binding, guest cells with <memnode> bindings, hugepages, realtime vCPUs, each or not. */
static char *random_domain(GRand *rnd, const char *name, unsigned nodes, unsigned cpus, uint64_t node_gib)
{
        GString *x = g_string_new(NULL);
        unsigned vcpus = (unsigned)g_rand_int_range(rnd, 1, (int)cpus * 2 + 1);
        unsigned gib = (unsigned)g_rand_int_range(rnd, 1, (int)node_gib * 2 + 1);
        unsigned ncells = vcpus >= 2 && gib >= 2 && g_rand_int_range(rnd, 0, 3) == 0 ? 2 : 0;
        static const char *const modes[] = {"strict", "preferred", "interleave", "restrictive"};

        g_string_append_printf(x, "<domain type='kvm'><name>%s</name><memory unit='GiB'>%u</memory>", name,
                               gib);
        if (g_rand_int_range(rnd, 0, 3) == 0) {
                unsigned n = (unsigned)g_rand_int_range(rnd, 0, (int)nodes);
                unsigned first = n * cpus + (unsigned)g_rand_int_range(rnd, 0, (int)cpus);
                unsigned last =
                    MIN(n * cpus + cpus - 1, first + (unsigned)g_rand_int_range(rnd, 0, (int)cpus));
                g_string_append_printf(x, "<vcpu cpuset='%u-%u'>%u</vcpu>", first, last, vcpus);
        } else
                g_string_append_printf(x, "<vcpu>%u</vcpu>", vcpus);
        if (g_rand_int_range(rnd, 0, 4) == 0)
                g_string_append_printf(x, "<memoryBacking><hugepages><page size='2' unit='M'/></hugepages>"
                                          "</memoryBacking>");
        if (g_rand_int_range(rnd, 0, 4) == 0)
                g_string_append_printf(x,
                                       "<cputune><vcpusched vcpus='0-%u' scheduler='fifo' priority='1'/>"
                                       "</cputune>",
                                       g_rand_boolean(rnd) ? vcpus - 1 : (vcpus - 1) / 2);
        if (g_rand_int_range(rnd, 0, 3) == 0 || ncells) {
                unsigned n = (unsigned)g_rand_int_range(rnd, 0, (int)nodes);
                bool whole = !ncells || g_rand_boolean(rnd);
                g_string_append(x, "<numatune>");
                if (whole)
                        g_string_append_printf(x, "<memory mode='%s' nodeset='%u-%u'/>",
                                               modes[g_rand_int_range(rnd, 0, 4)], n,
                                               MIN(nodes - 1, n + (unsigned)g_rand_int_range(rnd, 0, 2)));
                for (unsigned c = 0; c < ncells; c++)
                        if (g_rand_boolean(rnd))
                                g_string_append_printf(x, "<memnode cellid='%u' mode='%s' nodeset='%u'/>", c,
                                                       modes[g_rand_int_range(rnd, 0, 3)],
                                                       (unsigned)g_rand_int_range(rnd, 0, (int)nodes));
                g_string_append(x, "</numatune>");
        }
        if (ncells)
                g_string_append_printf(x,
                                       "<cpu><numa><cell id='0' cpus='0-%u' memory='%u' unit='GiB'/>"
                                       "<cell id='1' cpus='%u-%u' memory='%u' unit='GiB'/></numa></cpu>",
                                       vcpus / 2 - 1, gib / 2, vcpus / 2, vcpus - 1, gib - gib / 2);
        g_string_append(x, "<os><type>hvm</type></os></domain>");
        return g_string_free(x, FALSE);
}

/* The same from definitions as the daemon reads them: guest cells and their <memnode> elements and
 * hugepage pools too. */
START_TEST(test_reasons_of_definitions_say_what_plans_do)
{
        g_autoptr(GRand) rnd =
            g_rand_new_with_seed(g_getenv("SEED") ? (guint32)atoi(g_getenv("SEED")) : 2027);
        unsigned checked = 0;

        for (unsigned round = 0; round < 3000; round++) {
                unsigned nodes = (unsigned)g_rand_int_range(rnd, 1, 5),
                         cores = (unsigned)g_rand_int_range(rnd, 2, 5);
                unsigned threads = (unsigned)g_rand_int_range(rnd, 1, 3);
                uint64_t node_gib = (uint64_t)g_rand_int_range(rnd, 2, 17);
                g_autoptr(Topology) t = topology_new_uniform(nodes, cores, threads, node_gib * GiB, NULL);
                g_autoptr(Ledger) l = NULL;
                PlacementParams params = test_params(g_rand_boolean(rnd) ? POLICY_EXPLICIT : POLICY_COMPAT);
                unsigned domains = (unsigned)g_rand_int_range(rnd, 1, 2 + (int)(nodes * 2));

                for (unsigned n = 0; n < nodes; n++)
                        if (g_rand_boolean(rnd)) /* 2 MiB pages: up to half the node */
                                topology_node_set_hugepages(
                                    t, n, 2 << 20,
                                    (uint64_t)g_rand_int_range(rnd, 0, (int)node_gib * 256 + 1));
                l = ledger_new(t);
                for (unsigned d = 0; d < domains; d++) {
                        g_autofree char *name = g_strdup_printf("vm%u", d);
                        g_autofree char *xml = random_domain(rnd, name, nodes, cores * threads, node_gib);
                        g_autofree char *what = g_strdup_printf(
                            "round %u (%u nodes x %u x %u, %" G_GUINT64_FORMAT " GiB each) %s", round, nodes,
                            cores, threads, node_gib, xml);
                        Plan *plan = test_place_xml(t, l, xml, &params);

                        check_claims(t, plan, what);
                        checked++;
                        if (plan->result == PLAN_UNPLACEABLE)
                                plan_free(plan);
                        else
                                ck_assert_int_eq(ledger_commit(l, name, plan), 0);
                }
        }
        ck_assert_uint_gt(checked, 5000);
}
END_TEST

static Suite *reason_claims_suite(void)
{
        Suite *s = suite_create("reason claims");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_reasons_say_what_plans_do);
        tcase_add_test(tc, test_reasons_of_definitions_say_what_plans_do);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(reason_claims_suite)
