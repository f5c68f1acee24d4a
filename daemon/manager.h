/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Manager: the daemon's state and its reactions. It owns the libvirt connection (reconnecting with
 * backoff when libvirtd goes away), hears lifecycle and tunable events, places each domain with the
 * policy, applies the plan through the libvirt adapter, keeps the ledger and one Decision per running
 * domain, and reconciles with what really runs (at start, after a reconnect, and periodically).
 */

#include <event2/event.h>

#include "config.h"
#include "cpu-features.h"
#include "decision.h"
#include "ledger.h"
#include "load.h"
#include "topology.h"

typedef struct Manager Manager;
typedef struct VirtConn VirtConn; /* virt-conn.h */

/* Event-to-pin latency histogram bounds, in seconds (Prometheus "le" buckets; +Inf implied). */
#define MANAGER_LATENCY_BUCKETS 12
extern const double manager_latency_bounds[MANAGER_LATENCY_BUCKETS];

/* Counters since the daemon started. */
typedef struct ManagerStats {
        uint64_t decisions[_POLICY_MAX][_DECISION_RESULT_MAX]; /* by the plan's policy and the result */
        uint64_t latency_buckets[MANAGER_LATENCY_BUCKETS + 1]; /* not cumulative; last is +Inf */
        uint64_t latency_count;
        double latency_sum; /* seconds */
        uint64_t reloads, reload_failures;
        /* healing: passes run, domains moved, bytes of memory those moves put on other nodes, domains
         * the passes read from libvirt (to plan them, and again before a move) */
        uint64_t heal_passes, heal_moves, heal_memory_moved, heal_reads;
        uint64_t heal_thread_moves; /* of heal_moves: host-side threads alone (vCPUs and memory stay) */
        /* D-Bus calls of non-root callers that the per-user limit counts, and of them those it refused */
        uint64_t bus_calls_limited, bus_calls_refused;
} ManagerStats;

typedef struct ManagerCallbacks {
        /* A decision was made or changed (d) or a domain was forgotten (d == NULL, uuid and name given). */
        void (*decision_changed)(Manager *m, const Decision *d, const char *uuid, const char *name,
                                 void *userdata);
        /* The libvirt connection came up or went away. */
        void (*connection_changed)(Manager *m, bool connected, void *userdata);
} ManagerCallbacks;

/* Takes ownership of topology and config. uri overrides config->uri when not NULL. */
Manager *manager_new(struct event_base *base, Topology *topology, Config *config, const char *uri);
void manager_free(Manager *m);

void manager_set_callbacks(Manager *m, const ManagerCallbacks *cb, void *userdata);

/*
 * The directory of the apply journal (apply-journal.c: the plans whose pins are applied while no record
 * in the domain names them yet), made when missing; NULL: none. Before manager_start(): what a placementd
 * before this one left there is read, and the first reconcile places those domains anew when their pins
 * are the plans'. A directory that cannot be made or is not this process's user's alone is said and not
 * used.
 */
void manager_set_journal(Manager *m, const char *dir);
/* The apply journal's directory (NULL: none) of the URI the next manager_set_config() may switch to:
 * opened there once the old URI's domains are forgotten (their entries stay for a daemon on that URI),
 * before it connects. Unused when the URI stays. */
void manager_set_next_journal(Manager *m, const char *dir);

/* Connects now, or schedules retries with backoff when libvirt is not there. Returns 0. */
int manager_start(Manager *m);

/* Replaces the config (the manager takes ownership). Later decisions use it; re-arms the periodic
 * reconcile. When the URI changed, the old connection's domains are forgotten (they are another host's)
 * and the new URI's connection is the one manager_open_next() opened for it, else one opened now. */
void manager_set_config(Manager *m, Config *config);

/* How long a reload's new URI may take to open before the reload is refused: less than a D-Bus client
 * waits for Reload()'s answer (busctl 25 s, placementctl 30 s). */
#define MANAGER_NEXT_OPEN_SEC 20u

/* Opens of libvirt URIs given up on (a reload's that took too long, a URI changed while opening) stay
 * blocked in libvirt, with their thread and socket, as long as libvirt blocks them. While one of a libvirtd
 * (by instance_lock_key()) is, no other open of that libvirtd starts: manager_open_next() refuses at once,
 * the running URI's connection waits its backoff; and while this many are in all, no open starts. So a
 * libvirtd that accepts and never answers cannot make reloads pile up threads and sockets. The test
 * driver (in this process) is never held back. */
#define MANAGER_ABANDONED_OPENS_MAX 8u

/* error: NULL when the URI opened, else why not ("Cannot connect to URI: libvirt's message", the URI as
 * manager_uri_public() shows one); shown: the same for every local user to read, without libvirt's message,
 * which may quote what the URI names (a file's line, a key file's or socket's path, a user name). */
typedef void (*ManagerNextDone)(Manager *m, const char *error, const char *shown, void *userdata);
/*
 * Opens uri ahead of a reload that switches to it, the running connection and its domains untouched: in a
 * thread, as every connection is opened, so that the loop runs on meanwhile. done runs once, from the
 * loop: when uri opened, manager_set_config() with a configuration of that URI takes this connection; when
 * it did not, or gave no answer within MANAGER_NEXT_OPEN_SEC s, nothing changed. Drops one opened or being
 * opened before (manager_drop_next()). Returns 0, or -EBUSY with *ret_error (and done not called) while an
 * open of uri's libvirtd given up on, or MANAGER_ABANDONED_OPENS_MAX in all, are still blocked.
 */
