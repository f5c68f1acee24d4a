#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps and the operation table
# shellcheck source-path=SCRIPTDIR
# Seeded randomized lifecycle test on a real libvirtd + QEMU (TCG): random operations on a few small domains
# (define/start/create/destroy/undefine/save/restore/managedsave/suspend/resume/setvcpus/hand pins/replace/
# rebalance/a reload toggling ReservedCPUs=0/placementd restart/libvirtd restart), and after every step the four views agree (views.sh) and no
# new placement holds a core another domain holds while a core is free (policy explicit). Run as root:
#   SEED=1234 STEPS=40 bash tests/e2e/lifecycle.sh [BUILD_DIR]
# SEED (default: random) is printed first and with every failure; the same seed replays the same choices as
# long as libvirt answers the same way. The run stops at the first step whose views disagree (the state is
# then not worth exploring further) unless LIFECYCLE_KEEP_GOING=1.
# LIFECYCLE_TODO_OPS: operations today's daemon gets wrong; they are not chosen while listed (CI). Set it to
# "" to run every operation (the soak; see docs/reliability.md). LIFECYCLE_TOPOLOGY (default host).
# LIFECYCLE_SHAPES=1 gives the domains real guests' shapes, chosen by the seed (choose_shapes: I/O threads,
# <iothreadpin>, <emulatorpin>, <vcpu cpuset>, <vcpupin>, guest cells, <numatune>, hugepages) and adds
# hand pins of I/O threads and of the emulator; a domain its <vcpupin> opts out from its start must never
# carry a record.
# Last line: "lifecycle: N passed, M failed (seed S)".
set -u

# Operations excluded until the daemon handles them (docs/reliability.md): none today. "overcommit" is not
# an operation: listed, no start makes the vCPUs outnumber the cores.
LIFECYCLE_TODO_OPS=${LIFECYCLE_TODO_OPS-""}
SEED=${SEED:-$(((RANDOM << 15) | RANDOM))}
STEPS=${STEPS:-40}
TOPOLOGY=${LIFECYCLE_TOPOLOGY:-host}
MAX_RUNNING=${LIFECYCLE_MAX_RUNNING:-3}
# libvirt sends no event for a vCPU hot-add (setvcpus): the daemon catches it at its next reconcile, so the
# walk runs it with a 1 s period (the views are polled for up to 10 s after every step).
PD_CONF=(ReconcileSec=1)

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=views.sh
. "$HERE/views.sh"
# shellcheck source=domains.sh
. "$HERE/domains.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

echo "# lifecycle: SEED=$SEED STEPS=$STEPS topology $TOPOLOGY"
echo "# LIFECYCLE_TODO_OPS=\"$LIFECYCLE_TODO_OPS\""
RANDOM=$SEED

tap_build "${1:-}"

tap_begin lifecycle
tap_tmpdir lifecycle "${E2E_KEEP:-}"
TAP_KEEP_FAILED=1
TAP_SUFFIX=" (seed $SEED)"
WORK=$TAP_TMP
P=${E2E_DOMAIN_PREFIX}lc
NAMES=("${P}0" "${P}1" "${P}2" "${P}3")
# The shapes: 1 vCPU; 1 of 2 (hot-add); 2 vCPUs; 1 of 2.
declare -A SHAPE=([${P}0]="1 1" [${P}1]="1 2" [${P}2]="2 2" [${P}3]="1 2")
# LIFECYCLE_SHAPES=1: each domain also gets a real guest's shape, chosen by the seed (choose_shapes)
LIFECYCLE_SHAPES=${LIFECYCLE_SHAPES:-0}
declare -A EXTRA=() CPUSET=() SHAPE_SAYS=()
HP_PAGES=128 # 256 MiB of 2 MiB pages: three 64 MiB hugepage guests and a spare
HP_POOL=0 # 1: the pool is set up
FAILED_AT=

tap_cleanup() {
    pd_stop
    pd_reap_strays
    dom_cleanup 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    pd_bus_stop
    e2e_hugepage_pool_undo
    [ -z "$FAILED_AT" ] || echo "# FAILED: SEED=$SEED $FAILED_AT"
}

# ------------------------------------------------------------------------------------------- state

