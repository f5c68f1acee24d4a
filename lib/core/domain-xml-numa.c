/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guest NUMA cells and hugepage backing of a domain definition (see domain-xml-numa.h). */
#include "domain-xml-numa.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static void G_GNUC_PRINTF(2, 3) fail(GError **error, const char *format, ...)
{
        g_autofree char *message = NULL;
        va_list ap;

        va_start(ap, format);
        message = g_strdup_vprintf(format, ap);
        va_end(ap);
        g_set_error_literal(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, message);
}

/* A size attribute with its unit (KiB when none), in bytes; false when either is bad or it overflows. */
static bool size_attr(const char *text, const char *unit, uint64_t *ret)
{
        uint64_t mult;
        guint64 v;

        if (!text || domain_xml_unit_multiplier(unit, &mult) < 0 ||
            !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &v, NULL) || v > G_MAXUINT64 / mult)
                return false;
        *ret = v * mult;
        return true;
}

void domain_xml_numa_cell(DomainSpec *s, const char **names, const char **values, GError **error)
{
        const char *id = domain_xml_attr(names, values, "id"),
                   *cpus = domain_xml_attr(names, values, "cpus");
        const char *memory = domain_xml_attr(names, values, "memory"),
                   *unit = domain_xml_attr(names, values, "unit");
        g_autofree char *why = NULL;
        DomainCell cell = {0};
        guint64 n;

        if (s->cells && s->cells->len >= DOMAIN_XML_MAX_CELLS) {
                fail(error, "more than %u guest NUMA cells (<cpu><numa><cell>)", DOMAIN_XML_MAX_CELLS);
                return;
        }
        if (!id || !g_ascii_string_to_unsigned(id, 10, 0, DOMAIN_XML_MAX_CELLS - 1, &n, NULL)) {
                fail(error, "<cell id='%s'>: a guest NUMA cell needs an id below %u", id ? id : "",
                     DOMAIN_XML_MAX_CELLS);
                return;
        }
        cell.id = (unsigned)n;
        if (!size_attr(memory, unit, &cell.memory)) {
                fail(error, "<cell id='%u'>: invalid memory='%s' unit='%s'", cell.id, memory ? memory : "",
                     unit ? unit : "KiB");
                return;
        }
        if (cpuset_parse(cpus ? cpus : "", &cell.vcpus, &why) < 0) {
                fail(error, "<cell id='%u'>: invalid cpus='%s': %s", cell.id, cpus, why ? why : "");
                return;
        }
        cell.stated_memory = cell.memory;
        if (!s->cells)
                s->cells = g_array_new(FALSE, TRUE, sizeof(DomainCell));
        g_array_append_val(s->cells, cell);
}

void domain_xml_numa_sibling(DomainSpec *s, const char **names, const char **values, GError **error)
{
        const char *id = domain_xml_attr(names, values, "id"),
                   *value = domain_xml_attr(names, values, "value");
        DomainCell *cell;
        guint64 sibling, d;

        if (!s->cells || !s->cells->len)
                return;
        cell = &g_array_index(s->cells, DomainCell, s->cells->len - 1);
        if (!id || !g_ascii_string_to_unsigned(id, 10, 0, DOMAIN_XML_MAX_CELLS - 1, &sibling, NULL)) {
                fail(error, "<cell id='%u'><distances><sibling id='%s'>: a sibling needs the id of a cell",
                     cell->id, id ? id : "");
                return;
        }
        /* libvirt's bounds: LOCAL_DISTANCE (10) to UNREACHABLE (255) */
        if (!value || !g_ascii_string_to_unsigned(value, 10, 10, 255, &d, NULL)) {
                fail(error, "<cell id='%u'><distances><sibling id='%u' value='%s'>: a distance is 10 to 255",
                     cell->id, (unsigned)sibling, value ? value : "");
                return;
        }
        if ((sibling == cell->id) != (d == 10)) {
                fail(error,
                     "<cell id='%u'><distances><sibling id='%u' value='%u'>: a cell is 10 from itself and "
                     "farther from any other",
                     cell->id, (unsigned)sibling, (unsigned)d);
                return;
        }
        if (sibling >= cell->ndistances) {
                cell->distances = g_realloc(cell->distances, sibling + 1);
                memset(cell->distances + cell->ndistances, 0, sibling + 1 - cell->ndistances);
                cell->ndistances = (unsigned)sibling + 1;
        }
        cell->distances[sibling] = (uint8_t)d;
}

