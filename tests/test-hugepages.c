/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hugepage-backed memory: the topology's per-node pools (hwloc page types, tests/topologies/
 * two-node-hugepages.xml: node 0 has 32 x 2 MiB, node 1 64 x 2 MiB, out of 1 GiB each), a domain counted
 * against the free pages of its size and never general memory, general memory never against the pools.
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <string.h>

#include "domain-request.h"
#include "domain-xml.h"
#include "hostmap.h"
#include "topology-load.h"

#include <inttypes.h>

#define MiB   (UINT64_C(1) << 20)
#define PAGE2 (2 * MiB)

/* tests/topologies/file, loaded. */
static Topology *load_host(const char *file)
{
        g_autofree char *path = test_topology_path(file);
        g_autofree char *error = NULL;
        Topology *t = NULL;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        return t;
}

static Topology *load(void)
{
        return load_host("two-node-hugepages.xml");
}

static Plan *place(const Topology *t, const Ledger *l, const char *name, uint64_t memory, uint64_t page)
{
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = name, .vcpus = 1, .memory = memory, .hugepage_size = page};
        return policy_place(t, l, &req, &params);
}

START_TEST(test_loader_reads_pools)
{
        g_autoptr(Topology) t = load();

        ck_assert_uint_eq(t->nnodes, 2);
        ck_assert_uint_eq(t->nodes[0].nhugepages, 1);
        ck_assert_uint_eq(t->nodes[0].hugepages[0].size, PAGE2);
        ck_assert_uint_eq(t->nodes[0].hugepages[0].count, 32);
        ck_assert_uint_eq(topology_node_hugepage_bytes(t, 1, PAGE2), 128 * MiB);
        /* the pools are not general memory */
        ck_assert_uint_eq(t->nodes[0].memory, 960 * MiB);
        ck_assert_uint_eq(t->nodes[1].memory, 896 * MiB);
        ck_assert_uint_eq(topology_default_hugepage_size(t), PAGE2);
}
END_TEST

START_TEST(test_kernel_default_page_size)
{
        /* <hugepages/> without a size gets the kernel's default page size (libvirt reads Hugepagesize: in
         * /proc/meminfo), not the smallest pool: a host booted with default_hugepagesz=1G that keeps a
         * small 2 MiB pool too gives such a guest 1 GiB pages */
        g_autoptr(Topology) t = load();

        ck_assert_uint_eq(topology_meminfo_hugepage_size("MemTotal: 1 kB\nHugepagesize:    1048576 kB\n"),
                          UINT64_C(1) << 30);
        ck_assert_uint_eq(topology_meminfo_hugepage_size("Hugepagesize:       2048 kB\n"), PAGE2);
        ck_assert_uint_eq(topology_meminfo_hugepage_size("MemTotal: 1 kB\n"), 0);
        ck_assert_uint_eq(topology_meminfo_hugepage_size("XHugepagesize: 2048 kB\n"), 0);
        ck_assert_uint_eq(topology_meminfo_hugepage_size("Hugepagesize: lots\n"), 0);
        ck_assert_uint_eq(topology_meminfo_hugepage_size("Hugepagesize: 99999999999999999999 kB\n"), 0);
        ck_assert_uint_eq(topology_default_hugepage_size(t), PAGE2);
        t->default_hugepage_size = UINT64_C(1) << 30;
        ck_assert_uint_eq(topology_default_hugepage_size(t), UINT64_C(1) << 30);
}
END_TEST

/* A 96 MiB hugepage guest with 64 MiB of 2 MiB pages free was "placed, 6.4 GiB free" and then failed to
 * start: it is unplaceable, and the reason says it is the hugepages that are short. */
START_TEST(test_short_pool_is_unplaceable)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        Plan *first = place(t, l, "first", 128 * MiB, PAGE2);

        ck_assert_int_eq(first->result, PLAN_PLACED);
        ck_assert_uint_eq(first->node_memory[1], 128 * MiB);
        ck_assert_int_eq(ledger_commit(l, "first", first), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 1, PAGE2), 128 * MiB);
        ck_assert_uint_eq(ledger_node_memory(l, 1), 0);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 0, PAGE2), 64 * MiB);

        g_autoptr(Plan) p = place(t, l, "vm", 96 * MiB, PAGE2);
        ck_assert_int_eq(p->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(p->reason, "no node set has 96.0 MiB in 2.0 MiB hugepages free"), "%s",
                      p->reason);
        ck_assert_msg(strstr(p->reason, "64.0 MiB in 2.0 MiB hugepages free on the whole host"), "%s",
                      p->reason);

        /* released, the pool is whole again */
        ck_assert_int_eq(ledger_release(l, "first"), 0);
        ck_assert(ledger_is_empty(l));
}
END_TEST

/* Memory shared over two nodes' pools is counted in whole pages: 102 MiB of 2 MiB pages bound to both
 * nodes is not 51 + 51 MiB (25.5 pages each), nor is an unbound one split by vCPUs; the sum stays what the
 * domain has */
START_TEST(test_spread_in_whole_pages)
{
        for (unsigned bound = 0; bound < 2; bound++)
                for (uint64_t mib = 66; mib <= 130; mib += 4) {
                        g_autoptr(Topology) t = load();
                        g_autoptr(Ledger) l = ledger_new(t);
                        g_autoptr(CpuSet) both = NULL;
                        PlacementParams params = test_params(POLICY_EXPLICIT);
                        PlacementRequest req = {
                            .name = "vm", .vcpus = 2, .memory = mib * MiB, .hugepage_size = PAGE2};
                        g_autoptr(Plan) p = NULL;
                        uint64_t sum = 0;

                        cpuset_parse("0-1", &both, NULL);
                        if (bound) {
                                req.memory_nodes = both;
                                req.memory_source = MEMORY_SOURCE_USER;
                                req.memory_mode = MEMORY_MODE_STRICT;
                        }
                        p = policy_place(t, l, &req, &params);
                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        for (unsigned n = 0; n < p->nnode_memory; n++) {
                                ck_assert_msg(p->node_memory[n] % PAGE2 == 0,
                                              "%s %" PRIu64 " MiB, node %u: %" PRIu64 " bytes",
                                              bound ? "bound" : "spread", mib, n, p->node_memory[n]);
                                sum += p->node_memory[n];
                        }
                        ck_assert_uint_eq(sum, mib * MiB);
                }
}
END_TEST

/* A size that is not a whole number of pages (QEMU rounds it up to one): what is left under a page goes to
 * a node with a page free for it. 129 MiB of 2 MiB pages on one vCPU took node 1's 64 pages and its last
 * 1 MiB too, all of it counted and bound on node 1, whose pool holds 128 MiB (QEMU needs 65 pages there);
 * with two vCPUs, 64.5 MiB a node, node 0's 32 pages and 1 MiB more. */
START_TEST(test_part_page_goes_where_a_page_is_free)
{
        for (unsigned vcpus = 1; vcpus <= 2; vcpus++)
                for (uint64_t mib = 129; mib <= 191; mib += 2) {
                        g_autoptr(Topology) t = load();
                        g_autoptr(Ledger) l = ledger_new(t);
                        PlacementParams params = test_params(POLICY_EXPLICIT);
                        PlacementRequest req = {
                            .name = "vm", .vcpus = vcpus, .memory = mib * MiB, .hugepage_size = PAGE2};
                        g_autoptr(Plan) p = policy_place(t, l, &req, &params);
                        g_autoptr(CpuSet) nodes = NULL;
                        uint64_t sum = 0;

                        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                        for (unsigned n = 0; n < p->nnode_memory; n++) {
                                ck_assert_msg(p->node_memory[n] <= topology_node_hugepage_bytes(t, n, PAGE2),
                                              "%u vCPUs, %" PRIu64 " MiB: node %u counts %" PRIu64
                                              " bytes of a %" PRIu64 "-byte pool: %s",
                                              vcpus, mib, n, p->node_memory[n],
                                              topology_node_hugepage_bytes(t, n, PAGE2), p->reason);
                                sum += p->node_memory[n];
                        }
                        ck_assert_uint_eq(sum, mib * MiB);
                        nodes = plan_memory_nodes(p);
                        ck_assert_msg(cpuset_count(nodes) == 2, "%u vCPUs, %" PRIu64 " MiB: %s", vcpus, mib,
                                      p->reason);
                }
}
END_TEST

