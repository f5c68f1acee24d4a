/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCI devices passed through (<hostdev>, <interface type='hostdev'>, NVMe disks): read from the domain
 * XML, their locality from the host's topology, and the set search's preference for a node near them,
 * which never costs a vCPU its own core nor the guest a wider or further set.
 */
#include "test-util.h"

#include <string.h>

#include "domain-request.h"
#include "decision-text.h"
#include "domain-xml.h"
#include "pci.h"
#include "test-policy-util.h"

#define DOMAIN(vcpus, devices)                                                                              \
        "<domain type='kvm'><name>g</name><memory unit='GiB'>4</memory><vcpu>" vcpus "</vcpu>"              \
        "<os><type>hvm</type></os><devices>" devices "</devices></domain>"
#define HOSTDEV(bus)                                                                                        \
        "<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='" bus     \
        "' slot='0x00' function='0x0'/></source><address type='pci' domain='0x0000' bus='0x00' "            \
        "slot='0x07' function='0x0'/></hostdev>"

static char *parse_error(const char *xml)
{
        char *error = NULL;
        DomainSpec *s = NULL;

        ck_assert_int_eq(domain_xml_parse(xml, &s, &error), -EINVAL);
        ck_assert_ptr_null(s);
        return error;
}

static const char *address_text(const DomainSpec *s, unsigned i, char *buf)
{
        ck_assert_ptr_nonnull(s->pci_devices);
        ck_assert_uint_lt(i, s->pci_devices->len);
        return pci_address_format(g_array_index(s->pci_devices, uint64_t, i), buf);
}

/* Each element that passes a host PCI device through, by its <source>; never the guest-side address. */
START_TEST(test_parse_devices)
{
        g_autoptr(DomainSpec) s = test_domain_parse(DOMAIN(
            "2", HOSTDEV("0xaf") "<interface type='hostdev' managed='yes'><mac address='52:54:00:6d:90:02'/>"
                                 "<source><address type='pci' domain='0x0000' bus='0x17' slot='0x02' "
                                 "function='0x1'/></source></interface>"
                                 "<disk type='nvme' device='disk'><driver name='qemu' type='raw'/>"
                                 "<source type='pci' managed='yes' namespace='1'><address domain='0x0000' "
                                 "bus='216' slot='0' function='0'/></source><target dev='vde' bus='virtio'/>"
                                 "</disk>"
                                 "<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source>"
                                 "<address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source></hostdev>"
                                 "<interface type='network'><source network='default'/><address "
                                 "type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/>"
                                 "</interface><hostdev mode='subsystem' type='usb'><source><address "
                                 "bus='1' device='2'/></source></hostdev>"));
        char buf[PCI_ADDRESS_TEXT_MAX];

        ck_assert_uint_eq(s->pci_devices->len, 3);
        ck_assert_str_eq(address_text(s, 0, buf), "0000:af:00.0");
        ck_assert_str_eq(address_text(s, 1, buf), "0000:17:02.1");
        ck_assert_str_eq(address_text(s, 2, buf), "0000:d8:00.0");
}
END_TEST

START_TEST(test_parse_no_devices)
{
        g_autoptr(DomainSpec) s =
            test_domain_parse(DOMAIN("2", "<interface type='network'><source network='x'/>"
                                          "</interface>"));

        ck_assert_ptr_null(s->pci_devices);
}
END_TEST

/* An address libvirt would refuse is an error that names it. */
START_TEST(test_parse_bad_address)
{
        static const struct {
                const char *address, *needle;
        } cases[] = {
            {"domain='0' bus='0x100' slot='0' function='0'", "bus='0x100'"},
            {"domain='0' bus='0x01' slot='0x20' function='0'", "slot='0x20'"},
            {"domain='0' bus='0x01' slot='0' function='8'", "function='8'"},
            {"domain='x' bus='0x01' slot='0' function='0'", "domain='x'"},
            {"domain='0' bus='-1' slot='0' function='0'", "bus='-1'"},
            {"domain='0' bus='' slot='0' function='0'", "bus=''"},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    DOMAIN("1",
                           "<hostdev mode='subsystem' type='pci'><source><address %s/></source></hostdev>"),
                    cases[i].address);
                g_autofree char *error = parse_error(xml);
                ck_assert_msg(strstr(error, cases[i].needle) && strstr(error, "<hostdev type='pci'>"), "%s",
                              error);
        }
}
END_TEST

