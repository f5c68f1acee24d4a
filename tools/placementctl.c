/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl: one table of verbs, one table of options, one getopt_long pass for both. */
#include "placementctl.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "dbus-address.h"
#include "decision-json.h"
#include "plan.h"
#include "size.h"
#include "text-safe.h"

#define ANY UINT_MAX

typedef enum VerbMode {
        VERB_ONLINE,  /* asks the running daemon: the dispatcher connects first */
        VERB_OFFLINE, /* the engine on a given topology */
        VERB_LIBVIRT, /* libvirt directly */
        VERB_LOCAL,   /* placementctl itself */
        _VERB_MODE_MAX,
} VerbMode;

typedef struct Verb {
        const char *name;
        const char *synopsis; /* arguments and the options only this verb takes, for --help */
        const char *args;     /* what its arguments are, for the error when their count is wrong */
        unsigned min_args, max_args;
        VerbMode mode;
        unsigned options; /* CTL_OPT() of the options it takes */
        VerbRun run;
        const char *help;
} Verb;

typedef struct OptionInfo {
        const char *name;
        int short_name;    /* 0 for none */
        const char *value; /* NULL for a flag */
        const char *help;
} OptionInfo;

static const OptionInfo option_info[_OPT_MAX] = {
    [OPT_JSON] = {"json", 0, NULL, "JSON instead of text"},
    [OPT_BUS] = {"bus", 0, "system|session", "the bus placementd is on (default: system)"},
    [OPT_BUS_ADDRESS] = {"bus-address", 0, "ADDR", "connect to this D-Bus address instead"},
    [OPT_HOST] = {"host", 'H', "[USER@]HOST[:PORT]", "the placementd of another host, over SSH"},
    [OPT_VCPUS] = {"vcpus", 0, "N", "plan: vCPUs of the new domain"},
    [OPT_MEMORY] = {"memory", 0, "SIZE", "plan: memory of the new domain"},
    [OPT_TOPOLOGY] = {"topology", 0, "SOURCE", "work offline on this topology (map --svg: draw this one)"},
    [OPT_CONFIG] = {"config", 0, "FILE",
                    "offline plan, explain, simulate: placement settings from this file"},
    [OPT_POLICY] = {"policy", 0, "explicit|compat", "offline plan, explain, simulate: the policy to use"},
    [OPT_TRACE] = {"trace", 0, "FILE", "offline plan, explain, simulate: the events of this trace"},
    [OPT_CONNECT] = {"connect", 'c', "URI", "libvirt URI (default: qemu:///system)"},
    [OPT_MAP_ONLY] = {"map-only", 0, NULL, "cpu-baseline: use libvirt's CPU map, not QEMU's"},
    [OPT_VIRTTYPE] = {"virttype", 0, "TYPE", "cpu-baseline: the domain type (kvm, qemu)"},
    [OPT_SVG] = {"svg", 0, "FILE", "map, offline plan: also draw the host into FILE (SVG, by lstopo)"},
    [OPT_HELP] = {"help", 'h', NULL, "show this help"},
    [OPT_VERSION] = {"version", 0, NULL, "show the version"},
    [OPT_SIBLING_LOSS] = {"sibling-loss", 0, "F",
                          "simulate: throughput two busy siblings each lose (default 0.4)"},
    [OPT_DOMAIN] = {"domain", 0, "FILE.xml",
                    "offline plan, explain: a domain from libvirt domain XML (repeatable)"},
};

#define ONLINE CTL_OPT(JSON) | CTL_OPT(BUS) | CTL_OPT(BUS_ADDRESS) | CTL_OPT(HOST)
#define CPU    CTL_OPT(JSON) | CTL_OPT(CONNECT)

static int verb_help(Ctl *c, char **args, unsigned nargs);

