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

/* Reads the demo's trace: start NAME VCPUS MEMORY and stop NAME lines only. Any other line (load, tick,
 * domain FILE.xml, or one that is no event at all) is refused by its number and text before the trace
 * is parsed, so no file it names is read. Returns 0 with *ret (TraceEvent*, for demo_new()) or a
 * negative errno with *ret_error naming the file and the line. */
int demo_load_trace(const char *path, GPtrArray **ret, char **ret_error);

/* Takes ownership of events (TraceEvent*). */
Demo *demo_new(struct event_base *base, Manager *m, GPtrArray *events, unsigned step_ms);
void demo_free(Demo *d);
/* Starts once the manager is connected; call from the connection callback. */
void demo_start(Demo *d);
/* 0 while running or when all went well, else the number of events that failed. */
unsigned demo_failures(const Demo *d);
