/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Adoption: turning pins placementd did not choose into a plan the ledger can hold. */
#include "cells.h"
#include "finish.h"
#include "policy.h"
#include "policy-internal.h"

bool policy_user_thread_cpu(const PlacementRequest *req, unsigned os)
{
        if (!req)
                return false;
        if (req->emulator_cpus && cpuset_has(req->emulator_cpus, os))
                return true;
        for (unsigned i = 0; req->iothread_cpus && i < req->iothread_cpus->len; i++) {
                const IothreadPin *pin = &g_array_index(req->iothread_cpus, IothreadPin, i);
                if (req->kept_iothreads && cpuset_has(req->kept_iothreads, pin->id) &&
                    cpuset_has(pin->cpus, os))
                        return true;
        }
        return false;
}

/* Adds to nodes the node of each CPU of cpus when they are the domain's own: a core or two (as hold_cpus()
 * holds them), none of the host's (ReservedCPUs=, HousekeepingCPUs=) and none on a core that runs or holds
 * another domain's thread (every guest's emulator on one shared set, Nova's emulator_threads_policy=share
 * or a cpu_shared_set, draws none: each would go to that node). */
static void own_thread_nodes(const HostView *v, const CpuSet *cpus, CpuSet *nodes)
{
        const Topology *t = v->t;
        const PlacementParams *params = v->params;
        g_autoptr(CpuSet) add = cpuset_new();

        if (!cpus || cpuset_count(cpus) > 2 * MAX(t->max_threads, 1u))
                return;
        CPUSET_FOREACH (os, cpus) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                unsigned core;

                if (pu < 0)
                        continue;
                core = t->pus[pu].core;
                if ((params && params->reserved_cpus && cpuset_has(params->reserved_cpus, (unsigned)os)) ||
                    (params && params->housekeeping_cpus &&
                     cpuset_has(params->housekeeping_cpus, (unsigned)os)) ||
                    (v->l && (ledger_core_load(v->l, core) || ledger_core_held(v->l, core))))
                        return;
                cpuset_add(add, t->cores[core].node);
        }
        cpuset_union(nodes, add);
}

CpuSet *policy_user_thread_nodes(const HostView *v)
{
        const PlacementRequest *req = v->req;
        g_autoptr(CpuSet) nodes = NULL;

        if (!req || req->device_nodes || (!req->emulator_cpus && !req->iothread_cpus))
                return NULL;
        nodes = cpuset_new();
        own_thread_nodes(v, req->emulator_cpus, nodes);
        for (unsigned i = 0; req->iothread_cpus && i < req->iothread_cpus->len; i++) {
                const IothreadPin *pin = &g_array_index(req->iothread_cpus, IothreadPin, i);
                if (req->kept_iothreads && cpuset_has(req->kept_iothreads, pin->id))
                        own_thread_nodes(v, pin->cpus, nodes);
        }
        if (cpuset_is_empty(nodes) || cpuset_count(nodes) == v->t->nnodes)
                return NULL;
        return g_steal_pointer(&nodes);
}

bool policy_core_user_thread(const HostView *v, unsigned c)
{
        const TopoCore *core = &v->t->cores[c];

        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (policy_user_thread_cpu(v->req, v->t->pus[p].os_index))
                        return true;
        return false;
}

/* Holds cpus for plan when they are a core or two that none of its vCPUs runs on, and the cores held for
 * its threads (cores: those held so far) stay a core or two in all with them; realtime: for a thread that
 * runs realtime itself (Plan.held_realtime_pus). */
static void hold_cpus(const Topology *t, const CpuSet *cpus, bool realtime, Plan *plan, CpuSet *cores)
{
        g_autoptr(CpuSet) own = cpuset_new();
        g_autoptr(CpuSet) pus = cpuset_new();
        g_autoptr(CpuSet) with = NULL;

        if (!cpus || cpuset_count(cpus) > 2 * MAX(t->max_threads, 1u))
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                cpuset_union(own, plan->vcpu_pins[i]);
        CPUSET_FOREACH (os, cpus) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0 && !cpuset_has(own, (unsigned)os))
                        cpuset_add(pus, (unsigned)pu);
        }
        with = cpuset_copy(cores);
        CPUSET_FOREACH (pu, pus)
                cpuset_add(with, t->pus[pu].core);
        if (cpuset_count(with) > 2)
                return;
        cpuset_union(plan->held_pus, pus);
        if (realtime)
                cpuset_union(plan->held_realtime_pus, pus);
        cpuset_union(cores, with);
}

