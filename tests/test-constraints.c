/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user's static constraints in the engine, under every policy: <vcpu cpuset>, <numatune><memory>
 * (each mode), <numatune><memnode>, <cputune><emulatorpin>. Each case runs under explicit and compat.
 */
#include "decision-text.h"
#include "nodesets.h"
#include "test-util.h"
#include "topology-load.h"
#include "test-policy-util.h"

#include <string.h>

static const PolicyKind kinds[] = {POLICY_EXPLICIT, POLICY_COMPAT};

/* 2 nodes x 2 cores x 2 threads, 8 GiB each: node 0 = PUs 0-3 (cores 0-1), node 1 = PUs 4-7. */
static Topology *host(void)
{
        return topology_new_uniform(2, 2, 2, 8 * GiB, NULL);
}

static CpuSet *set_of(const char *list)
{
        CpuSet *s = NULL;
        ck_assert_int_eq(cpuset_parse(list, &s, NULL), 0);
        return s;
}

static const Plan *place_req(const Topology *t, Ledger *l, const PlacementParams *p,
                             const PlacementRequest *req)
{
        Plan *plan = policy_place(t, l, req, p);
        ck_assert_int_eq(ledger_commit(l, req->name, plan), 0);
        return ledger_lookup(l, req->name);
}

/* A request for 2 vCPUs whose memory <numatune> binds strictly to nodes. */
static PlacementRequest strict_request(const CpuSet *nodes, uint64_t memory)
{
        return (PlacementRequest){.name = "vm",
                                  .vcpus = 2,
                                  .memory = memory,
                                  .memory_nodes = nodes,
                                  .memory_source = MEMORY_SOURCE_USER,
                                  .memory_mode = MEMORY_MODE_STRICT};
}

static void assert_vcpus_inside(const Plan *plan, const CpuSet *allowed)
{
        for (unsigned v = 0; v < plan->nvcpus; v++) {
                g_autoptr(CpuSet) outside = cpuset_copy(plan->vcpu_pins[v]);
                ck_assert(!cpuset_is_empty(plan->vcpu_pins[v]));
                cpuset_subtract(outside, allowed);
                ck_assert_msg(cpuset_is_empty(outside), "vCPU %u pinned outside the allowed CPUs", v);
        }
}

static void assert_pins_inside(const Plan *plan, const CpuSet *allowed)
{
        assert_vcpus_inside(plan, allowed);
        g_autoptr(CpuSet) emulator = cpuset_copy(plan->emulator_pin);
        cpuset_subtract(emulator, allowed);
        ck_assert(cpuset_is_empty(emulator));
}

static void assert_reason_has(const Plan *plan, const char *text)
{
        ck_assert_msg(strstr(plan->reason, text), "reason '%s' lacks '%s'", plan->reason, text);
}

START_TEST(test_vcpu_cpuset_keeps_plan_inside)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) allowed = set_of("4-7");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {
                    .name = "vm", .vcpus = 2, .memory = 2 * GiB, .allowed_cpus = allowed};
                const Plan *plan = place_req(t, l, &p, &req);

                /* unconstrained, the empty host's first node (0) would win */
                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert_uint_eq(cpuset_count(plan->nodes), 1);
                ck_assert(cpuset_has(plan->nodes, 1));
                assert_pins_inside(plan, allowed);
                ck_assert_uint_eq(plan->node_memory[1], 2 * GiB);
                ck_assert(!plan->keep_memory);
                assert_reason_has(plan, "kept inside <vcpu cpuset='4-7'>");
        }
}
END_TEST

/* Above 16 nodes the host's table holds the sets each node grows by distance: on twenty-nodes.xml the set
 * {5,7} is not among them (6 is nearer to both). A domain bound to nodes 5 and 7, or whose cpuset is
 * their CPUs, still gets both nodes, a core per vCPU, instead of doubling up on node 5 */
START_TEST(test_constraints_beyond_exhaustive_sets)
{
        g_autoptr(Topology) t = test_topology_load("twenty-nodes.xml");
        g_autoptr(CpuSet) nodes = set_of("5,7");
        g_autoptr(CpuSet) cpus = set_of("20-23,28-31");

        ck_assert(!t->nodesets->exhaustive);
        for (unsigned k = 0; k < 2; k++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest req = {.name = "vm", .vcpus = 4, .memory = 2 * GiB};
                const Plan *plan;

                if (k == 0) {
                        req.memory_nodes = nodes;
                        req.memory_source = MEMORY_SOURCE_USER;
                } else {
                        req.allowed_cpus = cpus;
                }
                plan = place_req(t, l, &p, &req);
                ck_assert_msg(plan->result == PLAN_PLACED && plan->shared_vcpus == 0, "%s", plan->reason);
                ck_assert_uint_eq(cpuset_count(plan->nodes), 2);
                ck_assert(cpuset_has(plan->nodes, topology_node_by_os(t, 5)) &&
                          cpuset_has(plan->nodes, topology_node_by_os(t, 7)));
                assert_pins_inside(plan, cpus);
        }
}
END_TEST

/* Overcommitted inside the user's constraints while the host has room elsewhere: the reason says the sets
 * its constraints allow lack the room, not every set */
START_TEST(test_constrained_overcommit_reason)
{
        g_autoptr(Topology) t = host();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) allowed = set_of("4-5");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 3, .memory = GiB, .allowed_cpus = allowed};
        const Plan *plan = place_req(t, l, &p, &req);

        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        assert_reason_has(plan, "no node set inside its constraints has 3 free cores");
}
END_TEST

START_TEST(test_vcpu_cpuset_on_memoryless_node)
{
        /* the allowed CPUs are all on a node without memory (node 1 here): the vCPUs stay on them and the
         * memory goes to the nearest node that has some, whose cores stay out; it was unplaceable ("0 B
         * free on the whole host") */
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = NULL;
                g_autoptr(CpuSet) allowed = set_of("4-7");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {
                    .name = "vm", .vcpus = 2, .memory = 2 * GiB, .allowed_cpus = allowed};
                const Plan *plan;

                t->nodes[1].memory = 0;
                l = ledger_new(t);
                plan = place_req(t, l, &p, &req);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                assert_pins_inside(plan, allowed);
                ck_assert_uint_eq(plan->node_memory[0], 2 * GiB);
                ck_assert_uint_eq(plan->node_memory[1], 0);
                assert_reason_has(plan, "kept inside <vcpu cpuset='4-7'>");
                /* with memory on its own node, the other node is not used at all */
                {
                        g_autoptr(Topology) t2 = host();
                        g_autoptr(Ledger) l2 = ledger_new(t2);
                        const Plan *own = place_req(t2, l2, &p, &req);
                        ck_assert_uint_eq(cpuset_count(own->nodes), 1);
                        ck_assert_uint_eq(own->node_memory[0], 0);
                }
        }
}
END_TEST

START_TEST(test_core_usable_through_allowed_pus)
{
        /* one thread of each core of node 0: two cores, each usable through one PU */
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) allowed = set_of("0,2");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB, .allowed_cpus = allowed};
                const Plan *plan = place_req(t, l, &p, &req);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert_uint_eq(test_max_per_core(t, plan), 1);
                ck_assert_uint_eq(plan->shared_vcpus, 0);
                assert_pins_inside(plan, allowed);
                ck_assert_uint_eq(cpuset_count(plan->vcpu_pins[0]), 1);
                /* the emulator has nowhere of its own inside the cpuset: the domain's CPUs, never outside */
                ck_assert(!cpuset_is_empty(plan->emulator_pin));
                /* under explicit the cores are whole for everyone else: a second domain goes to node 1 */
                if (kinds[k] == POLICY_EXPLICIT) {
                        const Plan *other = test_place(t, l, &p, "other", 2, GiB);
                        ck_assert(cpuset_has(other->nodes, 1) && cpuset_count(other->nodes) == 1);
                }
        }
}
END_TEST

START_TEST(test_full_cpuset_overcommits_inside)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) allowed = set_of("0-3");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB, .allowed_cpus = allowed};
                const Plan *busy = test_place(t, l, &p, "busy", kinds[k] == POLICY_EXPLICIT ? 2 : 4, GiB);
                const Plan *plan;

                ck_assert(cpuset_has(busy->nodes, 0) && cpuset_count(busy->nodes) == 1);
                plan = place_req(t, l, &p, &req);
                /* node 1 is idle, but outside the cpuset: the least harmful thing inside it */
                ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
                ck_assert(cpuset_has(plan->nodes, 0) && cpuset_count(plan->nodes) == 1);
                assert_pins_inside(plan, allowed);
                assert_reason_has(plan, "kept inside <vcpu cpuset='0-3'>");
        }
}
END_TEST

