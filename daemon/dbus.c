/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dbus.h"

#include <errno.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-cleanup.h"
#include "bus-event.h"
#include "cpu-json.h"
#include "decision-json.h"
#include "decision-text.h"
#include "log.h"
#include "polkit.h"
#include "ratelimit.h"
#include "size.h"
#include "text-safe.h"
#include "cpu-stats.h"

#define DOMAIN_ARG_MAX  1024u
#define REBALANCE_MOVES 8u
#define BACKOFF_MAX_SEC 30u

/* What one non-root sender (one bus connection) may ask of the query methods: 20 tokens at once, then 5
 * a second. A call costs one token, plus one per 256 vCPUs of a Plan and one per 100 domains of a list
 * of all of them. Senders are remembered in a table of at most 1024; GetStatus and the calls sd-bus answers
 * (the properties, introspection) take no token, the latter a share of their own (FREE_RATE).
 *
 * A sender's first calls wait while the bus is asked its uid (on a second connection that only asks). Its
 * first 4 so have room as long as fewer than 2048 calls wait in all; its later ones share 128 places with
 * the later calls of every other sender; past these bounds the call is refused at once, without asking. A
 * bus lets one user hold at most 256 connections at once (dbus-daemon's max_connections_per_user on a
 * system bus), so one user's calls fill at most 256 x 4 + 128 = 1152 of the 2048: the first calls of
 * another user's new connection, root's included, always find room. A charged call larger than 4 KiB is
 * refused before it can wait: the largest call of this interface (a 1024-byte domain name) takes about
 * 1.2 KiB, so the calls that wait hold at most 8 MiB of messages in all. Such a call is charged like any
 * other, before its strings are read once its sender is named, and then costs every token its user has
 * left. */
#define CALLER_RATE              5u
#define CALLER_BURST             20u
#define CALLER_SENDERS           1024u
#define CALLER_UID_CACHE         4096u
#define CALLER_VCPUS_PER_COST    256u
#define CALLER_DOMAINS_PER_COST  100u
#define CALLER_PARKED_PER_SENDER 4u
#define CALLER_USER_CONNECTIONS  256u /* dbus-daemon's max_connections_per_user on a system bus */
#define CALLER_PARKED_SHARED     128u /* the calls past a sender's first CALLER_PARKED_PER_SENDER */
#define CALLER_PARKED            (2u * CALLER_USER_CONNECTIONS * CALLER_PARKED_PER_SENDER)
#define CALLER_CALL_BYTES        4096u

/* The calls sd-bus answers for the daemon (introspection, the properties, Peer's Ping), GetStatus, and any
 * call of a member, interface or path the daemon does not have cost no token of a caller's bucket, but a
 * uid may make only 100 at once, then 50 a second, of them (root: any number): far more than busctl, gdbus
 * or a monitor polling the properties needs, and few enough that a flood of them gets short refusals
 * instead of introspection documents. A sender not named yet has them wait, as its charged calls do, to be
 * counted once the bus names it: a new connection per burst of calls buys no more of them. */
#define FREE_RATE  50u
#define FREE_BURST 100u
/* The account of the calls of connections not named yet whose size cannot be told without reading them
 * (arguments that are not all basic types): they share one count instead of waiting. */
#define FREE_UNNAMED "connections not named yet"

#define BASIC_TYPES       "ybnqiuxtdhsog"
#define ROUND_UP(n, unit) (((n) + (unit)-1) / (unit) * (unit))

struct BusService {
        struct event_base *base;
        Manager *manager;
        const StatsCache *stats;
        BusKind kind;
        char *address;
        BusHooks hooks;
        void *userdata;
        sd_bus *bus;
        BusEvent *event;
        sd_bus *ask;         /* a second connection to the same bus, only to ask it who senders are */
        BusEvent *ask_event; /* (NULL when it could not be opened: the first one asks) */
        Polkit *polkit;
        sd_bus_slot *slot;
        sd_bus_slot *filter; /* limits the calls sd-bus answers by itself */
        RateLimit *callers;
        RateLimit *free_callers; /* the calls of FREE_RATE */
        GHashTable *sender_uids; /* unique name -> uid + 1 (0: the bus would not say) */
        GHashTable *lookups;     /* unique name -> UidLookup, the senders the bus is being asked about */
        unsigned parked;         /* calls waiting in lookups, in all */
        unsigned parked_shared;  /* of them, those past their sender's first CALLER_PARKED_PER_SENDER */
        struct event *retry;
        unsigned backoff_sec;
        bool was_connected;
        char *reload_error;  /* why the last reload failed, NULL when it worked or none was done */
        char *metrics_error; /* why Listen= is not served, NULL when it is or is off */
        /* Reload() calls whose reload waits for its new libvirt URI to open: answered by
         * bus_service_reload_done() when it (or a reload that replaced it) ends */
        GPtrArray *reload_waiters;
};

static void connect_bus(BusService *s);

/* ---- helpers ---------------------------------------------------------------------------------- */

/* A call parked until the bus names its sender: the method runs again from the start then, or (method NULL:
 * a call sd-bus answers) the message is dispatched again. */
typedef struct ParkedCall {
        sd_bus_message *msg;
        sd_bus_message_handler_t method;
} ParkedCall;

/* One question to the bus about a sender's uid, with the calls that wait for its answer. */
typedef struct UidLookup {
        BusService *service;
        char *sender;
        sd_bus_slot *slot;
        GArray *calls; /* ParkedCall */
        bool drain; /* a call was refused meanwhile as too large: its bucket is emptied once it is named */
} UidLookup;

/* How many of a sender's n waiting calls are past its first CALLER_PARKED_PER_SENDER. */
static unsigned shared_calls(unsigned n)
{
        return n > CALLER_PARKED_PER_SENDER ? n - CALLER_PARKED_PER_SENDER : 0;
}

/* Frees l; its calls, if any are left (the bus went), are dropped unanswered. */
static void uid_lookup_free(void *userdata)
{
        UidLookup *l = userdata;

        for (unsigned i = 0; i < l->calls->len; i++)
                sd_bus_message_unref(g_array_index(l->calls, ParkedCall, i).msg);
        l->service->parked -= l->calls->len;
        l->service->parked_shared -= shared_calls(l->calls->len);
        g_array_unref(l->calls);
        sd_bus_slot_unref(l->slot);
        g_free(l->sender);
        g_free(l);
}

/* The uid of a sender is asked of the bus once per connection: unique names are never reused on a bus, so
 * the answer is kept in a bounded cache (emptied when full, and when the bus is left: a new bus hands the
 * same names out again). known is uid + 1, or 0 when the bus would not say (the sender has gone). */
