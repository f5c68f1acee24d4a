/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manager in-process against libvirt's test driver (test:///default): events, live pins read back
 * with virDomainGetVcpuPinInfo, metadata, release on stop, restart adoption, opt-outs, advisory mode,
 * pins made by hand, and a domain that vanishes before it is pinned.
 */
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "decision-json.h"
#include "domain-xml.h"
#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "topology-load.h"
#include "virt-domain.h"

/* 8 PUs: the test driver accepts pins on CPUs 0-7 only. */
#define TOPOLOGY "synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:2 pu:2"

static struct event_base *base;
static virConnectPtr conn; /* the test's own connection to the same in-process driver */

static void setup(void)
{
        fixture_open(&base, &conn, false);
}

static void teardown(void)
{
        fixture_close(base, conn);
}

/* Runs the loop for up to ms, or until done(arg) holds. */
static bool spin(bool (*done)(void *), void *arg, unsigned ms)
{
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                if (done && done(arg))
                        return true;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= (long)ms)
                        return done == NULL;
                struct timespec nap = {0, 1000000};
                nanosleep(&nap, NULL);
        }
}

static Manager *new_manager_on(const char *topology, const char *config_text)
{
        return fixture_manager_new(base, topology, config_text);
}

static Manager *new_manager(const char *config_text)
{
        return new_manager_on(TOPOLOGY, config_text);
}

static void free_manager(Manager *m)
{
        manager_free(m);
        spin(NULL, NULL, 20);
}

typedef struct {
        Manager *m;
        const char *name;
} Wait;

static bool known(void *arg)
{
        Wait *w = arg;
        return manager_lookup(w->m, w->name) != NULL;
}

static bool unknown(void *arg)
{
        return !known(arg);
}

/* A reload of the configuration text (as SIGHUP reads the file). */
static void reload(Manager *m, const char *text)
{
        Config *c = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(config_load_data(text, "test.conf", &c, &error) == 0, "%s", error);
        manager_set_config(m, c);
}

/* new_manager(config_text), with what it logs (warnings and worse, the fixture's level) in *ret_logged. */
static Manager *new_manager_logged(const char *config_text, char **ret_logged)
{
        FILE *f = tmpfile();
        int saved = dup(STDERR_FILENO);
        char *logged = g_malloc0(65536);
        size_t n;
        Manager *m;

        ck_assert(f && saved >= 0);
        fflush(stderr);
        ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
        m = new_manager(config_text);
        fflush(stderr);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        rewind(f);
        n = fread(logged, 1, 65535, f);
        logged[n] = '\0';
        fclose(f);
        *ret_logged = logged;
        return m;
}

static virDomainPtr start_domain(const char *name, unsigned vcpus, const char *extra)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu>%u</vcpu><os><type>hvm</type></os>%s</domain>",
                            name, vcpus, extra ? extra : "");
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);
        ck_assert_msg(dom != NULL, "cannot start %s", name);
        return dom;
}

START_TEST(test_start_pin_stop)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-web", 2, NULL);
        Wait w = {m, "m-web"};
        g_autoptr(DomainSpec) spec = NULL;

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "m-web");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        /* one whole core each */
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 2);
        ck_assert(!cpuset_intersects(d->plan->vcpu_pins[0], d->plan->vcpu_pins[1]));
        fixture_assert_live_pins(dom, d->plan);
        /* the decision is in the live metadata */
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_nonnull(spec->decision);
        ck_assert_str_eq(spec->decision->result, "placed");
        ck_assert_uint_eq(spec->decision->vcpus->len, 2);
        /* lookup by UUID too */
        ck_assert_ptr_eq(manager_lookup(m, d->uuid), d);

        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(spin(unknown, &w, 3000));
        /* only the test driver's own "test" domain may remain counted */
        const Decision *other = manager_lookup(m, "test");
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), other ? 1 : 0);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* Writes placementd's element of dom's metadata (NULL: removes it), as virsh metadata does. */
static void set_element(virDomainPtr dom, const char *xml, unsigned flags)
{
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml,
                                              xml ? "placementd" : NULL, PLACEMENTD_XMLNS, flags),
                         0);
}

/* A decision whose metadata write failed (libvirtd went away mid-burst): the next reconcile records it. */
START_TEST(test_reconcile_records_again)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-rerecord", 1, NULL);
        Wait w = {m, "m-rerecord"};
        g_autoptr(DomainSpec) spec = NULL;
        Decision *d;

        ck_assert(spin(known, &w, 3000));
        d = (Decision *)manager_lookup(m, "m-rerecord");
        /* as if the write had failed: no metadata, the decision marked unrecorded */
        set_element(dom, NULL, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_null(spec->decision);
        g_clear_pointer(&spec, domain_spec_free);
        d->unrecorded = true;

        manager_reconcile(m);
        ck_assert_ptr_eq(manager_lookup(m, "m-rerecord"), d); /* the same decision, not placed anew */
        ck_assert(!d->unrecorded);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_nonnull(spec->decision);
        ck_assert_str_eq(spec->decision->result, "placed");

        ck_assert_int_eq(virDomainDestroy(dom), 0);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_lookup_as_virsh)
{
        /* A domain may be named like another's UUID: the UUID wins, in any case, as virsh resolves it;
         * a domain ID comes first of all. */
        static const char uuid[] = "0f6a4c2e-3b1d-4e5f-8a9b-1c2d3e4f5a6b";
        Manager *m = new_manager(NULL);
        virDomainPtr a =
            start_domain("m-uuid-owner", 1, "<uuid>0f6a4c2e-3b1d-4e5f-8a9b-1c2d3e4f5a6b</uuid>");
        virDomainPtr b = start_domain(uuid, 1, NULL);
        Wait wa = {m, "m-uuid-owner"}, wb = {m, uuid};
        g_autofree char *upper = g_ascii_strup(uuid, -1);

        ck_assert(spin(known, &wa, 3000));
        ck_assert(spin(known, &wb, 3000));
        ck_assert_str_eq(manager_lookup(m, uuid)->name, "m-uuid-owner");
        ck_assert_str_eq(manager_lookup(m, upper)->name, "m-uuid-owner");
        {
                /* the impostor is reached by its own UUID and by its ID */
                const Decision *d = NULL;
                GPtrArray *all = manager_list(m);
                g_autofree char *id = NULL;
                for (unsigned i = 0; i < all->len; i++)
                        if (strcmp(((const Decision *)g_ptr_array_index(all, i))->name, uuid) == 0)
                                d = g_ptr_array_index(all, i);
                g_ptr_array_unref(all);
                ck_assert_ptr_nonnull(d);
                ck_assert_str_eq(manager_lookup(m, d->uuid)->name, uuid);
                id = g_strdup_printf("%u", d->domain_id);
                ck_assert_str_eq(manager_lookup(m, id)->name, uuid);
        }
        ck_assert_ptr_null(manager_lookup(m, ""));
        ck_assert_int_eq(virDomainDestroy(a), 0);
        ck_assert_int_eq(virDomainDestroy(b), 0);
        virDomainFree(a);
        virDomainFree(b);
        free_manager(m);
}
END_TEST

/* A name with a control character (a carriage return: XML allows no ESC) or a backslash is found by the
 * form text output prints it in (what `list` showed, copied back); beside a domain whose exact name is that
 * form, the text names neither (ambiguous), and each is found by its own escaped form or UUID. */
START_TEST(test_lookup_by_shown_name)
{
        Manager *m = new_manager(NULL);
        virDomainPtr esc = start_domain("m-cr&#13;[2J", 1, NULL);
        virDomainPtr back = start_domain("m-back\\slash", 1, NULL);
        Wait we = {m, "m-cr\r[2J"}, wb = {m, "m-back\\slash"};
        virDomainPtr literal;
        Wait wl = {m, "m-cr\\x5cx0d[2J"}; /* the literal one, by its escaped form */

        ck_assert(spin(known, &we, 3000));
        ck_assert(spin(known, &wb, 3000));
        ck_assert_ptr_nonnull(manager_lookup(m, "m-cr\\x0d[2J"));
        ck_assert_str_eq(manager_lookup(m, "m-cr\\x0d[2J")->name, "m-cr\r[2J");
        ck_assert_ptr_nonnull(manager_lookup(m, "m-back\\x5cslash"));
        ck_assert_str_eq(manager_lookup(m, "m-back\\x5cslash")->name, "m-back\\slash");
        ck_assert_ptr_null(manager_lookup(m, "m-cr\\x0d[2"));
        /* a domain named literally what the other prints as: that text is ambiguous, so neither */
        literal = start_domain("m-cr\\x0d[2J", 1, NULL);
        ck_assert(spin(known, &wl, 3000));
        ck_assert_ptr_null(manager_lookup(m, "m-cr\\x0d[2J"));
        ck_assert_str_eq(manager_lookup(m, "m-cr\\x5cx0d[2J")->name, "m-cr\\x0d[2J");
        ck_assert_str_eq(manager_lookup(m, "m-back\\x5cslash")->name, "m-back\\slash");
        ck_assert_int_eq(virDomainDestroy(esc), 0);
        ck_assert_int_eq(virDomainDestroy(back), 0);
        ck_assert_int_eq(virDomainDestroy(literal), 0);
        virDomainFree(esc);
        virDomainFree(back);
        virDomainFree(literal);
        free_manager(m);
}
END_TEST

/* A domain that pins itself keeps a CPU for its emulator (Nova's emulator_threads_policy=isolate): the
 * ledger holds that CPU, and a restarted daemon that adopts the domain's record holds it again, from the
 * definition (the record does not say), so the next domain is not placed onto it */
START_TEST(test_restart_holds_emulator_cpu)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-iso", 1,
                                        "<cputune><vcpupin vcpu='0' cpuset='4'/><emulatorpin cpuset='6'/>"
                                        "</cputune>");
        Wait w = {m, "m-iso"};
        int held = topology_pu_by_os(manager_topology(m), 6);

        ck_assert(spin(known, &w, 3000));
        ck_assert(manager_lookup(m, "m-iso")->pinned_by_hand);
        ck_assert_int_ge(held, 0);
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), (unsigned)held), 1);
        free_manager(m);

        m = new_manager(NULL);
        w.m = m;
        ck_assert(known(&w));
        const Decision *d = manager_lookup(m, "m-iso");
        ck_assert(d->pinned_by_hand);
        ck_assert_msg(ledger_pu_held(manager_ledger(m), (unsigned)held) == 1,
                      "%s: CPU 6 not held after a restart", d->reason);
        virDomainDestroy(dom);
        virDomainFree(dom);
        spin(NULL, NULL, 50);

        /* placed by placementd (only its emulator pinned by its definition), then its vCPU pinned by hand:
         * adopted, the emulator CPU held; a restart adopts the record and holds it again */
        dom = start_domain("m-iso", 1, "<cputune><emulatorpin cpuset='6'/></cputune>");
        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-iso")->result, DECISION_PLACED);
        ck_assert_int_eq(
            virDomainPinVcpuFlags(dom, 0, &(unsigned char){1u << 4}, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        ck_assert(manager_lookup(m, "m-iso")->pinned_by_hand);
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), (unsigned)held), 1);
        free_manager(m);
        m = new_manager(NULL);
        w.m = m;
        ck_assert(known(&w));
        d = manager_lookup(m, "m-iso");
        ck_assert(d->pinned_by_hand);
        ck_assert_msg(ledger_pu_held(manager_ledger(m), (unsigned)held) == 1,
                      "%s: CPU 6 not held after a restart (adopted from its record)", d->reason);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

static int emulator_mask(virDomainPtr dom)
{
        unsigned char map[1] = {0};

        ck_assert_int_eq(virDomainGetEmulatorPinInfo(dom, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        return map[0];
}

/* Placed with its emulator and I/O thread pinned, then a reload whose plans pin no emulator
 * (EmulatorPin=none, under either policy) and replace: placementd's old pins are undone, back to every CPU
 * as libvirt runs them unpinned, not left where the old decision put them while the record says "not
 * pinned"; an emulator pinned by hand since is the user's and stays. */
START_TEST(test_dropped_emulator_pin_undone)
{
        static const char *const configs[] = {"[Placement]\nEmulatorPin=none\n",
                                              "[Placement]\nPolicy=compat\nEmulatorPin=none\n"};

        for (unsigned c = 0; c < G_N_ELEMENTS(configs); c++) {
                Manager *m = new_manager(NULL);
                virDomainPtr dom = start_domain("m-undo", 1, "<iothreads>1</iothreads>");
                Wait w = {m, "m-undo"};
                g_autofree char *error = NULL;
                const Decision *d;

                ck_assert(spin(known, &w, 3000));
                d = manager_lookup(m, "m-undo");
                ck_assert_int_eq(d->result, DECISION_PLACED);
                ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
                ck_assert(cpuset_has(d->plan->iothreads, 1));
                ck_assert_int_ne(emulator_mask(dom), 0xff);
                reload(m, configs[c]);
                ck_assert_msg(manager_replace(m, "m-undo", &error) == 0, "%s", error);
                d = manager_lookup(m, "m-undo");
                ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin), "%s", configs[c]);
                ck_assert_msg(emulator_mask(dom) == 0xff, "%s: the emulator still runs on 0x%x", configs[c],
                              emulator_mask(dom));
                if (!cpuset_has(d->plan->iothreads, 1))
                        ck_assert_msg(fixture_iothread_map(dom, 1) == 0xff,
                                      "%s: I/O thread 1 still runs on 0x%x", configs[c],
                                      fixture_iothread_map(dom, 1));

                /* pinned again by placementd, then by hand: a replace under the same reload leaves it */
                reload(m, "");
                ck_assert_msg(manager_replace(m, "m-undo", &error) == 0, "%s", error);
                ck_assert_int_ne(emulator_mask(dom), 0xff);
                ck_assert_int_eq(
                    virDomainPinEmulator(dom, &(unsigned char){1u << 7}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
                reload(m, configs[c]);
                ck_assert_msg(manager_replace(m, "m-undo", &error) == 0, "%s", error);
                ck_assert_msg(emulator_mask(dom) == 0x80, "%s: the emulator pinned by hand moved to 0x%x",
                              configs[c], emulator_mask(dom));
                virDomainDestroy(dom);
                virDomainFree(dom);
                free_manager(m);
                spin(NULL, NULL, 50);
        }
}
END_TEST

/* Placed again when nothing has room (a reload reserved the memory, then replace; without a binding that
 * keeps its memory where it is): nothing is applied,
 * so the domain runs on the pins it had; the ledger counts them, replace says why it did not move, and
 * a later domain is not placed onto those cores as if they were free */
START_TEST(test_unplaceable_replace_keeps_pins_counted)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-stay", 1, NULL);
        Wait w = {m, "m-stay"}, w2 = {m, "m-later"};
        g_autofree char *error = NULL;
        g_autoptr(Plan) before = NULL;
        virDomainPtr later;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        before = plan_copy(manager_lookup(m, "m-stay")->plan);
        reload(m, "[Placement]\nMemoryBinding=no\nMemoryReserve=16G\n");
        ck_assert_msg(manager_replace(m, "m-stay", &error) != 0, "%s", manager_lookup(m, "m-stay")->reason);
        ck_assert_msg(error && strstr(error, "unplaceable"), "%s", error ? error : "no error");
        d = manager_lookup(m, "m-stay");
        ck_assert_int_eq(d->result, DECISION_UNPLACEABLE);
        ck_assert_msg(strstr(d->reason, "runs on the pins it had"), "%s", d->reason);
        ck_assert(cpuset_equal(d->plan->vcpu_pins[0], before->vcpu_pins[0]));
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)before->vcpu_pu[0]), 1);
        fixture_assert_live_pins(dom, before);
        /* the emulator pin it applied runs too, and the record of what it applied stays: those pins run */
        ck_assert(cpuset_equal(d->plan->emulator_pin, before->emulator_pin));
        {
                g_autoptr(DomainSpec) spec = NULL;
                ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
                ck_assert_ptr_nonnull(spec->decision);
                ck_assert_str_eq(spec->decision->result, "placed");
        }

        reload(m, "[Placement]\nMemoryBinding=no\n");
        later = start_domain("m-later", 1, NULL);
        ck_assert(spin(known, &w2, 3000));
        d = manager_lookup(m, "m-later");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_msg(!cpuset_intersects(d->plan->vcpu_pins[0], before->vcpu_pins[0]),
                      "m-later placed onto m-stay's core");
        virDomainDestroy(later);
        virDomainFree(later);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* A reload acts on the domains that run where it changes them: Apply= turned on applies the advisory
 * decision, and CPUs newly reserved are left by the domain placementd put there */
