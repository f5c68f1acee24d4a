/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "host-svg.h"
#include "text-safe.h"
#include "file-read.h"
#include "topology-xml-v3.h"
#include "topology-xml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <hwloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define STYLE_RESERVED "Background=#4d4d4d;Text=#ffffff"
#define STYLE_SHARED   "Background=#d7191c;Text=#ffffff"

static void hwloc_topology_unref(hwloc_topology_t t)
{
        hwloc_topology_destroy(t);
}
typedef struct hwloc_topology HwlocTopo;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwlocTopo, hwloc_topology_unref)

/* Light colours that black text reads on, told apart by most eyes (ColorBrewer Set3). */
static const char *const palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                      "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9"};

static char *domain_style(unsigned k)
{
        return g_strdup_printf("Background=%s;Text=#000000", palette[k % G_N_ELEMENTS(palette)]);
}

static int fail(char **ret_error, int r, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static int fail(char **ret_error, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        *ret_error = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        return r;
}

/* The same hwloc view placementd loaded the Topology from (the source was read once already). */
static int load_hwloc(const char *source, hwloc_topology_t *ret, char **ret_error)
{
        g_autoptr(HwlocTopo) topo = NULL;
        g_autofree char *xml = NULL;
        size_t len = 0;
        int r = 0;

        /* an XML file as topology_load() reads it (hwloc 3.x XML rewritten, checked), read again: it may
         * have changed since */
        if (!g_str_has_prefix(source, "synthetic:") && !g_str_equal(source, "host") &&
            (file_read_bounded(source, TOPOLOGY_XML_MAX_BYTES, &xml, &len, NULL) < 0 ||
             topology_xml_v3_to_v2(&xml, &len, NULL) < 0 || topology_xml_precheck(xml, len, NULL) < 0))
                return fail(ret_error, -EINVAL, "%s: hwloc cannot load it again to draw it", source);
        if (hwloc_topology_init(&topo) < 0)
                return fail(ret_error, -ENOMEM, "cannot initialize hwloc");
        hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
        /* the legend entries are Misc objects, which hwloc drops by default */
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_ALL);
        if (g_str_has_prefix(source, "synthetic:"))
                r = hwloc_topology_set_synthetic(topo, source + strlen("synthetic:"));
        else if (xml)
                r = hwloc_topology_set_xmlbuffer(topo, xml, (int)len + 1);
        if (r < 0 || hwloc_topology_load(topo) < 0)
                return fail(ret_error, -EINVAL, "%s: hwloc cannot load it again to draw it", source);
        /* an hwloc v1 export whose allowed memory nodes name none of its nodes (placementd ignores them):
         * lstopo would drop every node of the XML handed to it and refuse to draw */
        if (!hwloc_bitmap_intersects(hwloc_topology_get_allowed_nodeset(topo),
                                     hwloc_topology_get_complete_nodeset(topo)) &&
            hwloc_topology_allow(topo, NULL, hwloc_topology_get_complete_nodeset(topo),
                                 HWLOC_ALLOW_FLAG_CUSTOM) < 0)
                return fail(ret_error, -EINVAL, "%s: hwloc cannot allow its memory nodes to draw them",
                            source);
        *ret = g_steal_pointer(&topo);
        return 0;
}

static int style_pus(hwloc_topology_t topo, const Topology *t, const int *owner, char **ret_error)
{
        for (unsigned p = 0; p < t->npus; p++) {
                hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, t->pus[p].os_index);
                g_autofree char *style = NULL;

                if (!pu)
                        return fail(ret_error, -EINVAL, "hwloc has no PU P#%u to draw", t->pus[p].os_index);
                if (owner[p] >= 0)
                        style = domain_style((unsigned)owner[p]);
                else if (owner[p] == HOST_PU_SHARED)
                        style = g_strdup(STYLE_SHARED);
                else if (owner[p] == HOST_PU_RESERVED)
                        style = g_strdup(STYLE_RESERVED);
                if (style && hwloc_obj_add_info(pu, "lstopoStyle", style) < 0)
                        return fail(ret_error, -ENOMEM, "cannot style PU P#%u", t->pus[p].os_index);
        }
        return 0;
}

/* lstopo's nativesvg writes names and legend lines into the SVG as they are, so a domain called
 * "</text><script>..." would be markup: escape them for it (hwloc's XML carries the escaped text through),
 * control characters and invalid UTF-8 replaced first. hwloc's export drops bytes beyond ASCII ("café"
 * would read "caf"): those characters go as character references. */
