/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placing one domain: read what it is, respect its opt-outs, adopt what it already records, ask the
 * policy, apply the plan live, record the decision in the domain and in the ledger.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "manager-internal.h"
#include "metadata.h"
#include "policy.h"
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
        g_autofree char *name = NULL;

        if (!d)
                return;
        name = g_strdup(d->name);
        ledger_release(m->ledger, uuid);
        log_info("%s: %s; its cores and memory are free again", name, why);
        g_hash_table_remove(m->decisions, uuid);
        placer_notify(m, NULL, uuid, name);
}

/* Stores d (taking it), committing plan (taken, may be NULL) to the ledger under its UUID. */
static Decision *record(Manager *m, Decision *d, Plan *plan)
{
        ledger_release(m->ledger, d->uuid);
        if (plan) {
                d->plan = plan_copy(plan);
                /* the ledger needs the assignment, not the reasoning: the decision keeps that */
                g_ptr_array_set_size(plan->candidates, 0);
                if (ledger_commit(m->ledger, d->uuid, plan) < 0)
                        log_warning("%s: its plan does not fit the host's topology, not counted", d->name);
        }
        d->decided_usec = (int64_t)now_usec(CLOCK_REALTIME);
        g_hash_table_replace(m->decisions, d->uuid, d);
        return d;
}

static const char *opt_out_reason(const DomainSpec *cfg)
{
        if (cfg->meta_skip)
                return "opted out with <placementd:domain skip='yes'/>";
        if (cfg->has_vcpupin)
                return "its definition pins vCPUs itself (<cputune><vcpupin>)";
        if (cfg->vcpu_auto)
                return "<vcpu placement='auto'>: libvirt and numad place it";
        if (cfg->numatune_auto)
                return "<numatune><memory placement='auto'>: libvirt and numad place it";
        return NULL;
}

/*
 * The request for dom: its size from the live definition, the user's constraints from user (the spec the
 * opt-outs come from). Memory the user does not bind may still be bound already: libvirt changes the
 * nodeset of a running domain only in restrictive mode, so a live strict, interleave or preferred binding
 * (placementd's own first binding included) stays where it is, and the vCPUs stay with it.
 */
static PlacementRequest request_from_spec(const DomainSpec *user, const DomainSpec *live)
{
        PlacementRequest req = {
            .name = live->name,
            .vcpus = live->vcpus,
            .memory = live->memory,
            .allowed_cpus = user->vcpu_cpuset,
            .keep_emulator = user->has_emulatorpin,
        };

        if (user->memory_nodeset) {
                req.memory_nodes = user->memory_nodeset;
                req.memory_source = MEMORY_SOURCE_USER;
                req.memory_mode = user->memory_mode;
        } else if (user->memnode_nodeset) {
                req.memory_nodes = user->memnode_nodeset;
                req.memory_source = MEMORY_SOURCE_MEMNODE;
        } else if (live->memory_nodeset && live->memory_mode != MEMORY_MODE_RESTRICTIVE) {
                req.memory_nodes = live->memory_nodeset;
                req.memory_source = MEMORY_SOURCE_BOUND;
                req.memory_mode = live->memory_mode;
        }
        return req;
}

/*
 * Live pins other than "anywhere" mean someone pinned it; anywhere is every host CPU, or every host CPU of
 * <vcpu cpuset> (libvirt's default pin for it). Returns the pins or NULL.
 */
static CpuSet **hand_pins(Manager *m, virDomainPtr dom, unsigned nvcpus, const CpuSet *allowed)
{
        CpuSet **pins = NULL;
        g_autofree char *error = NULL;
        bool pinned = false;

        if (nvcpus == 0 || virt_domain_get_vcpu_pins(dom, nvcpus, &pins, &error) < 0)
                return NULL;
        for (unsigned i = 0; i < nvcpus && !pinned; i++) {
                g_autoptr(CpuSet) missing = cpuset_copy(m->topology->all_pus);
                g_autoptr(CpuSet) forbidden = cpuset_copy(m->topology->all_pus);
                if (allowed) {
                        cpuset_subtract(forbidden, allowed);
                        cpuset_subtract(missing, forbidden); /* the host CPUs of the cpuset */
                }
                cpuset_subtract(missing, pins[i]);
                pinned = !cpuset_is_empty(missing);
        }
        if (!pinned) {
                virt_pins_free(pins, nvcpus);
                return NULL;
        }
        return pins;
}

