#!/usr/bin/env bash
# Behaviour unchanged? Compares the reports of this tree's `causeway` with those of a
# base revision's, byte for byte.
#
#   scripts/compare-reports.sh REV                      build REV and this tree, record, compare
#   scripts/compare-reports.sh --base-bin PATH          compare against a binary already built
#   scripts/compare-reports.sh --traces DIR REV         use DIR/*.cwt instead of recording
#
# The base is built in a temporary `git worktree` of REV (removed at exit). Both builds
# use $CARGO_TARGET_DIR if set, else this tree's target directory, so dependencies are
# built once; the base is built first, so the target directory ends with this tree's
# binary. Without --traces the zoo workloads (workloads/bin, built if missing) are
# recorded once, with this tree's binary (needs root): each for 1 s, and blocking-write
# also with `--unwind fp`. The golden traces of causeway-format are always added.
#
# For every trace, both binaries run `info`, `info --json`, `bottleneck`,
# `bottleneck --json`, `bottleneck --dot` and `bottleneck --no-merge --json`; their
# stdout and exit status must be identical. Exit status: 0 identical, 1 a difference
# (the diffs are printed), 2 a usage or setup error.
set -euo pipefail

usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

base_bin=""
traces_dir=""
rev=""
while (($#)); do
    case "$1" in
    --base-bin) base_bin=${2:?--base-bin needs a path}; shift 2 ;;
    --traces) traces_dir=${2:?--traces needs a directory}; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "compare-reports: unknown option $1" >&2; usage ;;
    *) [ -z "$rev" ] || usage; rev=$1; shift ;;
    esac
done
if [ -z "$base_bin" ] && [ -z "$rev" ]; then
    echo "compare-reports: give a base revision or --base-bin PATH" >&2
    usage
fi
if [ -n "$base_bin" ] && [ -n "$rev" ]; then
    echo "compare-reports: give a base revision or --base-bin, not both" >&2
    exit 2
fi

repo=$(cd "$(dirname "$0")/.." && git rev-parse --show-toplevel)
target_dir=${CARGO_TARGET_DIR:-$repo/target}
workloads="blocking-write lock-contention load-imbalance circular-timeout spin-flag long-cpu two-peaks blocking-net"
runs=("info" "info --json" "bottleneck" "bottleneck --json" "bottleneck --dot" "bottleneck --no-merge --json")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-reports.XXXXXX")
base_tree=""
cleanup() {
    if [ -n "$base_tree" ] && ! git -C "$repo" worktree remove --force "$base_tree" 2>/dev/null; then
        rm -rf "$base_tree"
        git -C "$repo" worktree prune 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

die() {
    echo "compare-reports: $*" >&2
    exit 2
}

# Builds the causeway binary of the tree at $1 and copies it to $2 (the shared target
# directory's binary is overwritten by the next build).
build() {
    echo "compare-reports: building causeway in $1" >&2
    (cd "$1" && CARGO_TARGET_DIR=$target_dir cargo build --release --quiet -p causeway-cli) ||
        die "build failed in $1"
    cp "$target_dir/release/causeway" "$2"
}

if [ -n "$base_bin" ]; then
    [ -x "$base_bin" ] || die "base binary $base_bin is not executable"
    cp "$base_bin" "$tmp/causeway-base"
else
    commit=$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}") || die "unknown revision $rev"
    base_tree=$tmp/base
    git -C "$repo" worktree add --detach --quiet "$base_tree" "$commit" || die "git worktree add failed"
    build "$base_tree" "$tmp/causeway-base"
fi
build "$repo" "$tmp/causeway-current"
base=$tmp/causeway-base
current=$tmp/causeway-current

# The traces: recorded now, or given; plus the golden traces.
mkdir -p "$tmp/traces"
if [ -n "$traces_dir" ]; then
    [ -d "$traces_dir" ] || die "no directory $traces_dir"
    shopt -s nullglob
    given=("$traces_dir"/*.cwt)
    shopt -u nullglob
    ((${#given[@]})) || die "no .cwt files in $traces_dir"
    cp "${given[@]}" "$tmp/traces/"
else
    [ "$(id -u)" -eq 0 ] || die "recording the workloads needs root (or pass --traces DIR)"
    for w in $workloads; do
        [ -x "$repo/workloads/bin/$w" ] || { make -s -C "$repo/workloads" >&2 || die "building the workloads failed"; }
    done
    mkdir -p "$tmp/run"
    record() { # record NAME [RECORD FLAGS...] -- WORKLOAD
        local name=$1
        shift
        echo "compare-reports: recording $name" >&2
        (cd "$tmp/run" && "$current" record -o "$tmp/traces/$name.cwt" "$@") >"$tmp/run/$name.log" 2>&1 ||
            { cat "$tmp/run/$name.log" >&2; die "recording $name failed"; }
    }
    for w in $workloads; do
        record "$w" -- "$repo/workloads/bin/$w" --seconds 1
    done
    record fp-blocking-write --unwind fp -- "$repo/workloads/bin/blocking-write" --seconds 1
fi
for g in "$repo"/crates/causeway-format/tests/data/*.cwt; do
    [ -e "$tmp/traces/$(basename "$g")" ] || cp "$g" "$tmp/traces/"
done

# Runs one command with one binary: stdout to $out, exit status appended.
run_one() { # BIN OUT ARGS...
    local bin=$1 out=$2
    shift 2
    local status=0
    "$bin" "$@" >"$out" 2>/dev/null || status=$?
    echo "exit status: $status" >>"$out"
}

compared=0
differ=0
for t in "$tmp"/traces/*.cwt; do
    for r in "${runs[@]}"; do
        read -r -a args <<<"$r"
        run_one "$base" "$tmp/base.out" "${args[@]}" "$t"
        run_one "$current" "$tmp/current.out" "${args[@]}" "$t"
        compared=$((compared + 1))
        if ! cmp -s "$tmp/base.out" "$tmp/current.out"; then
            differ=$((differ + 1))
            echo "=== differs: causeway $r $(basename "$t")"
            diff -u --label "base: $r" --label "current: $r" "$tmp/base.out" "$tmp/current.out" |
                head -n 200 || true
        fi
    done
done
ntraces=$(find "$tmp/traces" -name '*.cwt' | wc -l)
if ((differ)); then
    echo "compare-reports: $differ of $compared outputs differ ($ntraces traces)" >&2
    exit 1
fi
echo "compare-reports: all $compared outputs identical ($ntraces traces x ${#runs[@]} commands: stdout and exit status)"
