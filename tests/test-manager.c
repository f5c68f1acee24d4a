/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manager in-process against libvirt's test driver (test:///default): events, live pins read back
 * with virDomainGetVcpuPinInfo, metadata, release on stop, restart adoption, opt-outs, advisory mode,
 * pins made by hand, and a domain that vanishes before it is pinned.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <time.h>

#include "domain-xml.h"
#include "log.h"
#include "manager-internal.h"
#include "test-util.h"
#include "virt-domain.h"
#include "virt-event.h"

/* 8 PUs: the test driver accepts pins on CPUs 0-7 only. */
#define TOPOLOGY "synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"

static struct event_base *base;
static virConnectPtr conn; /* the test's own connection to the same in-process driver */

static void setup(void)
{
        if (!base) {
                base = event_base_new();
                ck_assert_int_eq(virt_event_register(base), 0);
                virt_errors_quiet();
                log_set_max_level(LOG_WARNING);
        }
        conn = virConnectOpen("test:///default");
        ck_assert_ptr_nonnull(conn);
}

static void teardown(void)
{
        virConnectClose(conn);
        for (unsigned i = 0; i < 20; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

/* Runs the loop for up to ms, or until done(arg) holds. */
static bool spin(bool (*done)(void *), void *arg, unsigned ms)
{
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                if (done && done(arg))
                        return true;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= (long)ms)
                        return done == NULL;
                struct timespec nap = {0, 1000000};
                nanosleep(&nap, NULL);
        }
}

static Manager *new_manager(const char *config_text)
{
        Topology *t = NULL;
        Config *c = NULL;
        g_autofree char *err = NULL;
        Manager *m;

        ck_assert_int_eq(topology_load(TOPOLOGY, &t, &err), 0);
        ck_assert_msg(config_load_data(config_text ? config_text : "", "test.conf", &c, &err) == 0, "%s",
                      err);
        m = manager_new(base, t, c, "test:///default");
        manager_start(m);
        ck_assert(manager_connected(m));
        return m;
}

static void free_manager(Manager *m)
{
        manager_free(m);
        spin(NULL, NULL, 20);
}

typedef struct {
        Manager *m;
        const char *name;
} Wait;

static bool known(void *arg)
{
        Wait *w = arg;
        return manager_lookup(w->m, w->name) != NULL;
}

static bool unknown(void *arg)
{
        return !known(arg);
}

static virDomainPtr start_domain(const char *name, unsigned vcpus, const char *extra)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu>%u</vcpu><os><type>hvm</type></os>%s</domain>",
                            name, vcpus, extra ? extra : "");
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);
        ck_assert_msg(dom != NULL, "cannot start %s", name);
        return dom;
}

static void assert_live_pins(virDomainPtr dom, const Plan *p)
{
        CpuSet **pins = NULL;
        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, p->nvcpus, &pins, NULL), 0);
        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *want = cpuset_format(p->vcpu_pins[i]), *have = cpuset_format(pins[i]);
                ck_assert_str_eq(have, want);
        }
        virt_pins_free(pins, p->nvcpus);
}

START_TEST(test_start_pin_stop)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-web", 2, NULL);
        Wait w = {m, "m-web"};
        g_autoptr(DomainSpec) spec = NULL;

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "m-web");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        ck_assert_str_eq(d->memory_binding, "applied");
        /* one whole core each */
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 2);
        ck_assert(!cpuset_intersects(d->plan->vcpu_pins[0], d->plan->vcpu_pins[1]));
        assert_live_pins(dom, d->plan);
        /* the decision is in the live metadata */
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_nonnull(spec->decision);
        ck_assert_str_eq(spec->decision->result, "placed");
        ck_assert_uint_eq(spec->decision->vcpus->len, 2);
        /* lookup by UUID too */
        ck_assert_ptr_eq(manager_lookup(m, d->uuid), d);

        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(spin(unknown, &w, 3000));
        /* only the test driver's own "test" domain may remain counted */
        const Decision *other = manager_lookup(m, "test");
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), other ? 1 : 0);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_lookup_name_before_uuid)
{
        /* A domain may be named like another's UUID: the exact name wins, and a UUID matches in any
         * case (libvirt's rule). */
        static const char uuid[] = "0f6a4c2e-3b1d-4e5f-8a9b-1c2d3e4f5a6b";
        Manager *m = new_manager(NULL);
        virDomainPtr a =
            start_domain("m-uuid-owner", 1, "<uuid>0f6a4c2e-3b1d-4e5f-8a9b-1c2d3e4f5a6b</uuid>");
        virDomainPtr b = start_domain(uuid, 1, NULL);
        Wait wa = {m, "m-uuid-owner"}, wb = {m, uuid};
        g_autofree char *upper = g_ascii_strup(uuid, -1);

        ck_assert(spin(known, &wa, 3000));
        ck_assert(spin(known, &wb, 3000));
        ck_assert_str_eq(manager_lookup(m, uuid)->name, uuid);
        ck_assert_str_eq(manager_lookup(m, upper)->name, "m-uuid-owner");
        ck_assert_str_eq(manager_lookup(m, manager_lookup(m, uuid)->uuid)->name, uuid);
        ck_assert_ptr_null(manager_lookup(m, ""));
        ck_assert_int_eq(virDomainDestroy(a), 0);
        ck_assert_int_eq(virDomainDestroy(b), 0);
        virDomainFree(a);
        virDomainFree(b);
        free_manager(m);
}
END_TEST

