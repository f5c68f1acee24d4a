/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bound of sim/contention.h: what no placement can beat is never beaten, here checked by enumeration. */
#include <errno.h>

#include "test-util.h"
#include "test-policy-util.h"

#include "contention.h"
#include "replay.h"
#include "trace.h"

START_TEST(test_core_lost)
{
        ck_assert_double_eq_tol(contention_core_lost(0, 2, 0.4), 0, 1e-12);
        ck_assert_double_eq_tol(contention_core_lost(1, 2, 0.4), 0, 1e-12);
        ck_assert_double_eq_tol(contention_core_lost(2, 2, 0.4), 0.8, 1e-12); /* a busy pair of siblings */
        ck_assert_double_eq_tol(contention_core_lost(3, 2, 0.4), 1.8, 1e-12);
        ck_assert_double_eq_tol(contention_core_lost(2, 1, 0.4), 1.0, 1e-12); /* two on one PU: one core */
        ck_assert_double_eq_tol(contention_core_lost(2, 2, 0.75), 1.0, 1e-12);
        /* an SMT8 core (POWER) with 8 busy threads delivers what a busy pair does, not 4.8 cores */
        ck_assert_double_eq_tol(contention_core_lost(8, 8, 0.4), 6.8, 1e-12);
        ck_assert_double_eq_tol(contention_core_lost(4, 4, 0.4), 2.8, 1e-12);
        ck_assert_double_eq_tol(contention_core_lost(2, 4, 0.4), 0.8, 1e-12);
}
END_TEST

/* The part of the loss busy host-side threads add: a's emulator on the sibling of its busy vCPU loses a
 * busy pair's 0.8 cores to them; b's two busy vCPUs on one core lose 0.8 without them. */
START_TEST(test_host_lost)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 8 * GiB, NULL);
        g_autoptr(Plan) a = plan_new("a", 1, GiB, t->nnodes), b = plan_new("b", 2, GiB, t->nnodes);
        ContentionDomain d[] = {{.plan = a, .busy = 1, .host = 1}, {.plan = b, .busy = 1}};
        ContentionSample s;

        a->vcpu_pu[0] = 0;
        cpuset_add(a->emulator_pin, t->pus[1].os_index);
        b->vcpu_pu[0] = 2;
        b->vcpu_pu[1] = 3;
        s = contention_measure(t, d, 2, 0.4);
        ck_assert_double_eq_tol(s.capacity_lost, 1.6, 1e-12);
        ck_assert_double_eq_tol(s.host_lost, 0.8, 1e-12);
        d[0].host = 0.4; /* 0.4 of a busy thread beside the busy vCPU: 0.4 of what a busy pair loses */
        s = contention_measure(t, d, 2, 0.4);
        ck_assert_double_eq_tol(s.capacity_lost, 0.8 + 0.32, 1e-12);
        ck_assert_double_eq_tol(s.host_lost, 0.32, 1e-12);
        ck_assert_uint_eq(s.busy_contended, 2); /* b's pair; a's vCPU beside a PU not half busy */
}
END_TEST

/*
 * Where a calm core was while capacity was lost: 2 nodes of 2 cores x 2 threads. a's two busy vCPUs on
 * one core of node 0 lose 0.8 while node 0's other core runs only b's idle vCPU (calm: lost beside a
 * calm core of its own node); then b is busy too and node 1 is the only one with a calm core (lost while
 * one was calm on another node only); then c fills node 1 with busy vCPUs: nothing calm anywhere.
 */
START_TEST(test_lost_by_calm_core)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 8 * GiB, NULL);
        g_autoptr(Plan) a = plan_new("a", 2, GiB, t->nnodes), b = plan_new("b", 1, GiB, t->nnodes),
                        c = plan_new("c", 2, GiB, t->nnodes);
        ContentionDomain d[] = {{.plan = a, .busy = 1}, {.plan = b, .busy = 0.1}, {.plan = c, .busy = 1}};
        ContentionSample s;

        a->vcpu_pu[0] = 0;
        a->vcpu_pu[1] = 1;
        b->vcpu_pu[0] = 2;
        c->vcpu_pu[0] = 4;
        c->vcpu_pu[1] = 6;
        s = contention_measure(t, d, 2, 0.4);
        ck_assert_double_eq_tol(s.capacity_lost, 0.8, 1e-12);
        ck_assert_double_eq_tol(s.lost_calm_node, 0.8, 1e-12);
        ck_assert_double_eq_tol(s.lost_calm_elsewhere, 0, 1e-12);
        d[1].busy = 1;
        s = contention_measure(t, d, 2, 0.4);
        ck_assert_double_eq_tol(s.lost_calm_node, 0, 1e-12);
        ck_assert_double_eq_tol(s.lost_calm_elsewhere, 0.8, 1e-12);
        /* c's busy vCPUs on both cores of node 1 */
        s = contention_measure(t, d, 3, 0.4);
        ck_assert_double_eq_tol(s.capacity_lost, 0.8, 1e-12);
        ck_assert_double_eq_tol(s.lost_calm_node + s.lost_calm_elsewhere, 0, 1e-12);
}
END_TEST

