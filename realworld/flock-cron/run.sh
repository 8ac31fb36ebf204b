#!/usr/bin/env bash
# A second job that takes the same lock file with flock(1) stalls behind a nightly job
# holding it across a slow step (job.sh: `flock LOCK sh -c '…; sleep 4'`). Recorded
# system-wide (the two jobs are not one process tree), then
# `causeway diagnose --auto --thread <the waiting flock> --json` is judged on its verdict.
# The fix (the job holds the lock for its first step only) is run unrecorded; the
# waiting job's wall time is measured both ways.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start flock-cron
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)
lock=$OUT/job.lock
SLOW=4

# waiter NAME [snapshot]: a second job that needs the same lock; sets STALL (its wall
# time, s) and WAITER (its pid). Only builtins wait here: a harness `sleep` in the
# recording would be one more process for the diagnosis to wander to.
waiter() {
    local t0 t1
    t0=$(date +%s%N)
    flock "$lock" true &
    WAITER=$!
    if [ "${2:-}" = snapshot ]; then
        rw_pause 0.3
        ps -eo pid=,ppid=,comm= >"$OUT/ps-$1.txt"
    fi
    wait "$WAITER" || true
    t1=$(date +%s%N)
    STALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
}

rw_log "recording system-wide; the nightly job holds the lock for ${SLOW}s"
rw_record trace -a -d $((SLOW + 2))
rw_pause 0.5
rw_bg job sh "$here/job.sh" "$lock" "$SLOW"
JOB=$BG_PID
rw_pause 0.5
waiter waiter snapshot
before=$STALL
echo "$JOB $WAITER" >"$OUT/pids"
wait "$JOB" || true
wait "$REC_PID" || true
rw_log "the waiting job took ${before}s"

rw_log "the fix: the lock for the job's first step only"
rw_bg job-fixed sh "$here/job.sh" "$lock" 2 --fixed
JOB2=$BG_PID
rw_pause 0.5
waiter waiter-fixed
after=$STALL
wait "$JOB2" || true
rw_log "the waiting job took ${after}s with the fix"
rw_fix "waiting job's time" s "$before" "$after" "the nightly job holds the lock for its first step only, not across its slow step"

set +e
read -r _ wpid <"$OUT/pids"
"$CW" diagnose --auto --thread "$wpid" --json "$OUT/trace.cwt" >"$OUT/diagnose.json" 2>"$OUT/diagnose.err"
"$CW" diagnose --auto --thread "$wpid" "$OUT/trace.cwt" >"$OUT/diagnose.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