/* QEMU backs a guest's memory in whole pages: a 31 MiB guest takes 16 of node 0's 32 x 2 MiB pages, not
 * 15.5, so a 33 MiB guest (17 pages) bound there after it does not fit the 32 MiB left, though the bytes
 * of the two (64 MiB) fill the pool exactly; the plans keep the guests' own sizes. */
START_TEST(test_pool_held_in_whole_pages)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) node0 = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "small",
                                .vcpus = 1,
                                .memory = 31 * MiB,
                                .hugepage_size = PAGE2,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        g_autoptr(Plan) second = NULL;
        g_autofree char *map = NULL;
        Plan *first;

        ck_assert_int_eq(cpuset_parse("0", &node0, NULL), 0);
        req.memory_nodes = node0;
        first = policy_place(t, l, &req, &params);
        ck_assert_uint_eq(first->node_memory[0], 31 * MiB);
        ck_assert_int_eq(ledger_commit(l, "small", first), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, PAGE2), 32 * MiB);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 0, PAGE2), 32 * MiB);
        map = hostmap_render(t, l, NULL);
        ck_assert_msg(strstr(map, "hugepages 2.0 MiB: 32.0 MiB free of 64.0 MiB"), "%s", map);

        req.name = "large";
        req.memory = 33 * MiB;
        second = policy_place(t, l, &req, &params);
        ck_assert_uint_eq(second->node_memory[0], 33 * MiB);
        ck_assert_msg(
            strstr(second->reason,
                   "node 0 has 32.0 MiB free in hugepages of 2.0 MiB for the 33.0 MiB bound there"),
            "%s", second->reason);
        ck_assert_int_eq(ledger_release(l, "small"), 0);
        ck_assert(ledger_is_empty(l));
}
END_TEST

/* Each guest cell is a memory backend of its own (ram-node<id>), each rounded up to whole pages: two
 * 33 MiB cells on one node take 34 x 2 MiB pages (68 MiB), not the 33 their 66 MiB would fill. */
START_TEST(test_cells_held_in_whole_pages_each)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        Plan *p = plan_new("cells", 2, 66 * MiB, t->nnodes);

        p->hugepage_size = PAGE2;
        p->result = PLAN_PLACED;
        plan_set_cells(p, 2);
        for (unsigned c = 0; c < 2; c++) {
                p->cells[c].id = c;
                p->cells[c].memory = 33 * MiB;
        }
        p->node_memory[1] = 66 * MiB;
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 1, PAGE2), 68 * MiB);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 1, PAGE2), 60 * MiB);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, PAGE2), 0);
        ck_assert_int_eq(ledger_release(l, "cells"), 0);
        ck_assert(ledger_is_empty(l));
}
END_TEST

/* Places a guest of memory bytes in hugepages of page bound to the node of index node, and commits it. */
static void hold_pages(const Topology *t, Ledger *l, const char *name, unsigned node, uint64_t memory,
                       uint64_t page)
{
        g_autoptr(CpuSet) bound = cpuset_new();
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = name,
                                .vcpus = 1,
                                .memory = memory,
                                .hugepage_size = page,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT,
                                .memory_nodes = bound};

        cpuset_add(bound, t->nodes[node].os_index);
        ck_assert_int_eq(ledger_commit(l, name, policy_place(t, l, &req, &params)), 0);
}

/* A request of ncells guest cells of cell_memory each in hugepages of page, a vCPU per cell; bound (when
 * not NULL) binds each cell by its <memnode>. cells and vcpus hold ncells each. */
static PlacementRequest cells_request(PlacementCell *cells, CpuSet **vcpus, unsigned ncells,
                                      uint64_t cell_memory, uint64_t page, const CpuSet *bound)
{
        for (unsigned c = 0; c < ncells; c++) {
                vcpus[c] = cpuset_new();
                cpuset_add(vcpus[c], c);
                cells[c] = (PlacementCell){
                    .id = c, .vcpus = vcpus[c], .memory = cell_memory, .memory_nodes = bound};
        }
        return (PlacementRequest){.name = "cells",
                                  .vcpus = ncells,
                                  .memory = ncells * cell_memory,
                                  .hugepage_size = page,
                                  .cells = cells,
                                  .ncells = ncells};
}

/* Frees the vCPU sets cells_request() made. */
static void free_cell_vcpus(CpuSet **vcpus, unsigned ncells)
{
        for (unsigned c = 0; c < ncells; c++)
                cpuset_free(vcpus[c]);
}

/* No pool holds more than it has once the plan is committed. */
static void assert_pools_hold(const Topology *t, const Ledger *l, uint64_t page)
{
        for (unsigned n = 0; n < t->nnodes; n++)
                ck_assert_msg(ledger_node_hugepages(l, n, page) <= topology_node_hugepage_bytes(t, n, page),
                              "node %u: %" PRIu64 " MiB held of %" PRIu64, n,
                              ledger_node_hugepages(l, n, page) / MiB,
                              topology_node_hugepage_bytes(t, n, page) / MiB);
}

/* Two 33 MiB cells on 2 MiB pages take 17 + 17 pages, not the 33 their 66 MiB would fill. With node 1's
 * pool at 33 free pages (another guest bound there holds 31) and node 0's at its 32, both cells were put
 * on node 1 ("66.0 MiB free for 66.0 MiB"), where QEMU finds a page short: each goes to a node of its own.
 */
START_TEST(test_cells_fit_in_whole_pages_each)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        CpuSet *vcpus[2];
        PlacementRequest req = cells_request(cells, vcpus, 2, 33 * MiB, PAGE2, NULL);
        Plan *p;

        hold_pages(t, l, "holder", 1, 62 * MiB, PAGE2);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 1, PAGE2), 66 * MiB);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(cpuset_count(p->nodes) == 2, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "guest cells: 0 on node 0, 1 on node 1"), "%s", p->reason);
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        assert_pools_hold(t, l, PAGE2);
        free_cell_vcpus(vcpus, 2);
}
END_TEST

/* With node 0's pool full as well the host has 66 MiB of pages free for the 68 MiB the two cells take:
 * unplaceable, not placed on node 1, and the reason says what the whole pages come to. */
START_TEST(test_cells_short_in_whole_pages_unplaceable)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        CpuSet *vcpus[2];
        PlacementRequest req = cells_request(cells, vcpus, 2, 33 * MiB, PAGE2, NULL);
        g_autoptr(Plan) p = NULL;

        hold_pages(t, l, "holder0", 0, 64 * MiB, PAGE2);
        hold_pages(t, l, "holder1", 1, 62 * MiB, PAGE2);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_UNPLACEABLE, "%s", p->reason);
        ck_assert_str_eq(p->reason,
                         "no node set has 66.0 MiB in 2.0 MiB hugepages free, 68.0 MiB in the whole "
                         "pages QEMU backs each guest cell in (66.0 MiB in 2.0 MiB hugepages free on "
                         "the whole host; hugepage-backed memory never takes general memory); "
                         "nothing pinned");
        free_cell_vcpus(vcpus, 2);
}
END_TEST

/* Two cells whose <memnode> binds them to node 1, 33 free pages there: counted there as bound, and the
 * reason says the pool is short of the 34 pages they take, though it holds their 66 MiB. */
