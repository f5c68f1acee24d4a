/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One heal pass: which domains to move onto what freed up, each move worth its re-pin (heal.h). */
#include "heal.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "load.h"
#include "policy.h"
#include "ret-error.h"

/* Cores less load beside a domain's contending busy vCPUs that make a move better for it when as many
 * contend (own_better()): a tenth of a core, so that a move is never made for a rounding difference. */
#define HEAL_MIN_BESIDE_GAIN 0.1
/* Cores of work lost to sharing (HealScore.lost) that a move for fewer contending busy vCPUs must win
 * back: splitting a sum of host-side load that crossed the busy threshold lowers the count, not the loss. */
#define HEAL_MIN_LOST_GAIN 0.05
/* Cores of work lost to sharing that a move must win back when as many busy vCPUs contend and share a
 * core after it as before: four busy vCPUs on one core's two threads made two pairs (2.8 cores lost, then
 * 1.6). Half a core: a thread more than its core runs at once costs a core or more. */
#define HEAL_STACKED_LOST_GAIN 0.5

/* The host as the pass sees it: a scratch ledger the moves are made on, and what is busy where. */
typedef struct HealHost {
        const Topology *t;
        const PlacementParams *params; /* which cores vCPUs may use */
        Ledger *l;
        double *pu_busy;       /* [npus] busy fractions of vCPUs and host-side shares (the engine's input) */
        unsigned *core_nb;     /* [ncores] busy vCPUs counted on the core */
        double *core_hb;       /* [ncores] host-side load counted on the core */
        uint32_t min_distance; /* the least node distance of the topology (its own nodes' included) */
        unsigned *own;         /* [ncores] scratch for max_contended_gain(), all 0 between calls */
} HealHost;

/* The host-wide measures a move must not worsen (see heal.h). */
typedef struct HealScore {
        unsigned contended; /* busy vCPUs on a core with another busy vCPU or busy host-side threads */
        unsigned shared;    /* vCPUs on a core with another vCPU */
        double host_excess; /* host-side load beside another busy thread, in cores (core_excess()) */
        double lost; /* cores of work lost to busy threads sharing cores (load_core_lost_with_host()) */
} HealScore;

void heal_move_free(HealMove *m)
{
        if (!m)
                return;
        g_free(m->key);
        g_free(m->name);
        plan_free(m->plan);
        g_free(m->why);
        g_free(m);
}

static double vcpu_busy(const PlacementRequest *req, unsigned i)
{
        return req && req->vcpu_busy && i < req->vcpus ? req->vcpu_busy[i] : 1.0;
}

/* Adds (sign +1) or removes (-1) what plan p of a domain asking req keeps busy. req NULL: all busy. */
static void account(HealHost *h, const Plan *p, const PlacementRequest *req, int sign)
{
        const Topology *t = h->t;
        bool host_known = req && req->vcpu_busy && req->host_busy > 0 && !cpuset_is_empty(p->emulator_pin);

        for (unsigned i = 0; i < p->nvcpus; i++) {
                int pu = p->vcpu_pu[i];
                double b = vcpu_busy(req, i);
                if (pu < 0)
                        continue;
                h->pu_busy[pu] += sign * b;
                if (b >= LOAD_BUSY_THRESHOLD)
                        h->core_nb[t->pus[pu].core] += (unsigned)sign;
        }
        if (!host_known)
                return;
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                double share = req->host_busy / cpuset_count(p->emulator_pin);
                if (pu < 0)
                        continue;
                h->pu_busy[pu] += sign * share;
                h->core_hb[t->pus[pu].core] += sign * share;
        }
}

static bool core_contended(const HealHost *h, unsigned c)
{
        return h->core_nb[c] >= 2 || (h->core_nb[c] >= 1 && h->core_hb[c] >= LOAD_BUSY_THRESHOLD);
}

/*
 * The host-side load of core c that runs beside another busy thread, in cores: all of it on a core with a
 * busy vCPU, what is over one thread's worth on a core without (a quarter of a core beside each of four
 * busy vCPUs is a core of it, as one busy thread beside one of them would be; 1.4 cores of it alone on a
 * core is 0.4). What it costs grows with it (sim/contention.h), however thin it is spread.
 */
static double core_excess(const HealHost *h, unsigned c)
{
        return h->core_nb[c] ? h->core_hb[c] : MAX(0.0, h->core_hb[c] - 1.0);
}

/* The score of the cores in cores (a set of core indexes). */
static HealScore score_cores(const HealHost *h, const CpuSet *cores)
{
        HealScore s = {0};

        CPUSET_FOREACH (c, cores) {
                unsigned load = ledger_core_load(h->l, (unsigned)c);
                if (core_contended(h, (unsigned)c))
                        s.contended += h->core_nb[c];
                if (load >= 2)
                        s.shared += load;
                s.host_excess += core_excess(h, (unsigned)c);
                s.lost += load_core_lost_with_host(h->core_nb[c], h->core_hb[c], h->t->cores[c].npus,
                                                   LOAD_SIBLING_LOSS);
        }
        return s;
}

