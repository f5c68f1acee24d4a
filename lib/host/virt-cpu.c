/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "virt-cpu.h"

#include <errno.h>
#include <libvirt/virterror.h>
#include <stdlib.h>
#include <string.h>

#include "text-safe.h"

struct VirtCpu {
        virConnectPtr conn;
        GHashTable *models;      /* "arch/model" -> feature set */
        GHashTable *host_models; /* "emulator|arch|machine|virttype" -> CpuDesc */
        CpuDesc *host;
};

VirtCpu *virt_cpu_new(virConnectPtr conn)
{
        VirtCpu *v = g_new0(VirtCpu, 1);

        virConnectRef(conn);
        v->conn = conn;
        v->models =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_hash_table_unref);
        v->host_models =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)cpu_desc_free);
        return v;
}

void virt_cpu_free(VirtCpu *v)
{
        if (!v)
                return;
        g_hash_table_unref(v->models);
        g_hash_table_unref(v->host_models);
        cpu_desc_free(v->host);
        virConnectClose(v->conn);
        g_free(v);
}

const char *virt_cpu_api_to_string(VirtCpuApi api)
{
        switch (api) {
        case VIRT_CPU_API_HYPERVISOR:
                return "hypervisor";
        case VIRT_CPU_API_MAP:
                return "map";
        case VIRT_CPU_API_AUTO:
                break;
        }
        return "auto";
}

const char *virt_cpu_compare_to_string(VirtCpuCompare c)
{
        switch (c) {
        case VIRT_CPU_IDENTICAL:
                return "identical";
        case VIRT_CPU_SUPERSET:
                return "superset";
        case VIRT_CPU_INCOMPATIBLE:
                break;
        }
        return "incompatible";
}

/* ---------------------------------------------------------------- libvirt errors */

static int last_error_code(void)
{
        virErrorPtr e = virGetLastError();
        return e ? e->code : VIR_ERR_INTERNAL_ERROR;
}

static bool last_error_is_unsupported_flags(void)
{
        virErrorPtr e = virGetLastError();
        return e && e->code == VIR_ERR_INVALID_ARG && e->message && strstr(e->message, "unsupported flags");
}

/* Converts libvirt's last error into a negative errno and "what: message" in *ret_error. */
static int failed(const char *what, char **ret_error)
{
        virErrorPtr e = virGetLastError();
        const char *message = e && e->message ? e->message : "unknown libvirt error";
        int r;

        switch (e ? e->code : VIR_ERR_INTERNAL_ERROR) {
        case VIR_ERR_NO_SUPPORT:
                r = -EOPNOTSUPP;
                break;
        case VIR_ERR_NO_DOMAIN:
                r = -ENOENT;
                break;
        case VIR_ERR_OPERATION_DENIED: /* a read-only connection */
        case VIR_ERR_AUTH_FAILED:
                r = -EACCES;
                break;
        case VIR_ERR_XML_ERROR:
        case VIR_ERR_XML_DETAIL:
        case VIR_ERR_CONFIG_UNSUPPORTED:
        case VIR_ERR_OPERATION_FAILED: /* "CPU vendors do not match" */
        case VIR_ERR_INVALID_ARG:
        case VIR_ERR_CPU_INCOMPATIBLE:
                r = -EINVAL;
                break;
        case VIR_ERR_INTERNAL_ERROR: /* "Unknown CPU model X" / "Unknown CPU feature X" */
                r = strstr(message, "Unknown CPU") ? -EINVAL : -EIO;
                break;
        default:
                r = -EIO;
                break;
        }
        if (ret_error) {
                g_autofree char *shown = text_terminal_safe(message);
                *ret_error = g_strdup_printf("%s: %s", what, shown);
        }
        return r;
}

/* Takes a string libvirt allocated: a GLib copy, the original freed. */
static char *take_string(char *s)
{
        char *copy = g_strdup(s);
        free(s);
        return copy;
}

static int parse_answer(char *raw, const char *what, CpuDesc **ret, char **ret_error)
{
        g_autofree char *xml = take_string(raw);
        g_autofree char *error = NULL;
        int r = cpu_desc_parse(xml, strlen(xml), ret, &error);

        if (r < 0)
                *ret_error = g_strdup_printf("%s: %s", what, error);
        return r;
}

static bool is_x86(const char *arch)
{
        return !arch || strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0;
}

/* ---------------------------------------------------------------- expansion */

