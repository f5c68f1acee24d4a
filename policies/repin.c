/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Re-pinning by measured load (policy.h): the smallest moves that stop a busy vCPU from sharing a core
 * with another busy thread. No memory moves, so heal tries them before placing the domain anew: first
 * a core of the vCPU's own node (or of its memory's nodes) that runs nothing busy; with `near`, when
 * none is left there, such a core on the nearest node that has one (cores first, then locality; a core
 * under half busy in all before one only less busy than what the vCPU leaves). vCPUs away from the
 * domain's memory go back to a free core of its memory's nodes when one is free.
 */
#include "policy.h"
#include "finish.h"
#include "load-rules.h"
#include "load.h"
#include "policy-internal.h"

typedef struct Repin {
        const HostView *v;
        double *busy;       /* [ncores] busy threads' load per core, the domain's vCPUs counted */
        double *pu_busy;    /* [npus] the same per PU */
        unsigned *load;     /* [ncores] vCPUs per core */
        unsigned *pu_load;  /* [npus] */
        CpuSet *home;       /* node indexes holding the domain's memory (its nodes without memory) */
        double leaving;     /* what stays busy on the core the vCPU being moved leaves (0: a free core) */
        const CpuSet *only; /* the CPUs the vCPU being moved may take (its reserved caches'); NULL: any */
        bool realtime;      /* the vCPU being moved is realtime: only a core without any vCPU takes it */
} Repin;

/* Whether PU p may take the vCPU being moved: usable, and under its reserved caches if it has some. */
static bool pu_fits(const Repin *r, unsigned p)
{
        return r->v->pu_usable[p] && (!r->only || cpuset_has(r->only, r->v->t->pus[p].os_index));
}

/* Whether core c has a PU that may take the vCPU being moved. */
static bool core_fits(const Repin *r, unsigned c)
{
        const TopoCore *core = &r->v->t->cores[c];

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (pu_fits(r, p))
                        return true;
        return false;
}

/*
 * Whether core c, other than from, runs nothing busy for the vCPU being moved: its threads together
 * under LOAD_BUSY_THRESHOLD; or, for a vCPU that leaves a busy thread behind (r->leaving), none of its
 * threads half busy and all of them together less busy than what it leaves (a core of several idle
 * vCPUs has no busy thread to pair with, and less to share than the busy one beside it now).
 */
static bool calm(const Repin *r, unsigned c, unsigned from)
{
        const TopoCore *core = &r->v->t->cores[c];
        bool quiet = r->busy[c] < LOAD_BUSY_THRESHOLD;

        if (!quiet && r->leaving >= LOAD_BUSY_THRESHOLD && r->busy[c] < r->leaving) {
                quiet = true;
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                        quiet &= r->pu_busy[p] < LOAD_BUSY_THRESHOLD;
        }
        /* a core of another domain's realtime vCPU is no core for anyone else (a FIFO vCPU starves what
         * shares it), and a realtime vCPU goes to no core another vCPU runs on */
        if (ledger_core_realtime(r->v->l, c) || (r->realtime && r->load[c]))
                return false;
        return c != from && quiet && !policy_core_reserved(r->v, c) && core_fits(r, c);
}

/* Whether a core or PU as busy as b with n vCPUs ranks before one as busy as best_b with best_n: less
 * busy (to the hundredth), then fewer vCPUs. */
static bool ranks_before(double b, unsigned n, double best_b, unsigned best_n)
{
        return load_busy_key(b) < load_busy_key(best_b) ||
               (load_busy_key(b) == load_busy_key(best_b) && n < best_n);
}

/* Whether core c ranks before core best (-1: none yet): less busy, then fewer vCPUs, then the order the
 * placement uses cores in (policy_core_class(): the most performant kind first, cores under an L3 before
 * those under none), so that a busy vCPU moves to a big core, not a LITTLE one, while one is as calm. */
static bool calmer(const Repin *r, unsigned c, int best)
{
        unsigned b = (unsigned)best;

        if (best < 0 || ranks_before(r->busy[c], r->load[c], r->busy[b], r->load[b]))
                return true;
        return !ranks_before(r->busy[b], r->load[b], r->busy[c], r->load[c]) &&
               policy_core_class(r->v, c) < policy_core_class(r->v, b);
}

/* The least busy core of node, other than from, that runs nothing busy and has a usable PU and no
 * reserved one (free_only: and no vCPU at all); ties: the fewest vCPUs, then the core class (calmer()),
 * then the lowest index. -1 when none. */
