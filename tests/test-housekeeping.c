/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the emulator and I/O threads go (EmulatorPin=siblings): the idle siblings of the domain's own
 * cores, else the housekeeping CPUs (HousekeepingCPUs=, by default ReservedCPUs=), else the free cores of
 * its node set, and its own vCPU cores only when nothing else is left, which the reason says. I/O threads
 * go where the emulator goes, except those the user pins (<cputune><iothreadpin>).
 */
#include <string.h>

#include "test-util.h"
#include "test-policy-util.h"

static CpuSet *set_of(const char *list)
{
        CpuSet *s = NULL;
        ck_assert_int_eq(cpuset_parse(list, &s, NULL), 0);
        return s;
}

static Plan *place(const Topology *t, Ledger *l, const PlacementParams *p, const PlacementRequest *req)
{
        Plan *plan = policy_place(t, l, req, p);
        ck_assert_int_eq(ledger_commit(l, req->name, plan), 0);
        return (Plan *)ledger_lookup(l, req->name);
}

static void assert_set(const CpuSet *s, const char *want)
{
        g_autofree char *got = cpuset_format(s);
        ck_assert_str_eq(got, want);
}

/* No vCPU of plan on any CPU of s. */
static void assert_off_vcpus(const Plan *plan, const CpuSet *s)
{
        for (unsigned v = 0; v < plan->nvcpus; v++)
                ck_assert_msg(!cpuset_intersects(s, plan->vcpu_pins[v]), "vCPU %u shares with the emulator",
                              v);
}

static const PolicyKind kinds[] = {POLICY_EXPLICIT, POLICY_COMPAT};

START_TEST(test_no_smt_reserved_cpus_take_the_emulator)
{
        /* 2 nodes x 4 cores, no SMT: CPU 0 reserved, so the default housekeeping set is {0} */
        for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) reserved = set_of("0");
                PlacementParams p = test_params(kinds[k]);
                PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB};
                const Plan *plan;

                p.reserved_cpus = reserved;
                plan = place(t, l, &p, &req);
                ck_assert_int_eq(plan->result, PLAN_PLACED);
                assert_set(plan->emulator_pin, "0");
                assert_off_vcpus(plan, plan->emulator_pin);
                ck_assert_ptr_null(strstr(plan->reason, "its own cores"));
        }
}
END_TEST

START_TEST(test_housekeeping_cpus_setting)
{
        /* HousekeepingCPUs= wins over ReservedCPUs=; on the domain's nodes first, else anywhere */
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) reserved = set_of("0,7");
        g_autoptr(CpuSet) near = set_of("3,7");
        g_autoptr(CpuSet) far = set_of("0");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 2, .memory = GiB};
        PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB};
        const Plan *plan;

        p.reserved_cpus = reserved;
        p.housekeeping_cpus = near;
        plan = place(t, l, &p, &a);
        ck_assert(cpuset_has(plan->nodes, 0) && cpuset_count(plan->nodes) == 1);
        assert_set(plan->emulator_pin, "3");
        assert_off_vcpus(plan, plan->emulator_pin);

        /* none on node 1, where b goes: the one on node 0 */
        p.housekeeping_cpus = far;
        plan = place(t, l, &p, &b);
        ck_assert(cpuset_has(plan->nodes, 1) && cpuset_count(plan->nodes) == 1);
        assert_set(plan->emulator_pin, "0");
}
END_TEST

START_TEST(test_housekeeping_never_on_vcpus)
{
        /* a housekeeping CPU another domain runs a vCPU on is not used; nor one outside <vcpu cpuset> */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) housekeeping = set_of("0,3");
        g_autoptr(CpuSet) allowed = set_of("1-2");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 1, .memory = GiB};
        PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB, .allowed_cpus = allowed};
        const Plan *pa, *pb;

        p.housekeeping_cpus = housekeeping;
        pa = place(t, l, &p, &a);
        assert_set(pa->vcpu_pins[0], "0"); /* not reserved: vCPUs may take it */
        assert_set(pa->emulator_pin, "3");
        pb = place(t, l, &p, &b);
        assert_set(pb->vcpu_pins[0], "1");
        /* 0 holds a's vCPU, 3 is outside the cpuset: the free core inside it */
        assert_set(pb->emulator_pin, "2");
}
END_TEST

START_TEST(test_no_housekeeping_free_cores_of_the_set)
{
        /* HousekeepingCPUs= empty and nothing reserved: the set's free cores, not its own */
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB};
        const Plan *plan = place(t, l, &p, &req);

        ck_assert(cpuset_has(plan->nodes, 0) && cpuset_count(plan->nodes) == 1);
        assert_set(plan->emulator_pin, "2-3");
        assert_off_vcpus(plan, plan->emulator_pin);
}
END_TEST

START_TEST(test_own_cores_only_when_nothing_else)
{
        /* one node of 2 cores without SMT, nothing reserved, a domain fills it: its own cores, said */
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB};
        const Plan *plan = place(t, l, &p, &req);

        assert_set(plan->emulator_pin, "0-1");
        ck_assert_msg(strstr(plan->reason,
                             "the emulator shares its own cores: no idle sibling, housekeeping "
                             "CPU or free core of its nodes is left"),
                      "%s", plan->reason);
}
END_TEST

START_TEST(test_idle_siblings_first)
{
        /* with SMT the idle siblings of its own cores come before the housekeeping CPUs */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) reserved = set_of("6-7");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB};
        const Plan *plan;

        p.reserved_cpus = reserved;
        plan = place(t, l, &p, &req);
        assert_set(plan->emulator_pin, "1,3");
        /* compat fills both threads: no idle sibling, so the housekeeping CPUs */
        p.policy = POLICY_COMPAT;
        req.name = "compat";
        plan = place(t, l, &p, &req);
        assert_set(plan->emulator_pin, "6-7");
}
END_TEST

