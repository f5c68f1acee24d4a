/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Recorded metadata is untrusted: a record is rebuilt into a plan only when every field checks out. */
#include <check.h>
#include <string.h>

#include "metadata.h"
#include "test-util.h"

#define GiB (UINT64_C(1) << 30)

/* 2 nodes x 2 cores x 2 threads: node 0 has CPUs 0-3, node 1 CPUs 4-7; 8 GiB each. */
static Topology *host(void)
{
        return topology_new_uniform(2, 2, 2, 8 * GiB, NULL);
}

/* A domain of 2 vCPUs and 2 GiB whose record is the placed one below with one field replaced. */
static int adopt(const char *decision_attrs, const char *body, Plan **ret, char **ret_error)
{
        g_autoptr(Topology) t = host();
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *xml = g_strdup_printf(
            "<domain><name>d</name><vcpu>2</vcpu><memory unit='GiB'>2</memory><metadata>"
            "<p:domain xmlns:p='" PLACEMENTD_XMLNS "'><p:decision %s>%s</p:decision></p:domain>"
            "</metadata></domain>",
            decision_attrs, body);

        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        if (!s->decision) {
                *ret_error = g_strdup(s->decision_error);
                return -EINVAL;
        }
        return metadata_to_plan(t, s->decision, s->name, s->vcpus, s->vcpu_ids, s->memory, ret, ret_error);
}

#define ATTRS  "result='placed' policy='explicit' vcpu-pin='core' memory-binding='applied' nodes='0'"
#define VCPUS  "<p:vcpu id='0' cpu='0' cpuset='0-1'/><p:vcpu id='1' cpu='2' cpuset='2-3'/>"
#define MEMORY "<p:memory node='0' bytes='2147483648'/>"
#define REASON "<p:reason>fits</p:reason>"

START_TEST(test_valid_record)
{
        g_autoptr(Plan) p = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(adopt(ATTRS, VCPUS MEMORY REASON, &p, &error) == 0, "%s", error);
        ck_assert_int_eq(p->result, PLAN_PLACED);
        ck_assert_uint_eq(p->node_memory[0], 2 * GiB);
        ck_assert_int_eq(p->vcpu_pu[1], 2);
}
END_TEST

/* Pins as placementd makes them under each vcpu-pin: a core's threads (or one of them), one thread, any
 * CPUs of the nodes. */
START_TEST(test_pin_shapes_adopted)
{
        static const char *const records[][2] = {
            {ATTRS, "<p:vcpu id='0' cpu='1' cpuset='1'/><p:vcpu id='1' cpu='2' cpuset='2-3'/>" MEMORY},
            {"result='placed' policy='explicit' vcpu-pin='thread' nodes='0'",
             "<p:vcpu id='0' cpu='0' cpuset='0'/><p:vcpu id='1' cpu='2' cpuset='2'/>" MEMORY},
            {"result='placed' policy='explicit' vcpu-pin='nodeset' nodes='0'",
             "<p:vcpu id='0' cpu='0' cpuset='0-3'/><p:vcpu id='1' cpu='2' cpuset='0-3'/>" MEMORY},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(records); i++) {
                g_autoptr(Plan) p = NULL;
                g_autofree char *error = NULL;
                ck_assert_msg(adopt(records[i][0], records[i][1], &p, &error) == 0, "record %u: %s", i,
                              error);
        }
}
END_TEST

