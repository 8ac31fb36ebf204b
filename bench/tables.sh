#!/usr/bin/env bash
# Trace tables: how fast `causeway tables` writes them, how many Parquet bytes an event
# costs, and how long the fleet census takes over them (issue 30).
#
#   1. The largest real trace: bench/pingpong.c (a pair of threads passing a byte over
#      two pipes, the densest scheduling workload here) recorded for SECONDS (default
#      8) with default events and stacks; converted ROUNDS times (default 3).
#   2. A fleet: that trace filed under HOSTS host names (default 100) in one directory,
#      converted with one `causeway tables` per host, two at a time (one per core);
#      then the census (`causeway fleet`) over the whole directory, embedded and on a
#      Ballista cluster of one scheduler and two executors on this machine.
#
# Peers: DuckDB (target/interop-venv, from scripts/setup.sh) rewriting one trace's
# tables as Parquet (the rate of encoding the same rows) and reading the fleet's
# tables for the census's two queries; pyarrow (Arrow C++, installed from PyPI on
# first use) writing the same rows from memory. All in the same run.
#
# Environment: CAUSEWAY (binary), SECONDS_REC, ROUNDS, HOSTS, KEEP=1 keeps $TMP,
# CLUSTER=0 skips the cluster (for a binary built without the `cluster` feature).
# CAUSEWAY must be a release build (`cargo build --release`): the binary `make test`
# leaves in target/release has Arrow and Parquet unoptimised and converts ~7x slower.
set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start tables gcc
bench_causeway
SECONDS_REC=${SECONDS_REC:-8}
ROUNDS=${ROUNDS:-3}
HOSTS=${HOSTS:-100}
PY=$REPO/target/interop-venv/bin/python3

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; kernel $(uname -r)"
echo "causeway: $CW_ID"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"

gcc -O2 -Wall -pthread -o "$TMP/pingpong" bench/pingpong.c
"$CW" record -o "$TMP/big.cwt" -- "$TMP/pingpong" --pairs 1 --seconds "$SECONDS_REC" 2>/dev/null
events=$("$CW" info --json "$TMP/big.cwt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
echo "trace: $events events, $(stat -c %s "$TMP/big.cwt") bytes (.cwt)"

# With the analyses last, so that the tables the peers below rewrite are the whole
# set (the analyses' tables are a few hundred rows).
for flags in "--no-analyses" ""; do
for r in $(seq "$ROUNDS"); do
    rm -rf "$TMP/one"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # $flags is one flag or none
    "$CW" tables "$TMP/big.cwt" -o "$TMP/one" --json $flags > "$TMP/one.json"
    t1=$(date +%s.%N)
    python3 - "$TMP/one.json" "$t0" "$t1" "${flags:-with analyses}" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))[0]
secs = float(sys.argv[3]) - float(sys.argv[2])
b = sum(t["bytes"] for t in w["tables"].values())
rows = sum(t["rows"] for t in w["tables"].values())
print(f"one trace ({sys.argv[4]}): {w['events']} events in {secs:.2f} s (whole command) = "
      f"{w['events']/secs/1e6:.2f} M events/s; {rows} rows; {b} Parquet bytes = "
      f"{b/w['events']:.2f} bytes/event")
PY
done
done

# Peer for the write rate: DuckDB reading the tables just written and writing the same
# rows again as zstd Parquet, both cores, every table. Its rate is what a mature
# columnar engine takes to encode these rows on this machine, before any of the work
# of making them from events (reading the trace, the model, the analyses).
if [ -x "$PY" ]; then
    "$PY" - "$TMP/one" "$events" "$ROUNDS" <<'PY'
import duckdb, glob, os, shutil, sys, time
src, events, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = sorted(glob.glob(f"{src}/host=*/trace=*/*.parquet"))
rows = 0
con = duckdb.connect()
con.execute("SET threads = 2")
for f in files:
    rows += con.execute(f"SELECT count(*) FROM read_parquet('{f}')").fetchone()[0]
