# shellcheck shell=bash
# Sourced by tests/run-all.sh: its stages, and the parts of a stage of several scripts.
#   stage NAME CMD...   runs CMD: ok (exit 0), skipped (77) or FAILED (anything else), counted in
#                       passed, skipped, failed (failures: the names of the failed ones)
passed=0 failed=0 skipped=0 failures=()

stage() {
        local name=$1
        shift
        echo "=== $name"
        local start=$SECONDS
        "$@"
        local rc=$?
        if ((rc == 0)); then
                passed=$((passed + 1))
                echo "=== $name: ok ($((SECONDS - start)) s)"
        elif ((rc == 77)); then
                skipped=$((skipped + 1))
                echo "=== $name: skipped ($((SECONDS - start)) s)"
        else
                failed=$((failed + 1))
                failures+=("$name")
                echo "=== $name: FAILED ($((SECONDS - start)) s)"
        fi
}

# For stages of several scripts: "part CMD..." runs each in turn; outcome then returns 1 if one failed,
# 77 if all of them were skipped (exit 77), else 0.
part() {
        "$@"
        case $? in
        0) ran=1 ;;
        77) ;;
        *) bad=1 ;;
        esac
}
outcome() {
        ((bad)) && return 1
        ((ran)) && return 0
        return 77
}
