/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The libvirt adapter for CPU models against libvirt's own CPU map and real host CPUs (tests/cpus).
 *
 * "map" tests run on test:///default (in-process, always there): model expansion and
 * virConnectBaselineCPU. "hypervisor" tests need a libvirtd with QEMU ($PLACEMENTD_CPU_URI, default
 * qemu:///system): virConnectBaselineHypervisorCPU, the comparison APIs, domain capabilities. Without
 * one they are skipped with a printed reason; tests/e2e/cpu.sh runs them against the e2e harness's
 * libvirtd, and sets $PLACEMENTD_CPU_DOMAIN to a running qemu64 domain for the advice test.
 */
#include <errno.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <string.h>

#include "cpu-features.h"
#include "test-util.h"
#include "virt-cpu.h"
#include "virt-domain.h"
#include "virt-event.h"

static virConnectPtr conn;
static VirtCpu *v;

static const char *real_uri(void)
{
        const char *uri = g_getenv("PLACEMENTD_CPU_URI");
        return uri ? uri : "qemu:///system";
}

static void open_uri(const char *uri)
{
        virt_errors_quiet();
        conn = virConnectOpen(uri);
        ck_assert_msg(conn, "cannot open %s", uri);
        v = virt_cpu_new(conn);
}

static void setup_map(void)
{
        open_uri("test:///default");
}

static void setup_real(void)
{
        open_uri(real_uri());
}

static void teardown(void)
{
        virt_cpu_free(v);
        v = NULL;
        virConnectClose(conn);
        conn = NULL;
}

static CpuDesc *load(const char *name)
{
        const char *src = g_getenv("PLACEMENTD_SRCDIR");
        g_autofree char *path = g_build_filename(src ? src : ".", "tests", "cpus", name, NULL);
        g_autofree char *text = NULL, *error = NULL;
        CpuDesc *d = NULL;
        gsize len;

        ck_assert_msg(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
        ck_assert_msg(cpu_desc_parse(text, len, &d, &error) == 0, "%s: %s", path, error);
        return d;
}

static GHashTable *features_of(const CpuDesc *d)
{
        g_autofree char *error = NULL;
        GHashTable *set = NULL;
        int r = virt_cpu_features(v, d, &set, &error);

        ck_assert_msg(r == 0, "expanding %s: %d %s", d->model, r, error);
        return set;
}

static bool has(GHashTable *set, const char *name)
{
        return g_hash_table_contains(set, name);
}

static char *joined(const GPtrArray *names)
{
        g_autoptr(GString) s = g_string_new(NULL);

        for (unsigned i = 0; i < names->len; i++)
                g_string_append_printf(s, "%s%s", i ? " " : "", (const char *)g_ptr_array_index(names, i));
        return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Baselines the fixtures; checks that every host can run the result. */
static void baseline(const char *const *names, size_t n, VirtCpuApi api, const char *virttype,
                     VirtCpuBaseline *b, GHashTable **ret_features)
{
        g_autoptr(GPtrArray) cpus = g_ptr_array_new_with_free_func((GDestroyNotify)cpu_desc_free);
        g_autofree char *error = NULL;
        int r;

        for (size_t i = 0; i < n; i++)
                g_ptr_array_add(cpus, load(names[i]));
        r = virt_cpu_baseline(v, (CpuDesc *const *)cpus->pdata, (const char *const *)names, n, api, virttype,
                              b, &error);
        ck_assert_msg(r == 0, "baseline: %d %s", r, error);
        ck_assert_ptr_nonnull(b->cpu->model);
        ck_assert_ptr_nonnull(strstr(b->xml, b->cpu->model));
        *ret_features = features_of(b->cpu);
        for (size_t i = 0; i < n; i++) {
                g_autoptr(GHashTable) host = features_of(g_ptr_array_index(cpus, i));
                g_autoptr(GPtrArray) missing = cpu_features_missing(*ret_features, host, false);
                g_autofree char *text = joined(missing);
                ck_assert_msg(missing->len == 0, "%s cannot run the baseline %s: lacks %s", names[i],
                              b->cpu->model, text);
        }
}

/* ---------------------------------------------------------------- test:///default: the CPU map */

START_TEST(test_expand_qemu64)
{
        g_autofree char *error = NULL;
        GHashTable *qemu64 = NULL, *westmere = NULL, *haswell = NULL, *skylake = NULL;

        ck_assert_int_eq(virt_cpu_model_features(v, NULL, "qemu64", &qemu64, &error), 0);
        /* The Ganeti case: a qemu64 guest has no AES-NI, no PCLMULQDQ and no AVX. */
        ck_assert(!has(qemu64, "aes"));
        ck_assert(!has(qemu64, "pclmuldq"));
        ck_assert(!has(qemu64, "avx"));
        ck_assert(!has(qemu64, "avx2"));
        ck_assert(!has(qemu64, "ssse3"));
        ck_assert(has(qemu64, "sse2"));
        ck_assert(has(qemu64, "lm"));
        ck_assert_int_eq(virt_cpu_model_features(v, "x86_64", "Westmere", &westmere, &error), 0);
        ck_assert(has(westmere, "aes"));
        ck_assert(!has(westmere, "avx"));
        ck_assert_int_eq(virt_cpu_model_features(v, NULL, "Haswell-noTSX", &haswell, &error), 0);
        ck_assert(has(haswell, "avx2") && has(haswell, "fma") && has(haswell, "movbe"));
        ck_assert(!has(haswell, "avx512f") && !has(haswell, "hle"));
        ck_assert_int_eq(virt_cpu_model_features(v, NULL, "Skylake-Server", &skylake, &error), 0);
        ck_assert(has(skylake, "avx512f") && has(skylake, "avx512bw") && has(skylake, "clwb"));
        /* Cached: the same set comes back. */
        GHashTable *again = NULL;
        ck_assert_int_eq(virt_cpu_model_features(v, "x86_64", "qemu64", &again, &error), 0);
        ck_assert_ptr_eq(again, qemu64);
}
END_TEST

START_TEST(test_expand_errors)
{
        g_autofree char *error = NULL;
        GHashTable *set = NULL;

        ck_assert_int_eq(virt_cpu_model_features(v, NULL, "Bogus-Lake", &set, &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "Bogus-Lake"));
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(virt_cpu_model_features(v, "aarch64", "cortex-a57", &set, &error), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_expand_fixtures)
{
        g_autoptr(CpuDesc) westmere = load("intel-westmere-xeon-e7-4830.xml");
        g_autoptr(CpuDesc) icelake = load("intel-icelake-server.xml");
        g_autoptr(CpuDesc) rome = load("amd-rome-epyc-7502.xml");
        g_autoptr(CpuDesc) milan = load("amd-milan-epyc-7713.xml");
        g_autoptr(GHashTable) w = features_of(westmere), i = features_of(icelake), r = features_of(rome),
                              m = features_of(milan);

        ck_assert(has(w, "aes") && has(w, "pclmuldq") && has(w, "vmx") && !has(w, "avx"));
        ck_assert(has(i, "vaes") && has(i, "vpclmulqdq") && has(i, "gfni") && has(i, "sha-ni"));
        ck_assert(has(i, "avx512vbmi2") && has(i, "avx512ifma") && has(i, "fsrm"));
        ck_assert(has(r, "sha-ni") && has(r, "avx2") && !has(r, "vaes") && !has(r, "avx512f"));
        ck_assert(has(m, "vaes") && has(m, "vpclmulqdq") && has(m, "sha-ni") && !has(m, "avx512f"));
}
END_TEST

START_TEST(test_baseline_haswell_skylake)
{
        static const char *const names[] = {"intel-haswell-xeon-e5-2650-v3.xml",
                                            "intel-skylake-xeon-gold-6148.xml"};
        g_autoptr(CpuDesc) haswell = load(names[0]), skylake = load(names[1]);
        g_autoptr(GHashTable) base = NULL, h = features_of(haswell), s = features_of(skylake);
        VirtCpuBaseline b;

        baseline(names, 2, VIRT_CPU_API_AUTO, NULL, &b, &base); /* no hypervisor API here: the map */
        ck_assert_int_eq(b.api, VIRT_CPU_API_MAP);
        ck_assert_str_eq(b.cpu->model, "Haswell-noTSX");
        ck_assert_str_eq(b.cpu->vendor, "Intel");
        ck_assert(has(base, "avx2") && has(base, "aes") && has(base, "fma"));
        {
                g_autoptr(GPtrArray) haswell_loses = cpu_features_missing(h, base, true);
                g_autoptr(GPtrArray) skylake_loses = cpu_features_missing(s, base, true);
                g_autofree char *text = joined(skylake_loses);

                ck_assert_uint_eq(haswell_loses->len, 0);
                ck_assert_str_eq(text,
                                 "rdseed avx512f avx512bw avx512dq avx512vl avx512cd adx clflushopt clwb "
                                 "xsavec xsaves");
        }
        virt_cpu_baseline_clear(&b);
}
END_TEST

START_TEST(test_baseline_generations)
{
        static const char *const intel[] = {
            "intel-westmere-xeon-e7-4830.xml", "intel-haswell-xeon-e5-2650-v3.xml",
            "intel-skylake-xeon-gold-6148.xml", "intel-cascadelake-xeon-platinum-8268.xml",
            "intel-icelake-server.xml"};
        static const char *const newer[] = {"intel-skylake-xeon-gold-6148.xml",
                                            "intel-cascadelake-xeon-platinum-8268.xml",
                                            "intel-icelake-server.xml"};
        static const char *const amd[] = {"amd-rome-epyc-7502.xml", "amd-milan-epyc-7713.xml"};
        g_autoptr(GHashTable) all = NULL, sky = NULL, epyc = NULL;
        g_autoptr(CpuDesc) milan = load("amd-milan-epyc-7713.xml");
        g_autoptr(GHashTable) m = features_of(milan);
        VirtCpuBaseline b;

        baseline(intel, G_N_ELEMENTS(intel), VIRT_CPU_API_MAP, NULL, &b, &all);
        ck_assert_str_eq(b.cpu->model, "Westmere"); /* the oldest decides */
        ck_assert(has(all, "aes") && !has(all, "avx"));
        virt_cpu_baseline_clear(&b);

        baseline(newer, G_N_ELEMENTS(newer), VIRT_CPU_API_MAP, NULL, &b, &sky);
        ck_assert_str_eq(b.cpu->model, "Skylake-Server");
        ck_assert(has(sky, "avx512f") && !has(sky, "avx512vnni") && !has(sky, "vaes"));
        virt_cpu_baseline_clear(&b);

        baseline(amd, G_N_ELEMENTS(amd), VIRT_CPU_API_MAP, NULL, &b, &epyc);
        ck_assert_str_eq(b.cpu->model, "EPYC-Rome");
        ck_assert_str_eq(b.cpu->vendor, "AMD");
        {
                g_autoptr(GPtrArray) milan_loses = cpu_features_missing(m, epyc, true);
                g_autofree char *text = joined(milan_loses);
                /* Zen 3 added VAES, VPCLMULQDQ, ERMS/FSRM and PCID/INVPCID; this Rome has x2APIC off. */
                ck_assert_str_eq(text, "vaes vpclmulqdq erms fsrm pcid invpcid x2apic");
        }
        virt_cpu_baseline_clear(&b);
}
END_TEST

START_TEST(test_baseline_refusals)
{
        g_autoptr(CpuDesc) rome = load("amd-rome-epyc-7502.xml"), icelake = load("intel-icelake-server.xml");
        g_autofree char *error = NULL, *xml = NULL;
        g_autoptr(CpuDesc) removes = NULL;
        CpuDesc *mixed[] = {rome, icelake};
        VirtCpuBaseline b;
        const char *labels[] = {"rome.xml", "icelake.xml"};
        int r;

        /* Intel and AMD have no common model. */
        r = virt_cpu_baseline(v, mixed, labels, 2, VIRT_CPU_API_AUTO, NULL, &b, &error);
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "vendors"));
        ck_assert_ptr_null(b.cpu);
        g_clear_pointer(&error, g_free);

        /* A domcapabilities host-model that disables a feature of its model: the map cannot take it. */
        xml = g_strdup("<domainCapabilities><arch>x86_64</arch><cpu><mode name='host-model' supported='yes'>"
                       "<model fallback='forbid'>Westmere</model><vendor>Intel</vendor>"
                       "<feature policy='disable' name='aes'/></mode></cpu></domainCapabilities>");
        ck_assert_int_eq(cpu_desc_parse(xml, strlen(xml), &removes, &error), 0);
        r = virt_cpu_baseline(v, &removes, labels + 1, 1, VIRT_CPU_API_MAP, NULL, &b, &error);
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "icelake.xml"));
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(virt_cpu_baseline(v, NULL, NULL, 0, VIRT_CPU_API_MAP, NULL, &b, &error), -EINVAL);
}
END_TEST

