/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * placement_request_same_asks(): two reads of a domain ask the same when nothing the user controls
 * changed between them, and differ when any one constraint did. The healer plans on a request it read
 * earlier and re-reads the domain before it moves it: this is what tells it the user changed something.
 */
#include "test-util.h"

#include <string.h>

#include "domain-request.h"

/* The reference: 4 vCPUs in two guest cells, hugepages, two I/O threads, its memory bound to node 0. */
#define BASE                                                                                                \
        "<domain type='kvm'><name>g</name><memory unit='MiB'>2048</memory>"                                 \
        "<memoryBacking><hugepages/></memoryBacking>"                                                       \
        "<vcpu cpuset='0-7'>4</vcpu><iothreads>2</iothreads>"                                               \
        "<cpu><numa><cell id='0' cpus='0-1' memory='1024' unit='MiB'/>"                                     \
        "<cell id='1' cpus='2-3' memory='1024' unit='MiB'/></numa></cpu>"                                   \
        "<numatune><memory mode='strict' nodeset='0'/></numatune>"                                          \
        "<os><type>hvm</type></os></domain>"

#define HOSTDEV(bus)                                                                                        \
        "<hostdev mode='subsystem' type='pci'><source><address domain='0' bus='" bus                        \
        "' slot='0' function='0'/></source></hostdev>"

/* One read of xml: its request (pointing into the spec and the cells kept here). */
typedef struct Read {
        DomainSpec *spec;
        RequestShape shape;
        PlacementRequest req;
} Read;

/* A host whose PCI devices have a locality: 0000:17:00.0 on node 0, 0000:af:00.0 on node 1. */
static Topology *host;

static void read_xml(Read *r, const char *xml)
{
        g_autofree char *error = NULL;

        if (!host)
                host = test_topology_load("xeon-2s-pci.xml");
        ck_assert_msg(domain_xml_parse(xml, &r->spec, &error) == 0, "%s", error);
        r->req = domain_request(r->spec, r->spec);
        domain_request_shape(r->spec, host, &r->req, &r->shape);
}

static void read_clear(Read *r)
{
        domain_spec_free(r->spec);
        request_shape_clear(&r->shape);
}

/* BASE with its first occurrence of from replaced by to. */
static char *edited(const char *from, const char *to)
{
        const char *at = strstr(BASE, from);

        ck_assert_msg(at, "'%s' is not in the reference", from);
        return g_strdup_printf("%.*s%s%s", (int)(at - BASE), BASE, to, at + strlen(from));
}

START_TEST(test_same_read_same_asks)
{
        Read a = {0}, b = {0};
        double busy[4] = {0.9, 0.1, 0.0, 1.0};

        read_xml(&a, BASE);
        read_xml(&b, BASE);
        ck_assert(placement_request_same_asks(&a.req, &b.req));
        /* load is measured, not asked for */
        b.req.vcpu_busy = busy;
        b.req.host_busy = 1.5;
        ck_assert(placement_request_same_asks(&a.req, &b.req));
        read_clear(&a);
        read_clear(&b);
}
END_TEST

START_TEST(test_each_change_differs)
{
        static const struct {
                const char *what, *from, *to;
        } cases[] = {
            {"name", "<name>g</name>", "<name>h</name>"},
            {"vCPUs", "0-7'>4<", "0-7'>5<"},
            {"memory", "2048</memory>", "4096</memory>"},
            {"<vcpu cpuset>", "cpuset='0-7'", "cpuset='0-3'"},
            {"no <vcpu cpuset>", " cpuset='0-7'", ""},
            {"numatune nodeset", "nodeset='0'", "nodeset='1'"},
            {"numatune mode", "mode='strict'", "mode='interleave'"},
            {"no numatune", "<numatune><memory mode='strict' nodeset='0'/></numatune>", ""},
            {"emulator pinned", "<os>", "<cputune><emulatorpin cpuset='1'/></cputune><os>"},
            {"I/O threads", "<iothreads>2<", "<iothreads>3<"},
            {"I/O thread pinned", "<os>", "<cputune><iothreadpin iothread='1' cpuset='2'/></cputune><os>"},
            {"cell vCPUs", "cpus='2-3'", "cpus='2'"},
            {"cell memory", "cpus='0-1' memory='1024'", "cpus='0-1' memory='512'"},
            {"cell distances", "unit='MiB'/><cell id='1'",
             "unit='MiB'><distances><sibling id='1' value='20'/></distances></cell><cell id='1'"},
            {"guest sockets", "<cpu>", "<cpu><topology sockets='2' cores='2' threads='1'/>"},
            {"hugepage size", "<hugepages/>", "<hugepages><page size='1' unit='GiB'/></hugepages>"},
            {"no hugepages", "<memoryBacking><hugepages/></memoryBacking>", ""},
            {"a PCI device", "<os>", "<devices>" HOSTDEV("0xaf") "</devices><os>"},
        };
        Read a = {0};

        read_xml(&a, BASE);
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = edited(cases[i].from, cases[i].to);
                Read b = {0};

                read_xml(&b, xml);
                ck_assert_msg(!placement_request_same_asks(&a.req, &b.req), "%s: taken as the same",
                              cases[i].what);
                ck_assert_msg(!placement_request_same_asks(&b.req, &a.req), "%s: taken as the same",
                              cases[i].what);
                read_clear(&b);
        }
        /* and what only the daemon knows: the live binding is its own */
        {
                Read b = {0};
                read_xml(&b, BASE);
                b.req.memory_own = true;
                ck_assert(!placement_request_same_asks(&a.req, &b.req));
                read_clear(&b);
        }
        read_clear(&a);
}
END_TEST