/*
 * Host-side load spread thin beside busy vCPUs costs what it costs in one place: one core of it over the
 * four siblings of a 4-vCPU busy domain's cores (a quarter each) loses what one busy thread beside one of
 * them does; on a core that runs nothing busy it costs nothing until it is more than one thread's worth.
 */
START_TEST(test_host_load_spread_thin)
{
        /* 1 node of 6 cores x 2 threads: a's busy vCPUs on PUs 0, 2, 4, 6 (cores 0-3) */
        g_autoptr(Topology) t = topology_new_uniform(1, 6, 2, 8 * GiB, NULL);
        g_autoptr(Plan) a = plan_new("a", 4, GiB, t->nnodes);
        ContentionDomain d[] = {{.plan = a, .busy = 1, .host = 1}};
        ContentionSample thin, one, calm;

        for (unsigned v = 0; v < 4; v++) {
                a->vcpu_pu[v] = (int)(2 * v);
                cpuset_add(a->emulator_pin, t->pus[2 * v + 1].os_index);
        }
        thin = contention_measure(t, d, 1, 0.4);
        ck_assert_double_eq_tol(thin.capacity_lost, 0.8, 1e-12);
        ck_assert_double_eq_tol(thin.host_lost, 0.8, 1e-12);
        ck_assert_uint_eq(thin.busy_contended, 0); /* no PU half busy */
        cpuset_clear(a->emulator_pin);
        cpuset_add(a->emulator_pin, t->pus[1].os_index);
        one = contention_measure(t, d, 1, 0.4);
        ck_assert_double_eq_tol(one.capacity_lost, thin.capacity_lost, 1e-12);
        ck_assert_uint_eq(one.busy_contended, 1);
        cpuset_clear(a->emulator_pin); /* core 4: nothing busy there */
        cpuset_add(a->emulator_pin, t->pus[8].os_index);
        cpuset_add(a->emulator_pin, t->pus[9].os_index);
        calm = contention_measure(t, d, 1, 0.4);
        ck_assert_double_eq_tol(calm.capacity_lost, 0, 1e-12);
        d[0].host = 1.6; /* more than one thread's worth on one core: 0.6 of a busy pair */
        calm = contention_measure(t, d, 1, 0.4);
        ck_assert_double_eq_tol(calm.capacity_lost, 0.6 * 0.8, 1e-12);
        ck_assert_double_eq_tol(calm.host_lost, 0.6 * 0.8, 1e-12);
}
END_TEST

/* Host-side load enters the bound as divisible load: two busy vCPUs and one core of host-side work on
 * two cores of two threads must put a busy thread's worth beside busy vCPUs somewhere (0.8 cores), and
 * a placement that halves it between the two cores loses exactly that. */
START_TEST(test_bound_with_host)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 2, 8 * GiB, NULL);
        g_autoptr(Plan) a = plan_new("a", 2, GiB, t->nnodes);
        ContentionDomain d[] = {{.plan = a, .busy = 1, .host = 1}};
        ContentionSample s;

        ck_assert_double_eq_tol(contention_bound(t, 2, 0, 0.4, NULL, NULL), 0, 1e-12);
        ck_assert_double_eq_tol(contention_bound(t, 2, 1.0, 0.4, NULL, NULL), 0.8, 1e-12);
        ck_assert_double_eq_tol(contention_bound(t, 1, 1.0, 0.4, NULL, NULL), 0, 1e-12);
        /* four busy vCPUs fill both cores; half a core more is half of a third thread's 1.0 */
        ck_assert_double_eq_tol(contention_bound(t, 4, 0.5, 0.4, NULL, NULL), 1.6 + 0.5, 1e-12);
        a->vcpu_pu[0] = 0;
        a->vcpu_pu[1] = 2;
        cpuset_add(a->emulator_pin, t->pus[1].os_index);
        cpuset_add(a->emulator_pin, t->pus[3].os_index);
        s = contention_measure(t, d, 1, 0.4);
        ck_assert_double_eq_tol(s.host_load, 1.0, 1e-12);
        ck_assert_double_eq_tol(s.capacity_lost, contention_bound(t, 2, s.host_load, 0.4, NULL, NULL),
                                1e-12);
}
END_TEST

