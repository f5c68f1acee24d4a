/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The libvirt connection adapter against libvirt's test driver (test:///default): a refused open, listing
 * and lookup, lifecycle events through the loop, and that nothing is called back once it is freed.
 */
#include <errno.h>
#include <event2/event.h>
#include <string.h>
#include <time.h>

#include "test-util.h"
#include "text-safe.h"
#include "virt-conn.h"
#include "virt-domain.h"
#include "virt-event.h"

#define MiB (UINT64_C(1) << 20)

static struct event_base *base;

typedef struct Seen {
        char name[64];
        int started, stopped, closed;
} Seen;

static void setup(void)
{
        if (base)
                return;
        base = event_base_new();
        ck_assert_int_eq(virt_event_register(base), 0);
        virt_errors_quiet();
}

static void on_lifecycle(virDomainPtr dom, int event, int detail, void *userdata)
{
        Seen *s = userdata;
        (void)detail;

        if (strcmp(virt_domain_name(dom), s->name) != 0)
                return;
        if (event == VIR_DOMAIN_EVENT_STARTED)
                s->started++;
        else if (event == VIR_DOMAIN_EVENT_STOPPED)
                s->stopped++;
}

static void on_closed(int reason, void *userdata)
{
        Seen *s = userdata;
        (void)reason;
        s->closed++;
}

static const VirtConnEvents events = {.lifecycle = on_lifecycle, .closed = on_closed};

/* Runs the loop until *counter reaches want, for at most 2 s. */
static bool spin_until(const int *counter, int want)
{
        for (unsigned i = 0; i < 2000 && *counter < want; i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        return *counter >= want;
}

START_TEST(test_open_refused)
{
        g_autoptr(VirtConn) c = NULL;
        g_autofree char *error = NULL;

        ck_assert_int_eq(virt_conn_open("nosuchdriver:///x", &events, NULL, &c, &error), -ECONNREFUSED);
        ck_assert_ptr_null(c);
        ck_assert_ptr_nonnull(strstr(error, "nosuchdriver:///x"));
}
END_TEST

START_TEST(test_list_and_lookup)
{
        Seen seen = {.name = "none"};
        g_autoptr(VirtConn) c = NULL;
        g_autofree char *error = NULL;
        virDomainPtr *doms = NULL;
        unsigned n = 0;
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autoptr(virDomain) found = NULL;
        virDomainPtr missing = NULL;

        ck_assert_int_eq(virt_conn_open("test:///default", &events, &seen, &c, &error), 0);
        ck_assert_ptr_nonnull(virt_conn_get(c));
        ck_assert_int_eq(virt_conn_list_running(c, &doms, &n, &error), 0);
        ck_assert_uint_ge(n, 1); /* the test driver's own domain "test" runs */
        ck_assert(virt_domain_is_active(doms[0]));
        virt_domain_uuid(doms[0], uuid);
        ck_assert_int_eq(virt_conn_lookup_uuid(c, uuid, &found, NULL), 0);
        ck_assert_str_eq(virt_domain_name(found), virt_domain_name(doms[0]));
        virt_domains_free(doms, n);
        ck_assert_int_eq(virt_conn_lookup_uuid(c, "00000000-0000-0000-0000-000000000000", &missing, &error),
                         -ENOENT);
        ck_assert_ptr_null(missing);
}
END_TEST

/* libvirt's messages quote a domain's name, which its owner chose: an error placementd passes on (the
 * log, a decision's reason, a D-Bus answer) holds no control character, nor a noncharacter, which sd-bus
 * refuses to send */
START_TEST(test_errors_quote_names_safely)
{
        Seen seen = {.name = "none"};
        g_autoptr(VirtConn) c = NULL;
        g_autofree char *error = NULL,
                        *xml = g_strdup("<domain type='test'><name>e&#xD;&#xFDD0;x</name><memory "
                                        "unit='MiB'>64</memory><vcpu>1</vcpu>"
                                        "<os><type>hvm</type></os></domain>");
        g_autoptr(CpuSet) cpus = cpuset_new();
        virDomainPtr dom;

        cpuset_add(cpus, 0);

        ck_assert_int_eq(virt_conn_open("test:///default", &events, &seen, &c, NULL), 0);
        dom = virDomainCreateXML(virt_conn_get(c), xml, 0);
        ck_assert_ptr_nonnull(dom);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert_int_lt(virt_domain_pin_vcpu(dom, 0, cpus, &error), 0);
        ck_assert_msg(error && strstr(error, "e\\x0d\\u{fdd0}x"), "%s", error);
        ck_assert_msg(text_is_terminal_safe(error) && !text_has_noncharacter(error), "%s", error);
        virDomainFree(dom);
}
END_TEST

/* Running domains come in the order they started (rising IDs), whatever order libvirt keeps them in: a
 * restarted daemon places them as it would have then */
START_TEST(test_list_in_start_order)
{
        Seen seen = {.name = "none"};
        g_autoptr(VirtConn) c = NULL;
        g_autofree char *error = NULL;
        virDomainPtr *doms = NULL;
        unsigned n = 0;

        ck_assert_int_eq(virt_conn_open("test:///default", &events, &seen, &c, &error), 0);
        for (unsigned i = 0; i < 24; i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='test'><name>order-%c%u</name><memory>1024</memory><vcpu>1</vcpu>"
                    "<os><type>hvm</type></os></domain>",
                    'z' - (char)i, i);
                virDomainPtr dom = virDomainCreateXML(virt_conn_get(c), xml, 0);
                ck_assert_ptr_nonnull(dom);
                virDomainFree(dom);
        }
        ck_assert_int_eq(virt_conn_list_running(c, &doms, &n, &error), 0);
        ck_assert_uint_ge(n, 25);
        for (unsigned i = 1; i < n; i++)
                ck_assert_msg(virDomainGetID(doms[i - 1]) < virDomainGetID(doms[i]),
                              "%s (ID %u) before %s (ID %u)", virt_domain_name(doms[i - 1]),
                              virDomainGetID(doms[i - 1]), virt_domain_name(doms[i]),
                              virDomainGetID(doms[i]));
        virt_domains_free(doms, n);
}
END_TEST

