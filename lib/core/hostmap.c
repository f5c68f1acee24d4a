/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hostmap.h"
#include "size.h"
#include "text-safe.h"

#define CORES_PER_LINE 16u

static char letter(unsigned i)
{
        static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        return i < sizeof(letters) - 1 ? letters[i] : '*';
}

/* One line per hugepage pool of node n: "    hugepages 2.0 MiB: 64.0 MiB free of 128.0 MiB". */
static void append_pools(GString *out, const Topology *t, const Ledger *l, unsigned n)
{
        char a[32], b[32], c[32];

        for (unsigned i = 0; i < t->nodes[n].nhugepages; i++) {
                uint64_t size = t->nodes[n].hugepages[i].size;
                g_string_append_printf(out, "    hugepages %s: %s free of %s\n",
                                       size_format(size, a, sizeof(a)),
                                       size_format(ledger_node_free_hugepages(l, n, size), b, sizeof(b)),
                                       size_format(topology_node_hugepage_bytes(t, n, size), c, sizeof(c)));
        }
}

bool hostmap_node_in_package(const Topology *t, unsigned n, unsigned pkg)
{
        const TopoNode *node = &t->nodes[n];

        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++)
                if (t->cores[c].package == pkg)
                        return true;
        return false;
}

/* Whether node n has cores in a package before pkg (it was shown there first). */
static bool shown_before(const Topology *t, unsigned n, unsigned pkg)
{
        for (unsigned p = 0; p < pkg; p++)
                if (hostmap_node_in_package(t, n, p))
                        return true;
        return false;
}

/* Counts plan k's vCPU or held CPU pu: its own while no other domain's is there, '+' (-2) once another
 * one's is; shared[] notes every domain on such a CPU. */
static void count_on(int *owner, bool *shared, unsigned pu, int k)
{
        if (owner[pu] == -1 || owner[pu] == k) {
                owner[pu] = k;
                return;
        }
        if (owner[pu] >= 0)
                shared[owner[pu]] = true;
        shared[k] = true;
        owner[pu] = -2;
}

/* Name i of a list in the legend, six a line: the first line starts with lead, the others with more. */
static void append_name(GString *out, const char *lead, const char *more, unsigned i, char mark,
                        const char *name)
{
        g_autofree char *safe = text_safe(name);

        if (i % 6 == 0)
                g_string_append_printf(out, "\n  %s", i ? more : lead);
        else
                g_string_append(out, ", ");
        if (mark)
                g_string_append_printf(out, "%c ", mark);
        g_string_append(out, safe);
}

static const char *plan_label(const Ledger *l, GPtrArray *keys, unsigned k)
{
        const Plan *plan = ledger_lookup(l, g_ptr_array_index(keys, k));
        return plan->name && *plan->name ? plan->name : (const char *)g_ptr_array_index(keys, k);
}

/* By label (the domain's name), then key: the daemon keys domains by UUID, and letters in UUID order
 * would differ from the offline planner's (keyed by name) and, on libvirt's test driver, from run to run. */
static gint compare_labels(gconstpointer a, gconstpointer b, gpointer ledger)
{
        const char *ka = *(const char *const *)a, *kb = *(const char *const *)b;
        const Plan *pa = ledger_lookup(ledger, ka), *pb = ledger_lookup(ledger, kb);
        int c = strcmp(pa->name && *pa->name ? pa->name : ka, pb->name && *pb->name ? pb->name : kb);
        return c ? c : strcmp(ka, kb);
}

