/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The libvirt adapter for one domain: the only place that calls libvirt's domain APIs. libvirt's error
 * style (-1 + virError) stops here: every function returns 0 or a negative errno and, on failure, a
 * message in *ret_error (caller frees). -ENOENT always means the domain is gone (destroyed or
 * undefined meanwhile); -EBUSY that libvirt holds a job on it (a call that needs the job waited
 * libvirt's 30 s for it and gave up); other failures are -EIO. Nothing here logs.
 *
 * Which calls need the domain's job (QEMU driver): the pins, numatune and metadata writes, and reading
 * the live I/O threads. Reading the definition, the vCPU pins and the live size does not.
 */

#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "cpuset.h"
#include "domain-xml.h"
#include "virt-cleanup.h"

/* A job libvirt has held on a domain this long is taken as stuck (QEMU stopped or not answering its
 * monitor, a long migration or dump): a call that needs the job would wait up to 30 s for it. Shorter
 * jobs are the everyday ones (a start, another tool's query) and are waited for. */
#define VIRT_JOB_STUCK_MS 1000u
/* A job held this long is more than a slow start's own (QEMU under TCG, preallocated hugepages): QEMU is
 * stuck, or a migration or dump runs. */
#define VIRT_JOB_LONG_MS 30000u
/* 0 when calls that need dom's job may go ahead; -EBUSY, with a message, when libvirt has held a job on
 * it for VIRT_JOB_STUCK_MS or more, or its start has not ended (paused, starting up). Answered at once
 * (virDomainGetState and virDomainGetControlInfo take no job); a domain libvirt cannot say of counts as
 * free. */
int virt_domain_job_held(virDomainPtr dom, char **ret_error);
/* Whether libvirt's start of dom has not ended (paused, "starting up"; virDomainGetState takes no job):
 * its start job holds it, and its control info may say "ok" meanwhile. libvirt 9.0 keeps a start that a
 * stopped libvirtd cut during QEMU's handshake so for good, with no QEMU. */
bool virt_domain_starting(virDomainPtr dom);
/* How long libvirt has held a job on dom, in ms; 0 when none (or the driver cannot say). */
unsigned virt_domain_job_age_ms(virDomainPtr dom);

/* Live definition (inactive=false) or the persistent one (inactive=true; for a transient domain the
 * live one). */
int virt_domain_read_spec(virDomainPtr dom, bool inactive, DomainSpec **ret, char **ret_error);
/* libvirt's ID of the domain's current run (a local call); 0 when it does not run. */
unsigned virt_domain_id(virDomainPtr dom);

/* Whether dom's connection to libvirtd still stands (a call that failed on a closed one says nothing of
 * the domain). */
bool virt_domain_connection_alive(virDomainPtr dom);

/* vcpu: libvirt's id of the vCPU. */
int virt_domain_pin_vcpu(virDomainPtr dom, unsigned vcpu, const CpuSet *cpus, char **ret_error);
int virt_domain_pin_emulator(virDomainPtr dom, const CpuSet *cpus, char **ret_error);
/* Live pin of the I/O thread with this id (<iothreadids>). */
int virt_domain_pin_iothread(virDomainPtr dom, unsigned id, const CpuSet *cpus, char **ret_error);
/* Live numatune nodeset only (never the mode, which a running domain cannot change). */
int virt_domain_set_memory_nodes(virDomainPtr dom, const CpuSet *nodes, char **ret_error);
/* The live <numatune><memory> binding (virDomainGetNumaParameters(): no XML read): its nodeset (host node
 * numbers) into *ret (empty when none) and its mode (virDomainNumatuneMemMode) into *ret_mode; -1 when
 * libvirt cannot say. */
int virt_domain_get_memory_nodes(virDomainPtr dom, CpuSet **ret, int *ret_mode);
/* Live metadata in placementd's namespace; xml NULL removes it. */
int virt_domain_set_metadata(virDomainPtr dom, const char *xml, char **ret_error);
/* Live pins of nvcpus vCPUs, libvirt's vCPUs ids[0..nvcpus-1] (ids NULL: vCPUs 0..nvcpus-1): a new array
 * of nvcpus CpuSets (free each, then the array). */
int virt_domain_get_vcpu_pins(virDomainPtr dom, unsigned nvcpus, const unsigned *ids, CpuSet ***ret,
                              char **ret_error);
void virt_pins_free(CpuSet **pins, unsigned n);
/* The live I/O threads, *ret_n of them: (*ret_ids)[i] the id of the i-th (g_free the array), (*ret_pins)[i]
 * where it may run (virt_pins_free()). */
int virt_domain_get_iothreads(virDomainPtr dom, unsigned **ret_ids, CpuSet ***ret_pins, unsigned *ret_n,
                              char **ret_error);

/* UUID string of dom into buf (VIR_UUID_STRING_BUFLEN). */
const char *virt_domain_uuid(virDomainPtr dom, char *buf);
/* The domain's name (borrowed from dom), "" when libvirt cannot say. */
const char *virt_domain_name(virDomainPtr dom);
/* Whether it runs / has a persistent definition; false also when libvirt cannot say. */
bool virt_domain_is_active(virDomainPtr dom);
bool virt_domain_is_persistent(virDomainPtr dom);
/* Online vCPUs and the memory ceiling (<memory>, bytes) of a running domain; a figure libvirt cannot give
 * is 0. */
void virt_domain_live_size(virDomainPtr dom, unsigned *ret_vcpus, uint64_t *ret_memory);
/* The memory a running domain holds now (its balloon's and what virtio-mem devices plugged), bytes; 0 when
 * libvirt cannot say. */
uint64_t virt_domain_current_memory(virDomainPtr dom);
/* The live pin of its emulator threads (OS indexes), or NULL when libvirt cannot say. */
CpuSet *virt_domain_emulator_pin(virDomainPtr dom);
/* The host CPUs libvirt has online (where it runs a thread nobody pinned), or NULL when it cannot say. */
CpuSet *virt_domain_host_online_cpus(virDomainPtr dom);

/* Starts a transient domain of libvirt's test driver (for the demo and tests). */
int virt_test_domain_start(virConnectPtr conn, const char *name, unsigned vcpus, uint64_t memory,
                           char **ret_error);
/* Destroys a running domain by name. -ENOENT when there is none. */
int virt_domain_destroy_by_name(virConnectPtr conn, const char *name, char **ret_error);
