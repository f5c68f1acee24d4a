/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <ftw.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "nodesets.h"
#include "pci.h"
#include "test-util.h"
#include "topology-load.h"
#include "topology.h"
#include "topology-xml-trial.h"
#include "topology-xml.h"

#define HOST_2X16X2 "synthetic:pack:2 numa:1(memory=64GB) l3:1 core:16 pu:2"
#define E           TOPOLOGY_UNREACHABLE

/* hwloc's synthetic "GB" is decimal: 64GB = 64 * 10^9 bytes. */
#define GB(n) ((uint64_t)(n)*1000000000u)

static const uint32_t opteron_6272[64] = {
    10, 16, 16, 22, 16, 22, 16, 22, /**/ 16, 10, 22, 16, 16, 22, 22, 16, /**/
    16, 22, 10, 16, 16, 16, 16, 16, /**/ 22, 16, 16, 10, 16, 16, 22, 22, /**/
    16, 16, 16, 16, 10, 16, 16, 22, /**/ 22, 22, 16, 16, 16, 10, 22, 16, /**/
    16, 22, 16, 22, 16, 22, 10, 16, /**/ 22, 16, 16, 22, 22, 16, 16, 10,
};

static void assert_cpus(const CpuSet *s, const char *expected)
{
        g_autofree char *text = cpuset_format(s);
        ck_assert_str_eq(text, expected);
}

static bool has_note(const Topology *t, const char *needle)
{
        for (unsigned i = 0; i < t->notes->len; i++)
                if (strstr(g_ptr_array_index(t->notes, i), needle))
                        return true;
        return false;
}

#define ck_assert_note(t, needle) ck_assert_msg(has_note((t), (needle)), "no note containing '%s'", (needle))

/* What must hold for every snapshot, whatever the source. */
static void check_invariants(const Topology *t)
{
        g_autoptr(CpuSet) all = cpuset_new();
        g_autofree bool *package_used = NULL, *l3_used = NULL;
        unsigned core = 0, pu = 0, max_threads = 0;

        ck_assert_uint_ge(t->nnodes, 1);
        ck_assert_ptr_nonnull(t->nodes);
        ck_assert_ptr_nonnull(t->distance);
        ck_assert_ptr_nonnull(t->notes);
        ck_assert_ptr_nonnull(t->nodesets);
        ck_assert_uint_eq(t->nodesets->nnodes, t->nnodes);
        ck_assert(!(t->flat && t->distances_known));
        package_used = g_new0(bool, t->npackages);
        l3_used = g_new0(bool, t->nl3);

        for (unsigned n = 0; n < t->nnodes; n++) {
                const TopoNode *node = &t->nodes[n];
                g_autoptr(CpuSet) cpus = cpuset_new();
                unsigned npus = 0;

                ck_assert_uint_eq(node->core_first, core);
                ck_assert_int_eq(topology_node_by_os(t, node->os_index), (int)n);
                for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                        const TopoCore *tc = &t->cores[c];

                        ck_assert_uint_eq(tc->node, n);
                        ck_assert_uint_eq(tc->pu_first, pu);
                        ck_assert_uint_ge(tc->npus, 1);
                        ck_assert_uint_lt(tc->package, t->npackages);
                        ck_assert_uint_lt(tc->l3, t->nl3);
                        ck_assert(cpuset_has(t->packages[tc->package].nodes, n));
                        package_used[tc->package] = true;
                        l3_used[tc->l3] = true;
                        max_threads = MAX(max_threads, tc->npus);
                        for (unsigned p = tc->pu_first; p < tc->pu_first + tc->npus; p++) {
                                ck_assert_uint_eq(t->pus[p].core, c);
                                ck_assert_int_eq(topology_pu_by_os(t, t->pus[p].os_index), (int)p);
                                ck_assert(!cpuset_has(cpus, t->pus[p].os_index));
                                cpuset_add(cpus, t->pus[p].os_index);
                                npus++;
                        }
                        pu += tc->npus;
                }
                core += node->ncores;
                ck_assert_uint_eq(node->npus, npus);
                ck_assert(cpuset_equal(node->cpus, cpus));
                ck_assert(!cpuset_intersects(all, cpus));
                cpuset_union(all, cpus);

                for (unsigned m = 0; m < t->nnodes; m++) {
                        uint32_t d = topology_distance(t, n, m);
                        if (n == m) /* the stand-in for CPUs local to no node is far even from itself */
                                ck_assert(d == TOPOLOGY_LOCAL || d == E || node->no_local_memory);
                        else
                                ck_assert(d == E || d >= TOPOLOGY_LOCAL);
                }
        }
        ck_assert_uint_eq(core, t->ncores);
        ck_assert_uint_eq(pu, t->npus);
        ck_assert_uint_eq(max_threads, t->max_threads);
        ck_assert(cpuset_equal(all, t->all_pus));
        ck_assert_uint_eq(cpuset_count(t->all_pus), t->npus);
        for (unsigned i = 0; i < t->npackages; i++)
                ck_assert(package_used[i]);
        for (unsigned i = 0; i < t->nl3; i++)
                ck_assert(l3_used[i]);
}

static Topology *load_ok(const char *source)
{
        Topology *t = NULL;
        g_autofree char *error = NULL;
        int r = topology_load(source, &t, &error);

        ck_assert_msg(r == 0, "%s: %d %s", source, r, error ? error : "(no message)");
        ck_assert_ptr_null(error);
        ck_assert_ptr_nonnull(t);
        ck_assert_str_eq(t->source, source);
        check_invariants(t);
        return t;
}

static Topology *load_fixture(const char *name)
{
        g_autofree char *path = test_topology_path(name);
        return load_ok(path);
}

static void assert_load_fails(const char *source, int expected, const char *message)
{
        Topology *t = NULL;
        g_autofree char *error = NULL;
        int r = topology_load(source, &t, &error);

        ck_assert_msg(r == expected, "%s: expected %d, got %d (%s)", source, expected, r,
                      error ? error : "");
        ck_assert_ptr_null(t);
        ck_assert_ptr_nonnull(error);
        ck_assert_msg(strstr(error, message), "'%s' does not contain '%s'", error, message);
}

/* Every field but the source: the shape and the candidate node sets. */
static void assert_same(const Topology *a, const Topology *b)
{
        test_assert_same_shape(a, b);
        ck_assert_uint_eq(a->nodesets->ncandidates, b->nodesets->ncandidates);
        ck_assert_int_eq(a->nodesets->exhaustive, b->nodesets->exhaustive);
        for (unsigned i = 0; i < a->nodesets->ncandidates; i++) {
                const NodeSet *x = &a->nodesets->candidates[i], *y = &b->nodesets->candidates[i];

                ck_assert_uint_eq(x->max_distance, y->max_distance);
                ck_assert_double_eq(x->mean_distance, y->mean_distance);
                ck_assert_uint_eq(x->group, y->group);
                ck_assert_uint_eq(x->nnodes, y->nnodes);
                ck_assert_mem_eq(nodeset_members(a->nodesets, x), nodeset_members(b->nodesets, y),
                                 sizeof(unsigned) * x->nnodes);
        }
}

static void assert_default_distances(const Topology *t)
{
        for (unsigned i = 0; i < t->nnodes; i++)
                for (unsigned j = 0; j < t->nnodes; j++)
                        ck_assert_uint_eq(topology_distance(t, i, j),
                                          i == j ? TOPOLOGY_LOCAL : TOPOLOGY_REMOTE);
}

START_TEST(test_synthetic_2x16x2)
{
        g_autoptr(Topology) t = load_ok(HOST_2X16X2);

        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->npackages, 2);
        ck_assert_uint_eq(t->ncores, 32);
        ck_assert_uint_eq(t->npus, 64);
        ck_assert_uint_eq(t->nl3, 2);
        ck_assert_uint_eq(t->max_threads, 2);
        for (unsigned n = 0; n < 2; n++) {
                ck_assert_uint_eq(t->nodes[n].os_index, n);
                ck_assert_uint_eq(t->nodes[n].memory, GB(64));
                ck_assert_uint_eq(t->nodes[n].core_first, 16 * n);
                ck_assert_uint_eq(t->nodes[n].ncores, 16);
                ck_assert_uint_eq(t->nodes[n].npus, 32);
                ck_assert_uint_eq(t->packages[n].os_index, n);
                ck_assert_uint_eq(cpuset_count(t->packages[n].nodes), 1);
                ck_assert(cpuset_has(t->packages[n].nodes, n));
        }
        assert_cpus(t->nodes[0].cpus, "0-31");
        assert_cpus(t->nodes[1].cpus, "32-63");
        assert_cpus(t->all_pus, "0-63");
        for (unsigned c = 0; c < 32; c++) {
                ck_assert_uint_eq(t->cores[c].node, c / 16);
                ck_assert_uint_eq(t->cores[c].package, c / 16);
                ck_assert_uint_eq(t->cores[c].l3, c / 16);
                ck_assert_uint_eq(t->cores[c].npus, 2);
                ck_assert_uint_eq(t->cores[c].pu_first, 2 * c);
                ck_assert_uint_eq(t->pus[2 * c].os_index, 2 * c);
                ck_assert_uint_eq(t->pus[2 * c + 1].os_index, 2 * c + 1);
        }
        /* No matrix in a synthetic topology: defaults. */
        ck_assert(!t->distances_known);
        ck_assert(!t->flat);
        assert_default_distances(t);
        ck_assert_note(t, "no NUMA distances");
        ck_assert_int_eq(topology_pu_by_os(t, 33), 33);
        ck_assert_int_eq(topology_pu_by_os(t, 64), -1);
        ck_assert_int_eq(topology_node_by_os(t, 1), 1);
        ck_assert_int_eq(topology_node_by_os(t, 2), -1);
}
END_TEST

