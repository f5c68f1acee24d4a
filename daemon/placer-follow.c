/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What changed on a placed domain since its decision, as each reconcile finds it: vCPU pins drifted or
 * made by hand, vCPUs or memory resized, memory bound elsewhere, the emulator and I/O threads pinned by
 * someone else or started since; each followed or counted as it runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domain-request.h"
#include "log.h"
#include "manager-internal.h"
#include "placer-internal.h"
#include "policy.h"
#include "virt-domain.h"

/*
 * Live pins other than "anywhere" mean someone pinned it; anywhere is every host CPU, or every host CPU of
 * <vcpu cpuset> (libvirt's default pin for it): allowed's, or the running definition's (a definition
 * edited since the start, for the next one, says nothing of the pins that run). Returns the pins or NULL.
 */
CpuSet **placer_hand_pins(Manager *m, virDomainPtr dom, const DomainSpec *live, const CpuSet *allowed)
{
        unsigned nvcpus = live->vcpus;
        CpuSet **pins = NULL;
        g_autofree char *error = NULL;
        bool pinned = false;

        if (nvcpus == 0 || virt_domain_get_vcpu_pins(dom, nvcpus, live->vcpu_ids, &pins, &error) < 0)
                return NULL;
        for (unsigned i = 0; i < nvcpus && !pinned; i++)
                pinned = !placer_runs_anywhere(m, pins[i], allowed) &&
                         (!live->vcpu_cpuset || !placer_runs_anywhere(m, pins[i], live->vcpu_cpuset));
        if (pinned && !allowed && !live->vcpu_cpuset && m->conn && virt_conn_runs_qemu(m->conn)) {
                /* started after a CPU went offline, before a reconcile read it: libvirt's default pin is
                 * the CPUs online now (the test driver's map is fiction) */
                g_autoptr(CpuSet) online = virt_domain_host_online_cpus(dom);
                pinned = false;
                for (unsigned i = 0; i < nvcpus && !pinned; i++) {
                        g_autoptr(CpuSet) missing = online ? cpuset_copy(online) : NULL;
                        if (missing)
                                cpuset_subtract(missing, pins[i]);
                        pinned = !missing || !cpuset_is_empty(missing);
                }
        }
        if (!pinned) {
                virt_pins_free(pins, nvcpus);
                return NULL;
        }
        return pins;
}

/* Whether pin is libvirt's default for a thread nobody pinned: every host CPU (as placementd knows them,
 * or as libvirt has them online), or every CPU of the <vcpu cpuset> the domain started with: the running
 * definition's (live), the one libvirt pinned to at the start, which a cpuset edited since into or out of
 * the persistent definition, for the next start, does not change; the user's only when the running one is
 * not known (live NULL). A pin onto a cpuset edited into the persistent definition is someone's. */
static bool pin_anywhere(Manager *m, virDomainPtr dom, const DomainSpec *user, const DomainSpec *live,
                         const CpuSet *pin)
{
        const CpuSet *cpuset = live ? live->vcpu_cpuset : user ? user->vcpu_cpuset : NULL;
        g_autoptr(CpuSet) online = NULL;
        g_autoptr(CpuSet) missing = NULL;

        if (placer_runs_anywhere(m, pin, NULL) || (cpuset && placer_runs_anywhere(m, pin, cpuset)))
                return true;
        if (!(online = virt_domain_host_online_cpus(dom)))
                return false;
        missing = cpuset_copy(online);
        cpuset_subtract(missing, pin);
        return cpuset_is_empty(missing);
}

/* Whether the live definition live tells, without asking libvirt (two round trips), that its emulator runs
 * on no pin of someone else's: libvirt keeps a live pin, anyone's, in it (virDomainPinEmulator writes it
 * there) and answers with it; without one, with its vCPUs placed statically (numad's advice is not in it),
 * with its default, the <vcpu cpuset> or every CPU, which is nobody's. own and recorded as for
 * placer_hand_emulator(). */
static bool no_hand_emulator_pin(const DomainSpec *live, const CpuSet *own, const CpuSet *recorded)
{
        if (!live)
                return false;
        if (!live->has_emulatorpin)
                return !live->vcpu_auto;
        return live->emulatorpin && !cpuset_is_empty(live->emulatorpin) &&
               ((own && cpuset_equal(live->emulatorpin, own)) ||
                (recorded && cpuset_equal(live->emulatorpin, recorded)));
}

/*
 * The emulator pin someone else made: the live one when it is neither placementd's own (own: the pin its
 * decision applied, recorded: the one the record in the domain names, which a decision that could not
 * apply its pins, or one made before a save, leaves running; NULL or empty when none) nor libvirt's default
 * (every host CPU, or every CPU of <vcpu cpuset>), and the definition keeps no <emulatorpin> of its own. It
 * is then the user's, as a definition's <emulatorpin> is: made user's (the policy leaves it alone and holds
 * its CPUs apart from the vCPUs) and returned (user's); NULL when there is none.
 */
const CpuSet *placer_hand_emulator(Manager *m, virDomainPtr dom, DomainSpec *user, const DomainSpec *live,
                                   const CpuSet *own, const CpuSet *recorded)
{
        g_autoptr(CpuSet) pin = NULL;

        if (!user || user->has_emulatorpin || no_hand_emulator_pin(live, own, recorded))
                return NULL;
        m->emulator_pin_reads++;
        if (!(pin = virt_domain_emulator_pin(dom)) || cpuset_is_empty(pin) ||
            (own && !cpuset_is_empty(own) && cpuset_equal(pin, own)) ||
            (recorded && !cpuset_is_empty(recorded) && cpuset_equal(pin, recorded)) ||
            pin_anywhere(m, dom, user, live, pin))
                return NULL;
        user->has_emulatorpin = true;
        user->emulatorpin_live = true;
        cpuset_free(user->emulatorpin);
        user->emulatorpin = g_steal_pointer(&pin);
        return user->emulatorpin;
}