START_TEST(test_iothreads_follow_the_emulator)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) reserved = set_of("0");
        g_autoptr(CpuSet) iothreads = set_of("1-3");
        g_autoptr(CpuSet) kept = set_of("2");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 2, .memory = GiB, .iothreads = iothreads};
        const Plan *plan;

        p.reserved_cpus = reserved;
        plan = place(t, l, &p, &req);
        assert_set(plan->iothreads, "1-3");
        assert_set(plan->iothread_pin, "0");
        ck_assert(cpuset_equal(plan->iothread_pin, plan->emulator_pin));

        /* the user's <iothreadpin> and <emulatorpin> stand: the others still get pinned */
        ledger_release(l, "vm");
        req.kept_iothreads = kept;
        req.keep_emulator = true;
        plan = place(t, l, &p, &req);
        assert_set(plan->iothreads, "1,3");
        assert_set(plan->iothread_pin, "0");
        ck_assert(cpuset_is_empty(plan->emulator_pin));
        ck_assert_msg(strstr(plan->reason, "I/O thread 2 stays where <cputune><iothreadpin> puts it"), "%s",
                      plan->reason);

        /* EmulatorPin=none leaves them all alone */
        ledger_release(l, "vm");
        p.emulator_pin = EMULATOR_PIN_NONE;
        plan = place(t, l, &p, &req);
        ck_assert(cpuset_is_empty(plan->iothreads) && cpuset_is_empty(plan->iothread_pin));
}
END_TEST

/* The user's <emulatorpin> on a core of another node (CPU 0), kept for QEMU's threads and held for them: the
 * domain's vCPUs fill the cores of their node, no sibling, housekeeping CPU or free core is left there. Its
 * I/O threads go to the CPU its definition keeps for QEMU's threads, not onto its own vCPUs' cores (they
 * went there, the reason saying no CPU was left, while CPU 0 sat idle, held for them). */
START_TEST(test_iothreads_join_the_users_emulator_cpus)
{
        for (unsigned vcpus = 1; vcpus <= 4; vcpus *= 4) {
                g_autoptr(Topology) t = topology_new_uniform(2, vcpus, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) iothreads = set_of("1-2");
                g_autoptr(CpuSet) emulator = set_of("0");
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest req = {.name = "vm",
                                        .vcpus = vcpus,
                                        .memory = GiB,
                                        .iothreads = iothreads,
                                        .keep_emulator = true,
                                        .emulator_cpus = emulator};
                const Plan *plan = place(t, l, &p, &req);

                ck_assert_msg(plan->result == PLAN_PLACED && !cpuset_has(plan->nodes, 0), "%s",
                              plan->reason);
                assert_set(plan->iothreads, "1-2");
                assert_set(plan->iothread_pin, "0");
                assert_off_vcpus(plan, plan->iothread_pin);
                ck_assert(cpuset_is_empty(plan->emulator_pin));
                ck_assert_msg(!strstr(plan->reason, "share its own cores"), "%s", plan->reason);

                /* the user's pin on the core its vCPU must take (a host of one core) is no place apart:
                 * its own cores, said */
                if (vcpus == 1) {
                        g_autoptr(Topology) one = topology_new_uniform(1, 1, 1, 8 * GiB, NULL);
                        g_autoptr(Ledger) lo = ledger_new(one);
                        plan = place(one, lo, &p, &req);
                        assert_set(plan->iothread_pin, "0");
                        ck_assert_msg(strstr(plan->reason, "its I/O threads share its own cores"), "%s",
                                      plan->reason);
                }
        }
}
END_TEST

START_TEST(test_unplaceable_pins_nothing)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) iothreads = set_of("1");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "vm", .vcpus = 1, .memory = 4 * GiB, .iothreads = iothreads};
        const Plan *plan = place(t, l, &p, &req);

        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert(cpuset_is_empty(plan->iothreads) && cpuset_is_empty(plan->emulator_pin));
}
END_TEST

/* The plan pins its emulator, and on none of the CPUs its vCPUs are pinned to. */
static void assert_emulator_off_own_cpus(const Plan *plan)
{
        g_autoptr(CpuSet) own = cpuset_new();

        for (unsigned i = 0; i < plan->nvcpus; i++)
                cpuset_union(own, plan->vcpu_pins[i]);
        ck_assert(!cpuset_is_empty(plan->emulator_pin));
        CPUSET_FOREACH (cpu, plan->emulator_pin)
                ck_assert_msg(!cpuset_has(own, (unsigned)cpu),
                              "emulator on CPU %d of a realtime vCPU's core: %s", cpu, plan->reason);
}

/* Realtime vCPUs (<vcpusched scheduler='fifo'>): the emulator never goes to an SMT sibling of their cores,
 * idle or not; the set's free cores take it */
START_TEST(test_realtime_vcpus_keep_their_cores)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {.name = "rt", .vcpus = 2, .memory = GiB, .realtime = true};
        const Plan *plan = place(t, l, &p, &rt);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        assert_emulator_off_own_cpus(plan);
}
END_TEST

/* Without SMT, an ordinary guest's emulator goes to free cores; a realtime guest that later gets those
 * cores (the last free ones) runs FIFO vCPUs where that emulator is pinned, and its own emulator beside the
 * other guest's vCPUs. Neither was said. */
