/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A picture of the host drawn by hwloc's own lstopo: the topology is loaded again with hwloc, every PU
 * gets an lstopoStyle info attribute (its domain's colour, reserved or shared), one Misc object per
 * domain in its colour names it (the legend), the result is exported as hwloc XML and drawn with
 * `lstopo --if xml -i XML --of nativesvg FILE`.
 */

#include <glib.h>

#include "topology.h"

/* What runs on one PU: a domain index (0 and up) or one of these. */
#define HOST_PU_FREE     (-1)
#define HOST_PU_SHARED   (-2) /* vCPUs of several domains */
#define HOST_PU_RESERVED (-3) /* free, and reserved for the host */

/*
 * The picture goes to path as it is: an existing file keeps its owner and mode, a device or a FIFO is
 * written, not replaced; a new file is made 0666 less the umask. A symbolic link at path is followed only
 * when root or the caller owns it (the rule of fs.protected_symlinks): run as root into a directory
 * others write to, a link one of them planted would have the picture overwrite what it points to, so it
 * is refused. So is a FIFO or regular file another user put in such a sticky directory (the rule of
 * fs.protected_fifos and fs.protected_regular=2): root would wait on the FIFO until its owner read the
 * picture, or write into a file its owner keeps. Anything else is opened with O_NOFOLLOW, so a link put
 * there after the lstat() is refused too, and a new file with O_EXCL, so nothing put there since is
 * written; a followed link is looked at again once open, and is truncated only when it is still the same.
 *
 * Opened before anything is printed, so that a command whose picture cannot be written prints no map or
 * plan. Returns the file descriptor, or a negative errno with *ret_error set (caller frees).
 */
int host_svg_open(const char *path, char **ret_error);

/*
 * owner has t->npus entries, by PU index; names the domain names by domain index. Writes the SVG to fd
 * (host_svg_open()'s), which it closes; path names it in messages. Returns 0 or a negative errno with
 * *ret_error set (caller frees).
 */
int host_svg_write(const Topology *t, const int *owner, const GPtrArray *names, int fd, const char *path,
                   char **ret_error);
