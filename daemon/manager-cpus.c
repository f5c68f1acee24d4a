/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's CPUs as guests can use them now: offline ones, ones left out of the guests' cgroup, ones the
 * topology names that this host lacks, and ones that came online after the topology was read. */
#include "guest-cpus.h"
#include "log.h"
#include "manager-internal.h"
#include "virt-conn.h"

/* Formats "CPU 1" / "CPUs 1-3" for a log line. */
static char *cpus_text(const CpuSet *cpus)
{
        g_autofree char *list = cpuset_format(cpus);

        return g_strdup_printf("%s %s", cpuset_count(cpus) == 1 ? "CPU" : "CPUs", list);
}

/* Says once a CPU the topology does not know came online (it was offline when placementd read the
 * host): only a restart reads the topology again. */
static void say_came_online(Manager *m, const CpuSet *offline)
{
        g_autoptr(CpuSet) unknown = cpuset_copy(offline);
        g_autoptr(CpuSet) came = NULL;

        cpuset_subtract(unknown, m->topology->all_pus);
        if (!m->online_read) {
                m->absent_offline = g_steal_pointer(&unknown);
                m->online_read = true;
                return;
        }
        came = cpuset_copy(m->absent_offline);
        cpuset_subtract(came, unknown);
        if (cpuset_is_empty(came))
                return;
        {
                g_autofree char *what = cpus_text(came);
                log_notice("%s came online after placementd read the host's topology: no domain is placed "
                           "there until placementd restarts",
                           what);
        }
        cpuset_subtract(m->absent_offline, came);
}

/*
 * Reads which CPUs of the topology the QEMU guests of this host cannot run on now: offline (libvirt's
 * node CPU map), or left out of the guests' cgroup (cgroup v1 drops a CPU that goes offline from
 * every cpuset and never gives it back). They are kept from every domain from now on (m->unavailable,
 * which the configuration's PlacementParams point to); those that became so are returned, for the domains
 * placementd put there to be placed again (NULL when none did); those usable again are offered again.
 */
CpuSet *manager_read_unavailable(Manager *m)
{
        g_autoptr(CpuSet) offline = NULL, now = NULL, outside = NULL, back = NULL, was_offline = NULL;
        g_autoptr(CpuSet) newly_offline = NULL;
        g_autoptr(CpuSet) absent = cpuset_new();
        g_autofree char *error = NULL;
        const char *where = NULL;
        unsigned present = 0;
        CpuSet *gone;

        /* only a driver that runs guests here reads this host (libvirt's test driver reports CPUs 0,2,4 of
         * 8 online, whatever runs it) */
        if (!virt_conn_runs_qemu(m->conn))
                return NULL;
        if (virt_conn_offline_cpus(m->conn, &offline, &present, &error) < 0) {
                log_debug("%s", error);
                return NULL;
        }
        say_came_online(m, offline);
        /* CPUs of the topology this host does not have (a topology made elsewhere): never usable */
        CPUSET_FOREACH (cpu, m->topology->all_pus)
                if ((unsigned)cpu >= present)
                        cpuset_add(absent, (unsigned)cpu);
        cpuset_union(offline, absent);
        now = cpuset_copy(m->topology->all_pus);
        {
                g_autoptr(CpuSet) online = cpuset_copy(m->topology->all_pus);
                cpuset_subtract(online, offline);
                cpuset_subtract(now, online); /* the topology's offline CPUs */
                was_offline = cpuset_copy(m->offline);
                cpuset_clear(m->offline);
                cpuset_union(m->offline, now);
                newly_offline = cpuset_copy(m->offline);
                cpuset_subtract(newly_offline, was_offline);
                cpuset_subtract(newly_offline, absent);
                if (guest_cgroup_cpus(&outside, &where) == 0) {
                        g_autoptr(CpuSet) inside = outside;
                        outside = cpuset_copy(online);
                        cpuset_subtract(outside, inside);
                        cpuset_union(now, outside);
                }
        }
        /* back online, but not for the guests */
        cpuset_subtract(was_offline, m->offline);
        if (outside && cpuset_intersects(was_offline, outside)) {
                g_autoptr(CpuSet) kept = cpuset_copy(was_offline);
                g_autoptr(CpuSet) usable = cpuset_copy(was_offline);
                g_autofree char *what = NULL;
                cpuset_subtract(usable, outside);
                cpuset_subtract(kept, usable);
                what = cpus_text(kept);
                log_notice(
                    "%s online again but not in the guests' cgroup %s (under cgroup v1 a CPU that went "
                    "offline leaves every cpuset for good): still kept from domains",
                    what, where);
        }
        gone = cpuset_copy(now);
        cpuset_subtract(gone, m->unavailable);
        back = cpuset_copy(m->unavailable);
        cpuset_subtract(back, now);
        if (!cpuset_is_empty(back)) {
                g_autofree char *what = cpus_text(back);
                log_notice("%s usable again: offered to domains again", what);
        }
        if (!cpuset_is_empty(gone)) {
                g_autoptr(CpuSet) left = cpuset_copy(gone);
                g_autoptr(CpuSet) went = cpuset_copy(gone);
                cpuset_subtract(left, m->offline);
                cpuset_subtract(went, left);
                if (cpuset_intersects(went, absent)) {
                        g_autoptr(CpuSet) missing = cpuset_copy(went);
                        g_autofree char *what = NULL;
                        cpuset_subtract(went, absent);
                        cpuset_subtract(missing, went);
                        what = cpus_text(missing);
                        log_notice("%s of the topology %s not on this host (libvirt counts %u CPUs): kept "
                                   "from domains",
                                   what, cpuset_count(missing) == 1 ? "is" : "are", present);
                }
                if (!cpuset_is_empty(went)) {
                        g_autofree char *what = cpus_text(went);
                        log_notice("%s went offline: kept from domains, those placed there are placed again",
                                   what);
                }
                if (!cpuset_is_empty(left)) {
                        g_autofree char *what = cpus_text(left);
                        log_notice(
                            "%s not in the guests' cgroup %s: kept from domains, those placed there are "
                            "placed again",
                            what, where);
                }
        }
        /* offline now, unusable already: under cgroup v1 the kernel takes a CPU going offline out of every
         * cpuset before libvirt's CPU map says it is offline, and a read in between saw it leave the
         * guests' cgroup; the next read says what it was */
        cpuset_subtract(newly_offline, gone);
        if (!cpuset_is_empty(newly_offline)) {
                g_autofree char *what = cpus_text(newly_offline);
                log_notice(
                    "%s went offline (kept from domains already: it had left the guests' cgroup first)",
                    what);
        }
        if (cpuset_is_empty(gone) && cpuset_is_empty(back)) {
                cpuset_free(gone);
                return NULL;
        }
        /* in place: the configuration, and the requests heal keeps, point to it */
        cpuset_clear(m->unavailable);
        cpuset_union(m->unavailable, now);
        healer_forget_request(m, NULL);
        if (cpuset_is_empty(gone))
                g_clear_pointer(&gone, cpuset_free);
        return gone;
}
