#!/usr/bin/env bash
# Recorder overhead benchmark: `causeway record` against no tracing and against
# `perf record -e sched:sched_switch -e sched:sched_waking -g` in the same run.
#
# Usage (as root, from anywhere in the repo):
#
#   bench/overhead.sh                 # builds, runs everything (~6 min on 2 vCPUs; ROUNDS=7 ~8 min)
#   ROUNDS=3 bench/overhead.sh        # fewer rounds
#   CAUSEWAY=path/to/causeway bench/overhead.sh   # use this binary, do not build
#
# Environment knobs (defaults in brackets):
#   ROUNDS [5]          rounds per workload; each round runs every configuration once
#   PP_SECONDS [2]      duration of one ping-pong run
#   NET_SECONDS [3]     duration of one blocking-net run
#   WORKLOADS [pingpong net net-fixed]
#   CONFIGS [base causeway causeway-all causeway-sched perf]
#                       (names listed under "Configurations" below)
#   PP_CPU [1]          CPU the ping-pong threads of the overhead rounds and of the
#                       eBPF statistics runs are pinned to (pingpong --cpu); `none`
#                       leaves them to the scheduler (see "Workloads")
#   SCAN_PAIRS [1 2 4 8 16]   ping-pong pair counts for the events/s scan
#   BPF_STATS [1]       also measure in-kernel eBPF time per program (sets the
#                       sysctl kernel.bpf_stats_enabled for these runs, restores it)
#   BPF_MODES           recorder settings for those runs, ';'-separated
#                       [default;--events all;--kernel-stacks all;--stacks-on none;
#                        --events sched;--events sched --stacks-on none]
#   CAUSEWAY            a causeway binary to use instead of building one
#   CAUSEWAY_REF        a second causeway binary (e.g. a build of the previous commit):
#                       adds the configuration causeway-ref (its defaults) to CONFIGS
#                       and runs every BPF_MODES setting with it too, so a change is
#                       measured against its reference in the same rounds
#   KEEP [0]            keep the temporary directory (traces, raw outputs)
#
# Workloads:
#   pingpong    bench/pingpong.c, 1 pair of threads passing a byte over two pipes
#               (an op is a round trip: 2 reads, 2 writes, 2 switches, ~1-2 wake-ups),
#               both threads pinned to CPU PP_CPU (`pingpong --cpu`), in every
#               configuration alike. Unpinned, its baseline swung 10x (24k-276k
#               ops/s) with whether the scheduler put the two threads on one CPU or
#               two; pinned, every op is two switches on one CPU, the threads keep
#               that CPU 100% busy, so the throughput is 1 / (CPU per op in the
#               traced threads, eBPF programs and perf's sampling included), and
#               the tracer's own user-space work runs on the other CPU.
#   net         workloads/bin/blocking-net with its defaults (loopback TCP, 4 clients,
#               1 server thread, 500 us blocking backend wait per request)
#   net-fixed   workloads/bin/blocking-net --fixed (4 server threads: more
#               requests/s, so more switches and syscalls per second)
#
# Configurations (interleaved inside every round, and the order rotated from
# round to round, to cancel the drift of this noisy shared VM):
#   base            the workload alone
#   causeway        causeway record -o T.cwt --json -- CMD   (default settings:
#                   --events default = every event group but syscall enter/exit,
#                   user stacks --unwind dwarf --stack-mode all --stack-depth 32
#                   --stack-window 8K (BPF copies registers + up to 8 KiB of stack,
#                   user space unwinds with DWARF CFI), --kernel-stacks auto (kernel
#                   frames only on uninterruptible switch-outs and on wakers in
#                   interrupt context / kernel threads), --stacks-on switch,waker)
#   causeway-ref    the defaults, run with $CAUSEWAY_REF (added when it is set)
#   causeway-fp     --unwind fp --stack-mode app-all --stack-depth 8 (user stacks
#                   walked by frame pointers in BPF, the program's frames only: the
#                   stack defaults before DWARF unwinding; not in the default CONFIGS)
#   causeway-nomemo the defaults without the unwind memo (--no-unwind-memo: every
#                   copied stack unwound afresh; not in the default CONFIGS)
#   causeway-all    the same with --events all (adds syscall enter/exit of the
#                   default --syscalls set: the default before syscalls became opt-in)
#   causeway-sched  causeway record --events sched ... (the same two event types
#                   perf records, still with stacks)
#   causeway-app    --stack-mode app (only the program's last call site; not in the
#                   default CONFIGS: it saved nothing measurable)
#   causeway-kall   --kernel-stacks all (kernel frames on every stack; not in the
#                   default CONFIGS, the eBPF statistics runs cover it)
#   causeway-old    --events all --kernel-stacks all --stacks-on switch,waker,syscall
#                   (the defaults of two builds ago; not in the default CONFIGS)
#   perf            perf record -e sched:sched_switch -e sched:sched_waking -g -o T.data -- CMD
#
# Throughput is what the workload itself prints ("throughput: X ops/s"),
# measured over its own run time, so the tracer's start-up (eBPF verification
# takes ~3 s) and write-out are not counted. Reported per configuration: the
# median over the rounds, the overhead vs the median baseline,
# overhead(causeway)/overhead(perf), events recorded and lost (causeway: its
# --json summary; perf: samples written and lost chunks from perf record's
# stderr, lost samples from `perf report --stats`) and trace sizes.
#
# Per-event cost (ping-pong only; bench/overhead_report.py computes it). Three
# estimates, all divided by events per op (events recorded / ops completed in
# the same run; causeway counts its stack records as events):
#   cpu   (CPU/op traced - CPU/op baseline) / events/op, where CPU is the
#         workload's own user+system time (getrusage: it includes the eBPF
#         programs and perf's in-kernel sampling, which run in the traced
#         threads) plus the tracer process's CPU time over the same window
#         (per-thread schedstat of the parent process: the user-space draining,
#         encoding and writing). This is the sound one: it is the total CPU
#         spent per event and is barely affected by idle time or by how the
#         two threads land on the two CPUs.
#   wall  (1/throughput traced - 1/throughput baseline) / events/op: added
#         latency per event on the round trip (every event of a ping-pong is on
#         its critical path). Noisier; also includes the tracer competing for CPU.
#   bpf   in-kernel time of causeway's eBPF programs (kernel.bpf_stats_enabled,
#         run_time_ns / run_cnt from `bpftool prog show`, snapshot taken by
#         pingpong at the end of its window while the recorder is attached) per
#         invocation, per recorded event and per op. Measured in separate runs
#         (one per BPF_MODES setting, to split the cost between stacks and
#         events), since the statistics themselves cost ~20-50 ns per invocation.
#         The same runs count the IRQ work interrupts (IWI in /proc/interrupts,
#         all CPUs) taken during the recording: self-interrupts that BPF helpers
#         raise when they cannot finish their work with interrupts off.
#
# Events/s sustained without loss: ping-pong with SCAN_PAIRS pairs under
# `causeway record` (--events all: the most events per op, then --events sched
# --stack-mode none --kernel-stacks none for the cheapest mode), not pinned (the
# pairs spread over every CPU), events / the ping-pong's window; the figure is
# the highest rate observed with lost == 0.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
PP_SECONDS=${PP_SECONDS:-2}
NET_SECONDS=${NET_SECONDS:-3}
WORKLOADS=${WORKLOADS:-pingpong net net-fixed}
CONFIGS=${CONFIGS:-base causeway causeway-all causeway-sched perf}
CAUSEWAY_REF=${CAUSEWAY_REF:-}
PP_CPU=${PP_CPU:-1}
SCAN_PAIRS=${SCAN_PAIRS:-1 2 4 8 16}
BPF_STATS=${BPF_STATS:-1}
BPF_MODES=${BPF_MODES:-default;--events all;--kernel-stacks all;--stacks-on none;--events sched;--events sched --stacks-on none}
KEEP=${KEEP:-0}

# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_start overhead perf gcc python3
BPF_STATS_OLD=
cleanup() {
    if [ -n "$BPF_STATS_OLD" ]; then sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_OLD" || true; fi
    if [ "$KEEP" = 1 ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
mkdir -p "$TMP/runs"

# ---- build -----------------------------------------------------------------
bench_causeway
CW_REF=
if [ -n "$CAUSEWAY_REF" ]; then
    CW_REF=$TMP/causeway-ref
    cp "$CAUSEWAY_REF" "$CW_REF"
    case " $CONFIGS " in *" causeway-ref "*) ;; *) CONFIGS="$CONFIGS causeway-ref" ;; esac
fi
# Fail early (and show why) if the recorder cannot load or record.
if ! "$CW" record -o "$TMP/smoke.cwt" --json -- true >"$TMP/smoke.out" 2>"$TMP/smoke.err"; then
    echo "overhead.sh: \`causeway record -- true\` failed ($CW_ID):" >&2
    grep -v '^[0-9]*: ' "$TMP/smoke.err" | tail -8 >&2
    exit 1
fi
echo "== make -C workloads" >&2
make -s -C workloads >&2
NET=$REPO/workloads/bin/blocking-net
PP=$TMP/pingpong
gcc -O2 -Wall -pthread -o "$PP" bench/pingpong.c
PIN=
if [ "$PP_CPU" != none ]; then PIN="--cpu $PP_CPU"; fi

