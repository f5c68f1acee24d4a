/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "http-server.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <glib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "peer-owner.h"
#include "resolve.h"

/* An IPv6 address and "/64", or "uid N" (peer_of()). */
#define PEER_MAX (INET6_ADDRSTRLEN + 4)

typedef struct HttpConn {
        HttpServer *server;
        struct bufferevent *bev;
        struct event *deadline;
        GList link; /* in server->conns, oldest first */
        bool answering;
        bool lingering;      /* answered, its end shut, what it still sends read and dropped (linger()) */
        size_t dropped;      /* bytes dropped so */
        size_t skipped;      /* empty lines before the request line, in bytes: part of the request */
        char peer[PEER_MAX]; /* who the client is (peer_of()) */
} HttpConn;

struct HttpServer {
        struct event_base *base;
        struct evconnlistener *listener;
        struct event *resume, *next_turn;
        HttpResource resource;
        char *path;
        char *content_type;
        unsigned max_connections, accepts_per_turn, accepted_this_turn;
        bool paused; /* after an accept() failure */
        GQueue conns;
        char *body;       /* the last body rendered */
        gint64 body_usec; /* when, on the monotonic clock */
        gint64 last_log_usec;
        bool logged;
        unsigned failures, unlogged_failures;
};

static void conn_free(HttpConn *c)
{
        g_queue_unlink(&c->server->conns, &c->link);
        event_free(c->deadline);
        bufferevent_free(c->bev);
        g_free(c);
}

/* The answer: its head, and its body unless head_only (HEAD: the head GET would have, Content-Length too).
 */
static void respond_to(HttpConn *c, int status, const char *reason, const char *content_type,
                       const char *body, bool head_only)
{
        struct evbuffer *out = bufferevent_get_output(c->bev);
        struct timeval write_tv = {.tv_sec = HTTP_WRITE_TIMEOUT_SEC};
        size_t len = strlen(body);

        c->answering = true;
        /* the whole answer within HTTP_WRITE_TIMEOUT_SEC: the write timeout alone only sees a reader that
         * stalls, not one that takes a few bytes now and then to keep its connection */
        evtimer_add(c->deadline, &write_tv);
        bufferevent_disable(c->bev, EV_READ);
        evbuffer_add_printf(
            out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
            status, reason, content_type, len, status == 405 ? "Allow: GET, HEAD\r\n" : "");
        if (!head_only)
                evbuffer_add(out, body, len);
        bufferevent_enable(c->bev, EV_WRITE);
}

/* An error, its body left out for HEAD (RFC 9110, 9.3.2: no content in any answer to HEAD). */
static void respond_error_to(HttpConn *c, int status, const char *reason, bool head_only)
{
        g_autofree char *body = g_strdup_printf("%d %s\n", status, reason);
        respond_to(c, status, reason, "text/plain", body, head_only);
}

static void respond_error(HttpConn *c, int status, const char *reason)
{
        respond_error_to(c, status, reason, false);
}

/* The path of a request target: origin-form (/metrics?x) as it is, absolute-form (http://host:9464/metrics,
 * which RFC 9112 asks servers to accept, as proxies send it) from the slash after its authority. */
static const char *target_path(const char *target)
{
        const char *after = NULL;

        if (g_ascii_strncasecmp(target, "http://", 7) == 0)
                after = target + 7;
        else if (g_ascii_strncasecmp(target, "https://", 8) == 0)
                after = target + 8;
        if (!after)
                return target;
        after += strcspn(after, "/?");
        return *after == '/' ? after : "/"; /* no path: the root, as an empty origin-form path is */
}

/* The resource's body: the last one while younger than max_age_ms, else rendered now. */
static const char *current_body(HttpServer *s)
{
        const HttpResource *r = &s->resource;
        gint64 now = g_get_monotonic_time();

        if (!s->body || now - s->body_usec >= (gint64)r->max_age_ms * 1000) {
                g_free(s->body);
                s->body = r->render(r->userdata);
                s->body_usec = now;
        }
        return s->body;
}

