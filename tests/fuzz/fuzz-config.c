/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config_load_data() on any text. A failed load must say why and return no config; a loaded config
 * printed by config_format() must load again and print the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        g_autofree char *text = g_strndup((const char *)data, size);
        g_autoptr(Config) c = NULL, again = NULL;
        g_autofree char *error = NULL, *error2 = NULL, *out = NULL, *out2 = NULL;

        fuzz_setup();

        if (config_load_data(text, "fuzz.conf", &c, &error) < 0) {
                if (c || !error)
                        abort();
                return 0;
        }
        if (!c || error)
                abort();
        out = config_format(c);
        if (config_load_data(out, "formatted", &again, &error2) < 0) {
                fprintf(stderr, "config_format() output does not load again: %s\n---\n%s---\n", error2, out);
                abort();
        }
        out2 = config_format(again);
        if (strcmp(out, out2) != 0) {
                fprintf(stderr, "config_format() is not stable:\n%s---\n%s---\n", out, out2);
                abort();
        }
        return 0;
}