START_TEST(test_reload_applies_to_running_domains)
{
        Manager *m = new_manager("[Placement]\nApply=no\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-rl", 1, NULL);
        Wait w = {m, "m-rl"};
        g_autofree char *error = NULL;
        g_autoptr(CpuSet) was = NULL;
        g_autofree char *conf = NULL, *pins = NULL;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-rl")->result, DECISION_ADVISORY);
        reload(m, "[Placement]\nMemoryBinding=no\n");
        d = manager_lookup(m, "m-rl");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        fixture_assert_live_pins(dom, d->plan);
        was = cpuset_copy(d->plan->vcpu_pins[0]);

        pins = cpuset_format(was);
        conf = g_strdup_printf("[Placement]\nMemoryBinding=no\nReservedCPUs=%s\n", pins);
        reload(m, conf);
        d = manager_lookup(m, "m-rl");
        ck_assert_msg(d->result == DECISION_PLACED && !cpuset_intersects(d->plan->vcpu_pins[0], was), "%s",
                      d->reason);
        fixture_assert_live_pins(dom, d->plan);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* A domain left unplaceable by a configuration mistake (ReservedCPUs= holding every CPU) is placed once a
 * reload fixes it, without a request. */
START_TEST(test_reload_places_unplaceable)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\nReservedCPUs=0-7\n");
        virDomainPtr dom = start_domain("m-unpl", 1, NULL);
        Wait w = {m, "m-unpl"};
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-unpl")->result, DECISION_UNPLACEABLE);
        reload(m, "[Placement]\nMemoryBinding=no\n");
        d = manager_lookup(m, "m-unpl");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        fixture_assert_live_pins(dom, d->plan);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* An I/O thread placementd pinned apart from the emulator (the definition pins that one) and from the
 * vCPUs (VCPUPin=thread: on their cores' other threads) is left too when a reload reserves its CPUs. */
START_TEST(test_reload_moves_iothreads_off_reserved_cpus)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\nVCPUPin=thread\n");
        virDomainPtr dom =
            start_domain("m-rio", 1, "<iothreads>1</iothreads><cputune><emulatorpin cpuset='7'/></cputune>");
        Wait w = {m, "m-rio"};
        g_autoptr(CpuSet) was = NULL;
        g_autofree char *conf = NULL, *pins = NULL;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-rio");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert(cpuset_is_empty(d->plan->emulator_pin)); /* the user's */
        ck_assert(cpuset_has(d->plan->iothreads, 1));
        was = cpuset_copy(d->plan->iothread_pin);
        ck_assert(!cpuset_is_empty(was));
        pins = cpuset_format(was);
        conf = g_strdup_printf("[Placement]\nMemoryBinding=no\nVCPUPin=thread\nReservedCPUs=%s\n", pins);
        reload(m, conf);
        d = manager_lookup(m, "m-rio");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_msg(!cpuset_intersects(d->plan->iothread_pin, was), "an I/O thread pin on reserved %s",
                      pins);
        CPUSET_FOREACH (cpu, was)
                ck_assert_msg(!(fixture_iothread_map(dom, 1) & (1 << cpu)), "I/O thread 1 runs on 0x%x",
                              fixture_iothread_map(dom, 1));
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* CPUs reserved while placementd was down are left as a reload leaves them: a record whose vCPUs run
 * there is not adopted (a domain owner may write one too), the domain is placed anew off them */
START_TEST(test_restart_leaves_newly_reserved_cpus)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-rr", 1, NULL);
        Wait w = {m, "m-rr"};
        g_autoptr(CpuSet) was = NULL;
        g_autofree char *conf = NULL, *pins = NULL;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        was = cpuset_copy(manager_lookup(m, "m-rr")->plan->vcpu_pins[0]);
        free_manager(m);

        pins = cpuset_format(was);
        conf = g_strdup_printf("[Placement]\nMemoryBinding=no\nReservedCPUs=%s\n", pins);
        m = new_manager(conf);
        w.m = m;
        ck_assert(known(&w));
        d = manager_lookup(m, "m-rr");
        ck_assert_msg(d->result == DECISION_PLACED && !d->adopted &&
                          !cpuset_intersects(d->plan->vcpu_pins[0], was),
                      "%s", d->reason);
        fixture_assert_live_pins(dom, d->plan);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* Every local user reads the URI property and the status: a user name or key file in the URI is not
 * theirs to read; the log keeps the whole URI */
START_TEST(test_uri_shown_without_user_or_query)
{
        Topology *t = NULL;
        Config *c = NULL;
        g_autofree char *error = NULL, *status = NULL;
        Manager *m;

        ck_assert_msg(topology_load(TOPOLOGY, &t, &error) == 0, "%s", error);
        ck_assert_msg(config_load_data("[Libvirt]\nURI=test://alice@/default?keyfile=/root/k\n", "test.conf",
                                       &c, &error) == 0,
                      "%s", error);
        m = manager_new(base, t, c, NULL);
        manager_start(m);
        ck_assert(manager_connected(m));
        ck_assert_str_eq(manager_uri(m), "test://alice@/default?keyfile=/root/k");
        ck_assert_str_eq(manager_uri_public(m), "test:///default");
        status = manager_status(m);
        ck_assert_msg(!strstr(status, "alice") && !strstr(status, "keyfile"), "%s", status);
        reload(m, "[Libvirt]\nURI=test://bob@/default?x=1\n");
        ck_assert_str_eq(manager_uri_public(m), "test:///default");
        /* another URI: the old connection's decisions are forgotten, not kept to be matched by UUID */
        ck_assert_ptr_nonnull(manager_lookup(m, "test"));
        reload(m, "[Libvirt]\nURI=test:///no-such-file.xml\n");
        ck_assert(!manager_connected(m));
        ck_assert_ptr_null(manager_lookup(m, "test"));
        g_clear_pointer(&status, g_free);
        status = manager_status(m);
        ck_assert_msg(strstr(status, "0 domains"), "%s", status);
        free_manager(m);
}
END_TEST

/* A reload that turns Apply= on while libvirt is away applies the advisory decisions once it is back,
 * not never (the reconnect's reconcile leaves an advisory decision as it is) */
START_TEST(test_reload_while_away_applies_once_back)
{
        Manager *m = new_manager("[Placement]\nApply=no\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-away", 1, NULL);
        Wait w = {m, "m-away"};
        g_autofree char *error = NULL;
        VirtConn *conn_kept;

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-away")->result, DECISION_ADVISORY);
        conn_kept = m->conn;
        m->conn = NULL; /* as disconnect() leaves it */
        reload(m, "[Placement]\nMemoryBinding=no\n");
        ck_assert_int_eq(manager_lookup(m, "m-away")->result, DECISION_ADVISORY);
        m->conn = conn_kept;
        /* what the connection's return runs (connect_now() after its reconcile) */
        manager_reload_pending(m);
        ck_assert_msg(manager_lookup(m, "m-away")->result == DECISION_PLACED, "%s",
                      manager_lookup(m, "m-away")->reason);
        fixture_assert_live_pins(dom, manager_lookup(m, "m-away")->plan);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* A reload that turns CoreKinds=performance-only on moves placementd's domains off the E-cores, as one that
 * reserves CPUs moves them off those */
START_TEST(test_reload_core_kinds_leaves_e_cores)
{
        g_autofree char *path = test_topology_path("hybrid-small.xml");
        Manager *m = new_manager_on(path, "[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-ecore", 6, NULL);
        Wait w = {m, "m-ecore"};
        g_autoptr(CpuSet) e_cores = NULL;
        const Decision *d;
        bool on_e = false;

        cpuset_parse("4-7", &e_cores, NULL);
        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-ecore");
        for (unsigned i = 0; i < d->plan->nvcpus; i++)
                on_e = on_e || cpuset_intersects(d->plan->vcpu_pins[i], e_cores);
        ck_assert_msg(on_e, "6 vCPUs on 4 P-cores and E-cores: %s", d->reason);
        reload(m, "[Placement]\nMemoryBinding=no\nCoreKinds=performance-only\n");
        d = manager_lookup(m, "m-ecore");
        for (unsigned i = 0; i < d->plan->nvcpus; i++)
                ck_assert_msg(!cpuset_intersects(d->plan->vcpu_pins[i], e_cores), "vCPU %u on an E-core: %s",
                              i, d->reason);
        fixture_assert_live_pins(dom, d->plan);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* What a reload left for libvirt's return is done as far as the configuration still asks for it: Apply=
 * turned on then off again while libvirt was away, or CPUs reserved then released, places nothing again
 * (the same decision stands, not one made anew) */
START_TEST(test_reload_while_away_undone)
{
        Manager *m = new_manager("[Placement]\nApply=no\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-undo", 1, NULL);
        Wait w = {m, "m-undo"};
        VirtConn *conn_kept;
        int64_t decided;
        g_autoptr(CpuSet) was = NULL;
        g_autofree char *conf = NULL, *pins = NULL;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        decided = manager_lookup(m, "m-undo")->decided_usec;
        conn_kept = m->conn;
        m->conn = NULL;
        reload(m, "[Placement]\nMemoryBinding=no\n");
        reload(m, "[Placement]\nApply=no\nMemoryBinding=no\n");
        m->conn = conn_kept;
        manager_reload_pending(m);
        d = manager_lookup(m, "m-undo");
        ck_assert_msg(d->result == DECISION_ADVISORY && d->decided_usec == decided, "%s", d->reason);

        reload(m, "[Placement]\nMemoryBinding=no\n");
        d = manager_lookup(m, "m-undo");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        was = cpuset_copy(d->plan->vcpu_pins[0]);
        decided = d->decided_usec;
        pins = cpuset_format(was);
        conf = g_strdup_printf("[Placement]\nMemoryBinding=no\nReservedCPUs=%s\n", pins);
        m->conn = NULL;
        reload(m, conf);
        reload(m, "[Placement]\nMemoryBinding=no\n");
        m->conn = conn_kept;
        manager_reload_pending(m);
        d = manager_lookup(m, "m-undo");
        ck_assert_msg(d->result == DECISION_PLACED && cpuset_equal(d->plan->vcpu_pins[0], was) &&
                          d->decided_usec == decided,
                      "%s", d->reason);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* A domain found running on pins of its own after a restart (its record refused: pins changed by hand)
 * and unplaceable there: nothing is applied, and its pins are counted as they run, so a later domain is
 * not given its core as a free one */
START_TEST(test_unplaceable_after_restart_counts_live_pins)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-rv", 1, NULL);
        Wait w = {m, "m-rv"}, w2 = {m, "m-rv-later"};
        g_autofree char *error = NULL;
        virDomainPtr later;
        const Decision *d;
        int pu6;

        ck_assert(spin(known, &w, 3000));
        free_manager(m);
        ck_assert_int_eq(
            virDomainPinVcpuFlags(dom, 0, &(unsigned char){1u << 6}, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        m = new_manager("[Placement]\nMemoryBinding=no\nMemoryReserve=16G\n");
        w.m = m;
        w2.m = m;
        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-rv");
        pu6 = topology_pu_by_os(manager_topology(m), 6);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), (unsigned)pu6) == 1, "%s", d->reason);
        reload(m, "[Placement]\nMemoryBinding=no\n");
        later = start_domain("m-rv-later", 2, NULL);
        ck_assert(spin(known, &w2, 3000));
        d = manager_lookup(m, "m-rv-later");
        /* 3 cores are taken (the driver's own domain, m-rv): 2 vCPUs do not both get a free one */
        ck_assert_msg(d->result == DECISION_OVERCOMMITTED, "%s", d->reason);
        virDomainDestroy(later);
        virDomainFree(later);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_restart_adopts)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-db", 2, NULL);
        Wait w = {m, "m-db"};
        g_autoptr(Plan) before = NULL;

        ck_assert(spin(known, &w, 3000));
        before = plan_copy(manager_lookup(m, "m-db")->plan);
        free_manager(m);

        m = new_manager(NULL);
        w.m = m;
        ck_assert(known(&w));
        const Decision *d = manager_lookup(m, "m-db");
        ck_assert(d->adopted);
        ck_assert_int_eq(d->result, DECISION_PLACED);
        for (unsigned i = 0; i < before->nvcpus; i++) {
                ck_assert(cpuset_equal(d->plan->vcpu_pins[i], before->vcpu_pins[i]));
                ck_assert_int_eq(d->plan->vcpu_pu[i], before->vcpu_pu[i]);
        }
        fixture_assert_live_pins(dom, before);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)before->vcpu_pu[0]), 1);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_opt_outs)
{
        static const struct {
                const char *name, *extra, *needle;
        } cases[] = {
            {"m-pinned", "<cputune><vcpupin vcpu='0' cpuset='1'/></cputune>", "vcpupin"},
            {"m-meta", "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "' skip='yes'/></metadata>", "skip"},
            {"m-auto", NULL, "placement='auto'"},
        };
        Manager *m = new_manager(NULL);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                virDomainPtr dom;
                Wait w = {m, cases[i].name};
                if (i == 2) {
                        g_autofree char *xml = g_strdup_printf(
                            "<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu placement='auto'>2</vcpu><os><type>hvm</type></os></domain>",
                            cases[i].name);
                        dom = virDomainCreateXML(conn, xml, 0);
                        ck_assert_ptr_nonnull(dom);
                } else {
                        dom = start_domain(cases[i].name, 2, cases[i].extra);
                }
                ck_assert(spin(known, &w, 3000));
                const Decision *d = manager_lookup(m, cases[i].name);
                ck_assert_int_eq(d->result, DECISION_SKIPPED);
                ck_assert_msg(strstr(d->reason, cases[i].needle), "%s: %s", cases[i].name, d->reason);
                if (i == 0) { /* its definition's pin is what it runs on: counted, as it runs */
                        ck_assert_ptr_nonnull(d->plan);
                        ck_assert_int_eq(d->plan->result, PLAN_ADOPTED);
                        ck_assert(d->pinned_by_hand);
                        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), 1), 1);
                        ck_assert_msg(strstr(d->reason, "counted as they run"), "%s", d->reason);
                }
                /* without a plan the decision still says how big the domain is (show --json) */
                ck_assert_uint_eq(d->vcpus, 2);
                ck_assert_uint_eq(d->memory, 512u << 20);
                virDomainDestroy(dom);
                virDomainFree(dom);
        }
        free_manager(m);
}
END_TEST

