# shellcheck shell=bash
# What the attack scripts share about the daemon they attack: it starts and stops test domains from a
# trace (--demo) with its stdout stamped with the time, and an unprivileged probe times GetStatus. Sourced;
# runs nothing on load. Needs TMP (the daemon's stamped stdout in $TMP/out, the probe's report in
# $TMP/probe).
#
#   stamp                  stdin to stdout, each line after the time in microseconds
#   probe_figures          P50, P99 and MAX (ms) from the probe's report
#   p99_below BOUND-MS     the probe ran and its p99 is below BOUND-MS (PROBE_RC: the probe's exit status)
#   placements FROM TO     of the domains the trace started between FROM and TO (microseconds): STARTED,
#                          PLACED, and WORST, the slowest placement in ms

stamp() { while IFS= read -r line; do printf '%s %s\n' "${EPOCHREALTIME/./}" "$line"; done; }

# shellcheck disable=SC2034 # for the scripts that source this file
probe_figures() {
        read -r P50 P99 MAX < <(sed -n 's/.*p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms, max \([0-9.]*\) ms.*/\1 \2 \3/p' \
                "$TMP/probe")
}

p99_below() {
        [ "$PROBE_RC" -eq 0 ] && [ -n "${P99:-}" ] && awk -v p="$P99" -v b="$1" 'BEGIN { exit !(p < b) }'
}

placements() {
        local t name d ms
        WORST=0 STARTED=0 PLACED=0
        while read -r t name; do
                ((t >= $1 && t <= $2)) || continue
                STARTED=$((STARTED + 1))
                d=$(awk -v n="$name" '$2 == n && $3 ~ /^\(/ { print $1; exit }' "$TMP/out")
                [ -n "$d" ] || continue
                PLACED=$((PLACED + 1))
                ms=$(((d - t) / 1000))
                ((ms > WORST)) && WORST=$ms
        done < <(awk '$2 == "---" && $3 == "start" { print $1, $4 }' "$TMP/out")
}
