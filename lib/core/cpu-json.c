/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpu-json.h"

#include <string.h>

static void add_string(JsonBuilder *b, const char *key, const char *value)
{
        json_builder_set_member_name(b, key);
        if (value)
                json_builder_add_string_value(b, value);
        else
                json_builder_add_null_value(b);
}

void cpu_json_add_feature_list(JsonBuilder *b, const char *key, const GPtrArray *names)
{
        json_builder_set_member_name(b, key);
        json_builder_begin_array(b);
        for (unsigned i = 0; names && i < names->len; i++)
                json_builder_add_string_value(b, g_ptr_array_index(names, i));
        json_builder_end_array(b);
}

static bool contains(const GPtrArray *names, const char *name)
{
        for (unsigned i = 0; i < names->len; i++)
                if (strcmp(g_ptr_array_index(names, i), name) == 0)
                        return true;
        return false;
}

void cpu_advice_json_add_members(JsonBuilder *b, const CpuAdvice *a)
{
        add_string(b, "domain", a->domain);
        add_string(b, "mode", cpu_mode_to_string(a->mode));
        add_string(b, "model", a->model);
        add_string(b, "vendor", a->vendor);
        add_string(b, "verdict", cpu_verdict_to_string(a->verdict));
        json_builder_set_member_name(b, "hidden");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < a->hidden->len; i++) {
                const char *name = g_ptr_array_index(a->hidden, i);
                const CpuFeatureInfo *info = cpu_feature_info(name);

                json_builder_begin_object(b);
                add_string(b, "feature", name);
                add_string(b, "group", info ? info->group : NULL);
                add_string(b, "note", info ? info->note : NULL);
                json_builder_set_member_name(b, "offered");
                if (a->suggested_model)
                        json_builder_add_boolean_value(b, contains(a->recovered, name));
                else
                        json_builder_add_null_value(b);
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        cpu_json_add_feature_list(b, "declined", a->declined);
        json_builder_set_member_name(b, "suggested");
        if (!a->suggested_model) {
                json_builder_add_null_value(b);
                return;
        }
        json_builder_begin_object(b);
        add_string(b, "mode", "host-model");
        add_string(b, "model", a->suggested_model);
        add_string(b, "vendor", a->suggested_vendor);
        cpu_json_add_feature_list(b, "recovers", a->recovered);
        cpu_json_add_feature_list(b, "loses", a->suggested_loses);
        json_builder_end_object(b);
}

char *cpu_advice_to_json(const CpuAdvice *a)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autoptr(JsonGenerator) gen = json_generator_new();

        json_builder_begin_object(b);
        cpu_advice_json_add_members(b, a);
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        json_generator_set_root(gen, root);
        return json_generator_to_data(gen, NULL);
}
