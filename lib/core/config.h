/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Config: /etc/placementd.conf, an INI file ([Section] Key=value) read with GKeyFile into a plain struct.
 * Every key lives in one table (config.c) with its parser, default and help; unknown sections or keys
 * and invalid values are errors, all of them reported together, each naming the file, the line, the key,
 * the value refused (escaped and cut to 64 bytes; never [Libvirt] URI='s, which may hold a password) and
 * what is allowed. Checks that need the host (ReservedCPUs naming CPUs it lacks) are the caller's. A failed
 * load returns no config at all, so a caller that already has one keeps it. Keys flagged in the table
 * as needing a restart ([DBus] Bus=) are not applied by a reload: config_reloadable() keeps their
 * running values and config_restart_changes() names what was left for a restart.
 */

#include <glib.h>
#include <stdbool.h>

#include "plan.h"
#include "topology.h"

/* A configuration file is a few KiB; far larger is not one. */
#define CONFIG_FILE_MAX (1u << 20)

typedef enum BusKind {
        BUS_SYSTEM,
        BUS_SESSION,
        BUS_NONE,
        _BUS_MAX,
} BusKind;

typedef struct Config {
        char *path; /* where it came from; NULL for built-in defaults */
        PlacementParams placement;
        bool apply;          /* [Placement] Apply= */
        bool memory_binding; /* [Placement] MemoryBinding= */
        bool place_running;  /* [Placement] PlaceRunning= */
        unsigned reconcile_sec;
        char *uri; /* [Libvirt] URI= */
        BusKind bus;
        char *metrics_listen; /* [Metrics] Listen=ADDRESS:PORT, NULL = off */
        /* Healing after departures and measured load (docs/running.md). */
        bool heal;                   /* [Placement] Heal= */
        unsigned heal_max_moves;     /* [Placement] HealMaxMoves=: moves per heal pass */
        unsigned heal_interval_sec;  /* [Placement] HealInterval=: debounce, and the spacing of passes */
        uint64_t heal_memory_budget; /* [Placement] HealMemoryBudget=: bytes changing nodes per pass */
        unsigned load_interval_sec;  /* [Placement] LoadInterval=: seconds between samples, 0 = off */
        unsigned load_warmup_sec;    /* [Placement] LoadWarmup=: a domain's first seconds set aside */
} Config;

/* Splits "ADDRESS:PORT" or "[IPV6]:PORT" into a host and a port (1-65535). Returns 0 or -EINVAL. */
int config_split_listen(const char *listen, char **ret_host, unsigned *ret_port);

Config *config_new_default(void);

/* What c's CPU lists name that host_cpus (OS indexes) lacks, one message a list ("ReservedCPUs= names
 * CPUs this host does not have (64-127), ignoring those"); empty when nothing. Free with
 * g_ptr_array_unref(). */
GPtrArray *config_unknown_cpus(const Config *c, const CpuSet *host_cpus);
/* What of c this host makes useless, one message each: config_unknown_cpus(), and a MemoryReserve= that
 * leaves no node any memory ("MemoryReserve=1000.0 TiB is at least every node's memory (the largest has
 * 59.6 GiB): no domain's memory can be placed"). Free with g_ptr_array_unref(). */
GPtrArray *config_host_warnings(const Config *c, const Topology *t);
void config_free(Config *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Config, config_free)

/* Returns 0, -ENOENT when the file does not exist, or another negative errno with *ret_error set: the file
 * must be a regular file of at most CONFIG_FILE_MAX bytes without NUL bytes (file-read.h), and not
 * writable by every user (-EPERM): whoever writes it steers the daemon. */
int config_load_file(const char *path, Config **ret, char **ret_error);
/* config_load_file(), except that a file that does not exist, when it need not (the default path rather
 * than one the operator named), means the built-in defaults: returns 1 then, with *ret_note (when
 * ret_note is not NULL) saying so, "PATH not found: built-in defaults". */
int config_load_or_defaults(const char *path, bool must_exist, Config **ret, char **ret_note,
                            char **ret_error);
/* config_load_or_defaults(), and in *ret_public (when not NULL) the same errors without the values
 * refused ("[Placement] Fit: invalid value; ..."), for the texts every local user reads: a value may be
 * a secret typed into the wrong key of a file only root reads. */
int config_load_or_defaults_public(const char *path, bool must_exist, Config **ret, char **ret_note,
                                   char **ret_error, char **ret_public);
/* Same, from text; name is used in messages. *ret_error holds one problem a line, in line order: at most
 * CONFIG_ERRORS_MAX, then "NAME: ... and N more problems". */
#define CONFIG_ERRORS_MAX 100
int config_load_data(const char *data, const char *name, Config **ret, char **ret_error);

const char *bus_kind_to_string(BusKind b);

/* The keys a reload cannot apply (they need a restart) whose values differ from old to new, each as
 * "[Section] Key=NEW (running with OLD)"; a NULL-terminated array, empty when there are none. */
char **config_restart_changes(const Config *old, const Config *new);
/* A copy of new that keeps old's values of the keys a reload cannot apply: what a reload installs.
 * NULL only on a bug (new's values always load back). */
Config *config_reloadable(const Config *old, const Config *new);

/* MemoryTiers= as written: the lower-tier kinds of mask (1 << NodeKind bits), comma-separated. */
char *config_format_memory_tiers(unsigned mask);

/* Writes the effective configuration as an INI file (for `placementctl config` and tests). */
char *config_format(const Config *c);
