/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* D-Bus server addresses as --bus-address takes them: a typo is a usage error, not a refused connection. */
#include "test-util.h"

#include "dbus-address.h"

START_TEST(test_valid)
{
        static const char *const ok[] = {
            "unix:path=/run/dbus/system_bus_socket",
            "unix:path=/tmp/dbus-fCsTzCERVn,guid=061272902086d169849162946b10c718",
            "unix:abstract=/tmp/dbus-x",
            "tcp:host=127.0.0.1,port=12345",
            "unixexec:path=ssh,argv1=-xT,argv2=host,argv3=systemd-stdio-bridge",
            "x-machine-unix:pid=1",
            "unix:path=/tmp/a;tcp:host=localhost,port=1",
            "unix:path=/tmp/with%20space",
            "unix:path=/tmp/a;",
            "autolaunch:",
            "unixexec:path=ssh,argv1=-xT,argv2=--,argv3=host,argv4=systemd-stdio-bridge,argv5=--machine=foo",
            "unix:path=/tmp/my bus",
            "unix:path=/tmp/caf\xc3\xa9",
            "kernel:",
            "x-machine-unix:machine=foo",
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(ok); i++)
                ck_assert_msg(dbus_address_valid(ok[i]), "%s refused", ok[i]);
}
END_TEST

START_TEST(test_invalid)
{
        static const char *const bad[] = {
            "",
            "garbage",
            ":path=/x",
            "unix:path",
            "unix:path=",
            "unix:=x",
            "unix:path=/x,",
            "unix:path=/a\tb",
            "unix:path=/x%zz",
            "unix:path=/x%2",
            "1unix:path=/x",
            ";",
            "unix:path=/x\n",
            "unix:path=/x,,guid=1",
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++)
                ck_assert_msg(!dbus_address_valid(bad[i]), "'%s' accepted", bad[i]);
        ck_assert(!dbus_address_valid(NULL));
}
END_TEST

static Suite *make_suite(void)
{
        Suite *s = suite_create("dbus address");
        TCase *tc = tcase_create("syntax");

        tcase_add_test(tc, test_valid);
        tcase_add_test(tc, test_invalid);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(make_suite)
