/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Domain XML: the user's definition snapshot and the recorded metadata read back. */
#include <check.h>
#include <string.h>

#include "domain-xml.h"
#include "spec-record.h"
#include "test-util.h"

#define NS "xmlns:placementd='" PLACEMENTD_XMLNS "'"

START_TEST(test_snapshot_keeps_user_elements)
{
        static const char xml[] =
            "<domain type='kvm'><name>d</name><memory unit='MiB'>512</memory>"
            "<vcpu placement='static' current='1'>2</vcpu>"
            "<cputune><vcpupin vcpu='0' cpuset='1&amp;'/><emulatorpin cpuset='0'/></cputune>"
            "<numatune><memory mode='strict' nodeset='0'/></numatune>"
            "<cpu mode='host-model'><numa><cell id='0' cpus='0-1' memory='512' unit='MiB'/></numa></cpu>"
            "<devices><disk/></devices></domain>";
        g_autoptr(DomainSpec) s = NULL;
        g_autoptr(DomainSpec) again = NULL;

        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        ck_assert_str_eq(
            s->user_xml,
            "<domain><vcpu placement=\"static\" current=\"1\">2</vcpu>"
            "<cputune><vcpupin vcpu=\"0\" cpuset=\"1&amp;\"></vcpupin>"
            "<emulatorpin cpuset=\"0\"></emulatorpin></cputune>"
            "<numatune><memory mode=\"strict\" nodeset=\"0\"></memory></numatune>"
            "<cpu><numa><cell id=\"0\" cpus=\"0-1\" memory=\"512\" unit=\"MiB\"></cell></numa></cpu>"
            "</domain>");
        /* read back: the same facts, and the same snapshot */
        ck_assert_int_eq(domain_xml_parse_definition(s->user_xml, &again, NULL), 0);
        ck_assert(again->has_vcpupin);
        ck_assert(again->has_emulatorpin);
        ck_assert_uint_eq(again->vcpus, 1);
        ck_assert_uint_eq(again->max_vcpus, 2);
        ck_assert_str_eq(again->user_xml, s->user_xml);
}
END_TEST

START_TEST(test_recorded_definition)
{
        g_autofree char *big = g_strnfill(DOMAIN_XML_MAX_DEFINITION + 1, 'x');
        g_autofree char *xml = NULL;
        g_autoptr(DomainSpec) s = NULL;
        g_autoptr(DomainSpec) t = NULL;

        xml = g_strdup("<domain><name>d</name><vcpu>1</vcpu><metadata><placementd:domain " NS ">"
                       "<placementd:definition>&lt;domain&gt;&lt;vcpu&gt;1&lt;/vcpu&gt;&lt;cputune&gt;"
                       "&lt;vcpupin vcpu='0' cpuset='1'/&gt;&lt;/cputune&gt;&lt;/domain&gt;"
                       "</placementd:definition></placementd:domain></metadata></domain>");
        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        ck_assert_ptr_nonnull(s->definition);
        ck_assert(!s->has_vcpupin);
        ck_assert_int_eq(domain_xml_parse_definition(s->definition, &t, NULL), 0);
        ck_assert(t->has_vcpupin);
        g_clear_pointer(&s, domain_spec_free);

        /* too big to be the small snapshot placementd writes: not read back */
        g_free(xml);
        xml = g_strdup_printf("<domain><name>d</name><metadata><placementd:domain " NS ">"
                              "<placementd:definition>%s</placementd:definition></placementd:domain>"
                              "</metadata></domain>",
                              big);
        ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
        ck_assert_ptr_null(s->definition);
        ck_assert(s->definition_too_big);
        ck_assert_int_lt(domain_xml_parse_definition(big, &t, NULL), 0);
}
END_TEST

/* Pins of a definition are placementd's own only when they are exactly its recorded ones. */
START_TEST(test_pins_recorded)
{
        static const struct {
                const char *cputune;
                bool own;
        } cases[] = {
            {"<vcpupin vcpu='1' cpuset='2-3'/><vcpupin vcpu='0' cpuset='0-1'/>", true},
            {"<vcpupin vcpu='0' cpuset='0-1'/><vcpupin vcpu='1' cpuset='2'/>", false},
            {"<vcpupin vcpu='0' cpuset='0-1'/>", false},
            {"<vcpupin vcpu='0' cpuset='0-1'/><vcpupin vcpu='0' cpuset='0-1'/>", false},
            {"<vcpupin vcpu='0' cpuset='0-1'/><vcpupin vcpu='1' cpuset='2-3'/><vcpupin vcpu='2' "
             "cpuset='0'/>",
             false},
            {"<vcpupin vcpu='0' cpuset='0-1'/><vcpupin vcpu='1' cpuset='bad'/>", false},
            {"", false},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain><name>d</name><vcpu>3</vcpu><cputune>%s</cputune><metadata><p:domain "
                    "xmlns:p='" PLACEMENTD_XMLNS "'><p:decision result='placed' policy='explicit' "
                    "vcpu-pin='core' nodes='0'><p:vcpu id='0' cpu='0' cpuset='0-1'/><p:vcpu id='1' cpu='2' "
                    "cpuset='2-3'/></p:decision></p:domain></metadata></domain>",
                    cases[i].cputune);
                g_autoptr(DomainSpec) spec = NULL;
                g_autofree char *error = NULL;

                ck_assert_int_eq(domain_xml_parse(xml, &spec, &error), 0);
                ck_assert_msg(domain_spec_pins_recorded(spec) == cases[i].own, "case %u", i);
        }
}
END_TEST