START_TEST(test_xml_same_as_synthetic)
{
        g_autoptr(Topology) s = load_ok(HOST_2X16X2);
        g_autoptr(Topology) x = load_fixture("two-node-smt.xml");

        assert_same(s, x);
}
END_TEST

/* PCI devices keep the locality of the CPU-side object above them; one local to the whole machine has none.
 */
START_TEST(test_pci_locality)
{
        g_autoptr(Topology) t = load_fixture("xeon-2s-pci.xml");
        g_autoptr(Topology) s = load_ok(HOST_2X16X2);
        static const struct {
                uint32_t domain;
                unsigned bus, slot, function;
                const char *nodes;
        } want[] = {
            {0, 0x17, 0, 0, "0"},     {0, 0x17, 0, 1, "0"},  {0, 0x17, 2, 0, "0"},
            {0, 0x3b, 0, 0, "1"},     {0, 0xaf, 0, 0, "1"},  {0, 0xd8, 0, 0, "1"},
            {0, 0x00, 0x17, 0, NULL}, {0, 0x17, 0, 2, NULL}, {1, 0x17, 0, 0, NULL},
        };

        ck_assert_uint_eq(t->npci, 6);
        for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
                const CpuSet *nodes = topology_pci_nodes(
                    t, pci_address(want[i].domain, want[i].bus, want[i].slot, want[i].function));
                if (!want[i].nodes) {
                        ck_assert_ptr_null(nodes);
                        continue;
                }
                ck_assert_ptr_nonnull(nodes);
                assert_cpus(nodes, want[i].nodes);
        }
        ck_assert_uint_eq(s->npci, 0);
        ck_assert_ptr_null(topology_pci_nodes(s, pci_address(0, 0x17, 0, 0)));
}
END_TEST

/* A device on nodes without a usable CPU (outside the allowed nodes, memory-only) is local to the nodes
 * with usable CPUs nearest to them, and keeps the nodes it sits on; with only assumed distances, or when
 * every node with CPUs is as near, it has no locality. */
START_TEST(test_pci_nearest_with_cpus)
{
        g_autoptr(Topology) uv = load_fixture("uv-pci-disallowed.xml");
        g_autoptr(Topology) cxl = load_fixture("cxl-pci.xml");
        const TopoPciDevice *d;
        int six = topology_node_by_os(uv, 6), one = topology_node_by_os(cxl, 1);

        ck_assert_uint_eq(uv->npci, 2);
        d = topology_pci_device(uv, pci_address(0, 0x17, 0, 0));
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_null(d->sits_on);
        d = topology_pci_device(uv, pci_address(0, 0x85, 0, 0));
        ck_assert_ptr_nonnull(d);
        ck_assert_int_ge(six, 0);
        ck_assert_uint_eq(cpuset_count(d->nodes), 1);
        ck_assert(cpuset_has(d->nodes, (unsigned)six));
        assert_cpus(d->sits_on, "5");

        ck_assert_uint_eq(cxl->npci, 1);
        d = topology_pci_device(cxl, pci_address(0, 0xc0, 0, 0));
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(cpuset_count(d->nodes), 1);
        ck_assert(cpuset_has(d->nodes, (unsigned)one));
        assert_cpus(d->sits_on, "2");
}
END_TEST

static Topology *load_rewritten(const char *fixture, const char *from, const char *to)
{
        g_autofree char *path = test_topology_path(fixture), *xml = NULL, *out = NULL;
        g_autofree char *tmp = g_strdup_printf("%s/pcinear-XXXXXX.xml", g_get_tmp_dir());
        g_auto(GStrv) parts = NULL;
        g_autofree char *error = NULL;
        Topology *t = NULL;
        int fd;

        ck_assert(g_file_get_contents(path, &xml, NULL, NULL));
        parts = g_strsplit(xml, from, -1);
        ck_assert_uint_gt(g_strv_length(parts), 1);
        out = g_strjoinv(to, parts);
        fd = g_mkstemp(tmp);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(g_file_set_contents(tmp, out, -1, NULL));
        ck_assert_msg(topology_load(tmp, &t, &error) == 0, "%s", error);
        unlink(tmp);
        return t;
}

START_TEST(test_pci_nearest_needs_distances)
{
        /* no matrix: the assumed distances say nothing of which node is nearest */
        g_autoptr(Topology) none = load_rewritten("cxl-pci.xml", "kind=\"5\" name=\"NUMALatency\"",
                                                  "kind=\"9\" name=\"NUMABandwidth\"");
        /* node 2 as near to both nodes with CPUs: local to every one, no locality */
        g_autoptr(Topology) even =
            load_rewritten("cxl-pci.xml", "26 20 10 14 26 14 10", "20 20 10 20 20 20 10");

        ck_assert(!none->distances_known);
        ck_assert_uint_eq(none->npci, 0);
        ck_assert_ptr_null(topology_pci_nodes(none, pci_address(0, 0xc0, 0, 0)));
        ck_assert(even->distances_known);
        ck_assert_uint_eq(even->npci, 0);
}
END_TEST

/* Writes text to root/rel, making its directories. */
static void put_file(const char *root, const char *rel, const char *text)
{
        g_autofree char *path = g_build_filename(root, rel, NULL);
        g_autofree char *dir = g_path_get_dirname(path);

        ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
        ck_assert(g_file_set_contents(path, text, -1, NULL));
}

