/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: realtime vCPUs (FIFO/RR) and QEMU's threads beside them, as the reason says it. */
#include "finish-internal.h"
#include "policy.h"

#include <string.h>

/* A realtime domain's emulator and I/O threads sent to the nearest core without a realtime vCPU
 * (add_nearest_plain_core()), off its nodes: said, since they run farther from the memory they serve. */
void finish_realtime_emulator_note(const HostView *v, HousekeepingPlace where, Plan *plan)
{
        const CpuSet *cpus_of =
            cpuset_is_empty(plan->emulator_pin) ? plan->iothread_pin : plan->emulator_pin;
        g_autoptr(CpuSet) nodes = cpuset_new();
        g_autofree char *cpus = NULL, *list = NULL;
        bool away = false, beside = false;
        char *old = plan->reason;

        if (where != HOUSEKEEPING_PLAIN_CORE || cpuset_is_empty(cpus_of))
                return;
        CPUSET_FOREACH (cpu, cpus_of) {
                int pu = topology_pu_by_os(v->t, (unsigned)cpu);
                unsigned n;
                if (pu < 0)
                        return;
                n = v->t->cores[v->t->pus[pu].core].node;
                away = away || !cpuset_has(plan->nodes, n);
                beside = beside || !ledger_core_free(v->l, v->t->pus[pu].core);
                cpuset_add(nodes, v->t->nodes[n].os_index);
        }
        if (!away && !beside)
                return;
        cpus = cpuset_format(cpus_of);
        list = cpuset_format(nodes);
        plan->reason = g_strdup_printf(
            "%s; %s on CPU%s %s of node%s %s%s: its set has no core left without a realtime vCPU",
            old ? old : "", cpuset_is_empty(plan->emulator_pin) ? "its I/O threads" : "the emulator",
            cpuset_count(cpus_of) == 1 ? "" : "s", cpus, cpuset_count(nodes) > 1 ? "s" : "", list,
            beside ? ", beside another domain's vCPUs" : "");
        g_free(old);
}

/* Appends a domain's name to the names a note lists (", " between them), the characters the notes are
 * read back by (policy_realtime_neighbours_anew()) and control characters as \xNN: a name is the user's,
 * and one that reads like a note's own words must not cut the reason in the wrong place. */
static void append_name(GString *names, const char *name)
{
        if (names->len)
                g_string_append(names, ", ");
        for (const char *c = name; *c; c++) {
                if (strchr("\\();,", *c) || g_ascii_iscntrl(*c))
                        g_string_append_printf(names, "\\x%02x", (unsigned char)*c);
                else
                        g_string_append_c(names, *c);
        }
}

typedef struct OthersThreads {
        const Plan *plan;
        const char *own_key; /* the plan's own key in the ledger, when it is not the ledger's plan itself */
        const Topology *t;
        CpuSet *cpus;   /* the realtime vCPUs' CPUs that another domain's QEMU threads are pinned to */
        GString *names; /* those domains */
} OthersThreads;

static void add_others_threads(const char *key, const Plan *p, void *userdata)
{
        OthersThreads *o = userdata;
        bool named = false;

        if (p == o->plan || (o->own_key && strcmp(key, o->own_key) == 0))
                return;
        for (unsigned i = 0; i < o->plan->nvcpus; i++) {
                const TopoCore *core;
                if (!plan_vcpu_realtime(o->plan, i) || o->plan->vcpu_pu[i] < 0)
                        continue;
                core = &o->t->cores[o->t->pus[o->plan->vcpu_pu[i]].core];
                for (unsigned pu = core->pu_first; pu < core->pu_first + core->npus; pu++) {
                        unsigned os = o->t->pus[pu].os_index;
                        /* placementd's pins, or the CPUs held for the user's own (<emulatorpin>) */
                        if (!cpuset_has(p->emulator_pin, os) && !cpuset_has(p->iothread_pin, os) &&
                            !cpuset_has(p->held_pus, pu))
                                continue;
                        cpuset_add(o->cpus, os);
                        if (!named && o->names->len < 256)
                                append_name(o->names, p->name ? p->name : key);
                        named = true;
                }
        }
}

