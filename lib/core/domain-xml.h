/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading libvirt domain XML (as virDomainGetXMLDesc returns it), pure: what placementd needs to know
 * about a domain. Its size, whether it opted out, and any decision placementd recorded in the domain's
 * <metadata> under its own namespace:
 *
 *   <metadata>
 *     <placementd:domain xmlns:placementd="https://placementd.org/xmlns/domain/1" skip="no" policy="compat">
 *       <placementd:decision result="placed" policy="explicit" vcpu-pin="core" nodes="0" emulator="1,3"
 *                            iothreads="1-2" iothread-pin="1,3" memory-binding="applied"
 *                            uuid="4dea22b3-1d52-d8f3-2516-782e98ab3fa0">
 *         <placementd:vcpu id="0" cpu="0" cpuset="0-1"/>
 *         <placementd:memory node="0" bytes="4294967296"/>
 *         <placementd:reason>...</placementd:reason>
 *       </placementd:decision>
 *     </placementd:domain>
 *   </metadata>
 *
 * The user writes skip/policy in the persistent definition; placementd writes the decision into the
 * live definition only, keeping the user's attributes. Any namespace prefix is accepted. A decision that
 * leaves I/O threads where the user pins them (its definition, or by hand) names them: user-iothreads="3";
 * one whose emulator, pinned by placementd, its user set floating again says user-emulator="floating".
 *
 * Beside the decision placementd records the user's own definition as it was before placementd
 * touched the domain: <placementd:definition> holds, as escaped text, a small document
 * "<domain><vcpu>..</vcpu><cputune>..</cputune><numatune>..</numatune><cpu><numa>..</numa></cpu></domain>"
 * read back with domain_xml_parse_definition(). It tells the user's pins from placementd's own.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "plan.h"

#define PLACEMENTD_XMLNS        "https://placementd.org/xmlns/domain/1"
#define PLACEMENTD_XMLNS_PREFIX "placementd"
/* The parser reads domains up to libvirt's own vCPU limit; placement requests are capped separately, at
 * PLAN_MAX_VCPUS (plan.h). */
#define DOMAIN_XML_MAX_VCPUS    16384u
#define DOMAIN_XML_MAX_MEMNODES 4096u
G_STATIC_ASSERT(DOMAIN_XML_MAX_VCPUS >= PLAN_MAX_VCPUS);
/* I/O thread ids (and their count) the parser accepts: libvirt numbers them from 1 */
#define DOMAIN_XML_MAX_IOTHREADS CPUSET_MAX
/* Largest recorded definition snapshot, in bytes (a bigger one is not recorded, nor read back) */
#define DOMAIN_XML_MAX_DEFINITION 32768u

typedef struct MetaVcpu {
        unsigned id;
        unsigned cpu; /* OS index of the PU the vCPU is counted on */
        CpuSet *cpuset;
} MetaVcpu;

/* A decision as recorded in metadata. Node numbers are OS indexes. */
typedef struct MetaDecision {
        char *result, *policy, *vcpu_pin, *memory_binding, *reason;
        CpuSet *nodes;
        CpuSet *emulator;
        GArray *vcpus;  /* MetaVcpu */
        GArray *memory; /* guint64 pairs: node OS index, bytes */
        /* added: the I/O threads placementd pinned (ids) and where (OS indexes); NULL when not recorded */
        CpuSet *iothreads;
        CpuSet *iothread_pin;
        /* added: the I/O threads left where the user pins them (ids); NULL when not recorded */
        CpuSet *user_iothreads;
        /* added: the emulator runs unpinned as its user set it (user-emulator="floating"); a claim the
         * daemon checks against the emulator pin that runs and the run it was written in */
        bool user_emulator_floating;
        /* added: the UUID of the domain it was recorded for; NULL in records made before it was written */
        char *uuid;
        /* added: the libvirt domain ID of the run it was written in; 0 when not recorded or unreadable (it
         * decides nothing but whether the run may have started on the recorded pins: thread-mask.c) */
        unsigned domain_id;
        /* added: the host's boot it was written in (36 characters), NULL when not recorded or not one */
        char *boot_id;
        /* added: the CPUs its QEMU threads started on, when placementd knew them; NULL when not recorded
         * or unreadable */
        CpuSet *threads;
} MetaDecision;

