/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Permission for the privileged D-Bus methods, as systemd's daemons do it: root is always allowed; any other
 * caller is allowed when polkit (org.freedesktop.PolicyKit1 on the same bus) says so for the method's
 * action, asked with subject "system-bus-name" and no interaction flag, so polkit never prompts and the
 * daemon never waits. The question is asynchronous: the method runs, and replies, when polkit's answer
 * arrives. Without polkit on the bus only root is allowed, and the daemon says so once per outage.
 */

#include <sys/types.h>
#include <systemd/sd-bus.h>

typedef struct Polkit Polkit;

/* The method body, run once the caller is allowed. Replies itself, or returns a negative errno with *error
 * set (the reply is then the error). */
typedef int (*PolkitAllowed)(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* The (effective) uid of msg's sender, asked of the bus. Returns 0 or a negative errno. */
int polkit_sender_uid(sd_bus_message *msg, uid_t *ret);

Polkit *polkit_new(void);
void polkit_free(Polkit *p);

/* Runs allowed(msg, userdata, error) now when the sender of msg is root and returns what it returned.
 * Otherwise asks polkit whether the sender may do action and returns 1 (the call is handled, the reply comes
 * later), or returns a negative errno with *error set (NotPermitted) when polkit cannot be asked. what
 * ("rebalance domains") completes the refusal message. */
int polkit_authorize(Polkit *p, sd_bus_message *msg, const char *action, const char *what,
                     PolkitAllowed allowed, void *userdata, sd_bus_error *error);