/* A domain pinned by its definition is not placementd's to place, but its cores and memory are taken: a
 * later domain is never placed onto its CPUs as if they were free (the test driver's own domain fills
 * node 0; this one is pinned to a core of node 1, the next takes node 1's other core) */
START_TEST(test_definition_pins_are_taken)
{
        Manager *m = new_manager(NULL);
        virDomainPtr own =
            start_domain("m-own", 1,
                         "<cputune><vcpupin vcpu='0' cpuset='4'/>"
                         "</cputune><numatune><memory mode='strict' nodeset='1'/></numatune>");
        Wait w = {m, "m-own"}, w2 = {m, "m-next"};
        g_autoptr(CpuSet) taken = NULL;
        virDomainPtr next;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-own");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_ptr_nonnull(d->plan);
        ck_assert_uint_eq(d->plan->node_memory[1], 512u << 20); /* where its definition binds it */
        ck_assert_int_eq(cpuset_parse("4-5", &taken, NULL), 0);
        next = start_domain("m-next", 1, NULL);
        ck_assert(spin(known, &w2, 3000));
        d = manager_lookup(m, "m-next");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        for (unsigned i = 0; i < 1; i++) {
                g_autofree char *pins = cpuset_format(d->plan->vcpu_pins[i]);
                ck_assert_msg(!cpuset_intersects(d->plan->vcpu_pins[i], taken),
                              "m-next vCPU %u on %s, a core m-own's definition pins", i, pins);
        }
        virDomainDestroy(next);
        virDomainFree(next);
        virDomainDestroy(own);
        virDomainFree(own);
        free_manager(m);
}
END_TEST

/* An opted-out domain whose vCPUs float still holds the memory its definition binds: counted on the bound
 * node, no vCPU counted, not "pinned by hand" */
START_TEST(test_opted_out_bound_memory_counted)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom =
            start_domain("m-skipmem", 1,
                         "<numatune><memory mode='strict' nodeset='1'/></numatune><metadata><p:domain "
                         "xmlns:p='" PLACEMENTD_XMLNS "' skip='yes'/></metadata>");
        Wait w = {m, "m-skipmem"};
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-skipmem");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_ptr_nonnull(d->plan);
        ck_assert_uint_eq(d->plan->node_memory[1], 512u << 20);
        ck_assert_uint_eq(ledger_node_memory(manager_ledger(m), 1), 512u << 20);
        ck_assert(!d->pinned_by_hand);
        ck_assert_msg(strstr(d->reason, "its memory is counted where its definition binds it"), "%s",
                      d->reason);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* Found running at start, a domain pinned by its definition is counted before any other is placed: in
 * ID order the two unpinned ones come first, and node 0 is the test driver's own domain's, so without that
 * they took node 1's core 4-5, the one m-pin's definition pins, while core 6-7 stood free. */
START_TEST(test_pinned_counted_before_others_at_start)
{
        virDomainPtr a = start_domain("m-a", 1, NULL);
        virDomainPtr b = start_domain("m-b", 1, NULL);
        virDomainPtr pin = start_domain("m-pin", 1, "<cputune><vcpupin vcpu='0' cpuset='4'/></cputune>");
        Manager *m = new_manager(NULL);
        Wait w = {m, "m-pin"};
        g_autoptr(CpuSet) taken = NULL;
        const char *names[] = {"m-a", "m-b"};

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-pin")->result, DECISION_SKIPPED);
        ck_assert_int_eq(cpuset_parse("4-5", &taken, NULL), 0);
        for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
                const Decision *d = manager_lookup(m, names[i]);
                g_autofree char *pins = NULL;
                ck_assert_ptr_nonnull(d);
                ck_assert_ptr_nonnull(d->plan);
                pins = cpuset_format(d->plan->vcpu_pins[0]);
                ck_assert_msg(!cpuset_intersects(d->plan->vcpu_pins[0], taken),
                              "%s (%s) on %s, the core m-pin's definition pins", names[i],
                              decision_result_to_string(d->result), pins);
        }
        virDomainDestroy(a);
        virDomainFree(a);
        virDomainDestroy(b);
        virDomainFree(b);
        virDomainDestroy(pin);
        virDomainFree(pin);
        free_manager(m);
}
END_TEST

/* An opted-out domain whose owner re-pins a vCPU stays opted out: the reconcile counts its new pin, its
 * memory still where its definition binds it, and writes no record into it */
START_TEST(test_opted_out_repinned_stays_opted_out)
{
        Manager *m = new_manager(NULL);
        virDomainPtr own = start_domain("m-own", 1,
                                        "<cputune><vcpupin vcpu='0' cpuset='4'/></cputune><numatune><memory "
                                        "mode='strict' nodeset='1'/></numatune>");
        Wait w = {m, "m-own"};
        unsigned char map = 1u << 2; /* CPU 2, node 0 */
        g_autoptr(DomainSpec) spec = NULL;
        const Decision *d;

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(virDomainPinVcpuFlags(own, 0, &map, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "m-own");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_msg(strstr(d->reason, "pins vCPUs itself"), "%s", d->reason);
        ck_assert_ptr_nonnull(d->plan);
        ck_assert_int_eq(d->plan->vcpu_pu[0], 2); /* its new pin is counted */
        ck_assert_int_eq(ledger_lookup(manager_ledger(m), d->uuid)->vcpu_pu[0], 2);
        ck_assert_uint_eq(d->plan->node_memory[1], 512u << 20);
        ck_assert_uint_eq(d->plan->node_memory[0], 0);
        ck_assert_int_eq(virt_domain_read_spec(own, false, &spec, NULL), 0);
        ck_assert_msg(spec->decision == NULL, "placementd wrote its record into an opted-out domain");
        virDomainDestroy(own);
        virDomainFree(own);
        free_manager(m);
}
END_TEST

START_TEST(test_policy_per_domain)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom =
            start_domain("m-compat", 2,
                         "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "' policy='compat'/></metadata>");
        Wait w = {m, "m-compat"};

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-compat")->plan->policy, POLICY_COMPAT);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_advisory)
{
        Manager *m = new_manager("[Placement]\nApply=no\n");
        virDomainPtr dom = start_domain("m-advice", 2, NULL);
        Wait w = {m, "m-advice"};
        CpuSet **pins = NULL;
        g_autoptr(DomainSpec) spec = NULL;

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "m-advice");
        ck_assert_int_eq(d->result, DECISION_ADVISORY);
        ck_assert_int_eq(d->plan->result, PLAN_PLACED);
        /* nothing changed: still allowed on every CPU, no metadata */
        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, 2, NULL, &pins, NULL), 0);
        ck_assert_uint_eq(cpuset_count(pins[0]), 8);
        virt_pins_free(pins, 2);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_null(spec->decision);
        {
                /* what it publishes says the advice is not applied: the decision's JSON, and the map,
                 * which counts the advice where the domain runs unpinned */
                g_autofree char *json =
                    decisions_to_json(manager_topology(m), manager_ledger(m), &d, 1, FALSE, NULL, NULL);
                g_autofree char *map = manager_host_map(m), *map_json = manager_host_map_json(m);
                ck_assert_msg(strstr(json, "\"applied\":false"), "%s", json);
                ck_assert_msg(strstr(map, "\nadvised: m-advice is shown as advised (Apply=no), not applied: "
                                          "its vCPUs are not pinned\n"),
                              "%s", map);
                ck_assert_msg(strstr(map_json, "{\"domain\":\"m-advice\",\"shown\":\"advice\"}"), "%s",
                              map_json);
        }
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_pins_adopted)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-hand", 2, NULL);
        Wait w = {m, "m-hand"};
        unsigned char map = 1u << 7;

        ck_assert(spin(known, &w, 3000));
        /* someone pins vCPU 0 to CPU 7 (the test driver sends no tunable event: reconcile finds it) */
        ck_assert_int_eq(virDomainPinVcpuFlags(dom, 0, &map, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        const Decision *d = manager_lookup(m, "m-hand");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert(d->pinned_by_hand);
        ck_assert(cpuset_has(d->plan->vcpu_pins[0], 7));
        ck_assert_uint_eq(cpuset_count(d->plan->vcpu_pins[0]), 1);
        /* the ledger counts it on CPU 7, and it is not re-pinned */
        ck_assert_uint_eq(
            ledger_pu_load(manager_ledger(m), (unsigned)topology_pu_by_os(manager_topology(m), 7)), 1);
        manager_reconcile(m);
        ck_assert(cpuset_has(manager_lookup(m, "m-hand")->plan->vcpu_pins[0], 7));
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* What the manager holds of a placed domain after libvirtd went away in the middle of its apply: the pins
 * made so far stay on the domain, no record says they are placementd's, and the decision is forgotten.
 * With plan, the manager keeps it as the cut apply's. Then the reconcile after the reconnect runs. */
static const Decision *cut_off_and_reconcile(Manager *m, virDomainPtr dom, const char *name,
                                             const Plan *plan)
{
        char uuid[VIR_UUID_STRING_BUFLEN];

        ck_assert_int_eq(virDomainGetUUIDString(dom, uuid), 0);
        ck_assert_int_eq(virt_domain_set_metadata(dom, NULL, NULL), 0);
        placer_forget(m, uuid, "the connection was lost while it was being pinned (test)");
        ck_assert_ptr_null(manager_lookup(m, name));
        if (plan)
                interrupted_note(m, uuid, plan);
        manager_reconcile(m);
        ck_assert_uint_eq(g_hash_table_size(m->interrupted), 0); /* a kept plan is used once */
        ck_assert_ptr_nonnull(manager_lookup(m, name));
        return manager_lookup(m, name);
}

/* Places dom (named name, running) as usual, then cuts its apply off twice: without the plan kept (the
 * reconcile's verdict is returned in *ret_before) and with it, where it must be placed anew, recorded, and
 * pinned as planned. Returns the kept plan. */
static Plan *cut_off_twice(Manager *m, virDomainPtr dom, const char *name, DecisionResult *ret_before,
                           bool *ret_by_hand)
{
        Wait w = {m, name};
        g_autoptr(DomainSpec) live = NULL;
        const Decision *d;
        Plan *plan;

        ck_assert(spin(known, &w, 3000));
        plan = plan_copy(manager_lookup(m, name)->plan);
        d = cut_off_and_reconcile(m, dom, name, NULL);
        *ret_before = d->result;
        *ret_by_hand = d->pinned_by_hand;
        d = cut_off_and_reconcile(m, dom, name, plan);
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert(!d->pinned_by_hand);
        fixture_assert_live_pins(dom, d->plan);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &live, NULL), 0);
        ck_assert_ptr_nonnull(live->decision);
        return plan;
}

/* Seen on a real libvirtd killed during a burst of starts: after the reconnect the reconcile read the pins
 * an interrupted apply made in a transient domain's live definition as the user's, and never placed it. */
START_TEST(test_apply_cut_off_by_lost_connection)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-cut", 2, NULL);
        g_autoptr(Plan) plan = NULL;
        DecisionResult before;
        bool by_hand;

        plan = cut_off_twice(m, dom, "m-cut", &before, &by_hand);
        ck_assert_int_eq(before, DECISION_SKIPPED); /* "its definition pins vCPUs itself" */
        /* pins someone made since are not the plan's: taken as found */
        ck_assert_int_eq(
            virDomainPinVcpuFlags(dom, 0, &(unsigned char){1u << 7}, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        ck_assert_int_eq(cut_off_and_reconcile(m, dom, "m-cut", plan)->result, DECISION_SKIPPED);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* The same for a persistent domain: its inactive definition pins nothing, and the reconcile took the cut
 * apply's pins for someone else's ("already pinned when placementd found it", adopted half-made). */
START_TEST(test_apply_cut_off_persistent)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "m-cut-p", 2);
        g_autoptr(Plan) plan = NULL;
        DecisionResult before;
        bool by_hand;

        plan = cut_off_twice(m, dom, "m-cut-p", &before, &by_hand);
        ck_assert_int_eq(before, DECISION_SKIPPED);
        ck_assert(by_hand);
        virDomainDestroy(dom);
        virDomainUndefine(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_vanished_before_pin)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("m-gone", 2, NULL);
        Wait w = {m, "m-gone"};
        unsigned before;

        /* destroyed before the manager saw the event: placing the stale handle must clean up */
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        before = ledger_count(manager_ledger(m));
        placer_place(m, dom, ORIGIN_STARTED, 0);
        ck_assert(!known(&w));
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), before);
        spin(NULL, NULL, 50); /* the queued events are harmless */
        ck_assert(!known(&w));
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_plan_changes_nothing)
{
        Manager *m = new_manager(NULL);
        unsigned n = ledger_count(manager_ledger(m));
        g_autoptr(Plan) p = manager_plan(m, 2, UINT64_C(1) << 30);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(ledger_count(manager_ledger(m)), n);
        g_autofree char *status = manager_status(m);
        ck_assert_ptr_nonnull(strstr(status, "Connected to test:///default"));
        free_manager(m);
}
END_TEST

