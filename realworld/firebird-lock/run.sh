#!/usr/bin/env bash
# Firebird Classic (one server process per connection). A script holds a row lock in an
# idle transaction (idle-session.sh: isql-fb fed through a pipe, the script in `sleep`);
# a second isql-fb updates the same row and waits. Everything is recorded system-wide
# (`causeway record -a`: the processes involved are not one tree), then
# `causeway diagnose --auto --thread <victim> --json` is judged on the chain it names.
# The fix (the script commits before its wait) is run unrecorded; both stalls are timed.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start firebird-lock
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

root=$CACHE/firebird/root
# Firebird binds without SO_REUSEADDR: while the last run's connections are in TIME_WAIT
# (a minute) its port cannot be bound, and the server retries for many seconds. So take
# the first port of a few with no socket at all.
PORT=
for p in $(seq 3053 3062); do
    if ! ss -Htan "sport = :$p" | grep -q .; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { echo "firebird-lock: ports 3053-3062 all in use" >&2; exit 2; }
{ cat "$root/firebird.conf.base"; echo "RemoteServicePort = $PORT"; } >"$root/firebird.conf"
db=$CACHE/firebird/db/rw.fdb
DB=127.0.0.1/$PORT:$db
HOLD=5            # seconds the idle session sleeps inside its transaction
. /etc/firebird/3.0/SYSDBA.password
export ISC_USER ISC_PASSWORD

rw_bg firebird env FIREBIRD="$root" FIREBIRD_LOCK="$CACHE/firebird/lock" /usr/sbin/firebird
FB=$BG_PID
rw_wait_port $PORT 30
rm -f "$db"
isql-fb -q >"$OUT/create.log" 2>&1 <<SQL
create database '$DB';
create table t (id int primary key, v int);
insert into t values (1, 0);
commit;
SQL

# The update that waits for the row (rw_stall: its ps snapshot half a second in, when
# the victim's server process exists; the judge needs its pid).
STALL_INPUT="update t set v = v + 10 where id = 1; commit;"

rw_log "recording system-wide; idle session holds the row for ${HOLD}s"
rw_record trace -a -d $((HOLD + 3))
rw_pause 0.5
rw_bg holder sh "$here/idle-session.sh" "$DB" "$HOLD"
HOLDER=$BG_PID
rw_pause 0.7
ps -eo pid=,ppid=,comm= >"$OUT/ps-holder.txt"    # the holder's server process, its sleep
rw_stall victim 0.5 isql-fb -q "$DB"
VICTIM=$STALL_PID
before=$STALL
echo "$FB $HOLDER $VICTIM" >"$OUT/pids"
wait "$HOLDER" || true
wait "$REC_PID" || true
rw_log "victim's update took ${before}s"

rw_log "the fix: the script commits before it waits"
rw_bg holder-fixed sh "$here/idle-session.sh" "$DB" 2 --fixed
HOLDER2=$BG_PID
rw_pause 0.7
rw_stall victim-fixed - isql-fb -q "$DB"
after=$STALL
wait "$HOLDER2" || true   # its isql-fb and server process end with it
rw_stop "$FB"
rw_log "victim's update with the fix took ${after}s"
rw_fix "victim's update time" s "$before" "$after" "the idle session commits before its wait instead of after"

set +e
read -r _ _ vpid <"$OUT/pids"
"$CW" diagnose --auto --thread "$vpid" --json "$OUT/trace.cwt" >"$OUT/diagnose.json" 2>"$OUT/diagnose.err"
"$CW" diagnose --auto --thread "$vpid" "$OUT/trace.cwt" >"$OUT/diagnose.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
