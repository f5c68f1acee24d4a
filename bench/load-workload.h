/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Workloads with load, as traces (lib/core/trace.h) for sim_replay(): the arrivals, lifetimes and sizes
 * of workload_generate() in seconds, and for each domain a load drawn from a seeded mix:
 *   - busy (LOAD_BUSY_SHARE of domains): every vCPU 60-100% busy; otherwise idle: 0-15%;
 *   - busy host-side threads (LOAD_HOST_SHARE): 0.5-1.5 cores of emulator, I/O and vhost time;
 *   - a phase change (LOAD_FLIP_SHARE): busy turns idle or idle turns busy, an exponential time (mean half
 *     a lifetime) after the start, if the domain still runs then;
 *   - with thin_host only: of the domains without busy host-side threads, LOAD_THIN_HOST_SHARE have thin
 *     ones, 0.25-0.5 cores (vhost under light traffic), drawn from a stream of their own so that every
 *     other draw is the same as without.
 * Domains are named d<id>; ticks fill the time between events; the trace ends at the workload's end.
 */

#include <glib.h>

#include "workload.h"

#define LOAD_BUSY_SHARE      0.6
#define LOAD_HOST_SHARE      0.2
#define LOAD_FLIP_SHARE      0.25
#define LOAD_THIN_HOST_SHARE 0.3

/* A new GPtrArray of TraceEvent* (freeing them) for w, whose time unit becomes lifetime_sec seconds. */
GPtrArray *load_trace_generate(const Workload *w, double lifetime_sec, guint32 seed, bool thin_host);
/* w as it is, without load (every vCPU busy), one second per time unit: what bench-quality replays. */
GPtrArray *workload_trace(const Workload *w);
