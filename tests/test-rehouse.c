/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * QEMU's threads chosen again where a domain's vCPUs run (policy_rehouse()): a domain placed while another
 * still ran on the housekeeping CPUs' core had its emulator put on its own cores; once that one left, the
 * housekeeping CPUs take it, its vCPUs, nodes and memory as they were.
 */
#include <string.h>

#include "test-util.h"
#include "test-policy-util.h"

static CpuSet *set_of(const char *list)
{
        CpuSet *s = NULL;
        ck_assert_int_eq(cpuset_parse(list, &s, NULL), 0);
        return s;
}

static const Plan *place(const Topology *t, Ledger *l, const PlacementParams *p, const PlacementRequest *req)
{
        ledger_release(l, req->name);
        ck_assert_int_eq(ledger_commit(l, req->name, policy_place(t, l, req, p)), 0);
        return ledger_lookup(l, req->name);
}

/* policy_rehouse() for the domain req names, on l without it. */
static Plan *rehouse(const Topology *t, const Ledger *l, const PlacementParams *p,
                     const PlacementRequest *req)
{
        g_autoptr(Ledger) others = ledger_new_over(l);

        ck_assert_int_eq(ledger_release(others, req->name), 0);
        return policy_rehouse(t, others, req, p, ledger_lookup(l, req->name));
}

static void assert_set(const CpuSet *s, const char *want)
{
        g_autofree char *got = cpuset_format(s);
        ck_assert_str_eq(got, want);
}

/*
 * One node of 3 cores x 2 threads (CPUs 0-1, 2-3, 4-5), VCPUPin=thread, CPU 1 reserved: two domains of 3
 * vCPUs both run one on CPU 0. CPU 0 reserved too, a is placed again first: b still runs on core 0, so the
 * housekeeping CPUs 0-1 are not free, and a's emulator goes to its own cores. Once b is placed again off
 * core 0, a's emulator goes to CPUs 0-1; b's stays where it is.
 */
START_TEST(test_emulator_follows_a_later_move)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) before = set_of("1");
        g_autoptr(CpuSet) after = set_of("0-1");
        g_autoptr(Plan) moved = NULL;
        g_autoptr(Plan) stays = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {.name = "a", .vcpus = 3, .memory = GiB};
        PlacementRequest b = {.name = "b", .vcpus = 3, .memory = GiB};
        const Plan *pa, *pb;

        p.vcpu_pin = VCPU_PIN_THREAD;
        p.reserved_cpus = before;
        pa = place(t, l, &p, &a);
        pb = place(t, l, &p, &b);
        ck_assert(cpuset_has(pa->vcpu_pins[2], 0) && cpuset_has(pb->vcpu_pins[2], 0));

        p.reserved_cpus = after;
        pa = place(t, l, &p, &a);
        ck_assert_msg(strstr(pa->reason, "the emulator shares its own cores"), "%s", pa->reason);
        pb = place(t, l, &p, &b);
        assert_set(pb->emulator_pin, "0-1");

        moved = rehouse(t, l, &p, &a);
        ck_assert_ptr_nonnull(moved);
        assert_set(moved->emulator_pin, "0-1");
        for (unsigned i = 0; i < 3; i++) {
                ck_assert_int_eq(moved->vcpu_pu[i], pa->vcpu_pu[i]);
                ck_assert(cpuset_equal(moved->vcpu_pins[i], pa->vcpu_pins[i]));
        }
        ck_assert(cpuset_equal(moved->nodes, pa->nodes));
        ck_assert_int_eq(moved->result, pa->result);
        ck_assert_msg(!strstr(moved->reason, "its own cores") &&
                          strstr(moved->reason, "3 vCPUs share cores: "),
                      "%s", moved->reason);
        stays = rehouse(t, l, &p, &b);
        ck_assert_ptr_null(stays);
}
END_TEST

/* An emulator the definition pins stays the user's: nothing to choose again. */
START_TEST(test_user_emulator_stays)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 3, 2, 8 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) mine = set_of("5");
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest a = {
            .name = "a", .vcpus = 1, .memory = GiB, .emulator_cpus = mine, .keep_emulator = true};

        place(t, l, &p, &a);
        ck_assert_ptr_null(rehouse(t, l, &p, &a));
}
END_TEST

