/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-util.h"
#include "test-policy-util.h"
#include "topology-load.h"

START_TEST(test_siblings_shared)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 16, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        p.vcpu_pin = VCPU_PIN_THREAD;
        const Plan *plan = test_place(t, l, &p, "vm", 32, 8 * GiB);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(test_plan_node_count(plan), 1);
        ck_assert_uint_eq(test_max_per_core(t, plan), 2);
        ck_assert_uint_eq(plan->shared_vcpus, 32);
        /* fills both threads of a core before the next */
        ck_assert_int_eq(plan->vcpu_pu[0] + 1, plan->vcpu_pu[1]);
        ck_assert_uint_eq(t->pus[plan->vcpu_pu[0]].core, t->pus[plan->vcpu_pu[1]].core);
}
END_TEST

START_TEST(test_same_ranking_rules)
{
        /* With memory on one node short, compat spreads over two. */
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 4 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        const Plan *plan = test_place(t, l, &p, "vm", 2, 6 * GiB);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(test_plan_node_count(plan), 2);
}
END_TEST

START_TEST(test_overcommit_compat)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 4 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        const Plan *plan = test_place(t, l, &p, "vm", 6, GiB);
        unsigned max_load = 0;
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        for (unsigned pu = 0; pu < t->npus; pu++)
                max_load = MAX(max_load, ledger_pu_load(l, pu));
        ck_assert_uint_eq(max_load, 2); /* least loaded PUs first: 6 over 4 PUs */
}
END_TEST

/* A realtime vCPU's core is nobody else's while another has a free thread: a FIFO vCPU that spins starves
 * its sibling. With VCPUPin=thread the next domain took its idle sibling, with VCPUPin=core its very CPUs.
 */
START_TEST(test_realtime_core_not_shared)
{
        static const VcpuPinMode pins[] = {VCPU_PIN_THREAD, VCPU_PIN_CORE};

        for (unsigned k = 0; k < G_N_ELEMENTS(pins); k++) {
                g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 64 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementParams p = test_params(POLICY_COMPAT);
                PlacementRequest rt = {.name = "rt", .vcpus = 1, .memory = GiB, .realtime = true};
                const Plan *plan, *web;
                Plan *placed;

                p.vcpu_pin = pins[k];
                placed = policy_place(t, l, &rt, &p);
                ck_assert_int_eq(ledger_commit(l, "rt", placed), 0);
                plan = ledger_lookup(l, "rt");
                web = test_place(t, l, &p, "web", 3, GiB);
                ck_assert_int_eq(web->result, PLAN_PLACED);
                for (unsigned v = 0; v < web->nvcpus; v++)
                        ck_assert_msg(t->pus[web->vcpu_pu[v]].core != t->pus[plan->vcpu_pu[0]].core &&
                                          !cpuset_intersects(web->vcpu_pins[v], plan->vcpu_pins[0]),
                                      "pin %u: web vCPU %u on the realtime vCPU's core", k, v);
        }
}
END_TEST

/* A guest pinned by hand (Nova's or KubeVirt's dedicated vCPUs) chose its CPUs: compat, which fills the
 * free threads of cores in use before it breaks a whole core, takes the siblings beside such a guest only
 * when no core is free (they took the thread beside its vCPU or its isolated emulator while whole cores
 * stood free). Beside placementd's own domains it still fills half-used cores first. */
START_TEST(test_hand_pinned_siblings_last)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        PlacementRequest nova = {.name = "nova", .vcpus = 1, .memory = GiB};
        g_autoptr(CpuSet) pin = cpuset_new();
        CpuSet *pins[] = {pin};
        const Plan *b, *c, *d;

        cpuset_add(pin, t->pus[0].os_index);
        ck_assert_int_eq(ledger_commit(l, "nova", policy_adopt(t, l, &nova, pins, &p)), 0);
        b = test_place(t, l, &p, "b", 1, GiB);
        ck_assert_int_eq(b->result, PLAN_PLACED);
        ck_assert_int_ne(t->pus[b->vcpu_pu[0]].core, 0);
        /* beside b (placementd's own), the next odd vCPU fills b's core */
        c = test_place(t, l, &p, "c", 1, GiB);
        ck_assert_int_eq(t->pus[c->vcpu_pu[0]].core, t->pus[b->vcpu_pu[0]].core);
        /* the last whole core, then only then nova's sibling */
        d = test_place(t, l, &p, "d", 3, GiB);
        ck_assert_int_eq(d->result, PLAN_PLACED);
        ck_assert_int_eq(d->vcpu_pu[2], 1);
}
END_TEST

