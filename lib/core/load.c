/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "load.h"

#include <errno.h>
#include <math.h>

#include "ret-error.h"

DomainLoad *domain_load_new(void)
{
        return g_new0(DomainLoad, 1);
}

void domain_load_free(DomainLoad *l)
{
        if (!l)
                return;
        g_free(l->vcpu_busy);
        g_free(l->vcpu_seen);
        g_free(l->vcpu_unread);
        g_free(l);
}

static bool valid_value(double x)
{
        return isfinite(x) && x >= 0;
}

static int check_sample(const double *vcpu_busy, unsigned nvcpus, double host_busy, double interval_sec,
                        LoadSmoothing sm, char **ret_error)
{
        if (!valid_value(interval_sec) || interval_sec <= 0)
                return ret_error_set(ret_error, -EINVAL, "the sampling interval must be a positive number");
        if (!valid_value(sm.rise_sec) || sm.rise_sec <= 0 || !valid_value(sm.fall_sec) || sm.fall_sec <= 0)
                return ret_error_set(ret_error, -EINVAL,
                                     "the smoothing half-lives must be positive numbers");
        if (!valid_value(sm.warmup_sec))
                return ret_error_set(ret_error, -EINVAL, "the warm-up must be a number >= 0");
        if (!valid_value(host_busy))
                return ret_error_set(ret_error, -EINVAL, "host-side load must be a number >= 0");
        if (nvcpus && !vcpu_busy)
                return ret_error_set(ret_error, -EINVAL, "%u vCPUs but no busy fractions", nvcpus);
        for (unsigned i = 0; i < nvcpus; i++)
                if (!valid_value(vcpu_busy[i]))
                        return ret_error_set(ret_error, -EINVAL,
                                             "vCPU %u: busy fraction must be a number >= 0", i);
        return 0;
}

/* a == b, without -Wfloat-equal's complaint: here exactness is the point */
static bool same(double a, double b)
{
        return !(a < b) && !(a > b);
}

/* old moved towards the sample x by the weight of an interval_sec step, rising or falling; rounded to a
 * billionth, so that a step reaches a threshold when its arithmetic says it does (from 0 to 1, two
 * 5 s samples of a 10 s half-life are 0.5, not 0.49999999999999994). A step that rounds to nothing (or to
 * the sample or past it) takes the sample itself: otherwise a value stops a billionth or a few short of a
 * steady sample (rising from 0 to 0.5, at 0.499999999 for ever: a vCPU exactly half busy would never count
 * as busy), and a sample a rounding error off the value does not snap it to the nearest billionth. */
static double smooth(double old, double x, double interval_sec, LoadSmoothing sm)
{
        double half_life = x > old ? sm.rise_sec : sm.fall_sec;
        double v;

        if (same(x, old))
                return old;
        v = round((old + (1.0 - exp2(-interval_sec / half_life)) * (x - old)) * 1e9) / 1e9;
        if (x > old ? v <= old || v >= x : v >= old || v <= x)
                return x; /* rounded to nothing (or past the sample, off the billionths) */
        /* within a millionth of the sample: the sample (a fall to 0 ends at 0, not on the last billionth;
         * a rise to 2e-6 is not floored at 0 for ever) */
        return fabs(v - x) < 1e-6 ? x : v;
}

/* True when at least half of a sample of interval_sec that follows the warm-up samples seen so far still
 * lies in the warm-up. */
static bool in_warmup(const DomainLoad *l, double interval_sec, LoadSmoothing sm)
{
        double left = sm.warmup_sec - l->warmup_sec;

        return !l->known && left > 0 && 2 * MIN(left, interval_sec) >= interval_sec;
}

/* The level of host-side load h (cores) in the load class, in quarters of a core (LOAD_HOST_REPIN_GAIN)
 * up to 63: each quarter of a core, since heal acts on host-side load a quarter of a core beside busy
 * threads, half a core (a busy thread of its own), and a quarter of a core over one core's worth on one
 * core, wherever its pin puts those levels. A level reached stays until h is LOAD_HOST_CLASS_BAND under
 * it (was: the level before). */
