/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the ledger counts is what runs, in-process against libvirt's test driver: a domain re-placed
 * under Apply=no is counted on the pins it keeps; one reconcile that sees a domain resized and another's
 * pins changed counts the change before it places; records and pins found at a start are taken as they
 * run, and a domain placementd pinned is never counted as anyone else's.
 */
#include <dlfcn.h>
#include <event2/event.h>
#include <libvirt/libvirt.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "log.h"
#include "virt-domain.h"

/* 8 PUs, one node of 4 cores x 2 threads: the test driver accepts pins on CPUs 0-7 only. */
#define ONE_NODE "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:4 pu:2"
#define QUIET    "[Placement]\nReconcileSec=0\nHeal=no\n"
/* load not measured: emulators on their cores' siblings, not counted busy on further cores (which on
 * EIGHT_CORES may be among the CPUs the test driver refuses) */
#define UNMEASURED QUIET "LoadInterval=0\n"

static struct event_base *base;
static virConnectPtr conn;

/* live memory bindings of the domain of this name fail as libvirt's refusal does (NULL: none) */
static const char *unbindable_name;

int virDomainSetNumaParameters(virDomainPtr dom, virTypedParameterPtr params, int nparams,
                               unsigned int flags)
{
        static int (*real)(virDomainPtr, virTypedParameterPtr, int, unsigned int);

        if (unbindable_name && g_strcmp0(virDomainGetName(dom), unbindable_name) == 0)
                return -1;
        if (!real)
                *(void **)&real = dlsym(RTLD_NEXT, "virDomainSetNumaParameters");
        return real(dom, params, nparams, flags);
}

static void setup(void)
{
        fixture_open(&base, &conn, true);
}

static void teardown(void)
{
        fixture_close(base, conn);
}

/* The first host CPU of vCPU vcpu's pin (a core's: VCPUPin=core), or -1 when it floats over the host. */
static int runs_on(virDomainPtr dom, unsigned nvcpus, unsigned vcpu)
{
        CpuSet **pins = NULL;
        int cpu = -1;

        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, nvcpus, NULL, &pins, NULL), 0);
        if (cpuset_count(pins[vcpu]) <= 2)
                cpu = cpuset_next(pins[vcpu], 0);
        virt_pins_free(pins, nvcpus);
        return cpu;
}

/* The cores the ledger counts a vCPU on, as "0100" (one digit a core). */
static char *cores_counted(Manager *m)
{
        GString *s = g_string_new(NULL);

        for (unsigned c = 0; c < m->topology->ncores; c++)
                g_string_append_printf(s, "%u", ledger_core_load(manager_ledger(m), c));
        return g_string_free(s, FALSE);
}

/* What is logged at info level while fn(data) runs (the log goes to a file meanwhile): a new string. */
static char *logged_during(void (*fn)(void *), void *data)
{
        FILE *f = tmpfile();
        int saved = dup(STDERR_FILENO), level = log_get_max_level();
        char *logged = g_malloc0(65536);

        ck_assert(f && saved >= 0);
        fflush(stderr);
        ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
        log_set_max_level(LOG_INFO);
        fn(data);
        fflush(stderr);
        log_set_max_level(level);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        rewind(f);
        (void)!fread(logged, 1, 65535, f);
        fclose(f);
        return logged;
}

typedef struct {
        Manager *m;
        const char *config, *name;
        int r;
        char *error;
} Call;

static void call_reload(void *data)
{
        Call *c = data;
        fixture_reload(c->m, c->config);
}

static void call_replace(void *data)
{
        Call *c = data;
        c->r = manager_replace(c->m, c->name, &c->error);
}

/* A reload that turns Apply= off and reserves the CPUs a domain runs on advises it again and moves
 * nothing: the journal says it was advised again, not placed again (until 2026-12-07 "placed again", and
 * only the next line said nothing was applied). */
