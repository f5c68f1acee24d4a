#!/bin/bash
# The fleet rules and dashboard: promtool checks and unit-tests the Prometheus rules, and every metric
# name the rules and the Grafana dashboard use must be one a running placementd really exports (the
# daemon runs on libvirt's in-process test driver, as in tests/metrics/run.sh, and is scraped with curl).
#   bash tests/rules/run.sh [BUILD_DIR]     ends with "rules: N passed, M failed"
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
tap_build "${1:-}"
RULES=$ROOT/monitoring/prometheus/placementd.rules.yml
TESTS=$ROOT/monitoring/prometheus/placementd.rules.test.yml
DASHBOARD=$ROOT/monitoring/grafana/placementd.json
need promtool curl python3
tap_begin rules
tap_tmpdir rules
TMP=$TAP_TMP
TAP_CAPTURE=1
PD_LOG=$TMP/log
tap_cleanup() { stop_pid "$PD_PID"; }

check "promtool check rules" promtool check rules "$RULES"
check "promtool test rules (alert and recording rule cases)" promtool test rules "$TESTS"
check "the dashboard is valid JSON with a query in every panel" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
panels = [p for p in d["panels"] if p["type"] != "row"]
assert panels and all(t["expr"] for p in panels for t in p["targets"]), "a panel without a query"
' "$DASHBOARD"

# ---- the names, against a live scrape ----------------------------------------------------------------
PORT=$(free_port)
printf '[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$TMP/conf"
placementd_start --config="$TMP/conf" --connect=test:///default --bus=none \
        --topology="synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"
scrape() { curl -fsS "http://127.0.0.1:$PORT/metrics" -o "$TMP/scrape" 2>/dev/null; }
wait_for 10 scrape
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