START_TEST(test_numatune_strict_binds_cores_and_memory)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = set_of("1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = strict_request(nodes, 2 * GiB);
                const Plan *plan = place_req(t, l, &p, &req);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert(cpuset_has(plan->nodes, 1) && cpuset_count(plan->nodes) == 1);
                /* counted where the user bound it, and the binding is left alone */
                ck_assert_uint_eq(plan->node_memory[0], 0);
                ck_assert_uint_eq(plan->node_memory[1], 2 * GiB);
                ck_assert_uint_eq(ledger_node_memory(l, 1), 2 * GiB);
                ck_assert(plan->keep_memory);
                assert_reason_has(plan, "<numatune><memory> binds its memory to node 1 (strict)");
                ck_assert_msg(!strstr(plan->reason, "cannot get all its memory"), "%s", plan->reason);
        }
}
END_TEST

/* Memory bound to a node whose CPUs are all in ReservedCPUs= is placed as when its <vcpu cpuset> leaves
 * them out: cores on the nearest node with usable ones, the memory remote, not unplaceable */
START_TEST(test_binding_to_reserved_node)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = set_of("1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = strict_request(nodes, 2 * GiB);
                g_autoptr(CpuSet) node0 = set_of("0-3");
                const Plan *plan;

                p.reserved_cpus = set_of("4-7");
                plan = place_req(t, l, &p, &req);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                assert_vcpus_inside(plan, node0); /* the emulator may go to the reserved CPUs */
                ck_assert_uint_eq(plan->node_memory[1], 2 * GiB);
                assert_reason_has(plan, "the configuration keeps their CPUs from vCPUs");
                g_clear_pointer(&p.reserved_cpus, cpuset_free);
        }
}
END_TEST

/* A hard binding of more than its node has is placed as libvirt starts it, and the reason says the guest
 * cannot get it all; preferred falls back, so it has nothing to say */
START_TEST(test_strict_binding_beyond_node_said)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = set_of("1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = strict_request(nodes, 12 * GiB);
                const Plan *plan = place_req(t, l, &p, &req);

                ck_assert_int_ne(plan->result, PLAN_UNPLACEABLE);
                assert_reason_has(plan, "node 1 has 8.0 GiB free for the 12.0 GiB bound there: the guest "
                                        "cannot get all its memory");
                req.memory_mode = MEMORY_MODE_PREFERRED;
                req.name = "pref";
                plan = place_req(t, l, &p, &req);
                ck_assert_msg(!strstr(plan->reason, "cannot get all its memory"), "%s", plan->reason);
        }
}
END_TEST

START_TEST(test_numatune_modes_charge_memory)
{
        static const struct {
                MemoryMode mode;
                uint64_t on0, on1;
        } cases[] = {
            /* the kernel takes a page on the vCPU's own node (0) while it has room */
            {MEMORY_MODE_STRICT, 4 * GiB, 0},
            {MEMORY_MODE_INTERLEAVE, 2 * GiB, 2 * GiB},
            {MEMORY_MODE_RESTRICTIVE, 4 * GiB, 0},
            {MEMORY_MODE_PREFERRED, 4 * GiB, 0},
        };
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++)
                for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                        g_autoptr(Topology) t = host();
                        g_autoptr(Ledger) l = ledger_new(t);
                        g_autoptr(CpuSet) nodes = set_of("0-1");
                        PlacementParams p = test_params(kinds[k]);
                        PlacementRequest req = {.name = "vm",
                                                .vcpus = 1,
                                                .memory = 4 * GiB,
                                                .memory_nodes = nodes,
                                                .memory_source = MEMORY_SOURCE_USER,
                                                .memory_mode = cases[i].mode};
                        const Plan *plan = place_req(t, l, &p, &req);

                        ck_assert_int_eq(plan->result, PLAN_PLACED);
                        ck_assert_uint_eq(plan->node_memory[0], cases[i].on0);
                        ck_assert_uint_eq(plan->node_memory[1], cases[i].on1);
                        if (cases[i].mode == MEMORY_MODE_PREFERRED)
                                assert_reason_has(plan,
                                                  "memory counted on node 0 (preferred: its first node, the "
                                                  "rest on the nearest with room)");
                }
}
END_TEST

/* mode='preferred' beyond its node's room: the kernel falls back to the nearest node for the rest, so the
 * rest is counted there, not on the full node (a later domain sees the memory really left) */
START_TEST(test_preferred_spills_to_nearest)
{
        g_autoptr(Topology) t = host();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) nodes = set_of("1");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        uint64_t node = t->nodes[1].memory;
        PlacementRequest req = {.name = "vm",
                                .vcpus = 1,
                                .memory = node + 2 * GiB,
                                .memory_nodes = nodes,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_PREFERRED};
        const Plan *plan = place_req(t, l, &p, &req);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(plan->node_memory[1], node);
        ck_assert_uint_eq(plan->node_memory[0], 2 * GiB);
        ck_assert_uint_eq(ledger_node_memory(l, 1), node);
}
END_TEST

/* mode='preferred' on KNL's MCDRAM (node 3, no CPUs), 8 GiB of it: the cores come from node 2, and the
 * memory is counted on nodes 2-3 (node 3 holds 3.7 GiB). The reason gives the free memory of those nodes,
 * and explain's column too, not the 0 B node 2 holds inside the binding. */
START_TEST(test_preferred_free_memory_where_counted)
{
        g_autoptr(Topology) t = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) nodes = set_of("3");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "k",
                                .vcpus = 4,
                                .memory = 8 * GiB,
                                .memory_nodes = nodes,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_PREFERRED};
        const Plan *plan = place_req(t, l, &p, &req);
        const PlanCandidate *chosen = NULL;

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert(plan->node_memory[2] > 0 && plan->node_memory[3] > 0);
        assert_reason_has(plan, "node 2: 4 free cores for 4 vCPUs, 26.1 GiB free on nodes 2-3, where it is "
                                "counted, for 8.0 GiB");
        ck_assert_msg(!strstr(plan->reason, "0 B free"), "%s", plan->reason);
        for (unsigned i = 0; i < plan->candidates->len; i++) {
                const PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                if (c->chosen)
                        chosen = c;
        }
        ck_assert_ptr_nonnull(chosen);
        ck_assert_uint_eq(chosen->free_memory, t->nodes[2].memory + t->nodes[3].memory);
}
END_TEST

/* preferred on a GPU node (its memory offered by the driver as a node, chosen by the user): counted there
 * while it has room, as strict would be; GPU nodes only take no fallback */
START_TEST(test_preferred_gpu_node_chosen)
{
        g_autoptr(Topology) t = test_topology_load("power9-gpu.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) nodes = set_of("2");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm",
                                .vcpus = 2,
                                .memory = 8 * GiB,
                                .memory_nodes = nodes,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_PREFERRED};
        const Plan *plan = place_req(t, l, &p, &req);
        int gpu = topology_node_by_os(t, 2);

        ck_assert_int_ge(gpu, 0);
        ck_assert_msg(plan->node_memory[gpu] == 8 * GiB, "%s", plan->reason);
}
END_TEST

START_TEST(test_memnode_union_bounds_nodes)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = set_of("1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 2,
                                        .memory = 2 * GiB,
                                        .memory_nodes = nodes,
                                        .memory_source = MEMORY_SOURCE_MEMNODE};
                const Plan *plan = place_req(t, l, &p, &req);

                ck_assert(cpuset_has(plan->nodes, 1) && cpuset_count(plan->nodes) == 1);
                ck_assert_uint_eq(plan->node_memory[1], 2 * GiB);
                ck_assert(plan->keep_memory);
                assert_reason_has(plan, "<memnode>");
        }
}
END_TEST

/* A binding confines memory, not vCPUs: 12 vCPUs with their memory bound (preferred or strict) to a node
 * of 8 free cores fill that node and take 4 cores of the other, a core each, memory left where it is
 * bound; 8 vCPUs stay on the bound node alone. */
START_TEST(test_memory_bound_vcpus_beyond)
{
        static const MemoryMode modes[] = {MEMORY_MODE_PREFERRED, MEMORY_MODE_STRICT};

        for (unsigned k = 0; k < G_N_ELEMENTS(modes); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = set_of("0");
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest req = {.name = "xs",
                                        .vcpus = 12,
                                        .memory = 16 * GiB,
                                        .memory_nodes = nodes,
                                        .memory_source = MEMORY_SOURCE_USER,
                                        .memory_mode = modes[k]};
                unsigned on[2] = {0, 0};
                g_autoptr(Plan) wide = policy_place(t, l, &req, &p);
                g_autoptr(Plan) fits = NULL;

                ck_assert_msg(wide->result == PLAN_PLACED, "%s", wide->reason);
                ck_assert_uint_eq(wide->shared_vcpus, 0);
                for (unsigned v = 0; v < wide->nvcpus; v++)
                        on[t->cores[t->pus[wide->vcpu_pu[v]].core].node]++;
                ck_assert_msg(on[0] == 8 && on[1] == 4, "%u + %u: %s", on[0], on[1], wide->reason);
                ck_assert_uint_eq(wide->node_memory[1], 0);
                assert_reason_has(wide, "it has 8 free cores for 12 vCPUs (a binding confines memory, not "
                                        "vCPUs)");
                req.vcpus = 8;
                fits = policy_place(t, l, &req, &p);
                ck_assert_int_eq(fits->result, PLAN_PLACED);
                ck_assert(cpuset_count(fits->nodes) == 1 && cpuset_has(fits->nodes, 0));
        }
}
END_TEST

