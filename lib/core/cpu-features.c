/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpu-features.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* clang-format off */
static const CpuFeatureInfo feature_table[] = {
        {"aes",              "crypto", "AES-NI: AES in hardware (TLS, IPsec, disk encryption)"},
        {"pclmuldq",         "crypto", "carry-less multiply: the GHASH half of AES-GCM, fast CRC32"},
        {"vaes",             "crypto", "AES on 256/512-bit vectors: several AES blocks per instruction"},
        {"vpclmulqdq",       "crypto", "carry-less multiply on wide vectors: GCM and CRC at vector width"},
        {"sha-ni",           "crypto", "SHA-1/SHA-256 instructions (TLS, signatures, content hashing)"},
        {"gfni",             "crypto", "Galois-field instructions: erasure coding, SM4, bit shuffles"},
        {"rdrand",           "crypto", "hardware random numbers"},
        {"rdseed",           "crypto", "hardware entropy for seeding RNGs"},
        {"avx2",             "vector", "256-bit integer vectors: compression, codecs, hashing, databases"},
        {"avx",              "vector", "256-bit floating-point vectors"},
        {"fma",              "vector", "fused multiply-add: numerics, BLAS, ML inference"},
        {"avx512f",          "vector", "AVX-512 foundation: 512-bit vectors"},
        {"avx512bw",         "vector", "AVX-512 byte/word ops: string processing, codecs"},
        {"avx512dq",         "vector", "AVX-512 doubleword/quadword ops"},
        {"avx512vl",         "vector", "AVX-512 instructions on 128/256-bit vectors"},
        {"avx512cd",         "vector", "AVX-512 conflict detection: vectorised scatter/histograms"},
        {"avx512ifma",       "vector", "52-bit integer multiply-add: big-number crypto (RSA)"},
        {"avx512vbmi",       "vector", "AVX-512 byte permutes: base64, parsing"},
        {"avx512vbmi2",      "vector", "AVX-512 compress/expand and shifts: parsing, codecs"},
        {"avx512vnni",       "vector", "int8/int16 dot products: ML inference"},
        {"avx512bitalg",     "vector", "AVX-512 bit counting per byte/word"},
        {"avx512-vpopcntdq", "vector", "AVX-512 population count: bitmaps, search indexes"},
        {"avx512-bf16",      "vector", "bfloat16 dot products: ML"},
        {"avx512-fp16",      "vector", "half-precision arithmetic: ML"},
        {"avx-vnni",         "vector", "VNNI dot products on 256-bit vectors: ML inference"},
        {"amx-tile",         "vector", "AMX tile registers: matrix multiply (needed by amx-int8/bf16)"},
        {"amx-int8",         "vector", "AMX int8 matrix multiply: ML inference"},
        {"amx-bf16",         "vector", "AMX bfloat16 matrix multiply: ML"},
        {"f16c",             "vector", "half-precision float conversion"},
        {"sse4.2",           "vector", "string compare and CRC32C (storage, networking)"},
        {"sse4.1",           "vector", "SSE4.1 blends, rounding, dot products"},
        {"ssse3",            "vector", "byte shuffles: codecs, base64, crypto"},
        {"pni",              "vector", "SSE3 (libvirt calls it pni)"},
        {"sse4a",            "vector", "AMD SSE4a extras"},
        {"popcnt",           "bits",   "population count: bitmaps, databases, chess engines"},
        {"abm",              "bits",   "LZCNT: leading-zero count (compression, allocators)"},
        {"bmi1",             "bits",   "bit manipulation (TZCNT, ANDN): compression, parsers"},
        {"bmi2",             "bits",   "PDEP/PEXT, MULX, shifts without flags: crypto, compression"},
        {"adx",              "bits",   "multi-precision add with carry: RSA/ECC big numbers"},
        {"movbe",            "bits",   "byte-swapping loads/stores: network byte order"},
        {"erms",             "memory", "fast REP MOVSB/STOSB: memcpy/memset"},
        {"fsrm",             "memory", "fast short REP MOV: small memcpy"},
        {"clflushopt",       "memory", "fast cache-line flush (persistent memory, DMA buffers)"},
        {"clwb",             "memory", "cache-line write-back without eviction (persistent memory)"},
        {"movdiri",          "memory", "direct stores: device work submission"},
        {"movdir64b",        "memory", "64-byte direct stores: device work submission"},
        {"pdpe1gb",          "memory", "1 GiB pages: fewer TLB misses for large heaps"},
        {"pcid",             "system", "process-context IDs: keeps the TLB across context switches"},
        {"invpcid",          "system", "targeted TLB invalidation: cheaper Meltdown (KPTI) mitigation"},
        {"xsave",            "system", "XSAVE: needed for the OS to enable AVX at all"},
        {"xsaveopt",         "system", "saves only modified vector state: faster context switches"},
        {"xsavec",           "system", "compacted vector state save: faster context switches"},
        {"xsaves",           "system", "supervisor state save: faster context switches"},
        {"fsgsbase",         "system", "user-mode FS/GS base access: faster thread switches"},
        {"rdtscp",           "system", "timestamp with CPU id: cheap clock_gettime and per-CPU data"},
        {"rdpid",            "system", "read processor id: cheap getcpu()"},
        {"tsc-deadline",     "system", "TSC-deadline timer: fewer timer exits to the hypervisor"},
        {"x2apic",           "system", "x2APIC: interrupts and IPIs with fewer exits"},
};
/* clang-format on */

