/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placing one domain: read what it is, respect its opt-outs, adopt what it already records, ask the
 * policy, apply the plan live, record the decision in the domain and in the ledger.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load-monitor.h"
#include "domain-request.h"
#include "log.h"
#include "manager-internal.h"
#include "metadata.h"
#include "policy.h"
#include "spec-record.h"
#include "virt-domain.h"

static uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void placer_notify(Manager *m, const Decision *d, const char *uuid, const char *name)
{
        if (d) {
                PolicyKind k = d->plan ? d->plan->policy : m->config->placement.policy;
                m->stats.decisions[k][d->result]++;
        }
        if (m->cb.decision_changed)
                m->cb.decision_changed(m, d, uuid, name, m->userdata);
}

void placer_forget(Manager *m, const char *uuid, const char *why)
{
        Decision *d = g_hash_table_lookup(m->decisions, uuid);
        g_autofree char *name = NULL, *id = NULL;

        load_monitor_forget(m->load, uuid); /* its next start is a new guest to measure */
        if (m->heal_moved)                  /* and a new run cools down only once it is moved */
                g_hash_table_remove(m->heal_moved, uuid);
        if (!d)
                return;
        /* uuid may be d's own (the caller held the decision): copy what outlives it */
        name = g_strdup(d->name);
        id = g_strdup(d->uuid);
        ledger_release(m->ledger, id);
        healer_forget_request(m, id);
        log_info("%s: %s; its cores and memory are free again", name, why);
        g_hash_table_remove(m->decisions, id);
        placer_notify(m, NULL, id, name);
        manager_heal_soon(m, name);
}

/* Stores d (taking it), committing plan (taken, may be NULL) to the ledger under its UUID. */
/* Makes plan (taken, may be NULL) d's plan and what the ledger counts for it. */
static void commit(Manager *m, Decision *d, Plan *plan)
{
        ledger_release(m->ledger, d->uuid);
        g_clear_pointer(&d->plan, plan_free);
        g_clear_pointer(&d->advice, plan_free);
        if (!plan)
                return;
        d->plan = plan_copy(plan);
        /* the ledger needs the assignment, not the reasoning: the decision keeps that */
        g_ptr_array_set_size(plan->candidates, 0);
        if (ledger_commit(m->ledger, d->uuid, plan) < 0)
                log_warning("%s: its plan does not fit the host's topology, not counted", d->name);
}

static Decision *record(Manager *m, Decision *d, Plan *plan)
{
        healer_forget_request(m, d->uuid); /* what heal read was asked of the old decision */
        commit(m, d, plan);
        d->decided_usec = (int64_t)now_usec(CLOCK_REALTIME);
        g_hash_table_replace(m->decisions, d->uuid, d);
        return d;
}

bool placer_runs_anywhere(const Manager *m, const CpuSet *pins, const CpuSet *allowed)
{
        g_autoptr(CpuSet) missing = cpuset_copy(m->topology->all_pus);

        /* libvirt's default pin is the CPUs online when it is made: none offline now is missing */
        cpuset_subtract(missing, m->offline);
        if (allowed) { /* the host CPUs of the cpuset */
                g_autoptr(CpuSet) forbidden = cpuset_copy(m->topology->all_pus);
                cpuset_subtract(forbidden, allowed);
                cpuset_subtract(missing, forbidden);
        }
        cpuset_subtract(missing, pins);
        return cpuset_is_empty(missing);
}

static CpuSet *host_online_cpus(virDomainPtr dom);

/*
 * Live pins other than "anywhere" mean someone pinned it; anywhere is every host CPU, or every host CPU of
 * <vcpu cpuset> (libvirt's default pin for it): allowed's, or the running definition's (a definition
 * edited since the start, for the next one, says nothing of the pins that run). Returns the pins or NULL.
 */
static CpuSet **hand_pins(Manager *m, virDomainPtr dom, const DomainSpec *live, const CpuSet *allowed)
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
                g_autoptr(CpuSet) online = host_online_cpus(dom);
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

/* True when the live pins of the running vCPUs are the ones the recorded decision md says placementd made
 * (a record names vCPUs by libvirt's ids). */
static bool live_pins_recorded(virDomainPtr dom, const DomainSpec *live, const MetaDecision *md)
{
        unsigned nvcpus = live->vcpus;
        CpuSet **pins = NULL;
        bool same = md->vcpus && md->vcpus->len > 0;

        if (!same || nvcpus == 0 || virt_domain_get_vcpu_pins(dom, nvcpus, live->vcpu_ids, &pins, NULL) < 0)
                return false;
        for (unsigned i = 0; i < md->vcpus->len && same; i++) {
                const MetaVcpu *v = &g_array_index(md->vcpus, MetaVcpu, i);
                int k = vcpu_id_index(live->vcpu_ids, nvcpus, v->id);
                same = k >= 0 && cpuset_equal(pins[k], v->cpuset);
        }
        virt_pins_free(pins, nvcpus);
        return same;
}

/* The recorded definition snapshot of src, parsed; NULL (said once) when there is none or it is bad. */
static DomainSpec *recorded_definition(const DomainSpec *src, const char *name)
{
        g_autofree char *error = NULL;
        DomainSpec *user = NULL;

        if (src->definition_too_big)
                log_warning("%s: its recorded definition is over %u bytes, not read", name,
                            DOMAIN_XML_MAX_DEFINITION);
        if (!src->definition)
                return NULL;
        if (domain_xml_parse_definition(src->definition, &user, &error) < 0) {
                log_warning("%s: its recorded definition cannot be read (%s)", name, error);
                return NULL;
        }
        return user;
}

/*
 * The user's own definition, where opt-outs and constraints are read: the persistent (inactive)
 * definition of a persistent domain, the live one of a transient domain; either stands for the
 * definition recorded in it when there is one (placementd recorded it before touching the domain, or
 * the persistent definition was made from the live one; a persistent definition edited since stands
 * for itself). Without a usable record, on a definition placementd already touched, pins equal to the
 * recorded decision are placementd's own, and no snapshot is taken from it. Returns NULL (and says
 * why) when the domain cannot be read.
 */
static DomainSpec *user_spec(virDomainPtr dom, const DomainSpec *live)
{
        g_autoptr(DomainSpec) cfg = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autofree char *error = NULL;
        const DomainSpec *src = live;
        bool recorded;

        if (virt_domain_is_persistent(dom)) {
                if (virt_domain_read_spec(dom, true, &cfg, &error) < 0) {
                        log_warning("%s: %s; using its live definition", live->name, error);
                        g_clear_pointer(&error, g_free);
                } else {
                        src = cfg;
                }
        }
        user = recorded_definition(src, live->name);
        if (user && src == cfg && !domain_spec_record_explains(cfg, user))
                g_clear_pointer(&user, domain_spec_free);
        recorded = user != NULL;
        if (!user && (!src->user_xml || domain_xml_parse_definition(src->user_xml, &user, &error) < 0)) {
                g_clear_pointer(&error, g_free);
                if (virt_domain_read_spec(dom, src == cfg, &user, &error) < 0) {
                        log_warning("%s: %s", live->name, error);
                        return NULL;
                }
        }
        if (!recorded &&
            (src->decision || src->decision_error || src->definition || src->definition_too_big)) {
                /* placementd touched this definition and did not record the user's: it is not theirs */
                g_clear_pointer(&user->user_xml, g_free);
                if (user->has_vcpupin && src->decision &&
                    (src == cfg ? domain_spec_pins_recorded(src)
                                : live_pins_recorded(dom, live, src->decision)))
                        user->has_vcpupin = false;
                /* the I/O threads the record says placementd pinned are its own */
                if (user->iothreadpins && src->decision && src->decision->iothreads)
                        cpuset_subtract(user->iothreadpins, src->decision->iothreads);
                /* and so are the emulator pin and memory binding it recorded applying */
                domain_spec_drop_recorded(user, src);
        }
        g_clear_pointer(&user->definition, g_free);
        g_free(user->name);
        user->name = g_strdup(src->name);
        g_free(user->uuid);
        user->uuid = g_strdup(live->uuid);
        user->meta_skip = src->meta_skip;
        g_free(user->meta_policy);
        user->meta_policy = g_strdup(src->meta_policy);
        return g_steal_pointer(&user);
}

/* The live pin of dom's emulator threads (OS indexes), or NULL when libvirt cannot say. */
static CpuSet *live_emulator_pin(virDomainPtr dom)
{
        int ncpus = virNodeGetCPUMap(virDomainGetConnect(dom), NULL, NULL, 0);
        g_autofree unsigned char *map = NULL;
        CpuSet *pin;
        int len;

        if (ncpus <= 0)
                return NULL;
        len = VIR_CPU_MAPLEN(ncpus);
        map = g_malloc0((gsize)len);
        if (virDomainGetEmulatorPinInfo(dom, map, len, VIR_DOMAIN_AFFECT_LIVE) < 0)
                return NULL;
        pin = cpuset_new();
        for (int c = 0; c < ncpus; c++)
                if (VIR_CPU_USABLE(map, len, 0, c))
                        cpuset_add(pin, (unsigned)c);
        return pin;
}

