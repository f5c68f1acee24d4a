/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reconcile against what runs, in-process against libvirt's test driver: a pass that runs before a
 * stopped domain's event (or after libvirt was away) frees what the gone domain held before anything is
 * checked or placed; a domain whose live XML placementd cannot read stays counted as decided; after a
 * URI change, what runs there is found as at a start.
 */
#include <dlfcn.h>
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <glib/gstdio.h>

#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "topology-load.h"
#include "virt-domain.h"

/* The domain whose XML placementd cannot read (NULL: none): libvirt gives it with an attribute twice on
 * <domain>, which no XML reader takes, as a definition past what the parser reads would be. */
static const char *unreadable;

char *virDomainGetXMLDesc(virDomainPtr dom, unsigned int flags)
{
        static char *(*real)(virDomainPtr, unsigned int);
        char *xml, *broken;

        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainGetXMLDesc");
        xml = real(dom, flags);
        if (!xml || !unreadable || strcmp(virDomainGetName(dom), unreadable) != 0 ||
            !g_str_has_prefix(xml, "<domain "))
                return xml;
        broken = g_strconcat("<domain a='1' a='2' ", xml + strlen("<domain "), NULL);
        free(xml);
        xml = strdup(broken); /* libvirt's callers free() it */
        g_free(broken);
        return xml;
}

/* 8 PUs, 2 nodes of 2 cores x 2 threads: the test driver accepts pins on CPUs 0-7 only. */
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

static bool spin_known(Manager *m, const char *name, unsigned ms)
{
        return fixture_spin_known(base, m, name, ms);
}

static void free_manager(Manager *m)
{
        fixture_manager_free(base, m);
}

static virDomainPtr start_xml(const char *name, const char *vcpu)
{
        return fixture_start_xml(conn, name, vcpu);
}

static void stop(virDomainPtr dom)
{
        fixture_stop(dom);
}

static void pin(virDomainPtr dom, unsigned vcpu, unsigned cpu)
{
        fixture_pin(dom, vcpu, cpu);
}

/* Cores the ledger counts a vCPU on. */
static unsigned counted_cores(Manager *m)
{
        unsigned n = 0;

        for (unsigned c = 0; c < 4; c++)
                n += ledger_core_load(manager_ledger(m), c) > 0;
        return n;
}

/* Saved, then the host filled by another domain, which stops while the first is restored, both before
 * the reconcile sees any event: the restored domain's record is adopted on the empty host. */
START_TEST(test_restored_record_beside_gone_domain)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-reconcile-XXXXXX", NULL);
        virDomainPtr a = start_xml("r-a", "<vcpu>2</vcpu>"), b;
        const Decision *d;
        int fd = g_mkstemp(image);

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(spin_known(m, "r-a", 3000));
        ck_assert_int_eq(virDomainSave(a, image), 0);
        virDomainFree(a);
        spin_known(NULL, NULL, 50);
        b = start_xml("r-b", "<vcpu>4</vcpu>"); /* every core */
        ck_assert(spin_known(m, "r-b", 3000));
        ck_assert_int_eq(manager_lookup(m, "r-b")->result, DECISION_PLACED);
        ck_assert_int_eq(virDomainDestroy(b), 0);
        virDomainFree(b);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        manager_reconcile(m); /* before the events */
        d = manager_lookup(m, "r-a");
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_null(manager_lookup(m, "r-b"));
        ck_assert_msg(d->result == DECISION_PLACED && d->adopted,
                      "the restored record on an empty host: %s (%s)", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_uint_eq(counted_cores(m), 2);
        g_unlink(image);
        stop(virDomainLookupByName(conn, "r-a"));
        free_manager(m);
}
END_TEST

/*
 * Restored from a save image whose XML carries placementd's emulator pin: QEMU's threads start there, and
 * the kernel keeps them within it when the emulator pin later takes in more CPUs (a vCPU hot-added). The
 * new emulator pin stays within those CPUs, as libvirt and the record say, and the plan says why. With
 * restarted, placementd is not running while the domain is saved and restored: it finds the domain at its
 * start.
 */
typedef enum RestoreCase {
        RESTORED_WHILE_RUNNING, /* placementd runs throughout */
        RESTORED_WHILE_DOWN,    /* placementd stopped before the save, started after the restore */
        RESTORED_THEN_RESTART,  /* restored while it runs, placed again (its record of this run written
                                 * anew), then placementd restarted */
} RestoreCase;

static void restored_emulator_pin(RestoreCase how)
{
        bool restarted = how == RESTORED_WHILE_DOWN;
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-reconcile-XXXXXX", NULL);
        virDomainPtr a = start_xml("r-save", "<vcpu current='1'>2</vcpu>");
        g_autoptr(CpuSet) started = NULL;
        g_autoptr(CpuSet) live = NULL;
        g_autoptr(CpuSet) outside = NULL;
        g_autofree char *was = NULL, *now = NULL;
        const Decision *d;
        int fd = g_mkstemp(image);

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(spin_known(m, "r-save", 3000));
        d = manager_lookup(m, "r-save");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        started = cpuset_copy(d->plan->emulator_pin); /* the sibling of vCPU 0's core */
        if (restarted)
                free_manager(m);
        ck_assert_int_eq(virDomainSave(a, image), 0);
        virDomainFree(a);
        spin_known(NULL, NULL, 50);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        if (restarted) {
                m = fixture_manager_new(base, TOPOLOGY, NULL);
                ck_assert(spin_known(m, "r-save", 3000));
                ck_assert_msg(manager_lookup(m, "r-save")->adopted, "%s",
                              manager_lookup(m, "r-save")->reason);
        } else {
                spin_known(NULL, NULL, 200); /* its start event */
        }
        a = virDomainLookupByName(conn, "r-save");
        ck_assert_ptr_nonnull(a);
        if (how == RESTORED_THEN_RESTART) {
                g_autofree char *error = NULL;
                ck_assert_msg(manager_replace(m, "r-save", &error) == 0, "%s", error);
                free_manager(m);
                m = fixture_manager_new(base, TOPOLOGY, NULL);
                ck_assert(spin_known(m, "r-save", 3000));
        }
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-save");
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        was = cpuset_format(started);
        now = cpuset_format(d->plan->emulator_pin);
        ck_assert_msg(!cpuset_is_empty(d->plan->emulator_pin), "no emulator pin after the hot-add");
        outside = cpuset_copy(d->plan->emulator_pin);
        cpuset_subtract(outside, started);
        ck_assert_msg(cpuset_is_empty(outside) || !cpuset_intersects(d->plan->emulator_pin, started),
                      "emulator pin %s takes in CPUs outside %s while keeping some of them (%s)", now, was,
                      d->reason);
        ck_assert_msg(strstr(d->reason, "within the CPUs its QEMU threads started on"), "%s", d->reason);
        live = virt_domain_emulator_pin(a);
        ck_assert_ptr_nonnull(live);
        ck_assert(cpuset_equal(live, d->plan->emulator_pin));
        g_unlink(image);
        stop(a);
        free_manager(m);
}

/* Started unpinned (libvirt's default: every CPU), placed, then placementd restarted: its record is this
 * run's, so QEMU's threads are free to follow any emulator pin, and the hot-add pins the emulator as it
 * does without the restart (both siblings), not narrowed to the pin placementd's last run made. */