const CpuFeatureInfo *cpu_feature_table(size_t *ret_n)
{
        *ret_n = G_N_ELEMENTS(feature_table);
        return feature_table;
}

const CpuFeatureInfo *cpu_feature_info(const char *name)
{
        for (size_t i = 0; name && i < G_N_ELEMENTS(feature_table); i++)
                if (strcmp(feature_table[i].name, name) == 0)
                        return &feature_table[i];
        return NULL;
}

/* ---------------------------------------------------------------- names */

static const char *const policy_names[] = {"none", "force", "require", "optional", "disable", "forbid"};
static const char *const mode_names[] = {"host", "custom", "host-model", "host-passthrough", "maximum"};
static const char *const source_names[] = {"cpu", "capabilities", "domcapabilities", "domain"};
static const char *const verdict_names[] = {"host-cpu", "ok", "improvable", "not-offered"};

const char *cpu_policy_to_string(CpuPolicy p)
{
        return (unsigned)p < G_N_ELEMENTS(policy_names) ? policy_names[p] : "?";
}

const char *cpu_mode_to_string(CpuMode m)
{
        return (unsigned)m < G_N_ELEMENTS(mode_names) ? mode_names[m] : "?";
}

const char *cpu_source_to_string(CpuSource s)
{
        return (unsigned)s < G_N_ELEMENTS(source_names) ? source_names[s] : "?";
}

const char *cpu_verdict_to_string(CpuVerdict v)
{
        return (unsigned)v < G_N_ELEMENTS(verdict_names) ? verdict_names[v] : "?";
}

bool cpu_policy_present(CpuPolicy p)
{
        return p != CPU_POLICY_DISABLE && p != CPU_POLICY_FORBID;
}

/* ---------------------------------------------------------------- descriptions */

void cpu_desc_free(CpuDesc *d)
{
        if (!d)
                return;
        if (d->features) {
                for (unsigned i = 0; i < d->features->len; i++)
                        g_free(g_array_index(d->features, CpuFeature, i).name);
                g_array_unref(d->features);
        }
        g_free(d->arch);
        g_free(d->model);
        g_free(d->vendor);
        g_free(d->domain_name);
        g_free(d->domain_type);
        g_free(d->machine);
        g_free(d->emulator);
        g_free(d);
}

bool cpu_desc_has_absent(const CpuDesc *d)
{
        for (unsigned i = 0; i < d->features->len; i++)
                if (!cpu_policy_present(g_array_index(d->features, CpuFeature, i).policy))
                        return true;
        return false;
}

int cpu_desc_policy(const CpuDesc *d, const char *name)
{
        for (unsigned i = 0; i < d->features->len; i++) {
                const CpuFeature *f = &g_array_index(d->features, CpuFeature, i);
                if (strcmp(f->name, name) == 0)
                        return (int)f->policy;
        }
        return -1;
}

