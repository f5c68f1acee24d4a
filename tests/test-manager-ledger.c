/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ledger follows what runs, in-process against libvirt's test driver: a skipped domain pinned by hand
 * later, a domain with persistent-memory devices (libvirt's size counts them, the host's RAM does not),
 * a placed domain re-pinned by hand while its memory stays bound, and records a domain owner forged.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <glib/gstdio.h>

#include "domain-xml.h"
#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "virt-domain.h"

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

static virDomainPtr start_xml(const char *name, const char *memory, unsigned vcpus, const char *extra)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>%s</memory>"
                            "<vcpu>%u</vcpu><os><type>hvm</type></os>%s</domain>",
                            name, memory, vcpus, extra ? extra : "");
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);

        ck_assert_msg(dom != NULL, "cannot start %s", name);
        return dom;
}

static void stop(virDomainPtr dom)
{
        fixture_stop(dom);
}

static void pin(virDomainPtr dom, unsigned vcpu, unsigned cpu)
{
        fixture_pin(dom, vcpu, cpu);
}

static uint64_t memory_counted(const Plan *p)
{
        uint64_t total = 0;

        for (unsigned n = 0; p && n < p->nnode_memory; n++)
                total += p->node_memory[n];
        return total;
}

/* Opted out and floating, then pinned by hand: from then on its pin is counted (its core is not handed
 * out), by the reconcile and by the pin's own event alike; the bound memory an opted-out domain holds
 * stays counted where its definition binds it. */
START_TEST(test_skipped_floating_then_pinned)
{
        static const char *const extras[] = {
            "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "' skip='yes'/></metadata>",
            "<numatune><memory mode='strict' nodeset='0'/></numatune><metadata><p:domain "
            "xmlns:p='" PLACEMENTD_XMLNS "' skip='yes'/></metadata>",
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(extras); i++) {
                Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
                virDomainPtr dom = start_xml("l-skip", "512", 1, extras[i]);
                const Decision *d;

                ck_assert(spin_known(m, "l-skip", 3000));
                d = manager_lookup(m, "l-skip");
                ck_assert_int_eq(d->result, DECISION_SKIPPED);
                ck_assert(!d->pinned_by_hand);
                pin(dom, 0, 6);
                spin_known(NULL, NULL,
                           50); /* the test driver sends no tunable event: the reconcile sees it */
                manager_reconcile(m);
                d = manager_lookup(m, "l-skip");
                ck_assert_int_eq(d->result, DECISION_SKIPPED);
                ck_assert_msg(ledger_pu_load(manager_ledger(m), 6) == 1,
                              "case %u: the hand pin on CPU 6 is not counted (%s)", i, d->reason);
                ck_assert(d->pinned_by_hand);
                ck_assert_msg(strstr(d->reason, "opted out"), "%s", d->reason);
                if (i == 1)
                        ck_assert_uint_eq(d->plan->node_memory[0], 512u << 20);
                stop(dom);
                free_manager(m);
        }
}
END_TEST

/* Running unpinned when placementd started with PlaceRunning=no, then pinned by hand: counted as it runs,
 * and no record written into it. */
START_TEST(test_left_alone_then_pinned)
{
        virDomainPtr dom = start_xml("l-alone", "512", 1, NULL);
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nPlaceRunning=no\n");
        const Decision *d;

        ck_assert(spin_known(m, "l-alone", 3000));
        d = manager_lookup(m, "l-alone");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        pin(dom, 0, 2);
        manager_reconcile(m);
        d = manager_lookup(m, "l-alone");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), 2) == 1, "the hand pin on CPU 2 is not counted (%s)",
                      d->reason);
        ck_assert_uint_eq(memory_counted(d->plan), 512u << 20);
        {
                /* never placementd's: nothing written into it */
                g_autofree char *record = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT,
                                                               PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
                ck_assert_msg(!record, "a record: %s", record);
        }
        stop(dom);
        free_manager(m);
}
END_TEST

/* A virtio-pmem device is in libvirt's <memory> (virDomainGetMaxMemory) but is a file, not host RAM: the
 * decision counts the RAM, and an unchanged domain is not taken for resized and placed again. */
START_TEST(test_pmem_domain_not_placed_again)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml(
            "l-pmem", "3072", 1,
            "<maxMemory slots='4' unit='GiB'>64</maxMemory><cpu><numa><cell id='0' cpus='0' memory='1' "
            "unit='GiB'/></numa></cpu><devices><memory model='virtio-pmem' access='shared'><source><path>"
            "/tmp/pmem</path></source><target><size unit='GiB'>2</size></target></memory></devices>");
        const Decision *d;
        int64_t decided;

        ck_assert(spin_known(m, "l-pmem", 3000));
        d = manager_lookup(m, "l-pmem");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(d->plan->memory, 1ull << 30);
        ck_assert_uint_eq((uint64_t)virDomainGetMaxMemory(dom) << 10, 3ull << 30);
        decided = d->decided_usec;
        for (unsigned i = 0; i < 3; i++)
                manager_reconcile(m);
        d = manager_lookup(m, "l-pmem");
        ck_assert_msg(d->decided_usec == decided && !d->adopted, "placed again: %s", d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A placed domain whose memory placementd bound to its node, re-pinned by hand onto the other node: the
 * ledger counts its memory where libvirt keeps it bound, not where the vCPU went. */
START_TEST(test_hand_pins_keep_memory_where_bound)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-hand", "8192", 1, NULL);
        g_autoptr(DomainSpec) live = NULL;
        const Decision *d;
        unsigned node, other;

        ck_assert(spin_known(m, "l-hand", 3000));
        d = manager_lookup(m, "l-hand");
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        node = (unsigned)cpuset_next(d->plan->nodes, 0);
        other = 1 - node;
        pin(dom, 0, other == 0 ? 2 : 6);
        manager_reconcile(m);
        d = manager_lookup(m, "l-hand");
        ck_assert(d->pinned_by_hand);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &live, NULL), 0);
        ck_assert(cpuset_has(live->memory_nodeset, node));
        ck_assert_msg(d->plan->node_memory[node] == 8ull << 30 && d->plan->node_memory[other] == 0,
                      "memory counted on node %u: %llu, node %u: %llu; libvirt binds it to node %u", node,
                      (unsigned long long)d->plan->node_memory[node], other,
                      (unsigned long long)d->plan->node_memory[other], node);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), node), 8ull << 30);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A guest that handled its panic runs on (CRASHED, crashloaded; or preserved by on_crash='preserve'): its
 * cores stay counted, not handed to the next domain; a crash whose process is gone frees them. The test
 * driver sends no CRASHED event: the test sends the manager libvirt's. */
START_TEST(test_crashed_but_running_kept)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-crash", "512", 1, NULL);
        const Decision *d;
        int pu;

        ck_assert(spin_known(m, "l-crash", 3000));
        d = manager_lookup(m, "l-crash");
        pu = d->plan->vcpu_pu[0];
        manager_lifecycle(m, dom, VIR_DOMAIN_EVENT_CRASHED, VIR_DOMAIN_EVENT_CRASHED_CRASHLOADED);
        manager_lifecycle(m, dom, VIR_DOMAIN_EVENT_SHUTDOWN, VIR_DOMAIN_EVENT_SHUTDOWN_FINISHED);
        ck_assert_msg(manager_lookup(m, "l-crash") != NULL,
                      "a running domain was forgotten at its crash event");
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)pu), 1);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        manager_lifecycle(m, dom, VIR_DOMAIN_EVENT_CRASHED, VIR_DOMAIN_EVENT_CRASHED_PANICKED);
        ck_assert_ptr_null(manager_lookup(m, "l-crash"));
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)pu), 0);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* Writes the domain's live record as xml (placementd's namespace), as its owner can. */
static void forge_record(virDomainPtr dom, const char *xml)
{
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml, "p", PLACEMENTD_XMLNS,
                                              VIR_DOMAIN_AFFECT_LIVE),
                         0);
}

