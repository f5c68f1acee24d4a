/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: whom the plan's vCPUs that share a core share it with, as the reason says it. */
#include "finish-internal.h"

/* Whom the plan's vCPUs that share a core share it with, core by core; the counts add up to
 * plan->shared_vcpus (policy_count_shared()). */
typedef struct Sharing {
        unsigned siblings;   /* only with the other threads of their own guest core (<topology threads='N'>:
                                overcommit_assign() pairs them) */
        unsigned own;        /* only with other vCPUs of the plan */
        unsigned own_cores;  /* the cores of own */
        unsigned others;     /* alone of the plan, beside other domains' vCPUs */
        unsigned both;       /* with other vCPUs of the plan and other domains' */
        unsigned both_cores; /* the cores of both */
        const char *others_whose, *both_whose; /* whose vCPUs: "another domain's vCPU"... (whose_vcpus()) */
} Sharing;

/* Whose vCPUs the plan's vCPUs on cores (a set of core indexes) run beside: "another domain's vCPU" when
 * each such core holds one, "another domain's vCPUs" when it holds more of one domain, "other domains'
 * vCPUs" when a core holds vCPUs of several. */
static const char *whose_vcpus(const HostView *v, const CpuSet *cores)
{
        bool many = false;

        CPUSET_FOREACH (c, cores)
                many |= ledger_core_load(v->l, (unsigned)c) > 1;
        if (!many)
                return "another domain's vCPU";
        CPUSET_FOREACH (c, cores)
                if (ledger_core_domains(v->l, (unsigned)c) > 1)
                        return "other domains' vCPUs";
        return "another domain's vCPUs";
}

static Sharing sharing_count(const HostView *v, const Plan *plan, const unsigned *own)
{
        unsigned threads = v->req ? v->req->guest_threads : 0;
        g_autofree int *guest_core = g_new(int, MAX(v->t->ncores, 1)); /* -1: several; -2: none yet */
        g_autoptr(CpuSet) others = cpuset_new();
        g_autoptr(CpuSet) both = cpuset_new();
        Sharing s = {0};

        for (unsigned c = 0; c < v->t->ncores; c++)
                guest_core[c] = -2;
        for (unsigned i = 0; i < plan->nvcpus && threads >= 2; i++) {
                unsigned c, g = plan_vcpu_id(plan, i) / threads;
                if (plan->vcpu_pu[i] < 0)
                        continue;
                c = v->t->pus[plan->vcpu_pu[i]].core;
                guest_core[c] = guest_core[c] == -2 || guest_core[c] == (int)g ? (int)g : -1;
        }
        for (unsigned c = 0; c < v->t->ncores; c++) {
                unsigned load = ledger_core_load(v->l, c);
                if (!own[c] || own[c] + load < 2)
                        continue;
                if (!load && guest_core[c] >= 0) {
                        s.siblings += own[c];
                } else if (!load) {
                        s.own += own[c];
                        s.own_cores++;
                } else if (own[c] == 1) {
                        s.others++;
                        cpuset_add(others, c);
                } else {
                        s.both += own[c];
                        s.both_cores++;
                        cpuset_add(both, c);
                }
        }
        s.others_whose = whose_vcpus(v, others);
        s.both_whose = whose_vcpus(v, both);
        return s;
}

/*
 * Whom the plan's shared vCPUs share a core with, exactly: "2 vCPUs share a core with each other", "1 vCPU
 * shares a core with another domain's vCPU", "2 vCPUs each share a core with another domain's vCPU", "2
 * vCPUs share a core with each other and another domain's vCPU", and where they share in more than one
 * way, "3 vCPUs share cores: 2 with each other, 1 with another domain's vCPU".
 */