START_TEST(test_address_text)
{
        char buf[PCI_ADDRESS_TEXT_MAX];
        uint64_t a;

        ck_assert(pci_address_from_attributes("0x10000", "0xe1", "0x1f", "0x7", &a, NULL)); /* VMD */
        ck_assert_str_eq(pci_address_format(a, buf), "10000:e1:1f.7");
        ck_assert(pci_address_from_attributes(NULL, "5", NULL, NULL, &a, NULL)); /* absent: 0 */
        ck_assert_str_eq(pci_address_format(a, buf), "0000:05:00.0");
        ck_assert(pci_address_from_attributes("0x0000", "0x3b", "010", "7", &a, NULL)); /* 010: octal 8 */
        ck_assert_str_eq(pci_address_format(a, buf), "0000:3b:08.7");
}
END_TEST

/* One read of a domain on t: its request and what it points into. */
typedef struct Read {
        DomainSpec *spec;
        RequestShape shape;
        PlacementRequest req;
} Read;

static void read_on(Read *r, const Topology *t, const char *xml)
{
        r->spec = test_domain_parse(xml);
        r->req = domain_request(r->spec, r->spec);
        domain_request_shape(r->spec, t, &r->req, &r->shape);
}

static void read_clear(Read *r)
{
        domain_spec_free(r->spec);
        request_shape_clear(&r->shape);
}

static Plan *place_xml(const Topology *t, Ledger *l, const char *xml)
{
        PlacementParams params = test_params(POLICY_EXPLICIT);

        return test_place_xml(t, l, xml, &params);
}

static void assert_nodes(const Topology *t, const Plan *p, const char *nodes)
{
        g_autoptr(CpuSet) os = cpuset_new();
        g_autofree char *text = NULL;

        CPUSET_FOREACH (n, p->nodes)
                cpuset_add(os, t->nodes[n].os_index);
        text = cpuset_format(os);
        ck_assert_msg(strcmp(text, nodes) == 0, "placed on %s, not %s: %s", text, nodes, p->reason);
}

