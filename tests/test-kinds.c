/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Memory kinds (GPU memory, HBM, CXL) and core kinds (P/E, big/LITTLE) on hosts of the corpus. */
#include "test-util.h"
#include "test-policy-util.h"
#include "domain-xml.h"
#include "metadata.h"
#include "topology-load.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static const TopoCore *vcpu_core(const Topology *t, const Plan *p, unsigned v)
{
        ck_assert_int_ge(p->vcpu_pu[v], 0);
        return &t->cores[t->pus[p->vcpu_pu[v]].core];
}

static uint64_t memory_of_kind(const Topology *t, const Plan *p, NodeKind kind)
{
        uint64_t sum = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                if (t->nodes[n].kind == kind)
                        sum += p->node_memory[n];
        return sum;
}

#define ck_assert_reason(p, needle)                                                                         \
        ck_assert_msg(strstr((p)->reason, (needle)), "reason '%s' lacks '%s'", (p)->reason, (needle))

START_TEST(test_node_kinds_loaded)
{
        g_autoptr(Topology) p9 = test_topology_load("power9-gpu.xml");
        g_autoptr(Topology) knl = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Topology) cxl = test_topology_load("cxl-expander.xml");

        for (unsigned n = 0; n < p9->nnodes; n++)
                ck_assert_int_eq(p9->nodes[n].kind, n < 2 ? NODE_KIND_DRAM : NODE_KIND_GPU);
        for (unsigned n = 0; n < knl->nnodes; n++) {
                ck_assert_int_eq(knl->nodes[n].kind, n % 2 ? NODE_KIND_HBM : NODE_KIND_DRAM);
                /* each cluster's cores belong to its DRAM node, not its MCDRAM */
                ck_assert_uint_eq(knl->nodes[n].ncores, n % 2 ? 0 : 4);
        }
        ck_assert_int_eq(cxl->nodes[2].kind, NODE_KIND_CXL);
}
END_TEST

