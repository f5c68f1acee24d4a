/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A rogue polkit: owns org.freedesktop.PolicyKit1 on the bus at argv[1] and authorizes every question, as
 * anyone may where the bus lets any user own any name (a session bus, a private --bus-address bus). Run as
 * an unprivileged user (tests/dbus/run.sh): placementd must not take its word. Prints "ready" once it
 * owns the name, and one line per question it answered.
 */
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

static int check_authorization(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        sd_bus_message *reply = NULL;
        int r;

        (void)userdata;
        (void)error;
        r = sd_bus_message_new_method_return(m, &reply);
        /* (is_authorized, is_challenge, details) */
        if (r >= 0)
                r = sd_bus_message_append(reply, "(bba{ss})", 1, 0, 0);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        printf("answered yes\n");
        fflush(stdout);
        return r;
}

static const sd_bus_vtable authority[] = {SD_BUS_VTABLE_START(0),
                                          SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us",
                                                        "(bba{ss})", check_authorization,
                                                        SD_BUS_VTABLE_UNPRIVILEGED),
                                          SD_BUS_VTABLE_END};

int main(int argc, char **argv)
{
        sd_bus *bus = NULL;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: rogue-polkit BUS-ADDRESS\n");
                return 2;
        }
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, argv[1]);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/PolicyKit1/Authority",
                                             "org.freedesktop.PolicyKit1.Authority", authority, NULL);
        if (r >= 0)
                r = sd_bus_request_name(bus, "org.freedesktop.PolicyKit1", 0);
        if (r < 0) {
                fprintf(stderr, "rogue-polkit: %s\n", strerror(-r));
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return 1;
                if (r == 0 && sd_bus_wait(bus, (uint64_t)-1) < 0)
                        return 1;
        }
}
