/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl's online commands: ask the running daemon over D-Bus. */
#include "placementctl.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-api.h"
#include "bus-cleanup.h"
#include "decision-json.h"
#include "decision-text.h"
#include "definition-snippet.h"
#include "json-get.h"
#include "size.h"
#include "text-safe.h"

/* Where the daemon is, for messages. */
static const char *where(const Ctl *c)
{
        if (c->host)
                return c->host;
        return c->address ? c->address : (c->bus ? c->bus : "system");
}

static int open_address(const char *address, sd_bus **ret)
{
        g_autoptr(sd_bus) bus = NULL;
        int r = sd_bus_new(&bus);

        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                *ret = g_steal_pointer(&bus);
        return r;
}

/* What a local bus that cannot be opened lacks, in words an operator can act on ("" when nothing is
 * known beyond the error). */
static const char *bus_hint(const Ctl *c, int r)
{
        bool session = c->bus && strcmp(c->bus, "session") == 0;

        if (c->host || c->address)
                return "";
        if (session && r == -ENOMEDIUM)
                return " (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set: give "
                       "--bus-address=ADDR)";
        if (!session && (r == -ENOENT || r == -ECONNREFUSED))
                return getenv("DBUS_SYSTEM_BUS_ADDRESS")
                           ? " (at DBUS_SYSTEM_BUS_ADDRESS: is a dbus-daemon listening there?)"
                           : " (at /run/dbus/system_bus_socket: is dbus running?)";
        return "";
}

/* The bus connection went away: a call's answer, or the opening of a bus whose other end already ended. */
static bool transport_lost(int r)
{
        return r == -ENOTCONN || r == -ECONNRESET || r == -EPIPE || r == -ECONNREFUSED;
}

int ctl_bus_open(Ctl *c)
{
        g_autofree char *ssh = NULL;

        int r;

        if (c->address && c->bus) {
                ctl_error("placementctl: --bus and --bus-address both choose the bus; give one");
                return EXIT_USAGE;
        }
        if (c->host && (c->address || c->bus)) {
                ctl_error("placementctl: --host reaches the system bus of that host; it does not go "
                          "with --bus or --bus-address");
                return EXIT_USAGE;
        }
        if (c->host && !(ssh = g_find_program_in_path("ssh"))) {
                /* sd-bus's child fails to run it and says nothing */
                ctl_error("placementctl: --host runs ssh, which is not in PATH");
                return EXIT_NOT_RUNNING;
        }
        if (c->host)
                /* ssh -xT HOST systemd-stdio-bridge, as systemctl -H does */
                r = sd_bus_open_system_remote(&c->sd, c->host);
        else if (c->address)
                r = open_address(c->address, &c->sd);
        else
                r = c->bus && strcmp(c->bus, "session") == 0 ? sd_bus_open_user(&c->sd)
                                                             : sd_bus_open_system(&c->sd);
        if (r == -EINVAL && c->host) {
                /* sd-bus cannot split it into user, host, port and machine: nothing was run */
                ctl_error("placementctl: --host takes [USER@]HOST[:PORT], not '%s'", c->host);
                return EXIT_USAGE;
        }
        if (r == -EINVAL && c->address) {
                /* of the right shape, but not an address sd-bus can use (unix:foo=1, tcp: without port=) */
                ctl_error("placementctl: invalid D-Bus address '%s' (sd-bus cannot use it; such as "
                          "unix:path=/run/dbus/system_bus_socket)",
                          c->address);
                return EXIT_USAGE;
        }
        if (r < 0 && c->host && transport_lost(r)) {
                /* ssh ended before sd-bus wrote its greeting: as when it ends before the first answer */
                ctl_error("placementctl: cannot reach %s over ssh (ssh's own message is above): %s", c->host,
                          strerror(-r));
                return EXIT_NOT_RUNNING;
        }
        if (r < 0) {
                ctl_error("placementctl: cannot connect to the %s bus: %s%s", where(c), strerror(-r),
                          bus_hint(c, r));
                return EXIT_NOT_RUNNING;
        }
        return EXIT_OK;
}

/* Maps a failed call to a message and an exit code. */

/* refused, when not NULL, goes before the message of an InvalidArgument error: what it means that the
 * daemon refused the call (Reload: the old configuration still runs). */
