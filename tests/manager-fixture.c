/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manager-fixture.h"

#include <check.h>
#include <time.h>

#include "log.h"
#include "topology-load.h"
#include "virt-domain.h"
#include "virt-event.h"

void fixture_open(struct event_base **base, virConnectPtr *conn, bool drop_own)
{
        virDomainPtr own;

        if (!*base) {
                *base = event_base_new();
                ck_assert_int_eq(virt_event_register(*base), 0);
                virt_errors_quiet();
                log_set_max_level(LOG_WARNING);
        }
        *conn = virConnectOpen("test:///default");
        ck_assert_ptr_nonnull(*conn);
        if (!drop_own)
                return;
        own = virDomainLookupByName(*conn, "test");
        if (own) {
                virDomainDestroy(own);
                virDomainFree(own);
        }
}

void fixture_close(struct event_base *base, virConnectPtr conn)
{
        virConnectClose(conn);
        for (unsigned i = 0; i < 20; i++)
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

Manager *fixture_manager_new(struct event_base *base, const char *topology, const char *config_text)
{
        return fixture_manager_new_journal(base, topology, config_text, NULL);
}

Manager *fixture_manager_new_journal(struct event_base *base, const char *topology, const char *config_text,
                                     const char *journal)
{
        Topology *t = NULL;
        Config *c = NULL;
        g_autofree char *err = NULL;
        Manager *m;

        ck_assert_msg(topology_load(topology, &t, &err) == 0, "%s", err);
        ck_assert_msg(config_load_data(config_text ? config_text : "", "test.conf", &c, &err) == 0, "%s",
                      err);
        m = manager_new(base, t, c, "test:///default");
        manager_set_journal(m, journal);
        manager_start(m);
        ck_assert(manager_connected(m));
        return m;
}

void fixture_reload(Manager *m, const char *config_text)
{
        Config *c = NULL;
        g_autofree char *err = NULL;

        ck_assert_msg(config_load_data(config_text, "test.conf", &c, &err) == 0, "%s", err);
        manager_set_config(m, c);
}

virDomainPtr fixture_define_and_start(virConnectPtr conn, const char *name, unsigned vcpus)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "<vcpu>%u</vcpu><os><type>hvm</type></os></domain>",
                            name, vcpus);
        virDomainPtr dom = virDomainDefineXML(conn, xml);

        ck_assert_msg(dom != NULL && virDomainCreate(dom) == 0, "cannot start %s", name);
        return dom;
}

virDomainPtr fixture_start_xml(virConnectPtr conn, const char *name, const char *body)
{
        g_autofree char *xml =
            g_strdup_printf("<domain type='test'><name>%s</name><memory unit='MiB'>512</memory>"
                            "%s<os><type>hvm</type></os></domain>",
                            name, body);
        virDomainPtr dom = virDomainCreateXML(conn, xml, 0);

        ck_assert_msg(dom != NULL, "cannot start %s", name);
        return dom;
}

void fixture_stop(virDomainPtr dom)
{
        virDomainDestroy(dom);
        virDomainFree(dom);
}

void fixture_pin(virDomainPtr dom, unsigned vcpu, unsigned cpu)
{
        unsigned char map = (unsigned char)(1u << cpu);

        ck_assert_int_eq(virDomainPinVcpuFlags(dom, vcpu, &map, 1, VIR_DOMAIN_AFFECT_CURRENT), 0);
}

int fixture_iothread_map(virDomainPtr dom, unsigned id)
{
        virDomainIOThreadInfoPtr *info = NULL;
        int n = virDomainGetIOThreadInfo(dom, &info, VIR_DOMAIN_AFFECT_LIVE), map = -1;

        for (int i = 0; i < n; i++) {
                if (info[i]->iothread_id == id && info[i]->cpumaplen > 0)
                        map = info[i]->cpumap[0];
                virDomainIOThreadInfoFree(info[i]);
        }
        free(info);
        return map;
}

void fixture_assert_live_pins(virDomainPtr dom, const Plan *p)
{
        CpuSet **pins = NULL;

        ck_assert_int_eq(virt_domain_get_vcpu_pins(dom, p->nvcpus, p->vcpu_ids, &pins, NULL), 0);
        for (unsigned i = 0; i < p->nvcpus; i++) {
                g_autofree char *want = cpuset_format(p->vcpu_pins[i]), *have = cpuset_format(pins[i]);
                ck_assert_msg(g_strcmp0(have, want) == 0, "vCPU %u pinned to %s, planned %s", i, have, want);
        }
        virt_pins_free(pins, p->nvcpus);
}

bool fixture_spin_known(struct event_base *base, Manager *m, const char *name, unsigned ms)
{
        for (unsigned i = 0; i < ms; i++) {
                struct timespec nap = {0, 1000000};
                if (name && manager_lookup(m, name))
                        return true;
                event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
                nanosleep(&nap, NULL);
        }
        return name == NULL;
}

void fixture_manager_free(struct event_base *base, Manager *m)
{
        manager_free(m);
        fixture_spin_known(base, NULL, NULL, 20);
}
