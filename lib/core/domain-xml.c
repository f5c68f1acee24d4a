/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "domain-xml.h"
#include "domain-xml-devices.h"
#include "domain-xml-numa.h"
#include "size.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

typedef enum {
        TEXT_NONE,
        TEXT_NAME,
        TEXT_UUID,
        TEXT_VCPU,
        TEXT_MEMORY,
        TEXT_CURRENT_MEMORY,
        TEXT_REASON,
        TEXT_DEFINITION,
        TEXT_IOTHREADS,
        TEXT_PMEM_SIZE,
        TEXT_PMEM_NODE,
        TEXT_PMEM_PATH,
        TEXT_DIMM_SIZE,
        TEXT_DIMM_NODE,
        TEXT_DIMM_PAGESIZE,
        TEXT_DIMM_NODEMASK,
        TEXT_VMEM_REQUESTED,
        TEXT_VMEM_CURRENT,
} TextTarget;

/* An access mode (<memory access=...>, <memoryBacking><access mode=...>): none given, shared, private. */
enum { NVDIMM_DEFAULT, NVDIMM_SHARED, NVDIMM_PRIVATE };

/* An nvdimm that its own access does not share: host RAM unless the domain's <memoryBacking> access
 * shares it (parse()). */
typedef struct PrivateNvdimm {
        uint64_t bytes;
        unsigned node;
        bool given; /* access='private' of its own */
} PrivateNvdimm;

typedef struct Parser {
        DomainSpec *spec;
        GPtrArray *stack;    /* element names */
        char *prefix;        /* our namespace prefix inside <metadata>, once seen */
        unsigned meta_depth; /* depth of our <domain> element, 0 = not inside */
        TextTarget text;
        GString *buf;
        uint64_t memory_unit, current_unit;
        uint64_t memory, current_memory;
        bool have_current_vcpus;
        GString *capture;       /* serialized user elements (the definition snapshot) */
        unsigned capture_depth; /* depth of the element being captured, 0 = none */
        bool definition_overflow;
        unsigned iothread_count;   /* <iothreads> */
        unsigned iothreads_beyond; /* <iothreadids> ids above DOMAIN_XML_MAX_IOTHREADS, left out */
        CpuSet *enabled_vcpus;     /* <vcpus><vcpu id= enabled='yes'>, NULL without <vcpus> */
        bool in_dimm;              /* inside <devices><memory model='dimm|virtio-mem'> */
        uint64_t dimm_unit;        /* of its <target><size> */
        uint64_t dimm_bytes;       /* its size (a virtio-mem device's: what it counts, at its end) */
        int dimm_node;             /* its <target><node>, -1 when none */
        uint64_t dimm_page_unit;   /* of its <source><pagesize> */
        uint64_t dimm_pagesize;    /* its <source><pagesize>, bytes; 0 when none */
        CpuSet *dimm_nodemask;     /* its <source><nodemask>, NULL when none */
        bool in_vmem;              /* ... and it is a virtio-mem device */
        uint64_t vmem_unit;        /* of its <target><requested> or <current> being read */
        uint64_t vmem_requested;   /* its <target><requested>, G_MAXUINT64 when none */
        uint64_t vmem_current;     /* its <target><current> (live XML only), G_MAXUINT64 when none */
        GArray *dimms;             /* DomainMemoryDevice: each DIMM with a size and a guest node */
        uint64_t dimm_total;       /* every DIMM's counted size, with a guest node or not */
        uint64_t vmem_unplugged;   /* what virtio-mem devices may plug beyond what they count */
        bool in_pmem;              /* inside <devices><memory model='nvdimm|virtio-pmem'> */
        uint64_t pmem_unit;        /* of its <target><size> */
        uint64_t pmem_bytes;       /* the sizes of all of them */
        /* the nvdimm being read: its access (NVDIMM_*), whether its <source><path> is a device (/dev/...,
         * DAX), its size and <target><node> (-1 when none) */
        int nvdimm_access;
        bool nvdimm_dev, in_nvdimm;
        uint64_t nvdimm_bytes;
        int nvdimm_node;
        GArray *nvdimms;       /* PrivateNvdimm: each nvdimm no access='shared' of its own shares */
        int backing_access;    /* <memoryBacking><access mode=...>, NVDIMM_* */
        bool vcpus_unreadable; /* a <vcpus><vcpu> without a readable id */
        PciHolder pci_holder;  /* the child of <devices> being read passes a host PCI device through */
        CpuSet *tune_vcpus; /* the vcpus= of the <cachetune>/<memorytune> being read; NULL: none readable */
} Parser;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return b > G_MAXUINT64 - a ? G_MAXUINT64 : a + b;
}

void meta_decision_free(MetaDecision *d)
{
        if (!d)
                return;
        g_free(d->result);
        g_free(d->policy);
        g_free(d->vcpu_pin);
        g_free(d->memory_binding);
        g_free(d->reason);
        g_free(d->uuid);
        cpuset_free(d->nodes);
        cpuset_free(d->emulator);
        cpuset_free(d->threads);
        g_free(d->boot_id);
        cpuset_free(d->iothreads);
        cpuset_free(d->iothread_pin);
        cpuset_free(d->user_iothreads);
        if (d->vcpus) {
                for (unsigned i = 0; i < d->vcpus->len; i++)
                        cpuset_free(g_array_index(d->vcpus, MetaVcpu, i).cpuset);
                g_array_unref(d->vcpus);
        }
        if (d->memory)
                g_array_unref(d->memory);
        g_free(d);
}

void domain_spec_free(DomainSpec *s)
{
        if (!s)
                return;
        g_free(s->name);
        g_free(s->uuid);
        if (s->vcpupins) {
                for (unsigned i = 0; i < s->vcpupins->len; i++)
                        cpuset_free(g_array_index(s->vcpupins, MetaVcpu, i).cpuset);
                g_array_unref(s->vcpupins);
        }
        g_free(s->meta_policy);
        cpuset_free(s->vcpu_cpuset);
        cpuset_free(s->realtime_vcpus);
        cpuset_free(s->realtime_iothreads);
        cpuset_free(s->emulatorpin);
        cpuset_free(s->memory_nodeset);
        cpuset_free(s->memnode_nodeset);
        for (unsigned i = 0; s->memnodes && i < s->memnodes->len; i++)
                cpuset_free(g_array_index(s->memnodes, DomainMemnode, i).nodes);
        if (s->memnodes)
                g_array_unref(s->memnodes);
        meta_decision_free(s->decision);
        g_free(s->definition);
        g_free(s->user_xml);
        g_free(s->decision_error);
        domain_xml_numa_free(s);
        cpuset_free(s->iothreads);
        cpuset_free(s->iothreadpins);
        cpuset_free(s->iothreadpins_live);
        for (unsigned i = 0; s->iothreadpin_cpus && i < s->iothreadpin_cpus->len; i++)
                cpuset_free(g_array_index(s->iothreadpin_cpus, IothreadPin, i).cpus);
        if (s->iothreadpin_cpus)
                g_array_unref(s->iothreadpin_cpus);
        g_free(s->vcpu_ids);
        if (s->pci_devices)
                g_array_unref(s->pci_devices);
        for (unsigned i = 0; s->cache_banks && i < s->cache_banks->len; i++)
                cpuset_free(g_array_index(s->cache_banks, DomainCacheBank, i).vcpus);
        if (s->cache_banks)
                g_array_unref(s->cache_banks);
        g_free(s);
}

const char *domain_xml_attr(const char **names, const char **values, const char *name)
{
        for (unsigned i = 0; names[i]; i++)
                if (strcmp(names[i], name) == 0)
                        return values[i];
        return NULL;
}