static int call_failed(const Ctl *o, const char *method, const char *refused, const sd_bus_error *e, int r)
{
        const char *name = e && e->name ? e->name : "";

        if (o->host && transport_lost(r) && (!*name || g_str_has_prefix(name, "System.Error."))) {
                ctl_error("placementctl: cannot reach %s over ssh (ssh's own message is above): %s", o->host,
                          strerror(-r));
                return EXIT_NOT_RUNNING;
        }
        /* a TCP bus address connects when first used: its refusal comes with the first call */
        if (transport_lost(r) && (!*name || g_str_has_prefix(name, "System.Error."))) {
                ctl_error("placementctl: cannot connect to the %s bus: %s", where(o), strerror(-r));
                return EXIT_NOT_RUNNING;
        }
        if (!strcmp(name, SD_BUS_ERROR_SERVICE_UNKNOWN) || !strcmp(name, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
            !strcmp(name, SD_BUS_ERROR_NO_REPLY) || !strcmp(name, SD_BUS_ERROR_DISCONNECTED)) {
                if (o->host)
                        ctl_error("placementctl: placementd is not running on %s (no %s on its system bus)",
                                  o->host, BUS_NAME);
                else
                        ctl_error("placementctl: placementd is not running (no %s on the %s bus)", BUS_NAME,
                                  where(o));
                return EXIT_NOT_RUNNING;
        }
        /* the verb the user typed, not the D-Bus method behind it; a message of several lines (a reload's
         * configuration problems) keeps one a line */
        if (refused && !strcmp(name, BUS_ERROR_INVALID_ARGUMENT))
                ctl_error_lines("placementctl %s: %s: %s", o->verb ? o->verb : method, refused,
                                e && e->message ? e->message : strerror(-r));
        else
                ctl_error_lines("placementctl %s: %s", o->verb ? o->verb : method,
                                e && e->message ? e->message : strerror(-r));
        if (!strcmp(name, BUS_ERROR_NO_SUCH_DOMAIN))
                return EXIT_NO_SUCH_DOMAIN;
        if (!strcmp(name, BUS_ERROR_NOT_PERMITTED) || !strcmp(name, SD_BUS_ERROR_ACCESS_DENIED))
                return EXIT_DENIED;
        if (!strcmp(name, BUS_ERROR_INVALID_ARGUMENT))
                return EXIT_USAGE;
        return EXIT_RUNTIME;
}

/* Calls method; on success *ret_reply holds the reply. Returns an exit code (call_failed()'s). */
static int call_va(const Ctl *o, sd_bus *bus, const char *method, sd_bus_message **ret_reply,
                   const char *refused, const char *types, va_list ap)
{
        sd_bus_error e = SD_BUS_ERROR_NULL;
        g_autoptr(sd_bus_message) msg = NULL;
        int r, code = EXIT_OK;

        r = sd_bus_message_new_method_call(bus, &msg, BUS_NAME, BUS_PATH, BUS_INTERFACE, method);
        if (r >= 0 && types)
                r = sd_bus_message_appendv(msg, types, ap);
        if (r >= 0)
                r = sd_bus_call(bus, msg, 30 * 1000000ULL, &e, ret_reply);
        if (r < 0)
                code = call_failed(o, method, refused, &e, r);
        sd_bus_error_free(&e);
        return code;
}

int ctl_call(const Ctl *o, sd_bus *bus, const char *method, sd_bus_message **ret_reply, const char *types,
             ...)
{
        va_list ap;
        int code;

        va_start(ap, types);
        code = call_va(o, bus, method, ret_reply, NULL, types, ap);
        va_end(ap);
        return code;
}

/* As ctl_call(), saying refused before the message when the daemon refuses the call (InvalidArgument). */
static int call_refused(const Ctl *o, sd_bus *bus, const char *method, const char *refused,
                        const char *types, ...)
{
        va_list ap;
        int code;

        va_start(ap, types);
        code = call_va(o, bus, method, NULL, refused, types, ap);
        va_end(ap);
        return code;
}

int ctl_read_string(sd_bus_message *reply, const char **ret)
{
        int r = sd_bus_message_read(reply, "s", ret);
        if (r < 0)
                ctl_error("placementctl: unexpected reply: %s", strerror(-r));
        return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* The daemon's JSON, re-written by json-glib (so whatever its strings hold is escaped); an answer that is
 * not JSON is not printed (a hostile daemon's text could drive the terminal). Returns an exit code. */
static int print_json(const char *text)
{
        g_autoptr(JsonParser) p = json_parser_new();
        g_autofree char *out = NULL;

        if (!json_parser_load_from_data(p, text, -1, NULL) || !json_parser_get_root(p)) {
                ctl_error("placementctl: the daemon's answer is not JSON");
                return EXIT_RUNTIME;
        }
        out = json_to_text(json_parser_get_root(p), TRUE);
        ctl_print_json(out);
        return EXIT_OK;
}

/* {"KEY": text} with "moved": moved first when moved >= 0: JSON strings, whatever text holds. */
static void print_json_text(const char *key, const char *text, int64_t moved)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonGenerator) g = json_generator_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *out = NULL, *raw = NULL;

        json_builder_begin_object(b);
        if (moved >= 0) {
                json_builder_set_member_name(b, "moved");
                json_builder_add_int_value(b, moved);
        }
        json_builder_set_member_name(b, key);
        json_builder_add_string_value(b, text);
        if (moved >= 0) { /* the report line by line, for a script */
                g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
                json_builder_set_member_name(b, "lines");
                json_builder_begin_array(b);
                for (char **l = lines; *l; l++)
                        if (**l)
                                json_builder_add_string_value(b, *l);
                json_builder_end_array(b);
        }
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        json_generator_set_pretty(g, TRUE);
        json_generator_set_root(g, root);
        raw = json_generator_to_data(g, NULL);
        out = text_json_safe(raw); /* a report names domains: C1 controls and bidi marks escaped */
        ctl_print_json(out);
}

static bool get_prop(sd_bus *bus, const char *name, char type, void *ret)
{
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;
        if (type == 's') {
                char *s = NULL;
                r = sd_bus_get_property_string(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, name, &e, &s);
                *(char **)ret = s;
        } else {
                g_autoptr(sd_bus_message) reply = NULL;
                r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, name, &e, &reply,
                                        (char[]){type, 0});
                if (r >= 0)
                        r = sd_bus_message_read_basic(reply, type, ret);
        }
        sd_bus_error_free(&e);
        return r >= 0;
}

