/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays stored fuzz inputs through one target's LLVMFuzzerTestOneInput without libFuzzer, so that an
 * ordinary build (any compiler, `meson test`) runs every seed and every saved crash once.
 *   fuzz-replay-NAME [--prefix=P] PATH...
 * A PATH that is a directory stands for its regular files, in name order; --prefix=P keeps only those
 * whose name starts with P in the directories named after it. Prints TAP: the plan, then one line per
 * input. A failed check in the target aborts: the inputs after it are then missing from the output.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "fuzz-util.h"

static gint compare_paths(gconstpointer a, gconstpointer b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir whose name starts with prefix, sorted, appended to inputs. */
static int add_dir(GPtrArray *inputs, const char *dir, const char *prefix)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        const char *name;

        if (!d) {
                fprintf(stderr, "fuzz-replay: %s\n", error->message);
                return -1;
        }
        while ((name = g_dir_read_name(d))) {
                g_autofree char *path = g_build_filename(dir, name, NULL);
                if (g_str_has_prefix(name, prefix) && g_file_test(path, G_FILE_TEST_IS_REGULAR))
                        g_ptr_array_add(names, g_steal_pointer(&path));
        }
        g_ptr_array_sort(names, compare_paths);
        for (unsigned i = 0; i < names->len; i++)
                g_ptr_array_add(inputs, g_strdup(g_ptr_array_index(names, i)));
        return 0;
}

static int collect(int argc, char **argv, GPtrArray *inputs)
{
        const char *prefix = "";

        for (int i = 1; i < argc; i++) {
                if (g_str_has_prefix(argv[i], "--prefix="))
                        prefix = argv[i] + strlen("--prefix=");
                else if (g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
                        if (add_dir(inputs, argv[i], prefix) < 0)
                                return -1;
                } else
                        g_ptr_array_add(inputs, g_strdup(argv[i]));
        }
        return 0;
}

static int replay(const char *path)
{
        g_autoptr(GError) error = NULL;
        g_autofree char *data = NULL;
        gsize size;

        if (!g_file_get_contents(path, &data, &size, &error)) {
                fprintf(stderr, "fuzz-replay: %s\n", error->message);
                return -1;
        }
        fprintf(stderr, "# input %s\n", path);
        LLVMFuzzerTestOneInput((const uint8_t *)data, size);
        return 0;
}

int main(int argc, char **argv)
{
        g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func(g_free);
        int failed = 0;

        if (collect(argc, argv, inputs) < 0)
                return 99;
        if (!inputs->len) {
                printf("1..0 # SKIP no inputs\n");
                return 77;
        }
        printf("1..%u\n", inputs->len);
        for (unsigned i = 0; i < inputs->len; i++) {
                const char *path = g_ptr_array_index(inputs, i);
                fflush(stdout);
                if (replay(path) < 0) {
                        printf("not ok %u - %s (unreadable)\n", i + 1, path);
                        failed = 1;
                } else
                        printf("ok %u - %s\n", i + 1, path);
        }
        return failed;
}
