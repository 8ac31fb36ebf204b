#!/usr/bin/env bash
# Export benchmark: time and output size of `causeway export` (Perfetto, Chrome JSON)
# and `causeway flamegraph --folded` on the largest zoo recording, next to the usual
# perf route for the same workload: `perf record -g` on sched_switch, then
# `perf script | stackcollapse` (inferno-collapse-perf when installed, else the awk
# folding below, which does what stackcollapse-perf.pl does for this input). perf
# script prints only comm, tid, time, event and the callchain: the folders read no
# tracepoint payload (its `next_comm=opt cgu.04` confuses inferno-collapse-perf).
#
# Usage (as root, from anywhere in the repo):
#
#   bench/views.sh                          # builds, records the zoo, measures
#   CAUSEWAY=path/to/causeway REPS=7 bench/views.sh
#
# Knobs: WL_SECONDS [2] run time of each workload; REPS [5] timed repetitions of each
# command (min and median reported); COLLAPSE [inferno-collapse-perf if on PATH].

set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start views perf
bench_causeway
WL_SECONDS=${WL_SECONDS:-2}
REPS=${REPS:-5}
COLLAPSE=${COLLAPSE:-$(command -v inferno-collapse-perf || true)}

# Record every zoo workload (syscalls included); the largest trace is measured.
largest= ; largest_bytes=0
for w in blocking-write lock-contention load-imbalance circular-timeout spin-flag long-cpu two-peaks blocking-net; do
    "$CW" record --events all -o "$TMP/$w.cwt" -- "workloads/bin/$w" --seconds "$WL_SECONDS" >/dev/null 2>&1
    b=$(stat -c %s "$TMP/$w.cwt")
    echo "recorded $w: $b bytes" >&2
    if [ "$b" -gt "$largest_bytes" ]; then largest=$w; largest_bytes=$b; fi
done
T=$TMP/$largest.cwt
events=$("$CW" info --json "$T" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')

# stats NAME CMD...: run CMD REPS times, print "NAME min median" in seconds.
stats() {
    local name=$1; shift
    local i t0 t1 times=()
    for ((i = 0; i < REPS; i++)); do
        t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk -v n="$name" '{a[NR]=$1} END {printf "%s %.3f %.3f\n", n, a[1]/1000, a[int((NR+1)/2)]/1000}'
}

awk_fold() { # perf script text -> folded stacks (comm;root..leaf count)
    awk '/^[^ \t]/ { if (stack != "") f[comm stack]++; comm = $1; stack = ""; next }
         /^[ \t]+[0-9a-f]+ / { sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); stack = ";" sym stack; next }
         END { if (stack != "") f[comm stack]++; for (k in f) print k, f[k] }'
}
fold_perf() {
    if [ -n "$COLLAPSE" ]; then perf script -F comm,tid,time,event,ip,sym,dso -i "$TMP/perf.data" 2>/dev/null | "$COLLAPSE" > "$TMP/perf.folded"
    else perf script -F comm,tid,time,event,ip,sym,dso -i "$TMP/perf.data" 2>/dev/null | awk_fold > "$TMP/perf.folded"; fi
}

perf record -q -g -e sched:sched_switch -o "$TMP/perf.data" -- "workloads/bin/$largest" --seconds "$WL_SECONDS" >/dev/null 2>&1
samples=$(perf script -i "$TMP/perf.data" -F event 2>/dev/null | wc -l)

{
    echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "causeway: $CW_ID"
    echo "largest zoo recording: $largest, $largest_bytes bytes, $events events; perf.data $(stat -c %s "$TMP/perf.data") bytes, $samples sched_switch samples"
    echo "collapse: ${COLLAPSE:-awk folding}"
    echo "command min_s median_s output_bytes"
    # The plain export (no analysis), then the default (knots and the diagnosis's chain).
    s=$(stats perfetto "$CW" export --no-bottleneck --no-diagnose --perfetto "$TMP/out.pftrace" "$T"); echo "$s $(stat -c %s "$TMP/out.pftrace")"
    s=$(stats perfetto+knots+chain "$CW" export --perfetto "$TMP/out2.pftrace" "$T"); echo "$s $(stat -c %s "$TMP/out2.pftrace")"
    s=$(stats chrome-json "$CW" export --no-bottleneck --no-diagnose --chrome-json "$TMP/out.json" "$T"); echo "$s $(stat -c %s "$TMP/out.json")"
    "$CW" flamegraph --folded "$T" > "$TMP/cw.folded"
    s=$(stats flamegraph-folded "$CW" flamegraph --folded "$T"); echo "$s $(stat -c %s "$TMP/cw.folded")"
    s=$(stats perf-script+collapse fold_perf); echo "$s $(stat -c %s "$TMP/perf.folded")"
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$TMP/results.txt"
[ "${KEEP:-0}" = 1 ] || rm -rf "$TMP"
