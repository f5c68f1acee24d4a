/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host view: free cores, free PUs and free memory per node as the ledger leaves them, inside one
 * request's constraints and outside the host's reserved CPUs.
 */
#include "host-view.h"
#include "load-rules.h"
#include "policy-internal.h"
#include "policy.h"

int policy_core_first_usable_pu(const HostView *v, unsigned core)
{
        const TopoCore *c = &v->t->cores[core];
        for (unsigned p = c->pu_first; p < c->pu_first + c->npus; p++)
                if (v->pu_usable[p])
                        return (int)p;
        return -1;
}

/* Whether node n has a CPU the request allows (every node without <vcpu cpuset> or reserved caches). */
static bool node_has_allowed_cpu(const Topology *t, const PlacementRequest *req, unsigned n)
{
        const TopoNode *node = &t->nodes[n];

        if (!req || (!req->allowed_cpus && !req->cache_cpus))
                return true;
        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (placement_request_allows_cpu(req, t->pus[p].os_index))
                                return true;
        return false;
}

/* Whether node n has a CPU the request allows that the configuration gives vCPUs: not in ReservedCPUs=,
 * nor of another kind under CoreKinds=performance-only. */
static bool node_has_usable_cpu(const Topology *t, const PlacementRequest *req,
                                const PlacementParams *params, unsigned n)
{
        const TopoNode *node = &t->nodes[n];

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus; p++)
                        if (!policy_keeps_pu(t, params, p) &&
                            (!req || placement_request_allows_cpu(req, t->pus[p].os_index)))
                                return true;
        return false;
}

/* Whether the request binds its memory, and node n is not one of the nodes it binds it to. */
static bool outside_memory_nodes(const Topology *t, const PlacementRequest *req, unsigned n)
{
        return req && req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes &&
               !cpuset_has(req->memory_nodes, t->nodes[n].os_index);
}

/* Whether the memory is bound to nodes none of whose CPUs the vCPUs may run on: memory-only nodes (a CXL
 * expander, the high-bandwidth memory of a flat-mode KNL or Sapphire Rapids), nodes the request's own
 * <vcpu cpuset> leaves out (libvirt runs such a guest, its memory remote), nodes whose CPUs the
 * configuration keeps from vCPUs (ReservedCPUs=), or nodes outside the allowed memory nodes whose CPUs
 * are outside the allowed CPUs too (their memory counted as 0 B). The vCPUs must run elsewhere. */
static bool memory_nodes_cpuless(const Topology *t, const PlacementRequest *req,
                                 const PlacementParams *params)
{
        bool any = false;

        for (unsigned m = 0; m < t->nnodes; m++) {
                if (outside_memory_nodes(t, req, m))
                        continue;
                if (node_has_usable_cpu(t, req, params, m))
                        return false;
                /* a bound node without a CPU the vCPUs may use: its memory general, all in hugepage pools
                 * (HBM kept for hugepage-backed guests), or not allowed (counted as 0 B; the loader drops
                 * the nodes that have neither CPUs nor memory) */
                any = true;
        }
        return any;
}

/* The distance from node n to the request's memory: summed over its memory nodes (the kernel spreads the
 * memory of a binding over them when no vCPU runs on one), so that it orders as their mean does; an
 * unreachable one counts as the farthest distance a SLIT can name. TOPOLOGY_UNREACHABLE when none is
 * reachable. */
static uint32_t distance_to_memory(const Topology *t, const PlacementRequest *req, unsigned n)
{
        uint32_t sum = 0;
        bool reachable = false;

        for (unsigned m = 0; m < t->nnodes; m++) {
                uint32_t d;
                if (outside_memory_nodes(t, req, m))
                        continue;
                d = topology_distance(t, m, n);
                reachable = reachable || d < TOPOLOGY_UNREACHABLE;
                sum += MIN(d, 255u);
        }
        return reachable ? sum : TOPOLOGY_UNREACHABLE;
}

/* Whether a guest cell with vCPUs has a <memnode> none of whose nodes has a CPU its vCPUs may use
 * (memory-only nodes, nodes its <vcpu cpuset> leaves out or whose CPUs the configuration keeps): its vCPUs
 * run on the nearest nodes that have one, whatever the other cells bind (cells_set_homes()). */