static void remember_sender(BusService *s, const char *sender, guint known)
{
        if (g_hash_table_size(s->sender_uids) >= CALLER_UID_CACHE)
                g_hash_table_remove_all(s->sender_uids);
        g_hash_table_insert(s->sender_uids, g_strdup(sender), GUINT_TO_POINTER(known));
}

/* Runs a parked call's method again, now that its sender is known, and sends its error if it fails. */
static void resume_call(BusService *s, const ParkedCall *c)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = sd_bus_message_rewind(c->msg, true);

        if (!c->method) { /* a call sd-bus answers: dispatched again, through filter_free_call() */
                if (r < 0 || sd_bus_enqueue_for_read(s->bus, c->msg) < 0)
                        sd_bus_reply_method_errorf(c->msg, BUS_ERROR_LIMIT_EXCEEDED,
                                                   "The call could not be taken up again: try again");
                return;
        }
        if (r >= 0)
                r = c->method(c->msg, s, &error);
        if (r < 0 || sd_bus_error_is_set(&error))
                sd_bus_reply_method_errno(c->msg, r, &error);
        sd_bus_error_free(&error);
}

static void drain_account(BusService *s, const char *sender);

/* The bus's answer about a sender: remembered, its refused calls charged, then the calls that waited for
 * it run. */
static int on_sender_uid(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        UidLookup *l = userdata;
        BusService *s = l->service;
        uid_t uid;
        (void)ret_error;

        remember_sender(s, l->sender, polkit_uid_reply(reply, &uid) >= 0 ? (guint)uid + 1u : 0u);
        g_hash_table_steal(s->lookups, l->sender);
        if (l->drain)
                drain_account(s, l->sender);
        for (unsigned i = 0; i < l->calls->len; i++) {
                ParkedCall *c = &g_array_index(l->calls, ParkedCall, i);

                s->parked--;
                s->parked_shared -= shared_calls(i + 1) - shared_calls(i);
                resume_call(s, c);
                c->msg = sd_bus_message_unref(c->msg);
        }
        g_array_set_size(l->calls, 0);
        uid_lookup_free(l);
        bus_event_kick(s->event); /* the replies were sent from the asking connection's turn */
        return 0;
}

/* Asks the bus for sender's uid, without waiting: the question, with no call waiting for it yet, in *ret. */
static int ask_uid(BusService *s, const char *sender, UidLookup **ret)
{
        UidLookup *l = g_new0(UidLookup, 1);
        int r;

        l->service = s;
        l->sender = g_strdup(sender);
        l->calls = g_array_new(FALSE, FALSE, sizeof(ParkedCall));
        r = polkit_ask_uid(s->ask ? s->ask : s->bus, &l->slot, sender, on_sender_uid, l);
        if (r < 0) {
                uid_lookup_free(l);
                return r;
        }
        g_hash_table_insert(s->lookups, l->sender, l);
        bus_event_kick(s->ask_event); /* sent from the other connection's turn */
        *ret = l;
        return 0;
}

/* The size of a call as the bus carried it, to within padding: its fixed header, header fields and
 * arguments. sd-bus does not say; the methods take strings and numbers only (sd-bus checks the signature
 * against the vtable first), a string costing its length and nul, a number 8 bytes. Leaves msg rewound:
 * the method reads its arguments from the start. */
static size_t call_size(sd_bus_message *msg)
{
        const char *fields[] = {
            sd_bus_message_get_path(msg),   sd_bus_message_get_interface(msg),
            sd_bus_message_get_member(msg), sd_bus_message_get_destination(msg),
            sd_bus_message_get_sender(msg), sd_bus_message_get_signature(msg, true),
        };
        size_t size = 16; /* the fixed header and the fields array's length */
        char type;

        sd_bus_message_rewind(msg, true); /* a method may have read its arguments already */
        for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
                if (fields[i])
                        size += ROUND_UP(8 + strlen(fields[i]) + 1, 8); /* code, signature, length */
        while (sd_bus_message_peek_type(msg, &type, NULL) > 0) {
                union {
                        const char *text;
                        uint64_t number;
                } v;

                if (!strchr(BASIC_TYPES, type) || sd_bus_message_read_basic(msg, type, &v) < 0) {
                        size = SIZE_MAX; /* not one of ours: sd-bus would have refused it */
                        break;
                }
                size += type == 's' || type == 'o' || type == 'g' ? ROUND_UP(4 + strlen(v.text) + 1, 4) : 8;
        }
        sd_bus_message_rewind(msg, true);
        return size;
}

/* Refuses a call larger than CALLER_CALL_BYTES (its arguments cannot be valid: no valid call is so large),
 * reading its size (which reads its strings) only now, and empties its sender's bucket (once the sender is
 * named: drain_account()): 0 when it is not so large. */
static int refuse_large(BusService *s, sd_bus_message *msg, sd_bus_error *error)
{
        size_t size = call_size(msg);

        if (size <= CALLER_CALL_BYTES)
                return 0;
        drain_account(s, sd_bus_message_get_sender(msg));
        return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                 "A call of %zu bytes is refused: a call to %s takes at most %u", size,
                                 BUS_INTERFACE, CALLER_CALL_BYTES);
}

/*
 * Parks msg until the bus names its sender, asked without waiting: a call that waits for its reply would
 * stop the daemon's one thread, and sd-bus would meanwhile read everything the bus holds for the daemon
 * into its own queue (where the bus pushes back on senders, the daemon's heap does not). It is asked on
 * the second connection, whose answers do not queue behind the calls the bus holds for the first. Returns 1
 * (method runs again when the answer comes), or a negative errno with *error set: LimitExceeded, without
 * asking, when CALLER_PARKED calls wait already, or CALLER_PARKED_SHARED past their sender's first
 * CALLER_PARKED_PER_SENDER and this sender has that many waiting, or it sent a call too large meanwhile;
 * InvalidArgument for a call larger than CALLER_CALL_BYTES (its cost, every token left, is charged once
 * the bus names the sender).
 */