static void put_link(const char *root, const char *rel, const char *target)
{
        g_autofree char *path = g_build_filename(root, rel, NULL);
        g_autofree char *dir = g_path_get_dirname(path);

        ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
        ck_assert_int_eq(symlink(target, path), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(path);
}

/*
 * A live host's sysfs, trimmed (read through HWLOC_FSROOT): node 0 with CPU 0, node 1 with CPU 1, node 2
 * without CPUs (30 from node 0, 14 from node 1), and a NIC on its own bus (0000:c0:00.0) whose numa_node
 * is 2 and whose local_cpus names no CPU, as the kernel shows a device on a node without CPUs.
 */
static char *fake_sysfs(void)
{
        char *root = g_dir_make_tmp("test-topology-sysfs-XXXXXX", NULL);
        static const char *const distance[] = {"10 20 30\n", "20 10 14\n", "30 14 10\n"};
        static const char *const cpumap[] = {"1\n", "2\n", "0\n"}, *const cpulist[] = {"0\n", "1\n", "\n"};
        const char *pci = "sys/devices/pci0000:c0/0000:c0:00.0";

        ck_assert_ptr_nonnull(root);
        put_file(root, "proc/cpuinfo", "processor\t: 0\nprocessor\t: 1\n");
        put_file(root, "proc/meminfo", "MemTotal: 12582912 kB\n");
        for (const char *const *f = (const char *const[]){"online", "possible", "present", NULL}; *f; f++) {
                g_autofree char *rel = g_strdup_printf("sys/devices/system/cpu/%s", *f);
                put_file(root, rel, "0-1\n");
        }
        for (unsigned c = 0; c < 2; c++) {
                static const char *const mask[] = {"1\n", "2\n"}, *const list[] = {"0\n", "1\n"};
                static const char *const files[][2] = {
                    {"physical_package_id", "0\n"},  {"package_cpus", "3\n"},
                    {"package_cpus_list", "0-1\n"},  {"core_siblings", "3\n"},
                    {"core_siblings_list", "0-1\n"},
                };
                g_autofree char *id = g_strdup_printf("%u\n", c);
                g_autofree char *dir = g_strdup_printf("sys/devices/system/cpu/cpu%u", c);
                g_autofree char *online = g_strconcat(dir, "/online", NULL);
                g_autofree char *core = g_strconcat(dir, "/topology/core_id", NULL);
                g_autofree char *sib = g_strconcat(dir, "/topology/thread_siblings", NULL);
                g_autofree char *sibl = g_strconcat(dir, "/topology/thread_siblings_list", NULL);
                g_autofree char *cc = g_strconcat(dir, "/topology/core_cpus", NULL);
                g_autofree char *ccl = g_strconcat(dir, "/topology/core_cpus_list", NULL);

                put_file(root, online, "1\n");
                put_file(root, core, id);
                put_file(root, sib, mask[c]);
                put_file(root, sibl, list[c]);
                put_file(root, cc, mask[c]);
                put_file(root, ccl, list[c]);
                for (unsigned k = 0; k < G_N_ELEMENTS(files); k++) {
                        g_autofree char *rel = g_strdup_printf("%s/topology/%s", dir, files[k][0]);
                        put_file(root, rel, files[k][1]);
                }
        }
        for (const char *const *f =
                 (const char *const[]){"online", "possible", "has_memory", "has_normal_memory", NULL};
             *f; f++) {
                g_autofree char *rel = g_strdup_printf("sys/devices/system/node/%s", *f);
                put_file(root, rel, "0-2\n");
        }
        put_file(root, "sys/devices/system/node/has_cpu", "0-1\n");
        for (unsigned n = 0; n < 3; n++) {
                g_autofree char *dir = g_strdup_printf("sys/devices/system/node/node%u", n);
                g_autofree char *meminfo = g_strconcat(dir, "/meminfo", NULL);
                g_autofree char *dist = g_strconcat(dir, "/distance", NULL);
                g_autofree char *map = g_strconcat(dir, "/cpumap", NULL);
                g_autofree char *list = g_strconcat(dir, "/cpulist", NULL);
                g_autofree char *link = g_strdup_printf("sys/bus/node/devices/node%u", n);
                g_autofree char *target = g_strdup_printf("../../../devices/system/node/node%u", n);
                g_autofree char *mem = g_strdup_printf("Node %u MemTotal:        4194304 kB\n", n);

                put_file(root, meminfo, mem);
                put_file(root, dist, distance[n]);
                put_file(root, map, cpumap[n]);
                put_file(root, list, cpulist[n]);
                put_link(root, link, target);
        }
        for (const char *const *kv =
                 (const char *const[]){"class", "0x020000\n", "vendor", "0x8086\n", "device", "0x1572\n",
                                       "revision", "0x01\n", "local_cpus", "0\n", "numa_node", "2\n", NULL};
             *kv; kv += 2) {
                g_autofree char *rel = g_strdup_printf("%s/%s", pci, kv[0]);
                put_file(root, rel, kv[1]);
        }
        put_link(root, "sys/bus/pci/devices/0000:c0:00.0", "../../../devices/pci0000:c0/0000:c0:00.0");
        return root;
}

/* On the live host a device on a node without CPUs hangs off the whole machine in hwloc (no local
 * CPUs in sysfs): its numa_node still places it, near the nearest node with CPUs. */
START_TEST(test_pci_nearest_live_host)
{
        g_autofree char *root = fake_sysfs();
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        const TopoPciDevice *d;

        int r;

        g_setenv("HWLOC_FSROOT", root, TRUE);
        g_setenv("HWLOC_COMPONENTS", "-x86", TRUE);
        r = topology_load("host", &t, &error);
        g_unsetenv("HWLOC_FSROOT");
        g_unsetenv("HWLOC_COMPONENTS");
        ck_assert_int_eq(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        ck_assert_msg(r == 0, "%s", error);
        ck_assert_uint_eq(t->nnodes, 3);
        d = topology_pci_device(t, pci_address(0, 0xc0, 0, 0));
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(cpuset_count(d->nodes), 1);
        ck_assert(cpuset_has(d->nodes, (unsigned)topology_node_by_os(t, 1)));
        assert_cpus(d->sits_on, "2");
}
END_TEST

START_TEST(test_linux_sibling_numbering)
{
        g_autoptr(Topology) t =
            load_ok("synthetic:pack:2 numa:1(memory=64GB) l3:1 core:16 pu:2(indexes=2*32:1*2)");

        ck_assert_uint_eq(t->ncores, 32);
        ck_assert_uint_eq(t->npus, 64);
        for (unsigned c = 0; c < 32; c++) {
                ck_assert_uint_eq(t->pus[t->cores[c].pu_first].os_index, c);
                ck_assert_uint_eq(t->pus[t->cores[c].pu_first + 1].os_index, c + 32);
        }
        assert_cpus(t->nodes[0].cpus, "0-15,32-47");
        assert_cpus(t->nodes[1].cpus, "16-31,48-63");
        ck_assert_int_eq(topology_pu_by_os(t, 32), 1);
        ck_assert_uint_eq(t->pus[topology_pu_by_os(t, 48)].core, 16);
}
END_TEST

START_TEST(test_host)
{
        g_autoptr(Topology) t = load_ok("host");

        ck_assert_uint_ge(t->npus, 1);
        ck_assert_uint_ge(t->ncores, 1);
        ck_assert_uint_ge(t->npackages, 1);
        ck_assert_uint_ge(t->max_threads, 1);
}
END_TEST

START_TEST(test_opteron_distances)
{
        g_autoptr(Topology) t = load_fixture("opteron-6272.xml");

        ck_assert_uint_eq(t->nnodes, 8);
        ck_assert_uint_eq(t->npackages, 4);
        ck_assert_uint_eq(t->ncores, 16);
        ck_assert_uint_eq(t->npus, 32);
        ck_assert_uint_eq(t->nl3, 8);
        ck_assert(t->distances_known);
        ck_assert(!t->flat);
        ck_assert_mem_eq(t->distance, opteron_6272, sizeof(opteron_6272));
        ck_assert_uint_eq(t->notes->len, 0);
        for (unsigned n = 0; n < 8; n++) {
                ck_assert_uint_eq(t->nodes[n].ncores, 2);
                ck_assert_uint_eq(t->nodes[n].memory, GB(4));
                ck_assert_uint_eq(t->cores[2 * n].package, n / 2);
        }
        ck_assert_uint_eq(topology_distance(t, 0, 3), 22);
        ck_assert_uint_eq(topology_distance(t, 4, 7), 22);
}
END_TEST

/* A CPU-less (CXL-like) node with an empty cpuset: hwloc gives it the machine's cpuset as locality. */
START_TEST(test_memory_only_fixture)
{
        g_autoptr(Topology) t = load_fixture("memory-only.xml");

        ck_assert_uint_eq(t->nnodes, 3);
        ck_assert_uint_eq(t->ncores, 4);
        ck_assert_uint_eq(t->npus, 8);
        ck_assert_uint_eq(t->nodes[2].os_index, 2);
        ck_assert_uint_eq(t->nodes[2].memory, GB(8));
        ck_assert_uint_eq(t->nodes[2].ncores, 0);
        ck_assert_uint_eq(t->nodes[2].npus, 0);
        ck_assert(cpuset_is_empty(t->nodes[2].cpus));
        ck_assert_uint_eq(t->nodes[2].core_first, 4);
        assert_cpus(t->nodes[0].cpus, "0-3");
        assert_cpus(t->nodes[1].cpus, "4-7");
        ck_assert_int_eq(topology_node_by_os(t, 2), 2);
        ck_assert_note(t, "NUMA node 2 has no usable CPU: kept as a memory-only node");
        for (unsigned i = 0; i < t->npackages; i++)
                ck_assert(!cpuset_has(t->packages[i].nodes, 2));
}
END_TEST

START_TEST(test_memory_only_synthetic)
{
        /* A memory node attached to the machine contains every PU in its cpuset, yet holds no core. */
        g_autoptr(Topology) t =
            load_ok("synthetic:[numa(memory=1GB)] pack:2 [numa(memory=2GB)] core:2 pu:1");
        /* Two nodes attached to the same package: the first gets the cores, the second is memory-only. */
        g_autoptr(Topology) u =
            load_ok("synthetic:pack:2 [numa(memory=2GB)] [numa(memory=1GB)] core:2 pu:1");

        ck_assert_uint_eq(t->nnodes, 3);
        ck_assert_uint_eq(t->nodes[0].ncores, 2);
        ck_assert_uint_eq(t->nodes[1].ncores, 2);
        ck_assert_uint_eq(t->nodes[2].ncores, 0);
        ck_assert_uint_eq(t->nodes[2].os_index, 2);
        ck_assert_uint_eq(t->nodes[2].memory, GB(1));
        ck_assert_note(t, "NUMA node 2 has no usable CPU");

        ck_assert_uint_eq(u->nnodes, 4);
        ck_assert_uint_eq(u->nodes[0].ncores, 2);
        ck_assert_uint_eq(u->nodes[1].ncores, 0);
        ck_assert_uint_eq(u->nodes[2].ncores, 2);
        ck_assert_uint_eq(u->nodes[3].ncores, 0);
        ck_assert_uint_eq(u->nodes[1].memory, GB(1));
        assert_cpus(u->nodes[2].cpus, "2-3");
        ck_assert_note(u, "NUMA nodes 0 and 1 are both DRAM local to CPUs 0-1");
        ck_assert_note(u, "NUMA nodes 2 and 3 are both DRAM local to CPUs 2-3");
        /* no distance table: a memory-only node inside a package (KNL's MCDRAM) is assumed as near as the
         * package's own nodes, one attached to the machine as far as another package */
        ck_assert_uint_eq(topology_distance(u, 0, 1), 11);
        ck_assert_uint_eq(topology_distance(u, 2, 3), 11);
        ck_assert_uint_eq(topology_distance(u, 0, 3), 20);
        ck_assert_uint_eq(topology_distance(t, 0, 2), 20);
}
END_TEST

/* A node hwloc attaches beside another to the same object (a package, a cluster) shares its CPUs; the first
 * DRAM node there runs them and the other is kept as a memory-only node. The note says which node runs
 * the CPUs, and when both are DRAM that the source does not say which CPUs each serves (a Cluster-on-Die
 * export without its groups, a memory expander hwloc cannot name), not that the node has no CPU. */
START_TEST(test_co_attached_node_said)
{
        g_autoptr(Topology) dram =
            load_ok("synthetic:pack:1 [numa(memory=2GiB)] [numa(memory=4GiB)] core:2 pu:1");
        g_autoptr(Topology) hbm = load_fixture("hbm-no-slit.xml");

        ck_assert_uint_eq(dram->nodes[0].ncores, 2);
        ck_assert_uint_eq(dram->nodes[1].ncores, 0);
        ck_assert_note(dram,
                       "NUMA nodes 0 and 1 are both DRAM local to CPUs 0-1, and the source does not say "
                       "which of those CPUs each serves: node 0 runs them, node 1 is kept as a "
                       "memory-only node");
        ck_assert(!has_note(dram, "NUMA node 1 has no usable CPU"));
        ck_assert_note(hbm, "NUMA node 1 (hbm) is local to CPUs 0-1 of node 0, which runs them: kept as a "
                            "memory-only node");
        ck_assert_note(hbm, "NUMA node 3 (hbm) is local to CPUs 2-3 of node 2, which runs them: kept as a "
                            "memory-only node");
        ck_assert(!has_note(hbm, "has no usable CPU"));
}
END_TEST

/* An NVIDIA GH200's GPU partition placeholders: nodes with no CPU and no memory are left out, with one
 * note, and the set table holds only the nodes that can take something. */
START_TEST(test_empty_nodes_left_out)
{
        g_autoptr(Topology) t = load_fixture("gh200-placeholders.xml");

        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->nodes[0].os_index, 0);
        ck_assert_uint_eq(t->nodes[0].ncores, 4);
        ck_assert_uint_eq(t->nodes[1].os_index, 1);
        ck_assert_int_eq(t->nodes[1].kind, NODE_KIND_GPU);
        ck_assert_uint_eq(t->nodes[1].memory, 16ull << 30);
        ck_assert_int_eq(topology_node_by_os(t, 2), -1);
        ck_assert_int_eq(topology_node_by_os(t, 3), -1);
        ck_assert_uint_eq(topology_distance(t, 0, 1), 80);
        ck_assert_uint_eq(topology_distance(t, 1, 0), 80);
        ck_assert_uint_eq(t->nodesets->nnodes, 2);
        ck_assert_uint_eq(t->nodesets->ncandidates, 3);
        for (unsigned i = 0; i < t->npackages; i++)
                CPUSET_FOREACH (n, t->packages[i].nodes)
                        ck_assert_uint_lt(n, t->nnodes);
        ck_assert_note(t, "NUMA nodes 2-3 have no usable CPU and no memory: left out");
        ck_assert_note(t, "NUMA node 1 (gpu) is local to CPUs 0-3 of node 0, which runs them: kept as a "
                          "memory-only node");
        ck_assert(!has_note(t, "NUMA node 2 has no usable CPU: kept"));
        ck_assert(!has_note(t, "NUMA node 3 has no usable CPU: kept"));
}
END_TEST

/* The same host when hwloc cannot name the GPU's memory: a CPU-less node 80 from the only CPU node (8x
 * the local 10) is a lower tier, not first-tier DRAM. Memory-only nodes at 4x or nearer stay DRAM. */
START_TEST(test_far_memory_is_a_lower_tier)
{
        g_autoptr(Topology) t = load_fixture("gh200-nosub.xml");
        g_autoptr(Topology) lpar = load_fixture("lpar-memoryless.xml");
        g_autoptr(Topology) near = load_fixture("memory-only.xml");
        g_autoptr(Topology) assumed =
            load_ok("synthetic:[numa(memory=1GB)] pack:2 [numa(memory=2GB)] core:2 pu:1");

        ck_assert_int_eq(t->nodes[0].kind, NODE_KIND_DRAM);
        ck_assert_int_eq(t->nodes[1].kind, NODE_KIND_CXL);
        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_note(t,
                       "NUMA node 1 has no CPU and its memory counts as DRAM, but lies 80 from the nearest "
                       "node with CPUs (local 10)");
        ck_assert_note(t, "counted as a lower tier (cxl), used only when nearer memory has no room");
        ck_assert_note(t, "NUMA nodes 2-3 have no usable CPU and no memory: left out");

        /* 40 from both CPU nodes: 4x, a POWER drawer's memory, still DRAM */
        ck_assert_uint_eq(topology_distance(lpar, 0, 2), 40);
        ck_assert_int_eq(lpar->nodes[2].kind, NODE_KIND_DRAM);
        ck_assert(!has_note(lpar, "counts as DRAM, but lies"));
        for (unsigned n = 0; n < near->nnodes; n++)
                ck_assert_int_eq(near->nodes[n].kind, NODE_KIND_DRAM);
        ck_assert(!has_note(near, "counts as DRAM, but lies"));
        /* assumed distances say nothing of how far memory is */
        ck_assert_int_eq(assumed->nodes[2].kind, NODE_KIND_DRAM);
}
END_TEST

/* A PowerVM LPAR's memoryless node: CPUs, 0 B. Its vCPUs' memory is always elsewhere: a note names the
 * nearest node with memory. */
START_TEST(test_memoryless_cpu_node)
{
        g_autoptr(Topology) t = load_fixture("lpar-memoryless.xml");
        g_autoptr(Topology) disallowed = load_fixture("disallowed-node.xml");

        ck_assert_uint_eq(t->nnodes, 3);
        ck_assert_uint_eq(t->nodes[1].ncores, 2);
        ck_assert_uint_eq(t->nodes[1].memory, 0);
        ck_assert_uint_eq(t->nodes[2].ncores, 0);
        ck_assert_note(t,
                       "NUMA node 1 has CPUs but no memory: its vCPUs' memory is always remote (the nearest "
                       "node with memory is node 0, at 20)");
        ck_assert(!has_note(t, "NUMA node 0 has CPUs but no memory"));
        ck_assert_note(t, "NUMA node 2 has no usable CPU: kept as a memory-only node");
        ck_assert(!has_note(t, "left out"));
        /* memory there that the host does not allow is another matter, with its own note */
        ck_assert(!has_note(disallowed, "has CPUs but no memory"));
}
END_TEST

/* An export with no memory sizes at all (hwloc's v1 exports of old machines): memory cannot decide, so
 * each node with CPUs holds any domain's memory, and the views say the size is unknown. Allowed memory
 * nodes that name none of the nodes say nothing either. */
START_TEST(test_export_without_memory_sizes)
{
        g_autoptr(Topology) t = load_fixture("v1-no-memory.xml");
        g_autoptr(Topology) none_allowed = load_fixture("v1-no-memory-allowed.xml");
        g_autoptr(Topology) lpar = load_fixture("lpar-memoryless.xml");
        char buf[32];

        for (unsigned k = 0; k < 2; k++) {
                const Topology *x = k ? none_allowed : t;
                ck_assert_uint_eq(x->nnodes, 2);
                ck_assert(x->memory_sizes_unknown);
                for (unsigned n = 0; n < x->nnodes; n++) {
                        ck_assert_uint_eq(x->nodes[n].ncores, 4);
                        ck_assert_uint_eq(x->nodes[n].memory, TOPOLOGY_MEMORY_UNKNOWN);
                        ck_assert(!topology_node_memory_known(x, n));
                        ck_assert_str_eq(topology_node_memory_text(x, n, buf, sizeof(buf)), "unknown");
                }
                ck_assert_note(x, "no NUMA node has a memory size in the export: memory is not counted");
                ck_assert(!has_note(x, "has CPUs but no memory"));
                ck_assert(!has_note(x, "is not in the allowed memory nodes"));
        }
        ck_assert_note(none_allowed, "the export's allowed memory nodes name none of its NUMA nodes");
        /* CPU-less nodes of such an export: not known to be empty, but nothing can be counted there */
        {
                g_autoptr(Topology) cxl =
                    load_ok("synthetic:pack:2 [numa(memory=0)] [numa(memory=0)] core:2 pu:2");
                ck_assert(cxl->memory_sizes_unknown);
                ck_assert_uint_eq(cxl->nnodes, 2);
                ck_assert_note(cxl, "NUMA nodes 1,3 have no usable CPU and no memory size: left out");
        }
        ck_assert(!has_note(t, "allowed memory nodes name none"));
        /* one node without memory among nodes with it is a memoryless node, not an unknown size */
        ck_assert(!lpar->memory_sizes_unknown);
        ck_assert_uint_eq(lpar->nodes[1].memory, 0);
        ck_assert(topology_node_memory_known(lpar, 1));
        ck_assert_str_eq(topology_node_memory_text(lpar, 1, buf, sizeof(buf)), "0 B");
}
END_TEST

START_TEST(test_mixed_smt)
{
        g_autoptr(Topology) t = load_fixture("mixed-smt.xml");

        ck_assert_uint_eq(t->ncores, 4);
        ck_assert_uint_eq(t->npus, 6);
        ck_assert_uint_eq(t->max_threads, 2);
        ck_assert_uint_eq(t->cores[0].npus, 2);
        ck_assert_uint_eq(t->cores[1].npus, 2);
        ck_assert_uint_eq(t->cores[2].npus, 1);
        ck_assert_uint_eq(t->cores[3].npus, 1);
        ck_assert_uint_eq(t->pus[t->cores[3].pu_first].os_index, 6);
        assert_cpus(t->all_pus, "0-4,6");
        ck_assert_int_eq(topology_pu_by_os(t, 5), -1);
        ck_assert_note(t, "cores have 1 to 2 threads");
}
END_TEST

START_TEST(test_disallowed_and_offline)
{
        g_autoptr(Topology) t = load_fixture("disallowed.xml");

        /* PUs 1, 3, 6, 7 not allowed, 8-9 offline: core P#3 (PUs 6-7) has nothing left. */
        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->ncores, 3);
        ck_assert_uint_eq(t->npus, 4);
        ck_assert_uint_eq(t->max_threads, 2);
        assert_cpus(t->all_pus, "0,2,4-5");
        assert_cpus(t->nodes[0].cpus, "0,2");
        assert_cpus(t->nodes[1].cpus, "4-5");
        ck_assert_uint_eq(t->nodes[1].ncores, 1);
        ck_assert_uint_eq(t->cores[0].npus, 1);
        ck_assert_uint_eq(t->cores[2].os_index, 2);
        ck_assert_int_eq(topology_pu_by_os(t, 1), -1);
        ck_assert_int_eq(topology_pu_by_os(t, 4), 2);
        ck_assert_int_eq(topology_pu_by_os(t, 9), -1);
        ck_assert_note(t, "4 PUs not in the allowed cpuset, excluded: 1,3,6-7");
        ck_assert_note(t, "2 PUs offline or outside the exported cpuset, excluded: 8-9");
        ck_assert_note(t, "1 core without any usable PU dropped");
        ck_assert_note(t, "cores have 1 to 2 threads");
        /* the host keeps the other thread of both of node 0's cores: the node gives guests one thread a
         * core by design, and those are whole cores for them (test-kinds.c: a node with some such cores) */
        ck_assert(!t->cores[0].host_thread && !t->cores[1].host_thread && !t->cores[2].host_thread);
}
END_TEST

