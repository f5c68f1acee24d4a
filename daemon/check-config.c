/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementd --check-config (check-config.h). */
#include "check-config.h"

#include "config.h"
#include "text-safe.h"
#include "topology-load.h"

#include <errno.h>
#include <glib.h>

/* Writes text line by line, each as text_terminal_safe() leaves it (a path the operator gave may hold
 * anything; the loader's messages escape what they quote from the file already). */
static void write_lines(FILE *f, const char *prefix, const char *text)
{
        g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);

        for (char **l = lines; *l; l++) {
                g_autofree char *safe = text_terminal_safe(*l);
                if (**l)
                        fprintf(f, "%s%s\n", prefix, safe);
        }
}

int check_config(const char *path, bool must_exist, const char *topology, FILE *out, FILE *err)
{
        g_autoptr(Config) config = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(GPtrArray) warnings = NULL;
        g_autofree char *error = NULL, *note = NULL, *topology_error = NULL, *prefix = NULL, *line = NULL;

        if (config_load_or_defaults(path, must_exist, &config, &note, &error) < 0) {
                write_lines(err, "", error);
                return 2;
        }
        prefix = g_strdup_printf("%s: warning: ", path);
        /* the checks a start makes against the host: a topology that cannot be read leaves them undone,
         * the file itself checked */
        if (topology_load(topology, &t, &topology_error) < 0) {
                g_autofree char *why = g_strdup_printf("the checks that need the host were not made: %s",
                                                       topology_error ? topology_error : "");
                write_lines(err, prefix, why);
        } else {
                warnings = config_host_warnings(config, t);
                for (unsigned i = 0; i < warnings->len; i++)
                        write_lines(err, prefix, g_ptr_array_index(warnings, i));
        }
        line = note
                   ? g_strdup_printf("%s (policy %s)", note, policy_kind_to_string(config->placement.policy))
                   : g_strdup_printf("%s: configuration OK (policy %s)", path,
                                     policy_kind_to_string(config->placement.policy));
        write_lines(out, "", line);
        /* the line is the answer: one that did not reach stdout (a full disk) is a failure, said */
        errno = 0;
        if (fflush(out) != 0 || ferror(out)) {
                fprintf(err, "placementd: write error: %s\n", g_strerror(errno ? errno : EIO));
                return 1;
        }
        return 0;
}
