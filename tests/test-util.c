/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test-util.h"

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