/* Busy vCPUs of plan p (domain asking req) that contend, as h stands with p counted. */
static unsigned own_contended(const HealHost *h, const Plan *p, const PlacementRequest *req)
{
        unsigned n = 0;

        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && vcpu_busy(req, i) >= LOAD_BUSY_THRESHOLD &&
                    core_contended(h, h->t->pus[p->vcpu_pu[i]].core))
                        n++;
        return n;
}

/* The load beside p's busy vCPUs that contend (as h stands with p counted): on each one's core, what its
 * other threads run. Two busy vCPUs paired count each other's load; one beside host-side threads theirs. */
static double own_beside(const HealHost *h, const Plan *p, const PlacementRequest *req)
{
        const Topology *t = h->t;
        double sum = 0;

        for (unsigned i = 0; i < p->nvcpus; i++) {
                const TopoCore *core;
                if (p->vcpu_pu[i] < 0 || vcpu_busy(req, i) < LOAD_BUSY_THRESHOLD ||
                    !core_contended(h, t->pus[p->vcpu_pu[i]].core))
                        continue;
                core = &t->cores[t->pus[p->vcpu_pu[i]].core];
                for (unsigned q = core->pu_first; q < core->pu_first + core->npus; q++)
                        sum += h->pu_busy[q];
                sum -= vcpu_busy(req, i);
        }
        return sum;
}

static void add_cores(const Topology *t, const Plan *p, CpuSet *cores)
{
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0)
                        cpuset_add(cores, t->pus[p->vcpu_pu[i]].core);
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0)
                        cpuset_add(cores, t->pus[pu].core);
        }
}

/* The host-side load beside busy threads (core_excess()) on the cores p runs on, its vCPUs' and its
 * emulator pin's, as h stands with p counted: its own and other domains'. */
static double own_host_excess(const HealHost *h, const Plan *p)
{
        g_autoptr(CpuSet) cores = cpuset_new();
        double sum = 0;

        add_cores(h->t, p, cores);
        CPUSET_FOREACH (c, cores)
                sum += core_excess(h, (unsigned)c);
        return sum;
}

static double mean_distance(const Topology *t, const CpuSet *nodes)
{
        double mean;

        topology_nodes_distance(t, nodes, NULL, &mean);
        return mean;
}

/* The mean distance from p's vCPUs to the memory memory_of counts (each node weighted by its bytes);
 * 0 when it counts none. */
static double vcpu_memory_distance(const Topology *t, const Plan *p, const Plan *memory_of)
{
        uint64_t total = 0;
        double sum = 0;
        unsigned n = 0;

        for (unsigned m = 0; m < memory_of->nnode_memory; m++)
                total += memory_of->node_memory[m];
        if (!total)
                return 0;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned node;
                if (p->vcpu_pu[i] < 0)
                        continue;
                node = t->cores[t->pus[p->vcpu_pu[i]].core].node;
                for (unsigned m = 0; m < memory_of->nnode_memory; m++)
                        sum += (double)topology_distance(t, node, m) * (double)memory_of->node_memory[m] /
                               (double)total;
                n++;
        }
        return n ? sum / n : 0;
}

/*
 * A candidate that leaves the binding as it is (keep_memory) is counted where the memory is, not as a
 * fresh plan would count it near its vCPUs: re-pinning moves no page, so what each node holds of it stays.
 * Only while current counts it of the same size, all of it on nodes the request binds (a binding changed
 * live since, which moves the pages, or a resize: counted afresh).
 */
static void count_memory_where_it_is(const Topology *t, const PlacementRequest *req, const Plan *current,
                                     Plan *candidate)
{
        g_autoptr(CpuSet) was = plan_memory_nodes(current);

        if (!candidate->keep_memory || candidate->hugepage_size != current->hugepage_size ||
            candidate->second_page_size != current->second_page_size ||
            candidate->nnode_memory != current->nnode_memory || candidate->memory != current->memory ||
            cpuset_is_empty(was) || !req->memory_nodes)
                return;
        CPUSET_FOREACH (n, was)
                if ((unsigned)n >= t->nnodes || !cpuset_has(req->memory_nodes, t->nodes[n].os_index))
                        return;
        plan_copy_memory(candidate, current);
}

/* Bytes of current's memory that candidate puts on other nodes. */
static uint64_t memory_moved(const Plan *current, const Plan *candidate)
{
        uint64_t moved = 0;

        if (candidate->keep_memory)
                return 0;
        for (unsigned n = 0; n < current->nnode_memory && n < candidate->nnode_memory; n++)
                if (current->node_memory[n] > candidate->node_memory[n])
                        moved += current->node_memory[n] - candidate->node_memory[n];
        return moved;
}

typedef struct HostFill {
        HealHost *h;
        GHashTable *by_key;
} HostFill;

static void fill_one(const char *key, const Plan *p, void *userdata)
{
        const HostFill *f = userdata;
        const HealDomain *hd = g_hash_table_lookup(f->by_key, key);

        account(f->h, p, hd ? &hd->request : NULL, +1);
}