# ---- one run -----------------------------------------------------------------
# run WORKLOAD ROUND CONFIG: writes runs/W.R.C.{out,err} and a line to runs.tsv
wl_cmd() {
    case $1 in
        pingpong) echo "$PP --pairs 1 --seconds $PP_SECONDS $PIN" ;;
        net) echo "$NET --seconds $NET_SECONDS" ;;
        net-fixed) echo "$NET --fixed --seconds $NET_SECONDS" ;;
        *) echo "unknown workload $1" >&2; exit 1 ;;
    esac
}
# recorder options of a causeway-* configuration (after -o T.cwt --json)
cw_opts() {
    case $1 in
        causeway | causeway-ref) echo "" ;;
        causeway-all) echo "--events all" ;;
        causeway-sched) echo "--events sched" ;;
        causeway-app) echo "--stack-mode app" ;;
        causeway-kall) echo "--kernel-stacks all" ;;
        causeway-old) echo "--events all --kernel-stacks all --stacks-on switch,waker,syscall" ;;
        causeway-fp) echo "--unwind fp --stack-mode app-all --stack-depth 8" ;;
        causeway-nomemo) echo "--no-unwind-memo" ;;
        *) echo "unknown config $1" >&2; exit 1 ;;
    esac
}
run() {
    local wl=$1 round=$2 cfg=$3 cmd base trace=- start end
    cmd=$(wl_cmd "$wl")
    base=$TMP/runs/$wl.$round.$cfg
    rm -f "$TMP/t.cwt" "$TMP/t.data"
    start=$(date +%s.%N)
    case $cfg in
        base) $cmd >"$base.out" 2>"$base.err" ;;
        causeway*)
            local bin=$CW
            [ "$cfg" = causeway-ref ] && bin=$CW_REF
            # shellcheck disable=SC2046
            "$bin" record -o "$TMP/t.cwt" --json $(cw_opts "$cfg") -- $cmd >"$base.out" 2>"$base.err"
            trace=$TMP/t.cwt
            ;;
        perf)
            perf record -e sched:sched_switch -e sched:sched_waking -g -o "$TMP/t.data" -- $cmd >"$base.out" 2>"$base.err"
            trace=$TMP/t.data
            perf report -i "$TMP/t.data" --stats >"$base.stats" 2>/dev/null || true
            ;;
        *) echo "unknown config $cfg" >&2; exit 1 ;;
    esac || { echo "overhead.sh: FAILED ($?): $cfg $cmd; stderr:" >&2; cat "$base.err" >&2; }
    end=$(date +%s.%N)
    local bytes=0
    [ "$trace" != - ] && [ -f "$trace" ] && bytes=$(stat -c %s "$trace")
    # Keep the trace summaries of the default and frame-pointer runs (events by
    # kind, recorder counters: stacks copied and unwound).
    if [[ $cfg == causeway || $cfg == causeway-fp || $cfg == causeway-ref || $cfg == causeway-nomemo ]] && [ -f "$TMP/t.cwt" ]; then
        "$CW" info "$TMP/t.cwt" --json >"$base.info" 2>/dev/null || true
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$round" "$cfg" "$base" "$bytes" \
        "$(awk "BEGIN {print $end - $start}")" >>"$TMP/runs.tsv"
    printf '  %-10s round %d %-15s %s\n' "$wl" "$round" "$cfg" \
        "$(grep -h '^throughput:' "$base.out" "$base.err" | head -1)" >&2
}