START_TEST(test_restart_does_not_narrow_unpinned_start)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = start_xml("r-fresh", "<vcpu current='1'>2</vcpu>");
        const Decision *d;

        ck_assert(spin_known(m, "r-fresh", 3000));
        /* the node's free core, its host-side load counted busy until measured (LOAD_HOST_UNMEASURED) */
        ck_assert_uint_eq(cpuset_count(manager_lookup(m, "r-fresh")->plan->emulator_pin), 2);
        free_manager(m);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-fresh", 3000));
        ck_assert(manager_lookup(m, "r-fresh")->adopted);
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-fresh");
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        ck_assert_msg(cpuset_count(d->plan->emulator_pin) == 2 &&
                          !strstr(d->reason, "within the CPUs its QEMU threads started on"),
                      "%s", d->reason);
        stop(a);
        free_manager(m);
}
END_TEST

START_TEST(test_restored_emulator_pin_stays_within_start)
{
        restored_emulator_pin(RESTORED_WHILE_RUNNING);
}
END_TEST

START_TEST(test_restored_while_down_emulator_pin_stays_within_start)
{
        restored_emulator_pin(RESTORED_WHILE_DOWN);
}
END_TEST

/* What its threads started on is written in its record: a restart of placementd finds it there. */
START_TEST(test_restored_then_restart_keeps_start)
{
        restored_emulator_pin(RESTORED_THEN_RESTART);
}
END_TEST

/* A restored domain (its threads= recorded) whose emulator someone pinned while placementd was down: the
 * record the restart writes again (for the hand pin) still carries what its threads started on, or the
 * next restart takes the record for one without it and forgets the pin QEMU's threads keep. */
START_TEST(test_hand_emulator_rerecord_keeps_threads)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-reconcile-XXXXXX", NULL);
        virDomainPtr a = start_xml("r-hand-threads", "<vcpu current='1'>2</vcpu>");
        g_autofree char *before = NULL, *after = NULL;
        int fd = g_mkstemp(image);

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(spin_known(m, "r-hand-threads", 3000));
        ck_assert_int_eq(virDomainSave(a, image), 0);
        virDomainFree(a);
        spin_known(NULL, NULL, 50);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        spin_known(NULL, NULL, 200); /* its start event */
        a = virDomainLookupByName(conn, "r-hand-threads");
        ck_assert_ptr_nonnull(a);
        {
                g_autofree char *error = NULL; /* placed again: a record of this run */
                ck_assert_msg(manager_replace(m, "r-hand-threads", &error) == 0, "%s", error);
        }
        before =
            virDomainGetMetadata(a, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(before && strstr(before, " threads="), "%s", before);
        free_manager(m);

        ck_assert_int_eq(virDomainPinEmulator(a, &(unsigned char){1u << 6}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-hand-threads", 3000));
        after =
            virDomainGetMetadata(a, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(after && strcmp(before, after) != 0, "not recorded again: %s", after);
        ck_assert_msg(strstr(after, " threads="), "recorded again without threads=: %s", after);
        g_unlink(image);
        stop(a);
        free_manager(m);
}
END_TEST

/*
 * A domain restored from a save image, whose re-placement's apply the lost connection cut off (the
 * decision forgotten, its plan kept as the cut apply's): QEMU's threads still run within the emulator pin
 * the restored domain started on, so the placement after the reconnect, and the next vCPU hot-add, keep
 * the emulator pin within it, as for a restored domain never cut off.
 */
START_TEST(test_restored_emulator_pin_cut_off_apply)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-reconcile-XXXXXX", NULL);
        virDomainPtr a = start_xml("r-cut", "<vcpu current='1'>2</vcpu>");
        g_autoptr(CpuSet) started = NULL;
        g_autoptr(CpuSet) outside = NULL;
        g_autoptr(Plan) plan = NULL;
        g_autofree char *was = NULL, *now = NULL;
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *d;
        int fd = g_mkstemp(image);

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(spin_known(m, "r-cut", 3000));
        started = cpuset_copy(manager_lookup(m, "r-cut")->plan->emulator_pin);
        ck_assert(!cpuset_is_empty(started));
        ck_assert_int_eq(virDomainSave(a, image), 0);
        virDomainFree(a);
        spin_known(NULL, NULL, 50);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        spin_known(NULL, NULL, 200); /* its start event */
        a = virDomainLookupByName(conn, "r-cut");
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(virDomainGetUUIDString(a, uuid), 0);
        d = manager_lookup(m, "r-cut");
        ck_assert_ptr_nonnull(d);
        /* what carry_out() does when the connection is lost in the middle of an apply */
        plan = plan_copy(d->plan);
        ck_assert_int_eq(virt_domain_set_metadata(a, NULL, NULL), 0);
        interrupted_note(m, uuid, plan);
        placer_forget(m, uuid, "the connection was lost while it was being pinned (test)");
        manager_reconcile(m);
        ck_assert_ptr_nonnull(manager_lookup(m, "r-cut"));
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-cut");
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        was = cpuset_format(started);
        now = cpuset_format(d->plan->emulator_pin);
        outside = cpuset_copy(d->plan->emulator_pin);
        cpuset_subtract(outside, started);
        ck_assert_msg(cpuset_is_empty(outside) || !cpuset_intersects(d->plan->emulator_pin, started),
                      "emulator pin %s takes in CPUs outside %s while keeping some of them (%s)", now, was,
                      d->reason);
        g_unlink(image);
        stop(a);
        free_manager(m);
}
END_TEST

/* A domain started while another stopped, both before the reconcile sees their events: placed on the
 * cores the gone one left, not beside its own vCPUs. */
START_TEST(test_new_domain_beside_gone_domain)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr b = start_xml("r-b", "<vcpu>4</vcpu>"), c;
        const Decision *d;

        ck_assert(spin_known(m, "r-b", 3000));
        ck_assert_int_eq(virDomainDestroy(b), 0);
        virDomainFree(b);
        c = start_xml("r-c", "<vcpu>2</vcpu>");
        manager_reconcile(m); /* before the events: as the reconcile after a reconnect */
        d = manager_lookup(m, "r-c");
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_null(manager_lookup(m, "r-b"));
        ck_assert_msg(d->result == DECISION_PLACED, "a new domain on an empty host: %s (%s)",
                      decision_result_to_string(d->result), d->reason);
        stop(c);
        free_manager(m);
}
END_TEST

/* The domain's live XML turns unreadable while it runs; a vCPU hot-added then: the domain is not placed
 * again, but what it holds stays counted, and the next domain does not take its cores. */
START_TEST(test_unreadable_live_xml_keeps_decision)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = start_xml("r-io", "<vcpu current='2'>4</vcpu>"), b;
        const Decision *d;

        ck_assert(spin_known(m, "r-io", 3000));
        ck_assert_int_eq(manager_lookup(m, "r-io")->result, DECISION_PLACED);
        unreadable = "r-io";
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 3, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        manager_reconcile(m);
        d = manager_lookup(m, "r-io");
        ck_assert_msg(d != NULL, "a running domain was forgotten");
        ck_assert_uint_eq(counted_cores(m), 2);
        b = start_xml("r-next", "<vcpu>2</vcpu>");
        ck_assert(spin_known(m, "r-next", 3000));
        d = manager_lookup(m, "r-next");
        ck_assert_msg(d->result == DECISION_PLACED, "%s (%s)", decision_result_to_string(d->result),
                      d->reason);
        for (unsigned p = 0; p < 8; p++)
                ck_assert_uint_le(ledger_pu_load(manager_ledger(m), p), 1);
        unreadable = NULL;
        stop(b);
        stop(a);
        free_manager(m);
}
END_TEST

/* A domain whose XML placementd cannot read from its start, its vCPUs pinned and its memory bound by its
 * definition: not placed, but what it runs on is counted as it runs, as for a domain that opts out, so the
 * next domain does not take its cores or count its node's memory free; pinned elsewhere by hand, it is
 * counted there. Before, it was counted nowhere. */
