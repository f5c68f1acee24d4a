/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config-lines.h"

#include <stdbool.h>
#include <string.h>

typedef enum LineKind {
        LINE_BLANK, /* blank or a comment */
        LINE_SECTION,
        LINE_KEY,
        LINE_BAD,
} LineKind;

typedef struct Line {
        LineKind kind;
        char *name; /* the section of a header, the key of a pair */
} Line;

static LineKind classify(const char *line, char **ret_name)
{
        const char *eq;

        *ret_name = NULL;
        while (g_ascii_isspace(*line))
                line++;
        if (*line == '\0' || *line == '#')
                return LINE_BLANK;
        if (*line == '[') {
                const char *end = strrchr(line, ']');
                const char *after = end ? end + 1 : NULL;
                while (after && g_ascii_isspace(*after))
                        after++;
                if (!end || *after || end == line + 1)
                        return LINE_BAD;
                for (const char *c = line + 1; c < end; c++)
                        if (*c == '[' || *c == ']' || g_ascii_iscntrl(*c))
                                return LINE_BAD; /* as GKeyFile takes a group name */
                *ret_name = g_strndup(line + 1, (gsize)(end - line - 1));
                return LINE_SECTION;
        }
        eq = strchr(line, '=');
        if (!eq || eq == line)
                return LINE_BAD;
        *ret_name = g_strchomp(g_strndup(line, (gsize)(eq - line)));
        /* no key of placementd's has a [locale], nor may hold brackets anywhere else for GKeyFile */
        return **ret_name && !strpbrk(*ret_name, "[]") ? LINE_KEY : LINE_BAD;
}

/* Calls visit for each line with its number, kind, name and current section, until it returns false. */
typedef bool (*LineVisit)(unsigned number, LineKind kind, const char *name, const char *section,
                          const char *text, void *userdata);

static void walk(const char *data, LineVisit visit, void *userdata)
{
        g_auto(GStrv) lines = g_strsplit(data, "\n", -1);
        g_autofree char *section = NULL;

        for (unsigned i = 0; lines[i]; i++) {
                g_autofree char *name = NULL;
                LineKind kind;
                g_strchomp(lines[i]); /* a CR of a CRLF file too */
                kind = classify(lines[i], &name);
                if (kind == LINE_SECTION) {
                        g_free(section);
                        section = g_strdup(name);
                }
                if (!visit(i + 1, kind, name, section, lines[i], userdata))
                        return;
        }
}

typedef struct Bad {
        const char *name;
        GString *errors;
        GArray *lines; /* their numbers */
} Bad;

/* What is wrong with a bad line, said without quoting it: a file that is no configuration (a password file
 * given by mistake) must not have its lines shown, nor may a line that holds a secret. */
static const char *bad_reason(const char *text)
{
        const char *eq = strchr(text, '=');

        while (g_ascii_isspace(*text))
                text++;
        if (*text == '[')
                return "not a [Section] header: a name between [ and ] alone on its line, without brackets "
                       "or "
                       "control characters in it";
        if (!eq)
                return "not a [Section], a Key=value or a # comment: it has no '='";
        return "not a [Section], a Key=value or a # comment: its key is empty or holds [ or ]";
}

static bool find_bad(unsigned number, LineKind kind, const char *name, const char *section, const char *text,
                     void *userdata)
{
        Bad *b = userdata;
        (void)name;

        if (kind != LINE_BAD && !(kind == LINE_KEY && !section))
                return true;
        g_string_append_printf(b->errors, "%s%s:%u: %s", b->errors->len ? "\n" : "", b->name, number,
                               kind == LINE_KEY ? "a Key=value before any [Section]" : bad_reason(text));
        g_array_append_val(b->lines, number);
        return true;
}

unsigned config_lines_bad(const char *data, const char *name, GString *errors, char **ret_clean)
{
        g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(unsigned));
        Bad b = {name, errors, lines};
        g_auto(GStrv) split = NULL;

        walk(data, find_bad, &b);
        if (!lines->len) {
                *ret_clean = g_strdup(data);
                return 0;
        }
        split = g_strsplit(data, "\n", -1);
        for (guint i = 0; i < lines->len; i++) {
                unsigned n = g_array_index(lines, unsigned, i);
                char *line = split[n - 1];
                /* a broken [Section header still starts a section: the keys under it are not the previous
                 * one's (CONFIG_LINES_BAD_SECTION, which the checks skip) */
                g_strchug(line);
                split[n - 1] =
                    line[0] == '[' ? g_strdup_printf("[" CONFIG_LINES_BAD_SECTION "%u]", n) : g_strdup("");
                g_free(line);
        }
        *ret_clean = g_strjoinv("\n", split);
        return lines->len;
}

