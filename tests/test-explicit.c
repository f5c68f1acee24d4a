/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-util.h"
#include "test-policy-util.h"
#include "topology-load.h"

/* 2 nodes x 16 cores x 2 threads, 64 GiB each: the host of docs/performance.md. */
static const PolicyKind kinds_all[] = {POLICY_EXPLICIT, POLICY_COMPAT};

static Topology *host_2x16x2(void)
{
        return topology_new_uniform(2, 16, 2, 64 * GiB, NULL);
}

START_TEST(test_core_rule)
{
        static const struct {
                unsigned vcpus, nodes;
        } cases[] = {{1, 1}, {16, 1}, {17, 2}, {32, 2}};
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Topology) t = host_2x16x2();
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                const Plan *plan = test_place(t, l, &p, "vm", cases[i].vcpus, 8 * GiB);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                ck_assert_uint_eq(test_plan_node_count(plan), cases[i].nodes);
                ck_assert_uint_eq(test_max_per_core(t, plan), 1);
                ck_assert_uint_eq(plan->shared_vcpus, 0);
                /* VCPUPin=core: both threads of the vCPU's own core */
                for (unsigned v = 0; v < plan->nvcpus; v++) {
                        const TopoCore *core = &t->cores[t->pus[plan->vcpu_pu[v]].core];
                        ck_assert_uint_eq(cpuset_count(plan->vcpu_pins[v]), 2);
                        ck_assert(cpuset_has(plan->vcpu_pins[v], t->pus[core->pu_first].os_index));
                }
        }
}
END_TEST

START_TEST(test_even_spread)
{
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *plan = test_place(t, l, &p, "vm", 20, 8 * GiB);
        unsigned on[2] = {0};

        for (unsigned v = 0; v < plan->nvcpus; v++)
                on[t->cores[t->pus[plan->vcpu_pu[v]].core].node]++;
        ck_assert_uint_eq(on[0], 10);
        ck_assert_uint_eq(on[1], 10);
        /* memory follows the vCPUs */
        ck_assert_uint_eq(plan->node_memory[0], 4 * GiB);
        ck_assert_uint_eq(plan->node_memory[1], 4 * GiB);
}
END_TEST

START_TEST(test_alternating_two_vcpu_vms)
{
        /* XenServer planner case: two-vCPU VMs on 2 nodes alternate between them. */
        PolicyKind kinds[] = {POLICY_EXPLICIT, POLICY_COMPAT};
        for (unsigned k = 0; k < 2; k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(kinds[k]);
                for (unsigned i = 0; i < 4; i++) {
                        g_autofree char *name = g_strdup_printf("vm%u", i);
                        const Plan *plan = test_place(t, l, &p, name, 2, 2 * GiB);
                        ck_assert_int_eq(plan->result, PLAN_PLACED);
                        ck_assert_uint_eq(test_plan_node_count(plan), 1);
                        ck_assert_msg(cpuset_has(plan->nodes, i % 2), "%s: vm%u not on node %u",
                                      policy_kind_to_string(kinds[k]), i, i % 2);
                }
        }
}
END_TEST

START_TEST(test_opteron_three_nodes)
{
        static const uint32_t m[64] = {
            10, 16, 16, 22, 16, 22, 16, 22, 16, 10, 22, 16, 16, 22, 22, 16, 16, 22, 10, 16, 16, 16,
            16, 16, 22, 16, 16, 10, 16, 16, 22, 22, 16, 16, 16, 16, 10, 16, 16, 22, 22, 22, 16, 16,
            16, 10, 22, 16, 16, 22, 16, 22, 16, 22, 10, 16, 22, 16, 16, 22, 22, 16, 16, 10,
        };
        g_autoptr(Topology) t = topology_new_uniform(8, 2, 2, 4 * GiB, m);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        /* 5 vCPUs need 3 nodes of 2 free cores; the winner has max distance 16 and the lowest mean */
        const Plan *plan = test_place(t, l, &p, "vm", 5, GiB);
        const PlanCandidate *chosen = NULL;

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(test_plan_node_count(plan), 3);
        for (unsigned i = 0; i < plan->candidates->len; i++) {
                const PlanCandidate *c = g_ptr_array_index(plan->candidates, i);
                if (c->chosen)
                        chosen = c;
        }
        ck_assert_ptr_nonnull(chosen);
        ck_assert_uint_eq(chosen->max_distance, 16);
        ck_assert_double_le(chosen->mean_distance, 14.0 + 1e-9);
        ck_assert_uint_eq(test_max_per_core(t, plan), 1);
}
END_TEST

