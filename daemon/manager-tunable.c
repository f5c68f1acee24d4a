/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tunable events: a pin or a tunable of a running domain changed. A resize (a pin of a vCPU the decision
 * does not have) is followed at once. Pins
 * someone else made (of vCPUs, the emulator, I/O threads) are followed once for a burst of events
 * (MANAGER_METADATA_FOLLOW_MSEC): following them reads the domain's whole XML, which its owner can make
 * large, and an owner pinning in a loop would otherwise have it read once per pin. The last pin of each
 * vCPU is what is judged, against what runs when the burst is read.
 */
#include <string.h>

#include "log.h"
#include "manager-internal.h"
#include "virt-domain.h"

/* What a burst said of one domain. */
typedef struct PinsChanged {
        bool was_unpinned;  /* it ran where placementd pinned nothing: is it pinned now? */
        bool emulator;      /* its emulator was pinned: read as it runs then */
        bool iothreads;     /* one of its I/O threads was pinned (or came pinned): read as they run then */
        GHashTable *fields; /* "cputune.vcpupinN" -> the last cpuset the events said */
} PinsChanged;

static void pins_changed_free(PinsChanged *c)
{
        g_hash_table_destroy(c->fields);
        g_free(c);
}

static PinsChanged *pins_changed_soon(Manager *m, const char *uuid)
{
        PinsChanged *c = g_hash_table_lookup(m->pins_changed, uuid);

        if (!c) {
                c = g_new0(PinsChanged, 1);
                c->fields = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
                g_hash_table_insert(m->pins_changed, g_strdup(uuid), c);
        }
        if (!evtimer_pending(m->pins_ev, NULL)) {
                struct timeval due = {0, MANAGER_METADATA_FOLLOW_MSEC * 1000};
                evtimer_add(m->pins_ev, &due);
        }
        return c;
}

static void adopt(Manager *m, virDomainPtr dom, const char *what)
{
        m->hand_pin_follows++;
        placer_adopt_hand_pins(m, dom, what);
}

/* Judges the last pin of each vCPU a burst named (fields) against d and what runs now; adopts what runs
 * when one is someone else's. */
static void follow_vcpu_pins(Manager *m, virDomainPtr dom, const Decision *d, GHashTable *fields)
{
        GHashTableIter it;
        const char *field, *value;

        g_hash_table_iter_init(&it, fields);
        while (g_hash_table_iter_next(&it, (gpointer *)&field, (gpointer *)&value)) {
                g_autoptr(CpuSet) seen = NULL;
                guint64 vcpu;
                int index;

                if (!g_ascii_string_to_unsigned(field + strlen("cputune.vcpupin"), 10, 0, G_MAXUINT, &vcpu,
                                                NULL) ||
                    cpuset_parse(value, &seen, NULL) < 0)
                        continue;
                /* N in cputune.vcpupinN is libvirt's vCPU id; a pin of one the plan does not have (not
                 * online) is someone else's too */
                index = vcpu_id_index(d->plan->vcpu_ids, d->plan->nvcpus, (unsigned)vcpu);
                if (index >= 0 && cpuset_equal(seen, d->plan->vcpu_pins[index])) {
                        log_debug("%s: %s=%s is the echo of our own pin", d->name, field, value);
                        continue;
                }
                /* events come after the fact: a pin made and replaced before its event was read (two
                 * moves in a row, a pin undone at once) is not what runs; what runs is read now */
                if (index >= 0 && d->result != DECISION_ADVISORY &&
                    placer_live_pins_planned(m, dom, d->plan, d->pinned_by_hand) == 1) {
                        log_debug("%s: %s=%s is an earlier pin's event: its vCPUs run as decided", d->name,
                                  field, value);
                        continue;
                }
                /* an advice floats as libvirt left it; one counted on the pins it ran on before
                 * (d->advice) runs elsewhere now: that is followed as any pin by hand */
                if (d->result == DECISION_ADVISORY && !d->advice && cpuset_equal(seen, m->topology->all_pus))
                        continue;
                {
                        g_autofree char *what = g_strdup_printf("vCPU %u was pinned to %s by someone else",
                                                                (unsigned)vcpu, value);
                        adopt(m, dom, what);
                }
                return;
        }
}

