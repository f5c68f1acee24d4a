#!/bin/bash
# The Debian package, built and used the way an operator would: dpkg-buildpackage in a copy of the tree
# (it writes next to the source, so nothing lands in the repository), lintian, `apt install ./*.deb`,
# every file in its Debian place, the installed unit through `systemd-analyze verify`, then a purge that
# leaves nothing behind. Run as root on Debian 12:
#   bash tests/package/run.sh          ends with "package: N passed, M failed"; prints size, tags, time
# The build runs the Check tests as dh_auto_test does; PACKAGE_NOCHECK=1 builds with DEB_BUILD_OPTIONS=nocheck.
set -u
# shellcheck source-path=SCRIPTDIR
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
START=$SECONDS
installed=0
need_root "installing a package"
tap_begin package
tap_tmpdir package
TMP=$TAP_TMP
TAP_CAPTURE=1

# Other work on the machine may hold dpkg's lock for a while: wait for it instead of failing.
APT=(apt-get -y -qq -o DPkg::Lock::Timeout=300)

tap_cleanup() {
        ((installed)) && DEBIAN_FRONTEND=noninteractive "${APT[@]}" purge placementd >/dev/null 2>&1
}

# An operator's own installation is not ours to replace and purge.
if dpkg-query -W -f='${db:Status-Status}' placementd 2>/dev/null | grep -qx installed; then
        tap_skip "placementd is already installed on this machine"
fi

# ---- build -----------------------------------------------------------------------------------------
mkdir "$TMP/placementd"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
        git -C "$ROOT" ls-files -z --cached --others --exclude-standard | tar -C "$ROOT" -cf - --null -T - |
                tar -C "$TMP/placementd" -xf -
else
        tar -C "$ROOT" -cf - --exclude='./build*' --exclude=./obj-\* . | tar -C "$TMP/placementd" -xf -
fi

git -C "$ROOT" status --porcelain --ignored >"$TMP/status" 2>/dev/null
meson_version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$ROOT/meson.build" | head -1)
deb_version=$(cd "$TMP/placementd" && dpkg-parsechangelog -S Version)
check "debian/changelog's version ($deb_version) is meson's project version ($meson_version)" \
        test "$deb_version" = "$meson_version"

# The source package first, from the clean copy (the binary build leaves obj-* and debian/placementd).
check "dpkg-source -b makes the source package" sh -c "cd '$TMP' && dpkg-source -b placementd"

env=
[ "${PACKAGE_NOCHECK:-0}" = 1 ] && env="DEB_BUILD_OPTIONS=nocheck DEB_BUILD_PROFILES=nocheck"
build_start=$SECONDS
check "dpkg-buildpackage -us -uc -b builds the package" \
        sh -c "cd '$TMP/placementd' && env $env dpkg-buildpackage -us -uc -b >'$TMP/build.log' 2>&1 ||
               { tail -30 '$TMP/build.log'; exit 1; }"
build_seconds=$((SECONDS - build_start))
deb=$(find "$TMP" -maxdepth 1 -name 'placementd_*.deb' | head -1)
[ -n "$deb" ] || { diag "no .deb was built"; exit 1; }
check "the repository holds no new file after the build" \
        sh -c "git -C '$ROOT' status --porcelain --ignored 2>/dev/null | diff '$TMP/status' -"

# ---- lintian: no error, no warning (info and pedantic tags are printed) --------------------------------
# lintian leaves its ELF caches (mldbm-elf-*) in TMPDIR: the suite's own directory, removed with it
mkdir -p "$TMP/lintian-tmp"
TMPDIR="$TMP/lintian-tmp" lintian --pedantic --display-info "$TMP"/placementd_*.changes "$TMP"/placementd_*.dsc 2>/dev/null |
        grep -v '^N:' >"$TMP/lintian"
sed 's/^/# lintian: /' "$TMP/lintian"
check "lintian reports no error" sh -c "! grep -q '^E:' '$TMP/lintian'"
check "lintian reports no warning" sh -c "! grep -q '^W:' '$TMP/lintian'"

# ---- install ----------------------------------------------------------------------------------------
# Files of an earlier `meson install` into /usr would be overwritten, then removed by the purge.
present=$(dpkg-deb --fsys-tarfile "$deb" | tar -tf - | sed -n 's|^\./|/|p' | grep -v '/$' |
        while read -r f; do [ -e "$f" ] && echo "$f"; done)
if [ -n "$present" ]; then
        tap_skip "files the package installs are already on this machine: $present"
