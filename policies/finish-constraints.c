/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: what the request's own constraints (cpuset, bindings, devices, I/O threads) did to the plan,
 * as a note of the reason. */
#include "finish-internal.h"
#include "policy.h"
#include "size.h"

#include <string.h>

/* "nodes 0-1", and the CPUs local to no NUMA node by their CPUs: they are no node's, never local. */
char *finish_format_nodes(const Topology *t, const CpuSet *node_indexes)
{
        g_autoptr(CpuSet) os = cpuset_new();
        g_autoptr(CpuSet) orphans = cpuset_new();
        g_autofree char *list = NULL, *cpus = NULL;

        CPUSET_FOREACH (n, node_indexes) {
                if (t->nodes[n].no_local_memory)
                        cpuset_union(orphans, t->nodes[n].cpus);
                else
                        cpuset_add(os, t->nodes[n].os_index);
        }
        list = cpuset_format(os);
        if (cpuset_is_empty(orphans))
                return g_strdup_printf("%s %s", cpuset_count(os) == 1 ? "node" : "nodes", list);
        cpus = cpuset_format(orphans);
        return g_strdup_printf("%s%s%s%sCPUs %s (local to no NUMA node)",
                               cpuset_count(os) == 1 ? "node " : "", cpuset_count(os) > 1 ? "nodes " : "",
                               list, *list ? " with " : "", cpus);
}

const char *finish_memory_source_text(const PlacementRequest *req)
{
        switch (req->memory_source) {
        case MEMORY_SOURCE_USER:
                return "its <numatune><memory> binds";
        case MEMORY_SOURCE_MEMNODE:
                return "its <numatune><memnode> elements bind";
        default:
                return "a live binding libvirt cannot change on a running domain binds";
        }
}

/* How iothread_note() ends what it says of the I/O threads the user pins, for one thread and for more:
 * by a pin made outside placementd, by the definition's <iothreadpin>. */
static const char *const IOTHREADS_SAID[][2] = {
    {"it was pinned outside placementd (virsh iothreadpin)",
     "they were pinned outside placementd (virsh iothreadpin)"},
    {"<cputune><iothreadpin> puts it", "<cputune><iothreadpin> puts them"},
};

/* "; I/O threads 1-2 stay where WHERE" (one: "I/O thread 1 stays where"); nothing for none. */
static void iothreads_said(GString *s, const CpuSet *ids, const char *where_one, const char *where_more)
{
        g_autofree char *list = cpuset_format(ids);
        bool one = cpuset_count(ids) == 1;

        if (!cpuset_is_empty(ids))
                g_string_append_printf(s, "; I/O thread%s %s stay%s where %s", one ? "" : "s", list,
                                       one ? "s" : "", one ? where_one : where_more);
}

/* The I/O threads the user pins, for the reason: by the definition's <iothreadpin>, or by a pin made
 * outside placementd (virsh iothreadpin --live); of those the guest runs (req->iothreads: one deleted live
 * stays in the definition, but nothing of it stays anywhere). */
static void iothread_note(const PlacementRequest *req, GString *s)
{
        g_autoptr(CpuSet) kept = NULL;
        g_autoptr(CpuSet) gone = NULL;
        g_autoptr(CpuSet) own = NULL;
        g_autoptr(CpuSet) live = cpuset_new();

        if (!req->kept_iothreads || !req->iothreads ||
            !cpuset_intersects(req->kept_iothreads, req->iothreads))
                return;
        kept = cpuset_copy(req->kept_iothreads);
        gone = cpuset_copy(req->kept_iothreads);
        cpuset_subtract(gone, req->iothreads);
        cpuset_subtract(kept, gone);
        own = cpuset_copy(kept);
        if (req->kept_iothreads_live) {
                cpuset_subtract(own, req->kept_iothreads_live);
                cpuset_union(live, kept);
                cpuset_subtract(live, own);
        }
        iothreads_said(s, own, IOTHREADS_SAID[1][0], IOTHREADS_SAID[1][1]);
        iothreads_said(s, live, IOTHREADS_SAID[0][0], IOTHREADS_SAID[0][1]);
}

