#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# End-to-end test of guest shapes against a real libvirtd + QEMU (TCG). Run as root:
#   bash tests/e2e/guest-shapes.sh [BUILD_DIR]
# 1. Guest NUMA cells: a 4-vCPU domain with cells 0-1 and 2-3 on a fake host of two nodes whose CPUs are
#    the real ones (CPU 0 on node 0, CPU 1 on node 1): overcommitted, yet each cell stays on one node; the
#    vCPU threads' Cpus_allowed_list (/proc) equals the decision, and `placementctl snippet` gives a
#    <memnode> per cell.
# 2. Hugepages: a small pool on this machine (nr_hugepages, a hugetlbfs mount), the daemon on the real
#    host: a hugepage guest is counted in the pool, and placementctl map agrees with the kernel's
#    free_hugepages. When the pool cannot be set up, that part is skipped and the script exits 77 (if
#    nothing failed) saying why.
# Prints "ok N - ..." / "not ok N - ...", and last "e2e-guest-shapes: N passed, M failed".
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"

BUILD=${1:-build}
if [ ! -d "$BUILD" ] && [ -d "$ROOT/$BUILD" ]; then
    BUILD=$ROOT/$BUILD
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "e2e-guest-shapes: 0 passed, 1 failed"; exit 1; }
PLACEMENTD=$BUILD/daemon/placementd
PLACEMENTCTL=$BUILD/tools/placementctl
NS=https://placementd.org/xmlns/domain/1
P=${E2E_DOMAIN_PREFIX}
PAGES=48 # 96 MiB of 2 MiB pages
HP_SYS=/sys/devices/system/node/node0/hugepages/hugepages-2048kB

T0=$(date +%s%N)
N=0 PASS=0 FAIL=0 PD_PID='' BUS_PID='' SKIP_WHY=''
OLD_PAGES='' MOUNTED=''
WORK=$(mktemp -d "${TMPDIR:-/tmp}/placementd-e2e-guest.XXXXXX") || exit 1
LOG=$WORK/placementd.log
: >"$LOG"
# shellcheck source=tap.sh
. "$HERE/tap.sh"

wait_for() { # TENTHS CMD...
    local n=$1 i=0
    shift
    while ! "$@"; do
        [ "$i" -ge "$n" ] && return 1
        sleep 0.1
        i=$((i + 1))
    done
}
meta() { e2e_virsh metadata "$1" --uri "$NS" --live 2>/dev/null; }
decision() { grep -oE "<([A-Za-z0-9_]+:)?decision[[:space:]][^>]*>" <<<"$(meta "$1")" | head -n 1; }
attr() { sed -nE "s/.*[[:space:]]$1=[\"']([^\"']*)[\"'].*/\1/p" <<<"$2"; }
decided() { [ -n "$(decision "$1")" ]; }
ctl() { "$PLACEMENTCTL" --bus-address="unix:path=$WORK/bus" "$@"; }
# The recorded pins as "vCPU cpuset" lines, in the format of e2e_vcpu_affinity.
recorded_pins() {
    meta "$1" | grep -oE "<([A-Za-z0-9_]+:)?vcpu [^>]*>" | while read -r line; do
        echo "$(attr id "$line") $(attr cpuset "$line")"
    done | sort -n
}

# start NAME SNIPPET VCPUS: a transient domain from the e2e template, SNIPPET before <os>.
start() {
    sed -e "s/@NAME@/$1/g" -e "s/@VCPUS@/$3/g" -e "s|<os>|$2<os>|" "$E2E_DOMAIN_TEMPLATE" >"$WORK/$1.xml"
    e2e_virsh create "$WORK/$1.xml" >/dev/null
}

stop_daemon() {
    [ -n "$PD_PID" ] && kill -TERM "$PD_PID" 2>/dev/null && wait "$PD_PID" 2>/dev/null
    PD_PID=''
}

# start_daemon TOPOLOGY: placementd on the private bus, against the test libvirtd.
start_daemon() {
    env -u NOTIFY_SOCKET "$PLACEMENTD" --config="$WORK/placementd.conf" --topology="$1" \
        --bus-address="unix:path=$WORK/bus" --foreground --log-level=debug </dev/null >>"$LOG" 2>&1 &
    PD_PID=$!
    wait_for 300 grep -q "Connected to" "$LOG" && wait_for 200 on_bus
}
on_bus() { timeout 5 busctl --address="unix:path=$WORK/bus" status org.placementd1 >/dev/null 2>&1; }