static HealHost *heal_host_new(const Topology *t, const Ledger *l, const PlacementParams *params,
                               GHashTable *by_key)
{
        HealHost *h = g_new0(HealHost, 1);

        h->t = t;
        h->params = params;
        h->l = ledger_new_over(l); /* the moves are tried on it, never on l */
        h->pu_busy = g_new0(double, MAX(t->npus, 1));
        h->core_nb = g_new0(unsigned, MAX(t->ncores, 1));
        h->core_hb = g_new0(double, MAX(t->ncores, 1));
        h->own = g_new0(unsigned, MAX(t->ncores, 1));
        ledger_foreach(l, fill_one, &(HostFill){h, by_key});
        h->min_distance = UINT32_MAX;
        for (unsigned a = 0; a < t->nnodes; a++)
                for (unsigned b = 0; b < t->nnodes; b++)
                        h->min_distance = MIN(h->min_distance, topology_distance(t, a, b));
        return h;
}

static void heal_host_free(HealHost *h)
{
        if (!h)
                return;
        ledger_free(h->l);
        g_free(h->pu_busy);
        g_free(h->core_nb);
        g_free(h->core_hb);
        g_free(h->own);
        g_free(h);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HealHost, heal_host_free)

/* Whether a vCPU of p shares its core while a core vCPUs may use holds none (sharing that arose when cores
 * were short). */
static bool shares_while_free(const HealHost *h, const Plan *p)
{
        return heal_shares_while_free(h->t, h->l, h->params, p);
}

/* Whether a domain with plan p could gain from a move at all: it contends or spans nodes, or (in a pass
 * that undoes sharing) shares a core while another is free. */
static bool may_gain(const HealHost *h, const HealParams *hp, const Plan *p, const PlacementRequest *req)
{
        if (p->result != PLAN_PLACED && p->result != PLAN_OVERCOMMITTED)
                return false;
        return own_contended(h, p, req) > 0 || own_host_excess(h, p) >= LOAD_HOST_REPIN_GAIN ||
               load_own_host_over(h->t, p, req->vcpu_busy, req->host_busy) >= LOAD_HOST_REPIN_GAIN ||
               cpuset_count(p->nodes) > 1 || (hp->undo_sharing && shares_while_free(h, p));
}

/* Whether a core of p's emulator pin runs more than one thread's worth by LOAD_HOST_REPIN_GAIN in all, by
 * pu_busy (which counts p's own share there and other domains' too) less p's own vCPUs there: host-side
 * threads of several domains that make a busy pair together, though no share alone is over (the pass's
 * own_host_excess() sees them). Other domains' vCPUs there count too: an upper bound, as a cheap test may
 * be. */
static bool emulator_core_over(const Topology *t, const Plan *p, const double *vcpu_busy, double host_busy,
                               const double *pu_busy)
{
        g_autoptr(CpuSet) cores = NULL;

        if (!pu_busy || !vcpu_busy || !(host_busy > 0) || cpuset_is_empty(p->emulator_pin))
                return false; /* without a load of its own to move, moving its threads gains nothing */
        cores = cpuset_new();
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0)
                        cpuset_add(cores, t->pus[pu].core);
        }
        CPUSET_FOREACH (c, cores) {
                const TopoCore *core = &t->cores[c];
                double sum = 0;
                for (unsigned q = core->pu_first; q < core->pu_first + core->npus; q++)
                        sum += pu_busy[q];
                for (unsigned i = 0; i < p->nvcpus; i++)
                        if (p->vcpu_pu[i] >= 0 && t->pus[p->vcpu_pu[i]].core == (unsigned)c)
                                sum -= vcpu_busy[i];
                if (sum >= 1.0 + LOAD_HOST_REPIN_GAIN - 1e-9)
                        return true;
        }
        return false;
}

bool heal_may_gain(const Topology *t, const Ledger *l, const Plan *p, const double *vcpu_busy,
                   double host_busy, const double *pu_busy)
{
        if (p->result != PLAN_PLACED && p->result != PLAN_OVERCOMMITTED)
                return false;
        if (cpuset_count(p->nodes) > 1)
                return true;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                const TopoCore *core;
                double b = vcpu_busy ? vcpu_busy[i] : 1.0, others = -b;
                if (p->vcpu_pu[i] < 0)
                        continue;
                core = &t->cores[t->pus[p->vcpu_pu[i]].core];
                if (ledger_core_load(l, t->pus[p->vcpu_pu[i]].core) >= 2)
                        return true;
                if (!pu_busy || b < LOAD_BUSY_THRESHOLD)
                        continue;
                for (unsigned pu = core->pu_first; pu < core->pu_first + core->npus; pu++)
                        others += pu_busy[pu];
                if (others >= LOAD_BUSY_THRESHOLD)
                        return true; /* busy host-side threads beside it */
        }
        if (load_own_host_beside(t, p, vcpu_busy, host_busy, pu_busy, true) >= LOAD_HOST_REPIN_GAIN)
                return true; /* its host-side load beside busy threads, however thin */
        /* more than a core's worth of its host-side load on one core, or of its and others' together */
        return load_own_host_over(t, p, vcpu_busy, host_busy) >= LOAD_HOST_REPIN_GAIN ||
               emulator_core_over(t, p, vcpu_busy, host_busy, pu_busy);
}

