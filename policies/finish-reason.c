/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: the reason of a placed, overcommitted or unplaceable plan. */
#include "finish-internal.h"
#include "cells.h"
#include "size.h"

#include <string.h>

/* The reason's name for n of what capacity counts: "1 free core", "2 free cores". */
static const char *unit_of(const PolicyOps *ops, unsigned n)
{
        return n == 1 ? ops->unit_one : ops->unit;
}

bool finish_l3_decided(const SetChoice *choice)
{
        return choice->group_size > 1 && choice->l3_fit && choice->l3_unfit > 0;
}

/* How the set was chosen among its equally near sets (L3 fit, then Fit=), for the reason ("" when it was
 * the only one). */
static const char *group_note(const HostView *v, const SetChoice *choice)
{
        bool pack = v->params->fit == FIT_PACK;

        if (choice->group_size <= 1)
                return "";
        /* with no L3 known a group is a node's cores in one package (Topology.l3_unknown) */
        if (finish_l3_decided(choice) && v->t->l3_unknown)
                return pack
                           ? ", fullest of its equally near sets where each node's share fits one package's "
                             "cores (Fit=pack)"
                           : ", least loaded of its equally near sets where each node's share fits one "
                             "package's cores";
        if (finish_l3_decided(choice))
                return pack ? ", fullest of its equally near sets where each node's share fits one L3 cache "
                              "(Fit=pack)"
                            : ", least loaded of its equally near sets where each node's share fits one L3 "
                              "cache";
        return pack ? ", fullest of its equally near sets (Fit=pack)"
                    : ", least loaded of its equally near sets";
}

/* Why the guest's cells run in several packages (SetChoice.cells_across), for the reason: "" when they do
 * not or nothing nearer was passed over. */
static char *cells_across_note(const SetChoice *choice)
{
        switch (choice->cells_across) {
        case CELLS_ACROSS_GUEST:
                if (choice->cells_apart == CELLS_APART_SOCKETS)
                        return g_strdup_printf(
                            "; its guest cells cross the packages, as its <topology> puts "
                            "cells %u and %u on two sockets",
                            choice->cells_apart_a, choice->cells_apart_b);
                return g_strdup_printf(
                    "; its guest cells cross the packages, as its <distances> hold cells %u "
                    "and %u apart (%u)",
                    choice->cells_apart_a, choice->cells_apart_b, choice->cells_apart_g);
        case CELLS_ACROSS_NO_ROOM:
                return g_strdup("; its guest cells cross the packages: no nearer set has the room for them");
        case CELLS_ACROSS_BOUND:
                return g_strdup("; its guest cells cross the packages, as its <numatune><memnode> elements "
                                "bind them there");
        case CELLS_ACROSS_SPLIT:
                return g_strdup("; its guest cells cross the packages: a nearer set would split a cell over "
                                "its nodes");
        default:
                return g_strdup("");
        }
}

/* "4.0 GiB", or "96.0 MiB in 2.0 MiB hugepages" for hugepage-backed memory, "36.0 GiB (4.0 GiB of it in
 * 1.0 GiB hugepages)" for its whole memory when some guest cells have ordinary memory (other amounts "in
 * 1.0 GiB hugepages and ordinary memory"); into buf. */
static const char *memory_text(const PlacementRequest *req, uint64_t bytes, char *buf, size_t len)
{
        uint64_t pages = placement_request_page_memory(req);
        char a[32], b[32], c[32];

        if (!req->hugepage_size)
                return size_format(bytes, buf, len);
        if (req->second_page_size && pages < req->memory) {
                char d[32], e[32];
                /* cells of two page sizes: "18.0 GiB (12.0 GiB in 1.0 GiB hugepages, 6.0 GiB in 2.0 MiB
                 * hugepages)", other amounts "in 1.0 GiB and 2.0 MiB hugepages" */
                if (bytes == req->memory)
                        g_snprintf(buf, len, "%s (%s in %s hugepages, %s in %s hugepages)",
                                   size_format(bytes, a, sizeof(a)), size_format(pages, c, sizeof(c)),
                                   size_format(req->hugepage_size, b, sizeof(b)),
                                   size_format(req->memory - pages, d, sizeof(d)),
                                   size_format(req->second_page_size, e, sizeof(e)));
                else
                        g_snprintf(buf, len, "%s in %s and %s hugepages", size_format(bytes, a, sizeof(a)),
                                   size_format(req->hugepage_size, b, sizeof(b)),
                                   size_format(req->second_page_size, e, sizeof(e)));
                return buf;
        }
        if (pages < req->memory && bytes == req->memory)
                g_snprintf(buf, len, "%s (%s of it in %s hugepages)", size_format(bytes, a, sizeof(a)),
                           size_format(pages, c, sizeof(c)), size_format(req->hugepage_size, b, sizeof(b)));
        else
                g_snprintf(buf, len, "%s in %s hugepages%s", size_format(bytes, a, sizeof(a)),
                           size_format(req->hugepage_size, b, sizeof(b)),
                           pages < req->memory ? " and ordinary memory" : "");
        return buf;
}

