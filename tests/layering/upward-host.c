/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core or policy code that includes a host adapter: must not compile (lib/host is not on their path). */
#include "ledger.h"

#include "virt-domain.h"
