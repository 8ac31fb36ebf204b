#!/usr/bin/env bash
# Loss benchmark: does `causeway record` at its default settings keep every event of
# a busy many-process server, and what does its own user space cost?
#
# Usage (as root, from anywhere in the repo):
#
#   bench/lossless.sh                     # builds, 5 runs of 10 s
#   RUNS=3 SECONDS_PER_RUN=5 bench/lossless.sh
#   CAUSEWAY=path/to/causeway bench/lossless.sh   # use this binary, do not build
#   RECORD_ARGS="--unwind fp" bench/lossless.sh   # other recorder settings
#
# Load: bench/rrload.c, 16 client processes and 16 server processes (one per
# connection, as a pre-forking database serves its clients) passing 64-byte
# requests and replies over loopback TCP, each blocking at the bottom of 24 nested
# calls with 192-byte frames (deep user stacks). The recorder attaches with -p to
# all 33 processes, as a user points it at a running server and its clients.
#
# Per run it prints the events written, the events lost (from the trace's own
# counters, `causeway info --json`), the recorded processes' context switches per
# second (sched_switch events over the trace's duration), and the recorder's user and system CPU time
# (/usr/bin/time), with the user CPU as a share of one core per 100 K events/s.
set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start lossless gcc python3 /usr/bin/time
bench_causeway
RUNS=${RUNS:-5}
SECS=${SECONDS_PER_RUN:-10}
RECORD_ARGS=${RECORD_ARGS:-}
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT

gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror \
    -o "$TMP/rrload" bench/rrload.c

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(uname -r)"
echo "causeway: $CW_ID; record args: ${RECORD_ARGS:-(defaults)}"
printf '%-4s %12s %10s %14s %10s %10s %18s\n' run events lost switches/s user_s sys_s 'user %/100K ev/s'
for run in $(seq 1 "$RUNS"); do
    rm -f "$TMP/rr.err"
    # The load runs until the recording is done (the recorder may take seconds to
    # load its programs on a busy machine), then is stopped.
    "$TMP/rrload" --seconds 3600 2>"$TMP/rr.err" >/dev/null &
    load=$!
    for _ in $(seq 1 50); do
        grep -q pids= "$TMP/rr.err" 2>/dev/null && break
        sleep 0.1
    done
    pids=$(grep -o 'pids=[0-9,]*' "$TMP/rr.err" | cut -d= -f2)
    sleep 1
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$TMP/time" \
        "$CW" record -p "$pids" --duration "$SECS" -o "$TMP/rr.cwt" $RECORD_ARGS \
        >/dev/null 2>"$TMP/record.err"
    kill -TERM "$load"
    wait "$load" || true
    "$CW" info --json "$TMP/rr.cwt" >"$TMP/info.json"
    python3 - "$TMP/info.json" "$TMP/time" "$TMP/rr.err" "$SECS" "$run" <<'EOF'
import json, re, sys
info = json.load(open(sys.argv[1]))
user, sys_s = (float(x) for x in open(sys.argv[2]).read().split()[:2])
secs = info["duration_ns"] / 1e9 or float(sys.argv[4])
switches = info["events_by_kind"].get("sched_switch", 0) / secs
events = info["events"]
per_100k = user / secs * 100 / max(events / secs / 1e5, 1e-9)
print(f"{sys.argv[5]:<4} {events:>12,} {info['lost_events']:>10,} {switches:>14,.0f} "
      f"{user:>10.2f} {sys_s:>10.2f} {per_100k:>17.1f}%")
EOF
done
