/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-xml-v3.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* hwloc 3.0's OS device type bits (hwloc_obj_osdev_type_e of its hwloc.h). */
enum {
        V3_OSDEV_STORAGE = 1u << 0,
        V3_OSDEV_MEMORY = 1u << 1,
        V3_OSDEV_GPU = 1u << 2,
        V3_OSDEV_COPROC = 1u << 3,
        V3_OSDEV_NETWORK = 1u << 4,
        V3_OSDEV_OPENFABRICS = 1u << 5,
        V3_OSDEV_DMA = 1u << 6,
};

/* The object attributes hwloc 2.x reads; 3.0's others (id, cache_inclusive) mean nothing to it. */
static const char *const v2_object_attrs[] = {
    "type",
    "os_index",
    "cpuset",
    "complete_cpuset",
    "allowed_cpuset",
    "nodeset",
    "complete_nodeset",
    "allowed_nodeset",
    "gp_index",
    "name",
    "subtype",
    "local_memory",
    "cache_size",
    "cache_linesize",
    "cache_associativity",
    "cache_type",
    "depth",
    "kind",
    "subkind",
    "dont_merge",
    "bridge_type",
    "bridge_pci",
    "pci_busid",
    "pci_type",
    "pci_link_speed",
    "osdev_type",
};

/* Sentinel error code: the root is not hwloc 3.x XML, stop reading. */
#define NOT_V3 1000

typedef struct {
        GString *out;
        GString *top_infos;  /* the topology's <info> elements, for the root object */
        gsize root_children; /* where the root object's children start in out; 0 before */
        unsigned skip;       /* > 0: inside a dropped element, at that depth */
        bool open;           /* a start tag is written without its '>' yet */
        GPtrArray *stack;    /* the names of the elements open, outermost first */
} Rewrite;

/* Escapes text as hwloc's own exports do (its XML reader without libxml2 knows only these); in an
 * attribute value line breaks and tabs too, in content they stay. */
static void append_escaped(GString *out, const char *s, gsize len, bool attr)
{
        for (const char *end = s + len; s < end; s++)
                switch (*s) {
                case '&':
                        g_string_append(out, "&amp;");
                        break;
                case '<':
                        g_string_append(out, "&lt;");
                        break;
                case '>':
                        g_string_append(out, "&gt;");
                        break;
                case '"':
                        g_string_append(out, attr ? "&quot;" : "\"");
                        break;
                case '\n':
                        g_string_append(out, attr ? "&#10;" : "\n");
                        break;
                case '\r':
                        g_string_append(out, attr ? "&#13;" : "\r");
                        break;
                case '\t':
                        g_string_append(out, attr ? "&#9;" : "\t");
                        break;
                default:
                        g_string_append_c(out, *s);
                }
}

static void append_attr(GString *out, const char *name, const char *value)
{
        g_string_append_printf(out, " %s=\"", name);
        append_escaped(out, value, strlen(value), true);
        g_string_append_c(out, '"');
}

static void close_start_tag(Rewrite *w)
{
        if (w->open)
                g_string_append_c(w->out, '>');
        w->open = false;
}

static bool is_v2_object_attr(const char *name)
{
        for (unsigned i = 0; i < G_N_ELEMENTS(v2_object_attrs); i++)
                if (strcmp(v2_object_attrs[i], name) == 0)
                        return true;
        return false;
}

/* 2.x's single OS device type for 3.0's bits; NULL when 2.x has none for them. */
static const char *v2_osdev_type(const char *v3)
{
        guint64 bits;

        if (!g_ascii_string_to_unsigned(v3, 10, 0, G_MAXUINT32, &bits, NULL))
                return NULL;
        if (bits & (V3_OSDEV_STORAGE | V3_OSDEV_MEMORY))
                return "0"; /* block */
        if (bits & V3_OSDEV_OPENFABRICS)
                return "3";
        if (bits & V3_OSDEV_NETWORK)
                return "2";
        if (bits & V3_OSDEV_DMA)
                return "4";
        if (bits & V3_OSDEV_COPROC)
                return "5";
        if (bits & V3_OSDEV_GPU)
                return "1";
        return NULL;
}

static void write_object(Rewrite *w, const char **names, const char **values)
{
        const char *type = NULL, *gp_index = NULL, *id = NULL;

        for (unsigned i = 0; names[i]; i++) {
                if (strcmp(names[i], "type") == 0)
                        type = values[i];
                else if (strcmp(names[i], "gp_index") == 0)
                        gp_index = values[i];
                else if (strcmp(names[i], "id") == 0)
                        id = values[i];
        }
        g_string_append(w->out, "<object");
        for (unsigned i = 0; names[i]; i++) {
                const char *value = values[i];

                if (!is_v2_object_attr(names[i]))
                        continue;
                if (strcmp(names[i], "osdev_type") == 0 && type && strcmp(type, "OSDev") == 0) {
                        value = v2_osdev_type(value);
                        if (!value)
                                continue;
                }
                append_attr(w->out, names[i], value);
        }
        if (!gp_index && id && g_str_has_prefix(id, "obj") &&
            g_ascii_string_to_unsigned(id + 3, 10, 1, G_MAXUINT64, NULL, NULL))
                append_attr(w->out, "gp_index", id + 3);
}