void domain_xml_numa_hugepages(DomainSpec *s, bool page, const char **names, const char **values,
                               GError **error)
{
        const char *size = domain_xml_attr(names, values, "size"),
                   *unit = domain_xml_attr(names, values, "unit"),
                   *nodeset = domain_xml_attr(names, values, "nodeset");
        g_autofree char *why = NULL;
        DomainPage pg = {0};
        uint64_t bytes;

        s->hugepages = true;
        if (!page)
                return;
        if (!size_attr(size, unit, &bytes) || bytes == 0) {
                fail(error, "invalid <hugepages><page size='%s' unit='%s'>", size ? size : "",
                     unit ? unit : "KiB");
                return;
        }
        if (s->pages && s->pages->len >= DOMAIN_XML_MAX_PAGES) {
                fail(error, "more than %u <hugepages><page> elements", DOMAIN_XML_MAX_PAGES);
                return;
        }
        if (nodeset && cpuset_parse(nodeset, &pg.cells, &why) < 0) {
                fail(error, "<hugepages><page nodeset='%s'>: %s", nodeset, why ? why : "");
                return;
        }
        if (!s->pages)
                s->pages = g_array_new(FALSE, TRUE, sizeof(DomainPage));
        pg.size = bytes;
        g_array_append_val(s->pages, pg);
        /* without guest cells the domain is counted in one pool size: when they differ, the largest, so
         * the result does not hang on the order of the elements (the reason says the sizes differ) */
        if (s->hugepage_size && s->hugepage_size != bytes)
                s->hugepage_sizes_differ = true;
        s->hugepage_size = MAX(s->hugepage_size, bytes);
}

/* The <page> backing guest cell id as libvirt picks it (qemuBuildMemoryGetPagesize()): the one whose
 * nodeset names it, else the one without a nodeset, else none. */
static const DomainPage *cell_page(const DomainSpec *s, unsigned id)
{
        const DomainPage *any = NULL;

        for (unsigned i = 0; s->pages && i < s->pages->len; i++) {
                const DomainPage *pg = &g_array_index(s->pages, DomainPage, i);
                if (!pg->cells)
                        any = any ? any : pg;
                else if (cpuset_has(pg->cells, id))
                        return pg;
        }
        return any;
}

/* The domain's hugepage fields from its cells' backing (its memory devices' cells too, once added). */
static void summarize(DomainSpec *s)
{
        bool any = false, partial = false, differ = false;
        uint64_t largest = 0;

        for (unsigned i = 0; i < s->cells->len; i++) {
                const DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                if (!c->hugepages) {
                        partial = true;
                        continue;
                }
                if (any && c->hugepage_size != largest)
                        differ = true;
                any = true;
                largest = MAX(largest, c->hugepage_size);
        }
        s->hugepages = any;
        s->hugepage_size = any ? largest : 0;
        s->hugepage_sizes_differ = differ;
        s->hugepages_partial = any && partial;
}

void domain_xml_numa_pages(DomainSpec *s)
{
        if (!s->hugepages)
                return;
        if (!s->cells || !s->cells->len) {
                /* pages of the base size (4 KiB on every Linux architecture) are no hugepages: libvirt
                 * backs the memory as if none were asked for */
                if (s->hugepage_size == 4096 && !s->hugepage_sizes_differ) {
                        s->hugepages = false;
                        s->hugepage_size = 0;
                }
                return;
        }
        for (unsigned i = 0; i < s->cells->len; i++) {
                DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                const DomainPage *pg = cell_page(s, c->id);
                /* <hugepages> without a <page>: the host's default size for every cell */
                c->hugepages = !s->pages || (pg && pg->size != 4096);
                c->hugepage_size = c->hugepages && pg ? pg->size : 0;
        }
        summarize(s);
}