START_TEST(test_undefined_while_running)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "m-persist", 2);
        Wait w = {m, "m-persist"};

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(virDomainUndefine(dom), 0);
        spin(NULL, NULL, 100);
        /* it runs on, transient, and keeps its cores */
        ck_assert(known(&w));
        ck_assert_int_eq(manager_lookup(m, "m-persist")->result, DECISION_PLACED);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(spin(unknown, &w, 3000));
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_name_reused)
{
        Manager *m = new_manager(NULL);
        Wait w = {m, "m-again"};
        virDomainPtr first = start_domain("m-again", 2, NULL);
        char uuid1[VIR_UUID_STRING_BUFLEN], uuid2[VIR_UUID_STRING_BUFLEN];

        ck_assert(spin(known, &w, 3000));
        virt_domain_uuid(first, uuid1);
        ck_assert_int_eq(virDomainDestroy(first), 0);
        ck_assert(spin(unknown, &w, 3000));
        virDomainPtr second = start_domain("m-again", 1, NULL);
        virt_domain_uuid(second, uuid2);
        ck_assert_str_ne(uuid1, uuid2);
        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "m-again");
        ck_assert_str_eq(d->uuid, uuid2);
        ck_assert_uint_eq(d->plan->nvcpus, 1);
        ck_assert_ptr_null(manager_lookup(m, uuid1));
        virDomainDestroy(second);
        virDomainFree(first);
        virDomainFree(second);
        free_manager(m);
}
END_TEST

START_TEST(test_place_running_off)
{
        /* test:///default always runs a domain named "test" when the manager starts */
        Manager *m = new_manager("[Placement]\nPlaceRunning=no\n");
        const Decision *d = manager_lookup(m, "test");
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        ck_assert_ptr_nonnull(strstr(d->reason, "PlaceRunning=no"));
        free_manager(m);

        m = new_manager(NULL);
        ck_assert_int_eq(manager_lookup(m, "test")->result, DECISION_PLACED);
        free_manager(m);
}
END_TEST

START_TEST(test_memory_binding_off)
{
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\n");
        virDomainPtr dom = start_domain("m-nomem", 1, NULL);
        Wait w = {m, "m-nomem"};

        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(manager_lookup(m, "m-nomem")->memory_binding, MEMORY_BINDING_OFF);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* Cores (topology indexes) that hold vCPUs of more than one counted domain, and cores nobody holds. */
static void core_usage(Manager *m, unsigned *ret_shared, unsigned *ret_free)
{
        const Topology *t = manager_topology(m);
        unsigned shared = 0, idle = 0;
        for (unsigned c = 0; c < t->ncores; c++) {
                unsigned load = ledger_core_load(manager_ledger(m), c);
                shared += load >= 2;
                idle += load == 0;
        }
        *ret_shared = shared;
        *ret_free = idle;
}

START_TEST(test_rebalance_transient)
{
        /* "test" holds 2 cores; r-1..r-3 have the other 2, so two of them share one. Without memory
         * binding: memory placementd bound live cannot follow a domain to another node. */
        Manager *m = new_manager("[Placement]\nMemoryBinding=no\n");
        virDomainPtr doms[3];
        g_autofree char *report = NULL;
        unsigned shared, idle, moved;

        for (unsigned i = 0; i < 3; i++) {
                g_autofree char *name = g_strdup_printf("r-%u", i + 1);
                Wait w = {m, name};
                doms[i] = start_domain(name, 1, NULL);
                ck_assert(spin(known, &w, 3000));
        }
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 1);
        ck_assert_uint_eq(idle, 0);
        /* the one alone on its core goes: a core is free while two vCPUs still share one */
        for (unsigned i = 0; i < 3; i++) {
                const Plan *p = manager_lookup(m, virDomainGetName(doms[i]))->plan;
                if (ledger_core_load(manager_ledger(m), manager_topology(m)->pus[p->vcpu_pu[0]].core) == 1) {
                        Wait w = {m, virDomainGetName(doms[i])};
                        ck_assert_int_eq(virDomainDestroy(doms[i]), 0);
                        ck_assert(spin(unknown, &w, 3000));
                        break;
                }
        }
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 1);
        ck_assert_uint_eq(idle, 1);

        moved = manager_rebalance(m, 4, &report);
        ck_assert_msg(moved == 1, "%s", report);
        ck_assert_msg(strstr(report, "r-3: moved to node 1: "), "%s", report);
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 0);
        ck_assert_uint_eq(idle, 0);
        for (unsigned i = 0; i < 3; i++) {
                const Decision *d = manager_lookup(m, virDomainGetName(doms[i]));
                if (virDomainIsActive(doms[i]) == 1) {
                        ck_assert_msg(d->result == DECISION_PLACED, "%s: %s", d->name, d->reason);
                        fixture_assert_live_pins(doms[i], d->plan);
                        virDomainDestroy(doms[i]);
                }
                virDomainFree(doms[i]);
        }
        free_manager(m);
}
END_TEST

START_TEST(test_rebalance_nothing_better)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("r-alone", 1, NULL);
        Wait w = {m, "r-alone"};
        g_autofree char *report = NULL;

        ck_assert(spin(known, &w, 3000));
        ck_assert_uint_eq(manager_rebalance(m, 4, &report), 0);
        ck_assert_msg(strstr(report, "already has its best placement"), "%s", report);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_replace_transient_keeps_ownership)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("o-trans", 1, NULL);
        virDomainPtr mine = start_domain("o-mine", 1, "<cputune><vcpupin vcpu='0' cpuset='6'/></cputune>");
        Wait w = {m, "o-trans"}, w2 = {m, "o-mine"};
        g_autoptr(DomainSpec) spec = NULL;
        g_autoptr(DomainSpec) recorded = NULL;
        g_autofree char *error = NULL;

        ck_assert(spin(known, &w, 3000));
        ck_assert(spin(known, &w2, 3000));
        ck_assert_int_eq(manager_lookup(m, "o-trans")->result, DECISION_PLACED);
        ck_assert_int_eq(manager_lookup(m, "o-mine")->result, DECISION_SKIPPED);
        /* the user's definition as first seen is recorded beside the decision: no pins of its own */
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert(spec->has_vcpupin); /* placementd's own pin, in the live XML */
        ck_assert_ptr_nonnull(spec->definition);
        ck_assert_int_eq(domain_xml_parse_definition(spec->definition, &recorded, &error), 0);
        ck_assert(!recorded->has_vcpupin);
        ck_assert_uint_eq(recorded->max_vcpus, 1);

        /* placed again, its own pins are not the user's opt-out: still placed, still counted */
        for (unsigned round = 0; round < 2; round++) {
                ck_assert_int_eq(manager_replace(m, "o-trans", &error), 0);
                const Decision *d = manager_lookup(m, "o-trans");
                ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
                ck_assert_ptr_nonnull(ledger_lookup(manager_ledger(m), d->uuid));
                fixture_assert_live_pins(dom, d->plan);
                /* the user's own pin stays the user's */
                ck_assert_int_eq(manager_replace(m, "o-mine", &error), 0);
                ck_assert_int_eq(manager_lookup(m, "o-mine")->result, DECISION_SKIPPED);
                /* and the record survives a restart of the daemon */
                free_manager(m);
                m = new_manager(NULL);
        }
        virDomainDestroy(dom);
        virDomainDestroy(mine);
        virDomainFree(dom);
        virDomainFree(mine);
        free_manager(m);
}
END_TEST

START_TEST(test_restore_onto_taken_cores)
{
        /* "test" holds node 0; a is placed on node 1, saved; b takes its core; a comes back */
        Manager *m = new_manager(NULL);
        virDomainPtr a = start_domain("s-a", 1, NULL), b;
        Wait wa = {m, "s-a"}, wb = {m, "s-b"};
        g_autofree char *file =
            g_strdup_printf("%s/placementd-test-save-%d", g_get_tmp_dir(), (int)getpid());
        unsigned shared, idle;

        ck_assert(spin(known, &wa, 3000));
        ck_assert_int_eq(virDomainSave(a, file), 0);
        ck_assert(spin(unknown, &wa, 3000));
        b = start_domain("s-b", 1, NULL);
        ck_assert(spin(known, &wb, 3000));
        ck_assert_int_eq(virDomainRestore(conn, file), 0);
        ck_assert(spin(known, &wa, 3000));
        unlink(file);

        const Decision *d = manager_lookup(m, "s-a");
        ck_assert_msg(d->result == DECISION_PLACED && !d->adopted, "%s", d->reason);
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 0);
        virDomainFree(a);
        a = virDomainLookupByName(conn, "s-a");
        fixture_assert_live_pins(a, d->plan);
        fixture_assert_live_pins(b, manager_lookup(m, "s-b")->plan);
        virDomainDestroy(a);
        virDomainDestroy(b);
        virDomainFree(a);
        virDomainFree(b);
        free_manager(m);
}
END_TEST

/* Whether f-hostile and f-victim have no core in common. */
static bool apart(void *arg)
{
        Manager *m = arg;
        const Decision *a = manager_lookup(m, "f-hostile"), *b = manager_lookup(m, "f-victim");
        const Topology *t = manager_topology(m);

        if (!a || !b || !a->plan || !b->plan)
                return false;
        for (unsigned i = 0; i < a->plan->nvcpus; i++)
                for (unsigned j = 0; j < b->plan->nvcpus; j++)
                        if (a->plan->vcpu_pu[i] >= 0 && b->plan->vcpu_pu[j] >= 0 &&
                            t->pus[a->plan->vcpu_pu[i]].core == t->pus[b->plan->vcpu_pu[j]].core)
                                return false;
        return true;
}

/* At a restart, two records that claim one core (a domain owner wrote one: its own live pin moved onto
 * the other's core, its record made to say so) are both taken as what runs: neither domain is placed anew
 * because the other came first in ID order. The forger started first here, the lower ID. A core is free:
 * the clash is logged as a warning that names both domains. */
