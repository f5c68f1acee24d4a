/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's connection to libvirt, its event handlers and reconciliation. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "decision-json.h"
#include "hostmap-json.h"
#include "hostmap.h"
#include "instance-lock.h"
#include "log.h"
#include "manager-internal.h"
#include "policy.h"
#include "ret-error.h"
#include "text-safe.h"
#include "uri-public.h"
#include "virt-cpu.h"
#include "virt-domain.h"
#include "virt-stats.h"

#define BACKOFF_MAX_SEC 30u
/* An open that takes longer is said in the log (the daemon goes on serving meanwhile). */
#define CONNECT_SLOW_SEC 30u
/* An echo of placementd's own metadata write that comes later than this (the loop was held up meanwhile) is
 * read like an owner's change: a write whose event never came passes over no later change of the owner's
 * for longer. */
#define OWN_ECHO_MAX_USEC (60u * G_USEC_PER_SEC)

static void replace_after_reload(Manager *m, bool apply_on, const CpuSet *newly_reserved);
static void place_again(Manager *m, const CpuSet *cpus, bool advisory, const char *why);
static void rehouse_all(Manager *m, const char *why);

static void connect_now(Manager *m);

static uint64_t monotonic_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

const char *manager_uri(const Manager *m)
{
        return m->uri_override ? m->uri_override : m->config->uri;
}

const char *manager_uri_public(const Manager *m)
{
        return m->uri_public;
}

static void set_connected(Manager *m, bool connected)
{
        if (m->connected == connected)
                return;
        m->connected = connected;
        if (m->cb.connection_changed)
                m->cb.connection_changed(m, connected, m->userdata);
}

static void schedule_reconnect(Manager *m)
{
        struct timeval tv = {.tv_sec = m->backoff_sec};

        /* said while the wait grows, the last time with the wait it keeps (the tries then go quiet); at its
         * longest (every 30 s) only at debug level */
        if (m->backoff_sec < BACKOFF_MAX_SEC && m->backoff_sec * 2 >= BACKOFF_MAX_SEC)
                log_notice("Connecting to %s again in %u s, then every %u s", manager_uri(m), m->backoff_sec,
                           BACKOFF_MAX_SEC);
        else
                log_printf(m->backoff_sec < BACKOFF_MAX_SEC ? LOG_NOTICE : LOG_DEBUG,
                           "Connecting to %s again in %u s", manager_uri(m), m->backoff_sec);
        evtimer_add(m->reconnect_ev, &tv);
        m->backoff_sec = MIN(m->backoff_sec * 2, BACKOFF_MAX_SEC);
}

static void on_reconnect(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        connect_now(arg);
}

/* Drops the connection (from a clean stack, never inside a libvirt callback). */
static void disconnect(Manager *m)
{
        if (!m->conn)
                return;
        g_clear_pointer(&m->conn, virt_conn_free);
        healer_forget_request(m, NULL);         /* events may be missed until the reconnect */
        g_hash_table_remove_all(m->own_writes); /* and the echoes of writes made on it do not come */
        set_connected(m, false);
}

/* The close callback's work, on the loop thread: the connection's reason read back, the loss said, and
 * unless placementd closed it itself, the connection dropped and opened again. */
static void on_teardown(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        int reason = g_atomic_int_get(&m->close_reason);
        (void)fd;
        (void)what;
        log_warning("Lost the connection to %s (%s)", manager_uri(m), virt_close_reason_to_string(reason));
        if (reason == VIR_CONNECT_CLOSE_REASON_CLIENT)
                return;
        disconnect(m);
        m->reconnects++;
        schedule_reconnect(m);
}

/* libvirt's close callback. It may run on another thread than the loop's: the keepalive watch thread
 * (virt-event.c) that fires libvirt's keepalive timer while a call holds the loop, or the thread that
 * closes an old connection. So it touches nothing the loop owns (the configuration, which a reload
 * swaps, the URI with it): it keeps the reason and hands the rest to the loop (libevent's locking makes
 * evtimer_add() safe from any thread). */
void manager_connection_closed(int reason, void *opaque)
{
        Manager *m = opaque;
        struct timeval zero = {0, 0};

        g_atomic_int_set(&m->close_reason, reason);
        evtimer_add(m->teardown_ev, &zero);
}

/* A run that ends: forgotten once its process is gone. A guest that handled its panic runs on
 * (CRASHED, crashloaded), one preserved after a panic or reset in place (on_crash='preserve', QEMU's
 * fake reboot after a shutdown) keeps its process and pins: the STOPPED that ends it comes later. */
static void run_ended(Manager *m, virDomainPtr dom, const char *uuid, const char *why)
{
        if (virt_domain_is_active(dom)) {
                log_debug("%s: %s, its process still runs: kept", virt_domain_name(dom), why);
                return;
        }
        placer_forget(m, uuid, why);
}

/* Reads uuid's definition for an opt-out written or taken back, once for a burst of changes (its owner may
 * write in a loop, and placementd's own records come here too): each read is the domain's whole XML. */
static void follow_definition_soon(Manager *m, const char *uuid)
{
        g_hash_table_add(m->metadata_changed, g_strdup(uuid));
        if (!evtimer_pending(m->metadata_ev, NULL)) {
                struct timeval due = {0, MANAGER_METADATA_FOLLOW_MSEC * 1000};
                evtimer_add(m->metadata_ev, &due);
        }
}

static void on_lifecycle(virDomainPtr dom, int event, int detail, void *opaque)
{
        manager_lifecycle(opaque, dom, event, detail);
}

void manager_lifecycle(Manager *m, virDomainPtr dom, int event, int detail)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        uint64_t t0 = monotonic_usec();

        virt_domain_uuid(dom, uuid);
        log_debug("%s: lifecycle event %d, detail %d", virt_domain_name(dom), event, detail);
        healer_forget_request(m, uuid); /* e.g. defined anew while it runs: the user's definition changed */
        switch (event) {
        case VIR_DOMAIN_EVENT_STARTED:
                /* known already: a reconcile that ran before this event placed this run (events come in
                 * order, so a stop in between would have been seen); an incoming migration is placed
                 * anew whatever a reconcile adopted from the source host's record */
                if (detail != VIR_DOMAIN_EVENT_STARTED_MIGRATED &&
                    g_hash_table_contains(m->decisions, uuid)) {
                        log_debug("%s: placed by a reconcile before its start event", virt_domain_name(dom));
                        break;
                }
                load_monitor_started(m->load, uuid, t0); /* its start-up counts from here */
                placer_place(m, dom,
                             detail == VIR_DOMAIN_EVENT_STARTED_MIGRATED ? ORIGIN_MIGRATED : ORIGIN_STARTED,
                             t0);
                break;
        case VIR_DOMAIN_EVENT_RESUMED:
                /* An incoming migration is placed at STARTED(migrated) already; this catches the others. */
                if (detail == VIR_DOMAIN_EVENT_RESUMED_MIGRATED &&
                    !g_hash_table_contains(m->decisions, uuid))
                        placer_place(m, dom, ORIGIN_MIGRATED, t0);
                break;
        case VIR_DOMAIN_EVENT_STOPPED:
                placer_forget(m, uuid, "stopped");
                break;
        case VIR_DOMAIN_EVENT_SHUTDOWN:
                if (detail == VIR_DOMAIN_EVENT_SHUTDOWN_FINISHED)
                        run_ended(m, dom, uuid, "shut down");
                break;
        case VIR_DOMAIN_EVENT_CRASHED:
                run_ended(m, dom, uuid, "crashed");
                break;
        case VIR_DOMAIN_EVENT_DEFINED:
                /* its definition written while it runs (virsh edit, virsh define): an opt-out put there or
                 * taken back is followed as one written with virsh metadata --config */
                if (g_hash_table_contains(m->decisions, uuid))
                        follow_definition_soon(m, uuid);
                break;
        case VIR_DOMAIN_EVENT_UNDEFINED:
                /* a running domain whose definition is removed runs on, transient: it still holds cores */
                if (virt_domain_is_active(dom))
                        log_debug("%s: undefined but still running, kept", virt_domain_name(dom));
                else
                        placer_forget(m, uuid, "undefined");
                break;
        default:
                break;
        }
}