static void write_metadata(Manager *m, virDomainPtr dom, const Decision *d, const DomainSpec *user)
{
        g_autofree char *xml = NULL, *error = NULL;

        if (!d->plan)
                return;
        xml = metadata_format(m->topology, d->plan, decision_result_to_string(d->result), d->memory_binding,
                              user);
        if (virt_domain_set_metadata(dom, xml, &error) < 0)
                log_warning("%s: %s; a restart will place it anew, ignoring", d->name, error);
}

/* Applies the plan live. Returns 0, or -ENOENT when the domain vanished. Failures are kept in d. */
static int apply(Manager *m, virDomainPtr dom, Decision *d)
{
        const Plan *p = d->plan;
        g_autofree char *error = NULL;
        int r;

        for (unsigned i = 0; i < p->nvcpus; i++) {
                if (cpuset_is_empty(p->vcpu_pins[i]))
                        continue;
                r = virt_domain_pin_vcpu(dom, i, p->vcpu_pins[i], &error);
                if (r == -ENOENT)
                        return r;
                if (r < 0) {
                        log_warning("%s: %s", d->name, error);
                        g_free(d->apply_error);
                        d->apply_error = g_steal_pointer(&error);
                        return 0;
                }
        }
        if (p->keep_memory) {
                /* bound by the definition, or bound live already in a mode libvirt will not change */
                g_free(d->memory_binding);
                d->memory_binding = g_strdup("kept");
        } else if (!m->config->memory_binding) {
                g_free(d->memory_binding);
                d->memory_binding = g_strdup("off");
        } else if (p->result != PLAN_UNPLACEABLE) {
                g_autoptr(CpuSet) idx = plan_memory_nodes(p);
                g_autoptr(CpuSet) nodes = cpuset_new();
                CPUSET_FOREACH (n, idx)
                        cpuset_add(nodes, m->topology->nodes[n].os_index);
                r = virt_domain_set_memory_nodes(dom, nodes, &error);
                if (r == -ENOENT)
                        return r;
                g_free(d->memory_binding);
                d->memory_binding = g_strdup(r < 0 ? "failed" : "applied");
                if (r < 0) {
                        log_notice("%s: memory binding not applied, vCPU pins stand: %s", d->name, error);
                        g_free(d->apply_error);
                        d->apply_error = g_steal_pointer(&error);
                }
        }
        if (!cpuset_is_empty(p->emulator_pin)) {
                r = virt_domain_pin_emulator(dom, p->emulator_pin, &error);
                if (r == -ENOENT)
                        return r;
                if (r < 0) {
                        log_warning("%s: %s, ignoring", d->name, error);
                        g_clear_pointer(&error, g_free);
                }
        }
        return 0;
}

static void log_decision(const Decision *d)
{
        GString *pins = g_string_new(NULL);

        if (d->plan)
                for (unsigned i = 0; i < d->plan->nvcpus && i < 64; i++) {
                        g_autofree char *s = cpuset_format(d->plan->vcpu_pins[i]);
                        if (*s)
                                g_string_append_printf(pins, "%s%u:%s", pins->len ? " " : "", i, s);
                }
        log_info("%s: %s%s%s%s (%s)", d->name, decision_result_to_string(d->result),
                 pins->len ? ", vCPU pins " : "", pins->str, d->adopted ? ", adopted" : "",
                 d->reason ? d->reason : "");
        g_string_free(pins, TRUE);
}

static Decision *skip(Manager *m, const char *uuid, const DomainSpec *live, const char *why, Plan *occupied)
{
        Decision *d = decision_new(uuid, live->name);
        d->result = DECISION_SKIPPED;
        d->reason = g_strdup(why);
        d->pinned_by_hand = occupied != NULL;
        return record(m, d, occupied);
}

