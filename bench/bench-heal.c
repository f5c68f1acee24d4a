/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of healing and of measuring load at 1000 domains (prints figures, asserts no time):
 *
 *   heal pass   1000 domains of 1-2 vCPUs on a 256-PU host (16 nodes x 8 cores x 2 threads: about 10
 *               vCPUs per core, every domain overcommitted), 100 of them stopped, measured load on each; one
 *               policy_heal() pass with the daemon's limits (HealMaxMoves=2) and with no limit, against
 *               the cost of one policy_place() decision per domain;
 *   big guest   one policy_heal() pass over a 64-vCPU domain with its own cores and a 1024-, then a
 *               4096-vCPU one overcommitted beside it (load unknown: both candidates);
 *   load update one LoadMonitor update of a 1000-domain sample (4 vCPUs each) and load_pu_busy();
 *   bulk call   virConnectGetAllDomainStats on libvirt's test driver with 1000 running domains, when
 *               the driver answers it (it reports no CPU statistics: the figure is the call alone);
 *   daemon pass the daemon's own pass (manager_heal()) on the test driver, 1000 domains of 1 vCPU
 *               placed by a Manager on 4 cores, load unknown: every domain shares a core, so each is a
 *               candidate. The passes that read the domains first (64 a pass, each read two definitions
 *               from libvirt; the heap's growth over them is what the daemon keeps of the reads), then
 *               passes on what they read beside one decision per domain, then Rebalance, which reads
 *               every one.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "heal.h"
#include "load-monitor.h"
#include "log.h"
#include "manager.h"
#include "policy.h"
#include "topology-load.h"
#include "util.h"
#include "virt-domain.h"
#include "virt-event.h"
#include "virt-stats.h"

#define TOPOLOGY      "synthetic:pack:4 numa:4(memory=64GiB) l3:1 core:8 pu:2"
#define DOMAINS       1000u
#define ROUNDS        20u
#define DAEMON_ROUNDS 15u

static double ms_since(uint64_t t0)
{
        return (double)(bench_now_ns() - t0) / 1e6;
}

typedef struct Fleet {
        Topology *t;
        Ledger *l;
        char *names[DOMAINS];
        double *busy[DOMAINS];
        unsigned vcpus[DOMAINS];
        bool gone[DOMAINS];
} Fleet;

static void fleet_fill(Fleet *f, const PlacementParams *p)
{
        g_autofree char *error = NULL;
        GRand *rand = g_rand_new_with_seed(12);

        if (topology_load(TOPOLOGY, &f->t, &error) < 0) {
                fprintf(stderr, "bench-heal: %s\n", error);
                exit(1);
        }
        f->l = ledger_new(f->t);
        for (unsigned i = 0; i < DOMAINS; i++) {
                PlacementRequest req = {.vcpus = 1 + (unsigned)g_rand_int_range(rand, 0, 2),
                                        .memory = GiB / 2};
                f->names[i] = g_strdup_printf("d%04u", i);
                f->vcpus[i] = req.vcpus;
                f->busy[i] = g_new(double, req.vcpus);
                for (unsigned v = 0; v < req.vcpus; v++)
                        f->busy[i][v] = g_rand_double(rand);
                req.name = f->names[i];
                ledger_commit(f->l, f->names[i], policy_place(f->t, f->l, &req, p));
        }
        for (unsigned i = 0; i < DOMAINS; i += 10) {
                ledger_release(f->l, f->names[i]);
                f->gone[i] = true;
        }
        g_rand_free(rand);
}

/* The load of fleet domain key, as the daemon's LoadMonitor keeps it. */
static const DomainLoad *fleet_load(const char *key, void *userdata)
{
        return g_hash_table_lookup(userdata, key);
}

/* The median of ROUNDS load_pu_busy() calls over the fleet with every domain's load known, in us. */
static double pu_busy_cost_us(const Fleet *f)
{
        g_autoptr(GHashTable) loads =
            g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)domain_load_free);
        LoadSmoothing sm = {.rise_sec = LOAD_RISE_HALF_LIFE_SEC, .fall_sec = LOAD_FALL_HALF_LIFE_SEC};
        double us[ROUNDS];

        for (unsigned i = 0; i < DOMAINS; i++) {
                DomainLoad *dl = domain_load_new();
                if (domain_load_update(dl, f->busy[i], f->vcpus[i], 0.2, 5, sm, NULL) < 0) {
                        fprintf(stderr, "bench-heal: load of %s refused\n", f->names[i]);
                        exit(1);
                }
                g_hash_table_insert(loads, f->names[i], dl);
        }
        for (unsigned r = 0; r < ROUNDS; r++) {
                uint64_t t0 = bench_now_ns();
                g_free(load_pu_busy(f->l, fleet_load, loads));
                us[r] = ms_since(t0) * 1000;
        }
        return bench_percentile(us, ROUNDS, 50);
}

