/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "peer-owner.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* An IPv4-mapped IPv6 address's IPv4 part into *out (a dual-stack listener's IPv4 clients). */
static bool v4_mapped(const struct sockaddr_in6 *a, struct in_addr *out)
{
        if (!IN6_IS_ADDR_V4MAPPED(&a->sin6_addr))
                return false;
        memcpy(out, a->sin6_addr.s6_addr + 12, sizeof(*out));
        return true;
}

/* The sock_diag key of the client's socket: its source is our peer, its destination us. */
static bool client_id(const struct sockaddr_storage *peer, const struct sockaddr_storage *self,
                      struct inet_diag_req_v2 *r)
{
        if (peer->ss_family == AF_INET && self->ss_family == AF_INET) {
                const struct sockaddr_in *p = (const struct sockaddr_in *)peer,
                                         *s = (const struct sockaddr_in *)self;
                r->sdiag_family = AF_INET;
                r->id.idiag_sport = p->sin_port;
                r->id.idiag_dport = s->sin_port;
                memcpy(r->id.idiag_src, &p->sin_addr, sizeof(p->sin_addr));
                memcpy(r->id.idiag_dst, &s->sin_addr, sizeof(s->sin_addr));
                return true;
        }
        if (peer->ss_family == AF_INET6 && self->ss_family == AF_INET6) {
                const struct sockaddr_in6 *p = (const struct sockaddr_in6 *)peer,
                                          *s = (const struct sockaddr_in6 *)self;
                struct in_addr p4, s4;
                r->id.idiag_sport = p->sin6_port;
                r->id.idiag_dport = s->sin6_port;
                if (v4_mapped(p, &p4) && v4_mapped(s, &s4)) { /* the client's socket is an IPv4 one */
                        r->sdiag_family = AF_INET;
                        memcpy(r->id.idiag_src, &p4, sizeof(p4));
                        memcpy(r->id.idiag_dst, &s4, sizeof(s4));
                } else {
                        r->sdiag_family = AF_INET6;
                        memcpy(r->id.idiag_src, &p->sin6_addr, sizeof(p->sin6_addr));
                        memcpy(r->id.idiag_dst, &s->sin6_addr, sizeof(s->sin6_addr));
                }
                return true;
        }
        return false;
}

bool peer_owner_uid(int fd, uid_t *ret_uid)
{
        struct sockaddr_storage peer, self;
        socklen_t peer_len = sizeof(peer), self_len = sizeof(self);
        struct {
                struct nlmsghdr nlh;
                struct inet_diag_req_v2 r;
        } req = {
            .nlh = {.nlmsg_len = sizeof(req),
                    .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                    .nlmsg_flags = NLM_F_REQUEST},
            .r = {.sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u},
        };
        union {
                struct nlmsghdr nlh;
                char bytes[1024];
        } answer;
        struct timeval wait = {.tv_sec = 1};
        const struct inet_diag_msg *msg;
        ssize_t n;
        int nl;

        if (getpeername(fd, (struct sockaddr *)&peer, &peer_len) < 0 ||
            getsockname(fd, (struct sockaddr *)&self, &self_len) < 0 || !client_id(&peer, &self, &req.r))
                return false;
        req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
        nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (nl < 0)
                return false;
        /* the kernel answers at once; a bound wait all the same, on the daemon's loop */
        (void)setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
        n = send(nl, &req, sizeof(req), 0) == (ssize_t)sizeof(req) ? recv(nl, &answer, sizeof(answer), 0)
                                                                   : -1;
        close(nl);
        /* one message: the socket's, or an error (none with that key: the peer is on another host) */
        if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) || !NLMSG_OK(&answer.nlh, (size_t)n) ||
            answer.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
                return false;
        msg = NLMSG_DATA(&answer.nlh);
        /* the lookup falls back to a listening socket on the peer's port (sshd's, say, for a remote
         * client that connects from port 22): only a socket connected to us is the client's */
        if (msg->idiag_state == TCP_LISTEN || msg->id.idiag_sport != req.r.id.idiag_sport ||
            msg->id.idiag_dport != req.r.id.idiag_dport ||
            memcmp(msg->id.idiag_dst, req.r.id.idiag_dst, sizeof(msg->id.idiag_dst)) != 0 ||
            memcmp(msg->id.idiag_src, req.r.id.idiag_src, sizeof(msg->id.idiag_src)) != 0)
                return false;
        *ret_uid = msg->idiag_uid;
        return true;
}