/* "decisions": {RESULT: count, ...} of every decision the daemon holds, by GetDecisionsJSON (left out
 * when that call fails: the status itself was read). */
static void add_result_counts(const Ctl *o, sd_bus *bus, JsonBuilder *b)
{
        g_autoptr(sd_bus_message) reply = NULL;
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_autoptr(GList) keys = NULL;
        JsonArray *all;
        JsonNode *root;
        const char *text;

        if (ctl_call(o, bus, "GetDecisionsJSON", &reply, "s", "") ||
            sd_bus_message_read(reply, "s", &text) < 0 ||
            !json_parser_load_from_data(parser, text, -1, NULL) || !(root = json_parser_get_root(parser)) ||
            !JSON_NODE_HOLDS_OBJECT(root) ||
            !(all = json_get_array(json_node_get_object(root), "decisions")))
                return;
        for (unsigned i = 0; i < json_length(all); i++) {
                const char *result = json_get_string(json_elem_object(all, i), "result");
                gpointer n = g_hash_table_lookup(counts, result);
                g_hash_table_replace(counts, g_strdup(result), GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
        }
        json_builder_set_member_name(b, "decisions");
        json_builder_begin_object(b);
        keys = g_list_sort(g_hash_table_get_keys(counts), (GCompareFunc)strcmp);
        for (GList *k = keys; k; k = k->next) {
                json_builder_set_member_name(b, k->data);
                json_builder_add_int_value(b, GPOINTER_TO_UINT(g_hash_table_lookup(counts, k->data)));
        }
        json_builder_end_object(b);
}

static int cmd_status(const Ctl *o, sd_bus *bus)
{
        g_autoptr(sd_bus_message) reply = NULL;
        const char *status;
        g_autofree char *policy = NULL, *version = NULL, *uri = NULL, *reload_error = NULL,
                        *metrics_error = NULL;
        int apply = 0, connected = 0;
        uint32_t nodes = 0, packages = 0, cores = 0, pus = 0, threads = 0;
        int code = ctl_call(o, bus, "GetStatus", &reply, NULL);

        if (code)
                return code;
        code = ctl_read_string(reply, &status);
        get_prop(bus, "Policy", 's', &policy);
        get_prop(bus, "Version", 's', &version);
        get_prop(bus, "URI", 's', &uri);
        get_prop(bus, "Apply", 'b', &apply);
        get_prop(bus, "Connected", 'b', &connected);
        get_prop(bus, "Nodes", 'u', &nodes);
        get_prop(bus, "Packages", 'u', &packages);
        get_prop(bus, "Cores", 'u', &cores);
        get_prop(bus, "PUs", 'u', &pus);
        get_prop(bus, "ThreadsPerCore", 'u', &threads);
        /* "" when the last reload worked or none was done; a daemon without it is taken to say the same */
        if (get_prop(bus, "ReloadError", 's', &reload_error) && reload_error && !*reload_error)
                g_clear_pointer(&reload_error, g_free);
        /* "" when metrics are served or off */
        if (get_prop(bus, "MetricsError", 's', &metrics_error) && metrics_error && !*metrics_error)
                g_clear_pointer(&metrics_error, g_free);
        if (!code && o->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;
                g_autofree char *text = NULL;
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "status");
                json_builder_add_string_value(b, status);
                json_builder_set_member_name(b, "version");
                json_builder_add_string_value(b, version ? version : "");
                json_builder_set_member_name(b, "policy");
                json_builder_add_string_value(b, policy ? policy : "");
                json_builder_set_member_name(b, "apply");
                json_builder_add_boolean_value(b, apply);
                json_builder_set_member_name(b, "connected");
                json_builder_add_boolean_value(b, connected);
                json_builder_set_member_name(b, "uri");
                json_builder_add_string_value(b, uri ? uri : "");
                json_builder_set_member_name(b, "reload_error"); /* every line of it, or null */
                if (reload_error)
                        json_builder_add_string_value(b, reload_error);
                else
                        json_builder_add_null_value(b);
                json_builder_set_member_name(b, "metrics_error"); /* or null */
                if (metrics_error)
                        json_builder_add_string_value(b, metrics_error);
                else
                        json_builder_add_null_value(b);
                json_builder_set_member_name(b, "topology");
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "nodes");
                json_builder_add_int_value(b, nodes);
                json_builder_set_member_name(b, "packages");
                json_builder_add_int_value(b, packages);
                json_builder_set_member_name(b, "cores");
                json_builder_add_int_value(b, cores);
                json_builder_set_member_name(b, "pus");
                json_builder_add_int_value(b, pus);
                json_builder_set_member_name(b, "threads_per_core");
                json_builder_add_int_value(b, threads);
                json_builder_end_object(b);
                add_result_counts(o, bus, b);
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                /* the daemon's text with its C1 controls and bidi marks escaped */
                text = json_to_text(root, TRUE);
                ctl_print_json(text);
        } else if (!code) {
                g_autofree char *safe = text_safe(status), *v = text_safe(version ? version : "?");
                printf("placementd %s: %s\n", v, safe);
                if (reload_error) {
                        /* the daemon's text quotes the configuration file: one line, shown as
                         * ctl_error() shows a message */
                        g_autofree char *first = g_strndup(reload_error, strcspn(reload_error, "\n"));
                        g_autofree char *line = text_terminal_safe(first);
                        printf("Last reload: failed, the old configuration runs: %s\n", line);
                }
                if (metrics_error) {
                        g_autofree char *line = text_terminal_safe(metrics_error);
                        printf("Metrics: not served: %s\n", line);
                }
                printf("host: %u NUMA node%s, %u package%s, %u core%s, %u PU%s (%u thread%s per core)\n",
                       nodes, nodes == 1 ? "" : "s", packages, packages == 1 ? "" : "s", cores,
                       cores == 1 ? "" : "s", pus, pus == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
        }
        return code;
}