static void bench_heal_pass(void)
{
        PlacementParams p = {
            .policy = POLICY_EXPLICIT, .vcpu_pin = VCPU_PIN_CORE, .emulator_pin = EMULATOR_PIN_SIBLINGS};
        Fleet f = {0};
        HealDomain hds[DOMAINS];
        HealDomain *ptrs[DOMAINS];
        unsigned n = 0, moves_all = 0, vcpus = 0;
        double pass_ms[2] = {0}, decide_ms, pu_busy_us;
        uint64_t t0;

        fleet_fill(&f, &p);
        for (unsigned i = 0; i < DOMAINS; i++) {
                if (f.gone[i])
                        continue;
                hds[n] = (HealDomain){.key = f.names[i],
                                      .request = {.name = f.names[i],
                                                  .vcpus = f.vcpus[i],
                                                  .memory = GiB / 2,
                                                  .vcpu_busy = f.busy[i]},
                                      .policy = POLICY_EXPLICIT};
                ptrs[n] = &hds[n];
                vcpus += f.vcpus[i];
                n++;
        }
        for (unsigned k = 0; k < 2; k++) {
                HealParams hp = {.max_moves = k == 0 ? 2 : DOMAINS,
                                 .memory_budget = UINT64_C(8) << 30,
                                 .min_gain = HEAL_DEFAULT_MIN_GAIN,
                                 .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN};
                t0 = bench_now_ns();
                for (unsigned r = 0; r < ROUNDS; r++) {
                        GPtrArray *moves = NULL;
                        policy_heal(f.t, f.l, &p, &hp, ptrs, n, &moves, NULL);
                        if (k == 1)
                                moves_all = moves->len;
                        g_ptr_array_unref(moves);
                }
                pass_ms[k] = ms_since(t0) / ROUNDS;
        }
        /* one decision per domain: each placed again on the ledger without itself */
        t0 = bench_now_ns();
        for (unsigned i = 0; i < n; i++) {
                Plan *cur = plan_copy(ledger_lookup(f.l, hds[i].key));
                ledger_release(f.l, hds[i].key);
                plan_free(policy_place(f.t, f.l, &hds[i].request, &p));
                ledger_commit(f.l, hds[i].key, cur);
        }
        decide_ms = ms_since(t0);
        pu_busy_us = pu_busy_cost_us(&f);
        printf("heal pass, %u domains (%u vCPUs on %u cores), measured load, 100 stopped:\n", n, vcpus,
               f.t->ncores);
        printf("  HealMaxMoves=2:        %8.3f ms per pass\n", pass_ms[0]);
        printf("  no move limit:         %8.3f ms per pass (%u moves)\n", pass_ms[1], moves_all);
        printf("  one decision a domain: %8.3f ms (%.1f us each)\n", decide_ms, decide_ms * 1000 / n);
        printf("  load over the PUs:     %8.1f us (load_pu_busy(), what the daemon adds to each decision)\n",
               pu_busy_us);
        for (unsigned i = 0; i < DOMAINS; i++) {
                g_free(f.names[i]);
                g_free(f.busy[i]);
        }
        ledger_free(f.l);
        topology_free(f.t);
}

/* The shortest of five passes over a 64-vCPU domain with its own cores and an n-vCPU one overcommitted
 * beside it, in ms. */
