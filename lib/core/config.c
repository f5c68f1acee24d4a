/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"
#include "config-lines.h"
#include "file-read.h"
#include "load.h"
#include "size.h"
#include "text-safe.h"
#include "uri-public.h"
#include "topology.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

typedef int (*ConfigParser)(const char *value, Config *c, size_t offset, const char **allowed);

typedef enum ConfigKeyFlags {
        CONFIG_KEY_RESTART = 1 << 0, /* a reload cannot apply it: only a restart does */
        CONFIG_KEY_SECRET = 1 << 1,  /* its value is never shown in an error (value_error()) */
} ConfigKeyFlags;

typedef struct ConfigKey {
        const char *section;
        const char *key;
        ConfigParser parse;
        size_t offset;
        const char *allowed; /* shown in errors */
        unsigned flags;      /* ConfigKeyFlags */
} ConfigKey;

#define FIELD(type, c, offset) ((type *)(void *)((char *)(c) + (offset)))

/* A refused value, as errors are built, sits between these two bytes, which no shown value holds
 * (text_safe() escapes control characters): unmark() keeps it for the errors the caller reads, or drops
 * it for the ones everyone reads (config_load_or_defaults_public()). */
#define VALUE_OPEN  "\x1e"
#define VALUE_CLOSE "\x1f"

/* marked without the marks: with the values between them (keep), or without. */
static char *unmark(const char *marked, bool keep)
{
        GString *s = g_string_new(NULL);
        bool in_value = false;

        for (const char *p = marked; *p; p++) {
                if (*p == VALUE_OPEN[0] || *p == VALUE_CLOSE[0]) {
                        in_value = *p == VALUE_OPEN[0];
                        continue;
                }
                if (keep || !in_value)
                        g_string_append_c(s, *p);
        }
        return g_string_free(s, FALSE);
}

/* At most this many bytes of a refused value are shown, then "...". */
#define CONFIG_VALUE_SHOWN_MAX 64

/* A value (or a word of one) as an error shows it: escaped and cut (text_safe_cut()). */
static char *value_shown(const char *value)
{
        return text_safe_cut(value, CONFIG_VALUE_SHOWN_MAX);
}

static int parse_bool(const char *v, Config *c, size_t offset, const char **allowed)
{
        static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false", "off",
                                                                                    "0"};
        (void)allowed;
        for (unsigned i = 0; i < 4; i++) {
                if (g_ascii_strcasecmp(v, yes[i]) == 0) {
                        *FIELD(bool, c, offset) = true;
                        return 0;
                }
                if (g_ascii_strcasecmp(v, no[i]) == 0) {
                        *FIELD(bool, c, offset) = false;
                        return 0;
                }
        }
        return -EINVAL;
}

static int parse_enum(int r, Config *c, size_t offset)
{
        if (r < 0)
                return r;
        *FIELD(int, c, offset) = r;
        return 0;
}

static int parse_policy(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_enum(policy_kind_from_string(v), c, offset);
}

static int parse_vcpu_pin(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_enum(vcpu_pin_mode_from_string(v), c, offset);
}

static int parse_emulator_pin(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_enum(emulator_pin_mode_from_string(v), c, offset);
}

static int parse_fit(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_enum(fit_mode_from_string(v), c, offset);
}

static int parse_core_kinds(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_enum(core_kinds_mode_from_string(v), c, offset);
}

/* A list of memory kinds (commas or spaces between them); "dram" is always a first tier, "gpu" never is. */
static int parse_memory_tiers(const char *v, Config *c, size_t offset, const char **allowed)
{
        g_auto(GStrv) words = g_strsplit_set(v, ", ", -1);
        unsigned mask = 0;

        for (char **w = words; *w; w++) {
                int k;

                if (!**w)
                        continue;
                k = node_kind_from_string(*w);
                if (k == NODE_KIND_GPU) {
                        *allowed = g_strdup("GPU memory is never given to guests");
                        return -EINVAL;
                }
                if (k < 0) {
                        g_autofree char *word = value_shown(*w);
                        *allowed = g_strdup_printf(
                            "a word that is no memory kind" VALUE_OPEN " (%s)" VALUE_CLOSE, word);
                        return -EINVAL;
                }
                if (k != NODE_KIND_DRAM)
                        mask |= 1u << k;
        }
        *FIELD(unsigned, c, offset) = mask;
        return 0;
}

