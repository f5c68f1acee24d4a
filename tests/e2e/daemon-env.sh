# shellcheck shell=bash
# placementd on a private D-Bus for the end-to-end scenarios (ledger.sh, lifecycle.sh, heal.sh,
# guest-shapes.sh), and the decision it records in a domain (also iothreads.sh, constraints.sh). A sourced
# library: it sets no shell options and runs nothing on load. Needs libvirt-env.sh (e2e_virsh, _e2e_pid_alive,
# _e2e_wait_dead) and tests/lib/tap.sh (bus_start, placementd_start) sourced, and dbus-daemon.
#
#   pd_env_init BUILD DIR            binaries from BUILD, state in DIR (bus socket, config, log)
#   pd_bus_start / pd_bus_stop       private dbus-daemon (our child), address in PD_ADDR
#   pd_start TOPOLOGY [CONF-LINES]   placementd --topology=TOPOLOGY, waits until it owns its name and is
#                                    connected to libvirt; CONF-LINES go into [Placement] (ReconcileSec=0 default)
#   pd_stop                          SIGTERM (SIGKILL after 10 s); exit status in PD_RC (placementd_stop)
#   pd_kill9                         SIGKILL, as a crash would
#   pd_alive                         the daemon process still runs
#   pdctl ARGS...                    placementctl on the private bus
#   pd_log_mark / pd_log_since MARK  the daemon's log from a mark on
#   pd_reap_strays                   stop a daemon on our bus whose PID was lost (cleanup)
# What placementd records in a domain's live metadata (needs only libvirt-env.sh; no pd_env_init):
#   pd_meta NAME                     the metadata, as `virsh metadata --live` prints it
#   pd_decision NAME                 its <decision ...> start tag (nothing when none is recorded)
#   pd_decided NAME                  a decision is recorded
#   pd_attr ATTR TAG                 the value of ATTR in the start tag TAG
#
# Public variables: PD_ADDR PD_LOG PD_PID PD_RC PD_CTL PD_BIN PD_DIR.
# shellcheck disable=SC2034 # PD_RC is read by the scripts that source this file

PD_DIR=
PD_ADDR=
PD_LOG=
PD_PID=
PD_RC=
PD_CTL=
PD_BIN=
PD_BUS_PID=

pd_env_init() {
    PD_BIN=$1/daemon/placementd
    PD_CTL=$1/tools/placementctl
    PLACEMENTD=$PD_BIN
    PD_DIR=$2
    PD_LOG=$PD_DIR/placementd.log
    PD_ADDR=unix:path=$PD_DIR/bus
    : >"$PD_LOG"
    [ -x "$PD_BIN" ] && [ -x "$PD_CTL" ]
}

pd_bus_start() {
    bus_start "$PD_DIR"
    local r=$?
    PD_BUS_PID=$BUS_PID
    return $r
}

pd_bus_stop() {
    stop_pid "$PD_BUS_PID"
    PD_BUS_PID=
}

pdctl() { timeout -k 2 20 "$PD_CTL" --bus-address="$PD_ADDR" "$@"; }
pd_alive() { [ -n "$PD_PID" ] && _e2e_pid_alive "$PD_PID"; }
pd_log_mark() { wc -l <"$PD_LOG"; }
pd_log_since() { tail -n +"$(($1 + 1))" "$PD_LOG"; }

# pd_start TOPOLOGY [LINE...]: the lines are added to the [Placement] section of a fresh config.
PD_TOPOLOGY=
pd_start() {
    local i mark
    PD_TOPOLOGY=$1
    shift
    {
        printf '[Placement]\n'
        [ "$#" -gt 0 ] && printf '%s\n' "$@"
        printf 'ReconcileSec=0\n\n[Libvirt]\nURI=%s\n' "$E2E_LIBVIRT_URI"
    } | awk -F= '!seen[$1]++' >"$PD_DIR/placementd.conf"
    mark=$(pd_log_mark)
    placementd_start --config="$PD_DIR/placementd.conf" --connect="$E2E_LIBVIRT_URI" --topology="$PD_TOPOLOGY" \
        --bus-address="$PD_ADDR" --log-level=debug
    for ((i = 0; i < 150; i++)); do
        pd_alive || return 1
        if pd_log_since "$mark" | grep -q "Connected to $E2E_LIBVIRT_URI" &&
            pdctl status >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

pd_stop() { placementd_stop; }

# pd_reload LINE...: the config rewritten with these [Placement] lines (as pd_start writes it), then SIGHUP;
# waits up to 10 s for the reload to be logged.
pd_reload() {
    local i mark
    {
        printf '[Placement]\n'
        [ "$#" -gt 0 ] && printf '%s\n' "$@"
        printf 'ReconcileSec=0\n\n[Libvirt]\nURI=%s\n' "$E2E_LIBVIRT_URI"
    } | awk -F= '!seen[$1]++' >"$PD_DIR/placementd.conf"
    mark=$(pd_log_mark)
    kill -HUP "$PD_PID" || return 1
    for ((i = 0; i < 100; i++)); do
        pd_log_since "$mark" | grep -qF "Configuration reloaded" && return 0
        sleep 0.1
    done
    return 1
}

pd_kill9() {
    [ -n "$PD_PID" ] || return 0
    kill -KILL "$PD_PID" 2>/dev/null
    wait "$PD_PID" 2>/dev/null
    PD_RC=$?
    PD_PID=
}

# pd_reap_strays: stop any placementd still serving our private bus (a daemon whose PID a caller lost, e.g.
# one started in a subshell). Identified by its command line naming PD_ADDR, stopped by PID. It matters: a
# stray would keep the descriptors it inherited, such as the lock that serializes the machine's libvirtd.
pd_reap_strays() {
    local p cmd
    [ -n "$PD_ADDR" ] || return 0
    for p in /proc/[0-9]*; do
        cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
        case "$cmd" in "$PD_BIN "*"--bus-address=$PD_ADDR "*)
            kill -TERM "${p#/proc/}" 2>/dev/null
            _e2e_wait_dead "${p#/proc/}" 50 || kill -KILL "${p#/proc/}" 2>/dev/null
            ;;
        esac
    done
    return 0
}

PD_NS=https://placementd.org/xmlns/domain/1
pd_meta() { e2e_virsh metadata "$1" --uri "$PD_NS" --live 2>/dev/null; }
pd_decision() { grep -oE "<([A-Za-z0-9_]+:)?decision[[:space:]][^>]*>" <<<"$(pd_meta "$1")" | head -n 1; }
pd_decided() { [ -n "$(pd_decision "$1")" ]; }
pd_attr() { sed -nE "s/.*[[:space:]]$1=[\"']([^\"']*)[\"'].*/\1/p" <<<"$2"; }
