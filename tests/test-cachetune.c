/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cache and memory bandwidth allocation (<cputune><cachetune>, <memorytune>): the ids they name are read
 * from the domain XML, found in the host's topology by the kernel's cache id, and the vCPUs kept on the
 * CPUs under those caches, where the reserved ways and bandwidth serve them.
 * tests/topologies/cache-ids.xml: 2 packages of one node, each with 2 L3 caches (ids 0-3, 4 cores x 2
 * threads each: L3 0 holds CPUs 0-7, L3 1 8-15, L3 2 16-23, L3 3 24-31), an L2 per core (id = its first
 * CPU).
 */
#include "test-util.h"

#include <string.h>

#include "domain-request.h"
#include "domain-xml.h"
#include "test-policy-util.h"

#define DOMAIN(name, vcpus, cputune)                                                                        \
        "<domain type='kvm'><name>" name "</name><memory unit='GiB'>2</memory><vcpu>" vcpus "</vcpu>"       \
        "<cputune>" cputune "</cputune><os><type>hvm</type></os></domain>"
#define CACHETUNE(level, id)                                                                                \
        "<cachetune vcpus='0-3'><cache id='" id "' level='" level "' type='both' size='3' unit='MiB'/>"     \
        "</cachetune>"

static char *banks(const DomainSpec *s)
{
        GString *out = g_string_new(NULL);

        for (unsigned i = 0; s->cache_banks && i < s->cache_banks->len; i++) {
                const DomainCacheBank *b = &g_array_index(s->cache_banks, DomainCacheBank, i);
                g_autofree char *vcpus = cpuset_format(b->vcpus);
                g_string_append_printf(out, "%sL%u:%u@%s", i ? " " : "", b->level, b->id, vcpus);
        }
        return g_string_free(out, FALSE);
}

START_TEST(test_parse)
{
        g_autoptr(DomainSpec) a = test_domain_parse(DOMAIN(
            "a", "4",
            "<cachetune vcpus='0-1'><cache id='1' level='3' type='both' size='3' unit='MiB'/>"
            "<cache id='1' level='3' type='code' size='1' unit='MiB'/><monitor level='3' "
            "vcpus='0'/></cachetune>"
            "<cachetune vcpus='2-3'><cache id='6' level='2' type='data' size='256' unit='KiB'/></cachetune>"
            "<memorytune vcpus='0-3'><node id='2' bandwidth='60'/></memorytune>"));
        g_autoptr(DomainSpec) bad = test_domain_parse(
            DOMAIN("b", "2",
                   CACHETUNE("1", "0") CACHETUNE("3", "x") "<cachetune><cache id='0' level='3' type='both' "
                                                           "size='3' unit='MiB'/></cachetune>"));
        g_autoptr(DomainSpec) none = test_domain_parse(DOMAIN("c", "2", ""));
        g_autofree char *text = banks(a);

        /* each cache once for its vCPUs; the bandwidth controller's id is its L3 cache's */
        ck_assert_str_eq(text, "L3:1@0-1 L2:6@2-3 L3:2@0-3");
        /* no level-1 allocation, no such id, no vcpus=: libvirt refuses each */
        ck_assert_ptr_null(bad->cache_banks);
        ck_assert_ptr_null(none->cache_banks);
}
END_TEST

static Plan *place_xml(const Topology *t, Ledger *l, const char *xml)
{
        PlacementParams params = test_params(POLICY_EXPLICIT);

        return test_place_xml(t, l, xml, &params);
}

/* Every pin of p's vCPUs from..to-1 lies in the CPU list cpus. */
static void assert_vcpus_in(const Plan *p, unsigned from, unsigned to, const char *cpus)
{
        g_autoptr(CpuSet) allowed = NULL;
        g_autofree char *error = NULL;

        ck_assert_int_eq(cpuset_parse(cpus, &allowed, &error), 0);
        for (unsigned i = from; i < to; i++) {
                g_autofree char *pin = cpuset_format(p->vcpu_pins[i]);
                g_autoptr(CpuSet) outside = cpuset_copy(p->vcpu_pins[i]);
                cpuset_subtract(outside, allowed);
                ck_assert_msg(!cpuset_is_empty(p->vcpu_pins[i]) && cpuset_is_empty(outside),
                              "vCPU %u pinned to %s, outside %s: %s", i, pin, cpus, p->reason);
        }
}

