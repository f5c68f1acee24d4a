#!/bin/bash
# shellcheck disable=SC2317 # functions reached through the traps
# shellcheck source-path=SCRIPTDIR
# Guest CPU advice against a real libvirtd + QEMU (TCG): libvirt's baseline, comparison and domain-capabilities
# APIs, which libvirt's test driver lacks. Run as root from anywhere:
#   bash tests/e2e/cpu.sh [BUILD_DIR]         (BUILD_DIR: default "build", relative to the cwd or the repo)
# Uses BUILD_DIR/tests/test-virt_cpu and BUILD_DIR/tools/placementctl ($CPU_TEST / $PLACEMENTCTL override).
# Prints "ok N - ..." / "not ok N - ..." per check, diagnostics as "# ...", and last exactly
# "cpu: N passed, M failed"; exits non-zero when a check failed. Logs are kept on failure (or with E2E_KEEP=1).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=libvirt-env.sh
. "$HERE/libvirt-env.sh"
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"

BUILD=${1:-build}
if [ ! -d "$BUILD" ] && [ -d "$ROOT/$BUILD" ]; then
    BUILD=$ROOT/$BUILD
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || BUILD=
CPU_TEST=${CPU_TEST:-$BUILD/tests/test-virt_cpu}
PLACEMENTCTL=${PLACEMENTCTL:-$BUILD/tools/placementctl}
CPUS=$ROOT/tests/cpus
URI=$E2E_LIBVIRT_URI
DEF=${E2E_DOMAIN_PREFIX}cpu-default # no <cpu>: QEMU's qemu64
MAX=${E2E_DOMAIN_PREFIX}cpu-max     # <cpu mode='maximum'/>
HM=${E2E_DOMAIN_PREFIX}cpu-hm       # persistent, <cpu mode='host-model'/>

tap_begin cpu
tap_tmpdir e2e-cpu "${E2E_KEEP:-}"
TAP_KEEP_FAILED=1
WORK=$TAP_TMP

tap_cleanup() {
    e2e_virsh destroy "$HM" >/dev/null 2>&1
    e2e_virsh undefine "$HM" >/dev/null 2>&1
    e2e_libvirt_stop "$WORK" || not_ok "e2e_libvirt_stop during cleanup"
    tap_log "$WORK/libvirtd.log"
}

# json FILE EXPR: evaluate a Python expression on the JSON document d (and helper dom(name)).
json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
def dom(name):
    return next(x for x in d["domains"] if x["domain"] == name)
def host(file):
    return next(x for x in d["hosts"] if x["file"].endswith(file))
v = eval(sys.argv[2])
print(" ".join(map(str, v)) if isinstance(v, list) else v)
EOF
}

# ctl NAME ARGS...: run placementctl, stdout to $WORK/NAME, exit code echoed.
ctl() {
    local name=$1
    shift
    "$PLACEMENTCTL" "$@" >"$WORK/$name" 2>"$WORK/$name.err"
    echo $?
}

must "binaries exist ($CPU_TEST, $PLACEMENTCTL)" test -x "$CPU_TEST" -a -x "$PLACEMENTCTL"
must "e2e_libvirt_start" e2e_libvirt_start "$WORK"

# Domains: the default CPU, maximum, and a persistent host-model one (its live XML shows a custom model).
must "e2e_domain_start $DEF (no <cpu>)" e2e_domain_start "$DEF" 1
sed "s#</vcpu>#</vcpu><cpu mode='maximum'/>#" "$E2E_DOMAIN_TEMPLATE" >"$WORK/max.xml.in"
start_max() { E2E_DOMAIN_TEMPLATE=$WORK/max.xml.in e2e_domain_start "$MAX" 1; }
must "e2e_domain_start $MAX (<cpu mode='maximum'/>)" start_max
sed -e "s/@NAME@/$HM/" -e "s/@VCPUS@/1/" -e "s#</vcpu>#</vcpu><cpu mode='host-model'/>#" "$E2E_DOMAIN_TEMPLATE" \
    >"$WORK/hm.xml"
must "define and start $HM (persistent, <cpu mode='host-model'/>)" \
    bash -c "timeout 30 virsh -c '$URI' define '$WORK/hm.xml' >/dev/null && timeout 30 virsh -c '$URI' start '$HM' >/dev/null"

# 1. The Check suite's hypervisor tests (skipped without a libvirtd) against this one.
out=$(PLACEMENTD_SRCDIR=$ROOT PLACEMENTD_CPU_URI=$URI PLACEMENTD_CPU_VIRTTYPE=qemu PLACEMENTD_CPU_DOMAIN=$DEF \
    CK_DEFAULT_TIMEOUT=120 "$CPU_TEST" 2>&1)
rc=$?
diag "$out"
check "test-virt_cpu passes against $URI" test "$rc" -eq 0
check "test-virt_cpu ran the hypervisor tests (none skipped)" \
    bash -c "! grep -q '# skip' <<<\"\$1\" && grep -q '100%: Checks: 13,' <<<\"\$1\"" _ "$out"

# 2. cpu-advice on every running domain.
HOST_AES=$(grep -qw aes /proc/cpuinfo && echo True || echo False)
expect "cpu-advice --json exits 0" 0 "$(ctl advice.json cpu-advice --connect="$URI" --json)"
expect "$DEF runs qemu64 (custom)" "qemu64 custom" "$(json "$WORK/advice.json" '[dom("'"$DEF"'")["model"], dom("'"$DEF"'")["mode"]]')"
expect "$DEF: aes hidden exactly when the host has it" "$HOST_AES" \
    "$(json "$WORK/advice.json" '"aes" in [h["feature"] for h in dom("'"$DEF"'")["hidden"]]')"
