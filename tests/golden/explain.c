/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `placementctl explain` says of each decision of a trace, for the golden files of
 * tests/golden/check.sh: runs the trace through the engine like `placementctl plan --trace` and prints, for
 * every start, the decision text (plan_to_text) and its reasoning (plan_explain) that the daemon's
 * Explain() joins the same way.
 *   golden-explain TOPOLOGY TRACE CONFIG|- POLICY
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "decision-text.h"
#include "ledger.h"
#include "policy.h"
#include "topology-load.h"
#include "trace.h"

static int load(char **argv, Topology **t, GPtrArray **events, Config **config, char **error)
{
        int k;

        if (topology_load(argv[1], t, error) < 0 || trace_load_file(argv[2], events, error) < 0)
                return -EINVAL;
        if (g_str_equal(argv[3], "-"))
                *config = config_new_default();
        else if (config_load_file(argv[3], config, error) < 0)
                return -EINVAL;
        k = policy_kind_from_string(argv[4]);
        if (k < 0) {
                *error = g_strdup_printf("unknown policy '%s'", argv[4]);
                return -EINVAL;
        }
        (*config)->placement.policy = (PolicyKind)k;
        return 0;
}

static int explain_start(const Topology *t, Ledger *l, const TraceEvent *e, const PlacementParams *params)
{
        PlacementRequest req = {.name = e->name, .vcpus = e->vcpus, .memory = e->memory};
        Plan *plan = policy_place(t, l, &req, params);
        g_autofree char *text = plan_to_text(t, plan);
        g_autofree char *why = plan_explain(t, plan);

        printf("start %s%s\n", text, why);
        return ledger_commit(l, e->name, plan);
}

int main(int argc, char **argv)
{
        g_autoptr(Topology) t = NULL;
        g_autoptr(GPtrArray) events = NULL;
        g_autoptr(Config) config = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autofree char *error = NULL;

        if (argc != 5) {
                fprintf(stderr, "usage: golden-explain TOPOLOGY TRACE CONFIG|- POLICY\n");
                return 2;
        }
        if (load(argv, &t, &events, &config, &error) < 0) {
                fprintf(stderr, "golden-explain: %s\n", error);
                return 2;
        }
        l = ledger_new(t);
        for (unsigned i = 0; i < events->len; i++) {
                const TraceEvent *e = g_ptr_array_index(events, i);
                int r = e->op == TRACE_START ? explain_start(t, l, e, &config->placement)
                                             : ledger_release(l, e->name);
                if (r < 0) {
                        fprintf(stderr, "golden-explain: line %u: %s %s failed\n", e->line,
                                e->op == TRACE_START ? "start" : "stop", e->name);
                        return 1;
                }
                if (e->op == TRACE_STOP)
                        printf("stop %s\n\n", e->name);
        }
        return 0;
}