static int park_call(BusService *s, sd_bus_message *msg, const char *sender, sd_bus_message_handler_t method,
                     sd_bus_error *error)
{
        UidLookup *l = g_hash_table_lookup(s->lookups, sender);
        ParkedCall c;
        int r;

        if (l && l->calls->len >= CALLER_PARKED_PER_SENDER && s->parked_shared >= CALLER_PARKED_SHARED) {
                manager_note_bus_call(s->manager, true);
                return sd_bus_error_setf(
                    error, BUS_ERROR_LIMIT_EXCEEDED,
                    "Too many calls wait for the bus to name their senders (%u of each, "
                    "then %u in all; %s is not named yet): try again",
                    CALLER_PARKED_PER_SENDER, CALLER_PARKED_SHARED, sender);
        }
        if (l && l->drain) { /* it sent a call too large: its bucket will be empty */
                manager_note_bus_call(s->manager, true);
                return sd_bus_error_setf(error, BUS_ERROR_LIMIT_EXCEEDED,
                                         "Too many calls from %s, not named yet, after a call too large: "
                                         "%u tokens at once and %u per second",
                                         sender, CALLER_BURST, CALLER_RATE);
        }
        if (s->parked >= CALLER_PARKED) {
                manager_note_bus_call(s->manager, true);
                return sd_bus_error_setf(error, BUS_ERROR_LIMIT_EXCEEDED,
                                         "Too many calls wait for the bus to name their senders (%u at "
                                         "most; %s is not named yet): try again",
                                         CALLER_PARKED, sender);
        }
        if (!l && (r = ask_uid(s, sender, &l)) < 0)
                return r;
        /* a waiting call holds its message: a large one is refused first, and charged once named */
        if ((r = refuse_large(s, msg, error)) < 0) {
                l->drain = true;
                return r;
        }
        c = (ParkedCall){.msg = sd_bus_message_ref(msg), .method = method};
        g_array_append_val(l->calls, c);
        s->parked++;
        s->parked_shared += shared_calls(l->calls->len) - shared_calls(l->calls->len - 1);
        return 1;
}

/* The account of a sender the bus has named (known: uid + 1, 0 when the bus would not say) in key: "uid N",
 * or the one that senders the bus does not name share. NULL for root, who is never limited. */
static const char *account_of(guint known, char *key, size_t size)
{
        if (known == 1u)
                return NULL;
        if (known == 0u)
                return "senders the bus does not name";
        g_snprintf(key, size, "uid %u", known - 1u);
        return key;
}

/* Takes cost of a named sender's tokens (RATE_PASS for root, a sender not named and a direct connection). */
static RateVerdict charge_account(BusService *s, const char *sender, unsigned cost)
{
        uint64_t now = g_get_monotonic_time();
        gpointer known;
        char key[32];
        const char *account;
        RateVerdict v;

        if (!sender || !g_hash_table_lookup_extended(s->sender_uids, sender, NULL, &known) ||
            !(account = account_of(GPOINTER_TO_UINT(known), key, sizeof(key))))
                return RATE_PASS;
        v = rate_limit_take(s->callers, account, cost, now);
        if (v == RATE_UNKNOWN) {
                rate_limit_classify(s->callers, account, false, now);
                v = rate_limit_take(s->callers, account, cost, now);
        }
        return v;
}

/* Takes every token left in a named sender's bucket: what a call larger than CALLER_CALL_BYTES costs, whose
 * reading alone costs the daemon more than any valid call. */
static void drain_account(BusService *s, const char *sender)
{
        gpointer known;
        char key[32];
        const char *account;

        if (!sender || !g_hash_table_lookup_extended(s->sender_uids, sender, NULL, &known) ||
            !(account = account_of(GPOINTER_TO_UINT(known), key, sizeof(key)))) /* not named, or root */
                return;
        rate_limit_drain(s->callers, account, g_get_monotonic_time());
}

/*
 * Spends cost of the caller's tokens; refuses with LimitExceeded when it has too few left. The account is
 * the caller's user, as dbus-broker accounts per user: every connection of one uid draws on one bucket, so
 * opening more connections buys no more calls. Senders the bus will not name (gone before their first call
 * was read: nobody is left to answer) share one account, or a user who closes each connection at once
 * would get a fresh bucket per connection. Root is never limited.
 *
 * The tokens are taken before the call's arguments are read: a call larger than CALLER_CALL_BYTES is
 * refused with InvalidArgument once charged, and costs every token left (reading it cost more than any
 * valid call), so a flood of large calls meets LimitExceeded without its strings being read (sd-bus checks
 * a string's UTF-8 as it reads it). A call of a sender not named yet would wait holding its message, so
 * its size is read first (park_call()), and a large one refused then is charged once the bus names its
 * sender.
 *
 * Returns 0 when the call may go on, with the caller's uid in *ret_uid (unless NULL; (uid_t)-1 when the
 * bus did not name it), 1 when the call is parked until the bus names a new sender (method, the caller,
 * runs again then: it returns 1 at once), or a negative errno with *error set.
 */
static int charge_sender(BusService *s, sd_bus_message *msg, unsigned cost, sd_bus_message_handler_t method,
                         uid_t *ret_uid, sd_bus_error *error)
{
        const char *sender = sd_bus_message_get_sender(msg);
        char key[32];
        const char *account;
        RateVerdict v;
        gpointer known;
        uid_t uid = (uid_t)-1;

        if (ret_uid)
                *ret_uid = uid;
        if (!sender) { /* a direct connection, not through a bus: nobody else shares it */
                if (ret_uid && polkit_sender_uid(msg, &uid) >= 0)
                        *ret_uid = uid;
                return refuse_large(s, msg, error);
        }
        if (!g_hash_table_lookup_extended(s->sender_uids, sender, NULL, &known))
                return park_call(s, msg, sender, method, error);
        if (GPOINTER_TO_UINT(known) != 0 && ret_uid)
                *ret_uid = (uid_t)(GPOINTER_TO_UINT(known) - 1u);
        account = account_of(GPOINTER_TO_UINT(known), key, sizeof(key));
        if (!account)
                return refuse_large(s, msg, error);
        v = charge_account(s, sender, cost);
        manager_note_bus_call(s->manager, v != RATE_PASS);
        if (v != RATE_PASS)
                return sd_bus_error_setf(
                    error, BUS_ERROR_LIMIT_EXCEEDED,
                    "Too many calls from %s (%s): %u tokens at once and %u per second, %u for this call",
                    sender, account, CALLER_BURST, CALLER_RATE, MIN(cost, CALLER_BURST));
        return refuse_large(s, msg, error);
}

static int method_status(sd_bus_message *msg, void *userdata, sd_bus_error *error);
static const sd_bus_vtable *manager_methods(void);

/* Whether msg is a call of one of the Manager's methods that charge_sender() charges: its path, interface,
 * member and signature as the vtable has them (a wrong signature is refused by sd-bus before the method
 * runs), GetStatus excepted. */
