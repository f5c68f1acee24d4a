/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a reload that keeps more CPUs from vCPUs leaves, in-process against libvirt's test driver: the
 * domains placed again off the newly reserved CPUs end with their emulators where EmulatorPin= puts them on
 * the host as it is once all of them moved, whichever of them was placed again first.
 */
#include <dlfcn.h>
#include <event2/event.h>
#include <glib/gstdio.h>
#include <libvirt/libvirt.h>

#include "manager-fixture.h"
#include "manager-internal.h"
#include "test-util.h"
#include "virt-domain.h"

/* 6 PUs, one node of 3 cores x 2 threads (CPUs 0-1, 2-3, 4-5): the test driver accepts CPUs 0-7. */
#define THREE_CORES "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:3 pu:2"
#define CONF                                                                                                \
        "[Placement]\nReconcileSec=0\nHeal=no\nLoadInterval=0\nMemoryBinding=no\nVCPUPin=thread\n"          \
        "EmulatorPin=siblings\n"

static struct event_base *base;
static virConnectPtr conn;

/* while set, every live memory binding is refused, as libvirt 9.0 refuses to change the nodeset of a
 * running domain once it is bound ("change of nodeset for running domain requires restrictive numa
 * mode"); the test driver takes any */
static bool binding_fixed;

