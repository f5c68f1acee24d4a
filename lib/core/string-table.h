/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Enum <-> string pairs from one table. Define `static const char *const NAME_table[MAX]` indexed by the
 * enum, then DEFINE_STRING_TABLE_LOOKUP(NAME, Type, MAX) for NAME_to_string() (NULL when out of range)
 * and NAME_from_string() (the value, or -EINVAL when unknown or NULL), or only one half of it.
 * The including file needs <errno.h> and <string.h>.
 */

#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, max)                                               \
        const char *name##_to_string(type i)                                                                \
        {                                                                                                   \
                return (unsigned)i < (unsigned)(max) ? name##_table[i] : NULL;                              \
        }

#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, max)                                                   \
        int name##_from_string(const char *s)                                                               \
        {                                                                                                   \
                for (int i = 0; s && i < (int)(max); i++)                                                   \
                        if (name##_table[i] && strcmp(name##_table[i], s) == 0)                             \
                                return i;                                                                   \
                return -EINVAL;                                                                             \
        }

#define DEFINE_STRING_TABLE_LOOKUP(name, type, max)                                                         \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, max)                                               \
        DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, max)
