/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-util.h"

#include <errno.h>

#include "decision.h"
#include "plan.h"
#include "topology.h"

/* Every value names itself and reads back as itself; past the end there is no name. */
#define CHECK_ROUND_TRIP(name, max)                                                                         \
        do {                                                                                                \
                for (int i = 0; i < (int)(max); i++) {                                                      \
                        const char *s = name##_to_string(i);                                                \
                        ck_assert_ptr_nonnull(s);                                                           \
                        ck_assert_int_eq(name##_from_string(s), i);                                         \
                }                                                                                           \
                ck_assert_ptr_null(name##_to_string(max));                                                  \
                ck_assert_ptr_null(name##_to_string(-1));                                                   \
                ck_assert_int_eq(name##_from_string("no-such-value"), -EINVAL);                             \
                ck_assert_int_eq(name##_from_string(""), -EINVAL);                                          \
                ck_assert_int_eq(name##_from_string(NULL), -EINVAL);                                        \
        } while (0)

START_TEST(test_round_trips)
{
        CHECK_ROUND_TRIP(policy_kind, _POLICY_MAX);
        CHECK_ROUND_TRIP(vcpu_pin_mode, _VCPU_PIN_MAX);
        CHECK_ROUND_TRIP(emulator_pin_mode, _EMULATOR_PIN_MAX);
        CHECK_ROUND_TRIP(memory_mode, _MEMORY_MODE_MAX);
        CHECK_ROUND_TRIP(core_kinds_mode, _CORE_KINDS_MAX);
        CHECK_ROUND_TRIP(node_kind, _NODE_KIND_MAX);
        CHECK_ROUND_TRIP(fit_mode, _FIT_MAX);
        CHECK_ROUND_TRIP(memory_binding, _MEMORY_BINDING_MAX);
}
END_TEST

START_TEST(test_names)
{
        ck_assert_str_eq(policy_kind_to_string(POLICY_COMPAT), "compat");
        ck_assert_str_eq(vcpu_pin_mode_to_string(VCPU_PIN_NODESET), "nodeset");
        ck_assert_str_eq(emulator_pin_mode_to_string(EMULATOR_PIN_NONE), "none");
        ck_assert_str_eq(memory_mode_to_string(MEMORY_MODE_RESTRICTIVE), "restrictive");
        ck_assert_str_eq(fit_mode_to_string(FIT_PACK), "pack");
        ck_assert_str_eq(plan_result_to_string(PLAN_ADOPTED), "adopted");
        ck_assert_ptr_null(plan_result_to_string(_PLAN_RESULT_MAX));
        ck_assert_str_eq(decision_result_to_string(DECISION_FAILED), "failed");
        ck_assert_str_eq(decision_result_to_string(DECISION_PLACED), "placed");
        ck_assert_ptr_null(decision_result_to_string(_DECISION_RESULT_MAX));
        /* the words recorded in metadata and shown by JSON and text: a restart reads them back */
        ck_assert_str_eq(memory_binding_to_string(MEMORY_BINDING_NONE), "none");
        ck_assert_str_eq(memory_binding_to_string(MEMORY_BINDING_APPLIED), "applied");
        ck_assert_str_eq(memory_binding_to_string(MEMORY_BINDING_KEPT), "kept");
        ck_assert_str_eq(memory_binding_to_string(MEMORY_BINDING_FAILED), "failed");
        ck_assert_str_eq(memory_binding_to_string(MEMORY_BINDING_OFF), "off");
        ck_assert_str_eq(memory_binding_to_string(MEMORY_BINDING_ADVISORY), "advisory");
        for (int i = 0; i < _DECISION_RESULT_MAX; i++)
                ck_assert_ptr_nonnull(decision_result_to_string(i));
        for (int i = 0; i < _PLAN_RESULT_MAX; i++)
                ck_assert_ptr_nonnull(plan_result_to_string(i));
}
END_TEST

static Suite *enum_strings_suite(void)
{
        Suite *s = suite_create("enum strings");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_round_trips);
        tcase_add_test(tc, test_names);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(enum_strings_suite)
