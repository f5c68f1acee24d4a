/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * g_autoptr() for libevent's loop: g_autoptr(event_base) base = event_base_new(). libevent names it
 * struct event_base; the typedef gives g_autoptr() the one-word name it needs.
 */

#include <event2/event.h>
#include <glib.h>

typedef struct event_base event_base;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(event_base, event_base_free)