/* Realtime vCPUs on cores that another domain's emulator or I/O threads are pinned to (free cores when
 * that domain was placed, the last a realtime guest could have), by placementd or by the user (the CPUs
 * held for its own <emulatorpin>, <iothreadpin>): a FIFO vCPU may starve those threads. Said in the
 * reason. */
static void over_others_threads(const HostView *v, const char *own_key, Plan *plan)
{
        OthersThreads o = {
            .plan = plan, .own_key = own_key, .t = v->t, .cpus = cpuset_new(), .names = g_string_new(NULL)};
        char *old = plan->reason;

        if (plan->realtime)
                ledger_foreach(v->l, add_others_threads, &o);
        if (!cpuset_is_empty(o.cpus)) {
                g_autofree char *cpus = cpuset_format(o.cpus);
                plan->reason = g_strdup_printf("%s; realtime vCPUs on CPU%s %s, where %s's emulator or I/O "
                                               "threads are pinned too: they may be starved "
                                               "(HousekeepingCPUs= keeps QEMU's threads apart)",
                                               old ? old : "", cpuset_count(o.cpus) == 1 ? "" : "s", cpus,
                                               o.names->str);
                g_free(old);
        }
        cpuset_free(o.cpus);
        g_string_free(o.names, TRUE);
}

void finish_realtime_over_others_threads(const HostView *v, Plan *plan)
{
        over_others_threads(v, NULL, plan);
}

/* Whether the emulator or I/O thread pin of the plan lies on a core of one of its own realtime vCPUs. */
bool finish_on_own_realtime_cores(const HostView *v, const Plan *plan)
{
        const CpuSet *pins[] = {plan->emulator_pin, plan->iothread_pin};

        if (!plan->realtime)
                return false;
        for (unsigned k = 0; k < G_N_ELEMENTS(pins); k++)
                CPUSET_FOREACH (cpu, pins[k]) {
                        int pu = topology_pu_by_os(v->t, (unsigned)cpu);
                        if (pu >= 0 && policy_own_realtime_core(v, plan, v->t->pus[pu].core))
                                return true;
                }
        return false;
}

typedef struct OthersRealtime {
        const Plan *plan;
        const char *own_key; /* as in OthersThreads */
        const Topology *t;
        bool *core;            /* [ncores]: holds another domain's realtime vCPU */
        GString *names;        /* those domains, of the cores the plan uses */
        bool *thread_core;     /* [ncores]: held for another domain's realtime emulator or I/O threads */
        GString *thread_names; /* those domains, of the cores the plan uses */
} OthersRealtime;

/* Whether the plan runs a vCPU, or pins its emulator or I/O threads, on core c. */
static bool plan_uses_core(const Topology *t, const Plan *plan, unsigned c)
{
        const TopoCore *core = &t->cores[c];

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && t->pus[plan->vcpu_pu[i]].core == c)
                        return true;
        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                if (cpuset_has(plan->emulator_pin, t->pus[p].os_index) ||
                    cpuset_has(plan->iothread_pin, t->pus[p].os_index))
                        return true;
        return false;
}

/* Marks core c in core[] and names the domain (name) in names once (*named) when the plan uses c. */
static void mark_core(const OthersRealtime *o, unsigned c, bool *core, GString *names, const char *name,
                      bool *named)
{
        core[c] = true;
        if (!*named && names->len < 256 && plan_uses_core(o->t, o->plan, c)) {
                append_name(names, name);
                *named = true;
        }
}

static void add_others_realtime(const char *key, const Plan *p, void *userdata)
{
        OthersRealtime *o = userdata;
        const char *name = p->name ? p->name : key;
        g_autoptr(CpuSet) threads = NULL;
        bool named = false, threads_named = false;

        if (p == o->plan || (o->own_key && strcmp(key, o->own_key) == 0))
                return;
        for (unsigned i = 0; p->realtime && i < p->nvcpus; i++)
                if (plan_vcpu_realtime(p, i) && p->vcpu_pu[i] >= 0 && (unsigned)p->vcpu_pu[i] < o->t->npus)
                        mark_core(o, o->t->pus[p->vcpu_pu[i]].core, o->core, o->names, name, &named);
        /* the core or two the ledger holds for its realtime QEMU threads (ledger_core_realtime()) */
        threads = plan_realtime_thread_pus(o->t, p);
        CPUSET_FOREACH (pu, threads)
                mark_core(o, o->t->pus[pu].core, o->thread_core, o->thread_names, name, &threads_named);
}

