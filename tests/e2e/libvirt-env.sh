# shellcheck shell=bash
# Real libvirtd + virtlogd + QEMU (software emulation, TCG) for placementd's end-to-end tests.
#
# Source this file from bash (it is a library: it sets no shell options and runs nothing on load).
# Needs root, Debian 12 packages from .ci/install-e2e-deps.sh, no systemd and no /dev/kvm required.
#
#   . tests/e2e/libvirt-env.sh
#   e2e_libvirt_start "$dir"            # virtlogd + libvirtd, waits until qemu:///system answers
#   e2e_domain_start e2e-a 2            # transient domain from domain.xml.in (64 MiB, 2 vCPUs)
#   e2e_domain_start e2e-b 1 '<iothreads>2</iothreads>'   # the same with XML added before <os>
#   e2e_vcpu_affinity e2e-a             # "0 0-1" / "1 0-1": vCPU index, Cpus_allowed_list of its thread
#   e2e_emulator_affinity e2e-a         # Cpus_allowed_list of QEMU's main thread
#   e2e_libvirt_kill9 "$dir"; e2e_libvirt_restart "$dir"   # QEMU keeps running, libvirtd re-adopts it
#   e2e_domain_destroy e2e-a
#   e2e_domain_ghost "$dir" e2e-a       # what libvirt keeps of a start a SIGKILL cut: a job it never ends
#   e2e_libvirt_drop_ghosts "$dir"      # libvirtd restarted without them
#   e2e_libvirt_stop "$dir"             # destroys leftover domains, kills daemons by PID, rmdirs cgroups
#   e2e_hugepage_pool 48 || echo "$E2E_HP_WHY"   # 48 2 MiB pages on node 0, before e2e_libvirt_start
#   e2e_hugepage_pool_undo              # the pool and the hugetlbfs mount as they were
#
# Every function returns non-zero and prints "e2e: ..." on stderr on failure. All are `set -u` safe; callers
# may use `set -e -o pipefail` (each public function switches both off locally with `local -`, so the
# caller's options come back on return). Daemons and QEMUs are only ever stopped by PID (from DIR's pid files
# or libvirt's /run/libvirt/qemu/NAME.pid, checked against /proc), never by name.
#
# Also public: e2e_virsh ARGS (virsh -c $E2E_LIBVIRT_URI with a timeout), e2e_qemu_pid NAME,
# e2e_virsh_vcpupin NAME (libvirt's view of the pins, in the format of e2e_vcpu_affinity), and
# e2e_suite_begin NAME, the frame of a suite on tests/lib/tap.sh whose pins are the machine's CPUs.
#
# Settings (environment, all optional):
#   E2E_LIBVIRT_URI            qemu:///system
#   E2E_DOMAIN_PREFIX          e2e-      domains whose names start with it are destroyed by e2e_libvirt_stop
#   E2E_LIBVIRT_START_TIMEOUT  30        seconds to wait for libvirtd to answer (the first start on a machine
#                                        probes QEMU's capabilities: 2.5-8.5 s here; later starts ~0.3 s)
#   E2E_VIRSH_TIMEOUT          30        seconds before any single virsh call is abandoned
#   E2E_LIBVIRT_CONF_MODE      auto      "private": libvirtd runs in its own mount namespace where DIR/etc-libvirt
#                                        is bind-mounted on /etc/libvirt (qemu.conf has no -f option), so the
#                                        host's /etc is never touched (libvirtd also creates nwfilter/ and
#                                        secrets/ there: they land in DIR); "system": edit /etc/libvirt/qemu.conf in a
#                                        marked block (undone by e2e_libvirt_stop); "auto": private if possible.
#   E2E_DOMAIN_TEMPLATE        domain.xml.in next to this file
#   E2E_REAPER                 1         run libvirtd (and so its QEMUs) under a subreaper that reaps at once;
#                                        0 leaves orphans to PID 1 (each virsh destroy then takes 1-2 s here)
#   E2E_CGROUP_CONTROLLERS     "cpu", "cpuacct", "cpuset"   qemu.conf's cgroup_controllers; without "cpu" a
#                                        guest's threads may be FIFO under realtime group scheduling
#
# Files in DIR: libvirtd.pid virtlogd.pid libvirtd.log virtlogd.log libvirtd.conf virtlogd.conf conf-mode
# etc-libvirt/ (private mode) domains (names started by e2e_domain_start) reaper.pids spawn.err.
# libvirt's own paths: /run/libvirt/qemu/NAME.pid and NAME.xml (live status, used to re-adopt after a
# restart), /var/log/libvirt/qemu/NAME.log (QEMU command line and stderr), cgroups under
# /sys/fs/cgroup/<controller>/machine/qemu-<id>-<name>.libvirt-qemu/{emulator,vcpuN}.
#
# Public variables set by e2e_libvirt_start: E2E_LIBVIRT_DIR (absolute DIR).

