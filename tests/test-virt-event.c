/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-util.h"
#include "virt-event.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * libvirt takes one event implementation per process. Check forks each test by default (each child
 * registers on its own base) but runs all of them in one process with CK_FORK=no: one static base,
 * created and registered on first use, serves both.
 */
static struct event_base *shared_base;

static struct event_base *test_base(void)
{
        if (!shared_base) {
                shared_base = event_base_new();
                ck_assert_ptr_nonnull(shared_base);
                ck_assert_int_eq(virt_event_register(shared_base), 0);
        }
        return shared_base;
}

/* Runs one iteration without blocking (NONBLOCK alone loops while a frequency-0 timeout stays due). */
static void loop_once(void)
{
        ck_assert_int_ge(event_base_loop(test_base(), EVLOOP_ONCE | EVLOOP_NONBLOCK), 0);
}

static void tick(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        (void)arg;
}

/* Runs the base until *flag is set or ms of wall time passed. Returns *flag. */
static bool loop_until(const bool *flag, unsigned ms)
{
        struct event_base *base = test_base();
        /* EVLOOP_ONCE blocks until something fires: a 5 ms tick bounds each wait. */
        struct event *t = event_new(base, -1, EV_PERSIST, tick, NULL);
        struct timeval tv = {0, 5000};
        gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

        event_add(t, &tv);
        while (!*flag && g_get_monotonic_time() < end)
                ck_assert_int_ge(event_base_loop(base, EVLOOP_ONCE), 0);
        event_free(t);
        return *flag;
}

/* Runs the base for ms of wall time. */
static void loop_for(unsigned ms)
{
        bool never = false;

        loop_until(&never, ms);
}

/* Runs at most max_iterations until both counts are back to the given ones. Returns iterations used,
 * or -1. */
static int loop_until_counts(unsigned handles, unsigned timeouts, int max_iterations)
{
        for (int i = 0; i <= max_iterations; i++) {
                if (virt_event_handle_count() == handles && virt_event_timeout_count() == timeouts)
                        return i;
                loop_once();
        }
        return -1;
}

/* ---- registration ---- */

START_TEST(test_register_once)
{
        test_base();
        ck_assert_int_eq(virt_event_register(test_base()), -EALREADY);
        ck_assert_int_eq(virt_event_register(NULL), -EINVAL);
        ck_assert_uint_eq(virt_event_handle_count(), 0);
        ck_assert_uint_eq(virt_event_timeout_count(), 0);
}
END_TEST

