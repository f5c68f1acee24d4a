/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: the CPUs of the emulator and I/O threads (EmulatorPin=), by the plan's vCPUs and measured load.
 */
#include "finish-internal.h"
#include "load-rules.h"

/* The plan's own cores and PUs (policy_own_core(), a vCPU of it on the PU), each looked up once: the
 * passes below ask of every core of the host. */
typedef struct {
        bool *core;
        bool *pu;
} OwnMap;

static void own_map_init(OwnMap *own, const HostView *v, const Plan *plan)
{
        own->core = g_new0(bool, MAX(v->t->ncores, 1));
        own->pu = g_new0(bool, MAX(v->t->npus, 1));
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0) {
                        own->pu[plan->vcpu_pu[i]] = true;
                        own->core[v->t->pus[plan->vcpu_pu[i]].core] = true;
                }
}

static void own_map_clear(OwnMap *own)
{
        g_free(own->core);
        g_free(own->pu);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(OwnMap, own_map_clear)

/* policy_pu_vacant() with the plan's PUs from own. */
static bool pu_vacant(const HostView *v, const OwnMap *own, unsigned p)
{
        return v->pu_usable[p] && !ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p) && !own->pu[p];
}

/* The vacant siblings of the plan's own cores that hold no realtime vCPU of it. */
static void add_idle_siblings(const HostView *v, const Plan *plan, const OwnMap *own, CpuSet *out)
{
        const Topology *t = v->t;

        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                if (!own->core[c] || policy_own_realtime_core(v, plan, c))
                        continue;
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                        if (pu_vacant(v, own, p))
                                cpuset_add(out, t->pus[p].os_index);
        }
}

/*
 * The housekeeping CPUs (HousekeepingCPUs=, else ReservedCPUs=) inside the request's CPUs on cores
 * without vCPUs: those on the plan's nodes, else every one (their work is small, a core of its own is
 * not).
 */
static void add_housekeeping(const HostView *v, const PlacementRequest *req, const Plan *plan,
                             const OwnMap *own, CpuSet *out)
{
        const Topology *t = v->t;
        const CpuSet *hk =
            v->params->housekeeping_cpus ? v->params->housekeeping_cpus : v->params->reserved_cpus;

        for (unsigned pass = 0; pass < 2 && hk && cpuset_is_empty(out); pass++)
                for (unsigned p = 0; p < t->npus; p++) {
                        unsigned c = t->pus[p].core, os = t->pus[p].os_index;
                        if (!cpuset_has(hk, os) ||
                            (v->params->unavailable_cpus && cpuset_has(v->params->unavailable_cpus, os)) ||
                            (req->allowed_cpus && !cpuset_has(req->allowed_cpus, os)) ||
                            ledger_core_load(v->l, c) > 0 || own->core[c] ||
                            (pass == 0 && !cpuset_has(plan->nodes, t->cores[c].node)))
                                continue;
                        cpuset_add(out, os);
                }
}

/* Whether QEMU's threads may use a PU of core c. */
static bool core_takes_threads(const HostView *v, unsigned c)
{
        const TopoCore *core = &v->t->cores[c];

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (v->pu_thread_usable[p])
                        return true;
        return false;
}

/*
 * The set's cores no vCPU holds (with_own: and the plan's own cores), PUs QEMU's threads may use. Of its
 * own cores only the PUs that carry no other domain's vCPU and that no other domain holds: under compat
 * (or overcommitted) a core of its own may be another domain's too, and its thread there is that
 * domain's.
 */