START_TEST(test_disallowed_node)
{
        g_autoptr(Topology) t = load_fixture("disallowed-node.xml");

        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->npus, 8);
        ck_assert_uint_eq(t->nodes[0].memory, GB(1));
        ck_assert_uint_eq(t->nodes[1].memory, 0);
        ck_assert_uint_eq(t->nodes[1].ncores, 2);
        ck_assert_note(t, "NUMA node 1 is not in the allowed memory nodes");
}
END_TEST

START_TEST(test_pu_without_node)
{
        g_autoptr(Topology) t = load_fixture("no-local-node.xml");

        /* kept apart on a stand-in node without memory, farther than any real node, even from itself */
        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->ncores, 4);
        ck_assert_uint_eq(t->npackages, 2);
        assert_cpus(t->nodes[0].cpus, "0-3");
        assert_cpus(t->nodes[1].cpus, "4-7");
        ck_assert(!t->nodes[0].no_local_memory);
        ck_assert(t->nodes[1].no_local_memory);
        ck_assert_uint_eq(t->nodes[1].os_index, TOPOLOGY_NO_LOCAL_NODE);
        ck_assert_uint_eq(t->nodes[1].memory, 0);
        ck_assert_uint_eq(topology_distance(t, 0, 0), 10);
        ck_assert_uint_gt(topology_distance(t, 0, 1), TOPOLOGY_REMOTE);
        ck_assert_uint_eq(topology_distance(t, 1, 1), topology_distance(t, 0, 1));
        assert_cpus(t->packages[1].nodes, "1");
        ck_assert_note(t,
                       "PUs 4-7 are not local to any NUMA node: kept apart as node 1024 (no local memory), "
                       "used last");
}
END_TEST

