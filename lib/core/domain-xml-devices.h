/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The host PCI devices a domain definition passes through, read beside domain-xml.c's parser: their
 * NUMA locality is where the guest's vCPUs should run (policy: the set search tries the sets near them
 * first). Read from
 *   <hostdev mode='subsystem' type='pci'><source><address domain bus slot function/>,
 *   <interface type='hostdev'><source><address type='pci' .../> (an SR-IOV VF as a NIC), and
 *   <disk type='nvme'><source type='pci'><address .../> (an NVMe controller libvirt hands to QEMU).
 * The guest-side <address> of a device (its child, not its <source>'s) is not a host device.
 */

#include <glib.h>

#include "domain-xml.h"

/* More host devices than one guest's PCI topology can take, with room to spare. */
#define DOMAIN_XML_MAX_PCI_DEVICES 1024u

typedef enum PciHolder {
        PCI_HOLDER_NONE,
        PCI_HOLDER_HOSTDEV,
        PCI_HOLDER_INTERFACE,
        PCI_HOLDER_NVME,
} PciHolder;

/* What a child of <devices> is: a holder of a host PCI device, or none. */
PciHolder domain_xml_pci_holder(const char *element, const char **names, const char **values);
/* An <address> in the <source> of a holder: adds the device to s->pci_devices. Sets *error when the
 * address is not one libvirt accepts. */
void domain_xml_pci_address(DomainSpec *s, PciHolder holder, const char **names, const char **values,
                            GError **error);