expect "$DEF: every hidden feature has a note" "True" \
    "$(json "$WORK/advice.json" 'all(h["note"] for h in dom("'"$DEF"'")["hidden"])')"
expect "$DEF: a suggestion from domain capabilities (host-model)" "host-model True" \
    "$(json "$WORK/advice.json" '[dom("'"$DEF"'")["suggested"]["mode"], bool(dom("'"$DEF"'")["suggested"]["model"])]')"
expect "$DEF: verdict matches what the suggestion gives back" "True" \
    "$(json "$WORK/advice.json" '(dom("'"$DEF"'")["verdict"] == "improvable") == bool(dom("'"$DEF"'")["suggested"]["recovers"])')"
expect "$MAX: maximum hides nothing" "host-cpu maximum 0" \
    "$(json "$WORK/advice.json" '[dom("'"$MAX"'")["verdict"], dom("'"$MAX"'")["mode"], len(dom("'"$MAX"'")["hidden"])]')"
expect "$HM: host-model (read from the persistent definition) hides nothing" "host-cpu host-model" \
    "$(json "$WORK/advice.json" '[dom("'"$HM"'")["verdict"], dom("'"$HM"'")["mode"]]')"
expect "cpu-advice $DEF (text) exits 0" 0 "$(ctl advice.out cpu-advice --connect="$URI" "$DEF")"
check "text names the model" grep -q "cpu:     qemu64" "$WORK/advice.out"
check "text suggests host-model" grep -q "suggest: <cpu mode='host-model'/>" "$WORK/advice.out"
diag "$(head -n 12 "$WORK/advice.out")"
expect "cpu-advice of an unknown domain exits 4" 4 "$(ctl nosuch.out cpu-advice --connect="$URI" e2e-no-such)"

# 3. cpu-baseline of real host CPUs.
HSW=$CPUS/intel-haswell-xeon-e5-2650-v3.xml
SKX=$CPUS/intel-skylake-xeon-gold-6148.xml
expect "cpu-baseline --map-only Haswell Skylake exits 0" 0 \
    "$(ctl map.json cpu-baseline --connect="$URI" --json --map-only "$HSW" "$SKX")"
expect "map baseline: Haswell-noTSX, migratable, both can run it" "map Haswell-noTSX True True True" \
    "$(json "$WORK/map.json" '[d["api"], d["model"], d["migratable"]] + [h["can_run"] for h in d["hosts"]]')"
expect "map baseline: Skylake loses AVX-512, Haswell nothing relevant" "True 0" \
    "$(json "$WORK/map.json" '["avx512f" in host("skylake-xeon-gold-6148.xml")["loses"], len(host("haswell-xeon-e5-2650-v3.xml")["loses"])]')"
expect "map baseline drops invtsc (blocks migration)" "False" "$(json "$WORK/map.json" '"invtsc" in d["features"]')"
expect "cpu-baseline --virttype=qemu (hypervisor API) exits 0" 0 \
    "$(ctl hv.json cpu-baseline --connect="$URI" --json --virttype=qemu "$HSW" "$SKX")"
expect "hypervisor baseline: both hosts can run it" "hypervisor Intel True True" \
    "$(json "$WORK/hv.json" '[d["api"], d["vendor"]] + [h["can_run"] for h in d["hosts"]]')"
diag "hypervisor baseline on this host: $(json "$WORK/hv.json" 'd["model"]'), this host: $(json "$WORK/hv.json" 'd["this_host"]["result"]')"
expect "cpu-baseline Intel + AMD is an input error (exit 2)" 2 \
    "$(ctl mixed.out cpu-baseline --connect="$URI" "$HSW" "$CPUS/amd-rome-epyc-7502.xml")"
check "... saying the vendors differ" grep -q "vendors" "$WORK/mixed.out.err"

# 4. This host's own descriptions, as an operator would collect them.
e2e_virsh capabilities >"$WORK/caps.xml"
e2e_virsh domcapabilities --virttype qemu >"$WORK/domcaps.xml"
# TCG's host-model need not be the host's vendor (seen: an Intel Broadwell host whose qemu domcapabilities
# offer host-model EPYC): then the two descriptions are an Intel and an AMD CPU, which no baseline joins
vendor_of() { sed -n 's:.*<vendor>\(.*\)</vendor>.*:\1:p' "$1" | head -n 1; }
host_vendor=$(vendor_of "$WORK/caps.xml") model_vendor=$(vendor_of "$WORK/domcaps.xml")
if [ -n "$host_vendor" ] && [ -n "$model_vendor" ] && [ "$host_vendor" != "$model_vendor" ]; then
    diag "this host's CPU is $host_vendor, its qemu host-model $model_vendor"
    expect "cpu-baseline of an $host_vendor host and an $model_vendor host-model is an input error (exit 2)" 2 \
        "$(ctl own.out cpu-baseline --connect="$URI" --virttype=qemu "$WORK/caps.xml" "$WORK/domcaps.xml")"
    check "... saying the vendors differ" grep -q "vendors" "$WORK/own.out.err"
else
    expect "cpu-baseline of this host's capabilities + domcapabilities exits 0" 0 \
        "$(ctl own.json cpu-baseline --connect="$URI" --json --virttype=qemu "$WORK/caps.xml" "$WORK/domcaps.xml")"
    expect "this host can run the baseline of its own CPUs" "True" \
        "$(json "$WORK/own.json" 'd["this_host"]["result"] in ("identical", "superset")')"
fi
if grep -q "policy='disable'" "$WORK/domcaps.xml"; then
    expect "--map-only refuses a host-model that disables features (exit 2)" 2 \
        "$(ctl own-map.out cpu-baseline --connect="$URI" --map-only "$WORK/domcaps.xml")"
fi
exit 0