char *policy_reason_without_iothreads(const char *reason, const CpuSet *gone)
{
        g_auto(GStrv) parts = g_strsplit(reason ? reason : "", "; ", -1);
        g_autoptr(GString) s = g_string_new(NULL);
        bool changed = false;

        for (unsigned i = 0; parts[i]; i++) {
                const char *list = NULL, *tail = NULL;
                g_autofree char *ids_text = NULL, *shown = NULL;
                g_autoptr(CpuSet) ids = NULL;
                int kind = -1;

                if (g_str_has_prefix(parts[i], "I/O threads "))
                        list = parts[i] + strlen("I/O threads ");
                else if (g_str_has_prefix(parts[i], "I/O thread "))
                        list = parts[i] + strlen("I/O thread ");
                if (list && (tail = strstr(list, " stay")))
                        for (unsigned k = 0; k < G_N_ELEMENTS(IOTHREADS_SAID) && kind < 0; k++)
                                if (g_str_has_suffix(parts[i], IOTHREADS_SAID[k][0]) ||
                                    g_str_has_suffix(parts[i], IOTHREADS_SAID[k][1]))
                                        kind = (int)k;
                if (kind >= 0)
                        ids_text = g_strndup(list, (gsize)(tail - list));
                if (kind < 0 || cpuset_parse(ids_text, &ids, NULL) < 0 || !cpuset_intersects(ids, gone)) {
                        if (*parts[i])
                                g_string_append_printf(s, "%s%s", s->len ? "; " : "", parts[i]);
                        continue;
                }
                changed = true;
                cpuset_subtract(ids, gone);
                if (cpuset_is_empty(ids))
                        continue;
                shown = cpuset_format(ids);
                g_string_append_printf(s, "%sI/O thread%s %s stay%s where %s", s->len ? "; " : "",
                                       cpuset_count(ids) == 1 ? "" : "s", shown,
                                       cpuset_count(ids) == 1 ? "s" : "",
                                       IOTHREADS_SAID[kind][cpuset_count(ids) == 1 ? 0 : 1]);
        }
        return changed ? g_strdup(s->str) : NULL;
}

/* The nodes (OS indexes) of the guest cells' <memnode> elements that do not fall back to other nodes:
 * strict (libvirt's default) or restrictive; with hugepages, every one of a hugepage-backed cell (QEMU
 * preallocates them there). */
CpuSet *finish_cells_binding_nodes(const PlacementRequest *req)
{
        CpuSet *nodes = cpuset_new();

        for (unsigned c = 0; c < req->ncells; c++)
                if (req->cells[c].memory_nodes &&
                    ((req->hugepage_size && (!req->cells[c].ordinary || req->second_page_size)) ||
                     req->cells[c].memory_mode == MEMORY_MODE_STRICT ||
                     req->cells[c].memory_mode == MEMORY_MODE_RESTRICTIVE))
                        cpuset_union(nodes, req->cells[c].memory_nodes);
        return nodes;
}

/* "; node 1 has 14.9 GiB free for the 20.0 GiB bound there: ..." for memory (what, e.g. " of ordinary
 * memory") a binding that does not fall back puts on a node with less free. */
static void memory_short_said(GString *s, unsigned os_index, uint64_t free_bytes, uint64_t bytes,
                              const char *what)
{
        char a[32], c[32];

        g_string_append_printf(s,
                               "; node %u has %s free for the %s%s bound there: the guest cannot get all "
                               "its memory (the kernel reclaims, swaps or kills)",
                               os_index, size_format_short_of(free_bytes, bytes, a, sizeof(a)),
                               size_format(bytes, c, sizeof(c)), what);
}

/* The same for bytes of hugepages of size bound to a node with free_bytes of them free (or no such pool);
 * whole: what they take there in whole pages, said when only those are short (two 33 MiB guest cells of
 * 2 MiB pages take 34 pages, though 33 hold their bytes). */
