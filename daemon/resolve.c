/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "resolve.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

/* One lookup, shared by its thread and its caller until both are done with it. */
typedef struct Lookup {
        gint ref;
        GMutex lock;
        GCond done_cond;
        bool done;
        char *host, *service;
        struct addrinfo hints;
        struct addrinfo *ai;
        int rc;
} Lookup;

static gint pending;

static void lookup_unref(Lookup *l)
{
        if (!g_atomic_int_dec_and_test(&l->ref))
                return;
        if (l->ai)
                freeaddrinfo(l->ai);
        g_mutex_clear(&l->lock);
        g_cond_clear(&l->done_cond);
        g_free(l->host);
        g_free(l->service);
        g_free(l);
}

static gpointer lookup_thread(gpointer data)
{
        Lookup *l = data;
        struct addrinfo *ai = NULL;
        int rc = getaddrinfo(l->host, l->service, &l->hints, &ai);

        g_mutex_lock(&l->lock);
        l->ai = ai;
        l->rc = rc;
        l->done = true;
        g_cond_signal(&l->done_cond);
        g_mutex_unlock(&l->lock);
        g_atomic_int_dec_and_test(&pending);
        lookup_unref(l);
        return NULL;
}

int resolve_bounded(const char *host, const char *service, const struct addrinfo *hints, unsigned timeout_ms,
                    struct addrinfo **ret, int *ret_timed_out)
{
        struct addrinfo numeric = *hints;
        GThread *thread;
        Lookup *l;
        gint64 deadline;
        int rc;

        *ret = NULL;
        *ret_timed_out = 0;
        numeric.ai_flags |= AI_NUMERICHOST;
        if (getaddrinfo(host, service, &numeric, ret) == 0)
                return 0; /* an address: no name server asked */
        if (g_atomic_int_get(&pending) >= RESOLVE_MAX_PENDING) {
                *ret_timed_out = 1;
                return EAI_AGAIN; /* the earlier lookups still wait for the name server */
        }
        l = g_new0(Lookup, 1);
        l->ref = 2;
        g_mutex_init(&l->lock);
        g_cond_init(&l->done_cond);
        l->host = g_strdup(host);
        l->service = g_strdup(service);
        l->hints = *hints;
        g_atomic_int_inc(&pending);
        thread = g_thread_try_new("resolve", lookup_thread, l, NULL);
        if (!thread) {
                g_atomic_int_dec_and_test(&pending);
                l->ref = 1;
                lookup_unref(l);
                return EAI_AGAIN;
        }
        g_thread_unref(thread); /* it ends alone */
        deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
        g_mutex_lock(&l->lock);
        while (!l->done)
                if (!g_cond_wait_until(&l->done_cond, &l->lock, deadline))
                        break;
        if (l->done) {
                rc = l->rc;
                *ret = g_steal_pointer(&l->ai);
        } else {
                rc = EAI_AGAIN;
                *ret_timed_out = 1;
        }
        g_mutex_unlock(&l->lock);
        lookup_unref(l);
        return rc;
}