/* On an empty host the guest goes where its device is (node 1), where it went to node 0 before. */
START_TEST(test_near_device)
{
        g_autoptr(Topology) t = test_topology_load("xeon-2s-pci.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) nic = place_xml(t, l, DOMAIN("4", HOSTDEV("0xaf")));
        g_autoptr(Plan) plain = place_xml(t, l, DOMAIN("4", ""));
        g_autoptr(Plan) local = place_xml(t, l, DOMAIN("4", HOSTDEV("0x17")));
        g_autoptr(Plan) machine = place_xml(t, l, DOMAIN("4", HOSTDEV("0x00"))); /* local to both */

        ck_assert_int_eq(nic->result, PLAN_PLACED);
        assert_nodes(t, nic, "1");
        ck_assert_msg(strstr(nic->reason, "; near its PCI devices (node 1)"), "%s", nic->reason);
        assert_nodes(t, plain, "0");
        assert_nodes(t, local, "0");
        assert_nodes(t, machine, "0");
        ck_assert_msg(!strstr(machine->reason, "PCI"), "%s", machine->reason);
}
END_TEST

/* A device on a node without a usable CPU (outside the guests' nodes; a CXL expander's): the guest goes
 * to the nearest node with usable CPUs, and the reason names both; away from it, likewise. */
START_TEST(test_near_device_on_node_without_cpus)
{
        g_autoptr(Topology) uv = test_topology_load("uv-pci-disallowed.xml");
        g_autoptr(Topology) cxl = test_topology_load("cxl-pci.xml");
        g_autoptr(Ledger) l = ledger_new(uv), lc = ledger_new(cxl);
        g_autoptr(Plan) nic = place_xml(uv, l, DOMAIN("2", HOSTDEV("0x85")));
        g_autoptr(Plan) both = place_xml(uv, l, DOMAIN("1", HOSTDEV("0x85") HOSTDEV("0x17")));
        g_autoptr(Plan) away =
            place_xml(uv, l,
                      "<domain type='kvm'><name>g</name><memory unit='GiB'>4</memory>"
                      "<vcpu cpuset='0-3'>2</vcpu><os><type>hvm</type></os><devices>" HOSTDEV(
                          "0x85") "</devices></domain>");
        g_autoptr(Plan) expander = place_xml(cxl, lc, DOMAIN("2", HOSTDEV("0xc0")));

        assert_nodes(uv, nic, "6");
        ck_assert_msg(strstr(nic->reason,
                             "; near its PCI devices (node 6, the nearest with usable CPUs to node 5 "
                             "they sit on)"),
                      "%s", nic->reason);
        ck_assert_msg(strstr(both->reason, "node 6 the nearest with usable CPUs to node 5 one sits on"),
                      "%s", both->reason);
        assert_nodes(uv, away, "0");
        ck_assert_msg(strstr(away->reason,
                             "; away from its PCI devices (node 6, the nearest with usable CPUs to node 5 "
                             "they sit on): its constraints rule out their nodes"),
                      "%s", away->reason);
        assert_nodes(cxl, expander, "1");
        ck_assert_msg(strstr(expander->reason,
                             "; near its PCI devices (node 1, the nearest with usable CPUs to node 2 "
                             "they sit on)"),
                      "%s", expander->reason);
}
END_TEST

/* When the device's node has too few free cores, free cores elsewhere win, and the reason says so. */
START_TEST(test_free_cores_before_device)
{
        g_autoptr(Topology) t = test_topology_load("xeon-2s-pci.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        Read gpu = {0};
        g_autoptr(Plan) nic = NULL;

        read_on(&gpu, t, DOMAIN("6", HOSTDEV("0x3b")));
        ck_assert_int_eq(ledger_commit(l, "gpu", policy_place(t, l, &gpu.req, &params)), 0);
        assert_nodes(t, ledger_lookup(l, "gpu"), "1");
        read_clear(&gpu);
        nic = place_xml(t, l, DOMAIN("4", HOSTDEV("0xaf")));
        ck_assert_int_eq(nic->result, PLAN_PLACED);
        /* node 1 has 2 free cores: the 4 vCPUs take node 0's, not nodes 0-1 */
        assert_nodes(t, nic, "0");
        ck_assert_uint_eq(test_max_per_core(t, nic), 1);
        ck_assert_msg(strstr(nic->reason, "away from its PCI devices (node 1): no equally near set"), "%s",
                      nic->reason);
}
END_TEST

/* Among equally near sets of several nodes, one with the device's node; devices on two nodes: a node of
 * either, never a wider set to reach both. */
START_TEST(test_sets_of_several_nodes)
{
        /* two packages of two nodes: 0-1 and 2-3 near each other */
        static const uint32_t distance[] = {10, 12, 20, 20, 12, 10, 20, 20, 20, 20, 10, 12, 20, 20, 12, 10};
        g_autoptr(Topology) t = topology_new_uniform(4, 4, 2, 16 * GiB, distance);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) node3 = cpuset_new(), both = cpuset_new();
        PlacementRequest big = {.name = "big", .vcpus = 6, .memory = 8 * GiB, .device_nodes = node3};
        PlacementRequest small = {.name = "small", .vcpus = 2, .memory = 2 * GiB, .device_nodes = both};
        g_autoptr(Plan) a = NULL, b = NULL, c = NULL;

        cpuset_add(node3, 3);
        cpuset_add(both, 0);
        cpuset_add(both, 3);
        a = policy_place(t, l, &big, &params);
        assert_nodes(t, a, "2-3");
        big.device_nodes = NULL;
        b = policy_place(t, l, &big, &params);
        assert_nodes(t, b, "0-1");
        c = policy_place(t, l, &small, &params);
        ck_assert_uint_eq(test_plan_node_count(c), 1);
        ck_assert_msg(cpuset_has(c->nodes, 0) || cpuset_has(c->nodes, 3), "%s", c->reason);
        ck_assert_msg(strstr(c->reason, "; near its PCI devices (local to nodes 0,3; the set has "), "%s",
                      c->reason);
}
END_TEST

/* Without SMT the emulator needs a free core of the set: a device's node with exactly a core per vCPU
 * does not win over a set that leaves one (the emulator was squeezed onto the guest's own vCPU cores) */
START_TEST(test_device_keeps_housekeeping_core)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 8, 1, 32 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) node1 = cpuset_new();
        PlacementRequest a = {.name = "a", .vcpus = 4, .memory = GiB, .device_nodes = node1};
        PlacementRequest b = {.name = "b", .vcpus = 4, .memory = GiB, .device_nodes = node1};
        g_autoptr(CpuSet) own = cpuset_new();
        g_autoptr(Plan) pb = NULL;

        cpuset_add(node1, 1);
        ck_assert_int_eq(ledger_commit(l, "a", policy_place(t, l, &a, &params)), 0);
        assert_nodes(t, ledger_lookup(l, "a"), "1");
        ck_assert(ledger_lookup(l, "a")->device_near);
        pb = policy_place(t, l, &b, &params);
        assert_nodes(t, pb, "0");
        ck_assert(!pb->device_near);
        for (unsigned i = 0; i < pb->nvcpus; i++)
                cpuset_union(own, pb->vcpu_pins[i]);
        ck_assert(!cpuset_is_empty(pb->emulator_pin) && !cpuset_intersects(pb->emulator_pin, own));
        ck_assert_msg(strstr(pb->reason, "away from its PCI devices (node 1): no equally near set"), "%s",
                      pb->reason);
}
END_TEST