START_TEST(test_bound_cells_short_in_whole_pages_said)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) node1 = cpuset_new();
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        CpuSet *vcpus[2];
        PlacementRequest req;
        g_autoptr(Plan) p = NULL;

        cpuset_add(node1, 1);
        req = cells_request(cells, vcpus, 2, 33 * MiB, PAGE2, node1);
        hold_pages(t, l, "holder", 1, 62 * MiB, PAGE2);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[1], 66 * MiB);
        ck_assert_msg(strstr(p->reason,
                             "node 1 has 66.0 MiB free in hugepages of 2.0 MiB for the 66.0 MiB "
                             "bound there, 68.0 MiB in the whole pages QEMU backs each guest cell "
                             "in: the guest's memory cannot all be backed"),
                      "%s", p->reason);
        free_cell_vcpus(vcpus, 2);
}
END_TEST

/* The same beside a cell of ordinary memory (no <page> backs it): the pools hold the two hugepage-backed
 * cells only in 34 pages, whatever ordinary memory is free; the host has 33, so no set has both kinds. */
START_TEST(test_partial_cells_short_in_whole_pages)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[3];
        CpuSet *vcpus[3];
        PlacementRequest req = cells_request(cells, vcpus, 3, 33 * MiB, PAGE2, NULL);
        g_autoptr(Plan) p = NULL;

        cells[2].memory = 64 * MiB;
        cells[2].ordinary = true;
        req.memory = 130 * MiB;
        hold_pages(t, l, "holder0", 0, 64 * MiB, PAGE2);
        hold_pages(t, l, "holder1", 1, 62 * MiB, PAGE2);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_UNPLACEABLE, "%s", p->reason);
        ck_assert_msg(strstr(p->reason,
                             "no node set has 130.0 MiB (66.0 MiB of it in 2.0 MiB hugepages) free, "
                             "132.0 MiB in the whole pages QEMU backs each guest cell in (66.0 MiB "
                             "in 2.0 MiB hugepages and "),
                      "%s", p->reason);
        free_cell_vcpus(vcpus, 3);
}
END_TEST

/* Two 33 MiB cells of one vCPU, node 1 with 33 free pages and the most free cores (3, node 0 has 1 beside
 * its 32 free pages): by their bytes both went whole to node 1's 66 MiB, where QEMU finds a page short;
 * in whole pages the second goes to node 0. */
START_TEST(test_cells_packed_in_whole_pages)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        CpuSet *vcpus[2];
        PlacementRequest req = cells_request(cells, vcpus, 2, 33 * MiB, PAGE2, NULL);
        Plan *p;

        hold_pages(t, l, "holder", 1, 62 * MiB, PAGE2);
        test_hold(t, l, "busy", 0, 3, 0, 0);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "guest cells: 0 on node 1, 1 on node 0"), "%s", p->reason);
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        assert_pools_hold(t, l, PAGE2);
        free_cell_vcpus(vcpus, 2);
}
END_TEST

/* Cells put in the guest's order trade places only where the pages hold them: four cells of one vCPU,
 * 1536 MiB (two 1 GiB pages) for the two of guest socket 0 and 1 GiB for the others, on nodes 0 and 2
 * of spr-snc2 (another package) with three free pages each. Packed, each node takes a cell of each size;
 * the guest's order would have the two big ones on one node, 3 GiB by their bytes in its 3 free pages,
 * though they take four. */
START_TEST(test_guest_order_keeps_whole_pages)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[4];
        CpuSet *vcpus[4];
        PlacementRequest req = cells_request(cells, vcpus, 4, 1024 * MiB, GiB, NULL);
        Plan *p;

        cells[0].memory = cells[1].memory = 1536 * MiB;
        req.memory = 5 * GiB;
        req.guest_socket_vcpus = 2;
        for (unsigned n = 0; n < t->nnodes; n++) {
                g_autofree char *name = g_strdup_printf("holder%u", n);
                hold_pages(t, l, name, n, n % 2 ? 16 * GiB : 13 * GiB, GiB);
        }
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "guest cells: 0 on node 0, 1 on node 2, 2 on node 0, 3 on node 2"),
                      "%s", p->reason);
        /* each node's 2.5 GiB as its two cells have it: three pages there, not 3 + 2 */
        ck_assert_uint_eq(p->node_memory[0], 2560 * MiB);
        ck_assert_uint_eq(p->node_memory[2], 2560 * MiB);
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        assert_pools_hold(t, l, GiB);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 0, GiB), 0);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 2, GiB), 0);
        ck_assert_int_eq(ledger_release(l, "cells"), 0);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 0, GiB), 3 * GiB);
        free_cell_vcpus(vcpus, 4);
}
END_TEST

/* Cells of 33, 33 and 60 MiB (17, 17 and 30 pages) on nodes with 32 and 33 free pages: no node holds two
 * of them whole, and the third's vCPU goes beside the first on node 1, its memory in the 16 pages left
 * there and one of node 0's. It was counted all on node 1 by its bytes (66 MiB in 33 free pages), where
 * QEMU finds a page short, and the reason did not say its memory spilled. */
START_TEST(test_spilled_cell_counted_in_whole_pages)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[3];
        CpuSet *vcpus[3];
        PlacementRequest req = cells_request(cells, vcpus, 3, 33 * MiB, PAGE2, NULL);
        Plan *p;

        cells[2].memory = 60 * MiB;
        req.memory = 126 * MiB;
        hold_pages(t, l, "holder", 1, 62 * MiB, PAGE2);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "(its memory also on node 0: node 1 lacks the room for all of it)"),
                      "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[0] + p->node_memory[1], 126 * MiB);
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        assert_pools_hold(t, l, PAGE2);
        free_cell_vcpus(vcpus, 3);
}
END_TEST

/* A cell of no memory takes no page: a 66 MiB cell and an empty one fit node 1's 33 free pages together
 * (a cell of memory 0 backs nothing, and 66 MiB is whole pages). */
START_TEST(test_empty_cell_takes_no_page)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        CpuSet *vcpus[2];
        PlacementRequest req = cells_request(cells, vcpus, 2, 33 * MiB, PAGE2, NULL);
        Plan *p;

        cells[0].memory = 66 * MiB;
        cells[1].memory = 0;
        hold_pages(t, l, "holder0", 0, 64 * MiB, PAGE2);
        hold_pages(t, l, "holder1", 1, 62 * MiB, PAGE2);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED && cpuset_count(p->nodes) == 1 && cpuset_has(p->nodes, 1),
                      "%s", p->reason);
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 1, PAGE2), 0);
        assert_pools_hold(t, l, PAGE2);
        free_cell_vcpus(vcpus, 2);
}
END_TEST

/* 1 GiB pages, cells of 1536 MiB: two pages each. With three pages free on each node of spr-snc2 (13 of
 * its 16 held), both cells fitted one node by their 3 GiB; they take 4 pages, one node each. */
START_TEST(test_gib_cells_fit_in_whole_pages)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        CpuSet *vcpus[2];
        PlacementRequest req = cells_request(cells, vcpus, 2, 1536 * MiB, GiB, NULL);
        Plan *p;

        for (unsigned n = 0; n < t->nnodes; n++) {
                g_autofree char *name = g_strdup_printf("holder%u", n);
                hold_pages(t, l, name, n, 13 * GiB, GiB);
        }
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(cpuset_count(p->nodes) == 2, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "6.0 GiB free for 3.0 GiB in 1.0 GiB hugepages"), "%s", p->reason);
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        assert_pools_hold(t, l, GiB);
        free_cell_vcpus(vcpus, 2);
}
END_TEST

/* The cells counted whole on a node are held there in their own whole pages: two 33 MiB cells on node 0
 * take 34 pages there, a 67 MiB cell on node 1 34 there; the two pages of the first two's rounding were
 * held on node 1, which counted more bytes (70 MiB held where QEMU takes 68, and 66 on node 0). */