/* The host CPUs libvirt has online (where it runs a thread nobody pinned), or NULL when it cannot say. */
static CpuSet *host_online_cpus(virDomainPtr dom)
{
        unsigned char *map = NULL;
        unsigned online = 0;
        int ncpus = virNodeGetCPUMap(virDomainGetConnect(dom), &map, &online, 0);
        CpuSet *cpus;

        if (ncpus <= 0 || !map)
                return NULL;
        cpus = cpuset_new();
        for (int c = 0; c < ncpus; c++)
                if (VIR_CPU_USED(map, c))
                        cpuset_add(cpus, (unsigned)c);
        free(map);
        return cpus;
}

/* Whether pin is libvirt's default for a thread nobody pinned: every host CPU (as placementd knows them,
 * or as libvirt has them online), or every CPU of the definition's <vcpu cpuset>. */
static bool pin_anywhere(Manager *m, virDomainPtr dom, const DomainSpec *user, const CpuSet *pin)
{
        g_autoptr(CpuSet) online = NULL;
        g_autoptr(CpuSet) missing = NULL;

        if (placer_runs_anywhere(m, pin, NULL) ||
            (user && user->vcpu_cpuset && placer_runs_anywhere(m, pin, user->vcpu_cpuset)))
                return true;
        if (!(online = host_online_cpus(dom)))
                return false;
        missing = cpuset_copy(online);
        cpuset_subtract(missing, pin);
        return cpuset_is_empty(missing);
}

/* Where libvirt runs a thread nobody pinned: every CPU of the definition's <vcpu cpuset>, else every host
 * CPU. */
static CpuSet *unpinned_cpus(const Manager *m, const DomainSpec *user)
{
        return cpuset_copy(user && user->vcpu_cpuset ? user->vcpu_cpuset : m->topology->all_pus);
}

/*
 * The emulator pin someone else made: the live one when it is neither placementd's own (own: the pin its
 * decision applied, recorded: the one the record in the domain names, which a decision that could not
 * apply its pins, or one made before a save, leaves running; NULL or empty when none) nor libvirt's default
 * (every host CPU, or every CPU of <vcpu cpuset>), and the definition keeps no <emulatorpin> of its own. It
 * is then the user's, as a definition's <emulatorpin> is: made user's (the policy leaves it alone and holds
 * its CPUs apart from the vCPUs) and returned (user's); NULL when there is none.
 */
static const CpuSet *hand_emulator(Manager *m, virDomainPtr dom, DomainSpec *user, const CpuSet *own,
                                   const CpuSet *recorded)
{
        g_autoptr(CpuSet) pin = NULL;

        if (!user || user->has_emulatorpin || !(pin = live_emulator_pin(dom)) || cpuset_is_empty(pin) ||
            (own && !cpuset_is_empty(own) && cpuset_equal(pin, own)) ||
            (recorded && !cpuset_is_empty(recorded) && cpuset_equal(pin, recorded)) ||
            pin_anywhere(m, dom, user, pin))
                return NULL;
        user->has_emulatorpin = true;
        user->emulatorpin_live = true;
        cpuset_free(user->emulatorpin);
        user->emulatorpin = g_steal_pointer(&pin);
        return user->emulatorpin;
}

/* hand_emulator(), said at info level when it names one. */
static const CpuSet *hand_emulator_said(Manager *m, virDomainPtr dom, DomainSpec *user, const CpuSet *own,
                                        const CpuSet *recorded, const char *name)
{
        const CpuSet *pin = hand_emulator(m, dom, user, own, recorded);

        if (pin) {
                g_autofree char *list = cpuset_format(pin);
                log_info("%s: its emulator was pinned to %s by someone else: left there", name, list);
        }
        return pin;
}

static void write_metadata(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user)
{
        g_autofree char *xml = NULL, *error = NULL;

        if (!d->plan)
                return;
        xml = metadata_format(m->topology, d->plan, decision_result_to_string(d->result), d->memory_binding,
                              user);
        d->unrecorded = virt_domain_set_metadata(dom, xml, &error) < 0;
        if (d->unrecorded)
                log_warning("%s: %s; the next reconcile records it again", d->name, error);
}

/* Whether dom's job is free for a metadata write that nothing before it looked at (after an apply or an
 * I/O thread read, the look was made there); else d stays unrecorded and the next reconcile writes it. */
static bool free_to_record(virDomainPtr dom, Decision *d)
{
        g_autofree char *error = NULL;

        if (virt_domain_job_held(dom, &error) == 0)
                return true;
        d->unrecorded = true;
        log_warning("%s: %s; the next reconcile records it again", d->name, error);
        return false;
}

/* Writes d into dom's metadata again; false when dom is gone or unreadable. */
static bool record_again(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autofree char *error = NULL;

        if (virt_domain_read_spec(dom, false, &live, &error) < 0 || !(user = user_spec(dom, live)))
                return false; /* gone or unreadable: the reconcile's next round sees to it */
        write_metadata(m, dom, d, user);
        return true;
}

void placer_record_again(Manager *m, virDomainPtr dom, Decision *d)
{
        if (free_to_record(dom, d) && record_again(m, dom, d) && !d->unrecorded)
                log_info("%s: decision recorded in its metadata again", d->name);
}

bool placer_follow_iothreads(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autofree unsigned *ids = NULL;
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) live = cpuset_new();
        g_autoptr(CpuSet) gone = NULL;
        CpuSet **pins = NULL;
        const CpuSet *rule;
        unsigned n = 0;
        bool changed = false;

        if (!d->plan || (d->result != DECISION_PLACED && d->result != DECISION_OVERCOMMITTED))
                return false;
        /* reading the live I/O threads takes the domain's job: a held one is looked at next round */
        if (virt_domain_job_held(dom, &error) < 0 ||
            virt_domain_get_iothreads(dom, &ids, &pins, &n, &error) < 0) {
                log_debug("%s: %s", d->name, error);
                return false;
        }
        rule = !cpuset_is_empty(d->plan->iothread_pin) ? d->plan->iothread_pin : d->plan->emulator_pin;
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *list = cpuset_format(pins[i]);
                g_autofree char *pin_error = NULL;

                if (ids[i] == 0 || ids[i] > DOMAIN_XML_MAX_IOTHREADS) {
                        log_debug("%s: I/O thread id %u is out of range: not followed", d->name, ids[i]);
                        continue; /* as the definition parser refuses it; a set that large is not kept */
                }
                cpuset_add(live, ids[i]);
                if (cpuset_has(d->plan->iothreads, ids[i])) {
                        if (cpuset_equal(pins[i], d->plan->iothread_pin))
                                continue;
                        log_info("%s: I/O thread %u was pinned to %s by someone else: left there", d->name,
                                 ids[i], list);
                        cpuset_remove(d->plan->iothreads, ids[i]);
                        changed = true;
                        continue;
                }
                if (cpuset_is_empty(rule) ||
                    (!placer_runs_anywhere(m, pins[i], NULL) && !cpuset_equal(pins[i], rule)))
                        continue; /* no rule to follow (the emulator is left alone), or pinned by someone */
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
        if (changed) {
                healer_forget_request(m, d->uuid); /* its I/O threads are part of what it asks */
                record_again(m, dom, d);
                if (m->cb.decision_changed) /* a signal, not a new decision: the counts stay */
                        m->cb.decision_changed(m, d, d->uuid, d->name, m->userdata);
        }
        return changed;
}

bool placer_follow_emulator(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autoptr(CpuSet) pin = NULL;
        g_autoptr(Plan) plan = NULL;
        g_autofree char *list = NULL;
        PlacementRequest threads;
        const CpuSet *hand;
        bool dropped;

        if (!d || !d->plan || placer_pinned_nothing(d) || !(pin = live_emulator_pin(dom)))
                return false;
        /* its own pin runs, or none was made and the emulator floats with nothing held for it */
        if (cpuset_is_empty(d->plan->emulator_pin)
                ? pin_anywhere(m, dom, NULL, pin) && cpuset_is_empty(d->plan->held_pus)
                : cpuset_equal(pin, d->plan->emulator_pin))
                return false;
        if (virt_domain_read_spec(dom, false, &live, NULL) < 0 || !(user = user_spec(dom, live)))
                return false;
        /* the pin its record names runs: placementd's (an apply that could not pin it, a held job) */
        if (live->decision && live->decision->emulator && !cpuset_is_empty(live->decision->emulator) &&
            cpuset_equal(pin, live->decision->emulator))
                return false;
        dropped = !cpuset_is_empty(d->plan->emulator_pin);
        hand = hand_emulator(m, dom, user, d->plan->emulator_pin, NULL);
        plan = plan_copy(d->plan);
        cpuset_clear(plan->emulator_pin);
        /* the CPUs held for QEMU's threads: the definition's, and the emulator pin someone else made */
        cpuset_clear(plan->held_pus);
        threads = (PlacementRequest){.emulator_cpus = user->emulatorpin,
                                     .iothread_cpus = user->iothreadpin_cpus,
                                     .kept_iothreads = user->iothreadpins};
        policy_hold_thread_cpus(m->topology, &threads, plan);
        if (!dropped && cpuset_equal(plan->held_pus, d->plan->held_pus))
                return false;
        list = cpuset_format(pin);
        if (hand)
                log_info("%s: its emulator was pinned to %s by someone else: left there", d->name, list);
        else
                log_info("%s: its emulator runs unpinned (on %s) again: left so", d->name, list);
        commit(m, d, g_steal_pointer(&plan));
        healer_forget_request(m, d->uuid);
        if (m->config->apply) /* Apply=no writes nothing into a domain, a record neither */
                record_again(m, dom, d);
        if (m->cb.decision_changed) /* a signal, not a new decision: the counts stay */
                m->cb.decision_changed(m, d, d->uuid, d->name, m->userdata);
        return true;
}

