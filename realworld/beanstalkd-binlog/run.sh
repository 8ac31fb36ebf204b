#!/usr/bin/env bash
# beanstalkd with its write-ahead log fsync'd after every write (-f0), under 8 producers
# (load.py): record server and client with `causeway record -p`, run
# `causeway bottleneck --json`, judge; then measure the fix (beanstalkd's default,
# fsync at most every 50 ms) with the same load.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start beanstalkd-binlog
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

PORT=11400
THREADS=8
MEASURE=4
RECORD=${RECORD_SECONDS:-3}

# server NAME FLAGS...: a fresh binlog directory each time
server() {
    local name=$1
    shift
    rw_port_free $PORT
    mkdir -p "$OUT/binlog-$name"
    rw_bg "$name" beanstalkd -l 127.0.0.1 -p $PORT -b "$OUT/binlog-$name" "$@"
    SERVER=$BG_PID
    rw_wait_port $PORT 10
}
throughput() { awk '/^throughput:/ { print $2 }' "$OUT/$1.log"; }

rw_log "beanstalkd -f0 (fsync after every write)"
server f0 -f0
rw_bg before python3 "$here/load.py" $PORT $THREADS $MEASURE
wait "$BG_PID"
before=$(throughput before)
rw_bg recorded python3 "$here/load.py" $PORT $THREADS $((RECORD + 2))
LOAD=$BG_PID
sleep 1
echo "$SERVER $LOAD" >"$OUT/pids"
"$CW" record -p "$SERVER,$LOAD" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
wait "$LOAD"
rw_stop "$SERVER"
rw_log "throughput with -f0: $before puts/s"

rw_log "beanstalkd as by default (fsync at most every 50 ms)"
server f50
rw_bg after python3 "$here/load.py" $PORT $THREADS $MEASURE
wait "$BG_PID"
after=$(throughput after)
rw_stop "$SERVER"
rm -rf "$OUT"/binlog-*
rw_log "throughput with the default: $after puts/s"
rw_fix throughput puts/s "$before" "$after" "-f0 (fsync every write) vs the default -f50"

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