START_TEST(test_register_after_other_impl)
{
        pid_t pid;
        int status;

        /* Needs a process where nothing is registered yet: a child of one (the first test with CK_FORK=no).
         */
        if (shared_base)
                return;
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct event_base *b = event_base_new();
                int null = open("/dev/null", O_WRONLY);

                dup2(null, STDERR_FILENO); /* libvirt warns that it ignores the second implementation */
                if (!b || virEventRegisterDefaultImpl() < 0)
                        _exit(2);
                _exit(virt_event_register(b) == -EBUSY && virt_event_timeout_count() == 0 ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* ---- timeouts ---- */

typedef struct {
        int id;
        unsigned fired;
        unsigned want; /* reached is set once fired gets there */
        bool reached;
        bool freed;
        bool freed_in_remove;
        bool in_remove;
        bool remove_self; /* the callback removes its own timeout */
        int peer;         /* when > 0, the callback removes this timeout */
} Timer;

static void timer_cb(int id, void *opaque)
{
        Timer *t = opaque;

        ck_assert_int_eq(id, t->id);
        t->fired++;
        if (t->want && t->fired >= t->want)
                t->reached = true;
        if (t->remove_self) {
                t->in_remove = true;
                ck_assert_int_eq(virEventRemoveTimeout(id), 0);
                t->in_remove = false;
                ck_assert(!t->freed);
                /* Removed timeouts are unknown ids. */
                ck_assert_int_eq(virEventRemoveTimeout(id), -1);
        }
        if (t->peer > 0) {
                ck_assert_int_eq(virEventRemoveTimeout(t->peer), 0);
                t->peer = 0;
        }
}

static void timer_free(void *opaque)
{
        Timer *t = opaque;

        if (t->in_remove)
                t->freed_in_remove = true;
        t->freed = true;
}

START_TEST(test_timeout_frequencies)
{
        Timer t = {0};
        unsigned before = (test_base(), virt_event_timeout_count());
        gint64 start;

        t.id = virEventAddTimeout(10, timer_cb, &t, timer_free);
        ck_assert_int_gt(t.id, 0);
        ck_assert_uint_eq(virt_event_timeout_count(), before + 1);

        /* 10 ms repeating: fires again and again, but not on every iteration. libevent's default clock is
         * CLOCK_MONOTONIC_COARSE, one kernel tick of resolution (10 ms at HZ=100), and it arms from the
         * time it cached at the loop's last wake-up: the first firing may come up to a tick early against
         * g_get_monotonic_time(), so 4 firings take at least 2 periods (an ASan run saw 28.7 ms, not 30). */
        t.want = 4;
        start = g_get_monotonic_time();
        ck_assert(loop_until(&t.reached, 5000));
        ck_assert_int_ge(g_get_monotonic_time() - start, 2 * 10000);

        /* 0: once on each iteration. */
        virEventUpdateTimeout(t.id, 0);
        t.fired = 0;
        for (int i = 0; i < 5; i++)
                loop_once();
        ck_assert_uint_eq(t.fired, 5);

        /* -1: never. */
        virEventUpdateTimeout(t.id, -1);
        t.fired = 0;
        for (int i = 0; i < 5; i++)
                loop_once();
        loop_for(30);
        ck_assert_uint_eq(t.fired, 0);

        /* Back on: a period counts from the update. */
        virEventUpdateTimeout(t.id, 200);
        loop_once();
        ck_assert_uint_eq(t.fired, 0);
        t.want = 1;
        t.reached = false;
        ck_assert(loop_until(&t.reached, 5000));

        /* Remove: the free callback runs on a later iteration, not inside remove. */
        virEventUpdateTimeout(t.id, 0);
        t.in_remove = true;
        ck_assert_int_eq(virEventRemoveTimeout(t.id), 0);
        t.in_remove = false;
        ck_assert(!t.freed);
        ck_assert_int_eq(virEventRemoveTimeout(t.id), -1);
        virEventUpdateTimeout(t.id, 0); /* unknown id: ignored */
        t.fired = 0;
        loop_once();
        ck_assert(t.freed);
        ck_assert(!t.freed_in_remove);
        ck_assert_uint_eq(t.fired, 0);
        ck_assert_uint_eq(virt_event_timeout_count(), before);
}
END_TEST

START_TEST(test_timeout_ids)
{
        Timer a = {0}, b = {0};

        test_base();
        a.id = virEventAddTimeout(-1, timer_cb, &a, NULL);
        b.id = virEventAddTimeout(-1, timer_cb, &b, NULL);
        ck_assert_int_gt(a.id, 0);
        ck_assert_int_gt(b.id, a.id);
        ck_assert_int_eq(virEventRemoveTimeout(0), -1);
        ck_assert_int_eq(virEventRemoveTimeout(-5), -1);
        ck_assert_int_eq(virEventRemoveTimeout(a.id), 0);
        ck_assert_int_eq(virEventRemoveTimeout(b.id), 0);
        loop_once();
        ck_assert_uint_eq(virt_event_timeout_count(), 0);
}
END_TEST

START_TEST(test_timeout_removes_itself)
{
        Timer t = {.remove_self = true};
        unsigned before = (test_base(), virt_event_timeout_count());

        t.id = virEventAddTimeout(0, timer_cb, &t, timer_free);
        ck_assert_int_gt(t.id, 0);
        loop_once();
        ck_assert_uint_eq(t.fired, 1);
        ck_assert(!t.freed_in_remove);
        /* The free callback needs (at most) one more iteration, and nothing fires again. */
        loop_once();
        loop_once();
        ck_assert(t.freed);
        ck_assert_uint_eq(t.fired, 1);
        ck_assert_uint_eq(virt_event_timeout_count(), before);
}
END_TEST

START_TEST(test_timeouts_remove_each_other)
{
        Timer a = {0}, b = {0};
        Timer *survivor, *removed;

        test_base();
        /* Both are due in the same iteration; whichever runs first removes the other, which must not run. */
        a.id = virEventAddTimeout(0, timer_cb, &a, timer_free);
        b.id = virEventAddTimeout(0, timer_cb, &b, timer_free);
        a.peer = b.id;
        b.peer = a.id;
        loop_once();
        ck_assert_uint_eq(a.fired + b.fired, 1);
        survivor = a.fired ? &a : &b;
        removed = a.fired ? &b : &a;
        loop_once();
        loop_once();
        ck_assert(removed->freed);
        ck_assert_uint_eq(removed->fired, 0);
        ck_assert(!survivor->freed);
        ck_assert_uint_eq(survivor->fired, 3);
        ck_assert_int_eq(virEventRemoveTimeout(survivor->id), 0);
        loop_once();
        ck_assert(survivor->freed);
        ck_assert_uint_eq(survivor->fired, 3);
        ck_assert_uint_eq(virt_event_timeout_count(), 0);
}
END_TEST

/* A timeout callback that adds a timeout and updates another; the added one is live at once. */
typedef struct {
        int id;
        int added;
        int updated;
        Timer *child;
} Spawner;

static void spawn_cb(int id, void *opaque)
{
        Spawner *s = opaque;

        (void)id;
        if (s->added)
                return;
        s->added = virEventAddTimeout(0, timer_cb, s->child, timer_free);
        s->child->id = s->added;
        virEventUpdateTimeout(s->updated, 0);
        virEventUpdateTimeout(s->id, -1);
}

START_TEST(test_timeout_adds_from_callback)
{
        Timer child = {0}, other = {0};
        Spawner s = {.child = &child};

        test_base();
        other.id = virEventAddTimeout(-1, timer_cb, &other, timer_free);
        s.updated = other.id;
        s.id = virEventAddTimeout(0, spawn_cb, &s, NULL);
        loop_once();
        ck_assert_int_gt(s.added, 0);
        loop_once();
        loop_once();
        ck_assert_uint_eq(child.fired, 2);
        ck_assert_uint_eq(other.fired, 2);
        ck_assert_int_eq(virEventRemoveTimeout(s.id), 0);
        ck_assert_int_eq(virEventRemoveTimeout(child.id), 0);
        ck_assert_int_eq(virEventRemoveTimeout(other.id), 0);
        loop_once();
        ck_assert(child.freed && other.freed);
        ck_assert_uint_eq(virt_event_timeout_count(), 0);
}
END_TEST

/* ---- handles ---- */

typedef struct {
        int watch;
        int fd;
        unsigned fired;
        int last_events;
        bool freed;
        bool in_remove;
        bool freed_in_remove;
        bool remove_self;
        bool close_on_free; /* like libvirt's sockets: the free callback closes the fd */
} Watch;

static void watch_cb(int watch, int fd, int events, void *opaque)
{
        Watch *w = opaque;

        ck_assert_int_eq(watch, w->watch);
        ck_assert_int_eq(fd, w->fd);
        w->fired++;
        w->last_events = events;
        if (w->remove_self) {
                w->in_remove = true;
                ck_assert_int_eq(virEventRemoveHandle(watch), 0);
                w->in_remove = false;
                ck_assert(!w->freed);
        }
}

static void watch_free(void *opaque)
{
        Watch *w = opaque;

        if (w->in_remove)
                w->freed_in_remove = true;
        w->freed = true;
        if (w->close_on_free)
                close(w->fd);
}

static void pipe_new(int fds[2])
{
        ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
}

START_TEST(test_handle_readable)
{
        Watch w = {0};
        int p[2];
        unsigned before = (test_base(), virt_event_handle_count());

        pipe_new(p);
        w.fd = p[0];
        w.watch = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, watch_cb, &w, watch_free);
        ck_assert_int_gt(w.watch, 0);
        ck_assert_uint_eq(virt_event_handle_count(), before + 1);

        loop_once();
        ck_assert_uint_eq(w.fired, 0);

        ck_assert_int_eq(write(p[1], "x", 1), 1);
        loop_once();
        ck_assert_uint_eq(w.fired, 1);
        ck_assert_int_eq(w.last_events, VIR_EVENT_HANDLE_READABLE);
        /* Persistent and level-triggered: still unread, fires again. */
        loop_once();
        ck_assert_uint_eq(w.fired, 2);

        /* Mask 0: nothing. */
        virEventUpdateHandle(w.watch, 0);
        w.fired = 0;
        for (int i = 0; i < 3; i++)
                loop_once();
        loop_for(20);
        ck_assert_uint_eq(w.fired, 0);

        /* And back. */
        virEventUpdateHandle(w.watch, VIR_EVENT_HANDLE_READABLE);
        loop_once();
        ck_assert_uint_eq(w.fired, 1);

        /* Remove: no more callbacks, free callback later. */
        w.in_remove = true;
        ck_assert_int_eq(virEventRemoveHandle(w.watch), 0);
        w.in_remove = false;
        ck_assert(!w.freed);
        ck_assert_int_eq(virEventRemoveHandle(w.watch), -1);
        virEventUpdateHandle(w.watch, VIR_EVENT_HANDLE_READABLE); /* unknown id: ignored */
        loop_once();
        ck_assert(w.freed);
        ck_assert(!w.freed_in_remove);
        ck_assert_uint_eq(w.fired, 1);
        ck_assert_uint_eq(virt_event_handle_count(), before);
        close(p[0]);
        close(p[1]);
}
END_TEST

START_TEST(test_handle_writable_and_hangup)
{
        Watch wr = {0}, rd = {0};
        int p[2];

        test_base();
        pipe_new(p);
        wr.fd = p[1];
        wr.watch = virEventAddHandle(p[1], VIR_EVENT_HANDLE_WRITABLE, watch_cb, &wr, NULL);
        rd.fd = p[0];
        rd.watch = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, watch_cb, &rd, NULL);
        ck_assert_int_gt(rd.watch, wr.watch);
        loop_once();
        ck_assert_uint_eq(wr.fired, 1);
        ck_assert_int_eq(wr.last_events, VIR_EVENT_HANDLE_WRITABLE);
        ck_assert_uint_eq(rd.fired, 0);

        /* The writer goes away: the reader sees HANGUP (like libvirt's own poll loop reports it). */
        ck_assert_int_eq(virEventRemoveHandle(wr.watch), 0);
        loop_once();
        close(p[1]);
        loop_once();
        ck_assert_uint_eq(rd.fired, 1);
        ck_assert(rd.last_events & VIR_EVENT_HANDLE_HANGUP);
        ck_assert_int_eq(virEventRemoveHandle(rd.watch), 0);
        loop_once();
        ck_assert_uint_eq(virt_event_handle_count(), 0);
        close(p[0]);
}
END_TEST