START_TEST(test_realtime_over_another_emulator_said)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 2, .memory = GiB};
        PlacementRequest rt = {.name = "rt", .vcpus = 2, .memory = GiB, .realtime = true};
        const Plan *first = place(t, l, &p, &a), *plan;

        ck_assert_int_eq(first->result, PLAN_PLACED);
        ck_assert_msg(cpuset_count(first->emulator_pin) == 2, "a's emulator on its set's free cores");
        plan = place(t, l, &p, &rt);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        assert_emulator_off_own_cpus(plan);
        ck_assert_msg(strstr(plan->reason,
                             "beside another domain's vCPUs: its set has no core left without a "
                             "realtime vCPU"),
                      "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason,
                             "realtime vCPUs on CPUs 2-3, where a's emulator or I/O threads are "
                             "pinned too: they may be starved"),
                      "%s", plan->reason);
}
END_TEST

/* A realtime domain that fills its node: the emulator goes to the nearest core of another node, not to
 * the FIFO vCPUs' own cores (with no free core in the set it took them, and the reason said none was left)
 */
START_TEST(test_realtime_emulator_off_its_full_node)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {.name = "rt", .vcpus = 4, .memory = GiB, .realtime = true};
        const Plan *plan = place(t, l, &p, &rt);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        assert_emulator_off_own_cpus(plan);
        ck_assert_msg(!strstr(plan->reason, "its own cores"), "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "of node 1: its set has no core left without a realtime vCPU"),
                      "%s", plan->reason);
}
END_TEST

/* Only some vCPUs realtime (<vcpusched vcpus='1-7'>, Nova's realtime mask): the emulator goes beside the
 * others, on the idle sibling of vCPU 0's core, not to another node; only the realtime vCPUs' cores are
 * counted realtime. Without SMT it shares vCPU 0's core, as Nova puts it, rather than leave the node. */
START_TEST(test_partly_realtime_emulator_beside_the_others)
{
        for (unsigned threads = 2; threads >= 1; threads--) {
                g_autoptr(Topology) t = topology_new_uniform(2, 8, threads, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) ids = NULL;
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest rt = {
                    .name = "rt", .vcpus = 8, .memory = GiB, .realtime = true, .realtime_vcpus = ids};
                const Plan *plan;
                unsigned rt_cores = 0, node = 0;

                cpuset_parse("1-7", &ids, NULL);
                rt.realtime_vcpus = ids;
                plan = place(t, l, &p, &rt);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                node = t->cores[t->pus[plan->vcpu_pu[0]].core].node;
                CPUSET_FOREACH (cpu, plan->emulator_pin) {
                        int pu = topology_pu_by_os(t, (unsigned)cpu);
                        ck_assert_msg(t->cores[t->pus[pu].core].node == node &&
                                          t->pus[pu].core == t->pus[plan->vcpu_pu[0]].core,
                                      "threads %u: emulator on CPU %d, not beside vCPU 0: %s", threads, cpu,
                                      plan->reason);
                }
                ck_assert(!cpuset_is_empty(plan->emulator_pin));
                for (unsigned c = 0; c < t->ncores; c++)
                        rt_cores += ledger_core_realtime(l, c) > 0;
                ck_assert_uint_eq(rt_cores, 7);
                ck_assert_msg(!strstr(plan->reason, "realtime vCPU"), "%s", plan->reason);
        }
        {
                /* busy host-side threads take a core of their own on another node: that is the load
                 * rule's doing, not the realtime one's, and the reason says only the load rule's */
                g_autoptr(Topology) t = topology_new_uniform(2, 8, 2, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) ids = NULL;
                g_autofree double *pu_busy = g_new0(double, t->npus);
                double busy[8] = {1, 1, 1, 1, 1, 1, 1, 1};
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest rt = {.name = "rt",
                                       .vcpus = 8,
                                       .memory = GiB,
                                       .realtime = true,
                                       .vcpu_busy = busy,
                                       .host_busy = 1.5,
                                       .pu_busy = pu_busy};
                const Plan *plan;

                cpuset_parse("1-7", &ids, NULL);
                rt.realtime_vcpus = ids;
                plan = place(t, l, &p, &rt);
                ck_assert_msg(!strstr(plan->reason, "no core left without a realtime vCPU"), "%s",
                              plan->reason);
        }
}
END_TEST

/* Busy host-side threads of a later domain never go beside a realtime vCPU measured idle: a FIFO vCPU
 * that spins starves what shares its core */
START_TEST(test_busy_threads_keep_off_realtime_cores)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        static const double busy[] = {1, 1};
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {.name = "rt", .vcpus = 1, .memory = GiB, .realtime = true},
                         b = {.name = "b",
                              .vcpus = 2,
                              .memory = GiB,
                              .vcpu_busy = busy,
                              .host_busy = 1.0,
                              .pu_busy = pu_busy};
        const Plan *r = place(t, l, &p, &rt);
        const Plan *plan = place(t, l, &p, &b);
        unsigned rt_core = t->pus[r->vcpu_pu[0]].core;

        CPUSET_FOREACH (cpu, plan->emulator_pin)
                ck_assert_msg(t->pus[topology_pu_by_os(t, (unsigned)cpu)].core != rt_core,
                              "b's busy threads on CPU %d, beside the realtime vCPU: %s", cpu, plan->reason);
}
END_TEST