static int calm_core(const Repin *r, unsigned node, unsigned from, bool free_only)
{
        const TopoNode *n = &r->v->t->nodes[node];
        int best = -1;

        for (unsigned c = n->core_first; c < n->core_first + n->ncores; c++) {
                if (!calm(r, c, from) || (free_only && r->load[c]))
                        continue;
                if (calmer(r, c, best))
                        best = (int)c;
        }
        return best;
}

/* The best calm core over the nodes of set (calm_core()'s order across them), or -1. */
static int calm_core_in(const Repin *r, const CpuSet *set, unsigned from, bool free_only)
{
        int best = -1;

        CPUSET_FOREACH (n, set) {
                int c = calm_core(r, (unsigned)n, from, free_only);
                if (c >= 0 && calmer(r, (unsigned)c, best))
                        best = c;
        }
        return best;
}

/* A calm core on the node nearest to the domain's memory that has one, other than the home nodes; of
 * nodes as near, the calmest core (calm_core_in()'s order: a free core before one of idle vCPUs, then
 * the core class, then the lowest node); -1. */
static int nearest_calm_core(const Repin *r, unsigned from)
{
        const Topology *t = r->v->t;
        uint32_t best_distance = UINT32_MAX;
        int best = -1;

        for (unsigned n = 0; n < t->nnodes; n++) {
                uint32_t d = UINT32_MAX;
                int c;
                if (cpuset_has(r->home, n) || !r->v->node_allowed[n])
                        continue;
                CPUSET_FOREACH (h, r->home)
                        d = MIN(d, topology_distance(t, (unsigned)h, n));
                if (d >= TOPOLOGY_UNREACHABLE || d > best_distance || (c = calm_core(r, n, from, false)) < 0)
                        continue;
                if (d == best_distance && !calmer(r, (unsigned)c, best))
                        continue;
                best = c;
                best_distance = d;
        }
        return best;
}

/*
 * nearest_calm_core(), a core that runs nothing busy at all (under LOAD_BUSY_THRESHOLD in all) first:
 * only when no other node has one, a core merely less busy than what the vCPU leaves (calm()), which
 * heal still counts as contended when its threads together are half busy. The vCPU leaves its memory's
 * nodes either way; a node further off costs it less than a busy neighbour.
 */
static int calm_core_near(const Repin *r, unsigned from)
{
        Repin quiet = *r;
        int c;

        quiet.leaving = 0; /* calm() then takes only what runs under LOAD_BUSY_THRESHOLD in all */
        if ((c = nearest_calm_core(&quiet, from)) >= 0)
                return c;
        return nearest_calm_core(r, from);
}

/* The usable PU of core c that is least busy, then has the fewest vCPUs (pu_load), the first on ties. */
static unsigned calm_pu(const Repin *r, unsigned c)
{
        const TopoCore *core = &r->v->t->cores[c];
        int best = -1;

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (pu_fits(r, p) && (best < 0 || ranks_before(r->pu_busy[p], r->pu_load[p],
                                                               r->pu_busy[best], r->pu_load[best])))
                        best = (int)p;
        return (unsigned)best;
}

static void move_vcpu(Repin *r, Plan *plan, unsigned i, double b, unsigned to)
{
        const Topology *t = r->v->t;
        int pu = plan->vcpu_pu[i];
        unsigned from = t->pus[pu].core, p = calm_pu(r, to);

        r->busy[from] -= b;
        r->load[from]--;
        r->pu_load[pu]--;
        r->pu_busy[pu] -= b;
        r->busy[to] += b;
        r->load[to]++;
        r->pu_load[p]++;
        r->pu_busy[p] += b;
        plan->vcpu_pu[i] = (int)p;
        policy_pin_vcpu(r->v, plan, i);
}

/* plan->nodes: the nodes holding its memory or running its vCPUs. */
static void renew_nodes(const Topology *t, Plan *plan, const CpuSet *home)
{
        g_autoptr(CpuSet) nodes = cpuset_copy(home);

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        cpuset_add(nodes, t->cores[t->pus[plan->vcpu_pu[i]].core].node);
        cpuset_free(plan->nodes);
        plan->nodes = g_steal_pointer(&nodes);
}

/*
 * The domain's own busy host-side threads count where they run (an even share of req->host_busy on each
 * PU of its emulator pin), as its vCPUs do: a busy vCPU with them on its sibling is beside a busy thread
 * and moves like one beside another guest's (its emulator and I/O threads are then chosen again).
 */
static void add_own_host(const Topology *t, const PlacementRequest *req, const Plan *plan, double *busy,
                         double *pu_busy)
{
        double share;

        if (req->host_busy < LOAD_BUSY_THRESHOLD || cpuset_is_empty(plan->emulator_pin))
                return;
        share = req->host_busy / cpuset_count(plan->emulator_pin);
        CPUSET_FOREACH (os, plan->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu < 0)
                        continue;
                busy[t->pus[pu].core] += share;
                pu_busy[pu] += share;
        }
}