bool heal_shares_while_free(const Topology *t, const Ledger *l, const PlacementParams *params, const Plan *p)
{
        bool shares = false;

        for (unsigned i = 0; i < p->nvcpus && !shares; i++)
                shares = p->vcpu_pu[i] >= 0 && ledger_core_load(l, t->pus[p->vcpu_pu[i]].core) >= 2;
        for (unsigned c = 0; shares && c < t->ncores; c++) {
                const TopoCore *core = &t->cores[c];
                bool usable = ledger_core_free(l, c) && !core->host_thread;
                for (unsigned pu = core->pu_first; usable && pu < core->pu_first + core->npus; pu++)
                        usable = !policy_keeps_pu(t, params, pu) &&
                                 !(params->unavailable_cpus &&
                                   cpuset_has(params->unavailable_cpus, t->pus[pu].os_index));
                if (usable)
                        return true;
        }
        return false;
}

double heal_moved_look_again(const Topology *t, const Ledger *l, LoadLookup lookup, void *userdata,
                             const char *const *keys, const double *until, unsigned n)
{
        g_autofree double *pu_busy = lookup && n ? load_pu_busy(l, lookup, userdata) : NULL;
        double at = INFINITY;

        for (unsigned i = 0; i < n; i++) {
                const Plan *p = ledger_lookup(l, keys[i]);
                const DomainLoad *dl = lookup ? lookup(keys[i], userdata) : NULL;
                bool measured;
                if (!p || !(until[i] < at))
                        continue;
                measured = dl && dl->nvcpus == p->nvcpus;
                if (heal_may_gain(t, l, p, measured ? domain_load_vcpu_busy(dl) : NULL,
                                  measured ? dl->host_busy : 0, pu_busy))
                        at = until[i];
        }
        return at;
}

/* What a move does for the domain itself: its busy vCPUs and busy host-side threads that contend, and
 * the load beside its busy vCPUs that contend. */
typedef struct HealOwn {
        unsigned contended;
        double beside;
        double host_excess; /* own_host_excess() */
} HealOwn;

static HealOwn own_score(const HealHost *h, const Plan *p, const PlacementRequest *req)
{
        return (HealOwn){.contended = own_contended(h, p, req),
                         .beside = own_beside(h, p, req),
                         .host_excess = own_host_excess(h, p)};
}

/* Whether the domain is better off: fewer of its busy vCPUs contend, or as many with at least
 * HEAL_MIN_BESIDE_GAIN cores less load beside its busy vCPUs that contend (a busy neighbour traded for
 * host-side threads under half busy each, which heal still counts as contending when they are half busy
 * together), or, with no more of that, at least host_gain cores less host-side load beside busy threads
 * on the cores it runs on (own_host_excess(): spread thin over its busy vCPUs' siblings, none of it half
 * busy anywhere, or more than a core's worth on one core of its own). */
static bool own_better(HealOwn before, HealOwn after, double host_gain)
{
        if (after.contended != before.contended)
                return after.contended < before.contended;
        return after.beside + HEAL_MIN_BESIDE_GAIN <= before.beside + 1e-9 ||
               (after.beside <= before.beside + 1e-9 &&
                after.host_excess + host_gain <= before.host_excess + 1e-9);
}

/* Whether cand moves nothing but the host-side threads of cur: the same vCPU pins, nodes and memory. */
static bool threads_only(const Plan *cur, const Plan *cand)
{
        if (cand->nvcpus != cur->nvcpus || !cpuset_equal(cand->nodes, cur->nodes) ||
            memory_moved(cur, cand) > 0)
                return false;
        for (unsigned i = 0; i < cur->nvcpus; i++)
                if (cand->vcpu_pu[i] != cur->vcpu_pu[i])
                        return false;
        return true;
}

