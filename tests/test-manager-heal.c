/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Healing in the manager, against libvirt's test driver (test:///default): a burst of departures leads to
 * one heal pass a HealInterval later, which moves an overcommitted domain onto the freed cores without
 * a request, applied live like any placement; Heal=no leaves it where it is. A measurement that changes
 * a domain's load class runs a pass at once. Rebalance runs the same pass at once: it moves what can
 * improve and never claims a move a domain's own constraints forbid. A pass reuses what earlier passes
 * read of a domain (until an event says it changed), reads a bounded number of domains, and moves
 * nothing the user changed since.
 */
#include <dlfcn.h>
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <string.h>
#include <time.h>

#include "domain-xml.h"
#include "heal.h"
#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "virt-domain.h"
#include "virt-stats.h"

/* 4 cores of 2 threads: CPUs 0-7, all the test driver accepts pins on. */
#define TOPOLOGY "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:4 pu:2"

static struct event_base *base;
static virConnectPtr conn;

/* vCPU pins of the domain of this name from vCPU refuse_from on are refused (NULL: none) */
static const char *refuse_name;
static unsigned refuse_from;

int virDomainPinVcpuFlags(virDomainPtr dom, unsigned int vcpu, unsigned char *cpumap, int maplen,
                          unsigned int flags)
{
        static int (*real)(virDomainPtr, unsigned int, unsigned char *, int, unsigned int);

        if (refuse_name && g_strcmp0(virDomainGetName(dom), refuse_name) == 0 && vcpu >= refuse_from)
                return -1;
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainPinVcpuFlags");
        return real(dom, vcpu, cpumap, maplen, flags);
}

static void setup(void)
{
        fixture_open(&base, &conn, true);
}

static void teardown(void)
{
        fixture_close(base, conn);
}

/* Runs the loop for ms milliseconds. */
static void spin(unsigned ms)
{
        for (unsigned i = 0; i < ms; i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
}

/* Runs the loop until ms milliseconds have passed on the clock, however slowly it turns: a loop of
 * spin(ms) on a loaded machine can take twice as long, and a timer armed for later fires within it. */
static void spin_wall(unsigned ms)
{
        gint64 until = g_get_monotonic_time() + (gint64)ms * 1000;

        while (g_get_monotonic_time() < until)
                spin(1);
}

static bool spin_until(Manager *m, const char *name, bool want_known)
{
        for (unsigned i = 0; i < 3000; i++) {
                if ((manager_lookup(m, name) != NULL) == want_known)
                        return true;
                spin(1);
        }
        return false;
}

/* config_text's [Placement] section gets LoadWarmup=0: the samples these tests make, 100 ms apart, are
 * taken from the first (test_start_up_heals_nothing keeps the default). */
static Manager *new_manager(const char *config_text)
{
        g_autofree char *text = g_strconcat(config_text, "LoadWarmup=0\n", NULL);

        return fixture_manager_new(base, TOPOLOGY, text);
}

/* Starts a domain whose <vcpu> element carries vcpu_attrs (e.g. " cpuset='0-1'"). */
static virDomainPtr start_xml(Manager *m, const char *name, unsigned vcpus, const char *vcpu_attrs)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu%s>%u</vcpu><os><type>hvm</type></os></domain>",
                            name, vcpu_attrs, vcpus);
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);

        ck_assert_msg(dom != NULL, "cannot start %s", name);
        ck_assert(spin_until(m, name, true));
        return dom;
}

static virDomainPtr start(Manager *m, const char *name, unsigned vcpus)
{
        return start_xml(m, name, vcpus, "");
}

static void stop(Manager *m, virDomainPtr dom)
{
        g_autofree char *name = g_strdup(virDomainGetName(dom));

        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(spin_until(m, name, false));
        virDomainFree(dom);
}

/* vCPUs on a core with another vCPU, as the ledger counts them. */
static unsigned shared_vcpus(Manager *m)
{
        const Topology *t = manager_topology(m);
        unsigned n = 0;

        for (unsigned c = 0; c < t->ncores; c++)
                if (ledger_core_load(manager_ledger(m), c) >= 2)
                        n += ledger_core_load(manager_ledger(m), c);
        return n;
}

/* a (2 vCPUs, its <vcpu> element carrying a_attrs), b and e (1 each) fill the 4 cores; c (2 vCPUs) has
 * to share. */
static void fill_with(Manager *m, virDomainPtr doms[4], const char *a_attrs)
{
        doms[0] = start_xml(m, "h-a", 2, a_attrs);
        doms[1] = start(m, "h-b", 1);
        doms[2] = start(m, "h-e", 1);
        doms[3] = start(m, "h-c", 2);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_OVERCOMMITTED);
        ck_assert_uint_eq(shared_vcpus(m), 4);
        spin(20); /* the metadata events of placementd's own records */
}

static void fill(Manager *m, virDomainPtr doms[4])
{
        fill_with(m, doms, "");
}

/* The end of a case that filled the host and stopped b and e: a and c destroyed, then the manager. */
static void unfill(Manager *m, virDomainPtr doms[4])
{
        virDomainDestroy(doms[0]);
        virDomainFree(doms[0]);
        virDomainDestroy(doms[3]);
        virDomainFree(doms[3]);
        manager_free(m);
        spin(20);
}

START_TEST(test_burst_of_stops_one_heal)
{
        Manager *m = new_manager("[Placement]\nHealInterval=1\n");
        virDomainPtr doms[4];
        const Decision *c;
        g_autoptr(Plan) was = NULL;
        unsigned moved = 0;

        fill(m, doms);
        was = plan_copy(manager_lookup(m, "h-c")->plan);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 0);
        /* a burst: two departures within the debounce interval */
        stop(m, doms[1]);
        stop(m, doms[2]);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 0); /* not at once: debounced */
        spin(2500);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        ck_assert_uint_eq(manager_stats(m)->heal_thread_moves, 0); /* its vCPUs moved */
        c = manager_lookup(m, "h-c");
        ck_assert_msg(c->result == DECISION_PLACED, "%s", c->reason);
        ck_assert_msg(g_str_has_prefix(c->reason, "healed: "), "%s", c->reason);
        ck_assert_ptr_nonnull(strstr(c->reason, "contended for a core, now 0"));
        /* it says which vCPUs moved, from where to where */
        for (unsigned i = 0; i < c->plan->nvcpus; i++) {
                g_autofree char *from = cpuset_format(was->vcpu_pins[i]),
                                *to = cpuset_format(c->plan->vcpu_pins[i]);
                g_autofree char *said =
                    g_strdup_printf("vCPU %u from CPU%s %s to %s", i,
                                    cpuset_count(was->vcpu_pins[i]) == 1 ? "" : "s", from, to);
                moved += !cpuset_equal(was->vcpu_pins[i], c->plan->vcpu_pins[i]);
                ck_assert_msg(cpuset_equal(was->vcpu_pins[i], c->plan->vcpu_pins[i]) ==
                                  !strstr(c->reason, said),
                              "%s (vCPU %u from %s to %s)", c->reason, i, from, to);
        }
        ck_assert_uint_gt(moved, 0);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        fixture_assert_live_pins(doms[3], c->plan);
        /* nothing left to do: no further pass moves anything */
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        unfill(m, doms);
}
END_TEST

