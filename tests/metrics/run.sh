#!/bin/bash
# The metrics endpoint, scraped by a real client (curl) and validated by Prometheus's own promtool.
# The daemon runs on libvirt's in-process test driver, whose one running domain ("test") it places.
#   bash tests/metrics/run.sh [BUILD_DIR]     ends with "metrics: N passed, M failed"
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
tap_build "${1:-}"
tap_begin metrics
tap_tmpdir metrics
TMP=$TAP_TMP
TAP_CAPTURE=1
PD_LOG=$TMP/log
HOLDER=
ADDED=
tap_cleanup() {
        stop_pid "$PD_PID"
        stop_pid "$HOLDER"
        bus_stop
        [ -z "$ADDED" ] || ip addr del "$ADDED/32" dev lo 2>/dev/null
}

PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
printf '[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$TMP/conf"
placementd_start --config="$TMP/conf" --connect=test:///default --bus=none \
        --topology="synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"
scrape() { curl -fsS "$URL" -o "$TMP/m" 2>/dev/null; }
wait_for 10 scrape

# name-with-labels expected-value: scraped again until it shows (a page is rendered at most once a second)
metric_now() { scrape && grep -qxF "$1 $2" "$TMP/m"; }
metric() { wait_for 3 metric_now "$@"; }

check "GET /metrics answers 200" curl -fsS "$URL" -o "$TMP/m"
check "Content-Type is the Prometheus text format" \
        sh -c "curl -fsS -D - -o /dev/null '$URL' | grep -qi '^content-type: text/plain; version=0.0.4'"
check "promtool check metrics accepts the exposition" sh -c "promtool check metrics <'$TMP/m'"
check "decisions_total counts the placed domain" metric 'placementd_decisions_total{policy="explicit",result="placed"}' 1
check "domains gauge: 1 placed" metric 'placementd_domains{result="placed"}' 1
check "free cores per node: node 0 has none left, node 1 two" \
        sh -c "grep -qxF 'placementd_node_free_cores{node=\"0\"} 0' '$TMP/m' && grep -qxF 'placementd_node_free_cores{node=\"1\"} 2' '$TMP/m'"
check "free memory per node is reported" grep -q '^placementd_node_free_memory_bytes{node="1"} 8589934592$' "$TMP/m"
check "no vCPU shares a core under explicit" metric placementd_vcpus_sharing_core 0
check "libvirt connected" metric placementd_libvirt_connected 1
check "event-to-pin histogram has +Inf, sum and count" \
        sh -c "grep -q '^placementd_event_to_pin_seconds_bucket{le=\"+Inf\"} ' '$TMP/m' && grep -q '^placementd_event_to_pin_seconds_count ' '$TMP/m'"
check "another path is 404" sh -c "test \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/other)\" = 404"
check "POST is refused" sh -c "test \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST '$URL')\" != 200"

printf '[Metrics]\nListen=127.0.0.1:%s\n[Placement]\nPolicy=bogus\n' "$PORT" >"$TMP/conf"
kill -HUP "$PD_PID"
check "a failed reload is counted and metrics keep answering" metric 'placementd_config_reloads_total{result="failed"}' 1
printf '[Metrics]\nListen=127.0.0.1:%s\n' "$PORT" >"$TMP/conf"
kill -HUP "$PD_PID"
check "a good reload is counted" metric 'placementd_config_reloads_total{result="ok"}' 1
check "placementd still runs" kill -0 "$PD_PID"

# hugepage pools, apart from general memory: node 0 has 32 x 2 MiB, node 1 64 x 2 MiB, all free
placementd_stop
placementd_start --config="$TMP/conf" --connect=test:///default --bus=none \
        --topology="$ROOT/tests/topologies/two-node-hugepages.xml"
wait_for 10 scrape
check "hugepage pool per node and page size" metric 'placementd_node_hugepages_bytes{node="1",page_size="2097152"}' 134217728
check "free hugepages per node and page size" metric 'placementd_node_free_hugepages_bytes{node="0",page_size="2097152"}' 67108864
check "general memory leaves the pools out" metric 'placementd_node_free_memory_bytes{node="0"}' 1006632960
check "promtool accepts it" sh -c "promtool check metrics <'$TMP/m'"