/* Keeps what failed while applying in d (every failure, not only the first). */
static void note_failure(Decision *d, char **error)
{
        if (!d->apply_error) {
                d->apply_error = g_steal_pointer(error);
                return;
        }
        {
                char *both = g_strdup_printf("%s; %s", d->apply_error, *error);
                g_free(d->apply_error);
                d->apply_error = both;
                g_clear_pointer(error, g_free);
        }
}

/* Reads the pins back: a pin libvirt accepted but does not show (a CPU it does not know) did not
 * take. Returns true when every planned pin stands. */
static bool pins_took(Decision *d, virDomainPtr dom)
{
        const Plan *p = d->plan;
        CpuSet **pins = NULL;
        g_autofree char *error = NULL;
        bool took = true;

        if (virt_domain_get_vcpu_pins(dom, p->nvcpus, p->vcpu_ids, &pins, &error) < 0) {
                log_warning("%s: %s; cannot tell whether its pins took", d->name, error);
                return true;
        }
        for (unsigned i = 0; i < p->nvcpus && took; i++)
                if (!cpuset_is_empty(p->vcpu_pins[i]) && !cpuset_equal(pins[i], p->vcpu_pins[i])) {
                        g_autofree char *want = cpuset_format(p->vcpu_pins[i]),
                                        *have = cpuset_format(pins[i]);
                        error = g_strdup_printf("vCPU %u was pinned to %s but runs on '%s'",
                                                plan_vcpu_id(p, i), want, have);
                        log_warning("%s: %s", d->name, error);
                        note_failure(d, &error);
                        took = false;
                }
        virt_pins_free(pins, p->nvcpus);
        return took;
}

/* Pins every vCPU, going on past a failure. Returns 0, 1 when a pin failed, -ENOENT when gone, -EBUSY
 * when libvirt gave up waiting for the domain's job (the rest would wait as long: not tried). */
static int apply_vcpu_pins(Decision *d, virDomainPtr dom)
{
        const Plan *p = d->plan;
        bool failed = false;

        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *error = NULL;
                int r;
                if (cpuset_is_empty(p->vcpu_pins[i]))
                        continue;
                r = virt_domain_pin_vcpu(dom, plan_vcpu_id(p, i), p->vcpu_pins[i], &error);
                if (r == -EBUSY)
                        note_failure(d, &error);
                if (r == -ENOENT || r == -EBUSY)
                        return r;
                if (r < 0) {
                        log_warning("%s: %s", d->name, error);
                        note_failure(d, &error);
                        failed = true;
                }
        }
        return failed || !pins_took(d, dom) ? 1 : 0;
}

static int apply_memory(Manager *m, virDomainPtr dom, Decision *d)
{
        const Plan *p = d->plan;
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) idx = NULL;
        g_autoptr(CpuSet) nodes = NULL;
        int r;

        if (p->keep_memory) {
                /* bound by the definition, or bound live already in a mode libvirt will not change; a
                 * re-pin keeps what it had (placer_apply_plan()) */
                if (d->memory_binding != MEMORY_BINDING_APPLIED && d->memory_binding != MEMORY_BINDING_OFF)
                        d->memory_binding = MEMORY_BINDING_KEPT;
                return 0;
        }
        if (!m->config->memory_binding) {
                d->memory_binding = MEMORY_BINDING_OFF;
                return 0;
        }
        idx = plan_memory_nodes(p);
        nodes = topology_bindable_nodes(m->topology, idx);
        r = virt_domain_set_memory_nodes(dom, nodes, &error);
        if (r == -EBUSY)
                note_failure(d, &error);
        if (r == -ENOENT || r == -EBUSY)
                return r;
        d->memory_binding = r < 0 ? MEMORY_BINDING_FAILED : MEMORY_BINDING_APPLIED;
        if (r < 0) {
                log_notice("%s: memory binding not applied: %s", d->name, error);
                note_failure(d, &error);
        }
        return 0;
}

/* A host-thread pin's result r: -ENOENT (the domain is gone) is passed up, and -EBUSY (its job held)
 * noted and passed up; another failure is logged and noted, and clears *applied. Returns 0, -ENOENT or
 * -EBUSY. */
static int pin_outcome(Decision *d, int r, char **error, bool *applied)
{
        if (r == -ENOENT)
                return r;
        if (r < 0) {
                log_warning("%s: %s", d->name, *error);
                note_failure(d, error);
                *applied = false;
        }
        return r == -EBUSY ? r : 0;
}

/*
 * The emulator pin; *ret_applied says whether it stands as planned. A plan without one (EmulatorPin=none,
 * Policy=compat after a reload) undoes the pin before (the earlier plan placementd applied, NULL when
 * none) made, while that pin still runs: the emulator goes back to where libvirt runs it unpinned (user's
 * <vcpu cpuset>, else every host CPU). A pin someone else made since is not placementd's to undo. Returns
 * 0, -ENOENT or -EBUSY.
 */
static int apply_emulator(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user,
                          const Plan *before, bool *ret_applied)
{
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) live = NULL;
        g_autoptr(CpuSet) reset = NULL;
        const CpuSet *pin = d->plan->emulator_pin;
        int r;

        *ret_applied = true;
        if (cpuset_is_empty(pin)) {
                if (!before || cpuset_is_empty(before->emulator_pin) || (user && user->has_emulatorpin) ||
                    !(live = live_emulator_pin(dom)) || !cpuset_equal(live, before->emulator_pin))
                        return 0;
                pin = reset = unpinned_cpus(m, user);
        }
        r = virt_domain_pin_emulator(dom, pin, &error);
        if (reset && r == 0) {
                g_autofree char *was = cpuset_format(before->emulator_pin), *to = cpuset_format(reset);
                log_info(
                    "%s: its decision pins no emulator: its pin to %s undone, it runs on %s as unpinned",
                    d->name, was, to);
        }
        return pin_outcome(d, r, &error, ret_applied);
}

/* The I/O threads before (see apply_emulator()) pinned that d's plan leaves alone and that still run on
 * before's pin: pinned back to where libvirt runs them unpinned. Returns 0, -ENOENT or -EBUSY. */
static int undo_iothreads(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user,
                          const Plan *before, bool *ret_applied)
{
        g_autoptr(CpuSet) dropped = NULL;
        g_autoptr(CpuSet) reset = NULL;
        g_autofree unsigned *ids = NULL;
        g_autofree char *error = NULL;
        CpuSet **pins = NULL;
        unsigned n = 0;
        int r = 0;

        if (!before || cpuset_is_empty(before->iothreads))
                return 0;
        dropped = cpuset_copy(before->iothreads);
        cpuset_subtract(dropped, d->plan->iothreads);
        if (cpuset_is_empty(dropped))
                return 0;
        if (virt_domain_get_iothreads(dom, &ids, &pins, &n, &error) < 0) {
                log_warning("%s: %s; its I/O threads stay where they were pinned", d->name, error);
                return 0;
        }
        reset = unpinned_cpus(m, user);
        for (unsigned i = 0; i < n && r == 0; i++) {
                g_autofree char *pin_error = NULL;
                if (!cpuset_has(dropped, ids[i]) || !cpuset_equal(pins[i], before->iothread_pin))
                        continue; /* gone, or pinned by someone else since */
                r = virt_domain_pin_iothread(dom, ids[i], reset, &pin_error);
                if (r == 0) {
                        g_autofree char *was = cpuset_format(before->iothread_pin),
                                        *to = cpuset_format(reset);
                        log_info(
                            "%s: its decision pins no I/O thread %u: its pin to %s undone, it runs on %s "
                            "as unpinned",
                            d->name, ids[i], was, to);
                }
                r = pin_outcome(d, r, &pin_error, ret_applied);
        }
        virt_pins_free(pins, n);
        return r;
}

/* The I/O thread pins, each attempted whatever failed before but a held job, and those before made that
 * the plan drops undone (undo_iothreads()); *ret_applied says whether all stand as planned. Returns 0,
 * -ENOENT or -EBUSY. */
static int apply_iothreads(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user,
                           const Plan *before, bool *ret_applied)
{
        *ret_applied = true;
        CPUSET_FOREACH (id, d->plan->iothreads) {
                g_autofree char *error = NULL;
                int r = virt_domain_pin_iothread(dom, (unsigned)id, d->plan->iothread_pin, &error);
                if (pin_outcome(d, r, &error, ret_applied) < 0)
                        return r;
        }
        return undo_iothreads(m, dom, d, user, before, ret_applied);
}

/*
 * The live vCPU pins of d's domain, adopted in place of d's plan (which the ledger releases first): its
 * size, realtime, vCPU ids and policy kept. With floating_ok, NULL when no vCPU is pinned narrower than the
 * host or than allowed (a domain floating as libvirt started it). NULL, the plan left counted, when the
 * pins cannot be read.
 */
