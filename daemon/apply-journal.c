/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plans whose pins are applied while no record in the domain names them yet, kept in the runtime
 * directory beside the instance lock (uri-HASH.applying/, one file per domain UUID, root's alone).
 *
 * A domain is pinned first and its record written after: a placementd that stops in between (SIGKILL,
 * a crash, the watchdog) leaves pins on the domain that nothing says are placementd's, and the next
 * placementd would read them as pinned by someone else (a transient domain's live definition even shows
 * them as the user's <vcpupin>) and never place the domain. A pin that a held job cut off, or a record
 * that could not be written, leaves the same until the record is written. So each apply's plan is written
 * here before its first pin and removed once the domain's record is written (or the domain's run is
 * forgotten); a placementd that starts reads what is left into the plans of interrupted applies
 * (interrupted.c), which the first reconcile checks against the domains as they run: a domain of the same
 * run (its ID then) whose live pins are the plan's, or none, is placed anew.
 *
 * The runtime directory is a tmpfs: nothing here outlives a reboot, nor does any domain it names.
 * The file, one line each:
 *   domain-id ID        the run's libvirt ID (0: not known)
 *   vcpus N             the plan's vCPU count
 *   vcpu I ID CPULIST   the plan's vCPU I (libvirt's vCPU ID), pinned to CPULIST
 *   emulator CPULIST    iothreads IDLIST    iothread-pin CPULIST    threads CPULIST (thread-mask.c)
 *   keep-memory 0|1     whether the plan leaves the memory binding alone
 */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domain-xml.h"
#include "file-read.h"
#include "log.h"
#include "manager-internal.h"
#include "ret-error.h"

#define JOURNAL_FILE_MAX (1024 * 1024)

static bool parse_unsigned(const char *s, unsigned max, unsigned *ret)
{
        guint64 v;

        if (!g_ascii_string_to_unsigned(s, 10, 0, max, &v, NULL))
                return false;
        *ret = (unsigned)v;
        return true;
}

/* A set of CPUs (or I/O thread IDs) after its keyword; an empty text is the empty set. */
static bool parse_set(const char *s, CpuSet **ret)
{
        g_autofree char *error = NULL;

        return cpuset_parse(s, ret, &error) == 0;
}

/* What a journal file is read into. */
typedef struct JournalEntry {
        Plan *plan;
        unsigned *ids; /* [plan->nvcpus] libvirt's vCPU IDs */
        unsigned domain_id;
        CpuSet *threads;
} JournalEntry;

static void journal_entry_clear(JournalEntry *e)
{
        g_clear_pointer(&e->plan, plan_free);
        g_clear_pointer(&e->ids, g_free);
        g_clear_pointer(&e->threads, cpuset_free);
}

/* Reads one line's words w (n of them) into e; NULL, or what is wrong with it. */
static const char *journal_line(const Manager *m, const char *uuid, char **w, unsigned n, JournalEntry *e)
{
        g_autoptr(CpuSet) set = NULL;
        CpuSet **into;
        unsigned i, id;

        if (strcmp(w[0], "domain-id") == 0) {
                if (n != 2 || !parse_unsigned(w[1], G_MAXINT32, &e->domain_id))
                        return "a domain ID is a number";
        } else if (strcmp(w[0], "vcpus") == 0) {
                if (e->plan)
                        return "vcpus given twice";
                if (n != 2 || !parse_unsigned(w[1], PLAN_MAX_VCPUS, &i) || i == 0)
                        return "vcpus is a count from 1 to the most a plan holds";
                e->plan = plan_new(uuid, i, 0, m->topology->nnodes);
                e->ids = g_new(unsigned, i);
                for (unsigned v = 0; v < i; v++)
                        e->ids[v] = v;
        } else if (strcmp(w[0], "vcpu") == 0) {
                if (!e->plan)
                        return "a vcpu line before vcpus";
                if (n < 3 || !parse_unsigned(w[1], e->plan->nvcpus - 1, &i) ||
                    !parse_unsigned(w[2], DOMAIN_XML_MAX_VCPUS - 1, &id) ||
                    !parse_set(n == 4 ? w[3] : "", &set))
                        return "a vcpu line is the plan's index, libvirt's vCPU ID and a CPU list";
                e->ids[i] = id;
                cpuset_clear(e->plan->vcpu_pins[i]);
                cpuset_union(e->plan->vcpu_pins[i], set);
        } else if (strcmp(w[0], "keep-memory") == 0) {
                if (!e->plan || n != 2 || (strcmp(w[1], "0") != 0 && strcmp(w[1], "1") != 0))
                        return "keep-memory is 0 or 1, after vcpus";
                e->plan->keep_memory = w[1][0] == '1';
        } else {
                if (strcmp(w[0], "threads") == 0)
                        into = &e->threads;
                else if (e->plan && strcmp(w[0], "emulator") == 0)
                        into = &e->plan->emulator_pin;
                else if (e->plan && strcmp(w[0], "iothreads") == 0)
                        into = &e->plan->iothreads;
                else if (e->plan && strcmp(w[0], "iothread-pin") == 0)
                        into = &e->plan->iothread_pin;
                else
                        return "not a line of an apply's plan";
                if (n > 2 || !parse_set(n == 2 ? w[1] : "", &set))
                        return "not a CPU list";
                g_clear_pointer(into, cpuset_free);
                *into = g_steal_pointer(&set);
        }
        return NULL;
}