/* The hysteresis (heal.h): what makes a candidate worth its move, or NULL. */
static char *worth(const Topology *t, const HealParams *hp, const Plan *cur, const Plan *cand,
                   HealScore before, HealScore after, HealOwn own_before, HealOwn own_after,
                   char *improves_why, const char *apart_why, bool busy_shares)
{
        unsigned nodes_old = cpuset_count(cur->nodes), nodes_new = cpuset_count(cand->nodes);
        double dist_old = mean_distance(t, cur->nodes), dist_new = mean_distance(t, cand->nodes);
        /* less of it for a re-pin of the host-side threads alone (load.h) */
        double host_gain = threads_only(cur, cand) ? LOAD_HOST_REPIN_GAIN : LOAD_BUSY_THRESHOLD;
        bool farther;

        if (!improves_why && !own_better(own_before, own_after, host_gain))
                return NULL; /* the domain itself does not improve */
        /* undoing sharing is for vCPUs that share a core however idle: never at the cost of more of the
         * domain's own busy vCPUs contending (two of them stacked on the core they leave another's for) */
        if (hp->undo_sharing && own_after.contended > own_before.contended)
                return NULL;
        /* host-side threads alone moved: busy vCPUs "contend" with them only where their load, summed
         * over a core, crosses half a core; a move that only cuts such a sum in two, as much load beside
         * busy threads as before, gains nothing (two guests' threads would trade places for ever) */
        if (after.lost > before.lost + 1e-9)
                return NULL; /* fewer contending by the count, but more work lost to sharing */
        if (after.contended + hp->min_gain <= before.contended &&
            after.lost + HEAL_MIN_LOST_GAIN <= before.lost &&
            (!threads_only(cur, cand) || after.host_excess + host_gain <= before.host_excess + 1e-9))
                return g_strdup_printf("%u busy vCPU%s contended for a core, now %u%s%s", before.contended,
                                       before.contended == 1 ? "" : "s", after.contended,
                                       improves_why ? "; " : "", improves_why ? improves_why : "");
        if (after.contended != before.contended || after.shared > before.shared || nodes_new > nodes_old)
                return NULL;
        if (after.host_excess + host_gain <= before.host_excess + 1e-9)
                /* floating-point sums may end a hair below zero: "now -0.0" */
                return g_strdup_printf("%.1f cores of host-side load beside busy threads, now %.1f",
                                       MAX(before.host_excess, 0.0), MAX(after.host_excess, 0.0));
        if (after.host_excess > before.host_excess + HEAL_MIN_BESIDE_GAIN)
                return NULL;
        if (after.lost + HEAL_STACKED_LOST_GAIN <= before.lost &&
            after.host_excess <= before.host_excess + 1e-9)
                return g_strdup_printf("%.1f cores of work lost to busy threads sharing cores, now %.1f",
                                       before.lost, after.lost);
        /* from here on no fewer busy vCPUs contend: its vCPUs end farther from their memory (memory that
         * stays where it is, keep_memory, measured where it is) for a busy vCPU of its own that shares a
         * core, or for work won back from sharing, never for an idle guest's sharing alone: one whose bound
         * memory cannot follow ran across the packages from all of it, for good, to leave an idle
         * neighbour's core (once busy there, it contends and moves for that) */
        farther = vcpu_memory_distance(t, cand, cand->keep_memory ? cur : cand) >
                  vcpu_memory_distance(t, cur, cur) + 1e-9;
        if (farther && !busy_shares && after.lost + HEAL_MIN_LOST_GAIN > before.lost)
                return NULL;
        if (hp->undo_sharing && after.shared + hp->min_gain <= before.shared)
                return g_strdup_printf("%u vCPU%s shared a core, now %u", before.shared,
                                       before.shared == 1 ? "" : "s", after.shared);
        /* asked, and as many share a core: its vCPUs leave other domains' cores (four idle vCPUs of two
         * guests on one core's two threads, another core free, made two pairs) */
        if (apart_why)
                return g_strdup(apart_why);
        /* fewer or nearer nodes are worth a move only when its vCPUs end no farther from its memory, and
         * never for more load beside its own busy vCPUs (four busy vCPUs packed on one core to leave a
         * node are as many contending as four paired with others, and run far slower) */
        if (farther || own_after.contended > own_before.contended ||
            own_after.beside > own_before.beside + 1e-9)
                return NULL;
        /* with the memory staying where it is, fewer nodes buy nothing unless the vCPUs end nearer it
         * (four idle vCPUs packed on one core of one node, the memory still on two, ran no nearer and
         * shared that core once busy) */
        if (cand->keep_memory &&
            vcpu_memory_distance(t, cand, cur) + 1e-9 >= vcpu_memory_distance(t, cur, cur))
                return NULL;
        if (nodes_new < nodes_old)
                return policy_fewer_nodes_why(t, cur, cand);
        if (dist_new + hp->min_distance_gain <= dist_old && dist_new + 1e-9 < dist_old)
                return policy_nearer_nodes_why(t, cur, cand);
        return NULL;
}

/* vCPUs of p (counted in l) on a core that also holds another domain's vCPU. Its own vCPUs are counted
 * per core once (a domain's vCPUs against each other: 4096 of them were 16 million steps a call). */
static unsigned shared_with_others(const Topology *t, const Ledger *l, const Plan *p)
{
        g_autofree unsigned *own = g_new0(unsigned, MAX(t->ncores, 1));
        unsigned n = 0;

        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0)
                        own[t->pus[p->vcpu_pu[i]].core]++;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned c;
                if (p->vcpu_pu[i] < 0)
                        continue;
                c = t->pus[p->vcpu_pu[i]].core;
                n += ledger_core_load(l, c) > own[c];
        }
        return n;
}

/* Whether a busy vCPU of p's domain (asking req; load unknown: busy) shares a core with another vCPU. */
static bool busy_shares(const HealHost *h, const Plan *p, const PlacementRequest *req)
{
        const Topology *t = h->t;

        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && vcpu_busy(req, i) >= LOAD_BUSY_THRESHOLD &&
                    ledger_core_load(h->l, t->pus[p->vcpu_pu[i]].core) > 1)
                        return true;
        return false;
}

/* Puts plan `to` in place of `from` for hd on h. */
static void swap_plan(HealHost *h, const HealDomain *hd, const Plan *from, const Plan *to)
{
        ledger_release(h->l, hd->key);
        account(h, from, &hd->request, -1);
        ledger_commit(h->l, hd->key, plan_copy(to));
        account(h, to, &hd->request, +1);
}

