/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* polkit: a question that cannot be asked is refused, saying whose and what. */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "polkit.h"
#include "test-util.h"

static int never_allowed(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        (void)msg;
        (void)userdata;
        (void)error;
        ck_abort_msg("a call polkit was not asked about ran");
        return 0;
}

/* A bus on one end of a socket pair (fds) nobody answers on, and a Rebalance call from ":1.42" on it. */
static sd_bus *bus_on_socket(int fds[2], sd_bus_message **ret_msg)
{
        sd_bus *bus = NULL;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        ck_assert_int_ge(sd_bus_message_new_method_call(bus, ret_msg, "org.placementd1", "/org/placementd1",
                                                        "org.placementd1.Manager", "Rebalance"),
                         0);
        ck_assert_int_ge(sd_bus_message_set_sender(*ret_msg, ":1.42"), 0);
        return bus;
}

/* The bus is gone by the time polkit would be asked: the call is refused with the caller's uid and what
 * it wanted, and nothing is left in flight. */
START_TEST(test_bus_gone)
{
        sd_bus *bus;
        sd_bus_message *msg = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        Polkit *p = polkit_new();
        int fds[2];
        int r;

        bus = bus_on_socket(fds, &msg);
        sd_bus_close(bus);

        r = polkit_authorize(p, msg, 1000, "org.placementd1.rebalance", "rebalance domains", never_allowed,
                             NULL, &error);
        ck_assert_int_lt(r, 0);
        ck_assert_str_eq(error.name, "org.placementd1.Error.NotPermitted");
        ck_assert_msg(strstr(error.message, "uid 1000 may rebalance domains"), "%s", error.message);

        sd_bus_error_free(&error);
        sd_bus_message_unref(msg);
        sd_bus_flush_close_unref(bus);
        close(fds[1]);
        polkit_free(p);
}
END_TEST

/* A question in flight when the daemon leaves the bus (it went, or the daemon stops): dropped with its
 * call, which holds the bus, so that the connection left is freed (the leak checkers of the asan and
 * valgrind runs see what stays). */
START_TEST(test_in_flight_dropped)
{
        sd_bus *bus;
        sd_bus_message *msg = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        Polkit *p = polkit_new();
        int fds[2];

        bus = bus_on_socket(fds, &msg);

        /* queued for a bus that never answers: the question waits */
        ck_assert_int_eq(polkit_authorize(p, msg, 1000, "org.placementd1.rebalance", "rebalance domains",
                                          never_allowed, NULL, &error),
                         1);
        ck_assert(!sd_bus_error_is_set(&error));
        polkit_free(p);
        sd_bus_message_unref(msg);
        sd_bus_close_unref(bus);
        close(fds[1]);
}
END_TEST

static Suite *make_suite(void)
{
        Suite *s = suite_create("polkit");
        TCase *tc = tcase_create("ask");

        tcase_add_test(tc, test_bus_gone);
        tcase_add_test(tc, test_in_flight_dropped);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(make_suite)
