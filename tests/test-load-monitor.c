/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The load monitor: CPU-time counters of bulk statistics samples in, smoothed load out. */
#include <math.h>

#include "test-util.h"
#include "load-monitor.h"
#include "virt-stats.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

/* Adds a domain to sample t: its vCPUs' cumulative times and the host-side time, in ns. */
static GHashTable *add(GHashTable *t, const char *uuid, unsigned n, const uint64_t *vcpu_ns,
                       uint64_t host_ns)
{
        DomainCpuStats *s = g_new0(DomainCpuStats, 1);

        s->nvcpu_times = s->nvcpus = n;
        s->vcpu_time_ns = g_memdup2(vcpu_ns, sizeof(uint64_t) * n);
        s->host_ns = host_ns;
        g_hash_table_insert(t, g_strdup(uuid), s);
        return t;
}

/* A sample of one domain. */
static GHashTable *sample(const char *uuid, unsigned n, const uint64_t *vcpu_ns, uint64_t host_ns)
{
        return add(
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)domain_cpu_stats_free),
            uuid, n, vcpu_ns, host_ns);
}

START_TEST(test_two_samples_make_a_load)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t t0[] = {0, 0}, t1[] = {UINT64_C(900000000), 1000}; /* 0.9 s and 1 us in 1 s */
        g_autoptr(GHashTable) s0 = sample("u", 2, t0, 0);
        g_autoptr(GHashTable) s1 = sample("u", 2, t1, UINT64_C(2100000000)); /* 2.1 host cores */
        g_autoptr(GHashTable) none = g_hash_table_new(g_str_hash, g_str_equal);
        const DomainLoad *l;

        ck_assert_uint_eq(load_monitor_update(lm, s0, 1000000, 0), 0);
        ck_assert_ptr_null(load_monitor_lookup(lm, "u")); /* one reading is no fraction yet */
        ck_assert(!load_monitor_any_known(lm));
        ck_assert_uint_eq(load_monitor_update(lm, s1, 2000000, 0), 1);
        l = load_monitor_lookup(lm, "u");
        ck_assert_ptr_nonnull(l);
        ck_assert(NEAR(l->vcpu_busy[0], 0.9));
        ck_assert(NEAR(l->vcpu_busy[1], 1e-6));
        ck_assert(NEAR(l->host_busy, 2.1));
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 2), 1);
        ck_assert_uint_eq(load_monitor_known(lm), 1);
        ck_assert(load_monitor_any_known(lm));
        /* counters that stood still for a second: idle for a second, smoothed, still busy, the host-side
         * load still over 2 cores; no change */
        ck_assert_uint_eq(load_monitor_update(lm, s1, 3000000, 0), 0);
        l = load_monitor_lookup(lm, "u");
        ck_assert(l->vcpu_busy[0] < 0.9 && l->vcpu_busy[0] > 0.85);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 2), 1);
        /* gone from a sample: forgotten */
        load_monitor_update(lm, none, 4000000, 0);
        ck_assert_ptr_null(load_monitor_lookup(lm, "u"));
        ck_assert(!load_monitor_any_known(lm));
}
END_TEST

/* The count of known loads follows a known domain that stops (forgotten) or starts again (measured anew),
 * without a sample in between. */
START_TEST(test_known_count_follows_forget_and_start)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t t0[] = {0}, t1[] = {UINT64_C(500000000)};
        g_autoptr(GHashTable) v0 = sample("v", 1, t0, 0);
        g_autoptr(GHashTable) v1 = sample("v", 1, t1, 0);
        g_autoptr(GHashTable) w0 = sample("w", 1, t0, 0);
        g_autoptr(GHashTable) w1 = sample("w", 1, t1, 0);

        load_monitor_update(lm, v0, 1000000, 0);
        load_monitor_update(lm, v1, 2000000, 0);
        ck_assert_uint_eq(load_monitor_known(lm), 1);
        load_monitor_forget(lm, "v");
        load_monitor_forget(lm, "v"); /* twice: counted down once */
        ck_assert_uint_eq(load_monitor_known(lm), 0);
        ck_assert(!load_monitor_any_known(lm));
        load_monitor_update(lm, w0, 3000000, 0);
        load_monitor_update(lm, w1, 4000000, 0);
        ck_assert(load_monitor_any_known(lm));
        load_monitor_started(lm, "w", 4500000); /* started again: unknown until measured anew */
        ck_assert_ptr_null(load_monitor_lookup(lm, "w"));
        ck_assert(!load_monitor_any_known(lm));
}
END_TEST

/* A domain is warming (heal leaves it alone) from its start until its load is known, once samples come;
 * while none came (a host whose stats call fails), no domain waits for them. */