int virt_cpu_model_features(VirtCpu *v, const char *arch, const char *model, GHashTable **ret,
                            char **ret_error)
{
        g_autofree char *key = g_strdup_printf("%s/%s", arch ? arch : "x86_64", model);
        g_autofree char *xml = NULL, *what = NULL;
        g_autoptr(CpuDesc) query = NULL, answer = NULL;
        GHashTable *set = g_hash_table_lookup(v->models, key);
        const char *xmls[1];
        char *raw;

        if (set) {
                *ret = set;
                return 0;
        }
        if (!is_x86(arch)) {
                *ret_error = g_strdup_printf("only x86 CPUs are understood, not %s", arch);
                return -EOPNOTSUPP;
        }
        query = g_new0(CpuDesc, 1);
        query->features = g_array_new(FALSE, TRUE, sizeof(CpuFeature));
        query->arch = g_strdup(arch ? arch : "x86_64");
        query->model = g_strdup(model);
        xml = cpu_desc_format(query, CPU_XML_HOST, NULL);
        xmls[0] = xml;
        what = g_strdup_printf("expanding CPU model %s", model);
        raw = virConnectBaselineCPU(v->conn, xmls, 1, VIR_CONNECT_BASELINE_CPU_EXPAND_FEATURES);
        if (!raw)
                return failed(what, ret_error);
        if (parse_answer(raw, what, &answer, ret_error) < 0)
                return -EIO;
        /* The expansion lists every feature of the model: its effective set needs no model. */
        set = cpu_desc_effective(answer, NULL);
        g_hash_table_insert(v->models, g_steal_pointer(&key), set);
        *ret = set;
        return 0;
}

int virt_cpu_features(VirtCpu *v, const CpuDesc *d, GHashTable **ret, char **ret_error)
{
        GHashTable *model = NULL;
        int r = virt_cpu_model_features(v, d->arch, cpu_desc_guest_model(d), &model, ret_error);

        if (r < 0)
                return r;
        *ret = cpu_desc_effective(d, model);
        return 0;
}

/* ---------------------------------------------------------------- capabilities */

int virt_cpu_host(VirtCpu *v, const CpuDesc **ret, char **ret_error)
{
        char *raw;
        int r;

        if (!v->host) {
                raw = virConnectGetCapabilities(v->conn);
                if (!raw)
                        return failed("reading the host capabilities", ret_error);
                r = parse_answer(raw, "reading the host capabilities", &v->host, ret_error);
                if (r < 0)
                        return r;
        }
        *ret = v->host;
        return 0;
}

int virt_cpu_host_model(VirtCpu *v, const char *emulator, const char *arch, const char *machine,
                        const char *virttype, const CpuDesc **ret, char **ret_error)
{
        g_autofree char *key = g_strdup_printf("%s|%s|%s|%s", emulator ? emulator : "", arch ? arch : "",
                                               machine ? machine : "", virttype ? virttype : "");
        CpuDesc *d = g_hash_table_lookup(v->host_models, key);
        char *raw;
        int r;

        if (!d) {
                raw = virConnectGetDomainCapabilities(v->conn, emulator, arch, machine, virttype, 0);
                if (!raw)
                        return failed("reading the domain capabilities", ret_error);
                r = parse_answer(raw, "reading the domain capabilities", &d, ret_error);
                if (r < 0)
                        return r;
                g_hash_table_insert(v->host_models, g_steal_pointer(&key), d);
        }
        *ret = d;
        return 0;
}

/* ---------------------------------------------------------------- baseline and comparison */

void virt_cpu_baseline_clear(VirtCpuBaseline *b)
{
        cpu_desc_free(b->cpu);
        g_free(b->xml);
        *b = (VirtCpuBaseline){0};
}

/* A host-style CPU when the description is one (nothing removed, an arch), else a guest-style CPU. */
static char *format_for_hypervisor(const CpuDesc *d)
{
        if (d->mode == CPU_MODE_HOST && d->arch && !cpu_desc_has_absent(d))
                return cpu_desc_format(d, CPU_XML_HOST, NULL);
        return cpu_desc_format(d, CPU_XML_GUEST, NULL);
}

