/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Runs an sd-bus connection on a libevent event_base: one watch on sd_bus_get_fd() with the events
 * sd_bus_get_events() asks for, one timer for sd_bus_get_timeout(). One loop turn processes at most
 * BUS_EVENT_BATCH messages; when more are waiting, it continues on the next turn (a zero timeout), so
 * timers, signals and libvirt events run in between however fast clients send. Messages sent from outside a
 * bus callback (signals from libvirt events) are flushed after bus_event_kick(). When the connection closes,
 * on_closed runs (from a clean stack).
 */

#include <systemd/sd-bus.h>

/* Messages processed per loop turn. */
#define BUS_EVENT_BATCH 16u

struct event_base;
typedef struct BusEvent BusEvent;

/* Returns NULL on allocation failure. Takes a reference on bus. */
BusEvent *bus_event_attach(sd_bus *bus, struct event_base *base, void (*on_closed)(void *userdata),
                           void *userdata);
/* Detaches and drops the reference. NULL is fine. */
void bus_event_detach(BusEvent *b);
/* Processes and flushes soon (from the loop). */
void bus_event_kick(BusEvent *b);
