/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The libvirt adapter for guest CPU models: the only place that calls libvirt's CPU APIs (expansion,
 * baseline, comparison, capabilities, domain capabilities). libvirt's error style stops here: every
 * function returns 0 or a negative errno and, on failure, a message in *ret_error (caller frees):
 *   -EOPNOTSUPP  the connection's driver lacks the API (libvirt's test driver has no domain
 *                capabilities and no CPU comparison; only x86 guests are understood)
 *   -EINVAL      libvirt rejected a CPU: unknown model or feature, vendors that differ, bad XML
 *   -ENODATA     the answer holds no CPU (no host-model, no host CPU model)
 *   -ENOENT      the domain is gone
 *   -EACCES      refused: the hypervisor APIs and domain capabilities need a read-write connection
 *   -EIO         anything else (connection lost, a failing call)
 * Nothing here logs.
 *
 * Which API does what, and where (libvirt 9.0):
 *   virConnectBaselineCPU            libvirt's CPU map only; test:///default and qemu:///system. Takes
 *                                    host-style CPUs (<arch>, features without policy). Used to expand a
 *                                    model name into its features, and for --map-only baselines.
 *   virConnectBaselineHypervisorCPU  limited to what this host's hypervisor can give a guest (under TCG
 *                                    that is far less than the CPUs themselves); qemu:///system only.
 *   virConnectCompareHypervisorCPU,
 *   virConnectCompareCPU,
 *   virConnectGetDomainCapabilities  qemu:///system only.
 */

#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "cpu-features.h"

/* A connection plus caches of what does not change while it is open (model expansions, host CPU,
 * host-model per emulator/arch/machine/virttype). Takes its own reference on conn. */
typedef struct VirtCpu VirtCpu;

VirtCpu *virt_cpu_new(virConnectPtr conn);
void virt_cpu_free(VirtCpu *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VirtCpu, virt_cpu_free)

/* The features of a model in libvirt's CPU map (arch NULL means x86_64). *ret is borrowed: valid
 * until virt_cpu_free(). -EINVAL for a model libvirt does not know. */
int virt_cpu_model_features(VirtCpu *v, const char *arch, const char *model, GHashTable **ret,
                            char **ret_error);

/* The full feature set of a description (its model expanded, then its own feature list applied); a
 * description without a model gets QEMU's default model. A new set in *ret. */
int virt_cpu_features(VirtCpu *v, const CpuDesc *d, GHashTable **ret, char **ret_error);

/* The host's CPU as virConnectGetCapabilities describes it; borrowed. It may have no model (libvirt's
 * test driver reports none). */
int virt_cpu_host(VirtCpu *v, const CpuDesc **ret, char **ret_error);

/* The host-model CPU of virConnectGetDomainCapabilities for these parameters (each may be NULL for
 * libvirt's default); borrowed. -EOPNOTSUPP without domain capabilities, -ENODATA when the hypervisor
 * has no host-model. */
int virt_cpu_host_model(VirtCpu *v, const char *emulator, const char *arch, const char *machine,
                        const char *virttype, const CpuDesc **ret, char **ret_error);

typedef enum VirtCpuApi {
        VIRT_CPU_API_AUTO,       /* the hypervisor's when the connection has it, else the CPU map */
        VIRT_CPU_API_HYPERVISOR, /* virConnectBaselineHypervisorCPU / virConnectCompareHypervisorCPU */
        VIRT_CPU_API_MAP,        /* virConnectBaselineCPU / virConnectCompareCPU */
} VirtCpuApi;

const char *virt_cpu_api_to_string(VirtCpuApi api);

typedef struct VirtCpuBaseline {
        CpuDesc *cpu;    /* the result as libvirt returned it (<cpu mode='custom'>) */
        char *xml;       /* its XML, as libvirt returned it: ready for a domain definition */
        VirtCpuApi api;  /* the API that computed it (never AUTO) */
        bool migratable; /* libvirt dropped features that block migration (invtsc...); the test driver
                          * cannot */
} VirtCpuBaseline;

void virt_cpu_baseline_clear(VirtCpuBaseline *b);

/*
 * The best CPU that all n CPUs can run. labels (may be NULL) name the CPUs in messages. With
 * VIRT_CPU_API_MAP a CPU that removes features from its model (a domcapabilities host-model may) is
 * refused with -EINVAL: the map's API would read the removed features as present. virttype (may be NULL)
 * goes to the hypervisor API. Fills *ret.
 */
int virt_cpu_baseline(VirtCpu *v, CpuDesc *const *cpus, const char *const *labels, size_t n, VirtCpuApi api,
                      const char *virttype, VirtCpuBaseline *ret, char **ret_error);

typedef enum VirtCpuCompare {
        VIRT_CPU_INCOMPATIBLE,
        VIRT_CPU_IDENTICAL,
        VIRT_CPU_SUPERSET, /* the host offers more than the CPU needs */
} VirtCpuCompare;

const char *virt_cpu_compare_to_string(VirtCpuCompare c);

/* Whether this host can run the CPU: what its hypervisor provides (virConnectCompareHypervisorCPU),
 * or for VIRT_CPU_API_MAP / drivers without that, the host CPU (virConnectCompareCPU). Sets *ret, the
 * API used in *ret_api (may be NULL), and libvirt's explanation of an incompatibility in *ret_reason
 * (may be NULL; caller frees; NULL when compatible). */
int virt_cpu_compare(VirtCpu *v, const CpuDesc *cpu, VirtCpuApi api, const char *virttype,
                     VirtCpuCompare *ret, VirtCpuApi *ret_api, char **ret_reason, char **ret_error);

/* The guest CPU of a running domain (its live definition). The live definition shows a host-model CPU
 * as the custom model it became; the persistent definition, when there is one, restores the mode. */
int virt_cpu_domain(virDomainPtr dom, CpuDesc **ret, char **ret_error);

/* Advice for one running domain: the relevant host features its CPU hides, and what the domain
 * capabilities' host-model would give back (no suggestion where the driver has no domain capabilities). */
int virt_cpu_advise(VirtCpu *v, virDomainPtr dom, CpuAdvice **ret, char **ret_error);