/* Whether a core the plan uses holds a realtime vCPU or thread by the ledger's count (its own included):
 * without one there is nothing to say, and no domain need be looked at. */
static bool uses_realtime_core(const Topology *t, const Ledger *l, const Plan *plan)
{
        const CpuSet *pins[] = {plan->emulator_pin, plan->iothread_pin};

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && (unsigned)plan->vcpu_pu[i] < t->npus &&
                    ledger_core_realtime(l, t->pus[plan->vcpu_pu[i]].core))
                        return true;
        for (unsigned k = 0; k < G_N_ELEMENTS(pins); k++) {
                if (!pins[k])
                        continue;
                CPUSET_FOREACH (cpu, pins[k]) {
                        int pu = topology_pu_by_os(t, (unsigned)cpu);
                        if (pu >= 0 && ledger_core_realtime(l, t->pus[pu].core))
                                return true;
                }
        }
        return false;
}

bool policy_may_name_realtime_neighbours(const Topology *t, const Ledger *l, const Plan *plan)
{
        return plan && uses_realtime_core(t, l, plan);
}

/* Appends to the plan's reason which of its vCPUs, emulator and I/O threads run on the cores core[] marks,
 * beside realtime (FIFO/RR) what of another domain (names): harm_it, harm_them say what may come of it. */
static void note_beside(const Topology *t, Plan *plan, const bool *core, const GString *names,
                        const char *what, const char *harm_it, const char *harm_them)
{
        unsigned vcpus = 0;
        bool emulator = false, iothreads = false, one;
        GString *who;
        char *old = plan->reason;

        if (!names->len)
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && core[t->pus[plan->vcpu_pu[i]].core])
                        vcpus++;
        CPUSET_FOREACH (cpu, plan->emulator_pin) {
                int pu = topology_pu_by_os(t, (unsigned)cpu);
                emulator = emulator || (pu >= 0 && core[t->pus[pu].core]);
        }
        CPUSET_FOREACH (cpu, plan->iothread_pin) {
                int pu = topology_pu_by_os(t, (unsigned)cpu);
                iothreads = iothreads || (pu >= 0 && core[t->pus[pu].core]);
        }
        if (!vcpus && !emulator && !iothreads)
                return;
        who = g_string_new(NULL);
        if (vcpus)
                g_string_append_printf(who, "%u vCPU%s", vcpus, vcpus == 1 ? "" : "s");
        if (emulator)
                g_string_append_printf(who, "%sthe emulator", who->len ? (iothreads ? ", " : " and ") : "");
        if (iothreads)
                g_string_append_printf(who, "%sits I/O threads", who->len ? " and " : "");
        one = !iothreads && (vcpus == 1) != emulator && vcpus <= 1;
        plan->reason = g_strdup_printf(
            "%s; %s share%s cores with realtime (FIFO/RR) %s of another domain (%s): %s", old ? old : "",
            who->str, one ? "s" : "", what, names->str, one ? harm_it : harm_them);
        g_string_free(who, TRUE);
        g_free(old);
}

/* vCPUs, emulator or I/O threads on cores where another domain's realtime (FIFO/RR) vCPUs run, or that the
 * ledger holds for another domain's realtime emulator or I/O threads (the host had no other core left for
 * them): a realtime vCPU that spins may starve them, a realtime thread preempts them whenever it has work.
 * Said in the reason, each apart. */