/* POWER9 with GPU memory as NUMA nodes: once DRAM is full, a domain is not given GPU memory. */
START_TEST(test_never_gpu_memory)
{
        g_autoptr(Topology) t = test_topology_load("power9-gpu.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        test_place(t, l, &params, "a", 2, 235 * GiB);
        test_place(t, l, &params, "b", 2, 235 * GiB);
        p = test_place(t, l, &params, "c", 2, 12 * GiB);
        ck_assert_uint_eq(memory_of_kind(t, p, NODE_KIND_GPU), 0);
        ck_assert_int_eq(p->result, PLAN_UNPLACEABLE);
        ck_assert_reason(p, "GPU memory (nodes 2-5) is never given to domains");
        /* even when lower tiers are opened to everything */
        params.memory_tiers = ~0u;
        p = test_place(t, l, &params, "d", 2, 1 * GiB);
        ck_assert_uint_eq(memory_of_kind(t, p, NODE_KIND_GPU), 0);
}
END_TEST

/* A CXL expander nearer to socket 0 than socket 1's DRAM: a domain too big for node 0 goes to DRAM on
 * both sockets, not to CXL; with MemoryTiers=cxl it may use the nearer CXL memory. */
START_TEST(test_cxl_lower_tier)
{
        g_autoptr(Topology) t = test_topology_load("cxl-expander.xml");
        PlacementParams params = test_params(POLICY_EXPLICIT);

        {
                g_autoptr(Ledger) l = ledger_new(t);
                const Plan *p = test_place(t, l, &params, "big", 4, 40 * GiB);

                ck_assert_int_eq(p->result, PLAN_PLACED);
                ck_assert_uint_eq(memory_of_kind(t, p, NODE_KIND_CXL), 0);
                ck_assert_uint_eq(memory_of_kind(t, p, NODE_KIND_DRAM), 40 * GiB);
                ck_assert(!strstr(p->reason, "cxl"));
        }
        {
                g_autoptr(Ledger) l = ledger_new(t);
                const Plan *p;

                params.memory_tiers = 1u << NODE_KIND_CXL;
                p = test_place(t, l, &params, "big", 4, 40 * GiB);
                ck_assert_int_eq(p->result, PLAN_PLACED);
                ck_assert_uint_gt(memory_of_kind(t, p, NODE_KIND_CXL), 0);
                ck_assert_reason(p, "(cxl, 14 from its vCPUs): a first tier by MemoryTiers=");
        }
}
END_TEST

/* When no set of DRAM nodes has room, the lower tier is used, and the reason says so. */
START_TEST(test_lower_tier_last_resort)
{
        g_autoptr(Topology) t = test_topology_load("cxl-expander.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p = test_place(t, l, &params, "huge", 4, 80 * GiB);

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_gt(memory_of_kind(t, p, NODE_KIND_CXL), 0);
        ck_assert_reason(p, "a lower tier of memory, used since no set of DRAM nodes has room");
}
END_TEST

/* Persistent memory onlined as kmem DAX (hwloc 2.9 turns its DAXType into the NVM subtype): nearer than
 * the other socket's DRAM, yet a domain too big for its node's DRAM gets the other socket's DRAM. */
START_TEST(test_pmem_dax)
{
        g_autoptr(Topology) t = test_topology_load("pmem-dax.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        ck_assert_int_eq(t->nodes[1].kind, NODE_KIND_NVM);
        ck_assert_int_eq(t->nodes[3].kind, NODE_KIND_NVM);
        p = test_place(t, l, &params, "a", 4, 40 * GiB);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(memory_of_kind(t, p, NODE_KIND_NVM), 0);
}
END_TEST

/* Persistent memory of the other socket (node 3, local to node 2's CPUs) taken by a guest whose vCPUs run
 * on node 0, both sockets' DRAM and node 0's own NVM full: the reason gave only "(nvm, 28 from its
 * vCPUs)", as it would for a far node of one package; it says the memory is in the other package. Its
 * own socket's NVM is not said so. */
START_TEST(test_lower_tier_other_package_said)
{
        g_autoptr(Topology) t = test_topology_load("pmem-dax.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        test_hold(t, l, "dram0", 0, 1, 0, t->nodes[0].memory);
        test_hold(t, l, "dram2", 2, 4, 2, t->nodes[2].memory);
        test_hold(t, l, "nvm1", 0, 0, 1, t->nodes[1].memory - 1 * GiB);
        p = test_place(t, l, &params, "a", 2, 8 * GiB);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(p->node_memory[3], 7 * GiB);
        ck_assert_reason(p, "on node 3 (nvm, 28 from its vCPUs, in the other package)");
        ck_assert_reason(p, "on node 1 (nvm, 17 from its vCPUs)");
}
END_TEST

/* KNL SNC4 flat: MCDRAM holds memory only once every DRAM node is short of it. */
START_TEST(test_knl_mcdram)
{
        g_autoptr(Topology) t = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p = test_place(t, l, &params, "a", 4, 20 * GiB);

        ck_assert_uint_eq(memory_of_kind(t, p, NODE_KIND_HBM), 0);
        p = test_place(t, l, &params, "b", 4, 80 * GiB);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_gt(memory_of_kind(t, p, NODE_KIND_HBM), 0);
        /* how far each lower-tier node is from the vCPUs: a cluster's own MCDRAM or another's */
        ck_assert_reason(p, "on node 3 (hbm, 31 to 41 from its vCPUs)");
}
END_TEST

/* <vcpu cpuset> keeps a guest to cluster 0 of a KNL in SNC4 flat mode, whose DRAM another guest has nearly
 * filled: what node 0 lacks spills to the DRAM of the other clusters (21 away) as it does on a host without
 * MCDRAM, not onto MCDRAM nodes 31 and 41 away for want of "a set of DRAM nodes with room", which the
 * other clusters had (the cpuset left them out of every set, the MCDRAM nodes, with no CPU, not). */
START_TEST(test_cpuset_spill_stays_in_first_tier)
{
        g_autoptr(Topology) t = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) first = NULL, rest = NULL;
        PlacementRequest fill = {.name = "fill", .vcpus = 1, .memory = 20 * GiB},
                         g = {.name = "g", .vcpus = 2, .memory = 8 * GiB};
        g_autoptr(Plan) p = NULL;

        ck_assert_int_eq(cpuset_parse("0-3", &first, NULL), 0);
        ck_assert_int_eq(cpuset_parse("4-15", &rest, NULL), 0);
        fill.allowed_cpus = first;
        g.allowed_cpus = rest;
        ck_assert_int_eq(ledger_commit(l, "fill", policy_place(t, l, &fill, &params)), 0);
        p = policy_place(t, l, &g, &params);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_msg(memory_of_kind(t, p, NODE_KIND_HBM) == 0, "%s", p->reason);
        ck_assert_reason(p, "its <vcpu cpuset> binds no memory");
        ck_assert_msg(!strstr(p->reason, "no set of DRAM nodes has room"), "%s", p->reason);
}
END_TEST

START_TEST(test_core_kinds_loaded)
{
        g_autoptr(Topology) al = test_topology_load("alder-lake.xml");
        g_autoptr(Topology) ar = test_topology_load("arrow-lake.xml");
        g_autoptr(Topology) xeon = test_topology_load("xeon-2s-smt.xml");
        unsigned p = 0, e = 0, no_l3 = 0;

        ck_assert_uint_eq(al->ncore_kinds, 2);
        ck_assert_str_eq(al->core_kind_names[0], "IntelCore");
        ck_assert_uint_eq(al->core_kind_max_mhz[0], 5400);
        for (unsigned c = 0; c < al->ncores; c++) {
                p += al->cores[c].kind_rank == 0;
                e += al->cores[c].kind_rank == 1;
        }
        ck_assert_uint_eq(p, 4);
        ck_assert_uint_eq(e, 8);
        /* E-cores share an L2 by modules of four, P-cores have their own */
        ck_assert_uint_eq(al->cores[4].l2, al->cores[7].l2);
        ck_assert_uint_ne(al->cores[7].l2, al->cores[8].l2);
        ck_assert_uint_ne(al->cores[0].l2, al->cores[1].l2);

        ck_assert_uint_eq(ar->ncore_kinds, 3);
        for (unsigned c = 0; c < ar->ncores; c++) {
                no_l3 += ar->cores[c].no_l3;
                ck_assert(!ar->cores[c].no_l3 || ar->cores[c].kind_rank == 2);
        }
        ck_assert_uint_eq(no_l3, 2);
        ck_assert_uint_eq(xeon->ncore_kinds, 0);
}
END_TEST

/* Arrow Lake: the first small domains get P-cores, not the low-power cores outside the L3. */
START_TEST(test_arrow_lake_p_cores_first)
{
        g_autoptr(Topology) t = test_topology_load("arrow-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);

        for (unsigned i = 0; i < 14; i++) {
                g_autofree char *name = g_strdup_printf("vm%u", i);
                const Plan *p = test_place(t, l, &params, name, 1, 1 * GiB);
                const TopoCore *c = vcpu_core(t, p, 0);

                /* 4 P-cores, then the 8 E-cores, then the 2 low-power ones */
                ck_assert_uint_eq(c->kind_rank, i < 4 ? 0 : i < 12 ? 1 : 2);
                ck_assert(c->no_l3 == (i >= 12));
        }
}
END_TEST

/* NVIDIA GB10: big cores (numbered after the little ones) are taken first. */
START_TEST(test_gb10_big_first)
{
        g_autoptr(Topology) t = test_topology_load("gb10.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p = test_place(t, l, &params, "a", 4, 4 * GiB);

        for (unsigned v = 0; v < 4; v++)
                ck_assert_uint_eq(vcpu_core(t, p, v)->kind_rank, 0);
        /* one cluster (L3) holds them */
        for (unsigned v = 1; v < 4; v++)
                ck_assert_uint_eq(vcpu_core(t, p, v)->l3, vcpu_core(t, p, 0)->l3);
}
END_TEST

/* Alder Lake: with 2 P-cores left, a 4-vCPU domain goes whole to one E-core module, not 2 P + 2 E. */
START_TEST(test_alder_lake_one_kind)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        p = test_place(t, l, &params, "a", 2, 1 * GiB);
        ck_assert_uint_eq(vcpu_core(t, p, 0)->kind_rank, 0);
        ck_assert_uint_eq(vcpu_core(t, p, 1)->kind_rank, 0);
        p = test_place(t, l, &params, "b", 4, 1 * GiB);
        for (unsigned v = 0; v < 4; v++) {
                ck_assert_uint_eq(vcpu_core(t, p, v)->kind_rank, 1);
                ck_assert_uint_eq(vcpu_core(t, p, v)->l2, vcpu_core(t, p, 0)->l2);
        }
        /* the 2 P-cores left still go to a 2-vCPU domain */
        p = test_place(t, l, &params, "c", 2, 1 * GiB);
        ck_assert_uint_eq(vcpu_core(t, p, 0)->kind_rank, 0);
        ck_assert_uint_eq(vcpu_core(t, p, 1)->kind_rank, 0);
}
END_TEST

/* Alder Lake: a domain on E-cores is told so, and why, when P-cores are free; one on P-cores is told
 * nothing; one whose vCPUs span both kinds is told how many run on each. */
START_TEST(test_alder_lake_kind_said)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        p = test_place(t, l, &params, "a", 2, 1 * GiB);
        ck_assert_msg(!strstr(p->reason, "IntelCore") && !strstr(p->reason, "IntelAtom"), "%s", p->reason);
        p = test_place(t, l, &params, "b", 4, 1 * GiB);
        ck_assert_reason(p, "its vCPUs run on IntelAtom cores, not on the 2 free IntelCore cores");
        p = test_place(t, l, &params, "c", 6, 1 * GiB);
        ck_assert_reason(p, "2 of its vCPUs run on IntelCore cores, 4 on IntelAtom cores");
        ledger_release(l, "c");
        test_place(t, l, &params, "d", 2, 1 * GiB); /* the last P-cores */
        p = test_place(t, l, &params, "e", 1, 1 * GiB);
        ck_assert_reason(p, "its vCPU runs on an IntelAtom core: no IntelCore core it may use is free");
}
END_TEST

/* Kinds hwloc lists with no core of their own (each of their CPUs shares a core with a less performant
 * kind's, and such a core counts as the least performant): a domain on the only kind the cores have gets
 * no note that a more performant kind had no free core. */
START_TEST(test_kind_without_cores_not_said)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        for (unsigned c = 0; c < t->ncores; c++)
                t->cores[c].kind_rank = 1;
        p = test_place(t, l, &params, "a", 1, 1 * GiB);
        ck_assert_msg(!strstr(p->reason, "IntelCore") && !strstr(p->reason, "IntelAtom"), "%s", p->reason);
        p = test_place(t, l, &params, "b", 4, 1 * GiB);
        ck_assert_msg(!strstr(p->reason, "IntelCore") && !strstr(p->reason, "IntelAtom"), "%s", p->reason);
}
END_TEST

/* A kind's name is the topology's text (an XML export's CoreType): the reason escapes it, so that a
 * control sequence in it does not reach the terminal that prints the decision. */
START_TEST(test_kind_name_escaped)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        g_free(t->core_kind_names[1]);
        t->core_kind_names[1] = g_strdup("Atom\x1b]0;PWNED\a\x1b[2J");
        test_place(t, l, &params, "a", 4, 1 * GiB); /* the P-cores */
        p = test_place(t, l, &params, "b", 1, 1 * GiB);
        ck_assert_reason(p, "its vCPU runs on an Atom\\x1b]0;PWNED\\x07\\x1b[2J core");
        ck_assert_msg(!strchr(p->reason, '\x1b') && !strchr(p->reason, '\a'), "%s", p->reason);
}
END_TEST

/* The same with two guest cells of 2 vCPUs on the one node: the kind is chosen for the domain's share of
 * the node, not per cell (cell 0 on the 2 P-cores left and cell 1 on E-cores would mix kinds). */
START_TEST(test_alder_lake_one_kind_cells)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) c0 = NULL;
        g_autoptr(CpuSet) c1 = NULL;
        PlacementCell cells[2];
        PlacementRequest req = {.name = "b", .vcpus = 4, .memory = GiB, .cells = cells, .ncells = 2};
        const Plan *c;
        Plan *p;

        ck_assert_int_eq(cpuset_parse("0-1", &c0, NULL), 0);
        ck_assert_int_eq(cpuset_parse("2-3", &c1, NULL), 0);
        cells[0] = (PlacementCell){.id = 0, .vcpus = c0, .memory = GiB / 2};
        cells[1] = (PlacementCell){.id = 1, .vcpus = c1, .memory = GiB / 2};
        test_place(t, l, &params, "a", 2, 1 * GiB);
        p = policy_place(t, l, &req, &params);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        for (unsigned v = 0; v < 4; v++) {
                ck_assert_msg(vcpu_core(t, p, v)->kind_rank == 1, "vCPU %u on kind %u: %s", v,
                              vcpu_core(t, p, v)->kind_rank, p->reason);
                ck_assert_uint_eq(vcpu_core(t, p, v)->l2, vcpu_core(t, p, 0)->l2);
        }
        ck_assert_int_eq(ledger_commit(l, "b", p), 0);
        /* the 2 P-cores left still go to a 2-vCPU domain */
        c = test_place(t, l, &params, "c", 2, 1 * GiB);
        ck_assert_uint_eq(vcpu_core(t, c, 0)->kind_rank, 0);
        ck_assert_uint_eq(vcpu_core(t, c, 1)->kind_rank, 0);
}
END_TEST