/* One bulk statistics sample: the one domain uuid, one vCPU that has run vcpu_ns. */
/* One bulk sample of the domain with uuid: each of its n vCPUs ran vcpu_ns, its host-side threads host_ns.
 */
static GHashTable *sample_n(const char *uuid, unsigned n, uint64_t vcpu_ns, uint64_t host_ns)
{
        GHashTable *t =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)domain_cpu_stats_free);
        DomainCpuStats *s = g_new0(DomainCpuStats, 1);

        s->nvcpu_times = s->nvcpus = n;
        s->vcpu_time_ns = g_new0(uint64_t, n);
        for (unsigned i = 0; i < n; i++)
                s->vcpu_time_ns[i] = vcpu_ns;
        s->vcpu_ns = n * vcpu_ns;
        s->host_ns = host_ns;
        s->total_ns = s->vcpu_ns + host_ns;
        g_hash_table_insert(t, g_strdup(uuid), s);
        return t;
}

static GHashTable *sample(const char *uuid, uint64_t vcpu_ns)
{
        return sample_n(uuid, 1, vcpu_ns, 0);
}

/* Starts the 1-vCPU domain h-a; its UUID in *ret_uuid. */
static virDomainPtr start_a(Manager *m, char **ret_uuid)
{
        virDomainPtr a = start(m, "h-a", 1);

        *ret_uuid = g_strdup(manager_lookup(m, "h-a")->uuid);
        return a;
}

/* Two bulk samples of the domain with uuid, 100 ms apart, in which each of its n vCPUs ran vcpu_ns and
 * its host-side threads host_ns. */
static void measure_n(Manager *m, const char *uuid, unsigned n, uint64_t vcpu_ns, uint64_t host_ns)
{
        g_autoptr(GHashTable) first = sample_n(uuid, n, 0, 0), second = sample_n(uuid, n, vcpu_ns, host_ns);

        manager_note_stats(m, first);
        spin(100);
        manager_note_stats(m, second);
        spin(20);
}

/* measure_n() of a domain with one vCPU and no host-side work. */
static void measure(Manager *m, const char *uuid, uint64_t vcpu_ns)
{
        measure_n(m, uuid, 1, vcpu_ns, 0);
}

/* Runs the loop until a heal pass has moved a domain, for 2.5 s at most; whether one did. */
static bool spin_until_moved(Manager *m)
{
        for (unsigned i = 0; i < 2500 && manager_stats(m)->heal_moves == 0; i++)
                spin(1);
        return manager_stats(m)->heal_moves > 0;
}

/* A manager (HealInterval=60) with domain name (n vCPUs) started alone: *ret_d, its key and its plan as
 * placed. */
static Manager *start_alone(const char *name, unsigned n, virDomainPtr *ret_d, char **ret_uuid,
                            Plan **ret_before)
{
        /* HousekeepingCPUs= (used only without idle siblings) keeps its host-side load from counting as
         * LOAD_HOST_UNMEASURED before it is measured: EmulatorPin=siblings puts the threads on its cores'
         * siblings, where the re-pins of these tests start from */
        Manager *m = new_manager("[Placement]\nHealInterval=60\nHousekeepingCPUs=7\n");

        *ret_d = start(m, name, n);
        *ret_uuid = g_strdup(manager_lookup(m, name)->uuid);
        *ret_before = plan_copy(ledger_lookup(manager_ledger(m), *ret_uuid));
        return m;
}

/* Measures the domain with key uuid (its vCPUs vcpu_ns busy each, host_ns of host-side work, over about
 * 100 ms); the pass that follows moves it once, its vCPUs where before had them. Its plan then. */
static const Plan *threads_moved(Manager *m, const char *uuid, const Plan *before, uint64_t vcpu_ns,
                                 uint64_t host_ns)
{
        const Plan *after;

        measure_n(m, uuid, before->nvcpus, vcpu_ns, host_ns);
        ck_assert(spin_until_moved(m));
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        after = ledger_lookup(manager_ledger(m), uuid);
        for (unsigned i = 0; i < before->nvcpus; i++)
                ck_assert_int_eq(after->vcpu_pu[i], before->vcpu_pu[i]);
        return after;
}

/* Destroys a, then frees m. */
static void done(Manager *m, virDomainPtr a)
{
        virDomainDestroy(a);
        virDomainFree(a);
        manager_free(m);
        spin(20);
}

/* A domain's first samples are its start-up (LoadWarmup=, 5 s by default): they make no load and run
 * no heal pass; the domain stays counted busy, as it was placed. */
START_TEST(test_start_up_heals_nothing)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nHealInterval=60\n");
        g_autofree char *uuid = NULL;
        virDomainPtr a = start_a(m, &uuid);

        measure(m, uuid, UINT64_C(80000000)); /* taken with LoadWarmup=0: test_load_change_heals_at_once */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 0);
        ck_assert_ptr_null(manager_load(m, uuid));
        done(m, a);
}
END_TEST

/* The warm-up counts from the domain's start event, not from placementd's first reading of it: read
 * 0.9 s after its start and again a second later, LoadWarmup=1 is over for most of that sample. */
START_TEST(test_warmup_from_start_event)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nHealInterval=60\nLoadWarmup=1\n");
        g_autofree char *uuid = NULL;
        virDomainPtr a = start_a(m, &uuid);
        g_autoptr(GHashTable) first = sample(uuid, 0), second = sample(uuid, UINT64_C(900000000));

        spin(900);
        manager_note_stats(m, first);
        spin(1000);
        manager_note_stats(m, second);
        ck_assert_ptr_nonnull(manager_load(m, uuid));
        done(m, a);
}
END_TEST

/* A domain whose load is not known yet (read once, its LoadWarmup= not over) is left alone by heal, but
 * not while it shares a core and a whole core runs nothing: counts alone say it should leave, as after a
 * restart that adopts two records on one core. Departures free two cores: the overcommitted h-c, read
 * once, moves onto them. */
START_TEST(test_warming_sharing_moves_to_free_core)
{
        Manager *m = fixture_manager_new(base, TOPOLOGY, "[Placement]\nHealInterval=1\nLoadWarmup=60\n");
        g_autoptr(GHashTable) once =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)domain_cpu_stats_free);
        static const char *const names[] = {"h-a", "h-b", "h-e", "h-c"};
        virDomainPtr doms[4];

        fill(m, doms);
        for (unsigned i = 0; i < 4; i++) {
                const Decision *d = manager_lookup(m, names[i]);
                g_autoptr(GHashTable) one = sample_n(d->uuid, d->plan->nvcpus, 0, 0);
                gpointer key, stats;
                ck_assert(g_hash_table_steal_extended(one, d->uuid, &key, &stats));
                g_hash_table_insert(once, key, stats);
        }
        manager_note_stats(m, once);
        stop(m, doms[1]);
        stop(m, doms[2]);
        spin_wall(2500);
        ck_assert_uint_ge(manager_stats(m)->heal_passes, 1);
        ck_assert_msg(manager_stats(m)->heal_moves == 1 && shared_vcpus(m) == 0,
                      "%llu moves, %u vCPUs share a core: %s",
                      (unsigned long long)manager_stats(m)->heal_moves, shared_vcpus(m),
                      manager_lookup(m, "h-c")->reason);
        unfill(m, doms);
}
END_TEST

