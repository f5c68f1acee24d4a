/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Measured load where it decides: busy vCPUs and busy host threads first when cores are short. */
#include "load-rules.h"

#include "load.h"

#include <stdlib.h>
#include <string.h>

static double vcpu_busy(const PlacementRequest *req, unsigned i)
{
        return req->vcpu_busy ? req->vcpu_busy[i] : 1.0;
}

unsigned load_busy_key(double b)
{
        return (unsigned)MIN(b * 100 + 0.5, 1e6);
}

bool load_overcommit_applies(const HostView *v, bool by_core)
{
        return by_core && v->req && (v->req->vcpu_busy || v->req->pu_busy);
}

/* What the ledger's domains keep busy on core c: the measured sum, or a busy vCPU per counted vCPU. */
double load_core_busy(const HostView *v, unsigned c)
{
        const TopoCore *core = &v->t->cores[c];
        double sum = 0;

        if (!v->req->pu_busy)
                return ledger_core_load(v->l, c);
        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                sum += v->req->pu_busy[p];
        return sum;
}

bool load_core_held(const HostView *v, unsigned c)
{
        return v->req && v->req->pu_busy && load_core_busy(v, c) >= LOAD_BUSY_THRESHOLD;
}

/* A core a busy vCPU may take without contending: free, or (measured) under half busy in all. */
static bool core_calm(const HostView *v, unsigned c)
{
        return v->core_free[c] ||
               (v->req->pu_busy && !policy_core_reserved(v, c) && policy_core_first_usable_pu(v, c) >= 0 &&
                load_core_busy(v, c) < LOAD_BUSY_THRESHOLD);
}

unsigned load_calm_capacity(HostView *v)
{
        const Topology *t = v->t;
        unsigned busy = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                v->node_capacity[n] = 0;
        for (unsigned c = 0; c < t->ncores; c++)
                if (core_calm(v, c) && v->node_allowed[t->cores[c].node])
                        v->node_capacity[t->cores[c].node]++;
        for (unsigned i = 0; i < v->req->vcpus; i++)
                busy += vcpu_busy(v->req, i) >= LOAD_BUSY_THRESHOLD;
        return busy;
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Up to this many cores a node's loads are sorted in place, without qsort()'s callback per comparison. */
#define SORT_INSERTION_MAX 64u

/* a[0..n) least first. */
static void sort_ascending(double *a, unsigned n)
{
        if (n > SORT_INSERTION_MAX) {
                qsort(a, n, sizeof(*a), compare_double);
                return;
        }
        for (unsigned i = 1; i < n; i++) {
                double x = a[i];
                unsigned j = i;
                for (; j > 0 && a[j - 1] > x; j--)
                        a[j] = a[j - 1];
                a[j] = x;
        }
}

/* Whether core c is one a busy vCPU beyond the calm cores may share: allowed, usable, not calm (a core
 * with a reserved thread included: its other threads take vCPUs when the domain has no room otherwise). */
static bool busy_core(const HostView *v, unsigned c)
{
        return v->node_allowed[v->t->cores[c].node] && !core_calm(v, c) &&
               policy_core_first_usable_pu(v, c) >= 0;
}

void load_node_busy_cores(const HostView *v, NodeBusyCores *out)
{
        const Topology *t = v->t;
        g_autofree unsigned *next = g_new0(unsigned, t->nnodes + 1);

        out->first = g_new0(unsigned, t->nnodes + 1);
        out->load = g_new(double, MAX(t->ncores, 1));
        for (unsigned c = 0; c < t->ncores; c++)
                if (busy_core(v, c))
                        out->first[t->cores[c].node + 1]++;
        for (unsigned n = 0; n < t->nnodes; n++)
                out->first[n + 1] += out->first[n];
        memcpy(next, out->first, sizeof(unsigned) * (t->nnodes + 1));
        for (unsigned c = 0; c < t->ncores; c++)
                if (busy_core(v, c))
                        out->load[next[t->cores[c].node]++] =
                            load_core_busy(v, c) + (ledger_core_realtime(v->l, c) ? LOAD_REALTIME_CORE : 0) +
                            (policy_core_reserved(v, c) ? LOAD_RESERVED_CORE : 0) +
                            (policy_core_wholly_held(v, c) ? LOAD_HELD_CORE : 0);
        for (unsigned n = 0; n < t->nnodes; n++)
                sort_ascending(out->load + out->first[n], out->first[n + 1] - out->first[n]);
}

void load_node_busy_cores_clear(NodeBusyCores *c)
{
        g_clear_pointer(&c->load, g_free);
        g_clear_pointer(&c->first, g_free);
}

/* What core c would run busy: what the ledger's domains keep busy there (as measured), plus plan's own
 * vCPUs on it; *ret_own whether plan has a vCPU there, *ret_own_busy a busy one. */
static double busy_with_plan(const HostView *v, const Plan *plan, unsigned c, bool *ret_own,
                             bool *ret_own_busy)
{
        double sum = v->req->pu_busy ? load_core_busy(v, c) : ledger_core_load(v->l, c);

        *ret_own = *ret_own_busy = false;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && v->t->pus[plan->vcpu_pu[i]].core == c) {
                        sum += vcpu_busy(v->req, i);
                        *ret_own = true;
                        *ret_own_busy |= vcpu_busy(v->req, i) >= LOAD_BUSY_THRESHOLD;
                }
        return sum;
}