START_TEST(test_whole_cells_held_on_their_nodes)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        Plan *p = plan_new("cells", 3, 133 * MiB, t->nnodes);
        static const unsigned node[] = {0, 0, 1};
        static const uint64_t memory[] = {33 * MiB, 33 * MiB, 67 * MiB};

        p->hugepage_size = PAGE2;
        p->result = PLAN_PLACED;
        plan_set_cells(p, 3);
        for (unsigned c = 0; c < 3; c++) {
                p->cells[c].id = c;
                p->cells[c].memory = memory[c];
                cpuset_add(p->cells[c].counted_nodes, node[c]);
                p->node_memory[node[c]] += memory[c];
        }
        ck_assert_int_eq(ledger_commit(l, "cells", p), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, PAGE2), 68 * MiB);
        ck_assert_uint_eq(ledger_node_hugepages(l, 1, PAGE2), 68 * MiB);
        ck_assert_int_eq(ledger_release(l, "cells"), 0);
        ck_assert(ledger_is_empty(l));
}
END_TEST

/* 1536 MiB on 1 GiB pages takes two pages of its node's 16: 14.0 GiB free, not 14.5 (no pool of whole
 * pages has half of one free), the plan still counting the guest's 1536 MiB. */
START_TEST(test_gib_pages_held_whole)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree char *map = NULL;
        uint64_t sum = 0;
        int node = -1;
        Plan *p;

        p = place(t, l, "vm", 1536 * MiB, 1024 * MiB);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        for (unsigned n = 0; n < p->nnode_memory; n++) {
                sum += p->node_memory[n];
                if (p->node_memory[n])
                        node = (int)n;
        }
        ck_assert_uint_eq(sum, 1536 * MiB);
        ck_assert_int_ge(node, 0);
        ck_assert_int_eq(ledger_commit(l, "vm", p), 0);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, (unsigned)node, 1024 * MiB), 14 * 1024 * MiB);
        map = hostmap_render(t, l, NULL);
        ck_assert_msg(strstr(map, "hugepages 1.0 GiB: 14.0 GiB free of 16.0 GiB"), "%s", map);
        ck_assert_msg(!strstr(map, "14.5 GiB"), "%s", map);
}
END_TEST

/* Memory the definition binds is counted where bound, whatever the pool holds; a pool too small for it is
 * said in the reason (QEMU will not find the pages), not hidden behind "placed" */
START_TEST(test_bound_beyond_pool_is_said)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) node0 = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "bound",
                                .vcpus = 1,
                                .memory = 100 * MiB,
                                .hugepage_size = PAGE2,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        g_autoptr(Plan) fits = NULL, beyond = NULL;

        ck_assert_int_eq(cpuset_parse("0", &node0, NULL), 0);
        req.memory_nodes = node0;
        beyond = policy_place(t, l, &req, &params);
        ck_assert_uint_eq(beyond->node_memory[0], 100 * MiB);
        ck_assert_msg(strstr(beyond->reason,
                             "node 0 has 64.0 MiB free in hugepages of 2.0 MiB for the 100.0 MiB "
                             "bound there"),
                      "%s", beyond->reason);
        req.memory = 64 * MiB;
        fits = policy_place(t, l, &req, &params);
        ck_assert_msg(!strstr(fits->reason, "cannot all be backed"), "%s", fits->reason);
}
END_TEST

/* A guest cell whose <memnode> binds more hugepages to a node than its pool has free, beside a cell its
 * <memnode> does not bind: the bound cell is counted in full where it is bound and the reason says the
 * pool is short, as for a domain's binding; the other cell's memory goes where pages are left (node 1),
 * every byte counted. Its memory was taken against the pool the bound cell had filled: counted nowhere,
 * and the short pool not said. */
START_TEST(test_cell_bound_beyond_pool_is_said)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) node0 = NULL, vcpu0 = NULL, vcpu1 = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        PlacementRequest req = {.name = "cells",
                                .vcpus = 2,
                                .memory = 120 * MiB,
                                .hugepage_size = PAGE2,
                                .cells = cells,
                                .ncells = 2};
        uint64_t counted = 0;

        ck_assert_int_eq(cpuset_parse("0", &node0, NULL), 0);
        ck_assert_int_eq(cpuset_parse("0", &vcpu0, NULL), 0);
        ck_assert_int_eq(cpuset_parse("1", &vcpu1, NULL), 0);
        cells[0] = (PlacementCell){.id = 0, .vcpus = vcpu0, .memory = 100 * MiB, .memory_nodes = node0};
        cells[1] = (PlacementCell){.id = 1, .vcpus = vcpu1, .memory = 20 * MiB};
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[0], 100 * MiB);
        ck_assert_uint_eq(p->node_memory[1], 20 * MiB);
        for (unsigned n = 0; n < p->nnode_memory; n++)
                counted += p->node_memory[n];
        ck_assert_uint_eq(counted, req.memory);
        ck_assert_msg(strstr(p->reason, "node 0 has 64.0 MiB free in hugepages of 2.0 MiB for the 100.0 MiB "
                                        "bound there: the guest's memory cannot all be backed"),
                      "%s", p->reason);
}
END_TEST

/* A domain whose pools cannot hold it, one guest cell bound by its <memnode> to node 0: unplaceable (the
 * host has 192 MiB of pages for 250 MiB), the reason giving the whole host's free pages; it gave 128 MiB,
 * the host's free figure taken while the bound cell's 100 MiB were held against node 0's pool */
START_TEST(test_cell_bound_unplaceable_says_host_free)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) node0 = NULL, vcpus0 = NULL, vcpus1 = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementCell cells[2];
        PlacementRequest req = {.name = "cells",
                                .vcpus = 4,
                                .memory = 250 * MiB,
                                .hugepage_size = PAGE2,
                                .cells = cells,
                                .ncells = 2};

        ck_assert_int_eq(cpuset_parse("0", &node0, NULL), 0);
        ck_assert_int_eq(cpuset_parse("0-1", &vcpus0, NULL), 0);
        ck_assert_int_eq(cpuset_parse("2-3", &vcpus1, NULL), 0);
        cells[0] = (PlacementCell){.id = 0, .vcpus = vcpus0, .memory = 100 * MiB, .memory_nodes = node0};
        cells[1] = (PlacementCell){.id = 1, .vcpus = vcpus1, .memory = 150 * MiB};
        g_autoptr(Plan) p = policy_place(t, l, &req, &params);

        ck_assert_msg(p->result == PLAN_UNPLACEABLE, "%s", p->reason);
        ck_assert_msg(strstr(p->reason, "(192.0 MiB in 2.0 MiB hugepages free on the whole host"), "%s",
                      p->reason);
}
END_TEST

/* Hugepages bound to a node that has no pool of their size (1 GiB pages: node 0 has four, node 1 none):
 * placed and said; the plan keeps the share where it is bound, the ledger holds none of it there (none
 * can be) and counts the vCPUs. The ledger refused such a plan, and the daemon pinned the guest with its
 * cores counted nowhere. */
