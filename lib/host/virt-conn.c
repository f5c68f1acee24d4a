/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "virt-conn.h"

#include <errno.h>
#include <libvirt/virterror.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ret-error.h"
#include "text-safe.h"
#include "virt-domain.h"
#include "virt-event.h"

#define KEEPALIVE_INTERVAL_SEC 5
#define KEEPALIVE_COUNT        3

enum { EV_LIFECYCLE, EV_TUNABLE, EV_DEVICE_ADDED, EV_DEVICE_REMOVED, EV_METADATA, EV_MEMORY_SIZE, _EV_MAX };

struct VirtConn {
        virConnectPtr conn;
        VirtConnEvents events;
        void *userdata;
        int ids[_EV_MAX]; /* callback ids; -1 when not subscribed */
        bool close_cb;
};

/* libvirt's last message, safe to show: it may quote a domain's name, which its owner chose (caller
 * frees). */
static char *last_error(void)
{
        const char *m = virGetLastErrorMessage();
        return text_terminal_safe(m ? m : "unknown libvirt error");
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
        VirtConn *c = opaque;
        (void)conn;

        if (c->events.lifecycle)
                c->events.lifecycle(dom, event, detail, c->userdata);
        return 0;
}

static void on_tunable(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params, int nparams,
                       void *opaque)
{
        VirtConn *c = opaque;
        (void)conn;

        if (c->events.tunable)
                c->events.tunable(dom, params, nparams, c->userdata);
}

static void on_device(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque)
{
        VirtConn *c = opaque;
        (void)conn;

        if (c->events.device)
                c->events.device(dom, alias, c->userdata);
}

#if LIBVIR_CHECK_VERSION(7, 9, 0)
/* a virtio-mem device's plugged memory changed (the guest followed a new requested size): so may the
 * memory the ledger counts, as for a device added or removed */
static void on_memory_size(virConnectPtr conn, virDomainPtr dom, const char *alias, unsigned long long kib,
                           void *opaque)
{
        (void)kib;
        on_device(conn, dom, alias, opaque);
}
#endif

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
        VirtConn *c = opaque;
        (void)conn;

        if (c->events.closed)
                c->events.closed(reason, c->userdata);
}

static void on_metadata(virConnectPtr conn, virDomainPtr dom, int type, const char *nsuri, void *opaque)
{
        VirtConn *c = opaque;
        (void)conn;

        if (c->events.metadata)
                c->events.metadata(dom, type, nsuri, c->userdata);
}

static int subscribe(VirtConn *c, int which, int id, virConnectDomainEventGenericCallback cb)
{
        c->ids[which] = virConnectDomainEventRegisterAny(c->conn, NULL, id, cb, c, NULL);
        return c->ids[which];
}

virConnectPtr virt_conn_connect(const char *uri, const char *shown, char **ret_error)
{
        virConnectPtr conn = virConnectOpen(uri);

        if (!conn) {
                g_autofree char *why = last_error();
                ret_error_set(ret_error, -ECONNREFUSED, "Cannot connect to %s: %s", shown ? shown : uri,
                              why);
        }
        return conn;
}

void virt_conn_disconnect(virConnectPtr conn)
{
        if (conn)
                virConnectClose(conn);
}

int virt_conn_attach(virConnectPtr conn, const char *uri, const VirtConnEvents *events, void *userdata,
                     VirtConn **ret, char **ret_error)
{
        g_autoptr(VirtConn) c = g_new0(VirtConn, 1);

        for (int i = 0; i < _EV_MAX; i++)
                c->ids[i] = -1;
        c->events = *events;
        c->userdata = userdata;
        c->conn = conn;
        c->close_cb = virConnectRegisterCloseCallback(c->conn, on_close, c, NULL) == 0;
        if (!g_str_has_prefix(uri, "test:")) {
                /* its timeout runs even while a call in this thread waits on a libvirtd gone silent */
                virt_event_keepalive_begin();
                virConnectSetKeepAlive(c->conn, KEEPALIVE_INTERVAL_SEC, KEEPALIVE_COUNT);
                virt_event_keepalive_end();
        }
        subscribe(c, EV_LIFECYCLE, VIR_DOMAIN_EVENT_ID_LIFECYCLE, VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle));
        subscribe(c, EV_TUNABLE, VIR_DOMAIN_EVENT_ID_TUNABLE, VIR_DOMAIN_EVENT_CALLBACK(on_tunable));
        subscribe(c, EV_DEVICE_ADDED, VIR_DOMAIN_EVENT_ID_DEVICE_ADDED,
                  VIR_DOMAIN_EVENT_CALLBACK(on_device));
        subscribe(c, EV_DEVICE_REMOVED, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
                  VIR_DOMAIN_EVENT_CALLBACK(on_device));
        subscribe(c, EV_METADATA, VIR_DOMAIN_EVENT_ID_METADATA_CHANGE,
                  VIR_DOMAIN_EVENT_CALLBACK(on_metadata));
#if LIBVIR_CHECK_VERSION(7, 9, 0)
        /* libvirt 7.9 and later; an older daemon refuses it and the reconcile catches the change */
        subscribe(c, EV_MEMORY_SIZE, VIR_DOMAIN_EVENT_ID_MEMORY_DEVICE_SIZE_CHANGE,
                  VIR_DOMAIN_EVENT_CALLBACK(on_memory_size));
