/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A running domain as libvirt's own calls describe it, for one whose XML placementd cannot read. */

#include <libvirt/libvirt.h>

#include "domain-xml.h"

/*
 * What dom runs with, read without its XML: name, UUID, libvirt's ID of this run, its online vCPUs (their
 * ids), its memory ceiling, its live emulator pin (NULL when unpinned) and <numatune><memory> binding.
 * Nothing else of its definition (cells, hugepages, I/O threads) is known. Returns 0, or a negative errno
 * with *ret_error when libvirt cannot say (the domain gone, libvirt away).
 */
int virt_domain_read_bare(virDomainPtr dom, DomainSpec **ret, char **ret_error);