/* A domain placed under explicit (its policy=, or Policy= before a reload) was given a core to itself: a
 * domain placed under compat (its owner's policy="compat") takes the free sibling beside it only when no
 * core is free, as beside a guest pinned by hand, not as its first choice for an odd vCPU (it took the
 * thread beside the explicit domain's vCPU while whole cores stood free, putting two tenants on one core).
 */
START_TEST(test_explicit_siblings_last)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams explicit = test_params(POLICY_EXPLICIT);
        PlacementParams p = test_params(POLICY_COMPAT);
        const Plan *a, *b, *c, *d;

        a = test_place(t, l, &explicit, "a", 1, GiB);
        ck_assert_int_eq(a->result, PLAN_PLACED);
        b = test_place(t, l, &p, "b", 1, GiB);
        ck_assert_int_eq(b->result, PLAN_PLACED);
        ck_assert_msg(t->pus[b->vcpu_pu[0]].core != t->pus[a->vcpu_pu[0]].core,
                      "b (compat) put on the core of a (explicit) while two cores are free");
        /* beside b (compat itself), the next odd vCPU fills b's core */
        c = test_place(t, l, &p, "c", 1, GiB);
        ck_assert_int_eq(t->pus[c->vcpu_pu[0]].core, t->pus[b->vcpu_pu[0]].core);
        /* the last whole core, then only then a's sibling */
        d = test_place(t, l, &p, "d", 3, GiB);
        ck_assert_int_eq(d->result, PLAN_PLACED);
        ck_assert_uint_eq(t->pus[d->vcpu_pu[2]].core, t->pus[a->vcpu_pu[0]].core);
}
END_TEST

/* compat puts a vCPU on the free thread beside another domain's dedicated CPU when no core is free, and
 * counts nothing shared: VCPUPin=core then pins it to that free thread alone, not onto the other domain's
 * CPU. */
START_TEST(test_core_pin_keeps_off_another_domains_thread)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        PlacementRequest nova = {.name = "nova", .vcpus = 1, .memory = GiB};
        g_autoptr(CpuSet) pin = cpuset_new();
        CpuSet *pins[] = {pin};
        const Plan *b;

        cpuset_add(pin, t->pus[0].os_index);
        ck_assert_int_eq(ledger_commit(l, "nova", policy_adopt(t, l, &nova, pins, &p)), 0);
        ck_assert_int_eq(test_place(t, l, &p, "full", 2, GiB)->result, PLAN_PLACED); /* core 1 */
        b = test_place(t, l, &p, "b", 1, GiB);
        ck_assert_int_eq(b->result, PLAN_PLACED);
        ck_assert_int_eq(b->vcpu_pu[0], 1); /* no core free: the thread beside nova */
        ck_assert_msg(!cpuset_has(b->vcpu_pins[0], t->pus[0].os_index), "b pinned onto nova's CPU");
        ck_assert(cpuset_has(b->vcpu_pins[0], t->pus[1].os_index));
}
END_TEST

/*
 * EmulatorPin=nodeset is the set minus other domains' cores: of a core compat shares with another domain
 * (c's odd vCPU fills the half of a's core a left), only the threads that carry no vCPU of that domain.
 * On xeon-2s-smt (core 1 is CPUs 2-3) a's vCPU 2 runs on CPU 2 and c's vCPU 2 on CPU 3: c's emulator
 * gets CPU 3 and node 0's free cores, not CPU 2.
 */
