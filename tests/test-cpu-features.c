/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure half of cpu-advice: the feature table, the CPU XML reader, set arithmetic and the advice. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpu-features.h"
#include "cpu-json.h"
#include "test-util.h"

#define LIBVIRT_X86_FEATURES "/usr/share/libvirt/cpu_map/x86_features.xml"

static const char *const fixtures[] = {
    "intel-westmere-xeon-e7-4830.xml",  "intel-haswell-xeon-e5-2650-v3.xml",
    "intel-skylake-xeon-gold-6148.xml", "intel-cascadelake-xeon-platinum-8268.xml",
    "intel-icelake-server.xml",         "amd-rome-epyc-7502.xml",
    "amd-milan-epyc-7713.xml",
};

static char *fixture_path(const char *name)
{
        const char *src = g_getenv("PLACEMENTD_SRCDIR");
        return g_build_filename(src ? src : ".", "tests", "cpus", name, NULL);
}

static CpuDesc *parse_ok(const char *xml)
{
        g_autofree char *error = NULL;
        CpuDesc *d = NULL;
        int r = cpu_desc_parse(xml, strlen(xml), &d, &error);

        ck_assert_msg(r == 0, "parse failed (%d): %s", r, error);
        return d;
}

static int parse_error(const char *xml, char **ret_error)
{
        g_autoptr(CpuDesc) d = NULL;
        int r = cpu_desc_parse(xml, strlen(xml), &d, ret_error);

        ck_assert_int_lt(r, 0);
        ck_assert_ptr_null(d);
        ck_assert_ptr_nonnull(*ret_error);
        return r;
}

static GHashTable *set_of(const char *names)
{
        g_auto(GStrv) list = g_strsplit(names, " ", -1);
        GHashTable *set = cpu_feature_set_new();

        for (unsigned i = 0; list[i]; i++)
                if (*list[i])
                        cpu_feature_set_add(set, list[i]);
        return set;
}

static char *joined(const GPtrArray *names)
{
        g_autoptr(GString) s = g_string_new(NULL);

        for (unsigned i = 0; i < names->len; i++)
                g_string_append_printf(s, "%s%s", i ? " " : "", (const char *)g_ptr_array_index(names, i));
        return g_string_free(g_steal_pointer(&s), FALSE);
}

/* ---------------------------------------------------------------- the table */

START_TEST(test_table_well_formed)
{
        size_t n;
        const CpuFeatureInfo *t = cpu_feature_table(&n);
        static const char *const groups[] = {"crypto", "vector", "bits", "memory", "system"};

        ck_assert_uint_ge(n, 40);
        for (size_t i = 0; i < n; i++) {
                bool group_ok = false;
                ck_assert_ptr_eq(cpu_feature_info(t[i].name), &t[i]); /* names are unique */
                ck_assert_uint_gt(strlen(t[i].note), 10);
                for (unsigned g = 0; g < G_N_ELEMENTS(groups); g++)
                        group_ok = group_ok || strcmp(t[i].group, groups[g]) == 0;
                ck_assert_msg(group_ok, "%s: group %s", t[i].name, t[i].group);
        }
        /* The features the issue names, in libvirt's spelling. */
        static const char *const wanted[] = {
            "aes",        "pclmuldq", "avx",      "avx2",     "avx512f",  "avx512bw", "sha-ni",  "vaes",
            "vpclmulqdq", "fma",      "bmi1",     "bmi2",     "movbe",    "f16c",     "rdrand",  "rdseed",
            "adx",        "popcnt",   "sse4.1",   "sse4.2",   "ssse3",    "xsave",    "invpcid", "erms",
            "fsrm",       "gfni",     "avx-vnni", "amx-tile", "amx-int8", "amx-bf16"};
        for (unsigned i = 0; i < G_N_ELEMENTS(wanted); i++)
                ck_assert_msg(cpu_feature_info(wanted[i]), "%s missing", wanted[i]);
        ck_assert_ptr_null(cpu_feature_info("pclmulqdq")); /* Linux's spelling, not libvirt's */
        ck_assert_ptr_null(cpu_feature_info("vmx"));
        ck_assert_ptr_null(cpu_feature_info(NULL));
        /* AES comes first: it is the case the whole command exists for. */
        ck_assert_str_eq(t[0].name, "aes");
}
END_TEST

