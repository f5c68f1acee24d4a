/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct CpuSet {
        unsigned nwords;
        uint64_t *words;
};

CpuSet *cpuset_new(void)
{
        return g_new0(CpuSet, 1);
}

CpuSet *cpuset_copy(const CpuSet *s)
{
        CpuSet *c = cpuset_new();
        if (s && s->nwords) {
                c->nwords = s->nwords;
                c->words = g_memdup2(s->words, sizeof(uint64_t) * s->nwords);
        }
        return c;
}

void cpuset_free(CpuSet *s)
{
        if (!s)
                return;
        g_free(s->words);
        g_free(s);
}

static void grow(CpuSet *s, unsigned n)
{
        unsigned need = n / 64 + 1;
        if (need <= s->nwords)
                return;
        s->words = g_renew(uint64_t, s->words, need);
        memset(s->words + s->nwords, 0, sizeof(uint64_t) * (need - s->nwords));
        s->nwords = need;
}

void cpuset_add(CpuSet *s, unsigned n)
{
        grow(s, n);
        s->words[n / 64] |= UINT64_C(1) << (n % 64);
}

void cpuset_remove(CpuSet *s, unsigned n)
{
        if (n / 64 < s->nwords)
                s->words[n / 64] &= ~(UINT64_C(1) << (n % 64));
}

bool cpuset_has(const CpuSet *s, unsigned n)
{
        return n / 64 < s->nwords && (s->words[n / 64] >> (n % 64)) & 1;
}

unsigned cpuset_count(const CpuSet *s)
{
        unsigned c = 0;
        for (unsigned i = 0; i < s->nwords; i++)
                c += (unsigned)__builtin_popcountll(s->words[i]);
        return c;
}

bool cpuset_is_empty(const CpuSet *s)
{
        for (unsigned i = 0; i < s->nwords; i++)
                if (s->words[i])
                        return false;
        return true;
}

static uint64_t word(const CpuSet *s, unsigned i)
{
        return i < s->nwords ? s->words[i] : 0;
}

bool cpuset_equal(const CpuSet *a, const CpuSet *b)
{
        unsigned n = MAX(a->nwords, b->nwords);
        for (unsigned i = 0; i < n; i++)
                if (word(a, i) != word(b, i))
                        return false;
        return true;
}

void cpuset_union(CpuSet *s, const CpuSet *other)
{
        if (other->nwords)
                grow(s, other->nwords * 64 - 1);
        for (unsigned i = 0; i < other->nwords; i++)
                s->words[i] |= other->words[i];
}

void cpuset_subtract(CpuSet *s, const CpuSet *other)
{
        for (unsigned i = 0; i < s->nwords; i++)
                s->words[i] &= ~word(other, i);
}

bool cpuset_intersects(const CpuSet *a, const CpuSet *b)
{
        unsigned n = MIN(a->nwords, b->nwords);
        for (unsigned i = 0; i < n; i++)
                if (a->words[i] & b->words[i])
                        return true;
        return false;
}

void cpuset_clear(CpuSet *s)
{
        if (s->nwords)
                memset(s->words, 0, sizeof(uint64_t) * s->nwords);
}

int cpuset_next(const CpuSet *s, unsigned from)
{
        for (unsigned i = from / 64; i < s->nwords; i++) {
                uint64_t w = s->words[i];
                if (i == from / 64)
                        w &= ~UINT64_C(0) << (from % 64);
                if (w)
                        return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
        }
        return -1;
}

static int parse_number(const char **p, unsigned max, unsigned *ret)
{
        const char *s = *p;
        uint64_t v = 0;

        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        while (isdigit((unsigned char)*s)) {
                v = v * 10 + (uint64_t)(*s - '0');
                if (v > max)
                        return -ERANGE;
                s++;
        }
        *p = s;
        *ret = (unsigned)v;
        return 0;
}

/* libvirt's virSkipSpaces: any ASCII white space, a line break in an attribute included */
static void skip_blanks(const char **p)
{
        while (g_ascii_isspace(**p))
                (*p)++;
}

