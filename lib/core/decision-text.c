/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "decision-text.h"
#include "decision-json.h"
#include "size.h"
#include "text-safe.h"

char *decision_nodes_text(const CpuSet *os_nodes)
{
        g_autofree char *list = cpuset_format(os_nodes);

        return g_strdup_printf("node%s %s", cpuset_count(os_nodes) == 1 ? "" : "s", list);
}

static void append_body(GString *s, const Topology *t, const Plan *p)
{
        g_autoptr(CpuSet) mem_idx = plan_memory_nodes(p);
        g_autoptr(CpuSet) mem = topology_nodes_to_os(t, mem_idx);
        g_autofree char *mem_text = decision_nodes_text(mem);
        g_autofree char *emu = cpuset_format(p->emulator_pin);

        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *pin = cpuset_format(p->vcpu_pins[i]);
                if (!*pin)
                        continue;
                g_string_append_printf(s, "%s vCPU %u -> %s", i % 4 == 0 ? (i ? "\n " : " ") : "  ",
                                       plan_vcpu_id(p, i), pin);
        }
        g_string_append_printf(s, "\n  memory on %s, emulator on %s\n", mem_text,
                               *emu ? emu : "(not pinned)");
        if (!cpuset_is_empty(p->iothreads)) {
                g_autofree char *ids = cpuset_format(p->iothreads), *pin = cpuset_format(p->iothread_pin);
                g_string_append_printf(s, "  I/O thread%s %s on %s\n",
                                       cpuset_count(p->iothreads) == 1 ? "" : "s", ids, pin);
        }
        {
                /* what the ledger holds for its QEMU threads (plan_held_thread_pus()): JSON's held_cpus */
                g_autoptr(CpuSet) pus = plan_held_thread_pus(t, p);
                g_autoptr(CpuSet) held = cpuset_new();
                g_autofree char *list = NULL;
                CPUSET_FOREACH (pu, pus)
                        cpuset_add(held, t->pus[pu].os_index);
                list = cpuset_format(held);
                if (*list)
                        g_string_append_printf(s, "  held for its emulator and I/O threads: %s\n", list);
        }
}

static void append_head(GString *s, const Topology *t, const char *name, const Plan *p, const char *result)
{
        g_autoptr(CpuSet) nodes = topology_nodes_to_os(t, p->nodes);
        g_autofree char *nodes_text = decision_nodes_text(nodes);
        char a[32];

        g_autofree char *safe = text_safe(name);

        g_string_append_printf(s, "%s (%u vCPU%s, %s): %s", safe, p->requested_vcpus,
                               p->requested_vcpus == 1 ? "" : "s", size_format(p->memory, a, sizeof(a)),
                               result);
        if (!cpuset_is_empty(nodes))
                g_string_append_printf(s, " on %s", nodes_text);
        g_string_append_printf(s, " [%s]\n", policy_kind_to_string(p->policy));
}

char *plan_to_text(const Topology *t, const Plan *p)
{
        GString *s = g_string_new(NULL);

        append_head(s, t, p->name, p, plan_result_to_string(p->result));
        if (p->result != PLAN_UNPLACEABLE)
                append_body(s, t, p);
        g_string_append_printf(s, "  why: %s\n", p->reason ? p->reason : "");
        return g_string_free(s, FALSE);
}

char *decision_to_text(const Topology *t, const Decision *d)
{
        GString *s = g_string_new(NULL);
        const Plan *shown = decision_shown_plan(d);

        if (shown) {
                g_autofree char *result = decision_result_text(d); /* "advisory (unplaceable)" */
                append_head(s, t, d->name, shown, result);
                /* what follows reads as the domain's pins: say it is not */
                if (d->result == DECISION_ADVISORY)
                        g_string_append(s, "  " DECISION_ADVISED_TEXT "; the domain runs as it did\n");
                if (shown->result != PLAN_UNPLACEABLE)
                        append_body(s, t, shown);
        } else {
                g_autofree char *safe = text_safe(d->name);
                g_string_append_printf(s, "%s: %s\n", safe, decision_result_to_string(d->result));
        }
        g_string_append_printf(s, "  why: %s\n", d->reason ? d->reason : "");
        if (d->plan && d->result != DECISION_SKIPPED)
                g_string_append_printf(s, "  memory binding: %s\n",
                                       memory_binding_to_string(d->memory_binding));
        if (d->apply_error)
                g_string_append_printf(s, "  error: %s\n", d->apply_error);
        if (d->adopted)
                g_string_append(s, "  adopted from its recorded decision\n");
        return g_string_free(s, FALSE);
}

/* What explain says of a candidate set of plan p, into buf when it names a page size. */
static const char *verdict(const Plan *p, const PlanCandidate *c, char *buf, size_t len)
{
        char a[32], b[32];

        if (c->chosen)
                return c->qualifies ? "chosen" : "chosen (fallback)";
        if (c->busier)
                return "busier cores";
        if (c->as_busy)
                return "as busy, further";
        if (c->idle_node)
                return "a node takes no part";
        if (c->cell_node_missing)
                return "a <memnode> cell's node missing";
        if (c->cells_misfit)
                return "its cells do not fit";
        /* cells of two page sizes: the sizes short */
        if (p->second_page_size && (c->pages_short || c->ordinary_short)) {
                size_format(p->hugepage_size, a, sizeof(a));
                size_format(p->second_page_size, b, sizeof(b));
                if (c->pages_short && c->ordinary_short)
                        g_snprintf(buf, len, "too few free %s and %s hugepages", a, b);
                else
                        g_snprintf(buf, len, "too few free %s hugepages", c->pages_short ? a : b);
                return buf;
        }
        if (c->pages_short && c->ordinary_short)
                return "too few hugepages, too little ordinary memory";
        if (c->pages_short)
                return "too few free hugepages";
        if (c->ordinary_short)
                return "too little ordinary memory";
        return c->qualifies ? "qualifies" : "too small";
}