START_TEST(test_l3_neighbours)
{
        /* one node, two L3 groups of 4 cores; with core 0 taken, 4 vCPUs fit whole in the second group */
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        for (unsigned c = 0; c < 8; c++)
                t->cores[c].l3 = c / 4;
        t->nl3 = 2;
        test_place(t, l, &p, "small", 1, GiB);
        const Plan *plan = test_place(t, l, &p, "vm", 4, GiB);
        for (unsigned v = 0; v < 4; v++)
                ck_assert_uint_eq(t->cores[t->pus[plan->vcpu_pu[v]].core].l3, 1);
        /* the next 3 fill the first group exactly (best fit) */
        plan = test_place(t, l, &p, "vm2", 3, GiB);
        for (unsigned v = 0; v < 3; v++)
                ck_assert_uint_eq(t->cores[t->pus[plan->vcpu_pu[v]].core].l3, 0);
}
END_TEST

START_TEST(test_pin_modes)
{
        g_autoptr(Topology) t = host_2x16x2();
        PlacementParams p = test_params(POLICY_EXPLICIT);
        {
                g_autoptr(Ledger) l = ledger_new(t);
                p.vcpu_pin = VCPU_PIN_THREAD;
                const Plan *plan = test_place(t, l, &p, "vm", 4, GiB);
                for (unsigned v = 0; v < 4; v++)
                        ck_assert_uint_eq(cpuset_count(plan->vcpu_pins[v]), 1);
                /* emulator on the idle siblings of its own cores */
                ck_assert_uint_eq(cpuset_count(plan->emulator_pin), 4);
                for (unsigned v = 0; v < 4; v++)
                        ck_assert(!cpuset_intersects(plan->emulator_pin, plan->vcpu_pins[v]));
        }
        {
                g_autoptr(Ledger) l = ledger_new(t);
                p.vcpu_pin = VCPU_PIN_NODESET;
                const Plan *plan = test_place(t, l, &p, "vm", 4, GiB);
                for (unsigned v = 0; v < 4; v++)
                        ck_assert(cpuset_equal(plan->vcpu_pins[v], t->nodes[0].cpus));
        }
        {
                g_autoptr(Ledger) l = ledger_new(t);
                p.vcpu_pin = VCPU_PIN_CORE;
                p.emulator_pin = EMULATOR_PIN_NONE;
                const Plan *plan = test_place(t, l, &p, "vm", 4, GiB);
                ck_assert(cpuset_is_empty(plan->emulator_pin));
        }
}
END_TEST

START_TEST(test_emulator_never_on_other_domains)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        p.emulator_pin = EMULATOR_PIN_NODESET;
        const Plan *a = test_place(t, l, &p, "a", 2, GiB);
        const Plan *b = test_place(t, l, &p, "b", 1, GiB);
        for (unsigned v = 0; v < a->nvcpus; v++)
                ck_assert(!cpuset_intersects(b->emulator_pin, a->vcpu_pins[v]));
        ck_assert(!cpuset_is_empty(b->emulator_pin));
}
END_TEST

START_TEST(test_reserved_cpus_and_memory)
{
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) reserved = NULL;
        ck_assert_int_eq(cpuset_parse("0-1,32-33", &reserved, NULL), 0);
        p.reserved_cpus = reserved;
        p.memory_reserve = 60 * GiB;

        /* 15 free cores per node after the reservation; 8 GiB needs both nodes' 4 GiB */
        const Plan *plan = test_place(t, l, &p, "vm", 15, 8 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(test_plan_node_count(plan), 2);
        for (unsigned v = 0; v < plan->nvcpus; v++)
                ck_assert(!cpuset_intersects(plan->vcpu_pins[v], reserved));
        ck_assert(!cpuset_intersects(plan->emulator_pin, reserved));
        ck_assert_uint_le(ledger_node_memory(l, 0), 4 * GiB);
        ck_assert_uint_le(ledger_node_memory(l, 1), 4 * GiB);
        /* nothing left: memory fits nowhere */
        plan = test_place(t, l, &p, "more", 1, GiB);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
}
END_TEST

/* CPUs no domain can run on now (offline, or out of the guests' cgroup) get no vCPU and no emulator,
 * housekeeping CPUs among them included, and a core with one is not a whole free core. */
START_TEST(test_unavailable_cpus)
{
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) gone = NULL, housekeeping = NULL;
        ck_assert_int_eq(cpuset_parse("0-15,32", &gone, NULL), 0);
        ck_assert_int_eq(cpuset_parse("32", &housekeeping, NULL), 0);
        p.unavailable_cpus = gone;
        p.housekeeping_cpus = housekeeping;

        /* node 0 keeps 8 of its 16 cores, node 1 15 whole ones and a half one: 16 vCPUs take both */
        const Plan *plan = test_place(t, l, &p, "vm", 16, 8 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        for (unsigned v = 0; v < plan->nvcpus; v++)
                ck_assert_msg(!cpuset_intersects(plan->vcpu_pins[v], gone), "%s", plan->reason);
        ck_assert(!cpuset_is_empty(plan->emulator_pin));
        ck_assert_msg(!cpuset_intersects(plan->emulator_pin, gone), "%s", plan->reason);
}
END_TEST