const char *cpu_desc_guest_model(const CpuDesc *d)
{
        if (d->model)
                return d->model;
        return d->arch && strcmp(d->arch, "i686") == 0 ? CPU_DEFAULT_MODEL_I686 : CPU_DEFAULT_MODEL_X86_64;
}

/* ---------------------------------------------------------------- parser */

typedef enum {
        TEXT_NONE,
        TEXT_MODEL,
        TEXT_VENDOR,
        TEXT_ARCH,
        TEXT_OUTER_ARCH, /* <domainCapabilities><arch> */
        TEXT_DOMAIN_NAME,
        TEXT_EMULATOR,
} TextTarget;

typedef struct Parser {
        CpuDesc *d;
        GPtrArray *stack;   /* element names */
        unsigned cpu_depth; /* stack depth of the CPU element while inside it, else 0 */
        bool found;         /* a CPU element was seen (only the first one counts) */
        bool host_model_unsupported;
        char *outer_arch; /* domcapabilities' or the domain's <os><type arch=> */
        TextTarget text;
        GString *buf;
} Parser;

static const char *attr(const char **names, const char **values, const char *name)
{
        for (unsigned i = 0; names[i]; i++)
                if (strcmp(names[i], name) == 0)
                        return values[i];
        return NULL;
}

static bool path_is(Parser *p, unsigned n, ...)
{
        va_list ap;
        bool ok = p->stack->len == n;

        va_start(ap, n);
        for (unsigned i = 0; ok && i < n; i++)
                ok = strcmp(g_ptr_array_index(p->stack, i), va_arg(ap, const char *)) == 0;
        va_end(ap);
        return ok;
}

/* Model, vendor, arch and feature names: libvirt's spelling, nothing that needs escaping. */
static bool valid_name(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > CPU_XML_MAX_NAME)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!g_ascii_isalnum(s[i]) && !strchr("_.+-", s[i]))
                        return false;
        return true;
}

static bool parse_policy(const char *s, CpuPolicy *ret)
{
        if (!s) {
                *ret = CPU_POLICY_NONE;
                return true;
        }
        for (unsigned i = CPU_POLICY_FORCE; i < G_N_ELEMENTS(policy_names); i++)
                if (strcmp(s, policy_names[i]) == 0) {
                        *ret = (CpuPolicy)i;
                        return true;
                }
        return false;
}

static bool parse_mode(const char *s, CpuMode *ret)
{
        if (!s || strcmp(s, "custom") == 0) {
                *ret = CPU_MODE_CUSTOM;
                return true;
        }
        for (unsigned i = CPU_MODE_HOST_MODEL; i < G_N_ELEMENTS(mode_names); i++)
                if (strcmp(s, mode_names[i]) == 0) {
                        *ret = (CpuMode)i;
                        return true;
                }
        return false;
}

static bool parse_number(const char *s, unsigned *ret)
{
        guint64 n;
        if (!s || !g_ascii_string_to_unsigned(s, 10, 0, 1u << 20, &n, NULL))
                return false;
        *ret = (unsigned)n;
        return true;
}

#define FAIL(...)                                                                                           \
        do {                                                                                                \
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, __VA_ARGS__);            \
                return;                                                                                     \
        } while (0)

static void start_feature(Parser *p, const char **names, const char **values, GError **error)
{
        const char *name = attr(names, values, "name"), *policy = attr(names, values, "policy");
        CpuFeature f = {0};

        if (!name || !valid_name(name))
                FAIL("<feature> needs a valid name (got '%s')", name ? name : "");
        if (!parse_policy(policy, &f.policy))
                FAIL("feature '%s' has an unknown policy '%s'", name, policy);
        if (cpu_desc_policy(p->d, name) >= 0)
                FAIL("feature '%s' is listed twice", name);
        if (p->d->features->len >= CPU_XML_MAX_FEATURES)
                FAIL("more than %u features", CPU_XML_MAX_FEATURES);
        f.name = g_strdup(name);
        g_array_append_val(p->d->features, f);
}

