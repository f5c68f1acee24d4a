/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * g_autoptr() for sd-bus's handles: g_autoptr(sd_bus_message) reply = NULL. Each drops one reference;
 * a connection that should send what it queued before it goes is closed with sd_bus_flush_close_unref()
 * where its owner is done with it.
 */

#include <glib.h>
#include <systemd/sd-bus.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus_message, sd_bus_message_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus_creds, sd_bus_creds_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus_slot, sd_bus_slot_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sd_bus, sd_bus_unref)
