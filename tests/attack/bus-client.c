/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A D-Bus client for the attack scripts, on sd-bus like the daemon:
 *   bus-client ADDRESS flood SECONDS   keeps 100 calls in flight, Plan(4096 vCPUs) and GetDecisionsJSON("")
 *                                      in turn, and prints how many were answered and how many refused
 *   bus-client ADDRESS free SECONDS    the same with the calls sd-bus answers for the daemon: Introspect,
 *                                      Properties.GetAll and Peer.Ping in turn
 *   bus-client ADDRESS probe SECONDS   calls GetStatus every 20 ms, one at a time, and prints the
 *                                      latency's p50, p99 and max in milliseconds
 *   bus-client ADDRESS rebalance COUNT calls Rebalance COUNT times, one at a time on one connection, and
 *                                      prints how many were answered and each error name with its count
 *   bus-client ADDRESS vanish SECONDS  opens a connection, sends 20 GetDecisionsJSON("") calls and closes
 *                                      it without waiting for an answer, again and again; prints how many
 *                                      connections and calls (the bus cannot name such a sender to the
 *                                      daemon by the time it reads the calls)
 *   bus-client ADDRESS burst COUNT     on new connections (100 calls each), sends COUNT GetHostMap calls
 *                                      at once and waits for every answer, twice on the same connections:
 *                                      prints per round how many were answered, refused with
 *                                      LimitExceeded, and of those how many because too many calls waited
 *                                      for the bus to name their sender
 *   bus-client ADDRESS spread CONNECTIONS CALLS
 *                                      opens CONNECTIONS new connections (as many as the bus allows, when
 *                                      fewer), sends CALLS GetHostMap calls on each, prints "spread: N calls
 *                                      sent on M connections" once all are sent, then waits for every
 *                                      answer and prints, like burst, how many were answered and refused
 *   bus-client ADDRESS stray SECONDS   as flood, with a member and a path the daemon does not have and
 *                                      GetStatus; also prints how many were answered (or refused by
 *                                      sd-bus: no such member or path) and how many met LimitExceeded
 *   bus-client ADDRESS fresh SECONDS CALLS
 *                                      new connections one after another, each sending CALLS Introspect
 *                                      calls at once and waiting for their answers: prints how many
 *                                      connections, answered and refused with LimitExceeded
 *   bus-client ADDRESS large COUNT BYTES
 *                                      on one connection, one at a time, COUNT GetDecisionsJSON calls whose
 *                                      argument is BYTES long: prints how many were answered, refused with
 *                                      InvalidArgument and with LimitExceeded
 * Exit status: 0, or 1 when the bus could not be reached or (probe) a call failed.
 */
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>

#define DEST       "org.placementd1"
#define PATH       "/org/placementd1"
#define IFACE      "org.placementd1.Manager"
#define IN_FLIGHT  100
#define PROBE_MS   20
#define PLAN_VCPUS 4096u
#define PLAN_BYTES (1ull << 30)

typedef struct Flood {
        sd_bus *bus;
        bool free_calls; /* Introspect, GetAll and Ping rather than Plan and GetDecisionsJSON */
        bool stray;      /* a member and a path the daemon does not have, and GetStatus */
        uint64_t until_usec, sent, answered, refused, limited;
        unsigned in_flight;
        char last_error[128];
} Flood;

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int send_one(Flood *f);

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Flood *f = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        (void)error;

        f->in_flight--;
        if (e) {
                f->refused++;
                f->limited += strcmp(e->name, "org.placementd1.Error.LimitExceeded") == 0;
                g_strlcpy(f->last_error, e->name, sizeof(f->last_error));
        } else {
                f->answered++;
        }
        if (now_usec() < f->until_usec)
                send_one(f);
        return 0;
}

