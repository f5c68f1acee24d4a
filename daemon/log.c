/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"
#include "text-safe.h"

#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The one piece of process-wide state: where the daemon's log threshold stands. */
static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
        max_level = level;
}

int log_get_max_level(void)
{
        return max_level;
}

int log_level_from_string(const char *s)
{
        static const char *const names[] = {"emerg",   "alert",  "crit", "err",
                                            "warning", "notice", "info", "debug"};
        guint64 n;

        for (int i = 0; i < 8; i++)
                if (g_ascii_strcasecmp(s, names[i]) == 0)
                        return i;
        if (g_ascii_strcasecmp(s, "error") == 0)
                return LOG_ERR;
        if (g_ascii_string_to_unsigned(s, 10, 0, 7, &n, NULL))
                return (int)n;
        return -EINVAL;
}

static void log_va(int level, const char *fmt, va_list ap)
{
        char buf[2048];

        if (level > max_level)
                return;
        g_autofree char *safe = NULL;

        vsnprintf(buf, sizeof(buf), fmt, ap);
        for (char *p = buf; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        /* names and metadata are their owners' text: a carriage return, an escape, a C1 control or a
         * bidi override would forge or hide what the journal shows */
        safe = text_safe(buf);
        fprintf(stderr, "<%d>%s\n", level, safe);
        fflush(stderr);
}

void log_printf(int level, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_va(level, fmt, ap);
        va_end(ap);
}

int log_errno(int level, int r, const char *fmt, ...)
{
        va_list ap;
        int saved = errno;

        errno = r < 0 ? -r : r;
        va_start(ap, fmt);
        log_va(level, fmt, ap);
        va_end(ap);
        errno = saved;
        return r < 0 ? r : -r;
}