/* A persistent definition made from live XML: placementd's pins, emulator pin and memory binding, and
 * its record (the user's definition was <vcpu>1</vcpu> only), with `tail` before </domain>. */
static DomainSpec *made_from_live(const char *vcpu, const char *cputune, const char *numatune,
                                  const char *tail)
{
        g_autofree char *xml = g_strdup_printf(
            "<domain type='kvm'><name>d</name><memory unit='MiB'>512</memory>%s"
            "<cputune>%s</cputune><numatune>%s</numatune>%s"
            "<metadata><placementd:domain " NS "><placementd:decision result='placed' policy='explicit' "
            "vcpu-pin='core' nodes='0' emulator='1' memory-binding='applied'>"
            "<placementd:vcpu id='0' cpu='0' cpuset='0-1'/><placementd:memory node='0' bytes='536870912'/>"
            "</placementd:decision></placementd:domain></metadata></domain>",
            vcpu, cputune, numatune, tail);
        DomainSpec *s = NULL;
        g_autofree char *error = NULL;
        ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "%s", error);
        return s;
}

START_TEST(test_record_explains)
{
        static const char own_pins[] = "<vcpupin vcpu='0' cpuset='0-1'/><emulatorpin cpuset='1'/>",
                          own_binding[] = "<memory mode='strict' nodeset='0'/>", vcpu[] = "<vcpu>1</vcpu>",
                          cells[] =
                              "<cpu><numa><cell id='0' cpus='0' memory='512' unit='MiB'/></numa></cpu>";
        static const struct {
                const char *vcpu, *cputune, *numatune, *tail;
                bool explained;
        } cases[] = {
            {vcpu, own_pins, own_binding, "", true},                            /* only placementd's own */
            {vcpu, "", "", "", true},                                           /* its own taken out */
            {"<vcpu cpuset='2-3'>1</vcpu>", "", "", "", false},                 /* a cpuset added */
            {vcpu, "<vcpupin vcpu='0' cpuset='2'/>", "", "", false},            /* other pins */
            {vcpu, "<emulatorpin cpuset='2'/>", "", "", false},                 /* another emulator pin */
            {vcpu, own_pins, "<memory mode='strict' nodeset='1'/>", "", false}, /* another binding */
            {vcpu, own_pins, "<memnode cellid='0' mode='strict' nodeset='0'/>", cells, false},
            {vcpu, own_pins, own_binding, cells, false},            /* guest cells added */
            {"<vcpu placement='auto'>1</vcpu>", "", "", "", false}, /* an opt-out */
        };
        g_autoptr(DomainSpec) snapshot = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(domain_xml_parse_definition("<domain><vcpu>1</vcpu></domain>", &snapshot, &error) == 0,
                      "%s", error);
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(DomainSpec) def =
                    made_from_live(cases[i].vcpu, cases[i].cputune, cases[i].numatune, cases[i].tail);
                ck_assert_msg(domain_spec_record_explains(def, snapshot) == cases[i].explained, "case %u",
                              i);
        }
}
END_TEST

/* The guest's <distances> are the user's: a definition whose cells gained them since the snapshot is the
 * user's edit, not placementd's record. */
START_TEST(test_record_explains_cell_distances)
{
#define CELL1 "<cell id='1' cpus='' memory='256' unit='MiB'/></numa></cpu>"
        static const char own_pins[] = "<vcpupin vcpu='0' cpuset='0-1'/><emulatorpin cpuset='1'/>",
                          own_binding[] = "<memory mode='strict' nodeset='0'/>",
                          plain[] = "<cpu><numa><cell id='0' cpus='0' memory='256' unit='MiB'/>" CELL1,
                          near[] = "<cpu><numa><cell id='0' cpus='0' memory='256' unit='MiB'><distances>"
                                   "<sibling id='1' value='20'/></distances></cell>" CELL1;
#undef CELL1
        g_autofree char *snapshot_xml = g_strdup_printf("<domain><vcpu>1</vcpu>%s</domain>", plain);
        g_autoptr(DomainSpec) snapshot = NULL,
                              same = made_from_live("<vcpu>1</vcpu>", own_pins, own_binding, plain),
                              edited = made_from_live("<vcpu>1</vcpu>", own_pins, own_binding, near);
        g_autofree char *error = NULL;

        ck_assert_msg(domain_xml_parse_definition(snapshot_xml, &snapshot, &error) == 0, "%s", error);
        ck_assert(domain_spec_record_explains(same, snapshot));
        ck_assert(!domain_spec_record_explains(edited, snapshot));
}
END_TEST