static Plan *adopt_live_pins(Manager *m, virDomainPtr dom, const Decision *d, bool floating_ok,
                             const CpuSet *allowed)
{
        g_autofree char *error = NULL;
        PlacementRequest req = {.name = d->name,
                                .vcpus = d->plan->nvcpus,
                                .memory = d->plan->memory,
                                .hugepage_size = d->plan->hugepage_size};
        CpuSet **pins = NULL;
        bool pinned = !floating_ok;
        Plan *runs;

        if (virt_domain_get_vcpu_pins(dom, req.vcpus, d->plan->vcpu_ids, &pins, &error) < 0) {
                log_warning("%s: %s; its plan stays counted", d->name, error);
                return NULL;
        }
        for (unsigned i = 0; i < req.vcpus && !pinned; i++)
                pinned = pins[i] && !cpuset_is_empty(pins[i]) && !placer_runs_anywhere(m, pins[i], allowed);
        if (!pinned) {
                virt_pins_free(pins, req.vcpus);
                return NULL;
        }
        ledger_release(m->ledger, d->uuid); /* adopted among the others, not beside its plan */
        runs = policy_adopt(m->topology, m->ledger, &req, pins, &m->config->placement);
        virt_pins_free(pins, req.vcpus);
        /* the CPUs the definition keeps for QEMU's threads (<emulatorpin>, <iothreadpin>) stay held */
        cpuset_union(runs->held_pus, d->plan->held_pus);
        for (unsigned i = 0; i < runs->nvcpus; i++) /* not where a vCPU of its own may run (as adopt.c) */
                CPUSET_FOREACH (cpu, runs->vcpu_pins[i]) {
                        int pu = topology_pu_by_os(m->topology, (unsigned)cpu);
                        if (pu >= 0)
                                cpuset_remove(runs->held_pus, (unsigned)pu);
                }
        plan_set_realtime(runs, d->plan->realtime, d->plan->realtime_vcpus);
        plan_set_vcpu_ids(runs, d->plan->vcpu_ids, d->plan->nvcpus);
        runs->policy = d->plan->policy;
        return runs;
}

/*
 * The emulator pin of placementd's own that runs when the plan's did not take (not tried, refused, or a
 * job held first): before's (the decision it replaces), else NULL.
 */
static const CpuSet *own_emulator_left(virDomainPtr dom, const Plan *before)
{
        g_autoptr(CpuSet) live = NULL;

        if (!before || cpuset_is_empty(before->emulator_pin) || !(live = live_emulator_pin(dom)))
                return NULL;
        return cpuset_equal(live, before->emulator_pin) ? before->emulator_pin : NULL;
}

/*
 * After a failed pin the ledger must hold what runs, not what was planned: the live pins, adopted, and
 * the emulator pin placementd made before when the new one did not replace it (else the next placement
 * would take it for someone else's).
 */
static void record_what_runs(Manager *m, virDomainPtr dom, Decision *d, const Plan *before,
                             bool emulator_applied, bool iothreads_applied)
{
        const CpuSet *emulator = emulator_applied ? d->plan->emulator_pin : own_emulator_left(dom, before);
        Plan *runs;

        d->result = DECISION_FAILED;
        if (!(runs = adopt_live_pins(m, dom, d, false, NULL)))
                return;
        if (emulator)
                cpuset_union(runs->emulator_pin, emulator);
        if (iothreads_applied) {
                cpuset_union(runs->iothreads, d->plan->iothreads);
                cpuset_union(runs->iothread_pin, d->plan->iothread_pin);
        }
        /* the memory binding stands where it was applied */
        if (d->memory_binding == MEMORY_BINDING_APPLIED || d->memory_binding == MEMORY_BINDING_KEPT)
                memcpy(runs->node_memory, d->plan->node_memory, sizeof(uint64_t) * runs->nnode_memory);
        g_free(runs->reason);
        runs->reason = g_strdup("vCPU pins that really run after a failed apply");
        g_free(d->reason);
        d->reason = g_strdup_printf("applying the plan failed, the pins that really run are counted (%s)",
                                    d->plan->reason ? d->plan->reason : "");
        commit(m, d, runs);
}

/* libvirt holds a job on the domain: what is left of the plan is not tried (each call would wait 30 s
 * for the job, and the daemon with it). The ledger holds what runs; held.c places it again once the job
 * is released. */
static void wait_for_job(Manager *m, virDomainPtr dom, Decision *d, const Plan *before,
                         bool emulator_applied, bool iothreads_applied)
{
        g_autofree char *planned = g_strdup(d->plan->reason ? d->plan->reason : "");

        d->job_held = true;
        /* a start's own job on a slow host lasts a second or two: said, not warned of */
        if (virt_domain_job_age_ms(dom) >= VIRT_JOB_LONG_MS)
                log_warning("%s: %s; placed again once libvirt releases it", d->name, d->apply_error);
        else
                log_notice("%s: %s; placed again once libvirt releases it", d->name, d->apply_error);
        record_what_runs(m, dom, d, before, emulator_applied, iothreads_applied);
        g_free(d->reason);
        d->reason = g_strdup_printf("libvirt holds a job on the domain: the plan waits for it, the pins "
                                    "that really run are counted (%s)",
                                    planned);
        held_retry_soon(m);
}

/*
 * Applies the plan live: every vCPU pin, the memory binding, the emulator and I/O thread pins, each
 * attempted whatever failed before. Failures are kept in d; when a vCPU, emulator or I/O thread pin failed,
 * d becomes `failed` and the ledger holds the live vCPU pins and the pins that took. A job libvirt holds
 * on the domain stops it (wait_for_job()). What before (the earlier plan placementd applied, NULL when
 * none) pinned of QEMU's other threads that the plan leaves alone is undone (apply_emulator()). Returns 0,
 * or -ENOENT when the domain vanished.
 */
static int apply(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user, const Plan *before)
{
        bool emulator_applied = false, iothreads_applied = false;
        g_autofree char *error = NULL;
        int pins, r = 0;

        if (virt_domain_job_held(dom, &error) < 0) {
                note_failure(d, &error);
                r = pins = -EBUSY;
        } else if ((r = pins = apply_vcpu_pins(d, dom)) > 0) {
                r = 0;
        }
        if (r == 0 && d->plan->result != PLAN_UNPLACEABLE)
                r = apply_memory(m, dom, d);
        if (r == 0)
                r = apply_emulator(m, dom, d, user, before, &emulator_applied);
        if (r == 0)
                r = apply_iothreads(m, dom, d, user, before, &iothreads_applied);
        if (r == -ENOENT)
                return r;
        if (r == -EBUSY)
                wait_for_job(m, dom, d, before, emulator_applied, iothreads_applied);
        else if (pins > 0 || !emulator_applied || !iothreads_applied)
                record_what_runs(m, dom, d, before, emulator_applied, iothreads_applied);
        return 0;
}

/* "0:2-3 1:4-5", at most 64 vCPUs' worth. */
static char *pins_text(const Plan *p)
{
        GString *pins = g_string_new(NULL);

        for (unsigned i = 0; p && i < p->nvcpus && i < 64; i++) {
                g_autofree char *s = cpuset_format(p->vcpu_pins[i]);
                if (*s)
                        g_string_append_printf(pins, "%s%u:%s", pins->len ? " " : "", plan_vcpu_id(p, i), s);
        }
        return g_string_free(pins, FALSE);
}

/* The decision as list and show publish it; an advice that runs on earlier pins says both. One adopted
 * from the domain's record was not decided now: the line says so first, and that its reason is the
 * record's ("web1: adopted from its record after checking its pins run as recorded: placed, vCPU pins
 * 0:0-1 (recorded reason: node 0: ...)"). */
static void log_decision(const Decision *d)
{
        g_autofree char *pins = pins_text(decision_shown_plan(d));
        g_autofree char *runs = d->advice ? pins_text(d->plan) : NULL;

        log_info("%s: %s%s%s%s%s%s (%s%s)", d->name,
                 d->adopted ? "adopted from its record after checking its pins run as recorded: " : "",
                 decision_result_to_string(d->result),
                 *pins ? (runs ? ", advised vCPU pins " : ", vCPU pins ") : "", pins,
                 runs && *runs ? ", runs on " : "", runs ? runs : "", d->adopted ? "recorded reason: " : "",
                 d->reason ? d->reason : "");
}

static Decision *skip(Manager *m, const char *uuid, const DomainSpec *live, const char *why, Plan *occupied)
{
        Decision *d = decision_new(uuid, live->name);
        d->domain_id = live->domain_id;
        d->result = DECISION_SKIPPED;
        d->reason = g_strdup(why);
        d->vcpus = live->vcpus;
        d->memory = live->memory;
        /* pins counted as they run; not a plan of its bound memory alone (bound_memory_plan()) */
        for (unsigned i = 0; occupied && i < occupied->nvcpus && !d->pinned_by_hand; i++)
                d->pinned_by_hand = !cpuset_is_empty(occupied->vcpu_pins[i]);
        if (occupied)
                plan_set_vcpu_ids(occupied, live->vcpu_ids, live->vcpus);
        return record(m, d, occupied);
}

/* Whether core c holds nothing and may hold vCPUs. */
static bool core_free(Manager *m, unsigned c)
{
        const TopoCore *core = &m->topology->cores[c];
        const CpuSet *reserved = m->config->placement.reserved_cpus;

        if (ledger_core_load(m->ledger, c) > 0 || core->host_thread)
                return false;
        for (unsigned i = core->pu_first; i < core->pu_first + core->npus; i++)
                if (reserved && cpuset_has(reserved, m->topology->pus[i].os_index))
                        return false;
        return true;
}

