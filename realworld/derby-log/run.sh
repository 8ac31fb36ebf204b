#!/usr/bin/env bash
# Apache Derby's network server under 16 JDBC connections that insert one row per
# commit (Load.java, autocommit): Derby writes and syncs its transaction log before each
# commit returns. The fix, derby.system.durability=test (Derby's switch that stops
# syncing the log), is measured first, unrecorded, alternating with the default, each
# run on a fresh server and database; then a default server's load is recorded with
# `causeway record -p SERVER,CLIENT`, analysed with `causeway bottleneck --json` and
# judged. ROUNDS (5), RECORD_SECONDS (4) and CLIENTS (16) change the measurement, the
# recording and the load.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start derby-log
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

libs=$(cat "$CACHE/derby/libs")
classes=$CACHE/derby/load
PORT=11527
CLIENTS=${CLIENTS:-16}
WARMUP=3          # seconds of each measured run before the count starts
MEASURE=5         # seconds counted
ROUNDS=${ROUNDS:-5}   # 3 rounds of this case varied 2-3x on one run: 5 settle its ratio
RECORD=${RECORD_SECONDS:-4}
URL="jdbc:derby://127.0.0.1:$PORT/rwdb;create=true"

# server NAME JVM_OPTS...: a fresh Derby system directory (on the disk, as realworld/out
# is) and network server; sets SERVER
server() {
    local name=$1
    shift
    rw_port_free $PORT
    rm -rf "$OUT/home-$name"
    mkdir -p "$OUT/home-$name"
    rw_bg "server-$name" java "$@" -Dderby.system.home="$OUT/home-$name" -cp "$libs/*" \
        org.apache.derby.drda.NetworkServerControl start -h 127.0.0.1 -p $PORT
    SERVER=$BG_PID
    rw_wait_port $PORT 60
}
# load NAME WARMUP MEASURE: the load client in the background; sets CLIENT
load() {
    rw_bg "$1" java -cp "$libs/*:$classes" Load "$URL" $CLIENTS "$2" "$3"
    CLIENT=$BG_PID
}
# measure NAME DURABILITY_OPTS...: one unrecorded run on a fresh server. `sync` first:
# the page cache that the previous run left dirty would be written back during this one.
measure() {
    local name=$1
    shift
    sync
    server "$name" "$@"
    load "$name" $WARMUP $MEASURE
    wait "$CLIENT" || true
    rw_stop "$SERVER"
    rm -rf "$OUT/home-$name"
}
rate() { awk '/^throughput:/ { print $2 }' "$OUT/$1.log"; }

ratios=()
sums="0 0"
for round in $(seq "$ROUNDS"); do
    measure "load-sync-$round"
    measure "load-test-$round" -Dderby.system.durability=test
    on=$(rate "load-sync-$round")
    off=$(rate "load-test-$round")
    [ -n "$on" ] && [ -n "$off" ] || { echo "derby-log: no rate in the load's output" >&2; exit 1; }
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a ? b / a : 0 }')")
    sums=$(awk -v s="$sums" -v a="$on" -v b="$off" 'BEGIN { split(s, x, " "); print x[1] + a, x[2] + b }')
    rw_log "round $round: default $on inserts/s, durability=test $off inserts/s"
done
before=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.0f", x[1] / n }')
after=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.0f", x[2] / n }')
rw_fix throughput inserts/s "$before" "$after" \
    "the default (log synced at each commit) vs -Dderby.system.durability=test, a fresh server and database each run, alternating, $ROUNDS rounds of ${MEASURE}s after ${WARMUP}s of warm-up, $CLIENTS connections (ratios ${ratios[*]})"

sync
server recorded
load recorded $WARMUP 1000000   # stopped after the recording
# The JVMs start, the table is made, the JIT compiles the hot paths: record once the
# load has run its warm-up (on a busy machine the JVMs' start alone takes seconds)
for i in $(seq 600); do
    grep -q '^warmed up' "$OUT/recorded.log" && break
    kill -0 "$CLIENT" 2>/dev/null || { echo "derby-log: the load client exited" >&2; exit 1; }
    rw_pause 0.1
done
rw_pause 1
echo "$SERVER $CLIENT" >"$OUT/pids"
# The server's Java thread names (judge.py tells the connection threads, DRDAConnThread_N,
# from the JVM's own by them)
jcmd "$SERVER" Thread.print >"$OUT/server-threads.txt" 2>&1 || true
"$CW" record -p "$SERVER,$CLIENT" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
rw_stop "$CLIENT"
rw_stop "$SERVER"
rm -rf "$OUT"/home-*

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