#endif
        if (c->ids[EV_LIFECYCLE] < 0) {
                g_autofree char *why = last_error();
                return ret_error_set(ret_error, -EIO, "Cannot subscribe to domain events on %s: %s", uri,
                                     why);
        }
        *ret = g_steal_pointer(&c);
        return 0;
}

int virt_conn_open(const char *uri, const VirtConnEvents *events, void *userdata, VirtConn **ret,
                   char **ret_error)
{
        virConnectPtr conn = virt_conn_connect(uri, NULL, ret_error);

        if (!conn)
                return -ECONNREFUSED;
        return virt_conn_attach(conn, uri, events, userdata, ret, ret_error);
}

void virt_conn_free(VirtConn *c)
{
        if (!c)
                return;
        if (c->conn) {
                for (int i = 0; i < _EV_MAX; i++)
                        if (c->ids[i] >= 0)
                                virConnectDomainEventDeregisterAny(c->conn, c->ids[i]);
                /* every callback must be gone before the close, or the connection outlives it */
                if (c->close_cb)
                        virConnectUnregisterCloseCallback(c->conn, on_close);
                virConnectClose(c->conn);
        }
        g_free(c);
}

bool virt_conn_sees_metadata(const VirtConn *c)
{
        return c->ids[EV_METADATA] >= 0;
}

virConnectPtr virt_conn_get(const VirtConn *c)
{
        return c->conn;
}

static int compare_start_order(const void *pa, const void *pb)
{
        virDomainPtr a = *(virDomainPtr const *)pa, b = *(virDomainPtr const *)pb;
        unsigned ia = virDomainGetID(a), ib = virDomainGetID(b);
        const char *na = virDomainGetName(a), *nb = virDomainGetName(b);

        if (ia != ib)
                return ia < ib ? -1 : 1;
        return strcmp(na ? na : "", nb ? nb : "");
}

int virt_conn_list_running(VirtConn *c, virDomainPtr **ret, unsigned *ret_n, char **ret_error)
{
        virDomainPtr *doms = NULL;
        int n = virConnectListAllDomains(c->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
        unsigned kept = 0;

        if (n < 0) {
                g_autofree char *why = last_error();
                return ret_error_set(ret_error, -EIO, "Listing running domains failed: %s", why);
        }
        for (int i = 0; i < n; i++) {
                if (virt_domain_starting(doms[i]))
                        virDomainFree(doms[i]);
                else
                        doms[kept++] = doms[i];
        }
        n = (int)kept;
        if (n > 1)
                qsort(doms, (size_t)n, sizeof(*doms), compare_start_order);
        *ret = doms;
        *ret_n = (unsigned)n;
        return 0;
}

void virt_domains_free(virDomainPtr *doms, unsigned n)
{
        for (unsigned i = 0; doms && i < n; i++)
                virDomainFree(doms[i]);
        free(doms);
}

int virt_conn_lookup_uuid(VirtConn *c, const char *uuid, virDomainPtr *ret, char **ret_error)
{
        virDomainPtr dom = virDomainLookupByUUIDString(c->conn, uuid);

        if (!dom) {
                g_autofree char *why = last_error();
                return ret_error_set(ret_error, -ENOENT, "no domain with UUID %s: %s", uuid, why);
        }
        *ret = dom;
        return 0;
}

int virt_conn_offline_cpus(VirtConn *c, CpuSet **ret, unsigned *ret_present, char **ret_error)
{
        unsigned char *map = NULL;
        int ncpus = virNodeGetCPUMap(c->conn, &map, NULL, 0);
        CpuSet *offline;

        if (ncpus < 0 || !map) {
                g_autofree char *why = last_error();
                free(map);
                return ret_error_set(ret_error, -EIO, "cannot read the host's online CPUs: %s", why);
        }
        offline = cpuset_new();
        for (int cpu = 0; cpu < ncpus && cpu < (int)CPUSET_MAX; cpu++)
                if (!VIR_CPU_USED(map, cpu))
                        cpuset_add(offline, (unsigned)cpu);
        free(map);
        *ret = offline;
        *ret_present = (unsigned)ncpus;
        return 0;
}

char *virt_conn_uri(VirtConn *c)
{
        char *uri = virConnectGetURI(c->conn);
        char *copy = g_strdup(uri);

        free(uri);
        return copy;
}

bool virt_conn_runs_qemu(VirtConn *c)
{
        const char *type = virConnectGetType(c->conn);

        return type && strcmp(type, "QEMU") == 0;
}

const char *virt_close_reason_to_string(int reason)
{
        static const char *const reasons[] = {
            [VIR_CONNECT_CLOSE_REASON_ERROR] = "an error",
            [VIR_CONNECT_CLOSE_REASON_EOF] = "end of file",
            [VIR_CONNECT_CLOSE_REASON_KEEPALIVE] = "keepalive timeout",
            [VIR_CONNECT_CLOSE_REASON_CLIENT] = "a client request",
        };
        return reason >= 0 && reason < (int)G_N_ELEMENTS(reasons) ? reasons[reason] : "unknown reason";
}
