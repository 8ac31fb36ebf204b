#!/usr/bin/env bash
# Measures plain vs --fixed throughput of every workload and prints a
# Markdown table (the one in README.md).
#
#   ./measure.sh [SECONDS [REPEATS]]     defaults: 3 s, 3 repeats
#
# Plain and fixed runs alternate so that background load drifting over
# time hits both variants alike; each cell is the median of the repeats.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
reps=${2:-3}
progs="blocking-write lock-contention load-imbalance circular-timeout
       spin-flag long-cpu two-peaks blocking-net"

make -s -C "$here"
scratch=$(mktemp -d /var/tmp/causeway-workloads-measure.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"

tput() { "$here/bin/$1" --seconds "$secs" ${2:-} 2>/dev/null | awk '{print $2}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "date: $(date -u +%Y-%m-%d), nproc: $(nproc), kernel: $(uname -r)," \
     "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: ${secs}s each, median of ${reps}, plain/fixed interleaved"
echo
echo "| workload | plain ops/s | --fixed ops/s | ratio | all plain runs | all fixed runs |"
echo "|---|---:|---:|---:|---|---|"
for p in $progs; do
	plain=() fixed=()
	for _ in $(seq "$reps"); do
		plain+=("$(tput "$p")")
		fixed+=("$(tput "$p" --fixed)")
	done
	mp=$(median "${plain[@]}")
	mf=$(median "${fixed[@]}")
	ratio=$(awk -v a="$mp" -v b="$mf" 'BEGIN { printf "%.2fx", b / a }')
	echo "| $p | $mp | $mf | $ratio | ${plain[*]} | ${fixed[*]} |"
done
echo
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)"