static void pages_short_said(const Topology *t, GString *s, unsigned n, uint64_t free_bytes, uint64_t bytes,
                             uint64_t whole, uint64_t size)
{
        char a[32], b[32], c[32], d[32];

        if (!topology_node_hugepage_bytes(t, n, size))
                g_string_append_printf(s,
                                       "; node %u has no pool of %s hugepages for the %s bound there: the "
                                       "guest's memory cannot all be backed (the ledger holds none of it "
                                       "there)",
                                       t->nodes[n].os_index, size_format(size, b, sizeof(b)),
                                       size_format(bytes, c, sizeof(c)));
        else if (bytes <= free_bytes)
                g_string_append_printf(s,
                                       "; node %u has %s free in hugepages of %s for the %s bound there, %s "
                                       "in the whole pages QEMU backs each guest cell in: the guest's "
                                       "memory cannot all be backed",
                                       t->nodes[n].os_index, size_format(free_bytes, a, sizeof(a)),
                                       size_format(size, b, sizeof(b)), size_format(bytes, c, sizeof(c)),
                                       size_format(whole, d, sizeof(d)));
        else
                g_string_append_printf(s,
                                       "; node %u has %s free in hugepages of %s for the %s bound there: "
                                       "the guest's memory cannot all be backed",
                                       t->nodes[n].os_index,
                                       size_format_short_of(free_bytes, bytes, a, sizeof(a)),
                                       size_format(size, b, sizeof(b)), size_format(bytes, c, sizeof(c)));
}

/* Bound memory beyond what its nodes have free: said, as QEMU will not find the hugepages, and the
 * kernel cannot give more than a node has under a binding that does not fall back: a <numatune><memory>
 * in any mode but preferred, and a <memnode> strict or restrictive (finish_cells_binding_nodes()). only: the
 * nodes (OS indexes) to look at, NULL for all. */
void finish_memory_short_note(const HostView *v, const PlacementRequest *req, const Plan *plan,
                              const CpuSet *only, GString *s)
{
        g_autoptr(CpuSet) cells_nodes = NULL;

        if (!req->hugepage_size && req->memory_mode == MEMORY_MODE_PREFERRED &&
            (req->memory_source == MEMORY_SOURCE_USER || req->memory_source == MEMORY_SOURCE_BOUND))
                return;
        /* bound per cell: the nodes of the cells that do not fall back */
        if (req->memory_source == MEMORY_SOURCE_MEMNODE && !only)
                only = cells_nodes = finish_cells_binding_nodes(req);
        for (unsigned n = 0; n < plan->nnode_memory; n++) {
                if (only && !cpuset_has(only, v->t->nodes[n].os_index))
                        continue;
                uint64_t held = ledger_node_memory(v->l, n), size = v->t->nodes[n].memory;
                uint64_t free_ordinary = size > held ? size - held : 0;
                uint64_t free_bytes = req->hugepage_size
                                          ? ledger_node_free_hugepages(v->l, n, req->hugepage_size)
                                          : free_ordinary;
                /* a plan with cells of ordinary memory beside its hugepages: each kind in its own room */
                uint64_t bytes = plan->node_ordinary ? plan_node_pages(plan, n) : plan->node_memory[n];
                uint64_t ordinary = plan->node_ordinary ? plan_node_ordinary(plan, n) : 0;
                /* or, for cells of a second page size, those pages */
                if (plan->node_ordinary && req->second_page_size)
                        free_ordinary = ledger_node_free_hugepages(v->l, n, req->second_page_size);
                /* what the pools give is whole pages, each guest cell's apart (plan_node_pool_bytes()) */
                uint64_t whole = req->hugepage_size ? plan_node_pool_bytes(plan, n, false) : bytes;
                uint64_t whole_ordinary =
                    req->second_page_size ? plan_node_pool_bytes(plan, n, true) : ordinary;
                if (whole_ordinary > free_ordinary && req->second_page_size)
                        pages_short_said(v->t, s, n, free_ordinary, ordinary, whole_ordinary,
                                         req->second_page_size);
                else if (ordinary > free_ordinary)
                        memory_short_said(s, v->t->nodes[n].os_index, free_ordinary, ordinary,
                                          " of ordinary memory");
                if (MAX(bytes, whole) <= free_bytes)
                        continue;
                if (req->hugepage_size)
                        pages_short_said(v->t, s, n, free_bytes, bytes, whole, req->hugepage_size);
                else
                        memory_short_said(s, v->t->nodes[n].os_index, free_bytes, bytes, "");
        }
}

