#!/usr/bin/env bash
# User stack unwinding benchmark: how much stack `causeway record` copies per stack
# in DWARF mode, and how many switch-out stacks come out complete, against the
# frame-pointer walk and against `perf record --call-graph dwarf`, in one session.
#
# Usage (as root, from anywhere in the repo):
#
#   bench/unwind.sh                   # builds, runs everything (~3 min on 2 vCPUs)
#   CAUSEWAY=path/to/causeway bench/unwind.sh     # use this binary, do not build
#   WORKLOADS=blocking-net VARIANTS=bin-nofp bench/unwind.sh
#
# Environment knobs (defaults in brackets):
#   WORKLOADS [blocking-net lock-contention]   programs of workloads/ to record
#   VARIANTS [bin-nofp bin]   workloads/bin-nofp (-fomit-frame-pointer) and/or
#                       workloads/bin (-fno-omit-frame-pointer); both -O2 -g.
#                       Debian's glibc has no frame pointers in either case.
#   CONFIGS [dwarf fp perf]   (see "Configurations")
#   WL_SECONDS [2]      --seconds of every workload run
#   CAUSEWAY            a causeway binary to use instead of building one
#   KEEP [0]            keep the temporary directory (traces, perf.data, dumps)
#
# Configurations (each runs WORKLOAD --seconds WL_SECONDS once per variant; one
# after another, in this order, in the same session):
#   dwarf   causeway record -o T.cwt --json -- CMD   (defaults: --unwind dwarf
#           --stack-mode all --stack-depth 32 --stack-window 8K)
#   fp      causeway record -o T.cwt --json --unwind fp --stack-mode all
#           --stack-depth 32 -- CMD   (frame-pointer walk in BPF, same scope)
#   perf    perf record -e sched:sched_switch --call-graph dwarf -o T.data -- CMD
#           (perf's default: 8 KiB of stack per sample, unwound by `perf script`)
#
# Measured (bench/unwind_report.py prints the tables):
#   - completeness: of the switch-out stacks of the workload's threads (its pid,
#     from the trace's exec event or, for perf, the samples named after the
#     program; the launched child's samples before exec are left out. causeway:
#     `causeway dump --stacks --kind stack --pid PID`, SwitchOut stacks, which the
#     recorder takes on blocking switch-outs only; perf: every sched_switch sample
#     of that pid in `perf script` (the sample's thread is the one switched out),
#     and separately those with prev_state not R, the blocking ones), the share
#     whose user frames reach `main` or a thread's start (`start_thread`,
#     `clone3`, `_start`, `__libc_start_call_main`; a lone `clone3` in the main
#     thread does not count): such a stack holds the whole call path. Also the
#     share with no user frame, the share marked cut short, and the most common
#     outermost frames (and thread names) of the stacks that do not reach it.
#   - copies: recorder counters of the trace (`causeway info --json`):
#     user_stack_bytes_copied / user_stack_copies = stack bytes per copied stack;
#     each copy takes 64 + that many bytes of ring (plus the ring's 8-byte record
#     header), and is dropped once unwound (the trace keeps the frames only);
#     unwind_complete / unwind_cut_* / unwind_failed_* outcomes.
#   - sizes: causeway trace bytes (and bytes per stack event), perf.data bytes
#     and bytes per sample.
set -euo pipefail

WORKLOADS=${WORKLOADS:-blocking-net lock-contention}
VARIANTS=${VARIANTS:-bin-nofp bin}
CONFIGS=${CONFIGS:-dwarf fp perf}
WL_SECONDS=${WL_SECONDS:-2}
KEEP=${KEEP:-0}

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_start unwind perf python3 make
cleanup() {
    if [ "$KEEP" = 1 ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

bench_causeway
echo "== make -C workloads (bin and bin-nofp)" >&2
make -s -C workloads >&2
make -s -C workloads NOFP=1 >&2

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "kernel: $(uname -r)"
    echo "cpus: $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "perf: $(perf --version)"
    echo "glibc: $(ldd --version | head -1)"
    echo "causeway: $("$CW" --version 2>/dev/null || echo '?'), $CW_ID (git $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- crates 2>/dev/null || echo ', crates/ modified'))"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "workloads: $WORKLOADS; variants: $VARIANTS; --seconds $WL_SECONDS"
} >"$TMP/header.txt"
cat "$TMP/header.txt" >&2

: >"$TMP/runs.tsv"
for wl in $WORKLOADS; do
    for var in $VARIANTS; do
        bin=$REPO/workloads/$var/$wl
        for cfg in $CONFIGS; do
            base=$TMP/$wl.$var.$cfg
            load=$(cut -d' ' -f1 /proc/loadavg)
            case $cfg in
                dwarf | fp)
                    opts=()
                    [ "$cfg" = fp ] && opts=(--unwind fp --stack-mode all --stack-depth 32)
                    "$CW" record -o "$base.cwt" --json "${opts[@]}" -- "$bin" --seconds "$WL_SECONDS" \
                        >"$base.out" 2>"$base.err" || echo "unwind.sh: FAILED: $cfg $bin" >&2
                    "$CW" info "$base.cwt" --json >"$base.info" 2>/dev/null || true
                    # The workload's pid: the process that exec'd the program.
                    "$CW" dump --json --kind exec "$base.cwt" >"$base.exec" 2>/dev/null || true
                    echo "$bin" >"$base.prog"
                    pid=$(python3 bench/unwind_report.py --pid "$base.exec" "$bin")
                    "$CW" dump --stacks --kind stack --pid "$pid" "$base.cwt" >"$base.stacks" 2>/dev/null || true
                    bytes=$(stat -c %s "$base.cwt" 2>/dev/null || echo 0)
                    ;;
                perf)
                    perf record -e sched:sched_switch --call-graph dwarf -o "$base.data" \
                        -- "$bin" --seconds "$WL_SECONDS" >"$base.out" 2>"$base.err" ||
                        echo "unwind.sh: FAILED: perf $bin" >&2
                    bytes=$(stat -c %s "$base.data" 2>/dev/null || echo 0)
                    perf script -i "$base.data" -F comm,pid,tid,event,trace,ip,sym,dso \
                        >"$base.stacks" 2>"$base.script.err" || true
                    ;;
                *) echo "unwind.sh: unknown config $cfg" >&2; exit 1 ;;
            esac
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$var" "$cfg" "$base" "$bytes" "$load" >>"$TMP/runs.tsv"
            printf '  %-16s %-9s %-6s %s bytes (load %s)\n' "$wl" "$var" "$cfg" "$bytes" "$load" >&2
        done
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$TMP/header.txt"

python3 bench/unwind_report.py "$TMP"
