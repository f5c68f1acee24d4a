/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "polkit.h"

#include <errno.h>
#include <glib.h>
#include <pwd.h>
#include <stdbool.h>

#include "bus-api.h"
#include "bus-cleanup.h"
#include "log.h"

#define POLKIT_NAME      "org.freedesktop.PolicyKit1"
#define POLKIT_PATH      "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
#define BUS_DRIVER_NAME  "org.freedesktop.DBus"
#define BUS_DRIVER_PATH  "/org/freedesktop/DBus"

struct Polkit {
        bool unavailable_logged; /* said once that polkit is missing; cleared when it answers again */
        bool impostor_logged;    /* said once that someone else answered for polkit */
        uid_t polkitd_uid;       /* the polkitd user's, (uid_t)-1 when there is none */
        GHashTable *pending;     /* the questions in flight (PolkitQuery*), each held by its slot */
};

/* One question in flight: the method call waiting for polkit's answer. */
typedef struct PolkitQuery {
        Polkit *polkit;
        sd_bus_message *msg;
        char *action;
        char *what;
        uid_t uid;
        PolkitAllowed allowed;
        void *userdata;
        sd_bus_message *answer; /* polkit's answer, kept while the bus is asked who sent it */
        sd_bus_slot *slot;      /* the bus's (floating), whose end frees the query; NULL before it is sent */
} PolkitQuery;

Polkit *polkit_new(void)
{
        Polkit *p = g_new0(Polkit, 1);
        const struct passwd *pw = getpwnam("polkitd");

        p->polkitd_uid = pw ? pw->pw_uid : (uid_t)-1;
        p->pending = g_hash_table_new(NULL, NULL);
        return p;
}

void polkit_drop(Polkit *p)
{
        GHashTableIter it;
        gpointer key;

        /* a call waiting holds its bus, whose slot holds the query: without this, neither is ever freed */
        while (g_hash_table_size(p->pending)) {
                PolkitQuery *q;
                g_hash_table_iter_init(&it, p->pending);
                g_hash_table_iter_next(&it, &key, NULL);
                q = key;
                g_hash_table_remove(p->pending, q);
                /* the slot, the bus's alone, taken back and let go: its end frees q (polkit_query_free()) */
                sd_bus_slot_ref(q->slot);
                sd_bus_slot_set_floating(q->slot, 0);
                sd_bus_slot_unref(q->slot);
        }
}

void polkit_free(Polkit *p)
{
        if (!p)
                return;
        polkit_drop(p);
        g_hash_table_unref(p->pending);
        g_free(p);
}

static void polkit_query_free(void *userdata)
{
        PolkitQuery *q = userdata;

        if (q->polkit)
                g_hash_table_remove(q->polkit->pending, q);
        sd_bus_message_unref(q->msg);
        sd_bus_message_unref(q->answer);
        g_free(q->action);
        g_free(q->what);
        g_free(q);
}

/* The caller's uid on a direct connection (no sender): the socket's peer, read locally. Through a bus this
 * would ask the bus and wait for its answer; callers there use polkit_ask_uid(). Never read from /proc
 * (SD_BUS_CREDS_AUGMENT), where a PID may by then name another process or a setuid program. */
int polkit_sender_uid(sd_bus_message *msg, uid_t *ret)
{
        g_autoptr(sd_bus_creds) creds = NULL;
        int r;

        if (sd_bus_message_get_sender(msg))
                return -EINVAL;
        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID, &creds);
        if (r >= 0 && sd_bus_creds_get_euid(creds, ret) < 0)
                r = sd_bus_creds_get_uid(creds, ret);
        return r;
}

int polkit_ask_uid(sd_bus *bus, sd_bus_slot **ret_slot, const char *name, sd_bus_message_handler_t callback,
                   void *userdata)
{
        return sd_bus_call_method_async(bus, ret_slot, BUS_DRIVER_NAME, BUS_DRIVER_PATH, BUS_DRIVER_NAME,
                                        "GetConnectionUnixUser", callback, userdata, "s", name);
}

