/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Daemon logging: one line per message on stderr with a "<N>" syslog priority prefix, which journald
 * turns into the message's priority. Only daemon code logs; lib/core, lib/host and policies/ return errors
 * instead.
 */

#include <errno.h>
#include <syslog.h>

void log_set_max_level(int level);
int log_get_max_level(void);
/* "err", "warning", "notice", "info", "debug" (or 0-7); -EINVAL when unknown. */
int log_level_from_string(const char *s);

void log_printf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* text of several problems, one a line (newline-separated), logged one a line at level, as placementctl
 * shows them: "HEAD: first line" (the first line alone when head is NULL), then each other non-empty line
 * indented. A single log_printf() would join them into one line. */
void log_lines(int level, const char *head, const char *text);

/* Logs and returns r (a negative errno), for `return log_error_errno(r, ...)`. */
int log_errno(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_error(...)            log_printf(LOG_ERR, __VA_ARGS__)
#define log_warning(...)          log_printf(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)           log_printf(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)             log_printf(LOG_INFO, __VA_ARGS__)
#define log_debug(...)            log_printf(LOG_DEBUG, __VA_ARGS__)
#define log_error_errno(r, ...)   log_errno(LOG_ERR, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_errno(LOG_WARNING, (r), __VA_ARGS__)