/* Answers a complete request head: "METHOD TARGET HTTP/1.x", then headers (ignored). */
static void answer(HttpConn *c, const char *request_line)
{
        const HttpResource *r = &c->server->resource;
        g_auto(GStrv) words = g_strsplit(request_line, " ", -1);
        const char *path;
        size_t path_len;
        bool head_only;

        if (g_strv_length(words) != 3 ||
            (strcmp(words[2], "HTTP/1.0") != 0 && strcmp(words[2], "HTTP/1.1") != 0)) {
                respond_error(c, 400, "Bad Request");
                return;
        }
        head_only = strcmp(words[0], "HEAD") == 0;
        if (strcmp(words[0], "GET") != 0 && !head_only) {
                respond_error(c, 405, "Method Not Allowed");
                return;
        }
        path = target_path(words[1]);
        path_len = strcspn(path, "?");
        if (path_len != strlen(r->path) || strncmp(path, r->path, path_len) != 0) {
                respond_error_to(c, 404, "Not Found", head_only);
                return;
        }
        respond_to(c, 200, "OK", r->content_type, current_body(c->server), head_only);
}

static void on_read(struct bufferevent *bev, void *arg)
{
        HttpConn *c = arg;
        struct evbuffer *in = bufferevent_get_input(bev);
        struct evbuffer_ptr end, lf;
        g_autofree char *line = NULL;
        size_t len = 0, room;

        if (c->lingering) {
                c->dropped += evbuffer_get_length(in);
                evbuffer_drain(in, evbuffer_get_length(in));
                if (c->dropped > HTTP_LINGER_MAX)
                        conn_free(c);
                return;
        }
        if (c->answering)
                return;
        /* empty lines before the request line are ignored (RFC 9112, 2.2), but count towards its size: a
         * client sending nothing else would keep its connection, and the loop reading, until the timeout */
        while (evbuffer_get_length(in) > 0 && c->skipped <= HTTP_REQUEST_MAX) {
                unsigned char *first = evbuffer_pullup(in, 1);
                if (*first != '\r' && *first != '\n')
                        break;
                evbuffer_drain(in, 1);
                c->skipped++;
        }
        room = HTTP_REQUEST_MAX - MIN(c->skipped, HTTP_REQUEST_MAX);
        /* the head ends at an empty line; a line ends in CRLF or a bare LF (RFC 9112, 2.2) */
        end = evbuffer_search(in, "\n\r\n", 3, NULL);
        lf = evbuffer_search(in, "\n\n", 2, NULL);
        if (end.pos < 0 || (lf.pos >= 0 && lf.pos < end.pos))
                end = lf;
        if (c->skipped > HTTP_REQUEST_MAX || end.pos < 0 || (size_t)end.pos > room) {
                if (c->skipped > HTTP_REQUEST_MAX || evbuffer_get_length(in) > room)
                        respond_error(c, 431, "Request Header Fields Too Large");
                return;
        }
        line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF);
        if (!line || strlen(line) != len || !g_utf8_validate(line, -1, NULL)) /* a NUL ends no request */
                respond_error(c, 400, "Bad Request");
        else
                answer(c, line);
}

/*
 * The answer is out, but the client sent more than the server read (a head over the limit, a body): a
 * socket closed with unread input resets the connection, and a reset can take the answer's last bytes
 * with it before the client reads them. Its sending end shut instead, the connection ends once the client
 * closes its own, what it still sends dropped, within HTTP_LINGER_SEC and HTTP_LINGER_MAX bytes. Returns
 * whether it lingers.
 */
