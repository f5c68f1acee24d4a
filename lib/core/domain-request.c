/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "domain-request.h"
#include "file-read.h"

const char *domain_spec_opt_out(const DomainSpec *user)
{
        if (user->meta_skip)
                return "opted out with <placementd:domain skip='yes'/>";
        if (user->has_vcpupin)
                return "its definition pins vCPUs itself (<cputune><vcpupin>)";
        if (user->vcpu_auto)
                return "<vcpu placement='auto'>: libvirt and numad place it";
        if (user->numatune_auto)
                return "<numatune><memory placement='auto'>: libvirt and numad place it";
        return NULL;
}

bool domain_spec_pins_unplugged_only(const DomainSpec *user, const DomainSpec *live)
{
        if (!user->has_vcpupin || user->vcpupins_unreadable || !user->vcpupins || !user->vcpupins->len)
                return false;
        for (unsigned i = 0; i < user->vcpupins->len; i++) {
                unsigned id = g_array_index(user->vcpupins, MetaVcpu, i).id;
                if (live->vcpu_ids ? vcpu_id_index(live->vcpu_ids, live->vcpus, id) >= 0 : id < live->vcpus)
                        return false;
        }
        return true;
}

/* Whether every guest cell of s has its own <memnode> (or s has no cells): libvirt then binds all of the
 * guest's memory, and the domain is bound to their union. A cell without one is bound nowhere. */
bool domain_spec_memnodes_bind_all(const DomainSpec *s)
{
        for (unsigned i = 0; s->cells && i < s->cells->len; i++) {
                unsigned id = g_array_index(s->cells, DomainCell, i).id;
                bool found = false;

                /* a memory device's: bound by its own nodemask or its cell's <memnode> */
                if (g_array_index(s->cells, DomainCell, i).device)
                        continue;

                for (unsigned k = 0; s->memnodes && k < s->memnodes->len && !found; k++)
                        found = g_array_index(s->memnodes, DomainMemnode, k).cellid == id;
                if (!found)
                        return false;
        }
        return true;
}

PlacementRequest domain_request(const DomainSpec *user, const DomainSpec *live)
{
        PlacementRequest req = {
            .name = live->name,
            .vcpus = live->vcpus,
            .memory = live->memory,
            .allowed_cpus = user->vcpu_cpuset,
            .keep_emulator = user->has_emulatorpin,
            .emulator_pinned_live = user->has_emulatorpin && user->emulatorpin_live,
            .iothreads = live->iothreads,
            .kept_iothreads = user->iothreadpins,
            .kept_iothreads_live = user->iothreadpins_live,
            .vcpu_ids = live->vcpu_ids,
            .realtime = live->realtime,
            .realtime_vcpus = live->realtime_vcpus,
            .realtime_emulator = live->realtime_emulator,
            .realtime_iothreads = live->realtime_iothreads,
            .guest_threads = live->guest_threads,
            .guest_socket_vcpus = live->guest_socket_vcpus,
            .emulator_cpus = user->emulatorpin,
            .iothread_cpus = user->iothreadpin_cpus,
        };

        /* a live binding libvirt will not change stands over a definition edited since the start (the
         * edit is for the next start); so does no binding at all: a <numatune> written into the
         * definition of a running domain whose memory nothing binds (virsh numatune --config) binds
         * nothing until then */
        bool fixed = live->memory_nodeset && live->memory_mode != MEMORY_MODE_RESTRICTIVE;
        bool edited = live->memory_nodeset && user->memory_nodeset &&
                      (!cpuset_equal(user->memory_nodeset, live->memory_nodeset) ||
                       user->memory_mode != live->memory_mode);
        /* a restrictive binding is the definition's own: the one the guest started with until then, also
         * when the edit took it out (placementd binds only in libvirt's default strict mode, so a live
         * restrictive nodeset is the one the definition started the guest with, or someone's --live) */
        const DomainSpec *own =
            live->memory_nodeset && !fixed && (edited || !user->memory_nodeset) ? live : user;

        if (own->memory_nodeset && !(edited && fixed) && live->memory_nodeset) {
                req.memory_nodes = own->memory_nodeset;
                req.memory_source = MEMORY_SOURCE_USER;
                req.memory_mode = own->memory_mode;
        } else if (live->memnode_nodeset && !edited && domain_spec_memnodes_bind_all(live)) {
                /* memnodes are the running guest's: set at its start, never changed live; a cell without
                 * one leaves the domain unbound, the others bound per cell (domain_request_shape()) */
                req.memory_nodes = live->memnode_nodeset;
                req.memory_source = MEMORY_SOURCE_MEMNODE;
        } else if (fixed) {
                req.memory_nodes = live->memory_nodeset;
                req.memory_source = MEMORY_SOURCE_BOUND;
                req.memory_mode = live->memory_mode;
        }
        return req;
}

