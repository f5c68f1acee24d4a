/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Emulator pins that follow arrivals (policies/emulator-follow.h): after a plan with vCPUs is committed,
 * at the loop's next turn, each other domain placementd pinned whose emulator pin holds CPUs of the cores
 * those vCPUs took is re-pinned to the CPUs of its pin no other domain's vCPUs run on, with the I/O
 * threads pinned with it. Only those pins change: the vCPUs, the memory and the rest of the decision stay;
 * the record is written again and the decision's signal sent.
 */
#include <string.h>

#include "emulator-follow.h"
#include "load-monitor.h"
#include "log.h"
#include "manager-internal.h"
#include "placer-internal.h"
#include "virt-cleanup.h"
#include "virt-conn.h"
#include "virt-domain.h"

/* What the reason of a decision whose emulator pin followed ends with; a later one replaces it. */
#define NARROWED "; its emulator now on CPUs "

static bool pick_narrowable(const Manager *m, const Decision *d, const void *arg)
{
        const CpuSet *taken = arg;

        return (d->result == DECISION_PLACED || d->result == DECISION_OVERCOMMITTED) && d->plan &&
               d->plan->emulator_pin && cpuset_intersects(d->plan->emulator_pin, taken) &&
               !placer_pinned_nothing(d) && m->config->apply;
}

/* d's reason with its emulator on pin, dropped: the CPUs it left (a reason narrowed before loses that). */
static char *narrowed_reason(const char *reason, const CpuSet *pin, const CpuSet *dropped)
{
        g_autofree char *base = g_strdup(reason ? reason : "");
        g_autofree char *to = cpuset_format(pin), *from = cpuset_format(dropped);
        char *end = strstr(base, NARROWED);

        if (end)
                *end = '\0';
        return g_strdup_printf("%s" NARROWED "%s: %s went to another domain's vCPUs", base, to, from);
}

/* Re-pins d's emulator (and the I/O threads with it) to next's CPUs; true when libvirt took them. */
static bool pin_threads(Decision *d, virDomainPtr dom, const Plan *next)
{
        g_autofree char *error = NULL;

        if (virt_domain_job_held(dom, &error) != 0) { /* each pin would wait for the job */
                log_info("%s: its emulator stays on %s: %s", d->name, "the CPUs it has",
                         error ? error : "libvirt holds a job on it");
                return false;
        }
        if (virt_domain_pin_emulator(dom, next->emulator_pin, &error) < 0) {
                log_warning("%s: its emulator could not follow the cores another domain took: %s", d->name,
                            error);
                return false;
        }
        if (!cpuset_equal(next->iothread_pin, d->plan->iothread_pin))
                CPUSET_FOREACH (id, next->iothreads)
                        if (virt_domain_pin_iothread(dom, (unsigned)id, next->iothread_pin, &error) < 0) {
                                log_warning("%s: I/O thread %d could not follow its emulator: %s", d->name,
                                            id, error);
                                g_clear_pointer(&error, g_free);
                        }
        return true;
}

static void narrow_one(Manager *m, Decision *d)
{
        const DomainLoad *l = load_monitor_lookup(m->load, d->uuid);
        g_autoptr(Plan) next =
            policy_emulator_follow(m->topology, m->ledger, d->plan, l && l->known ? l->host_busy : 0);
        g_autoptr(virDomain) dom = NULL;
        g_autoptr(CpuSet) dropped = NULL;
        g_autofree char *to = NULL, *from = NULL;

        if (!next || virt_conn_lookup_uuid(m->conn, d->uuid, &dom, NULL) < 0 || !pin_threads(d, dom, next))
                return;
        dropped = cpuset_copy(d->plan->emulator_pin);
        cpuset_subtract(dropped, next->emulator_pin);
        to = cpuset_format(next->emulator_pin);
        from = cpuset_format(dropped);
        log_info("%s: its emulator now on CPUs %s: %s went to another domain's vCPUs", d->name, to, from);
        {
                char *reason = narrowed_reason(d->reason, next->emulator_pin, dropped);
                g_free(d->reason);
                d->reason = reason;
        }
        placer_commit(m, d, g_steal_pointer(&next));
        healer_forget_request(m, d->uuid);
        if (placer_free_to_record(dom, d))
                placer_write_record(m, dom, d);
        if (m->cb.decision_changed) /* a signal, not a new decision: the counts stay */
                m->cb.decision_changed(m, d, d->uuid, d->name, m->userdata);
}

static void on_narrow(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        g_autoptr(CpuSet) taken = m->emulators_taken;
        g_autoptr(GPtrArray) uuids = NULL;
        (void)fd;
        (void)what;

        m->emulators_taken = NULL;
        if (!taken || !m->conn)
                return;
        uuids = manager_pick(m, pick_narrowable, taken);
        for (unsigned i = 0; i < uuids->len; i++) {
                Decision *d = g_hash_table_lookup(m->decisions, g_ptr_array_index(uuids, i));
                if (d)
                        narrow_one(m, d);
        }
}

void placer_emulators_init(Manager *m)
{
        m->emulators_ev = evtimer_new(m->base, on_narrow, m);
}

void placer_emulators_done(Manager *m)
{
        g_clear_pointer(&m->emulators_ev, event_free);
        g_clear_pointer(&m->emulators_taken, cpuset_free);
}

void placer_emulators_taken(Manager *m, const Plan *p)
{
        g_autoptr(CpuSet) taken = NULL;

        if (!m->emulators_ev || (p->result != PLAN_PLACED && p->result != PLAN_OVERCOMMITTED))
                return;
        taken = emulator_follow_taken(m->topology, p);
        if (cpuset_is_empty(taken))
                return;
        if (!m->emulators_taken)
                m->emulators_taken = cpuset_new();
        cpuset_union(m->emulators_taken, taken);
        if (!evtimer_pending(m->emulators_ev, NULL)) { /* at the loop's next turn */
                struct timeval now = {0, 0};
                evtimer_add(m->emulators_ev, &now);
        }
}