static void start_cpu_child(Parser *p, const char *element, const char **names, const char **values,
                            GError **error)
{
        CpuDesc *d = p->d;

        if (strcmp(element, "model") == 0)
                p->text = TEXT_MODEL;
        else if (strcmp(element, "vendor") == 0)
                p->text = TEXT_VENDOR;
        else if (strcmp(element, "arch") == 0)
                p->text = TEXT_ARCH;
        else if (strcmp(element, "feature") == 0)
                start_feature(p, names, values, error);
        else if (strcmp(element, "signature") == 0) {
                const char *stepping = attr(names, values, "stepping");
                if (!parse_number(attr(names, values, "family"), &d->family) ||
                    !parse_number(attr(names, values, "model"), &d->model_number) ||
                    (stepping && !parse_number(stepping, &d->stepping)))
                        FAIL("<signature> needs numeric family and model");
                d->have_signature = true;
        }
}

/* Enters the CPU element (the first one only). */
static void enter_cpu(Parser *p, CpuMode mode)
{
        p->found = true;
        p->cpu_depth = p->stack->len;
        p->d->mode = mode;
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
                     gpointer user_data, GError **error)
{
        Parser *p = user_data;
        CpuDesc *d = p->d;
        CpuMode mode;
        (void)ctx;

        g_ptr_array_add(p->stack, g_strdup(element));
        g_string_truncate(p->buf, 0);
        p->text = TEXT_NONE;

        if (p->stack->len == 1) {
                if (strcmp(element, "cpu") == 0) {
                        const char *m = attr(names, values, "mode");
                        d->source = CPU_SOURCE_CPU;
                        if (!m && !attr(names, values, "match"))
                                mode = CPU_MODE_HOST;
                        else if (!parse_mode(m, &mode))
                                FAIL("unknown CPU mode '%s'", m);
                        enter_cpu(p, mode);
                } else if (strcmp(element, "capabilities") == 0) {
                        d->source = CPU_SOURCE_CAPABILITIES;
                } else if (strcmp(element, "domainCapabilities") == 0) {
                        d->source = CPU_SOURCE_DOMCAPS;
                } else if (strcmp(element, "domain") == 0) {
                        const char *type = attr(names, values, "type");
                        d->source = CPU_SOURCE_DOMAIN;
                        d->mode = CPU_MODE_CUSTOM; /* also when it has no <cpu> */
                        if (type && !valid_name(type))
                                FAIL("invalid domain type '%s'", type);
                        d->domain_type = g_strdup(type);
                } else {
                        FAIL("<%s> is not a libvirt CPU, capabilities, domcapabilities or domain document",
                             element);
                }
                return;
        }
        if (p->cpu_depth) {
                if (p->stack->len == p->cpu_depth + 1)
                        start_cpu_child(p, element, names, values, error);
                return;
        }
        switch (d->source) {
        case CPU_SOURCE_CAPABILITIES:
                if (!p->found && path_is(p, 3, "capabilities", "host", "cpu"))
                        enter_cpu(p, CPU_MODE_HOST);
                break;
        case CPU_SOURCE_DOMCAPS:
                if (path_is(p, 2, "domainCapabilities", "arch"))
                        p->text = TEXT_OUTER_ARCH;
                else if (!p->found && path_is(p, 3, "domainCapabilities", "cpu", "mode")) {
                        const char *name = attr(names, values, "name"),
                                   *supported = attr(names, values, "supported");
                        if (!name || strcmp(name, "host-model") != 0)
                                break;
                        if (supported && strcmp(supported, "yes") != 0)
                                p->host_model_unsupported = true;
                        else
                                enter_cpu(p, CPU_MODE_HOST);
                }
                break;
        case CPU_SOURCE_DOMAIN:
                if (path_is(p, 2, "domain", "name"))
                        p->text = TEXT_DOMAIN_NAME;
                else if (path_is(p, 3, "domain", "devices", "emulator"))
                        p->text = TEXT_EMULATOR;
                else if (path_is(p, 3, "domain", "os", "type")) {
                        const char *arch = attr(names, values, "arch"),
                                   *machine = attr(names, values, "machine");
                        if ((arch && !valid_name(arch)) || (machine && !valid_name(machine)))
                                FAIL("invalid <os><type> arch or machine");
                        g_free(p->outer_arch);
                        p->outer_arch = g_strdup(arch);
                        g_free(d->machine);
                        d->machine = g_strdup(machine);
                } else if (!p->found && path_is(p, 2, "domain", "cpu")) {
                        const char *m = attr(names, values, "mode");
                        if (!parse_mode(m, &mode))
                                FAIL("unknown CPU mode '%s'", m);
                        enter_cpu(p, mode);
                }
                break;
        case CPU_SOURCE_CPU:
                break;
        }
}

