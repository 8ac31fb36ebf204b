#!/usr/bin/env bash
# Artemis under `artemis perf producer` (16 producers sending persistent 1 KiB messages,
# one outstanding each). Two brokers run side by side: one as created (journal
# fdatasync on), one created with --no-fsync (the fix). After a warm-up run on each,
# the load alternates between them, so that other work on the machine weighs on both
# alike; then the first is recorded with `causeway record -p BROKER,CLIENT`, analysed
# with `causeway bottleneck --json` and judged. PRODUCERS (16) and RECORD_SECONDS (4)
# change the load and the recording.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start artemis-journal
rw_causeway

dir=$CACHE/artemis
home=$(cat "$dir/home")
WARMUP=2          # seconds the client runs before its figures count
MEASURE=5         # seconds measured, per run
RECORD=${RECORD_SECONDS:-4}

# broker NAME PORT: start an instance on a fresh journal; sets BROKER (the JVM: the
# script execs java)
broker() {
    rw_port_free "$2"
    rm -rf "$dir/$1/data"
    rw_bg "$1" "$dir/$1/bin/artemis" run
    BROKER=$BG_PID
}

# producer NAME PORT SECONDS: start the load; its per-second report goes to NAME.json
producer() {
    rw_bg "$1" "$home/bin/artemis" perf producer --url "tcp://127.0.0.1:$2" \
        --persistent --producers ${PRODUCERS:-16} --threads 2 --max-pending 1 --message-size 1024 \
        --warmup $WARMUP --duration "$3" --json "$OUT/$1.json" "queue://RW.$1"
    CLIENT=$BG_PID
}

# Messages per second over the measured (non-warm-up) seconds of the named reports.
rate() {
    python3 - "$@" <<'PY'
import json, sys
rows = [r for p in sys.argv[1:] for r in json.load(open(p))
        if r.get("sampleType") == "interval" and not r.get("warmup")]
print("%.0f" % (sum(r["completed"] for r in rows) / max(len(rows), 1)))
PY
}

broker broker-fsync 61626
SYNC=$BROKER
broker broker-nofsync 61627
NOSYNC=$BROKER
rw_wait_port 61626 120
rw_wait_port 61627 120

# A broker's first runs are slow (its JIT is still compiling: up to 3x fewer messages
# per second), so each gets one unmeasured run first.
for port in 61626 61627; do
    producer "warmup-$port" $port $((WARMUP + MEASURE))
    wait "$CLIENT"
done
ROUNDS=2
ratios=()
for round in $(seq $ROUNDS); do
    for port in 61626 61627; do
        producer "load-$port-$round" $port $((WARMUP + MEASURE))
        wait "$CLIENT"
    done
    on=$(rate "$OUT/load-61626-$round.json")
    off=$(rate "$OUT/load-61627-$round.json")
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", b / a }')")
    rw_log "round $round: fdatasync on $on msg/s, off $off msg/s"
done
before=$(rate "$OUT"/load-61626-*.json)
after=$(rate "$OUT"/load-61627-*.json)
rw_fix throughput msg/s "$before" "$after" \
    "journal-datasync true (as created) vs false (artemis create --no-fsync), ${PRODUCERS:-16} producers alternating between the two brokers, $ROUNDS runs of ${MEASURE}s each (ratios ${ratios[*]})"
rw_stop "$NOSYNC"
rm -rf "$dir/broker-nofsync/data"   # the messages are never consumed: hundreds of MB

producer recorded 61626 $((WARMUP + RECORD + 2))
sleep $((WARMUP + 1))
echo "$SYNC $CLIENT" >"$OUT/pids"
"$CW" record -p "$SYNC,$CLIENT" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
wait "$CLIENT"
rw_stop "$SYNC"
rm -rf "$dir/broker-fsync/data"

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
python3 "$(dirname "$0")/judge.py" "$OUT" $(cat "$OUT/pids")