/* Whether a decision object is an advice nothing applied: result "advisory", or "applied" false. */
static bool advised(JsonObject *d)
{
        return !strcmp(json_get_string(d, "result"), "advisory") ||
               (json_object_has_member(d, "applied") && !json_get_bool(d, "applied"));
}

/* A decision's result as list and show write it: an advisory one whose plan is unplaceable or
 * overcommitted says so, "advisory (unplaceable)", as the daemon's log and status do; its JSON keeps
 * "result" and says the plan's verdict in "plan_result". Caller frees. */
static char *result_text(JsonObject *d)
{
        const char *result = json_get_string(d, "result"), *plan = json_get_string(d, "plan_result");

        if (!strcmp(result, "advisory") && (!strcmp(plan, "unplaceable") || !strcmp(plan, "overcommitted")))
                return g_strdup_printf("%s (%s)", result, plan);
        return g_strdup(result);
}

/* The columns of `list`. */
enum { LIST_DOMAIN, LIST_RESULT, LIST_POLICY, LIST_NODES, LIST_MEM, LIST_PINS, _LIST_COLUMNS };

/* One row of `list`: pins labelled with libvirt's vCPU ids (decision_json_vcpu_id()), an advice's
 * followed by "; advised (Apply=no): not applied". Every text the daemon sends goes through text_safe(): a
 * result or policy is no more trusted than a name. */
static char **list_row(JsonObject *d)
{
        JsonArray *pins = json_get_array(d, "vcpu_pins"), *nodes = json_get_array(d, "nodes");
        g_autoptr(GString) pin_text = g_string_new(NULL);
        g_autoptr(CpuSet) node_set = cpuset_new();
        g_autofree char *node_text = NULL, *pins_safe = NULL, *policy = NULL, *mem = NULL;
        g_autofree char *shown_result = result_text(d);
        char **row = g_new0(char *, _LIST_COLUMNS + 1);

        for (unsigned i = 0; i < json_length(pins); i++) {
                const char *pin = json_elem_string(pins, i);
                if (*pin) /* an unplaced vCPU has no pin */
                        g_string_append_printf(pin_text, "%s%u:%s", pin_text->len ? " " : "",
                                               decision_json_vcpu_id(d, i), pin);
        }
        for (unsigned i = 0; i < json_length(nodes); i++) {
                gint64 n = json_elem_int(nodes, i, -1);
                if (n >= 0 && n < CPUSET_MAX)
                        cpuset_add(node_set, (unsigned)n);
        }
        node_text = cpuset_format(node_set);
        pins_safe = text_safe(pin_text->str);
        policy = text_safe(json_get_string(d, "policy"));
        mem = text_safe(json_get_string(d, "memory_nodes"));
        row[LIST_DOMAIN] = text_safe(json_get_string(d, "domain"));
        row[LIST_RESULT] = text_safe(shown_result);
        row[LIST_POLICY] = g_strdup(*policy ? policy : "-");
        row[LIST_NODES] = g_strdup(*node_text ? node_text : "-");
        row[LIST_MEM] = g_strdup(*mem ? mem : "-");
        row[LIST_PINS] = g_strdup_printf("%s%s", *pins_safe ? pins_safe : "-",
                                         advised(d) ? "; " DECISION_ADVISED_TEXT : "");
        return row;
}

/* The "decisions" array of GetDecisionsJSON's text, parsed by parser; NULL (said) when it does not parse. */
static JsonArray *decisions_of(JsonParser *parser, const char *text)
{
        JsonNode *root;

        if (json_parser_load_from_data(parser, text, -1, NULL) && (root = json_parser_get_root(parser)) &&
            JSON_NODE_HOLDS_OBJECT(root) && json_get_array(json_node_get_object(root), "decisions"))
                return json_get_array(json_node_get_object(root), "decisions");
        ctl_error("placementctl: the daemon sent JSON that does not parse");
        return NULL;
}

static int cmd_list(const Ctl *o, sd_bus *bus)
{
        g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
        g_autoptr(sd_bus_message) reply = NULL;
        g_autoptr(JsonParser) parser = json_parser_new();
        JsonArray *all;
        const char *json;
        int code = ctl_call(o, bus, "GetDecisionsJSON", &reply, "s", "");

        if (code || (code = ctl_read_string(reply, &json)))
                return code;
        if (o->json)
                return print_json(json);
        if (!(all = decisions_of(parser, json)))
                return EXIT_RUNTIME;
        g_ptr_array_add(rows, g_strsplit("DOMAIN|RESULT|POLICY|NODES|MEM|VCPU PINS", "|", -1));
        for (unsigned i = 0; i < json_length(all); i++)
                if (json_elem_object(all, i))
                        g_ptr_array_add(rows, list_row(json_elem_object(all, i)));
        ctl_print_columns(rows, _LIST_COLUMNS);
        return EXIT_OK;
}

