/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Plan: what a policy decided for one domain, as plain data. Policies fill it; the ledger holds it while
 * the domain runs; the applier turns it into libvirt calls; formatters print it. Node numbers inside a
 * plan are node INDEXES of the topology it was made on and PU numbers inside vcpu_pu are PU INDEXES;
 * the cpusets handed to libvirt (vcpu_pins, emulator_pin) hold OS indexes.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "topology.h"

/* The most vCPUs one placement request may ask for: the D-Bus API and placementctl reject more, and the
 * engine answers a larger request (e.g. adopted from domain XML, which may legally describe up to
 * DOMAIN_XML_MAX_VCPUS, libvirt's own limit) with an unplaceable plan instead of allocating for it. */
#define PLAN_MAX_VCPUS 4096u

typedef enum PolicyKind {
        POLICY_EXPLICIT,
        POLICY_COMPAT,
        _POLICY_MAX,
} PolicyKind;

typedef enum VcpuPinMode {
        VCPU_PIN_CORE,    /* each vCPU on all PUs of its own core */
        VCPU_PIN_THREAD,  /* each vCPU on the first PU of its core */
        VCPU_PIN_NODESET, /* each vCPU on every PU of the node set; the scheduler balances */
        _VCPU_PIN_MAX,
} VcpuPinMode;

typedef enum EmulatorPinMode {
        EMULATOR_PIN_SIBLINGS, /* idle sibling threads of the domain's own cores */
        EMULATOR_PIN_NODESET,  /* the node set, minus other domains' cores */
        EMULATOR_PIN_NONE,
        _EMULATOR_PIN_MAX,
} EmulatorPinMode;

/* Which qualifying set of the nearest group a domain takes ([Placement] Fit=). */
typedef enum FitMode {
        FIT_SPREAD, /* the least loaded: most free cores, then most free memory */
        FIT_PACK,   /* the fullest: fewest free cores, then least free memory; big holes stay whole */
        _FIT_MAX,
} FitMode;

/* Which cores of a hybrid host (hwloc cpukinds: P/E, big/LITTLE) vCPUs get. */
typedef enum CoreKindsMode {
        CORE_KINDS_PERFORMANCE_FIRST, /* fastest kind first, one kind per domain where it fits, then slower
                                       */
        CORE_KINDS_PERFORMANCE_ONLY,  /* the most performant kind only: the others are left to the host */
        CORE_KINDS_ANY,               /* kinds ignored: cores in topology order */
        _CORE_KINDS_MAX,
} CoreKindsMode;

typedef enum PlanResult {
        PLAN_PLACED,
        PLAN_OVERCOMMITTED,
        PLAN_UNPLACEABLE,
        PLAN_ADOPTED, /* pins made by someone else (by hand), recorded so others avoid them */
        _PLAN_RESULT_MAX,
} PlanResult;

/* The knobs a policy reads (a part of the config). */
typedef struct PlacementParams {
        PolicyKind policy;
        VcpuPinMode vcpu_pin;
        EmulatorPinMode emulator_pin;
        CpuSet *reserved_cpus;   /* OS indexes; never given to vCPUs */
        uint64_t memory_reserve; /* bytes kept free on every node */
        /* Added for memory kinds and hybrid CPUs: */
        unsigned memory_tiers;    /* bit 1 << NodeKind per lower-tier kind used like DRAM (MemoryTiers=) */
        CoreKindsMode core_kinds; /* CoreKinds= */
        FitMode fit;              /* added: [Placement] Fit= */
        /* added: OS indexes for the emulator and I/O threads when no idle sibling is left for them
         * (HousekeepingCPUs=); NULL = reserved_cpus */
        CpuSet *housekeeping_cpus;
        /* added: OS indexes no domain can run on now, offline or left out of the guests' cgroup (the
         * daemon's reading of the host, not the configuration's, which does not own it): no thread of a
         * domain goes there; NULL = none */
        const CpuSet *unavailable_cpus;
} PlacementParams;

/* How the domain's memory is bound when placementd does not choose it (<numatune><memory mode=...>). */
typedef enum MemoryMode {
        MEMORY_MODE_STRICT,
        MEMORY_MODE_INTERLEAVE,
        MEMORY_MODE_PREFERRED,
        MEMORY_MODE_RESTRICTIVE,
        _MEMORY_MODE_MAX,
} MemoryMode;