static int send_free(Flood *f)
{
        switch (f->sent % 3) {
        case 0:
                return sd_bus_call_method_async(f->bus, NULL, DEST, PATH,
                                                "org.freedesktop.DBus.Introspectable", "Introspect",
                                                on_reply, f, "");
        case 1:
                return sd_bus_call_method_async(f->bus, NULL, DEST, PATH, "org.freedesktop.DBus.Properties",
                                                "GetAll", on_reply, f, "s", IFACE);
        default:
                return sd_bus_call_method_async(f->bus, NULL, DEST, PATH, "org.freedesktop.DBus.Peer",
                                                "Ping", on_reply, f, "");
        }
}

static int send_stray(Flood *f)
{
        switch (f->sent % 3) {
        case 0:
                return sd_bus_call_method_async(f->bus, NULL, DEST, PATH, IFACE, "NoSuchMethod", on_reply, f,
                                                "");
        case 1:
                return sd_bus_call_method_async(f->bus, NULL, DEST, "/org/placementd1/nowhere", IFACE,
                                                "GetStatus", on_reply, f, "");
        default:
                return sd_bus_call_method_async(f->bus, NULL, DEST, PATH, IFACE, "GetStatus", on_reply, f,
                                                "");
        }
}

static int send_one(Flood *f)
{
        int r = f->stray        ? send_stray(f)
                : f->free_calls ? send_free(f)
                : f->sent % 2 ? sd_bus_call_method_async(f->bus, NULL, DEST, PATH, IFACE, "GetDecisionsJSON",
                                                         on_reply, f, "s", "")
                              : sd_bus_call_method_async(f->bus, NULL, DEST, PATH, IFACE, "Plan", on_reply,
                                                         f, "ut", PLAN_VCPUS, (uint64_t)PLAN_BYTES);
        if (r >= 0) {
                f->sent++;
                f->in_flight++;
        }
        return r;
}

static int flood(sd_bus *bus, unsigned seconds, bool free_calls, bool stray)
{
        Flood f = {.bus = bus,
                   .free_calls = free_calls,
                   .stray = stray,
                   .until_usec = now_usec() + seconds * 1000000ull};

        for (unsigned i = 0; i < IN_FLIGHT; i++)
                if (send_one(&f) < 0)
                        return 1;
        while (f.in_flight > 0) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r == 0)
                        sd_bus_wait(bus, 100000);
                if (now_usec() > f.until_usec + 30 * 1000000ull)
                        break; /* the daemon stopped answering: report what we have */
        }
        printf("%s: %llu sent, %llu answered, %llu refused%s%s\n",
               stray        ? "stray"
               : free_calls ? "free"
                            : "flood",
               (unsigned long long)f.sent, (unsigned long long)f.answered, (unsigned long long)f.refused,
               f.refused ? " with " : "", f.last_error);
        if (stray)
                printf("stray: %llu answered or refused by sd-bus, %llu LimitExceeded\n",
                       (unsigned long long)(f.sent - f.limited), (unsigned long long)f.limited);
        return 0;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static int probe(sd_bus *bus, unsigned seconds)
{
        g_autoptr(GArray) lat = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        uint64_t until = now_usec() + seconds * 1000000ull;
        unsigned failed = 0;

        while (now_usec() < until) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;
                uint64_t t0 = now_usec(), dt;
                int r = sd_bus_call_method(bus, DEST, PATH, IFACE, "GetStatus", &error, &reply, "");

                dt = now_usec() - t0;
                if (r < 0) {
                        failed++;
                        fprintf(stderr, "probe: GetStatus failed: %s\n", error.message);
                } else {
                        g_array_append_val(lat, dt);
                }
                sd_bus_error_free(&error);
                sd_bus_message_unref(reply);
                if (dt < PROBE_MS * 1000u)
                        g_usleep(PROBE_MS * 1000u - dt);
        }
        if (lat->len == 0) {
                printf("probe: no answer\n");
                return 1;
        }
        qsort(lat->data, lat->len, sizeof(uint64_t), cmp_u64);
        printf("probe: %u calls, %u failed, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", lat->len, failed,
               g_array_index(lat, uint64_t, lat->len / 2) / 1000.0,
               g_array_index(lat, uint64_t, (lat->len * 99) / 100) / 1000.0,
               g_array_index(lat, uint64_t, lat->len - 1) / 1000.0);
        return failed ? 1 : 0;
}

