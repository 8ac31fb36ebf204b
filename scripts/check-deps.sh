#!/usr/bin/env bash
# The format, model, import, analysis and report crates must build without root and without
# libbpf: only recorder crates may touch the kernel. The crates the recorder hands a job
# to (symbolizing its stacks, the unwind memo's decisions, its output files) sit below it
# and must not depend on it or on libbpf either. Fails if a forbidden dependency appears
# in their normal dependency tree.
# The testkit (test support) is a dev-dependency only: fails if any crate's normal
# dependency tree holds it, so no test builder ships in a library or the binary.
set -euo pipefail
status=0
for crate in causeway-format causeway-model causeway-import causeway-bottleneck causeway-stacks causeway-compare causeway-latency causeway-calls causeway-diagnose causeway-report causeway-join causeway-symbolize causeway-kmemo causeway-outfile; do
    tree=$(cargo tree -p "$crate" -e normal --prefix none)
    if echo "$tree" | grep -Eq '^(libbpf|libbpf-rs|libbpf-sys|aya|causeway-record)\b'; then
        echo "check-deps: $crate depends on a kernel-facing crate:" >&2
        echo "$tree" | grep -E '^(libbpf|aya|causeway-record)' >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-deps: format, model, import, bottleneck, stacks, compare, latency, calls, diagnose, report and join crates, and the recorder's symbolize, kmemo and outfile, are free of libbpf and of the recorder"
# Every member but the testkit itself, from the workspace's own metadata.
members=$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print("\n".join(p["name"] for p in json.load(sys.stdin)["packages"]))')
for crate in $members; do
    [ "$crate" = causeway-testkit ] && continue
    if cargo tree -p "$crate" -e normal --prefix none | grep -q '^causeway-testkit\b'; then
        echo "check-deps: $crate depends on causeway-testkit outside its dev-dependencies" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-deps: causeway-testkit is a dev-dependency only"
exit $status