/* Whether text is a UUID in its text form, 8-4-4-4-12 hexadecimal digits: a domain's, or a boot id as
 * /proc/sys/kernel/random/boot_id gives it. */
bool uuid_text_valid(const char *text);

/* A guest NUMA cell of the definition (<cpu><numa><cell>). */
typedef struct DomainCell {
        unsigned id;
        CpuSet *vcpus;   /* guest vCPU numbers (cpus=...); empty for a memory-only cell */
        uint64_t memory; /* bytes */
        /* added: its <distances><sibling id= value=>, what the guest's SLIT says of it: the distance to
         * the cell of each id (distances[id], 10-255; 0 where it names none); NULL when it has none */
        uint8_t *distances;
        unsigned ndistances; /* entries in distances: the highest sibling id named + 1 */
        /* added: how libvirt backs it (domain_xml_numa_pages()): hugepages when the <hugepages><page>
         * whose nodeset names the cell, else the one without a nodeset, is of a size above the base page
         * (or <hugepages> names no page), hugepage_size being that size (0: the host's default);
         * ordinary memory otherwise */
        bool hugepages;
        uint64_t hugepage_size;
        /* added: not a guest cell but a <memory model='dimm|virtio-mem'> device of cell device_target whose
         * own <source><pagesize> backs it otherwise than that cell, or whose <source><nodemask> binds it
         * (domain_xml_numa_devices()): counted apart, as a cell without vCPUs, in its own kind on its own
         * nodes; id DOMAIN_XML_MAX_CELLS and up. device_nodes: that nodemask (OS indexes), else NULL */
        bool device;
        unsigned device_target;
        CpuSet *device_nodes;
        /* added: the memory its <cell memory= unit=> states (bytes), before the memory devices of the cell
         * are added to memory; 0 for a device's */
        uint64_t stated_memory;
} DomainCell;

/* <memoryBacking><hugepages><page size= unit= nodeset=>: a page size and the guest cells it backs. */
typedef struct DomainPage {
        uint64_t size; /* bytes */
        CpuSet *cells; /* guest cell ids (nodeset=); NULL: every cell no other <page> names */
} DomainPage;

/* <numatune><memnode cellid= nodeset=>: where one guest cell's memory is bound. */
typedef struct DomainMemnode {
        unsigned cellid;
        CpuSet *nodes;   /* OS node indexes */
        MemoryMode mode; /* added: its mode=, strict when not given (as libvirt binds it) */
} DomainMemnode;

/* A host cache a domain's resctrl allocation names: its level (2 or 3), the kernel's id of it, and the
 * vCPUs (libvirt ids) its <cachetune>/<memorytune vcpus=> reserves it for. */
typedef struct DomainCacheBank {
        unsigned level, id;
        CpuSet *vcpus;
} DomainCacheBank;
/* The most bytes of one element's text kept (a longer one is cut there, over every element's own limit). */
#define DOMAIN_XML_MAX_TEXT 65535u

/* The most memory devices of guest cells (<memory model='dimm|virtio-mem'>, a private nvdimm) read from
 * one definition: twice QEMU's 256 DIMM slots. Each of its own backing is counted apart, at a cost that
 * grows with the square of their number. */
#define DOMAIN_XML_MAX_MEMORY_DEVICES 512u

/* The most banks read from one definition: libvirt's own limit on allocations is far lower. */
#define DOMAIN_XML_MAX_CACHE_BANKS 1024u