static void beside_others_realtime(const HostView *v, const char *own_key, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree bool *core = g_new0(bool, MAX(t->ncores, 1));
        g_autofree bool *thread_core = g_new0(bool, MAX(t->ncores, 1));
        OthersRealtime o = {.plan = plan,
                            .own_key = own_key,
                            .t = t,
                            .core = core,
                            .names = g_string_new(NULL),
                            .thread_core = thread_core,
                            .thread_names = g_string_new(NULL)};

        if (uses_realtime_core(v->t, v->l, plan)) {
                ledger_foreach(v->l, add_others_realtime, &o);
                note_beside(t, plan, core, o.names, "vCPUs", "a realtime vCPU that spins may starve it",
                            "a realtime vCPU that spins may starve them");
                note_beside(t, plan, thread_core, o.thread_names, "emulator or I/O threads",
                            "they preempt it whenever they have work",
                            "they preempt them whenever they have work");
        }
        g_string_free(o.names, TRUE);
        g_string_free(o.thread_names, TRUE);
}

void finish_beside_others_realtime(const HostView *v, Plan *plan)
{
        beside_others_realtime(v, NULL, plan);
}

/* Where the note runs in reason: from marker's "; " (its own first, when it starts with one) to the last
 * tail after it and the it/them that ends it, then end_words. Domain names come between, and hold none of
 * "(", ")" and ";" (append_name()): every marker and tail has one, so no name reads like either end. False
 * when reason has no such note. */
static bool note_span(const char *reason, const char *marker, const char *tail, const char *end_words,
                      size_t *ret_start, size_t *ret_end)
{
        const char *at = reason ? strstr(reason, marker) : NULL;
        const char *start = !at                              ? NULL
                            : g_str_has_prefix(marker, "; ") ? at
                                                             : g_strrstr_len(reason, at - reason, "; ");
        const char *end = start ? g_strrstr(at, tail) : NULL;

        if (!end)
                return false;
        end += strlen(tail);
        end += g_str_has_prefix(end, "them") ? strlen("them")
               : g_str_has_prefix(end, "it") ? strlen("it")
                                             : 0;
        if (g_str_has_prefix(end, end_words))
                end += strlen(end_words);
        *ret_start = (size_t)(start - reason);
        *ret_end = (size_t)(end - reason);
        return true;
}

/* reason (taken) with [start, end) replaced by text. */
static char *splice(char *reason, size_t start, size_t end, const char *text)
{
        GString *s = g_string_new_len(reason, (gssize)start);

        g_string_append(s, text);
        g_string_append(s, reason + end);
        g_free(reason);
        return g_string_free(s, FALSE);
}

/* reason (taken) without the note note_span() finds. */
static char *without_note(char *reason, const char *marker, const char *tail, const char *end_words)
{
        size_t start, end;

        return note_span(reason, marker, tail, end_words, &start, &end) ? splice(reason, start, end, "")
                                                                        : reason;
}

/* The notes of finish_beside_others_realtime() and finish_realtime_over_others_threads(), as note_span()
 * finds them: marker, tail, end words. */
static const char *const neighbour_notes[][3] = {
    {" cores with realtime (FIFO/RR) vCPUs of another domain (", "): a realtime vCPU that spins may starve ",
     ""},
    {" cores with realtime (FIFO/RR) emulator or I/O threads of another domain (", "): they preempt ",
     " whenever they have work"},
    {"; realtime vCPUs on CPU",
     "are pinned too: they may be starved (HousekeepingCPUs= keeps QEMU's threads apart", ")"},
};

/* reason (taken) without what finish_beside_others_realtime() added to it: it names where the emulator and
 * I/O threads were. Each note runs from the "; " before its words to the last "may starve it/them", or
 * "they preempt it/them whenever they have work". */
char *finish_without_beside_realtime_note(char *reason)
{
        for (unsigned i = 0; i < 2; i++)
                reason = without_note(reason, neighbour_notes[i][0], neighbour_notes[i][1],
                                      neighbour_notes[i][2]);
        return reason;
}

/* reason (taken) with the notes neighbour_notes[first..last] (adjacent, as they are written) replaced by
 * text (a note, "; " first, or ""), when it has one of them; else with text at its end. */
