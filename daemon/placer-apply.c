/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Applying a plan live: the vCPU pins, the memory binding, the emulator and I/O thread pins, each tried
 * whatever failed before; after a failure the ledger counts what really runs.
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "manager-internal.h"
#include "placer-internal.h"
#include "policy.h"
#include "virt-domain.h"

/* Where libvirt runs a thread nobody pinned: every CPU of the definition's <vcpu cpuset>, else every host
 * CPU. */
static CpuSet *unpinned_cpus(const Manager *m, const DomainSpec *user)
{
        return cpuset_copy(user && user->vcpu_cpuset ? user->vcpu_cpuset : m->topology->all_pus);
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
                        error = g_strdup_printf("vCPU %u was pinned to %s but runs on %s%s%s",
                                                plan_vcpu_id(p, i), want, *have ? "'" : "no CPU", have,
                                                *have ? "'" : "");
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
        g_autoptr(CpuSet) within = NULL;
        const CpuSet *pin = d->plan->emulator_pin;
        int r;

        *ret_applied = true;
        if (cpuset_is_empty(pin)) {
                if (!before || cpuset_is_empty(before->emulator_pin) || (user && user->has_emulatorpin) ||
                    !(live = virt_domain_emulator_pin(dom)) || !cpuset_equal(live, before->emulator_pin))
                        return 0;
                pin = reset = unpinned_cpus(m, user);
                /* QEMU's threads started on a narrower pin (restored from a save image) stay there
                 * whatever the emulator's pin becomes: it stays on them too, said and counted, rather
                 * than the main thread alone going back to every CPU */
                if ((within = thread_mask_cut(m, d->uuid, reset))) {
                        g_autofree char *on = cpuset_format(within);
                        g_autofree char *why = g_strdup_printf(
                            "the emulator stays pinned to %s, the CPUs its QEMU threads started on: the "
                            "kernel keeps them there, unpinned or not",
                            on);
                        Plan *kept = plan_copy(d->plan);
                        char *reason =
                            g_strdup_printf("%s; %s", kept->reason ? kept->reason : "placed", why);
                        g_free(kept->reason);
                        kept->reason = reason;
                        cpuset_union(kept->emulator_pin, within);
                        reason = g_strdup_printf("%s; %s", d->reason ? d->reason : "placed", why);
                        g_free(d->reason);
                        d->reason = reason;
                        placer_commit(m, d, kept);
                        log_info("%s: its decision pins no emulator, but QEMU's threads started on %s and "
                                 "stay there: the emulator stays pinned to them",
                                 d->name, on);
                        pin = d->plan->emulator_pin;
                        g_clear_pointer(&reset, cpuset_free);
                }
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
        r = virt_domain_get_iothreads(dom, &ids, &pins, &n, &error);
        /* a job met: the old pin still runs uncounted, so this waits for the job as a pin would */
        if (r == -ENOENT || r == -EBUSY)
                return pin_outcome(d, r, &error, ret_applied);
        if (r < 0) {
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
Plan *placer_adopt_live_pins(Manager *m, virDomainPtr dom, const Decision *d, bool floating_ok,
                             const CpuSet *allowed)
{
        g_autofree char *error = NULL;
        PlacementRequest req = {.name = d->name,
                                .vcpus = d->plan->nvcpus,
                                .memory = d->plan->memory,
                                .hugepage_size = d->plan->hugepage_size,
                                .second_page_size = d->plan->second_page_size};
        CpuSet **pins = NULL;
        g_autofree PlacementCell *cells = NULL;
        g_autofree CpuSet **cell_ids = NULL;
        bool pinned = !floating_ok;
        Plan *runs;

        int r = virt_domain_get_vcpu_pins(dom, req.vcpus, d->plan->vcpu_ids, &pins, &error);

        if (r < 0) {
                if (r != -ENOENT) /* gone: its stop frees the plan */
                        log_warning("%s: %s; its plan stays counted", d->name, error);
                return NULL;
        }
        for (unsigned i = 0; i < req.vcpus && !pinned; i++)
                pinned = pins[i] && !cpuset_is_empty(pins[i]) && !placer_runs_anywhere(m, pins[i], allowed);
        if (!pinned) {
                virt_pins_free(pins, req.vcpus);
                return NULL;
        }
        /* guest cells no <page> backs hold ordinary memory beside its hugepages: counted so again */
        if (d->plan->node_ordinary) {
                cells = g_new0(PlacementCell, d->plan->ncells);
                cell_ids = g_new0(CpuSet *, d->plan->ncells);
                for (unsigned c = 0; c < d->plan->ncells; c++) {
                        cell_ids[c] = cpuset_new();
                        CPUSET_FOREACH (v, d->plan->cells[c].vcpus)
                                cpuset_add(cell_ids[c], plan_vcpu_id(d->plan, (unsigned)v));
                        cells[c] = (PlacementCell){.id = d->plan->cells[c].id,
                                                   .vcpus = cell_ids[c],
                                                   .memory = d->plan->cells[c].memory,
                                                   .ordinary = d->plan->cells[c].ordinary,
                                                   .device = d->plan->cells[c].device,
                                                   .device_target = d->plan->cells[c].device_target,
                                                   .device_nodemask = d->plan->cells[c].device_nodemask};
                }
                req.cells = cells;
                req.ncells = d->plan->ncells;
                req.vcpu_ids = d->plan->vcpu_ids;
        }
        placer_release(m, d->uuid); /* adopted among the others, not beside its plan */
        runs = policy_adopt(m->topology, m->ledger, &req, pins, &m->config->placement);
        for (unsigned c = 0; cell_ids && c < d->plan->ncells; c++)
                cpuset_free(cell_ids[c]);
        virt_pins_free(pins, req.vcpus);
        /* the CPUs the definition keeps for QEMU's threads (<emulatorpin>, <iothreadpin>) stay held */
        cpuset_union(runs->held_pus, d->plan->held_pus);
        cpuset_union(runs->held_realtime_pus, d->plan->held_realtime_pus);
        for (unsigned i = 0; i < runs->nvcpus; i++) /* not where a vCPU of its own may run (as adopt.c) */
                CPUSET_FOREACH (cpu, runs->vcpu_pins[i]) {
                        int pu = topology_pu_by_os(m->topology, (unsigned)cpu);
                        if (pu >= 0)
                                cpuset_remove(runs->held_pus, (unsigned)pu);
                }
        plan_set_realtime(runs, d->plan->realtime, d->plan->realtime_vcpus);
        plan_set_realtime_threads(runs, d->plan->realtime_emulator, d->plan->realtime_iothreads);
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

        if (!before || cpuset_is_empty(before->emulator_pin) || !(live = virt_domain_emulator_pin(dom)))
                return NULL;
        return cpuset_equal(live, before->emulator_pin) ? before->emulator_pin : NULL;
}

/*
 * After a failed pin the ledger must hold what runs, not what was planned: the live pins, adopted, and
 * the emulator and I/O thread pins placementd made before when the new ones did not replace them (else
 * the next placement would take them for someone else's, and never undo them). Returns -ENOENT when the
 * domain turns out gone: a pin of a thread that had already exited (QEMU killed or crashed meanwhile)
 * fails before libvirt knows the domain stopped, and that is no failed placement. Else 0.
 */
static int record_what_runs(Manager *m, virDomainPtr dom, Decision *d, const Plan *before,
                            bool emulator_applied, bool iothreads_applied)
{
        const CpuSet *emulator = emulator_applied ? d->plan->emulator_pin : own_emulator_left(dom, before);
        Plan *runs;

        d->result = DECISION_FAILED;
        if (!(runs = placer_adopt_live_pins(m, dom, d, false, NULL)))
                return virt_domain_is_active(dom) ? 0 : -ENOENT;
        if (emulator)
                cpuset_union(runs->emulator_pin, emulator);
        if (iothreads_applied) {
                cpuset_union(runs->iothreads, d->plan->iothreads);
                cpuset_union(runs->iothread_pin, d->plan->iothread_pin);
        } else if (before && !cpuset_is_empty(before->iothreads)) {
                /* the pins before made may still run (reading them needs the job): counted, and undone
                 * by the next apply where its plan leaves them alone */
                cpuset_union(runs->iothreads, before->iothreads);
                cpuset_union(runs->iothread_pin, before->iothread_pin);
        }
        /* the memory binding stands where it was applied */
        if (d->memory_binding == MEMORY_BINDING_APPLIED || d->memory_binding == MEMORY_BINDING_KEPT)
                plan_copy_memory(runs, d->plan);
        g_free(runs->reason);
        runs->reason = g_strdup("vCPU pins that really run after a failed apply");
        g_free(d->reason);
        d->reason = g_strdup_printf("applying the plan failed, the pins that really run are counted (%s)",
                                    d->plan->reason ? d->plan->reason : "");
        placer_commit(m, d, runs);
        return 0;
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
        (void)record_what_runs(m, dom, d, before, emulator_applied, iothreads_applied);
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
int placer_apply(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user, const Plan *before)
{
        bool emulator_applied = false, iothreads_applied = false, looked_busy = false;
        g_autofree char *error = NULL;
        int pins, r = 0;

        if (held_job_busy(m, dom, &error) < 0) {
                note_failure(d, &error);
                r = pins = -EBUSY;
                looked_busy = true;
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
        if (r == -EBUSY && !looked_busy) /* a call waited libvirt's 30 s for a job it did not report */
                held_note_timeout(m, d->uuid, d->name);
        else if (r == 0)
                held_forget_timeouts(m, d->uuid);
        if (r == -EBUSY)
                wait_for_job(m, dom, d, before, emulator_applied, iothreads_applied);
        else if (pins > 0 || !emulator_applied || !iothreads_applied)
                return record_what_runs(m, dom, d, before, emulator_applied, iothreads_applied);
        return 0;
}