static bool in_path(Parser *p, const char *parent, const char *self)
{
        unsigned n = p->stack->len;
        return n >= 2 && strcmp(g_ptr_array_index(p->stack, n - 1), self) == 0 &&
               strcmp(g_ptr_array_index(p->stack, n - 2), parent) == 0;
}

static bool is_top(Parser *p, const char *self)
{
        return p->stack->len == 2 && strcmp(g_ptr_array_index(p->stack, 0), "domain") == 0 &&
               strcmp(g_ptr_array_index(p->stack, 1), self) == 0;
}

int domain_xml_unit_multiplier(const char *unit, uint64_t *ret)
{
        static const struct {
                const char *name;
                uint64_t mult;
        } units[] = {
            {"b", 1},
            {"bytes", 1},
            {"KB", 1000},
            {"k", 1024},
            {"KiB", 1024},
            {"MB", 1000000},
            {"M", 1 << 20},
            {"MiB", 1 << 20},
            {"GB", 1000000000},
            {"G", 1 << 30},
            {"GiB", 1 << 30},
            {"TB", 1000000000000},
            {"T", UINT64_C(1) << 40},
            {"TiB", UINT64_C(1) << 40},
            {"byte", 1},
            {"PB", UINT64_C(1000000000000000)},
            {"P", UINT64_C(1) << 50},
            {"PiB", UINT64_C(1) << 50},
            {"EB", UINT64_C(1000000000000000000)},
            {"E", UINT64_C(1) << 60},
            {"EiB", UINT64_C(1) << 60},
        };
        if (!unit) {
                *ret = 1024;
                return 0;
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(units); i++)
                if (g_ascii_strcasecmp(unit, units[i].name) == 0) {
                        *ret = units[i].mult;
                        return 0;
                }
        return -EINVAL;
}

bool uuid_text_valid(const char *text)
{
        /* 8-4-4-4-12 hexadecimal digits */
        if (!text || strlen(text) != 36)
                return false;
        for (unsigned i = 0; i < 36; i++)
                if ((i == 8 || i == 13 || i == 18 || i == 23) ? text[i] != '-' : !g_ascii_isxdigit(text[i]))
                        return false;
        return true;
}

static bool parse_uint(const char *s, guint64 max, guint64 *ret)
{
        return s && g_ascii_string_to_unsigned(g_strstrip((char *)s), 10, 0, max, ret, NULL);
}

/* The vCPUs of one guest socket by <cpu><topology sockets= dies= clusters= cores= threads=> (dies and
 * clusters 1 when not given, as libvirt has them), when it declares more than one socket; 0 when it does
 * not, or an attribute is not a count. QEMU numbers vCPUs socket by socket: vCPU id / this is its socket. */
static unsigned guest_socket_vcpus(const char **names, const char **values)
{
        static const char *const inner[] = {"dies", "clusters", "cores", "threads"};
        guint64 sockets, per_socket = 1;

        if (!parse_uint(domain_xml_attr(names, values, "sockets"), DOMAIN_XML_MAX_VCPUS, &sockets) ||
            sockets < 2)
                return 0;
        for (unsigned i = 0; i < G_N_ELEMENTS(inner); i++) {
                const char *text = domain_xml_attr(names, values, inner[i]);
                guint64 n = 1;
                if ((text || i >= 2) && (!parse_uint(text, DOMAIN_XML_MAX_VCPUS, &n) || n == 0))
                        return 0;
                per_socket *= n;
                if (per_socket > DOMAIN_XML_MAX_VCPUS)
                        return 0;
        }
        return (unsigned)per_socket;
}

/* A constraint list: valid, bounded (CPUSET_MAX) and not empty. */
static int parse_constraint(const char *text, CpuSet **ret, const char *element, const char *name,
                            GError **error)
{
        g_autofree char *why = NULL;
        g_autoptr(CpuSet) set = NULL;

        if (!text) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "<%s> needs a %s",
                            element, name);
                return -EINVAL;
        }
        if (cpuset_parse(text, &set, &why) < 0 || cpuset_is_empty(set)) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "invalid <%s %s='%s'>: %s", element, name, text,
                            why ? why : "the list is empty");
                return -EINVAL;
        }
        cpuset_free(*ret);
        *ret = g_steal_pointer(&set);
        return 0;
}

/* Whether a <vcpusched>, <emulatorsched> or <iothreadsched> scheduler= is a realtime one. */
static bool realtime_scheduler(const char *scheduler)
{
        return scheduler && (strcmp(scheduler, "fifo") == 0 || strcmp(scheduler, "rr") == 0);
}

/* A <vcpusched> of a realtime scheduler: the vCPUs it names (vcpus=, all of them without it) are realtime,
 * with those of the others. */
static void add_realtime(DomainSpec *s, const char *vcpus, GError **error)
{
        g_autoptr(CpuSet) ids = NULL;
        bool some = s->realtime && s->realtime_vcpus; /* only some, so far */

        if (vcpus && parse_constraint(vcpus, &ids, "vcpusched", "vcpus", error) < 0)
                return;
        if (!ids)
                g_clear_pointer(&s->realtime_vcpus, cpuset_free);
        else if (some)
                cpuset_union(s->realtime_vcpus, ids);
        else if (!s->realtime)
                s->realtime_vcpus = g_steal_pointer(&ids);
        s->realtime = true;
}

/* An <iothreadsched> of a realtime scheduler: the I/O threads its iothreads= names run realtime. An id
 * above DOMAIN_XML_MAX_IOTHREADS (libvirt takes one up to 16383 there) is left out, as <iothreadids> leaves
 * that thread out; a list libvirt cannot read, or one naming nothing, is an error. */
static void add_realtime_iothreads(DomainSpec *s, const char *text, GError **error)
{
        g_autofree char *why = NULL;
        g_autoptr(CpuSet) ids = NULL;
        bool beyond = false;

        if (!text || cpuset_parse_ids(text, &ids, &beyond, &why) < 0 || (cpuset_is_empty(ids) && !beyond)) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            text ? "invalid <iothreadsched iothreads='%s'>: %s"
                                 : "<iothreadsched> needs %s%s",
                            text ? text : "iothreads",
                            why    ? why
                            : text ? "the list is empty"
                                   : "");
                return;
        }
        if (!s->realtime_iothreads)
                s->realtime_iothreads = cpuset_new();
        cpuset_union(s->realtime_iothreads, ids);
}

static int parse_memory_mode(const char *mode, const char *element, MemoryMode *ret, GError **error)
{
        int m = mode ? memory_mode_from_string(mode) : MEMORY_MODE_STRICT;

        if (m < 0) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "invalid <%s mode='%s'> (strict, interleave, preferred, restrictive)", element,
                            mode);
                return -EINVAL;
        }
        *ret = (MemoryMode)m;
        return 0;
}

