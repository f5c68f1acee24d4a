/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A domain libvirt holds a job on (QEMU stopped or not answering its monitor, a long migration): every
 * call that needs the job would wait libvirt's 30 s for it, and the daemon's loop with it. Against
 * libvirt's test driver, which reports a held job from the guest time (virDomainSetTime): 10000 + N
 * seconds is "occupied" (a monitor command) for N ms, below 10000 "a background job" for that many ms.
 * Nothing waits: the plan waits for the job, the ledger counts what runs, no record is written (nor one
 * written again by the reconcile), and the domain is placed once the job is released; a job held briefly (a
 * start, another tool's query) is waited for as before.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <string.h>
#include <time.h>

#include "domain-xml.h"
#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "virt-domain.h"

/* 2 cores of 2 threads: CPUs 0-3 of the test driver's 8. */
#define TOPOLOGY     "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:2"
#define RELEASED     627319920 /* the test driver's own guest time: no job */
#define OCCUPIED_12S (10000 + 12000)

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

/* Runs the loop until the decision of name has result want (up to ms). */
static bool spin_until(Manager *m, const char *name, DecisionResult want, unsigned ms)
{
        for (unsigned i = 0; i < ms; i++) {
                const Decision *d = manager_lookup(m, name);
                struct timespec nap = {0, 1000000};
                if (d && d->result == want)
                        return true;
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        return false;
}

/* Starts a domain of vcpus; with held_time, its job is held from before the daemon sees it start. */
static virDomainPtr start(const char *name, unsigned vcpus, long long held_time)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu>%u</vcpu><os><type>hvm</type></os></domain>",
                            name, vcpus);
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);

        ck_assert_msg(dom != NULL, "cannot start %s", name);
        if (held_time)
                ck_assert_int_eq(virDomainSetTime(dom, held_time, 0, 0), 0);
        return dom;
}

/* The result recorded in dom's metadata, "" when none. */
static char *recorded(virDomainPtr dom)
{
        g_autoptr(DomainSpec) spec = NULL;

        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        return g_strdup(spec->decision ? spec->decision->result : "");
}

/* name's plan waits for its job; its metadata still holds the record it had (want_record: "" for none). */
static void assert_waits(Manager *m, virDomainPtr dom, const char *name, const char *want_record)
{
        const Decision *d = manager_lookup(m, name);
        g_autofree char *rec = recorded(dom);
        const Plan *counted;

        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->result == DECISION_FAILED, "%s", decision_result_to_string(d->result));
        ck_assert(d->job_held);
        ck_assert_msg(d->apply_error &&
                          strstr(d->apply_error, "libvirt has held a job on the domain for 12.0 s "
                                                 "(a monitor command QEMU has not answered)"),
                      "%s", d->apply_error);
        ck_assert_msg(g_str_has_prefix(d->reason, "libvirt holds a job on the domain: the plan waits"), "%s",
                      d->reason);
        ck_assert_msg(!strstr(d->reason, "after a failed apply"), "%s", d->reason); /* what was planned */
        /* the ledger counts what runs; no record is written (that call needs the job too) */
        fixture_assert_live_pins(dom, d->plan);
        counted = ledger_lookup(manager_ledger(m), d->uuid);
        ck_assert_ptr_nonnull(counted);
        for (unsigned i = 0; i < d->plan->nvcpus; i++)
                ck_assert(cpuset_equal(counted->vcpu_pins[i], d->plan->vcpu_pins[i]));
        ck_assert_str_eq(rec, want_record);
}

/* dom's live emulator pin, as libvirt reads it (the test driver's 8 CPUs). */
static CpuSet *emulator_pin(virDomainPtr dom)
{
        unsigned char map = 0;
        CpuSet *pin = cpuset_new();

        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        for (unsigned c = 0; c < 8; c++)
                if (map & (1u << c))
                        cpuset_add(pin, c);
        return pin;
}

static Manager *new_manager(void)
{
        return fixture_manager_new(base, TOPOLOGY, NULL);
}

/* Started with its job held: nothing applied, nothing waited for; placed once the job is released, by the
 * look a few seconds on, without a request. */
START_TEST(test_start_waits_for_held_job)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("j-held", 2, OCCUPIED_12S);
        CpuSet **pins = NULL;
        g_autofree char *rec = NULL;
        const Decision *d;

        ck_assert(spin_until(m, "j-held", DECISION_FAILED, 3000));
        assert_waits(m, dom, "j-held", "");
        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, 2, NULL, &pins, NULL), 0);
        ck_assert_uint_gt(cpuset_count(pins[0]), 2); /* not pinned: runs on any CPU */
        virt_pins_free(pins, 2);
        /* still held: it keeps waiting */
        held_retry_now(m);
        assert_waits(m, dom, "j-held", "");
        /* released: placed without being asked, within the look's few seconds */
        ck_assert_int_eq(virDomainSetTime(dom, RELEASED, 0, 0), 0);
        ck_assert(spin_until(m, "j-held", DECISION_PLACED, 8000));
        d = manager_lookup(m, "j-held");
        ck_assert(!d->job_held);
        ck_assert_ptr_null(d->apply_error);
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 2); /* a core each */
        fixture_assert_live_pins(dom, d->plan);
        rec = recorded(dom);
        ck_assert_str_eq(rec, "placed");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* A job held for less than VIRT_JOB_STUCK_MS is an everyday one: waited for, placed at once. */
