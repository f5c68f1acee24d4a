/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reload to another libvirt URI, in-process against libvirt's test driver, as daemon/main.c's reload()
 * does it: the new URI opened first (manager_open_next()), the configuration switched only once it has
 * (manager_set_config()). A URI libvirt refuses, or that never answers, leaves the running connection, its
 * domains' decisions and ledger and the running configuration as they were; one that opens is switched to
 * with the connection opened for it.
 */
#include <errno.h>
#include <event2/event.h>
#include <glib/gstdio.h>
#include <libvirt/libvirt.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "topology-load.h"

/* 8 PUs: the test driver accepts pins on CPUs 0-7 only. */
#define TOPOLOGY "synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:2 pu:2"

/* Another host for the test driver: one running domain of its own. */
#define OTHER_HOST                                                                                          \
        "<node><cpu><nodes>1</nodes><sockets>1</sockets><cores>4</cores><threads>2</threads>"               \
        "<active>8</active><mhz>2000</mhz><model>i686</model></cpu><memory>8388608</memory>"                \
        "<domain type='test'><name>u-elsewhere</name><memory>524288</memory><vcpu>1</vcpu>"                 \
        "<os><type>hvm</type></os></domain></node>"

static struct event_base *base;
static virConnectPtr conn;

static void setup(void)
{
        fixture_open(&base, &conn, true);
}

static void teardown(void)
{
        fixture_close(base, conn);
}

/* Runs the loop for up to ms, or until *flag. */
static bool spin_until(const bool *flag, unsigned ms)
{
        struct timespec start, now;

        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                if (flag && *flag)
                        return true;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= (long)ms)
                        return !flag;
                g_usleep(1000);
        }
}

/* A manager on [Libvirt] URI=uri (no --connect: a reload may change it), started: connected or waiting. */
static Manager *manager_started(const char *uri, const char *more)
{
        Topology *t = NULL;
        Config *c = NULL;
        g_autofree char *error = NULL;
        g_autofree char *text =
            g_strdup_printf("[Placement]\nMemoryBinding=no\n%s[Libvirt]\nURI=%s\n", more ? more : "", uri);
        Manager *m;

        ck_assert_msg(topology_load(TOPOLOGY, &t, &error) == 0, "%s", error);
        ck_assert_msg(config_load_data(text, "test.conf", &c, &error) == 0, "%s", error);
        m = manager_new(base, t, c, NULL);
        manager_start(m);
        return m;
}

/* The same, connected. */
static Manager *manager_on(const char *uri, const char *more)
{
        Manager *m = manager_started(uri, more);

        ck_assert(manager_connected(m));
        return m;
}

typedef struct {
        bool done;
        char *error;
        char *shown; /* the error as every local user may read it */
} Opened;

static void on_opened(Manager *m, const char *error, const char *shown, void *userdata)
{
        Opened *o = userdata;
        (void)m;

        ck_assert(!o->done); /* once */
        o->done = true;
        o->error = g_strdup(error);
        o->shown = g_strdup(shown);
        ck_assert((error == NULL) == (shown == NULL));
}

/* A reload of text, as reload() does it: a new URI opened first, the configuration set only once it has.
 * Returns NULL when it switched, else why not (the caller frees it). */
static char *reload_uri(Manager *m, const char *text, unsigned wait_ms)
{
        g_autoptr(Config) c = NULL;
        g_autofree char *error = NULL;
        Opened o = {0};

        ck_assert_msg(config_load_data(text, "test.conf", &c, &error) == 0, "%s", error);
        ck_assert_int_eq(manager_open_next(m, c->uri, on_opened, &o, NULL), 0);
        ck_assert(!o.done); /* from the loop, never from inside the call */
        ck_assert_msg(spin_until(&o.done, wait_ms), "no answer within %u ms", wait_ms);
        g_free(o.shown);
        if (o.error)
                return o.error;
        manager_set_config(m, g_steal_pointer(&c));
        return NULL;
}

/* What the ledger counts of the domain with uuid: its first vCPU's pin, "" when it counts nothing. */
static char *counted(Manager *m, const char *uuid)
{
        const Plan *p = ledger_lookup(manager_ledger(m), uuid);
        return p ? cpuset_format(p->vcpu_pins[0]) : g_strdup("");
}