/* The record of a hugepage-backed guest with cells: the snapshot keeps <vcpu>, <cputune>, <numatune> and the
 * cells, not <memoryBacking> (which no one changes on a running domain), so its cells read as backed by
 * no pages; the running guest's are, and that is no edit of the user's. */
START_TEST(test_record_explains_hugepage_cells)
{
        static const char cells[] = "<cpu><numa><cell id='0' cpus='0' memory='256' unit='MiB'/>"
                                    "<cell id='1' cpus='1' memory='256' unit='MiB'/></numa></cpu>",
                          backing[] = "<memoryBacking><hugepages/></memoryBacking>";
        g_autofree char *first_xml = g_strdup_printf(
            "<domain type='kvm'><name>d</name><memory unit='MiB'>512</memory><vcpu>2</vcpu>%s%s"
            "<cputune><iothreadpin iothread='1' cpuset='1'/></cputune><iothreads>1</iothreads></domain>",
            cells, backing);
        g_autofree char *tail = g_strdup_printf("%s%s<iothreads>1</iothreads>", cells, backing);
        g_autoptr(DomainSpec) first = NULL, snapshot = NULL, live = NULL;
        g_autofree char *error = NULL;

        /* the snapshot as placementd records it at the first placement */
        ck_assert_msg(domain_xml_parse(first_xml, &first, &error) == 0, "%s", error);
        ck_assert(first->hugepages);
        ck_assert_ptr_nonnull(first->user_xml);
        ck_assert_msg(domain_xml_parse_definition(first->user_xml, &snapshot, &error) == 0, "%s", error);
        /* the running guest as read at its next reconcile: placementd's vCPU pins, its record */
        live = made_from_live("<vcpu>2</vcpu>",
                              "<vcpupin vcpu='0' cpuset='0-1'/><iothreadpin iothread='1' cpuset='1'/>", "",
                              tail);
        ck_assert(live->hugepages);
        ck_assert(domain_spec_record_explains_live(live, snapshot));
        ck_assert(domain_spec_record_explains(live, snapshot));
}
END_TEST

/* So is a DIMM in a cell: its size is the cell's memory as the request counts it, not what the cell
 * states, and one of another backing is a cell of its own; the snapshot has no devices. */
START_TEST(test_record_explains_dimm_cells)
{
        static const char *const dimms[] = {
            "<memory model='dimm'><target><size unit='MiB'>256</size><node>0</node></target></memory>",
            "<memory model='dimm'><source><pagesize unit='KiB'>2048</pagesize></source>"
            "<target><size unit='MiB'>256</size><node>0</node></target></memory>",
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(dimms); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain type='kvm'><name>d</name><maxMemory slots='2' unit='MiB'>2048</maxMemory>"
                    "<memory unit='MiB'>768</memory><vcpu>1</vcpu>"
                    "<cpu><numa><cell id='0' cpus='0' memory='512' unit='MiB'/></numa></cpu>"
                    "<devices>%s</devices></domain>",
                    dimms[i]);
                g_autoptr(DomainSpec) live = NULL, snapshot = NULL, other = NULL;
                g_autofree char *error = NULL;

                ck_assert_msg(domain_xml_parse(xml, &live, &error) == 0, "%s", error);
                ck_assert_msg(domain_xml_parse_definition(live->user_xml, &snapshot, &error) == 0, "%s",
                              error);
                ck_assert_msg(domain_spec_record_explains_live(live, snapshot), "case %u", i);
                /* a cell stated otherwise is still the user's edit */
                ck_assert_msg(domain_xml_parse_definition("<domain><vcpu>1</vcpu><cpu><numa><cell id='0' "
                                                          "cpus='0' memory='768' unit='MiB'/></numa></cpu>"
                                                          "</domain>",
                                                          &other, &error) == 0,
                              "%s", error);
                ck_assert_msg(!domain_spec_record_explains_live(live, other), "case %u", i);
        }
}
END_TEST

START_TEST(test_drop_recorded)
{
        /* without a snapshot: the emulator pin and binding equal to the record are placementd's own */
        g_autoptr(DomainSpec) own = made_from_live("<vcpu>1</vcpu>", "<emulatorpin cpuset='1'/>",
                                                   "<memory mode='strict' nodeset='0'/>", "");
        g_autoptr(DomainSpec) user = made_from_live("<vcpu>1</vcpu>", "<emulatorpin cpuset='0'/>",
                                                    "<memory mode='strict' nodeset='0-1'/>", "");

        domain_spec_drop_recorded(own, own);
        ck_assert(!own->has_emulatorpin);
        ck_assert_ptr_null(own->memory_nodeset);
        domain_spec_drop_recorded(user, user);
        ck_assert(user->has_emulatorpin);
        ck_assert_ptr_nonnull(user->memory_nodeset);
}
END_TEST