START_TEST(test_all_cpus_reserved)
{
        /* With every CPU reserved and memory to spare, the reason names the CPUs, not memory. */
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) reserved = NULL;
        ck_assert_int_eq(cpuset_parse("0-63", &reserved, NULL), 0);
        p.reserved_cpus = reserved;

        const Plan *plan = test_place(t, l, &p, "vm", 2, GiB);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(plan->reason, "ReservedCPUs=0-63") != NULL, "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "memory") == NULL, "%s", plan->reason);
}
END_TEST

/* A host a little short of the memory asked for (a 2 GiB VM whose firmware keeps 390 KiB): the reason
 * shows the free memory so that it reads below what was asked, not "2.0 GiB" for both. */
START_TEST(test_short_memory_said)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 2147074048, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        const Plan *plan = test_place(t, l, &p, "vm", 2, 2 * GiB);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(plan->reason, "no node set has 2.0 GiB of free memory (2047.6 MiB free on the "
                                           "whole host)") != NULL,
                      "%s", plan->reason);
        /* a figure that rounds apart from the request stays in its own unit */
        plan = test_place(t, l, &p, "big", 2, 3 * GiB);
        ck_assert_msg(strstr(plan->reason, "no node set has 3.0 GiB of free memory (2.0 GiB free on the "
                                           "whole host)") != NULL,
                      "%s", plan->reason);
}
END_TEST

/* Free memory just below a unit's edge (1 KiB short of 1 GiB) reads "1024.0 MiB" in its own unit, which is
 * 1.0 GiB: the reason gives it in the unit that shows it short. */
START_TEST(test_short_memory_at_unit_edge_said)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, GiB - 1024, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        const Plan *plan = test_place(t, l, &p, "vm", 2, GiB);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(plan->reason, "no node set has 1.0 GiB of free memory (1048575.0 KiB free on "
                                           "the whole host)") != NULL,
                      "%s", plan->reason);
}
END_TEST

/* A guest its definition binds to an HBM node, unplaceable (every CPU reserved): its memory is on node 1
 * by that binding, not by MemoryTiers= (empty), and the reason does not say it is. */
START_TEST(test_bound_hbm_unplaceable_said)
{
        g_autofree char *path = test_topology_path("hbm-no-slit.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(CpuSet) reserved = NULL, node1 = NULL;
        g_autoptr(Plan) plan = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm",
                                .vcpus = 2,
                                .memory = GiB / 2,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        l = ledger_new(t);
        ck_assert_int_eq(cpuset_parse("0-3", &reserved, NULL), 0);
        ck_assert_int_eq(cpuset_parse("1", &node1, NULL), 0);
        p.reserved_cpus = reserved;
        req.memory_nodes = node1;
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(plan->reason, "binds its memory to node 1 (strict)"), "%s", plan->reason);
        ck_assert_msg(!strstr(plan->reason, "MemoryTiers="), "%s", plan->reason);
}
END_TEST

/* A guest whose <numatune> names only a node outside the allowed memory nodes, whose CPUs are outside
 * the allowed CPUs too (disallowed-socket.xml: the guests' cgroup keeps them to socket 0): under
 * preferred it runs on socket 0 with its memory there, and is placed so; it was unplaceable, "no usable
 * CPU of this host lies inside its constraints", though it has none. */
START_TEST(test_bound_to_disallowed_node)
{
        g_autofree char *path = test_topology_path("disallowed-socket.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(CpuSet) node1 = NULL, socket0 = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm",
                                .vcpus = 2,
                                .memory = GiB / 2,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_PREFERRED};

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        l = ledger_new(t);
        ck_assert_int_eq(cpuset_parse("1", &node1, NULL), 0);
        ck_assert_int_eq(cpuset_parse("0-3", &socket0, NULL), 0);
        req.memory_nodes = node1;
        for (int strict = 0; strict <= 1; strict++) {
                g_autoptr(Plan) plan = NULL;
                req.memory_mode = strict ? MEMORY_MODE_STRICT : MEMORY_MODE_PREFERRED;
                plan = policy_place(t, l, &req, &p);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                for (unsigned v = 0; v < plan->nvcpus; v++) {
                        g_autoptr(CpuSet) off = cpuset_copy(plan->vcpu_pins[v]);
                        cpuset_subtract(off, socket0);
                        ck_assert(!cpuset_is_empty(plan->vcpu_pins[v]) && cpuset_is_empty(off));
                }
                ck_assert_msg(!strstr(plan->reason, "no usable CPU"), "%s", plan->reason);
                /* preferred falls back to node 0: its free memory is said, not node 1's 0 B */
                ck_assert_msg(strict ||
                                  strstr(plan->reason, "free on node 0, where it is counted, for 512.0 MiB"),
                              "%s", plan->reason);
        }
}
END_TEST

START_TEST(test_huge_reserve)
{
        /* MemoryReserve= near 2^64 leaves no memory, even beside memory domains hold (no wrap-around). */
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        ck_assert_int_eq(test_place(t, l, &p, "a", 2, GiB)->result, PLAN_PLACED);
        p.memory_reserve = UINT64_MAX;
        const Plan *plan = test_place(t, l, &p, "b", 2, GiB);
        ck_assert_msg(plan->result == PLAN_UNPLACEABLE, "%s", plan->reason);
}
END_TEST

