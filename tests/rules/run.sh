#!/bin/bash
# The fleet rules and dashboard: promtool checks and unit-tests the Prometheus rules, and every metric
# name the rules and the Grafana dashboard use must be one a running placementd really exports (the
# daemon runs on libvirt's in-process test driver, as in tests/metrics/run.sh, and is scraped with curl).
#   bash tests/rules/run.sh [BUILD_DIR]     ends with "rules: N passed, M failed"
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
[ -d "$BUILD" ] || BUILD=$ROOT/$BUILD
BUILD=$(cd "$BUILD" && pwd)
RULES=$ROOT/monitoring/prometheus/placementd.rules.yml
TESTS=$ROOT/monitoring/prometheus/placementd.rules.test.yml
DASHBOARD=$ROOT/monitoring/grafana/placementd.json
TMP=$(mktemp -d /tmp/placementd-rules.XXXXXX)
PID=
passed=0 failed=0 n=0

check() { # description, command...
        local what=$1
        shift
        n=$((n + 1))
        if "$@" >"$TMP/out" 2>&1; then
                passed=$((passed + 1))
                echo "ok $n - $what"
        else
                failed=$((failed + 1))
                echo "not ok $n - $what"
                sed 's/^/#   /' "$TMP/out" | tail -20
        fi
}

cleanup() {
        [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT

for tool in promtool curl python3; do
        command -v "$tool" >/dev/null || { echo "# skip: $tool is not installed"; exit 77; }
done

check "promtool check rules" promtool check rules "$RULES"
check "promtool test rules (alert and recording rule cases)" promtool test rules "$TESTS"
check "the dashboard is valid JSON with a query in every panel" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
panels = [p for p in d["panels"] if p["type"] != "row"]
assert panels and all(t["expr"] for p in panels for t in p["targets"]), "a panel without a query"
' "$DASHBOARD"

# ---- the names, against a live scrape ----------------------------------------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$TMP/conf"
"$BUILD/daemon/placementd" --config="$TMP/conf" --connect=test:///default --bus=none --foreground \
        --topology="synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2" 2>"$TMP/log" &
PID=$!
for _ in $(seq 100); do
        curl -fsS "http://127.0.0.1:$PORT/metrics" -o "$TMP/scrape" 2>/dev/null && break
        sleep 0.1
done
check "a running placementd was scraped" test -s "$TMP/scrape"

# Exported names: every sample's name, every declared family, and a histogram's _bucket/_sum/_count.
{
        sed -n 's/^\(placementd_[a-zA-Z0-9_]*\)[{ ].*/\1/p' "$TMP/scrape"
        awk '$1 == "#" && $2 == "TYPE" { print $3; if ($4 == "histogram") print $3 "_bucket\n" $3 "_sum\n" $3 "_count" }' \
                "$TMP/scrape"
} | sort -u >"$TMP/exported"
# Recording rules the rules file defines: other rules and the dashboard may use them.
sed -n 's/^ *- record: *\([^ ]*\).*/\1/p' "$RULES" | sort -u >"$TMP/recorded"
echo "# $(wc -l <"$TMP/exported") names exported, $(wc -l <"$TMP/recorded") recorded"

# unknown_names FILE...: the placementd series names a file uses that neither the daemon exports nor a
# rule records (a name with a colon is a recording rule's by Prometheus's convention).
unknown_names() {
        grep -ohE '[a-zA-Z0-9_:]*placementd_[a-zA-Z0-9_:]*' "$@" | sort -u | while read -r name; do
                if [[ $name == *:* ]]; then
                        grep -qxF "$name" "$TMP/recorded" || echo "$name"
                else
                        grep -qxF "$name" "$TMP/exported" || echo "$name"
                fi
        done
}

for f in "$RULES" "$DASHBOARD"; do
        used=$(grep -ohE '[a-zA-Z0-9_:]*placementd_[a-zA-Z0-9_:]*' "$f" | sort -u | wc -l)
        check "every name $(basename "$f") uses ($used) is exported or recorded" \
                sh -c "test -z \"\$(cat)\" || { echo unknown:; cat; exit 1; }" < <(unknown_names "$f")
done
# The check itself must catch a name the daemon does not export, and an unrecorded rule name.
printf 'expr: rate(placementd_decisions_total[5m]) + placementd_no_such_metric + instance:placementd_nope:sum\n' \
        >"$TMP/bogus"
check "a misspelt metric and an unrecorded rule name are reported" \
        test "$(unknown_names "$TMP/bogus" | tr '\n' ' ')" = "instance:placementd_nope:sum placementd_no_such_metric "

echo "# figures: $(grep -c -- '- alert:' "$RULES") alerts, $(grep -c -- '- record:' "$RULES") recording rules," \
        "$(grep -c -- '- eval_time:' "$TESTS") alert cases, $(grep -c -- '- expr:' "$TESTS") expression cases," \
        "$(python3 -c 'import json,sys; print(sum(p["type"] != "row" for p in json.load(open(sys.argv[1]))["panels"]))' "$DASHBOARD") dashboard panels"
echo "rules: $passed passed, $failed failed"
((failed == 0))
