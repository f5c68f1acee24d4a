/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A <memory model='dimm|virtio-mem'> device whose own <source><pagesize> or <source><nodemask> backs it
 * otherwise than its guest cell: libvirt backs it so (qemuBuildMemoryBackendProps()), and the ledger
 * counts it so, apart from its cell (spr-snc2: 8 cores, a pool of sixteen 1 GiB pages and 103.2 GiB of
 * ordinary memory per node).
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <string.h>

#include "decision-json.h"
#include "definition-snippet.h"
#include "domain-xml.h"
#include "metadata.h"

#define GiB (UINT64_C(1) << 30)

/* A guest of one 4 GiB cell (4 vCPUs) with backing (a <memoryBacking> or "") and a 16 GiB DIMM of
 * cell 0 with source (its <source> or "") */
static char *dimm_guest(const char *name, const char *backing, const char *source)
{
        return g_strdup_printf(
            "<domain type='kvm'><name>%s</name><maxMemory slots='4' unit='GiB'>64</maxMemory>"
            "<memory unit='GiB'>20</memory><vcpu>4</vcpu>%s<cpu><numa><cell id='0' cpus='0-3' "
            "memory='4' unit='GiB'/></numa></cpu><devices><memory model='dimm'>%s<target><size "
            "unit='GiB'>16</size><node>0</node></target></memory></devices></domain>",
            name, backing, source);
}

static uint64_t pool_total(const Topology *t, const Ledger *l)
{
        uint64_t sum = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                sum += ledger_node_hugepages(l, n, GiB);
        return sum;
}

static uint64_t ordinary_total(const Topology *t, const Ledger *l)
{
        uint64_t sum = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                sum += ledger_node_memory(l, n);
        return sum;
}

/* An ordinary guest whose DIMM has 1 GiB pages: QEMU takes 16 of a node's pages for it. Counted in its
 * cell, the pool showed free and 16 GiB of ordinary memory taken. The decision's cells mark the device,
 * and the definition snippet names no <memnode> for it (its id is no guest cell's). */
START_TEST(test_dimm_pages_in_pool)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree char *xml =
            dimm_guest("dimmpg", "", "<source><pagesize unit='KiB'>1048576</pagesize></source>");
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *snippet = NULL, *error = NULL;
        const Plan *plan = test_commit_xml(t, l, "dimmpg", xml);
        JsonArray *cells;

        ck_assert_uint_eq(pool_total(t, l), 16 * GiB);
        ck_assert_uint_eq(ordinary_total(t, l), 4 * GiB);
        ck_assert_msg(strstr(plan->reason, "a memory device of 16.0 GiB (its own <source>) on node"), "%s",
                      plan->reason);
        json_builder_begin_object(b);
        decision_json_add_members(b, t, plan, FALSE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        cells = json_object_get_array_member(json_node_get_object(root), "cells");
        ck_assert_uint_eq(json_array_get_length(cells), 2);
        ck_assert(!json_object_has_member(json_array_get_object_element(cells, 0), "memory_device"));
        ck_assert(json_object_get_boolean_member(json_array_get_object_element(cells, 1), "memory_device"));
        snippet = definition_snippet(json_node_get_object(root), &error);
        ck_assert_msg(snippet, "%s", error);
        ck_assert_msg(strstr(snippet, "<memnode cellid='0'") && !strstr(snippet, "cellid='256'"), "%s",
                      snippet);
}
END_TEST

/* A 1 GiB-page guest whose DIMM has pages of the base size (4 KiB): libvirt backs the DIMM with ordinary
 * memory. Counted in its cell, 20 GiB of pages were held for the 4 QEMU takes, and the guest was spread
 * over two nodes though one node holds it. */