/* With SMT the emulator takes its vCPUs' idle siblings: the device's node with exactly a free core per
 * vCPU wins (the spare core asked of hosts without SMT is not asked here); and a cpuset that allows the
 * device's node does not take the blame when room kept the guest away */
START_TEST(test_device_node_exactly_full_with_smt)
{
        g_autoptr(Topology) t = test_topology_load("xeon-2s-pci.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest fill = {.name = "fill", .vcpus = 6, .memory = 4 * GiB};
        g_autoptr(Plan) nic = NULL, wide = NULL;

        ck_assert_int_eq(ledger_commit(l, "fill", policy_place(t, l, &fill, &params)), 0);
        assert_nodes(t, ledger_lookup(l, "fill"), "0");
        nic = place_xml(t, l, DOMAIN("2", HOSTDEV("0x17")));
        assert_nodes(t, nic, "0");
        ck_assert_uint_eq(test_max_per_core(t, nic), 1);
        wide = place_xml(t, l,
                         "<domain type='kvm'><name>g</name><memory unit='GiB'>4</memory>"
                         "<vcpu cpuset='0-31'>4</vcpu><os><type>hvm</type></os><devices>" HOSTDEV(
                             "0x17") "</devices></domain>");
        assert_nodes(t, wide, "1");
        ck_assert_msg(strstr(wide->reason,
                             "away from its PCI devices (node 0): no equally near set with them "
                             "has room"),
                      "%s", wide->reason);
}
END_TEST

/* explain shows the sets the device passed over, and says the device chose */
START_TEST(test_device_explained)
{
        g_autoptr(Topology) t = test_topology_load("xeon-2s-pci.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) nic = place_xml(t, l, DOMAIN("4", HOSTDEV("0xaf")));
        g_autofree char *text = plan_explain(t, nic);

        ck_assert(nic->device_near);
        ck_assert_uint_ge(nic->candidates->len, 2); /* node 0, which the device passed over, and node 1 */
        ck_assert_msg(strstr(text, "one with a node of its PCI devices first (it chose here)"), "%s", text);
}
END_TEST

static Suite *make_suite(void)
{
        Suite *s = suite_create("devices");
        TCase *tc = tcase_create("devices");

        tcase_add_test(tc, test_parse_devices);
        tcase_add_test(tc, test_parse_no_devices);
        tcase_add_test(tc, test_parse_bad_address);
        tcase_add_test(tc, test_address_text);
        tcase_add_test(tc, test_near_device);
        tcase_add_test(tc, test_near_device_on_node_without_cpus);
        tcase_add_test(tc, test_free_cores_before_device);
        tcase_add_test(tc, test_sets_of_several_nodes);
        tcase_add_test(tc, test_device_keeps_housekeeping_core);
        tcase_add_test(tc, test_device_explained);
        tcase_add_test(tc, test_device_node_exactly_full_with_smt);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(make_suite)