START_TEST(test_foreign_record)
{
        /* a record that names another domain's UUID was copied with its definition: not this domain's */
        static const struct {
                const char *attr;
                bool kept;
        } cases[] = {
            {"", true}, /* written before the UUID was */
            {" uuid='A0000000-0000-4000-8000-000000000001'", true},
            {" uuid='a0000000-0000-4000-8000-000000000002'", false},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain><name>d</name><uuid>a0000000-0000-4000-8000-000000000001</uuid><vcpu>1</vcpu>"
                    "<metadata><placementd:domain " NS " skip='yes'>"
                    "<placementd:definition>&lt;domain&gt;&lt;vcpu&gt;1&lt;/vcpu&gt;&lt;/domain&gt;"
                    "</placementd:definition><placementd:decision result='placed' policy='explicit' "
                    "vcpu-pin='core' nodes='0'%s><placementd:vcpu id='0' cpu='0' cpuset='0-1'/>"
                    "</placementd:decision></placementd:domain></metadata></domain>",
                    cases[i].attr);
                g_autoptr(DomainSpec) s = NULL;
                ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
                ck_assert_msg((s->decision != NULL) == cases[i].kept, "case %u", i);
                ck_assert_msg((s->definition != NULL) == cases[i].kept, "case %u", i);
                ck_assert(s->record_foreign == !cases[i].kept);
                ck_assert(s->meta_skip); /* the user's own attributes stay */
        }
}
END_TEST

/* <vcpus>: the ids of the online vCPUs, kept only when they are not 0..n-1 and agree with <vcpu current> */
START_TEST(test_online_vcpu_ids)
{
        static const struct {
                const char *vcpu, *vcpus, *ids; /* ids: "" = none kept */
        } cases[] = {
            {"<vcpu current='2'>3</vcpu>",
             "<vcpu id='0' enabled='yes'/><vcpu id='1' enabled='no'/>"
             "<vcpu id='2' enabled='yes'/>",
             "0 2"},
            {"<vcpu current='2'>4</vcpu>",
             "<vcpu id='0' enabled='no'/><vcpu id='1' enabled='no'/>"
             "<vcpu id='3' enabled='yes'/><vcpu id='2' enabled='yes'/>",
             "2 3"},
            /* dense: nothing to map */
            {"<vcpu current='2'>3</vcpu>",
             "<vcpu id='0' enabled='yes'/><vcpu id='1' enabled='yes'/>"
             "<vcpu id='2' enabled='no'/>",
             ""},
            /* not libvirt's: the count disagrees, or an id is unreadable */
            {"<vcpu current='1'>3</vcpu>", "<vcpu id='0' enabled='yes'/><vcpu id='2' enabled='yes'/>", ""},
            {"<vcpu current='2'>3</vcpu>", "<vcpu id='x' enabled='yes'/><vcpu id='2' enabled='yes'/>", ""},
            {"<vcpu current='2'>4</vcpu>", "<vcpu id='0' enabled='yes'/><vcpu id='16383' enabled='yes'/>",
             ""},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf("<domain><name>d</name>%s<vcpus>%s</vcpus></domain>",
                                                       cases[i].vcpu, cases[i].vcpus);
                g_autoptr(DomainSpec) s = NULL;
                g_autoptr(GString) ids = g_string_new(NULL);
                ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
                for (unsigned v = 0; s->vcpu_ids && v < s->vcpus; v++)
                        g_string_append_printf(ids, "%s%u", v ? " " : "", s->vcpu_ids[v]);
                ck_assert_msg(strcmp(ids->str, cases[i].ids) == 0, "case %u: '%s'", i, ids->str);
                ck_assert_uint_eq(domain_spec_vcpu_id(s, s->vcpus - 1),
                                  *cases[i].ids ? (unsigned)(cases[i].ids[2] - '0') : s->vcpus - 1);
        }
}
END_TEST

/* An nvdimm that libvirt maps privately (no access='shared' on it, nor <memoryBacking><access
 * mode='shared'>) is preallocated by QEMU in anonymous memory (numa_maps: "anon=" its whole size): host RAM
 * of its guest cell, as a DIMM's; a shared one is the file's, and one on a DAX device (/dev/...) is not
 * RAM: both left out as before. */
START_TEST(test_private_nvdimm_is_ram)
{
        static const struct {
                const char *access, *path, *backing;
                uint64_t ram_mib;
        } cases[] = {
            {"", "/var/lib/pmem.img", "", 6144},
            {" access='private'", "/var/lib/pmem.img",
             "<memoryBacking><access mode='shared'/></memoryBacking>", 6144},
            {" access='shared'", "/var/lib/pmem.img", "", 4096},
            {"", "/var/lib/pmem.img", "<memoryBacking><access mode='shared'/></memoryBacking>", 4096},
            {"", "/dev/dax0.0", "", 4096},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain><name>d</name><maxMemory slots='2' unit='GiB'>16</maxMemory><memory "
                    "unit='MiB'>6144</memory><vcpu>2</vcpu><cpu><numa><cell id='0' cpus='0-1' memory='4' "
                    "unit='GiB'/></numa></cpu><devices><memory model='nvdimm'%s><source><path>%s</path>"
                    "</source><target><size unit='GiB'>2</size><node>0</node></target></memory></devices>%s"
                    "</domain>",
                    cases[i].access, cases[i].path, cases[i].backing);
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *error = NULL;
                ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "case %u: %s", i, error);
                ck_assert_msg(s->memory == cases[i].ram_mib << 20, "case %u: %llu MiB", i,
                              (unsigned long long)(s->memory >> 20));
                ck_assert_msg(g_array_index(s->cells, DomainCell, 0).memory == cases[i].ram_mib << 20,
                              "case %u: cell %llu MiB", i,
                              (unsigned long long)(g_array_index(s->cells, DomainCell, 0).memory >> 20));
        }
}
END_TEST

