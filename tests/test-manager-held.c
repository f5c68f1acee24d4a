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
#include <dlfcn.h>
#include <glib/gstdio.h>
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <time.h>

#include "config.h"
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

/* libvirt holds a job on the domain of this UUID without reporting it (its control info says "ok"): a pin
 * fails as libvirt's does after waiting its 30 s for the job (the wait left out). NULL: none. */
static const char *unreported_uuid;
static const char *unreported_uuid2; /* a second such domain, NULL: none */
static unsigned unreported_pins;     /* pins tried on it: 30 s of the daemon's loop each */
static unsigned unreported_from;     /* the first vCPU whose pin meets the job: those before go through */
static virError unreported_error = {.code = VIR_ERR_OPERATION_TIMEOUT,
                                    .domain = VIR_FROM_QEMU,
                                    .level = VIR_ERR_ERROR,
                                    .message = (char *)"Timed out during operation: cannot acquire state "
                                                       "change lock"};
static bool unreported_error_pending; /* the last failure was such a pin: what virGetLastError() says */

int virDomainPinVcpuFlags(virDomainPtr dom, unsigned int vcpu, unsigned char *cpumap, int maplen,
                          unsigned int flags)
{
        static int (*real)(virDomainPtr, unsigned int, unsigned char *, int, unsigned int);
        char uuid[VIR_UUID_STRING_BUFLEN];

        if ((unreported_uuid || unreported_uuid2) && virDomainGetUUIDString(dom, uuid) == 0 &&
            (g_strcmp0(uuid, unreported_uuid) == 0 || g_strcmp0(uuid, unreported_uuid2) == 0) &&
            vcpu >= unreported_from) {
                unreported_pins++;
                virResetLastError();
                unreported_error_pending = true;
                return -1;
        }
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainPinVcpuFlags");
        return real(dom, vcpu, cpumap, maplen, flags);
}

/* metadata writes on the domain of this UUID fail with a plain error (NULL: none) */
static const char *unwritable_uuid;

int virDomainSetMetadata(virDomainPtr dom, int type, const char *metadata, const char *key, const char *uri,
                         unsigned int flags)
{
        static int (*real)(virDomainPtr, int, const char *, const char *, const char *, unsigned int);
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (unwritable_uuid && virDomainGetUUIDString(dom, uuid) == 0 && strcmp(uuid, unwritable_uuid) == 0)
                return -1;
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainSetMetadata");
        return real(dom, type, metadata, key, uri, flags);
}

/* libvirt's start of the domain of this UUID has not ended (paused, starting up), NULL: none */
static const char *starting_uuid;

int virDomainGetState(virDomainPtr dom, int *state, int *reason, unsigned int flags)
{
        static int (*real)(virDomainPtr, int *, int *, unsigned int);
        char uuid[VIR_UUID_STRING_BUFLEN];

        if (starting_uuid && virDomainGetUUIDString(dom, uuid) == 0 && strcmp(uuid, starting_uuid) == 0) {
                *state = VIR_DOMAIN_PAUSED;
                if (reason)
                        *reason = VIR_DOMAIN_PAUSED_STARTING_UP;
                return 0;
        }
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainGetState");
        return real(dom, state, reason, flags);
}

/* live I/O thread reads (each needs the domain's job) */
static unsigned iothread_reads;
/* a read on the domain of this UUID waits libvirt's 30 s for a job it does not report and fails (the wait
 * left out); NULL: none */
static const char *iothread_timeout_uuid;

int virDomainGetIOThreadInfo(virDomainPtr dom, virDomainIOThreadInfoPtr **info, unsigned int flags)
{
        static int (*real)(virDomainPtr, virDomainIOThreadInfoPtr **, unsigned int);
        char uuid[VIR_UUID_STRING_BUFLEN];

        iothread_reads++;
        if (iothread_timeout_uuid && virDomainGetUUIDString(dom, uuid) == 0 &&
            strcmp(uuid, iothread_timeout_uuid) == 0) {
                virResetLastError();
                unreported_error_pending = true;
                return -1;
        }
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainGetIOThreadInfo");
        return real(dom, info, flags);
}

/* libvirt's own error once it has one again, until then the pin's */
virErrorPtr virGetLastError(void)
{
        static virErrorPtr (*real)(void);
        virErrorPtr e;

        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virGetLastError");
        e = real();
        if (e)
                unreported_error_pending = false;
        return e || !unreported_error_pending ? e : &unreported_error;
}

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

