/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl cpu-advice and cpu-baseline: guest CPU models, straight from libvirt (no daemon). */
#include "placementctl.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <libvirt/virterror.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-features.h"
#include "cpu-json.h"
#include "file-read.h"
#include "text-safe.h"
#include "virt-cpu.h"
#include "virt-domain.h"
#include "virt-event.h"

#define DEFAULT_URI "qemu:///system"

static virConnectPtr open_connection(const char *uri)
{
        virConnectPtr conn;

        virt_errors_quiet();
        conn = virConnectOpen(uri);
        if (!conn) {
                virErrorPtr e = virGetLastError();
                ctl_error("placementctl: cannot connect to %s: %s", uri,
                          e && e->message ? e->message : "unknown error");
        }
        return conn;
}

static void print_json_node(JsonNode *root)
{
        g_autoptr(JsonGenerator) g = json_generator_new();
        g_autofree char *text = NULL, *safe = NULL;

        json_generator_set_root(g, root);
        json_generator_set_pretty(g, TRUE);
        text = json_generator_to_data(g, NULL);
        safe = text_json_safe(text); /* domain names: C1 controls and bidi marks escaped */
        ctl_print_json(safe);
}

static const char *or_unknown(const char *s)
{
        return s ? s : "unknown";
}

/* ---------------------------------------------------------------- cpu-advice */

static void print_feature_lines(const GPtrArray *names, const GPtrArray *offered, bool have_suggestion)
{
        for (unsigned i = 0; i < names->len; i++) {
                const char *name = g_ptr_array_index(names, i);
                const CpuFeatureInfo *info = cpu_feature_info(name);
                bool yes = false;

                for (unsigned j = 0; offered && j < offered->len; j++)
                        yes = yes || strcmp(g_ptr_array_index(offered, j), name) == 0;
                if (have_suggestion)
                        printf("    %-17s %-58s %s\n", name, info ? info->note : "",
                               yes ? "[host-model has it]" : "[not offered]");
                else
                        printf("    %-17s %s\n", name, info ? info->note : "");
        }
}

static void print_names(const char *prefix, const GPtrArray *names)
{
        printf("%s", prefix);
        for (unsigned i = 0; i < names->len; i++)
                printf("%s%s", i ? ", " : "", (const char *)g_ptr_array_index(names, i));
        printf("%s\n", names->len ? "" : "none");
}

static void print_advice(const CpuAdvice *a)
{
        bool suggestion = a->suggested_model != NULL;
        g_autofree char *safe = text_safe(a->domain);

        printf("%s\n", safe);
        if (a->verdict == CPU_VERDICT_HOST_CPU) {
                printf("  cpu:     %s: the guest sees the host's CPU, nothing is hidden by a model\n",
                       cpu_mode_to_string(a->mode));
                return;
        }
        printf("  cpu:     %s%s%s (custom model)\n", a->model, a->vendor ? ", " : "",
               a->vendor ? a->vendor : "");
        if (a->declined->len)
                print_names("  left out by its definition (disable/forbid), not counted: ", a->declined);
        if (a->hidden->len == 0) {
                printf("  hidden:  none of the performance-relevant features the host has\n");
                return;
        }
        printf("  hidden:  %u performance-relevant features the host has:\n", a->hidden->len);
        print_feature_lines(a->hidden, a->recovered, suggestion);
        if (!suggestion) {
                printf("  advice:  no suggestion: the connection has no domain capabilities (host-model)\n");
                return;
        }
        printf("  suggest: <cpu mode='host-model'/> (domain capabilities: %s%s%s)\n", a->suggested_model,
               a->suggested_vendor ? ", " : "", a->suggested_vendor ? a->suggested_vendor : "");
        if (a->verdict == CPU_VERDICT_IMPROVABLE)
                printf("           gives back %u of the %u hidden features\n", a->recovered->len,
                       a->hidden->len);
        else
                printf("           gives back none of them: this hypervisor cannot offer them to guests\n");
        if (a->suggested_loses->len)
                print_names("           but lacks what the guest has now: ", a->suggested_loses);
}

/* As virsh resolves a domain: an ID, then a UUID, then a name. */
static virDomainPtr lookup_domain(virConnectPtr conn, const char *name_or_uuid)
{
        virDomainPtr dom = NULL;
        guint64 id;

        if (g_ascii_string_to_unsigned(name_or_uuid, 10, 1, G_MAXINT, &id, NULL))
                dom = virDomainLookupByID(conn, (int)id);
        if (!dom && strlen(name_or_uuid) == VIR_UUID_STRING_BUFLEN - 1)
                dom = virDomainLookupByUUIDString(conn, name_or_uuid);
        if (!dom)
                dom = virDomainLookupByName(conn, name_or_uuid);
        return dom;
}

