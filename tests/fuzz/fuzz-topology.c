/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topology_load() on any file content (an hwloc XML export, or not), through a memfd named by its
 * /proc/self/fd path. A topology that loads must be consistent and the placement engine must make a
 * valid plan on it; the ledger must give back what the plan took.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-util.h"
#include "topology-load.h"

static void check_topology(const Topology *t)
{
        unsigned pus = 0;

        fuzz_check(t->nnodes > 0 && t->npus > 0 && t->ncores > 0, "%u nodes, %u cores, %u PUs", t->nnodes,
                   t->ncores, t->npus);
        fuzz_check(t->distance && t->nodesets && t->all_pus, "topology without distances, node sets or PUs");
        fuzz_check(cpuset_count(t->all_pus) == t->npus, "%u PUs, %u in all_pus", t->npus,
                   cpuset_count(t->all_pus));
        for (unsigned n = 0; n < t->nnodes; n++) {
                const TopoNode *node = &t->nodes[n];
                fuzz_check(node->core_first + node->ncores <= t->ncores, "node %u cores out of range", n);
                fuzz_check(topology_node_by_os(t, node->os_index) == (int)n, "node %u lookup", n);
                pus += node->npus;
        }
        fuzz_check(pus == t->npus, "nodes hold %u PUs of %u", pus, t->npus);
        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                fuzz_check(core->node < t->nnodes && core->package < t->npackages && core->l3 < t->nl3,
                           "core %u refers out of range", c);
                fuzz_check(core->npus > 0 && core->pu_first + core->npus <= t->npus, "core %u PUs", c);
        }
        for (unsigned p = 0; p < t->npus; p++) {
                fuzz_check(t->pus[p].core < t->ncores, "PU %u core", p);
                fuzz_check(topology_pu_by_os(t, t->pus[p].os_index) == (int)p, "PU %u lookup", p);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static int fd = -1;
        g_autofree char *path = NULL, *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(Plan) p = NULL;
        PlacementParams params = {
            .policy = size % 2 ? POLICY_COMPAT : POLICY_EXPLICIT,
            .vcpu_pin = (VcpuPinMode)(size / 2 % _VCPU_PIN_MAX),
            .emulator_pin = (EmulatorPinMode)(size / 8 % _EMULATOR_PIN_MAX),
        };
        PlacementRequest req = {.name = "fuzz", .vcpus = 1 + (unsigned)(size / 32 % 8), .memory = FUZZ_GiB};
        int r;

        fuzz_setup();

        if (fd < 0) {
                fd = memfd_create("fuzz-topology", MFD_CLOEXEC);
                if (fd < 0)
                        abort();
        }
        if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
                abort();
        path = g_strdup_printf("/proc/self/fd/%d", fd);

        r = topology_load(path, &t, &error);
        if (r < 0) {
                fuzz_check(!t && error, "failed load (%d) without a message, or with a topology", r);
                return 0;
        }
        fuzz_check(t && !error, "loaded, with a message: %s", error);
        check_topology(t);

        l = ledger_new(t);
        p = policy_place(t, l, &req, &params);
        fuzz_check_plan(t, l, &req, &params, p);
        fuzz_commit_release(l, "fuzz", p);
        fuzz_check(ledger_is_empty(l), "ledger not empty after release");
        return 0;
}
