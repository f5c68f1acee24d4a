/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Untrusted names made safe to print (text-safe.h). */
#include "text-safe.h"

#include <glib.h>
#include <stdbool.h>

static bool unsafe(gunichar c)
{
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
               (c >= 0x2066 && c <= 0x2069);
}

char *text_safe(const char *s)
{
        GString *out = g_string_new(NULL);
        const char *p = s ? s : "";

        while (*p) {
                gunichar c = g_utf8_get_char_validated(p, -1);
                if (c == (gunichar)-1 || c == (gunichar)-2) {
                        g_string_append_printf(out, "\\x%02x", (unsigned char)*p++);
                        continue;
                }
                if (unsafe(c) && c <= 0xff)
                        g_string_append_printf(out, "\\x%02x", (unsigned)c);
                else if (unsafe(c))
                        g_string_append_printf(out, "\\u{%04x}", (unsigned)c);
                else
                        g_string_append_len(out, p, g_utf8_next_char(p) - p);
                p = g_utf8_next_char(p);
        }
        return g_string_free(out, FALSE);
}

bool text_is_safe(const char *s)
{
        const char *p = s ? s : "";

        if (!g_utf8_validate(p, -1, NULL))
                return false;
        for (; *p; p = g_utf8_next_char(p))
                if (unsafe(g_utf8_get_char(p)))
                        return false;
        return true;
}
