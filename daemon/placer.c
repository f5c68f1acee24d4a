/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placing one domain: read what it is, respect its opt-outs, adopt what it already records
 * (placer-adopt.c), ask the policy, apply the plan live (placer-apply.c), record the decision in the
 * domain and in the ledger; and following what others change on it later (hand pins, the emulator).
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
#include "placer-internal.h"
#include "policy.h"
#include "spec-record.h"
#include "virt-bare.h"
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

void placer_sharing_soon(Manager *m)
{
        if (m->sharing_ev && !evtimer_pending(m->sharing_ev, NULL)) {
                struct timeval now = {0, 0};
                evtimer_add(m->sharing_ev, &now);
        }
}

void placer_release(Manager *m, const char *uuid)
{
        /* the overcommitted domains that shared what it held may share no more */
        if (ledger_release(m->ledger, uuid) == 0)
                placer_sharing_soon(m);
}

void placer_forget(Manager *m, const char *uuid, const char *why)
{
        Decision *d = g_hash_table_lookup(m->decisions, uuid);
        g_autofree char *name = NULL, *id = NULL;

        load_monitor_forget(m->load, uuid); /* its next start is a new guest to measure */
        /* and starts QEMU's threads anew; an apply the lost connection cut off goes on with the same run */
        if (!g_hash_table_contains(m->interrupted, uuid)) {
                thread_mask_forget(m, uuid);
                apply_journal_drop(m, uuid);
        }
        if (m->heal_moved) /* and a new run cools down only once it is moved */
                g_hash_table_remove(m->heal_moved, uuid);
        held_forget_timeouts(m, uuid);            /* a new run holds no job of the old one */
        g_hash_table_remove(m->own_writes, uuid); /* an echo still to come is of no domain placed */
        if (!d)
                return;
        /* uuid may be d's own (the caller held the decision): copy what outlives it */
        name = g_strdup(d->name);
        id = g_strdup(d->uuid);
        placer_release(m, id);
        m->unplaceable_retry = true;
        healer_forget_request(m, id);
        log_info("%s: %s; its cores and memory are free again", name, why);
        g_hash_table_remove(m->decisions, id);
        placer_notify(m, NULL, id, name);
        manager_heal_soon(m, name);
}

/* Makes plan (taken, may be NULL) d's plan and what the ledger counts for it. */
void placer_commit(Manager *m, Decision *d, Plan *plan)
{
        placer_release(m, d->uuid);
        g_clear_pointer(&d->plan, plan_free);
        g_clear_pointer(&d->advice, plan_free);
        if (!plan)
                return;
        d->plan = plan_copy(plan);
        /* the ledger needs the assignment, not the reasoning: the decision keeps that */
        g_ptr_array_set_size(plan->candidates, 0);
        if (ledger_commit(m->ledger, d->uuid, plan) < 0)
                log_warning("%s: its plan does not fit the host's topology, not counted", d->name);
        else if (policy_may_name_realtime_neighbours(m->topology, m->ledger, d->plan))
                placer_sharing_soon(m); /* the domains it came beside are told (placer_follow_sharing()) */
}

/* Stores d (taking it), committing plan (taken, may be NULL) to the ledger under its UUID. */
Decision *placer_record(Manager *m, Decision *d, Plan *plan)
{
        Decision *old = g_hash_table_lookup(m->decisions, d->uuid);

        healer_forget_request(m, d->uuid); /* what heal read was asked of the old decision */
        /* placementd's last record of this run stands until it writes another */
        if (old && old != d && !d->record &&
            (!old->domain_id || !d->domain_id || old->domain_id == d->domain_id))
                d->record = g_steal_pointer(&old->record);
        placer_commit(m, d, plan);
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
 * the persistent definition was made from the live one; a persistent definition edited since, or a
 * transient domain started again from its live XML edited in more than its pins, stands for itself). Without
 * a usable record, on a definition placementd already touched, pins equal to the recorded decision are
 * placementd's own, and no snapshot is taken from it. Returns NULL (and says why) when the domain cannot be
 * read.
 */
