/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Property tests: seeded random topologies and traces, invariants checked after every step.
 *   - explicit never puts a vCPU on a used core while some node set has the free cores and memory;
 *   - memory is never reserved beyond what a node has (less MemoryReserve);
 *   - starting and then stopping everything leaves the ledger exactly empty;
 *   - plans are deterministic: the same trace on a new ledger gives the same plans.
 */
#include "decision-json.h"
#include "nodesets.h"
#include "test-util.h"
#include "test-policy-util.h"

#define SEEDS 40
#define STEPS 120

static Topology *random_topology(GRand *r)
{
        unsigned nodes = (unsigned)g_rand_int_range(r, 1, 7);
        unsigned cores = (unsigned)g_rand_int_range(r, 1, 9);
        unsigned threads = (unsigned)g_rand_int_range(r, 1, 3);
        g_autofree uint32_t *d = g_new(uint32_t, nodes * nodes);

        for (unsigned i = 0; i < nodes; i++)
                for (unsigned j = i; j < nodes; j++)
                        d[i * nodes + j] = d[j * nodes + i] =
                            i == j ? 10 : (uint32_t)g_rand_int_range(r, 11, 41);
        return topology_new_uniform(nodes, cores, threads, (uint64_t)g_rand_int_range(r, 1, 17) * GiB, d);
}

/* Does any candidate set have this many free whole cores and this much free memory? */
static bool some_set_qualifies(const Topology *t, const Ledger *l, const PlacementParams *p, unsigned vcpus,
                               uint64_t memory)
{
        const NodeSetTable *table = t->nodesets;
        for (unsigned r = 0; r < table->ncandidates; r++) {
                const NodeSet *s = &table->candidates[r];
                unsigned cores = 0;
                uint64_t mem = 0;
                for (unsigned i = 0; i < s->nnodes; i++) {
                        unsigned n = nodeset_members(table, s)[i];
                        const TopoNode *node = &t->nodes[n];
                        uint64_t used = ledger_node_memory(l, n) + p->memory_reserve;
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                cores += ledger_core_free(l, c);
                        mem += node->memory > used ? node->memory - used : 0;
                }
                if (cores >= vcpus && mem >= memory)
                        return true;
        }
        return false;
}

static void check_memory(const Topology *t, const Ledger *l, const PlacementParams *p)
{
        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t cap =
                    t->nodes[n].memory > p->memory_reserve ? t->nodes[n].memory - p->memory_reserve : 0;
                ck_assert_uint_le(ledger_node_memory(l, n), cap);
        }
}

/* The candidates explain would list for a plan, as plain text: a plan made where the host lacks room lists
 * up to POLICY_KEEP_CANDIDATES sets, and a JSON tree of those for every plan of both replays was most of
 * this test's time (and memcheck's). */
static void add_candidates(GString *out, const Plan *plan)
{
        g_string_append_printf(out, "%s:", plan->name);
        for (unsigned i = 0; i < plan->candidates->len; i++) {
                const PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                g_autofree char *nodes = cpuset_format(c->nodes);
                g_string_append_printf(out, " %u %s %u %a %u %u %" G_GUINT64_FORMAT " %d%d%d%d%d;", c->rank,
                                       nodes, c->max_distance, c->mean_distance, c->free_cores, c->free_pus,
                                       c->free_memory, c->qualifies, c->chosen, c->busier, c->as_busy,
                                       c->idle_node);
        }
        g_string_append_c(out, '\n');
}

/* Replays a random trace; returns the JSON of every plan and its candidates, for the determinism check. */
static char *replay(const Topology *t, const PlacementParams *p, guint32 seed, bool check)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(seed);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(GPtrArray) running = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GString) candidates = g_string_new(NULL);
        g_autofree char *json = NULL;
        unsigned next = 0;

        json_builder_begin_array(b);
        for (unsigned step = 0; step < STEPS; step++) {
                if (running->len && g_rand_int_range(r, 0, 3) == 0) {
                        unsigned i = (unsigned)g_rand_int_range(r, 0, (gint32)running->len);
                        ck_assert_int_eq(ledger_release(l, g_ptr_array_index(running, i)), 0);
                        g_ptr_array_remove_index(running, i);
                        continue;
                }
                char *name = g_strdup_printf("vm%u", next++);
                unsigned vcpus = (unsigned)g_rand_int_range(r, 1, 9);
                uint64_t memory = (uint64_t)g_rand_int_range(r, 0, 4096) << 20;
                bool could =
                    check && p->policy == POLICY_EXPLICIT && some_set_qualifies(t, l, p, vcpus, memory);
                PlacementRequest req = {.name = name, .vcpus = vcpus, .memory = memory};
                Plan *plan = policy_place(t, l, &req, p);

                if (check && p->policy == POLICY_EXPLICIT) {
                        ck_assert_msg((plan->result == PLAN_PLACED) == could,
                                      "seed %u step %u: %s but could=%d", seed, step, plan->reason, could);
                        if (plan->result == PLAN_PLACED) {
                                ck_assert_uint_eq(test_max_per_core(t, plan), 1);
                                for (unsigned v = 0; v < plan->nvcpus; v++)
                                        ck_assert(ledger_core_free(l, t->pus[plan->vcpu_pu[v]].core));
                        }
                }
                if (plan->result != PLAN_UNPLACEABLE) {
                        uint64_t sum = 0;
                        for (unsigned n = 0; n < t->nnodes; n++)
                                sum += plan->node_memory[n];
                        ck_assert_uint_eq(sum, memory);
                }
                json_builder_begin_object(b);
                decision_json_add_members(b, t, plan, FALSE);
                json_builder_end_object(b);
                add_candidates(candidates, plan);
                ck_assert_int_eq(ledger_commit(l, name, plan), 0);
                g_ptr_array_add(running, name);
                if (check)
                        check_memory(t, l, p);
        }
        for (unsigned i = 0; i < running->len; i++)
                ck_assert_int_eq(ledger_release(l, g_ptr_array_index(running, i)), 0);
        ck_assert(ledger_is_empty(l));
        json_builder_end_array(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        json = json_to_text(root, FALSE);
        return g_strconcat(json, "\n", candidates->str, NULL);
}

START_TEST(test_random_traces)
{
        for (guint32 seed = 1; seed <= SEEDS; seed++) {
                g_autoptr(GRand) r = g_rand_new_with_seed(seed * 7919);
                g_autoptr(Topology) t = random_topology(r);
                for (unsigned k = 0; k < 2; k++) {
                        PlacementParams p = test_params(k ? POLICY_COMPAT : POLICY_EXPLICIT);
                        p.memory_reserve = (uint64_t)g_rand_int_range(r, 0, 2) * (256u << 20);
                        p.vcpu_pin = (VcpuPinMode)g_rand_int_range(r, 0, _VCPU_PIN_MAX);
                        g_autofree char *first = replay(t, &p, seed, true);
                        g_autofree char *second = replay(t, &p, seed, false);
                        size_t at = 0;
                        while (first[at] && first[at] == second[at])
                                at++;
                        /* Check cannot print strings this long: the first difference, with some context */
                        ck_assert_msg(first[at] == second[at],
                                      "seed %u: replays differ at byte %zu: '%.80s' vs '%.80s'", seed, at,
                                      first + (at > 40 ? at - 40 : 0), second + (at > 40 ? at - 40 : 0));
                }
        }
}
END_TEST

static Suite *properties_suite(void)
{
        Suite *s = suite_create("policy: properties");
        TCase *tc = tcase_create("random");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_random_traces);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(properties_suite)
