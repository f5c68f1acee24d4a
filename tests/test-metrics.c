/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metrics exposition of a manager in-process against libvirt's test driver: what a node has free.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>

#include "manager-fixture.h"
#include "config.h"
#include "metrics.h"
#include "stats-cache.h"
#include "test-util.h"

/* 2 nodes of 16 GiB, 2 cores x 2 threads each. */
#define TOPOLOGY "synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:2 pu:2"

static struct event_base *base;
static virConnectPtr conn;

static void setup(void)
{
        fixture_open(&base, &conn, true);
}

static void teardown(void)
{
        fixture_close(base, conn);
}

/* MemoryReserve= takes any size up to 2^64 - 1: added to what domains hold it saturates, as the engine's
 * host view does, and a node has nothing free (the sum wrapped to a small number, and the node holding a
 * domain showed nearly all its memory free). */
START_TEST(test_free_memory_reserve_saturates)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "held", 1);
        g_autoptr(Config) config = config_new_default();
        g_autofree char *text = NULL;
        char *lines;

        /* placed first, under no reserve: its 512 MiB are held on a node */
        ck_assert(fixture_spin_known(base, m, "held", 5000));
        config->placement.memory_reserve = UINT64_MAX;
        manager_set_config(m, g_steal_pointer(&config));
        text = metrics_render(m, NULL);
        lines = strstr(text, "placementd_node_free_memory_bytes{");
        ck_assert_ptr_nonnull(lines);
        lines[MIN(strlen(lines), 200)] = 0; /* the lines of it, for the message */
        ck_assert_msg(strstr(lines, "placementd_node_free_memory_bytes{node=\"0\"} 0\n") &&
                          strstr(lines, "placementd_node_free_memory_bytes{node=\"1\"} 0\n"),
                      "%s", lines);
        fixture_stop(dom);
        fixture_manager_free(base, m);
}
END_TEST

/* A topology with no memory sizes (an export without them) has no free memory to tell: no line rather
 * than the 1 PiB each node is taken to hold. */
START_TEST(test_unknown_memory_sizes_left_out)
{
        g_autofree char *path = test_topology_path("v1-no-memory.xml");
        Manager *m = fixture_manager_new(base, path, NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "held", 1);
        g_autofree char *text = NULL;

        ck_assert(fixture_spin_known(base, m, "held", 5000));
        text = metrics_render(m, NULL);
        ck_assert_ptr_nonnull(strstr(text, "# TYPE placementd_node_free_memory_bytes gauge"));
        ck_assert_msg(!strstr(text, "placementd_node_free_memory_bytes{"), "%s", text);
        ck_assert_ptr_nonnull(strstr(text, "placementd_node_free_cores{node=\"1\"}"));
        fixture_stop(dom);
        fixture_manager_free(base, m);
}
END_TEST

/* A domain's name is its owner's text: on the page it is written as placementctl and the log write it
 * (text_safe()), so that a scrape read on a terminal cannot be driven by a carriage return, a C1 control
 * or a bidi override in a name, nor show a sample that is not there. */
START_TEST(test_domain_label_escaped)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = fixture_define_and_start(conn,
                                                    "cr&#13;x\xc2\x9b"
                                                    "31m\xe2\x80\xae"
                                                    "b\\c",
                                                    1);
        g_autofree char *text = NULL;
        StatsCache *stats;
        const char *line;

        ck_assert(fixture_spin_known(base, m,
                                     "cr\rx\xc2\x9b"
                                     "31m\xe2\x80\xae"
                                     "b\\c",
                                     5000));
        stats = stats_cache_new_for_manager(base, m);
        stats_cache_refresh(stats);
        text = metrics_render(m, stats);
        stats_cache_free(stats);
        line = strstr(text, "{domain=");
        ck_assert_ptr_nonnull(line);
        ck_assert_msg(g_str_has_prefix(line, "{domain=\"cr\\\\x0dx\\\\x9b31m\\\\u{202e}b\\\\x5cc\",uuid=\""),
                      "%.60s", line);
        for (const char *p = text; *p; p++)
                ck_assert_msg(*p == '\n' || ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f),
                              "byte 0x%02x at %td", (unsigned char)*p, p - text);
        fixture_stop(dom);
        fixture_manager_free(base, m);
}
END_TEST

static Suite *metrics_suite(void)
{
        Suite *s = suite_create("metrics");
        TCase *tc = tcase_create("render");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_free_memory_reserve_saturates);
        tcase_add_test(tc, test_unknown_memory_sizes_left_out);
        tcase_add_test(tc, test_domain_label_escaped);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(metrics_suite)