/* Where the plan stands to the CPUs its definition pins QEMU's own threads to (<emulatorpin>, its own
 * <iothreadpin>s), when no PCI device decided: on their nodes, or away and why. */
static void thread_nodes_note(const HostView *v, const PlacementRequest *req, const Plan *plan, GString *s)
{
        g_autoptr(CpuSet) nodes = policy_user_thread_nodes(v);
        g_autoptr(CpuSet) all = cpuset_new(), near = cpuset_new();
        g_autofree char *all_list = NULL, *near_list = NULL;
        bool constrained = true, spare = policy_housekeeping_needs_core(v);

        if (!nodes || plan->result == PLAN_UNPLACEABLE)
                return;
        CPUSET_FOREACH (n, nodes) {
                cpuset_add(all, v->t->nodes[n].os_index);
                if (cpuset_has(plan->nodes, (unsigned)n))
                        cpuset_add(near, v->t->nodes[n].os_index);
                constrained = constrained && !v->node_allowed[n];
        }
        all_list = cpuset_format(all);
        near_list = cpuset_format(near);
        if (cpuset_equal(all, near))
                g_string_append_printf(s,
                                       "; near the CPUs its definition pins QEMU's threads to (node%s %s)",
                                       cpuset_count(all) == 1 ? "" : "s", all_list);
        else if (!cpuset_is_empty(near))
                g_string_append_printf(
                    s,
                    "; near the CPUs its definition pins QEMU's threads to (on nodes %s; the "
                    "set has %s)",
                    all_list, near_list);
        else
                g_string_append_printf(
                    s, "; away from the CPUs its definition pins QEMU's threads to (node%s %s)%s",
                    cpuset_count(all) == 1 ? "" : "s", all_list,
                    plan->result != PLAN_PLACED ? ""
                    : constrained               ? ": its constraints rule out their nodes"
                    : req->vcpus_off_user_threads
                        ? (spare ? ": no set as near with them has a core per vCPU off those CPUs' cores "
                                   "and one to spare for its emulator"
                                 : ": no set as near with them has a core per vCPU off those CPUs' cores")
                    : spare ? ": no equally near set with them has a core per vCPU and one to spare for its "
                              "emulator"
                            : ": no equally near set with them has room");
}

/* What the reason adds when some of the devices sit on nodes without a usable CPU (req->device_sits_on):
 * ", the nearest with usable CPUs to node 5 they sit on" when every node of device_nodes is one of the
 * nearest, else ", node 6 the nearest with usable CPUs to node 5 one sits on"; "" when none does. */
static char *device_nearest_text(const HostView *v, const PlacementRequest *req)
{
        g_autoptr(CpuSet) nearest = cpuset_new(), all = cpuset_new();
        g_autofree char *sits_on = NULL, *nearest_list = NULL;
        unsigned n_on;

        if (!req->device_sits_on || !req->device_nearest)
                return g_strdup("");
        CPUSET_FOREACH (n, req->device_nearest)
                cpuset_add(nearest, v->t->nodes[n].os_index);
        CPUSET_FOREACH (n, req->device_nodes)
                cpuset_add(all, v->t->nodes[n].os_index);
        sits_on = cpuset_format(req->device_sits_on);
        n_on = cpuset_count(req->device_sits_on);
        if (cpuset_equal(nearest, all))
                return g_strdup_printf(", the nearest with usable CPUs to node%s %s they sit on",
                                       n_on == 1 ? "" : "s", sits_on);
        nearest_list = cpuset_format(nearest);
        return g_strdup_printf(", node%s %s the nearest with usable CPUs to node%s %s one sits on",
                               cpuset_count(nearest) == 1 ? "" : "s", nearest_list, n_on == 1 ? "" : "s",
                               sits_on);
}