/* ", 68.0 MiB in the whole pages QEMU backs each guest cell in" when the host has free what the request's
 * bytes come to but not its whole pages (policy_set_need(): two 33 MiB cells of 2 MiB pages take 34), ""
 * otherwise; into buf. */
static const char *whole_pages_text(const PlacementRequest *req, const SetLoad *host, char *buf, size_t len)
{
        uint64_t need = policy_set_need(req);
        char a[32];

        buf[0] = '\0';
        if (req->hugepage_size && policy_set_memory(req) == req->memory && need > req->memory &&
            host->free_memory >= req->memory)
                g_snprintf(buf, len, ", %s in the whole pages QEMU backs each guest cell in",
                           size_format(need, a, sizeof(a)));
        return buf;
}

/* The same for what is free when it falls short of than: never the same figure as than's. */
static const char *memory_text_short_of(const PlacementRequest *req, uint64_t bytes, uint64_t than,
                                        char *buf, size_t len)
{
        char a[32], b[32];

        if (!req->hugepage_size)
                return size_format_short_of(bytes, than, buf, (unsigned)len);
        /* of a request of two kinds, what is free of both */
        if (req->second_page_size && placement_request_page_memory(req) < req->memory) {
                char c[32];
                g_snprintf(buf, len, "%s in %s and %s hugepages",
                           size_format_short_of(bytes, than, a, sizeof(a)),
                           size_format(req->hugepage_size, b, sizeof(b)),
                           size_format(req->second_page_size, c, sizeof(c)));
                return buf;
        }
        g_snprintf(buf, len, "%s in %s hugepages%s", size_format_short_of(bytes, than, a, sizeof(a)),
                   size_format(req->hugepage_size, b, sizeof(b)),
                   placement_request_page_memory(req) < req->memory ? " and ordinary memory" : "");
        return buf;
}

/* What node n has free for the plan's memory before the plan: its free memory less MemoryReserve=, or its
 * free hugepages of the plan's size. */
uint64_t finish_node_free_bytes(const HostView *v, const Plan *plan, unsigned n)
{
        uint64_t used = ledger_node_memory(v->l, n), reserve = v->params->memory_reserve;
        uint64_t size = v->t->nodes[n].memory;

        uint64_t free = size > used && size - used > reserve ? size - used - reserve : 0;

        /* a plan with cells of ordinary memory beside its hugepages: both */
        if (plan->hugepage_size && plan->node_ordinary && plan->second_page_size)
                free = ledger_node_free_hugepages(v->l, n, plan->second_page_size);
        if (plan->hugepage_size)
                return ledger_node_free_hugepages(v->l, n, plan->hugepage_size) +
                       (plan->node_ordinary ? free : 0);
        return free;
}

/* Whether the plan counts memory on a node outside its set. */
static bool counted_outside_set(const Topology *t, const Plan *plan)
{
        for (unsigned n = 0; n < plan->nnode_memory && n < t->nnodes; n++)
                if (plan->node_memory[n] && !cpuset_has(plan->nodes, n))
                        return true;
        return false;
}

/* Whether memory the request binds is counted on a node its binding does not name (preferred falling back
 * from a node that has no room or whose memory is not allowed): what the binding's nodes have free does
 * not hold it. */
static bool counted_off_binding(const Topology *t, const PlacementRequest *req, const Plan *plan)
{
        if (req->memory_source == MEMORY_SOURCE_NONE || !req->memory_nodes)
                return false;
        for (unsigned n = 0; n < plan->nnode_memory && n < t->nnodes; n++)
                if (plan->node_memory[n] && !cpuset_has(req->memory_nodes, t->nodes[n].os_index))
                        return true;
        return false;
}

/* A guest whose <page> elements give its cells different sizes is counted in the largest
 * (domain-xml-numa.c): said, since libvirt backs each cell from its own size's pool; so are memory devices
 * counted in their cells (PlacementRequest.devices_in_cells). "" when neither. */
static char *hugepage_sizes_note(const PlacementRequest *req)
{
        /* a memory device's own <source> would make a third kind (domain_xml_numa_devices()) */
        const char *devices = req->devices_in_cells
                                  ? "; its memory devices' own <source><pagesize> not counted apart: the "
                                    "guest would hold more kinds of memory than two; counted in their guest "
                                    "cells' kind"
                                  : "";
        char a[32];

        if (!req->hugepage_size || !req->hugepage_sizes_differ)
                return g_strdup(devices);
        return g_strdup_printf(
            "; its <hugepages><page> sizes differ per guest cell: %s counted in %s "
            "hugepages, the largest (libvirt backs each cell from its own size's pool; not "
            "counted per cell)%s",
            placement_request_page_memory(req) < req->memory ? "the memory of its hugepage-backed cells"
                                                             : "all its memory",
            size_format(req->hugepage_size, a, sizeof(a)), devices);
}

