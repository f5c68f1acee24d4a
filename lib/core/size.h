/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/*
 * Parses a size: a whole number with an optional binary suffix K, M, G, T (also KiB, MiB, GiB, TiB,
 * case-insensitive); no suffix means bytes. Returns 0, -EINVAL (syntax) or -ERANGE (overflow).
 */
int size_parse(const char *text, uint64_t *ret);

/* "4.0 GiB", "512 MiB", "100 B" into buf (at least 32 bytes); returns buf. */
char *size_format(uint64_t bytes, char *buf, unsigned len);

/*
 * bytes as size_format() writes it, or, when that reads as much as than (which bytes is below: 2 GiB less
 * 390 KiB against 2 GiB; 1 KiB short of 1 GiB, "1024.0 MiB"), in the largest smaller unit that tells the
 * two apart ("2047.6 MiB", "1048575.0 KiB"), so that a shortfall never reads as none.
 */
char *size_format_short_of(uint64_t bytes, uint64_t than, char *buf, unsigned len);
