/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ledger.h"

#include <errno.h>
#include <string.h>

/* Bytes held, summed without wrapping: hand-bound domains of 4 EiB (the test driver runs them) add up
 * past 2^64, and a wrapped sum would read as a nearly empty node. Every release takes back exactly what
 * its commit added; the sum reads as UINT64_MAX while it is over that. */
typedef struct ByteSum {
        uint64_t low;
        uint64_t carries; /* times low wrapped */
} ByteSum;

static void byte_sum_add(ByteSum *s, uint64_t bytes, int sign)
{
        if (sign > 0) {
                s->low += bytes;
                s->carries += s->low < bytes;
        } else {
                s->carries -= s->low < bytes;
                s->low -= bytes;
        }
}

static uint64_t byte_sum_get(const ByteSum *s)
{
        return s->carries ? UINT64_MAX : s->low;
}

static bool byte_sum_is_zero(const ByteSum *s)
{
        return !s->low && !s->carries;
}

struct Ledger {
        const Topology *topology;
        unsigned *pu_load;       /* [npus] */
        unsigned *core_load;     /* [ncores] */
        unsigned *core_realtime; /* [ncores] realtime vCPUs counted on the core */
        unsigned *core_adopted;  /* [ncores] vCPUs of adopted plans (pinned by hand) counted on the core */
        unsigned *core_whole; /* [ncores] vCPUs placed under explicit (a core to themselves) on the core */
        unsigned *pu_held;    /* [npus] CPUs held for host-side threads (Plan.held_pus), no vCPU */
        unsigned *core_held;  /* [ncores] */
        unsigned
            *core_threads; /* [ncores] domains whose QEMU threads placementd pins there, no vCPU of theirs */
        unsigned *core_domains; /* [ncores] domains with a vCPU counted on the core */
        ByteSum *node_memory;   /* [nnodes] */
        GHashTable *domains;    /* key -> Plan*: its own */
        const Ledger *base;     /* ledger_new_over(): domains of base not in released are held too */
        GHashTable *released;   /* keys of base's domains released here; NULL without base */
        ByteSum **hugepages;    /* [nnodes][node's nhugepages] bytes held in each pool, apart from memory */
        unsigned nnodes;        /* of hugepages[]: ledger_free() may run after the topology is gone */
};

Ledger *ledger_new(const Topology *t)
{
        Ledger *l = g_new0(Ledger, 1);

        l->topology = t;
        l->pu_load = g_new0(unsigned, MAX(t->npus, 1));
        l->core_load = g_new0(unsigned, MAX(t->ncores, 1));
        l->core_realtime = g_new0(unsigned, MAX(t->ncores, 1));
        l->core_adopted = g_new0(unsigned, MAX(t->ncores, 1));
        l->core_whole = g_new0(unsigned, MAX(t->ncores, 1));
        l->pu_held = g_new0(unsigned, MAX(t->npus, 1));
        l->core_held = g_new0(unsigned, MAX(t->ncores, 1));
        l->core_threads = g_new0(unsigned, MAX(t->ncores, 1));
        l->core_domains = g_new0(unsigned, MAX(t->ncores, 1));
        l->node_memory = g_new0(ByteSum, MAX(t->nnodes, 1));
        l->domains = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)plan_free);
        l->nnodes = t->nnodes;
        l->hugepages = g_new0(ByteSum *, MAX(t->nnodes, 1));
        for (unsigned n = 0; n < t->nnodes; n++)
                l->hugepages[n] = g_new0(ByteSum, MAX(t->nodes[n].nhugepages, 1));
        return l;
}

Ledger *ledger_new_over(const Ledger *base)
{
        const Topology *t = base->topology;
        Ledger *l = ledger_new(t);

        l->base = base;
        l->released = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        memcpy(l->pu_load, base->pu_load, sizeof(*l->pu_load) * t->npus);
        memcpy(l->core_load, base->core_load, sizeof(*l->core_load) * t->ncores);
        memcpy(l->core_realtime, base->core_realtime, sizeof(*l->core_realtime) * t->ncores);
        memcpy(l->core_adopted, base->core_adopted, sizeof(*l->core_adopted) * t->ncores);
        memcpy(l->core_whole, base->core_whole, sizeof(*l->core_whole) * t->ncores);
        memcpy(l->pu_held, base->pu_held, sizeof(*l->pu_held) * t->npus);
        memcpy(l->core_held, base->core_held, sizeof(*l->core_held) * t->ncores);
        memcpy(l->core_threads, base->core_threads, sizeof(*l->core_threads) * t->ncores);
        memcpy(l->core_domains, base->core_domains, sizeof(*l->core_domains) * t->ncores);
        memcpy(l->node_memory, base->node_memory, sizeof(*l->node_memory) * t->nnodes);
        for (unsigned n = 0; n < t->nnodes; n++)
                memcpy(l->hugepages[n], base->hugepages[n], sizeof(**l->hugepages) * t->nodes[n].nhugepages);
        return l;
}

