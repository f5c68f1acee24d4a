/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Emulator pins that follow arrivals, against libvirt's test driver: on a host without SMT a domain's
 * emulator gets the cores of its node that hold no vCPU; a domain placed later on some of them moves the
 * first one's emulator (and its I/O threads) off them, live, in its decision and in its record.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <string.h>
#include <time.h>

#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"

/* 8 cores of 1 thread: CPUs 0-7 of the test driver's 8. */
#define TOPOLOGY "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:8 pu:1"

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

static int emulator_mask(virDomainPtr dom)
{
        unsigned char map[1] = {0};

        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        return map[0];
}

/* The live pin of I/O thread 1 of dom as a mask of CPUs 0-7, -1 when it has none. */
static int iothread_mask(virDomainPtr dom)
{
        virDomainIOThreadInfoPtr *info = NULL;
        int n = virDomainGetIOThreadInfo(dom, &info, VIR_DOMAIN_AFFECT_LIVE), map = -1;

        for (int i = 0; i < n; i++) {
                if (info[i]->iothread_id == 1 && info[i]->cpumaplen > 0)
                        map = info[i]->cpumap[0];
                virDomainIOThreadInfoFree(info[i]);
        }
        free(info);
        return map;
}

/* Runs the loop until dom's live emulator pin is want (up to ms); whether it is. */
static bool spin_until_emulator(virDomainPtr dom, int want, unsigned ms)
{
        for (unsigned i = 0; i < ms; i++) {
                struct timespec nap = {0, 1000000};
                if (emulator_mask(dom) == want)
                        return true;
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        return false;
}

static void assert_plan_pin(const CpuSet *s, const char *want)
{
        g_autofree char *got = cpuset_format(s);
        ck_assert_str_eq(got, want);
}

START_TEST(test_emulator_follows_arrivals)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = fixture_start_xml(conn, "em-a", "<vcpu>2</vcpu><iothreads>1</iothreads>");
        virDomainPtr b = NULL, c = NULL, d = NULL;
        const Decision *da;

        ck_assert(fixture_spin_known(base, m, "em-a", 3000));
        ck_assert(spin_until_emulator(a, 0xfc, 3000)); /* CPUs 2-7: the cores without a vCPU */
        ck_assert_int_eq(iothread_mask(a), 0xfc);
        b = fixture_start_xml(conn, "em-b", "<vcpu>2</vcpu>");
        ck_assert(fixture_spin_known(base, m, "em-b", 3000));
        /* b's vCPUs on CPUs 2-3: a's emulator and I/O thread leave them */
        ck_assert_msg(spin_until_emulator(a, 0xf0, 3000), "a's emulator on mask 0x%x", emulator_mask(a));
        ck_assert_int_eq(iothread_mask(a), 0xf0);
        da = manager_lookup(m, "em-a");
        assert_plan_pin(da->plan->emulator_pin, "4-7");
        assert_plan_pin(da->plan->iothread_pin, "4-7");
        ck_assert_msg(strstr(da->reason, "its emulator now on CPUs 4-7: 2-3 went to another domain's vCPUs"),
                      "%s", da->reason);
        ck_assert_int_eq(da->plan->vcpu_pu[0], 0); /* its vCPUs stay */
        ck_assert_int_eq(da->plan->vcpu_pu[1], 1);
        /* b's own emulator was chosen without a's and b's cores */
        ck_assert_int_eq(emulator_mask(b), 0xf0);
        c = fixture_start_xml(conn, "em-c", "<vcpu>2</vcpu>");
        ck_assert(fixture_spin_known(base, m, "em-c", 3000));
        ck_assert(spin_until_emulator(a, 0xc0, 3000));
        ck_assert(spin_until_emulator(b, 0xc0, 3000));
        da = manager_lookup(m, "em-a");
        /* said once, for the last narrowing */
        ck_assert_msg(
            strstr(da->reason, "its emulator now on CPUs 6-7: 4-5 went to another domain's vCPUs") &&
                !strstr(da->reason, "4-7"),
            "%s", da->reason);
        /* the last free cores taken: nothing would be left, the pins stay */
        d = fixture_start_xml(conn, "em-d", "<vcpu>2</vcpu>");
        ck_assert(fixture_spin_known(base, m, "em-d", 3000));
        fixture_spin_known(base, NULL, NULL, 200);
        ck_assert_int_eq(emulator_mask(a), 0xc0);
        ck_assert_int_eq(emulator_mask(b), 0xc0);
        fixture_stop(d);
        fixture_stop(c);
        fixture_stop(b);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/* Apply=no changes nothing in a domain: no emulator follows */
START_TEST(test_advisory_pins_nothing)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nApply=no\n");
        virDomainPtr a = fixture_start_xml(conn, "em-a", "<vcpu>2</vcpu>");
        virDomainPtr b = NULL;
        int before;

        ck_assert(fixture_spin_known(base, m, "em-a", 3000));
        before = emulator_mask(a);
        b = fixture_start_xml(conn, "em-b", "<vcpu>2</vcpu>");
        ck_assert(fixture_spin_known(base, m, "em-b", 3000));
        fixture_spin_known(base, NULL, NULL, 200);
        ck_assert_int_eq(emulator_mask(a), before);
        ck_assert_ptr_null(strstr(manager_lookup(m, "em-a")->reason, "its emulator now on"));
        fixture_stop(b);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

static Suite *emulators_suite(void)
{
        Suite *s = suite_create("manager emulators");
        TCase *tc = tcase_create("follow");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_emulator_follows_arrivals);
        tcase_add_test(tc, test_advisory_pins_nothing);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(emulators_suite)