START_TEST(test_test_driver_limits)
{
        g_autoptr(CpuDesc) haswell = load("intel-haswell-xeon-e5-2650-v3.xml");
        g_autofree char *error = NULL, *reason = NULL;
        const CpuDesc *host = NULL, *host_model = NULL;
        VirtCpuCompare cmp;
        VirtCpuBaseline b;
        CpuAdvice *a = NULL;
        virDomainPtr dom;

        /* What libvirt's test driver does not do; the real libvirtd tests cover these. */
        ck_assert_int_eq(virt_cpu_compare(v, haswell, VIRT_CPU_API_AUTO, NULL, &cmp, NULL, &reason, &error),
                         -EOPNOTSUPP);
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(virt_cpu_host_model(v, NULL, "x86_64", NULL, NULL, &host_model, &error),
                         -EOPNOTSUPP);
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(virt_cpu_baseline(v, &haswell, NULL, 1, VIRT_CPU_API_HYPERVISOR, NULL, &b, &error),
                         -EOPNOTSUPP);
        g_clear_pointer(&error, g_free);
        /* Its host CPU has no model, so there is nothing to advise against. */
        ck_assert_int_eq(virt_cpu_host(v, &host, &error), 0);
        ck_assert_ptr_null(host->model);
        dom = virDomainLookupByName(conn, "test");
        ck_assert_ptr_nonnull(dom);
        ck_assert_int_eq(virt_cpu_advise(v, dom, &a, &error), -ENODATA);
        ck_assert_ptr_nonnull(strstr(error, "no host CPU model"));
        virDomainFree(dom);
}
END_TEST

