/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Guest NUMA cells and where a domain's vCPUs go among the nodes of its set. A guest cell is a promise
 * to the guest that its vCPUs share memory: each cell's vCPUs go to one host node, and its memory with
 * them. Without cells the same rule holds for the domain as a whole: its vCPUs go where its memory goes.
 */

#include "policy-internal.h"

/* Copies the request's cells into plan->cells: their vCPUs as the plan's vCPU indexes (libvirt's ids
 * through req->vcpu_ids; ids not online are left out), their <memnode> nodes. */
void cells_init_plan(const PlacementRequest *req, Plan *plan);

/*
 * The cells of a plan with vCPUs in the orders they take room, those a <memnode> binds among them too: the
 * same for every set of nodes one search weighs (they follow from the plan, v's usable cores and
 * cells_set_homes()), so worked out once for it rather than over every cell of the guest for each set (a
 * memory device its <source><nodemask> binds is a cell without vCPUs, and a guest may have hundreds). The
 * functions below that take one work it out themselves when given NULL.
 */
typedef struct CellsPacking CellsPacking;
CellsPacking *cells_packing_new(const HostView *v, const Plan *plan);
void cells_packing_free(CellsPacking *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CellsPacking, cells_packing_free)
/* The indexes into plan->cells of its cells with vCPUs, into *n of them. */
const unsigned *cells_packing_cells(const CellsPacking *p, unsigned *n);

/*
 * Puts each cell of plan whose vCPUs one node of the host could hold on one node of nodes[0..n): the
 * biggest cells first, each on the node with most room left, else (when that leaves one out) on the
 * tightest node; the cells a <memnode> ties to nodes (their own, or those nearest their memory) before the
 * others, and those none of their nodes holds whole spread over those nodes' room before the others take
 * it. room[i] is what node nodes[i] has for vCPUs, mem_room[i] for memory (NULL: memory is not counted);
 * both are reduced by what the cells take. vcpu_node[v] receives the node index of vCPU v, or -1 for a
 * vCPU of no cell or of a cell left out (a tied cell's vCPUs beyond its nodes' room). Returns false when
 * a cell one node could hold was left out.
 */
bool cells_pack(const HostView *v, const unsigned *nodes, unsigned n, unsigned *room, uint64_t *mem_room,
                const Plan *plan, const CellsPacking *packing, int *vcpu_node);

/*
 * For a domain that shares cores anyway: each cell on one node where its vCPUs share that node's cores no
 * more than the domain's vCPUs must share the set's (busy or not): the one that gives most of its vCPUs a
 * free core of their own (PolicyOps.capacity), then the one with most free cores left after the cells
 * already there, then most room; a cell no node holds so is split, and so is one whose node gives fewer of
 * its vCPUs a free core than the set's nodes together could when that gives more of the domain's vCPUs a
 * free core in all (every vCPU in a cell, none bound by a <memnode>). vcpu_node as for cells_pack.
 */
void cells_pack_shared(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
                       const CellsPacking *packing, int *vcpu_node);

/*
 * The node index every vCPU of plan goes to inside nodes[0..n), whose capacity[] has room for them:
 * cells whole on one node each where they fit; a cell whose vCPUs fit a node but whose memory fits none
 * whole on the node from which its memory, filling the nearest nodes first, reaches least far; the other
 * vCPUs over the room left in proportion to where the memory will go (evenly when every node has the
 * memory for an even share). Returns the farthest such a cell's memory reaches from its vCPUs' node
 * (TOPOLOGY_LOCAL when no cell's memory spills), and adds to spilled (when not NULL) the nodes it spills to.
 */
uint32_t cells_vcpu_nodes(const HostView *v, const unsigned *nodes, unsigned n, const unsigned *capacity,
                          const Plan *plan, const CellsPacking *packing, int *vcpu_node, CpuSet *spilled);

/* Whether the set nodes[0..n) has room for every cell of plan on one node each (see cells_pack). */
bool cells_fit(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
               const CellsPacking *packing);
/* Whether the request binds all its memory to nodes (a <numatune><memory> of its own, or placementd's
 * binding): then it is not counted against the free memory of the nodes its cells go to. */
bool cells_memory_bound(const HostView *v);
/*
 * Whether the set nodes[0..n) has, for each guest cell its <memnode> binds to a node with CPUs, one of
 * those nodes: a set without one would run the cell's vCPUs away from its memory. With room, also that
 * the free capacity of the cells' own nodes holds their vCPUs (a cell may spread over its nodes).
 */
bool cells_bound_fit(const HostView *v, const unsigned *nodes, unsigned n, const Plan *plan,
                     const CellsPacking *packing, bool room);

