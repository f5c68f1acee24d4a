/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "trace.h"
#include "domain-request.h"
#include "domain-xml.h"
#include "file-read.h"
#include "size.h"

#include <errno.h>
#include <string.h>

/* The domain of 'domain FILE.xml' starts: one per file of a trace, shared by every start of that file. */
struct TraceDomain {
        gatomicrefcount refs;
        DomainSpec *spec;
};

static TraceDomain *trace_domain_new(DomainSpec *spec)
{
        TraceDomain *d = g_new0(TraceDomain, 1);

        g_atomic_ref_count_init(&d->refs);
        d->spec = spec;
        return d;
}

static TraceDomain *trace_domain_ref(TraceDomain *d)
{
        g_atomic_ref_count_inc(&d->refs);
        return d;
}

static void trace_domain_unref(TraceDomain *d)
{
        if (d && g_atomic_ref_count_dec(&d->refs)) {
                domain_spec_free(d->spec);
                g_free(d);
        }
}

void trace_event_free(TraceEvent *e)
{
        if (!e)
                return;
        g_free(e->name);
        trace_domain_unref(e->shared);
        g_free(e);
}

static const char *check_name(const char *name)
{
        if (!*name)
                return "empty domain name";
        if (strlen(name) > TRACE_NAME_MAX)
                return "domain name longer than 256 characters";
        for (const char *p = name; *p; p++)
                if (g_ascii_isspace(*p) || g_ascii_iscntrl(*p) || *p == ':')
                        return "domain name with a blank, control character or ':'";
        if (!g_utf8_validate(name, -1, NULL))
                return "domain name is not valid UTF-8";
        return NULL;
}

/* A trace takes what a domain definition can hold (libvirt's own limit), spelled out in the message below;
 * the engine answers a start above PLAN_MAX_VCPUS with an unplaceable plan, as the daemon does. */
G_STATIC_ASSERT(DOMAIN_XML_MAX_VCPUS == 16384);

static const char *parse_start(const char *name, const char *vcpus, const char *memory, TraceEvent **ret)
{
        guint64 n;
        uint64_t bytes;
        const char *bad = check_name(name);

        if (bad)
                return bad;
        if (!g_ascii_string_to_unsigned(vcpus, 10, 1, DOMAIN_XML_MAX_VCPUS, &n, NULL))
                return "vCPU count must be a whole number from 1 to 16384";
        if (size_parse(memory, &bytes) < 0 || bytes == 0)
                return "memory must be a size such as 4096M or 4G";
        *ret = g_new0(TraceEvent, 1);
        **ret = (TraceEvent){
            .op = TRACE_START, .name = g_strdup(name), .vcpus = (unsigned)n, .memory = bytes, .busy = 1};
        return NULL;
}

int trace_parse_spec(const char *spec, TraceEvent **ret, char **ret_error)
{
        g_auto(GStrv) parts = g_strsplit(spec, ":", -1);
        const char *bad;

        if (g_strv_length(parts) != 3) {
                bad = "expected NAME:VCPUS:MEMORY";
        } else {
                bad = parse_start(parts[0], parts[1], parts[2], ret);
        }
        if (bad) {
                if (ret_error)
                        *ret_error = g_strdup_printf("'%s': %s", spec, bad);
                return -EINVAL;
        }
        return 0;
}

/* What libvirt refuses to define is refused here too, not planned as something else. */
static const char *check_domain(const DomainSpec *spec)
{
        const char *bad = check_name(spec->name);

        if (bad)
                return bad;
        if (spec->vcpus == 0)
                return "no vCPUs: <vcpu> must be at least 1";
        if (spec->vcpus_over_max)
                return "<vcpu current=...> is above the maximum vCPU count";
        if (spec->memory == 0)
                return "no memory: <memory> (or the guest cells' memory) must be more than 0";
        return NULL;
}

/* A start of the domain d holds (a reference is taken). */
static TraceEvent *domain_start(TraceDomain *d)
{
        TraceEvent *e = g_new0(TraceEvent, 1);

        *e = (TraceEvent){.op = TRACE_START,
                          .name = g_strdup(d->spec->name),
                          .vcpus = d->spec->vcpus,
                          .memory = d->spec->memory,
                          .busy = 1,
                          .domain = d->spec,
                          .shared = trace_domain_ref(d)};
        return e;
}

/* Reads and checks the domain file path, *budget bytes at most (less what it held, on success). */
static int domain_file_read(const char *path, size_t *budget, TraceDomain **ret, char **ret_error)
{
        g_autoptr(DomainSpec) spec = NULL;
        g_autofree char *text = NULL, *why = NULL;
        const char *bad;
        size_t len = 0;
        int r = file_read_bounded(path, DOMAIN_FILE_MAX, &text, &len, &why);

        if (r < 0) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: %s", path, why);
                return r;
        }
        if (len > *budget) {
                if (ret_error) {
                        g_autofree char *limit = file_limit_format(TRACE_DOMAIN_FILES_MAX);
                        *ret_error = g_strdup_printf(
                            "%s: the domain files of a trace hold more than %s in all", path, limit);
                }
                return -EFBIG;
        }
        if ((r = domain_xml_parse(text, &spec, &why)) < 0) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: %s", path, why);
                return r;
        }
        if ((bad = check_domain(spec))) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: %s", path, bad);
                return -EINVAL;
        }
        *budget -= len;
        *ret = trace_domain_new(g_steal_pointer(&spec));
        return 0;
}