fi
check "the package lists /etc/placementd.conf as a conffile" \
        sh -c "dpkg-deb --ctrl-tarfile '$deb' | tar -xOf - ./conffiles | grep -qx /etc/placementd.conf"
# meson install put it into the build's empty DESTDIR as a source install into an empty /etc would
check "the package holds /etc/placementd.conf, the shipped one, and no placementd.conf.dist" \
        sh -c "dpkg-deb --fsys-tarfile '$deb' | tar -xOf - ./etc/placementd.conf | cmp -s - '$ROOT/conf/placementd.conf' &&
               ! dpkg-deb -c '$deb' | grep -q 'placementd.conf.dist'"
installed=1
check "apt install ./$(basename "$deb")" \
        sh -c "cd '$TMP' && DEBIAN_FRONTEND=noninteractive ${APT[*]} install './$(basename "$deb")'"

files=(/usr/sbin/placementd /usr/bin/placementctl /lib/systemd/system/placementd.service
       /usr/share/dbus-1/system.d/org.placementd1.conf /usr/share/dbus-1/interfaces/org.placementd1.Manager.xml
       /usr/share/polkit-1/actions/org.placementd1.policy
       /etc/placementd.conf /usr/share/man/man8/placementd.8.gz /usr/share/man/man5/placementd.conf.5.gz
       /usr/share/man/man1/placementctl.1.gz /usr/share/bash-completion/completions/placementctl
       /usr/share/doc/placementd/copyright /usr/share/doc/placementd/placementd-metrics.conf
       /usr/share/doc/placementd/examples/workload.trace)
for f in "${files[@]}"; do
        check "installed: $f" test -f "$f"
done
check "dpkg knows /etc/placementd.conf as a conffile" \
        sh -c "dpkg-query -W -f='\${Conffiles}' placementd | grep -q '^ /etc/placementd.conf '"
check "the installed programs run and say the packaged version" \
        sh -c "/usr/sbin/placementd --version | grep -qw '$meson_version' &&
               /usr/bin/placementctl --version | grep -qw '$meson_version'"
check "the unit is enabled for multi-user.target" test -L /etc/systemd/system/multi-user.target.wants/placementd.service
man=--man=no
command -v man >/dev/null && man=--man=yes # then Documentation=man:... must resolve to the installed pages
check "systemd-analyze verify $man accepts the installed unit" \
        systemd-analyze verify "$man" /lib/systemd/system/placementd.service
check "the D-Bus policy is well-formed XML with the bus's DTD" \
        sh -c "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
                /usr/share/dbus-1/system.d/org.placementd1.conf"
check "the polkit action is well-formed XML" \
        sh -c "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
                /usr/share/polkit-1/actions/org.placementd1.policy"
check "the completion loads in bash and completes placementctl" \
        bash -c 'source /usr/share/bash-completion/completions/placementctl && complete -p placementctl'

# ---- purge ------------------------------------------------------------------------------------------
dpkg -L placementd >"$TMP/owned" 2>/dev/null
check "apt purge placementd" sh -c "DEBIAN_FRONTEND=noninteractive ${APT[*]} purge placementd"
dpkg-query -W placementd >/dev/null 2>&1 || installed=0
left=()
while read -r f; do
        # directories stay when other packages use them (and /lib is a symlink on a merged /usr)
        [ ! -d "$f" ] && { [ -e "$f" ] || [ -L "$f" ]; } && left+=("$f")
done <"$TMP/owned"
for f in /etc/placementd.conf /usr/share/doc/placementd /etc/systemd/system/multi-user.target.wants/placementd.service \
        /var/lib/systemd/deb-systemd-helper-enabled/placementd.service.dsh-also; do
        [ -e "$f" ] || [ -L "$f" ] && left+=("$f")
done
check "purge leaves no file behind${left[*]:+ (left: ${left[*]})}" test ${#left[@]} -eq 0
check "dpkg forgets the package" sh -c "! dpkg-query -W placementd 2>/dev/null | grep -q ."

printf '# figures: .deb %s bytes, installed size %s KiB, %s lintian tags (%s), build %s s, stage %s s\n' \
        "$(stat -c %s "$deb")" "$(dpkg-deb -f "$deb" Installed-Size)" "$(grep -c . "$TMP/lintian")" \
        "$(sed -E 's/^([A-Z]): [^:]+: ([^ ]+).*/\1:\2/' "$TMP/lintian" | sort -u | tr '\n' ' ' | sed 's/ $//')" "$build_seconds" \
        "$((SECONDS - START))"