/* One guest NUMA cell of a request (<cpu><numa><cell>): its vCPUs go to one host node when one holds them.
 */
typedef struct PlacementCell {
        unsigned id;         /* the cell's id (<cell id=...>, what <memnode cellid=...> names) */
        const CpuSet *vcpus; /* guest vCPU numbers; may be empty (a memory-only cell) */
        uint64_t memory;     /* bytes */
        /* added: node OS indexes its <memnode> binds its memory to; NULL when none: its vCPUs then go
         * to one of these nodes and its memory is counted there */
        const CpuSet *memory_nodes;
        MemoryMode memory_mode; /* added: that <memnode>'s mode (strict when not given) */
        /* added: the guest's distance from it to the cell of each id (<distances><sibling id= value=>,
         * distances[id], 10-255; 0 where it names none): cells near in the guest go to nodes near on the
         * host where the cells' sizes leave a choice; NULL when it gives none */
        const uint8_t *distances;
        unsigned ndistances;
        /* added: its memory is ordinary though the request's is hugepage-backed (hugepage_size): the
         * domain's <hugepages><page nodeset> elements back other cells only (libvirt gives a cell the
         * page naming it, else the one without a nodeset, else ordinary memory) */
        bool ordinary;
        /* added: no guest cell but a memory device backed by its own <source> (DomainCell.device): its
         * id is no <cell id>, and nothing is pinned or bound by it */
        bool device;
        /* added: a device's: the id of its guest cell (<target><node>), and whether its own
         * <source><nodemask> binds it (memory_nodes is that nodemask, else its cell's <memnode>) */
        unsigned device_target;
        bool device_nodemask;
} PlacementCell;

/* Who fixed the memory nodes of a request. */
typedef enum MemorySource {
        MEMORY_SOURCE_NONE,    /* nobody: the policy chooses and placementd binds */
        MEMORY_SOURCE_USER,    /* <numatune><memory nodeset=...> of the definition */
        MEMORY_SOURCE_MEMNODE, /* only <numatune><memnode> elements: their nodesets together */
        MEMORY_SOURCE_BOUND,   /* a live binding libvirt will not change any more (not restrictive) */
        _MEMORY_SOURCE_MAX,
} MemorySource;

/*
 * What to place, and the user's constraints on it. Constraints are hard: the plan stays inside them, and
 * when nothing fits inside, the plan is the least harmful thing inside them (overcommitted), never outside.
 */
/* <cputune><iothreadpin iothread= cpuset=>: where the user pins one I/O thread. */
typedef struct IothreadPin {
        unsigned id;
        CpuSet *cpus; /* OS indexes */
} IothreadPin;

