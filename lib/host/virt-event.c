/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libvirt's event implementation is process-global: virEventRegisterImpl() takes six plain function
 * pointers, no user data, and keeps the first set it is given. So the records behind those functions,
 * and the event_base they are armed on, live in one static registry below.
 *
 * Rules libvirt needs (and that its own poll and GLib loops follow):
 * - a removed handle or timeout never fires again, but its record stays allocated until the zero-delay
 *   cleanup timer runs: callbacks may remove (or update) themselves or each other, and the free
 *   callback (ff) must run later from a clean stack, because libvirt calls remove with its own locks
 *   held and ff often drops the last reference to the object that owns them;
 * - timeouts: -1 (any negative) is disabled, 0 fires once per loop iteration, N > 0 every N ms;
 *   every update restarts the period from now;
 * - handles: a mask of 0 (or only ERROR/HANGUP, which libevent cannot wait for alone) watches nothing.
 *   When libevent reports the fd, poll() with a zero timeout tells what it is exactly, so libvirt gets
 *   HANGUP and ERROR like from its own poll loop.
 */
#include "virt-event.h"

#include <errno.h>
#include <event2/event.h>
#include <glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>

typedef struct {
        int id;
        bool is_handle;
        bool removed;
        int fd;        /* handles */
        int events;    /* handles: VIR_EVENT_HANDLE_* asked for */
        int frequency; /* timeouts: < 0 disabled, 0 every iteration, N ms */
        virEventHandleCallback handle_cb;
        virEventTimeoutCallback timeout_cb;
        void *opaque;
        virFreeCallback ff;
        struct event *ev;
} Record;

static struct {
        struct event_base *base;
        struct event *cleanup; /* zero-delay timer: releases the records in removed */
        GHashTable *handles;   /* id -> Record, live ones only */
        GHashTable *timeouts;
        GPtrArray *removed; /* Records waiting for their free callback */
        int last_handle_id;
        int last_timeout_id;
        unsigned n_handles; /* not yet released, live or removed */
        unsigned n_timeouts;
} reg;

static const struct timeval zero_delay = {0, 0};

static Record *record_lookup(GHashTable *table, int id)
{
        return table ? g_hash_table_lookup(table, GINT_TO_POINTER(id)) : NULL;
}

static void record_release(Record *r)
{
        if (r->is_handle)
                reg.n_handles--;
        else
                reg.n_timeouts--;
        event_free(r->ev);
        g_free(r);
}

/* Disarms r and queues it for the cleanup timer, which calls its free callback. */
static void record_retire(Record *r)
{
        r->removed = true;
        event_del(r->ev);
        g_ptr_array_add(reg.removed, r);
        evtimer_add(reg.cleanup, &zero_delay);
}

static void cleanup_dispatch(evutil_socket_t fd, short what, void *arg)
{
        GPtrArray *batch = reg.removed;

        (void)fd;
        (void)what;
        (void)arg;
        /* Free callbacks may remove more records: those go to a new batch and the next iteration. */
        reg.removed = g_ptr_array_new();
        for (guint i = 0; i < batch->len; i++) {
                Record *r = g_ptr_array_index(batch, i);
                if (r->ff)
                        r->ff(r->opaque);
                record_release(r);
        }
        g_ptr_array_unref(batch);
}

static short handle_flags(int events)
{
        short flags = EV_PERSIST;

        if (events & VIR_EVENT_HANDLE_READABLE)
                flags |= EV_READ;
        if (events & VIR_EVENT_HANDLE_WRITABLE)
                flags |= EV_WRITE;
        return flags;
}

/* Returns the VIR_EVENT_HANDLE_* mask that is ready on fd now, given the libevent flags that fired. */
static int handle_ready(int fd, int events, short what)
{
        struct pollfd p = {.fd = fd};
        int rc, ready = 0;

        if (events & VIR_EVENT_HANDLE_READABLE)
                p.events |= POLLIN;
        if (events & VIR_EVENT_HANDLE_WRITABLE)
                p.events |= POLLOUT;
        do
                rc = poll(&p, 1, 0);
        while (rc < 0 && errno == EINTR);
        if (rc < 0) {
                /* Cannot tell more than libevent did. */
                if (what & EV_READ)
                        ready |= VIR_EVENT_HANDLE_READABLE;
                if (what & EV_WRITE)
                        ready |= VIR_EVENT_HANDLE_WRITABLE;
                return ready & events;
        }
        if (p.revents & POLLIN)
                ready |= VIR_EVENT_HANDLE_READABLE;
        if (p.revents & POLLOUT)
                ready |= VIR_EVENT_HANDLE_WRITABLE;
        if (p.revents & (POLLERR | POLLNVAL))
                ready |= VIR_EVENT_HANDLE_ERROR;
        if (p.revents & POLLHUP)
                ready |= VIR_EVENT_HANDLE_HANGUP;
        return ready;
}

static void handle_dispatch(evutil_socket_t fd, short what, void *arg)
{
        Record *r = arg;
        int ready;

        if (r->removed)
                return;
        ready = handle_ready(fd, r->events, what);
        /* Nothing ready any more: an earlier callback of this iteration consumed it. */
        if (ready)
                r->handle_cb(r->id, fd, ready, r->opaque);
}

/* (Re)arms a handle for its current mask. Returns 0 or -1. */
static int handle_arm(Record *r)
{
        short flags = handle_flags(r->events);

        event_del(r->ev);
        if (event_assign(r->ev, reg.base, r->fd, flags, handle_dispatch, r) < 0)
                return -1;
        if (!(flags & (EV_READ | EV_WRITE)))
                return 0;
        return event_add(r->ev, NULL);
}