/*
 * Judges candidate for hd, whose current plan h holds: when the move is worth it (and fits what is left
 * of the memory budget) returns it, with how many fewer busy vCPUs contend on the host after it in
 * *ret_gain, how many cores less work is lost to sharing in *ret_lost_gain and how many fewer vCPUs share
 * a core in *ret_shared_gain (all over the cores it touches: no other core changes, so they are the
 * host's); else NULL. h is left as it was. asked: the pass was asked for (Rebalance).
 */
static HealMove *judge(HealHost *h, const HealParams *hp, const HealDomain *hd, const Plan *current,
                       const Plan *candidate, uint64_t budget_left, bool asked, int *ret_gain,
                       double *ret_lost_gain, int *ret_shared_gain)
{
        const Topology *t = h->t;
        g_autoptr(CpuSet) cores = cpuset_new();
        g_autofree char *improves = NULL, *apart = NULL;
        HealScore before, after;
        HealOwn own_before = own_score(h, current, &hd->request), own_after;
        unsigned others_before = shared_with_others(h->t, h->l, current), others_after;
        bool sharing_busy = busy_shares(h, current, &hd->request);
        uint64_t moved;
        char *why;
        HealMove *m;

        add_cores(t, current, cores);
        add_cores(t, candidate, cores);
        /* the score of the touched cores with the domain where it is, then where it would go */
        before = score_cores(h, cores);
        if (hp->undo_sharing) { /* its own sharing, with it counted as it runs */
                policy_improves(t, h->l, current, candidate, &improves);
        } else {
                ledger_release(h->l, hd->key);
                policy_improves(t, h->l, current, candidate, &improves);
                ledger_commit(h->l, hd->key, plan_copy(current));
        }
        swap_plan(h, hd, current, candidate);
        after = score_cores(h, cores);
        own_after = own_score(h, candidate, &hd->request);
        others_after = shared_with_others(h->t, h->l, candidate);
        /* asked to undo sharing, a domain whose vCPUs leave other domains' cores for a free one improves
         * even when they share that core with each other (two idle vCPUs on one free core's threads, where
         * a 2-vCPU domain cannot have a core each): the others' vCPUs get their cores back */
        if (asked && hp->undo_sharing && others_after < others_before)
                apart = g_strdup_printf("%u vCPU%s shared a core with another domain's, now %u",
                                        others_before, others_before == 1 ? "" : "s", others_after);
        if (!improves && apart)
                improves = g_strdup(apart);
        moved = memory_moved(current, candidate);
        why = candidate->result == PLAN_UNPLACEABLE || candidate->nvcpus != current->nvcpus ||
                      moved > budget_left
                  ? NULL
                  : worth(t, hp, current, candidate, before, after, own_before, own_after, improves, apart,
                          sharing_busy);
        swap_plan(h, hd, candidate, current);
        if (!why)
                return NULL;
        *ret_gain = (int)before.contended - (int)after.contended;
        *ret_lost_gain = before.lost - after.lost;
        *ret_shared_gain = (int)before.shared - (int)after.shared;
        m = g_new0(HealMove, 1);
        m->key = g_strdup(hd->key);
        m->name = g_strdup(hd->request.name ? hd->request.name : hd->key);
        m->plan = plan_copy(candidate);
        m->why = why;
        m->memory_moved = moved;
        m->threads_only = threads_only(current, candidate);
        return m;
}

/* What the busy vCPUs on core c add to the host's contended count when n of them run there. */
static unsigned core_contended_with(const HealHost *h, unsigned c, unsigned n)
{
        return n >= 2 || (n >= 1 && h->core_hb[c] >= LOAD_BUSY_THRESHOLD) ? n : 0;
}

/*
 * The most busy vCPUs contending on the host that any move of p's domain (asking req) could take off:
 * what its busy vCPUs add where they are, less the least they add anywhere. One alone on a calm core
 * (no busy vCPU, host-side load under LOAD_BUSY_THRESHOLD, once the domain is off it) adds nothing;
 * every other one adds at least itself.
 */
static unsigned max_contended_gain(const HealHost *h, const Plan *p, const PlacementRequest *req)
{
        const Topology *t = h->t;
        unsigned *own = h->own; /* busy vCPUs of the domain per core; cleared again below */
        unsigned busy = 0, calm = 0, now = 0, least;

        for (unsigned i = 0; i < p->nvcpus; i++) {
                if (vcpu_busy(req, i) < LOAD_BUSY_THRESHOLD)
                        continue;
                busy++;
                if (p->vcpu_pu[i] >= 0)
                        own[t->pus[p->vcpu_pu[i]].core]++;
        }
        for (unsigned c = 0; c < t->ncores; c++) {
                unsigned rest = h->core_nb[c] - own[c];
                if (own[c])
                        now += core_contended_with(h, c, h->core_nb[c]) - core_contended_with(h, c, rest);
                calm += rest == 0 && h->core_hb[c] < LOAD_BUSY_THRESHOLD;
                own[c] = 0;
        }
        least = busy > calm ? busy - calm : 0;
        return now > least ? now - least : 0;
}

/*
 * Whether some move of p's domain could pass worth()'s host-wide test, cheaply, before three plans
 * are made: fewer busy vCPUs contending (max_contended_gain()), or, at most as many, less host-side load
 * beside busy threads (only where its own host-side load is counted or half a core of it runs beside busy
 * threads on the cores it runs on: own_host_excess()), fewer vCPUs sharing a core (a pass
 * that undoes sharing, and it shares one while another is free), fewer nodes (it spans more than one) or
 * nearer ones (some distance of the topology is less than its node's own).
 */
