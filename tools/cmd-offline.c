/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl's offline commands: run the engine on any topology, no daemon needed. */
#include "placementctl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "decision-json.h"
#include "hostmap-json.h"
#include "decision-text.h"
#include "domain-request.h"
#include "hostmap.h"
#include "ledger.h"
#include "policy.h"
#include "size.h"
#include "text-safe.h"
#include "topology.h"
#include "topology-load.h"
#include "trace.h"

static int load_topology(const char *source, Topology **ret)
{
        g_autofree char *error = NULL;

        if (!source) {
                ctl_error("placementctl: --topology=SOURCE is required (host, FILE.xml or synthetic:DESC)");
                return -EINVAL;
        }
        if (topology_load(source, ret, &error) < 0) {
                ctl_error("placementctl: %s", error);
                return -EINVAL;
        }
        return 0;
}

/* One line per CPU kind, most performant first: its name, frequency and CPUs. */
static void print_core_kinds(const Topology *t)
{
        for (unsigned k = 0; k < t->ncore_kinds; k++) {
                g_autoptr(CpuSet) cpus = cpuset_new();
                g_autofree char *list = NULL, *name = NULL;
                char mhz[16] = "?"; /* an export without FrequencyMaxMHz does not say it */
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
                /* the name hwloc's CoreType gives, as the file says it */
                name = t->core_kind_names[k] && *t->core_kind_names[k] ? text_safe(t->core_kind_names[k])
                                                                       : g_strdup("(unnamed)");
                if (t->core_kind_max_mhz[k])
                        g_snprintf(mhz, sizeof(mhz), "%u", t->core_kind_max_mhz[k]);
                printf("core kind %u  %-16s %5s MHz  %3u cores  cpus %s\n", k, name, mhz, ncores,
                       *list ? list : "(none)");
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
        g_autofree char *source = text_terminal_safe(t->source);

        printf("source:   %s\n", source);
        unsigned stand_ins = 0;

        for (unsigned n = 0; n < t->nnodes; n++)
                stand_ins += t->nodes[n].no_local_memory;
        printf("host:     %u NUMA node%s%s, %u package%s, %u core%s, %u PU%s (up to %u thread%s per core)\n",
               t->nnodes - stand_ins, t->nnodes - stand_ins == 1 ? "" : "s",
               stand_ins ? " (and CPUs local to none)" : "", t->npackages, t->npackages == 1 ? "" : "s",
               t->ncores, t->ncores == 1 ? "" : "s", t->npus, t->npus == 1 ? "" : "s", t->max_threads,
               t->max_threads == 1 ? "" : "s");
        for (unsigned n = 0; n < t->nnodes; n++) {
                g_autofree char *cpus = cpuset_format(t->nodes[n].cpus);
                printf("node %-3u  %10s  %-4s  %3u cores  cpus %s%s\n", t->nodes[n].os_index,
                       topology_node_memory_text(t, n, a, sizeof(a)),
                       t->nodes[n].no_local_memory ? "none" : node_kind_to_string(t->nodes[n].kind),
                       t->nodes[n].ncores, *cpus ? cpus : "(none)",
                       t->nodes[n].no_local_memory ? "  (local to no NUMA node: used last)" : "");
        }
        print_core_kinds(t);
        print_pools(t);
        /* rows and columns labelled with node numbers: hwloc's order is not always theirs (SNC with HBM
         * lists 0, 8, 1, 9...), as numactl --hardware labels them */
        printf("distances%s:\n  node", t->distances_known ? "" : " (assumed)");
        for (unsigned j = 0; j < t->nnodes; j++)
                printf(" %4u", t->nodes[j].os_index);
        printf("\n");
        for (unsigned i = 0; i < t->nnodes; i++) {
                printf("  %4u", t->nodes[i].os_index);
                for (unsigned j = 0; j < t->nnodes; j++) {
                        uint32_t d = topology_distance(t, i, j);
                        if (d == TOPOLOGY_UNREACHABLE)
                                printf("    -");
                        else
                                printf(" %4u", d);
                }
                printf("\n");
        }
        for (unsigned i = 0; t->notes && i < t->notes->len; i++) {
                /* a note quotes the file (a node's unknown kind) */
                g_autofree char *note = text_terminal_safe(g_ptr_array_index(t->notes, i));
                printf("note: %s\n", note);
        }
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
                ctl_print_json(text);
        } else {
                print_topology_human(t);
        }
        return EXIT_OK;
}

