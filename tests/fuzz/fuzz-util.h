/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * Checks shared by the fuzz targets that run the placement engine: what every plan policy_place()
 * returns must satisfy, and that the ledger gives back exactly what a commit took. All static inline:
 * a target defines no global symbol but LLVMFuzzerTestOneInput.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "plan.h"
#include "policy.h"
#include "topology.h"

/* The one symbol each target defines: libFuzzer calls it, and so does replay.c in an ordinary build. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_GiB (UINT64_C(1) << 30)

#define fuzz_check(cond, ...)                                                                               \
        do {                                                                                                \
                if (!(cond)) {                                                                              \
                        fprintf(stderr, "fuzz check failed: %s: ", #cond);                                  \
                        fprintf(stderr, __VA_ARGS__);                                                       \
                        fputc('\n', stderr);                                                                \
                        abort();                                                                            \
                }                                                                                           \
        } while (0)

/* GLib reports misuse (g_return_if_fail) as criticals and goes on: in a fuzz run that is a crash. */
static inline void fuzz_log_handler(const gchar *domain, GLogLevelFlags level, const gchar *message,
                                    gpointer data)
{
        if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) {
                fprintf(stderr, "fuzz check failed: GLib %s from %s: %s\n",
                        level & G_LOG_LEVEL_WARNING ? "warning" : "critical", domain ? domain : "(none)",
                        message);
                abort();
        }
        g_log_default_handler(domain, level, message, data);
}

/* Call first in LLVMFuzzerTestOneInput. */
static inline void fuzz_setup(void)
{
        static bool done;

        if (!done) {
                g_log_set_default_handler(fuzz_log_handler, NULL);
                done = true;
        }
}

static inline bool fuzz_reserved(const PlacementParams *params, unsigned os_index)
{
        return params->reserved_cpus && cpuset_has(params->reserved_cpus, os_index);
}

/* What any plan of policy_place(t, l, req, params) must satisfy; l is the ledger it was made on. */
static inline void fuzz_check_plan(const Topology *t, const Ledger *l, const PlacementRequest *req,
                                   const PlacementParams *params, const Plan *p)
{
        g_autofree unsigned *on_core = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree unsigned *on_pu = g_new0(unsigned, MAX(t->npus, 1));
        uint64_t sum = 0;

        fuzz_check(p != NULL, "no plan");
        fuzz_check(p->result == PLAN_PLACED || p->result == PLAN_OVERCOMMITTED ||
                       p->result == PLAN_UNPLACEABLE,
                   "result %d", (int)p->result);
        fuzz_check(p->reason && *p->reason, "plan without a reason");
        fuzz_check(p->requested_vcpus == req->vcpus, "requested %u, asked %u", p->requested_vcpus,
                   req->vcpus);
        fuzz_check(p->nvcpus == req->vcpus || (p->nvcpus == 0 && p->result == PLAN_UNPLACEABLE),
                   "%u vCPUs for a request of %u", p->nvcpus, req->vcpus);
        fuzz_check(p->memory == req->memory, "memory %llu for a request of %llu",
                   (unsigned long long)p->memory, (unsigned long long)req->memory);
        fuzz_check(p->nnode_memory == t->nnodes, "%u node memory entries on %u nodes", p->nnode_memory,
                   t->nnodes);
        CPUSET_FOREACH (n, p->nodes)
                fuzz_check((unsigned)n < t->nnodes, "node index %d of %u", n, t->nnodes);

        for (unsigned i = 0; i < p->nvcpus; i++) {
                int pu = p->vcpu_pu[i];
                unsigned core, os;

                fuzz_check(pu >= -1 && pu < (int)t->npus, "vCPU %u on PU index %d of %u", i, pu, t->npus);
                fuzz_check(p->vcpu_pins[i] != NULL, "vCPU %u without a pin set", i);
                if (p->result == PLAN_UNPLACEABLE) {
                        fuzz_check(pu < 0 && cpuset_is_empty(p->vcpu_pins[i]),
                                   "unplaceable plan pins vCPU %u", i);
                        continue;
                }
                fuzz_check(pu >= 0 || p->result != PLAN_PLACED, "placed plan leaves vCPU %u unplaced", i);
                if (pu < 0)
                        continue;
                core = t->pus[pu].core;
                os = t->pus[pu].os_index;
                fuzz_check(cpuset_has(p->nodes, t->cores[core].node),
                           "vCPU %u on node %u, outside the plan's set", i, t->cores[core].node);
                fuzz_check(!fuzz_reserved(params, os), "vCPU %u on reserved CPU %u", i, os);
                fuzz_check(cpuset_has(p->vcpu_pins[i], os), "vCPU %u counted on CPU %u but not pinned there",
                           i, os);
                CPUSET_FOREACH (c, p->vcpu_pins[i])
                        fuzz_check(!fuzz_reserved(params, (unsigned)c), "vCPU %u pinned to reserved CPU %d",
                                   i, c);
                on_core[core]++;
                on_pu[pu]++;
                if (p->result == PLAN_PLACED && p->policy == POLICY_EXPLICIT)
                        fuzz_check(on_core[core] == 1 && ledger_core_free(l, core),
                                   "explicit placement puts vCPU %u on core %u, which is not free", i, core);
                if (p->result == PLAN_PLACED && p->policy == POLICY_COMPAT)
                        fuzz_check(on_pu[pu] == 1 && ledger_pu_load(l, (unsigned)pu) == 0,
                                   "compat placement puts vCPU %u on PU %d, which is not free", i, pu);
        }

        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t node_mem = p->node_memory[n], used = ledger_node_memory(l, n);
                uint64_t avail = t->nodes[n].memory > params->memory_reserve
                                     ? t->nodes[n].memory - params->memory_reserve
                                     : 0;

                if (!node_mem)
                        continue;
                fuzz_check(p->result != PLAN_UNPLACEABLE, "unplaceable plan reserves memory on node %u", n);
                fuzz_check(cpuset_has(p->nodes, n), "memory on node %u, outside the plan's set", n);
                fuzz_check(used <= avail && node_mem <= avail - used,
                           "node %u: %llu bytes on top of %llu used, %llu available", n,
                           (unsigned long long)node_mem, (unsigned long long)used,
                           (unsigned long long)avail);
                sum += node_mem;
        }
        if (p->result != PLAN_UNPLACEABLE)
                fuzz_check(sum == p->memory, "%llu of %llu bytes spread over the nodes",
                           (unsigned long long)sum, (unsigned long long)p->memory);
}

