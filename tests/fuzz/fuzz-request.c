/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A domain definition, whatever it holds, on the way the daemon places it: domain_xml_parse(), the request
 * and its guest shape (domain_request(), domain_request_shape()), policy_place() on the demo host (2 nodes x
 * 4 cores x 2 threads, 8 GiB and pools of 2 MiB and 1 GiB pages per node), then a second copy placed beside
 * the first. Every plan must be well formed (a reason in UTF-8, its vCPUs on the host's PUs, pinned where
 * they are counted); a request without constraints (no cpuset, binding, guest cells or hugepages) must
 * also meet fuzz_check_plan(); committing and releasing a plan must leave the ledger as it was (and hold
 * what the plan says, but for hugepage-backed memory, held in the pools apart from the nodes'), and
 * releasing both copies must leave it empty. The policy and EmulatorPin= follow a hash of the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "domain-request.h"
#include "domain-xml.h"
#include "fuzz-util.h"

/* Guests larger than this are left out: each decision scans every vCPU against every PU, so a
 * definition of thousands of vCPUs is slow to place, not wrong (tests/fuzz/fuzz-plan.c covers sizes). */
#define FUZZ_REQUEST_VCPUS_MAX 64u

static bool unconstrained(const PlacementRequest *req)
{
        return !req->hugepage_size && !req->memory_nodes && !req->ncells && !req->allowed_cpus;
}

/* What every plan must be, whatever the request asked. */
static void check_well_formed(const Topology *t, const PlacementRequest *req, const Plan *p)
{
        fuzz_check(p != NULL, "no plan");
        fuzz_check(p->result == PLAN_PLACED || p->result == PLAN_OVERCOMMITTED ||
                       p->result == PLAN_UNPLACEABLE,
                   "result %d", (int)p->result);
        fuzz_check(p->reason && *p->reason && g_utf8_validate(p->reason, -1, NULL), "reason not text");
        fuzz_check(p->nvcpus == req->vcpus || (p->nvcpus == 0 && p->result == PLAN_UNPLACEABLE),
                   "%u vCPUs for a request of %u", p->nvcpus, req->vcpus);
        for (unsigned i = 0; i < p->nvcpus; i++) {
                int pu = p->vcpu_pu[i];
                fuzz_check(pu >= -1 && pu < (int)t->npus, "vCPU %u on PU index %d of %u", i, pu, t->npus);
                fuzz_check(p->vcpu_pins[i] != NULL, "vCPU %u without a pin set", i);
                if (pu >= 0)
                        fuzz_check(cpuset_has(p->vcpu_pins[i], t->pus[pu].os_index),
                                   "vCPU %u counted on PU %d but not pinned there", i, pu);
                CPUSET_FOREACH (os, p->vcpu_pins[i])
                        fuzz_check(topology_pu_by_os(t, (unsigned)os) >= 0,
                                   "vCPU %u pinned to CPU %d, not the host's", i, os);
        }
        CPUSET_FOREACH (n, p->nodes)
                fuzz_check((unsigned)n < t->nnodes, "node index %d of %u", n, t->nnodes);
}

static void check_plan(const Topology *t, const Ledger *l, const PlacementRequest *req,
                       const PlacementParams *params, const Plan *p)
{
        check_well_formed(t, req, p);
        if (unconstrained(req))
                fuzz_check_plan(t, l, req, params, p);
}

/* Commits a copy of p and releases it: the ledger, hugepage pools included, must be exactly as before.
 * The plan's memory is checked against what the ledger holds for it by fuzz_commit_release(), but for
 * hugepage-backed memory, which the ledger holds in its pools, apart from the nodes' memory. */
static void commit_release(Ledger *l, const PlacementRequest *req, const Plan *p)
{
        const Topology *t = ledger_topology(l);
        static const uint64_t sizes[2] = {UINT64_C(2) << 20, FUZZ_GiB};
        g_autofree uint64_t *before = g_new(uint64_t, 3 * MAX(t->nnodes, 1));
        g_autofree unsigned *core_load = g_new(unsigned, MAX(t->ncores, 1));

        if (!req->hugepage_size) {
                fuzz_commit_release(l, "probe", p);
                return;
        }
        for (unsigned n = 0; n < t->nnodes; n++) {
                before[3 * n] = ledger_node_memory(l, n);
                for (unsigned s = 0; s < 2; s++)
                        before[3 * n + 1 + s] = ledger_node_hugepages(l, n, sizes[s]);
        }
        for (unsigned c = 0; c < t->ncores; c++)
                core_load[c] = ledger_core_load(l, c);
        fuzz_check(ledger_commit(l, "probe", plan_copy(p)) == 0, "ledger_commit failed");
        fuzz_check(ledger_release(l, "probe") == 0, "ledger_release failed");
        for (unsigned n = 0; n < t->nnodes; n++) {
                fuzz_check(ledger_node_memory(l, n) == before[3 * n], "node %u memory not restored", n);
                for (unsigned s = 0; s < 2; s++)
                        fuzz_check(ledger_node_hugepages(l, n, sizes[s]) == before[3 * n + 1 + s],
                                   "node %u: pool of %llu-byte pages not restored", n,
                                   (unsigned long long)sizes[s]);
        }
        for (unsigned c = 0; c < t->ncores; c++)
                fuzz_check(ledger_core_load(l, c) == core_load[c], "core %u load not restored", c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        g_autofree char *text = g_strndup((const char *)data, size);
        g_autofree char *error = NULL;
        g_autoptr(DomainSpec) spec = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(Plan) first = NULL, second = NULL;
        g_auto(RequestShape) shape = {0};
        PlacementRequest req;
        PlacementParams params;
        guint hash;
        int r;

        fuzz_setup();
        if (domain_xml_parse(text, &spec, &error) < 0) {
                fuzz_check(error && *error, "refused without a message");
                return 0;
        }
        if (spec->vcpus > FUZZ_REQUEST_VCPUS_MAX)
                return 0;
        hash = g_str_hash(text);
        params = (PlacementParams){
            .policy = hash & 1 ? POLICY_COMPAT : POLICY_EXPLICIT,
            .emulator_pin = (EmulatorPinMode)((hash >> 1) % _EMULATOR_PIN_MAX),
        };
        t = topology_new_uniform(2, 4, 2, 8 * FUZZ_GiB, NULL);
        fuzz_check(t != NULL, "topology_new_uniform failed");
        for (unsigned n = 0; n < t->nnodes; n++) {
                topology_node_set_hugepages(t, n, UINT64_C(2) << 20, 512);
                topology_node_set_hugepages(t, n, FUZZ_GiB, 2);
        }
        l = ledger_new(t);
        req = domain_request(spec, spec);
        domain_request_shape(spec, t, &req, &shape);

        first = policy_place(t, l, &req, &params);
        check_plan(t, l, &req, &params, first);
        commit_release(l, &req, first);

        /* a second copy beside the first, then both gone */
        r = ledger_commit(l, "first", plan_copy(first));
        fuzz_check(r == 0, "ledger_commit: %d", r);
        second = policy_place(t, l, &req, &params);
        check_plan(t, l, &req, &params, second);
        commit_release(l, &req, second);
        r = ledger_commit(l, "second", plan_copy(second));
        fuzz_check(r == 0, "ledger_commit: %d", r);
        fuzz_check(ledger_release(l, "first") == 0 && ledger_release(l, "second") == 0, "release failed");
        fuzz_check(ledger_is_empty(l), "ledger not empty after every plan is released");
        return 0;
}
