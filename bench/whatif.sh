#!/usr/bin/env bash
# Predicted gains against measured ones (issue 32), as COZ validates virtual speedups:
# each case records a zoo workload at one setting, asks `causeway whatif` for the gain
# of a change that a knob of the workload makes for real (a flush replaced by a sleep
# of known length, a backend's delay, a critical section's CPU, or the workload's
# `--fixed` variant where the fix removes one wait), then runs the workload unrecorded
# at both settings ROUNDS times each (default 5, alternating) and compares.
#
#   predicted throughput = median measured at the recorded setting × (1 + gain)
#   error                = predicted / median measured at the other setting - 1
#
# Also the prediction's cost: `causeway whatif` and `causeway bottleneck` timed on the
# largest recording the cases make.
#
# Environment: CAUSEWAY (binary), ROUNDS, RUN_S (seconds per measured run, default 3),
# REC_S (seconds recorded, default 4), CASES (space-separated case names to run),
# KEEP=1 keeps $TMP.
set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start whatif python3
bench_causeway
ROUNDS=${ROUNDS:-5}
RUN_S=${RUN_S:-3}
REC_S=${REC_S:-4}
W=$REPO/workloads/bin

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; kernel $(uname -r)"
echo "causeway: $CW_ID"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"

# name | workload | recorded setting | other setting | whatif flags
CASE_LIST="
bw-half     | blocking-write  | --sync-us 1000   | --sync-us 500   | --edge consumer->timer --factor 2
bw-quarter  | blocking-write  | --sync-us 1000   | --sync-us 250   | --edge consumer->timer --factor 4
gc-half     | group-commit    | --sync-us 1000   | --sync-us 500   | --edge sync->timer --factor 2
pc-half     | pipeline-commit | --sync-us 1000   | --sync-us 500   | --edge sync->timer --factor 2
bn-half     | blocking-net    | --backend-us 500 | --backend-us 250 | --edge server->timer --factor 2
lc-half     | lock-chain      | --sleep-ms 30    | --sleep-ms 15   | --edge lk-backend->timer --factor 2
cs-half     | lock-contention | --cs-us 30       | --cs-us 15      | --cpu worker --factor 1.75
bw-site     | blocking-write  | --sync-us 1000   | --sync-us 500   | --site flush_log --factor 2
lh-fixed    | lock-holder-idle | --sleep-ms 200  | --sleep-ms 200 --fixed | --edge lh-hold-client->lh-script
sp-fixed    | stopped-peer    | --stop-ms 1000   | --stop-ms 1000 --fixed | --edge server->sp-stopper --edge sp-server->sp-stopper --edge server->sp-server
"

throughput() { # workload args... -> ops/s on stdout
    local w=$1
    shift
    "$W/$w" "$@" --seconds "$RUN_S" 2>/dev/null | sed -n 's/^throughput: \([0-9.]*\) ops\/s$/\1/p'
}

RAW=$TMP/raw.tsv
: > "$RAW"
LARGEST=""
LARGEST_SIZE=0
while IFS='|' read -r name wl rec other flags; do
    name=$(echo "$name" | xargs)
    [ -z "$name" ] && continue
    if [ -n "${CASES:-}" ] && ! [[ " $CASES " == *" $name "* ]]; then continue; fi
    wl=$(echo "$wl" | xargs)
    read -r -a rec_a <<< "$rec"
    read -r -a other_a <<< "$other"
    read -r -a flags_a <<< "$flags"
    trace=$TMP/$name.cwt
    echo "== $name: record $wl ${rec_a[*]}" >&2
    (cd "$TMP" && "$CW" record -o "$trace" -- "$W/$wl" "${rec_a[@]}" --seconds "$REC_S" > /dev/null 2>&1)
    pred=$("$CW" whatif --json "${flags_a[@]}" "$trace" 2> "$TMP/$name.err" \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["gain"], d["counted"]["cycles"])') \
        || { echo "$name: whatif failed: $(cat "$TMP/$name.err")" >&2; continue; }
    size=$(stat -c %s "$trace")
    if [ "$size" -gt "$LARGEST_SIZE" ]; then LARGEST=$trace; LARGEST_SIZE=$size; LARGEST_FLAGS=$flags; fi
    base=()
    after=()
    for _ in $(seq "$ROUNDS"); do
        base+=("$(cd "$TMP" && throughput "$wl" "${rec_a[@]}")")
        after+=("$(cd "$TMP" && throughput "$wl" "${other_a[@]}")")
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$wl" "$rec" "$other" "$pred" \
        "${base[*]}" "${after[*]}" "$flags" >> "$RAW"
done <<< "$CASE_LIST"

python3 - "$RAW" <<'PY'
import statistics, sys
print("| case | workload | recorded at | run at | change | predicted gain | predicted ops/s | measured ops/s (median of runs) | error |")
print("|---|---|---|---|---|---|---|---|---|")
errs = []
for line in open(sys.argv[1]):
    name, wl, rec, other, pred, base, after, flags = line.rstrip("\n").split("\t")
    gain, cycles = pred.split()
    gain = float(gain)
    b = statistics.median(float(x) for x in base.split())
    a = statistics.median(float(x) for x in after.split())
    p = b * (1 + gain)
    err = p / a - 1
    errs.append(abs(err))
    print(f"| {name} | {wl} | `{rec.strip()}` ({b:.0f} ops/s) | `{other.strip()}` | `{flags.strip()}` | {gain*100:+.0f}% | {p:.0f} | {a:.0f} | {err*100:+.1f}% |")
if errs:
    print(f"\nwithin 10 %: {sum(e <= 0.10 for e in errs)} of {len(errs)}; within 25 %: {sum(e <= 0.25 for e in errs)} of {len(errs)}")
PY

if [ -n "$LARGEST" ]; then
    read -r -a lf <<< "$LARGEST_FLAGS"
    echo
    echo "cost on the largest recording, $(basename "$LARGEST") ($LARGEST_SIZE bytes):"
    for _ in 1 2 3; do
        /usr/bin/time -f "  bottleneck: %e s, %M KB" "$CW" bottleneck "$LARGEST" > /dev/null 2>> "$TMP/time.txt" || true
        /usr/bin/time -f "  whatif: %e s, %M KB" "$CW" whatif "${lf[@]}" "$LARGEST" > /dev/null 2>> "$TMP/time.txt" || true
        /usr/bin/time -f "  bottleneck --what-if: %e s, %M KB" "$CW" bottleneck --what-if "$LARGEST" > /dev/null 2>> "$TMP/time.txt" || true
    done
    grep -E "^  (bottleneck|whatif)" "$TMP/time.txt"
    "$CW" info "$LARGEST" 2>/dev/null | grep -m1 -i "events" || true
fi
[ "${KEEP:-0}" = 1 ] && echo "kept $TMP" || rm -rf "$TMP"
