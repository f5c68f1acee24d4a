/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "uri-public.h"

#include <string.h>

#include <glib.h>

char *uri_public(const char *uri)
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
        g_string_append_len(s, at ? at + 1 : authority, p - (at ? at + 1 : authority));
        g_string_append_len(s, p, end - p);
        return g_string_free(s, FALSE);
}