/* A NUMA node's OS index is at most 1023, as Linux's are: node 1024 would be named as the stand-in for
 * CPUs local to none (TOPOLOGY_NO_LOCAL_NODE), two nodes called 1024. */
START_TEST(test_node_os_index_max)
{
        g_autofree char *path = test_topology_path("no-local-node.xml");
        g_autofree char *xml = NULL;
        g_autofree char *dir = g_dir_make_tmp("test-topology-XXXXXX", NULL);
        g_autofree char *file = g_build_filename(dir, "node.xml", NULL);
        static const char *const index[] = {"1023", "1024", "4096"};

        ck_assert(g_file_get_contents(path, &xml, NULL, NULL));
        for (unsigned i = 0; i < G_N_ELEMENTS(index); i++) {
                g_autoptr(GString) s = g_string_new(xml);
                g_autofree char *to = g_strdup_printf("type=\"NUMANode\" os_index=\"%s\"", index[i]);
                g_autofree char *message = g_strdup_printf(
                    "NUMA node %s: OS index above 1023, the highest Linux numbers", index[i]);

                ck_assert_uint_eq(g_string_replace(s, "type=\"NUMANode\" os_index=\"0\"", to, 0), 1);
                ck_assert(g_file_set_contents(file, s->str, -1, NULL));
                if (i == 0) {
                        g_autoptr(Topology) t = load_ok(file);
                        ck_assert_uint_eq(t->nodes[0].os_index, 1023);
                        ck_assert_uint_eq(t->nodes[1].os_index, TOPOLOGY_NO_LOCAL_NODE);
                } else {
                        assert_load_fails(file, -ERANGE, message);
                }
        }
        g_unlink(file);
        g_rmdir(dir);
}
END_TEST

START_TEST(test_missing_distances)
{
        g_autoptr(Topology) t = load_ok("synthetic:pack:4 numa:1 core:1 pu:1");

        ck_assert_uint_eq(t->nnodes, 4);
        ck_assert(!t->distances_known);
        ck_assert(!t->flat);
        assert_default_distances(t);
        ck_assert_note(t, "no NUMA distances reported: assuming 10 local, 20 remote");
}
END_TEST

START_TEST(test_missing_distances_packages)
{
        /* two sockets of two nodes, no matrix (lstopo of a synthetic host): a socket's nodes are nearer */
        g_autoptr(Topology) t = load_fixture("two-sockets-no-slit.xml");
        static const uint32_t expected[16] = {10, 11, 20, 20, 11, 10, 20, 20,
                                              20, 20, 10, 11, 20, 20, 11, 10};

        ck_assert_uint_eq(t->nnodes, 4);
        ck_assert_uint_eq(t->npackages, 2);
        ck_assert(!t->distances_known);
        ck_assert(!t->flat);
        ck_assert_mem_eq(t->distance, expected, sizeof(expected));
        ck_assert_note(t,
                       "no NUMA distances reported: assuming 10 local, 20 remote, 11 between nodes of one "
                       "package");
        /* the nearest two-node sets are the sockets */
        ck_assert_uint_eq(t->nodesets->candidates[4].nnodes, 2);
        ck_assert_uint_eq(t->nodesets->candidates[4].max_distance, 11);
        ck_assert_uint_eq(t->nodesets->candidates[5].max_distance, 11);
}
END_TEST

START_TEST(test_missing_distances_hbm_locality)
{
        /* one socket of two clusters, each with its DRAM (nodes 0 and 2) and its HBM (1 and 3) beside it,
         * no matrix: an HBM node is nearer the cores it serves than the other cluster's are (all were 11) */
        g_autoptr(Topology) t = load_fixture("hbm-no-slit.xml");
        static const uint32_t expected[16] = {10, 11, 11, 12, 11, 10, 12, 11,
                                              11, 12, 10, 11, 12, 11, 11, 10};

        ck_assert_uint_eq(t->nnodes, 4);
        for (unsigned n = 0; n < 4; n++)
                ck_assert_uint_eq(t->nodes[n].os_index, n);
        ck_assert_uint_eq(t->nodes[1].ncores, 0);
        ck_assert_uint_eq(t->nodes[3].ncores, 0);
        ck_assert(!t->distances_known);
        ck_assert_mem_eq(t->distance, expected, sizeof(expected));
        ck_assert_note(t,
                       "no NUMA distances reported: assuming 10 local, 20 remote, 11 between nodes of one "
                       "package, 12 from its memory-only nodes to those whose CPUs they do not serve");
}
END_TEST

/* The same shape as hwloc 1.x exported it (a KNL's SNC clusters): each HBM node in a Group of an empty
 * cpuset inside its cluster. The cluster says which CPUs it serves: it is assumed nearer them than the
 * other cluster's, and the note says so, as for the hwloc 2 layout. */
START_TEST(test_missing_distances_hbm_v1_export)
{
        g_autoptr(Topology) t = load_fixture("hbm-v1-export.xml");
        int n[4];

        ck_assert_uint_eq(t->nnodes, 4);
        for (unsigned os = 0; os < 4; os++) {
                n[os] = topology_node_by_os(t, os);
                ck_assert_int_ge(n[os], 0);
        }
        ck_assert_uint_eq(t->nodes[n[1]].ncores, 0);
        ck_assert_uint_eq(t->nodes[n[3]].ncores, 0);
        ck_assert(!t->distances_known);
        ck_assert_uint_eq(topology_distance(t, (unsigned)n[1], (unsigned)n[0]), 11);
        ck_assert_uint_eq(topology_distance(t, (unsigned)n[1], (unsigned)n[2]), 12);
        ck_assert_uint_eq(topology_distance(t, (unsigned)n[3], (unsigned)n[2]), 11);
        ck_assert_uint_eq(topology_distance(t, (unsigned)n[3], (unsigned)n[0]), 12);
        ck_assert_uint_eq(topology_distance(t, (unsigned)n[0], (unsigned)n[2]), 11);
        ck_assert_note(t, "NUMA node 1 (hbm) is local to CPUs 0-1 of node 0, which runs them: kept as a "
                          "memory-only node");
        ck_assert_note(t, "NUMA node 3 (hbm) is local to CPUs 2-3 of node 2, which runs them: kept as a "
                          "memory-only node");
        ck_assert(!has_note(t, "has no usable CPU"));
}
END_TEST

