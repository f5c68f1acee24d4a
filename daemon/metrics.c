/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "http-server.h"
#include "cpu-stats.h"
#include "text-safe.h"

/* Scrapers are few: at most this many connections, and never more than a quarter of the descriptor
 * limit, so that libvirt, D-Bus and the configuration always find descriptors. */
#define METRICS_MAX_CONNECTIONS 32u
/* A page is served again for this long rather than rendered anew (docs/metrics.md). */
#define METRICS_MAX_AGE_MS 1000u

struct MetricsServer {
        Manager *manager;
        const StatsCache *stats;
        HttpServer *http;
};

static void label_escape(GString *out, const char *value)
{
        for (const char *p = value; *p; p++) {
                if (*p == '\\' || *p == '"')
                        g_string_append_c(out, '\\');
                if (*p == '\n')
                        g_string_append(out, "\\n");
                else
                        g_string_append_c(out, *p);
        }
}

static void header(GString *out, const char *name, const char *type, const char *help)
{
        g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A domain's name is its owner's text: written as placementctl and the log write it (text_safe()), so
 * that a page read on a terminal carries no control, bidi override or blank a name held. */
static void domain_labels(GString *out, const Decision *d)
{
        g_autofree char *name = text_safe(d->name);

        g_string_append(out, "{domain=\"");
        label_escape(out, name);
        g_string_append(out, "\",uuid=\"");
        label_escape(out, d->uuid);
        g_string_append(out, "\"");
}

static void render_decisions(GString *out, Manager *m)
{
        const ManagerStats *st = manager_stats(m);
        unsigned counts[_DECISION_RESULT_MAX];

        header(out, "placementd_decisions_total", "counter", "Decisions made, by policy and result.");
        for (int k = 0; k < _POLICY_MAX; k++)
                for (int r = 0; r < _DECISION_RESULT_MAX; r++)
                        g_string_append_printf(
                            out, "placementd_decisions_total{policy=\"%s\",result=\"%s\"} %llu\n",
                            policy_kind_to_string((PolicyKind)k),
                            decision_result_to_string((DecisionResult)r),
                            (unsigned long long)st->decisions[k][r]);
        manager_count(m, counts);
        header(out, "placementd_domains", "gauge", "Running domains placementd knows, by result.");
        for (int r = 0; r < _DECISION_RESULT_MAX; r++)
                g_string_append_printf(out, "placementd_domains{result=\"%s\"} %u\n",
                                       decision_result_to_string((DecisionResult)r), counts[r]);

        header(out, "placementd_event_to_pin_seconds", "histogram",
               "Time from a domain's start event to its last pin applied.");
        uint64_t cumulative = 0;
        for (int b = 0; b < MANAGER_LATENCY_BUCKETS; b++) {
                cumulative += st->latency_buckets[b];
                g_string_append_printf(out, "placementd_event_to_pin_seconds_bucket{le=\"%g\"} %llu\n",
                                       manager_latency_bounds[b], (unsigned long long)cumulative);
        }
        cumulative += st->latency_buckets[MANAGER_LATENCY_BUCKETS];
        g_string_append_printf(out, "placementd_event_to_pin_seconds_bucket{le=\"+Inf\"} %llu\n",
                               (unsigned long long)cumulative);
        g_string_append_printf(out, "placementd_event_to_pin_seconds_sum %.9f\n", st->latency_sum);
        g_string_append_printf(out, "placementd_event_to_pin_seconds_count %llu\n",
                               (unsigned long long)st->latency_count);
}

/* Hugepage pools, apart from general memory: their size and what domains leave free, by node and page size.
 */
static void render_hugepages(GString *out, const Topology *t, const Ledger *l)
{
        static const char *const names[2] = {"placementd_node_hugepages_bytes",
                                             "placementd_node_free_hugepages_bytes"};
        static const char *const help[2] = {
            "Memory of a NUMA node's hugepage pool of one page size (never counted as general memory).",
            "Memory of a NUMA node's hugepage pool of one page size not held by hugepage-backed domains."};

        for (unsigned k = 0; k < 2; k++) {
                header(out, names[k], "gauge", help[k]);
                for (unsigned n = 0; n < t->nnodes; n++)
                        for (unsigned i = 0; i < t->nodes[n].nhugepages; i++) {
                                uint64_t size = t->nodes[n].hugepages[i].size;
                                uint64_t v = k ? ledger_node_free_hugepages(l, n, size)
                                               : topology_node_hugepage_bytes(t, n, size);
                                g_string_append_printf(out, "%s{node=\"%u\",page_size=\"%llu\"} %llu\n",
                                                       names[k], t->nodes[n].os_index,
                                                       (unsigned long long)size, (unsigned long long)v);
                        }
        }
}

static void render_host(GString *out, Manager *m)
{
        const Topology *t = manager_topology(m);
        const Ledger *l = manager_ledger(m);
        const Config *c = manager_config(m);
        uint64_t sharing = 0;

        header(out, "placementd_node_free_cores", "gauge",
               "Whole cores with no vCPU and no CPU reserved for the host, per NUMA node.");
        for (unsigned n = 0; n < t->nnodes; n++) {
                const TopoNode *node = &t->nodes[n];
                unsigned free_cores = 0;
                for (unsigned k = node->core_first; k < node->core_first + node->ncores; k++) {
                        const TopoCore *core = &t->cores[k];
                        bool reserved = core->host_thread;
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                                reserved |= cpuset_has(c->placement.reserved_cpus, t->pus[p].os_index);
                        free_cores += ledger_core_free(l, k) && !reserved;
                }
                g_string_append_printf(out, "placementd_node_free_cores{node=\"%u\"} %u\n", node->os_index,
                                       free_cores);
        }
        header(out, "placementd_node_free_memory_bytes", "gauge",
               "Memory of a NUMA node not held by domains nor kept by MemoryReserve=.");
        for (unsigned n = 0; n < t->nnodes; n++) {
                if (!topology_node_memory_known(t, n))
                        continue; /* no size known: no figure rather than an invented one */
                /* saturated as the engine's host view does: MemoryReserve= may be up to 2^64 - 1 */
                uint64_t held = ledger_node_memory(l, n), reserve = c->placement.memory_reserve;
                uint64_t used = held > UINT64_MAX - reserve ? UINT64_MAX : held + reserve;
                uint64_t mem = t->nodes[n].memory;
                g_string_append_printf(out, "placementd_node_free_memory_bytes{node=\"%u\"} %llu\n",
                                       t->nodes[n].os_index,
                                       (unsigned long long)(mem > used ? mem - used : 0));
        }
        render_hugepages(out, t, l);
        for (unsigned k = 0; k < t->ncores; k++)
                if (ledger_core_load(l, k) >= 2)
                        sharing += ledger_core_load(l, k);
        header(out, "placementd_vcpus_sharing_core", "gauge",
               "vCPUs on a core that holds another vCPU (0 under explicit until the host is full).");
        g_string_append_printf(out, "placementd_vcpus_sharing_core %llu\n", (unsigned long long)sharing);
}

static void render_daemon(GString *out, Manager *m)
{
        const ManagerStats *st = manager_stats(m);

        header(out, "placementd_libvirt_connected", "gauge", "1 while connected to libvirt.");
        g_string_append_printf(out, "placementd_libvirt_connected %d\n", manager_connected(m) ? 1 : 0);
        header(out, "placementd_libvirt_reconnects_total", "counter",
               "Connections to libvirt lost and retried.");
        g_string_append_printf(out, "placementd_libvirt_reconnects_total %u\n", manager_reconnects(m));
        header(out, "placementd_config_reloads_total", "counter", "Configuration reloads, by outcome.");
        g_string_append_printf(out, "placementd_config_reloads_total{result=\"ok\"} %llu\n",
                               (unsigned long long)(st->reloads - st->reload_failures));
        g_string_append_printf(out, "placementd_config_reloads_total{result=\"failed\"} %llu\n",
                               (unsigned long long)st->reload_failures);
        header(out, "placementd_bus_limited_calls_total", "counter",
               "D-Bus calls of non-root callers that the per-user limit counts, by outcome.");
        g_string_append_printf(out, "placementd_bus_limited_calls_total{result=\"answered\"} %llu\n",
                               (unsigned long long)(st->bus_calls_limited - st->bus_calls_refused));
        g_string_append_printf(out, "placementd_bus_limited_calls_total{result=\"refused\"} %llu\n",
                               (unsigned long long)st->bus_calls_refused);
        header(out, "placementd_heal_passes_total", "counter",
               "Heal passes run: after departures, resizes or load changes, and each rebalance.");
        g_string_append_printf(out, "placementd_heal_passes_total %llu\n",
                               (unsigned long long)st->heal_passes);
        header(out, "placementd_heal_moves_total", "counter",
               "Domains moved by heal passes, rebalance's included.");
        g_string_append_printf(out, "placementd_heal_moves_total %llu\n",
                               (unsigned long long)st->heal_moves);
        header(out, "placementd_heal_thread_moves_total", "counter",
               "Of the heal moves, re-pins of host-side threads alone (vCPUs and memory stay).");
        g_string_append_printf(out, "placementd_heal_thread_moves_total %llu\n",
                               (unsigned long long)st->heal_thread_moves);
        header(out, "placementd_heal_memory_moved_bytes_total", "counter",
               "Memory the heal moves put on other nodes.");
        g_string_append_printf(out, "placementd_heal_memory_moved_bytes_total %llu\n",
                               (unsigned long long)st->heal_memory_moved);
        header(out, "placementd_heal_domain_reads_total", "counter",
               "Domains heal passes read from libvirt: to plan them, and again before moving them.");
        g_string_append_printf(out, "placementd_heal_domain_reads_total %llu\n",
                               (unsigned long long)st->heal_reads);
}

/* Measured load (smoothed): per vCPU busy fraction, and the cores a domain's host-side threads keep busy. */
static void render_load(GString *out, Manager *m)
{
        g_autoptr(GPtrArray) all = manager_list(m);
        bool any = false;

        for (unsigned i = 0; i < all->len && !any; i++)
                any = manager_load(m, ((const Decision *)g_ptr_array_index(all, i))->uuid) != NULL;
        if (!any)
                return;
        header(out, "placementd_domain_vcpu_busy_ratio", "gauge",
               "Smoothed fraction of time each vCPU ran (half-life 10 s rising, 30 s falling); "
               "0.5 and over counts as busy, and stays busy until under 0.4.");
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                const DomainLoad *l = manager_load(m, d->uuid);
                /* libvirt's vCPU ids, as the decision names them, while it counts the same vCPUs */
                bool ids = l && d->plan && d->plan->nvcpus == l->nvcpus;
                for (unsigned v = 0; l && v < l->nvcpus; v++) {
                        g_string_append(out, "placementd_domain_vcpu_busy_ratio");
                        domain_labels(out, d);
                        g_string_append_printf(out, ",vcpu=\"%u\"} %.4f\n",
                                               ids ? plan_vcpu_id(d->plan, v) : v, l->vcpu_busy[v]);
                }
        }
        header(out, "placementd_domain_host_busy_cores", "gauge",
               "Smoothed cores a domain's host-side threads (emulator, I/O threads, vhost) keep busy.");
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                const DomainLoad *l = manager_load(m, d->uuid);
                if (!l)
                        continue;
                g_string_append(out, "placementd_domain_host_busy_cores");
                domain_labels(out, d);
                g_string_append_printf(out, "} %.4f\n", l->host_busy);
        }
}