START_TEST(test_handle_removes_itself)
{
        Watch w = {.remove_self = true, .close_on_free = true};
        int p[2];

        test_base();
        pipe_new(p);
        w.fd = p[0];
        w.watch = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, watch_cb, &w, watch_free);
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        loop_once();
        ck_assert_uint_eq(w.fired, 1);
        ck_assert(!w.freed_in_remove);
        loop_once();
        loop_once();
        ck_assert(w.freed);
        ck_assert_uint_eq(w.fired, 1);
        ck_assert_uint_eq(virt_event_handle_count(), 0);
        close(p[1]);
}
END_TEST

/* ---- libvirt itself: the test driver's lifecycle events go through the bridge ---- */

typedef struct {
        const char *name;
        int callback_id;
        bool started;
        bool stopped;
        bool freed;
} Lifecycle;

static int lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
        Lifecycle *l = opaque;

        (void)conn;
        (void)detail;
        if (strcmp(virDomainGetName(dom), l->name) != 0)
                return 0;
        if (event == VIR_DOMAIN_EVENT_STARTED)
                l->started = true;
        else if (event == VIR_DOMAIN_EVENT_STOPPED)
                l->stopped = true;
        return 0;
}

static void lifecycle_free(void *opaque)
{
        ((Lifecycle *)opaque)->freed = true;
}