START_TEST(test_reload_to_refused_uri_keeps_everything)
{
        Manager *m = manager_on("test:///default", NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "u-kept", 2);
        const char *bad[] = {"test:///nonexistent.xml", "nosuchdriver:///system"};
        VirtConn *running;
        g_autofree char *uuid = NULL, *pins = NULL;

        ck_assert(fixture_spin_known(base, m, "u-kept", 3000));
        ck_assert_int_eq(manager_lookup(m, "u-kept")->result, DECISION_PLACED);
        uuid = g_strdup(manager_lookup(m, "u-kept")->uuid);
        pins = counted(m, uuid);
        ck_assert_str_ne(pins, "");
        running = manager_connection(m);
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *text = g_strdup_printf(
                    "[Placement]\nPolicy=compat\nApply=no\nMemoryBinding=no\n[Libvirt]\nURI=%s\n", bad[i]);
                g_autofree char *error = reload_uri(m, text, 5000);
                g_autofree char *now = NULL;

                ck_assert_msg(error && strstr(error, "Cannot connect to") && strstr(error, bad[i]), "%s: %s",
                              bad[i], error ? error : "(switched)");
                /* the old connection, the same one */
                ck_assert(manager_connected(m));
                ck_assert_ptr_eq(manager_connection(m), running);
                ck_assert_str_eq(manager_uri(m), "test:///default");
                /* its domain still decided, counted where it was */
                ck_assert_ptr_nonnull(manager_lookup(m, "u-kept"));
                ck_assert_int_eq(manager_lookup(m, "u-kept")->result, DECISION_PLACED);
                now = counted(m, uuid);
                ck_assert_str_eq(now, pins);
                /* the old configuration's values */
                ck_assert_int_eq(manager_config(m)->placement.policy, POLICY_EXPLICIT);
                ck_assert(manager_config(m)->apply);
                ck_assert_ptr_null(m->next_conn);
                ck_assert_ptr_null(m->next_uri);
        }
        /* and it still follows the old connection's events */
        fixture_stop(dom);
        ck_assert(spin_until(NULL, 200));
        ck_assert_ptr_null(manager_lookup(m, "u-kept"));
        fixture_manager_free(base, m);
}
END_TEST

START_TEST(test_reload_to_good_uri_switches)
{
        g_autofree char *dir = g_dir_make_tmp("placementd-uri-XXXXXX", NULL);
        g_autofree char *file = g_build_filename(dir, "other-host.xml", NULL);
        g_autofree char *uri = g_strdup_printf("test://%s", file);
        g_autofree char *text = NULL, *error = NULL;
        Manager *m = manager_on("test:///default", NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "u-left", 1);
        virConnectPtr opened;

        ck_assert(g_file_set_contents(file, OTHER_HOST, -1, NULL));
        ck_assert(fixture_spin_known(base, m, "u-left", 3000));
        text = g_strdup_printf("[Placement]\nPolicy=compat\nMemoryBinding=no\n[Libvirt]\nURI=%s\n", uri);
        error = reload_uri(m, text, 5000);
        ck_assert_msg(!error, "%s", error);
        ck_assert_str_eq(manager_uri(m), uri);
        ck_assert_int_eq(manager_config(m)->placement.policy, POLICY_COMPAT);
        ck_assert(manager_connected(m));
        /* the other host's domains, not the old connection's */
        ck_assert_ptr_null(manager_lookup(m, "u-left"));
        ck_assert_ptr_nonnull(manager_lookup(m, "u-elsewhere"));
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), 1);
        fixture_stop(dom);

        /* the connection opened ahead is the one switched to, not a second open */
        g_clear_pointer(&error, g_free);
        {
                const char *back = "[Placement]\nMemoryBinding=no\n[Libvirt]\nURI=test:///default\n";
                g_autoptr(Config) c = NULL;
                Opened o = {0};
                ck_assert_msg(config_load_data(back, "test.conf", &c, &error) == 0, "%s", error);
                ck_assert_int_eq(manager_open_next(m, c->uri, on_opened, &o, NULL), 0);
                ck_assert(spin_until(&o.done, 5000));
                ck_assert_msg(!o.error, "%s", o.error);
                opened = m->next_conn;
                ck_assert_ptr_nonnull(opened);
                manager_set_config(m, g_steal_pointer(&c));
        }
        ck_assert_ptr_eq(virt_conn_get(manager_connection(m)), opened);
        ck_assert_ptr_null(m->next_conn);
        ck_assert_str_eq(manager_uri(m), "test:///default");
        ck_assert_ptr_null(manager_lookup(m, "u-elsewhere"));
        fixture_manager_free(base, m);
        g_unlink(file);
        g_rmdir(dir);
}
END_TEST

