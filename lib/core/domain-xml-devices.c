/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host PCI devices of a domain definition (see domain-xml-devices.h). */
#include "domain-xml-devices.h"
#include "domain-xml-numa.h"
#include "pci.h"

#include <string.h>

static bool attr_is(const char **names, const char **values, const char *name, const char *value)
{
        const char *v = domain_xml_attr(names, values, name);
        return v && strcmp(v, value) == 0;
}

PciHolder domain_xml_pci_holder(const char *element, const char **names, const char **values)
{
        if (strcmp(element, "hostdev") == 0 && attr_is(names, values, "type", "pci") &&
            !attr_is(names, values, "mode", "capabilities"))
                return PCI_HOLDER_HOSTDEV;
        if (strcmp(element, "interface") == 0 && attr_is(names, values, "type", "hostdev"))
                return PCI_HOLDER_INTERFACE;
        if (strcmp(element, "disk") == 0 && attr_is(names, values, "type", "nvme"))
                return PCI_HOLDER_NVME;
        return PCI_HOLDER_NONE;
}

static const char *holder_name(PciHolder holder)
{
        switch (holder) {
        case PCI_HOLDER_INTERFACE:
                return "<interface type='hostdev'>";
        case PCI_HOLDER_NVME:
                return "<disk type='nvme'>";
        default:
                return "<hostdev type='pci'>";
        }
}

void domain_xml_pci_address(DomainSpec *s, PciHolder holder, const char **names, const char **values,
                            GError **error)
{
        const char *type = domain_xml_attr(names, values, "type"), *bad = NULL;
        uint64_t address;

        if (holder == PCI_HOLDER_NONE || (type && strcmp(type, "pci") != 0))
                return;
        if (!pci_address_from_attributes(domain_xml_attr(names, values, "domain"),
                                         domain_xml_attr(names, values, "bus"),
                                         domain_xml_attr(names, values, "slot"),
                                         domain_xml_attr(names, values, "function"), &address, &bad)) {
                const char *v = domain_xml_attr(names, values, bad);
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "%s: invalid PCI address %s='%s' in its <source>", holder_name(holder), bad,
                            v ? v : "");
                return;
        }
        if (!s->pci_devices)
                s->pci_devices = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        if (s->pci_devices->len >= DOMAIN_XML_MAX_PCI_DEVICES) {
                g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                            "more than %u host PCI devices passed through", DOMAIN_XML_MAX_PCI_DEVICES);
                return;
        }
        g_array_append_val(s->pci_devices, address);
}
