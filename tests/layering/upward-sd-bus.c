/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core or policy code that includes sd-bus: must not compile. */
#include "ledger.h"

#include <systemd/sd-bus.h>
