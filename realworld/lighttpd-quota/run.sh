#!/usr/bin/env bash
# lighttpd serving a 1.2 MB JSON file through mod_deflate (no cache directory: it
# compresses the file again for every request that accepts gzip, on its one thread),
# started inside a cgroup whose CPU quota is 20 ms per 100 ms, as a container limited to
# a fifth of a CPU: a wrapper shell writes its own PID into the cgroup's cgroup.procs and
# then execs lighttpd, so the server runs under the quota from its first instruction.
# Load: wrk (Debian's HTTP load generator), outside the cgroup, 2 threads and 8
# connections asking for the file with Accept-Encoding: gzip. The fix, the quota lifted
# (cpu.cfs_quota_us = -1) on the same server, is measured first, unrecorded, alternating
# with the quota, ROUNDS (3) rounds; then the quota is set again and the load recorded
# with `causeway record -p LIGHTTPD,WRK` for RECORD_SECONDS (4), analysed with
# `causeway bottleneck --json` and judged. The cgroup is removed on exit, failed or not.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start lighttpd-quota
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

root=$CACHE/lighttpd/root
PORT=18090
THREADS=2
CLIENTS=8
MEASURE=4
ROUNDS=${ROUNDS:-3}
RECORD=${RECORD_SECONDS:-4}
QUOTA_US=20000
PERIOD_US=100000
CG=/sys/fs/cgroup/cpu/cw-rw-$CASE
SITE=$OUT/site

[ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] ||
    { echo "$CASE: needs the cgroup v1 cpu controller at /sys/fs/cgroup/cpu" >&2; exit 2; }
# The servers stop first (rw_cleanup), then their cgroup can go.
cleanup() {
    rw_cleanup
    if [ -d "$CG" ]; then
        echo -1 >"$CG/cpu.cfs_quota_us" 2>/dev/null || true
        rmdir "$CG" 2>/dev/null || rw_log "could not remove $CG: $(cat "$CG/cgroup.procs" 2>/dev/null | tr '\n' ' ')"
    fi
}
trap cleanup EXIT
rmdir "$CG" 2>/dev/null || true   # left by an earlier run, if empty
mkdir -p "$CG"
echo $PERIOD_US >"$CG/cpu.cfs_period_us"
quota() { echo "$1" >"$CG/cpu.cfs_quota_us"; }
quota $QUOTA_US

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
# Loopback only; mod_deflate without deflate.cache-dir compresses every response.
cat >"$OUT/lighttpd.conf" <<CONF
server.modules = ("mod_deflate")
server.document-root = "$SITE"
server.bind = "127.0.0.1"
server.port = $PORT
server.errorlog = "$OUT/lighttpd-error.log"
mimetype.assign = (".json" => "application/json")
deflate.mimetypes = ("application/json")
deflate.allowed-encodings = ("gzip")
CONF

rw_port_free $PORT
# The wrapper: into the cgroup, then exec, so that the PID is lighttpd's.
rw_bg server sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -D -m "$3" -f "$4"' sh \
    "$CG" "$root/usr/sbin/lighttpd" "$root/usr/lib/lighttpd" "$OUT/lighttpd.conf"
SERVER=$BG_PID
rw_wait_port $PORT 30
grep -q "^[0-9]*:cpu[,:].*/cw-rw-$CASE\$" "/proc/$SERVER/cgroup" ||
    { echo "$CASE: lighttpd ($SERVER) is not in $CG: $(cat "/proc/$SERVER/cgroup")" >&2; exit 1; }
curl -s -o /dev/null -H 'Accept-Encoding: gzip' -D "$OUT/headers.txt" "http://127.0.0.1:$PORT/catalog.json"
grep -qi '^Content-Encoding: gzip' "$OUT/headers.txt" ||
    { echo "$CASE: lighttpd does not compress the file (see $OUT/headers.txt)" >&2; exit 1; }

# load NAME SECONDS: wrk in the background; sets WRK
load() {
    rw_bg "$1" wrk -t$THREADS -c$CLIENTS -d"${2}s" -H 'Accept-Encoding: gzip' \
        "http://127.0.0.1:$PORT/catalog.json"
    WRK=$BG_PID
}
# Requests per second from wrk's summary, 2xx answers only
rate() {
    python3 - "$OUT/$1.log" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", t)
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
if m:
    secs = float(m.group(2)) * {"ms": 1e-3, "s": 1, "m": 60}[m.group(3)]
    print("%.1f" % ((int(m.group(1)) - (int(bad.group(1)) if bad else 0)) / secs))
PY
}
measure() {
    quota "$2"
    load "$1" $MEASURE
    wait "$WRK" || true
}

ratios=()
sums="0 0"
for round in $(seq "$ROUNDS"); do
    measure "load-quota-$round" $QUOTA_US
    measure "load-noquota-$round" -1
    on=$(rate "load-quota-$round")
    off=$(rate "load-noquota-$round")
    [ -n "$on" ] && [ -n "$off" ] || { echo "$CASE: no rate in wrk's output" >&2; exit 1; }
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a ? b / a : 0 }')")
    sums=$(awk -v s="$sums" -v a="$on" -v b="$off" 'BEGIN { split(s, x, " "); print x[1] + a, x[2] + b }')
    rw_log "round $round: quota 20 ms/100 ms $on requests/s, no quota $off requests/s"
done
before=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.1f", x[1] / n }')
after=$(awk -v s="$sums" -v n="$ROUNDS" 'BEGIN { split(s, x, " "); printf "%.1f", x[2] / n }')
rw_fix throughput requests/s "$before" "$after" \
    "cpu.cfs_quota_us 20000 per 100000 vs -1 (no quota), same server, alternating, $ROUNDS rounds of ${MEASURE}s, $CLIENTS connections (ratios ${ratios[*]})"

quota $QUOTA_US
load recorded 60   # stopped after the recording
rw_pause 1
echo "$SERVER $WRK" >"$OUT/pids"
cat "$CG/cpu.stat" >"$OUT/cpu.stat-before"
"$CW" record -p "$SERVER,$WRK" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
cat "$CG/cpu.stat" >"$OUT/cpu.stat-after"
rw_stop "$WRK"
rw_stop "$SERVER"

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
"$CW" info "$OUT/trace.cwt" >"$OUT/info.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids") "$(cat "$CACHE/lighttpd/version")"
