#!/usr/bin/env bash
# Loss benchmark: does `causeway record` at its default settings keep every event of
# a busy server, and what does its own user space cost against perf's?
#
# Usage (as root, from anywhere in the repo):
#
#   bench/lossless.sh                     # builds, 5 runs of 10 s
#   RUNS=3 SECONDS_PER_RUN=5 bench/lossless.sh
#   CAUSEWAY=path/to/causeway bench/lossless.sh   # use this binary, do not build
#   RECORD_ARGS="--unwind fp" bench/lossless.sh   # other recorder settings
#   LOAD=java bench/lossless.sh           # another load: rrload (default), java, node
#   PERF=0 bench/lossless.sh              # without perf as the peer
#
# Loads (each recorded with -p, as a user points the recorder at a running server
# and its clients):
#   rrload  bench/rrload.c, 16 client processes and 16 server processes (one per
#           connection, as a pre-forking database serves its clients) passing 64-byte
#           requests and replies over loopback TCP, each blocking at the bottom of 24
#           nested calls with 192-byte frames (deep user stacks); all 33 processes.
#   java    the zoo's java-commit --fixed: two JVMs (16 client threads; the server's
#           network, sync and reply threads, its log on /dev/shm so that the disk does
#           not set the pace), JIT-compiled Java frames under every wait.
#   node    a Node.js HTTP server that answers at once (`node --perf-basic-prof
#           --interpreted-frames-native-stack`, JIT frames named from its perf map)
#           under `wrk -t2 -c128` (Debian's wrk): deep V8 stacks on each of the event
#           loop's waits, and wrk's own threads.
#
# With PERF=1 (the default) each run then records the same load for as long with
# `perf record -e sched:sched_switch -e sched:sched_waking -g` (frame-pointer call
# graphs, perf's default) as the peer: its CPU time, its samples and the samples it
# lost (its own LOST records, `perf report --stats`).
#
# Per run it prints the events written, the events lost (from the trace's own
# counters, `causeway info --json`), the recorded processes' context switches per
# second (sched_switch events over the trace's duration), and the recorder's user and
# system CPU time (/usr/bin/time), with the user CPU as a share of one core per 100 K
# events/s; then perf's columns.
set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start lossless gcc python3 /usr/bin/time
bench_causeway
RUNS=${RUNS:-5}
SECS=${SECONDS_PER_RUN:-10}
RECORD_ARGS=${RECORD_ARGS:-}
LOAD=${LOAD:-rrload}
PERF=${PERF:-1}
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
if [ "$PERF" = 1 ] && ! command -v perf >/dev/null; then
    echo "lossless.sh: perf not found (PERF=0 runs without the peer)" >&2
    exit 1
fi

case "$LOAD" in
rrload)
    gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror \
        -o "$TMP/rrload" bench/rrload.c ;;
java)
    make -s -C workloads bin/java-commit >&2 ;;
node)
    command -v wrk >/dev/null || { echo "lossless.sh: wrk not found (apt-get install wrk)" >&2; exit 1; }
    printf '%s\n' \
        "// A Node.js HTTP server that answers at once." \
        "const http = require('http');" \
        "function answer(req, res) { res.end('ok\\n'); }" \
        "http.createServer(answer).listen(Number(process.argv[2]), '127.0.0.1');" \
        >"$TMP/hello.js" ;;
*)
    echo "lossless.sh: LOAD must be rrload, java or node" >&2
    exit 2 ;;
esac

