/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What placer.c, placer-apply.c, placer-adopt.c and placer-follow.c share: one domain's placement. */

#include "manager-internal.h"

/* placer-apply.c */
/*
 * Applies d's plan live: every vCPU pin, the memory binding, the emulator and I/O thread pins, each
 * attempted whatever failed before. Failures are kept in d; when a vCPU, emulator or I/O thread pin failed,
 * d becomes `failed` and the ledger holds the live vCPU pins and the pins that took. A job libvirt holds
 * on the domain stops it (what is left waits for it). What before (the earlier plan placementd applied,
 * NULL when none) pinned of QEMU's other threads that the plan leaves alone is undone. Returns 0, or
 * -ENOENT when the domain vanished.
 */
int placer_apply(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user, const Plan *before);
/*
 * The live vCPU pins of d's domain, adopted in place of d's plan (which the ledger releases first): its
 * size, realtime, vCPU ids and policy kept. With floating_ok, NULL when no vCPU is pinned narrower than the
 * host or than allowed (a domain floating as libvirt started it). NULL, the plan left counted, when the
 * pins cannot be read.
 */
Plan *placer_adopt_live_pins(Manager *m, virDomainPtr dom, const Decision *d, bool floating_ok,
                             const CpuSet *allowed);

/* placer-adopt.c */
/*
 * Adopts the decision live (the running definition) records, after checking that its pins run as
 * recorded, on CPUs the configuration still lets vCPUs use, on cores no other domain placementd placed
 * holds: the decision, stored and counted, or NULL when it does not check out (with warn, said at warning
 * level: "recorded decision not adopted (...); placing it anew").
 */
Decision *placer_adopt_recorded(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                                bool warn);

/* reason with what it says of where placementd put the emulator replaced by where someone else pinned it
 * (pin): "...; the emulator stays where it was pinned outside placementd (virsh emulatorpin: on 6)", or,
 * pin NULL, that someone else set it floating: "...; the emulator runs unpinned, as set outside placementd
 * (virsh emulatorpin)". */
char *placer_reason_hand_emulator(const char *reason, const CpuSet *pin);
/* What such a reason says of a hand pin of the emulator. */
#define HAND_EMULATOR_SAID "pinned outside placementd (virsh emulatorpin: on "
/* The memory binding a record names; none when it names none (or a word no binding has), or names one
 * applied or kept while nothing binds the memory of live. */
MemoryBinding placer_recorded_binding(const MetaDecision *md, const DomainSpec *live);

/* placer-follow.c */
/*
 * The live vCPU pins of a domain pinned by someone else: pins other than "anywhere" (every host CPU, or
 * every host CPU of <vcpu cpuset>, allowed's or the running definition's). NULL when it floats.
 */
CpuSet **placer_hand_pins(Manager *m, virDomainPtr dom, const DomainSpec *live, const CpuSet *allowed);
/*
 * The emulator pin someone else made: the live one when it is neither placementd's own (own: the pin its
 * decision applied; recorded: the one the domain's record names) nor libvirt's default (every host CPU,
 * or every CPU of the user's <vcpu cpuset> or of the running definition's, live; NULL: not known), and
 * the definition keeps no <emulatorpin> of its own; made user's (the policy leaves it alone) and returned.
 * NULL when there is none.
 */
const CpuSet *placer_hand_emulator(Manager *m, virDomainPtr dom, DomainSpec *user, const DomainSpec *live,
                                   const CpuSet *own, const CpuSet *recorded);
/*
 * The I/O threads someone else pinned (virsh iothreadpin --live) while old, placementd's decision, placed
 * the domain or counted it skipped (its pins as they run): each running I/O thread (live: the running
 * definition) the definition does not pin whose live pin is neither the decision's (one of its I/O threads
 * on its rule) nor libvirt's default. Made user's as a definition's <iothreadpin> is, without holding its
 * CPUs: a re-placement pins the decision's I/O threads only, never one pinned by hand back
 * (placer_follow_iothreads() left it there). Without such a decision (old NULL: a restart or a restore
 * whose record is not adopted), those the record in live names as the user's (user-iothreads=) whose live
 * pin is not libvirt's default. Returns how many.
 */
unsigned placer_hand_iothreads(Manager *m, virDomainPtr dom, DomainSpec *user, const DomainSpec *live,
                               const Decision *old);
/* placer_hand_emulator(), said at info level when it names one. */
const CpuSet *placer_hand_emulator_said(Manager *m, virDomainPtr dom, DomainSpec *user,
                                        const DomainSpec *live, const CpuSet *own, const CpuSet *recorded,
                                        const char *name);