struct ConfigLines {
        GHashTable
            *first; /* "section" -> its first header's line, "section\x1fkey" -> the key's first line */
        GHashTable *last; /* "section\x1fkey" -> the key's last line (the one whose value GKeyFile keeps) */
};

static bool index_line(unsigned number, LineKind kind, const char *name, const char *section,
                       const char *text, void *userdata)
{
        ConfigLines *l = userdata;
        char *id;
        (void)text;

        /* a section's name holds no control character (classify()), so "\x1f" ends it */
        if (kind == LINE_SECTION)
                id = g_strdup(name);
        else if (kind == LINE_KEY && section)
                id = g_strdup_printf("%s\x1f%s", section, name);
        else
                return true;
        if (kind == LINE_KEY)
                g_hash_table_replace(l->last, g_strdup(id), GUINT_TO_POINTER(number));
        if (g_hash_table_contains(l->first, id))
                g_free(id);
        else
                g_hash_table_insert(l->first, id, GUINT_TO_POINTER(number));
        return true;
}

ConfigLines *config_lines_new(const char *data)
{
        ConfigLines *l = g_new0(ConfigLines, 1);

        l->first = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        l->last = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        walk(data, index_line, l);
        return l;
}

unsigned config_lines_find(const ConfigLines *l, const char *section, const char *key)
{
        g_autofree char *id = key ? g_strdup_printf("%s\x1f%s", section, key) : g_strdup(section);

        return GPOINTER_TO_UINT(g_hash_table_lookup(l->first, id));
}

unsigned config_lines_find_last(const ConfigLines *l, const char *section, const char *key)
{
        g_autofree char *id = g_strdup_printf("%s\x1f%s", section, key);

        return GPOINTER_TO_UINT(g_hash_table_lookup(l->last, id));
}

void config_lines_free(ConfigLines *l)
{
        if (!l)
                return;
        g_hash_table_destroy(l->first);
        g_hash_table_destroy(l->last);
        g_free(l);
}

bool config_lines_name_shown(const char *name)
{
        size_t n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.");
        return n > 0 && n <= 64 && name[n] == '\0';
}

typedef struct Repeated {
        GHashTable *seen; /* "section\x1fkey" -> first line */
        const char *name;
        GString *errors;
} Repeated;

static bool find_repeated(unsigned number, LineKind kind, const char *name, const char *section,
                          const char *text, void *userdata)
{
        Repeated *r = userdata;
        g_autofree char *id = NULL;
        gpointer first;
        (void)text;

        if (kind != LINE_KEY || !section)
                return true;
        id = g_strdup_printf("%s\x1f%s", section, name);
        if (!g_hash_table_lookup_extended(r->seen, id, NULL, &first))
                g_hash_table_insert(r->seen, g_steal_pointer(&id), GUINT_TO_POINTER(number));
        else if (config_lines_name_shown(section) && config_lines_name_shown(name))
                g_string_append_printf(
                    r->errors, "%s%s:%u: [%s] %s= is set again (first on line %u): set it once",
                    r->errors->len ? "\n" : "", r->name, number, section, name, GPOINTER_TO_UINT(first));
        else /* a name not spelled as one is not shown: it may be a URI, a password */
                g_string_append_printf(r->errors,
                                       "%s%s:%u: a key set again in its section (first on line %u), not "
                                       "spelled as a name: set it once",
                                       r->errors->len ? "\n" : "", r->name, number, GPOINTER_TO_UINT(first));
        return true;
}

void config_lines_repeated(const char *data, const char *name, GString *errors)
{
        Repeated r = {g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), name, errors};

        walk(data, find_repeated, &r);
        g_hash_table_destroy(r.seen);
}

/* Levenshtein distance of a and b, each at most 63 characters (longer: a large number). */
static unsigned edits(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        unsigned row[64], prev;

        if (la > 63 || lb > 63)
                return 1000;
        for (size_t j = 0; j <= lb; j++)
                row[j] = (unsigned)j;
        for (size_t i = 1; i <= la; i++) {
                prev = row[0];
                row[0] = (unsigned)i;
                for (size_t j = 1; j <= lb; j++) {
                        unsigned here = row[j];
                        unsigned cost = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]) ? 0 : 1;
                        row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), prev + cost);
                        prev = here;
                }
        }
        return row[lb];
}

const char *config_lines_nearest(const char *word, const char *const *candidates, unsigned n)
{
        const char *best = NULL;
        unsigned best_edits = 3;

        for (unsigned i = 0; i < n; i++) {
                unsigned e = edits(word, candidates[i]);
                if (e < best_edits && e * 2 < strlen(word)) {
                        best = candidates[i];
                        best_edits = e;
                }
        }
        return best;
}
