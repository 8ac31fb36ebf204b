#!/usr/bin/env bash
# What one uprobe hit costs on this machine, by the instruction the probe sits on:
# one the kernel emulates (nop, push), one it single-steps out of line (xor), and a
# 5-byte nop (turned into a call to a trampoline since Linux 6.18 on x86). This is
# the kernel's cost, whatever BPF program runs: every tool that probes a function's
# entry pays it (see bench/funclat.sh and bench/RESULTS.md).
#
# Usage (as root, from anywhere in the repo): bench/uprobe_trap.sh
# Knobs [defaults]: ROUNDS [3] runs of the target, CALLS [20000] calls per function.
#
# Each run: the target (bench/uprobe_trap.c) waits, bpftrace attaches an entry uprobe
# counting hits on each of its four functions, the target times CALLS calls of each
# (three rounds); a run without probes gives the base. Prints min and median ns per
# call by function, probed and not.
set -euo pipefail
source "$(dirname "$0")/common.sh"
bench_start uprobe_trap bpftrace gcc python3
ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-20000}
BIN=$TMP/uprobe_trap
gcc -O2 -o "$BIN" bench/uprobe_trap.c
trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$TMP"' EXIT

# one PROBED: the target's lines, prefixed by "probed" or "base".
one() {
    local out=$TMP/out log=$TMP/bt.log tpid=
    "$BIN" "$CALLS" >"$out" &
    local pid=$!
    for _ in $(seq 100); do
        [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$BIN" ] && break
        sleep 0.02
    done
    : >"$log"
    if [ "$1" = probed ]; then
        local probes=
        for f in xor push nop1 nop5; do probes+="${probes:+,}uprobe:$BIN:trap_$f"; done
        bpftrace -p "$pid" -e "$probes { @[probe] = count(); }" >"$log" 2>&1 &
        tpid=$!
        for _ in $(seq 600); do grep -q Attaching "$log" && break; sleep 0.1; done
    fi
    sleep 1
    kill -USR1 "$pid"
    wait "$pid"
    if [ -n "$tpid" ]; then
        kill -INT "$tpid" 2>/dev/null || true
        wait "$tpid" 2>/dev/null || true
    fi
    sed "s/^/$1 /" "$out"
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; kernel $(uname -r)"
echo "bpftrace: $(bpftrace --version 2>&1 | head -1)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
    one base
    one probed
done | python3 -c '
import collections, statistics, sys
v = collections.defaultdict(list)
for l in sys.stdin:
    kind, fn, ns = l.split()
    v[(fn, kind)].append(float(ns))
print("| first instruction | ns/call alone (median) | probed: min | probed: median | one hit (median - alone) |")
print("|---|---|---|---|---|")
for fn in ["xor", "push", "nop1", "nop5"]:
    b, p = statistics.median(v[(fn, "base")]), v[(fn, "probed")]
    print("| %s | %.1f | %.0f | %.0f | %.0f |" % (fn, b, min(p), statistics.median(p), statistics.median(p) - b))
'
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