/* Every vCPU pin of p lies in the CPU list cpus. */
static void assert_pins_in(const Plan *p, const char *cpus)
{
        assert_vcpus_in(p, 0, p->nvcpus, cpus);
}

/* The vCPUs go under the caches the domain reserves, wherever the emptiest node is. */
START_TEST(test_kept_under_reserved_cache)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) plain = place_xml(t, l, DOMAIN("plain", "4", ""));
        g_autoptr(Plan) l3 = place_xml(t, l, DOMAIN("l3", "4", CACHETUNE("3", "3")));
        g_autoptr(Plan) mba = place_xml(t, l,
                                        DOMAIN("mba", "4",
                                               "<memorytune vcpus='0-3'><node id='1' bandwidth='50'/>"
                                               "</memorytune>"));
        g_autoptr(Plan) l2 = place_xml(t, l, DOMAIN("l2", "1", CACHETUNE("2", "18")));
        g_autoptr(Plan) unknown = place_xml(t, l, DOMAIN("unknown", "4", CACHETUNE("3", "9")));

        assert_pins_in(plain, "0-7"); /* without one: the first node, its first cores */
        ck_assert_int_eq(l3->result, PLAN_PLACED);
        assert_pins_in(l3, "24-31");
        ck_assert_msg(strstr(l3->reason, "kept on CPUs 24-31, under the caches its <cachetune>/<memorytune> "
                                         "reserve"),
                      "%s", l3->reason);
        assert_pins_in(mba, "8-15");
        assert_pins_in(l2, "18-19");
        ck_assert_msg(!strstr(unknown->reason, "cachetune"), "%s", unknown->reason); /* not on this host */
}
END_TEST

/* With the reserved cache's cores taken, the domain shares them rather than leave the cache: the
 * reservation is the user's stated intent. */
START_TEST(test_overcommitted_inside_cache)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) second = NULL;

        ck_assert_int_eq(
            ledger_commit(l, "first", place_xml(t, l, DOMAIN("first", "4", CACHETUNE("3", "0")))), 0);
        second = place_xml(t, l, DOMAIN("second", "2", CACHETUNE("3", "0")));
        ck_assert_int_eq(second->result, PLAN_OVERCOMMITTED);
        assert_pins_in(second, "0-7");
        /* the reservation confines vCPU threads alone: QEMU's own take a free core of the node */
        {
                g_autofree char *emulator = cpuset_format(second->emulator_pin);
                ck_assert_msg(strcmp(emulator, "8-15") == 0, "emulator on %s: %s", emulator, second->reason);
        }
}
END_TEST

/* Each cachetune's vCPUs under its own cache: vCPUs 0-3 reserve L3 1 (CPUs 8-15), 4-7 L3 0 (0-7). The
 * domain takes node 0's 8 cores, first those of L3 0 in vCPU order; its vCPUs trade them so that each
 * runs where its ways are. */
START_TEST(test_each_group_under_its_cache)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) p =
            place_xml(t, l,
                      DOMAIN("groups", "8",
                             "<cachetune vcpus='0-3'><cache id='1' level='3' type='both' size='3' "
                             "unit='MiB'/></cachetune><cachetune vcpus='4-7'><cache id='0' "
                             "level='3' type='both' size='3' unit='MiB'/></cachetune>"));

        ck_assert_int_eq(p->result, PLAN_PLACED);
        assert_vcpus_in(p, 0, 4, "8-15");
        assert_vcpus_in(p, 4, 8, "0-7");
        ck_assert_msg(!strstr(p->reason, " not kept under the caches"), "%s", p->reason);
}
END_TEST

/* The same with 4 vCPUs, 0-1 on L3 0 and 2-3 on L3 1: the plan takes 4 of node 0's cores under L3 0,
 * and vCPUs 2-3 move to free cores of their own cache on that node. */
START_TEST(test_group_takes_free_core_under_its_cache)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) p =
            place_xml(t, l,
                      DOMAIN("groups", "4",
                             "<cachetune vcpus='0-1'><cache id='0' level='3' type='both' size='3' "
                             "unit='MiB'/></cachetune><cachetune vcpus='2-3'><cache id='1' "
                             "level='3' type='both' size='3' unit='MiB'/></cachetune>"));

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(p->shared_vcpus, 0);
        assert_vcpus_in(p, 0, 2, "0-7");
        assert_vcpus_in(p, 2, 4, "8-15");
        ck_assert_msg(!strstr(p->reason, " not kept under the caches"), "%s", p->reason);
}
END_TEST