START_TEST(test_warming_until_known)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t t0[] = {0}, t1[] = {UINT64_C(500000000)};
        g_autoptr(GHashTable) s0 = sample("u", 1, t0, 0);
        g_autoptr(GHashTable) s1 = sample("u", 1, t1, 0);

        load_monitor_started(lm, "u", 1000000);
        ck_assert(!load_monitor_warming(lm, "u")); /* no sample yet */
        ck_assert(!load_monitor_warming(lm, "other"));
        load_monitor_update(lm, s0, 2000000, 0);
        ck_assert(load_monitor_warming(lm, "u")); /* one reading is no fraction yet */
        load_monitor_update(lm, s1, 3000000, 0);
        ck_assert_ptr_nonnull(load_monitor_lookup(lm, "u"));
        ck_assert(!load_monitor_warming(lm, "u"));
}
END_TEST

#define SEC UINT64_C(1000000000)

START_TEST(test_turning_busy_seen_in_two_samples)
{
        /* every 5 s (LoadInterval=5): "up" idle (0.05), then fully busy; "down" busy, then idle */
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t up[] = {0, SEC / 4, SEC / 4 + 5 * SEC, SEC / 4 + 10 * SEC};
        uint64_t down[] = {0, 5 * SEC, 5 * SEC, 5 * SEC};
        unsigned changed[4];

        for (unsigned i = 0; i < 4; i++) {
                g_autoptr(GHashTable) s = sample("up", 1, &up[i], 0);
                add(s, "down", 1, &down[i], 0);
                changed[i] = load_monitor_update(lm, s, (uint64_t)(i + 1) * 5 * G_USEC_PER_SEC, 0);
        }
        /* after 5 s of it "up" is not busy yet, after 10 s it is: a class change for the heal pass */
        ck_assert_uint_eq(changed[2], 0);
        ck_assert_uint_eq(changed[3], 1);
        ck_assert_uint_eq(domain_load_busy_vcpus(load_monitor_lookup(lm, "up"), 1), 1);
        /* 10 s idle is a lull: "down" keeps counting as busy */
        ck_assert_uint_eq(domain_load_busy_vcpus(load_monitor_lookup(lm, "down"), 1), 1);
        ck_assert(load_monitor_lookup(lm, "down")->vcpu_busy[0] > 0.75);
}
END_TEST

/* Host-side load that reaches a quarter of a core (LOAD_HOST_REPIN_GAIN, what the load rules and heal act
 * on) changes the class: 0.1 cores for the first sample, then 0.7 twice (smoothed with the 10 s rise
 * half-life: 0.28, then 0.40); the second rise stays in the class. */
START_TEST(test_host_load_quarter_core_is_a_class)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t vcpu[] = {0, 0, 0, 0};
        uint64_t host[] = {0, SEC / 2, SEC / 2 + 7 * SEC / 2, SEC / 2 + 7 * SEC};
        unsigned changed[4];
        double h[4];

        for (unsigned i = 0; i < 4; i++) {
                g_autoptr(GHashTable) s = sample("h", 1, &vcpu[i], host[i]);
                changed[i] = load_monitor_update(lm, s, (uint64_t)(i + 1) * 5 * G_USEC_PER_SEC, 0);
                h[i] = i ? load_monitor_lookup(lm, "h")->host_busy : 0;
        }
        ck_assert_uint_eq(changed[1], 1); /* known */
        ck_assert(NEAR(h[1], 0.1));
        ck_assert(h[2] > 0.25 && h[2] < 0.3);
        ck_assert_uint_eq(changed[2], 1); /* past a quarter of a core */
        ck_assert(h[3] > 0.35 && h[3] < 0.45);
        ck_assert_uint_eq(changed[3], 0);
}
END_TEST

/* Host-side load that rises from 1.1 cores to 1.6 stays "busy" but passes a quarter of a core over one
 * core's worth, which heal acts on: its class changes (a heal pass runs at once); a second idle at the
 * same level changes nothing. */
START_TEST(test_host_load_rise_past_a_core_is_a_class)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t vcpu[] = {0};
        uint64_t host = 0;
        unsigned changed = 0;

        for (unsigned i = 0; i < 12; i++) {
                g_autoptr(GHashTable) s = sample("h", 1, vcpu, host);
                unsigned c = load_monitor_update(lm, s, (uint64_t)(i + 1) * 5 * G_USEC_PER_SEC, 0);
                if (i >= 3)
                        changed += c;
                host += (i < 3 ? 11 : 16) * SEC / 2; /* 1.1 cores for 5 s, then 1.6 */
        }
        ck_assert(load_monitor_lookup(lm, "h")->host_busy > 1.5);
        ck_assert_msg(changed >= 1, "the rise from 1.1 to 1.6 host cores changed no class");
}
END_TEST