static bool linger(HttpConn *c)
{
        evutil_socket_t fd = bufferevent_getfd(c->bev);
        struct timeval linger_tv = {.tv_sec = HTTP_LINGER_SEC};
        int unread = 0;

        if (fd < 0 || ioctl(fd, FIONREAD, &unread) < 0 || unread <= 0 || shutdown(fd, SHUT_WR) < 0)
                return false;
        c->lingering = true;
        evtimer_add(c->deadline, &linger_tv);
        bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
        bufferevent_set_timeouts(c->bev, &linger_tv, NULL);
        bufferevent_disable(c->bev, EV_WRITE);
        bufferevent_enable(c->bev, EV_READ);
        return true;
}

static void on_write(struct bufferevent *bev, void *arg)
{
        HttpConn *c = arg;
        if (c->answering && !c->lingering && evbuffer_get_length(bufferevent_get_output(bev)) == 0 &&
            !linger(c))
                conn_free(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
        (void)bev;
        (void)what; /* end of file, error or timeout: in every case the connection is done */
        conn_free(arg);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        conn_free(arg);
}

/* Closes the oldest connection of the client that holds the most (answering or not; peer_of()): the
 * oldest still sending its request, else its oldest answer. A crowd from one client evicts its own before
 * anyone else's: a scraper on another host, between its connection and its request, is not pushed out by a
 * local flood, nor by slow readers taking their answers a few bytes at a time. */
static bool make_room(HttpServer *s)
{
        g_autoptr(GHashTable) count = NULL;
        const char *most = NULL;
        HttpConn *oldest_answer = NULL;
        unsigned best = 0;

        if (s->conns.length < s->max_connections)
                return true;
        count = g_hash_table_new(g_str_hash, g_str_equal);
        for (GList *l = s->conns.head; l; l = l->next) {
                HttpConn *c = l->data;
                unsigned n = GPOINTER_TO_UINT(g_hash_table_lookup(count, c->peer)) + 1;
                g_hash_table_insert(count, c->peer, GUINT_TO_POINTER(n));
                if (n > best) {
                        best = n;
                        most = c->peer;
                }
        }
        for (GList *l = s->conns.head; most && l; l = l->next) {
                HttpConn *c = l->data;
                if (strcmp(c->peer, most) != 0)
                        continue;
                if (!c->answering) {
                        conn_free(c);
                        return true;
                }
                if (!oldest_answer)
                        oldest_answer = c;
        }
        if (!oldest_answer)
                return false;
        conn_free(oldest_answer);
        return true;
}

/*
 * Who a client is for make_room(): on this host, the user owning its socket (peer_owner_uid()); any local
 * user may bind() a socket to any of 127.0.0.0/8's sixteen million addresses, or to any address of the
 * host, before it connects, and counted by address each of its connections had an address of its own, so
 * that the rule that a crowd evicts its own first protected no scraper. From another host: its address,
 * an IPv6 one by its /64 (IPv4-mapped ones as IPv4); "loopback" for a local one the kernel could not name
 * the owner of. "" when it is neither IPv4 nor IPv6.
 */
static void peer_of(int fd, const struct sockaddr *addr, int len, char out[PEER_MAX])
{
        struct in_addr v4;
        uid_t uid;

        out[0] = '\0';
        if (peer_owner_uid(fd, &uid)) {
                g_snprintf(out, PEER_MAX, "uid %u", (unsigned)uid);
                return;
        }
        if (addr && addr->sa_family == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
                v4 = ((const struct sockaddr_in *)addr)->sin_addr;
        } else if (addr && addr->sa_family == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
                struct in6_addr a = ((const struct sockaddr_in6 *)addr)->sin6_addr;
                if (IN6_IS_ADDR_LOOPBACK(&a)) {
                        g_strlcpy(out, "loopback", PEER_MAX);
                        return;
                }
                if (!IN6_IS_ADDR_V4MAPPED(&a)) {
                        memset(a.s6_addr + 8, 0, 8);
                        inet_ntop(AF_INET6, &a, out, INET6_ADDRSTRLEN);
                        g_strlcat(out, "/64", PEER_MAX);
                        return;
                }
                memcpy(&v4, a.s6_addr + 12, sizeof(v4));
        } else {
                return;
        }
        if ((ntohl(v4.s_addr) >> 24) == 127)
                g_strlcpy(out, "loopback", PEER_MAX);
        else
                inet_ntop(AF_INET, &v4, out, INET6_ADDRSTRLEN);
}

static void on_next_turn(evutil_socket_t fd, short what, void *arg)
{
        HttpServer *s = arg;
        (void)fd;
        (void)what;
        s->accepted_this_turn = 0;
        if (!s->paused)
                evconnlistener_enable(s->listener);
}

/* Stops accepting for the rest of this loop turn once accepts_per_turn connections came in. */
static void count_accept(HttpServer *s)
{
        struct timeval zero = {0, 0};

        if (!evtimer_pending(s->next_turn, NULL))
                evtimer_add(s->next_turn, &zero);
        if (++s->accepted_this_turn >= s->accepts_per_turn)
                evconnlistener_disable(s->listener);
}

static void on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *addr, int len,
                      void *arg)
{
        HttpServer *s = arg;
        struct timeval request_tv = {.tv_sec = HTTP_REQUEST_TIMEOUT_SEC};
        struct timeval write_tv = {.tv_sec = HTTP_WRITE_TIMEOUT_SEC};
        HttpConn *c;
        (void)listener;

        count_accept(s);
        if (!make_room(s)) {
                close(fd);
                return;
        }
        c = g_new0(HttpConn, 1);
        peer_of(fd, addr, len, c->peer);
        c->server = s;
        c->link.data = c;
        c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
        c->deadline = evtimer_new(s->base, on_deadline, c);
        if (!c->bev || !c->deadline) {
                if (c->bev)
                        bufferevent_free(c->bev);
                else
                        close(fd);
                if (c->deadline)
                        event_free(c->deadline);
                g_free(c);
                return;
        }
        g_queue_push_tail_link(&s->conns, &c->link);
        bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
        bufferevent_setwatermark(c->bev, EV_READ, 0, HTTP_REQUEST_MAX + 1);
        bufferevent_set_timeouts(c->bev, &request_tv, &write_tv);
        evtimer_add(c->deadline, &request_tv);
        bufferevent_enable(c->bev, EV_READ);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
        HttpServer *s = arg;
        (void)fd;
        (void)what;
        s->paused = false;
        evconnlistener_enable(s->listener);
}

