/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A virtio-mem device, in-process against libvirt's test driver: libvirt's <memory> (virDomainGetMaxMemory)
 * adds up its whole size, the decision counts what its guest has plugged (or is asked to), and the
 * difference is not taken for a resize at every reconcile. The driver has no virDomainUpdateDeviceFlags,
 * so a new requested size (and the size-change event it brings) cannot be played here.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>

#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"

/* 8 PUs, 2 nodes of 2 cores x 2 threads and 16 GiB each */
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

/* A guest of 1 GiB with a 24 GiB device of which requested_gib is plugged: the decision counts 1 GiB plus
 * what is plugged, on its node; three reconciles leave it as it was decided. */
static void check_counted(const char *name, unsigned requested_gib)
{
        g_autofree char *xml = g_strdup_printf(
            "<domain type='test'><name>%s</name><maxMemory slots='4' unit='GiB'>64</maxMemory>"
            "<memory unit='GiB'>25</memory><vcpu>1</vcpu><os><type>hvm</type></os><cpu><numa>"
            "<cell id='0' cpus='0' memory='1' unit='GiB'/></numa></cpu><devices>"
            "<memory model='virtio-mem'><target><size unit='GiB'>24</size><node>0</node>"
            "<block unit='KiB'>2048</block><requested unit='GiB'>%u</requested></target></memory>"
            "</devices></domain>",
            name, requested_gib);
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);
        uint64_t want = (uint64_t)(1 + requested_gib) << 30, counted = 0;
        const Decision *d;
        int64_t decided;

        ck_assert_msg(dom != NULL, "cannot start %s", name);
        ck_assert(fixture_spin_known(base, m, name, 3000));
        d = manager_lookup(m, name);
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_uint_eq((uint64_t)virDomainGetMaxMemory(dom) << 10, 25ull << 30);
        ck_assert_uint_eq(d->plan->memory, want);
        for (unsigned n = 0; n < d->plan->nnode_memory; n++)
                counted += d->plan->node_memory[n];
        ck_assert_uint_eq(counted, want);
        decided = d->decided_usec;
        for (unsigned i = 0; i < 3; i++)
                manager_reconcile(m);
        d = manager_lookup(m, name);
        ck_assert_msg(d->decided_usec == decided && !d->adopted, "placed again: %s", d->reason);
        fixture_stop(dom);
        fixture_manager_free(base, m);
}

/* Nothing plugged (KubeVirt's memory hot-plug shape): the guest holds its boot memory only, not the
 * 25 GiB libvirt's <memory> says (more than a node of 16 GiB has). */
START_TEST(test_unplugged_counts_boot_memory)
{
        check_counted("vm-unplugged", 0);
}
END_TEST

/* Part of it plugged: boot memory and the plugged part, on one node. */
START_TEST(test_partly_plugged)
{
        check_counted("vm-partly", 4);
}
END_TEST

static Suite *virtio_mem_suite(void)
{
        Suite *s = suite_create("manager virtio-mem");
        TCase *tc = tcase_create("test driver");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_unplugged_counts_boot_memory);
        tcase_add_test(tc, test_partly_plugged);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(virtio_mem_suite)