START_TEST(test_invalid_self_distance)
{
        /* hwloc keeps such a matrix as it is: the check is ours. */
        g_autoptr(Topology) t = load_fixture("distances-self12.xml");

        ck_assert(!t->distances_known);
        ck_assert(!t->flat);
        assert_default_distances(t);
        ck_assert_note(t, "invalid NUMA distance 12 from node 0 to node 0");
}
END_TEST

START_TEST(test_invalid_distance_below_10)
{
        g_autoptr(Topology) t = load_fixture("distances-below10.xml");

        ck_assert(!t->distances_known);
        assert_default_distances(t);
        ck_assert_note(t, "invalid NUMA distance 5");
}
END_TEST

START_TEST(test_all_unreachable_is_flat)
{
        g_autoptr(Topology) t = load_fixture("distances-unreachable.xml");

        ck_assert(t->flat);
        ck_assert(!t->distances_known);
        for (unsigned i = 0; i < 2; i++)
                for (unsigned j = 0; j < 2; j++)
                        ck_assert_uint_eq(topology_distance(t, i, j), TOPOLOGY_LOCAL);
        ck_assert_note(t, "every NUMA distance is unreachable");
        ck_assert_uint_eq(t->nodesets->ncandidates, 1);
        ck_assert_uint_eq(t->nodesets->candidates[0].nnodes, 2);
}
END_TEST

START_TEST(test_node_unreachable_from_itself)
{
        g_autoptr(Topology) t = load_fixture("distances-node1-unreachable.xml");

        ck_assert(t->distances_known);
        ck_assert(!t->flat);
        ck_assert_uint_eq(topology_distance(t, 0, 0), 10);
        ck_assert_uint_eq(topology_distance(t, 0, 1), E);
        ck_assert_uint_eq(topology_distance(t, 1, 1), E);
        ck_assert_note(t, "NUMA node 1 is unreachable from itself");
}
END_TEST

START_TEST(test_matrix_dropped_by_hwloc)
{
        /* The matrix names node P#9, which does not exist: hwloc drops it without an error. */
        g_autoptr(Topology) t = load_fixture("distances-unknown-node.xml");

        ck_assert(!t->distances_known);
        assert_default_distances(t);
        ck_assert_note(t, "hwloc ignored the distance matrix");
        ck_assert_note(t, "no NUMA distances reported");
}
END_TEST

START_TEST(test_partial_matrix)
{
        /* hwloc accepts a matrix over nodes P#0 and P#1 of three; we cannot use it. */
        g_autoptr(Topology) t = load_fixture("distances-partial.xml");

        ck_assert_uint_eq(t->nnodes, 3);
        ck_assert(!t->distances_known);
        assert_default_distances(t);
        ck_assert_note(t, "the NUMA latency matrix covers 2 of 3 NUMA nodes: ignoring it");
}
END_TEST

START_TEST(test_matrix_refused_by_hwloc)
{
        /* Too few values: hwloc refuses the whole file. */
        g_autofree char *path = test_topology_path("distances-truncated.xml");
        g_autofree char *expected = g_strdup_printf("%s: invalid hwloc XML", path);

        assert_load_fails(path, -EINVAL, expected);
}
END_TEST

START_TEST(test_errors)
{
        g_autofree char *dir = test_topology_path("");
        g_autofree char *garbage = NULL;
        g_autofree char *empty = NULL;
        g_autofree char *expected = NULL;
        int fd;

        assert_load_fails("/nonexistent/x.xml", -ENOENT,
                          "/nonexistent/x.xml: cannot read hwloc XML: No such file or directory");
        assert_load_fails("synthetic:foo", -EINVAL, "synthetic:foo: invalid hwloc synthetic description");
        assert_load_fails("synthetic:pack:2 pu:0", -EINVAL,
                          "synthetic:pack:2 pu:0: invalid hwloc synthetic");
        assert_load_fails("synthetic:pack:2 core:x pu:1", -EINVAL, "synthetic:pack:2 core:x pu:1: invalid");
        assert_load_fails("synthetic:", -EINVAL, "synthetic:: empty hwloc synthetic description");
        assert_load_fails("", -EINVAL, "empty topology source");
        assert_load_fails(dir, -EISDIR, "cannot read hwloc XML: Is a directory");

        fd = g_file_open_tmp("topology-garbage-XXXXXX.xml", &garbage, NULL);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "this is not XML\n", 16), 16);
        close(fd);
        expected = g_strdup_printf("%s: invalid hwloc XML", garbage);
        assert_load_fails(garbage, -EINVAL, expected);
        g_unlink(garbage);

        fd = g_file_open_tmp("topology-empty-XXXXXX.xml", &empty, NULL);
        ck_assert_int_ge(fd, 0);
        close(fd);
        assert_load_fails(empty, -EINVAL, "the file is empty");
        g_unlink(empty);
}
END_TEST

/* Topology files go through the bounded reader: a FIFO does not block, a device is not read. */
START_TEST(test_xml_not_a_regular_file)
{
        g_autofree char *dir = g_dir_make_tmp("test-topology-XXXXXX", NULL);
        g_autofree char *fifo = g_build_filename(dir, "fifo.xml", NULL);
        g_autofree char *nul = g_build_filename(dir, "nul.xml", NULL);
        static const char with_nul[] = "<topology>\n<object type=\"Machine\"/>\0\n</topology>\n";

        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert(g_file_set_contents(nul, with_nul, sizeof(with_nul) - 1, NULL));
        assert_load_fails(fifo, -EINVAL, "cannot read hwloc XML: a FIFO, not a regular file");
        assert_load_fails("/dev/zero", -EINVAL, "cannot read hwloc XML: a character device");
        assert_load_fails(nul, -EINVAL, "cannot read hwloc XML: a NUL byte on line 2");
        g_unlink(fifo);
        g_unlink(nul);
        g_rmdir(dir);
}
END_TEST

START_TEST(test_limits)
{
        g_autoptr(Topology) t = NULL;

        /* Refused before hwloc builds a billion objects. */
        assert_load_fails(
            "synthetic:pack:1000 core:1000 pu:1000", -E2BIG,
            "synthetic:pack:1000 core:1000 pu:1000: describes 1000000000 PUs, more than the 8192");
        assert_load_fails("synthetic:pack:99999999999 core:99999999999 pu:99999999999", -E2BIG,
                          "describes too many PUs");
        assert_load_fails("synthetic:pack:2 numa:1(memory=1GB) core:4097 pu:1", -E2BIG, "8194 PUs");
        assert_load_fails("synthetic:numa:1025 pu:1", -E2BIG,
                          "1025 NUMA nodes, more than the 1024 supported");
        assert_load_fails("synthetic:pu:2(indexes=0,9000)", -ERANGE, "PU 9000: OS index above the 8192");

        t = load_ok("synthetic:pack:8 numa:1 l3:8 core:64 pu:2");
        ck_assert_uint_eq(t->npus, 8192);
        ck_assert_int_eq(topology_pu_by_os(t, 8191), 8191);
}
END_TEST

START_TEST(test_environment_does_not_replace_source)
{
        g_autoptr(Topology) s = NULL;
        g_autoptr(Topology) x = NULL;

        g_setenv("HWLOC_XMLFILE", "/nonexistent/hijack.xml", TRUE);
        g_setenv("HWLOC_SYNTHETIC", "pack:5 numa:1 core:1 pu:1", TRUE);
        s = load_ok(HOST_2X16X2);
        x = load_fixture("two-node-smt.xml");
        g_unsetenv("HWLOC_XMLFILE");
        g_unsetenv("HWLOC_SYNTHETIC");
        ck_assert_uint_eq(s->npus, 64);
        assert_same(s, x);
}
END_TEST

START_TEST(test_l3_groups)
{
        /* No L3: one group per node. */
        g_autoptr(Topology) a = load_ok("synthetic:pack:2 numa:1 core:2 pu:1");
        /* Two L3 per node (CCX-like). */
        g_autoptr(Topology) b = load_ok("synthetic:pack:2 numa:1 l3:2 core:2 pu:1");
        /* One L3 over two nodes (sub-NUMA clustering). */
        g_autoptr(Topology) c = load_ok("synthetic:pack:1 l3:1 group:2 [numa(memory=1GB)] core:2 pu:1");

        ck_assert_uint_eq(a->nl3, 2);
        ck_assert_uint_eq(a->cores[1].l3, 0);
        ck_assert_uint_eq(a->cores[2].l3, 1);
        ck_assert_note(a, "no L3 cache information: one L3 group per NUMA node and package");

        ck_assert_uint_eq(b->nl3, 4);
        for (unsigned i = 0; i < 8; i++)
                ck_assert_uint_eq(b->cores[i].l3, i / 2);
        ck_assert(!has_note(b, "L3"));

        ck_assert_uint_eq(c->nnodes, 2);
        ck_assert_uint_eq(c->npackages, 1);
        assert_cpus(c->packages[0].nodes, "0-1");
        ck_assert_uint_eq(c->nl3, 1);
        for (unsigned i = 0; i < 4; i++)
                ck_assert_uint_eq(c->cores[i].l3, 0);

        /* No L3, one node over two packages: their cores share no cache, one group per package. */
        g_autoptr(Topology) d = load_ok("synthetic:numa:1 pack:2 core:2 pu:1");
        ck_assert_uint_eq(d->nnodes, 1);
        ck_assert_uint_eq(d->nl3, 2);
        for (unsigned i = 0; i < 4; i++)
                ck_assert_uint_eq(d->cores[i].l3, i / 2);
}
END_TEST