E2E_LIBVIRT_URI=${E2E_LIBVIRT_URI:-qemu:///system}
E2E_DOMAIN_PREFIX=${E2E_DOMAIN_PREFIX:-e2e-}
E2E_LIBVIRT_START_TIMEOUT=${E2E_LIBVIRT_START_TIMEOUT:-30}
E2E_VIRSH_TIMEOUT=${E2E_VIRSH_TIMEOUT:-30}
E2E_LIBVIRT_CONF_MODE=${E2E_LIBVIRT_CONF_MODE:-auto}
E2E_LIBVIRT_DIR=${E2E_LIBVIRT_DIR:-}
E2E_CGROUP_CONTROLLERS=${E2E_CGROUP_CONTROLLERS:-'"cpu", "cpuacct", "cpuset"'}
E2E_QEMU_RUN_DIR=${E2E_QEMU_RUN_DIR:-/run/libvirt/qemu}
_E2E_LIB_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/tap.sh
. "$_E2E_LIB_HERE/../lib/tap.sh" # pid_alive
E2E_DOMAIN_TEMPLATE=${E2E_DOMAIN_TEMPLATE:-$_E2E_LIB_HERE/domain.xml.in}
_E2E_CONF_MARK_BEGIN='# >>> placementd e2e (tests/e2e/libvirt-env.sh) >>>'
_E2E_CONF_MARK_END='# <<< placementd e2e <<<'
_E2E_CONF_COMMENT='#placementd-e2e# '

# ---------------------------------------------------------------------------------------------- helpers

# e2e_suite_begin NAME: exits 77 with fewer than 2 CPUs; else tap_begin NAME, the work directory WORK (kept
# when the suite fails, or always with E2E_KEEP set) and the daemon's log PD_LOG in it, created empty.
# shellcheck disable=SC2034 # WORK is for the suites
e2e_suite_begin() {
    [ "$(nproc)" -ge 2 ] || tap_skip "needs 2 CPUs"
    tap_begin "$1"
    tap_tmpdir "$1" "${E2E_KEEP:-}"
    TAP_KEEP_FAILED=1
    WORK=$TAP_TMP
    PD_LOG=$WORK/placementd.log
    : >"$PD_LOG"
}

_e2e_err() { echo "e2e: $*" >&2; }

# virsh against the test URI, bounded in time. Public: the e2e test may use it too.
e2e_virsh() { timeout -k 5 "$E2E_VIRSH_TIMEOUT" virsh -c "$E2E_LIBVIRT_URI" "$@"; }

# _e2e_dir_arg FUNC DIR: check the DIR argument, print its absolute path.
_e2e_dir_arg() {
    if [ -z "${2:-}" ]; then
        _e2e_err "$1: missing DIR argument"
        return 1
    fi
    mkdir -p -- "$2" && (cd -- "$2" && pwd)
}

# _e2e_pid_alive PID: true if the process exists and is not a zombie (tests/lib/tap.sh's pid_alive). Daemons
# reparented to a PID 1 that reaps lazily (the CI init does) stay zombies for a while, and kill -0 succeeds
# on zombies.
_e2e_pid_alive() { pid_alive "$@"; }

# _e2e_pidfile_pid FILE COMM: print the PID in FILE if that process is alive and its comm is COMM.
_e2e_pidfile_pid() {
    local pid comm
    [ -r "$1" ] || return 1
    pid=
    read -r pid 2>/dev/null <"$1" || [ -n "$pid" ] || return 1   # libvirt writes pid files without a newline
    _e2e_pid_alive "$pid" || return 1
    IFS= read -r comm 2>/dev/null <"/proc/$pid/comm" || return 1
    [ "$comm" = "$2" ] || return 1
    echo "$pid"
}

# _e2e_wait_dead PID TENTHS: wait up to TENTHS/10 s for PID to go away.
_e2e_wait_dead() {
    local i=0
    while _e2e_pid_alive "$1"; do
        [ "$i" -ge "$2" ] && return 1
        sleep 0.1
        i=$((i + 1))
    done
    return 0
}

# _e2e_kill_pid PID WHAT: TERM, wait up to 10 s, then KILL and wait up to 5 s.
_e2e_kill_pid() {
    _e2e_pid_alive "$1" || return 0
    kill -TERM "$1" 2>/dev/null
    _e2e_wait_dead "$1" 100 && return 0
    _e2e_err "$2 (pid $1) ignored SIGTERM for 10 s, sending SIGKILL"
    kill -KILL "$1" 2>/dev/null
    _e2e_wait_dead "$1" 50 && return 0
    _e2e_err "$2 (pid $1) survived SIGKILL"
    return 1
}

# _e2e_live_pids COMM: PIDs (space-separated) of live, non-zombie processes named COMM.
_e2e_live_pids() {
    local p c out=
    for p in /proc/[0-9]*; do
        c=
        IFS= read -r c 2>/dev/null <"$p/comm"
        [ "$c" = "$1" ] || continue
        p=${p#/proc/}
        _e2e_pid_alive "$p" && out="$out${out:+ }$p"
    done
    echo "$out"
}

_e2e_log_tail() {
    if [ -s "$1" ]; then
        echo "---- last lines of $1 ----" >&2
        tail -n "${2:-25}" "$1" >&2
        echo "----" >&2
    fi
}

_e2e_valid_name() {
    case "${1:-}" in
    '' | -* | *[!A-Za-z0-9_.+-]*)
        _e2e_err "invalid domain name '${1:-}' (allowed: letters, digits, _ . + -)"
        return 1
        ;;
    esac
}

# e2e_qemu_pid NAME: print the PID of NAME's QEMU, from libvirt's pid file, checked against /proc.
e2e_qemu_pid() {
    local - name=${1:-} pid cmd ok=
    set +e +o pipefail
    _e2e_valid_name "$name" || return 1
    pid=
    read -r pid 2>/dev/null <"$E2E_QEMU_RUN_DIR/$name.pid"
    if [ -z "$pid" ]; then
        _e2e_err "no pid file $E2E_QEMU_RUN_DIR/$name.pid (is domain $name running?)"
        return 1
    fi
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")
    case "$cmd" in
    *"guest=$name,"* | *"guest=$name "*) _e2e_pid_alive "$pid" && ok=1 ;;
    esac
    if [ -z "$ok" ]; then
        _e2e_err "pid file of $name names pid '$pid', which is not its QEMU"
        return 1
    fi
    echo "$pid"
}

