/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "uri-public.h"

#include <stdbool.h>
#include <string.h>

#include <glib.h>

/* marked: "...@" where the user information was, "?..." where the query or fragment was. */
static char *public_form(const char *uri, bool marked)
{
        GString *s;
        const char *authority, *end, *at, *p;

        if (!uri)
                return NULL;
        s = g_string_new(NULL);
        /* The query and fragment go whatever the URI's form: "qemu:///system?socket=..." has them too. */
        end = uri + strcspn(uri, "?#");
        authority = strstr(uri, "://");
        if (!authority || authority > end) {
                g_string_append_len(s, uri, end - uri);
                if (marked && *end)
                        g_string_append(s, "?...");
                return g_string_free(s, FALSE);
        }
        authority += 3;
        g_string_append_len(s, uri, authority - uri);
        p = authority + strcspn(authority, "/?#");
        if (p > end)
                p = end;
        /* The last '@' ends the user information; a user name may itself hold an escaped one. */
        at = NULL;
        for (const char *c = authority; c < p; c++)
                if (*c == '@')
                        at = c;
        if (marked && at)
                g_string_append(s, "...@");
        g_string_append_len(s, at ? at + 1 : authority, p - (at ? at + 1 : authority));
        g_string_append_len(s, p, end - p);
        if (marked && *end)
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