START_TEST(test_bound_to_node_without_pool)
{
        static const MemoryMode modes[] = {MEMORY_MODE_STRICT, MEMORY_MODE_INTERLEAVE,
                                           MEMORY_MODE_PREFERRED};
        g_autoptr(Topology) t = load();
        g_autoptr(CpuSet) node1 = NULL, both = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);

        topology_node_set_hugepages(t, 0, 1024 * MiB, 4);
        ck_assert_int_eq(cpuset_parse("1", &node1, NULL), 0);
        ck_assert_int_eq(cpuset_parse("0-1", &both, NULL), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(modes); i++)
                for (unsigned wide = 0; wide < 2; wide++) {
                        g_autoptr(Ledger) l = ledger_new(t);
                        PlacementRequest req = {.name = "huge",
                                                .vcpus = 1,
                                                .memory = 2048 * MiB,
                                                .hugepage_size = 1024 * MiB,
                                                .memory_source = MEMORY_SOURCE_USER,
                                                .memory_mode = modes[i],
                                                .memory_nodes = wide ? both : node1};
                        Plan *p = policy_place(t, l, &req, &params);
                        uint64_t sum = 0;
                        const Plan *held;

                        ck_assert_msg(p->result == PLAN_PLACED, "mode %u wide %u: %s", i, wide, p->reason);
                        for (unsigned n = 0; n < p->nnode_memory; n++)
                                sum += p->node_memory[n];
                        ck_assert_uint_eq(sum, 2048 * MiB);
                        if (!wide && modes[i] != MEMORY_MODE_PREFERRED)
                                ck_assert_msg(strstr(p->reason,
                                                     "node 1 has no pool of 1.0 GiB hugepages for "
                                                     "the 2.0 GiB bound there"),
                                              "%s", p->reason);
                        ck_assert_msg(ledger_commit(l, "huge", p) == 0,
                                      "mode %u wide %u: the ledger refused it", i, wide);
                        held = ledger_lookup(l, "huge");
                        ck_assert_ptr_nonnull(held);
                        ck_assert_uint_eq(ledger_pu_load(l, (unsigned)held->vcpu_pu[0]), 1);
                        ck_assert_uint_le(ledger_node_hugepages(l, 0, 1024 * MiB), 2048 * MiB);
                        ck_assert_uint_eq(ledger_node_memory(l, 1), 0);
                        ck_assert_int_eq(ledger_release(l, "huge"), 0);
                        ck_assert_uint_eq(ledger_node_hugepages(l, 0, 1024 * MiB), 0);
                }
}
END_TEST

/* A page size no node has a pool of is unplaceable too (1 GiB pages here). */
START_TEST(test_no_pool_of_that_size)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) p = place(t, l, "vm", 1024 * MiB, 1024 * MiB);

        ck_assert_int_eq(p->result, PLAN_UNPLACEABLE);
        ck_assert_msg(strstr(p->reason, "1.0 GiB hugepages"), "%s", p->reason);
}
END_TEST

/* General memory never counts the pools: 1000 MiB of ordinary memory fits no single node (960 and 896
 * MiB outside the pools), and hugepage domains leave general memory as it was. */
START_TEST(test_general_memory_apart_from_pools)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        Plan *hp = place(t, l, "hp", 64 * MiB, PAGE2);

        ck_assert_int_eq(ledger_commit(l, "hp", hp), 0);
        g_autoptr(Plan) p = place(t, l, "vm", 1000 * MiB, 0);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(cpuset_count(p->nodes), 2);
        ck_assert_uint_eq(p->node_memory[0] + p->node_memory[1], 1000 * MiB);
        ck_assert_uint_le(p->node_memory[0], 960 * MiB);
        ck_assert_uint_eq(ledger_node_memory(l, 0) + ledger_node_memory(l, 1), 0);
}
END_TEST

/* Pins made by hand on a hugepage-backed domain: its memory is still held in the pool. */
START_TEST(test_adopted_pins_keep_memory_in_pool)
{
        g_autoptr(Topology) t = load();
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "hand", .vcpus = 1, .memory = 32 * MiB, .hugepage_size = PAGE2};
        CpuSet *pin = cpuset_new();
        Plan *p;

        cpuset_add(pin, 5); /* node 1 */
        p = policy_adopt(t, l, &req, &pin, &params);
        cpuset_free(pin);
        ck_assert_uint_eq(p->hugepage_size, PAGE2);
        ck_assert_uint_eq(p->node_memory[1], 32 * MiB);
        ck_assert_int_eq(ledger_commit(l, "hand", p), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 1, PAGE2), 32 * MiB);
        ck_assert_uint_eq(ledger_node_memory(l, 1), 0);
}
END_TEST

/* <page> sizes per guest cell (libvirt matches each cell to the size whose nodeset names it, whatever the
 * order of the elements): 96 MiB of 2 MiB pages for cell 0 and 7 GiB of 1 GiB pages for cell 1, on a host
 * whose node 1 has eight 1 GiB pages beside its 128 MiB of 2 MiB pages. Both orders count each cell in its
 * own size's pool (the first order once counted all of it in 2 MiB pages and called it unplaceable, later
 * both in 1 GiB pages). A third cell in ordinary memory leaves three kinds: the hugepage-backed cells are
 * then counted in the largest size, and the reason says so. */
START_TEST(test_page_sizes_per_cell_order_independent)
{
        static const char *const orders[] = {
            "<page size='2' unit='MiB' nodeset='0'/><page size='1' unit='GiB' nodeset='1'/>",
            "<page size='1' unit='GiB' nodeset='1'/><page size='2' unit='MiB' nodeset='0'/>",
        };
        g_autoptr(Topology) t = load();
        TopoNode *node1 = &t->nodes[1];

        /* a pool of eight 1 GiB pages on node 1, after its 2 MiB one (sizes ascending) */
        node1->hugepages = g_renew(TopoPages, node1->hugepages, node1->nhugepages + 1);
        node1->hugepages[node1->nhugepages++] = (TopoPages){.size = UINT64_C(1) << 30, .count = 8};
        for (unsigned k = 0; k < 2 * G_N_ELEMENTS(orders); k++) {
                bool third = k >= G_N_ELEMENTS(orders);
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='kvm'><name>hp</name><vcpu>%u</vcpu><cpu><numa>"
                    "<cell id='0' cpus='0' memory='96' unit='MiB'/><cell id='1' cpus='1' memory='7' "
                    "unit='GiB'/>%s</numa></cpu><memoryBacking><hugepages>%s</hugepages></memoryBacking>"
                    "</domain>",
                    third ? 3 : 2, third ? "<cell id='2' cpus='2' memory='32' unit='MiB'/>" : "",
                    orders[k % G_N_ELEMENTS(orders)]);
                g_autoptr(DomainSpec) spec = NULL;
                g_autoptr(Ledger) l = ledger_new(t);
                g_auto(RequestShape) shape = {0};
                PlacementParams params = test_params(POLICY_EXPLICIT);
                PlacementRequest req;
                g_autoptr(Plan) plan = NULL;

                ck_assert_int_eq(domain_xml_parse(xml, &spec, NULL), 0);
                ck_assert_uint_eq(spec->hugepage_size, UINT64_C(1) << 30);
                ck_assert(spec->hugepage_sizes_differ);
                req = domain_request(spec, spec);
                domain_request_shape(spec, t, &req, &shape);
                plan = policy_place(t, l, &req, &params);
                ck_assert_uint_eq(plan->hugepage_size, UINT64_C(1) << 30);
                if (third) {
                        ck_assert_msg(plan->second_page_size == 0 &&
                                          strstr(plan->reason,
                                                 "its <hugepages><page> sizes differ per guest "
                                                 "cell: the memory of its hugepage-backed cells "
                                                 "counted in 1.0 GiB hugepages, the largest"),
                                      "order %u: %s", k, plan->reason);
                        continue;
                }
                ck_assert_msg(plan->result == PLAN_PLACED && cpuset_count(plan->nodes) == 1 &&
                                  cpuset_has(plan->nodes, 1) && !strstr(plan->reason, "differ"),
                              "order %u: %s", k, plan->reason);
                ck_assert_uint_eq(plan->second_page_size, PAGE2);
                ck_assert_int_eq(ledger_commit(l, "hp", plan_copy(plan)), 0);
                ck_assert_uint_eq(ledger_node_hugepages(l, 1, PAGE2), 96 * MiB);
                ck_assert_uint_eq(ledger_node_hugepages(l, 1, UINT64_C(1) << 30), 7 * (UINT64_C(1) << 30));
        }
}
END_TEST

/* A hugepage-backed guest bound to a memory-only HBM node whose memory is all in 2 MiB pages
 * (hbm-all-hugepages.xml: node 1, no general memory, 1024 pages): its vCPUs run on the nearest node with
 * cores, its memory in node 1's pool, as for a memory-only node with general memory too. It was
 * unplaceable, "no usable CPU of this host lies inside its constraints", nothing pinned. */