static void on_pins_due(evutil_socket_t fd, short what, void *arg)
{
        Manager *m = arg;
        g_autoptr(GHashTable) changed = g_steal_pointer(&m->pins_changed);
        GHashTableIter it;
        const char *uuid;
        PinsChanged *c;

        (void)fd;
        (void)what;
        m->pins_changed =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)pins_changed_free);
        g_hash_table_iter_init(&it, changed);
        while (m->conn && g_hash_table_iter_next(&it, (gpointer *)&uuid, (gpointer *)&c)) {
                g_autoptr(virDomain) dom = NULL;
                const Decision *d = g_hash_table_lookup(m->decisions, uuid);

                if (!d || virt_conn_lookup_uuid(m->conn, uuid, &dom, NULL) < 0)
                        continue; /* gone: its lifecycle event says so */
                if (c->emulator || c->iothreads)
                        m->hand_pin_follows++;
                if (c->emulator)
                        placer_follow_emulator(m, dom, g_hash_table_lookup(m->decisions, uuid));
                if (c->iothreads)
                        placer_follow_iothreads(m, dom, g_hash_table_lookup(m->decisions, uuid));
                if (!(d = g_hash_table_lookup(m->decisions, uuid)))
                        continue;
                if (c->was_unpinned && placer_pinned_nothing(d)) {
                        m->hand_pin_follows++;
                        if (placer_skipped_now_pinned(m, dom, d)) {
                                placer_adopt_hand_pins(m, dom, "its vCPUs were pinned by someone else");
                                continue;
                        }
                }
                if (d->plan && g_hash_table_size(c->fields))
                        follow_vcpu_pins(m, dom, d, c->fields);
        }
}

/* Whether an emulator pin event p says what placementd pinned the emulator to itself: the echo of its own
 * pin (libvirtd sends one for each virDomainPinEmulator), which needs no read. */
static bool own_emulator_echo(const Decision *d, const virTypedParameter *p)
{
        g_autoptr(CpuSet) seen = NULL;

        return (d->result == DECISION_PLACED || d->result == DECISION_OVERCOMMITTED) && !d->job_held &&
               !cpuset_is_empty(d->plan->emulator_pin) && p->type == VIR_TYPED_PARAM_STRING && p->value.s &&
               cpuset_parse(p->value.s, &seen, NULL) == 0 && cpuset_equal(seen, d->plan->emulator_pin);
}

/* Whether params name a pin of a vCPU plan does not have. */
static bool names_other_vcpu(const Plan *plan, virTypedParameterPtr params, int nparams)
{
        for (int i = 0; i < nparams; i++) {
                guint64 vcpu;

                if (g_str_has_prefix(params[i].field, "cputune.vcpupin") &&
                    (!g_ascii_string_to_unsigned(params[i].field + strlen("cputune.vcpupin"), 10, 0,
                                                 G_MAXUINT, &vcpu, NULL) ||
                     vcpu_id_index(plan->vcpu_ids, plan->nvcpus, (unsigned)vcpu) < 0))
                        return true;
        }
        return false;
}

void manager_tunable(Manager *m, virDomainPtr dom, virTypedParameterPtr params, int nparams)
{
        char uuid[VIR_UUID_STRING_BUFLEN];
        const Decision *d = g_hash_table_lookup(m->decisions, virt_domain_uuid(dom, uuid));
        PinsChanged *c = NULL;

        healer_forget_request(m, uuid);    /* a pin or a tunable changed */
        if (d && placer_pinned_nothing(d)) /* pinned by someone else now? read once for the burst */
                (c = pins_changed_soon(m, uuid))->was_unpinned = true;
        if (!d || !d->plan)
                return;
        /* a hot-added vCPU shows up as a pin of a vCPU the decision does not have: only then is the size
         * read (for a domain whose vCPU ids are not 0..n-1 that reads its whole XML) */
        if (names_other_vcpu(d->plan, params, nparams) && placer_resized(m, dom, d)) {
                placer_place(m, dom, ORIGIN_RESIZED, (uint64_t)g_get_monotonic_time());
                return;
        }
        for (int i = 0; i < nparams; i++) {
                const char *field = params[i].field;

                /* someone pinned its emulator: read as it runs when the burst is */
                if (g_str_equal(field, "cputune.emulatorpin") && own_emulator_echo(d, &params[i]))
                        log_debug("%s: %s=%s is the echo of our own pin", d->name, field, params[i].value.s);
                else if (g_str_equal(field, "cputune.emulatorpin"))
                        (c = c ? c : pins_changed_soon(m, uuid))->emulator = true;
                /* someone pinned one of its I/O threads (or one came and was pinned at once): the live
                 * I/O threads are read, whatever the events hold */
                else if (g_str_has_prefix(field, "cputune.iothreadpin"))
                        (c = c ? c : pins_changed_soon(m, uuid))->iothreads = true;
                else if (g_str_has_prefix(field, "cputune.vcpupin") &&
                         params[i].type == VIR_TYPED_PARAM_STRING && params[i].value.s)
                        g_hash_table_insert((c = c ? c : pins_changed_soon(m, uuid))->fields,
                                            g_strdup(field), g_strdup(params[i].value.s));
        }
}

void tunable_init(Manager *m)
{
        m->pins_ev = evtimer_new(m->base, on_pins_due, m);
        m->pins_changed =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)pins_changed_free);
}

void tunable_done(Manager *m)
{
        event_free(m->pins_ev);
        m->pins_ev = NULL;
        g_hash_table_destroy(m->pins_changed);
        m->pins_changed = NULL;
}