# state NAME: absent | running | paused | shutoff (persistent, not running) | saved (a save file, not running)
state() {
    local s
    if [ -f "$WORK/$1.save" ]; then
        s=$(e2e_virsh domstate "$1" 2>/dev/null) || s=
        case "$s" in running | paused) echo "$s" ;; *) echo saved ;; esac
        return
    fi
    s=$(e2e_virsh domstate "$1" 2>/dev/null) || { echo absent; return; }
    case "$s" in
    running) echo running ;;
    paused) echo paused ;;
    "shut off") echo shutoff ;;
    *) echo "other:$s" ;;
    esac
}
persistent() { e2e_virsh dominfo "$1" 2>/dev/null | grep -qE '^Persistent:[[:space:]]+yes'; }
n_running() { e2e_virsh list --name 2>/dev/null | grep -c .; }
online_vcpus() { e2e_vcpu_affinity "$1" 2>/dev/null | grep -c .; }

# a CPU of a core no vCPU thread is confined to (the kernel's view), else any CPU: an operator pins by hand
# where there is room
free_cpu() {
    local c d x i v m held=''
    for d in $(e2e_virsh list --name 2>/dev/null); do
        while read -r x i v m; do
            [ "$x" = vcpu ] && [[ $v != *,* ]] && held="$held ${VIEWS_CORE_OF[$v]-}"
        done < <(_views_kernel "$d")
    done
    for ((c = 0; c < VIEWS_NCORES; c++)); do
        case " $held " in *" $c "*) ;; *) echo "${VIEWS_CORE_PUS[c]%% *}"; return ;; esac
    done
    echo "${VIEWS_CORE_PUS[RANDOM % VIEWS_NCORES]%% *}"
}

# ------------------------------------------------------------------------------------------- operations

vcpu_of() {
    local cur max attrs=''
    read -r cur max <<<"${SHAPE[$1]}"
    [ -z "${CPUSET[$1]-}" ] || attrs+=" cpuset='${CPUSET[$1]}'"
    [ "$cur" = "$max" ] || attrs+=" current='$cur'"
    echo "<vcpu placement='static'$attrs>$max</vcpu>"
}

# ------------------------------------------------------------------------------------------- shapes

# choose_shapes: for each domain, by the seed, what a real guest's definition carries (docs/running.md,
# "The domain's own constraints", "Opting out"): I/O threads (one of them pinned by <iothreadpin> or not),
# an <emulatorpin>, a <vcpu cpuset>, a <vcpupin> (opted out: skipped), guest NUMA cells, a strict or
# preferred <numatune><memory> on node 0, hugepages (on this host's own topology, with a pool). Domains
# whose cpuset confines their vCPUs to one CPU may be forced onto a held core (VIEWS_CONSTRAINED).
choose_shapes() {
    local d cur max last cputune extra r
    last=$(views_cpuset_norm "$(cat /sys/devices/system/cpu/online)")
    last=${last##*,}
    for d in "${NAMES[@]}"; do
        read -r cur max <<<"${SHAPE[$d]}"
        cputune='' extra='' SHAPE_SAYS[$d]=''
        r=$((RANDOM % 4))
        if [ "$r" -ge 2 ]; then
            extra+="<iothreads>2</iothreads>"
            SHAPE_SAYS[$d]+=" iothreads"
            if [ "$r" = 3 ]; then
                cputune+="<iothreadpin iothread='1' cpuset='$last'/>"
                SHAPE_SAYS[$d]+=" iothreadpin"
            fi
        fi
        if [ $((RANDOM % 4)) = 0 ]; then
            cputune+="<emulatorpin cpuset='0'/>"
            SHAPE_SAYS[$d]+=" emulatorpin"
        fi
        if [ $((RANDOM % 5)) = 0 ]; then
            CPUSET[$d]=$last
            VIEWS_CONSTRAINED+=" $d"
            SHAPE_SAYS[$d]+=" cpuset"
        fi
        if [ $((RANDOM % 8)) = 0 ]; then
            cputune+="<vcpupin vcpu='0' cpuset='0'/>"
            SHAPE_SAYS[$d]+=" vcpupin"
        fi
        [ -z "$cputune" ] || extra+="<cputune>$cputune</cputune>"
        if [ $((RANDOM % 4)) = 0 ]; then
            if [ "$max" = 1 ]; then
                extra+="<cpu><numa><cell id='0' cpus='0' memory='64' unit='MiB'/></numa></cpu>"
            else
                extra+="<cpu><numa><cell id='0' cpus='0' memory='32' unit='MiB'/><cell id='1' cpus='1' memory='32' unit='MiB'/></numa></cpu>"
            fi
            SHAPE_SAYS[$d]+=" cells"
        fi
        case $((RANDOM % 6)) in
        0) extra+="<numatune><memory mode='strict' nodeset='0'/></numatune>" SHAPE_SAYS[$d]+=" strict" ;;
        1) extra+="<numatune><memory mode='preferred' nodeset='0'/></numatune>" SHAPE_SAYS[$d]+=" preferred" ;;
        esac
        if [ $((RANDOM % 4)) = 0 ] && [ "$HP_POOL" = 1 ]; then
            extra+="<memoryBacking><hugepages/></memoryBacking>"
            SHAPE_SAYS[$d]+=" hugepages"
        fi
        EXTRA[$d]=$extra
        echo "# shape $d: ${SHAPE[$d]} vCPUs${SHAPE_SAYS[$d]:- plain}${CPUSET[$d]:+ (cpuset $last)}"
    done
}