static Decision *adopt_recorded(Manager *m, const char *uuid, const DomainSpec *live)
{
        Plan *plan = NULL;
        g_autofree char *error = NULL;
        Decision *d;
        const MetaDecision *md = live->decision;

        if (metadata_to_plan(m->topology, md, live->name, live->vcpus, live->memory, &plan, &error) < 0) {
                log_notice("%s: recorded decision not usable here (%s); placing it anew", live->name, error);
                return NULL;
        }
        d = decision_new(uuid, live->name);
        d->adopted = true;
        d->reason = g_strdup(plan->reason);
        g_free(d->memory_binding);
        d->memory_binding = g_strdup(md->memory_binding ? md->memory_binding : "none");
        if (md->result && strcmp(md->result, "skipped") == 0) {
                d->result = DECISION_SKIPPED;
                d->pinned_by_hand = true;
                plan->result = PLAN_ADOPTED;
        } else if (md->result && strcmp(md->result, "advisory") == 0) {
                d->result = DECISION_ADVISORY;
        } else {
                d->result = decision_result_from_plan(plan->result);
        }
        return record(m, d, plan);
}

void placer_place(Manager *m, virDomainPtr dom, PlaceOrigin origin, uint64_t event_usec)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autoptr(DomainSpec) live = NULL;
        g_autoptr(DomainSpec) cfg = NULL;
        g_autofree char *error = NULL;
        PlacementParams params;
        PlacementRequest req;
        const char *why;
        Decision *d;
        Plan *plan;
        int r;

        virt_domain_uuid(dom, uuid);
        r = virt_domain_read_spec(dom, false, &live, &error);
        if (r < 0) {
                if (r == -ENOENT)
                        log_info("%s: gone before it could be placed", virDomainGetName(dom));
                else
                        log_warning("%s: %s, not placed", virDomainGetName(dom), error);
                placer_forget(m, uuid, "gone");
                return;
        }
        if (origin != ORIGIN_MIGRATED && origin != ORIGIN_REPLACE && live->decision &&
            (d = adopt_recorded(m, uuid, live))) {
                log_decision(d);
                placer_notify(m, d, d->uuid, d->name);
                return;
        }
        if (virDomainIsPersistent(dom) == 1 && virt_domain_read_spec(dom, true, &cfg, &error) < 0) {
                log_warning("%s: %s; using its live definition", live->name, error);
                g_clear_pointer(&error, g_free);
        }
        if ((why = opt_out_reason(cfg ? cfg : live))) {
                d = skip(m, uuid, live, why, NULL);
                log_decision(d);
                placer_notify(m, d, d->uuid, d->name);
                return;
        }
        params = m->config->placement;
        if ((cfg ? cfg : live)->meta_policy) {
                const char *wanted = (cfg ? cfg : live)->meta_policy;
                int k = policy_kind_from_string(wanted);
                if (k < 0)
                        log_warning("%s: unknown policy '%s' in its metadata (explicit, compat), using %s",
                                    live->name, wanted, policy_kind_to_string(params.policy));
                else
                        params.policy = (PolicyKind)k;
        }
        req = request_from_spec(cfg ? cfg : live, live);
        if (origin == ORIGIN_RUNNING_AT_START || origin == ORIGIN_RECONCILE) {
                CpuSet **pins = hand_pins(m, dom, live->vcpus, req.allowed_cpus);
                if (pins) {
                        Plan *occupied = policy_adopt(m->topology, m->ledger, &req, pins, &params);
                        virt_pins_free(pins, live->vcpus);
                        d = skip(m, uuid, live,
                                 "already pinned when placementd found it; pins adopted as they are",
                                 occupied);
                        log_decision(d);
                        placer_notify(m, d, d->uuid, d->name);
                        return;
                }
                if (origin == ORIGIN_RUNNING_AT_START && !m->config->place_running) {
                        d = skip(m, uuid, live, "running before placementd started (PlaceRunning=no)", NULL);
                        log_decision(d);
                        placer_notify(m, d, d->uuid, d->name);
                        return;
                }
        }

        ledger_release(m->ledger, uuid); /* a re-placement sees the host without its old self */
        plan = policy_place(m->topology, m->ledger, &req, &params);
        d = decision_new(uuid, live->name);
        d->reason = g_strdup(plan->reason);
        d->result = m->config->apply ? decision_result_from_plan(plan->result) : DECISION_ADVISORY;
        if (!m->config->apply) {
                g_free(d->memory_binding);
                d->memory_binding = g_strdup("advisory");
        }
        d = record(m, d, plan);
        if (m->config->apply && d->plan->result != PLAN_UNPLACEABLE) {
                if (apply(m, dom, d) == -ENOENT) {
                        log_info("%s: gone while being pinned", d->name);
                        placer_forget(m, uuid, "gone while being pinned");
                        return;
                }
        }
        /* event to last pin: the metadata written next is bookkeeping, not placement */
        d->latency_usec = event_usec ? now_usec(CLOCK_MONOTONIC) - event_usec : 0;
        if (m->config->apply && d->plan->result != PLAN_UNPLACEABLE)
                write_metadata(m, dom, d, cfg ? cfg : live);
        if (event_usec) {
                double sec = (double)d->latency_usec / 1e6;
                unsigned b = 0;
                while (b < MANAGER_LATENCY_BUCKETS && sec > manager_latency_bounds[b])
                        b++;
                m->stats.latency_buckets[b]++;
                m->stats.latency_count++;
                m->stats.latency_sum += sec;
        }
        log_decision(d);
        placer_notify(m, d, d->uuid, d->name);
}