static char *replace_notes(char *reason, unsigned first, unsigned last, const char *text)
{
        size_t start = SIZE_MAX, end = 0;

        for (unsigned i = first; i <= last; i++) {
                size_t a, b;
                if (note_span(reason, neighbour_notes[i][0], neighbour_notes[i][1], neighbour_notes[i][2],
                              &a, &b)) {
                        start = MIN(start, a);
                        end = MAX(end, b);
                }
        }
        if (start != SIZE_MAX)
                return splice(reason, start, end, text);
        if (!*text)
                return reason;
        start = strlen(reason); /* with its "; ", as note_span() finds it */
        return splice(reason, start, start, text);
}

bool policy_reason_names_realtime_neighbours(const char *reason)
{
        for (unsigned i = 0; reason && i < G_N_ELEMENTS(neighbour_notes); i++)
                if (strstr(reason, neighbour_notes[i][0]))
                        return true;
        return false;
}

char *policy_realtime_neighbours_anew(const Topology *t, const Ledger *l, const PlacementParams *params,
                                      const char *key, const Plan *plan)
{
        Plan said = *plan; /* a shallow copy: only its reason is its own */
        char *reason = g_strdup(plan->reason ? plan->reason : "");
        HostView v;

        host_view_init(&v, t, l, params);
        said.reason = NULL;
        beside_others_realtime(&v, key, &said);
        reason = replace_notes(reason, 0, 1, said.reason ? said.reason : "");
        g_clear_pointer(&said.reason, g_free);
        over_others_threads(&v, key, &said);
        reason = replace_notes(reason, 2, 2, said.reason ? said.reason : "");
        g_free(said.reason);
        host_view_done(&v);
        return reason;
}

/*
 * Realtime vCPUs off the cores of the CPUs the user keeps for QEMU's threads (<emulatorpin>, its own
 * <iothreadpin>, a hand pin of the emulator): when the plan put a realtime vCPU there and an ordinary vCPU
 * of the same guest cell on a core of the same kind without such a CPU, the two trade PUs. The ordinary
 * vCPU shares fairly with the user's thread; a FIFO vCPU that spins starves it. Not when the guest pairs
 * its vCPUs as SMT siblings or reserves caches for them (their PUs are chosen for that).
 */
void finish_realtime_off_user_threads(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        const Topology *t = v->t;

        if (!plan->realtime || (!req->emulator_cpus && !req->iothread_cpus) || req->guest_threads ||
            req->vcpu_cache_cpus)
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                int pu_i = plan->vcpu_pu[i];
                if (pu_i < 0 || !plan_vcpu_realtime(plan, i) ||
                    !policy_core_user_thread(v, t->pus[pu_i].core))
                        continue;
                for (unsigned j = 0; j < plan->nvcpus; j++) {
                        int pu_j = plan->vcpu_pu[j];
                        if (pu_j < 0 || plan_vcpu_realtime(plan, j) ||
                            policy_core_user_thread(v, t->pus[pu_j].core) ||
                            finish_vcpu_cell(plan, i) != finish_vcpu_cell(plan, j) ||
                            t->cores[t->pus[pu_i].core].kind_rank != t->cores[t->pus[pu_j].core].kind_rank)
                                continue;
                        finish_swap_vcpus(plan, i, j);
                        break;
                }
        }
}

/* Adds name to who, and the realtime vCPUs whose CPUs take every CPU of cpus (the thread the user pins
 * there can run nowhere else) to ids and their CPUs to hit. */
static void add_starved(const Plan *plan, const CpuSet *rt_cpus, const CpuSet *cpus, const char *name,
                        GPtrArray *who, CpuSet *ids, CpuSet *hit)
{
        g_autoptr(CpuSet) outside = NULL;

        if (!cpus || cpuset_is_empty(cpus))
                return;
        outside = cpuset_copy(cpus);
        cpuset_subtract(outside, rt_cpus);
        if (!cpuset_is_empty(outside))
                return;
        g_ptr_array_add(who, g_strdup(name));
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && plan_vcpu_realtime(plan, i) &&
                    cpuset_intersects(plan->vcpu_pins[i], cpus)) {
                        g_autoptr(CpuSet) both = cpuset_copy(plan->vcpu_pins[i]);
                        g_autoptr(CpuSet) not_cpus = cpuset_copy(plan->vcpu_pins[i]);
                        cpuset_subtract(not_cpus, cpus);
                        cpuset_subtract(both, not_cpus);
                        cpuset_add(ids, plan_vcpu_id(plan, i));
                        cpuset_union(hit, both);
                }
}