static int format_all(CpuDesc *const *cpus, const char *const *labels, size_t n, VirtCpuApi api,
                      GPtrArray *xmls, char **ret_error)
{
        for (size_t i = 0; i < n; i++) {
                g_autofree char *label =
                    labels && labels[i] ? g_strdup(labels[i]) : g_strdup_printf("CPU %zu", i + 1);
                char *xml;

                if (!cpus[i]->model) {
                        *ret_error = g_strdup_printf("%s: the CPU has no model", label);
                        return -EINVAL;
                }
                if (!is_x86(cpus[i]->arch)) {
                        *ret_error = g_strdup_printf("%s: only x86 CPUs are understood, not %s", label,
                                                     cpus[i]->arch);
                        return -EOPNOTSUPP;
                }
                xml = api == VIRT_CPU_API_MAP ? cpu_desc_format(cpus[i], CPU_XML_HOST, "x86_64")
                                              : format_for_hypervisor(cpus[i]);
                if (!xml) {
                        *ret_error = g_strdup_printf(
                            "%s: the CPU removes features from its model (%s), which libvirt's CPU "
                            "map baseline cannot express; give the <cpu> of 'virsh capabilities' "
                            "or use a connection with virConnectBaselineHypervisorCPU",
                            label, cpus[i]->model);
                        return -EINVAL;
                }
                g_ptr_array_add(xmls, xml);
        }
        g_ptr_array_add(xmls, NULL);
        return 0;
}

static const char *baseline_arch(CpuDesc *const *cpus, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (cpus[i]->arch)
                        return cpus[i]->arch;
        return "x86_64";
}

int virt_cpu_baseline(VirtCpu *v, CpuDesc *const *cpus, const char *const *labels, size_t n, VirtCpuApi api,
                      const char *virttype, VirtCpuBaseline *ret, char **ret_error)
{
        g_autoptr(GPtrArray) xmls = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *error = NULL;
        char *raw = NULL;
        bool migratable = true;
        int r;

        *ret = (VirtCpuBaseline){0};
        if (n == 0) {
                *ret_error = g_strdup("no CPUs to baseline");
                return -EINVAL;
        }
        if (api != VIRT_CPU_API_MAP) {
                r = format_all(cpus, labels, n, VIRT_CPU_API_HYPERVISOR, xmls, ret_error);
                if (r < 0)
                        return r;
                raw = virConnectBaselineHypervisorCPU(v->conn, NULL, baseline_arch(cpus, n), NULL, virttype,
                                                      (const char **)xmls->pdata, (unsigned)n,
                                                      VIR_CONNECT_BASELINE_CPU_MIGRATABLE);
                if (!raw && (api == VIRT_CPU_API_HYPERVISOR || last_error_code() != VIR_ERR_NO_SUPPORT))
                        return failed("computing the baseline CPU (virConnectBaselineHypervisorCPU)",
                                      ret_error);
                if (raw)
                        api = VIRT_CPU_API_HYPERVISOR;
                g_ptr_array_set_size(xmls, 0);
        }
        if (!raw) {
                api = VIRT_CPU_API_MAP;
                r = format_all(cpus, labels, n, VIRT_CPU_API_MAP, xmls, ret_error);
                if (r < 0)
                        return r;
                raw = virConnectBaselineCPU(v->conn, (const char **)xmls->pdata, (unsigned)n,
                                            VIR_CONNECT_BASELINE_CPU_MIGRATABLE);
                if (!raw && last_error_is_unsupported_flags()) {
                        migratable = false;
                        raw = virConnectBaselineCPU(v->conn, (const char **)xmls->pdata, (unsigned)n, 0);
                }
                if (!raw)
                        return failed("computing the baseline CPU (virConnectBaselineCPU)", ret_error);
        }
        ret->xml = take_string(raw);
        r = cpu_desc_parse(ret->xml, strlen(ret->xml), &ret->cpu, &error);
        if (r < 0) {
                *ret_error = g_strdup_printf("reading the baseline CPU: %s", error);
                virt_cpu_baseline_clear(ret);
                return -EIO;
        }
        ret->api = api;
        ret->migratable = migratable;
        return 0;
}