START_TEST(test_bad_records)
{
        static const struct {
                const char *attrs, *body, *needle;
        } cases[] = {
            /* unreadable: the record is dropped, not the domain */
            {ATTRS, "<p:vcpu id='0' cpu='99999' cpuset='0'/>", "cpu below"},
            {ATTRS " emulator='0-99999'", VCPUS MEMORY, "emulator"},
            /* results that are not a placement to adopt */
            {"result='unplaceable' policy='explicit' vcpu-pin='core' nodes='0'", VCPUS, "result"},
            {"result='advisory' policy='explicit' vcpu-pin='core' nodes='0'", VCPUS, "result"},
            {"policy='explicit' vcpu-pin='core' nodes='0'", VCPUS, "result"},
            /* words and text */
            {"result='placed' policy='explicit' vcpu-pin='everywhere' nodes='0'", VCPUS, "vcpu-pin"},
            {"result='placed' policy='explicit' vcpu-pin='core' memory-binding='x' nodes='0'", VCPUS,
             "memory-binding"},
            {ATTRS, VCPUS "<p:reason>fits\nplacementd: forged line</p:reason>", "control"},
            {ATTRS, VCPUS "<p:reason>fits\xc2\x85why: approved by root</p:reason>", "control"}, /* C1 NEL */
            {ATTRS, VCPUS "<p:reason>fits\xe2\x80\xae</p:reason>", "control"}, /* a bidi override */
            {ATTRS, VCPUS "<p:reason>fits&#13;forged</p:reason>", "control"},  /* a carriage return */
            /* a noncharacter: sd-bus sends no string holding one, the decision lists included */
            {ATTRS, VCPUS "<p:reason>fits&#xFDD0;</p:reason>", "control"},
            /* shape: vCPUs, CPUs, nodes */
            {ATTRS, "<p:vcpu id='0' cpu='0' cpuset='0-1'/>",
             "recorded decision has 1 vCPU, the domain runs 2"},
            {ATTRS, "<p:vcpu id='0' cpu='0' cpuset='0-1'/><p:vcpu id='0' cpu='2' cpuset='2-3'/>",
             "repeated"},
            {ATTRS, "<p:vcpu id='0' cpu='0' cpuset='0-1'/><p:vcpu id='1' cpu='9' cpuset='9'/>", "not on"},
            {ATTRS, "<p:vcpu id='0' cpu='0' cpuset='0-5'/><p:vcpu id='1' cpu='2' cpuset='2-3'/>", "nodes"},
            {ATTRS, "<p:vcpu id='0' cpu='0' cpuset='1'/><p:vcpu id='1' cpu='2' cpuset='2-3'/>", "its CPU"},
            /* a placement claims a core for each vCPU: not a pin over several cores (floating over the
             * whole node), nor more than one thread under vcpu-pin='thread' */
            {ATTRS, "<p:vcpu id='0' cpu='0' cpuset='0-3'/><p:vcpu id='1' cpu='2' cpuset='2-3'/>" MEMORY,
             "wider than vcpu-pin='core'"},
            {"result='overcommitted' policy='explicit' vcpu-pin='core' nodes='0-1'",
             "<p:vcpu id='0' cpu='1' cpuset='0-7'/><p:vcpu id='1' cpu='2' cpuset='2-3'/>" MEMORY,
             "wider than vcpu-pin='core'"},
            {"result='placed' policy='explicit' vcpu-pin='thread' nodes='0'",
             "<p:vcpu id='0' cpu='0' cpuset='0-1'/><p:vcpu id='1' cpu='2' cpuset='2'/>" MEMORY,
             "wider than vcpu-pin='thread'"},
            {"result='placed' policy='explicit' vcpu-pin='core' nodes='5'", VCPUS, "node 5"},
            {"result='placed' policy='explicit' vcpu-pin='core' nodes=''", VCPUS, "no node"},
            {ATTRS " emulator='0-9'", VCPUS MEMORY, "emulator"},
            /* memory */
            {ATTRS, VCPUS "<p:memory node='0' bytes='18446744073709551615'/>", "memory"},
            {ATTRS, VCPUS "<p:memory node='0' bytes='2147483648'/><p:memory node='0' bytes='1'/>", "memory"},
            {ATTRS, VCPUS "<p:memory node='1' bytes='1'/>", "memory node 1"},
            /* less than the domain has: the rest would be counted nowhere */
            {ATTRS, VCPUS "<p:memory node='0' bytes='1073741824'/>", "is not the domain's 2147483648"},
            {ATTRS, VCPUS, "recorded memory (0 bytes)"},
            /* I/O threads */
            {ATTRS " iothreads='1-2'", VCPUS MEMORY, "both"},
            {ATTRS " iothread-pin='1'", VCPUS MEMORY, "both"},
            {ATTRS " iothreads='0-1' iothread-pin='1'", VCPUS MEMORY, "id 0"},
            {ATTRS " iothreads='1' iothread-pin='0-9'", VCPUS MEMORY, "I/O thread pin"},
            {ATTRS " iothreads='1' iothread-pin=''", VCPUS MEMORY, "I/O thread pin"},
            {ATTRS " iothreads='x' iothread-pin='1'", VCPUS MEMORY, "I/O thread id"},
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(Plan) p = NULL;
                g_autofree char *error = NULL;
                ck_assert_msg(adopt(cases[i].attrs, cases[i].body, &p, &error) == -EINVAL, "case %u adopted",
                              i);
                ck_assert_msg(error && strstr(error, cases[i].needle), "case %u: %s", i, error);
        }
}
END_TEST