# a Listen= it cannot serve at start: configuration a restart would meet again exits 2, which the unit's
# RestartPreventExitStatus=2 does not restart (a link-local address without its interface: EINVAL); an
# address not configured yet (a NIC that comes up later in the boot) passes: the daemon runs on without
# metrics, binding it again with backoff
placementd_stop
for case in "[fe80::1]:$PORT 2" "192.0.2.77:$PORT 124"; do
        listen=${case% *} want=${case#* }
        printf '[Metrics]\nListen=%s\n' "$listen" >"$TMP/bad.conf"
        timeout 4 "$PLACEMENTD" --config="$TMP/bad.conf" --connect=test:///default --bus=none --foreground \
                --topology="synthetic:pack:1 numa:1(memory=8GiB) core:2 pu:1" >"$TMP/bad.out" 2>&1
        rc=$?
        check "Listen=$listen at start: $([ "$want" = 124 ] && echo "runs on" || echo "exit $want") (rc $rc), naming it" \
                sh -c "[ $rc -eq $want ] && grep -qF 'Listen=$listen' '$TMP/bad.out'"
done

# A port another user holds (any local user may bind a free one above 1024) does not keep the daemon from
# placing: it runs on without metrics, answers D-Bus, and serves metrics once the port is free.
HELD=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); time.sleep(60)' "$HELD" &
HOLDER=$!
held() { python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$HELD" 2>/dev/null; }
must "a process holds 127.0.0.1:$HELD" wait_for 5 held
bus_start "$TMP"
printf '[Metrics]\nListen=127.0.0.1:%s\n' "$HELD" >"$TMP/held.conf"
FROM=$(($(wc -l <"$PD_LOG") + 1))
since() { tail -n +"$FROM" "$PD_LOG" | grep -q "$@"; } # this start's lines only
placementd_start --config="$TMP/held.conf" --connect=test:///default --bus-address="$BUS_ADDR" \
        --topology="synthetic:pack:1 numa:1(memory=8GiB) core:2 pu:1"
check "port held at start: the error names Listen= and says it runs on" wait_for 5 \
        since "Listen=127.0.0.1:$HELD: cannot listen on 127.0.0.1 port $HELD: Address already in use; running without metrics"
check "  it places the test domain" wait_for 10 since '^<6>test: placed'

check "  it answers D-Bus" wait_for 10 "$PLACEMENTCTL" --bus-address="$BUS_ADDR" status
# placementctl status says it too (MetricsError), not only the log and systemctl status
status_has() { "$PLACEMENTCTL" --bus-address="$BUS_ADDR" status 2>&1 | grep -q "$@"; }
check "  placementctl status says metrics are not served and why" status_has -F \
        "Metrics: not served: [Metrics] Listen=127.0.0.1:$HELD: cannot listen on 127.0.0.1 port $HELD: Address already in use, retrying"
status_json() { "$PLACEMENTCTL" --bus-address="$BUS_ADDR" status --json | python3 -c 'import json, sys
e = json.load(sys.stdin)["metrics_error"]
sys.exit(0 if (e is None if sys.argv[1] == "null" else sys.argv[1] in (e or "")) else 1)' "$1"; }
check "  and --json has it as metrics_error" status_json "Address already in use, retrying"
check "  it still runs" placementd_alive
stop_pid "$HOLDER"
HOLDER=
check "port freed: the endpoint comes up" wait_for 10 curl -fsS "http://127.0.0.1:$HELD/metrics" -o "$TMP/m"
check "  and the log says so" since -F "Serving metrics on http://127.0.0.1:$HELD/metrics"
check "  placementctl status has no Metrics line now" sh -c "! \"$PLACEMENTCTL\" --bus-address='$BUS_ADDR' status | grep -q '^Metrics:'"
check "  and metrics_error is null" status_json null
placementd_stop
bus_stop

# An address not up yet is retried; once it is up, a port waiting does not make bindable (a privileged one,
# for a daemon without the right to bind it) is not retried for ever: said once, then left until a reload.
# Needs root to add the address and setpriv to run the daemon as nobody.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && command -v ip >/dev/null; then
        ADDR=192.0.2.78
        NOBODY_DIR=$(mktemp -d /tmp/placementd-metrics-nobody.XXXXXX)
        chmod 755 "$NOBODY_DIR"
        printf '[Metrics]\nListen=%s:80\n' "$ADDR" >"$NOBODY_DIR/conf"
        chmod 644 "$NOBODY_DIR/conf"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$PLACEMENTD" --config="$NOBODY_DIR/conf" \
                --connect=test:///default --bus=none --foreground \
                --topology="synthetic:pack:1 numa:1(memory=8GiB) core:2 pu:1" >"$NOBODY_DIR/log" 2>&1 &
        NOBODY_PID=$!
        nlog() { grep -q "$@" "$NOBODY_DIR/log"; }
        check "nobody, Listen=$ADDR:80 not up yet: runs on, retrying" wait_for 5 \
                nlog -F "Listen=$ADDR:80: cannot listen on $ADDR port 80: Cannot assign requested address; running without metrics"
        ip addr add "$ADDR/32" dev lo && ADDED=$ADDR
        check "  the address up, port 80 refused: not retried until a reload" wait_for 40 \
                nlog -F "Permission denied; running without metrics until a reload changes it"
        AFTER=$(grep -c "again in" "$NOBODY_DIR/log")
        sleep 3
        check "  and no retry after it ($AFTER retries before)" \
                sh -c "[ \"\$(grep -c 'again in' '$NOBODY_DIR/log')\" -eq $AFTER ]"
        check "  it still runs" kill -0 "$NOBODY_PID"
        stop_pid "$NOBODY_PID"
        ip addr del "$ADDR/32" dev lo && ADDED=
        rm -rf "$NOBODY_DIR"
else
        echo "# skip: a privileged port once its address is up: needs root, setpriv and ip"
fi

# A Listen= host name whose name server does not answer (the network not up at boot): resolving it held the
# event loop for the resolver's whole timeout (10 s here, glibc's 5 s twice) at start and at every retry,
# D-Bus and placements with it. In a network and mount namespace of its own, resolv.conf names a server
# on 127.0.0.1:53 that reads queries and never answers.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
        DNS_DIR=$(mktemp -d /tmp/placementd-metrics-dns.XXXXXX)
        printf 'nameserver 127.0.0.1\noptions timeout:5 attempts:2\n' >"$DNS_DIR/resolv.conf"
        printf '[Metrics]\nListen=metrics.invalid:%s\n' "$(free_port)" >"$DNS_DIR/conf"
        cat >"$DNS_DIR/silent.py" <<'PY'
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("127.0.0.1", 53))
t.listen(8)
end = time.time() + 30
s.settimeout(0.5)
while time.time() < end:
    try:
        s.recvfrom(4096)
    except socket.timeout:
        pass
PY
        # shellcheck disable=SC2016 # expanded by the inner shell
        unshare --mount --net sh -c 'ip link set lo up && mount --bind "$1/resolv.conf" /etc/resolv.conf &&
                { python3 "$1/silent.py" & } && sleep 0.5 &&
                timeout 6 "$2" --config="$1/conf" --connect=test:///default --bus=none --foreground \
                        --topology="synthetic:pack:1 numa:1(memory=8GiB) core:2 pu:1" 2>&1 |
                        while IFS= read -r line; do printf "%s %s\n" "$(date +%s%N)" "$line"; done >"$1/log"
                kill $! 2>/dev/null' sh "$DNS_DIR" "$PLACEMENTD"
        START=$(head -n 1 "$DNS_DIR/log" | cut -d' ' -f1)
        PLACED=$(grep -m 1 ' <6>test: placed' "$DNS_DIR/log" | cut -d' ' -f1)
        diag "$(cut -d' ' -f2- "$DNS_DIR/log" | grep -i 'metrics' | head -n 2)"
        check "a host name no name server answers: the test domain placed within 3 s of start ($(((${PLACED:-0} - ${START:-0}) / 1000000)) ms)" \
                sh -c "[ -n '$PLACED' ] && [ $(((${PLACED:-0} - ${START:-0}) / 1000000)) -le 3000 ]"
        check "  the log says the name server did not answer, and retries" \
                grep -qF "cannot resolve metrics.invalid: no answer from the name server within 1000 ms; running without metrics, binding again in 1 s" "$DNS_DIR/log"
        check "  and retries within 6 s of its start (the first retry came 21 s after it when each held the loop 10 s)" \
                grep -q 'Binding \[Metrics\] Listen=metrics.invalid:[0-9]* again in' "$DNS_DIR/log"
        rm -rf "$DNS_DIR"
else
        echo "# skip: a name server that does not answer: needs root, unshare and ip"
fi

