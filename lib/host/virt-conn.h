/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The libvirt adapter for a connection: the only place that opens, watches and closes one. It opens the
 * URI, turns on keepalive (5 s, 3 missed; not for test: URIs, whose driver runs in process), subscribes
 * to the domain events the daemon reacts to and to the close callback, lists running domains and looks
 * one up. libvirt's error style stops here: 0 or a negative errno, and a message in *ret_error (caller
 * frees). Nothing here logs.
 *
 * The callbacks run from libvirt's event loop (virt-event.h), inside libvirt: they must not close the
 * connection themselves (schedule that on the loop instead). The close callback may also run in the
 * bridge's keepalive thread, when the keepalive gives up the connection while the loop thread is more than
 * a second late outside libvirt: it must do no more than schedule (a libevent event) and log.
 */

#include <glib.h>
#include <libvirt/libvirt.h>

#include "cpuset.h"
#include "virt-cleanup.h"

typedef struct VirtConnEvents {
        /* VIR_DOMAIN_EVENT_ID_LIFECYCLE: event is a virDomainEventType, detail its detail. */
        void (*lifecycle)(virDomainPtr dom, int event, int detail, void *userdata);
        /* VIR_DOMAIN_EVENT_ID_TUNABLE: the tunables that changed (vCPU pins among them). */
        void (*tunable)(virDomainPtr dom, virTypedParameterPtr params, int nparams, void *userdata);
        /* VIR_DOMAIN_EVENT_ID_DEVICE_ADDED and _REMOVED, and _MEMORY_DEVICE_SIZE_CHANGE (a virtio-mem
         * device's plugged memory changed): the device's alias. */
        void (*device)(virDomainPtr dom, const char *alias, void *userdata);
        /* VIR_DOMAIN_EVENT_ID_METADATA_CHANGE: type is a virDomainMetadataType, nsuri the element's
         * namespace (NULL for the title and description). */
        void (*metadata)(virDomainPtr dom, int type, const char *nsuri, void *userdata);
        /* The connection closed under us: reason is a virConnectCloseReason. */
        void (*closed)(int reason, void *userdata);
} VirtConnEvents;

typedef struct VirtConn VirtConn;

/*
 * Opens uri and subscribes to events (each callback may be NULL). Lifecycle events are required; the
 * others are taken where the driver has them. Returns 0, -ECONNREFUSED when libvirt cannot connect, or
 * -EIO when it cannot subscribe.
 */
int virt_conn_open(const char *uri, const VirtConnEvents *events, void *userdata, VirtConn **ret,
                   char **ret_error);
/*
 * The same in two steps, for a caller that must not wait on a libvirtd that accepts and never answers:
 * virt_conn_connect() only opens uri (blocking; it may run in a thread of its own, see virt-event.h) and
 * returns the connection, or NULL with *ret_error ("Cannot connect to SHOWN: libvirt's message", shown
 * NULL: uri as written); virt_conn_attach(), in the loop thread, takes it (closed on failure) and does the
 * rest as virt_conn_open().
 */
virConnectPtr virt_conn_connect(const char *uri, const char *shown, char **ret_error);
int virt_conn_attach(virConnectPtr conn, const char *uri, const VirtConnEvents *events, void *userdata,
                     VirtConn **ret, char **ret_error);
/* Closes a connection virt_conn_connect() opened that nothing attached (blocking, as the open). */
void virt_conn_disconnect(virConnectPtr conn);
/* Unsubscribes every callback, then closes (nothing is called after this). Accepts NULL. */
void virt_conn_free(VirtConn *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VirtConn, virt_conn_free)

/* The host CPUs libvirt reports present but offline (OS indexes; a new set, the caller frees it), and in
 * *ret_present how many it counts present (CPUs 0 to that minus one). Returns 0 or -EIO. */
int virt_conn_offline_cpus(VirtConn *c, CpuSet **ret, unsigned *ret_present, char **ret_error);

/* Whether the connection's driver runs QEMU guests on this host (the guests' cgroup is then theirs). */
bool virt_conn_runs_qemu(VirtConn *c);

/* The connection's URI as libvirt gives it (g_free), or NULL. */
char *virt_conn_uri(VirtConn *c);

/* Whether libvirt sends the connection metadata-change events (VirtConnEvents.metadata). */
bool virt_conn_sees_metadata(const VirtConn *c);

/* The connection, for the other adapters (virt-domain.h, virt-stats.h, virt-cpu.h). Borrowed. */
virConnectPtr virt_conn_get(const VirtConn *c);

/* Every running domain, in the order they started (libvirt's IDs rise with each start; a restarted daemon
 * places what it finds as it would have placed it then, not in the order of libvirt's hash table): a new
 * array of *ret_n references (virt_domains_free()). A domain whose start has not ended
 * (virt_domain_starting()) does not run yet: left out (its start event comes when it does). Returns 0 or
 * -EIO. */
int virt_conn_list_running(VirtConn *c, virDomainPtr **ret, unsigned *ret_n, char **ret_error);
void virt_domains_free(virDomainPtr *doms, unsigned n);

/* The domain with this UUID (a new reference), or -ENOENT when there is none. */
int virt_conn_lookup_uuid(VirtConn *c, const char *uuid, virDomainPtr *ret, char **ret_error);

/* What a virConnectCloseReason means, in words. */
const char *virt_close_reason_to_string(int reason);