static const Verb verbs[] = {
    {"status", "", "", 0, 0, VERB_ONLINE, ONLINE, verb_status, "daemon state, policy, host summary"},
    {"list", "", "", 0, 0, VERB_ONLINE, ONLINE, verb_list, "every running domain and its decision"},
    {"show", "DOMAIN", "one DOMAIN (name or UUID)", 1, 1, VERB_ONLINE, ONLINE, verb_show, "one decision"},
    {"snippet", "DOMAIN", "one DOMAIN (name or UUID)", 1, 1, VERB_ONLINE, ONLINE, verb_snippet,
     "the <cputune>/<numatune> its definition needs to hold the decision"},
    {"explain", "DOMAIN", "one DOMAIN (name or UUID)", 1, 1, VERB_ONLINE, ONLINE, verb_explain,
     "the ranked candidates and the rule that chose"},
    {"map", "[--svg=FILE [--topology=SOURCE]]", "", 0, 0, VERB_ONLINE,
     ONLINE | CTL_OPT(SVG) | CTL_OPT(TOPOLOGY), verb_map, "the host with the domain on each CPU"},
    {"plan", "--vcpus=N --memory=SIZE", "", 0, 0, VERB_ONLINE, ONLINE | CTL_OPT(VCPUS) | CTL_OPT(MEMORY),
     verb_plan, "what it would do for a new domain now"},
    {"reload", "", "", 0, 0, VERB_ONLINE, ONLINE, verb_reload,
     "read the configuration again (root, or polkit org.placementd1.manage)"},
    {"rebalance", "", "", 0, 0, VERB_ONLINE, ONLINE, verb_rebalance,
     "move domains where they fit better (root, or polkit org.placementd1.manage)"},
    {"replace", "DOMAIN", "one DOMAIN (name or UUID)", 1, 1, VERB_ONLINE, ONLINE, verb_replace,
     "place one domain again (root, or polkit org.placementd1.manage)"},
    {"topology", "--topology=SOURCE", "", 0, 0, VERB_OFFLINE, CTL_OPT(JSON) | CTL_OPT(TOPOLOGY),
     verb_topology, "the host as the engine sees it"},
    {"plan",
     "--topology=SOURCE [--config=FILE] [--policy=explicit|compat] [--svg=FILE] [--domain=FILE.xml...] "
     "[NAME:VCPUS:MEMORY...] | --trace=FILE",
     "NAME:VCPUS:MEMORY...", 0, ANY, VERB_OFFLINE,
     CTL_OPT(JSON) | CTL_OPT(TOPOLOGY) | CTL_OPT(CONFIG) | CTL_OPT(POLICY) | CTL_OPT(TRACE) | CTL_OPT(SVG) |
         CTL_OPT(DOMAIN),
     verb_plan_offline, "place these domains in turn, then show the map"},
    {"simulate", "--topology=SOURCE [--config=FILE] [--policy=P] --trace=FILE [--sibling-loss=F]", "", 0, 0,
     VERB_OFFLINE,
     CTL_OPT(JSON) | CTL_OPT(TOPOLOGY) | CTL_OPT(CONFIG) | CTL_OPT(POLICY) | CTL_OPT(TRACE) |
         CTL_OPT(SIBLING_LOSS),
     verb_simulate, "replay a trace with load through the engine and the healer; score it"},
    {"explain",
     "--topology=SOURCE [--config=FILE] [--policy=explicit|compat] [--domain=FILE.xml...] "
     "[NAME:VCPUS:MEMORY...] | --trace=FILE",
     "NAME:VCPUS:MEMORY...", 0, ANY, VERB_OFFLINE,
     CTL_OPT(JSON) | CTL_OPT(TOPOLOGY) | CTL_OPT(CONFIG) | CTL_OPT(POLICY) | CTL_OPT(TRACE) |
         CTL_OPT(DOMAIN),
     verb_explain_offline, "place these domains in turn, with the candidates each one saw"},
    {"cpu-advice", "[--connect=URI] [DOMAIN]", "at most one DOMAIN (name or UUID)", 0, 1, VERB_LIBVIRT, CPU,
     verb_cpu_advice, "features each running domain's CPU model hides"},
    {"cpu-baseline", "[--map-only] [--virttype=TYPE] [--connect=URI] FILE...",
     "one host CPU file per host (the <cpu> of 'virsh capabilities' or 'virsh domcapabilities')", 1, ANY,
     VERB_LIBVIRT, CPU | CTL_OPT(MAP_ONLY) | CTL_OPT(VIRTTYPE), verb_cpu_baseline,
     "the best CPU model all these hosts can run"},
    {"help", "[COMMAND]", "at most one COMMAND", 0, 1, VERB_LOCAL, 0, verb_help,
     "show this help, or one command's"},
};