START_TEST(test_forged_record_does_not_evict)
{
        Manager *m = new_manager(NULL);
        virDomainPtr hostile = start_domain("f-hostile", 1, NULL);
        virDomainPtr victim = NULL;
        Wait wh = {m, "f-hostile"}, wv = {m, "f-victim"};
        g_autofree char *mine = NULL, *theirs = NULL, *forged = NULL, *logged = NULL;
        g_autoptr(GRegex) vcpu = g_regex_new("<([a-z]+:)?vcpu [^>]*/>", 0, 0, NULL);
        g_autoptr(GMatchInfo) match = NULL;
        g_autofree char *their_vcpu = NULL, *their_pins = NULL;
        g_autoptr(CpuSet) victim_pins = NULL;
        const Decision *d;
        unsigned char map = 0;

        ck_assert(spin(known, &wh, 3000));
        victim = start_domain("f-victim", 1, NULL);
        ck_assert(spin(known, &wv, 3000));
        victim_pins = cpuset_copy(manager_lookup(m, "f-victim")->plan->vcpu_pins[0]);
        ck_assert(!cpuset_intersects(victim_pins, manager_lookup(m, "f-hostile")->plan->vcpu_pins[0]));
        mine = virDomainGetMetadata(hostile, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS,
                                    VIR_DOMAIN_AFFECT_LIVE);
        theirs = virDomainGetMetadata(victim, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS,
                                      VIR_DOMAIN_AFFECT_LIVE);
        ck_assert(mine && theirs);
        free_manager(m);

        /* the forger: its record's vCPU entry (and nodes) the victim's, its live pin the victim's CPUs */
        ck_assert(g_regex_match(vcpu, theirs, 0, &match));
        their_vcpu = g_match_info_fetch(match, 0);
        forged = g_regex_replace_literal(vcpu, mine, -1, 0, their_vcpu, 0, NULL);
        CPUSET_FOREACH (cpu, victim_pins)
                map |= (unsigned char)(1u << cpu);
        ck_assert_int_eq(virDomainPinVcpuFlags(hostile, 0, &map, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        ck_assert_int_eq(virDomainSetMetadata(hostile, VIR_DOMAIN_METADATA_ELEMENT, forged, "p",
                                              PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                         0);

        m = new_manager_logged("[Placement]\nHealInterval=60\n", &logged);
        d = manager_lookup(m, "f-victim");
        ck_assert_ptr_nonnull(d);
        their_pins = cpuset_format(d->plan->vcpu_pins[0]);
        ck_assert_msg(d->adopted && cpuset_equal(d->plan->vcpu_pins[0], victim_pins),
                      "the victim was placed anew (on %s): %s\nforged: %s", their_pins, d->reason, forged);
        /* both stand, and the clash is said, naming both (a core is free) */
        ck_assert_msg(strstr(logged, "f-hostile and f-victim: their recorded decisions both claim core") &&
                          strstr(logged, "placementctl replace f-victim moves the later one"),
                      "%s", logged);
        /* and, as the warning says, heal ends the sharing without a request, at once: no departure comes to
         * start a pass, and the adoption is over */
        ck_assert_msg(spin(apart, m, 3000),
                      "f-hostile and f-victim still share a core 3 s after the restart");
        virDomainDestroy(victim);
        virDomainFree(victim);
        virDomainDestroy(hostile);
        virDomainFree(hostile);
        free_manager(m);
}
END_TEST

/* Memory nothing binds (MemoryBinding=no here; a definition's own preferred binding alike) is counted at a
 * restart where placementd counts such memory, with the domain's vCPUs, not where its record says: a
 * domain's owner who rewrote its record to put its memory on the other node would have the ledger count
 * that node full and its own node free, and the next domain bound where the memory really is. */
START_TEST(test_forged_record_moves_no_unbound_memory)
{
        static const char config[] = "[Placement]\nMemoryBinding=no\n";
        Manager *m = new_manager(config);
        virDomainPtr dom = start_domain("f-memory", 1, NULL);
        Wait w = {m, "f-memory"};
        g_autoptr(GRegex) memory = g_regex_new("(<([a-z]+:)?memory node=\")([0-9]+)\"", 0, 0, NULL);
        g_autofree char *mine = NULL, *forged = NULL, *other = NULL;
        const Decision *d;
        uint64_t before[2], after[2];
        unsigned own;

        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "f-memory");
        ck_assert(d->plan && cpuset_count(d->plan->nodes) == 1);
        own = (unsigned)cpuset_next(d->plan->nodes, 0);
        for (unsigned n = 0; n < 2; n++)
                before[n] = ledger_node_memory(manager_ledger(m), n);
        ck_assert_uint_ge(before[own], 512ull << 20);
        mine =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_ptr_nonnull(mine);
        free_manager(m);

        /* the same pins, its memory said to be on the other node */
        other = g_strdup_printf("\\g<1>%u\"", 1 - own);
        forged = g_regex_replace(memory, mine, -1, 0, other, 0, NULL);
        ck_assert_msg(forged && strcmp(forged, mine) != 0, "no memory entry in %s", mine);
        ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, forged, "p",
                                              PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE),
                         0);

        m = new_manager(config);
        d = manager_lookup(m, "f-memory");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(d->adopted, "not adopted: %s", d->reason);
        for (unsigned n = 0; n < 2; n++)
                after[n] = ledger_node_memory(manager_ledger(m), n);
        /* as before the restart: the other running domains are adopted as they were */
        ck_assert_msg(after[own] == before[own] && after[1 - own] == before[1 - own],
                      "node %u (its vCPUs') counts %llu bytes, %llu before; node %u %llu, %llu before\n"
                      "forged: %s",
                      own, (unsigned long long)after[own], (unsigned long long)before[own], 1 - own,
                      (unsigned long long)after[1 - own], (unsigned long long)before[1 - own], forged);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* The same at a start, under the default MemoryBinding=yes: a domain whose definition carries a record
 * (the owner wrote it with its <metadata>) and whose <vcpu cpuset> starts its vCPU where the record says is
 * adopted, nothing bound; its memory, which the record puts on the other node, is counted with its vCPU,
 * and the binding the record says was applied is not shown as applied. */
START_TEST(test_record_in_definition_moves_no_memory)
{
        Manager *m = new_manager(NULL);
        Wait w = {m, "f-defined"};
        static const char uuid[] = "8b0c3f0e-4a4e-4e0b-9a3c-2f6d1c5e7a10";
        g_autofree char *xml = g_strdup_printf(
            "<domain type='test'><name>f-defined</name><uuid>%s</uuid><memory unit='MiB'>512</memory>"
            "<vcpu cpuset='4-5'>1</vcpu><os><type>hvm</type></os><metadata>"
            "<p:domain xmlns:p='%s'><p:decision result='placed' policy='explicit' vcpu-pin='core' "
            "memory-binding='applied' uuid='%s' nodes='1' emulator=''><p:vcpu id='0' cpu='4' cpuset='4-5'/>"
            "<p:memory node='0' bytes='536870912'/><p:reason>placed</p:reason></p:decision></p:domain>"
            "</metadata></domain>",
            uuid, PLACEMENTD_XMLNS, uuid);
        virDomainPtr dom = NULL;
        uint64_t before[2];
        const Decision *d;

        for (unsigned n = 0; n < 2; n++)
                before[n] = ledger_node_memory(manager_ledger(m), n);
        dom = virDomainDefineXML(conn, xml);
        ck_assert_msg(dom && virDomainCreate(dom) == 0, "cannot start f-defined");
        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "f-defined");
        /* wherever it is placed or adopted, its memory is counted on node 1, where its vCPU runs */
        ck_assert_msg(ledger_node_memory(manager_ledger(m), 0) == before[0] &&
                          ledger_node_memory(manager_ledger(m), 1) == before[1] + (512ull << 20),
                      "node 0 counts %llu bytes (%llu before), node 1 %llu (%llu before): %s",
                      (unsigned long long)ledger_node_memory(manager_ledger(m), 0),
                      (unsigned long long)before[0],
                      (unsigned long long)ledger_node_memory(manager_ledger(m), 1),
                      (unsigned long long)before[1], d->reason);
        /* and nothing binds its memory: the record's word that a binding was applied is not repeated */
        ck_assert_msg(d->memory_binding != MEMORY_BINDING_APPLIED &&
                          d->memory_binding != MEMORY_BINDING_KEPT,
                      "memory binding '%s', where none runs", memory_binding_to_string(d->memory_binding));
        virDomainDestroy(dom);
        virDomainUndefine(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_unreadable_record_placed_anew)
{
        /* a record the parser cannot read drops the record, never the domain */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain(
            "u-bad", 1,
            "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "'><p:decision result='placed' "
            "policy='explicit' vcpu-pin='core' nodes='0'><p:vcpu id='0' cpu='99999' cpuset='0'/>"
            "</p:decision></p:domain></metadata>");
        Wait w = {m, "u-bad"};
        g_autoptr(DomainSpec) spec = NULL;

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "u-bad");
        ck_assert_msg(d->result == DECISION_PLACED && !d->adopted, "%s", d->reason);
        ck_assert_ptr_nonnull(ledger_lookup(manager_ledger(m), d->uuid));
        fixture_assert_live_pins(dom, d->plan);
        /* and the record is readable again */
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_null(spec->decision_error);
        ck_assert_ptr_nonnull(spec->decision);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_defined_from_live_xml)
{
        /* a persistent definition made from a transient domain's live XML carries placementd's pins
         * and its record: the record tells they are placementd's, not the user's opt-out */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("p-live", 1, NULL), other, persistent;
        Wait w = {m, "p-live"}, wo = {m, "p-other"};
        char *xml;
        unsigned shared, idle;

        ck_assert(spin(known, &w, 3000));
        xml = virDomainGetXMLDesc(dom, 0);
        ck_assert_int_eq(virDomainDestroy(dom), 0);
        ck_assert(spin(unknown, &w, 3000));
        other = start_domain("p-other", 1, NULL); /* takes the core the record names */
        ck_assert(spin(known, &wo, 3000));
        persistent = virDomainDefineXML(conn, xml);
        free(xml);
        ck_assert_ptr_nonnull(persistent);
        ck_assert_int_eq(virDomainCreate(persistent), 0);
        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "p-live");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 0);
        fixture_assert_live_pins(persistent, d->plan);
        virDomainDestroy(persistent);
        virDomainUndefine(persistent);
        virDomainDestroy(other);
        virDomainFree(dom);
        virDomainFree(other);
        virDomainFree(persistent);
        free_manager(m);
}
END_TEST

START_TEST(test_failed_pin_recorded)
{
        /* 16 CPUs where the test driver has 8: "test" holds 2 cores of node 0, f gets the other 2
         * there and 4 on node 1, whose pins the driver takes and does not apply */
        Manager *m = new_manager_on("synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:4 pu:2", NULL);
        virDomainPtr dom = start_domain("f-half", 6, NULL);
        Wait w = {m, "f-half"};
        g_autoptr(DomainSpec) spec = NULL;
        g_autofree char *text = NULL;
        unsigned counts[_DECISION_RESULT_MAX];

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "f-half");
        ck_assert_msg(d->result == DECISION_FAILED, "%s", decision_result_to_string(d->result));
        ck_assert_ptr_nonnull(d->apply_error);
        /* the rest of the apply went on: the memory binding was attempted */
        ck_assert_int_ne(d->memory_binding, MEMORY_BINDING_NONE);
        /* what the ledger holds is what runs */
        fixture_assert_live_pins(dom, d->plan);
        ck_assert_ptr_nonnull(ledger_lookup(manager_ledger(m), d->uuid));
        for (unsigned i = 0; i < d->plan->nvcpus; i++)
                ck_assert(cpuset_equal(ledger_lookup(manager_ledger(m), d->uuid)->vcpu_pins[i],
                                       d->plan->vcpu_pins[i]));
        /* and it says so: counts, the record */
        manager_count(m, counts);
        ck_assert_uint_eq(counts[DECISION_FAILED], 1);
        ck_assert_int_eq(virt_domain_read_spec(dom, false, &spec, NULL), 0);
        ck_assert_ptr_nonnull(spec->decision);
        ck_assert_str_eq(spec->decision->result, "failed");
        text = manager_status(m);
        ck_assert_ptr_nonnull(strstr(text, "1 failed"));
        /* a restart does not adopt a failed apply as placed: it tries again */
        free_manager(m);
        m = new_manager_on("synthetic:pack:2 numa:1(memory=16GiB) l3:1 core:4 pu:2", NULL);
        ck_assert_int_eq(manager_lookup(m, "f-half")->result, DECISION_FAILED);
        ck_assert(!manager_lookup(m, "f-half")->adopted);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* vCPUs of the domain the ledger counts (placed on a PU). */
static unsigned counted_vcpus(Manager *m, const char *uuid)
{
        const Plan *p = ledger_lookup(manager_ledger(m), uuid);
        unsigned n = 0;
        for (unsigned i = 0; p && i < p->nvcpus; i++)
                n += p->vcpu_pu[i] >= 0;
        return n;
}