int polkit_uid_reply(sd_bus_message *reply, uid_t *ret)
{
        uint32_t uid;
        int r;

        if (sd_bus_message_is_method_error(reply, NULL))
                return -ESRCH; /* gone before it was asked about, or the bus would not say */
        /* only the bus itself speaks as org.freedesktop.DBus */
        if (g_strcmp0(sd_bus_message_get_sender(reply), BUS_DRIVER_NAME) != 0)
                return -EBADMSG;
        r = sd_bus_message_read(reply, "u", &uid);
        if (r < 0)
                return r;
        *ret = (uid_t)uid;
        return 0;
}

/* polkit is not there: not running and not activatable, or its activation failed. */
static bool polkit_missing(const sd_bus_error *e)
{
        return sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
               (e->name && g_str_has_prefix(e->name, "org.freedesktop.DBus.Error.Spawn."));
}

static int deny_root_only(Polkit *p, const sd_bus_error *why, const char *what, uid_t uid,
                          sd_bus_error *error)
{
        if (!p->unavailable_logged)
                log_warning("polkit is not available (%s); only root may call Replace, Rebalance and Reload",
                            why->message ? why->message : why->name);
        p->unavailable_logged = true;
        return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED,
                                 "Only root may %s (caller uid %u; polkit is not available)", what,
                                 (unsigned)uid);
}

/* Reads polkit's (bba{ss}) answer: 1 authorized, 0 not, negative errno for a malformed answer. */
static int read_verdict(sd_bus_message *reply)
{
        int authorized = 0, challenge = 0;
        int r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");

        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        return r < 0 ? r : authorized != 0;
}

/* Takes polkit's answer to q, sent by a connection of uid by ((uid_t)-1: the bus did not say). On the system
 * bus only polkitd may own polkit's name, but where any user may own any name (a session bus, a private
 * --bus-address bus) anyone can answer in its place: only root's or polkitd's answer counts. */
static int verdict(PolkitQuery *q, sd_bus_message *reply, uid_t by, sd_bus_error *error)
{
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r;

        if (e && polkit_missing(e))
                return deny_root_only(q->polkit, e, q->what, q->uid, error);
        if (e)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED,
                                         "Cannot ask polkit whether uid %u may %s: %s", (unsigned)q->uid,
                                         q->what, e->message ? e->message : e->name);
        if (by != 0 && (by == (uid_t)-1 || by != q->polkit->polkitd_uid)) {
                if (!q->polkit->impostor_logged)
                        log_warning(
                            "polkit's name on this bus is held by uid %d, not root or polkitd: its "
                            "answers are not taken; only root may call Replace, Rebalance and Reload",
                            by == (uid_t)-1 ? -1 : (int)by);
                q->polkit->impostor_logged = true;
                return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED,
                                         "Only root may %s (caller uid %u; polkit's name is held by uid %d, "
                                         "not root or polkitd)",
                                         q->what, (unsigned)q->uid, by == (uid_t)-1 ? -1 : (int)by);
        }
        q->polkit->unavailable_logged = false;
        r = read_verdict(reply);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED,
                                         "polkit's answer about uid %u was malformed", (unsigned)q->uid);
        if (r == 0)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED,
                                         "Not permitted to %s (caller uid %u; polkit action %s)", q->what,
                                         (unsigned)q->uid, q->action);
        return q->allowed(q->msg, q->userdata, error);
}

/* Answers q's call: the method's own reply when polkit allowed it, else the refusal. */
static void answer(PolkitQuery *q, sd_bus_message *reply, uid_t by)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = verdict(q, reply, by, &error);

        if (r < 0)
                sd_bus_reply_method_errno(q->msg, r, &error);
        sd_bus_error_free(&error);
}

static int on_answerer_uid(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        PolkitQuery *q = userdata;
        uid_t by = (uid_t)-1;
        (void)ret_error;

        if (polkit_uid_reply(reply, &by) < 0)
                by = (uid_t)-1;
        answer(q, q->answer, by);
        return 0;
}