/* The CPUs p pins its I/O threads to: their own pin, else the emulator's (an I/O thread added live follows
 * it). */
static const CpuSet *iothread_rule(const Plan *p)
{
        return !cpuset_is_empty(p->iothread_pin) ? p->iothread_pin : p->emulator_pin;
}

unsigned placer_hand_iothreads(Manager *m, virDomainPtr dom, DomainSpec *user, const DomainSpec *live,
                               const Decision *old)
{
        const CpuSet *rule = NULL, *ours = NULL;
        const MetaDecision *rec = NULL;
        unsigned n = 0;

        if (!user || !live || !live->iothreads || !live->iothreadpin_cpus)
                return 0;
        /* a skipped decision's plan is its pins as they run, what placementd pinned before among them */
        if (old && old->plan &&
            (old->result == DECISION_PLACED || old->result == DECISION_OVERCOMMITTED ||
             old->result == DECISION_SKIPPED)) {
                rule = iothread_rule(old->plan);
                ours = old->plan->iothreads;
        } else if (live->decision && (live->decision->user_iothreads || live->decision->iothreads)) {
                /* no decision of this run (a restart or a restore whose record is not adopted, placed
                 * anew): the record's, as for the emulator (placer_hand_emulator()): the threads it names
                 * as the user's, and those pinned off where it says placementd pinned them (by someone
                 * while placementd was down) */
                rec = live->decision;
                rule = rec->iothread_pin && !cpuset_is_empty(rec->iothread_pin) ? rec->iothread_pin
                                                                                : rec->emulator;
                ours = rec->iothreads;
        } else
                return 0;
        for (unsigned i = 0; i < live->iothreadpin_cpus->len; i++) {
                const IothreadPin *pin = &g_array_index(live->iothreadpin_cpus, IothreadPin, i);
                bool named = rec && rec->user_iothreads && cpuset_has(rec->user_iothreads, pin->id);

                if (!cpuset_has(live->iothreads, pin->id) ||
                    (user->iothreadpins && cpuset_has(user->iothreadpins, pin->id)) ||
                    (!named && ours && cpuset_has(ours, pin->id) && rule && cpuset_equal(pin->cpus, rule)) ||
                    (rec && !named && !rec->iothreads) || pin_anywhere(m, dom, user, live, pin->cpus))
                        continue; /* not running, the definition's, placementd's, or nobody's */
                if (!user->iothreadpins)
                        user->iothreadpins = cpuset_new();
                if (!user->iothreadpins_live)
                        user->iothreadpins_live = cpuset_new();
                cpuset_add(user->iothreadpins, pin->id);
                cpuset_add(user->iothreadpins_live, pin->id);
                n++;
        }
        return n;
}

/* placer_hand_emulator(), said at info level when it names one. */
const CpuSet *placer_hand_emulator_said(Manager *m, virDomainPtr dom, DomainSpec *user,
                                        const DomainSpec *live, const CpuSet *own, const CpuSet *recorded,
                                        const char *name)
{
        const CpuSet *pin = placer_hand_emulator(m, dom, user, live, own, recorded);

        if (pin) {
                g_autofree char *list = cpuset_format(pin);
                log_info("%s: its emulator was pinned to %s by someone else: left there", name, list);
        }
        return pin;
}

bool placer_floating_emulator_said(Manager *m, virDomainPtr dom, const DomainSpec *user,
                                   const DomainSpec *live, const CpuSet *recorded, const char *name)
{
        g_autoptr(CpuSet) pin = NULL;
        g_autofree char *list = NULL;

        if (!user || user->has_emulatorpin || !recorded || cpuset_is_empty(recorded) ||
            !(pin = virt_domain_emulator_pin(dom)) || cpuset_is_empty(pin) || cpuset_equal(pin, recorded) ||
            !pin_anywhere(m, dom, user, live, pin))
                return false;
        list = cpuset_format(pin);
        log_info("%s: its emulator runs unpinned (on %s) again: left so", name, list);
        return true;
}

bool placer_emulator_runs_floating(Manager *m, virDomainPtr dom, const DomainSpec *user,
                                   const DomainSpec *live)
{
        g_autoptr(CpuSet) pin = NULL;

        return user && !user->has_emulatorpin && (pin = virt_domain_emulator_pin(dom)) &&
               !cpuset_is_empty(pin) && pin_anywhere(m, dom, user, live, pin);
}

bool placer_floating_emulator(Manager *m, virDomainPtr dom, DomainSpec *user, const DomainSpec *live,
                              const Decision *old)
{
        /* a new start (another domain ID) forgets it, as it forgets a hand pin */
        if (!old || !old->plan || !old->plan->user_emulator_floating ||
            (old->domain_id && live->domain_id && old->domain_id != live->domain_id) ||
            !placer_emulator_runs_floating(m, dom, user, live))
                return false;
        user->has_emulatorpin = true;
        user->emulatorpin_live = true;
        g_clear_pointer(&user->emulatorpin, cpuset_free); /* floating: no CPU of its own to hold */
        return true;
}

void placer_note_floating_emulator(Plan *plan, const PlacementRequest *req)
{
        char *reason;

        if (!plan || !req->keep_emulator || !req->emulator_pinned_live || req->emulator_cpus)
                return;
        plan->user_emulator_floating = true;
        reason = placer_reason_hand_emulator(plan->reason, NULL);
        g_free(plan->reason);
        plan->reason = reason;
}

/* Which of the definition's own <iothreadpin>s hold their CPUs (hold_thread_cpus()). */
typedef enum { IOTHREADS_NONE, IOTHREADS_RUNNING, IOTHREADS_ALL } IothreadHolds;