/* <memory> counts every memory device (libvirt adds them up): nvdimm and virtio-pmem are files or DAX
 * devices, not host RAM, and are left out; a DIMM is RAM and stays in */
START_TEST(test_persistent_memory_not_ram)
{
        static const struct {
                const char *devices;
                uint64_t ram_mib;
        } cases[] = {
            {"", 70656},
            {"<memory model='nvdimm'><source><path>/dev/dax0.0</path></source><target><size unit='GiB'>62"
             "</size><node>0</node></target></memory>",
             7168},
            {"<memory model='virtio-pmem' access='shared'><source><path>/tmp/pmem</path></source><target>"
             "<size unit='KiB'>65011712</size></target></memory>",
             7168},
            {"<memory model='dimm'><target><size unit='GiB'>62</size><node>0</node></target></memory>",
             70656},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml =
                    g_strdup_printf("<domain><name>d</name><memory unit='MiB'>70656</memory><vcpu>2</vcpu>"
                                    "<devices>%s</devices></domain>",
                                    cases[i].devices);
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *error = NULL;
                ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "case %u: %s", i, error);
                ck_assert_msg(s->memory == cases[i].ram_mib << 20, "case %u: %llu MiB", i,
                              (unsigned long long)(s->memory >> 20));
        }
}
END_TEST

/* <vcpusched scheduler='fifo|rr'> makes realtime vCPUs; batch and idle do not */
START_TEST(test_realtime_vcpusched)
{
        static const struct {
                const char *scheduler;
                bool realtime;
        } cases[] = {{"fifo", true}, {"rr", true}, {"batch", false}, {"idle", false}};
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml =
                    g_strdup_printf("<domain><name>d</name><vcpu>2</vcpu><cputune><vcpusched "
                                    "vcpus='0-1' scheduler='%s' priority='1'/></cputune></domain>",
                                    cases[i].scheduler);
                g_autoptr(DomainSpec) s = NULL;
                ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
                ck_assert_msg(s->realtime == cases[i].realtime, "%s", cases[i].scheduler);
        }
}
END_TEST

/* <emulatorsched> and <iothreadsched> of a realtime scheduler: the emulator, and the I/O threads they name,
 * run FIFO/RR (other schedulers do not count); an invalid iothreads= list is an error naming it */
START_TEST(test_realtime_threads)
{
        g_autoptr(DomainSpec) s = NULL;
        g_autoptr(DomainSpec) o = NULL;
        g_autoptr(DomainSpec) bad = NULL;
        g_autofree char *error = NULL;
        g_autofree char *ids = NULL;

        ck_assert_int_eq(
            domain_xml_parse("<domain><name>d</name><vcpu>2</vcpu><iothreads>3</iothreads><cputune>"
                             "<emulatorsched scheduler='fifo' priority='1'/><iothreadsched "
                             "iothreads='1-2' scheduler='rr' priority='1'/><iothreadsched "
                             "iothreads='3' scheduler='batch'/></cputune></domain>",
                             &s, NULL),
            0);
        ck_assert(s->realtime_emulator);
        ck_assert_ptr_nonnull(s->realtime_iothreads);
        ids = cpuset_format(s->realtime_iothreads);
        ck_assert_str_eq(ids, "1-2");
        ck_assert(!s->realtime);

        ck_assert_int_eq(domain_xml_parse("<domain><name>d</name><vcpu>2</vcpu><cputune><emulatorsched "
                                          "scheduler='idle'/></cputune></domain>",
                                          &o, NULL),
                         0);
        ck_assert(!o->realtime_emulator);
        ck_assert_ptr_null(o->realtime_iothreads);

        ck_assert_int_lt(
            domain_xml_parse("<domain><name>d</name><vcpu>2</vcpu><cputune><iothreadsched "
                             "iothreads='1-x' scheduler='fifo' priority='1'/></cputune></domain>",
                             &bad, &error),
            0);
        ck_assert_msg(strstr(error, "iothreadsched"), "%s", error);
}
END_TEST

/* An <iothreadsched> naming an I/O thread id above 8192 (libvirt takes ids up to 16383 there, of threads
 * <iothreadids> has) leaves that thread out, as <iothreadids> and <iothreadpin> do: the definition is
 * read, the other threads it names run realtime. */