/* True when a domain placementd placed (not one pinned by hand: sharing with that is the user's doing,
 * and a restart must not undo what the running daemon left alone) counts a vCPU on the core of PU pu (on
 * pu itself, by_pu); not one
 * adopted from its record in the same pass (m->adopting: records are evidence, and the first of two
 * claims in ID order has no more of it than the second). */
static bool core_placed_by_other(Manager *m, const char *uuid, unsigned pu, bool by_pu)
{
        unsigned c = m->topology->pus[pu].core;

        GHashTableIter it;
        gpointer key, value;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const Decision *d = value;
                const Plan *p = d->plan;
                /* an unplaceable, failed or advised domain counted as it runs runs on placementd's pins */
                if (!p || d->pinned_by_hand || d->result == DECISION_SKIPPED || strcmp(key, uuid) == 0 ||
                    (m->adopting && g_hash_table_contains(m->adopting, key)))
                        continue;
                for (unsigned i = 0; i < p->nvcpus; i++)
                        if (p->vcpu_pu[i] >= 0 && (by_pu ? (unsigned)p->vcpu_pu[i] == pu
                                                         : m->topology->pus[p->vcpu_pu[i]].core == c))
                                return true;
        }
        return false;
}

/* The first PU of a that counts a vCPU on a core (by_pu: on the PU) where b counts one too; -1 when none. */
static int shared_pu(const Manager *m, const Plan *a, const Plan *b, bool by_pu)
{
        for (unsigned i = 0; i < a->nvcpus; i++)
                for (unsigned j = 0; a->vcpu_pu[i] >= 0 && j < b->nvcpus; j++)
                        if (b->vcpu_pu[j] >= 0 && (by_pu ? a->vcpu_pu[i] == b->vcpu_pu[j]
                                                         : m->topology->pus[a->vcpu_pu[i]].core ==
                                                               m->topology->pus[b->vcpu_pu[j]].core))
                                return a->vcpu_pu[i];
        return -1;
}

static gint by_domain_id(gconstpointer a, gconstpointer b)
{
        const Decision *x = *(const Decision *const *)a, *y = *(const Decision *const *)b;
        return x->domain_id < y->domain_id ? -1 : x->domain_id > y->domain_id;
}

void placer_say_adopted_clashes(Manager *m)
{
        g_autoptr(GPtrArray) adopted = g_ptr_array_new();
        GHashTableIter it;
        gpointer key;
        bool any_free = false;

        if (!m->adopting)
                return;
        for (unsigned c = 0; c < m->topology->ncores && !any_free; c++)
                any_free = core_free(m, c);
        if (!any_free)
                return;
        g_hash_table_iter_init(&it, m->adopting);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
                Decision *d = g_hash_table_lookup(m->decisions, key);
                if (d && d->plan && !d->pinned_by_hand && d->result != DECISION_SKIPPED)
                        g_ptr_array_add(adopted, d);
        }
        g_ptr_array_sort(adopted, by_domain_id);
        for (unsigned i = 0; i < adopted->len; i++)
                for (unsigned j = i + 1; j < adopted->len; j++) {
                        const Decision *a = adopted->pdata[i], *b = adopted->pdata[j];
                        /* compat fills siblings by design: only one PU claimed twice clashes there */
                        bool by_pu = a->plan->policy == POLICY_COMPAT && b->plan->policy == POLICY_COMPAT;
                        int pu = shared_pu(m, a->plan, b->plan, by_pu);
                        const TopoCore *core;
                        g_autoptr(CpuSet) cpus = cpuset_new();
                        g_autofree char *list = NULL, *where = NULL;
                        if (pu < 0)
                                continue;
                        /* the CPUs an operator knows the core by (the map's); under compat the one both
                         * take */
                        core = &m->topology->cores[m->topology->pus[pu].core];
                        for (unsigned k = core->pu_first; k < core->pu_first + core->npus; k++)
                                cpuset_add(cpus, m->topology->pus[k].os_index);
                        list = cpuset_format(cpus);
                        where = by_pu ? g_strdup_printf("CPU %u in both", m->topology->pus[pu].os_index)
                                      : g_strdup_printf("CPUs %s", list);
                        log_warning(
                            "%s and %s: their recorded decisions both claim core %u (%s) while a core "
                            "is free, so both domains run vCPUs there; both are adopted as they run "
                            "(placementctl replace %s moves the later one; placementctl rebalance, or "
                            "heal under Heal=yes, ends the sharing)",
                            a->name, b->name, m->topology->pus[pu].core, where, b->name);
                }
}

/* The first CPU a recorded vCPU pin takes that the configuration keeps from vCPUs (ReservedCPUs=, the
 * other kinds under CoreKinds=performance-only), with the key that keeps it; -1 when none. */
static int pin_off_limits(Manager *m, const Plan *p, const char **ret_key)
{
        const CpuSet *reserved = m->config->placement.reserved_cpus;

        for (unsigned i = 0; i < p->nvcpus; i++)
                CPUSET_FOREACH (cpu, p->vcpu_pins[i]) {
                        int pu = topology_pu_by_os(m->topology, (unsigned)cpu);
                        if (pu < 0 || !policy_keeps_pu(m->topology, &m->config->placement, (unsigned)pu))
                                continue;
                        *ret_key = reserved && cpuset_has(reserved, (unsigned)cpu)
                                       ? "ReservedCPUs="
                                       : "CoreKinds=performance-only";
                        return cpu;
                }
        return -1;
}

/*
 * What the ledger, libvirt and the configuration say about a recorded plan: the live pins must be the
 * recorded ones, on CPUs the configuration lets vCPUs use now (it may have changed while placementd was
 * down, as a reload changes it, and a domain's owner may write a record), and placementd's own cores
 * must not be held by another domain (an overcommitted one may share only while no core is free).
 * Returns 0, or -EINVAL with *ret_error.
 */
static int check_recorded(Manager *m, virDomainPtr dom, const char *uuid, const Plan *p, char **ret_error)
{
        CpuSet **pins = NULL;
        bool held = false, any_free = false;
        const char *key = NULL;
        int cpu;

        if (virt_domain_get_vcpu_pins(dom, p->nvcpus, p->vcpu_ids, &pins, ret_error) < 0)
                return -EINVAL;
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && !cpuset_equal(pins[i], p->vcpu_pins[i])) {
                        g_autofree char *want = cpuset_format(p->vcpu_pins[i]),
                                        *have = cpuset_format(pins[i]);
                        *ret_error = g_strdup_printf("vCPU %u runs on %s, the record says %s",
                                                     plan_vcpu_id(p, i), have, want);
                        virt_pins_free(pins, p->nvcpus);
                        return -EINVAL;
                }
        virt_pins_free(pins, p->nvcpus);
        if (p->result == PLAN_ADOPTED)
                return 0;
        if ((cpu = pin_off_limits(m, p, &key)) >= 0) {
                *ret_error = g_strdup_printf("its vCPUs run on CPU %d, which %s keeps from vCPUs", cpu, key);
                return -EINVAL;
        }
        /* compat fills siblings by design: a record of its is held only where another vCPU runs on its PU,
         * unless a realtime vCPU is on the core, its own or another's (a FIFO vCPU starves its sibling) */
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned core = m->topology->pus[p->vcpu_pu[i]].core;
                bool by_pu = p->policy == POLICY_COMPAT && !plan_vcpu_realtime(p, i) &&
                             !ledger_core_realtime(m->ledger, core);
                held = held || core_placed_by_other(m, uuid, (unsigned)p->vcpu_pu[i], by_pu);
        }
        for (unsigned c = 0; c < m->topology->ncores && !any_free; c++)
                any_free = core_free(m, c);
        if (held && (p->result == PLAN_PLACED || any_free)) {
                *ret_error = g_strdup_printf("its cores are held by another domain%s",
                                             any_free ? " while a core is free" : "");
                return -EINVAL;
        }
        return 0;
}

/* A recorded plan holds ordinary memory within each node's, a hugepage-backed domain's in the pools of its
 * page size. */
