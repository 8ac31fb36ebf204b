#!/usr/bin/env bash
# The trace point microbenchmark (bench/inproc.sh) at four placements of the traced
# function: test() 16, 32, 48 and 64 bytes past a 64-byte boundary (PAD=0/16/32/48).
#
# Why: a variant and `base` differ by a few instructions, but the same instructions
# placed differently against the CPU's fetch blocks ran up to 0.4 ns per call apart
# (bench/RESULTS.md, runs D and E), more than an off trace point costs. One build
# measures its placement as much as its code; the median over placements, each against
# the `base` of the same placement, measures the code.
#
#   bash bench/inproc_layouts.sh                 work 0, 2 rounds x 4 placements x 2 runs
#   ROUNDS=3 RUNS=3 bash bench/inproc_layouts.sh
#   VARIANTS="base cw-off pfe-off" bash bench/inproc_layouts.sh
#
# Prints every raw line (with its placement) and a table of ns per trace point,
# (variant - base of the same placement) / 2 by the minima, per placement and the
# median over the placements.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-2}
out=${OUT:-$(mktemp -d /tmp/causeway-bench-layouts.XXXXXX)}
mkdir -p "$out"
variants=${VARIANTS:-"base tsc cw-off cw-on cw-on-1slot cw-coarse-only-1slot cw-key-off cw-key-on cw-key-coarse-only-1slot pfe-off fi-noop"}
echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p') nproc=$(nproc) rounds=$rounds runs=${RUNS:-2}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    for pad in 0 16 32 48; do
        # Each call builds its binaries in a directory of its own and runs them.
        PAD=$pad RUNS=${RUNS:-2} WORKS=0 VARIANTS="$variants" OUT="$out/r$r-p$pad" \
            bash bench/inproc.sh >"$out/r$r-p$pad.log"
        sed "s/^/pad=$pad /" "$out/r$r-p$pad/raw.txt"
    done
done | tee "$out/raw.txt"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out/raw.txt" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    pad, v, w, n, ns, _ = line.split()
    rows.setdefault((int(pad[4:]), v), []).append(float(ns))
pads = sorted({p for p, _ in rows})
variants = []
for _, v in rows:
    if v not in variants:
        variants.append(v)
print("| variant | " + " | ".join(f"test() at +{p + 16}" for p in pads) + " | median over placements |")
print("|---|" + "---|" * (len(pads) + 1))
for v in variants:
    if v == "base":
        cells = [f"{min(rows[(p, v)]):.3f} ns/call" for p in pads]
        print(f"| base | " + " | ".join(cells) + " | — |")
        continue
    tps = [(min(rows[(p, v)]) - min(rows[(p, "base")])) / 2 for p in pads]
    print(f"| {v} | " + " | ".join(f"{x:.3f}" for x in tps) + f" | **{st.median(tps):.3f}** |")
PY
echo "# raw results in $out/raw.txt"
