#!/bin/bash
# bash completion for placementctl, driven the way bash drives it (COMP_WORDS, COMP_CWORD, COMP_LINE,
# COMP_POINT, with bash-completion loaded): every verb and every option that `placementctl --help` names
# must complete, option values complete, and domain names come from a running daemon on a private bus.
#   bash tests/completion/run.sh [BUILD_DIR]     ends with "completion: N passed, M failed"
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
tap_build "${1:-}"
COMPLETION=$ROOT/shell-completion/bash/placementctl
[ -r /usr/share/bash-completion/bash_completion ] || tap_skip "bash-completion is not installed"
tap_begin completion
tap_tmpdir completion
TMP=$TAP_TMP
TAP_CAPTURE=1
PD_LOG=$TMP/log
tap_cleanup() {
        stop_pid "$PD_PID"
        bus_stop
}

# shellcheck source=/dev/null
source /usr/share/bash-completion/bash_completion
PATH=$BUILD/tools:$PATH # domain names come from this placementctl

# complete LINE: what bash would offer with the cursor at the end of LINE, one candidate a line. The
# words are split as bash splits them (COMP_WORDBREAKS: "--bus=x" is "--bus" "=" "x").
complete_line() {
        local line=$1 w
        local -a words=()
        for w in $line; do
                while [ -n "$w" ]; do
                        if [[ $w =~ ^([=:]+)(.*)$ || $w =~ ^([^=:]+)(.*)$ ]]; then
                                words+=("${BASH_REMATCH[1]}")
                                w=${BASH_REMATCH[2]}
                        fi
                done
        done
        [[ $line == *' ' ]] && words+=("")
        COMP_WORDS=("${words[@]}")
        COMP_CWORD=$((${#words[@]} - 1))
        COMP_LINE=$line
        COMP_POINT=${#line}
        COMPREPLY=()
        _placementctl placementctl "${words[COMP_CWORD]}" "${words[COMP_CWORD - 1]}" 2>/dev/null
        printf '%s\n' "${COMPREPLY[@]}"
}

# offers LINE CANDIDATE...: completing LINE offers each CANDIDATE (an option may carry its "=").
offers() {
        local line=$1 c
        shift
        complete_line "$line" >"$TMP/got"
        for c in "$@"; do
                grep -qxF -e "$c" -e "$c=" "$TMP/got" || { echo "'$line' does not offer '$c'; got: $(tr '\n' ' ' <"$TMP/got")"; return 1; }
        done
}
offers_nothing() {
        complete_line "$1" >"$TMP/got"
        ! grep -q . "$TMP/got" || { echo "'$1' offers: $(tr '\n' ' ' <"$TMP/got")"; return 1; }
}

# What placementctl takes: "verb" lines and "verb option" pairs. Verbs are the indented lines of --help
# before its "Options:" section, options are that section's long options; whether a verb takes an option is
# asked of placementctl itself, which refuses an option its verb does not take ("does not apply"). plan has
# an online and an offline form (--topology picks the offline one): it takes the options of both.
help_items() {
        local verb opt arg
        placementctl --help >"$TMP/help"
        sed -n '/^Options:/q;s/^  \([a-z][a-z-]*\).*/\1/p' "$TMP/help" | sort -u >"$TMP/verbs"
        sed -n '/^Options:/,$s/^ *\(-., \)\{0,1\}--\([a-z][a-z-]*=\{0,1\}\).*/\2/p' "$TMP/help" | grep -vx -e help -e version | sort -u >"$TMP/opts"
        while read -r verb; do
                echo "$verb"
                [ "$verb" = help ] && continue
                while read -r opt; do # "name" or "name=" (takes a value)
                        arg=--$opt # a value each option accepts, so only the verb can refuse it
                        case $opt in
                        vcpus=) arg+=1 ;; memory=) arg+=1G ;; bus=) arg+=system ;; policy=) arg+=explicit ;;
                        sibling-loss=) arg+=0.4 ;; bus-address=) arg+=unix:path=/nonexistent ;;
                        *=) arg+=x ;;
                        esac
                        if ! placementctl "$verb" "$arg" </dev/null 2>&1 | grep -q "does not apply" ||
                                { [ "$verb" = plan ] && ! placementctl plan --topology=synthetic:pu:1 "$arg" </dev/null 2>&1 | grep -q "does not apply"; }; then
                                echo "$verb --${opt%=}"
                        fi
                done <"$TMP/opts"
        done <"$TMP/verbs"
}

# missing_from_completion: every verb and option of the help (help_items, read once into $TMP/items) that
# the completion does not offer.
missing_from_completion() {
        local verb opt
        while read -r verb opt; do
                if [ -z "$opt" ]; then
                        offers "placementctl " "$verb" >/dev/null || echo "verb $verb"
                else
                        offers "placementctl $verb --" "$opt" >/dev/null || echo "option $opt of $verb"
                fi
        done <"$TMP/items"
}

# shellcheck source=/dev/null
source "$COMPLETION"
check "the completion is registered for placementctl" complete -p placementctl
help_items >"$TMP/items"
check "the help names verbs and options ($(grep -vc ' ' "$TMP/items") verbs, $(grep -c ' ' "$TMP/items") verb options)" \
        sh -c "grep -qx status '$TMP/items' && grep -qx 'plan --trace' '$TMP/items' && grep -qx 'cpu-advice --connect' '$TMP/items' && grep -qx 'rebalance --json' '$TMP/items'"
