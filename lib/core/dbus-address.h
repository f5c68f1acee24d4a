/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The syntax of a D-Bus server address (the D-Bus specification's "Server Addresses"): one or more
 * TRANSPORT:KEY=VALUE,KEY=VALUE entries separated by ';', such as unix:path=/run/dbus/system_bus_socket.
 * Checked before an address is used, so a typo is a usage error rather than a connection refused.
 */

#include <stdbool.h>

bool dbus_address_valid(const char *address);