static double big_guest_pass_ms(unsigned n)
{
        PlacementParams p = {
            .policy = POLICY_EXPLICIT, .vcpu_pin = VCPU_PIN_CORE, .emulator_pin = EMULATOR_PIN_SIBLINGS};
        HealParams hp = {.max_moves = 2,
                         .memory_budget = UINT64_C(8) << 30,
                         .min_gain = HEAL_DEFAULT_MIN_GAIN,
                         .min_distance_gain = HEAL_DEFAULT_MIN_DISTANCE_GAIN};
        g_autofree char *error = NULL;
        Topology *t = NULL;
        Ledger *l;
        HealDomain hds[2] = {{.key = "base",
                              .request = {.name = "base", .vcpus = 64, .memory = 8 * GiB},
                              .policy = POLICY_EXPLICIT},
                             {.key = "big",
                              .request = {.name = "big", .vcpus = n, .memory = 4 * GiB},
                              .policy = POLICY_EXPLICIT}};
        HealDomain *ptrs[2] = {&hds[0], &hds[1]};
        double best = 0;

        if (topology_load("synthetic:pack:2 numa:1(memory=64GiB) core:32 pu:2", &t, &error) < 0) {
                fprintf(stderr, "bench-heal: %s\n", error);
                exit(1);
        }
        l = ledger_new(t);
        for (unsigned i = 0; i < 2; i++)
                ledger_commit(l, hds[i].key, policy_place(t, l, &hds[i].request, &p));
        for (unsigned k = 0; k < 5; k++) {
                GPtrArray *moves = NULL;
                uint64_t t0 = bench_now_ns();
                double ms;
                policy_heal(t, l, &p, &hp, ptrs, 2, &moves, NULL);
                ms = ms_since(t0);
                best = k == 0 ? ms : MIN(best, ms);
                g_ptr_array_unref(moves);
        }
        ledger_free(l);
        topology_free(t);
        return best;
}

/* A guest's owner chooses its vCPU count: a pass grows with it, not with its square. */
static void bench_big_guest(void)
{
        double small = big_guest_pass_ms(1024), big = big_guest_pass_ms(4096);

        printf("heal pass beside an overcommitted guest of 1024 vCPUs: %.3f ms; of 4096: %.3f ms (%.1fx)\n",
               small, big, big / small);
}

static GHashTable *fake_sample(unsigned round)
{
        GHashTable *t =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)domain_cpu_stats_free);
        for (unsigned i = 0; i < DOMAINS; i++) {
                DomainCpuStats *s = g_new0(DomainCpuStats, 1);
                s->nvcpus = s->nvcpu_times = 4;
                s->vcpu_time_ns = g_new(uint64_t, 4);
                for (unsigned v = 0; v < 4; v++)
                        s->vcpu_time_ns[v] = (uint64_t)round * 5000000000u * (v + 1) / 5;
                s->host_ns = (uint64_t)round * 500000000u;
                g_hash_table_insert(t, g_strdup_printf("00000000-0000-0000-0000-%012u", i), s);
        }
        return t;
}

static void bench_load_update(void)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        double ms = 0;

        for (unsigned r = 0; r <= ROUNDS; r++) {
                g_autoptr(GHashTable) sample = fake_sample(r);
                uint64_t t0 = bench_now_ns();
                load_monitor_update(lm, sample, (uint64_t)(r + 1) * 5000000, 0);
                if (r)
                        ms += ms_since(t0);
        }
        printf("load update, %u domains of 4 vCPUs: %.3f ms per sample (%u known)\n", DOMAINS, ms / ROUNDS,
               load_monitor_known(lm));
}

static void bench_bulk_call(void)
{
        virConnectPtr conn = virConnectOpen("test:///default");
        g_autoptr(GHashTable) table = NULL;
        g_autofree char *error = NULL;
        uint64_t t0;
        double ms;
        int r;

        if (!conn)
                return;
        for (unsigned i = 0; i < DOMAINS; i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='test'><name>bulk-%04u</name><memory unit='MiB'>64</memory><vcpu>4</vcpu>"
                    "<os><type>hvm</type></os></domain>",
                    i);
                virDomainPtr d = virDomainCreateXML(conn, xml, 0);
                if (d)
                        virDomainFree(d);
        }
        t0 = bench_now_ns();
        r = virt_cpu_stats_all(conn, &table, &error);
        ms = ms_since(t0);
        if (r < 0)
                printf("bulk call on the test driver, %u domains: %.3f ms, no statistics (%s)\n", DOMAINS,
                       ms, error);
        else
                printf("bulk call on the test driver, %u domains: %.3f ms, %u records\n", DOMAINS, ms,
                       g_hash_table_size(table));
        virConnectClose(conn);
}

