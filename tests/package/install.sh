#!/bin/bash
# `meson install`, the install and upgrade from source docs/running.md describes, into a DESTDIR:
#  - the configuration: installed where there is none; an edited one is kept on the next install, the
#    shipped one put beside it as placementd.conf.dist, and the install output says so (a link to nothing
#    or a file it cannot read said to be that);
#  - the D-Bus system policy and the polkit action: --prefix=/usr puts them in $datadir/dbus-1/system.d and
#    /usr/share/polkit-1/actions (as the Debian package), /usr/local in /etc/dbus-1/system.d and
#    /usr/share/polkit-1/actions, where dbus-daemon and polkitd read them (or where the services'
#    pkg-config files say); any other prefix keeps every file inside it (an install into a tree the user
#    owns needs no root), with a warning that the services do not read them there; a directory chosen that
#    the service does not read is warned about.
# The first part installs the build directory (built first when it is not); the others only configure
# (seconds).
#   bash tests/package/install.sh [BUILD_DIR]      (default build; INSTALL_TEST_KEEP=1 keeps the temp dir)
# No root needed. Ends with "install: N passed, M failed".
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
tap_build "${1:-}"
need meson python3 cmp
tap_begin install
tap_tmpdir install "${INSTALL_TEST_KEEP:-}"
TMP=$TAP_TMP
OUT=$TMP/out ERR=$TMP/err
SHIPPED=$ROOT/conf/placementd.conf

# Where the services read, as the build finds them: their pkg-config files, else Debian's directories.
pc() { pkg-config --variable="$2" "$1" 2>/dev/null | sed 's|/$||' | grep . || echo "$3"; }
DBUS_DIRS=("$(pc dbus-1 datadir /usr/share)/dbus-1/system.d" "$(pc dbus-1 sysconfdir /etc)/dbus-1/system.d")
POLKIT_DIR=$(pc polkit-gobject-1 actiondir "$(pc polkit-gobject-1 policydir /usr/share/polkit-1/actions)")
dbus_reads() { [ "$1" = "${DBUS_DIRS[0]}" ] || [ "$1" = "${DBUS_DIRS[1]}" ]; }

# installed BUILD_DIR SOURCE_NAME: where `meson introspect --installed` puts that source file
installed() {
        meson introspect "$1" --installed | python3 -c '
import json, os, sys
for src, dst in json.load(sys.stdin).items():
    if os.path.basename(src) == sys.argv[1]:
        print(dst)' "$2"
}

