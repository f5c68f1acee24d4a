/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http-server: the answers, the connection cap with eviction of the oldest unfinished request, and the
 * pause of accept() when the process has no descriptor left. Real sockets on 127.0.0.1, one loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <glib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http-server.h"
#include "test-util.h"

#define FULL_REQUEST "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

typedef struct Fixture {
        struct event_base *base;
        HttpServer *http;
        unsigned port;
} Fixture;

static size_t big_body; /* when set, the size of every answer's body */

static char *render(void *userdata)
{
        (void)userdata;
        return big_body ? g_strnfill(big_body, 'x') : g_strdup("answer 1\n");
}

static void fixture_init_on(Fixture *f, const char *host, unsigned max_connections)
{
        g_autofree char *error = NULL;

        f->base = event_base_new();
        f->http = http_server_new(
            f->base, host, 0, max_connections,
            &(HttpResource){.path = "/metrics", .content_type = "text/plain", .render = render}, &error);
        ck_assert_msg(f->http != NULL, "%s", error);
        f->port = http_server_port(f->http);
        ck_assert_uint_gt(f->port, 0);
}

static void fixture_init(Fixture *f, unsigned max_connections)
{
        fixture_init_on(f, "127.0.0.1", max_connections);
}

static void fixture_done(Fixture *f)
{
        http_server_free(f->http);
        event_base_free(f->base);
}

static int client(const Fixture *f, const char *request)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        if (request)
                ck_assert_int_eq(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
        return fd;
}

/* Runs the loop for about ms milliseconds. */
static void pump(Fixture *f, unsigned ms)
{
        struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
        event_base_loopexit(f->base, &tv);
        event_base_dispatch(f->base);
}

/* Runs the loop until fd has the whole answer (the server closed it), at most 5 s, appending it to out;
 * returns how the connection ended: 0 when the server closed it in order (FIN), else the errno of the
 * read that failed (ECONNRESET when it reset the connection). */
static int ending_of(Fixture *f, int fd, GString *out)
{
        for (unsigned i = 0; i < 500; i++) {
                char buf[4096];
                ssize_t n;
                pump(f, 10);
                while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
                        g_string_append_len(out, buf, n);
                if (n == 0)
                        return 0;
                if (errno != EAGAIN)
                        return errno;
        }
        return ETIMEDOUT;
}

/* Runs the loop until fd has the whole answer (the server closed it), at most 5 s; returns it. */
static char *answer_of(Fixture *f, int fd)
{
        GString *out = g_string_new(NULL);

        ending_of(f, fd, out);
        close(fd);
        return g_string_free(out, FALSE);
}

static bool closed_by_server(int fd)
{
        char c;
        return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

/* Listen=:PORT: every address, IPv4 loopback included (and IPv6's where the host has it) */
START_TEST(test_every_address)
{
        Fixture f;
        g_autofree char *ok = NULL;
        int fd6;

        fixture_init_on(&f, "", 4);
        ok = answer_of(&f, client(&f, FULL_REQUEST));
        ck_assert_msg(g_str_has_prefix(ok, "HTTP/1.1 200 OK\r\n"), "%s", ok);
        fd6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd6 >= 0) {
                struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
                struct sockaddr_in6 sa = {.sin6_family = AF_INET6,
                                          .sin6_port = htons((uint16_t)f.port),
                                          .sin6_addr = IN6ADDR_LOOPBACK_INIT};
                /* where ::1 exists here, the server answers there too */
                if (bind(fd6, (struct sockaddr *)&any, sizeof(any)) == 0) {
                        g_autofree char *ok6 = NULL;
                        ck_assert_msg(connect(fd6, (struct sockaddr *)&sa, sizeof(sa)) == 0, "[::1]: %s",
                                      g_strerror(errno));
                        ck_assert_int_eq(send(fd6, FULL_REQUEST, strlen(FULL_REQUEST), 0),
                                         (ssize_t)strlen(FULL_REQUEST));
                        ok6 = answer_of(&f, fd6);
                        ck_assert_msg(g_str_has_prefix(ok6, "HTTP/1.1 200 OK\r\n"), "%s", ok6);
                } else {
                        close(fd6);
                }
        }
        fixture_done(&f);
}
END_TEST