out = src + ".duckdb"
for r in range(rounds):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    t0 = time.time()
    for f in files:
        dst = os.path.join(out, os.path.basename(f))
        con.execute(f"COPY (SELECT * FROM read_parquet('{f}')) TO '{dst}' "
                    "(FORMAT parquet, COMPRESSION zstd)")
    secs = time.time() - t0
    print(f"peer: DuckDB {duckdb.__version__} rewrites the same {rows} rows in "
          f"{secs:.2f} s = {events/secs/1e6:.2f} M events/s of the trace")
PY
else
    echo "peer: DuckDB not installed ($PY; scripts/setup.sh makes it)"
fi

# Second peer, without DuckDB's reading: Arrow C++'s Parquet writer (pyarrow, installed
# on first use into target/bench-venv) writing the same rows from memory, one file at
# a time and two (both cores), zstd level 1 as ours; then plain, uncompressed and
# without dictionaries, the cheapest encoding Parquet has.
PA=$REPO/target/bench-venv/bin/python3
if [ ! -x "$PA" ] || ! "$PA" -c 'import pyarrow' 2>/dev/null; then
    python3 -m venv "$REPO/target/bench-venv" && "$PA" -m pip install -q pyarrow ||
        echo "peer: pyarrow could not be installed (PyPI unreachable?)"
fi
if "$PA" -c 'import pyarrow' 2>/dev/null; then
    "$PA" - "$TMP/one" "$events" "$ROUNDS" <<'PY'
import glob, os, shutil, sys, time
from concurrent.futures import ThreadPoolExecutor
import pyarrow, pyarrow.parquet as pq
src, events, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tables = [(os.path.basename(f), pq.read_table(f))
          for f in sorted(glob.glob(f"{src}/host=*/trace=*/*.parquet"))]
tables.sort(key=lambda x: -x[1].num_rows)
rows = sum(t.num_rows for _, t in tables)
out = src + ".pyarrow"
for label, opts in (("zstd 1", dict(compression="zstd", compression_level=1)),
                    ("plain, uncompressed", dict(compression="none", use_dictionary=False))):
    def write(item):
        pq.write_table(item[1], os.path.join(out, item[0]), **opts)
    for threads in (1, 2):
        for r in range(rounds):
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            t0 = time.time()
            with ThreadPoolExecutor(threads) as ex:
                list(ex.map(write, tables))
            secs = time.time() - t0
            size = sum(os.path.getsize(os.path.join(out, n)) for n, _ in tables)
            print(f"peer: pyarrow {pyarrow.__version__} ({label}, {threads} file(s) at a time) "
                  f"writes the same {rows} rows from memory in {secs:.2f} s = "
                  f"{events/secs/1e6:.2f} M events/s of the trace; {size/events:.1f} bytes/event")
PY
fi

rm -rf "$TMP/fleet"
t0=$(date +%s.%N)
seq -f "host-%03g" "$HOSTS" | xargs -P 2 -I{} "$CW" tables "$TMP/big.cwt" -o "$TMP/fleet" --host {} --json > /dev/null
t1=$(date +%s.%N)
python3 - "$events" "$HOSTS" "$t0" "$t1" "$TMP/fleet" <<'PY'
import os, sys
events, hosts = int(sys.argv[1]), int(sys.argv[2])
secs = float(sys.argv[4]) - float(sys.argv[3])
total = events * hosts
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[5]) for f in fs)
print(f"fleet: {hosts} traces, {total} events in {secs:.1f} s = {total/secs/1e6:.2f} M events/s "
      f"(2 conversions at a time); {size} bytes = {size/total:.2f} bytes/event")
PY

for r in $(seq "$ROUNDS"); do
    t0=$(date +%s.%N)
    "$CW" fleet "$TMP/fleet" --json > "$TMP/census.json"
    t1=$(date +%s.%N)
    echo "census (causeway fleet, embedded DataFusion): $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