/* A reload that turns measuring off (LoadInterval=0) forgets what was measured: every vCPU counts as busy
 * again, as the setting says, not as it last read. */
START_TEST(test_load_off_on_reload_forgets)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        g_autofree char *uuid = NULL;
        virDomainPtr a = start_a(m, &uuid);
        Config *c = NULL;
        g_autofree char *err = NULL;

        measure(m, uuid, 0);
        ck_assert_ptr_nonnull(manager_load(m, uuid)); /* measured idle */
        ck_assert_int_eq(config_load_data("[Placement]\nLoadInterval=0\n", "test.conf", &c, &err), 0);
        manager_set_config(m, c);
        ck_assert_ptr_null(manager_load(m, uuid));
        measure(m, uuid, 0); /* what a metrics scrape may still fetch: not taken */
        ck_assert_ptr_null(manager_load(m, uuid));
        done(m, a);
}
END_TEST

/* A domain that stops leaves its measured load behind: started again, it is a new guest to measure. */
START_TEST(test_stop_forgets_load)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        g_autofree char *uuid = NULL;
        virDomainPtr a = start_a(m, &uuid);

        measure(m, uuid, UINT64_C(80000000));
        ck_assert_ptr_nonnull(manager_load(m, uuid));
        virDomainDestroy(a);
        ck_assert(spin_until(m, "h-a", false));
        ck_assert_ptr_null(manager_load(m, uuid));
        virDomainFree(a);
        manager_free(m);
        spin(20);
}
END_TEST

/* Departures wait HealInterval= for more to join them; a measurement that changes a domain's load class
 * comes with every other domain's in one bulk sample, so its pass runs at the loop's next turn. */
START_TEST(test_load_change_heals_at_once)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        g_autofree char *uuid = NULL;
        virDomainPtr a = start_a(m, &uuid);
        g_autoptr(GHashTable) first = sample(uuid, 0), second = sample(uuid, UINT64_C(80000000));

        manager_note_stats(m, first); /* one reading: no load yet */
        spin(100);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 0);
        manager_note_stats(m, second); /* measured: unknown to busy */
        spin(20);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        /* the same again: no class change, no pass */
        manager_note_stats(m, second);
        spin(20);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        done(m, a);
}
END_TEST

/* A load class that changes while departures' pass waits out HealInterval= is not kept waiting for it:
 * the pass is brought forward to the loop's next turn. */
START_TEST(test_load_change_not_held_by_debounce)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        g_autofree char *uuid = NULL;
        virDomainPtr a = start_a(m, &uuid);
        virDomainPtr b = start(m, "h-b", 1);

        stop(m, b); /* a departure: a pass in 60 s */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 0);
        measure(m, uuid, UINT64_C(80000000)); /* measured: unknown to busy */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        spin(100); /* one pass did for both */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        done(m, a);
}
END_TEST

/* The domain name cools down for ms milliseconds more, as after a heal move. */
static void cooling_for(Manager *m, const char *name, unsigned ms)
{
        struct timespec ts;
        HealCooling c;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        c.last_move = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
        c.until = c.last_move + ms / 1000.0;
        c.repins = 0;
        g_hash_table_replace(m->heal_moved, g_strdup(manager_lookup(m, name)->uuid),
                             g_memdup2(&c, sizeof(c)));
}

/* A domain held back by its cool-down when a pass could have moved it is looked at again when the
 * cool-down ends, without another departure or load change to run a pass. */
START_TEST(test_cooling_looked_at_again)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[4];

        fill(m, doms);
        stop(m, doms[1]);
        stop(m, doms[2]); /* departures: a pass in 60 s */
        /* a and c, which share cores, moved a moment ago */
        cooling_for(m, "h-a", 700);
        cooling_for(m, "h-c", 700);
        ck_assert_uint_eq(manager_heal(m, NULL), 0); /* both cooling: nothing moves */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        ck_assert_msg(spin_until_moved(m), "no pass when the cool-downs ended");
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 2); /* a pass of its own, the departures' too */
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        spin(200);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 2);
        /* a domain that stops takes its cool-down with it: a later run of it has none, and a host
         * with domains coming and going does not keep one entry per UUID it ever moved */
        ck_assert_uint_eq(g_hash_table_size(m->heal_moved), 2);
        stop(m, doms[0]);
        stop(m, doms[3]);
        ck_assert_uint_eq(g_hash_table_size(m->heal_moved), 0);
        manager_free(m);
        spin(20);
}
END_TEST

/* A domain a pass moved whose new plan could still gain (one core free for c's two vCPUs: one still
 * shares) is looked at again when its cool-down ends, as one the pass held back is: the pass arms the
 * next for then, not for the departures' debounce an hour later. */
START_TEST(test_moved_looked_at_again)
{
        Manager *m = new_manager("[Placement]\nHealInterval=3600\n");
        virDomainPtr doms[4];
        const HealCooling *c;
        uint64_t until;

        fill(m, doms);
        stop(m, doms[1]); /* one core free: a pass in an hour */
        ck_assert_uint_eq(manager_heal(m, NULL), 1);
        ck_assert_uint_eq(shared_vcpus(m), 2); /* c still shares a core */
        c = g_hash_table_lookup(m->heal_moved, manager_lookup(m, "h-c")->uuid);
        ck_assert_ptr_nonnull(c);
        until = (uint64_t)(c->until * (double)G_USEC_PER_SEC);
        ck_assert(evtimer_pending(m->heal_ev, NULL));
        ck_assert_uint_ge(m->heal_due_usec, until);
        ck_assert_uint_le(m->heal_due_usec, until + G_USEC_PER_SEC);
        stop(m, doms[2]);
        unfill(m, doms);
}
END_TEST

/*
 * A busy 3-vCPU domain's emulator runs on its own cores' siblings, as it was placed before its load was
 * known; its host-side threads measured at about a core, a third of it on each sibling (no PU half busy).
 * The measurement's pass moves the emulator to the core no vCPU uses, with the vCPUs left where they are.
 */
START_TEST(test_host_load_beside_own_vcpus_moved)
{
        virDomainPtr d;
        g_autofree char *uuid = NULL;
        g_autoptr(Plan) before = NULL;
        Manager *m = start_alone("h-d", 3, &d, &uuid, &before);
        const Topology *t = manager_topology(m);
        const Plan *after;

        ck_assert_uint_eq(cpuset_count(before->emulator_pin), 3); /* its cores' siblings */
        /* busy over the 100 ms; 1.2 cores of host-side work, 0.4 on each sibling (less as the clock runs) */
        after = threads_moved(m, uuid, before, UINT64_C(95000000), UINT64_C(120000000));
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 1);
        CPUSET_FOREACH (os, after->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                for (unsigned i = 0; i < 3; i++)
                        ck_assert_uint_ne(core, t->pus[after->vcpu_pu[i]].core);
        }
        ck_assert(!cpuset_is_empty(after->emulator_pin));
        done(m, d);
}
END_TEST

/* Where the host keeps no CPUs for QEMU's threads, the same domain's host-side threads start on the core
 * no vCPU uses, counted as a core busy until measured (LOAD_HOST_UNMEASURED): measured at about a core,
 * they already run where the pass would put them, and it moves nothing. */
