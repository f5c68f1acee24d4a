/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Typed reads of untrusted JSON (json-get.h). */
#include "json-get.h"

static JsonNode *member(JsonObject *o, const char *name)
{
        return o ? json_object_get_member(o, name) : NULL;
}

static JsonNode *element(JsonArray *a, unsigned i)
{
        return a && i < json_array_get_length(a) ? json_array_get_element(a, i) : NULL;
}

static GType value_type(JsonNode *n)
{
        return n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
}

static const char *node_string(JsonNode *n)
{
        return value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : "";
}

static gint64 node_int(JsonNode *n, gint64 fallback)
{
        return value_type(n) == G_TYPE_INT64 ? json_node_get_int(n) : fallback;
}

static double node_double(JsonNode *n)
{
        GType t = value_type(n);
        return t == G_TYPE_DOUBLE || t == G_TYPE_INT64 ? json_node_get_double(n) : 0;
}

const char *json_get_string(JsonObject *o, const char *name)
{
        return node_string(member(o, name));
}

gint64 json_get_int(JsonObject *o, const char *name, gint64 fallback)
{
        return node_int(member(o, name), fallback);
}

double json_get_double(JsonObject *o, const char *name)
{
        return node_double(member(o, name));
}

gboolean json_get_bool(JsonObject *o, const char *name)
{
        JsonNode *n = member(o, name);
        return value_type(n) == G_TYPE_BOOLEAN && json_node_get_boolean(n);
}

JsonArray *json_get_array(JsonObject *o, const char *name)
{
        JsonNode *n = member(o, name);
        return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

JsonObject *json_get_object(JsonObject *o, const char *name)
{
        JsonNode *n = member(o, name);
        return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

const char *json_elem_string(JsonArray *a, unsigned i)
{
        return node_string(element(a, i));
}

gint64 json_elem_int(JsonArray *a, unsigned i, gint64 fallback)
{
        return node_int(element(a, i), fallback);
}

double json_elem_double(JsonArray *a, unsigned i)
{
        return node_double(element(a, i));
}

JsonObject *json_elem_object(JsonArray *a, unsigned i)
{
        JsonNode *n = element(a, i);
        return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

unsigned json_length(JsonArray *a)
{
        return a ? json_array_get_length(a) : 0;
}