char *plan_explain(const Topology *t, const Plan *p)
{
        GString *s = g_string_new(NULL);
        char a[32];

        g_string_append_printf(s, "policy %s, vCPU pins per %s; %u vCPU%s, %s\n",
                               policy_kind_to_string(p->policy), vcpu_pin_mode_to_string(p->vcpu_pin),
                               p->requested_vcpus, p->requested_vcpus == 1 ? "" : "s",
                               size_format(p->memory, a, sizeof(a)));
        if (p->candidates->len) {
                g_string_append(s, p->repinned
                                       ? "candidate node sets when it was placed, nearest first (max "
                                         "distance, mean distance):\n"
                                       : "candidate node sets, nearest first (max distance, mean "
                                         "distance):\n");
                g_string_append_printf(s, "  %-5s %-12s %4s %7s %10s %9s %12s  %s\n", "rank", "nodes", "max",
                                       "mean", "free cores", "free CPUs", "free memory", "verdict");
        }
        for (unsigned i = 0; i < p->candidates->len; i++) {
                const PlanCandidate *c = g_ptr_array_index(p->candidates, i);
                g_autofree char *nodes = cpuset_format(c->nodes);
                char why[96];
                g_string_append_printf(
                    s, "  %-5u %-12s %4u %7.2f %10u %9u %12s  %s\n", c->rank + 1, nodes, c->max_distance,
                    c->mean_distance, c->free_cores, c->free_pus,
                    t && t->memory_sizes_unknown ? "unknown" : size_format(c->free_memory, a, sizeof(a)),
                    verdict(p, c, why, sizeof(why)));
        }
        if (p->repinned && (p->result == PLAN_PLACED || p->result == PLAN_OVERCOMMITTED)) {
                g_string_append(s, "rule: re-pinned where it runs by measured load (healed or rebalanced): "
                                   "busy vCPUs or busy host-side threads moved to cores that run nothing "
                                   "busy, of its own nodes first; its memory stays where it was placed\n");
                g_string_append_printf(s, "outcome: %s\n", p->reason ? p->reason : "");
                return g_string_free(s, FALSE);
        }
        switch (p->result) {
        case PLAN_PLACED:
                g_string_append_printf(
                    s, "rule: the nearest group of sets with room wins; among equally near sets, %s%s%s\n",
                    p->device_near ? "one with a node of its PCI devices first (it chose here), then "
                    : p->threads_near
                        ? "one with the node of the CPUs its definition pins QEMU's threads to first (it "
                          "chose here), then "
                        : "",
                    !p->l3_fit ? ""
                    : p->l3_by_package
                        ? "one where each node's share fits the cores of one package first (no L3 "
                          "cache is known), then "
                        : "one where each node's share fits one L3 cache first, then ",
                    p->packed ? "the fullest of them (Fit=pack): fewest free cores, then least free memory, "
                                "then the one listed first"
                              : "the one with most free cores, then most free memory, then the one listed "
                                "first");
                for (unsigned c = 0; c < p->ncells; c++)
                        if (cpuset_count(p->cells[c].nodes) > 1) {
                                g_string_append(s,
                                                "rule for guest cells too big for one node: of the sets as "
                                                "near by their farthest nodes, the one that splits each "
                                                "over the nearest nodes first\n");
                                break;
                        }
                break;
        case PLAN_OVERCOMMITTED:
                g_string_append(
                    s, "fallback: no set had room, so the memory-fitting set with most room took it "
                       "and the least loaded cores were shared\n");
                break;
        case PLAN_UNPLACEABLE:
                g_string_append(
                    s, p->nothing_usable
                           ? "fallback: nothing on this host is left that it may use, so nothing was "
                             "pinned\n"
                           : "fallback: memory fits on no set, so nothing was pinned\n");
                break;
        case PLAN_ADOPTED:
        default:
                g_string_append(s, "pins were made outside placementd and recorded as they are\n");
                break;
        }
        g_string_append_printf(s, "outcome: %s\n", p->reason ? p->reason : "");
        return g_string_free(s, FALSE);
}

char *decision_explain(const Topology *t, const Decision *d)
{
        g_autofree char *head = decision_to_text(t, d);
        const Plan *shown = decision_shown_plan(d);
        g_autofree char *why = shown ? plan_explain(t, shown) : g_strdup("");

        /* a record holds the decision, not the sets it was chosen from: say so rather than list none */
        if (d->adopted && shown && !shown->candidates->len && shown->result != PLAN_ADOPTED) {
                g_autofree char *note = g_strdup_printf(
                    "candidates: not kept (adopted from its record after checking its pins "
                    "run as recorded; placementctl replace %s decides anew and lists them)\n",
                    d->name ? d->name : d->uuid);
                char *both = g_strconcat(note, why, NULL);
                g_free(why);
                why = both;
        }

        return g_strconcat(head, why, NULL);
}
