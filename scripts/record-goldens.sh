#!/usr/bin/env bash
# Record the bottleneck goldens: one short recording of each zoo workload, and its
# bottleneck text report. The test
# (crates/causeway-cli/tests/bottleneck_golden.rs) renders each recording again and
# compares it with the report kept here, so that a change of wording or of a verdict
# is deliberate. The recordings are fixed, so nothing in a report needs masking.
#
# Run it (as root, after `make build`) only when the recorder or the workloads change
# in a way the goldens should show; check each report's top finding against
# workloads/README.md before committing them.
#
#   scripts/record-goldens.sh [WORKLOAD...]
set -euo pipefail
cd "$(dirname "$0")/.."
CAUSEWAY=${CAUSEWAY:-target/release/causeway}
OUT=crates/causeway-cli/tests/golden/bottleneck
BIN=workloads/bin
mkdir -p "$OUT"
# workload, seconds, recorder flags (as the zoo tests record them)
specs=(
  "blocking-write 1"
  "blocking-net 1"
  "lock-contention 1 --stack-mode libs --kernel-stacks all"
  "load-imbalance 1"
  "prefork-lock 1 --stack-mode libs --kernel-stacks all"
  "group-commit 2 --stack-mode libs --kernel-stacks all"
  "circular-timeout 1"
  "lock-chain 1"
  "long-cpu 1"
  "spin-flag 1"
  "stopped-peer 2"
  "two-peaks 1"
)
want=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for spec in "${specs[@]}"; do
  read -r name secs flags <<<"$spec"
  if ((${#want[@]})) && [[ ! " ${want[*]} " == *" $name "* ]]; then
    continue
  fi
  args=(--seconds "$secs")
  case $name in prefork-lock | group-commit) args+=(--dir "$tmp") ;; esac
  # shellcheck disable=SC2086 # flags are words on purpose
  "$CAUSEWAY" record -o "$OUT/$name.cwt" $flags -- "$BIN/$name" "${args[@]}" >/dev/null
  rm -f "$OUT/$name.cwt.old"
  "$CAUSEWAY" bottleneck "$OUT/$name.cwt" >"$OUT/$name.txt" || true
  echo "$name: $(grep -m1 '^What to look at' "$OUT/$name.txt" | cut -c1-150)"
done