/* The core for busy host-side threads among nodes, not in taken, that runs nothing busy: a free one
 * first (free_first) or last, then the least busy with other domains' threads; -1 when none. */

static int pick_host_core_in(const HostView *v, const Plan *plan, const CpuSet *nodes, const CpuSet *taken,
                             bool free_first)
{
        const Topology *t = v->t;
        double best_busy = 0;
        bool best_free = false;
        int best = -1;

        CPUSET_FOREACH (n, nodes) {
                const TopoNode *node = &t->nodes[n];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        bool own, own_busy, is_free;
                        double b = busy_with_plan(v, plan, c, &own, &own_busy);
                        is_free = v->core_free[c] && !own;
                        if (own_busy || b >= LOAD_BUSY_THRESHOLD || cpuset_has(taken, c) ||
                            policy_core_first_usable_pu(v, c) < 0 || ledger_core_realtime(v->l, c) ||
                            policy_own_realtime_core(v, plan, c)) /* a spinning FIFO vCPU starves them */
                                continue;
                        if (best < 0 || (is_free != best_free && is_free == free_first) ||
                            (is_free == best_free && b < best_busy)) {
                                best = (int)c;
                                best_busy = b;
                                best_free = is_free;
                        }
                }
        }
        return best;
}

static int pick_host_core(const HostView *v, const Plan *plan, const CpuSet *taken, bool free_first)
{
        return pick_host_core_in(v, plan, plan->nodes, taken, free_first);
}

/* When plan's nodes have no core for them: such a core on the allowed nodes nearest to plan's nodes that
 * have one, chosen among them as pick_host_core_in() chooses (a free core first, then the least busy,
 * then the lowest); -1 when none. */
static int nearest_host_core(const HostView *v, const Plan *plan, const CpuSet *taken)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) one = cpuset_new();
        g_autoptr(CpuSet) nearest = cpuset_new();
        uint32_t best_distance = UINT32_MAX;

        for (unsigned n = 0; n < t->nnodes; n++) {
                uint32_t d = UINT32_MAX;
                if (cpuset_has(plan->nodes, n) || !v->node_allowed[n])
                        continue;
                CPUSET_FOREACH (h, plan->nodes)
                        d = MIN(d, topology_distance(t, (unsigned)h, n));
                if (d >= TOPOLOGY_UNREACHABLE || d > best_distance)
                        continue;
                cpuset_clear(one);
                cpuset_add(one, n);
                if (pick_host_core_in(v, plan, one, taken, true) < 0)
                        continue;
                if (d < best_distance)
                        cpuset_clear(nearest);
                cpuset_add(nearest, n);
                best_distance = d;
        }
        return cpuset_is_empty(nearest) ? -1 : pick_host_core_in(v, plan, nearest, taken, true);
}

/* The busy threads' worth the cores under set (OS indexes) deliver: per core, the PUs of set there, two
 * at most (load_core_threads()). A core of four or eight threads runs two busy threads' worth, not four
 * or eight. */
static unsigned pin_threads(const Topology *t, const CpuSet *set)
{
        g_autofree unsigned *on_core = g_new0(unsigned, MAX(t->ncores, 1));
        unsigned n = 0;

        CPUSET_FOREACH (os, set) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0)
                        on_core[t->pus[pu].core]++;
        }
        for (unsigned c = 0; c < t->ncores; c++)
                n += load_core_threads(on_core[c]);
        return MAX(n, 1u);
}

/* Whether req's host-side threads count as LOAD_HOST_UNMEASURED cores busy: not measured yet, where
 * EmulatorPin=siblings would put them beside its vCPUs and the host keeps no CPUs for such threads (a
 * realtime guest's already keep off its FIFO vCPUs' siblings, by their own rule). */
