/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <systemd/sd-bus.h>

#include "config.h"
#include "cpuset.h"
#include "ledger.h"
#include "topology.h"

/* Exit codes shared by every placementctl command. */
#define EXIT_OK             0
#define EXIT_RUNTIME        1 /* the work failed: daemon unreachable, access denied, a failing call */
#define EXIT_USAGE          2 /* bad arguments or bad input */
#define EXIT_NOT_RUNNING    3 /* placementd is not on the bus */
#define EXIT_NO_SUCH_DOMAIN 4
#define EXIT_DENIED         5 /* the daemon refused: only root may do that */

/* Every option placementctl knows; a verb lists the ones it takes as a mask of CTL_OPT(). */
typedef enum CtlOption {
        OPT_JSON,
        OPT_BUS,
        OPT_BUS_ADDRESS,
        OPT_HOST,
        OPT_VCPUS,
        OPT_MEMORY,
        OPT_TOPOLOGY,
        OPT_CONFIG,
        OPT_POLICY,
        OPT_TRACE,
        OPT_CONNECT,
        OPT_MAP_ONLY,
        OPT_VIRTTYPE,
        OPT_SVG,
        OPT_HELP,
        OPT_VERSION,
        OPT_SIBLING_LOSS, /* added: simulate */
        OPT_DOMAIN,       /* added: offline plan/explain, repeatable */
        _OPT_MAX,
} CtlOption;
#define CTL_OPT(o) (1u << OPT_##o)

/* The command line, parsed once for every verb. */
typedef struct Ctl {
        const char *verb;
        unsigned given; /* CTL_OPT() of each option on the command line */
        bool json;
        const char *bus;     /* --bus: system (default) or session */
        const char *address; /* --bus-address */
        const char *host;    /* -H/--host: [USER@]HOST[:PORT], over SSH */
        unsigned vcpus;
        uint64_t memory;
        const char *topology, *config, *policy, *trace;
        const char *uri; /* --connect, for the libvirt verbs */
        const char *virttype;
        bool map_only;
        const char *svg;     /* --svg: draw the host map into this file */
        sd_bus *sd;          /* online verbs: the connection the dispatcher opened */
        double sibling_loss; /* --sibling-loss, simulate */
        GPtrArray *domains;  /* added: --domain=FILE.xml (char *), in order */
        char **argv;         /* added: the command line before getopt_long permuted it (argc entries) */
        int argc;
} Ctl;

/* Where arg (an argument or an option's value) stood on the command line before getopt_long permuted
 * it: its argv index, or argc when it is none of them. */
int ctl_arg_position(const Ctl *c, const char *arg);

/* Writes the message fmt makes and a newline to stderr, every control character, C1 control and bidi
 * override in it escaped (text_terminal_safe()): the messages of placementctl quote files, the daemon
 * and libvirt, whose text must not drive the terminal. */
void ctl_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* As ctl_error(), keeping the newlines between the lines of a message of several (config errors). The
 * last error either says is what --json prints of a command that fails ({"error", "exit_code"}). */