START_TEST(test_reload_reserving_under_apply_off_says_advised)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr a = fixture_start_xml(conn, "u-r", "<vcpu>1</vcpu>");
        g_autofree char *logged = NULL, *config = NULL;
        int cpu;

        ck_assert(fixture_spin_known(base, m, "u-r", 3000));
        cpu = runs_on(a, 1, 0);
        ck_assert_int_ge(cpu, 0);
        config = g_strdup_printf(QUIET "Apply=no\nReservedCPUs=%d-%d\n", cpu, cpu + 1);
        logged = logged_during(call_reload, &(Call){.m = m, .config = config});
        ck_assert_msg(
            strstr(logged, "u-r: advised again (after the reload: its CPUs are now kept from vCPUs)") &&
                !strstr(logged, "u-r: placed again"),
            "%s", logged);
        ck_assert_int_eq(manager_lookup(m, "u-r")->result, DECISION_ADVISORY);
        ck_assert_int_eq(runs_on(a, 1, 0), cpu); /* nothing moved */
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/* Placed on core 1, then re-placed (replace) under Apply=no: the advice would take core 0, freed
 * meanwhile, but nothing moves, so core 1 stays counted; the reconcile does not take placementd's own pins
 * for someone else's, and Apply=yes later applies the advice. */
START_TEST(test_replace_under_apply_off_counts_what_runs)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr a = fixture_start_xml(conn, "u-a", "<vcpu>1</vcpu>"), b;
        g_autofree char *counted = NULL;
        const Decision *d;
        int cpu;

        ck_assert(fixture_spin_known(base, m, "u-a", 3000));
        b = fixture_start_xml(conn, "u-b", "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-b", 3000));
        cpu = runs_on(b, 1, 0);
        ck_assert_int_ge(cpu, 2); /* beside a's core 0 */
        fixture_stop(a);
        fixture_spin_known(base, NULL, NULL, 50);
        fixture_reload(m, QUIET "Apply=no\n");
        {
                /* the journal says both: what is advised (as list and show publish) and what runs */
                Call call = {.m = m, .name = "u-b"};
                g_autofree char *logged = logged_during(call_replace, &call);
                g_autofree char *runs = g_strdup_printf(", runs on 0:%d", cpu);
                ck_assert_msg(call.r == 0, "%s", call.error);
                g_free(call.error);
                ck_assert_msg(strstr(logged, "u-b: advisory, advised vCPU pins 0:0") && strstr(logged, runs),
                              "%s", logged);
        }
        d = manager_lookup(m, "u-b");
        counted = cores_counted(m);
        ck_assert_int_eq(d->result, DECISION_ADVISORY);
        ck_assert_int_eq(runs_on(b, 1, 0), cpu);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), (unsigned)cpu) == 1 &&
                          ledger_core_load(manager_ledger(m), 0) == 0,
                      "counted on cores %s, runs on CPU %d: %s", counted, cpu, d->reason);
        /* what is published is the advice: core 0 */
        ck_assert_int_ge(decision_shown_plan(d)->vcpu_pu[0], 0);
        ck_assert_uint_eq(m->topology->pus[decision_shown_plan(d)->vcpu_pu[0]].core, 0);
        {
                /* the map shows what runs, and says the advice is not applied */
                g_autofree char *map = manager_host_map(m), *map_json = manager_host_map_json(m);
                ck_assert_msg(
                    strstr(map, "\nadvised: u-b runs as shown; its advice (Apply=no) is not applied\n"),
                    "%s", map);
                ck_assert_msg(strstr(map_json, "{\"domain\":\"u-b\",\"shown\":\"runs\"}"), "%s", map_json);
        }
        manager_reconcile(m);
        d = manager_lookup(m, "u-b");
        ck_assert_msg(!d->pinned_by_hand, "placementd's own pins taken for a hand pin: %s", d->reason);
        fixture_reload(m, QUIET);
        d = manager_lookup(m, "u-b");
        ck_assert_msg(d->result == DECISION_PLACED && runs_on(b, 1, 0) == 0,
                      "Apply=yes: %s, runs on CPU %d (%s)", decision_result_to_string(d->result),
                      runs_on(b, 1, 0), d->reason);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/* Re-placed under Apply=no (counted on the pins it keeps, its emulator pin with them), then its emulator
 * pinned by hand: the ledger follows it (its CPU held), but nothing is written into the domain under
 * Apply=no: its record stays as it was. */
