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

rw_log "recording system-wide; the nightly job holds the lock for ${SLOW}s"
rw_record trace -a -d $((SLOW + 2))
rw_pause 0.5
rw_bg job sh "$here/job.sh" "$lock" "$SLOW"
JOB=$BG_PID
rw_pause 0.5
# A second job that needs the same lock, listed 0.3 s in.
rw_stall waiter 0.3 flock "$lock" true
WAITER=$STALL_PID
before=$STALL
echo "$JOB $WAITER" >"$OUT/pids"
wait "$JOB" || true
wait "$REC_PID" || true
rw_log "the waiting job took ${before}s"

rw_log "the fix: the lock for the job's first step only"
rw_bg job-fixed sh "$here/job.sh" "$lock" 2 --fixed
JOB2=$BG_PID
rw_pause 0.5
rw_stall waiter-fixed - flock "$lock" true
after=$STALL
wait "$JOB2" || true
rw_log "the waiting job took ${after}s with the fix"
rw_fix "waiting job's time" s "$before" "$after" "the nightly job holds the lock for its first step only, not across its slow step"

set +e
read -r _ wpid <"$OUT/pids"
"$CW" diagnose --auto --thread "$wpid" --json "$OUT/trace.cwt" >"$OUT/diagnose.json" 2>"$OUT/diagnose.err"
"$CW" diagnose --auto --thread "$wpid" "$OUT/trace.cwt" >"$OUT/diagnose.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