START_TEST(test_hotplug_restarts_counters)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t one[] = {0}, one_later[] = {500000000}, two[] = {600000000, 999000000000};
        g_autoptr(GHashTable) s0 = sample("u", 1, one, 0);
        g_autoptr(GHashTable) s1 = sample("u", 1, one_later, 0);
        g_autoptr(GHashTable) s2 = sample("u", 2, two, 0);

        load_monitor_update(lm, s0, 1000000, 0);
        load_monitor_update(lm, s1, 2000000, 0);
        ck_assert(NEAR(load_monitor_lookup(lm, "u")->vcpu_busy[0], 0.5));
        /* a new vCPU has no earlier reading: the sample only starts its counters, and it counts as busy
         * (unknown) until the next */
        load_monitor_update(lm, s2, 3000000, 0);
        ck_assert_uint_eq(load_monitor_lookup(lm, "u")->nvcpus, 2);
        ck_assert(NEAR(load_monitor_lookup(lm, "u")->vcpu_busy[0], 0.5));
        ck_assert(NEAR(domain_load_vcpu_busy(load_monitor_lookup(lm, "u"))[1], 1.0));
}
END_TEST

/* vCPU 1 unplugged and plugged again between two samples (setvcpus 1, setvcpus 2), its count unchanged:
 * its counter starts over with the new thread, and the old thread's hour leaves the vCPUs' sum but not
 * the domain's (host_ns = cpu.time less the vCPUs'). Read as host-side load, that was 700 cores for a
 * 5 s interval (clamped, then minutes to fall back); the interval is set aside. */
START_TEST(test_replugged_vcpu_is_no_host_load)
{
        const uint64_t s = UINT64_C(1000000000);
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t t0[] = {3600 * s, 3600 * s}, t1[] = {3605 * s, 3605 * s}, t2[] = {3610 * s, 5 * s};
        g_autoptr(GHashTable) s0 = sample("u", 2, t0, 360 * s);
        g_autoptr(GHashTable) s1 = sample("u", 2, t1, 360 * s + s / 2);
        g_autoptr(GHashTable) s2 = sample("u", 2, t2, 361 * s + 3605 * s);
        const DomainLoad *l;

        load_monitor_update(lm, s0, 5 * G_USEC_PER_SEC, 0);
        load_monitor_update(lm, s1, 10 * G_USEC_PER_SEC, 0);
        load_monitor_update(lm, s2, 15 * G_USEC_PER_SEC, 0);
        l = load_monitor_lookup(lm, "u");
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(l->host_busy < 0.5, "host-side load %.1f cores", l->host_busy);
        ck_assert(NEAR(l->vcpu_busy[0], 1.0));
}
END_TEST

/* A sample whose vCPU times were read ahead of the domain's cpu.time (a busy guest's vCPUs ran on between
 * the two reads): the vCPUs' sum is over the total, and host_ns (total less the vCPUs', floored at 0)
 * reads 0 once. The host-side counter did not go back: the next sample, read in order, is no more than the
 * few milliseconds of host-side time since. Taken from 0, it read the domain's whole host-side time, 10 s,
 * as 2 cores of host-side load in 5 s (0.6 smoothed), a class change and a heal pass for nothing. */
START_TEST(test_host_time_read_behind_is_no_host_load)
{
        const uint64_t s = UINT64_C(1000000000);
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t t0[] = {500 * s}, t1[] = {505 * s}, t2[] = {510 * s}, t3[] = {515 * s};
        g_autoptr(GHashTable) s0 = sample("u", 1, t0, 10 * s);
        g_autoptr(GHashTable) s1 = sample("u", 1, t1, 10 * s + s / 10);
        g_autoptr(GHashTable) s2 = sample("u", 1, t2, 0); /* the vCPU's time read ahead of cpu.time */
        g_autoptr(GHashTable) s3 = sample("u", 1, t3, 10 * s + s / 5);
        const DomainLoad *l;
        unsigned cls;

        load_monitor_update(lm, s0, 5 * G_USEC_PER_SEC, 0);
        load_monitor_update(lm, s1, 10 * G_USEC_PER_SEC, 0);
        cls = domain_load_class(load_monitor_lookup(lm, "u"));
        load_monitor_update(lm, s2, 15 * G_USEC_PER_SEC, 0);
        ck_assert_uint_eq(load_monitor_update(lm, s3, 20 * G_USEC_PER_SEC, 0), 0);
        l = load_monitor_lookup(lm, "u");
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(l->host_busy < 0.05, "host-side load %.2f cores", l->host_busy);
        ck_assert_uint_eq(domain_load_class(l), cls);
        ck_assert(NEAR(l->vcpu_busy[0], 1.0));
}
END_TEST

/* The same on the first reading of a domain (its start seen, or placementd restarted under it): with no
 * earlier reading to keep, host_ns read as 0 there made the next interval count the domain's whole
 * host-side time, 10 s of it in 5 s: 2 cores. And a reading behind the last one is measured over the time
 * since that one: the interval after it is not counted twice as busy. */