START_TEST(test_dimm_base_pages_ordinary)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree char *xml = dimm_guest("dimm4k",
                                          "<memoryBacking><hugepages><page size='1' unit='G'/></hugepages>"
                                          "</memoryBacking>",
                                          "<source><pagesize unit='KiB'>4</pagesize></source>");
        const Plan *plan = test_commit_xml(t, l, "dimm4k", xml);

        ck_assert_uint_eq(pool_total(t, l), 4 * GiB);
        ck_assert_uint_eq(ordinary_total(t, l), 16 * GiB);
        ck_assert_msg(cpuset_count(plan->nodes) == 1, "%s", plan->reason);
        ck_assert_msg(!strstr(plan->reason, "lacks the room"), "%s", plan->reason);
}
END_TEST

/* A DIMM whose <source><nodemask> binds it to node 2: its memory is counted there, the cell's on its
 * vCPUs' node. A DIMM without <source>, or whose page is its cell's, stays part of its cell. */
START_TEST(test_dimm_nodemask_counted_there)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree char *xml = dimm_guest("dimmmask", "", "<source><nodemask>2</nodemask></source>");
        g_autofree char *plain = dimm_guest("plain", "", "");
        g_autofree char *same = dimm_guest("same", "", "<source><pagesize unit='KiB'>4</pagesize></source>");
        const Plan *plan = test_commit_xml(t, l, "dimmmask", xml);
        g_autoptr(DomainSpec) s = NULL;
        int node2 = topology_node_by_os(t, 2);

        ck_assert_int_ge(node2, 0);
        ck_assert_msg(!cpuset_has(plan->nodes, (unsigned)node2), "%s", plan->reason);
        ck_assert_uint_eq(ledger_node_memory(l, (unsigned)node2), 16 * GiB);
        ck_assert_uint_eq(ordinary_total(t, l), 20 * GiB);
        for (unsigned i = 0; i < 2; i++) {
                ck_assert_int_eq(domain_xml_parse(i ? same : plain, &s, NULL), 0);
                ck_assert_uint_eq(s->cells->len, 1);
                ck_assert_uint_eq(g_array_index(s->cells, DomainCell, 0).memory, 20 * GiB);
                g_clear_pointer(&s, domain_spec_free);
        }
}
END_TEST

/* A virtio-mem device is backed as a DIMM is: its own <source><pagesize> (2 MiB) has what its guest is
 * asked to plug (<requested>, 64 MiB of its 1 GiB) counted in that size's pools, its cell (256 MiB) in
 * general memory. Counted in its cell, 320 MiB of general memory was taken and the pools left free. */
START_TEST(test_virtio_mem_own_page_size)
{
        g_autoptr(Topology) t = test_topology_load("two-node-hugepages.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        uint64_t pages = 0, ordinary = 0;

        test_commit_xml(t, l, "vmem",
                        "<domain type='kvm'><name>vmem</name><maxMemory slots='4' unit='GiB'>4</maxMemory>"
                        "<memory unit='MiB'>1280</memory><vcpu>1</vcpu><cpu><numa><cell id='0' cpus='0' "
                        "memory='256' unit='MiB'/></numa></cpu><devices><memory model='virtio-mem'><source>"
                        "<pagesize unit='KiB'>2048</pagesize></source><target><size unit='GiB'>1</size>"
                        "<node>0</node><block unit='KiB'>2048</block><requested unit='MiB'>64</requested>"
                        "</target></memory></devices></domain>");
        for (unsigned n = 0; n < t->nnodes; n++) {
                pages += ledger_node_hugepages(l, n, 2u << 20);
                ordinary += ledger_node_memory(l, n);
        }
        ck_assert_uint_eq(pages, 64u << 20);
        ck_assert_uint_eq(ordinary, 256u << 20);
}
END_TEST

/* An ordinary guest with a DIMM of 1 GiB pages and one of 2 MiB pages would hold three kinds of memory,
 * more than the plan counts apart: both DIMMs are counted in their cell, as before, and the reason says
 * so. */
START_TEST(test_third_kind_counted_in_cell_and_said)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan = test_commit_xml(
            t, l, "three",
            "<domain type='kvm'><name>three</name><maxMemory slots='4' unit='GiB'>64</maxMemory>"
            "<memory unit='GiB'>12</memory><vcpu>4</vcpu><cpu><numa><cell id='0' cpus='0-3' memory='4' "
            "unit='GiB'/></numa></cpu><devices><memory model='dimm'><source><pagesize unit='KiB'>1048576"
            "</pagesize></source><target><size unit='GiB'>4</size><node>0</node></target></memory>"
            "<memory model='dimm'><source><pagesize unit='KiB'>2048</pagesize></source><target><size "
            "unit='GiB'>4</size><node>0</node></target></memory></devices></domain>");

        ck_assert_uint_eq(pool_total(t, l), 0);
        ck_assert_uint_eq(ordinary_total(t, l), 12 * GiB);
        ck_assert_msg(strstr(plan->reason, "its memory devices' own <source><pagesize> not counted apart"),
                      "%s", plan->reason);
}
END_TEST

