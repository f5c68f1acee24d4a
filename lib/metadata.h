/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The decision placementd records in a domain's live <metadata> (format in domain-xml.h): written so
 * `virsh dumpxml` shows it, read back so a restarted daemon adopts the domain exactly as it runs.
 */

#include "domain-xml.h"
#include "plan.h"
#include "topology.h"

/*
 * XML for virDomainSetMetadata (no namespace: libvirt applies it). result is the decision's result
 * word (placed, overcommitted, advisory...), memory_binding "applied", "failed", "off" or "advisory".
 * spec is the user's own definition (may be NULL): its skip/policy attributes are kept and its
 * user_xml is recorded as <definition>. Caller frees.
 */
char *metadata_format(const Topology *t, const Plan *p, const char *result, const char *memory_binding,
                      const DomainSpec *spec);

/*
 * Rebuilds the plan a decision describes, on this topology. Returns 0, or -EINVAL with *ret_error when
 * the decision does not fit (unknown CPU or node, vCPU count differs from nvcpus, unknown policy).
 */
int metadata_to_plan(const Topology *t, const MetaDecision *d, const char *name, unsigned nvcpus,
                     uint64_t memory, Plan **ret, char **ret_error);