/* <numatune><memory> and <numatune><memnode>: the nodes the user binds memory to. */
static void start_numatune(Parser *p, const char *element, const char **names, const char **values,
                           GError **error)
{
        DomainSpec *s = p->spec;
        const char *placement = domain_xml_attr(names, values, "placement"),
                   *nodeset = domain_xml_attr(names, values, "nodeset");
        g_autoptr(CpuSet) set = NULL;
        guint64 cell;
        MemoryMode mode = MEMORY_MODE_STRICT;

        if (strcmp(element, "memory") == 0) {
                s->numatune_auto = placement && strcmp(placement, "auto") == 0;
                if (parse_memory_mode(domain_xml_attr(names, values, "mode"), "numatune memory",
                                      &s->memory_mode, error) < 0)
                        return;
                if (nodeset && !s->numatune_auto)
                        parse_constraint(nodeset, &s->memory_nodeset, "numatune memory", "nodeset", error);
                return;
        }
        if (strcmp(element, "memnode") != 0)
                return;
        if (!parse_uint(domain_xml_attr(names, values, "cellid"), DOMAIN_XML_MAX_VCPUS - 1, &cell) ||
            s->nmemnodes >= DOMAIN_XML_MAX_MEMNODES) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            s->nmemnodes >= DOMAIN_XML_MAX_MEMNODES ? "more than %u <memnode> elements"
                                                                    : "<memnode> needs a cellid below %u",
                            s->nmemnodes >= DOMAIN_XML_MAX_MEMNODES ? DOMAIN_XML_MAX_MEMNODES
                                                                    : DOMAIN_XML_MAX_VCPUS);
                return;
        }
        if (parse_memory_mode(domain_xml_attr(names, values, "mode"), "memnode", &mode, error) < 0 ||
            parse_constraint(nodeset, &set, "memnode", "nodeset", error) < 0)
                return;
        if (!s->memnode_nodeset)
                s->memnode_nodeset = cpuset_new();
        cpuset_union(s->memnode_nodeset, set);
        s->nmemnodes++;
        if (!s->memnodes)
                s->memnodes = g_array_new(FALSE, TRUE, sizeof(DomainMemnode));
        g_array_append_val(
            s->memnodes,
            ((DomainMemnode){.cellid = (unsigned)cell, .nodes = g_steal_pointer(&set), .mode = mode}));
}

/* Local name of an element of our namespace, or NULL. */
static const char *ours(Parser *p, const char *element)
{
        size_t n;
        if (!p->prefix)
                return NULL;
        n = strlen(p->prefix);
        if (strncmp(element, p->prefix, n) == 0 && element[n] == ':')
                return element + n + 1;
        return NULL;
}

/* Whether a child of <metadata> is placementd's element: its own prefix bound, on it, to placementd's URI
 * (as libvirt writes each namespace's element). Another namespace's element is its owner's, whatever prefix
 * it binds to placementd's URI for its children: libvirt keeps one element per namespace, by its URI, and
 * placementd's record is not inside another's. Sets the prefix and depth the record is read at. */
static void our_element(Parser *p, const char *element, const char **names, const char **values)
{
        const char *colon = strchr(element, ':');
        g_autofree char *declaration = NULL;
        const char *uri;

        if (!colon)
                return;
        declaration = g_strdup_printf("xmlns:%.*s", (int)(colon - element), element);
        uri = domain_xml_attr(names, values, declaration);
        if (!uri || strcmp(uri, PLACEMENTD_XMLNS) != 0)
                return;
        g_free(p->prefix);
        p->prefix = g_strndup(element, (gsize)(colon - element));
        p->meta_depth = p->stack->len;
}

/* A recorded decision that cannot be read is dropped (the domain is then placed anew), never the
 * domain: the first problem is kept in decision_error. */
static void G_GNUC_PRINTF(2, 3) meta_fail(Parser *p, const char *format, ...)
{
        va_list ap;

        if (p->spec->decision_error)
                return;
        va_start(ap, format);
        p->spec->decision_error = g_strdup_vprintf(format, ap);
        va_end(ap);
}

static bool meta_set(Parser *p, const char *text, CpuSet **ret, const char *what)
{
        if (cpuset_parse(text ? text : "", ret, NULL) < 0) {
                meta_fail(p, "invalid recorded %s list '%.64s'", what, text);
                return false;
        }
        return true;
}

/* The recorded I/O threads: both attributes or neither (a record made before placementd pinned them). */
static void start_meta_iothreads(Parser *p, MetaDecision *d, const char **names, const char **values)
{
        const char *ids = domain_xml_attr(names, values, "iothreads"),
                   *pin = domain_xml_attr(names, values, "iothread-pin");

        if (!ids && !pin)
                return;
        if (!ids || !pin) {
                meta_fail(p, "recorded I/O threads need both iothreads and iothread-pin");
                return;
        }
        if (meta_set(p, ids, &d->iothreads, "I/O thread id") && cpuset_has(d->iothreads, 0))
                meta_fail(p, "recorded I/O thread id 0 (libvirt numbers them from 1)");
        meta_set(p, pin, &d->iothread_pin, "I/O thread CPU");
}

/* The recorded I/O threads the user pins (an attribute of its own, in records since 2026-12-07). */
static void start_meta_user_iothreads(Parser *p, MetaDecision *d, const char **names, const char **values)
{
        const char *ids = domain_xml_attr(names, values, "user-iothreads");

        if (ids && meta_set(p, ids, &d->user_iothreads, "I/O thread id") && cpuset_has(d->user_iothreads, 0))
                meta_fail(p, "recorded I/O thread id 0 (libvirt numbers them from 1)");
        /* the emulator set floating by its user (user-emulator="floating"); any other word says nothing */
        d->user_emulator_floating =
            g_strcmp0(domain_xml_attr(names, values, "user-emulator"), "floating") == 0;
}

static void start_meta(Parser *p, const char *local, const char **names, const char **values)
{
        DomainSpec *s = p->spec;
        MetaDecision *d = s->decision;

        if (strcmp(local, "decision") == 0 && !d) {
                d = s->decision = g_new0(MetaDecision, 1);
                d->result = g_strdup(domain_xml_attr(names, values, "result"));
                d->policy = g_strdup(domain_xml_attr(names, values, "policy"));
                d->vcpu_pin = g_strdup(domain_xml_attr(names, values, "vcpu-pin"));
                d->memory_binding = g_strdup(domain_xml_attr(names, values, "memory-binding"));
                d->uuid = g_strdup(domain_xml_attr(names, values, "uuid"));
                {
                        guint64 id;
                        const char *text = domain_xml_attr(names, values, "domain-id");
                        d->domain_id = text && parse_uint(text, G_MAXINT, &id) ? (unsigned)id : 0;
                        text = domain_xml_attr(names, values, "boot-id");
                        d->boot_id = uuid_text_valid(text) ? g_strdup(text) : NULL;
                        text = domain_xml_attr(names, values, "threads");
                        if (text && cpuset_parse(text, &d->threads, NULL) < 0)
                                d->threads = NULL; /* it decides nothing but a narrower emulator pin */
                }
                d->vcpus = g_array_new(FALSE, TRUE, sizeof(MetaVcpu));
                d->memory = g_array_new(FALSE, TRUE, sizeof(guint64));
                if (!meta_set(p, domain_xml_attr(names, values, "nodes"), &d->nodes, "node"))
                        return;
                if (!meta_set(p, domain_xml_attr(names, values, "emulator"), &d->emulator, "emulator CPU"))
                        return;
                start_meta_iothreads(p, d, names, values);
                start_meta_user_iothreads(p, d, names, values);
        } else if (strcmp(local, "vcpu") == 0 && d) {
                guint64 id, cpu;
                MetaVcpu v = {0};
                if (!parse_uint(domain_xml_attr(names, values, "id"), DOMAIN_XML_MAX_VCPUS - 1, &id) ||
                    !parse_uint(domain_xml_attr(names, values, "cpu"), CPUSET_MAX, &cpu) ||
                    d->vcpus->len >= DOMAIN_XML_MAX_VCPUS) {
                        meta_fail(p, "recorded vcpu element needs an id below %u and a cpu below %u",
                                  DOMAIN_XML_MAX_VCPUS, CPUSET_MAX + 1);
                        return;
                }
                if (!meta_set(p, domain_xml_attr(names, values, "cpuset"), &v.cpuset, "vCPU pin"))
                        return;
                v.id = (unsigned)id;
                v.cpu = (unsigned)cpu;
                g_array_append_val(d->vcpus, v);
        } else if (strcmp(local, "memory") == 0 && d) {
                guint64 node, bytes;
                if (!parse_uint(domain_xml_attr(names, values, "node"), CPUSET_MAX, &node) ||
                    !parse_uint(domain_xml_attr(names, values, "bytes"), G_MAXUINT64, &bytes) ||
                    d->memory->len >= 2 * 4096) {
                        meta_fail(p, "recorded memory element needs a node and bytes");
                        return;
                }
                g_array_append_val(d->memory, node);
                g_array_append_val(d->memory, bytes);
        } else if (strcmp(local, "reason") == 0 && d) {
                p->text = TEXT_REASON;
        }
}

