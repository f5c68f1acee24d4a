/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Adopting the decision a running domain records (after a restart, a migration, libvirt coming back):
 * only after checking that its pins run as recorded, on CPUs the configuration still allows, on cores no
 * other domain placementd placed holds.
 */
#include <errno.h>
#include <string.h>

#include "domain-request.h"
#include "log.h"
#include "manager-internal.h"
#include "metadata.h"
#include "placer-internal.h"
#include "policy.h"
#include "virt-domain.h"

/* Whether core c holds nothing and may hold vCPUs. */
static bool core_free(Manager *m, unsigned c)
{
        const TopoCore *core = &m->topology->cores[c];
        const CpuSet *reserved = m->config->placement.reserved_cpus;

        if (ledger_core_load(m->ledger, c) > 0 || core->host_thread)
                return false;
        for (unsigned i = core->pu_first; i < core->pu_first + core->npus; i++)
                if (reserved && cpuset_has(reserved, m->topology->pus[i].os_index))
                        return false;
        return true;
}

/* True when a domain placementd placed (not one pinned by hand: sharing with that is the user's doing,
 * and a restart must not undo what the running daemon left alone) counts a vCPU on the core of PU pu (on
 * pu itself, by_pu); not one adopted from its record in the same pass (m->adopting: records are evidence,
 * and the first of two claims in ID order has no more of it than the second). whole: only a domain placed
 * under explicit, which gave each vCPU a core of its own. */
static bool placed_by_other(Manager *m, const char *uuid, unsigned pu, bool by_pu, bool whole)
{
        unsigned c = m->topology->pus[pu].core;

        GHashTableIter it;
        gpointer key, value;

        g_hash_table_iter_init(&it, m->decisions);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const Decision *d = value;
                const Plan *p = d->plan;
                /* an unplaceable, failed or advised domain counted as it runs runs on placementd's pins */
                if (!p || d->pinned_by_hand || d->result == DECISION_SKIPPED || strcmp(key, uuid) == 0 ||
                    (m->adopting && g_hash_table_contains(m->adopting, key)) ||
                    (whole && (p->result != PLAN_PLACED || p->policy != POLICY_EXPLICIT)))
                        continue;
                for (unsigned i = 0; i < p->nvcpus; i++)
                        if (p->vcpu_pu[i] >= 0 && (by_pu ? (unsigned)p->vcpu_pu[i] == pu
                                                         : m->topology->pus[p->vcpu_pu[i]].core == c))
                                return true;
        }
        return false;
}

/* The first PU of a that counts a vCPU on a core (by_pu: on the PU) where b counts one too; -1 when none. */
static int shared_pu(const Manager *m, const Plan *a, const Plan *b, bool by_pu)
{
        for (unsigned i = 0; i < a->nvcpus; i++)
                for (unsigned j = 0; a->vcpu_pu[i] >= 0 && j < b->nvcpus; j++)
                        if (b->vcpu_pu[j] >= 0 && (by_pu ? a->vcpu_pu[i] == b->vcpu_pu[j]
                                                         : m->topology->pus[a->vcpu_pu[i]].core ==
                                                               m->topology->pus[b->vcpu_pu[j]].core))
                                return a->vcpu_pu[i];
        return -1;
}

static gint by_domain_id(gconstpointer a, gconstpointer b)
{
        const Decision *x = *(const Decision *const *)a, *y = *(const Decision *const *)b;
        return x->domain_id < y->domain_id ? -1 : x->domain_id > y->domain_id;
}