START_TEST(test_no_cores_no_packages)
{
        g_autoptr(Topology) a = load_ok("synthetic:pack:2 numa:1 pu:2");
        g_autoptr(Topology) b = load_ok("synthetic:numa:2 core:2 pu:1");

        ck_assert_uint_eq(a->ncores, 4);
        ck_assert_uint_eq(a->npus, 4);
        ck_assert_uint_eq(a->max_threads, 1);
        ck_assert_uint_eq(a->cores[3].os_index, 3);
        ck_assert_note(a, "no core information for 4 PUs");

        ck_assert_uint_eq(b->npackages, 1);
        ck_assert_uint_eq(b->packages[0].os_index, 0);
        assert_cpus(b->packages[0].nodes, "0-1");
        ck_assert_note(b, "no package information for 4 cores");
}
END_TEST

START_TEST(test_uniform_matches_synthetic)
{
        g_autoptr(Topology) s = load_ok(HOST_2X16X2);
        g_autoptr(Topology) u = topology_new_uniform(2, 16, 2, GB(64), NULL);

        ck_assert_ptr_nonnull(u);
        check_invariants(u);
        ck_assert_str_eq(u->source, "uniform:2x16x2");
        assert_same(s, u);
}
END_TEST

START_TEST(test_uniform)
{
        uint32_t linear[16], bad[4] = {12, 20, 20, 10};
        g_autoptr(Topology) t = NULL;
        g_autoptr(Topology) b = NULL;
        g_autoptr(Topology) one = NULL;
        g_autoptr(Topology) opteron = NULL;

        for (unsigned i = 0; i < 4; i++)
                for (unsigned j = 0; j < 4; j++)
                        linear[i * 4 + j] = 10 + 11 * (i > j ? i - j : j - i);
        t = topology_new_uniform(4, 3, 1, 1024, linear);
        ck_assert_ptr_nonnull(t);
        check_invariants(t);
        ck_assert_uint_eq(t->ncores, 12);
        ck_assert_uint_eq(t->npus, 12);
        ck_assert_uint_eq(t->max_threads, 1);
        ck_assert_uint_eq(t->npackages, 4);
        ck_assert_uint_eq(t->nl3, 4);
        ck_assert(t->distances_known);
        ck_assert_mem_eq(t->distance, linear, sizeof(linear));
        ck_assert_uint_eq(t->notes->len, 0);
        assert_cpus(t->nodes[3].cpus, "9-11");
        ck_assert_uint_eq(t->nodes[3].memory, 1024);
        ck_assert_int_eq(topology_pu_by_os(t, 11), 11);
        ck_assert_int_eq(topology_pu_by_os(t, 12), -1);

        b = topology_new_uniform(2, 1, 4, 0, bad);
        check_invariants(b);
        ck_assert(!b->distances_known);
        assert_default_distances(b);
        ck_assert_note(b, "invalid NUMA distance 12");
        assert_cpus(b->nodes[1].cpus, "4-7");
        ck_assert_uint_eq(b->max_threads, 4);

        one = topology_new_uniform(1, 2, 2, 1, NULL);
        check_invariants(one);
        ck_assert_uint_eq(one->notes->len, 0);
        ck_assert_uint_eq(topology_distance(one, 0, 0), 10);

        opteron = topology_new_uniform(8, 2, 2, GB(4), opteron_6272);
        check_invariants(opteron);
        ck_assert(opteron->distances_known);

        ck_assert_ptr_null(topology_new_uniform(0, 1, 1, 0, NULL));
        ck_assert_ptr_null(topology_new_uniform(1, 0, 1, 0, NULL));
        ck_assert_ptr_null(topology_new_uniform(1, 1, 0, 0, NULL));
        ck_assert_ptr_null(topology_new_uniform(2, 4096, 2, 0, NULL));
        ck_assert_ptr_null(topology_new_uniform(1025, 1, 1, 0, NULL));
        ck_assert_ptr_null(topology_new_uniform(UINT_MAX, UINT_MAX, UINT_MAX, 0, NULL));
        topology_free(NULL);
}
END_TEST

START_TEST(test_lookup_without_tables)
{
        /* A snapshot assembled by hand has no lookup tables: the lookups still work. */
        TopoPu pus[2] = {{.os_index = 7}, {.os_index = 3}};
        TopoNode nodes[1] = {{.os_index = 4}};
        Topology t = {.npus = 2, .pus = pus, .nnodes = 1, .nodes = nodes};

        ck_assert_int_eq(topology_pu_by_os(&t, 3), 1);
        ck_assert_int_eq(topology_pu_by_os(&t, 5), -1);
        ck_assert_int_eq(topology_node_by_os(&t, 4), 0);
        ck_assert_int_eq(topology_node_by_os(&t, 0), -1);
}
END_TEST

/* hwloc writes an all-zero 32-bit word as nothing: every host with CPU or node numbers from 64 on. */
START_TEST(test_big_hosts_xml)
{
        g_autoptr(Topology) cpus_xml = load_fixture("big-192-pus.xml");
        g_autoptr(Topology) cpus = load_ok("synthetic:pack:2 numa:2(memory=16GB) l3:1 core:24 pu:2");
        g_autoptr(Topology) nodes_xml = load_fixture("big-68-nodes.xml");
        g_autoptr(Topology) nodes = load_ok("synthetic:pack:2 numa:34(memory=1GB) core:1 pu:1");

        ck_assert_uint_eq(cpus_xml->npus, 192);
        assert_same(cpus, cpus_xml);
        ck_assert_uint_eq(nodes_xml->nnodes, 68);
        assert_same(nodes, nodes_xml);
}
END_TEST

static int precheck_one(const char *cpuset)
{
        g_autofree char *xml = g_strdup_printf(
            "<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"%s\" complete_cpuset=\"%s\" "
            "nodeset=\"0x1\" complete_nodeset=\"0x1\"/></topology>",
            cpuset, cpuset);
        g_autofree char *error = NULL;

        return topology_xml_precheck(xml, strlen(xml), &error);
}

/* Bitmap text as hwloc_bitmap_snprintf() writes it and hwloc_bitmap_sscanf() reads it. A leading empty
 * word is never written, and hwloc_bitmap_sscanf() aborts on one. */
START_TEST(test_xml_bitmap_text)
{
        static const char *const good[] = {
            "0x0",         "0x00000003,,0x0", "0x1,,,,0x00000002",    "0xf...f",
            "0xf...f,0x1", "0xf...f,,0x1",    "0xFFFFFFFF,0xffffffff"};
        static const char *const bad[] = {"",
                                          ",",
                                          "0x1,",
                                          "0x1,,",
                                          "1",
                                          "0x",
                                          "0xg",
                                          "0x1;0x2",
                                          "0xf...f,",
                                          "0x1 ",
                                          "0x12345678901234567",
                                          ",0x1",
                                          ",0x00000001,,0x00000001"};

        for (unsigned i = 0; i < G_N_ELEMENTS(good); i++)
                ck_assert_msg(precheck_one(good[i]) == 0, "refused \"%s\"", good[i]);
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++)
                ck_assert_msg(precheck_one(bad[i]) == -EINVAL, "accepted \"%s\"", bad[i]);
}
END_TEST

/* XML the pre-check passes and hwloc refuses: the error says what hwloc found wrong (from its verbose
 * XML messages in the trial child), not a bare "Invalid argument", and leaves out the warnings about
 * what it ignores and its own trailer about the parser. */
START_TEST(test_xml_refusal_says_why)
{
        g_autofree char *path = test_topology_path("v1-layout-as-v2.xml");
        Topology *t = NULL;
        g_autofree char *error = NULL;

        assert_load_fails(path, -EINVAL,
                          "invalid hwloc XML: hwloc: normal object Package cannot be child of "
                          "non-normal parent NUMANode");
        ck_assert_int_lt(topology_load(path, &t, &error), 0);
        ck_assert_msg(!strstr(error, "online_cpuset"), "%s", error);
        ck_assert_msg(!strstr(error, "minimalistic"), "%s", error);
        ck_assert_msg(!strchr(error, '\n'), "%s", error);
}
END_TEST

/* A PU or NUMA node without an OS index, or with a huge one, has hwloc 2.9 allocate a bitmap up to that
 * index (seconds and hundreds of MiB, twice with the trial child): refused before hwloc reads it. */
