#!/bin/bash
# Builds every libFuzzer target in tests/fuzz (fuzz-*.c) with clang, ASan and UBSan.
#   tests/fuzz/build.sh [OUTDIR]        (default: build-fuzz, relative to the source root)
# The project's lib/core, lib/host and policies/ sources are listed below (keep them in step with their
# meson.build files: the build warns and follows meson when they differ); they are compiled with the
# same instrumentation into one static archive, so a target links only what it uses. Not linked:
# daemon/main.c, tools/.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-build-fuzz}
case $out in /*) ;; *) out=$root/$out ;; esac

lib_sources=(
        lib/core/cpuset.c
        lib/core/distances.c
        lib/core/topology.c
        lib/core/topology-pages.c
        lib/core/file-read.c
        lib/core/nodesets.c
        lib/core/ledger.c
        lib/core/plan.c
        lib/core/config.c
        lib/core/config-lines.c
        lib/core/size.c
        lib/core/trace.c
        lib/core/decision-json.c
        lib/core/definition-snippet.c
        lib/core/hostmap.c
        lib/core/hostmap-json.c
        lib/core/decision-text.c
        lib/core/domain-xml.c
        lib/core/domain-xml-numa.c
        lib/core/domain-xml-devices.c
        lib/core/pci.c
        lib/core/dbus-address.c
        lib/core/metadata.c
        lib/core/decision.c
        lib/core/ratelimit.c
        lib/core/cpu-features.c
        lib/core/cpu-json.c
        lib/core/load.c
        lib/core/domain-request.c
        lib/core/text-safe.c
        lib/core/json-get.c
        lib/core/spec-record.c
        lib/core/uri-public.c
        lib/host/topology-load.c
        lib/host/topology-xml.c
        lib/host/topology-xml-v3.c
        lib/host/topology-xml-trial.c
        lib/host/topology-kinds.c
        lib/host/topology-pci.c
        lib/host/topology-caches.c
        lib/host/guest-cgroup.c
        lib/host/kernel-tiers.c
        lib/host/virt-event.c
        lib/host/virt-domain.c
        lib/host/virt-bare.c
        lib/host/bus-event.c
        lib/host/virt-stats.c
        lib/host/virt-cpu.c
        lib/host/virt-conn.c
        policies/policy.c
        policies/host-view.c
        policies/set-search.c
        policies/overcommit.c
        policies/load-rules.c
        policies/finish.c
        policies/finish-memory.c
        policies/finish-housekeeping.c
        policies/finish-constraints.c
        policies/finish-sharing.c
        policies/finish-reason.c
        policies/finish-caches.c
        policies/finish-realtime.c
        policies/finish-kinds.c
        policies/memory-tiers.c
        policies/cell-order.c
        policies/cells.c
        policies/explicit.c
        policies/compat.c
        policies/adopt.c
        policies/rebalance.c
        policies/heal.c
        policies/repin.c
        policies/rehouse.c
)

CC=${CC:-clang}
if ! command -v "$CC" >/dev/null; then
        echo "build.sh: $CC not found (run .ci/install-fuzz-deps.sh)" >&2
        exit 1
fi

# The meson lists are what the project builds: warn when they moved on, and follow them (a source this list
# lacks is added, one that no longer exists is dropped) so that the fuzz build does not break meanwhile.
mapfile -t in_meson < <(for dir in lib/core lib/host policies; do
                                sed -n "s|^[[:space:]]*'\([^']*\.c\)',*$|$dir/\1|p" "$root/$dir/meson.build"
                        done | sort)
listed=$(printf '%s\n' "${lib_sources[@]}" | sort)
if [ "$listed" != "$(printf '%s\n' "${in_meson[@]}")" ]; then
        echo "build.sh: warning: update lib_sources in tests/fuzz/build.sh; lib/core, lib/host, policies meson.build" \
                "differ:" >&2
        diff <(echo "$listed") <(printf '%s\n' "${in_meson[@]}") | sed -n 's/^< /  only here: /p; s/^> /  only in meson: /p' >&2 || true
fi
sources=()
while read -r f; do
        [ -n "$f" ] && [ -e "$root/$f" ] && sources+=("$f")
done < <(printf '%s\n' "${lib_sources[@]}" "${in_meson[@]}" | awk '!seen[$0]++')

version=$(sed -n "s/^[[:space:]]*version : '\([^']*\)'.*/\1/p" "$root/meson.build" | head -n1)
pkgs=(glib-2.0 json-glib-1.0 hwloc libvirt libevent libsystemd)
read -r -a pkg_cflags <<<"$(pkg-config --cflags "${pkgs[@]}")"
read -r -a pkg_libs <<<"$(pkg-config --libs "${pkgs[@]}")"
# shellcheck disable=SC2054 # the commas belong to -fsanitize=
cflags=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -D_GNU_SOURCE "-DPLACEMENTD_VERSION=\"${version:-0}\""
        "-DSYSCONFDIR=\"/etc\"" -Wall -Wno-unused-parameter
        -I"$root/lib/core" -I"$root/lib/host" -I"$root/policies" "${pkg_cflags[@]}")

# The build is skipped when the sources, headers, this script, flags and compiler are those of the last
# one in $out and its targets are there (the fuzz stage runs run.sh twice: 30 s saved).
key=$({
        printf '%s\n' "$("$CC" --version | head -n1)" "${cflags[@]}" "${pkg_libs[@]}"
        cd "$root" && { find lib policies tests/fuzz -name '*.[ch]'; echo tests/fuzz/build.sh; } | LC_ALL=C sort |
                xargs sha256sum
} | sha256sum | cut -d' ' -f1)
up_to_date=1 n=0
[ "$(cat "$out/build.key" 2>/dev/null)" = "$key" ] || up_to_date=0
for src in "$root"/tests/fuzz/fuzz-*.c; do
        [ -x "$out/$(basename "$src" .c)" ] || up_to_date=0
        n=$((n + 1))
done
if ((up_to_date)); then
        echo "build.sh: $n fuzz targets in $out, up to date"
        exit 0
fi

rm -rf "$out/obj" "$out/build.key"
mkdir -p "$out/obj"
export CC out root
# One compiler per CPU; each gets the flags, then the source (last argument).
# shellcheck disable=SC2016 # expanded by the inner bash
printf '%s\0' "${sources[@]}" |
        xargs -0 -n1 -P "$(nproc)" bash -c 'f=${!#}; exec "$CC" "${@:1:$#-1}" -c "$root/$f" -o "$out/obj/${f//\//_}.o"' \
                bash "${cflags[@]}"
rm -f "$out/libplacement-fuzz.a"
ar rcs "$out/libplacement-fuzz.a" "$out"/obj/*.o

n=0
for src in "$root"/tests/fuzz/fuzz-*.c; do
        name=$(basename "$src" .c)
        "$CC" "${cflags[@]}" "$src" "$out/libplacement-fuzz.a" "${pkg_libs[@]}" -lm -o "$out/$name"
        n=$((n + 1))
done
echo "$key" >"$out/build.key"
echo "build.sh: $n fuzz targets in $out"
