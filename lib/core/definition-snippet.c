/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The <cputune>/<numatune> a definition would need to hold a decision (see definition-snippet.h). */
#include "definition-snippet.h"

#include "cpuset.h"
#include "decision-json.h"
#include "json-get.h"

#include <string.h>

/* text read as a CPU or node list and written again ("0-1,4"): only such lists reach the XML, whatever
 * the decision object holds; NULL when it is none or empty. */
static char *list_of(const char *text)
{
        g_autoptr(CpuSet) s = NULL;

        if (!*text || cpuset_parse(text, &s, NULL) < 0 || cpuset_is_empty(s))
                return NULL;
        return cpuset_format(s);
}

/* "0-1" from a node array [0, 1]; NULL when it has none. */
static char *node_list(JsonArray *a)
{
        g_autoptr(CpuSet) s = cpuset_new();

        for (unsigned i = 0; i < json_length(a); i++) {
                gint64 n = json_elem_int(a, i, -1);
                if (n >= 0 && n <= CPUSET_MAX)
                        cpuset_add(s, (unsigned)n);
        }
        return cpuset_is_empty(s) ? NULL : cpuset_format(s);
}

/* The nodes a cell's <memnode> names: those its memory is counted on ("memory_nodes"), or, a record that
 * does not say, those of its vCPUs ("nodes"). Every node its memory is counted on, or a strict binding
 * leaves it no room (hugepages fail to preallocate, the guest is killed when it touches more than the
 * node holds); NULL when it has none. */
static char *cell_nodes(JsonObject *cell)
{
        char *counted = node_list(json_get_array(cell, "memory_nodes"));

        return counted ? counted : node_list(json_get_array(cell, "nodes"));
}

/* The nodes of guest cell id's <memnode>: its own (cell_nodes()), and those of its memory devices that no
 * <source><nodemask> of their own binds, which libvirt binds with that <memnode> (their pages would
 * otherwise be confined to the cell's nodes at the next start); NULL when none. */
static char *memnode_nodes(JsonArray *cells, JsonObject *cell, gint64 id)
{
        g_autoptr(CpuSet) all = NULL;
        g_autofree char *own = cell_nodes(cell);

        if (!own || cpuset_parse(own, &all, NULL) < 0)
                return NULL;
        for (unsigned i = 0; i < json_length(cells); i++) {
                JsonObject *dev = json_elem_object(cells, i);
                g_autofree char *nodes = NULL;
                g_autoptr(CpuSet) set = NULL;
                if (!dev || !json_get_bool(dev, "memory_device") || json_get_bool(dev, "device_nodemask") ||
                    json_get_int(dev, "device_cell", -1) != id)
                        continue;
                nodes = cell_nodes(dev);
                if (nodes && cpuset_parse(nodes, &set, NULL) == 0)
                        cpuset_union(all, set);
        }
        return cpuset_format(all);
}

static void append_numatune(GString *out, JsonObject *d, const char *memory)
{
        JsonArray *cells = json_get_array(d, "cells");

        g_string_append_printf(out, "<numatune>\n  <memory mode='strict' nodeset='%s'/>\n", memory);
        for (unsigned i = 0; i < json_length(cells); i++) {
                JsonObject *cell = json_elem_object(cells, i);
                gint64 id = json_get_int(cell, "id", -1);
                g_autofree char *nodes = cell ? memnode_nodes(cells, cell, id) : NULL;
                /* a memory device is no guest cell: its own <source><nodemask> binds it, else its cell's */
                if (nodes && id >= 0 && id <= G_MAXUINT32 && !json_get_bool(cell, "memory_device"))
                        g_string_append_printf(
                            out, "  <memnode cellid='%" G_GINT64_FORMAT "' mode='strict' nodeset='%s'/>\n",
                            id, nodes);
        }
        g_string_append(out, "</numatune>\n");
}

/* An <iothreadpin> for each I/O thread placementd pinned ("iothreads", on "iothread_pin"). */
static void append_iothreads(GString *out, JsonObject *d)
{
        g_autoptr(CpuSet) ids = NULL;
        g_autofree char *pin = list_of(json_get_string(d, "iothread_pin"));

        if (!pin || cpuset_parse(json_get_string(d, "iothreads"), &ids, NULL) < 0)
                return;
        CPUSET_FOREACH (id, ids)
                if (id > 0)
                        g_string_append_printf(out, "  <iothreadpin iothread='%d' cpuset='%s'/>\n", id, pin);
}

char *definition_snippet(JsonObject *d, char **ret_error)
{
        JsonArray *pins = json_get_array(d, "vcpu_pins");
        g_autofree char *memory = list_of(json_get_string(d, "memory_nodes"));
        g_autofree char *emulator = list_of(json_get_string(d, "emulator_pin"));
        const char *result = json_get_string(d, "result"), *binding = json_get_string(d, "memory_binding");
        GString *out = g_string_new("<cputune>\n");
        unsigned pinned = 0;

        if (strcmp(result, "skipped") == 0) {
                g_string_free(out, TRUE);
                if (ret_error)
                        *ret_error =
                            g_strdup("the decision is skipped: placementd pins nothing of this domain");
                return NULL;
        }
        for (unsigned i = 0; i < json_length(pins); i++) {
                g_autofree char *pin = list_of(json_elem_string(pins, i));
                if (!pin)
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
        if (emulator)
                g_string_append_printf(out, "  <emulatorpin cpuset='%s'/>\n", emulator);
        append_iothreads(out, d);
        g_string_append(out, "</cputune>\n");
        /* a binding placementd did not make (the definition's own, in its own mode, or none) stays as
         * it is: the snippet writes none over it */
        if (memory && strcmp(binding, "kept") != 0 && strcmp(binding, "off") != 0 &&
            strcmp(binding, "none") != 0)
                append_numatune(out, d, memory);
        return g_string_free(out, FALSE);
}