typedef struct DomainSpec {
        char *name;
        char *uuid;
        unsigned domain_id; /* libvirt's ID of this run (virDomainGetID(), set by the reader); 0: unknown */
        unsigned vcpus;     /* online vCPUs (<vcpu current=...>, else the maximum) */
        unsigned max_vcpus;
        bool vcpus_over_max; /* <vcpu current=...> above the maximum (read as the maximum) */
        unsigned *vcpu_ids;  /* [vcpus] libvirt's ids of the online vCPUs, ascending, when they are not
                              * 0..vcpus-1 (<vcpus>: one unplugged below one that runs); NULL otherwise */
        /* bytes: <memory> (the most the guest can use, DIMMs included; of a virtio-mem device, what its
         * guest has plugged or is asked to, not its whole size), else <currentMemory> */
        uint64_t memory;
        bool has_vcpupin;         /* <cputune><vcpupin> */
        GArray *vcpupins;         /* MetaVcpu (cpu unused): each <vcpupin vcpu= cpuset=>, in order */
        bool vcpupins_unreadable; /* a <vcpupin> not read into vcpupins (bad or too many) */
        bool has_emulatorpin;     /* <cputune><emulatorpin> */
        bool realtime;            /* <cputune><vcpusched scheduler='fifo|rr'>: realtime vCPUs */
        CpuSet *realtime_vcpus;   /* their libvirt ids when not every vCPU is (vcpusched vcpus=); NULL:
                                   * all of them when realtime */
        bool realtime_emulator;   /* <cputune><emulatorsched scheduler='fifo|rr'> */
        CpuSet
            *realtime_iothreads; /* ids <iothreadsched iothreads= scheduler='fifo|rr'> names; NULL: none */
        unsigned guest_threads;  /* <cpu><topology threads=...> above 1: the guest's vCPUs come in SMT
                                  * sibling groups of this size, by id (0-1, 2-3, ...); 0 otherwise */
        CpuSet *emulatorpin;     /* its cpuset (OS indexes); NULL when none or not readable */
        /*
         * The user's static constraints (OS indexes, never empty when set): the host CPUs its vCPUs may use
         * (<vcpu cpuset=...>), the nodes its memory is bound to (<numatune><memory nodeset=...>, with
         * its mode, strict when not given) and the nodes its guest cells' memory is bound to (the union of
         * every <numatune><memnode nodeset=...>).
         */
        CpuSet *vcpu_cpuset;
        CpuSet *memory_nodeset;
        MemoryMode memory_mode;
        CpuSet *memnode_nodeset;
        unsigned nmemnodes;
        GArray *memnodes;        /* DomainMemnode, each <memnode> in order; NULL when none */
        bool vcpu_auto;          /* <vcpu placement='auto'> */
        bool numatune_auto;      /* <numatune><memory placement='auto'> */
        bool meta_skip;          /* <placementd:domain skip='yes'> */
        char *meta_policy;       /* <placementd:domain policy=...>, NULL if unset */
        MetaDecision *decision;  /* NULL if none recorded, or not readable */
        char *decision_error;    /* why a recorded decision could not be read, or NULL */
        char *definition;        /* <placementd:definition> text: the recorded user's definition, or NULL */
        bool definition_too_big; /* one was recorded but exceeds DOMAIN_XML_MAX_DEFINITION */
        bool record_foreign; /* the record names another domain's UUID (a copied definition): decision and
                              * definition dropped, as if none were recorded */
        char *user_xml;      /* this document's own <vcpu>, <cputune>, <numatune>, <cpu><numa> as a snapshot
                              * document (see above); NULL when it exceeds DOMAIN_XML_MAX_DEFINITION */
        /* Guest shape (domain-xml-numa.c; added after the fields above) */
        GArray *cells;              /* DomainCell, in the definition's order; NULL when it has none */
        bool hugepages;             /* <memoryBacking><hugepages> */
        uint64_t hugepage_size;     /* bytes of its page size (the largest when they differ); 0 = the
                                     * host's default hugepage size */
        bool hugepage_sizes_differ; /* its <page> elements name different sizes for different cells */
        /* added: each <page> read (DomainPage, in order; NULL when none). With guest cells, each cell's
         * own backing is in DomainCell.hugepages/hugepage_size; hugepages and hugepage_size above then say
         * whether any cell is hugepage-backed and the largest size of those, and hugepages_partial that
         * some cell has ordinary memory (a <page nodeset> names only some cells) */
        GArray *pages;
        bool hugepages_partial;
        /* added: a memory device's own <source> backs it in a kind or on nodes of its own, but counted
         * apart the guest would hold more kinds of memory than two: its memory is counted in its cell */
        bool devices_in_cells;
        /*
         * added: I/O threads. iothreads holds the id of every one (<iothreadids>, completed up to the
         * count of <iothreads> with the lowest free ids, as libvirt numbers them), iothreadpins the ids
         * the definition pins itself (<cputune><iothreadpin iothread=...>); NULL when there are none.
         */
        CpuSet *iothreads;
        CpuSet *iothreadpins;
        /* added: the host PCI devices it passes through (domain-xml-devices.h), as pci.h addresses in the
         * definition's order; NULL when none */
        GArray *pci_devices;
        /* added: each <iothreadpin>'s cpuset (IothreadPin, in order); NULL when none. The user's
         * are those whose id is in iothreadpins (the ids placementd pinned itself are taken out of it) */
        GArray *iothreadpin_cpus;
        /* added: the host caches its <cputune><cachetune vcpus=><cache level= id=> and <memorytune
         * vcpus=><node id=> (an L3 cache's id) reserve ways or bandwidth in for those vCPUs
         * (DomainCacheBank, each once); NULL when none */
        GArray *cache_banks;
        /* added: has_emulatorpin and emulatorpin come from a live pin made outside placementd (virsh
         * emulatorpin --live), not from the definition's <cputune><emulatorpin> (set by the daemon) */
        bool emulatorpin_live;
        /* added: of iothreadpins, the ids of I/O threads pinned live outside placementd (virsh iothreadpin
         * --live), not by the definition's <cputune><iothreadpin> (set by the daemon); NULL when none */
        CpuSet *iothreadpins_live;
        /* added: <cpu><topology> of more than one socket: the vCPUs of one socket (dies x clusters x
         * cores x threads), vCPU id / this being its guest socket as QEMU numbers them; 0 otherwise */
        unsigned guest_socket_vcpus;
} DomainSpec;