/* Listen=:PORT while [::1] holds the port (a reload from [::1]:PORT): an error, as for any port taken,
 * not IPv4 alone served under the name of every address. */
START_TEST(test_every_address_not_half)
{
        struct sockaddr_in6 lo = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_autofree char *error = NULL;
        HttpServer *all;
        Fixture f;

        if (probe < 0 || bind(probe, (struct sockaddr *)&lo, sizeof(lo)) < 0) {
                if (probe >= 0)
                        close(probe);
                return; /* no IPv6 loopback here */
        }
        close(probe);
        fixture_init_on(&f, "::1", 4);
        all = http_server_new(
            f.base, "", f.port, 4,
            &(HttpResource){.path = "/metrics", .content_type = "text/plain", .render = render}, &error);
        ck_assert_msg(all == NULL, "every address on port %u served while [::1] holds it", f.port);
        ck_assert_int_eq(errno, EADDRINUSE);
        ck_assert_msg(strstr(error, "Address already in use"), "%s", error);
        fixture_done(&f);
}
END_TEST

START_TEST(test_answers)
{
        Fixture f;
        g_autofree char *ok = NULL, *missing = NULL, *post = NULL, *bad = NULL, *huge = NULL;
        g_autofree char *big = g_strnfill(HTTP_REQUEST_MAX + 100, 'a');
        g_autofree char *big_request = g_strdup_printf("GET /metrics HTTP/1.1\r\nX: %s\r\n\r\n", big);

        fixture_init(&f, 8);
        ok = answer_of(&f, client(&f, FULL_REQUEST));
        ck_assert_msg(g_str_has_prefix(ok, "HTTP/1.1 200 OK\r\n"), "%s", ok);
        ck_assert_ptr_nonnull(strstr(ok, "Content-Type: text/plain\r\n"));
        ck_assert_ptr_nonnull(strstr(ok, "Content-Length: 9\r\n"));
        ck_assert(g_str_has_suffix(ok, "\r\n\r\nanswer 1\n"));
        missing = answer_of(&f, client(&f, "GET /other HTTP/1.1\r\n\r\n"));
        ck_assert_msg(g_str_has_prefix(missing, "HTTP/1.1 404 "), "%s", missing);
        /* RFC 9112: the absolute form of the target is accepted, and empty lines before the request */
        for (unsigned i = 0; i < 6; i++) {
                static const char *const requests[] = {
                    "GET http://localhost:9464/metrics HTTP/1.1\r\n\r\n",
                    "GET HTTP://[::1]:9464/metrics?x=1 HTTP/1.1\r\n\r\n",
                    "\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                    "\nGET /metrics HTTP/1.0\n\n",
                    "GET /metrics HTTP/1.1\n\r\n",
                    "GET /metrics HTTP/1.1\r\nHost: x\n\r\n",
                };
                g_autofree char *answer = answer_of(&f, client(&f, requests[i]));
                ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 200 OK\r\n"), "%u: %s", i, answer);
        }
        {
                g_autofree char *other =
                    answer_of(&f, client(&f, "GET http://localhost:9464/other HTTP/1.1\r\n\r\n"));
                g_autofree char *root =
                    answer_of(&f, client(&f, "GET http://localhost:9464 HTTP/1.1\r\n\r\n"));
                ck_assert_msg(g_str_has_prefix(other, "HTTP/1.1 404 "), "%s", other);
                ck_assert_msg(g_str_has_prefix(root, "HTTP/1.1 404 "), "%s", root);
        }
        post = answer_of(&f, client(&f, "POST /metrics HTTP/1.1\r\n\r\n"));
        ck_assert_msg(g_str_has_prefix(post, "HTTP/1.1 405 ") && strstr(post, "Allow: GET, HEAD\r\n"), "%s",
                      post);
        {
                /* HEAD: GET's head (its Content-Length too), without the body */
                g_autofree char *head = answer_of(&f, client(&f, "HEAD /metrics HTTP/1.1\r\n\r\n"));
                ck_assert_msg(g_str_has_prefix(head, "HTTP/1.1 200 OK\r\n") &&
                                  strstr(head, "Content-Length: 9\r\n") &&
                                  g_str_has_suffix(head, "\r\n\r\n"),
                              "%s", head);
        }
        bad = answer_of(&f, client(&f, "hello\r\n\r\n"));
        ck_assert_msg(g_str_has_prefix(bad, "HTTP/1.1 400 "), "%s", bad);
        huge = answer_of(&f, client(&f, big_request));
        ck_assert_msg(g_str_has_prefix(huge, "HTTP/1.1 431 "), "%s", huge);
        /* only HTTP/1.0 and HTTP/1.1, and no NUL inside the request line */
        for (unsigned i = 0; i < 3; i++) {
                static const char *const versions[] = {"HTTP/1.1garbage", "HTTP/1.2", "HTTP/1."};
                g_autofree char *request = g_strdup_printf("GET /metrics %s\r\n\r\n", versions[i]);
                g_autofree char *answer = answer_of(&f, client(&f, request));
                ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 400 "), "%s: %s", versions[i], answer);
        }
        {
                static const char nul[] = "GET /metrics HTTP/1.1\0junk\r\n\r\n";
                int fd = client(&f, NULL);
                g_autofree char *answer = NULL;
                ck_assert_int_eq(send(fd, nul, sizeof(nul) - 1, 0), (ssize_t)(sizeof(nul) - 1));
                answer = answer_of(&f, fd);
                ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 400 "), "a NUL: %s", answer);
        }
        ck_assert_uint_eq(http_server_connections(f.http), 0);
        fixture_done(&f);
}
END_TEST

