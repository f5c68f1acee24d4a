/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "file-read.h"
#include "ret-error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *file_limit_format(size_t max)
{
        if (max >= (1u << 20) && max % (1u << 20) == 0)
                return g_strdup_printf("%zu MiB", max >> 20);
        if (max >= 1024 && max % 1024 == 0)
                return g_strdup_printf("%zu KiB", max >> 10);
        return g_strdup_printf("%zu bytes", max);
}

static const char *file_kind(mode_t mode)
{
        if (S_ISFIFO(mode))
                return "a FIFO";
        if (S_ISCHR(mode))
                return "a character device";
        if (S_ISBLK(mode))
                return "a block device";
        if (S_ISSOCK(mode))
                return "a socket";
        return "not a regular file";
}

/* Reads at most max + 1 bytes of fd into *buf (of *size bytes, grown by doubling), leaving room for a
 * terminating NUL. Returns the count or a negative errno. */
static ssize_t read_upto(int fd, char **buf, size_t *size, size_t max)
{
        size_t len = 0;

        while (len <= max) {
                ssize_t n;

                if (len + 1 >= *size) {
                        *size = MIN(MAX(*size * 2, (size_t)4096), max + 2);
                        *buf = g_realloc(*buf, *size);
                }
                n = read(fd, *buf + len, MIN(*size - 1, max + 1) - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        return (ssize_t)len;
}

int file_read_bounded(const char *path, size_t max, char **ret, size_t *ret_len, char **ret_error)
{
        return file_read_bounded_stat(path, max, ret, ret_len, NULL, ret_error);
}

int file_read_bounded_stat(const char *path, size_t max, char **ret, size_t *ret_len, struct stat *ret_st,
                           char **ret_error)
{
        g_autofree char *buf = NULL, *limit = NULL;
        const char *nul;
        struct stat st;
        size_t size;
        ssize_t n;
        int fd, e;

        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                e = errno;
                return ret_error_set(ret_error, -e, "%s", g_strerror(e));
        }
        if (fstat(fd, &st) < 0) {
                e = errno;
                close(fd);
                return ret_error_set(ret_error, -e, "%s", g_strerror(e));
        }
        if (S_ISDIR(st.st_mode)) {
                close(fd);
                return ret_error_set(ret_error, -EISDIR, "%s", g_strerror(EISDIR));
        }
        if (!S_ISREG(st.st_mode)) {
                close(fd);
                return ret_error_set(ret_error, -EINVAL, "%s, not a regular file", file_kind(st.st_mode));
        }
        limit = file_limit_format(max);
        if (st.st_size < 0 || (guint64)st.st_size > max) {
                close(fd);
                return ret_error_set(ret_error, -EFBIG, "larger than the limit of %s", limit);
        }
        /* st_size is a hint only (/proc files say 0, files grow): read up to the limit plus one. */
        size = MIN((size_t)st.st_size, max) + 2;
        buf = g_malloc(size);
        n = read_upto(fd, &buf, &size, max);
        close(fd);
        if (n < 0)
                return ret_error_set(ret_error, (int)n, "%s", g_strerror((int)-n));
        if ((size_t)n > max)
                return ret_error_set(ret_error, -EFBIG, "larger than the limit of %s", limit);
        buf[n] = '\0';
        nul = memchr(buf, '\0', (size_t)n);
        if (nul) {
                unsigned line = 1;
                for (const char *p = buf; p < nul; p++)
                        line += *p == '\n';
                return ret_error_set(ret_error, -EINVAL, "a NUL byte on line %u (not a text file)", line);
        }
        *ret = g_steal_pointer(&buf);
        if (ret_st)
                *ret_st = st;
        if (ret_len)
                *ret_len = (size_t)n;
        return 0;
}
