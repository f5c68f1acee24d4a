/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "demo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cpuset.h"
#include "file-read.h"
#include "hostmap.h"
#include "log.h"
#include "ret-error.h"
#include "text-safe.h"
#include "trace.h"
#include "virt-conn.h"
#include "virt-domain.h"

struct Demo {
        struct event_base *base;
        Manager *manager;
        GPtrArray *events;
        unsigned next, failures, step_ms;
        bool started;
        GHashTable *ours; /* names of the domains it started: the only ones it stops */
        struct event *timer, *deadline;
};

/* The demo gives libvirt this long to answer before it gives up (a daemon would retry forever). */
#define DEMO_CONNECT_TIMEOUT_SEC 10

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
        Demo *d = arg;
        (void)fd;
        (void)what;
        if (d->started)
                return;
        log_error("demo: no libvirt connection after %d s, giving up", DEMO_CONNECT_TIMEOUT_SEC);
        d->failures++;
        event_base_loopexit(d->base, NULL);
}

static void finish(Demo *d)
{
        g_autofree char *map = hostmap_render(manager_topology(d->manager), manager_ledger(d->manager),
                                              manager_config(d->manager)->placement.reserved_cpus);
        g_autofree char *status = manager_status(d->manager);

        printf("\n%s\n%s", status, map);
        fflush(stdout);
        event_base_loopexit(d->base, NULL);
}

static void step(evutil_socket_t fd, short what, void *arg)
{
        Demo *d = arg;
        struct timeval tv = {.tv_sec = d->step_ms / 1000, .tv_usec = (d->step_ms % 1000) * 1000};
        VirtConn *vc = manager_connection(d->manager);
        virConnectPtr conn = vc ? virt_conn_get(vc) : NULL;
        const TraceEvent *e;
        g_autofree char *error = NULL;
        (void)fd;
        (void)what;

        if (d->next >= d->events->len) {
                finish(d);
                return;
        }
        e = g_ptr_array_index(d->events, d->next++);
        if (!conn) {
                d->failures++;
                log_error("demo: not connected, cannot %s %s", e->op == TRACE_START ? "start" : "stop",
                          e->name);
        } else if (e->op == TRACE_START) {
                printf("--- start %s\n", e->name);
                fflush(stdout);
                if (virt_test_domain_start(conn, e->name, e->vcpus, e->memory, &error) < 0) {
                        d->failures++;
                        log_error("demo: %s", error);
                } else {
                        g_hash_table_add(d->ours, g_strdup(e->name));
                }
        } else if (!g_hash_table_contains(d->ours, e->name)) {
                d->failures++;
                log_error("demo: stop %s: the demo did not start it, left alone", e->name);
        } else {
                g_hash_table_remove(d->ours, e->name);
                printf("--- stop %s\n", e->name);
                fflush(stdout);
                if (virt_domain_destroy_by_name(conn, e->name, &error) < 0) {
                        d->failures++;
                        log_error("demo: %s", error);
                }
        }
        evtimer_add(d->timer, &tv);
}

/* The longest piece of a refused line the message quotes. */
#define DEMO_QUOTE_MAX 80

/* The first line that is neither blank, a comment, nor a start or stop: its number and text (at most
 * DEMO_QUOTE_MAX bytes; *ret_cut when it was longer), or 0. */
static unsigned first_foreign_line(const char *text, char **ret_line, bool *ret_cut)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

        for (unsigned i = 0; lines[i]; i++) {
                const char *line = g_strstrip(lines[i]);
                size_t word = strcspn(line, " \t");
                if (!*line || line[0] == '#' || (word == 5 && strncmp(line, "start", 5) == 0) ||
                    (word == 4 && strncmp(line, "stop", 4) == 0))
                        continue;
                *ret_line = g_strndup(line, DEMO_QUOTE_MAX);
                *ret_cut = strlen(line) > DEMO_QUOTE_MAX;
                return i + 1;
        }
        return 0;
}