START_TEST(test_hand_emulator_pin_under_apply_off)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr b = fixture_start_xml(conn, "u-emu-off", "<vcpu>1</vcpu>");
        virTypedParameter event = {.field = "cputune.emulatorpin", .type = VIR_TYPED_PARAM_STRING};
        g_autofree char *error = NULL, *before = NULL, *after = NULL;
        char seven[] = "7";
        const Decision *d;
        int pu;

        ck_assert(fixture_spin_known(base, m, "u-emu-off", 3000));
        ck_assert_int_lt(runs_on(b, 1, 0), 6); /* not on core 3 (CPUs 6-7) */
        fixture_reload(m, QUIET "Apply=no\n");
        ck_assert_msg(manager_replace(m, "u-emu-off", &error) == 0, "%s", error);
        d = manager_lookup(m, "u-emu-off");
        ck_assert_int_eq(d->result, DECISION_ADVISORY);
        ck_assert(!cpuset_is_empty(d->plan->emulator_pin));
        before =
            virDomainGetMetadata(b, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_ptr_nonnull(before);
        ck_assert_int_eq(virDomainPinEmulator(b, &(unsigned char){1u << 7}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        event.value.s = seven;
        manager_tunable(m, b, &event, 1); /* as libvirtd sends it; the test driver sends none */
        fixture_spin_known(base, NULL, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC); /* once for the burst */
        d = manager_lookup(m, "u-emu-off");
        ck_assert(cpuset_is_empty(d->plan->emulator_pin));
        pu = topology_pu_by_os(manager_topology(m), 7);
        ck_assert_uint_eq(ledger_pu_held(manager_ledger(m), (unsigned)pu), 1);
        after =
            virDomainGetMetadata(b, VIR_DOMAIN_METADATA_ELEMENT, PLACEMENTD_XMLNS, VIR_DOMAIN_AFFECT_LIVE);
        ck_assert_msg(after && strcmp(before, after) == 0, "written under Apply=no:\n%s\nwas:\n%s", after,
                      before);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/* Re-placed under Apply=no (counted on the pins it keeps), then unpinned by hand to every CPU: at the
 * tunable event, what ran is no longer what runs, so its old core is not counted any more (the unpin is
 * taken as its owner's, as under Apply=yes, once for the burst of events); until then it waited for the next
 * reconcile. */
START_TEST(test_unpin_under_apply_off_followed)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr a = fixture_start_xml(conn, "u-a", "<vcpu>1</vcpu>"), b;
        unsigned char all = 0xff;
        char pins[] = "0-7";
        virTypedParameter event = {.field = "cputune.vcpupin0", .type = VIR_TYPED_PARAM_STRING};
        g_autofree char *error = NULL;
        const Decision *d;
        int cpu;

        ck_assert(fixture_spin_known(base, m, "u-a", 3000));
        b = fixture_start_xml(conn, "u-b", "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-b", 3000));
        cpu = runs_on(b, 1, 0);
        fixture_stop(a);
        fixture_spin_known(base, NULL, NULL, 50);
        fixture_reload(m, QUIET "Apply=no\n");
        ck_assert_msg(manager_replace(m, "u-b", &error) == 0, "%s", error);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)cpu), 1);
        event.value.s = pins;
        ck_assert_int_eq(virDomainPinVcpuFlags(b, 0, &all, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
        manager_tunable(m, b, &event, 1); /* as libvirtd sends it; the test driver sends none */
        fixture_spin_known(base, NULL, NULL, 2 * MANAGER_METADATA_FOLLOW_MSEC); /* once for the burst */
        d = manager_lookup(m, "u-b");
        ck_assert_msg(ledger_pu_load(manager_ledger(m), (unsigned)cpu) == 0,
                      "unpinned from CPU %d, still counted there: %s (%s)", cpu,
                      decision_result_to_string(d->result), d->reason);
        ck_assert(d->pinned_by_hand);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/* Placed, then Apply=no with its CPU reserved (the advice moves it; nothing does), a reconcile, then
 * Apply=yes: it leaves the reserved CPU. */
START_TEST(test_reserved_under_apply_off_then_applied)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr a = fixture_start_xml(conn, "u-r", "<vcpu>1</vcpu>");
        g_autofree char *off = NULL, *on = NULL;
        const Decision *d;
        int cpu;

        ck_assert(fixture_spin_known(base, m, "u-r", 3000));
        cpu = runs_on(a, 1, 0);
        ck_assert_int_ge(cpu, 0);
        off = g_strdup_printf(QUIET "Apply=no\nReservedCPUs=%d\n", cpu);
        on = g_strdup_printf(QUIET "ReservedCPUs=%d\n", cpu);
        fixture_reload(m, off);
        ck_assert_int_eq(runs_on(a, 1, 0), cpu);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), (unsigned)cpu), 1);
        manager_reconcile(m);
        d = manager_lookup(m, "u-r");
        ck_assert_msg(!d->pinned_by_hand, "placementd's own pins taken for a hand pin: %s", d->reason);
        fixture_reload(m, on);
        d = manager_lookup(m, "u-r");
        ck_assert_msg(d->result == DECISION_PLACED && runs_on(a, 1, 0) >= 0 && runs_on(a, 1, 0) != cpu,
                      "Apply=yes: %s, runs on CPU %d, reserved %d (%s)",
                      decision_result_to_string(d->result), runs_on(a, 1, 0), cpu, d->reason);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/* One reconcile sees a vCPU hot-added to a and b pinned by hand onto the core a would take: b's pin is
 * counted first, and a's new vCPU goes to a free core. */