# ---- the build directory installed into a DESTDIR, then again over an edited configuration ---------------
DEST=$TMP/dest
prefix=$(meson introspect "$BUILD" --buildoptions | python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"]); print(os.path.join(o["prefix"], o["sysconfdir"]))')
sysconfdir=$(sed -n 2p <<<"$prefix")
prefix=$(sed -n 1p <<<"$prefix")
CONF=$DEST$sysconfdir/placementd.conf
diag "build directory $BUILD: prefix $prefix, configuration in $sysconfdir"

# meson's own output appended to (a terminal, a pipe or a file opened to append) carries the notes
install_into() { : >"$OUT"; meson install -C "$BUILD" --destdir "$DEST" >>"$OUT" 2>&1; }
install_into
rc=$?
result "meson install --destdir into an empty tree (rc $rc)" $rc
check "the configuration is installed: $sysconfdir/placementd.conf, the shipped one" cmp "$SHIPPED" "$CONF"
check "no placementd.conf.dist beside it" test ! -e "$CONF.dist"
check "the output says where it was installed" grep -q "^Installing .*placementd.conf to $DEST$sysconfdir\$" "$OUT"

printf 'Apply=no\nReservedCPUs=0-1\n' >>"$CONF"
cp "$CONF" "$TMP/edited"
install_into
rc=$?
result "meson install --destdir again, over an edited configuration (rc $rc)" $rc
check "the edited configuration is kept as the operator left it" cmp "$TMP/edited" "$CONF"
check "the shipped one is installed beside it as placementd.conf.dist" cmp "$SHIPPED" "$CONF.dist"
check "the output says the configuration was kept and where the shipped one is" \
        grep -q "^Keeping $CONF: it differs from the shipped one, installed as $CONF.dist" "$OUT"

cp "$SHIPPED" "$CONF"
install_into
rc=$?
result "meson install --destdir over a configuration that is the shipped one (rc $rc)" $rc
check "it is left as it is and the older placementd.conf.dist removed" \
        sh -c "cmp -s '$SHIPPED' '$CONF' && test ! -e '$CONF.dist'"

# a link to nothing, or a file that cannot be read, is kept and said to be what it is, not "it differs"
rm -f "$CONF" "$CONF.dist"
ln -s "$TMP/nothing.conf" "$CONF"
install_into
rc=$?
result "meson install --destdir over a symbolic link to nothing (rc $rc)" $rc
check "the link is kept, the shipped one installed beside it" \
        sh -c "test -L '$CONF' && test ! -e '$TMP/nothing.conf' && cmp -s '$SHIPPED' '$CONF.dist'"
check "the output says it is a link to nothing, placementd running on its defaults" \
        grep -q "^Keeping $CONF: it is a symbolic link to nothing, so placementd would run on its built-in defaults; the shipped one is installed as $CONF.dist\$" "$OUT"
UNREAD=$TMP/unreadable
mkdir "$UNREAD"
printf 'secret\n' >"$UNREAD/placementd.conf"
chmod 0000 "$UNREAD/placementd.conf"
AS=()
if [ "$(id -u)" -eq 0 ]; then # root reads it anyway: the step runs as uid 65534, who owns the directory
        AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        chmod 0711 "$TMP"
        chown 65534 "$UNREAD"
fi
: >"$OUT"
sh -c '"$@"; echo "rc $?"' sh "${AS[@]}" bash "$ROOT/scripts/install-config.sh" "$SHIPPED" "$UNREAD" >>"$OUT" 2>&1
[ "$(id -u)" -ne 0 ] || chmod 0700 "$TMP"
check "a configuration the install cannot read: kept, the output says so, not that it differs" \
        sh -c "grep -q '^rc 0\$' '$OUT' && grep -q '^Keeping $UNREAD/placementd.conf: cannot read it (Permission denied); the shipped one is installed as $UNREAD/placementd.conf.dist\$' '$OUT' &&
        [ \"\$(stat -c %a '$UNREAD/placementd.conf')\" = 0 ] && cmp -s '$SHIPPED' '$UNREAD/placementd.conf.dist'"

policy=$(cd "$DEST" && find . -name org.placementd1.conf -path '*dbus-1*' | sed 's|^\.||')
result "the D-Bus policy is where the system bus reads it: ${policy:-nowhere} (${DBUS_DIRS[*]})" \
        "$(dbus_reads "$(dirname "$policy")"; echo $?)"
action=$(cd "$DEST" && find . -name org.placementd1.policy | sed 's|^\.||')
expect "the polkit action is where polkitd reads it" "$POLKIT_DIR/org.placementd1.policy" "$action"

# ---- --prefix=/usr and /usr/local, configured only --------------------------------------------------------
LOCAL=$TMP/local
must "meson setup --prefix=/usr" sh -c "meson setup '$LOCAL' '$ROOT' --prefix=/usr -Dtests=false >'$TMP/setup.log' 2>&1 ||
        { tail -20 '$TMP/setup.log'; exit 1; }"
expect "--prefix=/usr: the D-Bus policy goes to datadir/dbus-1/system.d, as the package's" \
        "${DBUS_DIRS[0]}/org.placementd1.conf" "$(installed "$LOCAL" org.placementd1.conf)"
expect "--prefix=/usr: the polkit action goes where polkitd reads it" \
        "$POLKIT_DIR/org.placementd1.policy" "$(installed "$LOCAL" org.placementd1.policy)"
check "--prefix=/usr: no warning about either" sh -c "! grep -q 'WARNING: .*\(D-Bus policy\|polkit action\|_dir=\)' '$TMP/setup.log'"
must "meson setup --prefix=/usr/local" sh -c "meson setup --wipe '$LOCAL' '$ROOT' --prefix=/usr/local -Dtests=false \
        >'$TMP/setup.log' 2>&1 || { tail -20 '$TMP/setup.log'; exit 1; }"
expect "--prefix=/usr/local: the D-Bus policy goes to the administrator's directory, which the bus reads" \
        "${DBUS_DIRS[1]}/org.placementd1.conf" "$(installed "$LOCAL" org.placementd1.conf)"
expect "--prefix=/usr/local: the polkit action goes where polkitd reads it" \
        "$POLKIT_DIR/org.placementd1.policy" "$(installed "$LOCAL" org.placementd1.policy)"
check "--prefix=/usr/local: no warning about either" sh -c "! grep -q 'WARNING: .*\(D-Bus policy\|polkit action\|_dir=\)' '$TMP/setup.log'"
: >"$OUT"
meson install -C "$LOCAL" --no-rebuild --tags config --destdir "$TMP/dest-local" >>"$OUT" 2>&1
rc=$?
result "--prefix=/usr/local: meson install --tags config puts the configuration in /usr/local/etc (rc $rc)" \
        "$(cmp -s "$SHIPPED" "$TMP/dest-local/usr/local/etc/placementd.conf"; echo $?)"

# ---- a prefix the user owns: every file inside it ---------------------------------------------------------
PFX=$TMP/prefix
must "meson setup --prefix=$PFX" sh -c "meson setup --wipe '$LOCAL' '$ROOT' --prefix='$PFX' -Dtests=false \
        >'$TMP/setup.log' 2>&1 || { tail -20 '$TMP/setup.log'; exit 1; }"
outside=$(meson introspect "$LOCAL" --installed | python3 -c '
import json, sys
print(" ".join(d for d in json.load(sys.stdin).values() if not d.startswith(sys.argv[1] + "/")))' "$PFX")
result "--prefix=$PFX: meson installs nothing outside the prefix${outside:+ (outside: $outside)}" \
        "$([ -z "$outside" ]; echo $?)"
expect "--prefix=$PFX: the D-Bus policy goes to its datadir/dbus-1/system.d" \
        "$PFX/share/dbus-1/system.d/org.placementd1.conf" "$(installed "$LOCAL" org.placementd1.conf)"
expect "--prefix=$PFX: the polkit action goes to its datadir/polkit-1/actions" \
        "$PFX/share/polkit-1/actions/org.placementd1.policy" "$(installed "$LOCAL" org.placementd1.policy)"
check "--prefix=$PFX: meson warns that the system bus does not read the policy there, and names the option" \
        grep -q "WARNING: the D-Bus policy goes to $PFX/share/dbus-1/system.d, inside the prefix: .*-Ddbus_policy_dir=" \
        "$TMP/setup.log"
check "--prefix=$PFX: meson warns that polkitd does not read the action there, and names the option" \
        grep -q "WARNING: the polkit action goes to $PFX/share/polkit-1/actions, inside the prefix: .*-Dpolkit_action_dir=" \
        "$TMP/setup.log"

# ---- the services' pkg-config files name the directories -------------------------------------------------
mkdir "$TMP/pc"
cat >"$TMP/pc/dbus-1.pc" <<'EOF'
prefix=/opt/dbus
datadir=${prefix}/share
sysconfdir=/opt/dbus/etc
Name: dbus
Description: a D-Bus whose files are elsewhere
Version: 1.14.10
EOF
cat >"$TMP/pc/polkit-gobject-1.pc" <<'EOF'
prefix=/opt/polkit
actiondir=${prefix}/share/polkit-1/actions/
policydir=${prefix}/share/polkit-1/actions/
Name: polkit-gobject-1
Description: a polkit whose files are elsewhere
Version: 122
EOF
# pc_setup PREFIX: configured with those pkg-config files
pc_setup() {
        must "meson setup --prefix=$1 with dbus-1.pc and polkit-gobject-1.pc naming /opt" sh -c "PKG_CONFIG_PATH='$TMP/pc' \
                meson setup --wipe '$LOCAL' '$ROOT' --prefix='$1' -Dtests=false >'$TMP/setup.log' 2>&1 ||
                { tail -20 '$TMP/setup.log'; exit 1; }"
}
pc_setup /usr
expect "--prefix=/usr: the D-Bus policy goes to dbus-1.pc's datadir/dbus-1/system.d" \
        /opt/dbus/share/dbus-1/system.d/org.placementd1.conf "$(installed "$LOCAL" org.placementd1.conf)"
expect "--prefix=/usr: the polkit action goes to polkit-gobject-1.pc's actiondir" \
        /opt/polkit/share/polkit-1/actions/org.placementd1.policy "$(installed "$LOCAL" org.placementd1.policy)"
pc_setup /usr/local
expect "--prefix=/usr/local: the D-Bus policy goes to dbus-1.pc's sysconfdir/dbus-1/system.d" \
        /opt/dbus/etc/dbus-1/system.d/org.placementd1.conf "$(installed "$LOCAL" org.placementd1.conf)"
expect "--prefix=/usr/local: the polkit action goes to polkit-gobject-1.pc's actiondir" \
        /opt/polkit/share/polkit-1/actions/org.placementd1.policy "$(installed "$LOCAL" org.placementd1.policy)"
pc_setup "$PFX"
expect "--prefix=$PFX: the D-Bus policy stays inside the prefix whatever dbus-1.pc says" \
        "$PFX/share/dbus-1/system.d/org.placementd1.conf" "$(installed "$LOCAL" org.placementd1.conf)"
expect "--prefix=$PFX: the polkit action stays inside the prefix whatever polkit-gobject-1.pc says" \
        "$PFX/share/polkit-1/actions/org.placementd1.policy" "$(installed "$LOCAL" org.placementd1.policy)"

# ---- directories chosen that the services do not read ----------------------------------------------------
must "meson setup -Ddbus_policy_dir= -Dpolkit_action_dir= under /usr/local/share" sh -c "meson setup --wipe \
        '$LOCAL' '$ROOT' --prefix=/usr/local -Dtests=false -Ddbus_policy_dir=/usr/local/share/dbus-1/system.d \
        -Dpolkit_action_dir=/usr/local/share/polkit-1/actions >'$TMP/setup.log' 2>&1 ||
        { tail -20 '$TMP/setup.log'; exit 1; }"
expect "-Ddbus_policy_dir= is where the D-Bus policy goes" \
        /usr/local/share/dbus-1/system.d/org.placementd1.conf "$(installed "$LOCAL" org.placementd1.conf)"
expect "-Dpolkit_action_dir= is where the polkit action goes" \
        /usr/local/share/polkit-1/actions/org.placementd1.policy "$(installed "$LOCAL" org.placementd1.policy)"
check "meson warns that the system bus does not read that policy directory" \
        grep -q 'WARNING: dbus_policy_dir=/usr/local/share/dbus-1/system.d: the system bus reads' "$TMP/setup.log"
check "meson warns that polkitd does not read that action directory" \
        grep -q 'WARNING: polkit_action_dir=/usr/local/share/polkit-1/actions: polkitd reads' "$TMP/setup.log"
must "meson setup -Ddbus_policy_dir=/etc/dbus-1/system.d" sh -c "meson setup --wipe '$LOCAL' '$ROOT' \
        --prefix=/usr/local -Dtests=false -Ddbus_policy_dir=/etc/dbus-1/system.d >'$TMP/setup.log' 2>&1"
check "/etc/dbus-1/system.d, which the bus reads too, is not warned about" \
        sh -c "! grep -q 'WARNING: dbus_policy_dir' '$TMP/setup.log'"
