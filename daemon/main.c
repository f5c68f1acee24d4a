/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementd: process setup, signals, sd_notify; the work is in the manager. */
#include <errno.h>
#include <event2/thread.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "check-config.h"
#include "config.h"
#include "dbus-address.h"
#include "dbus.h"
#include "decision-text.h"
#include "demo.h"
#include "event-cleanup.h"
#include "instance-lock.h"
#include "log.h"
#include "manager.h"
#include "metrics.h"
#include "ret-error.h"
#include "topology.h"
#include "topology-load.h"
#include "trace.h"
#include "uri-public.h"
#include "virt-event.h"

#define DEFAULT_CONFIG          SYSCONFDIR "/placementd.conf"
#define METRICS_BACKOFF_MAX_SEC 30u

typedef struct Args {
        const char *config;
        const char *uri;
        const char *topology;
        const char *demo;
        const char *bus;
        const char *bus_address;
        bool foreground;
        bool check_config; /* --check-config: check the file, then exit */
} Args;

typedef struct Daemon {
        struct event_base *base;
        Manager *manager;
        Demo *demo;
        BusService *bus;
        MetricsServer *metrics;
        StatsCache *stats;    /* domain CPU time for metrics and GetDecisionsJSON */
        char *metrics_listen; /* the configured [Metrics] Listen= (NULL: off) */
        char *metrics_error;  /* why metrics_listen is not bound yet (metrics NULL), retried; NULL: served */
        char *metrics_shown;  /* metrics_error as every local user reads it (STATUS=, MetricsError) */
        bool metrics_given_up; /* metrics_error is one waiting does not cure: not retried until a reload */
        struct event *metrics_retry;
        unsigned metrics_backoff_sec;
        const char *config_path;
        bool config_explicit;
        const char *bus_chosen; /* the option that chose the bus over [DBus] Bus= (--bus, --bus-address) */
        bool uri_chosen;        /* --connect chose the libvirt URI over [Libvirt] URI= */
        struct event *sigterm, *sigint, *sighup, *watchdog;
        struct event *ready_ev; /* READY=1 after MAIN_READY_WAIT_SEC when libvirt has not answered */
        bool ready;             /* READY=1 sent */
        bool name_taken;        /* another placementd serves the bus name: exit 1 */
        bool bad_address;       /* --bus-address is not one sd-bus can use: exit 2 */
        int instance_lock;      /* the held lock of the libvirt URI (instance-lock.h), or -1 */
        char *reload_failure;   /* why the last reload failed (first line), NULL once one succeeded */
        /* a reload waiting for its new URI to open (reload()): its configuration, the keys it leaves for a
         * restart, what it says of a missing default file; NULL when none waits */
        Config *waiting;
        char **waiting_restart;
        char *waiting_note;
} Daemon;

static void usage(FILE *f)
{
        fputs("Usage: placementd [OPTIONS...]\n"
              "\n"
              "NUMA- and core-aware vCPU placement for libvirt domains.\n"
              "\n"
              "  --config=FILE       configuration file (default " DEFAULT_CONFIG ")\n"
              "  --connect=URI       libvirt URI (default: [Libvirt] URI=, qemu:///system)\n"
              "  --topology=SOURCE   host (default), an hwloc XML file, or synthetic:DESC\n"
              "  --foreground        do not detach when started outside systemd\n"
              "  --log-level=LEVEL   err, warning, notice, info (default), debug\n"
              "  --bus=BUS           system, session or none (default: [DBus] Bus=, system)\n"
              "  --bus-address=ADDR  serve on the D-Bus at ADDR instead\n"
              "  --demo=TRACE        start and stop test-driver domains from TRACE, then exit\n"
              "  --check-config      check the configuration file (with --topology=, against the\n"
              "                      host), print its problems and exit 2, or exit 0\n"
              "  --help, --version\n",
              f);
}

