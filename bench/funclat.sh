#!/usr/bin/env bash
# Cost of live function-latency probes: `causeway latency -p PID --func F` against
# bpftrace's hist() and BCC's funclatency on the same function, in the same rounds.
#
# Usage (as root, from anywhere in the repo):
#
#   bench/funclat.sh                    # builds causeway, runs every mode and tool
#   ROUNDS=7 bench/funclat.sh
#   CAUSEWAY=path/to/causeway bench/funclat.sh
#
# Knobs [defaults]: ROUNDS [5]; MODES [empty stat io dread]; CALLS_empty [100000],
# CALLS_stat [100000], CALLS_io [200], CALLS_dread [2000]; TOOLS [base causeway
# bpftrace funclatency; also causeway-pair: causeway with CAUSEWAY_UPROBE=pair, the
# uprobe/uretprobe pair it falls back to where uprobe sessions are missing];
# BPF_STATS [0].
#
# BPF_STATS=1 also measures what each tool's BPF programs cost per probed call, apart
# from the traps: kernel.bpf_stats_enabled is set for the run (and restored), and after
# the target's calls the run_time_ns of the programs the tool loaded (those that ran at
# least CALLS times: its entry and return programs) is summed and divided by CALLS. It
# prints a second table. The statistics add two clock reads per program run to every
# tool alike, so the elapsed-time table of such a run is not the one to quote.
#
# Needs bpftrace, bpfcc-tools and kernel headers for BCC (`CAUSEWAY_BENCH=1
# scripts/setup.sh` installs them). BCC compiles its program against the running
# kernel's headers; a kernel without a headers package (a VM's own build) gets
# /lib/modules/$(uname -r)/build and source linked to Debian's newest headers, which
# is enough for a uprobe program (it uses no kernel structure but pt_regs).
#
# Target: bench/funclat.c (built here). It waits for SIGUSR1, then times CALLS calls
# of op_MODE in its own loop and prints ns per call, so a tool's start-up (BCC
# compiles its program for seconds) is not counted: each tool is started on the
# waiting process, the script waits for the tool's "attached" line and 1 s more, then
# sends SIGUSR1. Per-call overhead = ns per call under the tool - ns per call alone;
# tools are interleaved within each round, their order rotated between rounds.
#
#   empty  op_empty returns at once: the probes' whole cost per call
#   stat   stat("/usr/bin"): a memory-bound call (DARC's stat benchmark)
#   io     4 KiB pwrite + fdatasync on a file of the root file system: I/O-bound
#   dread  4 KiB O_DIRECT pread of a 16 MiB file there: I/O-bound, steadier than io
#
# Peers: bpftrace -p PID -e 'uprobe:BIN:F { @s[tid] = nsecs } uretprobe:BIN:F
# /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]) }' and
# funclatency-bpfcc -p PID BIN:F (Debian packages bpftrace, bpfcc-tools).
set -euo pipefail
source "$(dirname "$0")/common.sh"
bench_start funclat bpftrace funclatency-bpfcc gcc
bench_causeway
ROUNDS=${ROUNDS:-5}
MODES=${MODES:-empty stat io dread}
TOOLS=${TOOLS:-base causeway bpftrace funclatency}
CALLS_empty=${CALLS_empty:-100000}
CALLS_stat=${CALLS_stat:-100000}
CALLS_io=${CALLS_io:-200}
CALLS_dread=${CALLS_dread:-2000}
KDIR=/lib/modules/$(uname -r)
if [ ! -e "$KDIR/build/include" ]; then
    hdr=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
    common=${hdr%-amd64}-common
    [ -n "$hdr" ] && [ -d "$common" ] || { echo "funclat.sh: no kernel headers for BCC; run CAUSEWAY_BENCH=1 scripts/setup.sh" >&2; exit 1; }
    echo "funclat.sh: linking $KDIR/build to $hdr for BCC" >&2
    mkdir -p "$KDIR"
    ln -sfn "$hdr" "$KDIR/build"
    ln -sfn "$common" "$KDIR/source"
fi
BIN=$TMP/funclat
gcc -O2 -g -o "$BIN" bench/funclat.c
IOFILE=$(mktemp /var/tmp/causeway-funclat.XXXXXX)
trap 'rm -f "$IOFILE"; [ "${KEEP:-0}" = 1 ] || rm -rf "$TMP"' EXIT

# wait_for FILE PATTERN: until the tool's log shows it attached (at most 60 s).
wait_for() {
    for _ in $(seq 600); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "funclat.sh: tool never attached; its log:" >&2
    cat "$1" >&2
    return 1
}