/* A later domain that must share takes any other core before a realtime vCPU's, busy-measured or not */
START_TEST(test_realtime_cores_shared_last)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 32 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const double idle[] = {0, 0, 0};
        for (unsigned round = 0; round < 2; round++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementRequest rt = {.name = "rt", .vcpus = 2, .memory = GiB, .realtime = true},
                                 other = {.name = "a",
                                          .vcpus = 3,
                                          .memory = GiB,
                                          .vcpu_busy = round ? idle : NULL};
                const Plan *r = place(t, l, &p, &rt), *a = place(t, l, &p, &other);
                g_autoptr(CpuSet) rt_cores = cpuset_new();

                ck_assert_int_eq(a->result, PLAN_OVERCOMMITTED);
                for (unsigned i = 0; i < r->nvcpus; i++)
                        cpuset_add(rt_cores, t->pus[r->vcpu_pu[i]].core);
                for (unsigned i = 0; i < a->nvcpus; i++)
                        ck_assert_msg(!cpuset_has(rt_cores, t->pus[a->vcpu_pu[i]].core),
                                      "round %u: vCPU %u of a shares a realtime vCPU's core", round, i);
                /* released, the cores are free again: the count follows the plans */
                ck_assert_int_eq(ledger_release(l, "rt"), 0);
                for (unsigned c = 0; c < t->ncores; c++)
                        ck_assert_uint_eq(ledger_core_realtime(l, c), 0);
        }
}
END_TEST

/* Between nodes too: a domain that must share goes to the node of ordinary vCPUs, not to the node of
 * realtime ones, measured or not (the set choice ignored the realtime cores) */
START_TEST(test_realtime_node_shared_last)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 32 * GiB, NULL);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        static const double idle[] = {0, 0};
        for (unsigned round = 0; round < 2; round++) {
                g_autoptr(Ledger) l = ledger_new(t);
                PlacementRequest rt = {.name = "rt", .vcpus = 4, .memory = GiB, .realtime = true},
                                 plain = {.name = "p", .vcpus = 4, .memory = GiB},
                                 q = {.name = "q",
                                      .vcpus = 2,
                                      .memory = GiB,
                                      .vcpu_busy = round ? idle : NULL};
                const Plan *r = place(t, l, &p, &rt), *o = place(t, l, &p, &plain), *a = place(t, l, &p, &q);
                unsigned rt_node = t->cores[t->pus[r->vcpu_pu[0]].core].node;

                ck_assert_int_eq(a->result, PLAN_OVERCOMMITTED);
                ck_assert(!cpuset_has(o->nodes, rt_node));
                ck_assert_msg(!cpuset_has(a->nodes, rt_node), "round %u: q shares the realtime node: %s",
                              round, a->reason);
        }
}
END_TEST

/* A host whose every core holds a realtime vCPU: a later domain must share realtime cores, and it shares
 * as few as it can, one vCPU a core over both nodes, not two a core on the nearest node (with no core
 * free of realtime vCPUs anywhere, the search counted every set as holding none, and the first node won) */
START_TEST(test_all_realtime_host_shared_least)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 32 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt0 = {.name = "rt0", .vcpus = 4, .memory = GiB, .realtime = true},
                         rt1 = {.name = "rt1", .vcpus = 4, .memory = GiB, .realtime = true},
                         q = {.name = "q", .vcpus = 6, .memory = GiB};
        const Plan *plan;
        g_autoptr(CpuSet) cores = cpuset_new();

        ck_assert_int_eq(place(t, l, &p, &rt0)->result, PLAN_PLACED);
        ck_assert_int_eq(place(t, l, &p, &rt1)->result, PLAN_PLACED);
        plan = place(t, l, &p, &q);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                unsigned c = t->pus[plan->vcpu_pu[i]].core;
                ck_assert_msg(!cpuset_has(cores, c), "vCPU %u of q on a core of another of its vCPUs: %s", i,
                              plan->reason);
                cpuset_add(cores, c);
        }
}
END_TEST

/* An all-realtime domain that fills the host: no core without a realtime vCPU is left, so the emulator
 * shares its FIFO vCPUs' cores, and the reason says they may starve it; a later ordinary domain that must
 * share those cores is told it shares them with another domain's realtime vCPUs. */
START_TEST(test_realtime_emulator_on_fifo_cores_said)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {.name = "rtall", .vcpus = 4, .memory = 4 * GiB, .realtime = true};
        PlacementRequest other = {.name = "other", .vcpus = 2, .memory = 2 * GiB};
        const Plan *plan = place(t, l, &p, &rt);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        assert_set(plan->emulator_pin, "0-3");
        ck_assert_msg(strstr(plan->reason, "the emulator shares its own cores, where its realtime (FIFO/RR) "
                                           "vCPUs run: no core without a realtime vCPU is left"),
                      "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "may starve it"), "%s", plan->reason);
        ck_assert_msg(
            !strstr(plan->reason, "no idle sibling, housekeeping CPU or free core of its nodes is left"),
            "%s", plan->reason);

        plan = place(t, l, &p, &other);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_msg(strstr(plan->reason, "2 vCPUs and the emulator share cores with realtime (FIFO/RR) "
                                           "vCPUs of another domain (rtall)"),
                      "%s", plan->reason);
}
END_TEST

/* The user's <emulatorpin> on one core of a two-core host, vCPU 0 or 1 realtime (Nova's realtime mask): the
 * ordinary vCPU takes the core the user keeps for the emulator, the realtime one the other (the realtime
 * vCPU went onto the emulator's CPU when it was the one left over, and a FIFO vCPU that spins starves
 * it). The pin is the user's: nothing pins the emulator. */
