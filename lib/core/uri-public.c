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

/* Printable ASCII only: what a URI shows of itself. GLib gives an IP literal's zone ID back decoded
 * ("%25%0a" becomes "%" and a newline). */
static bool shown_safe(const char *text)
{
        for (const char *p = text; p && *p; p++)
                if (*p < 0x21 || *p > 0x7e)
                        return false;
        return true;
}

/* A URI's parts as public_form() shows them. */
typedef struct UriParts {
        char *scheme, *user, *host, *path, *query, *fragment;
        int port;
} UriParts;

static void uri_parts_clear(UriParts *u)
{
        g_free(u->scheme);
        g_free(u->user);
        g_free(u->host);
        g_free(u->path);
        g_free(u->query);
        g_free(u->fragment);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(UriParts, uri_parts_clear)

/*
 * GLib's split (RFC 3986, relaxed as libvirt's parser is about an IP literal's zone ID, "[fe80::1%eth0]";
 * the user information ends at an '@' before any '/', '?' or '#', here at the last such '@'). Refused when
 * what would be shown is not printable ASCII, or when a path that follows an authority holds an '@': user
 * information with an unescaped '/' or '#' ("admin:22/S3cret@kvm1" splits as host admin, port 22) reads
 * so, and no host's path does; nor does a query or fragment right after the host ("admin:22#S3cret@kvm1").
 * An escaped NUL (%00) is refused too.
 */
static bool split(const char *uri, UriParts *u)
{
        u->port = -1;
        /* an escaped NUL would end what GLib gives back early (a zone ID is decoded) */
        if (!uri || strstr(uri, "%00") ||
            !g_uri_split_with_user(
                uri, G_URI_FLAGS_ENCODED | G_URI_FLAGS_NON_DNS | G_URI_FLAGS_PARSE_RELAXED, &u->scheme,
                &u->user, NULL, NULL, &u->host, &u->port, &u->path, &u->query, &u->fragment, NULL))
                return false;
        if (u->host) { /* GLib ends the user information at the first '@' */
                const char *at = strrchr(u->host, '@');
                if (at) {
                        char *host = g_strdup(at + 1);
                        g_free(u->host);
                        u->host = host;
                        if (!u->user)
                                u->user = g_strdup("");
                }
        }
        if (!u->scheme || !shown_safe(u->host) || !shown_safe(u->path))
                return false;
        /* an '@' after an authority, in its path, or in a query or fragment right after it */
        return !(u->host && ((u->path && strchr(u->path, '@')) ||
                             ((!u->path || !*u->path) && ((u->query && strchr(u->query, '@')) ||
                                                          (u->fragment && strchr(u->fragment, '@'))))));
}

/*
 * The URI split, put together again without user information, query and fragment. One that does not
 * split shows its scheme alone: what would follow cannot be told from what must not be shown. marked:
 * "...@" where the user information was, "?..." where the query or fragment was, "..." for the part not
 * shown of a URI that does not split.
 */
static char *public_form(const char *uri, bool marked)
{
        g_auto(UriParts) u = {0};
        GString *s;

        if (!uri)
                return NULL;
        if (!*uri)
                return g_strdup("");
        if (!split(uri, &u)) {
                g_autofree char *only = scheme_of(uri);
                return g_strdup_printf("%s%s%s", only, *only ? ":" : "", marked ? "..." : "");
        }
        s = g_string_new(u.scheme);
        g_string_append_c(s, ':');
        if (u.host) {
                g_string_append(s, "//");
                if (marked && u.user)
                        g_string_append(s, "...@");
                /* an IPv6 address comes back without its brackets */
                g_string_append_printf(s, strchr(u.host, ':') ? "[%s]" : "%s", u.host);
                if (u.port >= 0)
                        g_string_append_printf(s, ":%d", u.port);
        }
        g_string_append(s, u.path ? u.path : "");
        if (marked && (u.query || u.fragment))
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
        g_auto(UriParts) u = {0};

        return split(uri, &u);
}