char *config_format_memory_tiers(unsigned mask)
{
        GString *s = g_string_new(NULL);

        for (int k = NODE_KIND_DRAM + 1; k < _NODE_KIND_MAX; k++)
                if (mask & (1u << k))
                        g_string_append_printf(s, "%s%s", s->len ? "," : "", node_kind_to_string(k));
        return g_string_free(s, FALSE);
}

static const char *const bus_names[_BUS_MAX] = {
    [BUS_SYSTEM] = "system", [BUS_SESSION] = "session", [BUS_NONE] = "none"};

const char *bus_kind_to_string(BusKind b)
{
        return b < _BUS_MAX ? bus_names[b] : NULL;
}

static int parse_bus(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        for (int i = 0; i < _BUS_MAX; i++)
                if (strcmp(v, bus_names[i]) == 0)
                        return parse_enum(i, c, offset);
        return -EINVAL;
}

/* A CPU list; a blank value is the empty set (none), but one written that names no CPU (^0, 0,^0) is
 * refused, as a domain's <vcpu cpuset> is: whoever wrote ^0 meant "all but 0", not "none". */
static int parse_cpuset(const char *v, Config *c, size_t offset, const char **allowed)
{
        CpuSet *s = NULL;
        int r = cpuset_parse(v, &s, NULL); /* its message quotes the value: errors do not */

        if (r < 0) {
                *allowed = r == -E2BIG    ? g_strdup_printf("longer than %u characters", CPUSET_MAX_TEXT)
                           : r == -ERANGE ? g_strdup_printf("a CPU number above %u", CPUSET_MAX)
                                          : g_strdup("not a CPU list");
                return r;
        }
        if (*v && cpuset_is_empty(s)) {
                cpuset_free(s);
                *allowed = g_strdup("the list is empty");
                return -EINVAL;
        }
        cpuset_free(*FIELD(CpuSet *, c, offset));
        *FIELD(CpuSet *, c, offset) = s;
        return 0;
}

static int parse_size(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return size_parse(v, FIELD(uint64_t, c, offset));
}

/* A whole number from 0 to max into an unsigned field: -ERANGE for one beyond max, -EINVAL for text that
 * is no number. */
static int parse_unsigned(const char *v, Config *c, size_t offset, guint64 max)
{
        g_autoptr(GError) error = NULL;
        guint64 n;

        if (!g_ascii_string_to_unsigned(v, 10, 0, max, &n, &error))
                return g_error_matches(error, G_NUMBER_PARSER_ERROR, G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS)
                           ? -ERANGE
                           : -EINVAL;
        *FIELD(unsigned, c, offset) = (unsigned)n;
        return 0;
}

static int parse_seconds(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_unsigned(v, c, offset, 86400);
}

static int parse_string(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        if (!*v)
                return -EINVAL;
        g_free(*FIELD(char *, c, offset));
        *FIELD(char *, c, offset) = g_strdup(v);
        return 0;
}

/*
 * A libvirt connection URI as libvirt would take it, where that can be told without asking libvirt: a
 * scheme, and for QEMU's driver (qemu:, qemu+ssh: and the like) the path libvirt accepts, /system,
 * /session or /embed. A typo there (qemu:///sytem) is refused where it is written: libvirt refuses it only
 * once placementd has let go of every domain of the running connection, and then for ever.
 */
static bool uri_plausible(const char *uri)
{
        const char *colon = strchr(uri, ':'), *path;
        g_autofree char *scheme = NULL;
        size_t len;

        if (!colon || colon == uri || !g_ascii_isalpha(uri[0]) || !uri_splits(uri))
                return false;
        scheme = g_strndup(uri, (gsize)(colon - uri));
        for (const char *s = scheme; *s; s++)
                if (!g_ascii_isalnum(*s) && !strchr("+.-", *s))
                        return false;
        if (strcmp(scheme, "qemu") != 0 && !g_str_has_prefix(scheme, "qemu+"))
                return true;
        if (!g_str_has_prefix(colon, "://"))
                return false;
        path = strchr(colon + 3, '/'); /* after the server part */
        if (!path)
                return false;
        len = strcspn(path, "?#");
        return (len == 7 && strncmp(path, "/system", len) == 0) ||
               (len == 8 && strncmp(path, "/session", len) == 0) ||
               (len == 6 && strncmp(path, "/embed", len) == 0);
}