typedef struct PlacementRequest {
        const char *name;
        unsigned vcpus;
        uint64_t memory;            /* bytes */
        const CpuSet *allowed_cpus; /* OS indexes (<vcpu cpuset=...>); NULL = every host CPU */
        const CpuSet
            *memory_nodes; /* node OS indexes the memory is bound to; NULL when memory_source NONE */
        MemorySource memory_source;
        MemoryMode memory_mode;
        bool keep_emulator;        /* the user pins the emulator (<cputune><emulatorpin>): leave it alone */
        bool emulator_pinned_live; /* added: that pin is a live one made outside placementd, not the
                                    * definition's (what the reason says) */
        /* Guest NUMA cells and hugepage backing (added after the fields above) */
        const PlacementCell *cells; /* [ncells] in the definition's order */
        unsigned ncells;
        uint64_t hugepage_size; /* bytes per page when its memory is hugepage-backed; 0 = ordinary memory */
        /* Measured load (lib/core/load.h). It decides only when cores are short: busy vCPUs then get
         * cores of their own first and idle ones share; busy host-side threads get a core no vCPU uses. */
        const double *vcpu_busy; /* [vcpus] smoothed busy fraction per vCPU; NULL = unknown: all busy */
        double host_busy;        /* cores its host-side threads keep busy; read only with vcpu_busy */
        bool host_unmeasured;    /* load is measured on this host, the domain's not yet (vcpu_busy NULL):
                                  * its host-side threads count as LOAD_HOST_UNMEASURED cores busy */
        const double *pu_busy;   /* [npus] what the ledger's domains keep busy per PU index
                                  * (load_pu_busy()); NULL = unknown: each counted vCPU busy */
        /* added: I/O threads. The ids of the domain's I/O threads (<iothreads>), and those the user pins
         * (<cputune><iothreadpin>), which are left alone; NULL = none */
        const CpuSet *iothreads;
        const CpuSet *kept_iothreads;
        /* added: of kept_iothreads, those pinned live outside placementd (virsh iothreadpin --live), not
         * by the definition (the reason says which); NULL = none */
        const CpuSet *kept_iothreads_live;
        /* added: the live binding (MEMORY_SOURCE_BOUND) is the one placementd applied itself, so a heal
         * re-pin may run a busy vCPU on a calm core of another node when the bound nodes have none left
         * (policy_repin_near(): cores first, then locality); the memory stays bound where it is */
        bool memory_own;
        /* added: [vcpus] libvirt's ids of the online vCPUs when they are not 0..vcpus-1 (NULL
         * otherwise): guest cells name vCPUs by these ids, the plan counts its vCPUs 0..vcpus-1 */
        const unsigned *vcpu_ids;
        /* added: realtime vCPUs (<vcpusched scheduler='fifo|rr'>): the emulator and I/O threads never go
         * to the siblings of their cores (SMT would share the core with them). realtime_vcpus: their
         * libvirt ids when only some are (<vcpusched vcpus='1-7'>, Nova's realtime mask); NULL: all */
        bool realtime;
        const CpuSet *realtime_vcpus;
        /* added: QEMU's threads that run realtime themselves (<emulatorsched>, <iothreadsched
         * scheduler='fifo|rr'>): the emulator, and the ids of such I/O threads (NULL: none). They preempt
         * any ordinary thread beside them; the reason says where they run beside vCPUs */
        bool realtime_emulator;
        const CpuSet *realtime_iothreads;
        /* added: the guest's declared SMT threads per core (<cpu><topology threads=...>) when above 1,
         * else 0: when its vCPUs must double up, a guest core's threads (libvirt ids t*k .. t*k+t-1)
         * share a host core before vCPUs the guest thinks independent do */
        unsigned guest_threads;
        /* added: the vCPUs of one guest socket (<cpu><topology>: libvirt id / this is a vCPU's socket)
         * when the guest declares more than one, else 0: without distances, cells of one guest socket go
         * to nodes near one another */
        unsigned guest_socket_vcpus;
        /* added: the user's <emulatorpin> cpuset (OS indexes; NULL: none): within a node, the vCPUs take
         * cores outside it before cores in it (the user keeps those CPUs for QEMU's own threads) */
        const CpuSet *emulator_cpus;
        /* added: the user's <iothreadpin> cpusets (IothreadPin, domain-xml.h; NULL: none): those whose
         * id is in kept_iothreads are the user's, kept apart from vCPUs like emulator_cpus */
        const GArray *iothread_cpus;
        /* added: the nodes local to the host PCI devices it passes through (<hostdev>, <interface
         * type='hostdev'>, NVMe disks), node indexes (topology_pci_nodes()), NULL when none is known: sets
         * with one of them are tried first, before any other set with room */
        const CpuSet *device_nodes;
        /* added: the nodes without a usable CPU that some of those devices sit on (OS indexes), and the
         * nodes with usable CPUs nearest to them that device_nodes holds for them (node indexes,
         * TopoPciDevice.sits_on); NULL when every device's own nodes have CPUs. For the reason only */
        const CpuSet *device_sits_on;
        const CpuSet *device_nearest;
        /* added: the CPUs under the host caches its <cachetune>/<memorytune> reserve ways or bandwidth in
         * (OS indexes, topology_cache_cpus()); NULL when none is known. A constraint on its vCPUs, like
         * allowed_cpus: they run there or the reservation does them no good */
        const CpuSet *cache_cpus;
        /* added: [vcpus] the CPUs under the caches reserved for each vCPU (by the <cachetune>/<memorytune>
         * whose vcpus= lists it), NULL for a vCPU without; NULL when none has any. cache_cpus is their
         * union when every vCPU has some; else nothing confines the domain, and the placement puts each
         * such vCPU on a CPU of its own caches where the cores it took allow */
        const CpuSet *const *vcpu_cache_cpus;
        /* added: its reserved caches lie wholly outside its <vcpu cpuset> for some vCPU: the cpuset,
         * which libvirt applies, stands (the reason says so) */
        bool caches_outside_cpuset;
        /* added, set by the policy alone (policy_place()): the memory is bound to nodes with too few free
         * cores for a core per vCPU, so the vCPUs may take cores on other nodes too, nearest to the memory
         * first (a binding confines memory, not vCPUs); the memory stays bound where it is */
        bool vcpus_beyond_binding;
        /* added, set by the policy alone (policy_place()): the first try for a domain whose definition pins
         * its emulator or I/O threads: the cores of those CPUs count as not free for its vCPUs, so a set
         * where no vCPU runs beside them wins over one where one must (a realtime vCPU would starve them)
         * when it spans no more nodes */
        bool vcpus_off_user_threads;
        /* added: its <hugepages><page nodeset> elements name different sizes for different guest cells;
         * hugepage_size is then the largest of them, the memory of every hugepage-backed cell counted in
         * it (a cell of ordinary memory is PlacementCell.ordinary) */
        bool hugepage_sizes_differ;
        /* added: its cells' <page> sizes are two, and none of its cells has ordinary memory: the cells of
         * the smaller size are PlacementCell.ordinary, their memory counted in hugepages of this size
         * (hugepage_size the larger) where a cell no <page> backs is counted in ordinary memory; 0 when
         * the cells marked so (if any) have ordinary memory */
        uint64_t second_page_size;
        /* added: a memory device's own <source> backs it otherwise than its guest cell, but counted apart
         * the guest would hold more kinds of memory than two: counted in its cell (the reason says so) */
        bool devices_in_cells;
} PlacementRequest;

