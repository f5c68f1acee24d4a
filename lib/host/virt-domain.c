/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "virt-domain.h"

#include <errno.h>
#include <stdlib.h>
#include <libvirt/virterror.h>
#include <string.h>

#include "text-safe.h"

/* Converts the last libvirt error: -ENOENT when the domain no longer runs, -EBUSY when libvirt gave up
 * waiting for the domain's job, else -EIO. */
static int failed(virDomainPtr dom, const char *what, char **ret_error)
{
        virErrorPtr e = virGetLastError();
        /* copy before the next libvirt call resets the thread's last error */
        g_autofree char *message =
            text_terminal_safe(e && e->message ? e->message : "unknown libvirt error");
        bool gone = (e && e->code == VIR_ERR_NO_DOMAIN);
        bool held = (e && e->code == VIR_ERR_OPERATION_TIMEOUT);

        /* cgroup v1 drops a CPU that goes offline from every cpuset, the guests' included, and never
         * gives it back: a pin there is refused until the domain runs again */
        bool lost =
            e && e->code == VIR_ERR_SYSTEM_ERROR && e->int1 == EACCES && strstr(message, "cpuset.cpus");

        gone = gone || (dom && virDomainIsActive(dom) != 1);
        if (ret_error)
                *ret_error =
                    g_strdup_printf("%s: %s%s", what, message,
                                    lost ? " (the domain's cgroup lacks one of these CPUs: under cgroup "
                                           "v1 a CPU that went offline while the domain ran never comes "
                                           "back to it; it does when the domain starts again)"
                                         : "");
        return gone ? -ENOENT : held ? -EBUSY : -EIO;
}

bool virt_domain_connection_alive(virDomainPtr dom)
{
        virConnectPtr conn = virDomainGetConnect(dom);
        return conn && virConnectIsAlive(conn) == 1;
}

unsigned virt_domain_job_age_ms(virDomainPtr dom)
{
        virDomainControlInfo info;

        if (virDomainGetControlInfo(dom, &info, 0) < 0 ||
            (info.state != VIR_DOMAIN_CONTROL_JOB && info.state != VIR_DOMAIN_CONTROL_OCCUPIED))
                return 0;
        return (unsigned)MIN(info.stateTime, (unsigned long long)UINT_MAX);
}

bool virt_domain_starting(virDomainPtr dom)
{
        int state, reason;

        return virDomainGetState(dom, &state, &reason, 0) == 0 && state == VIR_DOMAIN_PAUSED &&
               reason == VIR_DOMAIN_PAUSED_STARTING_UP;
}

int virt_domain_job_held(virDomainPtr dom, char **ret_error)
{
        virDomainControlInfo info;

        /* libvirt's start job holds the domain until it runs, and its control info says "ok" between two
         * monitor commands; libvirt 9.0 keeps a start a stopped libvirtd cut in that state for good */
        if (virt_domain_starting(dom)) {
                if (ret_error)
                        *ret_error =
                            g_strdup("libvirt's start of the domain has not ended (paused, starting "
                                     "up): its start job holds the domain");
                return -EBUSY;
        }
        if (virDomainGetControlInfo(dom, &info, 0) < 0)
                return 0; /* not running, or a driver that cannot say: the call itself will tell */
        if ((info.state != VIR_DOMAIN_CONTROL_JOB && info.state != VIR_DOMAIN_CONTROL_OCCUPIED) ||
            info.stateTime < VIRT_JOB_STUCK_MS)
                return 0;
        if (ret_error)
                *ret_error = g_strdup_printf(
                    "libvirt has held a job on the domain for %.1f s (%s): not waiting for it",
                    (double)info.stateTime / 1000,
                    info.state == VIR_DOMAIN_CONTROL_OCCUPIED ? "a monitor command QEMU has not answered"
                                                              : "another job runs");
        return -EBUSY;
}

/*
 * Some drivers (libvirt's test driver among them) refuse VIR_DOMAIN_AFFECT_LIVE for some calls but
 * accept VIR_DOMAIN_AFFECT_CURRENT, which on a running domain means the same thing.
 */
