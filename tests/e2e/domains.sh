# shellcheck shell=bash
# Domains of any shape for the end-to-end scenarios (ledger.sh, lifecycle.sh). A sourced library; needs
# libvirt-env.sh sourced first. Names must start with E2E_DOMAIN_PREFIX so that the harness cleans up.
#
#   dom_xml NAME VCPU-ELEMENT [EXTRA]    the XML of a tiny TCG domain; VCPU-ELEMENT is the whole <vcpu>
#                                        element, EXTRA goes before <os> (<cputune>, <numatune>, <cpu>, ...)
#   dom_create NAME VCPU-ELEMENT [EXTRA] transient (virsh create)
#   dom_define NAME VCPU-ELEMENT [EXTRA] persistent (virsh define), not started
#   dom_cleanup                          destroy and undefine (with its managed save) every prefixed domain
#   vcpu N / vcpu_cur CUR MAX            <vcpu> elements

vcpu() { echo "<vcpu placement='static'>$1</vcpu>"; }
vcpu_cur() { echo "<vcpu placement='static' current='$1'>$2</vcpu>"; }

dom_xml() {
    cat <<EOF
<domain type='qemu'>
  <name>$1</name>
  <memory unit='MiB'>64</memory>
  <currentMemory unit='MiB'>64</currentMemory>
  $2
  ${3:-}
  <os>
    <type arch='x86_64'>hvm</type>
  </os>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <serial type='null'/>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}

_dom_virsh_xml() { # VERB NAME VCPU EXTRA
    local verb=$1 out
    shift
    dom_xml "$@" >"$E2E_LIBVIRT_DIR/$1.xml"
    out=$(e2e_virsh "$verb" "$E2E_LIBVIRT_DIR/$1.xml" 2>&1) || { echo "virsh $verb $1: $out" >&2; return 1; }
    grep -qxF -- "$1" "$E2E_LIBVIRT_DIR/domains" 2>/dev/null || echo "$1" >>"$E2E_LIBVIRT_DIR/domains"
}
dom_create() { _dom_virsh_xml create "$@"; }
dom_define() { _dom_virsh_xml define "$@"; }

dom_cleanup() {
    local d
    for d in $(e2e_virsh list --all --name 2>/dev/null); do
        case "$d" in "$E2E_DOMAIN_PREFIX"*) ;; *) continue ;; esac
        e2e_virsh destroy "$d" >/dev/null 2>&1
        e2e_virsh undefine "$d" --managed-save >/dev/null 2>&1
    done
    rm -f "$E2E_LIBVIRT_DIR"/*.save
}