START_TEST(test_first_host_time_read_behind_is_no_host_load)
{
        const uint64_t s = UINT64_C(1000000000);
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t t0[] = {500 * s}, t1[] = {505 * s}, t2[] = {510 * s}, t3[] = {515 * s};
        g_autoptr(GHashTable) s0 = sample("u", 1, t0, 0);
        g_autoptr(GHashTable) s1 = sample("u", 1, t1, 10 * s);
        g_autoptr(GHashTable) s2 = sample("u", 1, t2, 10 * s - s / 1000); /* read a millisecond behind */
        g_autoptr(GHashTable) s3 = sample("u", 1, t3, 10 * s + 4 * s);
        const DomainLoad *l;

        ((DomainCpuStats *)g_hash_table_lookup(s0, "u"))->total_ns = 500 * s; /* the vCPU's read ahead */
        ((DomainCpuStats *)g_hash_table_lookup(s1, "u"))->total_ns = 515 * s;
        ((DomainCpuStats *)g_hash_table_lookup(s2, "u"))->total_ns = 520 * s;
        ((DomainCpuStats *)g_hash_table_lookup(s3, "u"))->total_ns = 529 * s;
        load_monitor_update(lm, s0, 5 * G_USEC_PER_SEC, 0);
        load_monitor_update(lm, s1, 10 * G_USEC_PER_SEC, 0);
        l = load_monitor_lookup(lm, "u");
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(l->host_busy < 0.05, "host-side load %.2f cores", l->host_busy);
        /* 4 s of host-side time over the 10 s since the reading before s2: 0.4 cores (smoothed: a 5 s
         * step of a 10 s half-life), not 0.8 */
        load_monitor_update(lm, s2, 15 * G_USEC_PER_SEC, 0);
        load_monitor_update(lm, s3, 20 * G_USEC_PER_SEC, 0);
        l = load_monitor_lookup(lm, "u");
        ck_assert_msg(fabs(l->host_busy - 0.4 * (1 - exp2(-0.5))) < 1e-6, "host-side load %.3f cores",
                      l->host_busy);
}
END_TEST

START_TEST(test_waiting_counts_as_busy)
{
        /* two busy vCPUs time-sharing one CPU: each ran half the second and waited the other half */
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t zero[] = {0}, half[] = {500000000};
        g_autoptr(GHashTable) s0 = sample("u", 1, zero, 0);
        g_autoptr(GHashTable) s1 = sample("u", 1, half, 0);
        DomainCpuStats *st0 = g_hash_table_lookup(s0, "u"), *st1 = g_hash_table_lookup(s1, "u");

        st0->vcpu_wait_ns = g_memdup2(zero, sizeof(zero));
        st1->vcpu_wait_ns = g_memdup2(half, sizeof(half));
        load_monitor_update(lm, s0, 1000000, 0);
        load_monitor_update(lm, s1, 2000000, 0);
        ck_assert(NEAR(load_monitor_lookup(lm, "u")->vcpu_busy[0], 1.0));
}
END_TEST

/* A monitor after two samples of one 1-vCPU domain "u" a second apart, in which its vCPU ran ran_ns and
 * waited waited_ns for a host CPU. */
static LoadMonitor *ran_and_waited(uint64_t ran_ns, uint64_t waited_ns)
{
        LoadMonitor *lm = load_monitor_new();
        uint64_t zero[] = {0}, ran[] = {ran_ns}, waited[] = {waited_ns};
        g_autoptr(GHashTable) s0 = sample("u", 1, zero, 0);
        g_autoptr(GHashTable) s1 = sample("u", 1, ran, 0);

        ((DomainCpuStats *)g_hash_table_lookup(s0, "u"))->vcpu_wait_ns = g_memdup2(zero, sizeof(zero));
        ((DomainCpuStats *)g_hash_table_lookup(s1, "u"))->vcpu_wait_ns = g_memdup2(waited, sizeof(waited));
        load_monitor_update(lm, s0, 1000000, 0);
        load_monitor_update(lm, s1, 2000000, 0);
        return lm;
}

START_TEST(test_waking_often_stays_idle)
{
        /* ran 50 ms of a second, waited 450 ms in many short waits on a loaded host: not busy */
        g_autoptr(LoadMonitor) lm = ran_and_waited(50000000, 450000000);

        ck_assert(NEAR(load_monitor_lookup(lm, "u")->vcpu_busy[0], 0.1));
        ck_assert_uint_eq(domain_load_busy_vcpus(load_monitor_lookup(lm, "u"), 1), 0);
}
END_TEST