static void on_tunable(virDomainPtr dom, virTypedParameterPtr params, int nparams, void *opaque)
{
        manager_tunable(opaque, dom, params, nparams);
}

/* A DIMM (or another device) came or went: the memory the ledger counts may have changed. */
static void on_device(virDomainPtr dom, const char *alias, void *opaque)
{
        Manager *m = opaque;
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *d = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));

        log_debug("%s: device %s added or removed", virt_domain_name(dom), alias);
        healer_forget_request(m, uuid);
        if (d && placer_resized(m, dom, d))
                placer_place(m, dom, ORIGIN_RESIZED, monotonic_usec());
}

/* placementd's writes of one domain's element whose echoes have not come. */
typedef struct OwnWrites {
        unsigned pending;
        uint64_t usec; /* CLOCK_MONOTONIC of the last */
} OwnWrites;

void manager_own_metadata_written(Manager *m, const char *uuid)
{
        OwnWrites *w;

        /* without those events nothing would take the count down */
        if (!m->conn || !virt_conn_sees_metadata(m->conn))
                return;
        if (!(w = g_hash_table_lookup(m->own_writes, uuid))) {
                w = g_new0(OwnWrites, 1);
                g_hash_table_insert(m->own_writes, g_strdup(uuid), w);
        }
        w->pending++;
        w->usec = monotonic_usec();
}

/* Whether a metadata-change event of uuid is the echo of placementd's own write: libvirt sends a
 * connection's events in the order of the changes, so an owner's change made after placementd's write
 * comes after its echo, and one made before it was overwritten by it (its record keeps the opt-out it
 * read). */
static bool own_echo(Manager *m, const char *uuid)
{
        OwnWrites *w = g_hash_table_lookup(m->own_writes, uuid);
        bool fresh;

        if (!w)
                return false;
        fresh = monotonic_usec() - w->usec <= OWN_ECHO_MAX_USEC;
        if (!fresh || --w->pending == 0)
                g_hash_table_remove(m->own_writes, uuid);
        return fresh;
}

/* placementd's metadata changed (the user's opt-out or policy; the echo of placementd's own record is
 * passed over): what heal read of the domain may no longer be what it asks. */
static void on_metadata(virDomainPtr dom, int type, const char *nsuri, void *opaque)
{
        Manager *m = opaque;
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (type != VIR_DOMAIN_METADATA_ELEMENT || g_strcmp0(nsuri, PLACEMENTD_XMLNS) != 0)
                return;
        if (own_echo(m, virt_domain_uuid(dom, uuid))) {
                log_debug("%s: placementd's metadata changed: the echo of its own record",
                          virt_domain_name(dom));
                return;
        }
        log_debug("%s: placementd's metadata changed", virt_domain_name(dom));
        healer_forget_request(m, virt_domain_uuid(dom, uuid));
        /* an opt-out written (or removed) while it runs is the user's word now, not at its next start */
        follow_definition_soon(m, uuid);
}

static void on_metadata_due(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        g_autoptr(GHashTable) changed = g_steal_pointer(&m->metadata_changed);
        GHashTableIter it;
        const char *uuid;

        (void)fd;
        (void)what;
        m->metadata_changed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_hash_table_iter_init(&it, changed);
        while (m->conn && g_hash_table_iter_next(&it, (gpointer *)&uuid, NULL)) {
                g_autoptr(virDomain) dom = NULL;
                if (virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0)
                        continue; /* gone: its lifecycle event says so */
                m->metadata_follows++;
                placer_follow_opt_out(m, dom);
        }
}

#define STARTING_WHY                                                                                        \
        "its start has not ended, libvirt says (libvirtd restarted during it): placed again at its start "  \
        "event"

/* Whether the decided domain uuid still exists, its start not ended (virt_domain_starting()), in the run
 * it was decided in. */
static bool starting_run(Manager *m, const char *uuid)
{
        const Decision *d = g_hash_table_lookup(m->decisions, uuid);
        g_autoptr(virDomain) dom = NULL;

        if (!d || virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0)
                return false;
        return virt_domain_starting(dom) && virt_domain_id(dom) == d->domain_id;
}

