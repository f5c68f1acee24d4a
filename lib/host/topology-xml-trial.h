/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

/* How long hwloc may take to read an XML file in topology_xml_trial_load(). */
#define TOPOLOGY_XML_TRIAL_SEC 30u

/*
 * hwloc crashes on malformed XML that the pre-check cannot know of. Before the caller loads XML that is
 * not this host's own, hwloc reads it in a child process (fork; the child loads and exits), so that a
 * crash or a hang ends the child, not the daemon or placementctl. The child runs hwloc (malloc and
 * all) after fork(), which is safe only while the caller has one thread: placementd and placementctl
 * load their topology before libvirt, D-Bus or anything else starts a thread; keep it so (a threaded
 * caller would need posix_spawn of a helper instead). What the child's hwloc writes to stderr is shown
 * only when it crashed or hung: otherwise the caller's own load says it again. The child reads with
 * hwloc's verbose XML messages on. Returns 0 when hwloc read the file, or refused it without saying why
 * (the caller's own load fails then); -EINVAL with "NAME: invalid hwloc XML: hwloc: WHY" when it refused
 * it and said why; -EINVAL with "hwloc crashed reading NAME (signal N, ...)" when it died by a signal;
 * -ETIMEDOUT when it ran longer than TOPOLOGY_XML_TRIAL_SEC; another negative errno when no child could be
 * made. *ret_error is set on failure (caller frees).
 */
int topology_xml_trial_load(const char *xml, gsize len, const char *name, char **ret_error);
