/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Daemon code outside the manager's sources and demo.c (daemon/meson.build) that includes a libvirt
 * adapter: must not compile. */
#include "manager.h"

#include "virt-domain.h"