static void reconcile(Manager *m, PlaceOrigin origin)
{
        virDomainPtr *doms = NULL;
        g_autoptr(GHashTable) running = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GPtrArray) again = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GHashTable) starting = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_autofree char *error = NULL;
        g_autofree bool *first = NULL;
        g_autofree bool *resized = NULL;
        g_autoptr(CpuSet) gone_offline = NULL;
        unsigned n;

        if (!m->conn)
                return;
        log_debug("Reconciling with what runs on %s", manager_uri(m));
        if (virt_conn_list_running(m->conn, &doms, &n, &error) < 0) {
                log_warning("%s, ignoring", error);
                return;
        }
        gone_offline = manager_read_unavailable(m);
        /* the decisions of domains gone, or run again, forgotten first: what they held is free for the
         * records checked and the domains placed below (this pass may run before their events come, or
         * after libvirt was away) */
        for (unsigned i = 0; i < n; i++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                g_hash_table_insert(running, g_strdup(virt_domain_uuid(doms[i], uuid)),
                                    GUINT_TO_POINTER(virt_domain_id(doms[i])));
        }
        {
                GHashTableIter it;
                gpointer key, value;
                g_hash_table_iter_init(&it, m->decisions);
                while (g_hash_table_iter_next(&it, &key, &value)) {
                        const Decision *d = value;
                        gpointer run;
                        if (!g_hash_table_lookup_extended(running, key, NULL, &run))
                                g_ptr_array_add(gone, g_strdup(key));
                        else if (d->domain_id && GPOINTER_TO_UINT(run) &&
                                 d->domain_id != GPOINTER_TO_UINT(run))
                                g_ptr_array_add(again, g_strdup(key));
                }
        }
        for (unsigned i = 0; i < gone->len; i++) {
                const char *uuid = g_ptr_array_index(gone, i);
                /* libvirtd restarted during its start: libvirt ends the start now, and its start event finds
                 * placementd's pins, which no record may name yet */
                if (starting_run(m, uuid) &&
                    interrupted_set_aside(m, g_hash_table_lookup(m->decisions, uuid))) {
                        g_hash_table_add(starting, g_strdup(uuid));
                        placer_forget(m, uuid, STARTING_WHY);
                } else
                        placer_forget(m, uuid, "no longer running");
        }
        for (unsigned i = 0; i < again->len; i++) {
                const char *uuid = g_ptr_array_index(again, i);
                const Decision *d = g_hash_table_lookup(m->decisions, uuid);
                /* stopped and started again before its events came (or while libvirt was away): a new run,
                 * with libvirt's default pins, not the old one's pins drifted */
                log_info("%s: runs again (ID %u, was %u): placing the new run", d->name,
                         GPOINTER_TO_UINT(g_hash_table_lookup(running, uuid)), d->domain_id);
                placer_forget(m, uuid, "stopped and started again");
        }
        /* recorded decisions first: a domain placed anew must not take the cores another one records. Two
         * records of this pass that claim one core both stand (both run there): which came first in ID
         * order decides nothing, so a record a domain's owner wrote cannot evict another domain; while a
         * core is free, that is said, naming both */
        m->adopting = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (unsigned i = 0; i < n; i++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                if (!g_hash_table_contains(m->decisions, virt_domain_uuid(doms[i], uuid)) &&
                    placer_adopt(m, doms[i]))
                        g_hash_table_add(m->adopting, g_strdup(uuid));
        }
        placer_say_adopted_clashes(m);
        g_clear_pointer(&m->adopting, g_hash_table_unref);
        /* then what is counted as it runs, before anything is placed against it, whatever the IDs: the new
         * domains found pinned (opted out, pinned by someone else), and the drift, hand pins and bindings
         * of the decided ones; then the new domains and the resized ones are placed */
        first = g_new0(bool, MAX(n, 1));
        resized = g_new0(bool, MAX(n, 1));
        for (unsigned i = 0; i < n; i++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                first[i] = !g_hash_table_contains(m->decisions, virt_domain_uuid(doms[i], uuid)) &&
                           placer_found_pinned(m, doms[i]);
        }
        for (unsigned k = 0; k < 2 * n; k++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                const Decision *d;
                unsigned i = k % n;
                bool counting = k < n;
                d = g_hash_table_lookup(m->decisions, virt_domain_uuid(doms[i], uuid));
                if (!d) {
                        if (first[i] == counting)
                                placer_place(m, doms[i], origin, 0);
                } else if (origin != ORIGIN_RECONCILE || !counting) {
                        if (resized[i])
                                placer_place(m, doms[i], ORIGIN_RESIZED, 0);
                } else if ((resized[i] = placer_resized(m, doms[i], d)))
                        continue;
                else if (placer_hand_pinned_resized(m, doms[i], d))
                        placer_adopt_hand_pins(m, doms[i],
                                               "its vCPUs or memory changed while pinned by hand");
                else if (placer_pins_drifted(m, doms[i], d))
                        placer_adopt_hand_pins(m, doms[i], "its vCPU pins drifted from the decision");
                else if (placer_skipped_now_pinned(m, doms[i], d))
                        placer_adopt_hand_pins(m, doms[i], "its vCPUs were pinned by someone else");
                else if (placer_binding_moved(m, doms[i], d))
                        placer_adopt_hand_pins(m, doms[i], "its memory was bound elsewhere by someone else");
                else if (placer_advice_binding_moved(m, doms[i], d))
                        placer_place(m, doms[i], ORIGIN_RESIZED, 0);
                else if (d->unrecorded)
                        placer_record_again(m, doms[i], g_hash_table_lookup(m->decisions, uuid));
                else {
                        placer_follow_emulator(m, doms[i], g_hash_table_lookup(m->decisions, uuid));
                        placer_follow_iothreads(m, doms[i], g_hash_table_lookup(m->decisions, uuid));
                }
        }
        /* the domains left in it are gone (every running one was read above), but for those whose start
         * event is to come */
        interrupted_clear(m, starting);
        if (gone_offline)
                place_again(m, gone_offline, false, "a CPU of its went offline or left the guests' cgroup");
        /* a domain whose record ran on CPUs kept for the host since was placed anew off them, as a reload
         * keeping them moves it: the others' emulator and I/O threads follow, as after that reload */
        if (m->adopt_kept_refused) {
                m->adopt_kept_refused = false;
                rehouse_all(m, "once the domains on CPUs now kept for the host were placed anew");
        }
        virt_domains_free(doms, n);
}

void manager_reconcile(Manager *m)
{
        reconcile(m, ORIGIN_RECONCILE);
}

static void on_reconcile(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        manager_reconcile(arg);
}

static void arm_reconcile(Manager *m)
{
        struct timeval tv = {.tv_sec = m->config->reconcile_sec};

        evtimer_del(m->reconcile_ev);
        event_free(m->reconcile_ev);
        m->reconcile_ev = event_new(m->base, -1, EV_PERSIST, on_reconcile, m);
        if (m->config->reconcile_sec)
                evtimer_add(m->reconcile_ev, &tv);
}

/*
 * A connection opened in a thread of its own (virt_conn_connect()): a libvirtd that accepts the connection
 * and never answers must not stop the loop (D-Bus, metrics, signals, the watchdog), and libvirt sets no
 * keepalive before the open returns. (Once open, the calls run on the loop: a libvirtd that stops
 * answering then holds it for one call, until the keepalive gives the connection up; virt-event.h.) The
 * thread hands the result over through done_ev; when the manager no longer wants it (stopping, the URI
 * changed, a reload gave it up) the thread frees this itself.
 */
typedef struct Connecting {
        GMutex lock;
        char *uri;
        char *shown;        /* how an error names uri (NULL: as written) */
        char *key;          /* uri's libvirtd (instance_lock_key()); NULL for the test driver */
        virConnectPtr conn; /* the thread's result: NULL on failure, with error */
        char *error;
        bool done;             /* the thread has its result */
        bool abandoned;        /* nobody waits: the thread frees this */
        bool close_abandoned;  /* ... closing the connection (not when the process is stopping) */
        struct event *done_ev; /* activated by the thread; the loop's, never touched once abandoned */
        GThread *thread;
} Connecting;

static void connecting_free(Connecting *c)
{
        g_mutex_clear(&c->lock);
        g_free(c->uri);
        g_free(c->shown);
        g_free(c->key);
        g_free(c->error);
        g_free(c);
}

/* Opens given up on whose thread is still blocked in libvirt, by libvirtd (Connecting.key): while one is,
 * no other open of that libvirtd starts; and at most MANAGER_ABANDONED_OPENS_MAX in all. Counted by the
 * loop when it gives one up, counted back by its thread when libvirt lets it return. */
static GMutex blocked_lock;
static GHashTable *blocked_opens; /* key -> count */
static unsigned blocked_total;

static void blocked_add(const char *key, int delta)
{
        unsigned n;

        if (!key)
                return;
        g_mutex_lock(&blocked_lock);
        if (!blocked_opens)
                blocked_opens = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        n = GPOINTER_TO_UINT(g_hash_table_lookup(blocked_opens, key)) + (unsigned)delta;
        if (n)
                g_hash_table_replace(blocked_opens, g_strdup(key), GUINT_TO_POINTER(n));
        else
                g_hash_table_remove(blocked_opens, key);
        blocked_total += (unsigned)delta;
        g_mutex_unlock(&blocked_lock);
}

/* Why an open of uri must not start now (a new string), or NULL: an earlier open of its libvirtd has not
 * returned, or MANAGER_ABANDONED_OPENS_MAX have not in all. Never for the test driver (in this process). */
static char *blocked_why(const char *uri)
{
        g_autofree char *key = g_str_has_prefix(uri, "test:") ? NULL : instance_lock_key(uri);
        g_autofree char *shown = NULL;
        unsigned n, total;

        if (!key)
                return NULL;
        g_mutex_lock(&blocked_lock);
        n = blocked_opens ? GPOINTER_TO_UINT(g_hash_table_lookup(blocked_opens, key)) : 0;
        total = blocked_total;
        g_mutex_unlock(&blocked_lock);
        if (!n && total < MANAGER_ABANDONED_OPENS_MAX)
                return NULL;
        shown = uri_public_marked(uri);
        if (n)
                return g_strdup_printf(
                    "Cannot try %s now: an earlier open of that libvirtd has not returned (one "
                    "that accepts and never answers)",
                    shown);
        return g_strdup_printf("Cannot try %s now: %u earlier opens of libvirt URIs have not returned (a "
                               "libvirtd that accepts and never answers)",
                               shown, total);
}