START_TEST(test_domain_cpu)
{
        static const char transient[] = "<domain type='test'><name>cpu-pass</name><memory>65536</memory>"
                                        "<vcpu>1</vcpu><os><type arch='x86_64'>hvm</type></os>"
                                        "<cpu mode='host-passthrough'/></domain>";
        g_autofree char *error = NULL;
        g_autoptr(CpuDesc) cpu = NULL, pass = NULL, gone = NULL;
        virDomainPtr dom = virDomainLookupByName(conn, "test");

        ck_assert_ptr_nonnull(dom);
        ck_assert_int_eq(virt_cpu_domain(dom, &cpu, &error), 0);
        virDomainFree(dom);
        ck_assert_int_eq(cpu->mode, CPU_MODE_CUSTOM);
        ck_assert_ptr_null(cpu->model); /* the test domain has no <cpu> */
        ck_assert_str_eq(cpu->arch, "i686");
        ck_assert_str_eq(cpu_desc_guest_model(cpu), "qemu32");
        ck_assert_str_eq(cpu->domain_name, "test");

        dom = virDomainCreateXML(conn, transient, 0);
        ck_assert_ptr_nonnull(dom);
        ck_assert_int_eq(virt_cpu_domain(dom, &pass, &error), 0);
        ck_assert_int_eq(pass->mode, CPU_MODE_HOST_PASSTHROUGH);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert_int_eq(virt_cpu_domain(dom, &gone, &error), -ENOENT); /* transient and stopped: gone */
        ck_assert_ptr_null(gone);
        virDomainFree(dom);
}
END_TEST