/*
 * plan->held_pus made again: the CPUs held for QEMU's threads as they run now, those of the user's
 * emulator pin (the definition's, or one placer_hand_emulator() made user's) and those of each of the
 * definition's own <iothreadpin> whose I/O thread runs live (live: the running definition) with that pin
 * (iothreads: IOTHREADS_RUNNING; IOTHREADS_ALL: each of them whether it runs or not; IOTHREADS_NONE: none
 * of them). An I/O thread deleted live, or pinned elsewhere since, holds nothing; one added back and
 * pinned as the definition says holds again.
 */
static void hold_thread_cpus(const Manager *m, const DomainSpec *user, const DomainSpec *live,
                             IothreadHolds iothreads, Plan *plan)
{
        g_autoptr(CpuSet) running = cpuset_new();
        PlacementRequest threads;

        for (unsigned i = 0; user->iothreadpin_cpus && i < user->iothreadpin_cpus->len; i++) {
                const IothreadPin *own = &g_array_index(user->iothreadpin_cpus, IothreadPin, i);

                if (iothreads != IOTHREADS_NONE && user->iothreadpins &&
                    cpuset_has(user->iothreadpins, own->id) &&
                    (iothreads == IOTHREADS_ALL || domain_spec_iothreadpin_runs(live, own->id, own->cpus)))
                        cpuset_add(running, own->id);
        }
        threads = (PlacementRequest){.emulator_cpus = user->emulatorpin,
                                     .iothread_cpus = user->iothreadpin_cpus,
                                     .kept_iothreads = running,
                                     .realtime_emulator = plan->realtime_emulator,
                                     .realtime_iothreads = plan->realtime_iothreads};
        cpuset_clear(plan->held_pus);
        cpuset_clear(plan->held_realtime_pus);
        policy_hold_thread_cpus(m->topology, &threads, plan);
}

/* The host CPUs (OS indexes) of PU indexes pus, as a list ("" when none). */
static char *held_text(const Manager *m, const CpuSet *pus)
{
        g_autoptr(CpuSet) cpus = cpuset_new();

        CPUSET_FOREACH (pu, pus)
                if ((unsigned)pu < m->topology->npus)
                        cpuset_add(cpus, m->topology->pus[pu].os_index);
        return cpuset_format(cpus);
}

/*
 * The CPUs d holds for QEMU's threads made again as they run (hold_thread_cpus()): committed and said when
 * they changed (an I/O thread of the definition's own <iothreadpin> deleted live, or added back with its
 * pin). Read only when d holds some, or runs an I/O thread its decision did not pin (the user's).
 */
static bool follow_holds(Manager *m, virDomainPtr dom, Decision *d, bool others_run)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autoptr(Plan) plan = NULL;
        g_autofree char *was = NULL, *now = NULL;

        if ((!others_run && cpuset_is_empty(d->plan->held_pus)) ||
            virt_domain_read_spec(dom, false, &live, NULL) < 0 || !(user = placer_user_spec(dom, live)))
                return false;
        placer_hand_emulator(m, dom, user, live, d->plan->emulator_pin,
                             live->decision ? live->decision->emulator : NULL);
        plan = plan_copy(d->plan);
        hold_thread_cpus(m, user, live, IOTHREADS_RUNNING, plan);
        if (cpuset_equal(plan->held_pus, d->plan->held_pus))
                return false;
        was = held_text(m, d->plan->held_pus);
        now = held_text(m, plan->held_pus);
        log_info("%s: the CPUs held for its emulator and I/O threads are %s as they run now (were %s)",
                 d->name, *now ? now : "none", *was ? was : "none");
        placer_commit(m, d, g_steal_pointer(&plan));
        return true;
}

/*
 * Whether the user's definition of dom pins I/O thread id itself (<cputune><iothreadpin>): its pin is the
 * user's even when it equals the decision's rule. The definition is read once per pass (*read, *user;
 * *user stays NULL when it cannot be read).
 */
static bool definition_pins_iothread(virDomainPtr dom, bool *read, DomainSpec **user, unsigned id)
{
        if (!*read) {
                g_autoptr(DomainSpec) live = NULL;

                *read = true;
                if (virt_domain_read_spec(dom, false, &live, NULL) == 0)
                        *user = placer_user_spec(dom, live);
        }
        return *user && (*user)->iothreadpins && cpuset_has((*user)->iothreadpins, id);
}

/* Drops the I/O threads gone from what *reason says the user pins. */
static void reason_drop_iothreads(char **reason, const CpuSet *gone)
{
        char *without = policy_reason_without_iothreads(*reason, gone);

        if (!without)
                return;
        g_free(*reason);
        *reason = without;
}

