/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory devices bound by their own <source><nodemask> are guest cells of no vCPUs, hundreds of them in a
 * guest: they take their memory on their nodes and nothing else. A guest of many such devices is placed as
 * the same guest with the devices of one nodemask and one guest cell joined into one device of their size
 * (the straightforward request of a few cells): the same result, vCPUs and nodes, and the same memory per
 * node when each device is bound to one node. Random hosts (nodes in packages, SLIT distances), loads,
 * guest cells with and without vCPUs and <memnode> elements, both policies.
 */
#include "test-util.h"
#include "test-policy-util.h"

#include <inttypes.h>
#include <string.h>

#define MiB (UINT64_C(1) << 20)

/* A host of nnodes nodes, per_package of them to a package: 10 to itself, 12 inside its package, 20 or 30
 * beyond it. */
static Topology *random_host(GRand *r, unsigned nnodes, unsigned per_package)
{
        g_autofree uint32_t *distance = g_new(uint32_t, nnodes * nnodes);
        unsigned cores = (unsigned)g_rand_int_range(r, 2, 9), threads = (unsigned)g_rand_int_range(r, 1, 3);

        for (unsigned a = 0; a < nnodes; a++)
                for (unsigned b = 0; b < nnodes; b++)
                        distance[a * nnodes + b] = a == b                                    ? 10
                                                   : a / per_package == b / per_package      ? 12
                                                   : (a / per_package + b / per_package) % 2 ? 20
                                                                                             : 30;
        return topology_new_uniform(nnodes, cores, threads, 16 * GiB, distance);
}

/* A nodemask of one or (when two) two of the host's nodes, as a list. */
static char *random_nodes(GRand *r, unsigned nnodes, bool two)
{
        unsigned a = (unsigned)g_rand_int_range(r, 0, (gint32)nnodes), b;

        if (nnodes < 2 || !two || g_rand_int_range(r, 0, 3))
                return g_strdup_printf("%u", a);
        b = (a + (unsigned)g_rand_int_range(r, 1, (gint32)nnodes)) % nnodes;
        return g_strdup_printf("%u,%u", MIN(a, b), MAX(a, b));
}

typedef struct {
        char *nodemask;
        unsigned target; /* the guest cell (<target><node>) */
        uint64_t size;   /* bytes */
} Device;

static void device_clear(gpointer p)
{
        g_free(((Device *)p)->nodemask);
}

/* The guest's definition with its devices, ndevices of them. */
static char *guest_xml(const char *head, const Device *devices, unsigned ndevices, uint64_t memory)
{
        GString *s = g_string_new(NULL);

        g_string_append_printf(
            s,
            "<domain type='kvm'><name>many</name><maxMemory slots='%u' unit='KiB'>%" PRIu64
            "</maxMemory><memory unit='KiB'>%" PRIu64 "</memory>%s<devices>",
            MAX(ndevices, 1), 2 * memory / 1024, memory / 1024, head);
        for (unsigned i = 0; i < ndevices; i++)
                g_string_append_printf(
                    s,
                    "<memory model='dimm'><source><nodemask>%s</nodemask></source><target>"
                    "<size unit='KiB'>%" PRIu64 "</size><node>%u</node></target></memory>",
                    devices[i].nodemask, devices[i].size / 1024, devices[i].target);
        g_string_append(s, "</devices></domain>");
        return g_string_free(s, FALSE);
}

/* The devices of one nodemask and one guest cell as one of their size, into joined. */
static void join_devices(const GArray *devices, GArray *joined)
{
        for (unsigned i = 0; i < devices->len; i++) {
                const Device *d = &g_array_index(devices, Device, i);
                bool found = false;
                for (unsigned j = 0; j < joined->len && !found; j++) {
                        Device *o = &g_array_index(joined, Device, j);
                        if (o->target == d->target && strcmp(o->nodemask, d->nodemask) == 0) {
                                o->size += d->size;
                                found = true;
                        }
                }
                if (!found)
                        g_array_append_val(joined, ((Device){g_strdup(d->nodemask), d->target, d->size}));
        }
}

static void assert_same_plan(const Plan *a, const Plan *b, bool memory, unsigned round)
{
        ck_assert_msg(a->result == b->result, "round %u: %s / joined: %s", round, a->reason, b->reason);
        ck_assert_uint_eq(a->nvcpus, b->nvcpus);
        for (unsigned v = 0; v < a->nvcpus; v++)
                ck_assert_msg(a->vcpu_pu[v] == b->vcpu_pu[v], "round %u: vCPU %u on PU %d, joined %d (%s)",
                              round, v, a->vcpu_pu[v], b->vcpu_pu[v], a->reason);
        ck_assert_msg(cpuset_equal(a->nodes, b->nodes), "round %u: %s / joined: %s", round, a->reason,
                      b->reason);
        ck_assert_uint_eq(a->nnode_memory, b->nnode_memory);
        for (unsigned n = 0; memory && n < a->nnode_memory; n++)
                ck_assert_msg(a->node_memory[n] == b->node_memory[n],
                              "round %u: node %u holds %" PRIu64 ", joined %" PRIu64, round, n,
                              a->node_memory[n], b->node_memory[n]);
}