static gpointer connect_thread(gpointer data)
{
        Connecting *c = data;
        char *error = NULL;
        virConnectPtr conn = virt_conn_connect(c->uri, c->shown, &error);
        bool abandoned;

        g_mutex_lock(&c->lock);
        c->conn = conn;
        c->error = error;
        c->done = true;
        abandoned = c->abandoned;
        if (!abandoned)
                event_active(c->done_ev, 0, 0);
        g_mutex_unlock(&c->lock);
        if (abandoned) {
                if (conn && c->close_abandoned)
                        virt_conn_disconnect(conn);
                blocked_add(c->key, -1);
                connecting_free(c);
        }
        return NULL;
}

/* Starts opening uri in a thread; done(arg m) runs from the loop once it has its result. */
static Connecting *connecting_start(Manager *m, const char *uri, const char *shown, event_callback_fn done)
{
        Connecting *c = g_new0(Connecting, 1);

        g_mutex_init(&c->lock);
        c->uri = g_strdup(uri);
        c->shown = g_strdup(shown);
        c->key = g_str_has_prefix(uri, "test:") ? NULL : instance_lock_key(uri);
        /* the thread activates it, but its callback runs only once this thread is back in the loop */
        c->done_ev = event_new(m->base, -1, 0, done, m);
        c->thread = g_thread_new("connect", connect_thread, c);
        return c;
}

/* From done_ev's callback: the thread's result (NULL with *ret_error), c freed. */
static virConnectPtr connecting_take(Connecting *c, char **ret_error)
{
        virConnectPtr conn;

        g_thread_join(c->thread); /* it has its result: only returning is left */
        event_free(c->done_ev);
        conn = c->conn;
        *ret_error = g_steal_pointer(&c->error);
        connecting_free(c);
        return conn;
}

static gpointer close_thread(gpointer conn)
{
        virt_conn_disconnect(conn);
        return NULL;
}

/* Closes a connection opened and not wanted, in a thread of its own as it was opened (no keepalive is set
 * on it: a close may wait on a libvirtd that stopped answering); the test driver's at once. */
static void close_unwanted(virConnectPtr conn, const char *uri)
{
        if (g_str_has_prefix(uri, "test:"))
                virt_conn_disconnect(conn);
        else
                g_thread_unref(g_thread_new("close", close_thread, conn));
}

/* Drops c (NULL: nothing), a connection being opened whose result is not wanted. close: close it once it
 * comes (close_unwanted()); else leave it to the process's exit. */
static void connecting_drop(Connecting *c, bool close)
{
        struct event *done_ev;
        GThread *thread;
        bool done;

        if (!c)
                return;
        g_mutex_lock(&c->lock);
        done = c->done;
        c->abandoned = !done;
        c->close_abandoned = close;
        if (!done) /* counted before the thread may see it abandoned and count it back */
                blocked_add(c->key, 1);
        /* abandoned, c is the thread's to free the moment the lock is let go */
        done_ev = g_steal_pointer(&c->done_ev);
        thread = c->thread;
        g_mutex_unlock(&c->lock);
        event_free(done_ev);
        if (!done) {
                g_thread_unref(thread);
                return;
        }
        g_thread_join(thread);
        if (c->conn && close)
                close_unwanted(c->conn, c->uri);
        connecting_free(c);
}

/* Drops the running URI's connection being opened (a URI change, or stopping: see connecting_drop()). */
static void connecting_abandon(Manager *m, bool close)
{
        evtimer_del(m->connect_slow_ev);
        connecting_drop(g_steal_pointer(&m->connecting), close);
}

/* conn (NULL: error says why) opened: subscribed, and what runs reconciled; else another try later. */
static void connected(Manager *m, virConnectPtr conn, char *error)
{
        static const VirtConnEvents events = {.lifecycle = on_lifecycle,
                                              .tunable = on_tunable,
                                              .device = on_device,
                                              .metadata = on_metadata,
                                              .closed = manager_connection_closed};
        const char *uri = manager_uri(m);
        g_autofree char *why = error;

        if (!conn || virt_conn_attach(conn, uri, &events, m, &m->conn, &why) < 0) {
                /* a libvirtd away for hours would write two lines every 30 s: at the longest wait only a
                 * failure that says something new is a warning (STATUS= and the metrics say the rest) */
                log_printf(m->backoff_sec < BACKOFF_MAX_SEC || g_strcmp0(why, m->connect_error) != 0
                               ? LOG_WARNING
                               : LOG_DEBUG,
                           "%s", why);
                g_free(m->connect_error);
                m->connect_error = g_strdup(why);
                schedule_reconnect(m);
                return;
        }
        log_info("Connected to %s", uri);
        g_clear_pointer(&m->connect_error, g_free);
        m->backoff_sec = 1;
        set_connected(m, true);
        reconcile(m, m->ever_connected ? ORIGIN_RECONCILE : ORIGIN_RUNNING_AT_START);
        m->ever_connected = true;
        healer_connected(m);
        manager_reload_pending(m);
}

static void on_connect_done(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        Connecting *c = m->connecting;
        virConnectPtr conn;
        char *error;

        (void)fd;
        (void)what;
        if (!c)
                return;
        m->connecting = NULL;
        evtimer_del(m->connect_slow_ev);
        conn = connecting_take(c, &error);
        connected(m, conn, error);
}

static void on_connect_slow(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;

        (void)fd;
        (void)what;
        log_warning("%s has not answered for %u s; waiting for it (placementd answers meanwhile, "
                    "not connected)",
                    manager_uri(m), CONNECT_SLOW_SEC);
}

static void connect_now(Manager *m)
{
        const char *uri = manager_uri(m);
        struct timeval slow = {.tv_sec = CONNECT_SLOW_SEC};
        g_autofree char *error = NULL;

        if (m->conn || m->connecting)
                return;
        /* the test driver runs in this process: it cannot hang, and tests see it connected at once */
        if (g_str_has_prefix(uri, "test:")) {
                virConnectPtr conn = virt_conn_connect(uri, NULL, &error);
                connected(m, conn, g_steal_pointer(&error));
                return;
        }
        /* an open of this libvirtd given up on (a URI change) still blocked: no second one beside it;
         * tried again with the backoff */
        if ((error = blocked_why(uri))) {
                connected(m, NULL, g_steal_pointer(&error));
                return;
        }
        m->connecting = connecting_start(m, uri, NULL, on_connect_done);
        evtimer_add(m->connect_slow_ev, &slow);
}

/* The reload's open of its new URI ended: conn (NULL: error, taken, says why) is kept for
 * manager_set_config(), and the caller told. */
static void next_finish(Manager *m, virConnectPtr conn, char *error, char *shown)
{
        ManagerNextDone done = m->next_done;
        void *userdata = m->next_userdata;
        g_autofree char *why = error, *public = shown;

        evtimer_del(m->next_timeout_ev);
        m->next_done = NULL;
        m->next_userdata = NULL;
        m->next_conn = conn;
        if (!conn && !public) { /* libvirt's words may quote what the URI names: not everyone's to read */
                g_autofree char *uri = uri_public_marked(m->next_uri);
                public = g_strdup_printf("Cannot connect to %s (libvirt's message is in the log)", uri);
        }
        if (!conn)
                g_clear_pointer(&m->next_uri, g_free);
        if (done)
                done(m, conn ? NULL : why ? why : "libvirt gave no reason", conn ? NULL : public, userdata);
}

static void on_next_done(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        Connecting *c = g_steal_pointer(&m->next_connecting);
        virConnectPtr conn;
        char *error = NULL;

        (void)fd;
        (void)what;
        if (!c)
                return;
        conn = connecting_take(c, &error);
        next_finish(m, conn, error, NULL);
}