/* The largest and the mean distance between the nodes a plan took: past a binding, the set's nodes that
 * got no vCPU are none of the plan's (take_set()), and the set's figures would describe nodes the domain
 * does not run on. */
static void taken_distances(const Topology *t, const NodeSet *set, const CpuSet *nodes, uint32_t *ret_max,
                            double *ret_mean)
{
        *ret_max = set->max_distance;
        *ret_mean = set->mean_distance;
        if (cpuset_count(nodes) != set->nnodes && !cpuset_is_empty(nodes))
                topology_nodes_distance(t, nodes, ret_max, ret_mean);
}

/* The set's nodes, as the reason names them with the free cores and memory they have: with "of which it
 * takes ..." when the domain is on fewer of them (drop_unused_nodes()). */
static char *set_nodes_text(const Topology *t, const NodeSet *set, const CpuSet *taken)
{
        g_autoptr(CpuSet) all = cpuset_new();
        const unsigned *members = nodeset_members(t->nodesets, set);
        g_autofree char *set_text = NULL, *taken_text = NULL;

        for (unsigned i = 0; i < set->nnodes; i++)
                cpuset_add(all, members[i]);
        if (cpuset_equal(all, taken))
                return finish_format_nodes(t, taken);
        set_text = finish_format_nodes(t, all);
        taken_text = finish_format_nodes(t, taken);
        return g_strdup_printf("%s, of which it takes %s", set_text,
                               g_str_has_prefix(taken_text, "nodes ")  ? taken_text + 6
                               : g_str_has_prefix(taken_text, "node ") ? taken_text + 5
                                                                       : taken_text);
}

/* For a domain not bound as a whole whose cells' <memnode> elements bind memory: the bound nodes whose
 * free memory (or pools) lack what is counted there, as for a domain's binding ("" when none). */
static char *cells_short_note(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        g_autoptr(CpuSet) bound = finish_cells_binding_nodes(req);
        GString *s = g_string_new(NULL);

        if (req->memory_source == MEMORY_SOURCE_NONE && !cpuset_is_empty(bound))
                finish_memory_short_note(v, req, plan, bound, s);
        return g_string_free(s, FALSE);
}

/* For a domain not bound as a whole: the nodes of each cell's <memnode> this host does not have (libvirt
 * checks every nodeset and refuses to start the guest), as for a domain's binding ("" when none). */
static char *cells_missing_note(const Topology *t, const PlacementRequest *req)
{
        GString *s = g_string_new(NULL);

        for (unsigned c = 0; req->memory_source == MEMORY_SOURCE_NONE && c < req->ncells; c++) {
                g_autoptr(CpuSet) missing = cpuset_new();
                g_autofree char *gone = NULL;
                const PlacementCell *cell = &req->cells[c];
                if (!cell->memory_nodes || !finish_memory_nodes_missing(t, cell->memory_nodes, missing))
                        continue;
                /* a memory device bound by its cell's <memnode>: that cell's, said once */
                if (cell->device && !cell->device_nodemask)
                        continue;
                gone = cpuset_format(missing);
                if (cell->device)
                        g_string_append_printf(s,
                                               "; node%s %s of the <source><nodemask> of a memory device of "
                                               "guest cell %u %s not on this host: libvirt refuses to start "
                                               "such a guest",
                                               cpuset_count(missing) == 1 ? "" : "s", gone,
                                               cell->device_target,
                                               cpuset_count(missing) == 1 ? "is" : "are");
                else
                        g_string_append_printf(
                            s,
                            "; node%s %s of the <memnode> of guest cell %u %s not on this "
                            "host: libvirt refuses to start such a guest",
                            cpuset_count(missing) == 1 ? "" : "s", gone, cell->id,
                            cpuset_count(missing) == 1 ? "is" : "are");
        }
        return g_string_free(s, FALSE);
}

/* What an overcommitted plan's nodes hold of its memory, for its reason: "" when they hold all of it (the
 * reason says the set holds the memory); otherwise how much, after its free cores (a <vcpu cpuset> binds
 * none, and what they lack spills to other nodes: finish_spill(); a binding may put it all elsewhere), the
 * notes after it saying where the rest is. What finish_spill() will count on them past every node's room
 * is theirs too. */
static char *held_there_text(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        bool bound = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;
        uint64_t on_set = bound ? 0 : finish_spill_stuck(v, plan);
        char a[32], b[128];

        CPUSET_FOREACH (n, plan->nodes)
                if ((unsigned)n < plan->nnode_memory)
                        on_set += plan->node_memory[n];
        if (on_set >= req->memory)
                return g_strdup("");
        if (!on_set)
                return g_strdup_printf(", none of its %s counted there",
                                       memory_text(req, req->memory, b, sizeof(b)));
        return g_strdup_printf(", %s of its %s counted there", size_format(on_set, a, sizeof(a)),
                               memory_text(req, req->memory, b, sizeof(b)));
}