void request_shape_clear(RequestShape *shape)
{
        g_clear_pointer(&shape->cells, g_free);
        g_clear_pointer(&shape->devices, cpuset_free);
        g_clear_pointer(&shape->devices_sit_on, cpuset_free);
        g_clear_pointer(&shape->devices_nearest, cpuset_free);
        g_clear_pointer(&shape->caches, cpuset_free);
        for (unsigned i = 0; shape->vcpu_caches && i < shape->nvcpu_caches; i++)
                cpuset_free(shape->vcpu_caches[i]);
        g_clear_pointer(&shape->vcpu_caches, g_free);
        shape->nvcpu_caches = 0;
        g_clear_pointer(&shape->iothread_cpus, g_array_unref);
}

bool domain_spec_iothreadpin_runs(const DomainSpec *live, unsigned id, const CpuSet *cpus)
{
        for (unsigned i = 0; live->iothreadpin_cpus && i < live->iothreadpin_cpus->len; i++) {
                const IothreadPin *pin = &g_array_index(live->iothreadpin_cpus, IothreadPin, i);
                if (pin->id == id)
                        return cpuset_equal(pin->cpus, cpus);
        }
        return false;
}

/* req->iothread_cpus cut to the pins the running guest has as they are (a definition's <iothreadpin>
 * whose I/O thread was deleted live, or pinned elsewhere since, holds nothing). */
static void request_iothreads(const DomainSpec *live, PlacementRequest *req, RequestShape *shape)
{
        const GArray *pins = req->iothread_cpus;

        if (!pins || pins == live->iothreadpin_cpus)
                return;
        shape->iothread_cpus = g_array_new(FALSE, FALSE, sizeof(IothreadPin));
        for (unsigned i = 0; i < pins->len; i++) {
                const IothreadPin *own = &g_array_index(pins, IothreadPin, i);

                if (domain_spec_iothreadpin_runs(live, own->id, own->cpus))
                        g_array_append_val(shape->iothread_cpus, *own);
        }
        req->iothread_cpus = shape->iothread_cpus;
}

/* The CPUs under the caches the domain's resctrl allocations reserve for each vCPU into shape and req:
 * per vCPU, and their union as a constraint when every vCPU has some. */
static void request_caches(const DomainSpec *live, const Topology *t, PlacementRequest *req,
                           RequestShape *shape)
{
        CpuSet **vc;
        bool all = true, any = false;

        if (!live->cache_banks || !live->vcpus)
                return;
        vc = g_new0(CpuSet *, live->vcpus);
        for (unsigned b = 0; b < live->cache_banks->len; b++) {
                const DomainCacheBank *bank = &g_array_index(live->cache_banks, DomainCacheBank, b);
                const CpuSet *cpus = topology_cache_cpus(t, bank->level, bank->id);

                for (unsigned i = 0; cpus && i < live->vcpus; i++) {
                        if (!cpuset_has(bank->vcpus, domain_spec_vcpu_id(live, i)))
                                continue;
                        if (!vc[i])
                                vc[i] = cpuset_new();
                        cpuset_union(vc[i], cpus);
                }
        }
        for (unsigned i = 0; i < live->vcpus; i++) {
                if (vc[i] && req->allowed_cpus) { /* <vcpu cpuset> stands: libvirt pins the vCPU there */
                        g_autoptr(CpuSet) outside = cpuset_copy(vc[i]);
                        cpuset_subtract(outside, req->allowed_cpus);
                        cpuset_subtract(vc[i], outside);
                        if (cpuset_is_empty(vc[i])) {
                                g_clear_pointer(&vc[i], cpuset_free);
                                req->caches_outside_cpuset = true;
                        }
                }
                all = all && vc[i];
                any = any || vc[i];
        }
        shape->vcpu_caches = vc;
        shape->nvcpu_caches = live->vcpus;
        if (!any)
                return;
        req->vcpu_cache_cpus = (const CpuSet *const *)vc;
        if (!all)
                return;
        shape->caches = cpuset_new();
        for (unsigned i = 0; i < live->vcpus; i++)
                cpuset_union(shape->caches, vc[i]);
        req->cache_cpus = shape->caches;
}

/* The nodes local to the domain's PCI devices into shape->devices and req. */
static void request_devices(const DomainSpec *live, const Topology *t, PlacementRequest *req,
                            RequestShape *shape)
{
        for (unsigned i = 0; live->pci_devices && i < live->pci_devices->len; i++) {
                const TopoPciDevice *d =
                    topology_pci_device(t, g_array_index(live->pci_devices, uint64_t, i));

                if (!d)
                        continue;
                if (!shape->devices)
                        shape->devices = cpuset_new();
                cpuset_union(shape->devices, d->nodes);
                if (!d->sits_on)
                        continue;
                if (!shape->devices_sit_on) {
                        shape->devices_sit_on = cpuset_new();
                        shape->devices_nearest = cpuset_new();
                }
                cpuset_union(shape->devices_sit_on, d->sits_on);
                cpuset_union(shape->devices_nearest, d->nodes);
        }
        req->device_nodes = shape->devices;
        req->device_sits_on = shape->devices_sit_on;
        req->device_nearest = shape->devices_nearest;
}