/* A host that takes longer (ssh to one that does not answer, a libvirtd that accepts and never answers)
 * is no URI to switch to now: the reload is refused rather than left waiting. */
static void on_next_timeout(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        g_autofree char *shown = NULL, *why = NULL, *public = NULL;

        (void)fd;
        (void)what;
        if (!m->next_connecting)
                return;
        shown = uri_public_marked(m->next_uri);
        connecting_drop(g_steal_pointer(&m->next_connecting), true);
        why = g_strdup_printf("Cannot connect to %s: no answer within %u s", shown, m->next_open_sec);
        public = g_strdup(why); /* our words: everyone may read them */
        next_finish(m, NULL, g_steal_pointer(&why), g_steal_pointer(&public));
}

void manager_drop_next(Manager *m)
{
        connecting_drop(g_steal_pointer(&m->next_connecting), true);
        if (m->next_conn)
                close_unwanted(g_steal_pointer(&m->next_conn), m->next_uri);
        g_clear_pointer(&m->next_uri, g_free);
        evtimer_del(m->next_timeout_ev);
        m->next_done = NULL;
        m->next_userdata = NULL;
}

int manager_open_next(Manager *m, const char *uri, ManagerNextDone done, void *userdata, char **ret_error)
{
        g_autofree char *shown = uri_public_marked(uri);
        struct timeval limit = {.tv_sec = m->next_open_sec};
        g_autofree char *why = NULL;

        manager_drop_next(m);
        if ((why = blocked_why(uri))) {
                if (ret_error)
                        *ret_error = g_steal_pointer(&why);
                return -EBUSY;
        }
        m->next_uri = g_strdup(uri);
        m->next_done = done;
        m->next_userdata = userdata;
        /* a thread even for the test driver: done always comes from the loop, after this returns */
        m->next_connecting = connecting_start(m, uri, shown, on_next_done);
        evtimer_add(m->next_timeout_ev, &limit);
        return 0;
}

static void on_sharing(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        placer_follow_sharing(arg);
}

Manager *manager_new(struct event_base *base, Topology *topology, Config *config, const char *uri)
{
        Manager *m = g_new0(Manager, 1);

        m->base = base;
        m->topology = topology;
        m->config = config;
        m->uri_override = g_strdup(uri);
        m->uri_public = uri_public(manager_uri(m));
        m->backoff_sec = 1;
        m->ledger = ledger_new(topology);
        m->unavailable = cpuset_new();
        m->offline = cpuset_new();
        m->config->placement.unavailable_cpus = m->unavailable;
        m->decisions = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)decision_free);
        m->interrupted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)plan_free);
        m->interrupted_runs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        m->journal_fd = -1;
        m->thread_masks =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)cpuset_free);
        m->boot_id = thread_mask_boot_id();
        m->reconnect_ev = evtimer_new(base, on_reconnect, m);
        m->teardown_ev = evtimer_new(base, on_teardown, m);
        m->reconcile_ev = event_new(base, -1, EV_PERSIST, on_reconcile, m);
        m->connect_slow_ev = evtimer_new(base, on_connect_slow, m);
        m->next_timeout_ev = evtimer_new(base, on_next_timeout, m);
        m->next_open_sec = MANAGER_NEXT_OPEN_SEC;
        m->sharing_ev = evtimer_new(base, on_sharing, m);
        m->metadata_ev = evtimer_new(base, on_metadata_due, m);
        m->metadata_changed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        m->own_writes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        tunable_init(m);
        m->load = load_monitor_new();
        healer_init(m);
        held_init(m);
        return m;
}

void manager_free(Manager *m)
{
        if (!m)
                return;
        connecting_abandon(m, false);
        connecting_drop(g_steal_pointer(&m->next_connecting), false);
        if (m->next_conn)
                virt_conn_disconnect(m->next_conn);
        g_free(m->next_uri);
        disconnect(m);
        event_free(m->connect_slow_ev);
        event_free(m->next_timeout_ev);
        event_free(m->reconnect_ev);
        event_free(m->teardown_ev);
        event_free(m->reconcile_ev);
        event_free(m->sharing_ev);
        m->sharing_ev = NULL;
        event_free(m->metadata_ev);
        g_hash_table_destroy(m->metadata_changed);
        g_hash_table_destroy(m->own_writes);
        tunable_done(m);
        held_done(m);
        healer_done(m);
        load_monitor_free(m->load);
        g_hash_table_destroy(m->decisions);
        g_hash_table_destroy(m->interrupted);
        g_hash_table_destroy(m->interrupted_runs);
        apply_journal_close(m);
        g_free(m->journal_next);
        g_hash_table_destroy(m->thread_masks);
        g_free(m->boot_id);
        ledger_free(m->ledger);
        topology_free(m->topology);
        config_free(m->config);
        g_free(m->uri_override);
        g_free(m->uri_public);
        g_free(m->connect_error);
        cpuset_free(m->reload_reserved_pending);
        cpuset_free(m->unavailable);
        cpuset_free(m->offline);
        cpuset_free(m->absent_offline);
        g_free(m);
}

void manager_set_callbacks(Manager *m, const ManagerCallbacks *cb, void *userdata)
{
        m->cb = *cb;
        m->userdata = userdata;
}

void manager_set_journal(Manager *m, const char *dir)
{
        apply_journal_open(m, dir);
}

void manager_set_next_journal(Manager *m, const char *dir)
{
        g_free(m->journal_next);
        m->journal_next = g_strdup(dir);
}

int manager_start(Manager *m)
{
        arm_reconcile(m);
        connect_now(m);
        return 0;
}

/* The CPUs a configuration keeps from vCPUs: ReservedCPUs=, and the other kinds under
 * CoreKinds=performance-only. */
static CpuSet *kept_from_vcpus(const Topology *t, const Config *c)
{
        CpuSet *kept = cpuset_new();

        for (unsigned p = 0; p < t->npus; p++)
                if (policy_keeps_pu(t, &c->placement, p))
                        cpuset_add(kept, t->pus[p].os_index);
        return kept;
}

/* Whether a decision of placementd's own has a vCPU, its emulator or an I/O thread on one of cpus. */
static bool runs_on(const Decision *d, const CpuSet *cpus)
{
        if (!d->plan || d->pinned_by_hand || d->result == DECISION_SKIPPED ||
            d->result == DECISION_UNPLACEABLE)
                return false;
        for (unsigned i = 0; i < d->plan->nvcpus; i++)
                if (cpuset_intersects(d->plan->vcpu_pins[i], cpus))
                        return true;
        return cpuset_intersects(d->plan->emulator_pin, cpus) ||
               cpuset_intersects(d->plan->iothread_pin, cpus);
}

GPtrArray *manager_pick(const Manager *m, DecisionPick pick, const void *arg)
{
        GPtrArray *uuids = g_ptr_array_new_with_free_func(g_free);
        GHashTableIter it;
        gpointer value;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value))
                if (pick(m, value, arg))
                        g_ptr_array_add(uuids, g_strdup(((const Decision *)value)->uuid));
        return uuids;
}

/* What place_again() picks: with cpus, each domain placementd put on one of them; with advisory, each
 * advisory one. */
typedef struct {
        const CpuSet *cpus;
        bool advisory;
} AgainPick;

static bool pick_again(const Manager *m, const Decision *d, const void *arg)
{
        const AgainPick *p = arg;
        (void)m;
        return (p->advisory && d->result == DECISION_ADVISORY) || (p->cpus && runs_on(d, p->cpus));
}

