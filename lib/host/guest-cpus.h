/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The guest cgroup's CPUs (guest-cgroup.h) without hwloc, for the daemon's reading of the host as it runs.
 */

#include "cpuset.h"

/*
 * The effective CPUs of the guest cgroup of this host (under HWLOC_FSROOT when set, as the topology is
 * read): 0 with *ret (a new set, OS indexes) and *ret_where (the cgroup's name), or guest_cgroup_sets()'s
 * -ENOENT (no such cgroup yet) or -EINVAL.
 */
int guest_cgroup_cpus(CpuSet **ret, const char **ret_where);
