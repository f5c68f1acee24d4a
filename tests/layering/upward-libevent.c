/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core or policy code that includes libevent: must not compile. */
#include "ledger.h"

#include <event2/event.h>