START_TEST(test_realtime_iothread_id_beyond)
{
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *error = NULL;
        g_autofree char *ids = NULL, *all = NULL;

        ck_assert_msg(domain_xml_parse("<domain><name>d</name><vcpu>2</vcpu><iothreads>3</iothreads>"
                                       "<iothreadids><iothread id='9000'/><iothread id='16383'/>"
                                       "<iothread id='2'/></iothreadids><cputune><iothreadsched "
                                       "iothreads='2,9000' scheduler='fifo' priority='1'/><iothreadsched "
                                       "iothreads='8000-16383,^16383' scheduler='rr' priority='1'/>"
                                       "</cputune></domain>",
                                       &s, &error) == 0,
                      "%s", error);
        all = cpuset_format(s->iothreads);
        ck_assert_str_eq(all, "2");
        ck_assert_ptr_nonnull(s->realtime_iothreads);
        ids = cpuset_format(s->realtime_iothreads);
        ck_assert_str_eq(ids, "2,8000-8192");
}
END_TEST

/* Which vCPUs are realtime: those <vcpusched vcpus=> names (Nova's realtime mask leaves vCPU 0 out), the
 * union of several; all of them when one names none; an invalid list is an error naming it */
START_TEST(test_realtime_vcpus_named)
{
        static const struct {
                const char *scheds;
                const char *ids; /* NULL: all */
        } cases[] = {
            {"<vcpusched vcpus='1-7' scheduler='fifo' priority='1'/>", "1-7"},
            {"<vcpusched vcpus='0-7,^0' scheduler='fifo' priority='1'/>", "1-7"},
            {"<vcpusched vcpus='2' scheduler='fifo' priority='1'/><vcpusched vcpus='5' scheduler='rr' "
             "priority='1'/><vcpusched vcpus='0-1' scheduler='batch'/>",
             "2,5"},
            {"<vcpusched vcpus='2' scheduler='fifo' priority='1'/><vcpusched scheduler='fifo' "
             "priority='1'/>",
             NULL},
            {"<vcpusched scheduler='fifo' priority='1'/><vcpusched vcpus='2' scheduler='fifo' "
             "priority='1'/>",
             NULL},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain><name>d</name><vcpu>8</vcpu><cputune>%s</cputune></domain>", cases[i].scheds);
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *got = NULL;
                ck_assert_int_eq(domain_xml_parse(xml, &s, NULL), 0);
                ck_assert(s->realtime);
                got = s->realtime_vcpus ? cpuset_format(s->realtime_vcpus) : NULL;
                ck_assert_msg(g_strcmp0(got, cases[i].ids) == 0, "%u: %s", i, got ? got : "all");
        }
        {
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *e = NULL;
                ck_assert_int_lt(domain_xml_parse("<domain><name>d</name><vcpu>2</vcpu><cputune><vcpusched "
                                                  "vcpus='x' scheduler='fifo'/></cputune></domain>",
                                                  &s, &e),
                                 0);
                ck_assert_msg(strstr(e, "vcpusched vcpus='x'"), "%s", e);
        }
}
END_TEST

/* <cpu><topology>: the vCPUs of one guest socket (dies, clusters, cores and threads, the first two 1 when
 * not given), read only for more than one socket and when every count is a number above 0 */
START_TEST(test_guest_socket_vcpus)
{
        static const struct {
                const char *topology;
                unsigned per_socket;
        } cases[] = {
            {"sockets='2' cores='2' threads='1'", 2},
            {"sockets='2' dies='2' cores='3' threads='2'", 12},
            {"sockets='2' dies='1' clusters='2' cores='2' threads='2'", 8},
            {"sockets='1' cores='4' threads='1'", 0},
            {"sockets='2' cores='4'", 0},
            {"sockets='2' cores='0' threads='1'", 0},
            {"sockets='x' cores='2' threads='1'", 0},
            {"sockets='2' dies='y' cores='2' threads='1'", 0},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml =
                    g_strdup_printf("<domain><name>d</name><vcpu>4</vcpu><cpu><topology %s/></cpu></domain>",
                                    cases[i].topology);
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *error = NULL;
                ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "case %u: %s", i, error);
                ck_assert_msg(s->guest_socket_vcpus == cases[i].per_socket, "case %u: %u per socket", i,
                              s->guest_socket_vcpus);
        }
}
END_TEST

/* <cpu><topology threads=...>: the guest's SMT threads per core, read only above 1 and when a number */
START_TEST(test_guest_threads)
{
        static const struct {
                const char *cpu;
                unsigned threads;
        } cases[] = {
            {"<cpu mode='host-passthrough'><topology sockets='1' dies='1' cores='2' threads='2'/></cpu>", 2},
            {"<cpu><topology sockets='1' cores='1' threads='4'/><numa><cell id='0' cpus='0-3' "
             "memory='1' unit='GiB'/></numa></cpu>",
             4},
            {"<cpu><topology sockets='4' cores='1' threads='1'/></cpu>", 0},
            {"<cpu><topology sockets='4' cores='1' threads='x'/></cpu>", 0},
            {"<cpu mode='host-model'/>", 0},
            {"", 0},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml =
                    g_strdup_printf("<domain><name>d</name><vcpu>4</vcpu>%s</domain>", cases[i].cpu);
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *error = NULL;
                ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "case %u: %s", i, error);
                ck_assert_msg(s->guest_threads == cases[i].threads, "case %u: %u threads", i,
                              s->guest_threads);
        }
}
END_TEST

