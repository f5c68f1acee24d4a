/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The host as one request sees it: what each node, core and PU offers once the ledger is counted. */

#include "ledger.h"
#include "plan.h"
#include "topology.h"

typedef struct HostView {
        const Topology *t;
        const Ledger *l;
        const PlacementParams *params;
        const PlacementRequest *req; /* its constraints shape the view; NULL = none */
        bool *node_allowed;          /* [nnodes] inside the request's node and CPU constraints */
        /* The request binds its memory to nodes none of whose CPUs its vCPUs may use (memory-only nodes, a
         * <vcpu cpuset> or ReservedCPUs= leaving theirs out): every node with a CPU it may use is allowed,
         * and node_to_memory ([nnodes]) is each node's distance to that memory (summed over its nodes;
         * TOPOLOGY_UNREACHABLE when none is reachable), by which the sets are ranked. NULL otherwise. The
         * same when the bound nodes have too few free cores (PlacementRequest.vcpus_beyond_binding). */
        bool memory_remote;
        uint32_t *node_to_memory;
        /* Guest cells whose <memnode> binds them to nodes without a core their vCPUs may use: the nodes
         * (indexes) nearest that memory with free cores for them, where alone they go (cells_set_homes());
         * cell_home_ids[i] is the id of the cell cell_homes[i] is for. None when no cell is so bound. */
        unsigned ncell_homes;
        unsigned *cell_home_ids;
        CpuSet **cell_homes;
        bool *pu_usable;           /* [npus] not reserved for the host, allowed for the request */
        bool *pu_thread_usable;    /* [npus] the same for QEMU's own threads, which the request's
                                    * reserved caches do not confine (pu_usable itself without them) */
        bool *core_free;           /* [ncores] no vCPU counted, none of its PUs reserved, one usable */
        unsigned *node_free_cores; /* [nnodes] */
        /* [nnodes] cores that would be free but for the request's own emulator or I/O threads the user pins
         * there (PlacementRequest.vcpus_off_user_threads): the domain's own, no other domain's load */
        unsigned *node_own_thread_cores;
        unsigned *node_free_pus;    /* [nnodes] usable PUs with no vCPU */
        uint64_t *node_free_memory; /* [nnodes] after MemoryReserve and what the ledger holds */
        /* added: [nnodes] of node_free_memory, the free hugepages of the request's size and the free
         * ordinary memory (free hugepages of PlacementRequest.second_page_size when it has one), when the
         * request is hugepage-backed but some of its guest cells are not (PlacementCell.ordinary):
         * node_free_memory is then their sum; NULL otherwise */
        uint64_t *node_free_pages, *node_free_ordinary;
        unsigned *node_usable_pus;   /* [nnodes] PUs not reserved */
        unsigned *node_usable_cores; /* [nnodes] cores with at least one PU not reserved */
        unsigned *node_capacity;     /* [nnodes] what the policy counts as room (PolicyOps.capacity) */
        unsigned *node_size;         /* [nnodes] what the policy counts as size (PolicyOps.size) */
        uint64_t *node_load;         /* [nnodes] vCPUs counted on its PUs */
        /* [nnodes] of the usable cores, those with a realtime vCPU (ledger_core_realtime()), and their
         * usable PUs: no other vCPU runs beside a FIFO vCPU, busy or not (PolicyOps.size leaves them out) */
        unsigned *node_realtime_cores, *node_realtime_pus;
} HostView;

void host_view_init(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params);
/*
 * The host as one request sees it: nodes outside its memory nodes, or whose CPUs its allowed CPUs all
 * leave out, offer nothing (no PU, no core, no memory); inside them a core counts through its allowed
 * PUs only. req may be NULL (no constraints).
 */
void host_view_init_for(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params,
                        const PlacementRequest *req);
void host_view_done(HostView *v);
/* Whether nodes[0..n) (indexes) have room for each kind of the request's memory their set is to hold: its
 * hugepages in the pools, the cells no <page> backs in ordinary memory (HostView.node_free_pages and
 * node_free_ordinary); true when the request's memory is of one kind. */
bool host_view_kinds_fit(const HostView *v, const unsigned *nodes, unsigned n);
/* The kinds of that memory nodes[0..n) lack the room for: HOST_VIEW_PAGES_SHORT, HOST_VIEW_ORDINARY_SHORT or
 * both; 0 when they hold each (host_view_kinds_fit()). */
#define HOST_VIEW_PAGES_SHORT    1u
#define HOST_VIEW_ORDINARY_SHORT 2u
unsigned host_view_kinds_short(const HostView *v, const unsigned *nodes, unsigned n);
/* The nodes guest cell id may run on when its <memnode> nodes have no core for it (HostView.cell_homes),
 * else NULL. */
const CpuSet *host_view_cell_home(const HostView *v, unsigned id);

/* Whether memory of this kind may hold domains' memory under params (MemoryTiers=; never GPU memory). */
bool host_view_memory_usable(const PlacementParams *params, NodeKind kind);

/* First PU of core c that is usable (not reserved), or -1. */
int policy_core_first_usable_pu(const HostView *v, unsigned core);
