/* SPDX-License-Identifier: LGPL-2.1-or-later */
#error "core and policies may not include <libvirt/libvirt.h>: see docs/architecture.md"