/* How many kinds of memory the cells hold: ordinary memory and each page size. A cell of <hugepages>
 * without a size has the host's default, not known here: of the kind of a size some cell or device names
 * (the request tells them apart with the host's default, domain_request_page_sizes_differ()), so that a
 * device of the default size is not taken for a third kind. */
static unsigned kinds(const DomainSpec *s)
{
        uint64_t seen[3], named = 0;
        unsigned n = 0;

        for (unsigned i = 0; i < s->cells->len && !named; i++)
                if (g_array_index(s->cells, DomainCell, i).hugepages)
                        named = g_array_index(s->cells, DomainCell, i).hugepage_size;
        for (unsigned i = 0; i < s->cells->len && n < 3; i++) {
                const DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                uint64_t k = c->hugepages ? (c->hugepage_size ? c->hugepage_size : named) : G_MAXUINT64;
                bool found = false;
                for (unsigned j = 0; j < n && !found; j++)
                        found = seen[j] == k;
                if (!found)
                        seen[n++] = k;
        }
        return n;
}

static int cell_index(const DomainSpec *s, unsigned id)
{
        for (unsigned i = 0; i < s->cells->len; i++)
                if (!g_array_index(s->cells, DomainCell, i).device &&
                    g_array_index(s->cells, DomainCell, i).id == id)
                        return (int)i;
        return -1;
}

static void add_memory(DomainCell *c, uint64_t bytes)
{
        c->memory = bytes > G_MAXUINT64 - c->memory ? G_MAXUINT64 : c->memory + bytes;
}

void domain_xml_numa_devices(DomainSpec *s, const GArray *devices)
{
        bool any = false;

        for (unsigned i = 0; s->cells && devices && i < devices->len; i++) {
                const DomainMemoryDevice *d = &g_array_index(devices, DomainMemoryDevice, i);
                int t = cell_index(s, d->node);
                DomainCell *target, dev;
                if (t < 0) /* in no cell: outside the cells, in <memory> only */
                        continue;
                target = &g_array_index(s->cells, DomainCell, t);
                dev = (DomainCell){.id = DOMAIN_XML_MAX_CELLS + i,
                                   .vcpus = cpuset_new(),
                                   .memory = d->bytes,
                                   .hugepages = target->hugepages,
                                   .hugepage_size = target->hugepage_size,
                                   .device = true,
                                   .device_target = target->id,
                                   .device_nodes = d->nodemask ? cpuset_copy(d->nodemask) : NULL};
                /* as libvirt: a page of the base size (4 KiB) is no hugepage */
                if (d->pagesize) {
                        dev.hugepages = d->pagesize != 4096;
                        dev.hugepage_size = dev.hugepages ? d->pagesize : 0;
                }
                if (!dev.device_nodes && dev.hugepages == target->hugepages &&
                    dev.hugepage_size == target->hugepage_size) {
                        add_memory(target, d->bytes);
                        cpuset_free(dev.vcpus);
                        continue;
                }
                /* its nodes are among those the cells' memory is bound to */
                if (dev.device_nodes && s->memnode_nodeset)
                        cpuset_union(s->memnode_nodeset, dev.device_nodes);
                g_array_append_val(s->cells, dev);
                any = true;
        }
        if (!any)
                return;
        /* more kinds than two (three page sizes, two beside ordinary memory) are counted at one size, the
         * largest: the devices of another kind than their cell's go back into it, and the reason says so */
        if (kinds(s) > 2)
                for (unsigned i = s->cells->len; i-- > 0;) {
                        DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                        DomainCell *target;
                        if (!c->device)
                                continue;
                        target = &g_array_index(s->cells, DomainCell, cell_index(s, c->device_target));
                        if (c->hugepages == target->hugepages && c->hugepage_size == target->hugepage_size)
                                continue;
                        add_memory(target, c->memory);
                        cpuset_free(c->vcpus);
                        cpuset_free(c->device_nodes);
                        g_array_remove_index(s->cells, i);
                        s->devices_in_cells = true;
                }
        summarize(s);
}

