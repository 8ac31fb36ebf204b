#!/usr/bin/env bash
# Hubble's trace point microbenchmark (§8.1 Listing 1) for libcauseway, with its peers
# in the same run: the bare TSC read, a no-op -finstrument-functions hook, and uftrace.
# libcauseway's variants: inline trace points (TSC, coarse clock, coarse-only build),
# patched -fpatchable-function-entry sites (prepared at start-up, or switched by their
# first byte: pfe-byte-*), -finstrument-functions hooks.
#
#   bash bench/inproc.sh          full: 2*10^8 calls at work 0 per variant and run, fewer
#                                 as work grows; 3 runs make ~10^9 calls per variant
#   bash bench/inproc.sh quick    1/100 of the calls
#   RUNS=5 bash bench/inproc.sh   repetitions (default 3; min and median reported)
#   VARIANTS="base cw-coarse pfe-on pfe-coarse" bash bench/inproc.sh
#                                 only these variants (names as in the table; uftrace
#                                 is a variant too); default: all
#   WORKS=0 bash bench/inproc.sh  only these work values (default 0 1 10 100 1000)
#   PAD=16 bash bench/inproc.sh   test() at another placement (bench/inproc_layouts.sh)
#
# Needs `make build` (target/release/libcauseway.{a,so}) and uftrace (scripts/setup.sh).
# Prints one line per (variant, work, run) and a table of ns per call and per trace
# point ((variant - base) / 2: each call has an entry and an exit trace point).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
runs=${RUNS:-3}
out=${OUT:-$(mktemp -d /tmp/causeway-bench-inproc.XXXXXX)}
mkdir -p "$out"
scale=1
[ "$mode" = quick ] && scale=100
# SCALE=N divides the calls of a full run by N (a shorter run on a busy machine).
[ -n "${SCALE:-}" ] && scale=$SCALE
rel=${CAUSEWAY_TARGET:-target/release}
[ -f $rel/libcauseway.a ] || { echo "inproc.sh: run make build first" >&2; exit 1; }
# The header that goes with the library: an older build under CAUSEWAY_TARGET is
# compared with its own trace points, not with today's.
inc=crates/causeway-inproc/c
[ -f "$rel/causeway.h" ] && inc=$rel
# Functions and loops aligned the same way in every variant: with the default layout,
# two builds of the same code differed by up to 0.4 ns per call (where a loop or a
# function fell against a 32-byte fetch boundary), more than an off trace point costs.
cf="-O2 -fno-optimize-sibling-calls -falign-functions=64 -falign-loops=32 -I$inc"
# PAD=0|16|32|48 moves test() 16-64 bytes past a 64-byte boundary (hubble.c): what
# bench/inproc_layouts.sh sweeps, to tell a trace point's cost from its placement's.
[ -n "${PAD:-}" ] &&
    cf="-O2 -fno-optimize-sibling-calls -falign-functions=16 -falign-loops=32 -fno-toplevel-reorder -DPAD=$PAD -I$inc"
libs="$rel/libcauseway.a -lpthread -ldl -lm -lrt -lgcc_s"
src=bench/inproc/hubble.c
cc $cf -DMODE_BASE $src -o "$out/base"
cc $cf -DMODE_TSC $src -o "$out/tsc"
cc $cf -DMODE_CW $src -o "$out/cw" $libs
cc $cf -no-pie -DMODE_CW $src -o "$out/cw-nopie" $libs
# The cheapest clock mode: trace points built to read only the coarse clock.
cc $cf -DMODE_CW -DCW_CLOCK_COARSE $src -o "$out/cw-cc" $libs
cc $cf -no-pie -DMODE_CW -DCW_CLOCK_COARSE $src -o "$out/cw-cc-nopie" $libs
# Keyed trace points (CW_KEYED): each behind a 5-byte nop the library patches.
cc $cf -DMODE_CW -DCW_KEYED $src -o "$out/cw-key" $libs
cc $cf -no-pie -DMODE_CW -DCW_KEYED -DCW_CLOCK_COARSE $src -o "$out/cw-key-cc-nopie" $libs
# Patched function entries: no trace point in the source, five nops per function. The
# program references nothing of libcauseway, so the link anchor (-u) is what makes the
# static linker take the library (and its constructor, which patches) at all.
cc $cf -fpatchable-function-entry=5 $src -o "$out/pfe" -Wl,-u,cw_link_anchor $libs
cc $cf -finstrument-functions $src bench/inproc/noop_hooks.c -o "$out/fi-noop"
cc $cf -finstrument-functions $src -o "$out/fi-cw" $libs
cc $cf -finstrument-functions $src -o "$out/fi-preload" -Wl,--unresolved-symbols=ignore-all
cc $cf -pg $src -o "$out/pg"

# Calls per run by work: the trace point cost (work 0) gets the most.
calls_for() {
    case $1 in
        0) echo $((200000000 / scale)) ;;
        1) echo $((100000000 / scale)) ;;
        10) echo $((20000000 / scale)) ;;
        100) echo $((4000000 / scale)) ;;
        *) echo $((400000 / scale)) ;;
    esac
}