bool placer_follow_iothreads(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autofree unsigned *ids = NULL;
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) live = cpuset_new();
        g_autoptr(CpuSet) gone = NULL;
        CpuSet **pins = NULL;
        g_autoptr(DomainSpec) user = NULL;
        const CpuSet *rule;
        unsigned n = 0;
        bool changed = false, held, user_read = false;
        int r;

        if (!d->plan || (d->result != DECISION_PLACED && d->result != DECISION_OVERCOMMITTED))
                return false;
        /* reading the live I/O threads takes the domain's job: a held one is looked at next round */
        if (held_job_busy(m, dom, &error) < 0)
                return false;
        r = virt_domain_get_iothreads(dom, &ids, &pins, &n, &error);
        if (r == -EBUSY) /* it waited libvirt's 30 s for a job nothing reported */
                held_note_timeout(m, d->uuid, d->name);
        if (r < 0) {
                log_debug("%s: %s", d->name, error);
                return false;
        }
        held_forget_timeouts(m, d->uuid); /* it went through: the job is free */
        rule = iothread_rule(d->plan);
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *list = cpuset_format(pins[i]);
                g_autofree char *pin_error = NULL;

                if (ids[i] == 0 || ids[i] > DOMAIN_XML_MAX_IOTHREADS) {
                        log_debug("%s: I/O thread id %u is out of range: not followed", d->name, ids[i]);
                        continue; /* as the definition parser leaves it out; a set that large is not kept */
                }
                cpuset_add(live, ids[i]);
                if (cpuset_has(d->plan->iothreads, ids[i])) {
                        if (cpuset_equal(pins[i], d->plan->iothread_pin))
                                continue;
                        log_info("%s: I/O thread %u was pinned to %s by someone else: left there", d->name,
                                 ids[i], list);
                        cpuset_remove(d->plan->iothreads, ids[i]);
                        /* the user's from now on, wherever it is pinned next (unpinned, onto the rule's
                         * CPUs again, or placementd's own coming to its CPUs): never taken below for one
                         * added live; the record names it so a restart leaves it too */
                        cpuset_add(d->plan->user_iothreads, ids[i]);
                        changed = true;
                        continue;
                }
                if (cpuset_has(d->plan->user_iothreads, ids[i]))
                        continue; /* the user's (pinned by hand, or by the definition): wherever it runs */
                if (cpuset_is_empty(rule) ||
                    (!placer_runs_anywhere(m, pins[i], NULL) && !cpuset_equal(pins[i], rule)))
                        continue; /* no rule to follow (the emulator is left alone), or pinned by someone */
                if (definition_pins_iothread(dom, &user_read, &user, ids[i]))
                        continue; /* its definition's <iothreadpin>, on the rule's CPUs or not: the user's */
                if (!cpuset_equal(pins[i], rule) &&
                    virt_domain_pin_iothread(dom, ids[i], rule, &pin_error) < 0) {
                        log_warning("%s: I/O thread %u added live: %s", d->name, ids[i], pin_error);
                        continue;
                }
                if (cpuset_is_empty(d->plan->iothread_pin))
                        cpuset_union(d->plan->iothread_pin, rule);
                cpuset_add(d->plan->iothreads, ids[i]);
                {
                        g_autofree char *to = cpuset_format(rule);
                        log_info("%s: I/O thread %u added live: pinned to %s, as the decision's I/O threads",
                                 d->name, ids[i], to);
                }
                changed = true;
        }
        virt_pins_free(pins, n);
        gone = cpuset_copy(d->plan->iothreads);
        cpuset_subtract(gone, live);
        CPUSET_FOREACH (id, gone) {
                log_info("%s: I/O thread %d is gone", d->name, id);
                cpuset_remove(d->plan->iothreads, (unsigned)id);
                changed = true;
        }
        /* one of the user's deleted: an I/O thread added later with its id is a new one, and the reason no
         * longer says it stays where it was pinned */
        g_clear_pointer(&gone, cpuset_free);
        gone = cpuset_copy(d->plan->user_iothreads);
        cpuset_subtract(gone, live);
        if (!cpuset_is_empty(gone)) {
                cpuset_subtract(d->plan->user_iothreads, gone);
                reason_drop_iothreads(&d->reason, gone);
                reason_drop_iothreads(&d->plan->reason, gone); /* and the record */
                changed = true;
        }
        /* the user's I/O threads (not the decision's) hold their <iothreadpin> CPUs only while they run */
        cpuset_subtract(live, d->plan->iothreads);
        held = follow_holds(m, dom, d, !cpuset_is_empty(live));
        if (changed || held) {
                healer_forget_request(m, d->uuid); /* its I/O threads are part of what it asks */
                if (changed)
                        placer_write_record(m, dom, d); /* the record names no held CPU */
                if (m->cb.decision_changed)             /* a signal, not a new decision: the counts stay */
                        m->cb.decision_changed(m, d, d->uuid, d->name, m->userdata);
        }
        return changed || held;
}

/* Whether s holds a CPU other does not. */
static bool holds_more(const CpuSet *s, const CpuSet *other)
{
        g_autoptr(CpuSet) more = cpuset_copy(s);

        cpuset_subtract(more, other);
        return !cpuset_is_empty(more);
}

/*
 * Whether what old holds for the emulator is not what user's emulator pin holds now: old's held CPUs are
 * not those of the emulator, with none, some or all of the CPUs of the definition's own <iothreadpin>s
 * (which I/O threads of these run, and so hold, follow_holds() follows).
 */
static bool emulator_hold_changed(const Manager *m, const DomainSpec *user, const DomainSpec *live,
                                  const Plan *old)
{
        g_autoptr(Plan) alone = plan_copy(old);
        g_autoptr(Plan) all = plan_copy(old);

        hold_thread_cpus(m, user, live, IOTHREADS_NONE, alone);
        hold_thread_cpus(m, user, live, IOTHREADS_ALL, all);
        return holds_more(alone->held_pus, old->held_pus) || holds_more(old->held_pus, all->held_pus);
}

/*
 * placementd's element written over while the domain runs by one without its record (virsh metadata --set
 * '<domain policy="compat"/>', the documented way to choose a transient domain's policy, or '<domain
 * skip="no"/>' after an opt-out; virsh metadata without --config writes a running persistent domain's live
 * element) or removed (virsh metadata --remove): the record went with it, and with a transient domain's the
 * record of its user's definition, the only one it has, so that placementd's own pins read as the
 * definition's <vcpupin> (skipped for good); of any domain, what a restarted placementd adopts. The last
 * record of this run (d, written or adopted) is written back, with the owner's policy= and skip= as the
 * element now has them: nothing of the owner's word is written over (a transient domain's element that
 * says skip='yes' is an opt-out, left as it is; a persistent domain's opt-out is its definition's, and a
 * record beside a live skip='yes' keeps a restarted daemon adopting it as the running one keeps it).
 * Returns whether it was written.
 */