static void print_decision_human(const Topology *t, const Plan *p, bool explain)
{
        g_autofree char *text = plan_to_text(t, p);
        printf("start %s", text);
        if (explain) {
                g_autofree char *why = plan_explain(t, p);
                printf("%s\n", why);
        }
}

/* The --domain files and the NAME:VCPUS:MEMORY arguments in the order the command line gives them; or
 * the trace. */
static int read_events(const Ctl *c, char **args, unsigned nargs, GPtrArray **ret)
{
        g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func((GDestroyNotify)trace_event_free);
        g_autofree char *error = NULL;
        bool given = nargs || c->domains->len;

        if (c->trace && given) {
                ctl_error("placementctl %s: give either --trace=FILE or --domain=FILE.xml and "
                          "NAME:VCPUS:MEMORY, not both",
                          c->verb);
                return -EINVAL;
        }
        if (c->trace) {
                if (trace_load_file(c->trace, ret, &error) < 0) {
                        ctl_error("placementctl %s: %s", c->verb, error);
                        return -EINVAL;
                }
                return 0;
        }
        if (!given) {
                ctl_error(
                    "placementctl %s: nothing to place: give --domain=FILE.xml, NAME:VCPUS:MEMORY... or "
                    "--trace=FILE",
                    c->verb);
                return -EINVAL;
        }
        for (unsigned d = 0, a = 0; d < c->domains->len || a < nargs;) {
                const char *file = d < c->domains->len ? g_ptr_array_index(c->domains, d) : NULL;
                bool from_file =
                    file && (a >= nargs || ctl_arg_position(c, file) < ctl_arg_position(c, args[a]));
                TraceEvent *e;
                if ((from_file ? trace_domain_event(file, &e, &error)
                               : trace_parse_spec(args[a], &e, &error)) < 0) {
                        ctl_error("placementctl %s: %s", c->verb, error);
                        return -EINVAL;
                }
                g_ptr_array_add(events, e);
                d += from_file;
                a += !from_file;
        }
        *ret = g_steal_pointer(&events);
        return 0;
}

/* Every start of a domain not running, and every stop and load line of one running, checked before anything
 * is printed: a refused list prints nothing, as any other usage error. FILE:LINE as the trace's other
 * errors (and simulate's) name them: a trace plan takes, simulate takes too (a load line is ignored here,
 * but one naming no running domain is the same error as there). */
static int check_names(const Ctl *c, const GPtrArray *events)
{
        g_autoptr(GHashTable) running = g_hash_table_new(g_str_hash, g_str_equal);

        for (unsigned i = 0; i < events->len; i++) {
                const TraceEvent *e = g_ptr_array_index(events, i);
                const char *what = NULL;
                if (e->op == TRACE_START && !g_hash_table_add(running, e->name))
                        what = "already running";
                else if (e->op == TRACE_STOP && !g_hash_table_remove(running, e->name))
                        what = "no such running domain";
                else if (e->op == TRACE_LOAD && !g_hash_table_contains(running, e->name))
                        what = "no such running domain";
                if (!what)
                        continue;
                g_autofree char *name = text_safe(e->name); /* a domain's name, as its owner chose it */
                const char *verb = e->op == TRACE_START ? "start" : e->op == TRACE_STOP ? "stop" : "load";
                if (e->line)
                        ctl_error("placementctl %s: %s:%u: %s %s: %s", c->verb, c->trace, e->line, verb,
                                  name, what);
                else
                        ctl_error("placementctl %s: argument %u: %s %s: %s", c->verb, i + 1, verb, name,
                                  what);
                return -EINVAL;
        }
        return 0;
}

/* A domain whose definition opts out: placed by nobody, as the daemon skips it (what its own pins take is
 * held: definition_pins_plan(), held is that plan, NULL when it holds nothing). Its object has the keys of
 * every decision, as the daemon's: the pins and nodes it holds, or empty ones. */
