#!/bin/sh
# A maintenance script as one is often written: it feeds isql-fb through a pipe, updates
# the row, then waits (here `sleep`, standing for a slow step) before it commits. All the
# while its server process holds the row's lock. With --fixed it commits before the wait.
db=$1 hold=${2:-5}
if [ "${3:-}" = --fixed ]; then
    { echo "update t set v = v + 1 where id = 1;"; echo "commit;"; sleep "$hold"; } | isql-fb -q "$db"
else
    { echo "update t set v = v + 1 where id = 1;"; sleep "$hold"; echo "commit;"; } | isql-fb -q "$db"
fi
