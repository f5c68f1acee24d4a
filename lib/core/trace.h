/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Workload traces for the offline planner and the simulator: one event per line,
 *     start NAME VCPUS MEMORY      (MEMORY with an optional K/M/G/T suffix, binary)
 *     stop NAME
 * with blank lines and '#' comments ignored. The command line form NAME:VCPUS:MEMORY is a start.
 */

#include <glib.h>
#include <stdint.h>

#define TRACE_NAME_MAX   256u
#define TRACE_EVENTS_MAX 1000000u
/* A trace file: room for the most events at about 64 bytes a line. */
#define TRACE_FILE_MAX (64u << 20)

typedef enum TraceOp {
        TRACE_START,
        TRACE_STOP,
} TraceOp;

typedef struct TraceEvent {
        TraceOp op;
        char *name;
        unsigned vcpus;
        uint64_t memory;
        unsigned line; /* 1-based; 0 for command line specs */
} TraceEvent;

void trace_event_free(TraceEvent *e);

/* Parses a whole trace into events (a GPtrArray of TraceEvent* that frees them). Returns 0 or -EINVAL
 * with *ret_error naming the source, the line and the problem. */
int trace_parse(const char *text, const char *source, GPtrArray **ret, char **ret_error);

/* Reads and parses a trace file: a regular file of at most TRACE_FILE_MAX bytes without NUL bytes
 * (file-read.h). Returns 0 or a negative errno with *ret_error naming the file and the problem. */
int trace_load_file(const char *path, GPtrArray **ret, char **ret_error);

/* Parses NAME:VCPUS:MEMORY. Returns 0 or -EINVAL with *ret_error set. */
int trace_parse_spec(const char *spec, TraceEvent **ret, char **ret_error);
