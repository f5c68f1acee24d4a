/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hwloc 3.0's XML: rewritten as 2.0 XML (topology_xml_v3_to_v2()) before hwloc 2.x reads it. Each 3.0
 * fixture (tests/topologies/to-v3.sh) loads into the same topology as its 2.x twin and gets the same
 * plans; hwloc reads the rewrite's OS device types, infos, distances, memory attributes and CPU kinds
 * as hwloc 3.0 meant them; the checks of the XML path apply to the rewrite.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <hwloc.h>
#include <string.h>

#include "test-util.h"

#include "test-policy-util.h"
#include "topology-load.h"
#include "topology-xml-v3.h"

#define HOSTDEV(bus)                                                                                        \
        "<domain type='kvm'><name>g</name><memory unit='GiB'>4</memory><vcpu>4</vcpu><os><type>hvm</type>"  \
        "</os><devices><hostdev mode='subsystem' type='pci' managed='yes'><source><address "                \
        "domain='0x0000' bus='" bus "' slot='0x00' function='0x0'/></source></hostdev></devices></domain>"

typedef struct HwlocTopology HwlocTopology;
static void hwloc_unref(HwlocTopology *t)
{
        hwloc_topology_destroy((hwloc_topology_t)(void *)t);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwlocTopology, hwloc_unref)

static const char *const twins[][2] = {
    {"hwloc-3.0.xml", "two-node-smt.xml"},       {"opteron-6272-v3.xml", "opteron-6272.xml"},
    {"hbm-no-slit-v3.xml", "hbm-no-slit.xml"},   {"hybrid-small-v3.xml", "hybrid-small.xml"},
    {"two-node-pci-v3.xml", "two-node-pci.xml"},
};

static Topology *load_ok(const char *source)
{
        Topology *t = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(topology_load(source, &t, &error) == 0, "%s: %s", source, error ? error : "");
        return t;
}

