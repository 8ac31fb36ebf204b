#!/usr/bin/env bash
# Cost of `causeway watch` (hardware watchpoints on a data flag).
#
# Part 1 (bench/watch_trap.c): ns per access of a variable with no watchpoint, with a
# counting breakpoint (the debug trap only) and with a sampling breakpoint (trap +
# a sample written into a perf ring, as `causeway watch` does): the gap between the
# last two bounds what a BPF program on the breakpoint could save.
# Part 2 (bench/watch_loop.c): ns per access of a loop reading a variable, bare and
# under `causeway watch --via breakpoint` and `--via uprobe` (the whole path: trap or
# int3, sample or BPF program, the recorder draining it).
# Part 3: the spin-flag workload recorded with `causeway record` and watched with
# inherited watchpoints (`--via breakpoint`), per-thread ones (`thread-breakpoint`)
# and uprobes: rounds per second, how the command ended (the SIGTRAP hazard),
# accesses trapped, reads kept.
#
# Usage (as root, from anywhere in the repo):  bench/watch.sh
# Knobs: REPS [3] runs of each; WL_SECONDS [2].

set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start watch python3
bench_causeway
REPS=${REPS:-3}
WL_SECONDS=${WL_SECONDS:-2}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; causeway $CW_ID"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

cc -O2 -o "$TMP/watch_trap" bench/watch_trap.c
echo
echo "== trap cost (bench/watch_trap), $REPS runs"
for _ in $(seq "$REPS"); do "$TMP/watch_trap" 20000 || echo "(killed: status $?)"; done

cc -O2 -o "$TMP/watch_loop" bench/watch_loop.c
LOOP_N=${LOOP_N:-50000}
echo
echo "== per-access cost through causeway watch (bench/watch_loop, $LOOP_N reads), $REPS runs"
for _ in $(seq "$REPS"); do
    echo "bare: $("$TMP/watch_loop" $((LOOP_N * 100)))"
    for via in breakpoint uprobe; do
        line=$("$CW" watch --via "$via" --symbol flag -o "$TMP/loop.cwt" -- "$TMP/watch_loop" "$LOOP_N" 2>"$TMP/loop.err" || true)
        echo "$via: ${line:-killed ($(grep -o 'SIGTRAP' "$TMP/loop.err" | head -1))}"
    done
done

echo
echo "| recorder | run | rounds/s | command exit | accesses trapped | repeated reads not kept | data-flag events |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for rec in record watch-inherited watch-thread watch-uprobe; do
    for i in $(seq "$REPS"); do
        case $rec in
        record) args=(record) ;;
        watch-inherited) args=(watch --via breakpoint --symbol done) ;;
        watch-thread) args=(watch --via thread-breakpoint --symbol done) ;;
        watch-uprobe) args=(watch --via uprobe --symbol done) ;;
        esac
        "$CW" "${args[@]}" --events default,syscall --syscalls default,sched_yield \
            -o "$TMP/$rec.cwt" --json="$TMP/$rec.json" -- workloads/bin/spin-flag \
            --seconds "$WL_SECONDS" >"$TMP/$rec.out" 2>/dev/null
        python3 - "$rec" "$i" "$TMP/$rec.json" "$TMP/$rec.out" <<'PY'
import json, re, sys
rec, i, js, out = sys.argv[1:5]
s = json.load(open(js))
c = s["counters"]
m = re.search(r"throughput: ([0-9.]+)", open(out).read())
tput = m.group(1) if m else "-"
code = s["command_exit_code"]
code = "SIGTRAP" if code == 133 else code
hits, rep = c.get("watch_hits", 0), c.get("watch_reads_repeated", 0)
print(f"| {rec} | {i} | {tput} | {code} | {hits} | {rep} | {hits - rep} |")
PY
    done
done
