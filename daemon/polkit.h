/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Permission for the privileged D-Bus methods, as systemd's daemons do it: root is always allowed; any other
 * caller is allowed when polkit (org.freedesktop.PolicyKit1 on the same bus) says so for the method's
 * action, asked with subject "system-bus-name" and no interaction flag, so polkit never prompts and the
 * daemon never waits. The question is asynchronous: the method runs, and replies, when polkit's answer
 * arrives and the bus has said (asked without waiting too) that root or polkitd sent it. Without polkit on
 * the bus only root is allowed, and the daemon says so once per outage.
 */

#include <sys/types.h>
#include <systemd/sd-bus.h>

typedef struct Polkit Polkit;

/* The method body, run once the caller is allowed. Replies itself, or returns a negative errno with *error
 * set (the reply is then the error). */
typedef int (*PolkitAllowed)(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* The (effective) uid of the peer of a direct connection (msg has no sender), read from the socket.
 * Returns 0 or a negative errno (-EINVAL for a message through a bus: ask with polkit_ask_uid()). */
int polkit_sender_uid(sd_bus_message *msg, uid_t *ret);

/* Asks the bus, without waiting, for the uid of the connection that owns name (GetConnectionUnixUser, the
 * uid the bus took from the socket when it connected); callback gets the reply, read by polkit_uid_reply().
 * Returns what sd_bus_call_method_async() returns. */
int polkit_ask_uid(sd_bus *bus, sd_bus_slot **ret_slot, const char *name, sd_bus_message_handler_t callback,
                   void *userdata);
/* The uid in a reply to polkit_ask_uid(): 0, or a negative errno when the bus did not say (the connection
 * has gone) or someone other than the bus answered. */
int polkit_uid_reply(sd_bus_message *reply, uid_t *ret);

Polkit *polkit_new(void);
/* Drops the questions in flight, their calls unanswered: for a bus being left (it went, or the daemon
 * stops), which they would otherwise keep, with themselves, for good. */
void polkit_drop(Polkit *p);
/* Frees p, dropping its questions in flight (polkit_drop()). */
void polkit_free(Polkit *p);

/* Runs allowed(msg, userdata, error) now when uid, the sender's as the bus named it, is root and returns
 * what it returned. Otherwise asks polkit whether the sender may do action and returns 1 (the call is
 * handled, the reply comes later), or returns a negative errno with *error set (NotPermitted) when polkit
 * cannot be asked or uid is (uid_t)-1 (the bus did not name the sender). what ("rebalance domains")
 * completes the refusal message. Nothing here waits for the bus. */
int polkit_authorize(Polkit *p, sd_bus_message *msg, uid_t uid, const char *action, const char *what,
                     PolkitAllowed allowed, void *userdata, sd_bus_error *error);