int trace_domain_event(const char *path, TraceEvent **ret, char **ret_error)
{
        size_t budget = TRACE_DOMAIN_FILES_MAX;
        TraceDomain *d = NULL;
        int r = domain_file_read(path, &budget, &d, ret_error);

        if (r < 0)
                return r;
        *ret = domain_start(d);
        trace_domain_unref(d);
        return 0;
}

/* The domain files one trace has read: each file is read and parsed once, whatever number of lines name
 * it, and all of them together hold at most TRACE_DOMAIN_FILES_MAX bytes, so a short trace cannot make
 * the memory spent grow without bound. */
typedef struct DomainFiles {
        GHashTable *by_path; /* canonical path -> TraceDomain* */
        size_t budget;
} DomainFiles;

/* 'domain FILE.xml' of the trace source: a relative path is taken from the trace's directory. */
static char *parse_domain_line(DomainFiles *files, const char *path, const char *source, TraceEvent **ret)
{
        g_autofree char *dir = g_path_get_dirname(source);
        g_autofree char *full =
            g_path_is_absolute(path) ? g_strdup(path) : g_build_filename(dir, path, NULL);
        g_autofree char *key = g_canonicalize_filename(full, NULL); /* a.xml is ./a.xml */
        TraceDomain *d = g_hash_table_lookup(files->by_path, key);
        char *error = NULL;

        if (!d) {
                if (domain_file_read(full, &files->budget, &d, &error) < 0)
                        return error;
                g_hash_table_insert(files->by_path, g_steal_pointer(&key), d);
        }
        *ret = domain_start(d);
        return NULL;
}

/* The words of a line separated by blanks and tabs (no empty words). */
static char **split_words(const char *line)
{
        g_auto(GStrv) parts = g_strsplit_set(line, " \t", -1);
        GPtrArray *words = g_ptr_array_new();

        for (char **p = parts; *p; p++)
                if (**p)
                        g_ptr_array_add(words, g_strdup(*p));
        g_ptr_array_add(words, NULL);
        return (char **)g_ptr_array_free(words, FALSE);
}

/* A fraction or a count of cores: a plain decimal number from 0 to max (no sign, exponent, inf or nan). */
static bool parse_fraction(const char *text, double max, double *ret)
{
        char *end = NULL;
        double d;

        if (!*text || strspn(text, "0123456789.") != strlen(text))
                return false;
        d = g_ascii_strtod(text, &end);
        if (*end || !(d >= 0 && d <= max))
                return false;
        *ret = d;
        return true;
}

/* host='s limit as its message spells it out */
G_STATIC_ASSERT((int)TRACE_HOST_MAX == 1024);

/* The busy= and host= words after a start's or a load's fixed words, each at most once. */
static const char *parse_load_options(char **words, TraceEvent *e)
{
        bool seen_busy = false;

        for (char **w = words; *w; w++) {
                if (g_str_has_prefix(*w, "busy=") && !seen_busy) {
                        if (!parse_fraction(*w + 5, 1.0, &e->busy))
                                return "busy= must be a fraction from 0 to 1 such as 0.25";
                        seen_busy = true;
                } else if (g_str_has_prefix(*w, "host=") && !e->has_host) {
                        if (!parse_fraction(*w + 5, TRACE_HOST_MAX, &e->host))
                                return "host= must be a number of cores from 0 to 1024 such as 0.5";
                        e->has_host = true;
                } else if (g_str_has_prefix(*w, "busy=") || g_str_has_prefix(*w, "host=")) {
                        return "busy= or host= given twice";
                } else {
                        return "expected busy=F or host=F after the domain";
                }
        }
        if (e->op == TRACE_LOAD && !seen_busy)
                return "expected 'load NAME busy=F [host=F]'";
        return NULL;
}

/* start NAME VCPUS MEMORY [busy=F] [host=F] */
static const char *parse_start_line(char **words, unsigned nwords, TraceEvent **ret)
{
        const char *bad;

        if (nwords < 4 || nwords > 6)
                return "expected 'start NAME VCPUS MEMORY [busy=F] [host=F]'";
        bad = parse_start(words[1], words[2], words[3], ret);
        if (!bad)
                bad = parse_load_options(words + 4, *ret);
        if (bad)
                g_clear_pointer(ret, trace_event_free);
        return bad;
}