/*
 * Whether the emulator of dom runs unpinned as its user set it, in the run of old (its decision, adopted
 * or of this daemon, whose plan says user_emulator_floating): libvirt's default pin runs, and neither the
 * definition nor a hand pin onto other CPUs (placer_hand_emulator(), called first) keeps it. It is then
 * the user's, as a pin onto other CPUs is: user keeps it (has_emulatorpin, live) with no CPUs to hold, so
 * a re-placement leaves it floating (placer_note_floating_emulator()).
 */
bool placer_floating_emulator(Manager *m, virDomainPtr dom, DomainSpec *user, const DomainSpec *live,
                              const Decision *old);
/* Whether the emulator of dom runs on libvirt's default pin and user (the definition, or a hand pin made
 * user's) keeps none of its own. */
bool placer_emulator_runs_floating(Manager *m, virDomainPtr dom, const DomainSpec *user,
                                   const DomainSpec *live);
/* Marks plan, made for req, as leaving the emulator floating as its user set it (req keeps an emulator
 * pinned outside placementd whose CPUs are none: placer_floating_emulator()), its reason saying so. */
void placer_note_floating_emulator(Plan *plan, const PlacementRequest *req);
/* Whether the emulator, pinned to recorded by placementd (the record's pin), runs on libvirt's default pin
 * (every host CPU, or every CPU of <vcpu cpuset>) instead: someone set it floating while placementd was
 * down (virsh emulatorpin DOM 0-7 --live), and the definition keeps no <emulatorpin>. Said at info level
 * as the running daemon says it (placer_follow_emulator()). */
bool placer_floating_emulator_said(Manager *m, virDomainPtr dom, const DomainSpec *user,
                                   const DomainSpec *live, const CpuSet *recorded, const char *name);

/* placer.c */
/* Makes plan (taken, may be NULL) d's plan and what the ledger counts for it. */
void placer_commit(Manager *m, Decision *d, Plan *plan);
/* The overcommitted domains are looked at the loop's next turn, once the moves of this pass, reload or
 * reconcile are all made (placer_follow_sharing()). */
void placer_sharing_soon(Manager *m);
/* Takes what the ledger counts for uuid off it (a departure, or a domain about to be placed or counted
 * again); the overcommitted domains that shared its cores are looked at once the loop turns. */
void placer_release(Manager *m, const char *uuid);
/* Stores d (taking it) as its domain's decision, plan (taken, may be NULL) committed to the ledger. */
Decision *placer_record(Manager *m, Decision *d, Plan *plan);
/*
 * The user's own definition, where opt-outs and constraints are read: the persistent (inactive)
 * definition of a persistent domain, the live one of a transient domain, or the definition recorded in
 * it. NULL (said why) when the domain cannot be read.
 */
DomainSpec *placer_user_spec(virDomainPtr dom, const DomainSpec *live);
/* Logs the decision as list and show publish it. */
void placer_log_decision(const Decision *d);
/* The record of d placer_write_metadata() writes, with the user's definition. */
char *placer_format_record(Manager *m, const Decision *d, const DomainSpec *user);
/* Writes d into dom's metadata (the record), with the user's definition; d->unrecorded when that failed. */
void placer_write_metadata(Manager *m, virDomainPtr dom, Decision *d, const DomainSpec *user);
/* Whether dom's job is free for a metadata write; else d stays unrecorded for the next reconcile. */
bool placer_free_to_record(Manager *m, virDomainPtr dom, Decision *d);
/* Writes d into dom's metadata again, unless d is skipped and was never recorded (opted out by its
 * definition from its start: the domain is its user's); false when dom is gone or unreadable. */
bool placer_write_record(Manager *m, virDomainPtr dom, Decision *d);
/*
 * A domain that opted out (why): not placed, but what it runs on counted (pins other than "anywhere",
 * memory its definition binds), and what placementd applied before (old's, or its record's) as its own.
 * The decision, stored.
 */
Decision *placer_skip_opted_out(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                                const DomainSpec *user, const char *why, const Decision *old);
/* The binding a decision placementd no longer places (pinned by hand, opted out) keeps of b, its earlier
 * one's: one libvirt refused binds nothing, and the memory is counted where the pins are now, so it says
 * none rather than a failure on nodes the failure was not of. */
MemoryBinding placer_binding_that_runs(MemoryBinding b);
/*
 * A running domain whose XML placementd cannot read (error says why): not placed, but what libvirt's own
 * calls say it runs on (vCPU pins other than "anywhere", its live memory binding, its memory ceiling) is
 * counted as it runs, as for a domain that opts out, in place of what its decision counted. The skip
 * decision, stored; NULL (said) when libvirt cannot say either.
 */
Decision *placer_count_unreadable(Manager *m, virDomainPtr dom, const char *uuid, const char *error);
