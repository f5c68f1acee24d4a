/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading JSON that arrives from outside (the daemon's answers, a remote host's daemon over -H): a member
 * or element of the wanted type, else a neutral value, never a critical or a crash. Objects may be NULL.
 */

#include <json-glib/json-glib.h>

/* The string member, else "" (absent, null, another type). */
const char *json_get_string(JsonObject *o, const char *name);
/* The integer member, else fallback. */
gint64 json_get_int(JsonObject *o, const char *name, gint64 fallback);
/* The number member (integer or double), else 0. */
double json_get_double(JsonObject *o, const char *name);
/* The boolean member, else FALSE. */
gboolean json_get_bool(JsonObject *o, const char *name);
/* The array or object member, else NULL. */
JsonArray *json_get_array(JsonObject *o, const char *name);
JsonObject *json_get_object(JsonObject *o, const char *name);
/* Element i as a string ("" otherwise), an integer (fallback otherwise), a number (0 otherwise), an
 * object (NULL otherwise). a may be NULL. */
const char *json_elem_string(JsonArray *a, unsigned i);
gint64 json_elem_int(JsonArray *a, unsigned i, gint64 fallback);
double json_elem_double(JsonArray *a, unsigned i);
JsonObject *json_elem_object(JsonArray *a, unsigned i);
/* Elements of a (0 for NULL). */
unsigned json_length(JsonArray *a);