const CpuSet *domain_cell_binding(const DomainSpec *s, const DomainCell *c, MemoryMode *ret_mode)
{
        unsigned id = c->device ? c->device_target : c->id;
        const DomainMemnode *m = NULL;

        for (unsigned k = 0; s->memnodes && k < s->memnodes->len; k++)
                if (g_array_index(s->memnodes, DomainMemnode, k).cellid == id)
                        m = &g_array_index(s->memnodes, DomainMemnode, k);
        if (ret_mode)
                *ret_mode = m ? m->mode : c->device ? s->memory_mode : MEMORY_MODE_STRICT;
        if (c->device && c->device_nodes)
                return c->device_nodes;
        return m ? m->nodes : NULL;
}

int domain_xml_numa_check(const DomainSpec *s, GError **error)
{
        g_autoptr(CpuSet) seen = cpuset_new();
        g_autoptr(CpuSet) ids = cpuset_new();

        for (unsigned i = 0; s->cells && i < s->cells->len; i++) {
                const DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                int last = -1;

                if (c->device) /* a memory device's, no guest cell: nothing names it */
                        continue;
                if (cpuset_has(ids, c->id)) {
                        fail(error, "two guest NUMA cells have id %u", c->id);
                        return -EINVAL;
                }
                cpuset_add(ids, c->id);
                CPUSET_FOREACH (v, c->vcpus)
                        last = v;
                if (last >= 0 && s->max_vcpus && (unsigned)last >= s->max_vcpus) {
                        fail(error, "<cell id='%u'> names vCPU %d, but the domain has %u vCPUs", c->id, last,
                             s->max_vcpus);
                        return -EINVAL;
                }
                if (cpuset_intersects(seen, c->vcpus)) {
                        g_autoptr(CpuSet) both = cpuset_copy(seen);
                        g_autoptr(CpuSet) only = cpuset_copy(seen);
                        g_autofree char *list = NULL;
                        cpuset_subtract(only, c->vcpus);
                        cpuset_subtract(both, only);
                        list = cpuset_format(both);
                        fail(error, "<cell id='%u'> names vCPUs %s that another cell holds", c->id, list);
                        return -EINVAL;
                }
                cpuset_union(seen, c->vcpus);
        }
        /* as libvirt: a sibling names a cell of the guest */
        for (unsigned i = 0; s->cells && i < s->cells->len; i++) {
                const DomainCell *c = &g_array_index(s->cells, DomainCell, i);
                for (unsigned k = 0; k < c->ndistances; k++)
                        if (c->distances[k] && !cpuset_has(ids, k)) {
                                fail(error,
                                     "<cell id='%u'><distances><sibling id='%u'>: no guest NUMA cell has "
                                     "id %u",
                                     c->id, k, k);
                                return -EINVAL;
                        }
        }
        /* as libvirt: a <memnode> names an existing cell, and each cell at most once */
        g_autoptr(CpuSet) bound = cpuset_new();
        for (unsigned i = 0; s->memnodes && i < s->memnodes->len; i++) {
                unsigned id = g_array_index(s->memnodes, DomainMemnode, i).cellid;
                if (!s->cells || !s->cells->len) {
                        fail(error,
                             "<memnode cellid='%u'>: the domain has no guest NUMA cells (<cpu><numa>)", id);
                        return -EINVAL;
                }
                if (!cpuset_has(ids, id)) {
                        fail(error, "<memnode cellid='%u'>: no guest NUMA cell has id %u", id, id);
                        return -EINVAL;
                }
                if (cpuset_has(bound, id)) {
                        fail(error, "two <memnode> elements for guest NUMA cell %u", id);
                        return -EINVAL;
                }
                cpuset_add(bound, id);
        }
        return 0;
}

void domain_xml_numa_free(DomainSpec *s)
{
        for (unsigned i = 0; s->pages && i < s->pages->len; i++)
                cpuset_free(g_array_index(s->pages, DomainPage, i).cells);
        g_clear_pointer(&s->pages, g_array_unref);
        if (!s->cells)
                return;
        for (unsigned i = 0; i < s->cells->len; i++) {
                cpuset_free(g_array_index(s->cells, DomainCell, i).vcpus);
                cpuset_free(g_array_index(s->cells, DomainCell, i).device_nodes);
                g_free(g_array_index(s->cells, DomainCell, i).distances);
        }
        g_clear_pointer(&s->cells, g_array_unref);
}