static void append_sharing(GString *out, const HostView *v, const Sharing *s)
{
        unsigned total = s->siblings + s->own + s->others + s->both;
        bool mixed = (s->siblings > 0) + (s->own > 0) + (s->others > 0) + (s->both > 0) > 1;
        const char *other = s->others_whose, *both_other = s->both_whose;
        const char *sep = "";

        if (mixed) {
                g_string_append_printf(out, "%u vCPUs share cores: ", total);
                if (s->siblings) {
                        g_string_append_printf(out,
                                               "%u only with the other threads of their guest core "
                                               "(<topology threads='%u'>)",
                                               s->siblings, v->req->guest_threads);
                        sep = ", ";
                }
                if (s->own) {
                        g_string_append_printf(out, "%s%u with each other", sep, s->own);
                        sep = ", ";
                }
                if (s->others) {
                        g_string_append_printf(out, "%s%u %swith %s", sep, s->others,
                                               s->others > 1 ? "each " : "", other);
                        sep = ", ";
                }
                if (s->both)
                        g_string_append_printf(out, "%s%u with each other and %s", sep, s->both, both_other);
                return;
        }
        if (s->siblings)
                g_string_append_printf(
                    out,
                    "%u vCPUs share a core only with the other threads of their guest core "
                    "(<topology threads='%u'>)",
                    s->siblings, v->req->guest_threads);
        else if (s->own)
                g_string_append_printf(out, "%u vCPUs share %s with each other", s->own,
                                       s->own_cores == 1 ? "a core" : "cores");
        else if (s->others == 1)
                g_string_append_printf(out, "1 vCPU shares a core with %s", other);
        else if (s->others)
                g_string_append_printf(out, "%u vCPUs each share a core with %s", s->others, other);
        else if (s->both)
                g_string_append_printf(out, "%u vCPUs share %s with each other and %s", s->both,
                                       s->both_cores == 1 ? "a core" : "cores", both_other);
        else
                g_string_append(out, "no vCPU shares a core with another");
}

/*
 * Who the vCPUs of an overcommitted plan share cores with: other vCPUs (plan->shared_vcpus), and the
 * host's reserved threads (the other vCPUs, alone on a core beside ReservedCPUs=).
 */
char *finish_sharing_note(const HostView *v, const Plan *plan)
{
        g_autofree unsigned *own = g_new0(unsigned, MAX(v->t->ncores, 1));
        g_autoptr(CpuSet) held = cpuset_new(), on = cpuset_new();
        g_autofree char *reserved = NULL;
        unsigned beside = 0, beside_held = 0, on_held = 0, shared;
        Sharing sharing;
        GString *s;

        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0)
                        own[v->t->pus[plan->vcpu_pu[i]].core]++;
        for (unsigned c = 0; c < v->t->ncores; c++) {
                const TopoCore *core = &v->t->cores[c];
                if (own[c] != 1 || ledger_core_load(v->l, c) != 0)
                        continue;
                if (policy_core_reserved(v, c))
                        beside++;
                else if (ledger_core_held(v->l, c)) {
                        /* another domain's emulator or I/O threads, held apart (a guest pinned by hand);
                         * on a core without a thread to spare (no SMT) the vCPU runs on their CPU */
                        int pu = -1;
                        for (unsigned i = 0; i < plan->nvcpus && pu < 0; i++)
                                if (plan->vcpu_pu[i] >= 0 && v->t->pus[plan->vcpu_pu[i]].core == c)
                                        pu = plan->vcpu_pu[i];
                        if (pu >= 0 && ledger_pu_held(v->l, (unsigned)pu)) {
                                on_held++;
                                cpuset_add(on, v->t->pus[pu].os_index);
                                continue;
                        }
                        beside_held++;
                        for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++)
                                if (ledger_pu_held(v->l, p))
                                        cpuset_add(held, v->t->pus[p].os_index);
                }
        }
        sharing = sharing_count(v, plan, own);
        shared = sharing.siblings + sharing.own + sharing.others + sharing.both;
        s = g_string_new(NULL);
        append_sharing(s, v, &sharing);
        if (beside) {
                /* ReservedCPUs=, or a thread outside the guests' cpuset (TopoCore.host_thread) */
                if (v->params->reserved_cpus && !cpuset_is_empty(v->params->reserved_cpus)) {
                        g_autofree char *list = cpuset_format(v->params->reserved_cpus);
                        reserved = g_strdup_printf("reserved CPUs (ReservedCPUs=%s)", list);
                } else {
                        reserved = g_strdup("CPUs the host keeps (outside the guests' cpuset)");
                }
                g_string_append_printf(s, ", %u %s%s beside %s", beside, shared ? "more " : "",
                                       beside == 1 ? "runs" : "run", reserved);
        }
        if (beside_held) {
                g_autofree char *list = cpuset_format(held);
                g_string_append_printf(
                    s,
                    ", %u %s%s beside CPU%s %s, held for another domain's emulator or I/O "
                    "threads",
                    beside_held, shared || beside ? "more " : "", beside_held == 1 ? "runs" : "run",
                    cpuset_count(held) == 1 ? "" : "s", list);
        }
        if (on_held) {
                g_autofree char *list = cpuset_format(on);
                g_string_append_printf(s,
                                       ", %u %s%s on CPU%s %s, held for another domain's emulator or I/O "
                                       "threads: no other core was left",
                                       on_held, shared || beside || beside_held ? "more " : "",
                                       on_held == 1 ? "runs" : "run", cpuset_count(on) == 1 ? "" : "s",
                                       list);
        }
        return g_string_free(s, FALSE);
}
