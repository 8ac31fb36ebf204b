#!/usr/bin/env bash
# Caddy serving a 1.2 MB JSON file with `encode gzip`: it compresses the file again for
# every request that accepts gzip, on the request's goroutine, so the server's CPUs do
# nothing else. Load: hey (Debian's HTTP load generator), 8 connections asking for the
# file with Accept-Encoding: gzip. The fix, `file_server { precompressed gzip }` with the
# file's .gz beside it (made once with gzip -k: Caddy sends it as it is), is measured
# first, unrecorded, alternating with the plain configuration, each run on a fresh
# server; then the plain server's load is recorded with `causeway record -p CADDY,HEY`,
# analysed with `causeway bottleneck --json` and judged. ROUNDS (3) and RECORD_SECONDS
# (4) change the measurement and the recording.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start caddy-gzip
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

bin=$(cat "$CACHE/caddy/bin")
PORT=18080
CLIENTS=8
MEASURE=4
ROUNDS=${ROUNDS:-3}
RECORD=${RECORD_SECONDS:-4}
SITE=$OUT/site

mkdir -p "$SITE"
python3 - "$SITE/catalog.json" <<'PY'
import json, random, sys
random.seed(1)
rows = [{"id": i, "name": "item %d" % i, "price": round(random.random() * 100, 2),
         "tags": ["red", "green", "blue"][i % 3],
         "description": "A product description that repeats words for compression " * 2}
        for i in range(6000)]
open(sys.argv[1], "w").write(json.dumps(rows, indent=1))
PY
gzip -k -f "$SITE/catalog.json"   # the precompressed copy the fix serves

# conf NAME FILE_SERVER_BLOCK: a Caddyfile, loopback only, no admin API, no HTTPS
conf() {
    cat >"$OUT/Caddyfile-$1" <<CADDY
{
	admin off
	auto_https off
}
http://127.0.0.1:$PORT {
	root * $SITE
	encode gzip
	$2
}
CADDY
}
conf plain "file_server"
conf precompressed "file_server {
		precompressed gzip
	}"

# server NAME CONF: a fresh Caddy; sets SERVER. Its data and config directories are
# the run's own, not the user's.
server() {
    rw_port_free $PORT
    rw_bg "server-$1" env XDG_DATA_HOME="$OUT/xdg" XDG_CONFIG_HOME="$OUT/xdg" \
        "$bin/caddy" run --config "$OUT/Caddyfile-$2" --adapter caddyfile
    SERVER=$BG_PID
    rw_wait_port $PORT 30
}
# load NAME SECONDS: hey in the background; sets HEY
load() {
    rw_bg "$1" "$bin/hey" -z "${2}s" -c $CLIENTS -H 'Accept-Encoding: gzip' \
        "http://127.0.0.1:$PORT/catalog.json"
    HEY=$BG_PID
}
measure() {
    server "$1" "$2"
    load "$1" $MEASURE
    wait "$HEY" || true
    rw_stop "$SERVER"
}
# Requests per second from hey's summary, counting only 200 answers as hey's rate does not
rate() {
    python3 - "$OUT/$1.log" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
total = re.search(r"Total:\s+([\d.]+) secs", t)
ok = re.search(r"\[200\]\s+(\d+) responses", t)
print("%.1f" % (int(ok.group(1)) / float(total.group(1))) if total and ok else "")
PY
}

ratios=()
sums="0 0"
for round in $(seq "$ROUNDS"); do
    measure "load-plain-$round" plain
    measure "load-precompressed-$round" precompressed
    on=$(rate "load-plain-$round")
    off=$(rate "load-precompressed-$round")
    [ -n "$on" ] && [ -n "$off" ] || { echo "caddy-gzip: no rate in hey's output" >&2; exit 1; }
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a ? b / a : 0 }')")
    sums=$(awk -v s="$sums" -v a="$on" -v b="$off" 'BEGIN { split(s, x, " "); print x[1] + a, x[2] + b }')
    rw_log "round $round: encode gzip $on requests/s, precompressed $off requests/s"
done
before=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.1f", x[1] / n }')
after=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.1f", x[2] / n }')
rw_fix throughput requests/s "$before" "$after" \
    "encode gzip of a 1.2 MB file on every request vs file_server precompressed gzip (the .gz made once), a fresh server each run, alternating, $ROUNDS rounds of ${MEASURE}s, $CLIENTS connections (ratios ${ratios[*]})"

server recorded plain
load recorded 60   # stopped after the recording
rw_pause 1
echo "$SERVER $HEY" >"$OUT/pids"
"$CW" record -p "$SERVER,$HEY" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
rw_stop "$HEY"
rw_stop "$SERVER"
cp "$CACHE/caddy/binaries.txt" "$OUT/"

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict "the fix serves a file compressed once instead of compressing every response: it removes CPU work, not waits"
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
"$CW" info "$OUT/trace.cwt" >"$OUT/info.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
