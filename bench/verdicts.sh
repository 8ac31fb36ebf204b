#!/usr/bin/env bash
# Verdict stability: each zoo stall case recorded RUNS times (default recording) and
# diagnosed with `diagnose --auto`; the verdict lines (the text before the first empty
# line, what a user reads) are compared across the runs after the numbers that differ
# between any two runs of the same program are taken out (PIDs, durations, counts), so
# what is compared is the chain: each hop's thread, what it did, what it waited on and
# where. "distinct chains" compares each hop's thread, what it waited on and the rule
# that found it only (a stopped or busy thread is caught wherever it happened to be);
# "distinct verdicts" the whole lines. The first run's trace is diagnosed a second time:
# the same recording must give the same report. A case is stable when all its runs give
# one chain.
#
# Usage (as root, from anywhere in the repo):
#
#   bench/verdicts.sh
#   CAUSEWAY=target/release/causeway RUNS=5 ONLY=lock bench/verdicts.sh
#
# Knobs: RUNS [5]; ONLY [all] a regular expression of the cases to run.

set -euo pipefail
. "$(dirname "$0")/common.sh"
bench_start verdicts python3
bench_causeway
RUNS=${RUNS:-5}
ONLY=${ONLY:-.}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; causeway $CW_ID"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# case | command (a zoo workload under workloads/bin, or a script) | seconds (for a
# workload's --seconds; empty for a script) | diagnose flags
cases=(
    "lock-holder-idle|workloads/bin/lock-holder-idle --sleep-ms 3000|4|--thread lh-victim --stall wait"
    "lock-convoy|workloads/bin/lock-holder-idle --sleep-ms 3000 --victims 4|4|--thread lh-victim --stall wait"
    "stopped-peer|workloads/bin/stopped-peer --stop-ms 500|1.5|--thread client-0 --stall wait"
    "stop-script|bench/stop-script.sh||--thread client-0 --stall wait"
    "lock-chain|workloads/bin/lock-chain|1|--thread requester --stall wait"
    "long-cpu|workloads/bin/long-cpu|1|--thread event-loop --stall run"
    "circular-timeout|workloads/bin/circular-timeout|1|--thread ct-client --stall wait"
    "memcg-reclaim-mmap|workloads/bin/memcg-reclaim --mmap 1 --dir /var/tmp|2|--thread reader-0 --stall wait"
)
echo
echo "| case | runs | distinct chains | distinct verdicts | same trace twice | hops (first run) | report lines (min-max) |"
echo "|---|---:|---:|---:|---|---|---|"
for c in "${cases[@]}"; do
    IFS='|' read -r name wl secs flags <<<"$c"
    [[ $name =~ $ONLY ]] || continue
    for i in $(seq "$RUNS"); do
        # shellcheck disable=SC2086
        "$CW" record -o "$TMP/$name-$i.cwt" -- $wl ${secs:+--seconds "$secs"} >/dev/null 2>&1
        # shellcheck disable=SC2086
        "$CW" diagnose --auto $flags "$TMP/$name-$i.cwt" >"$TMP/$name-$i.txt" 2>/dev/null || true
    done
    # The same recording diagnosed again must give the same report, byte for byte.
    # shellcheck disable=SC2086
    "$CW" diagnose --auto $flags "$TMP/$name-1.cwt" >"$TMP/$name-again.txt" 2>/dev/null || true
    if cmp -s "$TMP/$name-1.txt" "$TMP/$name-again.txt"; then again=same; else again=DIFFERS; fi
    python3 - "$name" "$TMP" "$RUNS" "$again" <<'PY'
import re, sys
name, tmp, runs, again = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def verdict(text):
    lines = text.split("\n\n", 1)[0].splitlines()
    out = []
    for l in lines:
        l = re.sub(r"\(\d+\)", "(PID)", l)
        l = re.sub(r"\d+(\.\d+)? ms", "T ms", l)
        l = re.sub(r"reached \d+ times", "reached N times", l)
        l = re.sub(r"-\d+\b", "-N", l)   # per-run cgroup names (cw-...-PID)
        l = re.sub(r"0x[0-9a-f]+", "ADDR", l)   # addresses move with ASLR
        out.append(" ".join(l.split()))
    return tuple(out)
texts = [open(f"{tmp}/{name}-{i}.txt").read() for i in range(1, runs + 1)]
vs = [verdict(t) for t in texts]
distinct = sorted(set(vs), key=vs.index)
lengths = [len(t.splitlines()) for t in texts]
def who(l):
    m = re.match(r"(?:<- )?(.+?) \(PID\)", l)
    return m.group(1) if m else l[:30]
def chain(v):
    # Per hop: who, what it waited on (the word after the duration) and how it was
    # found; where a stopped or busy thread happened to be is left out.
    out = []
    for l in v[1:]:
        m = re.match(r"(?:<- )?(.+?) \(PID\).*? T ms (\S+)", l)
        rule = re.search(r"\(([a-z ,]+)\)$", l)
        out.append((m.group(1) if m else l[:30], m.group(2) if m else "",
                    rule.group(1) if rule else ""))
    return tuple(out)
chains = len(set(chain(v) for v in vs))
hops = " ← ".join(who(l) for l in vs[0][1:]) if vs[0] else "(none)"
print(f"| {name} | {runs} | {chains} | {len(distinct)} | {again} | {hops} | {min(lengths)}-{max(lengths)} |")
if len(distinct) > 1:
    for k, v in enumerate(distinct):
        n = vs.count(v)
        print(f"<!-- verdict {k + 1} ({n} of {runs} runs):", file=sys.stderr)
        for l in v:
            print("   " + l, file=sys.stderr)
PY
done
rm -rf "$TMP"
