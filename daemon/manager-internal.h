/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The manager's state, shared by manager.c (connection, events, reconcile) and placer*.c (one domain). */

#include "domain-request.h"
#include "domain-xml.h"
#include "load-monitor.h"
#include "manager.h"
#include "virt-conn.h"

/* How long after a change of placementd's metadata the domain's opt-out is read (on_metadata()): the
 * changes of that time are read once. */
#define MANAGER_METADATA_FOLLOW_MSEC 200

typedef enum PlaceOrigin {
        ORIGIN_STARTED,          /* booted, restored, from snapshot, woken up */
        ORIGIN_MIGRATED,         /* arrived by migration: carries the source host's pins */
        ORIGIN_RUNNING_AT_START, /* found running when the daemon started */
        ORIGIN_RECONCILE,        /* found running after a reconnect or by the periodic reconcile */
        ORIGIN_REPLACE,          /* asked to place it again */
        ORIGIN_RESIZED,          /* vCPUs or memory hot-plugged or unplugged while it runs */
        ORIGIN_HEAL,             /* moved by healing onto what freed up */
} PlaceOrigin;

struct Manager {
        struct event_base *base;
        Topology *topology;
        Config *config;
        char *uri_override;
        char *uri_public;              /* manager_uri() without user name or query: what everyone sees */
        VirtConn *conn;                /* NULL while not connected */
        struct Connecting *connecting; /* a connection being opened in a thread, NULL when none */
        /* while reconcile() adopts records: the UUIDs adopted so far in that pass, whose cores a later
         * record's check does not count as taken (placer-adopt.c placed_by_other()) */
        GHashTable *adopting;
        struct event *connect_slow_ev; /* says so when the open takes long */
        /* a reload's new URI (manager_open_next()): being opened in a thread, or opened (next_conn) and
         * waiting for manager_set_config() to take it; next_timeout_ev gives up after next_open_sec s
         * (MANAGER_NEXT_OPEN_SEC; tests shorten it) */
        struct Connecting *next_connecting;
        char *next_uri;
        virConnectPtr next_conn;
        struct event *next_timeout_ev;
        unsigned next_open_sec;
        ManagerNextDone next_done;
        void *next_userdata;
        bool connected, ever_connected;
        /* what a reload changed for the running domains while libvirt was away: done once connected */
        bool reload_apply_pending;
        CpuSet *reload_reserved_pending;
        /* a record was refused for vCPUs on CPUs the configuration keeps from them now (changed while
         * placementd was down): once its domain is placed anew, the others' emulator and I/O threads are
         * chosen again, as after a reload that keeps those CPUs */
        bool adopt_kept_refused;
        /* a domain left since the unplaceable ones were last placed: its cores and memory may hold them
         * now (manager_place_unplaceable()) */
        bool unplaceable_retry;
        /* The host CPUs of the topology no domain can run on now (read at each reconcile): offline, or
         * left out of the guests' cgroup; config->placement points to it. Of them, those offline. And
         * those offline at the first read that the topology does not know (one that comes online is said
         * once: only a restart reads the topology again). */
        CpuSet *unavailable;
        CpuSet *offline;
        CpuSet *absent_offline;
        bool online_read;
        unsigned backoff_sec, reconnects;
        char *connect_error; /* the last failed open's message, until one succeeds */
        struct event *reconnect_ev, *teardown_ev, *reconcile_ev;
        int close_reason; /* the last close callback's reason (atomic: it may come from another thread) */
        Ledger *ledger;
        GHashTable *decisions; /* uuid -> Decision* */
        ManagerCallbacks cb;
        void *userdata;
        ManagerStats stats;
        /* Measured load and healing (load-monitor.h, healer.c). */
        LoadMonitor *load;
        struct event *heal_ev;
        uint64_t heal_due_usec;    /* CLOCK_MONOTONIC usec heal_ev is armed for, while it is pending */
        bool heal_owed;            /* a pass came due while libvirt was away: it runs after the reconnect */
        GHashTable *heal_moved;    /* uuid -> HealCooling* (heal.h, CLOCK_MONOTONIC seconds): its heal
                                    * moves' cool-down, while it runs (placer_forget() drops it) */
        GHashTable *heal_requests; /* uuid -> HealRead*: what heal passes read of a domain (healer.c) */
        uint64_t
            heal_read_max_age_usec; /* a read older than this is read again (HEAL_REQUEST_MAX_AGE_SEC) */
        struct event *held_ev;      /* looks at domains whose job libvirt held again (held.c) */
        struct event *sharing_ev;   /* after a departure or move: overcommitted domains sharing no more */
        /* placementd's metadata changed: the domains (uuid set) whose opt-out is read again when
         * metadata_ev fires, once each however many changes came (MANAGER_METADATA_FOLLOW_MSEC) */
        GHashTable *metadata_changed;
        struct event *metadata_ev;
        uint64_t metadata_follows; /* domains read so, since the start */
        /* uuid -> OwnWrites* (manager.c): placementd's own writes of its element whose metadata-change
         * events, their echoes, have not come yet */
        GHashTable *own_writes;
        /* vCPU pins changed (manager-tunable.c): uuid -> what the events said, judged when pins_ev fires,
         * once each however many came (MANAGER_METADATA_FOLLOW_MSEC) */
        GHashTable *pins_changed;
        struct event *pins_ev;
        uint64_t hand_pin_follows;   /* domains read so, since the start */
        uint64_t emulator_pin_reads; /* where libvirt runs an emulator, asked by placer_hand_emulator() */
        GHashTable *interrupted;     /* uuid -> Plan*: applies the lost connection cut off (interrupted.c) */
        GHashTable *interrupted_runs; /* uuid -> InterruptedRun*: the run an interrupted plan is of */
        int journal_fd;               /* the apply journal's directory (apply-journal.c), or -1 */
        char *journal_dir;
        char *journal_next;   /* manager_set_next_journal(): the next URI's, NULL: none */
        bool journal_failing; /* a write or removal failed and was said; the next write that works ends it */
        GHashTable *thread_masks; /* uuid -> CpuSet*: CPUs its QEMU threads started on (thread-mask.c) */
        GHashTable *job_timeouts; /* uuid -> HeldBackoff*: calls that timed out on a job libvirt does not
                                     report, and when to try again (held.c) */
        bool timed_out_this_turn; /* one did in this turn of the loop: no other call that needs a job */
        struct event *turn_ev;    /* clears it at the loop's next turn */
        char *boot_id;            /* the host's boot (/proc/sys/kernel/random/boot_id), NULL if unread */
};