static void skip_domain(JsonBuilder *b, const Topology *t, const TraceEvent *e, const Plan *held,
                        const char *why, bool json)
{
        char a[32];

        if (held) {
                decision_json_add_members(b, t, held, FALSE);
                /* a member set again keeps its place and takes the new value */
                json_builder_set_member_name(b, "result");
                json_builder_add_string_value(b, "skipped");
                json_builder_set_member_name(b, "reason");
                json_builder_add_string_value(b, why);
        } else {
                decision_json_add_unplanned(b, e->name, e->vcpus, e->memory, "skipped", why);
        }
        if (!json) {
                g_autofree char *name = text_safe(e->name), *reason = text_safe(why);
                printf("start %s (%u vCPU%s, %s): skipped\n  why: %s\n", name, e->vcpus,
                       e->vcpus == 1 ? "" : "s", size_format(e->memory, a, sizeof(a)), reason);
        }
}

/* The pins a definition's <vcpupin> elements make (a vCPU without one runs on <vcpu cpuset>, or floats),
 * as a plan the ledger holds (what the daemon adopts from the live pins). */
static Plan *definition_pins_plan(const Topology *t, const PlacementParams *params, const Ledger *ledger,
                                  const PlacementRequest *req, const DomainSpec *spec)
{
        g_autofree CpuSet **pins = g_new0(CpuSet *, MAX(req->vcpus, 1));
        Plan *plan;

        for (unsigned i = 0; i < req->vcpus; i++) {
                unsigned id = spec->vcpu_ids ? spec->vcpu_ids[i] : i;
                pins[i] = (CpuSet *)spec->vcpu_cpuset;
                for (unsigned k = 0; spec->vcpupins && k < spec->vcpupins->len; k++) {
                        const MetaVcpu *v = &g_array_index(spec->vcpupins, MetaVcpu, k);
                        if (v->id == id && v->cpuset)
                                pins[i] = v->cpuset;
                }
        }
        plan = policy_adopt(t, ledger, req, pins, params);
        plan_set_vcpu_ids(plan, spec->vcpu_ids, req->vcpus);
        return plan;
}

/* One start: the domain's own constraints and opt-outs when it comes from domain XML. Returns an exit
 * code. */
static int start_domain(const Ctl *c, const Topology *t, const Config *config, Ledger *ledger,
                        JsonBuilder *b, const TraceEvent *e, bool explain)
{
        PlacementRequest req = {.name = e->name, .vcpus = e->vcpus, .memory = e->memory};
        PlacementParams params = config->placement;
        const char *why = NULL;
        g_auto(RequestShape) shape = {0};
        g_autofree char *name = text_safe(e->name); /* a domain's name, as its owner chose it */
        Plan *plan = NULL;

        if (e->domain) {
                /* as the daemon: pins only of vCPUs not plugged in pin nothing that runs */
                DomainSpec user = *e->domain;
                user.has_vcpupin =
                    user.has_vcpupin && !domain_spec_pins_unplugged_only(e->domain, e->domain);
                why = domain_spec_opt_out(&user);
        }
        if (e->domain) {
                const char *unknown;
                req = domain_request(e->domain, e->domain);
                domain_request_shape(e->domain, t, &req, &shape);
                /* as the daemon: the policy its metadata chooses, skipped or not */
                params.policy = domain_request_policy(e->domain, params.policy, &unknown);
                if (unknown) {
                        g_autofree char *policy = text_safe(unknown);
                        ctl_warning(
                            "placementctl %s: warning: %s: unknown policy '%s' in its metadata (explicit, "
                            "compat), using %s",
                            c->verb, name, policy, policy_kind_to_string(params.policy));
                }
        }
        if (why) {
                g_autofree char *counted = NULL;
                if (e->domain) {
                        bool pinned = e->domain->vcpupins && e->domain->vcpupins->len;
                        /* as the daemon: the pins its definition makes are taken, and the memory it binds
                         * (also when its vCPUs float over the host or its <vcpu cpuset>: no pin) */
                        if (pinned || (req.memory_source != MEMORY_SOURCE_NONE && req.memory_nodes)) {
                                g_autofree CpuSet **floating = g_new0(CpuSet *, MAX(req.vcpus, 1));
                                plan = pinned ? definition_pins_plan(t, &params, ledger, &req, e->domain)
                                              : policy_adopt(t, ledger, &req, floating, &params);
                                if (ledger_commit(ledger, e->name, plan) < 0) {
                                        ctl_error("placementctl %s: %s: what it holds (%s) does not fit the "
                                                  "host",
                                                  c->verb, name, pinned ? "its pins" : "its bound memory");
                                        return EXIT_RUNTIME;
                                }
                                why = counted = g_strdup_printf(
                                    "%s; %s", why,
                                    pinned ? "its pins are counted as they run"
                                           : "its memory is counted where its definition binds it");
                        }
                }
                skip_domain(b, t, e, plan, why, c->json);
                return EXIT_OK;
        }
        plan = policy_place(t, ledger, &req, &params);
        decision_json_add_members(b, t, plan, explain);
        if (!c->json)
                print_decision_human(t, plan, explain);
        if (ledger_commit(ledger, e->name, plan) < 0) {
                ctl_error("placementctl %s: %s: plan does not fit the host", c->verb, name);
                return EXIT_RUNTIME;
        }
        return EXIT_OK;
}