/* A placed domain's owner rewrites its record while placementd is down: result='skipped' with its live pin
 * and no memory. At the restart its pins stand (they run so), but its memory is counted as it runs, where
 * placementd's binding keeps it, not nowhere as the record would have it. */
START_TEST(test_forged_skipped_record_counts_memory)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-forge", "12288", 1, NULL);
        g_autofree char *forged = NULL, *pins = NULL;
        const Decision *d;
        unsigned node;

        ck_assert(spin_known(m, "l-forge", 3000));
        d = manager_lookup(m, "l-forge");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        pins = cpuset_format(d->plan->vcpu_pins[0]);
        node = (unsigned)cpuset_next(d->plan->nodes, 0);
        forged = g_strdup_printf("<domain><decision result='skipped' policy='explicit' vcpu-pin='core' "
                                 "memory-binding='applied' nodes='%u'><vcpu id='0' cpu='%d' cpuset='%s'/>"
                                 "<reason>pinned by hand</reason></decision></domain>",
                                 node, cpuset_next(d->plan->vcpu_pins[0], 0), pins);
        free_manager(m);
        forge_record(dom, forged);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        d = manager_lookup(m, "l-forge");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(memory_counted(d->plan) == 12ull << 30 && d->plan->node_memory[node] == 12ull << 30,
                      "%s (adopted %d): %llu bytes counted, %llu on node %u",
                      decision_result_to_string(d->result), d->adopted,
                      (unsigned long long)memory_counted(d->plan),
                      (unsigned long long)d->plan->node_memory[node], node);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), node), 12ull << 30);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A forged placed record that keeps the live pins but puts the memory on the node libvirt does not bind
 * it to: refused, and the domain placed anew with its memory counted where it is. */
START_TEST(test_forged_record_memory_off_its_binding)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-moved", "4096", 1, NULL);
        g_autofree char *forged = NULL, *pins = NULL;
        const Decision *d;
        unsigned node, other;

        ck_assert(spin_known(m, "l-moved", 3000));
        d = manager_lookup(m, "l-moved");
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        pins = cpuset_format(d->plan->vcpu_pins[0]);
        node = (unsigned)cpuset_next(d->plan->nodes, 0);
        other = 1 - node;
        forged = g_strdup_printf("<domain><decision result='placed' policy='explicit' vcpu-pin='core' "
                                 "memory-binding='applied' nodes='0-1'><vcpu id='0' cpu='%d' cpuset='%s'/>"
                                 "<memory node='%u' bytes='%llu'/><reason>x</reason></decision></domain>",
                                 cpuset_next(d->plan->vcpu_pins[0], 0), pins, other, 4ull << 30);
        free_manager(m);
        forge_record(dom, forged);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        d = manager_lookup(m, "l-moved");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(!d->adopted, "the forged record was adopted");
        ck_assert_uint_eq(d->plan->node_memory[other], 0);
        ck_assert_uint_eq(memory_counted(d->plan), 4ull << 30);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A transient hugepage-backed domain with guest cells, pinned by hand: its record (the definition it was
 * started with, which keeps no <memoryBacking>) still stands for its live definition, so the pin is the
 * user's, recorded as skipped, not taken for a <vcpupin> of its definition with the record left saying
 * placed on the old pins; and its record keeps the definition. */
START_TEST(test_hugepage_cells_hand_pin_recorded)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");
        g_autofree char *record = NULL, *cpu = NULL;
        Manager *m = fixture_manager_new(base, topology, NULL);
        virDomainPtr dom = start_xml("l-hcell", "64", 2,
                                     "<cpu><numa><cell id='0' cpus='0' memory='32' unit='MiB'/>"
                                     "<cell id='1' cpus='1' memory='32' unit='MiB'/></numa></cpu>"
                                     "<memoryBacking><hugepages/></memoryBacking>");
        const Decision *d;
        unsigned hand;

        ck_assert(spin_known(m, "l-hcell", 3000));
        d = manager_lookup(m, "l-hcell");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        hand = cpuset_has(d->plan->vcpu_pins[0], 3) ? 2 : 3;
        pin(dom, 0, hand);
        manager_reconcile(m);
        d = manager_lookup(m, "l-hcell");
        ck_assert_msg(d->result == DECISION_SKIPPED && d->pinned_by_hand &&
                          !strstr(d->reason, "its definition pins vCPUs itself"),
                      "%s: %s", decision_result_to_string(d->result), d->reason);
        record =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        cpu = g_strdup_printf("cpu=\"%u\"", hand);
        ck_assert_msg(record && strstr(record, "result=\"skipped\"") && strstr(record, cpu) &&
                          strstr(record, "<definition>"),
                      "%s", record);
        stop(dom);
        free_manager(m);
}
END_TEST

/* tests/topologies/two-node-hugepages.xml with node 1's pools edited: its lines from[i] replaced by
 * to[i] (n of them), written to dir; returns the file's path. */
static char *hugepage_host(const char *dir, const char *const *from, const char *const *to, unsigned n)
{
        g_autofree char *src = test_topology_path("two-node-hugepages.xml"), *xml = NULL;
        g_autoptr(GString) edited = NULL;
        char *path = g_build_filename(dir, "hugepages.xml", NULL);

        ck_assert(g_file_get_contents(src, &xml, NULL, NULL));
        edited = g_string_new(xml);
        for (unsigned i = 0; i < n; i++)
                ck_assert_uint_eq(g_string_replace(edited, from[i], to[i], 1), 1);
        ck_assert(g_file_set_contents(path, edited->str, -1, NULL));
        return path;
}

/* A hugepage-backed domain whose pages on a node are more than that node's ordinary memory (most of node 1
 * set aside as 2 MiB pages): its own record is adopted at a restart, not refused as more than the node
 * has. */
START_TEST(test_hugepage_record_adopted)
{
        /* node 1: 1 GiB, 896 MiB of it in 2 MiB pages */
        static const char *const from[] = {"<page_type size=\"4096\" count=\"229376\"/>",
                                           "<page_type size=\"2097152\" count=\"64\"/>"};
        static const char *const to[] = {"<page_type size=\"4096\" count=\"32768\"/>",
                                         "<page_type size=\"2097152\" count=\"448\"/>"};
        g_autofree char *dir = g_dir_make_tmp("placementd-ledger-XXXXXX", NULL);
        g_autofree char *topology = hugepage_host(dir, from, to, 2);
        virDomainPtr dom;
        Manager *m;
        const Decision *d;

        m = fixture_manager_new(base, topology, NULL);
        dom = start_xml("l-huge", "512", 1, "<memoryBacking><hugepages/></memoryBacking>");
        ck_assert(spin_known(m, "l-huge", 3000));
        d = manager_lookup(m, "l-huge");
        ck_assert_msg(d->result == DECISION_PLACED && d->plan->node_memory[1] == 512u << 20, "%s: %s",
                      decision_result_to_string(d->result), d->reason);
        free_manager(m);
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, "l-huge");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->adopted, "its own record was not adopted: %s", d->reason);
        ck_assert_uint_eq(d->plan->node_memory[1], 512u << 20);
        stop(dom);
        free_manager(m);
        g_unlink(topology);
        g_rmdir(dir);
}
END_TEST

/* A hugepage-backed guest bound to nodes 0-1 whose pages only node 1's pool can hold (node 0 has none of
 * the size): its owner rewrites its record to put them on node 0. A restart does not count them on a node
 * that cannot hold them, where they would be counted nowhere and node 1's pool shown free for the next
 * guest: node 1's pool holds them as before. */