finish() {
    local rc=$?
    trap - EXIT INT TERM
    stop_daemon
    [ -n "$BUS_PID" ] && kill -TERM "$BUS_PID" 2>/dev/null && wait "$BUS_PID" 2>/dev/null
    e2e_libvirt_stop "$WORK" || not_ok "cleanup: e2e_libvirt_stop"
    [ -n "$OLD_PAGES" ] && echo "$OLD_PAGES" >/proc/sys/vm/nr_hugepages 2>/dev/null
    [ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null && rmdir "$MOUNTED" 2>/dev/null
    if [ "$FAIL" -gt 0 ] || [ "$rc" -ne 0 ]; then
        tail -n 30 "$LOG" | sed 's/^/#   /'
        echo "# logs kept in $WORK"
        [ "$FAIL" -gt 0 ] || FAIL=1
    else
        rm -rf "$WORK"
    fi
    echo "# time: $(elapsed) s"
    echo "e2e-guest-shapes: $PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ] || exit 1
    if [ -n "$SKIP_WHY" ]; then
        echo "# skipped: $SKIP_WHY"
        exit 77
    fi
    exit 0
}
trap finish EXIT
trap 'not_ok "run interrupted"; exit 130' INT TERM

[ "$(nproc)" -ge 2 ] || { echo "# needs 2 CPUs"; trap - EXIT; exit 77; }
must "built binaries in $BUILD" test -x "$PLACEMENTD" -a -x "$PLACEMENTCTL"

# The hugepage pool and hugetlbfs first: libvirtd sees hugetlbfs mounts only when it starts.
setup_pool() {
    if [ ! -w /proc/sys/vm/nr_hugepages ] || [ ! -d "$HP_SYS" ]; then
        SKIP_WHY="no writable /proc/sys/vm/nr_hugepages or no 2 MiB pages on node 0"
        return 1
    fi
    if ! grep -q '^[^ ]* [^ ]* hugetlbfs ' /proc/mounts; then
        if ! { mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages 2>/dev/null; }; then
            SKIP_WHY="cannot mount hugetlbfs on /dev/hugepages"
            return 1
        fi
        MOUNTED=/dev/hugepages
    fi
    OLD_PAGES=$(cat /proc/sys/vm/nr_hugepages)
    echo "$PAGES" >/proc/sys/vm/nr_hugepages 2>/dev/null
    if [ "$(cat "$HP_SYS/free_hugepages")" -lt "$PAGES" ]; then
        SKIP_WHY="the kernel gave $(cat "$HP_SYS/free_hugepages") of $PAGES free 2 MiB pages (memory too fragmented?)"
        return 1
    fi
}
setup_pool
must "e2e_libvirt_start" e2e_libvirt_start "$WORK"
cat >"$WORK/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$WORK/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$WORK/bus.conf" --nofork </dev/null >>"$WORK/dbus.log" 2>&1 &
BUS_PID=$!
must "private dbus-daemon" wait_for 50 test -S "$WORK/bus"
printf '[Placement]\nReconcileSec=0\n\n[Libvirt]\nURI=%s\n' "$E2E_LIBVIRT_URI" >"$WORK/placementd.conf"

# 1. Guest cells 0-1 and 2-3 on two one-CPU nodes: 4 vCPUs on 2 cores overcommit, and an even overcommit
#    would alternate them (0 and 2 on CPU 0, 1 and 3 on CPU 1), splitting both cells.
must "placementd on the fake two-node host" start_daemon 'synthetic:pack:1 numa:2(memory=1GiB) core:1 pu:1'
CELLS="<cpu><numa><cell id='0' cpus='0-1' memory='32' unit='MiB'/><cell id='1' cpus='2-3' memory='32' unit='MiB'/></numa></cpu>"
must "start ${P}cells (cells 0-1 and 2-3)" start "${P}cells" "$CELLS" 4
check "${P}cells: decision recorded" wait_for 100 decided "${P}cells"
expect "${P}cells: overcommitted on nodes 0-1" "overcommitted 0-1" \
    "$(attr result "$(decision "${P}cells")") $(attr nodes "$(decision "${P}cells")")"
expect "${P}cells: each cell's vCPUs on one CPU (/proc)" "0 0;1 0;2 1;3 1" \
    "$(e2e_vcpu_affinity "${P}cells" | sort -n | tr '\n' ';' | sed 's/;$//')"
expect "${P}cells: /proc equals the recorded decision" "$(recorded_pins "${P}cells")" \
    "$(e2e_vcpu_affinity "${P}cells" | sort -n)"
ctl show "${P}cells" >"$WORK/show" 2>&1
check "${P}cells: placementctl show names where each cell went" \
    sh -c "grep -q 'guest cell 0 .*vCPUs 0-1 on node 0' '$WORK/show' && grep -q 'guest cell 1 .*vCPUs 2-3 on node 1' '$WORK/show'"
ctl snippet "${P}cells" >"$WORK/snippet" 2>&1
check "${P}cells: placementctl snippet gives a memnode per cell and the vCPU pins" \
    sh -c "grep -q \"<memnode cellid='0' mode='strict' nodeset='0'/>\" '$WORK/snippet' &&
           grep -q \"<memnode cellid='1' mode='strict' nodeset='1'/>\" '$WORK/snippet' &&
           grep -q \"<vcpupin vcpu='3' cpuset='1'/>\" '$WORK/snippet'"
must "destroy ${P}cells" e2e_domain_destroy "${P}cells"
stop_daemon

# 2. Hugepages on the real host: 96 MiB in 2 MiB pages; a 64 MiB hugepage guest leaves 32 MiB.
if [ -z "$SKIP_WHY" ]; then
    must "placementd on this host (it reads the pool)" start_daemon host
    must "start ${P}huge (64 MiB in hugepages)" start "${P}huge" "<memoryBacking><hugepages/></memoryBacking>" 1
    check "${P}huge: decision recorded" wait_for 100 decided "${P}huge"
    check "${P}huge: the reason counts it in 2 MiB hugepages" \
        sh -c "grep -q '64.0 MiB in 2.0 MiB hugepages' '$LOG'"
    free_kernel=$(($(cat "$HP_SYS/free_hugepages") * 2))
    expect "placementctl map: the pool's free part equals the kernel's free_hugepages" \
        "hugepages 2.0 MiB: $free_kernel.0 MiB free of $((PAGES * 2)).0 MiB" \
        "$(ctl map | sed -n 's/^ *\(hugepages 2.0 MiB: .*\)$/\1/p' | head -n 1)"
    expect "general memory is not what the hugepage guest holds" "0 B reserved" \
        "$(ctl map | sed -nE 's/^  node 0 .*, (.*) by domains$/\1/p')"
    must "destroy ${P}huge" e2e_domain_destroy "${P}huge"
fi
check "placementd still runs" sh -c "[ -z '$PD_PID' ] || kill -0 '$PD_PID'"
exit 0
