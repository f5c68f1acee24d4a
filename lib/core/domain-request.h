/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * From a domain's definitions to what the engine is asked: its opt-outs and its placement request. The
 * daemon (on libvirt's definitions) and the offline planner (on domain XML files) read a domain through
 * these, so both apply the same rules.
 */

#include "domain-xml.h"
#include "plan.h"
#include "topology.h"

/* A domain XML file is tens of KiB; far larger is not one. */
#define DOMAIN_FILE_MAX (4u << 20)

/* Why the user's definition opts the domain out of placement (skip metadata, its own <vcpupin>,
 * placement='auto'), or NULL when it does not. */
const char *domain_spec_opt_out(const DomainSpec *user);
/*
 * Whether every <vcpupin> of the user's definition names a vCPU that does not run in live (not plugged in:
 * <vcpu current=...> below it, or <vcpus><vcpu enabled='no'>): such pins pin nothing that runs, and libvirt
 * applies them when the vCPU is plugged in. False when it has none, or one it could not read.
 */
bool domain_spec_pins_unplugged_only(const DomainSpec *user, const DomainSpec *live);

/*
 * The request for a domain: its size and I/O threads from the live definition, the user's constraints
 * from user (the definition the opt-outs come from; both may be the same). Memory the user does not bind
 * may still be bound already: libvirt changes the nodeset of a running domain only in restrictive mode,
 * so a live strict, interleave or preferred binding (placementd's own first binding included) stays where
 * it is, and the vCPUs stay with it; it stands over a binding or memnodes the definition was edited to
 * since the start (the edit is for the next start). The request points into user and live.
 */
/* Whether every guest cell of s has its own <memnode> (or s has no cells): libvirt then binds all of the
 * guest's memory to their union. */
bool domain_spec_memnodes_bind_all(const DomainSpec *s);
PlacementRequest domain_request(const DomainSpec *user, const DomainSpec *live);

/* What a request's shape points into: owned arrays, freed by request_shape_clear(). */
typedef struct RequestShape {
        PlacementCell *cells;    /* req->cells, NULL when the guest has none */
        CpuSet *devices;         /* req->device_nodes, NULL when no device has a known locality */
        CpuSet *devices_sit_on;  /* req->device_sits_on, NULL when every device's nodes have CPUs */
        CpuSet *devices_nearest; /* req->device_nearest, likewise */
        CpuSet *caches;          /* req->cache_cpus, NULL unless every vCPU has reserved caches */
        CpuSet **vcpu_caches;    /* req->vcpu_cache_cpus ([nvcpu_caches]), NULL when no vCPU has any */
        unsigned nvcpu_caches;
        GArray *iothread_cpus; /* req->iothread_cpus (IothreadPin, borrowed pins), NULL when it is left */
} RequestShape;
void request_shape_clear(RequestShape *shape);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RequestShape, request_shape_clear)

/*
 * The guest shape of the request, the running guest's (an edit of the definition is for its next start):
 * its guest cells, for hugepage-backed memory its page size (the host's default when it names none), and
 * the nodes local to the host PCI devices it passes through (those t knows a locality of), and the CPUs
 * under the caches its <cachetune>/<memorytune> reserve for each vCPU (those t knows by id; libvirt
 * starts no domain naming another; inside its <vcpu cpuset>, which libvirt applies whatever the
 * reservation: a vCPU whose caches lie wholly outside it has none). The definition's <iothreadpin>s
 * (req->iothread_cpus) are cut to those whose I/O thread runs with that pin: one deleted live, or pinned
 * elsewhere since, holds no CPU.
 * req points into shape, which the caller clears.
 */
/* Whether the running definition live pins I/O thread id to exactly cpus (<iothreadpin>): a thread deleted
 * live, or pinned elsewhere since, is not. */
bool domain_spec_iothreadpin_runs(const DomainSpec *live, unsigned id, const CpuSet *cpus);

/* The page size of a guest cell's memory, def (the host's default hugepage size) for a cell of
 * <hugepages> without a size, as libvirt backs it; 0 for ordinary memory. */
uint64_t domain_cell_page_size(const DomainCell *c, uint64_t def);
/* The largest page size of the domain's hugepage-backed cells, a cell of <hugepages> without a size in def
 * (a memory device's own <source><pagesize> of that size is of the same kind); 0 when none. */
uint64_t domain_request_page_size(const DomainSpec *live, uint64_t def);
/* Whether the domain's hugepage-backed cells use more than one page size, def as above. */
bool domain_request_page_sizes_differ(const DomainSpec *live, uint64_t def);
/* The smaller of the two page sizes of a domain whose hugepage-backed cells use two, none of its cells in
 * ordinary memory: each cell is then counted in its own size's pools (PlacementRequest.second_page_size);
 * 0 for any other domain (one size, some cells in ordinary memory, or more than two sizes: counted in the
 * largest). def as above. */
uint64_t domain_request_second_page_size(const DomainSpec *live, uint64_t def);

void domain_request_shape(const DomainSpec *live, const Topology *t, PlacementRequest *req,
                          RequestShape *shape);

/* The policy the domain's own metadata chooses (<placementd:domain policy="compat">), else dflt; one
 * neither policy names is dflt, with *ret_unknown set to it (else NULL) for the caller to say. */
PolicyKind domain_request_policy(const DomainSpec *user, PolicyKind dflt, const char **ret_unknown);

/* Reads and parses a domain XML file: a regular file of at most DOMAIN_FILE_MAX bytes without NUL bytes
 * (file-read.h). Returns 0 or a negative errno with *ret_error naming the file and the problem. */
int domain_file_load(const char *path, DomainSpec **ret, char **ret_error);