static int parse_uri(const char *v, Config *c, size_t offset, const char **allowed)
{
        if (!uri_plausible(v))
                return -EINVAL;
        return parse_string(v, c, offset, allowed);
}

int config_split_listen(const char *listen, char **ret_host, unsigned *ret_port)
{
        const char *colon = strrchr(listen, ':');
        g_autofree char *host = NULL;
        guint64 port;

        /* ":9464", as Prometheus exporters take it: every address (an empty host) */
        if (!colon || !g_ascii_string_to_unsigned(colon + 1, 10, 1, 65535, &port, NULL))
                return -EINVAL;
        host = g_strndup(listen, (gsize)(colon - listen));
        if (host[0] == '[') {
                size_t n = strlen(host);
                if (n < 3 || host[n - 1] != ']')
                        return -EINVAL;
                memmove(host, host + 1, n - 2);
                host[n - 2] = '\0';
        } else if (strchr(host, ':')) {
                return -EINVAL; /* IPv6 needs brackets */
        }
        for (const char *p = host; *p; p++)
                if (!g_ascii_isalnum(*p) && !strchr(".-:_", *p))
                        return -EINVAL;
        if (ret_host)
                *ret_host = g_steal_pointer(&host);
        if (ret_port)
                *ret_port = (unsigned)port;
        return 0;
}

static int parse_listen(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        if (!*v) {
                g_clear_pointer(FIELD(char *, c, offset), g_free);
                return 0;
        }
        if (config_split_listen(v, NULL, NULL) < 0)
                return -EINVAL;
        g_free(*FIELD(char *, c, offset));
        *FIELD(char *, c, offset) = g_strdup(v);
        return 0;
}

static int parse_count(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_unsigned(v, c, offset, 1000);
}

static int parse_interval(const char *v, Config *c, size_t offset, const char **allowed)
{
        (void)allowed;
        return parse_unsigned(v, c, offset, 3600);
}

static const ConfigKey config_keys[] = {
    {"Placement", "Policy", parse_policy, offsetof(Config, placement.policy), "explicit, compat"},
    {"Placement", "VCPUPin", parse_vcpu_pin, offsetof(Config, placement.vcpu_pin), "core, thread, nodeset"},
    {"Placement", "EmulatorPin", parse_emulator_pin, offsetof(Config, placement.emulator_pin),
     "siblings, nodeset, none"},
    {"Placement", "ReservedCPUs", parse_cpuset, offsetof(Config, placement.reserved_cpus),
     "a CPU list such as 0-1,32-33"},
    {"Placement", "MemoryReserve", parse_size, offsetof(Config, placement.memory_reserve),
     "a size in bytes with an optional K, M, G or T suffix"},
    {"Placement", "Apply", parse_bool, offsetof(Config, apply), "yes, no"},
    {"Placement", "MemoryBinding", parse_bool, offsetof(Config, memory_binding), "yes, no"},
    {"Placement", "PlaceRunning", parse_bool, offsetof(Config, place_running), "yes, no"},
    {"Placement", "ReconcileSec", parse_seconds, offsetof(Config, reconcile_sec),
     "seconds from 0 (off) to 86400"},
    {"Libvirt", "URI", parse_uri, offsetof(Config, uri),
     "a libvirt connection URI such as qemu:///system (a qemu URI's path is /system, /session or /embed)",
     CONFIG_KEY_SECRET},
    {"DBus", "Bus", parse_bus, offsetof(Config, bus), "system, session, none", CONFIG_KEY_RESTART},
    {"Metrics", "Listen", parse_listen, offsetof(Config, metrics_listen),
     "ADDRESS:PORT such as 127.0.0.1:9464 or [::1]:9464, :PORT for every address, or empty for off"},
    /* Added for memory kinds and hybrid CPUs: */
    {"Placement", "MemoryTiers", parse_memory_tiers, offsetof(Config, placement.memory_tiers),
     "a list of hbm, nvm, cxl (memory kinds used like DRAM), or empty"},
    {"Placement", "CoreKinds", parse_core_kinds, offsetof(Config, placement.core_kinds),
     "performance-first, performance-only, any"},
    /* healing and measured load */
    {"Placement", "Heal", parse_bool, offsetof(Config, heal), "yes, no"},
    {"Placement", "HealMaxMoves", parse_count, offsetof(Config, heal_max_moves), "moves from 0 to 1000"},
    {"Placement", "HealInterval", parse_interval, offsetof(Config, heal_interval_sec),
     "seconds from 0 to 3600"},
    {"Placement", "HealMemoryBudget", parse_size, offsetof(Config, heal_memory_budget),
     "a size in bytes with an optional K, M, G or T suffix"},
    {"Placement", "LoadInterval", parse_interval, offsetof(Config, load_interval_sec),
     "seconds from 0 (off) to 3600"},
    {"Placement", "LoadWarmup", parse_interval, offsetof(Config, load_warmup_sec), "seconds from 0 to 3600"},
    {"Placement", "Fit", parse_fit, offsetof(Config, placement.fit), "spread, pack"},
    /* added: where emulator and I/O threads go when no idle sibling is left; unset = ReservedCPUs= */
    {"Placement", "HousekeepingCPUs", parse_cpuset, offsetof(Config, placement.housekeeping_cpus),
     "a CPU list such as 0-1,32-33, or empty for none"},
};