int virt_cpu_compare(VirtCpu *v, const CpuDesc *cpu, VirtCpuApi api, const char *virttype,
                     VirtCpuCompare *ret, VirtCpuApi *ret_api, char **ret_reason, char **ret_error)
{
        const unsigned flags = VIR_CONNECT_COMPARE_CPU_FAIL_INCOMPATIBLE;
        g_autofree char *xml = format_for_hypervisor(cpu);
        int r = VIR_CPU_COMPARE_ERROR;

        if (ret_reason)
                *ret_reason = NULL;
        if (!xml) {
                *ret_error = g_strdup("comparing a CPU without a model");
                return -EINVAL;
        }
        if (api != VIRT_CPU_API_MAP) {
                r = virConnectCompareHypervisorCPU(v->conn, NULL, cpu->arch, NULL, virttype, xml, flags);
                if (r == VIR_CPU_COMPARE_ERROR && api == VIRT_CPU_API_AUTO &&
                    last_error_code() == VIR_ERR_NO_SUPPORT)
                        api = VIRT_CPU_API_MAP;
                else
                        api = VIRT_CPU_API_HYPERVISOR;
        }
        if (api == VIRT_CPU_API_MAP)
                r = virConnectCompareCPU(v->conn, xml, flags);
        if (r == VIR_CPU_COMPARE_ERROR && last_error_code() == VIR_ERR_CPU_INCOMPATIBLE) {
                virErrorPtr e = virGetLastError();
                if (ret_reason)
                        *ret_reason = text_terminal_safe(e->message);
                r = VIR_CPU_COMPARE_INCOMPATIBLE;
        }
        if (r == VIR_CPU_COMPARE_ERROR)
                return failed(api == VIRT_CPU_API_MAP ? "comparing with the host CPU (virConnectCompareCPU)"
                                                      : "comparing with the hypervisor's CPU "
                                                        "(virConnectCompareHypervisorCPU)",
                              ret_error);
        if (ret_api)
                *ret_api = api;
        *ret = r == VIR_CPU_COMPARE_IDENTICAL  ? VIRT_CPU_IDENTICAL
               : r == VIR_CPU_COMPARE_SUPERSET ? VIRT_CPU_SUPERSET
                                               : VIRT_CPU_INCOMPATIBLE;
        return 0;
}

/* ---------------------------------------------------------------- domains */

static int domain_failed(virDomainPtr dom, const char *what, char **ret_error)
{
        int r = failed(what, ret_error);
        return r == -ENOENT || virDomainIsActive(dom) != 1 ? -ENOENT : r;
}

static int read_definition(virDomainPtr dom, unsigned flags, CpuDesc **ret, char **ret_error)
{
        char *raw = virDomainGetXMLDesc(dom, flags);

        if (!raw)
                return domain_failed(dom, "reading the domain definition", ret_error);
        return parse_answer(raw, "reading the domain definition", ret, ret_error);
}

int virt_cpu_domain(virDomainPtr dom, CpuDesc **ret, char **ret_error)
{
        g_autoptr(CpuDesc) live = NULL, config = NULL;
        g_autofree char *ignored = NULL;
        int r = read_definition(dom, 0, &live, ret_error);

        if (r < 0)
                return r;
        /* The persistent definition only says which mode the user asked for: best effort. */
        if (live->mode == CPU_MODE_CUSTOM && virDomainIsPersistent(dom) == 1 &&
            read_definition(dom, VIR_DOMAIN_XML_INACTIVE, &config, &ignored) == 0 &&
            config->mode != CPU_MODE_CUSTOM)
                live->mode = config->mode;
        *ret = g_steal_pointer(&live);
        return 0;
}

int virt_cpu_advise(VirtCpu *v, virDomainPtr dom, CpuAdvice **ret, char **ret_error)
{
        g_autoptr(CpuDesc) guest = NULL;
        g_autoptr(GHashTable) host_set = NULL, guest_set = NULL, suggested_set = NULL;
        g_autofree char *why_none = NULL, *ignored = NULL;
        const CpuDesc *host = NULL, *suggested = NULL;
        const char *name = virDomainGetName(dom);
        int r;

        r = virt_cpu_domain(dom, &guest, ret_error);
        if (r < 0)
                return r;
        if (!is_x86(guest->arch)) {
                *ret_error =
                    g_strdup_printf("%s: only x86 guests are understood, not %s", name, guest->arch);
                return -EOPNOTSUPP;
        }
        r = virt_cpu_host(v, &host, ret_error);
        if (r < 0)
                return r;
        if (!host->model) {
                *ret_error =
                    g_strdup("the connection reports no host CPU model (libvirt's test driver does not)");
                return -ENODATA;
        }
        r = virt_cpu_features(v, host, &host_set, ret_error);
        if (r < 0)
                return r;
        if (guest->mode == CPU_MODE_CUSTOM) {
                r = virt_cpu_features(v, guest, &guest_set, ret_error);
                if (r < 0)
                        return r;
                /* No suggestion where the driver has no domain capabilities or no host-model. */
                r = virt_cpu_host_model(v, guest->emulator, guest->arch, guest->machine, guest->domain_type,
                                        &suggested, &why_none);
                if (r == -EIO) {
                        *ret_error = g_steal_pointer(&why_none);
                        return r;
                }
                if (r < 0 || virt_cpu_features(v, suggested, &suggested_set, &ignored) < 0)
                        suggested = NULL;
        }
        *ret = cpu_advice_compute(name, guest, guest_set, host_set, suggested, suggested_set);
        return 0;
}