START_TEST(test_bound_to_pool_only_node)
{
        g_autofree char *path = test_topology_path("hbm-all-hugepages.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(CpuSet) node1 = NULL;
        g_autoptr(Plan) p = NULL;
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "hbm",
                                .vcpus = 2,
                                .memory = 1024 * MiB,
                                .hugepage_size = PAGE2,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        l = ledger_new(t);
        ck_assert_int_eq(cpuset_parse("1", &node1, NULL), 0);
        req.memory_nodes = node1;
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[topology_node_by_os(t, 1)], 1024 * MiB);
        ck_assert_msg(strstr(p->reason, "memory-only nodes, cores taken on node 0"), "%s", p->reason);
        ck_assert_msg(!strstr(p->reason, "no usable CPU"), "%s", p->reason);
}
END_TEST

#define GiB (UINT64_C(1) << 30)

/* A guest of 4 vCPUs whose <page nodeset='0'> backs only cell 0 (4 GiB in 1 GiB pages); cell 1 (32 GiB) is
 * named by no <page> (or by one of the base size), so libvirt backs it with ordinary memory. */
static const char *const partial_pages[] = {
    "<page size='1' unit='G' nodeset='0'/>",
    "<page size='1' unit='G' nodeset='0'/><page size='4' unit='KiB' nodeset='1'/>",
    "<page size='4' unit='KiB'/><page size='1' unit='G' nodeset='0'/>",
};

static DomainSpec *partial_spec(const char *pages)
{
        g_autofree char *xml = g_strdup_printf(
            "<domain type='kvm'><name>hpbig</name><memory unit='GiB'>36</memory><vcpu>4</vcpu>"
            "<memoryBacking><hugepages>%s</hugepages></memoryBacking><cpu><numa>"
            "<cell id='0' cpus='0-1' memory='4' unit='GiB'/><cell id='1' cpus='2-3' memory='32' "
            "unit='GiB'/></numa></cpu></domain>",
            pages);
        g_autofree char *error = NULL;
        DomainSpec *spec = NULL;

        ck_assert_msg(domain_xml_parse(xml, &spec, &error) == 0, "%s", error);
        return spec;
}

/* Each guest cell is backed as libvirt backs it: the <page> whose nodeset names it, else the one without
 * a nodeset, else ordinary memory; a page of the base size is ordinary memory. */
START_TEST(test_page_nodeset_backs_named_cells_only)
{
        for (unsigned k = 0; k < G_N_ELEMENTS(partial_pages); k++) {
                g_autoptr(DomainSpec) spec = partial_spec(partial_pages[k]);
                const DomainCell *c0 = &g_array_index(spec->cells, DomainCell, 0),
                                 *c1 = &g_array_index(spec->cells, DomainCell, 1);

                ck_assert_msg(c0->hugepages && c0->hugepage_size == GiB, "%s", partial_pages[k]);
                ck_assert_msg(!c1->hugepages, "%s", partial_pages[k]);
                ck_assert(spec->hugepages && spec->hugepage_size == GiB);
                ck_assert(spec->hugepages_partial && !spec->hugepage_sizes_differ);
        }
        /* <hugepages/> alone: every cell in the host's default size; a <page> without a nodeset backs the
         * cells no other names */
        {
                g_autoptr(DomainSpec) all = partial_spec("");
                g_autoptr(DomainSpec) rest = partial_spec("<page size='2' unit='M'/><page size='1' unit='G' "
                                                          "nodeset='0'/>");
                ck_assert(all->hugepages && !all->hugepages_partial && all->hugepage_size == 0);
                ck_assert(g_array_index(all->cells, DomainCell, 1).hugepages);
                ck_assert(rest->hugepages && !rest->hugepages_partial && rest->hugepage_sizes_differ);
                ck_assert_uint_eq(g_array_index(rest->cells, DomainCell, 1).hugepage_size, 2 * MiB);
        }
}
END_TEST

/* On spr-snc2 (a pool of sixteen 1 GiB pages and 103 GiB of ordinary memory per node, 8 cores each) the
 * guest above fits node 0: 4 GiB from its pool, 32 GiB of its ordinary memory. The ledger holds each in
 * its own kind, the other nodes' pools stay free, and the reason says how much is in hugepages. */
START_TEST(test_cell_without_page_is_ordinary_memory)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");

        for (unsigned k = 0; k < G_N_ELEMENTS(partial_pages); k++) {
                g_autoptr(DomainSpec) spec = partial_spec(partial_pages[k]);
                g_autoptr(Ledger) l = ledger_new(t);
                g_auto(RequestShape) shape = {0};
                PlacementParams params = test_params(POLICY_EXPLICIT);
                PlacementRequest req = {.name = "hpbig", .vcpus = 4, .memory = 36 * GiB};
                Plan *plan;

                domain_request_shape(spec, t, &req, &shape);
                plan = policy_place(t, l, &req, &params);
                ck_assert_msg(plan->result == PLAN_PLACED, "%s", plan->reason);
                ck_assert_msg(cpuset_count(plan->nodes) == 1 && cpuset_has(plan->nodes, 0), "%s",
                              plan->reason);
                ck_assert_uint_eq(plan->node_memory[0], 36 * GiB);
                ck_assert_msg(strstr(plan->reason, "16.0 GiB in 1.0 GiB hugepages and 103.2 GiB of ordinary "
                                                   "memory free for 36.0 GiB (4.0 GiB of it in 1.0 GiB "
                                                   "hugepages)") &&
                                  !strstr(plan->reason, "differ"),
                              "%s", plan->reason);
                ck_assert_int_eq(ledger_commit(l, "hpbig", plan), 0);
                ck_assert_uint_eq(ledger_node_hugepages(l, 0, GiB), 4 * GiB);
                ck_assert_uint_eq(ledger_node_memory(l, 0), 32 * GiB);
                for (unsigned n = 1; n < t->nnodes; n++) {
                        ck_assert_uint_eq(ledger_node_hugepages(l, n, GiB), 0);
                        ck_assert_uint_eq(ledger_node_memory(l, n), 0);
                }
        }
}
END_TEST

/* Node 0's pool taken by another guest: the sum of its free pool and ordinary memory would still hold the
 * guest, but its hugepage cell would not find a page there. Fit=pack would take the fullest node (0) that
 * has the room: the guest goes to a node whose pool has room, its cells together. */
START_TEST(test_partial_pages_need_pool_room)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(DomainSpec) spec = partial_spec(partial_pages[0]);
        g_auto(RequestShape) shape = {0};
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest full = {.name = "full", .vcpus = 1, .memory = 16 * GiB, .hugepage_size = GiB};
        PlacementRequest req = {.name = "hpbig", .vcpus = 4, .memory = 36 * GiB};
        Plan *first, *plan;

        params.fit = FIT_PACK;
        first = policy_place(t, l, &full, &params);
        ck_assert_msg(cpuset_has(first->nodes, 0), "%s", first->reason);
        ck_assert_int_eq(ledger_commit(l, "full", first), 0);
        ck_assert_uint_eq(ledger_node_free_hugepages(l, 0, GiB), 0);
        domain_request_shape(spec, t, &req, &shape);
        plan = policy_place(t, l, &req, &params);
        ck_assert_msg(plan->result == PLAN_PLACED && cpuset_count(plan->nodes) == 1 &&
                          !cpuset_has(plan->nodes, 0),
                      "%s", plan->reason);
        ck_assert_int_eq(ledger_commit(l, "hpbig", plan), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, GiB), 16 * GiB);
}
END_TEST

/* On a host without 1 GiB pools (xeon-2s-smt) the guest's hugepage cell cannot be backed anywhere: it is
 * unplaceable, not overcommitted as if sharing cores made room, and the reason gives each kind's room. */