/* Bytes of the request's memory in hugepages (of hugepage_size): all of it, less its ordinary cells'. */
uint64_t placement_request_page_memory(const PlacementRequest *req);

/* bytes rounded up to whole pages of page (bytes itself for page 0, or when that would not fit 64 bits). */
uint64_t plan_whole_pages(uint64_t bytes, uint64_t page);
/* What guest cell c of the request takes from a node's room, as QEMU backs it: a hugepage-backed cell its
 * memory in whole pages of hugepage_size (a cell marked ordinary, of second_page_size when the request has
 * one), each cell a memory backend of its own; a cell of ordinary memory its bytes. */
uint64_t placement_request_cell_pool_bytes(const PlacementRequest *req, const PlacementCell *c);

/* Whether the request lets its vCPUs run on the CPU with this OS index (<vcpu cpuset>, the CPUs of its
 * reserved caches). */
bool placement_request_allows_cpu(const PlacementRequest *req, unsigned os);

/*
 * Whether a and b ask the same of a placement: the same size, guest cells, hugepages, I/O threads, PCI
 * device nodes and constraints (CPUs, memory binding and its mode, kept emulator and I/O threads,
 * memory_own). Load is not compared: it is measured, not asked for.
 */
bool placement_request_same_asks(const PlacementRequest *a, const PlacementRequest *b);

/* Where one guest NUMA cell of a plan went. */
typedef struct PlanCell {
        unsigned id;   /* <cell id=...> */
        CpuSet *vcpus; /* guest vCPU numbers */
        CpuSet *nodes; /* node indexes its vCPUs (or, without vCPUs, its memory) went to */
        uint64_t memory;
        CpuSet *memory_nodes; /* added: node OS indexes its <memnode> binds it to; empty when none */
        /* added: node indexes its memory is counted on (beyond its vCPUs' nodes when they lack room);
         * empty when not known (pins adopted as they are) */
        CpuSet *counted_nodes;
        /* added: its memory is ordinary memory though the plan's is hugepage-backed
         * (PlacementCell.ordinary) */
        bool ordinary;
        bool device;            /* added: a memory device's (PlacementCell.device) */
        unsigned device_target; /* added: a device's guest cell (PlacementCell.device_target) */
        bool device_nodemask;   /* added: a device's own nodemask binds it (PlacementCell.device_nodemask) */
} PlanCell;