Config *config_new_default(void)
{
        Config *c = g_new0(Config, 1);

        c->placement = (PlacementParams){
            .policy = POLICY_EXPLICIT,
            .vcpu_pin = VCPU_PIN_CORE,
            .emulator_pin = EMULATOR_PIN_SIBLINGS,
            .reserved_cpus = cpuset_new(),
            .memory_reserve = 0,
        };
        c->apply = true;
        c->memory_binding = true;
        c->place_running = true;
        c->reconcile_sec = 30;
        c->uri = g_strdup("qemu:///system");
        c->bus = BUS_SYSTEM;
        c->heal = true;
        c->heal_max_moves = 2;
        c->heal_interval_sec = 5;
        c->heal_memory_budget = UINT64_C(8) << 30;
        c->load_interval_sec = 5;
        c->load_warmup_sec = (unsigned)LOAD_WARMUP_SEC;
        return c;
}

void config_free(Config *c)
{
        if (!c)
                return;
        cpuset_free(c->placement.reserved_cpus);
        cpuset_free(c->placement.housekeeping_cpus);
        g_free(c->uri);
        g_free(c->metrics_listen);
        g_free(c->path);
        g_free(c);
}

static const ConfigKey *find_key(const char *section, const char *key)
{
        for (unsigned i = 0; i < G_N_ELEMENTS(config_keys); i++)
                if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].key, key) == 0)
                        return &config_keys[i];
        return NULL;
}

static bool known_section(const char *section)
{
        for (unsigned i = 0; i < G_N_ELEMENTS(config_keys); i++)
                if (strcmp(config_keys[i].section, section) == 0)
                        return true;
        return false;
}

/* The sections (each once) or the keys of one section, in the table's order, for errors. */
static unsigned names_of(const char *section, const char **names)
{
        unsigned n = 0;

        for (unsigned i = 0; i < G_N_ELEMENTS(config_keys); i++) {
                const char *name = section ? config_keys[i].key : config_keys[i].section;
                bool seen = false;
                if (section && strcmp(config_keys[i].section, section) != 0)
                        continue;
                for (unsigned j = 0; j < n && !seen; j++)
                        seen = strcmp(names[j], name) == 0;
                if (!seen)
                        names[n++] = name;
        }
        return n;
}

/* The section that takes key, when one other than section does: a key written in the wrong section. */
static const char *home_of(const char *section, const char *key)
{
        for (unsigned i = 0; i < G_N_ELEMENTS(config_keys); i++)
                if (strcmp(config_keys[i].key, key) == 0 && strcmp(config_keys[i].section, section) != 0)
                        return config_keys[i].section;
        return NULL;
}

/* "NAME:LINE: unknown section [X] (did you mean [Y]?); the sections are A, B" or the same of a key (of a
 * key another section takes, "(it belongs in [Y])"); a name not spelled as one is not shown
 * (config_lines_name_shown()). */
