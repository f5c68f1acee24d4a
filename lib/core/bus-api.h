/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The names of the D-Bus API, shared by the daemon that serves it and placementctl that calls it:
 * the well-known bus name, the object path, the interface, the polkit action and every error name a
 * method can reply with. docs/dbus-api.md and docs/org.placementd1.xml describe what they mean.
 */

#define BUS_NAME      "org.placementd1"
#define BUS_PATH      "/org/placementd1"
#define BUS_INTERFACE "org.placementd1.Manager"

#define BUS_POLKIT_ACTION_MANAGE "org.placementd1.manage"

#define BUS_ERROR_NO_SUCH_DOMAIN   "org.placementd1.Error.NoSuchDomain"
#define BUS_ERROR_INVALID_ARGUMENT "org.placementd1.Error.InvalidArgument"
#define BUS_ERROR_NOT_CONNECTED    "org.placementd1.Error.NotConnected"
#define BUS_ERROR_NOT_PERMITTED    "org.placementd1.Error.NotPermitted"
#define BUS_ERROR_LIMIT_EXCEEDED   "org.placementd1.Error.LimitExceeded"
#define BUS_ERROR_FAILED           "org.placementd1.Error.Failed"