/* Empty lines before the request line count towards the request's size: a client that sent nothing
 * else kept its connection, the loop draining all it sent byte by byte (32 such clients, 250 MB in
 * 8 s), until the request timeout; past HTTP_REQUEST_MAX it has its 431 at once, and the empty lines
 * within it before a request are still ignored. */
START_TEST(test_empty_lines_count_towards_the_limit)
{
        Fixture f;
        g_autofree char *lines = NULL;
        g_autofree char *request = NULL;
        g_autofree char *answer = NULL, *ok = NULL;
        GString *flood = g_string_new(NULL);
        int fd;
        ssize_t sent = 0;
        gint64 start;

        fixture_init(&f, 8);
        for (unsigned i = 0; i < HTTP_REQUEST_MAX; i++)
                g_string_append(flood, "\r\n");
        fd = client(&f, NULL);
        start = g_get_monotonic_time();
        /* as much as the socket takes now: the server reads as the loop runs */
        for (unsigned i = 0; i < 50 && sent < (ssize_t)flood->len; i++) {
                ssize_t n = send(fd, flood->str + sent, flood->len - sent, MSG_DONTWAIT);
                if (n > 0)
                        sent += n;
                pump(&f, 10);
        }
        answer = answer_of(&f, fd);
        ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 431 "), "%s", answer);
        ck_assert_int_lt(g_get_monotonic_time() - start, (HTTP_REQUEST_TIMEOUT_SEC - 1) * G_USEC_PER_SEC);
        g_string_free(flood, TRUE);
        /* within the limit, they are still ignored */
        lines = g_strnfill(HTTP_REQUEST_MAX / 2 - 100, '\n');
        request = g_strdup_printf("%sGET /metrics HTTP/1.1\r\n\r\n", lines);
        ok = answer_of(&f, client(&f, request));
        ck_assert_msg(g_str_has_prefix(ok, "HTTP/1.1 200 OK\r\n"), "%s", ok);
        ck_assert_uint_eq(http_server_connections(f.http), 0);
        fixture_done(&f);
}
END_TEST

/* RFC 9110, 9.3.2: no content in any answer to HEAD, an error's too; a client reading the answer to HEAD
 * takes no body, and would read the error's as the start of the next answer. */
