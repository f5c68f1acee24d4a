/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The D-Bus API: org.placementd1 at /org/placementd1, interface org.placementd1.Manager. One vtable;
 * each handler reads its arguments, validates them, checks permission, calls the manager and replies.
 * The bus connection is re-established with backoff when the bus goes away.
 */

#include <event2/event.h>

#include "bus-api.h"
#include "config.h"
#include "manager.h"
#include "stats-cache.h"

typedef struct BusService BusService;

typedef struct BusHooks {
        /* Reload the configuration like SIGHUP. Returns 0 or a negative errno with *ret_error set, or 1 when
         * the reload ends later: its bus_service_reload_done() answers the call then. */
        int (*reload)(void *userdata, char **ret_error);
        /* Another process owns the daemon's name on the bus (a second placementd): the daemon must not
         * run beside it, two engines pinning the same domains. Called instead of retrying. */
        void (*name_taken)(void *userdata);
        /* The address given is not one sd-bus can use (unix:foo=1): no retry can help, the daemon stops as
         * for any bad option. Called instead of retrying, before the first connection only. */
        void (*bad_address)(void *userdata);
} BusHooks;

/* kind selects the bus unless address is given. Returns NULL for BUS_NONE. Connecting happens in the
 * background (with retries), so the daemon runs without a bus too. */
BusService *bus_service_new(struct event_base *base, Manager *m, const StatsCache *stats, BusKind kind,
                            const char *address, const BusHooks *hooks, void *userdata);
void bus_service_free(BusService *s);

/* Signal DecisionChanged(uuid, name, result); result "stopped" when the domain was forgotten. */
void bus_service_decision_changed(BusService *s, const char *uuid, const char *name, const char *result);
/* PropertiesChanged for Policy, Apply, Connected, URI, Heal. */
void bus_service_state_changed(BusService *s);
/* A reload (SIGHUP or Reload()) ended: error says why it failed, the old configuration running on, NULL
 * when it worked. ReloadError holds it, with PropertiesChanged when it changes; kept across a new bus. The
 * Reload() calls that wait for it (the reload hook returned 1) are answered with it. */
void bus_service_reload_done(BusService *s, const char *error);
/* Answers the Reload() calls that wait for a reload (the reload hook returned 1) now, with error (and
 * error_name; NULL: InvalidArgument, a refused configuration), or as done when error is NULL; ReloadError
 * stays as it is. Where the callers' answer says more than every local user may read, or the reload
 * they wait for was replaced by a newer one or given up. */
void bus_service_reload_answer(BusService *s, const char *error_name, const char *error);
/* [Metrics] Listen= is configured and not served: error says why and what the daemon does about it
 * ("..., retrying"); NULL when it is served or off. MetricsError holds it, with PropertiesChanged when it
 * changes; kept across a new bus. */
void bus_service_metrics_state(BusService *s, const char *error);