void ctl_error_lines(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* As ctl_error(), for what does not make the command fail: --json does not print it. */
void ctl_warning(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Prints one JSON document (text, already escaped) and a newline on stdout: --json's output. */
void ctl_print_json(const char *text);

/* Tables (columns.c). The columns a terminal gives valid UTF-8 s: two for a wide (East Asian) character,
 * none for a combining mark or another zero-width one, one for the rest, as virsh's tables count. */
unsigned ctl_text_width(const char *s);
/* Prints rows (char *[ncolumns] each, valid UTF-8) in columns as wide as their widest cell shows
 * (ctl_text_width()), one space apart, the last column as it is. */
void ctl_print_columns(GPtrArray *rows, unsigned ncolumns);

typedef int (*VerbRun)(Ctl *c, char **args, unsigned nargs);

/* Online verbs (cmd-online.c): ask the running daemon. */
int ctl_bus_open(Ctl *c);
/* Calls method with the arguments types, ...; on success *ret_reply holds the reply (may be NULL).
 * Returns an exit code, after saying why on failure. */
int ctl_call(const Ctl *c, sd_bus *bus, const char *method, sd_bus_message **ret_reply, const char *types,
             ...);
int ctl_read_string(sd_bus_message *reply, const char **ret);
/* --svg=FILE (cmd-map-svg.c): the host map drawn by lstopo. What can fail before the map or plan is printed
 * is done first, so that a command that fails prints none: FILE opened, and for map the topology loaded and
 * the daemon's map read against it. */
typedef struct MapSvg MapSvg;
void map_svg_free(MapSvg *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MapSvg, map_svg_free)
/* FILE opened for the picture (host_svg_open()). Returns an exit code, after saying why on failure. */
int map_svg_open(const Ctl *c, MapSvg **ret);
/* map --svg: the topology loaded (--topology, or this host), the daemon's map as data read and matched to
 * it, then FILE opened. Returns an exit code, after saying why on failure. */
int map_svg_online_prepare(const Ctl *c, MapSvg **ret);
/* Reads the daemon's map as data again: *ret_same says whether it is the one to be drawn; when not, the
 * new one is to be drawn. Returns an exit code. */
int map_svg_online_reread(const Ctl *c, MapSvg *m, bool *ret_same);
/* The daemon's map as data that map_svg_online_prepare() read: map --json prints the map drawn. */
const char *map_svg_online_json(const MapSvg *m);
/* The text map the daemon's map as data holds ("text", what GetHostMap answers, from the same call), NULL
 * when it holds none (caller frees). */
char *map_svg_online_text(const MapSvg *m);
/* Draws the prepared map into FILE. Returns an exit code. */
int map_svg_online(const Ctl *c, MapSvg *m);
/* plan --topology --svg: the ledger's final map drawn into FILE (map_svg_open()). Returns an exit code. */
int map_svg_offline(const Ctl *c, MapSvg *m, const Topology *t, const Ledger *l, const CpuSet *reserved);
int verb_status(Ctl *c, char **args, unsigned nargs);
int verb_list(Ctl *c, char **args, unsigned nargs);
int verb_show(Ctl *c, char **args, unsigned nargs);
int verb_snippet(Ctl *c, char **args, unsigned nargs);
int verb_explain(Ctl *c, char **args, unsigned nargs);
int verb_map(Ctl *c, char **args, unsigned nargs);
int verb_plan(Ctl *c, char **args, unsigned nargs);
int verb_reload(Ctl *c, char **args, unsigned nargs);
int verb_rebalance(Ctl *c, char **args, unsigned nargs);
int verb_replace(Ctl *c, char **args, unsigned nargs);
/* Offline verbs (cmd-offline.c): the engine on a given topology, no daemon. */
/* The settings: --config's (or the defaults), with --policy on top. Returns 0 or -EINVAL after saying why,
 * under the verb's name. */
int ctl_load_config(const Ctl *c, Config **ret);
/* Warns on stderr of CPUs config's lists name that t lacks (config_unknown_cpus()). */
void ctl_warn_unknown_cpus(const Ctl *c, const Config *config, const Topology *t);
int verb_topology(Ctl *c, char **args, unsigned nargs);
int verb_plan_offline(Ctl *c, char **args, unsigned nargs);
/* simulate (cmd-simulate.c): a trace replayed through the engine and the healer. */
int verb_simulate(Ctl *c, char **args, unsigned nargs);
int verb_explain_offline(Ctl *c, char **args, unsigned nargs);
/* Guest CPU models (cmd-cpu.c): libvirt directly, no daemon. */
int verb_cpu_advice(Ctl *c, char **args, unsigned nargs);
int verb_cpu_baseline(Ctl *c, char **args, unsigned nargs);