static char *svg_text(const char *s)
{
        g_autofree char *valid = g_utf8_make_valid(s, -1);
        g_autofree char *escaped = NULL;
        GString *out;

        for (char *c = valid; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        *c = '?';
        escaped = g_markup_escape_text(valid, -1);
        out = g_string_sized_new(strlen(escaped));
        for (const char *c = escaped; *c; c = g_utf8_next_char(c)) {
                gunichar u = g_utf8_get_char(c);
                if (u < 0x80)
                        g_string_append_c(out, (char)u);
                else
                        g_string_append_printf(out, "&#x%X;", u);
        }
        return g_string_free(out, FALSE);
}

/* One box per domain in its colour, and one for each special mark in use: lstopo draws them beside the
 * packages, a legend in the picture's own colours. */
static int add_legend(hwloc_topology_t topo, const int *owner, unsigned npus, const GPtrArray *names,
                      char **ret_error)
{
        bool shared = false, reserved = false;

        for (unsigned p = 0; p < npus; p++) {
                shared |= owner[p] == HOST_PU_SHARED;
                reserved |= owner[p] == HOST_PU_RESERVED;
        }
        for (unsigned k = 0; k <= names->len + 1; k++) {
                g_autofree char *style = NULL, *label = NULL;
                hwloc_obj_t misc;

                if (k < names->len) {
                        /* as the terminal shows it: a bidi override or an invisible mark escaped */
                        g_autofree char *safe = text_safe(g_ptr_array_index(names, k));
                        label = svg_text(safe);
                        style = domain_style(k);
                } else if (k == names->len && reserved) {
                        label = g_strdup("reserved for the host");
                        style = g_strdup(STYLE_RESERVED);
                } else if (k == names->len + 1 && shared) {
                        label = g_strdup("several domains");
                        style = g_strdup(STYLE_SHARED);
                } else {
                        continue;
                }
                misc = hwloc_topology_insert_misc_object(topo, hwloc_get_root_obj(topo), label);
                if (!misc || hwloc_obj_add_info(misc, "lstopoStyle", style) < 0)
                        return fail(ret_error, -ENOMEM, "cannot add the legend entry %s", label);
        }
        return 0;
}

/* lstopo draws the picture, which goes to fd; path is the name the user gave, for the messages */
static int run_lstopo(const char *xml, const char *source, int fd, const char *path, char **ret_error)
{
        g_autofree char *where = svg_text(source);
        g_autofree char *legend =
            g_strdup_printf("placementd: each PU in the colour of the domain whose vCPUs "
                            "run there (boxes at the right); topology %s",
                            where);
        /* "-" is lstopo's standard output, in the format --of names */
        const char *argv[] = {"lstopo",
                              "--if",
                              "xml",
                              "-i",
                              xml,
                              "--of",
                              "nativesvg",
                              "--no-default-legend",
                              "--no-factorize",
                              "--append-legend",
                              legend,
                              "-",
                              NULL};
        g_autoptr(GError) e = NULL;
        /* lstopo does not check its writes (onto a full disk it exits 0): the picture comes through a
         * pipe and is written here, each write checked; its error text goes to a memory file, which
         * cannot fill up and block it while the pipe is read */
        int err_fd = memfd_create("lstopo-stderr", MFD_CLOEXEC), out_fd = -1, status = 0, write_errno = 0;
        char buf[4096], err[1024] = "";
        GPid pid;
        ssize_t n;

        if (err_fd < 0)
                return fail(ret_error, -errno, "cannot run lstopo: %s", g_strerror(errno));
        if (!g_spawn_async_with_pipes_and_fds(
                NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, -1, -1,
                err_fd, NULL, NULL, 0, &pid, NULL, &out_fd, NULL, &e)) {
                close(err_fd);
                return fail(ret_error, -ENOENT, "cannot run lstopo (package hwloc): %s", e->message);
        }
        while ((n = read(out_fd, buf, sizeof(buf))) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        write_errno = errno;
                        break;
                }
                for (ssize_t done = 0, w; !write_errno && done<n; done += w> 0 ? w : 0) {
                        w = write(fd, buf + done, (size_t)(n - done));
                        if (w < 0 && errno != EINTR)
                                write_errno = errno;
                }
        }
        close(out_fd); /* a write error stops the reading: lstopo then ends on its broken pipe */
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        close(err_fd);
                        return fail(ret_error, -errno, "cannot wait for lstopo: %s", g_strerror(errno));
                }
        g_spawn_close_pid(pid);
        n = pread(err_fd, err, sizeof(err) - 1, 0);
        err[n > 0 ? n : 0] = '\0';
        close(err_fd);
        if (write_errno)
                return fail(ret_error, -write_errno, "cannot write %s: %s", path, g_strerror(write_errno));
        if (!g_spawn_check_wait_status(status, NULL))
                return fail(ret_error, -EIO, "lstopo could not draw %s: %s", path, g_strstrip(err));
        return 0;
}