static void unknown_name(GString *errors, const ConfigLines *lines, const char *name, const char *section,
                         const char *key)
{
        const char *names[G_N_ELEMENTS(config_keys) + 1]; /* and the NULL that ends them */
        unsigned n = names_of(key ? section : NULL, names);
        const char *near = config_lines_nearest(key ? key : section, names, n);
        const char *home = key ? home_of(section, key) : NULL;
        unsigned line = config_lines_find(lines, section, key);
        g_autofree char *list = NULL;

        names[n] = NULL;
        list = g_strjoinv(", ", (char **)names);
        g_string_append_printf(errors, "%s%s", errors->len ? "\n" : "", name);
        if (line)
                g_string_append_printf(errors, ":%u", line);
        if (key && !config_lines_name_shown(key))
                g_string_append_printf(errors,
                                       ": an unknown key in [%s], not spelled as a key name; [%s] takes %s",
                                       section, section, list);
        else if (home)
                g_string_append_printf(errors,
                                       ": unknown key %s= in [%s] (it belongs in [%s]); [%s] takes %s", key,
                                       section, home, section, list);
        else if (key)
                g_string_append_printf(errors, ": unknown key %s= in [%s]%s%s%s; [%s] takes %s", key,
                                       section, near ? " (did you mean " : "", near ? near : "",
                                       near ? "=?)" : "", section, list);
        else if (!config_lines_name_shown(section))
                g_string_append_printf(errors,
                                       ": an unknown section, not spelled as a section name; the "
                                       "sections are %s",
                                       list);
        else
                g_string_append_printf(errors, ": unknown section [%s]%s%s%s; the sections are %s", section,
                                       near ? " (did you mean [" : "", near ? near : "", near ? "]?)" : "",
                                       list);
}

/* The line an error names ("NAME:LINE: ..."), 0 when none. */
static unsigned error_line(const char *error, size_t name_len)
{
        guint64 line = 0;

        if (strlen(error) > name_len && error[name_len] == ':')
                line = g_ascii_strtoull(error + name_len + 1, NULL, 10);
        return line > G_MAXUINT ? 0 : (unsigned)line;
}

static gint by_line(gconstpointer a, gconstpointer b, gpointer name_len)
{
        unsigned la = error_line(*(char *const *)a, GPOINTER_TO_SIZE(name_len));
        unsigned lb = error_line(*(char *const *)b, GPOINTER_TO_SIZE(name_len));

        la = la ? la : G_MAXUINT;
        lb = lb ? lb : G_MAXUINT;
        return la < lb ? -1 : la > lb;
}

/* errors (newline-separated) in the order of the lines they name, those naming none last; the first
 * CONFIG_ERRORS_MAX of them and a line that counts the rest */
static char *errors_in_line_order(GString *errors, const char *name)
{
        g_auto(GStrv) all = g_strsplit(errors->str, "\n", -1);
        guint n = g_strv_length(all);

        /* stable: errors of one line, and those naming none, keep their order */
        g_qsort_with_data(all, (gint)n, sizeof(char *), by_line, GSIZE_TO_POINTER(strlen(name)));
        g_string_free(errors, TRUE);
        if (n > CONFIG_ERRORS_MAX) {
                for (guint i = CONFIG_ERRORS_MAX; i < n; i++)
                        g_clear_pointer(&all[i], g_free);
                all[CONFIG_ERRORS_MAX] =
                    g_strdup_printf("%s: ... and %u more problem%s", name, n - CONFIG_ERRORS_MAX,
                                    n - CONFIG_ERRORS_MAX == 1 ? "" : "s");
        }
        return g_strjoinv("\n", all);
}

/* GKeyFile has no comments after a value: "Policy=compat # pinned" is the value "compat # pinned". What
 * to add to the error of a value that looks like one, "" for any other. */
static const char *inline_comment_hint(const char *value)
{
        if (strstr(value, " #") || strstr(value, " ;") || strstr(value, "\t#") || strstr(value, "\t;"))
                return " (comments go on a line of their own, starting with #)";
        return "";
}

/* "NAME:LINE: [Section] Key=VALUE: DETAIL; expected ALLOWED", the value as value_shown() writes it; a
 * CONFIG_KEY_SECRET key's value is not shown ("[Libvirt] URI: ..."): the errors reach every local user
 * (the daemon's ReloadError), and a URI may name a user, a password, key files and sockets. */
