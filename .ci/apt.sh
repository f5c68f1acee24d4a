# shellcheck shell=bash
# Sourced by the .ci/install-*.sh scripts: one way to install the Debian packages a stage needs.
#   apt_install_missing NAME PACKAGE...
# installs those of PACKAGE... that are not installed, quietly; does nothing when all are. The package
# lists are refreshed only when they are absent or cannot resolve a wanted package, and once more when an
# install fails on a stale list (a mirror that dropped a file). NAME prefixes the messages.
apt_install_missing() {
    local name=$1 p need_update=0
    local missing=()
    shift
    for p in "$@"; do
        [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "$name: must run as root to install: ${missing[*]}" >&2
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || need_update=1 # may be .lz4-compressed
    for p in "${missing[@]}"; do
        ((need_update)) && break
        apt-cache show "$p" >/dev/null 2>&1 || need_update=1
    done
    if ((need_update)); then
        apt-get -qq update || return 1
    fi
    apt-get -qq -o=Dpkg::Use-Pty=0 install -y --no-install-recommends "${missing[@]}" >/dev/null && return 0
    apt-get -qq update &&
        apt-get -qq -o=Dpkg::Use-Pty=0 install -y --no-install-recommends "${missing[@]}" >/dev/null
}
