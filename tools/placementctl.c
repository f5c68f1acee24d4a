/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "placementctl.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

static void usage(FILE *f)
{
        fputs("Usage: placementctl COMMAND [OPTIONS...]\n"
              "\n"
              "Ask the running placementd (D-Bus, system bus unless --bus=session or --bus-address=ADDR):\n"
              "  status                      daemon state, policy, host summary\n"
              "  list                        every running domain and its decision\n"
              "  show DOMAIN                 one decision (name or UUID)\n"
              "  explain DOMAIN              the ranked candidates and the rule that chose\n"
              "  map                         the host with the domain on each CPU\n"
              "  plan --vcpus=N --memory=SIZE   what it would do for a new domain now\n"
              "  reload | rebalance | replace DOMAIN   (root only)\n"
              "All of them take --json.\n"
              "\n"
              "Offline (no daemon; the engine runs on the given topology):\n"
              "  topology --topology=SOURCE [--json]\n"
              "  plan --topology=SOURCE [--config=FILE] [--policy=explicit|compat] [--json]\n"
              "       NAME:VCPUS:MEMORY... | --trace=FILE\n"
              "\n"
              "Guest CPU models (libvirt directly, no daemon; --connect=URI, default qemu:///system):\n"
              "  cpu-advice [DOMAIN] [--json]   features each running domain's CPU model hides\n"
              "  cpu-baseline [--map-only] [--virttype=TYPE] [--json] FILE...\n"
              "                              the best CPU model all these hosts can run\n"
              "\n"
              "SOURCE is 'host', an hwloc XML file, or 'synthetic:DESC'. MEMORY takes K/M/G/T suffixes.\n"
              "Exit status: 0 ok, 1 runtime failure, 2 usage or input error, 3 placementd not running,\n"
              "4 no such domain, 5 permission denied.\n",
              f);
}

/* Options that take a value, so "--bus-address ADDR" is one option, not a command. */
static bool takes_value(const char *opt)
{
        static const char *const with_value[] = {"--bus",    "--bus-address", "--topology", "--config",
                                                 "--policy", "--trace",       "--vcpus",    "--memory"};
        for (unsigned i = 0; i < G_N_ELEMENTS(with_value); i++)
                if (strcmp(opt, with_value[i]) == 0)
                        return true;
        return false;
}

static const char *const online[] = {"status", "list",   "show",      "explain",
                                     "map",    "reload", "rebalance", "replace"};

int main(int argc, char **argv)
{
        const char *cmd = NULL;

        /* Options may come before the command (placementctl --json list, --bus-address ADDR status): move
         * the command to argv[1], skipping the values of options given as separate words. */
        for (int i = 1; i < argc; i++) {
                if (argv[i][0] == '-' && strcmp(argv[i], "-") != 0) {
                        if (!strchr(argv[i], '=') && takes_value(argv[i]))
                                i++;
                        continue;
                }
                {
                        char *c = argv[i];
                        memmove(argv + 2, argv + 1, sizeof(char *) * (size_t)(i - 1));
                        argv[1] = c;
                }
                break;
        }
        cmd = argc > 1 ? argv[1] : NULL;

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
        if (strcmp(cmd, "cpu-advice") == 0)
                return cmd_cpu_advice(argc - 1, argv + 1);
        if (strcmp(cmd, "cpu-baseline") == 0)
                return cmd_cpu_baseline(argc - 1, argv + 1);
        if (strcmp(cmd, "plan") == 0) {
                for (int i = 2; i < argc; i++)
                        if (g_str_has_prefix(argv[i], "--topology"))
                                return cmd_plan_offline(argc - 1, argv + 1);
                return cmd_online(argc - 1, argv + 1);
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(online); i++)
                if (strcmp(cmd, online[i]) == 0)
                        return cmd_online(argc - 1, argv + 1);
        fprintf(stderr, "placementctl: unknown command '%s' (see placementctl --help)\n", cmd);
        return EXIT_USAGE;
}