/* accept() failed for a reason other than a client that gave up: pause, and say so now and then. */
static void on_accept_error(struct evconnlistener *listener, void *arg)
{
        HttpServer *s = arg;
        int err = EVUTIL_SOCKET_ERROR();
        gint64 now = g_get_monotonic_time();

        s->failures++;
        s->paused = true;
        evconnlistener_disable(listener);
        evtimer_add(s->resume, &(struct timeval){.tv_sec = HTTP_PAUSE_SEC});
        if (s->logged && now - s->last_log_usec < HTTP_LOG_INTERVAL_SEC * G_USEC_PER_SEC) {
                s->unlogged_failures++;
                return;
        }
        if (s->unlogged_failures)
                log_warning(
                    "Cannot accept metrics connections: %s; pausing for %d s (%u more failures since the "
                    "last message)",
                    g_strerror(err), HTTP_PAUSE_SEC, s->unlogged_failures);
        else
                log_warning("Cannot accept metrics connections: %s; pausing for %d s", g_strerror(err),
                            HTTP_PAUSE_SEC);
        s->logged = true;
        s->last_log_usec = now;
        s->unlogged_failures = 0;
}

static struct evconnlistener *listen_on_host(HttpServer *s, const char *host, unsigned port,
                                             char **ret_error)
{
        struct addrinfo hints = {
            .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_ADDRCONFIG};
        struct addrinfo *ai = NULL;
        struct evconnlistener *l;
        char service[8];
        int r, timed_out;

        snprintf(service, sizeof(service), "%u", port);
        /* on the loop: a name server that does not answer holds it RESOLVE_TIMEOUT_MS at most */
        r = resolve_bounded(host, service, &hints, RESOLVE_TIMEOUT_MS, &ai, &timed_out);
        if (r != 0) {
                if (timed_out)
                        *ret_error =
                            g_strdup_printf("cannot resolve %s: no answer from the name server within %u ms",
                                            host, RESOLVE_TIMEOUT_MS);
                else
                        *ret_error = g_strdup_printf("cannot resolve %s: %s", host, gai_strerror(r));
                errno = r == EAI_AGAIN ? EAGAIN : ENXIO; /* a name server not reached yet, or no such name */
                return NULL;
        }
        l = evconnlistener_new_bind(s->base, on_accept, s,
                                    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, 128,
                                    ai->ai_addr, (int)ai->ai_addrlen);
        if (!l) {
                int err = errno;
                *ret_error = g_strdup_printf("cannot listen on %s port %u: %s", host, port, g_strerror(err));
                freeaddrinfo(ai);
                errno = err;
                return NULL;
        }
        freeaddrinfo(ai);
        return l;
}