int demo_load_trace(const char *path, GPtrArray **ret, char **ret_error)
{
        g_autofree char *text = NULL, *why = NULL, *line = NULL, *safe = NULL;
        g_autoptr(GPtrArray) events = NULL;
        unsigned lineno;
        bool cut = false;
        int r = file_read_bounded(path, TRACE_FILE_MAX, &text, NULL, &why);

        if (r < 0)
                return ret_error_set(ret_error, r, "%s: %s", path, why);
        /* before the trace is parsed: a domain FILE.xml line is refused without its file being read */
        lineno = first_foreign_line(text, &line, &cut);
        if (lineno) {
                safe = text_safe(line);
                return ret_error_set(ret_error, -EINVAL,
                                     "%s:%u: --demo takes start NAME VCPUS MEMORY and stop NAME lines only, "
                                     "not '%s'%s",
                                     path, lineno, safe, cut ? "..." : "");
        }
        r = trace_parse(text, path, &events, ret_error);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < events->len; i++) {
                const TraceEvent *e = g_ptr_array_index(events, i);
                /* libvirt counts a domain's memory in KiB: less would be none */
                if (e->op == TRACE_START && e->memory < 1024)
                        return ret_error_set(ret_error, -EINVAL,
                                             "%s:%u: start %s: %" PRIu64
                                             " bytes is less than the 1 KiB libvirt "
                                             "counts memory in (MEMORY takes K, M, G, T suffixes)",
                                             path, e->line, e->name, e->memory);
        }
        *ret = g_steal_pointer(&events);
        return 0;
}

Demo *demo_new(struct event_base *base, Manager *m, GPtrArray *events, unsigned step_ms)
{
        Demo *d = g_new0(Demo, 1);
        d->base = base;
        d->manager = m;
        d->events = events;
        d->step_ms = step_ms;
        d->ours = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        d->timer = evtimer_new(base, step, d);
        d->deadline = evtimer_new(base, on_deadline, d);
        evtimer_add(d->deadline, &(struct timeval){.tv_sec = DEMO_CONNECT_TIMEOUT_SEC});
        return d;
}

void demo_free(Demo *d)
{
        if (!d)
                return;
        event_free(d->timer);
        event_free(d->deadline);
        g_ptr_array_unref(d->events);
        g_hash_table_unref(d->ours);
        g_free(d);
}

/*
 * The demo pins on the test driver's host, whatever topology it plans on: CPUs of the topology that host
 * lacks take no pin ("runs on no CPU"), and every domain placed on them fails. Said once, before anything
 * starts, rather than as one failed placement after another; false when the host holds every CPU.
 */
static bool host_lacks_cpus(Demo *d)
{
        VirtConn *vc = manager_connection(d->manager);
        g_autoptr(CpuSet) offline = NULL, absent = cpuset_new();
        g_autofree char *error = NULL, *lacked = NULL, *uri = NULL;
        unsigned present = 0;

        if (!vc || virt_conn_offline_cpus(vc, &offline, &present, &error) < 0)
                return false; /* the first step says what is wrong with the connection */
        CPUSET_FOREACH (cpu, manager_topology(d->manager)->all_pus)
                if ((unsigned)cpu >= present)
                        cpuset_add(absent, (unsigned)cpu);
        if (cpuset_is_empty(absent))
                return false;
        lacked = cpuset_format(absent);
        uri = virt_conn_uri(vc);
        log_error("demo: the topology's CPUs %s are not on the host of %s (CPUs 0-%u), so no pin to them "
                  "can run: give --connect= a test driver host of the topology's shape "
                  "(test:///PATH/host.xml, as docs/examples/test-host.xml), or plan on the topology with "
                  "placementctl plan --topology=",
                  lacked, uri ? uri : "the connection", present ? present - 1 : 0);
        return true;
}

void demo_start(Demo *d)
{
        struct timeval zero = {0, 0};
        if (d->started)
                return;
        d->started = true;
        if (host_lacks_cpus(d)) {
                d->failures++;
                event_base_loopexit(d->base, NULL);
                return;
        }
        evtimer_add(d->timer, &zero);
}

unsigned demo_failures(const Demo *d)
{
        return d->failures;
}
