/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Domains libvirt held a job on when placementd came to apply their plan (QEMU stopped or not answering
 * its monitor, a long migration or dump). Nothing waited for the job: their decision is `failed`, the
 * ledger counts the pins that really run, and they are placed again once libvirt releases it, looked at
 * every HELD_RETRY_SEC (placer.c marks them, Decision.job_held).
 */
#include "log.h"
#include "manager-internal.h"
#include "virt-domain.h"

#define HELD_RETRY_SEC 5

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

                /* gone meanwhile: its stop event or the reconcile forgets it */
                if (!d || !d->job_held || virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0 ||
                    virt_domain_job_held(dom, NULL) < 0)
                        continue;
                log_info("%s: libvirt released the domain's job: placing it again", d->name);
                placer_place(m, dom, ORIGIN_REPLACE, 0);
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
}

void held_done(Manager *m)
{
        event_free(m->held_ev);
        m->held_ev = NULL;
}
