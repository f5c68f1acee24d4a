/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decision-json.h"
#include "hostmap.h"
#include "test-util.h"
#include "test-policy-util.h"

START_TEST(test_decision_shape)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 16, 2, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        const Plan *plan = test_place(t, l, &p, "web1", 4, 4 * GiB);
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        decision_json_add_members(b, t, plan, TRUE);
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        JsonObject *o = json_node_get_object(root);
        ck_assert_str_eq(json_object_get_string_member(o, "domain"), "web1");
        ck_assert_int_eq(json_object_get_int_member(o, "vcpus"), 4);
        ck_assert_int_eq(json_object_get_int_member(o, "memory"), 4294967296);
        ck_assert_str_eq(json_object_get_string_member(o, "policy"), "explicit");
        ck_assert_str_eq(json_object_get_string_member(o, "result"), "placed");
        JsonArray *nodes = json_object_get_array_member(o, "nodes");
        ck_assert_uint_eq(json_array_get_length(nodes), 1);
        ck_assert_int_eq(json_array_get_int_element(nodes, 0), 0);
        JsonArray *pins = json_object_get_array_member(o, "vcpu_pins");
        ck_assert_uint_eq(json_array_get_length(pins), 4);
        ck_assert_str_eq(json_array_get_string_element(pins, 0), "0-1");
        ck_assert_str_eq(json_array_get_string_element(pins, 3), "6-7");
        ck_assert_str_eq(json_object_get_string_member(o, "memory_nodes"), "0");
        ck_assert(strlen(json_object_get_string_member(o, "reason")) > 10);
        ck_assert_uint_gt(json_array_get_length(json_object_get_array_member(o, "candidates")), 0);
}
END_TEST

START_TEST(test_map)
{
        g_autoptr(Topology) t = topology_new_uniform(2, 4, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        PlacementParams p = test_params(POLICY_EXPLICIT);
        test_place(t, l, &p, "alpha", 2, GiB);
        test_place(t, l, &p, "beta", 5, GiB);
        g_autoptr(CpuSet) reserved = cpuset_new();
        cpuset_add(reserved, 15);
        g_autofree char *map = hostmap_render(t, l, reserved);
        ck_assert_ptr_nonnull(strstr(map, "node 0"));
        ck_assert_ptr_nonnull(strstr(map, "[A.][A.]"));
        ck_assert_ptr_nonnull(strstr(map, "A alpha"));
        ck_assert_ptr_nonnull(strstr(map, "B beta"));
        ck_assert_ptr_nonnull(strstr(map, "#]"));
}
END_TEST

static Suite *json_suite(void)
{
        Suite *s = suite_create("decision json");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_decision_shape);
        tcase_add_test(tc, test_map);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(json_suite)
