#!/usr/bin/env bash
# An operator's script that freezes a server for half a second: stopped-peer runs
# without stopping itself (--fixed); this script sends SIGSTOP, sleeps, sends SIGCONT.
# Used by bench/verdicts.sh (the zoo test does the same in diagnose_zoo.rs).
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/workloads/bin/stopped-peer" --seconds 1.5 --fixed > /dev/null &
sleep 0.4
pid=$(pgrep -x sp-server | head -1)
kill -STOP "$pid"
sleep 0.5
kill -CONT "$pid"
wait
