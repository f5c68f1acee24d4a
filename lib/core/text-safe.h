/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Untrusted names (a domain's, as its owner chose it) in text for a terminal: a newline in a name would
 * forge a row of `placementctl list`, an escape sequence would drive the terminal, a bidi override would
 * reorder what is shown.
 */

/* A copy of s with every C0 control, DEL, C1 control (U+0080-U+009F), format character (Unicode Cf: bidi
 * embeddings, overrides, isolates and marks, zero-width spaces and joiners, the BOM), line and paragraph
 * separator, space separator other than U+0020 (Unicode Zs: the no-break space, which reads as a plain
 * one), character that draws as nothing (Unicode's default ignorables: the Hangul fillers, the combining
 * grapheme joiner, the variation selectors...), the Braille blank and noncharacter (U+FDD0-U+FDEF, U+FFFE,
 * U+1FFFF...: sd-bus refuses a string holding one) written as \xNN or \u{NNNN}, each byte of invalid UTF-8
 * as \xNN, and a backslash as \x5c (as virsh writes it): a name that holds the text "\x0d" does not read as
 * one that holds a carriage return. Anything else as it is. NULL gives "". Caller frees. */
char *text_safe(const char *s);

/* text_safe() of s's first max bytes (cut back to the start of a character) and "..." when s is longer:
 * a value quoted from a file, where a long one would bury the message. Caller frees. */
char *text_safe_cut(const char *s, size_t max);

/* True when s is valid UTF-8 that text_safe() would leave as it is (no control, no bidi override, no
 * backslash). */
bool text_is_safe(const char *s);

/* As text_safe() but a backslash stays: for text made of names already written by text_safe() (the
 * daemon's explain and map text), which only needs to be safe on a terminal, and free text whose
 * backslashes are no escapes. Caller frees. */
char *text_terminal_safe(const char *s);

/* True when text_terminal_safe() would leave s as it is. */
bool text_is_terminal_safe(const char *s);

/* JSON text with every character text_safe() escapes beyond ASCII (C1 controls, format characters, line
 * separators...) written as a \uXXXX escape: the same JSON, safe on a terminal. json-glib escapes C0
 * controls itself. Caller frees. */
char *text_json_safe(const char *json);

/* True when valid UTF-8 s holds a noncharacter (U+FDD0-U+FDEF, U+FFFE, U+FFFF, U+1FFFE...): valid UTF-8
 * for GLib and in XML (libvirt takes it in a domain's name), but sd-bus refuses to send a string that holds
 * one, so such a name goes over D-Bus as text_safe() writes it. */
bool text_has_noncharacter(const char *s);