void placer_say_adopted_clashes(Manager *m)
{
        g_autoptr(GPtrArray) adopted = g_ptr_array_new();
        GHashTableIter it;
        gpointer key;
        bool any_free = false, clash = false;

        if (!m->adopting)
                return;
        for (unsigned c = 0; c < m->topology->ncores && !any_free; c++)
                any_free = core_free(m, c);
        if (!any_free)
                return;
        g_hash_table_iter_init(&it, m->adopting);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
                Decision *d = g_hash_table_lookup(m->decisions, key);
                if (d && d->plan && !d->pinned_by_hand && d->result != DECISION_SKIPPED)
                        g_ptr_array_add(adopted, d);
        }
        g_ptr_array_sort(adopted, by_domain_id);
        for (unsigned i = 0; i < adopted->len; i++)
                for (unsigned j = i + 1; j < adopted->len; j++) {
                        const Decision *a = adopted->pdata[i], *b = adopted->pdata[j];
                        /* compat fills siblings by design: only one PU claimed twice clashes there */
                        bool by_pu = a->plan->policy == POLICY_COMPAT && b->plan->policy == POLICY_COMPAT;
                        int pu = shared_pu(m, a->plan, b->plan, by_pu);
                        const TopoCore *core;
                        g_autoptr(CpuSet) cpus = cpuset_new();
                        g_autofree char *list = NULL, *where = NULL;
                        if (pu < 0)
                                continue;
                        /* the CPUs an operator knows the core by (the map's); under compat the one both
                         * take */
                        core = &m->topology->cores[m->topology->pus[pu].core];
                        for (unsigned k = core->pu_first; k < core->pu_first + core->npus; k++)
                                cpuset_add(cpus, m->topology->pus[k].os_index);
                        list = cpuset_format(cpus);
                        where = by_pu ? g_strdup_printf("CPU %u in both", m->topology->pus[pu].os_index)
                                      : g_strdup_printf("CPUs %s", list);
                        log_warning(
                            "%s and %s: their recorded decisions both claim core %u (%s) while a core "
                            "is free, so both domains run vCPUs there; both are adopted as they run "
                            "(placementctl replace %s moves the later one; placementctl rebalance, or "
                            "heal under Heal=yes, ends the sharing)",
                            a->name, b->name, m->topology->pus[pu].core, where, b->name);
                        clash = true;
                }
        /* as the warning says: no departure comes to start a pass */
        if (clash)
                manager_heal_now(m, "recorded decisions share a core while one is free");
}

/* The first CPU a recorded vCPU pin takes that the configuration keeps from vCPUs (ReservedCPUs=, the
 * other kinds under CoreKinds=performance-only), with the key that keeps it; -1 when none. */
static int pin_off_limits(Manager *m, const Plan *p, const char **ret_key)
{
        const CpuSet *reserved = m->config->placement.reserved_cpus;

        for (unsigned i = 0; i < p->nvcpus; i++)
                CPUSET_FOREACH (cpu, p->vcpu_pins[i]) {
                        int pu = topology_pu_by_os(m->topology, (unsigned)cpu);
                        if (pu < 0 || !policy_keeps_pu(m->topology, &m->config->placement, (unsigned)pu))
                                continue;
                        *ret_key = reserved && cpuset_has(reserved, (unsigned)cpu)
                                       ? "ReservedCPUs="
                                       : "CoreKinds=performance-only";
                        return cpu;
                }
        return -1;
}

/*
 * What the ledger, libvirt and the configuration say about a recorded plan: the live pins must be the
 * recorded ones, on CPUs the configuration lets vCPUs use now (it may have changed while placementd was
 * down, as a reload changes it, and a domain's owner may write a record), and placementd's own cores
 * must not be held by another domain (an overcommitted one may share only while no core is free). A
 * vCPU a skipped record leaves out (it floats) gets its live pins. Returns 0, or -EINVAL with *ret_error.
 */
static int check_recorded(Manager *m, virDomainPtr dom, const char *uuid, Plan *p, char **ret_error)
{
        CpuSet **pins = NULL;
        bool held = false, beside_whole = false, any_free = false;
        const char *key = NULL;
        int cpu;

        if (virt_domain_get_vcpu_pins(dom, p->nvcpus, p->vcpu_ids, &pins, ret_error) < 0)
                return -EINVAL;
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && !cpuset_equal(pins[i], p->vcpu_pins[i])) {
                        g_autofree char *want = cpuset_format(p->vcpu_pins[i]),
                                        *have = cpuset_format(pins[i]);
                        *ret_error = g_strdup_printf("vCPU %u runs on %s, the record says %s",
                                                     plan_vcpu_id(p, i), have, want);
                        virt_pins_free(pins, p->nvcpus);
                        return -EINVAL;
                }
        /* a skipped record leaves out a vCPU that floats: one that still floats over the host shows where
         * it runs, as when placementd adopted those pins live (counted on no CPU); one pinned since is
         * left to the drift check */
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->result == PLAN_ADOPTED && p->vcpu_pu[i] < 0 && cpuset_is_empty(p->vcpu_pins[i]) &&
                    placer_runs_anywhere(m, pins[i], NULL))
                        cpuset_union(p->vcpu_pins[i], pins[i]);
        virt_pins_free(pins, p->nvcpus);
        if (p->result == PLAN_ADOPTED)
                return 0;
        if ((cpu = pin_off_limits(m, p, &key)) >= 0) {
                *ret_error = g_strdup_printf("its vCPUs run on CPU %d, which %s keeps from vCPUs", cpu, key);
                m->adopt_kept_refused = true;
                return -EINVAL;
        }
        /* compat fills siblings by design: a record of its is held only where another vCPU runs on its PU,
         * unless a realtime vCPU is on the core, its own or another's (a FIFO vCPU starves its sibling);
         * beside a vCPU placed under explicit (given the core to itself) only while no core is free, as
         * compat takes that sibling last */
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned core = m->topology->pus[p->vcpu_pu[i]].core;
                bool by_pu = p->policy == POLICY_COMPAT && !plan_vcpu_realtime(p, i) &&
                             !ledger_core_realtime(m->ledger, core);
                held = held || placed_by_other(m, uuid, (unsigned)p->vcpu_pu[i], by_pu, false);
                beside_whole =
                    beside_whole || (by_pu && ledger_core_whole(m->ledger, core) &&
                                     placed_by_other(m, uuid, (unsigned)p->vcpu_pu[i], false, true));
        }
        for (unsigned c = 0; c < m->topology->ncores && !any_free; c++)
                any_free = core_free(m, c);
        if ((held && (p->result == PLAN_PLACED || any_free)) || (beside_whole && any_free)) {
                *ret_error = g_strdup_printf("its cores are held by another domain%s",
                                             any_free ? " while a core is free" : "");
                return -EINVAL;
        }
        return 0;
}

