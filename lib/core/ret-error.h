/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The error contract's second half: a message in *ret_error (when the caller wants one) beside the negative
 * errno that is returned. `return ret_error_set(ret_error, -EINVAL, "bad %s", what);` */

#include <glib.h>
#include <stdarg.h>

static inline int ret_error_set(char **ret_error, int r, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static inline int ret_error_set(char **ret_error, int r, const char *fmt, ...)
{
        va_list ap;

        if (ret_error) {
                va_start(ap, fmt);
                *ret_error = g_strdup_vprintf(fmt, ap);
                va_end(ap);
        }
        return r;
}
