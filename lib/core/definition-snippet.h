/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a domain's definition would have to say to hold a decision from its start: the <cputune> with a
 * <vcpupin> per vCPU (and the <emulatorpin>) and, when placementd binds the memory (not a binding the
 * definition or libvirt holds, which stays in its own mode), the <numatune> with the memory nodes and,
 * for guest cells, a <memnode> per cell. libvirt binds a guest cell's memory only from the definition: a
 * running domain's per-cell binding cannot change (docs/running.md), so this is what an operator or their
 * tooling puts in the definition.
 */

#include <json-glib/json-glib.h>

/* The snippet for one decision object (decision-json.h's members). Returns NULL with *ret_error when the
 * decision pins nothing (unplaceable, skipped) or lacks its members. */
char *definition_snippet(JsonObject *decision, char **ret_error);
