/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Runs libvirt's event loop (handle watches and timeouts) on a libevent event_base, so the daemon has
 * one loop for libvirt, sd-bus and its own timers. libvirt allows one implementation per process.
 *
 * Thread rule: the event_base is run, and libvirt called, from one thread (the daemon's loop thread,
 * the one that registers), except that another thread may open a connection (virt_conn_connect()):
 * libvirt then adds and changes watches from it, which the bridge takes under a lock and arms in the
 * loop thread. For that the process must call evthread_use_pthreads() before it makes the base.
 *
 * A keepalive's timeout is the exception: see virt_event_keepalive_begin().
 *
 * After virConnectClose, libvirt may keep timeouts and handles registered for a few more loop iterations
 * and free their data only from the loop: keep running the base until both counts below are back to
 * what they were before the connection was opened.
 */

struct event_base;

/*
 * Registers libvirt's event implementation on base. Call once per process, before any other libvirt
 * call; base must outlive every libvirt connection. Returns 0, -EINVAL when base is NULL, -EALREADY
 * when this bridge is already registered, -EBUSY when libvirt already had another implementation
 * (libvirt keeps the first one it was given), or -ENOMEM.
 */
int virt_event_register(struct event_base *base);

/*
 * Returns the number of handle watches (virEventAddHandle) not yet released: live ones plus removed ones
 * whose free callback has not run yet. 0 means every free callback ran.
 */
unsigned virt_event_handle_count(void);

/* Returns the number of timeouts (virEventAddTimeout) not yet released, counted like the handles. */
unsigned virt_event_timeout_count(void);

/*
 * Timeouts this thread adds between the two calls are a keepalive's (wrap virConnectSetKeepAlive() in
 * them): besides the loop, a thread of the bridge's own fires them when the loop thread is more than a
 * second late, so a call blocked in the loop thread on a libvirtd that stopped answering still sends the
 * pings, and ends ("keepalive timeout") once they go unanswered.
 */
void virt_event_keepalive_begin(void);
void virt_event_keepalive_end(void);

/* Closes the bridge before its event_base is freed: libvirt's later calls from any thread (one still
 * opening an abandoned connection) add nothing and change nothing. For the process's exit. */
void virt_event_close(void);

/* Silences libvirt's default error printing (errors are reported by the callers instead). Process-wide,
 * like the event implementation: call once at start. */
void virt_errors_quiet(void);