# hugepages_agree: placementctl map's free part of the 2 MiB pool is the kernel's free_hugepages (QEMU
# allocates a hugepage guest's pages when it starts), as guest-shapes.sh checks for one guest; silent when
# they agree or no pool was set up here
hugepages_agree() {
    local want got
    [ "$HP_POOL" = 1 ] || return 0
    want="hugepages 2.0 MiB: $(($(cat "$E2E_HP_SYS/free_hugepages") * 2)).0 MiB free of $((HP_PAGES * 2)).0 MiB"
    got=$(pdctl map 2>/dev/null | sed -n 's/^ *\(hugepages 2.0 MiB: .*\)$/\1/p' | head -n 1)
    [ "$got" = "$want" ] || echo "hugepages: placementctl map says '$got', the kernel '$want'"
}
# hugepages_settle: hugepages_agree polled for up to 5 s (QEMU frees a stopped guest's pages as it exits)
hugepages_settle() {
    local i out
    for ((i = 0; i < 10; i++)); do
        out=$(hugepages_agree)
        [ -n "$out" ] || return 0
        sleep 0.5
    done
    echo "$out"
    return 1
}

# opted_out_unrecorded: a domain whose definition pins its vCPU 0 (<vcpupin>) is its user's from its start:
# placementd writes no record into it, whatever is pinned by hand or restarted (docs/running.md, "Opting
# out"); silent when none has one
opted_out_unrecorded() {
    local d meta
    for d in "${NAMES[@]}"; do
        [[ "${SHAPE_SAYS[$d]-}" == *" vcpupin"* ]] || continue
        meta=$(e2e_virsh metadata "$d" "$VIEWS_NS" --live 2>/dev/null) || continue
        [ -z "$meta" ] || echo "$d: opted out by its definition, yet a record: $(tr -d '\n' <<<"$meta" | head -c 160)"
    done
}

