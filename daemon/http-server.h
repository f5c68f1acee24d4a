/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A small HTTP/1.1 server for one resource, GET only, on libevent's listener and bufferevents. It
 * replaces evhttp, which in libevent 2.1 can neither cap its connections nor pause accept(): clients of
 * a metrics port may be hostile, and every descriptor they hold is one libvirt and D-Bus lack.
 * - At most max_connections at once; a new client evicts a connection of the client that holds the most
 *   (a flood from one client evicts its own first; a client on this host is its socket's owner, one on
 *   another host its address): its oldest that has not finished sending its
 *   request, else its oldest answer (a slow client or slow reader cannot keep a fresh scrape out).
 *   At most a quarter of max_connections are accepted per turn of the loop, so that a client accepted
 *   in one turn has its request read before newcomers could evict it, and so that a crowd at the door
 *   cannot hold the loop.
 * - A request must be complete within HTTP_REQUEST_TIMEOUT_SEC of the connection and hold at most
 *   HTTP_REQUEST_MAX bytes; the whole answer must be taken within HTTP_WRITE_TIMEOUT_SEC. Every connection
 *   is closed after its answer; one whose client sent more than was read is shut first, what it still
 *   sends dropped until it closes, for at most HTTP_LINGER_SEC and HTTP_LINGER_MAX bytes (a reset could
 *   take the answer with it).
 * - A body rendered less than the resource's max_age_ms ago is served again instead of being rendered
 *   anew: however many clients scrape, the resource is rendered at most once per max_age_ms.
 * - When accept() fails for want of descriptors or memory, accepting pauses for HTTP_PAUSE_SEC; the
 *   failure is logged at most once per HTTP_LOG_INTERVAL_SEC, with the number of failures in between.
 */

#include <event2/event.h>

#define HTTP_REQUEST_TIMEOUT_SEC 5
#define HTTP_WRITE_TIMEOUT_SEC   10
#define HTTP_REQUEST_MAX         8192u
#define HTTP_PAUSE_SEC           1
#define HTTP_LOG_INTERVAL_SEC    60
#define HTTP_LINGER_SEC          2
#define HTTP_LINGER_MAX          (64u * 1024)

typedef struct HttpServer HttpServer;

/* The body for a GET of the server's path; the server frees it. */
typedef char *(*HttpRender)(void *userdata);

typedef struct HttpResource {
        const char *path;         /* "/metrics" */
        const char *content_type; /* of the body */
        HttpRender render;
        void *userdata;
        unsigned max_age_ms; /* a rendered body is served again for this long (0: rendered every time) */
} HttpResource;

/* Listens on host:port. Returns NULL with *ret_error set when it cannot, and errno saying why: the
 * socket's (EADDRINUSE, EADDRNOTAVAIL, EAFNOSUPPORT, EACCES, EINVAL...), EAGAIN when host could not be
 * resolved yet, ENXIO when it names nothing. */
HttpServer *http_server_new(struct event_base *base, const char *host, unsigned port,
                            unsigned max_connections, const HttpResource *resource, char **ret_error);
void http_server_free(HttpServer *s);
/* Connections open now. */
unsigned http_server_connections(const HttpServer *s);
/* Times accept() failed for want of a resource, logged or not. */
unsigned http_server_accept_failures(const HttpServer *s);
/* The port listened on (the one the system chose when asked for port 0). */
unsigned http_server_port(const HttpServer *s);