static unsigned host_level(double h, unsigned was)
{
        unsigned up = (unsigned)MIN(MAX(h, 0.0) / LOAD_HOST_REPIN_GAIN, 63.0);
        unsigned down = (unsigned)MIN(MAX(h + LOAD_HOST_CLASS_BAND, 0.0) / LOAD_HOST_REPIN_GAIN, 63.0);

        return up >= was ? up : MIN(down, was);
}

/* vcpu_seen[i] from vcpu_busy[i]: held at LOAD_BUSY_THRESHOLD while it counted as busy (was_known: it
 * had a value before) and is not under LOAD_IDLE_THRESHOLD yet. */
static void set_seen(DomainLoad *l, unsigned i, bool was_known)
{
        bool held = was_known && l->vcpu_seen[i] >= LOAD_BUSY_THRESHOLD;

        l->vcpu_seen[i] = held && l->vcpu_busy[i] >= LOAD_IDLE_THRESHOLD
                              ? MAX(l->vcpu_busy[i], LOAD_BUSY_THRESHOLD)
                              : l->vcpu_busy[i];
}

int domain_load_update(DomainLoad *l, const double *vcpu_busy, unsigned nvcpus, double host_busy,
                       double interval_sec, LoadSmoothing sm, char **ret_error)
{
        int r = check_sample(vcpu_busy, nvcpus, host_busy, interval_sec, sm, ret_error);
        unsigned old = l->known ? l->nvcpus : 0;

        if (r < 0)
                return r;
        if (in_warmup(l, interval_sec, sm)) {
                l->warmup_sec += interval_sec;
                return 0;
        }
        if (nvcpus != l->nvcpus) {
                l->vcpu_busy = g_renew(double, l->vcpu_busy, MAX(nvcpus, 1));
                l->vcpu_seen = g_renew(double, l->vcpu_seen, MAX(nvcpus, 1));
                l->nvcpus = nvcpus;
        }
        for (unsigned i = 0; i < nvcpus; i++) {
                double x = MIN(vcpu_busy[i], 1.0);
                /* a vCPU plugged since the last sample (domain_load_follow()) takes the sample as it is */
                bool had = i < old && !(l->vcpu_unread && l->vcpu_unread[i]);
                l->vcpu_busy[i] = had ? smooth(l->vcpu_busy[i], x, interval_sec, sm) : x;
                set_seen(l, i, had);
        }
        g_clear_pointer(&l->vcpu_unread, g_free);
        host_busy = MIN(host_busy, LOAD_HOST_BUSY_MAX);
        l->host_busy = l->known ? smooth(l->host_busy, host_busy, interval_sec, sm) : host_busy;
        l->host_level = host_level(l->host_busy, l->known ? l->host_level : 0);
        l->known = true;
        l->sampled_sec += interval_sec;
        return 0;
}

int domain_load_raise(DomainLoad *l, const double *vcpu_busy, unsigned nvcpus, double interval_sec,
                      LoadSmoothing sm, char **ret_error)
{
        int r = check_sample(vcpu_busy, nvcpus, 0, interval_sec, sm, ret_error);

        if (r < 0 || !l->known)
                return r;
        nvcpus = MIN(nvcpus, l->nvcpus);
        for (unsigned i = 0; i < nvcpus; i++) {
                double x = MIN(vcpu_busy[i], 1.0);
                if (x > l->vcpu_busy[i]) {
                        l->vcpu_busy[i] = smooth(l->vcpu_busy[i], x, interval_sec, sm);
                        set_seen(l, i, true);
                }
        }
        return 0;
}