START_TEST(test_unmeasured_host_threads_start_apart)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr d = start(m, "h-u", 3);
        const Decision *dec = manager_lookup(m, "h-u");
        g_autofree char *uuid = g_strdup(dec->uuid);
        const Topology *t = manager_topology(m);
        const Plan *p = ledger_lookup(manager_ledger(m), uuid);

        ck_assert_uint_eq(cpuset_count(p->emulator_pin), 2);
        CPUSET_FOREACH (os, p->emulator_pin) {
                unsigned core = t->pus[topology_pu_by_os(t, (unsigned)os)].core;
                for (unsigned i = 0; i < 3; i++)
                        ck_assert_uint_ne(core, t->pus[p->vcpu_pu[i]].core);
        }
        ck_assert_msg(strstr(dec->reason, "not measured yet"), "%s", dec->reason);
        measure_n(m, uuid, 3, UINT64_C(95000000), UINT64_C(120000000));
        for (unsigned i = 0; i < 2500 && manager_stats(m)->heal_passes == 0; i++)
                spin(1);
        spin(50);
        ck_assert_uint_ge(manager_stats(m)->heal_passes, 1);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 0);
        done(m, d);
}
END_TEST

/* An idle 1-vCPU domain whose host-side work (3 cores over the 100 ms; 1.25 would do, so a slow run's
 * longer interval cannot hide it) runs on the one sibling EmulatorPin=siblings gave it: the daemon's
 * pass (its cheap test first) re-pins those threads alone onto more cores. */
START_TEST(test_host_load_over_a_core_spread)
{
        virDomainPtr d;
        g_autofree char *uuid = NULL;
        g_autoptr(Plan) before = NULL;
        Manager *m = start_alone("h-o", 1, &d, &uuid, &before);
        const Topology *t = manager_topology(m);
        g_autoptr(CpuSet) cores = cpuset_new();
        const Plan *after;

        ck_assert_uint_eq(cpuset_count(before->emulator_pin), 1); /* its core's sibling */
        /* idle over the 100 ms (5 ms), 300 ms of host-side work (less as the clock runs) */
        after = threads_moved(m, uuid, before, UINT64_C(5000000), UINT64_C(300000000));
        CPUSET_FOREACH (os, after->emulator_pin)
                cpuset_add(cores, t->pus[topology_pu_by_os(t, (unsigned)os)].core);
        ck_assert_uint_ge(cpuset_count(cores), 2);
        ck_assert_ptr_nonnull(strstr(manager_lookup(m, "h-o")->reason, "onto more cores"));
        ck_assert_uint_ge(manager_stats(m)->heal_thread_moves, 1); /* counted apart (metrics) */
        ck_assert_uint_eq(manager_stats(m)->heal_thread_moves, manager_stats(m)->heal_moves);
        done(m, d);
}
END_TEST

/* With MemoryReserve= leaving 1 GiB, a third 512 MiB domain is unplaceable; once one leaves it is placed
 * by the heal pass the departure starts, and with Heal=no by `placementctl rebalance`, which says so,
 * naming it as text output does: its name holds the text "\x0d", which must not read as a CR. */
START_TEST(test_departure_places_unplaceable)
{
        static const char c_name[] = "h-c\\x0dz";

        for (unsigned heal = 0; heal < 2; heal++) {
                Manager *m = new_manager(heal ? "[Placement]\nHealInterval=1\nMemoryReserve=15G\n"
                                              : "[Placement]\nHeal=no\nMemoryReserve=15G\n");
                virDomainPtr a = start(m, "h-a", 1), b = start(m, "h-b", 1), c = start(m, c_name, 1);
                g_autofree char *report = NULL;

                ck_assert_int_eq(manager_lookup(m, c_name)->result, DECISION_UNPLACEABLE);
                stop(m, a);
                if (heal) {
                        for (unsigned i = 0;
                             i < 3000 && manager_lookup(m, c_name)->result == DECISION_UNPLACEABLE; i++)
                                spin(1);
                } else {
                        spin(1500);
                        ck_assert_int_eq(manager_lookup(m, c_name)->result, DECISION_UNPLACEABLE);
                        manager_rebalance(m, 4, &report);
                        ck_assert_msg(strstr(report, "h-c\\x5cx0dz: placed, was unplaceable"), "%s", report);
                }
                ck_assert_msg(manager_lookup(m, c_name)->result == DECISION_PLACED, "%s",
                              manager_lookup(m, c_name)->reason);
                stop(m, b);
                stop(m, c);
                manager_free(m);
                spin(20);
        }
}
END_TEST

/* Overcommitted beside a, b and e; they leave (healing off, so nothing moves): c's vCPUs share no core
 * any more, and its decision says placed, not overcommitted, with a reason that says why. */
START_TEST(test_overcommitted_no_more_after_departures)
{
        Manager *m = new_manager("[Placement]\nHeal=no\n");
        virDomainPtr doms[4];
        const Decision *d;

        fill(m, doms);
        stop(m, doms[1]);
        stop(m, doms[2]);
        stop(m, doms[0]);
        spin(20);
        d = manager_lookup(m, "h-c");
        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", decision_result_to_string(d->result),
                      d->reason);
        ck_assert_uint_eq(d->plan->shared_vcpus, 0);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        ck_assert_msg(strstr(d->reason, "no vCPU of it shares a core now"), "%s", d->reason);
        virDomainDestroy(doms[3]);
        virDomainFree(doms[3]);
        manager_free(m);
        spin(20);
}
END_TEST

/* An overcommitted domain beside another domain's isolated emulator CPU (held) still shares that core
 * when the domain that shared its other core leaves: it stays overcommitted. */
START_TEST(test_beside_held_emulator_stays_overcommitted)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:1 numa:1(memory=16GiB) core:2 pu:2",
                                         "[Placement]\nHeal=no\n");
        virDomainPtr iso = virDomainCreateXML(
            conn,
            "<domain type='test'><name>h-iso</name><memory unit='MiB'>512</memory><vcpu>1</vcpu>"
            "<cputune><vcpupin vcpu='0' cpuset='0'/><emulatorpin cpuset='2'/></cputune>"
            "<os><type>hvm</type></os></domain>",
            0);
        virDomainPtr b, x;
        const Decision *d;
        int pu;

        ck_assert(iso && spin_until(m, "h-iso", true));
        b = start(m, "h-b", 1);
        x = start(m, "h-x", 1);
        d = manager_lookup(m, "h-b");

        ck_assert_int_eq(d->result, DECISION_OVERCOMMITTED);
        pu = d->plan->vcpu_pu[0];
        ck_assert_msg(manager_topology(m)->pus[pu].core == 1, "%s", d->reason);
        stop(m, x);
        spin(20);
        d = manager_lookup(m, "h-b");
        ck_assert_msg(d->result == DECISION_OVERCOMMITTED, "%s", d->reason);
        stop(m, b);
        stop(m, iso);
        manager_free(m);
        spin(20);
}
END_TEST