static bool charged_call(sd_bus_message *msg)
{
        const char *member = sd_bus_message_get_member(msg),
                   *signature = sd_bus_message_get_signature(msg, true);

        if (g_strcmp0(sd_bus_message_get_path(msg), BUS_PATH) != 0 ||
            g_strcmp0(sd_bus_message_get_interface(msg), BUS_INTERFACE) != 0 || !member || !signature)
                return false;
        for (const sd_bus_vtable *v = manager_methods(); v->type != _SD_BUS_VTABLE_END; v++)
                if (v->type == _SD_BUS_VTABLE_METHOD && v->x.method.handler != method_status &&
                    strcmp(v->x.method.member, member) == 0 && strcmp(v->x.method.signature, signature) == 0)
                        return true;
        return false;
}

/*
 * Sees every message before sd-bus dispatches it, and limits every method call that charge_sender() does
 * not charge: introspection, the properties, Peer, GetStatus, and any call of a member, interface or path
 * the daemon does not have. A named non-root uid takes one of FREE_BURST at once and FREE_RATE a second;
 * past that the call is refused with LimitExceeded here, a short error in place of an introspection
 * document or the properties. A call of a sender not named yet waits, as a charged call does (park_call(),
 * within the same bounds), and is dispatched again once the bus has named it, so a new connection's calls
 * are counted too; one whose arguments are not all basic types (whose size is not told without reading
 * containers) does not wait but is counted in one share of all such calls (FREE_UNNAMED), and the bus
 * asked. Returns 1 when it answered or parked the call.
 */
static int filter_free_call(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error)
{
        BusService *s = userdata;
        const char *sender = sd_bus_message_get_sender(msg), *account, *signature;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        UidLookup *l;
        gpointer known;
        RateVerdict v;
        char key[32];
        uint64_t now;
        int r;
        (void)ret_error;

        if (!sender || !sd_bus_message_is_method_call(msg, NULL, NULL) || charged_call(msg))
                return 0;
        if (!g_hash_table_lookup_extended(s->sender_uids, sender, NULL, &known)) {
                signature = sd_bus_message_get_signature(msg, true);
                if (signature && signature[strspn(signature, BASIC_TYPES)] == '\0')
                        r = park_call(s, msg, sender, NULL, &error);
                else { /* its size is not told unread: it does not wait, and all such share one count */
                        if (!g_hash_table_contains(s->lookups, sender) &&
                            g_hash_table_size(s->lookups) < CALLER_PARKED)
                                (void)ask_uid(s, sender, &l);
                        now = g_get_monotonic_time();
                        v = rate_limit_take(s->free_callers, FREE_UNNAMED, 1, now);
                        if (v == RATE_UNKNOWN) {
                                rate_limit_classify(s->free_callers, FREE_UNNAMED, false, now);
                                v = rate_limit_take(s->free_callers, FREE_UNNAMED, 1, now);
                        }
                        if (v == RATE_PASS)
                                return 0;
                        r = sd_bus_error_setf(&error, BUS_ERROR_LIMIT_EXCEEDED,
                                              "Too many calls from connections not named by the bus yet "
                                              "(%s): try again",
                                              sender);
                }
                if (r < 0)
                        sd_bus_reply_method_errno(msg, r, &error);
                sd_bus_error_free(&error);
                return 1;
        }
        account = account_of(GPOINTER_TO_UINT(known), key, sizeof(key));
        if (!account) /* root */
                return 0;
        now = g_get_monotonic_time();
        v = rate_limit_take(s->free_callers, account, 1, now);
        if (v == RATE_UNKNOWN) {
                rate_limit_classify(s->free_callers, account, false, now);
                v = rate_limit_take(s->free_callers, account, 1, now);
        }
        if (v == RATE_PASS)
                return 0;
        sd_bus_reply_method_errorf(msg, BUS_ERROR_LIMIT_EXCEEDED,
                                   "Too many calls from %s (%s) that cost no token: %u at once and %u per "
                                   "second",
                                   sender, account, FREE_BURST, FREE_RATE);
        return 1;
}

/* The cost of a call that lists every domain. */
static unsigned list_cost(BusService *s)
{
        unsigned counts[_DECISION_RESULT_MAX], n = 0;

        manager_count(s->manager, counts);
        for (int r = 0; r < _DECISION_RESULT_MAX; r++)
                n += counts[r];
        return 1 + n / CALLER_DOMAINS_PER_COST;
}

/* For a name that manager_lookup() found ambiguous: the domain whose exact name it is, in *ret_exact, and
 * the one text output shows so, in *ret_shown. False when it is not so (an unknown name). */
static bool ambiguous_name(BusService *s, const char *name, const Decision **ret_exact,
                           const Decision **ret_shown)
{
        g_autoptr(GPtrArray) all = NULL;

        *ret_exact = *ret_shown = NULL;
        if (!strchr(name, '\\')) /* only an escaped form can be another name's */
                return false;
        all = manager_list(s->manager);
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                g_autofree char *shown = text_is_safe(d->name) ? NULL : text_safe(d->name);

                if (strcmp(d->name, name) == 0)
                        *ret_exact = d;
                else if (shown && strcmp(shown, name) == 0)
                        *ret_shown = d;
        }
        return *ret_exact && *ret_shown;
}

/* Reads a domain argument and finds its decision. */
static int read_domain(sd_bus_message *msg, BusService *s, const Decision **ret, sd_bus_error *error)
{
        const char *name;
        int r = sd_bus_message_read(msg, "s", &name);

        if (r < 0)
                return r;
        if (!*name || strlen(name) > DOMAIN_ARG_MAX || !g_utf8_validate(name, -1, NULL))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                         "A domain name or UUID of 1 to %u characters is needed",
                                         DOMAIN_ARG_MAX);
        *ret = manager_lookup(s->manager, name);
        if (!*ret) {
                /* the caller's text, escaped as names are everywhere: it may hold anything */
                g_autofree char *shown = text_safe(name);
                const Decision *exact, *escaped;

                if (ambiguous_name(s, name, &exact, &escaped)) {
                        /* as typed: its backslashes are the point (it is safe: it holds no control) */
                        g_autofree char *typed = text_terminal_safe(name);
                        return sd_bus_error_setf(
                            error, BUS_ERROR_INVALID_ARGUMENT,
                            "'%s' is ambiguous: the name of domain %s and, as text output shows names, "
                            "of domain %s; give a UUID",
                            typed, exact->uuid, escaped->uuid);
                }
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_DOMAIN, "No running domain '%s' is known",
                                         shown);
        }
        return 0;
}

static char *nodes_text(const Topology *t, const CpuSet *idx)
{
        g_autoptr(CpuSet) os = topology_nodes_to_os(t, idx);
        return cpuset_format(os);
}

/* A domain's name as a D-Bus string carries it: as it is, or as text output escapes it when it holds a
 * noncharacter, which sd-bus refuses to send (the domain is reached by that escaped form too). */
