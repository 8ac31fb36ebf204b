#!/usr/bin/env bash
# json-server (a REST API over a JSON file, from npm) serving a 5 MB db.json: after
# every write request it serializes the whole database (JSON.stringify with indent) on
# Node's event loop before it writes the file. Load: load.py, 8 keep-alive connections
# each POSTing a record and waiting for the reply, all from one thread. The fix, the
# same data as a JavaScript module (db.js), which json-server keeps in memory and never
# writes back, is measured first, unrecorded, alternating with the file, each run on a
# fresh server and database; then a file-backed server's load is recorded with
# `causeway record -p SERVER,LOAD` (the server runs under `node --perf-basic-prof`, so
# that its JavaScript functions are named), the load's thread is diagnosed with
# `causeway diagnose --auto --thread LOAD --json` and judged. ROUNDS (3) and
# RECORD_SECONDS (4) change the measurement and the recording.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start json-server-write
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

bin=$(cat "$CACHE/json-server/bin")
PORT=13080
CLIENTS=8
ROWS=20000        # posts in the database (and a quarter as many comments): 5 MB
WARMUP=2
MEASURE=5
ROUNDS=${ROUNDS:-3}
RECORD=${RECORD_SECONDS:-4}

# server NAME SOURCE: a fresh database (db.json and db.js) in $OUT/db-NAME, and a server
# of SOURCE (db.json: the file; db.js: in memory); sets SERVER
server() {
    rw_port_free $PORT
    rm -rf "$OUT/db-$1"
    python3 "$here/mkdb.py" "$OUT/db-$1" $ROWS
    # cd: json-server takes the source (and its snapshots directory) from its cwd
    rw_bg "server-$1" bash -c 'cd "$1" && shift && exec "$@"' _ "$OUT/db-$1" \
        node --perf-basic-prof "$bin" --quiet --host 127.0.0.1 --port $PORT "$2"
    SERVER=$BG_PID
    rw_wait_port $PORT 60
}
# load NAME WARMUP MEASURE: the load in the background; sets LOAD
load() {
    rw_bg "$1" python3 "$here/load.py" $PORT $CLIENTS "$2" "$3"
    LOAD=$BG_PID
}
# measure NAME SOURCE: one unrecorded run on a fresh server and database
measure() {
    sync
    server "$1" "$2"
    load "$1" $WARMUP $MEASURE
    wait "$LOAD" || true
    rw_stop "$SERVER"
    rm -rf "$OUT/db-$1" "/tmp/perf-$SERVER.map"
}
rate() { awk '/^throughput:/ { print $2 }' "$OUT/$1.log"; }

ratios=()
sums="0 0"
for round in $(seq "$ROUNDS"); do
    measure "load-file-$round" db.json
    measure "load-memory-$round" db.js
    on=$(rate "load-file-$round")
    off=$(rate "load-memory-$round")
    [ -n "$on" ] && [ -n "$off" ] || { echo "json-server-write: no rate in the load's output" >&2; exit 1; }
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a ? b / a : 0 }')")
    sums=$(awk -v s="$sums" -v a="$on" -v b="$off" 'BEGIN { split(s, x, " "); print x[1] + a, x[2] + b }')
    rw_log "round $round: db.json $on posts/s, db.js (in memory) $off posts/s"
done
before=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.1f", x[1] / n }')
after=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.1f", x[2] / n }')
rw_fix throughput posts/s "$before" "$after" \
    "db.json (the whole database serialized and written after every write) vs the same data as db.js (kept in memory), a fresh server and database each run, alternating, $ROUNDS rounds of ${MEASURE}s after ${WARMUP}s, $CLIENTS connections (ratios ${ratios[*]})"

sync
server recorded db.json
load recorded 1 1000000   # stopped after the recording
for i in $(seq 300); do
    grep -q '^warmed up' "$OUT/recorded.log" && break
    kill -0 "$LOAD" 2>/dev/null || { echo "json-server-write: the load exited" >&2; exit 1; }
    rw_pause 0.1
done
# SERVER is the shell that cd's; it execs node, so the pid is node's
echo "$SERVER $LOAD" >"$OUT/pids"
"$CW" record -p "$SERVER,$LOAD" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
rw_stop "$LOAD"
rw_stop "$SERVER"
rm -rf "$OUT"/db-* "/tmp/perf-$SERVER.map"

set +e
"$CW" diagnose --auto --thread "$LOAD" --json "$OUT/trace.cwt" >"$OUT/diagnose.json" 2>"$OUT/diagnose.err"
"$CW" diagnose --auto --thread "$LOAD" "$OUT/trace.cwt" >"$OUT/diagnose.txt" 2>&1
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1   # for the record; not judged
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict "the fix keeps the database in memory instead of serializing it on every write: it removes CPU work, not waits"
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
