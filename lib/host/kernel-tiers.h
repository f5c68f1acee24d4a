/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The kernel's memory tiers (/sys/devices/virtual/memory_tiering/memory_tierN/nodelist, Linux 6.1 and
 * later): N grows with the tier's abstract distance, so a node in a higher tier than the nodes with CPUs
 * is slower memory (CXL expanders, persistent memory), whatever hwloc could name it.
 */

#include <glib.h>

/*
 * Reads the tiers under root (the file system root; "" for "/") into a new table of tier ids by node OS
 * index (nodes in no tier: G_MAXUINT). Returns the table and its length in *ret_len, or NULL when the
 * kernel has no tiers to show or they cannot be read.
 */
unsigned *kernel_memory_tiers(const char *root, unsigned *ret_len);