/* Elements of the user's definition that the snapshot keeps: what says where vCPUs and memory go. */
static bool is_user_element(Parser *p)
{
        unsigned n = p->stack->len;
        return is_top(p, "vcpu") || is_top(p, "cputune") || is_top(p, "numatune") ||
               (n == 3 && strcmp(g_ptr_array_index(p->stack, 0), "domain") == 0 &&
                in_path(p, "cpu", "numa"));
}

static void capture_start(Parser *p, const char *element, const char **names, const char **values)
{
        if (!p->capture_depth && is_user_element(p))
                p->capture_depth = p->stack->len;
        if (!p->capture_depth)
                return;
        if (p->capture_depth == 3 && p->stack->len == 3)
                g_string_append(p->capture, "<cpu>");
        g_string_append_printf(p->capture, "<%s", element);
        for (unsigned i = 0; names[i]; i++) {
                g_autofree char *v = g_markup_escape_text(values[i], -1);
                g_string_append_printf(p->capture, " %s=\"%s\"", names[i], v);
        }
        g_string_append(p->capture, ">");
}

static void capture_end(Parser *p, const char *element)
{
        if (!p->capture_depth)
                return;
        g_string_append_printf(p->capture, "</%s>", element);
        if (p->stack->len == p->capture_depth) {
                if (p->capture_depth == 3)
                        g_string_append(p->capture, "</cpu>");
                p->capture_depth = 0;
        }
}

/* Notes one <vcpus><vcpu id= enabled=> of the definition: which vCPU ids are online. */
static void add_enabled_vcpu(Parser *p, const char **names, const char **values)
{
        const char *enabled = domain_xml_attr(names, values, "enabled");
        guint64 id;

        if (!p->enabled_vcpus)
                p->enabled_vcpus = cpuset_new();
        if (!parse_uint(domain_xml_attr(names, values, "id"), DOMAIN_XML_MAX_VCPUS - 1, &id)) {
                p->vcpus_unreadable = true;
                return;
        }
        if (enabled && strcmp(enabled, "yes") == 0)
                cpuset_add(p->enabled_vcpus, (unsigned)id);
}

/* The online vCPU ids, when <vcpus> names them and they are not 0..vcpus-1 (a vCPU unplugged below one
 * that runs); otherwise vcpu_ids stays NULL. A <vcpus> whose enabled count is not <vcpu current>, or
 * with an id at or above <vcpu>, is not libvirt's and is not read. */
static void set_vcpu_ids(DomainSpec *s, const Parser *p)
{
        unsigned i = 0;

        if (!p->enabled_vcpus || p->vcpus_unreadable || cpuset_count(p->enabled_vcpus) != s->vcpus ||
            s->vcpus == 0 || cpuset_next(p->enabled_vcpus, s->vcpus) < 0 ||
            (s->max_vcpus && cpuset_next(p->enabled_vcpus, s->max_vcpus) >= 0))
                return;
        s->vcpu_ids = g_new(unsigned, s->vcpus);
        CPUSET_FOREACH (id, p->enabled_vcpus)
                s->vcpu_ids[i++] = (unsigned)id;
}

/* Keeps a <vcpupin> of the definition, or notes that one could not be kept. */
static void add_vcpupin(DomainSpec *s, const char **names, const char **values)
{
        MetaVcpu v = {0};
        guint64 id;

        if (!s->vcpupins)
                s->vcpupins = g_array_new(FALSE, TRUE, sizeof(MetaVcpu));
        if (s->vcpupins->len >= DOMAIN_XML_MAX_VCPUS ||
            !parse_uint(domain_xml_attr(names, values, "vcpu"), DOMAIN_XML_MAX_VCPUS - 1, &id) ||
            cpuset_parse(domain_xml_attr(names, values, "cpuset") ? domain_xml_attr(names, values, "cpuset")
                                                                  : "",
                         &v.cpuset, NULL) < 0) {
                s->vcpupins_unreadable = true;
                return;
        }
        v.id = (unsigned)id;
        g_array_append_val(s->vcpupins, v);
}

/* An I/O thread id attribute: from 1 up, as libvirt takes any (one above DOMAIN_XML_MAX_IOTHREADS is
 * returned for the caller to leave out). */
static bool iothread_id(const char *element, const char *name, const char *text, guint64 *ret,
                        GError **error)
{
        if (parse_uint(text, G_MAXUINT32, ret) && *ret > 0)
                return true;
        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                    "invalid <%s %s='%s'> (an I/O thread id from 1 up)", element, name, text ? text : "");
        return false;
}

/* A cache a <cachetune> or <memorytune> names for the vCPUs in its vcpus= (level NULL: an L3 cache, a
 * memory bandwidth controller's), each (level, id, vCPUs) once; one libvirt would refuse (no vcpus=, no
 * such level, a bad id) is left out: such a domain does not start. */
static void add_cache_bank(DomainSpec *s, const CpuSet *vcpus, const char *level, const char *id)
{
        guint64 l, i;
        DomainCacheBank bank;

        if (!vcpus)
                return;
        if (!level)
                l = 3;
        else if (!parse_uint(level, 3, &l) || l < 2)
                return;
        if (!parse_uint(id, G_MAXUINT32, &i))
                return;
        bank = (DomainCacheBank){.level = (unsigned)l, .id = (unsigned)i};
        if (!s->cache_banks)
                s->cache_banks = g_array_new(FALSE, FALSE, sizeof(DomainCacheBank));
        for (unsigned k = 0; k < s->cache_banks->len; k++) {
                const DomainCacheBank *b = &g_array_index(s->cache_banks, DomainCacheBank, k);
                if (b->level == bank.level && b->id == bank.id && cpuset_equal(b->vcpus, vcpus))
                        return;
        }
        if (s->cache_banks->len < DOMAIN_XML_MAX_CACHE_BANKS) {
                bank.vcpus = cpuset_copy(vcpus);
                g_array_append_val(s->cache_banks, bank);
        }
}

/* <iothreadids><iothread id=...> and <cputune><iothreadpin iothread=...>: the ids, into *set. An id above
 * DOMAIN_XML_MAX_IOTHREADS (libvirt takes it) is left out and counted in *beyond: that I/O thread is
 * neither pinned nor followed (it floats as libvirt runs it), and the rest of the definition is read as
 * any (a guest owner's <iothread id='9000'> made it unreadable, what it holds counted as libvirt's calls
 * give it: its hugepages as ordinary memory). Returns the id, 0 when left out, -1 on an error. */
static int add_iothread(const char *element, const char *name, const char **names, const char **values,
                        CpuSet **set, unsigned *beyond, GError **error)
{
        guint64 id;

        if (!iothread_id(element, name, domain_xml_attr(names, values, name), &id, error))
                return -1;
        if (id > DOMAIN_XML_MAX_IOTHREADS) {
                if (beyond)
                        (*beyond)++;
                return 0;
        }
        if (!*set)
                *set = cpuset_new();
        cpuset_add(*set, (unsigned)id);
        return (int)id;
}