/* The daemon's multi-line text, each line made terminal-safe (text_terminal_safe(): the names in it are
 * escaped already, their backslashes too): a hostile daemon's escape sequence or carriage return does
 * not reach the terminal, its line breaks do. */
static void print_text_safe(const char *text)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

        for (char **line = lines; *line; line++) {
                g_autofree char *safe = text_terminal_safe(*line);
                fputs(safe, stdout);
                if (line[1])
                        fputc('\n', stdout);
        }
}

static int cmd_text(const Ctl *o, sd_bus *bus, const char *method, const char *domain)
{
        g_autoptr(sd_bus_message) reply = NULL;
        const char *text;
        int code;

        if (o->json && domain) {
                code = ctl_call(o, bus, "GetDecisionsJSON", &reply, "s", domain);
                if (!code && !(code = ctl_read_string(reply, &text)))
                        code = print_json(text);
        } else {
                code = domain ? ctl_call(o, bus, method, &reply, "s", domain)
                              : ctl_call(o, bus, method, &reply, NULL);
                if (!code && !(code = ctl_read_string(reply, &text))) {
                        if (o->json) {
                                print_json_text("text", text, -1);
                        } else {
                                print_text_safe(text);
                        }
                }
        }
        return code;
}

/* The node numbers of a JSON array as a set; numbers no host has (negative, CPUSET_MAX or above) are left
 * out, so a hostile answer cannot make the set huge. */
static CpuSet *json_nodes(JsonArray *a)
{
        CpuSet *s = cpuset_new();

        for (unsigned k = 0; k < json_length(a); k++) {
                gint64 n = json_elem_int(a, k, -1);
                if (n >= 0 && n < CPUSET_MAX)
                        cpuset_add(s, (unsigned)n);
        }
        return s;
}

/* The guest cells of a decision and where they went, and its hugepage size: per cell, the nodes of its
 * vCPUs and the nodes its memory is counted on ("memory_nodes", which names more nodes than "nodes" when
 * its vCPUs' nodes lack the room; not known for pins adopted as they run), and whether it is a cell of
 * ordinary memory in a hugepage-backed domain, in plan's words; note ends each placed cell's line. */
static void print_guest_shape(JsonObject *d, const char *note)
{
        JsonArray *cells = json_get_array(d, "cells");
        char a[32];

        if (json_get_int(d, "hugepage_size", 0) > 0)
                printf("  memory backing: hugepages of %s\n",
                       size_format((uint64_t)json_get_int(d, "hugepage_size", 0), a, sizeof(a)));
        for (unsigned i = 0; i < json_length(cells); i++) {
                JsonObject *c = json_elem_object(cells, i);
                g_autoptr(CpuSet) nodes = json_nodes(json_get_array(c, "nodes"));
                g_autoptr(CpuSet) memory = json_nodes(json_get_array(c, "memory_nodes"));
                g_autofree char *vcpus = text_safe(json_get_string(c, "vcpus"));
                g_autofree char *on = decision_nodes_text(nodes), *mem_on = NULL;
                char kind[64];

                if (json_get_bool(c, "memory_device"))
                        printf("  memory device (its own <source>) ");
                else
                        printf("  guest cell %-3" G_GINT64_FORMAT " ", json_get_int(c, "id", -1));
                if (*vcpus)
                        printf("vCPUs %s", vcpus);
                else
                        printf("no vCPUs");
                /* nothing placed (unplaceable); a cell without vCPUs has only its memory's nodes */
                if (cpuset_is_empty(nodes) && cpuset_is_empty(memory)) {
                        printf(", not placed\n");
                        continue;
                }
                /* a cell without vCPUs: its "nodes" are its memory's */
                if (!*vcpus && cpuset_is_empty(memory))
                        cpuset_union(memory, nodes);
                if (*vcpus)
                        printf(" on %s", on);
                mem_on = decision_nodes_text(memory);
                /* a cell of its own page size, the smaller of two */
                if (json_get_int(c, "hugepage_size", 0) > 0)
                        g_snprintf(kind, sizeof(kind), " (in hugepages of %s)",
                                   size_format((uint64_t)json_get_int(c, "hugepage_size", 0), a, sizeof(a)));
                else
                        g_strlcpy(kind,
                                  json_get_bool(c, "ordinary_memory")
                                      ? " (ordinary memory: no <page> backs it)"
                                      : "",
                                  sizeof(kind));
                printf(", memory %s%s%s%s\n", cpuset_is_empty(memory) ? "nodes not known" : "on ",
                       cpuset_is_empty(memory) ? "" : mem_on, kind, note);
        }
}

/* "  LABEL text\n" with the daemon's text made safe for a terminal (text_safe()). */
static void print_field(const char *label, const char *text)
{
        g_autofree char *safe = text_safe(text);
        printf("  %-16s%s\n", label, safe);
}

/* Human view of one decision object (the same JSON as `list --json` and the offline plan); an advice's
 * result says DECISION_ADVISED_TEXT, and each of its pins and cells "(advised)". */