void domain_load_follow(DomainLoad *l, const int *from, unsigned nvcpus)
{
        double *busy, *seen;
        bool *unread;

        if (!l->known)
                return;
        busy = g_new(double, MAX(nvcpus, 1));
        seen = g_new(double, MAX(nvcpus, 1));
        unread = g_new0(bool, MAX(nvcpus, 1));
        for (unsigned i = 0; i < nvcpus; i++) {
                bool had = from[i] >= 0 && (unsigned)from[i] < l->nvcpus &&
                           !(l->vcpu_unread && l->vcpu_unread[from[i]]);
                /* unknown: busy, as before any sample */
                busy[i] = had ? l->vcpu_busy[from[i]] : 1.0;
                seen[i] = had ? l->vcpu_seen[from[i]] : 1.0;
                unread[i] = !had;
        }
        g_free(l->vcpu_busy);
        g_free(l->vcpu_seen);
        g_free(l->vcpu_unread);
        l->vcpu_busy = busy;
        l->vcpu_seen = seen;
        l->vcpu_unread = unread;
        l->nvcpus = nvcpus;
}

const double *domain_load_vcpu_busy(const DomainLoad *l)
{
        return l && l->known ? l->vcpu_seen : NULL;
}

unsigned domain_load_class(const DomainLoad *l)
{
        if (!l->known)
                return G_MAXUINT;
        return MIN(domain_load_busy_vcpus(l, l->nvcpus), G_MAXUINT / 64 - 1) * 64 + l->host_level;
}

unsigned domain_load_busy_vcpus(const DomainLoad *l, unsigned nvcpus)
{
        unsigned n = 0;

        if (!l || !l->known)
                return nvcpus;
        for (unsigned i = 0; i < l->nvcpus; i++)
                if (l->vcpu_seen[i] >= LOAD_BUSY_THRESHOLD)
                        n++;
        return n;
}

double load_fraction(uint64_t prev_ns, uint64_t now_ns, uint64_t elapsed_ns)
{
        if (elapsed_ns == 0 || now_ns <= prev_ns)
                return 0;
        return (double)(now_ns - prev_ns) / (double)elapsed_ns;
}

/* The sums are kept in fixed point, in 2^-40 of a CPU: exact, so a PU's sum is the same in whatever order
 * its domains are added (the ledger's hash order, not a sort of its keys: that sort was most of the cost
 * at 1000 domains) and whichever domain is named what. No value is above CPUSET_MAX CPUs (a domain's
 * host-side threads keep no more busy than Linux has), 2^53: a thousand of them on one PU fit in 2^63. */
#define FIXED_ONE 1099511627776.0 /* 2^40 */

static int64_t to_fixed(double x)
{
        return (int64_t)(CLAMP(x, 0, (double)CPUSET_MAX) * FIXED_ONE + 0.5);
}

typedef struct PuSums {
        const Topology *t;
        LoadLookup lookup;
        void *userdata;
        int64_t *sum; /* [npus] */
} PuSums;

/* Adds what one domain (plan p, its load by the lookup or unknown) keeps busy to the sums. */
static void add_domain(const char *key, const Plan *p, void *userdata)
{
        PuSums *s = userdata;
        const Topology *t = s->t;
        const DomainLoad *dl = s->lookup ? s->lookup(key, s->userdata) : NULL;
        const double *vb = domain_load_vcpu_busy(dl);
        int64_t share;

        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && (unsigned)p->vcpu_pu[i] < t->npus)
                        s->sum[p->vcpu_pu[i]] += vb && i < dl->nvcpus ? to_fixed(vb[i]) : (int64_t)FIXED_ONE;
        if (!vb || dl->host_busy <= 0 || !p->emulator_pin || cpuset_is_empty(p->emulator_pin))
                return;
        share = to_fixed(dl->host_busy / cpuset_count(p->emulator_pin));
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0)
                        s->sum[pu] += share;
        }
}

double *load_pu_busy(const Ledger *l, LoadLookup lookup, void *userdata)
{
        const Topology *t = ledger_topology(l);
        double *busy = g_new(double, MAX(t->npus, 1));
        g_autofree int64_t *sum = g_new0(int64_t, MAX(t->npus, 1));
        PuSums s = {.t = t, .lookup = lookup, .userdata = userdata, .sum = sum};

        ledger_foreach(l, add_domain, &s);
        for (unsigned pu = 0; pu < MAX(t->npus, 1); pu++)
                busy[pu] = (double)sum[pu] / FIXED_ONE;
        return busy;
}