# one MODE TOOL: prints ns per call.
one() {
    local mode=$1 tool=$2 calls_var=CALLS_$1 fn=op_$1 log=$TMP/tool.log out=$TMP/out
    "$BIN" "$mode" "${!calls_var}" "$IOFILE" >"$out" &
    local pid=$! tpid=
    # Until the target has exec'd (a tool reading /proc/PID/exe sooner sees bash).
    for _ in $(seq 100); do
        [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$BIN" ] && break
        sleep 0.02
    done
    : >"$log"
    local before=
    [ "$BPF_STATS" = 1 ] && before=$(prog_ids)
    case $tool in
    base) ;;
    causeway | causeway-pair)
        # causeway-pair: the uprobe/uretprobe pair, where causeway would use a session.
        CAUSEWAY_UPROBE=$([ "$tool" = causeway-pair ] && echo pair || echo auto) \
            "$CW" latency -p "$pid" --func "$fn" --json >"$TMP/cw.json" 2>"$log" &
        tpid=$!
        wait_for "$log" "timing" ;;
    bpftrace)
        bpftrace -p "$pid" -e "uprobe:$BIN:$fn { @s[tid] = nsecs; } uretprobe:$BIN:$fn /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" >"$log" 2>&1 &
        tpid=$!
        wait_for "$log" "Attaching" ;;
    funclatency)
        PYTHONUNBUFFERED=1 funclatency-bpfcc -p "$pid" "$BIN:$fn" >"$log" 2>&1 &
        tpid=$!
        wait_for "$log" "Tracing" ;;
    esac
    # Every configuration waits, base too: SIGUSR1 before the target installed its
    # handler would kill it.
    sleep 1
    kill -USR1 "$pid"
    wait "$pid"
    if [ "$BPF_STATS" = 1 ] && [ "$tool" != base ]; then
        echo "$mode $tool $(bpf_ns_per_call "$before" "${!calls_var}")" >>"$TMP/bpf"
    fi
    if [ -n "$tpid" ]; then
        # A background job of a script starts with SIGINT ignored; Python (BCC) keeps
        # it so, so funclatency gets SIGTERM (its report is not needed here).
        if [ "$tool" = funclatency ]; then kill -TERM "$tpid" 2>/dev/null || true; else kill -INT "$tpid" 2>/dev/null || true; fi
        wait "$tpid" 2>/dev/null || true
    fi
    if [ "${tool%-pair}" = causeway ]; then
        # The profile must hold every call: the probes were attached throughout.
        local got
        got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["profiles"][0]["ops"])' "$TMP/cw.json")
        [ "$got" = "${!calls_var}" ] || echo "funclat.sh: causeway counted $got of ${!calls_var} calls" >&2
    fi
    awk '{print $2}' "$out"
}

# prog_ids: the ids of the BPF programs loaded now.
prog_ids() {
    bpftool prog show -j | python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))'
}

# bpf_ns_per_call IDS CALLS: run time of the programs loaded since IDS that ran at
# least CALLS times, per call.
bpf_ns_per_call() {
    bpftool prog show -j | python3 -c '
import json, sys
before, calls = set(sys.argv[1].split()), int(sys.argv[2])
progs = [p for p in json.load(sys.stdin) if str(p["id"]) not in before and p.get("run_cnt", 0) >= calls]
print("%.1f" % (sum(p.get("run_time_ns", 0) for p in progs) / calls))' "$1" "$2"
}

BPF_STATS=${BPF_STATS:-0}
if [ "$BPF_STATS" = 1 ]; then
    command -v bpftool >/dev/null || { echo "funclat.sh: BPF_STATS=1 needs bpftool" >&2; exit 1; }
    old_stats=$(sysctl -n kernel.bpf_stats_enabled)
    sysctl -q kernel.bpf_stats_enabled=1
    trap 'sysctl -q kernel.bpf_stats_enabled='"$old_stats"'; rm -f "$IOFILE"; [ "${KEEP:-0}" = 1 ] || rm -rf "$TMP"' EXIT
fi

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; kernel $(uname -r); causeway $CW_ID"
echo "bpftrace: $(bpftrace --version 2>&1 | head -1); bcc: $(dpkg-query -W -f='${Version}' bpfcc-tools)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r -a tools <<<"$TOOLS"
for mode in $MODES; do
    declare -A res=()
    for r in $(seq "$ROUNDS"); do
        n=${#tools[@]}
        for i in $(seq 0 $((n - 1))); do
            t=${tools[$(((i + r) % n))]}
            res[$t]+="$(one "$mode" "$t") "
        done
    done
    for t in "${tools[@]}"; do
        echo "$mode $t ${res[$t]}"
    done
    unset res
done | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
base = {}
print("| mode | tool | ns/call min | ns/call median | overhead/call (median - base median) |")
print("|---|---|---|---|---|")
for r in rows:
    mode, tool, vals = r[0], r[1], [float(v) for v in r[2:]]
    med = statistics.median(vals)
    if tool == "base":
        base[mode] = med
    over = "" if tool == "base" else "%.0f ns (%+.1f %%)" % (med - base.get(mode, 0), 100 * (med - base.get(mode, 0)) / base.get(mode, 1))
    print("| %s | %s | %.1f | %.1f | %s |" % (mode, tool, min(vals), med, over))
'
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$BPF_STATS" = 1 ] && [ -s "$TMP/bpf" ]; then
    python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(list)
for l in open(sys.argv[1]):
    mode, tool, ns = l.split()
    runs[(mode, tool)].append(float(ns))
print()
print("| mode | tool | BPF ns per call (entry + return), min | median |")
print("|---|---|---|---|")
for (mode, tool), v in runs.items():
    print("| %s | %s | %.0f | %.0f |" % (mode, tool, min(v), statistics.median(v)))
' "$TMP/bpf"
fi