/* Places again, as `placementctl replace` would, each domain of uuids still decided; returns how many
 * are no longer unplaceable after it. why: the log's words for it (NULL: the reload's, by the decision);
 * with report, a line per domain that was unplaceable and is no more ("NAME: placed, was unplaceable"). */
static unsigned place_each(Manager *m, GPtrArray *uuids, const char *why, GString *report)
{
        unsigned placed = 0;

        for (unsigned i = 0; i < uuids->len; i++) {
                const char *uuid = g_ptr_array_index(uuids, i);
                const Decision *d = g_hash_table_lookup(m->decisions, uuid);
                g_autoptr(virDomain) dom = NULL;
                bool was_unplaceable;
                if (!d || virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0)
                        continue;
                was_unplaceable = d->result == DECISION_UNPLACEABLE;
                /* under Apply=no nothing is placed: the decision made again is an advice */
                log_info("%s: %s%s again (%s)", d->name, was_unplaceable ? "unplaceable, " : "",
                         m->config->apply ? "placed" : "advised",
                         why ? why
                         : d->result == DECISION_ADVISORY
                             ? "after the reload: Apply= is on"
                             : "after the reload: its CPUs are now kept from vCPUs");
                placer_place(m, dom, ORIGIN_REPLACE, monotonic_usec());
                d = g_hash_table_lookup(m->decisions, uuid);
                if (was_unplaceable && d && d->result != DECISION_UNPLACEABLE) {
                        placed++;
                        if (report) {
                                g_autofree char *shown = text_safe(d->name);
                                g_string_append_printf(report, "%s: %s, was unplaceable\n", shown,
                                                       decision_result_to_string(d->result));
                        }
                }
        }
        /* each was placed on the host as the others left it so far: one placed before another moved off
         * CPUs it shared with it (newly reserved, say) had its emulator and I/O threads chosen without
         * them; they follow where its vCPUs run on the host as all of them left it */
        for (unsigned i = 0; uuids->len > 1 && i < uuids->len; i++) {
                g_autoptr(virDomain) dom = NULL;
                if (g_hash_table_contains(m->decisions, g_ptr_array_index(uuids, i)) &&
                    virt_conn_lookup_uuid(m->conn, g_ptr_array_index(uuids, i), &dom, NULL) == 0)
                        placer_rehouse(m, dom, "once the domains placed again with it moved");
        }
        return placed;
}

/* Places again, as `placementctl replace` would, each domain placementd put on one of cpus (NULL: none),
 * and with advisory each advisory one. why: see place_each(). */
static void place_again(Manager *m, const CpuSet *cpus, bool advisory, const char *why)
{
        AgainPick pick = {cpus, advisory};
        g_autoptr(GPtrArray) uuids = manager_pick(m, pick_again, &pick);

        place_each(m, uuids, why, NULL);
}

static bool pick_unplaceable(const Manager *m, const Decision *d, const void *arg)
{
        (void)m;
        (void)arg;
        return d->result == DECISION_UNPLACEABLE;
}

unsigned manager_place_unplaceable(Manager *m, const char *why, GString *report)
{
        g_autoptr(GPtrArray) uuids = NULL;

        if (!m->conn)
                return 0;
        m->unplaceable_retry = false;
        uuids = manager_pick(m, pick_unplaceable, NULL);
        return place_each(m, uuids, why, report);
}

/* Of before (UUIDs), those still unplaceable: after a reload, what it left unplaceable was placed with it
 * just now, and placing it again would only say the same twice. */
static bool pick_still_unplaceable(const Manager *m, const Decision *d, const void *arg)
{
        const GPtrArray *before = arg;

        return pick_unplaceable(m, d, NULL) &&
               g_ptr_array_find_with_equal_func((GPtrArray *)before, d->uuid, g_str_equal, NULL);
}

static bool pick_pinned(const Manager *m, const Decision *d, const void *arg)
{
        (void)m;
        (void)arg;
        return d->result == DECISION_PLACED || d->result == DECISION_OVERCOMMITTED;
}

/* After a reload that keeps CPUs from vCPUs: the CPUs it keeps are the housekeeping CPUs too (unless
 * HousekeepingCPUs= names others), and the emulator and I/O threads of each domain placementd pinned, not
 * only of those it placed again, are chosen again for the host as it is now, as a domain placed now would
 * have them: off their own vCPUs' cores, where no housekeeping CPU was left before. */
static void rehouse_all(Manager *m, const char *why)
{
        g_autoptr(GPtrArray) uuids = manager_pick(m, pick_pinned, NULL);

        for (unsigned i = 0; i < uuids->len; i++) {
                g_autoptr(virDomain) dom = NULL;
                if (virt_conn_lookup_uuid(m->conn, g_ptr_array_index(uuids, i), &dom, NULL) == 0)
                        placer_rehouse(m, dom, why);
        }
}

/*
 * What a reload changes for domains that run: Apply= turned on applies the advisory decisions, and CPUs
 * newly kept from vCPUs (ReservedCPUs=, CoreKinds=performance-only) are left by the domains placementd
 * put there. Each is placed again, as
 * `placementctl replace` would, and then the emulator and I/O threads of every domain follow the CPUs kept
 * for the host (other keys shape the next placements and heal).
 */
static void replace_after_reload(Manager *m, bool apply_on, const CpuSet *newly_reserved)
{
        g_autoptr(CpuSet) reserved = newly_reserved ? cpuset_copy(newly_reserved) : cpuset_new();

        /* what earlier reloads left for the connection, or this one leaves for it, as far as the running
         * configuration still asks for it (a later reload may have turned Apply= off again, or released
         * the CPUs) */
        apply_on = (apply_on || m->reload_apply_pending) && m->config->apply;
        if (m->reload_reserved_pending)
                cpuset_union(reserved, m->reload_reserved_pending);
        {
                g_autoptr(CpuSet) kept = kept_from_vcpus(m->topology, m->config);
                g_autoptr(CpuSet) released = cpuset_copy(reserved);
                cpuset_subtract(released, kept);
                cpuset_subtract(reserved, released);
        }
        m->reload_apply_pending = false;
        g_clear_pointer(&m->reload_reserved_pending, cpuset_free);
        if (!apply_on && cpuset_is_empty(reserved))
                return;
        if (!m->conn) {
                m->reload_apply_pending = apply_on;
                m->reload_reserved_pending = g_steal_pointer(&reserved);
                return;
        }
        place_again(m, reserved, apply_on, NULL);
        if (!cpuset_is_empty(reserved))
                rehouse_all(m, "once the reload kept CPUs for the host");
}

void manager_reload_pending(Manager *m)
{
        replace_after_reload(m, false, NULL);
}

/* Forgets every decision (their cores and memory with them): what another connection runs is read
 * afresh once connected, not matched by UUID to the old one's. */
static void forget_all(Manager *m, const char *why)
{
        g_autoptr(GPtrArray) uuids = g_ptr_array_new_with_free_func(g_free);
        GHashTableIter it;
        gpointer key;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, &key, NULL))
                g_ptr_array_add(uuids, g_strdup(key));
        for (unsigned i = 0; i < uuids->len; i++)
                placer_forget(m, g_ptr_array_index(uuids, i), why);
        interrupted_clear(m, NULL);
}