/* ---------------------------------------------------------------- a real libvirtd */

START_TEST(test_real_host)
{
        g_autofree char *error = NULL;
        g_autoptr(GHashTable) set = NULL;
        const CpuDesc *host = NULL;

        ck_assert_int_eq(virt_cpu_host(v, &host, &error), 0);
        ck_assert_ptr_nonnull(host->model);
        ck_assert(strcmp(host->vendor, "Intel") == 0 || strcmp(host->vendor, "AMD") == 0);
        set = features_of(host);
        ck_assert(has(set, "sse2") && has(set, "lm"));
        printf("# host CPU: %s, %s, %u features\n", host->model, host->vendor, g_hash_table_size(set));
}
END_TEST

START_TEST(test_real_baseline_hypervisor)
{
        static const char *const names[] = {"intel-haswell-xeon-e5-2650-v3.xml",
                                            "intel-skylake-xeon-gold-6148.xml"};
        g_autoptr(GHashTable) base = NULL, map_base = NULL;
        VirtCpuBaseline b, m;

        baseline(names, 2, VIRT_CPU_API_AUTO, g_getenv("PLACEMENTD_CPU_VIRTTYPE"), &b, &base);
        ck_assert_int_eq(b.api, VIRT_CPU_API_HYPERVISOR);
        ck_assert(b.migratable);
        ck_assert_str_eq(b.cpu->vendor, "Intel");
        printf("# hypervisor baseline of Haswell + Skylake: %s, %u features\n", b.cpu->model,
               g_hash_table_size(base));

        /* The map alone gives the same answer as on test:///default, and drops invtsc and xsaves. */
        baseline(names, 2, VIRT_CPU_API_MAP, NULL, &m, &map_base);
        ck_assert_int_eq(m.api, VIRT_CPU_API_MAP);
        ck_assert(m.migratable);
        ck_assert_str_eq(m.cpu->model, "Haswell-noTSX");
        ck_assert(!has(map_base, "invtsc") && !has(map_base, "xsaves"));
        virt_cpu_baseline_clear(&b);
        virt_cpu_baseline_clear(&m);
}
END_TEST

