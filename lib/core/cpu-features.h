/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Guest CPU models, pure: which x86 features matter for performance and what each speeds up, a reader
 * of libvirt's CPU XML, and the set arithmetic behind placementctl cpu-advice and cpu-baseline.
 *
 * A CpuDesc is a CPU as libvirt describes it: a named model (a bundle of features from libvirt's CPU
 * map, /usr/share/libvirt/cpu_map/) plus features added to or taken away from it. Only libvirt knows
 * what a model contains, so turning a CpuDesc into its full feature set takes two steps: the libvirt
 * adapter (virt-cpu.h) expands the model name, then cpu_desc_effective() applies the features listed
 * here. Feature names are libvirt's (x86_features.xml): "pclmuldq", "sse4.1", "sha-ni", "tsc-deadline".
 *
 * A feature set is a GHashTable used as a set of strings (keys owned, values unused).
 */

#include <glib.h>
#include <stdbool.h>

#define CPU_XML_MAX_BYTES    (16u << 20) /* capabilities of a large host are ~1 MiB */
#define CPU_XML_MAX_FEATURES 1024u       /* libvirt 9.0 knows ~210 x86 features */
#define CPU_XML_MAX_NAME     64u

/* Model used by QEMU (and libvirt) when a domain names none. */
#define CPU_DEFAULT_MODEL_X86_64 "qemu64"
#define CPU_DEFAULT_MODEL_I686   "qemu32"

/* ---------------------------------------------------------------- performance-relevant features */

typedef struct CpuFeatureInfo {
        const char *name;  /* libvirt's name */
        const char *group; /* "crypto", "vector", "bits", "memory", "system" */
        const char *note;  /* one line: what it speeds up */
} CpuFeatureInfo;

/* The table, in the order reports list features (most consequential first); *ret_n its length. */
const CpuFeatureInfo *cpu_feature_table(size_t *ret_n);
/* The entry of a feature, or NULL when the feature is not in the performance-relevant list. */
const CpuFeatureInfo *cpu_feature_info(const char *name);

/* ---------------------------------------------------------------- CPU descriptions */

typedef enum CpuPolicy {
        CPU_POLICY_NONE, /* a host's description: the CPU has it */
        CPU_POLICY_FORCE,
        CPU_POLICY_REQUIRE,
        CPU_POLICY_OPTIONAL,
        CPU_POLICY_DISABLE,
        CPU_POLICY_FORBID,
} CpuPolicy;

typedef enum CpuMode {
        CPU_MODE_HOST,   /* a host's CPU (capabilities, bare <cpu> with <arch>), or host-model of domcaps */
        CPU_MODE_CUSTOM, /* a named model (a domain without <cpu> gets QEMU's default model) */
        CPU_MODE_HOST_MODEL,
        CPU_MODE_HOST_PASSTHROUGH,
        CPU_MODE_MAXIMUM,
} CpuMode;

typedef enum CpuSource {
        CPU_SOURCE_CPU,          /* a bare <cpu> element (API output, libvirt's test data) */
        CPU_SOURCE_CAPABILITIES, /* <capabilities><host><cpu> (virsh capabilities) */
        CPU_SOURCE_DOMCAPS, /* <domainCapabilities><cpu><mode name='host-model'> (virsh domcapabilities) */
        CPU_SOURCE_DOMAIN,  /* <domain><cpu> (virsh dumpxml) */
} CpuSource;

typedef struct CpuFeature {
        char *name;
        CpuPolicy policy;
} CpuFeature;

typedef struct CpuDesc {
        CpuSource source;
        CpuMode mode;
        char *arch;   /* NULL if not given */
        char *model;  /* NULL if not given */
        char *vendor; /* NULL if not given */
        bool have_signature;
        unsigned family, model_number, stepping;
        GArray *features; /* CpuFeature, in document order, names unique */
        /* Only from a <domain>, else NULL: */
        char *domain_name, *domain_type, *machine, *emulator;
} CpuDesc;

void cpu_desc_free(CpuDesc *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CpuDesc, cpu_desc_free)

/*
 * Parses the CPU out of a libvirt document: a bare <cpu>, virsh capabilities (the host's <cpu>), virsh
 * domcapabilities (its host-model CPU) or a domain definition (its <cpu>; a domain without one is a
 * custom CPU without a model). Returns 0 and a new CpuDesc in *ret; -EINVAL when the XML is malformed,
 * too large or has bad values, -ENODATA when the document holds no CPU (a domcapabilities whose
 * host-model is not supported). *ret_error receives a message (caller frees).
 */