START_TEST(test_realtime_vcpu_off_the_users_emulator)
{
        for (unsigned rt = 0; rt < 2; rt++)
                for (unsigned cpu = 0; cpu < 2; cpu++) {
                        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
                        g_autoptr(Ledger) l = ledger_new(t);
                        g_autoptr(CpuSet) emulator = cpuset_new();
                        g_autoptr(CpuSet) ids = cpuset_new();
                        PlacementParams p = test_params(POLICY_EXPLICIT);
                        PlacementRequest req = {.name = "vm",
                                                .vcpus = 2,
                                                .memory = GiB,
                                                .keep_emulator = true,
                                                .emulator_cpus = emulator,
                                                .realtime = true,
                                                .realtime_vcpus = ids};
                        const Plan *plan;

                        cpuset_add(emulator, cpu);
                        cpuset_add(ids, rt);
                        plan = place(t, l, &p, &req);
                        ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                        ck_assert_msg(!cpuset_has(plan->vcpu_pins[rt], cpu) &&
                                          cpuset_has(plan->vcpu_pins[1 - rt], cpu),
                                      "realtime vCPU %u, emulator on CPU %u: %s", rt, cpu, plan->reason);
                        ck_assert(cpuset_is_empty(plan->emulator_pin));
                        ck_assert_msg(!strstr(plan->reason, "may starve"), "%s", plan->reason);
                }
}
END_TEST

/* Every vCPU realtime and no core left without one: a realtime vCPU takes the core of the user's
 * <emulatorpin>, or of its own <iothreadpin>, and the reason says that it may starve the thread pinned there
 * (it was not said at all); the pins stay the user's. */
START_TEST(test_realtime_vcpu_on_the_users_threads_said)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Ledger) l2 = ledger_new(t);
        g_autoptr(CpuSet) emulator = set_of("1");
        g_autoptr(CpuSet) iothreads = set_of("1-2");
        g_autoptr(CpuSet) kept = set_of("1");
        g_autoptr(GArray) pins = g_array_new(FALSE, TRUE, sizeof(IothreadPin));
        IothreadPin pin = {.id = 1, .cpus = set_of("0")};
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "rt",
                                .vcpus = 2,
                                .memory = GiB,
                                .keep_emulator = true,
                                .emulator_cpus = emulator,
                                .realtime = true};
        const Plan *plan = place(t, l, &p, &req);

        ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
        ck_assert(cpuset_is_empty(plan->emulator_pin));
        ck_assert_msg(strstr(plan->reason,
                             "; its realtime (FIFO/RR) vCPU 1 runs on CPU 1, where the user pins the "
                             "emulator: a realtime vCPU that spins may starve it"),
                      "%s", plan->reason);

        g_array_append_val(pins, pin);
        req.keep_emulator = false;
        req.emulator_cpus = NULL;
        req.iothreads = iothreads;
        req.kept_iothreads = kept;
        req.iothread_cpus = pins;
        plan = place(t, l2, &p, &req);
        ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason,
                             "; its realtime (FIFO/RR) vCPU 0 runs on CPU 0, where the user pins "
                             "I/O thread 1: a realtime vCPU that spins may starve it"),
                      "%s", plan->reason);
        cpuset_free(pin.cpus);
}
END_TEST

/* A realtime guest whose I/O thread runs FIFO too (<iothreadsched>) on a host of two one-core nodes, the
 * other core another domain's: the I/O thread goes beside that domain's vCPU rather than its own FIFO vCPU
 * (which would starve it), as any realtime guest's QEMU threads do, and the reason says it runs realtime
 * beside vCPUs it preempts (it did not); an ordinary I/O thread there is said as before. */
START_TEST(test_realtime_iothread_beside_vcpus_said)
{
        for (unsigned fifo = 0; fifo < 2; fifo++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 1, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) iothreads = set_of("1");
                g_autoptr(CpuSet) rt_iothreads = set_of("1");
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest a = {.name = "a", .vcpus = 1, .memory = GiB};
                PlacementRequest rt = {.name = "rt",
                                       .vcpus = 1,
                                       .memory = GiB,
                                       .realtime = true,
                                       .iothreads = iothreads,
                                       .realtime_iothreads = fifo ? rt_iothreads : NULL};
                const Plan *plan = place(t, l, &p, &a);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                plan = place(t, l, &p, &rt);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                assert_set(plan->iothread_pin, "0");
                ck_assert_msg(!strstr(plan->reason, "runs realtime (FIFO/RR)") == !fifo, "%s", plan->reason);
                if (fifo)
                        ck_assert_msg(strstr(plan->reason,
                                             "; its I/O thread 1 runs realtime (FIFO/RR) on CPU 0, "
                                             "where vCPUs of a run: it preempts them whenever it "
                                             "has work"),
                                      "%s", plan->reason);
        }
}
END_TEST

/* A guest whose emulator or I/O thread runs FIFO (<emulatorsched>, <iothreadsched>) on a host of one node of
 * two cores without SMT: its vCPU takes core 0 and placementd pins the FIFO thread onto core 1, the free
 * core of its node. That core is then no free one: a later guest's vCPU there would be preempted whenever
 * the thread has work, so it shares core 0 with the first guest's ordinary vCPU instead (it took CPU 1).
 * An ordinary emulator's core stays free for the next guest as before. */
START_TEST(test_realtime_threads_hold_their_core)
{
        for (unsigned kind = 0; kind < 3; kind++) {
                g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) iothreads = set_of("1");
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest a = {.name = "a",
                                      .vcpus = 1,
                                      .memory = GiB,
                                      .iothreads = kind == 2 ? iothreads : NULL,
                                      .realtime_emulator = kind == 1,
                                      .realtime_iothreads = kind == 2 ? iothreads : NULL};
                PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB};
                const Plan *plan = place(t, l, &p, &a);

                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                assert_set(plan->vcpu_pins[0], "0");
                assert_set(kind == 2 ? plan->iothread_pin : plan->emulator_pin, "1");
                ck_assert_uint_eq(ledger_core_realtime(l, 1), (kind ? 1u : 0u));
                ck_assert(ledger_core_free(l, 1) == !kind);
                plan = place(t, l, &p, &b);
                assert_set(plan->vcpu_pins[0], kind ? "0" : "1");
                ck_assert_int_eq(plan->result, kind ? PLAN_OVERCOMMITTED : PLAN_PLACED);
                ck_assert_int_eq(ledger_release(l, "a"), 0);
                ck_assert_int_eq(ledger_release(l, "b"), 0);
                ck_assert(ledger_is_empty(l));
                ck_assert_uint_eq(ledger_core_realtime(l, 1), 0);
        }
}
END_TEST