/* Groups on two nodes: vCPUs 0-1 reserve L3 3 (CPUs 24-31, node 1), 2-5 L3 1 (8-15, node 0). Six vCPUs
 * need both nodes, which the plan fills three a node: vCPU 5 lands on node 1, under L3 3, while a core
 * under its own L3 1 stands free on node 0. It moves there: the set's free cores under its caches are
 * its, not only those of the node it was counted on. */
START_TEST(test_group_takes_free_core_under_its_cache_on_another_node)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) p =
            place_xml(t, l,
                      DOMAIN("groups", "6",
                             "<cachetune vcpus='0-1'><cache id='3' level='3' type='both' size='3' "
                             "unit='MiB'/></cachetune><cachetune vcpus='2-5'><cache id='1' "
                             "level='3' type='both' size='3' unit='MiB'/></cachetune>"));

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(p->shared_vcpus, 0);
        assert_vcpus_in(p, 0, 2, "24-31");
        assert_vcpus_in(p, 2, 6, "8-15");
        ck_assert_msg(!strstr(p->reason, " not kept under the caches"), "%s", p->reason);
}
END_TEST

/* Only vCPU 0 reserves a cache: the other seven are not confined to its 4 cores (8 free cores on node
 * 0 take all 8, no sharing), and the reason says where vCPU 0 runs against its cache. */
START_TEST(test_uncovered_vcpus_not_confined)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) p = place_xml(t, l,
                                      DOMAIN("rt", "8",
                                             "<cachetune vcpus='0'><cache id='3' level='3' type='both' "
                                             "size='3' unit='MiB'/></cachetune>"));

        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(p->shared_vcpus, 0);
        ck_assert_msg(strstr(p->reason, "vCPU 0 not kept under the caches") ||
                          strstr(p->reason, "vCPU 0 under the caches"),
                      "%s", p->reason);
}
END_TEST

/* A <vcpu cpuset> the reserved caches lie outside of stands: libvirt pins the vCPUs there whatever
 * resctrl reserves. Placed inside it, not unplaceable, and the reason says why. */
START_TEST(test_cpuset_stands_over_caches_outside_it)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) p =
            place_xml(t, l,
                      "<domain type='kvm'><name>d</name><memory unit='GiB'>2</memory><vcpu "
                      "cpuset='0-7'>4</vcpu><cputune>" CACHETUNE("3", "3") "</cputune><os><type>hvm"
                                                                           "</type></os></domain>");

        ck_assert_int_eq(p->result, PLAN_PLACED);
        assert_pins_in(p, "0-7");
        ck_assert_msg(strstr(p->reason, "lie outside its <vcpu cpuset>, which libvirt applies"), "%s",
                      p->reason);
}
END_TEST

/* A busy vCPU re-pinned off a busy neighbour (heal's re-pin inside its nodes, or to the nearest node)
 * stays under its reserved caches: d's vCPU 0 reserves L3 1 (CPUs 8-15) and runs on 8 beside x's busy
 * thread on 9; the calm cores of L3 0 (0-7) are not its. */
static void repin_keeps_cache(const char *cputune, bool near)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        g_autofree double *pu_busy = g_new0(double, t->npus);
        g_autofree char *xml =
            g_strdup_printf("<domain type='kvm'><name>d</name><memory unit='GiB'>1</memory>"
                            "<vcpu>2</vcpu><cputune>%s</cputune><os><type>hvm</type></os>"
                            "</domain>",
                            cputune);
        g_autoptr(DomainSpec) spec = test_domain_parse(xml);
        g_auto(RequestShape) shape = {0};
        PlacementRequest req = domain_request(spec, spec);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) cur = plan_new("d", 2, GiB, t->nnodes), moved = NULL;
        Plan *x = plan_new("x", 1, GiB, t->nnodes);
        double busy[] = {0.9, 0.1};

        domain_request_shape(spec, t, &req, &shape);
        cur->vcpu_pu[0] = 8; /* PU indexes are OS indexes on this host */
        cpuset_add(cur->vcpu_pins[0], 8);
        cpuset_add(cur->vcpu_pins[0], 9);
        cur->vcpu_pu[1] = 0;
        cpuset_add(cur->vcpu_pins[1], 0);
        cpuset_add(cur->vcpu_pins[1], 1);
        cpuset_add(cur->nodes, 0);
        cur->node_memory[0] = GiB;
        cur->result = PLAN_PLACED;
        x->vcpu_pu[0] = 9;
        cpuset_add(x->vcpu_pins[0], 9);
        cpuset_add(x->nodes, 0);
        x->node_memory[0] = GiB;
        x->result = PLAN_PLACED;
        ck_assert_int_eq(ledger_commit(l, "x", x), 0);
        pu_busy[9] = 0.9;
        req.vcpu_busy = busy;
        req.pu_busy = pu_busy;
        moved = near ? policy_repin_near(t, l, &req, &params, cur)
                     : policy_repin_local(t, l, &req, &params, cur);
        ck_assert_ptr_nonnull(moved);
        ck_assert_msg(moved->vcpu_pu[0] >= 10 && moved->vcpu_pu[0] <= 15, "vCPU 0 re-pinned to PU %d: %s",
                      moved->vcpu_pu[0], moved->reason);
}

