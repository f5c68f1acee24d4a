/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "contention.h"
#include "load.h"

#include <limits.h>
#include <math.h>

double contention_core_lost(unsigned busy, unsigned npus, double loss)
{
        return load_core_lost(busy, npus, loss);
}

/* Spreads a domain's host-side load evenly over its emulator pin (its vCPUs' PUs without one); returns
 * how much it spread (0 for a domain with neither). */
static double add_host_load(const Topology *t, const ContentionDomain *d, double *pu_host)
{
        const Plan *p = d->plan;
        unsigned n = 0;

        if (!(d->host > 0))
                return 0;
        if (p->emulator_pin && !cpuset_is_empty(p->emulator_pin)) {
                n = cpuset_count(p->emulator_pin);
                CPUSET_FOREACH (os, p->emulator_pin) {
                        int pu = topology_pu_by_os(t, (unsigned)os);
                        if (pu >= 0)
                                pu_host[pu] += d->host / n;
                }
                return d->host;
        }
        for (unsigned v = 0; v < p->nvcpus; v++)
                n += p->vcpu_pu[v] >= 0;
        for (unsigned v = 0; v < p->nvcpus; v++)
                if (p->vcpu_pu[v] >= 0)
                        pu_host[p->vcpu_pu[v]] += d->host / n;
        return n ? d->host : 0;
}

ContentionSample contention_measure(const Topology *t, const ContentionDomain *domains, unsigned n,
                                    double loss)
{
        g_autofree unsigned *core_vcpus = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree unsigned *core_busy = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree double *pu_host = g_new0(double, MAX(t->npus, 1));
        g_autofree double *core_host = g_new0(double, MAX(t->ncores, 1));
        g_autofree unsigned *core_host_busy = g_new0(unsigned, MAX(t->ncores, 1));
        g_autofree bool *node_calm = g_new0(bool, MAX(t->nnodes, 1));
        bool any_calm = false;
        ContentionSample s = {0};

        for (unsigned i = 0; i < n; i++) {
                const Plan *p = domains[i].plan;
                bool busy = domains[i].busy >= LOAD_BUSY_THRESHOLD;
                for (unsigned v = 0; v < p->nvcpus; v++) {
                        if (p->vcpu_pu[v] < 0)
                                continue;
                        core_vcpus[t->pus[p->vcpu_pu[v]].core]++;
                        core_busy[t->pus[p->vcpu_pu[v]].core] += busy;
                }
                s.host_load += add_host_load(t, &domains[i], pu_host);
        }
        for (unsigned pu = 0; pu < t->npus; pu++) {
                core_host[t->pus[pu].core] += pu_host[pu];
                core_host_busy[t->pus[pu].core] += pu_host[pu] >= LOAD_BUSY_THRESHOLD;
        }
        for (unsigned i = 0; i < n; i++) {
                const Plan *p = domains[i].plan;
                bool busy = domains[i].busy >= LOAD_BUSY_THRESHOLD;
                for (unsigned v = 0; v < p->nvcpus; v++) {
                        unsigned c;
                        if (p->vcpu_pu[v] < 0)
                                continue;
                        c = t->pus[p->vcpu_pu[v]].core;
                        s.vcpus++;
                        s.shared_vcpus += core_vcpus[c] >= 2;
                        s.busy_vcpus += busy;
                        s.busy_contended += busy && core_busy[c] + core_host_busy[c] >= 2;
                }
        }
        for (unsigned c = 0; c < t->ncores; c++)
                if (!core_busy[c] && core_host[c] < LOAD_HOST_REPIN_GAIN) {
                        node_calm[t->cores[c].node] = true;
                        any_calm = true;
                }
        for (unsigned c = 0; c < t->ncores; c++) {
                double alone = contention_core_lost(core_busy[c], t->cores[c].npus, loss);
                double lost = load_core_lost_with_host(core_busy[c], core_host[c], t->cores[c].npus, loss);
                s.capacity_lost += lost;
                s.host_lost += lost - alone;
                if (node_calm[t->cores[c].node])
                        s.lost_calm_node += lost;
                else if (any_calm)
                        s.lost_calm_elsewhere += lost;
        }
        return s;
}

/* Cores of each size (PUs per core) the host has, for the bound: [max_threads + 1]. */
static unsigned *cores_by_size(const Topology *t)
{
        unsigned *count = g_new0(unsigned, t->max_threads + 2);

        for (unsigned c = 0; c < t->ncores; c++)
                count[MIN(t->cores[c].npus, t->max_threads + 1)]++;
        return count;
}

/* What the k-th busy thread of a core of size PUs adds to what it loses (layer k - 1): nothing for the
 * first, what a pair of them loses for the second, and a whole thread for each further one (a core
 * delivers no more with three busy threads than with two, contention_core_lost()). */
static double layer_cost(unsigned layer, unsigned size, double loss)
{
        if (layer >= 2)
                return 1.0;
        return contention_core_lost(layer + 1, size, loss) - contention_core_lost(layer, size, loss);
}

/*
 * Greedy by layers: the k-th busy thread of every core of one size costs the same, so the threads go
 * layer by layer to the cheapest (size, k) first, the smallest size on a tie. Exact while each core's
 * cost grows by at least as much with every further thread (any loss up to 0.5); amount may be
 * fractional (host-side load, which divides), the last layer then partly filled, as
 * contention_measure() charges it. *ret_paired (may be NULL): the threads on cores with two or more.
 * Once the cheapest is a third or further layer, every layer left costs a whole thread and goes to that
 * same size: the rest is summed at once rather than a layer at a time (a loop per layer took 42 s for
 * a trace of a thousand domains of 4096 host-side cores on one core).
 */
static double layers(const Topology *t, double amount, double loss, unsigned *ret_paired)
{
        g_autofree unsigned *count = cores_by_size(t);
        g_autofree unsigned *layer = g_new0(unsigned, t->max_threads + 2); /* next layer per size */
        unsigned paired = 0;
        double lost = 0, left = amount;

        while (left > 1e-12) {
                int best = -1;
                double best_cost = INFINITY, take;
                for (unsigned size = 0; size <= t->max_threads + 1; size++) {
                        double cost;
                        if (!count[size])
                                continue;
                        cost = layer_cost(layer[size], size, loss);
                        if (cost < best_cost) {
                                best = (int)size;
                                best_cost = cost;
                        }
                }
                if (best < 0)
                        break; /* no cores at all */
                if (layer[best] >= 2) {
                        /* whole layers of count[best] threads each paired, and the last partly */
                        paired += (unsigned)MIN(left, (double)UINT_MAX);
                        lost += left;
                        break;
                }
                take = MIN(left, count[best]);
                /* a second thread makes both contend */
                paired += layer[best] == 1 ? 2 * (unsigned)take : 0;
                lost += take * best_cost;
                left -= take;
                layer[best]++;
        }
        if (ret_paired)
                *ret_paired = paired;
        return lost;
}

double contention_bound(const Topology *t, unsigned busy_threads, double host, double loss,
                        unsigned *ret_contended, unsigned *ret_paired)
{
        unsigned cores = t->ncores;

        if (ret_contended)
                /* x cores with two or more busy threads hold y >= 2x of them, the others at most one each:
                 * y >= busy - cores + x, least with every extra one stacked on a single core */
                *ret_contended = busy_threads <= cores ? 0 : busy_threads - cores + 1;
        if (ret_paired)
                layers(t, busy_threads, loss, ret_paired);
        return layers(t, busy_threads + MAX(host, 0.0), loss, NULL);
}