START_TEST(test_resized_placed_after_hand_pins)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr a = fixture_start_xml(conn, "u-grow", "<vcpu current='1'>2</vcpu>"), b;
        g_autofree char *counted = NULL;
        int target;

        ck_assert(fixture_spin_known(base, m, "u-grow", 3000));
        b = fixture_start_xml(conn, "u-hand", "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-hand", 3000));
        {
                g_autoptr(Plan) p = manager_plan(m, 1, 512ull << 20); /* the core a new vCPU would get */
                target = (int)m->topology->pus[p->vcpu_pu[0]].os_index;
        }
        fixture_pin(b, 0, (unsigned)target);
        ck_assert_int_eq(virDomainSetVcpusFlags(a, 2, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        counted = cores_counted(m);
        ck_assert_msg(manager_lookup(m, "u-hand")->pinned_by_hand, "b's pin not taken");
        ck_assert_int_eq(manager_lookup(m, "u-grow")->result, DECISION_PLACED);
        ck_assert_msg(strcmp(counted, "1110") == 0 || strcmp(counted, "1101") == 0 ||
                          strcmp(counted, "1011") == 0 || strcmp(counted, "0111") == 0,
                      "vCPUs counted per core %s: two share one while one is free", counted);
        fixture_stop(b);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/* 8 cores of 2 threads, 16 PUs: the test driver refuses pins on CPUs 8-15, so an apply there fails. */
#define EIGHT_CORES "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:8 pu:2"

/* A record of hand pins whose vCPUs float over the whole host (its owner may write one): nothing is
 * counted for them, whatever cpu= the record names. */
START_TEST(test_record_of_floating_vcpus_counts_nothing)
{
        virDomainPtr x = virDomainCreateXML(
            conn,
            "<domain type='test'><name>u-forged</name><memory unit='MiB'>512</memory><vcpu>2</vcpu>"
            "<os><type>hvm</type></os><metadata><placementd:domain "
            "xmlns:placementd='https://placementd.org/xmlns/domain/1'><placementd:decision result='skipped' "
            "policy='explicit' vcpu-pin='core' memory-binding='none' nodes='0' emulator=''>"
            "<placementd:vcpu id='0' cpu='0' cpuset='0-7'/><placementd:vcpu id='1' cpu='2' cpuset='0-7'/>"
            "<placementd:reason>x</placementd:reason></placementd:decision></placementd:domain></metadata>"
            "</domain>",
            0);
        g_autofree char *counted = NULL;
        Manager *m;

        ck_assert_ptr_nonnull(x);
        m = fixture_manager_new(base, ONE_NODE, QUIET);
        ck_assert(fixture_spin_known(base, m, "u-forged", 3000));
        counted = cores_counted(m);
        ck_assert_int_eq(runs_on(x, 2, 0), -1); /* still floating */
        ck_assert_msg(strcmp(counted, "0000") == 0, "floating vCPUs counted on cores %s (%s)", counted,
                      manager_lookup(m, "u-forged")->reason);
        fixture_stop(x);
        fixture_manager_free(base, m);
}
END_TEST

/* Running on libvirt's default pins over its <vcpu cpuset='0-3'> when placementd starts, its definition
 * edited since for the next start (cpuset 4-7): placed (inside the definition's cpuset, the user's latest
 * word), not taken for hand pins. */
START_TEST(test_found_running_definition_edited)
{
        virDomainPtr a = virDomainDefineXML(conn, "<domain type='test'><name>u-edited</name><memory "
                                                  "unit='MiB'>512</memory><vcpu cpuset='0-3'>2</vcpu>"
                                                  "<os><type>hvm</type></os></domain>");
        char uuid[VIR_UUID_STRING_BUFLEN];
        g_autofree char *xml = NULL;
        virDomainPtr again;
        const Decision *d;
        Manager *m;

        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(virDomainCreate(a), 0);
        virDomainGetUUIDString(a, uuid);
        xml = g_strdup_printf("<domain type='test'><name>u-edited</name><uuid>%s</uuid><memory "
                              "unit='MiB'>512</memory><vcpu cpuset='4-7'>2</vcpu><os><type>hvm</type></os>"
                              "</domain>",
                              uuid);
        again = virDomainDefineXML(conn, xml);
        ck_assert_ptr_nonnull(again);
        virDomainFree(again);
        m = fixture_manager_new(base, ONE_NODE, QUIET);
        ck_assert(fixture_spin_known(base, m, "u-edited", 3000));
        d = manager_lookup(m, "u-edited");
        ck_assert_msg(d->result == DECISION_PLACED && !d->pinned_by_hand, "%s, by hand %d: %s",
                      decision_result_to_string(d->result), d->pinned_by_hand, d->reason);
        ck_assert_int_ge(runs_on(a, 2, 0), 4);
        ck_assert_int_ge(runs_on(a, 2, 1), 4);
        virDomainDestroy(a);
        virDomainUndefine(a);
        virDomainFree(a);
        fixture_manager_free(base, m);
}
END_TEST

/* Saved on core 3; b then placed on cores 3 and 4, the pin on core 4 failing (b runs on placementd's pin
 * on core 3); a restored: its record is refused, core 3 runs b. */
START_TEST(test_record_refused_beside_failed_domain)
{
        Manager *m = fixture_manager_new(base, EIGHT_CORES, UNMEASURED);
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-test-XXXXXX", NULL);
        int fd = g_mkstemp(image);
        virDomainPtr f, a, b;
        const Decision *d;

        ck_assert_int_ge(fd, 0);
        close(fd);
        f = fixture_start_xml(conn, "u-fill", "<vcpu>3</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-fill", 3000));
        a = fixture_start_xml(conn, "u-saved", "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-saved", 3000));
        ck_assert_int_eq(runs_on(a, 1, 0), 6);
        ck_assert_int_eq(virDomainSave(a, image), 0);
        virDomainFree(a);
        fixture_spin_known(base, NULL, NULL, 50);
        b = fixture_start_xml(conn, "u-failed", "<vcpu>2</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-failed", 3000));
        ck_assert_int_eq(manager_lookup(m, "u-failed")->result, DECISION_FAILED);
        ck_assert_int_eq(runs_on(b, 2, 0), 6);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        a = virDomainLookupByName(conn, "u-saved");
        ck_assert(fixture_spin_known(base, m, "u-saved", 3000));
        d = manager_lookup(m, "u-saved");
        ck_assert_msg(!d->adopted, "the record on b's core was adopted: %s", d->reason);
        g_unlink(image);
        fixture_stop(a);
        fixture_stop(b);
        fixture_stop(f);
        fixture_manager_free(base, m);
}
END_TEST