static bool restore_record(Manager *m, virDomainPtr dom, const Decision *d, const DomainSpec *live)
{
        g_autofree char *error = NULL;
        g_autofree char *xml = NULL;
        const char *body;

        g_autofree char *policy = NULL;

        /* a transient domain's live skip='yes' is an opt-out, left as it is; a persistent domain's is
         * not (its definition says), and its record goes back beside it */
        if (!d->record || live->definition || live->decision || !m->config->apply ||
            (live->meta_skip && !virt_domain_is_persistent(dom)) ||
            !g_str_has_prefix(d->record, "<domain") || !(body = strchr(d->record, '>')))
                return false;
        /* the record's own attributes are those of the user's definition when it was written: the
         * element's now stand (an escaped value holds no '>') */
        if (live->meta_policy)
                policy = g_markup_escape_text(live->meta_policy, -1);
        xml = g_strdup_printf("<domain%s%s%s%s%s", live->meta_skip ? " skip=\"yes\"" : "",
                              policy ? " policy=\"" : "", policy ? policy : "", policy ? "\"" : "", body);
        if (virt_domain_set_metadata(dom, xml, &error) < 0) {
                log_warning("%s: %s", d->name, error);
                return false;
        }
        manager_own_metadata_written(m, d->uuid);
        log_info("%s: placementd's element in its metadata was written over or removed while it runs: its "
                 "record written back",
                 d->name);
        return true;
}

/* Whether reason is that of a domain skipped for an opt-out of its definition (domain_spec_opt_out()). */
static bool skipped_for_opt_out(const Decision *d)
{
        static const DomainSpec kinds[] = {
            {.meta_skip = true}, {.has_vcpupin = true}, {.vcpu_auto = true}, {.numatune_auto = true}};

        if (d->result != DECISION_SKIPPED || !d->reason)
                return false;
        for (unsigned i = 0; i < G_N_ELEMENTS(kinds); i++)
                if (g_str_has_prefix(d->reason, domain_spec_opt_out(&kinds[i])))
                        return true;
        return false;
}

bool placer_follow_opt_out(Manager *m, virDomainPtr dom)
{
        static const char skip_reason[] = "opted out with <placementd:domain skip='yes'/>";
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *d = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        const char *why;

        if (!d || virt_domain_read_spec(dom, false, &live, NULL) < 0)
                return false;
        if (restore_record(m, dom, d, live)) {
                g_clear_pointer(&live, domain_spec_free);
                if (virt_domain_read_spec(dom, false, &live, NULL) < 0)
                        return false;
        }
        if (!(user = placer_user_spec(dom, live)))
                return false;
        why = domain_spec_opt_out(user);
        if (d->result == DECISION_SKIPPED) {
                /* skipped for something else (pinned by hand), or for an opt-out that stands; a transient
                 * domain whose owner wrote the element again without skip='yes' took placementd's record
                 * of its definition with it, so its pins read as its definition's until that is restored */
                if (!skipped_for_opt_out(d) ||
                    (why && (user->meta_skip || !g_str_has_prefix(d->reason, skip_reason))))
                        return false;
                why = NULL;
        } else if (!why) {
                return false;
        }
        log_info("%s: %s while it runs: %s", d->name, why ? why : "its opt-out was removed",
                 why ? "no longer placed, its pins stay as they run" : "placing it");
        placer_place(m, dom, ORIGIN_REPLACE, 0);
        return true;
}

/* Whether a vCPU of plan shares its core (its PU under compat, which fills siblings by design) with another
 * vCPU, its own or another domain's, or with a CPU held for another domain's emulator or I/O threads, as
 * the ledger counts them now. */
static bool still_shares(const Manager *m, const Plan *plan)
{
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                int pu = plan->vcpu_pu[i];
                unsigned core;
                if (pu < 0)
                        continue;
                core = m->topology->pus[pu].core;
                if (plan->policy == POLICY_COMPAT
                        ? ledger_pu_load(m->ledger, (unsigned)pu) > 1 ||
                              ledger_pu_held(m->ledger, (unsigned)pu)
                        : ledger_core_load(m->ledger, core) > 1 || ledger_core_held(m->ledger, core))
                        return true;
        }
        return false;
}

static bool pick_shares_no_more(const Manager *m, const Decision *d, const void *arg)
{
        (void)arg;
        return d->result == DECISION_OVERCOMMITTED && d->plan && !still_shares(m, d->plan);
}

/* d's reason, said anew where it stands: in its record (a held job, a wedged guest, is not waited for: the
 * reconcile records it later) and to the D-Bus clients, a signal, not a new decision (the counts stay). */
static void said_anew(Manager *m, Decision *d)
{
        g_autoptr(virDomain) dom = NULL;

        if (m->conn && m->config->apply && virt_conn_lookup_uuid(m->conn, d->uuid, &dom, NULL) == 0 &&
            placer_free_to_record(m, dom, d))
                placer_write_record(m, dom, d);
        if (m->cb.decision_changed)
                m->cb.decision_changed(m, d, d->uuid, d->name, m->userdata);
}

static bool pick_names_realtime_neighbours(const Manager *m, const Decision *d, const void *arg)
{
        (void)arg;
        return d->plan && (policy_reason_names_realtime_neighbours(d->reason) ||
                           policy_may_name_realtime_neighbours(m->topology, m->ledger, d->plan));
}

/* What the reasons say of other domains' realtime vCPUs and threads, said anew once a domain left, moved or
 * came beside them: a reason does not name a domain gone as the one its vCPUs share a core with, and one
 * placed before a realtime guest came onto its cores tells of it too (said in the record as well). */
static void follow_realtime_neighbours(Manager *m)
{
        g_autoptr(GPtrArray) uuids = manager_pick(m, pick_names_realtime_neighbours, NULL);

        for (unsigned i = 0; i < uuids->len; i++) {
                Decision *d = g_hash_table_lookup(m->decisions, g_ptr_array_index(uuids, i));
                g_autoptr(Plan) plan = plan_copy(d->plan);
                char *reason;

                g_free(plan->reason);
                plan->reason = g_strdup(d->reason);
                reason = policy_realtime_neighbours_anew(m->topology, m->ledger, &m->config->placement,
                                                         d->uuid, plan);
                if (strcmp(reason, d->reason) == 0) {
                        g_free(reason);
                        continue;
                }
                g_free(d->reason);
                d->reason = reason;
                g_free(d->plan->reason);
                d->plan->reason = g_strdup(reason);
                log_info(
                    "%s: its reason says anew which domains' realtime vCPUs and threads share its cores",
                    d->name);
                said_anew(m, d);
        }
}