START_TEST(test_head_error_has_no_body)
{
        Fixture f;
        g_autofree char *missing = NULL;

        fixture_init(&f, 4);
        missing = answer_of(&f, client(&f, "HEAD /other HTTP/1.1\r\n\r\n"));
        ck_assert_msg(g_str_has_prefix(missing, "HTTP/1.1 404 ") &&
                          strstr(missing, "Content-Length: 14\r\n") && g_str_has_suffix(missing, "\r\n\r\n"),
                      "%s", missing);
        fixture_done(&f);
}
END_TEST

START_TEST(test_cap_evicts_oldest_unfinished)
{
        Fixture f;
        int slow[4];
        g_autofree char *fresh = NULL;

        fixture_init(&f, 4);
        for (unsigned i = 0; i < 4; i++) {
                slow[i] = client(&f, "GET /metrics HTTP/1.1\r\n");
                pump(&f, 20);
        }
        ck_assert_uint_eq(http_server_connections(f.http), 4);
        /* a fifth client gets in and is answered; the oldest slow one makes room */
        fresh = answer_of(&f, client(&f, FULL_REQUEST));
        ck_assert_msg(g_str_has_prefix(fresh, "HTTP/1.1 200 OK\r\n"), "%s", fresh);
        ck_assert_uint_le(http_server_connections(f.http), 4);
        ck_assert(closed_by_server(slow[0]));
        ck_assert(!closed_by_server(slow[3]));
        for (unsigned i = 0; i < 4; i++)
                close(slow[i]);
        fixture_done(&f);
}
END_TEST

/* A client behind a crowd of newcomers is not evicted before its request is read. */
START_TEST(test_fresh_client_behind_a_crowd)
{
        Fixture f;
        int slow[4], crowd[20], fresh;
        g_autofree char *answer = NULL;

        fixture_init(&f, 4);
        for (unsigned i = 0; i < 4; i++) {
                slow[i] = client(&f, "GET /metrics HTTP/1.1\r\n");
                pump(&f, 20);
        }
        /* all of these wait in the listen backlog before the server sees any of them */
        fresh = client(&f, FULL_REQUEST);
        for (unsigned i = 0; i < G_N_ELEMENTS(crowd); i++)
                crowd[i] = client(&f, "GET /metrics HTTP/1.1\r\n");
        answer = answer_of(&f, fresh);
        ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 200 OK\r\n"), "answer: '%s'", answer);
        for (unsigned i = 0; i < 4; i++)
                close(slow[i]);
        for (unsigned i = 0; i < G_N_ELEMENTS(crowd); i++)
                close(crowd[i]);
        fixture_done(&f);
}
END_TEST

/* A TCP socket created by user uid (a child process made it and passed it back): the kernel counts the
 * creator as its owner, whoever connects it. -1 when this process cannot become uid (not root). */
static int socket_of_user(uid_t uid)
{
        int pair[2], fd = -1, status;
        pid_t child;
        char byte = 0;
        union {
                struct cmsghdr h;
                char bytes[CMSG_SPACE(sizeof(int))];
        } control;
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};

        if (geteuid() != 0)
                return -1;
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                int s;
                if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0 ||
                    (s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
                        _exit(1);
                memset(&control, 0, sizeof(control));
                msg.msg_controllen = CMSG_SPACE(sizeof(int));
                CMSG_FIRSTHDR(&msg)->cmsg_level = SOL_SOCKET;
                CMSG_FIRSTHDR(&msg)->cmsg_type = SCM_RIGHTS;
                CMSG_FIRSTHDR(&msg)->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(CMSG_FIRSTHDR(&msg)), &s, sizeof(int));
                _exit(sendmsg(pair[1], &msg, 0) == 1 ? 0 : 1);
        }
        if (recvmsg(pair[0], &msg, 0) == 1 && CMSG_FIRSTHDR(&msg) &&
            CMSG_FIRSTHDR(&msg)->cmsg_type == SCM_RIGHTS)
                memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        close(pair[0]);
        close(pair[1]);
        ck_assert_msg(fd >= 0, "no socket from the child");
        return fd;
}