/* E-core modules: a module is filled before another is opened. */
START_TEST(test_l2_cluster_fill)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        test_place(t, l, &params, "p", 4, 1 * GiB); /* the P-cores */
        p = test_place(t, l, &params, "a", 3, 1 * GiB);
        ck_assert_uint_eq(vcpu_core(t, p, 0)->l2, vcpu_core(t, p, 2)->l2);
        /* 1 core left in that module, 4 in the other: a 2-vCPU domain takes 2 of the other, unsplit */
        p = test_place(t, l, &params, "b", 2, 1 * GiB);
        ck_assert_uint_eq(vcpu_core(t, p, 0)->l2, vcpu_core(t, p, 1)->l2);
        /* and a 1-vCPU domain the module's last core, leaving 2 whole cores of the other together */
        p = test_place(t, l, &params, "c", 1, 1 * GiB);
        ck_assert_uint_eq(vcpu_core(t, p, 0)->kind_rank, 1);
        {
                const Plan *a = ledger_lookup(l, "a");
                ck_assert_uint_eq(vcpu_core(t, p, 0)->l2, vcpu_core(t, a, 0)->l2);
        }
}
END_TEST

/* CoreKinds=performance-only leaves E-cores to the host; CoreKinds=any takes cores in topology order. */
START_TEST(test_core_kinds_modes)
{
        g_autoptr(Topology) t = test_topology_load("gb10.xml");
        PlacementParams params = test_params(POLICY_EXPLICIT);

        {
                g_autoptr(Ledger) l = ledger_new(t);
                const Plan *p;

                params.core_kinds = CORE_KINDS_PERFORMANCE_ONLY;
                p = test_place(t, l, &params, "a", 12, 4 * GiB);
                ck_assert_int_eq(p->result, PLAN_OVERCOMMITTED);
                for (unsigned v = 0; v < p->nvcpus; v++)
                        ck_assert_uint_eq(vcpu_core(t, p, v)->kind_rank, 0);
        }
        {
                g_autoptr(Ledger) l = ledger_new(t);
                const Plan *p;

                params.core_kinds = CORE_KINDS_ANY;
                p = test_place(t, l, &params, "a", 1, 4 * GiB);
                ck_assert_uint_eq(vcpu_core(t, p, 0)->kind_rank, 1);
        }
}
END_TEST

