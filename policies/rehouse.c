/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * QEMU's threads of a placed domain chosen again where its vCPUs run (policy.h): where EmulatorPin= puts
 * them on the host as it is now, its vCPUs and memory left as they are.
 */
#include "policy.h"
#include "finish.h"
#include "load.h"
#include "policy-internal.h"

Plan *policy_rehouse(const Topology *t, const Ledger *l, const PlacementRequest *req,
                     const PlacementParams *params, const Plan *current)
{
        g_autoptr(Plan) plan = NULL;
        HostView v;

        /* the reason of a realtime domain says where its threads run beside realtime vCPUs, and that of
         * one with measured busy host-side threads where the load rules put them (heal re-pins those):
         * their threads keep what their placement gave them, as their reasons say */
        if ((current->result != PLAN_PLACED && current->result != PLAN_OVERCOMMITTED) || req->realtime ||
            req->vcpus != current->nvcpus || (req->vcpu_busy && req->host_busy >= LOAD_HOST_REPIN_GAIN))
                return NULL;
        host_view_init_for(&v, t, l, params, req);
        plan = plan_copy(current);
        /* only QEMU's threads move: memory bound live stays bound as it is, as a re-pin leaves it (libvirt
         * refuses to bind a running domain's memory again; a binding made again would read as failed) */
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes)
                plan->keep_memory = true;
        finish_rehouse(&v, req, plan);
        host_view_done(&v);
        /* none left (a view held to the nodes of its bound memory while its vCPUs run on another): they
         * stay where they run, as a re-pin leaves them */
        if ((cpuset_is_empty(plan->emulator_pin) && !cpuset_is_empty(current->emulator_pin)) ||
            (cpuset_equal(plan->emulator_pin, current->emulator_pin) &&
             cpuset_equal(plan->iothreads, current->iothreads) &&
             cpuset_equal(plan->iothread_pin, current->iothread_pin)))
                return NULL;
        return g_steal_pointer(&plan);
}
