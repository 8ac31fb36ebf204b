#!/usr/bin/env bash
# Cost of `causeway watch` (hardware watchpoints on a data flag).
#
# Part 1 (bench/watch_trap.c): ns per access of a variable with no watchpoint, with a
# counting breakpoint (the debug trap only) and with a sampling breakpoint (trap +
# a sample written into a perf ring, as `causeway watch` does): the gap between the
# last two bounds what a BPF program on the breakpoint could save.
# Part 2: the spin-flag workload recorded with `causeway record` and with
# `causeway watch --symbol done`: rounds per second, accesses trapped, reads kept.
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

echo
echo "| recorder | run | rounds/s | command exit | accesses trapped | repeated reads not kept | data-flag events |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for rec in record watch; do
    for i in $(seq "$REPS"); do
        args=(record)
        [ "$rec" = watch ] && args=(watch --symbol done)
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