# start_load: start the load in a process group of its own; sets $pids (the comma
# list to record) and $load (the group's leader).
start_load() {
    rm -f "$TMP/rr.err"
    case "$LOAD" in
    rrload)
        # The load runs until the recording is done (the recorder may take seconds
        # to load its programs on a busy machine), then is stopped.
        setsid "$TMP/rrload" --seconds 3600 2>"$TMP/rr.err" >/dev/null &
        load=$!
        for _ in $(seq 1 50); do
            grep -q pids= "$TMP/rr.err" 2>/dev/null && break
            sleep 0.1
        done
        pids=$(grep -o 'pids=[0-9,]*' "$TMP/rr.err" | cut -d= -f2)
        sleep 1 ;;
    java)
        setsid workloads/bin/java-commit --fixed --seconds 3600 --dir /dev/shm \
            2>"$TMP/rr.err" >/dev/null &
        load=$!
        sleep 5 # both JVMs up, their hot code compiled
        pids=$(pgrep -d, -f 'PipelineCommit') ;;
    node)
        port=$((18100 + RANDOM % 100))
        setsid bash -c "node --perf-basic-prof --interpreted-frames-native-stack \
            '$TMP/hello.js' $port & sleep 1; exec wrk -t2 -c128 -d3600s http://127.0.0.1:$port/" \
            2>"$TMP/rr.err" >/dev/null &
        load=$!
        sleep 3
        pids=$(pgrep -d, -f "hello.js $port|wrk -t2 -c128 -d3600s http://127.0.0.1:$port/") ;;
    esac
}

stop_load() {
    kill -TERM -- "-$load" 2>/dev/null || true
    wait "$load" 2>/dev/null || true
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(uname -r)"
echo "causeway: $CW_ID; record args: ${RECORD_ARGS:-(defaults)}; load: $LOAD, $RUNS runs of $SECS s"
[ "$PERF" = 1 ] && echo "peer: $(perf --version), -e sched:sched_switch -e sched:sched_waking -g"
printf '%-4s %12s %10s %14s %10s %10s %18s' run events lost switches/s user_s sys_s 'user %/100K ev/s'
[ "$PERF" = 1 ] && printf ' %12s %10s %11s %11s' perf_samples perf_lost perf_user_s perf_sys_s
echo
for run in $(seq 1 "$RUNS"); do
    start_load
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$TMP/time" \
        "$CW" record -p "$pids" --duration "$SECS" -o "$TMP/rr.cwt" $RECORD_ARGS \
        >/dev/null 2>"$TMP/record.err"
    perf_cols=""
    if [ "$PERF" = 1 ]; then
        /usr/bin/time -f '%U %S' -o "$TMP/perf.time" \
            perf record -q -e sched:sched_switch -e sched:sched_waking -g -p "$pids" \
            -o "$TMP/perf.data" -- sleep "$SECS" >/dev/null 2>"$TMP/perf.err" || true
        perf report -i "$TMP/perf.data" --stats >"$TMP/perf.stats" 2>/dev/null || true
        perf_cols=$(python3 - "$TMP/perf.stats" "$TMP/perf.time" <<'EOF'
import re, sys
stats = open(sys.argv[1]).read()
def count(name):
    m = re.search(rf"^\s*{name}\s+events:\s+(\d+)", stats, re.M)
    return int(m.group(1)) if m else 0
user, sys_s = (float(x) for x in open(sys.argv[2]).read().split()[:2])
lost = count("LOST") + count("LOST_SAMPLES")
print(f" {count('SAMPLE'):>12,} {lost:>10,} {user:>11.2f} {sys_s:>11.2f}")
EOF
)
    fi
    stop_load
    "$CW" info --json "$TMP/rr.cwt" >"$TMP/info.json"
    python3 - "$TMP/info.json" "$TMP/time" "$SECS" "$run" "$perf_cols" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
user, sys_s = (float(x) for x in open(sys.argv[2]).read().split()[:2])
secs = info["duration_ns"] / 1e9 or float(sys.argv[3])
switches = info["events_by_kind"].get("sched_switch", 0) / secs
events = info["events"]
per_100k = user / secs * 100 / max(events / secs / 1e5, 1e-9)
print(f"{sys.argv[4]:<4} {events:>12,} {info['lost_events']:>10,} {switches:>14,.0f} "
      f"{user:>10.2f} {sys_s:>10.2f} {per_100k:>17.1f}%{sys.argv[5]}")
EOF
done