static int adopt_hugepages(Manager *m, const DomainSpec *live, Plan *plan, char **ret_error)
{
        /* a placement's ordinary memory within a node's ordinary memory (the record was checked against
         * the pools too); pins counted as they run have their memory counted anew, not from the record */
        for (unsigned n = 0; !live->hugepages && plan->result != PLAN_ADOPTED && n < plan->nnode_memory; n++)
                if (plan->node_memory[n] > m->topology->nodes[n].memory) {
                        *ret_error = g_strdup_printf("its memory on node %u exceeds the node's",
                                                     m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        if (!live->hugepages)
                return 0;
        plan->hugepage_size =
            live->hugepage_size ? live->hugepage_size : topology_default_hugepage_size(m->topology);
        /* a node without a pool of the size holds none of it (bound there, it cannot all be backed) */
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n] &&
                    topology_node_hugepage_bytes(m->topology, n, plan->hugepage_size) &&
                    plan->node_memory[n] > ledger_node_free_hugepages(m->ledger, n, plan->hugepage_size)) {
                        *ret_error = g_strdup_printf("its hugepage memory on node %u exceeds the free pool",
                                                     m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        return 0;
}

/* The memory binding a record names (metadata_to_plan() checked the word); none when it names none. */
static MemoryBinding recorded_binding(const MetaDecision *md)
{
        int b = memory_binding_from_string(md->memory_binding);
        return b < 0 ? MEMORY_BINDING_NONE : (MemoryBinding)b;
}

/* A record of pins counted as they run (skipped: pinned by hand) says nothing placementd chose, and its
 * owner may have written it: its vCPUs and memory are counted as for any domain pinned by hand, a vCPU
 * floating over the host on no CPU, the memory where its binding keeps it, else with its vCPUs, whatever
 * the record says. */
static void count_adopted(Manager *m, const DomainSpec *user, const DomainSpec *live, Plan *plan)
{
        PlacementRequest req = domain_request(user, live);
        g_auto(RequestShape) shape = {0};
        g_autoptr(Plan) counted = NULL;

        domain_request_shape(live, m->topology, &req, &shape);
        req.vcpus = plan->nvcpus;
        counted = policy_adopt(m->topology, m->ledger, &req, plan->vcpu_pins, &m->config->placement);
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (counted->vcpu_pu[i] < 0) /* floats: the record's cpu= counts nothing */
                        plan->vcpu_pu[i] = -1;
        memcpy(plan->node_memory, counted->node_memory, sizeof(uint64_t) * plan->nnode_memory);
}

static Decision *adopt_recorded(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                                bool warn)
{
        Plan *plan = NULL;
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) bound = cpuset_new(); /* where libvirt binds its memory */
        bool bound_all;
        g_autoptr(DomainSpec) user = NULL;
        Decision *d;
        const MetaDecision *md = live->decision;
        bool rerecord = false;

        /* an opt-out placementd never writes (the user added it to a definition made from live XML)
         * stands over the record: placer_place() skips the domain */
        if (live->meta_skip || live->vcpu_auto || live->numatune_auto)
                return NULL;
        ledger_release(m->ledger, uuid); /* checked against the others, not against its old self */
        if (live->memory_nodeset)
                cpuset_union(bound, live->memory_nodeset);
        if (live->memnode_nodeset)
                cpuset_union(bound, live->memnode_nodeset);
        /* a <numatune><memory> binding holds whatever no <memnode> does; <memnode>s alone, only the cells
         * they name */
        bound_all = live->memory_nodeset || (live->memnode_nodeset && domain_spec_memnodes_bind_all(live));
        /* preferred binds nothing: what its node had no room for is where the kernel fell back; nor does
         * anything bind the memory of a domain without a binding (MemoryBinding=no, a binding that failed):
         * the kernel puts it where it will */
        if ((live->memory_nodeset && live->memory_mode == MEMORY_MODE_PREFERRED) || cpuset_is_empty(bound))
                for (unsigned n = 0; n < m->topology->nnodes; n++)
                        cpuset_add(bound, m->topology->nodes[n].os_index);
        if (metadata_to_plan_bound(m->topology, md, live->name, live->vcpus, live->vcpu_ids, live->memory,
                                   bound, bound_all, &plan, &error) == 0)
                plan_set_realtime(plan, live->realtime, live->realtime_vcpus); /* before it is checked */
        if (!plan || check_recorded(m, dom, uuid, plan, &error) < 0) {
                if (warn)
                        log_warning("%s: recorded decision not adopted (%s); placing it anew", live->name,
                                    error);
                plan_free(plan);
                return NULL;
        }
        user = user_spec(dom, live);
        /* an emulator pin someone else made since the record (or while placementd was down) is theirs:
         * the record's no longer runs, and the one that runs is held as a definition's would be */
        if (user && hand_emulator_said(m, dom, user, md->emulator, NULL, live->name)) {
                rerecord = !cpuset_is_empty(plan->emulator_pin);
                cpuset_clear(plan->emulator_pin);
        }
        if (plan->result == PLAN_ADOPTED)
                count_adopted(m, user ? user : live, live, plan);
        if (adopt_hugepages(m, live, plan, &error) < 0) {
                if (warn)
                        log_warning("%s: recorded decision not adopted (%s); placing it anew", live->name,
                                    error);
                plan_free(plan);
                return NULL;
        }
        if (user) {
                /* the CPUs its definition keeps for QEMU's threads are held, as when it was placed or
                 * adopted (the record does not say which) */
                PlacementRequest threads = {.emulator_cpus = user->emulatorpin,
                                            .iothread_cpus = user->iothreadpin_cpus,
                                            .kept_iothreads = user->iothreadpins};
                policy_hold_thread_cpus(m->topology, &threads, plan);
        }
        d = decision_new(uuid, live->name);
        d->domain_id = live->domain_id;
        d->adopted = true;
        d->reason = g_strdup(plan->reason);
        d->memory_binding = recorded_binding(md);
        d->result = decision_result_from_plan(plan->result);
        d->pinned_by_hand = plan->result == PLAN_ADOPTED;
        record(m, d, plan);
        if (rerecord && m->config->apply)
                placer_record_again(m, dom, d);
        return d;
}

bool placer_adopt(Manager *m, virDomainPtr dom)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autoptr(DomainSpec) live = NULL;
        Decision *d;

        virt_domain_uuid(dom, uuid);
        if (virt_domain_read_spec(dom, false, &live, NULL) < 0 || !live->decision ||
            !(d = adopt_recorded(m, dom, uuid, live, false)))
                return false;
        log_decision(d);
        placer_notify(m, d, d->uuid, d->name);
        return true;
}

/* The measured load of the domain with uuid into req, when known for its vCPU count. */
static void add_load(Manager *m, const char *uuid, PlacementRequest *req)
{
        const DomainLoad *l = load_monitor_lookup(m->load, uuid);

        if (!l || l->nvcpus != req->vcpus)
                return;
        req->vcpu_busy = domain_load_vcpu_busy(l);
        req->host_busy = l->host_busy;
}

/* Says what was decided: in the log and to the manager's listeners. */
static void announce(Manager *m, const Decision *d)
{
        log_decision(d);
        placer_notify(m, d, d->uuid, d->name);
}

/* The configured parameters, with the policy the domain's metadata asks for when it names one. */
static PlacementParams params_for(Manager *m, const DomainSpec *user, const char *name)
{
        PlacementParams params = m->config->placement;
        const char *unknown;

        params.policy = domain_request_policy(user, params.policy, &unknown);
        if (unknown)
                log_warning("%s: unknown policy '%s' in its metadata (explicit, compat), using %s", name,
                            unknown, policy_kind_to_string(params.policy));
        return params;
}

#define BOUND_MEMORY_COUNTED "its memory is counted where its definition binds it"

/* A skipped domain whose vCPUs float (no pins to count): the memory its definition binds is taken all the
 * same, where it is bound; NULL when it binds none (its memory then follows the scheduler). */
static Plan *bound_memory_plan(Manager *m, const PlacementRequest *req, const PlacementParams *params)
{
        g_autofree CpuSet **floating = NULL;

        if (req->memory_source == MEMORY_SOURCE_NONE || !req->memory_nodes)
                return NULL;
        floating = g_new0(CpuSet *, MAX(req->vcpus, 1));
        return policy_adopt(m->topology, m->ledger, req, floating, params);
}

/*
 * A domain that opted out is not placementd's to place, but what it runs on is taken: pins other than
 * "anywhere" (its definition's <vcpupin>, numad's nodes under placement='auto', pins made by hand) are
 * counted in the ledger as they run, and memory its definition binds where it is bound, so no domain is
 * placed onto its cores and nodes.
 */
static Decision *skip_opted_out(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                                const DomainSpec *user, const char *why)
{
        PlacementParams params = params_for(m, user, live->name);
        PlacementRequest req = domain_request(user, live);
        g_auto(RequestShape) shape = {0};
        CpuSet **pins;
        g_autofree char *reason = NULL;
        Plan *occupied;

        domain_request_shape(live, m->topology, &req, &shape);
        pins = hand_pins(m, dom, live, req.allowed_cpus);

        if (!pins) {
                occupied = bound_memory_plan(m, &req, &params);
                reason = occupied ? g_strdup_printf("%s; %s", why, BOUND_MEMORY_COUNTED) : NULL;
                return skip(m, uuid, live, reason ? reason : why, occupied);
        }
        occupied = policy_adopt(m->topology, m->ledger, &req, pins, &params);
        virt_pins_free(pins, live->vcpus);
        reason = g_strdup_printf("%s; its pins are counted as they run", why);
        return skip(m, uuid, live, reason, occupied);
}

/* Whether live records pins made by hand (a skipped record naming vCPUs) that no longer run: pinned again
 * by hand, while placementd was down; taken as found, as the running daemon takes a new hand pin. */
static bool recorded_hand_pins_changed(virDomainPtr dom, const DomainSpec *live)
{
        const MetaDecision *md = live->decision;
        CpuSet **pins = NULL;

        /* pins that cannot be read are no change: the record is refused, and says why, as any other */
        if (!md || g_strcmp0(md->result, decision_result_to_string(DECISION_SKIPPED)) != 0 || !md->vcpus ||
            md->vcpus->len == 0 || live->vcpus == 0 ||
            virt_domain_get_vcpu_pins(dom, live->vcpus, live->vcpu_ids, &pins, NULL) < 0)
                return false;
        virt_pins_free(pins, live->vcpus);
        return !live_pins_recorded(dom, live, md);
}

