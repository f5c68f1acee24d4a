/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * domain_xml_parse() on any text. When it holds a recorded decision, metadata_to_plan() rebuilds it on
 * the demo host (2 nodes x 4 cores x 2 threads, 8 GiB per node); a rebuilt plan must fit the ledger,
 * and the metadata written for it (metadata_format, with the namespace prefix libvirt would add) must
 * read back to the same plan: that is how a restarted daemon adopts a running domain.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain-xml.h"
#include "fuzz-util.h"
#include "metadata.h"

/* The metadata as libvirt returns it inside the domain XML: every element in our namespace. */
static char *wrap_metadata(const DomainSpec *spec, const char *meta)
{
        g_autofree char *name = g_markup_escape_text(spec->name, -1);
        GString *s = g_string_new(NULL);

        g_string_append_printf(
            s, "<domain><name>%s</name><vcpu>%u</vcpu><memory unit='b'>%llu</memory><metadata>", name,
            spec->vcpus, (unsigned long long)spec->memory);
        for (const char *p = meta; *p; p++) {
                if (*p != '<') {
                        g_string_append_c(s, *p);
                } else if (p[1] == '/') {
                        g_string_append(s, "</" PLACEMENTD_XMLNS_PREFIX ":");
                        p++;
                } else {
                        g_string_append(s, "<" PLACEMENTD_XMLNS_PREFIX ":");
                        if (p == meta) {
                                p += strlen("<domain") - 1;
                                g_string_append(s, "domain xmlns:" PLACEMENTD_XMLNS_PREFIX
                                                   "=\"" PLACEMENTD_XMLNS "\"");
                        }
                }
        }
        g_string_append(s, "</metadata></domain>");
        return g_string_free(s, FALSE);
}

static void check_same_plan(const Plan *a, const Plan *b)
{
        fuzz_check(a->nvcpus == b->nvcpus && a->nnode_memory == b->nnode_memory, "sizes differ");
        fuzz_check(a->policy == b->policy && a->vcpu_pin == b->vcpu_pin && a->result == b->result,
                   "policy, pin mode or result differ");
        fuzz_check(cpuset_equal(a->nodes, b->nodes) && cpuset_equal(a->emulator_pin, b->emulator_pin),
                   "nodes or emulator pins differ");
        fuzz_check(cpuset_equal(a->iothreads, b->iothreads) &&
                       cpuset_equal(a->iothread_pin, b->iothread_pin),
                   "I/O thread pins differ");
        for (unsigned i = 0; i < a->nvcpus; i++)
                fuzz_check(a->vcpu_pu[i] == b->vcpu_pu[i] && cpuset_equal(a->vcpu_pins[i], b->vcpu_pins[i]),
                           "vCPU %u differs", i);
        for (unsigned n = 0; n < a->nnode_memory; n++)
                fuzz_check(a->node_memory[n] == b->node_memory[n], "memory on node %u differs", n);
        fuzz_check(g_strcmp0(a->reason, b->reason) == 0, "reason '%s' reads back as '%s'", a->reason,
                   b->reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        g_autofree char *text = g_strndup((const char *)data, size);
        g_autofree char *error = NULL, *plan_error = NULL, *meta = NULL, *xml = NULL, *error2 = NULL,
                        *plan_error2 = NULL;
        g_autoptr(DomainSpec) spec = NULL, spec2 = NULL;
        g_autoptr(Topology) t = NULL;
        g_autoptr(Ledger) l = NULL;
        g_autoptr(Plan) p = NULL, p2 = NULL;
        MetaRun run;
        int r;

        fuzz_setup();

        r = domain_xml_parse(text, &spec, &error);
        if (r < 0) {
                fuzz_check(!spec && error, "failed parse (%d) without a message, or with a spec", r);
                return 0;
        }
        fuzz_check(spec && !error && spec->name && *spec->name, "parsed, without a name or with a message");
        fuzz_check(spec->vcpus <= DOMAIN_XML_MAX_VCPUS && spec->max_vcpus <= DOMAIN_XML_MAX_VCPUS,
                   "%u of %u vCPUs", spec->vcpus, spec->max_vcpus);
        fuzz_check(!spec->max_vcpus || spec->vcpus <= spec->max_vcpus, "%u of %u vCPUs online", spec->vcpus,
                   spec->max_vcpus);
        if (!spec->decision)
                return 0;

        t = topology_new_uniform(2, 4, 2, 8 * FUZZ_GiB, NULL);
        fuzz_check(t != NULL, "topology_new_uniform failed");
        r = metadata_to_plan(t, spec->decision, spec->name, spec->vcpus, spec->vcpu_ids, spec->memory, &p,
                             &plan_error);
        if (r < 0) {
                fuzz_check(!p && plan_error, "failed rebuild (%d) without a message, or with a plan", r);
                return 0;
        }
        fuzz_check(p && !plan_error && p->nvcpus == spec->vcpus && p->nnode_memory == t->nnodes,
                   "rebuilt plan does not match the domain");
        /* only a skipped (hand-pinned) record leaves vCPUs floating */
        for (unsigned i = 0; i < p->nvcpus; i++)
                fuzz_check((p->vcpu_pu[i] >= 0 || p->result == PLAN_ADOPTED) && p->vcpu_pu[i] < (int)t->npus,
                           "vCPU %u on PU %d", i, p->vcpu_pu[i]);

        l = ledger_new(t);
        fuzz_commit_release(l, spec->uuid ? spec->uuid : spec->name, p);
        fuzz_check(ledger_is_empty(l), "ledger not empty after release");

        /* the run as the record read names it (its threads= the emulator pin): written back the same */
        run = (MetaRun){.domain_id = spec->decision->domain_id,
                        .boot_id = spec->decision->boot_id,
                        .threads = spec->decision->threads};
        meta = metadata_format_run(t, p,
                                   p->result == PLAN_ADOPTED ? "skipped" : plan_result_to_string(p->result),
                                   MEMORY_BINDING_APPLIED, spec, &run);
        xml = wrap_metadata(spec, meta);
        if (domain_xml_parse(xml, &spec2, &error2) < 0) {
                fprintf(stderr, "metadata written for the plan does not read back: %s\n%s\n", error2, xml);
                abort();
        }
        fuzz_check(spec2->decision, "metadata written for the plan has no decision:\n%s", xml);
        fuzz_check(spec2->decision->domain_id == run.domain_id &&
                       g_strcmp0(spec2->decision->boot_id, run.boot_id) == 0 &&
                       (!run.threads || cpuset_is_empty(run.threads)
                            ? !spec2->decision->threads
                            : cpuset_equal(spec2->decision->threads, run.threads)),
                   "the run written does not read back:\n%s", xml);
        fuzz_check(spec2->meta_skip == spec->meta_skip &&
                       g_strcmp0(spec2->meta_policy, spec->meta_policy) == 0,
                   "skip/policy attributes not kept:\n%s", xml);
        /* the same domain: the same vCPUs online (the wrapper writes no <vcpus>) */
        r = metadata_to_plan(t, spec2->decision, spec2->name, spec2->vcpus, spec->vcpu_ids, spec2->memory,
                             &p2, &plan_error2);
        fuzz_check(r == 0, "written decision does not rebuild: %s\n%s", plan_error2, xml);
        check_same_plan(p, p2);
        return 0;
}