/* A vCPU that ran 0.2 of a second and waited 0.8 reads 0.4, idle: the numbers of one of five spinners
 * on one CPU and of a spinner alone under a 20% CPU quota (throttled time is run delay too). The first
 * is busy and the second is not, and the two samples cannot tell them apart: counting the whole wait when
 * it nearly fills the interval called every quota-capped vCPU a busy thread that needs a core, and put
 * a cliff at the line where an idle vCPU on a crowded host flapped between idle and busy. */
START_TEST(test_wait_counted_up_to_what_it_ran)
{
        g_autoptr(LoadMonitor) lm = ran_and_waited(200000000, 800000000);

        ck_assert(NEAR(load_monitor_lookup(lm, "u")->vcpu_busy[0], 0.4));
        ck_assert_uint_eq(domain_load_busy_vcpus(load_monitor_lookup(lm, "u"), 1), 0);
}
END_TEST

/*
 * A guest as a real host showed it (libvirtd + QEMU, sampled every second): for its first 3 s its emulator
 * thread builds the machine (0.46 cores) while its vCPU barely runs (0.04), then its vCPU spins. Taken
 * from its first sample on, 11 s in it reads an idle vCPU and busy-looking host threads; with the
 * start-up set aside it is unknown (counted busy, as at its start) and then busy at once.
 */
static const DomainLoad *start_up(LoadMonitor *lm, unsigned warmup_sec, unsigned *ret_changed)
{
        uint64_t vcpu = 0, host = 0;

        *ret_changed = 0;
        for (unsigned s = 0; s <= 11; s++) {
                g_autoptr(GHashTable) t = NULL;
                if (s > 0) {
                        vcpu += s <= 3 ? SEC / 25 : SEC;
                        host += s <= 3 ? SEC * 46 / 100 : SEC / 50;
                }
                t = sample("u", 1, &vcpu, host);
                *ret_changed += load_monitor_update(lm, t, (uint64_t)(s + 1) * G_USEC_PER_SEC, warmup_sec);
                if (s > 0 && s < 11 && warmup_sec == 10)
                        ck_assert_ptr_null(load_monitor_lookup(lm, "u")); /* start-up: unknown */
        }
        return load_monitor_lookup(lm, "u");
}

START_TEST(test_start_up_set_aside)
{
        g_autoptr(LoadMonitor) taken = load_monitor_new();
        g_autoptr(LoadMonitor) aside = load_monitor_new();
        unsigned changed_taken, changed_aside;
        const DomainLoad *lt = start_up(taken, 0, &changed_taken);
        const DomainLoad *la = start_up(aside, 10, &changed_aside);

        ck_assert_uint_eq(domain_load_busy_vcpus(lt, 1), 0);
        ck_assert(lt->host_busy > 0.3);
        ck_assert_uint_eq(domain_load_busy_vcpus(la, 1), 1);
        ck_assert(NEAR(la->vcpu_busy[0], 1.0));
        ck_assert(NEAR(la->host_busy, 0.02));
        ck_assert_uint_eq(changed_aside, 1); /* one class change: unknown to busy */
        ck_assert_uint_ge(changed_taken, 1);
}
END_TEST

/* Stopped and started again between two samples: the new QEMU's cpu.time starts from 0. The old life's
 * load is not the new guest's: it is measured anew, its start-up set aside. */
START_TEST(test_restart_measured_anew)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t v0[] = {0}, v1[] = {SEC}, v2[] = {SEC / 100}, v3[] = {SEC / 50};
        g_autoptr(GHashTable) s0 = sample("u", 1, v0, 0), s1 = sample("u", 1, v1, 0);
        g_autoptr(GHashTable) s2 = sample("u", 1, v2, 0), s3 = sample("u", 1, v3, 0);

        ((DomainCpuStats *)g_hash_table_lookup(s0, "u"))->total_ns = 100 * SEC;
        ((DomainCpuStats *)g_hash_table_lookup(s1, "u"))->total_ns = 101 * SEC;
        ((DomainCpuStats *)g_hash_table_lookup(s2, "u"))->total_ns = SEC / 10; /* a new QEMU */
        ((DomainCpuStats *)g_hash_table_lookup(s3, "u"))->total_ns = SEC / 5;
        load_monitor_update(lm, s0, 1 * G_USEC_PER_SEC, 0);
        load_monitor_update(lm, s1, 2 * G_USEC_PER_SEC, 0);
        ck_assert_uint_eq(domain_load_busy_vcpus(load_monitor_lookup(lm, "u"), 1), 1);
        ck_assert_uint_eq(load_monitor_update(lm, s2, 3 * G_USEC_PER_SEC, 0), 0);
        ck_assert_ptr_null(load_monitor_lookup(lm, "u")); /* one reading of the new guest */
        load_monitor_update(lm, s3, 4 * G_USEC_PER_SEC, 0);
        ck_assert(NEAR(load_monitor_lookup(lm, "u")->vcpu_busy[0], 0.01)); /* not smoothed with the old */
}
END_TEST

