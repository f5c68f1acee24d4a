/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Load monitor: turns the CPU-time counters of the bulk statistics call (virt-stats.h, one call per
 * interval for every domain) into smoothed load (load.h). A vCPU's load is the time it ran plus the time
 * it was ready but waited for a host CPU (counted up to as much as it ran), over the interval: two busy
 * vCPUs time-sharing one CPU each run half the time, and each is still fully busy. A domain's load is
 * unknown until two samples are seen (a fraction needs two counter readings) and its start-up is over
 * (load.h: the warm-up); a domain missing from a sample is forgotten.
 */

#include <glib.h>
#include <stdint.h>

#include "load.h"
#include "cpu-stats.h"

typedef struct LoadMonitor LoadMonitor;

LoadMonitor *load_monitor_new(void);
void load_monitor_free(LoadMonitor *lm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LoadMonitor, load_monitor_free)

/*
 * Folds one sample (UUID -> DomainCpuStats) taken at now_usec (CLOCK_MONOTONIC) into the loads; a domain's
 * samples over its first warmup_sec seconds are set aside as its start-up ([Placement] LoadWarmup=),
 * counted from its start when load_monitor_started() said when, else from its first reading.
 * A vCPU count that changed starts the domain's counters again; a domain whose cpu.time went back was
 * started again since the last sample and is measured anew, warm-up and all. Returns how many domains
 * changed class: became known, or gained or lost a busy vCPU, or their host-side threads became busy or
 * quiet.
 */
unsigned load_monitor_update(LoadMonitor *lm, GHashTable *stats, uint64_t now_usec, unsigned warmup_sec);

/* The domain with uuid started at usec (CLOCK_MONOTONIC; its start event): measured anew, its warm-up
 * counted from then. Dropped by the next sample that does not hold it. */
void load_monitor_started(LoadMonitor *lm, const char *uuid, uint64_t usec);
/* Forgets the domain with uuid (it stopped): its next start is measured anew. */
void load_monitor_forget(LoadMonitor *lm, const char *uuid);
/* The smoothed load of the domain with uuid; NULL when unknown. */
const DomainLoad *load_monitor_lookup(const LoadMonitor *lm, const char *uuid);
/* Whether the domain with uuid is being measured and its load is not known yet (its warm-up, or a
 * first sample still to come); false while no sample came at all. */
bool load_monitor_warming(const LoadMonitor *lm, const char *uuid);
/* A LoadLookup (load.h) over lm, for load_pu_busy(). */
const DomainLoad *load_monitor_lookup_cb(const char *uuid, void *lm);
/* How many domains have a known load. */
unsigned load_monitor_known(const LoadMonitor *lm);
/* Whether any domain has a known load: load_monitor_known() > 0 (asked at every decision). */
bool load_monitor_any_known(const LoadMonitor *lm);