START_TEST(test_heal_off)
{
        Manager *m = new_manager("[Placement]\nHeal=no\nHealInterval=1\n");
        virDomainPtr doms[4];
        g_autofree char *report = NULL;

        fill(m, doms);
        stop(m, doms[1]);
        stop(m, doms[2]);
        spin(1500);
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 0);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_OVERCOMMITTED);
        ck_assert_uint_eq(manager_heal(m, &report), 0);
        ck_assert_ptr_nonnull(strstr(report, "healing is off"));
        unfill(m, doms);
}
END_TEST

/* unfill() of a case whose departures let h-c have cores of its own: asserts that it has them. */
static void unfill_healed(Manager *m, virDomainPtr doms[4])
{
        ck_assert_msg(manager_lookup(m, "h-c")->result == DECISION_PLACED, "%s",
                      manager_lookup(m, "h-c")->reason);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        unfill(m, doms);
}

/* Departures whose pass comes due while libvirt is away: the pass runs after the reconnect, since the
 * cores they freed are free all the same. */
START_TEST(test_heal_after_reconnect)
{
        Manager *m = new_manager("[Placement]\nHealInterval=1\n");
        virDomainPtr doms[4];
        struct timeval zero = {0, 0};

        fill(m, doms);
        stop(m, doms[1]);
        stop(m, doms[2]);
        /* back well after the pass came due (1 s after the departures), on the clock: the check below
         * runs while libvirt is away however slowly the loop turns */
        m->backoff_sec = 5;
        evtimer_add(m->teardown_ev, &zero);
        spin_wall(1500);
        ck_assert_ptr_null(m->conn);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_OVERCOMMITTED);
        for (gint64 until = g_get_monotonic_time() + 15 * G_USEC_PER_SEC;
             g_get_monotonic_time() < until && manager_lookup(m, "h-c")->result != DECISION_PLACED;)
                spin(100);
        ck_assert_ptr_nonnull(m->conn);
        unfill_healed(m, doms);
}
END_TEST

/* fill() with healing off, then b and e leave: c keeps sharing, as no pass was armed. */
static void departures_while_off(Manager *m, virDomainPtr doms[4])
{
        fill(m, doms);
        stop(m, doms[1]);
        stop(m, doms[2]);
        spin(1500);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_OVERCOMMITTED);
}

/* Reloads m with healing on. */
static void reload_heal_on(Manager *m)
{
        Config *c = NULL;
        g_autofree char *err = NULL;

        ck_assert_int_eq(
            config_load_data("[Placement]\nHeal=yes\nHealInterval=1\nLoadWarmup=0\n", "test.conf", &c, &err),
            0);
        manager_set_config(m, c);
}

/* Departures while healing is off arm no pass: a reload that turns it on runs one. */
START_TEST(test_heal_turned_on_by_reload)
{
        Manager *m = new_manager("[Placement]\nHeal=no\nHealInterval=1\n");
        virDomainPtr doms[4];

        departures_while_off(m, doms);
        reload_heal_on(m);
        spin(1500);
        unfill_healed(m, doms);
}
END_TEST

/* Departures while healing is off, then a reload that turns it on while libvirt is away: the pass runs
 * after the reconnect. */
START_TEST(test_heal_turned_on_while_away)
{
        Manager *m = new_manager("[Placement]\nHeal=no\nHealInterval=1\n");
        virDomainPtr doms[4];
        struct timeval zero = {0, 0};

        departures_while_off(m, doms);
        m->backoff_sec = 5; /* the reload below comes while libvirt is away, however slowly the loop turns */
        evtimer_add(m->teardown_ev, &zero);
        spin_wall(300);
        ck_assert_ptr_null(m->conn);
        reload_heal_on(m);
        for (gint64 until = g_get_monotonic_time() + 15 * G_USEC_PER_SEC;
             g_get_monotonic_time() < until && !m->conn;)
                spin(100);
        ck_assert_ptr_nonnull(m->conn);
        spin(3000);
        unfill_healed(m, doms);
}
END_TEST

/* An unplug (no libvirt event) shows in the bulk statistics' vCPU count: followed then, not at the next
 * reconcile (ReconcileSec=0 here: none). */
START_TEST(test_unplug_followed_from_stats)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\nReconcileSec=0\n");
        virDomainPtr b = start(m, "h-b", 2);
        g_autofree char *uuid = g_strdup(manager_lookup(m, "h-b")->uuid);

        ck_assert_uint_eq(manager_lookup(m, "h-b")->plan->nvcpus, 2);
        ck_assert_int_eq(virDomainSetVcpusFlags(b, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        spin(50);
        ck_assert_uint_eq(manager_lookup(m, "h-b")->plan->nvcpus, 2); /* no event came */
        measure_n(m, uuid, 1, 0, 0);
        ck_assert_uint_eq(manager_lookup(m, "h-b")->plan->nvcpus, 1);
        virDomainDestroy(b);
        virDomainFree(b);
        manager_free(m);
        spin(20);
}
END_TEST

START_TEST(test_unplug_heals)
{
        /* b gives back one of its two vCPUs: the core it frees goes to one of c's shared vCPUs */
        Manager *m = new_manager("[Placement]\nHealInterval=1\n");
        virDomainPtr a = start(m, "h-a", 2), b = start(m, "h-b", 2), c = start(m, "h-c", 2);

        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_OVERCOMMITTED);
        ck_assert_uint_eq(shared_vcpus(m), 4);
        ck_assert_int_eq(virDomainSetVcpusFlags(b, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m); /* what the periodic reconcile does: it sees the unplug */
        ck_assert_uint_eq(manager_lookup(m, "h-b")->plan->nvcpus, 1);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 0);
        spin(2500);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        ck_assert_uint_eq(shared_vcpus(m), 2);
        ck_assert(g_str_has_prefix(manager_lookup(m, "h-c")->reason, "healed: "));
        virDomainDestroy(a);
        virDomainDestroy(b);
        virDomainDestroy(c);
        virDomainFree(a);
        virDomainFree(b);
        virDomainFree(c);
        manager_free(m);
        spin(20);
}
END_TEST

START_TEST(test_rebalance_keeps_constraints)
{
        /* k's <vcpu cpuset> holds both its vCPUs on core 0; f shares a core until b leaves. Rebalance
         * then moves f, and does not claim to move k, whose own cpuset keeps it from the freed core. The
         * report names f escaped (its backslash too), as placementd's every text does. */
        Manager *m = new_manager("[Placement]\nHeal=no\n");
        virDomainPtr k = start_xml(m, "h-k", 2, " cpuset='0-1'");
        virDomainPtr a = start(m, "h-a", 2), b = start(m, "h-b", 1), f = start(m, "h-f\\", 2);
        g_autofree char *report = NULL;
        g_autoptr(Plan) k_before = NULL;
        unsigned moved, shared;

        ck_assert_int_eq(manager_lookup(m, "h-f\\")->result, DECISION_OVERCOMMITTED);
        k_before = plan_copy(manager_lookup(m, "h-k")->plan);
        stop(m, b);
        shared = shared_vcpus(m);
        moved = manager_rebalance(m, 4, &report);
        ck_assert_msg(moved == 1, "%s", report);
        /* its node stays: a re-pin inside it, said so */
        ck_assert_msg(strstr(report, "h-f\\x5c: re-pinned inside node 0: "), "%s", report);
        ck_assert_msg(!strstr(report, "h-k: moved"), "%s", report);
        ck_assert_uint_lt(shared_vcpus(m), shared);
        ck_assert(cpuset_equal(manager_lookup(m, "h-k")->plan->vcpu_pins[0], k_before->vcpu_pins[0]));
        ck_assert(cpuset_equal(manager_lookup(m, "h-k")->plan->vcpu_pins[1], k_before->vcpu_pins[1]));
        fixture_assert_live_pins(f, manager_lookup(m, "h-f\\")->plan);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        virDomainDestroy(k);
        virDomainDestroy(a);
        virDomainDestroy(f);
        virDomainFree(k);
        virDomainFree(a);
        virDomainFree(f);
        manager_free(m);
        spin(20);
}
END_TEST