void ledger_free(Ledger *l)
{
        if (!l)
                return;
        g_hash_table_destroy(l->domains);
        if (l->released)
                g_hash_table_destroy(l->released);
        g_free(l->pu_load);
        g_free(l->core_load);
        g_free(l->core_realtime);
        g_free(l->core_adopted);
        g_free(l->core_whole);
        g_free(l->pu_held);
        g_free(l->core_held);
        g_free(l->core_threads);
        g_free(l->core_domains);
        g_free(l->node_memory);
        for (unsigned n = 0; n < l->nnodes; n++)
                g_free(l->hugepages[n]);
        g_free(l->hugepages);
        g_free(l);
}

const Topology *ledger_topology(const Ledger *l)
{
        return l->topology;
}

/* Index of node's pool of pages of size, or -1. */
static int pool_index(const Topology *t, unsigned node, uint64_t size)
{
        for (unsigned i = 0; i < t->nodes[node].nhugepages; i++)
                if (t->nodes[node].hugepages[i].size == size)
                        return (int)i;
        return -1;
}

static bool plan_fits(const Ledger *l, const Plan *p)
{
        if (p->nnode_memory != l->topology->nnodes)
                return false;
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= (int)l->topology->npus)
                        return false;
        CPUSET_FOREACH (pu, p->held_pus)
                if ((unsigned)pu >= l->topology->npus)
                        return false;
        return true;
}

static void account(Ledger *l, const Plan *p, int sign)
{
        const Topology *t = l->topology;
        g_autoptr(CpuSet) held = plan_held_thread_pus(t, p);
        g_autoptr(CpuSet) realtime_threads = plan_realtime_thread_pus(t, p);
        g_autoptr(CpuSet) realtime_cores = cpuset_new();
        g_autoptr(CpuSet) threads = cpuset_new();
        g_autoptr(CpuSet) thread_cores = cpuset_new();
        g_autoptr(CpuSet) vcpu_cores = cpuset_new();

        for (unsigned i = 0; i < p->nvcpus; i++) {
                int pu = p->vcpu_pu[i];
                if (pu < 0)
                        continue;
                cpuset_add(vcpu_cores, t->pus[pu].core);
                l->pu_load[pu] += (unsigned)sign;
                l->core_load[t->pus[pu].core] += (unsigned)sign;
                if (plan_vcpu_realtime(p, i))
                        l->core_realtime[t->pus[pu].core] += (unsigned)sign;
                if (p->result == PLAN_ADOPTED)
                        l->core_adopted[t->pus[pu].core] += (unsigned)sign;
                if (p->result == PLAN_PLACED && p->policy == POLICY_EXPLICIT)
                        l->core_whole[t->pus[pu].core] += (unsigned)sign;
        }
        CPUSET_FOREACH (c, vcpu_cores)
                l->core_domains[c] += (unsigned)sign;
        /* the CPUs held for its QEMU threads, as every view shows them (plan_held_thread_pus()); the
         * cores of those that run realtime count as a realtime vCPU's */
        CPUSET_FOREACH (pu, held) {
                l->pu_held[pu] += (unsigned)sign;
                l->core_held[t->pus[pu].core] += (unsigned)sign;
        }
        CPUSET_FOREACH (pu, realtime_threads)
                cpuset_add(realtime_cores, t->pus[pu].core);
        CPUSET_FOREACH (c, realtime_cores)
                l->core_realtime[c] += (unsigned)sign;
        plan_thread_pus(t, p, false, threads);
        CPUSET_FOREACH (pu, threads)
                cpuset_add(thread_cores, t->pus[pu].core);
        CPUSET_FOREACH (c, thread_cores)
                l->core_threads[c] += (unsigned)sign;
        for (unsigned n = 0; n < t->nnodes; n++) {
                uint64_t pages = plan_node_pool_bytes(p, n, false), ordinary = plan_node_ordinary(p, n);
                int pool = pages ? pool_index(t, n, p->hugepage_size) : -1;
                /* hugepage memory is held in the pool of its size, in the whole pages QEMU takes for it
                 * (plan_node_pool_bytes()); a node without one holds none of it (bound there, the guest's
                 * memory cannot all be backed: the plan's reason says so). A guest cell no <page> backs
                 * holds ordinary memory beside it */
                if (pool >= 0)
                        byte_sum_add(&l->hugepages[n][pool], pages, sign);
                /* or, for cells of a second page size, hugepages of that size */
                if (ordinary && p->second_page_size) {
                        int second = pool_index(t, n, p->second_page_size);
                        if (second >= 0)
                                byte_sum_add(&l->hugepages[n][second], plan_node_pool_bytes(p, n, true),
                                             sign);
                } else if (ordinary) {
                        byte_sum_add(&l->node_memory[n], ordinary, sign);
                }
        }
}

/* The plan of base's domain key while this ledger holds it, else NULL. */
static const Plan *from_base(const Ledger *l, const char *key)
{
        return l->base && !g_hash_table_contains(l->released, key) ? ledger_lookup(l->base, key) : NULL;
}

