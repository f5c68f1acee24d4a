/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Volume on libvirt's test driver, in-process: a burst of 1000 domain starts, every one placed exactly
 * once and released at the end; then start/stop cycles, after which the ledger is exactly empty. Prints
 * the figures (time, RSS before and after); asserts behaviour only. PLACEMENTD_SOAK_CYCLES overrides
 * the number of cycles.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "manager-internal.h"
#include "test-util.h"
#include "topology-load.h"
#include "virt-domain.h"
#include "virt-event.h"

#define TOPOLOGY "synthetic:pack:2 numa:1(memory=1024GiB) l3:1 core:2 pu:2"
#define BURST    1000u

static struct event_base *base;
static unsigned placed_events, stopped_events;

static void on_decision(Manager *m, const Decision *d, const char *uuid, const char *name, void *userdata)
{
        (void)m;
        (void)uuid;
        (void)name;
        (void)userdata;
        if (d)
                placed_events++;
        else
                stopped_events++;
}

static long rss_kib(void)
{
        g_autofree char *status = NULL;
        const char *p;
        if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL) ||
            !(p = strstr(status, "VmRSS:")))
                return -1;
        return strtol(p + 6, NULL, 10);
}

static double now_sec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs the loop until cond() or 60 s. */
static bool spin_until(bool (*cond)(unsigned), unsigned want)
{
        double end = now_sec() + 60;
        while (!cond(want) && now_sec() < end)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        return cond(want);
}

static bool placed_reached(unsigned want)
{
        return placed_events >= want;
}

static bool stopped_reached(unsigned want)
{
        return stopped_events >= want;
}

static Manager *new_manager(void)
{
        Topology *t = NULL;
        Config *c = config_new_default();
        Manager *m;

        if (!base) {
                base = event_base_new();
                ck_assert_int_eq(virt_event_register(base), 0);
                virt_errors_quiet();
                log_set_max_level(LOG_ERR);
        }
        ck_assert_int_eq(topology_load(TOPOLOGY, &t, NULL), 0);
        m = manager_new(base, t, c, "test:///default");
        manager_set_callbacks(m, &(ManagerCallbacks){.decision_changed = on_decision}, NULL);
        manager_start(m);
        ck_assert(manager_connected(m));
        return m;
}

static void start(virConnectPtr conn, const char *name)
{
        g_autofree char *error = NULL;
        ck_assert_msg(virt_test_domain_start(conn, name, 2, UINT64_C(1) << 30, &error) == 0, "%s", error);
}

START_TEST(test_burst_and_soak)
{
        Manager *m = new_manager();
        virConnectPtr conn = virConnectOpen("test:///default");
        unsigned before = ledger_count(manager_ledger(m)); /* the driver's own "test" domain */
        const char *env = g_getenv("PLACEMENTD_SOAK_CYCLES");
        unsigned cycles = env ? (unsigned)atoi(env) : 10000;
        double t0;
        long rss0, rss1, rss2;

        placed_events = stopped_events = 0;
        rss0 = rss_kib();
        t0 = now_sec();
        for (unsigned i = 0; i < BURST; i++) {
                g_autofree char *name = g_strdup_printf("burst-%04u", i);
                start(conn, name);
        }
        ck_assert(spin_until(placed_reached, BURST));
        printf("burst: %u domains placed in %.3f s (%.0f per second)\n", BURST, now_sec() - t0,
               BURST / (now_sec() - t0));
        ck_assert_uint_eq(placed_events, BURST); /* each exactly once */
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), before + BURST);
        for (unsigned i = 0; i < BURST; i++) {
                g_autofree char *name = g_strdup_printf("burst-%04u", i);
                const Decision *d = manager_lookup(m, name);
                ck_assert_ptr_nonnull(d);
                ck_assert(d->result == DECISION_PLACED || d->result == DECISION_OVERCOMMITTED);
        }
        rss1 = rss_kib();
        for (unsigned i = 0; i < BURST; i++) {
                g_autofree char *name = g_strdup_printf("burst-%04u", i);
                ck_assert_int_eq(virt_domain_destroy_by_name(conn, name, NULL), 0);
        }
        ck_assert(spin_until(stopped_reached, BURST));
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), before);

        t0 = now_sec();
        placed_events = stopped_events = 0;
        for (unsigned i = 0; i < cycles; i++) {
                start(conn, "soak");
                ck_assert(spin_until(placed_reached, i + 1));
                ck_assert_int_eq(virt_domain_destroy_by_name(conn, "soak", NULL), 0);
                ck_assert(spin_until(stopped_reached, i + 1));
        }
        rss2 = rss_kib();
        printf(
            "soak: %u start/stop cycles in %.3f s; RSS %ld KiB at start, %ld KiB with %u domains, %ld KiB "
            "after the soak\n",
            cycles, now_sec() - t0, rss0, rss1, BURST, rss2);
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), before);
        /* what remains is only the driver's "test" domain: release it and the ledger is empty */
        {
                g_autoptr(GPtrArray) keys = ledger_keys(manager_ledger(m));
                Ledger *l = m->ledger;
                for (unsigned i = 0; i < keys->len; i++)
                        ledger_release(l, g_ptr_array_index(keys, i));
                ck_assert(ledger_is_empty(l));
        }
        virConnectClose(conn);
        manager_free(m);
        for (unsigned i = 0; i < 20; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}
END_TEST

static Suite *volume_suite(void)
{
        Suite *s = suite_create("volume");
        TCase *tc = tcase_create("test driver");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_burst_and_soak);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(volume_suite)
