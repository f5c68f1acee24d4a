#!/bin/bash
# shellcheck disable=SC2317 # functions reached through trap
# shellcheck source-path=SCRIPTDIR
# placementctl -H against "another host" that is this one over SSH: an sshd on 127.0.0.1 (a free
# non-default port, host and client keys made here), placementd on a private bus, and the client key
# restricted to "systemd-stdio-bridge --bus-path=<that bus>", which is what sd-bus runs on the far side
# (ssh -xT HOST systemd-stdio-bridge). ssh reads its options from a config made here through a wrapper
# first in PATH (port, key, pinned host key, BatchMode). Run as root:
#   bash tests/remote/run.sh [BUILD_DIR]        (default: build; REMOTE_TEST_KEEP=1 keeps the temp dir)
# TAP-like lines; the last line is "remote: N passed, M failed". Exits 77 when a tool is missing.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/tap.sh
. "$HERE/../lib/tap.sh"
tap_build "${1:-}"
CTL=$PLACEMENTCTL
TOPOLOGY="synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"

need_root "sshd, login as root"
need sshd ssh ssh-keygen systemd-stdio-bridge dbus-daemon python3 timeout
SSHD=$(PATH=$PATH:/usr/sbin command -v sshd)
SSH=$(command -v ssh)

tap_begin remote
tap_tmpdir remote "${REMOTE_TEST_KEEP:-}"
TMP=$TAP_TMP
SSHD_PID=''
ADDR=unix:path=$TMP/bus
OUT=$TMP/out ERR=$TMP/err RC=0
PD_LOG=$TMP/placementd.log
tap_log "$TMP/sshd.log"
tap_cleanup() {
    stop_pid "$PD_PID"
    stop_pid "$SSHD_PID"
    bus_stop
}

remote() { run env PATH="$TMP/bin:$PATH" "$CTL" -H root@127.0.0.1 "$@"; }
local_ctl() { timeout 10 "$CTL" --bus-address="$ADDR" "$@" 2>&1; }

# ---- "the remote host": a private bus and placementd on it -------------------------------------------
must "private dbus-daemon on $ADDR" bus_start "$TMP"
: >"$TMP/placementd.conf"
placementd_start --config="$TMP/placementd.conf" --connect=test:///default --topology="$TOPOLOGY" \
    --bus-address="$ADDR"
must "placementd owns org.placementd1 on the private bus" wait_for 10 bus_has org.placementd1

# ---- sshd on 127.0.0.1, the client key good only for the bridge to that bus --------------------------
PORT=$(free_port)
ssh-keygen -q -t ed25519 -N '' -C placementd-test-host -f "$TMP/host_key"
ssh-keygen -q -t ed25519 -N '' -C placementd-test-client -f "$TMP/client_key"
echo "restrict,command=\"systemd-stdio-bridge --bus-path=$ADDR\" $(cat "$TMP/client_key.pub")" >"$TMP/authorized_keys"
cat >"$TMP/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $TMP/host_key
AuthorizedKeysFile $TMP/authorized_keys
PidFile $TMP/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
EOF
cat >"$TMP/ssh_config" <<EOF
Host *
  Port $PORT
  IdentityFile $TMP/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $TMP/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 10
EOF
echo "[127.0.0.1]:$PORT $(cat "$TMP/host_key.pub")" >"$TMP/known_hosts"
mkdir -p "$TMP/bin" /run/sshd
printf '#!/bin/sh\nexec %s -F %s "$@"\n' "$SSH" "$TMP/ssh_config" >"$TMP/bin/ssh"
chmod 755 "$TMP/bin/ssh"
"$SSHD" -D -e -f "$TMP/sshd_config" </dev/null >"$TMP/sshd.log" 2>&1 &
SSHD_PID=$!
must "sshd listening on 127.0.0.1:$PORT (pid $SSHD_PID)" wait_for 10 grep -q "Server listening" "$TMP/sshd.log"

