/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing a plan once its vCPUs have PUs: the pins, then memory, QEMU's threads and the reason, in order.
 */
#include "finish-internal.h"
#include "cells.h"
#include "load-rules.h"

#include <string.h>

void finish_add_core_pus(const HostView *v, unsigned core, CpuSet *out)
{
        const TopoCore *c = &v->t->cores[core];
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (v->pu_usable[p])
                        cpuset_add(out, v->t->pus[p].os_index);
}

static void make_pins(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) set_pus = cpuset_new();

        /* the set's CPUs, for vCPUs pinned to the whole set */
        if (plan->vcpu_pin != VCPU_PIN_CORE && plan->vcpu_pin != VCPU_PIN_THREAD)
                CPUSET_FOREACH (n, plan->nodes) {
                        const TopoNode *node = &t->nodes[n];
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                finish_add_core_pus(v, c, set_pus);
                }
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                if (plan->vcpu_pu[i] < 0)
                        continue;
                if (plan->vcpu_pin == VCPU_PIN_CORE || plan->vcpu_pin == VCPU_PIN_THREAD)
                        policy_pin_vcpu(v, plan, i);
                else
                        cpuset_union(plan->vcpu_pins[i], set_pus);
        }
}

void policy_pin_vcpu(const HostView *v, Plan *plan, unsigned i)
{
        int pu = plan->vcpu_pu[i];

        if (pu < 0)
                return;
        switch (plan->vcpu_pin) {
        case VCPU_PIN_CORE: {
                /* the core's threads; under compat, which places a vCPU on a free thread beside another
                 * domain's as if nothing were shared, less that domain's vCPU or held CPU (a Nova guest's
                 * dedicated CPU is not this vCPU's to float on); overcommitted, the whole core, less CPUs
                 * held for another domain's isolated emulator when the vCPU runs beside them */
                const TopoCore *c = &v->t->cores[v->t->pus[pu].core];
                bool own_free =
                    (plan->policy == POLICY_COMPAT || ledger_core_held(v->l, v->t->pus[pu].core)) &&
                    !ledger_pu_load(v->l, (unsigned)pu) && !ledger_pu_held(v->l, (unsigned)pu);
                cpuset_clear(plan->vcpu_pins[i]);
                for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                        if (v->pu_usable[p] && (p == (unsigned)pu || !own_free ||
                                                (!ledger_pu_load(v->l, p) && !ledger_pu_held(v->l, p))))
                                cpuset_add(plan->vcpu_pins[i], v->t->pus[p].os_index);
                break;
        }
        case VCPU_PIN_THREAD:
                cpuset_clear(plan->vcpu_pins[i]);
                cpuset_add(plan->vcpu_pins[i], v->t->pus[pu].os_index);
                break;
        default:
                break; /* the whole set: moving inside it changes no pin */
        }
}

void policy_count_shared(const HostView *v, Plan *plan)
{
        g_autofree unsigned *own = g_new0(unsigned, MAX(v->t->ncores, 1));

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        own[v->t->pus[plan->vcpu_pu[i]].core]++;
        plan->shared_vcpus = 0;
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                unsigned core;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                core = v->t->pus[plan->vcpu_pu[i]].core;
                if (own[core] + ledger_core_load(v->l, core) >= 2)
                        plan->shared_vcpus++;
        }
}

/*
 * Drops from plan's nodes those that hold neither a vCPU nor memory of it: a set kept whole (above 16
 * nodes there is no mask index to find the set without them, and a binding or the memory may pull one
 * in that takes nothing in the end) names only the nodes the domain is on, and VCPUPin=nodeset pins its
 * vCPUs to those alone, not to busy nodes it has nothing on.
 */
static void drop_unused_nodes(const HostView *v, Plan *plan)
{
        g_autoptr(CpuSet) unused = cpuset_copy(plan->nodes);

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        cpuset_remove(unused, v->t->cores[v->t->pus[plan->vcpu_pu[i]].core].node);
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n])
                        cpuset_remove(unused, n);
        if (cpuset_is_empty(unused) || cpuset_equal(unused, plan->nodes))
                return;
        cpuset_subtract(plan->nodes, unused);
        if (plan->vcpu_pin == VCPU_PIN_NODESET) {
                for (unsigned i = 0; i < plan->nvcpus; i++)
                        cpuset_clear(plan->vcpu_pins[i]);
                make_pins(v, plan);
        }
}

/* Who shares the domain's own cores when QEMU's threads went there, as the reason says it: "the emulator
 * shares", "its I/O threads share", "the emulator and I/O threads share". */
static const char *own_cores_who(const Plan *plan)
{
        return cpuset_is_empty(plan->emulator_pin)
                   ? "its I/O threads share"
                   : (cpuset_is_empty(plan->iothreads) ? "the emulator shares"
                                                       : "the emulator and I/O threads share");
}