/* Ids for the I/O threads <iothreads> counts beyond <iothreadids>: the lowest free ones, as libvirt
 * gives them. Those it numbers above DOMAIN_XML_MAX_IOTHREADS (a count above it: libvirt takes any) are
 * left out, as an id above it in <iothreadids> is. */
static void complete_iothreads(DomainSpec *s, unsigned count)
{
        unsigned next = 1;

        if (!s->iothreads && count == 0)
                return;
        if (!s->iothreads)
                s->iothreads = cpuset_new();
        while (cpuset_count(s->iothreads) < count) {
                while (next <= DOMAIN_XML_MAX_IOTHREADS && cpuset_has(s->iothreads, next))
                        next++;
                if (next > DOMAIN_XML_MAX_IOTHREADS)
                        break;
                cpuset_add(s->iothreads, next);
        }
}

/* An attribute an element gives twice, or NULL: not well-formed XML, which libvirt refuses to define,
 * and GMarkup lets through (the first would count). A hash past a few, as a file may hold many. */
static const char *attribute_twice(const char **names)
{
        g_autoptr(GHashTable) seen = NULL;
        unsigned n = 0;

        while (names[n])
                n++;
        if (n <= 16) {
                for (unsigned i = 1; i < n; i++)
                        for (unsigned j = 0; j < i; j++)
                                if (strcmp(names[i], names[j]) == 0)
                                        return names[i];
                return NULL;
        }
        seen = g_hash_table_new(g_str_hash, g_str_equal);
        for (unsigned i = 0; i < n; i++)
                if (!g_hash_table_add(seen, (gpointer)names[i]))
                        return names[i];
        return NULL;
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
                     gpointer user_data, GError **error)
{
        Parser *p = user_data;
        DomainSpec *s = p->spec;
        const char *local, *twice;
        (void)ctx;

        if ((twice = attribute_twice(names))) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "attribute '%s' given twice on <%s>", twice, element);
                return;
        }
        g_ptr_array_add(p->stack, g_strdup(element));
        g_string_truncate(p->buf, 0);
        p->text = TEXT_NONE;

        if (p->stack->len == 1 && strcmp(element, "domain") != 0) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "root element is <%s>, not <domain>", element);
                return;
        }
        if (p->stack->len == 3 && strcmp(g_ptr_array_index(p->stack, 1), "metadata") == 0)
                our_element(p, element, names, values);
        capture_start(p, element, names, values);
        if (p->meta_depth && (local = ours(p, element))) {
                if (p->stack->len == p->meta_depth + 1 && strcmp(local, "definition") == 0) {
                        p->text = TEXT_DEFINITION;
                } else if (p->stack->len == p->meta_depth) {
                        if (strcmp(local, "domain") == 0) {
                                const char *skip = domain_xml_attr(names, values, "skip");
                                g_free(s->meta_policy);
                                s->meta_policy = g_strdup(domain_xml_attr(names, values, "policy"));
                                s->meta_skip = skip && (g_ascii_strcasecmp(skip, "yes") == 0 ||
                                                        g_ascii_strcasecmp(skip, "true") == 0);
                        }
                } else {
                        start_meta(p, local, names, values);
                }
                return;
        }
        if (p->stack->len == 3 && strcmp(g_ptr_array_index(p->stack, 1), "devices") == 0)
                p->pci_holder = domain_xml_pci_holder(element, names, values);
        if (is_top(p, "name"))
                p->text = TEXT_NAME;
        else if (is_top(p, "uuid"))
                p->text = TEXT_UUID;
        else if (is_top(p, "vcpu")) {
                const char *placement = domain_xml_attr(names, values, "placement"),
                           *current = domain_xml_attr(names, values, "current");
                guint64 n;
                p->text = TEXT_VCPU;
                s->vcpu_auto = placement && strcmp(placement, "auto") == 0;
                if (domain_xml_attr(names, values, "cpuset") && !s->vcpu_auto &&
                    parse_constraint(domain_xml_attr(names, values, "cpuset"), &s->vcpu_cpuset, "vcpu",
                                     "cpuset", error) < 0)
                        return;
                if (current) {
                        if (!parse_uint(current, DOMAIN_XML_MAX_VCPUS, &n)) {
                                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                            "invalid <vcpu current='%s'>", current);
                                return;
                        }
                        s->vcpus = (unsigned)n;
                        p->have_current_vcpus = true;
                }
        } else if (is_top(p, "memory") || is_top(p, "currentMemory")) {
                bool current = is_top(p, "currentMemory");
                if (domain_xml_unit_multiplier(domain_xml_attr(names, values, "unit"),
                                               current ? &p->current_unit : &p->memory_unit) < 0) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "unknown memory unit '%s'", domain_xml_attr(names, values, "unit"));
                        return;
                }
                p->text = current ? TEXT_CURRENT_MEMORY : TEXT_MEMORY;
        } else if (in_path(p, "vcpus", "vcpu") && p->stack->len == 3) {
                add_enabled_vcpu(p, names, values);
        } else if (in_path(p, "devices", "memory") && p->stack->len == 3) {
                /* persistent memory backed by a file or a DAX device: in <memory>, but not host RAM */
                const char *model = domain_xml_attr(names, values, "model");
                const char *access = domain_xml_attr(names, values, "access");
                p->in_pmem = model && (strcmp(model, "nvdimm") == 0 || strcmp(model, "virtio-pmem") == 0);
                /* an nvdimm libvirt maps privately is preallocated in anonymous memory (parse()) */
                p->in_nvdimm = model && strcmp(model, "nvdimm") == 0;
                p->nvdimm_access = !access                          ? NVDIMM_DEFAULT
                                   : strcmp(access, "shared") == 0  ? NVDIMM_SHARED
                                   : strcmp(access, "private") == 0 ? NVDIMM_PRIVATE
                                                                    : NVDIMM_DEFAULT;
                p->nvdimm_dev = false;
                p->nvdimm_bytes = 0;
                p->nvdimm_node = -1;
                /* virtio-mem is backed as a DIMM is, bound with its <target><node> cell */
                p->in_dimm = model && (strcmp(model, "dimm") == 0 || strcmp(model, "virtio-mem") == 0);
                p->in_vmem = model && strcmp(model, "virtio-mem") == 0;
                p->dimm_bytes = 0;
                p->dimm_node = -1;
                p->dimm_pagesize = 0;
                g_clear_pointer(&p->dimm_nodemask, cpuset_free);
                p->vmem_requested = p->vmem_current = G_MAXUINT64;
        } else if ((p->in_dimm || p->in_pmem) && in_path(p, "target", "size") && p->stack->len == 5) {
                if (domain_xml_unit_multiplier(domain_xml_attr(names, values, "unit"),
                                               p->in_dimm ? &p->dimm_unit : &p->pmem_unit) < 0) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "unknown memory unit '%s'", domain_xml_attr(names, values, "unit"));
                        return;
                }
                p->text = p->in_dimm ? TEXT_DIMM_SIZE : TEXT_PMEM_SIZE;
        } else if (p->in_dimm && in_path(p, "target", "node") && p->stack->len == 5) {
                p->text = TEXT_DIMM_NODE;
        } else if (p->in_nvdimm && in_path(p, "target", "node") && p->stack->len == 5) {
                p->text = TEXT_PMEM_NODE;
        } else if (p->in_nvdimm && in_path(p, "source", "path") && p->stack->len == 5) {
                p->text = TEXT_PMEM_PATH;
        } else if (p->stack->len == 3 && in_path(p, "memoryBacking", "access")) {
                const char *mode = domain_xml_attr(names, values, "mode");
                p->backing_access = !mode                         ? NVDIMM_DEFAULT
                                    : strcmp(mode, "shared") == 0 ? NVDIMM_SHARED
                                                                  : NVDIMM_PRIVATE;
        } else if (p->in_dimm && in_path(p, "source", "pagesize") && p->stack->len == 5) {
                if (domain_xml_unit_multiplier(domain_xml_attr(names, values, "unit"), &p->dimm_page_unit) <
                    0) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "unknown memory unit '%s'", domain_xml_attr(names, values, "unit"));
                        return;
                }
                p->text = TEXT_DIMM_PAGESIZE;
        } else if (p->in_dimm && in_path(p, "source", "nodemask") && p->stack->len == 5) {
                p->text = TEXT_DIMM_NODEMASK;
        } else if (p->in_vmem && p->stack->len == 5 &&
                   (in_path(p, "target", "requested") || in_path(p, "target", "current"))) {
                if (domain_xml_unit_multiplier(domain_xml_attr(names, values, "unit"), &p->vmem_unit) < 0) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "unknown memory unit '%s'", domain_xml_attr(names, values, "unit"));
                        return;
                }
                p->text = in_path(p, "target", "requested") ? TEXT_VMEM_REQUESTED : TEXT_VMEM_CURRENT;
        } else if (p->pci_holder && p->stack->len == 5 && in_path(p, "source", "address") &&
                   strcmp(g_ptr_array_index(p->stack, 1), "devices") == 0) {
                domain_xml_pci_address(s, p->pci_holder, names, values, error);
        } else if (in_path(p, "cputune", "vcpupin") && p->stack->len == 3) {
                s->has_vcpupin = true;
                add_vcpupin(s, names, values);
        } else if (in_path(p, "cputune", "vcpusched") && p->stack->len == 3) {
                const char *scheduler = domain_xml_attr(names, values, "scheduler");
                if (scheduler && (strcmp(scheduler, "fifo") == 0 || strcmp(scheduler, "rr") == 0))
                        add_realtime(s, domain_xml_attr(names, values, "vcpus"), error);
        } else if (in_path(p, "cputune", "emulatorsched") && p->stack->len == 3) {
                s->realtime_emulator =
                    s->realtime_emulator || realtime_scheduler(domain_xml_attr(names, values, "scheduler"));
        } else if (in_path(p, "cputune", "iothreadsched") && p->stack->len == 3) {
                if (realtime_scheduler(domain_xml_attr(names, values, "scheduler")))
                        add_realtime_iothreads(s, domain_xml_attr(names, values, "iothreads"), error);
        } else if (in_path(p, "cpu", "topology") && p->stack->len == 3) {
                guint64 threads;
                /* QEMU numbers vCPUs threads innermost: ids t*k .. t*k+t-1 are one guest core's threads */
                s->guest_threads =
                    parse_uint(domain_xml_attr(names, values, "threads"), DOMAIN_XML_MAX_VCPUS, &threads) &&
                            threads > 1
                        ? (unsigned)threads
                        : 0;
                s->guest_socket_vcpus = guest_socket_vcpus(names, values);
        } else if (in_path(p, "cputune", "emulatorpin") && p->stack->len == 3) {
                s->has_emulatorpin = true;
                g_clear_pointer(&s->emulatorpin, cpuset_free);
                parse_constraint(domain_xml_attr(names, values, "cpuset"), &s->emulatorpin, "emulatorpin",
                                 "cpuset", error);
        } else if (is_top(p, "iothreads")) {
                p->text = TEXT_IOTHREADS;
        } else if (in_path(p, "iothreadids", "iothread") && p->stack->len == 3) {
                add_iothread("iothread", "id", names, values, &s->iothreads, &p->iothreads_beyond, error);
        } else if (in_path(p, "cputune", "iothreadpin") && p->stack->len == 3) {
                g_autoptr(CpuSet) cpus = NULL;
                int id;
                if (parse_constraint(domain_xml_attr(names, values, "cpuset"), &cpus, "iothreadpin",
                                     "cpuset", error) == 0 &&
                    (id = add_iothread("iothreadpin", "iothread", names, values, &s->iothreadpins, NULL,
                                       error)) > 0 &&
                    cpus) {
                        IothreadPin pin = {.id = (unsigned)id, .cpus = g_steal_pointer(&cpus)};
                        if (!s->iothreadpin_cpus)
                                s->iothreadpin_cpus = g_array_new(FALSE, FALSE, sizeof(IothreadPin));
                        g_array_append_val(s->iothreadpin_cpus, pin);
                }
        } else if (p->stack->len == 3 &&
                   (in_path(p, "cputune", "cachetune") || in_path(p, "cputune", "memorytune"))) {
                /* the vCPUs its caches serve; libvirt refuses a list it cannot read */
                g_autofree char *why = NULL;
                g_clear_pointer(&p->tune_vcpus, cpuset_free);
                if (cpuset_parse(domain_xml_attr(names, values, "vcpus")
                                     ? domain_xml_attr(names, values, "vcpus")
                                     : "",
                                 &p->tune_vcpus, &why) < 0 ||
                    cpuset_is_empty(p->tune_vcpus))
                        g_clear_pointer(&p->tune_vcpus, cpuset_free);
        } else if (p->stack->len == 4 && strcmp(g_ptr_array_index(p->stack, 1), "cputune") == 0 &&
                   (in_path(p, "cachetune", "cache") || in_path(p, "memorytune", "node"))) {
                /* a memory bandwidth controller's id is its L3 cache's */
                add_cache_bank(s, p->tune_vcpus,
                               in_path(p, "memorytune", "node") ? NULL
                                                                : domain_xml_attr(names, values, "level"),
                               domain_xml_attr(names, values, "id"));
        } else if (p->stack->len == 3 && strcmp(g_ptr_array_index(p->stack, 1), "numatune") == 0) {
                start_numatune(p, element, names, values, error);
        } else if (p->stack->len == 4 && in_path(p, "numa", "cell") &&
                   strcmp(g_ptr_array_index(p->stack, 1), "cpu") == 0) {
                domain_xml_numa_cell(s, names, values, error);
        } else if (p->stack->len == 6 && in_path(p, "distances", "sibling") &&
                   strcmp(g_ptr_array_index(p->stack, 3), "cell") == 0 &&
                   strcmp(g_ptr_array_index(p->stack, 2), "numa") == 0 &&
                   strcmp(g_ptr_array_index(p->stack, 1), "cpu") == 0) {
                domain_xml_numa_sibling(s, names, values, error);
        } else if ((p->stack->len == 3 && in_path(p, "memoryBacking", "hugepages")) ||
                   (p->stack->len == 4 && in_path(p, "hugepages", "page") &&
                    strcmp(g_ptr_array_index(p->stack, 1), "memoryBacking") == 0)) {
                domain_xml_numa_hugepages(s, p->stack->len == 4, names, values, error);
        }
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer user_data,
                    GError **error)
{
        Parser *p = user_data;
        (void)ctx;
        (void)error;
        if (p->capture_depth) {
                g_autofree char *escaped = g_markup_escape_text(text, (gssize)len);
                g_string_append(p->capture, escaped);
        }
        if (p->text == TEXT_DEFINITION && p->buf->len + len > DOMAIN_XML_MAX_DEFINITION)
                p->definition_overflow = true;
        else if (p->text != TEXT_NONE && p->buf->len < DOMAIN_XML_MAX_TEXT)
                /* up to the cap, not nothing: a text over it stays over every limit its element has (a
                 * recorded reason of 70,000 bytes must not read as an empty one) */
                g_string_append_len(p->buf, text, (gssize)MIN(len, DOMAIN_XML_MAX_TEXT - p->buf->len));
}

