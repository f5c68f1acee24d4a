/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Domain XML parser fixtures: every tests/domain-xml/NAME.xml is parsed and its constraint and opt-out
 * fields printed one per line (the I/O thread lines only when it has I/O threads), compared with
 * NAME.expected. An expected file that starts with "error: " names the start of the error the XML must
 * be refused with.
 */
#include "test-util.h"

#include <errno.h>
#include <string.h>

#include "domain-xml.h"

static char *fixture_dir(void)
{
        const char *src = g_getenv("PLACEMENTD_SRCDIR");
        return g_build_filename(src ? src : ".", "tests", "domain-xml", NULL);
}

static void append_set(GString *out, const char *key, const CpuSet *s)
{
        g_autofree char *list = s ? cpuset_format(s) : NULL;
        g_string_append_printf(out, "%s=%s\n", key, list ? list : "-");
}

static char *dump(const DomainSpec *s)
{
        GString *out = g_string_new(NULL);

        g_string_append_printf(out, "vcpus=%u\n", s->vcpus);
        append_set(out, "vcpu-cpuset", s->vcpu_cpuset);
        g_string_append_printf(out, "vcpupin=%s\nemulatorpin=%s\nvcpu-auto=%s\nnumatune-auto=%s\n",
                               s->has_vcpupin ? "yes" : "no", s->has_emulatorpin ? "yes" : "no",
                               s->vcpu_auto ? "yes" : "no", s->numatune_auto ? "yes" : "no");
        append_set(out, "memory-nodeset", s->memory_nodeset);
        g_string_append_printf(out, "memory-mode=%s\n",
                               s->memory_nodeset ? memory_mode_to_string(s->memory_mode) : "-");
        append_set(out, "memnode-nodeset", s->memnode_nodeset);
        g_string_append_printf(out, "memnodes=%u\n", s->nmemnodes);
        /* the guest shape, only when the definition has one (older fixtures stay as they are) */
        for (unsigned i = 0; s->cells && i < s->cells->len; i++) {
                const DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                g_autofree char *list = cpuset_format(c->vcpus);
                g_string_append_printf(out, "cell=%u cpus=%s memory=%" G_GUINT64_FORMAT, c->id,
                                       *list ? list : "-", c->memory);
                /* its <distances>, only when it has them */
                for (unsigned k = 0, first = 1; k < c->ndistances; k++)
                        if (c->distances[k]) {
                                g_string_append_printf(out, "%s%u:%u", first ? " distances=" : ",", k,
                                                       c->distances[k]);
                                first = 0;
                        }
                g_string_append_c(out, '\n');
        }
        if (s->guest_socket_vcpus)
                g_string_append_printf(out, "guest-socket-vcpus=%u\n", s->guest_socket_vcpus);
        if (s->hugepages)
                g_string_append_printf(out, "hugepages=%" G_GUINT64_FORMAT "%s\n", s->hugepage_size,
                                       s->hugepage_sizes_differ ? " (sizes differ)" : "");
        if (s->iothreads || s->iothreadpins) {
                append_set(out, "iothreads", s->iothreads);
                append_set(out, "iothreadpins", s->iothreadpins);
        }
        return g_string_free(out, FALSE);
}

static void check_fixture(const char *dir, const char *xml_name)
{
        g_autofree char *xml_path = g_build_filename(dir, xml_name, NULL);
        g_autofree char *base = g_strndup(xml_name, strlen(xml_name) - strlen(".xml"));
        g_autofree char *expected_name = g_strconcat(base, ".expected", NULL);
        g_autofree char *expected_path = g_build_filename(dir, expected_name, NULL);
        g_autofree char *xml = NULL, *expected = NULL, *error = NULL, *got = NULL;
        g_autoptr(DomainSpec) spec = NULL;
        int r;

        ck_assert_msg(g_file_get_contents(xml_path, &xml, NULL, NULL), "cannot read %s", xml_path);
        ck_assert_msg(g_file_get_contents(expected_path, &expected, NULL, NULL), "cannot read %s",
                      expected_path);
        r = domain_xml_parse(xml, &spec, &error);
        if (g_str_has_prefix(expected, "error: ")) {
                g_autofree char *want = g_strstrip(g_strdup(expected + strlen("error: ")));
                ck_assert_msg(r == -EINVAL, "%s: parsed, expected an error", xml_name);
                ck_assert_msg(strstr(error, want), "%s: error '%s' lacks '%s'", xml_name, error, want);
                return;
        }
        ck_assert_msg(r == 0, "%s: %s", xml_name, error);
        ck_assert_str_eq(spec->name, base);
        got = dump(spec);
        ck_assert_msg(strcmp(got, expected) == 0, "%s:\n--- got\n%s--- expected\n%s", xml_name, got,
                      expected);
}

START_TEST(test_fixtures)
{
        g_autofree char *dir = fixture_dir();
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;
        unsigned n = 0;

        ck_assert_msg(d != NULL, "no fixture directory %s", dir);
        while ((name = g_dir_read_name(d)))
                if (g_str_has_suffix(name, ".xml")) {
                        check_fixture(dir, name);
                        n++;
                }
        ck_assert_uint_ge(n, 10);
}
END_TEST

START_TEST(test_constraints_reset_per_parse)
{
        /* a second <vcpu> replaces the first's cpuset instead of leaking it */
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *list = NULL;

        ck_assert_int_eq(domain_xml_parse("<domain><name>d</name><vcpu cpuset='0'>1</vcpu>"
                                          "<vcpu cpuset='1-2'>2</vcpu></domain>",
                                          &s, NULL),
                         0);
        list = cpuset_format(s->vcpu_cpuset);
        ck_assert_str_eq(list, "1-2");
}
END_TEST

static Suite *domain_xml_suite(void)
{
        Suite *s = suite_create("domain-xml constraints");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_fixtures);
        tcase_add_test(tc, test_constraints_reset_per_parse);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(domain_xml_suite)
