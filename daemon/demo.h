/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The demo run: on libvirt's test driver, start and stop domains from a trace, one event every
 * step_ms, while the daemon places them as it would on a host. When the trace is done it prints the
 * host map and asks the loop to exit.
 */

#include <event2/event.h>
#include <glib.h>

#include "manager.h"

typedef struct Demo Demo;

/* Takes ownership of events (TraceEvent*). */
Demo *demo_new(struct event_base *base, Manager *m, GPtrArray *events, unsigned step_ms);
void demo_free(Demo *d);
/* Starts once the manager is connected; call from the connection callback. */
void demo_start(Demo *d);
/* 0 while running or when all went well, else the number of events that failed. */
unsigned demo_failures(const Demo *d);