START_TEST(test_unreadable_from_start_counted_as_it_runs)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a, b;
        const Decision *d;

        unreadable = "r-bad";
        a = start_xml("r-bad", "<vcpu>2</vcpu><cputune><vcpupin vcpu='0' cpuset='0'/>"
                               "<vcpupin vcpu='1' cpuset='2'/><emulatorpin cpuset='7'/></cputune>"
                               "<numatune><memory mode='strict' nodeset='0'/></numatune>");
        ck_assert_msg(spin_known(m, "r-bad", 3000), "a domain whose XML cannot be read is not known");
        d = manager_lookup(m, "r-bad");
        ck_assert_msg(d->result == DECISION_SKIPPED && strstr(d->reason, "cannot be read") &&
                          strstr(d->reason, "given twice"),
                      "%s: %s", decision_result_to_string(d->result), d->reason);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), 0), 1);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), 2), 1);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), 0), 512u << 20);
        ck_assert_msg(ledger_pu_held(manager_ledger(m), 7) > 0, "its emulator's CPU 7 is not held");
        b = start_xml("r-next", "<vcpu>1</vcpu>");
        ck_assert(spin_known(m, "r-next", 3000));
        d = manager_lookup(m, "r-next");
        ck_assert_msg(d->result == DECISION_PLACED && (d->plan->vcpu_pu[0] == 4 || d->plan->vcpu_pu[0] == 5),
                      "%s (%s)", decision_result_to_string(d->result), d->reason);
        for (unsigned p = 0; p < 8; p++)
                ck_assert_uint_le(ledger_pu_load(manager_ledger(m), p), 1);
        /* pinned elsewhere by hand: counted where it runs now */
        pin(a, 0, 1);
        manager_reconcile(m);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), 0) == 0 && ledger_pu_load(manager_ledger(m), 1) == 1,
                      "CPU 0 holds %u vCPUs, CPU 1 %u, after vCPU 0 was pinned to CPU 1",
                      ledger_pu_load(manager_ledger(m), 0), ledger_pu_load(manager_ledger(m), 1));
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), 0), 512u << 20);
        unreadable = NULL;
        stop(b);
        stop(a);
        free_manager(m);
}
END_TEST

/* An I/O thread id above 8192, which libvirt takes, leaves that I/O thread out and the rest of the
 * definition read: a guest owner's <iothread id='9000'> does not make its definition unreadable and what it
 * holds counted by libvirt's calls alone (its memory bound by its definition counted as bound, its pins as
 * they run). */
START_TEST(test_iothread_id_beyond_read)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = start_xml("r-9000", "<vcpu>1</vcpu><iothreads>2</iothreads><iothreadids><iothread "
                                             "id='9000'/></iothreadids>");
        const Decision *d;

        ck_assert(spin_known(m, "r-9000", 3000));
        d = manager_lookup(m, "r-9000");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_int_eq(virDomainAddIOThread(a, 9001, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-9000");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        stop(a);
        free_manager(m);
}
END_TEST

/* Starts name with the definition's body and checks it is read and placed. */
static void assert_started_placed(const char *name, const char *body)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = start_xml(name, body);
        const Decision *d;

        ck_assert(spin_known(m, name, 3000));
        d = manager_lookup(m, name);
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        stop(a);
        free_manager(m);
}

/* The same through <iothreadsched>: a guest owner's FIFO I/O thread 9000 (libvirt takes such an id in
 * iothreads= up to 16383) is left out there too; before, the definition was unreadable and the domain not
 * placed. */
START_TEST(test_iothreadsched_id_beyond_read)
{
        assert_started_placed("r-sched-9000", "<vcpu>1</vcpu><iothreads>1</iothreads><iothreadids><iothread "
                                              "id='9000'/></iothreadids><cputune><iothreadsched "
                                              "iothreads='9000' scheduler='fifo' priority='1'/></cputune>");
}
END_TEST

/* <iothreads> counting more I/O threads than ids up to 8192 (libvirt takes any count and numbers them from
 * 1): the definition is read, the threads above 8192 left out, the domain placed as any; before, it was
 * unreadable and its hugepages counted as ordinary memory, as with an id above 8192. */
START_TEST(test_iothread_count_beyond_read)
{
        assert_started_placed("r-8193", "<vcpu>1</vcpu><iothreads>8193</iothreads>");
}
END_TEST

/* PlaceRunning=no, then the URI changes: what the new connection finds running is found as at a start,
 * left alone, not placed and pinned. */
START_TEST(test_uri_change_keeps_place_running)
{
        virDomainPtr a = start_xml("r-alone", "<vcpu>1</vcpu>");
        Topology *t = NULL;
        g_autoptr(Config) c = NULL;
        g_autofree char *error = NULL;
        const Decision *d;
        Manager *m;

        ck_assert_msg(topology_load(TOPOLOGY, &t, &error) == 0, "%s", error);
        ck_assert_msg(config_load_data("[Libvirt]\nURI=test:///default\n[Placement]\nPlaceRunning=no\n", "t",
                                       &c, &error) == 0,
                      "%s", error);
        m = manager_new(base, t, g_steal_pointer(&c), NULL);
        manager_start(m);
        ck_assert(manager_connected(m));
        ck_assert(spin_known(m, "r-alone", 3000));
        ck_assert_int_eq(manager_lookup(m, "r-alone")->result, DECISION_SKIPPED);
        ck_assert_msg(config_load_data("[Libvirt]\nURI=test://root@/default\n[Placement]\nPlaceRunning=no\n",
                                       "t", &c, &error) == 0,
                      "%s", error);
        manager_set_config(m, g_steal_pointer(&c));
        ck_assert(spin_known(m, "r-alone", 3000));
        d = manager_lookup(m, "r-alone");
        ck_assert_msg(d->result == DECISION_SKIPPED, "after the URI change: %s (%s)",
                      decision_result_to_string(d->result), d->reason);
        stop(a);
        free_manager(m);
}
END_TEST

/* Unplaceable (bigger than the host), its vCPU floating, then pinned by hand: counted from then on. */
START_TEST(test_unplaceable_then_pinned)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a =
            virDomainCreateXML(conn,
                               "<domain type='test'><name>r-big</name><memory unit='GiB'>40</memory>"
                               "<vcpu>1</vcpu><os><type>hvm</type></os></domain>",
                               0);
        const Decision *d;

        ck_assert_ptr_nonnull(a);
        ck_assert(spin_known(m, "r-big", 3000));
        ck_assert_int_eq(manager_lookup(m, "r-big")->result, DECISION_UNPLACEABLE);
        pin(a, 0, 5);
        manager_reconcile(m);
        d = manager_lookup(m, "r-big");
        ck_assert_msg(d->pinned_by_hand && ledger_pu_load(manager_ledger(m), 5) == 1,
                      "the hand pin on CPU 5 is not counted: %s (%s)", decision_result_to_string(d->result),
                      d->reason);
        stop(a);
        free_manager(m);
}
END_TEST

/* Apply=no, then pinned by hand: the reconcile counts the pin, not the advice, and Apply=yes later leaves
 * the pin alone. */
START_TEST(test_advised_then_pinned)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nApply=no\n");
        virDomainPtr a = fixture_define_and_start(conn, "r-advised", 1);
        g_autoptr(Config) c = NULL;
        g_autofree char *error = NULL;
        g_autofree char *ran = NULL;
        CpuSet **pins = NULL;
        const Decision *d;

        ck_assert(spin_known(m, "r-advised", 3000));
        ck_assert_int_eq(manager_lookup(m, "r-advised")->result, DECISION_ADVISORY);
        pin(a, 0, 7);
        manager_reconcile(m);
        d = manager_lookup(m, "r-advised");
        ck_assert_msg(d->pinned_by_hand && ledger_pu_load(manager_ledger(m), 7) == 1,
                      "the hand pin on CPU 7 is not counted: %s (%s)", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_int_eq(config_load_data("[Placement]\nApply=yes\n", "t", &c, &error), 0);
        manager_set_config(m, g_steal_pointer(&c));
        ck_assert_int_eq(virt_domain_get_vcpu_pins(a, 1, NULL, &pins, NULL), 0);
        ran = cpuset_format(pins[0]);
        ck_assert_msg(cpuset_has(pins[0], 7) && cpuset_count(pins[0]) == 1, "the hand pin was undone: %s",
                      ran);
        virt_pins_free(pins, 1);
        stop(a);
        free_manager(m);
}
END_TEST

