/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core or policy code that includes hwloc: must not compile. */
#include "ledger.h"

#include <hwloc.h>