# ---- placementctl -H ---------------------------------------------------------------------------------
START=$(date +%s%N)
remote status
diag "placementctl -H root@127.0.0.1 status took $((($(date +%s%N) - START) / 1000000)) ms (ssh login included)"
result "-H root@127.0.0.1 status (rc $RC) is what the local bus says" \
    "$([ $RC -eq 0 ] && grep -q '^placementd .*Connected to test:///default' "$OUT" &&
        [ "$(cat "$OUT")" = "$(local_ctl status)" ]; echo $?)"
result "sshd logged the key login for root" "$(grep -q 'Accepted publickey for root from 127.0.0.1' "$TMP/sshd.log"; echo $?)"
remote list
result "-H root@127.0.0.1 list (rc $RC) is what the local bus says" \
    "$([ $RC -eq 0 ] && grep -q '^test  *placed ' "$OUT" && [ "$(cat "$OUT")" = "$(local_ctl list)" ]; echo $?)"
run env PATH="$TMP/bin:$PATH" "$CTL" show --host=root@127.0.0.1 test
result "show --host=root@127.0.0.1 test, the option after the verb (rc $RC)" \
    "$([ $RC -eq 0 ] && grep -q '^test (' "$OUT" && [ "$(cat "$OUT")" = "$(local_ctl show test)" ]; echo $?)"
# bash completion of a domain name asks the daemon that -H names, as the command it completes would
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(env PATH="$(dirname "$CTL"):$TMP/bin:$PATH" bash -c '. "$1"
words=(placementctl -H root@127.0.0.1 show te) cword=4 cur=te
__placementctl_domains' _ "$ROOT/shell-completion/bash/placementctl" 2>&1)
result "bash completion after -H root@127.0.0.1 lists that daemon's domains (got: ${got:-nothing})" \
    "$(grep -qx test <<<"$got"; echo $?)"
remote --json show test
result "-H ... --json show test is the decision JSON (rc $RC)" "$([ $RC -eq 0 ] && python3 -c '
import json, sys; d = json.load(open(sys.argv[1]))["decisions"][0]; sys.exit(d["domain"] != "test")' "$OUT"; echo $?)"
remote map
result "-H ... map (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^package 0' "$OUT"; echo $?)"
remote map --svg="$TMP/remote.svg" --topology="$TOPOLOGY"
result "-H ... map --svg=FILE --topology= that host's (rc $RC) writes the picture" \
    "$([ $RC -eq 0 ] && grep -q "class='PU'" "$TMP/remote.svg"; echo $?)"
remote map --svg="$TMP/remote2.svg"
result "-H ... map --svg without --topology is a usage error: this host is not that one (rc $RC)" \
    "$([ $RC -eq 2 ] && grep -q 'give --topology=' "$ERR"; echo $?)"
remote plan --vcpus=2 --memory=1G
result "-H ... plan --vcpus=2 --memory=1G (rc $RC)" "$([ $RC -eq 0 ] && grep -q '^2 vCPUs, 1.0 GiB: placed' "$OUT"; echo $?)"
remote show nope
result "-H ... show nope exits 4 like the local call (rc $RC)" "$([ $RC -eq 4 ]; echo $?)"
remote --bus-address="$ADDR" status
result "-H with --bus-address is a usage error, exit 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"
remote topology --topology="$TOPOLOGY"
result "-H with an offline command is a usage error, exit 2 (rc $RC)" "$([ $RC -eq 2 ]; echo $?)"

# ---- when it cannot get there ------------------------------------------------------------------------
run env PATH="$TMP/bin:$PATH" "$CTL" -H root@127.0.0.2 status # nothing listens there
result "-H to a host where nothing listens exits 3 naming the host and ssh (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -q 'cannot reach root@127.0.0.2 over ssh' "$ERR" &&
        grep -q '^ssh: connect to host 127.0.0.2' "$ERR"; echo $?)"
run env PATH="$TMP/bin:$PATH" "$CTL" -H root@no-such-host.invalid status
result "-H to a name that does not resolve exits 3 (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -q 'cannot reach root@no-such-host.invalid over ssh' "$ERR"; echo $?)"
stop_pid "$PD_PID"
PD_PID=
remote status
result "-H while placementd is down there exits 3 saying it is not running on the host (rc $RC)" \
    "$([ $RC -eq 3 ] && grep -q 'placementd is not running on root@127.0.0.1' "$ERR"; echo $?)"