/* One ranked candidate node set as the policy saw it. */
typedef struct PlanCandidate {
        unsigned rank; /* position in the topology's candidate table */
        CpuSet *nodes; /* node OS indexes */
        uint32_t max_distance;
        double mean_distance;
        unsigned free_cores;
        unsigned free_pus;
        uint64_t free_memory;
        bool qualifies;
        bool chosen;
        /* overcommit by load: offered what the chosen set did, its least busy core ran more / as much */
        bool busier, as_busy;
        /* added: room enough, but a node of it would take nothing (no free core, the others hold the
         * memory): the set without it is the candidate */
        bool idle_node;
        /* added: room enough, but its guest cells do not fit it: a cell its <memnode> binds to nodes of
         * which the set has none (cell_node_missing), or whose nodes lack its vCPUs' room, or cells that
         * no node of it holds whole (cells_misfit) */
        bool cell_node_missing, cells_misfit;
        /* added: cores and free memory enough, but too few free hugepages of the request's size for its
         * hugepage-backed cells (pages_short), or too little ordinary memory for its cells no <page>
         * backs (ordinary_short) */
        bool pages_short, ordinary_short;
} PlanCandidate;

typedef struct Plan {
        char *name;
        PolicyKind policy;
        VcpuPinMode vcpu_pin;
        PlanResult result;
        unsigned nvcpus;          /* entries in vcpu_pu and vcpu_pins */
        unsigned requested_vcpus; /* what was asked (differs from nvcpus only for absurd requests) */
        uint64_t memory;
        CpuSet *nodes;         /* node indexes of the chosen set (empty when unplaceable) */
        int *vcpu_pu;          /* [nvcpus] PU index the vCPU is counted on; -1 when not placed */
        CpuSet **vcpu_pins;    /* [nvcpus] OS indexes to pin vCPU i to; empty when not placed */
        unsigned nnode_memory; /* topology's node count */
        uint64_t *node_memory; /* [nnode_memory] bytes reserved on each node index */
        CpuSet *emulator_pin;  /* OS indexes; empty = leave the emulator alone */
        bool keep_memory;      /* the memory binding is fixed (the user's or libvirt's): do not bind */
        unsigned shared_vcpus; /* vCPUs of this domain on a core with another vCPU */
        char *reason;
        GPtrArray *candidates; /* PlanCandidate*, ranked, what the policy looked at */
        /* Guest NUMA cells and hugepages (added after the fields above) */
        uint64_t hugepage_size; /* node_memory is counted in hugepages of this size; 0 = ordinary memory */
        unsigned ncells;        /* entries in cells: the request's guest NUMA cells */
        PlanCell *cells;        /* [ncells] */
        /* added: the ids of the I/O threads placementd pins, all to iothread_pin (OS indexes; empty =
         * none pinned) */
        CpuSet *iothreads;
        CpuSet *iothread_pin;
        /* added: the ids of the I/O threads the user pins (the definition's <iothreadpin>, or by hand) that
         * placementd leaves where they run: never taken for ones added live, whatever their pin */
        CpuSet *user_iothreads;
        /* added: [nvcpus] libvirt's id of each vCPU of the plan, when the domain's online vCPUs are not
         * 0..nvcpus-1 (one unplugged below one that runs); NULL: vCPU i is libvirt's vCPU i. From the
         * request (PlacementRequest.vcpu_ids, copied by the policy), and set by the daemon on every plan it
         * records from the domain it runs (DomainSpec.vcpu_ids) */
        unsigned *vcpu_ids;
        /* added: its vCPUs are realtime (PlacementRequest.realtime; realtime_vcpus: the libvirt ids of
         * those that are when not all, NULL: all): their cores are the last any other domain shares
         * (ledger_core_realtime()) */
        bool realtime;
        CpuSet *realtime_vcpus;
        /* added: PU indexes the ledger counts as a vCPU's though no vCPU runs there: the CPUs a domain
         * whose pins are adopted keeps for its emulator (<emulatorpin> on a core none of its vCPUs
         * uses, as Nova's emulator_threads_policy=isolate does), so no other domain is placed there */
        CpuSet *held_pus;
        /* added: among equally near sets, the set was chosen for a node of the domain's PCI devices */
        bool device_near;
        /* added: ... or for the node of the CPUs its definition pins QEMU's threads to (no PCI device
         * of a known node: policy_user_thread_nodes()) */
        bool threads_near;
        /* added: among equally near sets, the fullest won ([Placement] Fit=pack), not the least loaded */
        bool packed;
        /* added: among equally near sets, one where each node's share of the vCPUs fits one of its L3
         * groups came before the others of the group with room, which do not fit (whatever Fit= says) */
        bool l3_fit;
        /* added: with l3_fit, the host knows no L3 cache (Topology.l3_unknown): each group is a node's
         * cores in one package */
        bool l3_by_package;
        /* added: unplaceable with the memory there: nothing it may use is left on the host (its
         * constraints name no usable CPU or no node of it, ReservedCPUs= holds every CPU) */
        bool nothing_usable;
        /* added: re-pinned where it runs by measured load (heal, rebalance): nodes and candidates are
         * those of its placement, the pins moved since */
        bool repinned;
        /* added: [nnode_memory] of node_memory, the bytes in ordinary memory, when the plan is
         * hugepage-backed but some of its guest cells are not (PlanCell.ordinary); NULL otherwise: all of
         * node_memory is in hugepages of hugepage_size (ordinary memory when that is 0) */
        uint64_t *node_ordinary;
        /* added: node_ordinary is in hugepages of this size, not ordinary memory: the plan's cells of
         * the smaller of two <page> sizes (PlacementRequest.second_page_size); 0: ordinary memory */
        uint64_t second_page_size;
        /* added: the emulator placementd pinned runs unpinned again as someone set it outside placementd
         * (virsh emulatorpin DOM 0-7 --live) while the domain runs: the user's, as a pin onto other CPUs
         * would be; a re-placement leaves it so and holds nothing for it (the record: user-emulator=) */
        bool user_emulator_floating;
        /* added: the emulator, and of the I/O threads placementd pins those whose ids are here (empty:
         * none), run realtime themselves (PlacementRequest.realtime_emulator, realtime_iothreads): the core
         * or two placementd pins them to beside none of the plan's vCPUs is held as a realtime vCPU's core
         * is (ledger_core_held(), ledger_core_realtime()), since such a thread preempts a vCPU there */
        bool realtime_emulator;
        CpuSet *realtime_iothreads;
        /* added: of held_pus, the CPUs held for QEMU threads that run realtime themselves: the user's
         * <emulatorpin> of an emulator under <emulatorsched scheduler='fifo|rr'>, the <iothreadpin> of
         * such an I/O thread (policy_hold_thread_cpus()). Their cores count as a realtime vCPU's does
         * (plan_realtime_thread_pus()) */
        CpuSet *held_realtime_pus;
} Plan;