/*
 * A busy guest paused for a minute (virsh suspend, a snapshot, a migration's last step): its counters
 * stand still, which would read as idle and, smoothed, let it drop to idle; heal could then put a busy
 * guest on its core and move one of them again at the resume. The samples that touch the pause are set
 * aside (the one it began in too: that one is part paused), the load is held as it was before it, and
 * after the resume it is measured again from the first whole running interval.
 */
START_TEST(test_paused_load_held)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t vcpu = 0, host = 0;
        unsigned changed = 0, s = 0;
        const DomainLoad *l;

        for (; s <= 70; s++) {
                g_autoptr(GHashTable) t = NULL;
                bool paused = s >= 4 && s < 64;
                if (s > 0 && !paused) {
                        vcpu += SEC;
                        host += SEC / 50;
                }
                if (s == 4)
                        vcpu += SEC / 2; /* paused half way through that interval */
                t = sample("u", 1, &vcpu, host);
                ((DomainCpuStats *)g_hash_table_lookup(t, "u"))->paused = paused;
                changed += load_monitor_update(lm, t, (uint64_t)(s + 1) * G_USEC_PER_SEC, 0);
                l = load_monitor_lookup(lm, "u");
                if (s < 1)
                        continue;
                ck_assert_ptr_nonnull(l);
                ck_assert_msg(NEAR(l->vcpu_busy[0], 1.0), "second %u: %f", s, l->vcpu_busy[0]);
                ck_assert(NEAR(l->host_busy, 0.02));
                ck_assert(l->paused == paused);
        }
        ck_assert_uint_eq(changed, 1);          /* unknown to busy, nothing after */
        ck_assert(NEAR(l->sampled_sec, 3 + 6)); /* the seconds before the pause and after the resume */
}
END_TEST

/*
 * A guest whose owner pauses it for a moment around every reading (virsh suspend and resume, timed to
 * LoadInterval=, whose phase `placementctl show` gives away) and runs flat out in between: every sample
 * touches a pause, and were all of them set aside, the idle load it had before would be held for as long
 * as it kept it up, a busy guest counted idle, its cores calm for busy arrivals and heal. A pause only
 * makes a vCPU read less than it ran, so such a sample may still raise the load: 0.9 of every second
 * run counts busy, as it would unpaused. The host-side load stays held (QEMU's own work around a
 * pause, a snapshot's or a migration's, is not the guest's).
 */
START_TEST(test_paused_at_every_reading_still_seen_busy)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t vcpu = 0, host = 0;
        unsigned changed = 0;
        const DomainLoad *l = NULL;

        for (unsigned s = 0; s <= 40; s++) {
                g_autoptr(GHashTable) t = NULL;
                bool burning = s > 5;
                vcpu += s == 0 ? 0 : burning ? SEC * 9 / 10 : SEC / 50;
                host += s == 0    ? 0
                        : burning ? SEC
                                  : SEC / 50; /* a core's worth while it pauses and resumes */
                t = sample("u", 1, &vcpu, host);
                ((DomainCpuStats *)g_hash_table_lookup(t, "u"))->paused = burning;
                changed += load_monitor_update(lm, t, (uint64_t)(s + 1) * G_USEC_PER_SEC, 0);
                l = load_monitor_lookup(lm, "u");
                if (s == 5) {
                        ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 0);
                        ck_assert_uint_eq(changed, 1); /* unknown to idle */
                }
        }
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(domain_load_busy_vcpus(l, 1) == 1, "running 0.9 of the time, read %f",
                      l->vcpu_busy[0]);
        ck_assert(l->vcpu_busy[0] > 0.8); /* 35 s of a 10 s half-life rise to 0.9 */
        ck_assert_uint_eq(changed, 2);    /* idle to busy: a heal pass */
        ck_assert(NEAR(l->host_busy, 0.02));
}
END_TEST

/*
 * The same with the vCPU count changed at every reading (virsh setvcpus --live, 2 and 3 in turn; libvirt
 * sends no event, the count is read in the sample): the vCPUs that stay ran at least what their counters
 * say, and vCPU 0, busy all the time, counts busy; before, every such sample was set aside.
 */
START_TEST(test_vcpu_count_changed_at_every_reading_still_seen_busy)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t v[3] = {0, 0, 0};
        const DomainLoad *l = NULL;

        for (unsigned s = 0; s <= 40; s++) {
                g_autoptr(GHashTable) t = NULL;
                bool burning = s > 5;
                v[0] += s == 0 ? 0 : burning ? SEC : SEC / 50;
                v[1] += s == 0 ? 0 : SEC / 50;
                v[2] = 0;
                t = sample("u", burning && s % 2 ? 3 : 2, v, 0);
                load_monitor_update(lm, t, (uint64_t)(s + 1) * G_USEC_PER_SEC, 0);
                l = load_monitor_lookup(lm, "u");
                if (s == 5)
                        ck_assert_uint_eq(domain_load_busy_vcpus(l, 2), 0);
        }
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(l->vcpu_busy[0] > 0.8, "busy all the time, read %f", l->vcpu_busy[0]);
        ck_assert_msg(l->vcpu_busy[1] < 0.05, "idle, read %f", l->vcpu_busy[1]);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, l->nvcpus), 1);
}
END_TEST