START_TEST(test_real_compare)
{
        g_autofree char *error = NULL, *reason = NULL;
        g_autoptr(CpuDesc) other = NULL;
        const CpuDesc *host = NULL, *host_model = NULL;
        VirtCpuCompare cmp;
        VirtCpuApi api;

        ck_assert_int_eq(virt_cpu_host(v, &host, &error), 0);
        /* The host's own CPU against the host CPU. */
        ck_assert_int_eq(virt_cpu_compare(v, host, VIRT_CPU_API_MAP, NULL, &cmp, &api, &reason, &error), 0);
        ck_assert_int_eq(api, VIRT_CPU_API_MAP);
        ck_assert_msg(cmp != VIRT_CPU_INCOMPATIBLE, "host CPU incompatible with itself: %s", reason);
        /* A CPU of the other vendor: incompatible, and libvirt says why. */
        other = load(strcmp(host->vendor, "Intel") == 0 ? "amd-rome-epyc-7502.xml"
                                                        : "intel-haswell-xeon-e5-2650-v3.xml");
        ck_assert_int_eq(virt_cpu_compare(v, other, VIRT_CPU_API_AUTO, NULL, &cmp, &api, &reason, &error),
                         0);
        ck_assert_int_eq(cmp, VIRT_CPU_INCOMPATIBLE);
        ck_assert_int_eq(api, VIRT_CPU_API_HYPERVISOR);
        ck_assert_ptr_nonnull(reason);
        ck_assert_ptr_nonnull(strstr(reason, "vendor"));
        g_clear_pointer(&reason, g_free);
        /* What the hypervisor offers as host-model, it can run. */
        ck_assert_int_eq(virt_cpu_host_model(v, NULL, "x86_64", NULL, g_getenv("PLACEMENTD_CPU_VIRTTYPE"),
                                             &host_model, &error),
                         0);
        ck_assert_ptr_nonnull(host_model->model);
        ck_assert_int_eq(virt_cpu_compare(v, host_model, VIRT_CPU_API_HYPERVISOR,
                                          g_getenv("PLACEMENTD_CPU_VIRTTYPE"), &cmp, &api, &reason, &error),
                         0);
        ck_assert_msg(cmp != VIRT_CPU_INCOMPATIBLE, "host-model %s incompatible: %s", host_model->model,
                      reason);
        printf("# host-model: %s (%s)\n", host_model->model, virt_cpu_compare_to_string(cmp));
}
END_TEST