int virDomainSetNumaParameters(virDomainPtr dom, virTypedParameterPtr params, int nparams,
                               unsigned int flags)
{
        static int (*real)(virDomainPtr, virTypedParameterPtr, int, unsigned int);

        if (binding_fixed)
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

static virDomainPtr start(Manager *m, const char *name, const char *uuid)
{
        g_autofree char *body = g_strdup_printf("<uuid>%s</uuid><vcpu>3</vcpu>", uuid);
        virDomainPtr dom = fixture_start_xml(conn, name, body);

        ck_assert(fixture_spin_known(base, m, name, 3000));
        return dom;
}

/* The host CPUs (OS indexes) the ledger counts a vCPU on, of any domain. */
static CpuSet *vcpu_cpus(Manager *m)
{
        CpuSet *cpus = cpuset_new();

        for (unsigned p = 0; p < m->topology->npus; p++)
                if (ledger_pu_load(manager_ledger(m), p))
                        cpuset_add(cpus, m->topology->pus[p].os_index);
        return cpus;
}

/* The emulator of the domain name runs on the housekeeping CPUs 0-1, which no vCPU takes, as its live pin
 * says: not on its own vCPUs' CPUs, nor on another domain's, and its reason does not say it shares its own
 * cores. */
static void assert_emulator_apart(Manager *m, virDomainPtr dom, const char *name)
{
        const Decision *d = manager_lookup(m, name);
        g_autoptr(CpuSet) vcpus = vcpu_cpus(m);
        g_autoptr(CpuSet) housekeeping = NULL;
        g_autoptr(CpuSet) live = virt_domain_emulator_pin(dom);
        g_autofree char *pin = NULL, *runs = NULL;

        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(d->plan);
        pin = cpuset_format(d->plan->emulator_pin);
        ck_assert_int_eq(cpuset_parse("0-1", &housekeeping, NULL), 0);
        ck_assert_msg(!cpuset_intersects(vcpus, housekeeping), "a vCPU on a reserved CPU");
        for (unsigned i = 0; i < d->plan->nvcpus; i++)
                ck_assert_msg(!cpuset_intersects(d->plan->emulator_pin, d->plan->vcpu_pins[i]),
                              "%s: its emulator on %s, beside its own vCPU %u, while CPUs 0-1 are free: %s",
                              name, pin, i, d->reason);
        ck_assert_msg(!cpuset_intersects(d->plan->emulator_pin, vcpus),
                      "%s: its emulator on %s, where vCPUs run, while CPUs 0-1 are free: %s", name, pin,
                      d->reason);
        ck_assert_msg(cpuset_equal(d->plan->emulator_pin, housekeeping), "%s: its emulator on %s: %s", name,
                      pin, d->reason);
        ck_assert_msg(!strstr(d->reason, "its own cores"), "%s: %s", name, d->reason);
        runs = live ? cpuset_format(live) : g_strdup("(unread)");
        ck_assert_msg(live && cpuset_equal(live, d->plan->emulator_pin),
                      "%s: its emulator runs on %s, planned %s", name, runs, pin);
}

/*
 * Two domains of 3 vCPUs on 3 cores with CPU 1 reserved both run a vCPU on CPU 0; a reload that reserves
 * CPU 0 too moves both off it. Whichever is placed again first was planned while the other still ran on
 * core 0, whose CPUs are then the only housekeeping CPUs, so none was free for its emulator; once the
 * second left core 0 they are. Both emulators end on CPUs 0-1, in either order (the UUIDs swapped swap
 * the order in which the reload takes them).
 */
#define MOVED "its emulator moved to CPUs 0-1 once the domains placed again with it moved; "

static void reload_reserving_cpu0(const char *uuid_a, const char *uuid_b)
{
        Manager *m = fixture_manager_new(base, THREE_CORES, CONF "ReservedCPUs=1\n");
        virDomainPtr a = start(m, "rl-a", uuid_a);
        virDomainPtr b = start(m, "rl-b", uuid_b);
        const Decision *da = manager_lookup(m, "rl-a"), *db = manager_lookup(m, "rl-b");
        g_autoptr(CpuSet) zero = NULL;
        bool a_on_0 = false, b_on_0 = false;

        ck_assert_int_eq(cpuset_parse("0", &zero, NULL), 0);
        for (unsigned i = 0; i < 3; i++) {
                a_on_0 = a_on_0 || cpuset_intersects(da->plan->vcpu_pins[i], zero);
                b_on_0 = b_on_0 || cpuset_intersects(db->plan->vcpu_pins[i], zero);
        }
        ck_assert_msg(a_on_0 && b_on_0, "both run a vCPU on CPU 0: %s / %s", da->reason, db->reason);

        fixture_reload(m, CONF "ReservedCPUs=0-1\n");
        assert_emulator_apart(m, a, "rl-a");
        assert_emulator_apart(m, b, "rl-b");
        /* the one placed first says its emulator moved, once; the other was placed there at once */
        da = manager_lookup(m, "rl-a");
        db = manager_lookup(m, "rl-b");
        ck_assert_msg(g_str_has_prefix(da->reason, MOVED) != g_str_has_prefix(db->reason, MOVED), "%s / %s",
                      da->reason, db->reason);
        fixture_stop(a);
        fixture_stop(b);
        fixture_manager_free(base, m);
}

START_TEST(test_reload_emulators_one_order)
{
        reload_reserving_cpu0("11111111-2222-3333-4444-555555555501",
                              "11111111-2222-3333-4444-555555555502");
}
END_TEST

START_TEST(test_reload_emulators_other_order)
{
        reload_reserving_cpu0("11111111-2222-3333-4444-555555555502",
                              "11111111-2222-3333-4444-555555555501");
}
END_TEST

/* A domain of one vCPU started (transient, its XML then holds placementd's record and pins) and placed. */
static virDomainPtr start_one(Manager *m, const char *name, const char *uuid)
{
        g_autofree char *body = g_strdup_printf("<uuid>%s</uuid><vcpu>1</vcpu>", uuid);
        virDomainPtr dom = fixture_start_xml(conn, name, body);

        ck_assert(fixture_spin_known(base, m, name, 3000));
        return dom;
}

/*
 * A domain restored from a save image starts with QEMU's threads on the emulator pin its saved XML
 * carries (one CPU, a sibling under EmulatorPin=siblings); a plan's emulator pin is kept within it
 * (thread-mask.c). A reload that reserves the CPUs of both domains' vCPUs, EmulatorPin=nodeset, places both
 * again: the restored one's emulator, which EmulatorPin= would spread over its node, stays on that CPU,
 * said once. Choosing its threads again once both moved finds them where the kernel keeps them: nothing
 * moves, and the reason neither says it moved nor says the kept pin twice.
 */
START_TEST(test_reload_restored_emulator_kept_within)
{
        Manager *m = fixture_manager_new(base, THREE_CORES, CONF);
        g_autofree char *image = g_build_filename(g_get_tmp_dir(), "placementd-reload-XXXXXX", NULL);
        virDomainPtr a = start_one(m, "rs-a", "11111111-2222-3333-4444-555555555511");
        virDomainPtr b = start_one(m, "rs-b", "11111111-2222-3333-4444-555555555512");
        g_autoptr(CpuSet) mask = NULL;
        g_autoptr(CpuSet) reserved = cpuset_new();
        g_autofree char *reserved_text = NULL, *conf = NULL, *kept = NULL;
        const Decision *d;
        const char *first;
        int fd = g_mkstemp(image);

        ck_assert_int_ge(fd, 0);
        close(fd);
        d = manager_lookup(m, "rs-a");
        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_uint_eq(cpuset_count(d->plan->emulator_pin), 1);
        mask = cpuset_copy(d->plan->emulator_pin);
        ck_assert_int_eq(virDomainSave(a, image), 0);
        virDomainFree(a);
        fixture_spin_known(base, NULL, NULL, 50);
        ck_assert_int_eq(virDomainRestore(conn, image), 0);
        fixture_spin_known(base, NULL, NULL, 200); /* its start event */
        a = virDomainLookupByName(conn, "rs-a");
        ck_assert_ptr_nonnull(a);

        /* the CPUs both vCPUs run on reserved: both are placed again, one after the other */
        cpuset_union(reserved, manager_lookup(m, "rs-a")->plan->vcpu_pins[0]);
        cpuset_union(reserved, manager_lookup(m, "rs-b")->plan->vcpu_pins[0]);
        ck_assert(!cpuset_intersects(reserved, mask));
        reserved_text = cpuset_format(reserved);
        conf = g_strdup_printf("[Placement]\nReconcileSec=0\nHeal=no\nLoadInterval=0\nMemoryBinding=no\n"
                               "VCPUPin=thread\nEmulatorPin=nodeset\nReservedCPUs=%s\n",
                               reserved_text);
        fixture_reload(m, conf);

        d = manager_lookup(m, "rs-a");
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(cpuset_equal(d->plan->emulator_pin, mask), "%s", d->reason);
        first = strstr(d->reason, "within the CPUs its QEMU threads started on");
        ck_assert_msg(first, "%s", d->reason);
        ck_assert_msg(!strstr(first + 1, "within the CPUs its QEMU threads started on"),
                      "the kept pin said twice: %s", d->reason);
        kept = cpuset_format(mask);
        ck_assert_msg(!strstr(d->reason, "moved to CPU"), "its emulator stays on %s: %s", kept, d->reason);
        g_unlink(image);
        fixture_stop(a);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/* How many decisions the manager made for each domain name. */
static void count_decision(Manager *m, const Decision *d, const char *uuid, const char *name, void *userdata)
{
        GHashTable *counts = userdata;
        (void)m;
        (void)uuid;

        if (d)
                g_hash_table_insert(
                    counts, g_strdup(name),
                    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(counts, name)) + 1));
}

