/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A seeded random walk on libvirt's test driver: starts, stops, a name reused at once, replace, rebalance,
 * heal, reconciles, restarts of the daemon, hand pins and vCPU hot-plug, with the loop run between them.
 * After each step the ledger must equal what runs: each running domain decided once, each decision
 * counted as its plan, each pin of it live, nothing counted for what no longer runs; after a rebalance, no
 * two vCPUs placementd placed on one core while one is free (check_no_sharing()). WALK_SEED=N and
 * WALK_STEPS=N choose the walk (1 and 150 by default); a failure names the step and the operation.
 * WALK_LOAD=1 adds samples of measured load (idle, half busy and busy guests, now and then a host-side
 * time read at 0, a wrong vCPU count, a new QEMU, a domain placementd does not know), whose fractions
 * follow the real time between samples.
 * WALK_TOPOLOGY=SPEC walks another host of 8 CPUs (the test driver's), for example
 * "synthetic:pack:1 numa:2(memory=8GiB) l3:1 core:2 pu:2"; the after-rebalance check, which holds on one
 * node (heal never spreads a guest over more nodes), is left out there.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>
#include <time.h>

#include "config.h"
#include "manager-fixture.h"
#include "test-util.h"
#include "virt-domain.h"
#include "virt-stats.h"

#define TOPOLOGY "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:4 pu:2"
#define NAMES    6

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

/* Runs the loop for about ms milliseconds. */
static void spin(unsigned ms)
{
        fixture_spin_known(base, NULL, NULL, ms);
}

static virDomainPtr start(unsigned k, unsigned vcpus, unsigned current)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>w%u</name><memory unit='MiB'>512</memory>"
                            "<vcpu current='%u'>%u</vcpu><os><type>hvm</type></os></domain>",
                            k, current, vcpus);
        return virDomainCreateXML(conn, xml, 0);
}

/* The ledger equals what runs. step: for the messages. */
static void check(Manager *m, unsigned step, const char *what)
{
        virDomainPtr *doms = NULL;
        int n = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
        const Ledger *l = manager_ledger(m);
        const Topology *t = manager_topology(m);
        g_autofree unsigned *load = g_new0(unsigned, t->ncores);
        unsigned decided = 0;

        ck_assert_int_ge(n, 0);
        for (int i = 0; i < n; i++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                const Decision *d;
                const Plan *counted;
                CpuSet **pins = NULL;

                virDomainGetUUIDString(doms[i], uuid);
                d = manager_lookup(m, uuid);
                ck_assert_msg(d, "step %u (%s): %s runs undecided", step, what, virDomainGetName(doms[i]));
                decided++;
                if (!d->plan) {
                        virDomainFree(doms[i]);
                        continue;
                }
                counted = ledger_lookup(l, uuid);
                ck_assert_msg(counted, "step %u (%s): %s not counted", step, what, d->name);
                ck_assert_uint_eq(counted->nvcpus, d->plan->nvcpus);
                ck_assert_int_eq(
                    virt_domain_get_vcpu_pins(doms[i], d->plan->nvcpus, d->plan->vcpu_ids, &pins, NULL), 0);
                for (unsigned v = 0; v < d->plan->nvcpus; v++) {
                        g_autofree char *have = cpuset_format(pins[v]),
                                        *want = cpuset_format(counted->vcpu_pins[v]);
                        ck_assert_msg(cpuset_equal(counted->vcpu_pins[v], d->plan->vcpu_pins[v]),
                                      "step %u (%s): %s vCPU %u decided and counted apart", step, what,
                                      d->name, v);
                        if (d->result != DECISION_UNPLACEABLE && !cpuset_is_empty(counted->vcpu_pins[v]))
                                ck_assert_msg(cpuset_equal(pins[v], counted->vcpu_pins[v]),
                                              "step %u (%s): %s (%s) vCPU %u runs on %s, counted on %s",
                                              step, what, d->name, decision_result_to_string(d->result), v,
                                              have, want);
                        if (counted->vcpu_pu[v] >= 0)
                                load[t->pus[counted->vcpu_pu[v]].core]++;
                }
                virt_pins_free(pins, d->plan->nvcpus);
                {
                        unsigned vc = 0;
                        virDomainInfo info;
                        virDomainGetInfo(doms[i], &info);
                        vc = info.nrVirtCpu;
                        ck_assert_msg(vc == d->plan->nvcpus || d->result == DECISION_SKIPPED,
                                      "step %u (%s): %s runs %u vCPUs, decided %u", step, what, d->name, vc,
                                      d->plan->nvcpus);
                }
                virDomainFree(doms[i]);
        }
        free(doms);
        ck_assert_msg(ledger_count(l) <= decided, "step %u (%s): ledger counts %u, %u run", step, what,
                      ledger_count(l), decided);
        for (unsigned c = 0; c < t->ncores; c++)
                ck_assert_msg(ledger_core_load(l, c) == load[c], "step %u (%s): core %u counts %u, plans %u",
                              step, what, c, ledger_core_load(l, c), load[c]);
}