static void value_error(GString *errors, const char *name, unsigned line, const ConfigKey *ck,
                        const char *value, int r, const char *detail)
{
        g_string_append_printf(errors, "%s%s", errors->len ? "\n" : "", name);
        if (line)
                g_string_append_printf(errors, ":%u", line);
        g_string_append_printf(errors, ": [%s] %s", ck->section, ck->key);
        if (!(ck->flags & CONFIG_KEY_SECRET)) {
                g_autofree char *shown = value_shown(value);
                g_string_append_printf(errors, VALUE_OPEN "=%s" VALUE_CLOSE, shown);
        }
        g_string_append_printf(errors, ": %s; expected %s%s",
                               detail ? detail : (r == -ERANGE ? "out of range" : "invalid value"),
                               ck->allowed, inline_comment_hint(value));
}

/* config_load_data() with the refused values marked in *ret_marked (unmark()). */
static int load_data(const char *data, const char *name, Config **ret, char **ret_marked)
{
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) error = NULL;
        g_autoptr(Config) c = config_new_default();
        g_auto(GStrv) groups = NULL;
        g_autofree char *clean = NULL;
        g_autoptr(ConfigLines) lines = NULL;
        GString *errors = g_string_new(NULL);

        /* a byte order mark some editors write: GKeyFile would call the first line, which looks right,
         * a syntax error */
        if (g_str_has_prefix(data, "\xef\xbb\xbf"))
                data += 3;
        /* every bad line is said; the rest is read without them, and its errors are said too */
        config_lines_bad(data, name, errors, &clean);
        data = clean;
        if (!g_key_file_load_from_data(kf, data, (gsize)-1, G_KEY_FILE_NONE, &error)) {
                /* not error->message: it may quote a line or a value (an Encoding= key's) */
                g_string_append_printf(
                    errors, "%s%s: GLib cannot read it as a key file (%s)", errors->len ? "\n" : "", name,
                    error->code == G_KEY_FILE_ERROR_UNKNOWN_ENCODING ? "an Encoding= key it does not take"
                                                                     : "a line it refuses");
                goto fail;
        }
        config_lines_repeated(data, name, errors);
        lines = config_lines_new(data);
        groups = g_key_file_get_groups(kf, NULL);
        for (char **g = groups; *g; g++) {
                g_auto(GStrv) keys = NULL;
                if (g_str_has_prefix(*g, CONFIG_LINES_BAD_SECTION))
                        continue; /* said already, with the keys under it */
                if (!known_section(*g)) {
                        unknown_name(errors, lines, name, *g, NULL);
                        continue;
                }
                g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
                keys = g_key_file_get_keys(kf, *g, NULL, NULL);
                for (char **k = keys; k && *k; k++) {
                        const ConfigKey *ck = find_key(*g, *k);
                        g_autofree char *raw = g_key_file_get_value(kf, *g, *k, NULL);
                        g_autofree char *value = g_strstrip(g_strdup(raw ? raw : ""));
                        const char *detail = NULL;
                        int r;

                        /* GKeyFile lists a key set twice twice, with its last value: said once (its
                         * repetition is an error of its own, config_lines_repeated()) */
                        if (!g_hash_table_add(seen, *k))
                                continue;
                        if (!ck) {
                                unknown_name(errors, lines, name, *g, *k);
                                continue;
                        }
                        r = ck->parse(value, c, ck->offset, &detail);
                        if (r < 0)
                                value_error(errors, name, config_lines_find_last(lines, *g, *k), ck, value,
                                            r, detail);
                        g_free((char *)detail);
                }
        }
        if (errors->len)
                goto fail;
        g_string_free(errors, TRUE);
        c->path = g_strdup(name);
        *ret = g_steal_pointer(&c);
        return 0;
fail:
        if (ret_marked)
                *ret_marked = errors_in_line_order(errors, name);
        else
                g_string_free(errors, TRUE);
        return -EINVAL;
}

int config_load_data(const char *data, const char *name, Config **ret, char **ret_error)
{
        g_autofree char *marked = NULL;
        int r = load_data(data, name, ret, &marked);

        if (r < 0 && ret_error)
                *ret_error = unmark(marked, true);
        return r;
}