/* load NAME busy=F [host=F] */
static const char *parse_load_line(char **words, unsigned nwords, TraceEvent **ret)
{
        g_autoptr(TraceEvent) e = NULL;
        const char *bad;

        if (nwords < 3 || nwords > 4)
                return "expected 'load NAME busy=F [host=F]'";
        bad = check_name(words[1]);
        if (bad)
                return bad;
        e = g_new0(TraceEvent, 1);
        *e = (TraceEvent){.op = TRACE_LOAD, .name = g_strdup(words[1])};
        bad = parse_load_options(words + 2, e);
        if (!bad)
                *ret = g_steal_pointer(&e);
        return bad;
}

/* tick SECONDS */
static const char *parse_tick_line(char **words, unsigned nwords, TraceEvent **ret)
{
        double seconds;

        if (nwords != 2)
                return "expected 'tick SECONDS'";
        if (!parse_fraction(words[1], TRACE_TICK_MAX, &seconds) || seconds <= 0)
                return "tick takes seconds, more than 0 and at most a year, such as 5 or 0.5";
        *ret = g_new0(TraceEvent, 1);
        **ret = (TraceEvent){.op = TRACE_TICK, .seconds = seconds};
        return NULL;
}

/* trace_parse(); with sizes_only, a domain line is refused before its file is read. */
static int parse_trace(const char *text, const char *source, bool sizes_only, GPtrArray **ret,
                       char **ret_error)
{
        g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func((GDestroyNotify)trace_event_free);
        g_autoptr(GHashTable) by_path =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)trace_domain_unref);
        DomainFiles files = {.by_path = by_path, .budget = TRACE_DOMAIN_FILES_MAX};
        unsigned lineno = 0;

        if (!g_utf8_validate(text, -1, NULL)) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: not valid UTF-8 text", source);
                return -EINVAL;
        }

        for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                const char *end = strchrnul(p, '\n');
                g_auto(GStrv) words = NULL;
                g_autofree char *line = NULL;
                g_autofree char *domain_error = NULL;
                const char *bad = NULL;
                TraceEvent *e = NULL;
                unsigned nwords;

                lineno++;
                /* refused before it is copied or split: one giant line cost ~18 times its size */
                if (end - p > TRACE_LINE_MAX) {
                        if (ret_error)
                                *ret_error = g_strdup_printf("%s:%u: line longer than %u bytes", source,
                                                             lineno, TRACE_LINE_MAX);
                        return -EINVAL;
                }
                line = g_strstrip(g_strndup(p, (gsize)(end - p)));
                if (!*line || line[0] == '#')
                        continue;
                words = split_words(line);
                nwords = g_strv_length(words);
                if (events->len >= TRACE_EVENTS_MAX)
                        bad = "too many events (limit 1000000)";
                else if (strcmp(words[0], "start") == 0)
                        bad = parse_start_line(words, nwords, &e);
                else if (strcmp(words[0], "stop") == 0 && nwords == 2) {
                        bad = check_name(words[1]);
                        if (!bad) {
                                e = g_new0(TraceEvent, 1);
                                *e = (TraceEvent){.op = TRACE_STOP, .name = g_strdup(words[1])};
                        }
                } else if (strcmp(words[0], "stop") == 0)
                        bad = "expected 'stop NAME'";
                else if (strcmp(words[0], "load") == 0)
                        bad = parse_load_line(words, nwords, &e);
                else if (strcmp(words[0], "tick") == 0)
                        bad = parse_tick_line(words, nwords, &e);
                else if (strcmp(words[0], "domain") == 0 && sizes_only)
                        bad = "'domain FILE.xml' lines are for plan and explain; the simulator replays "
                              "'start NAME VCPUS MEMORY' lines only";
                else if (strcmp(words[0], "domain") == 0 && nwords == 2)
                        bad = domain_error = parse_domain_line(&files, words[1], source, &e);
                else if (strcmp(words[0], "domain") == 0)
                        bad = "expected 'domain FILE.xml'";
                else
                        bad = "unknown event (expected start, domain, stop, load or tick)";
                if (bad) {
                        if (ret_error)
                                *ret_error = g_strdup_printf("%s:%u: %s", source, lineno, bad);
                        return -EINVAL;
                }
                e->line = lineno;
                g_ptr_array_add(events, e);
        }
        *ret = g_steal_pointer(&events);
        return 0;
}

int trace_parse(const char *text, const char *source, GPtrArray **ret, char **ret_error)
{
        return parse_trace(text, source, false, ret, ret_error);
}

static int load_trace(const char *path, bool sizes_only, GPtrArray **ret, char **ret_error)
{
        g_autofree char *text = NULL, *why = NULL;
        int r = file_read_bounded(path, TRACE_FILE_MAX, &text, NULL, &why);

        if (r < 0) {
                if (ret_error)
                        *ret_error = g_strdup_printf("%s: %s", path, why);
                return r;
        }
        return parse_trace(text, path, sizes_only, ret, ret_error);
}

int trace_load_file(const char *path, GPtrArray **ret, char **ret_error)
{
        return load_trace(path, false, ret, ret_error);
}

int trace_load_file_sizes(const char *path, GPtrArray **ret, char **ret_error)
{
        return load_trace(path, true, ret, ret_error);
}