static char *bus_name(const char *name)
{
        return text_has_noncharacter(name) ? text_safe(name) : g_strdup(name);
}

/* Appends one decision as (name, uuid, policy, result, nodes, vcpu_pins, memory_nodes, emulator_pin,
 * memory_binding_applied). */
static int append_decision(sd_bus_message *reply, const Topology *t, const Decision *d)
{
        const Plan *p = decision_shown_plan(d);
        g_autofree char *name = bus_name(d->name);
        g_autoptr(CpuSet) empty = cpuset_new();
        g_autoptr(CpuSet) mem_idx = p ? plan_memory_nodes(p) : cpuset_new();
        g_autofree char *nodes = nodes_text(t, p ? p->nodes : empty);
        g_autofree char *mem = nodes_text(t, p && p->result != PLAN_UNPLACEABLE ? mem_idx : empty);
        g_autofree char *emu = cpuset_format(p ? p->emulator_pin : empty);
        int r;

        r = sd_bus_message_open_container(reply, 'r', "sssssasssb");
        if (r >= 0)
                r = sd_bus_message_append(reply, "sssss", name, d->uuid,
                                          p ? policy_kind_to_string(p->policy) : "",
                                          decision_result_to_string(d->result), nodes);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (unsigned i = 0; r >= 0 && p && i < p->nvcpus; i++) {
                g_autofree char *pin = cpuset_format(p->vcpu_pins[i]);
                r = sd_bus_message_append(reply, "s", pin);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "ssb", mem, emu,
                                          d->memory_binding == MEMORY_BINDING_APPLIED);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* ---- methods ---------------------------------------------------------------------------------- */

static int method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        g_autoptr(GPtrArray) all = NULL;
        g_autoptr(sd_bus_message) reply = NULL;
        int r = charge_sender(s, msg, list_cost(s), method_list, NULL, error);

        if (r != 0)
                return r;
        all = manager_list(s->manager);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sssssasssb)");
        for (unsigned i = 0; r >= 0 && i < all->len; i++)
                r = append_decision(reply, manager_topology(s->manager), g_ptr_array_index(all, i));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

static int method_get(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        const Decision *d;
        g_autoptr(sd_bus_message) reply = NULL;
        int r = charge_sender(s, msg, 1, method_get, NULL, error);

        if (r != 0 || (r = read_domain(msg, s, &d, error)) < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = append_decision(reply, manager_topology(s->manager), d);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

/* The measured load of each of ds[0..n) (NULL where unknown), for decisions_to_json(). */
static const DomainLoad **loads_of(BusService *s, const Decision *const *ds, unsigned n)
{
        const DomainLoad **loads = g_new0(const DomainLoad *, MAX(n, 1));

        for (unsigned i = 0; i < n; i++)
                loads[i] = manager_load(s->manager, ds[i]->uuid);
        return loads;
}

static int method_get_json(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        const Topology *t = manager_topology(s->manager);
        const char *name;
        const Decision *d = NULL;
        g_autoptr(GPtrArray) all = NULL;
        g_autoptr(GHashTable) cpu = stats_cache_table(s->stats);
        g_autofree char *json = NULL;
        /* charged before its argument is read; a list of every domain costs the rest of its tokens then */
        int r = charge_sender(s, msg, 1, method_get_json, NULL, error);

        if (r != 0 || (r = sd_bus_message_read(msg, "s", &name)) < 0)
                return r;
        if (!*name && list_cost(s) > 1 &&
            charge_account(s, sd_bus_message_get_sender(msg), list_cost(s) - 1) != RATE_PASS) {
                manager_note_bus_call(s->manager, true);
                return sd_bus_error_setf(
                    error, BUS_ERROR_LIMIT_EXCEEDED,
                    "Too many calls from %s: %u tokens at once and %u per second, %u for "
                    "this call",
                    sd_bus_message_get_sender(msg), CALLER_BURST, CALLER_RATE,
                    MIN(list_cost(s), CALLER_BURST));
        }
        if (*name) {
                r = sd_bus_message_rewind(msg, true);
                if (r >= 0)
                        r = read_domain(msg, s, &d, error);
                if (r < 0)
                        return r;
        }
        if (d) {
                g_autofree const DomainLoad **loads = loads_of(s, &d, 1);
                json = decisions_to_json(t, manager_ledger(s->manager), &d, 1, TRUE, cpu, loads);
        } else {
                g_autofree const DomainLoad **loads = NULL;
                all = manager_list(s->manager);
                loads = loads_of(s, (const Decision *const *)all->pdata, all->len);
                json = decisions_to_json(t, manager_ledger(s->manager), (const Decision *const *)all->pdata,
                                         all->len, FALSE, cpu, loads);
        }
        return sd_bus_reply_method_return(msg, "s", json);
}

static int method_explain(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        const Decision *d;
        g_autofree char *text = NULL;
        int r = charge_sender(s, msg, 1, method_explain, NULL, error);

        if (r != 0 || (r = read_domain(msg, s, &d, error)) < 0)
                return r;
        text = decision_explain(manager_topology(s->manager), d);
        return sd_bus_reply_method_return(msg, "s", text);
}

static uint64_t host_memory(const Topology *t)
{
        uint64_t sum = 0;
        for (unsigned n = 0; n < t->nnodes; n++)
                sum += t->nodes[n].memory;
        return sum;
}

/* Appends a plan as (result, nodes, vcpu_pins, memory_nodes, emulator_pin, reason, json). */
static int append_plan(sd_bus_message *reply, const Topology *t, const Plan *p)
{
        g_autoptr(CpuSet) mem_idx = plan_memory_nodes(p);
        g_autofree char *nodes = nodes_text(t, p->nodes);
        g_autofree char *mem = p->result == PLAN_UNPLACEABLE ? g_strdup("") : nodes_text(t, mem_idx);
        g_autofree char *emu = cpuset_format(p->emulator_pin);
        g_autofree char *json = plan_to_json(t, p);
        int r = sd_bus_message_append(reply, "ss", plan_result_to_string(p->result), nodes);

        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (unsigned i = 0; r >= 0 && i < p->nvcpus; i++) {
                g_autofree char *pin = cpuset_format(p->vcpu_pins[i]);
                r = sd_bus_message_append(reply, "s", pin);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "ssss", mem, emu, p->reason, json);
        return r;
}

static int method_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        const Topology *t = manager_topology(s->manager);
        uint32_t vcpus;
        uint64_t memory;
        g_autoptr(Plan) p = NULL;
        g_autoptr(sd_bus_message) reply = NULL;
        int r = sd_bus_message_read(msg, "ut", &vcpus, &memory);

        if (r < 0 || (r = charge_sender(s, msg, 1 + MIN(vcpus, PLAN_MAX_VCPUS) / CALLER_VCPUS_PER_COST,
                                        method_plan, NULL, error)) != 0)
                return r;
        if (vcpus == 0 || vcpus > PLAN_MAX_VCPUS)
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT,
                                         "vCPUs must be between 1 and %u, not %u", PLAN_MAX_VCPUS, vcpus);
        if (memory == 0 || memory > host_memory(t)) {
                char a[32];
                return sd_bus_error_setf(
                    error, BUS_ERROR_INVALID_ARGUMENT,
                    "Memory must be more than 0 and at most the host's %s (%llu bytes), "
                    "not %llu bytes",
                    size_format(host_memory(t), a, sizeof(a)), (unsigned long long)host_memory(t),
                    (unsigned long long)memory);
        }
        p = manager_plan(s->manager, vcpus, memory);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = append_plan(reply, t, p);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

/* The features a running domain's CPU model hides from it, and the model that would give them back. */
static int method_cpu_advice(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        const Decision *d;
        g_autoptr(CpuAdvice) advice = NULL;
        g_autofree char *failure = NULL, *json = NULL;
        int r = charge_sender(s, msg, 1, method_cpu_advice, NULL, error);

        if (r != 0 || (r = read_domain(msg, s, &d, error)) < 0)
                return r;
        r = manager_cpu_advice(s->manager, d->uuid, &advice, &failure);
        if (r == -ENOTCONN)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_CONNECTED, "%s", failure);
        if (r == -ENOENT && !failure) {
                g_autofree char *shown = text_safe(d->name);
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_DOMAIN, "Domain '%s' is gone", shown);
        }
        if (r == -ENOENT)
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_DOMAIN, "%s", failure);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "%s", failure ? failure : "no CPU advice");
        json = cpu_advice_to_json(advice);
        return sd_bus_reply_method_return(msg, "s", json);
}