/* Guest cells larger than <memory> (a file written by hand): libvirt makes <memory> their sum, so the
 * guest is counted at 48 GiB, not 4 */
START_TEST(test_cells_set_the_memory)
{
        static const char xml[] =
            "<domain><name>d</name><memory unit='GiB'>4</memory><vcpu>2</vcpu><cpu><numa>"
            "<cell id='0' cpus='0' memory='24' unit='GiB'/><cell id='1' cpus='1' memory='24' unit='GiB'/>"
            "</numa></cpu></domain>";
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "%s", error);
        ck_assert_uint_eq(s->memory, UINT64_C(48) << 30);
}
END_TEST

/* A <memory model='dimm'> device's memory is its <target><node> cell's (libvirt binds it with that
 * cell's memnode); a DIMM without a node, or one naming no cell, stays outside the cells */
START_TEST(test_dimm_memory_is_its_cells)
{
        static const char xml[] =
            "<domain><name>d</name><memory unit='GiB'>14</memory><vcpu>2</vcpu><cpu><numa>"
            "<cell id='0' cpus='0' memory='4' unit='GiB'/><cell id='1' cpus='1' memory='4' unit='GiB'/>"
            "</numa></cpu><devices>"
            "<memory model='dimm'><target><size unit='GiB'>4</size><node>1</node></target></memory>"
            "<memory model='dimm'><target><size unit='GiB'>1</size><node>7</node></target></memory>"
            "<memory model='dimm'><target><size unit='GiB'>1</size></target></memory>"
            "</devices></domain>";
        g_autoptr(DomainSpec) s = NULL;
        g_autofree char *error = NULL;

        ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "%s", error);
        ck_assert_uint_eq(s->memory, UINT64_C(14) << 30);
        ck_assert_uint_eq(g_array_index(s->cells, DomainCell, 0).memory, UINT64_C(4) << 30);
        ck_assert_uint_eq(g_array_index(s->cells, DomainCell, 1).memory, UINT64_C(8) << 30);
}
END_TEST

/* A virtio-mem device is backed like a DIMM, bound with its <target><node> cell, but holds of host memory
 * only what its guest has plugged: the larger of <requested> (all an inactive definition has) and
 * <current> (the live XML's, which trails a new request while the guest plugs or unplugs), in KiB without
 * a unit. A device with neither counts its whole <size>. libvirt's <memory> (24 GiB) adds up the whole
 * sizes; what is not plugged is left out of it. */
START_TEST(test_virtio_mem_is_its_cells)
{
        static const struct {
                const char *target;
                unsigned plugged_gib;
        } cases[] = {
            {"<requested unit='GiB'>8</requested>", 8},
            {"<requested>8388608</requested>", 8},
            {"<requested unit='GiB'>0</requested>", 0},
            {"<requested unit='GiB'>0</requested><current unit='GiB'>0</current>", 0},
            /* unplugging: the guest still holds what it gives back */
            {"<requested unit='GiB'>2</requested><current unit='GiB'>10</current>", 10},
            /* plugging: the host backs what it is asked for */
            {"<requested unit='GiB'>12</requested><current unit='GiB'>6</current>", 12},
            {"<current unit='MiB'>3072</current>", 3},
            {"<requested unit='GiB'>16</requested>", 16},
            {"", 16},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *xml = g_strdup_printf(
                    "<domain><name>d</name><memory unit='GiB'>24</memory><vcpu>2</vcpu><cpu><numa>"
                    "<cell id='0' cpus='0' memory='4' unit='GiB'/><cell id='1' cpus='1' memory='4' "
                    "unit='GiB'/>"
                    "</numa></cpu><devices>"
                    "<memory model='virtio-mem'><target><size unit='GiB'>16</size><node>1</node>"
                    "<block unit='MiB'>2</block>%s</target></memory>"
                    "</devices></domain>",
                    cases[i].target);
                g_autoptr(DomainSpec) s = NULL;
                g_autofree char *error = NULL;
                uint64_t plugged = (uint64_t)cases[i].plugged_gib << 30;

                ck_assert_msg(domain_xml_parse(xml, &s, &error) == 0, "case %u: %s", i, error);
                ck_assert_msg(s->memory == (UINT64_C(8) << 30) + plugged, "case %u: %llu MiB", i,
                              (unsigned long long)(s->memory >> 20));
                ck_assert_uint_eq(g_array_index(s->cells, DomainCell, 0).memory, UINT64_C(4) << 30);
                ck_assert_msg(g_array_index(s->cells, DomainCell, 1).memory == (UINT64_C(4) << 30) + plugged,
                              "case %u", i);
        }
}
END_TEST

/* A DIMM has no requested size: a <requested> in one changes nothing; a virtio-mem device's that cannot be
 * read is refused, as its size is */