START_TEST(test_partial_pages_without_pool_unplaceable)
{
        g_autofree char *path = test_topology_path("xeon-2s-smt.xml");
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(DomainSpec) spec = partial_spec(partial_pages[0]);
        g_auto(RequestShape) shape = {0};
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "hpbig", .vcpus = 4, .memory = 36 * GiB};
        g_autoptr(Plan) plan = NULL;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        g_autoptr(Ledger) l = ledger_new(t);
        domain_request_shape(spec, t, &req, &shape);
        plan = policy_place(t, l, &req, &params);
        ck_assert_msg(plan->result == PLAN_UNPLACEABLE &&
                          strstr(plan->reason, "(0 B in 1.0 GiB hugepages and ") &&
                          strstr(plan->reason, "of ordinary memory free on the whole host"),
                      "%s: %s", plan_result_to_string(plan->result), plan->reason);
}
END_TEST

/* A guest whose hugepage cell needs the pools of several nodes, beside a small cell of ordinary memory: a
 * node set's pools, not its two kinds of memory together, say which of its nodes the guest needs. */
static DomainSpec *pool_spread_spec(unsigned vcpus, unsigned page_gib)
{
        g_autofree char *xml = g_strdup_printf(
            "<domain type='kvm'><name>spread</name><vcpu>%u</vcpu><memoryBacking><hugepages>"
            "<page size='1' unit='GiB'/><page size='4' unit='KiB' nodeset='1'/></hugepages></memoryBacking>"
            "<cpu><numa><cell id='0' cpus='0-%u' memory='%u' unit='GiB'/><cell id='1' cpus='%u' memory='8' "
            "unit='KiB'/></numa></cpu></domain>",
            vcpus, vcpus - 2, page_gib, vcpus - 1);
        g_autofree char *error = NULL;
        DomainSpec *spec = NULL;

        ck_assert_msg(domain_xml_parse(xml, &spec, &error) == 0, "%s", error);
        return spec;
}

/* What each node's pool holds of the plan is within its free pages. */
static void assert_pages_within_pools(const Topology *t, const Ledger *l, const Plan *plan)
{
        for (unsigned n = 0; n < t->nnodes; n++)
                ck_assert_msg(plan_node_pages(plan, n) <= ledger_node_free_hugepages(l, n, GiB),
                              "node %u: %" PRIu64 " bytes in pages, %" PRIu64 " free: %s", n,
                              plan_node_pages(plan, n), ledger_node_free_hugepages(l, n, GiB), plan->reason);
}

/* 50 GiB of 1 GiB pages fit only the pools of all four nodes of spr-snc2 (16 GiB each): one node's
 * ordinary memory holding as much does not make the other nodes idle. */
START_TEST(test_partial_pages_set_spans_pools)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(DomainSpec) spec = pool_spread_spec(8, 50);
        g_auto(RequestShape) shape = {0};
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "spread", .vcpus = 8, .memory = 50 * GiB + 8192};
        g_autoptr(Plan) plan = NULL;

        domain_request_shape(spec, t, &req, &shape);
        plan = policy_place(t, l, &req, &params);
        ck_assert_msg(plan->result == PLAN_PLACED && cpuset_count(plan->nodes) == 4, "%s: %s",
                      plan_result_to_string(plan->result), plan->reason);
        assert_pages_within_pools(t, l, plan);
}
END_TEST

/* Every core taken: overcommitted, the guest still goes to a set whose pools hold its hugepage cell, not
 * to the nearest node whose pool and ordinary memory hold as much together. */
START_TEST(test_partial_pages_overcommit_spans_pools)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(DomainSpec) spec = pool_spread_spec(4, 20);
        g_auto(RequestShape) shape = {0};
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "spread", .vcpus = 4, .memory = 20 * GiB + 8192};
        g_autoptr(Plan) plan = NULL;

        for (unsigned i = 0; i < 4; i++) {
                g_autofree char *name = g_strdup_printf("busy%u", i);
                PlacementRequest busy = {.name = name, .vcpus = 16, .memory = GiB};
                Plan *p = policy_place(t, l, &busy, &params);
                ck_assert_int_eq(ledger_commit(l, name, p), 0);
        }
        domain_request_shape(spec, t, &req, &shape);
        plan = policy_place(t, l, &req, &params);
        ck_assert_msg(plan->result == PLAN_OVERCOMMITTED && cpuset_count(plan->nodes) >= 2, "%s: %s",
                      plan_result_to_string(plan->result), plan->reason);
        assert_pages_within_pools(t, l, plan);
}
END_TEST

/* Pins made by hand on such a guest: its ordinary cell is held in ordinary memory, its other cell in the
 * pool, as the daemon counts it again after a restart. */
START_TEST(test_adopted_partial_pages_by_kind)
{
        g_autoptr(Topology) t = load_host("spr-snc2.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(DomainSpec) spec = partial_spec(partial_pages[0]);
        g_auto(RequestShape) shape = {0};
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "hand", .vcpus = 4, .memory = 36 * GiB};
        CpuSet *pins[4];
        Plan *p;

        domain_request_shape(spec, t, &req, &shape);
        for (unsigned i = 0; i < 4; i++) {
                pins[i] = cpuset_new();
                cpuset_add(pins[i], 2 * i); /* node 0 */
        }
        p = policy_adopt(t, l, &req, pins, &params);
        for (unsigned i = 0; i < 4; i++)
                cpuset_free(pins[i]);
        ck_assert_int_eq(ledger_commit(l, "hand", p), 0);
        ck_assert_uint_eq(ledger_node_hugepages(l, 0, GiB), 4 * GiB);
        ck_assert_uint_eq(ledger_node_memory(l, 0), 32 * GiB);
}
END_TEST

/* A random guest of 1-4 cells, each backed by a <page> naming it (1 GiB, 2 MiB or the 4 KiB base page), by
 * the <page> without a nodeset, or by ordinary memory, some bound by a <memnode>. */
static DomainSpec *random_cells_spec(GRand *r, unsigned i, const Topology *t)
{
        static const char *const sizes[] = {"size='1' unit='GiB'", "size='2' unit='MiB'",
                                            "size='4' unit='KiB'"};
        unsigned ncells = (unsigned)g_rand_int_range(r, 1, 5);
        g_autoptr(GString) xml = g_string_new(NULL), pages = g_string_new(NULL), cells = g_string_new(NULL),
                           memnodes = g_string_new(NULL);
        g_autofree char *error = NULL;
        DomainSpec *spec = NULL;

        if (g_rand_boolean(r))
                g_string_append_printf(pages, "<page %s/>", sizes[g_rand_int_range(r, 0, 3)]);
        for (unsigned c = 0; c < ncells; c++) {
                unsigned gib = (unsigned)g_rand_int_range(r, 0, 12);
                int kind = g_rand_int_range(r, 0, 4); /* 3: no <page> names it */
                if (kind < 3)
                        g_string_append_printf(pages, "<page %s nodeset='%u'/>", sizes[kind], c);
                g_string_append_printf(cells, "<cell id='%u' cpus='%u' memory='%u' unit='MiB'/>", c, c,
                                       gib * 1024 + (g_rand_boolean(r) ? 512 : 0));
                if (g_rand_int_range(r, 0, 4) == 0)
                        g_string_append_printf(memnodes, "<memnode cellid='%u' mode='%s' nodeset='%u'/>", c,
                                               g_rand_boolean(r) ? "strict" : "preferred",
                                               t->nodes[g_rand_int_range(r, 0, (gint32)t->nnodes)].os_index);
        }
        g_string_append_printf(
            xml,
            "<domain type='kvm'><name>g%u</name><vcpu>%u</vcpu><memoryBacking><hugepages>%s"
            "</hugepages></memoryBacking>%s%s%s<cpu><numa>%s</numa></cpu></domain>",
            i, ncells, pages->str, memnodes->len ? "<numatune>" : "", memnodes->str,
            memnodes->len ? "</numatune>" : "", cells->str);
        ck_assert_msg(domain_xml_parse(xml->str, &spec, &error) == 0, "%s: %s", xml->str, error);
        return spec;
}