START_TEST(test_forged_record_puts_no_pages_off_the_pools)
{
        static const char *const from[] = {"<page_type size=\"2097152\" count=\"32\"/>"};
        static const char *const to[] = {""};
        g_autofree char *dir = g_dir_make_tmp("placementd-ledger-XXXXXX", NULL);
        g_autofree char *topology = hugepage_host(dir, from, to, 1);
        g_autoptr(GRegex) node = g_regex_new("(<([a-z]+:)?memory node=\")1\"", 0, 0, NULL);
        g_autofree char *mine = NULL, *forged = NULL;
        virDomainPtr dom;
        Manager *m;
        const Decision *d;

        m = fixture_manager_new(base, topology, NULL);
        dom = start_xml("l-forge", "64", 1,
                        "<memoryBacking><hugepages><page size='2' unit='MiB'/></hugepages></memoryBacking>"
                        "<numatune><memory mode='strict' nodeset='0-1'/></numatune>");
        ck_assert(spin_known(m, "l-forge", 3000));
        d = manager_lookup(m, "l-forge");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_uint_eq(ledger_node_hugepages(manager_ledger(m), 1, 2u << 20), 64u << 20);
        mine =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_ptr_nonnull(mine);
        free_manager(m);

        forged = g_regex_replace(node, mine, -1, 0, "\\g<1>0\"", 0, NULL);
        ck_assert_msg(forged && strcmp(forged, mine) != 0, "no memory entry on node 1 in %s", mine);
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, forged, "p",
                                              PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                         0);
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, "l-forge");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(ledger_node_hugepages(manager_ledger(m), 1, 2u << 20) == 64u << 20,
                      "node 1's pool counts %llu bytes (adopted %d: %s)\nforged: %s",
                      (unsigned long long)ledger_node_hugepages(manager_ledger(m), 1, 2u << 20), d->adopted,
                      d->reason, forged);
        stop(dom);
        free_manager(m);
        g_unlink(topology);
        g_rmdir(dir);
}
END_TEST

/* Its own records stay adopted: the same guest bound to node 0 alone (no pool there: placementd counts its
 * pages nowhere and says so), or placed under MemoryBinding=no (nothing binds it), and a guest whose
 * hugepage cell a <memnode> binds to node 0 alone while its ordinary cell is bound to node 1 (whose pool
 * that cell's pages cannot come from). */
START_TEST(test_own_hugepage_records_adopted)
{
        static const char *const from[] = {"<page_type size=\"2097152\" count=\"32\"/>"};
        static const char *const to[] = {""};
        static const struct {
                const char *config, *numatune, *page, *cells;
        } cases[] = {
            {NULL, "<numatune><memory mode='strict' nodeset='0'/></numatune>", "", ""},
            {"[Placement]\nMemoryBinding=no\n", "", "", ""},
            {NULL,
             "<numatune><memnode cellid='0' mode='strict' nodeset='0'/>"
             "<memnode cellid='1' mode='strict' nodeset='1'/></numatune>",
             " nodeset='0'",
             "<cpu><numa><cell id='0' cpus='0' memory='32' unit='MiB'/>"
             "<cell id='1' cpus='1' memory='32' unit='MiB'/></numa></cpu>"},
        };
        g_autofree char *dir = g_dir_make_tmp("placementd-ledger-XXXXXX", NULL);
        g_autofree char *topology = hugepage_host(dir, from, to, 1);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *extra = g_strdup_printf("<memoryBacking><hugepages><page size='2' "
                                                         "unit='MiB'%s/></hugepages></memoryBacking>%s%s",
                                                         cases[i].page, cases[i].numatune, cases[i].cells);
                Manager *m = fixture_manager_new(base, topology, cases[i].config);
                virDomainPtr dom = start_xml("l-own", "64", *cases[i].cells ? 2 : 1, extra);
                const Decision *d;

                ck_assert(spin_known(m, "l-own", 3000));
                free_manager(m);
                m = fixture_manager_new(base, topology, cases[i].config);
                d = manager_lookup(m, "l-own");
                ck_assert_ptr_nonnull(d);
                ck_assert_msg(d->adopted, "case %u: its own record was not adopted: %s", i, d->reason);
                stop(dom);
                free_manager(m);
        }
        g_unlink(topology);
        g_rmdir(dir);
}
END_TEST

/* mine, a record, with its first memory entry saying all the domain's memory (bytes) is on node and the
 * others dropped: what a guest owner writes with virsh metadata --live. */
static char *forge_memory(const char *mine, unsigned node, uint64_t bytes)
{
        g_autoptr(GRegex) memory =
            g_regex_new("<([a-z]+:)?memory node=\"[0-9]+\" bytes=\"[0-9]+\"/>", 0, 0, NULL);
        g_autoptr(GMatchInfo) match = NULL;
        g_autofree char *rest = NULL, *prefix = NULL, *entry = NULL;
        int start, end;

        ck_assert_msg(g_regex_match(memory, mine, 0, &match), "no memory entry in %s", mine);
        ck_assert(g_match_info_fetch_pos(match, 0, &start, &end));
        prefix = g_match_info_fetch(match, 1);
        rest = g_regex_replace_literal(memory, mine + end, -1, 0, "", 0, NULL);
        entry = g_strdup_printf("<%smemory node=\"%u\" bytes=\"%" G_GUINT64_FORMAT "\"/>",
                                prefix ? prefix : "", node, (guint64)bytes);
        return g_strdup_printf("%.*s%s%s", start, mine, entry, rest);
}

/* A guest of two cells, each bound to its node by a <memnode> (placementd binds each cell where it puts it):
 * its owner rewrites its record to put all its memory on one node. Each cell's memory is on its <memnode>'s
 * node, whatever a record says: a restart counts it there, as before. */
START_TEST(test_forged_record_moves_no_cell_memory)
{
        g_autofree char *mine = NULL, *forged = NULL;
        virDomainPtr dom;
        Manager *m;
        const Decision *d;
        uint64_t before[2];

        m = fixture_manager_new(base, TOPOLOGY, NULL);
        dom = start_xml("l-cells", "512", 2,
                        "<numatune><memnode cellid='0' mode='strict' nodeset='0'/>"
                        "<memnode cellid='1' mode='strict' nodeset='1'/></numatune><cpu><numa>"
                        "<cell id='0' cpus='0' memory='256' unit='MiB'/>"
                        "<cell id='1' cpus='1' memory='256' unit='MiB'/></numa></cpu>");
        ck_assert(spin_known(m, "l-cells", 3000));
        d = manager_lookup(m, "l-cells");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        for (unsigned n = 0; n < 2; n++)
                before[n] = ledger_node_memory(manager_ledger(m), n);
        mine =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_ptr_nonnull(mine);
        free_manager(m);

        forged = forge_memory(mine, 0, 536870912); /* all of it on node 0 */
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, forged, "p",
                                              PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                         0);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        d = manager_lookup(m, "l-cells");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(ledger_node_memory(manager_ledger(m), 0) == before[0] &&
                          ledger_node_memory(manager_ledger(m), 1) == before[1],
                      "node 0 counts %llu bytes (%llu before), node 1 %llu (%llu before); adopted %d: %s\n"
                      "forged: %s",
                      (unsigned long long)ledger_node_memory(manager_ledger(m), 0),
                      (unsigned long long)before[0],
                      (unsigned long long)ledger_node_memory(manager_ledger(m), 1),
                      (unsigned long long)before[1], d->adopted, d->reason, forged);
        stop(dom);
        free_manager(m);
}
END_TEST

/* The same with hugepage-backed cells: a record that puts cell 0's pages, bound to node 0, on node 1 is not
 * adopted; adopted, node 0's pool showed 32 MiB free that the guest holds, node 1's as many taken. */