static virDomainPtr domain_start(virConnectPtr conn, const char *name)
{
        g_autofree char *xml = g_strdup_printf("<domain type='test'><name>%s</name><memory>65536</memory>"
                                               "<vcpu>2</vcpu><os><type>hvm</type></os></domain>",
                                               name);
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);

        ck_assert_msg(dom, "virDomainCreateXML: %s", virGetLastErrorMessage());
        return dom;
}

START_TEST(test_libvirt_lifecycle)
{
        Lifecycle l = {.name = "vt1", .callback_id = -1};
        unsigned handles = (test_base(), virt_event_handle_count());
        unsigned timeouts = virt_event_timeout_count();
        virConnectPtr conn = virConnectOpen("test:///default");
        virDomainPtr dom;
        int cb, iterations;

        ck_assert_msg(conn, "virConnectOpen: %s", virGetLastErrorMessage());
        cb = virConnectDomainEventRegisterAny(conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                              VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb), &l, lifecycle_free);
        ck_assert_int_ge(cb, 0);
        /* The test driver flushes its event queue from a timeout of ours. */
        ck_assert_uint_gt(virt_event_timeout_count(), timeouts);

        dom = domain_start(conn, l.name);
        ck_assert(!l.started); /* queued, not delivered from inside the API call */
        ck_assert(loop_until(&l.started, 5000));

        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(loop_until(&l.stopped, 5000));
        virDomainFree(dom);

        ck_assert_int_eq(virConnectDomainEventDeregisterAny(conn, cb), 0);
        ck_assert(l.freed);
        ck_assert_int_eq(virConnectClose(conn), 0);
        iterations = loop_until_counts(handles, timeouts, 10);
        ck_assert_int_ge(iterations, 0);
        ck_assert_int_le(iterations, 1);
}
END_TEST