/* A domain whose <emulatorpin cpuset='6'/> holds core 3 for its emulator, its vCPUs' pins failing: the
 * core stays held, and the next domain is not placed there. */
START_TEST(test_failed_apply_keeps_emulator_held)
{
        Manager *m = fixture_manager_new(base, EIGHT_CORES, QUIET);
        virDomainPtr f, e, g;

        f = fixture_start_xml(conn, "u-fill", "<vcpu>3</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-fill", 3000));
        e = fixture_start_xml(conn, "u-emu", "<vcpu>2</vcpu><cputune><emulatorpin cpuset='6'/></cputune>");
        ck_assert(fixture_spin_known(base, m, "u-emu", 3000));
        ck_assert_int_eq(manager_lookup(m, "u-emu")->result, DECISION_FAILED);
        ck_assert_uint_gt(ledger_core_held(manager_ledger(m), 3), 0);
        g = fixture_start_xml(conn, "u-next", "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-next", 3000));
        ck_assert_int_ne(runs_on(g, 1, 0), 6);
        fixture_stop(g);
        fixture_stop(e);
        fixture_stop(f);
        fixture_manager_free(base, m);
}
END_TEST

/* Pinned by hand (recorded so), placementd stopped, pinned by hand elsewhere, placementd started: the new
 * pin is taken as it is, not undone. */
