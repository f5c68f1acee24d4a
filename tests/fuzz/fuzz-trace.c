/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace_parse() and trace_parse_spec() on any text. Failures must say why; every start event of a
 * trace must read back the same from its NAME:VCPUS:BYTES command line form; loads and ticks stay in
 * their ranges.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "trace.h"

static void check_event(const TraceEvent *e)
{
        g_autofree char *spec = NULL, *error = NULL;
        TraceEvent *back = NULL;

        if (e && e->op == TRACE_TICK) { /* time passing has no domain, only a length */
                if (e->name || !(e->seconds > 0 && e->seconds <= TRACE_TICK_MAX))
                        abort();
                return;
        }
        if (!e || !e->name || !*e->name || strlen(e->name) > TRACE_NAME_MAX)
                abort();
        /* load read from start and load lines stays within what the lines may say */
        if (!(e->busy >= 0 && e->busy <= 1) || !(e->host >= 0 && e->host <= TRACE_HOST_MAX))
                abort();
        if (e->op != TRACE_START)
                return;
        spec = g_strdup_printf("%s:%u:%llu", e->name, e->vcpus, (unsigned long long)e->memory);
        if (trace_parse_spec(spec, &back, &error) < 0) {
                fprintf(stderr, "start event of line %u reads back as '%s', which does not parse: %s\n",
                        e->line, spec, error);
                abort();
        }
        if (back->op != TRACE_START || strcmp(back->name, e->name) != 0 || back->vcpus != e->vcpus ||
            back->memory != e->memory)
                abort();
        trace_event_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        g_autofree char *text = g_strndup((const char *)data, size);
        g_autoptr(GPtrArray) events = NULL;
        g_autofree char *error = NULL, *spec_error = NULL;
        TraceEvent *e = NULL;

        fuzz_setup();

        if (trace_parse(text, "fuzz.trace", &events, &error) < 0) {
                if (events || !error)
                        abort();
        } else {
                if (!events || error)
                        abort();
                for (unsigned i = 0; i < events->len; i++)
                        check_event(g_ptr_array_index(events, i));
        }

        if (trace_parse_spec(text, &e, &spec_error) < 0) {
                if (e || !spec_error)
                        abort();
        } else {
                if (e->line != 0 || spec_error)
                        abort();
                check_event(e);
                trace_event_free(e);
        }
        return 0;
}
