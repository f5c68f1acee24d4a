/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "map-text.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "host-svg.h"
#include "hostmap.h"

static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* The PU marks of one "    cpu N [..][..]" line. */
static int parse_cores(const char *line, GArray *owner)
{
        const char *s = strchr(line + strlen("    cpu "), '[');

        while (s && *s == '[') {
                for (s++; *s && *s != ']'; s++) {
                        const char *l = strchr(letters, *s);
                        int o = *s == '.'   ? HOST_PU_FREE
                                : *s == '#' ? HOST_PU_RESERVED
                                : *s == '+' ? HOST_PU_SHARED
                                : *s == '*' ? (int)strlen(letters) /* past the last letter */
                                : l && *s   ? (int)(l - letters)
                                            : -100;
                        if (o == -100)
                                return -EINVAL;
                        g_array_append_val(owner, o);
                }
                if (*s != ']')
                        return -EINVAL;
                s++;
        }
        return s && *s == '\0' ? 0 : -EINVAL;
}

/* The length of entry k's name at s, next being ", " and the letter of entry k + 1. A name may hold that
 * very text, so it is the longest of the daemon's domain names (known) that s starts with and that the
 * end or the next entry follows; -1 when none fits. */
static gssize name_length(const char *s, const char *next, const GPtrArray *known)
{
        gssize best = -1;

        for (unsigned i = 0; i < known->len; i++) {
                const char *n = g_ptr_array_index(known, i);
                gssize len = (gssize)strlen(n);
                if (strncmp(s, n, (size_t)len) == 0 && (!s[len] || g_str_has_prefix(s + len, next)) &&
                    len > best)
                        best = len;
        }
        return best;
}

/* "A web1, B db, C x" (the legend's lines joined with ", ") into names. */
static int parse_legend(const char *entries, const GPtrArray *known, GPtrArray *names)
{
        const char *s = entries;

        for (unsigned k = 0; *s && *s != '*' && k < strlen(letters); k++) {
                char next[5] = {',', ' ', k + 1 < strlen(letters) ? letters[k + 1] : '*', ' ', 0};
                gssize len;
                if (s[0] != letters[k] || s[1] != ' ')
                        return -EINVAL;
                s += 2;
                len = name_length(s, next, known);
                if (len < 0)
                        return -EINVAL;
                g_ptr_array_add(names, g_strndup(s, (gsize)len));
                s += len;
                s += *s ? 2 : 0;
        }
        if (*s == '*')
                g_ptr_array_add(names, g_strdup("more domains"));
        return 0;
}

/* PU indexes in the order the map shows them (lib/hostmap.c: package, node, core, thread). */
static GArray *map_order(const Topology *t)
{
        GArray *order = g_array_new(FALSE, FALSE, sizeof(unsigned));

        for (unsigned pkg = 0; pkg < t->npackages; pkg++)
                for (unsigned n = 0; n < t->nnodes; n++) {
                        const TopoNode *node = &t->nodes[n];
                        if (!hostmap_node_in_package(t, n, pkg))
                                continue;
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                for (unsigned p = t->cores[c].pu_first;
                                     t->cores[c].package == pkg &&
                                     p < t->cores[c].pu_first + t->cores[c].npus;
                                     p++)
                                        g_array_append_val(order, p);
                }
        return order;
}

static int fail(char **ret_error, const char *what, const char *line)
{
        *ret_error = line ? g_strdup_printf("%s: '%s'", what, line) : g_strdup(what);
        return -EINVAL;
}

int map_text_owners(const char *text, const Topology *t, const GPtrArray *known, int **ret_owner,
                    GPtrArray **ret_names, char **ret_error)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autoptr(GArray) shown = g_array_new(FALSE, FALSE, sizeof(int));
        g_autoptr(GArray) order = map_order(t);
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GString) legend = g_string_new(NULL);
        g_autofree int *owner = NULL;
        bool in_legend = false;

        for (unsigned i = 0; lines[i]; i++) {
                const char *l = lines[i];
                if (in_legend && g_str_has_prefix(l, "  "))
                        g_string_append_printf(legend, "%s%s", legend->len ? ", " : "", l + 2);
                else if (g_str_has_prefix(l, "legend:"))
                        in_legend = true;
                else if (g_str_has_prefix(l, "    cpu ") && parse_cores(l, shown) < 0)
                        return fail(ret_error, "the host map has a row of cores it cannot read", l);
        }
        if (!in_legend)
                return fail(ret_error, "the host map has no legend: not a map placementctl can read", NULL);
        if (shown->len != order->len || order->len != t->npus) {
                *ret_error = g_strdup_printf("the daemon's map shows %u PUs, the topology %s has %u: give "
                                             "--topology= the daemon's own",
                                             shown->len, t->source, t->npus);
                return -EINVAL;
        }
        if (parse_legend(legend->str, known, names) < 0)
                return fail(ret_error, "the host map's legend does not name the daemon's domains",
                            legend->str);
        owner = g_new(int, MAX(t->npus, 1));
        for (unsigned i = 0; i < shown->len; i++) {
                int o = g_array_index(shown, int, i);
                if (o >= (int)names->len)
                        return fail(ret_error, "the host map shows a domain its legend does not name", NULL);
                owner[g_array_index(order, unsigned, i)] = o;
        }
        *ret_owner = g_steal_pointer(&owner);
        *ret_names = g_steal_pointer(&names);
        return 0;
}