/* Every name is one libvirt's CPU map defines (the installed one; libvirt 9.0 on Debian 12). */
START_TEST(test_table_names_in_cpu_map)
{
        g_autofree char *map = NULL;
        size_t n;
        const CpuFeatureInfo *t = cpu_feature_table(&n);

        if (!g_file_get_contents(LIBVIRT_X86_FEATURES, &map, NULL, NULL)) {
                printf("# skip: %s not readable (libvirt's CPU map is not installed)\n",
                       LIBVIRT_X86_FEATURES);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                /* <feature name='aes'> or <feature name='xsaves' migratable='no'> */
                g_autofree char *plain = g_strdup_printf("<feature name='%s'>", t[i].name);
                g_autofree char *with_attr = g_strdup_printf("<feature name='%s' ", t[i].name);
                ck_assert_msg(strstr(map, plain) || strstr(map, with_attr), "%s is not in %s", t[i].name,
                              LIBVIRT_X86_FEATURES);
        }
}
END_TEST

/* ---------------------------------------------------------------- parsing */

START_TEST(test_parse_host_cpu)
{
        g_autoptr(CpuDesc) d = parse_ok("<cpu>\n  <arch>x86_64</arch>\n  <model>Westmere</model>\n"
                                        "  <vendor>Intel</vendor>\n"
                                        "  <signature family='6' model='47' stepping='2'/>\n"
                                        "  <feature name='pclmuldq'/>\n  <feature name='vmx'/>\n"
                                        "  <topology sockets='1' cores='2' threads='1'/>\n</cpu>\n");

        ck_assert_int_eq(d->source, CPU_SOURCE_CPU);
        ck_assert_int_eq(d->mode, CPU_MODE_HOST);
        ck_assert_str_eq(d->arch, "x86_64");
        ck_assert_str_eq(d->model, "Westmere");
        ck_assert_str_eq(d->vendor, "Intel");
        ck_assert(d->have_signature);
        ck_assert_uint_eq(d->family, 6);
        ck_assert_uint_eq(d->model_number, 47);
        ck_assert_uint_eq(d->stepping, 2);
        ck_assert_uint_eq(d->features->len, 2);
        ck_assert_int_eq(cpu_desc_policy(d, "pclmuldq"), CPU_POLICY_NONE);
        ck_assert_int_eq(cpu_desc_policy(d, "aes"), -1);
        ck_assert(!cpu_desc_has_absent(d));
        ck_assert_ptr_null(d->domain_name);
}
END_TEST

START_TEST(test_parse_api_output)
{
        /* What virConnectBaselineCPU / virConnectBaselineHypervisorCPU return. */
        g_autoptr(CpuDesc) d = parse_ok("<cpu mode='custom' match='exact'>\n"
                                        "  <model fallback='forbid'>core2duo</model>\n"
                                        "  <vendor>Intel</vendor>\n"
                                        "  <feature policy='require' name='aes'/>\n"
                                        "  <feature policy='disable' name='pni'/>\n"
                                        "  <feature policy='forbid' name='ssse3'/>\n"
                                        "  <feature policy='optional' name='x2apic'/>\n"
                                        "  <feature policy='force' name='avx'/>\n</cpu>\n");

        ck_assert_int_eq(d->mode, CPU_MODE_CUSTOM);
        ck_assert_ptr_null(d->arch);
        ck_assert_str_eq(d->model, "core2duo");
        ck_assert_int_eq(cpu_desc_policy(d, "aes"), CPU_POLICY_REQUIRE);
        ck_assert_int_eq(cpu_desc_policy(d, "pni"), CPU_POLICY_DISABLE);
        ck_assert_int_eq(cpu_desc_policy(d, "ssse3"), CPU_POLICY_FORBID);
        ck_assert_int_eq(cpu_desc_policy(d, "x2apic"), CPU_POLICY_OPTIONAL);
        ck_assert_int_eq(cpu_desc_policy(d, "avx"), CPU_POLICY_FORCE);
        ck_assert(cpu_desc_has_absent(d));
}
END_TEST

