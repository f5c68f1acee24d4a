/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One placementd per libvirt URI. Two daemons on one host's domains undo each other's pins and take each
 * other's for pins "by someone else"; the bus name keeps out only a second daemon on the same bus. The
 * lock is flock() on a file named by a hash of the URI in the runtime directory; the file holds the
 * holder's pid and the URI (without credentials). The kernel drops the lock when its holder exits, however
 * it exits; the file stays (removing it would race with a daemon about to lock it).
 */

#include <sys/types.h>

/* The directory of the lock files: the first of $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=), else
 * /run/placementd as root, else $XDG_RUNTIME_DIR/placementd; NULL when there is none. Caller frees. */
char *instance_lock_dir(void);

/* The lock file's path for uri under dir. Caller frees. */
char *instance_lock_path(const char *dir, const char *uri);

/*
 * Takes the lock of uri under dir (created 0755 when missing), writing this process's pid and shown (the
 * URI as others may read it) into the file. Returns the descriptor that holds the lock (close-on-exec;
 * closing it releases the lock); -EBUSY when another process holds it, with *ret_pid its pid (0 when the
 * file does not say yet); another negative errno with *ret_error when the file cannot be used.
 */
int instance_lock_take(const char *dir, const char *uri, const char *shown, pid_t *ret_pid,
                       char **ret_error);

/* Releases a lock instance_lock_take() returned (a negative fd: nothing). */
void instance_lock_release(int fd);