void placer_follow_sharing(Manager *m)
{
        g_autoptr(GPtrArray) uuids = manager_pick(m, pick_shares_no_more, NULL);

        for (unsigned i = 0; i < uuids->len; i++) {
                Decision *d = g_hash_table_lookup(m->decisions, g_ptr_array_index(uuids, i));
                g_autoptr(Plan) plan = plan_copy(d->plan);
                char *reason;

                reason = g_strdup_printf(
                    "%s; no vCPU of it shares a core now: the domains it shared with left or moved",
                    d->reason ? d->reason : "");
                plan->result = PLAN_PLACED;
                plan->shared_vcpus = 0;
                g_free(plan->reason);
                plan->reason = g_strdup(reason);
                g_free(d->reason);
                d->reason = reason;
                d->result = DECISION_PLACED;
                log_info("%s: overcommitted no more: the domains it shared cores with left or moved",
                         d->name);
                placer_commit(m, d, g_steal_pointer(&plan));
                healer_forget_request(m, d->uuid);
                said_anew(m, d);
        }
        follow_realtime_neighbours(m);
}

bool placer_follow_emulator(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autoptr(CpuSet) pin = NULL;
        g_autoptr(Plan) plan = NULL;
        g_autofree char *list = NULL;
        const CpuSet *hand;
        bool dropped, floating, said;

        if (!d || !d->plan || placer_pinned_nothing(d) || !(pin = virt_domain_emulator_pin(dom)))
                return false;
        /* its own pin runs, or none was made and the emulator floats with nothing held for it (and its
         * reason no longer says where a hand pin put it) */
        said = d->reason && strstr(d->reason, HAND_EMULATOR_SAID);
        if (cpuset_is_empty(d->plan->emulator_pin)
                ? pin_anywhere(m, dom, NULL, NULL, pin) && cpuset_is_empty(d->plan->held_pus) && !said
                : cpuset_equal(pin, d->plan->emulator_pin))
                return false;
        if (virt_domain_read_spec(dom, false, &live, NULL) < 0 || !(user = placer_user_spec(dom, live)))
                return false;
        /* the pin its record names runs: placementd's (an apply that could not pin it, a held job) */
        if (live->decision && live->decision->emulator && !cpuset_is_empty(live->decision->emulator) &&
            cpuset_equal(pin, live->decision->emulator))
                return false;
        dropped = !cpuset_is_empty(d->plan->emulator_pin);
        hand = placer_hand_emulator(m, dom, user, live, d->plan->emulator_pin, NULL);
        floating = !hand && pin_anywhere(m, dom, user, live, pin);
        if (!dropped && !emulator_hold_changed(m, user, live, d->plan) && !(floating && said))
                return false;
        plan = plan_copy(d->plan);
        cpuset_clear(plan->emulator_pin);
        /* set floating by its user: a re-placement leaves it so (placer_floating_emulator()) */
        plan->user_emulator_floating = !hand && floating;
        /* the CPUs held for QEMU's threads: the definition's, and the emulator pin someone else made */
        hold_thread_cpus(m, user, live, IOTHREADS_RUNNING, plan);
        list = cpuset_format(pin);
        if (hand)
                log_info("%s: its emulator was pinned to %s by someone else: left there", d->name, list);
        else
                log_info("%s: its emulator runs unpinned (on %s) again: left so", d->name, list);
        if (hand || floating) {
                /* the reason says where it runs now, not where placementd or an earlier hand pin put it
                 * (show: "not pinned") */
                char *reason = placer_reason_hand_emulator(d->reason, hand);
                g_free(d->reason);
                d->reason = reason;
                g_free(plan->reason); /* and the record */
                plan->reason = g_strdup(reason);
        }
        placer_commit(m, d, g_steal_pointer(&plan));
        healer_forget_request(m, d->uuid);
        if (m->config->apply) /* Apply=no writes nothing into a domain, a record neither */
                placer_write_record(m, dom, d);
        if (m->cb.decision_changed) /* a signal, not a new decision: the counts stay */
                m->cb.decision_changed(m, d, d->uuid, d->name, m->userdata);
        return true;
}