/* ... and when the host has fewer free cores than the domain has vCPUs: the vCPUs still take the free
 * cores beyond the binding before they share, and only the rest share (all of them shared the bound
 * node's busy cores while another node's sat free). A binding placementd made itself, once bound,
 * alike. */
START_TEST(test_memory_bound_vcpus_beyond_overcommitted)
{
        static const MemorySource sources[] = {MEMORY_SOURCE_USER, MEMORY_SOURCE_BOUND};
        static const MemoryMode modes[] = {MEMORY_MODE_PREFERRED, MEMORY_MODE_STRICT};

        for (unsigned s = 0; s < G_N_ELEMENTS(sources); s++)
                for (unsigned k = 0; k < G_N_ELEMENTS(modes); k++) {
                        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
                        g_autoptr(Ledger) l = ledger_new(t);
                        g_autoptr(CpuSet) nodes = set_of("0");
                        PlacementParams p = test_params(POLICY_EXPLICIT);
                        PlacementRequest req = {.name = "db",
                                                .vcpus = 10,
                                                .memory = 16 * GiB,
                                                .memory_nodes = nodes,
                                                .memory_source = sources[s],
                                                .memory_mode = modes[k]};
                        unsigned on[2] = {0, 0};
                        const Plan *plan;

                        /* node 0's 8 cores taken, 4 of node 1's */
                        test_place(t, l, &p, "web1", 8, GiB);
                        test_place(t, l, &p, "web2", 4, GiB);
                        plan = place_req(t, l, &p, &req);
                        ck_assert_msg(plan->result == PLAN_OVERCOMMITTED, "%s", plan->reason);
                        for (unsigned v = 0; v < plan->nvcpus; v++)
                                on[t->cores[t->pus[plan->vcpu_pu[v]].core].node]++;
                        /* node 1's 4 free cores first: 6 share, not 10 */
                        ck_assert_msg(on[1] >= 4 && plan->shared_vcpus == 6, "%u + %u, %u shared: %s", on[0],
                                      on[1], plan->shared_vcpus, plan->reason);
                        ck_assert_uint_eq(plan->node_memory[0], 16 * GiB);
                        assert_reason_has(plan, "a binding confines memory, not vCPUs");
                }
}
END_TEST

/* ... and under compat, which fills siblings, so both plans share as many cores: the one with fewer vCPUs on
 * a thread with another wins (12 vCPUs bound to a node whose 16 threads are taken, with 8 threads free on
 * the other node: 8 take those, 4 double up, not all 12). */
START_TEST(test_memory_bound_vcpus_beyond_compat)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) nodes = set_of("0");
        PlacementParams p = test_params(POLICY_COMPAT);
        PlacementRequest req = {.name = "db",
                                .vcpus = 12,
                                .memory = 16 * GiB,
                                .memory_nodes = nodes,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        unsigned on1 = 0;
        const Plan *plan;

        test_place(t, l, &p, "web1", 16, GiB);
        test_place(t, l, &p, "web2", 8, GiB);
        plan = place_req(t, l, &p, &req);
        ck_assert_msg(plan->result == PLAN_OVERCOMMITTED, "%s", plan->reason);
        for (unsigned v = 0; v < plan->nvcpus; v++)
                on1 += t->cores[t->pus[plan->vcpu_pu[v]].core].node == 1;
        ck_assert_msg(on1 >= 8, "%u on node 1: %s", on1, plan->reason);
        ck_assert_uint_eq(plan->node_memory[0], 16 * GiB);
}
END_TEST

START_TEST(test_memory_bound_live_stays)
{
        /* a binding libvirt will not change: the memory stays on node 0, and with node 0 busy the vCPUs
         * take cores on node 1 rather than share node 0's (a binding confines memory, not vCPUs) */
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = set_of("0");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm",
                                        .vcpus = 2,
                                        .memory = GiB,
                                        .memory_nodes = nodes,
                                        .memory_source = MEMORY_SOURCE_BOUND,
                                        .memory_mode = MEMORY_MODE_STRICT};
                const Plan *plan;

                test_place(t, l, &p, "busy", kinds[k] == POLICY_EXPLICIT ? 2 : 4, GiB);
                plan = place_req(t, l, &p, &req);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                /* node 0, full, is no node of the plan: it holds the memory and no vCPU */
                ck_assert_msg(cpuset_count(plan->nodes) == 1 && cpuset_has(plan->nodes, 1), "%s",
                              plan->reason);
                for (unsigned v = 0; v < plan->nvcpus; v++)
                        ck_assert_uint_eq(t->cores[t->pus[plan->vcpu_pu[v]].core].node, 1);
                ck_assert_uint_eq(plan->node_memory[0], GiB);
                ck_assert(plan->keep_memory);
                assert_reason_has(plan, "a live binding libvirt cannot change");
                assert_reason_has(plan, "a binding confines memory, not vCPUs");
                /* the set's figures are those of the nodes it took, node 1 alone */
                assert_reason_has(plan, "nearest qualifying set (max distance 10, mean 10.00)");
        }
}
END_TEST

START_TEST(test_emulatorpin_stands)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm", .vcpus = 1, .memory = GiB, .keep_emulator = true};
                PlacementRequest free_req = {.name = "free", .vcpus = 1, .memory = GiB};
                const Plan *plan = place_req(t, l, &p, &req);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert(cpuset_is_empty(plan->emulator_pin));
                assert_reason_has(plan, "<cputune><emulatorpin>");
                /* the same request without the user's pin gets one */
                plan = place_req(t, l, &p, &free_req);
                ck_assert(!cpuset_is_empty(plan->emulator_pin));
        }
}
END_TEST

/* The CPU a definition keeps for its emulator (<emulatorpin cpuset='0'>) is no vCPU's while another
 * node has a core for each: 4 vCPUs on two nodes of 4 cores go to node 1, not beside CPU 0 (a realtime
 * vCPU there would starve the emulator); with node 1 busy, node 0 holds them, CPU 0 included. */
START_TEST(test_emulatorpin_node_avoided)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) emulator = set_of("0");
        g_autoptr(CpuSet) node1 = set_of("4-7");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {
            .name = "rt", .vcpus = 4, .memory = GiB, .keep_emulator = true, .emulator_cpus = emulator};
        PlacementRequest other = {.name = "other", .vcpus = 1, .memory = GiB, .allowed_cpus = node1};
        g_autoptr(Plan) apart = policy_place(t, l, &req, &p);
        g_autoptr(Plan) beside = NULL;

        ck_assert_msg(apart->result == PLAN_PLACED, "%s", apart->reason);
        ck_assert_msg(cpuset_count(apart->nodes) == 1 && cpuset_has(apart->nodes, 1), "%s", apart->reason);
        for (unsigned v = 0; v < apart->nvcpus; v++)
                ck_assert(!cpuset_has(apart->vcpu_pins[v], 0));
        /* a vCPU of another domain on node 1: node 0 alone has a core for each, CPU 0's among them */
        place_req(t, l, &p, &other);
        beside = policy_place(t, l, &req, &p);
        ck_assert_msg(beside->result == PLAN_PLACED && cpuset_count(beside->nodes) == 1 &&
                          cpuset_has(beside->nodes, 0),
                      "%s", beside->reason);
        ck_assert_uint_eq(beside->shared_vcpus, 0);
}
END_TEST