START_TEST(test_brief_job_waited_for)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("j-brief", 2, 500); /* a background job for 0.5 s */
        g_autofree char *rec = NULL;

        ck_assert(spin_until(m, "j-brief", DECISION_PLACED, 3000));
        ck_assert(!manager_lookup(m, "j-brief")->job_held);
        fixture_assert_live_pins(dom, manager_lookup(m, "j-brief")->plan);
        rec = recorded(dom);
        ck_assert_str_eq(rec, "placed");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* Asked to place a placed domain again while its job is held: its pins stay as they run and are counted
 * as such; placed anew once released. */
START_TEST(test_replace_waits_for_held_job)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("j-again", 2, 0);
        g_autoptr(Plan) before = NULL;
        g_autoptr(CpuSet) live = NULL;
        const Decision *d;
        g_autofree char *error = NULL;

        ck_assert(spin_until(m, "j-again", DECISION_PLACED, 3000));
        before = plan_copy(manager_lookup(m, "j-again")->plan);
        ck_assert_int_eq(virDomainSetTime(dom, OCCUPIED_12S, 0, 0), 0);
        ck_assert_int_eq(manager_replace(m, "j-again", &error), 0);
        assert_waits(m, dom, "j-again", "placed"); /* its record is still what runs */
        fixture_assert_live_pins(dom, before);     /* what it had stands */
        /* and so does its emulator pin, placementd's own: counted as such */
        ck_assert(!cpuset_is_empty(before->emulator_pin));
        d = manager_lookup(m, "j-again");
        ck_assert(cpuset_equal(d->plan->emulator_pin, before->emulator_pin));
        ck_assert_int_eq(virDomainSetTime(dom, RELEASED, 0, 0), 0);
        held_retry_now(m);
        d = manager_lookup(m, "j-again");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        fixture_assert_live_pins(dom, d->plan);
        /* placed as before: its emulator is not taken for one pinned by someone else */
        ck_assert_msg(!strstr(d->reason, "outside placementd"), "%s", d->reason);
        ck_assert(cpuset_equal(d->plan->emulator_pin, before->emulator_pin));
        live = emulator_pin(dom);
        ck_assert(cpuset_equal(live, d->plan->emulator_pin));
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* The reconcile reads each placed domain's live I/O threads, which takes the job: a held one is left for a
 * later round, then followed (on a host without SMT, where the emulator's pin is the I/O threads' rule). */
START_TEST(test_reconcile_skips_held_job)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:1(memory=16GiB) core:2 pu:1", NULL);
        virDomainPtr dom = start("j-io", 1, 0);
        unsigned char anywhere = 0xff;

        ck_assert(spin_until(m, "j-io", DECISION_PLACED, 3000));
        ck_assert_int_eq(virDomainAddIOThread(dom, 5, VIR_DOMAIN_AFFECT_LIVE), 0);
        /* as QEMU starts one: on any CPU (the test driver gives it vCPU 0's) */
        ck_assert_int_eq(virDomainPinIOThread(dom, 5, &anywhere, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        ck_assert_int_eq(virDomainSetTime(dom, OCCUPIED_12S, 0, 0), 0);
        manager_reconcile(m);
        ck_assert(cpuset_is_empty(manager_lookup(m, "j-io")->plan->iothreads));
        ck_assert_int_eq(virDomainSetTime(dom, RELEASED, 0, 0), 0);
        manager_reconcile(m);
        ck_assert(cpuset_has(manager_lookup(m, "j-io")->plan->iothreads, 5));
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* A decision whose metadata write failed is written again by the reconcile, not while the job is held. */
START_TEST(test_record_again_waits_for_held_job)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("j-rec", 1, 0);
        Decision *d;
        g_autofree char *before = NULL, *after = NULL;

        ck_assert(spin_until(m, "j-rec", DECISION_PLACED, 3000));
        d = (Decision *)manager_lookup(m, "j-rec");
        /* as if the write had failed: no metadata, the decision marked unrecorded */
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, NULL, NULL, PLACEMENTD_XMLNS,
                                              VIR_DOMAIN_AFFECT_LIVE),
                         0);
        d->unrecorded = true;
        ck_assert_int_eq(virDomainSetTime(dom, OCCUPIED_12S, 0, 0), 0);
        manager_reconcile(m);
        ck_assert(d->unrecorded);
        before = recorded(dom);
        ck_assert_str_eq(before, "");
        ck_assert_int_eq(virDomainSetTime(dom, RELEASED, 0, 0), 0);
        manager_reconcile(m);
        ck_assert_ptr_eq(manager_lookup(m, "j-rec"), d);
        ck_assert(!d->unrecorded);
        after = recorded(dom);
        ck_assert_str_eq(after, "placed");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

static Suite *manager_held_suite(void)
{
        Suite *s = suite_create("manager held job");
        TCase *tc = tcase_create("test driver");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_start_waits_for_held_job);
        tcase_add_test(tc, test_brief_job_waited_for);
        tcase_add_test(tc, test_replace_waits_for_held_job);
        tcase_add_test(tc, test_reconcile_skips_held_job);
        tcase_add_test(tc, test_record_again_waits_for_held_job);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_held_suite)
