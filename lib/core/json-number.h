/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * json (JSON text, as json-glib writes it) with each number that has a fraction or an exponent in the
 * fewest digits that read back as the same double: "0.4", not json-glib's "0.40000000000000002" (it
 * writes 17 significant digits). A whole value keeps its ".0", as json-glib marks a double; integers
 * and strings are left as they are. A new string (g_free()).
 */
char *json_numbers_shortest(const char *json);