run() { # variant work calls -> "variant work calls ns_per_call"
    local v=$1 w=$2 n=$3 r
    case $v in
        base | tsc) r=$("$out/$v" "$w" "$n") ;;
        cw-off) r=$(CAUSEWAY_START=off "$out/cw" "$w" "$n") ;;
        cw-on) r=$("$out/cw" "$w" "$n") ;;
        cw-coarse) r=$(CAUSEWAY_CLOCK=coarse "$out/cw" "$w" "$n") ;;
        cw-on-1slot) r=$("$out/cw-nopie" "$w" "$n") ;;
        cw-coarse-only) r=$("$out/cw-cc" "$w" "$n") ;;
        cw-coarse-only-1slot) r=$("$out/cw-cc-nopie" "$w" "$n") ;;
        cw-key-off) r=$(CAUSEWAY_START=off "$out/cw-key" "$w" "$n") ;;
        cw-key-on) r=$("$out/cw-key" "$w" "$n") ;;
        cw-key-coarse-only-1slot) r=$("$out/cw-key-cc-nopie" "$w" "$n") ;;
        pfe-off) r=$(CAUSEWAY_START=off "$out/pfe" "$w" "$n") ;;
        pfe-on) r=$("$out/pfe" "$w" "$n") ;;
        pfe-coarse) r=$(CAUSEWAY_CLOCK=coarse "$out/pfe" "$w" "$n") ;;
        pfe-byte-off) r=$(CAUSEWAY_PATCH=byte CAUSEWAY_START=off "$out/pfe" "$w" "$n") ;;
        pfe-byte-on) r=$(CAUSEWAY_PATCH=byte "$out/pfe" "$w" "$n") ;;
        fi-noop) r=$("$out/fi-noop" "$w" "$n") ;;
        fi-cw-off) r=$(CAUSEWAY_START=off "$out/fi-cw" "$w" "$n") ;;
        fi-cw-on) r=$("$out/fi-cw" "$w" "$n") ;;
        fi-cw-coarse) r=$(CAUSEWAY_CLOCK=coarse "$out/fi-cw" "$w" "$n") ;;
        fi-cw-preload) r=$(LD_PRELOAD=$(realpath "$rel")/libcauseway.so "$out/fi-preload" "$w" "$n") ;;
        uftrace) r=$(cd "$out" && uftrace record -d "$out/uftrace.data" ./pg "$w" "$n" | tail -1) ;;
    esac
    echo "$v $r"
}

echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p') nproc=$(nproc) mode=$mode runs=$runs pad=${PAD:-none}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
all="base tsc cw-off cw-on cw-coarse cw-on-1slot cw-coarse-only cw-coarse-only-1slot cw-key-off cw-key-on cw-key-coarse-only-1slot pfe-off pfe-on pfe-coarse pfe-byte-off pfe-byte-on fi-noop fi-cw-off fi-cw-on fi-cw-coarse fi-cw-preload uftrace"
variants=${VARIANTS:-$all}
for v in $variants; do
    case " $all " in *" $v "*) ;; *) echo "inproc.sh: unknown variant $v (known: $all)" >&2; exit 2 ;; esac
done
echo "# variants: $variants"
for w in ${WORKS:-0 1 10 100 1000}; do
    n=$(calls_for $w)
    for r in $(seq "$runs"); do
        for v in $variants; do
            # uftrace writes every call to disk at ~100 ns per call: 1/100 of the calls.
            [ "$v" = uftrace ] && run uftrace "$w" $((n / 100 > 10000 ? n / 100 : 10000)) && continue
            run "$v" "$w" "$n"
        done
    done
done | tee "$out/raw.txt"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out/raw.txt" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    v, w, n, ns, _ = line.split()
    rows.setdefault((int(w), v), []).append(float(ns))
works = sorted({w for w, _ in rows})
order = ["base", "tsc", "cw-off", "cw-on", "cw-coarse", "cw-on-1slot", "cw-coarse-only",
         "cw-coarse-only-1slot", "cw-key-off", "cw-key-on", "cw-key-coarse-only-1slot",
         "pfe-off", "pfe-on", "pfe-coarse", "pfe-byte-off", "pfe-byte-on", "fi-noop", "fi-cw-off", "fi-cw-on", "fi-cw-coarse",
         "fi-cw-preload", "uftrace"]
print("| variant | " + " | ".join(f"work {w}: ns/call min (median)" for w in works) + " | ns per trace point at work 0 (min) |")
print("|---|" + "---|" * (len(works) + 1))
for v in order:
    cells = []
    for w in works:
        xs = rows.get((w, v))
        cells.append(f"{min(xs):.3f} ({st.median(xs):.3f})" if xs else "-")
    if not any(xs for (w, u), xs in rows.items() if u == v):
        continue
    b = min(rows[(0, "base")]) if (0, "base") in rows else float("nan")
    tp = (min(rows[(0, v)]) - b) / 2 if (0, v) in rows else float("nan")
    print(f"| {v} | " + " | ".join(cells) + f" | {tp:.3f} |")
PY
echo "# raw results in $out/raw.txt"