/* A scraper: a client of another user (nobody) on 127.0.0.2 that opens its connection and sends its
 * request only later, as a scraper on another host does (its request arrives a round trip after the
 * handshake). -1 when this process cannot make another user's socket. */
static int scraper_of_another_user(const Fixture *f)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
        struct sockaddr_in from = {.sin_family = AF_INET};
        int fd = socket_of_user(65534);

        if (fd < 0)
                return -1;
        from.sin_addr.s_addr = htonl(0x7f000002);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/* A client of this process's user bound to loopback address 127.1.0.(1 + i), before it connects. */
static int client_from_spread(const Fixture *f, unsigned i)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
        struct sockaddr_in from = {.sin_family = AF_INET};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        from.sin_addr.s_addr = htonl(0x7f010001 + i);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/* A flood of connections from one user evicts its own, not a slower scraper of another user, though each
 * of its connections comes from an address of its own (any local user may bind to any of 127.0.0.0/8). */
START_TEST(test_flood_evicts_its_own)
{
        Fixture f;
        int scraper, flood[12];
        g_autofree char *answer = NULL;

        fixture_init(&f, 4);
        scraper = scraper_of_another_user(&f);
        if (scraper < 0) {
                fixture_done(&f);
                fprintf(stderr, "# test_flood_evicts_its_own: not root, no socket of another user\n");
                return;
        }
        pump(&f, 20);
        for (unsigned i = 0; i < G_N_ELEMENTS(flood); i++) {
                flood[i] = client_from_spread(&f, i);
                pump(&f, 5);
        }
        ck_assert(!closed_by_server(scraper));
        ck_assert_int_eq(send(scraper, FULL_REQUEST, strlen(FULL_REQUEST), 0),
                         (ssize_t)strlen(FULL_REQUEST));
        answer = answer_of(&f, scraper);
        ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 200 OK\r\n"), "answer: '%s'", answer);
        ck_assert(closed_by_server(flood[0]));
        for (unsigned i = 0; i < G_N_ELEMENTS(flood); i++)
                close(flood[i]);
        fixture_done(&f);
}
END_TEST

/* Whether the server closed fd: what it had sent is read (and dropped) for up to 5 s, the loop running. */
static bool closed_after_answer(Fixture *f, int fd)
{
        char buf[1 << 16];

        for (unsigned i = 0; i < 500; i++) {
                ssize_t n;
                while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
                        ;
                if (n == 0 || errno == ECONNRESET)
                        return true;
                pump(f, 10);
        }
        return false;
}

/* A client that asked and takes its answer slowly, through a small receive buffer. */
static int slow_reader(const Fixture *f)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), small = 1024;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(send(fd, FULL_REQUEST, strlen(FULL_REQUEST), 0), (ssize_t)strlen(FULL_REQUEST));
        return fd;
}

/* Readers that take their answers a few bytes at a time hold every slot: a scraper is still answered
 * (the oldest answer of the address holding the most makes room), and none of them keeps its connection
 * past the write deadline, however steadily it trickles. */
START_TEST(test_slow_readers_do_not_keep_a_scraper_out)
{
        Fixture f;
        int slow[4], scraper;
        g_autofree char *answer = NULL;
        unsigned open_slow = 0;

        big_body = 16u << 20; /* more than the sockets' buffers hold */
        fixture_init(&f, 4);
        for (unsigned i = 0; i < G_N_ELEMENTS(slow); i++) {
                slow[i] = slow_reader(&f);
                pump(&f, 50);
        }
        ck_assert_uint_eq(http_server_connections(f.http), 4);
        scraper = scraper_of_another_user(&f);
        if (scraper < 0) { /* not root: the same user's readers and scraper are one crowd */
                scraper = client(&f, NULL);
        }
        ck_assert_int_eq(send(scraper, FULL_REQUEST, strlen(FULL_REQUEST), 0),
                         (ssize_t)strlen(FULL_REQUEST));
        answer = answer_of(&f, scraper);
        ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 200 OK\r\n"), "the scraper got '%.60s'", answer);
        ck_assert(closed_after_answer(&f, slow[0]));
        /* the others trickle: a few bytes every 200 ms, past the deadline */
        for (unsigned t = 0; t < (HTTP_WRITE_TIMEOUT_SEC + 2) * 5; t++) {
                pump(&f, 200);
                for (unsigned i = 1; i < G_N_ELEMENTS(slow); i++) {
                        char buf[64];
                        (void)!recv(slow[i], buf, sizeof(buf), MSG_DONTWAIT);
                }
        }
        for (unsigned i = 1; i < G_N_ELEMENTS(slow); i++)
                open_slow += !closed_after_answer(&f, slow[i]);
        ck_assert_msg(open_slow == 0, "%u trickling readers still connected after %u s", open_slow,
                      HTTP_WRITE_TIMEOUT_SEC + 2);
        ck_assert_uint_eq(http_server_connections(f.http), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(slow); i++)
                close(slow[i]);
        big_body = 0;
        fixture_done(&f);
}
END_TEST