START_TEST(test_vcpu_hotplug)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = virDomainCreateXML(conn,
                                              "<domain type='test'><name>h-grow</name>"
                                              "<memory unit='MiB'>512</memory><vcpu current='1'>2</vcpu>"
                                              "<os><type>hvm</type></os></domain>",
                                              0);
        Wait w = {m, "h-grow"};
        unsigned shared, idle;

        ck_assert_ptr_nonnull(dom);
        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "h-grow");
        ck_assert_uint_eq(d->plan->nvcpus, 1);
        char uuid[VIR_UUID_STRING_BUFLEN];
        virt_domain_uuid(dom, uuid);

        /* hot-add: the new vCPU gets a core of its own (the reconcile finds it; the driver sends no event)
         */
        ck_assert_int_eq(virDomainSetVcpusFlags(dom, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "h-grow");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        ck_assert_uint_eq(counted_vcpus(m, uuid), 2);
        fixture_assert_live_pins(dom, d->plan);
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 0);

        /* after a restart it is adopted as placementd's own, not "already pinned" */
        free_manager(m);
        m = new_manager(NULL);
        d = manager_lookup(m, "h-grow");
        ck_assert_msg(d->result == DECISION_PLACED && d->adopted, "%s", d->reason);
        ck_assert_uint_eq(d->plan->nvcpus, 2);

        /* unplug: its core is given back */
        ck_assert_int_eq(virDomainSetVcpusFlags(dom, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "h-grow");
        ck_assert_uint_eq(d->plan->nvcpus, 1);
        ck_assert_uint_eq(counted_vcpus(m, uuid), 1);
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(idle, 1);
        /* nothing changed: the next reconcile leaves it be */
        manager_reconcile(m);
        ck_assert_ptr_eq(manager_lookup(m, "h-grow"), d);

        /* hot-added while the daemon was away: its own pin on vCPU 0 is not someone else's */
        free_manager(m);
        ck_assert_int_eq(virDomainSetVcpusFlags(dom, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        m = new_manager(NULL);
        d = manager_lookup(m, "h-grow");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert_uint_eq(d->plan->nvcpus, 2);
        fixture_assert_live_pins(dom, d->plan);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_memory_counts_maximum)
{
        /* the balloon target is not what the guest can use: <memory> is counted */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("h-mem", 1, "<currentMemory unit='MiB'>128</currentMemory>");
        Wait w = {m, "h-mem"};

        ck_assert(spin(known, &w, 3000));
        const Decision *d = manager_lookup(m, "h-mem");
        ck_assert_uint_eq(d->plan->memory, UINT64_C(512) << 20);
        /* a balloon change is no reason to move it */
        ck_assert_int_eq(virDomainSetMemoryFlags(dom, 256 * 1024, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert_ptr_eq(manager_lookup(m, "h-mem"), d);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_record_without_definition)
{
        /* recorded before the definition was: live pins equal to the record are placementd's own;
         * a live pin the record does not explain is the user's */
        static const struct {
                const char *name, *pin, *definition;
                DecisionResult after;
        } cases[] = {
            {"l-old", "4-5", "", DECISION_PLACED},
            {"l-bad", "4-5", "<p:definition>&lt;domain&gt;&lt;vcpu&gt;</p:definition>", DECISION_PLACED},
            {"l-user", "6-7", "", DECISION_SKIPPED},
        };
        Manager *m = new_manager(NULL);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *extra = g_strdup_printf(
                    "<cputune><vcpupin vcpu='0' cpuset='%s'/></cputune><metadata><p:domain "
                    "xmlns:p='" PLACEMENTD_XMLNS
                    "'>%s<p:decision result='placed' policy='explicit' vcpu-pin='core' nodes='1'>"
                    "<p:vcpu id='0' cpu='4' cpuset='4-5'/><p:memory node='1' "
                    "bytes='536870912'/></p:decision></p:domain></metadata>",
                    cases[i].pin, cases[i].definition);
                virDomainPtr dom = start_domain(cases[i].name, 1, extra);
                Wait w = {m, cases[i].name};
                g_autofree char *error = NULL;

                ck_assert(spin(known, &w, 3000));
                ck_assert_int_eq(manager_replace(m, cases[i].name, &error), 0);
                const Decision *d = manager_lookup(m, cases[i].name);
                ck_assert_msg(d->result == cases[i].after, "%s: %s", cases[i].name, d->reason);
                virDomainDestroy(dom);
                ck_assert(spin(unknown, &w, 3000));
                virDomainFree(dom);
        }
        free_manager(m);
}
END_TEST

START_TEST(test_names_as_libvirt_has_them)
{
        /* "n-web " is another domain than "n-web" (libvirt takes both): XML reading trimmed it, and a
         * lookup of n-web found whichever came first; a carriage return stays one too */
        Manager *m = new_manager(NULL);
        virDomainPtr a = start_domain("n-web", 1, NULL), b = start_domain("n-web ", 2, NULL),
                     c = start_domain("n-cr&#13;lf", 1, NULL);
        Wait wa = {m, "n-web"}, wb = {m, "n-web "}, wc = {m, "n-cr\rlf"};

        ck_assert(spin(known, &wa, 3000));
        ck_assert(spin(known, &wb, 3000));
        ck_assert(spin(known, &wc, 3000));
        ck_assert_uint_eq(manager_lookup(m, "n-web")->plan->requested_vcpus, 1);
        ck_assert_uint_eq(manager_lookup(m, "n-web ")->plan->requested_vcpus, 2);
        ck_assert_ptr_null(manager_lookup(m, "n-cr\nlf"));
        for (virDomainPtr *d = (virDomainPtr[]){a, b, c, NULL}; *d; d++) {
                virDomainDestroy(*d);
                virDomainFree(*d);
        }
        free_manager(m);
}
END_TEST

START_TEST(test_restart_before_its_events_is_a_new_run)
{
        /* stopped and started again just before a reconcile, its STOPPED and STARTED events not yet read:
         * the new run (another libvirt ID, libvirt's default pins) is placed, not taken for the old one
         * with its pins changed by hand (it was then "skipped, pinned by hand" for good) */
        Manager *m = new_manager(NULL);
        virDomainPtr a = fixture_define_and_start(conn, "r-again", 2);
        Wait w = {m, "r-again"};
        const Decision *d;
        unsigned first;

        ck_assert(spin(known, &w, 3000));
        first = manager_lookup(m, "r-again")->domain_id;
        ck_assert_uint_gt(first, 0);
        ck_assert_int_eq(virDomainDestroy(a), 0);
        ck_assert_int_eq(virDomainCreate(a), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "r-again");
        ck_assert_msg(d && d->result == DECISION_PLACED && !d->pinned_by_hand, "%s", d ? d->reason : "gone");
        ck_assert_uint_ne(d->domain_id, first);
        fixture_assert_live_pins(a, d->plan);
        /* the late events change nothing of that */
        for (unsigned i = 0; i < 300; i++) {
                struct timespec nap = {0, 1000000};
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        d = manager_lookup(m, "r-again");
        ck_assert_msg(d && d->result == DECISION_PLACED && !d->pinned_by_hand, "%s", d ? d->reason : "gone");
        virDomainDestroy(a);
        virDomainUndefine(a);
        virDomainFree(a);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_pinned_hot_add_counted)
{
        /* a domain pinned by hand gets a vCPU hot-added and pinned by hand too: the reconcile adopts it
         * as it runs, both vCPUs counted (the new one was never counted, and a new domain took its core) */
        Manager *m = new_manager(NULL);
        virDomainPtr a =
            virDomainDefineXML(conn, "<domain type='test'><name>hp-grow</name><memory unit='MiB'>512"
                                     "</memory><vcpu current='1'>2</vcpu><os><type>hvm</type></os>"
                                     "</domain>");
        Wait w = {m, "hp-grow"};
        unsigned char cpu0 = 1u << 0, cpu6 = 1u << 6;
        const Decision *d;

        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(virDomainCreate(a), 0);
        ck_assert(spin(known, &w, 3000));
        ck_assert_int_eq(virDomainPinVcpuFlags(a, 0, &cpu0, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "hp-grow");
        ck_assert_msg(d->pinned_by_hand && d->plan->nvcpus == 1, "%s", d->reason);
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        ck_assert_int_eq(virDomainPinVcpuFlags(a, 1, &cpu6, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "hp-grow");
        ck_assert_msg(d->pinned_by_hand && d->plan->nvcpus == 2, "%s", d->reason);
        ck_assert_uint_eq(ledger_core_load(manager_ledger(m), manager_topology(m)->pus[6].core), 1);
        virDomainDestroy(a);
        virDomainUndefine(a);
        virDomainFree(a);
        free_manager(m);
}
END_TEST

#define UUID_NEW "a0000000-0000-4000-8000-000000000001"
#define UUID_REC "a0000000-0000-4000-8000-000000000002"

START_TEST(test_restart_adopts_records_first)
{
        /* while the daemon is away, a-new (no record) starts beside a-rec, which records the core a-new
         * would get (UUIDs chosen so that the driver lists a-new first): the restarted daemon adopts
         * a-rec and gives a-new another core, nothing moves */
        virDomainPtr fresh = start_domain("a-new", 1, "<uuid>" UUID_NEW "</uuid>");
        virDomainPtr recorded = start_domain(
            "a-rec", 1,
            "<uuid>" UUID_REC
            "</uuid><cputune><vcpupin vcpu='0' cpuset='0-1'/></cputune><metadata><p:domain "
            "xmlns:p='" PLACEMENTD_XMLNS
            "'><p:definition>&lt;domain&gt;&lt;vcpu&gt;1&lt;/vcpu&gt;&lt;/domain&gt;</p:definition>"
            "<p:decision result='placed' policy='explicit' vcpu-pin='core' nodes='0'>"
            "<p:vcpu id='0' cpu='0' cpuset='0-1'/><p:memory node='0' bytes='536870912'/></p:decision>"
            "</p:domain></metadata>");
        Manager *m = new_manager(NULL);
        unsigned shared, idle;

        const Decision *d = manager_lookup(m, "a-rec");
        ck_assert_msg(d->result == DECISION_PLACED && d->adopted, "%s", d->reason);
        ck_assert(cpuset_has(d->plan->vcpu_pins[0], 0));
        ck_assert_int_eq(manager_lookup(m, "a-new")->result, DECISION_PLACED);
        core_usage(m, &shared, &idle);
        ck_assert_uint_eq(shared, 0);
        virDomainDestroy(fresh);
        virDomainDestroy(recorded);
        virDomainFree(fresh);
        virDomainFree(recorded);
        free_manager(m);
}
END_TEST

START_TEST(test_persistent_definition_wins_over_snapshot)
{
        /* a persistent definition carries a snapshot (it was made from live XML) and then was edited:
         * the opt-outs it has now stand; the snapshot only tells placementd's own recorded pins apart */
        static const struct {
                const char *name, *vcpu, *cputune;
                DecisionResult want;
        } cases[] = {
            {"s-pins", "<vcpu>1</vcpu>", "<cputune><vcpupin vcpu='0' cpuset='6-7'/></cputune>",
             DECISION_SKIPPED},
            {"s-auto", "<vcpu placement='auto'>1</vcpu>", "", DECISION_SKIPPED},
            {"s-own", "<vcpu>1</vcpu>", "<cputune><vcpupin vcpu='0' cpuset='4-5'/></cputune>",
             DECISION_PLACED},
        };
        Manager *m = new_manager(NULL);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>%s"
                    "<os><type>hvm</type></os>%s<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "'>"
                    "<p:definition>&lt;domain&gt;&lt;vcpu&gt;1&lt;/vcpu&gt;&lt;/domain&gt;</p:definition>"
                    "<p:decision result='placed' policy='explicit' vcpu-pin='core' nodes='1'>"
                    "<p:vcpu id='0' cpu='4' cpuset='4-5'/><p:memory node='1' "
                    "bytes='536870912'/></p:decision></p:domain></metadata></domain>",
                    cases[i].name, cases[i].vcpu, cases[i].cputune);
                virDomainPtr dom = virDomainDefineXML(conn, xml);
                Wait w = {m, cases[i].name};
                g_autofree char *error = NULL;

                ck_assert_ptr_nonnull(dom);
                ck_assert_int_eq(virDomainCreate(dom), 0);
                ck_assert(spin(known, &w, 3000));
                /* a re-placement reads the definition again, whatever the record */
                ck_assert_int_eq(manager_replace(m, cases[i].name, &error), 0);
                const Decision *d = manager_lookup(m, cases[i].name);
                ck_assert_msg(d->result == cases[i].want, "%s: %s", cases[i].name, d->reason);
                virDomainDestroy(dom);
                virDomainUndefine(dom);
                ck_assert(spin(unknown, &w, 3000));
                virDomainFree(dom);
        }
        free_manager(m);
}
END_TEST

typedef struct {
        char uuid[VIR_UUID_STRING_BUFLEN];
        bool forgotten;
} Forgotten;

static void note_forgotten(Manager *m, const Decision *d, const char *uuid, const char *name, void *userdata)
{
        Forgotten *f = userdata;
        (void)m;
        (void)name;
        if (d)
                return;
        g_strlcpy(f->uuid, uuid, sizeof(f->uuid));
        f->forgotten = true;
}

START_TEST(test_replace_gone_reports_its_uuid)
{
        /* replace finds the domain gone before its stop event: the forgotten domain is announced with
         * its own UUID, read before its decision is freed */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("g-gone", 1, NULL);
        Wait w = {m, "g-gone"};
        char uuid[VIR_UUID_STRING_BUFLEN];
        Forgotten f = {.forgotten = false};
        g_autofree char *error = NULL;

        ck_assert(spin(known, &w, 3000));
        virt_domain_uuid(dom, uuid);
        manager_set_callbacks(m, &(ManagerCallbacks){.decision_changed = note_forgotten}, &f);
        ck_assert_int_eq(virDomainDestroy(dom), 0); /* its event not delivered yet */
        ck_assert_int_eq(manager_replace(m, "g-gone", &error), -ENOENT);
        ck_assert(f.forgotten);
        ck_assert_str_eq(f.uuid, uuid);
        ck_assert_ptr_null(manager_lookup(m, "g-gone"));
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

static void count_decisions(Manager *m, const Decision *d, const char *uuid, const char *name,
                            void *userdata)
{
        (void)m;
        (void)uuid;
        (void)name;
        if (d)
                (*(unsigned *)userdata)++;
}

START_TEST(test_reconcile_before_start_event)
{
        /* a reconcile that runs before a domain's start event places it; the event then changes nothing
         * and announces nothing (each start is placed once) */
        Manager *m = new_manager(NULL);
        virDomainPtr dom;
        unsigned decisions = 0;

        manager_set_callbacks(m, &(ManagerCallbacks){.decision_changed = count_decisions}, &decisions);
        dom = start_domain("r-early", 1, NULL); /* its event not delivered yet */
        manager_reconcile(m);
        ck_assert_uint_eq(decisions, 1);
        spin(NULL, NULL, 200);
        ck_assert_uint_eq(decisions, 1);
        ck_assert_int_eq(manager_lookup(m, "r-early")->result, DECISION_PLACED);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* Runs the loop until name's decision has result want (up to 3 s). */
static bool spin_result(Manager *m, const char *name, DecisionResult want)
{
        for (unsigned i = 0; i < 3000; i++) {
                const Decision *d = manager_lookup(m, name);
                if (d && d->result == want)
                        return true;
                spin(NULL, NULL, 1);
        }
        return false;
}

/* Defines a 1-vCPU domain of 512 MiB, not started. */
static virDomainPtr define_small(const char *name)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu>1</vcpu><os><type>hvm</type></os></domain>",
                            name);

        return virDomainDefineXML(conn, xml);
}

/* Opted out while it runs (virsh metadata, as an operator does): skipped at once, its pins counted as they
 * run, not at its next start. A transient domain's live opt-out counts; a persistent domain's definition
 * says, and its opt-out removed there, it is placed again. */
START_TEST(test_opt_out_while_running_followed)
{
        Manager *m = new_manager(NULL);
        virDomainPtr live = start_domain("o-live", 1, NULL);
        virDomainPtr cfg = define_small("o-cfg");
        const Decision *d;

        ck_assert(spin_result(m, "o-live", DECISION_PLACED));
        set_element(live, "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_LIVE);
        ck_assert(spin_result(m, "o-live", DECISION_SKIPPED));
        d = manager_lookup(m, "o-live");
        ck_assert_msg(g_str_has_prefix(d->reason, "opted out"), "%s", d->reason);
        /* the owner's opt-in replaces placementd's whole element, its record of the definition too: the
         * pins placementd made before the opt-out are still its own, not the definition's */
        set_element(live, "<domain skip='no'/>", VIR_DOMAIN_AFFECT_LIVE);
        ck_assert(spin_result(m, "o-live", DECISION_PLACED));
        d = manager_lookup(m, "o-live");
        ck_assert_msg(!g_str_has_prefix(d->reason, "opted out"), "%s", d->reason);
        /* an opt-in that says more (a policy) is the owner's word: the record written back keeps it, and the
         * domain is placed again under that policy */
        set_element(live, "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_LIVE);
        ck_assert(spin_result(m, "o-live", DECISION_SKIPPED));
        set_element(live, "<domain skip='no' policy='compat'/>", VIR_DOMAIN_AFFECT_LIVE);
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        {
                g_autofree char *element = virDomainGetMetadata(live, VIR_DOMAIN_METADATA_ELEMENT,
                                                                PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
                ck_assert_msg(element && strstr(element, "compat"), "%s", element);
        }
        ck_assert(spin_result(m, "o-live", DECISION_PLACED));
        d = manager_lookup(m, "o-live");
        ck_assert_msg(d->plan->policy == POLICY_COMPAT, "%s", d->reason);

        ck_assert_ptr_nonnull(cfg);
        ck_assert_int_eq(virDomainCreate(cfg), 0);
        ck_assert(spin_result(m, "o-cfg", DECISION_PLACED));
        set_element(cfg, "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_CONFIG);
        ck_assert(spin_result(m, "o-cfg", DECISION_SKIPPED));
        set_element(cfg, NULL, VIR_DOMAIN_AFFECT_CONFIG);
        ck_assert(spin_result(m, "o-cfg", DECISION_PLACED));
        d = manager_lookup(m, "o-cfg");
        ck_assert_msg(!g_str_has_prefix(d->reason, "opted out"), "%s", d->reason);
        virDomainDestroy(live);
        virDomainFree(live);
        virDomainDestroy(cfg);
        virDomainUndefine(cfg);
        virDomainFree(cfg);
        free_manager(m);
}
END_TEST

/* Whether dom's live element of placementd's namespace holds a decision and, unless NULL, says also. */
static bool live_record_says(virDomainPtr dom, const char *also)
{
        g_autofree char *element =
            virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);

        return element && strstr(element, "<decision") && (!also || strstr(element, also));
}

/* placementd's element written over (the owner's policy for a transient domain, the documented way) or
 * removed while the domain runs: the record goes with it, and with a transient domain's the record of its
 * user's definition. placementd writes its record back, keeping the owner's attributes, so that its own pins
 * do not read as the definition's <vcpupin> (skipped for good) and a restart adopts the domain. */
START_TEST(test_record_removed_while_running_written_back)
{
        Manager *m = new_manager(NULL);
        virDomainPtr live = start_domain("r-live", 1, NULL);
        virDomainPtr cfg = define_small("r-cfg");
        const Decision *d;

        ck_assert(spin_result(m, "r-live", DECISION_PLACED));
        set_element(live, "<domain policy='compat'/>", VIR_DOMAIN_AFFECT_LIVE);
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        d = manager_lookup(m, "r-live");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert(live_record_says(live, "policy=\"compat\""));
        /* the owner's policy is read at its next placement */
        ck_assert_int_eq(manager_replace(m, "r-live", NULL), 0);
        d = manager_lookup(m, "r-live");
        ck_assert_msg(d->result == DECISION_PLACED && d->plan->policy == POLICY_COMPAT, "%s", d->reason);
        set_element(live, NULL, VIR_DOMAIN_AFFECT_LIVE);
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        d = manager_lookup(m, "r-live");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert(live_record_says(live, NULL));

        ck_assert_ptr_nonnull(cfg);
        ck_assert_int_eq(virDomainCreate(cfg), 0);
        ck_assert(spin_result(m, "r-cfg", DECISION_PLACED));
        /* a restart: the records adopted are written back as well */
        free_manager(m);
        m = new_manager(NULL);
        d = manager_lookup(m, "r-cfg");
        ck_assert_msg(d && d->adopted, "%s", d ? d->reason : "not known");
        set_element(cfg, NULL, VIR_DOMAIN_AFFECT_LIVE);
        set_element(live, NULL, VIR_DOMAIN_AFFECT_LIVE);
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert(live_record_says(cfg, NULL));
        ck_assert(live_record_says(live, NULL));
        d = manager_lookup(m, "r-live");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        free_manager(m);
        m = new_manager(NULL);
        d = manager_lookup(m, "r-cfg");
        ck_assert_msg(d && d->result == DECISION_PLACED && d->adopted, "%s", d ? d->reason : "not known");
        d = manager_lookup(m, "r-live");
        ck_assert_msg(d && d->result == DECISION_PLACED && d->adopted, "%s", d ? d->reason : "not known");
        /* a live skip='yes' on a persistent domain (virsh metadata without --config) is no opt-out, its
         * definition says: the record is written back beside it, so that a restarted daemon adopts the
         * domain as the running one keeps it, not as "already pinned" */
        set_element(cfg, "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_LIVE);
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        d = manager_lookup(m, "r-cfg");
        ck_assert_msg(d->result == DECISION_PLACED, "%s", d->reason);
        ck_assert(live_record_says(cfg, "skip=\"yes\""));
        free_manager(m);
        m = new_manager(NULL);
        d = manager_lookup(m, "r-cfg");
        ck_assert_msg(d && d->result == DECISION_PLACED && d->adopted, "%s", d ? d->reason : "not known");
        ck_assert(live_record_says(cfg, "skip=\"yes\""));
        virDomainDestroy(live);
        virDomainFree(live);
        virDomainDestroy(cfg);
        virDomainUndefine(cfg);
        virDomainFree(cfg);
        free_manager(m);
}
END_TEST

/* Floated by hand (every vCPU pinned to every CPU) and then opted out while it runs: nothing of its vCPUs
 * is left to count, but placementd's emulator pin and memory binding still run. */
START_TEST(test_floating_opt_out_keeps_what_runs)
{
        Manager *m = new_manager_on("synthetic:pack:1 numa:2(memory=8GiB) core:2 pu:2", NULL);
        virDomainPtr dom = start_domain("o-float", 1, NULL);
        unsigned char all = 0xff;
        g_autoptr(CpuSet) emulator = NULL;
        const Decision *d;
        const Plan *counted;
        uint64_t bound_before;
        int node;

        ck_assert(spin_result(m, "o-float", DECISION_PLACED));
        d = manager_lookup(m, "o-float");
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        node = cpuset_next(d->plan->nodes, 0);
        emulator = cpuset_copy(d->plan->emulator_pin);
        ck_assert(!cpuset_is_empty(emulator));
        bound_before = ledger_lookup(manager_ledger(m), d->uuid)->node_memory[node];
        ck_assert_uint_gt(bound_before, 0);
        ck_assert_int_eq(virDomainPinVcpuFlags(dom, 0, &all, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        set_element(dom, "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_LIVE);
        ck_assert(spin_result(m, "o-float", DECISION_SKIPPED));
        manager_reconcile(m);
        d = manager_lookup(m, "o-float");
        ck_assert_int_eq(d->result, DECISION_SKIPPED);
        counted = ledger_lookup(manager_ledger(m), d->uuid);
        ck_assert_ptr_nonnull(counted);
        /* the memory stays counted where placementd's binding keeps it */
        ck_assert_uint_eq(counted->node_memory[node], bound_before);
        ck_assert_msg(d->plan && cpuset_equal(d->plan->emulator_pin, emulator),
                      "the emulator pin that runs");
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* A running persistent domain opted out in its persistent definition (virsh metadata --config, or a
 * <vcpupin> put there by virsh vcpupin --config or virsh edit) keeps the record placementd wrote in its
 * live XML before. A restarted daemon reads the user's definition over that record, as placer_place()
 * does: the domain stays skipped, not adopted as placed. */
START_TEST(test_opt_out_in_definition_outlives_restart)
{
        static const char *const names[] = {"o-meta", "o-pin"};
        Manager *m = new_manager(NULL);
        virDomainPtr doms[G_N_ELEMENTS(names)];
        g_autofree char *error = NULL;

        for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
                doms[i] = fixture_define_and_start(conn, names[i], 1);
                ck_assert(spin_result(m, names[i], DECISION_PLACED));
        }
        set_element(doms[0], "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_CONFIG);
        ck_assert(spin_result(m, "o-meta", DECISION_SKIPPED));
        {
                g_autofree char *cfg = virDomainGetXMLDesc(doms[1], VIR_DOMAIN_XML_INACTIVE);
                const char *os = cfg ? strstr(cfg, "<os>") : NULL;
                g_autofree char *pinned = NULL;
                virDomainPtr again;

                ck_assert_ptr_nonnull(os);
                pinned = g_strdup_printf("%.*s<cputune><vcpupin vcpu='0' cpuset='6'/></cputune>%s",
                                         (int)(os - cfg), cfg, os);
                again = virDomainDefineXML(conn, pinned);
                ck_assert_ptr_nonnull(again);
                virDomainFree(again);
        }
        ck_assert_int_eq(manager_replace(m, "o-pin", &error), 0);
        ck_assert(spin_result(m, "o-pin", DECISION_SKIPPED));
        free_manager(m);

        m = new_manager(NULL);
        for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
                const Decision *d = manager_lookup(m, names[i]);
                ck_assert_msg(d && d->result == DECISION_SKIPPED && !d->adopted, "%s: %s", names[i],
                              d ? d->reason : "unknown");
                virDomainDestroy(doms[i]);
                virDomainUndefine(doms[i]);
                virDomainFree(doms[i]);
        }
        free_manager(m);
}
END_TEST

/* Defines dom's persistent definition anew from what it is now, extra inserted before its <os> (an
 * operator's virsh edit). */
static void redefine(virDomainPtr dom, const char *extra)
{
        g_autofree char *cfg = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
        const char *os = cfg ? strstr(cfg, "<os>") : NULL;
        g_autofree char *xml = NULL;
        virDomainPtr again;

        ck_assert_ptr_nonnull(os);
        xml = g_strdup_printf("%.*s%s%s", (int)(os - cfg), cfg, extra, os);
        again = virDomainDefineXML(conn, xml);
        ck_assert_msg(again != NULL, "cannot define %s", xml);
        virDomainFree(again);
}

/* An operator opts a running persistent domain out by editing its definition (virsh edit: a define, no
 * metadata event) and takes the opt-out back the same way: followed as virsh metadata --config is, not
 * only at the next replace or start. */
START_TEST(test_opt_out_by_define_while_running_followed)
{
        static const char *const opt_outs[] = {
            "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "' skip='yes'/></metadata>",
            "<cputune><vcpupin vcpu='0' cpuset='6'/></cputune>",
        };
        Manager *m = new_manager(NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "o-edit", 1);
        g_autofree char *plain = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);

        ck_assert(spin_result(m, "o-edit", DECISION_PLACED));
        spin(NULL, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC); /* its own record's echo has come */
        for (unsigned i = 0; i < G_N_ELEMENTS(opt_outs); i++) {
                virDomainPtr again;

                redefine(dom, opt_outs[i]);
                ck_assert_msg(spin_result(m, "o-edit", DECISION_SKIPPED), "%s: not followed", opt_outs[i]);
                again = virDomainDefineXML(conn, plain);
                ck_assert_ptr_nonnull(again);
                virDomainFree(again);
                ck_assert_msg(spin_result(m, "o-edit", DECISION_PLACED), "%s: its removal not followed",
                              opt_outs[i]);
        }
        virDomainDestroy(dom);
        virDomainUndefine(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* An <emulatorpin> written into a running domain's persistent definition (virsh emulatorpin --config, virsh
 * edit) is for its next start: libvirt leaves the running emulator where it is. Until then it holds no
 * CPU and does not stand for the user's pin: the emulator runs where placementd pinned it, and a
 * re-placement still pins it. */
START_TEST(test_emulatorpin_defined_while_running_is_for_next_start)
{
        Manager *m = new_manager(NULL);
        virDomainPtr dom = fixture_define_and_start(conn, "e-edit", 1);
        g_autofree char *error = NULL;
        g_autofree char *pin = NULL;
        const Decision *d;
        unsigned cpu = 0;

        ck_assert(spin_result(m, "e-edit", DECISION_PLACED));
        d = manager_lookup(m, "e-edit");
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        /* a CPU its vCPU and its emulator do not run on */
        while (cpuset_has(d->plan->vcpu_pins[0], cpu) || cpuset_has(d->plan->emulator_pin, cpu))
                cpu++;
        pin = g_strdup_printf("<cputune><emulatorpin cpuset='%u'/></cputune>", cpu);
        redefine(dom, pin);
        ck_assert_int_eq(manager_replace(m, "e-edit", &error), 0);
        d = manager_lookup(m, "e-edit");
        ck_assert_msg(!cpuset_has(d->plan->held_pus, cpu) && !cpuset_is_empty(d->plan->emulator_pin),
                      "CPU %u held for an emulator that does not run there: %s", cpu, d->reason);
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), cpu), 0);
        virDomainDestroy(dom);
        virDomainUndefine(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_replace_error_escapes_the_name)
{
        /* what replace says back of the caller's text (placementctl, a D-Bus caller) is escaped: a name
         * with a terminal escape does not reach the caller's terminal raw */
        Manager *m = new_manager(NULL);
        g_autofree char *error = NULL;

        ck_assert_int_eq(manager_replace(m, "nope\x1b[2J", &error), -ENOENT);
        ck_assert_msg(error && !strchr(error, '\x1b') && strstr(error, "nope\\x1b[2J"), "%s", error);
        free_manager(m);
}
END_TEST

/* The end of a burst test: the burst cost at most two reads of the domain (reads); dom and m go. */
static void end_burst(Manager *m, virDomainPtr dom, uint64_t reads)
{
        ck_assert_msg(reads <= 2, "%" G_GUINT64_FORMAT " reads for one burst", reads);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}

START_TEST(test_metadata_burst_read_once)
{
        /* an owner writing placementd's element in a loop costs one read of the domain per burst, not one
         * per write (each read is the domain's whole XML, which its owner can make large); the last write
         * is what counts */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("o-burst", 1, NULL);
        uint64_t before;

        ck_assert(spin_result(m, "o-burst", DECISION_PLACED));
        spin(NULL, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC); /* its own record's echo has come */
        before = m->metadata_follows;
        for (unsigned i = 0; i < 40; i++)
                ck_assert_int_eq(virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT,
                                                      i % 2 ? "<domain skip='yes'/>" : "<domain skip='no'/>",
                                                      "placementd", PLACEMENTD_XMLNS,
                                                      VIR_DOMAIN_AFFECT_LIVE),
                                 0);
        ck_assert(spin_result(m, "o-burst", DECISION_SKIPPED));
        spin(NULL, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert_int_eq(manager_lookup(m, "o-burst")->result, DECISION_SKIPPED);
        end_burst(m, dom, m->metadata_follows - before);
}
END_TEST

START_TEST(test_own_record_echo_not_read)
{
        /* libvirtd sends a metadata-change event for placementd's own record too: that echo is not the
         * owner's word and costs no read of the domain, at its start or when the record is written again;
         * an owner's opt-out written right after the record, before its echo came, is still followed */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("o-echo", 1, NULL);
        g_autofree char *error = NULL;

        ck_assert(spin_result(m, "o-echo", DECISION_PLACED));
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert_uint_eq(m->metadata_follows, 0);
        ck_assert_int_eq(manager_replace(m, "o-echo", &error), 0);
        spin(NULL, NULL, 3 * MANAGER_METADATA_FOLLOW_MSEC);
        ck_assert_uint_eq(m->metadata_follows, 0);

        ck_assert_int_eq(manager_replace(m, "o-echo", &error), 0);
        set_element(dom, "<domain skip='yes'/>", VIR_DOMAIN_AFFECT_LIVE);
        ck_assert(spin_result(m, "o-echo", DECISION_SKIPPED));
        ck_assert_uint_eq(m->metadata_follows, 1);
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

START_TEST(test_hand_pin_burst_read_once)
{
        /* an owner pinning its vCPU in a loop costs one read of the domain per burst of events read
         * together, not one per pin (each read is the domain's whole XML, which its owner can make large);
         * the last pin is what counts */
        Manager *m = new_manager(NULL);
        virDomainPtr dom = start_domain("o-pins", 1, NULL);
        virTypedParameter event = {.field = "cputune.vcpupin0", .type = VIR_TYPED_PARAM_STRING};
        char cpu[2] = "";
        const Decision *d;
        uint64_t before;

        ck_assert(spin_result(m, "o-pins", DECISION_PLACED));
        spin(NULL, NULL, 50);
        before = m->hand_pin_follows;
        for (unsigned i = 0; i < 40; i++) {
                ck_assert_int_eq(virDomainPinVcpuFlags(dom, 0, &(unsigned char){i % 2 ? 1u << 6 : 1u << 7},
                                                       1, VIR_DOMAIN_AFFECT_CURRENT),
                                 0);
                cpu[0] = i % 2 ? '6' : '7';
                event.value.s = cpu;
                manager_tunable(m, dom, &event, 1); /* as libvirtd sends it; the test driver sends none */
        }
        ck_assert(spin_result(m, "o-pins", DECISION_SKIPPED));
        spin(NULL, NULL, 50);
        d = manager_lookup(m, "o-pins");
        ck_assert(d->pinned_by_hand);
        ck_assert_msg(cpuset_count(d->plan->vcpu_pins[0]) == 1 && cpuset_has(d->plan->vcpu_pins[0], 6),
                      "the last pin (CPU 6) is counted");
        end_burst(m, dom, m->hand_pin_follows - before);
}
END_TEST

START_TEST(test_opt_out_beats_record)
{
        /* a definition made from live XML carries placementd's record and pins; the user then opts it
         * out (skip='yes', placement='auto'): at its next start the opt-out stands, the record is not
         * adopted */
        static const struct {
                const char *name, *skip, *vcpu;
        } cases[] = {
            {"o-skip", " skip='yes'", "<vcpu>1</vcpu>"},
            {"o-auto", "", "<vcpu placement='auto'>1</vcpu>"},
        };
        Manager *m = new_manager(NULL);

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>%s"
                    "<os><type>hvm</type></os><cputune><vcpupin vcpu='0' cpuset='4-5'/></cputune>"
                    "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS "'%s>"
                    "<p:definition>&lt;domain&gt;&lt;vcpu&gt;1&lt;/vcpu&gt;&lt;/domain&gt;</p:definition>"
                    "<p:decision result='placed' policy='explicit' vcpu-pin='core' nodes='1'>"
                    "<p:vcpu id='0' cpu='4' cpuset='4-5'/><p:memory node='1' "
                    "bytes='536870912'/></p:decision></p:domain></metadata></domain>",
                    cases[i].name, cases[i].vcpu, cases[i].skip);
                virDomainPtr dom = virDomainDefineXML(conn, xml);
                Wait w = {m, cases[i].name};

                ck_assert_ptr_nonnull(dom);
                ck_assert_int_eq(virDomainCreate(dom), 0);
                ck_assert(spin(known, &w, 3000));
                const Decision *d = manager_lookup(m, cases[i].name);
                ck_assert_msg(d->result == DECISION_SKIPPED && !d->adopted, "%s: %s", cases[i].name,
                              d->reason);
                virDomainDestroy(dom);
                virDomainUndefine(dom);
                ck_assert(spin(unknown, &w, 3000));
                virDomainFree(dom);
        }
        free_manager(m);
}
END_TEST

/* Metadata of another namespace is its owner's, whatever prefixes it declares: an element written with
 * placementd's prefix bound to another URI (virsh metadata --uri OTHER --key placementd), or one of another
 * namespace that binds a prefix to placementd's URI for its children, before or after placementd's own
 * element, is not placementd's record. A restart adopts the domain as placementd recorded it. */
START_TEST(test_other_namespace_is_not_the_record)
{
        static const char forged[] = "<placementd:decision result='placed' policy='compat' vcpu-pin='core' "
                                     "nodes='0'><placementd:vcpu id='0' cpu='0' cpuset='0-1'/>"
                                     "<placementd:memory node='0' bytes='536870912'/>"
                                     "<placementd:reason>forged</placementd:reason></placementd:decision>";
        static const char owner[] = "http://example.org/xmlns/owner/1";

        for (unsigned i = 0; i < 3; i++) {
                Manager *m = new_manager(NULL);
                /* case 2: in its definition from the start, so before placementd's record */
                g_autofree char *first =
                    g_strdup_printf("<metadata><o:x xmlns:o='%s' xmlns:placementd='%s'>%s</o:x></metadata>",
                                    owner, PLACEMENTD_XMLNS, forged);
                g_autofree char *after =
                    g_strdup_printf("<x xmlns:placementd='%s'>%s</x>", PLACEMENTD_XMLNS, forged);
                virDomainPtr dom = start_domain("ns-owner", 1, i == 2 ? first : NULL);
                Wait w = {m, "ns-owner"};
                g_autoptr(Plan) before = NULL;
                g_autofree char *reason = NULL;
                const Decision *d;

                ck_assert(spin(known, &w, 3000));
                before = plan_copy(manager_lookup(m, "ns-owner")->plan);
                reason = g_strdup(manager_lookup(m, "ns-owner")->reason);
                free_manager(m);
                if (i < 2)
                        ck_assert_int_eq(
                            virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT,
                                                 i == 0 ? "<domain skip='yes' policy='compat'/>" : after,
                                                 i == 0 ? PLACEMENTD_XMLNS_PREFIX : "o", owner,
                                                 VIR_DOMAIN_AFFECT_LIVE),
                            0);

                m = new_manager(NULL);
                w.m = m;
                ck_assert(known(&w));
                d = manager_lookup(m, "ns-owner");
                ck_assert_msg(d->adopted && d->result == DECISION_PLACED && d->plan &&
                                  d->plan->policy == POLICY_EXPLICIT && strcmp(d->reason, reason) == 0 &&
                                  cpuset_equal(d->plan->vcpu_pins[0], before->vcpu_pins[0]),
                              "case %u: %s, adopted %d: %s", i, decision_result_to_string(d->result),
                              d->adopted, d->reason);
                virDomainDestroy(dom);
                virDomainFree(dom);
                free_manager(m);
        }
}
END_TEST

/* An I/O thread whose recorded pin is not the one that runs (pinned by someone else while placementd was
 * down; or a record its owner wrote): the restarted daemon's adoption checks the recorded I/O thread pins
 * against the live ones, as it does the vCPUs' and the emulator's, and leaves that thread to whoever
 * pinned it. The adopted decision claimed it, and show said placementd had pinned it, until the next
 * periodic reconcile (30 s by default; never with ReconcileSec=0). */
START_TEST(test_adopted_iothread_pins_checked)
{
        static const char *const topology = "synthetic:pack:1 numa:1(memory=16GiB) core:2 pu:1";
        Manager *m = new_manager_on(topology, NULL);
        virDomainPtr dom = start_domain("m-io-adopt", 1, "<iothreads>2</iothreads>");
        Wait w = {m, "m-io-adopt"};
        const Decision *d;
        unsigned char map;

        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-io-adopt");
        ck_assert(cpuset_has(d->plan->iothreads, 1) && cpuset_has(d->plan->iothreads, 2));
        map = cpuset_has(d->plan->iothread_pin, 0) ? 0x2 : 0x1; /* a CPU the record does not name */
        free_manager(m);
        ck_assert_int_eq(virDomainPinIOThread(dom, 2, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);

        m = new_manager_on(topology, NULL);
        d = manager_lookup(m, "m-io-adopt");
        ck_assert(d && d->adopted);
        ck_assert(cpuset_has(d->plan->iothreads, 1));
        ck_assert(!cpuset_has(d->plan->iothreads, 2));
        ck_assert_int_eq(fixture_iothread_map(dom, 2), map); /* left where it was pinned */
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

/* I/O threads changed live (libvirt 9.0 sends no event for iothreadadd): the reconcile counts one added
 * where the decision's rule puts I/O threads (the test driver starts it on the emulator's CPUs; QEMU's
 * libvirt on every CPU, and then pins it: tests/e2e/iothreads.sh), leaves one pinned by hand where it is
 * and drops it from the decision, and drops one removed. */
START_TEST(test_live_iothreads_followed)
{
        Manager *m = new_manager_on("synthetic:pack:1 numa:1(memory=16GiB) core:2 pu:1", NULL);
        virDomainPtr dom = start_domain("m-io", 1, NULL);
        Wait w = {m, "m-io"};
        const Decision *d;
        unsigned *ids = NULL, n = 0;
        CpuSet **pins = NULL;
        unsigned char map; /* the user's pin of I/O thread 6: a CPU the decision's rule does not name */

        ck_assert(spin(known, &w, 3000));
        d = manager_lookup(m, "m-io");
        ck_assert(cpuset_is_empty(d->plan->iothreads));
        ck_assert_int_eq(virDomainAddIOThread(dom, 5, VIR_DOMAIN_AFFECT_LIVE), 0);
        ck_assert_int_eq(virDomainAddIOThread(dom, 6, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "m-io");
        ck_assert(cpuset_has(d->plan->iothreads, 5) && cpuset_has(d->plan->iothreads, 6));
        ck_assert(!cpuset_is_empty(d->plan->iothread_pin));
        ck_assert_int_eq(virt_domain_get_iothreads(dom, &ids, &pins, &n, NULL), 0);
        ck_assert_uint_eq(n, 2);
        for (unsigned i = 0; i < n; i++)
                ck_assert(cpuset_equal(pins[i], d->plan->iothread_pin));
        virt_pins_free(pins, n);
        g_free(ids);
        /* the user pins 6 elsewhere: it is theirs; the reconcile does not pin it back */
        map = cpuset_count(d->plan->iothread_pin) == 1 && cpuset_has(d->plan->iothread_pin, 1) ? 0x1 : 0x2;
        ck_assert_int_eq(virDomainPinIOThread(dom, 6, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        manager_reconcile(m);
        d = manager_lookup(m, "m-io");
        ck_assert(cpuset_has(d->plan->iothreads, 5) && !cpuset_has(d->plan->iothreads, 6));
        ck_assert_int_eq(virt_domain_get_iothreads(dom, &ids, &pins, &n, NULL), 0);
        for (unsigned i = 0; i < n; i++)
                if (ids[i] == 6)
                        ck_assert(!cpuset_equal(pins[i], d->plan->iothread_pin));
        virt_pins_free(pins, n);
        g_free(ids);
        /* 5 removed: it leaves the decision */
        ck_assert_int_eq(virDomainDelIOThread(dom, 5, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ck_assert(cpuset_is_empty(manager_lookup(m, "m-io")->plan->iothreads));
        virDomainDestroy(dom);
        virDomainFree(dom);
        free_manager(m);
}
END_TEST

static Suite *manager_suite(void)
{
        Suite *s = suite_create("manager");
        TCase *tc = tcase_create("test driver");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_start_pin_stop);
        tcase_add_test(tc, test_reconcile_records_again);
        tcase_add_test(tc, test_lookup_as_virsh);
        tcase_add_test(tc, test_lookup_by_shown_name);
        tcase_add_test(tc, test_restart_adopts);
        tcase_add_test(tc, test_restart_leaves_newly_reserved_cpus);
        tcase_add_test(tc, test_reload_moves_iothreads_off_reserved_cpus);
        tcase_add_test(tc, test_reload_places_unplaceable);
        tcase_add_test(tc, test_opt_out_while_running_followed);
        tcase_add_test(tc, test_record_removed_while_running_written_back);
        tcase_add_test(tc, test_floating_opt_out_keeps_what_runs);
        tcase_add_test(tc, test_opt_out_in_definition_outlives_restart);
        tcase_add_test(tc, test_opt_out_by_define_while_running_followed);
        tcase_add_test(tc, test_emulatorpin_defined_while_running_is_for_next_start);
        tcase_add_test(tc, test_metadata_burst_read_once);
        tcase_add_test(tc, test_own_record_echo_not_read);
        tcase_add_test(tc, test_hand_pin_burst_read_once);
        tcase_add_test(tc, test_replace_error_escapes_the_name);
        tcase_add_test(tc, test_unplaceable_after_restart_counts_live_pins);
        tcase_add_test(tc, test_reload_applies_to_running_domains);
        tcase_add_test(tc, test_uri_shown_without_user_or_query);
        tcase_add_test(tc, test_reload_while_away_applies_once_back);
        tcase_add_test(tc, test_reload_while_away_undone);
        tcase_add_test(tc, test_reload_core_kinds_leaves_e_cores);
        tcase_add_test(tc, test_unplaceable_replace_keeps_pins_counted);
        tcase_add_test(tc, test_dropped_emulator_pin_undone);
        tcase_add_test(tc, test_restart_holds_emulator_cpu);
        tcase_add_test(tc, test_opt_outs);
        tcase_add_test(tc, test_definition_pins_are_taken);
        tcase_add_test(tc, test_pinned_counted_before_others_at_start);
        tcase_add_test(tc, test_opted_out_bound_memory_counted);
        tcase_add_test(tc, test_opted_out_repinned_stays_opted_out);
        tcase_add_test(tc, test_policy_per_domain);
        tcase_add_test(tc, test_advisory);
        tcase_add_test(tc, test_hand_pins_adopted);
        tcase_add_test(tc, test_vanished_before_pin);
        tcase_add_test(tc, test_apply_cut_off_by_lost_connection);
        tcase_add_test(tc, test_apply_cut_off_persistent);
        tcase_add_test(tc, test_plan_changes_nothing);
        tcase_add_test(tc, test_undefined_while_running);
        tcase_add_test(tc, test_name_reused);
        tcase_add_test(tc, test_place_running_off);
        tcase_add_test(tc, test_memory_binding_off);
        tcase_add_test(tc, test_rebalance_transient);
        tcase_add_test(tc, test_rebalance_nothing_better);
        tcase_add_test(tc, test_replace_transient_keeps_ownership);
        tcase_add_test(tc, test_restore_onto_taken_cores);
        tcase_add_test(tc, test_forged_record_does_not_evict);
        tcase_add_test(tc, test_forged_record_moves_no_unbound_memory);
        tcase_add_test(tc, test_record_in_definition_moves_no_memory);
        tcase_add_test(tc, test_live_iothreads_followed);
        tcase_add_test(tc, test_adopted_iothread_pins_checked);
        tcase_add_test(tc, test_unreadable_record_placed_anew);
        tcase_add_test(tc, test_defined_from_live_xml);
        tcase_add_test(tc, test_failed_pin_recorded);
        tcase_add_test(tc, test_vcpu_hotplug);
        tcase_add_test(tc, test_memory_counts_maximum);
        tcase_add_test(tc, test_record_without_definition);
        tcase_add_test(tc, test_restart_adopts_records_first);
        tcase_add_test(tc, test_names_as_libvirt_has_them);
        tcase_add_test(tc, test_restart_before_its_events_is_a_new_run);
        tcase_add_test(tc, test_hand_pinned_hot_add_counted);
        tcase_add_test(tc, test_persistent_definition_wins_over_snapshot);
        tcase_add_test(tc, test_replace_gone_reports_its_uuid);
        tcase_add_test(tc, test_reconcile_before_start_event);
        tcase_add_test(tc, test_opt_out_beats_record);
        tcase_add_test(tc, test_other_namespace_is_not_the_record);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_suite)