/* Whether st, at path, is a FIFO or regular file that someone other than root, the caller and the owner
 * of its directory put in a sticky directory others may write to (/tmp): what fs.protected_fifos and
 * fs.protected_regular (at 2) refuse to open with O_CREAT, which root's command would otherwise write
 * to, or wait on for ever. */
static bool planted(const char *path, const struct stat *st)
{
        g_autofree char *dir = NULL;
        struct stat d;

        if ((!S_ISFIFO(st->st_mode) && !S_ISREG(st->st_mode)) || st->st_uid == 0 || st->st_uid == geteuid())
                return false;
        dir = g_path_get_dirname(path);
        if (stat(dir, &d) < 0)
                return true; /* cannot tell: not written */
        return (d.st_mode & S_ISVTX) && (d.st_mode & (S_IWGRP | S_IWOTH)) && d.st_uid != st->st_uid;
}

int host_svg_open(const char *path, char **ret_error)
{
        int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY;
        struct stat link, again, st;
        bool follow = false, found;
        int fd;

        found = lstat(path, &link) == 0;
        if (found && S_ISLNK(link.st_mode)) {
                if (link.st_uid != 0 && link.st_uid != geteuid())
                        return fail(ret_error, -EPERM,
                                    "%s is a symbolic link owned by uid %u, neither root nor the caller: "
                                    "not writing through it",
                                    path, (unsigned)link.st_uid);
                follow = true;
        } else if (found && planted(path, &link))
                return fail(ret_error, -EPERM,
                            "%s is a %s owned by uid %u, neither root nor the caller, in a sticky directory "
                            "others may write to: not writing to it",
                            path, S_ISFIFO(link.st_mode) ? "FIFO" : "file", (unsigned)link.st_uid);
        /* none there: made here, so that one put there after the lstat() is not opened */
        fd = open(path, follow ? flags : flags | O_NOFOLLOW | O_TRUNC | (found ? 0 : O_EXCL), 0666);
        if (fd < 0)
                return fail(ret_error, -errno, "cannot open %s: %s", path,
                            errno == ELOOP    ? "it is a symbolic link"
                            : errno == EEXIST ? "it was made while it was opened"
                                              : g_strerror(errno));
        if (!follow)
                return fd;
        if (lstat(path, &again) < 0 || !S_ISLNK(again.st_mode) || again.st_ino != link.st_ino ||
            again.st_dev != link.st_dev || again.st_uid != link.st_uid) {
                close(fd);
                return fail(ret_error, -EAGAIN, "%s: the symbolic link changed while it was opened", path);
        }
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0) {
                int r = -errno;
                close(fd);
                return fail(ret_error, r, "cannot empty %s: %s", path, g_strerror(-r));
        }
        return fd;
}

static int draw(const Topology *t, const int *owner, const GPtrArray *names, int fd, const char *path,
                char **ret_error)
{
        g_autoptr(HwlocTopo) topo = NULL;
        g_autoptr(GError) e = NULL;
        g_autofree char *xml = NULL;
        int tmp, r;

        r = load_hwloc(t->source, &topo, ret_error);
        if (r >= 0)
                r = style_pus(topo, t, owner, ret_error);
        if (r >= 0)
                r = add_legend(topo, owner, t->npus, names, ret_error);
        if (r < 0)
                return r;
        tmp = g_file_open_tmp("placementd-map-XXXXXX.xml", &xml, &e);
        if (tmp < 0)
                return fail(ret_error, -EIO, "cannot make a temporary file: %s", e->message);
        close(tmp);
        if (hwloc_topology_export_xml(topo, xml, 0) < 0)
                r = fail(ret_error, -EIO, "cannot export the topology to %s", xml);
        else
                r = run_lstopo(xml, t->source, fd, path, ret_error);
        unlink(xml);
        return r;
}

int host_svg_write(const Topology *t, const int *owner, const GPtrArray *names, int fd, const char *path,
                   char **ret_error)
{
        int r = draw(t, owner, names, fd, path, ret_error);

        if (close(fd) < 0 && r >= 0)
                r = fail(ret_error, -errno, "cannot write %s: %s", path, g_strerror(errno));
        return r;
}
