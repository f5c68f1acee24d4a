/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Host CPU time of running domains (virt-stats.h), read by one bulk call per interval on a timer, so
 * that requests anyone can repeat (metrics scrapes, GetDecisionsJSON) never call libvirt themselves.
 * The figures served are at most one interval old, plus the time the call itself took.
 */

#include <event2/event.h>
#include <glib.h>

#include "manager.h"

/* Every 5 s, and at once when libvirt connects (stats_cache_refresh()). */
#define STATS_CACHE_INTERVAL_MS 5000u

typedef struct StatsCache StatsCache;

/* Reads the figures: a table from UUID to DomainCpuStats, or a negative errno and a message. */
typedef int (*StatsFetch)(void *userdata, GHashTable **ret, char **ret_error);

/* A cache filled by fetch every interval_ms. */
StatsCache *stats_cache_new(struct event_base *base, unsigned interval_ms, StatsFetch fetch, void *userdata);
/* The daemon's cache: virConnectGetAllDomainStats on the manager's connection. */
StatsCache *stats_cache_new_for_manager(struct event_base *base, Manager *m);
void stats_cache_free(StatsCache *c);
/* Fetches now (and again one interval later). */
void stats_cache_refresh(StatsCache *c);
/* The last figures (a new reference), or NULL when there are none: not connected, not supported by
 * the driver, or the last fetch failed. */
GHashTable *stats_cache_table(const StatsCache *c);

/* Called with every successful fetch's table (measured load: manager_note_stats()). */
typedef void (*StatsListener)(GHashTable *table, void *userdata);
void stats_cache_set_listener(StatsCache *c, StatsListener listener, void *userdata);
/* Fetches every interval_ms from the next fetch on ([Placement] LoadInterval=). */
void stats_cache_set_interval(StatsCache *c, unsigned interval_ms);
/* The interval a config asks for: LoadInterval= seconds, or STATS_CACHE_INTERVAL_MS when that is 0. */
unsigned stats_cache_interval_for(unsigned load_interval_sec);