/* A libvirtd that accepts connections and never answers: a socket listening at dir/tarpit.sock (*ret_sock),
 * whose backlog completes the connections. Returns its descriptor. */
static int tarpit(const char *dir, char **ret_sock)
{
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        *ret_sock = g_build_filename(dir, "tarpit.sock", NULL);
        g_strlcpy(addr.sun_path, *ret_sock, sizeof(addr.sun_path));
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        return fd;
}

/* A libvirtd that accepts the connection and never answers (an ssh host that hangs, a wedged daemon): the
 * loop runs on meanwhile, and after the limit the reload is refused, the old connection kept. */
START_TEST(test_reload_to_silent_uri_refused_in_time)
{
        g_autofree char *dir = g_dir_make_tmp("placementd-uri-XXXXXX", NULL);
        g_autofree char *sock = NULL;
        g_autofree char *text = NULL, *error = NULL;
        int fd = tarpit(dir, &sock);
        Manager *m = manager_on("test:///default", NULL);
        VirtConn *running = manager_connection(m);
        struct timespec t0, t1;
        long ms;

        m->next_open_sec = 1;
        text =
            g_strdup_printf("[Placement]\nPolicy=compat\n[Libvirt]\nURI=qemu:///system?socket=%s\n", sock);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        error = reload_uri(m, text, 5000);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        /* the URI is shown without its query, as everyone may read it, and marked as having one */
        ck_assert_msg(error && strstr(error, "Cannot connect to qemu:///system?...: no answer within 1 s") &&
                          !strstr(error, sock),
                      "%s", error ? error : "(switched)");
        ck_assert_msg(ms >= 900 && ms < 3000, "refused after %ld ms", ms);
        ck_assert_ptr_eq(manager_connection(m), running);
        ck_assert_str_eq(manager_uri(m), "test:///default");
        ck_assert_int_eq(manager_config(m)->placement.policy, POLICY_EXPLICIT);
        ck_assert(manager_connected(m));
        /* a newer reload drops a waiting open without calling its done */
        {
                Opened o = {0};
                ck_assert_int_eq(
                    manager_open_next(m, "qemu:///system?socket=/nonexistent", on_opened, &o, NULL), 0);
                manager_drop_next(m);
                ck_assert(spin_until(NULL, 300));
                ck_assert(!o.done);
        }
        fixture_manager_free(base, m);
        close(fd);
        g_unlink(sock);
        g_rmdir(dir);
}
END_TEST

/* A daemon started while its libvirtd accepts the connection and never answers (a libvirtd stopped or
 * deadlocked, as the watchdog finds it before a restart): the start returns, and the loop answers,
 * waiting for it. */
START_TEST(test_start_on_silent_uri_waits)
{
        g_autofree char *dir = g_dir_make_tmp("placementd-uri-XXXXXX", NULL);
        g_autofree char *sock = NULL, *uri = NULL, *status = NULL;
        int fd = tarpit(dir, &sock);
        Manager *m;

        uri = g_strdup_printf("qemu:///system?socket=%s", sock);
        m = manager_started(uri, NULL);
        ck_assert(spin_until(NULL, 300)); /* the loop turns while the open waits */
        ck_assert(!manager_connected(m));
        status = manager_status(m);
        ck_assert_msg(strstr(status, "Waiting for qemu:///system") && !strstr(status, sock), "%s", status);
        fixture_manager_free(base, m);
        close(fd);
        g_unlink(sock);
        g_rmdir(dir);
}
END_TEST

/* libvirt's message may quote what the URI names (a line of a file the test driver reads, a key file's or
 * socket's path): the caller's answer has it, the text every local user reads (ReloadError, STATUS=) not */
START_TEST(test_refusal_shown_without_libvirt_words)
{
        g_autofree char *dir = g_dir_make_tmp("placementd-uri-XXXXXX", NULL);
        g_autofree char *file = g_build_filename(dir, "secret", NULL);
        g_autofree char *uri = g_strdup_printf("test://%s", file);
        Manager *m = manager_on("test:///default", NULL);
        Opened o = {0};

        ck_assert(g_file_set_contents(file, "root:SECRETMARK:19000:0:99999:7:::\n", -1, NULL));
        ck_assert_int_eq(manager_open_next(m, uri, on_opened, &o, NULL), 0);
        ck_assert(spin_until(&o.done, 5000));
        ck_assert_msg(o.error && strstr(o.error, "SECRETMARK"), "libvirt's words: %s", o.error);
        ck_assert_msg(o.shown && !strstr(o.shown, "SECRETMARK") &&
                          strstr(o.shown, "Cannot connect to test://"),
                      "%s", o.shown);
        ck_assert_msg(strstr(o.shown, "libvirt's message is in the log"), "%s", o.shown);
        g_free(o.error);
        g_free(o.shown);
        fixture_manager_free(base, m);
        g_unlink(file);
        g_rmdir(dir);
}
END_TEST

