/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "instance-lock.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define LOCK_FILE_MAX 4096

char *instance_lock_dir(void)
{
        const char *runtime = getenv("RUNTIME_DIRECTORY");
        const char *xdg = getenv("XDG_RUNTIME_DIR");

        if (runtime && *runtime)
                return g_strndup(runtime, strcspn(runtime, ":"));
        if (geteuid() == 0)
                return g_strdup("/run/placementd");
        if (xdg && *xdg == '/')
                return g_build_filename(xdg, "placementd", NULL);
        return NULL;
}

char *instance_lock_path(const char *dir, const char *uri)
{
        g_autofree char *hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, uri, -1);
        g_autofree char *name = g_strdup_printf("uri-%.32s.lock", hash);

        return g_build_filename(dir, name, NULL);
}

/* The pid the holder wrote, 0 when it has not yet or the file says something else. */
static pid_t holder_pid(int fd)
{
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        char *end = NULL;
        long pid;

        if (n <= 0)
                return 0;
        buf[n] = '\0';
        errno = 0;
        pid = strtol(buf, &end, 10);
        return errno || end == buf || *end != '\n' || pid <= 0 || pid > G_MAXINT32 ? 0 : (pid_t)pid;
}

int instance_lock_take(const char *dir, const char *uri, const char *shown, pid_t *ret_pid, char **ret_error)
{
        g_autofree char *path = instance_lock_path(dir, uri);
        g_autofree char *text = g_strdup_printf("%ld\n%s\n", (long)getpid(), shown ? shown : "");
        size_t len = MIN(strlen(text), (size_t)LOCK_FILE_MAX);
        int fd, err;

        *ret_pid = 0;
        if (g_mkdir_with_parents(dir, 0755) < 0) {
                err = errno;
                *ret_error = g_strdup_printf("cannot create %s: %s", dir, g_strerror(err));
                return -err;
        }
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0) {
                err = errno;
                *ret_error = g_strdup_printf("cannot open %s: %s", path, g_strerror(err));
                return -err;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                err = errno;
                if (err == EWOULDBLOCK) {
                        /* the holder writes its pid just after taking the lock: give it that moment */
                        for (unsigned i = 0; i < 10 && !(*ret_pid = holder_pid(fd)); i++)
                                g_usleep(10000);
                        close(fd);
                        return -EBUSY;
                }
                close(fd);
                *ret_error = g_strdup_printf("cannot lock %s: %s", path, g_strerror(err));
                return -err;
        }
        if (ftruncate(fd, 0) < 0 || pwrite(fd, text, len, 0) != (ssize_t)len) {
                err = errno ? errno : EIO;
                close(fd);
                *ret_error = g_strdup_printf("cannot write %s: %s", path, g_strerror(err));
                return -err;
        }
        return fd;
}

void instance_lock_release(int fd)
{
        if (fd >= 0)
                close(fd);
}