/* Deregistering from inside the event callback makes libvirt remove its flush timer from inside that
 * timer's own callback. */
static int lifecycle_deregister_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
        Lifecycle *l = opaque;

        lifecycle_cb(conn, dom, event, detail, opaque);
        if (l->stopped && l->callback_id >= 0) {
                ck_assert_int_eq(virConnectDomainEventDeregisterAny(conn, l->callback_id), 0);
                l->callback_id = -1;
        }
        return 0;
}

START_TEST(test_libvirt_deregister_in_callback)
{
        Lifecycle l = {.name = "vt2", .callback_id = -1};
        unsigned handles = (test_base(), virt_event_handle_count());
        unsigned timeouts = virt_event_timeout_count();
        virConnectPtr conn = virConnectOpen("test:///default");
        virDomainPtr dom;

        ck_assert_msg(conn, "virConnectOpen: %s", virGetLastErrorMessage());
        l.callback_id = virConnectDomainEventRegisterAny(conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                                         VIR_DOMAIN_EVENT_CALLBACK(lifecycle_deregister_cb),
                                                         &l, lifecycle_free);
        ck_assert_int_ge(l.callback_id, 0);
        dom = domain_start(conn, l.name);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        virDomainFree(dom);
        /* Both events are queued: one flush delivers them, and the callback goes away inside it. */
        ck_assert(loop_until(&l.freed, 5000));
        ck_assert(l.started && l.stopped);
        ck_assert_int_eq(l.callback_id, -1);
        ck_assert_int_eq(virConnectClose(conn), 0);
        ck_assert_int_ge(loop_until_counts(handles, timeouts, 10), 0);
}
END_TEST