static bool cell_memory_cpuless(const Topology *t, const PlacementRequest *req,
                                const PlacementParams *params)
{
        for (unsigned c = 0; req && c < req->ncells; c++) {
                const PlacementCell *cell = &req->cells[c];
                bool cpus = false;
                if (!cell->memory_nodes || cpuset_is_empty(cell->memory_nodes) || !cell->vcpus ||
                    cpuset_is_empty(cell->vcpus))
                        continue;
                for (unsigned m = 0; m < t->nnodes && !cpus; m++)
                        cpus = cpuset_has(cell->memory_nodes, t->nodes[m].os_index) &&
                               node_has_usable_cpu(t, req, params, m);
                if (!cpus)
                        return true;
        }
        return false;
}

/*
 * A node is allowed unless the request's memory nodes leave it out, or it has CPUs and none is allowed.
 * When no node with an allowed CPU has memory (the allowed CPUs are all on memoryless nodes), nodes with
 * memory but no allowed CPU are allowed for their memory (their cores stay out: pu_allowed()). When the
 * memory is bound to memory-only nodes, every node with a CPU the request may use is allowed for its
 * cores (its memory stays out: host_view_init_for()): the sets nearest the memory are walked first
 * (HostView.memory_remote), and the vCPUs share a core only when no set has a free one for each. So is
 * every node when the bound nodes have CPUs but too few free cores (PlacementRequest.vcpus_beyond_binding),
 * and when a guest cell's <memnode> binds it to nodes without such a CPU (its vCPUs go to the nearest
 * nodes with free cores, HostView.cell_homes).
 */
static bool node_allowed(const Topology *t, const PlacementRequest *req, const PlacementParams *params,
                         unsigned n)
{
        const TopoNode *node = &t->nodes[n];

        if (!req)
                return true;
        if (outside_memory_nodes(t, req, n))
                return (req->vcpus_beyond_binding || memory_nodes_cpuless(t, req, params) ||
                        cell_memory_cpuless(t, req, params)) &&
                       node_has_usable_cpu(t, req, params, n) &&
                       distance_to_memory(t, req, n) < TOPOLOGY_UNREACHABLE;
        if (node->ncores == 0 || node_has_allowed_cpu(t, req, n))
                return true;
        for (unsigned m = 0; m < t->nnodes; m++)
                if (t->nodes[m].memory > 0 && t->nodes[m].ncores > 0 && node_has_allowed_cpu(t, req, m))
                        return false;
        return node->memory > 0;
}

/* GPU memory never holds a domain's memory; a lower tier only when MemoryTiers= names its kind. */
bool host_view_memory_usable(const PlacementParams *params, NodeKind kind)
{
        if (kind == NODE_KIND_GPU)
                return false;
        return kind == NODE_KIND_DRAM || (params->memory_tiers & (1u << kind));
}

/* Whether the request lets its vCPUs (vcpu) or QEMU's own threads use PU pu: the reserved caches
 * (<cachetune>) confine vCPU threads alone. */
static bool pu_allowed(const HostView *v, unsigned pu, bool vcpu)
{
        const Topology *t = v->t;
        const PlacementRequest *req = v->req;
        const TopoCore *core = &t->cores[t->pus[pu].core];
        unsigned os = t->pus[pu].os_index;

        if (!v->node_allowed[core->node])
                return false;
        /* CoreKinds=performance-only leaves the other kinds to the host */
        if (v->params->core_kinds == CORE_KINDS_PERFORMANCE_ONLY && core->kind_rank > 0)
                return false;
        if (vcpu)
                return placement_request_allows_cpu(req, os);
        return !req || !req->allowed_cpus || cpuset_has(req->allowed_cpus, os);
}

void host_view_init(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params)
{
        host_view_init_for(v, t, l, params, NULL);
}