/* A domain that must take the core another domain's realtime emulator or I/O thread holds (one node of two
 * cores without SMT; the first guest's vCPU on CPU 0, its FIFO thread on CPU 1; the second guest's
 * <vcpu cpuset='1'> leaves it nowhere else): its reason names that domain, as it names another domain's
 * realtime vCPUs (it said nothing of them). One whose vCPU shares only the first guest's ordinary vCPU's
 * core is told nothing. */
START_TEST(test_beside_others_realtime_threads_said)
{
        for (unsigned kind = 1; kind < 3; kind++) {
                g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) iothreads = set_of("1");
                g_autoptr(CpuSet) one = set_of("1");
                PlacementParams p = test_params(POLICY_EXPLICIT);
                PlacementRequest a = {.name = "rt1",
                                      .vcpus = 1,
                                      .memory = GiB,
                                      .iothreads = kind == 2 ? iothreads : NULL,
                                      .realtime_emulator = kind == 1,
                                      .realtime_iothreads = kind == 2 ? iothreads : NULL};
                PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB, .allowed_cpus = one};
                PlacementRequest c = {.name = "c", .vcpus = 1, .memory = GiB};
                const Plan *plan = place(t, l, &p, &a);

                assert_set(kind == 2 ? plan->iothread_pin : plan->emulator_pin, "1");
                plan = place(t, l, &p, &b);
                assert_set(plan->vcpu_pins[0], "1");
                ck_assert_msg(strstr(plan->reason,
                                     "; 1 vCPU and the emulator share cores with realtime (FIFO/RR) "
                                     "emulator or I/O threads of another domain (rt1): they "
                                     "preempt them whenever they have work"),
                              "%s", plan->reason);
                ck_assert_msg(!strstr(plan->reason, "vCPUs of another domain"), "%s", plan->reason);
                ck_assert_int_eq(ledger_release(l, "b"), 0);
                plan = place(t, l, &p, &c);
                assert_set(plan->vcpu_pins[0], "0");
                ck_assert_msg(!strstr(plan->reason, "of another domain"), "%s", plan->reason);
        }
}
END_TEST

/* The user's own <emulatorpin cpuset='1'> of another domain, held for it: a realtime guest kept on CPU 1 by
 * its <vcpu cpuset> is told its FIFO vCPU may starve that emulator, as it is for one placementd pinned
 * there (it was told nothing). */
START_TEST(test_realtime_over_users_held_emulator_said)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) emulator = set_of("1");
        g_autoptr(CpuSet) one = set_of("1");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {
            .name = "a", .vcpus = 1, .memory = GiB, .keep_emulator = true, .emulator_cpus = emulator};
        PlacementRequest rt = {
            .name = "rt", .vcpus = 1, .memory = GiB, .realtime = true, .allowed_cpus = one};
        const Plan *plan = place(t, l, &p, &a);
        g_autofree char *gone = NULL;

        ck_assert(cpuset_has(plan->held_pus, 1));
        plan = place(t, l, &p, &rt);
        assert_set(plan->vcpu_pins[0], "1");
        ck_assert_msg(strstr(plan->reason,
                             "; realtime vCPUs on CPU 1, where a's emulator or I/O threads are "
                             "pinned too: they may be starved"),
                      "%s", plan->reason);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        gone = policy_realtime_neighbours_anew(t, l, &p, "rt", plan);
        ck_assert_msg(!strstr(gone, "a's emulator"), "%s", gone);
}
END_TEST

/* A realtime guest called name (written so in a reason) on CPU 0, and an ordinary one, b, kept on that CPU
 * too: b's reason names it while it runs, word for word when said anew, and says nothing of it once it
 * left, the rest of the reason as it was. */
static void assert_neighbour_said_anew(const char *name, const char *written)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) zero = set_of("0");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {
            .name = name, .vcpus = 1, .memory = GiB, .realtime = true, .allowed_cpus = zero};
        PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB, .allowed_cpus = zero};
        const Plan *plan;
        g_autofree char *note =
            g_strdup_printf("; 1 vCPU and the emulator share cores with realtime (FIFO/RR) "
                            "vCPUs of another domain (%s): a realtime vCPU that spins may "
                            "starve them",
                            written);
        g_autofree char *same = NULL, *gone = NULL, *head = NULL, *named = g_strdup_printf("(%s)", written);

        place(t, l, &p, &rt);
        plan = place(t, l, &p, &b);
        assert_set(plan->vcpu_pins[0], "0");
        ck_assert_msg(strstr(plan->reason, note), "%s", plan->reason);
        same = policy_realtime_neighbours_anew(t, l, &p, "b", plan);
        ck_assert_str_eq(same, plan->reason);
        head = g_strndup(plan->reason, (gsize)(strstr(plan->reason, note) - plan->reason));
        ck_assert_int_eq(ledger_release(l, name), 0);
        gone = policy_realtime_neighbours_anew(t, l, &p, "b", plan);
        ck_assert_msg(!strstr(gone, named) && !strstr(gone, "FIFO/RR"), "%s", gone);
        ck_assert_msg(g_str_has_prefix(gone, head), "%s\nwas\n%s", gone, plan->reason);
        ck_assert_str_eq(gone, head);
}