/* A socket whose node is offline: its CPUs are no node's. A 12-vCPU domain goes to the two real nodes'
 * cores, not to the socket without memory; only when the real nodes are full are those CPUs used, and
 * the reason does not call them a node's. */
START_TEST(test_no_local_node_last)
{
        g_autoptr(Topology) t = test_topology_load("no-local-node-3s.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        unsigned orphan = t->nnodes - 1;
        const Plan *p;

        ck_assert_uint_eq(t->nnodes, 3);
        ck_assert(t->nodes[orphan].no_local_memory);
        ck_assert_uint_eq(t->nodes[0].ncores, 8);
        p = test_place(t, l, &params, "a", 12, 8 * GiB);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert(!cpuset_has(p->nodes, orphan));
        for (unsigned v = 0; v < p->nvcpus; v++)
                ck_assert_uint_ne(vcpu_core(t, p, v)->node, orphan);
        ck_assert_uint_eq(p->node_memory[orphan], 0);
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        test_place(t, l, &params, "a", 8, 8 * GiB);
        /* 8 real cores left: a 10-vCPU domain gets them and only 2 of the CPUs without a node (not an
         * even share), memory on real nodes */
        p = test_place(t, l, &params, "b", 10, 4 * GiB);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        {
                unsigned on_orphan = 0;
                for (unsigned v = 0; v < p->nvcpus; v++)
                        on_orphan += vcpu_core(t, p, v)->node == orphan;
                ck_assert_uint_eq(on_orphan, 2);
        }
        ck_assert_uint_eq(p->node_memory[orphan], 0);
        ck_assert_uint_eq(p->node_memory[0] + p->node_memory[1], 4 * GiB);
        /* node 0 has no free core, node 1 the memory: node 0 takes no part */
        ck_assert_reason(p, "node 1 with CPUs 32-47 (local to no NUMA node)");
        ck_assert(!strstr(p->reason, "1024"));
        /* both real nodes full of cores: the next domain's vCPUs go to the CPUs without a node and its
         * memory to the nearest real node, and the other real node, which takes nothing, is not in its
         * nodes */
        ck_assert_int_eq(ledger_release(l, "a"), 0);
        ck_assert_int_eq(ledger_release(l, "b"), 0);
        test_place(t, l, &params, "a", 8, GiB);
        test_place(t, l, &params, "b", 8, GiB);
        p = test_place(t, l, &params, "c", 4, GiB);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(cpuset_count(p->nodes), 2);
        ck_assert(cpuset_has(p->nodes, orphan));
}
END_TEST

/* A record as libvirt stores it: its elements in placementd's namespace, under a prefix; frees record. */
/* A plan that uses CPUs local to no node is recorded and adopted back as it was (a daemon restart). */
START_TEST(test_no_local_node_metadata)
{
        g_autoptr(Topology) t = test_topology_load("no-local-node-3s.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(DomainSpec) spec = NULL;
        g_autoptr(Plan) back = NULL;
        g_autofree char *xml = NULL, *error = NULL;
        const Plan *p;

        test_place(t, l, &params, "a", 16, 8 * GiB);
        p = test_place(t, l, &params, "b", 4, 4 * GiB);
        ck_assert(cpuset_has(p->nodes, t->nnodes - 1));
        xml = test_domain_with_record("b", "<vcpu>4</vcpu><memory unit='GiB'>4</memory>",
                                      metadata_format(t, p, "placed", MEMORY_BINDING_APPLIED, NULL));
        ck_assert_int_eq(domain_xml_parse(xml, &spec, NULL), 0);
        ck_assert_msg(spec->decision, "%s: %s", xml, spec->decision_error);
        ck_assert_msg(metadata_to_plan(t, spec->decision, "b", 4, NULL, 4 * GiB, &back, &error) == 0, "%s",
                      error);
        ck_assert(cpuset_equal(back->nodes, p->nodes));
        ck_assert_int_eq(memcmp(back->vcpu_pu, p->vcpu_pu, sizeof(int) * 4), 0);
        ck_assert_uint_eq(back->node_memory[t->nnodes - 1], 0);
}
END_TEST

/* Memory bound by the definition to the CXL node (no CPU of its own): the vCPUs run on the CPU node
 * nearest to it (node 0, distance 14; node 1 is 26 away), even when node 1 is idler; the memory is counted
 * on the CXL node, whatever MemoryTiers= says. When node 0 has too few free cores left, node 1's free cores
 * take them: a core per vCPU first, the memory stays where it is bound. */
START_TEST(test_memory_bound_to_cpuless_node)
{
        g_autoptr(Topology) t = test_topology_load("cxl-expander.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) cxl = cpuset_new();
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "b",
                                .vcpus = 2,
                                .memory = 4 * GiB,
                                .memory_nodes = cxl,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        const Plan *a;

        cpuset_add(cxl, 2);
        a = test_place(t, l, &params, "a", 1, 1 * GiB);
        ck_assert(cpuset_has(a->nodes, 0));
        {
                Plan *p = policy_place(t, l, &req, &params); /* the ledger takes it */
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                ck_assert_msg(cpuset_count(p->nodes) == 1 && cpuset_has(p->nodes, 0), "%s", p->reason);
                ck_assert_uint_eq(p->node_memory[2], 4 * GiB);
                ck_assert_uint_eq(p->node_memory[0] + p->node_memory[1], 0);
                ck_assert_reason(p,
                                 "memory-only nodes, cores taken on node 0, the nearest to them with CPUs");
                ck_assert_int_eq(ledger_commit(l, "b", p), 0);
        }
        {
                /* node 0 has 1 free core for 3 vCPUs; node 1 has 4 */
                req.name = "c";
                req.vcpus = 3;
                g_autoptr(Plan) p = policy_place(t, l, &req, &params);
                ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
                ck_assert_msg(cpuset_count(p->nodes) == 1 && cpuset_has(p->nodes, 1), "%s", p->reason);
                ck_assert_uint_eq(p->shared_vcpus, 0);
                ck_assert_uint_eq(p->node_memory[2], 4 * GiB);
                ck_assert_reason(
                    p, "cores taken on node 1, the nearest to them with free cores for every vCPU");
        }
}
END_TEST

/* The same under compat: node 0 keeps 4 free threads for 6 vCPUs, node 1 has 8: the vCPUs take node 1's
 * threads instead of sharing node 0's (compat's rule: a set qualifies by free threads and memory). */
START_TEST(test_memory_bound_to_cpuless_node_compat)
{
        g_autoptr(Topology) t = test_topology_load("cxl-expander.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) cxl = cpuset_new();
        PlacementParams params = test_params(POLICY_COMPAT);
        PlacementRequest req = {.name = "b",
                                .vcpus = 6,
                                .memory = 4 * GiB,
                                .memory_nodes = cxl,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        g_autoptr(Plan) p = NULL;
        const Plan *a;

        cpuset_add(cxl, 2);
        a = test_place(t, l, &params, "a", 4, 1 * GiB);
        ck_assert(cpuset_count(a->nodes) == 1 && cpuset_has(a->nodes, 0));
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(cpuset_count(p->nodes) == 1 && cpuset_has(p->nodes, 1), "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[2], 4 * GiB);
        ck_assert_reason(p, "cores taken on node 1, the nearest to them with free CPUs for every vCPU");
        /* with node 0 empty, its 8 threads hold them: the nearest node to the memory wins */
        ledger_release(l, "a");
        g_clear_pointer(&p, plan_free);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(cpuset_count(p->nodes) == 1 && cpuset_has(p->nodes, 0), "%s", p->reason);
}
END_TEST

/* More vCPUs than the host has cores: overcommitted on the set with the most free cores, both nodes,
 * rather than 12 vCPUs on node 0's 4 cores. */
START_TEST(test_memory_bound_to_cpuless_node_overcommit)
{
        g_autoptr(Topology) t = test_topology_load("cxl-expander.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) cxl = cpuset_new();
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "b",
                                .vcpus = 12,
                                .memory = 4 * GiB,
                                .memory_nodes = cxl,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        g_autoptr(Plan) p = NULL;

        cpuset_add(cxl, 2);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_OVERCOMMITTED, "%s", p->reason);
        ck_assert_msg(cpuset_count(p->nodes) == 2, "%s", p->reason);
        ck_assert_uint_eq(test_max_per_core(t, p), 2);
        ck_assert_uint_eq(p->node_memory[2], 4 * GiB);
}
END_TEST

/* KNL SNC4 flat, memory bound to cluster 0's MCDRAM (node 1): 6 vCPUs on an idle host get a core each,
 * node 0 (the nearest to it, 4 cores) and one more node, instead of sharing node 0's cores. */
START_TEST(test_memory_bound_to_mcdram)
{
        g_autoptr(Topology) t = test_topology_load("knl-snc4-flat.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) mcdram = cpuset_new();
        PlacementParams params = test_params(POLICY_EXPLICIT);
        PlacementRequest req = {.name = "b",
                                .vcpus = 6,
                                .memory = 2 * GiB,
                                .memory_nodes = mcdram,
                                .memory_source = MEMORY_SOURCE_USER,
                                .memory_mode = MEMORY_MODE_STRICT};
        g_autoptr(Plan) p = NULL;

        cpuset_add(mcdram, 1);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_uint_eq(test_max_per_core(t, p), 1);
        ck_assert_msg(cpuset_count(p->nodes) == 2 && cpuset_has(p->nodes, 0), "%s", p->reason);
        ck_assert_uint_eq(p->node_memory[1], 2 * GiB);
        /* bound to cluster 1's MCDRAM (node 3), 4 vCPUs fit node 2 alone, the nearest to it */
        cpuset_clear(mcdram);
        cpuset_add(mcdram, 3);
        req.vcpus = 4;
        g_clear_pointer(&p, plan_free);
        p = policy_place(t, l, &req, &params);
        ck_assert_msg(p->result == PLAN_PLACED, "%s", p->reason);
        ck_assert_msg(cpuset_count(p->nodes) == 1 && cpuset_has(p->nodes, 2), "%s", p->reason);
}
END_TEST

/* ARM clusters (hwloc's Group of subtype Cluster; an L2 per core): the cluster groups cores as a shared L2
 * would, so a 4-vCPU domain takes the idle cluster whole rather than straddle two */
START_TEST(test_arm_clusters)
{
        g_autoptr(Topology) t = test_topology_load("clusters.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *p;

        ck_assert_uint_eq(t->ncores, 8);
        for (unsigned c = 0; c < 8; c++)
                ck_assert_msg(t->cores[c].l2 == t->cores[c < 4 ? 0 : 4].l2 &&
                                  t->cores[c].l2 != t->cores[c < 4 ? 4 : 0].l2,
                              "core %u in cluster %u", c, t->cores[c].l2);
        test_place(t, l, &params, "a", 1, 1 * GiB);
        p = test_place(t, l, &params, "b", 4, 4 * GiB);
        for (unsigned v = 0; v < 4; v++)
                ck_assert_msg(t->pus[p->vcpu_pu[v]].core >= 4, "vCPU %u on core %u", v,
                              t->pus[p->vcpu_pu[v]].core);
}
END_TEST

/* two-node-smt.xml (2 nodes x 16 cores x 2 threads; core 0 is CPUs 0-1) with this allowed cpuset. */
static Topology *two_nodes_allowing(const char *allowed)
{
        g_autofree char *path = test_topology_path("two-node-smt.xml");
        g_autofree char *xml = NULL, *error = NULL,
                        *attr = g_strdup_printf("allowed_cpuset=\"%s\"", allowed);
        g_autofree char *tmp = g_build_filename(g_get_tmp_dir(), "placementd-allowed-XXXXXX.xml", NULL);
        g_autoptr(GString) edited = NULL;
        Topology *t = NULL;
        int fd;

        ck_assert(g_file_get_contents(path, &xml, NULL, NULL));
        edited = g_string_new(xml);
        ck_assert_uint_eq(g_string_replace(edited, "allowed_cpuset=\"0xffffffff,0xffffffff\"", attr, 1), 1);
        fd = g_mkstemp(tmp);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(g_file_set_contents(tmp, edited->str, -1, NULL));
        ck_assert_msg(topology_load(tmp, &t, &error) == 0, "%s", error);
        g_unlink(tmp);
        return t;
}

/* CPU 1 kept by the host: core 0 is used last, and the reason says what a vCPU there runs beside */
START_TEST(test_host_thread_cores_last)
{
        g_autoptr(Topology) t = two_nodes_allowing("0xffffffff,0xfffffffd");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(CpuSet) node0 = cpuset_new();
        g_autoptr(CpuSet) cpus0 = cpuset_new();
        PlacementRequest req = {.name = "b",
                                .vcpus = 16,
                                .memory = GiB,
                                .allowed_cpus = cpus0,
                                .memory_nodes = node0,
                                .memory_source = MEMORY_SOURCE_USER};
        g_autoptr(Plan) b = NULL;
        const Plan *a;

        ck_assert(t->cores[0].host_thread && !t->cores[1].host_thread);
        a = test_place(t, l, &params, "a", 1, GiB);
        ck_assert_msg(t->pus[a->vcpu_pu[0]].core != 0, "%s", a->reason);
        ledger_release(l, "a");
        /* node 0's 16 cores for 16 vCPUs kept there by <vcpu cpuset> (a memory binding alone would let
         * the 16th take a core of node 1): one runs beside the host's CPU 1 */
        cpuset_add(node0, 0);
        for (unsigned p = 0; p < t->npus; p++)
                if (t->cores[t->pus[p].core].node == 0)
                        cpuset_add(cpus0, t->pus[p].os_index);
        b = policy_place(t, l, &req, &params);
        ck_assert_reason(b, "beside CPUs the host keeps (outside the guests' cpuset)");
}
END_TEST

/* A host whose guests get one thread of every core (the host keeps every sibling): those cores are the
 * guests' cores, each a whole one for a vCPU, not cores beside host work to use last */
START_TEST(test_guests_get_one_thread_per_core)
{
        g_autoptr(Topology) t = two_nodes_allowing("0x55555555,0x55555555");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        const Plan *a, *b;

        for (unsigned c = 0; c < t->ncores; c++)
                ck_assert_msg(!t->cores[c].host_thread, "core %u", c);
        a = test_place(t, l, &params, "a", 8, 4 * GiB);
        b = test_place(t, l, &params, "b", 8, 4 * GiB);
        ck_assert_msg(a->result == PLAN_PLACED && b->result == PLAN_PLACED, "%s / %s", a->reason, b->reason);
        ck_assert_uint_eq(a->shared_vcpus + b->shared_vcpus, 0);
}
END_TEST

static Suite *kinds_suite(void)
{
        Suite *s = suite_create("kinds");
        TCase *memory = tcase_create("memory");
        TCase *cores = tcase_create("cores");

        tcase_add_test(memory, test_node_kinds_loaded);
        tcase_add_test(memory, test_never_gpu_memory);
        tcase_add_test(memory, test_cxl_lower_tier);
        tcase_add_test(memory, test_memory_bound_to_cpuless_node);
        tcase_add_test(memory, test_memory_bound_to_cpuless_node_compat);
        tcase_add_test(memory, test_memory_bound_to_cpuless_node_overcommit);
        tcase_add_test(memory, test_memory_bound_to_mcdram);
        tcase_add_test(memory, test_arm_clusters);
        tcase_add_test(memory, test_host_thread_cores_last);
        tcase_add_test(memory, test_guests_get_one_thread_per_core);
        tcase_add_test(memory, test_lower_tier_last_resort);
        tcase_add_test(memory, test_knl_mcdram);
        tcase_add_test(memory, test_lower_tier_other_package_said);
        tcase_add_test(memory, test_cpuset_spill_stays_in_first_tier);
        tcase_add_test(memory, test_pmem_dax);
        tcase_add_test(cores, test_core_kinds_loaded);
        tcase_add_test(cores, test_arrow_lake_p_cores_first);
        tcase_add_test(cores, test_gb10_big_first);
        tcase_add_test(cores, test_alder_lake_kind_said);
        tcase_add_test(cores, test_kind_name_escaped);
        tcase_add_test(cores, test_kind_without_cores_not_said);
        tcase_add_test(cores, test_alder_lake_one_kind);
        tcase_add_test(cores, test_alder_lake_one_kind_cells);
        tcase_add_test(cores, test_l2_cluster_fill);
        tcase_add_test(cores, test_core_kinds_modes);
        tcase_add_test(cores, test_no_local_node_last);
        tcase_add_test(cores, test_no_local_node_metadata);
        suite_add_tcase(s, memory);
        suite_add_tcase(s, cores);
        return s;
}

TEST_MAIN(kinds_suite)
