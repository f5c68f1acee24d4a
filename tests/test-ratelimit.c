/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "ratelimit.h"
#include "test-util.h"

#define SEC 1000000ull

START_TEST(test_burst_then_rate)
{
        g_autoptr(RateLimit) r = rate_limit_new(5, 20, 16);
        unsigned passed = 0;

        for (unsigned i = 0; i < 100; i++)
                passed += rate_limit_take(r, ":1.7", 1, 0) == RATE_PASS;
        ck_assert_uint_eq(passed, 20);
        /* one second later: 5 more */
        passed = 0;
        for (unsigned i = 0; i < 100; i++)
                passed += rate_limit_take(r, ":1.7", 1, SEC) == RATE_PASS;
        ck_assert_uint_eq(passed, 5);
        /* another sender has its own bucket */
        ck_assert_int_eq(rate_limit_take(r, ":1.8", 1, SEC), RATE_PASS);
}
END_TEST

START_TEST(test_cost)
{
        g_autoptr(RateLimit) r = rate_limit_new(5, 20, 16);

        /* a call of cost 17 leaves 3 tokens: three cheap calls, not a second costly one */
        ck_assert_int_eq(rate_limit_take(r, "a", 17, 0), RATE_PASS);
        ck_assert_int_eq(rate_limit_take(r, "a", 17, 0), RATE_UNKNOWN);
        for (unsigned i = 0; i < 3; i++)
                ck_assert_int_eq(rate_limit_take(r, "a", 1, 0), RATE_PASS);
        ck_assert_int_eq(rate_limit_take(r, "a", 1, 0), RATE_UNKNOWN);
        /* a cost above the burst is capped at it: possible once the bucket is full */
        ck_assert_int_eq(rate_limit_take(r, "b", 1000, 0), RATE_PASS);
        ck_assert_int_eq(rate_limit_take(r, "b", 1, 0), RATE_UNKNOWN);
        ck_assert_int_eq(rate_limit_take(r, "b", 1000, 4 * SEC), RATE_PASS);
}
END_TEST

START_TEST(test_classify)
{
        g_autoptr(RateLimit) r = rate_limit_new(1, 1, 16);

        ck_assert_int_eq(rate_limit_take(r, "root", 1, 0), RATE_PASS);
        ck_assert_int_eq(rate_limit_take(r, "root", 1, 0), RATE_UNKNOWN);
        rate_limit_classify(r, "root", true, 0);
        for (unsigned i = 0; i < 1000; i++)
                ck_assert_int_eq(rate_limit_take(r, "root", 1, 0), RATE_PASS);

        ck_assert_int_eq(rate_limit_take(r, "nobody", 1, 0), RATE_PASS);
        ck_assert_int_eq(rate_limit_take(r, "nobody", 1, 0), RATE_UNKNOWN);
        rate_limit_classify(r, "nobody", false, 0);
        ck_assert_int_eq(rate_limit_take(r, "nobody", 1, 0), RATE_DENY);
}
END_TEST

START_TEST(test_drain)
{
        g_autoptr(RateLimit) r = rate_limit_new(5, 20, 16);

        /* drained: nothing left at once, the refill as after any spend; an exempt key is never drained */
        ck_assert_int_eq(rate_limit_take(r, "a", 1, 0), RATE_PASS);
        rate_limit_drain(r, "a", 0);
        ck_assert_int_eq(rate_limit_take(r, "a", 1, 0), RATE_UNKNOWN);
        ck_assert_int_eq(rate_limit_take(r, "a", 1, SEC / 5), RATE_PASS);
        rate_limit_drain(r, "fresh", 0);
        ck_assert_int_eq(rate_limit_take(r, "fresh", 1, 0), RATE_UNKNOWN);
        rate_limit_classify(r, "root", true, 0);
        rate_limit_drain(r, "root", 0);
        ck_assert_int_eq(rate_limit_take(r, "root", 1, 0), RATE_PASS);
}
END_TEST

START_TEST(test_bounded_table)
{
        g_autoptr(RateLimit) r = rate_limit_new(1, 2, 8);
        unsigned passed = 0;

        /* 1000 made-up senders: the table stays at 8, the rest share one bucket of 2 */
        for (unsigned i = 0; i < 1000; i++) {
                char key[32];
                snprintf(key, sizeof(key), ":1.%u", i);
                passed += rate_limit_take(r, key, 1, 0) == RATE_PASS;
        }
        ck_assert_uint_eq(rate_limit_keys(r), 8);
        ck_assert_uint_eq(passed, 8 + 2);
        /* the first eight keep their own buckets */
        ck_assert_int_eq(rate_limit_take(r, ":1.0", 1, 0), RATE_PASS);
        /* once their buckets are full again, idle entries make room for newcomers */
        ck_assert_int_eq(rate_limit_take(r, "late", 1, 10 * SEC), RATE_PASS);
        ck_assert_int_eq(rate_limit_take(r, "late", 1, 10 * SEC), RATE_PASS);
        ck_assert_uint_eq(rate_limit_keys(r), 1);
}
END_TEST

static Suite *ratelimit_suite(void)
{
        Suite *s = suite_create("ratelimit");
        TCase *tc = tcase_create("buckets");
        tcase_add_test(tc, test_burst_then_rate);
        tcase_add_test(tc, test_cost);
        tcase_add_test(tc, test_classify);
        tcase_add_test(tc, test_drain);
        tcase_add_test(tc, test_bounded_table);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(ratelimit_suite)
