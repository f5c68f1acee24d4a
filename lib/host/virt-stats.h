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

typedef struct DomainCpuStats {
        uint64_t total_ns;  /* cpu.time: every thread of the domain */
        uint64_t user_ns;   /* cpu.user */
        uint64_t system_ns; /* cpu.system */
        uint64_t vcpu_ns;   /* sum of vcpu.N.time */
        uint64_t host_ns;   /* total - vcpu: emulator, I/O threads, vhost work charged to it */
        unsigned nvcpus;
        /* Per vCPU (added for measured load), by N for N below nvcpu_times: vcpu.N.time, what it ran, and
         * vcpu.N.delay (or vcpu.N.wait where libvirt has no delay), how long it was ready but waited for a
         * host CPU (steal time to the guest); 0 where libvirt reports neither. */
        unsigned nvcpu_times;
        uint64_t *vcpu_time_ns;
        uint64_t *vcpu_wait_ns;
} DomainCpuStats;

/* The most vCPU indexes read per domain: libvirt's own limit on vCPUs is this order too. */
#define VIRT_STATS_MAX_VCPUS 4096u

void domain_cpu_stats_free(DomainCpuStats *s);

/* All running domains: a table from UUID string to DomainCpuStats (caller unrefs). -ENOTSUP when the
 * driver has no such statistics (libvirt's test driver). */
int virt_cpu_stats_all(virConnectPtr conn, GHashTable **ret, char **ret_error);
