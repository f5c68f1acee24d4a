/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Host PCI addresses (domain:bus:slot.function), as one number: the key placementd looks a device's
 * NUMA locality up by (Topology.pci) and the form a domain definition's passed-through devices are
 * read into (DomainSpec.pci_devices).
 */

#include <stdbool.h>
#include <stdint.h>

/* PCI_ADDRESS_TEXT_MAX holds "ffffffff:ff:1f.7" and its NUL. */
#define PCI_ADDRESS_TEXT_MAX 17u
/* libvirt's limits: a domain up to 0xffffffff (VMD domains are above 0xffff), 256 buses, 32 slots,
 * 8 functions. */
#define PCI_BUS_MAX      0xffu
#define PCI_SLOT_MAX     0x1fu
#define PCI_FUNCTION_MAX 7u

static inline uint64_t pci_address(uint32_t domain, unsigned bus, unsigned slot, unsigned function)
{
        return (uint64_t)domain << 16 | (uint64_t)(bus & 0xff) << 8 | (slot & 0x1f) << 3 | (function & 7);
}

/*
 * The address of libvirt's <address domain= bus= slot= function=/> attributes: numbers as libvirt
 * reads them (0x for hex, a leading 0 for octal, else decimal), an absent one 0. False, with
 * *ret_bad naming the first attribute that is not a number within its limit, when one is not.
 */
bool pci_address_from_attributes(const char *domain, const char *bus, const char *slot, const char *function,
                                 uint64_t *ret, const char **ret_bad);
/* "0000:3b:00.0" into buf[PCI_ADDRESS_TEXT_MAX]; returns buf. */
const char *pci_address_format(uint64_t address, char *buf);