void placer_adopt_hand_pins(Manager *m, virDomainPtr dom, const char *what)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        Decision *old = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
        g_autofree char *error = NULL;
        CpuSet **pins = NULL;
        PlacementRequest req;
        Decision *d;
        Plan *adopted;
        unsigned nvcpus;

        if (!old)
                return;
        nvcpus = old->plan ? old->plan->nvcpus : 0;
        if (nvcpus == 0 || virt_domain_get_vcpu_pins(dom, nvcpus, &pins, &error) < 0) {
                if (error)
                        log_warning("%s: %s, ignoring", old->name, error);
                return;
        }
        req = (PlacementRequest){.name = old->name, .vcpus = nvcpus, .memory = old->plan->memory};
        ledger_release(m->ledger, uuid);
        d = decision_new(uuid, old->name);
        d->result = DECISION_SKIPPED;
        d->pinned_by_hand = true;
        d->reason = g_strdup_printf("%s; pins adopted as they are, placementd does not fight them", what);
        /* what was applied before still stands: the emulator pin and the memory binding */
        g_free(d->memory_binding);
        d->memory_binding = g_strdup(old->memory_binding);
        adopted = policy_adopt(m->topology, m->ledger, &req, pins, &m->config->placement);
        cpuset_union(adopted->emulator_pin, old->plan->emulator_pin);
        g_free(adopted->reason);
        adopted->reason = g_strdup(d->reason);
        d = record(m, d, adopted);
        virt_pins_free(pins, nvcpus);
        write_metadata(m, dom, d, NULL);
        log_decision(d);
        placer_notify(m, d, d->uuid, d->name);
}

bool placer_pins_drifted(Manager *m, virDomainPtr dom, const Decision *d)
{
        CpuSet **pins = NULL;
        g_autofree char *error = NULL;
        bool drifted = false;
        (void)m;

        if (!d->plan || d->result == DECISION_ADVISORY || d->result == DECISION_UNPLACEABLE ||
            (d->result == DECISION_SKIPPED && !d->pinned_by_hand) || d->plan->nvcpus == 0)
                return false;
        if (virt_domain_get_vcpu_pins(dom, d->plan->nvcpus, &pins, &error) < 0)
                return false;
        for (unsigned i = 0; i < d->plan->nvcpus && !drifted; i++)
                drifted =
                    !cpuset_is_empty(d->plan->vcpu_pins[i]) && !cpuset_equal(pins[i], d->plan->vcpu_pins[i]);
        virt_pins_free(pins, d->plan->nvcpus);
        return drifted;
}