/* Reads text, a file this one writes, into e; -EINVAL with *ret_error when it is not one. */
static int journal_parse(const Manager *m, const char *uuid, const char *text, JournalEntry *e,
                         char **ret_error)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

        for (unsigned k = 0; lines[k]; k++) {
                g_auto(GStrv) w = g_strsplit(lines[k], " ", 4);
                unsigned n = g_strv_length(w);
                const char *why;

                if (n == 0 || (n == 1 && !*w[0]))
                        continue;
                if ((why = journal_line(m, uuid, w, n, e)))
                        return ret_error_set(ret_error, -EINVAL, "line %u: %s", k + 1, why);
        }
        if (!e->plan)
                return ret_error_set(ret_error, -EINVAL, "no vcpus line");
        for (unsigned v = 1; v < e->plan->nvcpus; v++)
                if (e->ids[v] <= e->ids[v - 1])
                        return ret_error_set(ret_error, -EINVAL, "the vCPU IDs are not in increasing order");
        plan_set_vcpu_ids(e->plan, e->ids, e->plan->nvcpus);
        e->plan->result = PLAN_PLACED;
        return 0;
}

static void append_set(GString *s, const char *key, const CpuSet *set)
{
        g_autofree char *list = set ? cpuset_format(set) : g_strdup("");

        g_string_append_printf(s, "%s %s\n", key, list);
}

static char *journal_format(const Manager *m, const char *uuid, unsigned domain_id, const Plan *plan)
{
        GString *s = g_string_new(NULL);
        const CpuSet *threads = thread_mask_get(m, uuid);

        g_string_append_printf(s, "domain-id %u\nvcpus %u\n", domain_id, plan->nvcpus);
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                g_autofree char *list = cpuset_format(plan->vcpu_pins[i]);
                g_string_append_printf(s, "vcpu %u %u %s\n", i, plan_vcpu_id(plan, i), list);
        }
        append_set(s, "emulator", plan->emulator_pin);
        append_set(s, "iothreads", plan->iothreads);
        append_set(s, "iothread-pin", plan->iothread_pin);
        if (threads)
                append_set(s, "threads", threads);
        g_string_append_printf(s, "keep-memory %d\n", plan->keep_memory ? 1 : 0);
        return g_string_free(s, FALSE);
}

/* Says a failure to write or remove once, until a write goes through again. */
static void journal_failed(Manager *m, const char *what, const char *uuid, int err)
{
        if (m->journal_failing)
                return;
        m->journal_failing = true;
        log_warning(
            "Cannot %s the apply journal entry %s/%s: %s; a restart of placementd before the domain's "
            "record is written would take its pins for someone else's",
            what, m->journal_dir, uuid, g_strerror(err));
}