# _e2e_qemu_conf_apply FILE: make FILE carry our settings; idempotent. Active lines that set the same keys
# (also multi-line lists) are commented out with a marker so that _e2e_qemu_conf_undo can restore them.
_e2e_qemu_conf_apply() {
    local f=$1 tmp
    tmp=$(mktemp "$f.XXXXXX") || return 1
    {
        [ -f "$f" ] && _e2e_qemu_conf_strip_block <"$f" | awk -v c="$_E2E_CONF_COMMENT" '
            cont { print c $0; if ($0 ~ /\]/) cont = 0; next }
            /^[ \t]*(user|group|stdio_handler|cgroup_controllers)[ \t]*=/ {
                print c $0
                if ($0 ~ /\[/ && $0 !~ /\]/) cont = 1
                next
            }
            { print }'
        echo "$_E2E_CONF_MARK_BEGIN"
        echo 'user = "root"'
        echo 'group = "root"'
        echo 'stdio_handler = "file"'
        echo "cgroup_controllers = [ $E2E_CGROUP_CONTROLLERS ]"
        echo "$_E2E_CONF_MARK_END"
    } >"$tmp" && chmod 644 "$tmp" && mv -f "$tmp" "$f"
}

_e2e_qemu_conf_strip_block() {
    awk -v b="$_E2E_CONF_MARK_BEGIN" -v e="$_E2E_CONF_MARK_END" '
        $0 == b { skip = 1; next }
        $0 == e { skip = 0; next }
        !skip { print }'
}

# _e2e_qemu_conf_undo FILE: remove our block, restore the lines we commented, delete the file if empty.
_e2e_qemu_conf_undo() {
    local f=$1 tmp
    [ -f "$f" ] || return 0
    grep -qF -e "$_E2E_CONF_MARK_BEGIN" -e "$_E2E_CONF_COMMENT" "$f" || return 0
    tmp=$(mktemp "$f.XXXXXX") || return 1
    _e2e_qemu_conf_strip_block <"$f" | sed "s|^$_E2E_CONF_COMMENT||" >"$tmp" || { rm -f "$tmp"; return 1; }
    if [ -s "$tmp" ]; then
        chmod 644 "$tmp" && mv -f "$tmp" "$f"
    else
        rm -f "$tmp" "$f"
    fi
}

# _e2e_spawn_libvirtd DIR: start libvirtd -d with DIR's config, in the mode chosen by e2e_libvirt_start.
#
# It runs under a small perl reaper that is a child subreaper (PR_SET_CHILD_SUBREAPER): libvirtd and the
# QEMUs it double-forks are re-parented to it instead of to PID 1. The CI init reaps orphans only about once
# a second, and libvirt waits for a destroyed QEMU's PID to disappear (kill(pid, 0) succeeds on a zombie),
# so without the reaper every `virsh destroy` takes 1.2-2 s instead of ~0.1 s. The reaper exits by itself
# once all its children are gone. Set E2E_REAPER=0 to start libvirtd directly.
_e2e_spawn_libvirtd() {
    local dir=$1 mode rc st i
    local -a cmd
    mode=$(cat "$dir/conf-mode" 2>/dev/null) || mode=system
    if [ "$mode" = private ]; then
        # qemu.conf is always read from /etc/libvirt for a privileged daemon: give libvirtd (and the QEMUs
        # it forks) a private mount namespace in which our copy of /etc/libvirt is mounted there.
        # shellcheck disable=SC2016 # expanded by the inner sh
        cmd=(unshare -m --propagation private -- /bin/sh -c
            'mount --bind "$1" /etc/libvirt && exec libvirtd -d -f "$2" -p "$3"'
            sh "$dir/etc-libvirt" "$dir/libvirtd.conf" "$dir/libvirtd.pid")
    else
        cmd=(libvirtd -d -f "$dir/libvirtd.conf" -p "$dir/libvirtd.pid")
    fi
    st=$dir/spawn.status
    rm -f "$st"
    if [ "${E2E_REAPER:-1}" = 1 ] && command -v perl >/dev/null 2>&1; then
        local nr rpid
        case "$(uname -m)" in x86_64) nr=157 ;; aarch64) nr=167 ;; i?86) nr=172 ;; *) nr=-1 ;; esac
        # shellcheck disable=SC2016 # perl code
        setsid perl -e '
            my ($st, $nr, $pidf) = splice(@ARGV, 0, 3);
            my ($p, $f);
            open($p, ">>", $pidf) and print $p "$$\n" and close $p;
            syscall($nr, 36, 1, 0, 0, 0) if $nr > 0;   # prctl(PR_SET_CHILD_SUBREAPER, 1)
            my $pid = fork;
            defined $pid or die "fork: $!";
            if (!$pid) { exec { $ARGV[0] } @ARGV; exit 127; }
            waitpid($pid, 0);
            my $rc = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
            open($f, ">", "$st.tmp") and print $f "$rc\n" and close $f and rename("$st.tmp", $st);
            1 while waitpid(-1, 0) > 0;
        ' "$st" "$nr" "$dir/reaper.pids" "${cmd[@]}" </dev/null >/dev/null 2>"$dir/spawn.err" &
        rpid=$!
        for ((i = 0; i < 10 * E2E_LIBVIRT_START_TIMEOUT; i++)); do
            [ -e "$st" ] && break
            kill -0 "$rpid" 2>/dev/null || { sleep 0.1; break; }   # the reaper died without a status
            sleep 0.1
        done
        rc=$(cat "$st" 2>/dev/null) || rc="none (timed out)"
    else
        "${cmd[@]}" </dev/null >/dev/null 2>"$dir/spawn.err"
        rc=$?
    fi
    if [ "$rc" != 0 ]; then
        _e2e_err "libvirtd -d failed (exit $rc): $(cat "$dir/spawn.err" 2>/dev/null)"
        return 1
    fi
}

