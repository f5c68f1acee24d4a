/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Load smoothing (lib/core/load.h): samples in, smoothed per-vCPU and host-side load out. */
#include <math.h>
#include <string.h>

#include "test-util.h"
#include "load.h"
#include "policy.h"
#include "test-policy-util.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)
/* One half-life both ways: the interval arithmetic alone. */
#define EVEN30 ((LoadSmoothing){.rise_sec = 30, .fall_sec = 30})

START_TEST(test_unknown_until_sampled)
{
        g_autoptr(DomainLoad) l = domain_load_new();
        double one[] = {0.25, 1.0};

        ck_assert_ptr_null(domain_load_vcpu_busy(l));
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 3), 3); /* unknown: every vCPU busy */
        ck_assert_int_eq(domain_load_update(l, one, 2, 0.5, 10, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert(l->known);
        /* the first sample is taken as it is */
        ck_assert(NEAR(domain_load_vcpu_busy(l)[0], 0.25));
        ck_assert(NEAR(l->host_busy, 0.5));
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 2), 1);
}
END_TEST

START_TEST(test_half_life)
{
        g_autoptr(DomainLoad) coarse = domain_load_new();
        g_autoptr(DomainLoad) fine = domain_load_new();
        double idle = 0, busy = 1;

        ck_assert_int_eq(domain_load_update(coarse, &idle, 1, 0, 10, EVEN30, NULL), 0);
        ck_assert_int_eq(domain_load_update(fine, &idle, 1, 0, 10, EVEN30, NULL), 0);
        /* a step to fully busy shows half after one half-life, however often it is sampled */
        ck_assert_int_eq(domain_load_update(coarse, &busy, 1, 2, 30, EVEN30, NULL), 0);
        for (int i = 0; i < 6; i++)
                ck_assert_int_eq(domain_load_update(fine, &busy, 1, 2, 5, EVEN30, NULL), 0);
        ck_assert(NEAR(coarse->vcpu_busy[0], 0.5));
        ck_assert(NEAR(fine->vcpu_busy[0], 0.5));
        ck_assert(NEAR(coarse->host_busy, 1.0));
        ck_assert(NEAR(fine->host_busy, 1.0));
        ck_assert(NEAR(fine->sampled_sec, 40));
}
END_TEST

