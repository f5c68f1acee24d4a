/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpuset_parse() on any text; what parses must print (cpuset_format) to a canonical list that parses
 * back to the same set and prints the same again. cpuset_parse_ids() reads what it reads alike, fails
 * where its syntax fails, and leaves out only numbers past CPUSET_MAX, saying so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "cpuset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        g_autofree char *text = g_strndup((const char *)data, size);
        g_autoptr(CpuSet) s = NULL, back = NULL, quiet = NULL;
        g_autofree char *error = NULL, *error2 = NULL, *list = NULL, *list2 = NULL;
        int r, r_quiet;

        fuzz_setup();
        r = cpuset_parse(text, &s, &error);
        r_quiet = cpuset_parse(text, &quiet, NULL);

        if (r != r_quiet)
                abort();
        {
                g_autoptr(CpuSet) ids = NULL;
                bool beyond = false;
                int r_ids = cpuset_parse_ids(text, &ids, &beyond, NULL);

                if ((r == 0 && (r_ids != 0 || beyond || !cpuset_equal(ids, quiet))) ||
                    (r == -EINVAL && r_ids != -EINVAL) || (r == -ERANGE && r_ids == 0 && !beyond) ||
                    (r_ids < 0) != !ids) {
                        fprintf(stderr, "'%s': %d as a CPU list, %d (%s) as ids\n", text, r, r_ids,
                                beyond ? "some left out" : "none left out");
                        abort();
                }
                if (r_ids == 0)
                        CPUSET_FOREACH (n, ids)
                                if ((unsigned)n > CPUSET_MAX)
                                        abort();
        }
        if (r < 0) {
                if (s || !error || (r != -EINVAL && r != -ERANGE))
                        abort();
                return 0;
        }
        if (!s || !quiet || !cpuset_equal(s, quiet))
                abort();
        CPUSET_FOREACH (n, s)
                if ((unsigned)n > CPUSET_MAX)
                        abort();

        list = cpuset_format(s);
        if (cpuset_parse(list, &back, &error2) < 0) {
                fprintf(stderr, "'%s' printed as '%s', which does not parse: %s\n", text, list, error2);
                abort();
        }
        if (!cpuset_equal(s, back) || cpuset_count(s) != cpuset_count(back)) {
                fprintf(stderr, "'%s' printed as '%s', which parses to another set\n", text, list);
                abort();
        }
        list2 = cpuset_format(back);
        if (strcmp(list, list2) != 0) {
                fprintf(stderr, "'%s' is not canonical: printed again as '%s'\n", list, list2);
                abort();
        }
        return 0;
}
