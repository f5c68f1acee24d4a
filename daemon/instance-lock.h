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

/* What names the libvirtd uri connects to, as the lock compares it: the scheme and the server in lower
 * case, the user and a fragment left out, qemu+unix:// as qemu:// (the local transport is the default),
 * an empty query dropped; the path and the query as written (a socket= names another libvirtd). */
char *instance_lock_key(const char *uri);

/* The lock file's path for uri (by its instance_lock_key()) under dir. Caller frees. */
char *instance_lock_path(const char *dir, const char *uri);
/* The same for the apply journal's directory of uri (manager_set_journal()), beside its lock. */
char *instance_lock_journal_path(const char *dir, const char *uri);

/*
 * Takes the lock of uri under dir (created 0700 when missing), writing this process's pid and shown (the
 * URI as others may read it) into the file. The file is the daemon's own, mode 0600: flock() works on a
 * descriptor opened only to read, so a file others could open would be a lock any local user could
 * hold. Returns the descriptor that holds the lock (close-on-exec; closing it releases the lock; a child
 * of fork() holds it too); -EBUSY when another process holds it, with *ret_pid its pid (0 when the file
 * does not say yet); another negative errno with *ret_error when the file cannot be used (one another
 * user owns: -EPERM).
 */
int instance_lock_take(const char *dir, const char *uri, const char *shown, pid_t *ret_pid,
                       char **ret_error);

/* Writes this process's pid and shown into the lock file of fd again (after daemon(): the child holds the
 * lock its parent took); 0 or a negative errno. A negative fd: nothing. */
int instance_lock_note_pid(int fd, const char *shown);

/* Releases a lock instance_lock_take() returned (a negative fd: nothing). */
void instance_lock_release(int fd);