/* Pinned by hand with one vCPU floating, its record lists the pinned vCPU alone; the floating one pinned
 * while placementd was down is counted after the restart. */
START_TEST(test_record_leaves_floating_vcpu_out)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = start_xml("r-float", "<vcpu>2</vcpu>");
        unsigned char all = 0xff;

        ck_assert(spin_known(m, "r-float", 3000));
        pin(a, 0, 6);
        ck_assert_int_eq(virDomainPinVcpuFlags(a, 1, &all, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        ck_assert(manager_lookup(m, "r-float")->pinned_by_hand);
        free_manager(m);
        pin(a, 1, 2);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-float", 3000));
        manager_reconcile(m);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), 2) == 1 && ledger_pu_load(manager_ledger(m), 6) == 1,
                      "vCPU 1 runs on CPU 2 by hand, counted %u there (%s)",
                      ledger_pu_load(manager_ledger(m), 2), manager_lookup(m, "r-float")->reason);
        stop(a);
        free_manager(m);
}
END_TEST

/* compat fills siblings with other domains by design: a domain saved and restored onto its thread, beside
 * the same neighbour, has its record adopted, not refused as held by another domain. */
START_TEST(test_compat_record_beside_neighbour)
{
        static const char *const configs[] = {"[Placement]\nPolicy=compat\nVCPUPin=thread\n",
                                              "[Placement]\nPolicy=compat\nVCPUPin=nodeset\n"};

        for (unsigned k = 0; k < G_N_ELEMENTS(configs); k++) {
                Manager *m = fixture_manager_new(base, TOPOLOGY, configs[k]);
                g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-compat-XXXXXX", NULL);
                virDomainPtr a = start_xml("r-ca", "<vcpu>3</vcpu>"), c, b;
                const Decision *d;
                int fd = g_mkstemp(image);

                ck_assert_int_ge(fd, 0);
                close(fd);
                ck_assert(spin_known(m, "r-ca", 3000));
                c = start_xml("r-cc", "<vcpu>4</vcpu>");
                ck_assert(spin_known(m, "r-cc", 3000));
                b = start_xml("r-cb", "<vcpu>1</vcpu>");
                ck_assert(spin_known(m, "r-cb", 3000));
                ck_assert_int_eq(virDomainSave(b, image), 0);
                virDomainFree(b);
                spin_known(NULL, NULL, 100);
                ck_assert_int_eq(virDomainRestore(conn, image), 0);
                spin_known(NULL, NULL, 100);
                manager_reconcile(m);
                d = manager_lookup(m, "r-cb");
                ck_assert_ptr_nonnull(d);
                ck_assert_msg(d->adopted, "%s: the restored record was not adopted: %s", configs[k],
                              d->reason);
                g_unlink(image);
                stop(virDomainLookupByName(conn, "r-cb"));
                stop(c);
                stop(a);
                free_manager(m);
        }
}
END_TEST

/* A domain its owner put under compat took the sibling of an explicit domain's vCPU while no core was
 * free; restored once a core is free again, its record is not adopted there (explicit gave that core to
 * its vCPU alone, compat shares it only when no core is free, as an overcommitted record): it is placed
 * anew, on a free core. */
START_TEST(test_compat_record_beside_explicit)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:4 pu:2",
                                         "[Placement]\nPolicy=explicit\n");
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-compat-XXXXXX", NULL);
        virDomainPtr a = start_xml("r-ea", "<vcpu>1</vcpu>"), c, b;
        const Topology *t = manager_topology(m);
        const Decision *d;
        int fd = g_mkstemp(image), explicit_core;

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(spin_known(m, "r-ea", 3000));
        c = start_xml("r-ec", "<vcpu>3</vcpu>");
        ck_assert(spin_known(m, "r-ec", 3000));
        b = start_xml("r-eb", "<vcpu>1</vcpu><metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS
                              "' policy='compat'/></metadata>");
        ck_assert(spin_known(m, "r-eb", 3000));
        d = manager_lookup(m, "r-eb");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        explicit_core = (int)t->pus[d->plan->vcpu_pu[0]].core;
        ck_assert_msg(ledger_core_whole(manager_ledger(m), (unsigned)explicit_core) > 0,
                      "r-eb is not beside an explicit vCPU");
        /* the explicit domain beside it stays, the other goes */
        if ((int)t->pus[manager_lookup(m, "r-ea")->plan->vcpu_pu[0]].core == explicit_core) {
                stop(c);
                c = a;
        } else {
                stop(a);
        }
        manager_reconcile(m);
        ck_assert(ledger_core_whole(manager_ledger(m), (unsigned)explicit_core) > 0);
        ck_assert_int_eq(virDomainSave(b, image), 0);
        virDomainFree(b);
        spin_known(NULL, NULL, 100);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        g_unlink(image);
        spin_known(NULL, NULL, 100);
        manager_reconcile(m);
        d = manager_lookup(m, "r-eb");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(!d->adopted && d->plan && (int)t->pus[d->plan->vcpu_pu[0]].core != explicit_core,
                      "the restored compat record was kept beside the explicit vCPU on core %d while cores "
                      "are free (%s): %s",
                      explicit_core, d->adopted ? "adopted" : "placed anew", d->reason);
        stop(virDomainLookupByName(conn, "r-eb"));
        stop(c);
        free_manager(m);
}
END_TEST

/*
 * An 8 GiB 1-vCPU domain, named name, decided (result want) under conf, then bound live by hand (virsh
 * numatune --live) to the node its decision counts no memory on: from the next reconcile its memory is
 * counted where libvirt binds it, all of it. Returns its decision then; *ret_dom the domain.
 */
static const Decision *bound_elsewhere_by_hand(Manager *m, const char *name, DecisionResult want,
                                               virDomainPtr *ret_dom)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='GiB'>8</memory><vcpu>1</vcpu>"
                            "<os><type>hvm</type></os></domain>",
                            name);
        virDomainPtr a = virDomainCreateXML(conn, xml, 0);
        virTypedParameter param = {.type = VIR_TYPED_PARAM_STRING};
        g_autofree char *other = NULL;
        const Decision *d;
        unsigned planned;

        ck_assert_ptr_nonnull(a);
        ck_assert(spin_known(m, name, 3000));
        d = manager_lookup(m, name);
        ck_assert_int_eq(d->result, want);
        planned = d->plan->node_memory[0] ? 0 : 1;
        other = g_strdup_printf("%u", 1 - planned);
        g_strlcpy(param.field, VIR_DOMAIN_NUMA_NODESET, sizeof(param.field));
        param.value.s = other;
        ck_assert_int_eq(virDomainSetNumaParameters(a, &param, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert_msg(ledger_node_memory(manager_ledger(m), 1 - planned) == 8ull << 30 &&
                          ledger_node_memory(manager_ledger(m), planned) == 0,
                      "libvirt binds the memory to node %u; counted %llu MiB there, %llu MiB on node %u",
                      1 - planned,
                      (unsigned long long)(ledger_node_memory(manager_ledger(m), 1 - planned) >> 20),
                      (unsigned long long)(ledger_node_memory(manager_ledger(m), planned) >> 20), planned);
        *ret_dom = a;
        return manager_lookup(m, name);
}

/* MemoryBinding=no, then bound live by hand to the other node: the memory is counted where libvirt binds
 * it, said to be bound by a binding placementd keeps (not "off", as if nothing bound it), and the next
 * reconcile changes nothing. */
START_TEST(test_memory_bound_by_hand)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nMemoryBinding=no\n");
        virDomainPtr a;
        const Decision *d = bound_elsewhere_by_hand(m, "r-bind", DECISION_PLACED, &a);

        ck_assert(d->pinned_by_hand);
        ck_assert_msg(d->memory_binding == MEMORY_BINDING_KEPT, "memory binding %s",
                      memory_binding_to_string(d->memory_binding));
        manager_reconcile(m);
        ck_assert_ptr_eq(manager_lookup(m, "r-bind"), d); /* not adopted again */
        stop(a);
        free_manager(m);
}
END_TEST

