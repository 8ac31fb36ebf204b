#!/usr/bin/env bash
# Measures plain vs --fixed throughput of every workload and prints a
# Markdown table (the one in README.md).
#
#   ./measure.sh [SECONDS [REPEATS]]     defaults: 3 s, 3 repeats
#   PROGS="spin-flag long-cpu" ./measure.sh   only some workloads
#
# Plain and fixed runs alternate so that slow drifts in background load hit
# both variants alike, and each cell is the median of the repeats.  The
# machine may be shared: a run during which other processes used more than
# MAX_FOREIGN cores (default 0.75; busy time in /proc/stat minus the run's
# own CPU time) is retried, up to 4 times; a run that never got a quiet slot
# is marked *.  The I/O workloads make the kernel work on their behalf
# (block-I/O kworkers, loopback softirqs): up to ~0.5 "foreign" cores even
# on an idle machine, hence the loose default.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
reps=${2:-3}
max_foreign=${MAX_FOREIGN:-0.75}
progs=${PROGS:-"blocking-write lock-contention load-imbalance circular-timeout
       spin-flag long-cpu two-peaks blocking-net prefork-lock group-commit
       stopped-peer lock-chain batch-loop pipeline-commit lock-holder-idle"}
hz=$(getconf CLK_TCK)

make -s -C "$here"
scratch=$(mktemp -d /var/tmp/causeway-workloads-measure.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"

# Busy jiffies of all CPUs: everything but idle and iowait.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# Prints "<throughput> <foreign cores>" for one run.
run_once() {
	local b0 b1 out
	b0=$(busy_ticks)
	out=$(/usr/bin/time -f '%e %U %S' -o "$scratch/.time" \
		"$here/bin/$1" --seconds "$secs" ${2:-} 2>/dev/null)
	b1=$(busy_ticks)
	read -r wall usr sys <"$scratch/.time"
	awk -v out="$out" -v b0="$b0" -v b1="$b1" -v hz="$hz" \
	    -v wall="$wall" -v own="$usr + $sys" 'BEGIN {
		split(out, f, " "); split(own, o, " + ")
		foreign = ((b1 - b0) / hz - (o[1] + o[2])) / wall
		printf "%s %.2f\n", f[2], foreign < 0 ? 0 : foreign }'
}

# Prints the throughput of the first quiet run, or the last one with a '*'.
measure() {
	local try res
	for try in 1 2 3 4 5; do
		res=$(run_once "$@")
		if awk -v f="${res#* }" -v m="$max_foreign" 'BEGIN { exit !(f <= m) }'; then
			echo "${res% *}"
			return
		fi
		echo "  ($1 ${2:-}: others used ${res#* } cores, retrying)" >&2
	done
	echo "${res% *}*"
}

median() { printf '%s\n' "$@" | tr -d '*' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "date: $(date -u +%Y-%m-%d), nproc: $(nproc), kernel: $(uname -r)," \
     "loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: ${secs}s each, median of ${reps}, plain/fixed interleaved," \
     "retried when other processes used > ${max_foreign} cores"
echo
echo "| workload | plain ops/s | --fixed ops/s | ratio | all plain runs | all fixed runs |"
echo "|---|---:|---:|---:|---|---|"
for p in $progs; do
	plain=() fixed=()
	for _ in $(seq "$reps"); do
		plain+=("$(measure "$p")")
		fixed+=("$(measure "$p" --fixed)")
	done
	mp=$(median "${plain[@]}")
	mf=$(median "${fixed[@]}")
	ratio=$(awk -v a="$mp" -v b="$mf" 'BEGIN { printf "%.2fx", b / a }')
	echo "| $p | $mp | $mf | $ratio | ${plain[*]} | ${fixed[*]} |"
done
echo
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)"