START_TEST(test_constraints_leave_nothing)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) allowed = set_of("0-1");
                g_autoptr(CpuSet) far = set_of("5");
                g_autoptr(CpuSet) node1 = set_of("1");
                g_autoptr(CpuSet) offline = set_of("8-9,100");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest reserved = {
                    .name = "a", .vcpus = 1, .memory = GiB, .allowed_cpus = allowed};
                PlacementRequest absent = {.name = "b",
                                           .vcpus = 1,
                                           .memory = GiB,
                                           .memory_nodes = far,
                                           .memory_source = MEMORY_SOURCE_USER};
                PlacementRequest disjoint = {.name = "c",
                                             .vcpus = 1,
                                             .memory = GiB,
                                             .allowed_cpus = allowed,
                                             .memory_nodes = node1,
                                             .memory_source = MEMORY_SOURCE_USER};
                PlacementRequest gone = {.name = "d", .vcpus = 1, .memory = GiB, .allowed_cpus = offline};
                const PlacementRequest *reqs[] = {&reserved, &absent, &disjoint, &gone};
                /* what each reason says is wrong: not "cores taken there" for a node the host lacks, nor
                 * "kept inside" a cpuset none of whose CPUs is usable */
                const char *why[] = {
                    "no usable CPU of this host lies inside its constraints; none of the CPUs of its <vcpu "
                    "cpuset='0-1'> is usable: CPUs 0-1 are in ReservedCPUs=",
                    "its <numatune><memory> binds its memory to node 5 (strict), which this host does not "
                    "have: libvirt refuses to start such a guest; nothing pinned",
                    "no usable CPU of this host lies inside its constraints; none of the CPUs of its <vcpu "
                    "cpuset='0-1'> is usable: CPUs 0-1 are in ReservedCPUs=; its <numatune><memory> binds "
                    "its "
                    "memory to node 1 (strict): the binding left as it is",
                    "no usable CPU of this host lies inside its constraints; none of the CPUs of its <vcpu "
                    "cpuset='8-9,100'> is usable: CPUs 8-9,100 are not online and allowed on this host "
                    "(offline, disallowed or absent); nothing pinned",
                };

                p.reserved_cpus = set_of("0-1");
                for (unsigned i = 0; i < G_N_ELEMENTS(reqs); i++) {
                        g_autoptr(Plan) plan = policy_place(t, l, reqs[i], &p);
                        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
                        for (unsigned v = 0; v < plan->nvcpus; v++)
                                ck_assert(cpuset_is_empty(plan->vcpu_pins[v]));
                        g_autofree char *text = plan_explain(t, plan);
                        assert_reason_has(plan, why[i]);
                        ck_assert_msg(!strstr(plan->reason, "cores taken there"), "%s", plan->reason);
                        /* explain's fallback line says the same: the memory fits, nothing it may use does */
                        ck_assert_msg(!strstr(text, "memory fits on no set") &&
                                          strstr(text,
                                                 "fallback: nothing on this host is left that it may use, "
                                                 "so nothing was pinned"),
                                      "%s", text);
                }
                g_clear_pointer(&p.reserved_cpus, cpuset_free);
                /* a binding that names a node the host lacks beside one it has: said */
                {
                        g_autoptr(CpuSet) some = set_of("1,5");
                        PlacementRequest part = strict_request(some, GiB);
                        g_autoptr(Plan) plan = policy_place(t, l, &part, &p);
                        assert_reason_has(plan,
                                          "node 5 of that binding is not on this host: libvirt refuses "
                                          "to start such a guest");
                }
        }
}
END_TEST

/* <vcpu cpuset> on node 0 with its memory strict on node 1: libvirt runs it so. The vCPUs stay inside the
 * cpuset, the memory is counted where it is bound, and the reason says it is remote (it was unplaceable,
 * its memory counted nowhere, so a later domain was given node 1's memory twice). A cpuset the host
 * keeps whole (ReservedCPUs=) is still unplaceable, its memory counted on its CPUs' nodes. */
START_TEST(test_cpuset_apart_from_nodeset)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) cpus = set_of("0-3");
                g_autoptr(CpuSet) node1 = set_of("1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest apart = {.name = "c",
                                          .vcpus = 2,
                                          .memory = 6 * GiB,
                                          .allowed_cpus = cpus,
                                          .memory_nodes = node1,
                                          .memory_source = MEMORY_SOURCE_USER};
                PlacementRequest shared = {.name = "s", .vcpus = 2, .memory = 4 * GiB, .allowed_cpus = cpus};
                const Plan *a = place_req(t, l, &p, &apart);
                g_autoptr(Plan) s = NULL;

                ck_assert_int_ne(a->result, PLAN_UNPLACEABLE);
                assert_pins_inside(a, cpus);
                ck_assert_uint_eq(a->node_memory[1], 6 * GiB);
                ck_assert_uint_eq(a->node_memory[0], 0);
                assert_reason_has(a, "its memory is remote");
                /* what the set has free does not hold the memory bound elsewhere: not "0 B free for" */
                if (a->result == PLAN_PLACED)
                        assert_reason_has(a, "its 6.0 GiB bound to other nodes");
                ck_assert_msg(!strstr(a->reason, "0 B free"), "%s", a->reason);
                p.reserved_cpus = set_of("0-3");
                s = policy_place(t, l, &shared, &p);
                ck_assert_int_eq(s->result, PLAN_UNPLACEABLE);
                ck_assert_uint_eq(s->node_memory[0], 4 * GiB);
                assert_reason_has(s, "its memory counted on node 0, where its CPUs are");
                g_clear_pointer(&p.reserved_cpus, cpuset_free);
        }
}
END_TEST

/* A guest pinned by hand to CPUs of nodes 0 and 1 (1 GiB each) with 4 GiB that nothing binds: the kernel
 * puts what those nodes lack on the nearest others, and so does its adopted plan, saying so; the 2 GiB
 * were counted nowhere, and a 2 GiB guest was placed on memory the first one holds. */
START_TEST(test_adopted_memory_beyond_pinned_nodes_spills)
{
        g_autoptr(Topology) t = topology_new_uniform(4, 1, 1, GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) cpu0 = set_of("0");
        g_autoptr(CpuSet) cpu1 = set_of("1");
        CpuSet *pins[2] = {cpu0, cpu1};
        PlacementRequest req = {.name = "pinned", .vcpus = 2, .memory = 4 * GiB};
        PlacementRequest next = {.name = "next", .vcpus = 1, .memory = 2 * GiB};
        Plan *plan = policy_adopt(t, l, &req, pins, &p);
        uint64_t counted = 0;

        for (unsigned n = 0; n < 4; n++)
                counted += plan->node_memory[n];
        ck_assert_msg(counted == 4 * GiB && plan->node_memory[2] == GiB && plan->node_memory[3] == GiB,
                      "%llu bytes counted: %s", (unsigned long long)counted, plan->reason);
        assert_reason_has(plan, "the nodes of its pins lack room for 2.0 GiB of its memory");
        ck_assert_int_eq(ledger_commit(l, "pinned", plan), 0);
        ck_assert_int_eq(place_req(t, l, &p, &next)->result, PLAN_UNPLACEABLE);
}
END_TEST

/* vCPUs whose own pins float over a node (Nova's shared CPUs as <vcpupin cpuset='0-3'>) are each counted
 * on the least loaded core, not on the two threads of one: a later domain sees two cores taken, and its
 * own placement is not pushed off the node by a core counted twice */
START_TEST(test_adopted_floating_pins_spread_over_cores)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) node = set_of("0-3");
        CpuSet *pins[2] = {node, node};
        PlacementRequest req = {.name = "shared", .vcpus = 2, .memory = GiB};
        g_autoptr(Plan) plan = policy_adopt(t, l, &req, pins, &p);

        ck_assert_uint_ne(t->pus[plan->vcpu_pu[0]].core, t->pus[plan->vcpu_pu[1]].core);
        ck_assert_uint_eq(plan->shared_vcpus, 0);
}
END_TEST

/* The CPUs a placed domain's definition keeps for QEMU's threads (a core for <emulatorpin>, another for an
 * <iothreadpin>) are kept apart from its vCPUs and held: the next domain takes the free cores left, not
 * them, while any is left */
START_TEST(test_placed_thread_cpus_held)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 6, 2, 16 * GiB, NULL); /* cores: PUs 0-1 ... 10-11 */
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) emulator = set_of("0-1");
        g_autoptr(CpuSet) kept = set_of("1");
        g_autoptr(GArray) io = g_array_new(FALSE, FALSE, sizeof(IothreadPin));
        IothreadPin pin = {.id = 1, .cpus = set_of("2-3")};
        const Plan *a, *b;

        g_array_append_val(io, pin);
        PlacementRequest req = {.name = "a",
                                .vcpus = 2,
                                .memory = GiB,
                                .keep_emulator = true,
                                .emulator_cpus = emulator,
                                .iothreads = kept,
                                .kept_iothreads = kept,
                                .iothread_cpus = io};
        PlacementRequest next = {.name = "b", .vcpus = 2, .memory = GiB};

        a = place_req(t, l, &p, &req);
        ck_assert_int_eq(a->result, PLAN_PLACED);
        for (unsigned i = 0; i < 2; i++)
                ck_assert_msg(t->pus[a->vcpu_pu[i]].core >= 2, "a's vCPU %u on core %u, kept for QEMU", i,
                              t->pus[a->vcpu_pu[i]].core);
        ck_assert_uint_eq(cpuset_count(a->held_pus), 4);
        b = place_req(t, l, &p, &next);
        ck_assert_int_eq(b->result, PLAN_PLACED);
        for (unsigned i = 0; i < 2; i++)
                ck_assert_msg(t->pus[b->vcpu_pu[i]].core >= 2, "b's vCPU %u on core %u, a's QEMU threads'",
                              i, t->pus[b->vcpu_pu[i]].core);
        cpuset_free(pin.cpus);
}
END_TEST