void manager_set_config(Manager *m, Config *config)
{
        bool uri_changed = !m->uri_override && g_strcmp0(config->uri, m->config->uri) != 0;
        bool apply_on = config->apply && !m->config->apply;
        bool heal_before = healer_configured(m);
        g_autoptr(CpuSet) newly_kept = kept_from_vcpus(m->topology, config);

        g_autoptr(CpuSet) kept_before = kept_from_vcpus(m->topology, m->config);
        g_autoptr(CpuSet) given_back = cpuset_copy(kept_before);
        g_autoptr(GPtrArray) unplaceable = manager_pick(m, pick_unplaceable, NULL);
        bool memory_back = config->placement.memory_reserve < m->config->placement.memory_reserve;

        cpuset_subtract(given_back, newly_kept);
        cpuset_subtract(newly_kept, kept_before);

        if (!config->load_interval_sec && m->config->load_interval_sec) {
                /* measuring turned off: every vCPU counts as busy again, not as it last read */
                load_monitor_free(m->load);
                m->load = load_monitor_new();
        }
        config_free(m->config);
        m->config = config;
        m->config->placement.unavailable_cpus = m->unavailable;
        healer_forget_request(m, NULL); /* a request carries the configured policy */
        arm_reconcile(m);
        if (uri_changed) {
                g_free(m->uri_public);
                m->uri_public = uri_public(manager_uri(m));
                log_info("Libvirt URI changed to %s: reconnecting", config->uri);
                connecting_abandon(m, true);
                disconnect(m);
                apply_journal_close(m); /* the old URI's entries stay, for a daemon on that URI */
                forget_all(m, "the libvirt URI changed: another connection's domains");
                apply_journal_open(m, m->journal_next);
                m->ever_connected = false; /* what runs there is found as at a start (PlaceRunning=) */
                evtimer_del(m->reconnect_ev);
                m->backoff_sec = 1;
                if (m->next_conn && g_strcmp0(m->next_uri, config->uri) == 0) {
                        /* opened ahead by the reload (manager_open_next()): no second open, no wait */
                        g_clear_pointer(&m->next_uri, g_free);
                        connected(m, g_steal_pointer(&m->next_conn), NULL);
                } else {
                        connect_now(m);
                }
        }
        manager_drop_next(m); /* one opened for another URI is not this reload's */
        g_clear_pointer(&m->journal_next, g_free);
        replace_after_reload(m, apply_on, newly_kept);
        healer_reloaded(m, heal_before, !cpuset_is_empty(given_back) || memory_back);
        /* CPUs or memory it released (ReservedCPUs=, MemoryReserve=, CoreKinds=) may hold those
         * unplaceable before it now */
        if (m->conn) {
                g_autoptr(GPtrArray) still = manager_pick(m, pick_still_unplaceable, unplaceable);
                m->unplaceable_retry = false;
                place_each(m, still, "after the reload", NULL);
        }
}

const Config *manager_config(const Manager *m)
{
        return m->config;
}

const Topology *manager_topology(const Manager *m)
{
        return m->topology;
}

const Ledger *manager_ledger(const Manager *m)
{
        return m->ledger;
}

bool manager_connected(const Manager *m)
{
        return m->connected;
}

VirtConn *manager_connection(const Manager *m)
{
        return m->conn;
}

unsigned manager_reconnects(const Manager *m)
{
        return m->reconnects;
}

/* virsh's rule: a domain ID (a running domain's number), then a UUID in any case, then an exact name (a
 * domain may be named like another's UUID or ID: the UUID and the ID win, as virsh resolves them); last
 * the name as text output prints it (text_safe(): a name with control characters is found by what `list`
 * showed; the escape of a backslash makes that form one name's only). Text that is one domain's exact name
 * and how another's name is shown (a domain named "a\x0db" beside one named "a<CR>b") names neither: it
 * is ambiguous, and NULL (the caller names both by UUID). */
const Decision *manager_lookup(const Manager *m, const char *name_or_uuid)
{
        GHashTableIter it;
        gpointer value;
        const Decision *by_uuid = NULL, *by_name = NULL, *by_id = NULL, *by_shown = NULL;
        guint64 id = 0;
        bool numeric = g_ascii_string_to_unsigned(name_or_uuid, 10, 1, G_MAXINT, &id, NULL);
        bool escaped = strchr(name_or_uuid, '\\') != NULL;

        if (!*name_or_uuid)
                return NULL;
        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value)) {
                const Decision *d = value;
                if (numeric && d->domain_id == id)
                        by_id = d;
                if (g_ascii_strcasecmp(d->uuid, name_or_uuid) == 0)
                        by_uuid = d;
                if (strcmp(d->name, name_or_uuid) == 0)
                        by_name = d;
                if (escaped && !text_is_safe(d->name)) {
                        g_autofree char *shown = text_safe(d->name);
                        if (strcmp(shown, name_or_uuid) == 0)
                                by_shown = d;
                }
        }
        if (by_id || by_uuid)
                return by_id ? by_id : by_uuid;
        return by_name && by_shown && by_name != by_shown ? NULL : by_name ? by_name : by_shown;
}

static int compare_by_name(gconstpointer a, gconstpointer b)
{
        const Decision *x = *(const Decision *const *)a, *y = *(const Decision *const *)b;
        return strcmp(x->name, y->name);
}

GPtrArray *manager_list(const Manager *m)
{
        GPtrArray *all = g_ptr_array_new();
        GHashTableIter it;
        gpointer value;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value))
                g_ptr_array_add(all, value);
        g_ptr_array_sort(all, compare_by_name);
        return all;
}

void manager_count(const Manager *m, unsigned *counts)
{
        GHashTableIter it;
        gpointer value;

        memset(counts, 0, sizeof(unsigned) * _DECISION_RESULT_MAX);
        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value))
                counts[((const Decision *)value)->result]++;
}

bool manager_host_unmeasured(const Manager *m, const DomainLoad *l)
{
        return m->config->load_interval_sec > 0 && (!l || !l->known);
}

Plan *manager_plan(const Manager *m, unsigned vcpus, uint64_t memory)
{
        /* as a domain that starts is placed: its load not known yet */
        PlacementRequest req = {.name = "(new domain)",
                                .vcpus = vcpus,
                                .memory = memory,
                                .host_unmeasured = manager_host_unmeasured(m, NULL)};
        return policy_place(m->topology, m->ledger, &req, &m->config->placement);
}

int manager_replace(Manager *m, const char *name_or_uuid, char **ret_error)
{
        const Decision *d = manager_lookup(m, name_or_uuid);
        g_autoptr(virDomain) dom = NULL;

        g_autofree char *shown = text_safe(name_or_uuid); /* the caller's text, said back escaped */

        if (!d) {
                *ret_error = g_strdup_printf("no running domain '%s' is known", shown);
                return -ENOENT;
        }
        if (!m->conn) {
                *ret_error = g_strdup("not connected to libvirt");
                return -ENOTCONN;
        }
        if (virt_conn_lookup_uuid(m->conn, d->uuid, &dom, NULL) < 0) {
                *ret_error = g_strdup_printf("domain '%s' is gone", shown);
                placer_forget(m, d->uuid, "gone");
                return -ENOENT;
        }
        placer_place(m, dom, ORIGIN_REPLACE, monotonic_usec());
        d = manager_lookup(m, name_or_uuid);
        if (d && d->result == DECISION_UNPLACEABLE) {
                /* nothing moved: say why, as a failure the caller sees */
                g_autofree char *name = text_safe(d->name);
                *ret_error = g_strdup_printf("%s is unplaceable now: %s", name, d->reason ? d->reason : "");
                return -EAGAIN;
        }
        return 0;
}

int manager_cpu_stats(Manager *m, GHashTable **ret, char **ret_error)
{
        if (!m->conn)
                return ret_error_set(ret_error, -ENOTCONN, "not connected to libvirt");
        return virt_cpu_stats_all(virt_conn_get(m->conn), ret, ret_error);
}