static gint compare_domains(gconstpointer a, gconstpointer b)
{
        return strcmp(virDomainGetName(*(virDomainPtr *)a), virDomainGetName(*(virDomainPtr *)b));
}

static void unref_domain(gpointer dom)
{
        virDomainFree(dom);
}

int verb_cpu_advice(Ctl *c, char **args, unsigned nargs)
{
        g_autoptr(GPtrArray) doms = g_ptr_array_new_with_free_func(unref_domain);
        g_autoptr(GPtrArray) advice = g_ptr_array_new_with_free_func((GDestroyNotify)cpu_advice_free);
        g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(VirtCpu) v = NULL;
        g_autofree char *error = NULL;
        const CpuDesc *host = NULL;
        g_autoptr(virConnect) conn = NULL;
        const Ctl *o = c;
        const char *uri = c->uri ? c->uri : (c->uri = DEFAULT_URI);
        int code = EXIT_OK, r;

        conn = open_connection(uri);
        if (!conn)
                return EXIT_RUNTIME;
        v = virt_cpu_new(conn);

        if (nargs == 1) {
                g_autoptr(virDomain) dom = lookup_domain(conn, args[0]);
                if (!dom || virDomainIsActive(dom) != 1) {
                        ctl_error("placementctl cpu-advice: no running domain '%s' on %s", args[0], uri);
                        return EXIT_NO_SUCH_DOMAIN;
                }
                g_ptr_array_add(doms, g_steal_pointer(&dom));
        } else {
                virDomainPtr *list = NULL;
                int n = virConnectListAllDomains(conn, &list, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
                if (n < 0) {
                        virErrorPtr e = virGetLastError();
                        ctl_error("placementctl cpu-advice: listing domains: %s",
                                  e && e->message ? e->message : "unknown error");
                        return EXIT_RUNTIME;
                }
                for (int i = 0; i < n; i++)
                        g_ptr_array_add(doms, list[i]);
                free(list);
                g_ptr_array_sort(doms, compare_domains);
        }

        r = virt_cpu_host(v, &host, &error);
        if (r < 0 || !host->model) {
                ctl_error("placementctl cpu-advice: %s",
                          r < 0
                              ? error
                              : "the connection reports no host CPU model (libvirt's test driver does not)");
                return EXIT_RUNTIME;
        }
        for (unsigned i = 0; i < doms->len; i++) {
                virDomainPtr dom = g_ptr_array_index(doms, i);
                g_autofree char *why = NULL;
                CpuAdvice *a = NULL;

                r = virt_cpu_advise(v, dom, &a, &why);
                if (r == -ENOENT)
                        continue; /* stopped meanwhile */
                if (r < 0) {
                        g_ptr_array_add(errors, g_strdup_printf("%s: %s", virDomainGetName(dom), why));
                        code = EXIT_RUNTIME;
                        continue;
                }
                g_ptr_array_add(advice, a);
        }

        if (o->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "connection");
                json_builder_add_string_value(b, uri);
                json_builder_set_member_name(b, "host");
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "model");
                json_builder_add_string_value(b, or_unknown(host->model));
                json_builder_set_member_name(b, "vendor");
                json_builder_add_string_value(b, or_unknown(host->vendor));
                json_builder_end_object(b);
                json_builder_set_member_name(b, "domains");
                json_builder_begin_array(b);
                for (unsigned i = 0; i < advice->len; i++) {
                        json_builder_begin_object(b);
                        cpu_advice_json_add_members(b, g_ptr_array_index(advice, i));
                        json_builder_end_object(b);
                }
                json_builder_end_array(b);
                cpu_json_add_feature_list(b, "errors", errors);
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                print_json_node(root);
        } else {
                printf("host CPU: %s, %s (%s)\n", or_unknown(host->model), or_unknown(host->vendor), uri);
                if (doms->len == 0)
                        printf("no running domains\n");
                for (unsigned i = 0; i < advice->len; i++) {
                        printf("\n");
                        print_advice(g_ptr_array_index(advice, i));
                }
        }
        for (unsigned i = 0; i < errors->len; i++)
                ctl_error("placementctl cpu-advice: %s", (const char *)g_ptr_array_index(errors, i));
        return code;
}

/* ---------------------------------------------------------------- cpu-baseline */

typedef struct HostResult {
        const char *file;
        CpuDesc *cpu;
        GHashTable *features;
        GPtrArray *loses, *loses_other, *cannot_run;
} HostResult;

static void host_result_clear(HostResult *h)
{
        cpu_desc_free(h->cpu);
        if (h->features)
                g_hash_table_unref(h->features);
        if (h->loses)
                g_ptr_array_unref(h->loses);
        if (h->loses_other)
                g_ptr_array_unref(h->loses_other);
        if (h->cannot_run)
                g_ptr_array_unref(h->cannot_run);
}

