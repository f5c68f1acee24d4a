/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JSON shape of CPU advice, shared by placementctl cpu-advice --json and the daemon's D-Bus answer:
 *
 *   {"domain", "mode", "model", "vendor", "verdict": "host-cpu|ok|improvable|not-offered",
 *    "hidden": [{"feature", "group", "note", "offered": true|false|null}], "declined": [names the definition
 *    disables or forbids itself],
 *    "suggested": null | {"mode": "host-model", "model", "vendor", "recovers": [...], "loses": [...]}}
 *
 * "offered" is whether the suggested model has the feature (null without a suggestion).
 */

#include <json-glib/json-glib.h>

#include "cpu-features.h"

/* Adds the members above to an object the builder has open. */
void cpu_advice_json_add_members(JsonBuilder *b, const CpuAdvice *a);
/* The same as a compact object; caller frees. */
char *cpu_advice_to_json(const CpuAdvice *a);
/* A feature list: ["aes", ...]. */
void cpu_json_add_feature_list(JsonBuilder *b, const char *key, const GPtrArray *names);