START_TEST(test_restart_adopts)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-db", 2, NULL);
        Wait w = {m, "m-db"};
        g_autoptr(Plan) before = NULL;

        ck_assert(spin(known, &w, 3000));
        before = plan_copy(manager_lookup(m, "m-db")->plan);
        free_manager(m);

        m = new_manager(NULL);
        w.m = m;
        ck_assert(known(&w));
        const Decision *d = manager_lookup(m, "m-db");
        ck_assert(d->adopted);
        ck_assert_int_eq(d->result, DECISION_PLACED);
        for (unsigned i = 0; i < before->nvcpus; i++) {
                ck_assert(cpuset_equal(d->plan->vcpu_pins[i], before->vcpu_pins[i]));
                ck_assert_int_eq(d->plan->vcpu_pu[i], before->vcpu_pu[i]);
        }
        assert_live_pins(dom, before);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)before->vcpu_pu[0]), 1);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_opt_outs)
{
        static const struct {
                const char *name, *extra, *needle;
        } cases[] = {
            {"m-pinned", "<cputune><vcpupin vcpu='0' cpuset='1'/></cputune>", "vcpupin"},
            {"m-meta", "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "' skip='yes'/></metadata>", "skip"},
            {"m-auto", NULL, "placement='auto'"},
        };
        Manager *m = new_manager(NULL);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                virDomainPtr dom;
                Wait w = {m, cases[i].name};
                if (i == 2) {
                        g_autofree char *xml = g_strdup_printf(
                            "<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu placement='auto'>2</vcpu><os><type>hvm</type></os></domain>",
                            cases[i].name);
                        dom = virDomainCreateXML(conn, xml, 0);
                        ck_assert_ptr_nonnull(dom);
                } else {
                        dom = start_domain(cases[i].name, 2, cases[i].extra);
                }
                ck_assert(spin(known, &w, 3000));
                const Decision *d = manager_lookup(m, cases[i].name);
                ck_assert_int_eq(d->result, DECISION_SKIPPED);
                ck_assert_msg(strstr(d->reason, cases[i].needle), "%s: %s", cases[i].name, d->reason);
                ck_assert_ptr_null(d->plan);
                virDomainDestroy(dom);
                virDomainFree(dom);
        }
        free_manager(m);
}
END_TEST

START_TEST(test_policy_per_domain)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom =
            start_domain("m-compat", 2,
                         "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "' policy='compat'/></metadata>");
        Wait w = {m, "m-compat"};

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-compat")->plan->policy, POLICY_COMPAT);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_advisory)
{
        Manager *m = new_manager("[Placement]\nApply=no\n");
        virDomainPtr dom = start_domain("m-advice", 2, NULL);
        Wait w = {m, "m-advice"};
        CpuSet **pins = NULL;
        g_autoptr(DomainSpec) spec = NULL;

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "m-advice");
        ck_assert_int_eq(d->result, DECISION_ADVISORY);
        ck_assert_int_eq(d->plan->result, PLAN_PLACED);
        /* nothing changed: still allowed on every CPU, no metadata */
        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, 2, &pins, NULL), 0);
        ck_assert_uint_eq(cpuset_count(pins[0]), 8);
        virt_pins_free(pins, 2);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_null(spec->decision);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_pins_adopted)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-hand", 2, NULL);
        Wait w = {m, "m-hand"};
        unsigned char map = 1u << 7;

        ck_assert(spin(known, &w, 3000));
        /* someone pins vCPU 0 to CPU 7 (the test driver sends no tunable event: reconcile finds it) */
        ck_assert_int_eq(virDomainPinVcpuFlags(dom, 0, &map, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        const Decision *d = manager_lookup(m, "m-hand");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert(d->pinned_by_hand);
        ck_assert(cpuset_has(d->plan->vcpu_pins[0], 7));
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 1);
        /* the ledger counts it on CPU 7, and it is not re-pinned */
        ck_assert_uint_eq(
            ledger_pu_load(manager_ledger(m), (unsigned)topology_pu_by_os(manager_topology(m), 7)), 1);
        manager_reconcile(m);
        ck_assert(cpuset_has(manager_lookup(m, "m-hand")->plan->vcpu_pins[0], 7));
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_vanished_before_pin)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-gone", 2, NULL);
        Wait w = {m, "m-gone"};
        unsigned before;

        /* destroyed before the manager saw the event: placing the stale handle must clean up */
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        before = ledger_count(manager_ledger(m));
        placer_place(m, dom, ORIGIN_STARTED, 0);
        ck_assert(!known(&w));
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), before);
        spin(NULL, NULL, 50); /* the queued events are harmless */
        ck_assert(!known(&w));
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_plan_changes_nothing)
{
        Manager *m = new_manager(NULL);
        unsigned n = ledger_count(manager_ledger(m));
        g_autoptr(Plan) p = manager_plan(m, 2, UINT64_C(1) << 30);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), n);
        g_autofree char *status = manager_status(m);
        ck_assert_ptr_nonnull(strstr(status, "Connected to test:///default"));
        free_manager(m);
}
END_TEST

