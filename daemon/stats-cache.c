/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stats-cache.h"

#include <errno.h>

#include "log.h"

struct StatsCache {
        struct event *timer;
        unsigned interval_ms;
        StatsFetch fetch;
        void *userdata;
        GHashTable *table;
        bool failing; /* the last fetch failed and said so: say it again only after a success */
        StatsListener listener;
        void *listener_data;
};

static void arm(StatsCache *c)
{
        struct timeval tv = {.tv_sec = c->interval_ms / 1000, .tv_usec = (c->interval_ms % 1000) * 1000};
        evtimer_add(c->timer, &tv);
}

void stats_cache_refresh(StatsCache *c)
{
        g_autofree char *error = NULL;
        GHashTable *table = NULL;
        int r = c->fetch(c->userdata, &table, &error);

        g_clear_pointer(&c->table, g_hash_table_unref);
        if (r >= 0) {
                c->table = table;
                c->failing = false;
                if (c->listener)
                        c->listener(table, c->listener_data);
        } else if (!c->failing) {
                c->failing = true;
                if (r == -ENOTSUP || r == -ENOTCONN)
                        log_debug("No domain CPU statistics: %s", error ? error : g_strerror(-r));
                else
                        log_warning("No domain CPU statistics: %s; trying again every %u ms",
                                    error ? error : g_strerror(-r), c->interval_ms);
        }
        arm(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
        (void)fd;
        (void)what;
        stats_cache_refresh(arg);
}

StatsCache *stats_cache_new(struct event_base *base, unsigned interval_ms, StatsFetch fetch, void *userdata)
{
        StatsCache *c = g_new0(StatsCache, 1);

        c->interval_ms = MAX(interval_ms, 1u);
        c->fetch = fetch;
        c->userdata = userdata;
        c->timer = evtimer_new(base, on_timer, c);
        arm(c);
        return c;
}

static int fetch_from_manager(void *userdata, GHashTable **ret, char **ret_error)
{
        return manager_cpu_stats(userdata, ret, ret_error);
}

StatsCache *stats_cache_new_for_manager(struct event_base *base, Manager *m)
{
        return stats_cache_new(base, stats_cache_interval_for(manager_config(m)->load_interval_sec),
                               fetch_from_manager, m);
}

void stats_cache_set_listener(StatsCache *c, StatsListener listener, void *userdata)
{
        c->listener = listener;
        c->listener_data = userdata;
}

void stats_cache_set_interval(StatsCache *c, unsigned interval_ms)
{
        c->interval_ms = MAX(interval_ms, 1u);
}

unsigned stats_cache_interval_for(unsigned load_interval_sec)
{
        return load_interval_sec ? load_interval_sec * 1000u : STATS_CACHE_INTERVAL_MS;
}

void stats_cache_free(StatsCache *c)
{
        if (!c)
                return;
        event_free(c->timer);
        g_clear_pointer(&c->table, g_hash_table_unref);
        g_free(c);
}

GHashTable *stats_cache_table(const StatsCache *c)
{
        return c && c->table ? g_hash_table_ref(c->table) : NULL;
}