/* manager.c */
/* Whether the decision d is one to act on (arg: the caller's). */
typedef bool (*DecisionPick)(const Manager *m, const Decision *d, const void *arg);
/* The UUIDs (new strings, in a new array) of the decisions pick takes: acted on after the walk, which a
 * placement would upset. */
GPtrArray *manager_pick(const Manager *m, DecisionPick pick, const void *arg);

/*
 * Places again every domain left unplaceable (nothing pinned), as `placementctl replace` would: a
 * reload or a departure may have made room. why: the log's words for it. With report, adds a line per
 * domain placed now ("NAME: placed, was unplaceable"). Returns how many are no longer unplaceable.
 */
unsigned manager_place_unplaceable(Manager *m, const char *why, GString *report);
/* libvirt's close callback for the connection (opaque: the Manager), from any thread: the reason kept, the
 * loss said and handled on the loop. */
void manager_connection_closed(int reason, void *opaque);

/* manager-cpus.c */
/*
 * Reads which CPUs of the topology the QEMU guests of this host cannot run on now (offline, left out of
 * the guests' cgroup, absent) into m->unavailable, saying what changed; returns those that became so, for
 * the domains placementd put there to be placed again (NULL when none did).
 */
CpuSet *manager_read_unavailable(Manager *m);

/* placer.c */
void placer_place(Manager *m, virDomainPtr dom, PlaceOrigin origin, uint64_t event_usec);
/*
 * After departures and moves (a domain's cores released), and after an overcommitted record is adopted:
 * each overcommitted domain none of whose vCPUs shares a core (a PU under compat) any more is placed as it
 * runs, its reason saying why, its record written again.
 */
void placer_follow_sharing(Manager *m);

/* placementd wrote its element in the metadata of the domain uuid: the metadata-change event libvirt sends
 * for it is its echo, not the owner's word, and costs no read of the domain. */
void manager_own_metadata_written(Manager *m, const char *uuid);

/*
 * After placementd's metadata of dom changed, or its definition was written while it runs (virsh edit): a
 * domain placementd places whose user's definition now opts out (<placementd:domain skip='yes'/> with
 * virsh metadata, live or in its definition; <cputune><vcpupin>, placement='auto' written into its
 * persistent definition) is placed no more (skipped, its pins counted as they run), and one skipped for
 * such an opt-out that no longer has one is placed. True when it did either.
 */