op_define() { dom_define "$1" "$(vcpu_of "$1")" "${EXTRA[$1]-}"; }
op_undefine() { hand_forget "$1"; e2e_virsh undefine "$1" --managed-save; }
op_create() { hand_forget "$1"; dom_create "$1" "$(vcpu_of "$1")" "${EXTRA[$1]-}"; }
op_start() {
    e2e_virsh dominfo "$1" 2>/dev/null | grep -qE '^Managed save:[[:space:]]+yes' || hand_forget "$1"
    e2e_virsh start "$1"
}
op_destroy() { hand_forget "$1"; e2e_virsh destroy "$1"; }
op_save() { e2e_virsh save "$1" "$WORK/$1.save"; }
op_restore() { e2e_virsh restore "$WORK/$1.save" && rm -f "$WORK/$1.save"; }
op_managedsave() { e2e_virsh managedsave "$1"; }
op_suspend() { e2e_virsh suspend "$1"; }
op_resume() { e2e_virsh resume "$1"; }
op_setvcpus() { e2e_virsh setvcpus "$1" "$(awk '{ print $2 }' <<<"${SHAPE[$1]}")" --live; }
op_handpin() { e2e_virsh vcpupin "$1" 0 "$(free_cpu)" --live; }
# an I/O thread pinned by hand: the user's from then on, left where they put it (docs/running.md)
# (a pin onto the CPU it runs on already changes nothing, and is no one's in particular: not listed)
op_iohandpin() {
    local n=$((RANDOM % 2 + 1)) cpu=${VIEWS_CORE_PUS[RANDOM % VIEWS_NCORES]%% *} was
    was=$(e2e_virsh iothreadinfo "$1" --live 2>/dev/null | awk -v n="$n" '$1 == n { print $2 }')
    e2e_virsh iothreadpin "$1" "$n" "$cpu" --live || return 1
    [ "$(views_cpuset_norm "$was")" = "$cpu" ] || VIEWS_HAND_IOTHREAD+=" $1:$n:$cpu"
}
# the emulator pinned by hand: the user's from then on, left there (docs/running.md); not listed when the
# pin is the emulator's own already (placementd's, which it then still takes for its own)
op_emuhandpin() {
    local cpu=${VIEWS_CORE_PUS[RANDOM % VIEWS_NCORES]%% *} was
    was=$(e2e_virsh emulatorpin "$1" --live 2>/dev/null | awk '$1 == "*:" { print $2 }')
    e2e_virsh emulatorpin "$1" "$cpu" --live || return 1
    [ "$(views_cpuset_norm "$was")" = "$cpu" ] || VIEWS_HAND_EMULATOR+=" $1:$cpu"
}
# hand_forget NAME: NAME runs afresh from its definition (or not at all): no hand pin of its I/O threads or
# emulator (a save image, a managed save, keeps them: restore and start from a managed save bring them back)
hand_forget() {
    local x keep=''
    for x in $VIEWS_HAND_IOTHREAD; do [ "${x%%:*}" = "$1" ] || keep+=" $x"; done
    VIEWS_HAND_IOTHREAD=$keep
    keep=''
    for x in $VIEWS_HAND_EMULATOR; do [ "${x%%:*}" = "$1" ] || keep+=" $x"; done
    VIEWS_HAND_EMULATOR=$keep
}
op_replace() { pdctl replace "$1"; }
op_rebalance() { pdctl rebalance; }
op_pdrestart() { pd_stop && pd_start "$TOPOLOGY" "${PD_CONF[@]}"; }
# ReservedCPUs= toggled between none and CPU 0 by a reload: the domains placementd put on CPU 0 are placed
# again off it, all of them before their emulators are chosen again (a restart keeps the setting)
op_reserve() {
    if [ -z "$VIEWS_RESERVED" ]; then
        PD_CONF=(ReconcileSec=1 ReservedCPUs=0)
        VIEWS_RESERVED=0
    else
        PD_CONF=(ReconcileSec=1)
        VIEWS_RESERVED=
    fi
    pd_reload "${PD_CONF[@]}"
}
op_lvrestart() {
    local mark
    mark=$(pd_log_mark)
    e2e_libvirt_kill9 "$WORK" && e2e_libvirt_restart "$WORK" || return 1
    # placementd reconnects by itself (backoff 1, 2, 4 s)
    for ((i = 0; i < 300; i++)); do
        pd_log_since "$mark" | grep -q "Connected to $E2E_LIBVIRT_URI" && return 0
        sleep 0.1
    done
    echo "placementd did not reconnect within 30 s"
    return 1
}

allowed() { case " $LIFECYCLE_TODO_OPS " in *" $1 "*) return 1 ;; esac; }

# room NAME: another domain may start: fewer than MAX_RUNNING run and, unless overcommit is allowed, the
# vCPUs (maximum counts) of the running ones and NAME's fit in the cores.
room() {
    local d vcpus
    [ "$(n_running)" -lt "$MAX_RUNNING" ] || return 1
    allowed overcommit && return 0
    vcpus=$(awk '{ print $2 }' <<<"${SHAPE[$1]}")
    for d in $(e2e_virsh list --name 2>/dev/null); do
        [ -n "${SHAPE[$d]:-}" ] && vcpus=$((vcpus + $(awk '{ print $2 }' <<<"${SHAPE[$d]}")))
    done
    [ "$vcpus" -le "$VIEWS_NCORES" ]
}