# _e2e_wait_libvirtd DIR: wait until libvirtd answers on the URI; fail early if it exits.
_e2e_wait_libvirtd() {
    local dir=$1 deadline pid=
    deadline=$((SECONDS + E2E_LIBVIRT_START_TIMEOUT))
    while :; do
        [ -n "$pid" ] || pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd) || pid=
        if [ -n "$pid" ] && E2E_VIRSH_TIMEOUT=$((E2E_LIBVIRT_START_TIMEOUT + 5)) e2e_virsh version >/dev/null 2>&1; then
            return 0
        fi
        if [ -n "$pid" ] && ! _e2e_pid_alive "$pid"; then
            _e2e_err "libvirtd (pid $pid) exited during start-up"
            _e2e_log_tail "$dir/libvirtd.log"
            return 1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            _e2e_err "libvirtd did not answer on $E2E_LIBVIRT_URI within ${E2E_LIBVIRT_START_TIMEOUT} s (pid ${pid:-none})"
            e2e_virsh version 2>&1 | sed 's/^/e2e:   virsh: /' >&2
            _e2e_log_tail "$dir/libvirtd.log"
            return 1
        fi
        sleep 0.2
    done
}

# _e2e_running_qemus: print the names of domains whose QEMU is alive according to libvirt's pid files.
_e2e_running_qemus() {
    local f name
    for f in "$E2E_QEMU_RUN_DIR"/*.pid; do
        [ -e "$f" ] || continue
        name=${f##*/}
        name=${name%.pid}
        e2e_qemu_pid "$name" >/dev/null 2>&1 && echo "$name"
    done
}

# _e2e_drop_ghosts: with libvirtd stopped, forget our domains libvirt's status files keep with no QEMU
# left. libvirt 9.0 keeps a start that its SIGKILL cut during QEMU's handshake as a domain paused "starting
# up", with a job it never ends (virsh destroy waits 30 s for it and fails), and every libvirtd started
# later loads it again from its status file.
_e2e_drop_ghosts() {
    local f name
    for f in "$E2E_QEMU_RUN_DIR"/*.xml; do
        [ -e "$f" ] || continue
        name=${f##*/}
        name=${name%.xml}
        _e2e_is_ours "$name" || continue
        e2e_qemu_pid "$name" >/dev/null 2>&1 && continue
        echo "e2e: forgetting $name, which libvirt keeps with no QEMU (a start cut short)" >&2
        rm -f "$f" "$E2E_QEMU_RUN_DIR/$name.pid"
    done
}

# _e2e_is_ours NAME: a domain this harness is responsible for (prefix, or recorded by e2e_domain_start).
_e2e_is_ours() {
    case "$1" in "$E2E_DOMAIN_PREFIX"*) return 0 ;; esac
    [ -n "$E2E_LIBVIRT_DIR" ] && [ -f "$E2E_LIBVIRT_DIR/domains" ] && grep -qxF -- "$1" "$E2E_LIBVIRT_DIR/domains"
}

_e2e_rmdir_cgroups() {
    local d
    # libvirt without systemd puts domains under a "machine" partition in every hierarchy it uses
    # (cgroup v1 controllers and the v2 "unified" mount here) and never removes the partition itself.
    while IFS= read -r d; do
        find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    done < <(find /sys/fs/cgroup -maxdepth 5 -type d -name machine -prune 2>/dev/null)
    return 0
}

# ------------------------------------------------------------------------------------------- hugepages

E2E_HP_SYS=/sys/devices/system/node/node0/hugepages/hugepages-2048kB
E2E_HP_WHY='' E2E_HP_OLD='' E2E_HP_MOUNTED=''

# e2e_hugepage_pool PAGES: a pool of exactly PAGES 2 MiB pages (node 0 of this one-node machine) and a
# hugetlbfs mount, for hugepage-backed guests; before e2e_libvirt_start (libvirtd sees hugetlbfs mounts only
# when it starts). Returns 1 with E2E_HP_WHY saying why not.
# shellcheck disable=SC2034 # E2E_HP_WHY is the callers'
e2e_hugepage_pool() {
    if [ ! -w /proc/sys/vm/nr_hugepages ] || [ ! -d "$E2E_HP_SYS" ]; then
        E2E_HP_WHY="no writable /proc/sys/vm/nr_hugepages or no 2 MiB pages on node 0"
        return 1
    fi
    if ! grep -q '^[^ ]* [^ ]* hugetlbfs ' /proc/mounts; then
        if ! { mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages 2>/dev/null; }; then
            E2E_HP_WHY="cannot mount hugetlbfs on /dev/hugepages"
            return 1
        fi
        E2E_HP_MOUNTED=/dev/hugepages
    fi
    E2E_HP_OLD=$(cat /proc/sys/vm/nr_hugepages)
    echo "$1" >/proc/sys/vm/nr_hugepages 2>/dev/null
    if [ "$(cat "$E2E_HP_SYS/free_hugepages")" -lt "$1" ]; then
        E2E_HP_WHY="the kernel gave $(cat "$E2E_HP_SYS/free_hugepages") of $1 free 2 MiB pages (memory too fragmented?)"
        return 1
    fi
}