static void bench_daemon_pass(void)
{
        struct event_base *base = event_base_new();
        Topology *t = NULL; /* the manager's once it is made */
        g_autofree char *error = NULL;
        virConnectPtr conn = NULL;
        Manager *m = NULL;
        unsigned before, moved = 0, reading_passes = 0;
        double pass_ms[DAEMON_ROUNDS], decide_ms[DAEMON_ROUNDS], reading_ms = 0, rebalance_ms = 0, kept;
        size_t heap_before;

        if (!base || virt_event_register(base) < 0 ||
            topology_load("synthetic:pack:2 numa:1(memory=1024GiB) l3:1 core:2 pu:2", &t, &error) < 0) {
                fprintf(stderr, "bench-heal: daemon pass: cannot set up: %s\n",
                        error ? error : "event loop");
                return;
        }
        virt_errors_quiet();
        log_set_max_level(LOG_ERR);
        m = manager_new(base, t, config_new_default(), "test:///default");
        manager_start(m);
        conn = virConnectOpen("test:///default");
        before = ledger_count(manager_ledger(m));
        for (unsigned i = 0; conn && i < DOMAINS; i++) {
                g_autofree char *name = g_strdup_printf("heal-%04u", i);
                g_autofree char *e = NULL;
                if (virt_test_domain_start(conn, name, 1, GiB / 16, &e) < 0) {
                        fprintf(stderr, "bench-heal: daemon pass: %s\n", e);
                        break;
                }
                while (event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK) == 0 &&
                       ledger_count(manager_ledger(m)) < before + i + 1)
                        ;
        }
        /* the passes that read: until one reads nothing; what the daemon keeps of the reads is what the
         * heap grew by meanwhile */
        heap_before = mallinfo2().uordblks;
        for (unsigned r = 0; r < DOMAINS; r++) {
                uint64_t reads = manager_stats(m)->heal_reads, t0 = bench_now_ns();
                double one_ms;

                moved += manager_heal(m, NULL);
                one_ms = ms_since(t0);
                if (manager_stats(m)->heal_reads == reads)
                        break;
                reading_passes++;
                reading_ms = MAX(reading_ms, one_ms);
        }
        kept = (double)mallinfo2().uordblks - (double)heap_before;
        /* then passes on what was read, each beside the yardstick on the same host: one decision a
         * domain (a 1-vCPU domain placed on it 1000 times); medians, as the machine may be busy */
        for (unsigned r = 0; r < DAEMON_ROUNDS; r++) {
                PlacementRequest req = {.name = "one-more", .vcpus = 1, .memory = GiB / 16};
                uint64_t t0 = bench_now_ns();
                moved += manager_heal(m, NULL);
                pass_ms[r] = ms_since(t0);
                t0 = bench_now_ns();
                for (unsigned i = 0; i < DOMAINS; i++)
                        plan_free(policy_place(manager_topology(m), manager_ledger(m), &req,
                                               &manager_config(m)->placement));
                decide_ms[r] = ms_since(t0);
        }
        {
                g_autofree char *report = NULL;
                uint64_t t0 = bench_now_ns();
                moved += manager_rebalance(m, 2, &report);
                rebalance_ms = ms_since(t0);
        }
        printf("daemon heal pass on the test driver, %u domains placed (load unknown, each a candidate):\n",
               ledger_count(manager_ledger(m)) - before);
        printf("  passes that read:      %8.3f ms at most (%u passes, 64 domains read each); kept %.0f KiB, "
               "%.1f KiB a domain\n",
               reading_ms, reading_passes, kept / 1024, kept / 1024 / DOMAINS);
        printf("  later passes:          %8.3f ms per pass, median of %u, nothing read (%u moves in all)\n",
               bench_percentile(pass_ms, DAEMON_ROUNDS, 50), DAEMON_ROUNDS, moved);
        printf("  one decision a domain: %8.3f ms on the same host, median of %u\n",
               bench_percentile(decide_ms, DAEMON_ROUNDS, 50), DAEMON_ROUNDS);
        printf("  Rebalance:             %8.3f ms (reads every domain)\n", rebalance_ms);
        if (conn)
                virConnectClose(conn);
        manager_free(m);
        event_base_free(base);
}

int main(void)
{
        virSetErrorFunc(NULL, NULL);
        bench_heal_pass();
        bench_big_guest();
        bench_load_update();
        bench_bulk_call();
        bench_daemon_pass();
        return 0;
}
