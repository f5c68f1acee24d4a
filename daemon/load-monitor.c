/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "load-monitor.h"

/* One domain: its smoothed load and the counters of the last sample. */
typedef struct LoadEntry {
        DomainLoad *load;
        uint64_t when_usec;
        unsigned nvcpus;
        uint64_t *vcpu_ns;     /* [nvcpus] ran */
        uint64_t *vcpu_wait;   /* [nvcpus] ready but waiting for a host CPU */
        unsigned *vcpu_ids;    /* [nvcpus] libvirt's ids (DomainCpuStats.vcpu_ids); NULL: 0..nvcpus-1 */
        uint64_t host_ns;      /* the last host-side time read as such (see entry_update()) ... */
        uint64_t host_usec;    /* ... and when; 0: none yet */
        uint64_t total_ns;     /* cpu.time: a new QEMU (the domain restarted) starts it again */
        bool paused;           /* the guest was paused at the last sample */
        uint64_t started_usec; /* its start, when seen (load_monitor_started()); 0: not known */
        uint64_t generation;   /* the last sample that held it */
} LoadEntry;

struct LoadMonitor {
        GHashTable *entries; /* uuid -> LoadEntry* */
        uint64_t generation;
        unsigned nknown; /* entries whose load is known: asked at every decision, not counted then */
};

static void load_entry_free(LoadEntry *e)
{
        domain_load_free(e->load);
        g_free(e->vcpu_ns);
        g_free(e->vcpu_wait);
        g_free(e->vcpu_ids);
        g_free(e);
}

LoadMonitor *load_monitor_new(void)
{
        LoadMonitor *lm = g_new0(LoadMonitor, 1);
        lm->entries =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)load_entry_free);
        return lm;
}

void load_monitor_free(LoadMonitor *lm)
{
        if (!lm)
                return;
        g_hash_table_destroy(lm->entries);
        g_free(lm);
}

/*
 * A vCPU's busy fraction: what it ran plus what it waited for a host CPU, the wait counted up to as much
 * as it ran. Two busy vCPUs time-sharing one CPU each run half the time and wait the other half: both
 * fully busy. An idle vCPU that wakes often on a loaded host waits a little at every wake-up, which can
 * add up to far more than it runs: it stays idle.
 */
static double vcpu_busy(double ran, double waited)
{
        return ran + MIN(waited, ran);
}

/* The vCPUs read as the same ones in e and s: the first positions whose libvirt ids agree. */
static unsigned same_vcpus(const LoadEntry *e, const DomainCpuStats *s)
{
        unsigned both = MIN(e->nvcpus, s->nvcpu_times);
        unsigned i = 0;

        while (i < both && (e->vcpu_ids ? e->vcpu_ids[i] : i) == (s->vcpu_ids ? s->vcpu_ids[i] : i))
                i++;
        return i;
}

/* The vCPUs of s are not those of e's last sample (hot-plug): each that stays keeps its own smoothed load,
 * found by libvirt's id (domain_load_follow()). */
static void follow_vcpus(LoadEntry *e, const DomainCpuStats *s)
{
        unsigned n = s->nvcpu_times;
        g_autofree int *from = g_new(int, MAX(n, 1));

        /* both lists ascend, as libvirt gives them: one walk (out of order, a vCPU is taken as new) */
        for (unsigned i = 0, j = 0; i < n; i++) {
                unsigned id = s->vcpu_ids ? s->vcpu_ids[i] : i;
                while (j < e->nvcpus && (e->vcpu_ids ? e->vcpu_ids[j] : j) < id)
                        j++;
                from[i] = j < e->nvcpus && (e->vcpu_ids ? e->vcpu_ids[j] : j) == id ? (int)j : -1;
        }
        domain_load_follow(e->load, from, n);
}

