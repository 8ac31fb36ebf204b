#!/usr/bin/env bash
# Apache Kafka (KRaft: a controller JVM and a broker JVM) with a topic whose
# flush.messages is 1: the request handler that appends a produce request to the log
# flushes it (fsync of the segment, msync of its indexes) before the reply. Load: Kafka's
# own producer benchmark (kafka-producer-perf-test's class, ProducerPerformance),
# unthrottled. A second topic on the same broker keeps the default flush policy (the
# fix); the load alternates between the two, after a warm-up run on each; then the
# flushing topic's load is recorded with `causeway record -p BROKER,CLIENT`, analysed
# with `causeway bottleneck --json` and judged. ROUNDS (5) and RECORD_SECONDS (4) change
# the measurement and the recording.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start kafka-flush
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

libs=$(cat "$CACHE/kafka/libs")
PORT=19092        # clients
CTRL=19093        # the KRaft controller (a JVM of its own)
WINDOW=5          # ProducerPerformance reports every 5 s; its first window is not counted
# Seconds per measured run: the JVM's start, a warm-up window, a measured one
RUN=$((2 * WINDOW + 3))
ROUNDS=${ROUNDS:-5}   # 3 rounds of this case varied 2-3x on one run: 5 settle its ratio
RECORD=${RECORD_SECONDS:-4}
DATA=$OUT/data

rw_port_free $PORT
rw_port_free $CTRL
# KRaft as deployed in production: the controller in a JVM of its own (its request
# handlers have the broker's thread names), the broker in another.
common="controller.quorum.voters=1@127.0.0.1:$CTRL
controller.listener.names=CONTROLLER"
cat >"$OUT/controller.properties" <<PROPS
process.roles=controller
node.id=1
$common
listeners=CONTROLLER://127.0.0.1:$CTRL
listener.security.protocol.map=CONTROLLER:PLAINTEXT
log.dirs=$DATA/controller
PROPS
cat >"$OUT/broker.properties" <<PROPS
process.roles=broker
node.id=2
$common
listeners=PLAINTEXT://127.0.0.1:$PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA/broker
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
cat >"$OUT/log4j.properties" <<'PROPS'
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
PROPS
JAVA=(java -cp "$libs/*" -Dlog4j.configuration="file:$OUT/log4j.properties")
# kafka-server-start.sh's heap and GC settings
SERVER_OPTS=(-Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
    -XX:MaxInlineLevel=15 -Djava.awt.headless=true)

rw_log "formatting $DATA, starting the controller and the broker"
cluster=$("${JAVA[@]}" kafka.tools.StorageTool random-uuid)
for role in controller broker; do
    "${JAVA[@]}" kafka.tools.StorageTool format -c "$OUT/$role.properties" -t "$cluster" \
        >>"$OUT/format.log" 2>&1
done
rw_bg controller "${JAVA[@]}" "${SERVER_OPTS[@]}" kafka.Kafka "$OUT/controller.properties"
CONTROLLER=$BG_PID
rw_wait_port $CTRL 120
rw_bg broker "${JAVA[@]}" "${SERVER_OPTS[@]}" kafka.Kafka "$OUT/broker.properties"
BROKER=$BG_PID
rw_wait_port $PORT 120

topic() {
    "${JAVA[@]}" org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:$PORT \
        --create --partitions 1 --replication-factor 1 --topic "$@" >>"$OUT/topics.log" 2>&1
}
topic rw-flush --config flush.messages=1    # flush after every append
topic rw-default                            # the default: flushing left to the OS
# The broker's thread names (comm keeps only 15 characters: request handlers and network
# threads both read "data-plane-kafk"); judge.py finds the request handlers here.
jcmd "$BROKER" Thread.print >"$OUT/broker-threads.txt" 2>&1

# producer NAME TOPIC: start the load (unthrottled, 1 KiB records, acks=1); sets CLIENT
producer() {
    rw_bg "$1" "${JAVA[@]}" -Xmx512M org.apache.kafka.tools.ProducerPerformance \
        --topic "$2" --num-records 1000000000 --record-size 1024 --throughput -1 \
        --producer-props bootstrap.servers=127.0.0.1:$PORT acks=1
    CLIENT=$BG_PID
}
# measure NAME TOPIC SECONDS: one run. `sync` first: the page cache that the other
# topic's run left dirty would otherwise be written back during this one.
measure() {
    sync
    producer "$1" "$2"
    sleep "$3"
    rw_stop "$CLIENT"
}
# Records per second over the windows after the first, from ProducerPerformance's
# "N records sent, R records/sec (...)" lines.
rate() {
    python3 - "$@" <<'PY'
import re, sys
rates = []
for p in sys.argv[1:]:
    ws = [float(m.group(1)) for m in re.finditer(r"records sent, ([\d.]+) records/sec", open(p).read())]
    rates += ws[1:]
print("%.0f" % (sum(rates) / len(rates)) if rates else "0")
PY
}

# The broker's JIT is still compiling during its first runs: one unmeasured run each.
measure warmup-flush rw-flush $((WINDOW + 2))
measure warmup-default rw-default $((WINDOW + 2))
ratios=()
for round in $(seq "$ROUNDS"); do
    measure "load-flush-$round" rw-flush $RUN
    measure "load-default-$round" rw-default $RUN
    on=$(rate "$OUT/load-flush-$round.log")
    off=$(rate "$OUT/load-default-$round.log")
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a ? b / a : 0 }')")
    rw_log "round $round: flush.messages=1 $on records/s, default $off records/s"
done
before=$(rate "$OUT"/load-flush-*.log)
after=$(rate "$OUT"/load-default-*.log)
rw_fix throughput records/s "$before" "$after" \
    "topic flush.messages=1 vs the default (no flush.messages), same broker, alternating, $ROUNDS runs of ${WINDOW}s each after a ${WINDOW}s warm-up window (ratios ${ratios[*]})"

sync
producer recorded rw-flush
# The producer first fills its 32 MB buffer as fast as it can; then each send waits.
sleep 10
echo "$BROKER $CLIENT" >"$OUT/pids"
"$CW" record -p "$BROKER,$CLIENT" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
rw_stop "$CLIENT"
rw_stop "$BROKER"
rw_stop "$CONTROLLER"
rm -rf "$DATA"   # the records are never consumed: GBs

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
