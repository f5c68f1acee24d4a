/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Token buckets keyed by a string (a D-Bus sender): each key may spend `burst` tokens at once and `rate`
 * per second after that; a call costs one token or more (its cost is capped at `burst`). The table is
 * bounded: it holds at most `max_keys` entries; an entry whose bucket has filled up again carries no state
 * and is dropped when room is needed (at most one sweep per second), and while every entry is still in use,
 * new keys share one overflow bucket. So a caller who makes up new keys cannot grow the accounting, only
 * crowd the other newcomers. A key can be classified once as exempt (root): it is never limited. Pure: the
 * caller passes the time.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct RateLimit RateLimit;

typedef enum RateVerdict {
        RATE_PASS,    /* go ahead; the tokens are spent */
        RATE_DENY,    /* the key's bucket is empty */
        RATE_UNKNOWN, /* the bucket is empty and the key was never classified: classify, then take again */
} RateVerdict;

RateLimit *rate_limit_new(unsigned rate_per_sec, unsigned burst, unsigned max_keys);
void rate_limit_free(RateLimit *r);
RateVerdict rate_limit_take(RateLimit *r, const char *key, unsigned cost, uint64_t now_usec);
/* Takes every token key's bucket holds (an exempt key's none): its next take waits for the refill. */
void rate_limit_drain(RateLimit *r, const char *key, uint64_t now_usec);
/* Records whether key is exempt; later takes of an exempt key always pass. */
void rate_limit_classify(RateLimit *r, const char *key, bool exempt, uint64_t now_usec);
/* Entries held (the overflow bucket not counted). */
unsigned rate_limit_keys(const RateLimit *r);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RateLimit, rate_limit_free)