/*
 * For each guest cell with vCPUs whose <memnode> binds it to nodes none of which has a core its vCPUs may
 * use (memory-only nodes, nodes its <vcpu cpuset> leaves out or whose CPUs ReservedCPUs= keeps): the nodes
 * nearest that memory (by the SLIT; its mean distance over several nodes) whose free capacity holds it,
 * after the cells bound to nodes with cores have taken theirs and the bigger such cells theirs, into
 * v->cell_homes. Of nodes as near, it takes the room of those the cells after it have no nearer their own
 * memory first; its nodes are those it took room on and those as near whose room no cell took. Only those
 * nodes take its vCPUs; a cell no nodes have room for gets none (any node). Called once v's capacities are
 * set.
 */
void cells_set_homes(HostView *v, const Plan *plan);

/*
 * For a domain whose memory is not bound as a whole: takes the memory its cells' <memnode> elements bind out
 * of v's free memory on those nodes (each bound node in turn, as far as it has it), so that the other
 * cells and vCPUs find only what is left there (a cell bound to a node whose hugepage pool it fills leaves
 * none of it to another; of a request with both kinds of memory, each bound cell takes its own kind,
 * HostView.node_free_pages or node_free_ordinary). Returns v's free memory as it was, for
 * cells_free_bound_memory(), or NULL when nothing is bound so.
 */
uint64_t *cells_hold_bound_memory(HostView *v, const Plan *plan);
/* Gives v its free memory back from what cells_hold_bound_memory() returned (NULL: nothing to do). */
void cells_free_bound_memory(HostView *v, const uint64_t *saved);

/* Fills plan->cells[].nodes from where their vCPUs went. */
void cells_record_nodes(const Topology *t, Plan *plan);
/*
 * Once the set and what each of its nodes takes are chosen (vcpu_node[], by cells_vcpu_nodes() or
 * cells_pack_shared()): which of the cells of as many vCPUs whole on a node goes to which of their nodes,
 * so that the cells the guest holds near (its cells' <distances>, else its <topology> sockets) run on near
 * nodes; cells of different memory only where every node's free memory holds what it then takes (only
 * cells of one size when a cell is split or memory is in no cell). Of the mappings (every one for up to 5
 * such cells, else those trades reach, up to 16), the one that least often holds two cells the guest has
 * nearer than two others as far or farther apart than those; the mapping as packed wins a tie. Cells a
 * <memnode> binds, and cells with a vCPU a <cachetune> keeps under its caches, stay where they are.
 * Nothing moves when the guest says nothing of its cells' distances.
 */
void cells_follow_guest(const HostView *v, const Plan *plan, int *vcpu_node);
/* A guest distance at least this far is a remote node to the guest's kernel (Linux's REMOTE_DISTANCE, what
 * it takes for a node of another socket): cells its <distances> set so far apart may run as far. */
#define CELLS_GUEST_REMOTE 20u

/* How the guest holds two of its cells apart (cells_guest_apart()). */
typedef enum CellsApart {
        CELLS_APART_NONE,      /* it does not (or says nothing of them) */
        CELLS_APART_DISTANCES, /* its <distances> between them are CELLS_GUEST_REMOTE or more */
        CELLS_APART_SOCKETS,   /* its <topology> puts them on two sockets (without <distances>) */
} CellsApart;

/*
 * Whether the guest itself holds apart every two cells whole on nodes vcpu_node[] puts farther than
 * distance from one another: its <distances> between them CELLS_GUEST_REMOTE or more, or (without
 * <distances>) its <topology> puts them on two sockets. *a, *b (cell ids) and *g (the guest distance, or 2
 * for two sockets) receive the first such pair. CELLS_APART_NONE also when no two cells are so far apart.
 */
CellsApart cells_guest_apart(const HostView *v, const Plan *plan, const int *vcpu_node, uint32_t distance,
                             unsigned *a, unsigned *b, unsigned *g);
/* What the reason says of the guest's order of its cells (cells_follow_guest()), appended to s: that the
 * cells it holds nearer run on nearer nodes, or two pairs of cells the set's nodes hold otherwise. */
void cells_order_note(const Topology *t, const PlacementRequest *req, const Plan *plan, GString *s);

/* What the reason says of the cells: "" or "; guest cells: 0 on node 1, 1 on node 0", how that keeps the
 * guest's distances between them (req's; NULL: not said), and unless the definition binds them (memnodes),
 * that only the definition can bind each cell's memory. */
char *cells_note(const Topology *t, const PlacementRequest *req, const Plan *plan, bool memnodes);