DomainSpec *placer_user_spec(virDomainPtr dom, const DomainSpec *live)
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
        /* a record copied into an edited definition (a persistent one edited since, a transient one
         * started again from its edited live XML) does not stand for it */
        if (user && (src == cfg ? !domain_spec_record_explains(cfg, user)
                                : !domain_spec_record_explains_live(live, user)))
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
        /* an <emulatorpin> written into the persistent definition since the start (virsh emulatorpin
         * --config, virsh edit) is for the next one: libvirt left the running emulator where it was, and
         * that pin, not the definition's, says whose it is (placer_hand_emulator()) */
        if (src == cfg && user->emulatorpin &&
            !(live->emulatorpin && cpuset_equal(live->emulatorpin, user->emulatorpin))) {
                user->has_emulatorpin = false;
                g_clear_pointer(&user->emulatorpin, cpuset_free);
        }
        /* so is an <iothreadpin> written there since: its I/O thread runs where the live pin puts it, and
         * that pin is placementd's when it made it */
        if (src == cfg && user->iothreadpins)
                for (unsigned i = 0; user->iothreadpin_cpus && i < user->iothreadpin_cpus->len; i++) {
                        const IothreadPin *pin = &g_array_index(user->iothreadpin_cpus, IothreadPin, i);
                        if (cpuset_has(user->iothreadpins, pin->id) &&
                            !domain_spec_iothreadpin_runs(live, pin->id, pin->cpus))
                                cpuset_remove(user->iothreadpins, pin->id);
                }
        g_clear_pointer(&user->definition, g_free);
        g_free(user->name);
        user->name = g_strdup(src->name);
        g_free(user->uuid);
        user->uuid = g_strdup(live->uuid);
        user->meta_skip = src->meta_skip;
        g_free(user->meta_policy);
        user->meta_policy = g_strdup(src->meta_policy);
        /* pins only of vCPUs not plugged in pin nothing that runs: the running vCPUs, which the user left
         * unpinned, are placed; once such a vCPU is plugged in its pin runs and the domain is the user's */
        if (domain_spec_pins_unplugged_only(user, live))
                user->has_vcpupin = false;
        return g_steal_pointer(&user);
}

char *placer_format_record(Manager *m, const Decision *d, const DomainSpec *user)
{
        MetaRun run = {
            .domain_id = d->domain_id, .boot_id = m->boot_id, .threads = thread_mask_get(m, d->uuid)};

        return metadata_format_run(m->topology, d->plan, decision_result_to_string(d->result),
                                   d->memory_binding, user, &run);
}

void placer_write_metadata(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user)
{
        g_autofree char *xml = NULL, *error = NULL;
        int r;

        if (!d->plan)
                return;
        xml = placer_format_record(m, d, user);
        r = virt_domain_set_metadata(dom, xml, &error);
        d->unrecorded = r < 0;
        if (r == 0) { /* the record names its pins now */
                manager_own_metadata_written(m, d->uuid);
                apply_journal_drop(m, d->uuid);
        }
        if (r == -EBUSY) /* it waited libvirt's 30 s for a job nothing reported */
                held_note_timeout(m, d->uuid, d->name);
        else if (r == 0) /* it went through: the job is free */
                held_forget_timeouts(m, d->uuid);
        if (d->unrecorded)
                log_warning("%s: %s; the next reconcile records it again", d->name, error);
        else if (user && !user->meta_skip) {
                g_free(d->record);
                d->record = g_steal_pointer(&xml);
        }
}

/* Whether dom's job is free for a metadata write that nothing before it looked at (after an apply or an
 * I/O thread read, the look was made there); else d stays unrecorded and the next reconcile writes it. */
bool placer_free_to_record(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autofree char *error = NULL;

        if (held_job_busy(m, dom, &error) == 0)
                return true;
        d->unrecorded = true;
        log_warning("%s: %s; the next reconcile records it again", d->name, error);
        return false;
}

/* Whether d may be recorded in a domain whose live definition is live: not when skipped and never recorded
 * (opted out by its definition from its start, or skipped as it ran at placementd's start): a record there
 * is not placementd's to write. */
static bool may_record(const Decision *d, const DomainSpec *live)
{
        return d->result != DECISION_SKIPPED || d->record || live->decision;
}

/* Writes d into dom's metadata again; false when dom is gone or unreadable. */
bool placer_write_record(Manager *m, virDomainPtr dom, Decision *d)
{
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) user = NULL;
        g_autofree char *error = NULL;

        if (virt_domain_read_spec(dom, false, &live, &error) < 0 || !(user = placer_user_spec(dom, live)))
                return false; /* gone or unreadable: the reconcile's next round sees to it */
        if (may_record(d, live))
                placer_write_metadata(m, dom, d, user);
        return true;
}