START_TEST(test_overcommit)
{
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        test_place(t, l, &p, "a", 24, 8 * GiB);
        const Plan *plan = test_place(t, l, &p, "b", 16, 8 * GiB);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        /* 8 free cores remain: 8 vCPUs get them, the other 8 share cores */
        ck_assert_uint_eq(plan->shared_vcpus, 8 + 0);
        ck_assert_ptr_nonnull(strstr(plan->reason, "share a core"));
        for (unsigned v = 0; v < plan->nvcpus; v++)
                ck_assert_int_ge(plan->vcpu_pu[v], 0);
        /* a host full twice over still gets plans */
        plan = test_place(t, l, &p, "c", 64, GiB);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(plan->shared_vcpus, 64);
}
END_TEST

static void adopt_on(const Topology *t, Ledger *l, const char *name, unsigned cpu)
{
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = name, .vcpus = 1, .memory = 0};
        g_autoptr(CpuSet) pin = cpuset_new();
        CpuSet *pins[1] = {pin};
        cpuset_add(pin, cpu);
        ck_assert_int_eq(ledger_commit(l, name, policy_adopt(t, l, &req, pins, &p)), 0);
}

START_TEST(test_overcommit_does_not_stack_itself)
{
        /* 2 single-thread cores: core 1 holds two vCPUs, core 0 one. A 2-vCPU domain takes core 0 first;
         * then both cores hold two, and its second vCPU goes to core 1 rather than onto its own first. */
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        adopt_on(t, l, "x", 1);
        adopt_on(t, l, "y", 1);
        adopt_on(t, l, "z", 0);
        const Plan *plan = test_place(t, l, &p, "d", 2, GiB);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(t->pus[plan->vcpu_pu[0]].core, 0);
        ck_assert_uint_eq(t->pus[plan->vcpu_pu[1]].core, 1);
        ck_assert_uint_eq(ledger_core_load(l, 0), 2);
        ck_assert_uint_eq(ledger_core_load(l, 1), 3);
}
END_TEST

START_TEST(test_overcommit_full_host_stays_near)
{
        /* Every core taken: sharing is unavoidable, so a 4-vCPU domain stays on one node (4 cores of it)
         * instead of spreading over the host for nothing. */
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);

        test_place(t, l, &p, "fill", 8, GiB);
        const Plan *plan = test_place(t, l, &p, "late", 4, GiB);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(test_plan_node_count(plan), 1);
        ck_assert_uint_eq(test_max_per_core(t, plan), 1);
        ck_assert_uint_eq(plan->shared_vcpus, 4);
}
END_TEST

START_TEST(test_absurd_requests)
{
        g_autoptr(Topology) t = host_2x16x2();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *plan;

        plan = test_place(t, l, &p, "zero", 0, GiB);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        plan = test_place(t, l, &p, "huge-mem", 2, UINT64_C(1) << 40);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_ptr_nonnull(strstr(plan->reason, "1.0 TiB"));
        for (unsigned v = 0; v < plan->nvcpus; v++)
                ck_assert(cpuset_is_empty(plan->vcpu_pins[v]));
        plan = test_place(t, l, &p, "many", 4096, GiB);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        plan = test_place(t, l, &p, "too-many", 1u << 30, GiB);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_uint_eq(plan->requested_vcpus, 1u << 30);
        plan = test_place(t, l, &p, "max-mem", 1, UINT64_MAX);
        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ledger_release(l, "many");
        plan = test_place(t, l, &p, "no-mem", 1, 0);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ledger_release(l, "zero");
        ledger_release(l, "huge-mem");
        ledger_release(l, "too-many");
        ledger_release(l, "max-mem");
        ledger_release(l, "no-mem");
        ck_assert(ledger_is_empty(l));
}
END_TEST

