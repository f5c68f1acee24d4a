# shellcheck shell=bash
# The TAP helper moved to tests/lib/tap.sh, which every shell suite sources; this path stays for end-to-end
# scripts written against it.
# shellcheck source=../lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