/* Passes after the first plan on what it read: a pass over the same domains reads none of them, and a
 * move reads only the domain it moves (once more, before moving it). */
START_TEST(test_later_passes_read_nothing)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[4];
        uint64_t first;

        fill(m, doms);
        ck_assert_uint_eq(manager_heal(m, NULL), 0); /* full: nothing to gain */
        first = manager_stats(m)->heal_reads;
        ck_assert_uint_gt(first, 0); /* the domains that share a core */
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, first);
        stop(m, doms[1]);
        stop(m, doms[2]);
        ck_assert_uint_eq(manager_heal(m, NULL), 1);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, first + 1);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_PLACED);
        fixture_assert_live_pins(doms[3], manager_lookup(m, "h-c")->plan);
        unfill(m, doms);
}
END_TEST

/* h-c where it was, overcommitted. */
static void assert_c_stayed(Manager *m, virDomainPtr c, const Plan *before)
{
        const Decision *d = manager_lookup(m, "h-c");

        ck_assert_int_eq(d->result, DECISION_OVERCOMMITTED);
        for (unsigned v = 0; v < before->nvcpus; v++)
                ck_assert(cpuset_equal(d->plan->vcpu_pins[v], before->vcpu_pins[v]));
        fixture_assert_live_pins(c, before);
}

/* fill() with h-a held to cores 0-1 by its <vcpu cpuset>: only h-c can take cores that free up. */
static void fill_held(Manager *m, virDomainPtr doms[4])
{
        fill_with(m, doms, " cpuset='0-3'");
}

/* After a pass read every domain, h-c gains an I/O thread live (libvirt sends no event for it) and h-b
 * and h-e stop; returns h-c's plan from before. */
static Plan *change_c_free_two(Manager *m, virDomainPtr doms[4])
{
        Plan *before;

        ck_assert_uint_eq(manager_heal(m, NULL), 0); /* reads h-c, among others */
        before = plan_copy(manager_lookup(m, "h-c")->plan);
        ck_assert_int_eq(virDomainAddIOThread(doms[3], 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        spin(20);
        stop(m, doms[1]);
        stop(m, doms[2]);
        return before;
}

/* A domain that changes after a pass read it, where libvirt sends no event (an I/O thread added live):
 * the next pass plans it on the old read, reads it again before the move and leaves it where it is,
 * keeping what it read; the pass after that, one HealInterval= later, moves it as it is now. */
START_TEST(test_changed_since_read_not_moved)
{
        Manager *m = new_manager("[Placement]\nHealInterval=1\n");
        virDomainPtr doms[4];
        g_autofree char *report = NULL;
        g_autoptr(Plan) before = NULL;
        uint64_t reads;

        fill_held(m, doms);
        before = change_c_free_two(m, doms);
        ck_assert_uint_eq(manager_heal(m, &report), 0);
        ck_assert_msg(strstr(report, "h-c: not moved: its definition changed since it was read"), "%s",
                      report);
        assert_c_stayed(m, doms[3], before);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 0);
        /* the next pass moves it, on what the refusal read: only the read before the move */
        reads = manager_stats(m)->heal_reads;
        spin(1500);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, reads + 1);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_PLACED);
        fixture_assert_live_pins(doms[3], manager_lookup(m, "h-c")->plan);
        unfill(m, doms);
}
END_TEST

/* Every running domain measured idle: two bulk samples 100 ms apart in which no vCPU ran. */
static void all_idle(Manager *m)
{
        for (unsigned k = 0; k < 2; k++) {
                g_autoptr(GPtrArray) all = manager_list(m);
                g_autoptr(GHashTable) t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                                (GDestroyNotify)domain_cpu_stats_free);
                for (unsigned i = 0; i < all->len; i++) {
                        const Decision *d = g_ptr_array_index(all, i);
                        DomainCpuStats *st = g_new0(DomainCpuStats, 1);
                        st->nvcpus = st->nvcpu_times = d->plan ? d->plan->nvcpus : 1;
                        st->vcpu_time_ns = g_new0(uint64_t, st->nvcpus);
                        g_hash_table_insert(t, g_strdup(d->uuid), st);
                }
                manager_note_stats(m, t);
                spin(100);
        }
}

/* The host filled, every domain measured idle, then h-b and h-e leave: h-c shares h-a's cores with
 * half the host's cores free. */
static Manager *idle_sharing_half_free(virDomainPtr doms[4])
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");

        fill(m, doms);
        all_idle(m);
        ck_assert_ptr_nonnull(manager_load(m, manager_lookup(m, "h-c")->uuid));
        stop(m, doms[1]);
        stop(m, doms[2]);
        ck_assert_uint_eq(shared_vcpus(m), 4);
        return m;
}

/* Measured idle, h-c sharing h-a's cores after h-b and h-e leave: Rebalance, asked for, gives every
 * vCPU a core of its own. */
START_TEST(test_rebalance_undoes_idle_sharing)
{
        virDomainPtr doms[4];
        Manager *m = idle_sharing_half_free(doms);
        g_autofree char *report = NULL;

        ck_assert_uint_eq(manager_rebalance(m, 4, &report), 1);
        ck_assert_msg(strstr(report, "h-c: re-pinned inside node 0: ") &&
                          strstr(report, "vCPUs shared a core, now 0"),
                      "%s", report);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        fixture_assert_live_pins(doms[3], manager_lookup(m, "h-c")->plan);
        unfill(m, doms);
}
END_TEST

/* The same without asking: with half the host's cores free (a quarter would do), healing undoes the
 * idle sharing too, and the report says why. */
START_TEST(test_heal_undoes_idle_sharing_with_cores_to_spare)
{
        virDomainPtr doms[4];
        Manager *m = idle_sharing_half_free(doms);
        g_autofree char *report = NULL;

        ck_assert_uint_eq(manager_heal(m, &report), 1);
        ck_assert_msg(strstr(report, "h-c: moved") && strstr(report, "vCPUs shared a core, now 0"), "%s",
                      report);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        fixture_assert_live_pins(doms[3], manager_lookup(m, "h-c")->plan);
        unfill(m, doms);
}
END_TEST

/* libvirt holds a job on h-c (QEMU not answering its monitor; the test driver says so from the guest
 * time: 10000 + N seconds is "occupied" for N ms): each pin would wait 30 s for the job, so the move is
 * refused and h-c stays where it is, without a pin tried; the next pass with the job released moves it. */