Plan *plan_new(const char *name, unsigned nvcpus, uint64_t memory, unsigned nnodes);
void plan_free(Plan *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Plan, plan_free)
Plan *plan_copy(const Plan *p);

/* Makes ids ([n], NULL: 0..n-1) the libvirt ids of p's vCPUs; ids for another vCPU count are not kept. */
void plan_set_vcpu_ids(Plan *p, const unsigned *ids, unsigned n);
/* libvirt's id of p's vCPU i. */
unsigned plan_vcpu_id(const Plan *p, unsigned i);
/* Marks the plan's vCPUs realtime as the request or definition says: all of them, or those whose libvirt
 * ids are in ids (NULL: all); not realtime at all when realtime is false. */
void plan_set_realtime(Plan *p, bool realtime, const CpuSet *ids);
/* Marks the plan's emulator realtime or not, and the I/O threads of ids (NULL: none) realtime. */
void plan_set_realtime_threads(Plan *p, bool emulator, const CpuSet *ids);
/* Whether the plan's vCPU i is realtime. */
bool plan_vcpu_realtime(const Plan *p, unsigned i);
/*
 * What the ledger holds for p's host-side threads, as PU indexes of t, and what every view (placementctl
 * show and plan, the JSON's held_cpus, the maps) shows as held for its emulator and I/O threads: the CPUs
 * its definition keeps for them (Plan.held_pus), and the core or two placementd pins its realtime emulator
 * or I/O threads to (plan_thread_pus(), realtime). A new set.
 */
CpuSet *plan_held_thread_pus(const Topology *t, const Plan *p);
/* Of plan_held_thread_pus(), those of threads that run realtime (FIFO/RR) themselves, beside none of p's
 * vCPUs: where placementd pins them (plan_thread_pus(), realtime) and where the user does
 * (Plan.held_realtime_pus). Their cores count as a realtime vCPU's (ledger_core_realtime()). A new set. */