/*
 * polkit's answer. Before it is taken, the bus is asked whose connection sent it, without waiting: the
 * daemon's one thread goes on serving the other calls meanwhile, and sd-bus does not read the bus's backlog
 * into its own queue as it does while a call waits for its reply.
 */
static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        PolkitQuery *q = userdata, *next;
        const char *sender = sd_bus_message_get_sender(reply);
        g_autoptr(sd_bus_slot) slot = NULL;
        (void)ret_error;

        if (sd_bus_message_is_method_error(reply, NULL) || !sender) {
                answer(q, reply, (uid_t)-1); /* an error needs no answerer; a reply without a sender is not
                                              * taken */
                return 0;
        }
        /* the next step owns the call: q, its slot's, is freed when this returns */
        g_hash_table_remove(q->polkit->pending, q);
        next = g_new(PolkitQuery, 1);
        *next = *q;
        *q = (PolkitQuery){0};
        next->slot = NULL;
        next->answer = sd_bus_message_ref(reply);
        if (polkit_ask_uid(sd_bus_message_get_bus(reply), &slot, sender, on_answerer_uid, next) < 0) {
                answer(next, reply, (uid_t)-1);
                polkit_query_free(next);
                return 0;
        }
        sd_bus_slot_set_destroy_callback(slot, polkit_query_free);
        sd_bus_slot_set_floating(slot, 1);
        next->slot = slot;
        g_hash_table_add(next->polkit->pending, next);
        return 0;
}

static int ask_polkit(PolkitQuery *q, sd_bus_error *error)
{
        sd_bus *bus = sd_bus_message_get_bus(q->msg);
        g_autoptr(sd_bus_message) call = NULL;
        g_autoptr(sd_bus_slot) slot = NULL;
        int r = sd_bus_message_new_method_call(bus, &call, POLKIT_NAME, POLKIT_PATH, POLKIT_INTERFACE,
                                               "CheckAuthorization");

        /* subject, action, details, flags (0: no interaction), cancellation id */
        if (r >= 0)
                r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                                          sd_bus_message_get_sender(q->msg), q->action, 0, 0u, "");
        if (r >= 0)
                r = sd_bus_call_async(bus, &slot, call, on_polkit_reply, q, 0);
        if (r < 0) {
                /* the refusal names the caller and the method: said before q goes */
                r = sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED,
                                      "Cannot ask polkit whether uid %u may %s: %s", (unsigned)q->uid,
                                      q->what, g_strerror(-r));
                polkit_query_free(q);
                return r;
        }
        /* the bus owns the query from here: freed after the answer, or by polkit_drop() */
        sd_bus_slot_set_destroy_callback(slot, polkit_query_free);
        sd_bus_slot_set_floating(slot, 1);
        q->slot = slot;
        g_hash_table_add(q->polkit->pending, q);
        return 1;
}

int polkit_authorize(Polkit *p, sd_bus_message *msg, uid_t uid, const char *action, const char *what,
                     PolkitAllowed allowed, void *userdata, sd_bus_error *error)
{
        PolkitQuery *q;

        if (uid == (uid_t)-1)
                return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED, "Cannot tell who is asking to %s",
                                         what);
        if (uid == 0)
                return allowed(msg, userdata, error);
        if (!sd_bus_message_get_sender(msg))
                return sd_bus_error_setf(error, BUS_ERROR_NOT_PERMITTED, "Only root may %s (caller uid %u)",
                                         what, (unsigned)uid);
        q = g_new0(PolkitQuery, 1);
        *q = (PolkitQuery){.polkit = p,
                           .msg = sd_bus_message_ref(msg),
                           .action = g_strdup(action),
                           .what = g_strdup(what),
                           .uid = uid,
                           .allowed = allowed,
                           .userdata = userdata};
        return ask_polkit(q, error);
}
