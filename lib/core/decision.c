/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decision.h"

#include "string-table.h"

Decision *decision_new(const char *uuid, const char *name)
{
        Decision *d = g_new0(Decision, 1);
        d->uuid = g_strdup(uuid);
        d->name = g_strdup(name);
        d->memory_binding = g_strdup("none");
        return d;
}

void decision_free(Decision *d)
{
        if (!d)
                return;
        g_free(d->uuid);
        g_free(d->name);
        plan_free(d->plan);
        g_free(d->reason);
        g_free(d->memory_binding);
        g_free(d->apply_error);
        g_free(d);
}

static const char *const decision_result_table[_DECISION_RESULT_MAX] = {
    [DECISION_PLACED] = "placed",           [DECISION_OVERCOMMITTED] = "overcommitted",
    [DECISION_UNPLACEABLE] = "unplaceable", [DECISION_SKIPPED] = "skipped",
    [DECISION_ADVISORY] = "advisory",       [DECISION_FAILED] = "failed",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(decision_result, DecisionResult, _DECISION_RESULT_MAX)

DecisionResult decision_result_from_plan(PlanResult r)
{
        switch (r) {
        case PLAN_PLACED:
                return DECISION_PLACED;
        case PLAN_OVERCOMMITTED:
                return DECISION_OVERCOMMITTED;
        case PLAN_UNPLACEABLE:
                return DECISION_UNPLACEABLE;
        default:
                return DECISION_SKIPPED;
        }
}
