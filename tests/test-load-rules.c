/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Load where it decides: busy vCPUs and busy host threads first when cores are short, nothing else. */
#include "test-util.h"
#include "load.h"
#include "test-policy-util.h"
#include "load-rules.h"
#include "overcommit.h"
#include "topology-load.h"

#include <string.h>

/* Commits a plan for name with vCPUs on the given PUs (a domain placed earlier). */
static void hold(const Topology *t, Ledger *l, const char *name, unsigned n, const unsigned *pus)
{
        Plan *p = plan_new(name, n, GiB, t->nnodes);
        for (unsigned i = 0; i < n; i++) {
                p->vcpu_pu[i] = (int)pus[i];
                cpuset_add(p->vcpu_pins[i], t->pus[pus[i]].os_index);
                cpuset_add(p->nodes, t->cores[t->pus[pus[i]].core].node);
        }
        p->result = PLAN_PLACED;
        ck_assert_int_eq(ledger_commit(l, name, p), 0);
}

static unsigned core_of(const Topology *t, const Plan *p, unsigned vcpu)
{
        ck_assert_int_ge(p->vcpu_pu[vcpu], 0);
        return t->pus[p->vcpu_pu[vcpu]].core;
}

/* Places c (nvcpus, measured vcpu_busy) on one node of single-PU cores beside an idle domain holding the
 * first nheld cores (pu_busy as measured): it must be overcommitted. */
static Plan *place_beside_idle(unsigned ncores, unsigned nheld, const double *pu_busy,
                               const double *vcpu_busy, unsigned nvcpus, Topology **ret_t)
{
        Topology *t = topology_new_uniform(1, ncores, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree unsigned *held = g_new(unsigned, nheld);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {
            .name = "c", .vcpus = nvcpus, .memory = GiB, .vcpu_busy = vcpu_busy, .pu_busy = pu_busy};
        Plan *plan;

        for (unsigned i = 0; i < nheld; i++)
                held[i] = i;
        hold(t, l, "idle", nheld, held);
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        *ret_t = t;
        return plan;
}

START_TEST(test_busy_get_own_cores_when_short)
{
        /* 4 single-PU cores; an idle domain holds cores 0 and 1; c has 4 vCPUs, 0 and 2 busy */
        g_autoptr(Topology) t = NULL;
        double idle_pus[] = {0.05, 0.05, 0, 0}, c_busy[] = {0.9, 0.1, 0.8, 0.0};
        g_autoptr(Plan) plan = place_beside_idle(4, 2, idle_pus, c_busy, 4, &t);

        /* the busy ones take the free cores, each its own; the idle ones share the idle domain's */
        ck_assert_uint_ge(core_of(t, plan, 0), 2);
        ck_assert_uint_ge(core_of(t, plan, 2), 2);
        ck_assert_uint_ne(core_of(t, plan, 0), core_of(t, plan, 2));
        ck_assert_uint_lt(core_of(t, plan, 1), 2);
        ck_assert_uint_lt(core_of(t, plan, 3), 2);
        ck_assert_ptr_nonnull(strstr(plan->reason, "by measured load: "));
}
END_TEST

/* Cores short, every vCPU idle: the free core is taken before anything shares (no vCPU shares a core a
 * free core could have taken), and the one left over shares with the idle domain. Seen on a real host:
 * both idle vCPUs went beside the idle guest and left the other CPU free. */
START_TEST(test_idle_take_free_core_before_sharing)
{
        /* 2 single-PU cores; an idle domain holds core 0; c's 2 vCPUs are idle */
        g_autoptr(Topology) t = NULL;
        double pu_busy[] = {0.02, 0}, c_idle[] = {0.03, 0.01};
        g_autoptr(Plan) plan = place_beside_idle(2, 1, pu_busy, c_idle, 2, &t);

        ck_assert_uint_ne(core_of(t, plan, 0), core_of(t, plan, 1));
        ck_assert_uint_eq(plan->shared_vcpus, 1);
}
END_TEST

/* ... and when its memory is bound to a node whose only core another domain holds: the other node's free
 * core is taken before its vCPUs crowd beside that domain's (a binding confines memory, not vCPUs), busy
 * or idle, with load measured as without it. Busy, both went beside the busy neighbour, three busy vCPUs
 * on one core while the other node's sat free: the plan beyond the binding, both on the free core,
 * shared as many cores. Two nodes of one single-PU core, as a 2-CPU host split in two. */
START_TEST(test_bound_take_free_core_beyond_binding)
{
        static const struct {
                const char *what;
                double pu0, vcpu[2];
                bool measured;
        } cases[] = {{"busy", 1.0, {0.93, 0.91}, true},
                     {"idle", 0.02, {0.03, 0.01}, true},
                     {"load not measured", 0, {0, 0}, false}};

        for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
                g_autoptr(Topology) t = topology_new_uniform(2, 1, 1, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) nodes = cpuset_new();
                PlacementParams p = test_params(POLICY_EXPLICIT);
                unsigned other_pus[] = {0}, on1 = 0;
                double pu_busy[] = {cases[k].pu0, 0}, vcpu_busy[] = {cases[k].vcpu[0], cases[k].vcpu[1]};
                PlacementRequest req = {.name = "c",
                                        .vcpus = 2,
                                        .memory = GiB,
                                        .memory_nodes = nodes,
                                        .memory_source = MEMORY_SOURCE_BOUND,
                                        .memory_mode = MEMORY_MODE_STRICT,
                                        .vcpu_busy = cases[k].measured ? vcpu_busy : NULL,
                                        .pu_busy = cases[k].measured ? pu_busy : NULL};
                g_autoptr(Plan) plan = NULL;

                cpuset_add(nodes, 0);
                hold(t, l, "other", 1, other_pus);
                plan = policy_place(t, l, &req, &p);
                ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
                for (unsigned v = 0; v < plan->nvcpus; v++)
                        on1 += core_of(t, plan, v) == 1;
                ck_assert_msg(on1 >= 1, "%s: %s", cases[k].what, plan->reason);
                ck_assert_uint_eq(plan->node_memory[0], GiB);
                ck_assert(plan->keep_memory);
        }
}
END_TEST