static CpuSet *home_nodes(const Plan *p)
{
        CpuSet *home = cpuset_new();

        for (unsigned n = 0; n < p->nnode_memory; n++)
                if (p->node_memory[n])
                        cpuset_add(home, n);
        if (cpuset_is_empty(home))
                cpuset_union(home, p->nodes);
        return home;
}

/* Picks QEMU's threads' CPUs for the re-pinned plan; where the view leaves none (a view held to the nodes
 * of its bound memory while its vCPUs run on another), they stay where they ran: an empty pin would
 * leave them there unsaid and count their load nowhere. */
static void repin_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan,
                               const Plan *current)
{
        finish_housekeeping(v, req, plan);
        if (cpuset_is_empty(plan->emulator_pin) && !cpuset_is_empty(current->emulator_pin)) {
                cpuset_union(plan->emulator_pin, current->emulator_pin);
                cpuset_clear(plan->iothread_pin);
                cpuset_union(plan->iothread_pin, current->iothread_pin);
        }
}

static Plan *repin(const Topology *t, const Ledger *l, const PlacementRequest *req,
                   const PlacementParams *params, const Plan *current, bool near)
{
        g_autoptr(Plan) plan = NULL;
        g_autofree double *busy = NULL, *pu_busy = NULL;
        g_autofree unsigned *load = NULL, *pu_load = NULL;
        g_autoptr(CpuSet) home = NULL;
        unsigned moved = 0, away = 0, back = 0;
        bool emulator = false, emulator_away = false, off_busy = false;
        PlacementRequest relaxed;
        HostView v;
        Repin r;

        if (!req->vcpu_busy || !req->pu_busy || req->vcpus != current->nvcpus ||
            (current->result != PLAN_PLACED && current->result != PLAN_OVERCOMMITTED))
                return NULL;
        if (near && req->memory_source == MEMORY_SOURCE_BOUND && req->memory_own) {
                /* placementd's own binding: the memory stays, the vCPUs may leave its nodes */
                relaxed = *req;
                relaxed.memory_nodes = NULL;
                relaxed.memory_source = MEMORY_SOURCE_NONE;
                req = &relaxed;
        }
        host_view_init_for(&v, t, l, params, req);
        plan = plan_copy(current);
        home = home_nodes(plan);
        busy = g_new0(double, MAX(t->ncores, 1));
        load = g_new0(unsigned, MAX(t->ncores, 1));
        pu_load = g_new0(unsigned, MAX(t->npus, 1));
        pu_busy = g_new0(double, MAX(t->npus, 1));
        r = (Repin){
            .v = &v, .busy = busy, .pu_busy = pu_busy, .load = load, .pu_load = pu_load, .home = home};
        for (unsigned c = 0; c < t->ncores; c++) {
                busy[c] = load_core_busy(&v, c);
                load[c] = ledger_core_load(l, c) + ledger_core_held(l, c); /* a held core is no calm one */
        }
        for (unsigned p = 0; p < t->npus; p++) {
                pu_load[p] = ledger_pu_load(l, p);
                pu_busy[p] = req->pu_busy[p];
        }
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0) {
                        busy[t->pus[plan->vcpu_pu[i]].core] += req->vcpu_busy[i];
                        load[t->pus[plan->vcpu_pu[i]].core]++;
                        pu_load[plan->vcpu_pu[i]]++;
                        pu_busy[plan->vcpu_pu[i]] += req->vcpu_busy[i];
                }
        add_own_host(t, req, plan, busy, pu_busy);
        /* back with its memory: a vCPU away from it, onto a free core there */
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                int pu = plan->vcpu_pu[i], to;
                if (pu < 0 || cpuset_has(home, t->cores[t->pus[pu].core].node))
                        continue;
                r.only = req->vcpu_cache_cpus ? req->vcpu_cache_cpus[i] : NULL;
                r.realtime = plan_vcpu_realtime(plan, i);
                to = calm_core_in(&r, home, t->pus[pu].core, true);
                if (to < 0)
                        continue;
                move_vcpu(&r, plan, i, req->vcpu_busy[i], (unsigned)to);
                back++;
        }
        /* off a core where it contends: its own node (or its memory's), then with near the nearest */
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                double b = req->vcpu_busy[i];
                int pu = plan->vcpu_pu[i], to;
                unsigned from, node;

                if (pu < 0 || b < LOAD_BUSY_THRESHOLD)
                        continue;
                from = t->pus[pu].core;
                node = t->cores[from].node;
                if (busy[from] - b < LOAD_BUSY_THRESHOLD)
                        continue; /* nothing else busy beside it */
                r.leaving = busy[from] - b;
                r.only = req->vcpu_cache_cpus ? req->vcpu_cache_cpus[i] : NULL;
                r.realtime = plan_vcpu_realtime(plan, i);
                to = cpuset_has(home, node) ? calm_core(&r, node, from, false)
                                            : calm_core_in(&r, home, from, false);
                /* VcpuPin=nodeset pins every vCPU to the whole set: off it, nothing would move it */
                if (to < 0 && near && !plan->ncells && plan->vcpu_pin != VCPU_PIN_NODESET)
                        to = calm_core_near(&r, from);
                if (to < 0)
                        continue;
                away += !cpuset_has(home, t->cores[to].node);
                move_vcpu(&r, plan, i, b, (unsigned)to);
                moved++;
        }
        /* nothing to move but its own busy host-side threads, beside busy threads or more than a core's
         * worth of them on one core: those alone */
        if (!moved && !back && !req->keep_emulator) {
                /* v's measured load is without the domain's own */
                double was =
                    load_own_host_beside(t, plan, req->vcpu_busy, req->host_busy, req->pu_busy, false);
                double over = load_own_host_over(t, plan, req->vcpu_busy, req->host_busy);
                if (was >= LOAD_HOST_REPIN_GAIN || over >= LOAD_HOST_REPIN_GAIN) {
                        double now, over_now;
                        repin_housekeeping(&v, req, plan, current);
                        now = load_own_host_beside(t, plan, req->vcpu_busy, req->host_busy, req->pu_busy,
                                                   false);
                        over_now = load_own_host_over(t, plan, req->vcpu_busy, req->host_busy);
                        off_busy = now + LOAD_HOST_REPIN_GAIN <= was + 1e-9;
                        emulator = off_busy ||
                                   (now <= was + 1e-9 && over_now + LOAD_HOST_REPIN_GAIN <= over + 1e-9);
                        CPUSET_FOREACH (os, plan->emulator_pin) {
                                int pu = topology_pu_by_os(t, (unsigned)os);
                                emulator_away |=
                                    pu >= 0 && !cpuset_has(home, t->cores[t->pus[pu].core].node);
                        }
                }
        }
        if (emulator) {
                plan->keep_memory = true;
                g_free(plan->reason);
                plan->reason = g_strdup_printf(
                    "re-pinned by measured load: its busy host-side threads (%.1f cores) moved %s%s; vCPUs "
                    "and memory stay where they are",
                    req->host_busy,
                    off_busy ? "off cores where busy threads run (its vCPUs' or others') to cores that run "
                               "nothing busy"
                             : "onto more cores (over a core's worth of them ran on one)",
                    emulator_away ? " on the nearest node with one (none was left on its own)" : "");
        }
        if (moved || back) {
                plan->keep_memory = true; /* where it is: no binding to make again */
                renew_nodes(t, plan, home);
                policy_count_shared(&v, plan);
                repin_housekeeping(&v, req, plan,
                                   current); /* EmulatorPin=siblings: its new cores' siblings */
                if (!plan->shared_vcpus)
                        plan->result = PLAN_PLACED;
                g_free(plan->reason);
                if (away)
                        plan->reason = g_strdup_printf(
                            "re-pinned by measured load: %u busy vCPU%s moved to cores that run nothing "
                            "busy, "
                            "%u of them on the nearest node with one (none was left on its own); memory "
                            "stays where it is",
                            moved, moved == 1 ? "" : "s", away);
                else if (moved)
                        plan->reason = g_strdup_printf(
                            "re-pinned inside its nodes by measured load: %u busy vCPU%s moved to cores "
                            "that run nothing busy; memory and nodes as they were",
                            moved, moved == 1 ? "" : "s");
                else
                        plan->reason = g_strdup_printf("re-pinned by measured load: %u vCPU%s back on free "
                                                       "cores of the nodes that hold "
                                                       "its memory",
                                                       back, back == 1 ? "" : "s");
        }
        host_view_done(&v);
        plan->repinned = true;
        return moved || back || emulator ? g_steal_pointer(&plan) : NULL;
}

Plan *policy_repin_local(const Topology *t, const Ledger *l, const PlacementRequest *req,
                         const PlacementParams *params, const Plan *current)
{
        return repin(t, l, req, params, current, false);
}

Plan *policy_repin_near(const Topology *t, const Ledger *l, const PlacementRequest *req,
                        const PlacementParams *params, const Plan *current)
{
        return repin(t, l, req, params, current, true);
}