START_TEST(test_devices_placed_as_joined)
{
        g_autoptr(GRand) r = g_rand_new_with_seed(29);
        unsigned many = 0;

        for (unsigned round = 0; round < 60; round++) {
                static const unsigned counts[] = {0, 3, 40, 200, 512};
                unsigned per_package = (unsigned)g_rand_int_range(r, 1, 5);
                unsigned nnodes = per_package * (unsigned)g_rand_int_range(r, 1, 5);
                g_autoptr(Topology) t = random_host(r, nnodes, per_package);
                g_autoptr(Ledger) l = ledger_new(t);
                PolicyKind kind = g_rand_boolean(r) ? POLICY_EXPLICIT : POLICY_COMPAT;
                PlacementParams p = test_params(kind);
                unsigned ncells = (unsigned)g_rand_int_range(r, 1, 6), vcpus = 0;
                unsigned ndevices = counts[g_rand_int_range(r, 0, G_N_ELEMENTS(counts))];
                unsigned fill = (unsigned)g_rand_int_range(r, 0, (gint32)nnodes + 1);
                /* devices of two nodes too: each is counted on them apart (an even share of each, as
                 * far as its room goes), so that only where the vCPUs go is the same */
                bool two = g_rand_int_range(r, 0, 3) == 0;
                g_autoptr(GString) cells = g_string_new(NULL), memnodes = g_string_new(NULL);
                g_autoptr(GArray) devices = g_array_new(FALSE, FALSE, sizeof(Device));
                g_autoptr(GArray) joined = g_array_new(FALSE, FALSE, sizeof(Device));
                g_autofree char *head = NULL, *xml = NULL, *joined_xml = NULL;
                g_autoptr(Plan) plan = NULL, reference = NULL;
                uint64_t memory = 0;

                g_array_set_clear_func(devices, device_clear);
                g_array_set_clear_func(joined, device_clear);
                for (unsigned i = 0; i < fill; i++) {
                        g_autofree char *name = g_strdup_printf("load%u", i);
                        test_place(t, l, &p, name, (unsigned)g_rand_int_range(r, 1, (gint32)t->npus / 2 + 2),
                                   (uint64_t)g_rand_int_range(r, 1, 12) * GiB);
                }
                for (unsigned c = 0; c < ncells; c++) {
                        unsigned k =
                            c == 0 || g_rand_int_range(r, 0, 3) ? (unsigned)g_rand_int_range(r, 1, 17) : 0;
                        uint64_t size = (uint64_t)g_rand_int_range(r, 1, 5) * GiB;
                        if (k)
                                g_string_append_printf(
                                    cells, "<cell id='%u' cpus='%u-%u' memory='%" PRIu64 "' unit='KiB'/>", c,
                                    vcpus, vcpus + k - 1, size / 1024);
                        else
                                g_string_append_printf(cells,
                                                       "<cell id='%u' memory='%" PRIu64 "' unit='KiB'/>", c,
                                                       size / 1024);
                        if (g_rand_int_range(r, 0, 3) == 0) {
                                g_autofree char *nodes = random_nodes(r, nnodes, true);
                                g_string_append_printf(
                                    memnodes, "<memnode cellid='%u' mode='strict' nodeset='%s'/>", c, nodes);
                        }
                        vcpus += k;
                        memory += size;
                }
                /* the devices' nodemasks out of a few, so that many share one */
                for (unsigned i = 0; i < ndevices; i++) {
                        Device d = {random_nodes(r, i % 3 ? MIN(nnodes, 4) : nnodes, two),
                                    (unsigned)g_rand_int_range(r, 0, (gint32)ncells),
                                    (uint64_t)g_rand_int_range(r, 1, 3) * 16 * MiB};
                        g_array_append_val(devices, d);
                        memory += d.size;
                }
                join_devices(devices, joined);
                head = g_strdup_printf("<vcpu>%u</vcpu>%s%s%s<cpu><numa>%s</numa></cpu>", vcpus,
                                       memnodes->len ? "<numatune>" : "", memnodes->str,
                                       memnodes->len ? "</numatune>" : "", cells->str);
                xml = guest_xml(head, (const Device *)(void *)devices->data, devices->len, memory);
                joined_xml = guest_xml(head, (const Device *)(void *)joined->data, joined->len, memory);
                plan = test_place_xml(t, l, xml, &p);
                reference = test_place_xml(t, l, joined_xml, &p);
                ck_assert_msg(plan->ncells == ncells + devices->len, "round %u: %u cells", round,
                              plan->ncells);
                assert_same_plan(plan, reference, !two, round);
                many += devices->len > joined->len && plan->result != PLAN_UNPLACEABLE;
        }
        ck_assert_uint_ge(many, 20); /* enough guests of devices sharing a nodemask were placed */
}
END_TEST

static Suite *memory_device_cells_suite(void)
{
        Suite *s = suite_create("memory device cells");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_devices_placed_as_joined);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(memory_device_cells_suite)