/* Slow readers from one address hold every slot but one; a scraper on another address connects and has
 * not sent its request yet; one more connection from the readers' address must evict one of theirs, not
 * the scraper (the only connection still sending its request). */
START_TEST(test_slow_readers_do_not_evict_a_scraper)
{
        Fixture f;
        int slow[3], scraper, more;
        g_autofree char *answer = NULL;

        big_body = 16u << 20;
        fixture_init(&f, 4);
        for (unsigned i = 0; i < G_N_ELEMENTS(slow); i++) {
                slow[i] = slow_reader(&f);
                pump(&f, 50);
        }
        scraper = scraper_of_another_user(&f);
        if (scraper < 0) {
                for (unsigned i = 0; i < G_N_ELEMENTS(slow); i++)
                        close(slow[i]);
                big_body = 0;
                fixture_done(&f);
                fprintf(stderr,
                        "# test_slow_readers_do_not_evict_a_scraper: not root, no socket of another user\n");
                return;
        }
        pump(&f, 20);
        more = client(&f, NULL);
        pump(&f, 50);
        ck_assert(!closed_by_server(scraper));
        ck_assert_int_eq(send(scraper, FULL_REQUEST, strlen(FULL_REQUEST), 0),
                         (ssize_t)strlen(FULL_REQUEST));
        answer = answer_of(&f, scraper);
        ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 200 OK\r\n"), "the scraper got '%.60s'", answer);
        close(more);
        for (unsigned i = 0; i < G_N_ELEMENTS(slow); i++)
                close(slow[i]);
        big_body = 0;
        fixture_done(&f);
}
END_TEST

START_TEST(test_pause_when_out_of_descriptors)
{
        Fixture f;
        struct rlimit rl;
        g_autoptr(GArray) filler = g_array_new(FALSE, FALSE, sizeof(int));
        g_autofree char *answer = NULL;
        int fd, spare;

        fixture_init(&f, 8);
        fd = client(&f, FULL_REQUEST);
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(spare, 0);
        ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        rl.rlim_cur = (rlim_t)spare + 16;
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        for (int d; (d = dup(spare)) >= 0;)
                g_array_append_val(filler, d);
        ck_assert_int_eq(errno, EMFILE);

        /* accept() fails: the server pauses instead of trying again on every turn of the loop */
        pump(&f, 300);
        ck_assert_uint_eq(http_server_accept_failures(f.http), 1);
        ck_assert_uint_eq(http_server_connections(f.http), 0);

        /* descriptors back: the waiting client is served after the pause */
        for (unsigned i = 0; i < filler->len; i++)
                close(g_array_index(filler, int, i));
        answer = answer_of(&f, fd);
        ck_assert_msg(g_str_has_prefix(answer, "HTTP/1.1 200 OK\r\n"), "%s", answer);
        close(spare);
        fixture_done(&f);
}
END_TEST

static char *render_counted(void *userdata)
{
        unsigned *renders = userdata;
        return g_strdup_printf("rendering %u\n", ++*renders);
}