START_TEST(test_memory_only_node)
{
        /* tests/topologies/memory-only.xml: nodes 0 and 1 with 2 cores and 1.9 GiB each, node 2 with
         * 7.5 GiB and no CPUs (CXL-like). A domain larger than a CPU node's memory borrows node 2's. */
        g_autofree char *path = test_topology_path("memory-only.xml");
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        int mem_node;

        ck_assert_int_eq(topology_load(path, &t, NULL), 0);
        mem_node = topology_node_by_os(t, 2);
        ck_assert_int_ge(mem_node, 0);
        ck_assert_uint_eq(t->nodes[mem_node].ncores, 0);
        l = ledger_new(t);
        const Plan *plan = test_place(t, l, &p, "vm", 2, 4 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert(cpuset_has(plan->nodes, (unsigned)mem_node));
        ck_assert_uint_gt(plan->node_memory[mem_node], 0);
        {
                uint64_t sum = 0;
                for (unsigned n = 0; n < t->nnodes; n++) {
                        sum += plan->node_memory[n];
                        ck_assert_uint_le(plan->node_memory[n], t->nodes[n].memory);
                }
                ck_assert_uint_eq(sum, 4 * GiB);
        }
        for (unsigned v = 0; v < 2; v++)
                ck_assert_uint_ne(t->cores[t->pus[plan->vcpu_pu[v]].core].node, (unsigned)mem_node);
        ck_assert_uint_eq(test_max_per_core(t, plan), 1);
}
END_TEST

/* tests/topologies/asym-memory-only.xml: node 0 with the cores reaches memory-only node 2 at 20 and node
 * 1 at 30; their own rows say 30 and 20 back. A domain beyond node 0's memory borrows node 2's: the
 * distance from the CPUs to the memory is what the vCPUs pay, the other way runs no vCPU. */
START_TEST(test_asymmetric_memory_only_distances)
{
        g_autofree char *path = test_topology_path("asym-memory-only.xml");
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        int near, far;

        ck_assert_int_eq(topology_load(path, &t, NULL), 0);
        near = topology_node_by_os(t, 2);
        far = topology_node_by_os(t, 1);
        ck_assert_int_ge(near, 0);
        ck_assert_int_ge(far, 0);
        l = ledger_new(t);
        const Plan *plan = test_place(t, l, &p, "vm", 4, 32 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(plan->node_memory[near] > 0 && plan->node_memory[far] == 0, "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "max distance 20"), "%s", plan->reason);
}
END_TEST

/* On a host of 68 nodes (no mask index above 16: a set is kept whole) filled by domains of 1 to 20 vCPUs
 * until it overcommits, each plan names only nodes that hold a vCPU or memory of it, and VCPUPin=nodeset
 * pins its vCPUs to those nodes' CPUs alone, not to busy nodes of the set it has nothing on. */
START_TEST(test_plan_nodes_hold_something)
{
        static const VcpuPinMode modes[] = {VCPU_PIN_CORE, VCPU_PIN_NODESET};
        g_autofree char *path = test_topology_path("big-68-nodes.xml");

        for (unsigned k = 0; k < G_N_ELEMENTS(kinds_all); k++)
                for (unsigned m = 0; m < G_N_ELEMENTS(modes); m++) {
                        g_autoptr(Topology) t = NULL;
                        g_autoptr(Ledger) l = NULL;
                        PlacementParams p = test_params(kinds_all[k]);

                        ck_assert_int_eq(topology_load(path, &t, NULL), 0);
                        l = ledger_new(t);
                        p.vcpu_pin = modes[m];
                        for (unsigned d = 0; d < 60; d++) {
                                g_autofree char *name = g_strdup_printf("d%u", d);
                                const Plan *plan =
                                    test_place(t, l, &p, name, 1 + (d * 7) % 20, (1 + d % 5) * GiB);
                                g_autoptr(CpuSet) used = cpuset_new();
                                g_autoptr(CpuSet) cpus = cpuset_new();

                                if (plan->result == PLAN_UNPLACEABLE)
                                        continue;
                                for (unsigned i = 0; i < plan->nvcpus; i++) {
                                        cpuset_add(used, t->cores[t->pus[plan->vcpu_pu[i]].core].node);
                                        cpuset_union(cpus, plan->vcpu_pins[i]);
                                }
                                for (unsigned n = 0; n < t->nnodes; n++)
                                        if (plan->node_memory[n])
                                                cpuset_add(used, n);
                                ck_assert_msg(cpuset_equal(used, plan->nodes), "%s %s, %s: %s",
                                              policy_kind_to_string(kinds_all[k]),
                                              vcpu_pin_mode_to_string(modes[m]), name, plan->reason);
                                CPUSET_FOREACH (os, cpus) {
                                        int pu = topology_pu_by_os(t, (unsigned)os);
                                        ck_assert(pu >= 0);
                                        ck_assert_msg(
                                            cpuset_has(plan->nodes, t->cores[t->pus[pu].core].node),
                                            "%s: CPU %d pinned off its nodes: %s", name, os, plan->reason);
                                }
                        }
                }
}
END_TEST

START_TEST(test_overcommit_node_unreachable_from_itself)
{
        /* tests/topologies/distances-node1-unreachable.xml: two nodes of one core, node 1 unreachable
         * even from itself, so in no set. A request that overcommits stays on node 0; the set search's
         * sums cover the one reachable node only (read past them under ASan and valgrind before). */
        g_autofree char *path = test_topology_path("distances-node1-unreachable.xml");
        g_autoptr(Topology) t = NULL;

        ck_assert_int_eq(topology_load(path, &t, NULL), 0);
        for (PolicyKind k = POLICY_EXPLICIT; k <= POLICY_COMPAT; k++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(k);
                const Plan *plan = test_place(t, l, &p, "vm", 3, 256 << 20);
                ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
                ck_assert_uint_eq(cpuset_count(plan->nodes), 1);
                ck_assert(cpuset_has(plan->nodes, 0));
                for (unsigned v = 0; v < 3; v++)
                        ck_assert_uint_eq(t->cores[t->pus[plan->vcpu_pu[v]].core].node, 0);
        }
}
END_TEST

/* A domain of vcpus whose definition pins its emulator to emulator, placed on an empty host: placed. */
static Plan *place_emulator_pinned(const Topology *t, unsigned vcpus, const CpuSet *emulator)
{
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {
            .name = "d", .vcpus = vcpus, .memory = GiB, .keep_emulator = true, .emulator_cpus = emulator};
        Plan *plan = policy_place(t, l, &req, &p);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        return plan;
}

/* The user's own <emulatorpin> CPUs: the vCPUs take a node's other cores first, and that core only when
 * the node has no other (still placed, never pushed to another node for it) */
START_TEST(test_user_emulator_core_taken_last)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(CpuSet) emulator = NULL;

        ck_assert_int_eq(cpuset_parse("0-1", &emulator, NULL), 0);
        for (unsigned vcpus = 1; vcpus <= 4; vcpus++) {
                g_autoptr(Plan) plan = place_emulator_pinned(t, vcpus, emulator);
                unsigned on_core0 = 0;

                for (unsigned i = 0; i < plan->nvcpus; i++)
                        on_core0 += t->pus[plan->vcpu_pu[i]].core == 0;
                ck_assert_msg(on_core0 == (vcpus == 4), "%u vCPUs: %u on the emulator's core", vcpus,
                              on_core0);
        }
}
END_TEST

/* Doubling up, the vCPUs share any other core before the user's <emulatorpin> core takes a second vCPU
 * (explicit), and compat fills every other free CPU before the emulator's: 5-7 vCPUs on 4 cores leave
 * one vCPU on the emulator's core; compat's 8 PUs take 6 vCPUs before core 0 */
START_TEST(test_user_emulator_core_shared_last)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(CpuSet) emulator = NULL;

        ck_assert_int_eq(cpuset_parse("0-1", &emulator, NULL), 0);
        for (PolicyKind k = POLICY_EXPLICIT; k <= POLICY_COMPAT; k++)
                for (unsigned vcpus = 1; vcpus <= 8; vcpus++) {
                        g_autoptr(Ledger) l = ledger_new(t);
                        PlacementParams p = test_params(k);
                        PlacementRequest req = {.name = "d",
                                                .vcpus = vcpus,
                                                .memory = GiB,
                                                .keep_emulator = true,
                                                .emulator_cpus = emulator};
                        g_autoptr(Plan) plan = policy_place(t, l, &req, &p);
                        unsigned on_core0 = 0, want;

                        for (unsigned i = 0; i < plan->nvcpus; i++)
                                on_core0 += t->pus[plan->vcpu_pu[i]].core == 0;
                        if (k == POLICY_EXPLICIT)
                                want = vcpus < 4 ? 0 : vcpus < 8 ? 1 : 2;
                        else
                                want = vcpus > 6 ? vcpus - 6 : 0;
                        ck_assert_msg(on_core0 == want, "%s, %u vCPUs: %u on the emulator's core, want %u",
                                      policy_kind_to_string(k), vcpus, on_core0, want);
                }
}
END_TEST

/* ... and never at the cost of the core kind: on a hybrid host (4 P-cores, 8 E-cores) 4 vCPUs with the
 * emulator on P-core 0 still take the 4 P-cores, 3 vCPUs the 3 others */
START_TEST(test_user_emulator_core_keeps_the_kind)
{
        g_autofree char *path = test_topology_path("alder-lake.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(CpuSet) emulator = NULL;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        ck_assert_int_eq(cpuset_parse("0-1", &emulator, NULL), 0);
        for (unsigned vcpus = 3; vcpus <= 4; vcpus++) {
                g_autoptr(Plan) plan = place_emulator_pinned(t, vcpus, emulator);
                unsigned on_core0 = 0;

                for (unsigned i = 0; i < plan->nvcpus; i++) {
                        const TopoCore *core = &t->cores[t->pus[plan->vcpu_pu[i]].core];
                        ck_assert_msg(core->kind_rank == 0, "%u vCPUs: vCPU %u on an E-core", vcpus, i);
                        on_core0 += t->pus[plan->vcpu_pu[i]].core == 0;
                }
                ck_assert_uint_eq(on_core0, vcpus == 4);
        }
}
END_TEST

/* An E-core guest's emulator (E-cores have no sibling to take it) goes to the free E-cores, not over the
 * free P-core too, which a later guest's vCPU then shares: on a hybrid host (4 P-cores, 8 E-cores), 3
 * P-cores taken, a 4-vCPU guest takes an E-core module and 1 P-core stays free */
START_TEST(test_e_core_emulator_stays_off_p_cores)
{
        g_autofree char *path = test_topology_path("alder-lake.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(Plan) plan = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 3, .memory = GiB};
        PlacementRequest b = {.name = "b", .vcpus = 4, .memory = GiB};

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        l = ledger_new(t);
        ck_assert_int_eq(ledger_commit(l, "a", policy_place(t, l, &a, &p)), 0);
        plan = policy_place(t, l, &b, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        for (unsigned i = 0; i < plan->nvcpus; i++)
                ck_assert_msg(t->cores[t->pus[plan->vcpu_pu[i]].core].kind_rank == 1, "vCPU %u on a P-core",
                              i);
        ck_assert(!cpuset_is_empty(plan->emulator_pin));
        for (unsigned pu = 0; pu < t->npus; pu++)
                if (cpuset_has(plan->emulator_pin, t->pus[pu].os_index))
                        ck_assert_msg(t->cores[t->pus[pu].core].kind_rank == 1,
                                      "the emulator on P-core CPU %u", t->pus[pu].os_index);
}
END_TEST

/* No distance matrix, one socket of two clusters with DRAM and HBM each: a domain on the second cluster's
 * cores whose memory outgrows the DRAM left (the first cluster's mostly taken) takes the HBM beside those
 * cores, not the first cluster's. */
START_TEST(test_hbm_beside_its_cores_without_distances)
{
        g_autoptr(Topology) t = test_topology_load("hbm-no-slit.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) plan = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 2, .memory = 3 * GiB / 2};
        PlacementRequest b = {.name = "b", .vcpus = 2, .memory = 5 * GiB / 2};
        int own = topology_node_by_os(t, 3), other = topology_node_by_os(t, 1);

        ck_assert_int_eq(ledger_commit(l, "a", policy_place(t, l, &a, &p)), 0);
        plan = policy_place(t, l, &b, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        for (unsigned i = 0; i < plan->nvcpus; i++)
                ck_assert_uint_eq(t->nodes[t->cores[t->pus[plan->vcpu_pu[i]].core].node].os_index, 2);
        ck_assert_msg(own >= 0 && other >= 0 && plan->node_memory[own] > 0 && plan->node_memory[other] == 0,
                      "%s", plan->reason);
}
END_TEST

/* Two sockets of two nodes (SNC2: 12 inside a socket, 21 across), 8 cores each, free 8 / 2 / 8 / 2: a
 * 16-vCPU domain goes to nodes 0 and 2, 8 + 8, not to nodes 0-2. The ranking's mean assumes an even split
 * and a node near another lowers it ({0,1,2} 15.33 against {0,2} 15.50), but those would take 7 + 2 + 7,
 * 15.63 from their memory on average, and node 1's last two cores, which sent a later 2-vCPU domain
 * across the sockets. Where the split is even, the mean stands: on a host whose nodes take equal shares
 * the wider set keeps winning. */
START_TEST(test_uneven_split_narrowed)
{
        static const uint32_t snc2[16] = {10, 12, 21, 21, 12, 10, 21, 21, 21, 21, 10, 12, 21, 21, 12, 10};

        for (unsigned k = 0; k < G_N_ELEMENTS(kinds_all); k++) {
                g_autoptr(Topology) t = topology_new_uniform(4, 8, 2, 64 * GiB, snc2);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(kinds_all[k]);
                unsigned full = kinds_all[k] == POLICY_EXPLICIT ? 6 : 12; /* leaves 2 cores (4 CPUs) */
                const Plan *big, *small;
                g_autoptr(CpuSet) want = cpuset_new();
                unsigned vcpus = kinds_all[k] == POLICY_EXPLICIT ? 16 : 32;

                /* a node each: 8, 6, 8 and 6 cores taken (compat: threads, twice as many) */
                test_place(t, l, &p, "a", full + full / 3, 8 * GiB);
                test_place(t, l, &p, "b", full, 8 * GiB);
                test_place(t, l, &p, "c", full + full / 3, 8 * GiB);
                test_place(t, l, &p, "d", full, 8 * GiB);
                ledger_release(l, "a");
                ledger_release(l, "c");
                big = test_place(t, l, &p, "big", vcpus, 32 * GiB);
                cpuset_add(want, 0);
                cpuset_add(want, 2);
                ck_assert_msg(big->result == PLAN_PLACED && cpuset_equal(big->nodes, want), "%s: %s",
                              policy_kind_to_string(kinds_all[k]), big->reason);
                ck_assert_msg(strstr(big->reason, "fewer nodes than nodes 0-2"), "%s", big->reason);
                small = test_place(t, l, &p, "small", 2, 4 * GiB);
                ck_assert_msg(cpuset_count(small->nodes) == 1, "%s", small->reason);
        }
}
END_TEST

/* ... but not for a gain too small to be worth what it leaves free (8 vCPUs over free cores 3, 4, 4 and
 * 3: 2 + 3 + 3 on nodes 0-2 is 15.53 from its memory, 4 + 4 on nodes 1-2 15.50, which left three free cores
 * in each package's far corner and sent the next 4-vCPU domain across the packages), nor when it takes the
 * free core its emulator had on a host without SMT. */
START_TEST(test_uneven_split_kept)
{
        static const uint32_t snc2[16] = {10, 12, 21, 21, 12, 10, 21, 21, 21, 21, 10, 12, 21, 21, 12, 10};
        {
                g_autoptr(Topology) t = topology_new_uniform(4, 8, 2, 64 * GiB, snc2);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                const Plan *g, *h;
                g_autoptr(CpuSet) package1 = cpuset_new();

                test_place(t, l, &p, "a", 5, 4 * GiB);
                test_place(t, l, &p, "b", 4, 4 * GiB);
                test_place(t, l, &p, "c", 4, 4 * GiB);
                test_place(t, l, &p, "d", 5, 4 * GiB);
                g = test_place(t, l, &p, "g", 8, 8 * GiB);
                ck_assert_msg(cpuset_count(g->nodes) == 3 && !strstr(g->reason, "fewer nodes than"), "%s",
                              g->reason);
                h = test_place(t, l, &p, "h", 4, 4 * GiB);
                cpuset_add(package1, 2);
                cpuset_add(package1, 3);
                ck_assert_msg(cpuset_equal(h->nodes, package1), "%s", h->reason);
        }
        {
                /* split evenly, a set stands whatever its subsets give: two sockets of two nodes (12 inside,
                 * 32 across) with 4, 4, 0 and 8 free cores: 12 vCPUs go 4 + 4 + 4 over nodes 0-1,3, several
                 * nodes of one socket and one of the other, as the ranking's mean has them */
                static const uint32_t epyc[16] = {10, 12, 32, 32, 12, 10, 32, 32,
                                                  32, 32, 10, 12, 32, 32, 12, 10};
                g_autoptr(Topology) t = topology_new_uniform(4, 8, 2, 64 * GiB, epyc);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                g_autoptr(CpuSet) want = cpuset_new();
                const Plan *d;

                test_place(t, l, &p, "a", 4, 4 * GiB);
                test_place(t, l, &p, "b", 4, 4 * GiB);
                test_place(t, l, &p, "c", 8, 4 * GiB);
                d = test_place(t, l, &p, "d", 12, 12 * GiB);
                cpuset_add(want, 0);
                cpuset_add(want, 1);
                cpuset_add(want, 3);
                ck_assert_msg(cpuset_equal(d->nodes, want) && !strstr(d->reason, "fewer nodes than"), "%s",
                              d->reason);
        }
        {
                /* SMT off: 8, 2, 8 and 2 free cores; nodes 0,2 would have no core left for the emulator */
                g_autoptr(Topology) t = topology_new_uniform(4, 8, 1, 64 * GiB, snc2);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                const Plan *big;

                test_place(t, l, &p, "a", 8, 8 * GiB);
                test_place(t, l, &p, "b", 6, 8 * GiB);
                test_place(t, l, &p, "c", 8, 8 * GiB);
                test_place(t, l, &p, "d", 6, 8 * GiB);
                ledger_release(l, "a");
                ledger_release(l, "c");
                big = test_place(t, l, &p, "big", 16, 32 * GiB);
                ck_assert_msg(cpuset_count(big->nodes) == 3 && !cpuset_is_empty(big->emulator_pin), "%s",
                              big->reason);
                ck_assert_msg(!strstr(big->reason, "the emulator shares its own cores"), "%s", big->reason);
        }
}
END_TEST

static Suite *explicit_suite(void)
{
        Suite *s = suite_create("policy: explicit");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_user_emulator_core_taken_last);
        tcase_add_test(tc, test_user_emulator_core_shared_last);
        tcase_add_test(tc, test_user_emulator_core_keeps_the_kind);
        tcase_add_test(tc, test_e_core_emulator_stays_off_p_cores);
        tcase_add_test(tc, test_core_rule);
        tcase_add_test(tc, test_even_spread);
        tcase_add_test(tc, test_alternating_two_vcpu_vms);
        tcase_add_test(tc, test_opteron_three_nodes);
        tcase_add_test(tc, test_l3_neighbours);
        tcase_add_test(tc, test_pin_modes);
        tcase_add_test(tc, test_emulator_never_on_other_domains);
        tcase_add_test(tc, test_reserved_cpus_and_memory);
        tcase_add_test(tc, test_all_cpus_reserved);
        tcase_add_test(tc, test_huge_reserve);
        tcase_add_test(tc, test_short_memory_said);
        tcase_add_test(tc, test_short_memory_at_unit_edge_said);
        tcase_add_test(tc, test_bound_hbm_unplaceable_said);
        tcase_add_test(tc, test_bound_to_disallowed_node);
        tcase_add_test(tc, test_overcommit);
        tcase_add_test(tc, test_overcommit_does_not_stack_itself);
        tcase_add_test(tc, test_overcommit_full_host_stays_near);
        tcase_add_test(tc, test_absurd_requests);
        tcase_add_test(tc, test_memory_only_node);
        tcase_add_test(tc, test_unavailable_cpus);
        tcase_add_test(tc, test_asymmetric_memory_only_distances);
        tcase_add_test(tc, test_plan_nodes_hold_something);
        tcase_add_test(tc, test_overcommit_node_unreachable_from_itself);
        tcase_add_test(tc, test_hbm_beside_its_cores_without_distances);
        tcase_add_test(tc, test_uneven_split_narrowed);
        tcase_add_test(tc, test_uneven_split_kept);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(explicit_suite)
