/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "uri-public.h"

#include <stdbool.h>
#include <string.h>

#include <glib.h>

/* The scheme a URI starts with ("qemu+ssh"), or "" when it starts with none. */
static char *scheme_of(const char *uri)
{
        size_t n = strspn(uri, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-");

        return n > 0 && g_ascii_isalpha(uri[0]) && uri[n] == ':' ? g_strndup(uri, n) : g_strdup("");
}

/*
 * The URI as GLib splits it (RFC 3986: the user information ends at an '@' before any '/', '?' or
 * '#'; here at the last such '@'), put together again without user information, query and fragment.
 * One that does not split (a password with an unescaped '?', '#' or '/' in it leaves a port that is not
 * a number, or a host with an '@') shows its scheme alone: what would follow cannot be told from what
 * must not be shown. marked: "...@" where the user information was, "?..." where the query or fragment
 * was, "..." for the part not shown of a URI that does not split.
 */
static char *public_form(const char *uri, bool marked)
{
        g_autofree char *scheme = NULL, *user = NULL, *host = NULL, *path = NULL, *query = NULL,
                        *fragment = NULL;
        GString *s;
        int port = -1;

        if (!uri)
                return NULL;
        if (!*uri)
                return g_strdup("");
        if (!g_uri_split_with_user(uri, G_URI_FLAGS_ENCODED | G_URI_FLAGS_NON_DNS, &scheme, &user, NULL,
                                   NULL, &host, &port, &path, &query, &fragment, NULL) ||
            !scheme) {
                g_autofree char *only = scheme_of(uri);
                return g_strdup_printf("%s%s%s", only, *only ? ":" : "", marked ? "..." : "");
        }
        s = g_string_new(scheme);
        g_string_append_c(s, ':');
        if (host) {
                /* GLib ends the user information at the first '@'; one with an unescaped '@' ends at the
                 * last */
                const char *at = strrchr(host, '@'), *shown = at ? at + 1 : host;
                g_string_append(s, "//");
                if (marked && (user || at))
                        g_string_append(s, "...@");
                /* an IPv6 address comes back without its brackets */
                g_string_append_printf(s, strchr(shown, ':') ? "[%s]" : "%s", shown);
                if (port >= 0)
                        g_string_append_printf(s, ":%d", port);
        }
        g_string_append(s, path ? path : "");
        if (marked && (query || fragment))
                g_string_append(s, "?...");
        return g_string_free(s, FALSE);
}

char *uri_public(const char *uri)
{
        return public_form(uri, false);
}

char *uri_public_marked(const char *uri)
{
        return public_form(uri, true);
}

bool uri_splits(const char *uri)
{
        return uri && g_uri_split_with_user(uri, G_URI_FLAGS_ENCODED | G_URI_FLAGS_NON_DNS, NULL, NULL, NULL,
                                            NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