/* The reason of a placed or overcommitted plan. */
char *finish_placed_reason(const HostView *v, const PolicyOps *ops, const PlacementRequest *req,
                           const SetChoice *choice, const Plan *plan)
{
        const NodeSet *set = &v->t->nodesets->candidates[choice->rank];
        g_autofree char *where = set_nodes_text(v->t, set, plan->nodes);
        g_autofree char *constraints = finish_constraint_note(v, req, plan);
        bool memnodes = req->memory_source == MEMORY_SOURCE_MEMNODE, bound_cells = false,
             constrained = false;
        for (unsigned c = 0; c < plan->ncells; c++)
                bound_cells = bound_cells || !cpuset_is_empty(plan->cells[c].memory_nodes);
        memnodes = memnodes || bound_cells;
        g_autofree char *cells = cells_note(v->t, req, plan, memnodes);
        g_autofree char *pages = hugepage_sizes_note(req);
        g_autofree char *short_pools = cells_short_note(v, req, plan);
        g_autofree char *cells_missing = cells_missing_note(v->t, req);
        g_autofree char *note = g_strconcat(cells, constraints, pages, short_pools, cells_missing, NULL);
        g_autofree char *sharing = NULL;
        char a[32], b[128], busiest[96] = "", held[128] = "";

        if (plan->result == PLAN_PLACED) {
                uint64_t set_memory = policy_set_memory(req);
                char c[32], part[96] = "", memory[320];
                bool bound_elsewhere = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;

                /* none of it counted where the cores are (a <memnode> may bind a cell away from them) */
                CPUSET_FOREACH (n, plan->nodes)
                        bound_elsewhere =
                            bound_elsewhere && ((unsigned)n >= plan->nnode_memory || !plan->node_memory[n]);
                /* memory its cells' <memnode> elements bind elsewhere is not the set's to hold */
                if (set_memory != req->memory &&
                    (req->memory_source == MEMORY_SOURCE_NONE || !req->memory_nodes))
                        g_snprintf(part, sizeof(part), " of its %s (the rest bound by its cells' <memnode>)",
                                   size_format(req->memory, c, sizeof(c)));
                if (bound_elsewhere) /* what the set has free does not hold it: the note says where */
                        g_snprintf(memory, sizeof(memory), "its %s bound to other nodes",
                                   memory_text(req, req->memory, b, sizeof(b)));
                else if (counted_outside_set(v->t, plan) ||
                         (v->memory_remote && counted_off_binding(v->t, req, plan))) {
                        /* bound memory partly counted off the set (preferred falls back): where it is */
                        g_autoptr(CpuSet) counted = cpuset_new();
                        g_autofree char *list = NULL;
                        uint64_t free_bytes = 0;
                        for (unsigned n = 0; n < plan->nnode_memory; n++)
                                if (plan->node_memory[n]) {
                                        cpuset_add(counted, v->t->nodes[n].os_index);
                                        free_bytes += finish_node_free_bytes(v, plan, n);
                                }
                        list = cpuset_format(counted);
                        g_snprintf(
                            memory, sizeof(memory), "%s free on node%s %s, where it is counted, for %s",
                            size_format(free_bytes, a, sizeof(a)), cpuset_count(counted) == 1 ? "" : "s",
                            list, memory_text(req, req->memory, b, sizeof(b)));
                } else if (v->t->memory_sizes_unknown) /* nothing free to tell */
                        g_snprintf(memory, sizeof(memory), "%s%s not counted (no memory sizes known)",
                                   memory_text(req, part[0] ? set_memory : req->memory, b, sizeof(b)), part);
                else if (v->node_free_pages) {
                        /* each kind's room: its hugepages' and its ordinary cells' */
                        const unsigned *members = nodeset_members(v->t->nodesets, set);
                        uint64_t free_pages = 0, ordinary = 0;
                        char d[32], e[32], f[48];
                        for (unsigned i = 0; i < set->nnodes; i++) {
                                free_pages += v->node_free_pages[members[i]];
                                ordinary += v->node_free_ordinary[members[i]];
                        }
                        g_snprintf(memory, sizeof(memory), "%s in %s hugepages and %s %s free for %s%s",
                                   size_format(free_pages, a, sizeof(a)),
                                   size_format(req->hugepage_size, d, sizeof(d)),
                                   size_format(ordinary, e, sizeof(e)),
                                   plan_second_kind(req->second_page_size, f, sizeof(f)),
                                   memory_text(req, part[0] ? set_memory : req->memory, b, sizeof(b)), part);
                } else
                        g_snprintf(memory, sizeof(memory), "%s free for %s%s",
                                   size_format(choice->load.free_memory, a, sizeof(a)),
                                   memory_text(req, part[0] ? set_memory : req->memory, b, sizeof(b)), part);
                uint32_t max_distance;
                double mean_distance;
                char cells_nearer[384] = "";
                g_autofree char *across = NULL;

                taken_distances(v->t, set, plan->nodes, &max_distance, &mean_distance);
                /* what made it nearer: cells split over nearer nodes, or memory spilled to nearer ones */
                if (choice->cells_nearer && choice->cell_split > TOPOLOGY_LOCAL &&
                    choice->cell_reach > TOPOLOGY_LOCAL)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", of the sets as near by their farthest nodes the one that splits each "
                                   "guest cell over nodes at most %u apart, its memory at most %u from its "
                                   "vCPUs",
                                   choice->cell_split, choice->cell_reach);
                else if (choice->cells_nearer && choice->cell_split > TOPOLOGY_LOCAL)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", of the sets as near by their farthest nodes the one that splits each "
                                   "guest cell over nodes at most %u apart",
                                   choice->cell_split);
                else if (choice->cells_nearer)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", of the sets as near by their farthest nodes the one that keeps each "
                                   "guest cell whole with its memory at most %u from its vCPUs",
                                   choice->cell_reach);
                else if (choice->cells_whole_distance)
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", nearer than any set that holds each guest cell with all its memory "
                                   "on its node (max distance %u%s): each cell whole, its memory at most %u "
                                   "from its vCPUs",
                                   choice->cells_whole_distance,
                                   choice->cells_whole_across ? ", across the packages" : "",
                                   choice->cell_reach);
                else if (choice->wider_rank >= 0) {
                        const NodeSet *wider = &v->t->nodesets->candidates[choice->wider_rank];
                        g_autoptr(CpuSet) os = cpuset_new();
                        g_autofree char *list = NULL;
                        const unsigned *members = nodeset_members(v->t->nodesets, wider);

                        for (unsigned i = 0; i < wider->nnodes; i++)
                                cpuset_add(os, v->t->nodes[members[i]].os_index);
                        list = cpuset_format(os);
                        g_snprintf(cells_nearer, sizeof(cells_nearer),
                                   ", fewer nodes than nodes %s, which rank nearer but over which its vCPUs "
                                   "would split unevenly, %.2f from their memory on average against %.2f "
                                   "here",
                                   list, choice->wider_mean, choice->split_mean);
                }
                /* nearer than the sets that hold each cell with all its memory: said as well when the
                 * cells' spill already made it nearer among those as near */
                if (choice->cells_nearer && choice->cells_whole_distance) {
                        size_t len = strlen(cells_nearer);
                        g_snprintf(cells_nearer + len, sizeof(cells_nearer) - len,
                                   ", nearer than any set that holds each guest cell with all its memory "
                                   "on its node (max distance %u%s)",
                                   choice->cells_whole_distance,
                                   choice->cells_whole_across ? ", across the packages" : "");
                }
                across = cells_across_note(choice);
                return g_strdup_printf("%s: %u %s for %u %s, %s; %s qualifying set "
                                       "(max distance %u, mean %.2f)%s%s%s%s",
                                       where, choice->load.capacity, unit_of(ops, choice->load.capacity),
                                       req->vcpus, req->vcpus == 1 ? "vCPU" : "vCPUs", memory,
                                       choice->cells_nearer || choice->wider_rank >= 0 ? "a" : "nearest",
                                       max_distance, mean_distance, cells_nearer, group_note(v, choice),
                                       across, note);
        }
        sharing = finish_sharing_note(v, plan);
        if (choice->busy_cores > 1)
                g_snprintf(busiest, sizeof(busiest),
                           ", of its equally near sets the one whose %u least busy cores run least",
                           choice->busy_cores);
        else if (choice->least_busy)
                g_strlcpy(busiest, ", of its equally near sets the one whose least busy core runs least",
                          sizeof(busiest));
        /* the user's constraints leave only some nodes: the sets they allow lack the room, not the host */
        for (unsigned n = 0; n < v->t->nnodes && !constrained; n++)
                constrained = !v->node_allowed[n] && v->t->nodes[n].ncores > 0;
        /* with no memory sizes known, memory took no part in the choice: the reason names cores alone */
        if (!v->t->memory_sizes_unknown)
                g_snprintf(held, sizeof(held), " and %s free", memory_text(req, req->memory, b, sizeof(b)));
        /* "that holds the memory" only of a set that holds all of it (its memory spilled past a
         * <vcpu cpuset>'s nodes, or bound elsewhere, it does not) */
        g_autofree char *there = v->t->memory_sizes_unknown ? g_strdup("") : held_there_text(v, req, plan);
        return g_strdup_printf(
            "no node set %shas %u %s%s%s; %s is the nearest%s%s (%u %s there%s): %s%s",
            constrained ? "inside its constraints " : "", req->vcpus, unit_of(ops, req->vcpus), held,
            bound_cells ? " with each <memnode> cell on its own nodes" : "", where,
            v->t->memory_sizes_unknown || there[0] ? "" : " that holds the memory", busiest,
            choice->load.capacity, unit_of(ops, choice->load.capacity), there, sharing, note);
}

