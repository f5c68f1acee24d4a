/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Load: how busy a domain is, as the engine sees it. Per vCPU, the smoothed fraction of time it ran;
 * per domain, the smoothed number of cores its host-side threads (emulator, I/O threads, vhost) kept
 * busy. Raw samples (one per interval, from the daemon's bulk stats call or a simulator's trace) go
 * through an exponentially weighted moving average whose weight depends on the interval, so a sample
 * every 5 s and one every 20 s smooth alike. A domain is "unknown" until its first sample; the engine
 * then treats every vCPU as busy, which is what it did before load was measured.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ledger.h"

/* A vCPU at least this busy is "busy": it gets a core of its own before an idle one does. */
#define LOAD_BUSY_THRESHOLD 0.5
/* Hysteresis: a vCPU that counts as busy keeps counting as busy until its smoothed load falls under this
 * (the engine takes LOAD_BUSY_THRESHOLD for it meanwhile); one that counts as idle turns busy at
 * LOAD_BUSY_THRESHOLD. A vCPU whose load hovers around the threshold with noise would otherwise change
 * class, and run a heal pass, every few samples. */
#define LOAD_IDLE_THRESHOLD 0.4
/* Host-side load beside busy threads, or over one thread's worth on a core (load_own_host_over()), that
 * is worth re-pinning a domain's host-side threads alone for, in cores: its vCPUs and memory stay, so
 * less than a move of vCPUs asks, but not a rounding difference. Also where host-side threads count as
 * busy for the load rules (a core of their own, off other guests' busy cores) and for the load class
 * that runs a heal pass at once, so that placement, heal and its trigger agree. */
#define LOAD_HOST_REPIN_GAIN 0.25
/* Hysteresis of the host-side load's level in the load class (domain_load_class()): it rises as soon as
 * the load reaches a level and falls only when the load is this many cores under it. */
#define LOAD_HOST_CLASS_BAND 0.05
/*
 * How fast the smoothing follows a step in load: half of a rise shows after rise_sec, half of a fall after
 * fall_sec. Rises show sooner: a vCPU that turns busy shares its core for as long as it is not seen, one
 * that turns idle only keeps its core a little longer, and a short lull does not give its core away.
 * warmup_sec: a domain's first samples, over that long, are its start-up (QEMU building the machine on
 * its emulator thread, firmware, the guest's boot), not its load; they are set aside, and the load stays
 * unknown until a sample after them.
 */
typedef struct LoadSmoothing {
        double rise_sec;
        double fall_sec;
        double warmup_sec;
} LoadSmoothing;

/* The daemon's and the simulator's: a vCPU that turns fully busy counts as busy after about 10 s (two
 * samples at LoadInterval=5), one that turns idle after about 30 s. */
#define LOAD_RISE_HALF_LIFE_SEC 10.0
#define LOAD_FALL_HALF_LIFE_SEC 30.0
/* The default [Placement] LoadWarmup=: one default LoadInterval. QEMU's start-up is short (a real
 * host, TCG: 0.7-0.8 s of host-side CPU time, nearly all of it done when `virsh create` returns; the
 * daemon sampling every second read 0.46 cores there and 0.04 on a vCPU that spins from boot). The
 * simulator, which has no start-up, shows what a longer one costs: load learned later. */
#define LOAD_WARMUP_SEC 5.0
#define LOAD_SMOOTHING(warmup)                                                                              \
        ((LoadSmoothing){.rise_sec = LOAD_RISE_HALF_LIFE_SEC,                                               \
                         .fall_sec = LOAD_FALL_HALF_LIFE_SEC,                                               \
                         .warmup_sec = (warmup)})
/* The host-side load a domain counts with until its own is measured (PlacementRequest.host_unmeasured),
 * in cores: as its vCPUs count as busy until then, its emulator, I/O threads and vhost count as one core
 * kept busy, so they start on cores no vCPU uses, while its nodes have such cores, rather than on the
 * siblings of its vCPUs, where a guest with busy vhost contends from its first second until the re-pin
 * after its first readings. */
