#!/usr/bin/env bash
# Run the real-world cases: every one, or those named (`realworld/run.sh firebird-lock`).
# For each: its setup.sh (installs the program; cached), then its run.sh (records,
# analyses, judges). Updates realworld/RESULTS.md. Exit status 1 if any case failed or
# could not run.
#
#   CAUSEWAY=path/to/causeway realworld/run.sh     the binary to test
#                                                  (default target/release/causeway)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"

all=()
for d in "$here"/*/; do
    [ -f "$d/run.sh" ] && all+=("$(basename "$d")")
done
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${all[@]}")

failed=0
for c in "${cases[@]}"; do
    if [ ! -f "$here/$c/run.sh" ]; then
        echo "realworld: no case named $c (cases: ${all[*]})" >&2
        exit 2
    fi
done
for c in "${cases[@]}"; do
    rm -f "$OUTROOT/$c/result.json"
    echo "== $c" >&2
    t0=$(date +%s)
    if ! timeout 900 bash "$here/$c/setup.sh"; then
        echo "== $c: setup failed" >&2
        failed=1
        continue
    fi
    # A case stops its servers on exit; the time limit only guards against a hang.
    timeout -k 10 300 bash "$here/$c/run.sh"
    rc=$?
    echo "== $c: exit $rc after $(( $(date +%s) - t0 ))s" >&2
    [ $rc -eq 0 ] || failed=1
done
python3 "$here/lib/results.py" "$OUTROOT" "$here/RESULTS.md" "${cases[@]}"
echo "results: $here/RESULTS.md" >&2
exit $failed