START_TEST(test_forged_record_moves_no_cell_pages)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");
        g_autofree char *mine = NULL, *forged = NULL;
        virDomainPtr dom;
        Manager *m;
        const Decision *d;
        uint64_t before[2], after[2];

        m = fixture_manager_new(base, topology, NULL);
        dom = start_xml("l-hcells", "64", 2,
                        "<numatune><memnode cellid='0' mode='strict' nodeset='0'/>"
                        "<memnode cellid='1' mode='strict' nodeset='1'/></numatune><cpu><numa>"
                        "<cell id='0' cpus='0' memory='32' unit='MiB'/>"
                        "<cell id='1' cpus='1' memory='32' unit='MiB'/></numa></cpu>"
                        "<memoryBacking><hugepages/></memoryBacking>");
        ck_assert(spin_known(m, "l-hcells", 3000));
        d = manager_lookup(m, "l-hcells");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        for (unsigned n = 0; n < 2; n++)
                before[n] = ledger_node_hugepages(manager_ledger(m), n, 2u << 20);
        mine =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_ptr_nonnull(mine);
        free_manager(m);

        forged = forge_memory(mine, 1, 67108864); /* all of it on node 1 */
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, forged, "p",
                                              PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                         0);
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, "l-hcells");
        ck_assert_ptr_nonnull(d);
        for (unsigned n = 0; n < 2; n++)
                after[n] = ledger_node_hugepages(manager_ledger(m), n, 2u << 20);
        ck_assert_msg(
            after[0] == before[0] && after[1] == before[1],
            "node 0's pool counts %llu bytes (%llu before), node 1's %llu (%llu before); adopted %d: "
            "%s",
            (unsigned long long)after[0], (unsigned long long)before[0], (unsigned long long)after[1],
            (unsigned long long)before[1], d->adopted, d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* Its own record of a guest whose hugepage cells, each bound to its node by a <memnode>, are no whole number
 * of pages (3 MiB in 2 MiB pages): the pages are counted per node, not per cell, so a node may count less
 * than its cell states; the record is adopted all the same (it was refused at every restart, the guest
 * placed anew). */
START_TEST(test_own_record_of_odd_page_cells_adopted)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");
        static const char *const sizes[][2] = {{"3", "6"}, {"5", "10"}, {"33", "66"}};

        for (unsigned i = 0; i < G_N_ELEMENTS(sizes); i++) {
                g_autofree char *extra =
                    g_strdup_printf("<numatune><memnode cellid='0' mode='strict' nodeset='0'/>"
                                    "<memnode cellid='1' mode='strict' nodeset='1'/></numatune><cpu><numa>"
                                    "<cell id='0' cpus='0' memory='%s' unit='MiB'/>"
                                    "<cell id='1' cpus='1' memory='%s' unit='MiB'/></numa></cpu>"
                                    "<memoryBacking><hugepages/></memoryBacking>",
                                    sizes[i][0], sizes[i][0]);
                Manager *m = fixture_manager_new(base, topology, NULL);
                virDomainPtr dom = start_xml("l-odd", sizes[i][1], 2, extra);
                const Decision *d;

                ck_assert(spin_known(m, "l-odd", 3000));
                free_manager(m);
                m = fixture_manager_new(base, topology, NULL);
                d = manager_lookup(m, "l-odd");
                ck_assert_ptr_nonnull(d);
                ck_assert_msg(d->adopted, "cells of %s MiB: its own record was not adopted: %s", sizes[i][0],
                              d->reason);
                stop(dom);
                free_manager(m);
        }
}
END_TEST

/* A guest of 65 cells, each backed by a <page> of its own (libvirt takes one per cell, their nodesets apart,
 * and one without a nodeset): it is read, placed and its memory counted. More than 64 made its whole
 * definition unreadable: not placed, its memory counted nowhere and its vCPUs floating over other guests'
 * cores. */
START_TEST(test_page_per_cell_counted)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");
        g_autoptr(GString) extra = g_string_new("<memoryBacking><hugepages>");
        uint64_t counted = 0;
        virDomainPtr dom;
        Manager *m;
        const Decision *d;

        for (unsigned i = 0; i < 65; i++)
                g_string_append_printf(extra, "<page size='2' unit='MiB' nodeset='%u'/>", i);
        g_string_append(extra, "</hugepages></memoryBacking><cpu><numa>");
        for (unsigned i = 0; i < 65; i++)
                g_string_append_printf(extra, "<cell id='%u'%s memory='2' unit='MiB'/>", i,
                                       i == 0 ? " cpus='0'" : "");
        g_string_append(extra, "</numa></cpu>");
        m = fixture_manager_new(base, topology, NULL);
        dom = start_xml("l-pages", "130", 1, extra->str);
        ck_assert_msg(spin_known(m, "l-pages", 3000), "a guest of 65 <page> elements is not known");
        d = manager_lookup(m, "l-pages");
        for (unsigned n = 0; n < 2; n++)
                counted += ledger_node_hugepages(manager_ledger(m), n, 2u << 20);
        ck_assert_msg(d->result == DECISION_PLACED && counted == 130u << 20, "%s, %llu bytes of pages: %s",
                      decision_result_to_string(d->result), (unsigned long long)counted, d->reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* What node n holds of a kind: hugepages of size bytes, or ordinary memory when size is 0. */
static uint64_t node_kind(Manager *m, unsigned n, uint64_t size)
{
        return size ? ledger_node_hugepages(manager_ledger(m), n, size)
                    : ledger_node_memory(manager_ledger(m), n);
}

/* Starts name (memory MiB, two vCPUs, extra) on topology's two nodes: placed, the ledger holds total_a of
 * kind a and total_b of kind b (node_kind()) and none of the other kind; a restart adopts its record (bytes
 * per node) and counts each node's kinds as the first daemon did. */
static void kinds_kept_after_restart(const char *topology, const char *name, const char *memory,
                                     const char *extra, uint64_t a, uint64_t total_a, uint64_t b,
                                     uint64_t total_b)
{
        uint64_t held_a[2], held_b[2], sum_a = 0, sum_b = 0;
        virDomainPtr dom;
        Manager *m;
        const Decision *d;

        m = fixture_manager_new(base, topology, NULL);
        dom = start_xml(name, memory, 2, extra);
        ck_assert(spin_known(m, name, 3000));
        d = manager_lookup(m, name);
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        for (unsigned n = 0; n < 2; n++) {
                held_a[n] = node_kind(m, n, a);
                held_b[n] = node_kind(m, n, b);
                sum_a += held_a[n];
                sum_b += held_b[n];
                if (a && b)
                        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), n), 0);
        }
        ck_assert_uint_eq(sum_a, total_a);
        ck_assert_uint_eq(sum_b, total_b);
        free_manager(m);
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, name);
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->adopted, "its own record was not adopted: %s", d->reason);
        for (unsigned n = 0; n < 2; n++) {
                ck_assert_uint_eq(node_kind(m, n, a), held_a[n]);
                ck_assert_uint_eq(node_kind(m, n, b), held_b[n]);
                if (a && b)
                        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), n), 0);
        }
        stop(dom);
        free_manager(m);
}

/* A guest whose <page nodeset='0'> backs only cell 0 (64 MiB of 2 MiB pages), cell 1 (256 MiB) taking
 * ordinary memory: the ledger holds each in its own kind, and again the same after a restart adopts its
 * record (which says only bytes per node). */
START_TEST(test_partial_hugepages_counted_alike_after_restart)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");

        kinds_kept_after_restart(
            topology, "l-part", "320",
            "<memoryBacking><hugepages><page size='2' unit='MiB' nodeset='0'/></hugepages>"
            "</memoryBacking><cpu><numa><cell id='0' cpus='0' memory='64' unit='MiB'/>"
            "<cell id='1' cpus='1' memory='256' unit='MiB'/></numa></cpu>",
            2u << 20, 64u << 20, 0, 256u << 20);
}
END_TEST

/* A guest whose cells use two page sizes (64 MiB of 2 MiB pages, 1 GiB of 1 GiB pages; node 1 has two 1 GiB
 * pages): each cell is held in its own size's pools, the same again after a restart adopts its record
 * (bytes per node). Counted all in 1 GiB pages, it was unplaceable. */
START_TEST(test_page_sizes_counted_alike_after_restart)
{
        static const char *const from[] = {"<page_type size=\"2097152\" count=\"64\"/>"};
        static const char *const to[] = {"<page_type size=\"2097152\" count=\"64\"/>"
                                         "<page_type size=\"1073741824\" count=\"2\"/>"};
        g_autofree char *dir = g_dir_make_tmp("placementd-ledger-XXXXXX", NULL);
        g_autofree char *topology = hugepage_host(dir, from, to, 1);

        kinds_kept_after_restart(
            topology, "l-sizes", "1088",
            "<memoryBacking><hugepages><page size='2' unit='MiB' nodeset='0'/><page size='1' "
            "unit='GiB' nodeset='1'/></hugepages></memoryBacking><cpu><numa><cell id='0' "
            "cpus='0' memory='64' unit='MiB'/><cell id='1' cpus='1' memory='1' unit='GiB'/>"
            "</numa></cpu>",
            2u << 20, 64u << 20, 1u << 30, 1u << 30);
        g_unlink(topology);
        g_rmdir(dir);
}
END_TEST