static bool live_flag_refused(virDomainPtr dom)
{
        virErrorPtr e = virGetLastError();
        return e && e->code == VIR_ERR_INVALID_ARG && e->message &&
               strstr(e->message, "unsupported flags") && virDomainIsActive(dom) == 1;
}

#define CALL_LIVE(call_with_flags)                                                                          \
        ({                                                                                                  \
                unsigned _flags = VIR_DOMAIN_AFFECT_LIVE;                                                   \
                int _r = (call_with_flags);                                                                 \
                if (_r < 0 && live_flag_refused(dom)) {                                                     \
                        _flags = VIR_DOMAIN_AFFECT_CURRENT;                                                 \
                        _r = (call_with_flags);                                                             \
                }                                                                                           \
                _r;                                                                                         \
        })

const char *virt_domain_uuid(virDomainPtr dom, char *buf)
{
        if (virDomainGetUUIDString(dom, buf) < 0)
                strcpy(buf, "");
        return buf;
}

const char *virt_domain_name(virDomainPtr dom)
{
        const char *name = virDomainGetName(dom);
        return name ? name : "";
}

bool virt_domain_is_active(virDomainPtr dom)
{
        return virDomainIsActive(dom) == 1;
}

bool virt_domain_is_persistent(virDomainPtr dom)
{
        return virDomainIsPersistent(dom) == 1;
}

void virt_domain_live_size(virDomainPtr dom, unsigned *ret_vcpus, uint64_t *ret_memory)
{
        int vcpus = virDomainGetVcpusFlags(dom, VIR_DOMAIN_AFFECT_LIVE);
        unsigned long kib = virDomainGetMaxMemory(dom);

        *ret_vcpus = vcpus > 0 ? (unsigned)vcpus : 0;
        *ret_memory = (uint64_t)kib * 1024;
}

uint64_t virt_domain_current_memory(virDomainPtr dom)
{
        virDomainInfo info;

        return virDomainGetInfo(dom, &info) < 0 ? 0 : (uint64_t)info.memory * 1024;
}

CpuSet *virt_domain_emulator_pin(virDomainPtr dom)
{
        int ncpus = virNodeGetCPUMap(virDomainGetConnect(dom), NULL, NULL, 0);
        g_autofree unsigned char *map = NULL;
        CpuSet *pin;
        int len;

        if (ncpus <= 0)
                return NULL;
        len = VIR_CPU_MAPLEN(ncpus);
        map = g_malloc0((gsize)len);
        if (virDomainGetEmulatorPinInfo(dom, map, len, VIR_DOMAIN_AFFECT_LIVE) < 0)
                return NULL;
        pin = cpuset_new();
        for (int c = 0; c < ncpus && c < (int)CPUSET_MAX; c++)
                if (VIR_CPU_USABLE(map, len, 0, c))
                        cpuset_add(pin, (unsigned)c);
        return pin;
}

CpuSet *virt_domain_host_online_cpus(virDomainPtr dom)
{
        unsigned char *map = NULL;
        unsigned online = 0;
        int ncpus = virNodeGetCPUMap(virDomainGetConnect(dom), &map, &online, 0);
        CpuSet *cpus;

        if (ncpus <= 0 || !map) {
                free(map);
                return NULL;
        }
        cpus = cpuset_new();
        for (int c = 0; c < ncpus && c < (int)CPUSET_MAX; c++)
                if (VIR_CPU_USED(map, c))
                        cpuset_add(cpus, (unsigned)c);
        free(map);
        return cpus;
}

unsigned virt_domain_id(virDomainPtr dom)
{
        unsigned id = virDomainGetID(dom);
        return id == (unsigned)-1 ? 0 : id;
}

int virt_domain_read_spec(virDomainPtr dom, bool inactive, DomainSpec **ret, char **ret_error)
{
        unsigned flags = inactive && virDomainIsPersistent(dom) == 1 ? VIR_DOMAIN_XML_INACTIVE : 0;
        g_autofree char *xml = NULL;
        char *raw = virDomainGetXMLDesc(dom, flags);
        int r;

        if (!raw)
                return failed(dom, "reading the domain definition", ret_error);
        xml = g_strdup(raw);
        free(raw);
        r = domain_xml_parse(xml, ret, ret_error);
        /* libvirt's name as it is: XML reading trims it and turns a carriage return into a newline, so
         * "web1 " would be taken for web1 */
        if (r == 0 && virDomainGetName(dom)) {
                g_free((*ret)->name);
                (*ret)->name = g_strdup(virDomainGetName(dom));
        }
        if (r == 0 && !inactive)
                (*ret)->domain_id = virt_domain_id(dom);
        return r;
}