#define LOAD_HOST_UNMEASURED 1.0
/* The most host-side cores a domain is counted with (a bad counter must not look like a huge host). */
#define LOAD_HOST_BUSY_MAX 1024.0

typedef struct DomainLoad {
        bool known;          /* false until a first sample */
        unsigned nvcpus;     /* entries in vcpu_busy */
        double *vcpu_busy;   /* [nvcpus] smoothed busy fraction of each vCPU, 0..1 */
        double *vcpu_seen;   /* [nvcpus] what the engine takes: vcpu_busy, but LOAD_BUSY_THRESHOLD for a
                              * vCPU that counted as busy and is not under LOAD_IDLE_THRESHOLD yet */
        unsigned host_level; /* host_busy's level in the load class, with LOAD_HOST_CLASS_BAND */
        double host_busy;    /* smoothed cores busy with its host-side threads, >= 0 */
        double sampled_sec;  /* time covered by the samples so far */
        double warmup_sec;   /* of the warm-up, the time past: samples set aside, and before the first
                              * reading when the start was seen */
        bool paused;         /* the guest is paused: the load is held as it was before the pause */
        bool *vcpu_unread;   /* [nvcpus] or NULL: plugged since the last sample (domain_load_follow()),
                              * busy until the next takes its sample as it is */
} DomainLoad;

DomainLoad *domain_load_new(void);
void domain_load_free(DomainLoad *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DomainLoad, domain_load_free)

/*
 * Folds one raw sample into l: vcpu_busy[0..nvcpus) the fraction of the last interval_sec each vCPU
 * ran (clamped to 0..1), host_busy the cores its host-side threads kept busy over it. While l is
 * unknown, a sample at least half of which lies in the first sm.warmup_sec of l's samples is set aside
 * (start-up). The first sample after them is taken as it is; later ones weigh 1 - 2^(-interval/half_life),
 * with sm.rise_sec where the sample is above the smoothed value and sm.fall_sec where it is below. A vCPU
 * count that changed (hot-plug) keeps the smoothed values of the vCPUs that stay and takes the sample
 * for new ones. Returns 0, or -EINVAL (l unchanged, message in *ret_error) for a non-finite or negative
 * value, interval, half-life or warm-up.
 */
int domain_load_update(DomainLoad *l, const double *vcpu_busy, unsigned nvcpus, double host_busy,
                       double interval_sec, LoadSmoothing sm, char **ret_error);

/*
 * Folds a sample that bounds the vCPUs' load from below into l: one the guest was paused for at either
 * end (its vCPUs stood still for part of it, so each read at most what it ran). A vCPU whose sample is
 * above its smoothed value rises as domain_load_update() would raise it; the others, and the host-side
 * load (QEMU's own work around a pause is not the guest's), are held; so the first nvcpus of l's vCPUs
 * after a change of their count (those that stayed; l's count stays until domain_load_update()). Nothing
 * while l is unknown; the time is not counted in sampled_sec. Returns 0, or -EINVAL as
 * domain_load_update().
 */
int domain_load_raise(DomainLoad *l, const double *vcpu_busy, unsigned nvcpus, double interval_sec,
                      LoadSmoothing sm, char **ret_error);

/*
 * The guest's vCPUs changed (hot-plug): its i-th vCPU of nvcpus now is the from[i]-th before (-1: a new
 * one). Each that stays keeps its own smoothed load, by libvirt's vCPU id, not by position: with vCPU 1 of
 * 0-2 unplugged, vCPU 2 is second now and keeps vCPU 2's load. A new one counts as busy until the next
 * domain_load_update(), which takes its sample as it is. Nothing while l is unknown.
 */
void domain_load_follow(DomainLoad *l, const int *from, unsigned nvcpus);

/* The per-vCPU fractions the engine takes (what PlacementRequest.vcpu_busy takes): the smoothed ones, a
 * vCPU held busy by LOAD_IDLE_THRESHOLD at LOAD_BUSY_THRESHOLD; NULL while unknown. */
