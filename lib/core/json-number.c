/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fractional numbers in JSON text in their shortest form. */
#include "json-number.h"

#include <glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether a and b are the same double, bit for bit (-0.0 is not 0.0). */
static bool same_double(double a, double b)
{
        return memcmp(&a, &b, sizeof(a)) == 0;
}

/* d with digits significant digits in the style of json-glib's "%.17g": fixed point for decimal exponents
 * from -4 to 16, else an exponent; into buf. */
static void format_digits(char *buf, size_t size, double d, int digits)
{
        char format[8];
        const char *e;
        int exponent;

        g_snprintf(format, sizeof(format), "%%.%de", digits - 1);
        g_ascii_formatd(buf, (int)size, format, d);
        if (!(e = strchr(buf, 'e')))
                return; /* not finite: left to the caller's check */
        exponent = atoi(e + 1);
        if (exponent < -4 || exponent >= 17)
                return;
        g_snprintf(format, sizeof(format), "%%.%df", MAX(digits - 1 - exponent, 0));
        g_ascii_formatd(buf, (int)size, format, d);
}

/* d in the fewest significant digits that read back as d, marked a double as json-glib marks one. */
static void append_shortest(GString *out, double d)
{
        char buf[G_ASCII_DTOSTR_BUF_SIZE + 32];

        for (int digits = 1; digits <= 17; digits++) {
                format_digits(buf, sizeof(buf), d, digits);
                if (same_double(g_ascii_strtod(buf, NULL), d))
                        break;
        }
        if (!same_double(g_ascii_strtod(buf, NULL), d)) /* never, for a finite double: json-glib's then */
                g_ascii_dtostr(buf, sizeof(buf), d);
        g_string_append(out, buf);
        if (!strpbrk(buf, ".eE"))
                g_string_append(out, ".0");
}

char *json_numbers_shortest(const char *json)
{
        GString *out = g_string_sized_new(strlen(json));
        const char *p = json;

        while (*p) {
                if (*p == '"') { /* a string, to its closing quote: what it holds is text */
                        const char *q = p + 1;
                        while (*q && *q != '"')
                                q += *q == '\\' && q[1] ? 2 : 1;
                        if (*q)
                                q++;
                        g_string_append_len(out, p, q - p);
                        p = q;
                } else if (*p == '-' || g_ascii_isdigit(*p)) {
                        size_t n = strspn(p, "0123456789+-.eE");
                        char *end;
                        double d;

                        /* an integer (most numbers here: IDs, counts, bytes) is copied, not parsed */
                        if (!memchr(p, '.', n) && !memchr(p, 'e', n) && !memchr(p, 'E', n)) {
                                g_string_append_len(out, p, (gssize)n);
                                p += n;
                                continue;
                        }
                        d = g_ascii_strtod(p, &end);
                        if (end == p + n && isfinite(d))
                                append_shortest(out, d);
                        else
                                g_string_append_len(out, p, (gssize)n);
                        p += n;
                } else {
                        g_string_append_c(out, *p++);
                }
        }
        return g_string_free(out, FALSE);
}