int ledger_commit(Ledger *l, const char *key, Plan *plan)
{
        if (g_hash_table_contains(l->domains, key) || from_base(l, key)) {
                plan_free(plan);
                return -EEXIST;
        }
        if (!plan_fits(l, plan)) {
                plan_free(plan);
                return -EINVAL;
        }
        account(l, plan, +1);
        g_hash_table_insert(l->domains, g_strdup(key), plan);
        return 0;
}

int ledger_release(Ledger *l, const char *key)
{
        Plan *p = g_hash_table_lookup(l->domains, key);
        const Plan *bp;

        if (p) {
                account(l, p, -1);
                g_hash_table_remove(l->domains, key);
                return 0;
        }
        if (!(bp = from_base(l, key)))
                return -ENOENT;
        account(l, bp, -1);
        g_hash_table_add(l->released, g_strdup(key));
        return 0;
}

const Plan *ledger_lookup(const Ledger *l, const char *key)
{
        const Plan *p = g_hash_table_lookup(l->domains, key);
        return p ? p : from_base(l, key);
}

unsigned ledger_count(const Ledger *l)
{
        unsigned n = g_hash_table_size(l->domains);
        return l->base ? n + ledger_count(l->base) - g_hash_table_size(l->released) : n;
}

typedef struct ForeachBase {
        const Ledger *l;
        void (*fn)(const char *key, const Plan *p, void *userdata);
        void *userdata;
} ForeachBase;

/* base's domains this ledger still holds from it */
static void foreach_base(const char *key, const Plan *p, void *userdata)
{
        const ForeachBase *f = userdata;

        if (!g_hash_table_contains(f->l->released, key) && !g_hash_table_contains(f->l->domains, key))
                f->fn(key, p, f->userdata);
}

void ledger_foreach(const Ledger *l, void (*fn)(const char *key, const Plan *p, void *userdata),
                    void *userdata)
{
        GHashTableIter it;
        gpointer k, v;

        g_hash_table_iter_init(&it, l->domains);
        while (g_hash_table_iter_next(&it, &k, &v))
                fn(k, v, userdata);
        if (l->base)
                ledger_foreach(l->base, foreach_base, &(ForeachBase){l, fn, userdata});
}

static void add_key(const char *key, const Plan *p, void *userdata)
{
        (void)p;
        g_ptr_array_add(userdata, (gpointer)key);
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *ledger_keys(const Ledger *l)
{
        GPtrArray *keys = g_ptr_array_new();

        ledger_foreach(l, add_key, keys);
        g_ptr_array_sort(keys, compare_strings);
        return keys;
}

unsigned ledger_pu_load(const Ledger *l, unsigned pu)
{
        return l->pu_load[pu];
}

unsigned ledger_core_realtime(const Ledger *l, unsigned core)
{
        return l->core_realtime[core];
}

unsigned ledger_core_adopted(const Ledger *l, unsigned core)
{
        return l->core_adopted[core];
}

unsigned ledger_core_whole(const Ledger *l, unsigned core)
{
        return l->core_whole[core];
}

unsigned ledger_core_load(const Ledger *l, unsigned core)
{
        return l->core_load[core];
}

bool ledger_core_free(const Ledger *l, unsigned core)
{
        return l->core_load[core] == 0 && l->core_held[core] == 0;
}

unsigned ledger_pu_held(const Ledger *l, unsigned pu)
{
        return l->pu_held[pu];
}

unsigned ledger_core_held(const Ledger *l, unsigned core)
{
        return l->core_held[core];
}

unsigned ledger_core_threads(const Ledger *l, unsigned core)
{
        return l->core_threads[core];
}

unsigned ledger_core_domains(const Ledger *l, unsigned core)
{
        return l->core_domains[core];
}

uint64_t ledger_node_memory(const Ledger *l, unsigned node)
{
        return byte_sum_get(&l->node_memory[node]);
}

uint64_t ledger_node_hugepages(const Ledger *l, unsigned node, uint64_t size)
{
        int i = pool_index(l->topology, node, size);
        return i < 0 ? 0 : byte_sum_get(&l->hugepages[node][i]);
}

uint64_t ledger_node_free_hugepages(const Ledger *l, unsigned node, uint64_t size)
{
        uint64_t pool = topology_node_hugepage_bytes(l->topology, node, size);
        uint64_t held = ledger_node_hugepages(l, node, size);
        return pool > held ? pool - held : 0;
}

bool ledger_is_empty(const Ledger *l)
{
        for (unsigned i = 0; i < l->topology->npus; i++)
                if (l->pu_load[i] || l->pu_held[i])
                        return false;
        for (unsigned i = 0; i < l->topology->nnodes; i++)
                if (!byte_sum_is_zero(&l->node_memory[i]))
                        return false;
        for (unsigned n = 0; n < l->topology->nnodes; n++)
                for (unsigned i = 0; i < l->topology->nodes[n].nhugepages; i++)
                        if (!byte_sum_is_zero(&l->hugepages[n][i]))
                                return false;
        return true;
}
