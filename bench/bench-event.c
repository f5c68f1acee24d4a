/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event to pin, in-process: the daemon's Manager on libvirt's test driver (test:///default) and the
 * libevent loop, as placementd runs it. Two runs of N domain starts (2 vCPUs, 1 GiB each):
 *
 *   burst   all N started back to back (virDomainCreateXML), then the loop runs until every one is
 *           placed: each start waits behind the ones before it, as in a boot storm;
 *   paced   one start at a time, the next once the previous is placed: the unqueued latency.
 *
 * Per domain: start-to-last-pin = from just before virDomainCreateXML to the manager's decision callback
 * (which runs after the vCPU pins, numatune, emulator pin and metadata are applied); and the daemon's
 * own figure, Decision.latency_usec (from the moment the lifecycle callback runs to the last pin). Prints
 * p50 / p99 / max, throughput and a Markdown table; --csv DIR writes event.csv.
 *
 * Checks (exit 1 when one breaks, never on a time): every domain placed exactly once, placed or
 * overcommitted, the live vCPU pins equal to its plan, the ledger and the event-to-pin histogram
 * counting each one once, and the ledger back to where it was after all are destroyed.
 */
#include <event2/event.h>
#include <getopt.h>
#include <libvirt/libvirt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "manager-internal.h"
#include "topology-load.h"
#include "util.h"
#include "virt-domain.h"
#include "virt-event.h"

#define TOPOLOGY   "synthetic:pack:2 numa:1(memory=1024GiB) l3:1 core:2 pu:2"
#define URI        "test:///default"
#define PREFIX     "ev-"
#define TIMEOUT_NS (UINT64_C(300) * 1000000000u)

typedef struct Options {
        unsigned domains, vcpus;
        int log_level;
        const char *csv_dir;
} Options;

typedef struct Run {
        const char *name; /* burst, paced */
        unsigned n;
        uint64_t *start_ns, *done_ns; /* [n] */
        uint64_t *daemon_us;          /* [n] Decision.latency_usec */
        unsigned *placed;             /* [n] decision callbacks with a decision */
        unsigned *results;            /* [n] DecisionResult of the last one */
        unsigned stopped, foreign;    /* stop callbacks; callbacks for domains not ours */
        uint64_t issue_ns;            /* time spent inside virDomainCreateXML, all starts */
} Run;

static struct event_base *base;
static Run *current;
static unsigned failures;

static void fail(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void fail(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("CHECK FAILED: ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        va_end(ap);
        failures++;
}

static void usage(FILE *f)
{
        fprintf(f, "Usage: bench-event [--domains=N] [--vcpus=N] [--log-level=LEVEL] [--csv=DIR]\n"
                   "Defaults: 1000 domains of 2 vCPUs and 1 GiB per run (BENCH_SIZE=big: 5000), log level\n"
                   "err (the daemon's default is info: --log-level=info writes a line per decision to\n"
                   "stderr).\n");
}

static void parse_options(int argc, char **argv, Options *o)
{
        static const struct option options[] = {
            {"domains", required_argument, NULL, 'd'},
            {"vcpus", required_argument, NULL, 'v'},
            {"log-level", required_argument, NULL, 'l'},
            {"csv", required_argument, NULL, 'c'},
            {"help", no_argument, NULL, 'h'},
            {},
        };
        int c;

        *o = (Options){.domains = bench_env_big() ? 5000 : 1000, .vcpus = 2, .log_level = LOG_ERR};
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'd':
                        o->domains = bench_parse_unsigned("--domains", optarg);
                        break;
                case 'v':
                        o->vcpus = bench_parse_unsigned("--vcpus", optarg);
                        break;
                case 'l':
                        o->log_level = log_level_from_string(optarg);
                        if (o->log_level < 0)
                                bench_usage_exit(usage, false);
                        break;
                case 'c':
                        o->csv_dir = optarg;
                        break;
                default:
                        bench_usage_exit(usage, c == 'h');
                }
        }
        if (optind < argc || o->domains == 0 || o->domains > 99999 || o->vcpus == 0 || o->vcpus > 8)
                bench_usage_exit(usage, false);
}

/* The index of one of our domains ("ev-00042" -> 42), or -1. */
static int domain_index(const char *name, unsigned n)
{
        guint64 i;

        if (!g_str_has_prefix(name, PREFIX) ||
            !g_ascii_string_to_unsigned(name + strlen(PREFIX), 10, 0, n - 1, &i, NULL))
                return -1;
        return (int)i;
}

static void on_decision(Manager *m, const Decision *d, const char *uuid, const char *name, void *userdata)
{
        uint64_t now = bench_now_ns();
        Run *r = current;
        int i;
        (void)m;
        (void)uuid;
        (void)userdata;

        if (!r)
                return;
        i = domain_index(name, r->n);
        if (i < 0) {
                r->foreign++;
                return;
        }
        if (!d) {
                r->stopped++;
                return;
        }
        r->placed[i]++;
        r->results[i] = d->result;
        r->done_ns[i] = now;
        r->daemon_us[i] = d->latency_usec;
}

static void run_init(Run *r, const char *name, unsigned n)
{
        *r = (Run){.name = name, .n = n};
        r->start_ns = g_new0(uint64_t, n);
        r->done_ns = g_new0(uint64_t, n);
        r->daemon_us = g_new0(uint64_t, n);
        r->placed = g_new0(unsigned, n);
        r->results = g_new0(unsigned, n);
}

static void run_done(Run *r)
{
        g_free(r->start_ns);
        g_free(r->done_ns);
        g_free(r->daemon_us);
        g_free(r->placed);
        g_free(r->results);
}

static unsigned placed_count(const Run *r)
{
        unsigned n = 0;
        for (unsigned i = 0; i < r->n; i++)
                n += r->placed[i] > 0;
        return n;
}

/* Runs the loop until cond holds or the timeout; false on timeout. */
static bool spin(bool (*cond)(const Run *, unsigned), const Run *r, unsigned arg)
{
        uint64_t end = bench_now_ns() + TIMEOUT_NS;
        while (!cond(r, arg)) {
                if (bench_now_ns() > end)
                        return false;
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        }
        return true;
}

static bool all_placed(const Run *r, unsigned want)
{
        return placed_count(r) >= want;
}

static bool one_placed(const Run *r, unsigned i)
{
        return r->placed[i] > 0;
}

static bool all_stopped(const Run *r, unsigned want)
{
        return r->stopped >= want;
}

static void start_one(virConnectPtr conn, Run *r, unsigned i, const Options *o)
{
        char name[32];
        g_autofree char *error = NULL;
        uint64_t t;

        snprintf(name, sizeof(name), PREFIX "%05u", i);
        r->start_ns[i] = t = bench_now_ns();
        if (virt_test_domain_start(conn, name, o->vcpus, GiB, &error) < 0) {
                fprintf(stderr, "bench-event: cannot start %s: %s\n", name, error);
                exit(2);
        }
        r->issue_ns += bench_now_ns() - t;
}

/* The live pins of every domain equal its plan; the ledger counts each once. */
static void check_run(Manager *m, virConnectPtr conn, const Run *r, unsigned ledger_before,
                      uint64_t hist_before)
{
        unsigned placed = 0, twice = 0, bad_result = 0, pins_differ = 0, full = 0, over = 0;

        for (unsigned i = 0; i < r->n; i++) {
                char name[32];
                const Decision *d;
                virDomainPtr dom;
                CpuSet **pins = NULL;

                placed += r->placed[i] > 0;
                twice += r->placed[i] > 1;
                full += r->results[i] == DECISION_PLACED;
                over += r->results[i] == DECISION_OVERCOMMITTED;
                if (r->results[i] != DECISION_PLACED && r->results[i] != DECISION_OVERCOMMITTED)
                        bad_result++;
                snprintf(name, sizeof(name), PREFIX "%05u", i);
                d = manager_lookup(m, name);
                dom = virDomainLookupByName(conn, name);
                if (!d || !d->plan || !dom ||
                    virt_domain_get_vcpu_pins(dom, d->plan->nvcpus, d->plan->vcpu_ids, &pins, NULL) < 0) {
                        pins_differ++;
                } else {
                        for (unsigned v = 0; v < d->plan->nvcpus; v++)
                                if (!cpuset_equal(pins[v], d->plan->vcpu_pins[v])) {
                                        pins_differ++;
                                        break;
                                }
                        virt_pins_free(pins, d->plan->nvcpus);
                }
                if (dom)
                        virDomainFree(dom);
        }
        if (placed != r->n)
                fail("%s: %u of %u domains placed", r->name, placed, r->n);
        if (twice)
                fail("%s: %u domains placed more than once", r->name, twice);
        if (bad_result)
                fail("%s: %u domains neither placed nor overcommitted", r->name, bad_result);
        if (pins_differ)
                fail("%s: %u domains whose live vCPU pins differ from their plan", r->name, pins_differ);
        if (ledger_count(manager_ledger(m)) != ledger_before + r->n)
                fail("%s: the ledger holds %u domains, expected %u", r->name,
                     ledger_count(manager_ledger(m)), ledger_before + r->n);
        if (manager_stats(m)->latency_count != hist_before + r->n)
                fail("%s: the event-to-pin histogram counted %llu, expected %u", r->name,
                     (unsigned long long)(manager_stats(m)->latency_count - hist_before), r->n);
        printf("%s: %u of %u domains placed exactly once (%u placed, %u overcommitted), live pins = plan: "
               "%s\n",
               r->name, placed - twice, r->n, full, over, pins_differ ? "NO" : "yes");
}

static void destroy_all(virConnectPtr conn, Run *r, Manager *m, unsigned ledger_before)
{
        for (unsigned i = 0; i < r->n; i++) {
                char name[32];
                snprintf(name, sizeof(name), PREFIX "%05u", i);
                if (virt_domain_destroy_by_name(conn, name, NULL) < 0)
                        fail("%s: cannot destroy %s", r->name, name);
        }
        if (!spin(all_stopped, r, r->n))
                fail("%s: %u of %u stop events seen within the timeout", r->name, r->stopped, r->n);
        if (ledger_count(manager_ledger(m)) != ledger_before)
                fail("%s: %u domains left in the ledger after the stops, expected %u", r->name,
                     ledger_count(manager_ledger(m)), ledger_before);
}

typedef struct Figures {
        double p50_ms, p99_ms, max_ms, d50_us, d99_us, dmax_us, wall_s, rate, issue_ms;
        unsigned placed, overcommitted;
        long preempted; /* involuntary context switches during the run */
} Figures;

static Figures figures(const Run *r)
{
        g_autofree double *lat = g_new(double, r->n);
        g_autofree double *own = g_new(double, r->n);
        uint64_t first = UINT64_MAX, last = 0;
        Figures f = {0};

        for (unsigned i = 0; i < r->n; i++) {
                lat[i] = (double)(r->done_ns[i] - r->start_ns[i]) / 1e6;
                own[i] = (double)r->daemon_us[i];
                first = MIN(first, r->start_ns[i]);
                last = MAX(last, r->done_ns[i]);
                f.placed += r->results[i] == DECISION_PLACED;
                f.overcommitted += r->results[i] == DECISION_OVERCOMMITTED;
        }
        f.p50_ms = bench_percentile(lat, r->n, 50);
        f.p99_ms = bench_percentile(lat, r->n, 99);
        f.max_ms = bench_percentile(lat, r->n, 100);
        f.d50_us = bench_percentile(own, r->n, 50);
        f.d99_us = bench_percentile(own, r->n, 99);
        f.dmax_us = bench_percentile(own, r->n, 100);
        f.wall_s = (double)(last - first) / 1e9;
        f.rate = f.wall_s > 0 ? r->n / f.wall_s : 0;
        f.issue_ms = (double)r->issue_ns / 1e6;
        return f;
}

static long involuntary_switches(void)
{
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_nivcsw;
}

static Figures run_burst(Manager *m, virConnectPtr conn, Run *r, const Options *o)
{
        unsigned ledger_before = ledger_count(manager_ledger(m));
        uint64_t hist_before = manager_stats(m)->latency_count;
        long preempted = involuntary_switches();
        Figures f;

        current = r;
        for (unsigned i = 0; i < r->n; i++)
                start_one(conn, r, i, o);
        if (!spin(all_placed, r, r->n))
                fail("burst: only %u of %u placed within the timeout", placed_count(r), r->n);
        /* a late duplicate would arrive in the next iterations: give it the chance */
        for (unsigned i = 0; i < 100; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        f = figures(r);
        f.preempted = involuntary_switches() - preempted;
        check_run(m, conn, r, ledger_before, hist_before);
        destroy_all(conn, r, m, ledger_before);
        current = NULL;
        return f;
}

static Figures run_paced(Manager *m, virConnectPtr conn, Run *r, const Options *o)
{
        unsigned ledger_before = ledger_count(manager_ledger(m));
        uint64_t hist_before = manager_stats(m)->latency_count;
        long preempted = involuntary_switches();
        Figures f;

        current = r;
        for (unsigned i = 0; i < r->n; i++) {
                start_one(conn, r, i, o);
                if (!spin(one_placed, r, i)) {
                        fail("paced: %s%05u not placed within the timeout", PREFIX, i);
                        break;
                }
        }
        for (unsigned i = 0; i < 100; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        f = figures(r);
        f.preempted = involuntary_switches() - preempted;
        check_run(m, conn, r, ledger_before, hist_before);
        destroy_all(conn, r, m, ledger_before);
        current = NULL;
        return f;
}

static void print_row(const char *what, const Run *r, const Figures *f)
{
        printf(
            "| %s | %u | %.2f | %.2f | %.2f | %.0f / %.0f / %.0f | %.3f | %.0f | %.1f | %u / %u | %ld |\n",
            what, r->n, f->p50_ms, f->p99_ms, f->max_ms, f->d50_us, f->d99_us, f->dmax_us, f->wall_s,
            f->rate, f->issue_ms, f->placed, f->overcommitted, f->preempted);
}

static void csv_row(FILE *csv, const Run *r, const Figures *f, const Options *o)
{
        if (!csv)
                return;
        fprintf(csv, "%s,%u,%u,%.3f,%.3f,%.3f,%.0f,%.0f,%.0f,%.4f,%.1f,%.2f,%u,%u,%ld\n", r->name, r->n,
                o->vcpus, f->p50_ms, f->p99_ms, f->max_ms, f->d50_us, f->d99_us, f->dmax_us, f->wall_s,
                f->rate, f->issue_ms, f->placed, f->overcommitted, f->preempted);
}

int main(int argc, char **argv)
{
        Options o;
        Topology *t = NULL;
        g_autofree char *error = NULL;
        Manager *m;
        virConnectPtr conn;
        Run burst, paced;
        Figures fb, fp;
        FILE *csv;
        const ManagerStats *st;

        parse_options(argc, argv, &o);
        csv = bench_open_csv(o.csv_dir, "event.csv");
        base = event_base_new();
        if (!base || virt_event_register(base) < 0) {
                fprintf(stderr, "bench-event: cannot set up the event loop\n");
                return 2;
        }
        virt_errors_quiet();
        log_set_max_level(o.log_level);
        if (topology_load(TOPOLOGY, &t, &error) < 0) {
                fprintf(stderr, "bench-event: %s\n", error);
                return 2;
        }
        m = manager_new(base, t, config_new_default(), URI);
        manager_set_callbacks(m, &(ManagerCallbacks){.decision_changed = on_decision}, NULL);
        manager_start(m);
        if (!manager_connected(m)) {
                fprintf(stderr, "bench-event: not connected to " URI "\n");
                return 2;
        }
        conn = virConnectOpen(URI);

        printf("## Event to pin (in-process, libvirt test driver)\n\n"
               "Manager + libevent loop + " URI ", topology `%s` (8 PUs, 4 cores), default config "
               "(explicit, Apply=yes); %u domains of %u vCPUs and 1 GiB per run, all left running until "
               "the end of the run; log level %d.\n\n",
               TOPOLOGY + strlen("synthetic:"), o.domains, o.vcpus, o.log_level);

        run_init(&burst, "burst", o.domains);
        fb = run_burst(m, conn, &burst, &o);
        run_init(&paced, "paced", o.domains);
        fp = run_paced(m, conn, &paced, &o);

        printf(
            "\n| run | domains | start to last pin p50 (ms) | p99 (ms) | max (ms) | daemon's latency_usec "
            "p50 / p99 / max (us) | first start to last pin (s) | domains per second | time inside "
            "virDomainCreateXML (ms) | placed / overcommitted | involuntary context switches |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        print_row("burst: all started, then the loop runs", &burst, &fb);
        print_row("paced: one start at a time", &paced, &fp);
        if (csv) {
                fprintf(csv,
                        "run,domains,vcpus,p50_ms,p99_ms,max_ms,daemon_p50_us,daemon_p99_us,daemon_max_us,"
                        "wall_s,per_second,create_ms,placed,overcommitted,preempted\n");
                csv_row(csv, &burst, &fb, &o);
                csv_row(csv, &paced, &fp, &o);
                fclose(csv);
        }
        st = manager_stats(m);
        printf("\nManagerStats event-to-pin histogram: %llu decisions, mean %.1f us; buckets (s, not "
               "cumulative):",
               (unsigned long long)st->latency_count,
               st->latency_count ? st->latency_sum / (double)st->latency_count * 1e6 : 0.0);
        for (int b = 0; b <= MANAGER_LATENCY_BUCKETS; b++) {
                if (!st->latency_buckets[b])
                        continue;
                if (b < MANAGER_LATENCY_BUCKETS)
                        printf(" le %g: %llu", manager_latency_bounds[b],
                               (unsigned long long)st->latency_buckets[b]);
                else
                        printf(" +Inf: %llu", (unsigned long long)st->latency_buckets[b]);
        }
        printf("\n");
        printf("foreign decision callbacks (the driver's own domain): %u\n", burst.foreign + paced.foreign);
        printf("Checks: %s\n", failures ? "FAILED" : "every domain placed exactly once, pins applied: ok");

        run_done(&burst);
        run_done(&paced);
        virConnectClose(conn);
        manager_set_callbacks(m, &(ManagerCallbacks){0}, NULL);
        manager_free(m);
        for (unsigned i = 0; i < 50 && (virt_event_handle_count() || virt_event_timeout_count()); i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        return failures ? 1 : 0;
}
