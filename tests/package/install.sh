#!/bin/bash
# `meson install`, the install and upgrade from source docs/running.md describes, into a DESTDIR:
#  - the configuration: installed where there is none; an edited one is kept on the next install, the
#    shipped one put beside it as placementd.conf.dist, and the install output says so.
# The first part installs the build directory (built first when it is not); the other only configures
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

# ---- --prefix=/usr/local, configured only --------------------------------------------------------------
LOCAL=$TMP/local
must "meson setup --prefix=/usr/local" sh -c "meson setup '$LOCAL' '$ROOT' --prefix=/usr/local -Dtests=false >'$TMP/setup.log' 2>&1 ||
        { tail -20 '$TMP/setup.log'; exit 1; }"
: >"$OUT"
meson install -C "$LOCAL" --no-rebuild --tags config --destdir "$TMP/dest-local" >>"$OUT" 2>&1
rc=$?
result "--prefix=/usr/local: meson install --tags config puts the configuration in /usr/local/etc (rc $rc)" \
        "$(cmp -s "$SHIPPED" "$TMP/dest-local/usr/local/etc/placementd.conf"; echo $?)"