static unsigned char *cpumap_new(const CpuSet *cpus, int *ret_len)
{
        int max = -1;
        unsigned char *map;

        CPUSET_FOREACH (c, cpus)
                max = c;
        *ret_len = VIR_CPU_MAPLEN(max + 1);
        map = g_malloc0((gsize)*ret_len);
        CPUSET_FOREACH (c, cpus)
                VIR_USE_CPU(map, c);
        return map;
}

int virt_domain_pin_vcpu(virDomainPtr dom, unsigned vcpu, const CpuSet *cpus, char **ret_error)
{
        int len;
        g_autofree unsigned char *map = cpumap_new(cpus, &len);
        g_autofree char *what = g_strdup_printf("pinning vCPU %u", vcpu);

        if (CALL_LIVE(virDomainPinVcpuFlags(dom, vcpu, map, len, _flags)) < 0)
                return failed(dom, what, ret_error);
        return 0;
}

int virt_domain_pin_emulator(virDomainPtr dom, const CpuSet *cpus, char **ret_error)
{
        int len;
        g_autofree unsigned char *map = cpumap_new(cpus, &len);

        if (CALL_LIVE(virDomainPinEmulator(dom, map, len, _flags)) < 0)
                return failed(dom, "pinning the emulator threads", ret_error);
        return 0;
}

int virt_domain_pin_iothread(virDomainPtr dom, unsigned id, const CpuSet *cpus, char **ret_error)
{
        int len;
        g_autofree unsigned char *map = cpumap_new(cpus, &len);
        g_autofree char *what = g_strdup_printf("pinning I/O thread %u", id);

        if (CALL_LIVE(virDomainPinIOThread(dom, id, map, len, _flags)) < 0)
                return failed(dom, what, ret_error);
        return 0;
}

int virt_domain_set_memory_nodes(virDomainPtr dom, const CpuSet *nodes, char **ret_error)
{
        g_autofree char *list = cpuset_format(nodes);
        virTypedParameter param = {.type = VIR_TYPED_PARAM_STRING};

        g_strlcpy(param.field, VIR_DOMAIN_NUMA_NODESET, sizeof(param.field));
        param.value.s = list;
        if (CALL_LIVE(virDomainSetNumaParameters(dom, &param, 1, _flags)) < 0)
                return failed(dom, "binding memory (numatune)", ret_error);
        return 0;
}

int virt_domain_get_memory_nodes(virDomainPtr dom, CpuSet **ret, int *ret_mode)
{
        virTypedParameterPtr params = NULL;
        int n = 8, mode = -1; /* room for more than the two (mode, nodeset) libvirt has: one call */
        const char *list = NULL;
        CpuSet *nodes = NULL;

        params = g_new0(virTypedParameter, n);
        if (virDomainGetNumaParameters(dom, params, &n, VIR_DOMAIN_AFFECT_LIVE) < 0) {
                g_free(params);
                return -1;
        }
        for (int i = 0; i < n; i++) {
                if (strcmp(params[i].field, VIR_DOMAIN_NUMA_NODESET) == 0 &&
                    params[i].type == VIR_TYPED_PARAM_STRING)
                        list = params[i].value.s;
                else if (strcmp(params[i].field, VIR_DOMAIN_NUMA_MODE) == 0 &&
                         params[i].type == VIR_TYPED_PARAM_INT)
                        mode = params[i].value.i;
        }
        if (!list || !*list)
                nodes = cpuset_new();
        else if (cpuset_parse(list, &nodes, NULL) < 0) {
                virTypedParamsFree(params, n);
                return -1;
        }
        virTypedParamsFree(params, n);
        *ret = nodes;
        *ret_mode = mode;
        return 0;
}

int virt_domain_set_metadata(virDomainPtr dom, const char *xml, char **ret_error)
{
        if (CALL_LIVE(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml,
                                           xml ? PLACEMENTD_XMLNS_PREFIX : NULL, PLACEMENTD_XMLNS, _flags)) <
            0)
                return failed(dom, "recording the decision in the domain's metadata", ret_error);
        return 0;
}