START_TEST(test_parse_capabilities)
{
        /* The host's <cpu> only: <guest> sections and NUMA <cpus> are not it. */
        g_autoptr(CpuDesc) d = parse_ok(
            "<?xml version='1.0'?>\n<capabilities>\n  <host>\n    <uuid>e180e020</uuid>\n"
            "    <cpu>\n      <arch>x86_64</arch>\n      <model>kvm64</model>\n      <vendor>AMD</vendor>\n"
            "      <microcode version='16777317'/>\n      <signature family='25' model='17' stepping='1'/>\n"
            "      <counter name='tsc' frequency='2596144000' scaling='no'/>\n"
            "      <topology sockets='1' dies='1' cores='2' threads='1'/>\n"
            "      <feature name='aes'/>\n      <feature name='avx2'/>\n"
            "      <pages unit='KiB' size='4'/>\n    </cpu>\n"
            "    <topology><cells num='1'><cell id='0'><cpus num='1'><cpu id='0' socket_id='0'/></cpus>"
            "</cell></cells></topology>\n  </host>\n"
            "  <guest><os_type>hvm</os_type><arch name='i686'><wordsize>32</wordsize></arch></guest>\n"
            "</capabilities>\n");

        ck_assert_int_eq(d->source, CPU_SOURCE_CAPABILITIES);
        ck_assert_int_eq(d->mode, CPU_MODE_HOST);
        ck_assert_str_eq(d->model, "kvm64");
        ck_assert_str_eq(d->vendor, "AMD");
        ck_assert_str_eq(d->arch, "x86_64");
        ck_assert_uint_eq(d->features->len, 2);
        ck_assert_uint_eq(d->family, 25);
}
END_TEST

START_TEST(test_parse_capabilities_without_model)
{
        /* libvirt's test driver: an arch, no model. */
        g_autoptr(CpuDesc) d =
            parse_ok("<capabilities><host><cpu><arch>i686</arch><features><pae/></features>"
                     "</cpu></host></capabilities>");

        ck_assert_str_eq(d->arch, "i686");
        ck_assert_ptr_null(d->model);
        ck_assert_uint_eq(d->features->len, 0);
}
END_TEST

static const char domcaps[] =
    "<domainCapabilities>\n  <path>/usr/bin/qemu-system-x86_64</path>\n  <domain>qemu</domain>\n"
    "  <machine>pc-i440fx-7.2</machine>\n  <arch>x86_64</arch>\n  <cpu>\n"
    "    <mode name='host-passthrough' supported='no'/>\n"
    "    <mode name='maximum' supported='yes'><enum "
    "name='maximumMigratable'><value>on</value></enum></mode>\n"
    "    <mode name='host-model' supported='yes'>\n      <model fallback='forbid'>EPYC</model>\n"
    "      <vendor>AMD</vendor>\n      <maxphysaddr mode='passthrough' limit='40'/>\n"
    "      <feature policy='require' name='vaes'/>\n      <feature policy='disable' name='sha-ni'/>\n"
    "    </mode>\n    <mode name='custom' supported='yes'>\n"
    "      <model usable='yes' vendor='unknown'>qemu64</model>\n"
    "      <model usable='no' vendor='Intel'>Skylake-Server</model>\n    </mode>\n  </cpu>\n"
    "</domainCapabilities>\n";

START_TEST(test_parse_domcaps)
{
        g_autoptr(CpuDesc) d = parse_ok(domcaps);

        ck_assert_int_eq(d->source, CPU_SOURCE_DOMCAPS);
        ck_assert_int_eq(d->mode, CPU_MODE_HOST);
        ck_assert_str_eq(d->model, "EPYC"); /* not a custom-mode <model> */
        ck_assert_str_eq(d->vendor, "AMD");
        ck_assert_str_eq(d->arch, "x86_64"); /* from <domainCapabilities><arch> */
        ck_assert_uint_eq(d->features->len, 2);
        ck_assert_int_eq(cpu_desc_policy(d, "sha-ni"), CPU_POLICY_DISABLE);
}
END_TEST