/*
 * The user's pin of the emulator or of one of its I/O threads (the definition's, or a hand pin) whose every
 * CPU a realtime vCPU of the plan runs on (no core without one was left for them): a FIFO vCPU that spins
 * may starve the thread pinned there. Said in the reason; the pin is the user's and stays.
 */
void finish_realtime_user_threads_note(const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) rt_cpus = cpuset_new();
        g_autoptr(CpuSet) ids = cpuset_new();
        g_autoptr(CpuSet) hit = cpuset_new();
        g_autoptr(GPtrArray) who = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *id_list = NULL, *cpu_list = NULL, *names = NULL;
        char *old = plan->reason;

        if (!plan->realtime)
                return;
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0 && plan_vcpu_realtime(plan, i))
                        cpuset_union(rt_cpus, plan->vcpu_pins[i]);
        if (cpuset_is_empty(rt_cpus))
                return;
        if (req->keep_emulator)
                add_starved(plan, rt_cpus, req->emulator_cpus, "the emulator", who, ids, hit);
        for (unsigned k = 0; req->iothread_cpus && k < req->iothread_cpus->len; k++) {
                const IothreadPin *pin = &g_array_index(req->iothread_cpus, IothreadPin, k);
                g_autofree char *name = NULL;
                if (!req->kept_iothreads || !cpuset_has(req->kept_iothreads, pin->id))
                        continue;
                name = g_strdup_printf("I/O thread %u", pin->id);
                add_starved(plan, rt_cpus, pin->cpus, name, who, ids, hit);
        }
        if (!who->len)
                return;
        g_ptr_array_add(who, NULL);
        names = g_strjoinv(", ", (char **)who->pdata);
        id_list = cpuset_format(ids);
        cpu_list = cpuset_format(hit);
        plan->reason = g_strdup_printf(
            "%s; its realtime (FIFO/RR) vCPU%s %s run%s on CPU%s %s, where the user "
            "pins %s: a realtime vCPU that spins may starve %s",
            old ? old : "", cpuset_count(ids) == 1 ? "" : "s", id_list, cpuset_count(ids) == 1 ? "s" : "",
            cpuset_count(hit) == 1 ? "" : "s", cpu_list, names, who->len > 2 ? "them" : "it");
        g_free(old);
}

typedef struct OthersVcpus {
        const Plan *plan;
        const Topology *t;
        const CpuSet *cpus; /* the CPUs a realtime QEMU thread of plan is pinned to */
        CpuSet *taken;      /* those another domain's vCPU runs on */
        GString *names;     /* those domains */
} OthersVcpus;

static void add_others_vcpus(const char *key, const Plan *p, void *userdata)
{
        OthersVcpus *o = userdata;
        bool named = false;

        if (p == o->plan)
                return;
        for (unsigned i = 0; i < p->nvcpus; i++) {
                unsigned os;
                if (p->vcpu_pu[i] < 0 || (unsigned)p->vcpu_pu[i] >= o->t->npus)
                        continue;
                os = o->t->pus[p->vcpu_pu[i]].os_index;
                if (!cpuset_has(o->cpus, os))
                        continue;
                cpuset_add(o->taken, os);
                if (!named && o->names->len < 256)
                        append_name(o->names, p->name ? p->name : key);
                named = true;
        }
}

/* Appends to reason that who (the emulator, its I/O threads), pinned by placementd to cpus and running
 * FIFO/RR itself, runs only where vCPUs run, ordinary ones among them (its own, or another domain's). */