START_TEST(test_lifecycle_events)
{
        Seen seen = {.name = "vc-events"}, after = {.name = "vc-after"};
        g_autoptr(VirtConn) c = NULL;
        g_autoptr(VirtConn) other = NULL;
        g_autofree char *error = NULL;
        virConnectPtr conn;

        ck_assert_int_eq(virt_conn_open("test:///default", &events, &seen, &c, &error), 0);
        conn = virt_conn_get(c);
        ck_assert_int_eq(virt_test_domain_start(conn, seen.name, 1, 64 * MiB, &error), 0);
        ck_assert(spin_until(&seen.started, 1));
        ck_assert_int_eq(virt_domain_destroy_by_name(conn, seen.name, &error), 0);
        ck_assert(spin_until(&seen.stopped, 1));

        /* freed: no callback reaches the old userdata, although the driver's events go on */
        ck_assert_int_eq(virt_conn_open("test:///default", &events, &after, &other, &error), 0);
        g_clear_pointer(&c, virt_conn_free);
        seen = (Seen){.name = "vc-after"};
        ck_assert_int_eq(virt_test_domain_start(virt_conn_get(other), "vc-after", 1, 64 * MiB, &error), 0);
        ck_assert(spin_until(&after.started, 1));
        ck_assert_int_eq(seen.started, 0);
        ck_assert_int_eq(virt_domain_destroy_by_name(virt_conn_get(other), "vc-after", &error), 0);
        ck_assert(spin_until(&after.stopped, 1));
        /* closing it ourselves is not a close under us */
        ck_assert_int_eq(after.closed, 0);
}
END_TEST

START_TEST(test_close_reasons)
{
        ck_assert_str_eq(virt_close_reason_to_string(VIR_CONNECT_CLOSE_REASON_EOF), "end of file");
        ck_assert_str_eq(virt_close_reason_to_string(VIR_CONNECT_CLOSE_REASON_KEEPALIVE),
                         "keepalive timeout");
        ck_assert_str_eq(virt_close_reason_to_string(-1), "unknown reason");
        ck_assert_str_eq(virt_close_reason_to_string(99), "unknown reason");
}
END_TEST

static Suite *virt_conn_suite(void)
{
        Suite *s = suite_create("virt conn");
        TCase *tc = tcase_create("test driver");
        tcase_add_checked_fixture(tc, setup, NULL);
        tcase_add_test(tc, test_open_refused);
        tcase_add_test(tc, test_list_and_lookup);
        tcase_add_test(tc, test_list_in_start_order);
        tcase_add_test(tc, test_lifecycle_events);
        tcase_add_test(tc, test_close_reasons);
        tcase_add_test(tc, test_errors_quote_names_safely);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(virt_conn_suite)