/* The host nodes a guest cell's <memnode> (a memory device's nodemask, else its cell's <memnode>) binds
 * it to, else NULL. */
static const CpuSet *cell_memnode(const DomainSpec *live, const DomainCell *c)
{
        return domain_cell_binding(live, c, NULL);
}

/* Whether the guest cell is counted in the plan's own page size: not of ordinary memory, nor of the second
 * size (Plan.second_page_size). */
static bool cell_in_plan_size(const Topology *t, const Plan *plan, const DomainCell *c)
{
        return c->hugepages &&
               !(plan->second_page_size &&
                 domain_cell_page_size(c, topology_default_hugepage_size(t)) == plan->second_page_size);
}

/* The vCPUs of a guest cell, or of a memory device's guest cell. */
static const CpuSet *device_vcpus(const DomainSpec *live, const DomainCell *c)
{
        for (unsigned i = 0; c->device && i < live->cells->len; i++) {
                const DomainCell *target = &g_array_index(live->cells, DomainCell, i);
                if (!target->device && target->id == c->device_target)
                        return target->vcpus;
        }
        return c->vcpus;
}

/* Whether any node of nodes (OS indexes) has a pool of size. */
static bool has_pool(const Topology *t, const CpuSet *nodes, uint64_t size)
{
        for (unsigned n = 0; n < t->nnodes; n++)
                if (cpuset_has(nodes, t->nodes[n].os_index) && topology_node_hugepage_bytes(t, n, size))
                        return true;
        return false;
}

/* Of a recorded plan whose guest cells are not all hugepage-backed (DomainSpec.hugepages_partial), the
 * memory of each ordinary cell counted as ordinary memory (or, of cells of two page sizes, each cell of the
 * smaller in its pools, Plan.second_page_size): on the nodes its <memnode> binds it to (where
 * placementd binds each cell), else on any recorded node, within what the record has there beside the
 * pages of the hugepage-backed cells a <memnode> binds there (those pages are on their nodes; only a record
 * that holds less takes them too); a cell no <memnode> binds first on the nodes its vCPUs run on, where
 * placementd counts a cell's memory first (a memory device nothing binds: its guest cell's vCPUs). Then the
 * nodes whose pools have the least room left for the plan's pages first: a record says bytes per node, and
 * the pages are where a pool had room for them. A cell of a second page size takes bytes only within that
 * size's free pages but at last (placementd counts it in those pools, or on the nodes of a <memnode> without
 * one). Kept when counting the domain as it runs found it already. */