static void print_decision(JsonObject *d)
{
        JsonArray *pins = json_get_array(d, "vcpu_pins");
        JsonObject *l = json_get_object(d, "load"), *c = json_get_object(d, "cpu_seconds");
        const char *mem = json_get_string(d, "memory_nodes"), *emu = json_get_string(d, "emulator_pin");
        g_autofree char *safe = text_safe(json_get_string(d, "domain"));
        g_autofree char *uuid = text_safe(json_get_string(d, "uuid"));
        g_autofree char *result = NULL, *binding = NULL, *threads = NULL, *emu_text = NULL;
        g_autofree char *shown_result = result_text(d);
        bool advice = advised(d);
        const char *note = advice ? " (advised)" : "";
        char a[32];

        printf("%s (%s)\n", safe, uuid);
        result = *json_get_string(d, "policy")
                     ? g_strdup_printf("%s [%s]", shown_result, json_get_string(d, "policy"))
                     : g_strdup(shown_result);
        if (advice) {
                char *said = g_strconcat(result, "; " DECISION_ADVISED_TEXT, NULL);
                g_free(result);
                result = said;
        }
        print_field("result:", result);
        if (json_get_int(d, "vcpus", -1) >= 0)
                printf("  size:           %" G_GINT64_FORMAT " vCPU%s, %s\n", json_get_int(d, "vcpus", 0),
                       json_get_int(d, "vcpus", 0) == 1 ? "" : "s",
                       size_format((uint64_t)MAX(json_get_int(d, "memory", 0), 0), a, sizeof(a)));
        for (unsigned i = 0; i < json_length(pins); i++) {
                g_autofree char *label = g_strdup_printf("vCPU %u", decision_json_vcpu_id(d, i));
                g_autofree char *pin = g_strconcat(json_elem_string(pins, i), note, NULL);
                print_field(label, *json_elem_string(pins, i) ? pin : "(not pinned)");
        }
        binding = g_strdup_printf("%s (binding %s)", *mem ? mem : "-", json_get_string(d, "memory_binding"));
        print_field("memory nodes:", binding);
        emu_text = g_strconcat(emu, note, NULL);
        print_field("emulator:", *emu ? emu_text : "(not pinned)");
        print_guest_shape(d, note);
        if (json_object_has_member(d, "iothreads")) {
                threads = g_strdup_printf("%s on %s%s", json_get_string(d, "iothreads"),
                                          json_get_string(d, "iothread_pin"), note);
                print_field("I/O threads:", threads);
        }
        if (*json_get_string(d, "held_cpus")) {
                /* the CPUs the ledger holds for QEMU's threads, as the offline plan prints them */
                g_autofree char *held = text_safe(json_get_string(d, "held_cpus"));
                printf("  held for its emulator and I/O threads: %s\n", held);
        }
        if (json_get_bool(d, "adopted"))
                printf("  adopted from its recorded decision\n");
        if (*json_get_string(d, "apply_error"))
                print_field("error:", json_get_string(d, "apply_error"));
        print_field("why:", json_get_string(d, "reason"));
        if (l) {
                JsonArray *busy = json_get_array(l, "vcpu_busy");
                gint64 n = json_get_int(l, "busy_vcpus", 0);
                printf("  load:           %" G_GINT64_FORMAT " busy vCPU%s (", n, n == 1 ? "" : "s");
                for (unsigned i = 0; i < json_length(busy); i++)
                        printf("%s%.2f", i ? " " : "", json_elem_double(busy, i));
                printf("), host-side threads %.2f cores%s\n", json_get_double(l, "host_busy"),
                       json_get_bool(l, "paused") ? "; paused: held as it was before the pause" : "");
        } else if (json_object_has_member(d, "load")) {
                printf("  load:           not measured yet\n");
        }
        if (c)
                printf("  host CPU time:  %.2f s guest vCPUs, %.2f s host work for it (%.2f s user, %.2f s "
                       "system)\n",
                       json_get_double(c, "vcpu"), json_get_double(c, "host"), json_get_double(c, "user"),
                       json_get_double(c, "system"));
}

static int cmd_show(const Ctl *o, sd_bus *bus, const char *domain)
{
        g_autoptr(sd_bus_message) reply = NULL;
        g_autoptr(JsonParser) parser = json_parser_new();
        const char *text;
        int code = ctl_call(o, bus, "GetDecisionsJSON", &reply, "s", domain);

        if (!code && !(code = ctl_read_string(reply, &text))) {
                JsonArray *all;
                if (o->json) {
                        code = print_json(text);
                } else if ((all = decisions_of(parser, text))) {
                        for (unsigned i = 0; i < json_length(all); i++)
                                if (json_elem_object(all, i))
                                        print_decision(json_elem_object(all, i));
                } else {
                        code = EXIT_RUNTIME;
                }
        }
        return code;
}

