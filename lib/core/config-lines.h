/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The configuration file read line by line, for errors that point at a line: GKeyFile keeps no line
 * numbers, says "line “foo”" for a syntax error, keeps the last of a key set twice without a word, and
 * knows nothing of the keys placementd takes. Lines are as GKeyFile reads them: blank, '#' comments,
 * [Section] headers and Key=value pairs (whitespace around the key ignored).
 */

#include <glib.h>
#include <stdbool.h>

/* Every line that is none of those (a header or key GKeyFile would refuse as a name included), or a
 * Key=value before any [Section]: one error each appended to errors (newline-separated, "NAME:LINE: ..."
 * saying what is wrong without quoting the line: a file that is no configuration, or a line holding a
 * secret, is not shown). Returns how many, with *ret_clean a copy of data with those lines emptied (the
 * others keep their numbers) for the rest of the checks to read; a broken header becomes a section named
 * CONFIG_LINES_BAD_SECTION and its line number, which the checks skip with the keys under it. */
#define CONFIG_LINES_BAD_SECTION "bad header on line "
unsigned config_lines_bad(const char *data, const char *name, GString *errors, char **ret_clean);

/* The lines of data, read once, for config_lines_find() to look up: a file with many errors asks for
 * many lines. */
typedef struct ConfigLines ConfigLines;
ConfigLines *config_lines_new(const char *data);
void config_lines_free(ConfigLines *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ConfigLines, config_lines_free)

/* The line of the first Key= in [section] (any of its headers), or of the first [section] header when
 * key is NULL; 0 when there is none. */
unsigned config_lines_find(const ConfigLines *l, const char *section, const char *key);
/* The line of the last Key= in [section]: the one whose value GKeyFile keeps; 0 when there is none. */
unsigned config_lines_find_last(const ConfigLines *l, const char *section, const char *key);

/* Appends to errors (newline-separated, each "NAME:LINE: ...") every key set again in a section,
 * across repeated headers of that section too. */
void config_lines_repeated(const char *data, const char *name, GString *errors);
/* Whether a section or key name the file holds is shown in an error: only when it is spelled as a name
 * (letters, digits, '-', '_', '.', at most 64): the errors reach every local user (the daemon's
 * ReloadError), and text such as "qemu+ssh://admin:pw@kvm1/system?x=1", read as a key, must not. */
bool config_lines_name_shown(const char *name);

/* Of the n candidates, the one a typo of word most likely meant: equal but for case, or at most two
 * edits away (and fewer than half of word's length). NULL when none is that near. */
const char *config_lines_nearest(const char *word, const char *const *candidates, unsigned n);