uint64_t domain_cell_page_size(const DomainCell *c, uint64_t def)
{
        return c->hugepages ? (c->hugepage_size ? c->hugepage_size : def) : 0;
}

uint64_t domain_request_page_size(const DomainSpec *live, uint64_t def)
{
        uint64_t largest = 0;

        if (!live->hugepages)
                return 0;
        if (!live->cells || !live->cells->len)
                return live->hugepage_size ? live->hugepage_size : def;
        for (unsigned i = 0; i < live->cells->len; i++)
                largest =
                    MAX(largest, domain_cell_page_size(&g_array_index(live->cells, DomainCell, i), def));
        return largest;
}

bool domain_request_page_sizes_differ(const DomainSpec *live, uint64_t def)
{
        uint64_t seen = 0;

        if (!live->hugepages || !live->cells)
                return false;
        for (unsigned i = 0; i < live->cells->len; i++) {
                uint64_t size = domain_cell_page_size(&g_array_index(live->cells, DomainCell, i), def);
                if (size && seen && size != seen)
                        return true;
                seen = size ? size : seen;
        }
        return false;
}

uint64_t domain_request_second_page_size(const DomainSpec *live, uint64_t def)
{
        uint64_t second = 0, largest = domain_request_page_size(live, def);

        if (!largest || !domain_request_page_sizes_differ(live, def) || live->hugepages_partial)
                return 0;
        for (unsigned i = 0; i < live->cells->len; i++) {
                uint64_t size = domain_cell_page_size(&g_array_index(live->cells, DomainCell, i), def);
                if (!size)
                        return 0;
                if (size == largest)
                        continue;
                if (second && size != second)
                        return 0;
                second = size;
        }
        return second;
}

void domain_request_shape(const DomainSpec *live, const Topology *t, PlacementRequest *req,
                          RequestShape *shape)
{
        uint64_t second, def;

        *shape = (RequestShape){0};
        /* a cell of <hugepages> without a size takes the host's default, as libvirt backs it: a memory
         * device's own <source><pagesize> of that size is of its kind */
        def = topology_default_hugepage_size(t);
        if (live->hugepages) {
                req->hugepage_size = domain_request_page_size(live, def);
                req->hugepage_sizes_differ = domain_request_page_sizes_differ(live, def);
        }
        request_devices(live, t, req, shape);
        request_caches(live, t, req, shape);
        request_iothreads(live, req, shape);
        if (!live->cells || live->cells->len == 0)
                return;
        second = domain_request_second_page_size(live, def);
        if (second) {
                req->second_page_size = second;
                req->hugepage_sizes_differ = false;
        }
        shape->cells = g_new0(PlacementCell, live->cells->len);
        for (unsigned i = 0; i < live->cells->len; i++) {
                const DomainCell *c = &g_array_index(live->cells, DomainCell, i);
                shape->cells[i] = (PlacementCell){.id = c->id,
                                                  .vcpus = c->vcpus,
                                                  .memory = c->memory,
                                                  .distances = c->distances,
                                                  .ndistances = c->ndistances,
                                                  .ordinary = live->hugepages && !c->hugepages,
                                                  .device = c->device,
                                                  .device_target = c->device_target,
                                                  .device_nodemask = c->device_nodes != NULL};
                if (second && domain_cell_page_size(c, def) == second)
                        shape->cells[i].ordinary = true;
                /* its memnode (the running guest's, like its cells); a memory device's nodemask */
                shape->cells[i].memory_nodes = domain_cell_binding(live, c, &shape->cells[i].memory_mode);
        }
        req->devices_in_cells = live->devices_in_cells;
        req->cells = shape->cells;
        req->ncells = live->cells->len;
}

int domain_file_load(const char *path, DomainSpec **ret, char **ret_error)
{
        g_autofree char *text = NULL, *why = NULL;
        int r = file_read_bounded(path, DOMAIN_FILE_MAX, &text, NULL, &why);

        if (r < 0) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: %s", path, why);
                return r;
        }
        if ((r = domain_xml_parse(text, ret, &why)) < 0 && ret_error)
                *ret_error = g_strdup_printf("%s: %s", path, why);
        return r;
}

PolicyKind domain_request_policy(const DomainSpec *user, PolicyKind dflt, const char **ret_unknown)
{
        int k = user->meta_policy ? policy_kind_from_string(user->meta_policy) : (int)dflt;

        *ret_unknown = k < 0 ? user->meta_policy : NULL;
        return k < 0 ? dflt : (PolicyKind)k;
}