/* A DIMM whose <source><nodemask> names a node the host lacks: libvirt cannot start the guest, and the
 * reason names the device, not a guest cell 256 no definition has; a DIMM bound by its cell's <memnode>
 * (to a node the host lacks) is that cell's, named once. One naming such a node beside one the host has
 * is placed, and said so, as a cell's <memnode> is. */
START_TEST(test_dimm_missing_node_named)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree char *xml = dimm_guest("dimm7", "", "<source><nodemask>7</nodemask></source>");
        g_autofree char *beside = dimm_guest("dimm07", "", "<source><nodemask>0,7</nodemask></source>");
        g_autofree char *cell = g_strdup_printf(
            "<domain type='kvm'><name>cell9</name><maxMemory slots='4' unit='GiB'>64</maxMemory>"
            "<memory unit='GiB'>20</memory><vcpu>4</vcpu><numatune><memnode cellid='0' mode='strict' "
            "nodeset='9'/></numatune><cpu><numa><cell id='0' cpus='0-3' memory='4' unit='GiB'/></numa>"
            "</cpu><devices><memory model='dimm'><source><pagesize unit='KiB'>1048576</pagesize></source>"
            "<target><size unit='GiB'>16</size><node>0</node></target></memory></devices></domain>");
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) plan = test_place_xml(t, l, xml, &params);
        g_autoptr(Plan) bound = test_place_xml(t, l, cell, &params);
        g_autoptr(Plan) partly = test_place_xml(t, l, beside, &params);

        ck_assert_int_eq(plan->result, PLAN_UNPLACEABLE);
        ck_assert_msg(!strstr(plan->reason, "256"), "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason, "the <source><nodemask> of a memory device of guest cell 0 binds "
                                           "its memory to node 7, which this host does not have"),
                      "%s", plan->reason);
        ck_assert_int_eq(partly->result, PLAN_PLACED);
        ck_assert_msg(strstr(partly->reason,
                             "; node 7 of the <source><nodemask> of a memory device of guest "
                             "cell 0 is not on this host"),
                      "%s", partly->reason);
        ck_assert_int_eq(bound->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(bound->reason, "the <numatune><memnode> of guest cell 0 binds its memory to "
                                            "node 9, which this host does not have"),
                      "%s", bound->reason);
}
END_TEST

/* A DIMM of 1 GiB pages that nothing binds (no <source><nodemask>, no <memnode> for its cell), in guest
 * cell 1 of a guest of two cells: the guest uses it as cell 1's memory, and QEMU's backend has the
 * kernel's default policy (numa_maps: "default"), so its pages are where cell 1's vCPUs touch them. It was
 * counted over the set in proportion to all the vCPUs, 4 GiB of it on cell 0's node. */