CpuSet *plan_realtime_thread_pus(const Topology *t, const Plan *p);
/*
 * The PUs (indexes of t) placementd pins p's emulator and I/O threads to (realtime: only those that run
 * realtime, Plan.realtime_emulator, realtime_iothreads) on cores none of p's vCPUs runs on and outside what
 * p holds already (Plan.held_pus), when those cores are a core or two; added to out. A realtime thread
 * there preempts a vCPU whenever it has work, as a realtime vCPU would; an ordinary one shares with it.
 * Pinned wider, the scheduler wakes them on an idle CPU of the many, and nothing is counted, as for the
 * user's own wide pins (policy_hold_thread_cpus()).
 */
void plan_thread_pus(const Topology *t, const Plan *p, bool realtime, CpuSet *out);
/* Whether every vCPU of the request is realtime. */
bool placement_request_all_realtime(const PlacementRequest *req);
/* Where libvirt's vCPU id stands among ids[0..n-1] (ascending; NULL: 0..n-1), or -1 when not there. */
int vcpu_id_index(const unsigned *ids, unsigned n, unsigned id);

/* Gives plan room for ncells cells (each with empty vcpus and nodes). */
void plan_set_cells(Plan *p, unsigned ncells);

/* Of the plan's memory on node index n, the bytes in hugepages of hugepage_size, and those in ordinary
 * memory (node_ordinary). */
uint64_t plan_node_pages(const Plan *p, unsigned n);
uint64_t plan_node_ordinary(const Plan *p, unsigned n);
/* What the plan takes from node index n's pool of hugepage_size (second: of second_page_size, its cells
 * marked ordinary): its bytes there in whole pages, as QEMU backs its memory, each guest cell apart (a
 * plan without cells as one): the cells counted whole on the node in their own whole pages
 * (plan_node_whole_cells()), the rest of its share rounded up; the pages the other cells take beyond the
 * nodes' whole pages are counted on the node counting the most of them. 0 for a plan of ordinary memory. */
uint64_t plan_node_pool_bytes(const Plan *p, unsigned n, bool second);
/* The bytes (rounded: in whole pages of their size) of the plan's guest cells of one kind (second: those
 * marked ordinary, of second_page_size) counted whole on node index n (PlanCell.counted_nodes is n alone):
 * each is a backend of its own there. 0 when the plan counts less of that kind there than they come to. */
uint64_t plan_node_whole_cells(const Plan *p, unsigned n, bool second, bool rounded);
/* The same as placement_request_cell_pool_bytes() for the plan's cell c. */
uint64_t plan_cell_pool_bytes(const Plan *p, const PlanCell *c);
/* dst's memory per node (node_memory, node_ordinary) becomes src's. */
void plan_copy_memory(Plan *dst, const Plan *src);
/* How the memory of a cell marked ordinary is named: "of ordinary memory", or "in 2.0 MiB hugepages" when
 * it is of a second page size (second_page_size); into buf. */
const char *plan_second_kind(uint64_t second_page_size, char *buf, size_t len);
/* Gives p its node_ordinary (zeroed) when it is hugepage-backed and a cell of it is ordinary, else none. */
void plan_set_ordinary(Plan *p);

/* Node indexes that hold memory of this plan (the numatune nodeset), as a new set. */
CpuSet *plan_memory_nodes(const Plan *p);

void plan_candidate_free(PlanCandidate *c);

const char *policy_kind_to_string(PolicyKind k);
int policy_kind_from_string(const char *s); /* -EINVAL when unknown */
const char *vcpu_pin_mode_to_string(VcpuPinMode m);
int vcpu_pin_mode_from_string(const char *s);
const char *emulator_pin_mode_to_string(EmulatorPinMode m);
int emulator_pin_mode_from_string(const char *s);
const char *plan_result_to_string(PlanResult r);
const char *core_kinds_mode_to_string(CoreKindsMode m);
int core_kinds_mode_from_string(const char *s);
const char *memory_mode_to_string(MemoryMode m);
int memory_mode_from_string(const char *s);
const char *fit_mode_to_string(FitMode m);
int fit_mode_from_string(const char *s);
