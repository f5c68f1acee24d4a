/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user's constraints end to end in the manager, against libvirt's test driver (test:///default): the
 * request is built from the definition, the plan stays inside it, the user's memory binding, emulator
 * and I/O thread pins stand, the other I/O threads are pinned, and a live binding libvirt will not change
 * keeps the vCPUs with the memory on replace.
 */
#include <dlfcn.h>
#include <event2/event.h>
#include <inttypes.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <time.h>

#include "domain-xml.h"
#include "manager-fixture.h"
#include "manager-internal.h"
#include "metadata.h"
#include "test-util.h"
#include "virt-domain.h"

/* 8 PUs (the test driver accepts pins on CPUs 0-7 only): node 0 = CPUs 0-3, node 1 = CPUs 4-7. */
#define TOPOLOGY "synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"
#define MiB      (UINT64_C(1) << 20)
#define GiB      (UINT64_C(1) << 30)

static struct event_base *base;
static virConnectPtr conn;

/* The daemon's reads of a domain's XML (each one all of it, which its owner can make large). */
static unsigned xml_reads;

char *virDomainGetXMLDesc(virDomainPtr dom, unsigned int flags)
{
        static char *(*real)(virDomainPtr, unsigned int);

        xml_reads++;
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainGetXMLDesc");
        return real(dom, flags);
}

static void setup(void)
{
        fixture_open(&base, &conn, true);
}

static void teardown(void)
{
        fixture_close(base, conn);
}

static bool spin_until_known(Manager *m, const char *name)
{
        for (unsigned i = 0; i < 3000; i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                if (manager_lookup(m, name))
                        return true;
                nanosleep(&nap, NULL);
        }
        return false;
}

static Manager *new_manager(void)
{
        return fixture_manager_new(base, TOPOLOGY, NULL);
}

static void free_manager(Manager *m)
{
        manager_free(m);
        for (unsigned i = 0; i < 20; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

static virDomainPtr start(const char *name, unsigned vcpus, const char *vcpu_attrs, const char *extra)
{
        g_autofree char *xml = g_strdup_printf(
            "<domain type='test'><name>%s</name><memory unit='MiB'>512</memory><vcpu%s>%u</vcpu>"
            "<os><type>hvm</type></os>%s</domain>",
            name, vcpu_attrs ? vcpu_attrs : "", vcpus, extra ? extra : "");
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);
        ck_assert_msg(dom != NULL, "cannot start %s", name);
        return dom;
}

/* A persistent domain: its definition, unlike the live XML of a transient one, holds no pins of placementd.
 */
static virDomainPtr define_and_start(const char *name, unsigned vcpus)
{
        return fixture_define_and_start(conn, name, vcpus);
}

static void stop(virDomainPtr dom)
{
        virDomainDestroy(dom);
        if (virDomainIsPersistent(dom) == 1)
                virDomainUndefine(dom);
        virDomainFree(dom);
}

static CpuSet *set_of(const char *list)
{
        CpuSet *s = NULL;
        ck_assert_int_eq(cpuset_parse(list, &s, NULL), 0);
        return s;
}

/* Every live vCPU pin of dom lies inside allowed. */
static void assert_live_pins_inside(virDomainPtr dom, unsigned nvcpus, const CpuSet *allowed)
{
        CpuSet **pins = NULL;
        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, nvcpus, NULL, &pins, NULL), 0);
        for (unsigned i = 0; i < nvcpus; i++) {
                g_autoptr(CpuSet) outside = cpuset_copy(pins[i]);
                cpuset_subtract(outside, allowed);
                ck_assert_msg(cpuset_is_empty(outside), "vCPU %u pinned outside", i);
        }
        virt_pins_free(pins, nvcpus);
}

static char *live_nodeset(virDomainPtr dom)
{
        virTypedParameterPtr params = NULL;
        int n = 0;
        char *nodeset = NULL;

        ck_assert_int_eq(virDomainGetNumaParameters(dom, NULL, &n, VIR_DOMAIN_AFFECT_LIVE), 0);
        params = g_new0(virTypedParameter, n);
        ck_assert_int_eq(virDomainGetNumaParameters(dom, params, &n, VIR_DOMAIN_AFFECT_LIVE), 0);
        for (int i = 0; i < n; i++)
                if (strcmp(params[i].field, VIR_DOMAIN_NUMA_NODESET) == 0)
                        nodeset = g_strdup(params[i].value.s);
        virTypedParamsClear(params, n);
        g_free(params);
        return nodeset;
}

START_TEST(test_vcpu_cpuset_before_and_after_start)
{
        g_autoptr(CpuSet) allowed = set_of("4-7");
        virDomainPtr before = start("c-before", 2, " cpuset='4-7'", NULL);
        Manager *m = new_manager();
        virDomainPtr after;
        const Decision *d;

        /* running when placementd started */
        ck_assert(spin_until_known(m, "c-before"));
        d = manager_lookup(m, "c-before");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(cpuset_has(d->plan->nodes, 1) && cpuset_count(d->plan->nodes) == 1);
        assert_live_pins_inside(before, 2, allowed);
        ck_assert_msg(strstr(d->reason, "kept inside <vcpu cpuset='4-7'>"), "%s", d->reason);
        stop(before);

        /* started afterwards, on a host whose first node is idle */
        after = start("c-after", 1, " cpuset='4-7'", NULL);
        ck_assert(spin_until_known(m, "c-after"));
        d = manager_lookup(m, "c-after");
        ck_assert(cpuset_has(d->plan->nodes, 1) && cpuset_count(d->plan->nodes) == 1);
        assert_live_pins_inside(after, 1, allowed);
        stop(after);
        free_manager(m);
}
END_TEST

START_TEST(test_user_numatune_stands)
{
        Manager *m = new_manager();
        virDomainPtr dom =
            start("c-numa", 2, NULL, "<numatune><memory mode='strict' nodeset='1'/></numatune>");
        g_autoptr(CpuSet) node1 = set_of("4-7");
        g_autofree char *nodeset = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-numa"));
        d = manager_lookup(m, "c-numa");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        /* cores where the memory is, the memory counted there, the binding untouched */
        ck_assert(cpuset_has(d->plan->nodes, 1) && cpuset_count(d->plan->nodes) == 1);
        assert_live_pins_inside(dom, 2, node1);
        ck_assert_uint_eq(d->plan->node_memory[0], 0);
        ck_assert_uint_eq(d->plan->node_memory[1], 512 * MiB);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), 1), 512 * MiB);
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_KEPT);
        nodeset = live_nodeset(dom);
        ck_assert_str_eq(nodeset, "1");
        /* a restarted daemon adopts the record as it is: "kept" is a binding it knows */
        free_manager(m);
        m = new_manager();
        ck_assert(spin_until_known(m, "c-numa"));
        d = manager_lookup(m, "c-numa");
        ck_assert_msg(d->adopted, "%s", d->reason);
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_KEPT);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), 1), 512 * MiB);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A domain floating on its own <vcpu cpuset>, every CPU of which ReservedCPUs= keeps (Nova's
 * cpu_shared_set): unplaceable at its start, nothing pinned and nothing counted on those CPUs, as before
 * anything was placed: its cpuset is no pin of placementd's to keep counting */
START_TEST(test_start_unplaceable_floating_not_counted)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nReservedCPUs=4-5\n");
        virDomainPtr dom = start("c-shared", 1, " cpuset='4-5'", NULL);
        const Decision *d;

        ck_assert(spin_until_known(m, "c-shared"));
        d = manager_lookup(m, "c-shared");
        ck_assert_msg(d->result == DECISION_UNPLACEABLE && !strstr(d->reason, "runs on the pins it had"),
                      "%s", d->reason);
        ck_assert_uint_eq(
            ledger_pu_load(manager_ledger(m), (unsigned)topology_pu_by_os(manager_topology(m), 4)), 0);
        stop(dom);
        free_manager(m);
}
END_TEST

/* <numatune><memory mode='preferred'> larger than its node: the rest counted on the nearest node with room
 * (where the kernel falls back), and a restarted daemon adopts that record, memory off the preferred node
 * and all */
START_TEST(test_preferred_spill_adopted)
{
        Manager *m = new_manager();
        virDomainPtr dom = virDomainCreateXML(
            conn,
            "<domain type='test'><name>c-pref</name><memory unit='GiB'>10</memory><vcpu>1</vcpu>"
            "<os><type>hvm</type></os><numatune><memory mode='preferred' nodeset='1'/></numatune></domain>",
            0);
        const Decision *d;

        ck_assert_ptr_nonnull(dom);
        ck_assert(spin_until_known(m, "c-pref"));
        d = manager_lookup(m, "c-pref");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_msg(d->plan->node_memory[0] > 0 && d->plan->node_memory[1] <= 8 * GiB, "%s", d->reason);
        free_manager(m);
        m = new_manager();
        ck_assert(spin_until_known(m, "c-pref"));
        d = manager_lookup(m, "c-pref");
        ck_assert_msg(d->adopted, "%s", d->reason);
        ck_assert_uint_eq(d->plan->node_memory[0] + d->plan->node_memory[1], 10 * GiB);
        stop(dom);
        free_manager(m);
}
END_TEST

/* <vcpu cpuset> on node 0 with memory strict on node 1 (libvirt runs it so): the vCPUs inside the cpuset,
 * the memory counted on node 1, and a restarted daemon adopts that record (its memory off the plan's
 * nodes, where the live definition binds it) rather than placing the domain anew */
START_TEST(test_cpuset_apart_from_memory_adopted)
{
        Manager *m = new_manager();
        virDomainPtr dom =
            start("c-apart", 2, " cpuset='0-3'", "<numatune><memory mode='strict' nodeset='1'/></numatune>");
        g_autoptr(CpuSet) node0 = set_of("0-3");
        const Decision *d;

        ck_assert(spin_until_known(m, "c-apart"));
        d = manager_lookup(m, "c-apart");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        assert_live_pins_inside(dom, 2, node0);
        ck_assert_uint_eq(d->plan->node_memory[1], 512 * MiB);
        free_manager(m);
        m = new_manager();
        ck_assert(spin_until_known(m, "c-apart"));
        d = manager_lookup(m, "c-apart");
        ck_assert_msg(d->adopted, "%s", d->reason);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), 1), 512 * MiB);
        assert_live_pins_inside(dom, 2, node0);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_user_emulatorpin_stands)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("c-emu", 1, NULL, "<cputune><emulatorpin cpuset='7'/></cputune>");
        unsigned char map[1] = {0};
        const Decision *d;

        ck_assert(spin_until_known(m, "c-emu"));
        d = manager_lookup(m, "c-emu");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(cpuset_is_empty(d->plan->emulator_pin));
        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        ck_assert_uint_eq(map[0], 0x80);
        stop(dom);
        free_manager(m);
}
END_TEST