static void add_set_cores(const HostView *v, const Plan *plan, const OwnMap *own, bool with_own, CpuSet *out)
{
        const Topology *t = v->t;
        unsigned rank = 0;

        /* on a hybrid host the free cores of the least performant kind there, as long as there are any
         * (E-cores): the others are for vCPUs. An E-core guest, whose cores have no sibling, put its
         * emulator over the free P-cores too, and a later P-core guest shared with it. */
        if (!with_own && t->ncore_kinds > 1)
                CPUSET_FOREACH (n, plan->nodes) {
                        const TopoNode *node = &t->nodes[n];
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                if (!own->core[c] && ledger_core_free(v->l, c) && core_takes_threads(v, c))
                                        rank = MAX(rank, t->cores[c].kind_rank);
                }
        CPUSET_FOREACH (n, plan->nodes) {
                const TopoNode *node = &t->nodes[n];
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        bool mine = own->core[c];
                        if (!(mine && with_own) && !(!mine && ledger_core_free(v->l, c)))
                                continue;
                        if (!with_own && t->cores[c].kind_rank != rank)
                                continue;
                        for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus;
                             p++)
                                if (v->pu_thread_usable[p] &&
                                    (!mine || (!ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p))))
                                        cpuset_add(out, t->pus[p].os_index);
                }
        }
}

/* For a realtime domain with no free core in its set: a core that holds no realtime vCPU, a free one first
 * (the nearest to its nodes), else the one with fewest vCPUs (QEMU's threads beside ordinary vCPUs, never
 * beside a FIFO vCPU, which would starve them). */
static void add_nearest_plain_core(const HostView *v, const Plan *plan, const OwnMap *own, CpuSet *out)
{
        const Topology *t = v->t;
        int first = cpuset_next(plan->nodes, 0), best = -1;
        uint64_t best_key = 0;

        if (first < 0)
                return;
        for (unsigned c = 0; c < t->ncores; c++) {
                uint64_t key;
                if (own->core[c] || ledger_core_realtime(v->l, c) || policy_core_first_usable_pu(v, c) < 0 ||
                    policy_core_reserved(v, c))
                        continue;
                /* a free core anywhere before another domain's vCPU nearby, then the nearest */
                key = (uint64_t)(ledger_core_free(v->l, c) ? 0 : 1) << 63 |
                      (uint64_t)MIN(ledger_core_load(v->l, c), 0x7fffu) << 48 |
                      (uint64_t)topology_distance(t, (unsigned)first, t->cores[c].node);
                if (best < 0 || key < best_key) {
                        best = (int)c;
                        best_key = key;
                }
        }
        if (best >= 0)
                finish_add_core_pus(v, (unsigned)best, out);
}

/*
 * The CPUs of the user's own <emulatorpin>, for its I/O threads, when the rule leaves them nothing but the
 * domain's own vCPU cores: a core or two (what the domain holds for QEMU's threads,
 * policy_hold_thread_cpus()) that none of its vCPUs and no other domain's vCPU takes, wherever it lies. The
 * user keeps those CPUs for QEMU's threads; its vCPUs' own cores are what the I/O threads would take from
 * it.
 */
static void add_users_emulator_cpus(const HostView *v, const PlacementRequest *req, const Plan *plan,
                                    const OwnMap *own, CpuSet *out)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) cores = cpuset_new();
        g_autoptr(CpuSet) pus = cpuset_new();

        if (!req->keep_emulator || !req->emulator_cpus || cpuset_is_empty(plan->iothreads) ||
            cpuset_count(req->emulator_cpus) > 2 * MAX(t->max_threads, 1u))
                return;
        CPUSET_FOREACH (os, req->emulator_cpus) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                unsigned c;
                if (pu < 0)
                        continue;
                c = t->pus[pu].core;
                if (own->core[c] || ledger_core_load(v->l, c) > 0 || !v->pu_thread_usable[pu])
                        return;
                cpuset_add(cores, c);
                cpuset_add(pus, (unsigned)os);
        }
        if (cpuset_count(cores) <= 2)
                cpuset_union(out, pus);
}

/*
 * The CPUs of the emulator and I/O threads. EmulatorPin=nodeset: the set minus other domains' cores.
 * siblings: the idle siblings of its own cores, else the housekeeping CPUs, else the set's free cores
 * (realtime: else the nearest core without a realtime vCPU), else, for I/O threads beside the user's own
 * emulator pin, that pin's CPUs; the domain's own cores only when nothing else is left.
 */