/*
 * Commits a copy of p under key and releases it: the ledger must count the plan's vCPUs and memory
 * while it holds it and be exactly as before afterwards.
 */
static inline void fuzz_commit_release(Ledger *l, const char *key, const Plan *p)
{
        const Topology *t = ledger_topology(l);
        g_autofree unsigned *pu_load = g_new(unsigned, MAX(t->npus, 1));
        g_autofree unsigned *core_load = g_new(unsigned, MAX(t->ncores, 1));
        g_autofree uint64_t *node_memory = g_new(uint64_t, MAX(t->nnodes, 1));
        unsigned count = ledger_count(l), placed = 0, counted = 0;
        int r;

        for (unsigned i = 0; i < t->npus; i++)
                pu_load[i] = ledger_pu_load(l, i);
        for (unsigned i = 0; i < t->ncores; i++)
                core_load[i] = ledger_core_load(l, i);
        for (unsigned i = 0; i < t->nnodes; i++)
                node_memory[i] = ledger_node_memory(l, i);

        r = ledger_commit(l, key, plan_copy(p));
        fuzz_check(r == 0, "ledger_commit: %d", r);
        fuzz_check(ledger_count(l) == count + 1 && ledger_lookup(l, key), "committed plan not held");
        for (unsigned i = 0; i < p->nvcpus; i++)
                placed += p->vcpu_pu[i] >= 0;
        for (unsigned i = 0; i < t->npus; i++)
                counted += ledger_pu_load(l, i) - pu_load[i];
        fuzz_check(counted == placed, "ledger counts %u vCPUs of a plan placing %u", counted, placed);
        for (unsigned i = 0; i < t->nnodes; i++)
                fuzz_check(ledger_node_memory(l, i) - node_memory[i] == p->node_memory[i],
                           "node %u: ledger holds %llu more bytes, the plan %llu", i,
                           (unsigned long long)(ledger_node_memory(l, i) - node_memory[i]),
                           (unsigned long long)p->node_memory[i]);
        fuzz_check(ledger_commit(l, key, plan_copy(p)) == -EEXIST, "a key committed twice");

        r = ledger_release(l, key);
        fuzz_check(r == 0, "ledger_release: %d", r);
        fuzz_check(ledger_release(l, key) == -ENOENT, "a key released twice");
        fuzz_check(ledger_count(l) == count, "ledger holds %u plans, held %u", ledger_count(l), count);
        for (unsigned i = 0; i < t->npus; i++)
                fuzz_check(ledger_pu_load(l, i) == pu_load[i], "PU %u load not restored", i);
        for (unsigned i = 0; i < t->ncores; i++)
                fuzz_check(ledger_core_load(l, i) == core_load[i], "core %u load not restored", i);
        for (unsigned i = 0; i < t->nnodes; i++)
                fuzz_check(ledger_node_memory(l, i) == node_memory[i], "node %u memory not restored", i);
}