static bool host_unmeasured(const HostView *v)
{
        const PlacementRequest *req = v->req;

        return req->host_unmeasured && !req->vcpu_busy && !req->realtime &&
               v->params->emulator_pin == EMULATOR_PIN_SIBLINGS &&
               (!v->params->housekeeping_cpus || cpuset_is_empty(v->params->housekeeping_cpus)) &&
               (!v->params->reserved_cpus || cpuset_is_empty(v->params->reserved_cpus));
}

/*
 * Busy host-side threads beside a busy vCPU cost both, from a quarter of a core on (LOAD_HOST_REPIN_GAIN:
 * what heal re-pins them alone for; 0.3 cores of vhost over a busy guest's siblings is beside its busy
 * vCPUs however thinly spread). They get a core no busy vCPU uses (see pick_host_core()), and further
 * such cores, free ones first, then ones whose vCPUs are idle, while their load would keep each thread's
 * worth their cores deliver at least LOAD_BUSY_THRESHOLD busy (1.5 cores of vhost on one core of two threads
 * is a busy pair; over two cores no thread is half busy). A core counts as the threads it delivers
 * (pin_threads()): on a core of four or eight threads, 1.5 cores of them are the same busy pair, so they
 * get a further core there as on two threads. When plan's nodes have no (further) such core, the
 * nearest allowed node's (nearest_host_core()). When no further core is left they keep what they have: a
 * busy vCPU's sibling would put part of their load beside a busy vCPU, which costs more than the same
 * share beside nothing busy (contention.h). When none of the domain's vCPUs is busy, the siblings of its
 * own cores already run nothing busy: no free core is taken from a busy guest for them. Threads not
 * measured yet (host_unmeasured()) count as LOAD_HOST_UNMEASURED cores and stay on plan's nodes.
 */
bool load_pick_emulator(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        const PlacementRequest *req = v->req;
        g_autoptr(CpuSet) taken = cpuset_new();
        bool any_busy = false, unmeasured;
        double host;
        int c;

        if (!req)
                return false;
        unmeasured = host_unmeasured(v);
        host = unmeasured ? LOAD_HOST_UNMEASURED : req->vcpu_busy ? req->host_busy : 0;
        if (host < LOAD_HOST_REPIN_GAIN)
                return false;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                any_busy |= plan->vcpu_pu[i] >= 0 && vcpu_busy(req, i) >= LOAD_BUSY_THRESHOLD;
        if (!any_busy)
                return false;
        /* a load only presumed does not take its threads off the domain's nodes */
        for (bool first = true; ((c = pick_host_core(v, plan, taken, true)) >= 0 ||
                                 (!unmeasured && (c = nearest_host_core(v, plan, taken)) >= 0)) &&
                                (first || host / pin_threads(t, plan->emulator_pin) >= LOAD_BUSY_THRESHOLD);
             first = false) {
                cpuset_add(taken, (unsigned)c);
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (v->pu_usable[p])
                                cpuset_add(plan->emulator_pin, t->pus[p].os_index);
                if (cpuset_is_empty(plan->emulator_pin))
                        return false;
        }
        return !cpuset_is_empty(plan->emulator_pin);
}

/* Whether host cores of host-side load spread evenly over set (OS indexes) put a busy thread's worth
 * or more on some core beyond its first thread: two of set's PUs on a core at LOAD_BUSY_THRESHOLD each,
 * or one PU alone asked for twice that. */
static bool core_overloaded(const Topology *t, const CpuSet *set, double host)
{
        g_autofree unsigned *on_core = g_new0(unsigned, MAX(t->ncores, 1));
        double share = host / cpuset_count(set);

        CPUSET_FOREACH (os, set) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0 && ++on_core[t->pus[pu].core] * share >= 2 * LOAD_BUSY_THRESHOLD)
                        return true;
        }
        return false;
}

