/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The CPUs and memory nodes domains may run on, from the cgroup libvirt starts them in (its default
 * partition, machine.slice), not from placementd's own: a host partitioned with
 * `systemctl set-property system.slice AllowedCPUs=0,8` keeps placementd's own service on the
 * housekeeping CPUs, and the guests elsewhere.
 */

#include <hwloc.h>

/* The cgroup domains run in: libvirt's default partition under systemd (without systemd, "machine"). */
#define GUEST_CGROUP "machine.slice"

/*
 * Reads the guest cgroup's effective CPUs and memory nodes under root (the file system root; "" for
 * "/"): cgroup v2 (ROOT/sys/fs/cgroup/machine.slice/cpuset.{cpus,mems}.effective), else v1
 * (ROOT/sys/fs/cgroup/cpuset/machine.slice/cpuset.effective_{cpus,mems}), then the same for "machine".
 * Returns 0 with *ret_cpus and *ret_mems (new hwloc bitmaps, OS indexes; the caller frees them), or
 * -ENOENT when there is no such cgroup (yet: systemd makes it with the first guest, and it then has
 * what its parent has, the whole host unless configured) or its sets are empty (a v1 cpuset not set
 * up yet), or -EINVAL when its files cannot be read as lists. *ret_where names the cgroup read.
 */
int guest_cgroup_sets(const char *root, hwloc_bitmap_t *ret_cpus, hwloc_bitmap_t *ret_mems,
                      const char **ret_where);