static int method_map(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        g_autofree char *map = NULL;
        int r = charge_sender(s, msg, 1, method_map, NULL, error);

        if (r != 0)
                return r;
        map = manager_host_map(s->manager);
        return sd_bus_reply_method_return(msg, "s", map);
}

static int method_map_json(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        g_autofree char *json = NULL;
        int r = charge_sender(s, msg, list_cost(s), method_map_json, NULL, error);

        if (r != 0)
                return r;
        json = manager_host_map_json(s->manager);
        return sd_bus_reply_method_return(msg, "s", json);
}

static int method_status(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        g_autofree char *status = manager_status(s->manager);
        (void)error;
        return sd_bus_reply_method_return(msg, "s", status);
}

static int do_replace(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        const Decision *d;
        g_autofree char *uuid = NULL, *failure = NULL;
        int r;

        if ((r = read_domain(msg, s, &d, error)) < 0)
                return r;
        uuid = g_strdup(d->uuid);
        r = manager_replace(s->manager, uuid, &failure);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_DOMAIN, "%s", failure);
        if (r == -ENOTCONN)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_CONNECTED, "%s", failure);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_FAILED, "%s",
                                         failure ? failure : "re-placing failed");
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_replace(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        uid_t uid;
        int r = charge_sender(s, msg, 1, method_replace, &uid,
                              error); /* a non-root call costs a question to polkit */

        if (r != 0)
                return r;
        return polkit_authorize(s->polkit, msg, uid, BUS_POLKIT_ACTION_MANAGE, "re-place a domain",
                                do_replace, s, error);
}

static int do_rebalance(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        g_autofree char *report = NULL;
        unsigned moved;

        if (!manager_connected(s->manager))
                return sd_bus_error_setf(error, BUS_ERROR_NOT_CONNECTED, "not connected to libvirt");
        moved = manager_rebalance(s->manager, REBALANCE_MOVES, &report);
        return sd_bus_reply_method_return(msg, "us", moved, report);
}

static int method_rebalance(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        uid_t uid;
        int r = charge_sender(s, msg, 1, method_rebalance, &uid,
                              error); /* a non-root call costs a question to polkit */

        if (r != 0)
                return r;
        return polkit_authorize(s->polkit, msg, uid, BUS_POLKIT_ACTION_MANAGE, "rebalance domains",
                                do_rebalance, s, error);
}

static void message_unref(gpointer msg)
{
        sd_bus_message_unref(msg);
}

static int do_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        g_autofree char *failure = NULL, *text = NULL;
        int r = s->hooks.reload ? s->hooks.reload(s->userdata, &failure) : 0;

        if (r > 0) { /* answered when it ends */
                g_ptr_array_add(s->reload_waiters, sd_bus_message_ref(msg));
                return 1;
        }
        if (r < 0) {
                /* it quotes the file, whose bytes need not be UTF-8: a D-Bus string must be, or no
                 * reply goes out at all */
                text = g_utf8_make_valid(failure ? failure : "reload failed", -1);
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_ARGUMENT, "%s", text);
        }
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        uid_t uid;
        int r = charge_sender(s, msg, 1, method_reload, &uid,
                              error); /* a non-root call costs a question to polkit */

        if (r != 0)
                return r;
        return polkit_authorize(s->polkit, msg, uid, BUS_POLKIT_ACTION_MANAGE, "reload the configuration",
                                do_reload, s, error);
}

/* ---- properties ------------------------------------------------------------------------------- */

/*
 * The properties, one row each: name, signature, whether it changes (EMITS_CHANGE, announced by
 * bus_service_state_changed(), ReloadError by bus_service_reload_done(), MetricsError by
 * bus_service_metrics_state()) or not (CONST), and its value,
 * an expression of the BusService s. The vtable rows and the getter both come from this one table.
 */
#define BUS_PROPERTIES(X)                                                                                   \
        X("Version", "s", CONST, PLACEMENTD_VERSION)                                                        \
        X("Policy", "s", EMITS_CHANGE, policy_kind_to_string(manager_config(s->manager)->placement.policy)) \
        X("Apply", "b", EMITS_CHANGE, manager_config(s->manager)->apply)                                    \
        X("Connected", "b", EMITS_CHANGE, manager_connected(s->manager))                                    \
        X("URI", "s", EMITS_CHANGE, manager_uri_public(s->manager))                                         \
        X("Nodes", "u", CONST, manager_topology(s->manager)->nnodes)                                        \
        X("Packages", "u", CONST, manager_topology(s->manager)->npackages)                                  \
        X("Cores", "u", CONST, manager_topology(s->manager)->ncores)                                        \
        X("PUs", "u", CONST, manager_topology(s->manager)->npus)                                            \
        X("ThreadsPerCore", "u", CONST, manager_topology(s->manager)->max_threads)                          \
        /* healing: whether it is on, and how many domains it moved since the daemon started */             \
        X("Heal", "b", EMITS_CHANGE, manager_config(s->manager)->heal)                                      \
        X("HealMoves", "t", EXPLICIT, manager_stats(s->manager)->heal_moves)                                \
        /* why the last reload failed (the old configuration runs), "" when it worked or none was done */   \
        X("ReloadError", "s", EMITS_CHANGE, s->reload_error ? s->reload_error : "")                         \
        /* why [Metrics] Listen= is not served, "" when it is or metrics are off */                         \
        X("MetricsError", "s", EMITS_CHANGE, s->metrics_error ? s->metrics_error : "")