START_TEST(test_real_baseline_host_model)
{
        g_autofree char *error = NULL;
        const CpuDesc *host_model = NULL;
        VirtCpuBaseline b;
        int r;

        ck_assert_int_eq(virt_cpu_host_model(v, NULL, "x86_64", NULL, g_getenv("PLACEMENTD_CPU_VIRTTYPE"),
                                             &host_model, &error),
                         0);
        /* Guest-style input (policies) goes to the hypervisor API as is. */
        r = virt_cpu_baseline(v, (CpuDesc *const *)&host_model, NULL, 1, VIRT_CPU_API_HYPERVISOR,
                              g_getenv("PLACEMENTD_CPU_VIRTTYPE"), &b, &error);
        ck_assert_msg(r == 0, "%s", error);
        virt_cpu_baseline_clear(&b);
        r = virt_cpu_baseline(v, (CpuDesc *const *)&host_model, NULL, 1, VIRT_CPU_API_MAP, NULL, &b, &error);
        if (cpu_desc_has_absent(host_model))
                ck_assert_int_eq(r, -EINVAL);
        else
                ck_assert_int_eq(r, 0);
        virt_cpu_baseline_clear(&b);
}
END_TEST

/* $PLACEMENTD_CPU_DOMAIN: a running domain with QEMU's default CPU (tests/e2e/cpu.sh starts one). */
START_TEST(test_real_advise_default_cpu)
{
        const char *name = g_getenv("PLACEMENTD_CPU_DOMAIN");
        g_autofree char *error = NULL, *hidden = NULL;
        g_autoptr(CpuAdvice) a = NULL;
        g_autoptr(GHashTable) host_set = NULL;
        const CpuDesc *host = NULL;
        virDomainPtr dom;

        if (!name) {
                printf("# skip: advice for a running domain: set PLACEMENTD_CPU_DOMAIN (tests/e2e/cpu.sh "
                       "does)\n");
                return;
        }
        dom = virDomainLookupByName(conn, name);
        ck_assert_msg(dom, "no domain %s", name);
        ck_assert_int_eq(virt_cpu_advise(v, dom, &a, &error), 0);
        virDomainFree(dom);
        ck_assert_int_eq(virt_cpu_host(v, &host, &error), 0);
        host_set = features_of(host);
        hidden = joined(a->hidden);
        ck_assert_str_eq(a->model, "qemu64");
        ck_assert_int_eq(a->mode, CPU_MODE_CUSTOM);
        ck_assert_msg(!has(host_set, "aes") || strstr(hidden, "aes"), "aes not hidden: %s", hidden);
        ck_assert_msg(!has(host_set, "avx") || strstr(hidden, "avx"), "avx not hidden: %s", hidden);
        ck_assert_ptr_nonnull(a->suggested_model);
        printf("# %s: %s hides %s; host-model %s gives back %u\n", name, a->model, hidden,
               a->suggested_model, a->recovered->len);
}
END_TEST

static Suite *virt_cpu_suite(void)
{
        Suite *s = suite_create("virt-cpu");
        TCase *t = tcase_create("map");
        virConnectPtr probe;

        tcase_add_checked_fixture(t, setup_map, teardown);
        tcase_add_test(t, test_expand_qemu64);
        tcase_add_test(t, test_expand_errors);
        tcase_add_test(t, test_expand_fixtures);
        tcase_add_test(t, test_baseline_haswell_skylake);
        tcase_add_test(t, test_baseline_generations);
        tcase_add_test(t, test_baseline_refusals);
        tcase_add_test(t, test_test_driver_limits);
        tcase_add_test(t, test_domain_cpu);
        suite_add_tcase(s, t);

        if (strcmp(real_uri(), "none") == 0) {
                printf("# skip: hypervisor tests: PLACEMENTD_CPU_URI=none\n");
                return s;
        }
        virt_errors_quiet();
        probe = virConnectOpen(real_uri());
        if (!probe) {
                virErrorPtr e = virGetLastError();
                printf("# skip: hypervisor tests: no libvirtd at %s (%s); tests/e2e/cpu.sh runs them\n",
                       real_uri(), e && e->message ? e->message : "unknown error");
                return s;
        }
        virConnectClose(probe);
        t = tcase_create("hypervisor");
        tcase_add_checked_fixture(t, setup_real, teardown);
        tcase_add_test(t, test_real_host);
        tcase_add_test(t, test_real_baseline_hypervisor);
        tcase_add_test(t, test_real_compare);
        tcase_add_test(t, test_real_baseline_host_model);
        tcase_add_test(t, test_real_advise_default_cpu);
        suite_add_tcase(s, t);
        return s;
}

TEST_MAIN(virt_cpu_suite)
