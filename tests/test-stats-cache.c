/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats-cache: requests read the last figures and never fetch; fetches happen on the timer, one per
 * interval; a failed fetch leaves no stale figures. The fetch is a fake that counts its calls.
 */
#include <errno.h>
#include <event2/event.h>
#include <glib.h>

#include "stats-cache.h"
#include "test-util.h"
#include "virt-stats.h"

typedef struct Fake {
        struct event_base *base;
        unsigned calls, stop_after;
        int fail; /* negative errno to return, or 0 */
} Fake;

static int fake_fetch(void *userdata, GHashTable **ret, char **ret_error)
{
        Fake *f = userdata;
        DomainCpuStats *s;

        f->calls++;
        if (f->stop_after && f->calls == f->stop_after)
                event_base_loopexit(f->base, NULL);
        if (f->fail) {
                *ret_error = g_strdup("fake failure");
                return f->fail;
        }
        s = g_new0(DomainCpuStats, 1);
        s->total_ns = f->calls;
        *ret = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_hash_table_insert(*ret, g_strdup("uuid-1"), s);
        return 0;
}

static uint64_t total_of(const StatsCache *c)
{
        g_autoptr(GHashTable) t = stats_cache_table(c);
        const DomainCpuStats *s = t ? g_hash_table_lookup(t, "uuid-1") : NULL;
        return s ? s->total_ns : 0;
}

START_TEST(test_requests_never_fetch)
{
        Fake f = {.base = event_base_new()};
        StatsCache *c = stats_cache_new(f.base, 60000, fake_fetch, &f);

        ck_assert_ptr_null(stats_cache_table(c));
        stats_cache_refresh(c);
        ck_assert_uint_eq(f.calls, 1);
        for (unsigned i = 0; i < 10000; i++)
                ck_assert_uint_eq(total_of(c), 1);
        ck_assert_uint_eq(f.calls, 1);
        stats_cache_free(c);
        event_base_free(f.base);
}
END_TEST

START_TEST(test_timer_refreshes)
{
        Fake f = {.base = event_base_new(), .stop_after = 3};
        StatsCache *c = stats_cache_new(f.base, 10, fake_fetch, &f);
        struct timeval guard = {.tv_sec = 10};

        event_base_loopexit(f.base, &guard); /* the third fetch ends the loop long before */
        event_base_dispatch(f.base);
        ck_assert_uint_eq(f.calls, 3);
        ck_assert_uint_eq(total_of(c), 3);
        stats_cache_free(c);
        event_base_free(f.base);
}
END_TEST

START_TEST(test_failure_drops_old_figures)
{
        Fake f = {.base = event_base_new()};
        StatsCache *c = stats_cache_new(f.base, 60000, fake_fetch, &f);

        stats_cache_refresh(c);
        ck_assert_uint_eq(total_of(c), 1);
        f.fail = -ENOTCONN;
        stats_cache_refresh(c);
        ck_assert_ptr_null(stats_cache_table(c));
        f.fail = 0;
        stats_cache_refresh(c);
        ck_assert_uint_eq(total_of(c), 3);
        stats_cache_free(c);
        event_base_free(f.base);
}
END_TEST

static virTypedParameter ull_param(const char *field, unsigned long long v)
{
        virTypedParameter p = {.type = VIR_TYPED_PARAM_ULLONG, .value.ul = v};
        g_strlcpy(p.field, field, sizeof(p.field));
        return p;
}

/* QEMU with vCPU 1 of 0-2 unplugged reports vcpu.0 and vcpu.2 only: they are the domain's vCPUs 0 and 1 */
START_TEST(test_record_sparse_vcpus)
{
        virTypedParameter params[] = {
            ull_param("cpu.time", 9000),  ull_param("vcpu.current", 2),   ull_param("vcpu.maximum", 3),
            ull_param("vcpu.0.state", 1), ull_param("vcpu.0.time", 1000), ull_param("vcpu.0.delay", 10),
            ull_param("vcpu.2.state", 1), ull_param("vcpu.2.time", 5000), ull_param("vcpu.2.delay", 50),
        };
        DomainCpuStats *s = domain_cpu_stats_from_params(params, G_N_ELEMENTS(params));

        ck_assert_uint_eq(s->nvcpus, 2);
        ck_assert_uint_eq(s->nvcpu_times, 2);
        ck_assert_uint_eq(s->vcpu_time_ns[0], 1000);
        ck_assert_uint_eq(s->vcpu_time_ns[1], 5000);
        ck_assert_uint_eq(s->vcpu_wait_ns[1], 50);
        ck_assert_uint_eq(s->vcpu_ns, 6000);
        ck_assert_uint_eq(s->host_ns, 3000);
        /* which they are, so that a sample with other vCPUs running is not read as theirs */
        ck_assert_ptr_nonnull(s->vcpu_ids);
        ck_assert_uint_eq(s->vcpu_ids[0], 0);
        ck_assert_uint_eq(s->vcpu_ids[1], 2);
        domain_cpu_stats_free(s);
}
END_TEST

/* Dense ids stay as they are, a vCPU without a time counted as 0 */
START_TEST(test_record_dense_vcpus)
{
        virTypedParameter params[] = {
            ull_param("vcpu.current", 2),
            ull_param("vcpu.0.state", 1),
            ull_param("vcpu.1.state", 1),
            ull_param("vcpu.1.time", 700),
        };
        DomainCpuStats *s = domain_cpu_stats_from_params(params, G_N_ELEMENTS(params));

        ck_assert_uint_eq(s->nvcpu_times, 2);
        ck_assert_uint_eq(s->vcpu_time_ns[0], 0);
        ck_assert_uint_eq(s->vcpu_time_ns[1], 700);
        domain_cpu_stats_free(s);
}
END_TEST

static Suite *stats_cache_suite(void)
{
        Suite *s = suite_create("stats-cache");
        TCase *tc = tcase_create("cache");
        tcase_add_test(tc, test_requests_never_fetch);
        tcase_add_test(tc, test_timer_refreshes);
        tcase_add_test(tc, test_failure_drops_old_figures);
        suite_add_tcase(s, tc);
        tc = tcase_create("libvirt's records");
        tcase_add_test(tc, test_record_sparse_vcpus);
        tcase_add_test(tc, test_record_dense_vcpus);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(stats_cache_suite)