void placer_record_again(Manager *m, virDomainPtr dom, Decision *d)
{
        if (placer_free_to_record(m, dom, d) && placer_write_record(m, dom, d) && !d->unrecorded)
                log_info("%s: decision recorded in its metadata again", d->name);
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
void placer_log_decision(const Decision *d)
{
        g_autofree char *pins = pins_text(decision_shown_plan(d));
        g_autofree char *runs = d->advice ? pins_text(d->plan) : NULL;
        /* a journal read at notice shows every guest that shares cores; at warning, every one left
         * unpinned or not pinned as planned; an advice (Apply=no) at the level its plan would get
         * applied, "advisory (unplaceable)" */
        DecisionResult verdict = decision_verdict(d);
        int level = verdict == DECISION_UNPLACEABLE || verdict == DECISION_FAILED ? LOG_WARNING
                    : verdict == DECISION_OVERCOMMITTED                           ? LOG_NOTICE
                                                                                  : LOG_INFO;
        g_autofree char *result = decision_result_text(d);

        log_printf(level, "%s: %s%s%s%s%s%s (%s%s)", d->name,
                   d->adopted ? "adopted from its record after checking its pins run as recorded: " : "",
                   result, *pins ? (runs ? ", advised vCPU pins " : ", vCPU pins ") : "", pins,
                   runs && *runs ? ", runs on " : "", runs ? runs : "",
                   d->adopted ? "recorded reason: " : "", d->reason ? d->reason : "");
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
        if (occupied) {
                plan_set_vcpu_ids(occupied, live->vcpu_ids, live->vcpus);
                g_free(occupied->reason); /* its record says why, as the decision does */
                occupied->reason = g_strdup(why);
        }
        return placer_record(m, d, occupied);
}

/* The measured load of the domain with uuid into req, when known for its vCPU count; when load is
 * measured and the domain's is not known yet, that its host-side load is not. */
static void add_load(Manager *m, const char *uuid, PlacementRequest *req)
{
        const DomainLoad *l = load_monitor_lookup(m->load, uuid);

        req->host_unmeasured = manager_host_unmeasured(m, l);
        if (!l || l->nvcpus != req->vcpus)
                return;
        req->vcpu_busy = domain_load_vcpu_busy(l);
        req->host_busy = l->host_busy;
}

/* Says what was decided: in the log and to the manager's listeners. */
static void announce(Manager *m, const Decision *d)
{
        placer_log_decision(d);
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

MemoryBinding placer_binding_that_runs(MemoryBinding b)
{
        return b == MEMORY_BINDING_FAILED ? MEMORY_BINDING_NONE : b;
}

/*
 * The live pins of vCPUs placer_hand_pins() found floating (allowed: the user's <vcpu cpuset>) when some
 * run on fewer than the host's CPUs: over the <vcpu cpuset> the domain started with, libvirt's default pin,
 * they run there all the same and are counted there (policy_adopt(): on its least loaded cores), as they
 * are beside one vCPU pinned elsewhere. Read as they run, not from the user's definition: a cpuset edited
 * into or out of a persistent definition since the start is for the next one. NULL when every vCPU may
 * run anywhere on the host, or without a cpuset either way (libvirt's default pin is then the host's).
 */
static CpuSet **floating_pins(Manager *m, virDomainPtr dom, const DomainSpec *live, const CpuSet *allowed)
{
        CpuSet **pins = NULL;
        bool confined = false;

        if ((!allowed && !live->vcpu_cpuset) || live->vcpus == 0 ||
            virt_domain_get_vcpu_pins(dom, live->vcpus, live->vcpu_ids, &pins, NULL) < 0)
                return NULL;
        for (unsigned i = 0; i < live->vcpus && !confined; i++)
                confined = !placer_runs_anywhere(m, pins[i], NULL);
        if (!confined) {
                virt_pins_free(pins, live->vcpus);
                return NULL;
        }
        return pins;
}

/*
 * What placementd applied to a domain that opts out while it runs (a <vcpupin> written into its persistent
 * definition with virsh vcpupin --config) still runs: its emulator pin, while the live one is still that,
 * its I/O thread pins and its memory binding stay its own and counted, as for a domain pinned by hand. From
 * the decision it had (old), or after a restart from its record.
 */
static MemoryBinding keep_applied(const Decision *old, const DomainSpec *live, Plan *occupied)
{
        const MetaDecision *md = live->decision;
        const CpuSet *emulator = old && old->plan ? old->plan->emulator_pin : md ? md->emulator : NULL;

        if (emulator && !cpuset_is_empty(emulator) && live->emulatorpin &&
            cpuset_equal(live->emulatorpin, emulator))
                cpuset_union(occupied->emulator_pin, emulator);
        if (old && old->plan) {
                cpuset_union(occupied->iothreads, old->plan->iothreads);
                cpuset_union(occupied->iothread_pin, old->plan->iothread_pin);
                return placer_binding_that_runs(old->memory_binding);
        }
        if (md && md->iothreads && md->iothread_pin) {
                cpuset_union(occupied->iothreads, md->iothreads);
                cpuset_union(occupied->iothread_pin, md->iothread_pin);
        }
        return md ? placer_recorded_binding(md, live) : MEMORY_BINDING_NONE;
}

/*
 * A domain that opted out is not placementd's to place, but what it runs on is taken: pins other than
 * "anywhere" (its definition's <vcpupin>, numad's nodes under placement='auto', pins made by hand) are
 * counted in the ledger as they run, and memory its definition binds where it is bound, so no domain is
 * placed onto its cores and nodes. One that placementd placed before (old, or its record) keeps what was
 * applied then, and its record says skipped from then on.
 */
Decision *placer_skip_opted_out(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                                const DomainSpec *user, const char *why, const Decision *old)
{
        MemoryBinding binding;
        Decision *d;

        PlacementParams params = params_for(m, user, live->name);
        PlacementRequest req = domain_request(user, live);
        g_auto(RequestShape) shape = {0};
        CpuSet **pins;
        g_autofree char *reason = NULL;
        Plan *occupied;

        domain_request_shape(live, m->topology, &req, &shape);
        pins = placer_hand_pins(m, dom, live, req.allowed_cpus);
        if (!pins)
                pins = floating_pins(m, dom, live, req.allowed_cpus);

        if (!pins) {
                /* its vCPUs float: nothing of them to count, but what placementd applied before (its
                 * emulator pin, I/O thread pins, memory binding) still runs, and is kept as below */
                bool applied_before = (old && old->plan && !placer_pinned_nothing(old)) || live->decision;

                occupied = bound_memory_plan(m, &req, &params);
                reason = occupied ? g_strdup_printf("%s; %s", why, BOUND_MEMORY_COUNTED) : NULL;
                if (!occupied && applied_before) {
                        g_autofree CpuSet **floating = g_new0(CpuSet *, MAX(req.vcpus, 1));
                        occupied = policy_adopt(m->topology, m->ledger, &req, floating, &params);
                        /* no binding: its memory follows the scheduler, counted nowhere, as before */
                        memset(occupied->node_memory, 0, sizeof(uint64_t) * occupied->nnode_memory);
                }
                binding =
                    occupied && applied_before ? keep_applied(old, live, occupied) : MEMORY_BINDING_NONE;
                d = skip(m, uuid, live, reason ? reason : why, occupied);
                d->memory_binding = binding;
                return d;
        }
        occupied = policy_adopt(m->topology, m->ledger, &req, pins, &params);
        virt_pins_free(pins, live->vcpus);
        reason = g_strdup_printf("%s; its pins are counted as they run", why);
        binding = keep_applied(old, live, occupied);
        d = skip(m, uuid, live, reason, occupied);
        d->memory_binding = binding;
        /* its record of before would still say placed: written again for a persistent domain, whose user's
         * definition is the persistent one (a transient domain's record tells its pins from its user's);
         * an owner's skip='yes' is never written over */
        if (live->decision && !live->meta_skip && virt_domain_is_persistent(dom) && m->config->apply &&
            placer_free_to_record(m, dom, d))
                placer_write_metadata(m, dom, d, user);
        return d;
}

Decision *placer_count_unreadable(Manager *m, virDomainPtr dom, const char *uuid, const char *error)
{
        g_autoptr(DomainSpec) bare = NULL;
        g_autofree char *why = NULL, *failure = NULL;

        if (virt_domain_read_bare(dom, &bare, &failure) < 0) {
                log_warning("%s: %s", virt_domain_name(dom), failure);
                return NULL;
        }
        why = g_strdup_printf("its definition cannot be read (%s)", error);
        placer_release(m, uuid);
        return placer_skip_opted_out(m, dom, uuid, bare, bare, why, g_hash_table_lookup(m->decisions, uuid));
}

/*
 * Whether the vCPUs live records were pinned by someone else since, while placementd was down: the live
 * pins are not the recorded ones, and are pins made by hand: any pin of a skipped record's (itself of pins
 * made by hand); for a placed or overcommitted one, pins other than "anywhere" (libvirt's default, which a
 * domain started again from its live XML runs on). Taken as found, as the running daemon takes a new hand
 * pin: counted as they run, not undone. A failed record's pins are partly placementd's: never so taken.
 */
static bool recorded_pins_changed_by_hand(Manager *m, virDomainPtr dom, const DomainSpec *live)
{
        const MetaDecision *md = live->decision;
        bool skipped = md && g_strcmp0(md->result, decision_result_to_string(DECISION_SKIPPED)) == 0;
        CpuSet **pins = NULL;

        /* pins that cannot be read are no change: the record is refused, and says why, as any other */
        if (!md || !md->vcpus || md->vcpus->len == 0 || live->vcpus == 0 ||
            (!skipped && g_strcmp0(md->result, decision_result_to_string(DECISION_PLACED)) != 0 &&
             g_strcmp0(md->result, decision_result_to_string(DECISION_OVERCOMMITTED)) != 0) ||
            virt_domain_get_vcpu_pins(dom, live->vcpus, live->vcpu_ids, &pins, NULL) < 0)
                return false;
        virt_pins_free(pins, live->vcpus);
        if (live_pins_recorded(dom, live, md))
                return false;
        if (skipped)
                return true;
        if (!(pins = placer_hand_pins(m, dom, live, NULL)))
                return false;
        virt_pins_free(pins, live->vcpus);
        return true;
}

/*
 * A domain found running (at start or by a reconcile) that records no decision, or whose recorded pins were
 * changed by hand since (recorded_pins_changed_by_hand()): pins found on it are someone else's and adopted
 * as they are, and PlaceRunning=no leaves
 * one without a record alone at start. Returns the
 * skip decision, or NULL when it is to be placed.
 */
static Decision *found_running(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                               const PlacementRequest *req, const PlacementParams *params,
                               PlaceOrigin origin)
{
        const MetaDecision *md = live->decision;
        CpuSet **pins;
        Plan *occupied;
        Decision *d;

        /* started (restored, a managed save resumed) from XML carrying its record with pins edited since:
         * as when found running */
        if ((origin != ORIGIN_RUNNING_AT_START && origin != ORIGIN_RECONCILE &&
             (origin != ORIGIN_STARTED || !md)) ||
            live->decision_error || (md && !recorded_pins_changed_by_hand(m, dom, live)))
                return NULL;
        pins = placer_hand_pins(m, dom, live, req->allowed_cpus);
        if (pins) {
                occupied = policy_adopt(m->topology, m->ledger, req, pins, params);
                virt_pins_free(pins, live->vcpus);
                /* what placementd applied before still stands (the emulator pin, unless someone else
                 * pinned it since: the request's then; its I/O threads; its memory binding) */
                if (md && md->emulator && !req->emulator_cpus) {
                        g_autoptr(CpuSet) runs = virt_domain_emulator_pin(dom); /* a record is no proof */
                        if (runs && cpuset_equal(runs, md->emulator))
                                cpuset_union(occupied->emulator_pin, md->emulator);
                }
                if (md && md->iothreads && md->iothread_pin) /* those the running definition pins so */
                        CPUSET_FOREACH (id, md->iothreads)
                                if (domain_spec_iothreadpin_runs(live, (unsigned)id, md->iothread_pin)) {
                                        cpuset_add(occupied->iothreads, (unsigned)id);
                                        cpuset_union(occupied->iothread_pin, md->iothread_pin);
                                }
                d = skip(m, uuid, live,
                         !md ? "already pinned when placementd found it; pins adopted as they are"
                         : g_strcmp0(md->result, decision_result_to_string(DECISION_SKIPPED)) == 0
                             ? "pinned by hand again since its record; pins adopted as they are"
                             : "its vCPUs were pinned by someone else since its record; pins adopted as "
                               "they are, placementd does not fight them",
                         occupied);
                if (md) {
                        d->memory_binding = placer_recorded_binding(md, live);
                        /* its record says so, as a hand pin seen while placementd runs is recorded
                         * (Apply=no writes nothing into a domain) */
                        if (m->config->apply && placer_free_to_record(m, dom, d))
                                placer_write_record(m, dom, d);
                }
                return d;
        }
        if (origin == ORIGIN_RUNNING_AT_START && !m->config->place_running && !live->decision) {
                /* its vCPUs floating over its <vcpu cpuset> run there: counted there, as a skipped one's */
                if ((pins = floating_pins(m, dom, live, req->allowed_cpus))) {
                        occupied = policy_adopt(m->topology, m->ledger, req, pins, params);
                        virt_pins_free(pins, live->vcpus);
                        return skip(
                            m, uuid, live,
                            "running before placementd started (PlaceRunning=no); its pins are counted "
                            "as they run",
                            occupied);
                }
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
        g_autofree char *kept = thread_mask_fit(m, uuid, plan);

        plan_set_vcpu_ids(plan, live->vcpu_ids, live->vcpus);
        if (kept) {
                char *reason = g_strdup_printf("%s; %s", plan->reason ? plan->reason : "placed", kept);
                g_free(plan->reason);
                plan->reason = reason;
        }
        d->domain_id = live->domain_id;
        d->reason = note ? g_strdup_printf("%s; %s", note, plan->reason) : g_strdup(plan->reason);
        d->result = m->config->apply ? decision_result_from_plan(plan->result) : DECISION_ADVISORY;
        if (!m->config->apply)
                d->memory_binding = MEMORY_BINDING_ADVISORY;
        return placer_record(m, d, plan);
}

/* Asks the policy, on the host without the domain's old self, and records its plan. */
static Decision *decide(Manager *m, const char *uuid, const DomainSpec *live, PlacementRequest *req,
                        const PlacementParams *params)
{
        g_autofree double *pu_busy = NULL;
        Plan *plan;

        placer_release(m, uuid); /* a re-placement sees the host without its old self */
        /* what the others keep busy, once anything is measured (unknown: every vCPU busy) */
        if (load_monitor_any_known(m->load))
                req->pu_busy = pu_busy = load_pu_busy(m->ledger, load_monitor_lookup_cb, m->load);
        plan = policy_place(m->topology, m->ledger, req, params);
        /* an emulator its user set floating stays so: said, and recorded */
        placer_note_floating_emulator(plan, req);
        return record_plan(m, uuid, live, plan, NULL);
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
 * cpuset> (a start) is no pin: an advice is then counted as planned, an unplaceable plan counts nothing;
 * after an applied plan (before), a pin that is the whole <vcpu cpuset> is placementd's own and counts.
 * before: the earlier plan placementd applied, NULL when none; was: its memory binding. An unplaceable
 * domain's record stays as it was: it names the pins that run. */
static void count_pins_that_run(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user,
                                const Plan *before, MemoryBinding was)
{
        /* floating over the host or its own <vcpu cpuset> is no pin to count; but where placementd pinned
         * the domain before, a pin that is the whole <vcpu cpuset> (one of a CPU or a core) is its own */
        Plan *runs = placer_adopt_live_pins(m, dom, d, true, user && !before ? user->vcpu_cpuset : NULL);

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
                plan_copy_memory(runs, d->plan);
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
                placer_commit(m, d, runs);
                d->advice = advice;
                return;
        }
        placer_commit(m, d, runs);
}

/* Applies d's plan (when Apply=yes and it has one) and records it in the domain. Returns -ENOENT when
 * the domain vanished meanwhile (then forgotten), else 0. before and was: see count_pins_that_run(). */
static int carry_out(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user, uint64_t event_usec,
                     const Plan *before, MemoryBinding was)
{
        bool apply_it = m->config->apply && d->plan->result != PLAN_UNPLACEABLE;

        if (!apply_it)
                count_pins_that_run(m, dom, d, user, before, was);

        /* until its record is written, only the journal says these pins are placementd's */
        if (apply_it)
                apply_journal_note(m, d->uuid, d->domain_id, d->plan);
        if (apply_it && placer_apply(m, dom, d, user, before) == -ENOENT) {
                if (!virt_domain_connection_alive(dom)) {
                        /* not gone: the pins made so far stay, with nothing to say they are ours */
                        interrupted_note(m, d->uuid, d->plan);
                        placer_forget(m, d->uuid,
                                      "the connection to libvirtd was lost while it was being pinned; "
                                      "placed again once it is back");
                        return -ENOENT;
                }
                placer_forget(m, d->uuid, "gone while being pinned"); /* which logs it */
                return -ENOENT;
        }
        /* event to last pin: the metadata written next is bookkeeping, not placement */
        d->latency_usec = event_usec ? now_usec(CLOCK_MONOTONIC) - event_usec : 0;
        if (apply_it && !d->job_held) /* a held job: the record the domain has stays until it is placed */
                placer_write_metadata(m, dom, d, user);
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
            !(r->user = placer_user_spec(dom, r->live)) || domain_spec_opt_out(r->user))
                return NULL;
        {
                const Decision *d = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
                if (!placer_hand_emulator(m, dom, r->user, r->live,
                                          d && d->plan ? d->plan->emulator_pin : NULL,
                                          r->live->decision ? r->live->decision->emulator : NULL))
                        placer_floating_emulator(m, dom, r->user, r->live, d);
                placer_hand_iothreads(m, dom, r->user, r->live, d);
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
        Decision *d;

        placer_note_floating_emulator(plan, &r->req);
        d = record_plan(m, uuid, r->live, plan, note);

        /* a move that leaves the memory where it is (a re-pin) leaves its binding as it stood: applied
         * by placementd, or off */
        if (d->plan && d->plan->keep_memory && (was == MEMORY_BINDING_APPLIED || was == MEMORY_BINDING_OFF))
                d->memory_binding = was;

        if (carry_out(m, dom, d, r->user, 0, before, was) == 0)
                announce(m, d);
}

/* "CPU 3", "CPUs 0-1", "no CPU in particular" (an empty set: unpinned) */
static char *cpus_text(const CpuSet *s)
{
        g_autofree char *list = cpuset_format(s);

        if (cpuset_is_empty(s))
                return g_strdup("no CPU in particular");
        return g_strdup_printf("CPU%s %s", cpuset_count(s) == 1 ? "" : "s", list);
}

bool placer_rehouse(Manager *m, virDomainPtr dom, const char *why)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *d = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
        g_autoptr(PlacerRequest) r = NULL;
        g_autoptr(Ledger) others = NULL;
        g_autofree double *pu_busy = NULL;
        g_autofree char *was = NULL, *now = NULL, *note = NULL, *error = NULL, *kept = NULL;
        const char *what;
        Plan *plan;

        /* placementd's own pins that run (an advice or a held job moved nothing) */
        if (!m->config->apply || !d || !d->plan || d->job_held ||
            (d->result != DECISION_PLACED && d->result != DECISION_OVERCOMMITTED) ||
            !(r = placer_request(m, dom)))
                return false;
        /* the host as a re-placement sees it: without the domain's old self */
        others = ledger_new_over(m->ledger);
        ledger_release(others, uuid);
        if (load_monitor_any_known(m->load))
                r->req.pu_busy = pu_busy = load_pu_busy(others, load_monitor_lookup_cb, m->load);
        if (!(plan = policy_rehouse(m->topology, others, &r->req, &r->params, d->plan)))
                return false;
        /* kept within the CPUs its QEMU threads started on, as its placement was (record_plan()): where
         * that leaves it as it is, nothing moves; else the reason says the new pin's note alone */
        kept = thread_mask_fit(m, uuid, plan);
        if (cpuset_equal(plan->emulator_pin, d->plan->emulator_pin) &&
            cpuset_equal(plan->iothreads, d->plan->iothreads) &&
            cpuset_equal(plan->iothread_pin, d->plan->iothread_pin)) {
                plan_free(plan);
                return false;
        }
        {
                g_autofree char *rest = thread_mask_unsay(plan->reason);
                g_free(plan->reason);
                plan->reason = kept ? g_strdup_printf("%s; %s", rest, kept) : g_steal_pointer(&rest);
        }
        if (held_job_busy(m, dom, &error) < 0) { /* each pin would wait for the job */
                log_info("%s: its emulator and I/O threads not moved: %s", d->name, error);
                plan_free(plan);
                return false;
        }
        what = cpuset_is_empty(plan->emulator_pin) ? "its I/O threads"
               : cpuset_is_empty(plan->iothreads)  ? "its emulator"
                                                   : "its emulator and I/O threads";
        was = cpus_text(cpuset_is_empty(plan->emulator_pin) ? d->plan->iothread_pin : d->plan->emulator_pin);
        now = cpus_text(cpuset_is_empty(plan->emulator_pin) ? plan->iothread_pin : plan->emulator_pin);
        note = g_strdup_printf("%s moved to %s %s", what, now, why);
        log_info("%s: %s moved from %s to %s %s", d->name, what, was, now, why);
        placer_apply_plan(m, dom, r, plan, note);
        return true;
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
                 * the parser does not, say): what it holds stays counted as decided, or, never decided, as
                 * it runs */
                log_warning("%s: %s, not placed%s", virt_domain_name(dom), error,
                            g_hash_table_contains(m->decisions, uuid) ? " again: its decision stands" : "");
                return g_hash_table_contains(m->decisions, uuid)
                           ? NULL
                           : placer_count_unreadable(m, dom, uuid, error);
        }
        /* a start: the emulator pin its definition carries is what QEMU's threads started on (not for a
         * start libvirt ended after placementd pinned the domain: interrupted.c); the first sight of a run
         * (not one whose apply was cut off: its pins are placementd's of this run) whose record another
         * run wrote: the same (thread-mask.c) */
        if (origin == ORIGIN_MIGRATED ||
            (origin == ORIGIN_STARTED && !g_hash_table_contains(m->interrupted, uuid)))
                thread_mask_note(m, uuid, live);
        else if (!g_hash_table_contains(m->decisions, uuid) && !g_hash_table_contains(m->interrupted, uuid))
                thread_mask_first_sight(m, uuid, live);
        if (live->decision_error)
                log_warning("%s: recorded decision unreadable (%s); placing it anew", live->name,
                            live->decision_error);
        if (live->record_foreign)
                log_warning("%s: its recorded decision names another domain's UUID (a copied definition): "
                            "not read",
                            live->name);
        if (origin != ORIGIN_MIGRATED && origin != ORIGIN_REPLACE && origin != ORIGIN_RESIZED &&
            origin != ORIGIN_HEAL && live->decision &&
            (d = placer_adopt_recorded(m, dom, uuid, live, !recorded_pins_changed_by_hand(m, dom, live))))
                return d;
        user = placer_user_spec(dom, live);
        if (!user) {
                if (!virt_domain_is_active(dom))
                        placer_forget(m, uuid, "gone");
                return NULL;
        }
        ours = interrupted_claim(m, dom, uuid, live, user);
        old = g_hash_table_lookup(m->decisions, uuid);
        if (!ours && old)
                ours = interrupted_claim_unrecorded(m, dom, old, live, user);
        /* an emulator pin someone else made is the user's: never undone; so are I/O thread pins */
        if (!ours) {
                if (!placer_hand_emulator_said(m, dom, user, live,
                                               old && old->plan ? old->plan->emulator_pin : NULL,
                                               live->decision ? live->decision->emulator : NULL, live->name))
                        placer_floating_emulator(m, dom, user, live, old); /* or set floating by hand */
                placer_hand_iothreads(m, dom, user, live, old); /* and I/O threads pinned by hand */
        }
        if ((why = domain_spec_opt_out(user)))
                return placer_skip_opted_out(m, dom, uuid, live, user, why, old);
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

        if (virt_domain_read_spec(dom, false, &live, &error) < 0 || !(user = placer_user_spec(dom, live)))
                return false; /* read again, and said, when it is placed */
        /* opted out (also over a record placementd wrote before): counted as it runs */
        if (domain_spec_opt_out(user))
                return true;
        if (live->decision && !recorded_pins_changed_by_hand(m, dom, live))
                return false; /* its record is checked when it is placed */
        /* as place() decides: an unreadable record, or pins an apply of placementd's left (interrupted),
         * mean the domain is placed anew, not counted as it runs */
        if (live->decision_error || g_hash_table_contains(m->interrupted, virt_domain_uuid(dom, uuid)))
                return false;
        req = domain_request(user, live);
        pins = placer_hand_pins(m, dom, live, req.allowed_cpus);
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