/* An empty host is every address: [::], which takes IPv4 too unless the host set bindv6only, and 0.0.0.0
 * where there is no IPv6. Only the want of IPv6 falls back: a port [::] cannot have (held by a listener
 * on [::1], say) is an error, not IPv4 alone served under the name of every address. */
static struct evconnlistener *listen_on(HttpServer *s, const char *host, unsigned port, char **ret_error)
{
        struct evconnlistener *l;

        if (*host)
                return listen_on_host(s, host, port, ret_error);
        l = listen_on_host(s, "::", port, ret_error);
        if (!l && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL || errno == ENXIO)) {
                g_clear_pointer(ret_error, g_free);
                l = listen_on_host(s, "0.0.0.0", port, ret_error);
        }
        return l;
}

HttpServer *http_server_new(struct event_base *base, const char *host, unsigned port,
                            unsigned max_connections, const HttpResource *resource, char **ret_error)
{
        HttpServer *s = g_new0(HttpServer, 1);

        s->base = base;
        s->max_connections = MAX(max_connections, 1u);
        s->accepts_per_turn = MAX(s->max_connections / 4, 1u);
        s->path = g_strdup(resource->path);
        s->content_type = g_strdup(resource->content_type);
        s->resource = *resource;
        s->resource.path = s->path;
        s->resource.content_type = s->content_type;
        g_queue_init(&s->conns);
        s->resume = evtimer_new(base, on_resume, s);
        s->next_turn = evtimer_new(base, on_next_turn, s);
        s->listener = listen_on(s, host, port, ret_error);
        if (!s->listener) {
                int err = errno;
                http_server_free(s);
                errno = err;
                return NULL;
        }
        evconnlistener_set_error_cb(s->listener, on_accept_error);
        return s;
}

void http_server_free(HttpServer *s)
{
        if (!s)
                return;
        while (s->conns.head)
                conn_free(s->conns.head->data);
        if (s->listener)
                evconnlistener_free(s->listener);
        event_free(s->resume);
        event_free(s->next_turn);
        g_free(s->path);
        g_free(s->content_type);
        g_free(s->body);
        g_free(s);
}

unsigned http_server_connections(const HttpServer *s)
{
        return s->conns.length;
}

unsigned http_server_accept_failures(const HttpServer *s)
{
        return s->failures;
}

unsigned http_server_port(const HttpServer *s)
{
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);

        if (getsockname(evconnlistener_get_fd(s->listener), (struct sockaddr *)&ss, &len) < 0)
                return 0;
        if (ss.ss_family == AF_INET6)
                return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}