static int read_cpu_file(const char *file, CpuDesc **ret)
{
        g_autofree char *text = NULL, *error = NULL;
        size_t len = 0;

        if (file_read_bounded(file, CPU_XML_MAX_BYTES, &text, &len, &error) < 0) {
                ctl_error("placementctl cpu-baseline: %s: %s", file, error);
                return -EINVAL;
        }
        if (cpu_desc_parse(text, len, ret, &error) < 0) {
                ctl_error("placementctl cpu-baseline: %s: %s", file, error);
                return -EINVAL;
        }
        if (!(*ret)->model) {
                ctl_error("placementctl cpu-baseline: %s: the CPU has no <model>", file);
                cpu_desc_free(*ret);
                *ret = NULL;
                return -EINVAL;
        }
        return 0;
}

static void print_baseline_json(const Ctl *o, const VirtCpuBaseline *b, GHashTable *features,
                                const HostResult *hosts, size_t n, int compared, VirtCpuCompare cmp,
                                const char *reason)
{
        g_autoptr(JsonBuilder) j = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autoptr(GPtrArray) all = cpu_feature_set_list(features);
        g_autoptr(GHashTable) none = cpu_feature_set_new();
        g_autoptr(GPtrArray) relevant = cpu_features_missing(features, none, true);

        json_builder_begin_object(j);
        json_builder_set_member_name(j, "connection");
        json_builder_add_string_value(j, o->uri);
        json_builder_set_member_name(j, "api");
        json_builder_add_string_value(j, virt_cpu_api_to_string(b->api));
        json_builder_set_member_name(j, "migratable");
        json_builder_add_boolean_value(j, b->migratable);
        json_builder_set_member_name(j, "model");
        json_builder_add_string_value(j, b->cpu->model);
        json_builder_set_member_name(j, "vendor");
        json_builder_add_string_value(j, or_unknown(b->cpu->vendor));
        json_builder_set_member_name(j, "xml");
        json_builder_add_string_value(j, b->xml);
        cpu_json_add_feature_list(j, "features", all);
        cpu_json_add_feature_list(j, "relevant_features", relevant);
        json_builder_set_member_name(j, "hosts");
        json_builder_begin_array(j);
        for (size_t i = 0; i < n; i++) {
                json_builder_begin_object(j);
                json_builder_set_member_name(j, "file");
                json_builder_add_string_value(j, hosts[i].file);
                json_builder_set_member_name(j, "model");
                json_builder_add_string_value(j, hosts[i].cpu->model);
                json_builder_set_member_name(j, "vendor");
                json_builder_add_string_value(j, or_unknown(hosts[i].cpu->vendor));
                json_builder_set_member_name(j, "can_run");
                json_builder_add_boolean_value(j, hosts[i].cannot_run->len == 0);
                cpu_json_add_feature_list(j, "missing", hosts[i].cannot_run);
                cpu_json_add_feature_list(j, "loses", hosts[i].loses);
                cpu_json_add_feature_list(j, "loses_other", hosts[i].loses_other);
                json_builder_end_object(j);
        }
        json_builder_end_array(j);
        json_builder_set_member_name(j, "this_host");
        if (compared < 0) {
                json_builder_add_null_value(j);
        } else {
                json_builder_begin_object(j);
                json_builder_set_member_name(j, "result");
                json_builder_add_string_value(j, virt_cpu_compare_to_string(cmp));
                json_builder_set_member_name(j, "reason");
                if (reason)
                        json_builder_add_string_value(j, reason);
                else
                        json_builder_add_null_value(j);
                json_builder_end_object(j);
        }
        json_builder_end_object(j);
        root = json_builder_get_root(j);
        print_json_node(root);
}

