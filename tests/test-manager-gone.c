/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A guest whose QEMU dies while placementd pins it (killed with SIGKILL, crashed): the pin of a thread
 * that is already gone fails ("cannot set CPU affinity on process N: No such process") while libvirt,
 * which has not yet seen QEMU's monitor close, still calls the domain active; a moment later libvirt
 * knows it is gone. That is the domain going away, not a placement that failed: no `failed` decision is
 * counted (placementd_decisions_total{result="failed"} raises an alert), the domain is forgotten as one
 * gone while being pinned.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>

#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"

#define TOPOLOGY "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:2"

static struct event_base *base;
static virConnectPtr conn;

/* The domain of this UUID dies at its emulator pin: the pin fails as a thread gone does, and the domain is
 * destroyed at the next libvirt call on it that reads its pins. NULL: none. */
static const char *dying_uuid;
static bool dying;         /* its emulator pin failed: the next pin read finds it gone */
static bool error_pending; /* the last failure was that pin: what virGetLastError() says */
static virError gone_thread = {.code = VIR_ERR_SYSTEM_ERROR,
                               .domain = VIR_FROM_QEMU,
                               .level = VIR_ERR_ERROR,
                               .int1 = ESRCH,
                               .message =
                                   (char *)"cannot set CPU affinity on process 4242: No such process"};

static bool is_dying(virDomainPtr dom)
{
        char uuid[VIR_UUID_STRING_BUFLEN];

        return dying_uuid && virDomainGetUUIDString(dom, uuid) == 0 && strcmp(uuid, dying_uuid) == 0;
}

int virDomainPinEmulator(virDomainPtr dom, unsigned char *cpumap, int maplen, unsigned int flags)
{
        static int (*real)(virDomainPtr, unsigned char *, int, unsigned int);

        if (is_dying(dom)) {
                virResetLastError();
                error_pending = true;
                dying = true;
                return -1;
        }
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainPinEmulator");
        return real(dom, cpumap, maplen, flags);
}

int virDomainGetVcpuPinInfo(virDomainPtr dom, int ncpumaps, unsigned char *cpumaps, int maplen,
                            unsigned int flags)
{
        static int (*real)(virDomainPtr, int, unsigned char *, int, unsigned int);

        if (dying && is_dying(dom)) {
                dying = false;
                virDomainDestroy(dom); /* libvirt has seen the monitor close */
        }
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainGetVcpuPinInfo");
        return real(dom, ncpumaps, cpumaps, maplen, flags);
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
                error_pending = false;
        return e || !error_pending ? e : &gone_thread;
}

static void setup(void)
{
        fixture_open(&base, &conn, true);
}

static void teardown(void)
{
        dying_uuid = NULL;
        dying = error_pending = false;
        fixture_close(base, conn);
}

static uint64_t failed_decisions(Manager *m)
{
        uint64_t n = 0;

        for (int k = 0; k < _POLICY_MAX; k++)
                n += manager_stats(m)->decisions[k][DECISION_FAILED];
        return n;
}

START_TEST(test_killed_while_pinned_not_failed)
{
        static const char *const uuid = "9d5e6f7a-8b9c-4d0e-8f1a-3b4c5d6e7f80";
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        g_autofree char *xml = g_strdup_printf(
            "<domain type='test'><name>g-killed</name><uuid>%s</uuid><memory unit='MiB'>512</memory>"
            "<vcpu>2</vcpu><os><type>hvm</type></os></domain>",
            uuid);
        virDomainPtr dom;

        dying_uuid = uuid;
        dom = virDomainCreateXML(conn, xml, 0);
        ck_assert(dom != NULL);
        fixture_spin_known(base, m, NULL, 300);
        ck_assert_msg(!dying, "the emulator pin was not tried");
        ck_assert(virDomainIsActive(dom) != 1);
        ck_assert_ptr_null(manager_lookup(m, "g-killed"));
        ck_assert_uint_eq(failed_decisions(m), 0);

        /* the cores it had are free: a domain after it takes them as free */
        dying_uuid = NULL;
        virDomainFree(dom);
        dom = fixture_start_xml(conn, "g-next", "<vcpu>2</vcpu>");
        ck_assert(fixture_spin_known(base, m, "g-next", 3000));
        ck_assert_int_eq(manager_lookup(m, "g-next")->result, DECISION_PLACED);
        fixture_stop(dom);
        fixture_manager_free(base, m);
}
END_TEST

static Suite *manager_gone_suite(void)
{
        Suite *s = suite_create("manager gone");
        TCase *tc = tcase_create("gone");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_killed_while_pinned_not_failed);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_gone_suite)
