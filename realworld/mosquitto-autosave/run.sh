#!/usr/bin/env bash
# Mosquitto with persistence and `autosave_on_changes true` / `autosave_interval 1`: it
# writes its whole store (5,000 retained messages, about 3 MB) to a new file and fsyncs
# it after every change. Under 8 publishers (load.py) record broker and client with
# `causeway record -p`, run `causeway bottleneck --json`, judge; then measure the fix
# (the default: save every 1800 s) with the same load.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start mosquitto-autosave
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

PORT=11883
THREADS=8
MEASURE=4
RECORD=${RECORD_SECONDS:-3}
RETAINED=5000

# conf NAME LINES...: a configuration with persistence in $OUT/data-NAME
conf() {
    local name=$1
    shift
    mkdir -p "$OUT/data-$name"
    {
        echo "listener $PORT 127.0.0.1"
        echo "allow_anonymous true"
        echo "user root"                       # write the store as root, where it lies
        echo "persistence true"
        echo "persistence_location $OUT/data-$name/"
        printf '%s\n' "$@"
    } >"$OUT/$name.conf"
}
broker() {
    rw_port_free $PORT
    [ "$1" = preload ] || cp "$OUT/data-preload/mosquitto.db" "$OUT/data-$1/"
    rw_bg "broker-$1" mosquitto -c "$OUT/$1.conf"
    BROKER=$BG_PID
    rw_wait_port $PORT 10
}
throughput() { awk '/^throughput:/ { print $2 }' "$OUT/$1.log"; }

conf preload
conf autosave "autosave_interval 1" "autosave_on_changes true"
conf default "autosave_interval 1800" "autosave_on_changes false"

rw_log "storing $RETAINED retained messages"
broker preload
python3 "$here/load.py" preload $PORT $RETAINED
rw_stop "$BROKER"                             # saves the store on exit

rw_log "autosave_on_changes true, autosave_interval 1 (save after every change)"
broker autosave
rw_bg before python3 "$here/load.py" run $PORT $THREADS $MEASURE
wait "$BG_PID"
before=$(throughput before)
rw_bg recorded python3 "$here/load.py" run $PORT $THREADS $((RECORD + 2))
LOAD=$BG_PID
sleep 1
echo "$BROKER $LOAD" >"$OUT/pids"
"$CW" record -p "$BROKER,$LOAD" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
wait "$LOAD"
rw_stop "$BROKER"
rw_log "throughput, saving after every change: $before msgs/s"

rw_log "autosave every 1800 s (the default)"
broker default
rw_bg after python3 "$here/load.py" run $PORT $THREADS $MEASURE
wait "$BG_PID"
after=$(throughput after)
rw_stop "$BROKER"
rm -rf "$OUT"/data-*
rw_log "throughput, default autosave: $after msgs/s"
rw_fix throughput msgs/s "$before" "$after" "autosave_on_changes with autosave_interval 1 vs the default (every 1800 s)"

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict "the fix saves the whole store every 1800 s instead of at every change: it removes the save's writing work, not only its sync"
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