/* The same under Apply=no: an advised domain bound live by someone else to the other node is advised
 * again from its binding (it stays advisory: nothing is taken for pinned by hand, which a later Apply=yes
 * would leave alone), and its memory is counted where libvirt binds it, not on the advised node. */
START_TEST(test_advised_memory_bound_by_hand)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nApply=no\n");
        virDomainPtr a;
        const Decision *d = bound_elsewhere_by_hand(m, "r-advbind", DECISION_ADVISORY, &a);

        ck_assert_int_eq(d->result, DECISION_ADVISORY);
        ck_assert(!d->pinned_by_hand);
        manager_reconcile(m);
        ck_assert_ptr_eq(manager_lookup(m, "r-advbind"), d); /* not advised again and again */
        stop(a);
        free_manager(m);
}
END_TEST

/* Apply=no, a domain with <vcpu cpuset='0-3'> on libvirt's default pins, its definition then edited to
 * 4-7 for the next start: nobody pinned anything, the advice is not taken for hand pins (nor a record
 * written). */
START_TEST(test_advised_definition_edited)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nApply=no\n");
        virDomainPtr a = virDomainDefineXML(
                         conn, "<domain type='test'><name>r-edit</name><memory "
                               "unit='MiB'>512</memory><vcpu cpuset='0-3'>2</vcpu><os><type>hvm</"
                               "type></os></domain>"),
                     again;
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autofree char *xml = NULL;
        const Decision *d;

        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(virDomainCreate(a), 0);
        ck_assert(spin_known(m, "r-edit", 3000));
        ck_assert_int_eq(manager_lookup(m, "r-edit")->result, DECISION_ADVISORY);
        virDomainGetUUIDString(a, uuid);
        xml = g_strdup_printf(
            "<domain type='test'><name>r-edit</name><uuid>%s</uuid><memory unit='MiB'>512</memory>"
            "<vcpu cpuset='4-7'>2</vcpu><os><type>hvm</type></os></domain>",
            uuid);
        again = virDomainDefineXML(conn, xml);
        ck_assert_ptr_nonnull(again);
        virDomainFree(again);
        manager_reconcile(m);
        d = manager_lookup(m, "r-edit");
        ck_assert_msg(d->result == DECISION_ADVISORY && !d->pinned_by_hand,
                      "default pins over the running <vcpu cpuset> taken for hand pins: %s (%s)",
                      decision_result_to_string(d->result), d->reason);
        virDomainDestroy(a);
        virDomainUndefine(a);
        virDomainFree(a);
        free_manager(m);
}
END_TEST

/* ... but not onto the idle sibling of another domain's realtime (FIFO) vCPU, which compat never fills. */
START_TEST(test_compat_record_beside_fifo)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:4 pu:2",
                                         "[Placement]\nPolicy=compat\n");
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-fifo-XXXXXX", NULL);
        virDomainPtr f = start_xml("r-f", "<vcpu>1</vcpu>"), b, rt;
        const Decision *d;
        int fd = g_mkstemp(image);

        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(spin_known(m, "r-f", 3000));
        b = start_xml("r-b", "<vcpu>1</vcpu>"); /* on f's sibling */
        ck_assert(spin_known(m, "r-b", 3000));
        ck_assert_int_eq(virDomainSave(b, image), 0);
        virDomainFree(b);
        stop(f);
        spin_known(NULL, NULL, 100);
        rt = start_xml(
            "r-rt", "<vcpu>1</vcpu><cputune><vcpusched vcpus='0' scheduler='fifo' priority='1'/></cputune>");
        ck_assert(spin_known(m, "r-rt", 3000));
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        ck_assert(spin_known(m, "r-b", 3000));
        d = manager_lookup(m, "r-b");
        ck_assert_msg(d->plan->vcpu_pu[0] / 2 != manager_lookup(m, "r-rt")->plan->vcpu_pu[0] / 2,
                      "a restored compat record adopted beside a FIFO vCPU: %s", d->reason);
        g_unlink(image);
        stop(virDomainLookupByName(conn, "r-b"));
        stop(rt);
        free_manager(m);
}
END_TEST

/* The live emulator pin of dom as a mask of CPUs 0-7. */
static int emulator_mask(virDomainPtr dom)
{
        unsigned char map[1] = {0};

        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        return map[0];
}

/* A CPU of 0-7 on a core (CPUs 2k, 2k+1) where taken has no CPU, other than the core of avoid (-1: none). */
static unsigned cpu_off(const CpuSet *taken, int avoid)
{
        for (unsigned cpu = 8; cpu-- > 0;)
                if (!cpuset_has(taken, cpu) && !cpuset_has(taken, cpu ^ 1u) &&
                    (avoid < 0 || cpu / 2 != (unsigned)avoid / 2))
                        return cpu;
        ck_abort_msg("no core is free");
        return 0;
}

/* A transient domain started again from its dumped live XML, edited to add <vcpu cpuset> (placementd's
 * <cputune> and <numatune> taken out, the metadata with its record kept): the recorded definition, with no
 * cpuset, does not stand for the one that runs, which is placed inside its cpuset; libvirt's default pin
 * of its emulator there (the cpuset) is not taken for one made by hand. */