/* Returns 1 to run, 0 when --help or --version answered already, or -EINVAL. */
static int parse_args(int argc, char **argv, Args *a)
{
        static const struct option options[] = {
            {"config", required_argument, NULL, 'c'},
            {"connect", required_argument, NULL, 'C'},
            {"topology", required_argument, NULL, 't'},
            {"foreground", no_argument, NULL, 'f'},
            {"log-level", required_argument, NULL, 'l'},
            {"demo", required_argument, NULL, 'd'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {"bus", required_argument, NULL, 'b'},
            {"bus-address", required_argument, NULL, 'B'},
            {"check-config", no_argument, NULL, 'k'},
            {},
        };
        int c, level;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        if (!*optarg) {
                                fprintf(stderr, "placementd: --config is empty (give a file, such as %s)\n",
                                        DEFAULT_CONFIG);
                                return -EINVAL;
                        }
                        a->config = optarg;
                        break;
                case 'C':
                        if (!*optarg) {
                                fprintf(stderr,
                                        "placementd: --connect is empty (give a libvirt URI, such as "
                                        "qemu:///system)\n");
                                return -EINVAL;
                        }
                        a->uri = optarg;
                        break;
                case 't':
                        a->topology = optarg;
                        break;
                case 'f':
                        a->foreground = true;
                        break;
                case 'l':
                        if ((level = log_level_from_string(optarg)) < 0) {
                                fprintf(stderr,
                                        "placementd: unknown log level '%s' (err, warning, notice, info, "
                                        "debug)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        log_set_max_level(level);
                        break;
                case 'd':
                        a->demo = optarg;
                        a->foreground = true;
                        break;
                case 'b':
                        if (strcmp(optarg, "system") && strcmp(optarg, "session") &&
                            strcmp(optarg, "none")) {
                                fprintf(stderr, "placementd: unknown bus '%s' (system, session, none)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        a->bus = optarg;
                        break;
                case 'B':
                        if (!dbus_address_valid(optarg)) {
                                fprintf(stderr,
                                        "placementd: invalid D-Bus address '%s' (TRANSPORT:KEY=VALUE[,...], "
                                        "such "
                                        "as unix:path=/run/dbus/system_bus_socket)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        a->bus_address = optarg;
                        break;
                case 'k':
                        a->check_config = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case 'V':
                        printf("placementd %s\n", PLACEMENTD_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "placementd: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (a->bus && a->bus_address) {
                fprintf(stderr, "placementd: --bus and --bus-address both choose the bus; give one\n");
                return -EINVAL;
        }
        return 1;
}

/* The unit's status line, and MetricsError on the bus: said wherever the daemon's state is read. */
static void notify_status(Daemon *d)
{
        g_autofree char *status = manager_status(d->manager);
        g_autofree char *metrics_state =
            d->metrics_shown
                ? g_strdup_printf("%s, %s", d->metrics_shown,
                                  d->metrics_given_up ? "until a reload changes it" : "retrying")
                : NULL;
        g_autofree char *metrics =
            metrics_state ? g_strdup_printf("; metrics not served: %s", metrics_state) : NULL;

        g_autofree char *waiting = d->waiting ? uri_public_marked(d->waiting->uri) : NULL;

        bus_service_metrics_state(d->bus, metrics_state);

        if (waiting)
                sd_notifyf(0, "STATUS=%s%s; a reload waits for %s to open", status, metrics ? metrics : "",
                           waiting);
        /* systemctl reload cannot wait for the outcome: systemctl status says it until a reload works */
        else if (d->reload_failure)
                sd_notifyf(0, "STATUS=%s%s; the last reload failed, the old configuration runs: %s", status,
                           metrics ? metrics : "", d->reload_failure);
        else
                sd_notifyf(0, "STATUS=%s%s", status, metrics ? metrics : "");
}

static void on_decision(Manager *m, const Decision *dec, const char *uuid, const char *name, void *userdata)
{
        Daemon *d = userdata;

        bus_service_decision_changed(d->bus, uuid, name,
                                     dec ? decision_result_to_string(dec->result) : "stopped");
        if (d->demo) {
                if (dec) {
                        g_autofree char *text = decision_to_text(manager_topology(m), dec);
                        fputs(text, stdout);
                } else {
                        printf("%s: stopped, its cores and memory are free again\n", name);
                }
                fflush(stdout);
        }
        notify_status(d);
}

/*
 * systemd hears READY=1 once placementd follows libvirt's events (its first connection), so that a unit
 * ordered after it (libvirt-guests, resuming the guests it saved at shutdown) starts domains placementd
 * sees start; or after MAIN_READY_WAIT_SEC when libvirt does not answer, so that nothing waits on it.
 */
#define MAIN_READY_WAIT_SEC 5

static void send_ready(Daemon *d)
{
        if (d->ready)
                return;
        d->ready = true;
        if (d->ready_ev)
                evtimer_del(d->ready_ev);
        sd_notify(0, "READY=1");
}

static void on_ready_wait(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        send_ready(arg);
}

static void on_connection(Manager *m, bool connected, void *userdata)
{
        Daemon *d = userdata;
        (void)m;

        if (connected)
                send_ready(d);
        notify_status(d);
        bus_service_state_changed(d->bus);
        if (connected)
                stats_cache_refresh(d->stats);
        if (connected && d->demo)
                demo_start(d->demo);
}

/* Every bulk statistics sample also measures load. */
static void on_stats(GHashTable *table, void *userdata)
{
        Daemon *d = userdata;
        manager_note_stats(d->manager, table);
}

/* A [Metrics] Listen= failure that waiting does not cure: not ADDRESS:PORT, a name that names nothing, an
 * address the socket refuses (a link-local one without its interface), an address family the unit forbids
 * (RestrictAddressFamilies=), a privileged port. At start it exits 2 (which the unit does not restart), on
 * reload it is refused. An address not configured yet, a port in use (by anyone: a local user may hold
 * it) or a name server not reached pass: the daemon runs on without metrics and binds again with backoff. */
static bool listen_error_is_configuration(int r)
{
        return r == -EINVAL || r == -ENXIO || r == -EAFNOSUPPORT || r == -EPERM || r == -EACCES;
}

/* Both ADDRESS:PORT with the same port. */
static bool same_port(const char *a, const char *b)
{
        unsigned pa = 0, pb = 0;
        return a && b && config_split_listen(a, NULL, &pa) == 0 && config_split_listen(b, NULL, &pb) == 0 &&
               pa == pb;
}

/* Whether metrics_server_new() failed (errno err) to resolve the host of Listen=: a name that names
 * nothing, or a name server not reached. */
static bool listen_error_is_resolve(int err)
{
        return err == ENXIO || err == EAGAIN;
}

/*
 * What every local user reads (ReloadError, STATUS=, Reload's answer) of a Listen= value that failed
 * (errno err): the key and what went wrong, not the value, which may be a secret typed into the wrong key
 * of a file only root reads (placementd.conf(5)); the log has the whole of it.
 */
static char *listen_error_public(const char *listen, int err)
{
        if (listen_error_is_resolve(err))
                return g_strdup("[Metrics] Listen: cannot resolve the address (the log has it)");
        if (config_split_listen(listen, NULL, NULL) < 0)
                return g_strdup("[Metrics] Listen: not ADDRESS:PORT (the log has it)");
        return g_strdup_printf("[Metrics] Listen: cannot bind the address: %s (the log has it)",
                               g_strerror(err > 0 ? err : EADDRNOTAVAIL));
}

/* The running Listen= not served (error, errno err) as every local user reads it (MetricsError,
 * STATUS=): an address that resolved, which the daemon binds again, is shown; a host name that did not
 * resolve is not (placementd.conf(5)). */
static char *listen_error_shown(const char *listen, int err, const char *error)
{
        return listen_error_is_resolve(err) ? listen_error_public(listen, err) : g_strdup(error);
}

/*
 * The metrics listener for want (NULL: off), bound before the running one is dropped, so that a failure
 * leaves it serving. Only when want reuses the running port must the running one close first; it is
 * bound again if want cannot be. Returns 0 with *ret (the running server when want is unchanged), or a
 * negative errno (metrics_server_new()'s) with *ret_error.
 */
static void metrics_unbound(Daemon *d, const char *listen, char *error, int err);

static int metrics_prepare(Daemon *d, const char *want, MetricsServer **ret, char **ret_error)
{
        g_autofree char *error = NULL;
        int err = 0;

        *ret = NULL;
        if (g_strcmp0(want, d->metrics_listen) == 0) {
                *ret = d->metrics;
                return 0;
        }
        if (!want)
                return 0;
        *ret = metrics_server_new(d->base, d->manager, d->stats, want, &error);
        err = errno;
        if (!*ret && d->metrics && same_port(want, d->metrics_listen)) {
                metrics_server_free(d->metrics);
                g_clear_pointer(&error, g_free);
                *ret = metrics_server_new(d->base, d->manager, d->stats, want, &error);
                err = errno;
                if (!*ret) {
                        g_autofree char *again = NULL;
                        d->metrics =
                            metrics_server_new(d->base, d->manager, d->stats, d->metrics_listen, &again);
                        if (!d->metrics) /* taken meanwhile: bound again when it is free */
                                metrics_unbound(d, d->metrics_listen, g_steal_pointer(&again), errno);
                } else {
                        d->metrics = NULL;
                }
        }
        if (!*ret) {
                *ret_error = g_strdup_printf("[Metrics] Listen=%s: %s", want, error);
                return err > 0 ? -err : -EADDRNOTAVAIL;
        }
        return 0;
}

static void log_serving(const char *listen)
{
        log_info("Serving metrics on http://%s%s/metrics", *listen == ':' ? "*" : "", listen);
}

/* Installs what metrics_prepare() made. */
static void metrics_commit(Daemon *d, MetricsServer *s, const char *listen)
{
        if (s == d->metrics && g_strcmp0(listen, d->metrics_listen) == 0)
                return;
        evtimer_del(d->metrics_retry);
        d->metrics_backoff_sec = 1;
        d->metrics_given_up = false;
        g_clear_pointer(&d->metrics_error, g_free);
        g_clear_pointer(&d->metrics_shown, g_free);
        if (d->metrics != s)
                metrics_server_free(d->metrics);
        d->metrics = s;
        if (listen != d->metrics_listen) {
                g_free(d->metrics_listen);
                d->metrics_listen = g_strdup(listen);
        }
        if (listen)
                log_serving(listen);
        else
                log_info("Metrics are off");
}

static void metrics_schedule(Daemon *d)
{
        evtimer_add(d->metrics_retry, &(struct timeval){.tv_sec = d->metrics_backoff_sec});
        d->metrics_backoff_sec = MIN(d->metrics_backoff_sec * 2, METRICS_BACKOFF_MAX_SEC);
}

/*
 * listen is configured but cannot be bound now (error, taken, says why; errno err): the daemon runs on
 * without metrics, a timer binds it again with backoff. Whatever listened before is closed: what runs is
 * the configured Listen=, or nothing.
 */
static void metrics_unbound(Daemon *d, const char *listen, char *error, int err)
{
        if (listen != d->metrics_listen) {
                g_free(d->metrics_listen);
                d->metrics_listen = g_strdup(listen);
        }
        g_clear_pointer(&d->metrics, metrics_server_free);
        d->metrics_given_up = false;
        g_free(d->metrics_error);
        d->metrics_error = error;
        g_free(d->metrics_shown);
        d->metrics_shown = listen_error_shown(listen, err, error);
        evtimer_del(d->metrics_retry);
        d->metrics_backoff_sec = 1;
        log_error("%s; running without metrics, binding again in %u s", error, d->metrics_backoff_sec);
        metrics_schedule(d);
}

static void on_metrics_retry(evutil_socket_t fd, short what, void *arg)
{
        Daemon *d = arg;
        g_autofree char *error = NULL;
        (void)fd;
        (void)what;

        if (!d->metrics_listen || d->metrics)
                return;
        d->metrics = metrics_server_new(d->base, d->manager, d->stats, d->metrics_listen, &error);
        if (!d->metrics) {
                int err = errno;
                g_autofree char *why = g_strdup_printf("[Metrics] Listen=%s: %s", d->metrics_listen, error);
                bool changed = g_strcmp0(why, d->metrics_error) != 0;

                g_free(d->metrics_error);
                d->metrics_error = g_steal_pointer(&why);
                g_free(d->metrics_shown);
                d->metrics_shown = listen_error_shown(d->metrics_listen, err, d->metrics_error);
                if (err > 0 && listen_error_is_configuration(-err)) {
                        /* the address came up, and the port is one waiting does not make bindable (a
                         * privileged one): retrying would fail for ever */
                        d->metrics_given_up = true;
                        log_error("%s; running without metrics until a reload changes it", d->metrics_error);
                        notify_status(d);
                        return;
                }
                if (changed)
                        log_error("%s; running without metrics", d->metrics_error);
                /* said while the wait grows; at its longest (every 30 s) only at debug level */
                log_printf(d->metrics_backoff_sec < METRICS_BACKOFF_MAX_SEC ? LOG_NOTICE : LOG_DEBUG,
                           "Binding [Metrics] Listen=%s again in %u s", d->metrics_listen,
                           d->metrics_backoff_sec);
                metrics_schedule(d);
                notify_status(d);
                return;
        }
        g_clear_pointer(&d->metrics_error, g_free);
        g_clear_pointer(&d->metrics_shown, g_free);
        d->metrics_backoff_sec = 1;
        log_serving(d->metrics_listen);
        notify_status(d);
}

/*
 * The instance lock of uri, taken before anything connects to it: *ret_fd the descriptor, or -1 when no
 * lock is needed (libvirt's test driver is each process's own in-memory host; a demo runs on it) or none
 * can be had (said in the log: the daemon runs, as it did before there was a lock). Returns -EBUSY with
 * *ret_error ("another placementd (pid N) already places the domains of URI") when another daemon holds
 * it.
 */
static int instance_lock_for(const char *uri, bool demo, int *ret_fd, char **ret_error)
{
        g_autofree char *dir = NULL, *shown = NULL, *error = NULL;
        pid_t pid = 0;
        int fd;

        *ret_fd = -1;
        if (demo || !uri || g_str_has_prefix(uri, "test:"))
                return 0;
        shown = uri_public(uri);
        dir = instance_lock_dir();
        if (!dir) {
                log_notice("No runtime directory (XDG_RUNTIME_DIR is not set): a second placementd on %s "
                           "would not be kept out",
                           shown);
                return 0;
        }
        fd = instance_lock_take(dir, uri, shown, &pid, &error);
        if (fd == -EBUSY) {
                g_autofree char *who = pid ? g_strdup_printf("pid %ld", (long)pid) : g_strdup("pid unknown");
                return ret_error_set(ret_error, -EBUSY,
                                     "another placementd (%s) already places the domains of %s", who, shown);
        }
        if (fd < 0) {
                log_warning(
                    "Cannot take the instance lock of %s: %s; a second placementd on it would not be "
                    "kept out",
                    shown, error);
                return 0;
        }
        *ret_fd = fd;
        return 0;
}

/* Whether URIs a and b name one libvirtd as the instance lock compares them (one lock file): a reload
 * from one to the other keeps the lock it holds, which a second flock() of its own would be refused. */
static bool same_instance(const char *a, const char *b)
{
        g_autofree char *ka = a ? instance_lock_key(a) : NULL;
        g_autofree char *kb = b ? instance_lock_key(b) : NULL;

        return g_strcmp0(ka, kb) == 0;
}

/* Drops a reload that waits for its new URI to open (NULL: none waits): a newer reload replaces it. */
static void reload_waiting_drop(Daemon *d)
{
        manager_drop_next(d->manager);
        g_clear_pointer(&d->waiting, config_free);
        g_clear_pointer(&d->waiting_restart, g_strfreev);
        g_clear_pointer(&d->waiting_note, g_free);
}

/* The apply journal's directory of uri, beside its instance lock (caller frees): none without the lock
 * (the test driver, a demo, no runtime directory), which the journal would not keep to one daemon. */
static char *journal_path(const Daemon *d, const char *uri)
{
        g_autofree char *dir = d->instance_lock >= 0 ? instance_lock_dir() : NULL;

        return dir ? instance_lock_journal_path(dir, uri) : NULL;
}

/*
 * The end of a reload whose file loaded into c (r < 0: it did not, error says why): another URI's lock,
 * the metrics listener, then all of it applied, or none of it. Takes c, restart, note, error, shown and
 * logged: error as the caller reads it, shown as every local user may (ReloadError, STATUS=; NULL when
 * error is), logged as the log says it (NULL when error is).
 */
static int reload_finish(Daemon *d, int r, Config *c_taken, char **restart_taken, char *note_taken,
                         char *error_taken, char *shown_taken, char *logged_taken, char **ret_error)
{
        g_autoptr(Config) c = c_taken;
        g_auto(GStrv) restart = restart_taken;
        g_autofree char *error = error_taken, *shown = shown_taken, *note = note_taken, *unbound = NULL;
        g_autofree char *logged = logged_taken;
        MetricsServer *metrics = NULL;
        int lock = -1, unbound_err = 0;
        bool relock = false;

        /* another URI: its lock before the switch, so that two daemons never place one host's domains */
        if (r >= 0 && !d->uri_chosen && !same_instance(c->uri, manager_config(d->manager)->uri)) {
                r = instance_lock_for(c->uri, d->demo != NULL, &lock, &error);
                if (r < 0) {
                        g_autofree char *why = g_steal_pointer(&error);
                        g_autofree char *running = uri_public_marked(manager_uri(d->manager));
                        error = g_strdup_printf("[Libvirt] URI=: %s; keeping %s", why, running);
                }
                relock = r >= 0;
        }
        if (r >= 0) {
                r = metrics_prepare(d, c->metrics_listen, &metrics, &error);
                if (r < 0 && !listen_error_is_configuration(r)) {
                        /* a port someone holds must not block the rest of the file: bound later */
                        unbound = g_steal_pointer(&error);
                        unbound_err = -r;
                        r = 0;
                } else if (r < 0) {
                        /* the log has the value; the caller and everyone else the key */
                        g_free(logged);
                        logged = g_steal_pointer(&error);
                        error = listen_error_public(c->metrics_listen, -r);
                }
        }
        manager_note_reload(d->manager, r >= 0);
        if (r < 0) {
                const char *text = error && *error ? error : "reload failed";
                const char *public = shown && *shown ? shown : text;
                instance_lock_release(lock);
                manager_drop_next(d->manager); /* a connection opened for it closes: nothing switches */
                log_lines(LOG_ERR, "Reloading the configuration failed, keeping the old one",
                          logged && *logged ? logged : text);
                g_free(d->reload_failure);
                d->reload_failure = g_strndup(public, strcspn(public, "\n"));
                /* a caller who waits (root, or allowed by polkit) gets all of it */
                bus_service_reload_answer(d->bus, NULL, text);
                /* and all of what everyone may read, for placementctl status: Reload()'s caller is not the
                 * only one who asks */
                bus_service_reload_done(d->bus, public);
                if (ret_error)
                        *ret_error = g_steal_pointer(&error);
        } else {
                g_clear_pointer(&d->reload_failure, g_free);
                if (relock) {
                        instance_lock_release(d->instance_lock);
                        d->instance_lock = lock;
                }
                if (unbound)
                        metrics_unbound(d, c->metrics_listen, g_steal_pointer(&unbound), unbound_err);
                else
                        metrics_commit(d, metrics, c->metrics_listen);
                for (char **k = restart; *k; k++)
                        if (d->bus_chosen && g_str_has_prefix(*k, "[DBus] Bus="))
                                log_warning("Reload: [DBus] Bus= is not used: %s chose the bus",
                                            d->bus_chosen);
                        else
                                log_warning("Reload: %s takes effect only after a restart, not applied", *k);
                if (d->uri_chosen && g_strcmp0(c->uri, manager_config(d->manager)->uri) != 0)
                        log_warning("Reload: [Libvirt] URI= is not used: --connect chose the connection");
                {
                        g_autoptr(GPtrArray) useless = config_host_warnings(c, manager_topology(d->manager));
                        for (unsigned i = 0; i < useless->len; i++)
                                log_warning("Reload: %s", (const char *)g_ptr_array_index(useless, i));
                }
                if (note) /* the default file is gone: nothing was read */
                        log_info("Configuration reloaded: %s (policy %s)", note,
                                 policy_kind_to_string(c->placement.policy));
                else
                        log_info("Configuration reloaded from %s (policy %s)", d->config_path,
                                 policy_kind_to_string(c->placement.policy));
                /* a new URI switches to the connection opened for it (manager_open_next()), and to its
                 * own apply journal */
                {
                        g_autofree char *journal = journal_path(d, c->uri);
                        manager_set_next_journal(d->manager, journal);
                }
                manager_set_config(d->manager, g_steal_pointer(&c));
                stats_cache_set_interval(
                    d->stats, stats_cache_interval_for(manager_config(d->manager)->load_interval_sec));
                bus_service_state_changed(d->bus);
                bus_service_reload_done(d->bus, NULL);
        }
        if (d->ready) /* a reload before the first connection: READY=1 is still to come */
                sd_notify(0, "READY=1");
        notify_status(d);
        return r;
}

/* The new URI of the waiting reload opened, or did not (error): the reload goes on, or is refused. */
static void on_next_opened(Manager *m, const char *error, const char *shown, void *userdata)
{
        Daemon *d = userdata;
        g_autofree char *why = NULL, *public = NULL;
        (void)m;

        if (error) {
                g_autofree char *running = uri_public_marked(manager_uri(d->manager));
                why = g_strdup_printf("[Libvirt] URI=: %s; keeping %s", error, running);
                public = g_strdup_printf("[Libvirt] URI=: %s; keeping %s", shown ? shown : error, running);
        }
        reload_finish(d, error ? -ECONNREFUSED : 0, g_steal_pointer(&d->waiting),
                      g_steal_pointer(&d->waiting_restart), g_steal_pointer(&d->waiting_note),
                      g_steal_pointer(&why), g_steal_pointer(&public), NULL, NULL);
}

/*
 * SIGHUP and Reload(): all or nothing. The new file must load, a new libvirt URI must open (before anything
 * lets go of the running connection) and the metrics listener must bind; otherwise the old configuration
 * stays entirely (connection, domains and metrics included) and the error goes to the log and to Reload()'s
 * caller. Keys that need a restart ([DBus] Bus=) keep their running values and are named. Returns 0 or a
 * negative errno with *ret_error, or 1 when the reload waits for its new URI to open (in a thread: the loop
 * runs on); it ends in on_next_opened(), which tells Reload()'s caller through bus_service_reload_done().
 * A reload that comes meanwhile joins the one that waits when it names the same URI (its file taken, the
 * deadline kept), replaces it when it names another (its callers answered at once), and is refused alone
 * when its file does not load.
 */
static int reload(Daemon *d, char **ret_error)
{
        g_autoptr(Config) loaded = NULL, c = NULL;
        g_auto(GStrv) restart = NULL;
        g_autofree char *error = NULL, *note = NULL, *logged = NULL;
        int r;

        if (d->ready)
                sd_notify(0, "RELOADING=1");
        /* the log gets the values a broken file holds; the caller and everyone else its lines and keys
         * (a value may be a secret typed into the wrong key; placementd --check-config shows them) */
        r = config_load_or_defaults_public(d->config_path, d->config_explicit, &loaded, &note, &logged,
                                           &error);
        if (r >= 0) {
                restart = config_restart_changes(manager_config(d->manager), loaded);
                c = config_reloadable(manager_config(d->manager), loaded);
                if (!c) {
                        error = g_strdup("the configuration does not load back (a bug)");
                        r = -EINVAL;
                }
        }
        if (d->waiting && r < 0) {
                /* a file that does not load is refused alone: the reload waiting for its URI goes on */
                const char *text = error && *error ? error : "reload failed";
                g_autofree char *shown = uri_public_marked(d->waiting->uri);
                log_lines(LOG_ERR, "Reloading the configuration failed", logged && *logged ? logged : text);
                log_info("Reload: the reload waiting for %s to open goes on", shown);
                manager_note_reload(d->manager, false);
                if (ret_error)
                        *ret_error = g_steal_pointer(&error);
                return r;
        }
        if (d->waiting) {
                g_autofree char *shown = uri_public_marked(d->waiting->uri);
                if (!d->uri_chosen && g_strcmp0(c->uri, d->waiting->uri) == 0) {
                        /* the same URI (SIGHUP or Reload() again): it joins the open under way and its
                         * deadline, with this file; its callers are answered when it ends */
                        log_info("Reload: still opening %s; the reload waiting for it takes this file",
                                 shown);
                        config_free(d->waiting);
                        d->waiting = g_steal_pointer(&c);
                        g_strfreev(d->waiting_restart);
                        d->waiting_restart = g_steal_pointer(&restart);
                        g_free(d->waiting_note);
                        d->waiting_note = g_steal_pointer(&note);
                        return 1;
                }
                log_notice("Reload: no longer waiting for %s to open: a newer reload replaces that one",
                           shown);
                {
                        g_autofree char *answer = g_strdup_printf(
                            "replaced by a newer reload before %s opened: placementctl status says how "
                            "that one ends",
                            shown);
                        bus_service_reload_answer(d->bus, BUS_ERROR_FAILED, answer);
                }
                reload_waiting_drop(d);
        }
        /* another libvirtd: opened first, so that one libvirt refuses leaves the running connection and its
         * domains as they are (the instance lock's key says which URIs name one libvirtd) */
        if (r >= 0 && !d->uri_chosen && !same_instance(c->uri, manager_config(d->manager)->uri)) {
                g_autofree char *shown = uri_public_marked(c->uri);
                d->waiting = g_steal_pointer(&c);
                d->waiting_restart = g_steal_pointer(&restart);
                d->waiting_note = g_steal_pointer(&note);
                if (manager_open_next(d->manager, d->waiting->uri, on_next_opened, d, &error) < 0) {
                        g_autofree char *why = g_steal_pointer(&error);
                        g_autofree char *running = uri_public_marked(manager_uri(d->manager));
                        error = g_strdup_printf("[Libvirt] URI=: %s; keeping %s", why, running);
                        c = g_steal_pointer(&d->waiting);
                        restart = g_steal_pointer(&d->waiting_restart);
                        note = g_steal_pointer(&d->waiting_note);
                        return reload_finish(d, -EBUSY, g_steal_pointer(&c), g_steal_pointer(&restart),
                                             g_steal_pointer(&note), g_steal_pointer(&error), NULL, NULL,
                                             ret_error);
                }
                log_info("Reload: opening %s before switching to it", shown);
                notify_status(d);
                return 1;
        }
        return reload_finish(d, r, g_steal_pointer(&c), g_steal_pointer(&restart), g_steal_pointer(&note),
                             g_steal_pointer(&error), NULL, g_steal_pointer(&logged), ret_error);
}

static void name_taken_hook(void *userdata)
{
        Daemon *d = userdata;

        d->name_taken = true;
        event_base_loopexit(d->base, NULL);
}

static void bad_address_hook(void *userdata)
{
        Daemon *d = userdata;

        d->bad_address = true;
        event_base_loopexit(d->base, NULL);
}

static int reload_hook(void *userdata, char **ret_error)
{
        return reload(userdata, ret_error);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
        Daemon *d = arg;
        (void)what;

        if (sig == SIGHUP) {
                reload(d, NULL);
                return;
        }
        log_info("Received %s, stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        sd_notify(0, "STOPPING=1");
        event_base_loopexit(d->base, NULL);
}

static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        (void)arg;
        sd_notify(0, "WATCHDOG=1");
}

static void setup_watchdog(Daemon *d)
{
        uint64_t usec = 0;
        struct timeval tv;

        if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
                return;
        /* a quarter: a turn of the loop may hold it 30 s on a libvirt call (held.c), and WATCHDOG=1 is then
         * late by as much */
        usec /= 4;
        tv = (struct timeval){.tv_sec = (time_t)(usec / 1000000), .tv_usec = (suseconds_t)(usec % 1000000)};
        d->watchdog = event_new(d->base, -1, EV_PERSIST, on_watchdog, d);
        evtimer_add(d->watchdog, &tv);
}

/* libvirt frees some of its callbacks only from the loop after a connection closes: let it. */
static void drain(struct event_base *base)
{
        for (unsigned i = 0; i < 50 && (virt_event_handle_count() || virt_event_timeout_count()); i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

/* Releases what the daemon holds, users before what they use; the event base is its caller's. */
static void daemon_done(Daemon *d)
{
        if (d->manager)
                manager_set_callbacks(d->manager, &(ManagerCallbacks){0}, NULL);
        g_clear_pointer(&d->demo, demo_free);
        /* Reload() callers waiting for it are told, not left to read the stop as "not running" */
        if (d->waiting)
                bus_service_reload_answer(d->bus, BUS_ERROR_FAILED,
                                          "placementd is stopping: the reload was not applied");
        /* a connection it waits for is the manager's to drop, as the process stops */
        g_clear_pointer(&d->waiting, config_free);
        g_clear_pointer(&d->waiting_restart, g_strfreev);
        g_clear_pointer(&d->waiting_note, g_free);
        g_clear_pointer(&d->metrics, metrics_server_free);
        g_clear_pointer(&d->metrics_listen, g_free);
        g_clear_pointer(&d->metrics_error, g_free);
        g_clear_pointer(&d->metrics_shown, g_free);
        g_clear_pointer(&d->metrics_retry, event_free);
        g_clear_pointer(&d->bus, bus_service_free);
        g_clear_pointer(&d->stats, stats_cache_free);
        g_clear_pointer(&d->manager, manager_free);
        if (d->base)
                drain(d->base);
        /* a thread still opening a connection nobody wants (libvirtd never answered) must find the bridge
         * closed, not the event base about to be freed */
        virt_event_close();
        g_clear_pointer(&d->sigterm, event_free);
        g_clear_pointer(&d->sigint, event_free);
        g_clear_pointer(&d->sighup, event_free);
        g_clear_pointer(&d->watchdog, event_free);
        g_clear_pointer(&d->ready_ev, event_free);
        g_clear_pointer(&d->reload_failure, g_free);
        /* last: the URI is free for another daemon once nothing of this one touches it */
        instance_lock_release(d->instance_lock);
        d->instance_lock = -1;
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Daemon, daemon_done)

/* Says what the topology is, and what of the configuration it makes useless (CPUs of ReservedCPUs= and
 * HousekeepingCPUs= it lacks, a MemoryReserve= beyond every node). */
static void log_topology(const Topology *topology, const Config *config)
{
        g_autoptr(GPtrArray) unknown = config_host_warnings(config, topology);

        for (unsigned i = 0; topology->notes && i < topology->notes->len; i++)
                log_notice("Topology: %s", (const char *)g_ptr_array_index(topology->notes, i));
        log_info("Topology %s: %u node%s, %u package%s, %u core%s, %u PU%s", topology->source,
                 topology->nnodes, topology->nnodes == 1 ? "" : "s", topology->npackages,
                 topology->npackages == 1 ? "" : "s", topology->ncores, topology->ncores == 1 ? "" : "s",
                 topology->npus, topology->npus == 1 ? "" : "s");
        /* a CPU the host lacks cannot be reserved: say so rather than fail */
        for (unsigned i = 0; i < unknown->len; i++)
                log_warning("%s", (const char *)g_ptr_array_index(unknown, i));
}

static void setup_signals(Daemon *d)
{
        signal(SIGPIPE, SIG_IGN);
        d->sigterm = evsignal_new(d->base, SIGTERM, on_signal, d);
        d->sigint = evsignal_new(d->base, SIGINT, on_signal, d);
        d->sighup = evsignal_new(d->base, SIGHUP, on_signal, d);
        event_add(d->sigterm, NULL);
        event_add(d->sigint, NULL);
        event_add(d->sighup, NULL);
}

/*
 * The demo's trace, when --demo= asks for one. It starts and destroys domains, so it runs only on
 * libvirt's test driver, and its trace holds start and stop lines only (load and tick lines are the
 * simulator's; a domain FILE.xml start would not start that definition). Returns 0 or -errno with
 * *ret_error.
 */
static int setup_demo(Daemon *d, const char *trace, char **ret_error)
{
        const char *uri = manager_uri(d->manager);
        GPtrArray *events = NULL;
        int r;

        if (!trace)
                return 0;
        if (!uri || !g_str_has_prefix(uri, "test:"))
                return ret_error_set(
                    ret_error, -EINVAL,
                    "--demo starts and destroys domains: it runs only on libvirt's test driver "
                    "(--connect=test:///default), not on %s",
                    uri ? uri : "the configured URI");
        r = demo_load_trace(trace, &events, ret_error);
        if (r < 0)
                return r;
        d->demo = demo_new(d->base, d->manager, events, 300);
        return 0;
}

/* --bus= over [DBus] Bus=; a demo serves no bus unless asked to. */
static BusKind bus_kind(const Daemon *d, const Args *args)
{
        if (args->bus)
                return strcmp(args->bus, "system") == 0    ? BUS_SYSTEM
                       : strcmp(args->bus, "session") == 0 ? BUS_SESSION
                                                           : BUS_NONE;
        if (d->demo && !args->bus_address)
                return BUS_NONE;
        return manager_config(d->manager)->bus;
}

static int setup_metrics(Daemon *d, char **ret_error)
{
        MetricsServer *metrics = NULL;
        const char *listen = manager_config(d->manager)->metrics_listen;
        int r;

        d->metrics_backoff_sec = 1;
        d->metrics_retry = evtimer_new(d->base, on_metrics_retry, d);
        r = metrics_prepare(d, listen, &metrics, ret_error);
        if (r < 0 && listen_error_is_configuration(r))
                return r;
        if (r < 0)
                metrics_unbound(d, listen, g_steal_pointer(ret_error), -r);
        else
                metrics_commit(d, metrics, listen);
        return 0;
}

/* The whole daemon; one way out, every resource released on it (the event base last). */
static int run(int argc, char **argv)
{
        Args args = {.topology = "host"};
        g_autoptr(Config) config = NULL;
        g_autoptr(Topology) topology = NULL;
        g_autofree char *error = NULL;
        g_autoptr(event_base) base = NULL;
        g_autofree char *config_path = NULL, *note = NULL;
        g_auto(Daemon) d = {.instance_lock = -1};
        int r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        /* absolute: a detached daemon runs in /, and a reload reads the path again */
        config_path = g_canonicalize_filename(args.config ? args.config : DEFAULT_CONFIG, NULL);
        d.config_path = config_path;
        d.bus_chosen = args.bus_address ? "--bus-address" : args.bus ? "--bus" : NULL;
        d.uri_chosen = args.uri != NULL;
        d.config_explicit = args.config != NULL;
        /* the file read as below, and nothing started: no lock, no libvirt, no bus, no log */
        if (args.check_config)
                return check_config(d.config_path, d.config_explicit, args.topology, stdout, stderr);
        r = config_load_or_defaults(d.config_path, d.config_explicit, &config, &note, &error);
        if (r < 0 || topology_load(args.topology, &topology, &error) < 0) {
                log_lines(LOG_ERR, NULL, error);
                return 2;
        }
        if (note)
                log_notice("%s", note);
        log_topology(topology, config);
        /* before anything connects, and before daemon(), so that a second daemon's exit status says it was
         * refused (the child holds the lock its parent took, and writes its own pid into it). The bus name
         * keeps out only a second daemon on the same bus. */
        if (instance_lock_for(args.uri ? args.uri : config->uri, args.demo != NULL, &d.instance_lock,
                              &error) < 0) {
                log_error("%s; not starting a second one", error);
                return 1;
        }
        if (!args.foreground && !getenv("NOTIFY_SOCKET")) {
                g_autofree char *shown = uri_public(args.uri ? args.uri : config->uri);
                if (daemon(0, 1) < 0) {
                        log_error_errno(-errno, "Failed to detach: %m");
                        return 1;
                }
                if (instance_lock_note_pid(d.instance_lock, shown) < 0)
                        log_warning("Cannot write this daemon's pid into its instance lock file");
        }
        /* libvirt may arm watches from the thread that opens its connection (virt-event.h) */
        if (evthread_use_pthreads() < 0) {
                log_error("Cannot make libevent thread-safe");
                return 1;
        }
        base = event_base_new();
        if (!base || virt_event_register(base) < 0) {
                log_error("Failed to set up the event loop");
                return 1;
        }
        virt_errors_quiet();
        d.base = base;
        d.manager = manager_new(base, g_steal_pointer(&topology), g_steal_pointer(&config), args.uri);
        if (setup_demo(&d, args.demo, &error) < 0) {
                log_error("%s", error);
                return 2;
        }
        manager_set_callbacks(
            d.manager,
            &(ManagerCallbacks){.decision_changed = on_decision, .connection_changed = on_connection}, &d);
        setup_signals(&d);
        setup_watchdog(&d);
        d.stats = stats_cache_new_for_manager(base, d.manager);
        stats_cache_set_listener(d.stats, on_stats, &d);
        d.bus = bus_service_new(base, d.manager, d.stats, bus_kind(&d, &args), args.bus_address,
                                &(BusHooks){.reload = reload_hook,
                                            .name_taken = name_taken_hook,
                                            .bad_address = bad_address_hook},
                                &d);
        if (d.bad_address)
                return 2;
        if (d.name_taken)
                return 1;
        if (setup_metrics(&d, &error) < 0) {
                log_error("%s", error);
                return 2;
        }
        {
                g_autofree char *journal =
                    journal_path(&d, args.uri ? args.uri : manager_config(d.manager)->uri);
                manager_set_journal(d.manager, journal);
        }
        manager_start(d.manager);
        if (!d.ready) {
                struct timeval wait = {.tv_sec = MAIN_READY_WAIT_SEC};
                d.ready_ev = evtimer_new(base, on_ready_wait, &d);
                evtimer_add(d.ready_ev, &wait);
        }
        notify_status(&d);

        event_base_dispatch(base);
        if (d.bad_address)
                return 2;
        return d.name_taken || (d.demo && demo_failures(d.demo)) ? 1 : 0;
}

int main(int argc, char **argv)
{
        int r = run(argc, argv);

        /* what evthread_use_pthreads() set up, once every base is gone */
        libevent_global_shutdown();
        return r;
}