done
if [ -x "$PY" ]; then
    for r in $(seq "$ROUNDS"); do
        "$PY" - "$TMP/fleet" <<'PY'
import duckdb, sys, time
d = sys.argv[1]
q = f"""
SELECT kind, site, count(DISTINCT host) AS hosts, sum(weight_ns) AS waiting_ns FROM (
  SELECT 'knot' AS kind, e.wait_stack AS site, e.host, e.weight_ns
  FROM read_parquet('{d}/*/*/bottleneck_edges.parquet', hive_partitioning=false) e
  WHERE e.knot IS NOT NULL AND e.wait_stack IS NOT NULL
  UNION ALL
  SELECT 'sink', e.wait_stack, e.host, e.weight_ns
  FROM read_parquet('{d}/*/*/bottleneck_edges.parquet', hive_partitioning=false) e
  JOIN read_parquet('{d}/*/*/sinks.parquet', hive_partitioning=false) s
    ON s.trace_id = e.trace_id AND s.host = e.host AND s.vertex = e.to_vertex
  WHERE NOT s.background AND e.wait_stack IS NOT NULL)
GROUP BY kind, site ORDER BY hosts DESC, waiting_ns DESC LIMIT 20"""
w = f"""SELECT host, from_ns, sum(count) FROM read_parquet('{d}/*/*/latency_bins.parquet', hive_partitioning=false)
WHERE kind = 'blocked' GROUP BY host, from_ns"""
t0 = time.time()
duckdb.sql(q).fetchall(); duckdb.sql(w).fetchall()
print(f"census queries (peer: DuckDB {duckdb.__version__}, same two queries): {time.time()-t0:.2f} s")
PY
    done
fi
# The same census on a cluster: a scheduler and two executors on this host (one task
# each: the two cores), started fresh, stopped at the end.
if [ "${CLUSTER:-1}" = 1 ]; then
    ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(5)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
    set -- $ports
    "$CW" cluster scheduler --bind "127.0.0.1:$1" 2>"$TMP/sched.log" &
    pids=$!
    sleep 1
    "$CW" cluster executor --scheduler "127.0.0.1:$1" --bind-host 127.0.0.1 --external-host 127.0.0.1 \
        --flight-port "$2" --grpc-port "$3" --concurrency 1 2>"$TMP/exec1.log" &
    pids="$pids $!"
    "$CW" cluster executor --scheduler "127.0.0.1:$1" --bind-host 127.0.0.1 --external-host 127.0.0.1 \
        --flight-port "$4" --grpc-port "$5" --concurrency 1 2>"$TMP/exec2.log" &
    pids="$pids $!"
    trap 'kill $pids 2>/dev/null || true' EXIT
    sleep 3
    for r in $(seq "$ROUNDS"); do
        t0=$(date +%s.%N)
        if ! timeout 300 "$CW" fleet --cluster "127.0.0.1:$1" "$TMP/fleet" --json > "$TMP/census-cluster.json"; then
            echo "census on the cluster: no answer within 300 s"
            break
        fi
        t1=$(date +%s.%N)
        echo "census (causeway fleet --cluster, Ballista: 1 scheduler, 2 executors): $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
    done
    cmp -s "$TMP/census.json" "$TMP/census-cluster.json" && echo "census: cluster and embedded answers identical" \
        || echo "census: cluster and embedded answers DIFFER"
    kill $pids 2>/dev/null || true
else
    echo "census on the cluster: skipped (CLUSTER=0)"
fi

# A query over the biggest table, for scale.
t0=$(date +%s.%N)
"$CW" sql "SELECT host, count(*) AS waits, sum(dur_ns) FROM waits GROUP BY host ORDER BY 3 DESC LIMIT 3" "$TMP/fleet" > /dev/null
t1=$(date +%s.%N)
echo "waits by host over every thread state of the fleet (causeway sql): $(python3 -c "print(f'{$t1-$t0:.2f}')") s"
[ "${KEEP:-0}" = 1 ] && echo "kept $TMP" || rm -rf "$TMP"