START_TEST(test_recreated_from_edited_live_xml)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("r-edit", "<vcpu>1</vcpu>");
        g_autoptr(GRegex) vcpu = g_regex_new("<vcpu[^>]*>", 0, 0, NULL);
        g_autoptr(GRegex) tune = g_regex_new("<(cputune|numatune)>.*?</\\1>", G_REGEX_DOTALL, 0, NULL);
        g_autofree char *xml = NULL, *with_cpuset = NULL, *edited = NULL, *element = NULL;
        const Decision *d;
        unsigned cpu;

        ck_assert(spin_known(m, "r-edit", 3000));
        d = manager_lookup(m, "r-edit");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        cpu = cpu_off(d->plan->vcpu_pins[0], -1);
        xml = virDomainGetXMLDesc(dom, 0);
        ck_assert(xml && strstr(xml, "placementd") && strstr(xml, "<cputune>"));
        stop(dom);
        ck_assert(fixture_spin_known(base, m, NULL, 50));
        element = g_strdup_printf("<vcpu placement='static' cpuset='%u'>", cpu);
        with_cpuset = g_regex_replace_literal(vcpu, xml, -1, 0, element, 0, NULL);
        edited = g_regex_replace_literal(tune, with_cpuset, -1, 0, "", 0, NULL);
        ck_assert_ptr_null(strstr(edited, "<cputune>"));
        dom = virDomainCreateXML(conn, edited, 0);
        ck_assert_msg(dom != NULL, "%s", edited);
        ck_assert(spin_known(m, "r-edit", 3000));
        d = manager_lookup(m, "r-edit");
        ck_assert_msg(d->result == DECISION_PLACED && !d->adopted &&
                          cpuset_count(d->plan->vcpu_pins[0]) == 1 && cpuset_has(d->plan->vcpu_pins[0], cpu),
                      "not placed on CPU %u, its cpuset: %s", cpu, d->reason);
        fixture_assert_live_pins(dom, d->plan);
        ck_assert_msg(strstr(d->reason, "kept inside <vcpu cpuset=") &&
                          !strstr(d->reason, "pinned outside placementd"),
                      "%s", d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A placed domain's vCPU and emulator pinned by hand while placementd was down (transient, then persistent):
 * the restarted daemon takes the vCPU pin as the running one would, counted as it runs and not undone, and
 * leaves the emulator where it was pinned. */
START_TEST(test_pinned_by_hand_while_down)
{
        for (unsigned k = 0; k < 2; k++) {
                Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
                virDomainPtr dom =
                    k ? fixture_define_and_start(conn, "r-down", 1) : start_xml("r-down", "<vcpu>1</vcpu>");
                const Decision *d;
                unsigned hand, emulator;
                int pu;

                ck_assert(spin_known(m, "r-down", 3000));
                d = manager_lookup(m, "r-down");
                ck_assert_int_eq(d->result, DECISION_PLACED);
                hand = cpu_off(d->plan->vcpu_pins[0], -1);
                emulator = cpu_off(d->plan->vcpu_pins[0], (int)hand);
                free_manager(m);

                pin(dom, 0, hand);
                ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){(unsigned char)(1u << emulator)},
                                                      1, VIR_DOMAIN_AFFECT_LIVE),
                                 0);
                m = fixture_manager_new(base, TOPOLOGY, NULL);
                ck_assert(spin_known(m, "r-down", 3000));
                d = manager_lookup(m, "r-down");
                ck_assert_msg(d->result == DECISION_SKIPPED && d->pinned_by_hand &&
                                  cpuset_count(d->plan->vcpu_pins[0]) == 1 &&
                                  cpuset_has(d->plan->vcpu_pins[0], hand),
                              "%s: the pin to CPU %u made while placementd was down was not kept: %s",
                              k ? "persistent" : "transient", hand, d->reason);
                fixture_assert_live_pins(dom, d->plan);
                pu = topology_pu_by_os(manager_topology(m), hand);
                ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)pu), 1);
                ck_assert_int_eq(emulator_mask(dom), 1 << emulator);
                virDomainDestroy(dom);
                if (k)
                        virDomainUndefine(dom);
                virDomainFree(dom);
                free_manager(m);
        }
}
END_TEST

/* The domain's record (placementd's metadata) of it, live. */
static char *record_of(virDomainPtr dom)
{
        return virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS,
                                    VIR_DOMAIN_AFFECT_LIVE);
}

/* Pinned by hand, then a vCPU hot-added: it floats (every CPU), and the skipped record leaves it out. A
 * restarted placementd shows it where it runs, as the running one did, and counts it on no CPU. */
START_TEST(test_floating_vcpu_of_skipped_record_after_restart)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr a = start_xml("r-float", "<vcpu current='1'>2</vcpu>");
        const Decision *d;

        ck_assert(spin_known(m, "r-float", 3000));
        pin(a, 0, 5);
        manager_reconcile(m);
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-float");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[1]), 8);
        free_manager(m);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-float", 3000));
        d = manager_lookup(m, "r-float");
        ck_assert_msg(d->adopted && d->result == DECISION_SKIPPED, "%s", d->reason);
        ck_assert_msg(cpuset_count(d->plan->vcpu_pins[1]) == 8 && d->plan->vcpu_pu[1] < 0,
                      "vCPU 1 after the restart: %u CPUs, PU %d", cpuset_count(d->plan->vcpu_pins[1]),
                      d->plan->vcpu_pu[1]);
        stop(a);
        free_manager(m);
}
END_TEST

/* Opted out by its definition (a <vcpupin>) from its start: it has no record, and gets none when its I/O
 * thread or emulator is pinned by hand or placementd restarts; the definition says the domain is its
 * user's. */
START_TEST(test_opted_out_from_start_never_recorded)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("r-opt", "<vcpu>1</vcpu><iothreads>1</iothreads><cputune>"
                                              "<vcpupin vcpu='0' cpuset='1'/><iothreadpin iothread='1' "
                                              "cpuset='3'/></cputune>");
        g_autofree char *before = NULL, *floating = NULL, *after = NULL;
        const Decision *d;

        ck_assert(spin_known(m, "r-opt", 3000));
        d = manager_lookup(m, "r-opt");
        ck_assert_msg(d->result == DECISION_SKIPPED, "%s", d->reason);
        before = record_of(dom);
        ck_assert_msg(!before, "a record at its start: %s", before);
        ck_assert_int_eq(virDomainPinIOThread(dom, 1, &(unsigned char){1u << 0}, 1, VIR_DOMAIN_AFFECT_LIVE),
                         0);
        manager_reconcile(m);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        pin(dom, 0, 2);
        manager_reconcile(m);
        ck_assert_msg(cpuset_has(manager_lookup(m, "r-opt")->plan->vcpu_pins[0], 2), "vCPU 0 not followed");
        floating = record_of(dom);
        ck_assert_msg(!floating, "a record once its threads are pinned by hand: %s", floating);
        free_manager(m);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-opt", 3000));
        d = manager_lookup(m, "r-opt");
        ck_assert_msg(d->result == DECISION_SKIPPED, "%s", d->reason);
        after = record_of(dom);
        ck_assert_msg(!after, "a record after a restart: %s", after);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_pins_while_down_recorded)
{
        /* the skip a restart makes of a vCPU pinned by hand while placementd was down is recorded in the
         * domain, as a running daemon records it (a stale "placed" record would be adopted as placementd's
         * own once the pins happen to match it again), and the emulator pin placementd applied before
         * still stands as its own */
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("r-rec", "<vcpu>1</vcpu>");
        g_autoptr(CpuSet) emulator = NULL;
        g_autofree char *record = NULL, *cpu = NULL;
        const Decision *d;
        unsigned hand;

        ck_assert(spin_known(m, "r-rec", 3000));
        d = manager_lookup(m, "r-rec");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        emulator = cpuset_copy(d->plan->emulator_pin);
        ck_assert(!cpuset_is_empty(emulator));
        hand = cpu_off(d->plan->vcpu_pins[0], -1);
        free_manager(m);

        pin(dom, 0, hand);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-rec", 3000));
        d = manager_lookup(m, "r-rec");
        ck_assert_msg(d->result == DECISION_SKIPPED && d->pinned_by_hand, "%s", d->reason);
        ck_assert_msg(cpuset_equal(d->plan->emulator_pin, emulator),
                      "the emulator pin applied before is lost");
        record = record_of(dom);
        cpu = g_strdup_printf("cpu=\"%u\"", hand);
        ck_assert_msg(record && strstr(record, "result=\"skipped\"") && strstr(record, cpu) &&
                          strstr(record, "pinned by someone else since its record"),
                      "%s", record);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_pins_while_down_emulator_not_recorded_one)
{
        /* the same, with the emulator set floating again while placementd was down: the record's
         * emulator pin no longer runs and is not counted as placementd's (a record is no proof) */
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("r-rec2", "<vcpu>1</vcpu>");
        const Decision *d;
        unsigned hand;

        ck_assert(spin_known(m, "r-rec2", 3000));
        d = manager_lookup(m, "r-rec2");
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        hand = cpu_off(d->plan->vcpu_pins[0], -1);
        free_manager(m);

        pin(dom, 0, hand);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "r-rec2", 3000));
        d = manager_lookup(m, "r-rec2");
        ck_assert_msg(d->result == DECISION_SKIPPED, "%s", d->reason);
        {
                g_autofree char *emulator = cpuset_format(d->plan->emulator_pin);
                ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin), "emulator counted on %s", emulator);
        }
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_started_with_edited_pins)
{
        /* a domain started (restored) from XML carrying its record, with a vCPU pin edited since (virsh
         * restore --xml, managedsave-define): the pin is someone else's, as a restart takes it, not
         * undone by a new placement */
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("r-edit", "<vcpu>1</vcpu>");
        g_autofree char *xml = NULL, *was = NULL, *now = NULL, *record = NULL, *cpu = NULL;
        g_autoptr(GString) edited = NULL;
        const Decision *d;
        unsigned hand;

        ck_assert(spin_known(m, "r-edit", 3000));
        d = manager_lookup(m, "r-edit");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 2);
        hand = cpu_off(d->plan->vcpu_pins[0], -1);
        xml = virDomainGetXMLDesc(dom, 0);
        ck_assert_ptr_nonnull(xml);
        {
                g_autofree char *pins = cpuset_format(d->plan->vcpu_pins[0]);
                was = g_strdup_printf("<vcpupin vcpu='0' cpuset='%s'/>", pins);
        }
        now = g_strdup_printf("<vcpupin vcpu='0' cpuset='%u'/>", hand);
        ck_assert_msg(strstr(xml, was), "%s", xml);
        edited = g_string_new(xml);
        g_string_replace(edited, was, now, 1);
        stop(dom);
        for (unsigned i = 0; i < 3000 && manager_lookup(m, "r-edit"); i++)
                fixture_spin_known(base, m, NULL, 1);
        ck_assert(!manager_lookup(m, "r-edit"));

        dom = virDomainCreateXML(conn, edited->str, 0);
        ck_assert_ptr_nonnull(dom);
        ck_assert(spin_known(m, "r-edit", 3000));
        d = manager_lookup(m, "r-edit");
        ck_assert_msg(d->result == DECISION_SKIPPED && cpuset_count(d->plan->vcpu_pins[0]) == 1 &&
                          cpuset_has(d->plan->vcpu_pins[0], hand),
                      "%s", d->reason);
        fixture_assert_live_pins(dom, d->plan);
        record = record_of(dom);
        cpu = g_strdup_printf("cpu=\"%u\"", hand);
        ck_assert_msg(record && strstr(record, "result=\"skipped\"") && strstr(record, cpu), "%s", record);
        stop(dom);
        free_manager(m);
}
END_TEST