/* Each domain's host-side load is counted up to LOAD_HOST_BUSY_MAX, not a core's: two domains of 1024
 * cores each on one single-PU core lose 2048 cores beside their two busy vCPUs' 1, which the bound (the
 * sum of what every core holds) counts; scored as 1024 of it, the run lost less than no placement can. */
START_TEST(test_bound_host_past_limit_on_one_core)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 1, 1, 8 * GiB, NULL);
        g_autoptr(Plan) a = plan_new("a", 1, GiB, t->nnodes), b = plan_new("b", 1, GiB, t->nnodes);
        ContentionDomain d[] = {{.plan = a, .busy = 1, .host = 1024}, {.plan = b, .busy = 1, .host = 1024}};
        ContentionSample s;
        double bound;

        a->vcpu_pu[0] = 0;
        b->vcpu_pu[0] = 0;
        s = contention_measure(t, d, 2, 0.4);
        ck_assert_double_eq_tol(s.host_load, 2048, 1e-9);
        bound = contention_bound(t, s.busy_vcpus, s.host_load, 0.4, NULL, NULL);
        ck_assert_double_eq_tol(bound, 2049, 1e-9);
        ck_assert_msg(bound <= s.capacity_lost + 1e-9, "bound %.1f above the run's %.1f", bound,
                      s.capacity_lost);
        ck_assert_double_eq_tol(s.capacity_lost, 2049, 1e-9);
}
END_TEST

/* The greedy a layer at a time, as the bound once ran it: the reference for the sum in one step. */
static double layers_one_by_one(const Topology *t, double amount, double loss, unsigned *ret_paired)
{
        unsigned count[4] = {0}, layer[4] = {0}, paired = 0;
        double lost = 0, left = amount;

        for (unsigned c = 0; c < t->ncores; c++)
                count[MIN(t->cores[c].npus, 3u)]++;
        while (left > 1e-12) {
                int best = -1;
                double best_cost = INFINITY, take;
                for (unsigned size = 0; size < 4; size++) {
                        double cost = contention_core_lost(layer[size] + 1, size, loss) -
                                      contention_core_lost(layer[size], size, loss);
                        if (count[size] && cost < best_cost) {
                                best = (int)size;
                                best_cost = cost;
                        }
                }
                take = MIN(left, count[best]);
                paired += layer[best] == 1 ? 2 * (unsigned)take : layer[best] >= 2 ? (unsigned)take : 0;
                lost += take * best_cost;
                left -= take;
                layer[best]++;
        }
        *ret_paired = paired;
        return lost;
}

/* Threads past two per core cost a whole thread each, summed at once: the values of the layer-by-layer
 * greedy, and a bound of a million million threads' worth in no time (one layer at a time it never
 * ended: a trace of a thousand domains of 4096 host-side cores on one core took 42 s). */
START_TEST(test_bound_many_layers)
{
        static const struct {
                unsigned cores, threads;
        } hosts[] = {{1, 1}, {1, 2}, {3, 2}, {4, 1}};

        for (unsigned h = 0; h < G_N_ELEMENTS(hosts); h++) {
                g_autoptr(Topology) t =
                    topology_new_uniform(1, hosts[h].cores, hosts[h].threads, 8 * GiB, NULL);
                for (unsigned busy = 0; busy < 40; busy++)
                        for (double host = 0; host < 3; host += 0.75)
                                for (double loss = 0; loss <= 1.0; loss += 0.2) {
                                        unsigned paired = 0, want_paired = 0;
                                        double want = layers_one_by_one(t, busy + host, loss, &want_paired);
                                        ck_assert_double_eq_tol(
                                            contention_bound(t, busy, host, loss, NULL, NULL), want, 1e-9);
                                        want = layers_one_by_one(t, busy, loss, &want_paired);
                                        contention_bound(t, busy, 0, loss, NULL, &paired);
                                        ck_assert_uint_eq(paired, want_paired);
                                }
        }
        {
                g_autoptr(Topology) t = topology_new_uniform(1, 1, 2, 8 * GiB, NULL);
                unsigned paired = 0;
                /* a busy pair loses 0.8, every further thread a whole one */
                ck_assert_double_eq_tol(contention_bound(t, 4000000000u, 1e12, 0.4, NULL, &paired),
                                        0.8 + (4e9 + 1e12 - 2), 1e-3);
                ck_assert_uint_eq(paired, 4000000000u);
        }
}
END_TEST

