/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* map --svg and plan --topology --svg: the host map drawn by lstopo (host-svg.h). */
#include "placementctl.h"

#include <json-glib/json-glib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bus-cleanup.h"
#include "host-svg.h"
#include "json-get.h"
#include "topology-load.h"

/*
 * Each PU's owner from the daemon's map as data (GetHostMapJSON): the index of its domain in *ret_names
 * (in the order they first appear), or a HOST_PU_ mark. The daemon's CPUs must be this topology's.
 */
static int daemon_owners(const Topology *t, const char *json, int **ret_owner, GPtrArray **ret_names,
                         char **ret_error)
{
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
        g_autofree int *owner = g_new(int, MAX(t->npus, 1));
        JsonNode *root =
            json_parser_load_from_data(parser, json, -1, NULL) ? json_parser_get_root(parser) : NULL;
        JsonArray *cpus =
            json_get_array(root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL, "cpus");

        if (!cpus) {
                *ret_error = g_strdup("the daemon's map does not parse");
                return -EINVAL;
        }
        if (json_length(cpus) != t->npus) {
                *ret_error = g_strdup_printf("the daemon's map shows %u PUs, the topology %s has %u: give "
                                             "--topology= the daemon's own",
                                             json_length(cpus), t->source, t->npus);
                return -EINVAL;
        }
        for (unsigned p = 0; p < t->npus; p++)
                owner[p] = HOST_PU_FREE;
        for (unsigned i = 0; i < json_length(cpus); i++) {
                JsonObject *c = json_elem_object(cpus, i);
                JsonArray *doms = json_get_array(c, "domains");
                const char *state = json_get_string(c, "state");
                gint64 os = json_get_int(c, "cpu", -1);
                int pu = os >= 0 && os <= G_MAXINT ? topology_pu_by_os(t, (unsigned)os) : -1;
                gpointer k;

                if (pu < 0) {
                        *ret_error = g_strdup_printf("the daemon's CPU %" G_GINT64_FORMAT
                                                     " is not in the topology %s: give --topology= the "
                                                     "daemon's own",
                                                     os, t->source);
                        return -EINVAL;
                }
                if (strcmp(state, "reserved") == 0) {
                        owner[pu] = HOST_PU_RESERVED;
                } else if (json_length(doms) > 1) {
                        owner[pu] = HOST_PU_SHARED;
                } else if (json_length(doms) == 1) {
                        const char *name = json_elem_string(doms, 0);
                        if (!g_hash_table_lookup_extended(index, name, NULL, &k)) {
                                k = GUINT_TO_POINTER(names->len);
                                g_ptr_array_add(names, g_strdup(name));
                                g_hash_table_insert(index, g_ptr_array_index(names, names->len - 1), k);
                        }
                        owner[pu] = (int)GPOINTER_TO_UINT(k);
                }
        }
        *ret_owner = g_steal_pointer(&owner);
        *ret_names = g_steal_pointer(&names);
        return 0;
}

struct MapSvg {
        int fd;           /* FILE, open for the picture */
        Topology *t;      /* online: the topology drawn */
        int *owner;       /* online: each PU's owner in the daemon's map (daemon_owners()) */
        GPtrArray *names; /* online: the domains that own PUs */
        char *map_json;   /* online: the daemon's map as data, for map --json to print */
};

void map_svg_free(MapSvg *m)
{
        if (!m)
                return;
        if (m->fd >= 0)
                close(m->fd);
        g_clear_pointer(&m->t, topology_free);
        g_free(m->owner);
        if (m->names)
                g_ptr_array_unref(m->names);
        g_free(m->map_json);
        g_free(m);
}

int map_svg_open(const Ctl *c, MapSvg **ret)
{
        g_autoptr(MapSvg) m = g_new0(MapSvg, 1);
        g_autofree char *error = NULL;

        m->fd = host_svg_open(c->svg, &error);
        if (m->fd < 0) {
                ctl_error("placementctl: --svg=%s: %s", c->svg, error);
                return EXIT_RUNTIME;
        }
        *ret = g_steal_pointer(&m);
        return EXIT_OK;
}

static int draw(const Ctl *c, MapSvg *m, const Topology *t, const int *owner, const GPtrArray *names)
{
        g_autofree char *error = NULL;
        int fd = m->fd;

        m->fd = -1; /* host_svg_write() closes it */
        if (host_svg_write(t, owner, names, fd, c->svg, &error) < 0) {
                ctl_error("placementctl: --svg=%s: %s", c->svg, error);
                return EXIT_RUNTIME;
        }
        return EXIT_OK;
}

