/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The <cputune>/<numatune> a definition would need to hold a decision (see definition-snippet.h). */
#include "definition-snippet.h"

#include "cpuset.h"
#include "decision-json.h"

#include <string.h>

static const char *string_member(JsonObject *o, const char *name)
{
        JsonNode *n = json_object_get_member(o, name);
        return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
                   ? json_node_get_string(n)
                   : NULL;
}

/* "0-1" from a cell's "nodes": [0, 1]; NULL when it has none. */
static char *cell_nodes(JsonObject *cell)
{
        JsonArray *a =
            json_object_has_member(cell, "nodes") ? json_object_get_array_member(cell, "nodes") : NULL;
        g_autoptr(CpuSet) s = cpuset_new();

        for (unsigned i = 0; a && i < json_array_get_length(a); i++) {
                gint64 n = json_array_get_int_element(a, i);
                if (n >= 0 && n <= CPUSET_MAX)
                        cpuset_add(s, (unsigned)n);
        }
        return cpuset_is_empty(s) ? NULL : cpuset_format(s);
}

static void append_numatune(GString *out, JsonObject *d, const char *memory)
{
        JsonArray *cells =
            json_object_has_member(d, "cells") ? json_object_get_array_member(d, "cells") : NULL;

        g_string_append_printf(out, "<numatune>\n  <memory mode='strict' nodeset='%s'/>\n", memory);
        for (unsigned i = 0; cells && i < json_array_get_length(cells); i++) {
                JsonObject *cell = json_array_get_object_element(cells, i);
                g_autofree char *nodes = cell ? cell_nodes(cell) : NULL;
                if (nodes)
                        g_string_append_printf(
                            out, "  <memnode cellid='%" G_GINT64_FORMAT "' mode='strict' nodeset='%s'/>\n",
                            json_object_get_int_member(cell, "id"), nodes);
        }
        g_string_append(out, "</numatune>\n");
}

char *definition_snippet(JsonObject *d, char **ret_error)
{
        JsonArray *pins =
            json_object_has_member(d, "vcpu_pins") ? json_object_get_array_member(d, "vcpu_pins") : NULL;
        const char *memory = string_member(d, "memory_nodes"), *emulator = string_member(d, "emulator_pin");
        const char *result = string_member(d, "result"), *binding = string_member(d, "memory_binding");
        GString *out = g_string_new("<cputune>\n");
        unsigned pinned = 0;

        if (result && strcmp(result, "skipped") == 0) {
                g_string_free(out, TRUE);
                if (ret_error)
                        *ret_error =
                            g_strdup("the decision is skipped: placementd pins nothing of this domain");
                return NULL;
        }
        for (unsigned i = 0; pins && i < json_array_get_length(pins); i++) {
                const char *pin = json_array_get_string_element(pins, i);
                if (!pin || !*pin)
                        continue;
                g_string_append_printf(out, "  <vcpupin vcpu='%u' cpuset='%s'/>\n",
                                       decision_json_vcpu_id(d, i), pin);
                pinned++;
        }
        if (!pinned) {
                g_string_free(out, TRUE);
                if (ret_error)
                        *ret_error =
                            g_strdup("the decision pins no vCPU: there is nothing to put in a definition");
                return NULL;
        }
        if (emulator && *emulator)
                g_string_append_printf(out, "  <emulatorpin cpuset='%s'/>\n", emulator);
        g_string_append(out, "</cputune>\n");
        /* a binding placementd did not make (the definition's own, in its own mode, or none) stays as
         * it is: the snippet writes none over it */
        if (memory && *memory &&
            !(binding &&
              (strcmp(binding, "kept") == 0 || strcmp(binding, "off") == 0 || strcmp(binding, "none") == 0)))
                append_numatune(out, d, memory);
        return g_string_free(out, FALSE);
}
