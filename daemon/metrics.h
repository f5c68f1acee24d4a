/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Prometheus metrics over HTTP (GET /metrics) from the daemon's own libevent loop, with the small bounded
 * server of http-server.h: no second thread, nothing to install. Off unless [Metrics] Listen= is set.
 */

#include <event2/event.h>

#include "manager.h"
#include "stats-cache.h"

typedef struct MetricsServer MetricsServer;

/* Listens on listen ("ADDRESS:PORT"); per-domain CPU time comes from stats (NULL: none). Returns NULL
 * with *ret_error set when it cannot, errno as http_server_new() sets it (EINVAL: not ADDRESS:PORT). */
MetricsServer *metrics_server_new(struct event_base *base, Manager *m, const StatsCache *stats,
                                  const char *listen, char **ret_error);
void metrics_server_free(MetricsServer *s);

/* The exposition text (Prometheus text format 0.0.4); caller frees. */
char *metrics_render(Manager *m, const StatsCache *stats);