/* A reason longer than a record may hold (guest cells, constraints and notes add up) is recorded cut to
 * METADATA_MAX_REASON bytes at a character boundary: the record stays one a restart adopts. */
START_TEST(test_long_reason_recorded_adoptable)
{
        g_autoptr(Topology) t = host();
        g_autoptr(Plan) placed = plan_new("d", 2, 2 * GiB, t->nnodes), p = NULL;
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *meta = NULL, *xml = NULL, *error = NULL;
        GString *reason = g_string_new(NULL);

        while (reason->len < 3 * METADATA_MAX_REASON)
                g_string_append(reason, "node 0: \u00e9 free cores; ");
        placed->result = PLAN_PLACED;
        placed->reason = g_string_free(reason, FALSE);
        for (unsigned i = 0; i < 2; i++) {
                placed->vcpu_pu[i] = (int)(2 * i);
                cpuset_add(placed->vcpu_pins[i], 2 * i);
                cpuset_add(placed->vcpu_pins[i], 2 * i + 1);
        }
        placed->node_memory[0] = 2 * GiB;
        cpuset_add(placed->nodes, 0);
        meta = metadata_format(t, placed, "placed", MEMORY_BINDING_APPLIED, NULL);
        {
                /* as libvirt stores it: under a prefix bound to placementd's namespace */
                g_auto(GStrv) closing = g_strsplit(meta, "</", -1);
                g_autofree char *a = g_strjoinv("</p:", closing);
                g_auto(GStrv) opening = g_strsplit(a, "<", -1);
                g_autofree char *b = g_strjoinv("<p:", opening);
                g_autofree char *c = NULL;
                g_auto(GStrv) fixed = g_strsplit(b, "<p:/p:", -1);
                c = g_strjoinv("</p:", fixed);
                xml = g_strdup_printf("<domain><name>d</name><vcpu>2</vcpu><memory unit='GiB'>2</memory>"
                                      "<metadata><p:domain xmlns:p='" PLACEMENTD_XMLNS
                                      "'%s</metadata></domain>",
                                      c + strlen("<p:domain"));
        }
        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        ck_assert_msg(s->decision, "%s", s->decision_error ? s->decision_error : xml);
        ck_assert_msg(
            metadata_to_plan(t, s->decision, s->name, s->vcpus, s->vcpu_ids, s->memory, &p, &error) == 0,
            "%s", error);
        ck_assert_uint_le(strlen(p->reason), METADATA_MAX_REASON);
        ck_assert(g_str_has_suffix(p->reason, "..."));
        ck_assert(g_utf8_validate(p->reason, -1, NULL));
}
END_TEST

START_TEST(test_iothreads_read_back)
{
        /* metadata_format() records the I/O threads placementd pinned; the record comes back into the plan
         */
        g_autoptr(Topology) t = host();
        g_autoptr(Plan) p = NULL, placed = plan_new("d", 2, 2 * GiB, t->nnodes);
        g_autofree char *error = NULL, *meta = NULL, *ids = NULL, *pin = NULL;

        cpuset_add(placed->iothreads, 1);
        cpuset_add(placed->iothreads, 3);
        cpuset_add(placed->iothread_pin, 1);
        cpuset_add(placed->iothread_pin, 3);
        meta = metadata_format(t, placed, "placed", MEMORY_BINDING_APPLIED, NULL);
        ck_assert_msg(strstr(meta, " iothreads=\"1,3\" iothread-pin=\"1,3\""), "%s", meta);

        ck_assert_msg(adopt(ATTRS " iothreads='1,3' iothread-pin='1,3'", VCPUS MEMORY REASON, &p, &error) ==
                          0,
                      "%s", error);
        ids = cpuset_format(p->iothreads);
        pin = cpuset_format(p->iothread_pin);
        ck_assert_str_eq(ids, "1,3");
        ck_assert_str_eq(pin, "1,3");
        /* a record made before I/O threads were pinned adopts with none */
        g_clear_pointer(&p, plan_free);
        ck_assert_int_eq(adopt(ATTRS, VCPUS MEMORY REASON, &p, &error), 0);
        ck_assert(cpuset_is_empty(p->iothreads) && cpuset_is_empty(p->iothread_pin));
}
END_TEST