START_TEST(test_rises_show_sooner)
{
        g_autoptr(DomainLoad) up = domain_load_new();
        g_autoptr(DomainLoad) down = domain_load_new();
        double quiet = 0.05, idle = 0, busy = 1;

        ck_assert_int_eq(domain_load_update(up, &quiet, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert_int_eq(domain_load_update(down, &busy, 1, 2, 5, LOAD_SMOOTHING(0), NULL), 0);
        /* ten seconds of a step, two samples at the default LoadInterval= */
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(domain_load_update(up, &busy, 1, 2, 5, LOAD_SMOOTHING(0), NULL), 0);
                ck_assert_int_eq(domain_load_update(down, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        }
        /* a vCPU that turned busy is seen busy, host-side threads likewise */
        ck_assert(NEAR(up->vcpu_busy[0], 0.525)); /* half of the way from 0.05 to 1 */
        ck_assert_uint_eq(domain_load_busy_vcpus(up, 1), 1);
        ck_assert(NEAR(up->host_busy, 1.0));
        /* one that turned idle still counts as busy: a lull does not give its core away */
        ck_assert(NEAR(down->vcpu_busy[0], exp2(-10.0 / LOAD_FALL_HALF_LIFE_SEC)));
        ck_assert_uint_eq(domain_load_busy_vcpus(down, 1), 1);
        /* and is idle after the fall's half-life */
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(domain_load_update(down, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert(NEAR(down->vcpu_busy[0], 0.5));
        ck_assert(NEAR(down->host_busy, 1.0));
}
END_TEST

/* From fully idle, a vCPU that turns fully busy is busy after its half-life, as documented: two samples at
 * the default LoadInterval=5, not three (floating point put the second at 0.49999999999999994) */
START_TEST(test_busy_after_the_half_life_from_zero)
{
        g_autoptr(DomainLoad) l = domain_load_new();
        double idle = 0, busy = 1;

        ck_assert_int_eq(domain_load_update(l, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert_int_eq(domain_load_update(l, &busy, 1, 1, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 0);
        ck_assert_int_eq(domain_load_update(l, &busy, 1, 1, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 1);
        ck_assert(l->host_busy >= 0.5);
}
END_TEST

/* A steady sample is reached exactly, rising or falling: rising from 0 to 0.5 once stopped at 0.499999999
 * (the step rounded to nothing), and a vCPU exactly half busy never counted as busy */
START_TEST(test_converges_to_the_sample)
{
        g_autoptr(DomainLoad) up = domain_load_new();
        g_autoptr(DomainLoad) down = domain_load_new();
        double idle = 0, half = 0.5, busy = 1, quarter = 0.25;

        ck_assert_int_eq(domain_load_update(up, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert_int_eq(domain_load_update(down, &busy, 1, 2, 5, LOAD_SMOOTHING(0), NULL), 0);
        for (int i = 0; i < 200; i++) {
                ck_assert_int_eq(domain_load_update(up, &half, 1, 0.5, 5, LOAD_SMOOTHING(0), NULL), 0);
                ck_assert_int_eq(domain_load_update(down, &quarter, 1, 0.25, 5, LOAD_SMOOTHING(0), NULL), 0);
        }
        ck_assert(up->vcpu_busy[0] >= 0.5 && up->vcpu_busy[0] <= 0.5);
        ck_assert(up->host_busy >= 0.5 && up->host_busy <= 0.5);
        ck_assert_uint_eq(domain_load_busy_vcpus(up, 1), 1);
        ck_assert(down->vcpu_busy[0] >= 0.25 && down->vcpu_busy[0] <= 0.25);
        ck_assert(down->host_busy >= 0.25 && down->host_busy <= 0.25);
        /* a sample a rounding error off the value is taken, not the nearest billionth */
        {
                g_autoptr(DomainLoad) l = domain_load_new();
                double x = 0.123456789123, y = nextafter(x, 1.0), z = nextafter(x, 0.0);
                ck_assert_int_eq(domain_load_update(l, &x, 1, x, 5, LOAD_SMOOTHING(0), NULL), 0);
                ck_assert_int_eq(domain_load_update(l, &y, 1, y, 5, LOAD_SMOOTHING(0), NULL), 0);
                ck_assert(fabs(l->vcpu_busy[0] - x) < 1e-15 && fabs(l->host_busy - x) < 1e-15);
                ck_assert_int_eq(domain_load_update(l, &z, 1, z, 5, LOAD_SMOOTHING(0), NULL), 0);
                ck_assert(fabs(l->vcpu_busy[0] - x) < 1e-15 && fabs(l->host_busy - x) < 1e-15);
        }
        /* and stays there */
        ck_assert_int_eq(domain_load_update(up, &half, 1, 0.5, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert(up->vcpu_busy[0] >= 0.5 && up->vcpu_busy[0] <= 0.5);
        /* tiny loads too, rising from 0 or falling to them: not floored at 0 */
        {
                g_autoptr(DomainLoad) rise = domain_load_new();
                g_autoptr(DomainLoad) fall = domain_load_new();
                double tiny = 2e-6, tinier = 5e-7;
                ck_assert_int_eq(domain_load_update(rise, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
                ck_assert_int_eq(domain_load_update(fall, &busy, 1, 1, 5, LOAD_SMOOTHING(0), NULL), 0);
                for (int i = 0; i < 400; i++) {
                        ck_assert_int_eq(
                            domain_load_update(rise, &tiny, 1, tiny, 5, LOAD_SMOOTHING(0), NULL), 0);
                        ck_assert_int_eq(
                            domain_load_update(fall, &tinier, 1, tinier, 5, LOAD_SMOOTHING(0), NULL), 0);
                }
                ck_assert(rise->vcpu_busy[0] >= tiny && rise->vcpu_busy[0] <= tiny);
                ck_assert(fall->vcpu_busy[0] >= tinier && fall->vcpu_busy[0] <= tinier);
        }
}
END_TEST

/* Noisy samples around LOAD_BUSY_THRESHOLD: the smoothed value crosses it again and again, the load
 * class (whose change runs a heal pass) changes once, when the vCPU first turns busy. A vCPU that counts
 * busy keeps counting busy until it falls under LOAD_IDLE_THRESHOLD; host-side load likewise keeps its
 * level until it falls LOAD_HOST_CLASS_BAND under it. */
START_TEST(test_class_holds_in_the_band)
{
        static const double noise[] = {0.6, 0.3, 0.55, 0.35, 0.5, 0.4, 0.62, 0.25, 0.56, 0.38};
        g_autoptr(DomainLoad) l = domain_load_new();
        double idle = 0.1, sample;
        unsigned crossings = 0, changes = 0, cls;
        bool above = false;

        ck_assert_int_eq(domain_load_update(l, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        cls = domain_load_class(l);
        for (unsigned i = 0; i < 720; i++) { /* an hour at the default LoadInterval= */
                sample = noise[i % G_N_ELEMENTS(noise)];
                ck_assert_int_eq(domain_load_update(l, &sample, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
                crossings += (l->vcpu_busy[0] >= LOAD_BUSY_THRESHOLD) != above;
                above = l->vcpu_busy[0] >= LOAD_BUSY_THRESHOLD;
                changes += domain_load_class(l) != cls;
                cls = domain_load_class(l);
                ck_assert(i < 20 || l->vcpu_busy[0] > LOAD_IDLE_THRESHOLD); /* in the band, not under it */
        }
        ck_assert_uint_ge(crossings, 20); /* the samples do cross the threshold */
        ck_assert_uint_eq(changes, 1);    /* the class does once: idle to busy */
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 1);
        /* what the engine takes says busy in the band: held at the threshold, or above it */
        ck_assert(domain_load_vcpu_busy(l)[0] >= LOAD_BUSY_THRESHOLD);
        /* a vCPU that really turns idle counts as idle once under LOAD_IDLE_THRESHOLD */
        idle = 0;
        while (l->vcpu_busy[0] >= LOAD_IDLE_THRESHOLD) {
                ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 1);
                ck_assert_int_eq(domain_load_update(l, &idle, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        }
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 0);
        ck_assert(NEAR(domain_load_vcpu_busy(l)[0], l->vcpu_busy[0]));
        /* and rising back into the band from under it, stays idle until the threshold */
        sample = 0.45;
        for (unsigned i = 0; i < 100; i++)
                ck_assert_int_eq(domain_load_update(l, &sample, 1, 0, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert(NEAR(l->vcpu_busy[0], 0.45));
        ck_assert_uint_eq(domain_load_busy_vcpus(l, 1), 0);
        ck_assert(NEAR(domain_load_vcpu_busy(l)[0], 0.45));
}
END_TEST

/* The same for host-side load at a level heal acts on (half a core): one change in an hour of noise */
START_TEST(test_host_class_holds_in_the_band)
{
        static const double noise[] = {0.6, 0.3, 0.55, 0.35, 0.5, 0.4, 0.62, 0.25, 0.56, 0.38};
        g_autoptr(DomainLoad) l = domain_load_new();
        double vcpu = 0, host = 0.1;
        unsigned crossings = 0, changes = 0, cls;
        bool above = false;

        ck_assert_int_eq(domain_load_update(l, &vcpu, 1, host, 5, LOAD_SMOOTHING(0), NULL), 0);
        cls = domain_load_class(l);
        for (unsigned i = 0; i < 720; i++) {
                host = noise[i % G_N_ELEMENTS(noise)];
                ck_assert_int_eq(domain_load_update(l, &vcpu, 1, host, 5, LOAD_SMOOTHING(0), NULL), 0);
                crossings += (l->host_busy >= 0.5) != above;
                above = l->host_busy >= 0.5;
                changes += domain_load_class(l) != cls;
                cls = domain_load_class(l);
        }
        ck_assert_uint_ge(crossings, 20);
        ck_assert_uint_eq(changes, 2); /* a quarter of a core, then half */
        /* a real fall changes it */
        host = 0.3;
        for (unsigned i = 0; i < 100; i++)
                ck_assert_int_eq(domain_load_update(l, &vcpu, 1, host, 5, LOAD_SMOOTHING(0), NULL), 0);
        ck_assert_uint_ne(domain_load_class(l), cls);
}
END_TEST

START_TEST(test_bad_samples)
{
        g_autoptr(DomainLoad) l = domain_load_new();
        double ok = 0.5, nan_ = NAN, neg = -0.1, over = 7;
        g_autofree char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL;

        ck_assert_int_eq(domain_load_update(l, &nan_, 1, 0, 10, EVEN30, &e1), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e1, "vCPU 0"));
        ck_assert_int_eq(domain_load_update(l, &neg, 1, 0, 10, EVEN30, &e2), -EINVAL);
        ck_assert_int_eq(domain_load_update(l, &ok, 1, INFINITY, 10, EVEN30, &e3), -EINVAL);
        ck_assert_int_eq(domain_load_update(l, &ok, 1, 0, 0, EVEN30, &e4), -EINVAL);
        ck_assert_int_eq(
            domain_load_update(l, &ok, 1, 0, 10, (LoadSmoothing){.rise_sec = 0, .fall_sec = 30}, NULL),
            -EINVAL);
        ck_assert_ptr_nonnull(strstr(e4, "interval"));
        ck_assert(!l->known); /* nothing taken from a bad sample */
        /* a vCPU runs at most all the time */
        ck_assert_int_eq(domain_load_update(l, &over, 1, 1e9, 10, EVEN30, NULL), 0);
        ck_assert(NEAR(l->vcpu_busy[0], 1.0));
        ck_assert(NEAR(l->host_busy, LOAD_HOST_BUSY_MAX));
}
END_TEST

START_TEST(test_hotplug_keeps_smoothing)
{
        g_autoptr(DomainLoad) l = domain_load_new();
        double two[] = {1, 1}, three[] = {0, 0, 0.75};

        ck_assert_int_eq(domain_load_update(l, two, 2, 0, 10, EVEN30, NULL), 0);
        ck_assert_int_eq(domain_load_update(l, three, 3, 0, 30, EVEN30, NULL), 0);
        ck_assert_uint_eq(l->nvcpus, 3);
        ck_assert(NEAR(l->vcpu_busy[0], 0.5));  /* smoothed */
        ck_assert(NEAR(l->vcpu_busy[2], 0.75)); /* new: the sample */
        ck_assert_int_eq(domain_load_update(l, two, 1, 0, 30, EVEN30, NULL), 0);
        ck_assert_uint_eq(l->nvcpus, 1);
}
END_TEST

/* Samples a domain gets over intervals of interval_sec, with a warm-up of 10 s, until its load is known;
 * returns how many were set aside. */
static unsigned set_aside(double interval_sec)
{
        g_autoptr(DomainLoad) l = domain_load_new();
        double busy = 1;
        unsigned n = 0;

        for (; n < 100; n++) {
                ck_assert_int_eq(domain_load_update(l, &busy, 1, 0, interval_sec, LOAD_SMOOTHING(10), NULL),
                                 0);
                if (l->known)
                        break;
        }
        ck_assert(l->known);
        ck_assert(NEAR(l->sampled_sec, interval_sec)); /* only the sample after the warm-up counts */
        ck_assert(NEAR(l->warmup_sec, n * interval_sec));
        return n;
}

START_TEST(test_warmup_sets_start_up_aside)
{
        g_autoptr(DomainLoad) l = domain_load_new();
        double start_up = 0.04, busy = 1;

        /* a sample at least half in the first 10 s is start-up */
        ck_assert_uint_eq(set_aside(5), 2);
        ck_assert_uint_eq(set_aside(1), 10);
        ck_assert_uint_eq(set_aside(6), 2);  /* 6-12 s: two thirds in it */
        ck_assert_uint_eq(set_aside(8), 1);  /* 8-16 s: a quarter */
        ck_assert_uint_eq(set_aside(30), 0); /* a third: the long sample is the domain's load */
        ck_assert_uint_eq(set_aside(4.9999), 2);
        ck_assert_uint_eq(set_aside(5.0001), 2);
        /* the first sample after it is taken as it is: no trace of the start-up */
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(domain_load_update(l, &start_up, 1, 0.46, 5, LOAD_SMOOTHING(10), NULL), 0);
        ck_assert(l->known);
        ck_assert(NEAR(l->vcpu_busy[0], 0.04));
        ck_assert(NEAR(l->host_busy, 0.46));
        l->known = false;
        l->warmup_sec = 0;
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(domain_load_update(l, i < 2 ? &start_up : &busy, 1, i < 2 ? 0.46 : 0, 5,
                                                    LOAD_SMOOTHING(10), NULL),
                                 0);
        ck_assert(NEAR(l->vcpu_busy[0], 1.0));
        ck_assert(NEAR(l->host_busy, 0));
        /* once known, nothing is set aside again; a bad warm-up is refused */
        ck_assert_int_eq(domain_load_update(l, &start_up, 1, 0, 5, LOAD_SMOOTHING(1000), NULL), 0);
        ck_assert(l->vcpu_busy[0] < 1.0);
        ck_assert_int_eq(domain_load_update(l, &busy, 1, 0, 5, LOAD_SMOOTHING(-1), NULL), -EINVAL);
        ck_assert_int_eq(domain_load_update(l, &busy, 1, 0, 5, LOAD_SMOOTHING(NAN), NULL), -EINVAL);
}
END_TEST

START_TEST(test_fraction)
{
        ck_assert(NEAR(load_fraction(100, 600, 1000), 0.5));
        ck_assert(NEAR(load_fraction(600, 100, 1000), 0));  /* went back (a restart): no load */
        ck_assert(NEAR(load_fraction(0, 500, 0), 0));       /* no time passed */
        ck_assert(NEAR(load_fraction(0, 3000, 1000), 3.0)); /* several host threads */
}
END_TEST

static const DomainLoad *lookup_b(const char *key, void *userdata)
{
        return strcmp(key, "b") == 0 ? userdata : NULL;
}

START_TEST(test_pu_busy)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(DomainLoad) lb = domain_load_new();
        double b_busy[] = {0.25};
        g_autofree double *busy = NULL;
        const Plan *a, *b;
        double sum = 0;

        a = test_place(t, l, &p, "a", 1, GiB);
        b = test_place(t, l, &p, "b", 1, GiB);
        ck_assert_int_eq(domain_load_update(lb, b_busy, 1, 1.0, 10, EVEN30, NULL), 0);
        busy = load_pu_busy(l, lookup_b, lb);
        ck_assert(NEAR(busy[a->vcpu_pu[0]], 1.0)); /* unknown: busy */
        ck_assert(busy[b->vcpu_pu[0]] >= 0.25 - 1e-9);
        for (unsigned i = 0; i < t->npus; i++)
                sum += busy[i];
        /* a 1 + b's vCPU 0.25 + its host threads 1.0, on its emulator's PUs */
        ck_assert(NEAR(sum, 2.25));
}
END_TEST

static const DomainLoad *lookup_named(const char *key, void *userdata)
{
        return g_hash_table_lookup(userdata, key);
}

/* What three domains on one PU keep busy there, with a, b and c busy by the fractions given. */
static double one_pu_busy(double a, double b, double c)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 1, 1, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        g_autoptr(GHashTable) loads =
            g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)domain_load_free);
        const char *names[] = {"a", "b", "c"};
        double busy[] = {a, b, c};
        g_autofree double *sums = NULL;

        for (unsigned i = 0; i < 3; i++) {
                DomainLoad *dl = domain_load_new();
                ck_assert_int_eq(domain_load_update(dl, &busy[i], 1, 0, 10, EVEN30, NULL), 0);
                g_hash_table_insert(loads, (gpointer)names[i], dl);
                test_place(t, l, &p, names[i], 1, GiB);
        }
        sums = load_pu_busy(l, lookup_named, loads);
        return sums[0];
}

static bool same_bits(double a, double b)
{
        return memcmp(&a, &b, sizeof(a)) == 0;
}

/* A PU's sum is the same whichever domain is named what (added up in doubles, 0.3 + 0.1 + 0.6 is 1 and
 * 0.6 + 0.3 + 0.1 is not): a placement does not turn on the names of the domains around it. */
START_TEST(test_pu_busy_whatever_the_names)
{
        double abc = one_pu_busy(0.1, 0.2, 0.2), cab = one_pu_busy(0.2, 0.2, 0.1);

        ck_assert(NEAR(abc, 0.5));
        ck_assert_msg(same_bits(abc, cab), "%.17g against %.17g", abc, cab);
        ck_assert(same_bits(one_pu_busy(0.3, 0.1, 0.6), one_pu_busy(0.6, 0.3, 0.1)));
}
END_TEST

static Suite *load_suite(void)
{
        Suite *s = suite_create("load");
        TCase *tc = tcase_create("smoothing");
        tcase_add_test(tc, test_unknown_until_sampled);
        tcase_add_test(tc, test_half_life);
        tcase_add_test(tc, test_rises_show_sooner);
        tcase_add_test(tc, test_busy_after_the_half_life_from_zero);
        tcase_add_test(tc, test_converges_to_the_sample);
        tcase_add_test(tc, test_class_holds_in_the_band);
        tcase_add_test(tc, test_host_class_holds_in_the_band);
        tcase_add_test(tc, test_bad_samples);
        tcase_add_test(tc, test_hotplug_keeps_smoothing);
        tcase_add_test(tc, test_warmup_sets_start_up_aside);
        tcase_add_test(tc, test_fraction);
        tcase_add_test(tc, test_pu_busy);
        tcase_add_test(tc, test_pu_busy_whatever_the_names);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(load_suite)
