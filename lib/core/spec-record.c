/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Telling placementd's own pins and binding in a definition from the user's statements. */
#include "spec-record.h"

#include <string.h>

/* Both unset, or both set and equal. */
static bool same_set(const CpuSet *a, const CpuSet *b)
{
        return (!a && !b) || (a && b && cpuset_equal(a, b));
}

/* The guest cells a and b state: ids, vCPUs, <cell memory> and <distances>, as the user wrote them. Not
 * what the rest of the definition makes of them: a record's snapshot keeps <vcpu>, <cputune>, <numatune>
 * and the cells alone, no <memoryBacking> and no <memory> device (the request reads those from the live
 * definition), so its cells read as backed by ordinary memory with no device in them; compared so, a
 * hugepage-backed guest with cells, or one with a DIMM in a cell, was never explained by its own record. */
static const DomainCell *stated_cell(const GArray *cells, unsigned *i)
{
        for (; cells && *i < cells->len; (*i)++)
                if (!g_array_index(cells, DomainCell, *i).device)
                        return &g_array_index(cells, DomainCell, (*i)++);
        return NULL;
}

static bool same_cells(const GArray *a, const GArray *b)
{
        unsigned ia = 0, ib = 0;

        for (;;) {
                const DomainCell *x = stated_cell(a, &ia), *y = stated_cell(b, &ib);
                if (!x || !y)
                        return !x && !y;
                if (x->id != y->id || x->stated_memory != y->stated_memory || !same_set(x->vcpus, y->vcpus))
                        return false;
                /* its <distances>: what one names past the other's end is 0 (none) */
                for (unsigned k = 0; k < MAX(x->ndistances, y->ndistances); k++)
                        if ((k < x->ndistances ? x->distances[k] : 0) !=
                            (k < y->ndistances ? y->distances[k] : 0))
                                return false;
        }
}

/* The nodes d's memory was bound to live by placementd (memory-binding="applied"), or NULL. */
static CpuSet *recorded_binding(const MetaDecision *d)
{
        CpuSet *nodes;

        if (!d || !d->memory || !d->memory->len || !d->memory_binding ||
            strcmp(d->memory_binding, "applied") != 0)
                return NULL;
        nodes = cpuset_new();
        for (unsigned i = 0; i + 1 < d->memory->len; i += 2)
                if (g_array_index(d->memory, guint64, i + 1) > 0 &&
                    g_array_index(d->memory, guint64, i) <= CPUSET_MAX)
                        cpuset_add(nodes, (unsigned)g_array_index(d->memory, guint64, i));
        if (cpuset_is_empty(nodes))
                g_clear_pointer(&nodes, cpuset_free);
        return nodes;
}

/* Whether def's emulator pin is snapshot's, or (snapshot has none) the one def's decision recorded. */
static bool emulator_explained(const DomainSpec *def, const DomainSpec *snapshot)
{
        const MetaDecision *d = def->decision;

        if (def->has_emulatorpin == snapshot->has_emulatorpin &&
            same_set(def->emulatorpin, snapshot->emulatorpin))
                return true;
        return def->has_emulatorpin && !snapshot->has_emulatorpin && def->emulatorpin && d && d->emulator &&
               cpuset_equal(def->emulatorpin, d->emulator);
}

/* Whether def's memory binding is snapshot's, or (snapshot has none) the one def's decision applied. */
static bool binding_explained(const DomainSpec *def, const DomainSpec *snapshot)
{
        g_autoptr(CpuSet) bound = NULL;

        if (same_set(def->memory_nodeset, snapshot->memory_nodeset) &&
            (!def->memory_nodeset || def->memory_mode == snapshot->memory_mode))
                return true;
        if (snapshot->memory_nodeset || !def->memory_nodeset)
                return false;
        bound = recorded_binding(def->decision);
        return bound && cpuset_equal(bound, def->memory_nodeset);
}

/* Whether def's I/O thread pins are snapshot's but for those def's decision recorded as its own. */
static bool iothreads_explained(const DomainSpec *def, const DomainSpec *snapshot)
{
        g_autoptr(CpuSet) a = def->iothreadpins ? cpuset_copy(def->iothreadpins) : cpuset_new();
        g_autoptr(CpuSet) b = snapshot->iothreadpins ? cpuset_copy(snapshot->iothreadpins) : cpuset_new();
        const CpuSet *own = def->decision ? def->decision->iothreads : NULL;

        if (own) {
                cpuset_subtract(a, own);
                cpuset_subtract(b, own);
        }
        return cpuset_equal(a, b);
}

/* Whether def states what snapshot does of what no one changes on a running domain: numad's placement,
 * <vcpu cpuset>, the <memnode> bindings and the guest cells. */
static bool same_fixed(const DomainSpec *def, const DomainSpec *snapshot)
{
        return def->vcpu_auto == snapshot->vcpu_auto && def->numatune_auto == snapshot->numatune_auto &&
               same_set(def->vcpu_cpuset, snapshot->vcpu_cpuset) &&
               same_set(def->memnode_nodeset, snapshot->memnode_nodeset) &&
               def->nmemnodes == snapshot->nmemnodes && same_cells(def->cells, snapshot->cells);
}

bool domain_spec_record_explains(const DomainSpec *def, const DomainSpec *snapshot)
{
        if (def->has_vcpupin != snapshot->has_vcpupin &&
            !(def->has_vcpupin && domain_spec_pins_recorded(def)))
                return false;
        return same_fixed(def, snapshot) && emulator_explained(def, snapshot) &&
               binding_explained(def, snapshot) && iothreads_explained(def, snapshot);
}

bool domain_spec_record_explains_live(const DomainSpec *live, const DomainSpec *snapshot)
{
        return same_fixed(live, snapshot);
}

void domain_spec_drop_recorded(DomainSpec *user, const DomainSpec *src)
{
        const MetaDecision *d = src->decision;
        g_autoptr(CpuSet) bound = recorded_binding(d);

        if (user->has_emulatorpin && user->emulatorpin && d && d->emulator &&
            cpuset_equal(user->emulatorpin, d->emulator)) {
                user->has_emulatorpin = false;
                g_clear_pointer(&user->emulatorpin, cpuset_free);
        }
        if (user->memory_nodeset && bound && cpuset_equal(user->memory_nodeset, bound))
                g_clear_pointer(&user->memory_nodeset, cpuset_free);
}