START_TEST(test_unbound_dimm_with_its_cell)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan = test_commit_xml(
            t, l, "two",
            "<domain type='kvm'><name>two</name><maxMemory slots='4' unit='GiB'>64</maxMemory><memory "
            "unit='GiB'>28</memory><vcpu>16</vcpu><cpu><numa><cell id='0' cpus='0-7' memory='10' "
            "unit='GiB'/><cell id='1' cpus='8-15' memory='10' unit='GiB'/></numa></cpu><devices><memory "
            "model='dimm'><source><pagesize unit='KiB'>1048576</pagesize></source><target><size "
            "unit='GiB'>8</size><node>1</node></target></memory></devices></domain>");
        int one;

        ck_assert_uint_eq(plan->ncells, 3);
        ck_assert_msg(cpuset_count(plan->cells[0].nodes) == 1 && cpuset_count(plan->cells[1].nodes) == 1 &&
                          !cpuset_equal(plan->cells[0].nodes, plan->cells[1].nodes),
                      "%s", plan->reason);
        one = cpuset_next(plan->cells[1].nodes, 0);
        ck_assert_uint_eq(pool_total(t, l), 8 * GiB);
        ck_assert_msg(ledger_node_hugepages(l, (unsigned)one, GiB) == 8 * GiB, "%s", plan->reason);
        ck_assert_msg(cpuset_equal(plan->cells[2].counted_nodes, plan->cells[1].nodes), "%s", plan->reason);
}
END_TEST

/* The definition snippet's <memnode> for a guest cell binds, at the next start, the cell's memory devices
 * without a <source><nodemask> too (libvirt gives such a device its cell's <memnode>; numa_maps: "bind"):
 * it names every node the cell's and those devices' memory is counted on. A 20 GiB DIMM of 1 GiB pages
 * in an ordinary cell is counted 16 GiB on the cell's node (its pool) and 4 GiB on the nearest; the
 * <memnode> named the cell's node only, where QEMU cannot preallocate the 20 pages. */
START_TEST(test_snippet_memnode_holds_cell_devices)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *snippet = NULL, *error = NULL, *want = NULL, *nodes = NULL;
        g_autoptr(CpuSet) os = cpuset_new();
        const Plan *plan = test_commit_xml(
            t, l, "dimm20",
            "<domain type='kvm'><name>dimm20</name><maxMemory slots='4' unit='GiB'>64</maxMemory>"
            "<memory unit='GiB'>24</memory><vcpu>4</vcpu><cpu><numa><cell id='0' cpus='0-3' memory='4' "
            "unit='GiB'/></numa></cpu><devices><memory model='dimm'><source><pagesize unit='KiB'>1048576"
            "</pagesize></source><target><size unit='GiB'>20</size><node>0</node></target></memory>"
            "</devices></domain>");

        ck_assert_uint_eq(plan->ncells, 2);
        ck_assert_msg(cpuset_count(plan->cells[1].counted_nodes) == 2, "%s", plan->reason);
        CPUSET_FOREACH (n, plan->cells[0].counted_nodes)
                cpuset_add(os, t->nodes[n].os_index);
        CPUSET_FOREACH (n, plan->cells[1].counted_nodes)
                cpuset_add(os, t->nodes[n].os_index);
        nodes = cpuset_format(os);
        json_builder_begin_object(b);
        decision_json_add_members(b, t, plan, FALSE);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        snippet = definition_snippet(json_node_get_object(root), &error);
        ck_assert_msg(snippet, "%s", error);
        want = g_strdup_printf("<memnode cellid='0' mode='strict' nodeset='%s'/>", nodes);
        ck_assert_msg(strstr(snippet, want), "%s: %s", want, snippet);
}
END_TEST

/* A guest owner's definition of more memory devices in guest cells than QEMU has DIMM slots for, twice
 * over (the test driver takes any number): refused naming them, the domain counted as it runs as any
 * unreadable definition is. Each device of its own page size is counted apart, and a decision cost grew
 * with the square of their number: 20,000 such DIMMs held the daemon 11.6 s. DOMAIN_XML_MAX_MEMORY_DEVICES
 * of them are read. */
