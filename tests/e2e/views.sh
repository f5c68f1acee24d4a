# shellcheck shell=bash
# The four views of a placement, and whether they agree. A sourced library (no shell options, nothing runs
# on load); needs libvirt-env.sh and daemon-env.sh sourced first, python3 (JSON and XML parsing) and
# hwloc-calc (which CPUs form a core).
#
#   views_init TOPOLOGY          core layout of the topology the daemon runs with ('host' or synthetic:...)
#   views_domain NAME            one running domain: placementctl vs metadata vs libvirt vs kernel
#   views_all                    every running domain, plus: placementctl lists exactly what libvirt runs
#   views_sharing                policy explicit: no two domains hold one core while a core is free,
#                                in the daemon's view (placementctl map) and in the kernel's
#   views_settle TENTHS          views_all + views_sharing, polled until they agree (at most TENTHS/10 s)
#   views_vcpu_nodes NAME        the topology's nodes of the CPUs NAME's vCPU threads may run on (kernel)
#
# VIEWS_CONSTRAINED="NAME ..." lists domains whose own constraints (<vcpu cpuset>, <numatune>) may force them
# onto a core another domain holds: sharing that involves them is not counted as avoidable. Nor is sharing
# that involves a domain placementctl lists as `skipped` (pinned by hand, or opted out): the user put it there.
# VIEWS_SHARING_ONLY="NAME ..." (empty: every domain) counts only sharing that involves one of these domains
# ("-" names none): placementd promises that a NEW placement never shares a core while one is free; it does
# not heal sharing that a release leaves behind (two domains on one core after the third is destroyed).
#
# Each check prints one line per disagreement, naming what each view said, e.g.
#   e2e-a vCPU 1: placementctl 1, metadata 1, libvirt 0-1, kernel 0-1
# and returns 1; 0 when everything agrees. Facts of this machine that are not the daemon's fault are printed
# as "note: ..." and do not fail: a memory binding to a NUMA node the kernel lacks (the fake topologies put
# CPU 1 on node 1; the machine has node 0 only) fails in libvirt with "NUMA node N is unavailable".
# With VIEWS_THREADS_NARROWER set, so is one of QEMU's other threads whose mask is a part of the emulator
# pin: a restored domain's threads keep the emulator pin of its saved definition as their own mask, and a
# later, wider pin (a heal move, a hot-add) reaches only the main thread (libvirt's virDomainPinEmulator);
# they run on less than placementd counts, never outside it. ledger.sh scenario 6b holds the daemon to
# the equality (a TODO); the random walk, which meets it through heal moves after a restore, sets this.
#
# A record that pins no emulator means the emulator runs where libvirt runs it unpinned: the definition's
# <vcpu cpuset>, else every online CPU (a definition's own <emulatorpin> aside). VIEWS_HAND_EMULATOR="NAME ..."
# lists domains whose emulator someone pinned live (virsh emulatorpin --live): that pin is the user's, and
# placementd records none of its own (docs/running.md); an entry NAME:CPUS says where (the last for NAME),
# and the emulator must run just there. An I/O thread runs where the user pinned it live
# when it is listed in VIEWS_HAND_IOTHREAD ("NAME:N:CPUS ...", the last entry for it), else where the
# definition's <iothreadpin> puts it, else where the record pins it (iothreads=, iothread-pin=), else
# unpinned (the definition's <vcpu cpuset>, else every online CPU).
#
# The views:
#   placementctl  `placementctl list --json` (result, vCPU pins, emulator pin, memory nodes) and `map`
#   metadata      `virsh metadata --live NAME https://placementd.org/xmlns/domain/1` (the recorded decision)
#   libvirt       `virsh vcpupin/emulatorpin/numatune NAME --live`
#   kernel        /proc/PID/task/*/status of the domain's QEMU: Cpus_allowed_list of the "CPU n/TCG" threads
#                 (vCPU n) and of the others (emulator), Mems_allowed_list of all of them

VIEWS_NS=https://placementd.org/xmlns/domain/1
VIEWS_NCORES=0
declare -gA VIEWS_CORE_OF=()    # PU -> core index
declare -ga VIEWS_CORE_PUS=()   # core index -> "PU PU ..." in topology order
declare -gA VIEWS_NODE_OF=()    # PU -> NUMA node of the topology
VIEWS_CONSTRAINED=              # domains whose own constraints may force them onto a held core
VIEWS_SHARING_ONLY=             # only sharing that involves these domains counts (empty: all; "-": none)
VIEWS_THREADS_NARROWER=         # set: a QEMU thread narrower than the emulator pin is a note (see above)
VIEWS_HAND_EMULATOR=            # "NAME[:CPUS] ...": domains whose emulator the user pinned live (virsh emulatorpin)
VIEWS_HAND_IOTHREAD=            # "NAME:N:CPUS ...": I/O thread N of NAME pinned live by the user to CPUS (virsh iothreadpin)
VIEWS_RESERVED=                 # CPUs in the daemon's ReservedCPUs= ("0 3"): a core with one is not free
VIEWS_CTL_JSON=
VIEWS_OUT=
declare -A _VIEWS_KERN=() # views_all's _views_kernel of each running domain, for views_sharing in the same pass