static int cmd_plan(const Ctl *o, sd_bus *bus)
{
        g_autoptr(sd_bus_message) reply = NULL;
        const char *result, *nodes, *pin, *mem, *emu, *reason, *json;
        unsigned i = 0, shown = 0; /* vCPUs, and the pins printed */
        int code;

        if (!(o->given & CTL_OPT(VCPUS)) || !(o->given & CTL_OPT(MEMORY))) {
                ctl_error("placementctl plan: give --vcpus=N and --memory=SIZE (or --topology= to "
                          "plan offline)");
                return EXIT_USAGE;
        }
        code = ctl_call(o, bus, "Plan", &reply, "ut", o->vcpus, o->memory);
        if (code)
                return code;
        sd_bus_message_read(reply, "ss", &result, &nodes);
        if (!o->json) {
                g_autofree char *r = text_safe(result), *n = text_safe(nodes);
                char a[32];
                printf("%u vCPU%s, %s: %s", o->vcpus, o->vcpus == 1 ? "" : "s",
                       size_format(o->memory, a, sizeof(a)), r);
                if (*n)
                        printf(" on node%s %s", strpbrk(n, ",-") ? "s" : "", n);
                printf("\n");
        }
        /* the offline plan's layout: pins four a line, memory and emulator, why; a line is ended when
         * the next begins, so an unplaceable plan, which pins nothing, goes from its heading to why */
        sd_bus_message_enter_container(reply, 'a', "s");
        while (sd_bus_message_read(reply, "s", &pin) > 0) {
                if (!o->json && *pin) { /* an unplaceable plan pins nothing */
                        g_autofree char *safe = text_safe(pin);
                        printf("%s vCPU %u -> %s", shown % 4 == 0 ? (shown ? "\n " : " ") : "  ", i, safe);
                        shown++;
                }
                i++;
        }
        sd_bus_message_exit_container(reply);
        sd_bus_message_read(reply, "ssss", &mem, &emu, &reason, &json);
        if (o->json) {
                code = print_json(json);
        } else {
                g_autofree char *m = text_safe(mem), *e = text_safe(emu), *why = text_safe(reason);
                if (*m || *e)
                        printf("%s  memory on node%s %s, emulator on %s", shown ? "\n" : "",
                               strpbrk(m, ",-") ? "s" : "", *m ? m : "-", *e ? e : "-");
                printf("%s  why: %s\n", shown || *m || *e ? "\n" : "", why);
        }
        return code;
}

static int cmd_rebalance(const Ctl *o, sd_bus *bus)
{
        g_autoptr(sd_bus_message) reply = NULL;
        const char *report;
        uint32_t moved;
        int code = ctl_call(o, bus, "Rebalance", &reply, NULL);

        if (code)
                return code;
        if (sd_bus_message_read(reply, "us", &moved, &report) < 0)
                return EXIT_RUNTIME;
        if (o->json)
                print_json_text("report", report, moved);
        else
                print_text_safe(report);
        return EXIT_OK;
}

int verb_status(Ctl *c, char **args, unsigned nargs)
{
        (void)args, (void)nargs;
        return cmd_status(c, c->sd);
}

int verb_list(Ctl *c, char **args, unsigned nargs)
{
        (void)args, (void)nargs;
        return cmd_list(c, c->sd);
}

int verb_show(Ctl *c, char **args, unsigned nargs)
{
        (void)nargs;
        return cmd_show(c, c->sd, args[0]);
}

/* text made safe inside an XML comment: terminal-safe (text_safe()), and no "--", which would end the
 * comment and let a domain's name write XML into the snippet ("web1 --><evil/><!--") */
static char *comment_safe(const char *text)
{
        g_autofree char *safe = text_safe(text);
        GString *out = g_string_new(NULL);

        for (const char *c = safe; *c; c++) {
                if (*c == '-' && out->len && out->str[out->len - 1] == '-')
                        g_string_append(out, "\\x2d");
                else
                        g_string_append_c(out, *c);
        }
        return g_string_free(out, FALSE);
}

/* The <cputune>/<numatune> that would hold each matching decision in the domain's definition; with
 * --json, {"snippets": [{"domain", "uuid", "xml" (null when none), "error" (null or why none)}]}. */
static int cmd_snippet(const Ctl *o, sd_bus *bus, const char *domain)
{
        g_autoptr(sd_bus_message) reply = NULL;
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autoptr(JsonBuilder) b = json_builder_new();
        const char *text;
        bool answered = false;
        int code = ctl_call(o, bus, "GetDecisionsJSON", &reply, "s", domain);

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "snippets");
        json_builder_begin_array(b);
        if (!code && !(code = ctl_read_string(reply, &text))) {
                JsonArray *all = decisions_of(parser, text);
                for (unsigned i = 0; i < json_length(all); i++) {
                        JsonObject *d = json_elem_object(all, i);
                        g_autofree char *error = NULL;
                        g_autofree char *xml = d ? definition_snippet(d, &error) : NULL;
                        if (!d)
                                error = g_strdup("the daemon sent a decision that is not an object");
                        if (o->json) {
                                json_builder_begin_object(b);
                                json_builder_set_member_name(b, "domain");
                                json_builder_add_string_value(b, json_get_string(d, "domain"));
                                json_builder_set_member_name(b, "uuid");
                                json_builder_add_string_value(b, json_get_string(d, "uuid"));
                                json_builder_set_member_name(b, "xml");
                                if (xml)
                                        json_builder_add_string_value(b, xml);
                                else
                                        json_builder_add_null_value(b);
                                json_builder_set_member_name(b, "error");
                                if (xml)
                                        json_builder_add_null_value(b);
                                else
                                        json_builder_add_string_value(b, error);
                                json_builder_end_object(b);
                        } else {
                                g_autofree char *safe = comment_safe(json_get_string(d, "domain"));
                                printf("<!-- %s: %s -->\n", safe,
                                       xml ? "what its definition needs to hold this decision from its start"
                                           : error);
                                if (xml)
                                        fputs(xml, stdout);
                        }
                        if (!xml)
                                code = EXIT_RUNTIME;
                }
                if (!all)
                        code = EXIT_RUNTIME;
                else
                        answered = true;
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        /* each domain without a snippet says why in "error"; the exit status says one had none */
        if (o->json && answered) {
                g_autoptr(JsonNode) root = json_builder_get_root(b);
                g_autofree char *out = json_to_text(root, TRUE);
                ctl_print_json(out);
        }
        return code;
}