/* Runs one turn of the loop (what it has due): a turn after one in which a call timed out. */
static void next_turn(void)
{
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
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

/* Starts name, of vcpus, under uuid. */
static virDomainPtr start_uuid(const char *name, const char *uuid, unsigned vcpus)
{
        g_autofree char *xml = g_strdup_printf(
            "<domain type='test'><name>%s</name><uuid>%s</uuid><memory unit='MiB'>512</memory>"
            "<vcpu>%u</vcpu><os><type>hvm</type></os></domain>",
            name, uuid, vcpus);
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);

        ck_assert_msg(dom != NULL, "cannot start %s", name);
        return dom;
}

/* Two domains on which libvirt holds jobs it does not report, started (with m, each once the daemon made it
 * wait); unreported_pins counts from 0. */
static void start_unreported_pair(Manager *m, const char *const uuids[2], const char *const names[2],
                                  virDomainPtr doms[2])
{
        unreported_uuid = uuids[0];
        unreported_uuid2 = uuids[1];
        unreported_pins = 0;
        for (unsigned i = 0; i < 2; i++) {
                doms[i] = start_uuid(names[i], uuids[i], 1);
                if (m)
                        ck_assert(spin_until(m, names[i], DECISION_FAILED, 3000));
        }
}

static void destroy_unreported_pair(virDomainPtr doms[2])
{
        unreported_uuid = unreported_uuid2 = NULL;
        for (unsigned i = 0; i < 2; i++) {
                virDomainDestroy(doms[i]);
                virDomainFree(doms[i]);
        }
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

/* name is placed, nothing of a held job left on its decision, its pins live and its record "placed". */
static const Decision *assert_placed_again(Manager *m, virDomainPtr dom, const char *name)
{
        const Decision *d = manager_lookup(m, name);
        g_autofree char *rec = NULL;

        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(!d->job_held);
        ck_assert_ptr_null(d->apply_error);
        fixture_assert_live_pins(dom, d->plan);
        rec = recorded(dom);
        ck_assert_str_eq(rec, "placed");
        return d;
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
        d = assert_placed_again(m, dom, "j-held");
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 2); /* a core each */
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

        ck_assert(spin_until(m, "j-brief", DECISION_PLACED, 3000));
        assert_placed_again(m, dom, "j-brief");
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

/* libvirt holds a job it does not report (one a libvirtd killed during a start leaves behind): the
 * control info says "ok" and every call that needs the job waits libvirt's 30 s, the daemon's loop with it.
 * After such a timeout the domain is not tried again for 30 s, then twice as long each time up to 10 min,
 * by nothing (the look for released jobs, a request, the reconcile); once a pin goes through it is placed,
 * and its timeouts forgotten. */
START_TEST(test_unreported_job_backs_off)
{
        static const char *const uuid = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
        static const unsigned waits[] = {30, 60, 120, 240, 480, 600, 600};
        Manager *m = new_manager();
        virDomainPtr dom;
        HeldBackoff *b;
        g_autofree char *error = NULL;
        const Decision *d;

        unreported_uuid = uuid;
        unreported_pins = 0;
        dom = start_uuid("j-unreported", uuid, 2);
        ck_assert(spin_until(m, "j-unreported", DECISION_FAILED, 3000));
        d = manager_lookup(m, "j-unreported");
        ck_assert(d->job_held);
        ck_assert_msg(d->apply_error && strstr(d->apply_error, "cannot acquire state change lock"), "%s",
                      d->apply_error);
        ck_assert_uint_eq(unreported_pins, 1); /* the first timeout stops the apply */
        next_turn();
        for (unsigned i = 0; i < G_N_ELEMENTS(waits); i++) {
                int64_t left;

                b = g_hash_table_lookup(m->job_timeouts, uuid);
                ck_assert_ptr_nonnull(b);
                ck_assert_uint_eq(b->timeouts, i + 1);
                left = b->next_usec - g_get_monotonic_time();
                ck_assert_msg(left > (int64_t)(waits[i] - 5) * G_USEC_PER_SEC &&
                                  left <= (int64_t)waits[i] * G_USEC_PER_SEC,
                              "timeout %u: next try in %lld us, want %u s", i + 1, (long long)left,
                              waits[i]);
                /* not due: nothing tries it */
                held_retry_now(m);
                g_clear_pointer(&error, g_free);
                ck_assert_int_eq(manager_replace(m, "j-unreported", &error), 0);
                manager_reconcile(m);
                ck_assert_uint_eq(unreported_pins, i + 1);
                d = manager_lookup(m, "j-unreported");
                ck_assert(d->job_held);
                ck_assert_msg(strstr(d->apply_error, "a job on the domain that it does not report"), "%s",
                              d->apply_error);
                /* due: the look tries it once more */
                b->next_usec = 0;
                held_retry_now(m);
                ck_assert_uint_eq(unreported_pins, i + 2);
                /* and the rest of that turn makes no call that needs a job, on any domain */
                b->next_usec = 0;
                g_clear_pointer(&error, g_free);
                ck_assert_int_eq(manager_replace(m, "j-unreported", &error), 0);
                ck_assert_uint_eq(unreported_pins, i + 2);
                d = manager_lookup(m, "j-unreported");
                ck_assert_msg(strstr(d->apply_error, "not risking a second wait in a row"), "%s",
                              d->apply_error);
                b = g_hash_table_lookup(m->job_timeouts, uuid);
                b->next_usec = g_get_monotonic_time() +
                               (int64_t)waits[MIN(i + 1, G_N_ELEMENTS(waits) - 1)] * G_USEC_PER_SEC;
                next_turn();
        }
        /* released: the next try places it and forgets the timeouts */
        unreported_uuid = NULL;
        b = g_hash_table_lookup(m->job_timeouts, uuid);
        b->next_usec = 0;
        held_retry_now(m);
        assert_placed_again(m, dom, "j-unreported");
        ck_assert(!g_hash_table_contains(m->job_timeouts, uuid));
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* The job was taken half-way through the apply: vCPU 0's pin went through, vCPU 1's timed out. Nothing
 * records the plan (the write needs the job), so the pin made is placementd's without a record; the try
 * once the job is free must place the domain, not take that pin for its owner's. */
START_TEST(test_half_applied_then_held_placed_again)
{
        static const char *const uuid = "6a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
        Manager *m = new_manager();
        virDomainPtr dom;
        HeldBackoff *b;
        const Decision *d;

        unreported_uuid = uuid;
        unreported_pins = 0;
        unreported_from = 1;
        dom = start_uuid("j-half", uuid, 2);
        ck_assert(spin_until(m, "j-half", DECISION_FAILED, 3000));
        d = manager_lookup(m, "j-half");
        ck_assert(d->job_held);
        ck_assert_uint_eq(unreported_pins, 1);
        next_turn();
        /* released: the next try places it */
        unreported_uuid = NULL;
        unreported_from = 0;
        b = g_hash_table_lookup(m->job_timeouts, uuid);
        ck_assert_ptr_nonnull(b);
        b->next_usec = 0;
        held_retry_now(m);
        assert_placed_again(m, dom, "j-half");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* The same apply cut off by a plain error (vCPU 1's pin refused): the decision is `failed`, its record
 * says so with the user's definition, and `replace` once the cause is gone places it. */
START_TEST(test_half_applied_then_failed_replaced)
{
        static const char *const uuid = "7b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e";
        Manager *m = new_manager();
        virDomainPtr dom;
        g_autofree char *error = NULL;

        unreported_error.code = VIR_ERR_INTERNAL_ERROR;
        unreported_error.message = (char *)"internal error: cannot pin";
        unreported_uuid = uuid;
        unreported_from = 1;
        dom = start_uuid("j-half-failed", uuid, 2);
        ck_assert(spin_until(m, "j-half-failed", DECISION_FAILED, 3000));
        ck_assert(!manager_lookup(m, "j-half-failed")->job_held);
        unreported_uuid = NULL;
        unreported_from = 0;
        unreported_error.code = VIR_ERR_OPERATION_TIMEOUT;
        unreported_error.message = (char *)"Timed out during operation: cannot acquire state change lock";
        ck_assert_int_eq(manager_replace(m, "j-half-failed", &error), 0);
        assert_placed_again(m, dom, "j-half-failed");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* Placed and pinned, but its record could not be written (the next reconcile writes it): a replace before
 * that reconcile must not take placementd's own pins in the live definition for the user's. */
START_TEST(test_unrecorded_then_replaced)
{
        static const char *const uuid = "8c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f";
        Manager *m = new_manager();
        virDomainPtr dom;
        g_autofree char *error = NULL;
        const Decision *d;

        unwritable_uuid = uuid;
        dom = start_uuid("j-unrecorded", uuid, 2);
        ck_assert(spin_until(m, "j-unrecorded", DECISION_PLACED, 3000));
        d = manager_lookup(m, "j-unrecorded");
        ck_assert(d->unrecorded);
        unwritable_uuid = NULL;
        ck_assert_int_eq(manager_replace(m, "j-unrecorded", &error), 0);
        assert_placed_again(m, dom, "j-unrecorded");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* The same, a vCPU hot-added before the reconcile that would write the record: that reconcile places the
 * resized domain with its new vCPU, not as pinned by its user. */
START_TEST(test_unrecorded_then_resized)
{
        static const char *const uuid = "9d5e6f7a-8b9c-4dae-8f1a-3b4c5d6e7f80";
        Manager *m = new_manager();
        virDomainPtr dom;
        const Decision *d;

        unwritable_uuid = uuid;
        dom =
            fixture_start_xml(conn, "j-unrecorded-plug",
                              "<uuid>9d5e6f7a-8b9c-4dae-8f1a-3b4c5d6e7f80</uuid><vcpu current='1'>2</vcpu>");
        ck_assert(spin_until(m, "j-unrecorded-plug", DECISION_PLACED, 3000));
        ck_assert(manager_lookup(m, "j-unrecorded-plug")->unrecorded);
        unwritable_uuid = NULL;
        ck_assert_int_eq(virDomainSetVcpusFlags(dom, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = assert_placed_again(m, dom, "j-unrecorded-plug");
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* The apply journal of these tests: a new directory per test, removed with what is in it. */
static char *journal_new(void)
{
        char *dir = g_dir_make_tmp("placementd-journal-XXXXXX", NULL);

        ck_assert_ptr_nonnull(dir);
        return dir;
}

static unsigned journal_entries(const char *dir)
{
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        unsigned n = 0;

        while (d && g_dir_read_name(d))
                n++;
        return n;
}

static void journal_remove(char *dir)
{
        test_remove_dir(dir);
        g_free(dir);
}

/* placementd started again on topology and config with the journal dir: name (dom) is placed anew, not
 * taken as pinned by someone else, and the journal is empty. Returns the new manager. */
static Manager *restart_places(const char *dir, const char *topology, const char *config, virDomainPtr dom,
                               const char *name, const Decision **ret)
{
        Manager *m = fixture_manager_new_journal(base, topology, config, dir);

        *ret = assert_placed_again(m, dom, name);
        ck_assert(!(*ret)->pinned_by_hand);
        ck_assert_uint_eq(journal_entries(dir), 0);
        return m;
}

/* name's apply met the job held from vCPU 1 on: placementd stops there (m freed), then the job is
 * released. */
static void stopped_while_held(Manager *m, const char *name)
{
        ck_assert(spin_until(m, name, DECISION_FAILED, 3000));
        ck_assert(manager_lookup(m, name)->job_held);
        manager_free(m);
        unreported_uuid = NULL;
        unreported_from = 0;
}

/* The end of a journal test: dom stopped, m freed, the journal removed. */
static void journal_test_end(Manager *m, virDomainPtr dom, char *dir)
{
        fixture_stop(dom);
        manager_free(m);
        journal_remove(dir);
}

/* placementd stopped after it pinned a domain and before the domain's record was written (here the write
 * fails, as a stop between the two leaves it): the next placementd finds pins no record names. They were
 * taken for someone else's and the domain left `skipped` for good; the journal says they are placementd's,
 * so it is placed, and the journal is empty once its record is written. */
START_TEST(test_restart_before_record_placed_again)
{
        static const char *const uuid = "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9";
        char *dir = journal_new();
        Manager *m = fixture_manager_new_journal(base, TOPOLOGY, NULL, dir);
        virDomainPtr dom;
        const Decision *d;

        unwritable_uuid = uuid;
        dom = start_uuid("j-restart", uuid, 2);
        ck_assert(spin_until(m, "j-restart", DECISION_PLACED, 3000));
        ck_assert(manager_lookup(m, "j-restart")->unrecorded);
        ck_assert_uint_eq(journal_entries(dir), 1);
        manager_free(m);
        unwritable_uuid = NULL;

        m = restart_places(dir, TOPOLOGY, NULL, dom, "j-restart", &d);
        ck_assert(!d->adopted);
        /* and a record written at once leaves no entry behind */
        manager_free(m);
        m = fixture_manager_new_journal(base, TOPOLOGY, NULL, dir);
        d = manager_lookup(m, "j-restart");
        ck_assert(d->adopted && !d->pinned_by_hand);
        ck_assert_uint_eq(journal_entries(dir), 0);
        journal_test_end(m, dom, dir);
}
END_TEST

/* The same for a persistent domain: its definition pins nothing, and the pins placementd made on the
 * running domain were taken for pins made by hand (virsh vcpupin --live) after the restart. */
START_TEST(test_restart_before_record_persistent_placed_again)
{
        static char uuid[VIR_UUID_STRING_BUFLEN];
        char *dir = journal_new();
        Manager *m = fixture_manager_new_journal(base, TOPOLOGY, NULL, dir);
        virDomainPtr dom;
        const Decision *d;

        unwritable_uuid = uuid; /* set before the start event is read, below */
        dom = fixture_define_and_start(conn, "j-restart-cfg", 2);
        ck_assert_int_eq(virDomainGetUUIDString(dom, uuid), 0);
        ck_assert(spin_until(m, "j-restart-cfg", DECISION_PLACED, 3000));
        ck_assert(manager_lookup(m, "j-restart-cfg")->unrecorded);
        manager_free(m);
        unwritable_uuid = NULL;

        m = restart_places(dir, TOPOLOGY, NULL, dom, "j-restart-cfg", &d);
        virDomainDestroy(dom);
        virDomainUndefine(dom);
        virDomainFree(dom);
        manager_free(m);
        journal_remove(dir);
}
END_TEST

/* The same with the apply cut off half-way (vCPU 1's pin met a held job): vCPU 0 runs on placementd's pin,
 * vCPU 1 anywhere, no record. */
START_TEST(test_restart_half_applied_placed_again)
{
        static const char *const uuid = "2a3b4c5d-6e7f-4a8b-9cad-beef01234567";
        char *dir = journal_new();
        Manager *m = fixture_manager_new_journal(base, TOPOLOGY, NULL, dir);
        virDomainPtr dom;
        const Decision *d;

        unreported_uuid = uuid;
        unreported_from = 1;
        dom = start_uuid("j-restart-half", uuid, 2);
        stopped_while_held(m, "j-restart-half");

        m = restart_places(dir, TOPOLOGY, NULL, dom, "j-restart-half", &d);
        journal_test_end(m, dom, dir);
}
END_TEST

/* A re-placement cut off half-way by the stop (a reload reserved the CPUs of its cores; vCPU 0 moved, vCPU
 * 1's pin met a held job): its record still names the old plan, one vCPU runs on each. Those pins are
 * placementd's too: the domain is placed, not adopted as pinned by hand. */
START_TEST(test_restart_half_moved_placed_again)
{
        static const char *const uuid = "3b4c5d6e-7f80-4a9b-8cad-0123456789ab";
        static const char *const topology = "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:4 pu:2";
        char *dir = journal_new();
        Manager *m = fixture_manager_new_journal(base, topology, NULL, dir);
        virDomainPtr dom;
        const Decision *d;
        g_autofree char *rec = NULL;

        dom = start_uuid("j-restart-move", uuid, 2);
        ck_assert(spin_until(m, "j-restart-move", DECISION_PLACED, 3000));
        d = manager_lookup(m, "j-restart-move");
        ck_assert_int_eq(cpuset_next(d->plan->vcpu_pins[0], 0), 0); /* cores 0 and 1 */
        ck_assert_int_eq(cpuset_next(d->plan->vcpu_pins[1], 0), 2);
        unreported_uuid = uuid;
        unreported_from = 1;
        fixture_reload(m, "[Placement]\nReservedCPUs=0-3\n");
        stopped_while_held(m, "j-restart-move");
        rec = recorded(dom);
        ck_assert_str_eq(rec, "placed"); /* the old plan's */

        m = restart_places(dir, topology, "[Placement]\nReservedCPUs=0-3\n", dom, "j-restart-move", &d);
        ck_assert_int_ge(cpuset_next(d->plan->vcpu_pins[0], 0), 4);
        ck_assert_int_ge(cpuset_next(d->plan->vcpu_pins[1], 0), 4);
        journal_test_end(m, dom, dir);
}
END_TEST

/* A reload to another libvirt URI: the old URI's entries stay (a daemon on that URI needs them), and the
 * new URI's journal is the one open from then on. */
START_TEST(test_uri_change_keeps_old_journal)
{
        static const char *const uuid = "6e7f8091-a2b3-4ccd-9def-3456789abcde";
        char *dir = journal_new(), *next = journal_new();
        Manager *m = fixture_manager_new_journal(base, TOPOLOGY, NULL, dir);
        virDomainPtr dom;

        unwritable_uuid = uuid;
        dom = start_uuid("j-uri", uuid, 1);
        ck_assert(spin_until(m, "j-uri", DECISION_PLACED, 3000));
        unwritable_uuid = NULL;
        ck_assert_uint_eq(journal_entries(dir), 1);
        manager_set_next_journal(m, next);
        g_clear_pointer(&m->uri_override, g_free); /* as the configuration's URI, not --connect's */
        fixture_reload(m, "[Libvirt]\nURI=test:///no-such-host.xml\n");
        ck_assert_ptr_null(manager_lookup(m, "j-uri"));
        ck_assert_uint_eq(journal_entries(dir), 1);
        ck_assert_str_eq(m->journal_dir, next);
        journal_test_end(m, dom, dir);
        journal_remove(next);
}
END_TEST

/* Entries the journal must not be believed on: one of another run of the domain (its ID then) whose pins
 * the domain's user made now, and one that is not an entry at all (said, removed). Both domains are taken
 * as pinned by someone else, as without a journal. */
START_TEST(test_journal_other_run_or_bad_entry_not_believed)
{
        static const char *const uuid1 = "4c5d6e7f-8091-4aab-9cbd-123456789abc";
        static const char *const uuid2 = "5d6e7f80-91a2-4bbc-8dce-23456789abcd";
        char *dir = journal_new();
        g_autofree char *path1 = g_build_filename(dir, uuid1, NULL);
        g_autofree char *path2 = g_build_filename(dir, uuid2, NULL);
        g_autofree char *text1 = NULL;
        virDomainPtr dom1 = start_uuid("j-other-run", uuid1, 1);
        virDomainPtr dom2 = start_uuid("j-bad-entry", uuid2, 1);
        Manager *m;

        fixture_pin(dom1, 0, 2);
        fixture_pin(dom2, 0, 3);
        text1 =
            g_strdup_printf("domain-id %d\nvcpus 1\nvcpu 0 0 2\nkeep-memory 0\n", virDomainGetID(dom1) + 1);
        ck_assert(g_file_set_contents(path1, text1, -1, NULL));
        ck_assert(
            g_file_set_contents(path2, "domain-id 1\nvcpus 1\nvcpu 0 0 3\nsomething else\n", -1, NULL));
        m = fixture_manager_new_journal(base, TOPOLOGY, NULL, dir);
        ck_assert(manager_lookup(m, "j-other-run")->pinned_by_hand);
        ck_assert(manager_lookup(m, "j-bad-entry")->pinned_by_hand);
        ck_assert_uint_eq(journal_entries(dir), 0);
        fixture_stop(dom1);
        fixture_stop(dom2);
        manager_free(m);
        journal_remove(dir);
}
END_TEST

/* The pins of a re-placement went through, then the read of the I/O threads its plan no longer pins (to
 * undo the pin placementd made) met a job libvirt does not report: the I/O thread still runs on the old
 * pin, which the ledger no longer counts, so the placement waits for the job like any pin that met it
 * and undoes the pin once it goes through. It was taken as done: `placed`, the pin left for good. */
START_TEST(test_undo_iothreads_waits_for_job)
{
        static const char *const uuid = "5e2d3c4b-6a7f-4e8d-9c0b-1a2b3c4d5e6f";
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:1(memory=16GiB) core:2 pu:1", NULL);
        virDomainPtr dom = start_uuid("j-undo", uuid, 1);
        unsigned char anywhere = 0xff;
        g_autoptr(Config) config = config_new_default();
        g_autoptr(CpuSet) old_pin = NULL, live = NULL;
        g_autofree char *error = NULL;
        g_autofree unsigned *ids = NULL;
        CpuSet **pins = NULL;
        unsigned n = 0;
        const Decision *d;
        HeldBackoff *b;

        ck_assert(spin_until(m, "j-undo", DECISION_PLACED, 3000));
        ck_assert_int_eq(virDomainAddIOThread(dom, 5, VIR_DOMAIN_AFFECT_LIVE), 0);
        ck_assert_int_eq(virDomainPinIOThread(dom, 5, &anywhere, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m); /* the emulator's pin is the I/O thread's rule without SMT */
        d = manager_lookup(m, "j-undo");
        ck_assert(cpuset_has(d->plan->iothreads, 5));
        old_pin = cpuset_copy(d->plan->iothread_pin);
        ck_assert(!cpuset_is_empty(old_pin));
        /* EmulatorPin=none: the plan pins no I/O thread, and the one placementd pinned is undone */
        config->placement.emulator_pin = EMULATOR_PIN_NONE;
        manager_set_config(m, g_steal_pointer(&config));
        next_turn();
        iothread_timeout_uuid = uuid;
        ck_assert_int_eq(manager_replace(m, "j-undo", &error), 0);
        d = manager_lookup(m, "j-undo");
        ck_assert_msg(d->result == DECISION_FAILED && d->job_held, "%s: %s",
                      decision_result_to_string(d->result), d->reason);
        ck_assert_msg(d->apply_error && strstr(d->apply_error, "reading the I/O threads"), "%s",
                      d->apply_error ? d->apply_error : "(none)");
        /* the job goes: the look undoes the pin */
        iothread_timeout_uuid = NULL;
        next_turn();
        b = g_hash_table_lookup(m->job_timeouts, uuid);
        ck_assert_ptr_nonnull(b);
        b->next_usec = 0;
        held_retry_now(m);
        d = assert_placed_again(m, dom, "j-undo");
        ck_assert(cpuset_is_empty(d->plan->iothreads));
        ck_assert_int_eq(virt_domain_get_iothreads(dom, &ids, &pins, &n, NULL), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_msg(!cpuset_equal(pins[0], old_pin), "I/O thread 5 still on placementd's old pin");
        virt_pins_free(pins, n);
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* A call that needs the job goes through once more (here the reconcile's read of the live I/O threads):
 * the job is free, and the timeouts of before are forgotten. Kept, the next unreported job the domain met
 * would wait 60 s or more instead of 30, and a placement meanwhile be refused. */
START_TEST(test_read_through_forgets_timeouts)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("j-through", 2, 0);
        char uuid[VIR_UUID_STRING_BUFLEN];
        HeldBackoff *b;

        ck_assert(spin_until(m, "j-through", DECISION_PLACED, 3000));
        virt_domain_uuid(dom, uuid);
        held_note_timeout(m, uuid, "j-through");
        held_note_timeout(m, uuid, "j-through");
        next_turn();
        b = g_hash_table_lookup(m->job_timeouts, uuid);
        ck_assert_ptr_nonnull(b);
        b->next_usec = 0; /* due: the next look may try it */
        iothread_reads = 0;
        manager_reconcile(m);
        ck_assert_uint_ge(iothread_reads, 1); /* the read that needs the job went through */
        ck_assert_int_eq(manager_lookup(m, "j-through")->result, DECISION_PLACED);
        ck_assert_msg(!g_hash_table_contains(m->job_timeouts, uuid),
                      "a call went through, but the domain's timeouts are still kept");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* Two domains (a burst of starts a killed libvirtd cut leaves several) whose next tries are due together:
 * each try holds the loop 30 s, so one look tries one of them and leaves the other to the next look, 5 s
 * on. Both tried in one look would hold the loop 60 s, each time again (the second is due as the first's
 * try ends), and systemd's watchdog (WatchdogSec=60s) kills the daemon. */
START_TEST(test_unreported_jobs_one_per_look)
{
        static const char *const uuids[] = {"5a1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
                                            "6b1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"};
        static const char *const names[] = {"j-ghost-a", "j-ghost-b"};
        Manager *m = new_manager();
        virDomainPtr doms[2];

        start_unreported_pair(m, uuids, names, doms);
        ck_assert_uint_eq(unreported_pins, 2);
        for (unsigned i = 0; i < 2; i++)
                ((HeldBackoff *)g_hash_table_lookup(m->job_timeouts, uuids[i]))->next_usec = 0;
        next_turn();
        held_retry_now(m);
        ck_assert_msg(unreported_pins == 3, "one look made %u tries that wait 30 s each",
                      unreported_pins - 2);
        ck_assert(evtimer_pending(m->held_ev, NULL)); /* the other is tried at the next look */
        next_turn();
        held_retry_now(m);
        ck_assert_uint_eq(unreported_pins, 4);
        destroy_unreported_pair(doms);
        manager_free(m);
}
END_TEST

/* Two such domains running when the daemon starts: its first reconcile tries each, 30 s apiece, in one turn
 * of the loop; two hold it 60 s, the unit's WatchdogSec=60s, and systemd kills it, every start again. One
 * try that timed out is all a turn may hold. */
START_TEST(test_unreported_jobs_at_start_one_per_turn)
{
        static const char *const uuids[] = {"7c1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
                                            "8d1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"};
        static const char *const names[] = {"j-ghost-c", "j-ghost-d"};
        virDomainPtr doms[2];
        Manager *m;

        start_unreported_pair(NULL, uuids, names, doms);
        m = new_manager(); /* connects and reconciles at once */
        ck_assert_msg(unreported_pins <= 1, "the first reconcile made %u tries that wait 30 s each",
                      unreported_pins);
        destroy_unreported_pair(doms);
        manager_free(m);
}
END_TEST

/* A start libvirt has not ended (paused, "starting up"): the domain does not run yet. A reconcile that
 * meets it in the middle of its start leaves it to its start event (decided then, it was `failed` until a
 * look 5 s on, its start event taken as seen); nothing that needs its job is tried (each call would wait
 * for it). */
START_TEST(test_start_not_ended_left_to_its_event)
{
        static const char *const uuid = "9e1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
        Manager *m = new_manager();
        virDomainPtr dom;

        starting_uuid = unreported_uuid = uuid; /* a pin would wait for the start's job */
        unreported_pins = 0;
        dom = start_uuid("j-starting", uuid, 2);
        manager_reconcile(m); /* before its start event is delivered */
        ck_assert_ptr_null(manager_lookup(m, "j-starting"));
        ck_assert_uint_eq(unreported_pins, 0);
        /* its start ends; then the event comes */
        starting_uuid = unreported_uuid = NULL;
        ck_assert(spin_until(m, "j-starting", DECISION_PLACED, 3000));
        assert_placed_again(m, dom, "j-starting");
        virDomainDestroy(dom);
        virDomainFree(dom);
        manager_free(m);
}
END_TEST

/* libvirtd killed while placementd wrote the record of a domain it had just pinned, before libvirt saved
 * that the domain's start had ended: libvirtd comes back with the domain paused, "starting up", and ends the
 * start after the reconcile (RESUMED, then STARTED). The reconcile forgets it (it does not run yet); its
 * start event then finds placementd's own pins in the live XML, with no record to say so. They were taken
 * for the user's <vcpupin> and the domain skipped for good; they are placementd's, so it is placed again. */
START_TEST(test_start_ended_after_reconnect_placed_again)
{
        static const char *const uuid = "be2d3e4f-6a7b-4c8d-9e0f-1a2b3c4d5e6f";
        Manager *m = new_manager();
        virDomainPtr dom;
        const Decision *d;

        unwritable_uuid = uuid;
        dom = start_uuid("j-start-ended", uuid, 2);
        ck_assert(spin_until(m, "j-start-ended", DECISION_PLACED, 3000));
        ck_assert(manager_lookup(m, "j-start-ended")->unrecorded);
        unwritable_uuid = NULL;
        starting_uuid = uuid;
        manager_reconcile(m);
        ck_assert_ptr_null(manager_lookup(m, "j-start-ended"));
        starting_uuid = NULL;
        manager_lifecycle(m, dom, VIR_DOMAIN_EVENT_RESUMED, VIR_DOMAIN_EVENT_RESUMED_UNPAUSED);
        manager_lifecycle(m, dom, VIR_DOMAIN_EVENT_STARTED, VIR_DOMAIN_EVENT_STARTED_BOOTED);
        d = assert_placed_again(m, dom, "j-start-ended");
        ck_assert(!d->pinned_by_hand);
        fixture_stop(dom);
        manager_free(m);
}
END_TEST

/* A placed domain libvirt then keeps as a start that never ended (libvirt 9.0, after a libvirtd stopped
 * during QEMU's handshake of a later start: paused "starting up", no QEMU, its control info "ok"): it does
 * not run; the reconcile forgets it without a call that needs its job, and a request finds nothing. */
START_TEST(test_start_never_ended_forgotten)
{
        static const char *const uuid = "ae1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
        Manager *m = new_manager();
        g_autofree char *error = NULL;
        virDomainPtr dom = start_uuid("j-ghost", uuid, 1);

        ck_assert(spin_until(m, "j-ghost", DECISION_PLACED, 3000));
        starting_uuid = unreported_uuid = uuid;
        unreported_pins = 0;
        manager_reconcile(m);
        ck_assert_ptr_null(manager_lookup(m, "j-ghost"));
        ck_assert_int_lt(manager_replace(m, "j-ghost", &error), 0);
        held_retry_now(m);
        ck_assert_uint_eq(unreported_pins, 0);
        starting_uuid = unreported_uuid = NULL;
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
        tcase_add_test(tc, test_unreported_job_backs_off);
        tcase_add_test(tc, test_half_applied_then_held_placed_again);
        tcase_add_test(tc, test_half_applied_then_failed_replaced);
        tcase_add_test(tc, test_unrecorded_then_replaced);
        tcase_add_test(tc, test_unrecorded_then_resized);
        tcase_add_test(tc, test_read_through_forgets_timeouts);
        tcase_add_test(tc, test_unreported_jobs_one_per_look);
        tcase_add_test(tc, test_unreported_jobs_at_start_one_per_turn);
        tcase_add_test(tc, test_start_not_ended_left_to_its_event);
        tcase_add_test(tc, test_start_never_ended_forgotten);
        tcase_add_test(tc, test_start_ended_after_reconnect_placed_again);
        tcase_add_test(tc, test_undo_iothreads_waits_for_job);
        tcase_add_test(tc, test_restart_before_record_placed_again);
        tcase_add_test(tc, test_restart_before_record_persistent_placed_again);
        tcase_add_test(tc, test_restart_half_applied_placed_again);
        tcase_add_test(tc, test_restart_half_moved_placed_again);
        tcase_add_test(tc, test_journal_other_run_or_bad_entry_not_believed);
        tcase_add_test(tc, test_uri_change_keeps_old_journal);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_held_suite)
