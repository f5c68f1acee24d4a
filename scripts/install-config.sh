#!/bin/bash
# meson install's step for a configuration file (conf/meson.build): installs SOURCE into DIR when DIR has
# no file of that name yet, and never replaces one that is there, edited or not. The shipped file then
# goes beside it as NAME.dist (replaced at each install), and the output says so, for the operator to
# compare them (saying what it is when that is a symbolic link to nothing or a file it cannot read); a
# file the same as the shipped one is left as it is. DESTDIR (a staged install, as a package build's) is
# honoured.
#   install-config.sh SOURCE DIR
set -euo pipefail

src=$1
dir=${DESTDIR:-}$2
name=$(basename "$src")
target=$dir/$name
# meson 1.0 shows an install script's output only when the script fails: the notes go to meson's own
# output instead when that is a terminal, a pipe, or a file it appends to (a file written at meson's own
# offset would have them overwritten), else to ours.
say() {
        local out=/proc/$PPID/fd/1
        [ -z "${MESON_INSTALL_QUIET:-}" ] || return 0
        if [ -c "$out" ] || [ -p "$out" ] ||
                grep -Eqs '^flags:[[:space:]]+[0-7]*[2367][0-7]{3}$' "/proc/$PPID/fdinfo/1"; then
                { echo "$@" >>"$out"; } 2>/dev/null && return 0
        fi
        echo "$@"
}

# what is at target: "same", "differs", or why it cannot be compared with the shipped one
compare() {
        local err rc=0
        if [ -L "$target" ] && [ ! -e "$target" ]; then
                echo "it is a symbolic link to nothing, so placementd would run on its built-in defaults"
                return
        fi
        err=$(LC_ALL=C cmp -- "$src" "$target" 2>&1 >/dev/null) || rc=$?
        case $rc in
        0) echo same ;;
        1) echo differs ;;
        *) echo "cannot read it (${err##*: })" ;;
        esac
}

if [ ! -e "$target" ] && [ ! -L "$target" ]; then
        say "Installing $src to $dir"
        install -D -m 0644 "$src" "$target"
        exit 0
fi
what=$(compare)
if [ "$what" = same ]; then
        say "Keeping $target: it is the shipped one"
        if [ -e "$target.dist" ]; then
                say "Removing $target.dist, an older shipped one"
                rm -f "$target.dist"
        fi
else
        install -m 0644 "$src" "$target.dist"
        if [ "$what" = differs ]; then
                say "Keeping $target: it differs from the shipped one, installed as $target.dist (compare them)"
        else
                say "Keeping $target: $what; the shipped one is installed as $target.dist"
        fi
fi