# _views_norm_into VAR LIST: "0-2,5" -> "0,1,2,5" (sorted, unique) into VAR; empty stays empty. No fork
# unless a part is not a number or a range (a views pass normalises some hundred lists).
_views_norm_into() {
    local _vn_part _vn_a _vn_b _vn_out=() _vn_odd=()
    local IFS=,
    for _vn_part in $2; do
        _vn_part=${_vn_part//[[:space:]]/}
        [ -n "$_vn_part" ] || continue
        if [[ $_vn_part =~ ^([0-9]+)-([0-9]+)$ ]]; then
            _vn_a=$((10#${BASH_REMATCH[1]})) _vn_b=$((10#${BASH_REMATCH[2]}))
            while [ "$_vn_a" -le "$_vn_b" ]; do _vn_out[_vn_a]=1; _vn_a=$((_vn_a + 1)); done
        elif [[ $_vn_part =~ ^[0-9]+$ ]]; then
            _vn_out[10#$_vn_part]=1
        else
            _vn_odd+=("$_vn_part")
        fi
    done
    # an indexed array lists its indices in ascending order: sorted and unique without a fork
    if [ "${#_vn_odd[@]}" -gt 0 ]; then
        printf -v "$1" '%s' "$(printf '%s\n' "${!_vn_out[@]}" "${_vn_odd[@]}" | sort -n -u | paste -sd,)"
    else
        printf -v "$1" '%s' "${!_vn_out[*]}"
    fi
}

# views_cpuset_norm LIST: _views_norm_into's answer on stdout (nothing for an empty list).
views_cpuset_norm() {
    local norm
    _views_norm_into norm "$1"
    [ -z "$norm" ] || echo "$norm"
}

_views_say() { VIEWS_OUT+="$*"$'\n'; }
# _views_within A B: cpuset A is a non-empty part of cpuset B.
_views_within() {
    local x a b
    a=$(views_cpuset_norm "$1") b=,$(views_cpuset_norm "$2"),
    [ -n "$a" ] || return 1
    local IFS=,
    for x in $a; do [[ $b == *",$x,"* ]] || return 1; done
}
_views_bad() { grep -v '^note: ' <<<"$VIEWS_OUT" | grep -q .; } # a disagreement beyond notes

views_init() {
    local src=$1 json c pus p
    local -a calc=(hwloc-calc)
    json=$("$PD_CTL" topology --topology="$src" --json) || return 1
    VIEWS_NCORES=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["cores"])' <<<"$json") || return 1
    VIEWS_NODE_OF=()
    while read -r c pus; do
        for p in $(views_cpuset_norm "$pus" | tr , ' '); do VIEWS_NODE_OF[$p]=$c; done
    done < <(python3 -c '
import json, sys
for n in json.load(sys.stdin)["node_list"]:
    print(n["node"], n["cpus"])' <<<"$json")
    case "$src" in synthetic:*) calc+=(-i "${src#synthetic:}") ;; esac   # input options come first
    calc+=(--physical-output)
    VIEWS_CORE_OF=()
    VIEWS_CORE_PUS=()
    for ((c = 0; c < VIEWS_NCORES; c++)); do
        pus=$("${calc[@]}" --intersect PU "core:$c") || return 1
        VIEWS_CORE_PUS[c]=${pus//,/ }
        for p in ${pus//,/ }; do VIEWS_CORE_OF[$p]=$c; done
    done
}

# _views_ctl_fetch: placementctl list --json -> VIEWS_CTL_JSON as lines
#   NAME|RESULT|VCPUS|EMULATOR|MEMNODES|BINDING|ID=PIN;ID=PIN;...|APPLY_ERROR|HELD|IOTHREADS|IOTHREAD_PIN (ID: libvirt's vCPU id, "vcpu_ids"
#   when the online vCPUs are not 0..n-1, else the position)
_views_ctl_fetch() {
    local json
    json=$(pdctl list --json 2>&1) || { _views_say "placementctl list --json failed: $json"; return 1; }
    VIEWS_CTL_JSON=$(python3 -c '
import json, sys
for d in json.load(sys.stdin).get("decisions", []):
    pins = d.get("vcpu_pins") or []
    ids = d.get("vcpu_ids") or list(range(len(pins)))
    pins = ";".join("%s=%s" % (i, "" if p is None else p) for i, p in zip(ids, pins))
    err = (d.get("apply_error") or "").replace("|", "/").replace("\n", " ")
    print("|".join("none" if x is None else str(x) for x in (d.get("domain"), d.get("result"), d.get("vcpus"), d.get("emulator_pin") or "",
          d.get("memory_nodes") or "", d.get("memory_binding") or "", pins, err, d.get("held_cpus") or "",
          d.get("iothreads") or "", d.get("iothread_pin") or "")))
' <<<"$json")
}

# _views_ctl NAME: the placementctl line of NAME (from the last fetch).
_views_ctl() { awk -F'|' -v n="$1" '$1 == n' <<<"$VIEWS_CTL_JSON"; }

# _views_meta_of XML: the recorded decision in placementd's metadata element XML (virsh metadata) as lines
# "result R", "binding B", "emulator E", "iothreads IDS", "iothread_pin CPUS", "vcpu ID CPUSET", "memory NODE",
# and from the recorded definition "user_emulatorpin", "user_vcpu_cpuset", "user_iothreadpin ID CPUSET";
# nothing when there is none.
_views_meta_of() {
    python3 -c '
import sys, xml.etree.ElementTree as ET
try:
    root = ET.fromstring(sys.stdin.read())
except ET.ParseError:
    sys.exit(0)
d = root.find("decision")
if d is None:
    sys.exit(0)
print("result", d.get("result", ""))
print("binding", d.get("memory-binding", ""))
print("emulator", d.get("emulator", ""))
print("iothreads", d.get("iothreads", ""))
print("iothread_pin", d.get("iothread-pin", ""))
# the definition of the user as recorded: its own <emulatorpin> and <vcpu cpuset>
dx = root.find("definition")
if dx is not None and dx.text:
    try:
        u = ET.fromstring(dx.text)
        e = u.find("cputune/emulatorpin")
        if e is not None:
            print("user_emulatorpin", e.get("cpuset", ""))
        v = u.find("vcpu")
        if v is not None and v.get("cpuset"):
            print("user_vcpu_cpuset", v.get("cpuset"))
        for t in u.findall("cputune/iothreadpin"):
            print("user_iothreadpin", t.get("iothread", ""), t.get("cpuset", ""))
    except ET.ParseError:
        pass
for v in d.findall("vcpu"):
    print("vcpu", v.get("id"), v.get("cpuset", ""))
for m in d.findall("memory"):
    print("memory", m.get("node"))
' <<<"$1"
}

# _views_libvirt NAME: libvirt's live answers about NAME in one virsh run (each virsh start costs about
# 0.1 s): sections "@@@metadata", "@@@vcpupin", "@@@emulatorpin", "@@@iothreadinfo", "@@@numatune", "@@@dumpxml", each
# followed by what that command prints (nothing where it fails).
_views_libvirt() {
    e2e_virsh "echo @@@metadata; metadata '$1' $VIEWS_NS --live; echo @@@vcpupin; vcpupin '$1' --live;
        echo @@@emulatorpin; emulatorpin '$1' --live; echo @@@iothreadinfo; iothreadinfo '$1' --live;
        echo @@@numatune; numatune '$1' --live;
        echo @@@dumpxml; dumpxml '$1'" 2>/dev/null
}

# _views_section NAME TEXT: the lines of section NAME in _views_libvirt's TEXT.
_views_section() { awk -v s="@@@$1" '/^@@@/ { on = ($0 == s); next } on' <<<"$2"; }

# _views_kernel NAME: lines "vcpu N CPUS MEMS", "io N CPUS MEMS" (I/O thread N, "IO iothreadN"), "main PID
# CPUS MEMS" and "other TID CPUS MEMS" for every thread of NAME's QEMU, CPUS and MEMS normalised
# (_views_norm_into). One python3 run reads every thread's comm and status, each file in one read: read
# line by line, a busy thread's "State:" flipping between "S (sleeping)" and "R (running)" shifted the
# lines under bash's seek-back and lost its Cpus_allowed_list (QEMU's main thread, once in CI). A thread
# that ends meanwhile is left out.
_views_kernel() {
    local pid rows kind num cpus mems
    pid=$(e2e_qemu_pid "$1" 2>/dev/null) || return 1
    rows=$(python3 - "$pid" <<'PY'
import os, re, sys

pid = sys.argv[1]
rows = []
try:
    tids = os.listdir("/proc/%s/task" % pid)
except OSError:
    sys.exit(1)
for tid in tids:
    try:
        with open("/proc/%s/task/%s/comm" % (pid, tid)) as f:
            comm = f.read().rstrip("\n")
        with open("/proc/%s/task/%s/status" % (pid, tid)) as f:
            status = f.read()
    except OSError:
        continue
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    cpus = "".join(fields.get("Cpus_allowed_list", "").split())
    if not cpus:
        continue
    m = re.fullmatch(r"CPU ([0-9]+)/[A-Z]+", comm)
    io = re.fullmatch(r"IO iothread([0-9]+)", comm)
    kind, num = ("vcpu", int(m.group(1))) if m else ("io", int(io.group(1))) if io else ("main", int(tid)) if tid == pid else ("other", int(tid))
    rows.append((kind, num, cpus, "".join(fields.get("Mems_allowed_list", "").split())))
for row in sorted(rows):
    print(*row)
PY
    ) || return 1
    while read -r kind num cpus mems; do
        [ -n "$kind" ] || continue
        _views_norm_into cpus "$cpus"
        _views_norm_into mems "$mems"
        echo "$kind $num $cpus $mems"
    done <<<"$rows"
}

_views_node_exists() { [ -d "/sys/devices/system/node/node$1" ]; }

# _views_listed NAME LIST: NAME is one of the words of LIST.
_views_listed() { case " $2 " in *" $1 "* | *" $1:"*) return 0 ;; esac; return 1; }
# _views_hand_emulator NAME: the CPUs NAME's emulator was last pinned to by hand (VIEWS_HAND_EMULATOR), or
# nothing when no entry says
_views_hand_emulator() {
    local x
    for x in $VIEWS_HAND_EMULATOR; do [ "${x%%:*}" != "$1" ] || [ "$x" = "$1" ] || echo "${x#*:}"; done | tail -n 1
}

# _views_user_emulator NAME META: where NAME's emulator runs while placementd pins none: libvirt's default,
# the definition's <vcpu cpuset> or else every online CPU; "-" when the definition pins it itself (the
# recorded definition, else the persistent one says so).
_views_user_emulator() {
    local d=$1 meta=$2 def cs
    if grep -q '^user_emulatorpin ' <<<"$meta"; then echo -; return; fi
    cs=$(awk '$1 == "user_vcpu_cpuset" { print $2 }' <<<"$meta")
    if ! grep -q '^user_' <<<"$meta" && e2e_virsh dominfo "$d" 2>/dev/null | grep -q '^Persistent: *yes'; then
        def=$(e2e_virsh dumpxml --inactive "$d" 2>/dev/null)
        if grep -q '<emulatorpin' <<<"$def"; then echo -; return; fi
        [ -n "$cs" ] || cs=$(sed -nE "s/^.*<vcpu [^>]*cpuset='([^']*)'.*$/\1/p" <<<"$def" | head -n 1)
    fi
    views_cpuset_norm "${cs:-$(cat /sys/devices/system/cpu/online)}"
}

# _views_unpinned NAME META: where libvirt runs a thread nothing pins (an I/O thread without <iothreadpin>
# whose pin the record does not hold): the definition's <vcpu cpuset>, else every online CPU.
_views_unpinned() {
    local cs
    cs=$(awk '$1 == "user_vcpu_cpuset" { print $2 }' <<<"$2")
    if [ -z "$cs" ] && ! grep -q '^user_' <<<"$2" && e2e_virsh dominfo "$1" 2>/dev/null | grep -q '^Persistent: *yes'; then
        cs=$(e2e_virsh dumpxml --inactive "$1" 2>/dev/null | sed -nE "s/^.*<vcpu [^>]*cpuset='([^']*)'.*$/\1/p" | head -n 1)
    fi
    views_cpuset_norm "${cs:-$(cat /sys/devices/system/cpu/online)}"
}

# _views_opted_out NAME LIBVIRT: NAME's definition opts it out (a <cputune><vcpupin>, or skip='yes' in
# placementd's element): the persistent definition of a persistent domain, else the live XML (LIBVIRT is
# _views_libvirt's answer), which for a transient domain without a record is the one it was created with.
_views_opted_out() {
    local def
    if e2e_virsh dominfo "$1" 2>/dev/null | grep -q '^Persistent: *yes'; then
        def=$(e2e_virsh dumpxml --inactive "$1" 2>/dev/null)
    else
        def=$(_views_section dumpxml "$2")
    fi
    grep -qE "<vcpupin |skip=['\"]yes['\"]" <<<"$def"
}

# views_domain NAME (fetches placementctl's list unless VIEWS_CTL_JSON is fresh: views_all sets it).
views_domain() {
    VIEWS_OUT=
    [ -n "${_VIEWS_FRESH:-}" ] || _views_ctl_fetch || { printf '%s' "$VIEWS_OUT"; return 1; }
    _views_domain "$1"
    printf '%s' "$VIEWS_OUT"
    ! _views_bad
}

_views_domain() {
    local d=$1 ctl lv meta kern c_res c_n c_emu c_mem c_bind c_pins c_err m_res m_bind m_emu m_mem
    local l_emu l_numa l_mode l_nodes l_cell_nodes k_emu="" i n v m_p c_p l_p k_p online=0 x line u_emu
    local -A mpin=() lpin=() kpin=() cpin=()
    local -a pairs=()
    local sec s_meta='' s_vcpupin='' s_emulatorpin='' s_iothreadinfo='' s_numatune='' m_emu_raw='' m_mem_odd=''
    local c_io c_iopin m_io='' m_iopin='' want who user
    local -A uio=() lio=()
    local -a m_mem_ids=()
    ctl=$(_views_ctl "$d")
    lv=$(_views_libvirt "$d")
    # its sections, as _views_section reads them, in one pass (the dump is read only for memnodes, below)
    sec=
    while IFS= read -r line; do
        case "$line" in
        @@@*) sec=${line#@@@} ;;
        *) case "$sec" in
            metadata) s_meta+=$line$'\n' ;;
            vcpupin) s_vcpupin+=$line$'\n' ;;
            emulatorpin) s_emulatorpin+=$line$'\n' ;;
            iothreadinfo) s_iothreadinfo+=$line$'\n' ;;
            numatune) s_numatune+=$line$'\n' ;;
            esac ;;
        esac
    done <<<"$lv"
    while [[ $s_meta == *$'\n' ]]; do s_meta=${s_meta%$'\n'}; done # as a command substitution leaves it
    meta=
    [ -z "$s_meta" ] || meta=$(_views_meta_of "$s_meta")
    kern=$(_views_kernel "$d") || { _views_say "$d: libvirt runs it but its QEMU is not in /proc"; return; }
    _VIEWS_KERN[$d]=$kern
    if [ -z "$ctl" ]; then
        _views_say "$d: libvirt runs it, placementctl list does not show it"
    fi
    # a domain its definition opts out from its start (<cputune><vcpupin>, skip='yes') is not placementd's:
    # no record is written for it, and placementctl shows it skipped, its pins as they run
    user=
    if [ -z "$meta" ] && [ "$(cut -d'|' -f2 <<<"$ctl")" = skipped ] && _views_opted_out "$d" "$lv"; then
        user=1
    elif [ -z "$meta" ]; then
        _views_say "$d: no decision in its live metadata${ctl:+ (placementctl says ${ctl#*|})}"
    fi
    IFS='|' read -r _ c_res c_n c_emu c_mem c_bind c_pins c_err _ c_io c_iopin <<<"$ctl"
    IFS=';' read -ra pairs <<<"$c_pins"
    for x in "${pairs[@]}"; do [ -n "$x" ] && cpin[${x%%=*}]=${x#*=}; done
    # the record's lines ("result R", "vcpu ID CPUSET", ...: _views_meta_of), each field as awk's $2 reads it
    m_res='' m_bind=''
    while read -r x i v; do
        case "$x" in
        result) m_res=$i ;;
        binding) m_bind=$i ;;
        emulator) m_emu_raw=$i ;;
        iothreads) _views_norm_into m_io "$i" ;;
        iothread_pin) _views_norm_into m_iopin "$i" ;;
        user_iothreadpin) _views_norm_into line "$v" && uio[$i]=$line ;;
        memory) if [[ $i =~ ^[0-9]+$ ]]; then m_mem_ids[10#$i]=1; else m_mem_odd=1; fi ;;
        vcpu) _views_norm_into line "$v" && mpin[$i]=$line ;;
        esac
    done <<<"$meta"
    _views_norm_into m_emu "$m_emu_raw"
    if [ -n "$m_mem_odd" ]; then
        m_mem=$(awk '$1 == "memory" { print $2 }' <<<"$meta" | sort -n -u | paste -sd,)
    else
        m_mem=$(IFS=,; echo "${!m_mem_ids[*]}")
    fi
    # virsh vcpupin: "VCPU   CPU Affinity", a rule, then "ID CPUSET" per vCPU
    while read -r i v x; do
        [[ $i =~ ^[0-9]+$ ]] && [ -n "$v" ] && [ -z "$x" ] && _views_norm_into line "$v" && lpin[$i]=$line
    done <<<"$s_vcpupin"
    # virsh emulatorpin: "emulator: CPU Affinity", a rule, "       *: CPUSET"; virsh numatune: "numa_mode
    # : strict", "numa_nodeset   : 0"
    x=
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]*\*:[[:space:]]*(.*)$ ]] && x+=${x:+$'\n'}${BASH_REMATCH[1]}
    done <<<"$s_emulatorpin"
    _views_norm_into l_emu "$x"
    l_numa=$s_numatune l_mode='' x=''
    while IFS= read -r line; do
        if [[ $line =~ ^numa_mode[[:space:]]*:[[:space:]]*(.*)$ ]]; then
            l_mode+=${l_mode:+$'\n'}${BASH_REMATCH[1]}
        elif [[ $line =~ ^numa_nodeset[[:space:]]*:[[:space:]]*(.*)$ ]]; then
            x+=${x:+$'\n'}${BASH_REMATCH[1]}
        fi
    done <<<"$l_numa"
    _views_norm_into l_nodes "$x"
    # per guest cell bindings (<numatune><memnode>) are not in `virsh numatune`: libvirt's nodes are then
    # the union of the live XML's memnode nodesets (QEMU binds each cell's memory; no cgroup is involved)
    l_cell_nodes=
    [ -n "$l_nodes" ] || l_cell_nodes=$(views_cpuset_norm "$(_views_section dumpxml "$lv" |
        sed -nE "s/^.*<memnode [^>]*nodeset='([^']*)'.*$/\1/p" | paste -sd,)")
    while read -r x i v m; do
        case "$x" in
        vcpu) kpin[$i]=$v online=$((online + 1)) ;;
        main) k_emu=$v ;;
        esac
    done <<<"$kern"

    # result and counts
    if [ -n "$ctl" ] && [ -n "$meta" ] && [ "$c_res" != "$m_res" ]; then
        _views_say "$d result: placementctl $c_res, metadata $m_res"
    fi
    if [ -n "$ctl" ] && [ "$c_n" != "$online" ]; then
        _views_say "$d vCPU count: placementctl $c_n, kernel $online online ('CPU n' threads)"
    fi
    # vCPU pins: every vCPU any view names
    for i in $(printf '%s\n' "${!mpin[@]}" "${!kpin[@]}" "${!cpin[@]}" | sort -n -u); do
        [ -n "$i" ] || continue
        m_p=${mpin[$i]-none}
        c_p=none
        [ -n "${cpin[$i]+set}" ] && _views_norm_into c_p "${cpin[$i]}"
        [ -n "$c_p" ] || c_p=none
        l_p=${lpin[$i]-none}
        k_p=${kpin[$i]-offline}
        if [ -z "$meta" ] && [ -z "$ctl" ]; then
            [ "$l_p" = "$k_p" ] || [ "$k_p" = offline ] || _views_say "$d vCPU $i: libvirt $l_p, kernel $k_p"
            continue
        fi
        if [ -n "$user" ]; then
            { [ "$c_p" = "$l_p" ] && [ "$l_p" = "$k_p" ]; } || [ "$k_p" = offline ] ||
                _views_say "$d vCPU $i (opted out by its definition, no record): placementctl $c_p, libvirt $l_p, kernel $k_p"
            continue
        fi
        if [ "$k_p" = offline ]; then
            # a vCPU that does not run: only the daemon's two views must agree about it
            [ "$c_p" = "$m_p" ] || _views_say "$d vCPU $i (not online): placementctl $c_p, metadata $m_p"
            [ "$m_p" = none ] || _views_say "$d vCPU $i: metadata pins it to $m_p, kernel has no such vCPU thread"
            continue
        fi
        # a skipped record leaves out a vCPU that floats where libvirt runs it unpinned (the definition's
        # <vcpu cpuset>, else every online CPU): none in the metadata, that set in the three others
        if [ "$m_res" = skipped ] && [ "$m_p" = none ] && [ "$c_p" = "$l_p" ] && [ "$l_p" = "$k_p" ] &&
            [ "$k_p" = "$(_views_unpinned "$d" "$meta")" ]; then
            continue
        fi
        if [ "$c_p" != "$m_p" ] || [ "$m_p" != "$l_p" ] || [ "$l_p" != "$k_p" ]; then
            _views_say "$d vCPU $i: placementctl $c_p, metadata $m_p, libvirt $l_p, kernel $k_p"
        fi
    done
    # emulator (QEMU's other threads)
    _views_norm_into c_emu "$c_emu"
    [ -z "$ctl" ] || [ -z "$meta" ] || [ "$c_emu" = "$m_emu" ] ||
        _views_say "$d emulator: placementctl ${c_emu:-none}, metadata ${m_emu:-none}"
    x=$(_views_hand_emulator "$d")
    [ -z "$x" ] || _views_norm_into x "$x"
    [ -z "$x" ] || [ "$k_emu" = "$x" ] ||
        _views_say "$d emulator: pinned live by the user $x, libvirt ${l_emu:-none}, kernel (main thread) $k_emu"
    if [ "$l_emu" != "$k_emu" ] || { [ -n "$m_emu" ] && [ "$m_emu" != "$k_emu" ]; }; then
        _views_say "$d emulator: metadata ${m_emu:-none}, libvirt ${l_emu:-none}, kernel (main thread) $k_emu"
    elif [ -n "$meta" ] && [ -z "$m_emu" ] && [ "$m_res" != skipped ] && ! _views_listed "$d" "$VIEWS_HAND_EMULATOR"; then
        # a record that pins no emulator: it runs where libvirt runs it unpinned (the user's own pin aside)
        u_emu=$(_views_user_emulator "$d" "$meta")
        [ "$u_emu" = - ] || [ "$k_emu" = "$u_emu" ] ||
            _views_say "$d emulator: the record pins none, so unpinned ($u_emu), but libvirt ${l_emu:-none}, kernel (main thread) $k_emu"
    fi
    while read -r x i v m; do
        if [ "$x" != other ] || [ "$v" = "$k_emu" ]; then continue; fi
        line="$d QEMU thread $i ($(cat "/proc/$(e2e_qemu_pid "$d" 2>/dev/null)/task/$i/comm" 2>/dev/null)): kernel $v, main thread $k_emu"
        [ -z "$VIEWS_THREADS_NARROWER" ] || ! _views_within "$v" "$k_emu" ||
            line="note: $line; its own mask, narrower than the emulator pin, is a restored domain's (ledger scenario 6b)"
        _views_say "$line"
    done <<<"$kern"
    # I/O threads ("IO iothreadN"): each runs where the user pinned it live (VIEWS_HAND_IOTHREAD), else where
    # its definition's <iothreadpin> puts it, else where the record pins it (iothreads=, iothread-pin=: the
    # emulator's rule), else where libvirt runs it unpinned (the definition's <vcpu cpuset>, else every
    # online CPU); libvirt's iothreadinfo says the same as the kernel
    _views_norm_into c_io "$c_io"
    _views_norm_into c_iopin "$c_iopin"
    [ -z "$ctl" ] || [ -z "$meta" ] || [ "$c_io|$c_iopin" = "$m_io|$m_iopin" ] ||
        _views_say "$d I/O threads: placementctl ${c_io:-none} on ${c_iopin:-none}, metadata ${m_io:-none} on ${m_iopin:-none}"
    while read -r i v x; do
        [[ $i =~ ^[0-9]+$ ]] && [ -n "$v" ] && [ -z "$x" ] && _views_norm_into line "$v" && lio[$i]=$line
    done <<<"$s_iothreadinfo"
    while read -r x i v m; do
        [ "$x" = io ] || continue
        x=$(for x in $VIEWS_HAND_IOTHREAD; do [ "${x%:*}" != "$d:$i" ] || echo "${x##*:}"; done | tail -n 1)
        if [ -n "$x" ]; then
            # pinned live by the user (virsh iothreadpin), over its definition's pin too: theirs from then
            # on, never pinned back (docs/running.md)
            _views_norm_into want "$x"
            who="pinned live by the user"
        elif [ -n "${uio[$i]+set}" ]; then
            want=${uio[$i]} who="its definition's <iothreadpin>"
        elif [ -n "$meta" ] && _views_listed "$i" "${m_io//,/ }"; then
            want=$m_iopin who="the record's iothread-pin"
        elif [ -n "$meta" ]; then
            want=$(_views_unpinned "$d" "$meta") who="unpinned: the record does not pin it"
        else
            want=${lio[$i]-none} who=libvirt
        fi
        { [ "$v" = "$want" ] && [ "$v" = "${lio[$i]-none}" ]; } ||
            _views_say "$d I/O thread $i: $who $want, libvirt ${lio[$i]-none}, kernel $v"
    done <<<"$kern"
    for i in ${m_io//,/ }; do
        grep -q "^io $i " <<<"$kern" || _views_say "$d I/O thread $i: the record pins it, kernel has no such thread"
    done
    # memory nodes
    _views_norm_into c_mem "$c_mem"
    if [ -n "$ctl" ] && [ -n "$meta" ]; then
        [ "$c_mem" = "$m_mem" ] || _views_say "$d memory nodes: placementctl ${c_mem:-none}, metadata ${m_mem:-none}"
        [ "$c_bind" = "$m_bind" ] || _views_say "$d memory binding: placementctl ${c_bind:-none}, metadata ${m_bind:-none}"
    fi
    if [ -n "$meta" ] && [ "$m_mem" != "${l_nodes:-$l_cell_nodes}" ]; then
        line="$d memory: metadata ${m_mem:-none} (binding ${m_bind:-none}), libvirt ${l_mode:-no mode} ${l_nodes:-none}"
        [ -z "$l_cell_nodes" ] || line+=" (memnode ${l_cell_nodes})"
        if [ "$m_bind" = none ]; then
            line="note: $line; the decision says it bound no memory"
        else
            # libvirt refused a node this kernel lacks: the machine's limit, not the daemon's fault (an
            # adopted record says only that the binding failed: the error was its first run's)
            for x in ${m_mem//,/ }; do
                if ! _views_node_exists "$x" && [[ $c_err == *"NUMA node $x is unavailable"* || $m_bind == failed ]]; then
                    line="note: $line; node $x does not exist in this kernel (${c_err:-the record says the binding failed})"
                    break
                fi
            done
        fi
        _views_say "$line"
    fi
    case "$l_mode" in strict | restrictive)
        if [ -n "$l_nodes" ]; then
            while read -r x i v m; do
                [ -n "$x" ] && [ "$m" != "$l_nodes" ] &&
                    _views_say "$d memory of $x $i: libvirt $l_mode $l_nodes, kernel Mems_allowed_list $m"
            done <<<"$kern"
        fi
        ;;
    esac
    # a domain the daemon placed whose vCPUs run unpinned is a decision it does not hold
    [ -n "$ctl" ] && [ "$c_res" = placed ] && [ "${#mpin[@]}" -eq 0 ] &&
        _views_say "$d: placementctl says placed, the decision pins no vCPU"
    return 0
}