/* Memory nothing binds that ends wholly or partly on nodes none of the plan's vCPUs run on (their nodes
 * have no room left): a trade of locality for a free core, said in the reason. */
void finish_remote_memory_note(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) vcpu_nodes = cpuset_new(), memory_nodes = cpuset_new(), away_nodes = cpuset_new();
        g_autofree char *vn = NULL, *mn = NULL;
        uint64_t local = 0, away = 0, counted_all = 0, stuck;
        bool memoryless = true;
        char *old = plan->reason;
        char a[32], b[32], c[32];

        if ((req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) || !plan->memory)
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        cpuset_add(vcpu_nodes,
                                   t->nodes[t->cores[t->pus[plan->vcpu_pu[i]].core].node].os_index);
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan->node_memory[n]) {
                        if (cpuset_has(vcpu_nodes, t->nodes[n].os_index)) {
                                local += plan->node_memory[n];
                                continue;
                        }
                        cpuset_add(memory_nodes, t->nodes[n].os_index);
                        /* memory-only nodes are named by the memory tiers' note; guest cells by theirs */
                        if (t->nodes[n].ncores > 0 && plan->ncells == 0) {
                                cpuset_add(away_nodes, t->nodes[n].os_index);
                                away += plan->node_memory[n];
                        }
                }
        if (cpuset_is_empty(vcpu_nodes) || cpuset_is_empty(memory_nodes))
                return;
        vn = cpuset_format(vcpu_nodes);
        /* what no node has the room for is counted beside its vCPUs after this (finish_spill()): some of
         * its memory is where they run then, their room none */
        stuck = finish_spill_stuck(v, plan);
        if (local || stuck) {
                g_autofree char *room =
                    local ? g_strdup_printf("no room for more than %s", size_format(local, c, sizeof(c)))
                          : g_strdup("no room for it");
                if (!away)
                        return;
                mn = cpuset_format(away_nodes);
                plan->reason = g_strdup_printf(
                    "%s; %s of its %s %s on node%s %s, where none of its vCPUs runs (node%s %s %s %s)",
                    old ? old : "", size_format(away, a, sizeof(a)), size_format(plan->memory, b, sizeof(b)),
                    plan->hugepage_size && (!plan->node_ordinary || plan->second_page_size)
                        ? "in hugepages is"
                        : "is",
                    cpuset_count(away_nodes) == 1 ? "" : "s", mn, cpuset_count(vcpu_nodes) == 1 ? "" : "s",
                    vn, cpuset_count(vcpu_nodes) == 1 ? "has" : "have", room);
                g_free(old);
                return;
        }
        /* a node with CPUs and no memory at all (a PowerVM LPAR's) has no room to run out of */
        for (unsigned n = 0; n < t->nnodes; n++)
                memoryless = memoryless && (!cpuset_has(vcpu_nodes, t->nodes[n].os_index) ||
                                            (t->nodes[n].memory == 0 && t->nodes[n].nhugepages == 0));
        mn = cpuset_format(memory_nodes);
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                counted_all += plan->node_memory[n];
        /* what is counted nowhere yet spills to other nodes after this (finish_spill(), its note says
         * where): these nodes hold only some of it */
        if (counted_all < plan->memory)
                plan->reason = g_strdup_printf(
                    "%s; none of its memory is where its vCPUs run: %s of its %s is on node%s %s (node%s %s "
                    "%s)",
                    old ? old : "", size_format(counted_all, a, sizeof(a)),
                    size_format(plan->memory, b, sizeof(b)), cpuset_count(memory_nodes) == 1 ? "" : "s", mn,
                    cpuset_count(vcpu_nodes) == 1 ? "" : "s", vn,
                    memoryless
                        ? (cpuset_count(vcpu_nodes) == 1 ? "has no memory" : "have no memory")
                        : (cpuset_count(vcpu_nodes) == 1 ? "has no room for it" : "have no room for it"));
        else
                plan->reason = g_strdup_printf(
                    "%s; its memory is all on node%s %s, none where its vCPUs run (node%s %s %s)",
                    old ? old : "", cpuset_count(memory_nodes) == 1 ? "" : "s", mn,
                    cpuset_count(vcpu_nodes) == 1 ? "" : "s", vn,
                    memoryless
                        ? (cpuset_count(vcpu_nodes) == 1 ? "has no memory" : "have no memory")
                        : (cpuset_count(vcpu_nodes) == 1 ? "has no room for it" : "have no room for it"));
        g_free(old);
}