/* The live pin of vCPU i of dom as a mask of CPUs 0-7. */
static unsigned vcpu_mask(virDomainPtr dom, unsigned i)
{
        unsigned char map[8][1] = {{0}};

        ck_assert_int_ge(virDomainGetVcpuPinInfo(dom, 8, &map[0][0], 1, VIR_DOMAIN_AFFECT_LIVE), (int)i + 1);
        return map[i][0];
}

/* A 4-vCPU guest whose <emulatorpin> keeps CPU 4 for QEMU's threads must put a vCPU on its core (the host
 * has 4 cores): an ordinary one, not its realtime vCPU (Nova's realtime mask), which took it when it was
 * the vCPU left over. All realtime, one of them must take it: said, the user's pin left as it is. */
START_TEST(test_realtime_vcpus_and_user_emulatorpin)
{
        static const char *const rts[] = {"0", "3"};

        for (unsigned k = 0; k < G_N_ELEMENTS(rts); k++) {
                Manager *m = new_manager();
                g_autofree char *extra = g_strdup_printf(
                    "<cputune><emulatorpin cpuset='4'/><vcpusched vcpus='%s' scheduler='fifo' "
                    "priority='1'/></cputune>",
                    rts[k]);
                g_autofree char *name = g_strdup_printf("c-rtemu%u", k);
                virDomainPtr dom = start(name, 4, NULL, extra);
                const Decision *d;

                ck_assert(spin_until_known(m, name));
                d = manager_lookup(m, name);
                ck_assert_int_eq(d->result, DECISION_PLACED);
                ck_assert(cpuset_is_empty(d->plan->emulator_pin));
                ck_assert_msg(!(vcpu_mask(dom, (unsigned)atoi(rts[k])) & 0x10),
                              "realtime vCPU %s on the user's emulator CPU: %s", rts[k], d->reason);
                ck_assert_msg(!strstr(d->reason, "may starve"), "%s", d->reason);
                stop(dom);
                free_manager(m);
        }
        {
                Manager *m = new_manager();
                virDomainPtr dom =
                    start("c-rtemu-all", 4, NULL,
                          "<cputune><emulatorpin cpuset='4'/><vcpusched vcpus='0-3' scheduler='fifo' "
                          "priority='1'/></cputune>");
                unsigned char map[1] = {0};
                const Decision *d;

                ck_assert(spin_until_known(m, "c-rtemu-all"));
                d = manager_lookup(m, "c-rtemu-all");
                ck_assert_msg(strstr(d->reason,
                                     "runs on CPU 4, where the user pins the emulator: a realtime "
                                     "vCPU that spins may starve it"),
                              "%s", d->reason);
                ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
                ck_assert_uint_eq(map[0], 0x10);
                stop(dom);
                free_manager(m);
        }
}
END_TEST

/* A realtime guest whose emulator and I/O thread run FIFO too (<emulatorsched>, <iothreadsched>) on a host
 * of two one-core nodes, the other core another domain's: its QEMU threads go beside that domain's vCPU,
 * not onto its own FIFO vCPU, and the reason says they preempt it whenever they have work (not said). */
START_TEST(test_realtime_threads_beside_vcpus_said)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:2(memory=8GiB) core:1 pu:1", NULL);
        virDomainPtr a = start("c-a", 1, NULL, NULL), rt;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-a"));
        rt = start("c-rtio", 1, NULL,
                   "<iothreads>1</iothreads><cputune><vcpusched vcpus='0' scheduler='fifo' priority='1'/>"
                   "<emulatorsched scheduler='fifo' priority='1'/><iothreadsched iothreads='1' "
                   "scheduler='fifo' priority='1'/></cputune>");
        ck_assert(spin_until_known(m, "c-rtio"));
        d = manager_lookup(m, "c-rtio");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(!cpuset_has(d->plan->iothread_pin, (unsigned)d->plan->vcpu_pu[0]));
        ck_assert_msg(strstr(d->reason,
                             "; the emulator runs realtime (FIFO/RR) on CPU 0, where vCPUs of c-a run: "
                             "it preempts them whenever it has work; its I/O thread 1 runs realtime "
                             "(FIFO/RR) on CPU 0, where vCPUs of c-a run"),
                      "%s", d->reason);
        stop(rt);
        stop(a);
        free_manager(m);
}
END_TEST

/* A guest kept by its <vcpu cpuset> on the CPU of another's realtime vCPU says so, naming it; once that
 * guest is gone its reason names it no more, in the daemon and in the record it writes. */
START_TEST(test_realtime_neighbour_gone_not_named)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:2(memory=8GiB) core:1 pu:1", NULL);
        virDomainPtr rt = start("c-rtn", 1, NULL,
                                "<cputune><vcpusched vcpus='0' scheduler='fifo' priority='1'/></cputune>");
        virDomainPtr b;
        g_autofree char *attrs = NULL, *record = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-rtn"));
        d = manager_lookup(m, "c-rtn");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        attrs = g_strdup_printf(" cpuset='%u'", manager_topology(m)->pus[d->plan->vcpu_pu[0]].os_index);
        b = start("c-beside-rt", 1, attrs, NULL);
        ck_assert(spin_until_known(m, "c-beside-rt"));
        d = manager_lookup(m, "c-beside-rt");
        ck_assert_msg(strstr(d->reason, "cores with realtime (FIFO/RR) vCPUs of another domain (c-rtn)"),
                      "%s", d->reason);
        stop(rt);
        for (unsigned i = 0; i < 3000 && manager_lookup(m, "c-rtn"); i++)
                spin_until_known(m, "no such domain, a pass of the loop");
        ck_assert(!manager_lookup(m, "c-rtn"));
        for (unsigned i = 0; i < 50; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        d = manager_lookup(m, "c-beside-rt");
        ck_assert_msg(!strstr(d->reason, "c-rtn") && !strstr(d->reason, "FIFO/RR"), "%s", d->reason);
        record =
            virDomainGetMetadata(b, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(record && !strstr(record, "c-rtn"), "%s", record ? record : "(no record)");
        stop(b);
        free_manager(m);

        /* gone while placementd was down: the record adopted names it no more */
        m = fixture_manager_new(base, "synthetic:pack:1 numa:2(memory=8GiB) core:1 pu:1", NULL);
        rt = start("c-rtn2", 1, NULL,
                   "<cputune><vcpusched vcpus='0' scheduler='fifo' priority='1'/></cputune>");
        ck_assert(spin_until_known(m, "c-rtn2"));
        d = manager_lookup(m, "c-rtn2");
        g_free(attrs);
        attrs = g_strdup_printf(" cpuset='%u'", manager_topology(m)->pus[d->plan->vcpu_pu[0]].os_index);
        b = start("c-beside-rt2", 1, attrs, NULL);
        ck_assert(spin_until_known(m, "c-beside-rt2"));
        ck_assert_msg(strstr(manager_lookup(m, "c-beside-rt2")->reason, "(c-rtn2)"), "%s",
                      manager_lookup(m, "c-beside-rt2")->reason);
        free_manager(m);
        stop(rt);
        m = fixture_manager_new(base, "synthetic:pack:1 numa:2(memory=8GiB) core:1 pu:1", NULL);
        ck_assert(spin_until_known(m, "c-beside-rt2"));
        for (unsigned i = 0; i < 50; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        d = manager_lookup(m, "c-beside-rt2");
        ck_assert_msg(d->adopted, "%s", d->reason);
        ck_assert_msg(!strstr(d->reason, "c-rtn2"), "%s", d->reason);
        stop(b);
        free_manager(m);
}
END_TEST

/* Without SMT a guest's emulator goes to free cores, and a realtime guest placed after it on those cores is
 * told its FIFO vCPUs may starve that emulator. The first guest leaves while placementd is down: the
 * realtime guest's record, adopted placed (not overcommitted), names it no more. */
START_TEST(test_realtime_over_gone_emulator_adopted)
{
        static const char topology[] = "synthetic:pack:1 numa:1(memory=8GiB) core:4 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr a = start("c-emu-a", 2, NULL, NULL), rt;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-emu-a"));
        rt = start("c-rt-over", 2, NULL,
                   "<cputune><vcpusched vcpus='0-1' scheduler='fifo' priority='1'/></cputune>");
        ck_assert(spin_until_known(m, "c-rt-over"));
        d = manager_lookup(m, "c-rt-over");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_msg(strstr(d->reason, "where c-emu-a's emulator or I/O threads are pinned too"), "%s",
                      d->reason);
        free_manager(m);
        stop(a);
        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_until_known(m, "c-rt-over"));
        for (unsigned i = 0; i < 50; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        d = manager_lookup(m, "c-rt-over");
        ck_assert_msg(d->adopted && d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_msg(!strstr(d->reason, "c-emu-a"), "%s", d->reason);
        stop(rt);
        free_manager(m);
}
END_TEST

/* The same two guests, both running: the earlier one is told too, in placementctl and its record, that its
 * emulator now shares cores with the realtime guest's FIFO vCPUs, and no more once that guest stopped. */
START_TEST(test_realtime_arrival_told_to_the_earlier)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:1(memory=8GiB) core:4 pu:1", NULL);
        virDomainPtr a = start("c-emu-b", 2, NULL, NULL), rt;
        g_autofree char *before = NULL, *record = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-emu-b"));
        before = g_strdup(manager_lookup(m, "c-emu-b")->reason);
        rt = start("c-rt-late", 2, NULL,
                   "<cputune><vcpusched vcpus='0-1' scheduler='fifo' priority='1'/></cputune>");
        ck_assert(spin_until_known(m, "c-rt-late"));
        for (unsigned i = 0; i < 50; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        d = manager_lookup(m, "c-emu-b");
        ck_assert_msg(strstr(d->reason,
                             "; the emulator shares cores with realtime (FIFO/RR) vCPUs of another "
                             "domain (c-rt-late)"),
                      "%s", d->reason);
        ck_assert_msg(g_str_has_prefix(d->reason, before), "%s\nwas\n%s", d->reason, before);
        record =
            virDomainGetMetadata(a, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(record && strstr(record, "c-rt-late"), "%s", record ? record : "(no record)");
        stop(rt);
        for (unsigned i = 0; i < 3000 && manager_lookup(m, "c-rt-late"); i++)
                spin_until_known(m, "no such domain, a pass of the loop");
        for (unsigned i = 0; i < 50; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        ck_assert_str_eq(manager_lookup(m, "c-emu-b")->reason, before);
        stop(a);
        free_manager(m);
}
END_TEST

/* A guest whose emulator and I/O thread run FIFO (<emulatorsched>, <iothreadsched>) on a host of one node of
 * two cores: its vCPU takes CPU 0 and its QEMU threads CPU 1, the free core of its node. A guest started
 * after it shares CPU 0 with the ordinary vCPU rather than take CPU 1, where the FIFO threads would preempt
 * it whenever they have work (it took CPU 1); a restarted daemon holds CPU 1 so as well. */
START_TEST(test_realtime_threads_hold_their_core_live)
{
        static const char *const topology = "synthetic:pack:1 numa:1(memory=8GiB) core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr rt = start("c-rthold", 1, NULL,
                                "<iothreads>1</iothreads><cputune><emulatorsched scheduler='fifo' "
                                "priority='1'/><iothreadsched iothreads='1' scheduler='fifo' "
                                "priority='1'/></cputune>"),
                     b;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-rthold"));
        d = manager_lookup(m, "c-rthold");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(vcpu_mask(rt, 0), 0x1);
        ck_assert(cpuset_has(d->plan->emulator_pin, 1) && cpuset_count(d->plan->emulator_pin) == 1);
        ck_assert_uint_eq(ledger_core_realtime(manager_ledger(m), 1), 1);
        free_manager(m);

        m = fixture_manager_new(base, topology, NULL);
        ck_assert(spin_until_known(m, "c-rthold"));
        ck_assert_msg(manager_lookup(m, "c-rthold")->adopted, "%s", manager_lookup(m, "c-rthold")->reason);
        ck_assert_uint_eq(ledger_core_realtime(manager_ledger(m), 1), 1);
        ck_assert(!ledger_core_free(manager_ledger(m), 1));
        b = start("c-rtnext", 1, NULL, NULL);
        ck_assert(spin_until_known(m, "c-rtnext"));
        d = manager_lookup(m, "c-rtnext");
        ck_assert_msg(vcpu_mask(b, 0) == 0x1, "its vCPU beside the FIFO emulator: %s", d->reason);
        stop(b);
        stop(rt);
        free_manager(m);
}
END_TEST

/* A guest whose definition pins its FIFO emulator itself (<emulatorpin cpuset='1'>, <emulatorsched>) on one
 * node of two cores: CPU 1 is held for it and counts as a realtime thread's core, in every view and in the
 * ledger, placed and adopted again by a restarted daemon (it was held as an ordinary emulator's). */
START_TEST(test_users_realtime_emulator_held_live)
{
        static const char *const topology = "synthetic:pack:1 numa:1(memory=8GiB) core:2 pu:1";
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr rt = start("c-rtuser", 1, NULL,
                                "<cputune><emulatorpin cpuset='1'/><emulatorsched scheduler='fifo' "
                                "priority='1'/></cputune>");

        for (unsigned run = 0; run < 2; run++) {
                const Decision *d;
                g_autoptr(CpuSet) held = NULL;
                if (run) {
                        free_manager(m);
                        m = fixture_manager_new(base, topology, NULL);
                }
                ck_assert(spin_until_known(m, "c-rtuser"));
                d = manager_lookup(m, "c-rtuser");
                ck_assert_msg(vcpu_mask(rt, 0) == 0x1, "%s", d->reason);
                ck_assert(!run || d->adopted);
                held = plan_held_thread_pus(manager_topology(m), d->plan);
                ck_assert(cpuset_has(held, 1) && cpuset_count(held) == 1);
                ck_assert_uint_eq(ledger_core_realtime(manager_ledger(m), 1), 1);
        }
        stop(rt);
        free_manager(m);
}
END_TEST

/* Interleaved guest cells (0,2 and 1,3) from the definition: each cell's vCPUs pinned on one node. */
START_TEST(test_guest_cells_pinned_per_node)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("c-cells", 4, NULL,
                                 "<cpu><numa><cell id='0' cpus='0,2' memory='256' unit='MiB'/>"
                                 "<cell id='1' cpus='1,3' memory='256' unit='MiB'/></numa></cpu>");
        g_autoptr(CpuSet) node0 = set_of("0-3");
        g_autoptr(CpuSet) node1 = set_of("4-7");
        CpuSet **pins = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-cells"));
        d = manager_lookup(m, "c-cells");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(d->plan->ncells, 2);
        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, 4, NULL, &pins, NULL), 0);
        for (unsigned v = 0; v < 4; v++) {
                g_autoptr(CpuSet) outside = cpuset_copy(pins[v]);
                cpuset_subtract(outside, v % 2 ? node1 : node0);
                ck_assert_msg(cpuset_is_empty(outside), "vCPU %u of cell %u pinned off its node (%s)", v,
                              v % 2, d->reason);
        }
        virt_pins_free(pins, 4);
        ck_assert_uint_eq(d->plan->node_memory[0], 256 * MiB);
        ck_assert_uint_eq(d->plan->node_memory[1], 256 * MiB);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A guest that passes a host NIC through (an SR-IOV VF as <interface type='hostdev'>) runs on the NIC's
 * node, read from the live definition and the host's PCI locality; a plain guest still takes node 0. */