/* An ordinary guest (two 256 MiB cells) with a 64 MiB DIMM of 2 MiB pages (<source><pagesize>): the
 * DIMM is held in the pools, the cells in ordinary memory, the same again after a restart adopts its
 * record. Counted in its cell, the pools were free and 576 MiB of ordinary memory taken. */
START_TEST(test_dimm_page_size_counted_alike_after_restart)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");

        kinds_kept_after_restart(
            topology, "l-dimm", "576",
            "<maxMemory slots='2' unit='MiB'>2048</maxMemory><cpu><numa><cell id='0' cpus='0' "
            "memory='256' unit='MiB'/><cell id='1' cpus='1' memory='256' unit='MiB'/></numa></cpu>"
            "<devices><memory model='dimm'><source><pagesize unit='KiB'>2048</pagesize></source>"
            "<target><size unit='MiB'>64</size><node>0</node></target></memory></devices>",
            2u << 20, 64u << 20, 0, 512u << 20);
}
END_TEST

/* The same DIMM bound by its <source><nodemask> to node 1 (32 free pages more than node 0), its
 * 512 MiB cell by its <memnode> to node 0: its pages are counted in node 1's pool, and a restart splits
 * the record (bytes per node) so again, not into the pool with the least room. */
START_TEST(test_dimm_nodemask_counted_alike_after_restart)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");

        kinds_kept_after_restart(
            topology, "l-dimmmask", "576",
            "<maxMemory slots='2' unit='MiB'>2048</maxMemory><cpu><numa><cell id='0' cpus='0-1' "
            "memory='512' unit='MiB'/></numa></cpu><numatune><memnode cellid='0' mode='strict' "
            "nodeset='0'/></numatune><devices><memory model='dimm'><source><pagesize "
            "unit='KiB'>2048</pagesize><nodemask>1"
            "</nodemask></source><target><size unit='MiB'>64</size><node>0</node></target></memory>"
            "</devices>",
            2u << 20, 64u << 20, 0, 512u << 20);
}
END_TEST

/* A 2 MiB-page guest (one 64 MiB cell, nothing binding it) with a 256 MiB DIMM of ordinary memory
 * (<source><pagesize> of 4 KiB) bound by its <source><nodemask> to node 1: a restart splits the record
 * (bytes per node) by the DIMM's own binding, its ordinary memory on node 1, not first where the pools have
 * the least room left (node 0's, where the cell's pages are). */
START_TEST(test_dimm_binding_splits_record_after_restart)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");

        kinds_kept_after_restart(topology, "l-dimmsplit", "320",
                                 "<maxMemory slots='2' unit='MiB'>2048</maxMemory><memoryBacking><hugepages>"
                                 "<page size='2' unit='MiB'/></hugepages></memoryBacking><cpu><numa><cell "
                                 "id='0' cpus='0-1' memory='64' unit='MiB'/></numa></cpu><devices><memory "
                                 "model='dimm'><source><pagesize unit='KiB'>4</pagesize><nodemask>1"
                                 "</nodemask></source><target><size unit='MiB'>256</size><node>0</node>"
                                 "</target></memory></devices>",
                                 2u << 20, 64u << 20, 0, 256u << 20);
}
END_TEST

/* A 2 MiB-page guest of two cells (64 MiB, 100 MiB: node 1's pool alone holds the larger) with a 256 MiB
 * DIMM of ordinary memory that nothing binds in cell 1: counted where cell 1's vCPUs run, and a restart
 * splits the record so again, the DIMM's bytes on cell 1's node, not first on the node whose pool has the
 * least room (cell 0's, whose pages were then taken for ordinary memory). */
START_TEST(test_unbound_dimm_split_with_its_cell_after_restart)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");

        kinds_kept_after_restart(
            topology, "l-dimmcell", "420",
            "<maxMemory slots='2' unit='MiB'>2048</maxMemory><memoryBacking><hugepages>"
            "<page size='2' unit='MiB'/></hugepages></memoryBacking><cpu><numa><cell "
            "id='0' cpus='0' memory='64' unit='MiB'/><cell id='1' cpus='1' memory='100' "
            "unit='MiB'/></numa></cpu><devices><memory model='dimm'><source><pagesize "
            "unit='KiB'>4</pagesize></source><target><size unit='MiB'>256</size><node>1"
            "</node></target></memory></devices>",
            2u << 20, 164u << 20, 0, 256u << 20);
}
END_TEST

/* A guest of a 1 GiB cell in 1 GiB pages and a 64 MiB cell in 2 MiB pages, bound to nodes 0-1, its vCPUs
 * kept to node 0's CPUs by <vcpu cpuset>, where node 0 has a 1 GiB pool and no 2 MiB one (full_pool: one
 * that another guest holds): the small cell's pages come from node 1's pool while its vCPU runs on node 0.
 * A restart counts each size on the node the first daemon did. The small cell's pages were taken as node
 * 0's: counted in no pool there, node 1's 1 GiB pool held for 64 MiB it does not give (or, the pool full,
 * the record refused and the guest placed anew). */
static void second_size_restart(bool full_pool, bool forge, const char *numatune)
{
        g_autofree char *xml = NULL;
        g_autoptr(GRegex) node0 = g_regex_new("(<([a-z]+:)?memory node=\"0\" bytes=\")[0-9]+\"", 0, 0, NULL);
        g_autoptr(GRegex) node1 = g_regex_new("<([a-z]+:)?memory node=\"1\" bytes=\"[0-9]+\"/>", 0, 0, NULL);
        g_autofree char *mine = NULL, *moved = NULL, *forged = NULL;
        /* node 0 made 3 GiB, so that a record may say all of it is there */
        static const char *const from[] = {"<page_type size=\"2097152\" count=\"32\"/>",
                                           "<page_type size=\"2097152\" count=\"64\"/>",
                                           "local_memory=\"1073741824\""};
        const char *const to[] = {full_pool ? "<page_type size=\"2097152\" count=\"32\"/>"
                                              "<page_type size=\"1073741824\" count=\"1\"/>"
                                            : "<page_type size=\"1073741824\" count=\"1\"/>",
                                  "<page_type size=\"2097152\" count=\"64\"/>"
                                  "<page_type size=\"1073741824\" count=\"1\"/>",
                                  "local_memory=\"3221225472\""};
        static const uint64_t sizes[] = {2u << 20, 1u << 30};
        g_autofree char *dir = g_dir_make_tmp("placementd-ledger-XXXXXX", NULL);
        g_autofree char *topology = hugepage_host(dir, from, to, 3);
        uint64_t held[2][2];
        virDomainPtr dom, fill = NULL;
        Manager *m;
        const Decision *d;

        m = fixture_manager_new(base, topology, NULL);
        if (full_pool) {
                fill = start_xml("l-fill2m", "64", 1,
                                 "<memoryBacking><hugepages><page size='2' unit='MiB'/></hugepages>"
                                 "</memoryBacking><numatune><memory mode='strict' nodeset='0'/></numatune>");
                ck_assert(spin_known(m, "l-fill2m", 3000));
        }
        xml = g_strdup_printf(
            "<domain type='test'><name>l-second</name><memory unit='MiB'>1088</memory>"
            "<vcpu cpuset='0-3'>2</vcpu><os><type>hvm</type></os><memoryBacking><hugepages>"
            "<page size='1' unit='GiB' nodeset='0'/><page size='2' unit='MiB' nodeset='1'/></hugepages>"
            "</memoryBacking><numatune>%s</numatune><cpu><numa>"
            "<cell id='0' cpus='0' memory='1' unit='GiB'/><cell id='1' cpus='1' memory='64' unit='MiB'/>"
            "</numa></cpu></domain>",
            numatune ? numatune : "<memory mode='strict' nodeset='0-1'/>");
        dom = virDomainCreateXML(conn, xml, 0);
        ck_assert(dom != NULL);
        ck_assert(spin_known(m, "l-second", 3000));
        d = manager_lookup(m, "l-second");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        for (unsigned n = 0; n < 2; n++)
                for (unsigned k = 0; k < 2; k++)
                        held[n][k] = ledger_node_hugepages(manager_ledger(m), n, sizes[k]);
        /* bound to node 0 alone: its small cell's pages are counted in no pool, as placementd says */
        ck_assert_uint_eq(held[0][0], full_pool ? 64u << 20 : 0);
        ck_assert_uint_eq(held[1][0], numatune ? 0 : 64u << 20);
        ck_assert_uint_eq(held[0][1], 1u << 30);
        mine =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_ptr_nonnull(mine);
        free_manager(m);
        if (forge) {
                /* all of it said to be on node 0, whose CPUs its vCPUs run on */
                moved = g_regex_replace(node0, mine, -1, 0, "\\g<1>1140850688\"", 0, NULL);
                forged = g_regex_replace(node1, moved, -1, 0, "", 0, NULL);
                ck_assert_msg(forged && strcmp(forged, moved) != 0, "no memory entry on node 1 in %s", mine);
                ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, forged, "p",
                                                      PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                                 0);
        }
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, "l-second");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(forge || d->adopted, "its own record was not adopted: %s", d->reason);
        for (unsigned n = 0; n < 2; n++)
                for (unsigned k = 0; k < 2; k++) {
                        uint64_t now = ledger_node_hugepages(manager_ledger(m), n, sizes[k]);
                        ck_assert_msg(now == held[n][k],
                                      "node %u, pages of %llu: %llu counted, %llu before (adopted %d: %s)",
                                      n, (unsigned long long)sizes[k], (unsigned long long)now,
                                      (unsigned long long)held[n][k], d->adopted, d->reason);
                }
        stop(dom);
        if (fill)
                stop(fill);
        free_manager(m);
        g_unlink(topology);
        g_rmdir(dir);
}