# e2e_hugepage_pool_undo: the pool size and the hugetlbfs mount as they were before e2e_hugepage_pool.
e2e_hugepage_pool_undo() {
    [ -z "$E2E_HP_OLD" ] || echo "$E2E_HP_OLD" >/proc/sys/vm/nr_hugepages 2>/dev/null
    [ -z "$E2E_HP_MOUNTED" ] || { umount "$E2E_HP_MOUNTED" 2>/dev/null && rmdir "$E2E_HP_MOUNTED" 2>/dev/null; }
    E2E_HP_OLD='' E2E_HP_MOUNTED=''
}

# ------------------------------------------------------------------------------------------- daemons

# e2e_libvirt_start DIR: start virtlogd and libvirtd (state, logs and pid files in DIR) and wait until
# qemu:///system answers. DIR/libvirtd.log and DIR/virtlogd.log hold the daemons' warnings and errors.
e2e_libvirt_start() {
    local -
    set +e +o pipefail
    local dir mode pid b name
    dir=$(_e2e_dir_arg e2e_libvirt_start "${1:-}") || return 1
    if [ "$(id -u)" -ne 0 ]; then
        _e2e_err "e2e_libvirt_start: must run as root"
        return 1
    fi
    for b in libvirtd virtlogd virsh qemu-system-x86_64 unshare timeout; do
        if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
            _e2e_err "e2e_libvirt_start: '$b' not found; run .ci/install-e2e-deps.sh"
            return 1
        fi
    done
    case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac
    # libvirtd 9.0 resolves its compiled-in QEMU user before reading qemu.conf and fails without it.
    if ! getent passwd libvirt-qemu >/dev/null; then
        _e2e_err "e2e_libvirt_start: user libvirt-qemu missing (libvirtd refuses to start the QEMU driver); run .ci/install-e2e-deps.sh"
        return 1
    fi
    E2E_LIBVIRT_DIR=$dir

    if pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd) && e2e_virsh version >/dev/null 2>&1; then
        echo "e2e: libvirtd already running from $dir (pid $pid)" >&2
        return 0
    fi
    pid=$(_e2e_live_pids libvirtd)
    if [ -n "$pid" ] || E2E_VIRSH_TIMEOUT=5 e2e_virsh version >/dev/null 2>&1; then
        _e2e_err "e2e_libvirt_start: another libvirtd answers on $E2E_LIBVIRT_URI or runs (pids: ${pid:-?}); stop it first"
        return 1
    fi

    mkdir -p /var/log/libvirt/qemu /var/lib/libvirt/qemu /var/cache/libvirt/qemu /run/libvirt /etc/libvirt || return 1

    mode=$E2E_LIBVIRT_CONF_MODE
    if [ "$mode" = auto ]; then
        if unshare -m --propagation private -- /bin/sh -c 'mount --bind /etc/libvirt /etc/libvirt' 2>/dev/null; then
            mode=private
        else
            mode=system
        fi
    fi
    case "$mode" in
    private)
        rm -rf "$dir/etc-libvirt" && mkdir -p "$dir/etc-libvirt" && cp -a /etc/libvirt/. "$dir/etc-libvirt/" &&
            _e2e_qemu_conf_apply "$dir/etc-libvirt/qemu.conf" || return 1
        ;;
    system)
        # libvirtd also creates state directories under /etc/libvirt (nwfilter, secrets, ...): note what
        # exists so that e2e_libvirt_stop can remove the empty ones it added.
        [ -f "$dir/etc-before" ] || find /etc/libvirt -mindepth 1 -maxdepth 2 -type d >"$dir/etc-before"
        _e2e_qemu_conf_apply /etc/libvirt/qemu.conf || return 1
        ;;
    *)
        _e2e_err "E2E_LIBVIRT_CONF_MODE must be auto, private or system (got '$mode')"
        return 1
        ;;
    esac
    echo "$mode" >"$dir/conf-mode"
    printf 'log_outputs = "3:file:%s/libvirtd.log"\n' "$dir" >"$dir/libvirtd.conf"
    printf 'log_outputs = "3:file:%s/virtlogd.log"\n' "$dir" >"$dir/virtlogd.conf"
    : >>"$dir/domains"

    if ! pid=$(_e2e_pidfile_pid "$dir/virtlogd.pid" virtlogd); then
        if ! virtlogd -d -f "$dir/virtlogd.conf" -p "$dir/virtlogd.pid"; then
            _e2e_err "virtlogd -d failed"
            _e2e_log_tail "$dir/virtlogd.log"
            return 1
        fi
        if ! _e2e_pidfile_pid "$dir/virtlogd.pid" virtlogd >/dev/null; then
            _e2e_err "virtlogd did not stay up"
            _e2e_log_tail "$dir/virtlogd.log"
            return 1
        fi
    fi

    _e2e_drop_ghosts
    _e2e_spawn_libvirtd "$dir" || { _e2e_log_tail "$dir/libvirtd.log"; e2e_libvirt_stop "$dir" 2>/dev/null; return 1; }
    if ! _e2e_wait_libvirtd "$dir"; then
        e2e_libvirt_stop "$dir" 2>/dev/null
        return 1
    fi

    # QEMUs left over by an earlier, aborted run are re-adopted by the new libvirtd: get rid of ours.
    for name in $(e2e_virsh list --name 2>/dev/null); do
        case "$name" in "$E2E_DOMAIN_PREFIX"*)
            echo "e2e: destroying stale domain $name from an earlier run" >&2
            e2e_virsh destroy "$name" >/dev/null 2>&1
            ;;
        esac
    done
    return 0
}