static void adopt_ordinary_cells(const Topology *t, const Ledger *l, const DomainSpec *live, Plan *plan)
{
        unsigned nnodes = MIN(plan->nnode_memory, t->nnodes);
        g_autofree uint64_t *bound_pages = NULL, *pool_room = NULL;
        g_autofree unsigned *order = NULL;

        if ((!live->hugepages_partial && !plan->second_page_size) || plan->node_ordinary)
                return;
        plan->node_ordinary = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        bound_pages = g_new0(uint64_t, MAX(plan->nnode_memory, 1));
        for (unsigned i = 0; live->cells && i < live->cells->len; i++) {
                const DomainCell *c = &g_array_index(live->cells, DomainCell, i);
                const CpuSet *nodes = cell_in_plan_size(t, plan, c) ? cell_memnode(live, c) : NULL;
                uint64_t bytes = c->memory;
                for (unsigned n = 0; nodes && n < nnodes && bytes; n++) {
                        uint64_t take;
                        if (!cpuset_has(nodes, t->nodes[n].os_index))
                                continue;
                        take = MIN(bytes, plan->node_memory[n] - bound_pages[n]);
                        bound_pages[n] += take;
                        bytes -= take;
                }
        }
        /* the nodes by the room their pools have left for more of its pages, the least first */
        pool_room = g_new0(uint64_t, MAX(nnodes, 1));
        order = g_new0(unsigned, MAX(nnodes, 1));
        for (unsigned n = 0; n < nnodes; n++) {
                uint64_t free_pages = ledger_node_free_hugepages(l, n, plan->hugepage_size);
                unsigned k = n;
                pool_room[n] = free_pages - MIN(free_pages, bound_pages[n]);
                for (; k > 0 && pool_room[order[k - 1]] > pool_room[n]; k--)
                        order[k] = order[k - 1];
                order[k] = n;
        }
        for (unsigned i = 0; live->cells && i < live->cells->len; i++) {
                const DomainCell *c = &g_array_index(live->cells, DomainCell, i);
                const CpuSet *nodes = cell_memnode(live, c);
                g_autoptr(CpuSet) runs_on = cpuset_new(); /* node indexes of its vCPUs' recorded CPUs */
                /* a memory device's are its guest cell's, whose memory the guest uses it as */
                const CpuSet *vcpus = device_vcpus(live, c);
                uint64_t bytes = c->memory;
                if (cell_in_plan_size(t, plan, c))
                        continue;
                for (unsigned v = 0; !nodes && vcpus && v < plan->nvcpus; v++)
                        if (plan->vcpu_pu[v] >= 0 && cpuset_has(vcpus, plan_vcpu_id(plan, v)))
                                cpuset_add(runs_on, t->cores[t->pus[plan->vcpu_pu[v]].core].node);
                /* a cell of a second page size: its pages come from that size's pools, not from a node
                 * without one (unless its <memnode> names no node with one, where placementd counts them) */
                bool in_pools =
                    plan->second_page_size && !(nodes && !has_pool(t, nodes, plan->second_page_size));
                /* its <memnode> nodes, else the nodes its vCPUs run on (where placementd counts a cell's
                 * memory first), then any, beside the bound pages (and, in its pools, within their free
                 * pages); then any at all */
                for (unsigned pass = 0; pass < 3 && bytes; pass++)
                        for (unsigned j = 0; j < nnodes && bytes; j++) {
                                unsigned n = order[j];
                                uint64_t room = plan->node_memory[n] - plan->node_ordinary[n], take;
                                if (pass == 0 && (nodes ? !cpuset_has(nodes, t->nodes[n].os_index)
                                                        : !cpuset_has(runs_on, n)))
                                        continue;
                                if (pass < 2)
                                        room -= MIN(room, bound_pages[n]);
                                if (pass < 2 && in_pools) {
                                        uint64_t pool =
                                            ledger_node_free_hugepages(l, n, plan->second_page_size);
                                        room = MIN(room, pool - MIN(pool, plan->node_ordinary[n]));
                                }
                                take = MIN(bytes, room);
                                plan->node_ordinary[n] += take;
                                bytes -= take;
                        }
        }
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

/* The memory of guest cell id a node binding it must count, 0 when it has none: a hugepage-backed cell's
 * in whole pages (its pages are counted per node, each node's share rounded down to its pages, so a node
 * may count up to a page less than the cell states). */
static uint64_t cell_memory(const Topology *t, const DomainSpec *live, unsigned id)
{
        for (unsigned i = 0; live->cells && i < live->cells->len; i++) {
                const DomainCell *c = &g_array_index(live->cells, DomainCell, i);
                uint64_t page;

                if (c->id != id)
                        continue;
                page = c->hugepages ? domain_cell_page_size(c, topology_default_hugepage_size(t)) : 0;
                return page ? c->memory / page * page : c->memory;
        }
        return 0;
}

/* A recorded placement's bytes per node hold the guest cells that the live <memnode>s bind (strict,
 * restrictive, interleave: not preferred, which binds nothing), of ordinary memory or of hugepages: the
 * nodes of each <memnode> have at least the memory of the cells bound within them (a hugepage cell's in
 * whole pages, as they are counted). A record says only bytes per node, and its owner may have written it:
 * one that put a bound cell's memory (or its pages) on another node would have the ledger count that node
 * (or its pool) fuller and the cell's node freer than they are. Returns 0, or -EINVAL with *ret_error. */
static int check_cell_bindings(const Topology *t, const DomainSpec *live, const Plan *plan, char **ret_error)
{
        for (unsigned k = 0; live->memnodes && k < live->memnodes->len; k++) {
                const DomainMemnode *a = &g_array_index(live->memnodes, DomainMemnode, k);
                uint64_t need = 0, have = 0;

                if (a->mode == MEMORY_MODE_PREFERRED)
                        continue;
                for (unsigned j = 0; j < live->memnodes->len; j++) {
                        const DomainMemnode *b = &g_array_index(live->memnodes, DomainMemnode, j);
                        g_autoptr(CpuSet) outside = cpuset_copy(b->nodes);
                        cpuset_subtract(outside, a->nodes);
                        if (b->mode != MEMORY_MODE_PREFERRED && cpuset_is_empty(outside))
                                need = sat_add(need, cell_memory(t, live, b->cellid));
                }
                for (unsigned n = 0; n < MIN(plan->nnode_memory, t->nnodes); n++)
                        if (cpuset_has(a->nodes, t->nodes[n].os_index))
                                have += plan->node_memory[n];
                if (have < need) {
                        g_autofree char *nodes = cpuset_format(a->nodes);
                        *ret_error =
                            g_strdup_printf("its memory on node%s %s is less than that of the guest cells "
                                            "its <memnode>s bind there",
                                            cpuset_count(a->nodes) > 1 ? "s" : "", nodes);
                        return -EINVAL;
                }
        }
        return 0;
}

/* The nodes (OS indexes) a bound hugepage-backed domain's pages may be said to lie on without a pool of
 * size there: those of a binding of its hugepage memory (a hugepage cell's <memnode>, else the domain's
 * <memory>) that names no node with such a pool. placementd counts pages bound there on those nodes, held
 * by no pool; bound with a pool, the kernel takes them from it. second: of its cells of a second page size
 * (Plan.second_page_size) and that size, else of the others and the plan's. */
static CpuSet *poolless_binding(const Topology *t, const DomainSpec *live, const Plan *plan, bool second)
{
        CpuSet *nodes = cpuset_new();
        bool unbound_cell = !second && (!live->cells || !live->cells->len);
        uint64_t size = second ? plan->second_page_size : plan->hugepage_size;

        for (unsigned i = 0; live->cells && i < live->cells->len; i++) {
                const DomainCell *c = &g_array_index(live->cells, DomainCell, i);
                /* a cell of a second page size is not in the pools of the plan's, nor the others in its */
                bool pages =
                    second ? c->hugepages && !cell_in_plan_size(t, plan, c) : cell_in_plan_size(t, plan, c);
                const CpuSet *memnode = pages ? cell_memnode(live, c) : NULL;
                if (pages && !memnode)
                        unbound_cell = true;
                if (memnode && !has_pool(t, memnode, size))
                        cpuset_union(nodes, memnode);
        }
        if (unbound_cell && live->memory_nodeset && !has_pool(t, live->memory_nodeset, size))
                cpuset_union(nodes, live->memory_nodeset);
        return nodes;
}

/* A recorded plan holds ordinary memory within each node's, a hugepage-backed domain's in the pools of its
 * page size (its guest cells of ordinary memory, if any, in ordinary memory). unbound: libvirt binds none
 * of its memory (it is counted as the domain runs, not from the record). */
static int adopt_hugepages(Manager *m, const DomainSpec *live, bool unbound, Plan *plan, char **ret_error)
{
        g_autoptr(CpuSet) poolless = NULL, poolless_second = NULL;

        /* a placement's ordinary memory within a node's ordinary memory (the record was checked against
         * the pools too); pins counted as they run have their memory counted anew, not from the record */
        for (unsigned n = 0; !live->hugepages && plan->result != PLAN_ADOPTED && n < plan->nnode_memory; n++)
                if (plan->node_memory[n] > m->topology->nodes[n].memory) {
                        *ret_error = g_strdup_printf("its memory on node %u exceeds the node's",
                                                     m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        if (!live->hugepages)
                return 0;
        plan->hugepage_size = domain_request_page_size(live, topology_default_hugepage_size(m->topology));
        if (!plan->node_ordinary)
                plan->second_page_size =
                    domain_request_second_page_size(live, topology_default_hugepage_size(m->topology));
        adopt_ordinary_cells(m->topology, m->ledger, live, plan);
        for (unsigned n = 0;
             plan->result != PLAN_ADOPTED && !plan->second_page_size && n < plan->nnode_memory; n++)
                if (plan_node_ordinary(plan, n) > m->topology->nodes[n].memory) {
                        *ret_error = g_strdup_printf("its memory on node %u exceeds the node's",
                                                     m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        /* a node without a pool of the size holds none of it (bound there alone, it cannot all be backed);
         * pages a binding lets the kernel take from a pool are in a pool, whatever a record says: counted on
         * a node without one they would be counted nowhere, and that pool shown free */
        poolless = poolless_binding(m->topology, live, plan, false);
        if (plan->second_page_size)
                poolless_second = poolless_binding(m->topology, live, plan, true);
        for (unsigned n = 0; plan->result != PLAN_ADOPTED && !unbound && n < plan->nnode_memory; n++)
                if ((plan_node_pages(plan, n) &&
                     !topology_node_hugepage_bytes(m->topology, n, plan->hugepage_size) &&
                     !cpuset_has(poolless, m->topology->nodes[n].os_index)) ||
                    (poolless_second && plan_node_ordinary(plan, n) &&
                     !topology_node_hugepage_bytes(m->topology, n, plan->second_page_size) &&
                     !cpuset_has(poolless_second, m->topology->nodes[n].os_index))) {
                        *ret_error =
                            g_strdup_printf("its hugepage memory on node %u, which has no pool of its page "
                                            "size, while its binding names one that has",
                                            m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        /* and its cells of a second page size within that size's free pools */
        for (unsigned n = 0; plan->second_page_size && n < plan->nnode_memory; n++)
                if (plan_node_ordinary(plan, n) &&
                    topology_node_hugepage_bytes(m->topology, n, plan->second_page_size) &&
                    plan_node_ordinary(plan, n) >
                        ledger_node_free_hugepages(m->ledger, n, plan->second_page_size)) {
                        *ret_error = g_strdup_printf("its hugepage memory on node %u exceeds the free pool",
                                                     m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        for (unsigned n = 0; n < plan->nnode_memory; n++)
                if (plan_node_pages(plan, n) &&
                    topology_node_hugepage_bytes(m->topology, n, plan->hugepage_size) &&
                    plan_node_pages(plan, n) >
                        ledger_node_free_hugepages(m->ledger, n, plan->hugepage_size)) {
                        *ret_error = g_strdup_printf("its hugepage memory on node %u exceeds the free pool",
                                                     m->topology->nodes[n].os_index);
                        return -EINVAL;
                }
        return 0;
}

MemoryBinding placer_recorded_binding(const MetaDecision *md, const DomainSpec *live)
{
        int b = memory_binding_from_string(md->memory_binding);

        /* a binding applied or kept binds the live domain's memory: where none does, the record's word
         * (its owner may have written it) is not repeated */
        if ((b == MEMORY_BINDING_APPLIED || b == MEMORY_BINDING_KEPT) && !live->memory_nodeset &&
            !live->memnode_nodeset)
                return MEMORY_BINDING_NONE;
        return b < 0 ? MEMORY_BINDING_NONE : (MemoryBinding)b;
}

/* plan's pins counted as placementd counts pins it did not choose: a vCPU floating over the host on no
 * CPU, the memory where a binding keeps it, else with its vCPUs (policy_adopt()). */
static Plan *count_as_running(Manager *m, const DomainSpec *user, const DomainSpec *live, const Plan *plan)
{
        PlacementRequest req = domain_request(user, live);
        g_auto(RequestShape) shape = {0};

        domain_request_shape(live, m->topology, &req, &shape);
        req.vcpus = plan->nvcpus;
        return policy_adopt(m->topology, m->ledger, &req, plan->vcpu_pins, &m->config->placement);
}

/* A record of pins counted as they run (skipped: pinned by hand) says nothing placementd chose, and its
 * owner may have written it: its vCPUs and memory are counted as for any domain pinned by hand, whatever
 * the record says. */
static void count_adopted(Manager *m, const DomainSpec *user, const DomainSpec *live, Plan *plan)
{
        g_autoptr(Plan) counted = count_as_running(m, user, live, plan);

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (counted->vcpu_pu[i] < 0) /* floats: the record's cpu= counts nothing */
                        plan->vcpu_pu[i] = -1;
        plan_copy_memory(plan, counted);
}

/* Memory no binding keeps on a node (none, or a preferred one) lies where the kernel put it, which a record
 * cannot show and its owner may have written: counted as placementd counts such memory, where a binding
 * prefers it, else with the vCPUs (the pins, checked against the live ones, stand). */
static void count_unbound_memory(Manager *m, const DomainSpec *user, const DomainSpec *live, Plan *plan)
{
        g_autoptr(Plan) counted = count_as_running(m, user, live, plan);

        plan_copy_memory(plan, counted);
}

/* The recorded reason made true again for an emulator pinned (to pin) by someone else, or set floating by
 * someone else (pin NULL): where placementd or an earlier hand pin put the emulator is no longer said (its
 * I/O threads stay where placementd put them), where the emulator runs now is. */
char *placer_reason_hand_emulator(const char *recorded, const CpuSet *pin)
{
        static const char both[] = "the emulator and I/O threads share ";
        g_auto(GStrv) parts = g_strsplit(recorded ? recorded : "", "; ", -1);
        g_autofree char *list = pin ? cpuset_format(pin) : NULL;
        GString *s = g_string_new(NULL);

        for (unsigned i = 0; parts[i]; i++) {
                if (!*parts[i] || g_str_has_prefix(parts[i], "the emulator shares ") ||
                    g_str_has_prefix(parts[i], "the emulator stays ") ||
                    g_str_has_prefix(parts[i], "the emulator runs unpinned"))
                        continue;
                if (s->len)
                        g_string_append(s, "; ");
                if (g_str_has_prefix(parts[i], both))
                        g_string_append_printf(s, "its I/O threads share %s", parts[i] + strlen(both));
                else
                        g_string_append(s, parts[i]);
        }
        if (list)
                g_string_append_printf(s, "%sthe emulator stays where it was " HAND_EMULATOR_SAID "%s)",
                                       s->len ? "; " : "", list);
        else
                g_string_append_printf(s,
                                       "%sthe emulator runs unpinned, as set outside placementd (virsh "
                                       "emulatorpin)",
                                       s->len ? "; " : "");
        return g_string_free(s, FALSE);
}

Decision *placer_adopt_recorded(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                                bool warn)
{
        Plan *plan = NULL;
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) bound = cpuset_new(); /* where libvirt binds its memory */
        bool bound_all, unbound;
        g_autoptr(DomainSpec) user = NULL;
        Decision *d;
        const MetaDecision *md = live->decision;
        bool rerecord = false;
        const CpuSet *hand = NULL;

        /* an opt-out placementd never writes (the user added it to a definition made from live XML, or
         * to the persistent definition while the domain ran, over the record placementd wrote live
         * before) stands over the record: placer_place() skips the domain. A persistent domain's opt-out
         * is its definition's (below): a live skip='yes' beside its record is none, as the running
         * daemon had it (placer-follow.c: restore_record()) */
        if ((live->meta_skip && !virt_domain_is_persistent(dom)) || live->vcpu_auto || live->numatune_auto)
                return NULL;
        user = placer_user_spec(dom, live);
        if (user && domain_spec_opt_out(user))
                return NULL;
        placer_release(m, uuid); /* checked against the others, not against its old self */
        if (live->memory_nodeset)
                cpuset_union(bound, live->memory_nodeset);
        if (live->memnode_nodeset)
                cpuset_union(bound, live->memnode_nodeset);
        /* a <numatune><memory> binding holds whatever no <memnode> does; <memnode>s alone, only the cells
         * they name */
        bound_all = live->memory_nodeset || (live->memnode_nodeset && domain_spec_memnodes_bind_all(live));
        /* preferred binds nothing: what its node had no room for is where the kernel fell back; nor does
         * anything bind the memory of a domain without a binding (MemoryBinding=no, a binding that failed):
         * the kernel puts it where it will */
        unbound =
            (live->memory_nodeset && live->memory_mode == MEMORY_MODE_PREFERRED) || cpuset_is_empty(bound);
        if (unbound)
                for (unsigned n = 0; n < m->topology->nnodes; n++)
                        cpuset_add(bound, m->topology->nodes[n].os_index);
        if (metadata_to_plan_bound(m->topology, md, live->name, live->vcpus, live->vcpu_ids, live->memory,
                                   bound, bound_all, &plan, &error) == 0) {
                plan_set_realtime(plan, live->realtime, live->realtime_vcpus); /* before it is checked */
                plan_set_realtime_threads(plan, live->realtime_emulator, live->realtime_iothreads);
        }
        if (!plan || check_recorded(m, dom, uuid, plan, &error) < 0 ||
            (plan->result != PLAN_ADOPTED && check_cell_bindings(m->topology, live, plan, &error) < 0)) {
                if (warn)
                        log_warning("%s: recorded decision not adopted (%s); placing it anew", live->name,
                                    error);
                plan_free(plan);
                return NULL;
        }
        /* an emulator pin someone else made since the record (or while placementd was down) is theirs:
         * the record's no longer runs, and the one that runs is held as a definition's would be */
        if (user && (hand = placer_hand_emulator_said(m, dom, user, live, md->emulator, NULL, live->name))) {
                char *reason = placer_reason_hand_emulator(plan->reason, hand);
                rerecord = !cpuset_is_empty(plan->emulator_pin) || g_strcmp0(reason, plan->reason) != 0;
                cpuset_clear(plan->emulator_pin);
                g_free(plan->reason); /* the record's reason said where the emulator ran */
                plan->reason = reason;
        } else if (user && placer_floating_emulator_said(m, dom, user, live, md->emulator, live->name)) {
                /* set floating while placementd was down: as the running daemon follows it, no pin of
                 * placementd's runs, and the reason says it runs unpinned */
                char *reason = placer_reason_hand_emulator(plan->reason, NULL);
                rerecord = true;
                cpuset_clear(plan->emulator_pin);
                plan->user_emulator_floating = true;
                g_free(plan->reason);
                plan->reason = reason;
        } else if (plan->user_emulator_floating && (!md->domain_id || md->domain_id != live->domain_id ||
                                                    !placer_emulator_runs_floating(m, dom, user, live))) {
                /* the record says its user set the emulator floating: it stands only in the run it was
                 * written in, while the emulator runs so (a record of another run, or one written over,
                 * leaves a re-placement to pin it as EmulatorPin= says) */
                plan->user_emulator_floating = false;
                rerecord = true;
        }
        if (hand)
                plan->user_emulator_floating = false;
        if (plan->result == PLAN_ADOPTED)
                count_adopted(m, user ? user : live, live, plan);
        else if (unbound)
                count_unbound_memory(m, user ? user : live, live, plan);
        if (adopt_hugepages(m, live, unbound, plan, &error) < 0) {
                if (warn)
                        log_warning("%s: recorded decision not adopted (%s); placing it anew", live->name,
                                    error);
                plan_free(plan);
                return NULL;
        }
        if (user) {
                /* the CPUs its definition keeps for QEMU's threads are held, as when it was placed or
                 * adopted (the record does not say which) */
                PlacementRequest threads = {.emulator_cpus = user->emulatorpin,
                                            .iothread_cpus = user->iothreadpin_cpus,
                                            .kept_iothreads = user->iothreadpins,
                                            .realtime_emulator = plan->realtime_emulator,
                                            .realtime_iothreads = plan->realtime_iothreads};
                policy_hold_thread_cpus(m->topology, &threads, plan);
        }
        d = decision_new(uuid, live->name);
        d->domain_id = live->domain_id;
        d->adopted = true;
        d->reason = g_strdup(plan->reason);
        d->memory_binding = placer_recorded_binding(md, live);
        d->result = decision_result_from_plan(plan->result);
        d->pinned_by_hand = plan->result == PLAN_ADOPTED;
        placer_record(m, d, plan);
        /* a record of overcommitted pins may share with no one now: the others left while placementd was
         * down, or before the domain's save image was restored (a plan decided now cannot be stale); so
         * may the domains its reason names as realtime beside it */
        if (d->result == DECISION_OVERCOMMITTED || policy_reason_names_realtime_neighbours(d->reason))
                placer_sharing_soon(m);
        /* the record it was adopted from, as placementd writes it: written back should the element go
         * while the domain runs (placer_follow_opt_out()) */
        if (!d->record && user)
                d->record = placer_format_record(m, d, user);
        /* the recorded I/O thread pins are checked against the live ones as the vCPUs' were above: one
         * pinned by someone else since is left to them (the record written again says so) */
        if (m->config->apply && !cpuset_is_empty(d->plan->iothreads))
                placer_follow_iothreads(m, dom, d);
        if (rerecord && m->config->apply)
                placer_record_again(m, dom, d);
        return d;
}

bool placer_adopt(Manager *m, virDomainPtr dom)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autoptr(DomainSpec) live = NULL;
        Decision *d;

        virt_domain_uuid(dom, uuid);
        if (virt_domain_read_spec(dom, false, &live, NULL) < 0 || !live->decision)
                return false;
        /* before the adoption, which may write the record again: what QEMU's threads started on goes in it
         */
        thread_mask_first_sight(m, uuid, live);
        if (!(d = placer_adopt_recorded(m, dom, uuid, live, false)))
                return false;
        placer_log_decision(d);
        placer_notify(m, d, d->uuid, d->name);
        return true;
}
