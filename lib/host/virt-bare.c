/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "virt-bare.h"

#include <errno.h>
#include <glib.h>
#include <libvirt/virterror.h>

#include "virt-domain.h"

/* libvirt's ids of the online vCPUs, when they are not 0..n-1 (an unplugged one below one that runs): a
 * new array, else NULL */
static unsigned *online_ids(virDomainPtr dom, unsigned n)
{
        g_autofree virVcpuInfo *info = g_new0(virVcpuInfo, n);
        unsigned *ids;
        int got = virDomainGetVcpus(dom, info, (int)n, NULL, 0);
        bool contiguous = true;

        if (got != (int)n)
                return NULL;
        for (unsigned i = 0; i < n; i++)
                contiguous = contiguous && info[i].number == i;
        if (contiguous)
                return NULL;
        ids = g_new(unsigned, n);
        for (unsigned i = 0; i < n; i++)
                ids[i] = info[i].number;
        return ids;
}

/* The live emulator pin when it is one (not every CPU libvirt has online, which an unpinned emulator has),
 * else NULL */
static CpuSet *emulator_pin(virDomainPtr dom)
{
        g_autoptr(CpuSet) pin = virt_domain_emulator_pin(dom);
        g_autoptr(CpuSet) online = virt_domain_host_online_cpus(dom);

        if (!pin || !online || cpuset_is_empty(pin))
                return NULL;
        cpuset_subtract(online, pin);
        return cpuset_is_empty(online) ? NULL : g_steal_pointer(&pin);
}

static MemoryMode memory_mode(int mode)
{
        switch (mode) {
        case VIR_DOMAIN_NUMATUNE_MEM_PREFERRED:
                return MEMORY_MODE_PREFERRED;
        case VIR_DOMAIN_NUMATUNE_MEM_INTERLEAVE:
                return MEMORY_MODE_INTERLEAVE;
        case VIR_DOMAIN_NUMATUNE_MEM_RESTRICTIVE:
                return MEMORY_MODE_RESTRICTIVE;
        default:
                return MEMORY_MODE_STRICT;
        }
}

int virt_domain_read_bare(virDomainPtr dom, DomainSpec **ret, char **ret_error)
{
        g_autoptr(DomainSpec) s = g_new0(DomainSpec, 1);
        char uuid[VIR_UUID_STRING_BUFLEN];
        CpuSet *nodes = NULL;
        int max = virDomainGetVcpusFlags(dom, VIR_DOMAIN_AFFECT_LIVE | VIR_DOMAIN_VCPU_MAXIMUM);
        int mode;

        virt_domain_live_size(dom, &s->vcpus, &s->memory);
        if (s->vcpus == 0 || s->vcpus > DOMAIN_XML_MAX_VCPUS || virDomainGetUUIDString(dom, uuid) < 0) {
                virErrorPtr e = virGetLastError();
                *ret_error = g_strdup_printf("libvirt cannot say what it runs (%s)",
                                             e && e->message ? e->message : "no vCPUs");
                return e && e->code == VIR_ERR_NO_DOMAIN ? -ENOENT : -EIO;
        }
        s->name = g_strdup(virt_domain_name(dom));
        s->uuid = g_strdup(uuid);
        s->domain_id = virt_domain_id(dom);
        s->max_vcpus = max > 0 ? MAX((unsigned)max, s->vcpus) : s->vcpus;
        s->vcpu_ids = online_ids(dom, s->vcpus);
        s->emulatorpin = emulator_pin(dom);
        s->has_emulatorpin = s->emulatorpin != NULL;
        if (virt_domain_get_memory_nodes(dom, &nodes, &mode) == 0) {
                if (cpuset_is_empty(nodes))
                        cpuset_free(nodes);
                else {
                        s->memory_nodeset = nodes;
                        s->memory_mode = memory_mode(mode);
                }
        }
        *ret = g_steal_pointer(&s);
        return 0;
}