/* Where the plan stands to the PCI devices the domain passes through: their nodes (one device may be
 * local to several; a device on nodes without a usable CPU is local to the nearest that have, and the
 * reason names the nodes it sits on), those of them in the plan's set, and why not when none is. */
static void device_note(const HostView *v, const PlacementRequest *req, const Plan *plan, GString *s)
{
        g_autoptr(CpuSet) all = cpuset_new(), near = cpuset_new();
        g_autofree char *all_list = NULL, *near_list = NULL, *nearest = NULL;
        bool constrained;

        if (!req->device_nodes || plan->result == PLAN_UNPLACEABLE)
                return;
        CPUSET_FOREACH (n, req->device_nodes) {
                cpuset_add(all, v->t->nodes[n].os_index);
                if (cpuset_has(plan->nodes, (unsigned)n))
                        cpuset_add(near, v->t->nodes[n].os_index);
        }
        all_list = cpuset_format(all);
        near_list = cpuset_format(near);
        nearest = device_nearest_text(v, req);
        /* the constraints kept it away when they leave it none of the devices' nodes */
        constrained = true;
        CPUSET_FOREACH (n, req->device_nodes)
                constrained = constrained && !v->node_allowed[n];
        if (cpuset_equal(all, near))
                g_string_append_printf(s, "; near its PCI devices (node%s %s%s)",
                                       cpuset_count(all) == 1 ? "" : "s", all_list, nearest);
        else if (!cpuset_is_empty(near))
                g_string_append_printf(s, "; near its PCI devices (local to nodes %s%s; the set has %s)",
                                       all_list, nearest, near_list);
        else
                g_string_append_printf(
                    s, "; away from its PCI devices (node%s %s%s)%s", cpuset_count(all) == 1 ? "" : "s",
                    all_list, nearest,
                    plan->result != PLAN_PLACED ? ""
                    : constrained               ? ": its constraints rule out their nodes"
                    : policy_housekeeping_needs_core(v)
                        ? ": no equally near set with them has a core per vCPU and one to "
                          "spare for its emulator"
                        : ": no equally near set with them has room");
}

/*
 * For memory bound to nodes the vCPUs cannot run on (HostView.memory_remote): where the cores were taken
 * and why, "cores taken on node 1, the nearest to them with free cores for every vCPU (nearer ones have
 * too few)"; with_cpus names what the nearest nodes have ("with CPUs", "with one").
 */
static char *remote_cores_text(const HostView *v, const Plan *plan, const char *with_cpus)
{
        const PolicyOps *ops = policy_ops(plan->policy);
        g_autofree char *where = finish_format_nodes(v->t, plan->nodes);
        uint32_t nearest = TOPOLOGY_UNREACHABLE, farthest = 0;

        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (v->node_allowed[n] && v->node_usable_cores[n] > 0)
                        nearest = MIN(nearest, v->node_to_memory[n]);
        CPUSET_FOREACH (n, plan->nodes)
                if (v->node_usable_cores[n] > 0)
                        farthest = MAX(farthest, v->node_to_memory[n]);
        if (farthest <= nearest)
                return g_strdup_printf("cores taken on %s, the nearest to them %s", where, with_cpus);
        if (plan->result == PLAN_PLACED)
                return g_strdup_printf(
                    "cores taken on %s, the nearest to them with %s for every vCPU (nearer "
                    "ones have too few)",
                    where, ops->unit);
        return g_strdup_printf("cores taken on %s, the nearest to them of the sets with the most %s", where,
                               ops->unit);
}