static int handle_add(int fd, int events, virEventHandleCallback cb, void *opaque, virFreeCallback ff)
{
        Record *r;

        if (fd < 0 || !cb || reg.last_handle_id == INT_MAX)
                return -1;
        r = g_new0(Record, 1);
        r->is_handle = true;
        r->fd = fd;
        r->events = events;
        r->handle_cb = cb;
        r->opaque = opaque;
        r->ff = ff;
        r->ev = event_new(reg.base, fd, handle_flags(events), handle_dispatch, r);
        if (!r->ev || handle_arm(r) < 0) {
                /* On failure libvirt frees opaque itself: do not call ff. */
                if (r->ev)
                        event_free(r->ev);
                g_free(r);
                return -1;
        }
        r->id = ++reg.last_handle_id;
        reg.n_handles++;
        g_hash_table_insert(reg.handles, GINT_TO_POINTER(r->id), r);
        return r->id;
}

static void handle_update(int id, int events)
{
        Record *r = record_lookup(reg.handles, id);

        if (!r)
                return;
        r->events = events;
        (void)handle_arm(r);
}

static int handle_remove(int id)
{
        Record *r = record_lookup(reg.handles, id);

        if (!r)
                return -1;
        g_hash_table_remove(reg.handles, GINT_TO_POINTER(id));
        record_retire(r);
        return 0;
}

static void timeout_dispatch(evutil_socket_t fd, short what, void *arg)
{
        Record *r = arg;

        (void)fd;
        (void)what;
        if (r->removed)
                return;
        /* Frequency 0: due again on the next iteration (a timer added now never fires in this one). */
        if (r->frequency == 0)
                evtimer_add(r->ev, &zero_delay);
        r->timeout_cb(r->id, r->opaque);
}

/* (Re)arms a timeout for its current frequency, counting from now. Returns 0 or -1. */
static int timeout_arm(Record *r)
{
        struct timeval tv = {0, 0};

        event_del(r->ev);
        if (event_assign(r->ev, reg.base, -1, r->frequency > 0 ? EV_PERSIST : 0, timeout_dispatch, r) < 0)
                return -1;
        if (r->frequency < 0)
                return 0;
        tv.tv_sec = r->frequency / 1000;
        tv.tv_usec = (r->frequency % 1000) * 1000;
        return event_add(r->ev, &tv);
}

static int timeout_add(int frequency, virEventTimeoutCallback cb, void *opaque, virFreeCallback ff)
{
        Record *r;

        if (!cb || reg.last_timeout_id == INT_MAX)
                return -1;
        r = g_new0(Record, 1);
        r->fd = -1;
        r->frequency = frequency;
        r->timeout_cb = cb;
        r->opaque = opaque;
        r->ff = ff;
        r->ev = evtimer_new(reg.base, timeout_dispatch, r);
        if (!r->ev || timeout_arm(r) < 0) {
                if (r->ev)
                        event_free(r->ev);
                g_free(r);
                return -1;
        }
        r->id = ++reg.last_timeout_id;
        reg.n_timeouts++;
        g_hash_table_insert(reg.timeouts, GINT_TO_POINTER(r->id), r);
        return r->id;
}

static void timeout_update(int id, int frequency)
{
        Record *r = record_lookup(reg.timeouts, id);

        if (!r)
                return;
        r->frequency = frequency;
        (void)timeout_arm(r);
}

static int timeout_remove(int id)
{
        Record *r = record_lookup(reg.timeouts, id);

        if (!r)
                return -1;
        g_hash_table_remove(reg.timeouts, GINT_TO_POINTER(id));
        record_retire(r);
        return 0;
}

static void probe_cb(int id, void *opaque)
{
        (void)id;
        (void)opaque;
}

static void registry_clear(void)
{
        g_clear_pointer(&reg.handles, g_hash_table_unref);
        g_clear_pointer(&reg.timeouts, g_hash_table_unref);
        g_clear_pointer(&reg.removed, g_ptr_array_unref);
        g_clear_pointer(&reg.cleanup, event_free);
        reg.base = NULL;
}

int virt_event_register(struct event_base *base)
{
        Record *probe;
        int id;

        if (!base)
                return -EINVAL;
        if (reg.base)
                return -EALREADY;
        reg.cleanup = evtimer_new(base, cleanup_dispatch, NULL);
        if (!reg.cleanup)
                return -ENOMEM;
        reg.base = base;
        reg.handles = g_hash_table_new(g_direct_hash, g_direct_equal);
        reg.timeouts = g_hash_table_new(g_direct_hash, g_direct_equal);
        reg.removed = g_ptr_array_new();

        virEventRegisterImpl(handle_add, handle_update, handle_remove, timeout_add, timeout_update,
                             timeout_remove);

        /* libvirt ignores a second implementation without telling: check that a timeout lands here. */
        id = virEventAddTimeout(-1, probe_cb, NULL, NULL);
        probe = id > 0 ? record_lookup(reg.timeouts, id) : NULL;
        if (!probe || probe->timeout_cb != probe_cb) {
                if (id >= 0)
                        virEventRemoveTimeout(id);
                registry_clear();
                return -EBUSY;
        }
        /* Never armed and no free callback: release it now rather than on the first iteration. */
        g_hash_table_remove(reg.timeouts, GINT_TO_POINTER(id));
        record_release(probe);
        return 0;
}

unsigned virt_event_handle_count(void)
{
        return reg.n_handles;
}

unsigned virt_event_timeout_count(void)
{
        return reg.n_timeouts;
}

static void ignore_error(void *data, virErrorPtr error)
{
        (void)data;
        (void)error;
}

void virt_errors_quiet(void)
{
        virSetErrorFunc(NULL, ignore_error);
}
