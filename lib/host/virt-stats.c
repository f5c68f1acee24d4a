/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "virt-stats.h"

#include <errno.h>
#include <libvirt/virterror.h>
#include <stdbool.h>
#include <string.h>

#include "cpuset.h"

static uint64_t ull(const virTypedParameter *p)
{
        switch (p->type) {
        case VIR_TYPED_PARAM_ULLONG:
                return p->value.ul;
        case VIR_TYPED_PARAM_LLONG:
                return p->value.l > 0 ? (uint64_t)p->value.l : 0;
        case VIR_TYPED_PARAM_UINT:
                return p->value.ui;
        default:
                return 0;
        }
}

void domain_cpu_stats_free(DomainCpuStats *s)
{
        if (!s)
                return;
        g_free(s->vcpu_time_ns);
        g_free(s->vcpu_wait_ns);
        g_free(s->vcpu_ids);
        g_free(s);
}

/* vcpu.N.SUFFIX: N into *ret_index. */
static bool vcpu_field(const char *field, const char *suffix, unsigned *ret_index)
{
        guint64 n;
        const char *dot;
        g_autofree char *digits = NULL;

        if (!g_str_has_prefix(field, "vcpu.") || !(dot = strchr(field + 5, '.')) ||
            strcmp(dot + 1, suffix) != 0)
                return false;
        digits = g_strndup(field + 5, (gsize)(dot - (field + 5)));
        if (!g_ascii_string_to_unsigned(digits, 10, 0, VIRT_STATS_MAX_VCPUS - 1, &n, NULL))
                return false;
        *ret_index = (unsigned)n;
        return true;
}

static void grow_vcpus(DomainCpuStats *s, unsigned index)
{
        if (index < s->nvcpu_times)
                return;
        s->vcpu_time_ns = g_renew(uint64_t, s->vcpu_time_ns, index + 1);
        s->vcpu_wait_ns = g_renew(uint64_t, s->vcpu_wait_ns, index + 1);
        memset(s->vcpu_time_ns + s->nvcpu_times, 0, sizeof(uint64_t) * (index + 1 - s->nvcpu_times));
        memset(s->vcpu_wait_ns + s->nvcpu_times, 0, sizeof(uint64_t) * (index + 1 - s->nvcpu_times));
        s->nvcpu_times = index + 1;
}

/* Per-vCPU fields: time, and delay (preferred) or wait; seen gets the id of every vCPU with a field. */
static void add_vcpu_field(DomainCpuStats *s, const virTypedParameter *p, bool *has_delay, CpuSet *seen)
{
        unsigned index;

        if (vcpu_field(p->field, "state", &index)) {
                grow_vcpus(s, index);
        } else if (vcpu_field(p->field, "time", &index)) {
                grow_vcpus(s, index);
                s->vcpu_time_ns[index] = ull(p);
        } else if (vcpu_field(p->field, "delay", &index)) {
                grow_vcpus(s, index);
                s->vcpu_wait_ns[index] = ull(p);
                *has_delay = true;
        } else if (!*has_delay && vcpu_field(p->field, "wait", &index)) {
                grow_vcpus(s, index);
                s->vcpu_wait_ns[index] = ull(p);
        } else {
                return;
        }
        cpuset_add(seen, index);
}

/* libvirt names vCPUs by id and reports only those online: with vCPU 1 of 0-2 unplugged, vcpu.0 and
 * vcpu.2. The i-th online vCPU is the daemon's vCPU i (DomainSpec.vcpu_ids), so the gaps close. */
static void close_gaps(DomainCpuStats *s, const CpuSet *seen)
{
        unsigned n = 0;

        if (cpuset_count(seen) == s->nvcpu_times)
                return;
        s->vcpu_ids = g_new(unsigned, MAX(cpuset_count(seen), 1));
        CPUSET_FOREACH (id, seen) {
                s->vcpu_time_ns[n] = s->vcpu_time_ns[id];
                s->vcpu_wait_ns[n] = s->vcpu_wait_ns[id];
                s->vcpu_ids[n] = id;
                n++;
        }
        s->nvcpu_times = n;
}

DomainCpuStats *domain_cpu_stats_from_params(const virTypedParameter *params, int nparams)
{
        DomainCpuStats *s = g_new0(DomainCpuStats, 1);
        g_autoptr(CpuSet) seen = cpuset_new();
        bool has_delay = false;

        for (int k = 0; k < nparams; k++) {
                const virTypedParameter *p = &params[k];
                if (strcmp(p->field, "cpu.time") == 0)
                        s->total_ns = ull(p);
                else if (strcmp(p->field, "cpu.user") == 0)
                        s->user_ns = ull(p);
                else if (strcmp(p->field, "cpu.system") == 0)
                        s->system_ns = ull(p);
                else if (strcmp(p->field, "state.state") == 0 && p->type == VIR_TYPED_PARAM_INT)
                        s->paused = p->value.i == VIR_DOMAIN_PAUSED || p->value.i == VIR_DOMAIN_PMSUSPENDED;
                else if (strcmp(p->field, "vcpu.current") == 0)
                        s->nvcpus = (unsigned)ull(p);
                else if (g_str_has_prefix(p->field, "vcpu.") && g_str_has_suffix(p->field, ".time"))
                        s->vcpu_ns += ull(p);
                if (g_str_has_prefix(p->field, "vcpu."))
                        add_vcpu_field(s, p, &has_delay, seen);
        }
        close_gaps(s, seen);
        s->host_ns = s->total_ns > s->vcpu_ns ? s->total_ns - s->vcpu_ns : 0;
        return s;
}

int virt_cpu_stats_all(virConnectPtr conn, GHashTable **ret, char **ret_error)
{
        virDomainStatsRecordPtr *records = NULL;
        GHashTable *table;
        /* NOWAIT: a domain whose job is held (a monitor that does not answer, a start cut short by a
         * libvirtd restart) would otherwise keep the call, and the daemon's loop, for libvirt's 30 s job
         * timeout at every sample; the CPU times come from the kernel and need no job */
        int n = virConnectGetAllDomainStats(
            conn, VIR_DOMAIN_STATS_STATE | VIR_DOMAIN_STATS_CPU_TOTAL | VIR_DOMAIN_STATS_VCPU, &records,
            VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE | VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);

        if (n < 0) {
                virErrorPtr e = virGetLastError();
                bool unsupported =
                    e && (e->code == VIR_ERR_NO_SUPPORT || e->code == VIR_ERR_ARGUMENT_UNSUPPORTED);
                if (ret_error)
                        *ret_error = g_strdup_printf("reading domain CPU statistics: %s",
                                                     e && e->message ? e->message : "unknown libvirt error");
                return unsupported ? -ENOTSUP : -EIO;
        }
        table =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)domain_cpu_stats_free);
        for (int i = 0; i < n; i++) {
                DomainCpuStats *s = domain_cpu_stats_from_params(records[i]->params, records[i]->nparams);
                char uuid[VIR_UUID_STRING_BUFLEN];

                if (virDomainGetUUIDString(records[i]->dom, uuid) == 0)
                        g_hash_table_replace(table, g_strdup(uuid), s);
                else
                        domain_cpu_stats_free(s);
        }
        virDomainStatsRecordListFree(records);
        *ret = table;
        return 0;
}
