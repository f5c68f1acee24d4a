/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * g_autoptr() for sd-bus's handles: g_autoptr(sd_bus_message) reply = NULL. An sd_bus is flushed and
 * closed as it goes (sd_bus_flush_close_unref), so what was queued on it is sent.
 */

#include <glib.h>
#include <systemd/sd-bus.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus_message, sd_bus_message_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus_creds, sd_bus_creds_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus, sd_bus_flush_close_unref)
