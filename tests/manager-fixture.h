/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the manager's in-process tests run on: the libevent loop and libvirt's test driver. */

#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "manager.h"

/* Per test: *base (made once, with libvirt's events on it and logging cut to warnings) and a new
 * connection *conn to test:///default; with drop_own, the driver's own "test" domain destroyed, as it
 * would hold cores a test counts on. */
void fixture_open(struct event_base **base, virConnectPtr *conn, bool drop_own);
/* Closes conn and lets the loop run what that leaves behind. */
void fixture_close(struct event_base *base, virConnectPtr conn);
/* A manager on topology (a topology_load() source) with config_text (NULL: the defaults), started and
 * connected to test:///default. */
Manager *fixture_manager_new(struct event_base *base, const char *topology, const char *config_text);
/* The same with the apply journal in the directory journal (manager_set_journal()), read before it starts.
 */
Manager *fixture_manager_new_journal(struct event_base *base, const char *topology, const char *config_text,
                                     const char *journal);
/* Gives m the configuration config_text, as a reload that read it would (manager_set_config()). */
void fixture_reload(Manager *m, const char *config_text);
/* Defines a persistent domain of vcpus vCPUs and 512 MiB on conn and starts it (its definition, unlike the
 * live XML of a transient one, holds no pins of placementd). */
virDomainPtr fixture_define_and_start(virConnectPtr conn, const char *name, unsigned vcpus);
/* Runs base's loop for about ms milliseconds, or until m knows a domain called name (name NULL: the whole
 * time); whether it does (true for name NULL). */
bool fixture_spin_known(struct event_base *base, Manager *m, const char *name, unsigned ms);
/* Frees m and lets the loop run what that leaves behind. */
void fixture_manager_free(struct event_base *base, Manager *m);
/* Starts a transient domain of 512 MiB named name whose XML holds body (its <vcpu> and what else it
 * needs). */
virDomainPtr fixture_start_xml(virConnectPtr conn, const char *name, const char *body);
/* Destroys dom and frees it. */
void fixture_stop(virDomainPtr dom);
/* Pins vCPU vcpu of dom to host CPU cpu (0-7: the test driver's host) as a user would. */
void fixture_pin(virDomainPtr dom, unsigned vcpu, unsigned cpu);
/* The live pin of I/O thread id of dom as a mask of CPUs 0-7, -1 when it has none. */
int fixture_iothread_map(virDomainPtr dom, unsigned id);
/* Asserts that dom's live vCPU pins, as libvirt reads them, are plan p's (a failure names the vCPU). */
void fixture_assert_live_pins(virDomainPtr dom, const Plan *p);
