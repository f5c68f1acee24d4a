/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What of a definition is placementd's own: the pins and the binding it writes live (and records in its
 * decision) against the user's own statements. Pure: DomainSpec in, answers out.
 */

#include "domain-xml.h"

/*
 * Whether def (a persistent definition carrying a record: made from live XML) differs from snapshot
 * (the user's definition recorded in it) only by what placementd wrote live and recorded in def's
 * decision: its vCPU pins, emulator pin, I/O thread pins and memory binding. Any other difference is
 * the user's edit (the opt-outs, <vcpu cpuset>, <numatune> other than the recorded binding, memnodes,
 * guest cells, pins other than the recorded ones), and def then stands for itself.
 */
bool domain_spec_record_explains(const DomainSpec *def, const DomainSpec *snapshot);

/*
 * Whether live (the running definition of a domain carrying a record) can be snapshot (the user's
 * definition recorded in it) run on: the two differ at most in what anyone may change on a running
 * domain (vCPU, emulator and I/O thread pins, the memory binding: placementd's own, or made by hand and
 * followed as such). A difference in anything else (numad's placement, <vcpu cpuset>, <memnode>s, guest
 * cells) means the domain was started again from an edited definition that kept the record (its dumped
 * live XML), and live then stands for itself.
 */
bool domain_spec_record_explains_live(const DomainSpec *live, const DomainSpec *snapshot);

/*
 * On a definition placementd touched without a usable snapshot of the user's: drops from user the
 * emulator pin and the memory binding that are exactly what src's recorded decision applied (the
 * recorded emulator set; the recorded memory nodes with memory-binding="applied"), so they are not
 * taken for the user's constraints. Anything else stays the user's.
 */
void domain_spec_drop_recorded(DomainSpec *user, const DomainSpec *src);
