/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <netdb.h>

/*
 * getaddrinfo() with a bound on the time it holds its caller: a host name the daemon listens on
 * ([Metrics] Listen=) is resolved on the event loop, at start, at a reload and at every retry, and a name
 * server that does not answer held the loop for the resolver's whole timeout (10 s with glibc's defaults:
 * 5 s, two attempts), D-Bus and placements with it. A numeric host is read at once. Otherwise the lookup
 * runs in a thread of its own; when it has not answered within timeout_ms the caller gets EAI_AGAIN (as
 * from a name server not reached) and the thread finishes alone. At most RESOLVE_MAX_PENDING such threads
 * run at once: beyond that, EAI_AGAIN at once.
 */

#define RESOLVE_TIMEOUT_MS  1000u
#define RESOLVE_MAX_PENDING 4

/* As getaddrinfo(): 0 with *ret (freeaddrinfo()), else an EAI_ code; *ret_timed_out says whether the
 * EAI_AGAIN was the bound's. */
int resolve_bounded(const char *host, const char *service, const struct addrinfo *hints, unsigned timeout_ms,
                    struct addrinfo **ret, int *ret_timed_out);
