/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* map --svg and plan --topology --svg: the host map drawn by lstopo (host-svg.h). */
#include "placementctl.h"

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "bus-cleanup.h"
#include "host-svg.h"
#include "json-get.h"
#include "map-text.h"
#include "topology-load.h"

/* The names of the daemon's domains, to read the legend of its map with. */
static int daemon_domains(const Ctl *c, GPtrArray **ret)
{
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(sd_bus_message) reply = NULL;
        const char *text;
        int code = ctl_call(c, c->sd, "GetDecisionsJSON", &reply, "s", "");

        if (!code && !(code = ctl_read_string(reply, &text))) {
                JsonNode *root =
                    json_parser_load_from_data(parser, text, -1, NULL) ? json_parser_get_root(parser) : NULL;
                JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
                JsonArray *all = json_get_array(o, "decisions");
                for (unsigned i = 0; i < json_length(all); i++) {
                        const char *name = json_get_string(json_elem_object(all, i), "domain");
                        if (*name)
                                g_ptr_array_add(names, g_strdup(name));
                }
                if (!all) {
                        fprintf(stderr, "placementctl map --svg: the daemon's decisions do not parse\n");
                        code = EXIT_RUNTIME;
                }
        }
        if (!code)
                *ret = g_steal_pointer(&names);
        return code;
}

static int draw(const Ctl *c, const Topology *t, const int *owner, const GPtrArray *names)
{
        g_autofree char *error = NULL;

        if (host_svg_write(t, owner, names, c->svg, &error) < 0) {
                fprintf(stderr, "placementctl: --svg=%s: %s\n", c->svg, error);
                return EXIT_RUNTIME;
        }
        return EXIT_OK;
}

int map_svg_online(const Ctl *c)
{
        g_autoptr(Topology) t = NULL;
        g_autoptr(GPtrArray) names = NULL, known = NULL;
        g_autofree char *error = NULL;
        g_autofree int *owner = NULL;
        g_autoptr(sd_bus_message) reply = NULL;
        const char *map, *source = c->topology ? c->topology : "host";
        int code;

        /* map --svg without --topology draws this host (verb_map refuses that with -H) */
        if (topology_load(source, &t, &error) < 0) {
                fprintf(stderr, "placementctl map --svg: %s\n", error);
                return c->topology ? EXIT_USAGE : EXIT_RUNTIME;
        }
        code = daemon_domains(c, &known);
        if (!code)
                code = ctl_call(c, c->sd, "GetHostMap", &reply, NULL);
        if (!code && !(code = ctl_read_string(reply, &map)) &&
            map_text_owners(map, t, known, &owner, &names, &error) < 0) {
                fprintf(stderr, "placementctl map --svg: %s\n", error);
                code = EXIT_RUNTIME;
        }
        return code ? code : draw(c, t, owner, names);
}

/* The same marks as the text map (lib/hostmap.c): the domain counted on a PU, several, or reserved. */
int map_svg_offline(const Ctl *c, const Topology *t, const Ledger *l, const CpuSet *reserved)
{
        g_autoptr(GPtrArray) keys = ledger_keys(l);
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        g_autofree int *owner = g_new(int, MAX(t->npus, 1));

        for (unsigned p = 0; p < t->npus; p++)
                owner[p] =
                    reserved && cpuset_has(reserved, t->pus[p].os_index) ? HOST_PU_RESERVED : HOST_PU_FREE;
        for (unsigned k = 0; k < keys->len; k++) {
                const Plan *plan = ledger_lookup(l, g_ptr_array_index(keys, k));
                g_ptr_array_add(names, plan->name && *plan->name ? plan->name : g_ptr_array_index(keys, k));
                for (unsigned i = 0; i < plan->nvcpus; i++) {
                        int pu = plan->vcpu_pu[i];
                        if (pu < 0 || (unsigned)pu >= t->npus)
                                continue;
                        owner[pu] = owner[pu] < 0 && owner[pu] != HOST_PU_SHARED ? (int)k
                                    : owner[pu] == (int)k                        ? (int)k
                                                                                 : HOST_PU_SHARED;
                }
                CPUSET_FOREACH (pu, plan->held_pus) /* held for its emulator: its own */
                        if ((unsigned)pu < t->npus)
                                owner[pu] = owner[pu] < 0 && owner[pu] != HOST_PU_SHARED ? (int)k
                                            : owner[pu] == (int)k                        ? (int)k
                                                                                         : HOST_PU_SHARED;
        }
        return draw(c, t, owner, names);
}