START_TEST(test_second_size_counted_in_its_pool_after_restart)
{
        second_size_restart(false, false, NULL);
}
END_TEST

START_TEST(test_forged_record_puts_no_second_size_pages_off_the_pools)
{
        second_size_restart(false, true, NULL);
}
END_TEST

/* Its own records of the small cell bound to node 0 alone (no 2 MiB pool there) stay adopted. */
START_TEST(test_second_size_poolless_binding_adopted)
{
        second_size_restart(false, false, "<memory mode='strict' nodeset='0'/>");
        second_size_restart(false, false,
                            "<memory mode='strict' nodeset='0-1'/><memnode cellid='0' mode='strict' "
                            "nodeset='0'/><memnode cellid='1' mode='strict' nodeset='0'/>");
}
END_TEST

START_TEST(test_second_size_record_adopted_beside_a_full_pool)
{
        second_size_restart(true, false, NULL);
}
END_TEST

/*
 * A guest of a 64 MiB cell in 2 MiB pages (node 0's pool: <page nodeset='0'>) and an 800 MiB ordinary cell,
 * bound to nodes 0-1, beside a guest holding pool_mib of node 1's pool and one holding most of node 0's
 * general memory (its ordinary cell then goes to node 1 but for what node 0 still holds): a restart counts
 * each node's pages and ordinary memory as the first daemon did. memnode binds the hugepage cell, or is "".
 */
static void partial_hugepages_restart(const char *suffix, const char *pool_mib, const char *memnode)
{
        g_autofree char *topology = test_topology_path("two-node-hugepages.xml");
        g_autofree char *pool_name = g_strdup_printf("l-fpool%s", suffix);
        g_autofree char *memory_name = g_strdup_printf("l-fmem%s", suffix);
        g_autofree char *name = g_strdup_printf("l-partial%s", suffix);
        g_autofree char *xml = g_strdup_printf(
            "<memoryBacking><hugepages><page size='2' unit='MiB' nodeset='0'/></hugepages></memoryBacking>"
            "<numatune><memory mode='strict' nodeset='0-1'/>%s</numatune><cpu><numa>"
            "<cell id='0' cpus='0' memory='64' unit='MiB'/>"
            "<cell id='1' cpus='1' memory='800' unit='MiB'/></numa></cpu>",
            memnode);
        uint64_t pages[2], ordinary[2];
        virDomainPtr dom, fill_pool, fill_memory;
        Manager *m;
        const Decision *d;

        m = fixture_manager_new(base, topology, NULL);
        fill_pool =
            start_xml(pool_name, pool_mib, 1,
                      "<memoryBacking><hugepages><page size='2' unit='MiB'/></hugepages></memoryBacking>"
                      "<numatune><memory mode='strict' nodeset='1'/></numatune>");
        ck_assert(spin_known(m, pool_name, 3000));
        fill_memory =
            start_xml(memory_name, "900", 1, "<numatune><memory mode='strict' nodeset='0'/></numatune>");
        ck_assert(spin_known(m, memory_name, 3000));
        dom = start_xml(name, "864", 2, xml);
        ck_assert(spin_known(m, name, 3000));
        d = manager_lookup(m, name);
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        for (unsigned n = 0; n < 2; n++) {
                pages[n] = ledger_node_hugepages(manager_ledger(m), n, 2u << 20);
                ordinary[n] = ledger_node_memory(manager_ledger(m), n);
        }
        ck_assert_uint_eq(pages[0], 64u << 20);
        ck_assert_uint_eq(pages[1], g_ascii_strtoull(pool_mib, NULL, 10) << 20);
        free_manager(m);
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, name);
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->adopted, "its own record was not adopted: %s", d->reason);
        for (unsigned n = 0; n < 2; n++) {
                ck_assert_uint_eq(ledger_node_hugepages(manager_ledger(m), n, 2u << 20), pages[n]);
                ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), n), ordinary[n]);
        }
        stop(dom);
        stop(fill_pool);
        stop(fill_memory);
        free_manager(m);
}

/* The hugepage cell bound to node 0 by a <memnode>: at a restart the record's bytes on node 0 are first
 * that cell's, which its <memnode> keeps there: node 0's pool stays held, node 1's is not taken for pages
 * that are not there. */
START_TEST(test_partial_hugepages_bound_counted_alike_after_restart)
{
        partial_hugepages_restart("b", "32", "<memnode cellid='0' mode='strict' nodeset='0'/>");
}
END_TEST

/* Neither cell bound by a <memnode>, node 1's pool taken by another guest: at a restart the record's bytes
 * are first ordinary memory where the pools have the least room for pages: on node 1, the pages back on
 * node 0, and the record adopted (it was refused as more pages than node 1's pool holds, the guest placed
 * anew at every restart). */
START_TEST(test_partial_hugepages_unbound_cells_adopted_alike)
{
        partial_hugepages_restart("u", "128", "");
}
END_TEST

/* A hand-pinned domain's record from an older placementd counts its memory where the pins moved its
 * vCPUs, not on the node its binding keeps it: a skipped record's memory is not taken from it, so the
 * record is adopted and the hand pin stands (refused, the domain was placed anew and its pin undone). */
START_TEST(test_skipped_record_memory_not_read)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-old", "4096", 1, NULL);
        g_autofree char *record = NULL;
        const Decision *d;
        unsigned node, other, cpu;

        ck_assert(spin_known(m, "l-old", 3000));
        d = manager_lookup(m, "l-old");
        node = (unsigned)cpuset_next(d->plan->nodes, 0);
        other = 1 - node;
        cpu = other == 0 ? 2 : 6;
        free_manager(m);
        pin(dom, 0, cpu);
        record = g_strdup_printf("<domain><decision result='skipped' policy='explicit' vcpu-pin='core' "
                                 "memory-binding='applied' nodes='%u'><vcpu id='0' cpu='%u' cpuset='%u'/>"
                                 "<memory node='%u' bytes='%llu'/><reason>pinned by hand</reason></decision>"
                                 "</domain>",
                                 other, cpu, cpu, other, 4ull << 30);
        forge_record(dom, record);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        d = manager_lookup(m, "l-old");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->adopted && d->result == DECISION_SKIPPED, "%s: %s",
                      decision_result_to_string(d->result), d->reason);
        ck_assert_int_eq(d->plan->vcpu_pu[0], (int)cpu);
        ck_assert_uint_eq(d->plan->node_memory[node], 4ull << 30); /* where the binding keeps it */
        stop(dom);
        free_manager(m);
}
END_TEST