/* The user's <emulatorpin> CPUs, and each of its own <iothreadpin> cpusets, that none of the domain's vCPUs
 * runs on, when they are a core or two (a CPU kept for QEMU's threads, as Nova's
 * emulator_threads_policy=isolate keeps one), are held for it: no other domain's vCPU goes there while a
 * core is free. A wide cpuset (the threads floating) holds nothing, and so does one past a core or two held
 * for the domain's threads in all (the emulator's first, then the I/O threads' in the definition's order):
 * a domain's I/O threads each pinned onto a core of its own do not hold every core of the host. */
void policy_hold_thread_cpus(const Topology *t, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) cores = cpuset_new();

        CPUSET_FOREACH (pu, plan->held_pus)
                if ((unsigned)pu < t->npus)
                        cpuset_add(cores, t->pus[pu].core);
        hold_cpus(t, req->emulator_cpus, req->realtime_emulator, plan, cores);
        for (unsigned i = 0; req->iothread_cpus && i < req->iothread_cpus->len; i++) {
                const IothreadPin *pin = &g_array_index(req->iothread_cpus, IothreadPin, i);
                if (req->kept_iothreads && cpuset_has(req->kept_iothreads, pin->id))
                        hold_cpus(t, pin->cpus,
                                  req->realtime_iothreads && cpuset_has(req->realtime_iothreads, pin->id),
                                  plan, cores);
        }
}

Plan *policy_adopt(const Topology *t, const Ledger *l, const PlacementRequest *req, CpuSet *const *pins,
                   const PlacementParams *params)
{
        Plan *plan = plan_new(req->name, MIN(req->vcpus, PLAN_MAX_VCPUS), req->memory, t->nnodes);
        g_autofree unsigned *extra = g_new0(unsigned, MAX(t->npus, 1));
        /* hugepage-backed memory is counted in the pools of its size, whoever pinned the vCPUs */
        PlacementRequest pages = {.name = req->name,
                                  .hugepage_size = req->hugepage_size,
                                  .second_page_size = req->second_page_size,
                                  .cells = req->cells,
                                  .ncells = req->ncells};
        HostView v;

        plan->policy = params->policy;
        plan->vcpu_pin = params->vcpu_pin;
        plan->result = PLAN_ADOPTED;
        plan->hugepage_size = req->hugepage_size;
        plan->second_page_size = req->second_page_size;
        plan_set_realtime(plan, req->realtime, req->realtime_vcpus);
        plan_set_realtime_threads(plan, req->realtime_emulator, req->realtime_iothreads);
        host_view_init_for(&v, t, l, params, req->hugepage_size ? &pages : NULL);
        /* its guest cells: each cell's memory is counted where its <memnode> binds it, or where its vCPUs
         * run, not spread evenly over the domain */
        cells_init_plan(req, plan);
        for (unsigned c = 0; c < plan->ncells; c++)
                plan->cells[c].ordinary = req->cells[c].ordinary;
        plan_set_ordinary(plan);
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                int best = -1;
                unsigned best_load = 0, best_core_load = 0;

                if (!pins[i])
                        continue;
                cpuset_union(plan->vcpu_pins[i], pins[i]);
                if (cpuset_equal(pins[i], t->all_pus) || cpuset_count(pins[i]) >= t->npus)
                        continue; /* floats over the whole host */
                /* the least loaded core first, then its least loaded thread: two vCPUs floating over a
                 * node are counted on two cores, not on the two threads of one */
                CPUSET_FOREACH (os, pins[i]) {
                        int pu = topology_pu_by_os(t, (unsigned)os);
                        const TopoCore *core;
                        unsigned load, core_load = 0;
                        if (pu < 0)
                                continue;
                        core = &t->cores[t->pus[pu].core];
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                                core_load += ledger_pu_load(l, p) + extra[p];
                        load = ledger_pu_load(l, (unsigned)pu) + extra[pu];
                        if (best < 0 || core_load < best_core_load ||
                            (core_load == best_core_load && load < best_load)) {
                                best = pu;
                                best_load = load;
                                best_core_load = core_load;
                        }
                }
                if (best < 0)
                        continue;
                plan->vcpu_pu[i] = best;
                extra[best]++;
                cpuset_add(plan->nodes, t->cores[t->pus[best].core].node);
        }
        policy_hold_thread_cpus(t, req, plan);
        cells_record_nodes(t, plan);
        /* memory the definition (or a live binding) binds lies where it is bound, wherever the pins are */
        plan->reason = g_strdup("pins made outside placementd, recorded as they are");
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) {
                policy_charge_bound_memory(&v, req, plan);
        } else {
                policy_spread_memory(&v, plan);
                /* what the nodes of its pins have no room for, the kernel puts on the nearest others */
                if (!cpuset_is_empty(plan->nodes))
                        finish_spill(&v, plan, SPILL_PINS);
        }
        /* the pins are counted all the same */
        policy_drop_poolless_memory(t, plan);
        policy_count_shared(&v, plan);
        host_view_done(&v);
        return plan;
}