static bool could_gain(const HealHost *h, const HealParams *hp, const Plan *p, const PlacementRequest *req)
{
        const Topology *t = h->t;

        if (cpuset_count(p->nodes) > 1 || (hp->undo_sharing && shares_while_free(h, p)))
                return true;
        if (req->vcpu_busy && req->host_busy > 0 && !cpuset_is_empty(p->emulator_pin))
                return true;
        if (own_host_excess(h, p) >= LOAD_BUSY_THRESHOLD) /* no host-side load of its own: vCPUs move */
                return true;
        CPUSET_FOREACH (n, p->nodes) /* a mean distance is no less than the least one */
                if (h->min_distance < topology_distance(t, (unsigned)n, (unsigned)n))
                        return true;
        return max_contended_gain(h, p, req) >= hp->min_gain;
}

/* How far cand's vCPUs run from the memory of the domain now on cur: where it stays (keep_memory) or
 * where cand counts it. */
static double moved_distance(const Topology *t, const Plan *cur, const Plan *cand)
{
        return vcpu_memory_distance(t, cand, cand->keep_memory ? cur : cand);
}

/*
 * Plans hd again on h without its current plan, three ways: inside its own nodes (policy_repin_local():
 * no memory moves), anew (policy_place()), and onto the nearest node with a calm core, its memory left
 * where it is (policy_repin_near()). Of those worth their move, the one after which fewer busy vCPUs
 * contend is made on h and returned; of as many, one that wins back at least HEAL_MIN_LOST_GAIN cores
 * more of the work lost to sharing (a re-pin inside that leaves 1.6 cores of host-side threads beside
 * busy ones is not taken over a plan that gives them a core of their own), of those not worse by that
 * the one whose vCPUs end nearest their memory (moved_distance(): a re-pin of an idle guest's threads
 * alone before its vCPUs placed anew off its bound memory), else the first of re-pin inside, anew (the
 * vCPUs stay with their memory), nearest node; in an asked-for pass (least_shared), of
 * those not worse by that either, one after which fewer vCPUs share a core and that moves no more memory
 * (the domain moved is fixed for the rest of the pass: a re-pin that leaves it beside idle vCPUs while a
 * plan anew gives each vCPU a free core would leave that sharing for another Rebalance). Else h is left as
 * it was and NULL returned.
 */
static HealMove *try_move(HealHost *h, const PlacementParams *p, const HealParams *hp, const HealDomain *hd,
                          uint64_t budget_left, bool least_shared)
{
        const Topology *t = h->t;
        const Plan *now = ledger_lookup(h->l, hd->key);
        g_autoptr(Plan) current = NULL;
        Plan *candidates[3] = {NULL, NULL, NULL};
        PlacementParams params = *p;
        PlacementRequest req = hd->request;
        HealMove *m = NULL;
        int best_gain = 0, best_shared_gain = 0;
        double best_lost_gain = 0;

        if (!may_gain(h, hp, now, &hd->request) || !could_gain(h, hp, now, &hd->request))
                return NULL;
        current = plan_copy(now);
        params.policy = hd->policy;
        ledger_release(h->l, hd->key);
        account(h, current, &hd->request, -1);
        req.pu_busy = h->pu_busy;
        candidates[0] = policy_repin_local(t, h->l, &req, &params, current);
        candidates[1] = policy_place(t, h->l, &req, &params);
        /* compat is memory-first: its vCPUs never run away from their memory to stop sharing */
        if (hd->policy != POLICY_COMPAT)
                candidates[2] = policy_repin_near(t, h->l, &req, &params, current);
        ledger_commit(h->l, hd->key, plan_copy(current));
        account(h, current, &hd->request, +1);
        for (unsigned k = 0; k < G_N_ELEMENTS(candidates); k++) {
                HealMove *other;
                int gain = 0, shared_gain = 0;
                double lost_gain = 0;
                if (!candidates[k])
                        continue;
                count_memory_where_it_is(t, &hd->request, current, candidates[k]);
                other = judge(h, hp, hd, current, candidates[k], budget_left, least_shared, &gain,
                              &lost_gain, &shared_gain);
                if (other &&
                    (!m || gain > best_gain ||
                     (gain == best_gain && lost_gain >= best_lost_gain + HEAL_MIN_LOST_GAIN) ||
                     (gain == best_gain && lost_gain + HEAL_MIN_LOST_GAIN > best_lost_gain &&
                      (!least_shared || shared_gain >= best_shared_gain) &&
                      moved_distance(t, current, other->plan) + 1e-9 <
                          moved_distance(t, current, m->plan)) ||
                     (least_shared && gain == best_gain && lost_gain + HEAL_MIN_LOST_GAIN > best_lost_gain &&
                      shared_gain > best_shared_gain && other->memory_moved <= m->memory_moved))) {
                        heal_move_free(m);
                        m = other;
                        best_gain = gain;
                        best_lost_gain = lost_gain;
                        best_shared_gain = shared_gain;
                } else {
                        heal_move_free(other);
                }
                plan_free(candidates[k]);
        }
        if (m)
                swap_plan(h, hd, current, m->plan);
        return m;
}

