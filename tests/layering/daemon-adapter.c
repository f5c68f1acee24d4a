/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Daemon code outside manager.c, placer.c and demo.c that includes a libvirt adapter: must not compile. */
#include "manager.h"

#include "virt-domain.h"
