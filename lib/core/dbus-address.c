/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "dbus-address.h"

#include <glib.h>
#include <string.h>

/* A transport or key: lowercase letters, digits, '-' and '_', starting with a letter. */
static bool name_ok(const char *s, size_t len)
{
        if (len == 0 || !g_ascii_isalpha(s[0]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!g_ascii_isalnum(s[i]) && s[i] != '-' && s[i] != '_')
                        return false;
        return true;
}

/* A value: anything but the separators and control characters (sd-bus takes spaces, '=' as in
 * unixexec's argv1=--machine=foo, and bytes beyond ASCII as they are); a % escape is two hex digits. */
static bool value_ok(const char *s, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < ' ' || c == 0x7f || c == ',' || c == ';')
                        return false;
                if (c == '%' && (i + 2 >= len || !g_ascii_isxdigit(s[i + 1]) || !g_ascii_isxdigit(s[i + 2])))
                        return false;
        }
        return true;
}

/* One TRANSPORT:KEY=VALUE,... entry of len bytes. */
static bool entry_ok(const char *s, size_t len)
{
        const char *colon = memchr(s, ':', len), *end = s + len, *p;

        if (!colon || !name_ok(s, (size_t)(colon - s)))
                return false;
        for (p = colon + 1; p < end;) {
                const char *comma = memchr(p, ',', (size_t)(end - p)), *stop = comma ? comma : end;
                const char *eq = memchr(p, '=', (size_t)(stop - p));

                if (!eq || !name_ok(p, (size_t)(eq - p)) || !value_ok(eq + 1, (size_t)(stop - eq - 1)))
                        return false;
                p = comma ? comma + 1 : end;
                if (comma && p == end)
                        return false; /* a trailing ',' */
        }
        return true;
}

bool dbus_address_valid(const char *address)
{
        const char *p = address;
        bool any = false;

        if (!address || !*address)
                return false;
        while (*p) {
                const char *semi = strchr(p, ';');
                size_t len = semi ? (size_t)(semi - p) : strlen(p);

                if (len && !entry_ok(p, len))
                        return false;
                any = any || len;
                p += len + (semi ? 1 : 0);
        }
        return any;
}
