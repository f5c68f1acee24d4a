/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Decision: what the daemon knows about one running domain and what it did, as plain data. The
 * manager keeps one per domain; D-Bus, placementctl and the metadata show it.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

typedef enum DecisionResult {
        DECISION_PLACED,
        DECISION_OVERCOMMITTED,
        DECISION_UNPLACEABLE,
        DECISION_SKIPPED,  /* opted out, or pinned by someone else */
        DECISION_ADVISORY, /* Apply=no: computed and published, nothing changed */
        DECISION_FAILED,   /* applying the plan failed: the plan holds the pins that really run */
        _DECISION_RESULT_MAX,
} DecisionResult;

/* What became of the domain's memory binding; its name is what metadata, JSON and text show. */
typedef enum MemoryBinding {
        MEMORY_BINDING_NONE,     /* nothing decided about memory (nothing applied yet) */
        MEMORY_BINDING_APPLIED,  /* the plan's nodes bound live */
        MEMORY_BINDING_KEPT,     /* bound before (definition or live, in a mode libvirt keeps), left as is */
        MEMORY_BINDING_FAILED,   /* binding it failed */
        MEMORY_BINDING_OFF,      /* MemoryBinding=no */
        MEMORY_BINDING_ADVISORY, /* Apply=no: nothing changed */
        _MEMORY_BINDING_MAX,
} MemoryBinding;

typedef struct Decision {
        char *uuid;
        char *name;
        DecisionResult result;
        Plan *plan;   /* what the ledger holds for it; NULL when it holds nothing */
        Plan *advice; /* Apply=no on a domain that runs on earlier pins: the plan advised, published in place
                         of plan (which holds the pins that run); NULL otherwise */
        char *reason; /* why: the plan's reason, or why it was skipped */
        MemoryBinding memory_binding; /* MEMORY_BINDING_NONE until applied or adopted */
        char *apply_error;            /* what failed while applying, NULL if nothing */
        bool adopted;                 /* taken over from its recorded decision */
        bool pinned_by_hand;
        int64_t decided_usec;  /* CLOCK_REALTIME */
        uint64_t latency_usec; /* event received -> last pin applied */
        bool unrecorded; /* writing its metadata failed (libvirtd went away): the next reconcile writes it */
        bool job_held;   /* libvirt held a job on the domain: its plan was not (fully) applied, the ledger
                            holds its live pins, and it is placed again once the job is released */
        unsigned domain_id;   /* libvirt's ID of the run it was made for; 0: unknown. Another ID under the
                                 same UUID is a new run (stopped and started again) */
        unsigned vcpus;       /* the domain's online vCPUs and memory, for a decision without a plan (a */
        uint64_t memory;      /* domain skipped without pins): what its JSON object says */
        char *record;         /* the metadata placementd last wrote for this run while it placed the domain
                                 (not opted out), NULL when none: a transient domain's only record of its
                                 user's definition, which an owner's write of the element replaces */
        unsigned stats_vcpus; /* the online vCPU count the bulk statistics last showed unlike its plan's,
                                 looked at once (manager_note_stats()); 0: none */
} Decision;

Decision *decision_new(const char *uuid, const char *name);
void decision_free(Decision *d);
/* The plan its list, show, explain and D-Bus answers publish: the advice when there is one. */
static inline const Plan *decision_shown_plan(const Decision *d)
{
        return d->advice ? d->advice : d->plan;
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Decision, decision_free)

const char *decision_result_to_string(DecisionResult r);
const char *memory_binding_to_string(MemoryBinding b);
int memory_binding_from_string(const char *s);
/* The decision result a plan's result stands for. */
DecisionResult decision_result_from_plan(PlanResult r);
/* The verdict that says whether the domain needs a look: its result, or for an advisory one (Apply=no)
 * the result its shown plan would have had applied when that is unplaceable or overcommitted
 * (DECISION_ADVISORY otherwise). What the log level, status and list go by: advisory mode hides no
 * guest that will not fit. */
DecisionResult decision_verdict(const Decision *d);
/* The result as the log and the text views write it: "advisory (unplaceable)" where the verdict is not
 * the result, the result alone otherwise. Caller frees. */
char *decision_result_text(const Decision *d);
