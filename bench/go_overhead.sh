#!/usr/bin/env bash
# Cost of following goroutines: go-commit alone, under `causeway record` (default
# events: goroutine uprobes on), under `causeway record --events -goroutine` (the same
# recorder without them), and under Go's own execution tracer (runtime/trace, the
# workload's --go-trace, in both its processes), interleaved in every round.
#
# Usage (as root, from anywhere in the repo):
#   bench/go_overhead.sh                    # builds nothing; uses target/release/causeway
#   ROUNDS=5 SECONDS_PER_RUN=3 bench/go_overhead.sh
#   CAUSEWAY=path/to/causeway bench/go_overhead.sh
#
# Variants: plain (one fdatasync per request: disk-bound) and --fixed (group commit:
# CPU-bound, ~25k requests/s on 2 vCPUs, where a tracer's cost per event shows).
# Throughput is what go-commit prints; the median over the rounds is compared.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CAUSEWAY=${CAUSEWAY:-$here/target/release/causeway}
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-3}
exe=$here/workloads/bin/go-commit
[ -x "$exe" ] || { echo "go_overhead: build the zoo first (make workloads)" >&2; exit 1; }
tmp=$(mktemp -d /var/tmp/causeway-go-overhead.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); cpu: $(nproc) x $cpu; kernel: $(uname -r); go: $(go version 2>/dev/null | cut -d' ' -f3)"
echo "causeway: $CAUSEWAY ($(git -C "$here" rev-parse --short HEAD 2>/dev/null))"
echo "rounds: $ROUNDS x ${SECS}s per configuration"

run() { # config variant -> throughput
    local cfg=$1 variant=$2 out
    local args=(--seconds "$SECS" --dir "$tmp")
    [ "$variant" = fixed ] && args+=(--fixed)
    case $cfg in
    base) out=$("$exe" "${args[@]}" 2>/dev/null) ;;
    causeway) out=$("$CAUSEWAY" record -o "$tmp/t.cwt" -- "$exe" "${args[@]}" 2>/dev/null) ;;
    causeway-threads) out=$("$CAUSEWAY" record --events -goroutine -o "$tmp/t.cwt" -- "$exe" "${args[@]}" 2>/dev/null) ;;
    gotrace) out=$("$exe" "${args[@]}" --go-trace "$tmp/go.trace" 2>/dev/null) ;;
    esac
    echo "$out" | sed -n 's/^throughput: \([0-9.]*\) ops\/s$/\1/p'
}

configs=(base causeway causeway-threads gotrace)
declare -A res
for variant in plain fixed; do
    for ((r = 0; r < ROUNDS; r++)); do
        # Rotate the order from round to round against the drift of a shared VM.
        for ((k = 0; k < ${#configs[@]}; k++)); do
            c=${configs[$(((k + r) % ${#configs[@]}))]}
            v=$(run "$c" "$variant")
            echo "  $variant round $r $c: $v ops/s" >&2
            res[$variant.$c]+="$v "
        done
    done
done

python3 - "$ROUNDS" <<PY
import statistics, sys
res = {$(for k in "${!res[@]}"; do printf '"%s": "%s",' "$k" "${res[$k]}"; done)}
print()
print("| variant | configuration | median ops/s | min-max | loss vs base |")
print("|---|---|---|---|---|")
for variant in ("plain", "fixed"):
    base = statistics.median(float(x) for x in res[variant + ".base"].split())
    for c in ("base", "causeway", "causeway-threads", "gotrace"):
        v = [float(x) for x in res[f"{variant}.{c}"].split()]
        m = statistics.median(v)
        print(f"| {variant} | {c} | {m:,.0f} | {min(v):,.0f}-{max(v):,.0f} | {100 * (1 - m / base):+.1f} % |")
PY