void placer_adopt_hand_pins(Manager *m, virDomainPtr dom, const char *what)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        Decision *old = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autoptr(DomainSpec) definition = NULL;
        g_autofree char *error = NULL;
        const char *why;
        CpuSet **pins = NULL;
        PlacementRequest req;
        g_auto(RequestShape) shape = {0};
        Decision *d;
        Plan *adopted;
        unsigned nvcpus;
        uint64_t memory;
        int r;

        if (!old)
                return;
        /* as it runs now: a vCPU added (or memory) while pinned by hand is counted too; a domain whose XML
         * cannot be read, as libvirt's own calls say it runs */
        r = virt_domain_read_spec(dom, false, &live, &error);
        if (r < 0 && r != -ENOENT && (d = placer_count_unreadable(m, dom, uuid, error))) {
                placer_log_decision(d);
                placer_notify(m, d, d->uuid, d->name);
                return;
        }
        if (r < 0) {
                if (error)
                        log_warning("%s: %s, ignoring", old->name, error);
                return;
        }
        /* a domain that opts out stays one: its pins counted again with its own memory binding, and no
         * record written into it unless placementd wrote one there before (placer_skip_opted_out()) */
        definition = placer_user_spec(dom, live);
        /* an emulator pin someone else made is held for it, and not recorded as placementd's */
        if (placer_hand_emulator(m, dom, definition, live, old->plan ? old->plan->emulator_pin : NULL,
                                 live->decision ? live->decision->emulator : NULL) &&
            old->plan)
                cpuset_clear(old->plan->emulator_pin);
        if (definition && (why = domain_spec_opt_out(definition))) {
                placer_release(m, uuid);
                d = placer_skip_opted_out(m, dom, uuid, live, definition, why, old);
                placer_log_decision(d);
                placer_notify(m, d, d->uuid, d->name);
                return;
        }
        nvcpus = live->vcpus;
        memory = live->memory ? live->memory : old->plan ? old->plan->memory : 0;
        if (nvcpus == 0 || virt_domain_get_vcpu_pins(dom, nvcpus, live->vcpu_ids, &pins, &error) < 0) {
                if (error)
                        log_warning("%s: %s, ignoring", old->name, error);
                return;
        }
        /* its definition's isolated emulator CPUs stay held, and its memory is counted where it is bound
         * (by the definition, or by the binding placementd applied, which stands), not where pins moved */
        req = domain_request(definition ? definition : live, live);
        domain_request_shape(live, m->topology, &req, &shape);
        req.name = old->name;
        req.vcpus = nvcpus;
        req.memory = memory;
        if (old->plan && old->plan->hugepage_size)
                req.hugepage_size = old->plan->hugepage_size;
        placer_release(m, uuid);
        d = decision_new(uuid, old->name);
        d->domain_id = virt_domain_id(dom);
        d->result = DECISION_SKIPPED;
        d->pinned_by_hand = true;
        d->reason = g_strdup_printf("%s; pins adopted as they are, placementd does not fight them", what);
        /* what was applied before still stands: the emulator and I/O thread pins, the memory binding */
        d->memory_binding = placer_binding_that_runs(old->memory_binding);
        /* a live binding placementd did not make (it bound nothing: MemoryBinding=no, or its binding
         * failed) is someone else's, left as it is */
        if (live->memory_nodeset && d->memory_binding != MEMORY_BINDING_APPLIED &&
            d->memory_binding != MEMORY_BINDING_ADVISORY)
                d->memory_binding = MEMORY_BINDING_KEPT;
        adopted = policy_adopt(m->topology, m->ledger, &req, pins, &m->config->placement);
        plan_set_realtime(adopted, live->realtime, live->realtime_vcpus);
        plan_set_realtime_threads(adopted, live->realtime_emulator, live->realtime_iothreads);
        plan_set_vcpu_ids(adopted, live->vcpu_ids, nvcpus);
        if (old->plan) {
                cpuset_union(adopted->emulator_pin, old->plan->emulator_pin);
                cpuset_union(adopted->iothreads, old->plan->iothreads);
                cpuset_union(adopted->iothread_pin, old->plan->iothread_pin);
        }
        g_free(adopted->reason);
        adopted->reason = g_strdup(d->reason);
        d = placer_record(m, d, adopted);
        virt_pins_free(pins, nvcpus);
        g_clear_pointer(&error, g_free);
        /* Apply=no writes nothing into a domain, a record neither */
        if (m->config->apply && placer_free_to_record(m, dom, d) && (user = placer_user_spec(dom, live)))
                placer_write_metadata(m, dom, d, user);
        placer_log_decision(d);
        placer_notify(m, d, d->uuid, d->name);
}

/* The memory a domain's decision counts, from its live definition: libvirt's size (max_kib_bytes, what
 * virDomainGetMaxMemory answers) counts nvdimm and virtio-pmem devices too, which are files, not host
 * RAM, and a virtio-mem device's whole size where the decision counts what its guest plugged. Read only
 * when the two may differ; max_kib_bytes when the definition cannot be read. */
static uint64_t live_memory(virDomainPtr dom, uint64_t max_kib_bytes)
{
        g_autoptr(DomainSpec) live = NULL;

        if (virt_domain_read_spec(dom, false, &live, NULL) < 0 || !live->memory)
                return max_kib_bytes;
        return live->memory;
}

/* Whether the memory the domain holds now differs from what its decision counts (max_kib_bytes as
 * virt_domain_live_size() read it, 0 when unknown); *ret_memory is what it holds. The same size as the
 * decision's is the same memory, but for a guest with cells (a virtio-mem device plugs into one) that
 * had all of its virtio-mem memory plugged: libvirt's <memory> stays put while the guest unplugs, and
 * its current memory (the balloon's plus what virtio-mem devices hold) is then below it. */
static bool memory_changed(virDomainPtr dom, const Plan *plan, uint64_t max_kib_bytes, uint64_t *ret_memory)
{
        uint64_t current;

        *ret_memory = max_kib_bytes;
        if (!max_kib_bytes)
                return false;
        if (max_kib_bytes == plan->memory &&
            (!plan->ncells || !(current = virt_domain_current_memory(dom)) || current >= max_kib_bytes))
                return false;
        *ret_memory = live_memory(dom, max_kib_bytes);
        return *ret_memory != plan->memory;
}

bool placer_hand_pinned_resized(Manager *m, virDomainPtr dom, const Decision *d)
{
        unsigned vcpus;
        uint64_t memory;
        (void)m;

        if (!d->plan || !d->pinned_by_hand)
                return false;
        virt_domain_live_size(dom, &vcpus, &memory);
        return (vcpus > 0 && vcpus != d->plan->nvcpus) || memory_changed(dom, d->plan, memory, &memory);
}

/* A domain whose online vCPUs are not 0..n-1 may change which run and keep their count (libvirt's test
 * driver does so on setvcpus): its live ids are read again. A domain with dense ids is not read (a swap
 * there needs an unplug and a plug; the count changes between them). */