/*
 * A domain found running (at start or by a reconcile) that records no decision, or records hand pins that
 * no longer run: pins found on it are someone else's and adopted as they are, and PlaceRunning=no leaves
 * one without a record alone at start. Returns the
 * skip decision, or NULL when it is to be placed.
 */
static Decision *found_running(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                               const PlacementRequest *req, const PlacementParams *params,
                               PlaceOrigin origin)
{
        CpuSet **pins;
        Plan *occupied;

        if ((origin != ORIGIN_RUNNING_AT_START && origin != ORIGIN_RECONCILE) || live->decision_error ||
            (live->decision && !recorded_hand_pins_changed(dom, live)))
                return NULL;
        pins = hand_pins(m, dom, live, req->allowed_cpus);
        if (pins) {
                occupied = policy_adopt(m->topology, m->ledger, req, pins, params);
                virt_pins_free(pins, live->vcpus);
                return skip(m, uuid, live,
                            live->decision
                                ? "pinned by hand again since its record; pins adopted as they are"
                                : "already pinned when placementd found it; pins adopted as they are",
                            occupied);
        }
        if (origin == ORIGIN_RUNNING_AT_START && !m->config->place_running && !live->decision) {
                occupied = bound_memory_plan(m, req, params);
                return skip(
                    m, uuid, live,
                    occupied ? "running before placementd started (PlaceRunning=no); " BOUND_MEMORY_COUNTED
                             : "running before placementd started (PlaceRunning=no)",
                    occupied);
        }
        return NULL;
}

/* Records plan (taken) as the domain's decision (advisory when Apply=no); note, when given, leads its
 * reason (why it was placed again). */
static Decision *record_plan(Manager *m, const char *uuid, const DomainSpec *live, Plan *plan,
                             const char *note)
{
        Decision *d = decision_new(uuid, live->name);

        plan_set_vcpu_ids(plan, live->vcpu_ids, live->vcpus);
        d->domain_id = live->domain_id;
        d->reason = note ? g_strdup_printf("%s; %s", note, plan->reason) : g_strdup(plan->reason);
        d->result = m->config->apply ? decision_result_from_plan(plan->result) : DECISION_ADVISORY;
        if (!m->config->apply)
                d->memory_binding = MEMORY_BINDING_ADVISORY;
        return record(m, d, plan);
}

/* Asks the policy, on the host without the domain's old self, and records its plan. */
static Decision *decide(Manager *m, const char *uuid, const DomainSpec *live, PlacementRequest *req,
                        const PlacementParams *params)
{
        g_autofree double *pu_busy = NULL;

        ledger_release(m->ledger, uuid); /* a re-placement sees the host without its old self */
        /* what the others keep busy, once anything is measured (unknown: every vCPU busy) */
        if (load_monitor_known(m->load))
                req->pu_busy = pu_busy = load_pu_busy(m->ledger, load_monitor_lookup_cb, m->load);
        return record_plan(m, uuid, live, policy_place(m->topology, m->ledger, req, params), NULL);
}

/* Counts the time from the event to the last pin in the latency histogram. */
static void note_latency(Manager *m, uint64_t latency_usec)
{
        double sec = (double)latency_usec / 1e6;
        unsigned b = 0;

        while (b < MANAGER_LATENCY_BUCKETS && sec > manager_latency_bounds[b])
                b++;
        m->stats.latency_buckets[b]++;
        m->stats.latency_count++;
        m->stats.latency_sum += sec;
}

/* A plan that is not applied (unplaceable; any under Apply=no) moves nothing: a domain that runs pinned
 * (placed before: replace, a resize, a reload; or found so after a restart or a migration) keeps its
 * pins, and the ledger must count those, not the new plan. Floating over the host or over its own <vcpu
 * cpuset> (a start) is no pin: an advice is then counted as planned, an unplaceable plan counts nothing.
 * before: the earlier plan placementd applied, NULL when none; was: its memory binding. An unplaceable
 * domain's record stays as it was: it names the pins that run. */
static void count_pins_that_run(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user,
                                const Plan *before, MemoryBinding was)
{
        /* floating over the host or its own <vcpu cpuset> is no pin to count */
        Plan *runs = adopt_live_pins(m, dom, d, true, user ? user->vcpu_cpuset : NULL);

        if (!runs)
                return;
        /* what an earlier plan applied to QEMU's other threads runs too */
        if (before) {
                cpuset_union(runs->emulator_pin, before->emulator_pin);
                cpuset_union(runs->iothreads, before->iothreads);
                cpuset_union(runs->iothread_pin, before->iothread_pin);
        }
        /* a binding applied before still stands; the plan charged the memory where it is bound */
        if (was == MEMORY_BINDING_APPLIED || was == MEMORY_BINDING_KEPT) {
                memcpy(runs->node_memory, d->plan->node_memory, sizeof(uint64_t) * runs->nnode_memory);
                d->memory_binding = was;
        }
        g_free(runs->reason);
        runs->reason =
            g_strdup(d->result == DECISION_ADVISORY ? "vCPU pins that run from before an advice"
                                                    : "vCPU pins that run from before an unplaceable plan");
        g_free(d->reason);
        d->reason = g_strdup_printf("%s; nothing applied%s: it runs on the pins it had, counted as they run",
                                    d->plan->reason ? d->plan->reason : "unplaceable",
                                    d->result == DECISION_ADVISORY ? " (Apply=no)" : "");
        if (d->result == DECISION_ADVISORY) { /* published as advised; the ledger holds what runs */
                Plan *advice = g_steal_pointer(&d->plan);
                commit(m, d, runs);
                d->advice = advice;
                return;
        }
        commit(m, d, runs);
}

/* Applies d's plan (when Apply=yes and it has one) and records it in the domain. Returns -ENOENT when
 * the domain vanished meanwhile (then forgotten), else 0. before and was: see count_pins_that_run(). */
static int carry_out(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user, uint64_t event_usec,
                     const Plan *before, MemoryBinding was)
{
        bool apply_it = m->config->apply && d->plan->result != PLAN_UNPLACEABLE;

        if (!apply_it)
                count_pins_that_run(m, dom, d, user, before, was);

        if (apply_it && apply(m, dom, d, user, before) == -ENOENT) {
                if (!virt_domain_connection_alive(dom)) {
                        /* not gone: the pins made so far stay, with nothing to say they are ours */
                        interrupted_note(m, d->uuid, d->plan);
                        placer_forget(m, d->uuid,
                                      "the connection to libvirtd was lost while it was being pinned; "
                                      "placed again once it is back");
                        return -ENOENT;
                }
                log_info("%s: gone while being pinned", d->name);
                placer_forget(m, d->uuid, "gone while being pinned");
                return -ENOENT;
        }
        /* event to last pin: the metadata written next is bookkeeping, not placement */
        d->latency_usec = event_usec ? now_usec(CLOCK_MONOTONIC) - event_usec : 0;
        if (apply_it && !d->job_held) /* a held job: the record the domain has stays until it is placed */
                write_metadata(m, dom, d, user);
        if (event_usec)
                note_latency(m, d->latency_usec);
        return 0;
}

void placer_request_free(PlacerRequest *r)
{
        if (!r)
                return;
        domain_spec_free(r->live);
        domain_spec_free(r->user);
        request_shape_clear(&r->shape);
        g_free(r);
}

/* Whether the live memory binding req carries is the one placementd applied: its decision says so and
 * names the same nodes. Heal may then run a busy vCPU on another node's calm core, the memory staying
 * bound where it is (PlacementRequest.memory_own). */
static bool own_binding(const Manager *m, const char *uuid, const PlacementRequest *req)
{
        const Decision *d = g_hash_table_lookup(m->decisions, uuid);
        g_autoptr(CpuSet) idx = NULL;
        g_autoptr(CpuSet) nodes = NULL;

        if (req->memory_source != MEMORY_SOURCE_BOUND || !d || !d->plan ||
            d->memory_binding != MEMORY_BINDING_APPLIED)
                return false;
        idx = plan_memory_nodes(d->plan);
        nodes = topology_bindable_nodes(m->topology, idx);
        return cpuset_equal(nodes, req->memory_nodes);
}

PlacerRequest *placer_request(Manager *m, virDomainPtr dom)
{
        g_autoptr(PlacerRequest) r = g_new0(PlacerRequest, 1);
        g_autofree char *error = NULL;
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (virt_domain_read_spec(dom, false, &r->live, &error) < 0 ||
            !(r->user = user_spec(dom, r->live)) || domain_spec_opt_out(r->user))
                return NULL;
        {
                const Decision *d = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
                hand_emulator(m, dom, r->user, d && d->plan ? d->plan->emulator_pin : NULL,
                              r->live->decision ? r->live->decision->emulator : NULL);
        }
        r->params = params_for(m, r->user, r->live->name);
        r->req = domain_request(r->user, r->live);
        domain_request_shape(r->live, m->topology, &r->req, &r->shape);
        add_load(m, virt_domain_uuid(dom, uuid), &r->req);
        r->req.memory_own = own_binding(m, uuid, &r->req);
        return g_steal_pointer(&r);
}

