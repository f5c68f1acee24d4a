/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See daemon/poison/README and docs/architecture.md. */
#error "the daemon may not include <libvirt/libvirt-admin.h> outside the manager's sources and demo.c"
