/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the daemon outside the manager's sources and demo.c (daemon/meson.build) may include: the manager,
 * the core, the host adapters that do not expose libvirt, sd-bus and libevent. Must compile. */
#include <event2/event.h>
#include <systemd/sd-bus.h>

#include "bus-cleanup.h"
#include "cpu-stats.h"
#include "event-cleanup.h"
#include "manager.h"
#include "virt-event.h"

int layering_daemon_pure(void);
int layering_daemon_pure(void)
{
        return TOPOLOGY_LOCAL;
}