/* A sample of vCPUs 0 and 2 of v[3] (vCPU 1 unplugged: libvirt's ids 0, 2). */
static GHashTable *sample_without_vcpu1(const uint64_t *v)
{
        uint64_t running[2] = {v[0], v[2]};
        static const unsigned ids[2] = {0, 2};
        GHashTable *t = sample("u", 2, running, 0);
        DomainCpuStats *st = g_hash_table_lookup(t, "u");

        st->vcpu_ids = g_memdup2(ids, sizeof(ids));
        return t;
}

/* vCPU 1 of an idle guest's 0-2 unplugged (virsh setvcpu D 1 --disable) between two samples 10 s apart:
 * libvirt then reports vcpu.0 and vcpu.2, the domain's vCPUs 0 and 1, and vCPU 2's counter, an hour of
 * work done long before, is no reading of vCPU 1's. Read as vCPU 1's last 10 s it raised that idle vCPU
 * to busy (0.51); only vCPU 0, the same vCPU in both samples, may rise by such a sample. */
START_TEST(test_middle_vcpu_unplugged_not_read_as_the_next)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t v[3] = {0, 0, 3600 * SEC};
        const DomainLoad *l;

        for (unsigned s = 0; s <= 4; s++) {
                g_autoptr(GHashTable) t = NULL;
                for (unsigned i = 0; i < 3; i++)
                        v[i] += s == 0 ? 0 : 10 * SEC / 50;
                t = s < 4 ? sample("u", 3, v, 0) : sample_without_vcpu1(v);
                load_monitor_update(lm, t, (uint64_t)(s + 1) * 10 * G_USEC_PER_SEC, 0);
        }
        l = load_monitor_lookup(lm, "u");
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(l->vcpu_busy[1] < 0.05, "idle, read %f", l->vcpu_busy[1]);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, l->nvcpus), 0);
}
END_TEST

/*
 * After a vCPU in the middle is unplugged, each vCPU that stays keeps its own load, by libvirt's id, not the
 * load of the vCPU that stood in its place before: vCPUs 0-2 every 5 s, one of 1 and 2 spinning, the other
 * idle; vCPU 1 leaves. vCPU 2, second now, reads as it did at once (two samples on), where it took the
 * load of vCPU 1 and smoothed from it: busy counted idle (0.3) and idle counted busy (0.9). vCPU 0 idles.
 */
static const DomainLoad *unplug_middle(LoadMonitor *lm, bool second_busy)
{
        uint64_t v[3] = {0, 0, 0};

        for (unsigned s = 0; s <= 12; s++) {
                g_autoptr(GHashTable) t = NULL;
                for (unsigned i = 0; s > 0 && i < 3; i++)
                        v[i] += i == (second_busy ? 2u : 1u) ? 5 * SEC : 5 * SEC / 100;
                t = s < 11 ? sample("u", 3, v, 0) : sample_without_vcpu1(v);
                load_monitor_update(lm, t, (uint64_t)(s + 1) * 5 * G_USEC_PER_SEC, 0);
        }
        return load_monitor_lookup(lm, "u");
}

START_TEST(test_middle_vcpu_unplugged_keeps_each_load)
{
        g_autoptr(LoadMonitor) busy = load_monitor_new();
        g_autoptr(LoadMonitor) idle = load_monitor_new();
        const DomainLoad *l = unplug_middle(busy, true);

        ck_assert_ptr_nonnull(l);
        ck_assert_uint_eq(l->nvcpus, 2);
        ck_assert_msg(domain_load_vcpu_busy(l)[1] > 0.9, "busy vCPU 2 read %f", domain_load_vcpu_busy(l)[1]);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 2), 1);
        l = unplug_middle(idle, false);
        ck_assert_ptr_nonnull(l);
        ck_assert_msg(domain_load_vcpu_busy(l)[1] < 0.05, "idle vCPU 2 read %f",
                      domain_load_vcpu_busy(l)[1]);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 2), 0);
}
END_TEST

