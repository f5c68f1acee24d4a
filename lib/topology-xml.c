/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-xml.h"

#include <errno.h>
#include <hwloc.h>
#include <stdbool.h>
#include <string.h>

typedef struct {
        unsigned depth, objects;
        bool root_seen;
} Check;

static const char *attr(const char **names, const char **values, const char *name)
{
        for (unsigned i = 0; names[i]; i++)
                if (strcmp(names[i], name) == 0)
                        return values[i];
        return NULL;
}

/* hwloc's bitmap text: "0x" hex words joined by commas, optionally led by the infinite "0xf...f". */
static bool bitmap_text_valid(const char *s)
{
        if (g_str_has_prefix(s, "0xf...f")) {
                s += strlen("0xf...f");
                if (!*s)
                        return true;
                if (*s++ != ',')
                        return false;
        }
        for (;;) {
                unsigned digits = 0;
                if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
                        return false;
                for (s += 2; g_ascii_isxdigit(*s); s++)
                        digits++;
                if (digits == 0 || digits > 16)
                        return false;
                if (!*s)
                        return true;
                if (*s++ != ',')
                        return false;
        }
}

/* Both are valid bitmap text: is part a subset of whole? */
static bool bitmap_included(const char *part, const char *whole)
{
        hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
        bool ok = a && b && hwloc_bitmap_sscanf(a, part) == 0 && hwloc_bitmap_sscanf(b, whole) == 0 &&
                  hwloc_bitmap_isincluded(a, b);
        hwloc_bitmap_free(a);
        hwloc_bitmap_free(b);
        return ok;
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
                     gpointer user_data, GError **error)
{
        Check *c = user_data;
        static const char *const pairs[][2] = {{"cpuset", "complete_cpuset"},
                                               {"nodeset", "complete_nodeset"}};
        (void)ctx;

        if (c->depth++ == 0) {
                if (strcmp(element, "topology") != 0 && strcmp(element, "root") != 0)
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "root element is <%s>, not <topology>", element);
                c->root_seen = true;
                return;
        }
        if (strcmp(element, "object") != 0)
                return;
        c->objects++;
        if (!attr(names, values, "type")) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "an <object> without a type");
                return;
        }
        for (unsigned i = 0; names[i]; i++)
                if ((g_str_has_suffix(names[i], "cpuset") || g_str_has_suffix(names[i], "nodeset")) &&
                    !bitmap_text_valid(values[i])) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "<object type=\"%s\"> has an invalid %s \"%.32s\"",
                                    attr(names, values, "type"), names[i], values[i]);
                        return;
                }
        for (unsigned i = 0; i < G_N_ELEMENTS(pairs); i++) {
                const char *part = attr(names, values, pairs[i][0]),
                           *whole = attr(names, values, pairs[i][1]);
                if (part && whole && !bitmap_included(part, whole)) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "<object type=\"%s\"> has a %s that is not inside its %s",
                                    attr(names, values, "type"), pairs[i][0], pairs[i][1]);
                        return;
                }
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(pairs); i++)
                if (attr(names, values, pairs[i][0]) && !attr(names, values, pairs[i][1])) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "<object type=\"%s\"> has %s but no %s", attr(names, values, "type"),
                                    pairs[i][0], pairs[i][1]);
                        return;
                }
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer user_data, GError **error)
{
        Check *c = user_data;
        (void)ctx;
        (void)element;
        (void)error;
        c->depth--;
}

int topology_xml_precheck(const char *xml, gsize len, char **ret_error)
{
        static const GMarkupParser parser = {.start_element = on_start, .end_element = on_end};
        Check c = {0};
        g_autoptr(GError) error = NULL;
        GMarkupParseContext *ctx;
        bool ok;

        if (!g_utf8_validate(xml, (gssize)len, NULL)) {
                if (ret_error)
                        *ret_error = g_strdup("not valid UTF-8 text");
                return -EINVAL;
        }
        ctx = g_markup_parse_context_new(&parser, G_MARKUP_PREFIX_ERROR_POSITION, &c, NULL);
        ok = g_markup_parse_context_parse(ctx, xml, (gssize)len, &error) &&
             g_markup_parse_context_end_parse(ctx, &error);
        g_markup_parse_context_free(ctx);
        if (ok && (!c.root_seen || c.objects == 0)) {
                ok = false;
                g_set_error(&error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "no <object> in the topology");
        }
        if (!ok) {
                if (ret_error)
                        *ret_error = g_strdup(error ? error->message : "malformed XML");
                return -EINVAL;
        }
        return 0;
}