void placer_apply_plan(Manager *m, virDomainPtr dom, const PlacerRequest *r, Plan *plan, const char *note)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *old = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
        MemoryBinding was = old ? old->memory_binding : MEMORY_BINDING_NONE;
        /* what the earlier decision applied to QEMU's other threads, undone where the plan drops it */
        g_autoptr(Plan) before =
            old && old->plan && !placer_pinned_nothing(old) ? plan_copy(old->plan) : NULL;
        Decision *d = record_plan(m, uuid, r->live, plan, note);

        /* a move that leaves the memory where it is (a re-pin) leaves its binding as it stood: applied
         * by placementd, or off */
        if (d->plan && d->plan->keep_memory && (was == MEMORY_BINDING_APPLIED || was == MEMORY_BINDING_OFF))
                d->memory_binding = was;

        if (carry_out(m, dom, d, r->user, 0, before, was) == 0)
                announce(m, d);
}

/* Reads dom and decides; returns the decision to announce, or NULL when dom is gone (and forgotten). */
static Decision *place(Manager *m, virDomainPtr dom, const char *uuid, PlaceOrigin origin,
                       uint64_t event_usec)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autofree char *error = NULL;
        g_auto(RequestShape) shape = {0};
        PlacementParams params;
        PlacementRequest req;
        const char *why;
        const Decision *old;
        g_autoptr(Plan) before = NULL;
        MemoryBinding was;
        Decision *d;
        bool ours;
        int r;

        r = virt_domain_read_spec(dom, false, &live, &error);
        if (r == -ENOENT) {
                log_info("%s: gone before it could be placed", virt_domain_name(dom));
                placer_forget(m, uuid, "gone");
                return NULL;
        }
        if (r < 0) {
                /* it runs, but its XML is beyond what placementd reads (an I/O thread id libvirt takes and
                 * the parser does not, say): what it holds stays counted as decided */
                log_warning("%s: %s, not placed%s", virt_domain_name(dom), error,
                            g_hash_table_contains(m->decisions, uuid) ? " again: its decision stands" : "");
                return NULL;
        }
        if (live->decision_error)
                log_warning("%s: recorded decision unreadable (%s); placing it anew", live->name,
                            live->decision_error);
        if (live->record_foreign)
                log_warning("%s: its recorded decision names another domain's UUID (a copied definition): "
                            "not read",
                            live->name);
        if (origin != ORIGIN_MIGRATED && origin != ORIGIN_REPLACE && origin != ORIGIN_RESIZED &&
            origin != ORIGIN_HEAL && live->decision &&
            (d = adopt_recorded(m, dom, uuid, live, !recorded_hand_pins_changed(dom, live))))
                return d;
        user = user_spec(dom, live);
        if (!user) {
                if (!virt_domain_is_active(dom))
                        placer_forget(m, uuid, "gone");
                return NULL;
        }
        ours = interrupted_claim(m, dom, uuid, live, user);
        old = g_hash_table_lookup(m->decisions, uuid);
        /* an emulator pin someone else made is the user's: never undone */
        if (!ours)
                hand_emulator_said(m, dom, user, old && old->plan ? old->plan->emulator_pin : NULL,
                                   live->decision ? live->decision->emulator : NULL, live->name);
        if ((why = domain_spec_opt_out(user)))
                return skip_opted_out(m, dom, uuid, live, user, why);
        params = params_for(m, user, live->name);
        req = domain_request(user, live);
        domain_request_shape(live, m->topology, &req, &shape);
        add_load(m, uuid, &req);
        if (!ours && (d = found_running(m, dom, uuid, live, &req, &params, origin)))
                return d;
        old = g_hash_table_lookup(m->decisions, uuid);
        was = old ? old->memory_binding : MEMORY_BINDING_NONE;
        /* what an earlier decision applied (its own pins, or pins counted as they ran) */
        if (old && old->plan && !placer_pinned_nothing(old))
                before = plan_copy(old->plan);
        d = decide(m, uuid, live, &req, &params);
        return carry_out(m, dom, d, user, event_usec, before, was) < 0 ? NULL : d;
}

bool placer_found_pinned(Manager *m, virDomainPtr dom)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autofree char *error = NULL;
        PlacementRequest req;
        CpuSet **pins;

        if (virt_domain_read_spec(dom, false, &live, &error) < 0 ||
            (live->decision && !recorded_hand_pins_changed(dom, live)) || !(user = user_spec(dom, live)))
                return false; /* read again, and said, when it is placed */
        if (domain_spec_opt_out(user))
                return true;
        /* as place() decides: an unreadable record, or pins an apply of placementd's left (interrupted),
         * mean the domain is placed anew, not counted as it runs */
        if (live->decision_error || g_hash_table_contains(m->interrupted, virt_domain_uuid(dom, uuid)))
                return false;
        req = domain_request(user, live);
        pins = hand_pins(m, dom, live, req.allowed_cpus);
        if (!pins)
                return false;
        virt_pins_free(pins, live->vcpus);
        return true;
}

void placer_place(Manager *m, virDomainPtr dom, PlaceOrigin origin, uint64_t event_usec)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *d = place(m, dom, virt_domain_uuid(dom, uuid), origin, event_usec);

        if (d)
                announce(m, d);
        if (origin == ORIGIN_RESIZED)
                manager_heal_soon(m, "a domain was resized");
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

        if (!old)
                return;
        /* as it runs now: a vCPU added (or memory) while pinned by hand is counted too */
        if (virt_domain_read_spec(dom, false, &live, &error) < 0) {
                if (error)
                        log_warning("%s: %s, ignoring", old->name, error);
                return;
        }
        /* a domain that opts out stays one: its pins counted again with its own memory binding, and no
         * record written into it (placementd writes none there) */
        definition = user_spec(dom, live);
        /* an emulator pin someone else made is held for it, and not recorded as placementd's */
        if (hand_emulator(m, dom, definition, old->plan ? old->plan->emulator_pin : NULL,
                          live->decision ? live->decision->emulator : NULL) &&
            old->plan)
                cpuset_clear(old->plan->emulator_pin);
        if (definition && (why = domain_spec_opt_out(definition))) {
                ledger_release(m->ledger, uuid);
                d = skip_opted_out(m, dom, uuid, live, definition, why);
                log_decision(d);
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
        ledger_release(m->ledger, uuid);
        d = decision_new(uuid, old->name);
        d->domain_id = virt_domain_id(dom);
        d->result = DECISION_SKIPPED;
        d->pinned_by_hand = true;
        d->reason = g_strdup_printf("%s; pins adopted as they are, placementd does not fight them", what);
        /* what was applied before still stands: the emulator and I/O thread pins, the memory binding */
        d->memory_binding = old->memory_binding;
        adopted = policy_adopt(m->topology, m->ledger, &req, pins, &m->config->placement);
        plan_set_realtime(adopted, live->realtime, live->realtime_vcpus);
        plan_set_vcpu_ids(adopted, live->vcpu_ids, nvcpus);
        if (old->plan) {
                cpuset_union(adopted->emulator_pin, old->plan->emulator_pin);
                cpuset_union(adopted->iothreads, old->plan->iothreads);
                cpuset_union(adopted->iothread_pin, old->plan->iothread_pin);
        }
        g_free(adopted->reason);
        adopted->reason = g_strdup(d->reason);
        d = record(m, d, adopted);
        virt_pins_free(pins, nvcpus);
        g_clear_pointer(&error, g_free);
        /* Apply=no writes nothing into a domain, a record neither */
        if (m->config->apply && free_to_record(dom, d) && (user = user_spec(dom, live)))
                write_metadata(m, dom, d, user);
        log_decision(d);
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
        virDomainInfo info;

        *ret_memory = max_kib_bytes;
        if (!max_kib_bytes)
                return false;
        if (max_kib_bytes == plan->memory && (!plan->ncells || virDomainGetInfo(dom, &info) < 0 ||
                                              (uint64_t)info.memory * 1024 >= max_kib_bytes))
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

bool placer_binding_moved(Manager *m, virDomainPtr dom, const Decision *d)
{
        g_autoptr(CpuSet) bound = NULL;
        int mode;

        /* counted where placementd put it or as it ran; cells are bound per cell, not by this nodeset */
        if (!d->plan || !d->plan->memory || d->plan->ncells || placer_pinned_nothing(d) ||
            virt_domain_get_memory_nodes(dom, &bound, &mode) < 0 || cpuset_is_empty(bound))
                return false;
        /* preferred binds nothing but its first node; restrictive is the definition's (domain_request()) */
        if (mode != VIR_DOMAIN_NUMATUNE_MEM_STRICT && mode != VIR_DOMAIN_NUMATUNE_MEM_INTERLEAVE)
                return false;
        for (unsigned n = 0; n < d->plan->nnode_memory && n < m->topology->nnodes; n++)
                if (d->plan->node_memory[n] && !cpuset_has(bound, m->topology->nodes[n].os_index)) {
                        g_autofree char *list = cpuset_format(bound);
                        log_info(
                            "%s: its memory is bound to node%s %s live, its decision counts some on node "
                            "%u: counting it as it runs",
                            d->name, cpuset_count(bound) == 1 ? "" : "s", list,
                            m->topology->nodes[n].os_index);
                        return true;
                }
        return false;
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
            !(user = user_spec(dom, live)))
                return false;
        /* "anywhere" as skip_opted_out() and found_running() judge it */
        pins = hand_pins(m, dom, live, user->vcpu_cpuset);
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