/* Only the emulator pinned by hand while placementd was down, on a host where its record had the emulator
 * share the domain's own cores: the record is adopted, and its reason says where the emulator runs now, not
 * where placementd had it. */
START_TEST(test_emulator_pinned_while_down_reason)
{
        const char *topology = "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr dom = start_xml("r-emu", "<vcpu>2</vcpu>");
        const Decision *d;

        ck_assert(spin_known(m, "r-emu", 3000));
        d = manager_lookup(m, "r-emu");
        ck_assert_msg(d->result == DECISION_PLACED && strstr(d->reason, "the emulator shares its own cores"),
                      "%s", d->reason);
        free_manager(m);

        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){1u << 1}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_known(m, "r-emu", 3000));
        d = manager_lookup(m, "r-emu");
        ck_assert_msg(d->adopted && d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_msg(!strstr(d->reason, "the emulator shares") &&
                          strstr(d->reason, "the emulator stays where it was pinned outside placementd"),
                      "%s", d->reason);
        ck_assert_int_eq(emulator_mask(dom), 1 << 1);
        free_manager(m);
        /* the record says so too: adopted again, it says it once */
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_known(m, "r-emu", 3000));
        d = manager_lookup(m, "r-emu");
        ck_assert_msg(d->adopted && g_strstr_len(d->reason, -1, "pinned outside placementd") ==
                                        g_strrstr(d->reason, "pinned outside placementd"),
                      "%s", d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* The emulator pinned by hand onto a CPU of its own, then set floating again by hand (virsh emulatorpin DOM
 * 0-7 --live): the reason, shown and recorded, no longer says it runs on that CPU, nor where placementd had
 * put it, but that it runs unpinned. */
START_TEST(test_emulator_unpinned_by_hand_reason)
{
        const char *topology = "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr dom = start_xml("r-emufree", "<vcpu>2</vcpu>");
        g_autofree char *record = NULL;
        const Decision *d;

        ck_assert(spin_known(m, "r-emufree", 3000));
        d = manager_lookup(m, "r-emufree");
        ck_assert_msg(d->result == DECISION_PLACED && strstr(d->reason, "the emulator shares its own cores"),
                      "%s", d->reason);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){1u << 1}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-emufree");
        ck_assert_msg(strstr(d->reason, "pinned outside placementd (virsh emulatorpin: on 1)"), "%s",
                      d->reason);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-emufree");
        ck_assert_msg(!strstr(d->reason, "on 1)") && !strstr(d->reason, "the emulator shares") &&
                          strstr(d->reason, "the emulator runs unpinned"),
                      "%s", d->reason);
        record = record_of(dom);
        ck_assert_msg(record && !strstr(record, "on 1)") && strstr(record, "the emulator runs unpinned"),
                      "%s", record);
        /* adopted again, it says so once */
        free_manager(m);
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_known(m, "r-emufree", 3000));
        d = manager_lookup(m, "r-emufree");
        ck_assert_msg(d->adopted && !strstr(d->reason, "on 1)") &&
                          g_strstr_len(d->reason, -1, "runs unpinned") ==
                              g_strrstr(d->reason, "runs unpinned"),
                      "%s", d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* The emulator placementd pinned set floating by hand while placementd was down (virsh emulatorpin DOM 0-7
 * --live, libvirt's default): the restarted daemon adopts the record as the running one follows such a pin,
 * naming no emulator pin of its own (the record written again says emulator=""), and its reason says the
 * emulator runs unpinned, not where placementd had put it. */
START_TEST(test_emulator_unpinned_while_down)
{
        const char *topology = "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr dom = start_xml("r-emudown", "<vcpu>1</vcpu>");
        g_autofree char *record = NULL;
        const Decision *d;

        ck_assert(spin_known(m, "r-emudown", 3000));
        d = manager_lookup(m, "r-emudown");
        ck_assert_msg(d->result == DECISION_PLACED && !cpuset_is_empty(d->plan->emulator_pin) &&
                          !cpuset_has(d->plan->emulator_pin, 0),
                      "%s", d->reason);
        free_manager(m);

        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_known(m, "r-emudown", 3000));
        d = manager_lookup(m, "r-emudown");
        ck_assert_msg(d->adopted && d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin), "%s", d->reason);
        ck_assert_msg(strstr(d->reason, "the emulator runs unpinned"), "%s", d->reason);
        ck_assert_int_eq(emulator_mask(dom), 0xff);
        record = record_of(dom);
        ck_assert_msg(record && strstr(record, "emulator=\"\"") &&
                          strstr(record, "the emulator runs unpinned"),
                      "%s", record);
        stop(dom);
        free_manager(m);
}
END_TEST

/* The emulator placementd pinned set floating again by hand (virsh emulatorpin DOM 0-7 --live, libvirt's
 * default) while placementd runs: a re-placement (placementctl replace) leaves it floating, as it leaves a
 * hand pin onto other CPUs, and the decision says so; the record carries it, so a restarted daemon's
 * re-placement leaves it floating too. */