/* How much of a plural unit ("free cores") to print for count of it: "1 free core". */
static int unit_len(const char *unit, unsigned count)
{
        size_t n = strlen(unit);

        return (int)(count == 1 && n > 1 && unit[n - 1] == 's' ? n - 1 : n);
}

/* The room (PolicyOps.capacity) the nodes the request binds its memory to offer its vCPUs. */
static unsigned bound_room(const HostView *v, const PlacementRequest *req)
{
        unsigned room = 0;

        for (unsigned n = 0; n < v->t->nnodes; n++)
                if (cpuset_has(req->memory_nodes, v->t->nodes[n].os_index))
                        room += v->node_capacity[n];
        return room;
}

/* Whether nodes (OS indexes) names a node this host does not have; those into missing when not NULL. */
bool finish_memory_nodes_missing(const Topology *t, const CpuSet *nodes, CpuSet *missing)
{
        bool any = false;

        CPUSET_FOREACH (n, nodes) {
                int idx = topology_node_by_os(t, (unsigned)n);
                if (idx >= 0 && !t->nodes[idx].no_local_memory)
                        continue;
                any = true;
                if (missing)
                        cpuset_add(missing, (unsigned)n);
        }
        return any;
}

/* Whether nodes (OS indexes) names no node of this host at all. */
bool finish_memory_nodes_all_missing(const Topology *t, const CpuSet *nodes)
{
        CPUSET_FOREACH (n, nodes) {
                int idx = topology_node_by_os(t, (unsigned)n);
                if (idx >= 0 && !t->nodes[idx].no_local_memory)
                        return false;
        }
        return true;
}

/* Why no CPU of a <vcpu cpuset> can take a vCPU on this host whatever else the request says ("CPUs 100-103
 * are not online and allowed on this host (offline, disallowed or absent), CPU 0 is in ReservedCPUs="),
 * NULL when one can. */
static char *cpuset_unusable_text(const HostView *v, const CpuSet *cpus)
{
        const Topology *t = v->t;
        g_autoptr(CpuSet) absent = cpuset_new(), reserved = cpuset_new(), kinds = cpuset_new();
        GString *s;

        CPUSET_FOREACH (cpu, cpus) {
                int pu = topology_pu_by_os(t, (unsigned)cpu);
                if (pu < 0)
                        cpuset_add(absent, (unsigned)cpu);
                else if (v->params->reserved_cpus && cpuset_has(v->params->reserved_cpus, (unsigned)cpu))
                        cpuset_add(reserved, (unsigned)cpu);
                else if (v->params->core_kinds == CORE_KINDS_PERFORMANCE_ONLY &&
                         t->cores[t->pus[pu].core].kind_rank > 0)
                        cpuset_add(kinds, (unsigned)cpu);
                else
                        return NULL;
        }
        s = g_string_new(NULL);
        if (!cpuset_is_empty(absent)) {
                g_autofree char *list = cpuset_format(absent);
                g_string_append_printf(
                    s,
                    "CPU%s %s %s not online and allowed on this host (offline, disallowed "
                    "or absent)",
                    cpuset_count(absent) == 1 ? "" : "s", list, cpuset_count(absent) == 1 ? "is" : "are");
        }
        if (!cpuset_is_empty(reserved)) {
                g_autofree char *list = cpuset_format(reserved);
                g_string_append_printf(s, "%sCPU%s %s %s in ReservedCPUs=", s->len ? ", " : "",
                                       cpuset_count(reserved) == 1 ? "" : "s", list,
                                       cpuset_count(reserved) == 1 ? "is" : "are");
        }
        if (!cpuset_is_empty(kinds)) {
                g_autofree char *list = cpuset_format(kinds);
                g_string_append_printf(s,
                                       "%sCPU%s %s %s of a kind CoreKinds=performance-only keeps from vCPUs",
                                       s->len ? ", " : "", cpuset_count(kinds) == 1 ? "" : "s", list,
                                       cpuset_count(kinds) == 1 ? "is" : "are");
        }
        return g_string_free(s, FALSE);
}

