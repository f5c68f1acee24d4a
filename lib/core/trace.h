/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Workload traces for the offline planner and the simulator: one event per line,
 *     start NAME VCPUS MEMORY [busy=F] [host=F]   (MEMORY with an optional K/M/G/T suffix, binary)
 *     domain FILE.xml              (a start of the domain a libvirt domain XML file defines)
 *     load NAME busy=F [host=F]
 *     stop NAME
 *     tick SECONDS
 * with blank lines and comment lines (# first) ignored. The command line form NAME:VCPUS:MEMORY is a start.
 * busy= is the fraction of each vCPU's time spent running (0 to 1; a start without it is busy=1), host=
 * the host-side threads' (emulator, I/O threads, vhost) busy time in cores (0 to TRACE_HOST_MAX; 0 when
 * not given). A load line changes a running domain's load from then on; tick lets SECONDS pass (more
 * than 0, at most TRACE_TICK_MAX). Only the simulator reads loads and ticks; the planner ignores them.
 * A relative FILE.xml is taken from the directory of the trace (the source given to trace_parse()); the
 * file is read as domain_file_load() reads it (domain-request.h), once per trace however many lines name
 * it, and the domain files of a trace hold at most TRACE_DOMAIN_FILES_MAX bytes in all.
 */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "domain-xml.h"
#include "load.h"

#define TRACE_NAME_MAX 256u
/* A line, blanks and comment included: a start line is short (a name of TRACE_NAME_MAX and a few
 * numbers); a longer one is refused before it is split into words. */
#define TRACE_LINE_MAX   4096u
#define TRACE_EVENTS_MAX 1000000u
/* The domain files one trace names ('domain FILE.xml'), in all: each file is read once however many lines
 * name it. */
#define TRACE_DOMAIN_FILES_MAX (16u << 20)
/* A trace file: room for the most events at about 64 bytes a line. */
#define TRACE_FILE_MAX (64u << 20)
/* The most host-side cores a domain's load line may claim: what the daemon counts a domain with at most
 * (LOAD_HOST_BUSY_MAX), so that the simulator scores the load the trace says, never less (a larger one
 * ran below its own bound); and the longest tick (a year). */
#define TRACE_HOST_MAX LOAD_HOST_BUSY_MAX
#define TRACE_TICK_MAX (365.0 * 86400.0)

typedef enum TraceOp {
        TRACE_START,
        TRACE_STOP,
        TRACE_LOAD, /* a running domain's load changes */
        TRACE_TICK, /* time passes */
} TraceOp;

typedef struct TraceDomain TraceDomain;

typedef struct TraceEvent {
        TraceOp op;
        char *name;
        unsigned vcpus;
        uint64_t memory;
        unsigned line; /* 1-based; 0 for command line specs */
        /* load (start and load lines) and time (tick lines) */
        double busy;    /* fraction of each vCPU busy, 0..1; 1 when a start does not say */
        double host;    /* host-side threads' busy cores; 0 when not given */
        bool has_host;  /* host= was given (a load line without it keeps the domain's host load) */
        double seconds; /* tick */
        /* added: the domain of a 'domain FILE.xml' start (its name, vCPUs and memory are above), or NULL;
         * read-only: the starts of one file in a trace share it */
        DomainSpec *domain;
        TraceDomain *shared; /* what keeps domain alive */
} TraceEvent;

void trace_event_free(TraceEvent *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceEvent, trace_event_free)

/* Parses a whole trace into events (a GPtrArray of TraceEvent* that frees them). Returns 0 or -EINVAL
 * with *ret_error naming the source, the line and the problem. */
int trace_parse(const char *text, const char *source, GPtrArray **ret, char **ret_error);

/* Reads and parses a trace file: a regular file of at most TRACE_FILE_MAX bytes without NUL bytes
 * (file-read.h). Returns 0 or a negative errno with *ret_error naming the file and the problem. */
int trace_load_file(const char *path, GPtrArray **ret, char **ret_error);
/* trace_load_file() for a reader of sizes and load only (the simulator): a 'domain FILE.xml' line is
 * refused as such (FILE:LINE: 'domain FILE.xml' lines are for plan and explain; ...), its file not read. */
int trace_load_file_sizes(const char *path, GPtrArray **ret, char **ret_error);

/* Parses NAME:VCPUS:MEMORY. Returns 0 or -EINVAL with *ret_error set. */
int trace_parse_spec(const char *spec, TraceEvent **ret, char **ret_error);

/* A start of the domain the libvirt domain XML file path defines (read with domain_file_load()). Returns
 * 0 or a negative errno with *ret_error naming the file and the problem. */
int trace_domain_event(const char *path, TraceEvent **ret, char **ret_error);