void virt_pins_free(CpuSet **pins, unsigned n)
{
        if (!pins)
                return;
        for (unsigned i = 0; i < n; i++)
                cpuset_free(pins[i]);
        g_free(pins);
}

int virt_domain_get_vcpu_pins(virDomainPtr dom, unsigned nvcpus, const unsigned *ids, CpuSet ***ret,
                              char **ret_error)
{
        int ncpus = virNodeGetCPUMap(virDomainGetConnect(dom), NULL, NULL, 0);
        unsigned nmaps = nvcpus;
        int len, got;
        g_autofree unsigned char *maps = NULL;
        CpuSet **pins;

        if (ncpus <= 0)
                return failed(dom, "reading the host CPU count", ret_error);
        for (unsigned v = 0; ids && v < nvcpus; v++)
                nmaps = MAX(nmaps, ids[v] + 1);
        if (nvcpus == 0 || nmaps > DOMAIN_XML_MAX_VCPUS) {
                if (ret_error)
                        *ret_error = g_strdup_printf("cannot read pins of %u vCPUs", nmaps);
                return -EINVAL;
        }
        len = VIR_CPU_MAPLEN(ncpus);
        maps = g_malloc0((gsize)len * nmaps);
        got = CALL_LIVE(virDomainGetVcpuPinInfo(dom, (int)nmaps, maps, len, _flags));
        if (got < 0)
                return failed(dom, "reading vCPU pins", ret_error);
        pins = g_new0(CpuSet *, nvcpus);
        for (unsigned v = 0; v < nvcpus; v++) {
                int row = (int)(ids ? ids[v] : v);
                pins[v] = cpuset_new();
                if (row >= got)
                        continue;
                for (int c = 0; c < ncpus; c++)
                        if (VIR_CPU_USABLE(maps, len, row, c))
                                cpuset_add(pins[v], (unsigned)c);
        }
        *ret = pins;
        return 0;
}

int virt_domain_get_iothreads(virDomainPtr dom, unsigned **ret_ids, CpuSet ***ret_pins, unsigned *ret_n,
                              char **ret_error)
{
        virDomainIOThreadInfoPtr *info = NULL;
        int n = CALL_LIVE(virDomainGetIOThreadInfo(dom, &info, _flags));
        CpuSet **pins;
        unsigned *ids;

        if (n < 0)
                return failed(dom, "reading the I/O threads", ret_error);
        ids = g_new0(unsigned, MAX(n, 1));
        pins = g_new0(CpuSet *, MAX(n, 1));
        for (int i = 0; i < n; i++) {
                ids[i] = info[i]->iothread_id;
                pins[i] = cpuset_new();
                for (int c = 0; c < info[i]->cpumaplen * 8; c++)
                        if (VIR_CPU_USED(info[i]->cpumap, c))
                                cpuset_add(pins[i], (unsigned)c);
                virDomainIOThreadInfoFree(info[i]);
        }
        free(info);
        *ret_ids = ids;
        *ret_pins = pins;
        *ret_n = (unsigned)n;
        return 0;
}

int virt_test_domain_start(virConnectPtr conn, const char *name, unsigned vcpus, uint64_t memory,
                           char **ret_error)
{
        g_autofree char *escaped = g_markup_escape_text(name, -1);
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='KiB'>%llu</memory>"
                            "<vcpu>%u</vcpu><os><type>hvm</type></os></domain>",
                            escaped, (unsigned long long)(memory / 1024), vcpus);
        g_autoptr(virDomain) dom = virDomainCreateXML(conn, xml, 0);

        if (!dom)
                return failed(NULL, "starting a test domain", ret_error);
        return 0;
}

int virt_domain_destroy_by_name(virConnectPtr conn, const char *name, char **ret_error)
{
        g_autoptr(virDomain) dom = virDomainLookupByName(conn, name);

        if (!dom) {
                failed(NULL, "looking up the domain", ret_error);
                return -ENOENT;
        }
        if (virDomainDestroy(dom) < 0)
                return failed(dom, "destroying the domain", ret_error);
        return 0;
}