views_all() {
    local d running listed _VIEWS_FRESH=1 rc=0
    VIEWS_OUT=
    if ! _views_ctl_fetch; then
        printf '%s' "$VIEWS_OUT"
        return 1
    fi
    _VIEWS_KERN=()
    running=$(e2e_virsh list --name 2>/dev/null | grep . | sort)
    _VIEWS_RUNNING=$running
    listed=$(cut -d'|' -f1 <<<"$VIEWS_CTL_JSON" | grep . | sort)
    for d in $(comm -13 <(echo "$running") <(echo "$listed")); do
        _views_say "$d: placementctl lists it, libvirt does not run it"
    done
    for d in $running; do _views_domain "$d"; done
    printf '%s' "$VIEWS_OUT"
    _views_bad && rc=1
    return "$rc"
}

# _views_holders_from PINLINES: stdin "DOMAIN CPUSET" lines -> "CORE DOMAIN" for every pin that lies in one core.
_views_holders_from() {
    local d s c p core
    while read -r d s; do
        [ -n "$s" ] || continue
        core=
        for p in ${s//,/ }; do
            c=${VIEWS_CORE_OF[$p]-x}
            if [ -z "$core" ]; then core=$c; elif [ "$core" != "$c" ]; then core=x; fi
        done
        [ -n "$core" ] && [ "$core" != x ] && echo "$core $d"
    done | sort -u
}

# _views_any_of "A,B,..." "NAME ...": one of A, B, ... is one of the names (exact match).
_views_any_of() {
    local h n
    for h in ${1//,/ }; do
        for n in $2; do [ "$h" = "$n" ] && return 0; done
    done
    return 1
}

# _views_sharing_check WHO HOLDERS: prints the violation for one view.
_views_sharing_check() {
    local who=$1 holders=$2 c free='' shared='' exempt
    exempt="$VIEWS_CONSTRAINED $(awk -F'|' '$2 == "skipped" { print $1 }' <<<"$VIEWS_CTL_JSON" | paste -sd' ')"
    for ((c = 0; c < VIEWS_NCORES; c++)); do
        local hs
        hs=$(awk -v c="$c" '$1 == c { print $2 }' <<<"$holders" | paste -sd,)
        if [[ $hs == *,* ]] && _views_any_of "$hs" "$exempt"; then
            continue # the user's constraint or pin forces it there: not avoidable
        fi
        if [[ $hs == *,* ]] && [ -n "$VIEWS_SHARING_ONLY" ] && ! _views_any_of "$hs" "$VIEWS_SHARING_ONLY"; then
            continue # sharing no placement of this step made (placementd does not heal it)
        fi
        if [ -z "$hs" ] && _views_any_of "${VIEWS_CORE_PUS[c]// /,}" "$VIEWS_RESERVED"; then
            continue # kept from vCPUs: not a free core
        elif [ -z "$hs" ]; then
            free="$free${free:+,}${VIEWS_CORE_PUS[c]// /+}"
        elif [[ $hs == *,* ]]; then
            shared="$shared${shared:+; }core of CPUs ${VIEWS_CORE_PUS[c]// /+} held by $hs"
        fi
    done
    if [ -n "$shared" ] && [ -n "$free" ]; then
        _views_say "sharing ($who): $shared while CPUs $free are free"
    fi
}

# _views_map_pins: placementctl map -> "DOMAIN PU" per thread the ledger gives a domain ('+': "+ PU").
_views_map_pins() {
    local map
    map=$(pdctl map 2>/dev/null) || return 1
    awk -v corepus="$(for ((c = 0; c < VIEWS_NCORES; c++)); do printf '%s|' "${VIEWS_CORE_PUS[c]}"; done)" '
        BEGIN { n = split(corepus, cp, "|"); core = 0 }
        /^legend:/ { leg = 1; next }
        leg { m = split($0, parts, ", "); for (i = 1; i <= m; i++) { s = parts[i]; sub(/^ +/, "", s);
              name[substr(s, 1, 1)] = substr(s, 3) } next }
        /^ +cpu +[0-9]+ / { line = $0; while (match(line, /\[[^]]*\]/)) {
              g = substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH)
              split(cp[core + 1], pus, " "); for (t = 1; t <= length(g); t++) cell[pus[t]] = substr(g, t, 1)
              core++ } }
        END { for (p in cell) { ch = cell[p]; if (ch == "." || ch == "#") continue
              print (ch == "+" ? "+" : name[ch]), p } }' <<<"$map"
}