/* A call that answers nothing: with --json, {} once it succeeded (a script reads one object per
 * command). */
static int call_done(const Ctl *o, int code)
{
        if (o->json && !code)
                ctl_print_json("{}");
        return code;
}

int verb_snippet(Ctl *c, char **args, unsigned nargs)
{
        (void)nargs;
        return cmd_snippet(c, c->sd, args[0]);
}

int verb_explain(Ctl *c, char **args, unsigned nargs)
{
        (void)nargs;
        return cmd_text(c, c->sd, "Explain", args[0]);
}

/* map --svg: the text map of the state drawn. The data drawn holds it ("text", from the same call); from a
 * daemon whose data does not, the text comes in a call of its own, and a text read between two equal reads
 * of the data is of the state the picture shows (tried three times on a host whose domains come and go). */
static int text_as_drawn(const Ctl *c, MapSvg *svg)
{
        g_autofree char *text = map_svg_online_text(svg);
        bool same = false;
        int code = EXIT_OK;

        /* no further call: each costs a caller other than root tokens, the data one more per 100 domains,
         * and on a host of 900 domains a second read of it found too few */
        if (text) {
                print_text_safe(text);
                return EXIT_OK;
        }
        for (unsigned i = 0; i < 3 && !code && !same; i++) {
                g_autoptr(sd_bus_message) reply = NULL;
                const char *t;

                g_clear_pointer(&text, g_free);
                code = ctl_call(c, c->sd, "GetHostMap", &reply, NULL);
                if (!code && !(code = ctl_read_string(reply, &t))) {
                        text = g_strdup(t);
                        code = map_svg_online_reread(c, svg, &same);
                }
        }
        if (code)
                return code;
        print_text_safe(text);
        if (!same)
                ctl_error("placementctl map: the host's domains changed while the map was read: the picture "
                          "may differ from the text");
        return EXIT_OK;
}

int verb_map(Ctl *c, char **args, unsigned nargs)
{
        g_autoptr(MapSvg) svg = NULL;
        int code;

        (void)args, (void)nargs;
        if (c->topology && !c->svg) {
                ctl_error("placementctl map: --topology= names the host to draw with --svg=FILE");
                return EXIT_USAGE;
        }
        /* The daemon says which domain is on which PU, not how its host is built: hwloc here draws this
         * host, or the topology given. */
        if (c->svg && c->host && !c->topology) {
                ctl_error("placementctl map --svg: with -H, give --topology= that host's hwloc XML (lstopo "
                          "--of xml there)");
                return EXIT_USAGE;
        }
        /* the picture's topology, the daemon's map against it and FILE first: a map that cannot be drawn
         * prints nothing */
        if (c->svg && (code = map_svg_online_prepare(c, &svg)))
                return code;
        if (c->json && svg) {
                code = print_json(map_svg_online_json(svg)); /* the map drawn */
        } else if (c->json) {
                g_autoptr(sd_bus_message) reply = NULL;
                const char *text;
                code = ctl_call(c, c->sd, "GetHostMapJSON", &reply, NULL);
                if (!code && !(code = ctl_read_string(reply, &text)))
                        code = print_json(text);
        } else if (svg) {
                code = text_as_drawn(c, svg);
        } else {
                code = cmd_text(c, c->sd, "GetHostMap", NULL);
        }
        if (!code && svg)
                code = map_svg_online(c, svg);
        return code;
}

int verb_plan(Ctl *c, char **args, unsigned nargs)
{
        (void)args, (void)nargs;
        return cmd_plan(c, c->sd);
}

int verb_reload(Ctl *c, char **args, unsigned nargs)
{
        int code;

        (void)args, (void)nargs;
        /* the daemon refuses a configuration that does not load, or whose metrics listener cannot be bound
         * (InvalidArgument, exit 2), and keeps running the one it had */
        code = call_refused(c, c->sd, "Reload", "failed, the old configuration still runs", NULL);
        return call_done(c, code);
}

int verb_rebalance(Ctl *c, char **args, unsigned nargs)
{
        (void)args, (void)nargs;
        return cmd_rebalance(c, c->sd);
}

int verb_replace(Ctl *c, char **args, unsigned nargs)
{
        int code = ctl_call(c, c->sd, "Replace", NULL, "s", args[0]);

        (void)nargs;
        /* what it was placed as now, as show prints it (--json too: a script reads what a person sees) */
        if (!code)
                return cmd_show(c, c->sd, args[0]);
        return call_done(c, code);
}
