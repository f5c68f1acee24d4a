/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Untrusted names printed safely (text-safe.h). */
#include "test-util.h"
#include "text-safe.h"

START_TEST(test_text_safe)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
            {"web1", "web1"},
            {"web1 ", "web1 "},
            {"x\nweb2                 placed", "x\\x0aweb2                 placed"},
            {"cr\rlf", "cr\\x0dlf"},
            {"\x1b[2Jgone", "\\x1b[2Jgone"},
            {"del\x7f", "del\\x7f"},
            {"c1\xc2\x9b", "c1\\x9b"}, /* U+009B, the 8-bit CSI */
            {"rtl\xe2\x80\xae"
             "cod.exe",
             "rtl\\u{202e}cod.exe"}, /* a right-to-left override */
            /* invisible and direction marks: "web1" written with a zero-width space or a right-to-left
             * mark must not read as "web1" */
            {"web\xe2\x80\x8b"
             "1",
             "web\\u{200b}1"},
            {"web\xe2\x80\x8f"
             "1",
             "web\\u{200f}1"},
            {"a\xe2\x80\xa8"
             "b",
             "a\\u{2028}b"}, /* a line separator */
            {"\xef\xbb\xbf"
             "bom",
             "\\u{feff}bom"},
            {"x\xe3\x85\xa4", "x\\u{3164}"}, /* a Hangul filler: looks like nothing */
            /* marks that draw as nothing (Unicode's default ignorables that are not format characters)
             * and the Braille blank: "web1" with one of them must not read as "web1" */
            {"web1\xcd\x8f", "web1\\u{034f}"},          /* combining grapheme joiner */
            {"web1\xef\xb8\x8f", "web1\\u{fe0f}"},      /* variation selector 16 */
            {"web1\xe1\xa0\x8b", "web1\\u{180b}"},      /* Mongolian free variation selector */
            {"web1\xe1\x9e\xb4", "web1\\u{17b4}"},      /* Khmer inherent vowel */
            {"web1\xf3\xa0\x84\x81", "web1\\u{e0101}"}, /* variation selector 18 */
            {"web1\xf3\xa0\x87\xb0", "web1\\u{e01f0}"}, /* unassigned, ignorable by default */
            {"db\xe2\xa0\x80"
             "backup",
             "db\\u{2800}backup"}, /* Braille pattern blank */
            /* a mark that draws is the name's own: e with a combining acute, a Braille letter */
            {"cafe\xcc\x81 \xe2\xa0\x81", "cafe\xcc\x81 \xe2\xa0\x81"},
            /* spaces other than U+0020 read as one: "stop a\u00a0" must not read as "stop a " */
            {"a\xc2\xa0", "a\\xa0"},
            {"a\xe2\x80\x80"
             "b\xe2\x80\x8a"
             "c",
             "a\\u{2000}b\\u{200a}c"}, /* en quad, hair space */
            {"a\xe2\x80\xaf"
             "b\xe2\x81\x9f"
             "c\xe3\x80\x80"
             "d\xe1\x9a\x80",
             "a\\u{202f}b\\u{205f}c\\u{3000}d\\u{1680}"}, /* narrow, math, ideographic, ogham */
            {"bad\xff", "bad\\xff"},                      /* not UTF-8 */
            {"caf\xc3\xa9 \xe6\x97\xa5", "caf\xc3\xa9 \xe6\x97\xa5"},
            /* a backslash as virsh writes it: a name holding the text \x0d is not one holding a CR */
            {"a\\b", "a\\x5cb"},
            {"cr\\x0dx", "cr\\x5cx0dx"},
            {"\\\\", "\\x5c\\x5c"},
            {"", ""},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *out = text_safe(cases[i].in);
                ck_assert_msg(g_str_equal(out, cases[i].out), "case %u: %s", i, out);
        }
        {
                g_autofree char *none = text_safe(NULL);
                ck_assert_str_eq(none, "");
        }
}
END_TEST

/* two names differ on a terminal when they differ: a carriage return and the text "\x0d" */
START_TEST(test_text_safe_distinct)
{
        g_autofree char *cr = text_safe("cr\rx"), *text = text_safe("cr\\x0dx");

        ck_assert_str_eq(cr, "cr\\x0dx");
        ck_assert_str_ne(cr, text);
        ck_assert(text_is_safe("web1 caf\xc3\xa9"));
        ck_assert(!text_is_safe("cr\rx"));
        ck_assert(!text_is_safe("cr\\x0dx"));
        ck_assert(!text_is_safe("bad\xff"));
}
END_TEST

/* text already written by text_safe() (the daemon's explain and map text) stays as it is on a terminal */
START_TEST(test_text_terminal_safe)
{
        g_autofree char *name = text_safe("cr\\x0dx");
        g_autofree char *again = text_terminal_safe(name);
        g_autofree char *cr = text_terminal_safe("a\rb\xe2\x80\xae\\");

        ck_assert_str_eq(again, "cr\\x5cx0dx");
        ck_assert_str_eq(cr, "a\\x0db\\u{202e}\\");
        ck_assert(text_is_terminal_safe("C:\\dir"));
        ck_assert(!text_is_terminal_safe("a\x1b[2J"));
}
END_TEST