static void render_cpu(GString *out, Manager *m, const StatsCache *cache)
{
        g_autoptr(GHashTable) stats = stats_cache_table(cache);
        g_autoptr(GPtrArray) all = NULL;
        static const struct {
                const char *kind;
                size_t offset;
        } kinds[] = {
            {"vcpu", offsetof(DomainCpuStats, vcpu_ns)},
            {"host", offsetof(DomainCpuStats, host_ns)},
            {"user", offsetof(DomainCpuStats, user_ns)},
            {"system", offsetof(DomainCpuStats, system_ns)},
        };

        if (!stats)
                return;
        all = manager_list(m);
        header(out, "placementd_domain_cpu_seconds_total", "counter",
               "Host CPU time of a domain: vcpu = guest vCPUs, host = the host's own work for it (emulator, "
               "I/O threads, vhost); user and system split the total.");
        for (unsigned i = 0; i < all->len; i++) {
                const Decision *d = g_ptr_array_index(all, i);
                const DomainCpuStats *s = g_hash_table_lookup(stats, d->uuid);
                if (!s)
                        continue;
                for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
                        uint64_t ns = *(const uint64_t *)(const void *)((const char *)s + kinds[k].offset);
                        g_string_append(out, "placementd_domain_cpu_seconds_total");
                        domain_labels(out, d);
                        g_string_append_printf(out, ",kind=\"%s\"} %.9f\n", kinds[k].kind, (double)ns / 1e9);
                }
        }
}

