/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Untrusted names made safe to print (text-safe.h). */
#include "text-safe.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

/* Unicode's noncharacters: U+FDD0-U+FDEF and the last two code points of every plane. */
static bool noncharacter(gunichar c)
{
        return (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe;
}

/* Unicode's default ignorable code points (DerivedCoreProperties.txt) beside the format characters (a few
 * ranges below are Cf too, escaped either way): marks and fillers a terminal draws as nothing (the
 * combining grapheme joiner, the Hangul fillers, the Khmer inherent vowels, the Mongolian and the other
 * variation selectors) and the unassigned code points kept for more of them. And the Braille blank, which
 * draws as a space. */
static bool drawn_as_nothing(gunichar c)
{
        static const struct {
                gunichar first, last;
        } ranges[] = {
            {0x034f, 0x034f},   {0x115f, 0x1160},   {0x17b4, 0x17b5},   {0x180b, 0x180f}, {0x2065, 0x2065},
            {0x2800, 0x2800},   {0x3164, 0x3164},   {0xfe00, 0xfe0f},   {0xffa0, 0xffa0}, {0xfff0, 0xfff8},
            {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0000, 0xe0fff},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(ranges); i++)
                if (c >= ranges[i].first && c <= ranges[i].last)
                        return true;
        return false;
}

/* Controls (C0, DEL, C1), format characters (bidi overrides and marks, zero-width spaces and joiners, the
 * BOM: each reorders text or shows as nothing), line and paragraph separators, spaces other than U+0020
 * (the no-break, en, em, thin, ideographic... spaces, Unicode Zs: each reads as an ordinary space), and
 * what draws as nothing or as a blank (above): any of them lets one name pass for another or forge a
 * line. Noncharacters too: they show as nothing, and sd-bus refuses a string that holds one. */
static bool unsafe(gunichar c)
{
        GUnicodeType type;

        if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
                return true;
        if (c < 0xa0)
                return false;
        if (noncharacter(c))
                return true;
        type = g_unichar_type(c);
        return type == G_UNICODE_FORMAT || type == G_UNICODE_LINE_SEPARATOR ||
               type == G_UNICODE_PARAGRAPH_SEPARATOR || type == G_UNICODE_SPACE_SEPARATOR ||
               drawn_as_nothing(c);
}

/* What text_safe() escapes; a backslash too when it escapes one (names), so that an escape in the output
 * means a character of the name, never the four characters a name held. */
static bool escaped(gunichar c, bool backslash)
{
        return unsafe(c) || (backslash && c == '\\');
}

static char *escape(const char *s, bool backslash)
{
        GString *out = g_string_new(NULL);
        const char *p = s ? s : "";

        while (*p) {
                gunichar c = g_utf8_get_char_validated(p, -1);
                if (c == (gunichar)-1 || c == (gunichar)-2) {
                        g_string_append_printf(out, "\\x%02x", (unsigned char)*p++);
                        continue;
                }
                if (escaped(c, backslash) && c <= 0xff)
                        g_string_append_printf(out, "\\x%02x", (unsigned)c);
                else if (escaped(c, backslash))
                        g_string_append_printf(out, "\\u{%04x}", (unsigned)c);
                else
                        g_string_append_len(out, p, g_utf8_next_char(p) - p);
                p = g_utf8_next_char(p);
        }
        return g_string_free(out, FALSE);
}

static bool is_safe(const char *s, bool backslash)
{
        const char *p = s ? s : "";

        if (!g_utf8_validate(p, -1, NULL))
                return false;
        for (; *p; p = g_utf8_next_char(p))
                if (escaped(g_utf8_get_char(p), backslash))
                        return false;
        return true;
}

char *text_safe(const char *s)
{
        return escape(s, true);
}

char *text_safe_cut(const char *s, size_t max)
{
        const char *p = s ? s : "";
        size_t n = max;
        g_autofree char *head = NULL, *safe = NULL;

        if (strnlen(p, max + 1) <= max)
                return text_safe(p);
        /* the cut falls on a character's first byte: a character's tail (at most 3 bytes, more is no
         * UTF-8) goes with it rather than show as escaped bytes */
        for (unsigned back = 0; back < 3 && n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80; back++)
                n--;
        if (((unsigned char)p[n] & 0xc0) == 0x80)
                n = max;
        head = g_strndup(p, n);
        safe = text_safe(head);
        return g_strconcat(safe, "...", NULL);
}

bool text_is_safe(const char *s)
{
        return is_safe(s, true);
}

char *text_terminal_safe(const char *s)
{
        return escape(s, false);
}

bool text_is_terminal_safe(const char *s)
{
        return is_safe(s, false);
}

char *text_json_safe(const char *json)
{
        const char *p = json ? json : "", *run = p;
        GString *out;

        /* JSON's structure is ASCII: such characters can only be inside strings, where \uXXXX means the
         * same character. ASCII goes through in runs; only what lies beyond is decoded. */
        while (*p && !((unsigned char)*p & 0x80))
                p++;
        if (!*p)
                return g_strdup(json ? json : "");
        out = g_string_sized_new(strlen(json) + 16);
        while (*p) {
                gunichar c;
                if (!((unsigned char)*p & 0x80)) {
                        p++;
                        continue;
                }
                c = g_utf8_get_char_validated(p, -1);
                if (c == (gunichar)-1 || c == (gunichar)-2 || !unsafe(c)) {
                        p = c == (gunichar)-1 || c == (gunichar)-2 ? p + 1 : g_utf8_next_char(p);
                        continue;
                }
                g_string_append_len(out, run, p - run);
                if (c > 0xffff) {
                        gunichar v = c - 0x10000;
                        g_string_append_printf(out, "\\u%04x\\u%04x", 0xd800 + (v >> 10),
                                               0xdc00 + (v & 0x3ff));
                } else {
                        g_string_append_printf(out, "\\u%04x", (unsigned)c);
                }
                p = g_utf8_next_char(p);
                run = p;
        }
        g_string_append_len(out, run, p - run);
        return g_string_free(out, FALSE);
}

bool text_has_noncharacter(const char *s)
{
        const char *p = s ? s : "";

        for (; *p; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char_validated(p, -1);
                if (c == (gunichar)-1 || c == (gunichar)-2)
                        return false; /* not UTF-8 at all: no D-Bus string either */
                if (noncharacter(c))
                        return true;
        }
        return false;
}
