/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "placementctl.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
        fputs("Usage: placementctl COMMAND [OPTIONS...]\n"
              "\n"
              "Offline (no daemon; the engine runs on the given topology):\n"
              "  topology --topology=SOURCE [--json]\n"
              "  plan --topology=SOURCE [--config=FILE] [--policy=explicit|compat] [--json]\n"
              "       NAME:VCPUS:MEMORY... | --trace=FILE\n"
              "\n"
              "SOURCE is 'host', an hwloc XML file, or 'synthetic:DESC'. MEMORY takes K/M/G/T suffixes.\n"
              "Exit status: 0 ok, 1 runtime failure, 2 usage or input error.\n",
              f);
}

int main(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
                usage(stdout);
                return EXIT_OK;
        }
        if (strcmp(cmd, "--version") == 0) {
                printf("placementctl %s\n", PLACEMENTD_VERSION);
                return EXIT_OK;
        }
        /* Subcommands parse from argv[1] on, with getopt starting after the command name. */
        if (strcmp(cmd, "topology") == 0)
                return cmd_topology(argc - 1, argv + 1);
        if (strcmp(cmd, "plan") == 0)
                return cmd_plan_offline(argc - 1, argv + 1);
        fprintf(stderr, "placementctl: unknown command '%s' (see placementctl --help)\n", cmd);
        return EXIT_USAGE;
}