void host_view_init_for(HostView *v, const Topology *t, const Ledger *l, const PlacementParams *params,
                        const PlacementRequest *req)
{
        g_autofree bool *reserved = g_new0(bool, MAX(t->npus, 1));

        *v = (HostView){.t = t, .l = l, .params = params, .req = req};
        v->node_allowed = g_new0(bool, MAX(t->nnodes, 1));
        v->pu_usable = g_new0(bool, MAX(t->npus, 1));
        v->core_free = g_new0(bool, MAX(t->ncores, 1));
        v->node_free_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_own_thread_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_free_pus = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_free_memory = g_new0(uint64_t, MAX(t->nnodes, 1));
        if (req && req->hugepage_size && placement_request_page_memory(req) < req->memory) {
                v->node_free_pages = g_new0(uint64_t, MAX(t->nnodes, 1));
                v->node_free_ordinary = g_new0(uint64_t, MAX(t->nnodes, 1));
        }
        v->node_usable_pus = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_usable_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_capacity = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_size = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_load = g_new0(uint64_t, MAX(t->nnodes, 1));
        v->node_realtime_cores = g_new0(unsigned, MAX(t->nnodes, 1));
        v->node_realtime_pus = g_new0(unsigned, MAX(t->nnodes, 1));

        for (unsigned n = 0; n < t->nnodes; n++)
                v->node_allowed[n] = node_allowed(t, req, params, n);
        if (req && req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes &&
            (req->vcpus_beyond_binding || memory_nodes_cpuless(t, req, params))) {
                v->memory_remote = true;
                v->node_to_memory = g_new0(uint32_t, MAX(t->nnodes, 1));
                for (unsigned n = 0; n < t->nnodes; n++)
                        v->node_to_memory[n] = distance_to_memory(t, req, n);
        }
        /* the same for QEMU's threads unless reserved caches confine the vCPUs */
        v->pu_thread_usable = req && req->cache_cpus ? g_new0(bool, MAX(t->npus, 1)) : v->pu_usable;
        for (unsigned p = 0; p < t->npus; p++) {
                /* a CPU no domain can run on now is kept as a reserved one is: no thread there, its core not
                 * whole */
                reserved[p] =
                    (params->reserved_cpus && cpuset_has(params->reserved_cpus, t->pus[p].os_index)) ||
                    (params->unavailable_cpus && cpuset_has(params->unavailable_cpus, t->pus[p].os_index));
                v->pu_usable[p] = !reserved[p] && pu_allowed(v, p, true);
                if (v->pu_thread_usable != v->pu_usable)
                        v->pu_thread_usable[p] = !reserved[p] && pu_allowed(v, p, false);
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                /* a sibling the host keeps makes the core not whole; one the request may not use does not;
                 * busy host-side threads keep a core as a vCPU would */
                bool whole = ledger_core_free(l, c) && !load_core_held(v, c) && !core->host_thread;
                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                        if (reserved[p])
                                whole = false;
                        if (!v->pu_usable[p])
                                continue;
                        v->node_usable_pus[core->node]++;
                        v->node_load[core->node] += ledger_pu_load(l, p);
                        if (!ledger_pu_load(l, p) && !ledger_pu_held(l, p))
                                v->node_free_pus[core->node]++;
                }
                whole = whole && policy_core_first_usable_pu(v, c) >= 0;
                /* the first try keeps the user's emulator and I/O thread cores from its vCPUs */
                if (whole && req && req->vcpus_off_user_threads && policy_core_user_thread(v, c)) {
                        v->node_own_thread_cores[core->node]++;
                        whole = false;
                }
                v->core_free[c] = whole;
                if (whole)
                        v->node_free_cores[core->node]++;
                if (policy_core_first_usable_pu(v, c) >= 0) {
                        v->node_usable_cores[core->node]++;
                        if (ledger_core_realtime(l, c)) {
                                v->node_realtime_cores[core->node]++;
                                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                                        v->node_realtime_pus[core->node] += v->pu_usable[p];
                        }
                }
        }
        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t held = ledger_node_memory(l, n), reserve = params->memory_reserve;
                uint64_t used = held > UINT64_MAX - reserve ? UINT64_MAX : held + reserve;
                v->node_free_memory[n] = t->nodes[n].memory > used ? t->nodes[n].memory - used : 0;
                /* its memory comes from the pools, never general memory; but for the guest cells no
                 * <page> backs, which take general memory beside the pools (both counted: a node's room
                 * is what either holds, each cell's own kind when its memory is counted) */
                if (v->node_free_pages) {
                        v->node_free_pages[n] = ledger_node_free_hugepages(l, n, req->hugepage_size);
                        /* or, for cells of a second page size, the free pages of that size */
                        v->node_free_ordinary[n] =
                            req->second_page_size ? ledger_node_free_hugepages(l, n, req->second_page_size)
                                                  : v->node_free_memory[n];
                        /* the sum of the two kinds it takes: general memory is not one of them then */
                        v->node_free_memory[n] = v->node_free_pages[n] + v->node_free_ordinary[n];
                } else if (req && req->hugepage_size) {
                        v->node_free_memory[n] = ledger_node_free_hugepages(l, n, req->hugepage_size);
                }
                /* a node the request binds its memory to holds it whatever its kind: the user chose it */
                if (!v->node_allowed[n] || outside_memory_nodes(t, req, n) ||
                    (!host_view_memory_usable(params, t->nodes[n].kind) &&
                     (!req || req->memory_source == MEMORY_SOURCE_NONE))) {
                        v->node_free_memory[n] = 0;
                        if (v->node_free_pages)
                                v->node_free_pages[n] = v->node_free_ordinary[n] = 0;
                }
        }
}