START_TEST(test_busy_avoid_busy_cores)
{
        /* cores 0-1 run a busy domain, cores 2-3 an idle one; a busy 2-vCPU domain shares the idle's */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned busy_pus[] = {0, 1}, idle_pus[] = {2, 3};
        double pu_busy[] = {1, 1, 0.1, 0.1}, c_busy[] = {1, 1};
        PlacementRequest req = {
            .name = "c", .vcpus = 2, .memory = GiB, .vcpu_busy = c_busy, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL;

        hold(t, l, "busy", 2, busy_pus);
        hold(t, l, "idle", 2, idle_pus);
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_ge(core_of(t, plan, 0), 2);
        ck_assert_uint_ge(core_of(t, plan, 1), 2);
        /* unknown load (every vCPU busy): today's rule, the lowest cores */
        req.vcpu_busy = NULL;
        req.pu_busy = NULL;
        g_clear_pointer(&plan, plan_free);
        plan = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(core_of(t, plan, 0), 0);
}
END_TEST

/* With room for every vCPU, load changes nothing: the same plan as without it. */
START_TEST(test_free_cores_unchanged)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double busy[] = {0.0, 1.0, 0.2, 0.9, 0.0};
        g_autofree double *pu_busy = g_new0(double, t->npus);
        PlacementRequest with = {
            .name = "d", .vcpus = 5, .memory = GiB, .vcpu_busy = busy, .host_busy = 0.2, .pu_busy = pu_busy};
        PlacementRequest without = {.name = "d", .vcpus = 5, .memory = GiB};
        g_autoptr(Plan) a = NULL;
        g_autoptr(Plan) b = NULL;

        test_place(t, l, &p, "x", 3, GiB);
        a = policy_place(t, l, &with, &p);
        b = policy_place(t, l, &without, &p);
        ck_assert_int_eq(a->result, PLAN_PLACED);
        ck_assert_uint_eq(a->shared_vcpus, 0);
        for (unsigned i = 0; i < 5; i++)
                ck_assert_int_eq(a->vcpu_pu[i], b->vcpu_pu[i]);
        ck_assert(cpuset_equal(a->emulator_pin, b->emulator_pin));
        ck_assert_str_eq(a->reason, b->reason);
}
END_TEST

START_TEST(test_busy_host_threads_own_core)
{
        /* 2 nodes of 4 cores x 2 threads; d's host-side threads keep 1.5 cores busy */
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double busy[] = {1, 1};
        PlacementRequest req = {.name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.5};
        g_autoptr(Plan) plan = policy_place(t, l, &req, &p);
        g_autoptr(Plan) quiet = NULL, one = NULL, thin = NULL;
        int first = cpuset_next(plan->emulator_pin, 0);
        unsigned core;

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_int_ge(first, 0);
        core = t->pus[topology_pu_by_os(t, (unsigned)first)].core;
        /* cores no vCPU uses, on the domain's own node, all of them: two, since 1.5 cores of work on the
         * two threads of one core would keep both busy (a busy pair) */
        ck_assert_uint_ne(core, core_of(t, plan, 0));
        ck_assert_uint_ne(core, core_of(t, plan, 1));
        ck_assert(cpuset_has(plan->nodes, t->cores[core].node));
        ck_assert_uint_eq(cpuset_count(plan->emulator_pin), 4);
        CPUSET_FOREACH (os, plan->emulator_pin)
                ck_assert(
                    cpuset_has(plan->nodes, t->cores[t->pus[topology_pu_by_os(t, (unsigned)os)].core].node));
        for (unsigned i = 0; i < 2; i++)
                ck_assert(!cpuset_intersects(plan->emulator_pin, plan->vcpu_pins[i]));
        ck_assert_ptr_nonnull(strstr(plan->reason, "busy host-side threads"));
        /* 0.8 cores: one core, each thread under half busy */
        req.host_busy = 0.8;
        one = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(cpuset_count(one->emulator_pin), 2);
        for (unsigned i = 0; i < 2; i++)
                ck_assert(!cpuset_intersects(one->emulator_pin, one->vcpu_pins[i]));
        /* 0.3 cores: under half a core, but a quarter of a core or more beside busy vCPUs is what heal
         * re-pins them alone for; placed so from the start */
        req.host_busy = 0.3;
        thin = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(cpuset_count(thin->emulator_pin), 2);
        for (unsigned i = 0; i < 2; i++)
                ck_assert(!cpuset_intersects(thin->emulator_pin, thin->vcpu_pins[i]));
        ck_assert_ptr_nonnull(
            strstr(thin->reason, "busy host-side threads (0.3 cores) on a core no busy vCPU"));
        /* quiet host threads (under a quarter of a core) stay on the siblings of the domain's cores */
        req.host_busy = 0.2;
        quiet = policy_place(t, l, &req, &p);
        first = cpuset_next(quiet->emulator_pin, 0);
        core = t->pus[topology_pu_by_os(t, (unsigned)first)].core;
        ck_assert(core == core_of(t, quiet, 0) || core == core_of(t, quiet, 1));
}
END_TEST

/*
 * A domain whose load is measured on the host but not known yet (host_unmeasured): its vCPUs count as
 * busy, its host-side threads as LOAD_HOST_UNMEASURED cores, so EmulatorPin=siblings starts them on cores
 * of its own nodes no vCPU uses (two: one core of load on the two threads of one core is a busy pair)
 * rather than beside its vCPUs, where busy vhost contends until its first readings. Never off its
 * nodes for a presumption, never when the host keeps CPUs for such threads (HousekeepingCPUs=,
 * ReservedCPUs=) or EmulatorPin= is not siblings, not for a realtime guest (its threads' own rule: the
 * one free core a realtime guest's emulator takes, not two), and not when the load is measured (quiet
 * threads stay).
 */
START_TEST(test_unmeasured_host_threads_start_apart)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double busy[] = {1, 1};
        PlacementRequest req = {.name = "d", .vcpus = 2, .memory = GiB, .host_unmeasured = true};
        g_autoptr(Plan) plan = policy_place(t, l, &req, &p);
        g_autoptr(Plan) unknown = NULL, measured = NULL, kept = NULL, nodeset = NULL, full = NULL, rt = NULL,
                        rt_unmeasured = NULL;
        unsigned fill[] = {0, 2, 4, 6};

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(cpuset_count(plan->emulator_pin), 4);
        CPUSET_FOREACH (os, plan->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                ck_assert(cpuset_has(plan->nodes, t->cores[core].node));
        }
        for (unsigned i = 0; i < 2; i++)
                ck_assert(!cpuset_intersects(plan->emulator_pin, plan->vcpu_pins[i]));
        ck_assert_msg(strstr(plan->reason, "host-side threads on cores no vCPU uses: their load, not "
                                           "measured yet, counts as 1.0 cores busy"),
                      "%s", plan->reason);
        /* load not measured on the host at all: its own cores' siblings, as ever */
        req.host_unmeasured = false;
        unknown = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(cpuset_count(unknown->emulator_pin), 2);
        ck_assert(!strstr(unknown->reason, "not measured yet"));
        CPUSET_FOREACH (os, unknown->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                ck_assert(core == core_of(t, unknown, 0) || core == core_of(t, unknown, 1));
        }
        /* measured: quiet host-side threads stay on the siblings */
        req.vcpu_busy = busy;
        req.host_busy = 0.1;
        req.host_unmeasured = true; /* read only without vcpu_busy */
        measured = policy_place(t, l, &req, &p);
        ck_assert(cpuset_equal(measured->emulator_pin, unknown->emulator_pin));
        req.vcpu_busy = NULL;
        req.host_busy = 0;
        /* the host keeps CPUs for such threads: EmulatorPin=siblings as ever */
        p.housekeeping_cpus = cpuset_new();
        cpuset_add(p.housekeeping_cpus, 15);
        kept = policy_place(t, l, &req, &p);
        ck_assert(cpuset_equal(kept->emulator_pin, unknown->emulator_pin));
        g_clear_pointer(&p.housekeeping_cpus, cpuset_free);
        req.realtime = true;
        rt_unmeasured = policy_place(t, l, &req, &p);
        req.host_unmeasured = false;
        rt = policy_place(t, l, &req, &p);
        ck_assert(cpuset_equal(rt_unmeasured->emulator_pin, rt->emulator_pin));
        ck_assert(!strstr(rt_unmeasured->reason, "not measured yet"));
        req.realtime = false;
        req.host_unmeasured = true;
        p.emulator_pin = EMULATOR_PIN_NODESET;
        nodeset = policy_place(t, l, &req, &p);
        ck_assert_uint_ge(cpuset_count(nodeset->emulator_pin), 6); /* the node's other cores, as ever */
        p.emulator_pin = EMULATOR_PIN_SIBLINGS;
        /* node 0 holds 4 vCPUs of another domain on its cores' first threads, node 1 nothing: d (2 vCPUs)
         * takes node 1; then with only its own cores' siblings left on its node, nothing else */
        hold(t, l, "other", 4, fill);
        req.vcpus = 4;
        full = policy_place(t, l, &req, &p);
        ck_assert_int_eq(full->result, PLAN_PLACED);
        CPUSET_FOREACH (os, full->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                ck_assert(cpuset_has(full->nodes, t->cores[core].node)); /* not off its node */
        }
        ck_assert(!strstr(full->reason, "not measured yet"));
}
END_TEST