/* JSON for a terminal: C1 controls and format characters as \uXXXX escapes, the JSON unchanged in meaning */
START_TEST(test_text_json_safe)
{
        g_autofree char *a = text_json_safe("{\"name\": \"c1\xc2\x9b"
                                            "2J caf\xc3\xa9 rtl\xe2\x80\xae\"}");
        g_autofree char *b = text_json_safe("[\"tag\xf3\xa0\x80\x81\"]"); /* U+E0001, beyond the BMP */

        ck_assert_str_eq(a, "{\"name\": \"c1\\u009b2J caf\xc3\xa9 rtl\\u202e\"}");
        ck_assert_str_eq(b, "[\"tag\\udb40\\udc01\"]");
}
END_TEST

/* A value quoted from a file: escaped as text_safe() does, cut after max bytes with "...", never inside a
 * character */
START_TEST(test_text_safe_cut)
{
        g_autofree char *shortv = text_safe_cut("pakc", 4), *empty = text_safe_cut(NULL, 4);
        g_autofree char *longv = text_safe_cut("abcdefgh", 4), *esc = text_safe_cut("a\x1b[2Jzzzz", 5);
        /* "ab" then a 3-byte U+202E (a bidi override) across the cut at 4: left out whole */
        g_autofree char *split = text_safe_cut("ab\xe2\x80\xae"
                                               "cd",
                                               4);
        g_autofree char *bidi = text_safe_cut("ab\xe2\x80\xae"
                                              "cd",
                                              5);
        /* é (2 bytes) across the cut at 3 */
        g_autofree char *accent = text_safe_cut("ab\xc3\xa9"
                                                "cd",
                                                3);
        g_autofree char *invalid = text_safe_cut("\x80\x80\x80\x80\x80\x80", 2);

        ck_assert_str_eq(shortv, "pakc");
        ck_assert_str_eq(empty, "");
        ck_assert_str_eq(longv, "abcd...");
        ck_assert_str_eq(esc, "a\\x1b[2J...");
        ck_assert_str_eq(split, "ab...");
        ck_assert_str_eq(bidi, "ab\\u{202e}...");
        ck_assert_str_eq(accent, "ab...");
        ck_assert_str_eq(invalid, "\\x80\\x80...");
}
END_TEST

/* Unicode's noncharacters (U+FDD0-U+FDEF and the last two of every plane) are valid UTF-8 for GLib and in
 * XML, so libvirt takes them in a domain's name, but sd-bus refuses a string that holds one: a reply or a
 * signal naming such a domain could not be sent, and every list of all domains failed with it. Escaped as
 * any other character that cannot be shown. */
START_TEST(test_noncharacters)
{
        static const struct {
                const char *in, *out, *json;
        } cases[] = {
            {"a\xef\xb7\x90"
             "b",
             "a\\u{fdd0}b", "\"a\\ufdd0b\""},
            {"a\xef\xb7\xaf", "a\\u{fdef}", "\"a\\ufdef\""},
            {"\xef\xbf\xbe", "\\u{fffe}", "\"\\ufffe\""},
            {"x\xf0\x9f\xbf\xbf", "x\\u{1ffff}", "\"x\\ud83f\\udfff\""},
            {"x\xf4\x8f\xbf\xbe", "x\\u{10fffe}", "\"x\\udbff\\udffe\""},
            /* their neighbours are characters */
            {"\xef\xb7\x8f\xef\xb7\xb0", "\xef\xb7\x8f\xef\xb7\xb0", "\"\xef\xb7\x8f\xef\xb7\xb0\""},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *out = text_safe(cases[i].in), *terminal = text_terminal_safe(cases[i].in);
                g_autofree char *quoted = g_strdup_printf("\"%s\"", cases[i].in);
                g_autofree char *json = text_json_safe(quoted);
                ck_assert_msg(g_str_equal(out, cases[i].out), "case %u: %s", i, out);
                ck_assert_msg(g_str_equal(terminal, cases[i].out), "case %u: %s", i, terminal);
                ck_assert_msg(g_str_equal(json, cases[i].json), "case %u: %s", i, json);
                ck_assert(text_is_safe(cases[i].in) == g_str_equal(cases[i].in, cases[i].out));
        }
}
END_TEST

static Suite *text_safe_suite(void)
{
        Suite *s = suite_create("text safe");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_text_safe);
        tcase_add_test(tc, test_text_safe_distinct);
        tcase_add_test(tc, test_text_terminal_safe);
        tcase_add_test(tc, test_text_json_safe);
        tcase_add_test(tc, test_text_safe_cut);
        tcase_add_test(tc, test_noncharacters);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(text_safe_suite)