/* An open given up on while libvirt still blocks it holds back the next open of that libvirtd: refused at
 * once, naming the URI without its query, where each reload had added a thread and a socket; another
 * libvirtd, and the test driver, are still tried; once the silent libvirtd goes, it is tried again */
START_TEST(test_abandoned_opens_bounded)
{
        g_autofree char *dir = g_dir_make_tmp("placementd-uri-XXXXXX", NULL);
        g_autofree char *sock = NULL;
        int fd = tarpit(dir, &sock);
        g_autofree char *uri = g_strdup_printf("qemu:///system?socket=%s", sock);
        g_autofree char *spelled = g_strdup_printf("QEMU+unix:///system?socket=%s", sock);
        Manager *m = manager_on("test:///default", NULL);
        g_autofree char *error = NULL;
        Opened o = {0};

        m->next_open_sec = 1;
        ck_assert_int_eq(manager_open_next(m, uri, on_opened, &o, NULL), 0);
        ck_assert(spin_until(&o.done, 3000));
        ck_assert_msg(o.error && strstr(o.error, "no answer within 1 s"), "%s", o.error);
        g_clear_pointer(&o.error, g_free);
        g_clear_pointer(&o.shown, g_free);
        o.done = false;
        /* the same libvirtd, however spelled: refused at once */
        ck_assert_int_eq(manager_open_next(m, spelled, on_opened, &o, &error), -EBUSY);
        ck_assert_msg(error &&
                          strstr(error, "Cannot try qemu+unix:///system?... now: an earlier open of that "
                                        "libvirtd has not returned") &&
                          !strstr(error, sock),
                      "%s", error);
        ck_assert_ptr_null(m->next_uri);
        ck_assert(!o.done);
        /* another libvirtd is tried (refused by libvirt: no such socket), the test driver too */
        {
                g_autofree char *other = g_strdup_printf("qemu:///session?socket=%s/none", dir);
                ck_assert_int_eq(manager_open_next(m, other, on_opened, &o, NULL), 0);
                ck_assert(spin_until(&o.done, 3000));
                ck_assert_ptr_nonnull(o.error);
                g_clear_pointer(&o.error, g_free);
                g_clear_pointer(&o.shown, g_free);
                o.done = false;
                ck_assert_int_eq(manager_open_next(m, "test:///default", on_opened, &o, NULL), 0);
                ck_assert(spin_until(&o.done, 3000));
                ck_assert_msg(!o.error, "%s", o.error);
                manager_drop_next(m);
                o.done = false;
        }
        /* the silent libvirtd goes: the blocked open returns, and that libvirtd is tried again */
        close(fd);
        g_unlink(sock);
        {
                int r = -EBUSY;
                for (unsigned i = 0; i < 100 && r < 0; i++) {
                        g_clear_pointer(&error, g_free);
                        r = manager_open_next(m, uri, on_opened, &o, &error);
                        if (r < 0)
                                ck_assert(spin_until(NULL, 50));
                }
                ck_assert_msg(r == 0, "%s", error);
                ck_assert(spin_until(&o.done, 3000));
                ck_assert_ptr_nonnull(o.error); /* no socket now: refused, not blocked */
                g_free(o.error);
                g_free(o.shown);
        }
        fixture_manager_free(base, m);
        g_rmdir(dir);
}
END_TEST

/* Runs fn(data) (when given), then the loop for ms (not at all for 0), with the log (at info level) going to
 * a file; returns what was logged. */
static char *logged_during(void (*fn)(void *), void *data, unsigned ms)
{
        FILE *f = tmpfile();
        int saved = dup(STDERR_FILENO), level = log_get_max_level();
        char *text = g_malloc0(65536);

        ck_assert(f && saved >= 0);
        fflush(stderr);
        ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
        log_set_max_level(LOG_INFO);
        if (fn)
                fn(data);
        if (ms)
                spin_until(NULL, ms);
        fflush(stderr);
        log_set_max_level(level);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        rewind(f);
        (void)!fread(text, 1, 65535, f);
        fclose(f);
        return text;
}

static char *logged_while_spinning(unsigned ms)
{
        return logged_during(NULL, NULL, ms);
}