/* The ledger's ordinary memory per node and every pool's held bytes, in one array. */
static GArray *ledger_snapshot(const Topology *t, const Ledger *l)
{
        GArray *a = g_array_new(FALSE, FALSE, sizeof(uint64_t));

        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t v = ledger_node_memory(l, n);
                g_array_append_val(a, v);
                for (unsigned k = 0; k < t->nodes[n].nhugepages; k++) {
                        v = ledger_node_hugepages(l, n, t->nodes[n].hugepages[k].size);
                        g_array_append_val(a, v);
                }
        }
        return a;
}

static bool same_snapshot(const GArray *a, const GArray *b)
{
        return a->len == b->len && memcmp(a->data, b->data, sizeof(uint64_t) * a->len) == 0;
}

/* Property: guests whose cells mix hugepages and ordinary memory, placed or adopted as their pins run, each
 * committed in turn: the ledger holds each plan's pages in its pool (the cells of a second page size in that
 * size's) and its ordinary memory in the node's,
 * a release right away gives back exactly what the commit took, and releasing them all in any order
 * leaves the ledger empty. */
START_TEST(test_mixed_cells_ledger_exact)
{
        static const char *const hosts[] = {"spr-snc2.xml", "two-node-hugepages.xml"};
        g_autofree char *path = test_topology_path(hosts[_i % 2]);
        g_autofree char *error = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(GRand) r = g_rand_new_with_seed(1000 + (guint32)_i);
        g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
        PlacementParams params = test_params(_i % 4 < 2 ? POLICY_EXPLICIT : POLICY_COMPAT);
        unsigned mixed = 0;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s", error);
        g_autoptr(Ledger) l = ledger_new(t);
        for (unsigned i = 0; i < 40; i++) {
                g_autoptr(DomainSpec) spec = random_cells_spec(r, i, t);
                g_auto(RequestShape) shape = {0};
                g_autoptr(GArray) before = ledger_snapshot(t, l), after = NULL, released = NULL;
                char *key = g_strdup_printf("g%u", i);
                PlacementRequest req = domain_request(spec, spec);
                Plan *plan;

                domain_request_shape(spec, t, &req, &shape);
                if (g_rand_int_range(r, 0, 3) == 0) { /* pinned by hand where its cells say */
                        CpuSet **pins = g_new0(CpuSet *, MAX(req.vcpus, 1));
                        for (unsigned v = 0; v < req.vcpus; v++) {
                                pins[v] = cpuset_new();
                                cpuset_add(pins[v],
                                           t->pus[g_rand_int_range(r, 0, (gint32)t->npus)].os_index);
                        }
                        plan = policy_adopt(t, l, &req, pins, &params);
                        for (unsigned v = 0; v < req.vcpus; v++)
                                cpuset_free(pins[v]);
                        g_free(pins);
                } else {
                        plan = policy_place(t, l, &req, &params);
                }
                mixed += plan->node_ordinary != NULL;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        ck_assert_uint_eq(plan_node_pages(plan, n) + plan_node_ordinary(plan, n),
                                          plan->node_memory[n]);
                ck_assert_int_eq(ledger_commit(l, key, plan_copy(plan)), 0);
                after = ledger_snapshot(t, l);
                for (unsigned n = 0, k = 0; n < t->nnodes; n++) {
                        uint64_t *b = &g_array_index(before, uint64_t, k),
                                 *a = &g_array_index(after, uint64_t, k);
                        uint64_t second = plan->second_page_size;
                        ck_assert_uint_eq(a[0] - b[0], second ? 0 : plan_node_ordinary(plan, n));
                        for (unsigned p = 0; p < t->nodes[n].nhugepages; p++) {
                                uint64_t size = t->nodes[n].hugepages[p].size;
                                /* in the whole pages QEMU takes there */
                                ck_assert_uint_eq(
                                    a[1 + p] - b[1 + p],
                                    size == plan->hugepage_size ? plan_node_pool_bytes(plan, n, false)
                                    : second && size == second  ? plan_node_pool_bytes(plan, n, true)
                                                                : 0);
                                ck_assert_uint_eq((a[1 + p] - b[1 + p]) % size, 0);
                                ck_assert_uint_ge(a[1 + p] - b[1 + p],
                                                  size == plan->hugepage_size ? plan_node_pages(plan, n)
                                                  : second && size == second  ? plan_node_ordinary(plan, n)
                                                                              : 0);
                        }
                        k += 1 + t->nodes[n].nhugepages;
                }
                if (g_rand_boolean(r)) {
                        ck_assert_int_eq(ledger_release(l, key), 0);
                        released = ledger_snapshot(t, l);
                        ck_assert_msg(same_snapshot(before, released), "%s: release did not restore", key);
                        ck_assert_int_eq(ledger_commit(l, key, plan_copy(plan)), 0);
                }
                plan_free(plan);
                g_ptr_array_add(keys, key);
        }
        while (keys->len) {
                unsigned k = (unsigned)g_rand_int_range(r, 0, (gint32)keys->len);
                ck_assert_int_eq(ledger_release(l, g_ptr_array_index(keys, k)), 0);
                g_ptr_array_remove_index_fast(keys, k);
        }
        ck_assert(ledger_is_empty(l));
        ck_assert_uint_gt(mixed, 5); /* the guests mixed the two kinds */
}
END_TEST

static Suite *hugepages_suite(void)
{
        Suite *s = suite_create("hugepages");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_loader_reads_pools);
        tcase_add_test(tc, test_page_sizes_per_cell_order_independent);
        tcase_add_test(tc, test_kernel_default_page_size);
        tcase_add_test(tc, test_short_pool_is_unplaceable);
        tcase_add_test(tc, test_spread_in_whole_pages);
        tcase_add_test(tc, test_part_page_goes_where_a_page_is_free);
        tcase_add_test(tc, test_pool_held_in_whole_pages);
        tcase_add_test(tc, test_cells_held_in_whole_pages_each);
        tcase_add_test(tc, test_gib_pages_held_whole);
        tcase_add_test(tc, test_whole_cells_held_on_their_nodes);
        tcase_add_test(tc, test_cells_fit_in_whole_pages_each);
        tcase_add_test(tc, test_cells_short_in_whole_pages_unplaceable);
        tcase_add_test(tc, test_bound_cells_short_in_whole_pages_said);
        tcase_add_test(tc, test_gib_cells_fit_in_whole_pages);
        tcase_add_test(tc, test_empty_cell_takes_no_page);
        tcase_add_test(tc, test_spilled_cell_counted_in_whole_pages);
        tcase_add_test(tc, test_cells_packed_in_whole_pages);
        tcase_add_test(tc, test_guest_order_keeps_whole_pages);
        tcase_add_test(tc, test_partial_cells_short_in_whole_pages);
        tcase_add_test(tc, test_no_pool_of_that_size);
        tcase_add_test(tc, test_bound_beyond_pool_is_said);
        tcase_add_test(tc, test_cell_bound_beyond_pool_is_said);
        tcase_add_test(tc, test_cell_bound_unplaceable_says_host_free);
        tcase_add_test(tc, test_bound_to_node_without_pool);
        tcase_add_test(tc, test_bound_to_pool_only_node);
        tcase_add_test(tc, test_general_memory_apart_from_pools);
        tcase_add_test(tc, test_adopted_pins_keep_memory_in_pool);
        tcase_add_test(tc, test_page_nodeset_backs_named_cells_only);
        tcase_add_test(tc, test_partial_pages_set_spans_pools);
        tcase_add_test(tc, test_partial_pages_overcommit_spans_pools);
        tcase_add_loop_test(tc, test_mixed_cells_ledger_exact, 0, 8);
        tcase_add_test(tc, test_cell_without_page_is_ordinary_memory);
        tcase_add_test(tc, test_adopted_partial_pages_by_kind);
        tcase_add_test(tc, test_partial_pages_need_pool_room);
        tcase_add_test(tc, test_partial_pages_without_pool_unplaceable);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(hugepages_suite)
