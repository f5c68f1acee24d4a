#!/bin/bash
# Footprint of the real placementd process (not run in CI; prints figures, never fails on a figure):
#
#   bash bench/footprint.sh [BUILD_DIR]       (default: build; needs daemon/placementd, bench/testdriver-rss)
#
# 1. Memory with 0, 100 and 1000 tracked domains. libvirt's test driver is in-process, so the domains are
#    given to it as a node file (test:///FILE holding N running domains of 2 vCPUs and 1 GiB, the XML
#    that the demo and the volume test start); placementd places them all at start and then idles.
#    Its VmRSS, RssAnon, RssFile (/proc/PID/status) and Pss (/proc/PID/smaps_rollup) are read once every
#    domain has a decision. The same file is opened by bench/testdriver-rss, a bare libvirt client: what
#    placementd adds on top of libvirt, its test driver and those domains is placementd's own share.
# 2. Idle cost: CPU time (utime + stime from /proc/PID/stat), context switches (all threads) and
#    epoll_wait calls (perf, if available) over FOOTPRINT_IDLE_SEC (60) idle seconds, with
#    ReconcileSec=0 and ReconcileSec=5, against test:///FILE with 0 and 1000 domains and, with
#    FOOTPRINT_QEMU=1, against qemu:///system on a real libvirtd with no domains, which this script
#    starts itself with tests/e2e/libvirt-env.sh (as root; it waits up to 20 minutes while another
#    libvirtd runs and never touches that one). Then strace shows for 20 s what wakes each idle daemon.
#
# Settings: FOOTPRINT_TOPOLOGY (default synthetic:pack:2 numa:1(memory=1024GiB) l3:1 core:2 pu:2, whose 8
# PUs the node file's 8 CPUs match), FOOTPRINT_COUNTS ("0 100 1000"), FOOTPRINT_IDLE_SEC (60),
# FOOTPRINT_STRACE_SEC (20), FOOTPRINT_KEEP=1 keeps the work directory. Every process is stopped by PID.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${1:-build}
[ -d "$BUILD" ] || BUILD=$ROOT/$BUILD
BUILD=$(cd "$BUILD" && pwd) || exit 2
PD=$BUILD/daemon/placementd
BARE=$BUILD/bench/testdriver-rss
for b in "$PD" "$BARE"; do
        [ -x "$b" ] || { echo "footprint: $b not built (ninja -C $BUILD)" >&2; exit 2; }
done
TOPOLOGY=${FOOTPRINT_TOPOLOGY:-synthetic:pack:2 numa:1(memory=1024GiB) l3:1 core:2 pu:2}
COUNTS=${FOOTPRINT_COUNTS:-0 100 1000}
IDLE_SEC=${FOOTPRINT_IDLE_SEC:-60}
STRACE_SEC=${FOOTPRINT_STRACE_SEC:-20}
HZ=$(getconf CLK_TCK)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/placementd-footprint.XXXXXX") || exit 2
PIDS=()
LIBVIRT_STARTED=

