#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# Healing and measured load on a real libvirtd + QEMU (TCG), with guests that really burn CPU: Debian's cloud
# kernel booting a busybox initramfs whose init spins, next to an idle one (no OS: the firmware halts). The
# fake topology's two nodes of one core each are the machine's CPUs 0 and 1, so the pins are real; the
# kernel's view is read in /proc (Cpus_allowed_list of each "CPU n/TCG" thread). Memory is left unbound
# (MemoryBinding=no) so that healing may move a guest to the other node; step 5 binds it. Run as root:
#   flock /tmp/placementd-e2e.lock bash tests/e2e/heal.sh [BUILD_DIR]
# The story, about a minute:
#   1. busy-1 and idle start: each gets a core of its own;
#   2. once their load is measured (after their start-up, set aside for LoadWarmup=, 5 s: idle's
#      host-side threads read calm too), busy-2 starts with no core free: it goes to idle's node and core, not busy-1's
#      (measured load decides where cores are short: no core runs nothing busy, so the set whose least
#      busy core runs least);
#   3. busy-3 starts: the host is full, it shares a busy guest's core (they contend), and stays there while
#      it starts (its start-up is not read as its load);
#   4. a burst of departures (idle, and the busy guest busy-3 does not share with) frees a core: without any
#      request, healing moves one of the two contending guests there; the two busy guests left end on cores
#      of their own, and the log says heal did it;
#   4b. a busy guest is paused for a few seconds: its load is held as it was, not read as idle;
#   5. busy-4 starts while placementd is stopped, which restarts with MemoryBinding=yes and places it
#      before any load is measured: beside the busy guest on node 0 (the only node this machine can bind
#      memory to), its memory bound there (strict, which libvirt will not change on a running domain);
#      when the other busy guest leaves, healing re-pins busy-4 to the freed core on node 1 and leaves the
#      binding as it is (the nearest node with a calm core; placementd's own binding);
#   6. a restart adopts that decision (a vCPU away from its memory) as it stands and moves nothing.
# Exits 77 (skip) when the guest kernel or busybox is missing (.ci/install-e2e-deps.sh provides them) or when
# this is not root. Last line: "heal: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=daemon-env.sh
. "$HERE/daemon-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

tap_build "${1:-}"
KERNEL=${HEAL_GUEST_KERNEL:-/var/cache/placementd-e2e/vmlinuz}
BUSYBOX=${HEAL_BUSYBOX:-/bin/busybox}
TOPO="synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1" # node 0 = CPU 0, node 1 = CPU 1
P=${E2E_DOMAIN_PREFIX}heal-
WAIT_LOAD=${HEAL_WAIT_LOAD:-60} # seconds for a kernel guest to show as busy (TCG on a shared machine)

need_root "a real libvirtd"
if [ ! -s "$KERNEL" ] || ! "$BUSYBOX" true 2>/dev/null; then
    tap_skip "no guest kernel at $KERNEL or no static busybox at $BUSYBOX (.ci/install-e2e-deps.sh)"
fi

tap_begin heal
tap_tmpdir heal "${E2E_KEEP:-}"
TAP_KEEP_FAILED=1
WORK=$TAP_TMP

tap_cleanup() {
    pd_stop
    pd_reap_strays 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    pd_bus_stop
}

# The busy guests' initramfs: busybox and an init that spins for ever.
make_busy_guest() {
    local root=$WORK/initramfs
    mkdir -p "$root/bin" "$root/proc" "$root/dev" || return 1
    cp "$BUSYBOX" "$root/bin/busybox" || return 1
    printf '#!/bin/busybox sh\n# burn the CPU: this guest is busy\nwhile :; do :; done\n' >"$root/init"
    chmod 755 "$root/init"
    (cd "$root" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) >"$WORK/busy.cpio" || return 1
    sed -e "s|<type arch='x86_64'>hvm</type>|<type arch='x86_64'>hvm</type><kernel>$KERNEL</kernel><initrd>$WORK/busy.cpio</initrd><cmdline>console=ttyS0 quiet panic=-1</cmdline>|" \
        -e "s|<memory unit='MiB'>64</memory>|<memory unit='MiB'>256</memory>|" \
        -e "s|<currentMemory unit='MiB'>64</currentMemory>|<currentMemory unit='MiB'>256</currentMemory>|" \
        "$HERE/domain.xml.in" >"$WORK/busy.xml.in"
    grep -q '<kernel>' "$WORK/busy.xml.in"
}

start_busy() { E2E_DOMAIN_TEMPLATE=$WORK/busy.xml.in e2e_domain_start "$1" 1; }