/* XML text written to a file and loaded; returns topology_load()'s result. */
static int load_text(const char *xml, Topology **ret, char **ret_error)
{
        g_autofree char *dir = g_dir_make_tmp("placementd-v3-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "host.xml", NULL);
        int r;

        ck_assert(g_file_set_contents(path, xml, -1, NULL));
        r = topology_load(path, ret, ret_error);
        test_remove_dir(dir);
        return r;
}

static void assert_set(const CpuSet *a, const CpuSet *b)
{
        ck_assert_int_eq(a == NULL, b == NULL);
        if (a)
                ck_assert(cpuset_equal(a, b));
}

/* Everything placement reads, but the source: the shape, and each node's kind, local CPUs and pools, the
 * whole of each core and PU, CPU kinds, PCI devices and caches. */
static void assert_same(const Topology *a, const Topology *b)
{
        test_assert_same_shape(a, b);
        ck_assert_int_eq(a->memory_sizes_unknown, b->memory_sizes_unknown);
        for (unsigned i = 0; i < a->nnodes; i++) {
                const TopoNode *x = &a->nodes[i], *y = &b->nodes[i];

                ck_assert_int_eq(x->kind, y->kind);
                ck_assert_int_eq(x->no_local_memory, y->no_local_memory);
                assert_set(x->local_cpus, y->local_cpus);
                ck_assert_uint_eq(x->nhugepages, y->nhugepages);
                for (unsigned h = 0; h < x->nhugepages; h++) {
                        ck_assert_uint_eq(x->hugepages[h].size, y->hugepages[h].size);
                        ck_assert_uint_eq(x->hugepages[h].count, y->hugepages[h].count);
                }
        }
        for (unsigned i = 0; i < a->ncores; i++)
                ck_assert_mem_eq(&a->cores[i], &b->cores[i], sizeof(TopoCore));
        ck_assert_mem_eq(a->pus, b->pus, sizeof(TopoPu) * a->npus);
        ck_assert_uint_eq(a->ncore_kinds, b->ncore_kinds);
        for (unsigned i = 0; i < a->ncore_kinds; i++) {
                ck_assert_str_eq(a->core_kind_names[i], b->core_kind_names[i]);
                ck_assert_uint_eq(a->core_kind_max_mhz[i], b->core_kind_max_mhz[i]);
        }
        ck_assert_uint_eq(a->npci, b->npci);
        for (unsigned i = 0; i < a->npci; i++) {
                ck_assert_uint_eq(a->pci[i].address, b->pci[i].address);
                assert_set(a->pci[i].nodes, b->pci[i].nodes);
                assert_set(a->pci[i].sits_on, b->pci[i].sits_on);
        }
        ck_assert_uint_eq(a->ncaches, b->ncaches);
        for (unsigned i = 0; i < a->ncaches; i++) {
                ck_assert_uint_eq(a->caches[i].level, b->caches[i].level);
                ck_assert_uint_eq(a->caches[i].id, b->caches[i].id);
                assert_set(a->caches[i].cpus, b->caches[i].cpus);
        }
}

static void assert_same_plan(const Plan *a, const Plan *b)
{
        ck_assert_int_eq(a->result, b->result);
        ck_assert_uint_eq(a->nvcpus, b->nvcpus);
        assert_set(a->nodes, b->nodes);
        for (unsigned v = 0; v < a->nvcpus; v++)
                assert_set(a->vcpu_pins[v], b->vcpu_pins[v]);
        assert_set(a->emulator_pin, b->emulator_pin);
        ck_assert_mem_eq(a->node_memory, b->node_memory, sizeof(uint64_t) * a->nnode_memory);
        ck_assert_int_eq(a->device_near, b->device_near);
        ck_assert_str_eq(a->reason, b->reason);
}

/* Several domains one after another (each seeing those before it), under both policies. */
static void assert_same_plans(const Topology *a, const Topology *b)
{
        static const PolicyKind policies[] = {POLICY_EXPLICIT, POLICY_COMPAT};

        for (unsigned p = 0; p < G_N_ELEMENTS(policies); p++) {
                PlacementParams params = test_params(policies[p]);
                g_autoptr(Ledger) la = ledger_new(a), lb = ledger_new(b);

                for (unsigned i = 0; i < 4; i++) {
                        g_autofree char *name = g_strdup_printf("vm%u", i);
                        const Plan *x = test_place(a, la, &params, name, 2 + 2 * i, (1 + i) * GiB);
                        const Plan *y = test_place(b, lb, &params, name, 2 + 2 * i, (1 + i) * GiB);

                        assert_same_plan(x, y);
                }
        }
}

START_TEST(test_twin_loads_the_same)
{
        g_autofree char *v3 = test_topology_path(twins[_i][0]), *v2 = test_topology_path(twins[_i][1]);
        g_autoptr(Topology) a = load_ok(v3);
        g_autoptr(Topology) b = load_ok(v2);

        assert_same(a, b);
        assert_same_plans(a, b);
}
END_TEST

/* The locality of a passed-through PCI device: the plan goes to its node, as on the 2.x twin. */
START_TEST(test_pci_locality)
{
        g_autofree char *v3 = test_topology_path("two-node-pci-v3.xml"),
                        *v2 = test_topology_path("two-node-pci.xml");
        g_autoptr(Topology) a = load_ok(v3);
        g_autoptr(Topology) b = load_ok(v2);
        static const char *const buses[] = {HOSTDEV("0x17"), HOSTDEV("0xaf")};

        ck_assert_uint_eq(a->npci, 2);
        for (unsigned i = 0; i < G_N_ELEMENTS(buses); i++) {
                PlacementParams params = test_params(POLICY_EXPLICIT);
                g_autoptr(Ledger) la = ledger_new(a), lb = ledger_new(b);
                g_autoptr(Plan) x = test_place_xml(a, la, buses[i], &params);
                g_autoptr(Plan) y = test_place_xml(b, lb, buses[i], &params);

                ck_assert(cpuset_has(x->nodes, i));
                assert_same_plan(x, y);
        }
}
END_TEST

static char *rewrite(const char *fixture)
{
        g_autofree char *path = test_topology_path(fixture);
        g_autofree char *error = NULL;
        char *xml = NULL;
        gsize len = 0;

        ck_assert(g_file_get_contents(path, &xml, &len, NULL));
        ck_assert_msg(topology_xml_v3_to_v2(&xml, &len, &error) == 1, "%s: %s", fixture, error ? error : "");
        ck_assert_uint_eq(len, strlen(xml));
        ck_assert_ptr_nonnull(strstr(xml, "<topology version=\"2.0\">"));
        ck_assert_ptr_null(strstr(xml, " id=\""));
        return xml;
}

static HwlocTopology *hwloc_load_text(const char *xml)
{
        hwloc_topology_t topo = NULL;

        ck_assert_int_eq(hwloc_topology_init(&topo), 0);
        hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
        ck_assert_int_eq(hwloc_topology_set_xmlbuffer(topo, xml, (int)strlen(xml) + 1), 0);
        ck_assert_int_eq(hwloc_topology_load(topo), 0);
        return (HwlocTopology *)(void *)topo;
}

static hwloc_obj_t osdev(hwloc_topology_t topo, const char *name)
{
        hwloc_obj_t o = NULL;

        while ((o = hwloc_get_next_osdev(topo, o)))
                if (o->name && strcmp(o->name, name) == 0)
                        return o;
        ck_abort_msg("no OS device %s", name);
        return NULL;
}

/* 3.0's OS device bits become 2.x's types; the topology's infos are the root object's again. */
START_TEST(test_rewrite_osdev_and_infos)
{
        g_autofree char *xml = rewrite("two-node-pci-v3.xml");
        g_autoptr(HwlocTopology) h = hwloc_load_text(xml);
        hwloc_topology_t topo = (hwloc_topology_t)(void *)h;
        hwloc_obj_t root = hwloc_get_root_obj(topo);

        ck_assert_int_eq(osdev(topo, "ens1f0")->attr->osdev.type, HWLOC_OBJ_OSDEV_NETWORK);
        ck_assert_int_eq(osdev(topo, "ib0")->attr->osdev.type, HWLOC_OBJ_OSDEV_NETWORK);
        ck_assert_int_eq(osdev(topo, "mlx5_0")->attr->osdev.type, HWLOC_OBJ_OSDEV_OPENFABRICS);
        ck_assert_int_eq(osdev(topo, "sda")->attr->osdev.type, HWLOC_OBJ_OSDEV_BLOCK);
        ck_assert_int_eq(osdev(topo, "ens1f0")->parent->type, HWLOC_OBJ_PCI_DEVICE);
        ck_assert_str_eq(hwloc_obj_get_info_by_name(root, "Backend"), "Synthetic");
        ck_assert_str_eq(hwloc_obj_get_info_by_name(root, "hwlocVersion"), "3.0.0");
}
END_TEST

/* Distances, memory attributes (their <info> dropped, as hwloc 3 ignores it) and CPU kinds reach hwloc. */
START_TEST(test_rewrite_distances_memattrs_kinds)
{
        g_autofree char *opteron = rewrite("opteron-6272-v3.xml"), *hbm = rewrite("hbm-no-slit-v3.xml"),
                        *hybrid = rewrite("hybrid-small-v3.xml");
        g_autoptr(HwlocTopology) ho = hwloc_load_text(opteron);
        g_autoptr(HwlocTopology) hh = hwloc_load_text(hbm);
        g_autoptr(HwlocTopology) hk = hwloc_load_text(hybrid);
        struct hwloc_distances_s *d = NULL;
        unsigned nr = 1;
        hwloc_memattr_id_t id;
        struct hwloc_location initiator = {.type = HWLOC_LOCATION_TYPE_CPUSET};
        hwloc_uint64_t value = 0;
        hwloc_obj_t hbm1;

        ck_assert_int_eq(hwloc_distances_get((hwloc_topology_t)(void *)ho, &nr, &d, 0, 0), 0);
        ck_assert_uint_eq(nr, 1);
        ck_assert_uint_eq(d->nbobjs, 8);
        ck_assert_uint_eq(d->values[1], 16);
        ck_assert_uint_eq(d->values[3], 22);
        hwloc_distances_release((hwloc_topology_t)(void *)ho, d);

        ck_assert_ptr_null(strstr(hbm, "HMAT"));
        ck_assert_int_eq(hwloc_memattr_get_by_name((hwloc_topology_t)(void *)hh, "Bandwidth", &id), 0);
        hbm1 = hwloc_get_numanode_obj_by_os_index((hwloc_topology_t)(void *)hh, 1);
        initiator.location.cpuset = hwloc_bitmap_alloc();
        hwloc_bitmap_set_range(initiator.location.cpuset, 0, 1);
        ck_assert_int_eq(
            hwloc_memattr_get_value((hwloc_topology_t)(void *)hh, id, hbm1, &initiator, 0, &value), 0);
        ck_assert_uint_eq(value, 80000);
        hwloc_bitmap_free(initiator.location.cpuset);

        ck_assert_int_eq(hwloc_cpukinds_get_nr((hwloc_topology_t)(void *)hk, 0), 2);
}
END_TEST

#define V3_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"3.0\">\n"
#define V3_MACHINE(attrs)                                                                                   \
        "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" "     \
        "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" id=\"obj1\"" attrs ">\n"                    \
        "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" "    \
        "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" id=\"obj4\" "                               \
        "local_memory=\"1073741824\"/>\n"
#define V3_CORE(pu1)                                                                                        \
        "<object type=\"L2Cache\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" "                    \
        "nodeset=\"0x00000001\" "                                                                           \
        "complete_nodeset=\"0x00000001\" id=\"obj5\" cache_size=\"1048576\" depth=\"2\" "                   \
        "cache_linesize=\"64\" "                                                                            \
        "cache_associativity=\"0\" cache_type=\"0\" cache_inclusive=\"1\">\n"                               \
        "<object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" "        \
        "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" id=\"obj6\">\n"                             \
        "<object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" "          \
        "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" id=\"obj2\"/>\n"                            \
        "<object type=\"PU\" os_index=\"" pu1 "\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\" "    \
        "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" id=\"obj3\"/>\n</object>\n</object>\n"
#define V3_INFO "<info name=\"HostName\" value=\"a&amp;b &lt;c&gt; &quot;d&quot; 'e'&#10;f\"/>\n"

/* Without gp_index (ids only), with an attribute 2.x does not know, and infos with characters to escape. */
START_TEST(test_rewrite_ids_and_escaping)
{
        g_autofree char *xml =
            g_strdup(V3_HEAD V3_MACHINE("") V3_CORE("1") "</object>\n" V3_INFO "</topology>\n");
        g_autofree char *error = NULL;
        gsize len = strlen(xml);
        g_autoptr(HwlocTopology) h = NULL;
        hwloc_obj_t pu;
        Topology *t = NULL;

        ck_assert_int_eq(topology_xml_v3_to_v2(&xml, &len, &error), 1);
        ck_assert_ptr_nonnull(strstr(xml, "gp_index=\"2\""));
        ck_assert_ptr_null(strstr(xml, "cache_inclusive"));
        h = hwloc_load_text(xml);
        pu = hwloc_get_pu_obj_by_os_index((hwloc_topology_t)(void *)h, 1);
        ck_assert_uint_eq(pu->gp_index, 3);
        ck_assert_str_eq(
            hwloc_obj_get_info_by_name(hwloc_get_root_obj((hwloc_topology_t)(void *)h), "HostName"),
            "a&b <c> \"d\" 'e'\nf");

        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(
            load_text(V3_HEAD V3_MACHINE("") V3_CORE("1") "</object>\n</topology>\n", &t, &error), 0);
        ck_assert_uint_eq(t->npus, 2);
        topology_free(t);
}
END_TEST

/* Minor versions of 3 are 3.x; 4.0 and a 3 that is no "3.MINOR" stay refused with the message that says how
 * to export it; the checks before hwloc apply to the rewrite; malformed 3.0 XML is invalid XML. */
START_TEST(test_versions_and_checks)
{
        static const struct {
                const char *xml;
                int r;
                const char *message;
        } cases[] = {
            {"<?xml version=\"1.0\"?>\n<topology version=\"3.1\">\n" V3_MACHINE("")
                 V3_CORE("1") "</object>\n"
                              "</topology>\n",
             0, NULL},
            {"<topology version=\"4.0\">\n" V3_MACHINE("") V3_CORE("1") "</object>\n</topology>\n",
             -EPROTONOSUPPORT,
             "XML of hwloc 4.0 (<topology version=\"4.0\">), not the XML of hwloc 1.x to 3.x"},
            {"<topology version=\"3.0x\">\n" V3_MACHINE("") V3_CORE("1") "</object>\n</topology>\n",
             -EPROTONOSUPPORT, "XML of hwloc 3.0x (<topology version=\"3.0x\">), not the XML"},
            {"<topology version=\"4.0\">\n" V3_MACHINE("") V3_CORE("1") "</object>\n</topology>\n",
             -EPROTONOSUPPORT, "--export-xml-flags v2"},
            {V3_HEAD V3_MACHINE("") V3_CORE("99999999") "</object>\n</topology>\n", -EINVAL,
             "has os_index \"99999999\", above the"},
            {V3_HEAD V3_MACHINE("") V3_CORE("1"), -EINVAL, "invalid hwloc XML"},
            {V3_HEAD "<info name=\"Backend\" value=\"x\"/>\n</topology>\n", -EINVAL, "no <object>"},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                Topology *t = NULL;
                g_autofree char *error = NULL;
                int r = load_text(cases[i].xml, &t, &error);

                ck_assert_msg(r == cases[i].r, "case %u: %d (%s)", i, r, error ? error : "");
                if (cases[i].message)
                        ck_assert_msg(error && strstr(error, cases[i].message), "case %u: %s", i,
                                      error ? error : "");
                if (t)
                        topology_free(t);
        }
}
END_TEST

/* XML that is not 3.x is left as it is, the same buffer. */
START_TEST(test_other_versions_left)
{
        static const char *const docs[] = {
            "<topology version=\"2.0\"><object type=\"Machine\"/></topology>",
            "<topology><object type=\"Machine\"/></topology>",
            "<topology version=\"30\"/>",
            "<topology version=\"3.0\x1b]0;x\a\"><object type=\"Machine\"/></topology>",
            "<topology version=\"3.\"/>",
            "not XML",
            ""};

        for (unsigned i = 0; i < G_N_ELEMENTS(docs); i++) {
                char *xml = g_strdup(docs[i]), *before = xml;
                gsize len = strlen(xml);
                g_autofree char *error = NULL;

                ck_assert_int_eq(topology_xml_v3_to_v2(&xml, &len, &error), 0);
                ck_assert_ptr_eq(xml, before);
                ck_assert_str_eq(xml, docs[i]);
                g_free(xml);
        }
}
END_TEST

static Suite *topology_v3_suite(void)
{
        Suite *s = suite_create("topology v3");
        TCase *tc = tcase_create("core");

        tcase_add_loop_test(tc, test_twin_loads_the_same, 0, G_N_ELEMENTS(twins));
        tcase_add_test(tc, test_pci_locality);
        tcase_add_test(tc, test_rewrite_osdev_and_infos);
        tcase_add_test(tc, test_rewrite_distances_memattrs_kinds);
        tcase_add_test(tc, test_rewrite_ids_and_escaping);
        tcase_add_test(tc, test_versions_and_checks);
        tcase_add_test(tc, test_other_versions_left);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(topology_v3_suite)