char *metrics_render(Manager *m, const StatsCache *stats)
{
        GString *out = g_string_new(NULL);

        render_decisions(out, m);
        render_host(out, m);
        render_daemon(out, m);
        render_cpu(out, m, stats);
        render_load(out, m);
        return g_string_free(out, FALSE);
}

static char *render(void *userdata)
{
        MetricsServer *s = userdata;
        return metrics_render(s->manager, s->stats);
}

static unsigned max_connections(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return METRICS_MAX_CONNECTIONS;
        return (unsigned)MIN((rlim_t)METRICS_MAX_CONNECTIONS, MAX(rl.rlim_cur / 4, (rlim_t)1));
}

MetricsServer *metrics_server_new(struct event_base *base, Manager *m, const StatsCache *stats,
                                  const char *listen, char **ret_error)
{
        g_autofree char *host = NULL, *error = NULL;
        unsigned port;
        MetricsServer *s;

        if (config_split_listen(listen, &host, &port) < 0) {
                *ret_error = g_strdup_printf("[Metrics] Listen=%s is not ADDRESS:PORT", listen);
                errno = EINVAL;
                return NULL;
        }
        s = g_new0(MetricsServer, 1);
        s->manager = m;
        s->stats = stats;
        s->http = http_server_new(base, host, port, max_connections(),
                                  &(HttpResource){.path = "/metrics",
                                                  .content_type = "text/plain; version=0.0.4",
                                                  .render = render,
                                                  .userdata = s,
                                                  .max_age_ms = METRICS_MAX_AGE_MS},
                                  &error);
        if (!s->http) {
                int err = errno;
                *ret_error = g_strdup(error);
                metrics_server_free(s);
                errno = err;
                return NULL;
        }
        return s;
}

void metrics_server_free(MetricsServer *s)
{
        if (!s)
                return;
        http_server_free(s->http);
        g_free(s);
}
