/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* g_autoptr() for libvirt's handles: g_autoptr(virDomain) dom = virDomainLookupByName(...). */

#include <glib.h>
#include <libvirt/libvirt.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(virDomain, virDomainFree)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(virConnect, virConnectClose)
