/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl's tables: columns as wide as a terminal shows their cells. */
#include "placementctl.h"

#include <stdio.h>

unsigned ctl_text_width(const char *s)
{
        unsigned width = 0;

        for (const char *p = s; *p; p = g_utf8_next_char(p)) {
                gunichar u = g_utf8_get_char(p);
                width += g_unichar_iszerowidth(u) ? 0 : g_unichar_iswide(u) ? 2 : 1;
        }
        return width;
}

void ctl_print_columns(GPtrArray *rows, unsigned ncolumns)
{
        g_autofree unsigned *width = g_new0(unsigned, MAX(ncolumns, 1));

        for (unsigned r = 0; r < rows->len; r++)
                for (unsigned c = 0; c < ncolumns; c++)
                        width[c] = MAX(width[c], ctl_text_width(((char **)g_ptr_array_index(rows, r))[c]));
        for (unsigned r = 0; r < rows->len; r++) {
                char **row = g_ptr_array_index(rows, r);
                for (unsigned c = 0; c < ncolumns; c++) {
                        fputs(row[c], stdout);
                        if (c + 1 < ncolumns)
                                printf("%*s", (int)(width[c] - ctl_text_width(row[c]) + 1), "");
                }
                fputc('\n', stdout);
        }
}
