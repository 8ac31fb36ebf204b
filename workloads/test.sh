#!/usr/bin/env bash
# Smoke test for the workload zoo.
#
#   ./test.sh            build (make) and test bin/
#   ./test.sh bin-nofp   build (make NOFP=1) and test bin-nofp/
#
# For every workload: --help exits 0, an unknown flag exits 2, and a 0.5 s
# run, plain and --fixed, exits 0 within a bounded time and prints exactly
# one stdout line "throughput: X ops/s" with X > 0.  Runs happen in a
# scratch directory that must be empty afterwards (blocking-write removes
# its log file).  Exits non-zero if anything failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bindir=${1:-bin}
progs="blocking-write lock-contention load-imbalance circular-timeout
       spin-flag long-cpu two-peaks blocking-net prefork-lock group-commit
       stopped-peer lock-chain batch-loop pipeline-commit lock-holder-idle
       cpu-quota cpu-pinned memcg-reclaim commit-loop event-fsync go-commit go-lock"
run_secs=0.5
max_wall=2.0   # run_secs + generous slack for a loaded 2-core machine

case "$bindir" in
bin)      make -s -C "$here" || { echo "FAIL: make" >&2; exit 1; } ;;
bin-nofp) make -s -C "$here" NOFP=1 || { echo "FAIL: make NOFP=1" >&2; exit 1; } ;;
esac
bindir=$(cd "$here" && cd "$bindir" && pwd) || { echo "FAIL: no $1" >&2; exit 1; }

scratch=$(mktemp -d /var/tmp/causeway-workloads-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

for prog in $progs; do
	bin="$bindir/$prog"
	if [ ! -x "$bin" ]; then
		fail "$prog: $bin missing"
		continue
	fi

	out=$("$bin" --help 2>/dev/null); rc=$?
	[ $rc -eq 0 ] || fail "$prog --help: exit $rc, want 0"
	case "$out" in usage:*) ;; *) fail "$prog --help: no usage text on stdout" ;; esac

	"$bin" --no-such-flag >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] || fail "$prog --no-such-flag: exit $rc, want 2"
	"$bin" --seconds >/dev/null 2>&1; rc=$?
	[ $rc -eq 2 ] || fail "$prog --seconds (no value): exit $rc, want 2"
	# A bad address is a usage error too, for the workloads that take one.
	if printf '%s\n' "$out" | grep -q -- '--connect'; then
		"$bin" --connect nowhere >/dev/null 2>&1; rc=$?
		[ $rc -eq 2 ] || fail "$prog --connect nowhere: exit $rc, want 2"
	fi

	for variant in "" --fixed; do
		name="$prog${variant:+ $variant}"
		t0=$(date +%s.%N)
		out=$(timeout -k 1 10 "$bin" --seconds $run_secs $variant 2>"$scratch/.stderr"); rc=$?
		t1=$(date +%s.%N)
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
		if [ $rc -ne 0 ]; then
			fail "$name: exit $rc; stderr:"
			sed 's/^/    /' "$scratch/.stderr" >&2
			continue
		fi
		lines=$(printf '%s\n' "$out" | wc -l)
		if [ "$lines" -ne 1 ] ||
		   ! printf '%s\n' "$out" | grep -Eq '^throughput: [0-9]+\.[0-9] ops/s$'; then
			fail "$name: stdout is not one 'throughput: X ops/s' line: '$out'"
			continue
		fi
		x=$(printf '%s\n' "$out" | awk '{print $2}')
		if ! awk -v x="$x" 'BEGIN { exit !(x > 0) }'; then
			fail "$name: throughput is $x, want > 0"
		fi
		if awk -v w="$wall" -v m="$max_wall" 'BEGIN { exit !(w > m) }'; then
			fail "$name: took ${wall}s for a ${run_secs}s run (limit ${max_wall}s)"
		fi
		printf 'ok   %-28s %-30s %5.2fs\n' "$name" "$out" "$wall"
	done
done

rm -f "$scratch/.stderr"
leftover=$(ls -A "$scratch")
[ -z "$leftover" ] || fail "files left behind in the working directory: $leftover"

if [ $failures -ne 0 ]; then
	echo "test.sh: $failures failure(s)" >&2
	exit 1
fi
echo "test.sh: all workloads passed ($bindir)"
