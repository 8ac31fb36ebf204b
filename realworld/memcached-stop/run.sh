#!/usr/bin/env bash
# memcached frozen by an operator's script (freeze.sh: SIGSTOP, `sleep 1`, SIGCONT) while
# a client waits on its replies. Recorded system-wide (the script is not the server's
# child), then `causeway diagnose --auto --thread <client> --stall wait --json` is judged
# on its verdict. The fix (no freeze) is run unrecorded; the client's longest request is
# measured both ways.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start memcached-stop
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)
root=$CACHE/memcached/root
PORT=11460
HOLD=1
rw_port_free $PORT

# -t 2: two worker threads (the default is 4); -U 0: no UDP; loopback only.
rw_bg memcached "$root/usr/bin/memcached" -u root -l 127.0.0.1 -p $PORT -U 0 -t 2 -m 64
MC=$BG_PID
rw_wait_port $PORT 30

rw_log "recording system-wide; the script freezes memcached for ${HOLD}s"
rw_record trace -a -d 4
rw_bg client python3 "$here/client.py" $PORT 3
CLIENT=$BG_PID
rw_pause 1
rw_bg freeze sh "$here/freeze.sh" "$MC" "$HOLD"
FREEZE=$BG_PID
rw_pause 0.3
ps -eo pid=,ppid=,comm= >"$OUT/ps-freeze.txt"   # the script's sleep
wait "$FREEZE" || true
wait "$CLIENT" || true
wait "$REC_PID" || true
read -r _ before <"$OUT/client.log"
echo "$MC $FREEZE $CLIENT" >"$OUT/pids"
rw_log "the client's longest request: ${before}s"

rw_log "the fix: no freeze"
rw_bg client-fixed python3 "$here/client.py" $PORT 3
wait "$BG_PID" || true
read -r _ after <"$OUT/client-fixed.log"
rw_stop "$MC"
rw_log "the client's longest request without the freeze: ${after}s"
rw_fix "client's longest request" s "$before" "$after" "memcached is not frozen (no SIGSTOP)"

set +e
read -r _ _ cpid <"$OUT/pids"
flags=(--auto --thread "$cpid" --stall wait)
"$CW" diagnose "${flags[@]}" --json "$OUT/trace.cwt" >"$OUT/diagnose.json" 2>"$OUT/diagnose.err"
"$CW" diagnose "${flags[@]}" "$OUT/trace.cwt" >"$OUT/diagnose.txt" 2>&1
python3 "$here/judge.py" "$OUT" "$(cat "$CACHE/memcached/version")" $(cat "$OUT/pids")