START_TEST(test_parse_domcaps_without_host_model)
{
        g_autofree char *error = NULL;

        ck_assert_int_eq(parse_error("<domainCapabilities><cpu><mode name='host-model' supported='no'/>"
                                     "</cpu></domainCapabilities>",
                                     &error),
                         -ENODATA);
        ck_assert_ptr_nonnull(strstr(error, "host-model"));
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(parse_error("<domainCapabilities><arch>x86_64</arch></domainCapabilities>", &error),
                         -ENODATA);
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(parse_error("<capabilities><host><uuid>x</uuid></host></capabilities>", &error),
                         -ENODATA);
}
END_TEST

START_TEST(test_parse_domain)
{
        g_autoptr(CpuDesc) d = parse_ok(
            "<domain type='qemu' id='3'>\n  <name>web-1</name>\n  <os>\n"
            "    <type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type>\n  </os>\n"
            "  <cpu mode='custom' match='exact' check='full'>\n    <model fallback='forbid'>qemu64</model>\n"
            "    <feature policy='require' name='hypervisor'/>\n    <feature policy='disable' name='svm'/>\n"
            "    <numa><cell id='0' cpus='0' memory='1' unit='GiB'/></numa>\n  </cpu>\n"
            "  <devices>\n    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n  </devices>\n</domain>\n");

        ck_assert_int_eq(d->source, CPU_SOURCE_DOMAIN);
        ck_assert_int_eq(d->mode, CPU_MODE_CUSTOM);
        ck_assert_str_eq(d->model, "qemu64");
        ck_assert_str_eq(d->arch, "x86_64");
        ck_assert_str_eq(d->domain_name, "web-1");
        ck_assert_str_eq(d->domain_type, "qemu");
        ck_assert_str_eq(d->machine, "pc-i440fx-7.2");
        ck_assert_str_eq(d->emulator, "/usr/bin/qemu-system-x86_64");
        ck_assert_uint_eq(d->features->len, 2);
}
END_TEST

START_TEST(test_parse_domain_modes)
{
        g_autoptr(CpuDesc) none =
            parse_ok("<domain type='kvm'><name>a</name><os><type arch='x86_64'>hvm</type>"
                     "</os></domain>");
        g_autoptr(CpuDesc) i686 =
            parse_ok("<domain type='kvm'><name>b</name><os><type arch='i686'>hvm</type>"
                     "</os><cpu><topology sockets='1' cores='2' threads='1'/></cpu></domain>");
        g_autoptr(CpuDesc) pass =
            parse_ok("<domain type='kvm'><name>c</name>"
                     "<cpu mode='host-passthrough' check='none' migratable='on'/></domain>");
        g_autoptr(CpuDesc) model =
            parse_ok("<domain type='kvm'><name>d</name><cpu mode='host-model'/></domain>");
        g_autoptr(CpuDesc) max =
            parse_ok("<domain type='qemu'><name>e</name><cpu mode='maximum'/></domain>");

        /* No <cpu>: QEMU's default model. */
        ck_assert_int_eq(none->mode, CPU_MODE_CUSTOM);
        ck_assert_ptr_null(none->model);
        ck_assert_str_eq(cpu_desc_guest_model(none), "qemu64");
        ck_assert_str_eq(cpu_desc_guest_model(i686), "qemu32");
        ck_assert_int_eq(i686->mode, CPU_MODE_CUSTOM);
        ck_assert_int_eq(pass->mode, CPU_MODE_HOST_PASSTHROUGH);
        ck_assert_int_eq(model->mode, CPU_MODE_HOST_MODEL);
        ck_assert_int_eq(max->mode, CPU_MODE_MAXIMUM);
}
END_TEST

START_TEST(test_parse_rejects)
{
        static const char *const bad[] = {
            "<cpu><model>Haswell</model><feature name='aes'/><feature name='aes'/></cpu>", /* twice */
            "<cpu><model>Haswell</model><feature policy='sometimes' name='aes'/></cpu>",
            "<cpu><model>Haswell</model><feature/></cpu>",
            "<cpu><model>Haswell</model><feature name='a b'/></cpu>",
            "<cpu><model>Has'well</model></cpu>",
            "<cpu><model></model></cpu>",
            "<cpu mode='weird'><model>Haswell</model></cpu>",
            "<domain><cpu mode='host-ish'/></domain>",
            "<cpu><model>Haswell</model><signature family='x' model='1'/></cpu>",
            "<hostcpu><model>Haswell</model></hostcpu>",
            "<cpu><model>Haswell</model>",
            "not xml at all",
            "",
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *error = NULL;
                ck_assert_msg(parse_error(bad[i], &error) == -EINVAL, "accepted: %s", bad[i]);
        }
}
END_TEST