/* A running domain's decision with a plan, and its load (NULL: not measured). */
typedef struct Running {
        const Decision *d;
        const DomainLoad *dl;
        const double *seen; /* the load the engine takes per vCPU; NULL: every vCPU busy */
} Running;

/* The decisions of the domains that run, in libvirt's order (valid until the manager next runs). */
static GArray *running(Manager *m)
{
        GArray *out = g_array_new(FALSE, FALSE, sizeof(Running));
        virDomainPtr *doms = NULL;
        int n = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);

        for (int i = 0; i < n; i++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                Running r;
                virDomainGetUUIDString(doms[i], uuid);
                r.d = manager_lookup(m, uuid);
                r.dl = manager_load(m, uuid);
                r.seen = r.d && r.d->plan && r.dl && r.dl->nvcpus == r.d->plan->nvcpus
                             ? domain_load_vcpu_busy(r.dl)
                             : NULL;
                if (r.d && r.d->plan)
                        g_array_append_val(out, r);
                virDomainFree(doms[i]);
        }
        free(doms);
        return out;
}

/* The decisions of the domains that run, for a failure's message: each vCPU's pin, the PU it is counted
 * on and its load as the engine takes it, the emulator pin and the host-side load. */
static char *describe(Manager *m)
{
        GString *who = g_string_new(NULL);
        g_autoptr(GArray) rs = running(m);

        for (unsigned i = 0; i < rs->len; i++) {
                const Running *r = &g_array_index(rs, Running, i);
                const Plan *p = r->d->plan;
                g_autofree char *emu = cpuset_format(p->emulator_pin);
                g_string_append_printf(who, "\n  %s %s:", r->d->name,
                                       decision_result_to_string(r->d->result));
                for (unsigned v = 0; v < p->nvcpus; v++) {
                        g_autofree char *pins = cpuset_format(p->vcpu_pins[v]);
                        g_string_append_printf(who, " vCPU %u on %s (PU %d, %s %.2f),", v, pins,
                                               p->vcpu_pu[v], r->seen ? "measured" : "unknown",
                                               r->seen ? r->seen[v] : 1.0);
                }
                g_string_append_printf(who, " emulator on %s, host %.2f", emu,
                                       r->dl ? r->dl->host_busy : 0.0);
        }
        return g_string_free(who, FALSE);
}

/* After a rebalance: no core holds two vCPUs placementd placed while a core it may use is free: no vCPU
 * and no measured host-side load runs there (heal never moves a busy vCPU beside host-side threads, however
 * thin, for one beside idle vCPUs: docs/algorithm.md, "Never a loss"); and no core holds two busy ones
 * (unknown load is busy) while a core it may use holds no vCPU and under half a core of host-side load.
 * before: describe() before it, report: what it said. */