# shellcheck disable=SC2016 # the inner sh expands $(cat), not this one
check "every verb and option of placementctl --help completes" sh -c 'test -z "$(cat)" || { cat; exit 1; }' \
        < <(missing_from_completion)

# The check must catch a verb and an option the completion forgets.
sed -e 's/ rebalance replace topology/ replace topology/' -e "s/--map-only //" "$COMPLETION" >"$TMP/broken"
# shellcheck source=/dev/null
source "$TMP/broken"
missing_from_completion >"$TMP/missing"
check "a completion without 'rebalance' and '--map-only' is caught" \
        sh -c "grep -qx 'verb rebalance' '$TMP/missing' && grep -qx 'option --map-only of cpu-baseline' '$TMP/missing'"
# shellcheck source=/dev/null
source "$COMPLETION"

check "verbs complete by prefix" offers "placementctl s" show status
check "an option before the verb" offers "placementctl --json " status list plan
check "options before the verb: any of them, as they may come first" offers "placementctl --to" --topology=
check "options differ per verb: plan" offers "placementctl plan --" --vcpus --memory --topology --policy --trace --bus
check "options differ per verb: topology offers no bus" sh -c '! grep -q -- --bus' < <(complete_line "placementctl topology --")
check "help COMMAND: the verbs" offers "placementctl help pl" plan
check "a verb's own --help" offers "placementctl show --he" --help
check "--bus=VALUE" offers "placementctl status --bus=" system session
check "--bus VALUE" offers "placementctl status --bus s" session system
check "--policy values" offers "placementctl plan --topology=host --policy=" explicit compat
check "--virttype values" offers "placementctl cpu-baseline --virttype=" kvm qemu
mkdir "$TMP/files" && touch "$TMP/files/host-a.xml" "$TMP/files/notes.txt"
topology_sources() {
        cd "$TMP/files" && offers "placementctl topology --topology=" host synthetic: host-a.xml &&
                ! grep -qx notes.txt "$TMP/got"
        local rc=$?
        cd "$ROOT" && return $rc
}
check "--topology: host, synthetic: and hwloc XML files (not other files)" topology_sources
check "--topology=syn completes synthetic:" offers "placementctl topology --topology=syn" synthetic:
check "--connect: a URI is completed after its colon" offers "placementctl cpu-advice --connect=qemu:" ///system ///session
check "-c URI, --connect's short form, is completed too" offers "placementctl cpu-advice -c test:" ///default
check "a value typed for --bus-address is not mistaken for a verb" offers "placementctl --bus-address=unix:path=/x " status

# ---- domain names from a running daemon ----------------------------------------------------------------
bus_start "$TMP" || tap_skip "no dbus-daemon"
ADDR=$BUS_ADDR
# libvirt's test driver with three running domains; names are the domain owner's, so one is hostile.
dom() { printf "  <domain type='test'><name>%s</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>\n" "$1"; }
{
        echo "<node><cpu><mhz>2000</mhz><model>x86_64</model><active>8</active><max>8</max><nodes>2</nodes>"
        echo "<sockets>1</sockets><cores>2</cores><threads>2</threads></cpu><memory>33554432</memory>"
        dom test
        dom 'web 1'
        # shellcheck disable=SC2016 # a literal hostile domain name: it must never be expanded
        dom '$(touch pwned)'
        dom 'cr\x0dx' # the text, not a carriage return: shown as cr\x5cx0dx, named as it is
        echo "</node>"
} >"$TMP/host.xml"
: >"$TMP/placementd.conf"
placementd_start --config="$TMP/placementd.conf" --connect="test://$TMP/host.xml" --bus-address="$ADDR" \
        --topology="synthetic:pack:2 numa:1(memory=8GiB) l3:1 core:2 pu:2"
answers() { placementctl status --bus-address="$ADDR" >/dev/null 2>&1; }
wait_for 10 answers
cd "$TMP" || exit 1 # where a name that ran as a command would leave its file
check "the daemon answers on the private bus" placementctl status --bus-address="$ADDR"
placementctl status --bus-address="$ADDR" >/dev/null 2>&1 || sed 's/^/#   placementd: /' "$TMP/log" | tail -5
check "show DOMAIN: names from the daemon on --bus-address=ADDR" offers "placementctl show --bus-address=$ADDR " test
check "explain DOMAIN: --bus-address ADDR after the verb" offers "placementctl explain --bus-address $ADDR t" test
check "replace DOMAIN: by prefix" offers "placementctl --bus-address=$ADDR replace te" test
check "names with a space or shell syntax are offered quoted" offers "placementctl show --bus-address=$ADDR " \
        'web\ 1' '\$\(touch\ pwned\)'
check "a name is never run as a command" test ! -e "$TMP/pwned"
check "a quoted name completes from its prefix" offers "placementctl show --bus-address=$ADDR we" 'web\ 1'
check "a name with a backslash is offered as libvirt holds it, quoted" \
        offers "placementctl show --bus-address=$ADDR c" 'cr\\x0dx'
shows_escaped() { placementctl show --bus-address="$ADDR" 'cr\x0dx' | head -1 | grep -qF 'cr\x5cx0dx ('; }
check "show finds it by the name completed, and shows its backslash escaped" shows_escaped
check "no second DOMAIN" offers_nothing "placementctl show --bus-address=$ADDR test "
check "no daemon, no names (and no error)" offers_nothing "placementctl show --bus-address=unix:path=$TMP/none "