int manager_open_next(Manager *m, const char *uri, ManagerNextDone done, void *userdata, char **ret_error);
/* Drops what manager_open_next() opened or is opening; its done is not called. */
void manager_drop_next(Manager *m);

const Config *manager_config(const Manager *m);
const Topology *manager_topology(const Manager *m);
const Ledger *manager_ledger(const Manager *m);
bool manager_connected(const Manager *m);
const char *manager_uri(const Manager *m);
/* manager_uri() without its user name, password, query and fragment (uri-public.h), for every local user. */
const char *manager_uri_public(const Manager *m);
/* The libvirt connection (virt-conn.h), NULL while not connected. Borrowed. */
VirtConn *manager_connection(const Manager *m);
unsigned manager_reconnects(const Manager *m);

/* By a running domain's ID, else by UUID in any case, else by exact name (virsh's rule); NULL when unknown
 * or empty. */
const Decision *manager_lookup(const Manager *m, const char *name_or_uuid);
/* Every decision, sorted by name (the array does not own them). */
GPtrArray *manager_list(const Manager *m);
/* Counts of decisions by result, into counts[_DECISION_RESULT_MAX]. */
void manager_count(const Manager *m, unsigned *counts);

/* What the policy would do for a new domain now; changes nothing. Caller frees. */
Plan *manager_plan(const Manager *m, unsigned vcpus, uint64_t memory);

/* Compares what runs with the ledger now: places domains it missed, releases ones that stopped, adopts
 * pins that drifted. */
void manager_reconcile(Manager *m);

/* Places one domain again (forgetting its decision first). Returns 0, -ENOENT when unknown or gone,
 * -ENOTCONN without libvirt. */
int manager_replace(Manager *m, const char *name_or_uuid, char **ret_error);

/* Host CPU time of every running domain: a table from UUID to DomainCpuStats (caller unrefs). -ENOTCONN
 * without libvirt, -ENOTSUP when the driver has no such statistics. */
int manager_cpu_stats(Manager *m, GHashTable **ret, char **ret_error);

/* CPU model advice for one running domain (by UUID). -ENOTCONN without libvirt, -ENOENT when it is gone,
 * else what virt_cpu_advise() returns. */
int manager_cpu_advice(Manager *m, const char *uuid, CpuAdvice **ret, char **ret_error);

const ManagerStats *manager_stats(const Manager *m);
/* Counts a configuration reload (SIGHUP or Reload()). */
void manager_note_reload(Manager *m, bool ok);
/* Counts a D-Bus call the per-user limit charged, refused or not. */
void manager_note_bus_call(Manager *m, bool refused);

/* The host map (hostmap.h) of what the ledger counts, and a line for each domain whose plan did not take
 * (the map shows the pins that really run) and each advisory one it shows ("advised: NAME runs as shown;
 * ..." or, one that runs unpinned and is counted as advised, "advised: NAME is shown as advised
 * (Apply=no), not applied: ..."). Caller frees. */
char *manager_host_map(const Manager *m);
/* The same as JSON (lib/core/hostmap-json.h) with "text": the map above, "failed": [{"domain",
 * "error"}] and "advised": [{"domain", "shown": "runs" or "advice"}]; caller frees. */
char *manager_host_map_json(const Manager *m);

/* Human status line for sd_notify STATUS= and `placementctl status`. Caller frees. */
char *manager_status(const Manager *m);

/*
 * The manual heal pass (healer.c), run now: each domain placementd placed is planned with its own
 * request (constraints and load), only moves the host gains from are taken, at most max_moves of them
 * within HealMemoryBudget=, no cool-down; each move a live re-pin. Returns the number of moves and a
 * report (one line per move, or why nothing moved) in *ret_report.
 */
unsigned manager_rebalance(Manager *m, unsigned max_moves, char **ret_report);

/* Folds one bulk statistics sample (UUID -> DomainCpuStats, virt-stats.h) into the measured load; when
 * a domain becomes busy or idle, heals soon. */
void manager_note_stats(Manager *m, GHashTable *stats);
/* The measured load of the domain with uuid; NULL while unknown. */
const DomainLoad *manager_load(const Manager *m, const char *uuid);

/*
 * Healing (docs/running.md): a pass HealInterval= seconds after the first of a burst of departures
 * (debounced: one pass for the burst), then every HealInterval= while moves are left. Does nothing when
 * Heal=no, in advisory mode or without libvirt. why names what freed up, for the log.
 */
void manager_heal_soon(Manager *m, const char *why);
/* The same pass at the loop's next turn, for a measurement that changed a domain's load class: every
 * domain's load comes in one bulk sample, so there is no burst to wait for (a pass already armed runs
 * as armed). */
void manager_heal_now(Manager *m, const char *why);
/* One heal pass now: at most HealMaxMoves= moves. Returns the moves made; *ret_report (may be NULL)
 * gets one line per move or why nothing moved. */
unsigned manager_heal(Manager *m, char **ret_report);