/* Stores the element's text into *field after checking it. */
static void take_text(Parser *p, char **field, const char *what, bool is_name, GError **error)
{
        char *s = g_strstrip(p->buf->str);

        if (is_name ? !valid_name(s) : *s == '\0')
                FAIL("invalid %s '%s'", what, s);
        g_free(*field);
        *field = g_strdup(s);
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer user_data, GError **error)
{
        Parser *p = user_data;
        CpuDesc *d = p->d;
        (void)ctx;
        (void)element;

        switch (p->text) {
        case TEXT_MODEL:
                take_text(p, &d->model, "CPU model", true, error);
                break;
        case TEXT_VENDOR:
                take_text(p, &d->vendor, "CPU vendor", true, error);
                break;
        case TEXT_ARCH:
                take_text(p, &d->arch, "CPU arch", true, error);
                break;
        case TEXT_OUTER_ARCH:
                take_text(p, &p->outer_arch, "arch", true, error);
                break;
        case TEXT_DOMAIN_NAME:
                take_text(p, &d->domain_name, "domain name", false, error);
                break;
        case TEXT_EMULATOR:
                take_text(p, &d->emulator, "emulator path", false, error);
                break;
        case TEXT_NONE:
                break;
        }
        p->text = TEXT_NONE;
        if (p->cpu_depth == p->stack->len)
                p->cpu_depth = 0;
        g_ptr_array_remove_index(p->stack, p->stack->len - 1);
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer user_data,
                    GError **error)
{
        Parser *p = user_data;
        (void)ctx;

        if (p->text == TEXT_NONE)
                return;
        if (p->buf->len + len > 4096)
                FAIL("element text too long");
        g_string_append_len(p->buf, text, (gssize)len);
}

int cpu_desc_parse(const char *xml, size_t len, CpuDesc **ret, char **ret_error)
{
        static const GMarkupParser callbacks = {
            .start_element = on_start, .end_element = on_end, .text = on_text};
        g_autoptr(CpuDesc) d = g_new0(CpuDesc, 1);
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) stack = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GString) buf = g_string_new(NULL);
        g_autofree char *outer_arch = NULL;
        Parser p = {.d = d, .stack = stack, .buf = buf};
        GMarkupParseContext *ctx;
        bool ok;

        d->features = g_array_new(FALSE, TRUE, sizeof(CpuFeature));
        if (len > CPU_XML_MAX_BYTES) {
                *ret_error = g_strdup_printf("CPU XML is larger than %u bytes", CPU_XML_MAX_BYTES);
                return -EINVAL;
        }
        ctx = g_markup_parse_context_new(&callbacks, 0, &p, NULL);
        ok = g_markup_parse_context_parse(ctx, xml, (gssize)len, &error) &&
             g_markup_parse_context_end_parse(ctx, &error);
        g_markup_parse_context_free(ctx);
        outer_arch = p.outer_arch;
        if (!ok) {
                *ret_error = g_strdup_printf("invalid CPU XML: %s", error->message);
                return -EINVAL;
        }
        if (d->source == CPU_SOURCE_DOMCAPS && !p.found) {
                *ret_error =
                    g_strdup(p.host_model_unsupported ? "the hypervisor does not support host-model CPUs"
                                                      : "domain capabilities without a host-model CPU");
                return -ENODATA;
        }
        if (d->source == CPU_SOURCE_CAPABILITIES && !p.found) {
                *ret_error = g_strdup("capabilities without a host CPU");
                return -ENODATA;
        }
        if (!d->arch && outer_arch)
                d->arch = g_steal_pointer(&outer_arch);
        *ret = g_steal_pointer(&d);
        return 0;
}

