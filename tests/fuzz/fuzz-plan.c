/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The placement engine behind the D-Bus Plan(vcpus, memory) method must answer any pair, whatever the
 * daemon's argument checks let through. Input:
 *   [0..4)   vCPUs (little endian)          [4..12) memory in bytes (little endian)
 *   [12]     policy, pin modes, MemoryReserve [13]    reserved CPUs 0-5 (bit mask), host shape (bits 6-7)
 *   then up to 8 earlier placements of 4 bytes: vCPUs (mod 40), memory in 256 MiB units (2 bytes), flags
 *   (bit 0: compat, bit 1: stopped again)
 * Every plan must be valid; committing and releasing the requested plan must leave the ledger as it was;
 * releasing everything must leave it empty.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz-util.h"

#define FUZZ_PREFILL_MAX 8u

static uint64_t read_le(const uint8_t *p, unsigned n)
{
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
                v |= (uint64_t)p[i] << (8 * i);
        return v;
}

static Topology *make_host(unsigned shape)
{
        static const uint32_t two_level[16] = {10, 16, 22, 22, 16, 10, 22, 22,
                                               22, 22, 10, 16, 22, 22, 16, 10};
        static const uint32_t unreachable[9] = {10, 20, UINT32_MAX, 20, 10, 20, UINT32_MAX, 20, 10};

        switch (shape % 6) {
        case 0:
                return topology_new_uniform(2, 4, 2, 8 * FUZZ_GiB, NULL); /* the daemon's demo host */
        case 1:
                return topology_new_uniform(1, 8, 2, 16 * FUZZ_GiB, NULL);
        case 2:
                return topology_new_uniform(4, 2, 2, 4 * FUZZ_GiB, two_level);
        case 3:
                return topology_new_uniform(3, 2, 1, 2 * FUZZ_GiB, unreachable);
        case 4:
                return topology_new_uniform(2, 3, 4, 1 * FUZZ_GiB, NULL);
        default:
                return topology_new_uniform(8, 1, 2, 512u << 20, NULL);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint64_t reserves[4] = {0, 256u << 20, 3 * FUZZ_GiB, UINT64_MAX};
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(Plan) p = NULL;
        g_autoptr(CpuSet) reserved = cpuset_new();
        g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
        PlacementParams params = {0};
        PlacementRequest req = {.name = "plan"};
        unsigned shape;

        fuzz_setup();

        if (size < 12)
                return 0;
        req.vcpus = (unsigned)read_le(data, 4);
        req.memory = read_le(data + 4, 8);
        shape = size > 12 ? data[12] : 0;
        for (unsigned i = 0; size > 13 && i < 6; i++)
                if (data[13] & (1u << i))
                        cpuset_add(reserved, i);
        params = (PlacementParams){
            .policy = shape & 1 ? POLICY_COMPAT : POLICY_EXPLICIT,
            .vcpu_pin = (VcpuPinMode)((shape >> 1) % _VCPU_PIN_MAX),
            .emulator_pin = (EmulatorPinMode)((shape >> 3) % _EMULATOR_PIN_MAX),
            .reserved_cpus = reserved,
            .memory_reserve = reserves[(shape >> 5) % 4],
        };
        t = make_host(shape >> 7 | (size > 13 ? data[13] >> 6 : 0) << 1);
        fuzz_check(t != NULL, "topology_new_uniform failed");
        l = ledger_new(t);

        /* What runs already: placements by either policy, some of them stopped again. */
        for (size_t off = 14; off + 4 <= size && keys->len < FUZZ_PREFILL_MAX; off += 4) {
                PlacementParams pp = params;
                PlacementRequest r = {.vcpus = data[off] % 40, .memory = read_le(data + off + 1, 2) << 28};
                char *key = g_strdup_printf("dom%u", keys->len);
                Plan *prev;

                r.name = key;
                pp.policy = data[off + 3] & 1 ? POLICY_COMPAT : POLICY_EXPLICIT;
                prev = policy_place(t, l, &r, &pp);
                fuzz_check_plan(t, l, &r, &pp, prev);
                fuzz_check(ledger_commit(l, key, prev) == 0, "commit of %s", key);
                g_ptr_array_add(keys, key);
                if (data[off + 3] & 2) {
                        fuzz_check(ledger_release(l, key) == 0, "release of %s", key);
                        g_ptr_array_remove_index(keys, keys->len - 1);
                }
        }

        p = policy_place(t, l, &req, &params);
        fuzz_check_plan(t, l, &req, &params, p);
        fuzz_commit_release(l, "plan", p);

        for (unsigned i = 0; i < keys->len; i++)
                fuzz_check(ledger_release(l, g_ptr_array_index(keys, i)) == 0, "release of %s",
                           (char *)g_ptr_array_index(keys, i));
        fuzz_check(ledger_count(l) == 0 && ledger_is_empty(l), "ledger not empty after releasing all");
        return 0;
}