/* The replay's diagnosis switch oracle_load: the engine sees the true load at the first placement. A busy
 * domain whose host-side threads keep 1.5 cores busy, placed before they are measured on a host that
 * keeps CPUs for the host (ReservedCPUs=, so not counted as LOAD_HOST_UNMEASURED), has them on its own
 * core's sibling (a busy pair and half a third busy thread on one core of two PUs: 2.5 cores asked of it,
 * 1.2 delivered, 1.3 lost, all of it to host threads); known at once, they get cores of their own. Without
 * the reserve they start on cores of their own as well, counted as one core busy until measured. Heal is
 * off, so the first plan holds. */
START_TEST(test_replay_oracle_load)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Config) c = config_new_default();
        g_autoptr(GPtrArray) trace = NULL;
        g_autofree char *error = NULL;
        SimParams p;
        SimReport unknown, known, presumed;

        ck_assert_int_eq(trace_parse("start a 1 1G busy=1 host=1.5\ntick 100\n", "t", &trace, &error), 0);
        cpuset_add(c->placement.reserved_cpus, 7);
        sim_params_from_config(&p, c);
        p.heal = false;
        ck_assert_int_eq(sim_replay(t, &p, trace, &unknown, &error), 0);
        ck_assert_double_eq_tol(unknown.capacity_lost, 1.3, 1e-9);
        ck_assert_double_eq_tol(unknown.host_capacity_lost, 1.3, 1e-9);
        p.oracle_load = true;
        ck_assert_int_eq(sim_replay(t, &p, trace, &known, &error), 0);
        ck_assert_double_eq_tol(known.capacity_lost, 0, 1e-9);
        ck_assert_double_eq_tol(known.host_capacity_lost, 0, 1e-9);
        cpuset_clear(c->placement.reserved_cpus);
        sim_params_from_config(&p, c);
        p.heal = false;
        ck_assert_int_eq(sim_replay(t, &p, trace, &presumed, &error), 0);
        ck_assert_double_eq_tol(presumed.capacity_lost, 0, 1e-9);
}
END_TEST

/* Once every load is learned and no heal pass is armed, a long tick goes to its last measurements at
 * once: the figures those measurements one at a time give, on a trace whose loads settle between its
 * events (the jump covers most of each tick). */
START_TEST(test_replay_settled_jump)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 4 * GiB, NULL);
        g_autoptr(Config) c = config_new_default();
        g_autoptr(GPtrArray) trace = NULL;
        g_autofree char *error = NULL;
        SimParams p;
        SimReport jump, step;

        ck_assert_int_eq(trace_parse("start a 2 1G busy=1 host=0.3\nstart b 2 1G busy=0.7\n"
                                     "start c 2 1G busy=0.6 host=0.1\ntick 1000\nload b busy=0.9\n"
                                     "tick 5000.5\nstop b\ntick 3000.25\nload c busy=0.123456789123\n"
                                     "tick 86400\n",
                                     "t", &trace, &error),
                         0);
        sim_params_from_config(&p, c);
        ck_assert_int_eq(sim_replay(t, &p, trace, &jump, &error), 0);
        p.step_every_sample = true;
        ck_assert_int_eq(sim_replay(t, &p, trace, &step, &error), 0);
        ck_assert_double_eq_tol(jump.seconds, step.seconds, 1e-9);
        ck_assert_uint_eq(jump.moves, step.moves);
        ck_assert_uint_eq(jump.host_thread_moves, step.host_thread_moves);
        ck_assert_uint_eq(jump.largest_fit_min, step.largest_fit_min);
        ck_assert_double_eq_tol(jump.capacity_lost, step.capacity_lost, 1e-12);
        ck_assert_double_eq_tol(jump.bound_capacity_lost, step.bound_capacity_lost, 1e-12);
        ck_assert_double_eq_tol(jump.shared_vcpu_fraction, step.shared_vcpu_fraction, 1e-12);
        ck_assert_double_eq_tol(jump.busy_contended_fraction, step.busy_contended_fraction, 1e-12);
        ck_assert_double_eq_tol(jump.busy_vcpus_mean, step.busy_vcpus_mean, 1e-12);
        ck_assert_double_eq_tol(jump.largest_fit_mean, step.largest_fit_mean, 1e-12);
        ck_assert_double_eq_tol(jump.mean_memory_distance, step.mean_memory_distance, 1e-12);
        ck_assert_uint_gt(jump.moves, 0); /* a case where heal works between the long stretches */
}
END_TEST

