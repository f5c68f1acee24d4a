/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Host-side CPU time of one running domain: what the guest's vCPUs ran and what the host spent for the
 * domain besides them (emulator and I/O threads, vhost), split into user and system time. Plain data:
 * lib/host/virt-stats.c reads it from libvirt, the daemon serves it.
 */

#include <stdbool.h>
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
        /* libvirt's id of each of them when those are not 0..nvcpu_times-1 (a vCPU unplugged below one
         * that runs: vcpu.0 and vcpu.2 are the domain's vCPUs 0 and 1); NULL when they are */
        unsigned *vcpu_ids;
        /* state.state: paused or suspended by the guest (PM), not running; its vCPUs stand still */
        bool paused;
} DomainCpuStats;
