/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-util.h"

#include "test-policy-util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain-request.h"
#include "domain-xml.h"
#include "policy.h"
#include "topology-load.h"

int test_run_suite(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

char *test_topology_path(const char *name)
{
        const char *dir = g_getenv("PLACEMENTD_TOPOLOGIES");
        return g_build_filename(dir ? dir : "tests/topologies", name, NULL);
}

Topology *test_topology_load(const char *name)
{
        g_autofree char *path = test_topology_path(name);
        g_autofree char *error = NULL;
        Topology *t = NULL;

        ck_assert_msg(topology_load(path, &t, &error) == 0, "%s: %s", name, error);
        return t;
}

char *test_domain_with_record(const char *name, const char *before, char *record)
{
        g_autoptr(GRegex) re = g_regex_new("<(/?)", 0, 0, NULL);
        g_autofree char *prefixed = g_regex_replace(re, record, -1, 0, "<\\1p:", 0, NULL);
        const char *inner = prefixed + strlen("<p:domain>");

        g_free(record);
        return g_strdup_printf("<domain><name>%s</name>%s<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS
                               "'>%s</metadata></domain>",
                               name, before, inner);
}

DomainSpec *test_domain_parse(const char *xml)
{
        g_autofree char *error = NULL;
        DomainSpec *s = NULL;

        ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "%s", error);
        return s;
}

Plan *test_place_xml(const Topology *t, const Ledger *l, const char *xml, const PlacementParams *params)
{
        g_autoptr(DomainSpec) spec = test_domain_parse(xml);
        g_auto(RequestShape) shape = {0};
        PlacementRequest req = domain_request(spec, spec);

        domain_request_shape(spec, t, &req, &shape);
        return policy_place(t, l, &req, params);
}

const Plan *test_commit_xml(const Topology *t, Ledger *l, const char *name, const char *xml)
{
        PlacementParams params = test_params(POLICY_EXPLICIT);
        Plan *plan = test_place_xml(t, l, xml, &params);

        ck_assert_msg(plan->result == PLAN_PLACED, "%s: %s", name, plan->reason);
        ck_assert_int_eq(ledger_commit(l, name, plan), 0);
        return ledger_lookup(l, name);
}

void test_remove_dir(const char *dir)
{
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;

        while (d && (name = g_dir_read_name(d))) {
                g_autofree char *path = g_build_filename(dir, name, NULL);
                g_remove(path);
        }
        g_rmdir(dir);
}

void test_assert_same_shape(const Topology *a, const Topology *b)
{
        ck_assert_uint_eq(a->nnodes, b->nnodes);
        ck_assert_uint_eq(a->npackages, b->npackages);
        ck_assert_uint_eq(a->ncores, b->ncores);
        ck_assert_uint_eq(a->npus, b->npus);
        ck_assert_uint_eq(a->nl3, b->nl3);
        ck_assert_uint_eq(a->max_threads, b->max_threads);
        ck_assert_int_eq(a->distances_known, b->distances_known);
        ck_assert_int_eq(a->flat, b->flat);
        ck_assert(cpuset_equal(a->all_pus, b->all_pus));
        for (unsigned i = 0; i < a->nnodes; i++) {
                ck_assert_uint_eq(a->nodes[i].os_index, b->nodes[i].os_index);
                ck_assert_uint_eq(a->nodes[i].memory, b->nodes[i].memory);
                ck_assert_uint_eq(a->nodes[i].core_first, b->nodes[i].core_first);
                ck_assert_uint_eq(a->nodes[i].ncores, b->nodes[i].ncores);
                ck_assert_uint_eq(a->nodes[i].npus, b->nodes[i].npus);
                ck_assert(cpuset_equal(a->nodes[i].cpus, b->nodes[i].cpus));
        }
        for (unsigned i = 0; i < a->npackages; i++) {
                ck_assert_uint_eq(a->packages[i].os_index, b->packages[i].os_index);
                ck_assert(cpuset_equal(a->packages[i].nodes, b->packages[i].nodes));
        }
        for (unsigned i = 0; i < a->ncores; i++) {
                ck_assert_uint_eq(a->cores[i].node, b->cores[i].node);
                ck_assert_uint_eq(a->cores[i].package, b->cores[i].package);
                ck_assert_uint_eq(a->cores[i].l3, b->cores[i].l3);
                ck_assert_uint_eq(a->cores[i].os_index, b->cores[i].os_index);
                ck_assert_uint_eq(a->cores[i].pu_first, b->cores[i].pu_first);
                ck_assert_uint_eq(a->cores[i].npus, b->cores[i].npus);
        }
        for (unsigned i = 0; i < a->npus; i++) {
                ck_assert_uint_eq(a->pus[i].os_index, b->pus[i].os_index);
                ck_assert_uint_eq(a->pus[i].core, b->pus[i].core);
        }
        ck_assert_mem_eq(a->distance, b->distance, sizeof(uint32_t) * a->nnodes * a->nnodes);
        ck_assert_uint_eq(a->notes->len, b->notes->len);
        for (unsigned i = 0; i < a->notes->len; i++)
                ck_assert_str_eq(g_ptr_array_index(a->notes, i), g_ptr_array_index(b->notes, i));
}