int manager_cpu_advice(Manager *m, const char *uuid, CpuAdvice **ret, char **ret_error)
{
        g_autoptr(virDomain) dom = NULL;
        g_autoptr(VirtCpu) v = NULL;

        if (!m->conn)
                return ret_error_set(ret_error, -ENOTCONN, "not connected to libvirt");
        if (virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0)
                return -ENOENT;
        v = virt_cpu_new(virt_conn_get(m->conn));
        return virt_cpu_advise(v, dom, ret, ret_error);
}

/* What the map shows of an advisory decision: "runs" (the pins it had; its advice is not applied),
 * "advice" (it runs unpinned: the ledger counts its advice), NULL when nothing (not advisory, or an
 * unplaceable advice of a domain that runs unpinned). */
static const char *advice_shown(const Decision *d)
{
        if (d->result != DECISION_ADVISORY)
                return NULL;
        if (d->advice)
                return "runs";
        return d->plan && d->plan->result != PLAN_UNPLACEABLE ? "advice" : NULL;
}

char *manager_host_map(const Manager *m)
{
        g_autofree char *map = hostmap_render(m->topology, m->ledger, m->config->placement.reserved_cpus);
        g_autoptr(GPtrArray) all = manager_list(m);
        GString *text = g_string_new(map);

        /* the map shows the pins that really run; say whose plan did not take, and where an advice
         * nothing applied stands in for a domain that runs unpinned */
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                g_autofree char *safe = NULL;
                const char *advice = advice_shown(d);
                if (d->result != DECISION_FAILED && !advice)
                        continue;
                /* escaped as the map's names are (text_safe()): placementctl only makes it terminal-safe */
                safe = text_safe(d->name);
                if (d->result == DECISION_FAILED)
                        g_string_append_printf(text, "failed: %s runs as shown, not as planned: %s\n", safe,
                                               d->apply_error ? d->apply_error : "");
                else if (!strcmp(advice, "runs"))
                        g_string_append_printf(text,
                                               "advised: %s runs as shown; its advice (Apply=no) is not "
                                               "applied\n",
                                               safe);
                else
                        g_string_append_printf(text,
                                               "advised: %s is shown as advised (Apply=no), not applied: "
                                               "its vCPUs are not pinned\n",
                                               safe);
        }
        return g_string_free(text, FALSE);
}

char *manager_host_map_json(const Manager *m)
{
        g_autofree char *text = manager_host_map(m);
        g_autoptr(GPtrArray) all = manager_list(m);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "text");
        json_builder_add_string_value(b, text);
        hostmap_json_add(b, m->topology, m->ledger, m->config->placement.reserved_cpus);
        json_builder_set_member_name(b, "failed");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                if (d->result != DECISION_FAILED)
                        continue;
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "domain");
                json_builder_add_string_value(b, d->name);
                json_builder_set_member_name(b, "error");
                json_builder_add_string_value(b, d->apply_error ? d->apply_error : "");
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        /* advisory domains the map shows: as they run, or as advised (advice_shown()) */
        json_builder_set_member_name(b, "advised");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                if (!advice_shown(d))
                        continue;
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "domain");
                json_builder_add_string_value(b, d->name);
                json_builder_set_member_name(b, "shown");
                json_builder_add_string_value(b, advice_shown(d));
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        return json_to_text(root, FALSE);
}

/* " (1 overcommitted, 1 unplaceable)": the advisory decisions whose plan would not place them as asked
 * (decision_verdict()), nothing when none: advisory mode hides no guest that needs a look. */
static void append_advisory_verdicts(const Manager *m, GString *s)
{
        unsigned verdicts[_DECISION_RESULT_MAX] = {0};
        const char *sep = " (";
        GHashTableIter it;
        gpointer value;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, NULL, &value))
                if (((const Decision *)value)->result == DECISION_ADVISORY)
                        verdicts[decision_verdict(value)]++;
        for (int r = 0; r < _DECISION_RESULT_MAX; r++)
                if (verdicts[r] && r != DECISION_ADVISORY) {
                        g_string_append_printf(s, "%s%u %s", sep, verdicts[r],
                                               decision_result_to_string((DecisionResult)r));
                        sep = ", ";
                }
        if (*sep == ',')
                g_string_append_c(s, ')');
}

char *manager_status(const Manager *m)
{
        unsigned counts[_DECISION_RESULT_MAX];
        GString *s = g_string_new(NULL);

        manager_count(m, counts);
        g_string_append_printf(s, "%s %s, policy %s%s", m->connected ? "Connected to" : "Waiting for",
                               manager_uri_public(m), policy_kind_to_string(m->config->placement.policy),
                               m->config->apply ? "" : " (advisory)");
        g_string_append_printf(s, "; %u domain%s", g_hash_table_size(m->decisions),
                               g_hash_table_size(m->decisions) == 1 ? "" : "s");
        for (int r = 0; r < _DECISION_RESULT_MAX; r++) {
                if (counts[r])
                        g_string_append_printf(s, ", %u %s", counts[r],
                                               decision_result_to_string((DecisionResult)r));
                if (counts[r] && r == DECISION_ADVISORY)
                        append_advisory_verdicts(m, s);
        }
        return g_string_free(s, FALSE);
}

const double manager_latency_bounds[MANAGER_LATENCY_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                                0.05,   0.1,   0.25,   0.5,   1,    2.5};

const ManagerStats *manager_stats(const Manager *m)
{
        return &m->stats;
}

void manager_note_bus_call(Manager *m, bool refused)
{
        m->stats.bus_calls_limited++;
        m->stats.bus_calls_refused += refused;
}

void manager_note_reload(Manager *m, bool ok)
{
        m->stats.reloads++;
        if (!ok)
                m->stats.reload_failures++;
}

/*
 * The bulk statistics count each domain's online vCPUs (vcpu.current): a count its plan does not have is
 * a vCPU plugged or unplugged (`virsh setvcpus --live`, which sends no event), followed at once rather than
 * at the next reconcile. Each such count is looked at once per decision, its live definition read then.
 */
static void follow_vcpu_counts(Manager *m, GHashTable *stats)
{
        g_autoptr(GPtrArray) changed = g_ptr_array_new_with_free_func(g_free);
        GHashTableIter it;
        gpointer key, value;

        if (!m->conn)
                return;
        g_hash_table_iter_init(&it, stats);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const DomainCpuStats *s = value;
                Decision *d = g_hash_table_lookup(m->decisions, key);
                if (!d || !d->plan || d->result == DECISION_SKIPPED || !s->nvcpus ||
                    s->nvcpus == d->plan->requested_vcpus || s->nvcpus == d->stats_vcpus)
                        continue;
                d->stats_vcpus = s->nvcpus;
                g_ptr_array_add(changed, g_strdup(key));
        }
        for (unsigned i = 0; i < changed->len; i++) {
                const char *uuid = g_ptr_array_index(changed, i);
                const Decision *d = g_hash_table_lookup(m->decisions, uuid);
                g_autoptr(virDomain) dom = NULL;

                if (!d || !m->conn || virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0)
                        continue; /* gone: its lifecycle event says so */
                if (placer_resized(m, dom, d))
                        placer_place(m, dom, ORIGIN_RESIZED, monotonic_usec());
        }
}

void manager_note_stats(Manager *m, GHashTable *stats)
{
        follow_vcpu_counts(m, stats);
        if (!m->config->load_interval_sec)
                return;
        if (load_monitor_update(m->load, stats, monotonic_usec(), m->config->load_warmup_sec) > 0)
                manager_heal_now(m, "measured load changed");
}

const DomainLoad *manager_load(const Manager *m, const char *uuid)
{
        return load_monitor_lookup(m->load, uuid);
}