/* What the constraints did, appended to the reason ("" when there are none). */
char *finish_constraint_note(const HostView *v, const PlacementRequest *req, const Plan *plan)
{
        const Topology *t = v->t;
        GString *s = g_string_new(NULL);

        if (req->allowed_cpus) {
                g_autofree char *list = cpuset_format(req->allowed_cpus);
                g_autofree char *why = cpuset_unusable_text(v, req->allowed_cpus);
                if (why)
                        g_string_append_printf(
                            s, "; none of the CPUs of its <vcpu cpuset='%s'> is usable: %s", list, why);
                else
                        g_string_append_printf(s, "; kept inside <vcpu cpuset='%s'>", list);
        }
        if (req->caches_outside_cpuset)
                g_string_append(s, "; the caches its <cachetune>/<memorytune> reserve lie outside its <vcpu "
                                   "cpuset>, which libvirt applies: kept inside the cpuset");
        if (req->cache_cpus) {
                g_autofree char *list = cpuset_format(req->cache_cpus);
                g_string_append_printf(s,
                                       "; kept on CPUs %s, under the caches its <cachetune>/<memorytune> "
                                       "reserve",
                                       list);
        }
        if (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes) {
                g_autofree char *list = cpuset_format(req->memory_nodes);
                g_autoptr(CpuSet) charged = cpuset_new();
                g_autofree char *where = NULL, *remote = NULL, *few = NULL;
                for (unsigned n = 0; n < plan->nnode_memory; n++)
                        if (plan->node_memory[n])
                                cpuset_add(charged, t->nodes[n].os_index);
                /* memory-only nodes, or nodes its cpuset leaves out: the vCPUs run on the nearest others */
                bool cores_elsewhere = false, memory_has_cpus = false, memory_cpus_allowed = false;
                CPUSET_FOREACH (n, plan->nodes)
                        cores_elsewhere =
                            cores_elsewhere || !cpuset_has(req->memory_nodes, t->nodes[n].os_index);
                for (unsigned n = 0; n < t->nnodes; n++) {
                        const TopoNode *node = &t->nodes[n];
                        if (!cpuset_has(req->memory_nodes, node->os_index))
                                continue;
                        memory_has_cpus = memory_has_cpus || node->ncores > 0;
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                                for (unsigned p = t->cores[c].pu_first;
                                     p < t->cores[c].pu_first + t->cores[c].npus; p++)
                                        memory_cpus_allowed =
                                            memory_cpus_allowed ||
                                            placement_request_allows_cpu(req, t->pus[p].os_index);
                }
                where = cpuset_format(charged);
                /* cells bound one by one, some to nodes with cores and some to nodes without a core
                 * they may use: those go to the nearest nodes with free cores (cells_set_homes()) */
                bool cells_elsewhere =
                    cores_elsewhere && req->memory_source == MEMORY_SOURCE_MEMNODE && !v->memory_remote;
                g_autofree char *cells_text = NULL;
                if (cells_elsewhere) {
                        /* the bound nodes where cores were taken: not every one of them need have a core
                         * the cells may use (ReservedCPUs=, memory-only nodes) */
                        g_autoptr(CpuSet) taken = cpuset_new();
                        g_autofree char *taken_list = NULL, *head = NULL;
                        CPUSET_FOREACH (n, plan->nodes)
                                if (cpuset_has(req->memory_nodes, t->nodes[n].os_index))
                                        cpuset_add(taken, t->nodes[n].os_index);
                        taken_list = cpuset_format(taken);
                        if (cpuset_is_empty(taken))
                                head = g_strdup("cores taken on");
                        else if (cpuset_equal(taken, req->memory_nodes))
                                head = g_strdup("cores taken there, and on");
                        else
                                head = g_strdup_printf("cores taken on node%s %s of them, and on",
                                                       cpuset_count(taken) == 1 ? "" : "s", taken_list);
                        cells_text = g_strconcat(head,
                                                 " the nearest nodes with free cores for a cell whose nodes "
                                                 "have no core it may use (its memory remote)",
                                                 NULL);
                }
                /* where the cores are instead, and why (the nearest nodes with a CPU it may use first) */
                if (cores_elsewhere && !cells_elsewhere)
                        remote = v->memory_remote
                                     ? remote_cores_text(v, plan, memory_has_cpus ? "with one" : "with CPUs")
                                     : g_strdup(memory_has_cpus ? "cores taken on the nearest nodes with one"
                                                                : "cores taken on the nearest with CPUs");
                g_string_append_printf(
                    s, "; %s its memory to node%s %s (%s): %s%s%s%s%sthe binding left as it is",
                    finish_memory_source_text(req), cpuset_count(req->memory_nodes) == 1 ? "" : "s", list,
                    req->memory_source == MEMORY_SOURCE_MEMNODE ? "per cell"
                                                                : memory_mode_to_string(req->memory_mode),
                    /* unplaceable: no core was taken anywhere */
                    !cores_elsewhere  ? (plan->result == PLAN_UNPLACEABLE ? "" : "cores taken there")
                    : cells_elsewhere ? cells_text
                    : req->vcpus_beyond_binding
                        ? (few = g_strdup_printf(
                               "%s %u %.*s for %u vCPU%s (a binding confines memory, "
                               "not vCPUs)",
                               cpuset_count(req->memory_nodes) == 1 ? "it has" : "they have",
                               bound_room(v, req),
                               unit_len(policy_ops(plan->policy)->unit, bound_room(v, req)),
                               policy_ops(plan->policy)->unit, plan->nvcpus, plan->nvcpus == 1 ? "" : "s"))
                    : memory_cpus_allowed
                        ? "the configuration keeps their CPUs from vCPUs (ReservedCPUs=, CoreKinds=)"
                    : memory_has_cpus ? (req->allowed_cpus ? "no CPU of its <vcpu cpuset> lies there"
                                                           : "no CPU under the caches its "
                                                             "<cachetune>/<memorytune> reserve lies there")
                                      : "memory-only nodes",
                    remote ? ", " : "", remote ? remote : "",
                    cores_elsewhere && memory_has_cpus && !cells_elsewhere
                        ? (req->vcpus_beyond_binding ? " (its memory is remote to the vCPUs off them)"
                                                     : " (its memory is remote)")
                        : "",
                    !cores_elsewhere && plan->result == PLAN_UNPLACEABLE ? "" : ", ");
                if (*where)
                        g_string_append_printf(
                            s, ", memory counted on node%s %s%s", cpuset_count(charged) == 1 ? "" : "s",
                            where,
                            req->memory_source != MEMORY_SOURCE_MEMNODE &&
                                    req->memory_mode == MEMORY_MODE_PREFERRED
                                ? " (preferred: its first node, the rest on the nearest with room)"
                                : "");
                finish_memory_short_note(v, req, plan, NULL, s);
                /* some nodes of the binding are not this host's (none at all: finish_unplaceable()) */
                if (finish_memory_nodes_missing(t, req->memory_nodes, NULL)) {
                        g_autoptr(CpuSet) missing = cpuset_new();
                        g_autofree char *gone = NULL;
                        finish_memory_nodes_missing(t, req->memory_nodes, missing);
                        gone = cpuset_format(missing);
                        g_string_append_printf(s,
                                               "; node%s %s of that binding %s not on this host: libvirt "
                                               "refuses to start such a guest",
                                               cpuset_count(missing) == 1 ? "" : "s", gone,
                                               cpuset_count(missing) == 1 ? "is" : "are");
                }
        }
        if (req->keep_emulator)
                g_string_append(s,
                                req->emulator_pinned_live
                                    ? "; the emulator stays where it was pinned outside placementd (virsh "
                                      "emulatorpin)"
                                    : "; the emulator stays where <cputune><emulatorpin> puts it");
        iothread_note(req, s);
        device_note(v, req, plan, s);
        thread_nodes_note(v, req, plan, s);
        return g_string_free(s, FALSE);
}
