/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one way placementd and placementctl read a file (configuration, traces, topology XML, CPU
 * descriptions): a regular file only, never more than the caller's limit, text without NUL bytes.
 *
 * A FIFO, a device (/dev/zero), a socket or a directory is refused without reading from it: the file is
 * opened O_NONBLOCK, so opening a FIFO does not wait for a writer, and fstat() decides. At most max + 1
 * bytes are read whatever st_size says (a file may grow while it is read), so the memory spent is
 * bounded by the limit. A NUL byte would silently end the text for every parser that follows (GKeyFile,
 * GMarkup), so it is refused with its line number.
 */

#include <glib.h>
#include <stddef.h>

/*
 * Reads path into a NUL-terminated buffer (*ret, *ret_len bytes, caller frees). Returns 0, or a negative
 * errno with *ret_error set to the reason without the path (caller frees): -ENOENT and other open()
 * errors, -EISDIR for a directory, -EINVAL for anything else that is not a regular file or for a NUL
 * byte, -EFBIG when the file holds more than max bytes.
 */
int file_read_bounded(const char *path, size_t max, char **ret, size_t *ret_len, char **ret_error);

struct stat;
/* The same, with the file's status as it was read (of the descriptor read, not of a path looked up again)
 * in *ret_st. */
int file_read_bounded_stat(const char *path, size_t max, char **ret, size_t *ret_len, struct stat *ret_st,
                           char **ret_error);

/* "1 MiB", "64 KiB", "100 bytes": a limit in words (caller frees). */
char *file_limit_format(size_t max);
