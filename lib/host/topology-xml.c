/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-xml.h"
#include "cpuset.h"

#include <errno.h>
#include <hwloc.h>
#include <stdbool.h>
#include <string.h>

typedef struct {
        unsigned depth, objects;
        bool root_seen;
        char *newer_version; /* the root's version="" when placementd cannot read it (3.x is rewritten
                                before) */
} Check;

static const char *attr(const char **names, const char **values, const char *name)
{
        for (unsigned i = 0; names[i]; i++)
                if (strcmp(names[i], name) == 0)
                        return values[i];
        return NULL;
}

/*
 * hwloc's bitmap text, as hwloc_bitmap_snprintf() writes it: 32-bit words in hex, "0x" first, the most
 * significant first, joined by commas; an all-zero word inside is written as nothing ("0x3,,0x0" holds
 * CPUs 64 and 65); an infinite set starts with "0xf...f". hwloc_bitmap_sscanf() reads each word with
 * strtoul(), so an empty word is 0. The first and the last word are never empty (hwloc_bitmap_sscanf()
 * miscounts the words of text that starts with a comma, and aborts).
 */
static bool bitmap_word_valid(const char *s, const char *end)
{
        if (s == end)
                return true;
        if (end - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || end - s > 2 + 16)
                return false;
        for (s += 2; s < end; s++)
                if (!g_ascii_isxdigit(*s))
                        return false;
        return true;
}

static bool bitmap_text_valid(const char *s)
{
        if (*s == ',')
                return false;
        if (g_str_has_prefix(s, "0xf...f")) {
                s += strlen("0xf...f");
                if (!*s)
                        return true;
                if (*s++ != ',')
                        return false;
        }
        for (;;) {
                const char *comma = strchr(s, ',');
                const char *end = comma ? comma : s + strlen(s);

                if (!bitmap_word_valid(s, end))
                        return false;
                if (!comma)
                        return end > s;
                s = comma + 1;
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

/*
 * PUs and NUMA nodes carry the OS index hwloc's exports always write, at most CPUSET_MAX: without one,
 * or with a huge one, hwloc sizes a bitmap to it (gigabytes and many seconds) before placementd could
 * refuse the index.
 */
static bool os_index_valid(const char **names, const char **values, GError **error)
{
        const char *type = attr(names, values, "type"), *os = attr(names, values, "os_index");

        if (strcmp(type, "PU") != 0 && strcmp(type, "NUMANode") != 0)
                return true;
        if (!os) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "<object type=\"%s\"> has no os_index", type);
                return false;
        }
        if (!g_ascii_string_to_unsigned(os, 10, 0, CPUSET_MAX, NULL, NULL)) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "<object type=\"%s\"> has os_index \"%.32s\", above the %u supported", type, os,
                            CPUSET_MAX);
                return false;
        }
        return true;
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
                     gpointer user_data, GError **error)
{
        Check *c = user_data;
        static const char *const pairs[][2] = {{"cpuset", "complete_cpuset"},
                                               {"nodeset", "complete_nodeset"}};
        (void)ctx;

        if (c->depth++ == 0) {
                const char *version = attr(names, values, "version");
                if (strcmp(element, "topology") != 0 && strcmp(element, "root") != 0)
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "root element is <%s>, not <topology>", element);
                else if (version && g_ascii_strtoull(version, NULL, 10) >= 3) {
                        c->newer_version = g_strndup(version, 16);
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "newer XML");
                }
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
        if (!os_index_valid(names, values, error))
                return;
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
        if (c.newer_version) {
                if (ret_error)
                        *ret_error = g_strdup_printf(
                            "XML of hwloc %s (<topology version=\"%s\">), not the XML of hwloc 1.x to 3.x "
                            "placementd reads: export it again as hwloc 2.x XML "
                            "(`lstopo --of xml --export-xml-flags v2 FILE`), or with hwloc 2.x or 3.x",
                            c.newer_version, c.newer_version);
                g_free(c.newer_version);
                return -EPROTONOSUPPORT;
        }
        if (!ok) {
                if (ret_error)
                        *ret_error = g_strdup(error ? error->message : "malformed XML");
                return -EINVAL;
        }
        return 0;
}
