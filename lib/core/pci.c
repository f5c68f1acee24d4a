/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pci.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

/* One attribute read as libvirt reads it (strtoul with base 0); NULL is 0. */
static bool attribute(const char *text, uint64_t max, uint64_t *ret)
{
        char *end = NULL;
        guint64 v;

        if (!text) {
                *ret = 0;
                return true;
        }
        if (!g_ascii_isdigit(*text))
                return false;
        errno = 0;
        v = g_ascii_strtoull(text, &end, 0);
        if (errno || end == text || *end || v > max)
                return false;
        *ret = v;
        return true;
}

bool pci_address_from_attributes(const char *domain, const char *bus, const char *slot, const char *function,
                                 uint64_t *ret, const char **ret_bad)
{
        uint64_t d, b, s, f;
        const char *bad = NULL;

        if (!attribute(domain, G_MAXUINT32, &d))
                bad = "domain";
        else if (!attribute(bus, PCI_BUS_MAX, &b))
                bad = "bus";
        else if (!attribute(slot, PCI_SLOT_MAX, &s))
                bad = "slot";
        else if (!attribute(function, PCI_FUNCTION_MAX, &f))
                bad = "function";
        if (bad) {
                if (ret_bad)
                        *ret_bad = bad;
                return false;
        }
        *ret = pci_address((uint32_t)d, (unsigned)b, (unsigned)s, (unsigned)f);
        return true;
}

const char *pci_address_format(uint64_t address, char *buf)
{
        g_snprintf(buf, PCI_ADDRESS_TEXT_MAX, "%04x:%02x:%02x.%x", (unsigned)(address >> 16),
                   (unsigned)(address >> 8 & 0xff), (unsigned)(address >> 3 & 0x1f),
                   (unsigned)(address & 7));
        return buf;
}