/* Records whose memory no binding holds all of are adopted at a restart: with MemoryBinding=no, a guest
 * whose cell 0 a <memnode> binds and cell 1 nothing, and a <vcpu cpuset> guest whose memory spilled past
 * its set's nodes. They were refused at every restart. */
START_TEST(test_records_of_unbound_memory_adopted)
{
        static const char *const extras[] = {
            "<cpu><numa><cell id='0' cpus='0-1' memory='1' unit='GiB'/><cell id='1' cpus='2-3' memory='1' "
            "unit='GiB'/></numa></cpu><numatune><memnode cellid='0' mode='strict' nodeset='1'/></numatune>",
            NULL,
        };
        static const char *const config = "[Placement]\nMemoryBinding=no\n";

        for (unsigned i = 0; i < G_N_ELEMENTS(extras); i++) {
                Manager *m = fixture_manager_new(base, TOPOLOGY, config);
                virDomainPtr dom;
                const Decision *d;

                if (extras[i]) {
                        dom = start_xml("l-unbound", "2048", 4, extras[i]);
                } else {
                        g_autofree char *xml = g_strdup_printf(
                            "<domain type='test'><name>l-unbound</name><memory unit='GiB'>20</memory>"
                            "<vcpu cpuset='0-3'>1</vcpu><os><type>hvm</type></os></domain>");
                        dom = virDomainCreateXML(conn, xml, 0);
                        ck_assert_ptr_nonnull(dom);
                }
                ck_assert(spin_known(m, "l-unbound", 3000));
                d = manager_lookup(m, "l-unbound");
                ck_assert_msg(d->plan->node_memory[0] && d->plan->node_memory[1], "case %u: %s: %s", i,
                              decision_result_to_string(d->result), d->reason);
                free_manager(m);
                m = fixture_manager_new(base, TOPOLOGY, config);
                d = manager_lookup(m, "l-unbound");
                ck_assert_ptr_nonnull(d);
                ck_assert_msg(d->adopted, "case %u: its own record was refused: %s", i, d->reason);
                stop(dom);
                free_manager(m);
        }
}
END_TEST

/* Hugepages bound to a node without a pool of their size: placed, the ledger holding none there; its own
 * record is adopted at a restart (it was refused at every one). */
START_TEST(test_poolless_binding_record_adopted)
{
        static const char *const from[] = {"<page_type size=\"2097152\" count=\"64\"/>"}, *const to[] = {""};
        g_autofree char *dir = g_dir_make_tmp("placementd-ledger-XXXXXX", NULL);
        g_autofree char *topology = hugepage_host(dir, from, to, 1);
        virDomainPtr dom;
        Manager *m;
        const Decision *d;

        m = fixture_manager_new(base, topology, NULL);
        dom = start_xml("l-nopool", "32", 1,
                        "<memoryBacking><hugepages/></memoryBacking><numatune><memory mode='strict' "
                        "nodeset='1'/></numatune>");
        ck_assert(spin_known(m, "l-nopool", 3000));
        d = manager_lookup(m, "l-nopool");
        ck_assert_msg(d->result == DECISION_PLACED && strstr(d->reason, "cannot all be backed"), "%s: %s",
                      decision_result_to_string(d->result), d->reason);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)d->plan->vcpu_pu[0]), 1);
        free_manager(m);
        m = fixture_manager_new(base, topology, NULL);
        d = manager_lookup(m, "l-nopool");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->adopted, "its own record was not adopted at the restart: %s", d->reason);
        stop(dom);
        free_manager(m);
        g_unlink(topology);
        g_rmdir(dir);
}
END_TEST

/* The live emulator pin of dom, as a bit mask of CPUs 0-7. */
static unsigned emulator_mask(virDomainPtr dom)
{
        unsigned char map[1] = {0};

        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        return map[0];
}

static void pin_emulator(virDomainPtr dom, unsigned cpu)
{
        unsigned char map[1] = {(unsigned char)(1u << cpu)};

        ck_assert_int_eq(virDomainPinEmulator(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
}

/* Whether the record in dom's metadata names no emulator pin. */
static bool recorded_no_emulator(virDomainPtr dom)
{
        g_autoptr(DomainSpec) live = NULL;

        ck_assert_int_eq(virt_domain_read_spec(dom, false, &live, NULL), 0);
        ck_assert_ptr_nonnull(live->decision);
        return !live->decision->emulator || cpuset_is_empty(live->decision->emulator);
}

/* Asserts that the emulator of the domain called name was followed onto CPU cpu: its decision pins no
 * emulator, its record names none, the CPU is held for it, the emulator still runs there. */
static void assert_hand_emulator(Manager *m, virDomainPtr dom, const char *name, unsigned cpu)
{
        const Decision *d = manager_lookup(m, name);
        int pu = topology_pu_by_os(manager_topology(m), cpu);
        g_autofree char *emu = cpuset_format(d->plan->emulator_pin);

        ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin), "%s: emulator pin %s in its decision", name,
                      emu);
        ck_assert(recorded_no_emulator(dom));
        ck_assert_int_ge(pu, 0);
        ck_assert_msg(ledger_pu_held(manager_ledger(m), (unsigned)pu) == 1, "%s: CPU %u not held (%s)", name,
                      cpu, d->reason);
        ck_assert_uint_eq(emulator_mask(dom), 1u << cpu);
}

/* libvirtd sends a tunable event for placementd's own emulator pin too: that echo is not read back (a
 * start cost three more calls into libvirtd for it), and the decision stays as it was. */
START_TEST(test_own_emulator_pin_echo_not_read)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-echo", "512", 1, NULL);
        virTypedParameter event = {.field = "cputune.emulatorpin", .type = VIR_TYPED_PARAM_STRING};
        g_autofree char *own = NULL, *reason = NULL;
        const Decision *d;
        uint64_t before;

        ck_assert(spin_known(m, "l-echo", 3000));
        d = manager_lookup(m, "l-echo");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        own = cpuset_format(d->plan->emulator_pin);
        reason = g_strdup(d->reason);
        before = m->hand_pin_follows;
        event.value.s = own;
        manager_tunable(m, dom, &event, 1); /* as libvirtd sends it; the test driver sends none */
        spin_known(m, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert_uint_eq(m->hand_pin_follows, before);
        d = manager_lookup(m, "l-echo");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_str_eq(d->reason, reason);
        stop(dom);
        free_manager(m);
}
END_TEST

/* A start whose live definition pins no emulator (libvirt keeps a live pin there) does not ask libvirt
 * where the emulator runs: its default, the <vcpu cpuset> or every CPU, is nobody's pin; nor does a
 * re-placement whose live definition pins it where placementd did. A running domain whose emulator is
 * pinned elsewhere is asked (the hand pin's own test). */
START_TEST(test_unpinned_emulator_not_read_at_start)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr plain = start_xml("l-noemu", "512", 1, NULL);
        g_autofree char *error = NULL;
        virDomainPtr cpuset =
            virDomainCreateXML(conn,
                               "<domain type='test'><name>l-noemu-set</name><memory unit='MiB'>512</memory>"
                               "<vcpu cpuset='4-7'>1</vcpu><os><type>hvm</type></os></domain>",
                               0);

        ck_assert_ptr_nonnull(cpuset);
        ck_assert(spin_known(m, "l-noemu", 3000));
        ck_assert(spin_known(m, "l-noemu-set", 3000));
        ck_assert_int_eq(manager_lookup(m, "l-noemu")->result, DECISION_PLACED);
        ck_assert_int_eq(manager_lookup(m, "l-noemu-set")->result, DECISION_PLACED);
        ck_assert(!manager_lookup(m, "l-noemu")->plan->user_emulator_floating);
        ck_assert_uint_eq(m->emulator_pin_reads, 0);
        ck_assert(!cpuset_is_empty(manager_lookup(m, "l-noemu")->plan->emulator_pin));
        ck_assert_int_eq(manager_replace(m, "l-noemu", &error), 0);
        ck_assert_int_eq(manager_lookup(m, "l-noemu")->result, DECISION_PLACED);
        ck_assert_uint_eq(m->emulator_pin_reads, 0);
        stop(plain);
        stop(cpuset);
        free_manager(m);
}
END_TEST

