#!/bin/bash
# Builds every libFuzzer target in tests/fuzz (fuzz-*.c) with clang, ASan and UBSan.
#   tests/fuzz/build.sh [OUTDIR]        (default: build-fuzz, relative to the source root)
# The project's lib/ and policies/ sources are listed below (keep them in step with lib/meson.build and
# policies/meson.build: the build warns and follows meson when they differ); they are compiled with the
# same instrumentation into one static archive, so a target links only what it uses. Not linked:
# daemon/main.c, tools/.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-build-fuzz}
case $out in /*) ;; *) out=$root/$out ;; esac

lib_sources=(
        lib/cpuset.c
        lib/distances.c
        lib/topology.c
        lib/topology-xml.c
        lib/file-read.c
        lib/nodesets.c
        lib/ledger.c
        lib/plan.c
        lib/config.c
        lib/size.c
        lib/trace.c
        lib/decision-json.c
        lib/hostmap.c
        lib/decision-text.c
        lib/domain-xml.c
        lib/metadata.c
        lib/decision.c
        lib/virt-event.c
        lib/virt-domain.c
        lib/bus-event.c
        lib/virt-stats.c
        lib/cpu-features.c
        lib/cpu-json.c
        lib/virt-cpu.c
        policies/policy.c
        policies/explicit.c
        policies/compat.c
        policies/adopt.c
        policies/rebalance.c
)

CC=${CC:-clang}
if ! command -v "$CC" >/dev/null; then
        echo "build.sh: $CC not found (run .ci/install-fuzz-deps.sh)" >&2
        exit 1
fi

# The meson lists are what the project builds: warn when they moved on, and follow them (a source this list
# lacks is added, one that no longer exists is dropped) so that the fuzz build does not break meanwhile.
mapfile -t in_meson < <( (sed -n "s/^[[:space:]]*'\([^']*\.c\)',*$/lib\/\1/p" "$root/lib/meson.build"
                          sed -n "s/^[[:space:]]*'\([^']*\.c\)',*$/policies\/\1/p" "$root/policies/meson.build") | sort)
listed=$(printf '%s\n' "${lib_sources[@]}" | sort)
if [ "$listed" != "$(printf '%s\n' "${in_meson[@]}")" ]; then
        echo "build.sh: warning: update lib_sources in tests/fuzz/build.sh; lib/meson.build + policies/meson.build" \
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
cflags=(-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -D_GNU_SOURCE "-DPLACEMENTD_VERSION=\"${version:-0}\""
        "-DSYSCONFDIR=\"/etc\"" -Wall -Wno-unused-parameter
        -I"$root/lib" -I"$root/policies" -I"$root/daemon" "${pkg_cflags[@]}")

rm -rf "$out/obj"
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
echo "build.sh: $n fuzz targets in $out"