START_TEST(test_repin_keeps_cache)
{
        static const char both[] =
            "<cachetune vcpus='0'><cache id='1' level='3' type='both' size='3' unit='MiB'/>"
            "</cachetune><cachetune vcpus='1'><cache id='0' level='3' type='both' "
            "size='3' unit='MiB'/></cachetune>";
        static const char one[] =
            "<cachetune vcpus='0'><cache id='1' level='3' type='both' size='3' unit='MiB'/>"
            "</cachetune>";

        repin_keeps_cache(both, false);
        repin_keeps_cache(one, false);
        repin_keeps_cache(both, true);
}
END_TEST

/* CoreKinds=performance-only leaves the E-cores to the host, also to the threads of a guest whose vCPUs
 * reserve a P-core's L2 (alder-lake-cache-ids.xml: P-core 0's L2 has id 0): its emulator, pinned to
 * the set (EmulatorPin=nodeset), takes P-cores only. */
START_TEST(test_emulator_keeps_core_kinds)
{
        g_autoptr(Topology) t = test_topology_load("alder-lake-cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) p = NULL;
        g_autofree char *emulator = NULL;

        params.core_kinds = CORE_KINDS_PERFORMANCE_ONLY;
        params.emulator_pin = EMULATOR_PIN_NODESET;
        p = test_place_xml(t, l, DOMAIN("adl", "2", CACHETUNE("2", "0")), &params);
        emulator = cpuset_format(p->emulator_pin);
        ck_assert_msg(strcmp(emulator, "0-1,8-9,16-17,24-25") == 0, "emulator on %s: %s", emulator,
                      p->reason);
        assert_pins_in(p, "0-1");
}
END_TEST

/* VCPUPin=nodeset pins every vCPU to the whole set: the reason does not claim a reserved vCPU runs under
 * its caches. */
START_TEST(test_nodeset_pins_not_under_cache)
{
        g_autoptr(Topology) t = test_topology_load("cache-ids.xml");
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams params = test_params(POLICY_EXPLICIT);
        g_autoptr(Plan) p = NULL;

        params.vcpu_pin = VCPU_PIN_NODESET;
        p = test_place_xml(t, l,
                           DOMAIN("wide", "4",
                                  "<cachetune vcpus='0'><cache id='0' level='3' type='both' size='3' "
                                  "unit='MiB'/></cachetune>"),
                           &params);
        ck_assert_msg(strstr(p->reason, "vCPU 0 not kept under the caches"), "%s", p->reason);
}
END_TEST

static Suite *make_suite(void)
{
        Suite *s = suite_create("cachetune");
        TCase *tc = tcase_create("cachetune");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_kept_under_reserved_cache);
        tcase_add_test(tc, test_overcommitted_inside_cache);
        tcase_add_test(tc, test_each_group_under_its_cache);
        tcase_add_test(tc, test_repin_keeps_cache);
        tcase_add_test(tc, test_emulator_keeps_core_kinds);
        tcase_add_test(tc, test_nodeset_pins_not_under_cache);
        tcase_add_test(tc, test_group_takes_free_core_under_its_cache);
        tcase_add_test(tc, test_group_takes_free_core_under_its_cache_on_another_node);
        tcase_add_test(tc, test_uncovered_vcpus_not_confined);
        tcase_add_test(tc, test_cpuset_stands_over_caches_outside_it);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(make_suite)