/* A domain's I/O threads each pinned by its definition onto a core of its own hold a core or two in all,
 * the first ones, not every core they name: a 1-vCPU guest with five of them on a host of six cores left
 * the next 3-vCPU domain no free core ("overcommitted") while four of them ran no vCPU */
START_TEST(test_thread_holds_a_core_or_two_in_all)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 6, 2, 16 * GiB, NULL); /* cores: PUs 0-1 ... 10-11 */
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) kept = set_of("1-5");
        g_autoptr(CpuSet) pin = set_of("0");
        g_autoptr(GArray) io = g_array_new(FALSE, FALSE, sizeof(IothreadPin));
        CpuSet *pins[1] = {pin};
        g_autoptr(CpuSet) cores = cpuset_new();
        const Plan *a, *b;

        for (unsigned id = 1; id <= 5; id++) {
                IothreadPin one = {.id = id, .cpus = cpuset_new()};
                cpuset_add(one.cpus, 2 * id); /* core id */
                g_array_append_val(io, one);
        }
        PlacementRequest req = {
            .name = "a", .vcpus = 1, .memory = GiB, .kept_iothreads = kept, .iothread_cpus = io};
        PlacementRequest next = {.name = "b", .vcpus = 3, .memory = GiB};

        ck_assert_int_eq(ledger_commit(l, "a", policy_adopt(t, l, &req, pins, &p)), 0);
        a = ledger_lookup(l, "a");
        CPUSET_FOREACH (pu, a->held_pus)
                cpuset_add(cores, t->pus[pu].core);
        ck_assert_msg(cpuset_count(cores) == 2 && cpuset_has(cores, 1) && cpuset_has(cores, 2),
                      "a holds %u cores for its I/O threads", cpuset_count(cores));
        b = place_req(t, l, &p, &next);
        ck_assert_msg(b->result == PLAN_PLACED, "b: %s", b->reason);
        for (unsigned i = 0; i < io->len; i++)
                cpuset_free(g_array_index(io, IothreadPin, i).cpus);
}
END_TEST

/* A domain whose pins are adopted (it pins itself, Nova's emulator_threads_policy=isolate) keeps a core
 * for its emulator: that core is held, and the next domain takes another free core rather than it; a
 * floating emulator (a wide cpuset) holds nothing */
START_TEST(test_adopted_emulator_core_held)
{
        g_autoptr(Topology) t =
            topology_new_uniform(1, 3, 2, 8 * GiB, NULL); /* cores 0-2: PUs 0-1, 2-3, 4-5 */
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) emulator = set_of("2");
        g_autoptr(CpuSet) wide = set_of("0-5");
        g_autoptr(CpuSet) pin = set_of("0");
        CpuSet *pins[1] = {pin};
        PlacementRequest iso = {.name = "iso", .vcpus = 1, .memory = GiB, .emulator_cpus = emulator};
        PlacementRequest next = {.name = "next", .vcpus = 1, .memory = GiB};
        const Plan *n;

        ck_assert_int_eq(ledger_commit(l, "iso", policy_adopt(t, l, &iso, pins, &p)), 0);
        /* held, not a vCPU: the core is not free, and nothing counts as sharing it */
        ck_assert(!ledger_core_free(l, 1));
        ck_assert_uint_eq(ledger_core_load(l, 1), 0);
        ck_assert_uint_eq(ledger_core_held(l, 1), 1);
        n = place_req(t, l, &p, &next);
        ck_assert_int_eq(n->result, PLAN_PLACED);
        ck_assert_msg(t->pus[n->vcpu_pu[0]].core == 2, "next on core %u, the emulator's",
                      t->pus[n->vcpu_pu[0]].core);
        ck_assert_int_eq(ledger_release(l, "iso"), 0);
        ck_assert_uint_eq(ledger_core_held(l, 1), 0);
        ck_assert(ledger_core_free(l, 1));
        iso.emulator_cpus = wide;
        g_autoptr(Plan) floating = policy_adopt(t, l, &iso, pins, &p);
        ck_assert(cpuset_is_empty(floating->held_pus));
}
END_TEST

/* Overcommitted beside another domain's isolated emulator CPU (held): the vCPU takes the core's other
 * thread and is pinned to it alone, not floating over the held CPU, and the reason says what it runs
 * beside instead of "0 vCPUs share a core" */
START_TEST(test_overcommit_beside_held_emulator)
{
        g_autoptr(Topology) t =
            topology_new_uniform(1, 3, 2, 8 * GiB, NULL); /* cores 0-2: PUs 0-1, 2-3, 4-5 */
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) emulator = set_of("2");
        g_autoptr(CpuSet) pin = set_of("0");
        CpuSet *pins[1] = {pin};
        PlacementRequest iso = {.name = "iso", .vcpus = 1, .memory = GiB, .emulator_cpus = emulator};
        PlacementRequest late = {.name = "late", .vcpus = 2, .memory = GiB};
        const Plan *n;
        int on_held_core = -1;

        ck_assert_int_eq(ledger_commit(l, "iso", policy_adopt(t, l, &iso, pins, &p)), 0);
        n = place_req(t, l, &p, &late);
        ck_assert_int_eq(n->result, PLAN_OVERCOMMITTED);
        for (unsigned i = 0; i < n->nvcpus; i++)
                if (t->pus[n->vcpu_pu[i]].core == 1)
                        on_held_core = (int)i;
        ck_assert_msg(on_held_core >= 0, "%s", n->reason);
        ck_assert_int_eq(n->vcpu_pu[on_held_core], 3);
        ck_assert_msg(cpuset_count(n->vcpu_pins[on_held_core]) == 1 &&
                          cpuset_has(n->vcpu_pins[on_held_core], 3),
                      "pinned over the held CPU 2");
        ck_assert_msg(strstr(n->reason, "1 runs beside CPU 2, held for another domain's emulator"), "%s",
                      n->reason);
}
END_TEST

/* On a host without SMT a CPU held for another domain's isolated emulator is that core whole: an
 * overcommitted vCPU there would run on the emulator's own CPU (Nova's emulator_threads_policy=isolate
 * undone), so it shares a core with another vCPU first; and when it must run there, the reason says it
 * runs on that CPU, not beside it, nor that no vCPU shares a core. */
START_TEST(test_overcommit_no_smt_spares_held_emulator)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 1, 8 * GiB, NULL); /* cores 0-2: PUs 0, 1, 2 */
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) emulator = set_of("1");
        g_autoptr(CpuSet) pin = set_of("0");
        CpuSet *pins[1] = {pin};
        PlacementRequest iso = {.name = "iso", .vcpus = 1, .memory = GiB, .emulator_cpus = emulator};
        PlacementRequest web = {.name = "web", .vcpus = 1, .memory = GiB};
        PlacementRequest late = {.name = "late", .vcpus = 1, .memory = GiB};
        PlacementRequest last = {.name = "last", .vcpus = 2, .memory = GiB};
        const Plan *n;

        ck_assert_int_eq(ledger_commit(l, "iso", policy_adopt(t, l, &iso, pins, &p)), 0);
        ck_assert(ledger_pu_held(l, 1));
        n = place_req(t, l, &p, &web);
        ck_assert_int_eq(n->result, PLAN_PLACED);
        ck_assert_int_eq(n->vcpu_pu[0], 2);
        n = place_req(t, l, &p, &late);
        ck_assert_int_eq(n->result, PLAN_OVERCOMMITTED);
        ck_assert_msg(n->vcpu_pu[0] == 2, "late on PU %d, not beside web's vCPU: %s", n->vcpu_pu[0],
                      n->reason);
        ck_assert_msg(strstr(n->reason, "1 vCPU shares a core with another domain's vCPU"), "%s", n->reason);
        /* every other core holds two vCPUs now: one of last's goes onto the held CPU, and says so */
        n = place_req(t, l, &p, &last);
        ck_assert_int_eq(n->result, PLAN_OVERCOMMITTED);
        ck_assert_msg(n->vcpu_pu[0] == 1 || n->vcpu_pu[1] == 1, "%s", n->reason);
        ck_assert_msg(strstr(n->reason, "on CPU 1, held for another domain's emulator"), "%s", n->reason);
        ck_assert_msg(!strstr(n->reason, "beside CPU 1"), "%s", n->reason);
        /* with load measured, the emulator's CPU (nearly idle) is no calmer a core than an idle vCPU's */
        {
                g_autoptr(Ledger) m = ledger_new(t);
                double pu_busy[] = {0.1, 0.05, 0.1};
                PlacementRequest measured = {
                    .name = "measured", .vcpus = 1, .memory = GiB, .pu_busy = pu_busy};

                ck_assert_int_eq(ledger_commit(m, "iso", policy_adopt(t, m, &iso, pins, &p)), 0);
                place_req(t, m, &p, &web);
                n = place_req(t, m, &p, &measured);
                ck_assert_int_eq(n->result, PLAN_OVERCOMMITTED);
                ck_assert_msg(n->vcpu_pu[0] != 1, "by load on the held CPU: %s", n->reason);
        }
}
END_TEST