views_sharing() {
    local d kern i v m x map_h kern_h pins held map_want
    VIEWS_OUT=
    [ -n "${_VIEWS_FRESH:-}" ] || _views_ctl_fetch || { printf '%s' "$VIEWS_OUT"; return 1; }
    # the daemon's view: list's pins, and its map must say the same
    pins=$(awk -F'|' '{ n = split($7, p, ";"); for (i = 1; i <= n; i++) { sub(/^[0-9]+=/, "", p[i]); if (p[i] != "") print $1, p[i] } }' <<<"$VIEWS_CTL_JSON" |
        while read -r d v; do _views_norm_into v "$v" && echo "$d $v"; done)
    # the map also shows the CPUs the ledger holds for a domain's QEMU threads (its definition's own
    # <emulatorpin>): the same as list's vCPU pins with those
    held=$(awk -F'|' '$9 != "" { n = split($9, r, ","); for (i = 1; i <= n; i++) print $1, r[i] }' <<<"$VIEWS_CTL_JSON" |
        while read -r d v; do _views_norm_into v "$v" && for x in ${v//,/ }; do echo "$d $x"; done; done)
    map_want=$(printf '%s\n%s\n' "$pins" "$held" | grep . | _views_holders_from)
    map_h=$(_views_map_pins | sort -u | _views_holders_from)
    if ! grep -q ' +$' <<<"$map_h" && [ "$map_h" != "$map_want" ]; then
        _views_say "cores: placementctl list says $(tr '\n' ' ' <<<"$map_want")(core domain, vCPUs and held CPUs), placementctl map says $(tr '\n' ' ' <<<"$map_h")"
    fi
    # a core the ledger holds for a domain's QEMU threads (a definition's <emulatorpin> or <iothreadpin> of
    # a core or two, an emulator pinned by hand) is not free for others (docs/algorithm.md, section 6): in
    # both views it counts as that domain's, and another domain's vCPU there while a core is free is sharing
    _views_sharing_check "placementctl" "$map_want"
    # views_all read the running domains just now (_VIEWS_RUNNING)
    [ -n "${_VIEWS_FRESH:-}" ] || _VIEWS_RUNNING=$(e2e_virsh list --name 2>/dev/null)
    kern_h=$(for d in $_VIEWS_RUNNING; do
        if [ -n "${_VIEWS_FRESH:-}" ] && [ -n "${_VIEWS_KERN[$d]+set}" ]; then
            printf '%s\n' "${_VIEWS_KERN[$d]}"
        else
            _views_kernel "$d"
        fi | while read -r x i v m; do [ "$x" = vcpu ] && echo "$d $v"; done
    done | cat - <(printf '%s\n' "$held") | _views_holders_from)
    _views_sharing_check "kernel" "$kern_h"
    printf '%s' "$VIEWS_OUT"
    ! _views_bad
}

# _views_pass [views]: views_all, then (without "views") views_sharing on what views_all read (placementctl's
# list, libvirt's running domains); prints both, returns 1 if either disagrees.
_views_pass() {
    local rc=0
    views_all || rc=1
    if [ "${1-}" != views ]; then _VIEWS_FRESH=1 views_sharing || rc=1; fi
    return "$rc"
}

# views_settle TENTHS [views]: poll views_all and views_sharing (with "views", views_all alone) until both agree,
# or until the same disagreement was seen three times in a row (the daemon acts within milliseconds of an event:
# what stays is its answer; a heal move it makes on its own, between its pins and its record, is seen through),
# or TENTHS/10 s passed; prints the last disagreement (and notes) and returns 1 if they never agreed.
VIEWS_LAST=
views_settle() {
    local n=$1 i=0 rc prev='' same=0
    while :; do
        rc=0
        VIEWS_LAST=$(_views_pass "${2-}") || rc=1
        VIEWS_LAST=${VIEWS_LAST:+$VIEWS_LAST$'\n'}
        [ "$rc" -eq 0 ] && break
        [ "$i" -ge "$n" ] && break
        if [ "$VIEWS_LAST" = "$prev" ]; then same=$((same + 1)); else same=0; fi
        [ "$same" -ge 2 ] && break
        prev=$VIEWS_LAST
        sleep 0.5
        i=$((i + 5))
    done
    printf '%s' "$VIEWS_LAST"
    return "$rc"
}

views_vcpu_nodes() {
    local x i v m p
    _views_kernel "$1" | while read -r x i v m; do
        [ "$x" = vcpu ] || continue
        for p in ${v//,/ }; do echo "${VIEWS_NODE_OF[$p]-?}"; done
    done | sort -n -u | paste -sd,
}