const double *domain_load_vcpu_busy(const DomainLoad *l);
/* vCPUs that count as busy (domain_load_vcpu_busy() at least LOAD_BUSY_THRESHOLD); every vCPU (nvcpus)
 * while unknown. */
unsigned domain_load_busy_vcpus(const DomainLoad *l, unsigned nvcpus);
/* What a busy pair of SMT siblings loses each (40-75%, as the XenServer toolstack team measured it,
 * CA-420968; the figure counted is the low end). */
#define LOAD_SIBLING_LOSS 0.4
/* The busy threads' worth a core delivers when n of its PUs run them: n up to two, and two on a core of
 * four or eight threads (the loss is measured on two-thread cores; more threads add no more work). What
 * load_core_lost() counts a core as, and what busy host-side threads are given cores by. */
unsigned load_core_threads(unsigned n);
/* The cores of work a core of npus PUs loses running busy threads at once, each pair on siblings losing
 * loss of each: at most two threads' worth is delivered (the loss is measured on two-thread cores; a core
 * of four or eight threads does not deliver four or eight cores' work), and one thread's at least. */
double load_core_lost(unsigned busy, unsigned npus, double loss);
/* The same with host cores of host-side load beside them: a busy thread's worth of the loss for each core
 * of it, pro rata (a quarter of a busy thread beside each of four busy vCPUs costs what one busy thread
 * beside one of them does). */
double load_core_lost_with_host(unsigned busy, double host, unsigned npus, double loss);
/* The load class of a domain, whose change runs a heal pass at once: its busy vCPUs, and its host-side
 * load by the levels heal acts on (in quarters of a core, with LOAD_HOST_CLASS_BAND); UINT_MAX while
 * unknown. Both with their hysteresis: noise around a threshold does not change it. */
unsigned domain_load_class(const DomainLoad *l);

/* The fraction of elapsed_ns that a counter going from prev_ns to now_ns ran: 0 when it went back or
 * no time passed; not clamped (a domain's host threads can keep several cores busy). */
double load_fraction(uint64_t prev_ns, uint64_t now_ns, uint64_t elapsed_ns);

/* Looks up the load of the ledger domain with key; NULL when unknown. */
typedef const DomainLoad *(*LoadLookup)(const char *key, void *userdata);

/*
 * What every domain in l keeps busy on each PU index (what PlacementRequest.pu_busy takes): each vCPU
 * counts its busy fraction on the PU it is counted on (1 when its load is unknown), and its host-side
 * threads count host_busy spread evenly over the PUs of its emulator pin. The sums are exact to 2^-40 of a
 * CPU, the same whatever order the ledger holds its domains in. Returns a new array of topology->npus
 * entries.
 */
double *load_pu_busy(const Ledger *l, LoadLookup lookup, void *userdata);

/*
 * The part of host_busy (a domain's host-side load, spread evenly over plan p's emulator pin) that runs
 * on cores where a busy thread runs: one of p's own busy vCPUs (vcpu_busy[i] >= LOAD_BUSY_THRESHOLD), or
 * other threads at least LOAD_BUSY_THRESHOLD busy in all by pu_busy (per PU index, as
 * PlacementRequest.pu_busy; NULL: only p's own vCPUs count; pu_busy_counts_p: it holds p's own vCPUs and
 * host share too, which are taken out). Beside them however thinly it is spread. 0 when the load is
 * unknown (vcpu_busy NULL) or p has no emulator pin.
 */
double load_own_host_beside(const Topology *t, const Plan *p, const double *vcpu_busy, double host_busy,
                            const double *pu_busy, bool pu_busy_counts_p);

/*
 * The part of host_busy (spread evenly over p's emulator pin) that is over one thread's worth on a core
 * where none of p's busy vCPUs runs: 1.4 cores on the one core (or the one PU) it has count 0.4, 0.7 on
 * each of two cores 0. Such a core runs two busy threads, whoever's; the host-side threads' own. 0 when
 * the load is unknown (vcpu_busy NULL) or p has no emulator pin.
 */
double load_own_host_over(const Topology *t, const Plan *p, const double *vcpu_busy, double host_busy);