START_TEST(test_emulator_unpinned_by_hand_stays_replaced)
{
        const char *topology = "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "r-emurep", 1);
        g_autofree char *error = NULL;
        g_autofree char *record = NULL;
        const Decision *d;

        ck_assert(spin_known(m, "r-emurep", 3000));
        d = manager_lookup(m, "r-emurep");
        ck_assert_msg(d->result == DECISION_PLACED && !cpuset_is_empty(d->plan->emulator_pin), "%s",
                      d->reason);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-emurep");
        ck_assert_msg(strstr(d->reason, "the emulator runs unpinned"), "%s", d->reason);
        ck_assert_int_eq(manager_replace(m, "r-emurep", &error), 0);
        d = manager_lookup(m, "r-emurep");
        ck_assert_int_eq(emulator_mask(dom), 0xff);
        ck_assert_msg(d->result == DECISION_PLACED && cpuset_is_empty(d->plan->emulator_pin) &&
                          cpuset_is_empty(d->plan->held_pus) &&
                          strstr(d->reason, "the emulator runs unpinned"),
                      "%s", d->reason);
        /* and again, the first re-placement's decision being the one it starts from */
        ck_assert_int_eq(manager_replace(m, "r-emurep", &error), 0);
        ck_assert_int_eq(emulator_mask(dom), 0xff);
        record = record_of(dom);
        ck_assert_msg(record && strstr(record, "user-emulator=\"floating\""), "%s", record);
        free_manager(m);

        /* a restarted daemon adopts it so, and its re-placement leaves the emulator floating as well */
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_known(m, "r-emurep", 3000));
        d = manager_lookup(m, "r-emurep");
        ck_assert_msg(d->adopted && strstr(d->reason, "the emulator runs unpinned"), "%s", d->reason);
        ck_assert_int_eq(manager_replace(m, "r-emurep", &error), 0);
        d = manager_lookup(m, "r-emurep");
        ck_assert_int_eq(emulator_mask(dom), 0xff);
        ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin) &&
                          strstr(d->reason, "the emulator runs unpinned"),
                      "%s", d->reason);

        /* a new start forgets it: placed anew, its emulator pinned as EmulatorPin= says */
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert_int_eq(virDomainCreate(dom), 0);
        for (unsigned i = 0; i < 3000 && (!(d = manager_lookup(m, "r-emurep")) || d->adopted ||
                                          cpuset_is_empty(d->plan->emulator_pin));
             i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        ck_assert_msg(d && !d->adopted && !d->plan->user_emulator_floating &&
                          !cpuset_is_empty(d->plan->emulator_pin) && !strstr(d->reason, "runs unpinned"),
                      "%s", d ? d->reason : "");
        ck_assert_int_ne(emulator_mask(dom), 0xff);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert_int_eq(virDomainUndefine(dom), 0);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* The emulator placementd pinned set floating by hand while placementd was down, beside a record that says
 * its user set it floating in another run (domain-id= of another start, emulator="": written by someone
 * else): the restarted daemon adopts the record, but its re-placement pins the emulator as EmulatorPin=
 * says, as it does without such a claim. */
START_TEST(test_emulator_floating_claim_of_other_run)
{
        const char *topology = "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr dom = start_xml("r-emuclaim", "<vcpu>1</vcpu>");
        g_autoptr(GRegex) id = g_regex_new(" domain-id=\"[0-9]+\"", 0, 0, NULL);
        g_autoptr(GRegex) emulator = g_regex_new(" emulator=\"[0-9,-]*\"", 0, 0, NULL);
        g_autofree char *error = NULL;
        g_autofree char *record = NULL;
        g_autofree char *other = NULL;
        g_autofree char *forged = NULL;
        const Decision *d;

        ck_assert(spin_known(m, "r-emuclaim", 3000));
        d = manager_lookup(m, "r-emuclaim");
        ck_assert_msg(!cpuset_is_empty(d->plan->emulator_pin), "%s", d->reason);
        free_manager(m);
        record = record_of(dom);
        ck_assert_msg(record && g_regex_match(id, record, 0, NULL), "%s", record);
        other = g_regex_replace_literal(id, record, -1, 0, " domain-id=\"4000\"", 0, NULL);
        forged = g_regex_replace_literal(emulator, other, -1, 0, " emulator=\"\" user-emulator=\"floating\"",
                                         0, NULL);
        ck_assert_msg(strstr(forged, "user-emulator=\"floating\""), "%s", forged);
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, forged, "placementd",
                                              PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                         0);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_known(m, "r-emuclaim", 3000));
        d = manager_lookup(m, "r-emuclaim");
        ck_assert_msg(d->adopted && !d->plan->user_emulator_floating, "%s", d->reason);
        ck_assert_int_eq(manager_replace(m, "r-emuclaim", &error), 0);
        d = manager_lookup(m, "r-emuclaim");
        ck_assert_msg(!cpuset_is_empty(d->plan->emulator_pin) && !strstr(d->reason, "runs unpinned"), "%s",
                      d->reason);
        ck_assert_int_ne(emulator_mask(dom), 0xff);
        stop(dom);
        free_manager(m);
}
END_TEST

static Suite *manager_reconcile_suite(void)
{
        Suite *s = suite_create("manager reconcile");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_restored_record_beside_gone_domain);
        tcase_add_test(tc, test_restored_emulator_pin_stays_within_start);
        tcase_add_test(tc, test_restart_does_not_narrow_unpinned_start);
        tcase_add_test(tc, test_opted_out_from_start_never_recorded);
        tcase_add_test(tc, test_iothread_id_beyond_read);
        tcase_add_test(tc, test_iothreadsched_id_beyond_read);
        tcase_add_test(tc, test_iothread_count_beyond_read);
        tcase_add_test(tc, test_restored_while_down_emulator_pin_stays_within_start);
        tcase_add_test(tc, test_restored_then_restart_keeps_start);
        tcase_add_test(tc, test_hand_emulator_rerecord_keeps_threads);
        tcase_add_test(tc, test_restored_emulator_pin_cut_off_apply);
        tcase_add_test(tc, test_new_domain_beside_gone_domain);
        tcase_add_test(tc, test_unreadable_live_xml_keeps_decision);
        tcase_add_test(tc, test_unreadable_from_start_counted_as_it_runs);
        tcase_add_test(tc, test_uri_change_keeps_place_running);
        tcase_add_test(tc, test_emulator_unpinned_while_down);
        tcase_add_test(tc, test_emulator_unpinned_by_hand_stays_replaced);
        tcase_add_test(tc, test_emulator_floating_claim_of_other_run);
        tcase_add_test(tc, test_unplaceable_then_pinned);
        tcase_add_test(tc, test_advised_then_pinned);
        tcase_add_test(tc, test_record_leaves_floating_vcpu_out);
        tcase_add_test(tc, test_compat_record_beside_neighbour);
        tcase_add_test(tc, test_compat_record_beside_explicit);
        tcase_add_test(tc, test_memory_bound_by_hand);
        tcase_add_test(tc, test_advised_memory_bound_by_hand);
        tcase_add_test(tc, test_advised_definition_edited);
        tcase_add_test(tc, test_compat_record_beside_fifo);
        tcase_add_test(tc, test_recreated_from_edited_live_xml);
        tcase_add_test(tc, test_pinned_by_hand_while_down);
        tcase_add_test(tc, test_hand_pins_while_down_recorded);
        tcase_add_test(tc, test_floating_vcpu_of_skipped_record_after_restart);
        tcase_add_test(tc, test_hand_pins_while_down_emulator_not_recorded_one);
        tcase_add_test(tc, test_started_with_edited_pins);
        tcase_add_test(tc, test_emulator_pinned_while_down_reason);
        tcase_add_test(tc, test_emulator_unpinned_by_hand_reason);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_reconcile_suite)