# ---- header --------------------------------------------------------------------
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "kernel: $(uname -r)"
    echo "cpus: $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "mem: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    echo "perf: $(perf --version)"
    echo "causeway: $("$CW" --version 2>/dev/null || echo '?'), $CW_ID (git $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- crates 2>/dev/null || echo ', crates/ modified'))"
    if [ -n "$CW_REF" ]; then echo "causeway-ref: sha256 $(sha256sum "$CW_REF" | cut -c1-12), built $(date -u -r "$CAUSEWAY_REF" '+%Y-%m-%d %H:%M UTC')"; fi
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "rounds: $ROUNDS, pingpong ${PP_SECONDS}s (threads pinned to CPU $PP_CPU), blocking-net ${NET_SECONDS}s"
} >"$TMP/header.txt"
cat "$TMP/header.txt" >&2

# ---- overhead rounds ---------------------------------------------------------
read -r -a cfgs <<<"$CONFIGS"
n=${#cfgs[@]}
for c in "${cfgs[@]}"; do
    case $c in base | perf) ;; *) cw_opts "$c" >/dev/null || exit 1 ;; esac
done
for wl in $WORKLOADS; do
    echo "== $wl: $(wl_cmd "$wl" | sed "s|$TMP/||; s|$REPO/||")" >&2
    for ((r = 0; r < ROUNDS; r++)); do
        for ((i = 0; i < n; i++)); do
            run "$wl" "$r" "${cfgs[(i + r) % n]}"
        done
    done
done

# ---- events/s scan -------------------------------------------------------------
echo "== events/s scan (ping-pong pairs: $SCAN_PAIRS)" >&2
for mode in all light; do
    for p in $SCAN_PAIRS; do
        base=$TMP/runs/scan.$mode.$p
        opts=(--events all)
        [ $mode = light ] && opts=(--events sched --stack-mode none --kernel-stacks none)
        "$CW" record -o "$TMP/t.cwt" --json "${opts[@]}" -- "$PP" --pairs "$p" --seconds "$PP_SECONDS" \
            >"$base.out" 2>"$base.err" || echo "overhead.sh: FAILED: scan $mode $p" >&2
        "$CW" info "$TMP/t.cwt" --json >"$base.info" 2>/dev/null || true
        printf '%s\t%s\t%s\t%s\t%s\t0\n' "scan-$mode" "$p" causeway "$base" "$(stat -c %s "$TMP/t.cwt" 2>/dev/null || echo 0)" >>"$TMP/runs.tsv"
        printf '  scan %-7s pairs %-3s %s\n' "$mode" "$p" "$(grep -h -E '"(events|lost)"' "$base.out" | tr -d ' \n')" >&2
    done
done

# ---- eBPF program statistics -------------------------------------------------
# One ping-pong run per recorder setting in BPF_MODES (';'-separated option
# lists; "default" = no options), to see where the in-kernel time goes.
if [ "$BPF_STATS" = 1 ] && command -v bpftool >/dev/null; then
    echo "== eBPF program run time (kernel.bpf_stats_enabled=1, one ping-pong run per setting)" >&2
    BPF_STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
    sysctl -qw kernel.bpf_stats_enabled=1
    IFS=';' read -r -a modes <<<"$BPF_MODES"
    bins=(new)
    [ -n "$CW_REF" ] && bins=(new ref)
    iwi() { awk '$1 == "IWI:" { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n }' /proc/interrupts; }
    k=0
    for ((m = 0; m < ${#modes[@]}; m++)); do
        for which in "${bins[@]}"; do
            opts=${modes[m]}
            [ "$opts" = default ] && opts=
            bin=$CW
            [ "$which" = ref ] && bin=$CW_REF
            base=$TMP/runs/bpfstats.$k
            k=$((k + 1))
            echo "${modes[m]}" >"$base.mode"
            echo "$which" >"$base.bin"
            bpftool prog show -j >"$base.before.json"
            iwi0=$(iwi)
            PINGPONG_AT_END="bpftool prog show -j > $base.after.json" \
                "$bin" record -o "$TMP/t.cwt" --json $opts -- "$PP" --pairs 1 --seconds "$PP_SECONDS" $PIN \
                >"$base.out" 2>"$base.err" || echo "overhead.sh: FAILED: bpf stats run ($which: $opts)" >&2
            echo $(($(iwi) - iwi0)) >"$base.iwi"
            printf '  %-3s %-45s %s\n' "$which" "${modes[m]}" "$(grep -h '^throughput:' "$base.out" "$base.err")" >&2
        done
    done
    sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_OLD"
    BPF_STATS_OLD=
fi

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$TMP/header.txt"

# ---- report --------------------------------------------------------------------
python3 bench/overhead_report.py "$TMP"