/* reason (taken), with what it says when QEMU's threads went to the domain's own cores (where). */
static char *own_cores_note(const HostView *v, HousekeepingPlace where, const Plan *plan, char *reason)
{
        char *out;

        if (where != HOUSEKEEPING_OWN_CORES)
                return reason;
        if (finish_on_own_realtime_cores(v, plan))
                /* every core it may use runs a realtime vCPU (an all-realtime guest filling its host) */
                out = g_strdup_printf(
                    "%s; %s its own cores, where its realtime (FIFO/RR) vCPUs run: no core without a "
                    "realtime vCPU is left that %s may use, and a realtime vCPU that spins may starve %s "
                    "(HousekeepingCPUs= keeps QEMU's threads apart)",
                    reason, own_cores_who(plan),
                    cpuset_is_empty(plan->emulator_pin) || !cpuset_is_empty(plan->iothreads) ? "they" : "it",
                    cpuset_is_empty(plan->emulator_pin) || !cpuset_is_empty(plan->iothreads) ? "them"
                                                                                             : "it");
        else
                out = g_strdup_printf("%s; %s its own cores: %s", reason, own_cores_who(plan),
                                      v->params->emulator_pin == EMULATOR_PIN_NODESET
                                          ? "its nodes have no free core, and every thread of its own cores "
                                            "is another domain's too"
                                          : "no idle sibling, housekeeping CPU or free core of its nodes is "
                                            "left");
        g_free(reason);
        return out;
}

/* reason without what own_cores_note() added to it, as a new string. */
static char *without_own_cores_note(const char *reason)
{
        static const char *const whos[] = {"; the emulator shares its own cores",
                                           "; its I/O threads share its own cores",
                                           "; the emulator and I/O threads share its own cores"};
        GString *s = g_string_new(reason ? reason : "");

        for (unsigned i = 0; i < G_N_ELEMENTS(whos); i++) {
                const char *at = strstr(s->str, whos[i]);
                const char *end;
                if (!at)
                        continue;
                end = strstr(at + 1, "; ");
                g_string_erase(s, at - s->str, end ? end - at : -1);
        }
        return g_string_free(s, FALSE);
}

void finish_plan(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                 const SetChoice *choice, Plan *plan)
{
        bool bound = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;
        HousekeepingPlace where;

        make_pins(v, plan);
        finish_match_cache_vcpus(v, req, plan);
        finish_realtime_off_user_threads(v, req, plan);
        cells_record_nodes(v->t, plan);
        if (bound)
                policy_charge_bound_memory(v, req, plan);
        else
                policy_spread_memory(v, plan);
        finish_whole_pages(v, plan);
        drop_unused_nodes(v, plan);
        plan->keep_memory = bound;
        policy_count_shared(v, plan);
        if (v->memory_remote) {
                /* memory bound elsewhere (memory-only nodes) or also elsewhere (past a binding): each
                 * candidate's free memory is that of the nodes where it is counted (the same for every
                 * set), not what its own nodes hold of it */
                uint64_t free_bytes = 0;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        free_bytes += plan->node_memory[n] ? finish_node_free_bytes(v, plan, n) : 0;
                for (unsigned i = 0; i < plan->candidates->len; i++)
                        ((PlanCandidate *)g_ptr_array_index(plan->candidates, i))->free_memory = free_bytes;
        }
        where = finish_pin_housekeeping(v, req, plan);
        plan->l3_fit = finish_l3_decided(choice);
        plan->l3_by_package = plan->l3_fit && v->t->l3_unknown;
        plan->reason = own_cores_note(v, where, plan, finish_placed_reason(v, ops, req, choice, plan));
        finish_realtime_emulator_note(v, where, plan);
        finish_realtime_threads_note(v, req, plan);
        finish_realtime_over_others_threads(v, plan);
        finish_realtime_user_threads_note(req, plan);
        finish_beside_others_realtime(v, plan);
        finish_remote_memory_note(v, req, plan);
        finish_kind_note(v, plan);
        load_note_reason(v, ops->overcommit_by_core, plan);
        finish_cache_note(v->t, req, plan);
}

void finish_rehouse(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        char *reason = finish_without_realtime_threads_note(
            finish_without_beside_realtime_note(without_own_cores_note(plan->reason)));

        if (!req->keep_emulator)
                cpuset_clear(plan->emulator_pin);
        cpuset_clear(plan->iothreads);
        cpuset_clear(plan->iothread_pin);
        g_free(plan->reason);
        plan->reason = own_cores_note(v, finish_pin_housekeeping(v, req, plan), plan, reason);
        /* said anew for where the emulator and I/O threads are now, and the others' realtime vCPUs */
        finish_realtime_threads_note(v, req, plan);
        finish_beside_others_realtime(v, plan);
}