static void check_no_sharing(Manager *m, unsigned step, bool reserved, const char *before,
                             const char *report)
{
        const Ledger *l = manager_ledger(m);
        const Topology *t = manager_topology(m);
        g_autofree unsigned *own = g_new0(unsigned, t->ncores);
        g_autofree double *host = g_new0(double, t->ncores);
        g_autofree unsigned *busy = g_new0(unsigned, t->ncores);
        g_autofree char *after = describe(m);
        g_autoptr(GArray) rs = running(m);
        int free_core = -1, shared = -1, calm_core = -1, contended = -1;

        for (unsigned i = 0; i < rs->len; i++) {
                const Running *r = &g_array_index(rs, Running, i);
                const Plan *p = r->d->plan;
                if (r->d->result == DECISION_PLACED || r->d->result == DECISION_OVERCOMMITTED)
                        for (unsigned v = 0; v < p->nvcpus; v++)
                                if (p->vcpu_pu[v] >= 0) {
                                        unsigned c = t->pus[p->vcpu_pu[v]].core;
                                        own[c]++;
                                        busy[c] += !r->seen || r->seen[v] >= LOAD_BUSY_THRESHOLD;
                                }
                if (r->dl && r->dl->host_busy > 0)
                        CPUSET_FOREACH (os, p->emulator_pin) {
                                int pu = topology_pu_by_os(t, (unsigned)os);
                                if (pu >= 0)
                                        host[t->pus[pu].core] +=
                                            r->dl->host_busy / cpuset_count(p->emulator_pin);
                        }
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                bool usable = ledger_core_free(l, c) && !(reserved && c == 0);
                if (usable && !(host[c] > 0))
                        free_core = (int)c;
                if (usable && host[c] < LOAD_BUSY_THRESHOLD)
                        calm_core = (int)c;
                if (own[c] >= 2 && ledger_core_load(l, c) == own[c])
                        shared = (int)c;
                if (busy[c] >= 2 && ledger_core_load(l, c) == own[c])
                        contended = (int)c;
        }
        ck_assert_msg(calm_core < 0 || contended < 0,
                      "step %u: after a rebalance core %d holds two busy vCPUs, core %d holds none%s%s\n  "
                      "rebalance said: %s\n  before it:%s",
                      step, contended, calm_core, reserved ? " (CPUs 0-1 reserved)" : "", after, report,
                      before);
        ck_assert_msg(free_core < 0 || shared < 0,
                      "step %u: after a rebalance core %d shared, core %d free%s%s\n  rebalance said: %s\n  "
                      "before it:%s",
                      step, shared, free_core, reserved ? " (CPUs 0-1 reserved)" : "", after, report,
                      before);
}

/* Cumulative counters of the made-up statistics, per domain name: a busy or idle guest, now and then read
 * back or with a wrong vCPU count, and a domain placementd does not know. */
static GHashTable *counters;

static void note_stats(Manager *m, GRand *r)
{
        g_autoptr(GHashTable) table =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)domain_cpu_stats_free);
        virDomainPtr *doms = NULL;
        int n = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
        static int64_t last;
        int64_t now = g_get_monotonic_time();
        uint64_t elapsed_ns = last ? (uint64_t)(now - last) * 1000 : 1000000;

        last = now;
        for (int i = 0; i < n; i++) {
                char uuid[VIR_UUID_STRING_BUFLEN];
                DomainCpuStats *st = g_new0(DomainCpuStats, 1);
                virDomainInfo info;
                uint64_t *c;

                virDomainGetUUIDString(doms[i], uuid);
                virDomainGetInfo(doms[i], &info);
                if (!(c = g_hash_table_lookup(counters, uuid))) {
                        c = g_new0(uint64_t, 4);
                        c[3] = (uint64_t)g_rand_int_range(r, 0, 3); /* 0 idle, 1 half busy, 2 busy */
                        g_hash_table_insert(counters, g_strdup(uuid), c);
                }
                st->nvcpus = st->nvcpu_times = info.nrVirtCpu + (g_rand_int_range(r, 0, 20) == 0);
                st->vcpu_time_ns = g_new0(uint64_t, st->nvcpu_times);
                st->vcpu_wait_ns = g_rand_boolean(r) ? g_new0(uint64_t, st->nvcpu_times) : NULL;
                for (unsigned v = 0; v < 2; v++)
                        c[v] += elapsed_ns * c[3] / 2;
                for (unsigned v = 0; v < st->nvcpu_times; v++) {
                        st->vcpu_time_ns[v] = c[v % 2];
                        if (st->vcpu_wait_ns)
                                st->vcpu_wait_ns[v] = c[v % 2] / 10;
                }
                c[2] += elapsed_ns / 20;
                st->host_ns = g_rand_int_range(r, 0, 10) == 0 ? 0 : c[2];
                st->total_ns = c[2] + c[0] + c[1];
                if (g_rand_int_range(r, 0, 30) == 0) { /* a new QEMU from now on */
                        memset(c, 0, sizeof(uint64_t) * 3);
                        c[3] = (uint64_t)g_rand_int_range(r, 0, 3);
                }
                g_hash_table_insert(table, g_strdup(uuid), st);
                virDomainFree(doms[i]);
        }
        free(doms);
        {
                DomainCpuStats *st = g_new0(DomainCpuStats, 1);
                st->nvcpus = st->nvcpu_times = 3;
                st->vcpu_time_ns = g_new0(uint64_t, 3);
                g_hash_table_insert(table, g_strdup("00000000-0000-4000-8000-000000000000"), st);
        }
        manager_note_stats(m, table);
}