START_TEST(test_too_many_devices_refused)
{
        for (unsigned n = DOMAIN_XML_MAX_MEMORY_DEVICES; n <= DOMAIN_XML_MAX_MEMORY_DEVICES + 1; n++) {
                GString *xml = g_string_new(NULL);
                g_autofree char *text = NULL, *error = NULL;
                g_autoptr(DomainSpec) s = NULL;
                int r;

                g_string_append_printf(xml,
                                       "<domain type='kvm'><name>many</name><maxMemory slots='%u' "
                                       "unit='TiB'>4</maxMemory><vcpu>2</vcpu><cpu><numa><cell id='0' "
                                       "cpus='0-1' memory='2' unit='GiB'/></numa></cpu><devices>",
                                       n);
                for (unsigned i = 0; i < n; i++)
                        g_string_append(xml, "<memory model='dimm'><source><pagesize unit='KiB'>1048576"
                                             "</pagesize></source><target><size unit='GiB'>1</size><node>0"
                                             "</node></target></memory>");
                g_string_append(xml, "</devices></domain>");
                text = g_string_free(xml, FALSE);
                r = domain_xml_parse(text, &s, &error);
                if (n == DOMAIN_XML_MAX_MEMORY_DEVICES) {
                        ck_assert_msg(r == 0, "%s", error);
                        ck_assert_uint_eq(s->cells->len, n + 1);
                        continue;
                }
                ck_assert_int_eq(r, -EINVAL);
                ck_assert_msg(strstr(error, "more than 512 memory devices"), "%s", error);
        }
}
END_TEST

/* A guest of <hugepages/> without a size takes the host's default size (here 1 GiB, spr-snc2's only
 * pool), as libvirt backs it: a DIMM whose own <source><pagesize> is that size is of the same kind, all
 * of it counted in 1 GiB pages, with no word of sizes that differ; one of 2 MiB pages is a second size,
 * the smaller, the cells counted in 1 GiB pages. They were taken as two sizes, the sizeless cells as the
 * smaller: the 2 MiB DIMM had the whole guest counted in 2 MiB pages, "the largest". */
START_TEST(test_default_size_dimm_one_kind)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autofree char *same = dimm_guest("dflt", "<memoryBacking><hugepages/></memoryBacking>",
                                           "<source><pagesize unit='KiB'>1048576</pagesize></source>");
        g_autofree char *small = dimm_guest("small", "<memoryBacking><hugepages/></memoryBacking>",
                                            "<source><pagesize unit='KiB'>2048</pagesize></source>");
        g_autoptr(Plan) two = test_place_xml(t, l, small, &params);
        const Plan *plan = test_commit_xml(t, l, "dflt", same);

        ck_assert_uint_eq(pool_total(t, l), 20 * GiB);
        ck_assert_uint_eq(plan->hugepage_size, GiB);
        ck_assert_uint_eq(plan->second_page_size, 0);
        ck_assert_msg(!strstr(plan->reason, "sizes differ"), "%s", plan->reason);
        ck_assert_uint_eq(two->hugepage_size, GiB);
        ck_assert_uint_eq(two->second_page_size, 2u << 20);
        ck_assert_msg(strstr(two->reason, "4.0 GiB in 1.0 GiB hugepages, 16.0 GiB in 2.0 MiB hugepages"),
                      "%s", two->reason);
}
END_TEST

/* Forty 1 GiB DIMMs of 1 GiB pages bound by their nodemasks, alternately to nodes 2 and 3 (pools of 16
 * pages): the reason says the devices of each node once, together, and that node's pool short of 4 pages,
 * within what a record keeps of a reason (METADATA_MAX_REASON). It said each device apart, 2.2 KB, and the
 * record cut the shortage off. */