START_TEST(test_held_job_not_moved)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[4];
        g_autofree char *report = NULL, *again = NULL;
        g_autoptr(Plan) before = NULL;

        fill_held(m, doms);
        before = plan_copy(manager_lookup(m, "h-c")->plan);
        ck_assert_int_eq(virDomainSetTime(doms[3], 10000 + 12000, 0, 0), 0);
        stop(m, doms[1]);
        stop(m, doms[2]);
        ck_assert_uint_eq(manager_heal(m, &report), 0);
        ck_assert_msg(strstr(report,
                             "h-c: not moved: libvirt has held a job on the domain for 12.0 s (a monitor "
                             "command QEMU has not answered)"),
                      "%s", report);
        assert_c_stayed(m, doms[3], before);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 0);
        /* released: moved onto the freed cores */
        ck_assert_int_eq(virDomainSetTime(doms[3], 627319920, 0, 0), 0);
        ck_assert_uint_eq(manager_heal(m, &again), 1);
        ck_assert_msg(strstr(again, "h-c: moved"), "%s", again);
        ck_assert_int_eq(manager_lookup(m, "h-c")->result, DECISION_PLACED);
        fixture_assert_live_pins(doms[3], manager_lookup(m, "h-c")->plan);
        unfill(m, doms);
}
END_TEST

/* The moves a pass planned after a refused one were planned on it: the pass plans them again with the
 * changed domain where it is, and makes them. Here h-a, which shares cores with h-c, takes the freed
 * ones instead. */
START_TEST(test_refused_move_plans_the_rest)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[4];
        g_autofree char *report = NULL;
        g_autoptr(Plan) before = NULL;

        fill(m, doms);
        before = change_c_free_two(m, doms);
        ck_assert_uint_eq(manager_heal(m, &report), 1);
        ck_assert_msg(strstr(report, "h-c: not moved: its definition changed since it was read"), "%s",
                      report);
        ck_assert_msg(strstr(report, "h-a: moved"), "%s", report);
        assert_c_stayed(m, doms[3], before);
        fixture_assert_live_pins(doms[0], manager_lookup(m, "h-a")->plan);
        ck_assert_uint_eq(shared_vcpus(m), 0); /* h-c where it was, alone on its cores now */
        unfill(m, doms);
}
END_TEST

/* A domain gone between the pass's plan and its move (its stop not yet seen): not moved. */
START_TEST(test_gone_since_read_not_moved)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[4];
        g_autofree char *report = NULL;

        fill_held(m, doms);
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        stop(m, doms[1]);
        stop(m, doms[2]);
        ck_assert_int_eq(virDomainDestroy(doms[3]), 0); /* its event waits in the loop */
        ck_assert_uint_eq(manager_heal(m, &report), 0);
        ck_assert_msg(strstr(report, "h-c: not moved: gone or opted out since it was read"), "%s", report);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 0);
        ck_assert(spin_until(m, "h-c", false));
        virDomainDestroy(doms[0]);
        virDomainFree(doms[0]);
        virDomainFree(doms[3]);
        manager_free(m);
        spin(20);
}
END_TEST

/* A move whose apply failed half-way (vCPU 0 re-pinned, vCPU 1's pin refused) is no move: the report and
 * the count of moves do not claim it, the domain is counted where it runs, and the rest of the pass is
 * planned with it there. */
START_TEST(test_failed_move_not_claimed)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[4];
        g_autofree char *report = NULL;
        const Decision *d;

        fill(m, doms);
        stop(m, doms[1]);
        stop(m, doms[2]);
        refuse_name = "h-c";
        refuse_from = 1;
        manager_heal(m, &report);
        refuse_name = NULL;
        d = manager_lookup(m, "h-c");
        ck_assert_int_eq(d->result, DECISION_FAILED);
        fixture_assert_live_pins(doms[3], d->plan);
        ck_assert_msg(!strstr(report, "h-c: moved"), "%s", report);
        ck_assert_msg(strstr(report, "h-c: not moved: applying the plan failed"), "%s", report);
        /* planned again with h-c where it runs: h-a leaves the core it shares with h-c's vCPU 1 */
        ck_assert_msg(strstr(report, "h-a: moved"), "%s", report);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 1);
        fixture_assert_live_pins(doms[0], manager_lookup(m, "h-a")->plan);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        unfill(m, doms);
}
END_TEST

/* Lines of report that contain what. */
static unsigned count_lines(const char *report, const char *what)
{
        unsigned n = 0;

        for (const char *at = report; (at = strstr(at, what)); at += strlen(what))
                n++;
        return n;
}

/* Every domain a pass could move changed since it was read (as a tenant changing their domains in a
 * loop would have it): the pass plans again after each refused move, at most three plans in all, and
 * moves none; what the refusals read is kept, so the next pass moves them as they are now. */
START_TEST(test_changed_in_a_loop_bounded)
{
        Manager *m = new_manager("[Placement]\nHealInterval=60\n");
        virDomainPtr doms[8];
        g_autofree char *report = NULL;
        g_autofree char *next = NULL;

        for (unsigned i = 0; i < G_N_ELEMENTS(doms); i++) { /* two 1-vCPU domains on each core */
                g_autofree char *name = g_strdup_printf("h-%02u", i);
                doms[i] = start(m, name, 1);
        }
        spin(50);
        ck_assert_uint_eq(shared_vcpus(m), 8);
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(doms); i++)
                ck_assert_int_eq(virDomainAddIOThread(doms[i], 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(doms); i++) { /* empty cores 0 and 1 (CPUs 0-3) */
                const Decision *d = manager_lookup(m, virDomainGetName(doms[i]));
                if (cpuset_next(d->plan->vcpu_pins[0], 0) < 4) {
                        stop(m, doms[i]);
                        doms[i] = NULL;
                }
        }
        ck_assert_uint_eq(shared_vcpus(m), 4);
        ck_assert_uint_eq(manager_heal(m, &report), 0);
        ck_assert_uint_eq(count_lines(report, "not moved: its definition changed since it was read"), 3);
        ck_assert_uint_eq(manager_stats(m)->heal_moves, 0);
        ck_assert_uint_eq(shared_vcpus(m), 4);
        /* the refused three were read as they are now; the fourth, read before its change, is refused in
         * the next pass and that pass plans again without it */
        ck_assert_uint_eq(manager_heal(m, &next), 2);
        ck_assert_uint_le(count_lines(next, "not moved"), 1);
        ck_assert_uint_eq(shared_vcpus(m), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(doms); i++)
                if (doms[i]) {
                        virDomainDestroy(doms[i]);
                        virDomainFree(doms[i]);
                }
        manager_free(m);
        spin(20);
}
END_TEST

/* placementd's metadata changed (an opt-out, another policy; libvirt sends an event): what the pass read
 * is dropped and the next pass reads the domain as it is now (an opted-out one is skipped at once and not
 * moved), with no move refused for a change since its read. */