/* Worst first: most contended busy vCPUs, then overcommitted before placed (the domain that had to
 * share moves, not the one whose cores it shares), then most nodes, then the less memory (the cheaper
 * move, should it have to follow), then by key (stable). */
typedef struct HealOrder {
        const HealDomain *hd;
        unsigned contended, nodes;
        uint64_t memory;
        bool overcommitted;
} HealOrder;

/* Whether the plan shares a core with another domain's vCPU now: an overcommitted start whose neighbours
 * have all left no longer does. */
static bool shares_now(const Topology *t, const Ledger *l, const Plan *p)
{
        return shared_with_others(t, l, p) > 0;
}

static int order_compare(gconstpointer pa, gconstpointer pb)
{
        const HealOrder *a = pa, *b = pb;

        if (a->contended != b->contended)
                return a->contended > b->contended ? -1 : 1;
        if (a->overcommitted != b->overcommitted)
                return a->overcommitted ? -1 : 1;
        if (a->nodes != b->nodes)
                return a->nodes > b->nodes ? -1 : 1;
        if (a->memory != b->memory)
                return a->memory < b->memory ? -1 : 1;
        return strcmp(a->hd->key, b->hd->key);
}

static int check_domains(const Ledger *l, HealDomain *const *domains, unsigned n, GHashTable *by_key,
                         char **ret_error)
{
        for (unsigned i = 0; i < n; i++) {
                const char *key = domains[i]->key;
                if (!key || !ledger_lookup(l, key))
                        return ret_error_set(ret_error, -EINVAL, "domain '%s' is not in the ledger",
                                             key ? key : "(null)");
                if (!g_hash_table_insert(by_key, (gpointer)key, domains[i]))
                        return ret_error_set(ret_error, -EINVAL, "domain '%s' is given twice", key);
        }
        return 0;
}

/* Whether at least 1/HEAL_SPARE_CORES_SHARE of the host's cores not wholly reserved hold no vCPU. */
static bool cores_to_spare(const Topology *t, const Ledger *l, const PlacementParams *p)
{
        unsigned usable = 0, free = 0;

        for (unsigned c = 0; c < t->ncores; c++) {
                bool reserved = p->reserved_cpus != NULL;
                for (unsigned q = t->cores[c].pu_first;
                     reserved && q < t->cores[c].pu_first + t->cores[c].npus; q++)
                        reserved = cpuset_has(p->reserved_cpus, t->pus[q].os_index);
                if (reserved)
                        continue;
                usable++;
                free += ledger_core_free(l, c);
        }
        return usable && free * HEAL_SPARE_CORES_SHARE >= usable;
}

int policy_heal(const Topology *t, const Ledger *l, const PlacementParams *p, const HealParams *asked,
                HealDomain *const *domains, unsigned n, GPtrArray **ret_moves, char **ret_error)
{
        HealParams params = *asked;
        const HealParams *hp = &params;
        g_autoptr(GHashTable) by_key = g_hash_table_new(g_str_hash, g_str_equal);
        g_autoptr(GPtrArray) moves = g_ptr_array_new_with_free_func((GDestroyNotify)heal_move_free);
        g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(HealOrder));
        g_autoptr(HealHost) h = NULL;
        uint64_t used = 0;
        int r;

        if (hp->min_gain == 0)
                return ret_error_set(ret_error, -EINVAL, "the minimum gain of a move must be at least 1");
        r = check_domains(l, domains, n, by_key, ret_error);
        if (r < 0)
                return r;
        /* with cores to spare, sharing that arose when cores were short is undone as when asked: every
         * vCPU gets a core of its own while there are cores for it */
        params.undo_sharing = params.undo_sharing || cores_to_spare(t, l, p);
        h = heal_host_new(t, l, p, by_key);
        for (unsigned i = 0; i < n; i++) {
                const Plan *cur = ledger_lookup(h->l, domains[i]->key);
                HealOrder o = {.hd = domains[i]};
                if (domains[i]->cooling || domains[i]->fixed || !may_gain(h, hp, cur, &domains[i]->request))
                        continue;
                o.contended = own_contended(h, cur, &domains[i]->request);
                o.nodes = cpuset_count(cur->nodes);
                o.overcommitted = cur->result == PLAN_OVERCOMMITTED && shares_now(t, h->l, cur);
                o.memory = cur->memory;
                g_array_append_val(order, o);
        }
        g_array_sort(order, order_compare);
        for (unsigned i = 0; i < order->len && moves->len < hp->max_moves; i++) {
                const HealDomain *hd = g_array_index(order, HealOrder, i).hd;
                HealMove *m;
                /* as the moves before this one leave the host: the quarter kept free stays free */
                params.undo_sharing = asked->undo_sharing || cores_to_spare(t, h->l, p);
                m = try_move(h, p, hp, hd, hp->memory_budget - used, asked->undo_sharing);
                if (!m)
                        continue;
                used += m->memory_moved;
                g_ptr_array_add(moves, m);
        }
        *ret_moves = g_steal_pointer(&moves);
        return 0;
}
