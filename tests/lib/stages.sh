# shellcheck shell=bash
# Sourced by tests/run-all.sh: its stages, and the parts of a stage of several scripts.
#   stage NAME CMD...   runs CMD: ok (exit 0), skipped (77) or FAILED (anything else), counted in
#                       passed, skipped, failed (failures: the names of the failed ones)
# A script of a stage of several that skipped while the others ran is named on the stage's line, counted
# in skipped and kept in partial ("NAME: SCRIPT..."): a guest kernel that did not download, or a tool
# gone, would otherwise leave a stage "ok" with a part of it never run.
passed=0 failed=0 skipped=0 failures=() partial=()
part_skips=() # the scripts of the running stage that exited 77

stage() {
        local name=$1
        shift
        echo "=== $name"
        local start=$SECONDS
        part_skips=()
        "$@"
        local rc=$?
        local note=
        if ((rc != 77 && ${#part_skips[@]})); then
                skipped=$((skipped + ${#part_skips[@]}))
                partial+=("$name: ${part_skips[*]}")
                note="; skipped: ${part_skips[*]}"
        fi
        if ((rc == 0)); then
                passed=$((passed + 1))
                echo "=== $name: ok ($((SECONDS - start)) s$note)"
        elif ((rc == 77)); then
                skipped=$((skipped + 1))
                echo "=== $name: skipped ($((SECONDS - start)) s)"
        else
                failed=$((failed + 1))
                failures+=("$name")
                echo "=== $name: FAILED ($((SECONDS - start)) s$note)"
        fi
}

# For stages of several scripts: "part CMD..." runs each in turn; outcome then returns 1 if one failed,
# 77 if all of them were skipped (exit 77), else 0. A part that exits 77 is kept in part_skips, by the
# first of its words that names a script (*.sh), else by all of them.
part() {
        "$@"
        case $? in
        0) ran=1 ;;
        77) part_skips+=("$(part_name "$@")") ;;
        *) bad=1 ;;
        esac
}
part_name() {
        local a
        for a; do
                case $a in *.sh)
                        echo "$a"
                        return
                        ;;
                esac
        done
        echo "$*"
}
outcome() {
        ((bad)) && return 1
        ((ran)) && return 0
        return 77
}