static void note_realtime_thread(const HostView *v, Plan *plan, const char *who, bool one,
                                 const CpuSet *cpus)
{
        g_autoptr(CpuSet) vcpu_cpus = cpuset_new();
        g_autoptr(CpuSet) rest = NULL;
        g_autofree char *list = NULL, *whose = NULL;
        OthersVcpus o = {
            .plan = plan, .t = v->t, .cpus = cpus, .taken = cpuset_new(), .names = g_string_new(NULL)};
        bool own_ordinary = false;
        char *old = plan->reason;

        ledger_foreach(v->l, add_others_vcpus, &o);
        cpuset_union(vcpu_cpus, o.taken);
        for (unsigned i = 0; i < plan->nvcpus; i++) {
                unsigned os;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                os = v->t->pus[plan->vcpu_pu[i]].os_index;
                if (!cpuset_has(cpus, os))
                        continue;
                cpuset_add(vcpu_cpus, os);
                own_ordinary = own_ordinary || !plan_vcpu_realtime(plan, i);
        }
        rest = cpuset_copy(cpus);
        cpuset_subtract(rest, vcpu_cpus);
        if (cpuset_is_empty(rest) && (own_ordinary || o.names->len)) {
                list = cpuset_format(cpus);
                whose = own_ordinary && o.names->len
                            ? g_strdup_printf("its own vCPUs and vCPUs of %s", o.names->str)
                        : own_ordinary ? g_strdup("its own vCPUs")
                                       : g_strdup_printf("vCPUs of %s", o.names->str);
                plan->reason = g_strdup_printf(
                    "%s; %s run%s realtime (FIFO/RR) on CPU%s %s, where %s run: %s "
                    "preempt%s them whenever %s work",
                    old ? old : "", who, one ? "s" : "", cpuset_count(cpus) == 1 ? "" : "s", list, whose,
                    one ? "it" : "they", one ? "s" : "", one ? "it has" : "they have");
                g_free(old);
        }
        cpuset_free(o.taken);
        g_string_free(o.names, TRUE);
}

/*
 * QEMU's threads that run realtime themselves (<emulatorsched>, <iothreadsched scheduler='fifo|rr'>) and
 * that placementd pins where only vCPUs run (no CPU apart was left: an ordinary vCPU of its own, as Nova
 * puts the emulator beside vCPU 0, or another domain's, rather than its own FIFO vCPUs, which would starve
 * them): such a thread preempts an ordinary vCPU whenever it has work. Said in the reason.
 */
void finish_realtime_threads_note(const HostView *v, const PlacementRequest *req, Plan *plan)
{
        g_autoptr(CpuSet) ios = NULL;

        if (req->realtime_emulator && !req->keep_emulator && !cpuset_is_empty(plan->emulator_pin))
                note_realtime_thread(v, plan, "the emulator", true, plan->emulator_pin);
        if (!req->realtime_iothreads || cpuset_is_empty(plan->iothread_pin))
                return;
        ios = cpuset_copy(plan->iothreads);
        {
                g_autoptr(CpuSet) plain = cpuset_copy(plan->iothreads);
                cpuset_subtract(plain, req->realtime_iothreads);
                cpuset_subtract(ios, plain);
        }
        if (!cpuset_is_empty(ios)) {
                g_autofree char *ids = cpuset_format(ios);
                g_autofree char *who =
                    g_strdup_printf("its I/O thread%s %s", cpuset_count(ios) == 1 ? "" : "s", ids);
                note_realtime_thread(v, plan, who, cpuset_count(ios) == 1, plan->iothread_pin);
        }
}

char *finish_without_realtime_threads_note(char *reason)
{
        static const char tail[] = " whenever it has work";
        static const char tail2[] = " whenever they have work";
        const char *at = reason ? strstr(reason, " realtime (FIFO/RR) on CPU") : NULL;
        const char *start = at ? g_strrstr_len(reason, at - reason, "; ") : NULL;
        const char *end = NULL;
        GString *s;

        if (!start)
                return reason;
        if ((end = strstr(at, tail)))
                end += strlen(tail);
        else if ((end = strstr(at, tail2)))
                end += strlen(tail2);
        if (!end)
                return reason;
        s = g_string_new_len(reason, start - reason);
        g_string_append(s, end);
        g_free(reason);
        return finish_without_realtime_threads_note(g_string_free(s, FALSE));
}