bool placer_follow_opt_out(Manager *m, virDomainPtr dom);
/* Whether a domain found running without a record will be counted as it runs, not placed: it opts out,
 * or someone else pinned its vCPUs. reconcile() takes those first, so no domain placed anew takes their
 * cores. */
bool placer_found_pinned(Manager *m, virDomainPtr dom);
/* Adopts the domain's recorded decision when it checks out, quietly; false leaves it to placer_place. */
bool placer_adopt(Manager *m, virDomainPtr dom);
/* After a pass of placer_adopt() (m->adopting): says, at warning level, of each two records it adopted that
 * claim one core while a core is free (a domain saved or restored while placementd was down comes back
 * with its old record onto a core another took meanwhile), both names, the core and the later one. */
void placer_say_adopted_clashes(Manager *m);
/* What reloads changed for running domains while libvirt was away (Apply= turned on, CPUs newly reserved):
 * done now that it is back. */
void manager_reload_pending(Manager *m);
/* The domain with uuid no longer runs (why, for the log): its decision, its cores and memory in the
 * ledger and its measured load go. */
void placer_forget(Manager *m, const char *uuid, const char *why);
/* Whether a thread pinned to pins may run on every CPU placementd knows, or on every one of allowed
 * (libvirt's default pin for <vcpu cpuset>) when given: nobody pinned it. */
bool placer_runs_anywhere(const Manager *m, const CpuSet *pins, const CpuSet *allowed);
/* Writes d's metadata again after a write that failed (d->unrecorded), e.g. when libvirtd went away. */
void placer_record_again(Manager *m, virDomainPtr dom, Decision *d);
/*
 * The I/O threads as they run now, against d (a placed or overcommitted decision): one added live
 * (virsh iothreadadd, which sends no event) that may run on every CPU is pinned by the decision's rule
 * (its I/O thread pin, else its emulator's), and one that already runs just there is counted with them;
 * one of d's that someone pinned elsewhere is theirs from then on; one removed is dropped. Records d
 * again when it changed, and returns whether it did.
 */
bool placer_follow_iothreads(Manager *m, virDomainPtr dom, Decision *d);
/*
 * The emulator pin as it runs now, against d: one someone else made (virsh emulatorpin --live, or back to
 * every CPU) in place of d's own, or where d made none, is theirs from then on: d's emulator pin is
 * cleared (placementd pins none, and never undoes theirs) and the CPUs it takes apart from the domain's
 * vCPU cores are held for it, as a definition's <emulatorpin> is. Records d again when it changed, and
 * returns whether it did.
 */
bool placer_follow_emulator(Manager *m, virDomainPtr dom, Decision *d);
/* A lifecycle event of dom (libvirt's callback; tests send the ones libvirt's test driver cannot). */
void manager_lifecycle(Manager *m, virDomainPtr dom, int event, int detail);
/* A tunable event of dom: its pins or I/O thread pins changed (libvirt's test driver sends none). */
void manager_tunable(Manager *m, virDomainPtr dom, virTypedParameterPtr params, int nparams);
/* A vCPU pin that is not ours was seen (tunable event or drift): adopt the live pins. */
void placer_adopt_hand_pins(Manager *m, virDomainPtr dom, const char *what);
/* True when the online vCPUs or the memory (<memory>) differ from what the decision counts; says so once. */
bool placer_resized(Manager *m, virDomainPtr dom, const Decision *d);
/* Whether a domain pinned by hand runs with other vCPUs or memory than its decision counts: it is
 * adopted again as it runs (placer_adopt_hand_pins()), never re-placed. */
bool placer_hand_pinned_resized(Manager *m, virDomainPtr dom, const Decision *d);
/* Whether placementd pinned nothing of d's domain: skipped (not by hand), only advised under Apply=no,
 * or left floating as unplaceable. An advice or an unplaceable plan counted on the pins that run from an
 * earlier decision is not: those pins are followed as placementd's. */
bool placer_pinned_nothing(const Decision *d);
/* True when someone bound the domain's memory live (strict or interleave) away from where the decision
 * counts it: it is then counted as it runs (placer_adopt_hand_pins()). */
bool placer_binding_moved(Manager *m, virDomainPtr dom, const Decision *d);
/* The same for an advice under Apply=no (which placer_binding_moved() leaves out: placementd pinned
 * nothing): true when it is to be advised again from the binding that runs, its memory counted there;
 * taking it as pinned by hand would leave it alone once Apply=yes. */