/* Without SMT, an ordinary guest called name (written so in a reason) whose emulator is on the free cores a
 * realtime guest takes later: the realtime guest's reason names it while it runs, word for word when said
 * anew, and says nothing of it once it left; what it says of its own emulator stays. */
static void assert_over_threads_said_anew(const char *name, const char *written)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = name, .vcpus = 2, .memory = GiB};
        PlacementRequest rt = {.name = "rt", .vcpus = 2, .memory = GiB, .realtime = true};
        const Plan *plan;
        g_autofree char *note =
            g_strdup_printf("where %s's emulator or I/O threads are pinned too", written);
        g_autofree char *whose = g_strdup_printf("%s's emulator", written);
        g_autofree char *same = NULL, *gone = NULL;

        place(t, l, &p, &a);
        plan = place(t, l, &p, &rt);
        ck_assert_msg(strstr(plan->reason, note), "%s", plan->reason);
        same = policy_realtime_neighbours_anew(t, l, &p, "rt", plan);
        ck_assert_str_eq(same, plan->reason);
        ck_assert_int_eq(ledger_release(l, name), 0);
        gone = policy_realtime_neighbours_anew(t, l, &p, "rt", plan);
        ck_assert_msg(!strstr(gone, whose) && !strstr(gone, "may be starved"), "%s", gone);
        ck_assert_msg(strstr(gone, "its set has no core left without a realtime vCPU"), "%s", gone);
}

/* What a reason says of other domains' realtime vCPUs and threads beside the plan names domains that may
 * leave: said anew for the ledger as it is (policy_realtime_neighbours_anew()), the note goes with the last
 * of them and stays word for word while they run; what else the reason says stays. */
START_TEST(test_realtime_neighbours_said_anew)
{
        assert_neighbour_said_anew("rt", "rt");
}
END_TEST

/* Domain names are the user's: one that reads like the notes' own words (a realtime neighbour named after
 * the note on another's threads, or after its end) is written with "(", ")", ";" and "," as \xNN, and
 * said and dropped as any other, the rest of the reason as it was; so is an ordinary guest so named whose
 * emulator a realtime guest's vCPUs sit on. */
START_TEST(test_realtime_neighbour_named_like_a_note)
{
        static const char *const names[][2] = {
            {"realtime vCPUs on CPU 3, where x's emulator or I/O threads are pinned too: they may be "
             "starved "
             "(HousekeepingCPUs= keeps QEMU's threads apart)",
             "realtime vCPUs on CPU 3\\x2c where x's emulator or I/O threads are pinned too: they may be "
             "starved \\x28HousekeepingCPUs= keeps QEMU's threads apart\\x29"},
            {"x): a realtime vCPU that spins may starve them; y",
             "x\\x29: a realtime vCPU that spins may starve them\\x3b y"},
            {"z (FIFO/RR) vCPUs of another domain (", "z \\x28FIFO/RR\\x29 vCPUs of another domain \\x28"},
        };

        for (unsigned k = 0; k < G_N_ELEMENTS(names); k++) {
                assert_neighbour_said_anew(names[k][0], names[k][1]);
                assert_over_threads_said_anew(names[k][0], names[k][1]);
        }
}
END_TEST

/* Without SMT, an ordinary guest's emulator on free cores that a realtime guest takes later: the realtime
 * guest's reason names it while it runs, and says nothing of it once it left. */
START_TEST(test_realtime_over_others_threads_said_anew)
{
        assert_over_threads_said_anew("a", "a");
}
END_TEST

/* The same two guests: the ordinary one placed first, its emulator on the free cores the realtime guest
 * takes later. The earlier guest's reason, said anew, tells that its emulator may now be starved and by
 * whom, word for word while nothing changes, and says no more of it once the realtime guest left. */
START_TEST(test_realtime_arrival_said_to_the_earlier)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 2, .memory = GiB};
        PlacementRequest rt = {.name = "rt", .vcpus = 2, .memory = GiB, .realtime = true};
        Plan *plan;
        g_autofree char *before = NULL, *now = NULL, *again = NULL, *gone = NULL;

        plan = place(t, l, &p, &a);
        before = g_strdup(plan->reason);
        ck_assert_msg(!strstr(before, "FIFO/RR"), "%s", before);
        place(t, l, &p, &rt);
        now = policy_realtime_neighbours_anew(t, l, &p, "a", plan);
        ck_assert_msg(g_str_has_prefix(now, before), "%s\nwas\n%s", now, before);
        ck_assert_msg(strstr(now + strlen(before),
                             "; the emulator shares cores with realtime (FIFO/RR) vCPUs of "
                             "another domain (rt): a realtime vCPU that spins may "
                             "starve it"),
                      "%s", now);
        g_free(plan->reason);
        plan->reason = g_strdup(now);
        again = policy_realtime_neighbours_anew(t, l, &p, "a", plan);
        ck_assert_str_eq(again, now);
        ck_assert_int_eq(ledger_release(l, "rt"), 0);
        gone = policy_realtime_neighbours_anew(t, l, &p, "a", plan);
        ck_assert_str_eq(gone, before);
}
END_TEST

/* The user's own <emulatorpin cpuset='1'> of an emulator that runs FIFO (<emulatorsched>): CPU 1 is held
 * for it, and counted as a realtime thread's core, as the core placementd pins such an emulator to is (it
 * was held as an ordinary emulator's). */