unsigned host_view_kinds_short(const HostView *v, const unsigned *nodes, unsigned n)
{
        const PlacementRequest *req = v->req;
        uint64_t pages = 0, ordinary = 0, need_pages = 0, need_ordinary = 0, in_cells = 0;

        if (!v->node_free_pages || (req->memory_source != MEMORY_SOURCE_NONE && req->memory_nodes))
                return 0;
        /* a cell its <memnode> binds is not the set's to hold (policy_set_memory()); each other cell
         * takes whole pages of its size, as QEMU backs it (placement_request_cell_pool_bytes()) */
        for (unsigned c = 0; c < req->ncells; c++) {
                in_cells += req->cells[c].memory;
                if (req->cells[c].memory_nodes && !cpuset_is_empty(req->cells[c].memory_nodes))
                        continue;
                if (req->cells[c].ordinary)
                        need_ordinary += placement_request_cell_pool_bytes(req, &req->cells[c]);
                else
                        need_pages += placement_request_cell_pool_bytes(req, &req->cells[c]);
        }
        /* what no cell holds: in the request's page size */
        if (in_cells < req->memory)
                need_pages += plan_whole_pages(req->memory - in_cells, req->hugepage_size);
        for (unsigned i = 0; i < n; i++) {
                pages += v->node_free_pages[nodes[i]];
                ordinary += v->node_free_ordinary[nodes[i]];
        }
        return (pages < need_pages ? HOST_VIEW_PAGES_SHORT : 0) |
               (ordinary < need_ordinary ? HOST_VIEW_ORDINARY_SHORT : 0);
}

bool host_view_kinds_fit(const HostView *v, const unsigned *nodes, unsigned n)
{
        return host_view_kinds_short(v, nodes, n) == 0;
}

const CpuSet *host_view_cell_home(const HostView *v, unsigned id)
{
        for (unsigned i = 0; i < v->ncell_homes; i++)
                if (v->cell_home_ids[i] == id)
                        return v->cell_homes[i];
        return NULL;
}

void host_view_done(HostView *v)
{
        for (unsigned i = 0; i < v->ncell_homes; i++)
                cpuset_free(v->cell_homes[i]);
        g_free(v->cell_homes);
        g_free(v->cell_home_ids);
        g_free(v->node_allowed);
        g_free(v->node_to_memory);
        if (v->pu_thread_usable != v->pu_usable)
                g_free(v->pu_thread_usable);
        g_free(v->pu_usable);
        g_free(v->core_free);
        g_free(v->node_free_cores);
        g_free(v->node_own_thread_cores);
        g_free(v->node_free_pus);
        g_free(v->node_free_memory);
        g_free(v->node_free_pages);
        g_free(v->node_free_ordinary);
        g_free(v->node_usable_pus);
        g_free(v->node_realtime_cores);
        g_free(v->node_realtime_pus);
        g_free(v->node_usable_cores);
        g_free(v->node_capacity);
        g_free(v->node_size);
        g_free(v->node_load);
}
