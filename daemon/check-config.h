/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * placementd --check-config: the configuration file read and checked as a start or a reload reads it
 * (config_load_or_defaults()), with no libvirt, no bus, no lock and no daemon, for an operator to run
 * before a reload as `sshd -t` is. Every problem goes to standard error, one a line as the loader
 * collects them; on success one line goes to standard output, "PATH: configuration OK (policy P)", or
 * "PATH not found: built-in defaults (policy P)" for a default file that does not exist (a start runs on
 * the built-in defaults then). What of it the host makes useless (config_host_warnings() against the
 * topology a start would load) is said as warnings, which do not fail the check.
 */

#include <stdbool.h>
#include <stdio.h>

/* path as the daemon reads it (absolute), must_exist when --config= named it, topology as --topology=
 * takes it. Returns the exit status: 0 when the file loads, 2 when it does not, 1 when its line could not be
 * written to out (said on err). */
int check_config(const char *path, bool must_exist, const char *topology, FILE *out, FILE *err);
