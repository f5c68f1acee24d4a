/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The decision placementd records in a domain's live <metadata> (format in domain-xml.h): written so
 * `virsh dumpxml` shows it, read back so a restarted daemon adopts the domain exactly as it runs.
 */

#include "decision.h"
#include "domain-xml.h"
#include "plan.h"
#include "topology.h"

/*
 * XML for virDomainSetMetadata (no namespace: libvirt applies it). result is the decision's result
 * word (placed, overcommitted, advisory...), memory_binding what became of the memory binding.
 * spec is the user's own definition (may be NULL): its skip/policy attributes are kept, its
 * user_xml is recorded as <definition> and its uuid (the domain's) on the decision, so a copy of the
 * record in another domain's definition is not read as that domain's. Caller frees.
 */
char *metadata_format(const Topology *t, const Plan *p, const char *result, MemoryBinding memory_binding,
                      const DomainSpec *spec);
/* The run a record is written in: the libvirt domain ID (domain-id=, when not 0) and the host's boot
 * (boot-id=, /proc/sys/kernel/random/boot_id, when not NULL), so that a record that a domain restored from
 * a save image or migrated in carries reads as another run's; and the CPUs its QEMU threads started on,
 * when known (threads=, daemon/thread-mask.c). */
typedef struct MetaRun {
        unsigned domain_id;
        const char *boot_id;
        const CpuSet *threads;
} MetaRun;
/* The same, naming the run (may be NULL). */
char *metadata_format_run(const Topology *t, const Plan *p, const char *result, MemoryBinding memory_binding,
                          const DomainSpec *spec, const MetaRun *run);

/* Longest recorded reason adopted, in bytes */
#define METADATA_MAX_REASON 1024u

/*
 * Rebuilds the plan a recorded decision describes, on this topology, for a domain that runs nvcpus
 * vCPUs, libvirt's vCPUs vcpu_ids[0..nvcpus-1] (NULL: 0..nvcpus-1; records name vCPUs by these ids),
 * with memory bytes. The record is untrusted: returns 0 only when every field checks out (a
 * result that can be adopted: placed, overcommitted or skipped; known policy, pin mode and memory
 * binding; a reason of at most METADATA_MAX_REASON bytes without control characters; every vCPU once,
 * counted on a CPU of its pin set; pins, emulator and I/O thread pins within the host, and vCPU pins
 * within the recorded nodes unless skipped; memory on the recorded nodes, at most each node's size and
 * the domain's memory in all). Otherwise -EINVAL with *ret_error naming the first problem.
 */
int metadata_to_plan(const Topology *t, const MetaDecision *d, const char *name, unsigned nvcpus,
                     const unsigned *vcpu_ids, uint64_t memory, Plan **ret, char **ret_error);
/* The same for a domain whose memory libvirt binds to bound (node OS indexes, from its live definition,
 * not the record; NULL: none): a placement's recorded memory may lie there too, outside the recorded
 * nodes, and when the binding holds all of it (bound_all) only there. A skipped record's memory is not
 * taken (the caller counts it as the domain runs). */
int metadata_to_plan_bound(const Topology *t, const MetaDecision *d, const char *name, unsigned nvcpus,
                           const unsigned *vcpu_ids, uint64_t memory, const CpuSet *bound, bool bound_all,
                           Plan **ret, char **ret_error);
