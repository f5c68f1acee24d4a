/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core code that includes a policy: must not compile (policies/ is not on the core's include path). */
#include "ledger.h"

#include "policy.h"
