/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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

char *size_format(uint64_t bytes, char *buf, unsigned len)
{
        static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        unsigned i = 0;
        double v = (double)bytes;

        while (v >= 1024.0 && i < 6) {
                v /= 1024.0;
                i++;
        }
        if (i == 0)
                snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        else
                snprintf(buf, len, "%.1f %s", v, names[i]);
        return buf;
}