static int rebalance(sd_bus *bus, unsigned count)
{
        g_autoptr(GHashTable) errors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        unsigned answered = 0;
        GHashTableIter it;
        gpointer name, n;

        for (unsigned i = 0; i < count; i++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;

                if (sd_bus_call_method(bus, DEST, PATH, IFACE, "Rebalance", &error, &reply, "") >= 0) {
                        answered++;
                } else {
                        const char *e = error.name ? error.name : "(none)";
                        unsigned seen = GPOINTER_TO_UINT(g_hash_table_lookup(errors, e));
                        g_hash_table_insert(errors, g_strdup(e), GUINT_TO_POINTER(seen + 1));
                }
                sd_bus_error_free(&error);
                sd_bus_message_unref(reply);
        }
        printf("rebalance: %u calls, %u answered", count, answered);
        g_hash_table_iter_init(&it, errors);
        while (g_hash_table_iter_next(&it, &name, &n))
                printf(", %u %s", GPOINTER_TO_UINT(n), (const char *)name);
        printf("\n");
        return 0;
}

/* A new bus connection to address as a client, in *ret (NULL on failure); returns sd-bus's result. */
static int connect_to(const char *address, sd_bus **ret)
{
        sd_bus *bus = NULL;
        int r = sd_bus_new(&bus);

        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                bus = sd_bus_flush_close_unref(bus);
        *ret = bus;
        return r;
}

#define VANISH_CALLS 20u

static int vanish(const char *address, unsigned seconds)
{
        uint64_t until = now_usec() + seconds * 1000000ull, connections = 0, calls = 0;

        while (now_usec() < until) {
                sd_bus *bus = NULL;
                int r = connect_to(address, &bus);
                for (unsigned i = 0; r >= 0 && i < VANISH_CALLS; i++) {
                        sd_bus_message *m = NULL;
                        r = sd_bus_message_new_method_call(bus, &m, DEST, PATH, IFACE, "GetDecisionsJSON");
                        if (r >= 0)
                                r = sd_bus_message_append(m, "s", "");
                        if (r >= 0)
                                r = sd_bus_send(bus, m, NULL);
                        sd_bus_message_unref(m);
                        calls += r >= 0;
                }
                connections += r >= 0;
                sd_bus_flush_close_unref(bus);
        }
        printf("vanish: %llu connections, %llu calls sent\n", (unsigned long long)connections,
               (unsigned long long)calls);
        return 0;
}

#define BURST_PER_CONNECTION 100u /* below the bus's own bound on calls awaiting replies per connection */

typedef struct Burst {
        unsigned pending, answered, limited, waited, other;
        char other_error[128];
} Burst;

static int on_burst_reply(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Burst *b = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        (void)error;

        b->pending--;
        if (!e) {
                b->answered++;
        } else if (sd_bus_error_has_name(e, "org.placementd1.Error.LimitExceeded")) {
                b->limited++;
                b->waited += e->message && strstr(e->message, "wait for the bus") != NULL;
        } else {
                b->other++;
                g_strlcpy(b->other_error, e->name, sizeof(b->other_error));
        }
        return 0;
}