/* A 4-vCPU guest whose definition pins its own I/O thread (or emulator) to a core of node 0 on an empty
 * two-node host: node 0 still has 7 free cores for it, and the pinned core is the guest's own, not load,
 * so it stays beside its thread (under Fit=spread and pack) rather than going to node 1, across the
 * socket from every I/O it does. */
START_TEST(test_own_pinned_thread_keeps_guest_near)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL); /* node 0: CPUs 0-15 */
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) core = set_of("2-3");
        g_autoptr(GArray) io = g_array_new(FALSE, TRUE, sizeof(IothreadPin));
        g_autoptr(CpuSet) ids = set_of("1");
        IothreadPin pin = {.id = 1, .cpus = core};
        static const FitMode fits[] = {FIT_SPREAD, FIT_PACK};

        g_array_append_val(io, pin);
        for (unsigned f = 0; f < G_N_ELEMENTS(fits); f++)
                for (unsigned which = 0; which < 2; which++) {
                        PlacementParams p = test_params(POLICY_EXPLICIT);
                        PlacementRequest req = {.name = "iso", .vcpus = 4, .memory = 8 * GiB};
                        g_autoptr(Plan) plan = NULL;
                        p.fit = fits[f];
                        if (which) {
                                req.emulator_cpus = core;
                        } else {
                                req.iothreads = ids;
                                req.kept_iothreads = ids;
                                req.iothread_cpus = io;
                        }
                        plan = policy_place(t, l, &req, &p);
                        ck_assert_int_eq(plan->result, PLAN_PLACED);
                        ck_assert_msg(cpuset_has(plan->nodes, 0) && cpuset_count(plan->nodes) == 1,
                                      "%s pinned on node 0, fit %u: %s", which ? "emulator" : "I/O thread",
                                      f, plan->reason);
                        for (unsigned i = 0; i < plan->nvcpus; i++)
                                ck_assert_uint_ne(t->pus[plan->vcpu_pu[i]].core, 1);
                }
}
END_TEST

/* ... and the node of the CPUs its definition pins QEMU's own threads to draws the guest like a PCI
 * device's node: among equally near sets with room, one with that node wins, also when another node is
 * emptier (a 1-vCPU guest on node 0 sent it to node 1) or lower numbered (a pin on node 1 of an empty
 * host), and the reason says so. */
START_TEST(test_pinned_thread_node_draws_guest)
{
        static const char *const pins[] = {"2-3", "18-19"};

        for (unsigned k = 0; k < G_N_ELEMENTS(pins); k++)
                for (unsigned which = 0; which < 2; which++) {
                        g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 64 * GiB, NULL);
                        g_autoptr(Ledger) l = ledger_new(t);
                        g_autoptr(CpuSet) core = set_of(pins[k]);
                        g_autoptr(GArray) io = g_array_new(FALSE, TRUE, sizeof(IothreadPin));
                        g_autoptr(CpuSet) ids = set_of("1");
                        IothreadPin pin = {.id = 1, .cpus = core};
                        PlacementParams p = test_params(POLICY_EXPLICIT);
                        PlacementRequest req = {.name = "io", .vcpus = 4, .memory = 8 * GiB};
                        unsigned node = k; /* the pin's node */
                        const Plan *plan;

                        g_array_append_val(io, pin);
                        if (which) {
                                req.emulator_cpus = core;
                                req.keep_emulator = true;
                        } else {
                                req.iothreads = ids;
                                req.kept_iothreads = ids;
                                req.iothread_cpus = io;
                        }
                        if (node == 0) /* node 0 the busier: spread alone would pick node 1 */
                                test_place(t, l, &p, "x", 1, GiB);
                        plan = place_req(t, l, &p, &req);
                        ck_assert_int_eq(plan->result, PLAN_PLACED);
                        ck_assert_msg(cpuset_has(plan->nodes, node) && cpuset_count(plan->nodes) == 1,
                                      "%s pinned to %s: %s", which ? "emulator" : "I/O thread", pins[k],
                                      plan->reason);
                        assert_reason_has(plan, node ? "near the CPUs its definition pins QEMU's threads to "
                                                       "(node 1)"
                                                     : "near the CPUs its definition pins QEMU's threads to "
                                                       "(node 0)");
                }
}
END_TEST

/* On a host without SMT the emulator needs a core of its own: a guest whose <iothreadpin> is on node 0,
 * where its vCPUs find a core each but none is left for its emulator, goes to node 1, and the reason says
 * the spare core is what node 0 lacked, not room. */
START_TEST(test_pinned_thread_node_short_of_emulator_core)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) core = set_of("7");
        g_autoptr(GArray) io = g_array_new(FALSE, TRUE, sizeof(IothreadPin));
        g_autoptr(CpuSet) ids = set_of("1");
        IothreadPin pin = {.id = 1, .cpus = core};
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "io", .vcpus = 6, .memory = 8 * GiB};
        const Plan *plan;

        g_array_append_val(io, pin);
        req.iothreads = ids;
        req.kept_iothreads = ids;
        req.iothread_cpus = io;
        test_place(t, l, &p, "x", 1, GiB); /* node 0: 6 cores left beside the pinned one */
        ck_assert_int_eq(t->cores[t->pus[ledger_lookup(l, "x")->vcpu_pu[0]].core].node, 0);
        plan = place_req(t, l, &p, &req);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_has(plan->nodes, 1) && cpuset_count(plan->nodes) == 1, "%s", plan->reason);
        assert_reason_has(plan,
                          "away from the CPUs its definition pins QEMU's threads to (node 0): no set as "
                          "near with them has a core per vCPU off those CPUs' cores and one to spare for "
                          "its emulator");
}
END_TEST

/* Four 2-vCPU guests whose emulator the definition pins to cpus, each placed on a node none before it took.
 */
static void assert_four_apart(const Topology *t, const PlacementParams *p, const CpuSet *cpus)
{
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) used = cpuset_new();

        for (unsigned i = 0; i < 4; i++) {
                g_autofree char *name = g_strdup_printf("g%u", i);
                PlacementRequest req = {.name = name,
                                        .vcpus = 2,
                                        .memory = 4 * GiB,
                                        .emulator_cpus = cpus,
                                        .keep_emulator = true};
                const Plan *plan = place_req(t, l, p, &req);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert_msg(cpuset_count(plan->nodes) == 1 && !cpuset_intersects(used, plan->nodes),
                              "%s: %s", name, plan->reason);
                cpuset_union(used, plan->nodes);
        }
}

/* ... but only CPUs of its own: an <emulatorpin> to ReservedCPUs= (Nova's emulator_threads_policy=share,
 * every guest's emulator on the same housekeeping CPUs) draws no guest, and 2-vCPU guests still go one a
 * node (they all went to node 0 until it was full); nor does the same shared set outside ReservedCPUs= (a
 * cpu_shared_set placementd does not keep): the first guest holds it, and it draws none after. */
START_TEST(test_shared_housekeeping_pin_draws_none)
{
        g_autoptr(Topology) t = topology_new_uniform(4, 8, 2, 64 * GiB, NULL);
        g_autoptr(CpuSet) shared = set_of("0-1");
        PlacementParams p = test_params(POLICY_EXPLICIT);

        p.reserved_cpus = shared;
        assert_four_apart(t, &p, shared);
        p.reserved_cpus = NULL;
        assert_four_apart(t, &p, shared);
}
END_TEST

/* A thread pin's node draws less than a device's: never at the cost of the L3 fit. Four L3 groups of 6 cores
 * a node; node 0's are each part taken, node 1's whole: a 6-vCPU guest whose emulator is pinned on node 0
 * takes a whole L3 of node 1, not 6 cores of two L3 groups beside its emulator. */
