#!/usr/bin/env bash
# User stack unwinding benchmark: how much stack `causeway record` copies per stack
# in DWARF mode, and how many switch-out stacks come out complete, against the
# frame-pointer walk and against `perf record --call-graph dwarf`, in one session.
#
# Usage (as root, from anywhere in the repo):
#
#   bench/unwind.sh                   # builds, runs everything (~5 min on 2 vCPUs)
#   CAUSEWAY=path/to/causeway bench/unwind.sh     # use this binary, do not build
#   WORKLOADS=blocking-net VARIANTS=bin-nofp bench/unwind.sh
#   WORKLOADS="deb-head deb-cat deb-sort deb-gzip deb-python3" \
#       CONFIGS="dwarf fp perf perf64k dwarf16k" bench/unwind.sh   # the Debian programs
#
# Environment knobs (defaults in brackets):
#   WORKLOADS [blocking-net lock-contention deb-head deb-cat deb-sort deb-gzip
#             deb-python3]   programs of workloads/ to record, or `deb-P`: Debian's
#                       stripped /usr/bin/P in a pipe (see "Debian programs")
#   VARIANTS [bin-nofp bin]   workloads/bin-nofp (-fomit-frame-pointer) and/or
#                       workloads/bin (-fno-omit-frame-pointer); both -O2 -g.
#                       Debian's glibc has no frame pointers in either case.
#                       (`deb-` workloads run once, variant `debian`.)
#                       `ns-W`: workload W run by workloads/ns-run.sh in its own
#                       mount and PID namespaces, from a copy of its files at
#                       /opt/app (paths absent on the host); causeway configs only
#   CONFIGS [dwarf fp perf]   (see "Configurations"; perf64k and dwarf16k on demand:
#                       perf64k writes ~66 KB per sample, ~0.5 GB for blocking-net)
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
#   dwarf16k  the defaults with --stack-window 16K (the largest window)
#   perf    perf record -e sched:sched_switch --call-graph dwarf,8192 -o T.data -- CMD
#           (perf's default: 8 KiB of stack per sample, unwound by `perf script`)
#   perf64k the same with --call-graph dwarf,65528 (the most perf copies per sample)
#
# Debian programs (`deb-P`): Debian's binaries (stripped; their debug information is
# not used) in `sh -c` pipes that make P block in read and in write several times:
# the input comes in bursts of `dd if=/dev/urandom` with sleeps between them, and the
# output goes to a reader that drains 128 KiB, sleeps, drains again (more than the
# 64 KiB of a pipe each burst, so P blocks writing while the reader sleeps). No other
# process of the pipe runs P (the pid is that of P's exec):
#   head     head -c 1500000 (stops reading before the input ends)
#   cat      cat
#   sort     sort (blocks in read while the input comes, in write while it prints)
#   gzip     gzip -1 -c (random input: the output is as large as the input)
#   python3  python3 -c "<read1(65536) from stdin, write and flush to stdout, to EOF>"
#
# Measured (bench/unwind_report.py prints the tables):
#   - completeness: of the switch-out stacks of the workload's threads (its pid,
#     from the trace's exec event or, for perf, the samples named after the
#     program; the launched child's samples before exec, named causeway, perf or
#     sh, are left out. causeway: `causeway dump --stacks --kind stack --pid PID`,
#     SwitchOut stacks, which the recorder takes on blocking switch-outs only;
#     perf: every sched_switch sample
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

WORKLOADS=${WORKLOADS:-blocking-net lock-contention deb-head deb-cat deb-sort deb-gzip deb-python3}
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

# deb_pipe P: the `sh -c` pipe of the Debian program P (see "Debian programs").
deb_pipe() {
    local bursts="sleep 0.2" drains="sleep 0.3" i prog
    for i in 1 2 3 4; do
        bursts="$bursts; dd if=/dev/urandom bs=100k count=4 status=none; sleep 0.3"
        drains="$drains; dd of=/dev/null bs=64k count=2 iflag=fullblock status=none; sleep 0.3"
    done
    case $1 in
        head) prog="/usr/bin/head -c 1500000" ;;
        cat) prog="/usr/bin/cat" ;;
        sort) prog="/usr/bin/sort" ;;
        gzip) prog="/usr/bin/gzip -1 -c" ;;
        python3)
            prog="/usr/bin/python3 -c \"import sys; r = sys.stdin.buffer; w = sys.stdout.buffer; \
[w.write(b) or w.flush() for b in iter(lambda: r.read1(65536), b'')]\"" ;;
        *) echo "unwind.sh: unknown Debian program $1" >&2; exit 1 ;;
    esac
    echo "{ $bursts; } | $prog | { $drains; dd of=/dev/null bs=64k status=none; }"
}

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
    echo "workloads: $WORKLOADS; variants: $VARIANTS (deb-: debian); --seconds $WL_SECONDS; configs: $CONFIGS"
} >"$TMP/header.txt"
cat "$TMP/header.txt" >&2

: >"$TMP/runs.tsv"
for wl in $WORKLOADS; do
    vars=$VARIANTS
    case $wl in deb-*) vars=debian ;; esac
    for var in $vars; do
        bin=$REPO/workloads/$var/$wl
        cmd=("$bin" --seconds "$WL_SECONDS")
        if [ "$var" = debian ]; then
            bin=/usr/bin/${wl#deb-}
            cmd=(sh -c "$(deb_pipe "${wl#deb-}")")
        fi
        case $wl in ns-*)
            # The process exec's the copied loader, which runs the program.
            cmd=(bash "$REPO/workloads/ns-run.sh" "$REPO/workloads/$var/${wl#ns-}" --seconds "$WL_SECONDS")
            bin=/opt/app/lib/ld-linux-x86-64.so.2 ;;
        esac
        for cfg in $CONFIGS; do
            case $wl/$cfg in ns-*/perf*) continue ;; esac
            base=$TMP/$wl.$var.$cfg
            load=$(cut -d' ' -f1 /proc/loadavg)
            case $cfg in
                dwarf | dwarf16k | fp)
                    opts=()
                    [ "$cfg" = fp ] && opts=(--unwind fp --stack-mode all --stack-depth 32)
                    [ "$cfg" = dwarf16k ] && opts=(--stack-window 16K)
                    "$CW" record -o "$base.cwt" --json "${opts[@]}" -- "${cmd[@]}" \
                        >"$base.out" 2>"$base.err" || echo "unwind.sh: FAILED: $cfg $bin" >&2
                    "$CW" info "$base.cwt" --json >"$base.info" 2>/dev/null || true
                    # The workload's pid: the process that exec'd the program.
                    "$CW" dump --json --kind exec "$base.cwt" >"$base.exec" 2>/dev/null || true
                    echo "$bin" >"$base.prog"
                    pid=$(python3 bench/unwind_report.py --pid "$base.exec" "$bin")
                    "$CW" dump --stacks --kind stack --pid "$pid" "$base.cwt" >"$base.stacks" 2>/dev/null || true
                    bytes=$(stat -c %s "$base.cwt" 2>/dev/null || echo 0)
                    ;;
                perf | perf64k)
                    size=8192
                    [ "$cfg" = perf64k ] && size=65528
                    echo "$bin" >"$base.prog"
                    perf record -e sched:sched_switch --call-graph "dwarf,$size" -o "$base.data" \
                        -- "${cmd[@]}" >"$base.out" 2>"$base.err" ||
                        echo "unwind.sh: FAILED: $cfg $bin" >&2
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