/* Busy host-side threads get cores by the threads' worth each core delivers: two on a core of two, four
 * or eight threads (what load_core_lost() counts), one on a core without SMT. 1.5 cores of them on one
 * core of four or eight threads are the busy pair they are on two threads, so they get two cores there
 * too, and 2 cores of them three (no delivered thread half busy). */
START_TEST(test_busy_host_threads_cores_by_what_a_core_delivers)
{
        static const struct {
                unsigned pus;
                double host;
                unsigned cores;
        } cases[] = {
            {1, 0.8, 2}, {1, 1.5, 4}, {2, 0.8, 1}, {2, 1.5, 2}, {2, 2.0, 3}, {4, 0.8, 1},
            {4, 1.5, 2}, {4, 2.0, 3}, {4, 3.0, 4}, {8, 0.8, 1}, {8, 1.5, 2}, {8, 2.0, 3},
        };

        for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
                g_autoptr(Topology) t = topology_new_uniform(1, 10, cases[k].pus, 8 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autoptr(CpuSet) cores = cpuset_new();
                PlacementParams p = test_params(POLICY_EXPLICIT);
                double busy[] = {1, 1};
                PlacementRequest req = {
                    .name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = cases[k].host};
                g_autoptr(Plan) plan = policy_place(t, l, &req, &p);

                ck_assert_int_eq(plan->result, PLAN_PLACED);
                CPUSET_FOREACH (os, plan->emulator_pin) {
                        unsigned c = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                        ck_assert_uint_ne(c, core_of(t, plan, 0));
                        ck_assert_uint_ne(c, core_of(t, plan, 1));
                        cpuset_add(cores, c);
                }
                ck_assert_msg(cpuset_count(cores) == cases[k].cores, "%u PUs a core, %.1f cores: %u cores",
                              cases[k].pus, cases[k].host, cpuset_count(cores));
                ck_assert_uint_eq(cpuset_count(plan->emulator_pin), cases[k].cores * cases[k].pus);
        }
}
END_TEST

/* The core a domain's busy host-side threads were given holds no vCPU in the ledger, yet it is busy: a
 * later domain's busy vCPUs get cores that are really free, and only share it when cores are short. */
START_TEST(test_host_thread_core_is_held)
{
        /* 1 node of 4 cores x 2 threads: a holds core 0, its host-side threads (0.6 cores) a PU of core 1 */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double pu_busy[] = {1, 0, 0.6, 0, 0, 0, 0, 0}, busy[] = {1, 1, 1};
        PlacementRequest req = {
            .name = "b", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .pu_busy = pu_busy};
        g_autoptr(Plan) two = NULL, three = NULL;
        unsigned on_host_core = 0;

        hold(t, l, "a", 1, (unsigned[]){0});
        two = policy_place(t, l, &req, &p);
        ck_assert_int_eq(two->result, PLAN_PLACED);
        for (unsigned i = 0; i < 2; i++)
                ck_assert_uint_ne(core_of(t, two, i), 1);
        /* three busy vCPUs on two free cores: one must share, the least busy core (the host threads') */
        req.vcpus = 3;
        three = policy_place(t, l, &req, &p);
        ck_assert_int_eq(three->result, PLAN_OVERCOMMITTED);
        for (unsigned i = 0; i < 3; i++) {
                ck_assert_uint_ne(core_of(t, three, i), 0);
                on_host_core += core_of(t, three, i) == 1;
        }
        ck_assert_uint_eq(on_host_core, 1);
}
END_TEST

/* Busy host-side threads of a domain whose vCPUs are idle stay beside them: nothing busy shares with
 * them there, and the free cores stay for busy vCPUs. */
START_TEST(test_idle_domain_keeps_host_threads)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        double busy[] = {0.1, 0.1};
        PlacementRequest req = {
            .name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.5, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = policy_place(t, l, &req, &p);

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert(!cpuset_is_empty(plan->emulator_pin));
        CPUSET_FOREACH (os, plan->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                ck_assert(core == core_of(t, plan, 0) || core == core_of(t, plan, 1));
        }
        ck_assert_ptr_null(strstr(plan->reason, "busy host-side threads"));
}
END_TEST

/* No free core left: busy host-side threads of a busy domain go to a core that runs only idle vCPUs, not
 * beside the domain's own busy ones; a core's worth of them (0.5 on each of its two threads) stays there:
 * a busy vCPU's sibling would put part of it beside a busy vCPU. */
START_TEST(test_host_threads_beside_idle_when_full)
{
        /* 1 node of 3 cores x 2 threads: an idle domain holds core 0; d takes cores 1 and 2 */
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double pu_busy[] = {0.1, 0.1, 0, 0, 0, 0}, busy[] = {1, 1};
        PlacementRequest req = {
            .name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.0, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL;

        unsigned on_idle = 0;

        hold(t, l, "idle", 2, (unsigned[]){0, 1});
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_ne(core_of(t, plan, 0), 0);
        ck_assert_uint_ne(core_of(t, plan, 1), 0);
        ck_assert_uint_eq(cpuset_count(plan->emulator_pin), 2);
        CPUSET_FOREACH (os, plan->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                on_idle += t->pus[pu].core == 0;
                ck_assert(t->pus[pu].core == 0 || (int)pu != plan->vcpu_pu[0]);
                ck_assert(t->pus[pu].core == 0 || (int)pu != plan->vcpu_pu[1]);
        }
        ck_assert_uint_eq(on_idle, 2);
        ck_assert_ptr_nonnull(strstr(plan->reason, "busy host-side threads"));
}
END_TEST

/*
 * A busy domain that fills its node's cores: no core there runs nothing busy for its busy host-side
 * threads, so they take a free core of the nearest node (cores first, then locality) rather than its
 * busy vCPUs' siblings. Memory bound by the user to its node keeps them there.
 */
START_TEST(test_host_threads_on_nearest_node_when_full)
{
        /* 3 nodes of 2 cores x 2 threads, node 1 nearer to node 0 than node 2 */
        g_autoptr(Topology) t = test_three_nodes_in_line();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double pu_busy[12] = {0}, busy[] = {1, 1};
        g_autoptr(CpuSet) node0 = cpuset_new();
        PlacementRequest req = {
            .name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.0, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL, bound = NULL;

        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 0)].node, 0);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 1)].node, 0);
        ck_assert(!cpuset_is_empty(plan->emulator_pin));
        CPUSET_FOREACH (os, plan->emulator_pin)
                ck_assert_uint_eq(t->cores[t->pus[topology_pu_by_os(t, (unsigned)os)].core].node, 1);
        ck_assert_msg(strstr(plan->reason, "of the nearest node with one"), "%s", plan->reason);
        cpuset_add(node0, t->nodes[0].os_index);
        req.memory_nodes = node0;
        req.memory_source = MEMORY_SOURCE_USER;
        bound = policy_place(t, l, &req, &p);
        ck_assert(!cpuset_is_empty(bound->emulator_pin));
        CPUSET_FOREACH (os, bound->emulator_pin)
                ck_assert_uint_eq(t->cores[t->pus[topology_pu_by_os(t, (unsigned)os)].core].node, 0);
}
END_TEST

