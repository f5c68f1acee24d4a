/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl's offline commands: run the engine on any topology, no daemon needed. */
#include "placementctl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "decision-json.h"
#include "decision-text.h"
#include "hostmap.h"
#include "ledger.h"
#include "policy.h"
#include "size.h"
#include "topology.h"
#include "topology-load.h"
#include "trace.h"

static int load_topology(const char *source, Topology **ret)
{
        g_autofree char *error = NULL;

        if (!source) {
                fprintf(stderr,
                        "placementctl: --topology=SOURCE is required (host, FILE.xml or synthetic:DESC)\n");
                return -EINVAL;
        }
        if (topology_load(source, ret, &error) < 0) {
                fprintf(stderr, "placementctl: %s\n", error);
                return -EINVAL;
        }
        return 0;
}

/* One line per CPU kind, most performant first: its name, frequency and CPUs. */
static void print_core_kinds(const Topology *t)
{
        for (unsigned k = 0; k < t->ncore_kinds; k++) {
                g_autoptr(CpuSet) cpus = cpuset_new();
                g_autofree char *list = NULL;
                unsigned ncores = 0;

                for (unsigned c = 0; c < t->ncores; c++) {
                        if (t->cores[c].kind_rank != k)
                                continue;
                        ncores++;
                        for (unsigned p = t->cores[c].pu_first; p < t->cores[c].pu_first + t->cores[c].npus;
                             p++)
                                cpuset_add(cpus, t->pus[p].os_index);
                }
                list = cpuset_format(cpus);
                printf("core kind %u  %-16s %5u MHz  %3u cores  cpus %s\n", k,
                       t->core_kind_names[k] ? t->core_kind_names[k] : "(unnamed)", t->core_kind_max_mhz[k],
                       ncores, *list ? list : "(none)");
        }
}

/* "hugepages node 0: 32 x 2.0 MiB (64.0 MiB)", one line per pool; the pools are not in the memory above. */
static void print_pools(const Topology *t)
{
        char a[32], b[32];

        for (unsigned n = 0; n < t->nnodes; n++)
                for (unsigned i = 0; i < t->nodes[n].nhugepages; i++) {
                        const TopoPages *pool = &t->nodes[n].hugepages[i];
                        printf("hugepages node %u: %" PRIu64 " x %s (%s)\n", t->nodes[n].os_index,
                               pool->count, size_format(pool->size, a, sizeof(a)),
                               size_format(topology_node_hugepage_bytes(t, n, pool->size), b, sizeof(b)));
                }
}

static void print_topology_human(const Topology *t)
{
        char a[32];

        printf("source:   %s\n", t->source);
        unsigned stand_ins = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                stand_ins += t->nodes[n].no_local_memory;
        printf("host:     %u NUMA nodes%s, %u packages, %u cores, %u PUs (up to %u threads per core)\n",
               t->nnodes - stand_ins, stand_ins ? " (and CPUs local to none)" : "", t->npackages, t->ncores,
               t->npus, t->max_threads);
        for (unsigned n = 0; n < t->nnodes; n++) {
                g_autofree char *cpus = cpuset_format(t->nodes[n].cpus);
                printf("node %-3u  %10s  %-4s  %3u cores  cpus %s%s\n", t->nodes[n].os_index,
                       size_format(t->nodes[n].memory, a, sizeof(a)),
                       t->nodes[n].no_local_memory ? "none" : node_kind_to_string(t->nodes[n].kind),
                       t->nodes[n].ncores, *cpus ? cpus : "(none)",
                       t->nodes[n].no_local_memory ? "  (local to no NUMA node: used last)" : "");
        }
        print_core_kinds(t);
        print_pools(t);
        printf("distances%s:\n", t->distances_known ? "" : " (assumed)");
        for (unsigned i = 0; i < t->nnodes; i++) {
                printf("  ");
                for (unsigned j = 0; j < t->nnodes; j++) {
                        uint32_t d = topology_distance(t, i, j);
                        if (d == TOPOLOGY_UNREACHABLE)
                                printf("   -");
                        else
                                printf(" %3u", d);
                }
                printf("\n");
        }
        for (unsigned i = 0; t->notes && i < t->notes->len; i++)
                printf("note: %s\n", (const char *)g_ptr_array_index(t->notes, i));
}

int verb_topology(Ctl *c, char **args, unsigned nargs)
{
        g_autoptr(Topology) t = NULL;

        (void)args, (void)nargs;
        if (load_topology(c->topology, &t) < 0)
                return EXIT_USAGE;
        if (c->json) {
                g_autoptr(JsonNode) node = topology_to_json(t, TRUE);
                g_autofree char *text = json_to_text(node, TRUE);
                printf("%s\n", text);
        } else {
                print_topology_human(t);
        }
        return EXIT_OK;
}

