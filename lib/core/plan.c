/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plan.h"

#include <errno.h>
#include <string.h>

#include "size.h"
#include "string-table.h"

static const char *const policy_kind_table[_POLICY_MAX] = {
    [POLICY_EXPLICIT] = "explicit",
    [POLICY_COMPAT] = "compat",
};
DEFINE_STRING_TABLE_LOOKUP(policy_kind, PolicyKind, _POLICY_MAX)

static const char *const vcpu_pin_mode_table[_VCPU_PIN_MAX] = {
    [VCPU_PIN_CORE] = "core",
    [VCPU_PIN_THREAD] = "thread",
    [VCPU_PIN_NODESET] = "nodeset",
};
DEFINE_STRING_TABLE_LOOKUP(vcpu_pin_mode, VcpuPinMode, _VCPU_PIN_MAX)

static const char *const emulator_pin_mode_table[_EMULATOR_PIN_MAX] = {
    [EMULATOR_PIN_SIBLINGS] = "siblings",
    [EMULATOR_PIN_NODESET] = "nodeset",
    [EMULATOR_PIN_NONE] = "none",
};
DEFINE_STRING_TABLE_LOOKUP(emulator_pin_mode, EmulatorPinMode, _EMULATOR_PIN_MAX)

static const char *const core_kinds_mode_table[_CORE_KINDS_MAX] = {
    [CORE_KINDS_PERFORMANCE_FIRST] = "performance-first",
    [CORE_KINDS_PERFORMANCE_ONLY] = "performance-only",
    [CORE_KINDS_ANY] = "any",
};
DEFINE_STRING_TABLE_LOOKUP(core_kinds_mode, CoreKindsMode, _CORE_KINDS_MAX)