START_TEST(test_xml_os_index_checked_first)
{
        static const struct {
                const char *file, *needle;
        } cases[] = {
            {"topology-hwloc-pu-without-os-index", "<object type=\"PU\"> has no os_index"},
            {"topology-hwloc-node-os-index-huge", "<object type=\"NUMANode\"> has os_index \"4000000000\""},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *path =
                    g_build_filename(g_getenv("PLACEMENTD_SRCDIR") ? g_getenv("PLACEMENTD_SRCDIR") : ".",
                                     "tests/fuzz/regressions", cases[i].file, NULL);
                Topology *t = NULL;
                g_autofree char *err = NULL;
                ck_assert_int_eq(topology_load(path, &t, &err), -EINVAL);
                ck_assert_ptr_null(t);
                ck_assert_msg(strstr(err, cases[i].needle), "%s: %s", cases[i].file, err);
        }
}
END_TEST

/* Runs topology_load(path) with stderr in a file; returns what was written there. */
static char *load_capturing_stderr(const char *path, Topology **ret)
{
        g_autofree char *err = NULL, *name = NULL;
        char *said = NULL;
        int fd, saved;

        fd = g_file_open_tmp("placementd-stderr-XXXXXX", &name, NULL);
        ck_assert_int_ge(fd, 0);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        ck_assert_int_ge(saved, 0);
        ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
        ck_assert_msg(topology_load(path, ret, &err) == 0, "%s: %s", path, err ? err : "");
        fflush(stderr);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        close(fd);
        ck_assert(g_file_get_contents(name, &said, NULL, NULL));
        g_unlink(name);
        return said;
}

/* hwloc reads an XML file twice, once in the trial child and once for real: what it says about the file
 * (an out-of-order object in this fixture) is shown once, by the real load. */
START_TEST(test_xml_hwloc_warning_said_once)
{
        g_autofree char *path = test_topology_path("out-of-order.xml"), *said = NULL;
        Topology *t = NULL;
        const char *p;
        unsigned n = 0;

        said = load_capturing_stderr(path, &t);
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(t->ncores, 2);
        topology_free(t);
        for (p = said; (p = strstr(p, "out-of-order XML topology load")); p++)
                n++;
        ck_assert_msg(n == 1, "hwloc's warning shown %u times:\n%s", n, said);
}
END_TEST

/* Inputs the fuzzer found that crash hwloc 2.9's XML import: refused before hwloc sees them. */
START_TEST(test_xml_hwloc_would_crash)
{
        static const struct {
                const char *file, *needle;
        } cases[] = {
            {"topology-hwloc-no-complete-cpuset", "has cpuset but no complete_cpuset"},
            {"topology-hwloc-unterminated-root", "invalid hwloc XML"},
            {"topology-hwloc-empty-complete-cpuset", "has an invalid complete_cpuset"},
            {"topology-hwloc-cpuset-not-in-complete", "not inside its complete_cpuset"},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *path =
                    g_build_filename(g_getenv("PLACEMENTD_SRCDIR") ? g_getenv("PLACEMENTD_SRCDIR") : ".",
                                     "tests/fuzz/regressions", cases[i].file, NULL);
                Topology *t = NULL;
                g_autofree char *err = NULL;
                ck_assert_int_eq(topology_load(path, &t, &err), -EINVAL);
                ck_assert_ptr_null(t);
                ck_assert_msg(strstr(err, cases[i].needle), "%s: %s", cases[i].file, err);
        }
}
END_TEST

/* The same inputs, past the pre-check, straight to hwloc in a child: each crash is an error here. */
START_TEST(test_xml_hwloc_crash_contained)
{
        static const char *const crashers[] = {
            "topology-hwloc-no-complete-cpuset",     "topology-hwloc-unterminated-root",
            "topology-hwloc-empty-complete-cpuset",  "topology-hwloc-cpuset-not-in-complete",
            "topology-hwloc-v1-numa-without-cpuset", "topology-hwloc-insert-by-parent"};
        g_autofree char *good = test_topology_path("two-node-smt.xml"), *text = NULL, *err = NULL;
        gsize len = 0;

        ck_assert(g_file_get_contents(good, &text, &len, NULL));
        ck_assert_int_eq(topology_xml_trial_load(text, len, good, &err), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(crashers); i++) {
                g_autofree char *path =
                    g_build_filename(g_getenv("PLACEMENTD_SRCDIR") ? g_getenv("PLACEMENTD_SRCDIR") : ".",
                                     "tests/fuzz/regressions", crashers[i], NULL);
                g_autofree char *xml = NULL, *error = NULL, *expected = NULL;

                ck_assert(g_file_get_contents(path, &xml, &len, NULL));
                ck_assert_int_eq(topology_xml_trial_load(xml, len, path, &error), -EINVAL);
                expected = g_strdup_printf("hwloc crashed reading %s (signal %d", path, SIGSEGV);
                ck_assert_msg(g_str_has_prefix(error, expected), "%s: %s", crashers[i], error);
        }
}
END_TEST

/* Inputs that pass the pre-check and crash hwloc 2.9 (hwloc 1.x XML with a NUMA node that has no cpuset,
 * found by hand; one the fuzzer found): the load fails with an error instead of taking the process down. */
START_TEST(test_xml_hwloc_crash_is_an_error)
{
        static const char *const crashers[] = {"topology-hwloc-v1-numa-without-cpuset",
                                               "topology-hwloc-insert-by-parent"};

        for (unsigned i = 0; i < G_N_ELEMENTS(crashers); i++) {
                g_autofree char *path =
                    g_build_filename(g_getenv("PLACEMENTD_SRCDIR") ? g_getenv("PLACEMENTD_SRCDIR") : ".",
                                     "tests/fuzz/regressions", crashers[i], NULL);
                g_autofree char *expected =
                    g_strdup_printf("hwloc crashed reading %s (signal %d", path, SIGSEGV);

                assert_load_fails(path, -EINVAL, expected);
        }
}
END_TEST

static Suite *topology_suite(void)
{
        Suite *s = suite_create("topology");
        TCase *load = tcase_create("load");
        TCase *odd = tcase_create("odd hosts");
        TCase *distances = tcase_create("distances");
        TCase *errors = tcase_create("errors");
        TCase *uniform = tcase_create("uniform");

        tcase_add_test(load, test_synthetic_2x16x2);
        tcase_add_test(load, test_xml_same_as_synthetic);
        tcase_add_test(load, test_linux_sibling_numbering);
        tcase_add_test(load, test_host);
        tcase_add_test(load, test_environment_does_not_replace_source);
        tcase_add_test(load, test_big_hosts_xml);
        tcase_add_test(load, test_xml_bitmap_text);
        tcase_add_test(load, test_xml_refusal_says_why);
        tcase_add_test(load, test_xml_hwloc_warning_said_once);
        tcase_add_test(load, test_pci_locality);
        tcase_add_test(load, test_pci_nearest_with_cpus);
        tcase_add_test(load, test_pci_nearest_needs_distances);
        tcase_add_test(load, test_pci_nearest_live_host);
        suite_add_tcase(s, load);

        tcase_add_test(odd, test_memory_only_fixture);
        tcase_add_test(odd, test_co_attached_node_said);
        tcase_add_test(odd, test_memory_only_synthetic);
        tcase_add_test(odd, test_empty_nodes_left_out);
        tcase_add_test(odd, test_far_memory_is_a_lower_tier);
        tcase_add_test(odd, test_memoryless_cpu_node);
        tcase_add_test(odd, test_export_without_memory_sizes);
        tcase_add_test(odd, test_mixed_smt);
        tcase_add_test(odd, test_disallowed_and_offline);
        tcase_add_test(odd, test_disallowed_node);
        tcase_add_test(odd, test_pu_without_node);
        tcase_add_test(odd, test_node_os_index_max);
        tcase_add_test(odd, test_l3_groups);
        tcase_add_test(odd, test_no_cores_no_packages);
        suite_add_tcase(s, odd);

        tcase_add_test(distances, test_opteron_distances);
        tcase_add_test(distances, test_missing_distances);
        tcase_add_test(distances, test_missing_distances_packages);
        tcase_add_test(distances, test_missing_distances_hbm_locality);
        tcase_add_test(distances, test_missing_distances_hbm_v1_export);
        tcase_add_test(distances, test_invalid_self_distance);
        tcase_add_test(distances, test_invalid_distance_below_10);
        tcase_add_test(distances, test_all_unreachable_is_flat);
        tcase_add_test(distances, test_node_unreachable_from_itself);
        tcase_add_test(distances, test_matrix_dropped_by_hwloc);
        tcase_add_test(distances, test_partial_matrix);
        tcase_add_test(distances, test_matrix_refused_by_hwloc);
        suite_add_tcase(s, distances);

        tcase_add_test(errors, test_errors);
        tcase_add_test(errors, test_limits);
        tcase_add_test(errors, test_xml_not_a_regular_file);
        suite_add_tcase(s, errors);

        tcase_add_test(uniform, test_uniform_matches_synthetic);
        tcase_add_test(uniform, test_uniform);
        tcase_add_test(uniform, test_lookup_without_tables);
        suite_add_tcase(s, uniform);
        {
                TCase *fuzzed = tcase_create("fuzzed");
                tcase_add_test(fuzzed, test_xml_hwloc_would_crash);
                tcase_add_test(fuzzed, test_xml_os_index_checked_first);
                tcase_add_test(fuzzed, test_xml_hwloc_crash_contained);
                tcase_add_test(fuzzed, test_xml_hwloc_crash_is_an_error);
                suite_add_tcase(s, fuzzed);
        }
        return s;
}

TEST_MAIN(topology_suite)