/* config_load_file() with the refused values marked in *ret_marked (unmark()). */
static int load_file(const char *path, Config **ret, char **ret_marked)
{
        g_autofree char *data = NULL, *why = NULL;
        struct stat st;
        int r = file_read_bounded_stat(path, CONFIG_FILE_MAX, &data, NULL, &st, &why);

        /* whoever may write the file steers the daemon: not every user */
        if (r >= 0 && (st.st_mode & S_IWOTH)) {
                why = g_strdup_printf("writable by every user (mode %04o): not read; chmod o-w it",
                                      (unsigned)(st.st_mode & 07777));
                r = -EPERM;
        }
        if (r < 0) {
                if (ret_marked)
                        *ret_marked = g_strdup_printf("%s: %s", path, why);
                return r;
        }
        return load_data(data, path, ret, ret_marked);
}

int config_load_file(const char *path, Config **ret, char **ret_error)
{
        g_autofree char *marked = NULL;
        int r = load_file(path, ret, &marked);

        if (r < 0 && ret_error)
                *ret_error = unmark(marked, true);
        return r;
}

int config_load_or_defaults_public(const char *path, bool must_exist, Config **ret, char **ret_note,
                                   char **ret_error, char **ret_public)
{
        g_autofree char *marked = NULL;
        int r = load_file(path, ret, &marked);

        if (r == -ENOENT && !must_exist) {
                *ret = config_new_default();
                if (ret_note)
                        *ret_note = g_strdup_printf("%s not found: built-in defaults", path);
                return 1;
        }
        if (r < 0 && ret_error)
                *ret_error = unmark(marked, true);
        if (r < 0 && ret_public)
                *ret_public = unmark(marked, false);
        return r;
}

int config_load_or_defaults(const char *path, bool must_exist, Config **ret, char **ret_note,
                            char **ret_error)
{
        return config_load_or_defaults_public(path, must_exist, ret, ret_note, ret_error, NULL);
}

char *config_format(const Config *c)
{
        g_autofree char *reserved = cpuset_format(c->placement.reserved_cpus);
        g_autofree char *tiers = config_format_memory_tiers(c->placement.memory_tiers);
        /* the effective list: unset follows ReservedCPUs= */
        g_autofree char *housekeeping = cpuset_format(
            c->placement.housekeeping_cpus ? c->placement.housekeeping_cpus : c->placement.reserved_cpus);

        return g_strdup_printf(
            "[Placement]\nPolicy=%s\nVCPUPin=%s\nEmulatorPin=%s\nReservedCPUs=%s\n"
            "MemoryReserve=%llu\nApply=%s\nMemoryBinding=%s\nPlaceRunning=%s\nReconcileSec=%u\n"
            "MemoryTiers=%s\nCoreKinds=%s\n"
            "Heal=%s\nHealMaxMoves=%u\nHealInterval=%u\nHealMemoryBudget=%llu\n"
            "LoadInterval=%u\nLoadWarmup=%u\nFit=%s\n"
            "HousekeepingCPUs=%s\n"
            "\n[Libvirt]\nURI=%s\n\n[DBus]\nBus=%s\n\n[Metrics]\nListen=%s\n",
            policy_kind_to_string(c->placement.policy), vcpu_pin_mode_to_string(c->placement.vcpu_pin),
            emulator_pin_mode_to_string(c->placement.emulator_pin), reserved,
            (unsigned long long)c->placement.memory_reserve, c->apply ? "yes" : "no",
            c->memory_binding ? "yes" : "no", c->place_running ? "yes" : "no", c->reconcile_sec, tiers,
            core_kinds_mode_to_string(c->placement.core_kinds), c->heal ? "yes" : "no", c->heal_max_moves,
            c->heal_interval_sec, (unsigned long long)c->heal_memory_budget, c->load_interval_sec,
            c->load_warmup_sec, fit_mode_to_string(c->placement.fit), housekeeping, c->uri,
            bus_kind_to_string(c->bus), c->metrics_listen ? c->metrics_listen : "");
}

/* The effective configuration as a key file, for comparing and merging key by key. */
static GKeyFile *config_key_file(const Config *c)
{
        g_autofree char *text = config_format(c);
        GKeyFile *kf = g_key_file_new();

        g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_NONE, NULL);
        return kf;
}