static const char *const plan_result_table[_PLAN_RESULT_MAX] = {
    [PLAN_PLACED] = "placed",
    [PLAN_OVERCOMMITTED] = "overcommitted",
    [PLAN_UNPLACEABLE] = "unplaceable",
    [PLAN_ADOPTED] = "adopted",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(plan_result, PlanResult, _PLAN_RESULT_MAX)

static const char *const memory_mode_table[_MEMORY_MODE_MAX] = {
    [MEMORY_MODE_STRICT] = "strict",
    [MEMORY_MODE_INTERLEAVE] = "interleave",
    [MEMORY_MODE_PREFERRED] = "preferred",
    [MEMORY_MODE_RESTRICTIVE] = "restrictive",
};
DEFINE_STRING_TABLE_LOOKUP(memory_mode, MemoryMode, _MEMORY_MODE_MAX)

static const char *const fit_mode_table[_FIT_MAX] = {
    [FIT_SPREAD] = "spread",
    [FIT_PACK] = "pack",
};
DEFINE_STRING_TABLE_LOOKUP(fit_mode, FitMode, _FIT_MAX)

void plan_candidate_free(PlanCandidate *c)
{
        if (!c)
                return;
        cpuset_free(c->nodes);
        g_free(c);
}

Plan *plan_new(const char *name, unsigned nvcpus, uint64_t memory, unsigned nnodes)
{
        Plan *p = g_new0(Plan, 1);

        p->name = g_strdup(name ? name : "");
        p->nvcpus = nvcpus;
        p->requested_vcpus = nvcpus;
        p->memory = memory;
        p->nodes = cpuset_new();
        p->vcpu_pu = g_new(int, MAX(nvcpus, 1));
        p->vcpu_pins = g_new0(CpuSet *, MAX(nvcpus, 1));
        for (unsigned i = 0; i < nvcpus; i++) {
                p->vcpu_pu[i] = -1;
                p->vcpu_pins[i] = cpuset_new();
        }
        p->nnode_memory = nnodes;
        p->node_memory = g_new0(uint64_t, MAX(nnodes, 1));
        p->emulator_pin = cpuset_new();
        p->held_pus = cpuset_new();
        p->iothreads = cpuset_new();
        p->iothread_pin = cpuset_new();
        p->user_iothreads = cpuset_new();
        p->realtime_iothreads = cpuset_new();
        p->held_realtime_pus = cpuset_new();
        p->candidates = g_ptr_array_new_with_free_func((GDestroyNotify)plan_candidate_free);
        return p;
}

void plan_free(Plan *p)
{
        if (!p)
                return;
        for (unsigned i = 0; i < p->nvcpus; i++)
                cpuset_free(p->vcpu_pins[i]);
        g_free(p->vcpu_pins);
        g_free(p->vcpu_pu);
        g_free(p->node_memory);
        g_free(p->node_ordinary);
        cpuset_free(p->nodes);
        cpuset_free(p->emulator_pin);
        cpuset_free(p->held_pus);
        cpuset_free(p->realtime_vcpus);
        cpuset_free(p->iothreads);
        cpuset_free(p->iothread_pin);
        cpuset_free(p->user_iothreads);
        cpuset_free(p->realtime_iothreads);
        cpuset_free(p->held_realtime_pus);
        g_free(p->vcpu_ids);
        g_ptr_array_unref(p->candidates);
        plan_set_cells(p, 0);
        g_free(p->reason);
        g_free(p->name);
        g_free(p);
}

Plan *plan_copy(const Plan *p)
{
        Plan *c = plan_new(p->name, p->nvcpus, p->memory, p->nnode_memory);

        c->policy = p->policy;
        c->vcpu_pin = p->vcpu_pin;
        c->result = p->result;
        c->requested_vcpus = p->requested_vcpus;
        cpuset_union(c->nodes, p->nodes);
        for (unsigned i = 0; i < p->nvcpus; i++) {
                c->vcpu_pu[i] = p->vcpu_pu[i];
                cpuset_union(c->vcpu_pins[i], p->vcpu_pins[i]);
        }
        memcpy(c->node_memory, p->node_memory, sizeof(uint64_t) * p->nnode_memory);
        cpuset_union(c->emulator_pin, p->emulator_pin);
        cpuset_union(c->iothreads, p->iothreads);
        cpuset_union(c->iothread_pin, p->iothread_pin);
        cpuset_union(c->user_iothreads, p->user_iothreads);
        c->keep_memory = p->keep_memory;
        c->shared_vcpus = p->shared_vcpus;
        c->reason = g_strdup(p->reason);
        for (unsigned i = 0; i < p->candidates->len; i++) {
                const PlanCandidate *pc = g_ptr_array_index(p->candidates, i);
                PlanCandidate *cc = g_memdup2(pc, sizeof(*pc));
                cc->nodes = cpuset_copy(pc->nodes);
                g_ptr_array_add(c->candidates, cc);
        }
        c->hugepage_size = p->hugepage_size;
        c->second_page_size = p->second_page_size;
        plan_set_cells(c, p->ncells);
        for (unsigned i = 0; i < p->ncells; i++) {
                c->cells[i].id = p->cells[i].id;
                c->cells[i].memory = p->cells[i].memory;
                cpuset_union(c->cells[i].vcpus, p->cells[i].vcpus);
                cpuset_union(c->cells[i].nodes, p->cells[i].nodes);
                cpuset_union(c->cells[i].memory_nodes, p->cells[i].memory_nodes);
                cpuset_union(c->cells[i].counted_nodes, p->cells[i].counted_nodes);
                c->cells[i].ordinary = p->cells[i].ordinary;
                c->cells[i].device = p->cells[i].device;
                c->cells[i].device_target = p->cells[i].device_target;
                c->cells[i].device_nodemask = p->cells[i].device_nodemask;
        }
        if (p->node_ordinary)
                c->node_ordinary = g_memdup2(p->node_ordinary, sizeof(uint64_t) * MAX(p->nnode_memory, 1));
        plan_set_vcpu_ids(c, p->vcpu_ids, p->nvcpus);
        plan_set_realtime(c, p->realtime, p->realtime_vcpus);
        plan_set_realtime_threads(c, p->realtime_emulator, p->realtime_iothreads);
        cpuset_union(c->held_pus, p->held_pus);
        cpuset_union(c->held_realtime_pus, p->held_realtime_pus);
        c->device_near = p->device_near;
        c->threads_near = p->threads_near;
        c->packed = p->packed;
        c->l3_fit = p->l3_fit;
        c->l3_by_package = p->l3_by_package;
        c->nothing_usable = p->nothing_usable;
        c->repinned = p->repinned;
        c->user_emulator_floating = p->user_emulator_floating;
        return c;
}

void plan_set_realtime(Plan *p, bool realtime, const CpuSet *ids)
{
        p->realtime = realtime;
        g_clear_pointer(&p->realtime_vcpus, cpuset_free);
        if (realtime && ids)
                p->realtime_vcpus = cpuset_copy(ids);
}

void plan_set_realtime_threads(Plan *p, bool emulator, const CpuSet *ids)
{
        p->realtime_emulator = emulator;
        cpuset_clear(p->realtime_iothreads);
        if (ids)
                cpuset_union(p->realtime_iothreads, ids);
}

bool plan_vcpu_realtime(const Plan *p, unsigned i)
{
        return p->realtime && (!p->realtime_vcpus || cpuset_has(p->realtime_vcpus, plan_vcpu_id(p, i)));
}

/* The cores (indexes) where p counts a vCPU or pins one, added to out. */
static void vcpu_cores(const Topology *t, const Plan *p, CpuSet *out)
{
        for (unsigned i = 0; i < p->nvcpus; i++) {
                if (p->vcpu_pu[i] >= 0 && (unsigned)p->vcpu_pu[i] < t->npus)
                        cpuset_add(out, t->pus[p->vcpu_pu[i]].core);
                CPUSET_FOREACH (os, p->vcpu_pins[i]) {
                        int pu = topology_pu_by_os(t, (unsigned)os);
                        if (pu >= 0)
                                cpuset_add(out, t->pus[pu].core);
                }
        }
}

void plan_thread_pus(const Topology *t, const Plan *p, bool realtime, CpuSet *out)
{
        g_autoptr(CpuSet) own = cpuset_new();
        g_autoptr(CpuSet) pins = cpuset_new();
        g_autoptr(CpuSet) pus = cpuset_new();
        g_autoptr(CpuSet) cores = cpuset_new();

        if (p->realtime_emulator || !realtime)
                cpuset_union(pins, p->emulator_pin);
        if (!cpuset_is_empty(p->iothreads) &&
            (!realtime || cpuset_intersects(p->realtime_iothreads, p->iothreads)))
                cpuset_union(pins, p->iothread_pin);
        if (cpuset_is_empty(pins))
                return;
        vcpu_cores(t, p, own);
        CPUSET_FOREACH (os, pins) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu < 0 || cpuset_has(own, t->pus[pu].core) || cpuset_has(p->held_pus, (unsigned)pu))
                        continue;
                cpuset_add(pus, (unsigned)pu);
                cpuset_add(cores, t->pus[pu].core);
        }
        if (cpuset_count(cores) <= 2)
                cpuset_union(out, pus);
}