static bool memory_value(const char *text, uint64_t unit, uint64_t *ret)
{
        guint64 v;
        if (!parse_uint(text, G_MAXUINT64, &v) || (unit && v > G_MAXUINT64 / unit))
                return false;
        *ret = v * unit;
        return true;
}

/* A virtio-mem device holds of host memory what its guest has plugged, not its whole <size>: the larger
 * of <requested> (what it is asked to plug) and <current> (what it has, in the live XML only). Its size
 * is what libvirt's <memory> adds up; the rest, up to it, is left out. A device with neither keeps its
 * size. */
static void end_virtio_mem(Parser *p)
{
        uint64_t counted;

        if (p->vmem_requested == G_MAXUINT64 && p->vmem_current == G_MAXUINT64)
                return;
        counted = p->vmem_requested == G_MAXUINT64 ? p->vmem_current
                  : p->vmem_current == G_MAXUINT64 ? p->vmem_requested
                                                   : MAX(p->vmem_requested, p->vmem_current);
        if (counted < p->dimm_bytes) {
                p->vmem_unplugged = sat_add(p->vmem_unplugged, p->dimm_bytes - counted);
                p->dimm_bytes = counted;
        }
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer user_data, GError **error)
{
        Parser *p = user_data;
        DomainSpec *s = p->spec;
        g_autofree char *text = g_strstrip(g_strdup(p->buf->str));
        guint64 n;
        (void)ctx;

        switch (p->text) {
        case TEXT_NAME:
                g_free(s->name);
                s->name = g_steal_pointer(&text);
                break;
        case TEXT_UUID:
                g_free(s->uuid);
                s->uuid = g_steal_pointer(&text);
                break;
        case TEXT_VCPU:
                if (!parse_uint(text, DOMAIN_XML_MAX_VCPUS, &n)) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid <vcpu>%s</vcpu>", text);
                        return;
                }
                s->max_vcpus = (unsigned)n;
                if (!p->have_current_vcpus)
                        s->vcpus = (unsigned)n;
                break;
        case TEXT_MEMORY:
        case TEXT_CURRENT_MEMORY:
                if (!memory_value(text, p->text == TEXT_MEMORY ? p->memory_unit : p->current_unit,
                                  p->text == TEXT_MEMORY ? &p->memory : &p->current_memory)) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid memory size '%s'", text);
                        return;
                }
                break;
        case TEXT_PMEM_SIZE: {
                uint64_t bytes;
                if (!memory_value(text, p->pmem_unit, &bytes) || bytes > G_MAXUINT64 - p->pmem_bytes) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid persistent memory size '%s'", text);
                        return;
                }
                p->pmem_bytes += bytes;
                p->nvdimm_bytes = bytes;
                break;
        }
        case TEXT_PMEM_NODE:
                p->nvdimm_node = parse_uint(text, DOMAIN_XML_MAX_CELLS - 1, &n) ? (int)n : -1;
                break;
        case TEXT_PMEM_PATH:
                p->nvdimm_dev = g_str_has_prefix(text, "/dev/");
                break;
        case TEXT_DIMM_SIZE:
                if (!memory_value(text, p->dimm_unit, &p->dimm_bytes)) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid memory device size '%s'", text);
                        return;
                }
                break;
        case TEXT_DIMM_NODE:
                p->dimm_node = parse_uint(text, DOMAIN_XML_MAX_CELLS - 1, &n) ? (int)n : -1;
                break;
        case TEXT_DIMM_PAGESIZE:
                if (!memory_value(text, p->dimm_page_unit, &p->dimm_pagesize)) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid memory device page size '%s'", text);
                        return;
                }
                break;
        case TEXT_DIMM_NODEMASK:
                g_clear_pointer(&p->dimm_nodemask, cpuset_free);
                parse_constraint(text, &p->dimm_nodemask, "memory source", "nodemask", error);
                break;
        case TEXT_VMEM_REQUESTED:
        case TEXT_VMEM_CURRENT: {
                uint64_t bytes;
                if (!memory_value(text, p->vmem_unit, &bytes) || bytes == G_MAXUINT64) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid memory device size '%s'", text);
                        return;
                }
                *(p->text == TEXT_VMEM_REQUESTED ? &p->vmem_requested : &p->vmem_current) = bytes;
                break;
        }
        case TEXT_DEFINITION:
                g_free(s->definition);
                s->definition = NULL;
                s->definition_too_big = p->definition_overflow;
                if (!p->definition_overflow)
                        s->definition = g_steal_pointer(&text);
                break;
        case TEXT_IOTHREADS:
                if (!parse_uint(text, G_MAXUINT32, &n)) {
                        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "invalid <iothreads>%s</iothreads> (a count)", text);
                        return;
                }
                p->iothread_count = (unsigned)n;
                break;
        case TEXT_REASON:
                if (s->decision) {
                        g_free(s->decision->reason);
                        s->decision->reason = g_steal_pointer(&text);
                }
                break;
        default:
                break;
        }
        capture_end(p, element);
        p->text = TEXT_NONE;
        g_string_truncate(p->buf, 0);
        if (p->meta_depth && p->stack->len == p->meta_depth)
                p->meta_depth = 0;
        if (p->stack->len == 3 && in_path(p, "devices", "memory")) {
                if (p->in_vmem)
                        end_virtio_mem(p);
                if (p->in_dimm)
                        p->dimm_total = sat_add(p->dimm_total, p->dimm_bytes);
                if (p->in_dimm && p->dimm_bytes && p->dimm_node >= 0) {
                        DomainMemoryDevice d = {.node = (unsigned)p->dimm_node,
                                                .bytes = p->dimm_bytes,
                                                .pagesize = p->dimm_pagesize,
                                                .nodemask = g_steal_pointer(&p->dimm_nodemask)};
                        g_array_append_val(p->dimms, d);
                }
                g_clear_pointer(&p->dimm_nodemask, cpuset_free);
                if (p->in_nvdimm && p->nvdimm_access != NVDIMM_SHARED && !p->nvdimm_dev && p->nvdimm_bytes &&
                    p->nvdimm_node >= 0) {
                        PrivateNvdimm d = {.bytes = p->nvdimm_bytes,
                                           .node = (unsigned)p->nvdimm_node,
                                           .given = p->nvdimm_access == NVDIMM_PRIVATE};
                        g_array_append_val(p->nvdimms, d);
                }
                p->in_nvdimm = false;
                p->in_pmem = false;
                p->in_dimm = false;
                p->in_vmem = false;
        }
        g_ptr_array_remove_index(p->stack, p->stack->len - 1);
}

