/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "topology-xml-trial.h"

#include <errno.h>
#include <hwloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "text-safe.h"

/* Most of what the child's hwloc says to stderr is shown by the caller's own load, which reads the file
 * again: the child's stderr goes to a memory file, shown only when the child did not end normally, and
 * read for hwloc's reason when it refused the file. */
#define TRIAL_SAID_MAX 65536

/* The child: hwloc reads the XML as the caller will; exits 0 when it did, 1 when it refused. */
static G_GNUC_NORETURN void trial_child(const char *xml, gsize len, int said_fd)
{
        static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM};
        hwloc_topology_t topo;
        sigset_t unblock;
        int ok;

        /* A crash must end the child by its signal, whatever handler or mask the process has (a
         * sanitizer's handler turns SIGSEGV into an exit status); a hang too, by SIGALRM's default. */
        sigemptyset(&unblock);
        for (unsigned i = 0; i < G_N_ELEMENTS(fatal); i++) {
                signal(fatal[i], SIG_DFL);
                sigaddset(&unblock, fatal[i]);
        }
        sigprocmask(SIG_UNBLOCK, &unblock, NULL);
        if (said_fd >= 0) {
                dup2(said_fd, STDERR_FILENO);
                /* why hwloc refuses a file is said only with its verbose XML messages on (they are read
                 * the first time hwloc loads XML in the process: in placementctl, this child) */
                setenv("HWLOC_XML_VERBOSE", "1", 1);
        }
        alarm(TOPOLOGY_XML_TRIAL_SEC);
        ok = hwloc_topology_init(&topo) == 0;
        if (ok) {
                hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
                ok = hwloc_topology_set_xmlbuffer(topo, xml, (int)len + 1) == 0 &&
                     hwloc_topology_load(topo) == 0;
                hwloc_topology_destroy(topo);
        }
        _exit(ok ? 0 : 1);
}

/* What the child said (at most TRIAL_SAID_MAX bytes), as text; NULL when there is no memory file. */
static char *read_said(int said_fd)
{
        char *buf;
        size_t got = 0;
        ssize_t n;

        if (said_fd < 0 || lseek(said_fd, 0, SEEK_SET) < 0)
                return NULL;
        buf = g_malloc(TRIAL_SAID_MAX + 1);
        while (got < TRIAL_SAID_MAX && (n = read(said_fd, buf + got, TRIAL_SAID_MAX - got)) > 0)
                got += (size_t)n;
        buf[got] = '\0';
        return buf;
}

/* What the child said before it crashed or hung, as hwloc would have said it without the trial. */
static void show_said(const char *said)
{
        if (said) {
                fputs(said, stderr);
                fflush(stderr);
        }
}

/*
 * Why hwloc refused the file, from what the child said (its verbose XML messages): the lines before its
 * trailer about the parser ("Failed to parse XML input ..."), without the warnings about what it ignores
 * or its banner about invalid information (lines of '*'), without its "xmlbuffer: " prefix, at most three,
 * joined by "; " and made safe to show (they may quote the file). NULL when it said nothing of the kind.
 */
static char *refusal_reason(const char *said)
{
        g_auto(GStrv) lines = NULL;
        g_autoptr(GString) why = g_string_new(NULL);
        unsigned kept = 0;

        if (!said)
                return NULL;
        lines = g_strsplit(said, "\n", -1);
        for (char **l = lines; *l && kept < 3; l++) {
                const char *line = g_str_has_prefix(*l, "xmlbuffer: ") ? *l + strlen("xmlbuffer: ") : *l;

                if (g_str_has_prefix(line, "Failed to parse XML input") ||
                    strstr(line, "XML component discovery failed"))
                        break;
                if (!*line || *line == '*' || g_str_has_prefix(line, "ignoring "))
                        continue;
                g_string_append_printf(why, "%s%s", kept++ ? "; " : "", line);
        }
        return why->len ? text_safe_cut(why->str, 400) : NULL;
}

int topology_xml_trial_load(const char *xml, gsize len, const char *name, char **ret_error)
{
        int status = 0, e, said_fd;
        g_autofree char *said = NULL, *why = NULL;
        pid_t pid, r;

        /* Without a memory file the child speaks to stderr itself: shown twice, nothing lost. */
        said_fd = memfd_create("placementd-hwloc-trial", MFD_CLOEXEC);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                e = errno;
                if (said_fd >= 0)
                        close(said_fd);
                if (ret_error)
                        *ret_error = g_strdup_printf("cannot start a process to read %s with hwloc: %s",
                                                     name, g_strerror(e));
                return -e;
        }
        if (pid == 0)
                trial_child(xml, len, said_fd);
        do
                r = waitpid(pid, &status, 0);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
                e = errno;
                if (said_fd >= 0)
                        close(said_fd);
                if (ret_error)
                        *ret_error = g_strdup_printf("cannot wait for the process reading %s with hwloc: %s",
                                                     name, g_strerror(e));
                return -e;
        }
        if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 1))
                said = read_said(said_fd);
        if (said_fd >= 0)
                close(said_fd);
        if (WIFSIGNALED(status))
                show_said(said);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && (why = refusal_reason(said))) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: invalid hwloc XML: hwloc: %s", name, why);
                return -EINVAL;
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
                if (ret_error)
                        *ret_error = g_strdup_printf("hwloc did not finish reading %s within %u s", name,
                                                     TOPOLOGY_XML_TRIAL_SEC);
                return -ETIMEDOUT;
        }
        if (WIFSIGNALED(status)) {
                if (ret_error)
                        *ret_error = g_strdup_printf("hwloc crashed reading %s (signal %d, %s)", name,
                                                     WTERMSIG(status), strsignal(WTERMSIG(status)));
                return -EINVAL;
        }
        return 0;
}