START_TEST(test_users_realtime_emulator_core_counts_realtime)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) emulator = set_of("1");
        g_autoptr(CpuSet) one = set_of("1");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "rt1",
                              .vcpus = 1,
                              .memory = GiB,
                              .keep_emulator = true,
                              .emulator_cpus = emulator,
                              .realtime_emulator = true};
        PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB, .allowed_cpus = one};
        const Plan *plan = place(t, l, &p, &a);

        assert_set(plan->vcpu_pins[0], "0");
        ck_assert(cpuset_has(plan->held_pus, 1));
        ck_assert_uint_eq(ledger_core_realtime(l, 1), 1);
        plan = place(t, l, &p, &b);
        assert_set(plan->vcpu_pins[0], "1");
        ck_assert_msg(strstr(plan->reason, "cores with realtime (FIFO/RR) emulator or I/O threads of "
                                           "another domain (rt1)"),
                      "%s", plan->reason);
        ck_assert_int_eq(ledger_release(l, "b"), 0);
        ck_assert_int_eq(ledger_release(l, "rt1"), 0);
        ck_assert(ledger_is_empty(l));
        ck_assert_uint_eq(ledger_core_realtime(l, 1), 0);

        /* an ordinary emulator the user pins there is held, not realtime */
        a.realtime_emulator = false;
        place(t, l, &p, &a);
        ck_assert_uint_eq(ledger_pu_held(l, 1), 1);
        ck_assert_uint_eq(ledger_core_realtime(l, 1), 0);
}
END_TEST

/* A busy guest's busy host-side threads get a core of their own (load_pick_emulator()) on a node of four
 * cores without SMT: the next guest's vCPU takes one of the cores left truly free, not theirs (it took
 * theirs, the first free core in order); the last free cores of a node are taken all the same. */
START_TEST(test_others_threads_core_taken_last)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        static const double busy[] = {0.9};
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 1, .memory = GiB, .vcpu_busy = busy, .host_busy = 0.4};
        PlacementRequest b = {.name = "b", .vcpus = 1, .memory = GiB};
        PlacementRequest c = {.name = "c", .vcpus = 2, .memory = GiB};
        const Plan *pa = place(t, l, &p, &a), *plan;
        g_autoptr(CpuSet) threads = NULL;

        ck_assert_msg(pa->result == PLAN_PLACED, "%s", pa->reason);
        ck_assert_uint_eq(cpuset_count(pa->emulator_pin), 1);
        assert_off_vcpus(pa, pa->emulator_pin);
        threads = cpuset_copy(pa->emulator_pin);
        ck_assert_uint_eq(ledger_core_threads(l, (unsigned)cpuset_next(threads, 0)), 1);
        plan = place(t, l, &p, &b);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_msg(!cpuset_intersects(plan->vcpu_pins[0], threads), "%s", plan->reason);
        /* two vCPUs, one truly free core left: the threads' core is taken as a free one */
        ck_assert_int_eq(ledger_release(l, "b"), 0);
        plan = place(t, l, &p, &c);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_int_eq(ledger_release(l, "c"), 0);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        ck_assert(ledger_is_empty(l));
        ck_assert_uint_eq(ledger_core_threads(l, (unsigned)cpuset_next(threads, 0)), 0);
}
END_TEST

static Suite *housekeeping_suite(void)
{
        Suite *s = suite_create("housekeeping");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_no_smt_reserved_cpus_take_the_emulator);
        tcase_add_test(tc, test_housekeeping_cpus_setting);
        tcase_add_test(tc, test_housekeeping_never_on_vcpus);
        tcase_add_test(tc, test_no_housekeeping_free_cores_of_the_set);
        tcase_add_test(tc, test_own_cores_only_when_nothing_else);
        tcase_add_test(tc, test_iothreads_join_the_users_emulator_cpus);
        tcase_add_test(tc, test_realtime_vcpu_off_the_users_emulator);
        tcase_add_test(tc, test_realtime_vcpu_on_the_users_threads_said);
        tcase_add_test(tc, test_realtime_iothread_beside_vcpus_said);
        tcase_add_test(tc, test_realtime_threads_hold_their_core);
        tcase_add_test(tc, test_beside_others_realtime_threads_said);
        tcase_add_test(tc, test_users_realtime_emulator_core_counts_realtime);
        tcase_add_test(tc, test_others_threads_core_taken_last);
        tcase_add_test(tc, test_idle_siblings_first);
        tcase_add_test(tc, test_iothreads_follow_the_emulator);
        tcase_add_test(tc, test_unplaceable_pins_nothing);
        tcase_add_test(tc, test_realtime_vcpus_keep_their_cores);
        tcase_add_test(tc, test_busy_threads_keep_off_realtime_cores);
        tcase_add_test(tc, test_partly_realtime_emulator_beside_the_others);
        tcase_add_test(tc, test_realtime_cores_shared_last);
        tcase_add_test(tc, test_realtime_node_shared_last);
        tcase_add_test(tc, test_realtime_emulator_off_its_full_node);
        tcase_add_test(tc, test_realtime_over_another_emulator_said);
        tcase_add_test(tc, test_realtime_neighbours_said_anew);
        tcase_add_test(tc, test_realtime_neighbour_named_like_a_note);
        tcase_add_test(tc, test_realtime_over_others_threads_said_anew);
        tcase_add_test(tc, test_realtime_arrival_said_to_the_earlier);
        tcase_add_test(tc, test_realtime_over_users_held_emulator_said);
        tcase_add_test(tc, test_realtime_emulator_on_fifo_cores_said);
        tcase_add_test(tc, test_all_realtime_host_shared_least);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(housekeeping_suite)
