/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "instance-lock.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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

char *instance_lock_key(const char *uri)
{
        const char *colon = strchr(uri, ':'), *rest, *auth_end, *at;
        g_autofree char *scheme = NULL;
        g_autoptr(GString) key = g_string_new(NULL);
        size_t len;

        if (!colon)
                return g_strdup(uri);
        scheme = g_ascii_strdown(uri, colon - uri);
        rest = colon + 1;
        if (!g_str_has_prefix(rest, "//"))
                return g_strconcat(scheme, ":", rest, NULL);
        rest += 2;
        auth_end = rest + strcspn(rest, "/?#");
        /* the local transport is the default one: qemu+unix:///system is qemu:///system */
        if (auth_end == rest && g_str_has_suffix(scheme, "+unix"))
                scheme[strlen(scheme) - strlen("+unix")] = '\0';
        g_string_append_printf(key, "%s://", scheme);
        /* the user is not part of which libvirtd it is */
        at = memchr(rest, '@', (size_t)(auth_end - rest));
        if (at)
                rest = at + 1;
        for (const char *p = rest; p < auth_end; p++)
                g_string_append_c(key, g_ascii_tolower(*p));
        len = strcspn(auth_end, "#");
        g_string_append_len(key, auth_end, (gssize)len);
        if (key->len && key->str[key->len - 1] == '?') /* an empty query */
                g_string_truncate(key, key->len - 1);
        return g_string_free(g_steal_pointer(&key), FALSE);
}

static char *path_for(const char *dir, const char *uri, const char *suffix)
{
        g_autofree char *key = instance_lock_key(uri);
        g_autofree char *hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);
        g_autofree char *name = g_strdup_printf("uri-%.32s.%s", hash, suffix);

        return g_build_filename(dir, name, NULL);
}

char *instance_lock_path(const char *dir, const char *uri)
{
        return path_for(dir, uri, "lock");
}

char *instance_lock_journal_path(const char *dir, const char *uri)
{
        return path_for(dir, uri, "applying");
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

/* This process's pid and shown into the lock file fd: what a daemon refused reads. */
static int write_holder(int fd, const char *shown)
{
        g_autofree char *text = g_strdup_printf("%ld\n%s\n", (long)getpid(), shown ? shown : "");
        size_t len = MIN(strlen(text), (size_t)LOCK_FILE_MAX);

        errno = 0;
        if (ftruncate(fd, 0) < 0 || pwrite(fd, text, len, 0) != (ssize_t)len)
                return -(errno ? errno : EIO);
        return 0;
}

int instance_lock_take(const char *dir, const char *uri, const char *shown, pid_t *ret_pid, char **ret_error)
{
        g_autofree char *path = instance_lock_path(dir, uri);
        struct stat st = {0};
        int fd, err;

        *ret_pid = 0;
        if (g_mkdir_with_parents(dir, 0700) < 0) {
                err = errno;
                *ret_error = g_strdup_printf("cannot create %s: %s", dir, g_strerror(err));
                return -err;
        }
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0) {
                err = errno;
                *ret_error = g_strdup_printf("cannot open %s: %s", path, g_strerror(err));
                return -err;
        }
        /* flock() works on a descriptor opened only to read: a file others may open is a lock anyone can
         * hold, and with it keep every placementd of this URI from starting. Only its owner may open it
         * (an older daemon made it 0644), and it must be ours. */
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || fchmod(fd, 0600) < 0) {
                err = errno ? errno : EPERM;
                if (st.st_uid != geteuid())
                        *ret_error = g_strdup_printf("%s belongs to uid %u, not to this daemon's", path,
                                                     (unsigned)st.st_uid);
                else
                        *ret_error = g_strdup_printf("cannot use %s: %s", path, g_strerror(err));
                close(fd);
                return -EPERM;
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
        if (write_holder(fd, shown) < 0) {
                err = errno ? errno : EIO;
                close(fd);
                *ret_error = g_strdup_printf("cannot write %s: %s", path, g_strerror(err));
                return -err;
        }
        return fd;
}

int instance_lock_note_pid(int fd, const char *shown)
{
        return fd < 0 ? 0 : write_holder(fd, shown);
}

void instance_lock_release(int fd)
{
        if (fd >= 0)
                close(fd);
}