START_TEST(test_pci_device_node)
{
        g_autofree char *topology = test_topology_path("two-node-pci.xml");
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr nic =
            start("c-nic", 2, NULL,
                  "<devices><interface type='hostdev' managed='yes'><source><address type='pci' "
                  "domain='0x0000' bus='0xaf' slot='0x00' function='0x0'/></source>"
                  "</interface></devices>");
        g_autoptr(CpuSet) node1 = set_of("4-7");
        const Decision *d;

        ck_assert(spin_until_known(m, "c-nic"));
        d = manager_lookup(m, "c-nic");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        assert_live_pins_inside(nic, 2, node1);
        ck_assert_msg(strstr(d->reason, "near its PCI devices (node 1)"), "%s", d->reason);
        stop(nic);
        free_manager(m);
}
END_TEST

/* Hugepage-backed memory on a host without hugepage pools: unplaceable, never counted in general memory. */
START_TEST(test_hugepages_without_pool)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("c-huge", 1, NULL, "<memoryBacking><hugepages/></memoryBacking>");
        const Decision *d;

        ck_assert(spin_until_known(m, "c-huge"));
        d = manager_lookup(m, "c-huge");
        ck_assert_int_eq(d->result, DECISION_UNPLACEABLE);
        ck_assert_msg(strstr(d->reason, "512.0 MiB in 2.0 MiB hugepages"), "%s", d->reason);
        ck_assert_uint_eq(
            ledger_node_memory(manager_ledger(m), 0) + ledger_node_memory(manager_ledger(m), 1), 0);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothreads_pinned_user_pin_stands)
{
        /* I/O thread 1 goes where the emulator goes; the user's pin of I/O thread 2 stands */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-io", 1, NULL,
                                 "<iothreads>2</iothreads><cputune><iothreadpin iothread='2' cpuset='7'/>"
                                 "</cputune>");
        g_autofree char *ids = NULL, *pin = NULL;
        unsigned char emulator[1] = {0};
        const Decision *d;

        ck_assert(spin_until_known(m, "c-io"));
        d = manager_lookup(m, "c-io");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ids = cpuset_format(d->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        ck_assert(cpuset_equal(d->plan->iothread_pin, d->plan->emulator_pin));
        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, emulator, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        ck_assert_int_eq(fixture_iothread_map(dom, 1), emulator[0]);
        ck_assert_int_eq(fixture_iothread_map(dom, 2), 0x80);
        ck_assert_msg(strstr(d->reason, "I/O thread 2 stays where <cputune><iothreadpin> puts it"), "%s",
                      d->reason);
        pin = cpuset_format(d->plan->iothread_pin);
        free_manager(m);

        /* a restarted daemon reads the I/O threads back from the recorded decision */
        m = new_manager();
        ck_assert(spin_until_known(m, "c-io"));
        d = manager_lookup(m, "c-io");
        ck_assert(d->adopted);
        g_free(ids);
        ids = cpuset_format(d->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        {
                g_autofree char *again = cpuset_format(d->plan->iothread_pin);
                ck_assert_str_eq(again, pin);
        }
        stop(dom);
        free_manager(m);
}
END_TEST

/* The PU index of host CPU os on m's topology. */
static unsigned pu_of(Manager *m, unsigned os)
{
        int pu = topology_pu_by_os(manager_topology(m), os);
        ck_assert_int_ge(pu, 0);
        return (unsigned)pu;
}

#define IOTHREAD1_ON_7 "<iothreads>2</iothreads><cputune><iothreadpin iothread='1' cpuset='7'/></cputune>"

START_TEST(test_iothreadpin_hold_follows_thread)
{
        /* the CPU of an <iothreadpin> is held while that I/O thread runs there: deleted live, nothing of
         * the domain runs on it and the hold goes with it; added back live and pinned as the definition
         * says, it is held again */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-ioh", 1, NULL, IOTHREAD1_ON_7);
        unsigned pu7 = pu_of(m, 7);
        unsigned char map = 0x80;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-ioh"));
        d = manager_lookup(m, "c-ioh");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(cpuset_has(d->plan->held_pus, pu7));
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu7), 1);
        ck_assert_int_eq(virDomainDelIOThread(dom, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-ioh");
        ck_assert(cpuset_is_empty(d->plan->held_pus));
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu7), 0);
        manager_reconcile(m); /* and it stays so */
        ck_assert(cpuset_is_empty(manager_lookup(m, "c-ioh")->plan->held_pus));
        ck_assert_int_eq(virDomainAddIOThread(dom, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        ck_assert_int_eq(virDomainPinIOThread(dom, 1, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-ioh");
        ck_assert(cpuset_has(d->plan->held_pus, pu7));
        ck_assert(!cpuset_has(d->plan->iothreads, 1)); /* the user's, as the definition says */
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu7), 1);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothreadpin_on_rule_not_taken)
{
        /* an <iothreadpin> on the very CPUs the decision pins the other I/O threads to (here the one CPU
         * of <vcpu cpuset>, where the emulator goes too) is still the definition's: the reconcile does not
         * take that I/O thread for one added live and pinned by the decision's rule, so no re-placement
         * later moves it with the rule or undoes it as placementd's own */
        Manager *m = new_manager();
        virDomainPtr dom =
            start("c-iorule", 1, " cpuset='4'",
                  "<iothreads>2</iothreads><cputune><iothreadpin iothread='1' cpuset='4'/></cputune>");
        g_autofree char *ids = NULL, *after = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-iorule"));
        d = manager_lookup(m, "c-iorule");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ids = cpuset_format(d->plan->iothreads);
        ck_assert_str_eq(ids, "2");
        ck_assert_int_eq(fixture_iothread_map(dom, 1), 0x10);
        ck_assert_int_eq(fixture_iothread_map(dom, 2),
                         0x10); /* the rule: the emulator's CPU, inside the cpuset */
        manager_reconcile(m);
        d = manager_lookup(m, "c-iorule");
        after = cpuset_format(d->plan->iothreads);
        ck_assert_msg(strcmp(after, "2") == 0, "the decision's I/O threads are %s after a reconcile", after);
        ck_assert_int_eq(fixture_iothread_map(dom, 1), 0x10);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A CPU (as a one-byte map) that the rule pinning dom's I/O thread id does not name: where a hand pin
 * puts it apart from placementd's pins. */
static unsigned char off_rule_cpu(virDomainPtr dom, unsigned id)
{
        int rule = fixture_iothread_map(dom, id);

        ck_assert_int_gt(rule, 0);
        for (unsigned bit = 0x80; bit; bit >>= 1)
                if (!(rule & (int)bit))
                        return (unsigned char)bit;
        ck_abort_msg("the rule 0x%x names every CPU", rule);
        return 0;
}

START_TEST(test_hand_iothread_pin_stands_on_replace)
{
        /* an I/O thread pinned by hand (virsh iothreadpin --live) away from the decision's rule is the
         * user's from then on: the reconcile leaves it there, and a later re-placement (replace, a reload,
         * a heal move) pins the decision's other I/O threads only, never that one back, also after a
         * restart; the reason says the pin was made outside placementd, not by an <iothreadpin> */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-iohand", 1, NULL, "<iothreads>2</iothreads>");
        g_autofree char *error = NULL, *ids = NULL;
        unsigned char map;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-iohand"));
        map = off_rule_cpu(dom, 2);
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ids = cpuset_format(manager_lookup(m, "c-iohand")->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        ck_assert_msg(manager_replace(m, "c-iohand", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-iohand");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        /* its definition pins no I/O thread: the reason says where the pin came from */
        ck_assert_msg(strstr(d->reason, "I/O thread 2 stays where it was pinned outside placementd (virsh "
                                        "iothreadpin)") &&
                          !strstr(d->reason, "<cputune><iothreadpin>"),
                      "%s", d->reason);
        ck_assert_msg(fixture_iothread_map(dom, 2) == map,
                      "I/O thread 2 runs on 0x%x after the replace, pinned by hand to 0x%x",
                      fixture_iothread_map(dom, 2), map);
        g_free(ids);
        ids = cpuset_format(d->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        free_manager(m);

        /* and so after a restart, which adopts the record that leaves it out */
        m = new_manager();
        ck_assert(spin_until_known(m, "c-iohand"));
        ck_assert_msg(manager_replace(m, "c-iohand", &error) == 0, "%s", error);
        ck_assert_int_eq(fixture_iothread_map(dom, 2), map);
        stop(dom);
        free_manager(m);
}
END_TEST

/*
 * ... and after a restart whose configuration keeps the CPU its vCPU ran on for the host (ReservedCPUs=
 * changed while placementd was down, or the domain saved and restored across such a reload): its record is
 * not adopted and it is placed anew, yet I/O thread id, pinned by hand while placementd ran (the record
 * names it as the user's) or while it was down (down: off where the record says placementd pinned it),
 * stays where it was pinned, as the emulator does (it was pinned to the new plan's emulator CPUs); the
 * other thread, where placementd pinned it, is placementd's still.
 */
static void hand_iothread_placed_anew(const char *name, unsigned id, bool down)
{
        Manager *m = new_manager();
        virDomainPtr dom = start(name, 1, NULL, "<iothreads>2</iothreads>");
        g_autofree char *conf = NULL;
        unsigned char map = 0;
        const Decision *d;
        int vcpu_cpu;

        ck_assert(spin_until_known(m, name));
        if (!down) {
                map = off_rule_cpu(dom, id);
                ck_assert_int_eq(virDomainPinIOThread(dom, id, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
                manager_reconcile(m);
        }
        d = manager_lookup(m, name);
        ck_assert(cpuset_has(d->plan->user_iothreads, id) == !down);
        vcpu_cpu = cpuset_next(d->plan->vcpu_pins[0], 0);
        ck_assert_int_ge(vcpu_cpu, 0);
        free_manager(m);

        if (down) {
                map = off_rule_cpu(dom, id);
                ck_assert_int_eq(virDomainPinIOThread(dom, id, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        }
        conf = g_strdup_printf("[Placement]\nReservedCPUs=%d\n", vcpu_cpu);
        m = fixture_manager_new(base, TOPOLOGY, conf);
        ck_assert(spin_until_known(m, name));
        d = manager_lookup(m, name);
        ck_assert_msg(!cpuset_has(d->plan->vcpu_pins[0], (unsigned)vcpu_cpu), "%s", d->reason);
        ck_assert_msg(fixture_iothread_map(dom, id) == map,
                      "I/O thread %u runs on 0x%x once placed anew, pinned by hand to 0x%x: %s", id,
                      fixture_iothread_map(dom, id), map, d->reason);
        ck_assert(cpuset_has(d->plan->user_iothreads, id));
        ck_assert(!cpuset_has(d->plan->user_iothreads, 3 - id));
        stop(dom);
        free_manager(m);
}

START_TEST(test_hand_iothread_pin_stands_when_placed_anew)
{
        hand_iothread_placed_anew("c-iohandnew", 2, false);
}
END_TEST

START_TEST(test_iothread_pinned_while_down_stands_when_placed_anew)
{
        hand_iothread_placed_anew("c-iodown", 1, true);
}
END_TEST

/* I/O thread 2 pinned by hand off the rule, then vCPU 0 too (skipped), then replaced: the I/O thread stays
 * where its user pinned it (defpin: the definition pins I/O thread 2 itself, somewhere else again), also
 * after a restart (restart), which adopts the skipped record. */
static void hand_iothread_of_skipped(const char *name, bool defpin, bool restart)
{
        Manager *m = new_manager();
        g_autofree char *xml = g_strdup_printf(
            "<domain type='test'><name>%s</name><memory unit='MiB'>512</memory><vcpu>1</vcpu><os><type>hvm"
            "</type></os><iothreads>2</iothreads>%s</domain>",
            name, defpin ? "<cputune><iothreadpin iothread='2' cpuset='5'/></cputune>" : "");
        /* persistent when the definition pins: its <iothreadpin> stays 5 while the live one is the hand's */
        virDomainPtr dom = defpin ? virDomainDefineXML(conn, xml) : virDomainCreateXML(conn, xml, 0);
        g_autofree char *error = NULL;
        unsigned char map, vcpu;

        ck_assert_ptr_nonnull(dom);
        ck_assert(!defpin || virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, name));
        map = off_rule_cpu(dom, 1);
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        vcpu = map == 0x80 ? 0x40 : 0x80;
        ck_assert_int_eq(virDomainPinVcpuFlags(dom, 0, &vcpu, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        ck_assert_int_eq(manager_lookup(m, name)->result, DECISION_SKIPPED);
        if (restart) { /* adopted from its record, skipped */
                free_manager(m);
                m = new_manager();
                ck_assert(spin_until_known(m, name));
                ck_assert_int_eq(manager_lookup(m, name)->result, DECISION_SKIPPED);
        }
        ck_assert_msg(manager_replace(m, name, &error) == 0, "%s", error);
        ck_assert_int_eq(manager_lookup(m, name)->result, DECISION_PLACED);
        ck_assert_msg(fixture_iothread_map(dom, 2) == map,
                      "I/O thread 2 runs on 0x%x after the replace, pinned by hand to 0x%x",
                      fixture_iothread_map(dom, 2), map);
        stop(dom);
        free_manager(m);
}

START_TEST(test_hand_iothread_pin_of_skipped_stands_on_replace)
{
        hand_iothread_of_skipped("c-ioskip", false, false);
        hand_iothread_of_skipped("c-ioskip2", false, true);
}
END_TEST

START_TEST(test_hand_pin_over_iothreadpin_stands_on_replace)
{
        hand_iothread_of_skipped("c-ioskipdef", true, false);
        hand_iothread_of_skipped("c-ioskipdef2", true, true);
}
END_TEST

START_TEST(test_hand_iothread_deleted_leaves_reason)
{
        /* I/O threads pinned by hand, named in the reason by a re-placement, then one of them deleted live
         * (virsh iothreaddel --live): the reason, shown and recorded, no longer says the deleted one stays
         * where it was pinned, and still says so of the other */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-iodel", 1, NULL, "<iothreads>3</iothreads>");
        g_autofree char *error = NULL, *record = NULL;
        unsigned char map;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-iodel"));
        map = off_rule_cpu(dom, 2);
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        ck_assert_int_eq(virDomainPinIOThread(dom, 3, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert_msg(manager_replace(m, "c-iodel", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-iodel");
        ck_assert_msg(strstr(d->reason, "I/O threads 2-3 stay where they were pinned outside placementd"),
                      "%s", d->reason);
        ck_assert_int_eq(virDomainDelIOThread(dom, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-iodel");
        ck_assert_msg(!strstr(d->reason, "2-3") &&
                          strstr(d->reason,
                                 "I/O thread 3 stays where it was pinned outside placementd (virsh "
                                 "iothreadpin)"),
                      "%s", d->reason);
        ck_assert_int_eq(virDomainDelIOThread(dom, 3, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-iodel");
        ck_assert_msg(!strstr(d->reason, "I/O thread 3"), "%s", d->reason);
        record =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(record && !strstr(record, "pinned outside placementd"), "%s", record);
        stop(dom);
        free_manager(m);
}
END_TEST

/* ... and so it stays after a re-placement: a thread the definition pins (<cputune><iothreadpin>) that was
 * deleted live is not named again among those that stay where the definition puts them */
START_TEST(test_definition_iothread_deleted_not_named_on_replace)
{
        Manager *m = new_manager();
        virDomainPtr dom = start("c-iodefdel", 1, NULL,
                                 "<iothreads>3</iothreads><cputune><iothreadpin iothread='2' cpuset='7'/>"
                                 "<iothreadpin iothread='3' cpuset='7'/></cputune>");
        g_autofree char *error = NULL, *record = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-iodefdel"));
        d = manager_lookup(m, "c-iodefdel");
        ck_assert_msg(strstr(d->reason, "I/O threads 2-3 stay where <cputune><iothreadpin> puts them"), "%s",
                      d->reason);
        ck_assert_int_eq(virDomainDelIOThread(dom, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert_msg(manager_replace(m, "c-iodefdel", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-iodefdel");
        ck_assert_msg(!strstr(d->reason, "2-3") &&
                          strstr(d->reason, "I/O thread 3 stays where <cputune><iothreadpin> puts it"),
                      "%s", d->reason);
        record =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(record && !strstr(record, "2-3 stay"), "%s", record);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothread_unpinned_by_hand_left_so)
{
        /* an I/O thread of the decision unpinned by hand (virsh iothreadpin DOM 2 0-7 --live, libvirt's
         * default again) is the user's as any hand pin is: the reconcile leaves it there and the ones after
         * it do not take it for one added live and pin it back (until 2026-12-07 the next one did) */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-iounpin", 1, NULL, "<iothreads>2</iothreads>");
        unsigned char all = 0xff;
        g_autofree char *ids = NULL;

        ck_assert(spin_until_known(m, "c-iounpin"));
        ck_assert_int_ne(fixture_iothread_map(dom, 2), all);
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &all, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        for (unsigned r = 0; r < 3; r++) {
                manager_reconcile(m);
                ck_assert_msg(fixture_iothread_map(dom, 2) == all,
                              "reconcile %u: I/O thread 2 runs on 0x%x, unpinned by hand", r,
                              fixture_iothread_map(dom, 2));
        }
        ids = cpuset_format(manager_lookup(m, "c-iounpin")->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothread_hand_pinned_onto_rule_stays_user_s)
{
        /* an I/O thread pinned by hand elsewhere, then by hand again onto exactly the CPUs of the decision's
         * rule, is still the user's: not taken for one added live and claimed by the decision (until
         * 2026-12-07 it was, and a re-placement moved it with the rule) */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-ioback", 1, NULL, "<iothreads>2</iothreads>");
        g_autofree char *ids = NULL;
        unsigned char rule, away;

        ck_assert(spin_until_known(m, "c-ioback"));
        rule = (unsigned char)fixture_iothread_map(dom, 2);
        ck_assert_int_gt(rule, 0);
        away = rule == 0x80 ? 0x40 : 0x80;
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &away, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &rule, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        manager_reconcile(m);
        ids = cpuset_format(manager_lookup(m, "c-ioback")->plan->iothreads);
        ck_assert_msg(strcmp(ids, "1") == 0, "the decision's I/O threads are %s", ids);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_opted_out_floating_in_cpuset_counted)
{
        /* a domain its definition opts out whose vCPUs all float over its <vcpu cpuset> (a <vcpupin> of the
         * cpuset itself, libvirt's default) runs there: counted there, as one vCPU pinned elsewhere makes
         * the others counted, not nowhere; the next domain does not take that core while another is free */
        Manager *m = new_manager();
        virDomainPtr dom =
            start("c-float", 2, " cpuset='4'", "<cputune><vcpupin vcpu='0' cpuset='4'/></cputune>");
        virDomainPtr next;
        unsigned core4 = manager_topology(m)->pus[pu_of(m, 4)].core;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-float"));
        d = manager_lookup(m, "c-float");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_msg(d->plan && d->plan->vcpu_pu[0] >= 0 && d->plan->vcpu_pu[1] >= 0,
                      "its vCPUs are counted nowhere: %s", d->reason);
        ck_assert_uint_eq(manager_topology(m)->pus[d->plan->vcpu_pu[0]].core, core4);
        ck_assert_uint_eq(ledger_core_load(manager_ledger(m), core4), 2);
        next = start("c-float2", 1, NULL, NULL);
        ck_assert(spin_until_known(m, "c-float2"));
        d = manager_lookup(m, "c-float2");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_ne(manager_topology(m)->pus[d->plan->vcpu_pu[0]].core, core4);
        stop(next);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothreadpin_hold_gone_after_replace)
{
        /* a re-placement after an I/O thread was deleted live plans from what runs: the deleted thread's
         * <iothreadpin> CPU is not held again, nor avoided by the vCPUs */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-ihr", 1, NULL, IOTHREAD1_ON_7);
        unsigned pu7 = pu_of(m, 7);
        g_autofree char *error = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-ihr"));
        ck_assert(cpuset_has(manager_lookup(m, "c-ihr")->plan->held_pus, pu7));
        ck_assert_int_eq(virDomainDelIOThread(dom, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert(cpuset_is_empty(manager_lookup(m, "c-ihr")->plan->held_pus));
        ck_assert_msg(manager_replace(m, "c-ihr", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-ihr");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(cpuset_is_empty(d->plan->held_pus));
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu7), 0);
        manager_reconcile(m); /* and the next reconcile finds nothing to follow */
        ck_assert(cpuset_is_empty(manager_lookup(m, "c-ihr")->plan->held_pus));
        stop(dom);
        free_manager(m);
}
END_TEST

#define OPTED_OUT_DOMAIN                                                                                    \
        "<domain type='test'><name>c-oo</name><uuid>c0000000-0000-4000-8000-0000000000ee</uuid>"            \
        "<memory unit='MiB'>512</memory><vcpu placement='static'%s>2</vcpu><os><type>hvm</type></os>"       \
        "<metadata><placementd:domain xmlns:placementd='https://placementd.org/xmlns/domain/1' "            \
        "skip='yes'/></metadata></domain>"

START_TEST(test_opted_out_cpuset_edited_counted_as_runs)
{
        /* an opted-out domain started with <vcpu cpuset='4'> runs its vCPUs on CPU 4 until its next start,
         * whatever its persistent definition says since (virsh edit took the cpuset out): a restarted
         * placementd counts them there, and the next domain is not told that core is free */
        g_autofree char *before = g_strdup_printf(OPTED_OUT_DOMAIN, " cpuset='4'"),
                        *after = g_strdup_printf(OPTED_OUT_DOMAIN, "");
        Manager *m = new_manager();
        virDomainPtr dom = virDomainDefineXML(conn, before), again, next;
        unsigned core4 = manager_topology(m)->pus[pu_of(m, 4)].core;
        const Decision *d;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-oo"));
        ck_assert_uint_eq(ledger_core_load(manager_ledger(m), core4), 2);
        again = virDomainDefineXML(conn, after);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        free_manager(m);
        m = new_manager();
        ck_assert(spin_until_known(m, "c-oo"));
        d = manager_lookup(m, "c-oo");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_msg(ledger_core_load(manager_ledger(m), core4) == 2,
                      "the core of CPU 4 counts %u vCPUs, 2 run there: %s",
                      ledger_core_load(manager_ledger(m), core4), d->reason);
        next = start("c-oo2", 4, NULL, NULL);
        ck_assert(spin_until_known(m, "c-oo2"));
        d = manager_lookup(m, "c-oo2");
        ck_assert_msg(d->result == DECISION_OVERCOMMITTED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        stop(next);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_place_running_no_cpuset_counted)
{
        /* a domain PlaceRunning=no leaves alone whose vCPUs float over its <vcpu cpuset> runs there: counted
         * there, as an opted-out one is */
        virDomainPtr dom = start("c-prn", 2, " cpuset='4'", NULL);
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nPlaceRunning=no\n");
        unsigned core4 = manager_topology(m)->pus[pu_of(m, 4)].core;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-prn"));
        d = manager_lookup(m, "c-prn");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_msg(ledger_core_load(manager_ledger(m), core4) == 2,
                      "the core of CPU 4 counts %u vCPUs, 2 run there: %s",
                      ledger_core_load(manager_ledger(m), core4), d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

#define CPUSET_EDITED_DOMAIN                                                                                \
        "<domain type='test'><name>c-emu</name><uuid>c0000000-0000-4000-8000-0000000000e3</uuid>"           \
        "<memory unit='MiB'>512</memory><vcpu "                                                             \
        "placement='static'%s>1</vcpu><os><type>hvm</type></os></domain>"

START_TEST(test_emulator_default_of_edited_cpuset_not_hand_pin)
{
        /* a domain started with <vcpu cpuset='4-5'> whose emulator placementd leaves alone
         * (EmulatorPin=none) runs it on libvirt's default, the cpuset: once the cpuset is edited out of the
         * persistent definition (for the next start), that pin is still nobody's, not one made by hand, and
         * a re-placement holds no core for it */
        g_autofree char *before = g_strdup_printf(CPUSET_EDITED_DOMAIN, " cpuset='4-5'"),
                        *after = g_strdup_printf(CPUSET_EDITED_DOMAIN, ""), *error = NULL, *held = NULL;
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nEmulatorPin=none\n");
        virDomainPtr dom = virDomainDefineXML(conn, before), again;
        const Decision *d;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-emu"));
        again = virDomainDefineXML(conn, after);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        ck_assert_msg(manager_replace(m, "c-emu", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-emu");
        held = cpuset_format(d->plan->held_pus);
        ck_assert_msg(cpuset_is_empty(d->plan->held_pus) && !strstr(d->reason, "pinned outside placementd"),
                      "held PUs '%s': %s", held, d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_emulator_pin_on_edited_in_cpuset_held)
{
        /* a domain started without a cpuset whose persistent definition gets <vcpu cpuset='6'> (for its next
         * start: libvirt leaves what runs as it is), then its emulator pinned by hand onto CPU 6: that pin
         * is the user's, not libvirt's default, and its core is held as for any hand pin; the next domain is
         * not placed there as on a free core */
        g_autofree char *before = g_strdup_printf(CPUSET_EDITED_DOMAIN, ""),
                        *after = g_strdup_printf(CPUSET_EDITED_DOMAIN, " cpuset='6'"), *held = NULL;
        Manager *m = new_manager();
        virDomainPtr dom = virDomainDefineXML(conn, before), again, next;
        unsigned pu6 = pu_of(m, 6);
        const Decision *d;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-emu"));
        d = manager_lookup(m, "c-emu");
        ck_assert_msg(!cpuset_has(d->plan->vcpu_pins[0], 6) && !cpuset_has(d->plan->vcpu_pins[0], 7), "%s",
                      d->reason);
        again = virDomainDefineXML(conn, after);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        ck_assert_int_eq(virDomainPinEmulator(dom, &(unsigned char){1u << 6}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-emu");
        held = cpuset_format(d->plan->held_pus);
        ck_assert_msg(cpuset_has(d->plan->held_pus, pu6) && strstr(d->reason, "pinned outside placementd"),
                      "held PUs '%s': %s", held, d->reason);
        next = start("c-next", 2, NULL, NULL);
        ck_assert(spin_until_known(m, "c-next"));
        d = manager_lookup(m, "c-next");
        for (unsigned i = 0; i < 2; i++)
                ck_assert_msg(!cpuset_has(d->plan->vcpu_pins[i], 6) && !cpuset_has(d->plan->vcpu_pins[i], 7),
                              "the next domain's vCPU %u is placed beside the emulator pinned by hand: %s",
                              i, d->reason);
        stop(next);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothreadpin_hold_beside_user_emulatorpin)
{
        /* the user's emulator pin holds its CPU all along: following the I/O thread deleted live drops
         * only that thread's CPU, and the emulator's follow finds nothing of its own changed */
        Manager *m = new_manager();
        virDomainPtr dom =
            start("c-ioe", 1, NULL,
                  "<iothreads>2</iothreads><cputune><emulatorpin cpuset='5'/><iothreadpin iothread='1' "
                  "cpuset='7'/></cputune>");
        unsigned pu5 = pu_of(m, 5), pu7 = pu_of(m, 7);
        const Decision *d;

        ck_assert(spin_until_known(m, "c-ioe"));
        d = manager_lookup(m, "c-ioe");
        ck_assert(cpuset_has(d->plan->held_pus, pu5) && cpuset_has(d->plan->held_pus, pu7));
        ck_assert_int_eq(virDomainDelIOThread(dom, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        for (unsigned i = 0; i < 2; i++) {
                manager_reconcile(m);
                d = manager_lookup(m, "c-ioe");
                ck_assert(cpuset_has(d->plan->held_pus, pu5) && !cpuset_has(d->plan->held_pus, pu7));
                ck_assert(!placer_follow_emulator(m, dom, (Decision *)d));
                ck_assert(!placer_follow_iothreads(m, dom, (Decision *)d));
        }
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu5), 1);
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu7), 0);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothreadpin_hold_gone_across_restart)
{
        /* a persistent domain's I/O thread deleted live: a restarted daemon holds nothing for it from its
         * first periodic reconcile (reading the I/O threads takes the domain's job, which a wedged guest's
         * libvirt holds for 30 s: not at the start itself); the definition's pin holds its CPU again from
         * the next start on */
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>c-iop</name><memory unit='MiB'>512</memory>"
                            "<vcpu>1</vcpu><os><type>hvm</type></os>%s</domain>",
                            IOTHREAD1_ON_7);
        virDomainPtr dom = virDomainDefineXML(conn, xml);
        Manager *m = new_manager();
        unsigned pu7 = pu_of(m, 7);
        const Decision *d;

        ck_assert(dom != NULL);
        ck_assert_int_eq(virDomainCreate(dom), 0);
        ck_assert(spin_until_known(m, "c-iop"));
        ck_assert(cpuset_has(manager_lookup(m, "c-iop")->plan->held_pus, pu7));
        ck_assert_int_eq(virDomainDelIOThread(dom, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        free_manager(m);

        m = new_manager();
        ck_assert(spin_until_known(m, "c-iop"));
        manager_reconcile(m);
        d = manager_lookup(m, "c-iop");
        ck_assert(d->adopted);
        ck_assert(cpuset_is_empty(d->plan->held_pus));
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu7), 0);

        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert_int_eq(virDomainCreate(dom), 0);
        for (unsigned i = 0; i < 3000 && (!(d = manager_lookup(m, "c-iop")) || d->adopted); i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        ck_assert(d && !d->adopted);
        ck_assert(cpuset_has(d->plan->held_pus, pu7));
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_iothreadpin_defined_while_running_is_for_next_start)
{
        /* an <iothreadpin> written into a running domain's persistent definition (virsh iothreadpin
         * --config, virsh edit) is for its next start: libvirt left the I/O thread on placementd's pin,
         * which stays placementd's, not said to be where the definition puts it nor its CPU held */
        g_autofree char *xml =
            g_strdup("<domain type='test'><name>c-iod</name><memory unit='MiB'>512</memory>"
                     "<vcpu>1</vcpu><iothreads>2</iothreads><os><type>hvm</type></os></domain>");
        g_autofree char *cfg = NULL, *edited = NULL, *error = NULL;
        virDomainPtr dom = virDomainDefineXML(conn, xml), again;
        const char *os;
        Manager *m = new_manager();
        const Decision *d;
        unsigned cpu = 0;

        ck_assert(dom != NULL);
        ck_assert_int_eq(virDomainCreate(dom), 0);
        ck_assert(spin_until_known(m, "c-iod"));
        d = manager_lookup(m, "c-iod");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(cpuset_has(d->plan->iothreads, 1));
        /* a CPU none of its threads runs on */
        while (cpuset_has(d->plan->vcpu_pins[0], cpu) || cpuset_has(d->plan->emulator_pin, cpu))
                cpu++;
        cfg = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
        ck_assert(cfg && (os = strstr(cfg, "<os>")) && !strstr(cfg, "<cputune>"));
        edited = g_strdup_printf("%.*s<cputune><iothreadpin iothread='1' cpuset='%u'/></cputune>%s",
                                 (int)(os - cfg), cfg, cpu, os);
        again = virDomainDefineXML(conn, edited);
        ck_assert(again != NULL);
        virDomainFree(again);
        ck_assert_msg(manager_replace(m, "c-iod", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-iod");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_msg(cpuset_has(d->plan->iothreads, 1) && !strstr(d->reason, "iothreadpin"),
                      "I/O thread 1 taken for the definition's: %s", d->reason);
        ck_assert_msg(!cpuset_has(d->plan->held_pus, pu_of(m, cpu)), "CPU %u held: %s", cpu, d->reason);
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), pu_of(m, cpu)), 0);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_own_iothread_pins_without_snapshot)
{
        /* a record without the user's definition (too big to keep): the live <iothreadpin> of the I/O
         * threads it says placementd pinned are placementd's own, so a replace pins them again */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-io2", 1, NULL, "<iothreads>1</iothreads>");
        g_autofree char *meta = NULL, *error = NULL, *ids = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-io2"));
        d = manager_lookup(m, "c-io2");
        ck_assert(!cpuset_is_empty(d->plan->iothreads));
        meta = metadata_format(manager_topology(m), d->plan, "placed", MEMORY_BINDING_APPLIED, NULL);
        ck_assert_msg(virt_domain_set_metadata(dom, meta, &error) == 0, "%s", error);
        ck_assert_msg(manager_replace(m, "c-io2", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-io2");
        ids = cpuset_format(d->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        ck_assert_msg(!strstr(d->reason, "iothreadpin"), "%s", d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_own_emulator_pin_without_snapshot)
{
        /* the same for the emulator pin: the live <emulatorpin> equal to the recorded emulator set is
         * placementd's own, not the user's (a replace pins it again, the reason does not keep it) */
        Manager *m = new_manager();
        virDomainPtr dom = start("c-emu", 1, NULL, NULL);
        g_autofree char *meta = NULL, *error = NULL, *xml = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-emu"));
        d = manager_lookup(m, "c-emu");
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        meta = metadata_format(manager_topology(m), d->plan, "placed", MEMORY_BINDING_APPLIED, NULL);
        ck_assert_msg(virt_domain_set_metadata(dom, meta, &error) == 0, "%s", error);
        xml = virDomainGetXMLDesc(dom, 0);
        ck_assert_msg(strstr(xml, "<emulatorpin") && !strstr(xml, "placementd:definition"), "%s", xml);
        ck_assert_msg(manager_replace(m, "c-emu", &error) == 0, "%s", error);
        d = manager_lookup(m, "c-emu");
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        ck_assert_msg(!strstr(d->reason, "emulatorpin"), "%s", d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* text with everything from the first `from` to the end of the first `to` after it cut out */
static void cut(GString *text, const char *from, const char *to)
{
        const char *a = strstr(text->str, from), *b = a ? strstr(a, to) : NULL;
        if (a && b)
                g_string_erase(text, a - text->str, b + strlen(to) - a);
}

START_TEST(test_edited_definition_stands)
{
        /* a persistent definition made from the live XML carries placementd's record of the user's
         * definition; once the user edits it (here <vcpu cpuset>, placementd's pins taken out) the
         * edited definition stands, not the record */
        Manager *m = new_manager();
        virDomainPtr dom = define_and_start("c-edit", 1), again;
        g_autoptr(GString) xml = NULL;
        g_autoptr(CpuSet) allowed = set_of("6-7");
        g_autofree char *live = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-edit"));
        live = virDomainGetXMLDesc(dom, 0);
        ck_assert_msg(strstr(live, "placementd:definition"), "%s", live);
        xml = g_string_new(live);
        cut(xml, "<cputune>", "</cputune>");
        cut(xml, "<numatune>", "</numatune>");
        ck_assert(g_string_replace(xml, "<vcpu placement='static'>1</vcpu>",
                                   "<vcpu placement='static' cpuset='6-7'>1</vcpu>", 1) == 1);
        again = virDomainDefineXML(conn, xml->str);
        ck_assert_msg(again != NULL, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        virDomainDestroy(dom);
        for (unsigned i = 0; i < 200; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        ck_assert_int_eq(virDomainCreate(dom), 0);
        for (unsigned i = 0; i < 3000 && (!(d = manager_lookup(m, "c-edit")) || !strstr(d->reason, "6-7"));
             i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        d = manager_lookup(m, "c-edit");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(strstr(d->reason, "kept inside <vcpu cpuset='6-7'>"), "%s", d->reason);
        assert_live_pins_inside(dom, 1, allowed);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_copied_record_not_read)
{
        /* a new domain made from a placed domain's live XML, with a UUID of its own and the user's own
         * pin: the record names the other domain, so the new one's pin is its user's and stands */
        Manager *m = new_manager();
        virDomainPtr src = start("c-src", 1, NULL, NULL), copy;
        g_autoptr(GString) xml = NULL;
        g_autofree char *live = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-src"));
        live = virDomainGetXMLDesc(src, 0);
        ck_assert_msg(strstr(live, "uuid=\""), "%s", live);
        xml = g_string_new(live);
        cut(xml, "<uuid>", "</uuid>");
        cut(xml, "<cputune>", "</cputune>");
        ck_assert(g_string_replace(xml, "<name>c-src</name>", "<name>c-copy</name>", 1) == 1);
        ck_assert(g_string_replace(xml, "</vcpu>",
                                   "</vcpu><cputune><vcpupin vcpu='0' cpuset='6'/></cputune>", 1) == 1);
        copy = virDomainCreateXML(conn, xml->str, 0);
        ck_assert_msg(copy != NULL, "%s", virGetLastErrorMessage());
        ck_assert(spin_until_known(m, "c-copy"));
        d = manager_lookup(m, "c-copy");
        ck_assert_msg(d->result == DECISION_SKIPPED && strstr(d->reason, "vcpupin"), "%s", d->reason);
        {
                g_autoptr(CpuSet) six = set_of("6");
                assert_live_pins_inside(copy, 1, six);
        }
        stop(copy);
        stop(src);
        free_manager(m);
}
END_TEST

START_TEST(test_replace_keeps_vcpus_with_memory)
{
        /* a (1 vCPU) binds memory to its node on first placement; libvirt keeps that strict binding */
        Manager *m = new_manager();
        virDomainPtr a = define_and_start("c-a", 1), b, c;
        g_autofree char *error = NULL, *nodeset = NULL;
        unsigned node;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-a"));
        d = manager_lookup(m, "c-a");
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        ck_assert_uint_eq(cpuset_count(d->plan->nodes), 1);
        node = (unsigned)cpuset_next(d->plan->nodes, 0);
        /* b fills the other node, c the rest of a's node; then b goes: the other node is idle */
        b = start("c-b", 2, NULL, NULL);
        ck_assert(spin_until_known(m, "c-b"));
        ck_assert(!cpuset_has(manager_lookup(m, "c-b")->plan->nodes, node));
        c = start("c-c", 1, NULL, NULL);
        ck_assert(spin_until_known(m, "c-c"));
        ck_assert(cpuset_has(manager_lookup(m, "c-c")->plan->nodes, node));
        stop(b);
        for (unsigned i = 0; i < 100 && manager_lookup(m, "c-b"); i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);

        /* replace: the idle node would be better, but the memory cannot follow: a stays with it */
        ck_assert_int_eq(manager_replace(m, "c-a", &error), 0);
        d = manager_lookup(m, "c-a");
        ck_assert_msg(d->plan != NULL, "%s", d->reason);
        ck_assert_msg(cpuset_has(d->plan->nodes, node) && cpuset_count(d->plan->nodes) == 1, "%s",
                      d->reason);
        ck_assert_uint_eq(d->plan->node_memory[node], 512 * MiB);
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_KEPT);
        ck_assert_msg(strstr(d->reason, "a live binding libvirt cannot change"), "%s", d->reason);
        nodeset = live_nodeset(a);
        ck_assert_uint_eq(g_ascii_strtoull(nodeset, NULL, 10), node);
        stop(a);
        stop(c);
        free_manager(m);
}
END_TEST

/* libvirt's raw pin of vCPU id of dom, as a list (not through placementd's own reader). */
static char *raw_pin(virDomainPtr dom, unsigned id)
{
        unsigned char maps[8][1] = {{0}};
        g_autoptr(CpuSet) s = cpuset_new();

        ck_assert_int_ge(virDomainGetVcpuPinInfo(dom, 8, &maps[0][0], 1, VIR_DOMAIN_AFFECT_LIVE),
                         (int)id + 1);
        for (unsigned c = 0; c < 8; c++)
                if (maps[id][0] & (1u << c))
                        cpuset_add(s, c);
        return cpuset_format(s);
}

/* vCPU 1 of 3 unplugged (virsh setvcpu --disable 1): vCPUs 0 and 2 run */
#define SPARSE_VCPUS                                                                                        \
        "<vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/><vcpu id='1' enabled='no' "                   \
        "hotpluggable='yes'/>"                                                                              \
        "<vcpu id='2' enabled='yes' hotpluggable='yes'/></vcpus>"

/* A <vcpupin> only for a vCPU not plugged in (vCPU 3 of 4, 2 online) pins nothing that runs: the online
 * vCPUs, which the user left unpinned, are placed, the pin is left for libvirt to apply when that vCPU is
 * plugged in, and a restarted daemon adopts the record. Once it runs, the user's pin runs: the domain is
 * theirs from then on, its pins counted as they run. It was skipped as pinning vCPUs itself, its two
 * running vCPUs floating and counted nowhere. */
START_TEST(test_pin_of_unplugged_vcpu_only)
{
        static const char *const pin3 = "<vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/>"
                                        "<vcpu id='1' enabled='yes' hotpluggable='yes'/>"
                                        "<vcpu id='2' enabled='no' hotpluggable='yes'/>"
                                        "<vcpu id='3' enabled='no' hotpluggable='yes'/></vcpus>"
                                        "<cputune><vcpupin vcpu='3' cpuset='6'/></cputune>";
        virDomainPtr dom = start("c-pin3", 4, " current='2'", pin3);
        Manager *m = new_manager();
        g_autofree char *pin = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-pin3"));
        d = manager_lookup(m, "c-pin3");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        fixture_assert_live_pins(dom, d->plan);
        pin = raw_pin(dom, 3);
        ck_assert_str_eq(pin, "6"); /* the user's, untouched */
        free_manager(m);
        m = new_manager();
        ck_assert(spin_until_known(m, "c-pin3"));
        d = manager_lookup(m, "c-pin3");
        ck_assert_msg(d->adopted && d->result == DECISION_PLACED, "%s", d->reason);
        /* vCPUs 2 and 3 plugged in: vCPU 3 runs on the user's pin, and the domain is theirs */
        ck_assert_int_eq(virDomainSetVcpusFlags(dom, 4, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-pin3");
        ck_assert_msg(d->result == DECISION_SKIPPED && strstr(d->reason, "pins vCPUs itself") &&
                          strstr(d->reason, "counted as they run"),
                      "%s: %s", decision_result_to_string(d->result), d->reason);
        g_free(pin);
        pin = raw_pin(dom, 3);
        ck_assert_str_eq(pin, "6");
        stop(dom);
        free_manager(m);
}
END_TEST

/* A domain whose online vCPUs are not 0..n-1 (one unplugged below one that runs), its owner pinning a vCPU
 * in a loop: the pins of vCPUs the decision has are read once per burst, as for any domain. The check for
 * a hot-added vCPU, which reads such a domain's whole XML, ran at every event; it runs only for a pin of
 * a vCPU the decision does not have, which is how a hot-added one shows up. */
START_TEST(test_sparse_pin_loop_reads_once)
{
        virDomainPtr dom = start("c-sparse-loop", 3, " current='2'", SPARSE_VCPUS);
        Manager *m = new_manager();
        virTypedParameter event = {.field = "cputune.vcpupin2", .type = VIR_TYPED_PARAM_STRING};
        g_autofree char *own = NULL;
        unsigned before;

        ck_assert(spin_until_known(m, "c-sparse-loop"));
        own = cpuset_format(manager_lookup(m, "c-sparse-loop")->plan->vcpu_pins[1]);
        before = xml_reads;
        for (unsigned i = 0; i < 40; i++) { /* the echo of placementd's own pin, 40 times */
                event.value.s = own;
                manager_tunable(m, dom, &event, 1);
        }
        fixture_spin_known(base, NULL, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert_msg(xml_reads - before <= 1, "%u reads of the XML for 40 pin events", xml_reads - before);
        ck_assert_int_eq(manager_lookup(m, "c-sparse-loop")->result, DECISION_PLACED);
        /* a pin of vCPU 1, which the decision does not have, is checked at once */
        before = xml_reads;
        event.field[strlen(event.field) - 1] = '1';
        manager_tunable(m, dom, &event, 1);
        ck_assert_uint_ge(xml_reads - before, 1);
        stop(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_sparse_online_vcpus)
{
        virDomainPtr dom = start("c-sparse", 3, " current='2'", SPARSE_VCPUS);
        Manager *m = new_manager();
        g_autofree char *pin0 = NULL, *pin1 = NULL, *pin2 = NULL, *plan0 = NULL, *plan1 = NULL, *meta = NULL;
        const Decision *d;

        ck_assert(spin_until_known(m, "c-sparse"));
        d = manager_lookup(m, "c-sparse");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->apply_error ? d->apply_error : d->reason);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        ck_assert_uint_eq(plan_vcpu_id(d->plan, 0), 0);
        ck_assert_uint_eq(plan_vcpu_id(d->plan, 1), 2);
        /* the vCPUs that run hold the plan's pins; the unplugged one is left as it was */
        pin0 = raw_pin(dom, 0);
        pin1 = raw_pin(dom, 1);
        pin2 = raw_pin(dom, 2);
        plan0 = cpuset_format(d->plan->vcpu_pins[0]);
        plan1 = cpuset_format(d->plan->vcpu_pins[1]);
        ck_assert_str_eq(pin0, plan0);
        ck_assert_str_eq(pin2, plan1);
        ck_assert_str_eq(pin1, "0-7");
        ck_assert_str_ne(pin0, pin2);
        /* the record names libvirt's vCPU ids, and a restarted daemon adopts it */
        meta =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(meta && strstr(meta, "id=\"2\"") && !strstr(meta, "id=\"1\""), "%s", meta);
        free_manager(m);
        m = new_manager();
        ck_assert(spin_until_known(m, "c-sparse"));
        d = manager_lookup(m, "c-sparse");
        ck_assert_msg(d->adopted && d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_uint_eq(plan_vcpu_id(d->plan, 1), 2);
        /* the test driver's setvcpus makes vCPUs 0 and 1 run: the count stays, the reconcile sees it */
        ck_assert_int_eq(virDomainSetVcpusFlags(dom, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "c-sparse");
        ck_assert_msg(d->result == DECISION_PLACED && plan_vcpu_id(d->plan, 1) == 1, "%s", d->reason);
        g_free(pin1);
        g_free(plan1);
        pin1 = raw_pin(dom, 1);
        plan1 = cpuset_format(d->plan->vcpu_pins[1]);
        ck_assert_str_eq(pin1, plan1);
        stop(dom);
        free_manager(m);
}
END_TEST

/* The persistent definition edited while the domain runs: its strict binding to node 0 and its two guest
 * cells stay as they run until the next start; a re-placement keeps the vCPUs with that memory */
#define EDITED_DOMAIN                                                                                       \
        "<domain type='test'><name>c-ed</name><uuid>c0000000-0000-4000-8000-0000000000ed</uuid>"            \
        "<memory unit='MiB'>512</memory><vcpu>2</vcpu><cpu><numa>%s</numa></cpu>"                           \
        "<numatune><memory mode='strict' nodeset='%s'/></numatune><os><type>hvm</type></os></domain>"

START_TEST(test_persistent_edit_waits_for_restart)
{
        static const char *const two = "<cell id='0' cpus='0' memory='256' unit='MiB'/>"
                                       "<cell id='1' cpus='1' memory='256' unit='MiB'/>";
        g_autofree char *before = g_strdup_printf(EDITED_DOMAIN, two, "0"),
                        *after = g_strdup_printf(EDITED_DOMAIN,
                                                 "<cell id='0' cpus='0-1' memory='512' unit='MiB'/>", "1");
        g_autofree char *error = NULL, *nodeset = NULL;
        Manager *m = new_manager();
        g_autoptr(CpuSet) node0 = set_of("0-3");
        virDomainPtr dom = virDomainDefineXML(conn, before), again;
        const Decision *d;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-ed"));
        d = manager_lookup(m, "c-ed");
        ck_assert_msg(cpuset_has(d->plan->nodes, 0) && cpuset_count(d->plan->nodes) == 1, "%s", d->reason);
        /* virsh edit: the binding moves to node 1 and the cells become one, for the next start */
        again = virDomainDefineXML(conn, after);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        ck_assert_int_eq(manager_replace(m, "c-ed", &error), 0);
        d = manager_lookup(m, "c-ed");
        ck_assert_msg(cpuset_has(d->plan->nodes, 0) && cpuset_count(d->plan->nodes) == 1, "%s", d->reason);
        ck_assert_uint_eq(d->plan->node_memory[0], 512 * MiB);
        ck_assert_uint_eq(d->plan->ncells, 2);
        assert_live_pins_inside(dom, 2, node0);
        nodeset = live_nodeset(dom);
        ck_assert_str_eq(nodeset, "0");
        stop(dom);
        free_manager(m);
}
END_TEST

/* A <numatune> written into the persistent definition of a domain whose memory nothing binds (virsh
 * numatune --config, under MemoryBinding=no) is for its next start: the running guest's memory is not
 * bound there, so it is neither counted there nor said to be bound there */
#define UNBOUND_DOMAIN                                                                                      \
        "<domain type='test'><name>c-nb</name><uuid>c0000000-0000-4000-8000-0000000000ab</uuid>"            \
        "<memory unit='MiB'>512</memory><vcpu>1</vcpu>%s<os><type>hvm</type></os></domain>"

START_TEST(test_numatune_added_to_definition_waits_for_restart)
{
        g_autofree char *before = g_strdup_printf(UNBOUND_DOMAIN, ""), *after = NULL;
        g_autofree char *error = NULL, *nodeset = NULL;
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = virDomainDefineXML(conn, before), again;
        const Decision *d;
        unsigned node, other;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-nb"));
        d = manager_lookup(m, "c-nb");
        ck_assert_msg(cpuset_count(d->plan->nodes) == 1, "%s", d->reason);
        node = (unsigned)cpuset_next(d->plan->nodes, 0);
        other = 1 - node;
        /* virsh numatune c-nb --nodeset OTHER --config: for the next start; nothing binds it live */
        after = g_strdup_printf(UNBOUND_DOMAIN,
                                other ? "<numatune><memory mode='strict' nodeset='1'/></numatune>"
                                      : "<numatune><memory mode='strict' nodeset='0'/></numatune>");
        again = virDomainDefineXML(conn, after);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        nodeset = live_nodeset(dom);
        ck_assert_msg(!nodeset || !*nodeset, "bound live to %s", nodeset);
        ck_assert_int_eq(manager_replace(m, "c-nb", &error), 0);
        d = manager_lookup(m, "c-nb");
        ck_assert_msg(d->plan->node_memory[other] == 0 && !strstr(d->reason, "binds its memory"),
                      "counted %" PRIu64 " B on node %u, which nothing binds it to: %s",
                      d->plan->node_memory[other], other, d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A restrictive binding edited in the persistent definition (virsh numatune --config) is for the next
 * start: the running guest keeps the nodeset it started with */
#define RESTRICTIVE_DOMAIN                                                                                  \
        "<domain type='test'><name>c-rs</name><uuid>c0000000-0000-4000-8000-0000000000ac</uuid>"            \
        "<memory unit='MiB'>512</memory><vcpu>1</vcpu>"                                                     \
        "<numatune><memory mode='restrictive' nodeset='%s'/></numatune><os><type>hvm</type></os></domain>"

START_TEST(test_restrictive_edit_waits_for_restart)
{
        g_autofree char *before = g_strdup_printf(RESTRICTIVE_DOMAIN, "0"),
                        *after = g_strdup_printf(RESTRICTIVE_DOMAIN, "1");
        g_autofree char *error = NULL, *nodeset = NULL;
        Manager *m = new_manager();
        virDomainPtr dom = virDomainDefineXML(conn, before), again;
        const Decision *d;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-rs"));
        d = manager_lookup(m, "c-rs");
        ck_assert_msg(cpuset_has(d->plan->nodes, 0) && cpuset_count(d->plan->nodes) == 1, "%s", d->reason);
        again = virDomainDefineXML(conn, after);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        ck_assert_int_eq(manager_replace(m, "c-rs", &error), 0);
        d = manager_lookup(m, "c-rs");
        ck_assert_msg(d->plan->node_memory[1] == 0 && cpuset_has(d->plan->nodes, 0), "%s", d->reason);
        nodeset = live_nodeset(dom);
        ck_assert_str_eq(nodeset, "0"); /* what the running guest is bound to */
        stop(dom);
        free_manager(m);
}
END_TEST

/* So is a restrictive <numatune> taken out of the persistent definition (virsh edit): the running guest
 * stays bound where it started, and placementd, which libvirt would let change a restrictive nodeset, does
 * not bind it anew where its vCPUs go */
#define RESTRICTIVE_REMOVED                                                                                 \
        "<domain type='test'><name>c-rs</name><uuid>c0000000-0000-4000-8000-0000000000ac</uuid>"            \
        "<memory unit='MiB'>512</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>"
#define STRICT_NEIGHBOUR                                                                                    \
        "<domain type='test'><name>c-rn</name><uuid>c0000000-0000-4000-8000-0000000000ad</uuid>"            \
        "<memory unit='MiB'>512</memory><vcpu>1</vcpu>"                                                     \
        "<numatune><memory mode='strict' nodeset='0'/></numatune><os><type>hvm</type></os></domain>"

START_TEST(test_restrictive_removed_waits_for_restart)
{
        g_autofree char *before = g_strdup_printf(RESTRICTIVE_DOMAIN, "0");
        g_autofree char *error = NULL, *nodeset = NULL;
        Manager *m = new_manager();
        virDomainPtr dom = virDomainDefineXML(conn, before),
                     other = virDomainDefineXML(conn, STRICT_NEIGHBOUR);
        virDomainPtr again;
        const Decision *d;

        ck_assert(dom && virDomainCreate(dom) == 0);
        ck_assert(spin_until_known(m, "c-rs"));
        /* node 0's other core taken: placed anew without its binding, the vCPU would go to node 1 */
        ck_assert(other && virDomainCreate(other) == 0);
        ck_assert(spin_until_known(m, "c-rn"));
        again = virDomainDefineXML(conn, RESTRICTIVE_REMOVED);
        ck_assert_msg(again, "%s", virGetLastErrorMessage());
        virDomainFree(again);
        ck_assert_int_eq(manager_replace(m, "c-rs", &error), 0);
        d = manager_lookup(m, "c-rs");
        nodeset = live_nodeset(dom);
        ck_assert_str_eq(nodeset, "0"); /* what the running guest is bound to */
        ck_assert_msg(d->plan->node_memory[1] == 0 && cpuset_has(d->plan->nodes, 0), "%s", d->reason);
        stop(other);
        stop(dom);
        free_manager(m);
}
END_TEST
static Suite *manager_constraints_suite(void)
{
        Suite *s = suite_create("manager constraints");
        TCase *tc = tcase_create("test driver");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_vcpu_cpuset_before_and_after_start);
        tcase_add_test(tc, test_numatune_added_to_definition_waits_for_restart);
        tcase_add_test(tc, test_restrictive_edit_waits_for_restart);
        tcase_add_test(tc, test_restrictive_removed_waits_for_restart);
        tcase_add_test(tc, test_user_numatune_stands);
        tcase_add_test(tc, test_user_emulatorpin_stands);
        tcase_add_test(tc, test_realtime_vcpus_and_user_emulatorpin);
        tcase_add_test(tc, test_realtime_threads_beside_vcpus_said);
        tcase_add_test(tc, test_realtime_threads_hold_their_core_live);
        tcase_add_test(tc, test_users_realtime_emulator_held_live);
        tcase_add_test(tc, test_replace_keeps_vcpus_with_memory);
        tcase_add_test(tc, test_guest_cells_pinned_per_node);
        tcase_add_test(tc, test_hugepages_without_pool);
        tcase_add_test(tc, test_pci_device_node);
        tcase_add_test(tc, test_cpuset_apart_from_memory_adopted);
        tcase_add_test(tc, test_preferred_spill_adopted);
        tcase_add_test(tc, test_start_unplaceable_floating_not_counted);
        tcase_add_test(tc, test_iothreads_pinned_user_pin_stands);
        tcase_add_test(tc, test_own_iothread_pins_without_snapshot);
        tcase_add_test(tc, test_iothreadpin_hold_follows_thread);
        tcase_add_test(tc, test_iothreadpin_on_rule_not_taken);
        tcase_add_test(tc, test_iothreadpin_hold_gone_after_replace);
        tcase_add_test(tc, test_hand_iothread_pin_stands_on_replace);
        tcase_add_test(tc, test_hand_iothread_pin_stands_when_placed_anew);
        tcase_add_test(tc, test_iothread_pinned_while_down_stands_when_placed_anew);
        tcase_add_test(tc, test_hand_iothread_pin_of_skipped_stands_on_replace);
        tcase_add_test(tc, test_hand_pin_over_iothreadpin_stands_on_replace);
        tcase_add_test(tc, test_iothread_unpinned_by_hand_left_so);
        tcase_add_test(tc, test_hand_iothread_deleted_leaves_reason);
        tcase_add_test(tc, test_definition_iothread_deleted_not_named_on_replace);
        tcase_add_test(tc, test_iothread_hand_pinned_onto_rule_stays_user_s);
        tcase_add_test(tc, test_opted_out_floating_in_cpuset_counted);
        tcase_add_test(tc, test_opted_out_cpuset_edited_counted_as_runs);
        tcase_add_test(tc, test_place_running_no_cpuset_counted);
        tcase_add_test(tc, test_emulator_default_of_edited_cpuset_not_hand_pin);
        tcase_add_test(tc, test_hand_emulator_pin_on_edited_in_cpuset_held);
        tcase_add_test(tc, test_iothreadpin_hold_beside_user_emulatorpin);
        tcase_add_test(tc, test_iothreadpin_hold_gone_across_restart);
        tcase_add_test(tc, test_iothreadpin_defined_while_running_is_for_next_start);
        tcase_add_test(tc, test_own_emulator_pin_without_snapshot);
        tcase_add_test(tc, test_edited_definition_stands);
        tcase_add_test(tc, test_copied_record_not_read);
        tcase_add_test(tc, test_sparse_online_vcpus);
        tcase_add_test(tc, test_pin_of_unplugged_vcpu_only);
        tcase_add_test(tc, test_sparse_pin_loop_reads_once);
        tcase_add_test(tc, test_persistent_edit_waits_for_restart);
        tcase_add_test(tc, test_realtime_neighbour_gone_not_named);
        tcase_add_test(tc, test_realtime_over_gone_emulator_adopted);
        tcase_add_test(tc, test_realtime_arrival_told_to_the_earlier);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_constraints_suite)