static HousekeepingPlace pick_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan,
                                           CpuSet *out)
{
        g_auto(OwnMap) own = {0};
        bool narrow = false;

        if (v->params->emulator_pin == EMULATOR_PIN_NONE)
                return HOUSEKEEPING_NONE;
        if (load_pick_emulator(v, plan)) {
                /* busy host-side threads: a core of their own (it fills the plan's emulator pin) */
                cpuset_union(out, plan->emulator_pin);
                cpuset_clear(plan->emulator_pin);
                return HOUSEKEEPING_ELSEWHERE;
        }
        own_map_init(&own, v, plan);
        switch (v->params->emulator_pin) {
        case EMULATOR_PIN_NODESET:
                add_set_cores(v, plan, &own, true, out);
                break;
        default:
                /* a realtime vCPU's core is its own, sibling included */
                add_idle_siblings(v, plan, &own, out);
                narrow = true;
                if (cpuset_is_empty(out)) {
                        add_housekeeping(v, req, plan, &own, out);
                        narrow = cpuset_is_empty(out); /* the housekeeping CPUs are theirs to share */
                }
                if (cpuset_is_empty(out))
                        add_set_cores(v, plan, &own, false, out);
                /* only some vCPUs realtime (Nova's realtime mask): beside the others, as Nova puts it */
                for (unsigned c = 0; c < v->t->ncores && cpuset_is_empty(out) && req->realtime &&
                                     !placement_request_all_realtime(req);
                     c++)
                        if (own.core[c] && !policy_own_realtime_core(v, plan, c))
                                finish_add_core_pus(v, c, out);
                if (cpuset_is_empty(out) && req->realtime) {
                        add_nearest_plain_core(v, plan, &own, out);
                        if (!cpuset_is_empty(out))
                                return HOUSEKEEPING_PLAIN_CORE;
                }
                /* I/O threads beside the user's own emulator before its vCPUs' cores */
                if (cpuset_is_empty(out))
                        add_users_emulator_cpus(v, req, plan, &own, out);
                break;
        }
        /* measured busy host-side threads: cores that carry them */
        load_spread_idle_host(v, plan, out, narrow);
        if (!cpuset_is_empty(out))
                return HOUSEKEEPING_ELSEWHERE;
        for (unsigned c = 0; c < v->t->ncores; c++)
                if (own.core[c])
                        finish_add_core_pus(v, c, out);
        return cpuset_is_empty(out) ? HOUSEKEEPING_NONE : HOUSEKEEPING_OWN_CORES;
}

/* The emulator (unless the user pins it) and the I/O threads the user does not pin go to the CPUs
 * pick_housekeeping() chooses. Returns where they went. */
HousekeepingPlace finish_pin_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) cpus = cpuset_new();
        HousekeepingPlace where;

        cpuset_clear(plan->user_iothreads);
        if (req->iothreads) {
                cpuset_union(plan->iothreads, req->iothreads);
                if (req->kept_iothreads) {
                        /* the user's, of those it has: left where they run, named so in the record */
                        g_autoptr(CpuSet) absent = cpuset_copy(req->kept_iothreads);
                        cpuset_subtract(absent, req->iothreads);
                        cpuset_subtract(plan->iothreads, req->kept_iothreads);
                        cpuset_union(plan->user_iothreads, req->kept_iothreads);
                        cpuset_subtract(plan->user_iothreads, absent);
                }
        }
        if (req->keep_emulator && cpuset_is_empty(plan->iothreads))
                return HOUSEKEEPING_NONE;
        where = pick_housekeeping(v, req, plan, cpus);
        if (!req->keep_emulator)
                cpuset_union(plan->emulator_pin, cpus);
        if (cpuset_is_empty(cpus))
                cpuset_clear(plan->iothreads);
        else if (!cpuset_is_empty(plan->iothreads))
                cpuset_union(plan->iothread_pin, cpus);
        return where;
}

void finish_housekeeping(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        if (!req->keep_emulator)
                cpuset_clear(plan->emulator_pin);
        cpuset_clear(plan->iothreads);
        cpuset_clear(plan->iothread_pin);
        finish_pin_housekeeping(v, req, plan);
}