/*
 * Folds the sample s into e; true when e's class changed. A sample with the guest paused at either end
 * is set aside (its vCPUs stood still for some of it, which is no measure of its load): the load is held
 * as it was before the pause, the counters are only read; but as each vCPU ran at least what it read,
 * a vCPU that read more than its load rises by it (domain_load_raise()). Otherwise a guest paused for a
 * moment around every reading, running flat out in between, kept the idle load it had for as long as
 * its owner kept it up. So for a sample in which the vCPU count changed (hot-plug): the vCPUs that
 * stayed, read in the same places, may rise, the rest is held until two samples count the same vCPUs; and
 * each vCPU that stays keeps its own load, found by libvirt's id (follow_vcpus()).
 */
static bool entry_update(LoadEntry *e, const DomainCpuStats *s, uint64_t now_usec, double warmup_sec)
{
        unsigned before = domain_load_class(e->load);
        unsigned n = s->nvcpu_times;
        /* the vCPUs read in both samples: all of them, or those that stayed when the count changed
         * (libvirt plugs and unplugs at the end), up to the first whose id differs: with vCPU 1 of 0-2
         * unplugged, the second running one is vCPU 2, whose time is no reading of vCPU 1's */
        unsigned both = same_vcpus(e, s);
        bool counted = e->when_usec && now_usec > e->when_usec && both > 0;
        bool comparable;
        /* host_ns is cpu.time less the vCPUs' times, floored at 0: it does not go back within a run (a
         * vCPU thread that leaves takes its time out of the vCPUs' sum, not the domain's), but reads low,
         * down to 0, when the vCPUs' times were read ahead of cpu.time. Such a reading is none: the
         * host-side load is measured from the last one read as such, over the time since it. */
        bool host_read =
            !(s->host_ns == 0 && s->total_ns > 0) && (!e->host_usec || s->host_ns >= e->host_ns);

        /* a vCPU's counter that went back is a new thread (unplugged and plugged again between samples,
         * its count unchanged): the old thread's time left the vCPUs' sum but not the domain's, and would
         * read as that much host-side load; this interval is set aside, counted from here */
        for (unsigned i = 0; counted && i < both; i++)
                counted = s->vcpu_time_ns[i] >= e->vcpu_ns[i];
        comparable = counted && e->nvcpus == n && both == n && !e->paused && !s->paused;

        if (!e->when_usec && e->started_usec && now_usec > e->started_usec)
                /* the first reading: the start-up began at the start, not here */
                e->load->warmup_sec = (double)(now_usec - e->started_usec) / G_USEC_PER_SEC;
        if (counted) {
                uint64_t elapsed_ns = (now_usec - e->when_usec) * 1000;
                g_autofree double *busy = g_new(double, both);
                for (unsigned i = 0; i < both; i++)
                        busy[i] = vcpu_busy(
                            load_fraction(e->vcpu_ns[i], s->vcpu_time_ns[i], elapsed_ns),
                            s->vcpu_wait_ns ? load_fraction(e->vcpu_wait[i], s->vcpu_wait_ns[i], elapsed_ns)
                                            : 0);
                double host = host_read && e->host_usec && now_usec > e->host_usec
                                  ? load_fraction(e->host_ns, s->host_ns, (now_usec - e->host_usec) * 1000)
                                  : 0;
                if (comparable)
                        domain_load_update(e->load, busy, n, host, (double)elapsed_ns / 1e9,
                                           LOAD_SMOOTHING(warmup_sec), NULL);
                else
                        domain_load_raise(e->load, busy, both, (double)elapsed_ns / 1e9,
                                          LOAD_SMOOTHING(warmup_sec), NULL);
        }
        if (e->when_usec && both < MAX(e->nvcpus, n))
                follow_vcpus(e, s);
        if (e->nvcpus != n) {
                e->vcpu_ns = g_renew(uint64_t, e->vcpu_ns, MAX(n, 1));
                e->vcpu_wait = g_renew(uint64_t, e->vcpu_wait, MAX(n, 1));
                e->nvcpus = n;
        }
        for (unsigned i = 0; i < n; i++) {
                e->vcpu_ns[i] = s->vcpu_time_ns[i];
                e->vcpu_wait[i] = s->vcpu_wait_ns ? s->vcpu_wait_ns[i] : 0;
        }
        g_free(e->vcpu_ids);
        e->vcpu_ids = s->vcpu_ids ? g_memdup2(s->vcpu_ids, sizeof(unsigned) * MAX(n, 1)) : NULL;
        if (host_read) {
                e->host_ns = s->host_ns;
                e->host_usec = now_usec;
        }
        e->total_ns = s->total_ns;
        e->paused = e->load->paused = s->paused;
        e->when_usec = now_usec;
        return domain_load_class(e->load) != before;
}

