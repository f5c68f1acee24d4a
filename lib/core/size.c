/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int size_parse(const char *text, uint64_t *ret)
{
        static const struct {
                const char *suffix;
                unsigned shift;
        } units[] = {
            {"", 0},     {"B", 0},  {"K", 10},   {"KIB", 10}, {"M", 20},
            {"MIB", 20}, {"G", 30}, {"GIB", 30}, {"T", 40},   {"TIB", 40},
        };
        const char *p = text;
        uint64_t v = 0;

        if (!text || !isdigit((unsigned char)*p))
                return -EINVAL;
        while (isdigit((unsigned char)*p)) {
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
                p++;
        }
        for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (strcasecmp(p, units[i].suffix) != 0)
                        continue;
                if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
                        return -ERANGE;
                *ret = v << units[i].shift;
                return 0;
        }
        return -EINVAL;
}

static const char *const unit_names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

/* bytes in the unit of the given rank (0 B, 1 KiB, ... 6 EiB), at most the one size_format() picks */
static char *size_format_in(uint64_t bytes, unsigned rank, char *buf, unsigned len)
{
        const char *const *names = unit_names;
        unsigned i = 0;
        double v = (double)bytes;

        while (v >= 1024.0 && i < rank) {
                v /= 1024.0;
                i++;
        }
        if (i == 0)
                snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        else
                snprintf(buf, len, "%.1f %s", v, names[i]);
        return buf;
}

char *size_format(uint64_t bytes, char *buf, unsigned len)
{
        return size_format_in(bytes, 6, buf, len);
}

/* The bytes a figure of size_format_in() reads as: "1024.0 MiB" is as much as "1.0 GiB". */
static double figure_bytes(const char *text)
{
        char *unit;
        double v = strtod(text, &unit);

        while (*unit == ' ')
                unit++;
        for (unsigned i = 0; i < sizeof(unit_names) / sizeof(unit_names[0]); i++, v *= 1024.0)
                if (strcmp(unit, unit_names[i]) == 0)
                        return v;
        return v;
}

char *size_format_short_of(uint64_t bytes, uint64_t than, char *buf, unsigned len)
{
        char other[64];

        size_format(bytes, buf, len);
        if (bytes >= than || figure_bytes(buf) < figure_bytes(size_format(than, other, sizeof(other))))
                return buf;
        /* the same figure for both, or one that reads as much in a smaller unit (1 KiB short of 1 GiB is
         * "1024.0 MiB"): a smaller unit tells them apart (bytes at worst) */
        for (unsigned rank = 5; rank > 0; rank--)
                if (figure_bytes(size_format_in(bytes, rank, buf, len)) <
                    figure_bytes(size_format_in(than, rank, other, sizeof(other))))
                        return buf;
        return size_format_in(bytes, 0, buf, len);
}