static gpointer keepalive_gives_up(gpointer m)
{
        manager_connection_closed(VIR_CONNECT_CLOSE_REASON_KEEPALIVE, m);
        return NULL;
}

/* libvirt's close callback, as the keepalive's watch thread brings it (virt-event.c), run on a thread of
 * its own and joined */
static void closed_on_another_thread(void *m)
{
        g_thread_join(g_thread_new("keepalive", keepalive_gives_up, m));
}

/* libvirt says the connection closed on another thread than the loop's (the keepalive watch thread fires
 * libvirt's keepalive timer while a call holds the loop): nothing is said or done there, where the
 * configuration and its URI, which a reload on the loop swaps, are not the thread's to read; the loop
 * says the loss and connects again. */
START_TEST(test_close_on_another_thread_handled_by_loop)
{
        Manager *m = manager_on("test:///default", NULL);
        g_autofree char *on_thread = logged_during(closed_on_another_thread, m, 0);
        g_autofree char *on_loop = NULL;

        ck_assert_msg(!strstr(on_thread, "Lost the connection"), "said on the closing thread: %s",
                      on_thread);
        on_loop = logged_while_spinning(50);
        ck_assert_msg(strstr(on_loop, "<4>Lost the connection to test:///default (keepalive timeout)"), "%s",
                      on_loop);
        ck_assert(!manager_connected(m));
        for (unsigned i = 0; i < 100 && !manager_connected(m); i++)
                spin_until(NULL, 50);
        ck_assert(manager_connected(m));
        fixture_manager_free(base, m);
}
END_TEST

/* A libvirtd away for hours (stopped for maintenance) is retried every 30 s: the journal says each failure
 * while the wait grows, and at its longest only one whose message changed, not two lines every 30 s */
START_TEST(test_reconnect_at_longest_wait_quiet)
{
        g_autofree char *first = NULL, *again = NULL;
        Manager *m = manager_started("test:///nonexistent.xml", NULL);

        ck_assert(!manager_connected(m));
        /* the retries while the wait grows are said */
        evtimer_del(m->reconnect_ev);
        event_active(m->reconnect_ev, EV_TIMEOUT, 1);
        first = logged_while_spinning(50);
        ck_assert_msg(strstr(first, "<4>Cannot connect to test:///nonexistent.xml") &&
                          strstr(first, "<5>Connecting to test:///nonexistent.xml again in 2 s"),
                      "%s", first);
        /* at the longest wait, the same failure again: debug level only */
        m->backoff_sec = 30;
        evtimer_del(m->reconnect_ev);
        event_active(m->reconnect_ev, EV_TIMEOUT, 1);
        again = logged_while_spinning(50);
        ck_assert_msg(!strstr(again, "Cannot connect") && !strstr(again, "again in"), "%s", again);
        ck_assert(!manager_connected(m));
        ck_assert_uint_eq(m->backoff_sec, 30);
        fixture_manager_free(base, m);
}
END_TEST

/* The last notice before the retries go quiet says that they go on, every 30 s: the journal does not end
 * on "again in 16 s" as if placementd had stopped trying. */
START_TEST(test_reconnect_says_longest_wait)
{
        g_autofree char *last = NULL;
        Manager *m = manager_started("test:///nonexistent.xml", NULL);

        ck_assert(!manager_connected(m));
        m->backoff_sec = 16; /* the last wait that grows */
        evtimer_del(m->reconnect_ev);
        event_active(m->reconnect_ev, EV_TIMEOUT, 1);
        last = logged_while_spinning(50);
        ck_assert_msg(
            strstr(last, "<5>Connecting to test:///nonexistent.xml again in 16 s, then every 30 s"), "%s",
            last);
        ck_assert_uint_eq(m->backoff_sec, 30);
        fixture_manager_free(base, m);
}
END_TEST

static Suite *manager_uri_suite(void)
{
        Suite *s = suite_create("manager uri");
        TCase *tc = tcase_create("uri");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_reload_to_refused_uri_keeps_everything);
        tcase_add_test(tc, test_reload_to_good_uri_switches);
        tcase_add_test(tc, test_reload_to_silent_uri_refused_in_time);
        tcase_add_test(tc, test_start_on_silent_uri_waits);
        tcase_add_test(tc, test_refusal_shown_without_libvirt_words);
        tcase_add_test(tc, test_abandoned_opens_bounded);
        tcase_add_test(tc, test_reconnect_at_longest_wait_quiet);
        tcase_add_test(tc, test_reconnect_says_longest_wait);
        tcase_add_test(tc, test_close_on_another_thread_handled_by_loop);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_uri_suite)