/* Adds lo..hi a word at a time: a list of many wide ranges costs its length, not its members. */
static void add_range(CpuSet *s, unsigned lo, unsigned hi)
{
        grow(s, hi);
        for (unsigned w = lo / 64; w <= hi / 64; w++) {
                unsigned from = w == lo / 64 ? lo % 64 : 0, to = w == hi / 64 ? hi % 64 : 63;
                uint64_t bits =
                    to - from == 63 ? UINT64_MAX : ((UINT64_C(1) << (to - from + 1)) - 1) << from;
                s->words[w] |= bits;
        }
}

/* A list whose numbers go up to max; those above CPUSET_MAX are left out, *beyond set when one is (max
 * is CPUSET_MAX but for cpuset_parse_ids()). */
static int parse_list(const char *text, unsigned max, CpuSet **ret, bool *beyond, char **ret_error)
{
        g_autoptr(CpuSet) s = cpuset_new();
        const char *p = text;
        int r;

        if (strnlen(text, CPUSET_MAX_TEXT + 1) > CPUSET_MAX_TEXT) {
                if (ret_error)
                        *ret_error = g_strdup_printf("cpuset list '%.20s...' is longer than %u characters",
                                                     text, CPUSET_MAX_TEXT);
                return -E2BIG;
        }
        skip_blanks(&p);
        if (*p == '\0') {
                *ret = g_steal_pointer(&s);
                return 0;
        }
        for (;;) {
                const char *item = p;
                bool negate = false;
                unsigned lo, hi;

                skip_blanks(&p);
                if (*p == '^') {
                        negate = true;
                        p++;
                }
                r = parse_number(&p, max, &lo);
                hi = lo;
                if (r == 0)
                        skip_blanks(&p);
                if (r == 0 && *p == '-') {
                        p++;
                        skip_blanks(&p);
                        r = parse_number(&p, max, &hi);
                        if (r == 0 && hi < lo)
                                r = -EINVAL;
                }
                if (r == 0 && negate && hi != lo)
                        r = -EINVAL; /* libvirt accepts only single numbers after '^' */
                skip_blanks(&p);
                if (r == 0 && *p != ',' && *p != '\0')
                        r = -EINVAL;
                if (r < 0) {
                        if (ret_error) {
                                size_t len = strcspn(item, ",");
                                *ret_error = r == -ERANGE
                                                 ? g_strdup_printf("CPU number in '%.*s' exceeds %u",
                                                                   (int)len, item, max)
                                                 : g_strdup_printf("invalid cpuset item '%.*s' in '%s'",
                                                                   (int)len, item, text);
                        }
                        return r;
                }
                if (hi > CPUSET_MAX)
                        *beyond = true;
                if (negate)
                        cpuset_remove(s, lo);
                else if (lo <= CPUSET_MAX)
                        add_range(s, lo, MIN(hi, CPUSET_MAX));
                if (*p == '\0')
                        break;
                p++; /* ',' */
                skip_blanks(&p);
                if (*p == '\0') /* a trailing comma, as libvirt takes it */
                        break;
        }
        *ret = g_steal_pointer(&s);
        return 0;
}

int cpuset_parse(const char *text, CpuSet **ret, char **ret_error)
{
        bool beyond = false;

        return parse_list(text, CPUSET_MAX, ret, &beyond, ret_error);
}

int cpuset_parse_ids(const char *text, CpuSet **ret, bool *ret_beyond, char **ret_error)
{
        bool beyond = false;
        int r = parse_list(text, G_MAXUINT32, ret, &beyond, ret_error);

        if (r == 0 && ret_beyond)
                *ret_beyond = beyond;
        return r;
}

char *cpuset_format(const CpuSet *s)
{
        GString *out = g_string_new(NULL);
        int n = cpuset_next(s, 0);

        while (n >= 0) {
                int end = n;
                while (cpuset_has(s, (unsigned)end + 1))
                        end++;
                if (out->len)
                        g_string_append_c(out, ',');
                if (end == n)
                        g_string_append_printf(out, "%d", n);
                else
                        g_string_append_printf(out, "%d-%d", n, end);
                n = cpuset_next(s, (unsigned)end + 1);
        }
        return g_string_free(out, FALSE);
}