static int prop_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        BusService *s = userdata;
        (void)bus;
        (void)path;
        (void)interface;
        (void)error;

#define PROPERTY_VALUE(name, signature, flags, value)                                                       \
        if (strcmp(property, name) == 0)                                                                    \
                return sd_bus_message_append(reply, signature, value);
        BUS_PROPERTIES(PROPERTY_VALUE)
#undef PROPERTY_VALUE
        return -ENOENT;
}

#define PROPERTY_ROW(name, signature, flags, value)                                                         \
        SD_BUS_PROPERTY(name, signature, prop_get, 0, SD_BUS_VTABLE_PROPERTY_##flags),

/* Every method is open at the sd-bus level (UNPRIVILEGED); Replace, Rebalance and Reload allow root, and
 * anyone polkit allows org.placementd1.manage, themselves, so a refusal carries our error name and says why.
 */
static const sd_bus_vtable manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    /* clang-format off: the rows end in their own commas */
    BUS_PROPERTIES(PROPERTY_ROW)
    /* clang-format on */
    SD_BUS_METHOD_WITH_NAMES("ListDecisions", "", , "a(sssssasssb)", SD_BUS_PARAM(decisions), method_list,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetDecision", "s", SD_BUS_PARAM(domain), "(sssssasssb)",
                             SD_BUS_PARAM(decision), method_get, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetDecisionsJSON", "s", SD_BUS_PARAM(domain), "s", SD_BUS_PARAM(json),
                             method_get_json, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Explain", "s", SD_BUS_PARAM(domain), "s", SD_BUS_PARAM(text), method_explain,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Plan", "ut", SD_BUS_PARAM(vcpus) SD_BUS_PARAM(memory_bytes), "ssasssss",
                             SD_BUS_PARAM(result) SD_BUS_PARAM(nodes) SD_BUS_PARAM(vcpu_pins)
                                 SD_BUS_PARAM(memory_nodes) SD_BUS_PARAM(emulator_pin) SD_BUS_PARAM(reason)
                                     SD_BUS_PARAM(json),
                             method_plan, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetCpuAdviceJSON", "s", SD_BUS_PARAM(domain), "s", SD_BUS_PARAM(json),
                             method_cpu_advice, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetHostMap", "", , "s", SD_BUS_PARAM(map), method_map,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetHostMapJSON", "", , "s", SD_BUS_PARAM(json), method_map_json,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetStatus", "", , "s", SD_BUS_PARAM(status), method_status,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Replace", "s", SD_BUS_PARAM(domain), "", , method_replace,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Rebalance", "", , "us", SD_BUS_PARAM(moved) SD_BUS_PARAM(report),
                             method_rebalance, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Reload", "", "", method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("DecisionChanged", "sss",
                             SD_BUS_PARAM(uuid) SD_BUS_PARAM(name) SD_BUS_PARAM(result), 0),
    SD_BUS_VTABLE_END,
};

/* The vtable, for charged_call(), which comes before it. */
static const sd_bus_vtable *manager_methods(void)
{
        return manager_vtable;
}

/* ---- connection ------------------------------------------------------------------------------- */

static void drop_bus(BusService *s)
{
        bus_event_detach(s->event);
        s->event = NULL;
        bus_event_detach(s->ask_event);
        s->ask_event = NULL;
        s->slot = sd_bus_slot_unref(s->slot);
        s->filter = sd_bus_slot_unref(s->filter);
        g_hash_table_remove_all(s->lookups); /* their calls go unanswered: their bus is gone */
        polkit_drop(s->polkit);              /* and those waiting for polkit's answer */
        g_ptr_array_set_size(s->reload_waiters, 0);
        s->ask = sd_bus_close_unref(s->ask);
        g_hash_table_remove_all(s->sender_uids); /* a new bus reuses the unique names */
        if (s->bus) {
                sd_bus_flush(s->bus);
                s->bus = sd_bus_close_unref(s->bus);
        }
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        connect_bus(arg);
}

static void schedule_retry(BusService *s)
{
        evtimer_add(s->retry, &(struct timeval){.tv_sec = s->backoff_sec});
        s->backoff_sec = MIN(s->backoff_sec * 2, BACKOFF_MAX_SEC);
}

static void on_bus_closed(void *userdata)
{
        BusService *s = userdata;
        log_warning("Lost the D-Bus connection; connecting again in %u s", s->backoff_sec);
        drop_bus(s);
        schedule_retry(s);
}

/* The address without its guid= part: a restarted bus has a new GUID, and sd-bus refuses a mismatch. */
static char *address_without_guid(const char *address)
{
        g_auto(GStrv) parts = g_strsplit(address, ",", -1);
        GString *out = g_string_new(NULL);

        for (char **p = parts; *p; p++)
                if (!g_str_has_prefix(*p, "guid="))
                        g_string_append_printf(out, "%s%s", out->len ? "," : "", *p);
        return g_string_free(out, FALSE);
}

static int open_bus(BusService *s, sd_bus **ret)
{
        g_autoptr(sd_bus) bus = NULL;
        g_autofree char *address = NULL;
        int r;

        if (!s->address)
                return s->kind == BUS_SESSION ? sd_bus_open_user(ret) : sd_bus_open_system(ret);
        /* after the first connection, any bus at that address will do */
        address = s->was_connected ? address_without_guid(s->address) : g_strdup(s->address);
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = g_steal_pointer(&bus);
        return 0;
}

/* The second connection serves nothing: a call to it gets no answer, so that what sd-bus would answer
 * there by itself (Peer.Ping, Introspect) is not a way around every user's share of the first. */
static int filter_ask_call(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error)
{
        (void)userdata;
        (void)ret_error;
        return sd_bus_message_is_method_call(msg, NULL, NULL) ? 1 : 0;
}

