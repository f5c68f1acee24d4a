/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Exit codes shared by every placementctl command. */
#define EXIT_OK      0
#define EXIT_RUNTIME 1 /* the work failed: daemon unreachable, access denied, a failing call */
#define EXIT_USAGE   2 /* bad arguments or bad input */

int cmd_topology(int argc, char **argv);
int cmd_plan_offline(int argc, char **argv);