static const char *const section[_VERB_MODE_MAX] = {
    [VERB_ONLINE] = "Ask the running placementd (D-Bus: the system bus, --bus=session, --bus-address=ADDR, "
                    "or -H HOST over SSH):",
    [VERB_OFFLINE] = "Offline (no daemon; the engine runs on the given topology):",
    [VERB_LIBVIRT] = "Guest CPU models (libvirt directly, no daemon):",
    [VERB_LOCAL] = "Help:",
};

static void print_verb(FILE *f, const Verb *v)
{
        g_autofree char *call = g_strjoin(*v->synopsis ? " " : "", v->name, v->synopsis, NULL);

        if (strlen(call) > 27)
                fprintf(f, "  %s\n  %-28s %s\n", call, "", v->help);
        else
                fprintf(f, "  %-28s %s\n", call, v->help);
}

static void print_option(FILE *f, const OptionInfo *i)
{
        g_autofree char *flag = g_strdup_printf(
            "%c%c%s--%s%s%s", i->short_name ? '-' : ' ', i->short_name ? i->short_name : ' ',
            i->short_name ? ", " : "  ", i->name, i->value ? "=" : "", i->value ? i->value : "");
        fprintf(f, "  %-32s %s\n", flag, i->help);
}

/* What SOURCE and SIZE are (for commands that take them), and the exit codes. */
static void print_footer(FILE *f, unsigned options)
{
        if (options & (CTL_OPT(TOPOLOGY) | CTL_OPT(MEMORY)))
                fputs("\nSOURCE is 'host', an hwloc XML file, or 'synthetic:DESC'. SIZE takes K/M/G/T "
                      "suffixes (binary; a bare number is bytes).\n",
                      f);
        else
                fputc('\n', f);
        fputs("Exit status: 0 ok, 1 runtime failure, 2 usage or input error, 3 placementd not running,\n"
              "4 no such domain, 5 permission denied.\n",
              f);
}

/* `placementctl VERB --help`, `placementctl help VERB`: the synopsis of each row of that name (plan and
 * explain have an online and an offline one: one usage line each; a command that takes no arguments
 * shows none), the rows, and the options they take. False when no command has that name. */
static bool usage_verb(FILE *f, const char *name)
{
        unsigned options = CTL_OPT(HELP);
        bool found = false;

        for (unsigned i = 0; i < G_N_ELEMENTS(verbs); i++) {
                const char *synopsis = verbs[i].synopsis;
                if (strcmp(verbs[i].name, name))
                        continue;
                fprintf(f, "%s placementctl [OPTIONS...] %s%s%s\n", found ? "      " : "Usage:", name,
                        *synopsis ? " " : "", synopsis);
                found = true;
        }
        found = false;
        for (unsigned i = 0; i < G_N_ELEMENTS(verbs); i++) {
                if (strcmp(verbs[i].name, name))
                        continue;
                fprintf(f, "\n%s\n", section[verbs[i].mode]);
                print_verb(f, &verbs[i]);
                options |= verbs[i].options;
                found = true;
        }
        if (!found)
                return false;
        fputs("\nOptions:\n", f);
        for (unsigned o = 0; o < _OPT_MAX; o++)
                if (options & (1u << o))
                        print_option(f, &option_info[o]);
        print_footer(f, options);
        return true;
}