void domain_spec_free(DomainSpec *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DomainSpec, domain_spec_free)
void meta_decision_free(MetaDecision *d);

/* Returns 0, or -EINVAL with *ret_error describing what is wrong with the XML. */
int domain_xml_parse(const char *xml, DomainSpec **ret, char **ret_error);
/* Parses a recorded definition snapshot (a <domain> without a name). Same contract. */
int domain_xml_parse_definition(const char *xml, DomainSpec **ret, char **ret_error);

/*
 * Whether every <vcpupin> of s is the pin its recorded decision gives that vCPU, and s has one for
 * every recorded vCPU: the pins are placementd's own (s was made from a live definition), not the
 * user's. False when s records no decision or has a pin it could not read.
 */
bool domain_spec_pins_recorded(const DomainSpec *s);

/* libvirt's id of s's i-th online vCPU. */
unsigned domain_spec_vcpu_id(const DomainSpec *s, unsigned i);
/* The host nodes (OS indexes) a cell's memory is bound to and the mode: its <memnode>, or a device cell's
 * <source><nodemask> else its guest cell's <memnode> (mode that memnode's, else the domain's); NULL when
 * none. */
const CpuSet *domain_cell_binding(const DomainSpec *s, const DomainCell *c, MemoryMode *ret_mode);