START_TEST(test_metadata_change_read_again)
{
        static const char *const metadata[] = {"<domain skip='yes'/>", "<domain policy='compat'/>"};

        for (unsigned i = 0; i < G_N_ELEMENTS(metadata); i++) {
                Manager *m = new_manager("[Placement]\nHealInterval=60\n");
                virDomainPtr doms[4];
                g_autofree char *report = NULL;
                g_autoptr(Plan) before = NULL;
                uint64_t reads;

                fill(m, doms);
                ck_assert_uint_eq(manager_heal(m, NULL), 0); /* reads h-c, among others */
                ck_assert(g_hash_table_contains(m->heal_requests, manager_lookup(m, "h-c")->uuid));
                before = plan_copy(manager_lookup(m, "h-c")->plan);
                ck_assert_int_eq(virDomainSetMetadata(doms[3], VIR_DOMAIN_METADATA_ELEMENT, metadata[i],
                                                      PLACEMENTD_XMLNS_PREFIX, PLACEMENTD_XMLNS,
                                                      VIR_DOMAIN_AFFECT_LIVE),
                                 0);
                spin(2 * MANAGER_METADATA_FOLLOW_MSEC); /* the opt-out read once the burst is over */
                ck_assert(!g_hash_table_contains(m->heal_requests, manager_lookup(m, "h-c")->uuid));
                stop(m, doms[1]);
                stop(m, doms[2]);
                reads = manager_stats(m)->heal_reads;
                manager_heal(m, &report);
                ck_assert_msg(!strstr(report, "since it was read"), "%s", report);
                ck_assert_uint_gt(manager_stats(m)->heal_reads, reads); /* h-c read as it is now */
                if (i == 0) { /* opted out: skipped as it runs, where it was (the others may take the
                               * freed cores) */
                        const Decision *d = manager_lookup(m, "h-c");
                        ck_assert_msg(d->result == DECISION_SKIPPED, "%s", d->reason);
                        for (unsigned v = 0; v < before->nvcpus; v++)
                                ck_assert(cpuset_equal(d->plan->vcpu_pins[v], before->vcpu_pins[v]));
                        fixture_assert_live_pins(doms[3], before);
                }
                unfill(m, doms);
        }
}
END_TEST

/* A manager on 4 cores with memory for 70 domains of 1 vCPU: every one placed, overcommitted. */
#define CROWD_TOPOLOGY "synthetic:pack:1 numa:1(memory=64GiB) l3:1 core:4 pu:2"

static void crowd(Manager *m, virDomainPtr *doms, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *name = g_strdup_printf("h-%02u", i);
                doms[i] = start(m, name, 1);
        }
        spin(50 + MANAGER_METADATA_FOLLOW_MSEC); /* the metadata events of placementd's own records */
}

static void uncrowd(Manager *m, virDomainPtr *doms, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                virDomainDestroy(doms[i]);
                virDomainFree(doms[i]);
        }
        manager_free(m);
        spin(20);
}

/* More domains that could gain than one pass reads: the pass reads its share, the next one comes a
 * HealInterval= later for the rest, and after that nothing is read again. */
START_TEST(test_reads_per_pass_bounded)
{
        Manager *m = fixture_manager_new(base, CROWD_TOPOLOGY, "[Placement]\nHealInterval=1\n");
        virDomainPtr doms[70];

        crowd(m, doms, G_N_ELEMENTS(doms));
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, 64);
        spin(1500); /* the pass for the rest */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 2);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, G_N_ELEMENTS(doms));
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, G_N_ELEMENTS(doms));
        spin(1500); /* and none after it */
        ck_assert_uint_eq(manager_stats(m)->heal_passes, 3);
        ck_assert_uint_eq(g_hash_table_size(m->heal_requests), G_N_ELEMENTS(doms));
        uncrowd(m, doms, G_N_ELEMENTS(doms));
}
END_TEST

/* Reads grown old are read again as far as a pass's share goes, after every domain never read; the
 * others are planned on as they were read. */
START_TEST(test_old_reads_after_new_ones)
{
        Manager *m = fixture_manager_new(base, CROWD_TOPOLOGY, "[Placement]\nHealInterval=60\n");
        virDomainPtr doms[70];

        crowd(m, doms, G_N_ELEMENTS(doms));
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, 64);
        ck_assert_uint_eq(g_hash_table_size(m->heal_requests), 64);
        m->heal_read_max_age_usec = 0; /* every read is old from now on */
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, 128);
        ck_assert_uint_eq(g_hash_table_size(m->heal_requests), G_N_ELEMENTS(doms)); /* the 6 first */
        ck_assert_uint_eq(manager_heal(m, NULL), 0);
        ck_assert_uint_eq(manager_stats(m)->heal_reads, 192);
        uncrowd(m, doms, G_N_ELEMENTS(doms));
}
END_TEST

static Suite *manager_heal_suite(void)
{
        Suite *s = suite_create("manager heal");
        TCase *tc = tcase_create("heal");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_burst_of_stops_one_heal);
        tcase_add_test(tc, test_load_change_not_held_by_debounce);
        tcase_add_test(tc, test_cooling_looked_at_again);
        tcase_add_test(tc, test_moved_looked_at_again);
        tcase_add_test(tc, test_heal_off);
        tcase_add_test(tc, test_unplug_followed_from_stats);
        tcase_add_test(tc, test_heal_turned_on_by_reload);
        tcase_add_test(tc, test_overcommitted_no_more_after_departures);
        tcase_add_test(tc, test_beside_held_emulator_stays_overcommitted);
        tcase_add_test(tc, test_departure_places_unplaceable);
        tcase_add_test(tc, test_start_up_heals_nothing);
        tcase_add_test(tc, test_warmup_from_start_event);
        tcase_add_test(tc, test_warming_sharing_moves_to_free_core);
        tcase_add_test(tc, test_load_change_heals_at_once);
        tcase_add_test(tc, test_load_off_on_reload_forgets);
        tcase_add_test(tc, test_stop_forgets_load);
        tcase_add_test(tc, test_unplug_heals);
        tcase_add_test(tc, test_rebalance_keeps_constraints);
        tcase_add_test(tc, test_later_passes_read_nothing);
        tcase_add_test(tc, test_changed_since_read_not_moved);
        tcase_add_test(tc, test_refused_move_plans_the_rest);
        tcase_add_test(tc, test_held_job_not_moved);
        tcase_add_test(tc, test_rebalance_undoes_idle_sharing);
        tcase_add_test(tc, test_heal_undoes_idle_sharing_with_cores_to_spare);
        tcase_add_test(tc, test_changed_in_a_loop_bounded);
        tcase_add_test(tc, test_gone_since_read_not_moved);
        tcase_add_test(tc, test_failed_move_not_claimed);
        tcase_add_test(tc, test_metadata_change_read_again);
        tcase_add_test(tc, test_reads_per_pass_bounded);
        tcase_add_test(tc, test_old_reads_after_new_ones);
        tcase_add_test(tc, test_host_load_beside_own_vcpus_moved);
        tcase_add_test(tc, test_unmeasured_host_threads_start_apart);
        tcase_add_test(tc, test_host_load_over_a_core_spread);
        suite_add_tcase(s, tc);

        /* Libvirt taken away and back: each waits out the reconnect backoff on the clock. Tagged:
         * tests/meson.build runs the tag as a test of its own (CK_INCLUDE_TAGS), beside the rest
         * (CK_EXCLUDE_TAGS). */
        tc = tcase_create("libvirt away");
        tcase_set_tags(tc, "away");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_heal_after_reconnect);
        tcase_add_test(tc, test_heal_turned_on_while_away);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_heal_suite)