void load_spread_idle_host(const HostView *v, const Plan *plan, CpuSet *out, bool narrow)
{
        const Topology *t = v->t;
        const PlacementRequest *req = v->req;
        g_autoptr(CpuSet) taken = cpuset_new(), calm = cpuset_new();
        int c;

        if (!req || !req->vcpu_busy || req->host_busy < LOAD_HOST_REPIN_GAIN ||
            (!narrow && cpuset_is_empty(out)))
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && vcpu_busy(req, i) >= LOAD_BUSY_THRESHOLD)
                        return; /* load_pick_emulator() decides for a domain with a busy vCPU */
        /* not beside other domains' busy threads (its idle vCPUs may share their cores) */
        CPUSET_FOREACH (os, out) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                bool own, own_busy;
                if (pu < 0)
                        continue;
                cpuset_add(taken, t->pus[pu].core);
                if (!narrow ||
                    busy_with_plan(v, plan, t->pus[pu].core, &own, &own_busy) < LOAD_BUSY_THRESHOLD)
                        cpuset_add(calm, (unsigned)os);
        }
        while ((cpuset_is_empty(calm) || core_overloaded(t, calm, req->host_busy)) &&
               ((c = pick_host_core(v, plan, taken, false)) >= 0 ||
                (cpuset_is_empty(calm) && (c = nearest_host_core(v, plan, taken)) >= 0))) {
                cpuset_add(taken, (unsigned)c);
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (v->pu_usable[p])
                                cpuset_add(calm, t->pus[p].os_index);
        }
        if (cpuset_is_empty(calm))
                return;
        if (!narrow) {
                cpuset_union(out, calm);
                return;
        }
        /* on as few of those cores as carry them (the first in order), with all their calm threads: the
         * others run nothing of theirs */
        cpuset_clear(out);
        cpuset_clear(taken);
        CPUSET_FOREACH (os, calm) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                const TopoCore *core;
                if (pu < 0 || cpuset_has(taken, t->pus[pu].core))
                        continue;
                if (!cpuset_is_empty(out) && !core_overloaded(t, out, req->host_busy))
                        break;
                cpuset_add(taken, t->pus[pu].core);
                core = &t->cores[t->pus[pu].core];
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                        if (cpuset_has(calm, t->pus[p].os_index))
                                cpuset_add(out, t->pus[p].os_index);
        }
}

void load_note_reason(const HostView *v, bool by_core, Plan *plan)
{
        const PlacementRequest *req = v->req;
        bool busy_host = req && req->vcpu_busy && req->host_busy >= LOAD_HOST_REPIN_GAIN &&
                         !cpuset_is_empty(plan->emulator_pin);
        bool dedicated = busy_host, elsewhere = false, away = false, home = false;
        char *reason;

        for (unsigned i = 0; i < plan->nvcpus && dedicated; i++)
                dedicated = !cpuset_intersects(plan->emulator_pin, plan->vcpu_pins[i]);
        if (busy_host && !dedicated) /* a core of their own, and cores of its own idle vCPUs */
                CPUSET_FOREACH (os, plan->emulator_pin) {
                        int pu = topology_pu_by_os(v->t, (unsigned)os);
                        elsewhere |= pu >= 0 && !policy_own_core(v, plan, v->t->pus[pu].core);
                }
        if (busy_host)
                CPUSET_FOREACH (os, plan->emulator_pin) {
                        int pu = topology_pu_by_os(v->t, (unsigned)os);
                        away |= pu >= 0 && !cpuset_has(plan->nodes, v->t->cores[v->t->pus[pu].core].node);
                        home |= pu >= 0 && cpuset_has(plan->nodes, v->t->cores[v->t->pus[pu].core].node);
                }
        if (plan->result == PLAN_OVERCOMMITTED && load_overcommit_applies(v, by_core)) {
                /* its own vCPUs count as busy until they are measured; other domains' load decides too */
                reason = g_strdup_printf(
                    "%s; by %s: the set by its cores that run nothing busy, busy vCPUs on "
                    "the least busy cores, idle ones share",
                    plan->reason, req->vcpu_busy ? "measured load" : "load (its vCPUs busy until measured)");
                g_free(plan->reason);
                plan->reason = reason;
        }
        if (!busy_host && host_unmeasured(v) && !cpuset_is_empty(plan->emulator_pin)) {
                bool apart = true;
                for (unsigned i = 0; i < plan->nvcpus && apart; i++)
                        apart = !cpuset_intersects(plan->emulator_pin, plan->vcpu_pins[i]);
                if (apart) {
                        reason =
                            g_strdup_printf("%s; host-side threads on cores no vCPU uses: their load, not "
                                            "measured yet, counts as %.1f cores busy",
                                            plan->reason, LOAD_HOST_UNMEASURED);
                        g_free(plan->reason);
                        plan->reason = reason;
                }
        }
        if (dedicated || elsewhere) {
                reason = g_strdup_printf(
                    "%s; busy host-side threads (%.1f cores) on a core no busy vCPU uses%s%s", plan->reason,
                    req->host_busy,
                    away && home ? " and on the nearest node with more (none more was left on its own)"
                    : away       ? " of the nearest node with one (none was left on its own)"
                                 : "",
                    dedicated ? ""
                    : req->host_busy / cpuset_count(plan->emulator_pin) < LOAD_BUSY_THRESHOLD
                        ? " and beside its own vCPUs, no thread half busy"
                        : " and beside its own vCPUs");
                g_free(plan->reason);
                plan->reason = reason;
        }
}
