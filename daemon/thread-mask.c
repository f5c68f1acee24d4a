/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CPUs a domain's QEMU threads started on, when its definition pinned the emulator at its start.
 *
 * libvirt starts QEMU under the emulator pin its definition carries (sched_setaffinity() before QEMU runs,
 * so every thread QEMU makes inherits it). A domain restored from a save image (a managed save, the one
 * libvirt-guests makes at shutdown) or migrated in starts under the pin placementd made before, recorded
 * in the saved XML. The kernel (since Linux 6.2) then keeps each of QEMU's threads within those CPUs when
 * the cgroup's cpuset changes (it takes their intersection; only an empty one sets them aside), and
 * virDomainPinEmulator sets QEMU's main thread alone. So an emulator pin that takes in CPUs outside them
 * while keeping some of them moves the main thread only: QEMU's other threads (its I/O and RCU threads,
 * its workers) stay on the CPUs of the old pin, and what placementd says runs is not what runs. A plan's
 * emulator pin is therefore kept within those CPUs, or wholly outside them (where every thread follows).
 *
 * Noted at a start event (booted, restored, migrated in: whatever its definition pins then), and when a
 * running domain is first seen (a reconcile, placementd's start) carrying a record written in another run
 * of it (the record's boot-id= is not this boot's, or its domain-id= not the domain's ID now): restored or
 * migrated in while placementd was not running or libvirt was away, it started on the pin its saved
 * definition carries. A record of this run gives back what it noted (threads=, written with every record
 * while known). A record of this run without it means placementd pinned the domain after it started,
 * wherever libvirt started it: nothing is noted (QEMU's threads are free to follow any pin). Within one
 * boot, a libvirtd restarted while no domain ran numbers domains from 1 again: a domain restored then with
 * its old ID while placementd is down is taken as this run's.
 */
#include "manager-internal.h"
#include "metadata.h"

#include <string.h>

void thread_mask_note(Manager *m, const char *uuid, const DomainSpec *live)
{
        if (live->has_emulatorpin && live->emulatorpin && !cpuset_is_empty(live->emulatorpin))
                g_hash_table_replace(m->thread_masks, g_strdup(uuid), cpuset_copy(live->emulatorpin));
        else
                g_hash_table_remove(m->thread_masks, uuid);
}

char *thread_mask_boot_id(void)
{
        g_autofree char *text = NULL;

        if (!g_file_get_contents("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
                return NULL;
        g_strstrip(text);
        return uuid_text_valid(text) ? g_steal_pointer(&text) : NULL;
}

/* Whether md was written in another run of the domain live runs now: another boot of the host, or
 * another domain ID. */
static bool other_run(const Manager *m, const MetaDecision *md, const DomainSpec *live)
{
        return (md->boot_id && m->boot_id && strcmp(md->boot_id, m->boot_id) != 0) ||
               (md->domain_id && live->domain_id && md->domain_id != live->domain_id);
}

void thread_mask_first_sight(Manager *m, const char *uuid, const DomainSpec *live)
{
        const MetaDecision *md = live->decision;

        if (!md)
                return;
        if (other_run(m, md, live))
                thread_mask_note(m, uuid, live); /* restored or migrated in: started on its saved pin */
        else if (md->threads && !cpuset_is_empty(md->threads))
                g_hash_table_replace(m->thread_masks, g_strdup(uuid), cpuset_copy(md->threads));
}

void thread_mask_forget(Manager *m, const char *uuid)
{
        g_hash_table_remove(m->thread_masks, uuid);
}

CpuSet *thread_mask_cut(const Manager *m, const char *uuid, const CpuSet *set)
{
        const CpuSet *mask = g_hash_table_lookup(m->thread_masks, uuid);
        g_autoptr(CpuSet) outside = NULL;
        CpuSet *within;

        if (!mask || !set || !cpuset_intersects(set, mask))
                return NULL; /* no mask, no pin, or a pin wholly outside it: every thread follows */
        outside = cpuset_copy(set);
        cpuset_subtract(outside, mask);
        if (cpuset_is_empty(outside))
                return NULL;
        within = cpuset_copy(set);
        cpuset_subtract(within, outside);
        return within;
}

const CpuSet *thread_mask_get(const Manager *m, const char *uuid)
{
        return g_hash_table_lookup(m->thread_masks, uuid);
}

/* How what thread_mask_fit() says ends. */
#define KEPT_END "the kernel keeps QEMU's threads there"

char *thread_mask_fit(const Manager *m, const char *uuid, Plan *plan)
{
        g_autoptr(CpuSet) within = thread_mask_cut(m, uuid, plan->emulator_pin);
        g_autofree char *kept = NULL, *started = NULL;

        if (!within)
                return NULL;
        cpuset_clear(plan->emulator_pin);
        cpuset_union(plan->emulator_pin, within);
        kept = cpuset_format(plan->emulator_pin);
        started = cpuset_format(thread_mask_get(m, uuid));
        return g_strdup_printf("emulator pinned to %s, within the CPUs its QEMU threads started on (%s, the "
                               "emulator pin it carried when it started): " KEPT_END,
                               kept, started);
}

char *thread_mask_unsay(const char *reason)
{
        GString *s = g_string_new(reason ? reason : "");
        const char *at, *end;

        while ((at = strstr(s->str, "; emulator pinned to ")) && (end = strstr(at, KEPT_END)))
                g_string_erase(s, at - s->str, end + strlen(KEPT_END) - at);
        return g_string_free(s, FALSE);
}