# e2e_libvirt_stop DIR: destroy our domains, stop libvirtd and virtlogd by PID, remove empty cgroups.
# Best effort: goes on after errors, returns 1 if something could not be stopped.
e2e_libvirt_stop() {
    local -
    set +e +o pipefail
    local dir rc=0 pid name qpid
    dir=$(_e2e_dir_arg e2e_libvirt_stop "${1:-}") || return 1
    [ -n "$E2E_LIBVIRT_DIR" ] || E2E_LIBVIRT_DIR=$dir

    if pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd); then
        for name in $(E2E_VIRSH_TIMEOUT=10 e2e_virsh list --name 2>/dev/null); do
            _e2e_is_ours "$name" || continue
            e2e_qemu_pid "$name" >/dev/null 2>&1 || continue # no QEMU: dropped below
            E2E_VIRSH_TIMEOUT=20 e2e_virsh destroy "$name" >/dev/null 2>&1 ||
                _e2e_err "e2e_libvirt_stop: virsh destroy $name failed"
        done
        _e2e_kill_pid "$pid" libvirtd || rc=1
    fi
    # Without a libvirtd (killed, or destroy failed) our QEMUs would outlive the test: kill them by PID.
    for name in $(_e2e_running_qemus); do
        _e2e_is_ours "$name" || continue
        qpid=$(e2e_qemu_pid "$name" 2>/dev/null) || continue
        _e2e_err "e2e_libvirt_stop: killing orphaned QEMU of $name (pid $qpid)"
        _e2e_kill_pid "$qpid" "qemu ($name)" || rc=1
        rm -f "$E2E_QEMU_RUN_DIR/$name.pid" "$E2E_QEMU_RUN_DIR/$name.xml"
    done
    [ -n "$(_e2e_live_pids libvirtd)" ] || _e2e_drop_ghosts # no libvirtd at all, not only ours
    if pid=$(_e2e_pidfile_pid "$dir/virtlogd.pid" virtlogd); then
        _e2e_kill_pid "$pid" virtlogd || rc=1
    fi
    # The reapers exit once libvirtd and the QEMUs are gone; do not leave one behind if something survived.
    if [ -f "$dir/reaper.pids" ]; then
        while read -r pid; do
            { _e2e_pid_alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = perl ]; } || continue
            _e2e_wait_dead "$pid" 20 || _e2e_kill_pid "$pid" "reaper" || rc=1
        done <"$dir/reaper.pids"
        rm -f "$dir/reaper.pids"
    fi
    if [ "$(cat "$dir/conf-mode" 2>/dev/null)" = system ]; then
        _e2e_qemu_conf_undo /etc/libvirt/qemu.conf || rc=1
        if [ -f "$dir/etc-before" ]; then
            find /etc/libvirt -mindepth 1 -maxdepth 2 -depth -type d -empty 2>/dev/null | grep -vxF -f "$dir/etc-before" |
                while IFS= read -r d; do rmdir "$d" 2>/dev/null; done
            rm -f "$dir/etc-before"
        fi
    fi
    _e2e_rmdir_cgroups
    : >"$dir/domains" 2>/dev/null
    return "$rc"
}

# e2e_libvirt_kill9 DIR: SIGKILL libvirtd only; its QEMUs keep running.
e2e_libvirt_kill9() {
    local -
    set +e +o pipefail
    local dir pid
    dir=$(_e2e_dir_arg e2e_libvirt_kill9 "${1:-}") || return 1
    if ! pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd); then
        _e2e_err "e2e_libvirt_kill9: no libvirtd running from $dir"
        return 1
    fi
    kill -KILL "$pid" || return 1
    if ! _e2e_wait_dead "$pid" 50; then
        _e2e_err "e2e_libvirt_kill9: libvirtd (pid $pid) still alive 5 s after SIGKILL"
        return 1
    fi
}

# e2e_libvirt_drop_ghosts DIR: stop libvirtd, forget our domains it keeps with no QEMU (_e2e_drop_ghosts),
# start it again (e2e_libvirt_restart).
e2e_libvirt_drop_ghosts() {
    local -
    set +e +o pipefail
    local dir pid
    dir=$(_e2e_dir_arg e2e_libvirt_drop_ghosts "${1:-}") || return 1
    if pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd); then
        _e2e_kill_pid "$pid" libvirtd || return 1
    fi
    if [ -n "$(_e2e_live_pids libvirtd)" ]; then
        _e2e_err "e2e_libvirt_drop_ghosts: another libvirtd runs; not touching its status files"
        return 1
    fi
    _e2e_drop_ghosts
    e2e_libvirt_restart "$dir"
}

