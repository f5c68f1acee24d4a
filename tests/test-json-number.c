/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fractional numbers in JSON output in their shortest form (json-number.h). */
#include <json-glib/json-glib.h>

#include "decision-json.h"
#include "json-number.h"
#include "test-util.h"

START_TEST(test_shortest)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"0.40000000000000002", "0.4"},
            {"[0.10000000000000001,2.5,-0.29999999999999999]", "[0.1,2.5,-0.3]"},
            {"124.44444444444444", "124.44444444444444"}, /* already the shortest that reads back */
            {"10.0", "10.0"},                             /* a whole double stays marked a double */
            {"-0.0", "-0.0"},
            {"1.0000000000000001e-05", "1e-05"},
            {"1e+20", "1e+20"},
            {"{\"n\" : 42, \"m\" : -7}", "{\"n\" : 42, \"m\" : -7}"}, /* integers as they are */
            /* strings are text, whatever they hold: quotes escaped inside them too */
            {"\"0.40000000000000002\"", "\"0.40000000000000002\""},
            {"[\"a\\\"0.40000000000000002\", 0.40000000000000002]", "[\"a\\\"0.40000000000000002\", 0.4]"},
            {"[\"a\\\\\", 0.20000000000000001]", "[\"a\\\\\", 0.2]"},
            {"{\n  \"busy\" : 0.80000000000000004,\n  \"ok\" : true\n}",
             "{\n  \"busy\" : 0.8,\n  \"ok\" : true\n}"},
            {"", ""},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *out = json_numbers_shortest(cases[i].in);
                ck_assert_msg(g_str_equal(out, cases[i].out), "case %u: %s", i, out);
        }
}
END_TEST

START_TEST(test_json_to_text_shortest)
{
        /* what placementctl and the daemon print: 0.4 as 0.4, and the value read back the same */
        static const double values[] = {0.4, 0.1 + 0.2, 1.0 / 3.0, 2.5e-7, 123456789.125, 0.0, 1e300};
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autoptr(JsonParser) p = json_parser_new();
        g_autofree char *text = NULL;
        JsonArray *a;

        json_builder_begin_array(b);
        for (unsigned i = 0; i < G_N_ELEMENTS(values); i++)
                json_builder_add_double_value(b, values[i]);
        json_builder_end_array(b);
        root = json_builder_get_root(b);
        text = json_to_text(root, FALSE);
        ck_assert_msg(g_str_has_prefix(text, "[0.4,0.30000000000000004,0.3333333333333333,2.5e-07,"), "%s",
                      text);
        ck_assert(json_parser_load_from_data(p, text, -1, NULL));
        a = json_node_get_array(json_parser_get_root(p));
        ck_assert_uint_eq(json_array_get_length(a), G_N_ELEMENTS(values));
        for (unsigned i = 0; i < G_N_ELEMENTS(values); i++) {
                double read = json_array_get_double_element(a, i);
                ck_assert_msg(memcmp(&read, &values[i], sizeof(read)) == 0, "%u: %s", i, text);
        }
}
END_TEST

static Suite *json_number_suite(void)
{
        Suite *s = suite_create("json number");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_shortest);
        tcase_add_test(tc, test_json_to_text_shortest);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(json_number_suite)