void finish_unplaceable(const HostView *v, const PlacementRequest *req, const SetLoad *host, Plan *plan)
{
        const PlacementParams *params = v->params;
        bool bound = req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes;
        char a[64], b[128], w[96];

        if (bound && finish_memory_nodes_all_missing(v->t, req->memory_nodes)) {
                /* libvirt refuses to start a guest bound to nodes the host lacks: no memory counted */
                g_autofree char *list = cpuset_format(req->memory_nodes);
                plan->nothing_usable = true;
                memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
                plan->reason = g_strdup_printf(
                    "%s its memory to node%s %s (%s), which this host does not have: libvirt refuses to "
                    "start "
                    "such a guest; nothing pinned",
                    finish_memory_source_text(req), cpuset_count(req->memory_nodes) == 1 ? "" : "s", list,
                    req->memory_source == MEMORY_SOURCE_MEMNODE ? "per cell"
                                                                : memory_mode_to_string(req->memory_mode));
        } else if (host->usable_pus == 0 && (req->allowed_cpus || req->cache_cpus || bound)) {
                g_autofree char *note = NULL, *counted = NULL;
                /* it runs all the same (on CPUs the host keeps, ReservedCPUs=): its memory is where it is
                 * bound, or on the nodes of its CPUs */
                g_autoptr(CpuSet) nodes = cpuset_new();
                plan->nothing_usable = true;
                for (unsigned n = 0; !bound && n < v->t->nnodes; n++)
                        if (v->t->nodes[n].ncores > 0 &&
                            (!req->allowed_cpus ||
                             cpuset_intersects(v->t->nodes[n].cpus, req->allowed_cpus)) &&
                            (!req->cache_cpus || cpuset_intersects(v->t->nodes[n].cpus, req->cache_cpus)))
                                cpuset_add(nodes, v->t->nodes[n].os_index);
                /* bound: where its definition puts it, not where MemoryTiers= would (memory_tiers_note()) */
                if (bound) {
                        policy_charge_bound_memory(v, req, plan);
                        plan->keep_memory = true;
                } else if (!cpuset_is_empty(nodes))
                        finish_charge_bound(v, nodes, req->memory, MEMORY_MODE_INTERLEAVE, NULL, plan);
                policy_drop_poolless_memory(v->t, plan);
                note = finish_constraint_note(v, req, plan);
                if (!bound && !cpuset_is_empty(nodes)) {
                        g_autofree char *list = cpuset_format(nodes);
                        counted = g_strdup_printf("; its memory counted on node%s %s, where its CPUs are",
                                                  cpuset_count(nodes) == 1 ? "" : "s", list);
                }
                plan->reason = g_strdup_printf("no usable CPU of this host lies inside its constraints%s%s; "
                                               "nothing pinned",
                                               note, counted ? counted : "");
        } else if (host->usable_pus == 0 && host->free_memory >= req->memory && params->reserved_cpus) {
                g_autofree char *reserved = cpuset_format(params->reserved_cpus);
                plan->nothing_usable = true;
                plan->reason = g_strdup_printf(
                    "no CPU is left for vCPUs: ReservedCPUs=%s holds them all; nothing pinned", reserved);
        } else if (req->allowed_cpus && !bound && finish_spill_from_allowed(v, req, plan)) {
                /* <vcpu cpuset> binds no memory: the guest runs, what its nodes lack comes from others */
                char c[64];
                uint64_t remote = 0;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        remote += v->node_allowed[n] ? 0 : plan->node_memory[n];
                plan->reason = g_strdup_printf(
                    "no node set inside its <vcpu cpuset> has %s free (%s there); its memory is not bound, "
                    "so it runs all the same with %s of it on other nodes, counted nearest its CPUs; "
                    "nothing pinned",
                    memory_text(req, req->memory, b, sizeof(b)),
                    memory_text_short_of(req, host->free_memory, req->memory, a, sizeof(a)),
                    memory_text(req, remote, c, sizeof(c)));
        } else if (req->hugepage_size && v->node_free_pages) {
                /* cells of ordinary memory beside its hugepages: each kind's room on the host */
                g_autofree char *pages = hugepage_sizes_note(req);
                uint64_t free_pages = 0, ordinary = 0;
                char c[32], d[32], e[48];
                for (unsigned n = 0; n < v->t->nnodes; n++) {
                        free_pages += v->node_free_pages[n];
                        ordinary += v->node_free_ordinary[n];
                }
                /* kept by its <vcpu cpuset> alone: the whole host was looked at, not its cpuset's nodes */
                if (req->allowed_cpus && !bound) {
                        free_pages = finish_host_room(v, plan, false);
                        ordinary = finish_host_room(v, plan, true);
                }
                plan->reason = g_strdup_printf(
                    "no node set has %s free%s (%s in %s hugepages and %s %s free on the whole host; %s)%s; "
                    "nothing pinned",
                    memory_text(req, req->memory, b, sizeof(b)), whole_pages_text(req, host, w, sizeof(w)),
                    size_format(free_pages, a, sizeof(a)), size_format(req->hugepage_size, c, sizeof(c)),
                    size_format(ordinary, d, sizeof(d)),
                    plan_second_kind(req->second_page_size, e, sizeof(e)),
                    req->second_page_size ? "each guest cell takes only the pages of its own size"
                                          : "hugepage-backed cells never take general memory",
                    pages);
        } else if (req->hugepage_size) {
                g_autofree char *pages = hugepage_sizes_note(req);
                plan->reason = g_strdup_printf(
                    "no node set has %s free%s (%s free on the whole host; hugepage-backed memory never "
                    "takes general memory)%s; nothing pinned",
                    memory_text(req, req->memory, b, sizeof(b)), whole_pages_text(req, host, w, sizeof(w)),
                    memory_text_short_of(req, host->free_memory, req->memory, a, sizeof(a)), pages);
        } else if (v->t->memory_sizes_unknown) {
                /* no size known: what is free is not known either, only the figure each node is taken to
                 * hold (TOPOLOGY_MEMORY_UNKNOWN), which the guest goes beyond */
                plan->reason = g_strdup_printf(
                    "no node set holds %s: with no memory sizes known, each node with CPUs is taken to "
                    "hold %s; nothing pinned",
                    size_format(req->memory, b, sizeof(b)),
                    size_format(TOPOLOGY_MEMORY_UNKNOWN, a, sizeof(a)));
        } else {
                char c[64] = "";
                if (params->memory_reserve)
                        g_snprintf(c, sizeof(c), ", MemoryReserve=%s kept on each node",
                                   size_format(params->memory_reserve, a, sizeof(a)));
                plan->reason = g_strdup_printf(
                    "no node set has %s of free memory (%s free on the whole host%s); nothing pinned",
                    size_format(req->memory, b, sizeof(b)),
                    size_format_short_of(host->free_memory, req->memory, a, sizeof(a)), c);
        }
}