static bool other_vcpus_online(virDomainPtr dom, const Decision *d)
{
        g_autoptr(DomainSpec) live = NULL;
        bool same;

        if (!d->plan->vcpu_ids || virt_domain_read_spec(dom, false, &live, NULL) < 0 ||
            live->vcpus != d->plan->nvcpus)
                return false;
        same =
            live->vcpu_ids && memcmp(live->vcpu_ids, d->plan->vcpu_ids, sizeof(unsigned) * live->vcpus) == 0;
        if (!same)
                log_info("%s: other vCPUs run than its decision pins: placing it again", d->name);
        return !same;
}

bool placer_resized(Manager *m, virDomainPtr dom, const Decision *d)
{
        unsigned vcpus;
        uint64_t memory;
        (void)m;

        /* an opted-out or hand-pinned domain is not placementd's to re-place */
        if (!d->plan || d->result == DECISION_SKIPPED)
                return false;
        virt_domain_live_size(dom, &vcpus, &memory);
        if (vcpus > 0 && vcpus != d->plan->requested_vcpus) {
                log_info("%s: %u vCPUs online, its decision counts %u: placing it again", d->name, vcpus,
                         d->plan->requested_vcpus);
                return true;
        }
        if (memory_changed(dom, d->plan, memory, &memory)) {
                log_info("%s: %llu KiB of memory, its decision counts %llu KiB: placing it again", d->name,
                         (unsigned long long)(memory / 1024), (unsigned long long)(d->plan->memory / 1024));
                return true;
        }
        return other_vcpus_online(dom, d);
}

bool placer_pinned_nothing(const Decision *d)
{
        bool counted_as_runs = d->plan && d->plan->result == PLAN_ADOPTED;

        return (d->result == DECISION_SKIPPED && !d->pinned_by_hand) ||
               ((d->result == DECISION_ADVISORY || d->result == DECISION_UNPLACEABLE) && !counted_as_runs);
}

/* Whether libvirt binds d's memory live (strict or interleave) so as to leave out a node its plan counts
 * memory on: the node it leaves out, or -1. */
static int binding_leaves_out(Manager *m, virDomainPtr dom, const Decision *d, CpuSet **ret_bound)
{
        g_autoptr(CpuSet) bound = NULL;
        int mode;

        /* counted where placementd put it or as it ran; cells are bound per cell, not by this nodeset */
        if (!d->plan || !d->plan->memory || d->plan->ncells ||
            virt_domain_get_memory_nodes(dom, &bound, &mode) < 0 || cpuset_is_empty(bound))
                return -1;
        /* preferred binds nothing but its first node; restrictive is the definition's (domain_request()) */
        if (mode != VIR_DOMAIN_NUMATUNE_MEM_STRICT && mode != VIR_DOMAIN_NUMATUNE_MEM_INTERLEAVE)
                return -1;
        for (unsigned n = 0; n < d->plan->nnode_memory && n < m->topology->nnodes; n++)
                if (d->plan->node_memory[n] && !cpuset_has(bound, m->topology->nodes[n].os_index)) {
                        *ret_bound = g_steal_pointer(&bound);
                        return (int)m->topology->nodes[n].os_index;
                }
        return -1;
}

bool placer_binding_moved(Manager *m, virDomainPtr dom, const Decision *d)
{
        g_autoptr(CpuSet) bound = NULL;
        g_autofree char *list = NULL;
        int node;

        if (placer_pinned_nothing(d) || (node = binding_leaves_out(m, dom, d, &bound)) < 0)
                return false;
        list = cpuset_format(bound);
        log_info(
            "%s: its memory is bound to node%s %s live, its decision counts some on node %d: counting it "
            "as it runs",
            d->name, cpuset_count(bound) == 1 ? "" : "s", list, node);
        return true;
}

bool placer_advice_binding_moved(Manager *m, virDomainPtr dom, const Decision *d)
{
        g_autoptr(CpuSet) bound = NULL;
        g_autofree char *list = NULL;
        int node;

        if (d->result != DECISION_ADVISORY || (node = binding_leaves_out(m, dom, d, &bound)) < 0)
                return false;
        list = cpuset_format(bound);
        log_info("%s: its memory is bound to node%s %s live, its advice counts some on node %d: advising it "
                 "again",
                 d->name, cpuset_count(bound) == 1 ? "" : "s", list, node);
        return true;
}

int placer_live_pins_planned(Manager *m, virDomainPtr dom, const Plan *p, bool by_hand)
{
        CpuSet **pins = NULL;
        bool same = true;

        if (p->nvcpus == 0 || virt_domain_get_vcpu_pins(dom, p->nvcpus, p->vcpu_ids, &pins, NULL) < 0)
                return -1;
        /* a vCPU without a pin in the plan runs as planned wherever it runs; pinned by hand, only while it
         * floats over the host (a record of hand pins leaves floating vCPUs out: one pinned since is not) */
        for (unsigned i = 0; i < p->nvcpus && same; i++)
                same = cpuset_is_empty(p->vcpu_pins[i])
                           ? !by_hand || cpuset_equal(pins[i], m->topology->all_pus)
                           : cpuset_equal(pins[i], p->vcpu_pins[i]);
        virt_pins_free(pins, p->nvcpus);
        return same;
}

bool placer_skipped_now_pinned(Manager *m, virDomainPtr dom, const Decision *d)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        CpuSet **pins;

        if (!placer_pinned_nothing(d) || virt_domain_read_spec(dom, false, &live, NULL) < 0 ||
            !(user = placer_user_spec(dom, live)))
                return false;
        /* "anywhere" as placer_skip_opted_out() and found_running() judge it */
        pins = placer_hand_pins(m, dom, live, user->vcpu_cpuset);
        if (!pins)
                return false;
        virt_pins_free(pins, live->vcpus);
        return true;
}

bool placer_pins_drifted(Manager *m, virDomainPtr dom, const Decision *d)
{
        /* an unplaceable or advised domain still counted on the pins it had is followed like one pinned by
         * hand */
        if (!d->plan || placer_pinned_nothing(d))
                return false;
        return placer_live_pins_planned(m, dom, d->plan, d->pinned_by_hand) == 0;
}