START_TEST(test_undefined_while_running)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = virDomainDefineXML(conn, "<domain type='test'><name>m-persist</name>"
                                                    "<memory unit='MiB'>512</memory><vcpu>2</vcpu>"
                                                    "<os><type>hvm</type></os></domain>");
        Wait w = {m, "m-persist"};

        ck_assert_ptr_nonnull(dom);
        ck_assert_int_eq(virDomainCreate(dom), 0);
        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(virDomainUndefine(dom), 0);
        spin(NULL, NULL, 100);
        /* it runs on, transient, and keeps its cores */
        ck_assert(known(&w));
        ck_assert_int_eq(manager_lookup(m, "m-persist")->result, DECISION_PLACED);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(spin(unknown, &w, 3000));
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_name_reused)
{
        Manager *m = new_manager(NULL);
        Wait w = {m, "m-again"};
        virDomainPtr first = start_domain("m-again", 2, NULL);
        char uuid1[VIR_UUID_STRING_BUFLEN], uuid2[VIR_UUID_STRING_BUFLEN];

        ck_assert(spin(known, &w, 3000));
        virt_domain_uuid(first, uuid1);
        ck_assert_int_eq(virDomainDestroy(first), 0);
        ck_assert(spin(unknown, &w, 3000));
        virDomainPtr second = start_domain("m-again", 1, NULL);
        virt_domain_uuid(second, uuid2);
        ck_assert_str_ne(uuid1, uuid2);
        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "m-again");
        ck_assert_str_eq(d->uuid, uuid2);
        ck_assert_uint_eq(d->plan->nvcpus, 1);
        ck_assert_ptr_null(manager_lookup(m, uuid1));
        virDomainDestroy(second);
        virDomainFree(first);
        virDomainFree(second);
        free_manager(m);
}
END_TEST

START_TEST(test_place_running_off)
{
        /* test:///default always runs a domain named "test" when the manager starts */
        Manager *m = new_manager("[Placement]\nPlaceRunning=no\n");
        const Decision *d = manager_lookup(m, "test");
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_ptr_nonnull(strstr(d->reason, "PlaceRunning=no"));
        free_manager(m);

        m = new_manager(NULL);
        ck_assert_int_eq(manager_lookup(m, "test")->result, DECISION_PLACED);
        free_manager(m);
}
END_TEST

START_TEST(test_memory_binding_off)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-nomem", 1, NULL);
        Wait w = {m, "m-nomem"};

        ck_assert(spin(known, &w, 3000));
        ck_assert_str_eq(manager_lookup(m, "m-nomem")->memory_binding, "off");
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

static Suite *manager_suite(void)
{
        Suite *s = suite_create("manager");
        TCase *tc = tcase_create("test driver");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_start_pin_stop);
        tcase_add_test(tc, test_lookup_name_before_uuid);
        tcase_add_test(tc, test_restart_adopts);
        tcase_add_test(tc, test_opt_outs);
        tcase_add_test(tc, test_policy_per_domain);
        tcase_add_test(tc, test_advisory);
        tcase_add_test(tc, test_hand_pins_adopted);
        tcase_add_test(tc, test_vanished_before_pin);
        tcase_add_test(tc, test_plan_changes_nothing);
        tcase_add_test(tc, test_undefined_while_running);
        tcase_add_test(tc, test_name_reused);
        tcase_add_test(tc, test_place_running_off);
        tcase_add_test(tc, test_memory_binding_off);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_suite)
