#!/usr/bin/env bash
# perf.data import: the native reader against the `perf script` path, with
# `perf sched timehist` on the same file as the peer, in alternating rounds.
#
# Usage (as root, from anywhere in the repo):
#   bench/import_perf.sh                        # records a 3-s system-wide perf.data
#   PERF_DATA=path/to/perf.data bench/import_perf.sh   # an existing recording
#   ROUNDS=5 CAUSEWAY=path/to/causeway bench/import_perf.sh
#
# The recording: `perf record -a -g` of the scheduler, IRQ and block tracepoints
# (those causeway maps) while workloads/bin/pipeline-commit runs for 3 s.
# Prints, per reader, the wall time of each round and the median, the events
# imported, and the ratio of the medians.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CW=${CAUSEWAY:-$here/target/release/causeway}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=${PERF_DATA:-$tmp/perf.data}
if [ -z "${PERF_DATA:-}" ]; then
    perf record -q -a -g -o "$data" \
        -e sched:sched_switch -e sched:sched_waking -e sched:sched_wakeup_new \
        -e sched:sched_process_fork -e sched:sched_process_exec -e sched:sched_process_exit \
        -e irq:irq_handler_entry -e irq:irq_handler_exit -e irq:softirq_entry -e irq:softirq_exit \
        -e block:block_rq_issue -e block:block_rq_complete \
        -- "$here/workloads/bin/pipeline-commit" --seconds 3 >/dev/null 2>&1
fi
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, $(uname -r)"
echo "file: $data ($(stat -c %s "$data") bytes); $(date -u '+%Y-%m-%d %H:%M UTC')"
secs() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); python3 -c "print(($e - $s) / 1e9)"; }
declare -A t
for r in $(seq "$ROUNDS"); do
    t[native]+="$(secs "$CW" import "$data" -o "$tmp/n.cwt") "
    t[perf-script]+="$(secs "$CW" import --via-perf "$data" -o "$tmp/p.cwt") "
    t[timehist]+="$(secs perf sched timehist -i "$data") "
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for k in native perf-script timehist; do
    printf '%-12s median %.3f s  (rounds: %s)\n' "$k" "$(echo "${t[$k]}" | median)" "${t[$k]}"
done
n=$(echo "${t[native]}" | median); p=$(echo "${t[perf-script]}" | median)
printf 'perf-script / native: %.1fx\n' "$(python3 -c "print($p / $n)")"
"$CW" info "$tmp/n.cwt" 2>/dev/null | grep -m1 '^events' || true
"$CW" info "$tmp/p.cwt" 2>/dev/null | grep -m1 '^events' || true