START_TEST(test_virtio_mem_requested_read)
{
        g_autoptr(DomainSpec) dimm = NULL, bad = NULL;
        g_autofree char *error = NULL;

        ck_assert_int_eq(
            domain_xml_parse("<domain><name>d</name><memory unit='GiB'>8</memory><vcpu>1</vcpu>"
                             "<cpu><numa><cell id='0' cpus='0' memory='4' unit='GiB'/></numa></cpu>"
                             "<devices><memory model='dimm'><target><size unit='GiB'>4</size>"
                             "<node>0</node><requested unit='GiB'>0</requested></target>"
                             "</memory></devices></domain>",
                             &dimm, NULL),
            0);
        ck_assert_uint_eq(dimm->memory, UINT64_C(8) << 30);
        ck_assert_uint_eq(g_array_index(dimm->cells, DomainCell, 0).memory, UINT64_C(8) << 30);
        ck_assert_int_eq(domain_xml_parse("<domain><name>d</name><memory unit='GiB'>8</memory><vcpu>1</vcpu>"
                                          "<devices><memory model='virtio-mem'><target><size unit='GiB'>4"
                                          "</size><node>0</node><requested unit='GiB'>x</requested></target>"
                                          "</memory></devices></domain>",
                                          &bad, &error),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "invalid memory device size 'x'"));
}
END_TEST

/* <page size='4' unit='KiB'> is the base page: ordinary memory, as libvirt backs it */
START_TEST(test_base_page_is_no_hugepage)
{
        g_autoptr(DomainSpec) small = NULL;
        g_autoptr(DomainSpec) huge = NULL;

        ck_assert_int_eq(
            domain_xml_parse("<domain><name>d</name><vcpu>1</vcpu><memoryBacking><hugepages><page "
                             "size='4' unit='KiB'/></hugepages></memoryBacking></domain>",
                             &small, NULL),
            0);
        ck_assert(!small->hugepages && small->hugepage_size == 0);
        ck_assert_int_eq(
            domain_xml_parse("<domain><name>d</name><vcpu>1</vcpu><memoryBacking><hugepages><page "
                             "size='2' unit='MiB'/></hugepages></memoryBacking></domain>",
                             &huge, NULL),
            0);
        ck_assert(huge->hugepages && huge->hugepage_size == 2u << 20);
}
END_TEST

/* A definition with guest cells and no <memory>: libvirt takes the cells together */
START_TEST(test_memory_from_cells)
{
        g_autoptr(DomainSpec) s = NULL;

        ck_assert_int_eq(
            domain_xml_parse("<domain><name>d</name><vcpu>2</vcpu><cpu><numa><cell id='0' cpus='0' "
                             "memory='2' unit='GiB'/><cell id='1' cpus='1' memory='4' unit='GiB'/>"
                             "</numa></cpu></domain>",
                             &s, NULL),
            0);
        ck_assert_uint_eq(s->memory, UINT64_C(6) << 30);
        g_clear_pointer(&s, domain_spec_free);
        /* cells that add up past 2^64 bytes are as much as can be said, never a wrap to a small size */
        ck_assert_int_eq(
            domain_xml_parse("<domain><name>d</name><vcpu>3</vcpu><cpu><numa><cell id='0' cpus='0' "
                             "memory='8' unit='EiB'/><cell id='1' cpus='1' memory='8' unit='EiB'/>"
                             "<cell id='2' cpus='2' memory='1' unit='GiB'/></numa></cpu></domain>",
                             &s, NULL),
            0);
        ck_assert_uint_eq(s->memory, G_MAXUINT64);
}
END_TEST

static Suite *domain_xml_suite(void)
{
        Suite *s = suite_create("domain xml");
        TCase *tc = tcase_create("snapshot");
        tcase_add_test(tc, test_snapshot_keeps_user_elements);
        tcase_add_test(tc, test_recorded_definition);
        tcase_add_test(tc, test_pins_recorded);
        tcase_add_test(tc, test_record_explains);
        tcase_add_test(tc, test_record_explains_cell_distances);
        tcase_add_test(tc, test_record_explains_hugepage_cells);
        tcase_add_test(tc, test_record_explains_dimm_cells);
        tcase_add_test(tc, test_drop_recorded);
        tcase_add_test(tc, test_foreign_record);
        tcase_add_test(tc, test_online_vcpu_ids);
        tcase_add_test(tc, test_persistent_memory_not_ram);
        tcase_add_test(tc, test_private_nvdimm_is_ram);
        tcase_add_test(tc, test_realtime_vcpusched);
        tcase_add_test(tc, test_realtime_vcpus_named);
        tcase_add_test(tc, test_realtime_threads);
        tcase_add_test(tc, test_realtime_iothread_id_beyond);
        tcase_add_test(tc, test_guest_threads);
        tcase_add_test(tc, test_guest_socket_vcpus);
        tcase_add_test(tc, test_dimm_memory_is_its_cells);
        tcase_add_test(tc, test_virtio_mem_is_its_cells);
        tcase_add_test(tc, test_virtio_mem_requested_read);
        tcase_add_test(tc, test_cells_set_the_memory);
        tcase_add_test(tc, test_base_page_is_no_hugepage);
        tcase_add_test(tc, test_memory_from_cells);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(domain_xml_suite)
