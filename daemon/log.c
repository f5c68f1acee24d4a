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

/* Below journald's default LineMax= (48K): a longer line would be split into several entries. */
#define LOG_LINE_MAX 32768u

static void log_va(int level, const char *fmt, va_list ap)
{
        g_autofree char *text = NULL, *safe = NULL;

        if (level > max_level)
                return;
        /* whole, however long a domain's name: a fixed buffer cut the result and reason off its line */
        text = g_strdup_vprintf(fmt, ap);
        /* names and metadata are their owners' text: a newline, a carriage return, an escape, a C1
         * control or a bidi override would forge or hide what the journal shows. A newline is written
         * \x0a, as placementctl writes it: written as a space, a domain named "a<newline>b" read as one
         * named "a b" (log_lines() keeps a message of several lines on lines of its own) */
        safe = text_safe(text);
        if (strlen(safe) > LOG_LINE_MAX) {
                /* keep the end too: a decision line ends in its result and reason; cut between characters */
                const char *head = safe + LOG_LINE_MAX / 2, *tail = safe + strlen(safe) - LOG_LINE_MAX / 2;
                while (head > safe && ((unsigned char)*head & 0xc0) == 0x80)
                        head--;
                while (((unsigned char)*tail & 0xc0) == 0x80)
                        tail++;
                fprintf(stderr, "<%d>%.*s ... (%zu bytes left out) ... %s\n", level, (int)(head - safe),
                        safe, (size_t)(tail - head), tail);
        } else {
                fprintf(stderr, "<%d>%s\n", level, safe);
        }
        fflush(stderr);
}

void log_lines(int level, const char *head, const char *text)
{
        g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
        const char *first = lines[0] ? lines[0] : "";

        if (head)
                log_printf(level, "%s: %s", head, first);
        else
                log_printf(level, "%s", first);
        for (char **line = lines[0] ? lines + 1 : lines; *line; line++)
                if (**line)
                        log_printf(level, "  %s", *line);
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
