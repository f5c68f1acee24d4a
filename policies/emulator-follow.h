/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Emulator pins that follow arrivals. Where a domain's emulator (and the I/O threads pinned with it) got
 * cores of its nodes that held no vCPU (a host without SMT, siblings another domain holds, EmulatorPin=
 * nodeset), a domain placed later may take some of those cores for its vCPUs: the first domain's host-side
 * threads would then run beside them. Such a pin is narrowed to the CPUs no other domain's vCPUs run on,
 * as a placement made now would choose them; the vCPUs and the memory stay.
 */

#include "ledger.h"
#include "plan.h"

/*
 * A copy of p (key's plan in l) whose emulator pin leaves out the CPUs of cores where l counts another
 * domain's vCPU or holds a CPU for another domain; the I/O thread pin too where it was the emulator's.
 * NULL when the pin is kept: none of its cores is another domain's, nothing would be left, or what is
 * left has fewer cores than its host-side threads keep busy (host_busy cores, rounded up; at least one),
 * and for a plan that pins nothing (skipped, adopted as pinned by hand, unplaceable).
 */
Plan *policy_emulator_follow(const Topology *t, const Ledger *l, const Plan *p, double host_busy);

/* Whether p's emulator pin (key's plan in l) would follow arriving (a plan not in l yet): it keeps a CPU
 * on a core where neither another domain of l nor arriving runs a vCPU, and the I/O thread pin follows it
 * (none, or the emulator's). */
bool emulator_follow_leaves(const Topology *t, const Ledger *l, const Plan *p, const Plan *arriving);

/* The OS indexes of every CPU of the cores p's vCPUs are counted on: what an arrival or a move to p takes
 * from other domains' emulator pins (those that intersect it are the ones policy_emulator_follow() may
 * narrow). A new set. */
CpuSet *emulator_follow_taken(const Topology *t, const Plan *p);