/* A guest paused before its load is known (started paused) stays unknown: counted busy, as placed. */
START_TEST(test_paused_from_start_unknown)
{
        g_autoptr(LoadMonitor) lm = load_monitor_new();
        uint64_t vcpu = 0;

        for (unsigned s = 0; s < 10; s++) {
                g_autoptr(GHashTable) t = sample("u", 1, &vcpu, 0);
                ((DomainCpuStats *)g_hash_table_lookup(t, "u"))->paused = true;
                ck_assert_uint_eq(load_monitor_update(lm, t, (uint64_t)(s + 1) * G_USEC_PER_SEC, 0), 0);
                ck_assert_ptr_null(load_monitor_lookup(lm, "u"));
        }
}
END_TEST

/*
 * The warm-up covers a guest's start-up, which begins at its start: when placementd saw the start, the
 * warm-up counts from then, not from its first reading (up to one LoadInterval= later). Every 5 s,
 * LoadWarmup=5: first read 3 s after the start, the next sample has 2 of its 5 s in the warm-up and is
 * taken; read 1 s after, it has 4 and is set aside. Counted from the first reading, both are set aside.
 */
static const DomainLoad *warm_from_start(LoadMonitor *lm, bool started, uint64_t first_sec,
                                         uint64_t second_sec)
{
        uint64_t v0 = 0, v1 = (second_sec - first_sec) * SEC;
        g_autoptr(GHashTable) s0 = sample("u", 1, &v0, 0), s1 = sample("u", 1, &v1, 0);

        if (started)
                load_monitor_started(lm, "u", 100 * G_USEC_PER_SEC);
        load_monitor_update(lm, s0, (100 + first_sec) * G_USEC_PER_SEC, 5);
        load_monitor_update(lm, s1, (100 + second_sec) * G_USEC_PER_SEC, 5);
        return load_monitor_lookup(lm, "u");
}

START_TEST(test_warmup_counts_from_start)
{
        g_autoptr(LoadMonitor) a = load_monitor_new(), b = load_monitor_new(), c = load_monitor_new();
        g_autoptr(LoadMonitor) d = load_monitor_new();
        const DomainLoad *l = warm_from_start(a, true, 3, 8);
        uint64_t v0 = 0, v1 = 5 * SEC;
        g_autoptr(GHashTable) none = g_hash_table_new(g_str_hash, g_str_equal);
        g_autoptr(GHashTable) s0 = sample("u", 1, &v0, 0), s1 = sample("u", 1, &v1, 0);

        ck_assert_ptr_nonnull(l);
        ck_assert(NEAR(l->vcpu_busy[0], 1.0));
        ck_assert_ptr_null(warm_from_start(b, false, 3, 8));
        ck_assert_ptr_null(warm_from_start(c, true, 1, 6));
        /* a start no sample holds (gone before the bulk call) is dropped with that sample: a later
         * reading of that UUID counts the warm-up from itself */
        load_monitor_started(d, "u", G_USEC_PER_SEC);
        load_monitor_update(d, none, 2 * G_USEC_PER_SEC, 5);
        load_monitor_update(d, s0, 20 * G_USEC_PER_SEC, 5);
        load_monitor_update(d, s1, 25 * G_USEC_PER_SEC, 5);
        ck_assert_ptr_null(load_monitor_lookup(d, "u"));
}
END_TEST

static Suite *load_monitor_suite(void)
{
        Suite *s = suite_create("load monitor");
        TCase *tc = tcase_create("samples");
        tcase_add_test(tc, test_two_samples_make_a_load);
        tcase_add_test(tc, test_known_count_follows_forget_and_start);
        tcase_add_test(tc, test_warming_until_known);
        tcase_add_test(tc, test_turning_busy_seen_in_two_samples);
        tcase_add_test(tc, test_host_load_quarter_core_is_a_class);
        tcase_add_test(tc, test_host_load_rise_past_a_core_is_a_class);
        tcase_add_test(tc, test_hotplug_restarts_counters);
        tcase_add_test(tc, test_replugged_vcpu_is_no_host_load);
        tcase_add_test(tc, test_waiting_counts_as_busy);
        tcase_add_test(tc, test_wait_counted_up_to_what_it_ran);
        tcase_add_test(tc, test_waking_often_stays_idle);
        tcase_add_test(tc, test_start_up_set_aside);
        tcase_add_test(tc, test_restart_measured_anew);
        tcase_add_test(tc, test_paused_load_held);
        tcase_add_test(tc, test_paused_from_start_unknown);
        tcase_add_test(tc, test_paused_at_every_reading_still_seen_busy);
        tcase_add_test(tc, test_vcpu_count_changed_at_every_reading_still_seen_busy);
        tcase_add_test(tc, test_middle_vcpu_unplugged_not_read_as_the_next);
        tcase_add_test(tc, test_middle_vcpu_unplugged_keeps_each_load);
        tcase_add_test(tc, test_warmup_counts_from_start);
        tcase_add_test(tc, test_host_time_read_behind_is_no_host_load);
        tcase_add_test(tc, test_first_host_time_read_behind_is_no_host_load);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(load_monitor_suite)