static void print_decision_human(const Topology *t, const Plan *p)
{
        g_autofree char *text = plan_to_text(t, p);
        printf("start %s", text);
}

static int read_events(char **args, unsigned nargs, const char *trace_path, GPtrArray **ret)
{
        g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func((GDestroyNotify)trace_event_free);
        g_autofree char *error = NULL;

        if (trace_path && nargs) {
                fprintf(stderr,
                        "placementctl plan: give either --trace=FILE or NAME:VCPUS:MEMORY, not both\n");
                return -EINVAL;
        }
        if (trace_path) {
                if (trace_load_file(trace_path, ret, &error) < 0) {
                        fprintf(stderr, "placementctl plan: %s\n", error);
                        return -EINVAL;
                }
                return 0;
        }
        if (!nargs) {
                fprintf(stderr,
                        "placementctl plan: nothing to place: give NAME:VCPUS:MEMORY... or --trace=FILE\n");
                return -EINVAL;
        }
        for (unsigned i = 0; i < nargs; i++) {
                TraceEvent *e;
                if (trace_parse_spec(args[i], &e, &error) < 0) {
                        fprintf(stderr, "placementctl plan: %s\n", error);
                        return -EINVAL;
                }
                g_ptr_array_add(events, e);
        }
        *ret = g_steal_pointer(&events);
        return 0;
}

int verb_plan_offline(Ctl *c, char **args, unsigned nargs)
{
        g_autoptr(Topology) t = NULL;
        g_autoptr(Config) config = NULL;
        g_autoptr(GPtrArray) events = NULL;
        g_autoptr(Ledger) ledger = NULL;
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autofree char *error = NULL;
        bool json = c->json;

        if (c->config) {
                if (config_load_file(c->config, &config, &error) < 0) {
                        fprintf(stderr, "placementctl plan: %s\n", error);
                        return EXIT_USAGE;
                }
        } else {
                config = config_new_default();
        }
        if (c->policy) {
                int k = policy_kind_from_string(c->policy);
                if (k < 0) {
                        fprintf(stderr,
                                "placementctl plan: unknown policy '%s'; expected explicit or compat\n",
                                c->policy);
                        return EXIT_USAGE;
                }
                config->placement.policy = (PolicyKind)k;
        }
        if (read_events(args, nargs, c->trace, &events) < 0)
                return EXIT_USAGE;
        if (load_topology(c->topology, &t) < 0)
                return EXIT_USAGE;

        ledger = ledger_new(t);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "topology");
        json_builder_add_value(b, topology_to_json(t, FALSE));
        json_builder_set_member_name(b, "decisions");
        json_builder_begin_array(b);
        for (unsigned i = 0; i < events->len; i++) {
                const TraceEvent *e = g_ptr_array_index(events, i);
                if (e->op == TRACE_LOAD || e->op == TRACE_TICK)
                        continue; /* load and time are for `simulate`; a plan places by vCPU counts */
                json_builder_begin_object(b);
                json_builder_set_member_name(b, "event");
                json_builder_add_string_value(b, e->op == TRACE_START ? "start" : "stop");
                if (e->op == TRACE_STOP) {
                        if (ledger_release(ledger, e->name) < 0) {
                                fprintf(stderr,
                                        "placementctl plan: line %u: stop %s: no such running domain\n",
                                        e->line, e->name);
                                return EXIT_USAGE;
                        }
                        json_builder_set_member_name(b, "domain");
                        json_builder_add_string_value(b, e->name);
                        if (!json)
                                printf("stop %s\n", e->name);
                } else {
                        PlacementRequest req = {.name = e->name, .vcpus = e->vcpus, .memory = e->memory};
                        Plan *plan;
                        if (ledger_lookup(ledger, e->name)) {
                                fprintf(stderr, "placementctl plan: %s%u: start %s: already running\n",
                                        e->line ? "line " : "argument ", e->line ? e->line : i + 1, e->name);
                                return EXIT_USAGE;
                        }
                        plan = policy_place(t, ledger, &req, &config->placement);
                        decision_json_add_members(b, t, plan, FALSE);
                        if (!json)
                                print_decision_human(t, plan);
                        if (ledger_commit(ledger, e->name, plan) < 0) {
                                fprintf(stderr, "placementctl plan: %s: plan does not fit the host\n",
                                        e->name);
                                return EXIT_RUNTIME;
                        }
                }
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);

        if (json) {
                g_autoptr(JsonNode) root = json_builder_get_root(b);
                g_autofree char *text = json_to_text(root, TRUE);
                printf("%s\n", text);
        } else {
                g_autofree char *map = hostmap_render(t, ledger, config->placement.reserved_cpus);
                printf("\n%s", map);
        }
        if (c->svg)
                return map_svg_offline(c, t, ledger, config->placement.reserved_cpus);
        return EXIT_OK;
}