START_TEST(test_pinned_thread_node_keeps_l3_fit)
{
        g_autofree char *path = test_topology_path("four-l3-per-node.xml");
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(CpuSet) emulator = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "l3emu", .vcpus = 6, .memory = 8 * GiB, .keep_emulator = true};
        const Plan *plan;
        unsigned node0_first;

        ck_assert_int_eq(topology_load(path, &t, NULL), 0);
        l = ledger_new(t);
        /* one core taken in each of node 0's L3 groups */
        node0_first = t->nodes[0].core_first;
        for (unsigned c = node0_first, k = 0; c < node0_first + t->nodes[0].ncores; c++)
                if (c == node0_first || t->cores[c].l3 != t->cores[c - 1].l3) {
                        g_autofree char *name = g_strdup_printf("frag%u", k++);
                        g_autofree char *cpu = g_strdup_printf("%u", t->pus[t->cores[c].pu_first].os_index);
                        g_autoptr(CpuSet) one = set_of(cpu);
                        PlacementRequest r = {.name = name, .vcpus = 1, .memory = GiB, .allowed_cpus = one};
                        place_req(t, l, &p, &r);
                }
        {
                g_autofree char *cpu =
                    g_strdup_printf("%u", t->pus[t->cores[node0_first + 3].pu_first].os_index);
                emulator = set_of(cpu);
        }
        req.emulator_cpus = emulator;
        plan = place_req(t, l, &p, &req);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(cpuset_count(plan->nodes) == 1 && !cpuset_has(plan->nodes, 0), "%s", plan->reason);
        assert_reason_has(plan, "fits one L3 cache");
}
END_TEST

/* A random subset of 0..n-1 (never empty), or NULL about a third of the time. */
static CpuSet *random_subset(GRand *r, unsigned n)
{
        CpuSet *s;

        if (g_rand_int_range(r, 0, 3) == 0)
                return NULL;
        s = cpuset_new();
        for (unsigned i = 0; i < n; i++)
                if (g_rand_boolean(r))
                        cpuset_add(s, i);
        if (cpuset_is_empty(s))
                cpuset_add(s, (unsigned)g_rand_int_range(r, 0, (gint32)n));
        return s;
}

START_TEST(test_random_requests_stay_inside)
{
        /* seeded: a failure names the round, which replays the same hosts and requests */
        g_autoptr(GRand) r = g_rand_new_with_seed(20261130);

        for (unsigned round = 0; round < 400; round++) {
                unsigned nnodes = (unsigned)g_rand_int_range(r, 1, 5),
                         ncores = (unsigned)g_rand_int_range(r, 1, 4);
                g_autoptr(Topology) t =
                    topology_new_uniform(nnodes, ncores, (unsigned)g_rand_int_range(r, 1, 3), 4 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) allowed = random_subset(r, t->npus);
                g_autoptr(CpuSet) nodes = random_subset(r, nnodes + 1); /* may name a node the host lacks */
                PlacementParams p = test_params(kinds[round % 2]);
                PlacementRequest req = {.name = "vm",
                                        .vcpus = (unsigned)g_rand_int_range(r, 1, 9),
                                        .memory = (uint64_t)g_rand_int_range(r, 1, 9) * GiB / 2,
                                        .allowed_cpus = allowed,
                                        .memory_nodes = nodes,
                                        .memory_source = nodes ? MEMORY_SOURCE_USER : MEMORY_SOURCE_NONE,
                                        .memory_mode = (MemoryMode)g_rand_int_range(r, 0, _MEMORY_MODE_MAX),
                                        .keep_emulator = g_rand_boolean(r)};
                g_autoptr(Plan) plan = NULL;
                uint64_t charged = 0;
                bool usable = false;

                for (unsigned busy = g_rand_int_range(r, 0, 4); busy > 0; busy--) {
                        g_autofree char *name = g_strdup_printf("busy%u", busy);
                        test_place(t, l, &p, name, (unsigned)g_rand_int_range(r, 1, 4), GiB);
                }
                plan = policy_place(t, l, &req, &p);
                for (unsigned pu = 0; pu < t->npus; pu++) {
                        unsigned node = t->cores[t->pus[pu].core].node;
                        usable |=
                            (!allowed || cpuset_has(allowed, pu)) && (!nodes || cpuset_has(nodes, node));
                }
                for (unsigned v = 0; v < plan->nvcpus; v++) {
                        ck_assert_msg(plan->result == PLAN_UNPLACEABLE ||
                                          !cpuset_is_empty(plan->vcpu_pins[v]),
                                      "round %u: vCPU %u unpinned", round, v);
                        CPUSET_FOREACH (cpu, plan->vcpu_pins[v]) {
                                ck_assert_msg(!allowed || cpuset_has(allowed, (unsigned)cpu),
                                              "round %u: CPU %d outside the cpuset", round, cpu);
                                /* a nodeset without a CPU of the cpuset: the vCPUs run outside it;
                                 * one with too few free cores: they take cores outside it too, a
                                 * core each (under compat a thread) or fewer sharing, and the reason
                                 * says so */
                                ck_assert_msg(!nodes || !usable ||
                                                  cpuset_has(nodes, t->cores[t->pus[cpu].core].node) ||
                                                  (plan->result != PLAN_UNPLACEABLE &&
                                                   strstr(plan->reason, "a binding confines memory")),
                                              "round %u: CPU %d outside the nodeset: %s", round, cpu,
                                              plan->reason);
                        }
                }
                CPUSET_FOREACH (cpu, plan->emulator_pin)
                        ck_assert_msg(!allowed || cpuset_has(allowed, (unsigned)cpu), "round %u: emulator",
                                      round);
                ck_assert_msg(!req.keep_emulator || cpuset_is_empty(plan->emulator_pin), "round %u", round);
                CPUSET_FOREACH (n, plan->nodes)
                        ck_assert_msg(!nodes || !usable || cpuset_has(nodes, (unsigned)n) ||
                                          strstr(plan->reason, "a binding confines memory"),
                                      "round %u: node %d", round, n);
                for (unsigned n = 0; n < t->nnodes; n++) {
                        /* preferred: what its node has no room for is where the kernel falls back */
                        ck_assert_msg(!nodes || !plan->node_memory[n] || cpuset_has(nodes, n) ||
                                          req.memory_mode == MEMORY_MODE_PREFERRED,
                                      "round %u: memory counted on node %u", round, n);
                        charged += plan->node_memory[n];
                }
                /* bound memory is where it is, all of it counted: placed whenever a usable CPU is inside,
                 * else (libvirt runs it so) on the cpuset's CPUs nearest to it, when the nodeset names a
                 * node of this host */
                if (nodes) {
                        bool named = cpuset_next(nodes, 0) < (int)nnodes;
                        ck_assert_msg((plan->result != PLAN_UNPLACEABLE) == (usable || named),
                                      "round %u: %s", round, plan->reason);
                        if (named)
                                ck_assert_uint_eq(charged, req.memory);
                }
        }
}
END_TEST

/* A strict binding over two nodes: the kernel falls back inside the binding as a node fills, so no node
 * is counted past what it holds while the binding as a whole has room, and no shortage is said. */
START_TEST(test_strict_binding_counts_no_node_past_its_memory)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) one = set_of("1");
                g_autoptr(CpuSet) both = set_of("0-1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest fill = strict_request(one, 7 * GiB);
                PlacementRequest vm = strict_request(both, 8 * GiB);
                const Plan *plan;

                fill.name = "fill";
                place_req(t, l, &p, &fill);
                plan = place_req(t, l, &p, &vm); /* node 1 has 1 GiB left, node 0 all 8 */
                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert_uint_eq(plan->node_memory[0] + plan->node_memory[1], 8 * GiB);
                for (unsigned n = 0; n < 2; n++)
                        ck_assert_msg(ledger_node_memory(l, n) <= t->nodes[n].memory,
                                      "node %u counted %" G_GUINT64_FORMAT " bytes of %" G_GUINT64_FORMAT, n,
                                      ledger_node_memory(l, n), t->nodes[n].memory);
                ck_assert_msg(!strstr(plan->reason, "cannot get all its memory"), "%s", plan->reason);
        }
}
END_TEST

/* Hugepages bound over two nodes, one of them without a pool of that size: the pages come from the other
 * (hugetlb takes them from any node of the binding), the plan fits the host and nothing is said short. */
START_TEST(test_hugepage_binding_skips_a_node_without_the_pool)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = NULL;
                g_autoptr(CpuSet) both = set_of("0-1");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest vm = strict_request(both, 2 * GiB);
                Plan *plan;

                topology_node_set_hugepages(t, 0, UINT64_C(2) << 20, 2048); /* 4 GiB on node 0 only */
                l = ledger_new(t);
                vm.hugepage_size = UINT64_C(2) << 20;
                plan = policy_place(t, l, &vm, &p);
                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert_uint_eq(plan->node_memory[0], 2 * GiB);
                ck_assert_uint_eq(plan->node_memory[1], 0);
                ck_assert_msg(!strstr(plan->reason, "cannot all be backed"), "%s", plan->reason);
                ck_assert_int_eq(ledger_commit(l, vm.name, plan), 0);
        }
}
END_TEST