/* The run a record was written in: domain-id= is written when known and read back; one that is not a
 * number reads as unknown (it decides nothing but whether the run may have started on the record's pins)
 * and does not make the record unreadable. */
static unsigned recorded_domain_id(const char *attr)
{
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *xml =
            g_strdup_printf("<domain><name>d</name><vcpu>2</vcpu><memory unit='GiB'>2</memory><metadata>"
                            "<p:domain xmlns:p='" PLACEMENTD_XMLNS "'><p:decision " ATTRS
                            "%s>" VCPUS MEMORY REASON "</p:decision></p:domain></metadata></domain>",
                            attr);

        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        ck_assert_msg(s->decision, "%s", s->decision_error);
        return s->decision->domain_id;
}

START_TEST(test_domain_id_recorded)
{
        g_autoptr(Topology) t = host();
        g_autoptr(Plan) placed = plan_new("d", 2, 2 * GiB, t->nnodes);
        g_autoptr(CpuSet) threads = cpuset_new();
        MetaRun run = {
            .domain_id = 17, .boot_id = "0123abcd-0000-4000-8000-0123456789ab", .threads = threads};
        g_autofree char *with = NULL;
        g_autofree char *without = metadata_format(t, placed, "placed", MEMORY_BINDING_APPLIED, NULL);

        cpuset_add(threads, 1);
        cpuset_add(threads, 3);
        with = metadata_format_run(t, placed, "placed", MEMORY_BINDING_APPLIED, NULL, &run);
        ck_assert_msg(strstr(with, " domain-id=\"17\" boot-id=\"0123abcd-0000-4000-8000-0123456789ab\"") &&
                          strstr(with, " threads=\"1,3\""),
                      "%s", with);
        ck_assert_msg(!strstr(without, "domain-id"), "%s", without);
        ck_assert_uint_eq(recorded_domain_id(" domain-id='17'"), 17);
        ck_assert_uint_eq(recorded_domain_id(""), 0);
        ck_assert_uint_eq(recorded_domain_id(" domain-id='x17'"), 0);
        ck_assert_uint_eq(recorded_domain_id(" domain-id='99999999999'"), 0);
        ck_assert(uuid_text_valid("0123abcd-0000-4000-8000-0123456789ab"));
        ck_assert(!uuid_text_valid("0123abcd-0000-4000-8000-0123456789a"));
        ck_assert(!uuid_text_valid("0123abcd-0000-4000-8000x0123456789ab"));
        ck_assert(!uuid_text_valid(NULL));
}
END_TEST

START_TEST(test_bounded_text)
{
        g_autofree char *policy = g_strnfill(65536, 'x');
        g_autofree char *attrs =
            g_strdup_printf("result='placed' policy='%s' vcpu-pin='core' nodes='0'", policy);
        g_autofree char *reason = g_strnfill(METADATA_MAX_REASON + 1, 'r');
        g_autofree char *body = g_strdup_printf(VCPUS "<p:reason>%s</p:reason>", reason);
        g_autoptr(Plan) p = NULL;
        g_autofree char *error = NULL;

        ck_assert_int_eq(adopt(attrs, VCPUS, &p, &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "policy"));
        ck_assert_uint_lt(strlen(error), 200);
        g_clear_pointer(&error, g_free);
        ck_assert_int_eq(adopt(ATTRS, body, &p, &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "reason"));
        /* past the parser's own cap for one element's text (64 KiB): not read as an empty reason */
        {
                g_autofree char *huge = g_strnfill(70000, 'r');
                g_autofree char *huge_body = g_strdup_printf(VCPUS "<p:reason>%s</p:reason>", huge);
                g_clear_pointer(&error, g_free);
                ck_assert_int_eq(adopt(ATTRS, huge_body, &p, &error), -EINVAL);
                ck_assert_msg(error && strstr(error, "reason"), "%s", error);
        }
}
END_TEST