/*
 * The nearest nodes with a core for busy host-side threads are as near: the free core of node 2 before a
 * core of node 1 where an idle vCPU runs (the lowest node used to win, beside the idle vCPU that may
 * turn busy while node 2 stood empty).
 */
START_TEST(test_host_threads_free_core_on_as_near_node)
{
        /* 3 nodes of 2 cores x 2 threads, all as near; node 1: idle vCPUs (0.02) on both cores */
        g_autoptr(Topology) t = topology_new_uniform(3, 2, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double pu_busy[12] = {0}, busy[] = {1, 1};
        g_autoptr(CpuSet) node0 = cpuset_new();
        PlacementRequest req = {
            .name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.0, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL;

        ck_assert_uint_eq(topology_distance(t, 0, 1), topology_distance(t, 0, 2));
        hold(t, l, "i", 2, (unsigned[]){4, 6});
        pu_busy[4] = pu_busy[6] = 0.02;
        cpuset_add(node0, t->nodes[0].os_index);
        req.memory_nodes = node0; /* its vCPUs on node 0's two cores */
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 0)].node, 0);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 1)].node, 0);
        ck_assert(!cpuset_is_empty(plan->emulator_pin));
        CPUSET_FOREACH (os, plan->emulator_pin)
                ck_assert_uint_eq(t->cores[t->pus[topology_pu_by_os(t, (unsigned)os)].core].node, 2);
        ck_assert_msg(strstr(plan->reason, "of the nearest node with one"), "%s", plan->reason);
}
END_TEST

/*
 * 1.2 cores of a busy 1-vCPU domain's host-side threads would keep both threads of the one calm core its
 * node has left half busy (a busy pair): the nearest node's core takes the rest (0.3 on each of four
 * threads), not a further node's, as for the first core.
 */
START_TEST(test_host_threads_more_cores_on_nearest_node)
{
        /* 3 nodes of 2 cores x 2 threads, node 1 nearer to node 0 than node 2 */
        g_autoptr(Topology) t = test_three_nodes_in_line();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double pu_busy[12] = {0}, busy[] = {1};
        PlacementRequest req = {
            .name = "d", .vcpus = 1, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.2, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = policy_place(t, l, &req, &p);
        unsigned on_node[3] = {0};

        ck_assert_int_eq(plan->result, PLAN_PLACED);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 0)].node, 0);
        CPUSET_FOREACH (os, plan->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                ck_assert_uint_ne(core, core_of(t, plan, 0));
                on_node[t->cores[core].node]++;
        }
        ck_assert_uint_eq(on_node[0], 2);
        ck_assert_uint_eq(on_node[1], 2);
        ck_assert_uint_eq(on_node[2], 0);
        ck_assert_msg(strstr(plan->reason, "and on the nearest node with more"), "%s", plan->reason);
}
END_TEST

/*
 * One free core is all that runs nothing busy but the core of the domain's own idle vCPU: 1.2 cores of
 * its host-side threads over the free core's two threads would keep both half busy (a busy pair), so the
 * idle vCPU's core joins them (0.3 each); never its busy vCPU's core (what went there would run beside
 * the busy vCPU), nor the other guest's busy core. With no idle vCPU they keep the free core alone.
 */