/* <vcpu cpuset> keeps the vCPUs on node 0 but binds no memory: a guest bigger than node 0 runs all the same,
 * its memory spilling to node 1. Its vCPUs take cores of node 0 (left floating, they shared every core a
 * guest placed there after them was given), and the memory node 0 lacks is counted on node 1 and said. */
START_TEST(test_cpuset_alone_memory_spills)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = host();
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) node0 = set_of("0-3");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {
                    .name = "big", .vcpus = 1, .memory = 12 * GiB, .allowed_cpus = node0};
                PlacementRequest next = {.name = "next", .vcpus = 1, .memory = GiB, .allowed_cpus = node0};
                const Plan *plan = place_req(t, l, &p, &req), *after;

                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                for (unsigned i = 0; i < plan->nvcpus; i++) {
                        g_autoptr(CpuSet) outside = cpuset_copy(plan->vcpu_pins[i]);
                        cpuset_subtract(outside, node0);
                        ck_assert_msg(plan->vcpu_pu[i] >= 0 && !cpuset_is_empty(plan->vcpu_pins[i]) &&
                                          cpuset_is_empty(outside),
                                      "vCPU %u", i);
                }
                ck_assert_uint_eq(plan->node_memory[0], 8 * GiB);
                ck_assert_uint_eq(plan->node_memory[1], 4 * GiB);
                assert_reason_has(plan,
                                  "its <vcpu cpuset> binds no memory and its nodes lack room for 4.0 GiB "
                                  "of it: counted on node 1, nearest its vCPUs");
                /* the next guest kept to node 0 gets a core of its own there, none of big's */
                after = place_req(t, l, &p, &next);
                if (kinds[k] == POLICY_EXPLICIT)
                        for (unsigned i = 0; i < plan->nvcpus; i++)
                                ck_assert(!cpuset_intersects(after->vcpu_pins[0], plan->vcpu_pins[i]));
        }
}
END_TEST

/* Node 1 has the free cores and 1 GiB of free memory, node 0 the memory and no free core: a 2-vCPU 8 GiB
 * guest runs on node 1 with 7 GiB of its memory on node 0, and the reason says how much is away from its
 * vCPUs and why, as it does when all of it is. */
START_TEST(test_memory_mostly_remote_said)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 4, .memory = GiB};
        PlacementRequest b = {.name = "b", .vcpus = 1, .memory = 15 * GiB};
        PlacementRequest c = {.name = "c", .vcpus = 2, .memory = 8 * GiB};
        const Plan *plan;

        ck_assert_int_eq(place_req(t, l, &p, &a)->result, PLAN_PLACED);
        ck_assert_int_eq(place_req(t, l, &p, &b)->result, PLAN_PLACED);
        plan = place_req(t, l, &p, &c);
        ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
        ck_assert_uint_eq(plan->node_memory[0], 7 * GiB);
        assert_reason_has(plan, "7.0 GiB of its 8.0 GiB is on node 0, where none of its vCPUs runs (node 1 "
                                "has no room for more than 1.0 GiB)");
        ck_assert_msg(!strstr(ledger_lookup(l, "a")->reason, "none of its vCPUs runs"), "%s",
                      ledger_lookup(l, "a")->reason);
}
END_TEST

/* A PowerVM LPAR's memoryless node: a guest on its cores has all of its memory elsewhere, and the reason
 * says the node has no memory, not that it has no room left (which sent one looking for who filled it). */
START_TEST(test_memory_remote_from_memoryless_node_said)
{
        g_autoptr(Topology) t = test_topology_load("lpar-memoryless.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 2, .memory = 8 * GiB};
        PlacementRequest b = {.name = "b", .vcpus = 2, .memory = 8 * GiB};
        const Plan *plan;

        ck_assert_int_eq(place_req(t, l, &p, &a)->result, PLAN_PLACED);
        plan = place_req(t, l, &p, &b);
        ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
        assert_reason_has(plan,
                          "its memory is all on node 0, none where its vCPUs run (node 1 has no memory)");
}
END_TEST

/* The last free core is on node 1, whose memory a strict binding holds: the guest takes the core and its
 * memory goes to node 0, and the reason says it is all away from its vCPUs. */
START_TEST(test_memory_all_remote_said)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) node1 = set_of("1");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 2, .memory = GiB};
        PlacementRequest b = strict_request(node1, 8 * GiB);
        PlacementRequest c = {.name = "c", .vcpus = 1, .memory = GiB};
        const Plan *plan;

        b.name = "b";
        b.vcpus = 1;
        ck_assert_int_eq(place_req(t, l, &p, &a)->result, PLAN_PLACED);
        ck_assert_int_eq(place_req(t, l, &p, &b)->result, PLAN_PLACED);
        plan = place_req(t, l, &p, &c);
        ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
        ck_assert_uint_eq(plan->node_memory[0], GiB);
        assert_reason_has(
            plan, "its memory is all on node 0, none where its vCPUs run (node 1 has no room for it)");
        /* a guest whose memory is where its vCPUs are says nothing of the kind */
        ck_assert_msg(!strstr(ledger_lookup(l, "a")->reason, "none where its vCPUs run"), "%s",
                      ledger_lookup(l, "a")->reason);
}
END_TEST

static Suite *constraints_suite(void)
{
        Suite *s = suite_create("constraints");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_vcpu_cpuset_keeps_plan_inside);
        tcase_add_test(tc, test_constrained_overcommit_reason);
        tcase_add_test(tc, test_constraints_beyond_exhaustive_sets);
        tcase_add_test(tc, test_vcpu_cpuset_on_memoryless_node);
        tcase_add_test(tc, test_core_usable_through_allowed_pus);
        tcase_add_test(tc, test_full_cpuset_overcommits_inside);
        tcase_add_test(tc, test_numatune_strict_binds_cores_and_memory);
        tcase_add_test(tc, test_strict_binding_beyond_node_said);
        tcase_add_test(tc, test_binding_to_reserved_node);
        tcase_add_test(tc, test_numatune_modes_charge_memory);
        tcase_add_test(tc, test_memnode_union_bounds_nodes);
        tcase_add_test(tc, test_preferred_spills_to_nearest);
        tcase_add_test(tc, test_preferred_free_memory_where_counted);
        tcase_add_test(tc, test_preferred_gpu_node_chosen);
        tcase_add_test(tc, test_memory_bound_live_stays);
        tcase_add_test(tc, test_memory_bound_vcpus_beyond);
        tcase_add_test(tc, test_memory_bound_vcpus_beyond_overcommitted);
        tcase_add_test(tc, test_memory_bound_vcpus_beyond_compat);
        tcase_add_test(tc, test_emulatorpin_stands);
        tcase_add_test(tc, test_emulatorpin_node_avoided);
        tcase_add_test(tc, test_constraints_leave_nothing);
        tcase_add_test(tc, test_random_requests_stay_inside);
        tcase_add_test(tc, test_cpuset_apart_from_nodeset);
        tcase_add_test(tc, test_adopted_emulator_core_held);
        tcase_add_test(tc, test_overcommit_beside_held_emulator);
        tcase_add_test(tc, test_overcommit_no_smt_spares_held_emulator);
        tcase_add_test(tc, test_own_pinned_thread_keeps_guest_near);
        tcase_add_test(tc, test_pinned_thread_node_draws_guest);
        tcase_add_test(tc, test_pinned_thread_node_short_of_emulator_core);
        tcase_add_test(tc, test_shared_housekeeping_pin_draws_none);
        tcase_add_test(tc, test_pinned_thread_node_keeps_l3_fit);
        tcase_add_test(tc, test_placed_thread_cpus_held);
        tcase_add_test(tc, test_thread_holds_a_core_or_two_in_all);
        tcase_add_test(tc, test_adopted_floating_pins_spread_over_cores);
        tcase_add_test(tc, test_adopted_memory_beyond_pinned_nodes_spills);
        tcase_add_test(tc, test_strict_binding_counts_no_node_past_its_memory);
        tcase_add_test(tc, test_hugepage_binding_skips_a_node_without_the_pool);
        tcase_add_test(tc, test_cpuset_alone_memory_spills);
        tcase_add_test(tc, test_memory_all_remote_said);
        tcase_add_test(tc, test_memory_mostly_remote_said);
        tcase_add_test(tc, test_memory_remote_from_memoryless_node_said);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(constraints_suite)