START_TEST(test_nodeset_emulator_keeps_off_another_domains_thread)
{
        g_autoptr(Topology) t = test_topology_load("xeon-2s-smt.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        const Plan *c;

        p.emulator_pin = EMULATOR_PIN_NODESET;
        test_place(t, l, &p, "a", 3, GiB);
        test_place(t, l, &p, "b", 6, GiB);
        c = test_place(t, l, &p, "c", 3, GiB);
        ck_assert_int_eq(c->result, PLAN_PLACED);
        ck_assert(!cpuset_is_empty(c->emulator_pin));
        /* no CPU of the pin carries another domain's vCPU: the ledger now counts c's own too */
        for (unsigned pu = 0; pu < t->npus; pu++) {
                bool own = false;
                for (unsigned v = 0; v < c->nvcpus; v++)
                        own = own || c->vcpu_pu[v] == (int)pu;
                if (cpuset_has(c->emulator_pin, t->pus[pu].os_index))
                        ck_assert_msg(own || ledger_pu_load(l, pu) == 0,
                                      "emulator on CPU %u, another domain's", t->pus[pu].os_index);
        }
        ck_assert(!cpuset_has(c->emulator_pin, 2));
        ck_assert(cpuset_has(c->emulator_pin, 3));
        ck_assert(cpuset_has(c->emulator_pin, 15));
}
END_TEST

/* The PU indexes of the plan's vCPUs, in vCPU order, as "a,b,c". */
static char *plan_pus(const Plan *plan)
{
        GString *s = g_string_new(NULL);
        for (unsigned v = 0; v < plan->nvcpus; v++)
                g_string_append_printf(s, "%s%d", v ? "," : "", plan->vcpu_pu[v]);
        return g_string_free(s, FALSE);
}

START_TEST(test_fills_half_used_cores)
{
        /* 1 node x 4 cores x 2 threads; core 3 half used (PU 6), cores 0-2 whole. Like kubelet's static
         * policy, compat takes whole cores for pairs of vCPUs and a thread beside a busy one for the odd
         * vCPU, before it breaks a whole core. */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 16 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_COMPAT);
        g_autofree char *one = NULL, *three = NULL, *last = NULL;

        test_place(t, l, &p, "a", 6, GiB);
        ck_assert_int_eq(test_place(t, l, &p, "b", 1, GiB)->vcpu_pu[0], 6);
        ck_assert_int_eq(ledger_release(l, "a"), 0);

        one = plan_pus(test_place(t, l, &p, "c", 1, GiB));
        ck_assert_str_eq(one, "7");
        ck_assert_int_eq(ledger_release(l, "c"), 0);
        three = plan_pus(test_place(t, l, &p, "d", 3, GiB));
        ck_assert_str_eq(three, "0,1,7");
        /* no half-used core left: the odd vCPU breaks the next whole core */
        last = plan_pus(test_place(t, l, &p, "e", 1, GiB));
        ck_assert_str_eq(last, "2");
}
END_TEST

/* CoreKinds=performance-first holds for compat too: on GB10, whose efficiency cores come first by number,
 * 4 then 3 vCPUs take performance cores while ten are free. */
START_TEST(test_performance_cores_first)
{
        g_autofree char *path = test_topology_path("gb10.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        PlacementParams p = test_params(POLICY_COMPAT);

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        ck_assert_uint_gt(t->cores[0].kind_rank, 0); /* the first cores are the efficient ones */
        l = ledger_new(t);
        for (unsigned vcpus = 4; vcpus >= 3; vcpus--) {
                const Plan *plan = test_place(t, l, &p, vcpus == 4 ? "a" : "b", vcpus, GiB);
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        ck_assert_msg(t->cores[t->pus[plan->vcpu_pu[i]].core].kind_rank == 0,
                                      "%u vCPUs: vCPU %u on a less performant core", vcpus, i);
        }
}
END_TEST

static Suite *compat_suite(void)
{
        Suite *s = suite_create("policy: compat");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_siblings_shared);
        tcase_add_test(tc, test_same_ranking_rules);
        tcase_add_test(tc, test_overcommit_compat);
        tcase_add_test(tc, test_fills_half_used_cores);
        tcase_add_test(tc, test_realtime_core_not_shared);
        tcase_add_test(tc, test_core_pin_keeps_off_another_domains_thread);
        tcase_add_test(tc, test_hand_pinned_siblings_last);
        tcase_add_test(tc, test_explicit_siblings_last);
        tcase_add_test(tc, test_nodeset_emulator_keeps_off_another_domains_thread);
        tcase_add_test(tc, test_performance_cores_first);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(compat_suite)