START_TEST(test_host_threads_take_own_sibling_when_short)
{
        /* 1 node of 4 cores x 2 threads: b busy on both threads of core 3 */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        double pu_busy[] = {0, 0, 0, 0, 0, 0, 0.9, 0.9}, busy[] = {0.9, 0.1}, all_busy[] = {0.9, 0.9};
        PlacementRequest req = {
            .name = "d", .vcpus = 2, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.2, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL, light = NULL, no_idle = NULL;
        unsigned on_idle = 0;

        hold(t, l, "b", 2, (unsigned[]){6, 7});
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        CPUSET_FOREACH (os, plan->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                ck_assert_uint_ne(t->pus[pu].core, 3);
                ck_assert_uint_ne(t->pus[pu].core, core_of(t, plan, 0));
                on_idle += t->pus[pu].core == core_of(t, plan, 1);
        }
        ck_assert_uint_gt(on_idle, 0);
        ck_assert_uint_gt(cpuset_count(plan->emulator_pin), on_idle);
        ck_assert_ptr_nonnull(strstr(plan->reason, "beside its own vCPUs"));
        /* 0.8 cores fit the free core's two threads under half busy each: its own cores stay out */
        req.host_busy = 0.8;
        light = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(cpuset_count(light->emulator_pin), 2);
        ck_assert(!cpuset_intersects(light->emulator_pin, light->vcpu_pins[0]));
        ck_assert(!cpuset_intersects(light->emulator_pin, light->vcpu_pins[1]));
        /* both vCPUs busy: the free core alone, half busy or not */
        req.host_busy = 1.2;
        req.vcpu_busy = all_busy;
        no_idle = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(cpuset_count(no_idle->emulator_pin), 2);
        ck_assert(!cpuset_intersects(no_idle->emulator_pin, no_idle->vcpu_pins[0]));
        ck_assert(!cpuset_intersects(no_idle->emulator_pin, no_idle->vcpu_pins[1]));
        ck_assert_ptr_null(strstr(no_idle->reason, "beside its own vCPUs"));
}
END_TEST

/* Seeded random hosts and workloads: whenever a domain has room, its vCPUs land where they would without
 * load, whatever the load says (cores first holds: every vCPU its own core). */
START_TEST(test_property_room_means_no_change)
{
        for (unsigned seed = 1; seed <= 30; seed++) {
                GRand *r = g_rand_new_with_seed(seed);
                g_autoptr(Topology) t = topology_new_uniform(
                    (unsigned)g_rand_int_range(r, 1, 5), (unsigned)g_rand_int_range(r, 1, 7),
                    (unsigned)g_rand_int_range(r, 1, 3), 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autofree double *pu_busy = g_new0(double, t->npus);
                PlacementParams p = test_params(POLICY_EXPLICIT);

                for (unsigned step = 0; step < 40; step++) {
                        g_autofree char *name = g_strdup_printf("d%u", step);
                        unsigned vcpus = (unsigned)g_rand_int_range(r, 1, 5);
                        g_autofree double *busy = g_new(double, vcpus);
                        PlacementRequest with = {.name = name,
                                                 .vcpus = vcpus,
                                                 .memory = GiB / 4,
                                                 .vcpu_busy = busy,
                                                 .host_busy = g_rand_double(r),
                                                 .pu_busy = pu_busy};
                        PlacementRequest without = {.name = name, .vcpus = vcpus, .memory = GiB / 4};
                        g_autoptr(Plan) a = NULL;
                        Plan *b;

                        for (unsigned i = 0; i < vcpus; i++)
                                busy[i] = g_rand_double(r);
                        a = policy_place(t, l, &with, &p);
                        b = policy_place(t, l, &without, &p);
                        ck_assert_int_eq(a->result, b->result);
                        for (unsigned i = 0; b->result == PLAN_PLACED && i < vcpus; i++)
                                ck_assert_int_eq(a->vcpu_pu[i], b->vcpu_pu[i]);
                        for (unsigned i = 0; i < b->nvcpus; i++)
                                if (b->vcpu_pu[i] >= 0)
                                        pu_busy[b->vcpu_pu[i]] += busy[i];
                        ck_assert_int_eq(ledger_commit(l, name, b), 0);
                }
                g_rand_free(r);
        }
}
END_TEST

/* Measured load that says every vCPU is busy decides as unknown load does, overcommitted and with reserved
 * threads too: the load-aware assignment orders cores as the plain one. */
START_TEST(test_property_all_busy_as_unknown)
{
        for (unsigned seed = 1; seed <= 30; seed++) {
                GRand *r = g_rand_new_with_seed(seed);
                g_autoptr(Topology) t =
                    topology_new_uniform((unsigned)g_rand_int_range(r, 1, 4),
                                         (unsigned)g_rand_int_range(r, 1, 5), 2, 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autofree double *pu_busy = g_new0(double, t->npus);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                g_autoptr(CpuSet) reserved = cpuset_new();

                cpuset_add(reserved, t->pus[1].os_index);
                p.reserved_cpus = reserved;
                for (unsigned step = 0; step < 30; step++) {
                        g_autofree char *name = g_strdup_printf("d%u", step);
                        unsigned vcpus = (unsigned)g_rand_int_range(r, 1, 6);
                        g_autofree double *busy = g_new(double, vcpus);
                        PlacementRequest with = {.name = name,
                                                 .vcpus = vcpus,
                                                 .memory = GiB / 8,
                                                 .vcpu_busy = busy,
                                                 .pu_busy = pu_busy};
                        PlacementRequest without = {.name = name, .vcpus = vcpus, .memory = GiB / 8};
                        g_autoptr(Plan) a = NULL;
                        Plan *b;

                        for (unsigned i = 0; i < vcpus; i++)
                                busy[i] = 1.0;
                        a = policy_place(t, l, &with, &p);
                        b = policy_place(t, l, &without, &p);
                        ck_assert_int_eq(a->result, b->result);
                        for (unsigned i = 0; i < vcpus; i++)
                                ck_assert_int_eq(a->vcpu_pu[i], b->vcpu_pu[i]);
                        for (unsigned i = 0; i < b->nvcpus; i++)
                                if (b->vcpu_pu[i] >= 0)
                                        pu_busy[b->vcpu_pu[i]] += 1.0;
                        ck_assert_int_eq(ledger_commit(l, name, b), 0);
                }
                g_rand_free(r);
        }
}
END_TEST

/* No free core anywhere: a busy domain goes to the node whose cores run only idle vCPUs, not to the
 * nearest node with memory, where every core runs a busy one. */
START_TEST(test_overcommit_set_by_calm_cores)
{
        /* 2 nodes of 2 cores x 2 threads; node 0's cores run busy vCPUs, node 1's idle ones */
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned busy_pus[] = {0, 2}, idle_pus[] = {4, 6};
        g_autofree double *pu_busy = g_new0(double, t->npus);
        double c_busy[] = {1.0}, c_idle[] = {0.05};
        PlacementRequest req = {
            .name = "c", .vcpus = 1, .memory = GiB, .vcpu_busy = c_busy, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL, idle = NULL, unknown = NULL;

        hold(t, l, "busy", 2, busy_pus);
        hold(t, l, "idle", 2, idle_pus);
        pu_busy[0] = pu_busy[2] = 1.0;
        pu_busy[4] = pu_busy[6] = 0.1;
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 0)].node, 1);
        ck_assert(cpuset_has(plan->nodes, 1) && cpuset_count(plan->nodes) == 1);
        /* the reason still counts free cores, as every overcommit's does */
        ck_assert_ptr_nonnull(strstr(plan->reason, "(0 free cores there)"));
        /* an idle domain has no busy vCPU to find a core for: the nearest node with memory */
        req.vcpu_busy = c_idle;
        idle = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(t->cores[core_of(t, idle, 0)].node, 0);
        /* unknown load counts every vCPU busy, and so does everything counted: no calm core, node 0 */
        req.vcpu_busy = NULL;
        req.pu_busy = NULL;
        unknown = policy_place(t, l, &req, &p);
        ck_assert_uint_eq(t->cores[core_of(t, unknown, 0)].node, 0);
}
END_TEST

/* Places a busy domain of vcpus (load unknown) on 2 nodes of ncores single-PU cores, each core held by a
 * domain of its own and measured busy as given: no core is calm, so it shares. Returns its node. */
static unsigned place_busy_among_busy_cores(unsigned vcpus, unsigned ncores, const double *core_busy,
                                            char **ret_reason)
{
        g_autoptr(Topology) t = topology_new_uniform(2, ncores, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        PlacementRequest req = {.name = "c", .vcpus = vcpus, .memory = GiB, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL;

        for (unsigned pu = 0; pu < t->npus; pu++) {
                g_autofree char *name = g_strdup_printf("held%u", pu);
                hold(t, l, name, 1, &pu);
                pu_busy[pu] = core_busy[pu];
        }
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(cpuset_count(plan->nodes), 1);
        *ret_reason = g_strdup(plan->reason);
        return t->cores[core_of(t, plan, 0)].node;
}

static unsigned place_among_busy_cores(unsigned ncores, const double *core_busy, char **ret_reason)
{
        return place_busy_among_busy_cores(1, ncores, core_busy, ret_reason);
}

/* No core is calm: a busy arrival goes to the node whose least busy core runs least, not simply the first
 * node. Seen on a real host: a busy guest's core (0.72 + 0.27 of its host-side threads) against an idle
 * guest's (0.12, and 0.52 of host-side threads still starting up): the new busy guest shared the busy one.
 */
START_TEST(test_overcommit_set_by_least_busy_core)
{
        double busy_first[] = {0.99, 0.64}, busy_last[] = {0.64, 0.99};
        double nodes_of_two[] = {1.0, 0.6, 0.9, 0.9}, even[] = {0.8, 0.8};
        g_autofree char *why = NULL, *why2 = NULL, *why3 = NULL, *why4 = NULL;

        ck_assert_uint_eq(place_among_busy_cores(1, busy_first, &why), 1);
        ck_assert_ptr_nonnull(strstr(why, "the one whose least busy core runs least (0 free cores there)"));
        ck_assert_uint_eq(place_among_busy_cores(1, busy_last, &why2), 0);
        /* the node's least busy core counts, not its sum */
        ck_assert_uint_eq(place_among_busy_cores(2, nodes_of_two, &why3), 0);
        /* equals: the nearest first, as before */
        ck_assert_uint_eq(place_among_busy_cores(1, even, &why4), 0);
}
END_TEST

/* Several busy vCPUs beyond the calm cores share as many cores: a node with one quiet core among very busy
 * ones is where one vCPU loses least, not three. */
START_TEST(test_overcommit_set_by_least_busy_cores_summed)
{
        double one_quiet[] = {0.5, 0.9, 1.0, 0.6, 0.7, 0.8};
        g_autofree char *why1 = NULL, *why2 = NULL, *why3 = NULL;
        unsigned n3;

        ck_assert_uint_eq(place_busy_among_busy_cores(1, 3, one_quiet, &why1), 0); /* 0.5 against 0.6 */
        ck_assert_uint_eq(place_busy_among_busy_cores(2, 3, one_quiet, &why2), 1); /* 1.4 against 1.3 */
        n3 = place_busy_among_busy_cores(3, 3, one_quiet, &why3);                  /* 2.4 against 2.1 */
        ck_assert_msg(n3 == 1, "%s", why3);
        ck_assert_ptr_nonnull(strstr(why3, "the one whose 3 least busy cores run least"));
}
END_TEST

/* Without measured load the same rule counts vCPUs: node 0's cores hold two each, node 1's one each. */
START_TEST(test_overcommit_set_by_least_loaded_core_counted)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned full[] = {0, 1, 2, 3}, half[] = {4, 6};
        PlacementRequest req = {.name = "c", .vcpus = 1, .memory = GiB};
        g_autoptr(Plan) plan = NULL;

        hold(t, l, "full", 4, full);
        hold(t, l, "half", 2, half);
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_OVERCOMMITTED);
        ck_assert_uint_eq(t->cores[core_of(t, plan, 0)].node, 1);
        ck_assert_ptr_nonnull(strstr(plan->reason, "the one whose least busy core runs least"));
}
END_TEST

/* Busy host-side threads with one free core left: the further core their load needs is one whose vCPUs
 * are idle, not the same core's two threads both kept busy. */
START_TEST(test_host_threads_spread_onto_calm_core)
{
        /* 1 node of 4 cores x 2 threads: core 0 for d's busy vCPU, core 1 free, cores 2 and 3 run idle
         * vCPUs */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        unsigned idle_pus[] = {4, 6};
        g_autofree double *pu_busy = g_new0(double, t->npus);
        double busy[] = {1.0};
        PlacementRequest req = {
            .name = "d", .vcpus = 1, .memory = GiB, .vcpu_busy = busy, .host_busy = 1.5, .pu_busy = pu_busy};
        g_autoptr(Plan) plan = NULL;
        unsigned cores = 0;

        hold(t, l, "idle", 2, idle_pus);
        pu_busy[4] = pu_busy[6] = 0.1;
        plan = policy_place(t, l, &req, &p);
        ck_assert_int_eq(plan->result, PLAN_PLACED);
        /* 1.5 cores over 4 threads: none at half busy; no thread of a busy vCPU's core */
        ck_assert_uint_eq(cpuset_count(plan->emulator_pin), 4);
        ck_assert(!cpuset_intersects(plan->emulator_pin, plan->vcpu_pins[0]));
        /* the free core first, then one of the idle vCPUs' */
        ck_assert(cpuset_has(plan->emulator_pin, t->pus[t->cores[1].pu_first].os_index));
        for (unsigned c = 2; c < 4; c++)
                cores += cpuset_has(plan->emulator_pin, t->pus[t->cores[c].pu_first].os_index);
        ck_assert_uint_eq(cores, 1);
}
END_TEST

/* The rule of overcommit_assign() by load (overcommit.h, load-rules.h) as a plain scan of every PU per vCPU,
 * lexicographic keys, first PU in node, core and PU order on ties: the reference a faster assignment must
 * equal. */
static bool ref_less(const unsigned *a, const unsigned *b)
{
        for (unsigned j = 0; j < 5; j++)
                if (a[j] != b[j])
                        return a[j] < b[j];
        return false;
}

static void reference_assign(const HostView *v, const unsigned *nodes, unsigned n, Plan *plan)
{
        const Topology *t = v->t;
        const PlacementRequest *req = v->req;
        g_autofree unsigned *pu_load = g_new0(unsigned, t->npus);
        g_autofree unsigned *core_load = g_new0(unsigned, t->ncores);
        g_autofree double *busy = g_new0(double, t->ncores);
        g_autofree unsigned *own_core = g_new0(unsigned, t->ncores);
        g_autofree unsigned *on_node = g_new0(unsigned, t->nnodes);
        g_autofree unsigned *pus = g_new(unsigned, t->npus);
        g_autofree unsigned *order = g_new(unsigned, plan->nvcpus);
        unsigned npus = 0, k = 0;

        for (int pass = 0; pass < 2; pass++)
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        if ((req->vcpu_busy[i] >= LOAD_BUSY_THRESHOLD) == (pass == 0))
                                order[k++] = i;
        for (unsigned i = 0; i < n; i++) {
                const TopoNode *node = &t->nodes[nodes[i]];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        const TopoCore *core = &t->cores[c];
                        core_load[c] = 2 * ledger_core_load(v->l, c) + policy_core_reserved(v, c);
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                busy[c] += req->pu_busy[p];
                                pu_load[p] = ledger_pu_load(v->l, p);
                                if (v->pu_usable[p])
                                        pus[npus++] = p;
                        }
                }
        }
        for (k = 0; k < plan->nvcpus && npus; k++) {
                unsigned vcpu = order[k], best_key[5] = {0};
                int best = -1;

                for (unsigned i = 0; i < npus; i++) {
                        unsigned p = pus[i], c = t->pus[p].core;
                        unsigned key[5] = {load_busy_key(busy[c]), core_load[c], own_core[c], pu_load[p],
                                           on_node[t->cores[c].node]};
                        if (best < 0 || ref_less(key, best_key)) {
                                best = (int)p;
                                memcpy(best_key, key, sizeof(key));
                        }
                }
                plan->vcpu_pu[vcpu] = best;
                pu_load[best]++;
                core_load[t->pus[best].core] += 2;
                busy[t->pus[best].core] += req->vcpu_busy[vcpu];
                own_core[t->pus[best].core]++;
                on_node[t->cores[t->pus[best].core].node]++;
        }
}