/* A year's tick of 100 settled domains, ten times over: a few measurements each, not six million. */
START_TEST(test_replay_settled_years)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 8, 2, 64 * GiB, NULL);
        g_autoptr(Config) c = config_new_default();
        g_autoptr(GString) text = g_string_new(NULL);
        g_autoptr(GPtrArray) trace = NULL;
        g_autofree char *error = NULL;
        SimParams p;
        SimReport r;

        for (unsigned i = 0; i < 100; i++)
                g_string_append_printf(text, "start d%u 1 1M busy=0.%u\n", i, i % 10);
        for (unsigned i = 0; i < 10; i++)
                g_string_append(text, "tick 31536000\n");
        ck_assert_int_eq(trace_parse(text->str, "t", &trace, &error), 0);
        sim_params_from_config(&p, c);
        ck_assert_int_eq(sim_replay(t, &p, trace, &r, &error), 0);
        ck_assert_double_eq_tol(r.seconds, 10 * 31536000.0, 1e-3);
        ck_assert_double_eq_tol(r.busy_vcpus_mean, 50, 1e-3); /* busy=0.5 to 0.9: half of them */
}
END_TEST

/* A replay's error names the domain as plan does: a bidi override or a C1 control in a trace's name is
 * escaped, not handed to the terminal (check_name() refuses only ASCII controls). */
START_TEST(test_replay_error_name_escaped)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 2, 8 * GiB, NULL);
        g_autoptr(Config) c = config_new_default();
        g_autoptr(GPtrArray) trace = NULL;
        g_autofree char *error = NULL;
        SimParams p;
        SimReport r;

        /* U+202E (a right-to-left override) and U+009B (a C1 control: CSI) */
        ck_assert_int_eq(trace_parse("start a\xe2\x80\xae"
                                     "evil\xc2\x9b"
                                     "31m 2 1G\nstop nobody\xe2\x80\xae"
                                     "fdp.exe\n",
                                     "t", &trace, &error),
                         0);
        sim_params_from_config(&p, c);
        ck_assert_int_eq(sim_replay(t, &p, trace, &r, &error), -EINVAL);
        ck_assert_msg(strstr(error, "stop nobody\\u{202e}fdp.exe: "), "%s", error);
        ck_assert_msg(!strstr(error, "\xe2\x80\xae") && !strstr(error, "\xc2\x9b"), "%s", error);
}
END_TEST

/* The least capacity lost over every assignment of the vCPUs (busy[i] each) to the host's PUs, and the
 * fewest busy vCPUs contending among the assignments that lose that little. */
static double enumerate_best(const Topology *t, const double *busy, unsigned nvcpus, unsigned *ret_contended)
{
        g_autoptr(Plan) p = plan_new("all", nvcpus, 0, t->nnodes);
        g_autofree ContentionDomain *d = g_new0(ContentionDomain, nvcpus);
        g_autofree Plan **single = g_new0(Plan *, nvcpus);
        unsigned total = 1;
        double best = G_MAXDOUBLE;

        for (unsigned v = 0; v < nvcpus; v++) {
                single[v] = plan_new("one", 1, 0, t->nnodes);
                d[v] = (ContentionDomain){.plan = single[v], .busy = busy[v]};
                total *= t->npus;
        }
        for (unsigned code = 0; code < total; code++) {
                unsigned c = code;
                for (unsigned v = 0; v < nvcpus; v++, c /= t->npus)
                        single[v]->vcpu_pu[0] = (int)(c % t->npus);
                ContentionSample cs = contention_measure(t, d, nvcpus, 0.4);
                if (cs.capacity_lost < best - 1e-9 ||
                    (cs.capacity_lost < best + 1e-9 && cs.busy_contended < *ret_contended)) {
                        best = MIN(best, cs.capacity_lost);
                        *ret_contended = cs.busy_contended;
                }
        }
        for (unsigned v = 0; v < nvcpus; v++)
                plan_free(single[v]);
        return best;
}