/* ---------------------------------------------------------------- formatting */

char *cpu_desc_format(const CpuDesc *d, CpuXmlStyle style, const char *default_arch)
{
        g_autoptr(GString) s = g_string_new("<cpu>\n");
        const char *arch = d->arch ? d->arch : default_arch;

        if (!d->model || (style == CPU_XML_HOST && (cpu_desc_has_absent(d) || !arch)))
                return NULL;
        /* Every name was checked by the parser or comes from libvirt: nothing to escape. */
        if (style == CPU_XML_HOST) {
                g_string_append_printf(s, "  <arch>%s</arch>\n", arch);
                g_string_append_printf(s, "  <model>%s</model>\n", d->model);
        } else {
                g_string_append_printf(s, "  <model fallback='forbid'>%s</model>\n", d->model);
        }
        if (d->vendor)
                g_string_append_printf(s, "  <vendor>%s</vendor>\n", d->vendor);
        if (style == CPU_XML_HOST && d->have_signature)
                g_string_append_printf(s, "  <signature family='%u' model='%u' stepping='%u'/>\n", d->family,
                                       d->model_number, d->stepping);
        for (unsigned i = 0; i < d->features->len; i++) {
                const CpuFeature *f = &g_array_index(d->features, CpuFeature, i);
                if (style == CPU_XML_HOST)
                        g_string_append_printf(s, "  <feature name='%s'/>\n", f->name);
                else
                        g_string_append_printf(
                            s, "  <feature policy='%s' name='%s'/>\n",
                            f->policy == CPU_POLICY_NONE ? "require" : cpu_policy_to_string(f->policy),
                            f->name);
        }
        g_string_append(s, "</cpu>\n");
        return g_string_free(g_steal_pointer(&s), FALSE);
}

/* ---------------------------------------------------------------- feature sets */