/* COUNT calls over new connections of BURST_PER_CONNECTION each, all sent before any answer is read. */
static int burst(const char *address, unsigned count)
{
        unsigned n = (count + BURST_PER_CONNECTION - 1) / BURST_PER_CONNECTION;
        g_autofree sd_bus **buses = g_new0(sd_bus *, MAX(n, 1));
        int rc = 0;

        for (unsigned c = 0; c < n; c++)
                if (connect_to(address, &buses[c]) < 0)
                        rc = 1;
        for (unsigned round = 1; rc == 0 && round <= 2; round++) {
                Burst b = {0};
                uint64_t until = now_usec() + 30 * 1000000ull;

                for (unsigned i = 0; rc == 0 && i < count; i++) {
                        if (sd_bus_call_method_async(buses[i / BURST_PER_CONNECTION], NULL, DEST, PATH,
                                                     IFACE, "GetHostMap", on_burst_reply, &b, "") < 0)
                                rc = 1;
                        b.pending++;
                }
                while (rc == 0 && b.pending > 0 && now_usec() < until) {
                        int r = 0;
                        for (unsigned c = 0; c < n && r >= 0; c++)
                                while ((r = sd_bus_process(buses[c], NULL)) > 0)
                                        ;
                        if (r < 0)
                                rc = 1;
                        else if (b.pending > 0)
                                sd_bus_wait(buses[0], 10000);
                }
                printf("burst %u: %u calls on %u connections, %u answered, %u LimitExceeded (%u while "
                       "waiting for the bus), %u other errors%s%s, %u unanswered\n",
                       round, count, n, b.answered, b.limited, b.waited, b.other, b.other ? " " : "",
                       b.other_error, b.pending);
                if (b.pending > 0)
                        rc = 1;
        }
        for (unsigned c = 0; c < n; c++)
                sd_bus_flush_close_unref(buses[c]);
        return rc;
}

/* CALLS calls on each of up to CONNECTIONS new connections, all sent before any answer is read. */
static int spread(const char *address, unsigned connections, unsigned calls)
{
        g_autofree sd_bus **buses = g_new0(sd_bus *, MAX(connections, 1));
        uint64_t until = now_usec() + 30 * 1000000ull;
        unsigned n = 0;
        Burst b = {0};
        int rc = 0;

        while (n < connections && connect_to(address, &buses[n]) >= 0)
                n++;
        for (unsigned c = 0; c < n; c++)
                for (unsigned i = 0; i < calls; i++)
                        if (sd_bus_call_method_async(buses[c], NULL, DEST, PATH, IFACE, "GetHostMap",
                                                     on_burst_reply, &b, "") >= 0)
                                b.pending++;
        for (unsigned c = 0; c < n; c++)
                sd_bus_flush(buses[c]);
        printf("spread: %u calls sent on %u connections\n", b.pending, n);
        fflush(stdout);
        while (b.pending > 0 && now_usec() < until) {
                int r = 0;
                for (unsigned c = 0; c < n && r >= 0; c++)
                        while ((r = sd_bus_process(buses[c], NULL)) > 0)
                                ;
                if (r < 0)
                        rc = 1;
                if (r < 0 || b.pending == 0)
                        break;
                sd_bus_wait(buses[0], 10000);
        }
        printf("spread: %u answered, %u LimitExceeded (%u while waiting for the bus), %u other errors%s%s, "
               "%u unanswered\n",
               b.answered, b.limited, b.waited, b.other, b.other ? " " : "", b.other_error, b.pending);
        for (unsigned c = 0; c < n; c++)
                sd_bus_flush_close_unref(buses[c]);
        return rc || n == 0;
}

/* New connections, one after another, each sending per Introspect calls at once and waiting for them. */
static int fresh(const char *address, unsigned seconds, unsigned per)
{
        uint64_t until = now_usec() + seconds * 1000000ull;
        unsigned connections = 0;
        Burst b = {0};

        while (now_usec() < until) {
                sd_bus *bus = NULL;

                if (connect_to(address, &bus) < 0)
                        return 1;
                connections++;
                for (unsigned i = 0; i < per; i++)
                        if (sd_bus_call_method_async(bus, NULL, DEST, PATH,
                                                     "org.freedesktop.DBus.Introspectable", "Introspect",
                                                     on_burst_reply, &b, "") >= 0)
                                b.pending++;
                while (b.pending > 0 && now_usec() < until + 10 * 1000000ull) {
                        int r;
                        while ((r = sd_bus_process(bus, NULL)) > 0)
                                ;
                        if (r < 0 || b.pending == 0)
                                break;
                        sd_bus_wait(bus, 100000);
                }
                b.pending = 0;
                sd_bus_flush_close_unref(bus);
        }
        printf("fresh: %u connections, %u answered, %u LimitExceeded, %u other errors%s%s\n", connections,
               b.answered, b.limited, b.other, b.other ? " " : "", b.other_error);
        return 0;
}

