/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who is at the other end of a TCP connection when it is this host: the user owning the client's socket,
 * asked of the kernel with one exact sock_diag lookup (what ss(8) reads). Local users can bind a
 * socket to any of 127.0.0.0/8's addresses, or to any address the host has, before they connect: their
 * address says nothing about who they are, their socket's owner does.
 */

#include <stdbool.h>
#include <sys/types.h>

/* Whether the connected TCP socket fd's peer is a socket of this host, with its owner in *ret_uid. False
 * for a peer on another host, and when the kernel cannot say (no sock_diag, as under a
 * RestrictAddressFamilies= without AF_NETLINK). */
bool peer_owner_uid(int fd, uid_t *ret_uid);
