/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the core and the policies may include: core headers. Must compile. */
#include "ledger.h"
#include "topology.h"

int layering_pure(void);
int layering_pure(void)
{
        return TOPOLOGY_LOCAL;
}