# e2e_domain_ghost DIR NAME: make NAME what libvirt 9.0 keeps of a start its SIGKILL cut during QEMU's
# handshake: libvirtd stopped, NAME's QEMU killed, its status file made a start's (paused "starting up",
# no QEMU pid, the start's job), libvirtd started again. libvirt then lists NAME as paused, says its control
# is "ok", and every call that needs its job waits 30 s and fails ("cannot acquire state change lock").
e2e_domain_ghost() {
    local -
    set +e +o pipefail
    local dir name=${2:-} pid qpid f
    dir=$(_e2e_dir_arg e2e_domain_ghost "${1:-}") || return 1
    _e2e_valid_name "$name" || return 1
    qpid=$(e2e_qemu_pid "$name") || return 1
    if pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd); then
        _e2e_kill_pid "$pid" libvirtd || return 1
    fi
    kill -KILL "$qpid" 2>/dev/null
    _e2e_wait_dead "$qpid" 50 || { _e2e_err "e2e_domain_ghost: QEMU of $name (pid $qpid) survived SIGKILL"; return 1; }
    f=$E2E_QEMU_RUN_DIR/$name.xml
    sed -i -e "s|^<domstatus state='[a-z]*' reason='[a-z ]*' pid='[0-9]*'>|<domstatus state='paused' reason='starting up' pid='0'>|" \
        -e "s|^  </qemuCaps>|&\n  <job type='none' async='start' flags='0x0' asyncStarted='0'/>|" "$f" || return 1
    if ! grep -q "^<domstatus state='paused' reason='starting up' pid='0'>" "$f" ||
        ! grep -q "^  <job type='none' async='start'" "$f"; then
        _e2e_err "e2e_domain_ghost: $f is not in the form expected (libvirt 9.0's status file)"
        return 1
    fi
    e2e_libvirt_restart "$dir"
}

# e2e_libvirt_restart DIR: start libvirtd again (stopping it with SIGTERM first if it still runs, which also
# leaves QEMU running), wait until it answers and until every running QEMU is re-adopted: listed as running
# (or paused) with its monitor free (virsh domcontrol "ok": the reconnect job is over).
e2e_libvirt_restart() {
    local -
    set +e +o pipefail
    local dir pid name state ctl deadline missing
    local -a expect=()
    dir=$(_e2e_dir_arg e2e_libvirt_restart "${1:-}") || return 1
    E2E_LIBVIRT_DIR=$dir
    if [ ! -f "$dir/libvirtd.conf" ]; then
        _e2e_err "e2e_libvirt_restart: $dir was not set up by e2e_libvirt_start"
        return 1
    fi
    if pid=$(_e2e_pidfile_pid "$dir/libvirtd.pid" libvirtd); then
        _e2e_kill_pid "$pid" libvirtd || return 1
    fi
    while IFS= read -r name; do expect+=("$name"); done < <(_e2e_running_qemus)

    _e2e_spawn_libvirtd "$dir" || { _e2e_log_tail "$dir/libvirtd.log"; return 1; }
    _e2e_wait_libvirtd "$dir" || return 1

    deadline=$((SECONDS + E2E_LIBVIRT_START_TIMEOUT))
    while :; do
        missing=
        for name in ${expect[@]+"${expect[@]}"}; do
            state=$(E2E_VIRSH_TIMEOUT=10 e2e_virsh domstate "$name" 2>/dev/null | head -n 1)
            ctl=$(E2E_VIRSH_TIMEOUT=10 e2e_virsh domcontrol "$name" 2>/dev/null | head -n 1)
            # a domain killed half-started (libvirtd died during its start) is not re-adopted: once its
            # QEMU is gone too, libvirt's answer is the right one
            if [ -z "$state" ] && ! e2e_qemu_pid "$name" >/dev/null 2>&1; then
                continue
            fi
            # a suspended domain comes back paused
            case "$state" in running | paused) [ "$ctl" = ok ] ;; *) false ;; esac ||
                missing="$missing $name(${state:-absent},${ctl:-?})"
        done
        [ -z "$missing" ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            _e2e_err "e2e_libvirt_restart: not re-adopted within ${E2E_LIBVIRT_START_TIMEOUT} s:$missing"
            e2e_virsh list --all >&2
            _e2e_log_tail "$dir/libvirtd.log"
            return 1
        fi
        sleep 0.2
    done
}

# ------------------------------------------------------------------------------------------- domains

# e2e_domain_start NAME VCPUS [SNIPPET]: create a transient domain from the template, SNIPPET (XML, no "|" or
# "&") before its <os>; returns once QEMU runs.
e2e_domain_start() {
    local -
    set +e +o pipefail
    local name=${1:-} vcpus=${2:-} snippet=${3:-} xml out log size
    _e2e_valid_name "$name" || return 1
    case "$vcpus" in '' | *[!0-9]* | 0)
        _e2e_err "e2e_domain_start: VCPUS must be a positive integer (got '$vcpus')"
        return 1
        ;;
    esac
    if [ ! -r "$E2E_DOMAIN_TEMPLATE" ]; then
        _e2e_err "e2e_domain_start: template $E2E_DOMAIN_TEMPLATE not readable"
        return 1
    fi
    xml=$(mktemp "${E2E_LIBVIRT_DIR:-${TMPDIR:-/tmp}}/$name.XXXXXX.xml") || return 1
    sed -e "s/@NAME@/$name/g" -e "s/@VCPUS@/$vcpus/g" -e "s|<os>|$snippet<os>|" "$E2E_DOMAIN_TEMPLATE" >"$xml"
    log=/var/log/libvirt/qemu/$name.log
    size=$(stat -c %s "$log" 2>/dev/null) || size=0
    if ! out=$(e2e_virsh create "$xml" 2>&1); then
        _e2e_err "e2e_domain_start: virsh create $name failed: $out"
        # QEMU's own complaint, if it got that far (only what this attempt appended to the log).
        if [ "$(stat -c %s "$log" 2>/dev/null || echo 0)" -gt "$size" ]; then
            echo "---- QEMU log $log (this attempt, last lines) ----" >&2
            tail -c +"$((size + 1))" "$log" | tail -n 8 >&2
            echo "----" >&2
        fi
        rm -f "$xml"
        return 1
    fi
    rm -f "$xml"
    if [ -n "$E2E_LIBVIRT_DIR" ] && ! grep -qxF -- "$name" "$E2E_LIBVIRT_DIR/domains" 2>/dev/null; then
        echo "$name" >>"$E2E_LIBVIRT_DIR/domains"
    fi
    e2e_qemu_pid "$name" >/dev/null
}

