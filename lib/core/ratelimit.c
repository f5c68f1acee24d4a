/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ratelimit.h"

#define USEC_PER_SEC 1000000u

typedef enum KeyClass { CLASS_UNKNOWN, CLASS_LIMITED, CLASS_EXEMPT } KeyClass;

typedef struct Bucket {
        double tokens;
        uint64_t last_usec;
        KeyClass class;
} Bucket;

struct RateLimit {
        double rate, burst;
        unsigned max_keys;
        GHashTable *buckets; /* key -> Bucket */
        Bucket overflow;
        uint64_t last_sweep_usec;
        bool swept;
};

RateLimit *rate_limit_new(unsigned rate_per_sec, unsigned burst, unsigned max_keys)
{
        RateLimit *r = g_new0(RateLimit, 1);

        r->rate = rate_per_sec;
        r->burst = MAX(burst, 1u);
        r->max_keys = max_keys;
        r->buckets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        r->overflow = (Bucket){.tokens = r->burst, .class = CLASS_LIMITED};
        return r;
}

void rate_limit_free(RateLimit *r)
{
        if (!r)
                return;
        g_hash_table_unref(r->buckets);
        g_free(r);
}

static void refill(const RateLimit *r, Bucket *b, uint64_t now_usec)
{
        if (now_usec > b->last_usec)
                b->tokens =
                    MIN(r->burst, b->tokens + r->rate * (double)(now_usec - b->last_usec) / USEC_PER_SEC);
        b->last_usec = MAX(b->last_usec, now_usec);
}

static gboolean is_idle(gpointer key, gpointer value, gpointer userdata)
{
        const RateLimit *r = userdata;
        Bucket *b = value;
        (void)key;
        refill(r, b, r->last_sweep_usec);
        return b->tokens >= r->burst;
}

/* The bucket of key, a new one when there is room, else the shared overflow bucket. */
static Bucket *bucket_of(RateLimit *r, const char *key, uint64_t now_usec)
{
        Bucket *b = g_hash_table_lookup(r->buckets, key);

        if (b)
                return b;
        if (g_hash_table_size(r->buckets) >= r->max_keys &&
            (!r->swept || now_usec - r->last_sweep_usec >= USEC_PER_SEC)) {
                r->swept = true;
                r->last_sweep_usec = now_usec;
                g_hash_table_foreach_remove(r->buckets, is_idle, r);
        }
        if (g_hash_table_size(r->buckets) >= r->max_keys)
                return &r->overflow;
        b = g_new(Bucket, 1);
        *b = (Bucket){.tokens = r->burst, .last_usec = now_usec, .class = CLASS_UNKNOWN};
        g_hash_table_insert(r->buckets, g_strdup(key), b);
        return b;
}

RateVerdict rate_limit_take(RateLimit *r, const char *key, unsigned cost, uint64_t now_usec)
{
        Bucket *b = bucket_of(r, key, now_usec);
        double need = MIN((double)MAX(cost, 1u), r->burst);

        if (b->class == CLASS_EXEMPT)
                return RATE_PASS;
        refill(r, b, now_usec);
        if (b->tokens >= need) {
                b->tokens -= need;
                return RATE_PASS;
        }
        return b->class == CLASS_UNKNOWN ? RATE_UNKNOWN : RATE_DENY;
}

void rate_limit_drain(RateLimit *r, const char *key, uint64_t now_usec)
{
        Bucket *b = bucket_of(r, key, now_usec);

        if (b->class == CLASS_EXEMPT)
                return;
        refill(r, b, now_usec);
        b->tokens = 0;
}

void rate_limit_classify(RateLimit *r, const char *key, bool exempt, uint64_t now_usec)
{
        Bucket *b = bucket_of(r, key, now_usec);

        if (b != &r->overflow)
                b->class = exempt ? CLASS_EXEMPT : CLASS_LIMITED;
}

unsigned rate_limit_keys(const RateLimit *r)
{
        return g_hash_table_size(r->buckets);
}
