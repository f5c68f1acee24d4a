/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Host-side CPU time of running domains, from virConnectGetAllDomainStats: what the guest's vCPUs ran
 * and what the host spent for the domain besides them (emulator and I/O threads, vhost), split into
 * user and system time. The libvirt adapter for statistics: returns 0 or a negative errno + message.
 */

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdint.h>

#include "cpu-stats.h"

/* The most vCPU indexes read per domain: libvirt's own limit on vCPUs is this order too. */
#define VIRT_STATS_MAX_VCPUS 4096u

void domain_cpu_stats_free(DomainCpuStats *s);

/* One domain's record of virConnectGetAllDomainStats (state, cpu.*, vcpu.*) as a new DomainCpuStats. The
 * per-vCPU arrays hold the online vCPUs in id order: libvirt names them by id and leaves out those
 * unplugged, so vcpu.0 and vcpu.2 become entries 0 and 1 (the daemon's vCPUs, DomainSpec.vcpu_ids). */
DomainCpuStats *domain_cpu_stats_from_params(const virTypedParameter *params, int nparams);

/* All running domains: a table from UUID string to DomainCpuStats (caller unrefs). -ENOTSUP when the
 * driver has no such statistics (libvirt's test driver). */
int virt_cpu_stats_all(virConnectPtr conn, GHashTable **ret, char **ret_error);