CpuSet *plan_held_thread_pus(const Topology *t, const Plan *p)
{
        CpuSet *held = cpuset_new();

        CPUSET_FOREACH (pu, p->held_pus)
                if ((unsigned)pu < t->npus)
                        cpuset_add(held, (unsigned)pu);
        plan_thread_pus(t, p, true, held);
        return held;
}

CpuSet *plan_realtime_thread_pus(const Topology *t, const Plan *p)
{
        CpuSet *pus = cpuset_new();
        g_autoptr(CpuSet) own = cpuset_new();

        plan_thread_pus(t, p, true, pus);
        if (cpuset_is_empty(p->held_realtime_pus))
                return pus;
        vcpu_cores(t, p, own);
        CPUSET_FOREACH (pu, p->held_realtime_pus)
                if ((unsigned)pu < t->npus && cpuset_has(p->held_pus, (unsigned)pu) &&
                    !cpuset_has(own, t->pus[pu].core))
                        cpuset_add(pus, (unsigned)pu);
        return pus;
}

bool placement_request_all_realtime(const PlacementRequest *req)
{
        if (!req->realtime)
                return false;
        for (unsigned i = 0; req->realtime_vcpus && i < req->vcpus; i++)
                if (!cpuset_has(req->realtime_vcpus, req->vcpu_ids ? req->vcpu_ids[i] : i))
                        return false;
        return true;
}