/* ---- a keepalive's timeout ---- */

static void count_cb(int id, void *opaque)
{
        (void)id;
        g_atomic_int_inc((gint *)opaque);
}

/* A call blocked in the loop thread on a libvirtd that stopped answering holds the loop: the keepalive's
 * timeout, which sends the pings and ends that call once they go unanswered, must fire all the same.
 * Another timeout waits for the loop. */
START_TEST(test_keepalive_fires_while_loop_held)
{
        gint keepalive = 0, other = 0;
        unsigned handles = (test_base(), virt_event_handle_count());
        unsigned before = virt_event_timeout_count();
        int ka, id;

        virt_event_keepalive_begin();
        ka = virEventAddTimeout(100, count_cb, &keepalive, NULL);
        virt_event_keepalive_end();
        id = virEventAddTimeout(100, count_cb, &other, NULL);
        ck_assert_int_gt(ka, 0);
        ck_assert_int_gt(id, 0);

        /* the loop thread held for 2.5 s: no iteration runs */
        g_usleep(2500 * 1000);
        ck_assert_msg(g_atomic_int_get(&keepalive) >= 1,
                      "a keepalive's 100 ms timeout did not fire in 2.5 s while the loop was held");
        ck_assert_int_eq(g_atomic_int_get(&other), 0);

        /* the loop runs again: both are its own again, the keepalive's not fired twice as often */
        g_atomic_int_set(&keepalive, 0);
        loop_for(1000);
        ck_assert_int_ge(g_atomic_int_get(&other), 5);
        ck_assert_int_le(g_atomic_int_get(&keepalive), g_atomic_int_get(&other) + 1);

        /* disabled: fired by nobody */
        virEventUpdateTimeout(ka, -1);
        loop_once();
        g_atomic_int_set(&keepalive, 0);
        g_usleep(1500 * 1000);
        ck_assert_int_eq(g_atomic_int_get(&keepalive), 0);

        ck_assert_int_eq(virEventRemoveTimeout(ka), 0);
        ck_assert_int_eq(virEventRemoveTimeout(id), 0);
        ck_assert_int_ge(loop_until_counts(handles, before, 10), 0);
}
END_TEST

static Suite *virt_event_suite(void)
{
        Suite *s = suite_create("virt-event");
        TCase *tc = tcase_create("core");

        /* the keepalive's case holds the loop for seconds: more than Check's default 4 s in all */
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_register_after_other_impl);
        tcase_add_test(tc, test_register_once);
        tcase_add_test(tc, test_timeout_frequencies);
        tcase_add_test(tc, test_timeout_ids);
        tcase_add_test(tc, test_timeout_removes_itself);
        tcase_add_test(tc, test_timeouts_remove_each_other);
        tcase_add_test(tc, test_timeout_adds_from_callback);
        tcase_add_test(tc, test_handle_readable);
        tcase_add_test(tc, test_handle_writable_and_hangup);
        tcase_add_test(tc, test_handle_removes_itself);
        tcase_add_test(tc, test_libvirt_lifecycle);
        tcase_add_test(tc, test_libvirt_deregister_in_callback);
        tcase_add_test(tc, test_keepalive_fires_while_loop_held);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(virt_event_suite)