START_TEST(test_hand_pins_changed_while_down)
{
        Manager *m = fixture_manager_new(base, ONE_NODE, QUIET);
        virDomainPtr a = fixture_start_xml(conn, "u-repinned", "<vcpu>1</vcpu>");
        const Decision *d;

        ck_assert(fixture_spin_known(base, m, "u-repinned", 3000));
        fixture_pin(a, 0, 5);
        manager_reconcile(m);
        ck_assert(manager_lookup(m, "u-repinned")->pinned_by_hand);
        fixture_manager_free(base, m);
        fixture_pin(a, 0, 7);
        m = fixture_manager_new(base, ONE_NODE, QUIET);
        ck_assert(fixture_spin_known(base, m, "u-repinned", 3000));
        d = manager_lookup(m, "u-repinned");
        ck_assert_msg(d->pinned_by_hand && runs_on(a, 1, 0) == 7, "%s, runs on CPU %d: %s",
                      decision_result_to_string(d->result), runs_on(a, 1, 0), d->reason);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), 7), 1);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/* A domain whose memory binding libvirt refused, then pinned by hand: skipped, counted where its pins run,
 * and its decision says it binds no memory, not that a binding failed on the nodes it is now counted on
 * (the failure was of the nodes placementd chose, which nothing holds to any more). */
START_TEST(test_hand_pinned_after_failed_binding_binds_nothing)
{
        Manager *m = fixture_manager_new(base, "synthetic:pack:2 numa:1(memory=8GiB) core:2 pu:2", QUIET);
        virDomainPtr a;
        const Decision *d;

        unbindable_name = "u-unbound";
        a = fixture_start_xml(conn, "u-unbound", "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, "u-unbound", 3000));
        d = manager_lookup(m, "u-unbound");
        ck_assert_msg(d->memory_binding == MEMORY_BINDING_FAILED, "binding %s: %s",
                      memory_binding_to_string(d->memory_binding), d->reason);
        fixture_pin(a, 0, runs_on(a, 1, 0) < 4 ? 5 : 1);
        manager_reconcile(m);
        d = manager_lookup(m, "u-unbound");
        ck_assert_msg(d->result == DECISION_SKIPPED && d->memory_binding == MEMORY_BINDING_NONE,
                      "%s, binding %s: %s", decision_result_to_string(d->result),
                      memory_binding_to_string(d->memory_binding), d->reason);
        unbindable_name = NULL;
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

static Suite *manager_runs_suite(void)
{
        Suite *s = suite_create("manager runs");
        TCase *tc = tcase_create("runs");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_reload_reserving_under_apply_off_says_advised);
        tcase_add_test(tc, test_replace_under_apply_off_counts_what_runs);
        tcase_add_test(tc, test_reserved_under_apply_off_then_applied);
        tcase_add_test(tc, test_unpin_under_apply_off_followed);
        tcase_add_test(tc, test_hand_emulator_pin_under_apply_off);
        tcase_add_test(tc, test_resized_placed_after_hand_pins);
        tcase_add_test(tc, test_record_of_floating_vcpus_counts_nothing);
        tcase_add_test(tc, test_found_running_definition_edited);
        tcase_add_test(tc, test_record_refused_beside_failed_domain);
        tcase_add_test(tc, test_failed_apply_keeps_emulator_held);
        tcase_add_test(tc, test_hand_pins_changed_while_down);
        tcase_add_test(tc, test_hand_pinned_after_failed_binding_binds_nothing);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_runs_suite)