START_TEST(test_many_devices_said_together)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        GString *xml = g_string_new("<domain type='kvm'><name>forty</name><maxMemory slots='64' "
                                    "unit='GiB'>128</maxMemory><memory unit='GiB'>44</memory><vcpu>4</vcpu>"
                                    "<cpu><numa><cell id='0' cpus='0-3' memory='4' unit='GiB'/></numa></cpu>"
                                    "<devices>");
        g_autofree char *text = NULL;
        g_autoptr(Plan) plan = NULL;

        for (unsigned i = 0; i < 40; i++)
                g_string_append_printf(xml,
                                       "<memory model='dimm'><source><pagesize unit='KiB'>1048576</pagesize>"
                                       "<nodemask>%u</nodemask></source><target><size unit='GiB'>1</size>"
                                       "<node>0</node></target></memory>",
                                       2 + i % 2);
        g_string_append(xml, "</devices></domain>");
        text = g_string_free(xml, FALSE);
        plan = test_place_xml(t, l, text, &params);
        ck_assert_msg(strlen(plan->reason) <= METADATA_MAX_REASON, "%zu: %s", strlen(plan->reason),
                      plan->reason);
        ck_assert_msg(strstr(plan->reason,
                             "20 memory devices of 20.0 GiB in all (their own <source>) on "
                             "node 2, 20 memory devices of 20.0 GiB in all (their own <source>) "
                             "on node 3"),
                      "%s", plan->reason);
        ck_assert_msg(strstr(plan->reason,
                             "node 3 has 16.0 GiB free in hugepages of 1.0 GiB for the 20.0 GiB "
                             "bound there"),
                      "%s", plan->reason);
}
END_TEST

/* A guest of <hugepages/> without a size (the host's default, 1 GiB here) with a DIMM of 1 GiB pages and
 * one of 4 KiB pages holds two kinds: 6 GiB of 1 GiB pages and 8 GiB of ordinary memory. The sizeless
 * cells were taken as a third kind, both DIMMs put back into their cell and all 14 GiB counted in 1 GiB
 * pages, the reason saying the guest would hold more kinds than two. */
START_TEST(test_default_size_not_a_third_kind)
{
        g_autoptr(Topology) t = test_topology_load("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        const Plan *plan = test_commit_xml(
            t, l, "k3",
            "<domain type='kvm'><name>k3</name><maxMemory slots='4' unit='GiB'>64</maxMemory><memory "
            "unit='GiB'>14</memory><vcpu>4</vcpu><memoryBacking><hugepages/></"
            "memoryBacking><cpu><numa><cell "
            "id='0' cpus='0-3' memory='4' unit='GiB'/></numa></cpu><devices><memory model='dimm'><source>"
            "<pagesize unit='KiB'>1048576</pagesize></source><target><size unit='GiB'>2</size><node>0</node>"
            "</target></memory><memory model='dimm'><source><pagesize unit='KiB'>4</pagesize></source>"
            "<target><size unit='GiB'>8</size><node>0</node></target></memory></devices></domain>");

        ck_assert_uint_eq(pool_total(t, l), 6 * GiB);
        ck_assert_uint_eq(ordinary_total(t, l), 8 * GiB);
        ck_assert_msg(!strstr(plan->reason, "not counted apart"), "%s", plan->reason);
}
END_TEST

static Suite *memory_devices_suite(void)
{
        Suite *s = suite_create("policy memory devices");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_dimm_pages_in_pool);
        tcase_add_test(tc, test_dimm_base_pages_ordinary);
        tcase_add_test(tc, test_dimm_nodemask_counted_there);
        tcase_add_test(tc, test_third_kind_counted_in_cell_and_said);
        tcase_add_test(tc, test_virtio_mem_own_page_size);
        tcase_add_test(tc, test_dimm_missing_node_named);
        tcase_add_test(tc, test_unbound_dimm_with_its_cell);
        tcase_add_test(tc, test_snippet_memnode_holds_cell_devices);
        tcase_add_test(tc, test_default_size_dimm_one_kind);
        tcase_add_test(tc, test_many_devices_said_together);
        tcase_add_test(tc, test_too_many_devices_refused);
        tcase_add_test(tc, test_default_size_not_a_third_kind);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(memory_devices_suite)