unsigned load_monitor_update(LoadMonitor *lm, GHashTable *stats, uint64_t now_usec, unsigned warmup_sec)
{
        GHashTableIter it;
        gpointer key, value;
        unsigned changed = 0;

        lm->generation++;
        g_hash_table_iter_init(&it, stats);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const DomainCpuStats *s = value;
                LoadEntry *e = g_hash_table_lookup(lm->entries, key);
                if (e && s->total_ns && s->total_ns < e->total_ns) {
                        /* stopped and started again between two samples: a new guest, start-up and all
                         * (placed anew on its start: no heal pass for it) */
                        g_hash_table_remove(lm->entries, key);
                        e = NULL;
                }
                if (!e) {
                        e = g_new0(LoadEntry, 1);
                        e->load = domain_load_new();
                        g_hash_table_insert(lm->entries, g_strdup(key), e);
                }
                e->generation = lm->generation;
                if (entry_update(e, s, now_usec, warmup_sec))
                        changed++;
        }
        lm->nknown = 0;
        g_hash_table_iter_init(&it, lm->entries);
        while (g_hash_table_iter_next(&it, NULL, &value))
                if (((LoadEntry *)value)->generation != lm->generation)
                        g_hash_table_iter_remove(&it);
                else if (((LoadEntry *)value)->load->known)
                        lm->nknown++;
        return changed;
}

/* Removes the entry of uuid, if any, from the count of known loads (it is about to go). */
static void uncount(LoadMonitor *lm, const char *uuid)
{
        const LoadEntry *e = g_hash_table_lookup(lm->entries, uuid);

        if (e && e->load->known && lm->nknown)
                lm->nknown--;
}

void load_monitor_started(LoadMonitor *lm, const char *uuid, uint64_t usec)
{
        LoadEntry *e = g_new0(LoadEntry, 1);

        e->load = domain_load_new();
        e->started_usec = usec;
        e->generation = lm->generation;
        uncount(lm, uuid);
        g_hash_table_replace(lm->entries, g_strdup(uuid), e);
}

void load_monitor_forget(LoadMonitor *lm, const char *uuid)
{
        uncount(lm, uuid);
        g_hash_table_remove(lm->entries, uuid);
}

const DomainLoad *load_monitor_lookup(const LoadMonitor *lm, const char *uuid)
{
        const LoadEntry *e = lm ? g_hash_table_lookup(lm->entries, uuid) : NULL;
        return e && e->load->known ? e->load : NULL;
}

bool load_monitor_warming(const LoadMonitor *lm, const char *uuid)
{
        const LoadEntry *e = lm ? g_hash_table_lookup(lm->entries, uuid) : NULL;

        /* samples come (a host whose stats call fails measures nothing: no domain waits for them), the
         * last held it (one it did not hold is dropped), and its load is not known yet */
        return e && lm->generation > 0 && !e->load->known;
}

const DomainLoad *load_monitor_lookup_cb(const char *uuid, void *lm)
{
        return load_monitor_lookup(lm, uuid);
}

unsigned load_monitor_known(const LoadMonitor *lm)
{
        return lm->nknown;
}

bool load_monitor_any_known(const LoadMonitor *lm)
{
        return lm->nknown > 0;
}
