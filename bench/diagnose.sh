#!/usr/bin/env bash
# Diagnosis benchmark (Argus Table 4 style, and graph build time on a busy trace).
#
# Part 1: each zoo diagnosis recorded (with system calls) and diagnosed with --auto:
# the questions the heuristic answered (what a user would be asked), the length of
# the slices, and whether the known culprit was found (checked by bench/diagnose_check.py).
# Part 2: a system-wide recording of 10 s while the zoo workloads and a compile run;
# the graph's size and the time to read the trace, build the graph and diagnose.
#
# Usage (as root, from anywhere in the repo):
#
#   bench/diagnose.sh
#   CAUSEWAY=path/to/causeway REPS=5 bench/diagnose.sh
#
# Knobs: WL_SECONDS [1.5] run time of each workload in part 1; BUSY_SECONDS [10];
# REPS [3] timed repetitions in part 2 (min and median reported); ONLY [all] a
# regular expression of the part-1 rows to run; SKIP_BUSY [0] 1 skips part 2.
#
# The `spin-flag+watch` row records with `causeway watch --symbol done` (the data flag
# by hardware watchpoints) instead of `causeway record`.

set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start diagnose python3
bench_causeway
WL_SECONDS=${WL_SECONDS:-1.5}
BUSY_SECONDS=${BUSY_SECONDS:-10}
REPS=${REPS:-3}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; causeway $CW_ID"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# workload | extra workload flags | thread to diagnose | syscalls to record | --stall
cases=(
    "circular-timeout||ct-client|default|wait"
    "long-cpu||event-loop|default|run"
    "stopped-peer|--stop-ms 500|client-0|default|wait"
    "lock-chain||requester|default|wait"
    "spin-flag||waiter|default,sched_yield|run"
    "spin-flag+watch||waiter|default,sched_yield|run"
    "batch-loop||bl-loop|default|run"
)
ONLY=${ONLY:-.}
SKIP_BUSY=${SKIP_BUSY:-0}
echo
echo "| workload | problem (--thread, --stall) | case | queries | slice steps | culprit found by --auto |"
echo "|---|---|---|---:|---:|---|"
for c in "${cases[@]}"; do
    IFS='|' read -r w extra thread syscalls stall <<<"$c"
    [[ $w =~ $ONLY ]] || continue
    rec=(record)
    [[ $w == *+watch ]] && rec=(watch --symbol done)
    # shellcheck disable=SC2086
    "$CW" "${rec[@]}" --sample 499 --events default,syscall --syscalls "$syscalls" -o "$TMP/$w.cwt" -- "workloads/bin/${w%+watch}" \
        --seconds "$WL_SECONDS" $extra >/dev/null 2>&1
    "$CW" diagnose --auto --json --thread "$thread" --stall "$stall" "$TMP/$w.cwt" \
        >"$TMP/$w.json" || true
    python3 bench/diagnose_check.py "$w" "$thread --stall $stall" "$TMP/$w.json"
done

[ "$SKIP_BUSY" = 1 ] && exit 0
echo
echo "== busy trace: ${BUSY_SECONDS}s system-wide while the zoo and a compile run" >&2
(CARGO_TARGET_DIR=$TMP/target nice cargo build --release -q -p causeway-format \
    >/dev/null 2>&1 || true) &
compile=$!
pids=()
for w in blocking-write lock-contention load-imbalance circular-timeout spin-flag long-cpu \
    two-peaks blocking-net stopped-peer lock-chain; do
    (cd "$TMP" && "$REPO/workloads/bin/$w" --seconds "$((BUSY_SECONDS + 2))" >/dev/null 2>&1) &
    pids+=($!)
done
sleep 1
load=$(cut -d' ' -f1-3 /proc/loadavg)
"$CW" record -a --events default,syscall --duration "${BUSY_SECONDS}s" -o "$TMP/busy.cwt" \
    >/dev/null 2>"$TMP/busy.log"
kill "$compile" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
wait "$compile" 2>/dev/null || true
events=$("$CW" info --json "$TMP/busy.cwt" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("events", "?"))')
echo
echo "busy trace: $(stat -c %s "$TMP/busy.cwt") bytes, $events events; load average during recording: $load"
for i in $(seq "$REPS"); do
    "$CW" diagnose --auto --timing "$TMP/busy.cwt" 2>&1 >/dev/null | grep 'graph of' || true
done | tee "$TMP/timing.txt"
python3 - "$TMP/timing.txt" <<'PY'
import re, statistics, sys
rows = [l for l in open(sys.argv[1]) if "graph of" in l]
if not rows:
    sys.exit("no timing lines")
def col(name):
    return [float(re.search(name + r" ([0-9.]+) s", l).group(1)) for l in rows]
m = re.search(r"graph of (\d+) vertices, (\d+) edges \((\d+) strong, (\d+) weak\)", rows[0])
print(f"| vertices | edges | strong | weak | read s (min / median) | graph build s (min / median) | diagnose s (min / median) |")
print(f"|---:|---:|---:|---:|---|---|---|")
fmt = lambda v: f"{min(v):.3f} / {statistics.median(v):.3f}"
print(f"| {m.group(1)} | {m.group(2)} | {m.group(3)} | {m.group(4)} | {fmt(col('read'))} | {fmt(col('built in'))} | {fmt(col('diagnosed in'))} |")
PY
rm -rf "$TMP"