# cpu_of NAME: the CPUs the kernel lets the domain's only vCPU thread run on.
cpu_of() { e2e_vcpu_affinity "$1" | awk '$1 == 0 {print $2}'; }

# busy_vcpus NAME: what `placementctl show` says of its measured load ("" while not measured).
busy_vcpus() { pdctl show "$1" 2>/dev/null | sed -n 's/^  load: *\([0-9]*\) busy vCPU.*/\1/p'; }
load_line() { pdctl show "$1" 2>/dev/null | grep '^  load:'; }

# wait_load NAME WANT: poll until the domain's measured busy vCPUs are WANT.
wait_load() {
    local i
    for ((i = 0; i < WAIT_LOAD * 2; i++)); do
        [ "$(busy_vcpus "$1")" = "$2" ] && return 0
        sleep 0.5
    done
    return 1
}

# host_cores NAME: its measured host-side threads in cores ("" while not measured).
host_cores() { load_line "$1" | sed -n 's/.*host-side threads \([0-9.]*\) cores.*/\1/p'; }

# wait_calm NAME: poll until the domain's host-side threads are measured under half a core (QEMU's own
# start-up work would count there if it were not set aside).
wait_calm() {
    local i h
    for ((i = 0; i < WAIT_LOAD * 2; i++)); do
        h=$(host_cores "$1")
        [ -n "$h" ] && awk -v h="$h" 'BEGIN { exit !(h < 0.5) }' && return 0
        sleep 0.5
    done
    return 1
}