# candidates: "OP [NAME]" lines for the current state, in a fixed order (the seed picks among them).
candidates() {
    local d s
    for d in "${NAMES[@]}"; do
        s=$(state "$d")
        case "$s" in
        absent)
            room "$d" && echo "create $d"
            echo "define $d"
            ;;
        shutoff)
            room "$d" && echo "start $d"
            echo "undefine $d"
            ;;
        saved) room "$d" && echo "restore $d" ;;
        running | paused)
            echo "destroy $d"
            echo "save $d"
            persistent "$d" && echo "managedsave $d"
            echo "handpin $d"
            [[ ${EXTRA[$d]-} != *"<iothreads>"* ]] || echo "iohandpin $d"
            [ "$LIFECYCLE_SHAPES" != 1 ] || [[ ${EXTRA[$d]-} == *"<emulatorpin"* ]] || echo "emuhandpin $d"
            if [ "$s" = running ]; then
                echo "suspend $d"
                echo "replace $d"
                [ "$(online_vcpus "$d")" -lt "$(awk '{ print $2 }' <<<"${SHAPE[$d]}")" ] && echo "setvcpus $d"
            else
                echo "resume $d"
            fi
            ;;
        esac
    done
    echo rebalance
    echo reserve
    echo pdrestart
    echo lvrestart
}

# ------------------------------------------------------------------------------------------- main

must "placementd and placementctl are built in $BUILD" test -x "$BUILD/daemon/placementd" -a -x "$BUILD/tools/placementctl"
must "pd_env_init" pd_env_init "$BUILD" "$WORK"
must "private dbus-daemon" pd_bus_start
# a 2 MiB pool for hugepage-backed guests, before libvirtd starts
if [ "$LIFECYCLE_SHAPES" = 1 ] && [ "$TOPOLOGY" = host ]; then
    if e2e_hugepage_pool "$HP_PAGES"; then HP_POOL=1; else diag "no hugepage-backed guests: $E2E_HP_WHY"; fi
fi
must "e2e_libvirt_start: libvirtd + virtlogd answer on $E2E_LIBVIRT_URI" e2e_libvirt_start "$WORK"
must "views_init $TOPOLOGY" views_init "$TOPOLOGY"
[ "$LIFECYCLE_SHAPES" != 1 ] || choose_shapes
must "placementd starts (topology $TOPOLOGY)" pd_start "$TOPOLOGY" "${PD_CONF[@]}"

for ((step = 1; step <= STEPS; step++)); do
    mapfile -t cands < <(candidates | while read -r op d; do allowed "$op" && echo "$op${d:+ $d}"; done)
    pick=${cands[RANDOM % ${#cands[@]}]}
    read -r op d <<<"$pick"
    t=$(date +%s%N)
    if ! "op_$op" ${d:+"$d"} >"$WORK/op.out" 2>&1; then   # not in a subshell: pdrestart sets PD_PID
        # libvirt may refuse (e.g. a save of a just-paused domain): that is not the daemon's failure
        diag "step $step: $pick: refused: $(tr '\n' ' ' <"$WORK/op.out" | head -c 200)"
    fi
    if ! pd_alive; then
        not_ok "step $step: $pick: placementd still runs"
        FAILED_AT="step $step ($pick): placementd died: $(grep -E '^<[0-3]>' "$PD_LOG" | tail -n 2 | tr '\n' ' ')"
        diag "$FAILED_AT"
        break
    fi
    # The sharing invariant is what placementd promises today: a NEW placement never shares a core while one
    # is free. It does not heal sharing a release leaves behind (destroy the domain that had a core to itself:
    # the two on the other core stay), so after a step only the domain it placed counts; after a rebalance
    # and a placementd restart (whose adoption refuses a record that shares a core a domain adopted before it
    # holds while a core is free) every domain does. Two records adopted in one pass that claim one core both
    # stand, with a warning (ledger scenario 11); the walk never makes them: it saves and restores only while
    # placementd runs. Sharing with a hand-pinned domain is the user's doing (views.sh).
    case "$op" in
    create | start | restore | setvcpus | replace) VIEWS_SHARING_ONLY=$d ;;
    rebalance | pdrestart) VIEWS_SHARING_ONLY= ;;
    *) VIEWS_SHARING_ONLY=- ;;
    esac
    hp=
    if views=$(views_settle 100) && hp=$(hugepages_settle) && hp=$(opted_out_unrecorded) && [ -z "$hp" ]; then
        ok "step $step: $pick ($((($(date +%s%N) - t) / 1000000)) ms)"
        [ -z "$views" ] || diag "$views"
    else
        views+=${hp:+$'\n'$hp}
        not_ok "step $step: $pick: the four views agree, no avoidable sharing (SEED=$SEED)"
        diag "$views"
        FAILED_AT="step $step ($pick): $(grep -v '^note: ' <<<"$views" | tr '\n' ';')"
        [ "${LIFECYCLE_KEEP_GOING:-0}" = 1 ] || break
    fi
done
exit 0
