/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decide.h"
#include "config.h"
#include "policy.h"
#include "util.h"
#include "workload.h"

#include <string.h>

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

static gint compare_keys(gconstpointer a, gconstpointer b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* What the resident domains of l keep busy per PU: every other domain (in key order) busy. */
static double *resident_pu_busy(const Topology *t, const Ledger *l)
{
        g_autoptr(GPtrArray) keys = ledger_keys(l);
        double *pu_busy = g_new0(double, MAX(t->npus, 1));

        g_ptr_array_sort(keys, compare_keys);
        for (unsigned k = 0; k < keys->len; k++) {
                const Plan *p = ledger_lookup(l, g_ptr_array_index(keys, k));
                for (unsigned v = 0; v < p->nvcpus; v++)
                        if (p->vcpu_pu[v] >= 0)
                                pu_busy[p->vcpu_pu[v]] += k % 2 ? 0.1 : 0.8;
        }
        return pu_busy;
}

static DecisionTiming time_some(const Topology *t, Ledger **states, unsigned nstates, PolicyKind policy,
                                unsigned vcpus, unsigned reps, unsigned budget_ms, bool loaded)
{
        g_autoptr(Config) c = config_new_default();
        PlacementRequest req = {.name = "probe", .vcpus = vcpus, .memory = vcpus * 4 * GiB};
        g_autofree double *us = g_new(double, reps);
        g_autofree double *busy = g_new(double, MAX(vcpus, 1));
        g_autofree double **pu_busy = g_new0(double *, MAX(nstates, 1));
        uint64_t start = bench_now_ns(), budget = (uint64_t)budget_ms * 1000000u;
        DecisionTiming cell = {0};
        unsigned n = 0;

        c->placement.policy = policy;
        for (unsigned v = 0; v < vcpus; v++)
                busy[v] = v % 2 ? 0.1 : 0.9;
        for (unsigned k = 0; loaded && k < nstates; k++)
                pu_busy[k] = resident_pu_busy(t, states[k]);
        req.vcpu_busy = loaded ? busy : NULL;
        req.pu_busy = pu_busy[0];
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
                uint64_t t0, t1;
                Plan *p;

                req.pu_busy = pu_busy[n % nstates];
                t0 = bench_now_ns();
                p = policy_place(t, l, &req, &c->placement);
                t1 = bench_now_ns();
                plan_free(p);
                us[n++] = (double)(t1 - t0) / 1e3;
        }
        for (unsigned k = 0; k < nstates; k++)
                g_free(pu_busy[k]);
        cell.samples = n;
        cell.max = bench_percentile(us, n, 100);
        cell.p50 = bench_percentile(us, n, 50);
        cell.p99 = bench_percentile(us, n, 99);
        return cell;
}

DecisionTiming time_decisions(const Topology *t, Ledger **states, unsigned nstates, PolicyKind policy,
                              unsigned vcpus, unsigned reps, unsigned budget_ms)
{
        return time_some(t, states, nstates, policy, vcpus, reps, budget_ms, false);
}

DecisionTiming time_decisions_loaded(const Topology *t, Ledger **states, unsigned nstates, PolicyKind policy,
                                     unsigned vcpus, unsigned reps, unsigned budget_ms)
{
        return time_some(t, states, nstates, policy, vcpus, reps, budget_ms, true);
}