bool placer_advice_binding_moved(Manager *m, virDomainPtr dom, const Decision *d);
/* True when the live pins differ from what the decision says. */
bool placer_pins_drifted(Manager *m, virDomainPtr dom, const Decision *d);
/* Whether d left a domain's vCPUs floating (skipped, unplaceable, or advised under Apply=no) and someone
 * has pinned them since: they are counted as they run from then on (placer_adopt_hand_pins()). */
bool placer_skipped_now_pinned(Manager *m, virDomainPtr dom, const Decision *d);
/* 1 when every vCPU p pins runs on its pin (live, read now), 0 when one does not, -1 when libvirt cannot
 * say. A vCPU p leaves unpinned runs as planned anywhere; by_hand (p counts pins someone else made), only
 * while it floats over the whole host. */
int placer_live_pins_planned(Manager *m, virDomainPtr dom, const Plan *p, bool by_hand);
void placer_notify(Manager *m, const Decision *d, const char *uuid, const char *name);

/* What a re-placement of a domain would ask now: its request (constraints and load) and params. */
typedef struct PlacerRequest {
        PlacementRequest req;
        PlacementParams params;
        DomainSpec *live, *user; /* what req points into */
        RequestShape shape;      /* what req's guest cells and device localities point into */
} PlacerRequest;
void placer_request_free(PlacerRequest *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlacerRequest, placer_request_free)
/* NULL when the domain is gone, unreadable or opted out (not placementd's to move). */
PlacerRequest *placer_request(Manager *m, virDomainPtr dom);
/* Applies plan (taken), made for r, as dom's new decision; note leads its reason. */
void placer_apply_plan(Manager *m, virDomainPtr dom, const PlacerRequest *r, Plan *plan, const char *note);

/* Moves the emulator and I/O threads of dom, placed by placementd, to where EmulatorPin= puts them beside
 * its vCPUs on the host as it is now (policy_rehouse()), when that is elsewhere: a domain placed again
 * before others it shared CPUs with leaves them where those others ran no more. why ends the log line and
 * the note that leads the reason ("once ..."). True when it moved them. */
bool placer_rehouse(Manager *m, virDomainPtr dom, const char *why);

/* PlacementRequest.host_unmeasured for a domain whose measured load is l (NULL: none): load is measured
 * on this host (LoadInterval= not 0) and the domain's is not known yet. */
bool manager_host_unmeasured(const Manager *m, const DomainLoad *l);

/* manager-tunable.c: follows vCPU pins someone else made, once for a burst of tunable events. */
void tunable_init(Manager *m);
void tunable_done(Manager *m);

/* held.c: a domain whose plan waits for libvirt to release its job (Decision.job_held) is placed again once
 * it does; held_retry_soon() arms the look (a few seconds on) unless it is armed. */
void held_init(Manager *m);
void held_done(Manager *m);
void held_retry_soon(Manager *m);
/* The look itself: each such domain whose job is free now is placed again. */
void held_retry_now(Manager *m);
/* A domain calls timed out on while libvirt reported no job: how many times, and when it is tried again
 * (CLOCK_MONOTONIC usec). */
typedef struct HeldBackoff {
        unsigned timeouts;
        int64_t next_usec;
} HeldBackoff;
/* 0 when calls that need dom's job may go ahead; -EBUSY, with a message, when libvirt reports a job held
 * on it (virt_domain_job_held()), a call timed out on dom and its next try is not due, or a call on any
 * domain timed out in this turn of the loop. */
int held_job_busy(Manager *m, virDomainPtr dom, char **ret_error);
/* A call on the domain uuid (name) timed out waiting for its job: its next try waits, longer each time. */
void held_note_timeout(Manager *m, const char *uuid, const char *name);
/* The domain uuid's timeouts are forgotten (it stopped, or a call went through). */
void held_forget_timeouts(Manager *m, const char *uuid);

/* interrupted.c: the plan of an apply the lost connection to libvirtd cut off is kept (a copy) until the
 * reconcile after the reconnect reads the domain. interrupted_claim() takes it out: when the domain
 * records no decision and its live vCPU pins are the plan's (or none), the pins, emulator pin, memory
 * binding and I/O thread pins the plan would have made are dropped from user (they are placementd's, not
 * the user's) and it returns true: the domain is placed anew. interrupted_clear() drops what is left
 * (domains gone meanwhile). */
void interrupted_note(Manager *m, const char *uuid, const Plan *plan);
bool interrupted_claim(Manager *m, virDomainPtr dom, const char *uuid, const DomainSpec *live,
                       DomainSpec *user);