void ctl_warn_unknown_cpus(const Ctl *c, const Config *config, const Topology *t)
{
        g_autoptr(GPtrArray) unknown = config_host_warnings(config, t);

        for (unsigned i = 0; i < unknown->len; i++)
                ctl_warning("placementctl %s: warning: %s: %s", c->verb, c->config ? c->config : "",
                            (const char *)g_ptr_array_index(unknown, i));
}

int ctl_load_config(const Ctl *c, Config **ret)
{
        g_autoptr(Config) config = NULL;
        g_autofree char *error = NULL;

        if (c->config) {
                if (config_load_file(c->config, &config, &error) < 0) {
                        /* one problem a line; a value quoted from the file is escaped */
                        ctl_error_lines("placementctl %s: %s", c->verb, error);
                        return -EINVAL;
                }
        } else {
                config = config_new_default();
        }
        if (c->policy) {
                int k = policy_kind_from_string(c->policy);
                if (k < 0) {
                        ctl_error("placementctl %s: unknown policy '%s'; expected explicit or compat",
                                  c->verb, c->policy);
                        return -EINVAL;
                }
                config->placement.policy = (PolicyKind)k;
        }
        *ret = g_steal_pointer(&config);
        return 0;
}

/* plan and explain: every event in turn on one ledger; explain adds the candidates of each start. */
static int run_offline(Ctl *c, char **args, unsigned nargs, bool explain)
{
        g_autoptr(Topology) t = NULL;
        g_autoptr(Config) config = NULL;
        g_autoptr(GPtrArray) events = NULL;
        g_autoptr(Ledger) ledger = NULL;
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(MapSvg) svg = NULL;
        bool json = c->json;
        int code;

        if (ctl_load_config(c, &config) < 0 || read_events(c, args, nargs, &events) < 0 ||
            check_names(c, events) < 0 || load_topology(c->topology, &t) < 0)
                return EXIT_USAGE;
        /* the picture's file before the plan is printed: one that cannot be written prints no plan */
        if (c->svg && (code = map_svg_open(c, &svg)))
                return code;
        ctl_warn_unknown_cpus(c, config, t);

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
                        /* running: check_names(); a skipped domain gives back what its own pins held,
                         * when they held anything */
                        (void)ledger_release(ledger, e->name);
                        json_builder_set_member_name(b, "domain");
                        json_builder_add_string_value(b, e->name);
                        if (!json) {
                                g_autofree char *name = text_safe(e->name);
                                printf("stop %s\n", name);
                        }
                } else if ((code = start_domain(c, t, config, ledger, b, e, explain)) != EXIT_OK) {
                        return code;
                }
                json_builder_end_object(b);
        }
        json_builder_end_array(b);
        if (!explain) {
                /* the final map, as the text ends with it */
                json_builder_set_member_name(b, "map");
                json_builder_begin_object(b);
                hostmap_json_add(b, t, ledger, config->placement.reserved_cpus);
                json_builder_end_object(b);
        }
        json_builder_end_object(b);

        if (json) {
                g_autoptr(JsonNode) root = json_builder_get_root(b);
                g_autofree char *text = json_to_text(root, TRUE);
                ctl_print_json(text);
        } else if (!explain) {
                g_autofree char *map = hostmap_render(t, ledger, config->placement.reserved_cpus);
                printf("\n%s", map);
        }
        if (svg)
                return map_svg_offline(c, svg, t, ledger, config->placement.reserved_cpus);
        return EXIT_OK;
}

int verb_plan_offline(Ctl *c, char **args, unsigned nargs)
{
        return run_offline(c, args, nargs, false);
}

int verb_explain_offline(Ctl *c, char **args, unsigned nargs)
{
        return run_offline(c, args, nargs, true);
}