# wait_known NAME: poll until placementd knows the domain.
wait_known() {
    local i
    for ((i = 0; i < 100; i++)); do
        pdctl show "$1" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

# wait_healed MARK: poll up to 10 s for a busy guest healed without a request in the log since MARK; sets
# healed to its name ("" when none) and logs heal's lines as diagnostics.
wait_healed() {
    local i
    healed=
    for ((i = 0; i < 100; i++)); do
        healed=$(pd_log_since "$1" | sed -n "s/^.*\(${P}busy-[0-9]\): healed without a request.*/\1/p" | head -1)
        [ -n "$healed" ] && break
        sleep 0.1
    done
    diag "$(pd_log_since "$1" | grep -E 'healed|Heal pass|free again' | sed 's/^/log: /')"
}

result_of() { pdctl show "$1" 2>/dev/null | sed -n 's/^  result: *\([a-z]*\).*/\1/p'; }

# ------------------------------------------------------------------------------------------------ the run

check "the busy guests' initramfs and domain template" make_busy_guest
if ! e2e_libvirt_start "$WORK" >"$WORK/start.out" 2>&1; then
    not_ok "libvirtd starts"
    diag "$(cat "$WORK/start.out")"
    exit 1
fi
ok "libvirtd starts"
if ! pd_env_init "$BUILD" "$WORK" || ! pd_bus_start; then
    not_ok "private bus"
    exit 1
fi
# memory left unbound (MemoryBinding=no) so that healing may move a guest to the other node
if ! pd_start "$TOPO" HealInterval=1 LoadInterval=1 MemoryBinding=no; then
    not_ok "placementd starts on $TOPO"
    exit 1
fi
ok "placementd starts on $TOPO (HealInterval=1, LoadInterval=1, MemoryBinding=no)"

# 1. a busy guest and an idle one, a core each
check "${P}busy-1 (kernel, spinning) starts" start_busy "${P}busy-1"
check "${P}idle (no OS) starts" e2e_domain_start "${P}idle" 1
wait_known "${P}busy-1" && wait_known "${P}idle"
B1=$(cpu_of "${P}busy-1")
I=$(cpu_of "${P}idle")
check "busy-1 and idle each run on a core of their own (CPU $B1, CPU $I)" test -n "$B1" -a -n "$I" -a "$B1" != "$I"
if wait_load "${P}busy-1" 1 && wait_load "${P}idle" 0 && wait_calm "${P}idle"; then
    ok "measured: busy-1 busy, idle idle (its host-side threads too)"
else
    not_ok "measured: busy-1 busy, idle idle (its host-side threads too)"
fi
diag "busy-1 $(load_line "${P}busy-1")" "idle   $(load_line "${P}idle")"

# 2. no core is free: a busy arrival shares the idle guest's core, not the busy one's
check "${P}busy-2 starts" start_busy "${P}busy-2"
wait_known "${P}busy-2"
B2=$(cpu_of "${P}busy-2")
check "busy-2 ($(result_of "${P}busy-2")) shares idle's CPU $I, not busy-1's CPU $B1 (got $B2)" test "$B2" = "$I"
diag "busy-2 why: $(pdctl show "${P}busy-2" | sed -n 's/^  why: *//p')"

# 3. a third busy guest: it has to share a busy guest's core. While it starts, QEMU's own work would read
#    as busy host-side threads and its vCPU as idle; that start-up is set aside (LoadWarmup=, 5 s), so it
#    counts as busy until its load is measured, and nothing moves it from one busy guest to the other.
check "${P}busy-3 starts" start_busy "${P}busy-3"
wait_known "${P}busy-3"
B3=$(cpu_of "${P}busy-3")
wait_load "${P}busy-3" 1 || true
check "busy-3 stays on CPU $B3 while it starts, until its load is measured ($(cpu_of "${P}busy-3"))" \
    test -n "$B3" -a "$(cpu_of "${P}busy-3")" = "$B3"
H3=$(host_cores "${P}busy-3")
check "busy-3's load leaves its start-up out: host-side threads ${H3:-?} cores, under 0.2" \
    awk -v h="${H3:-9}" 'BEGIN { exit !(h < 0.2) }'
if [ "$B3" = "$(cpu_of "${P}busy-1")" ]; then
    STAY=${P}busy-1 LEAVE=${P}busy-2
else
    STAY=${P}busy-2 LEAVE=${P}busy-1
fi
check "busy-3 ($(result_of "${P}busy-3")) shares a busy guest's CPU ($B3: $STAY's)" test "$B3" = "$(cpu_of "$STAY")"
diag "$STAY $(load_line "$STAY")" "busy-3 $(load_line "${P}busy-3")"

# 4. departures: idle and the other busy guest leave; healing separates busy-3 and STAY by itself
mark=$(pd_log_mark)
if e2e_domain_destroy "${P}idle" && e2e_domain_destroy "$LEAVE"; then
    ok "a burst of departures: ${P}idle and $LEAVE are destroyed"
else
    not_ok "a burst of departures: ${P}idle and $LEAVE are destroyed"
fi
wait_healed "$mark"
check "placementd healed ${healed:-nobody} (busy-3 or $STAY) without a request (log)" \
    test -n "$healed" -a \( "$healed" = "${P}busy-3" -o "$healed" = "$STAY" \)
C1=$(cpu_of "$STAY")
C3=$(cpu_of "${P}busy-3")
check "/proc: $STAY on CPU $C1, busy-3 on CPU $C3: each on a core of its own" test -n "$C1" -a -n "$C3" -a "$C1" != "$C3"
if [ -n "$healed" ]; then
    why=$(pdctl show "$healed" | sed -n 's/^  why: *//p')
    check "$healed's decision says it was healed ($why)" grep -q '^healed: ' <<<"$why"
    check "$healed is placed now ($(result_of "$healed"))" test "$(result_of "$healed")" = placed
fi
sleep 1.5 # one more HealInterval: nothing is left to move
check "no other heal move: $(pd_log_since "$mark" | grep -c 'healed without a request') in the log" \
    test "$(pd_log_since "$mark" | grep -c 'healed without a request')" = 1

# 4b. a pause: STAY's vCPU stands still while it is paused, which is no measure of its load; its load is
#     held as it was (not left to fade to idle, which would invite a busy guest onto its core) and said to
#     be held, and after the resume it is measured again.
busy_of() { load_line "$1" | sed -n 's/^  load: *[0-9]* busy vCPUs* (\([0-9.]*\)).*/\1/p'; }
wait_paused_note() { # NAME yes|no: poll until show says (or no longer says) the load is held for a pause
    local i
    for ((i = 0; i < 50; i++)); do
        if load_line "$1" | grep -q 'paused: held'; then [ "$2" = yes ] && return 0; else [ "$2" = no ] && return 0; fi
        sleep 0.2
    done
    return 1
}
check "$STAY is paused (virsh suspend)" e2e_virsh -q suspend "$STAY"
check "show says $STAY's load is held while it is paused" wait_paused_note "$STAY" yes
HELD=$(busy_of "$STAY")
sleep 3 # three samples of a vCPU that stands still: read as load, 1.00 would fall under 0.94
check "$STAY's load is held while paused: busy ${HELD:-?} then $(busy_of "$STAY") three seconds later" \
    test -n "$HELD" -a "$(busy_of "$STAY")" = "$HELD" -a "$(busy_vcpus "$STAY")" = 1
check "$STAY is resumed (virsh resume)" e2e_virsh -q resume "$STAY"
check "after the resume show no longer says it is held" wait_paused_note "$STAY" no
diag "$STAY $(load_line "$STAY")"

# 5. memory that cannot move: busy-4 starts while placementd is stopped; placementd restarts with
#    MemoryBinding=yes, adopts both busy guests (placed unbound) and places busy-4 before any load is
#    measured: no core free and both as busy by count, so it is overcommitted on the nearest node, node 0
#    (the only node this machine can bind memory to), and placementd binds its memory there (strict;
#    libvirt will not change that binding on a running domain). When the busy guest on node 1 leaves,
#    healing re-pins busy-4's vCPU to the freed core and leaves the binding as it is.
numa_of() { e2e_virsh numatune "$1" --live 2>/dev/null | awk -F': *' '/numa_mode|numa_nodeset/ { printf "%s%s", sep, $2; sep = " " }'; }
pd_stop
check "${P}busy-4 starts while placementd is stopped" start_busy "${P}busy-4"
if pd_start "$TOPO" HealInterval=1 LoadInterval=1 MemoryBinding=yes; then
    ok "placementd restarts with MemoryBinding=yes"
else
    not_ok "placementd restarts with MemoryBinding=yes"
    exit 1
fi
wait_known "${P}busy-4"
B4=$(cpu_of "${P}busy-4") # CPU n is node n
if [ "$(cpu_of "$STAY")" = 0 ]; then
    PARTNER=$STAY OTHER=${P}busy-3
else
    PARTNER=${P}busy-3 OTHER=$STAY
fi
check "busy-4 ($(result_of "${P}busy-4")) shares $PARTNER's CPU $B4 on node 0" \
    test "$B4" = 0 -a "$B4" = "$(cpu_of "$PARTNER")"
check "busy-4's memory is bound live to node 0 by placementd (numatune: $(numa_of "${P}busy-4"))" \
    test "$(numa_of "${P}busy-4")" = "strict 0"
wait_load "${P}busy-4" 1 || true
mark=$(pd_log_mark)
check "$OTHER leaves" e2e_domain_destroy "$OTHER"
wait_healed "$mark"
check "placementd healed ${healed:-nobody} (busy-4, the overcommitted one) without a request (log)" \
    test "$healed" = "${P}busy-4"
C4=$(cpu_of "${P}busy-4")
CP=$(cpu_of "$PARTNER")
check "/proc: busy-4 on CPU $C4, $PARTNER on CPU $CP: each on a core of its own" test "$C4" = 1 -a "$CP" = 0
shown=$(pdctl show "${P}busy-4")
diag "$shown"
NODES=$(pd_attr nodes "$(pd_decision "${P}busy-4")")
# re-pinned to the nearest node with a calm core, or placed anew beyond its bound node, which has no free
# core for it (a binding confines memory, not vCPUs): either way the reason says so
check "busy-4 went to the nearest node with a free core, its memory left (why)" \
    grep -qE 'nearest node with one|a binding confines memory, not vCPUs' <<<"$shown"
# a re-pin names the memory's node beside the vCPU's (0-1); a placement past the binding the vCPU's (1)
check "its live binding is unchanged ($(numa_of "${P}busy-4")), the decision says applied, nodes ${NODES:-?}" \
    test "$(numa_of "${P}busy-4")" = "strict 0" -a \( "$NODES" = 0-1 -o "$NODES" = 1 \) -a \
    -n "$(grep '^  memory nodes: *0 (binding applied)' <<<"$shown")"

# 6. a restart adopts the re-pinned decision as it stands (its vCPU away from its memory) and moves nothing
pd_stop
mark=$(pd_log_mark)
if pd_start "$TOPO" HealInterval=1 LoadInterval=1 MemoryBinding=yes; then
    ok "placementd restarts again"
else
    not_ok "placementd restarts again"
    exit 1
fi
sleep 1.5
check "busy-4 is adopted from its recorded decision (log)" \
    grep -q "${P}busy-4: adopted from its record .*(recorded reason: " <<<"$(pd_log_since "$mark")"
check "after the restart busy-4 still runs on CPU $C4, $PARTNER on $CP" \
    test "$(cpu_of "${P}busy-4")" = "$C4" -a "$(cpu_of "$PARTNER")" = "$CP"
check "its decision still names nodes ${NODES:-?} as before, memory bound to node 0" \
    test "$(pd_attr nodes "$(pd_decision "${P}busy-4")")" = "$NODES" -a "$(numa_of "${P}busy-4")" = "strict 0" -a \
    -n "$(pdctl show "${P}busy-4" | grep '^  memory nodes: *0 (binding applied)')"
