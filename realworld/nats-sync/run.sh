#!/usr/bin/env bash
# NATS server with JetStream file storage and `sync_interval: always`: the stream's
# store fsyncs after every message it writes. Load: NATS's own benchmark, `nats bench js
# pub sync` (natscli), 16 clients each publishing a 128-byte message and waiting for the
# stream's acknowledgement. The fix, the default sync interval (flush every 2 min),
# is measured first, unrecorded, alternating with the syncing configuration, each run on
# a fresh server and store; then a syncing run's load is recorded with `causeway record
# -p SERVER,BENCH`, analysed with `causeway bottleneck --json` and judged. ROUNDS (5) and
# RECORD_SECONDS (4) change the measurement and the recording.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start nats-sync
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

bin=$(cat "$CACHE/nats/bin")
PORT=14222
CLIENTS=16
SIZE=128
ROUNDS=${ROUNDS:-5}   # 3 rounds of this case varied 2-3x on one run: 5 settle its ratio
RECORD=${RECORD_SECONDS:-4}
# Messages per measured run: a few seconds each (about 1,000/s syncing, 30,000/s not)
MSGS_SYNC=${MSGS_SYNC:-8000}
MSGS_DEFAULT=${MSGS_DEFAULT:-150000}

# conf NAME LINES...: a server configuration whose JetStream store is $OUT/store-NAME
# (on the disk, as realworld/out is: not tmpfs)
conf() {
    local name=$1
    shift
    {
        echo "listen: 127.0.0.1:$PORT"
        echo "jetstream {"
        echo "  store_dir: \"$OUT/store-$name\""
        printf '  %s\n' "$@"
        echo "}"
    } >"$OUT/$name.conf"
}
conf sync "sync_interval: always"   # fsync after every write
conf default                         # the default: the store is synced every 2 min

# server NAME LOG: a fresh server (and store) with NAME.conf; sets SERVER
server() {
    rw_port_free $PORT
    rm -rf "$OUT/store-$1"
    rw_bg "$2" "$bin/nats-server" -c "$OUT/$1.conf"
    SERVER=$BG_PID
    rw_wait_port $PORT 20
}
# bench NAME MSGS: the load, in the background (sets BENCH). --create makes the stream
# (file storage, one replica) on the fresh server.
bench() {
    rw_bg "$1" "$bin/nats" bench js pub sync rw.bench --server "nats://127.0.0.1:$PORT" \
        --create --storage file --clients $CLIENTS --msgs "$2" --size $SIZE --no-progress
    BENCH=$BG_PID
}
# measure NAME CONF MSGS: one unrecorded run. `sync` first: the page cache that the
# other configuration's run left dirty would otherwise be written back during this one.
measure() {
    sync
    server "$2" "server-$1"
    bench "$1" "$3"
    wait "$BENCH"
    rw_stop "$SERVER"
    rm -rf "$OUT/store-$2"
}
# Messages per second from nats bench's "aggregated stats: N msgs/sec" line
rate() { sed -n 's/.*aggregated stats: \([0-9,.]*\) msgs\/sec.*/\1/p' "$OUT/$1.log" | tr -d , | tail -n 1; }

ratios=()
sums="0 0"
for round in $(seq "$ROUNDS"); do
    measure "load-sync-$round" sync $MSGS_SYNC
    measure "load-default-$round" default $MSGS_DEFAULT
    on=$(rate "load-sync-$round")
    off=$(rate "load-default-$round")
    [ -n "$on" ] && [ -n "$off" ] || { echo "nats-sync: no rate in nats bench's output" >&2; exit 1; }
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a ? b / a : 0 }')")
    sums=$(awk -v s="$sums" -v a="$on" -v b="$off" 'BEGIN { split(s, x, " "); print x[1] + a, x[2] + b }')
    rw_log "round $round: sync_interval always $on msgs/s, default $off msgs/s"
done
before=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.0f", x[1] / n }')
after=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.0f", x[2] / n }')
rw_fix throughput msgs/s "$before" "$after" \
    "sync_interval: always vs the default sync interval, a fresh server and store each run, alternating, $ROUNDS rounds of $MSGS_SYNC and $MSGS_DEFAULT messages (ratios ${ratios[*]})"

sync
server sync server-recorded
bench recorded 1000000   # stopped after the recording
rw_pause 2               # the clients connect, the stream is created
echo "$SERVER $BENCH" >"$OUT/pids"
"$CW" record -p "$SERVER,$BENCH" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
rw_stop "$BENCH"
rw_stop "$SERVER"
rm -rf "$OUT"/store-*

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