cleanup() {
        local p
        for p in ${PIDS[@]+"${PIDS[@]}"}; do
                kill -TERM "$p" 2>/dev/null
        done
        for p in ${PIDS[@]+"${PIDS[@]}"}; do
                wait "$p" 2>/dev/null
        done
        [ -z "$LIBVIRT_STARTED" ] || e2e_libvirt_stop "$WORK/libvirt" || echo "footprint: e2e_libvirt_stop failed" >&2
        if [ -n "${FOOTPRINT_KEEP:-}" ]; then
                echo "footprint: work directory kept: $WORK" >&2
        else
                rm -rf "$WORK"
        fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# node_file N FILE: a test driver node of 8 CPUs with N running domains fp-00000...
node_file() {
        {
                echo "<node>"
                echo "  <cpu><mhz>2000</mhz><model>x86_64</model><active>8</active><nodes>2</nodes>"
                echo "    <sockets>2</sockets><cores>2</cores><threads>2</threads></cpu>"
                echo "  <memory>2147483648</memory>"
                awk -v n="$1" -v q="'" 'BEGIN { for (i = 0; i < n; i++) printf "  <domain type=%stest%s><name>fp-%05d</name>" \
                        "<memory unit=%sKiB%s>1048576</memory><vcpu>2</vcpu><os><type>hvm</type></os></domain>\n", q, q, i, q, q }'
                echo "</node>"
        } >"$2"
}

# config RECONCILE_SEC FILE
config() {
        printf '[Placement]\nReconcileSec=%s\n\n[DBus]\nBus=none\n' "$1" >"$2"
}

# start_pd URI CONF LOG: starts placementd in the background; sets PD_PID.
start_pd() {
        : >"$3"
        env -u NOTIFY_SOCKET -u WATCHDOG_USEC "$PD" --config="$2" --connect="$1" --topology="${PD_TOPOLOGY:-$TOPOLOGY}" \
                --bus=none --foreground --log-level=info </dev/null >"$3" 2>&1 &
        PD_PID=$!
        PIDS+=("$PD_PID")
}

stop_pid() {
        kill -TERM "$1" 2>/dev/null
        wait "$1" 2>/dev/null
}

# wait_decisions LOG N PID: until LOG shows N decisions (placed or overcommitted) for fp-* domains, 120 s.
wait_decisions() {
        local i
        for ((i = 0; i < 1200; i++)); do
                [ "$(grep -cE '^<[56]>fp-[0-9]+: (placed|overcommitted)' "$1" 2>/dev/null)" -ge "$2" ] &&
                        grep -q 'Connected to' "$1" && return 0
                kill -0 "$3" 2>/dev/null || { echo "footprint: placementd exited:" >&2; tail -5 "$1" >&2; return 1; }
                sleep 0.1
        done
        echo "footprint: only $(grep -cE '^<[56]>fp-[0-9]+: (placed|overcommitted)' "$1") of $2 decisions in 120 s" >&2
        return 1
}

kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
pss() { awk '$1 == "Pss:" { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
mem_row() { echo "$(kib "$1" VmRSS) $(kib "$1" RssAnon) $(kib "$1" RssFile) $(pss "$1")"; }
mib() { awk -v k="$1" 'BEGIN { if (k == "?" || k == "") print "?"; else printf "%.1f", k / 1024 }'; }

if [ "${FOOTPRINT_QEMU:-0}" = 1 ]; then
        # shellcheck source=tests/e2e/libvirt-env.sh source-path=SCRIPTDIR/..
        . "$ROOT/tests/e2e/libvirt-env.sh"
        export E2E_DOMAIN_PREFIX=bench-fp-
        for ((try = 1; try <= 20; try++)); do
                others=$(_e2e_live_pids libvirtd)
                [ -z "$others" ] && ! E2E_VIRSH_TIMEOUT=5 e2e_virsh version >/dev/null 2>&1 && break
                echo "footprint: another libvirtd runs (pids: ${others:-?}); waiting 60 s (try $try of 20)" >&2
                sleep 60
        done
        if e2e_libvirt_start "$WORK/libvirt"; then
                LIBVIRT_STARTED=1
        else
                echo "footprint: no libvirtd of our own: the qemu:///system cases are skipped" >&2
        fi
fi

echo "## Footprint"
echo
BUILDTYPE=$(python3 -c 'import json, sys
print(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "buildtype"))' \
        "$BUILD/meson-info/intro-buildoptions.json" 2>/dev/null) || BUILDTYPE="?"
echo "- placementd: $PD ($BUILDTYPE build); topology $TOPOLOGY"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "### Memory with N tracked domains (MiB)"
echo
echo "| domains | placementd VmRSS | RssAnon | RssFile | Pss | bare test-driver client VmRSS | RssAnon | RssFile | Pss | placementd's share (VmRSS difference) | (RssAnon difference) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $COUNTS; do
        node_file "$n" "$WORK/node-$n.xml"
        config 0 "$WORK/pd-mem.conf"
        start_pd "test://$WORK/node-$n.xml" "$WORK/pd-mem.conf" "$WORK/pd-mem-$n.log"
        pd=$PD_PID
        wait_decisions "$WORK/pd-mem-$n.log" "$n" "$pd" || exit 1
        sleep 1
        read -r prss panon pfile ppss <<<"$(mem_row "$pd")"
        stop_pid "$pd"
        "$BARE" "test://$WORK/node-$n.xml" >"$WORK/bare-$n.out" 2>&1 &
        bare=$!
        PIDS+=("$bare")
        for ((i = 0; i < 600; i++)); do
                grep -q "^ready" "$WORK/bare-$n.out" 2>/dev/null && break
                sleep 0.1
        done
        sleep 1
        read -r brss banon bfile bpss <<<"$(mem_row "$bare")"
        stop_pid "$bare"
        echo "| $n | $(mib "$prss") | $(mib "$panon") | $(mib "$pfile") | $(mib "$ppss") | $(mib "$brss") | $(mib "$banon") |" \
                "$(mib "$bfile") | $(mib "$bpss") | $(mib $((prss - brss))) | $(mib $((panon - banon))) |"
done

if [ -n "$LIBVIRT_STARTED" ]; then
        config 0 "$WORK/pd-qemu.conf"
        PD_TOPOLOGY=host start_pd qemu:///system "$WORK/pd-qemu.conf" "$WORK/pd-mem-qemu.log"
        pd=$PD_PID
        wait_decisions "$WORK/pd-mem-qemu.log" 0 "$pd" || exit 1
        sleep 1
        read -r prss panon pfile ppss <<<"$(mem_row "$pd")"
        stop_pid "$pd"
        "$BARE" qemu:///system >"$WORK/bare-qemu.out" 2>&1 &
        bare=$!
        PIDS+=("$bare")
        for ((i = 0; i < 600; i++)); do
                grep -q "^ready" "$WORK/bare-qemu.out" 2>/dev/null && break
                sleep 0.1
        done
        sleep 1
        read -r brss banon bfile bpss <<<"$(mem_row "$bare")"
        stop_pid "$bare"
        echo "| 0 on qemu:///system (real libvirtd) | $(mib "$prss") | $(mib "$panon") | $(mib "$pfile") | $(mib "$ppss") |" \
                "$(mib "$brss") | $(mib "$banon") | $(mib "$bfile") | $(mib "$bpss") | $(mib $((prss - brss))) |" \
                "$(mib $((panon - banon))) |"
fi

# Whose heap is it? With FOOTPRINT_MASSIF=1, placementd runs once more under valgrind's massif with the
# largest count, and the heap at its peak (the steady state, after every domain is placed) is split by the
# first frame outside glib's and libc's allocators: placementd's own code, libvirt (here: the test
# driver's domains, including what placementd's pins, numatune and metadata added to them), libxml2.
if [ "${FOOTPRINT_MASSIF:-0}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
        n=${COUNTS##* }
        : >"$WORK/massif.log"
        valgrind --tool=massif --massif-out-file="$WORK/massif.out" --depth=30 --threshold=0.01 \
                --peak-inaccuracy=0.1 "$PD" --config="$WORK/pd-mem.conf" --connect="test://$WORK/node-$n.xml" \
                --topology="$TOPOLOGY" --bus=none --foreground --log-level=info </dev/null >"$WORK/massif.log" 2>&1 &
        vg=$!
        PIDS+=("$vg")
        if wait_decisions "$WORK/massif.log" "$n" "$vg"; then
                sleep 2
                stop_pid "$vg"
                echo
                echo "Heap at massif's peak with $n domains, by the first frame outside the allocators:"
                echo
                python3 - "$WORK/massif.out" <<'PY'
import re, sys

lines = open(sys.argv[1]).read().split("\n")
snaps, cur = [], None
for i, line in enumerate(lines):
    if line.startswith("snapshot="):
        cur = {}
        snaps.append(cur)
    elif cur is not None and line.startswith("mem_heap_B="):
        cur["heap"] = int(line.split("=")[1])
    elif cur is not None and line.startswith("heap_tree="):
        cur["tree"], cur["line"] = line.split("=")[1], i
peak = [s for s in snaps if s.get("tree") == "peak"] or [s for s in snaps if s.get("tree") == "detailed"]
snap = peak[-1]
node = re.compile(r"^( *)n(\d+): (\d+) (.*)$")
alloc = re.compile(r"alloc|g_new|g_slice|g_strdup|g_array|g_ptr_array|g_string|g_hash_table|g_memdup|"
                   r"g_strndup|g_bytes|strdup|g_strconcat|vasprintf|g_markup")
split, ours, stack = {"placementd": 0, "libvirt": 0, "libxml2": 0, "other": 0}, {}, []


def owner(path):
    for frame in path[1:]:
        if alloc.search(frame) and re.search(r"libglib|libc\.so|vg_replace|alloc-fns|vasprintf\.c", frame):
            continue
        if "libvirt.so" in frame:
            return "libvirt", frame
        if "libxml2" in frame:
            return "libxml2", frame
        if re.search(r"\(\w[\w.-]*\.c:\d+\)", frame) or "placementd" in frame:
            return "placementd", frame
        return "other", frame
    return "other", ""


for line in lines[snap["line"] + 1:]:
    m = node.match(line)
    if not m:
        break
    depth, children, size = len(m.group(1)), int(m.group(2)), int(m.group(3))
    stack = stack[:depth] + [m.group(4)]
    if children == 0 and depth > 0:
        who, frame = owner(stack)
        split[who] += size
        if who == "placementd":
            key = re.sub(r"^0x[0-9A-Fa-f]+: ", "", frame)
            ours[key] = ours.get(key, 0) + size
print("| heap at peak | placementd's code | libvirt | libxml2 | other |")
print("|---:|---:|---:|---:|---:|")
print("| %.1f MiB | %.2f MiB | %.2f MiB | %.2f MiB | %.2f MiB |" % tuple(
    v / 1048576 for v in (snap["heap"], split["placementd"], split["libvirt"], split["libxml2"], split["other"])))
print()
print("placementd's largest allocation sites: " + "; ".join(
    "%s %.0f KiB" % (k, v / 1024) for k, v in sorted(ours.items(), key=lambda kv: -kv[1])[:6]))
PY
        else
                stop_pid "$vg"
        fi
fi

# ---------------------------------------------------------------------------------------------- idle
# stat_row PID: utime+stime ticks, voluntary and involuntary switches summed over threads, thread count.
stat_row() {
        local t ticks vol=0 invol=0 n=0 v
        ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat")
        for t in /proc/"$1"/task/*; do
                v=$(awk '$1 == "voluntary_ctxt_switches:" { v = $2 } $1 == "nonvoluntary_ctxt_switches:" { n = $2 }
                        END { print v + 0, n + 0 }' "$t/status" 2>/dev/null) || continue
                vol=$((vol + ${v% *}))
                invol=$((invol + ${v#* }))
                n=$((n + 1))
        done
        echo "$ticks $vol $invol $n"
}

declare -A IDLE_PID IDLE_DESC
cases=()
for n in 0 1000; do
        [ -f "$WORK/node-$n.xml" ] || node_file "$n" "$WORK/node-$n.xml"
        for r in 0 5; do
                c=test-$n-$r
                config "$r" "$WORK/$c.conf"
                start_pd "test://$WORK/node-$n.xml" "$WORK/$c.conf" "$WORK/$c.log"
                IDLE_PID[$c]=$PD_PID
                IDLE_DESC[$c]="test:///FILE, $n domains, ReconcileSec=$r"
                cases+=("$c")
        done
done
if [ -n "$LIBVIRT_STARTED" ]; then
        for r in 0 5; do
                c=qemu-$r
                printf '[Placement]\nReconcileSec=%s\n\n[Libvirt]\nURI=qemu:///system\n\n[DBus]\nBus=none\n' \
                        "$r" >"$WORK/$c.conf"
                PD_TOPOLOGY=host start_pd qemu:///system "$WORK/$c.conf" "$WORK/$c.log"
                IDLE_PID[$c]=$PD_PID
                IDLE_DESC[$c]="qemu:///system (real libvirtd, no domains), ReconcileSec=$r"
                cases+=("$c")
        done
fi
for c in "${cases[@]}"; do
        n=0
        case $c in test-1000-*) n=1000 ;; esac
        wait_decisions "$WORK/$c.log" "$n" "${IDLE_PID[$c]}" || exit 1
done
sleep 3 # let start-up settle
declare -A BEFORE PERF_OUT
have_perf=
if command -v perf >/dev/null 2>&1 && perf list 'syscalls:sys_enter_epoll_wait' 2>/dev/null | grep -q epoll_wait; then
        have_perf=1
fi
perf_pids=()
for c in "${cases[@]}"; do
        BEFORE[$c]=$(stat_row "${IDLE_PID[$c]}")
        if [ -n "$have_perf" ]; then
                PERF_OUT[$c]=$WORK/$c.perf
                perf stat -x, -e syscalls:sys_enter_epoll_wait -p "${IDLE_PID[$c]}" -o "${PERF_OUT[$c]}" \
                        -- sleep "$IDLE_SEC" >/dev/null 2>&1 &
                perf_pids+=($!)
        fi
done
sleep "$IDLE_SEC"
for p in ${perf_pids[@]+"${perf_pids[@]}"}; do
        wait "$p"
done
echo
echo "### Idle for $IDLE_SEC s (after start-up and the initial placement)"
echo
echo "| daemon | CPU time (ms) | voluntary switches (wake-ups) | involuntary | epoll_wait calls | threads |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
        read -r t0 v0 i0 _ <<<"${BEFORE[$c]}"
        read -r t1 v1 i1 nt <<<"$(stat_row "${IDLE_PID[$c]}")"
        ep="-"
        if [ -n "$have_perf" ]; then
                ep=$(awk -F, '/epoll_wait/ { print ($1 ~ /^[0-9]+$/ ? $1 : 0) }' "${PERF_OUT[$c]}")
        fi
        echo "| ${IDLE_DESC[$c]} | $(((t1 - t0) * 1000 / HZ)) | $((v1 - v0)) | $((i1 - i0)) | $ep | $nt |"
done

echo
echo "### What wakes an idle daemon: strace -f -tt -p PID for $STRACE_SEC s"
strace_pids=()
for c in "${cases[@]}"; do
        timeout -s INT "$STRACE_SEC" strace -f -tt -p "${IDLE_PID[$c]}" -o "$WORK/$c.strace" 2>/dev/null &
        strace_pids+=($!)
done
for p in "${strace_pids[@]}"; do
        wait "$p"
done
for c in "${cases[@]}"; do
        echo
        echo "${IDLE_DESC[$c]}: $(grep -c . "$WORK/$c.strace") lines (the last one is the wait strace interrupted):"
        echo
        head -n 16 "$WORK/$c.strace" | cut -c1-160 | sed 's/^/    /'
done