/* The daemon's map as data (GetHostMapJSON) and each of t's PUs' owner in it. Returns an exit code. */
static int read_owners(const Ctl *c, const Topology *t, char **ret_map, int **ret_owner,
                       GPtrArray **ret_names)
{
        g_autoptr(sd_bus_message) reply = NULL;
        g_autofree char *error = NULL;
        const char *map;
        int code;

        code = ctl_call(c, c->sd, "GetHostMapJSON", &reply, NULL);
        if (code || (code = ctl_read_string(reply, &map)))
                return code;
        if (daemon_owners(t, map, ret_owner, ret_names, &error) < 0) {
                ctl_error("placementctl map --svg: %s", error);
                return EXIT_RUNTIME;
        }
        *ret_map = g_strdup(map);
        return EXIT_OK;
}

int map_svg_online_prepare(const Ctl *c, MapSvg **ret)
{
        g_autoptr(Topology) t = NULL;
        g_autoptr(GPtrArray) names = NULL;
        g_autoptr(MapSvg) m = NULL;
        g_autofree char *error = NULL, *map = NULL;
        g_autofree int *owner = NULL;
        const char *source = c->topology ? c->topology : "host";
        int code;

        /* map --svg without --topology draws this host (verb_map refuses that with -H) */
        if (topology_load(source, &t, &error) < 0) {
                ctl_error("placementctl map --svg: %s", error);
                return c->topology ? EXIT_USAGE : EXIT_RUNTIME;
        }
        code = read_owners(c, t, &map, &owner, &names);
        /* the file last: a map that cannot be drawn leaves none made */
        if (code || (code = map_svg_open(c, &m)))
                return code;
        m->t = g_steal_pointer(&t);
        m->owner = g_steal_pointer(&owner);
        m->names = g_steal_pointer(&names);
        m->map_json = g_steal_pointer(&map);
        *ret = g_steal_pointer(&m);
        return EXIT_OK;
}

int map_svg_online_reread(const Ctl *c, MapSvg *m, bool *ret_same)
{
        g_autoptr(GPtrArray) names = NULL;
        g_autofree char *map = NULL;
        g_autofree int *owner = NULL;
        int code = read_owners(c, m->t, &map, &owner, &names);

        if (code)
                return code;
        *ret_same = strcmp(map, m->map_json) == 0;
        if (!*ret_same) {
                g_free(m->map_json);
                g_free(m->owner);
                g_ptr_array_unref(m->names);
                m->map_json = g_steal_pointer(&map);
                m->owner = g_steal_pointer(&owner);
                m->names = g_steal_pointer(&names);
        }
        return EXIT_OK;
}

const char *map_svg_online_json(const MapSvg *m)
{
        return m->map_json;
}

char *map_svg_online_text(const MapSvg *m)
{
        g_autoptr(JsonParser) parser = json_parser_new();
        JsonNode *root =
            json_parser_load_from_data(parser, m->map_json, -1, NULL) ? json_parser_get_root(parser) : NULL;
        JsonNode *text = root && JSON_NODE_HOLDS_OBJECT(root)
                             ? json_object_get_member(json_node_get_object(root), "text")
                             : NULL;

        return text && JSON_NODE_HOLDS_VALUE(text) && json_node_get_value_type(text) == G_TYPE_STRING
                   ? g_strdup(json_node_get_string(text))
                   : NULL;
}

int map_svg_online(const Ctl *c, MapSvg *m)
{
        return draw(c, m, m->t, m->owner, m->names);
}

/* The same marks as the text map (lib/hostmap.c): the domain counted on a PU, several, or reserved. */
int map_svg_offline(const Ctl *c, MapSvg *m, const Topology *t, const Ledger *l, const CpuSet *reserved)
{
        g_autoptr(GPtrArray) keys = ledger_keys(l);
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        g_autofree int *owner = g_new(int, MAX(t->npus, 1));

        for (unsigned p = 0; p < t->npus; p++)
                owner[p] =
                    reserved && cpuset_has(reserved, t->pus[p].os_index) ? HOST_PU_RESERVED : HOST_PU_FREE;
        for (unsigned k = 0; k < keys->len; k++) {
                const Plan *plan = ledger_lookup(l, g_ptr_array_index(keys, k));
                g_autoptr(CpuSet) held = plan_held_thread_pus(t, plan); /* its emulator's and I/O threads' */
                g_ptr_array_add(names, plan->name && *plan->name ? plan->name : g_ptr_array_index(keys, k));
                for (unsigned i = 0; i < plan->nvcpus; i++) {
                        int pu = plan->vcpu_pu[i];
                        if (pu < 0 || (unsigned)pu >= t->npus)
                                continue;
                        owner[pu] = owner[pu] < 0 && owner[pu] != HOST_PU_SHARED ? (int)k
                                    : owner[pu] == (int)k                        ? (int)k
                                                                                 : HOST_PU_SHARED;
                }
                CPUSET_FOREACH (pu, held) /* held for its QEMU threads: its own */
                        owner[pu] = owner[pu] < 0 && owner[pu] != HOST_PU_SHARED ? (int)k
                                    : owner[pu] == (int)k                        ? (int)k
                                                                                 : HOST_PU_SHARED;
        }
        return draw(c, m, t, owner, names);
}