# e2e_domain_destroy NAME: virsh destroy (the domain is transient, so it is gone afterwards).
e2e_domain_destroy() {
    local -
    set +e +o pipefail
    local name=${1:-} out
    _e2e_valid_name "$name" || return 1
    if ! out=$(e2e_virsh destroy "$name" 2>&1); then
        _e2e_err "e2e_domain_destroy: virsh destroy $name failed: $out"
        return 1
    fi
    if [ -n "$E2E_LIBVIRT_DIR" ] && [ -f "$E2E_LIBVIRT_DIR/domains" ]; then
        grep -vxF -- "$name" "$E2E_LIBVIRT_DIR/domains" >"$E2E_LIBVIRT_DIR/domains.tmp"
        mv -f "$E2E_LIBVIRT_DIR/domains.tmp" "$E2E_LIBVIRT_DIR/domains"
    fi
    return 0
}

# ------------------------------------------------------------------------------------------- affinity

# e2e_proc_status FILE: a /proc status file, read in one go. `while read ... <FILE` reads a chunk and
# seeks back after each line, and /proc makes the text anew at every read: a busy thread's "State:" line
# ("S (sleeping)" / "R (running)") changes length between two reads, every later line is read shifted
# and its Cpus_allowed_list is lost. One read (bash's $(<FILE)) sees one consistent text.
e2e_proc_status() {
    local s
    { s=$(<"$1"); } 2>/dev/null || return 1
    printf '%s\n' "$s"
}

# e2e_vcpu_affinity NAME: one line per vCPU, "INDEX CPULIST", sorted by index. A vCPU's thread is the task
# of NAME's QEMU whose comm is "CPU <n>/TCG" (QEMU names threads because libvirt passes debug-threads=on;
# "/KVM" with hardware virtualisation); <n> is QEMU's cpu-index, which is libvirt's vCPU index.
e2e_vcpu_affinity() {
    local -
    set +e +o pipefail
    local name=${1:-} pid t comm line list n=0 idx
    local -a out=()
    pid=$(e2e_qemu_pid "$name") || return 1
    for t in /proc/"$pid"/task/*; do
        IFS= read -r comm 2>/dev/null <"$t/comm" || continue
        [[ $comm =~ ^CPU\ ([0-9]+)/[A-Z]+$ ]] || continue
        idx=${BASH_REMATCH[1]}
        list=
        while IFS= read -r line; do
            case "$line" in Cpus_allowed_list:*) list=${line#Cpus_allowed_list:} ;; esac
        done <<<"$(e2e_proc_status "$t/status")"
        list=${list//[[:space:]]/}
        [ -n "$list" ] || continue
        out+=("$idx $list")
        n=$((n + 1))
    done
    if [ "$n" -eq 0 ]; then
        _e2e_err "e2e_vcpu_affinity: no 'CPU n/...' threads in QEMU pid $pid of $name (threads: $(cat /proc/"$pid"/task/*/comm 2>/dev/null | sort -u | tr '\n' ',' ))"
        return 1
    fi
    printf '%s\n' "${out[@]}" | sort -n -k1,1
}

# e2e_emulator_affinity NAME: Cpus_allowed_list of QEMU's main thread (task id = pid).
e2e_emulator_affinity() {
    local -
    set +e +o pipefail
    local name=${1:-} pid line
    pid=$(e2e_qemu_pid "$name") || return 1
    while IFS= read -r line; do
        case "$line" in Cpus_allowed_list:*)
            line=${line#Cpus_allowed_list:}
            echo "${line//[[:space:]]/}"
            return 0
            ;;
        esac
    done <<<"$(e2e_proc_status "/proc/$pid/task/$pid/status")"
    _e2e_err "e2e_emulator_affinity: no Cpus_allowed_list for pid $pid"
    return 1
}

# e2e_iothread_affinity NAME ID: Cpus_allowed_list of the QEMU thread of I/O thread ID (comm "IO iothreadID";
# QEMU names its threads because libvirt passes debug-threads=on); "none" when no such thread runs.
e2e_iothread_affinity() {
    local pid t
    pid=$(e2e_qemu_pid "${1:-}") || return 1
    for t in /proc/"$pid"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = "IO iothread${2:-}" ] || continue
        awk '/^Cpus_allowed_list/ { print $2 }' "$t/status"
        return 0
    done
    echo none
}

# e2e_virsh_vcpupin NAME: libvirt's view, same format as e2e_vcpu_affinity ("INDEX CPULIST").
e2e_virsh_vcpupin() {
    local -
    set +e +o pipefail
    local out
    out=$(e2e_virsh vcpupin "${1:-}" --live 2>&1) || { _e2e_err "virsh vcpupin ${1:-}: $out"; return 1; }
    awk '$1 ~ /^[0-9]+$/ && NF == 2 { print $1, $2 }' <<<"$out"
}