/* A placed domain whose emulator someone pins elsewhere (virsh emulatorpin --live): at the tunable events
 * (once for a burst), and by the reconcile without one, the pin is the owner's: the decision and the record
 * pin no emulator, the CPU is held for it (no later domain is placed there as free); a restart (a pin made
 * while placementd was down too) adopts the record and holds it again; replace leaves it where it is. */
START_TEST(test_hand_emulator_pin_followed)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, NULL);
        virDomainPtr dom = start_xml("l-emu", "512", 1, NULL), later[2];
        virTypedParameter event = {.field = "cputune.emulatorpin", .type = VIR_TYPED_PARAM_STRING};
        g_autofree char *error = NULL;
        char list[4];
        const Decision *d;
        unsigned hand, hand2;
        uint64_t before;

        ck_assert(spin_known(m, "l-emu", 3000));
        d = manager_lookup(m, "l-emu");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        /* CPUs 0-3 are node 0's, 4-7 node 1's: two CPUs of two cores of the other node */
        hand = cpuset_has(d->plan->nodes, 0) ? 6 : 2;
        hand2 = hand - 2;

        /* pinned in a loop, ending on hand: one read of the domain for the burst, the last pin followed */
        before = m->hand_pin_follows;
        for (unsigned i = 0; i < 20; i++) {
                unsigned cpu = i % 2 ? hand : hand2;

                pin_emulator(dom, cpu);
                g_snprintf(list, sizeof(list), "%u", cpu);
                event.value.s = list;
                manager_tunable(m, dom, &event, 1); /* as libvirtd sends it; the test driver sends none */
        }
        spin_known(m, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert_msg(m->hand_pin_follows - before <= 2, "%" G_GUINT64_FORMAT " reads for one burst",
                      m->hand_pin_follows - before);
        assert_hand_emulator(m, dom, "l-emu", hand);
        /* followed without waiting for a reconcile, and said: show would otherwise print "(not pinned)"
         * with nothing to say why */
        d = manager_lookup(m, "l-emu");
        ck_assert_msg(strstr(d->reason, "the emulator stays where it was pinned outside placementd") &&
                          !strstr(d->reason, "the emulator shares"),
                      "%s", d->reason);

        free_manager(m);
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "l-emu", 3000));
        ck_assert(manager_lookup(m, "l-emu")->adopted);
        assert_hand_emulator(m, dom, "l-emu", hand);

        free_manager(m);
        pin_emulator(dom, hand2); /* while placementd is down */
        m = fixture_manager_new(base, TOPOLOGY, NULL);
        ck_assert(spin_known(m, "l-emu", 3000));
        assert_hand_emulator(m, dom, "l-emu", hand2);
        ck_assert_uint_eq(
            ledger_pu_held(manager_ledger(m), (unsigned)topology_pu_by_os(manager_topology(m), hand)), 0);

        ck_assert_msg(manager_replace(m, "l-emu", &error) == 0, "%s", error);
        assert_hand_emulator(m, dom, "l-emu", hand2);
        /* the definition has no <emulatorpin>: the reason names where the pin came from */
        d = manager_lookup(m, "l-emu");
        ck_assert_msg(strstr(d->reason, "the emulator stays where it was pinned outside placementd") &&
                          !strstr(d->reason, "<cputune><emulatorpin>"),
                      "%s", d->reason);

        pin_emulator(dom, hand); /* no event: the reconcile sees it */
        manager_reconcile(m);
        assert_hand_emulator(m, dom, "l-emu", hand);
        d = manager_lookup(m, "l-emu");
        g_snprintf(list, sizeof(list), "%u", hand);
        ck_assert_msg(strstr(d->reason, "pinned outside placementd (virsh emulatorpin: on ") &&
                          strstr(d->reason, list),
                      "%s", d->reason);

        /* two more domains on the four cores: not on the core held for its emulator */
        for (unsigned i = 0; i < 2; i++) {
                g_autofree char *name = g_strdup_printf("l-emu-later%u", i);
                int pu;
                later[i] = start_xml(name, "512", 1, NULL);
                ck_assert(spin_known(m, name, 3000));
                d = manager_lookup(m, name);
                pu = topology_pu_by_os(manager_topology(m), hand);
                ck_assert_msg(d->plan->vcpu_pu[0] >= 0 &&
                                  manager_topology(m)->pus[d->plan->vcpu_pu[0]].core !=
                                      manager_topology(m)->pus[pu].core,
                              "%s placed on the core of CPU %u, held for l-emu's emulator", name, hand);
        }
        stop(later[0]);
        stop(later[1]);
        stop(dom);
        free_manager(m);
}
END_TEST

static Suite *ledger_suite(void)
{
        Suite *s = suite_create("manager ledger");
        TCase *tc = tcase_create("test driver");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_skipped_floating_then_pinned);
        tcase_add_test(tc, test_left_alone_then_pinned);
        tcase_add_test(tc, test_pmem_domain_not_placed_again);
        tcase_add_test(tc, test_hand_pins_keep_memory_where_bound);
        tcase_add_test(tc, test_crashed_but_running_kept);
        tcase_add_test(tc, test_forged_skipped_record_counts_memory);
        tcase_add_test(tc, test_forged_record_memory_off_its_binding);
        tcase_add_test(tc, test_hugepage_record_adopted);
        tcase_add_test(tc, test_hugepage_cells_hand_pin_recorded);
        tcase_add_test(tc, test_forged_record_puts_no_pages_off_the_pools);
        tcase_add_test(tc, test_own_hugepage_records_adopted);
        tcase_add_test(tc, test_forged_record_moves_no_cell_memory);
        tcase_add_test(tc, test_forged_record_moves_no_cell_pages);
        tcase_add_test(tc, test_own_record_of_odd_page_cells_adopted);
        tcase_add_test(tc, test_page_per_cell_counted);
        tcase_add_test(tc, test_partial_hugepages_counted_alike_after_restart);
        tcase_add_test(tc, test_page_sizes_counted_alike_after_restart);
        tcase_add_test(tc, test_dimm_page_size_counted_alike_after_restart);
        tcase_add_test(tc, test_dimm_nodemask_counted_alike_after_restart);
        tcase_add_test(tc, test_dimm_binding_splits_record_after_restart);
        tcase_add_test(tc, test_unbound_dimm_split_with_its_cell_after_restart);
        tcase_add_test(tc, test_second_size_counted_in_its_pool_after_restart);
        tcase_add_test(tc, test_second_size_record_adopted_beside_a_full_pool);
        tcase_add_test(tc, test_forged_record_puts_no_second_size_pages_off_the_pools);
        tcase_add_test(tc, test_second_size_poolless_binding_adopted);
        tcase_add_test(tc, test_partial_hugepages_bound_counted_alike_after_restart);
        tcase_add_test(tc, test_partial_hugepages_unbound_cells_adopted_alike);
        tcase_add_test(tc, test_skipped_record_memory_not_read);
        tcase_add_test(tc, test_records_of_unbound_memory_adopted);
        tcase_add_test(tc, test_poolless_binding_record_adopted);
        tcase_add_test(tc, test_hand_emulator_pin_followed);
        tcase_add_test(tc, test_own_emulator_pin_echo_not_read);
        tcase_add_test(tc, test_unpinned_emulator_not_read_at_start);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(ledger_suite)
