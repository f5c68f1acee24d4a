/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decision.h"

#include <errno.h>
#include <string.h>

#include "string-table.h"

Decision *decision_new(const char *uuid, const char *name)
{
        Decision *d = g_new0(Decision, 1);
        d->uuid = g_strdup(uuid);
        d->name = g_strdup(name);
        return d;
}

void decision_free(Decision *d)
{
        if (!d)
                return;
        g_free(d->uuid);
        g_free(d->name);
        plan_free(d->plan);
        plan_free(d->advice);
        g_free(d->reason);
        g_free(d->apply_error);
        g_free(d->record);
        g_free(d);
}

static const char *const decision_result_table[_DECISION_RESULT_MAX] = {
    [DECISION_PLACED] = "placed",           [DECISION_OVERCOMMITTED] = "overcommitted",
    [DECISION_UNPLACEABLE] = "unplaceable", [DECISION_SKIPPED] = "skipped",
    [DECISION_ADVISORY] = "advisory",       [DECISION_FAILED] = "failed",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(decision_result, DecisionResult, _DECISION_RESULT_MAX)

static const char *const memory_binding_table[_MEMORY_BINDING_MAX] = {
    [MEMORY_BINDING_NONE] = "none", [MEMORY_BINDING_APPLIED] = "applied",
    [MEMORY_BINDING_KEPT] = "kept", [MEMORY_BINDING_FAILED] = "failed",
    [MEMORY_BINDING_OFF] = "off",   [MEMORY_BINDING_ADVISORY] = "advisory",
};
DEFINE_STRING_TABLE_LOOKUP(memory_binding, MemoryBinding, _MEMORY_BINDING_MAX)

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

DecisionResult decision_verdict(const Decision *d)
{
        const Plan *shown = decision_shown_plan(d);

        if (d->result != DECISION_ADVISORY || !shown)
                return d->result;
        if (shown->result == PLAN_UNPLACEABLE || shown->result == PLAN_OVERCOMMITTED)
                return decision_result_from_plan(shown->result);
        return DECISION_ADVISORY;
}

char *decision_result_text(const Decision *d)
{
        DecisionResult verdict = decision_verdict(d);

        if (verdict == d->result)
                return g_strdup(decision_result_to_string(d->result));
        return g_strdup_printf("%s (%s)", decision_result_to_string(d->result),
                               decision_result_to_string(verdict));
}
