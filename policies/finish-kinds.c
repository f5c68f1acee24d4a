/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finishing: on a hybrid host (hwloc CPU kinds), the reason says when vCPUs run on a less performant kind.
 */
#include "finish-internal.h"
#include "text-safe.h"

#include <string.h>

/* The kind's name as the reason gives it: hwloc's CoreType, with its maximum frequency when another kind has
 * the same name (Arrow Lake's E-cores and low-power E-cores), or "kind N" (as placementctl topology numbers
 * them, most performant first) without one. */
static char *kind_name(const Topology *t, unsigned rank)
{
        const char *name = rank < t->ncore_kinds ? t->core_kind_names[rank] : NULL;

        g_autofree char *safe = NULL;

        if (!name || !*name)
                return g_strdup_printf("kind %u", rank);
        safe = text_safe(name); /* the topology's text: an XML export may hold anything */
        for (unsigned r = 0; r < t->ncore_kinds; r++)
                if (r != rank && g_strcmp0(t->core_kind_names[r], name) == 0)
                        return t->core_kind_max_mhz[rank]
                                   ? g_strdup_printf("%s (%u MHz)", safe, t->core_kind_max_mhz[rank])
                                   : g_strdup_printf("%s (kind %u)", safe, rank);
        return g_steal_pointer(&safe);
}

/* "2 free IntelCore cores", or "5 free cores of more performant kinds (2 IntelCore, 3 IntelAtom)": the free
 * cores of the kinds above rank (most performant first) in free[]; NULL when none is free. */
static char *free_above(const Topology *t, const unsigned *free, unsigned rank)
{
        GString *kinds = g_string_new(NULL);
        g_autofree char *only = NULL;
        unsigned listed = 0, total = 0;

        for (unsigned r = 0; r < rank; r++) {
                g_autofree char *name = NULL;
                if (!free[r])
                        continue;
                name = kind_name(t, r);
                g_string_append_printf(kinds, "%s%u %s", listed ? ", " : "", free[r], name);
                total += free[r];
                listed++;
                if (listed == 1)
                        only = g_steal_pointer(&name);
        }
        if (!total) {
                g_string_free(kinds, TRUE);
                return NULL;
        }
        if (listed == 1) {
                g_string_free(kinds, TRUE);
                return g_strdup_printf("%u free %s core%s", total, only, total == 1 ? "" : "s");
        }
        {
                g_autofree char *list = g_string_free(kinds, FALSE);
                return g_strdup_printf("%u free cores of more performant kinds (%s)", total, list);
        }
}

void finish_kind_note(const HostView *v, Plan *plan)
{
        const Topology *t = v->t;
        g_autofree unsigned *on = NULL, *free = NULL;
        unsigned placed = 0, nkinds = 0, lowest = 0, top;
        GString *s;

        if (t->ncore_kinds < 2 || v->params->core_kinds == CORE_KINDS_ANY || plan->nvcpus == 0)
                return;
        on = g_new0(unsigned, t->ncore_kinds);
        free = g_new0(unsigned, t->ncore_kinds);
        for (unsigned i = 0; i < plan->nvcpus; i++)
                if (plan->vcpu_pu[i] >= 0) {
                        unsigned r = t->cores[t->pus[plan->vcpu_pu[i]].core].kind_rank;
                        on[MIN(r, t->ncore_kinds - 1)]++;
                        placed++;
                }
        /* the free cores of its nodes before it came, by kind */
        for (unsigned c = 0; c < t->ncores; c++)
                if (v->core_free[c] && cpuset_has(plan->nodes, t->cores[c].node))
                        free[MIN(t->cores[c].kind_rank, t->ncore_kinds - 1)]++;
        for (unsigned r = 0; r < t->ncore_kinds; r++)
                if (on[r]) {
                        nkinds++;
                        lowest = r;
                }
        /* the most performant kind the host has a core of: hwloc may list kinds that only ever share a
         * core with a less performant one (such a core counts as the least performant) */
        top = t->ncore_kinds - 1;
        for (unsigned c = 0; c < t->ncores; c++)
                top = MIN(top, t->cores[c].kind_rank);
        if (!placed || (nkinds == 1 && lowest <= top))
                return;
        s = g_string_new(plan->reason ? plan->reason : "");
        if (nkinds == 1) {
                g_autofree char *name = kind_name(t, lowest), *above = free_above(t, free, lowest),
                                *best = kind_name(t, top);

                if (placed == 1)
                        g_string_append_printf(s, "; its vCPU runs on %s %s core",
                                               strchr("AEIOUaeiou", name[0]) ? "an" : "a", name);
                else
                        g_string_append_printf(s, "; its vCPUs run on %s cores", name);
                if (above)
                        g_string_append_printf(s,
                                               ", not on the %s: too few for all %u, and a domain keeps "
                                               "to one kind where one has a free core for each vCPU",
                                               above, placed);
                else if (lowest == top + 1)
                        g_string_append_printf(s, ": no %s core it may use is free", best);
                else
                        g_string_append(s, ": no core of a more performant kind it may use is free");
        } else {
                bool first = true;

                for (unsigned r = 0; r < t->ncore_kinds; r++) {
                        g_autofree char *name = NULL;
                        if (!on[r])
                                continue;
                        name = kind_name(t, r);
                        g_string_append_printf(
                            s, first ? "; %u of its vCPUs run on %s cores" : ", %u on %s cores", on[r],
                            name);
                        first = false;
                }
                g_string_append(s, ": no kind has a free core for each of them");
        }
        g_free(plan->reason);
        plan->reason = g_string_free(s, FALSE);
}