START_TEST(test_skipped_record)
{
        /* pins made by hand may be anywhere on the host, and vCPUs left floating are not listed */
        g_autoptr(Plan) p = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(adopt("result='skipped' policy='explicit' vcpu-pin='core' nodes='1'",
                            "<p:vcpu id='1' cpu='0' cpuset='0,7'/>", &p, &error) == 0,
                      "%s", error);
        ck_assert_int_eq(p->result, PLAN_ADOPTED);
        ck_assert_int_eq(p->vcpu_pu[0], -1);
}
END_TEST

/* vCPU 1 of 0-2 unplugged: the record names libvirt's ids 0 and 2, the plan holds them as its vCPUs 0-1 */
START_TEST(test_sparse_vcpu_ids)
{
        g_autoptr(Topology) t = host();
        g_autoptr(Plan) p = plan_new("d", 2, 2 * GiB, t->nnodes);
        g_autoptr(Plan) back = NULL;
        g_autoptr(Plan) refused = NULL;
        g_autoptr(DomainSpec) s = NULL;
        g_autoptr(DomainSpec) dense = NULL;
        g_autofree char *record = NULL, *xml = NULL, *dense_xml = NULL, *error = NULL;
        const unsigned ids[] = {0, 2};

        p->result = PLAN_PLACED;
        cpuset_add(p->nodes, 0);
        p->node_memory[0] = 2 * GiB;
        for (unsigned i = 0; i < 2; i++) {
                p->vcpu_pu[i] = (int)(2 * i);
                cpuset_add(p->vcpu_pins[i], 2 * i);
                cpuset_add(p->vcpu_pins[i], 2 * i + 1);
        }
        plan_set_vcpu_ids(p, ids, 2);
        record = metadata_format(t, p, "placed", MEMORY_BINDING_APPLIED, NULL);
        ck_assert_msg(strstr(record, "id=\"0\"") && strstr(record, "id=\"2\"") &&
                          !strstr(record, "id=\"1\""),
                      "%s", record);
        xml = test_domain_with_record("d",
                                      "<vcpu current='2'>3</vcpu><vcpus><vcpu id='0' enabled='yes'/><vcpu "
                                      "id='1' enabled='no'/><vcpu id='2' enabled='yes'/></vcpus>"
                                      "<memory unit='GiB'>2</memory>",
                                      g_strdup(record));
        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        ck_assert_msg(s->decision, "%s", s->decision_error);
        ck_assert_msg(
            metadata_to_plan(t, s->decision, "d", s->vcpus, s->vcpu_ids, s->memory, &back, &error) == 0,
            "%s", error);
        ck_assert_uint_eq(plan_vcpu_id(back, 1), 2);
        ck_assert_int_eq(back->vcpu_pu[1], 2);
        ck_assert(cpuset_equal(back->vcpu_pins[1], p->vcpu_pins[1]));
        /* the same record on a domain whose vCPUs 0 and 1 run: vCPU 2 is not one of them */
        g_clear_pointer(&error, g_free);
        dense_xml = test_domain_with_record("d", "<vcpu>2</vcpu><memory unit='GiB'>2</memory>",
                                            g_steal_pointer(&record));
        ck_assert_int_eq(domain_xml_parse(dense_xml, &dense, NULL), 0);
        ck_assert_int_eq(metadata_to_plan(t, dense->decision, "d", dense->vcpus, dense->vcpu_ids,
                                          dense->memory, &refused, &error),
                         -EINVAL);
        ck_assert_msg(strstr(error, "vCPU 2 is not online"), "%s", error);
}
END_TEST

static Suite *metadata_suite(void)
{
        Suite *s = suite_create("metadata");
        TCase *tc = tcase_create("adopt");
        tcase_add_test(tc, test_valid_record);
        tcase_add_test(tc, test_sparse_vcpu_ids);
        tcase_add_test(tc, test_bad_records);
        tcase_add_test(tc, test_pin_shapes_adopted);
        tcase_add_test(tc, test_long_reason_recorded_adoptable);
        tcase_add_test(tc, test_iothreads_read_back);
        tcase_add_test(tc, test_domain_id_recorded);
        tcase_add_test(tc, test_bounded_text);
        tcase_add_test(tc, test_skipped_record);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(metadata_suite)