int cpu_desc_parse(const char *xml, size_t len, CpuDesc **ret, char **ret_error);

const char *cpu_policy_to_string(CpuPolicy p);
const char *cpu_mode_to_string(CpuMode m);
const char *cpu_source_to_string(CpuSource s);
/* True for the policies under which a guest has the feature (none, force, require, optional). */
bool cpu_policy_present(CpuPolicy p);
/* True if the description takes any feature away from its model (disable, forbid). */
bool cpu_desc_has_absent(const CpuDesc *d);
/* Policy of a listed feature, or -1 when the description does not mention it. */
int cpu_desc_policy(const CpuDesc *d, const char *name);
/* The model a guest CPU really runs: its own, or QEMU's default for the arch when it names none. */
const char *cpu_desc_guest_model(const CpuDesc *d);

typedef enum CpuXmlStyle {
        /* <cpu><arch/><model/><vendor/><signature/><feature name=/>: what virConnectBaselineCPU takes.
         * It cannot express removed features. */
        CPU_XML_HOST,
        /* <cpu><model fallback='forbid'/><vendor/><feature policy= name=/>: a guest CPU, as virsh makes of
         * a domcapabilities host-model for virConnectBaselineHypervisorCPU. */
        CPU_XML_GUEST,
} CpuXmlStyle;

/* XML of the description (caller frees); default_arch fills a missing <arch> in CPU_XML_HOST. Returns
 * NULL when the style cannot express it: CPU_XML_HOST with removed features, or without a model. */
char *cpu_desc_format(const CpuDesc *d, CpuXmlStyle style, const char *default_arch);

/* ---------------------------------------------------------------- feature sets */

GHashTable *cpu_feature_set_new(void);
void cpu_feature_set_add(GHashTable *set, const char *name);
/* Sorted names of a set (alphabetical); a new array owning its strings. */
GPtrArray *cpu_feature_set_list(GHashTable *set);

/* The full feature set of a CPU: model_features (the expanded model, may be NULL) plus the features the
 * description adds, minus those it removes. A new set. */
GHashTable *cpu_desc_effective(const CpuDesc *d, GHashTable *model_features);

/* Features in `have` that `lack` does not have: only performance-relevant ones in table order when
 * relevant_only, else all, alphabetical. A new array owning its strings; never NULL. */
GPtrArray *cpu_features_missing(GHashTable *have, GHashTable *lack, bool relevant_only);
/* The irrelevant rest of cpu_features_missing() (alphabetical). */
GPtrArray *cpu_features_missing_other(GHashTable *have, GHashTable *lack);
/* True if every feature of `sub` is in `super`. */
bool cpu_feature_set_is_subset(GHashTable *sub, GHashTable *super);

/* ---------------------------------------------------------------- advice for one guest */

typedef enum CpuVerdict {
        CPU_VERDICT_HOST_CPU,    /* host-passthrough, maximum or host-model: the model hides nothing */
        CPU_VERDICT_OK,          /* a named model that hides no relevant feature of the host */
        CPU_VERDICT_IMPROVABLE,  /* hides features the suggested model would give back */
        CPU_VERDICT_NOT_OFFERED, /* hides features, but the hypervisor offers no model with them */
} CpuVerdict;

typedef struct CpuAdvice {
        char *domain;
        CpuMode mode;
        char *model, *vendor; /* the guest's (model: QEMU's default when it names none) */
        CpuVerdict verdict;
        GPtrArray *hidden;    /* relevant features the host has and the guest lacks, table order */
        GPtrArray *recovered; /* those of `hidden` the suggested model has */
        /* The suggestion (domcapabilities' host-model); suggested_model NULL when there is none. */
        char *suggested_model, *suggested_vendor;
        GPtrArray *suggested_loses; /* relevant features the guest has and the suggestion lacks */
        /* added: relevant features the host has that the guest's definition takes away itself
         * (<feature policy='disable|forbid'>): the user's choice, not counted as hidden */
        GPtrArray *declined;
} CpuAdvice;

void cpu_advice_free(CpuAdvice *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CpuAdvice, cpu_advice_free)

/*
 * Compares a guest CPU with its host. guest_set is the guest's effective feature set (ignored for the
 * host-CPU modes, may be NULL then), host_set the host's, suggested/suggested_set the model the
 * hypervisor offers instead (both NULL when unknown). Returns a new CpuAdvice.
 */
CpuAdvice *cpu_advice_compute(const char *domain, const CpuDesc *guest, GHashTable *guest_set,
                              GHashTable *host_set, const CpuDesc *suggested, GHashTable *suggested_set);

const char *cpu_verdict_to_string(CpuVerdict v);
