/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Domains libvirt held a job on when placementd came to apply their plan (QEMU stopped or not answering
 * its monitor, a long migration or dump). Nothing waited for the job: their decision is `failed`, the
 * ledger counts the pins that really run, and they are placed again once libvirt releases it, looked at
 * every HELD_RETRY_SEC (placer.c marks them, Decision.job_held).
 *
 * libvirt does not report every job it holds (virDomainGetControlInfo says "ok" while an async job without
 * a monitor command holds the domain), and a call that needs such a job waits libvirt's 30 s before it
 * fails, with the daemon's loop. A domain a call timed out on so is not tried again before
 * UNREPORTED_FIRST_SEC, then twice as long after each timeout, up to UNREPORTED_MAX_SEC (m->job_timeouts);
 * and once one call timed out, no call that needs a job is made on any domain for the rest of that turn of
 * the loop (m->timed_out_this_turn): one turn holds the loop 30 s at most. (A start that never ends, which
 * libvirt 9.0 keeps after a libvirtd stopped during QEMU's handshake, is seen before any call: paused,
 * "starting up", virt_domain_starting(); such a domain does not run yet, and the reconcile leaves it out.)
 */
#include <errno.h>

#include "log.h"
#include "manager-internal.h"
#include "virt-domain.h"

#define HELD_RETRY_SEC       5
#define UNREPORTED_FIRST_SEC 30
#define UNREPORTED_MAX_SEC   600

static unsigned backoff_sec(unsigned timeouts)
{
        unsigned sec = UNREPORTED_FIRST_SEC;

        for (unsigned i = 1; i < timeouts && sec < UNREPORTED_MAX_SEC; i++)
                sec *= 2;
        return MIN(sec, UNREPORTED_MAX_SEC);
}

int held_job_busy(Manager *m, virDomainPtr dom, char **ret_error)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        const HeldBackoff *b;
        int64_t now = g_get_monotonic_time();

        if (virt_domain_job_held(dom, ret_error) < 0)
                return -EBUSY;
        if (m->timed_out_this_turn) {
                if (ret_error)
                        *ret_error =
                            g_strdup("a call on another domain just waited libvirt's 30 s for a "
                                     "job libvirt does not report: not risking a second wait in a row");
                return -EBUSY;
        }
        if (!(b = g_hash_table_lookup(m->job_timeouts, virt_domain_uuid(dom, uuid))) || now >= b->next_usec)
                return 0;
        if (ret_error)
                *ret_error = g_strdup_printf(
                    "libvirt timed out waiting for a job on the domain that it does not report, %u time%s: "
                    "not trying again for %lld s",
                    b->timeouts, b->timeouts == 1 ? "" : "s",
                    (long long)((b->next_usec - now + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC));
        return -EBUSY;
}

void held_note_timeout(Manager *m, const char *uuid, const char *name)
{
        HeldBackoff *b = g_hash_table_lookup(m->job_timeouts, uuid);
        unsigned sec;

        if (!b) {
                b = g_new0(HeldBackoff, 1);
                g_hash_table_insert(m->job_timeouts, g_strdup(uuid), b);
        }
        b->timeouts++;
        sec = backoff_sec(b->timeouts);
        b->next_usec = g_get_monotonic_time() + (int64_t)sec * G_USEC_PER_SEC;
        m->timed_out_this_turn = true;
        if (!evtimer_pending(m->turn_ev, NULL)) {
                struct timeval now = {0, 0};
                evtimer_add(m->turn_ev, &now); /* at the loop's next turn */
        }
        if (b->timeouts == 1)
                log_warning(
                    "%s: a call timed out on a job libvirt holds on the domain without reporting it: "
                    "each try holds placementd up to 30 s; trying again in %u s, then less often, at "
                    "most every %u s",
                    name, sec, UNREPORTED_MAX_SEC);
        else
                log_notice(
                    "%s: libvirt still holds the job it does not report (%u timeouts); trying again in "
                    "%u s",
                    name, b->timeouts, sec);
}

void held_forget_timeouts(Manager *m, const char *uuid)
{
        if (m->job_timeouts)
                g_hash_table_remove(m->job_timeouts, uuid);
}

static void on_next_turn(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        ((Manager *)arg)->timed_out_this_turn = false;
}

static bool any_held(const Manager *m)
{
        GHashTableIter it;
        gpointer value;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value))
                if (((const Decision *)value)->job_held)
                        return true;
        return false;
}

void held_retry_now(Manager *m)
{
        g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func(g_free);
        GHashTableIter it;
        gpointer key, value;

        g_hash_table_iter_init(&it, m->decisions);
        while (m->conn && g_hash_table_iter_next(&it, &key, &value))
                if (((const Decision *)value)->job_held)
                        g_ptr_array_add(held, g_strdup(key));
        for (unsigned i = 0; i < held->len; i++) {
                const char *uuid = g_ptr_array_index(held, i);
                g_autoptr(virDomain) dom = NULL;
                const Decision *d = g_hash_table_lookup(m->decisions, uuid);
                const HeldBackoff *b;
                unsigned timeouts;

                /* gone meanwhile: its stop event or the reconcile forgets it */
                if (!d || !d->job_held || virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0 ||
                    held_job_busy(m, dom, NULL) < 0)
                        continue;
                if ((b = g_hash_table_lookup(m->job_timeouts, uuid)))
                        log_info("%s: trying it again: its calls timed out on a job libvirt does not report",
                                 d->name);
                else
                        log_info("%s: libvirt released the domain's job: placing it again", d->name);
                timeouts = b ? b->timeouts : 0;
                placer_place(m, dom, ORIGIN_REPLACE, 0);
                /* that try held the loop 30 s: the others wait for the next look, the loop answering
                 * meanwhile (two tries in a row would hold it past the unit's WatchdogSec) */
                if ((b = g_hash_table_lookup(m->job_timeouts, uuid)) && b->timeouts > timeouts)
                        break;
        }
        if (any_held(m))
                held_retry_soon(m);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        held_retry_now(arg);
}

void held_retry_soon(Manager *m)
{
        struct timeval tv = {.tv_sec = HELD_RETRY_SEC};

        if (!evtimer_pending(m->held_ev, NULL))
                evtimer_add(m->held_ev, &tv);
}

void held_init(Manager *m)
{
        m->held_ev = evtimer_new(m->base, on_retry, m);
        m->turn_ev = evtimer_new(m->base, on_next_turn, m);
        m->job_timeouts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

void held_done(Manager *m)
{
        event_free(m->held_ev);
        m->held_ev = NULL;
        g_clear_pointer(&m->turn_ev, event_free);
        g_clear_pointer(&m->job_timeouts, g_hash_table_destroy);
}
