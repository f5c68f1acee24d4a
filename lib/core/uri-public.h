/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/*
 * What a libvirt connection URI shows to every local user (the URI property, GetStatus, the unit's
 * STATUS=): the scheme, host, port and path, without the user name and password of its authority and
 * without its query and fragment (keyfile=, pkipath=, known_hosts= name files and users on the host).
 * qemu+ssh://alice@kvm1:2222/system?keyfile=/root/.ssh/id becomes qemu+ssh://kvm1:2222/system. The log,
 * readable by the administrator only, keeps the whole URI.
 */

/* A newly allocated copy; NULL for NULL. */
char *uri_public(const char *uri);
/* The same, with "...@" where a user name was left out and "?..." where a query or fragment was, for
 * messages that compare two URIs: qemu:///system?socket=/x becomes qemu:///system?..., which a reader
 * does not take for qemu:///system. */
char *uri_public_marked(const char *uri);
/* Whether GLib splits uri as a URI (RFC 3986): one that does not (a password with an unescaped '?', '#' or
 * '/') is no URI libvirt takes either, and its public form would be its scheme alone. */
bool uri_splits(const char *uri);