/*
 * An ordinary domain overcommitted onto the cores of an all-realtime domain has its emulator on its own
 * cores, beside those realtime vCPUs, and its reason says so. Once the realtime domain left (placed
 * elsewhere with it), the emulator goes to a free core: the reason no longer says the emulator shares
 * cores with realtime vCPUs, nor names the domain gone.
 */
START_TEST(test_realtime_note_follows_the_emulator)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 4, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(Plan) moved = NULL;
        g_autofree char *pin = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {.name = "rtall", .vcpus = 4, .memory = 4 * GiB, .realtime = true};
        PlacementRequest other = {.name = "other", .vcpus = 2, .memory = 2 * GiB};
        const Plan *po;

        place(t, l, &p, &rt);
        po = place(t, l, &p, &other);
        ck_assert_int_eq(po->result, PLAN_OVERCOMMITTED);
        ck_assert_msg(strstr(po->reason, "2 vCPUs and the emulator share cores with realtime (FIFO/RR) "
                                         "vCPUs of another domain (rtall)"),
                      "%s", po->reason);

        ck_assert_int_eq(ledger_release(l, "rtall"), 0);
        moved = rehouse(t, l, &p, &other);
        ck_assert_ptr_nonnull(moved);
        for (unsigned i = 0; i < moved->nvcpus; i++)
                ck_assert(!cpuset_intersects(moved->emulator_pin, moved->vcpu_pins[i]));
        pin = cpuset_format(moved->emulator_pin);
        ck_assert_msg(!strstr(moved->reason, "realtime") && !strstr(moved->reason, "rtall"),
                      "the emulator on %s, apart from any realtime vCPU: %s", pin, moved->reason);
}
END_TEST

/*
 * The same for a core held for another domain's FIFO emulator (one node of two cores without SMT: rt1's vCPU
 * on CPU 0, its emulator on CPU 1): a domain kept inside <vcpu cpuset='1'> is told that it shares that core
 * with rt1's realtime threads. Once rt1 left (and its cpuset let the emulator go elsewhere), its emulator
 * goes to CPU 0, and the reason names rt1 no more.
 */
START_TEST(test_realtime_threads_note_follows_the_emulator)
{
        g_autoptr(Topology) t = topology_new_uniform(1, 2, 1, 64 * GiB, NULL);
        g_autoptr(Ledger) l = ledger_new(t);
        g_autoptr(CpuSet) one = set_of("1");
        g_autoptr(Plan) moved = NULL;
        PlacementParams p = test_params(POLICY_EXPLICIT);
        PlacementRequest rt = {.name = "rt1", .vcpus = 1, .memory = GiB, .realtime_emulator = true};
        PlacementRequest other = {.name = "other", .vcpus = 1, .memory = GiB, .allowed_cpus = one};
        const Plan *po;

        assert_set(place(t, l, &p, &rt)->emulator_pin, "1");
        po = place(t, l, &p, &other);
        ck_assert_msg(strstr(po->reason,
                             "1 vCPU and the emulator share cores with realtime (FIFO/RR) emulator or "
                             "I/O threads of another domain (rt1): they preempt them whenever they "
                             "have work"),
                      "%s", po->reason);

        ck_assert_int_eq(ledger_release(l, "rt1"), 0);
        other.allowed_cpus = NULL;
        moved = rehouse(t, l, &p, &other);
        ck_assert_ptr_nonnull(moved);
        assert_set(moved->emulator_pin, "0");
        ck_assert_msg(!strstr(moved->reason, "realtime") && !strstr(moved->reason, "rt1") &&
                          !strstr(moved->reason, "have work"),
                      "%s", moved->reason);
}
END_TEST

static Suite *rehouse_suite(void)
{
        Suite *s = suite_create("policy rehouse");
        TCase *tc = tcase_create("rehouse");

        tcase_add_test(tc, test_emulator_follows_a_later_move);
        tcase_add_test(tc, test_user_emulator_stays);
        tcase_add_test(tc, test_realtime_note_follows_the_emulator);
        tcase_add_test(tc, test_realtime_threads_note_follows_the_emulator);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(rehouse_suite)
