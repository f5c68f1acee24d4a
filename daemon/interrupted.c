/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Plans whose apply the lost connection to libvirtd cut off. The pins made before the loss stay on the
 * running domain, and no record says they are placementd's: without this, the reconcile after the
 * reconnect would read them as the user's (<cputune><vcpupin> in a transient domain's live definition)
 * and leave the domain unplaced. Each plan is kept until that reconcile reads the domain.
 */
#include "log.h"
#include "manager-internal.h"
#include "virt-domain.h"

void interrupted_note(Manager *m, const char *uuid, const Plan *plan)
{
        g_hash_table_replace(m->interrupted, g_strdup(uuid), plan_copy(plan));
        g_hash_table_remove(m->interrupted_runs, uuid); /* this run's, whatever was kept before */
}

void interrupted_clear(Manager *m, GHashTable *keep)
{
        GHashTableIter it;
        gpointer uuid;

        /* their runs are over: what their QEMU threads started on goes with them (placer_forget() kept it),
         * and so do their journal entries */
        g_hash_table_iter_init(&it, m->interrupted);
        while (g_hash_table_iter_next(&it, &uuid, NULL)) {
                if (keep && g_hash_table_contains(keep, uuid))
                        continue;
                thread_mask_forget(m, uuid);
                apply_journal_drop(m, uuid);
                g_hash_table_remove(m->interrupted_runs, uuid);
                g_hash_table_iter_remove(&it);
        }
}

bool interrupted_set_aside(Manager *m, const Decision *d)
{
        bool own = d->plan && !d->pinned_by_hand &&
                   (d->result == DECISION_PLACED || d->result == DECISION_OVERCOMMITTED ||
                    d->result == DECISION_FAILED);

        if (!own)
                return false;
        interrupted_note(m, d->uuid, d->plan);
        interrupted_note_run(m, d->uuid, d->domain_id, false);
        return true;
}

void interrupted_note_run(Manager *m, const char *uuid, unsigned domain_id, bool from_journal)
{
        InterruptedRun *r = g_new(InterruptedRun, 1);

        *r = (InterruptedRun){.domain_id = domain_id, .from_journal = from_journal};
        g_hash_table_replace(m->interrupted_runs, g_strdup(uuid), r);
}

/* Whether pin is the one the record md gives libvirt's vCPU id. */
static bool recorded_pin(const MetaDecision *md, unsigned id, const CpuSet *pin)
{
        for (unsigned k = 0; md && md->vcpus && k < md->vcpus->len; k++) {
                const MetaVcpu *v = &g_array_index(md->vcpus, MetaVcpu, k);
                if (v->id == id)
                        return v->cpuset && !cpuset_is_empty(v->cpuset) && cpuset_equal(pin, v->cpuset);
        }
        return false;
}

/* Whether every live vCPU pin of dom is either the plan's pin for it, the one the domain's record gives it
 * (a re-placement cut off half-way: the pins it had not made yet are the earlier plan's) or none (every
 * host CPU, or every CPU of allowed), and at least one is the plan's. */
static bool pins_are_plans(const Manager *m, virDomainPtr dom, const Plan *plan, const DomainSpec *live,
                           const CpuSet *allowed)
{
        unsigned nvcpus = live->vcpus;
        CpuSet **pins = NULL;
        bool ours = true, any = false;

        if (nvcpus == 0 || virt_domain_get_vcpu_pins(dom, nvcpus, live->vcpu_ids, &pins, NULL) < 0)
                return false;
        for (unsigned i = 0; i < nvcpus && ours; i++) {
                bool planned = i < plan->nvcpus && plan_vcpu_id(plan, i) == domain_spec_vcpu_id(live, i) &&
                               !cpuset_is_empty(plan->vcpu_pins[i]) &&
                               cpuset_equal(pins[i], plan->vcpu_pins[i]);

                any |= planned;
                ours = planned || recorded_pin(live->decision, domain_spec_vcpu_id(live, i), pins[i]) ||
                       placer_runs_anywhere(m, pins[i], allowed);
        }
        virt_pins_free(pins, nvcpus);
        return ours && any;
}

/* Whether dom's live pins are the ones the cut-off apply of plan made (or none): then what user shows of
 * them is placementd's, dropped from it (memory_applied: the plan's memory binding was applied too). */
static bool claim(const Manager *m, virDomainPtr dom, const Plan *plan, bool memory_applied,
                  const DomainSpec *live, DomainSpec *user)
{
        if (!pins_are_plans(m, dom, plan, live, user->vcpu_cpuset))
                return false; /* pinned by someone since: as found */
        /* placementd placed it, so its definition pinned no vCPU itself: when user shows pins, it was
         * read from the live definition (a transient domain), and what that pins the interrupted apply
         * made */
        if (user->has_vcpupin) {
                user->has_vcpupin = false;
                if (!cpuset_is_empty(plan->emulator_pin))
                        user->has_emulatorpin = false;
                if (memory_applied)
                        g_clear_pointer(&user->memory_nodeset, cpuset_free);
                if (user->iothreadpins && plan->iothreads)
                        cpuset_subtract(user->iothreadpins, plan->iothreads);
                g_clear_pointer(&user->user_xml, g_free); /* not the user's: placementd touched it */
        }
        return true;
}

bool interrupted_claim(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                       DomainSpec *user)
{
        g_autoptr(Plan) plan = NULL;
        g_autofree InterruptedRun *run = NULL;
        gpointer key = NULL, value = NULL, kept = NULL;

        if (!g_hash_table_steal_extended(m->interrupted, uuid, &key, &value))
                return false;
        g_free(key);
        plan = value;
        if (g_hash_table_steal_extended(m->interrupted_runs, uuid, &key, &kept)) {
                g_free(key);
                run = kept;
        }
        /* read now: placed anew (a new entry) or taken as found */
        apply_journal_drop(m, uuid);
        /* a plan kept beyond its reconcile names its run: a domain started again since runs its own
         * definition's pins */
        if ((run && run->domain_id && run->domain_id != live->domain_id) ||
            !claim(m, dom, plan, !plan->keep_memory, live, user))
                return false;
        log_info("%s: its pins are the ones %s; placing it again", live->name,
                 !run ? "an apply cut off by the lost connection made"
                 : run->from_journal
                     ? "placementd made before it stopped, which no record names (the apply "
                       "journal)"
                     : "placementd made before libvirtd restarted during its start, which no "
                       "record names");
        return true;
}

bool interrupted_claim_unrecorded(Manager *m, virDomainPtr dom, const Decision *d, const DomainSpec *live,
                                  DomainSpec *user)
{
        /* pins placementd made (all of the plan, or those a failed or held apply made) */
        bool own = d->plan && !d->pinned_by_hand &&
                   (d->result == DECISION_PLACED || d->result == DECISION_OVERCOMMITTED ||
                    d->result == DECISION_FAILED);

        /* nothing to claim when user shows no pins (a persistent domain's own definition) */
        if (!own || !(d->job_held || d->unrecorded) || !user->has_vcpupin ||
            !claim(m, dom, d->plan, d->memory_binding == MEMORY_BINDING_APPLIED, live, user))
                return false;
        log_info(
            "%s: its pins are the ones placementd made, which no record names yet (%s); placing it again",
            live->name, d->job_held ? "a job libvirt held cut the apply off" : "the record was not written");
        return true;
}