GHashTable *cpu_feature_set_new(void)
{
        return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

void cpu_feature_set_add(GHashTable *set, const char *name)
{
        g_hash_table_add(set, g_strdup(name));
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *cpu_feature_set_list(GHashTable *set)
{
        GPtrArray *list = g_ptr_array_new_with_free_func(g_free);
        GHashTableIter it;
        gpointer key;

        g_hash_table_iter_init(&it, set);
        while (g_hash_table_iter_next(&it, &key, NULL))
                g_ptr_array_add(list, g_strdup(key));
        g_ptr_array_sort(list, compare_names);
        return list;
}

GHashTable *cpu_desc_effective(const CpuDesc *d, GHashTable *model_features)
{
        GHashTable *set = cpu_feature_set_new();
        GHashTableIter it;
        gpointer key;

        if (model_features) {
                g_hash_table_iter_init(&it, model_features);
                while (g_hash_table_iter_next(&it, &key, NULL))
                        cpu_feature_set_add(set, key);
        }
        for (unsigned i = 0; i < d->features->len; i++) {
                const CpuFeature *f = &g_array_index(d->features, CpuFeature, i);
                if (cpu_policy_present(f->policy))
                        cpu_feature_set_add(set, f->name);
                else
                        g_hash_table_remove(set, f->name);
        }
        return set;
}

GPtrArray *cpu_features_missing(GHashTable *have, GHashTable *lack, bool relevant_only)
{
        GPtrArray *list;
        GHashTableIter it;
        gpointer key;

        if (!relevant_only) {
                list = g_ptr_array_new_with_free_func(g_free);
                g_hash_table_iter_init(&it, have);
                while (g_hash_table_iter_next(&it, &key, NULL))
                        if (!g_hash_table_contains(lack, key))
                                g_ptr_array_add(list, g_strdup(key));
                g_ptr_array_sort(list, compare_names);
                return list;
        }
        list = g_ptr_array_new_with_free_func(g_free);
        for (size_t i = 0; i < G_N_ELEMENTS(feature_table); i++)
                if (g_hash_table_contains(have, feature_table[i].name) &&
                    !g_hash_table_contains(lack, feature_table[i].name))
                        g_ptr_array_add(list, g_strdup(feature_table[i].name));
        return list;
}

GPtrArray *cpu_features_missing_other(GHashTable *have, GHashTable *lack)
{
        GPtrArray *all = cpu_features_missing(have, lack, false);

        for (unsigned i = all->len; i-- > 0;)
                if (cpu_feature_info(g_ptr_array_index(all, i)))
                        g_ptr_array_remove_index(all, i);
        return all;
}

bool cpu_feature_set_is_subset(GHashTable *sub, GHashTable *super)
{
        GHashTableIter it;
        gpointer key;

        g_hash_table_iter_init(&it, sub);
        while (g_hash_table_iter_next(&it, &key, NULL))
                if (!g_hash_table_contains(super, key))
                        return false;
        return true;
}

/* ---------------------------------------------------------------- advice */

void cpu_advice_free(CpuAdvice *a)
{
        if (!a)
                return;
        g_free(a->domain);
        g_free(a->model);
        g_free(a->vendor);
        g_free(a->suggested_model);
        g_free(a->suggested_vendor);
        if (a->hidden)
                g_ptr_array_unref(a->hidden);
        if (a->recovered)
                g_ptr_array_unref(a->recovered);
        if (a->suggested_loses)
                g_ptr_array_unref(a->suggested_loses);
        if (a->declined)
                g_ptr_array_unref(a->declined);
        g_free(a);
}

CpuAdvice *cpu_advice_compute(const char *domain, const CpuDesc *guest, GHashTable *guest_set,
                              GHashTable *host_set, const CpuDesc *suggested, GHashTable *suggested_set)
{
        CpuAdvice *a = g_new0(CpuAdvice, 1);

        a->domain = g_strdup(domain);
        a->mode = guest->mode;
        a->vendor = g_strdup(guest->vendor);
        a->recovered = g_ptr_array_new_with_free_func(g_free);
        a->suggested_loses = g_ptr_array_new_with_free_func(g_free);
        a->declined = g_ptr_array_new_with_free_func(g_free);
        if (guest->mode == CPU_MODE_HOST_MODEL || guest->mode == CPU_MODE_HOST_PASSTHROUGH ||
            guest->mode == CPU_MODE_MAXIMUM) {
                a->model = g_strdup(guest->model);
                a->hidden = g_ptr_array_new_with_free_func(g_free);
                a->verdict = CPU_VERDICT_HOST_CPU;
                return a;
        }
        a->model = g_strdup(cpu_desc_guest_model(guest));
        a->hidden = cpu_features_missing(host_set, guest_set, true);
        /* what the definition disables or forbids the user chose to leave out: a model that would turn
         * it on again is no advice */
        for (unsigned i = 0; i < a->hidden->len;) {
                int policy = cpu_desc_policy(guest, g_ptr_array_index(a->hidden, i));
                if (policy >= 0 && !cpu_policy_present((CpuPolicy)policy))
                        g_ptr_array_add(a->declined, g_ptr_array_steal_index(a->hidden, i));
                else
                        i++;
        }
        if (suggested && suggested_set) {
                a->suggested_model = g_strdup(suggested->model);
                a->suggested_vendor = g_strdup(suggested->vendor);
                for (unsigned i = 0; i < a->hidden->len; i++)
                        if (g_hash_table_contains(suggested_set, g_ptr_array_index(a->hidden, i)))
                                g_ptr_array_add(a->recovered, g_strdup(g_ptr_array_index(a->hidden, i)));
                g_ptr_array_unref(a->suggested_loses);
                a->suggested_loses = cpu_features_missing(guest_set, suggested_set, true);
        }
        if (a->hidden->len == 0)
                a->verdict = CPU_VERDICT_OK;
        else if (a->recovered->len > 0)
                a->verdict = CPU_VERDICT_IMPROVABLE;
        else
                a->verdict = CPU_VERDICT_NOT_OFFERED;
        return a;
}