/* However many clients ask, a body is rendered at most once per max_age_ms, and again after it. */
START_TEST(test_body_rendered_once_per_max_age)
{
        static const unsigned max_age_ms = 300;
        g_autofree char *error = NULL;
        unsigned renders = 0;
        Fixture f = {.base = event_base_new()};
        int fds[8];

        f.http = http_server_new(f.base, "127.0.0.1", 0, 16,
                                 &(HttpResource){.path = "/metrics",
                                                 .content_type = "text/plain",
                                                 .render = render_counted,
                                                 .userdata = &renders,
                                                 .max_age_ms = max_age_ms},
                                 &error);
        ck_assert_msg(f.http != NULL, "%s", error);
        f.port = http_server_port(f.http);
        for (unsigned i = 0; i < G_N_ELEMENTS(fds); i++)
                fds[i] = client(&f, FULL_REQUEST);
        for (unsigned i = 0; i < G_N_ELEMENTS(fds); i++) {
                g_autofree char *answer = answer_of(&f, fds[i]);
                ck_assert_msg(g_str_has_suffix(answer, "\r\n\r\nrendering 1\n"), "%u: %s", i, answer);
        }
        ck_assert_uint_eq(renders, 1);
        g_usleep((max_age_ms + 50) * 1000);
        {
                g_autofree char *later = answer_of(&f, client(&f, FULL_REQUEST));
                ck_assert_msg(g_str_has_suffix(later, "\r\n\r\nrendering 2\n"), "%s", later);
        }
        ck_assert_uint_eq(renders, 2);
        fixture_done(&f);
}
END_TEST

/* A client that sent more than the request (a body, a second request, a head over the limit) gets its
 * answer and then the end of the connection, not a reset: closing a socket with unread input resets it,
 * and a reset can take the answer's last bytes with it before the client reads them. */
START_TEST(test_answer_not_reset_by_unread_input)
{
        Fixture f;
        g_autofree char *big = g_strnfill(HTTP_REQUEST_MAX + 100, 'a');
        g_autofree char *huge = g_strdup_printf("GET /metrics HTTP/1.1\r\nX: %s\r\n\r\n", big);
        const char *const requests[] = {FULL_REQUEST "GET /metrics HTTP/1.1\r\n\r\n",
                                        "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", huge};

        fixture_init(&f, 8);
        for (unsigned i = 0; i < G_N_ELEMENTS(requests); i++) {
                g_autoptr(GString) out = g_string_new(NULL);
                int fd = client(&f, requests[i]), ending;
                pump(&f, 50); /* the rest of what it sent reaches the server before the answer is done */
                ending = ending_of(&f, fd, out);
                ck_assert_msg(ending == 0, "%u: %s after %s", i, g_strerror(ending), out->str);
                ck_assert_msg(g_str_has_prefix(out->str, "HTTP/1.1 "), "%u: %s", i, out->str);
                close(fd);
        }
        pump(&f, 100);
        ck_assert_uint_eq(http_server_connections(f.http), 0);
        fixture_done(&f);
}
END_TEST

static Suite *http_server_suite(void)
{
        Suite *s = suite_create("http-server");
        TCase *tc = tcase_create("server");
        tcase_add_test(tc, test_answers);
        tcase_add_test(tc, test_head_error_has_no_body);
        tcase_add_test(tc, test_empty_lines_count_towards_the_limit);
        tcase_add_test(tc, test_answer_not_reset_by_unread_input);
        tcase_add_test(tc, test_every_address);
        tcase_add_test(tc, test_every_address_not_half);
        tcase_add_test(tc, test_cap_evicts_oldest_unfinished);
        tcase_add_test(tc, test_fresh_client_behind_a_crowd);
        tcase_add_test(tc, test_flood_evicts_its_own);
        tcase_add_test(tc, test_slow_readers_do_not_keep_a_scraper_out);
        tcase_add_test(tc, test_slow_readers_do_not_evict_a_scraper);
        tcase_add_test(tc, test_pause_when_out_of_descriptors);
        tcase_add_test(tc, test_body_rendered_once_per_max_age);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(http_server_suite)