char *hostmap_render(const Topology *t, const Ledger *l, const CpuSet *reserved)
{
        GString *out = g_string_new(NULL);
        g_autoptr(GPtrArray) keys = ledger_keys(l);
        g_autofree int *owner = g_new(int, MAX(t->npus, 1));  /* -1 free, -2 several, else key index */
        g_autofree int *mark = g_new(int, MAX(keys->len, 1)); /* each key's letter; -1: none on the map */
        g_autofree bool *shared = g_new0(bool, MAX(keys->len, 1)); /* on a '+' CPU */
        unsigned marks = 0, nshared = 0;
        char a[32], b[32];

        g_ptr_array_sort_with_data(keys, compare_labels, (gpointer)l);
        for (unsigned p = 0; p < t->npus; p++)
                owner[p] = -1;
        for (unsigned k = 0; k < keys->len; k++) {
                const Plan *plan = ledger_lookup(l, g_ptr_array_index(keys, k));
                for (unsigned i = 0; i < plan->nvcpus; i++) {
                        int pu = plan->vcpu_pu[i];
                        if (pu >= 0 && (unsigned)pu < t->npus)
                                count_on(owner, shared, (unsigned)pu, (int)k);
                }
                /* the CPUs the ledger holds for its emulator and I/O threads show as its own */
                g_autoptr(CpuSet) held = plan_held_thread_pus(t, plan);
                CPUSET_FOREACH (pu, held)
                        count_on(owner, shared, (unsigned)pu, (int)k);
        }
        /* a letter only for a domain with a CPU of its own: one whose every CPU is shared shows as '+' */
        for (unsigned k = 0; k < keys->len; k++) {
                mark[k] = -1;
                for (unsigned p = 0; p < t->npus && mark[k] < 0; p++)
                        if (owner[p] == (int)k)
                                mark[k] = (int)marks++;
        }

        for (unsigned pkg = 0; pkg < t->npackages; pkg++) {
                g_string_append_printf(out, "package %u\n", t->packages[pkg].os_index);
                for (unsigned n = 0; n < t->nnodes; n++) {
                        const TopoNode *node = &t->nodes[n];
                        unsigned shown = 0;
                        if (!hostmap_node_in_package(t, n, pkg))
                                continue;
                        /* a node over several packages (interleaved sockets, a VM) shows in each, with its
                         * cores there; its memory once */
                        if (shown_before(t, n, pkg)) {
                                g_string_append_printf(out, "  node %u  (continued)\n", node->os_index);
                        } else {
                                g_string_append_printf(out, "  node %u  %s, %s held by domains\n",
                                                       node->os_index,
                                                       topology_node_memory_text(t, n, a, sizeof(a)),
                                                       size_format(ledger_node_memory(l, n), b, sizeof(b)));
                                append_pools(out, t, l, n);
                        }
                        for (unsigned c = node->core_first; c < node->core_first + node->ncores; c++) {
                                const TopoCore *core = &t->cores[c];
                                if (core->package != pkg)
                                        continue;
                                if (shown % CORES_PER_LINE == 0)
                                        g_string_append_printf(out, "%s    cpu %4u ", shown ? "\n" : "",
                                                               t->pus[core->pu_first].os_index);
                                g_string_append_c(out, '[');
                                for (unsigned p = core->pu_first; p < core->pu_first + core->npus; p++) {
                                        char ch = owner[p] == -1   ? '.'
                                                  : owner[p] == -2 ? '+'
                                                                   : letter((unsigned)mark[owner[p]]);
                                        if (owner[p] == -1 && reserved &&
                                            cpuset_has(reserved, t->pus[p].os_index))
                                                ch = '#';
                                        g_string_append_c(out, ch);
                                }
                                g_string_append_c(out, ']');
                                shown++;
                        }
                        g_string_append_c(out, '\n');
                }
        }
        for (unsigned n = 0; n < t->nnodes; n++) {
                if (t->nodes[n].ncores)
                        continue;
                g_string_append_printf(out, "memory-only node %u  %s, %s held by domains\n",
                                       t->nodes[n].os_index, topology_node_memory_text(t, n, a, sizeof(a)),
                                       size_format(ledger_node_memory(l, n), b, sizeof(b)));
                append_pools(out, t, l, n);
        }
        g_string_append(out,
                        "legend: [..] one core, one character per thread; . free, # reserved for the host, "
                        "+ several domains");
        /* a domain that holds no CPU (unplaceable, floating) has no letter: nothing on the map is its */
        for (unsigned k = 0; k < keys->len; k++)
                if (mark[k] >= 0)
                        append_name(out, "", "", (unsigned)mark[k], letter((unsigned)mark[k]),
                                    plan_label(l, keys, k));
        for (unsigned k = 0; k < keys->len; k++)
                if (shared[k])
                        append_name(out, "+ shared by ", "             ", nshared++, 0,
                                    plan_label(l, keys, k));
        g_string_append_c(out, '\n');
        return g_string_free(out, FALSE);
}
