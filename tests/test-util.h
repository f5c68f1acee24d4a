/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <check.h>

#include "domain-xml.h"
#include "ledger.h"
#include "plan.h"
#include "topology.h"

/* Runs one suite and returns the process exit code (0 when every check passed). */
int test_run_suite(Suite *s);

/* Path of a fixture under tests/topologies (from $PLACEMENTD_TOPOLOGIES); caller frees. */
char *test_topology_path(const char *name);

/* The fixture tests/topologies/NAME loaded; fails the test when it does not load. */
Topology *test_topology_load(const char *name);

/* A domain's XML around a record of metadata_format() (taken): <metadata> holds it in placementd's
 * namespace, as libvirt shows it; before is put ahead of <metadata> (<vcpu>, <memory>, ...). */
char *test_domain_with_record(const char *name, const char *before, char *record);

/* A domain's XML parsed; fails the test when it is refused. */
DomainSpec *test_domain_parse(const char *xml);

/* The plan policy_place() makes for the domain in xml on t, read as the daemon reads it (its request
 * and guest shape); nothing is committed. */
Plan *test_place_xml(const Topology *t, const Ledger *l, const char *xml, const PlacementParams *params);

/* The domain in xml placed on t with the explicit policy's defaults (test_place_xml()), which must place it,
 * and committed to l as name; returns the committed plan. */
const Plan *test_commit_xml(const Topology *t, Ledger *l, const char *name, const char *xml);

/* Fails the test unless a and b hold the same host's shape: counts, nodes (memory, cores, CPUs), packages,
 * cores, PUs, distances and notes; not the source, memory or CPU kinds, caches or PCI devices. */
void test_assert_same_shape(const Topology *a, const Topology *b);

/* Removes the directory dir and the files in it (a test's temporary directory). */
void test_remove_dir(const char *dir);

#define TEST_MAIN(make_suite)                                                                               \
        int main(void)                                                                                      \
        {                                                                                                   \
                return test_run_suite(make_suite());                                                        \
        }