/* Whether a busy vCPU of p (vcpu_busy NULL: all busy) runs on core c. */
static bool busy_vcpu_on(const Topology *t, const Plan *p, const double *vcpu_busy, unsigned c)
{
        for (unsigned i = 0; i < p->nvcpus; i++)
                if (p->vcpu_pu[i] >= 0 && t->pus[p->vcpu_pu[i]].core == c &&
                    (vcpu_busy ? vcpu_busy[i] : 1.0) >= LOAD_BUSY_THRESHOLD)
                        return true;
        return false;
}

/* What other domains keep busy on core c by pu_busy: less p's own vCPUs and host share when it counts p. */
static double others_busy_on(const Topology *t, const Plan *p, const double *vcpu_busy, double share,
                             const double *pu_busy, bool pu_busy_counts_p, unsigned c)
{
        const TopoCore *core = &t->cores[c];
        double sum = 0;

        for (unsigned q = core->pu_first; q < core->pu_first + core->npus; q++)
                sum += pu_busy[q] -
                       (pu_busy_counts_p && cpuset_has(p->emulator_pin, t->pus[q].os_index) ? share : 0);
        for (unsigned i = 0; i < p->nvcpus && pu_busy_counts_p; i++)
                if (p->vcpu_pu[i] >= 0 && t->pus[p->vcpu_pu[i]].core == c)
                        sum -= vcpu_busy[i];
        return sum;
}

double load_own_host_beside(const Topology *t, const Plan *p, const double *vcpu_busy, double host_busy,
                            const double *pu_busy, bool pu_busy_counts_p)
{
        double share;
        unsigned beside = 0;

        if (!vcpu_busy || !(host_busy > 0) || !p->emulator_pin || cpuset_is_empty(p->emulator_pin))
                return 0;
        share = host_busy / cpuset_count(p->emulator_pin);
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                unsigned c;
                if (pu < 0)
                        continue;
                c = t->pus[pu].core;
                beside += busy_vcpu_on(t, p, vcpu_busy, c) ||
                          (pu_busy && others_busy_on(t, p, vcpu_busy, share, pu_busy, pu_busy_counts_p, c) >=
                                          LOAD_BUSY_THRESHOLD);
        }
        return share * beside;
}

double load_own_host_over(const Topology *t, const Plan *p, const double *vcpu_busy, double host_busy)
{
        g_autofree double *on_core = NULL;
        double share, over = 0;

        if (!vcpu_busy || !(host_busy > 1.0) || !p->emulator_pin || cpuset_is_empty(p->emulator_pin))
                return 0; /* a core's worth or less in all is over one thread's worth nowhere */
        on_core = g_new0(double, MAX(t->ncores, 1));
        share = host_busy / cpuset_count(p->emulator_pin);
        CPUSET_FOREACH (os, p->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)os);
                if (pu >= 0)
                        on_core[t->pus[pu].core] += share;
        }
        for (unsigned c = 0; c < t->ncores; c++)
                if (on_core[c] > 1.0 && !busy_vcpu_on(t, p, vcpu_busy, c))
                        over += on_core[c] - 1.0;
        return over;
}

unsigned load_core_threads(unsigned n)
{
        return MIN(n, 2u);
}

double load_core_lost(unsigned busy, unsigned npus, double loss)
{
        if (busy < 2)
                return 0;
        return busy - MAX(1.0, MIN(busy, load_core_threads(MAX(npus, 1))) * (1.0 - loss));
}

double load_core_lost_with_host(unsigned busy, double host, unsigned npus, double loss)
{
        unsigned whole;
        double lower;

        /* a core holds the host-side load of every domain pinned there, each up to LOAD_HOST_BUSY_MAX:
         * the sum counts whole, as the bound sums it; the limit only keeps the count an unsigned */
        host = CLAMP(host, 0.0, (double)(G_MAXUINT / 4));
        whole = (unsigned)floor(host);
        lower = load_core_lost(busy + whole, npus, loss);
        return lower + (host - whole) * (load_core_lost(busy + whole + 1, npus, loss) - lower);
}