static int large(const char *address, unsigned count, size_t bytes)
{
        g_autofree char *arg = g_malloc(bytes + 1);
        unsigned answered = 0, invalid = 0, limited = 0, other = 0;
        sd_bus *bus = NULL;
        int r = connect_to(address, &bus);

        if (r < 0) {
                fprintf(stderr, "cannot connect to %s: %s\n", address, strerror(-r));
                return 1;
        }
        memset(arg, 'a', bytes);
        arg[bytes] = '\0';
        for (unsigned i = 0; i < count; i++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;

                r = sd_bus_call_method(bus, DEST, PATH, IFACE, "GetDecisionsJSON", &error, &reply, "s", arg);
                if (r >= 0)
                        answered++;
                else if (sd_bus_error_has_name(&error, "org.placementd1.Error.InvalidArgument"))
                        invalid++;
                else if (sd_bus_error_has_name(&error, "org.placementd1.Error.LimitExceeded"))
                        limited++;
                else
                        other++;
                sd_bus_error_free(&error);
                sd_bus_message_unref(reply);
        }
        printf("large: %u calls of %zu bytes, %u answered, %u InvalidArgument, %u LimitExceeded, %u other\n",
               count, bytes, answered, invalid, limited, other);
        sd_bus_flush_close_unref(bus);
        return 0;
}

int main(int argc, char **argv)
{
        sd_bus *bus = NULL;
        unsigned number; /* seconds, or calls */
        int r;

        if (argc == 5 && strcmp(argv[2], "fresh") == 0)
                return fresh(argv[1], (unsigned)strtoul(argv[3], NULL, 10),
                             (unsigned)strtoul(argv[4], NULL, 10));
        if (argc == 5 && strcmp(argv[2], "large") == 0)
                return large(argv[1], (unsigned)strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
        if (argc == 5 && strcmp(argv[2], "spread") == 0)
                return spread(argv[1], (unsigned)strtoul(argv[3], NULL, 10),
                              (unsigned)strtoul(argv[4], NULL, 10));
        if (argc != 4 || (strcmp(argv[2], "flood") != 0 && strcmp(argv[2], "free") != 0 &&
                          strcmp(argv[2], "stray") != 0 && strcmp(argv[2], "probe") != 0 &&
                          strcmp(argv[2], "rebalance") != 0 && strcmp(argv[2], "vanish") != 0 &&
                          strcmp(argv[2], "burst") != 0)) {
                fprintf(stderr,
                        "usage: %s ADDRESS flood|free|stray|probe|vanish SECONDS | rebalance|burst COUNT | "
                        "spread "
                        "CONNECTIONS CALLS | large COUNT BYTES | fresh SECONDS CALLS\n",
                        argv[0]);
                return 2;
        }
        number = (unsigned)strtoul(argv[3], NULL, 10);
        if (strcmp(argv[2], "vanish") == 0)
                return vanish(argv[1], number);
        if (strcmp(argv[2], "burst") == 0)
                return burst(argv[1], number);
        r = connect_to(argv[1], &bus);
        if (r < 0) {
                fprintf(stderr, "cannot connect to %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        r = strcmp(argv[2], "flood") == 0       ? flood(bus, number, false, false)
            : strcmp(argv[2], "free") == 0      ? flood(bus, number, true, false)
            : strcmp(argv[2], "stray") == 0     ? flood(bus, number, false, true)
            : strcmp(argv[2], "rebalance") == 0 ? rebalance(bus, number)
                                                : probe(bus, number);
        sd_bus_flush_close_unref(bus);
        return r;
}