/* The assignment by load equals the plain scan on random hosts, ledgers, loads and reserved threads. */
START_TEST(test_property_assign_matches_scan)
{
        for (unsigned seed = 1; seed <= 300; seed++) {
                g_autoptr(GRand) r = g_rand_new_with_seed(seed);
                g_autoptr(Topology) t = topology_new_uniform(
                    (unsigned)g_rand_int_range(r, 1, 5), (unsigned)g_rand_int_range(r, 1, 7),
                    (unsigned)g_rand_int_range(r, 1, 3), 16 * GiB, NULL);
                g_autoptr(Ledger) l = ledger_new(t);
                g_autofree double *pu_busy = g_new0(double, t->npus);
                PlacementParams p = test_params(POLICY_EXPLICIT);
                g_autoptr(CpuSet) reserved = cpuset_new();
                unsigned vcpus = (unsigned)g_rand_int_range(r, 1, 3 * t->npus), residents;
                g_autofree double *busy = g_new(double, vcpus);
                g_autofree unsigned *nodes = g_new(unsigned, t->nnodes);
                PlacementRequest req = {
                    .name = "x", .vcpus = vcpus, .memory = GiB, .vcpu_busy = busy, .pu_busy = pu_busy};
                g_autoptr(Plan) fast = plan_new("x", vcpus, GiB, t->nnodes);
                g_autoptr(Plan) slow = plan_new("x", vcpus, GiB, t->nnodes);
                HostView v;

                if (g_rand_boolean(r))
                        cpuset_add(reserved, t->pus[g_rand_int_range(r, 0, (gint32)t->npus)].os_index);
                p.reserved_cpus = reserved;
                residents = (unsigned)g_rand_int_range(r, 0, 2 * t->npus);
                for (unsigned d = 0; d < residents; d++) {
                        g_autofree char *name = g_strdup_printf("r%u", d);
                        unsigned pu = (unsigned)g_rand_int_range(r, 0, (gint32)t->npus);
                        hold(t, l, name, 1, &pu);
                        /* a few load levels, so that ties happen */
                        pu_busy[pu] += g_rand_int_range(r, 0, 4) * 0.3;
                }
                for (unsigned i = 0; i < vcpus; i++)
                        busy[i] = g_rand_int_range(r, 0, 4) * 0.3;
                for (unsigned i = 0; i < t->nnodes; i++)
                        nodes[i] = t->nnodes - 1 - i; /* not in index order */
                host_view_init_for(&v, t, l, &p, &req);
                overcommit_assign(&v, &policy_explicit_ops, nodes, t->nnodes, fast);
                reference_assign(&v, nodes, t->nnodes, slow);
                host_view_done(&v);
                for (unsigned i = 0; i < vcpus; i++)
                        ck_assert_msg(fast->vcpu_pu[i] == slow->vcpu_pu[i],
                                      "seed %u vCPU %u: PU %d, scan %d", seed, i, fast->vcpu_pu[i],
                                      slow->vcpu_pu[i]);
        }
}
END_TEST