static virDomainPtr lookup(unsigned k)
{
        g_autofree char *name = g_strdup_printf("w%u", k);
        return virDomainLookupByName(conn, name);
}

START_TEST(test_walk)
{
        const char *seed_env = getenv("WALK_SEED");
        const char *steps_env = getenv("WALK_STEPS");
        unsigned seed = seed_env ? (unsigned)atoi(seed_env) : 1;
        unsigned steps = steps_env ? (unsigned)atoi(steps_env) : 150;
        g_autofree char *dir = g_dir_make_tmp("placementd-test-walk-XXXXXX", NULL);
        g_autofree char *save = g_build_filename(dir, "save", NULL);
        g_autofree char *journal = g_build_filename(dir, "journal", NULL);
        const char *conf = "[Placement]\nHealInterval=1\nLoadWarmup=0\n";
        const char *conf_reserved = "[Placement]\nHealInterval=1\nLoadWarmup=0\nReservedCPUs=0-1\n";
        const char *topology = getenv("WALK_TOPOLOGY") ? getenv("WALK_TOPOLOGY") : TOPOLOGY;
        bool one_node = !getenv("WALK_TOPOLOGY");
        Manager *m = fixture_manager_new_journal(base, topology, conf, journal);
        GRand *r = g_rand_new_with_seed(seed);
        bool reserved = false;

        counters = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        ck_assert_ptr_nonnull(dir);
        fprintf(stderr, "WALK_SEED=%u WALK_STEPS=%u\n", seed, steps);

        for (unsigned s = 0; s < steps; s++) {
                unsigned op = (unsigned)g_rand_int_range(r, 0, 19),
                         k = (unsigned)g_rand_int_range(r, 0, NAMES);
                virDomainPtr dom = lookup(k);
                g_autofree char *error = NULL, *report = NULL, *what = NULL, *before = NULL;
                char name[16];

                snprintf(name, sizeof(name), "w%u", k);
                what = g_strdup_printf("op %u on w%u", op, k);
                switch (op) {
                case 0:
                case 1:
                        if (!dom) {
                                unsigned vcpus = (unsigned)g_rand_int_range(r, 1, 3);
                                dom = start(k, vcpus, (unsigned)g_rand_int_range(r, 1, (gint32)vcpus + 1));
                        }
                        break;
                case 2:
                        if (dom)
                                virDomainDestroy(dom);
                        break;
                case 3:
                        manager_replace(m, name, &error);
                        break;
                case 4:
                        before = describe(m);
                        manager_rebalance(m, 4, &report);
                        break;
                case 5:
                        manager_heal(m, &report);
                        break;
                case 6:
                        manager_reconcile(m);
                        break;
                case 7:
                        fixture_manager_free(base, m);
                        m = fixture_manager_new_journal(base, topology, reserved ? conf_reserved : conf,
                                                        journal);
                        break;
                case 8:
                        if (dom) {
                                unsigned char map = (unsigned char)(1u << g_rand_int_range(r, 0, 8));
                                virDomainPinVcpuFlags(dom, 0, &map, 1,
                                                      VIR_DOMAIN_AFFECT_CURRENT); /* may be refused */
                        }
                        break;
                case 9: /* the name reused by a new domain before the events are read */
                        if (dom) {
                                virDomainDestroy(dom);
                                virDomainFree(dom);
                                dom = start(k, 2, (unsigned)g_rand_int_range(r, 1, 3));
                        }
                        break;
                case 10: /* stopped and started again, a reconcile before the events */
                        if (dom) {
                                virDomainDestroy(dom);
                                virDomainFree(dom);
                                dom = start(k, 2, 2);
                                manager_reconcile(m);
                        }
                        break;
                case 11: /* vCPU hot-plug, seen by the reconcile */
                        if (dom) {
                                virDomainInfo info;
                                virDomainGetInfo(dom, &info);
                                virDomainSetVcpusFlags(dom, info.nrVirtCpu == 1 ? 2 : 1,
                                                       VIR_DOMAIN_AFFECT_LIVE);
                        }
                        break;
                case 12: /* a reload reserving CPUs 0-1, or not */
                        reserved = !reserved;
                        fixture_reload(m, reserved ? conf_reserved : conf);
                        break;
                case 13:
                        if (dom) {
                                virDomainSuspend(dom);
                                spin(5);
                                virDomainResume(dom);
                        }
                        break;
                case 14: /* saved and restored */
                        if (dom && virDomainSave(dom, save) == 0) {
                                spin(5);
                                if (g_rand_boolean(r)) { /* another starts meanwhile */
                                        unsigned o = (k + 1) % NAMES;
                                        virDomainPtr other = lookup(o);
                                        if (!other)
                                                other = start(o, 1, 1);
                                        if (other)
                                                virDomainFree(other);
                                        spin(5);
                                }
                                virDomainRestore(conn, save);
                        }
                        break;
                case 15: /* defined while it runs, from its live XML */
                        if (dom) {
                                char *xml = virDomainGetXMLDesc(dom, 0);
                                virDomainPtr def = xml ? virDomainDefineXML(conn, xml) : NULL;
                                free(xml);
                                if (def)
                                        virDomainFree(def);
                        }
                        break;
                case 16:
                        if (dom)
                                virDomainUndefine(dom);
                        break;
                case 17: /* measured load (WALK_LOAD set, to anything: timed, so not the same walk twice),
                          * which may run a heal pass at once */
                case 18:
                        if (!getenv("WALK_LOAD"))
                                break;
                        note_stats(m, r);
                        spin(10);
                        note_stats(m, r);
                        break;
                }
                if (dom)
                        virDomainFree(dom);
                spin(15);
                manager_reconcile(m);
                spin(5);
                check(m, s, what);
                if (op == 4 && one_node)
                        check_no_sharing(m, s, reserved, before, report);
        }
        for (unsigned k = 0; k < NAMES; k++) {
                virDomainPtr dom = lookup(k);
                if (dom) {
                        virDomainDestroy(dom);
                        virDomainFree(dom);
                }
        }
        spin(20);
        ck_assert(ledger_is_empty(manager_ledger(m)));
        { /* every apply's journal entry went with its record or its run */
                g_autoptr(GDir) d = g_dir_open(journal, 0, NULL);
                const char *left = d ? g_dir_read_name(d) : NULL;
                ck_assert_msg(!left, "the apply journal still holds %s", left);
        }
        g_rand_free(r);
        g_clear_pointer(&counters, g_hash_table_unref);
        fixture_manager_free(base, m);
        g_rmdir(journal);
        g_unlink(save);
        g_rmdir(dir);
}
END_TEST

static Suite *walk_suite(void)
{
        Suite *s = suite_create("manager walk");
        TCase *tc = tcase_create("test driver");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, test_walk);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(walk_suite)