static void print_baseline_text(const Ctl *o, const VirtCpuBaseline *b, GHashTable *features,
                                const HostResult *hosts, size_t n, int compared, VirtCpuCompare cmp,
                                const char *reason)
{
        g_autoptr(GHashTable) none = cpu_feature_set_new();
        g_autoptr(GPtrArray) relevant = cpu_features_missing(features, none, true);

        printf("Baseline of %zu host CPU%s: %s, %s\n", n, n == 1 ? "" : "s", b->cpu->model,
               or_unknown(b->cpu->vendor));
        printf("  computed by: %s\n", b->api == VIRT_CPU_API_HYPERVISOR
                                          ? "virConnectBaselineHypervisorCPU (limited to what this "
                                            "host's hypervisor can give a guest)"
                                          : "virConnectBaselineCPU (libvirt's CPU map)");
        if (!b->migratable)
                printf("  note: this connection cannot drop features that block migration (invtsc, "
                       "xsaves); leave them out\n");
        if (b->api == VIRT_CPU_API_MAP)
                printf("  note: the CPU map does not know what a hypervisor can give a guest: features "
                       "such as vmx,\n        monitor or ds may remain; the host-model CPUs of 'virsh "
                       "domcapabilities' avoid that\n");
        printf("  %u features, %u of them performance-relevant:\n", g_hash_table_size(features),
               relevant->len);
        print_feature_lines(relevant, NULL, false);
        printf("\n  For the domain definitions:\n");
        {
                g_auto(GStrv) lines = g_strsplit(b->xml, "\n", -1);
                for (unsigned i = 0; lines[i]; i++)
                        if (*lines[i])
                                printf("    %s\n", lines[i]);
        }
        printf("\nWhat each host gives up to run it:\n");
        for (size_t i = 0; i < n; i++) {
                const HostResult *h = &hosts[i];
                printf("  %s (%s, %s): ", h->file, h->cpu->model, or_unknown(h->cpu->vendor));
                if (h->cannot_run->len) {
                        print_names("CANNOT run it, lacks ", h->cannot_run);
                        continue;
                }
                if (h->loses->len == 0)
                        printf("no relevant feature");
                else
                        printf("%u relevant feature%s", h->loses->len, h->loses->len == 1 ? "" : "s");
                printf(" (+%u other%s)\n", h->loses_other->len, h->loses_other->len == 1 ? "" : "s");
                print_feature_lines(h->loses, NULL, false);
        }
        if (compared >= 0)
                printf("\nThis host (%s): %s%s%s\n", o->uri,
                       cmp == VIRT_CPU_INCOMPATIBLE ? "cannot run it" : "can run it",
                       reason ? ": " : (cmp == VIRT_CPU_IDENTICAL ? " (identical)" : ""),
                       reason ? reason : "");
}

int verb_cpu_baseline(Ctl *c, char **args, unsigned nargs)
{
        g_autoptr(VirtCpu) v = NULL;
        g_autoptr(GHashTable) features = NULL;
        g_autofree HostResult *hosts = NULL;
        g_autofree CpuDesc **cpus = NULL;
        g_autofree char *error = NULL, *reason = NULL;
        VirtCpuBaseline b = {0};
        VirtCpuCompare cmp = VIRT_CPU_INCOMPATIBLE;
        g_autoptr(virConnect) conn = NULL;
        const Ctl *o = c;
        const char *uri = c->uri ? c->uri : (c->uri = DEFAULT_URI);
        int code = EXIT_OK, compared = -1, r;
        size_t n = nargs;

        hosts = g_new0(HostResult, n);
        cpus = g_new0(CpuDesc *, n);
        for (size_t i = 0; i < n; i++) {
                hosts[i].file = args[i];
                if (read_cpu_file(hosts[i].file, &hosts[i].cpu) < 0) {
                        code = EXIT_USAGE;
                        goto out;
                }
                cpus[i] = hosts[i].cpu;
        }
        conn = open_connection(uri);
        if (!conn) {
                code = EXIT_RUNTIME;
                goto out;
        }
        v = virt_cpu_new(conn);

        r = virt_cpu_baseline(v, cpus, (const char *const *)args, n,
                              o->map_only ? VIRT_CPU_API_MAP : VIRT_CPU_API_AUTO, o->virttype, &b, &error);
        if (r >= 0)
                r = virt_cpu_features(v, b.cpu, &features, &error);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                g_autofree char *why = NULL;
                r = virt_cpu_features(v, hosts[i].cpu, &hosts[i].features, &why);
                if (r < 0)
                        error = g_strdup_printf("%s: %s", hosts[i].file, why);
        }
        if (r < 0) {
                ctl_error("placementctl cpu-baseline: %s", error);
                code = r == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                hosts[i].loses = cpu_features_missing(hosts[i].features, features, true);
                hosts[i].loses_other = cpu_features_missing_other(hosts[i].features, features);
                hosts[i].cannot_run = cpu_features_missing(features, hosts[i].features, false);
        }
        /* Whether this host runs it, when the connection can tell. */
        g_clear_pointer(&error, g_free);
        if (virt_cpu_compare(v, b.cpu, b.api, o->virttype, &cmp, NULL, &reason, &error) == 0)
                compared = 1;

        if (o->json)
                print_baseline_json(o, &b, features, hosts, n, compared, cmp, reason);
        else
                print_baseline_text(o, &b, features, hosts, n, compared, cmp, reason);
        for (size_t i = 0; i < n; i++)
                if (hosts[i].cannot_run->len)
                        code = EXIT_RUNTIME; /* libvirt's answer is not what it should be */
out:
        virt_cpu_baseline_clear(&b);
        for (size_t i = 0; i < n; i++)
                host_result_clear(&hosts[i]);
        return code;
}