/* load_spread_idle_host() for d asking req with host cores of host-side load, from out = the OS
 * indexes a and b (narrow); out holds what it leaves. */
static void spread_from_pair(const Topology *t, const Ledger *l, const PlacementParams *p,
                             PlacementRequest *req, const Plan *d, double host, unsigned a, unsigned b,
                             CpuSet *out)
{
        HostView v;

        req->host_busy = host;
        host_view_init_for(&v, t, l, p, req);
        cpuset_clear(out);
        cpuset_add(out, a);
        cpuset_add(out, b);
        load_spread_idle_host(&v, d, out, true);
        host_view_done(&v);
}

/* An idle domain's busy host-side threads on the two threads of one core are a busy pair: they spread onto
 * a core of idle vCPUs (before a free one); on threads of different cores, or under half busy each, or
 * for a domain with a busy vCPU, they are left where they are. */
START_TEST(test_idle_domain_host_pair_spreads)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        double idle[] = {0.1}, busy[] = {0.9};
        PlacementRequest req = {
            .name = "d", .vcpus = 1, .memory = GiB, .vcpu_busy = idle, .host_busy = 1.4, .pu_busy = pu_busy};
        g_autoptr(Plan) d = plan_new("d", 1, GiB, t->nnodes);
        g_autoptr(CpuSet) out = cpuset_new(), apart = cpuset_new();
        HostView v;

        hold(t, l, "i", 1, (unsigned[]){4}); /* an idle vCPU on core 2; core 3 free; d's own on core 0 */
        pu_busy[4] = 0.1;
        d->vcpu_pu[0] = 0;
        cpuset_add(d->nodes, 0);
        host_view_init_for(&v, t, l, &p, &req);
        cpuset_add(out, 2); /* both threads of core 1 */
        cpuset_add(out, 3);
        load_spread_idle_host(&v, d, out, true);
        ck_assert_uint_eq(cpuset_count(out), 4); /* 0.35 each: no thread half busy */
        /* a core of idle vCPUs (its own on core 0, or i's on core 2), not the free core 3 */
        ck_assert((cpuset_has(out, 0) && cpuset_has(out, 1)) || (cpuset_has(out, 4) && cpuset_has(out, 5)));
        ck_assert(!cpuset_has(out, 6) && !cpuset_has(out, 7));
        /* one thread on each of two cores: no pair, nothing to spread */
        cpuset_add(apart, 1);
        cpuset_add(apart, 3);
        load_spread_idle_host(&v, d, apart, true);
        ck_assert_uint_eq(cpuset_count(apart), 2);
        host_view_done(&v);
        /* under half busy each, or a busy vCPU (load_pick_emulator()'s): left alone */
        spread_from_pair(t, l, &p, &req, d, 0.8, 2, 3, out);
        ck_assert_uint_eq(cpuset_count(out), 2);
        req.host_busy = 1.4;
        req.vcpu_busy = busy;
        host_view_init_for(&v, t, l, &p, &req);
        load_spread_idle_host(&v, d, out, true);
        ck_assert_uint_eq(cpuset_count(out), 2);
        host_view_done(&v);
}
END_TEST

/* The cores (indexes) of the PUs in set (OS indexes). */
static CpuSet *cores_of(const Topology *t, const CpuSet *set)
{
        CpuSet *cores = cpuset_new();

        CPUSET_FOREACH (os, set)
                cpuset_add(cores, t->pus[topology_pu_by_os(t, (unsigned)os)].core);
        return cores;
}

/*
 * An idle domain's measured busy host-side threads (0.8 cores; from 0.25 on) leave the cores where another
 * domain's busy vCPU runs (its own idle vCPU shares such a core) for one that runs nothing busy, a core of
 * idle vCPUs before a free one; given several calm cores they keep as few as carry them (one for 0.8 cores,
 * two for 1.4); with nowhere named at all they get such a core.
 */
