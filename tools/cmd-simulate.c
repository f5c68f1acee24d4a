/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* placementctl simulate: replay a trace through the engine and the healer (sim/replay.h), offline. */
#include "placementctl.h"

#include <errno.h>
#include <stdio.h>

#include <json-glib/json-glib.h>

#include "config.h"
#include "decision-json.h"
#include "replay.h"
#include "size.h"
#include "topology-load.h"
#include "trace.h"

#define SIMULATE "placementctl simulate"

static void print_json(const Topology *t, const Config *config, const SimParams *p, const SimReport *r)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) root = NULL;
        g_autofree char *text = NULL;
        const struct {
                const char *key;
                double value;
        } figures[] = {
            {"shared_vcpu_fraction", r->shared_vcpu_fraction},
            {"busy_contended_fraction", r->busy_contended_fraction},
            {"capacity_lost", r->capacity_lost},
            {"mean_memory_distance", r->mean_memory_distance},
            {"largest_fit_mean", r->largest_fit_mean},
            {"bound_capacity_lost", r->bound_capacity_lost},
            {"bound_busy_contended_fraction", r->bound_busy_contended_fraction},
            {"bound_paired_contended_fraction", r->bound_paired_contended_fraction},
            {"vcpus_mean", r->vcpus_mean},
            {"busy_vcpus_mean", r->busy_vcpus_mean},
            {"seconds", r->seconds},
            {"sibling_loss", p->sibling_loss},
        };
        const struct {
                const char *key;
                gint64 value;
        } counts[] = {
            {"moves", r->moves},
            {"host_thread_moves", r->host_thread_moves},
            {"memory_moved_bytes", (gint64)r->memory_moved_bytes},
            {"largest_fit_min", r->largest_fit_min},
            {"starts", r->starts},
            {"stops", r->stops},
            {"overcommitted", r->overcommitted},
            {"unplaceable", r->unplaceable},
        };

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "topology");
        json_builder_add_string_value(b, t->source);
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, policy_kind_to_string(config->placement.policy));
        json_builder_set_member_name(b, "fit");
        json_builder_add_string_value(b, fit_mode_to_string(config->placement.fit));
        for (unsigned i = 0; i < G_N_ELEMENTS(figures); i++) {
                json_builder_set_member_name(b, figures[i].key);
                json_builder_add_double_value(b, figures[i].value);
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(counts); i++) {
                json_builder_set_member_name(b, counts[i].key);
                json_builder_add_int_value(b, counts[i].value);
        }
        json_builder_end_object(b);
        root = json_builder_get_root(b);
        text = json_to_text(root, TRUE);
        ctl_print_json(text);
}

static void print_human(const Topology *t, const Config *config, const SimParams *p, const SimReport *r)
{
        char moved[32];

        printf("%s, policy %s, Fit=%s: %u start%s, %u stop%s over %.10g s (%u overcommitted, %u "
               "unplaceable)\n\n",
               t->source, policy_kind_to_string(config->placement.policy),
               fit_mode_to_string(config->placement.fit), r->starts, r->starts == 1 ? "" : "s", r->stops,
               r->stops == 1 ? "" : "s", r->seconds, r->overcommitted, r->unplaceable);
        printf("%-28s %10s %10s\n", "time-weighted", "run", "bound");
        printf("%-28s %9.1f%% %10s\n", "vCPUs on a shared core", 100 * r->shared_vcpu_fraction, "");
        printf("%-28s %9.1f%% %9.1f%%\n", "busy vCPUs contended", 100 * r->busy_contended_fraction,
               100 * r->bound_busy_contended_fraction);
        printf("%-28s %10s %9.1f%%\n", "  where it loses least", "",
               100 * r->bound_paired_contended_fraction);
        printf("%-28s %10.2f %10.2f\n", "capacity lost (cores)", r->capacity_lost, r->bound_capacity_lost);
        printf("%-28s %10.2f %10s\n", "vCPU-memory distance", r->mean_memory_distance, "");
        printf("%-28s %10u %10s\n", "largest fit, min (vCPUs)", r->largest_fit_min, "");
        printf("%-28s %10.1f %10s\n", "largest fit, mean (vCPUs)", r->largest_fit_mean, "");
        printf("%-28s %10u %10s\n", "moves", r->moves, "");
        printf("%-28s %10u %10s\n", "  host-side threads alone", r->host_thread_moves, "");
        printf("%-28s %10s %10s\n", "memory moved", size_format(r->memory_moved_bytes, moved, sizeof(moved)),
               "");
        printf("\nA busy pair of siblings loses %.0f%% of each one's throughput (--sibling-loss).\n",
               100 * p->sibling_loss);
}

int verb_simulate(Ctl *c, char **args, unsigned nargs)
{
        g_autoptr(Topology) t = NULL;
        g_autoptr(Config) config = NULL;
        g_autoptr(GPtrArray) trace = NULL;
        g_autofree char *error = NULL;
        SimParams p;
        SimReport r;

        (void)args, (void)nargs;
        if (!c->topology || !c->trace) {
                ctl_error(SIMULATE ": --topology=SOURCE and --trace=FILE are required");
                return EXIT_USAGE;
        }
        if (ctl_load_config(c, &config) < 0)
                return EXIT_USAGE;
        /* the simulator replays sizes and load only: a definition's pins, constraints, cells and hugepages
         * would be dropped without a word, so a domain line is refused (before its file is read) */
        if (trace_load_file_sizes(c->trace, &trace, &error) < 0) {
                ctl_error(SIMULATE ": %s", error);
                return EXIT_USAGE;
        }
        if (topology_load(c->topology, &t, &error) < 0) {
                ctl_error(SIMULATE ": %s", error);
                return EXIT_USAGE;
        }
        ctl_warn_unknown_cpus(c, config, t);
        sim_params_from_config(&p, config);
        if (c->given & CTL_OPT(SIBLING_LOSS))
                p.sibling_loss = c->sibling_loss;
        p.source = c->trace;
        if (sim_replay(t, &p, trace, &r, &error) < 0) {
                ctl_error(SIMULATE ": %s", error);
                return EXIT_USAGE;
        }
        if (c->json)
                print_json(t, config, &p, &r);
        else
                print_human(t, config, &p, &r);
        return EXIT_OK;
}