void interrupted_clear(Manager *m, GHashTable *keep); /* keep: a uuid set left in it, or NULL */
/* The run of an interrupted plan that outlives the reconcile that notes it (m->interrupted_runs): one an
 * apply journal entry names, or a start libvirt had not ended. Only a domain of that run (its libvirt ID;
 * 0: any) is claimed. */
typedef struct InterruptedRun {
        unsigned domain_id;
        bool from_journal; /* else a start libvirt had not ended */
} InterruptedRun;
void interrupted_note_run(Manager *m, const char *uuid, unsigned domain_id, bool from_journal);
/* The plan of d, whose pins placementd made, kept as an interrupted apply's for the same run (d's ID):
 * libvirt says the domain's start has not ended (libvirtd restarted during it) and its start event is to
 * come. False when d pinned nothing of placementd's. */
bool interrupted_set_aside(Manager *m, const Decision *d);
/* apply-journal.c: before the first pin of an apply, its plan is written to the journal (when one is open),
 * and removed once the domain's record is written or its run is forgotten; apply_journal_open() reads what
 * a placementd before this one left into m->interrupted (with the run's ID in m->interrupted_runs), for
 * the first reconcile to check. */
void apply_journal_open(Manager *m, const char *dir);
void apply_journal_close(Manager *m);
void apply_journal_note(Manager *m, const char *uuid, unsigned domain_id, const Plan *plan);
void apply_journal_drop(Manager *m, const char *uuid);

/* The same for the pins placementd made on a domain whose record of them was not written: an apply a job
 * libvirt held cut off (the write needs the job too), or a write that failed (d->unrecorded, written again
 * by the next reconcile). d: the domain's decision, its plan the pins that run. A domain placed for the
 * first time then shows only the live pins placementd made: when they are still what runs, user is rid of
 * them as above, and it returns true: the domain is placed anew. */
bool interrupted_claim_unrecorded(Manager *m, virDomainPtr dom, const Decision *d, const DomainSpec *live,
                                  DomainSpec *user);

/* thread-mask.c: the emulator pin a domain's definition carried when it started (a save image's, or a
 * migrated domain's: placementd's pin of before), within which the kernel keeps QEMU's threads.
 * thread_mask_note() takes it from the live definition read at its start event, and
 * thread_mask_forget() drops it. thread_mask_fit() keeps plan's emulator pin within those CPUs when it
 * takes in some of them and others: returns what it did, to be said in the plan's reason, or NULL when
 * the pin stands as planned. */
void thread_mask_note(Manager *m, const char *uuid, const DomainSpec *live);
/* At the first sight of a running domain (not a start event): noted when its record was written in
 * another run of it (restored or migrated in meanwhile), or taken from its record's threads= when it is
 * this run's. */
void thread_mask_first_sight(Manager *m, const char *uuid, const DomainSpec *live);
/* The host's boot id, NULL when it cannot be read. */
char *thread_mask_boot_id(void);
void thread_mask_forget(Manager *m, const char *uuid);
char *thread_mask_fit(const Manager *m, const char *uuid, Plan *plan);
/* reason without what thread_mask_fit() said in it (a new string): for a plan whose emulator pin is
 * chosen again. */
char *thread_mask_unsay(const char *reason);
/* The part of set within the CPUs uuid's QEMU threads started on, when set takes in some of them and
 * others (a new set, else NULL); those CPUs themselves (NULL when not known). */
CpuSet *thread_mask_cut(const Manager *m, const char *uuid, const CpuSet *set);
const CpuSet *thread_mask_get(const Manager *m, const char *uuid);

/* healer.c */
void healer_init(Manager *m);
void healer_done(Manager *m);
/* Drops what heal passes read of the domain with uuid (NULL: of every domain): its decision, its
 * definition or the configuration changed, so the next pass that may move it reads it again. */
void healer_forget_request(Manager *m, const char *uuid);
/* Whether the configuration lets heal passes run (libvirt connected or not). */
bool healer_configured(const Manager *m);
/* After a reconnect's reconcile: a pass that came due while libvirt was away runs a HealInterval later. */
void healer_connected(Manager *m);
/* After a reload: a pass a HealInterval later (after the reconnect when libvirt is away) when the
 * configuration turned healing on (was_configured false), since departures while it was off armed none,
 * or when it gave CPUs or memory back (gave_back: ReservedCPUs=, CoreKinds=, MemoryReserve= keep less), as
 * a departure does. */
void healer_reloaded(Manager *m, bool was_configured, bool gave_back);
