/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hostile stand-in for placementd on a private bus (tests/ctl/hostile.sh): owns org.placementd1 and
 * answers GetDecisionsJSON, Explain, GetHostMap, GetHostMapJSON, GetStatus and Rebalance (one move) with
 * the text of FILE, read again at each call, so that the client can be fed answers of the wrong shape
 * (GetDecisionsJSON and the others of one string answer a FILE that starts "error:" with a D-Bus error
 * of the rest as its message). Its ReloadError property is the text of FILE too: a status shows it.
 * While a directory FILE.d holds files, each call of the methods of one string answers the first of them
 * by name and removes it: a daemon whose domains change between two calls.
 * Prints "ready" once it owns the name. fake-daemon ADDRESS FILE
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

static const char *answer_file;

/* The next answer queued in FILE.d (removed once read), or NULL. */
static char *queued_answer(void)
{
        g_autofree char *dir = g_strdup_printf("%s.d", answer_file);
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        g_autofree char *first = NULL, *path = NULL;
        char *text = NULL;
        const char *name;

        while (d && (name = g_dir_read_name(d)))
                if (!first || strcmp(name, first) < 0) {
                        g_free(first);
                        first = g_strdup(name);
                }
        if (!first)
                return NULL;
        path = g_build_filename(dir, first, NULL);
        if (g_file_get_contents(path, &text, NULL, NULL))
                unlink(path);
        return text;
}

static int get_decisions(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        g_autofree char *text = queued_answer();
        (void)userdata;

        if (!text && !g_file_get_contents(answer_file, &text, NULL, NULL))
                return sd_bus_error_set(error, "org.placementd1.Error.Failed", "no answer file");
        if (g_str_has_prefix(text, "error:")) /* a D-Bus error of that message */
                return sd_bus_error_set(error, "org.placementd1.Error.Failed", text + 6);
        return sd_bus_reply_method_return(m, "s", text);
}

static int rebalance(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        g_autofree char *text = NULL;
        (void)userdata;

        if (!g_file_get_contents(answer_file, &text, NULL, NULL))
                return sd_bus_error_set(error, "org.placementd1.Error.Failed", "no answer file");
        return sd_bus_reply_method_return(m, "us", 1u, text);
}

static int reload_error(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        g_autofree char *text = NULL;
        (void)bus, (void)path, (void)interface, (void)property, (void)userdata, (void)error;

        if (!g_file_get_contents(answer_file, &text, NULL, NULL) || !g_utf8_validate(text, -1, NULL))
                g_clear_pointer(&text, g_free); /* a D-Bus string is UTF-8: an empty one then */
        return sd_bus_message_append(reply, "s", text ? text : "");
}

static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("ReloadError", "s", reload_error, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD("GetDecisionsJSON", "s", "s", get_decisions, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Explain", "s", "s", get_decisions, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetHostMap", "", "s", get_decisions, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetHostMapJSON", "", "s", get_decisions, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetStatus", "", "s", get_decisions, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Rebalance", "", "us", rebalance, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int main(int argc, char **argv)
{
        sd_bus *bus = NULL;
        int r;

        if (argc != 3) {
                fprintf(stderr, "usage: fake-daemon ADDRESS FILE\n");
                return 2;
        }
        answer_file = argv[2];
        if ((r = sd_bus_new(&bus)) < 0 || (r = sd_bus_set_address(bus, argv[1])) < 0 ||
            (r = sd_bus_set_bus_client(bus, 1)) < 0 || (r = sd_bus_start(bus)) < 0 ||
            (r = sd_bus_add_object_vtable(bus, NULL, "/org/placementd1", "org.placementd1.Manager", vtable,
                                          NULL)) < 0 ||
            (r = sd_bus_request_name(bus, "org.placementd1", 0)) < 0) {
                fprintf(stderr, "fake-daemon: %s\n", g_strerror(-r));
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        break;
        }
        sd_bus_unref(bus);
        return 0;
}
