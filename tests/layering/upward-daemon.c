/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core or policy code that includes a daemon header: must not compile (daemon/ is not on their path). */
#include "ledger.h"

#include "manager.h"