START_TEST(test_parse_limits)
{
        g_autoptr(GString) xml = g_string_new("<cpu><model>Haswell</model>");
        g_autofree char *error = NULL, *long_name = g_strnfill(CPU_XML_MAX_NAME + 1, 'a');
        g_autofree char *long_model = g_strdup_printf("<cpu><model>%s</model></cpu>", long_name);
        g_autoptr(CpuDesc) ok = NULL;

        for (unsigned i = 0; i <= CPU_XML_MAX_FEATURES; i++)
                g_string_append_printf(xml, "<feature name='f%u'/>", i);
        g_string_append(xml, "</cpu>");
        ck_assert_int_eq(parse_error(xml->str, &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "features"));
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(parse_error(long_model, &error), -EINVAL);
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(cpu_desc_parse("<cpu/>", CPU_XML_MAX_BYTES + 1, &ok, &error), -EINVAL);
        ck_assert_ptr_null(ok);
}
END_TEST

START_TEST(test_parse_fixtures)
{
        for (unsigned i = 0; i < G_N_ELEMENTS(fixtures); i++) {
                g_autofree char *path = fixture_path(fixtures[i]), *text = NULL, *error = NULL;
                g_autoptr(CpuDesc) d = NULL;
                gsize len;

                ck_assert_msg(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
                ck_assert_msg(cpu_desc_parse(text, len, &d, &error) == 0, "%s: %s", path, error);
                ck_assert_int_eq(d->mode, CPU_MODE_HOST);
                ck_assert_str_eq(d->arch, "x86_64");
                ck_assert_ptr_nonnull(d->model);
                ck_assert(strcmp(d->vendor, "Intel") == 0 || strcmp(d->vendor, "AMD") == 0);
                ck_assert(
                    g_str_has_prefix(fixtures[i], strcmp(d->vendor, "Intel") == 0 ? "intel-" : "amd-"));
                ck_assert(d->have_signature);
                ck_assert_uint_gt(d->features->len, 10);
                ck_assert(!cpu_desc_has_absent(d));
        }
}
END_TEST

/* ---------------------------------------------------------------- formatting */

START_TEST(test_format_host_round_trip)
{
        g_autoptr(CpuDesc) d =
            parse_ok("<capabilities><host><cpu><arch>x86_64</arch><model>Haswell-noTSX</model>"
                     "<vendor>Intel</vendor><signature family='6' model='63' stepping='2'/>"
                     "<feature name='vmx'/><feature name='f16c'/></cpu></host></capabilities>");
        g_autofree char *xml = cpu_desc_format(d, CPU_XML_HOST, NULL);
        g_autoptr(CpuDesc) again = parse_ok(xml);

        ck_assert_str_eq(xml, "<cpu>\n  <arch>x86_64</arch>\n  <model>Haswell-noTSX</model>\n"
                              "  <vendor>Intel</vendor>\n  <signature family='6' model='63' stepping='2'/>\n"
                              "  <feature name='vmx'/>\n  <feature name='f16c'/>\n</cpu>\n");
        ck_assert_str_eq(again->model, "Haswell-noTSX");
        ck_assert_uint_eq(again->features->len, 2);
        ck_assert_int_eq(again->mode, CPU_MODE_HOST);
}
END_TEST

START_TEST(test_format_styles)
{
        g_autoptr(CpuDesc) d = parse_ok(domcaps);
        g_autoptr(CpuDesc) no_arch = parse_ok("<cpu><model>Westmere</model><feature name='vmx'/></cpu>");
        g_autoptr(CpuDesc) no_model = parse_ok("<domain><name>x</name></domain>");
        g_autofree char *guest = cpu_desc_format(d, CPU_XML_GUEST, NULL);
        g_autofree char *host = cpu_desc_format(d, CPU_XML_HOST, "x86_64");
        g_autofree char *filled = cpu_desc_format(no_arch, CPU_XML_HOST, "x86_64");
        g_autofree char *unfilled = cpu_desc_format(no_arch, CPU_XML_HOST, NULL);
        g_autofree char *nothing = cpu_desc_format(no_model, CPU_XML_GUEST, NULL);
        g_autoptr(CpuDesc) reparsed = NULL;

        /* A host-style CPU cannot take features away: libvirt would read them as present. */
        ck_assert_ptr_null(host);
        ck_assert_str_eq(guest, "<cpu>\n  <model fallback='forbid'>EPYC</model>\n  <vendor>AMD</vendor>\n"
                                "  <feature policy='require' name='vaes'/>\n"
                                "  <feature policy='disable' name='sha-ni'/>\n</cpu>\n");
        reparsed = parse_ok(guest);
        ck_assert_int_eq(cpu_desc_policy(reparsed, "sha-ni"), CPU_POLICY_DISABLE);
        ck_assert_ptr_nonnull(strstr(filled, "<arch>x86_64</arch>"));
        ck_assert_ptr_null(unfilled);
        ck_assert_ptr_null(nothing);
}
END_TEST

/* ---------------------------------------------------------------- sets */

START_TEST(test_effective)
{
        g_autoptr(GHashTable) model = set_of("fpu sse sse2 aes pni");
        g_autoptr(CpuDesc) d =
            parse_ok("<cpu mode='custom'><model>X</model><feature policy='require' name='avx'/>"
                     "<feature policy='disable' name='aes'/><feature policy='forbid' name='pni'/>"
                     "<feature policy='optional' name='x2apic'/>"
                     "<feature policy='disable' name='never-had'/></cpu>");
        g_autoptr(GHashTable) set = cpu_desc_effective(d, model);
        g_autoptr(GPtrArray) list = cpu_feature_set_list(set);
        g_autofree char *text = joined(list);
        g_autoptr(GHashTable) alone = cpu_desc_effective(d, NULL);

        ck_assert_str_eq(text, "avx fpu sse sse2 x2apic");
        ck_assert_uint_eq(g_hash_table_size(model), 5); /* untouched */
        ck_assert_uint_eq(g_hash_table_size(alone), 2);
}
END_TEST

START_TEST(test_missing)
{
        g_autoptr(GHashTable) host = set_of("vmx avx2 aes monitor avx512f sse2 pclmuldq ds");
        g_autoptr(GHashTable) guest = set_of("sse2 pni");
        g_autoptr(GPtrArray) relevant = cpu_features_missing(host, guest, true);
        g_autoptr(GPtrArray) all = cpu_features_missing(host, guest, false);
        g_autoptr(GPtrArray) other = cpu_features_missing_other(host, guest);
        g_autoptr(GPtrArray) none = cpu_features_missing(guest, guest, false);
        g_autoptr(GHashTable) empty = set_of("");
        g_autofree char *r = joined(relevant), *a = joined(all), *o = joined(other);

        ck_assert_str_eq(r, "aes pclmuldq avx2 avx512f"); /* table order */
        ck_assert_str_eq(a, "aes avx2 avx512f ds monitor pclmuldq vmx");
        ck_assert_str_eq(o, "ds monitor vmx");
        ck_assert_uint_eq(none->len, 0);
        ck_assert(cpu_feature_set_is_subset(guest, guest));
        ck_assert(!cpu_feature_set_is_subset(guest, host)); /* pni */
        ck_assert(cpu_feature_set_is_subset(empty, host));
}
END_TEST

/* ---------------------------------------------------------------- advice */

START_TEST(test_advice_host_cpu_modes)
{
        static const char *const modes[] = {"host-passthrough", "host-model", "maximum"};
        g_autoptr(GHashTable) host = set_of("aes avx2");

        for (unsigned i = 0; i < G_N_ELEMENTS(modes); i++) {
                g_autofree char *xml =
                    g_strdup_printf("<domain><name>d</name><cpu mode='%s'/></domain>", modes[i]);
                g_autoptr(CpuDesc) guest = parse_ok(xml);
                g_autoptr(CpuAdvice) a = cpu_advice_compute("d", guest, NULL, host, NULL, NULL);

                ck_assert_int_eq(a->verdict, CPU_VERDICT_HOST_CPU);
                ck_assert_uint_eq(a->hidden->len, 0);
                ck_assert_ptr_null(a->suggested_model);
                ck_assert_str_eq(cpu_mode_to_string(a->mode), modes[i]);
        }
}
END_TEST

/* GetCpuAdviceJSON's answer: the advice's members as one compact object. */
START_TEST(test_advice_json)
{
        g_autoptr(GHashTable) host = set_of("aes avx2");
        g_autoptr(CpuDesc) guest = parse_ok("<domain><name>d</name><cpu mode='host-model'/></domain>");
        g_autoptr(CpuAdvice) a = cpu_advice_compute("d", guest, NULL, host, NULL, NULL);
        g_autofree char *json = cpu_advice_to_json(a);
        g_autoptr(JsonNode) root = json_from_string(json, NULL);
        JsonObject *o;

        ck_assert_ptr_nonnull(root);
        o = json_node_get_object(root);
        ck_assert_str_eq(json_object_get_string_member(o, "domain"), "d");
        ck_assert_str_eq(json_object_get_string_member(o, "mode"), "host-model");
        ck_assert_str_eq(json_object_get_string_member(o, "verdict"), "host-cpu");
        ck_assert(json_object_get_null_member(o, "suggested"));
        ck_assert_ptr_null(strchr(json, '\n'));
}
END_TEST

START_TEST(test_advice_qemu64_on_a_modern_host)
{
        /* qemu64 as libvirt shows it live; the sets stand for the expanded models. */
        g_autoptr(CpuDesc) guest =
            parse_ok("<domain type='kvm'><name>web</name><cpu mode='custom' match='exact'>"
                     "<model fallback='forbid'>qemu64</model>"
                     "<feature policy='require' name='x2apic'/></cpu></domain>");
        g_autoptr(GHashTable) qemu64 = set_of("fpu sse sse2 pni cx16 lm syscall nx");
        g_autoptr(GHashTable) guest_set = cpu_desc_effective(guest, qemu64);
        g_autoptr(GHashTable) host =
            set_of("fpu sse sse2 pni cx16 lm syscall nx x2apic aes pclmuldq avx avx2 "
                   "avx512f vmx monitor");
        g_autoptr(CpuDesc) suggested =
            parse_ok("<cpu><model>Skylake-Server</model><vendor>Intel</vendor></cpu>");
        g_autoptr(GHashTable) suggested_set =
            set_of("fpu sse sse2 pni cx16 lm syscall nx x2apic aes pclmuldq "
                   "avx avx2 avx512f");
        g_autoptr(CpuAdvice) a = cpu_advice_compute("web", guest, guest_set, host, suggested, suggested_set);
        g_autofree char *hidden = joined(a->hidden), *recovered = joined(a->recovered);

        ck_assert_str_eq(a->domain, "web");
        ck_assert_str_eq(a->model, "qemu64");
        ck_assert_int_eq(a->mode, CPU_MODE_CUSTOM);
        ck_assert_str_eq(hidden, "aes pclmuldq avx2 avx avx512f"); /* not vmx/monitor: not relevant */
        ck_assert_str_eq(recovered, hidden);
        ck_assert_int_eq(a->verdict, CPU_VERDICT_IMPROVABLE);
        ck_assert_str_eq(a->suggested_model, "Skylake-Server");
        ck_assert_str_eq(a->suggested_vendor, "Intel");
        ck_assert_uint_eq(a->suggested_loses->len, 0);
        ck_assert_str_eq(cpu_verdict_to_string(a->verdict), "improvable");
}
END_TEST

/* A feature the definition disables itself is the user's choice: not hidden, no advice to turn it on */
START_TEST(test_advice_declined_features)
{
        g_autoptr(CpuDesc) guest =
            parse_ok("<domain type='kvm'><name>web</name><cpu mode='custom' match='exact'>"
                     "<model fallback='forbid'>Skylake-Server</model>"
                     "<feature policy='disable' name='avx512f'/></cpu></domain>");
        g_autoptr(GHashTable) model = set_of("fpu sse sse2 aes avx avx2 avx512f");
        g_autoptr(GHashTable) guest_set = cpu_desc_effective(guest, model);
        g_autoptr(GHashTable) host = set_of("fpu sse sse2 aes avx avx2 avx512f");
        g_autoptr(CpuDesc) suggested =
            parse_ok("<cpu><model>Skylake-Server</model><vendor>Intel</vendor></cpu>");
        g_autoptr(CpuAdvice) a = cpu_advice_compute("web", guest, guest_set, host, suggested, model);
        g_autofree char *declined = joined(a->declined);

        ck_assert_uint_eq(a->hidden->len, 0);
        ck_assert_str_eq(declined, "avx512f");
        ck_assert_int_eq(a->verdict, CPU_VERDICT_OK);
}
END_TEST

START_TEST(test_advice_verdicts)
{
        g_autoptr(CpuDesc) guest =
            parse_ok("<domain><name>g</name><cpu><model>Westmere</model></cpu></domain>");
        g_autoptr(GHashTable) guest_set = set_of("aes pclmuldq sse4.2 vme");
        g_autoptr(GHashTable) host_same = set_of("aes pclmuldq sse4.2 vmx");
        g_autoptr(GHashTable) host_more = set_of("aes pclmuldq sse4.2 avx2 sha-ni");
        g_autoptr(CpuDesc) offer = parse_ok("<cpu><model>kvm64</model></cpu>");
        g_autoptr(GHashTable) offer_set = set_of("sse4.2 vme");
        g_autoptr(CpuAdvice) ok = cpu_advice_compute("g", guest, guest_set, host_same, offer, offer_set);
        g_autoptr(CpuAdvice) poor = cpu_advice_compute("g", guest, guest_set, host_more, offer, offer_set);
        g_autoptr(CpuAdvice) none = cpu_advice_compute("g", guest, guest_set, host_more, NULL, NULL);
        g_autofree char *loses = joined(poor->suggested_loses);

        ck_assert_int_eq(ok->verdict, CPU_VERDICT_OK);
        ck_assert_uint_eq(ok->hidden->len, 0);
        /* Hidden, but the hypervisor's host-model has none of it and even lacks what the guest has. */
        ck_assert_int_eq(poor->verdict, CPU_VERDICT_NOT_OFFERED);
        ck_assert_uint_eq(poor->hidden->len, 2);
        ck_assert_uint_eq(poor->recovered->len, 0);
        ck_assert_str_eq(loses, "aes pclmuldq");
        ck_assert_int_eq(none->verdict, CPU_VERDICT_NOT_OFFERED);
        ck_assert_ptr_null(none->suggested_model);
        ck_assert_uint_eq(none->hidden->len, 2);
}
END_TEST

static Suite *cpu_features_suite(void)
{
        Suite *s = suite_create("cpu-features");
        TCase *t = tcase_create("table");

        tcase_add_test(t, test_table_well_formed);
        tcase_add_test(t, test_table_names_in_cpu_map);
        suite_add_tcase(s, t);
        t = tcase_create("parse");
        tcase_add_test(t, test_parse_host_cpu);
        tcase_add_test(t, test_parse_api_output);
        tcase_add_test(t, test_parse_capabilities);
        tcase_add_test(t, test_parse_capabilities_without_model);
        tcase_add_test(t, test_parse_domcaps);
        tcase_add_test(t, test_parse_domcaps_without_host_model);
        tcase_add_test(t, test_parse_domain);
        tcase_add_test(t, test_parse_domain_modes);
        tcase_add_test(t, test_parse_rejects);
        tcase_add_test(t, test_parse_limits);
        tcase_add_test(t, test_parse_fixtures);
        suite_add_tcase(s, t);
        t = tcase_create("format");
        tcase_add_test(t, test_format_host_round_trip);
        tcase_add_test(t, test_format_styles);
        suite_add_tcase(s, t);
        t = tcase_create("sets");
        tcase_add_test(t, test_effective);
        tcase_add_test(t, test_missing);
        suite_add_tcase(s, t);
        t = tcase_create("advice");
        tcase_add_test(t, test_advice_host_cpu_modes);
        tcase_add_test(t, test_advice_json);
        tcase_add_test(t, test_advice_qemu64_on_a_modern_host);
        tcase_add_test(t, test_advice_verdicts);
        tcase_add_test(t, test_advice_declined_features);
        suite_add_tcase(s, t);
        return s;
}

TEST_MAIN(cpu_features_suite)