/* Devices ask by where they are: a second device on the first one's node asks the same, one on the
 * other node does not, nor does a device that moved there. */
START_TEST(test_device_localities)
{
        g_autofree char *one = edited("<os>", "<devices>" HOSTDEV("0x17") "</devices><os>");
        g_autofree char *two = edited(
            "<os>", "<devices>" HOSTDEV("0x17") "<interface type='hostdev'><source>"
                                                "<address type='pci' domain='0x0000' bus='0x17' slot='0x02' "
                                                "function='0x0'/></source></interface></devices><os>");
        g_autofree char *moved = edited("<os>", "<devices>" HOSTDEV("0xaf") "</devices><os>");
        Read a = {0}, b = {0}, c = {0};

        read_xml(&a, one);
        read_xml(&b, two);
        read_xml(&c, moved);
        ck_assert_uint_eq(b.spec->pci_devices->len, 2);
        ck_assert_uint_eq(cpuset_count(b.req.device_nodes), 1);
        ck_assert(placement_request_same_asks(&a.req, &b.req));
        ck_assert(!placement_request_same_asks(&a.req, &c.req));
        read_clear(&a);
        read_clear(&b);
        read_clear(&c);
}
END_TEST

/* Which vCPUs run, not only how many: vCPUs 0 and 2 ask other than 0 and 3, or 0 and 1 */
START_TEST(test_online_vcpu_ids_differ)
{
        static const char *const online[] = {"0 2", "0 3", "0 1"};
        Read r[G_N_ELEMENTS(online)], again = {0};

        for (unsigned i = 0; i < G_N_ELEMENTS(online); i++) {
                g_autoptr(GString) vcpus = g_string_new("0-7' current='2'>4</vcpu><vcpus>");
                for (unsigned id = 0; id < 4; id++)
                        g_string_append_printf(vcpus, "<vcpu id='%u' enabled='%s'/>", id,
                                               strchr(online[i], (int)('0' + id)) ? "yes" : "no");
                g_string_append(vcpus, "</vcpus>");
                g_autofree char *xml = edited("0-7'>4</vcpu>", vcpus->str);
                r[i] = (Read){0};
                read_xml(&r[i], xml);
                if (i == 0)
                        read_xml(&again, xml);
        }
        ck_assert(placement_request_same_asks(&r[0].req, &again.req));
        for (unsigned i = 1; i < G_N_ELEMENTS(online); i++) {
                ck_assert_msg(!placement_request_same_asks(&r[0].req, &r[i].req), "%s", online[i]);
                ck_assert_msg(!placement_request_same_asks(&r[i].req, &r[0].req), "%s", online[i]);
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(online); i++)
                read_clear(&r[i]);
        read_clear(&again);
}
END_TEST

static Suite *request_same_suite(void)
{
        Suite *s = suite_create("request same");
        TCase *tc = tcase_create("asks");
        tcase_add_test(tc, test_same_read_same_asks);
        tcase_add_test(tc, test_each_change_differs);
        tcase_add_test(tc, test_online_vcpu_ids_differ);
        tcase_add_test(tc, test_device_localities);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(request_same_suite)