void apply_journal_note(Manager *m, const char *uuid, unsigned domain_id, const Plan *plan)
{
        g_autofree char *text = NULL, *tmp = NULL;
        size_t len, done = 0;
        int fd;

        if (m->journal_fd < 0 || !uuid_text_valid(uuid))
                return;
        text = journal_format(m, uuid, domain_id, plan);
        len = strlen(text);
        tmp = g_strdup_printf(".%s.tmp", uuid);
        fd = openat(m->journal_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                journal_failed(m, "write", uuid, errno);
                return;
        }
        while (done < len) {
                ssize_t w = write(fd, text + done, len - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        int err = w < 0 ? errno : EIO;
                        close(fd);
                        unlinkat(m->journal_fd, tmp, 0);
                        journal_failed(m, "write", uuid, err);
                        return;
                }
                done += (size_t)w;
        }
        if (close(fd) < 0 || renameat(m->journal_fd, tmp, m->journal_fd, uuid) < 0) {
                int err = errno;
                unlinkat(m->journal_fd, tmp, 0);
                journal_failed(m, "write", uuid, err);
                return;
        }
        m->journal_failing = false;
}

void apply_journal_drop(Manager *m, const char *uuid)
{
        if (m->journal_fd < 0 || !uuid_text_valid(uuid))
                return;
        if (unlinkat(m->journal_fd, uuid, 0) < 0 && errno != ENOENT)
                journal_failed(m, "remove", uuid, errno);
}

/* Reads what a placementd before this one left: each plan becomes an interrupted apply's. */
static void journal_load(Manager *m, const char *dir)
{
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;
        unsigned loaded = 0;

        while (d && (name = g_dir_read_name(d))) {
                g_autofree char *path = g_build_filename(dir, name, NULL);
                g_autofree char *text = NULL, *error = NULL;
                JournalEntry e = {0};
                size_t len;

                if (name[0] == '.') { /* a write a stop cut off */
                        unlinkat(m->journal_fd, name, 0);
                        continue;
                }
                if (!uuid_text_valid(name))
                        continue;
                if (file_read_bounded(path, JOURNAL_FILE_MAX, &text, &len, &error) < 0 ||
                    journal_parse(m, name, text, &e, &error) < 0) {
                        log_warning("Apply journal entry %s: %s; removed", path, error);
                        unlinkat(m->journal_fd, name, 0);
                        journal_entry_clear(&e);
                        continue;
                }
                g_hash_table_replace(m->interrupted, g_strdup(name), g_steal_pointer(&e.plan));
                interrupted_note_run(m, name, e.domain_id, true);
                if (e.threads && !cpuset_is_empty(e.threads))
                        g_hash_table_replace(m->thread_masks, g_strdup(name), g_steal_pointer(&e.threads));
                journal_entry_clear(&e);
                loaded++;
        }
        if (loaded)
                log_notice("%u domain%s pinned by a placementd that stopped before it recorded the pins: "
                           "checked against what runs",
                           loaded, loaded == 1 ? " was" : "s were");
}

void apply_journal_open(Manager *m, const char *dir)
{
        struct stat st;
        int fd;

        apply_journal_close(m);
        if (!dir)
                return;
        if (g_mkdir(dir, 0700) < 0 && errno != EEXIST) {
                log_warning("Cannot make the apply journal %s: %s; a restart of placementd while it pins a "
                            "domain would take its pins for someone else's",
                            dir, g_strerror(errno));
                return;
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
                int err = fd < 0 ? errno : EPERM;
                log_warning("Cannot use the apply journal %s: %s; a restart of placementd while it pins a "
                            "domain would take its pins for someone else's",
                            dir, fd < 0 ? g_strerror(err) : "not this daemon's alone");
                if (fd >= 0)
                        close(fd);
                return;
        }
        m->journal_fd = fd;
        m->journal_dir = g_strdup(dir);
        journal_load(m, dir);
}

void apply_journal_close(Manager *m)
{
        if (m->journal_fd >= 0)
                close(m->journal_fd);
        m->journal_fd = -1;
        g_clear_pointer(&m->journal_dir, g_free);
}
