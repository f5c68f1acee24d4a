/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CPUs a domain's QEMU threads started on, when its definition pinned the emulator at its start.
 *
 * libvirt starts QEMU under the emulator pin its definition carries (sched_setaffinity() before QEMU runs,
 * so every thread QEMU makes inherits it). A domain restored from a save image (a managed save, the one
 * libvirt-guests makes at shutdown) or migrated in starts under the pin placementd made before, recorded
 * in the saved XML. The kernel then keeps each of QEMU's threads within those CPUs when the cgroup's
 * cpuset changes (it takes their intersection; only an empty one sets them aside), and
 * virDomainPinEmulator sets QEMU's main thread alone. So an emulator pin that takes in CPUs outside them
 * while keeping some of them moves the main thread only: QEMU's other threads (its I/O and RCU threads,
 * its workers) stay on the CPUs of the old pin, and what placementd says runs is not what runs. A plan's
 * emulator pin is therefore kept within those CPUs, or wholly outside them (where every thread follows).
 *
 * Noted at a start, and when a running domain is first seen (a reconcile, placementd's start): a domain
 * restored while placementd was not running started on the pin it carries. A pin that came otherwise
 * (placementd's last run made it, or someone pinned it by hand, which placementd then leaves alone) is
 * taken as a start's too: a pin kept narrower than planned costs little, QEMU's threads left behind make
 * what placementd says untrue.
 */
#include "manager-internal.h"

void thread_mask_note(Manager *m, const char *uuid, const DomainSpec *live)
{
        if (live->has_emulatorpin && live->emulatorpin && !cpuset_is_empty(live->emulatorpin))
                g_hash_table_replace(m->thread_masks, g_strdup(uuid), cpuset_copy(live->emulatorpin));
        else
                g_hash_table_remove(m->thread_masks, uuid);
}

void thread_mask_forget(Manager *m, const char *uuid)
{
        g_hash_table_remove(m->thread_masks, uuid);
}

char *thread_mask_fit(const Manager *m, const char *uuid, Plan *plan)
{
        const CpuSet *mask = g_hash_table_lookup(m->thread_masks, uuid);
        g_autoptr(CpuSet) outside = NULL;
        g_autofree char *kept = NULL, *started = NULL;

        if (!mask || !plan->emulator_pin || !cpuset_intersects(plan->emulator_pin, mask))
                return NULL; /* no mask, no pin, or a pin wholly outside it: every thread follows */
        outside = cpuset_copy(plan->emulator_pin);
        cpuset_subtract(outside, mask);
        if (cpuset_is_empty(outside))
                return NULL;
        cpuset_subtract(plan->emulator_pin, outside);
        kept = cpuset_format(plan->emulator_pin);
        started = cpuset_format(mask);
        return g_strdup_printf("emulator pinned to %s, within the CPUs its QEMU threads started on (%s, the "
                               "emulator pin it carried when it started or placementd started): the kernel "
                               "keeps QEMU's threads there",
                               kept, started);
}