static bool start_root(Rewrite *w, const char *element, const char **names, const char **values,
                       GError **error)
{
        const char *version = NULL;

        for (unsigned i = 0; names[i]; i++)
                if (strcmp(names[i], "version") == 0)
                        version = values[i];
        /* hwloc writes the version as "MAJOR.MINOR"; 3.x is what this rewrites, anything else is left
         * to the pre-check's refusal, which names the version as it is */
        if (strcmp(element, "topology") != 0 || !version || version[0] != '3' ||
            (version[1] && (version[1] != '.' || !version[2] ||
                            strspn(version + 2, "0123456789") != strlen(version + 2)))) {
                g_set_error_literal(error, G_MARKUP_ERROR, NOT_V3, "not hwloc 3.x XML");
                return false;
        }
        g_string_append(w->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
                                "<topology version=\"2.0\"");
        w->open = true;
        return true;
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
                     gpointer user_data, GError **error)
{
        Rewrite *w = user_data;
        unsigned depth = w->stack->len;
        const char *parent = depth ? g_ptr_array_index(w->stack, depth - 1) : NULL;
        (void)ctx;

        g_ptr_array_add(w->stack, g_strdup(element));
        if (w->skip)
                return;
        if (depth == 0) {
                start_root(w, element, names, values, error);
                return;
        }
        if (strcmp(element, "info") == 0 &&
            (depth == 1 || strcmp(parent, "distances2") == 0 || strcmp(parent, "distances2hetero") == 0 ||
             strcmp(parent, "memattr") == 0)) {
                const char *name = NULL, *value = NULL;

                for (unsigned i = 0; names[i]; i++) {
                        if (strcmp(names[i], "name") == 0)
                                name = values[i];
                        else if (strcmp(names[i], "value") == 0)
                                value = values[i];
                }
                if (depth == 1 && name && value) { /* the topology's: 2.x has them in the root object */
                        g_string_append(w->top_infos, "\n    <info");
                        append_attr(w->top_infos, "name", name);
                        append_attr(w->top_infos, "value", value);
                        g_string_append(w->top_infos, "/>");
                }
                w->skip = depth + 1;
                return;
        }
        close_start_tag(w);
        if (strcmp(element, "object") == 0)
                write_object(w, names, values);
        else {
                g_string_append_printf(w->out, "<%s", element);
                for (unsigned i = 0; names[i]; i++)
                        append_attr(w->out, names[i], values[i]);
        }
        w->open = true;
        if (depth == 1 && strcmp(element, "object") == 0 && !w->root_children) {
                close_start_tag(w); /* the topology's infos go first inside it */
                w->root_children = w->out->len;
        }
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer user_data, GError **error)
{
        Rewrite *w = user_data;
        (void)ctx;
        (void)error;

        if (w->skip) {
                if (w->stack->len == w->skip)
                        w->skip = 0;
                g_ptr_array_set_size(w->stack, w->stack->len - 1);
                return;
        }
        g_ptr_array_set_size(w->stack, w->stack->len - 1);
        if (w->open)
                g_string_append(w->out, "/>");
        else
                g_string_append_printf(w->out, "</%s>", element);
        w->open = false;
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer user_data,
                    GError **error)
{
        Rewrite *w = user_data;
        (void)ctx;
        (void)error;

        if (w->skip || w->stack->len == 0)
                return;
        close_start_tag(w);
        append_escaped(w->out, text, len, false);
}

int topology_xml_v3_to_v2(char **xml, gsize *len, char **ret_error)
{
        static const GMarkupParser parser = {
            .start_element = on_start, .end_element = on_end, .text = on_text};
        g_autoptr(GPtrArray) stack = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GString) out = g_string_sized_new(*len);
        g_autoptr(GString) top_infos = g_string_new(NULL);
        Rewrite w = {.out = out, .top_infos = top_infos, .stack = stack};
        g_autoptr(GError) error = NULL;
        GMarkupParseContext *ctx;
        bool ok;

        ctx = g_markup_parse_context_new(&parser, G_MARKUP_PREFIX_ERROR_POSITION, &w, NULL);
        ok = g_markup_parse_context_parse(ctx, *xml, (gssize)*len, &error) &&
             g_markup_parse_context_end_parse(ctx, &error);
        g_markup_parse_context_free(ctx);
        if (!ok && (!out->len || g_error_matches(error, G_MARKUP_ERROR, NOT_V3)))
                return 0; /* not 3.x, or nothing read up to its root: the pre-check tells */
        if (!ok) {
                if (ret_error)
                        *ret_error = g_strdup(error ? error->message : "malformed XML");
                return -EINVAL;
        }
        if (!w.root_children) {
                if (ret_error)
                        *ret_error = g_strdup("no <object> in the topology");
                return -EINVAL;
        }
        g_string_insert(out, (gssize)w.root_children, top_infos->str);
        g_string_append_c(out, '\n');
        g_free(*xml);
        *len = out->len;
        *xml = g_string_free(g_steal_pointer(&out), FALSE);
        return 1;
}
