/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Exit codes shared by every placementctl command. */
#define EXIT_OK             0
#define EXIT_RUNTIME        1 /* the work failed: daemon unreachable, access denied, a failing call */
#define EXIT_USAGE          2 /* bad arguments or bad input */
#define EXIT_NOT_RUNNING    3 /* placementd is not on the bus */
#define EXIT_NO_SUCH_DOMAIN 4
#define EXIT_DENIED         5 /* the daemon refused: only root may do that */

int cmd_topology(int argc, char **argv);
int cmd_plan_offline(int argc, char **argv);
/* status, list, show, explain, map, plan (online), reload, rebalance, replace */
int cmd_online(int argc, char **argv);
/* cpu-advice [DOMAIN], cpu-baseline FILE...: libvirt directly, no daemon (cmd-cpu.c) */
int cmd_cpu_advice(int argc, char **argv);
int cmd_cpu_baseline(int argc, char **argv);