static void memory_device_clear(gpointer data)
{
        cpuset_free(((DomainMemoryDevice *)data)->nodemask);
}

static int parse(const char *xml, bool need_name, DomainSpec **ret, char **ret_error)
{
        static const GMarkupParser callbacks = {
            .start_element = on_start, .end_element = on_end, .text = on_text};
        g_autoptr(DomainSpec) spec = g_new0(DomainSpec, 1);
        g_autoptr(GArray) dimms = g_array_new(FALSE, FALSE, sizeof(DomainMemoryDevice));
        g_autoptr(GArray) nvdimms = g_array_new(FALSE, FALSE, sizeof(PrivateNvdimm));
        Parser p = {
            .spec = spec,
            .dimms = dimms,
            .nvdimms = nvdimms,
            .stack = g_ptr_array_new_with_free_func(g_free),
            .buf = g_string_new(NULL),
            .memory_unit = 1024,
            .current_unit = 1024,
            .capture = g_string_new("<domain>"),
        };
        GMarkupParseContext *ctx =
            g_markup_parse_context_new(&callbacks, G_MARKUP_PREFIX_ERROR_POSITION, &p, NULL);
        g_autoptr(GError) error = NULL;
        bool ok = xml && g_markup_parse_context_parse(ctx, xml, -1, &error) &&
                  g_markup_parse_context_end_parse(ctx, &error);

        g_markup_parse_context_free(ctx);
        g_array_set_clear_func(dimms, memory_device_clear);
        cpuset_free(p.dimm_nodemask);
        g_ptr_array_unref(p.stack);
        g_string_free(p.buf, TRUE);
        g_free(p.prefix);
        g_string_append(p.capture, "</domain>");
        if (p.capture->len <= DOMAIN_XML_MAX_DEFINITION)
                spec->user_xml = g_string_free(p.capture, FALSE);
        else
                g_string_free(p.capture, TRUE);
        if (ok && domain_xml_numa_check(spec, &error) < 0)
                ok = false;
        if (ok)
                complete_iothreads(spec, p.iothread_count - MIN(p.iothread_count, p.iothreads_beyond));
        /* as libvirt: a pin is of an I/O thread the domain has (a recorded definition holds no
         * <iothreads>) */
        if (ok && need_name && spec->iothreadpins) {
                g_autoptr(CpuSet) unknown = cpuset_copy(spec->iothreadpins);
                if (spec->iothreads)
                        cpuset_subtract(unknown, spec->iothreads);
                if (!cpuset_is_empty(unknown)) {
                        ok = false;
                        g_set_error(&error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                    "<iothreadpin iothread='%d'>: the domain has no such I/O thread",
                                    cpuset_next(unknown, 0));
                }
        }
        /* memory devices of guest cells, a private nvdimm being one (below), up to a bound */
        if (ok && dimms->len + nvdimms->len > DOMAIN_XML_MAX_MEMORY_DEVICES) {
                ok = false;
                g_set_error(&error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "more than %u memory devices of guest cells (<devices><memory model='dimm', "
                            "'virtio-mem' or 'nvdimm'> with a <target><node>)",
                            DOMAIN_XML_MAX_MEMORY_DEVICES);
        }
        if (ok && need_name && (!spec->name || !*spec->name)) {
                ok = false;
                g_set_error(&error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "domain has no <name>");
        }
        if (!ok) {
                cpuset_free(p.enabled_vcpus);
                cpuset_free(p.tune_vcpus);
                if (ret_error)
                        *ret_error = g_strdup_printf("invalid domain XML: %s",
                                                     error ? error->message : "empty document");
                return -EINVAL;
        }
        if (spec->decision_error)
                g_clear_pointer(&spec->decision, meta_decision_free);
        /* a record made for another domain (its definition copied, a new UUID given) is not this one's */
        if (spec->decision && spec->decision->uuid && spec->uuid &&
            g_ascii_strcasecmp(spec->decision->uuid, spec->uuid) != 0) {
                spec->record_foreign = true;
                g_clear_pointer(&spec->decision, meta_decision_free);
                g_clear_pointer(&spec->definition, g_free);
                spec->definition_too_big = false;
        }
        /* an nvdimm that neither its own access nor the domain's <memoryBacking> shares: libvirt maps its
         * file privately and has QEMU preallocate it, so it is anonymous host RAM of its guest cell, as a
         * DIMM of ordinary memory is (numa_maps: "anon=" its whole size) */
        for (unsigned i = 0; i < nvdimms->len; i++) {
                const PrivateNvdimm *d = &g_array_index(nvdimms, PrivateNvdimm, i);
                DomainMemoryDevice dimm = {.node = d->node, .bytes = d->bytes, .pagesize = 4096};
                if (!d->given && p.backing_access == NVDIMM_SHARED)
                        continue;
                p.pmem_bytes -= MIN(p.pmem_bytes, d->bytes);
                p.dimm_total = sat_add(p.dimm_total, d->bytes);
                g_array_append_val(dimms, dimm);
        }
        /* what the guest can use once a balloon deflates: <memory>, DIMMs included */
        spec->memory = p.memory ? p.memory : p.current_memory;
        /* libvirt's <memory> counts nvdimm and virtio-pmem devices too: they are files, not host RAM */
        if (p.memory && p.pmem_bytes < p.memory)
                spec->memory = p.memory - p.pmem_bytes;
        /* and its virtio-mem devices' whole sizes: what the guest has not plugged is not host RAM yet */
        if (p.memory && p.vmem_unplugged < spec->memory)
                spec->memory -= p.vmem_unplugged;
        /* without either, libvirt takes the guest's cells together */
        if (!p.memory && !p.current_memory && spec->cells)
                for (unsigned i = 0; i < spec->cells->len; i++) {
                        uint64_t cell = g_array_index(spec->cells, DomainCell, i).memory;
                        spec->memory = cell > G_MAXUINT64 - spec->memory ? G_MAXUINT64 : spec->memory + cell;
                }
        /* with guest cells, libvirt makes <memory> their sum and its memory devices' (the live XML says
         * so already; a file written by hand may say less): at least the cells and DIMMs */
        if (spec->cells && spec->cells->len) {
                uint64_t total = p.dimm_total;
                for (unsigned i = 0; i < spec->cells->len; i++)
                        total = sat_add(total, g_array_index(spec->cells, DomainCell, i).memory);
                spec->memory = MAX(spec->memory, total);
        }
        if (spec->vcpus > spec->max_vcpus && spec->max_vcpus) {
                spec->vcpus_over_max = true; /* libvirt refuses such a definition */
                spec->vcpus = spec->max_vcpus;
        }
        set_vcpu_ids(spec, &p);
        domain_xml_numa_pages(spec);
        /* a DIMM's memory is its guest cell's (libvirt binds it with that cell's <memnode>), or, backed
         * otherwise by its own <source>, counted apart: part of <memory>, not of the cell's own size */
        domain_xml_numa_devices(spec, dimms);
        cpuset_free(p.tune_vcpus);
        cpuset_free(p.enabled_vcpus);
        *ret = g_steal_pointer(&spec);
        return 0;
}