/* A reload that reserves every CPU a domain runs on places it again, once: unplaceable (nothing left),
 * it is not placed a second time by the retry of the domains unplaceable before the reload, which would
 * say the same warning twice. */
START_TEST(test_reload_unplaceable_placed_once)
{
        Manager *m = fixture_manager_new(base, THREE_CORES, CONF);
        virDomainPtr a = start_one(m, "ru-a", "11111111-2222-3333-4444-555555555521");
        g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        const ManagerCallbacks cb = {.decision_changed = count_decision};

        ck_assert_int_eq(manager_lookup(m, "ru-a")->result, DECISION_PLACED);
        manager_set_callbacks(m, &cb, counts);
        fixture_reload(m, CONF "ReservedCPUs=0-5\n");
        ck_assert_int_eq(manager_lookup(m, "ru-a")->result, DECISION_UNPLACEABLE);
        ck_assert_uint_eq(GPOINTER_TO_UINT(g_hash_table_lookup(counts, "ru-a")), 1);
        manager_set_callbacks(m, &(const ManagerCallbacks){0}, NULL);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/*
 * Two domains of one vCPU on a host of two cores without SMT each run their emulator on their own core
 * (no idle sibling, no housekeeping CPU, no free core). A reload reserving CPU 0 places the one there again
 * beside the other, its emulator on CPU 0, now a housekeeping CPU; the other, whose CPUs the reload left
 * alone, has its emulator chosen again too: CPU 0, as a domain placed now would have it, and as its
 * replace gave it, not its own vCPU's core with a reason that says no housekeeping CPU is left.
 */
#define TWO_CORES "synthetic:pack:1 numa:1(memory=16GiB) l3:1 core:2 pu:1"

START_TEST(test_reload_reserving_rehouses_the_others)
{
        Manager *m = fixture_manager_new(base, TWO_CORES, CONF);
        virDomainPtr a = start_one(m, "rh-a", "11111111-2222-3333-4444-555555555531");
        virDomainPtr b = start_one(m, "rh-b", "11111111-2222-3333-4444-555555555532");
        const Decision *d = manager_lookup(m, "rh-a");
        virDomainPtr stays;
        const char *name;
        g_autoptr(CpuSet) vcpu = NULL;
        g_autoptr(CpuSet) live = NULL;
        g_autofree char *conf = NULL, *pin = NULL;
        unsigned reserve;

        ck_assert_int_eq(d->result, DECISION_PLACED);
        ck_assert_int_eq(manager_lookup(m, "rh-b")->result, DECISION_PLACED);
        /* the CPU of rh-a's vCPU is reserved: rh-b stays */
        reserve = cpuset_has(d->plan->vcpu_pins[0], 0) ? 0 : 1;
        stays = b;
        name = "rh-b";
        d = manager_lookup(m, name);
        vcpu = cpuset_copy(d->plan->vcpu_pins[0]);
        ck_assert_msg(!cpuset_has(vcpu, reserve) && cpuset_equal(d->plan->emulator_pin, vcpu), "%s",
                      d->reason);
        conf = g_strdup_printf(CONF "ReservedCPUs=%u\n", reserve);
        fixture_reload(m, conf);
        d = manager_lookup(m, name);
        pin = cpuset_format(d->plan->emulator_pin);
        ck_assert_msg(cpuset_equal(d->plan->vcpu_pins[0], vcpu), "its vCPU moved: %s", d->reason);
        ck_assert_msg(cpuset_count(d->plan->emulator_pin) == 1 && cpuset_has(d->plan->emulator_pin, reserve),
                      "its emulator on %s, not on the housekeeping CPU %u: %s", pin, reserve, d->reason);
        live = virt_domain_emulator_pin(stays);
        ck_assert_msg(live && cpuset_equal(live, d->plan->emulator_pin), "its emulator does not run on %s",
                      pin);
        fixture_stop(a);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/*
 * The same two domains with their memory bound by placementd at their start. The reload that reserves
 * rb-a's CPU moves rb-b's emulator only: its memory stays where it is bound, and libvirt would refuse a
 * second binding of a running domain, so none is made. rb-b's binding stays applied, with no error,
 * where a binding made again said it failed (in show, the metadata and after a restart).
 */
#define BIND_CONF "[Placement]\nReconcileSec=0\nHeal=no\nLoadInterval=0\nEmulatorPin=siblings\n"

START_TEST(test_reload_rehouse_binds_no_memory_again)
{
        Manager *m = fixture_manager_new(base, TWO_CORES, BIND_CONF);
        virDomainPtr a = start_one(m, "rb-a", "11111111-2222-3333-4444-555555555551");
        virDomainPtr b = start_one(m, "rb-b", "11111111-2222-3333-4444-555555555552");
        const Decision *d = manager_lookup(m, "rb-a");
        g_autoptr(CpuSet) emulator = NULL;
        g_autofree char *conf = NULL;
        unsigned reserve = cpuset_has(d->plan->vcpu_pins[0], 0) ? 0 : 1;

        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        d = manager_lookup(m, "rb-b");
        ck_assert_int_eq(d->memory_binding, MEMORY_BINDING_APPLIED);
        emulator = cpuset_copy(d->plan->emulator_pin);
        conf = g_strdup_printf(BIND_CONF "ReservedCPUs=%u\n", reserve);
        binding_fixed = true;
        fixture_reload(m, conf);
        binding_fixed = false;
        d = manager_lookup(m, "rb-b");
        ck_assert_msg(!cpuset_equal(d->plan->emulator_pin, emulator), "its emulator did not move: %s",
                      d->reason);
        ck_assert_msg(d->memory_binding == MEMORY_BINDING_APPLIED && !d->apply_error, "binding %s (%s): %s",
                      memory_binding_to_string(d->memory_binding), d->apply_error ? d->apply_error : "",
                      d->reason);
        fixture_stop(a);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/*
 * The same two domains, but the CPU of rs-a's vCPU reserved while placementd was stopped: the restarted
 * daemon places rs-a anew off it (its record is not adopted), as a reload would, and chooses rs-b's
 * emulator again too, as a reload does: CPU 0 or 1, now a housekeeping CPU, not rs-b's own vCPU's core
 * with a reason that says no housekeeping CPU is left.
 */
START_TEST(test_restart_reserving_rehouses_the_others)
{
        Manager *m = fixture_manager_new(base, TWO_CORES, CONF);
        virDomainPtr a = start_one(m, "rr-a", "11111111-2222-3333-4444-555555555571");
        virDomainPtr b = start_one(m, "rr-b", "11111111-2222-3333-4444-555555555572");
        const Decision *d = manager_lookup(m, "rr-a");
        g_autofree char *conf = NULL, *pin = NULL;
        unsigned reserve = cpuset_has(d->plan->vcpu_pins[0], 0) ? 0 : 1;

        d = manager_lookup(m, "rr-b");
        ck_assert_msg(cpuset_equal(d->plan->emulator_pin, d->plan->vcpu_pins[0]), "%s", d->reason);
        fixture_manager_free(base, m);
        conf = g_strdup_printf(CONF "ReservedCPUs=%u\n", reserve);
        m = fixture_manager_new(base, TWO_CORES, conf);
        ck_assert(fixture_spin_known(base, m, "rr-a", 3000));
        ck_assert(fixture_spin_known(base, m, "rr-b", 3000));
        ck_assert(!cpuset_has(manager_lookup(m, "rr-a")->plan->vcpu_pins[0], reserve));
        d = manager_lookup(m, "rr-b");
        pin = cpuset_format(d->plan->emulator_pin);
        ck_assert_msg(cpuset_count(d->plan->emulator_pin) == 1 && cpuset_has(d->plan->emulator_pin, reserve),
                      "its emulator on %s, not on the housekeeping CPU %u: %s", pin, reserve, d->reason);
        fixture_stop(a);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/*
 * An I/O thread pinned by hand is the user's from then on, also once placementd's own pins come to the
 * same CPU. ih-a's I/O thread 2, pinned by hand onto the CPU of ih-a's vCPU, is left there. A reload
 * reserving that CPU moves ih-a's vCPU off it and its emulator and I/O thread 1 onto it (the housekeeping
 * CPU): I/O thread 2 now runs where the decision's I/O threads do, and the reconcile took it for one added
 * live and claimed it (after a restart too), so that a reload to EmulatorPin=none and a replace undid the
 * user's pin.
 */
START_TEST(test_reload_hand_iothread_on_new_rule_stays_users)
{
        Manager *m = fixture_manager_new(base, TWO_CORES, BIND_CONF);
        virDomainPtr a = fixture_start_xml(conn, "ih-a",
                                           "<uuid>11111111-2222-3333-4444-555555555561</uuid><vcpu>1</vcpu>"
                                           "<iothreads>2</iothreads>");
        virDomainPtr b;
        const Decision *d;
        g_autofree char *conf = NULL, *ids = NULL, *error = NULL;
        unsigned char map;
        unsigned vcpu;

        ck_assert(fixture_spin_known(base, m, "ih-a", 3000));
        b = start_one(m, "ih-b", "11111111-2222-3333-4444-555555555562");
        d = manager_lookup(m, "ih-a");
        vcpu = cpuset_has(d->plan->vcpu_pins[0], 0) ? 0 : 1;
        ck_assert_msg(!cpuset_has(d->plan->iothread_pin, vcpu), "its I/O threads on its vCPU's CPU: %s",
                      d->reason);
        map = (unsigned char)(1u << vcpu);
        ck_assert_int_eq(virDomainPinIOThread(a, 2, &map, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        ids = cpuset_format(manager_lookup(m, "ih-a")->plan->iothreads);
        ck_assert_str_eq(ids, "1");
        conf = g_strdup_printf(BIND_CONF "ReservedCPUs=%u\n", vcpu);
        fixture_reload(m, conf);
        d = manager_lookup(m, "ih-a");
        ck_assert_msg(cpuset_count(d->plan->iothread_pin) == 1 && cpuset_has(d->plan->iothread_pin, vcpu),
                      "the decision's I/O threads are not on the housekeeping CPU %u: %s", vcpu, d->reason);
        manager_reconcile(m);
        g_free(ids);
        ids = cpuset_format(manager_lookup(m, "ih-a")->plan->iothreads);
        ck_assert_msg(strcmp(ids, "1") == 0, "the decision's I/O threads are %s: I/O thread 2 was claimed",
                      ids);
        /* and after a restart, which adopts the record naming it the user's */
        fixture_manager_free(base, m);
        m = fixture_manager_new(base, TWO_CORES, conf);
        ck_assert(fixture_spin_known(base, m, "ih-a", 3000));
        manager_reconcile(m);
        g_free(ids);
        ids = cpuset_format(manager_lookup(m, "ih-a")->plan->iothreads);
        ck_assert_msg(strcmp(ids, "1") == 0, "after a restart the decision's I/O threads are %s", ids);
        fixture_reload(m, "[Placement]\nReconcileSec=0\nHeal=no\nLoadInterval=0\nEmulatorPin=none\n");
        ck_assert_msg(manager_replace(m, "ih-a", &error) == 0, "%s", error);
        ck_assert_msg(fixture_iothread_map(a, 2) == map, "I/O thread 2 runs on 0x%x, pinned by hand to 0x%x",
                      fixture_iothread_map(a, 2), map);
        fixture_stop(a);
        fixture_stop(b);
        fixture_manager_free(base, m);
}
END_TEST

/*
 * A domain confined by its <vcpu cpuset='0'> and placed there: placementd's pin of its vCPU is the whole
 * cpuset. A reload reserving CPU 0 leaves it unplaceable, and it runs on the pin it had: counted so, shown
 * so, and said so, not taken for a vCPU floating over its cpuset ("nothing pinned", no pins at all).
 */
START_TEST(test_reload_unplaceable_keeps_cpuset_pin)
{
        Manager *m = fixture_manager_new(base, THREE_CORES, CONF);
        virDomainPtr a = fixture_start_xml(conn, "rc-a",
                                           "<uuid>11111111-2222-3333-4444-555555555541</uuid>"
                                           "<vcpu cpuset='0'>1</vcpu>");
        const Decision *d;
        g_autoptr(CpuSet) zero = NULL;

        ck_assert(fixture_spin_known(base, m, "rc-a", 3000));
        ck_assert_int_eq(cpuset_parse("0", &zero, NULL), 0);
        d = manager_lookup(m, "rc-a");
        ck_assert_msg(d->result == DECISION_PLACED && cpuset_equal(d->plan->vcpu_pins[0], zero), "%s",
                      d->reason);
        fixture_reload(m, CONF "ReservedCPUs=0\n");
        d = manager_lookup(m, "rc-a");
        ck_assert_int_eq(d->result, DECISION_UNPLACEABLE);
        ck_assert_msg(d->plan && d->plan->nvcpus == 1 && d->plan->vcpu_pins[0] &&
                          cpuset_equal(d->plan->vcpu_pins[0], zero),
                      "its pin that runs is not counted: %s", d->reason);
        ck_assert_msg(strstr(d->reason, "it runs on the pins it had"), "%s", d->reason);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

/*
 * Two nodes of one core each. A reload reserving CPU 0 places the domain there again beside the other on
 * CPU 1 (overcommitted: nothing else is left); a reload that gives CPU 0 back frees a core, and heal
 * moves one of the two onto it, as after a departure.
 */
#define TWO_NODES      "synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1"
#define TWO_NODES_CONF "[Placement]\nReconcileSec=0\nHealInterval=1\n"

/* Starts 1-vCPU domains a and b (names a_name, b_name) on m, one per node, then reloads m with CPU 0
 * kept from vCPUs: both run on CPU 1. */
static void both_on_cpu1(Manager *m, const char *a_name, const char *b_name, virDomainPtr doms[2])
{
        doms[0] = fixture_start_xml(conn, a_name, "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, a_name, 3000));
        doms[1] = fixture_start_xml(conn, b_name, "<vcpu>1</vcpu>");
        ck_assert(fixture_spin_known(base, m, b_name, 3000));
        fixture_reload(m, TWO_NODES_CONF "ReservedCPUs=0\n");
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), 1), 2);
}

/* Waits for a heal pass, then asserts each CPU runs one vCPU of a_name and b_name; stops them and m. */
static void healed_apart(Manager *m, const char *a_name, const char *b_name, virDomainPtr doms[2])
{
        fixture_spin_known(base, m, NULL, 2500);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), 0) == 1 && ledger_pu_load(manager_ledger(m), 1) == 1,
                      "CPU 0 runs %u vCPUs, CPU 1 %u: %s / %s", ledger_pu_load(manager_ledger(m), 0),
                      ledger_pu_load(manager_ledger(m), 1), manager_lookup(m, a_name)->reason,
                      manager_lookup(m, b_name)->reason);
        fixture_stop(doms[0]);
        fixture_stop(doms[1]);
        fixture_manager_free(base, m);
}

START_TEST(test_reload_freeing_cpus_heals)
{
        Manager *m = fixture_manager_new(base, TWO_NODES, TWO_NODES_CONF);
        virDomainPtr doms[2];

        both_on_cpu1(m, "rf-a", "rf-b", doms);
        fixture_reload(m, TWO_NODES_CONF);
        healed_apart(m, "rf-a", "rf-b", doms);
}
END_TEST

/* The same two domains sharing CPU 1 while CPU 0 is free (the reload that gave it back under Heal=no): a
 * restarted daemon adopts both records, says they share a core while one is free, and heal moves one. */
START_TEST(test_restart_heals_recorded_sharing)
{
        Manager *m = fixture_manager_new(base, TWO_NODES, TWO_NODES_CONF);
        virDomainPtr doms[2];

        both_on_cpu1(m, "rs-a", "rs-b", doms);
        fixture_reload(m, TWO_NODES_CONF "Heal=no\n");
        fixture_spin_known(base, m, NULL, 1500);
        ck_assert_uint_eq(ledger_pu_load(manager_ledger(m), 1), 2);
        fixture_manager_free(base, m);
        m = fixture_manager_new(base, TWO_NODES, TWO_NODES_CONF);
        ck_assert(fixture_spin_known(base, m, "rs-b", 3000));
        healed_apart(m, "rs-a", "rs-b", doms);
}
END_TEST

/* The same two domains sharing CPU 1 once CPU 0 is given back under Heal=no: the one not overcommitted
 * (placed there first) is moved by a replace onto CPU 0, and the one that stays on CPU 1 shares no core any
 * more: it reads placed, as it would had the other left. */
START_TEST(test_overcommitted_no_more_after_a_move)
{
        Manager *m = fixture_manager_new(base, TWO_NODES, TWO_NODES_CONF);
        virDomainPtr doms[2];
        const char *stays, *moves;
        const Decision *d;

        both_on_cpu1(m, "rm-a", "rm-b", doms);
        fixture_reload(m, TWO_NODES_CONF "Heal=no\n");
        stays = manager_lookup(m, "rm-a")->result == DECISION_OVERCOMMITTED ? "rm-a" : "rm-b";
        moves = strcmp(stays, "rm-a") == 0 ? "rm-b" : "rm-a";
        ck_assert_msg(manager_lookup(m, stays)->result == DECISION_OVERCOMMITTED, "%s",
                      manager_lookup(m, stays)->reason);
        ck_assert_int_eq(manager_replace(m, moves, NULL), 0);
        fixture_spin_known(base, m, NULL, 200);
        ck_assert_msg(ledger_pu_load(manager_ledger(m), 0) == 1 && ledger_pu_load(manager_ledger(m), 1) == 1,
                      "CPU 0 runs %u vCPUs, CPU 1 %u: %s", ledger_pu_load(manager_ledger(m), 0),
                      ledger_pu_load(manager_ledger(m), 1), manager_lookup(m, moves)->reason);
        d = manager_lookup(m, stays);
        ck_assert_msg(d->result == DECISION_PLACED && d->plan->shared_vcpus == 0, "%s: %s",
                      decision_result_to_string(d->result), d->reason);
        ck_assert_msg(
            strstr(d->reason, "no vCPU of it shares a core now: the domains it shared with left or moved"),
            "%s", d->reason);
        fixture_stop(doms[0]);
        fixture_stop(doms[1]);
        fixture_manager_free(base, m);
}
END_TEST

/* The same two domains sharing CPU 1 under Heal=no; placementd stops, the one not overcommitted leaves
 * meanwhile. The next placementd adopts the other's record, which says overcommitted beside a domain gone:
 * it shares no core, and reads placed. */
START_TEST(test_restart_overcommitted_alone_reads_placed)
{
        Manager *m = fixture_manager_new(base, TWO_NODES, TWO_NODES_CONF);
        virDomainPtr doms[2];
        unsigned stays;
        const Decision *d;

        both_on_cpu1(m, "ra-a", "ra-b", doms);
        fixture_reload(m, TWO_NODES_CONF "Heal=no\n");
        stays = manager_lookup(m, "ra-a")->result == DECISION_OVERCOMMITTED ? 0 : 1;
        ck_assert_int_eq(manager_lookup(m, virDomainGetName(doms[stays]))->result, DECISION_OVERCOMMITTED);
        fixture_manager_free(base, m);
        fixture_stop(doms[!stays]);
        m = fixture_manager_new(base, TWO_NODES, TWO_NODES_CONF "Heal=no\n");
        ck_assert(fixture_spin_known(base, m, virDomainGetName(doms[stays]), 3000));
        fixture_spin_known(base, m, NULL, 200);
        d = manager_lookup(m, virDomainGetName(doms[stays]));
        ck_assert_msg(d->result == DECISION_PLACED && d->plan->shared_vcpus == 0, "%s: %s",
                      decision_result_to_string(d->result), d->reason);
        ck_assert_msg(strstr(d->reason, "no vCPU of it shares a core now"), "%s", d->reason);
        fixture_stop(doms[stays]);
        fixture_manager_free(base, m);
}
END_TEST

/* The emulator placementd pinned set floating again by hand (virsh emulatorpin DOM 0-7 --live) while the
 * domain runs: a reload that places the domain anew (ReservedCPUs= takes its vCPU's core) leaves the
 * emulator floating, as it leaves a hand pin onto other CPUs. */
START_TEST(test_reload_keeps_emulator_floating_by_hand)
{
        Manager *m = fixture_manager_new(base, THREE_CORES, CONF);
        virDomainPtr a = fixture_start_xml(conn, "rc-float", "<vcpu>1</vcpu>");
        unsigned char map[1] = {0};
        g_autofree char *reserved = NULL;
        const Decision *d;
        int cpu;

        ck_assert(fixture_spin_known(base, m, "rc-float", 3000));
        d = manager_lookup(m, "rc-float");
        ck_assert_msg(d->result == DECISION_PLACED && !cpuset_is_empty(d->plan->emulator_pin), "%s",
                      d->reason);
        cpu = cpuset_next(d->plan->vcpu_pins[0], 0);
        ck_assert_int_ge(cpu, 0);
        ck_assert_int_eq(virDomainPinEmulator(a, &(unsigned char){0xff}, 1, VIR_DOMAIN_AFFECT_LIVE), 0);
        manager_reconcile(m);
        d = manager_lookup(m, "rc-float");
        ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin) && strstr(d->reason, "runs unpinned"), "%s",
                      d->reason);
        reserved = g_strdup_printf(CONF "ReservedCPUs=%d-%d\n", cpu & ~1, (cpu & ~1) + 1);
        fixture_reload(m, reserved);
        d = manager_lookup(m, "rc-float");
        ck_assert_msg(!cpuset_has(d->plan->vcpu_pins[0], (unsigned)cpu), "not placed anew: %s", d->reason);
        ck_assert_int_eq(virDomainGetEmulatorPinInfo(a, map, 1, VIR_DOMAIN_AFFECT_LIVE), 1);
        ck_assert_int_eq(map[0], 0xff);
        ck_assert_msg(cpuset_is_empty(d->plan->emulator_pin) && cpuset_is_empty(d->plan->held_pus) &&
                          strstr(d->reason, "the emulator runs unpinned"),
                      "%s", d->reason);
        fixture_stop(a);
        fixture_manager_free(base, m);
}
END_TEST

static Suite *manager_reload_suite(void)
{
        Suite *s = suite_create("manager reload");
        TCase *tc = tcase_create("reload");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_reload_emulators_one_order);
        tcase_add_test(tc, test_reload_emulators_other_order);
        tcase_add_test(tc, test_reload_restored_emulator_kept_within);
        tcase_add_test(tc, test_reload_unplaceable_placed_once);
        tcase_add_test(tc, test_reload_reserving_rehouses_the_others);
        tcase_add_test(tc, test_reload_rehouse_binds_no_memory_again);
        tcase_add_test(tc, test_reload_hand_iothread_on_new_rule_stays_users);
        tcase_add_test(tc, test_restart_reserving_rehouses_the_others);
        tcase_add_test(tc, test_reload_unplaceable_keeps_cpuset_pin);
        tcase_add_test(tc, test_reload_freeing_cpus_heals);
        tcase_add_test(tc, test_restart_heals_recorded_sharing);
        tcase_add_test(tc, test_overcommitted_no_more_after_a_move);
        tcase_add_test(tc, test_restart_overcommitted_alone_reads_placed);
        tcase_add_test(tc, test_reload_keeps_emulator_floating_by_hand);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(manager_reload_suite)
