#!/usr/bin/env bash
# What crash-safe recording costs: record workloads for a few seconds and read the
# recorder's checkpoint counters from each trace (how many checkpoints, total and
# longest fdatasync), with the trace's bytes per event. With PEER (a causeway binary
# without checkpoints, e.g. one built from an older commit) each round also records
# with it, for the bytes per event and the recorder's CPU time of both.
#
#   bench/checkpoint.sh [ROUNDS] [PEER]       (root; CAUSEWAY=path to skip the build)
set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start checkpoint python3
bench_causeway
rounds=${1:-3}
peer=${2:-}
seconds=5
echo "# $(date -u '+%F %T') UTC; $(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# causeway $CW_ID; peer ${peer:-none}; $seconds s per recording"
printf '%-15s %-5s %-9s %9s %8s %12s %12s %8s %7s\n' workload round binary events B/event checkpoints sync_total_ms sync_max_ms cpu_s
one() {
    local wl=$1 round=$2 label=$3 bin=$4 out="$TMP/$1-$2-$3.cwt"
    /usr/bin/env time -f '%U %S' -o "$TMP/time" "$bin" record -o "$out" -- \
        workloads/bin/"$wl" --seconds "$seconds" >/dev/null 2>&1
    read -r u s <"$TMP/time"
    "$CW" info --json "$out" | python3 -c "
import json, sys
v = json.load(sys.stdin); c = v['counters']
# Recorders before the ns counters wrote microseconds (_us); either is shown in ms.
ms = lambda k: '%.1f' % (c[k + '_ns'] / 1e6) if k + '_ns' in c else ('%.1f' % (c[k + '_us'] / 1000) if k + '_us' in c else '-')
print('%-15s %-5s %-9s %9d %8.2f %12s %12s %8s %7.2f' % ('$wl', '$round', '$label', v['events'],
      v['bytes'] / max(v['events'], 1), c.get('checkpoints', '-'), ms('checkpoint_sync'),
      ms('checkpoint_sync_max'), $u + $s))"
}
for wl in blocking-net blocking-write; do
    for r in $(seq 1 "$rounds"); do
        one "$wl" "$r" causeway "$CW"
        [ -n "$peer" ] && one "$wl" "$r" peer "$peer"
    done
done
rm -rf "$TMP"