/*
 * Opens the second connection, only to ask the bus who senders are: on the first, the bus's answer would
 * come after every call it holds for the daemon by then, which under a flood of new connections is a long
 * wait for the calls parked meanwhile. It must be the same bus (the same server id): the unique names it
 * is asked about are the first connection's senders. Without it the first connection asks.
 */
static void open_ask_bus(BusService *s)
{
        g_autoptr(sd_bus) ask = NULL;
        sd_id128_t id, ask_id;

        if (open_bus(s, &ask) < 0 || sd_bus_get_bus_id(s->bus, &id) < 0 ||
            sd_bus_get_bus_id(ask, &ask_id) < 0 || !sd_id128_equal(id, ask_id) ||
            sd_bus_add_filter(ask, NULL, filter_ask_call, NULL) < 0) {
                if (ask)
                        sd_bus_close(ask);
                return;
        }
        s->ask = g_steal_pointer(&ask);
        s->ask_event = bus_event_attach(s->ask, s->base, on_bus_closed, s);
}

static void connect_bus(BusService *s)
{
        const char *where = s->address ? s->address : bus_kind_to_string(s->kind);
        int r = open_bus(s, &s->bus);

        if (r == -EINVAL && s->address && !s->was_connected && s->hooks.bad_address) {
                log_error("Cannot serve %s on the %s bus: not a D-Bus address sd-bus can use (such as "
                          "unix:path=/run/placementd/bus)",
                          BUS_NAME, where);
                s->hooks.bad_address(s->userdata);
                return;
        }
        if (r >= 0)
                r = sd_bus_add_filter(s->bus, &s->filter, filter_free_call, s);
        if (r >= 0)
                r = sd_bus_add_object_vtable(s->bus, &s->slot, BUS_PATH, BUS_INTERFACE, manager_vtable, s);
        if (r >= 0)
                r = sd_bus_request_name(s->bus, BUS_NAME, 0);
        if (r == -EEXIST && s->hooks.name_taken) {
                log_error("%s is already served on the %s bus: another placementd runs there; not starting "
                          "a second one",
                          BUS_NAME, where);
                drop_bus(s);
                s->hooks.name_taken(s->userdata);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "Cannot serve %s on the %s bus: %m; retrying in %u s", BUS_NAME, where,
                                  s->backoff_sec);
                drop_bus(s);
                schedule_retry(s);
                return;
        }
        s->event = bus_event_attach(s->bus, s->base, on_bus_closed, s);
        open_ask_bus(s);
        s->backoff_sec = 1;
        s->was_connected = true;
        log_info("Serving %s on the %s bus", BUS_NAME, where);
}

BusService *bus_service_new(struct event_base *base, Manager *m, const StatsCache *stats, BusKind kind,
                            const char *address, const BusHooks *hooks, void *userdata)
{
        BusService *s;

        if (kind == BUS_NONE && !address)
                return NULL;
        s = g_new0(BusService, 1);
        s->base = base;
        s->manager = m;
        s->stats = stats;
        s->kind = kind;
        s->address = g_strdup(address);
        s->hooks = *hooks;
        s->userdata = userdata;
        s->backoff_sec = 1;
        s->callers = rate_limit_new(CALLER_RATE, CALLER_BURST, CALLER_SENDERS);
        s->free_callers = rate_limit_new(FREE_RATE, FREE_BURST, CALLER_SENDERS);
        s->sender_uids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        s->lookups = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, uid_lookup_free);
        s->reload_waiters = g_ptr_array_new_with_free_func(message_unref);
        s->retry = evtimer_new(base, on_retry, s);
        s->polkit = polkit_new();
        connect_bus(s);
        return s;
}

void bus_service_free(BusService *s)
{
        if (!s)
                return;
        drop_bus(s);
        event_free(s->retry);
        polkit_free(s->polkit);
        rate_limit_free(s->callers);
        rate_limit_free(s->free_callers);
        g_hash_table_unref(s->sender_uids);
        g_hash_table_unref(s->lookups);
        g_free(s->address);
        g_free(s->reload_error);
        g_free(s->metrics_error);
        g_ptr_array_unref(s->reload_waiters);
        g_free(s);
}

void bus_service_decision_changed(BusService *s, const char *uuid, const char *name, const char *result)
{
        g_autofree char *shown = NULL;

        if (!s || !s->bus || !s->event)
                return;
        shown = bus_name(name);
        sd_bus_emit_signal(s->bus, BUS_PATH, BUS_INTERFACE, "DecisionChanged", "sss", uuid, shown, result);
        bus_event_kick(s->event);
}

void bus_service_state_changed(BusService *s)
{
        if (!s || !s->bus || !s->event)
                return;
        sd_bus_emit_properties_changed(s->bus, BUS_PATH, BUS_INTERFACE, "Policy", "Apply", "Connected",
                                       "URI", "Heal", NULL);
        bus_event_kick(s->event);
}

/* Sets the text property name held in *field to text (NULL: ""), announcing a change. */
static void set_text_property(BusService *s, char **field, const char *name, const char *text)
{
        g_autofree char *valid = text ? g_utf8_make_valid(text, -1) : NULL; /* a D-Bus string is UTF-8 */

        if (g_strcmp0(*field, valid) == 0)
                return;
        g_free(*field);
        *field = g_steal_pointer(&valid);
        if (!s->bus || !s->event)
                return;
        sd_bus_emit_properties_changed(s->bus, BUS_PATH, BUS_INTERFACE, name, NULL);
        bus_event_kick(s->event);
}

void bus_service_reload_answer(BusService *s, const char *error_name, const char *error)
{
        g_autofree char *valid = error ? g_utf8_make_valid(error, -1) : NULL; /* a D-Bus string is UTF-8 */

        if (!s || !s->reload_waiters->len)
                return;
        for (unsigned i = 0; i < s->reload_waiters->len; i++) {
                sd_bus_message *msg = g_ptr_array_index(s->reload_waiters, i);
                if (valid)
                        sd_bus_reply_method_errorf(msg, error_name ? error_name : BUS_ERROR_INVALID_ARGUMENT,
                                                   "%s", valid);
                else
                        sd_bus_reply_method_return(msg, NULL);
        }
        g_ptr_array_set_size(s->reload_waiters, 0);
        if (s->event) /* sent by the loop; at a stop, by bus_service_free()'s flush */
                bus_event_kick(s->event);
}

void bus_service_reload_done(BusService *s, const char *error)
{
        if (!s)
                return;
        bus_service_reload_answer(s, NULL, error);
        set_text_property(s, &s->reload_error, "ReloadError", error);
}

void bus_service_metrics_state(BusService *s, const char *error)
{
        if (s)
                set_text_property(s, &s->metrics_error, "MetricsError", error);
}