/* On hosts small enough to try every placement, the bound is at most the best one (and here equal). */
START_TEST(test_bound_against_every_placement)
{
        static const struct {
                unsigned cores, threads;
                double busy[6];
                unsigned n;
        } cases[] = {
            {2, 2, {1, 1, 1, 0}, 4},
            {2, 2, {1, 1, 1, 1, 1}, 5},
            {3, 2, {1, 1, 0.2, 1, 1}, 5},
            {2, 1, {1, 1, 1}, 3},
            {3, 2, {0.7, 0.7, 0.7, 0.7, 0.7, 0.7}, 6},
            {3, 2, {1, 1, 1, 1, 0.1}, 5},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Topology) t =
                    topology_new_uniform(1, cases[i].cores, cases[i].threads, 4 * GiB, NULL);
                unsigned busy = 0, contended, paired, best_contended = G_MAXUINT;
                double best, bound;

                for (unsigned v = 0; v < cases[i].n; v++)
                        busy += cases[i].busy[v] >= 0.5;
                best = enumerate_best(t, cases[i].busy, cases[i].n, &best_contended);
                bound = contention_bound(t, busy, 0, 0.4, &contended, &paired);
                ck_assert_msg(paired == best_contended, "case %u: %u contend where it loses least, not %u",
                              i, best_contended, paired);
                ck_assert_msg(bound <= best + 1e-9, "case %u: bound %.3f above the best placement %.3f", i,
                              bound, best);
                ck_assert_msg(bound >= best - 1e-9, "case %u: bound %.3f below the best placement %.3f", i,
                              bound, best);
        }
}
END_TEST

/* Random traces on a tiny host: no policy of the engine, with or without heal and load, beats the bound. */
START_TEST(test_bound_below_every_policy)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 2, 2, 8 * GiB, NULL);
        g_autoptr(GRand) r = g_rand_new_with_seed(7);

        for (unsigned round = 0; round < 20; round++) {
                GString *text = g_string_new(NULL);
                g_autoptr(GPtrArray) trace = NULL;
                g_autofree char *error = NULL;
                g_autofree char *body = NULL;

                for (unsigned i = 0; i < 12; i++) {
                        g_string_append_printf(text, "start d%u %d 1G busy=%.2f host=%.2f\ntick %d\n", i,
                                               g_rand_int_range(r, 1, 4), g_rand_double(r),
                                               i % 3 ? 0 : 1.5 * g_rand_double(r),
                                               g_rand_int_range(r, 1, 30));
                        if (i >= 3)
                                g_string_append_printf(text, "stop d%u\n", i - 3);
                }
                body = g_string_free(text, FALSE);
                ck_assert_int_eq(trace_parse(body, "random", &trace, &error), 0);
                for (unsigned k = 0; k < _POLICY_MAX; k++)
                        for (unsigned mode = 0; mode < 4; mode++) {
                                g_autoptr(Config) c = config_new_default();
                                SimParams p;
                                SimReport rep;
                                g_autofree char *err = NULL;

                                c->placement.policy = (PolicyKind)k;
                                sim_params_from_config(&p, c);
                                p.heal = mode & 1;
                                p.use_load = mode & 2;
                                ck_assert_int_eq(sim_replay(t, &p, trace, &rep, &err), 0);
                                ck_assert_msg(rep.bound_capacity_lost <= rep.capacity_lost + 1e-9,
                                              "round %u, %s, mode %u: bound %.4f above %.4f", round,
                                              policy_kind_to_string(k), mode, rep.bound_capacity_lost,
                                              rep.capacity_lost);
                                ck_assert(rep.bound_busy_contended_fraction <=
                                          rep.busy_contended_fraction + 1e-9);
                        }
        }
}
END_TEST

static Suite *bound_suite(void)
{
        Suite *s = suite_create("bound");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_core_lost);
        tcase_add_test(tc, test_host_lost);
        tcase_add_test(tc, test_lost_by_calm_core);
        tcase_add_test(tc, test_host_load_spread_thin);
        tcase_add_test(tc, test_bound_with_host);
        tcase_add_test(tc, test_bound_host_past_limit_on_one_core);
        tcase_add_test(tc, test_bound_many_layers);
        tcase_add_test(tc, test_replay_oracle_load);
        tcase_add_test(tc, test_replay_settled_jump);
        tcase_add_test(tc, test_replay_settled_years);
        tcase_add_test(tc, test_replay_error_name_escaped);
        tcase_add_test(tc, test_bound_against_every_placement);
        tcase_add_test(tc, test_bound_below_every_policy);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(bound_suite)