void plan_set_vcpu_ids(Plan *p, const unsigned *ids, unsigned n)
{
        g_clear_pointer(&p->vcpu_ids, g_free);
        if (ids && n == p->nvcpus && n > 0)
                p->vcpu_ids = g_memdup2(ids, sizeof(unsigned) * n);
}

unsigned plan_vcpu_id(const Plan *p, unsigned i)
{
        return p->vcpu_ids ? p->vcpu_ids[i] : i;
}

int vcpu_id_index(const unsigned *ids, unsigned n, unsigned id)
{
        unsigned lo = 0, hi = n;

        if (!ids)
                return id < n ? (int)id : -1;
        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;
                if (ids[mid] == id)
                        return (int)mid;
                if (ids[mid] < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

void plan_set_cells(Plan *p, unsigned ncells)
{
        for (unsigned i = 0; i < p->ncells; i++) {
                cpuset_free(p->cells[i].vcpus);
                cpuset_free(p->cells[i].nodes);
                cpuset_free(p->cells[i].memory_nodes);
                cpuset_free(p->cells[i].counted_nodes);
        }
        g_clear_pointer(&p->cells, g_free);
        p->ncells = ncells;
        if (!ncells)
                return;
        p->cells = g_new0(PlanCell, ncells);
        for (unsigned i = 0; i < ncells; i++) {
                p->cells[i].vcpus = cpuset_new();
                p->cells[i].nodes = cpuset_new();
                p->cells[i].memory_nodes = cpuset_new();
                p->cells[i].counted_nodes = cpuset_new();
        }
}

CpuSet *plan_memory_nodes(const Plan *p)
{
        CpuSet *s = cpuset_new();

        for (unsigned i = 0; i < p->nnode_memory; i++)
                if (p->node_memory[i] > 0)
                        cpuset_add(s, i);
        if (cpuset_is_empty(s))
                cpuset_union(s, p->nodes);
        return s;
}

/* Both NULL, or both sets and equal. */
static bool same_set(const CpuSet *a, const CpuSet *b)
{
        return a == b || (a && b && cpuset_equal(a, b));
}

/* The same <distances>: what one names past the other's end is 0 (none). */
static bool same_distances(const PlacementCell *a, const PlacementCell *b)
{
        for (unsigned k = 0; k < MAX(a->ndistances, b->ndistances); k++)
                if ((k < a->ndistances ? a->distances[k] : 0) != (k < b->ndistances ? b->distances[k] : 0))
                        return false;
        return true;
}

bool placement_request_same_asks(const PlacementRequest *a, const PlacementRequest *b)
{
        if (g_strcmp0(a->name, b->name) != 0 || a->vcpus != b->vcpus || a->memory != b->memory ||
            !same_set(a->allowed_cpus, b->allowed_cpus) || a->memory_source != b->memory_source ||
            !same_set(a->memory_nodes, b->memory_nodes) || a->memory_mode != b->memory_mode ||
            a->keep_emulator != b->keep_emulator || a->emulator_pinned_live != b->emulator_pinned_live ||
            a->ncells != b->ncells || a->hugepage_size != b->hugepage_size ||
            a->second_page_size != b->second_page_size || !same_set(a->iothreads, b->iothreads) ||
            !same_set(a->kept_iothreads, b->kept_iothreads) ||
            !same_set(a->kept_iothreads_live, b->kept_iothreads_live) || a->memory_own != b->memory_own ||
            a->realtime != b->realtime || !same_set(a->realtime_vcpus, b->realtime_vcpus) ||
            a->guest_threads != b->guest_threads || a->guest_socket_vcpus != b->guest_socket_vcpus ||
            !same_set(a->emulator_cpus, b->emulator_cpus) || !a->vcpu_ids != !b->vcpu_ids ||
            (a->vcpu_ids && memcmp(a->vcpu_ids, b->vcpu_ids, sizeof(unsigned) * a->vcpus) != 0))
                return false;
        for (unsigned i = 0; i < a->ncells; i++)
                if (a->cells[i].id != b->cells[i].id || a->cells[i].memory != b->cells[i].memory ||
                    !same_set(a->cells[i].vcpus, b->cells[i].vcpus) ||
                    !same_distances(&a->cells[i], &b->cells[i]) ||
                    a->cells[i].ordinary != b->cells[i].ordinary)
                        return false;
        if (!same_set(a->device_nodes, b->device_nodes) || !same_set(a->device_sits_on, b->device_sits_on) ||
            !same_set(a->device_nearest, b->device_nearest) || !same_set(a->cache_cpus, b->cache_cpus) ||
            !a->vcpu_cache_cpus != !b->vcpu_cache_cpus ||
            a->caches_outside_cpuset != b->caches_outside_cpuset)
                return false;
        for (unsigned i = 0; a->vcpu_cache_cpus && i < a->vcpus; i++)
                if (!same_set(a->vcpu_cache_cpus[i], b->vcpu_cache_cpus[i]))
                        return false;
        return true;
}

uint64_t placement_request_page_memory(const PlacementRequest *req)
{
        uint64_t bytes = req->hugepage_size ? req->memory : 0;

        for (unsigned c = 0; bytes && c < req->ncells; c++)
                if (req->cells[c].ordinary)
                        bytes -= MIN(bytes, req->cells[c].memory);
        return bytes;
}

uint64_t plan_node_pages(const Plan *p, unsigned n)
{
        if (!p->hugepage_size)
                return 0;
        return p->node_memory[n] - (p->node_ordinary ? MIN(p->node_ordinary[n], p->node_memory[n]) : 0);
}

uint64_t plan_node_ordinary(const Plan *p, unsigned n)
{
        return p->node_memory[n] - plan_node_pages(p, n);
}

uint64_t plan_whole_pages(uint64_t bytes, uint64_t page)
{
        uint64_t part = page ? bytes % page : 0;
        return !part || bytes > UINT64_MAX - (page - part) ? bytes : bytes + (page - part);
}

/* the page size of a cell: hugepage_size, or second for one marked ordinary (0: ordinary memory) */
static uint64_t cell_page(uint64_t hugepage_size, uint64_t second, bool ordinary)
{
        return !hugepage_size ? 0 : ordinary ? second : hugepage_size;
}

uint64_t placement_request_cell_pool_bytes(const PlacementRequest *req, const PlacementCell *c)
{
        return plan_whole_pages(c->memory,
                                cell_page(req->hugepage_size, req->second_page_size, c->ordinary));
}

uint64_t plan_cell_pool_bytes(const Plan *p, const PlanCell *c)
{
        return plan_whole_pages(c->memory, cell_page(p->hugepage_size, p->second_page_size, c->ordinary));
}

/* a + b, or UINT64_MAX when that would not fit */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The plan's bytes on node n of one kind: its pages (second: false), or its cells marked ordinary. */
static uint64_t node_kind(const Plan *p, unsigned n, bool second)
{
        return second ? plan_node_ordinary(p, n) : plan_node_pages(p, n);
}

uint64_t plan_node_whole_cells(const Plan *p, unsigned n, bool second, bool rounded)
{
        uint64_t page = second ? p->second_page_size : p->hugepage_size, bytes = 0, pages = 0;

        if (!page || !p->hugepage_size || n >= p->nnode_memory)
                return 0;
        for (unsigned c = 0; c < p->ncells; c++) {
                const PlanCell *cell = &p->cells[c];
                if (cell->ordinary != second || !cell->memory || cpuset_count(cell->counted_nodes) != 1 ||
                    !cpuset_has(cell->counted_nodes, n))
                        continue;
                bytes = add_sat(bytes, cell->memory);
                pages = add_sat(pages, plan_whole_pages(cell->memory, page));
        }
        /* counted short of them there (what did not fit went elsewhere): not known cell by cell */
        if (bytes > node_kind(p, n, second))
                return 0;
        return rounded ? pages : bytes;
}

uint64_t plan_node_pool_bytes(const Plan *p, unsigned n, bool second)
{
        uint64_t page = second ? p->second_page_size : p->hugepage_size;
        uint64_t rounded = 0, backends = 0, extra, own, most_rest = 0;
        int most = -1;

        if (!page || !p->hugepage_size)
                return 0;
        /* the cells counted whole on one node in their own whole pages there, the rest of each node's share
         * rounded up to whole pages; most: the node counting the most of that rest (else of the kind) */
        for (unsigned i = 0; i < p->nnode_memory; i++) {
                uint64_t bytes = node_kind(p, i, second), whole = plan_node_whole_cells(p, i, second, false);
                uint64_t rest = bytes - whole;
                if (bytes && (most < 0 || rest > most_rest ||
                              (rest == most_rest && bytes > node_kind(p, (unsigned)most, second)))) {
                        most = (int)i;
                        most_rest = rest;
                }
                rounded = add_sat(rounded, add_sat(plan_node_whole_cells(p, i, second, true),
                                                   plan_whole_pages(rest, page)));
        }
        if (most < 0)
                return 0;
        /* QEMU backs each guest cell apart (ram-node<id>), each in whole pages of its own: the pages those
         * not counted whole on one node take beyond the nodes' whole pages are counted on the node
         * counting the most of them */
        for (unsigned c = 0; c < p->ncells; c++)
                if (p->cells[c].ordinary == second)
                        backends = add_sat(backends, plan_whole_pages(p->cells[c].memory, page));
        extra =
            backends > rounded && rounded != UINT64_MAX && backends != UINT64_MAX ? backends - rounded : 0;
        own = add_sat(
            plan_node_whole_cells(p, n, second, true),
            plan_whole_pages(node_kind(p, n, second) - plan_node_whole_cells(p, n, second, false), page));
        return (int)n != most ? own : add_sat(own, extra);
}

void plan_copy_memory(Plan *dst, const Plan *src)
{
        memcpy(dst->node_memory, src->node_memory,
               sizeof(uint64_t) * MIN(dst->nnode_memory, src->nnode_memory));
        g_clear_pointer(&dst->node_ordinary, g_free);
        dst->second_page_size = src->second_page_size;
        if (src->node_ordinary && dst->nnode_memory == src->nnode_memory)
                dst->node_ordinary =
                    g_memdup2(src->node_ordinary, sizeof(uint64_t) * MAX(src->nnode_memory, 1));
}

const char *plan_second_kind(uint64_t second_page_size, char *buf, size_t len)
{
        char a[32];

        if (!second_page_size)
                g_strlcpy(buf, "of ordinary memory", len);
        else
                g_snprintf(buf, len, "in %s hugepages", size_format(second_page_size, a, sizeof(a)));
        return buf;
}

void plan_set_ordinary(Plan *p)
{
        bool any = false;

        for (unsigned c = 0; c < p->ncells; c++)
                any = any || p->cells[c].ordinary;
        if (!p->hugepage_size || !any)
                g_clear_pointer(&p->node_ordinary, g_free);
        else if (!p->node_ordinary)
                p->node_ordinary = g_new0(uint64_t, MAX(p->nnode_memory, 1));
}

bool placement_request_allows_cpu(const PlacementRequest *req, unsigned os)
{
        return !req || ((!req->allowed_cpus || cpuset_has(req->allowed_cpus, os)) &&
                        (!req->cache_cpus || cpuset_has(req->cache_cpus, os)));
}