unsigned domain_spec_vcpu_id(const DomainSpec *s, unsigned i)
{
        return s->vcpu_ids ? s->vcpu_ids[i] : i;
}

int domain_xml_parse(const char *xml, DomainSpec **ret, char **ret_error)
{
        return parse(xml, true, ret, ret_error);
}

int domain_xml_parse_definition(const char *xml, DomainSpec **ret, char **ret_error)
{
        if (xml && strlen(xml) > DOMAIN_XML_MAX_DEFINITION) {
                if (ret_error)
                        *ret_error = g_strdup("recorded definition is too big");
                return -EINVAL;
        }
        return parse(xml, false, ret, ret_error);
}

bool domain_spec_pins_recorded(const DomainSpec *s)
{
        const MetaDecision *d = s->decision;
        g_autofree const CpuSet **recorded = NULL;
        unsigned n = s->vcpupins ? s->vcpupins->len : 0;

        if (!d || !d->vcpus || s->vcpupins_unreadable || n != d->vcpus->len)
                return false;
        recorded = g_new0(const CpuSet *, DOMAIN_XML_MAX_VCPUS);
        for (unsigned i = 0; i < d->vcpus->len; i++) {
                const MetaVcpu *v = &g_array_index(d->vcpus, MetaVcpu, i);
                if (recorded[v->id])
                        return false;
                recorded[v->id] = v->cpuset;
        }
        for (unsigned i = 0; i < n; i++) {
                const MetaVcpu *pin = &g_array_index(s->vcpupins, MetaVcpu, i);
                if (!recorded[pin->id] || !cpuset_equal(recorded[pin->id], pin->cpuset))
                        return false;
                recorded[pin->id] = NULL; /* each once */
        }
        return true;
}