/* The clause of the bindings (guest cells' <memnode>, devices: memory devices' own <source><nodemask>)
 * that name only nodes the host lacks: ids the cells' (a device's: its guest cell's), nodes those named;
 * count how many there are. */
static char *missing_clause(bool devices, const CpuSet *ids, const CpuSet *nodes, unsigned count)
{
        g_autofree char *id_list = cpuset_format(ids), *node_list = cpuset_format(nodes);

        if (devices)
                return g_strdup_printf(
                    "the <source><nodemask> of %s memory device%s of guest cell%s %s "
                    "binds %s memory to node%s %s",
                    count == 1 ? "a" : "its", count == 1 ? "" : "s", cpuset_count(ids) == 1 ? "" : "s",
                    id_list, count == 1 ? "its" : "their", cpuset_count(nodes) == 1 ? "" : "s", node_list);
        return g_strdup_printf("the <numatune><memnode> of guest cell%s %s binds %s memory to node%s %s",
                               count == 1 ? "" : "s", id_list, count == 1 ? "its" : "their",
                               cpuset_count(nodes) == 1 ? "" : "s", node_list);
}

bool finish_cell_memory_missing(const Topology *t, const PlacementRequest *req, Plan *plan)
{
        /* [0]: guest cells by their <memnode>, [1]: memory devices by their own <source><nodemask> (one
         * bound by its cell's <memnode> is that cell's) */
        g_autoptr(CpuSet) cells = cpuset_new(), nodes = cpuset_new();
        g_autoptr(CpuSet) device_cells = cpuset_new(), device_nodes = cpuset_new();
        g_autofree char *cell_part = NULL, *device_part = NULL;
        unsigned ndevices = 0;

        for (unsigned c = 0; c < req->ncells; c++) {
                const PlacementCell *cell = &req->cells[c];
                if (!cell->memory_nodes || cpuset_is_empty(cell->memory_nodes) ||
                    !finish_memory_nodes_all_missing(t, cell->memory_nodes))
                        continue;
                if (cell->device && !cell->device_nodemask)
                        continue;
                cpuset_add(cell->device ? device_cells : cells,
                           cell->device ? cell->device_target : cell->id);
                cpuset_union(cell->device ? device_nodes : nodes, cell->memory_nodes);
                ndevices += cell->device;
        }
        if (cpuset_is_empty(cells) && !ndevices)
                return false;
        if (!cpuset_is_empty(cells))
                cell_part = missing_clause(false, cells, nodes, cpuset_count(cells));
        if (ndevices)
                device_part = missing_clause(true, device_cells, device_nodes, ndevices);
        plan->result = PLAN_UNPLACEABLE;
        memset(plan->node_memory, 0, sizeof(uint64_t) * plan->nnode_memory);
        plan->reason =
            g_strdup_printf("%s%s%s, which this host does not have: libvirt refuses to start such "
                            "a guest; nothing pinned",
                            cell_part ? cell_part : "", cell_part && device_part ? " and " : "",
                            device_part ? device_part : "");
        return true;
}
