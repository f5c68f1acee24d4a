/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-event.h"

#include <event2/event.h>
#include <glib.h>
#include <poll.h>
#include <stdbool.h>
#include <time.h>

struct BusEvent {
        sd_bus *bus;
        struct event_base *base;
        struct event *io, *timer, *kick;
        short io_events; /* what io is armed for */
        void (*on_closed)(void *);
        void *userdata;
        bool closed;
};

static void rearm(BusEvent *b);

/* Processes at most BUS_EVENT_BATCH messages, then lets the loop run its other events (timers, signals,
 * libvirt) before the next batch: a client that keeps the queue full cannot hold the loop. */
static void dispatch(BusEvent *b)
{
        unsigned n = 0;
        int r;

        if (b->closed)
                return;
        do {
                r = sd_bus_process(b->bus, NULL);
        } while (r > 0 && ++n < BUS_EVENT_BATCH);
        if (r < 0 || !sd_bus_is_open(b->bus)) {
                b->closed = true;
                event_del(b->io);
                event_del(b->timer);
                if (b->on_closed)
                        b->on_closed(b->userdata);
                return;
        }
        if (r > 0)
                bus_event_kick(b); /* more may be waiting: continue on the next loop turn */
        rearm(b);
}

static void on_io(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        dispatch(arg);
}

static void rearm(BusEvent *b)
{
        int events = sd_bus_get_events(b->bus);
        uint64_t until = UINT64_MAX;
        short want = 0;

        if (events < 0)
                return;
        if (events & POLLIN)
                want |= EV_READ;
        if (events & POLLOUT)
                want |= EV_WRITE;
        if (want != b->io_events) {
                event_del(b->io);
                event_assign(b->io, b->base, sd_bus_get_fd(b->bus), want | EV_PERSIST, on_io, b);
                if (want)
                        event_add(b->io, NULL);
                b->io_events = want;
        }
        event_del(b->timer);
        if (sd_bus_get_timeout(b->bus, &until) >= 0 && until != UINT64_MAX) {
                struct timespec ts;
                uint64_t now, delay;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
                delay = until > now ? until - now : 0;
                event_add(b->timer, &(struct timeval){.tv_sec = (time_t)(delay / 1000000),
                                                      .tv_usec = (suseconds_t)(delay % 1000000)});
        }
}

BusEvent *bus_event_attach(sd_bus *bus, struct event_base *base, void (*on_closed)(void *userdata),
                           void *userdata)
{
        BusEvent *b = g_new0(BusEvent, 1);

        b->bus = sd_bus_ref(bus);
        b->base = base;
        b->on_closed = on_closed;
        b->userdata = userdata;
        b->io = event_new(base, sd_bus_get_fd(bus), 0, on_io, b);
        b->timer = evtimer_new(base, on_io, b);
        b->kick = evtimer_new(base, on_io, b);
        if (!b->io || !b->timer || !b->kick) {
                bus_event_detach(b);
                return NULL;
        }
        bus_event_kick(b);
        return b;
}

void bus_event_detach(BusEvent *b)
{
        if (!b)
                return;
        if (b->io)
                event_free(b->io);
        if (b->timer)
                event_free(b->timer);
        if (b->kick)
                event_free(b->kick);
        sd_bus_unref(b->bus);
        g_free(b);
}

void bus_event_kick(BusEvent *b)
{
        if (b && !b->closed)
                event_add(b->kick, &(struct timeval){0, 0});
}