char **config_restart_changes(const Config *old, const Config *new)
{
        g_autoptr(GKeyFile) a = config_key_file(old), b = config_key_file(new);
        GPtrArray *changes = g_ptr_array_new();

        for (unsigned i = 0; i < G_N_ELEMENTS(config_keys); i++) {
                const ConfigKey *k = &config_keys[i];
                g_autofree char *was = g_key_file_get_value(a, k->section, k->key, NULL);
                g_autofree char *is = g_key_file_get_value(b, k->section, k->key, NULL);

                if ((k->flags & CONFIG_KEY_RESTART) && g_strcmp0(was, is) != 0)
                        g_ptr_array_add(changes, g_strdup_printf("[%s] %s=%s (running with %s)", k->section,
                                                                 k->key, is ? is : "", was ? was : ""));
        }
        g_ptr_array_add(changes, NULL);
        return (char **)g_ptr_array_free(changes, FALSE);
}

Config *config_reloadable(const Config *old, const Config *new)
{
        g_autoptr(GKeyFile) a = config_key_file(old), b = config_key_file(new);
        g_autofree char *text = NULL;
        Config *c = NULL;

        for (unsigned i = 0; i < G_N_ELEMENTS(config_keys); i++) {
                const ConfigKey *k = &config_keys[i];
                g_autofree char *was = g_key_file_get_value(a, k->section, k->key, NULL);

                if ((k->flags & CONFIG_KEY_RESTART) && was)
                        g_key_file_set_value(b, k->section, k->key, was);
        }
        text = g_key_file_to_data(b, NULL, NULL);
        /* config_format() output loads back exactly (the config fuzzer checks it) */
        if (config_load_data(text, new->path ? new->path : "(reload)", &c, NULL) < 0)
                return NULL;
        /* unset follows ReservedCPUs=, which config_format() wrote out as a list of its own */
        if (!new->placement.housekeeping_cpus)
                g_clear_pointer(&c->placement.housekeeping_cpus, cpuset_free);
        if (!new->path)
                g_clear_pointer(&c->path, g_free);
        return c;
}

GPtrArray *config_unknown_cpus(const Config *c, const CpuSet *host_cpus)
{
        const struct {
                const char *key;
                const CpuSet *cpus;
        } lists[] = {
            {"ReservedCPUs=", c->placement.reserved_cpus},
            {"HousekeepingCPUs=", c->placement.housekeeping_cpus},
        };
        GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

        for (unsigned i = 0; i < G_N_ELEMENTS(lists); i++) {
                g_autoptr(CpuSet) unknown = NULL;
                g_autofree char *text = NULL;
                if (!lists[i].cpus)
                        continue;
                unknown = cpuset_copy(lists[i].cpus);
                cpuset_subtract(unknown, host_cpus);
                if (cpuset_is_empty(unknown))
                        continue;
                text = cpuset_format(unknown);
                g_ptr_array_add(out,
                                g_strdup_printf("%s names CPUs this host does not have (%s), ignoring those",
                                                lists[i].key, text));
        }
        return out;
}

GPtrArray *config_host_warnings(const Config *c, const Topology *t)
{
        GPtrArray *out = config_unknown_cpus(c, t->all_pus);
        uint64_t largest = 0;
        char a[32], b[32];

        for (unsigned n = 0; n < t->nnodes; n++)
                largest = MAX(largest, t->nodes[n].memory);
        if (c->placement.memory_reserve && largest && c->placement.memory_reserve >= largest)
                g_ptr_array_add(out, g_strdup_printf("MemoryReserve=%s is at least every node's memory (the "
                                                     "largest has %s): no domain's memory can be placed",
                                                     size_format(c->placement.memory_reserve, a, sizeof(a)),
                                                     size_format(largest, b, sizeof(b))));
        if (c->placement.reserved_cpus && !cpuset_is_empty(t->all_pus)) {
                g_autoptr(CpuSet) left = cpuset_copy(t->all_pus);
                cpuset_subtract(left, c->placement.reserved_cpus);
                if (cpuset_is_empty(left))
                        g_ptr_array_add(out,
                                        g_strdup("ReservedCPUs= covers every CPU of this host: no domain's "
                                                 "vCPUs can be placed"));
        }
        return out;
}
