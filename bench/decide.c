/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decide.h"
#include "config.h"
#include "policy.h"
#include "util.h"
#include "workload.h"

unsigned fill_ledger(Ledger *l, const Topology *t, double target, guint32 seed, unsigned size)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(seed);
        g_autoptr(Config) c = config_new_default();
        unsigned want = (unsigned)(target * t->ncores + 0.5), have = 0, misses = 0, n = 0;

        while (have < want && misses < 200) {
                unsigned room = want - have;
                PlacementRequest req = {.vcpus = size ? MIN(size, room) : workload_draw_vcpus(r, room)};
                g_autofree char *name = g_strdup_printf("fill%u", n);
                Plan *p;

                req.name = name;
                req.memory = size ? req.vcpus * 2 * GiB : workload_draw_memory(r, req.vcpus);
                p = policy_place(t, l, &req, &c->placement);
                if (p->result != PLAN_PLACED) {
                        plan_free(p);
                        misses++;
                        continue;
                }
                ledger_commit(l, name, p);
                have += req.vcpus;
                n++;
        }
        return n;
}

DecisionTiming time_decisions(const Topology *t, Ledger **states, unsigned nstates, PolicyKind policy,
                              unsigned vcpus, unsigned reps, unsigned budget_ms)
{
        g_autoptr(Config) c = config_new_default();
        PlacementRequest req = {.name = "probe", .vcpus = vcpus, .memory = vcpus * 4 * GiB};
        g_autofree double *us = g_new(double, reps);
        uint64_t start = bench_now_ns(), budget = (uint64_t)budget_ms * 1000000u;
        DecisionTiming cell = {0};
        unsigned n = 0;

        c->placement.policy = policy;
        /* one untimed call warms caches and tells what the decision was */
        {
                g_autoptr(Plan) p = policy_place(t, states[0], &req, &c->placement);
                g_autoptr(CpuSet) used = cpuset_new();
                cell.result = p->result;
                for (unsigned v = 0; v < p->nvcpus; v++)
                        if (p->vcpu_pu[v] >= 0)
                                cpuset_add(used, t->cores[t->pus[p->vcpu_pu[v]].core].node);
                cell.nodes = cpuset_count(used);
        }
        while (n < reps && (n < DECISIONS_MIN || bench_now_ns() - start < budget)) {
                const Ledger *l = states[n % nstates];
                uint64_t t0 = bench_now_ns();
                Plan *p = policy_place(t, l, &req, &c->placement);
                uint64_t t1 = bench_now_ns();
                plan_free(p);
                us[n++] = (double)(t1 - t0) / 1e3;
        }
        cell.samples = n;
        cell.max = bench_percentile(us, n, 100);
        cell.p50 = bench_percentile(us, n, 50);
        cell.p99 = bench_percentile(us, n, 99);
        return cell;
}
