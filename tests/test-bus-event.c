/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus-event: a client that queues many calls cannot hold the loop. A forked client on a socketpair
 * (a direct D-Bus connection, no bus daemon) writes 200 calls before the server reads any of them; a
 * zero-delay timer armed while the first of them are processed must run within two batches.
 */
#include <event2/event.h>
#include <glib.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bus-event.h"
#include "test-util.h"

#define CALLS 200u

typedef struct Server {
        struct event_base *base;
        struct event *timer;
        unsigned calls, calls_when_timer_ran;
        bool timer_ran;
        int ready_fd; /* the client writes a byte once all its calls are on the socket */
} Server;

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
        Server *s = arg;
        (void)fd;
        (void)what;
        s->timer_ran = true;
        s->calls_when_timer_ran = s->calls;
}

static int method_sync(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Server *s = userdata;
        char byte;
        int r = sd_bus_reply_method_return(m, NULL);
        (void)error;

        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_flush(sd_bus_message_get_bus(m)), 0);
        /* every call is on the socket now: from here only the loop decides when they run */
        ck_assert_int_eq(read(s->ready_fd, &byte, 1), 1);
        struct timeval zero = {0, 0};
        evtimer_add(s->timer, &zero);
        return 1;
}

static int method_ping(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Server *s = userdata;
        (void)error;
        if (++s->calls == CALLS)
                event_base_loopexit(s->base, NULL);
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Sync", "", "", method_sync, 0),
    SD_BUS_METHOD("Ping", "", "", method_ping, 0),
    SD_BUS_VTABLE_END,
};

static int on_ping_reply(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        unsigned *replies = userdata;
        (void)m;
        (void)error;
        (*replies)++;
        return 0;
}

static void run_client(int fd, int ready_fd)
{
        sd_bus *bus = NULL;
        unsigned replies = 0;

        if (sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, fd, fd) < 0 || sd_bus_start(bus) < 0 ||
            sd_bus_call_method(bus, NULL, "/t", "t.T", "Sync", NULL, NULL, "") < 0)
                _exit(1);
        for (unsigned i = 0; i < CALLS; i++)
                if (sd_bus_call_method_async(bus, NULL, NULL, "/t", "t.T", "Ping", on_ping_reply, &replies,
                                             "") < 0)
                        _exit(1);
        if (sd_bus_flush(bus) < 0 || write(ready_fd, "x", 1) != 1)
                _exit(1);
        while (replies < CALLS)
                if (sd_bus_process(bus, NULL) == 0 && sd_bus_wait(bus, 10 * 1000000ull) <= 0)
                        _exit(1);
        _exit(0);
}

START_TEST(test_one_batch_per_turn)
{
        int sv[2], ready[2], status;
        Server s = {0};
        sd_bus *bus = NULL;
        sd_id128_t id;
        BusEvent *be;
        pid_t pid;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(pipe(ready), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(sv[0]);
                close(ready[0]);
                run_client(sv[1], ready[1]);
        }
        close(sv[1]);
        close(ready[1]);
        s.ready_fd = ready[0];
        s.base = event_base_new();
        s.timer = evtimer_new(s.base, on_timer, &s);
        ck_assert_int_ge(sd_id128_randomize(&id), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, sv[0], sv[0]), 0);
        ck_assert_int_ge(sd_bus_set_server(bus, 1, id), 0);
        ck_assert_int_ge(sd_bus_set_anonymous(bus, 1), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        ck_assert_int_ge(sd_bus_add_object_vtable(bus, NULL, "/t", "t.T", vtable, &s), 0);
        be = bus_event_attach(bus, s.base, NULL, NULL);
        ck_assert_ptr_nonnull(be);

        ck_assert_int_eq(event_base_dispatch(s.base), 0);
        ck_assert_uint_eq(s.calls, CALLS);
        /* armed during the first turn, the timer runs in the next one: after at most one more batch,
         * never after the whole queue */
        ck_assert_msg(s.timer_ran && s.calls_when_timer_ran <= 2 * BUS_EVENT_BATCH,
                      "a zero-delay timer ran %s %u of %u queued calls",
                      s.timer_ran ? "after" : "not even after",
                      s.timer_ran ? s.calls_when_timer_ran : s.calls, CALLS);

        sd_bus_flush(bus);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        bus_event_detach(be);
        sd_bus_flush_close_unref(bus);
        event_free(s.timer);
        event_base_free(s.base);
        close(ready[0]);
}
END_TEST

static Suite *bus_event_suite(void)
{
        Suite *s = suite_create("bus-event");
        TCase *tc = tcase_create("fairness");
        tcase_add_test(tc, test_one_batch_per_turn);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(bus_event_suite)