static void usage(FILE *f)
{
        fputs("Usage: placementctl [OPTIONS...] COMMAND [ARGUMENTS...]\n", f);
        for (unsigned m = 0; m < _VERB_MODE_MAX; m++) {
                fprintf(f, "\n%s\n", section[m]);
                for (unsigned i = 0; i < G_N_ELEMENTS(verbs); i++)
                        if (verbs[i].mode == m)
                                print_verb(f, &verbs[i]);
        }
        fputs("\nOptions:\n", f);
        for (unsigned o = 0; o < _OPT_MAX; o++)
                print_option(f, &option_info[o]);
        print_footer(f, ~0u);
}

static int verb_help(Ctl *c, char **args, unsigned nargs)
{
        (void)c;
        if (nargs == 0) {
                usage(stdout);
                return EXIT_OK;
        }
        if (!usage_verb(stdout, args[0])) {
                ctl_error("placementctl help: unknown command '%s' (see placementctl --help)", args[0]);
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* A plain decimal fraction from 0 to 1. */
static bool parse_loss(const char *arg, double *ret)
{
        char *end = NULL;
        double d;

        if (!*arg || strspn(arg, "0123456789.") != strlen(arg))
                return false;
        d = g_ascii_strtod(arg, &end);
        if (*end || !(d >= 0 && d <= 1))
                return false;
        *ret = d;
        return true;
}

static int set_option(Ctl *c, CtlOption o, const char *arg)
{
        guint64 n;

        c->given |= 1u << o;
        switch (o) {
        case OPT_JSON:
                c->json = true;
                break;
        case OPT_BUS:
                if (strcmp(arg, "system") && strcmp(arg, "session")) {
                        ctl_error("placementctl: unknown bus '%s' (system, session)", arg);
                        return -EINVAL;
                }
                c->bus = arg;
                break;
        case OPT_BUS_ADDRESS:
                if (!dbus_address_valid(arg)) {
                        ctl_error(
                            "placementctl: invalid D-Bus address '%s' (TRANSPORT:KEY=VALUE[,...], such "
                            "as unix:path=/run/dbus/system_bus_socket)",
                            arg);
                        return -EINVAL;
                }
                c->address = arg;
                break;
        case OPT_HOST: {
                const char *at = strrchr(arg, '@'), *name = at ? at + 1 : arg;
                const char *bracket = *name == '[' ? strchr(name, ']') : NULL;
                const char *port = strchr(bracket ? bracket : name, ':');
                /* no empty user, host or port, a port ssh takes, nothing ssh would read as an option;
                 * HOST:MACHINE (letters: systemctl's container) is sd-bus's to read */
                bool bad_port =
                    port && (!port[1] || (strspn(port + 1, "0123456789") == strlen(port + 1) &&
                                          !g_ascii_string_to_unsigned(port + 1, 10, 1, 65535, NULL, NULL)));
                if (!*name || *name == ':' || *arg == '-' || *arg == '@' || strchr(arg, ' ') || bad_port) {
                        ctl_error("placementctl: --host takes [USER@]HOST[:PORT], not '%s'", arg);
                        return -EINVAL;
                }
                c->host = arg;
                break;
        }
        case OPT_VCPUS:
                if (!g_ascii_string_to_unsigned(arg, 10, 1, PLAN_MAX_VCPUS, &n, NULL)) {
                        ctl_error("placementctl: --vcpus takes a number from 1 to %u, not '%s'",
                                  PLAN_MAX_VCPUS, arg);
                        return -EINVAL;
                }
                c->vcpus = (unsigned)n;
                break;
        case OPT_MEMORY:
                if (size_parse(arg, &c->memory) < 0 || c->memory == 0) {
                        ctl_error("placementctl: --memory takes a size such as 4G, not '%s'", arg);
                        return -EINVAL;
                }
                break;
        case OPT_TOPOLOGY:
                c->topology = arg;
                break;
        case OPT_CONFIG:
                if (!*arg) {
                        ctl_error("placementctl: --config is empty (give a configuration file)");
                        return -EINVAL;
                }
                c->config = arg;
                break;
        case OPT_POLICY:
                c->policy = arg;
                break;
        case OPT_TRACE:
                if (!*arg) {
                        ctl_error("placementctl: --trace is empty (give a trace file)");
                        return -EINVAL;
                }
                c->trace = arg;
                break;
        case OPT_CONNECT:
                if (!*arg) {
                        ctl_error("placementctl: --connect is empty (give a libvirt URI, such as "
                                  "qemu:///system)");
                        return -EINVAL;
                }
                c->uri = arg;
                break;
        case OPT_MAP_ONLY:
                c->map_only = true;
                break;
        case OPT_VIRTTYPE:
                c->virttype = arg;
                break;
        case OPT_DOMAIN:
                if (!*arg) {
                        ctl_error("placementctl: --domain is empty (give a domain XML file)");
                        return -EINVAL;
                }
                g_ptr_array_add(c->domains, (char *)arg);
                break;
        case OPT_SVG:
                if (!*arg) {
                        ctl_error("placementctl: --svg is empty (give a file name)");
                        return -EINVAL;
                }
                c->svg = arg;
                break;
        case OPT_SIBLING_LOSS:
                if (!parse_loss(arg, &c->sibling_loss)) {
                        ctl_error("placementctl: --sibling-loss takes a fraction from 0 to 1, not '%s'",
                                  arg);
                        return -EINVAL;
                }
                break;
        case OPT_HELP:
        case OPT_VERSION:
        case _OPT_MAX:
                break;
        }
        return 0;
}

/* How many long options "--NAME[=VALUE]" abbreviates (getopt_long takes a prefix of one). */
static unsigned prefix_matches(const char *arg)
{
        size_t len = g_str_has_prefix(arg, "--") ? strcspn(arg + 2, "=") : 0;
        unsigned n = 0;

        for (unsigned o = 0; len && o < _OPT_MAX; o++)
                n += strncmp(option_info[o].name, arg + 2, len) == 0;
        return n;
}

/* What getopt_long found wrong with the option just read (arg, where it stood on the command line). */
static void say_bad_option(const char *arg, bool missing_value)
{
        if (missing_value && optopt > 0 && optopt < 0x100)
                ctl_error("placementctl: option '-%c' needs a value (see placementctl --help)", optopt);
        else if (missing_value)
                ctl_error("placementctl: option '%s' needs a value (see placementctl --help)", arg);
        else if (optopt >= 0x100 && optopt < 0x100 + _OPT_MAX)
                ctl_error("placementctl: option '--%s' takes no value", option_info[optopt - 0x100].name);
        else if (optopt > 0)
                ctl_error("placementctl: unknown option '-%c' (see placementctl --help)", optopt);
        else if (prefix_matches(arg) > 1)
                ctl_error("placementctl: ambiguous option '%s' (see placementctl --help)", arg);
        else
                ctl_error("placementctl: unknown option '%s' (see placementctl --help)", arg);
}

/* Options may come before or after the verb: getopt_long permutes, so the verb and its arguments are
 * what is left at optind. Returns 0 or -EINVAL after saying why. */
static int parse_options(int argc, char **argv, Ctl *c)
{
        struct option options[_OPT_MAX + 1] = {{0}};
        GString *shorts = g_string_new(":"); /* ':' a missing value apart from an unknown option */
        int r = 0, ch;

        for (unsigned o = 0; o < _OPT_MAX; o++) {
                const OptionInfo *i = &option_info[o];
                options[o] = (struct option){i->name, i->value ? required_argument : no_argument, NULL,
                                             i->short_name ? i->short_name : 0x100 + (int)o};
                if (i->short_name)
                        g_string_append_printf(shorts, "%c%s", i->short_name, i->value ? ":" : "");
        }
        opterr = 0; /* said here, where --json can carry it too */
        while (r == 0 && (ch = getopt_long(argc, argv, shorts->str, options, NULL)) >= 0) {
                unsigned o = _OPT_MAX;
                if (ch == '?' || ch == ':') {
                        say_bad_option(argv[optind - 1], ch == ':');
                        r = -EINVAL;
                        break;
                }
                for (unsigned k = 0; k < _OPT_MAX; k++)
                        if (options[k].val == ch)
                                o = k;
                r = o == _OPT_MAX ? -EINVAL : set_option(c, (CtlOption)o, optarg);
        }
        g_string_free(shorts, TRUE);
        return r;
}

/* The row for name; where a verb works both ways (plan), --topology picks the offline one. */
static const Verb *verb_find(const char *name, bool offline)
{
        const Verb *found = NULL;

        for (unsigned i = 0; i < G_N_ELEMENTS(verbs); i++) {
                bool row_offline = verbs[i].mode != VERB_ONLINE;
                if (strcmp(verbs[i].name, name))
                        continue;
                if (!found || ((found->mode != VERB_ONLINE) != offline && row_offline == offline))
                        found = &verbs[i];
        }
        return found;
}

/* What an online command needs of its options, told before anything is asked of a daemon: a usage
 * error is exit 2 whether one runs or not. */
static int check_online_options(const Verb *v, const Ctl *c)
{
        if (v->mode != VERB_ONLINE)
                return 0;
        if (strcmp(v->name, "plan") == 0 &&
            (!(c->given & CTL_OPT(VCPUS)) || !(c->given & CTL_OPT(MEMORY)))) {
                ctl_error("placementctl plan: give --vcpus=N and --memory=SIZE (or --topology= to "
                          "plan offline)");
                return -EINVAL;
        }
        if (strcmp(v->name, "map") == 0 && c->topology && !c->svg) {
                ctl_error("placementctl map: --topology= names the host to draw with --svg=FILE");
                return -EINVAL;
        }
        if (strcmp(v->name, "map") == 0 && c->svg && c->host && !c->topology) {
                ctl_error("placementctl map --svg: with -H, give --topology= that host's hwloc XML (lstopo "
                          "--of xml there)");
                return -EINVAL;
        }
        return 0;
}

/* The other form of a verb that works both ways (plan, explain: on the daemon, or offline with
 * --topology=) when it takes the option v does not; NULL otherwise. */
static const Verb *verb_other_form(const Verb *v, unsigned option)
{
        for (unsigned i = 0; i < G_N_ELEMENTS(verbs); i++)
                if (&verbs[i] != v && strcmp(verbs[i].name, v->name) == 0 &&
                    (verbs[i].mode == VERB_ONLINE) != (v->mode == VERB_ONLINE) &&
                    (verbs[i].options & option))
                        return &verbs[i];
        return NULL;
}

/* An option the verb does not take; for one its other form takes, what to do instead. */
static void say_foreign(const Verb *v, unsigned foreign)
{
        unsigned option = 1u << __builtin_ctz(foreign);
        const char *name = option_info[__builtin_ctz(foreign)].name;
        const Verb *other = verb_other_form(v, option);

        if (!other)
                ctl_error("placementctl %s: --%s does not apply to this command (see placementctl --help)",
                          v->name, name);
        else if (v->mode != VERB_ONLINE)
                ctl_error(
                    "placementctl %s: --%s does not apply with --topology=: offline, %s takes each domain "
                    "as a NAME:VCPUS:MEMORY argument (placementctl %s --topology=SOURCE new:2:1G); "
                    "without --topology=, it asks the running daemon and takes %s",
                    v->name, name, v->name, v->name, other->synopsis);
        else
                ctl_error(
                    "placementctl %s: --%s does not apply on the running daemon: it is for %s offline, "
                    "with --topology=SOURCE; on the daemon, %s takes %s (the daemon's own configuration "
                    "applies)",
                    v->name, name, v->name, v->name, v->synopsis);
}

static int check_call(const Verb *v, const Ctl *c, char **args, unsigned nargs)
{
        /* help answers whatever options come with it (an alias's --bus-address=, say), as git and
         * systemctl do */
        unsigned foreign = v->run == verb_help ? 0 : c->given & ~v->options;

        if (foreign) {
                say_foreign(v, foreign);
                return -EINVAL;
        }
        if (nargs < v->min_args || nargs > v->max_args) {
                if (v->max_args == 0)
                        ctl_error("placementctl %s: takes no arguments besides options", v->name);
                else
                        ctl_error("placementctl %s: needs %s", v->name, v->args);
                return -EINVAL;
        }
        for (unsigned i = 0; i < nargs; i++)
                if (!*args[i]) {
                        ctl_error("placementctl %s: argument %u is empty (expected %s)", v->name, i + 1,
                                  v->args);
                        return -EINVAL;
                }
        /* an online command's argument is a DOMAIN: libvirt's names are XML text, and sd-bus refuses to
         * send a string that is not UTF-8 ("Invalid argument"); said as the offline plan says it */
        for (unsigned i = 0; v->mode == VERB_ONLINE && i < nargs; i++)
                if (!g_utf8_validate(args[i], -1, NULL)) {
                        ctl_error("placementctl %s: '%s': domain name is not valid UTF-8", v->name, args[i]);
                        return -EINVAL;
                }
        return check_online_options(v, c);
}

static int dispatch(Ctl *c, char **args, unsigned nargs)
{
        const Verb *v = verb_find(c->verb, c->topology != NULL);
        int code;

        if (!v) {
                ctl_error("placementctl: unknown command '%s' (see placementctl --help)", c->verb);
                return EXIT_USAGE;
        }
        if (check_call(v, c, args, nargs) < 0)
                return EXIT_USAGE;
        if (v->mode == VERB_ONLINE && (code = ctl_bus_open(c)) != EXIT_OK)
                return code;
        code = v->run(c, args, nargs);
        c->sd = sd_bus_flush_close_unref(c->sd);
        return code;
}

/* text as stderr shows it: text_terminal_safe(), of each line apart with lines. Valid UTF-8 whatever
 * text holds (a domain name, a file name or an option with bytes that are not), so --json's error object
 * carries it as it is. Caller frees. */
static char *message_safe(bool lines, const char *text)
{
        g_auto(GStrv) parts = NULL;

        if (!lines)
                return text_terminal_safe(text);
        parts = g_strsplit(text, "\n", -1);
        for (char **p = parts; *p; p++) {
                char *safe = text_terminal_safe(*p);
                g_free(*p);
                *p = safe;
        }
        return g_strjoinv("\n", parts);
}

/* The last error said, as stderr shows it, for --json (ctl_error()); whether a JSON document went to
 * stdout. */
static char *last_error;
static bool json_printed;

/* The error of the first write to stdout that failed, once known (stdout_written()). */
static int stdout_errno;

/* Flushes stdout, keeping the error of a write that failed: a write into a full buffer fails inside
 * printf(), which leaves nothing for a later flush to tell. */
static void stdout_flush(void)
{
        errno = 0;
        if ((fflush(stdout) != 0 || ferror(stdout)) && !stdout_errno)
                stdout_errno = errno ? errno : EIO;
}

void ctl_print_json(const char *text)
{
        errno = 0;
        printf("%s\n", text);
        if (ferror(stdout) && !stdout_errno)
                stdout_errno = errno ? errno : EIO;
        stdout_flush();
        json_printed = true;
}

/* With --json, a command that failed without printing JSON prints {"error": what it said last on
 * stderr, "exit_code": code}: a script that reads stdout has one object whatever happened. */
static void print_json_error(const char *verb, int code)
{
        g_autofree char *said =
            g_strdup_printf("placementctl%s%s: failed", verb ? " " : "", verb ? verb : "");
        g_autofree char *unsaid = message_safe(false, said);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *text = NULL, *safe = NULL;

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "error");
        json_builder_add_string_value(b, last_error ? last_error : unsaid);
        json_builder_set_member_name(b, "exit_code");
        json_builder_add_int_value(b, code);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        text = json_to_text(root, TRUE);
        safe = text_json_safe(text); /* messages quote names: C1 controls and bidi marks escaped */
        ctl_print_json(safe);
}

static void message_write(bool lines, const char *text)
{
        g_autofree char *safe = message_safe(lines, text);

        fprintf(stderr, "%s\n", safe);
}

/* The error is kept as stderr shows it: the same text in the JSON error object. */
static void error_write(bool lines, const char *fmt, va_list ap)
{
        g_autofree char *text = g_strdup_vprintf(fmt, ap);

        g_free(last_error);
        last_error = message_safe(lines, text);
        fprintf(stderr, "%s\n", last_error);
}

void ctl_error(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        error_write(false, fmt, ap);
        va_end(ap);
}

void ctl_error_lines(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        error_write(true, fmt, ap);
        va_end(ap);
}

void ctl_warning(const char *fmt, ...)
{
        g_autofree char *text = NULL;
        va_list ap;

        va_start(ap, fmt);
        text = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        message_write(false, text);
}

int ctl_arg_position(const Ctl *c, const char *arg)
{
        for (int i = 0; i < c->argc; i++)
                if (arg >= c->argv[i] && arg <= c->argv[i] + strlen(c->argv[i]))
                        return i;
        return c->argc;
}

/* Whether --json is on a command line whose options did not parse (it may come after the bad one). */
static bool json_given(int argc, char **argv)
{
        for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
                if (!strcmp(argv[i], "--json"))
                        return true;
        return false;
}

static int run(Ctl *c, int argc, char **argv)
{
        if (parse_options(argc, argv, c) < 0) {
                c->json = c->json || json_given(argc, argv);
                return EXIT_USAGE;
        }
        if (c->given & CTL_OPT(HELP)) {
                /* placementctl VERB --help: that command's usage; a name no command has is an error */
                if (optind < argc && !usage_verb(stdout, argv[optind])) {
                        ctl_error("placementctl: unknown command '%s' (see placementctl --help)",
                                  argv[optind]);
                        return EXIT_USAGE;
                }
                if (optind >= argc)
                        usage(stdout);
                return EXIT_OK;
        }
        if (c->given & CTL_OPT(VERSION)) {
                printf("placementctl %s\n", PLACEMENTD_VERSION);
                return EXIT_OK;
        }
        if (optind >= argc) {
                usage(stderr);
                g_free(last_error);
                last_error = g_strdup("placementctl: no command given (see placementctl --help)");
                return EXIT_USAGE;
        }
        c->verb = argv[optind];
        return dispatch(c, argv + optind + 1, (unsigned)(argc - optind - 1));
}

/* Whether everything printed reached stdout: a write that failed (a full disk, a closed pipe's reader
 * gone) is said on stderr, as coreutils say it, and is a runtime failure; otherwise a script that saves
 * `placementctl list --json` would take an empty or cut file for an answer. */
static bool stdout_written(void)
{
        stdout_flush();
        if (!stdout_errno)
                return true;
        fprintf(stderr, "placementctl: write error: %s\n", g_strerror(stdout_errno));
        return false;
}

int main(int argc, char **argv)
{
        g_autoptr(GPtrArray) domains = g_ptr_array_new();
        g_autofree char **unpermuted = g_memdup2(argv, sizeof(char *) * (size_t)argc);
        Ctl c = {.domains = domains, .argv = unpermuted, .argc = argc};
        int code = run(&c, argc, argv);

        if (c.json && code != EXIT_OK && !json_printed)
                print_json_error(c.verb, code);
        g_clear_pointer(&last_error, g_free);
        if (!stdout_written() && code == EXIT_OK)
                code = EXIT_RUNTIME;
        return code;
}