START_TEST(test_idle_host_threads_off_busy_cores_and_together)
{
        /* 1 node of 4 cores x 2 threads: d's idle vCPU on PU 0 beside b's busy one on PU 1 (core 0);
         * i's idle vCPU on PU 4 (core 2); cores 1 and 3 free */
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        double idle[] = {0.1};
        PlacementRequest req = {
            .name = "d", .vcpus = 1, .memory = GiB, .vcpu_busy = idle, .host_busy = 0.8, .pu_busy = pu_busy};
        g_autoptr(Plan) d = plan_new("d", 1, GiB, t->nnodes);
        g_autoptr(CpuSet) out = cpuset_new();
        g_autoptr(CpuSet) cores = NULL, two = NULL;
        HostView v;

        hold(t, l, "b", 1, (unsigned[]){1});
        hold(t, l, "i", 1, (unsigned[]){4});
        pu_busy[1] = 1.0;
        pu_busy[4] = 0.1;
        d->vcpu_pu[0] = 0;
        cpuset_add(d->nodes, 0);
        host_view_init_for(&v, t, l, &p, &req);

        cpuset_add(out, 0); /* the PUs of its own core, b's busy vCPU's among them */
        cpuset_add(out, 1);
        load_spread_idle_host(&v, d, out, true);
        cores = cores_of(t, out);
        ck_assert_uint_eq(cpuset_count(cores), 1);
        ck_assert(cpuset_has(cores, 2)); /* i's idle core, not a free one */

        cpuset_clear(out); /* two free cores: 0.8 cores of load need one of them */
        for (unsigned os = 2; os < 8; os += os == 3 ? 3 : 1)
                cpuset_add(out, os);
        ck_assert_uint_eq(cpuset_count(out), 4);
        load_spread_idle_host(&v, d, out, true);
        ck_assert_uint_eq(cpuset_count(out), 2);
        ck_assert(cpuset_has(out, 2) && cpuset_has(out, 3));

        /* EmulatorPin=nodeset or the housekeeping CPUs (not narrow): kept whole, busy cores and all */
        cpuset_clear(out);
        for (unsigned os = 0; os < 8; os += os == 3 ? 3 : 1)
                cpuset_add(out, os);
        load_spread_idle_host(&v, d, out, false);
        ck_assert_uint_eq(cpuset_count(out), 6);
        cpuset_clear(out);
        load_spread_idle_host(&v, d, out, false);
        ck_assert(cpuset_is_empty(out));

        cpuset_clear(out); /* nothing named: a calm core */
        load_spread_idle_host(&v, d, out, true);
        g_clear_pointer(&cores, cpuset_free);
        cores = cores_of(t, out);
        ck_assert_uint_eq(cpuset_count(cores), 1);
        ck_assert(cpuset_has(cores, 2));
        host_view_done(&v);

        req.host_busy = 1.4; /* 1.4 cores need both free cores (one would carry a busy pair) */
        host_view_init_for(&v, t, l, &p, &req);
        cpuset_clear(out);
        for (unsigned os = 2; os < 8; os += os == 3 ? 3 : 1)
                cpuset_add(out, os);
        load_spread_idle_host(&v, d, out, true);
        two = cores_of(t, out);
        ck_assert_uint_eq(cpuset_count(two), 2);
        ck_assert(cpuset_has(two, 1) && cpuset_has(two, 3));
        host_view_done(&v);

        /* 0.3 cores beside b's busy vCPU: a quarter of a core or more, what heal re-pins them alone for,
         * so they leave too; 0.2 cores stay */
        spread_from_pair(t, l, &p, &req, d, 0.3, 0, 1, out);
        g_clear_pointer(&cores, cpuset_free);
        cores = cores_of(t, out);
        ck_assert_uint_eq(cpuset_count(cores), 1);
        ck_assert(cpuset_has(cores, 2));
        spread_from_pair(t, l, &p, &req, d, 0.2, 0, 1, out);
        ck_assert_uint_eq(cpuset_count(out), 2);
        ck_assert(cpuset_has(out, 0) && cpuset_has(out, 1));
}
END_TEST

/*
 * The same with Linux's numbering of threads (core c's are c and c + 4): the cores are taken in the order
 * of their first thread, each with every calm thread it has, not the first threads of several cores.
 */
START_TEST(test_idle_host_threads_together_sibling_numbering)
{
        Topology *loaded = NULL;
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autofree double *pu_busy = NULL;
        double idle[] = {0.1};
        PlacementRequest req = {.name = "d", .vcpus = 1, .memory = GiB, .vcpu_busy = idle, .host_busy = 0.8};
        g_autoptr(Plan) d = NULL;
        g_autoptr(CpuSet) out = cpuset_new();
        HostView v;

        ck_assert_int_eq(topology_load("synthetic:pack:1 numa:1(memory=8GB) core:4 pu:2(indexes=2*4:1*2)",
                                       &loaded, &error),
                         0);
        t = loaded;
        ck_assert_uint_eq(t->pus[t->cores[1].pu_first].os_index, 1);
        ck_assert_uint_eq(t->pus[t->cores[1].pu_first + 1].os_index, 5);
        l = ledger_new(t);
        pu_busy = g_new0(double, t->npus);
        req.pu_busy = pu_busy;
        d = plan_new("d", 1, GiB, t->nnodes);
        d->vcpu_pu[0] = (int)t->cores[0].pu_first;
        cpuset_add(d->nodes, 0);
        host_view_init_for(&v, t, l, &p, &req);
        for (unsigned os = 1; os <= 6; os += os == 2 ? 3 : 1) /* cores 1 and 2, both threads */
                cpuset_add(out, os);
        load_spread_idle_host(&v, d, out, true);
        ck_assert_uint_eq(cpuset_count(out), 2);
        ck_assert(cpuset_has(out, 1) && cpuset_has(out, 5));
        host_view_done(&v);
}
END_TEST

static Suite *load_rules_suite(void)
{
        Suite *s = suite_create("load rules");
        TCase *tc = tcase_create("decides");
        tcase_add_test(tc, test_busy_get_own_cores_when_short);
        tcase_add_test(tc, test_busy_avoid_busy_cores);
        tcase_add_test(tc, test_idle_take_free_core_before_sharing);
        tcase_add_test(tc, test_bound_take_free_core_beyond_binding);
        tcase_add_test(tc, test_free_cores_unchanged);
        tcase_add_test(tc, test_busy_host_threads_own_core);
        tcase_add_test(tc, test_unmeasured_host_threads_start_apart);
        tcase_add_test(tc, test_busy_host_threads_cores_by_what_a_core_delivers);
        tcase_add_test(tc, test_host_thread_core_is_held);
        tcase_add_test(tc, test_idle_domain_keeps_host_threads);
        tcase_add_test(tc, test_idle_domain_host_pair_spreads);
        tcase_add_test(tc, test_idle_host_threads_off_busy_cores_and_together);
        tcase_add_test(tc, test_idle_host_threads_together_sibling_numbering);
        tcase_add_test(tc, test_host_threads_beside_idle_when_full);
        tcase_add_test(tc, test_host_threads_take_own_sibling_when_short);
        tcase_add_test(tc, test_host_threads_on_nearest_node_when_full);
        tcase_add_test(tc, test_host_threads_more_cores_on_nearest_node);
        tcase_add_test(tc, test_host_threads_free_core_on_as_near_node);
        tcase_add_test(tc, test_overcommit_set_by_calm_cores);
        tcase_add_test(tc, test_overcommit_set_by_least_busy_core);
        tcase_add_test(tc, test_overcommit_set_by_least_busy_cores_summed);
        tcase_add_test(tc, test_overcommit_set_by_least_loaded_core_counted);
        tcase_add_test(tc, test_host_threads_spread_onto_calm_core);
        tcase_add_test(tc, test_property_assign_matches_scan);
        tcase_add_test(tc, test_property_room_means_no_change);
        tcase_add_test(tc, test_property_all_busy_as_unknown);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(load_rules_suite)
